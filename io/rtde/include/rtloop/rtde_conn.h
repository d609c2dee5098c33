/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_conn: a blocking RTDE connection for simple programs.
 *
 * Design
 * ------
 * A thin driver over rtl_tcp (tcp.h) and the step-function client
 * (rtde_client.h): it owns one socket and one client and moves bytes and
 * time between them with poll(), so a program can write
 *
 *   rtl_rtde_conn_open(&conn, "192.168.1.10", RTL_RTDE_PORT, &cfg, 3 s, &err);
 *   while (rtl_rtde_conn_next_event(conn, &ev, 1 s) >= 0) { ... }
 *
 * and get the whole handshake, deadlines on every step and the client's
 * error texts (prefixed with host:port) without writing a loop of its own.
 * Real-time programs use the client directly from their rx thread instead.
 *
 * When the connection ends (the peer closes or resets it, or a fatal
 * protocol error), next_event() returns that error once, the socket is
 * closed, and rtl_rtde_conn_reconnect() redoes everything: TCP connect,
 * protocol, version, recipes and START, retrying with bounded exponential
 * backoff (100 ms doubling to 2 s by default) until it succeeds, an
 * attempt limit is hit, or its deadline passes. Each attempt is reported
 * through rtl_log(); successes count in the client's stats.reconnects.
 * A reconnect never happens implicitly.
 *
 * Thread safety: a connection belongs to one thread. Nothing here is
 * RT-safe except what is said so: the calls block, bounded by their
 * timeouts.
 */
#ifndef RTLOOP_RTDE_CONN_H
#define RTLOOP_RTDE_CONN_H

#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/rtde_client.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rtl_rtde_conn;

/* Backoff defaults of rtl_rtde_conn_reconnect(). */
#define RTL_RTDE_CONN_BACKOFF_FIRST_NS INT64_C(100000000) /* 100 ms */
#define RTL_RTDE_CONN_BACKOFF_MAX_NS INT64_C(2000000000)  /* 2 s */

/*
 * Connect to @host:@port and run the whole handshake for @cfg (names are
 * copied), all within @timeout_ns (> 0). On success *@connp is the
 * connection, READY or RUNNING (per RTL_RTDE_CLIENT_NO_START), and 0 is
 * returned. On failure *@connp is NULL, @err (if not NULL) holds the code
 * and a message naming host:port, cause and fix, and the code is returned:
 * those of rtl_tcp_connect() (-ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH,
 * -ENETUNREACH, -ENOENT, ...), those of rtl_rtde_client_init() and of the
 * client's fatal errors (rtde_client.h), -ETIMEDOUT when the handshake did
 * not finish in time, -ENOMEM, or -EINVAL for a NULL pointer or
 * @timeout_ns <= 0.
 */
RTL_API int rtl_rtde_conn_open(struct rtl_rtde_conn **connp, const char *host, uint16_t port,
			       const struct rtl_rtde_client_config *cfg, int64_t timeout_ns,
			       struct rtl_rtde_client_error *err);

/*
 * Wait up to @timeout_ns (< 0: no limit; 0: only what is already there)
 * for the next client event. Returns 1 with *@ev (pointers valid until the
 * next call on @conn), 0 when the time ran out, or
 *   -ENOTCONN  the connection has ended (after its error event and the
 *              state change to CLOSED or FAILED were returned): call
 *              rtl_rtde_conn_reconnect().
 *   -EINVAL    a NULL pointer.
 *   other      -errno of poll().
 * A fatal error event closes the socket; rtl_rtde_conn_error() keeps it.
 */
RTL_API int rtl_rtde_conn_next_event(struct rtl_rtde_conn *conn, struct rtl_rtde_client_event *ev,
				     int64_t timeout_ns);

/*
 * Encode frame @f of input recipe @idx (see rtl_rtde_client_input_recipe())
 * and send it, waiting at most the reply timeout for room in the socket.
 * Returns 0, or the codes of rtl_rtde_client_encode_inputs(), -ENOTCONN
 * when not connected, -ETIMEDOUT, -EPIPE / -ECONNRESET (the next
 * next_event() call reports the end of the connection). No allocation.
 */
RTL_API int rtl_rtde_conn_send_inputs(struct rtl_rtde_conn *conn, unsigned idx,
				      const struct rtl_rtde_frame *f);

/*
 * Send START and wait up to @timeout_ns for the controller to accept it
 * (a data package counts; it stays queued for next_event()). Text messages
 * received meanwhile are logged and dropped. Returns 0, the codes of
 * rtl_rtde_client_start(), the fatal error's code (-EPERM when refused),
 * or -ETIMEDOUT.
 */
RTL_API int rtl_rtde_conn_start(struct rtl_rtde_conn *conn, int64_t timeout_ns);

/*
 * Send PAUSE and wait up to @timeout_ns for its reply; data packages that
 * arrive before it are dropped (counted in the client's stats.data).
 * Returns 0, the codes of rtl_rtde_client_pause(), a fatal error's code,
 * or -ETIMEDOUT.
 */
RTL_API int rtl_rtde_conn_pause(struct rtl_rtde_conn *conn, int64_t timeout_ns);

/*
 * Close the socket (if open) and redo connect and handshake until it
 * succeeds, within @timeout_ns (> 0) in all and at most the attempt limit
 * of rtl_rtde_conn_set_backoff(). Between attempts it sleeps the backoff,
 * which doubles from its first value up to its maximum. Each attempt and
 * its outcome go to rtl_log() (info, warning). Returns 0 (and counts a
 * reconnect), or the last attempt's code with rtl_rtde_conn_error() set;
 * -EINVAL for @conn NULL or @timeout_ns <= 0.
 */
RTL_API int rtl_rtde_conn_reconnect(struct rtl_rtde_conn *conn, int64_t timeout_ns);

/*
 * Backoff of rtl_rtde_conn_reconnect(): first pause @first_ns, doubling up
 * to @max_ns, at most @max_attempts attempts (0: no limit but the
 * deadline). Values <= 0 keep the defaults. Returns 0, or -EINVAL.
 */
RTL_API int rtl_rtde_conn_set_backoff(struct rtl_rtde_conn *conn, int64_t first_ns, int64_t max_ns,
				      unsigned max_attempts);

/* Close the socket and free @conn (NULL is a no-op). */
RTL_API void rtl_rtde_conn_close(struct rtl_rtde_conn *conn);

/* The client, for its info, stats, recipes and state. */
RTL_API struct rtl_rtde_client *rtl_rtde_conn_client(struct rtl_rtde_conn *conn);

/* The last fatal error (code 0 when none). */
RTL_API const struct rtl_rtde_client_error *rtl_rtde_conn_error(const struct rtl_rtde_conn *conn);

/* The socket, or -1 while disconnected. */
RTL_API int rtl_rtde_conn_fd(const struct rtl_rtde_conn *conn);

#ifdef __cplusplus
}
#endif

#endif /* RTLOOP_RTDE_CONN_H */
