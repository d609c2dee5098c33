// SPDX-License-Identifier: MIT
/*
 * UR primary/secondary interface: codec and client (design in
 * ur_primary.h, wire format in docs/ur-primary.md).
 *
 * Reads go through a cursor (struct rd) that knows how many bytes are left
 * and fails instead of reading past them, so a decoder is a list of reads
 * and one check at the end; the only lengths read from the wire that are
 * used at all (message, sub-package, string) are compared with what is left
 * before anything is copied. The client is a receive buffer of one maximal
 * message plus a bounded ring of robot messages, driven by poll().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/sized.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>
#include <rtloop/ur_primary.h>

/* ---- big-endian cursor --------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static const uint8_t *take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || r->left < n) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t rd_be(struct rd *r, size_t n)
{
	const uint8_t *p = take(r, n);
	uint64_t v = 0;

	if (!p)
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint8_t rd_u8(struct rd *r)
{
	return (uint8_t)rd_be(r, 1);
}

static int32_t rd_i32(struct rd *r)
{
	return (int32_t)(uint32_t)rd_be(r, 4);
}

static double rd_f64(struct rd *r)
{
	uint64_t u = rd_be(r, 8);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Copy @n wire bytes into a C string of @cap bytes; sets *cut when cut. */
static void rd_str(struct rd *r, size_t n, char *dst, size_t cap, bool *cut)
{
	const uint8_t *p = take(r, n);
	size_t k;

	dst[0] = '\0';
	if (!p)
		return;
	k = n < cap - 1 ? n : cap - 1;
	memcpy(dst, p, k);
	dst[k] = '\0';
	if (k < n)
		*cut = true;
}

struct wr {
	uint8_t *p;
	size_t at;
};

