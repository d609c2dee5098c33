// SPDX-License-Identifier: MIT
/*
 * RTDE as a loop transport: see <rtloop/rtde_transport.h> for the design.
 *
 * What a controller needs besides RTDE on each connection (a program
 * uploaded, an executor that reports ready) is a hook's (struct
 * rtl_rtde_transport_hook_ops, e.g. io/ur's upload): this file calls it at
 * connect, per data package and at destroy, and offers it the few calls it
 * needs (the safe package with a beat, a bounded receive), so io/rtde
 * includes nothing of io/ur.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/sized.h>
#include <rtloop/stat.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#define RTL_RTDE_TRANSPORT_TX_SIZE 4096
/* Input doubles (and vectors) check() tests: each takes 8 or more of the
 * bytes of a recipe the coalescer holds. */
#define RTL_RTDE_TRANSPORT_MAX_FINITE \
	(RTL_RTDE_COALESCE_MAX_RECIPES * RTL_RTDE_COALESCE_MAX_BYTES / sizeof(double))

/* Private: an input double (or vector) that must be finite. */
struct rtl_rtde_transport_finite {
	uint32_t offset; /* host offset in its recipe's frame */
	uint16_t slot;	 /* position in the recipe (for the name) */
	uint8_t recipe;
	uint8_t elems;
	bool nan_ok; /* behind a mask: NaN means "not set" */
};

/* Private: a limited field (bounds in cfg.limits, same index). */
struct rtl_rtde_transport_bound {
	uint32_t offset;
	uint8_t recipe;
	uint8_t elems;
};

/* The transport (opaque to the API). */
struct rtl_rtde_transport {
	struct rtl_transport base;
	struct rtl_rtde_transport_config cfg;	 /* cfg.client: NULL (copied) */
	struct rtl_rtde_transport_hook_ops hook; /* cfg.hook points here */
	unsigned client_flags;
	struct rtl_tcp_addr addr; /* resolved at init */
	char peer[96];		  /* "host:port", for messages */
	struct rtl_error lost;	  /* why the stream ended (rx thread) */
	struct rtl_rtde_client *client;
	/* Both created with the transport (their frames never move: check()
	 * reads them through coal_base) and set up at connect. */
	struct rtl_rtde_coalesce *coal; /* the step's commands */
	struct rtl_rtde_coalesce *safe; /* the safe package's own frames */
	int fd;
	uint64_t connects; /* successful connects so far */
	bool coal_ready;
	bool pending;  /* the handshake's last read holds data for next() */
	bool resend;   /* a safe package went out: the next send forces all */
	int safe_beat; /* offset of the heartbeat in safe_tx, -1: none */
	size_t safe_len;
	unsigned safe_pkgs; /* data packages in safe_tx */
	int64_t last_tx_ns;
	int64_t last_beat_ns;	     /* the heartbeat's recipe last went out */
	struct rtl_rtde_handle rest; /* actual_qd in the output recipe */
	size_t tx_off, tx_len;
	/* The transmit side saw ECONNRESET: the peer reset the connection.
	 * That send consumed the socket's error, so the rx thread's recv()
	 * then reads 0 as if the peer had closed in order; this tells the
	 * two apart. Set by the holder of the transmit side, read by the rx
	 * thread, cleared at connect (no step runs then). */
	atomic_bool tx_reset;
	/* Written by the rx thread (rx_bytes) or the holder of the transmit
	 * side (the rest); read by anyone. */
	struct {
		RTL_RTDE_TRANSPORT_COUNTERS(RTL_STAT_ATOMIC)
	} c;
	/* The numeric address of the resolved host (a hook's own connections
	 * to the controller ask no resolver at a reconnect). */
	char host_ip[INET6_ADDRSTRLEN];
	/* Resolved at connect, walked by check() on every send. */
	struct rtl_rtde_transport_finite finite[RTL_RTDE_TRANSPORT_MAX_FINITE];
	unsigned n_finite;
	struct rtl_rtde_transport_bound limits[RTL_RTDE_TRANSPORT_MAX_LIMITS];
	unsigned n_limits;
	const unsigned char *coal_base[RTL_RTDE_COALESCE_MAX_RECIPES];
	uint8_t tx[RTL_RTDE_TRANSPORT_TX_SIZE];
	uint8_t safe_tx[RTL_RTDE_TRANSPORT_TX_SIZE];
	uint8_t rx[RTL_RTDE_MAX_PACKAGE_SIZE];
};

#define DEFAULT_TIMEOUT_NS (3 * RTL_NS_PER_SEC)
#define DEFAULT_RX_TIMEOUT_NS RTL_NS_PER_SEC
#define DEFAULT_REST_SPEED 0.001 /* rad/s: 0.06 deg/s, 0.5 mm/s at half a metre */
#define REST_FIELD "actual_qd"

static struct rtl_rtde_transport *of(struct rtl_transport *base)
{
	return base->impl;
}

/* ---- connect: the handshake, driven to RUNNING ---------------------------------------- */

static bool settled(enum rtl_rtde_client_state_id s, bool no_start)
{
	return s == RTL_RTDE_CLIENT_RUNNING || (no_start && s == RTL_RTDE_CLIENT_READY);
}

/* Take the events of the bytes fed so far until the client has settled
 * (@until_settled) or none is left. What follows the settling (data
 * packages that came in the same read as the START reply) stays in the
 * framer for the loop: rtde_op_recv() hands it over before it receives again.
 * Returns 0, or a fatal error's code with @err filled. */
static int drain(struct rtl_rtde_client *c, bool until_settled, bool no_start,
		 struct rtl_error *err)
{
	struct rtl_rtde_client_event ev;

	while (!(until_settled && settled(rtl_rtde_client_state(c), no_start)) &&
	       rtl_rtde_client_next(c, &ev, rtl_time_now()) == 1)
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal)
			return rtl_error_set(err, ev.u.error->err.code, "%s", ev.u.error->err.msg);
	return 0;
}

