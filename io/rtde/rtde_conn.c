// SPDX-License-Identifier: MIT
/*
 * Blocking RTDE connection (design in rtde_conn.h).
 *
 * Everything funnels through pump(): hand out the client's next event;
 * otherwise send what the client queued, then poll the socket until the
 * earlier of the caller's deadline and the client's own (a pending reply),
 * and feed what arrives. EOF and receive errors become
 * rtl_rtde_client_closed(), so the client writes the explanation and the
 * driver only adds host:port. The waits of open, start and pause are pump()
 * loops that stop at the state they wait for; events they pass over stay
 * in the client's queue when they come after that state change.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/rtde_conn.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#define RX_SIZE 65536

struct rtl_rtde_conn {
	struct rtl_rtde_client *client;
	int fd;
	uint16_t port;
	char *host;
	int64_t backoff_first, backoff_max;
	unsigned max_attempts;
	bool no_start;	    /* the client's RTL_RTDE_CLIENT_NO_START */
	int64_t timeout_ns; /* the client's reply time-out */
	struct rtl_rtde_client_error error;
	uint8_t tx[RTL_RTDE_CLIENT_TX_SIZE];
	uint8_t rx[RX_SIZE];
};

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Record a fatal error, prefixed with host:port. */
static int set_error(struct rtl_rtde_conn *conn, int code, enum rtl_rtde_client_state st,
		     const char *msg)
{
	conn->error.err.code = code;
	conn->error.fatal = true;
	conn->error.state = st;
	if (snprintf(conn->error.err.msg, sizeof(conn->error.err.msg), "RTDE %s:%u: %s", conn->host,
		     conn->port, msg) >= (int)sizeof(conn->error.err.msg))
		memcpy(conn->error.err.msg + sizeof(conn->error.err.msg) - 4, "...", 4);
	return code;
}

static void drop_socket(struct rtl_rtde_conn *conn)
{
	if (conn->fd >= 0)
		close(conn->fd);
	conn->fd = -1;
}

/*
 * The next event by @deadline: 1 with *@ev, 0 at the deadline, -ENOTCONN
 * when the connection has ended, or -errno of poll.
 */
static int pump(struct rtl_rtde_conn *conn, int64_t deadline, struct rtl_rtde_client_event *ev)
{
	struct rtl_rtde_client *c = conn->client;

	for (;;) {
		int64_t now = rtl_time_now();
		const uint8_t *out;
		size_t n_out;
		ssize_t n;
		int r;

		if (rtl_rtde_client_next(c, now, ev) == 1) {
			if (ev->type == RTL_RTDE_CLIENT_EV_ERROR && ev->u.error->fatal) {
				set_error(conn, ev->u.error->err.code, ev->u.error->state,
					  ev->u.error->err.msg);
				drop_socket(conn);
			}
			return 1;
		}
		if (conn->fd < 0)
			return -ENOTCONN;
		n_out = rtl_rtde_client_tx(c, &out);
		if (n_out) {
			r = rtl_tcp_send_all(conn->fd, out, n_out, now + conn->timeout_ns);
			if (r < 0) {
				rtl_rtde_client_closed(c, now, r);
				continue;
			}
			rtl_rtde_client_tx_done(c, n_out);
		}
		if (now >= deadline)
			return 0;
		r = rtl_tcp_wait(conn->fd, POLLIN, min64(deadline, rtl_rtde_client_deadline(c)));
		if (r < 0)
			return r;
		if (r == 0)
			continue; /* the loop reports the client's timeout or ours */
		n = rtl_tcp_recv(conn->fd, conn->rx, sizeof(conn->rx), 0);
		now = rtl_time_now();
		if (n == -ETIMEDOUT)
			continue;
		if (n <= 0) {
			rtl_rtde_client_closed(c, now, (int)n);
			continue;
		}
		rtl_rtde_client_feed(c, conn->rx, (size_t)n);
	}
}

/* Pump until the client reaches @want: 0, or a fatal error's code, or
 * -ETIMEDOUT. */