static void wr_be(struct wr *w, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w->p[w->at + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	w->at += n;
}

static void wr_f64(struct wr *w, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	wr_be(w, u, 8);
}

static void wr_bytes(struct wr *w, const void *s, size_t n)
{
	if (n)
		memcpy(w->p + w->at, s, n);
	w->at += n;
}

/* GNU strerror_r: thread-safe, returns the text (maybe static). */
static const char *errtext(int code, char *buf, size_t cap)
{
	return strerror_r(-code, buf, cap);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- framing -------------------------------------------------------------- */

RTL_API int rtl_ur_frame(size_t *msg_len, const uint8_t *buf, size_t len)
{
	uint32_t n;

	if (len < 4)
		return 0;
	n = be32(buf);
	/* Read as unsigned: a negative int32 is a length above the bound. */
	if (n < RTL_UR_HEADER)
		return -EBADMSG;
	if (n > RTL_UR_MAX_MESSAGE)
		return -EMSGSIZE;
	if (len < n)
		return 0;
	if (msg_len)
		*msg_len = n;
	return 1;
}

RTL_API int rtl_ur_msg_type(const uint8_t *msg, size_t len)
{
	if (!msg || len < RTL_UR_HEADER || be32(msg) != len)
		return -EBADMSG;
	return msg[4];
}

RTL_API int rtl_ur_state_next(size_t *off, const uint8_t **sub, size_t *sub_len, uint8_t *type,
			      const uint8_t *msg, size_t len)
{
	size_t at;
	uint32_t n;

	if (rtl_ur_msg_type(msg, len) != RTL_UR_MSG_ROBOT_STATE || !off)
		return -EBADMSG;
	at = *off < RTL_UR_HEADER ? RTL_UR_HEADER : *off;
	if (at >= len)
		return 0;
	if (len - at < RTL_UR_HEADER)
		return -EBADMSG;
	n = be32(msg + at);
	if (n < RTL_UR_HEADER || n > len - at)
		return -EBADMSG;
	if (sub)
		*sub = msg + at;
	if (sub_len)
		*sub_len = n;
	if (type)
		*type = msg[at + 4];
	*off = at + n;
	return 1;
}

RTL_API int rtl_ur_robot_msg_type(const uint8_t *msg, size_t len)
{
	if (rtl_ur_msg_type(msg, len) != RTL_UR_MSG_ROBOT_MESSAGE || len < RTL_UR_MSG_HEADER)
		return -EBADMSG;
	return msg[RTL_UR_MSG_HEADER - 1];
}

/* ---- robot mode data ------------------------------------------------------ */

RTL_API int rtl_ur_robot_mode_size(uint8_t major, uint8_t minor)
{
	if (major < 3)
		return -EPROTONOSUPPORT;
	if (major == 3 && minor < 2)
		return 38;
	if (major == 3 && minor < 5)
		return 46;
	return 47;
}

RTL_API int rtl_ur_decode_robot_mode(struct rtl_ur_robot_mode_data *out, const uint8_t *sub,
				     size_t len, uint8_t major, uint8_t minor)
{
	int size = rtl_ur_robot_mode_size(major, minor);
	struct rd r;

	if (size < 0)
		return size;
	if (!sub || !out)
		return -EINVAL;
	if (len < (size_t)size || be32(sub) != len || sub[4] != RTL_UR_STATE_ROBOT_MODE)
		return -EBADMSG;
	r = (struct rd){ .p = sub + RTL_UR_HEADER, .left = len - RTL_UR_HEADER };
	memset(out, 0, sizeof(*out));
	out->timestamp = rd_be(&r, 8);
	out->real_robot_connected = rd_u8(&r);
	out->real_robot_enabled = rd_u8(&r);
	out->power_on = rd_u8(&r);
	out->emergency_stopped = rd_u8(&r);
	out->protective_stopped = rd_u8(&r);
	out->program_running = rd_u8(&r);
	out->program_paused = rd_u8(&r);
	out->robot_mode = (int8_t)rd_u8(&r);
	out->control_mode = rd_u8(&r);
	out->target_speed_fraction = rd_f64(&r);
	out->speed_scaling = rd_f64(&r);
	if (size >= 46)
		out->target_speed_fraction_limit = rd_f64(&r);
	if (size >= 47)
		out->reserved = rd_u8(&r);
	return r.bad ? -EBADMSG : 0;
}

RTL_API int rtl_ur_encode_robot_state(uint8_t *buf, size_t cap, uint8_t major, uint8_t minor,
				      const struct rtl_ur_robot_mode_data *m)
{
	int size = rtl_ur_robot_mode_size(major, minor);
	size_t total;
	struct wr w = { buf, 0 };

	if (!buf || !m || size < 0)
		return -EINVAL;
	total = RTL_UR_HEADER + (size_t)size;
	if (cap < total)
		return -ENOBUFS;
	wr_be(&w, total, 4);
	wr_be(&w, RTL_UR_MSG_ROBOT_STATE, 1);
	wr_be(&w, (uint64_t)size, 4);
	wr_be(&w, RTL_UR_STATE_ROBOT_MODE, 1);
	wr_be(&w, m->timestamp, 8);
	wr_be(&w, m->real_robot_connected, 1);
	wr_be(&w, m->real_robot_enabled, 1);
	wr_be(&w, m->power_on, 1);
	wr_be(&w, m->emergency_stopped, 1);
	wr_be(&w, m->protective_stopped, 1);
	wr_be(&w, m->program_running, 1);
	wr_be(&w, m->program_paused, 1);
	wr_be(&w, (uint8_t)m->robot_mode, 1);
	wr_be(&w, m->control_mode, 1);
	wr_f64(&w, m->target_speed_fraction);
	wr_f64(&w, m->speed_scaling);
	if (size >= 46)
		wr_f64(&w, m->target_speed_fraction_limit);
	if (size >= 47)
		wr_be(&w, m->reserved, 1);
	return (int)w.at;
}

/* ---- robot messages ------------------------------------------------------- */

/* The start of both decoders: @out (@size bytes) zeroed and robot message
 * @msg opened: its type returned, its timestamp and source read into *@ts
 * and *@src (members of @out) and @r on the body. -EINVAL when @msg is
 * NULL (the caller checks @out, as it takes its members' addresses),
 * -EBADMSG when the type is not @want (-1: any type). */
static int open_rmsg(void *out, size_t size, uint64_t *ts, int8_t *src, const uint8_t *msg,
		     size_t len, struct rd *r, int want)
{
	int t;

	if (!msg)
		return -EINVAL;
	memset(out, 0, size);
	t = rtl_ur_robot_msg_type(msg, len);
	if (t < 0)
		return t;
	*r = (struct rd){ .p = msg + RTL_UR_HEADER, .left = len - RTL_UR_HEADER };
	*ts = rd_be(r, 8);
	*src = (int8_t)rd_u8(r);
	rd_u8(r);
	return want >= 0 && t != want ? -EBADMSG : t;
}

RTL_API int rtl_ur_decode_version(struct rtl_ur_version_msg *out, const uint8_t *msg, size_t len)
{
	struct rd r;
	size_t n;
	int t = out ? open_rmsg(out, sizeof(*out), &out->timestamp, &out->source, msg, len, &r,
				RTL_UR_RMSG_VERSION)
		    : -EINVAL;

	if (t < 0)
		return t;
	/* int8 on the wire; a negative length is an overrun like any other. */
	n = rd_u8(&r);
	if (n > 127 || n > r.left)
		return -EBADMSG;
	rd_str(&r, n, out->project, sizeof(out->project), &out->cut);
	out->major = rd_u8(&r);
	out->minor = rd_u8(&r);
	out->bugfix = rd_i32(&r);
	out->build = rd_i32(&r);
	if (r.bad)
		return -EBADMSG;
	rd_str(&r, r.left, out->build_date, sizeof(out->build_date), &out->cut);
	return 0;
}

RTL_API int rtl_ur_decode_robot_msg(struct rtl_ur_robot_msg *out, const uint8_t *msg, size_t len)
{
	struct rd r;
	size_t n;
	int t = out ? open_rmsg(out, sizeof(*out), &out->timestamp, &out->source, msg, len, &r, -1)
		    : -EINVAL;

	if (t < 0)
		return t;
	out->type = (uint8_t)t;
	switch (t) {
	case RTL_UR_RMSG_TEXT:
		break;
	case RTL_UR_RMSG_ERROR_CODE:
		out->code = rd_i32(&r);
		out->argument = rd_i32(&r);
		out->report_level = rd_i32(&r);
		out->data_type = rd_u8(&r);
		out->data = (uint32_t)rd_be(&r, 4);
		break;
	case RTL_UR_RMSG_KEY:
		out->code = rd_i32(&r);
		out->argument = rd_i32(&r);
		n = rd_u8(&r);
		if (r.bad || n > r.left)
			return -EBADMSG;
		rd_str(&r, n, out->title, sizeof(out->title), &out->cut);
		break;
	case RTL_UR_RMSG_RUNTIME_EXCEPTION:
		out->line = rd_i32(&r);
		out->column = rd_i32(&r);
		break;
	default:
		return -ENOMSG;
	}
	if (r.bad)
		return -EBADMSG;
	rd_str(&r, r.left, out->text, sizeof(out->text), &out->cut);
	return 0;
}

/* Write the header of a robot message of @total bytes. */
static void wr_rmsg_head(struct wr *w, size_t total, uint64_t ts, int8_t src, uint8_t type)
{
	wr_be(w, total, 4);
	wr_be(w, RTL_UR_MSG_ROBOT_MESSAGE, 1);
	wr_be(w, ts, 8);
	wr_be(w, (uint8_t)src, 1);
	wr_be(w, type, 1);
}

RTL_API int rtl_ur_encode_version(uint8_t *buf, size_t cap, const struct rtl_ur_version_msg *v)
{
	size_t pn, dn, total;
	struct wr w = { buf, 0 };

	if (!buf || !v)
		return -EINVAL;
	pn = strnlen(v->project, sizeof(v->project));
	dn = strnlen(v->build_date, sizeof(v->build_date));
	if (pn > 127)
		return -EINVAL;
	total = RTL_UR_MSG_HEADER + 1 + pn + 2 + 8 + dn;
	if (cap < total)
		return -ENOBUFS;
	wr_rmsg_head(&w, total, v->timestamp, v->source, RTL_UR_RMSG_VERSION);
	wr_be(&w, pn, 1);
	wr_bytes(&w, v->project, pn);
	wr_be(&w, v->major, 1);
	wr_be(&w, v->minor, 1);
	wr_be(&w, (uint32_t)v->bugfix, 4);
	wr_be(&w, (uint32_t)v->build, 4);
	wr_bytes(&w, v->build_date, dn);
	return (int)w.at;
}

RTL_API int rtl_ur_encode_robot_msg(uint8_t *buf, size_t cap, const struct rtl_ur_robot_msg *m)
{
	size_t tn, body, total;
	size_t ttl = 0;
	struct wr w = { buf, 0 };

	if (!buf || !m)
		return -EINVAL;
	tn = strnlen(m->text, sizeof(m->text));
	switch (m->type) {
	case RTL_UR_RMSG_TEXT:
		body = 0;
		break;
	case RTL_UR_RMSG_ERROR_CODE:
		body = 4 + 4 + 4 + 1 + 4;
		break;
	case RTL_UR_RMSG_KEY:
		ttl = strnlen(m->title, sizeof(m->title));
		body = 4 + 4 + 1 + ttl;
		break;
	case RTL_UR_RMSG_RUNTIME_EXCEPTION:
		body = 4 + 4;
		break;
	default:
		return -EINVAL;
	}
	total = RTL_UR_MSG_HEADER + body + tn;
	if (total > RTL_UR_MAX_MESSAGE)
		return -EMSGSIZE;
	if (cap < total)
		return -ENOBUFS;
	wr_rmsg_head(&w, total, m->timestamp, m->source, m->type);
	switch (m->type) {
	case RTL_UR_RMSG_ERROR_CODE:
		wr_be(&w, (uint32_t)m->code, 4);
		wr_be(&w, (uint32_t)m->argument, 4);
		wr_be(&w, (uint32_t)m->report_level, 4);
		wr_be(&w, m->data_type, 1);
		wr_be(&w, m->data, 4);
		break;
	case RTL_UR_RMSG_KEY:
		wr_be(&w, (uint32_t)m->code, 4);
		wr_be(&w, (uint32_t)m->argument, 4);
		wr_be(&w, ttl, 1);
		wr_bytes(&w, m->title, ttl);
		break;
	case RTL_UR_RMSG_RUNTIME_EXCEPTION:
		wr_be(&w, (uint32_t)m->line, 4);
		wr_be(&w, (uint32_t)m->column, 4);
		break;
	default:
		break;
	}
	wr_bytes(&w, m->text, tn);
	return (int)w.at;
}

/* ---- client --------------------------------------------------------------- */

struct rtl_ur_primary {
	int fd;
	char host[128];
	uint16_t port;
	bool have_version;
	bool have_mode;
	struct rtl_ur_version_msg version;
	struct rtl_ur_robot_mode_data mode;
	struct {
		RTL_UR_PRIMARY_COUNTERS(RTL_STAT_U64)
	} stats;
	/* Runtime exceptions seen, and the latest: run_script() watches these. */
	uint64_t rtx_seen;
	struct rtl_ur_robot_msg rtx;
	/* The queue: free-running indices, RTL_UR_QUEUE a power of two. */
	unsigned q_head, q_tail;
	struct rtl_ur_robot_msg q[RTL_UR_QUEUE];
	size_t fill;
	uint8_t buf[RTL_UR_MAX_MESSAGE];
};

_Static_assert((RTL_UR_QUEUE & (RTL_UR_QUEUE - 1)) == 0, "queue size a power of two");

static void push(struct rtl_ur_primary *c, const struct rtl_ur_robot_msg *m)
{
	if (c->q_tail - c->q_head == RTL_UR_QUEUE) {
		c->q_head++;
		c->stats.queue_dropped++;
	}
	c->q[c->q_tail++ % RTL_UR_QUEUE] = *m;
	c->stats.robot_msgs++;
}

static void on_state(struct rtl_ur_primary *c, const uint8_t *msg, size_t len)
{
	const uint8_t *sub;
	size_t off = 0, sl;
	uint8_t type;
	int r;

	c->stats.robot_states++;
	/* Check the whole package first: an overrun anywhere drops it all, so
	 * that no field of a package with a lying length is believed. */
	while ((r = rtl_ur_state_next(&off, &sub, &sl, &type, msg, len)) == 1)
		;
	if (r < 0) {
		c->stats.sub_overrun++;
		return;
	}
	off = 0;
	while (rtl_ur_state_next(&off, &sub, &sl, &type, msg, len) == 1) {
		struct rtl_ur_robot_mode_data m;

		if (type != RTL_UR_STATE_ROBOT_MODE || !c->have_version) {
			c->stats.unknown_sub++;
			continue;
		}
		if (rtl_ur_decode_robot_mode(&m, sub, sl, c->version.major, c->version.minor) < 0) {
			c->stats.bad_robot_mode++;
			continue;
		}
		c->mode = m;
		c->have_mode = true;
		c->stats.robot_modes++;
	}
}

static void on_robot_msg(struct rtl_ur_primary *c, const uint8_t *msg, size_t len)
{
	struct rtl_ur_robot_msg m;
	int t = rtl_ur_robot_msg_type(msg, len), r;

	if (t < 0) {
		c->stats.bad_robot_msg++;
		return;
	}
	if (t == RTL_UR_RMSG_VERSION) {
		struct rtl_ur_version_msg v;

		if (rtl_ur_decode_version(&v, msg, len) < 0) {
			c->stats.bad_version++;
			return;
		}
		if (v.cut)
			c->stats.cut_strings++;
		c->version = v;
		c->have_version = true;
		return;
	}
	r = rtl_ur_decode_robot_msg(&m, msg, len);
	if (r == -ENOMSG) {
		c->stats.unknown_robot_msg++;
		return;
	}
	if (r < 0) {
		c->stats.bad_robot_msg++;
		return;
	}
	if (m.cut)
		c->stats.cut_strings++;
	if (m.type == RTL_UR_RMSG_RUNTIME_EXCEPTION) {
		c->rtx = m;
		c->rtx_seen++;
	}
	push(c, &m);
}

static void dispatch(struct rtl_ur_primary *c, const uint8_t *msg, size_t len)
{
	c->stats.messages++;
	switch (msg[4]) {
	case RTL_UR_MSG_ROBOT_STATE:
		on_state(c, msg, len);
		break;
	case RTL_UR_MSG_ROBOT_MESSAGE:
		on_robot_msg(c, msg, len);
		break;
	default:
		c->stats.unknown_type++;
		break;
	}
}

/* Process the complete messages in the buffer; returns how many, or the
 * framing error. */
static int drain(struct rtl_ur_primary *c, struct rtl_error *err)
{
	size_t at = 0, n;
	int count = 0, r;

	while ((r = rtl_ur_frame(&n, c->buf + at, c->fill - at)) == 1) {
		dispatch(c, c->buf + at, n);
		at += n;
		count++;
	}
	if (at) {
		memmove(c->buf, c->buf + at, c->fill - at);
		c->fill -= at;
	}
	if (r == -EBADMSG) {
		c->stats.bad_length++;
		return rtl_error_set(err, r,
				     "%s:%u: a message declares %u bytes, less than its 5-byte "
				     "header: this is not a UR primary/secondary interface (check "
				     "the port: 30001 primary, 30002 secondary)",
				     c->host, c->port, be32(c->buf));
	}
	if (r == -EMSGSIZE) {
		c->stats.too_long++;
		return rtl_error_set(err, r,
				     "%s:%u: a message declares %u bytes, above the %u accepted: "
				     "the stream is not the UR primary/secondary interface or it "
				     "lost its framing; check the port and reconnect",
				     c->host, c->port, be32(c->buf), RTL_UR_MAX_MESSAGE);
	}
	return count;
}

RTL_API int rtl_ur_primary_poll(struct rtl_ur_primary *c, int64_t timeout_ns, struct rtl_error *err)
{
	int64_t deadline = rtl_time_now() + (timeout_ns > 0 ? timeout_ns : 0);

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!c)
		return rtl_error_set(err, -EINVAL, "ur primary: no client");
	for (;;) {
		ssize_t n =
			rtl_tcp_recv(c->fd, c->buf + c->fill, sizeof(c->buf) - c->fill, deadline);
		char eb[128];
		int r;

		if (n == -ETIMEDOUT)
			return 0;
		if (n < 0)
			return rtl_error_set(err, (int)n, "%s:%u: receive failed: %s; reconnect",
					     c->host, c->port, errtext((int)n, eb, sizeof(eb)));
		if (n == 0) {
			if (c->fill)
				return rtl_error_set(
					err, -ECONNRESET,
					"%s:%u: the controller closed the connection "
					"in the middle of a message (%zu bytes of it "
					"received): reconnect; if it repeats, check the "
					"controller's log",
					c->host, c->port, c->fill);
			return rtl_error_set(err, -ECONNRESET,
					     "%s:%u: the controller closed the connection: "
					     "reconnect (a controller restarting or another client "
					     "taking over closes it)",
					     c->host, c->port);
		}
		c->fill += (size_t)n;
		r = drain(c, err);
		if (r != 0)
			return r;
	}
}

RTL_API int rtl_ur_primary_create(struct rtl_ur_primary **out, const char *host, uint16_t port,
				  int64_t timeout_ns, struct rtl_error *err)
{
	struct rtl_ur_primary *c;
	int64_t deadline;
	int r;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!out || timeout_ns <= 0)
		return rtl_error_set(err, -EINVAL,
				     "ur primary: connect needs a client pointer and a timeout "
				     "above 0");
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return rtl_error_set(err, -ENOMEM, "ur primary: out of memory for a client");
	r = rtl_tcp_connect(host, port, timeout_ns, err);
	if (r < 0)
		goto err_free;
	c->fd = r;
	snprintf(c->host, sizeof(c->host), "%s", host);
	c->port = port;
	deadline = rtl_time_now() + timeout_ns;
	while (!c->have_version) {
		int64_t left = deadline - rtl_time_now();

		if (left <= 0) {
			r = rtl_error_set(
				err, -ETIMEDOUT,
				"%s:%u: connected, but no version message within %.3f s: "
				"the port is not a UR primary/secondary interface (30001, "
				"30002) or the controller is still booting; check the port "
				"and try again",
				host, port, (double)timeout_ns / 1e9);
			goto err_close;
		}
		r = rtl_ur_primary_poll(c, left, err);
		if (r < 0)
			goto err_close;
	}
	if (c->version.major < 3) {
		r = rtl_error_set(err, -EPROTONOSUPPORT,
				  "%s:%u: controller version %u.%u: rtloop supports CB3 (3.x) and "
				  "e-Series (5.x) and later; update the controller software",
				  host, port, c->version.major, c->version.minor);
		goto err_close;
	}
	*out = c;
	return 0;
err_close:
	close(c->fd);
err_free:
	free(c);
	return r;
}