/* @err again, naming the controller: "RTDE host:port: what went wrong". */
static int name_peer(const struct rtl_rtde_transport *t, struct rtl_error *err)
{
	char what[RTL_ERROR_MSG];
	const char *m;

	if (!err)
		return -EINVAL;
	m = strncmp(err->msg, "RTDE: ", 6) == 0 ? err->msg + 6 : err->msg;
	snprintf(what, sizeof(what), "%s", m);
	return rtl_error_set(err, err->code, "RTDE %s: %s", t->peer, what);
}

/* The stream ended (rx thread): keep the client's explanation for the
 * loop's log (rtl_transport_ops.error). Returns @code. */
static int stream_lost(struct rtl_rtde_transport *t, int code)
{
	const struct rtl_rtde_client_error *ce = rtl_rtde_client_last_error(t->client);

	rtl_error_set(&t->lost, code, "%s", ce->err.msg[0] ? ce->err.msg : strerror(-code));
	name_peer(t, &t->lost);
	return code;
}

/* ---- the hook (cfg.hook) ------------------------------------------------------------------- */

static const char *hook_name(const struct rtl_rtde_transport *t)
{
	return t->cfg.hook->name && t->cfg.hook->name[0] ? t->cfg.hook->name : "connect";
}

/* A hook's failure as -errno: a positive return counts as a refusal. */
static int hook_code(int ret)
{
	return ret < 0 ? ret : -ECANCELED;
}

/* The hook's connected, last in every connect. Returns 0 or -errno with
 * @err filled (the hook's sentence, or one that names the hook). */
static int hook_connected(struct rtl_rtde_transport *t, struct rtl_error *err)
{
	struct rtl_error herr = { 0 };
	int ret;

	if (!t->cfg.hook || !t->cfg.hook->connected)
		return 0;
	ret = t->cfg.hook->connected(t, t->cfg.hook_ctx, &herr);
	/* The stream the loop takes over starts fresh: every input again
	 * (the hook may have sent, and the controller holds what it sent). */
	t->resend = true;
	if (!ret)
		return 0;
	if (herr.msg[0])
		return rtl_error_set(err, hook_code(ret), "%s", herr.msg);
	return rtl_error_set(err, hook_code(ret), "RTDE: the %s hook failed the connect: %s",
			     hook_name(t), strerror(-hook_code(ret)));
}

/* rx thread, a data package decoded into @fr: the hook may end the stream
 * (its sentence is the loop's explanation). Returns 0 or the code. */
static int hook_frame(struct rtl_rtde_transport *t, const struct rtl_rtde_frame *fr)
{
	int ret;

	t->lost.code = 0;
	t->lost.msg[0] = '\0';
	ret = t->cfg.hook->frame(t, fr, t->cfg.hook_ctx, &t->lost);
	if (!ret)
		return 0;
	if (!t->lost.msg[0])
		rtl_error_set(&t->lost, hook_code(ret), "the %s hook ended the stream (error %d)",
			      hook_name(t), -hook_code(ret));
	t->lost.code = hook_code(ret);
	name_peer(t, &t->lost);
	return hook_code(ret);
}

/* Run the client on the socket until it streams (or fails). */
static int handshake(struct rtl_rtde_transport *t, int64_t deadline, struct rtl_error *err)
{
	struct rtl_rtde_client *c = t->client;
	bool no_start = t->client_flags & RTL_RTDE_CLIENT_NO_START;
	const uint8_t *out;
	size_t n;
	ssize_t got;
	int ret;

	rtl_rtde_client_connected(c, rtl_time_now());
	for (;;) {
		while ((n = rtl_rtde_client_tx(c, &out)) > 0) {
			ret = rtl_tcp_send_all(t->fd, out, n, deadline);
			if (ret < 0)
				return rtl_error_set(err, ret,
						     "RTDE: sending a setup request failed");
			rtl_rtde_client_tx_done(c, n);
		}
		ret = drain(c, true, no_start, err);
		if (ret)
			return ret;
		if (settled(rtl_rtde_client_state(c), no_start)) {
			/* The rest of this read (data) is the loop's. */
			t->pending = true;
			return 0;
		}
		if (rtl_time_now() >= deadline)
			return rtl_error_set(
				err, -ETIMEDOUT,
				"RTDE: the handshake did not finish in time; is this an RTDE "
				"controller (port 30004)?");
		if (rtl_rtde_client_tx(c, &out) > 0)
			continue;
		/* Wake for the client's reply time-out too: drain() reports it. */
		got = rtl_tcp_recv(t->fd, t->rx, sizeof(t->rx),
				   rtl_rtde_client_deadline(c) < deadline
					   ? rtl_rtde_client_deadline(c)
					   : deadline);
		if (got == -ETIMEDOUT)
			continue; /* drain() or the deadline check above reports it */
		if (got <= 0) {
			rtl_rtde_client_closed(c, rtl_time_now(), got < 0 ? (int)got : 0);
			ret = drain(c, false, no_start, err);
			if (ret)
				return ret;
			return rtl_error_set(
				err, -ECONNRESET,
				"RTDE: the controller closed the connection during set-up");
		}
		rtl_stat_add(&t->c.rx_bytes, (uint64_t)got);
		rtl_rtde_client_feed(c, t->rx, (size_t)got);
	}
}

/* The input recipe (and handle) of field @name, or -1. */
static int find_input(struct rtl_rtde_transport *t, const char *name, struct rtl_rtde_handle *h)
{
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(t->client);

	for (unsigned i = 0; i < info->n_inputs; i++)
		if (rtl_rtde_recipe_handle(rtl_rtde_client_input_recipe(t->client, i), h, name) ==
		    0)
			return (int)i;
	return -1;
}

/* The heartbeat field becomes the coalescer's (set-up, first connect). */
static int setup_heartbeat(struct rtl_rtde_transport *t, struct rtl_error *err)
{
	const char *name = t->cfg.heartbeat ? t->cfg.heartbeat : RTL_RTDE_CMD_FIELD_SEQ;
	struct rtl_rtde_handle h;
	int i;

	if (!name[0])
		return 0;
	i = find_input(t, name, &h);
	if (i < 0)
		return t->cfg.heartbeat
			       ? rtl_error_set(err, -ENOENT,
					       "RTDE: the heartbeat field '%s' is in no "
					       "input recipe; add it, or set heartbeat = \"\" "
					       "for none",
					       name)
			       : 0;
	if (rtl_rtde_coalesce_set_heartbeat(t->coal, (size_t)i, h) < 0)
		return rtl_error_set(err, -EINVAL,
				     "RTDE: the heartbeat field '%s' is not a 32-bit integer",
				     name);
	return 0;
}

