// SPDX-License-Identifier: MIT
/*
 * The UDP stream as a loop transport: see <rtloop/udp_transport.h> for the
 * design and docs/udp.md for the wire format.
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/stat.h>
#include <rtloop/time.h>
#include <rtloop/sized.h>
#include <rtloop/dgram.h>
#include <rtloop/udp_transport.h>

#define DEFAULT_CONNECT_TIMEOUT_NS (3 * RTL_NS_PER_SEC)
#define DEFAULT_RX_TIMEOUT_NS RTL_NS_PER_SEC
#define DEFAULT_PERIOD_NS RTL_NS_PER_MS
#define HELLO_INTERVAL_NS (100 * RTL_NS_PER_MS)
/* A sequence number this far behind the last one is a restarted server,
 * not a late datagram. */
#define RESYNC_BACK 1000
/* Kernel timestamps older than this are not believed (a clock step). */
/* Doosan's velocity commands stop after 0.1 s without a new one. */
#define CTRL_WATCHDOG_NS (100 * RTL_NS_PER_MS)
#define DEFAULT_REST_SPEED 0.06 /* deg/s: 0.001 rad/s */
/* Where the restamped fields sit in a COMMAND datagram. */
#define OFF_SEQ 16
#define OFF_SEND_NS 24
#define OFF_ECHO_SEQ (RTL_UDP_HEADER_SIZE + 8)
#define OFF_ECHO_NS (RTL_UDP_HEADER_SIZE + 16)

/* The transport (opaque to the API). */
struct rtl_udp_transport {
	struct rtl_transport base;
	struct rtl_udp_transport_config cfg;
	struct sockaddr_in addr; /* resolved at init */
	int fd;
	struct rtl_udp_cmd cmd; /* the step's commands */
	uint32_t server_period_ns;
	/* rx thread */
	bool pending; /* rx holds the first state, from connect */
	bool have_seq;
	uint64_t last_seq;
	size_t rx_len;
	int64_t rx_kernel_ns;
	_Atomic uint64_t echo_seq;
	_Atomic int64_t echo_ns;
	/* The receive deadline counts from the last valid state (rx_ns of
	 * its frame), so garbage that keeps coming cannot hold it off; the
	 * drop counters at that moment, to say what came meanwhile. */
	int64_t last_valid_ns;
	uint64_t mark_malformed, mark_stale, mark_duplicate, mark_nonfinite;
	bool nonfinite_logged;		/* the first non-finite state of a connection is logged */
	char why[512];			/* error(): why the stream was given up */
	struct rtl_udp_alarm_gate gate; /* the server's info alarms: once a second */
	char last_alarm[RTL_UDP_ALARM_TEXT + 32];
	char who[300]; /* "UDP peer <host>:<port>:", the alarms' prefix */
	/* transmit owner */
	uint64_t tx_seq;
	struct {
		RTL_UDP_TRANSPORT_COUNTERS(RTL_STAT_ATOMIC)
	} c;
	int tx_safe_len; /* the safe STOP, encoded at connect */
	uint8_t tx[RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE];
	uint8_t tx_safe[RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE];
	/* One byte more than the largest datagram: a longer one is seen as
	 * too long instead of silently cut to a valid length. */
	uint8_t rx[RTL_UDP_MAX_DATAGRAM + 1];
};

static struct rtl_udp_transport *of(struct rtl_transport *base)
{
	return base->impl;
}

/* ---- receive ---------------------------------------------------------------------------- */

static void count_malformed(struct rtl_udp_transport *t)
{
	rtl_stat_add(&t->c.bad, 1);
	rtl_stat_add(&t->c.malformed, 1);
}