RTL_API void rtl_ur_primary_destroy(struct rtl_ur_primary *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

RTL_API const struct rtl_ur_version_msg *rtl_ur_primary_version(const struct rtl_ur_primary *c)
{
	return c ? &c->version : NULL;
}

RTL_API bool rtl_ur_primary_robot_mode(const struct rtl_ur_primary *c,
				       struct rtl_ur_robot_mode_data *out)
{
	if (!c || !c->have_mode)
		return false;
	if (out)
		*out = c->mode;
	return true;
}

RTL_API bool rtl_ur_primary_next_msg(struct rtl_ur_primary *c, struct rtl_ur_robot_msg *out)
{
	if (!c || c->q_tail == c->q_head)
		return false;
	if (out)
		*out = c->q[c->q_head % RTL_UR_QUEUE];
	c->q_head++;
	return true;
}

RTL__DEFINE_COUNTERS(rtl_ur_primary, RTL_UR_PRIMARY_COUNTERS, stats)

RTL_API int rtl_ur_primary_send_script(struct rtl_ur_primary *c, const char *text, size_t len,
				       int64_t timeout_ns, struct rtl_error *err)
{
	int64_t deadline = rtl_time_now() + (timeout_ns > 0 ? timeout_ns : 0);
	char eb[128];
	int r;

	if (err)
		err->code = 0, err->msg[0] = '\0';
	if (!c || !text || !len)
		return rtl_error_set(err, -EINVAL,
				     "ur primary: no program to send: pass the URScript text");
	r = rtl_tcp_send_all(c->fd, text, len, deadline);
	if (r == 0 && text[len - 1] != '\n')
		r = rtl_tcp_send_all(c->fd, "\n", 1, deadline);
	if (r == -ETIMEDOUT)
		return rtl_error_set(err, r,
				     "%s:%u: the controller did not take the %zu-byte program "
				     "within %.3f s: it reads no input; reconnect and check that "
				     "the port is a script port (30001-30003)",
				     c->host, c->port, len, (double)timeout_ns / 1e9);
	if (r < 0)
		return rtl_error_set(err, r,
				     "%s:%u: sending the program failed: %s: the controller "
				     "closed the connection; reconnect and send it again",
				     c->host, c->port, errtext(r, eb, sizeof(eb)));
	return 0;
}

RTL_API int rtl_ur_primary_run_script(struct rtl_ur_primary *c, struct rtl_ur_robot_msg *rtx,
				      const char *text, size_t len, int64_t wait_ns,
				      struct rtl_error *err)
{
	int64_t deadline;
	uint64_t seen;
	int r;

	r = rtl_ur_primary_send_script(c, text, len, wait_ns > 0 ? wait_ns : RTL_NS_PER_SEC, err);
	if (r < 0)
		return r;
	seen = c->rtx_seen;
	deadline = rtl_time_now() + (wait_ns > 0 ? wait_ns : 0);
	while (c->rtx_seen == seen) {
		int64_t left = deadline - rtl_time_now();

		if (left <= 0)
			return 0;
		r = rtl_ur_primary_poll(c, left, err);
		if (r < 0)
			return r;
	}
	if (rtx)
		*rtx = c->rtx;
	return rtl_error_set(err, -ENOEXEC,
			     "%s:%u: the controller refused the program at line %d, column %d: "
			     "%s; correct line %d of the program (or the state the message "
			     "names) and send it again",
			     c->host, c->port, c->rtx.line, c->rtx.column,
			     c->rtx.text[0] ? c->rtx.text : "(no text)", c->rtx.line);
}