/* Input recipes into the coalescer: first time set up, later re-keyed. */
static int setup_coalescer(struct rtl_rtde_transport *t, struct rtl_error *err)
{
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(t->client);
	const struct rtl_rtde_recipe *recipes[RTL_RTDE_CLIENT_MAX_INPUTS];
	int ret;

	if (info->n_inputs == 0)
		return 0;
	if (t->coal_ready) {
		for (unsigned i = 0; i < info->n_inputs; i++) {
			ret = rtl_rtde_coalesce_set_id(t->coal, i, info->input_ids[i]);
			if (ret < 0)
				return rtl_error_set(err, ret,
						     "RTDE: input recipe ids changed badly");
		}
		/* The controller kept the old values, or another client changed
		 * them: send everything again. */
		return rtl_rtde_coalesce_force(t->coal);
	}
	for (unsigned i = 0; i < info->n_inputs; i++)
		recipes[i] = rtl_rtde_client_input_recipe(t->client, i);
	ret = rtl_rtde_coalesce_setup(t->coal, recipes, info->input_ids, info->n_inputs);
	if (ret < 0)
		return rtl_error_set(err, ret,
				     "RTDE: an input recipe is too large for the coalescer");
	ret = setup_heartbeat(t, err);
	if (ret < 0)
		return ret;
	t->coal_ready = true;
	return 0;
}

/* Doubles the coalescer treats as "not set" while NaN (values behind a
 * mask: the speed slider and the analog outputs). */
static bool nan_means_unset(const struct rtl_rtde_field *f)
{
	static const char *const names[] = { "speed_slider_fraction", "standard_analog_output_0",
					     "standard_analog_output_1" };

	for (size_t i = 0; f && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(f->name, names[i]) == 0)
			return true;
	return false;
}

/*
 * What check() reads on every send, resolved here once per connect (names
 * compared now, never per cycle): where each input double and each limited
 * field sits in the coalescer's frames, which stay put.
 */
static int resolve_checks(struct rtl_rtde_transport *t, struct rtl_error *err)
{
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(t->client);

	t->n_finite = t->n_limits = 0;
	for (unsigned i = 0; i < info->n_inputs; i++) {
		const struct rtl_rtde_recipe *r = rtl_rtde_client_input_recipe(t->client, i);

		t->coal_base[i] = rtl_rtde_coalesce_frame(t->coal, i)->values;

		/* No overflow: the coalescer took at most MAX_RECIPES recipes of
		 * at most MAX_BYTES each, and every double takes 8 of them. */
		for (uint32_t k = 0; k < r->n; k++) {
			const struct rtl_rtde_slot *s = &r->slots[k];

			if (s->type != RTL_RTDE_TYPE_DOUBLE && s->type != RTL_RTDE_TYPE_VECTOR3D &&
			    s->type != RTL_RTDE_TYPE_VECTOR6D)
				continue;
			t->finite[t->n_finite++] = (struct rtl_rtde_transport_finite){
				.offset = s->host_offset,
				.slot = (uint16_t)k,
				.recipe = (uint8_t)i,
				.elems = (uint8_t)rtl_rtde_type_elems((enum rtl_rtde_type)s->type),
				.nan_ok = nan_means_unset(r->fields[k]),
			};
		}
	}
	for (unsigned l = 0; l < t->cfg.n_limits; l++) {
		const char *field = t->cfg.limits[l].field;
		struct rtl_rtde_handle h;
		unsigned i = 0;

		while (i < info->n_inputs &&
		       rtl_rtde_recipe_handle(rtl_rtde_client_input_recipe(t->client, i), &h,
					      field) != 0)
			i++;
		if (i == info->n_inputs)
			return rtl_error_set(err, -ENOENT,
					     "RTDE: limit on '%s', which no input recipe "
					     "contains; fix: add it to an input recipe or drop "
					     "the limit",
					     field);
		t->limits[t->n_limits++] = (struct rtl_rtde_transport_bound){
			.offset = h.offset,
			.recipe = (uint8_t)i,
			.elems = (uint8_t)rtl_rtde_type_elems((enum rtl_rtde_type)h.type),
		};
	}
	return 0;
}

static int build_safe(struct rtl_rtde_transport *t, struct rtl_error *err);

static int rtde_op_connect(struct rtl_transport *base, struct rtl_error *err)
{
	struct rtl_rtde_transport *t = of(base);
	int64_t timeout =
		t->cfg.connect_timeout_ns ? t->cfg.connect_timeout_ns : DEFAULT_TIMEOUT_NS;
	int64_t deadline = rtl_time_now() + timeout;
	struct rtl_error terr = { 0 };
	struct timeval slice = { .tv_usec = RTL_TRANSPORT_RX_SLICE_NS / 1000 };
	int64_t period;
	int ret;

	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	atomic_store_explicit(&t->tx_reset, false, memory_order_relaxed);
	t->fd = rtl_tcp_connect_addr(&t->addr, timeout, &terr);
	if (t->fd < 0) {
		ret = t->fd;
		t->fd = -1;
		return rtl_error_set(err, ret, "%s", terr.msg);
	}
	t->pending = false;
	t->lost.code = 0;
	t->lost.msg[0] = '\0';
	ret = handshake(t, deadline, err);
	if (ret == 0)
		ret = setup_coalescer(t, err);
	if (ret == 0)
		ret = resolve_checks(t, err);
	if (ret < 0)
		goto err_close;
	/* The loop's receive slice: recv() returns -EAGAIN after it. */
	if (setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof(slice)) < 0) {
		ret = rtl_error_set(err, -errno, "RTDE: cannot set the receive time-out");
		goto err_close;
	}
	t->tx_off = t->tx_len = 0;
	t->resend = false;
	t->last_tx_ns = t->last_beat_ns = 0;
	period = rtl_rtde_client_info(t->client)->period_ns;
	base->values_size = rtl_rtde_client_output_recipe(t->client)->host_size;
	base->period_ns = period;
	base->rx_timeout_ns = t->cfg.rx_timeout_ns < 0		    ? 0
			      : t->cfg.rx_timeout_ns > 0	    ? t->cfg.rx_timeout_ns
			      : 10 * period > DEFAULT_RX_TIMEOUT_NS ? 10 * period
								    : DEFAULT_RX_TIMEOUT_NS;
	base->ctrl_watchdog_ns =
		t->cfg.controller_watchdog_ns > 0 ? t->cfg.controller_watchdog_ns
		: t->cfg.controller_watchdog_ns < 0
			? 0
			: (int64_t)RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS * RTL_NS_PER_MS;
	rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(t->client), &t->rest, REST_FIELD);
	if (t->connects++)
		rtl_rtde_client_count_reconnect(t->client);
	if (t->cfg.connected)
		t->cfg.connected(t, t->cfg.user);
	ret = build_safe(t, err);
	if (ret == 0)
		ret = hook_connected(t, err);
	if (ret == 0)
		return 0;

