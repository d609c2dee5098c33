// SPDX-License-Identifier: MIT
/*
 * RTDE as a loop transport: see <rtloop/rtde_transport.h> for the design.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/rtde_transport.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#define DEFAULT_TIMEOUT_NS (3 * RTL_NS_PER_SEC)

static struct rtl_rtde_transport *of(struct rtl_transport *base)
{
	return base->impl;
}

/* ---- connect: the handshake, driven to RUNNING ---------------------------------------- */

static bool settled(enum rtl_rtde_client_state s, bool no_start)
{
	return s == RTL_RTDE_CLIENT_RUNNING || (no_start && s == RTL_RTDE_CLIENT_READY);
}

/* Drain every event of the bytes fed so far (the framer points into t->rx
 * until next() returns 0). Returns 0, or a fatal error's code with @err
 * filled. */
static int drain(struct rtl_rtde_client *c, struct rtl_rt_error *err)
{
	struct rtl_rtde_client_event ev;

	while (rtl_rtde_client_next(c, rtl_time_now(), &ev) == 1)
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal)
			return rtl_rt_error_set(err, ev.u.error->code, "%s", ev.u.error->message);
	return 0;
}

/* Run the client on the socket until it streams (or fails). */
static int handshake(struct rtl_rtde_transport *t, int64_t deadline, struct rtl_rt_error *err)
{
	struct rtl_rtde_client *c = t->client;
	bool no_start = t->cfg.client.flags & RTL_RTDE_CLIENT_NO_START;
	const uint8_t *out;
	size_t n;
	ssize_t got;
	int ret;

	rtl_rtde_client_connected(c, rtl_time_now());
	for (;;) {
		while ((n = rtl_rtde_client_tx(c, &out)) > 0) {
			ret = rtl_tcp_send_all(t->fd, out, n, deadline);
			if (ret < 0)
				return rtl_rt_error_set(err, ret,
							"RTDE: sending a setup request failed");
			rtl_rtde_client_tx_done(c, n);
		}
		ret = drain(c, err);
		if (ret)
			return ret;
		if (settled(rtl_rtde_client_state(c), no_start))
			return 0;
		if (rtl_time_now() >= deadline)
			return rtl_rt_error_set(
				err, -ETIMEDOUT,
				"RTDE: the handshake did not finish in time; is this an RTDE "
				"controller (port 30004)?");
		if (rtl_rtde_client_tx(c, &out) > 0)
			continue;
		got = rtl_tcp_recv(t->fd, t->rx, sizeof(t->rx), deadline);
		if (got == -ETIMEDOUT)
			continue; /* the deadline check above reports it */
		if (got <= 0) {
			rtl_rtde_client_closed(c, rtl_time_now(), got < 0 ? (int)got : 0);
			ret = drain(c, err);
			if (ret)
				return ret;
			return rtl_rt_error_set(
				err, -ECONNRESET,
				"RTDE: the controller closed the connection during set-up");
		}
		t->rx_bytes += (size_t)got;
		rtl_rtde_client_feed(c, t->rx, (size_t)got);
	}
}