static int wait_state(struct rtl_rtde_conn *conn, int64_t deadline, enum rtl_rtde_client_state want,
		      const char *what)
{
	struct rtl_rtde_client_event ev;
	char msg[200];

	for (;;) {
		int r = pump(conn, deadline, &ev);

		if (r == 1) {
			if (ev.type == RTL_RTDE_CLIENT_EV_STATE && ev.u.state.to == want)
				return 0;
			if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal)
				return ev.u.error->err.code;
			continue;
		}
		if (r == -ENOTCONN)
			return conn->error.err.code ? conn->error.err.code : r;
		if (r < 0)
			return r;
		snprintf(msg, sizeof(msg),
			 "%s did not finish in time (the client was in state %s): the controller "
			 "is slow or silent; allow more time",
			 what, rtl_rtde_client_state_name(rtl_rtde_client_state(conn->client)));
		return set_error(conn, -ETIMEDOUT, rtl_rtde_client_state(conn->client), msg);
	}
}

/* Connect and run the handshake by @deadline: 0 or -errno with
 * conn->error set. */
static int connect_once(struct rtl_rtde_conn *conn, int64_t deadline)
{
	struct rtl_error terr;
	int64_t left = deadline - rtl_time_now();
	bool start = !conn->no_start;
	int fd, r;

	drop_socket(conn);
	memset(&conn->error, 0, sizeof(conn->error));
	if (left <= 0)
		left = 1;
	fd = rtl_tcp_connect(conn->host, conn->port, left, &terr);
	if (fd < 0) {
		conn->error.err.code = fd;
		conn->error.fatal = true;
		conn->error.state = RTL_RTDE_CLIENT_IDLE;
		snprintf(conn->error.err.msg, sizeof(conn->error.err.msg), "RTDE %.*s",
			 RTL_ERROR_MSG - 8, terr.msg);
		return fd;
	}
	conn->fd = fd;
	rtl_rtde_client_connected(conn->client, rtl_time_now());
	r = wait_state(conn, deadline, start ? RTL_RTDE_CLIENT_RUNNING : RTL_RTDE_CLIENT_READY,
		       "the RTDE handshake");
	if (r < 0)
		drop_socket(conn);
	return r;
}

/* An open() that fails before a connection exists: fill *@err (already
 * zeroed) if given, return @code. */
static int open_failed(struct rtl_rtde_client_error *err, int code, const char *msg)
{
	if (err) {
		err->err.code = code;
		err->fatal = true;
		snprintf(err->err.msg, sizeof(err->err.msg), "RTDE open: %s", msg);
	}
	return code;
}

RTL_API int rtl_rtde_conn_open(struct rtl_rtde_conn **connp, const char *host, uint16_t port,
			       const struct rtl_rtde_client_config *cfg, int64_t timeout_ns,
			       struct rtl_rtde_client_error *err)
{
	int64_t deadline = rtl_time_now() + timeout_ns;
	struct rtl_rtde_conn *conn;
	int r;

	if (connp)
		*connp = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	if (!connp || !host || !cfg || timeout_ns <= 0)
		return open_failed(err, -EINVAL, "a NULL argument or a timeout <= 0");
	conn = calloc(1, sizeof(*conn));
	if (!conn || !(conn->host = strdup(host))) {
		free(conn);
		return open_failed(err, -ENOMEM, "out of memory");
	}
	conn->fd = -1;
	conn->port = port;
	conn->backoff_first = RTL_RTDE_CONN_BACKOFF_FIRST_NS;
	conn->backoff_max = RTL_RTDE_CONN_BACKOFF_MAX_NS;
	conn->no_start = cfg && (cfg->flags & RTL_RTDE_CLIENT_NO_START);
	conn->timeout_ns = cfg && cfg->reply_timeout_ns ? cfg->reply_timeout_ns
							: RTL_RTDE_CLIENT_REPLY_TIMEOUT_NS;
	r = rtl_rtde_client_create(&conn->client, cfg, &conn->error.err);
	if (r < 0) {
		conn->error.fatal = true; /* the message names the recipe and field */
		goto err_free;
	}
	r = connect_once(conn, deadline);
	if (r < 0)
		goto err_free;
	*connp = conn;
	return 0;
err_free:
	if (err)
		*err = conn->error;
	rtl_rtde_conn_close(conn);
	return r;
}

RTL_API int rtl_rtde_conn_next_event(struct rtl_rtde_conn *conn, struct rtl_rtde_client_event *ev,
				     int64_t timeout_ns)
{
	int64_t deadline;

	if (!conn || !ev)
		return -EINVAL;
	deadline = timeout_ns < 0 ? INT64_MAX : rtl_time_now() + timeout_ns;
	return pump(conn, deadline, ev);
}