err_close:
	close(t->fd);
	t->fd = -1;
	return name_peer(t, err);
}

/* ---- rx thread ------------------------------------------------------------------------------ */

static int rtde_op_recv(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);
	ssize_t n;

	/* The handshake's last read may hold data packages: next() takes
	 * them before anything new is received (into the same buffer). */
	if (t->pending) {
		t->pending = false;
		return 1;
	}
	do {
		n = recv(t->fd, t->rx, sizeof(t->rx), 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		struct rtl_rtde_client_event ev;

		/* Nothing for a slice: the client's data time-out, if it
		 * expired, ends the stream with its explanation (the loop's own
		 * receive time-out stays as it was, the last resort). */
		while (rtl_rtde_client_poll(t->client, &ev, rtl_time_now()) == 1)
			if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal)
				return stream_lost(t, ev.u.error->err.code);
		return -EAGAIN;
	}
	if (n <= 0) {
		int code = n < 0 ? -errno : -ECONNRESET;
		bool reset = n < 0 || atomic_load_explicit(&t->tx_reset, memory_order_relaxed);

		/* 0: an orderly close, unless a send saw the reset first (the
		 * client words the two apart). */
		rtl_rtde_client_closed(t->client, rtl_time_now(), reset ? code : 0);
		stream_lost(t, code);
		return n < 0 ? code : 0;
	}
	rtl_stat_add(&t->c.rx_bytes, (uint64_t)n);
	rtl_rtde_client_feed(t->client, t->rx, (size_t)n);
	return (int)n;
}

static int rtde_op_next(struct rtl_transport *base, struct rtl_loop_frame *f, size_t cap)
{
	struct rtl_rtde_transport *t = of(base);
	struct rtl_rtde_client_event ev;

	/* f->rx_ns: when recv() returned these bytes (no clock read here). */
	while (rtl_rtde_client_next(t->client, &ev, f->rx_ns) == 1) {
		switch (ev.type) {
		case RTL_RTDE_CLIENT_EV_DATA: {
			struct rtl_rtde_frame fr = { f->values, 0, (uint32_t)cap };

			if (rtl_rtde_client_decode(t->client, &fr, &ev) < 0)
				continue;
			f->size = fr.size;
			f->ctrl_time = ev.u.data.has_timestamp ? ev.u.data.timestamp : NAN;
			/* The frame holds 32 bits: a timestamp jump's huge
			 * count saturates instead of wrapping to a small one
			 * (the client's stats keep all 64). */
			f->ctrl_skipped = ev.u.data.skipped > UINT32_MAX
						  ? UINT32_MAX
						  : (uint32_t)ev.u.data.skipped;
			f->kernel_rx_ns = 0;
			if (t->cfg.hook && t->cfg.hook->frame) {
				int lost = hook_frame(t, &fr);

				if (lost)
					return lost;
			}
			return 1;
		}
		case RTL_RTDE_CLIENT_EV_ERROR:
			if (ev.u.error->fatal)
				return stream_lost(t, ev.u.error->err.code < 0
							      ? ev.u.error->err.code
							      : -EPROTO);
			continue;
		case RTL_RTDE_CLIENT_EV_STATE:
			if (ev.u.state.to == RTL_RTDE_CLIENT_FAILED ||
			    ev.u.state.to == RTL_RTDE_CLIENT_CLOSED)
				return stream_lost(t, -ECONNRESET);
			continue;
		default:
			continue; /* text: the client logged it */
		}
	}
	return 0;
}

/* ---- transmit owner ------------------------------------------------------------------------- */

/* Push the backlog out. Returns 0 when empty, -EAGAIN while bytes remain. */
static int flush(struct rtl_rtde_transport *t)
{
	while (t->tx_off < t->tx_len) {
		ssize_t n = send(t->fd, t->tx + t->tx_off, t->tx_len - t->tx_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECONNRESET)
				atomic_store_explicit(&t->tx_reset, true, memory_order_relaxed);
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		t->tx_off += (size_t)n;
		rtl_stat_add(&t->c.tx_bytes, (uint64_t)n);
	}
	t->tx_off = t->tx_len = 0;
	return 0;
}

/*
 * Send @len bytes of t->tx without blocking. Returns @len (the bytes the
 * socket did not take are the backlog, flushed before anything else),
 * -EAGAIN (nothing went: nothing is committed), or -errno.
 */