static uint64_t get(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* No valid state since t->last_valid_ns for longer than the receive
 * time-out at @now: say what the peer sent instead, -ETIMEDOUT. */
static int deadline_passed(struct rtl_udp_transport *t, int64_t now)
{
	int64_t limit = t->cfg.rx_timeout_ns;

	if (limit <= 0 || now - t->last_valid_ns <= limit)
		return 0;
	rtl_stat_add(&t->c.rx_deadline, 1);
	snprintf(t->why, sizeof(t->why),
		 "UDP peer %s:%u: no valid state datagram for %.2f s (%llu malformed, %llu "
		 "stale, %llu duplicate, %llu non-finite received meanwhile)",
		 t->cfg.host, t->cfg.port, (double)limit / 1e9,
		 (unsigned long long)(get(&t->c.malformed) - t->mark_malformed),
		 (unsigned long long)(get(&t->c.stale) - t->mark_stale),
		 (unsigned long long)(get(&t->c.duplicate) - t->mark_duplicate),
		 (unsigned long long)(get(&t->c.nonfinite_state) - t->mark_nonfinite));
	return -ETIMEDOUT;
}

/* One datagram into t->rx. Returns its length (> 0), or
 * -errno (-EAGAIN when nothing came within SO_RCVTIMEO, or at once with
 * MSG_DONTWAIT). */
static int rx_one(struct rtl_udp_transport *t, int flags)
{
	int n;

	for (;;) {
		n = rtl_dgram_recv(t->fd, t->rx, sizeof(t->rx), &t->rx_kernel_ns, flags);
		if (n < 0)
			return n;
		rtl_stat_add(&t->c.datagrams, 1);
		if (n > 0)
			break;
		count_malformed(t); /* an empty datagram */
	}
	t->rx_len = (size_t)n;
	return n;
}

static int udp_op_recv(struct rtl_transport *base)
{
	struct rtl_udp_transport *t = of(base);

	int n;

	if (t->pending) {
		t->pending = false;
		return (int)t->rx_len;
	}
	n = rx_one(t, 0);
	/* Silence: the deadline is looked at once per receive slice. A
	 * datagram is looked at in next(), which knows if it was valid. */
	if (n == -EAGAIN && deadline_passed(t, rtl_time_now()) < 0)
		return -ETIMEDOUT;
	return n;
}

/* A datagram that was dropped: 0, or -ETIMEDOUT once no valid state came
 * for the receive time-out (the loop then gives the stream up). */
static int dropped(struct rtl_udp_transport *t, const struct rtl_loop_frame *f)
{
	return deadline_passed(t, f->rx_ns);
}

RTL_API bool rtl_udp_alarm_report(struct rtl_udp_alarm_gate *gate, char *last, size_t len,
				  const char *who, unsigned level, unsigned group, unsigned code,
				  const char *text, int64_t now_ns)
{
	static const char *const names[] = { "info", "warning", "alarm" };

	snprintf(last, len, "%s %u.%u: %s", level < 3 ? names[level] : "alarm", group, code, text);
	if (!rtl_udp_alarm_gate_pass(gate, level, group, code, now_ns))
		return false;
	rtl_log(level == RTL_UDP_ALARM_INFO   ? RTL_LOG_INFO
		: level == RTL_UDP_ALARM_WARN ? RTL_LOG_WARN
					      : RTL_LOG_ERROR,
		"%s %s", who, last);
	return true;
}

/* An ALARM from the server: logged (an info repeated within a second is
 * counted, not logged), kept for the message of a session's end. */
static int on_alarm(struct rtl_udp_transport *t, const struct rtl_loop_frame *f, size_t len)
{
	struct rtl_udp_alarm a;

	if (rtl_udp_decode_alarm(NULL, &a, t->rx, len) < 0) {
		count_malformed(t);
		return dropped(t, f);
	}
	rtl_stat_add(&t->c.alarms, 1);
	if (!rtl_udp_alarm_report(&t->gate, t->last_alarm, sizeof(t->last_alarm), t->who, a.level,
				  a.group, a.code, a.text, f->rx_ns))
		rtl_stat_add(&t->c.alarms_suppressed, 1);
	return dropped(t, f);
}

static int udp_op_next(struct rtl_transport *base, struct rtl_loop_frame *f, size_t cap)
{
	struct rtl_udp_transport *t = of(base);
	struct rtl_udp_frame *v = (struct rtl_udp_frame *)(void *)f->values;
	struct rtl_udp_header h;
	size_t len = t->rx_len;
	uint64_t skipped = 0;
	int ret;

	if (!len)
		return 0;
	t->rx_len = 0; /* one frame per datagram */
	ret = rtl_udp_decode_header(&h, t->rx, len);
	if (ret < 0) {
		count_malformed(t);
		return dropped(t, f);
	}
	if (h.type == RTL_UDP_ALARM)
		return on_alarm(t, f, len);
	if (h.type == RTL_UDP_BYE) {
		/* The server ended the session (its loss count, docs/udp.md). */
		rtl_stat_add(&t->c.server_byes, 1);
		snprintf(t->why, sizeof(t->why),
			 "UDP peer %s:%u ended the RT session (BYE); its last alarm: %s",
			 t->cfg.host, t->cfg.port, t->last_alarm[0] ? t->last_alarm : "none");
		return -ECONNRESET;
	}
	if (h.type != RTL_UDP_STATE) {
		rtl_stat_add(&t->c.other, 1);
		return dropped(t, f);
	}
	if (cap < sizeof(*v))
		return -EMSGSIZE;
	if (t->have_seq) {
		if (h.seq <= t->last_seq && t->last_seq - h.seq <= RESYNC_BACK) {
			rtl_stat_add(&t->c.reordered, 1);
			rtl_stat_add(h.seq == t->last_seq ? &t->c.duplicate : &t->c.stale, 1);
			return dropped(t, f);
		}
		if (h.seq > t->last_seq)
			skipped = h.seq - t->last_seq - 1;
		else
			rtl_stat_add(&t->c.resyncs, 1);
	}
	ret = rtl_udp_state_decode(&v->rt, t->rx + RTL_UDP_HEADER_SIZE, h.length);
	if (ret < 0) {
		count_malformed(t);
		return dropped(t, f);
	}
	{
		/* A NaN or an infinity never reaches the step: the state is
		 * dropped (its sequence number not taken) and counted. */
		const char *field = "";
		unsigned bad = rtl_udp_state_nonfinite(&v->rt, &field);

		if (bad) {
			rtl_stat_add(&t->c.nonfinite_state, 1);
			if (!t->nonfinite_logged)
				rtl_log(RTL_LOG_ERROR,
					"UDP peer %s:%u: state %llu holds %u non-finite values "
					"(the first in %s): dropped, and counted as "
					"nonfinite_state",
					t->cfg.host, t->cfg.port, (unsigned long long)h.seq, bad,
					field);
			t->nonfinite_logged = true;
			return dropped(t, f);
		}
	}
	t->last_valid_ns = f->rx_ns;
	t->mark_malformed = get(&t->c.malformed);
	t->mark_stale = get(&t->c.stale);
	t->mark_duplicate = get(&t->c.duplicate);
	t->mark_nonfinite = get(&t->c.nonfinite_state);
	t->have_seq = true;
	t->last_seq = h.seq;
	v->seq = h.seq;
	v->send_ns = h.send_ns;
	f->size = (uint32_t)sizeof(*v);
	f->ctrl_time = (double)h.send_ns * 1e-9;
	f->ctrl_skipped = skipped > UINT32_MAX ? UINT32_MAX : (uint32_t)skipped;
	f->kernel_rx_ns = t->rx_kernel_ns;
	if (!t->rx_kernel_ns)
		rtl_stat_add(&t->c.no_kernel_ts, 1);
	atomic_store_explicit(&t->echo_seq, h.seq, memory_order_relaxed);
	atomic_store_explicit(&t->echo_ns, h.send_ns, memory_order_relaxed);
	rtl_stat_add(&t->c.states, 1);
	return 1;
}

/* ---- transmit ---------------------------------------------------------------------------- */

/* Send @len bytes of @buf without blocking. */
static int tx(struct rtl_udp_transport *t, const uint8_t *buf, int len)
{
	ssize_t n;

	if (t->fd < 0)
		return -ENOTCONN;
	do {
		n = send(t->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			rtl_stat_add(&t->c.would_block, 1);
			return -EAGAIN;
		}
		return -errno;
	}
	/* The sequence number is consumed only by a datagram that left. */
	t->tx_seq++;
	return len;
}

/* Echo the newest state in @c, encode it into @buf and send it; count a
 * datagram that left in @sent. */
static int send_cmd(struct rtl_udp_transport *t, struct rtl_udp_cmd *c, uint8_t *buf, size_t cap,
		    int64_t now, _Atomic uint64_t *sent)
{
	int len, ret;

	c->echo_seq = atomic_load_explicit(&t->echo_seq, memory_order_relaxed);
	c->echo_ns = atomic_load_explicit(&t->echo_ns, memory_order_relaxed);
	len = rtl_udp_encode_command(buf, cap, t->tx_seq, now, c);
	if (len < 0)
		return len;
	ret = tx(t, buf, len);
	if (ret > 0)
		rtl_stat_add(sent, 1);
	return ret;
}

static int udp_op_send(struct rtl_transport *base, int64_t now)
{
	struct rtl_udp_transport *t = of(base);
	struct rtl_udp_cmd c = t->cmd;

	if (c.mode == RTL_UDP_MODE_NONE)
		return 0;
	return send_cmd(t, &c, t->tx, sizeof(t->tx), now, &t->c.commands);
}

static void store_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int udp_op_send_safe(struct rtl_transport *base)
{
	struct rtl_udp_transport *t = of(base);
	int ret;

	if (t->tx_safe_len <= 0)
		return -ENOTSUP;
	/* The bytes of connect, restamped: sequence, send time, echo. */
	store_le64(t->tx_safe + OFF_SEQ, t->tx_seq);
	store_le64(t->tx_safe + OFF_SEND_NS, (uint64_t)rtl_time_now());
	store_le64(t->tx_safe + OFF_ECHO_SEQ,
		   atomic_load_explicit(&t->echo_seq, memory_order_relaxed));
	store_le64(t->tx_safe + OFF_ECHO_NS,
		   (uint64_t)atomic_load_explicit(&t->echo_ns, memory_order_relaxed));
	ret = tx(t, t->tx_safe, t->tx_safe_len);
	if (ret > 0)
		rtl_stat_add(&t->c.safe, 1);
	return ret;
}

static bool udp_op_at_rest(struct rtl_transport *base, const struct rtl_loop_frame *f)
{
	struct rtl_udp_transport *t = of(base);

	return rtl_udp_state_at_rest(&rtl_udp_loop_frame(f)->rt, t->cfg.rest_speed);
}

static int udp_op_finite(struct rtl_transport *base, const struct rtl_loop_frame *f, char *why,
			 size_t len)
{
	const char *first = NULL;

	(void)base;
	if (!rtl_udp_state_nonfinite(&rtl_udp_loop_frame(f)->rt, &first))
		return 0;
	snprintf(why, len, "udp: the controller sent a non-finite %s", first ? first : "value");
	return -EDOM;
}

static int udp_op_check(struct rtl_transport *base, char *why, size_t len)
{
	struct rtl_udp_transport *t = of(base);
	const struct rtl_udp_cmd_limits lim = { .max_joint_vel = t->cfg.max_joint_vel,
						.max_linear_vel = t->cfg.max_linear_vel,
						.max_angular_vel = t->cfg.max_angular_vel };

	return rtl_udp_cmd_check(&t->cmd, why, len, &lim);
}

/* ---- connection ---------------------------------------------------------------------------- */

static int open_socket(struct rtl_udp_transport *t, struct rtl_error *err)
{
	int fd = rtl_dgram_open(&t->addr, t->cfg.no_kernel_timestamps, 0, "UDP", err);

	if (fd < 0)
		return fd;
	t->fd = fd;
	return 0;
}

/* host:port to an IPv4 address, once (init). */
static int resolve(struct rtl_udp_transport *t, struct rtl_error *err)
{
	return rtl_dgram_resolve(&t->addr, t->cfg.host, t->cfg.port, "UDP", err);
}

static int send_hello(struct rtl_udp_transport *t, uint64_t n)
{
	struct rtl_udp_hello hi = { .period_ns = (uint32_t)t->cfg.period_ns,
				    .loss_count = t->cfg.loss_count };
	uint8_t buf[RTL_UDP_HEADER_SIZE + RTL_UDP_HELLO_SIZE];
	int len;

	memcpy(hi.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	len = rtl_udp_encode_hello(buf, sizeof(buf), RTL_UDP_HELLO, n, rtl_time_now(), &hi);
	if (send(t->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/* HELLO until a WELCOME and the first STATE (kept pending in t->rx). */
static int handshake(struct rtl_udp_transport *t, int64_t deadline, struct rtl_error *err)
{
	int64_t next_hello = 0;
	uint64_t hellos = 0;
	bool welcomed = false;

	for (;;) {
		int64_t now = rtl_time_now(), wait;
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
		struct rtl_udp_header h;
		struct rtl_udp_hello w;
		int n;

		if (now >= deadline)
			return rtl_error_set(
				err, -ETIMEDOUT,
				"UDP: no %s from %s:%u within %.1f s (%llu HELLOs sent); is the "
				"simulator running with --udp on that port, or the controller's RT "
				"server on that address?",
				welcomed ? "state stream" : "answer", t->cfg.host, t->cfg.port,
				(double)t->cfg.connect_timeout_ns / 1e9,
				(unsigned long long)hellos);
		if (!welcomed && now >= next_hello) {
			n = send_hello(t, hellos++);
			if (n == -ECONNREFUSED)
				goto refused;
			next_hello = now + HELLO_INTERVAL_NS;
		}
		wait = (welcomed ? deadline : (next_hello < deadline ? next_hello : deadline)) -
		       now;
		n = poll(&pfd, 1, (int)((wait + RTL_NS_PER_MS - 1) / RTL_NS_PER_MS));
		if (n < 0 && errno != EINTR)
			return rtl_error_set(err, -errno, "UDP: poll() failed");
		if (n <= 0)
			continue;
		n = rx_one(t, MSG_DONTWAIT);
		if (n == -ECONNREFUSED)
			goto refused;
		if (n == -EAGAIN)
			continue;
		if (n <= 0)
			return rtl_error_set(err, n < 0 ? n : -ECONNRESET, "UDP: receive failed");
		n = rtl_udp_decode_header(&h, t->rx, t->rx_len);
		if (n < 0) {
			count_malformed(t);
			continue;
		}
		if (h.type == RTL_UDP_WELCOME &&
		    rtl_udp_decode_hello(NULL, &w, t->rx, t->rx_len) > 0) {
			if (strcmp(w.schema, RTL_UDP_SCHEMA) != 0)
				return rtl_error_set(err, -EPROTONOSUPPORT,
						     "UDP: the server streams schema '%s', rtloop "
						     "knows only '" RTL_UDP_SCHEMA "'",
						     w.schema);
			t->server_period_ns = w.period_ns;
			welcomed = true;
		} else if (h.type == RTL_UDP_STATE) {
			/* Even if the WELCOME was lost: the stream is on. */
			t->pending = true;
			return 0;
		} else {
			rtl_stat_add(&t->c.other, 1);
		}
	}

refused:
	return rtl_error_set(err, -ECONNREFUSED,
			     "UDP: %s:%u refused (ICMP port unreachable): nothing listens there; "
			     "start rtde-sim --udp, or check the controller's RT address and port",
			     t->cfg.host, t->cfg.port);
}

static void close_fd(struct rtl_udp_transport *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static int udp_op_connect(struct rtl_transport *base, struct rtl_error *err)
{
	struct rtl_udp_transport *t = of(base);
	int64_t deadline = rtl_time_now() + t->cfg.connect_timeout_ns;
	int ret;

	close_fd(t);
	t->pending = false;
	t->have_seq = false;
	t->rx_len = 0;
	t->server_period_ns = 0;
	t->nonfinite_logged = false;
	t->why[0] = '\0';
	t->last_alarm[0] = '\0';
	atomic_store_explicit(&t->echo_seq, 0, memory_order_relaxed);
	atomic_store_explicit(&t->echo_ns, 0, memory_order_relaxed);
	ret = open_socket(t, err);
	if (ret < 0)
		return ret;
	ret = handshake(t, deadline, err);
	if (ret < 0)
		goto err_close;
	{
		/* The loop's receive slice: recv() returns -EAGAIN after it. */
		struct timeval tv = { .tv_usec = RTL_TRANSPORT_RX_SLICE_NS / 1000 };

		if (setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
			ret = rtl_error_set(err, -errno, "UDP: cannot set the receive time-out");
			goto err_close;
		}
	}
	{
		/* The safe package, once: a STOP at the configured deceleration. */
		struct rtl_udp_cmd stop = { .mode = RTL_UDP_MODE_STOP };

		stop.acc[0] = t->cfg.safe_decel;
		t->tx_safe_len =
			rtl_udp_encode_command(t->tx_safe, sizeof(t->tx_safe), 0, 0, &stop);
	}
	/* The deadline is the transport's (from the last valid state, with a
	 * message that says what came instead); the loop's own, one receive
	 * slice later, is only a backstop. The first state is the one kept
	 * from the handshake. */
	t->last_valid_ns = rtl_time_now();
	t->mark_malformed = get(&t->c.malformed);
	t->mark_stale = get(&t->c.stale);
	t->mark_duplicate = get(&t->c.duplicate);
	t->mark_nonfinite = get(&t->c.nonfinite_state);
	base->rx_timeout_ns =
		t->cfg.rx_timeout_ns > 0 ? t->cfg.rx_timeout_ns + RTL_TRANSPORT_RX_SLICE_NS : 0;
	base->ctrl_watchdog_ns = CTRL_WATCHDOG_NS;
	base->values_size = sizeof(struct rtl_udp_frame);
	base->period_ns = t->server_period_ns ? (int64_t)t->server_period_ns
			  : t->cfg.period_ns  ? t->cfg.period_ns
					      : DEFAULT_PERIOD_NS;
	return 0;

err_close:
	close_fd(t);
	return ret;
}

static void udp_op_disconnect(struct rtl_transport *base)
{
	struct rtl_udp_transport *t = of(base);
	uint8_t bye[RTL_UDP_HEADER_SIZE];

	if (t->fd >= 0 && rtl_udp_encode_bye(bye, sizeof(bye), t->tx_seq, rtl_time_now()) > 0)
		(void)send(t->fd, bye, sizeof(bye), MSG_DONTWAIT | MSG_NOSIGNAL);
	close_fd(t);
	t->pending = false;
	t->rx_len = 0;
}

static const char *udp_op_error(struct rtl_transport *base)
{
	return of(base)->why;
}

static const struct rtl_transport_ops udp_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "udp",
	.connect = udp_op_connect,
	.recv = udp_op_recv,
	.next = udp_op_next,
	.send = udp_op_send,
	.send_safe = udp_op_send_safe,
	.check = udp_op_check,
	.at_rest = udp_op_at_rest,
	.disconnect = udp_op_disconnect,
	.error = udp_op_error,
	.finite = udp_op_finite,
};

/* ---- set-up ------------------------------------------------------------------------------------
 */

static int transport_init(struct rtl_udp_transport *t,
			  const struct rtl_udp_transport_config *user_cfg, struct rtl_error *err)
{
	struct rtl_udp_transport_config cfg_copy;
	const struct rtl_udp_transport_config *cfg = &cfg_copy;
	int ret;

	ret = rtl__sized_in(&cfg_copy, sizeof(cfg_copy), user_cfg,
			    "UDP transport: struct rtl_udp_transport_config", err);
	if (ret < 0)
		return ret;
	if (cfg->period_ns < 0 || cfg->period_ns > RTL_NS_PER_SEC || cfg->connect_timeout_ns < 0 ||
	    !(cfg->max_joint_vel >= 0) || !(cfg->max_linear_vel >= 0) ||
	    !(cfg->max_angular_vel >= 0) || !(cfg->rest_speed >= 0) ||
	    !(cfg->safe_decel > 0 || cfg->safe_decel == 0 || cfg->safe_decel == RTL_UDP_AUTO))
		return rtl_error_set(
			err, -EINVAL,
			"UDP transport: period above 1 s, a negative time-out or limit, or "
			"a safe deceleration that is neither > 0 nor AUTO");
	memset(t, 0, offsetof(struct rtl_udp_transport, tx));
	t->cfg = *cfg;
	if (!t->cfg.host)
		t->cfg.host = "127.0.0.1";
	if (!t->cfg.port)
		t->cfg.port = RTL_UDP_DEFAULT_PORT;
	snprintf(t->who, sizeof(t->who), "UDP peer %s:%u:", t->cfg.host, t->cfg.port);
	if (!t->cfg.connect_timeout_ns)
		t->cfg.connect_timeout_ns = DEFAULT_CONNECT_TIMEOUT_NS;
	if (!t->cfg.rx_timeout_ns)
		t->cfg.rx_timeout_ns = DEFAULT_RX_TIMEOUT_NS;
	if (t->cfg.safe_decel == 0)
		t->cfg.safe_decel = RTL_UDP_AUTO;
	if (t->cfg.rest_speed == 0)
		t->cfg.rest_speed = DEFAULT_REST_SPEED;
	t->fd = -1;
	ret = resolve(t, err);
	if (ret < 0)
		return ret;
	t->base.size = sizeof(t->base);
	t->base.ops = &udp_ops;
	t->base.impl = t;
	t->base.commands = &t->cmd;
	t->base.period_ns = t->cfg.period_ns ? t->cfg.period_ns : DEFAULT_PERIOD_NS;
	t->base.values_size = sizeof(struct rtl_udp_frame);
	return 0;
}

RTL_API int rtl_udp_transport_create(struct rtl_udp_transport **out,
				     const struct rtl_udp_transport_config *cfg,
				     struct rtl_error *err)
{
	struct rtl_udp_transport *t;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "UDP transport: nowhere to put it");
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return rtl_error_set(err, -ENOMEM, "UDP transport: out of memory");
	ret = transport_init(t, cfg, err);
	if (ret < 0) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

RTL_API void rtl_udp_transport_destroy(struct rtl_udp_transport *t)
{
	if (!t)
		return;
	close_fd(t);
	free(t);
}

RTL_API struct rtl_transport *rtl_udp_transport_base(struct rtl_udp_transport *t)
{
	return t ? &t->base : NULL;
}

RTL_API struct rtl_udp_cmd *rtl_udp_transport_command(struct rtl_udp_transport *t)
{
	return t ? &t->cmd : NULL;
}

RTL__DEFINE_COUNTERS(rtl_udp_transport, RTL_UDP_TRANSPORT_COUNTERS, c)
