// SPDX-License-Identifier: MIT
/*
 * TCP transport (design in tcp.h).
 *
 * Connect is non-blocking connect() plus poll() on POLLOUT, then SO_ERROR
 * for the outcome: the only portable way to bound the time a SYN may take
 * (a blocking connect waits for the kernel's retries, over two minutes).
 * Error messages are written here, once, so that every program that talks
 * to a robot explains a refused or silent port the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/tcp.h>
#include <rtloop/time.h>

static const char *errtext(int code, char *buf, size_t cap)
{
	/* GNU strerror_r: thread-safe, returns the text (maybe static). */
	return strerror_r(-code, buf, cap);
}

/* The message for a failed connect to @host:@port. */
static int connect_error(struct rtl_error *err, const char *host, uint16_t port, int code,
			 int64_t timeout_ns)
{
	char buf[128];

	switch (code) {
	case -ECONNREFUSED:
		return rtl_error_set(
			err, code,
			"connect to %s:%u: connection refused: nothing listens on %s:%u: is "
			"the controller on, RTDE enabled in the installation (PolyScope: "
			"Installation > Services), or rtde-sim running?",
			host, port, host, port);
	case -ETIMEDOUT:
		return rtl_error_set(
			err, code,
			"connect to %s:%u: no answer within %.3f s: is the address right "
			"and the controller on and on this network? Check cables, the IP "
			"settings of both sides and firewalls (ping %s)",
			host, port, (double)timeout_ns / 1e9, host);
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return rtl_error_set(
			err, code,
			"connect to %s:%u: %s: no route to %s: check this computer's IP "
			"address and netmask (the robot usually has a fixed address on its "
			"own subnet) and the cable",
			host, port,
			code == -EHOSTUNREACH ? "host unreachable" : "network unreachable", host);
	default:
		return rtl_error_set(err, code, "connect to %s:%u: %s", host, port,
				     errtext(code, buf, sizeof(buf)));
	}
}

static int resolve(const char *host, uint16_t port, bool passive, struct addrinfo **res,
		   struct rtl_error *err, const char *what)
{
	struct addrinfo hints = { 0 };
	char serv[8];
	int r;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(serv, sizeof(serv), "%u", port);
	r = getaddrinfo(host, serv, &hints, res);
	if (r == 0)
		return 0;
	/* The two a user can act on: a misspelt name, or no name server. */
	if (r == EAI_NONAME || r == EAI_NODATA || r == EAI_FAMILY || r == EAI_AGAIN)
		return rtl_error_set(
			err, r == EAI_AGAIN ? -EAGAIN : -ENOENT,
			r == EAI_AGAIN
				? "%s %s:%u: name resolution of '%s' failed for now (%s): is "
				  "the name server reachable? Use the IP address to avoid DNS"
				: "%s %s:%u: unknown host '%s' (%s): check the spelling, or use "
				  "the robot's IP address (PolyScope: Settings > System > "
				  "Network)",
			what, host, port, host, gai_strerror(r));
	if (r == EAI_SYSTEM)
		return rtl_error_set(err, -errno, "%s %s:%u: resolving '%s': %s", what, host, port,
				     host, strerror(errno));
	return rtl_error_set(err, r == EAI_MEMORY ? -ENOMEM : -EINVAL,
			     "%s %s:%u: resolving '%s': %s", what, host, port, host,
			     gai_strerror(r));
}

RTL_API int rtl_tcp_set_nonblocking(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	if (fcntl(fd, F_SETFL, fl) < 0)
		return -errno;
	return 0;
}

RTL_API int rtl_tcp_set_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
#ifdef TCP_QUICKACK
	if (setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one)) < 0)
		return -errno;
#endif
	return 0;
}

RTL_API int rtl_tcp_wait(int fd, short events, int64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int ms = -1, r;

		if (deadline_ns != RTL_TCP_FOREVER) {
			int64_t left = deadline_ns - rtl_time_now();

			if (left <= 0) {
				ms = 0;
			} else {
				/* Round up: waking a little late is fine, early
				 * means a busy retry. */
				int64_t m = (left + RTL_NS_PER_MS - 1) / RTL_NS_PER_MS;

				ms = m > 1000000 ? 1000000 : (int)m;
			}
		}
		r = poll(&p, 1, ms);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && (ms == 0 || rtl_time_now() >= deadline_ns))
			return 0;
	}
}

/* Try one address; returns the connected socket or -errno. */
static int try_connect(const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
	int fd, r, soerr = 0;
	socklen_t sl = sizeof(soerr);

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS) {
			r = -errno;
			goto err_close;
		}
		r = rtl_tcp_wait(fd, POLLOUT, deadline);
		if (r == 0)
			r = -ETIMEDOUT;
		if (r < 0)
			goto err_close;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) {
			r = -errno;
			goto err_close;
		}
		if (soerr) {
			r = -soerr;
			goto err_close;
		}
	}
	r = rtl_tcp_set_nonblocking(fd, false);
	if (r == 0)
		r = rtl_tcp_set_nodelay(fd);
	if (r < 0)
		goto err_close;
	return fd;