static int tx_send(struct rtl_rtde_transport *t, size_t len)
{
	ssize_t n;

	do {
		n = send(t->fd, t->tx, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == ECONNRESET)
		atomic_store_explicit(&t->tx_reset, true, memory_order_relaxed);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	rtl_stat_add(&t->c.tx_bytes, (uint64_t)n);
	if ((size_t)n < len) {
		/* Part of a package left: it must follow before anything
		 * else, or the stream breaks. It is in flight: commit. */
		t->tx_off = (size_t)n;
		t->tx_len = len;
		rtl_stat_add(&t->c.backlogged, 1);
	}
	return (int)len;
}

static int rtde_op_send(struct rtl_transport *base, int64_t now)
{
	struct rtl_rtde_transport *t = of(base);
	int64_t keep = t->cfg.keepalive_ns;
	int beat_recipe = rtl_rtde_coalesce_beat_recipe(t->coal);
	struct rtl_rtde_coalesce_counters beat_before = { .size = sizeof(beat_before) },
					  beat_after = { .size = sizeof(beat_after) };
	bool keepalive = false;
	int len, ret;

	if (!t->coal_ready)
		return 0;
	ret = flush(t);
	if (ret < 0)
		return ret;
	/* The controller holds the safe set: every command goes again. */
	if (t->resend)
		rtl_rtde_coalesce_force(t->coal);
	/* The heartbeat's recipe has not gone out for a while (other
	 * recipes may have): send it as it is, with a new heartbeat. */
	if (keep > 0 && beat_recipe >= 0 && now - t->last_beat_ns >= keep) {
		rtl_rtde_coalesce_resend(t->coal, (size_t)beat_recipe);
		keepalive = true;
	}
	/* Whether the heartbeat's recipe goes out in this send: its sent
	 * counter moves (the commit below counts it) exactly when it does.
	 * Exact: this thread is the counters' only writer. */
	if (beat_recipe >= 0)
		rtl_rtde_coalesce_stats(t->coal, (size_t)beat_recipe, &beat_before);
	len = rtl_rtde_coalesce_encode(t->coal, t->tx, sizeof(t->tx));
	if (len <= 0)
		return len;
	ret = tx_send(t, (size_t)len);
	if (ret < 0)
		return ret; /* nothing left: the newest values go next time */
	rtl_stat_add(&t->c.packages, (uint64_t)rtl_rtde_coalesce_commit(t->coal));
	t->resend = false;
	t->last_tx_ns = now;
	if (beat_recipe >= 0)
		rtl_rtde_coalesce_stats(t->coal, (size_t)beat_recipe, &beat_after);
	if (beat_after.sent != beat_before.sent) {
		/* A keep-alive is a send only the keep-alive caused. */
		if (keepalive &&
		    len == (int)(RTL_RTDE_HEADER_SIZE + 1 +
				 rtl_rtde_client_input_recipe(t->client, (unsigned)beat_recipe)
					 ->wire_size))
			rtl_stat_add(&t->c.keepalives, 1);
		t->last_beat_ns = now;
	}
	return len;
}

/*
 * The safe package with a heartbeat the controller has not seen (the safe
 * set is obeyed even by an executor whose watchdog tripped on a stale
 * one), after what an earlier send left in flight; the heartbeat into
 * *@beat when not NULL. Returns what tx_send() returns, -EAGAIN while the
 * backlog stays, -ENOTSUP without a safe package, -ENOTCONN.
 */
static int send_safe(struct rtl_rtde_transport *t, uint32_t *beat)
{
	uint32_t b = 0;
	int ret;

	if (!t->safe_len)
		return -ENOTSUP;
	if (t->fd < 0)
		return -ENOTCONN;
	ret = flush(t);
	if (ret < 0)
		return ret;
	memcpy(t->tx, t->safe_tx, t->safe_len);
	if (t->safe_beat >= 0) {
		b = rtl_rtde_coalesce_next_beat(t->coal);
		rtl_rtde_store_u32(t->tx + t->safe_beat, b);
	}
	ret = tx_send(t, t->safe_len);
	if (ret < 0)
		return ret;
	rtl_stat_add(&t->c.safe_packages, t->safe_pkgs);
	t->resend = true;
	t->last_tx_ns = rtl_time_now();
	if (t->safe_beat >= 0)
		t->last_beat_ns = t->last_tx_ns;
	if (beat)
		*beat = b;
	return ret;
}

/* The numeric address of the resolved host, for a hook's own connections
 * to the controller (a reconnect asks no resolver). */
static void numeric_host(struct rtl_rtde_transport *t)
{
	const struct sockaddr_storage *ss = &t->addr.ss[0];

	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, t->host_ip,
			  sizeof(t->host_ip));
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, t->host_ip,
			  sizeof(t->host_ip));
}

static int rtde_op_send_safe(struct rtl_transport *base)
{
	return send_safe(of(base), NULL);
}

