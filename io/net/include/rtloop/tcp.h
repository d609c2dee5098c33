/* SPDX-License-Identifier: MIT */
/*
 * rtl_tcp: a small TCP transport for RTDE clients, the simulator and tests.
 *
 * Design
 * ------
 * Every call that can wait takes an absolute CLOCK_MONOTONIC deadline (or a
 * timeout, for connect and accept), so no program hangs on a dead robot.
 * Connecting resolves the name with getaddrinfo(), tries each address with
 * a non-blocking connect() and poll(), and returns a socket with
 * TCP_NODELAY (and TCP_QUICKACK where the system has it): RTDE packages are
 * small and latency is the point. Send and receive use MSG_DONTWAIT and
 * poll(), so they work the same on blocking and non-blocking sockets, and
 * MSG_NOSIGNAL, so a closed peer is -EPIPE, never SIGPIPE.
 *
 * Failures of connect, listen and accept fill a struct rtl_error with
 * -errno and a message that names host:port, the cause and the usual fix
 * ("nothing listens on 127.0.0.1:30004: is the controller on, ...").
 * The library never prints.
 *
 * Thread and RT safety: all functions are reentrant. Name resolution,
 * connect, listen and accept are set-up calls (they may allocate). Send,
 * receive and the option setters make system calls only: no allocation,
 * no locks; suitable for RT threads that own the socket.
 */
#ifndef RTLOOP_TCP_H
#define RTLOOP_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

/* Deadline meaning "wait as long as it takes". */
#define RTL_TCP_FOREVER INT64_MAX

/* The addresses of a host name, resolved once (rtl_tcp_resolve()), so that
 * a reconnect on a real-time thread never asks the resolver again. */
#define RTL_TCP_MAX_ADDRS 4
struct rtl_tcp_addr {
	unsigned n;
	struct sockaddr_storage ss[RTL_TCP_MAX_ADDRS];
	socklen_t len[RTL_TCP_MAX_ADDRS];
	char host[256]; /* as given, for messages (cut to fit) */
	uint16_t port;
};

/*
 * Resolve @host (name or address) port @port into @out: up to
 * RTL_TCP_MAX_ADDRS stream addresses, in the resolver's order. Returns 0,
 * or with @err filled: -ENOENT (unknown host), -EAGAIN (resolution failed
 * for now), -EINVAL (@host NULL or empty, @out NULL), -ENOMEM. Not
 * RT-safe.
 */
RTL_API int rtl_tcp_resolve(struct rtl_tcp_addr *out, const char *host, uint16_t port,
			    struct rtl_error *err);

/*
 * Connect to the addresses of @addr within @timeout_ns, as
 * rtl_tcp_connect() does after resolving, with the same errors (but no
 * resolver errors: that was done). Makes no resolver call. Returns the
 * socket (>= 0), or one of those errors with @err filled, -EINVAL when @addr
 * is NULL or holds no address. Not RT-safe (it may wait up to @timeout_ns).
 */
RTL_API int rtl_tcp_connect_addr(const struct rtl_tcp_addr *addr, int64_t timeout_ns,
				 struct rtl_error *err);

/*
 * Connect to @host (name or address) port @port within @timeout_ns
 * (<= 0: no limit beyond the system's). Each address of the name is tried
 * in turn until one answers; the error is that of the last. On success the
 * socket is blocking, close-on-exec, with TCP_NODELAY (and TCP_QUICKACK).
 * Returns the socket (>= 0), or, with @err filled if not NULL:
 *   -ECONNREFUSED  nothing listens there.
 *   -ETIMEDOUT     no answer within @timeout_ns.
 *   -EHOSTUNREACH, -ENETUNREACH  no route to the host.
 *   -ENOENT        unknown host name.
 *   -EAGAIN        name resolution failed for now (DNS unreachable).
 *   -EINVAL        @host NULL or empty.
 *   other -errno   of socket() or connect().
 * Not RT-safe.
 */
RTL_API int rtl_tcp_connect(const char *host, uint16_t port, int64_t timeout_ns,
			    struct rtl_error *err);

/*
 * Listen on @host (NULL: 127.0.0.1, loopback only) port @port (0: an
 * ephemeral port), with SO_REUSEADDR. If @bound is not NULL it receives the
 * port actually bound. Returns the listening socket, or -errno with @err
 * filled (-EADDRINUSE: another program has the port; -ENOENT: unknown
 * host; -EINVAL: @host empty). Not RT-safe.
 */
RTL_API int rtl_tcp_listen(uint16_t *bound, const char *host, uint16_t port, struct rtl_error *err);

/*
 * Accept one connection on listening socket @lfd within @timeout_ns (< 0:
 * no limit; 0: only one already waiting). The new socket gets TCP_NODELAY
 * (and TCP_QUICKACK). Returns it, or -ETIMEDOUT, or -errno of accept, with
 * @err filled if not NULL. Not RT-safe.
 */
RTL_API int rtl_tcp_accept(int lfd, int64_t timeout_ns, struct rtl_error *err);

/* Set or clear O_NONBLOCK on @fd. Returns 0 or -errno. RT-safe. */
RTL_API int rtl_tcp_set_nonblocking(int fd, bool on);

/* Set TCP_NODELAY and, where defined, TCP_QUICKACK on @fd (QUICKACK is a
 * one-shot hint on Linux: RT receivers may call this after each read).
 * Returns 0 or -errno of setsockopt. RT-safe. */
RTL_API int rtl_tcp_set_nodelay(int fd);

/*
 * Wait until @fd is ready for @events (POLLIN, POLLOUT) or the absolute
 * CLOCK_MONOTONIC @deadline_ns passes (RTL_TCP_FOREVER: no limit).
 * Returns 1 when ready (also for errors and hang-ups: the next call
 * reports them), 0 at the deadline, or -errno of poll. Resumes after
 * signals. RT-safe.
 */
RTL_API int rtl_tcp_wait(int fd, short events, int64_t deadline_ns);

/*
 * Send all @len bytes at @buf by the absolute @deadline_ns. Returns 0, or
 *   -ETIMEDOUT  the deadline passed (some bytes may have been sent).
 *   -EPIPE, -ECONNRESET  the peer closed or reset the connection.
 *   other -errno of send or poll.
 * RT-safe.
 */
RTL_API int rtl_tcp_send_all(int fd, const void *buf, size_t len, int64_t deadline_ns);

/*
 * Receive what is there (at most @cap bytes, at least one) by the absolute
 * @deadline_ns. Returns the number of bytes, 0 when the peer closed the
 * connection (EOF), or -ETIMEDOUT, -ECONNRESET or another -errno; -EINVAL
 * for @buf NULL or @cap 0.
 * RT-safe.
 */
RTL_API ssize_t rtl_tcp_recv(int fd, void *buf, size_t cap, int64_t deadline_ns);

RTL_END_DECLS

#endif /* RTLOOP_TCP_H */