/* Input recipes into the coalescer: first time set up, later re-keyed. */
static int setup_coalescer(struct rtl_rtde_transport *t, struct rtl_rt_error *err)
{
	const struct rtl_rtde_client_info *info = rtl_rtde_client_info(t->client);
	const struct rtl_rtde_recipe *recipes[RTL_RTDE_CLIENT_MAX_INPUTS];
	int ret;

	if (info->n_inputs == 0)
		return 0;
	if (t->coal_ready) {
		for (unsigned i = 0; i < info->n_inputs; i++) {
			ret = rtl_rtde_coalesce_set_id(&t->coal, i, info->input_ids[i]);
			if (ret < 0)
				return rtl_rt_error_set(err, ret,
							"RTDE: input recipe ids changed badly");
		}
		/* The controller kept the old values, or another client changed
		 * them: send everything again. */
		return rtl_rtde_coalesce_force(&t->coal);
	}
	for (unsigned i = 0; i < info->n_inputs; i++)
		recipes[i] = rtl_rtde_client_input_recipe(t->client, i);
	ret = rtl_rtde_coalesce_init(&t->coal, recipes, info->input_ids, info->n_inputs);
	if (ret < 0)
		return rtl_rt_error_set(err, ret,
					"RTDE: an input recipe is too large for the coalescer");
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
static int resolve_checks(struct rtl_rtde_transport *t, struct rtl_rt_error *err)
{
	const struct rtl_rtde_client_info *info = rtl_rtde_client_info(t->client);

	t->n_finite = t->n_limits = 0;
	for (unsigned i = 0; i < info->n_inputs; i++) {
		const struct rtl_rtde_recipe *r = rtl_rtde_client_input_recipe(t->client, i);
		const unsigned char *values = rtl_rtde_coalesce_frame(&t->coal, i)->values;

		/* No overflow: the coalescer took at most MAX_RECIPES recipes of
		 * at most MAX_BYTES each, and every double takes 8 of them. */
		for (uint32_t k = 0; k < r->n; k++) {
			const struct rtl_rtde_slot *s = &r->slots[k];

			if (s->type != RTL_RTDE_TYPE_DOUBLE && s->type != RTL_RTDE_TYPE_VECTOR3D &&
			    s->type != RTL_RTDE_TYPE_VECTOR6D)
				continue;
			t->finite[t->n_finite++] = (struct rtl_rtde_transport_finite){
				.at = values + s->host_offset,
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
		       rtl_rtde_recipe_handle(rtl_rtde_client_input_recipe(t->client, i), field,
					      &h) != 0)
			i++;
		if (i == info->n_inputs)
			return rtl_rt_error_set(err, -ENOENT,
						"RTDE: limit on '%s', which no input recipe "
						"contains; fix: add it to an input recipe or drop "
						"the limit",
						field);
		t->limits[t->n_limits++] = (struct rtl_rtde_transport_bound){
			.at = rtl_rtde_coalesce_frame(&t->coal, i)->values + h.offset,
			.elems = (uint8_t)rtl_rtde_type_elems((enum rtl_rtde_type)h.type),
		};
	}
	return 0;
}

static int op_connect(struct rtl_transport *base, struct rtl_rt_error *err)
{
	struct rtl_rtde_transport *t = of(base);
	int64_t timeout =
		t->cfg.connect_timeout_ns ? t->cfg.connect_timeout_ns : DEFAULT_TIMEOUT_NS;
	int64_t deadline = rtl_time_now() + timeout;
	struct rtl_tcp_error terr = { 0 };
	int ret;

	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	t->fd = rtl_tcp_connect(t->cfg.host, t->cfg.port, timeout, &terr);
	if (t->fd < 0) {
		ret = t->fd;
		t->fd = -1;
		return rtl_rt_error_set(err, ret, "%s", terr.message);
	}
	ret = handshake(t, deadline, err);
	if (ret < 0)
		goto err_close;
	ret = setup_coalescer(t, err);
	if (ret < 0)
		goto err_close;
	ret = resolve_checks(t, err);
	if (ret < 0)
		goto err_close;
	t->tx_off = t->tx_len = 0;
	base->values_size = rtl_rtde_client_output_recipe(t->client)->host_size;
	base->period_ns = rtl_rtde_client_info(t->client)->period_ns;
	if (t->cfg.connected)
		t->cfg.connected(t, t->cfg.user);
	return 0;

err_close:
	close(t->fd);
	t->fd = -1;
	return ret;
}

/* ---- rx thread ------------------------------------------------------------------------------ */

static int op_recv(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);
	ssize_t n;

	do {
		n = recv(t->fd, t->rx, sizeof(t->rx), 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0) {
		rtl_rtde_client_closed(t->client, rtl_time_now(), 0);
		return 0;
	}
	t->rx_bytes += (size_t)n;
	rtl_rtde_client_feed(t->client, t->rx, (size_t)n);
	return (int)n;
}

static int op_next(struct rtl_transport *base, struct rtl_loop_frame *f, size_t cap)
{
	struct rtl_rtde_transport *t = of(base);
	struct rtl_rtde_client_event ev;

	/* f->rx_ns: when recv() returned these bytes (no clock read here). */
	while (rtl_rtde_client_next(t->client, f->rx_ns, &ev) == 1) {
		switch (ev.type) {
		case RTL_RTDE_CLIENT_EV_DATA: {
			struct rtl_rtde_frame fr = { f->values, 0, (uint32_t)cap };

			if (rtl_rtde_client_decode(t->client, &ev, &fr) < 0)
				continue;
			f->size = fr.size;
			f->ctrl_time = ev.u.data.has_timestamp ? ev.u.data.timestamp : NAN;
			f->ctrl_skipped = (uint32_t)ev.u.data.skipped;
			f->kernel_rx_ns = 0;
			return 1;
		}
		case RTL_RTDE_CLIENT_EV_ERROR:
			if (ev.u.error->fatal)
				return ev.u.error->code < 0 ? ev.u.error->code : -EPROTO;
			continue;
		case RTL_RTDE_CLIENT_EV_STATE:
			if (ev.u.state.to == RTL_RTDE_CLIENT_FAILED ||
			    ev.u.state.to == RTL_RTDE_CLIENT_CLOSED)
				return -ECONNRESET;
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
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		t->tx_off += (size_t)n;
		t->tx_bytes += (size_t)n;
	}
	t->tx_off = t->tx_len = 0;
	return 0;
}

static int op_send(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);
	ssize_t n;
	int len, ret;

	if (!t->coal_ready)
		return 0;
	ret = flush(t);
	if (ret < 0)
		return ret;
	len = rtl_rtde_coalesce_encode(&t->coal, t->tx, sizeof(t->tx));
	if (len <= 0)
		return len;
	do {
		n = send(t->fd, t->tx, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* Nothing left: nothing is committed, the newest values go
		 * next time. */
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
	t->tx_bytes += (size_t)n;
	if (n < len) {
		/* Part of a package left: it must follow before anything
		 * else, or the stream breaks. It is in flight: commit. */
		t->tx_off = (size_t)n;
		t->tx_len = (size_t)len;
		t->backlogged++;
	}
	rtl_rtde_coalesce_commit(&t->coal);
	return len;
}

static int op_send_safe(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);

	if (!t->cfg.safe || !t->coal_ready)
		return -ENOTSUP;
	t->cfg.safe(t, &t->coal, t->cfg.user);
	rtl_rtde_coalesce_force(&t->coal);
	return op_send(base);
}

static double load_double(const unsigned char *p)
{
	double v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int op_check(struct rtl_transport *base, char *why, size_t len)
{
	struct rtl_rtde_transport *t = of(base);

	for (unsigned k = 0; k < t->n_finite; k++) {
		const struct rtl_rtde_transport_finite *c = &t->finite[k];

		for (unsigned e = 0; e < c->elems; e++) {
			double v = load_double(c->at + e * sizeof(double));
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

		for (unsigned e = 0; e < t->limits[l].elems; e++) {
			double v = load_double(t->limits[l].at + e * sizeof(double));

			if (v < lim->min || v > lim->max) {
				snprintf(why, len, "input '%s'[%u] = %g is outside [%g, %g]",
					 lim->field, e, v, lim->min, lim->max);
				return -EDOM;
			}
		}
	}
	return 0;
}

static void op_shutdown(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);

	if (t->fd >= 0)
		shutdown(t->fd, SHUT_RDWR);
}

static void op_disconnect(struct rtl_transport *base)
{
	struct rtl_rtde_transport *t = of(base);

	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	t->tx_off = t->tx_len = 0;
}

static const struct rtl_transport_ops rtde_ops = {
	.name = "rtde",
	.connect = op_connect,
	.recv = op_recv,
	.next = op_next,
	.send = op_send,
	.send_safe = op_send_safe,
	.check = op_check,
	.shutdown = op_shutdown,
	.disconnect = op_disconnect,
};

/* ---- set-up ------------------------------------------------------------------------------- */

RTL_API int rtl_rtde_transport_init(struct rtl_rtde_transport *t,
				    const struct rtl_rtde_transport_config *cfg,
				    struct rtl_rt_error *err)
{
	struct rtl_rtde_client_error cerr = { 0 };

	if (!t || !cfg)
		return rtl_rt_error_set(err, -EINVAL, "RTDE transport: no configuration");
	if (cfg->n_limits > RTL_RTDE_TRANSPORT_MAX_LIMITS)
		return rtl_rt_error_set(err, -EINVAL, "RTDE transport: too many limits");
	memset(t, 0, offsetof(struct rtl_rtde_transport, tx));
	t->cfg = *cfg;
	if (!t->cfg.host)
		t->cfg.host = "127.0.0.1";
	if (!t->cfg.port)
		t->cfg.port = RTL_RTDE_PORT;
	t->fd = -1;
	t->client = rtl_rtde_client_create(&cfg->client, &cerr);
	if (!t->client)
		return rtl_rt_error_set(err, cerr.code ? cerr.code : -ENOMEM, "%s", cerr.message);
	t->base.ops = &rtde_ops;
	t->base.impl = t;
	t->base.commands = &t->coal;
	return 0;
}

RTL_API void rtl_rtde_transport_fini(struct rtl_rtde_transport *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	rtl_rtde_client_destroy(t->client);
	t->client = NULL;
}

RTL_API struct rtl_rtde_client *rtl_rtde_transport_client(struct rtl_rtde_transport *t)
{
	return t ? t->client : NULL;
}

RTL_API struct rtl_rtde_handle rtl_rtde_transport_output_handle(struct rtl_rtde_transport *t,
								const char *name)
{
	/* The invalid handle, until found. */
	struct rtl_rtde_handle h = rtl_rtde_recipe_handle_at(NULL, 0);

	if (t && t->client)
		rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(t->client), name, &h);
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
			rtl_rtde_recipe_handle(r, name, &h);
	}
	return h;
}