static double load_double(const unsigned char *p)
{
	double v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Every input double of the frames at @bases finite (or unset behind a
 * mask), every limited field within its bounds. */
static int check_values(const struct rtl_rtde_transport *t, const unsigned char *const *bases,
			char *why, size_t len)
{
	for (unsigned k = 0; k < t->n_finite; k++) {
		const struct rtl_rtde_transport_finite *c = &t->finite[k];
		const unsigned char *at = bases[c->recipe] + c->offset;

		for (unsigned e = 0; e < c->elems; e++) {
			double v = load_double(at + e * sizeof(double));
			const struct rtl_rtde_field *f;

			if (isfinite(v) || (isnan(v) && c->nan_ok))
				continue;
			f = rtl_rtde_client_input_recipe(t->client, c->recipe)->fields[c->slot];
			snprintf(why, len, "input '%s' is not finite", f ? f->name : "?");
			return -EDOM;
		}
	}
	for (unsigned l = 0; l < t->n_limits; l++) {
		const struct rtl_rtde_limit *lim = &t->cfg.limits[l];
		const unsigned char *at = bases[t->limits[l].recipe] + t->limits[l].offset;

		for (unsigned e = 0; e < t->limits[l].elems; e++) {
			double v = load_double(at + e * sizeof(double));

			if (v < lim->min || v > lim->max) {
				snprintf(why, len, "input '%s'[%u] = %g is outside [%g, %g]",
					 lim->field, e, v, lim->min, lim->max);
				return -EDOM;
			}
		}
	}
	return 0;
}

static int rtde_op_check(struct rtl_transport *base, char *why, size_t len)
{
	struct rtl_rtde_transport *t = of(base);

	return check_values(t, t->coal_base, why, len);
}

/*
 * The safe package: the application's safe values (or mode = STOP) in
 * frames of their own, checked, encoded once into safe_tx. At connect,
 * while no step runs.
 */
static int build_safe(struct rtl_rtde_transport *t, struct rtl_error *err)
{
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(t->client);
	const struct rtl_rtde_recipe *recipes[RTL_RTDE_CLIENT_MAX_INPUTS];
	const unsigned char *bases[RTL_RTDE_COALESCE_MAX_RECIPES];
	struct rtl_rtde_handle mode;
	int beat_recipe = rtl_rtde_coalesce_beat_recipe(t->coal);
	char why[160];
	int len, ret, mode_recipe = -1;

	t->safe_len = 0;
	t->safe_beat = -1;
	if (info->n_inputs == 0)
		return 0;
	if (!t->cfg.safe) {
		mode_recipe = find_input(t, RTL_RTDE_CMD_FIELD_MODE, &mode);
		if (mode_recipe < 0)
			return 0; /* no safe package: the loop says so */
	}
	for (unsigned i = 0; i < info->n_inputs; i++)
		recipes[i] = rtl_rtde_client_input_recipe(t->client, i);
	ret = rtl_rtde_coalesce_setup(t->safe, recipes, info->input_ids, info->n_inputs);
	if (ret < 0)
		return rtl_error_set(err, ret, "RTDE: cannot set up the safe package");
	rtl_rtde_coalesce_raw_masks(t->safe, true);
	if (t->cfg.safe)
		t->cfg.safe(t, t->safe, t->cfg.user);
	else
		rtl_rtde_frame_set_int(rtl_rtde_coalesce_frame(t->safe, (size_t)mode_recipe), mode,
				       RTL_RTDE_CMD_STOP);
	for (unsigned i = 0; i < info->n_inputs; i++)
		bases[i] = rtl_rtde_coalesce_frame(t->safe, i)->values;
	if (check_values(t, bases, why, sizeof(why)) < 0)
		return rtl_error_set(err, -EDOM,
				     "RTDE: the safe set cannot be sent: %s; fix the safe "
				     "callback",
				     why);
	len = rtl_rtde_coalesce_encode(t->safe, t->safe_tx, sizeof(t->safe_tx));
	if (len < 0)
		return rtl_error_set(err, len, "RTDE: the safe package does not fit");
	if (len == 0)
		return rtl_error_set(err, -EINVAL,
				     "RTDE: the safe callback set no input value; write the "
				     "safe command (e.g. mode = RTL_RTDE_CMD_STOP) into its "
				     "frames");
	t->safe_len = (size_t)len;
	/* Its packages, and where the heartbeat's recipe landed, if it did. */
	t->safe_pkgs = 0;
	for (size_t pos = 0; pos + 4 <= t->safe_len; pos += rtl_rtde_load_u16(t->safe_tx + pos)) {
		t->safe_pkgs++;
		if (beat_recipe >= 0 && t->safe_tx[pos + 3] == info->input_ids[beat_recipe])
			t->safe_beat = (int)pos + rtl_rtde_coalesce_beat_offset(t->coal);
	}
	return 0;
}

static bool rtde_op_at_rest(struct rtl_transport *base, const struct rtl_loop_frame *f)
{
	struct rtl_rtde_transport *t = of(base);
	struct rtl_rtde_frame fr = rtl_rtde_loop_state(f);
	double qd[6];

	if (!rtl_rtde_frame_get_vec6(&fr, t->rest, qd))
		return false;
	for (int i = 0; i < 6; i++)
		if (!(fabs(qd[i]) < t->cfg.rest_speed))
			return false;
	return true;
}

/* Every DOUBLE and VECTOR element of the output recipe, finite. */
static int rtde_op_finite(struct rtl_transport *base, const struct rtl_loop_frame *f, char *why,
			  size_t len)
{
	struct rtl_rtde_transport *t = of(base);
	const struct rtl_rtde_recipe *r = rtl_rtde_client_output_recipe(t->client);

	for (uint32_t i = 0; i < r->n; i++) {
		const struct rtl_rtde_slot *s = &r->slots[i];
		unsigned count;

		if (s->type == RTL_RTDE_TYPE_DOUBLE)
			count = 1;
		else if (s->type == RTL_RTDE_TYPE_VECTOR3D)
			count = 3;
		else if (s->type == RTL_RTDE_TYPE_VECTOR6D)
			count = 6;
		else
			continue;
		for (unsigned k = 0; k < count; k++) {
			double v;

			if (s->host_offset + (k + 1) * sizeof(v) > f->size)
				break;
			memcpy(&v, f->values + s->host_offset + k * sizeof(v), sizeof(v));
			if (!isfinite(v)) {
				snprintf(why, len, "rtde: the controller sent %s[%u] = %g",
					 r->fields[i]->name, k, v);
				return -EDOM;
			}
		}
	}
	return 0;
}

static void rtde_op_disconnect(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);

	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	t->tx_off = t->tx_len = 0;
	t->pending = false;
}

static const char *rtde_op_error(struct rtl_transport *base)
{
	return of(base)->lost.msg;
}

static const struct rtl_transport_ops rtde_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "rtde",
	.connect = rtde_op_connect,
	.recv = rtde_op_recv,
	.next = rtde_op_next,
	.send = rtde_op_send,
	.send_safe = rtde_op_send_safe,
	.check = rtde_op_check,
	.at_rest = rtde_op_at_rest,
	.disconnect = rtde_op_disconnect,
	.error = rtde_op_error,
	.finite = rtde_op_finite,
};

/* ---- set-up ------------------------------------------------------------------------------- */

/* Whether the comma-separated @list names @name (blanks around names are
 * allowed, as the client allows them). */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		while (len && (*list == ' ' || *list == '\t'))
			list++, len--;
		while (len && (list[len - 1] == ' ' || list[len - 1] == '\t'))
			len--;
		if (len == n && memcmp(list, name, n) == 0)
			return true;
		list = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * @have with ",name" appended for @rest (NULL: none) and for each field of
 * the comma-separated @more (NULL: none) that it lacks, into a new string
 * at *@out (free it); *@out stays NULL when nothing is missing. Returns 0
 * or -ENOMEM.
 */