RTL_API int rtl_rtde_conn_send_inputs(struct rtl_rtde_conn *conn, unsigned idx,
				      const struct rtl_rtde_frame *f)
{
	int n;

	if (!conn || !f)
		return -EINVAL;
	if (conn->fd < 0)
		return -ENOTCONN;
	n = rtl_rtde_client_encode_inputs(conn->client, idx, f, conn->tx, sizeof(conn->tx));
	if (n < 0)
		return n;
	return rtl_tcp_send_all(conn->fd, conn->tx, (size_t)n, rtl_time_now() + conn->timeout_ns);
}

/* Ask the client for START or PAUSE (@ask), then wait for state @want. */
static int ask_and_wait(struct rtl_rtde_conn *conn, int64_t timeout_ns,
			int (*ask)(struct rtl_rtde_client *, int64_t),
			enum rtl_rtde_client_state want, const char *what)
{
	int r;

	if (!conn || timeout_ns <= 0)
		return -EINVAL;
	r = ask(conn->client, rtl_time_now());
	if (r)
		return r;
	return wait_state(conn, rtl_time_now() + timeout_ns, want, what);
}

RTL_API int rtl_rtde_conn_start(struct rtl_rtde_conn *conn, int64_t timeout_ns)
{
	return ask_and_wait(conn, timeout_ns, rtl_rtde_client_start, RTL_RTDE_CLIENT_RUNNING,
			    "START");
}

RTL_API int rtl_rtde_conn_pause(struct rtl_rtde_conn *conn, int64_t timeout_ns)
{
	return ask_and_wait(conn, timeout_ns, rtl_rtde_client_pause, RTL_RTDE_CLIENT_READY,
			    "PAUSE");
}

RTL_API int rtl_rtde_conn_reconnect(struct rtl_rtde_conn *conn, int64_t timeout_ns)
{
	int64_t deadline, delay;
	unsigned attempt;
	int r;

	if (!conn || timeout_ns <= 0)
		return -EINVAL;
	deadline = rtl_time_now() + timeout_ns;
	delay = conn->backoff_first;
	drop_socket(conn);
	for (attempt = 1;; attempt++) {
		int64_t now;

		if (conn->max_attempts)
			rtl_log(RTL_LOG_INFO, "RTDE: reconnecting to %s:%u (attempt %u of %u)",
				conn->host, conn->port, attempt, conn->max_attempts);
		else
			rtl_log(RTL_LOG_INFO, "RTDE: reconnecting to %s:%u (attempt %u)",
				conn->host, conn->port, attempt);
		r = connect_once(conn, deadline);
		if (r == 0) {
			rtl_rtde_client_count_reconnect(conn->client);
			rtl_log(RTL_LOG_INFO, "RTDE: reconnected to %s:%u (attempt %u)", conn->host,
				conn->port, attempt);
			return 0;
		}
		rtl_log(RTL_LOG_WARN, "RTDE: reconnect attempt %u failed: %s", attempt,
			conn->error.err.msg);
		if (conn->max_attempts && attempt >= conn->max_attempts)
			return r;
		now = rtl_time_now();
		if (now + delay >= deadline)
			return r;
		rtl_time_sleep_until(now + delay);
		delay = min64(delay * 2, conn->backoff_max);
	}
}

RTL_API int rtl_rtde_conn_set_backoff(struct rtl_rtde_conn *conn, int64_t first_ns, int64_t max_ns,
				      unsigned max_attempts)
{
	if (!conn)
		return -EINVAL;
	conn->backoff_first = first_ns > 0 ? first_ns : RTL_RTDE_CONN_BACKOFF_FIRST_NS;
	conn->backoff_max = max_ns > 0 ? max_ns : RTL_RTDE_CONN_BACKOFF_MAX_NS;
	if (conn->backoff_max < conn->backoff_first)
		conn->backoff_max = conn->backoff_first;
	conn->max_attempts = max_attempts;
	return 0;
}

RTL_API void rtl_rtde_conn_close(struct rtl_rtde_conn *conn)
{
	if (!conn)
		return;
	drop_socket(conn);
	rtl_rtde_client_destroy(conn->client);
	free(conn->host);
	free(conn);
}

RTL_API struct rtl_rtde_client *rtl_rtde_conn_client(struct rtl_rtde_conn *conn)
{
	return conn ? conn->client : NULL;
}

RTL_API const struct rtl_rtde_client_error *rtl_rtde_conn_error(const struct rtl_rtde_conn *conn)
{
	return conn ? &conn->error : NULL;
}

RTL_API int rtl_rtde_conn_fd(const struct rtl_rtde_conn *conn)
{
	return conn ? conn->fd : -1;
}