err_close:
	close(fd);
	return r;
}

RTL_API int rtl_tcp_resolve(struct rtl_tcp_addr *out, const char *host, uint16_t port,
			    struct rtl_error *err)
{
	struct addrinfo *res, *ai;
	int r;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!out)
		return rtl_error_set(err, -EINVAL, "resolve: no address to fill");
	if (!host || !host[0])
		return rtl_error_set(err, -EINVAL, "connect: no host given");
	r = resolve(host, port, false, &res, err, "connect to");
	if (r < 0)
		return r;
	out->n = 0;
	for (ai = res; ai && out->n < RTL_TCP_MAX_ADDRS; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(out->ss[0]))
			continue;
		memcpy(&out->ss[out->n], ai->ai_addr, ai->ai_addrlen);
		out->len[out->n++] = ai->ai_addrlen;
	}
	freeaddrinfo(res);
	snprintf(out->host, sizeof(out->host), "%s", host);
	out->port = port;
	if (!out->n)
		return rtl_error_set(err, -ENOENT, "connect to %s:%u: '%s' has no usable address",
				     host, port, host);
	return 0;
}

RTL_API int rtl_tcp_connect_addr(const struct rtl_tcp_addr *addr, int64_t timeout_ns,
				 struct rtl_error *err)
{
	int64_t deadline;
	int fd = -ECONNREFUSED;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!addr || !addr->n)
		return rtl_error_set(err, -EINVAL, "connect: no address resolved");
	deadline = timeout_ns > 0 ? rtl_time_now() + timeout_ns : RTL_TCP_FOREVER;
	for (unsigned i = 0; i < addr->n; i++) {
		fd = try_connect((const struct sockaddr *)&addr->ss[i], addr->len[i], deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	if (fd < 0)
		return connect_error(err, addr->host, addr->port, fd, timeout_ns);
	return fd;
}

RTL_API int rtl_tcp_connect(const char *host, uint16_t port, int64_t timeout_ns,
			    struct rtl_error *err)
{
	struct rtl_tcp_addr addr;
	int r = rtl_tcp_resolve(&addr, host, port, err);

	return r < 0 ? r : rtl_tcp_connect_addr(&addr, timeout_ns, err);
}

RTL_API int rtl_tcp_listen(uint16_t *bound, const char *host, uint16_t port, struct rtl_error *err)
{
	struct addrinfo *res;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char buf[128];
	int fd, r, one = 1;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!host)
		host = "127.0.0.1";
	if (!host[0])
		return rtl_error_set(err, -EINVAL, "listen: empty host");
	r = resolve(host, port, true, &res, err, "listen on");
	if (r < 0)
		return r;
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0) {
		r = -errno;
		goto err_free;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		r = -errno;
		goto err_close;
	}
	freeaddrinfo(res);
	if (bound)
		*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							: ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
err_close:
	close(fd);
err_free:
	freeaddrinfo(res);
	if (r == -EADDRINUSE)
		return rtl_error_set(
			err, r,
			"listen on %s:%u: the port is in use: another program (a running "
			"simulator?) listens there; stop it or pick another port (0 = any)",
			host, port);
	return rtl_error_set(err, r, "listen on %s:%u: %s", host, port,
			     errtext(r, buf, sizeof(buf)));
}

RTL_API int rtl_tcp_accept(int lfd, int64_t timeout_ns, struct rtl_error *err)
{
	int64_t deadline = timeout_ns < 0 ? RTL_TCP_FOREVER : rtl_time_now() + timeout_ns;
	char buf[128];
	int r, fd;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	r = rtl_tcp_wait(lfd, POLLIN, deadline);
	if (r == 0)
		return rtl_error_set(err, -ETIMEDOUT, "accept: no client connected within %.3f s",
				     (double)timeout_ns / 1e9);
	if (r < 0)
		return rtl_error_set(err, r, "accept: %s", errtext(r, buf, sizeof(buf)));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		return rtl_error_set(err, r, "accept: %s", errtext(r, buf, sizeof(buf)));
	}
	rtl_tcp_set_nodelay(fd);
	return fd;
}

RTL_API int rtl_tcp_send_all(int fd, const void *buf, size_t len, int64_t deadline_ns)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		n = rtl_tcp_wait(fd, POLLOUT, deadline_ns);
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0)
			return (int)n;
	}
	return 0;
}

RTL_API ssize_t rtl_tcp_recv(int fd, void *buf, size_t cap, int64_t deadline_ns)
{
	if (!buf || !cap)
		return -EINVAL; /* 0 would read as EOF */
	for (;;) {
		ssize_t n = recv(fd, buf, cap, MSG_DONTWAIT);
		int r;

		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		r = rtl_tcp_wait(fd, POLLIN, deadline_ns);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0)
			return r;
	}
}