static int extend_outputs(const char *have, const char *rest, const char *more, char **out)
{
	size_t len =
		strlen(have) + 1 + (rest ? strlen(rest) + 1 : 0) + (more ? strlen(more) + 1 : 0);
	char *s = malloc(len), *copy = more ? strdup(more) : NULL, *save = NULL;
	bool added = false;

	*out = NULL;
	if (!s || (more && !copy)) {
		free(s);
		free(copy);
		return -ENOMEM;
	}
	strcpy(s, have);
	if (rest && !list_has(s, rest)) {
		strcat(s, ",");
		strcat(s, rest);
		added = true;
	}
	for (char *name = copy ? strtok_r(copy, ",", &save) : NULL; name;
	     name = strtok_r(NULL, ",", &save)) {
		size_t n;

		while (*name == ' ' || *name == '\t')
			name++;
		n = strlen(name);
		while (n && (name[n - 1] == ' ' || name[n - 1] == '\t'))
			name[--n] = '\0';
		if (n && !list_has(s, name)) {
			strcat(s, ",");
			strcat(s, name);
			added = true;
		}
	}
	free(copy);
	if (added)
		*out = s;
	else
		free(s);
	return 0;
}

static int transport_init(struct rtl_rtde_transport *t, const struct rtl_rtde_transport_config *cfg,
			  struct rtl_error *err)
{
	struct rtl_rtde_client_config cc;
	struct rtl_error terr = { 0 };
	char *outputs = NULL;
	bool safe_possible;
	int64_t wd;
	int ret;

	if (!t || !cfg)
		return rtl_error_set(err, -EINVAL, "RTDE transport: no configuration");
	memset(t, 0, offsetof(struct rtl_rtde_transport, tx));
	ret = rtl__sized_in(&t->cfg, sizeof(t->cfg), cfg, "struct rtl_rtde_transport_config", err);
	if (ret < 0)
		return ret;
	cfg = &t->cfg; /* the full-size copy from here on */
	if (!cfg->client)
		return rtl_error_set(err, -EINVAL,
				     "RTDE transport: no client configuration: set .client to a "
				     "struct rtl_rtde_client_config with its .size and .outputs");
	ret = rtl__sized_in(&cc, sizeof(cc), cfg->client, "struct rtl_rtde_client_config", err);
	if (ret < 0)
		return ret;
	t->cfg.client = NULL; /* the caller's; not kept */
	t->client_flags = cc.flags;
	if (cfg->n_limits > RTL_RTDE_TRANSPORT_MAX_LIMITS)
		return rtl_error_set(err, -EINVAL, "RTDE transport: too many limits");
	if (!(cfg->rest_speed >= 0))
		return rtl_error_set(err, -EINVAL,
				     "RTDE transport: rest_speed must be >= 0 (0: 0.001 rad/s)");
	if (cfg->hook) {
		/* A full-size copy: a shorter table's missing calls are NULL. */
		ret = rtl__sized_in(&t->hook, sizeof(t->hook), cfg->hook,
				    "struct rtl_rtde_transport_hook_ops", err);
		if (ret < 0)
			return ret;
		t->cfg.hook = &t->hook;
	}
	t->fd = -1;
	if (!t->cfg.host)
		t->cfg.host = "127.0.0.1";
	if (!t->cfg.port)
		t->cfg.port = RTL_RTDE_PORT;
	if (!t->cfg.rest_speed)
		t->cfg.rest_speed = DEFAULT_REST_SPEED;
	wd = t->cfg.controller_watchdog_ns > 0 ? t->cfg.controller_watchdog_ns
	     : t->cfg.controller_watchdog_ns < 0
		     ? 0
		     : (int64_t)RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS * RTL_NS_PER_MS;
	if (!t->cfg.keepalive_ns)
		t->cfg.keepalive_ns = wd / 4;
	snprintf(t->peer, sizeof(t->peer), "%s:%u", t->cfg.host, (unsigned)t->cfg.port);
	/* Once, here: a reconnect on the rx thread must not ask the resolver. */
	ret = rtl_tcp_resolve(&t->addr, t->cfg.host, t->cfg.port, &terr);
	if (ret < 0)
		return rtl_error_set(err, ret, "%s", terr.msg);
	/* The client's data time-out follows the loop's receive time-out
	 * unless set: the same length, but the client's error says what the
	 * controller did (stopped, or sent only packages it drops). */
	if (!cc.data_timeout_ns)
		cc.data_timeout_ns = cfg->rx_timeout_ns < 0 ? -1 : cfg->rx_timeout_ns;
	/* The stop at exit waits for actual_qd to fall to rest; a hook reads
	 * the fields it names. */
	safe_possible = cfg->safe != NULL;
	for (unsigned i = 0; i < RTL_RTDE_CLIENT_MAX_INPUTS && cc.inputs[i]; i++)
		safe_possible |= list_has(cc.inputs[i], RTL_RTDE_CMD_FIELD_MODE);
	if (cc.outputs && cc.outputs[0]) {
		ret = extend_outputs(cc.outputs, safe_possible ? REST_FIELD : NULL,
				     cfg->hook ? cfg->hook->outputs : NULL, &outputs);
		if (ret < 0)
			return rtl_error_set(err, ret, "RTDE transport: out of memory");
		if (outputs)
			cc.outputs = outputs;
	}
	numeric_host(t);
	/* Allocated here, never on the hot path or at a reconnect: connect
	 * only sets them up. rtl_rtde_transport_create() frees them if
	 * anything below fails. */
	if (rtl_rtde_coalesce_create(&t->coal, err) < 0 ||
	    rtl_rtde_coalesce_create(&t->safe, err) < 0) {
		free(outputs);
		return rtl_error_set(err, -ENOMEM, "RTDE transport: out of memory");
	}
	ret = rtl_rtde_client_create(&t->client, &cc, err);
	free(outputs); /* the client copied the names */
	if (ret < 0)
		return ret;
	t->base.size = sizeof(t->base);
	t->base.ops = &rtde_ops;
	t->base.impl = t;
	t->base.commands = t->coal;
	return 0;
}

