// SPDX-License-Identifier: MIT
/* The UDP socket of a datagram transport (<rtloop/dgram.h>). */
#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/dgram.h>
#include <rtloop/time.h>

#define KERNEL_TS_MAX_AGE_NS RTL_NS_PER_SEC

RTL_API int rtl_dgram_resolve(struct sockaddr_in *out, const char *host, uint16_t port,
			      const char *what, struct rtl_error *err)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res = NULL;
	char serv[8];
	int r;

	snprintf(serv, sizeof(serv), "%u", port);
	r = getaddrinfo(host, serv, &hints, &res);
	if (r != 0)
		return rtl_error_set(err, -EHOSTUNREACH,
				     "%s: cannot resolve '%s': %s; check the name, or give "
				     "the device's IPv4 address",
				     what, host, gai_strerror(r));
	memcpy(out, res->ai_addr, sizeof(*out));
	freeaddrinfo(res);
	return 0;
}

RTL_API int rtl_dgram_open(const struct sockaddr_in *addr, bool no_timestamps, int64_t rx_slice_ns,
			   const char *what, struct rtl_error *err)
{
	int one = 1, r, fd;
	char host[INET_ADDRSTRLEN] = "?";

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rtl_error_set(err, -errno, "%s: socket() failed", what);
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		r = -errno;
		close(fd);
		inet_ntop(AF_INET, &addr->sin_addr, host, sizeof(host));
		return rtl_error_set(err, r, "%s: connect to %s:%u failed: %s", what, host,
				     ntohs(addr->sin_port), strerror(-r));
	}
	if (!no_timestamps)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (rx_slice_ns > 0) {
		struct timeval tv = { .tv_sec = rx_slice_ns / RTL_NS_PER_SEC,
				      .tv_usec = rx_slice_ns % RTL_NS_PER_SEC / 1000 };

		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
			r = -errno;
			close(fd);
			return rtl_error_set(err, r, "%s: cannot set the receive time-out", what);
		}
	}
	return fd;
}

RTL_API int64_t rtl_dgram_kernel_to_mono(int64_t krt)
{
	int64_t m0 = rtl_time_now();
	int64_t rt = rtl_time_now_clock(CLOCK_REALTIME);
	int64_t m1 = rtl_time_now();
	int64_t mono = krt - rt + m0 + (m1 - m0) / 2;

	if (krt <= 0 || rt == 0 || mono > m1 || m1 - mono > KERNEL_TS_MAX_AGE_NS)
		return 0;
	return mono;
}

RTL_API int rtl_dgram_recv(int fd, void *buf, size_t cap, int64_t *kernel_ns, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh;
	ssize_t n;

	do {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctrl.buf;
		mh.msg_controllen = sizeof(ctrl.buf);
		n = recvmsg(fd, &mh, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (kernel_ns) {
		*kernel_ns = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				*kernel_ns = rtl_dgram_kernel_to_mono(rtl_time_from_timespec(&ts));
			}
		}
	}
	return (int)n;
}