RTL_API int rtl_rtde_transport_create(struct rtl_rtde_transport **out,
				      const struct rtl_rtde_transport_config *cfg,
				      struct rtl_error *err)
{
	struct rtl_rtde_transport *t;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "RTDE transport: nowhere to put it");
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return rtl_error_set(err, -ENOMEM, "RTDE transport: out of memory");
	ret = transport_init(t, cfg, err);
	if (ret < 0) {
		/* NULL unless transport_init() got as far as creating them. */
		rtl_rtde_coalesce_destroy(t->safe);
		rtl_rtde_coalesce_destroy(t->coal);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

RTL_API void rtl_rtde_transport_destroy(struct rtl_rtde_transport *t)
{
	if (!t)
		return;
	/* The session is over (the loop's stop at exit has brought the arm
	 * to rest before): e.g. io/ur's upload stops its program. */
	if (t->cfg.hook && t->cfg.hook->finish)
		t->cfg.hook->finish(t, t->cfg.hook_ctx);
	if (t->fd >= 0)
		close(t->fd);
	rtl_rtde_client_destroy(t->client);
	rtl_rtde_coalesce_destroy(t->safe);
	rtl_rtde_coalesce_destroy(t->coal);
	free(t);
}

RTL_API struct rtl_transport *rtl_rtde_transport_base(struct rtl_rtde_transport *t)
{
	return t ? &t->base : NULL;
}

RTL_API struct rtl_rtde_frame *rtl_rtde_loop_commands(struct rtl_loop *loop, unsigned i)
{
	struct rtl_transport *base = loop ? rtl_loop_transport(loop) : NULL;

	/* An RTDE transport's base is the first member of the struct its
	 * impl points to, and its table carries this file's name string
	 * (also when a caller wrapped some of its calls in a copy of it, as
	 * a test or a tracer may): no other transport has both. */
	if (!base || !base->ops || base->ops->name != rtde_ops.name ||
	    base->impl != (void *)((char *)base - offsetof(struct rtl_rtde_transport, base)))
		return NULL;
	return rtl_rtde_coalesce_frame(of(base)->coal, i);
}

RTL__DEFINE_COUNTERS(rtl_rtde_transport, RTL_RTDE_TRANSPORT_COUNTERS, c)

RTL_API struct rtl_rtde_client *rtl_rtde_transport_client(struct rtl_rtde_transport *t)
{
	return t ? t->client : NULL;
}

RTL_API const char *rtl_rtde_transport_host(const struct rtl_rtde_transport *t)
{
	return t ? t->cfg.host : NULL;
}

RTL_API const char *rtl_rtde_transport_address(const struct rtl_rtde_transport *t)
{
	return t ? t->host_ip : NULL;
}

RTL_API int rtl_rtde_transport_send_safe(struct rtl_rtde_transport *t, uint32_t *beat)
{
	if (!t)
		return -EINVAL;
	if (beat && t->safe_len && t->safe_beat < 0)
		return -ENOTSUP;
	return send_safe(t, beat);
}

RTL_API bool rtl_rtde_transport_has_safe_heartbeat(const struct rtl_rtde_transport *t)
{
	return t && t->safe_len && t->safe_beat >= 0;
}

/* Every data package the client holds decoded into @newest (the newest
 * wins); other events are the client's (it logs texts). Returns how many. */
static int take_data(struct rtl_rtde_transport *t, struct rtl_rtde_frame *newest)
{
	struct rtl_rtde_client_event ev;
	int n = 0;

	while (rtl_rtde_client_next(t->client, &ev, rtl_time_now()) == 1) {
		struct rtl_rtde_frame fr = { newest->values, 0, newest->cap };

		if (ev.type == RTL_RTDE_CLIENT_EV_DATA &&
		    rtl_rtde_client_decode(t->client, &fr, &ev) == 0) {
			newest->size = fr.size;
			n++;
		}
	}
	return n;
}

RTL_API int rtl_rtde_transport_receive(struct rtl_rtde_transport *t, struct rtl_rtde_frame *newest,
				       int64_t deadline, struct rtl_error *err)
{
	int got;

	if (!t || !newest || !newest->values)
		return rtl_error_set(err, -EINVAL,
				     "RTDE transport: receive: no transport or frame");
	if (t->fd < 0)
		return rtl_error_set(err, -ENOTCONN, "RTDE transport: receive: not connected");
	/* What the handshake's last read left comes first: it lives in t->rx,
	 * which the next recv() overwrites; then rtde_op_recv() has none to hand
	 * over. */
	t->pending = false;
	got = take_data(t, newest);
	while (!got) {
		int64_t left = deadline - rtl_time_now();
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
		ssize_t n;
		int r, fed;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)((left + RTL_NS_PER_MS - 1) / RTL_NS_PER_MS));
		if (r < 0 && errno != EINTR)
			return rtl_error_set(err, -errno, "RTDE transport: receive: poll: %s",
					     strerror(errno));
		if (r <= 0)
			continue;
		n = recv(t->fd, t->rx, sizeof(t->rx), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			continue;
		if (n <= 0)
			return rtl_error_set(err, n < 0 ? -errno : -ECONNRESET,
					     "the controller closed the RTDE connection%s%s",
					     n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		rtl_stat_add(&t->c.rx_bytes, (uint64_t)n);
		fed = rtl_rtde_client_feed(t->client, t->rx, (size_t)n);
		if (fed < 0)
			/* The client failed (its last error says why). */
			return rtl_error_set(err, fed, "the RTDE stream failed: %s",
					     rtl_rtde_client_last_error(t->client)->err.msg);
		got = take_data(t, newest);
	}
	return got;
}

RTL_API struct rtl_rtde_handle rtl_rtde_transport_output_handle(struct rtl_rtde_transport *t,
								const char *name)
{
	/* The invalid handle, until found. */
	struct rtl_rtde_handle h = rtl_rtde_recipe_handle_at(NULL, 0);

	if (t && t->client)
		rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(t->client), &h, name);
	return h;
}

RTL_API struct rtl_rtde_handle rtl_rtde_transport_input_handle(struct rtl_rtde_transport *t,
							       unsigned i, const char *name)
{
	/* The invalid handle, until found. */
	struct rtl_rtde_handle h = rtl_rtde_recipe_handle_at(NULL, 0);
	const struct rtl_rtde_recipe *r;

	if (t && t->client) {
		r = rtl_rtde_client_input_recipe(t->client, i);
		if (r)
			rtl_rtde_recipe_handle(r, &h, name);
	}
	return h;
}
