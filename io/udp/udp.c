// SPDX-License-Identifier: MIT
/*
 * The UDP wire format: see <rtloop/udp.h> for the design and
 * docs/udp.md for the specification.
 *
 * Bytes are assembled with shifts, never by casting a buffer to a wider
 * type: the wire is little-endian whatever the host is, and a datagram
 * buffer has no alignment promise. Floats travel as their IEEE-754 bit
 * patterns (memcpy to an integer of the same width, which is the defined
 * way to reinterpret in C).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/sized.h>
#include <rtloop/udp.h>

/* The table and the layout's promise: the last row ends at 1,338. */
_Static_assert(1082 + 256 == RTL_UDP_STATE_SIZE, "v1.0 layout is 1,338 bytes");
_Static_assert(RTL_UDP_HEADER_SIZE + RTL_UDP_STATE_SIZE <= 1472,
	       "a state datagram fits an Ethernet frame without IP fragmentation");

/* ---- little-endian primitives ------------------------------------------------------ */

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void put_f64(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put_u64(p, v);
}

static double get_f64(const uint8_t *p)
{
	uint64_t v = get_u64(p);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/* ---- the state layout ----------------------------------------------------------------- */

#define ROW(name, type, ctype, dims, count, off, unit)    \
	{ #name,                                          \
	  unit,                                           \
	  off,                                            \
	  (uint16_t)((count) * sizeof(ctype)),            \
	  (uint16_t)offsetof(struct rtl_udp_state, name), \
	  count,                                          \
	  type },
static const struct rtl_udp_field fields[] = { RTL_UDP_STATE_FIELDS(ROW) };
#undef ROW

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

RTL_API const struct rtl_udp_field *rtl_udp_state_fields(size_t *n)
{
	if (n)
		*n = N_FIELDS;
	return fields;
}

RTL_API unsigned rtl_udp_state_get(const struct rtl_udp_state *s, const struct rtl_udp_field *f,
				   double *out, unsigned max)
{
	const unsigned char *p;
	unsigned n;

	if (!s || !f || !out)
		return 0;
	p = (const unsigned char *)s + f->host_offset;
	n = f->count < max ? f->count : max;
	for (unsigned k = 0; k < n; k++) {
		switch ((enum rtl_udp_elem)f->type) {
		case RTL_UDP_F64:
			out[k] = ((const double *)(const void *)p)[k];
			break;
		case RTL_UDP_F32:
			out[k] = ((const float *)(const void *)p)[k];
			break;
		case RTL_UDP_U8:
			out[k] = p[k];
			break;
		case RTL_UDP_U16:
			out[k] = ((const uint16_t *)(const void *)p)[k];
			break;
		case RTL_UDP_U32:
			out[k] = ((const uint32_t *)(const void *)p)[k];
			break;
		}
	}
	return n;
}

RTL_API unsigned rtl_udp_elem_size(enum rtl_udp_elem type)
{
	switch (type) {
	case RTL_UDP_F64:
		return 8;
	case RTL_UDP_F32:
	case RTL_UDP_U32:
		return 4;
	case RTL_UDP_U16:
		return 2;
	case RTL_UDP_U8:
		return 1;
	}
	return 0;
}

/*
 * Host order to little-endian and back are the same byte permutation (each
 * element reversed on a big-endian host, copied on a little-endian one), so
 * one walk serves encode and decode: read the source element as
 * little-endian, store the value in host order. A float travels as its bit
 * pattern, so it is handled as the integer of its width.
 */
static void state_walk(const unsigned char *src, unsigned char *dst, bool to_wire)
{
	for (size_t i = 0; i < N_FIELDS; i++) {
		const struct rtl_udp_field *f = &fields[i];
		unsigned esz = rtl_udp_elem_size((enum rtl_udp_elem)f->type);
		const unsigned char *s = src + (to_wire ? f->host_offset : f->offset);
		unsigned char *d = dst + (to_wire ? f->offset : f->host_offset);

		for (unsigned e = 0; e < f->count; e++, s += esz, d += esz) {
			switch (esz) {
			case 8: {
				uint64_t v = get_u64(s);

				memcpy(d, &v, sizeof(v));
				break;
			}
			case 4: {
				uint32_t v = get_u32(s);

				memcpy(d, &v, sizeof(v));
				break;
			}
			case 2: {
				uint16_t v = get_u16(s);

				memcpy(d, &v, sizeof(v));
				break;
			}
			default:
				*d = *s;
				break;
			}
		}
	}
}

RTL_API int rtl_udp_state_encode(const struct rtl_udp_state *s, uint8_t *out, size_t cap)
{
	if (!s || !out)
		return -EINVAL;
	if (cap < RTL_UDP_STATE_SIZE)
		return -ENOSPC;
	state_walk((const unsigned char *)s, out, true);
	return RTL_UDP_STATE_SIZE;
}

RTL_API int rtl_udp_state_decode(struct rtl_udp_state *s, const uint8_t *in, size_t len)
{
	if (!in || !s)
		return -EINVAL;
	if (len != RTL_UDP_STATE_SIZE)
		return -EMSGSIZE;
	state_walk(in, (unsigned char *)s, false);
	return RTL_UDP_STATE_SIZE;
}

/* ---- header --------------------------------------------------------------------------- */

RTL_API int rtl_udp_payload_size(enum rtl_udp_type type)
{
	switch (type) {
	case RTL_UDP_HELLO:
	case RTL_UDP_WELCOME:
		return RTL_UDP_HELLO_SIZE;
	case RTL_UDP_STATE:
		return RTL_UDP_STATE_SIZE;
	case RTL_UDP_COMMAND:
		return RTL_UDP_COMMAND_SIZE;
	case RTL_UDP_BYE:
		return 0;
	case RTL_UDP_ALARM:
		return RTL_UDP_ALARM_SIZE;
	case RTL_UDP_LIMITS:
		return RTL_UDP_LIMITS_SIZE;
	}
	return -EPROTO;
}

/* Write a header for @type; the caller has checked the room. */
static void put_header(uint8_t *out, enum rtl_udp_type type, uint64_t seq, int64_t send_ns)
{
	put_u32(out, RTL_UDP_MAGIC);
	out[4] = RTL_UDP_VERSION;
	out[5] = (uint8_t)type;
	put_u16(out + 6, 0);
	put_u32(out + 8, (uint32_t)rtl_udp_payload_size(type));
	put_u32(out + 12, 0);
	put_u64(out + 16, seq);
	put_u64(out + 24, (uint64_t)send_ns);
}

/*
 * The start of every encoder: -EINVAL unless @args_ok (the caller's check
 * of @out and its arguments), -ENOSPC if @cap cannot hold the header and
 * @payload bytes; else the header written and 0.
 */
static int begin(uint8_t *out, size_t cap, bool args_ok, enum rtl_udp_type type, uint64_t seq,
		 int64_t send_ns, size_t payload)
{
	if (!args_ok)
		return -EINVAL;
	if (cap < RTL_UDP_HEADER_SIZE + payload)
		return -ENOSPC;
	put_header(out, type, seq, send_ns);
	return 0;
}

RTL_API int rtl_udp_decode_header(struct rtl_udp_header *h, const uint8_t *buf, size_t len)
{
	int want;

	if (!buf || !h)
		return -EINVAL;
	if (len < RTL_UDP_HEADER_SIZE)
		return -EMSGSIZE;
	if (get_u32(buf) != RTL_UDP_MAGIC)
		return -EBADMSG;
	h->version = buf[4];
	if (h->version != RTL_UDP_VERSION)
		return -EPROTONOSUPPORT;
	h->type = buf[5];
	h->flags = get_u16(buf + 6);
	h->length = get_u32(buf + 8);
	h->seq = get_u64(buf + 16);
	h->send_ns = (int64_t)get_u64(buf + 24);
	want = rtl_udp_payload_size((enum rtl_udp_type)h->type);
	if (want < 0)
		return -EPROTO;
	if (h->length != len - RTL_UDP_HEADER_SIZE || h->length != (uint32_t)want)
		return -EMSGSIZE;
	return RTL_UDP_HEADER_SIZE;
}

/* ---- datagrams ------------------------------------------------------------------------ */

RTL_API int rtl_udp_encode_state(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				 const struct rtl_udp_state *s)
{
	int n = begin(out, cap, out && s, RTL_UDP_STATE, seq, send_ns,
		      RTL_UDP_MAX_DATAGRAM - RTL_UDP_HEADER_SIZE);

	if (n < 0)
		return n;
	n = rtl_udp_state_encode(s, out + RTL_UDP_HEADER_SIZE, cap - RTL_UDP_HEADER_SIZE);
	return n < 0 ? n : RTL_UDP_HEADER_SIZE + n;
}

/* Offsets of the COMMAND payload. */
enum {
	CMD_MODE = 0,
	CMD_FLAGS = 1,
	CMD_ECHO_SEQ = 8,
	CMD_ECHO_NS = 16,
	CMD_TIME = 24,
	CMD_POS = 32,
	CMD_VEL = 80,
	CMD_ACC = 128,
	CMD_END = 176,
};
_Static_assert(CMD_END == RTL_UDP_COMMAND_SIZE, "command payload size");

RTL_API int rtl_udp_encode_command(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				   const struct rtl_udp_cmd *c)
{
	uint8_t *p;

	/* A target time is a duration (docs/doosan-rt.md 3.1): >= 0, 0 and
	 * anything up to one period meaning "at once". -10000 (AUTO) is for
	 * velocities and accelerations only, so it is refused here too. */
	int ret = begin(out, cap,
			out && c && c->mode < RTL_UDP_MODE_COUNT && c->target_time >= 0 &&
				isfinite(c->target_time),
			RTL_UDP_COMMAND, seq, send_ns, RTL_UDP_COMMAND_SIZE);

	if (ret < 0)
		return ret;
	p = out + RTL_UDP_HEADER_SIZE;
	memset(p, 0, CMD_ECHO_SEQ);
	p[CMD_MODE] = c->mode;
	p[CMD_FLAGS] = c->flags;
	put_u64(p + CMD_ECHO_SEQ, c->echo_seq);
	put_u64(p + CMD_ECHO_NS, (uint64_t)c->echo_ns);
	put_f64(p + CMD_TIME, c->target_time);
	for (int i = 0; i < 6; i++) {
		put_f64(p + CMD_POS + 8 * i, c->pos[i]);
		put_f64(p + CMD_VEL + 8 * i, c->vel[i]);
		put_f64(p + CMD_ACC + 8 * i, c->acc[i]);
	}
	return RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE;
}

RTL_API int rtl_udp_encode_hello(uint8_t *out, size_t cap, enum rtl_udp_type type, uint64_t seq,
				 int64_t send_ns, const struct rtl_udp_hello *h)
{
	uint8_t *p;
	int ret = begin(out, cap, out && h && (type == RTL_UDP_HELLO || type == RTL_UDP_WELCOME),
			type, seq, send_ns, RTL_UDP_HELLO_SIZE);

	if (ret < 0)
		return ret;
	p = out + RTL_UDP_HEADER_SIZE;
	/* The schema is copied up to its NUL and padded with NULs, so no
	 * stray bytes of the caller's buffer reach the wire. */
	for (size_t i = 0, end = 0; i < sizeof(h->schema); i++) {
		if (!end && h->schema[i] == '\0')
			end = 1;
		p[i] = end ? 0 : (uint8_t)h->schema[i];
	}
	put_u32(p + 8, h->period_ns);
	put_u32(p + 12, (uint32_t)h->loss_count);
	return RTL_UDP_HEADER_SIZE + RTL_UDP_HELLO_SIZE;
}

RTL_API int rtl_udp_encode_bye(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns)
{
	int ret = begin(out, cap, out != NULL, RTL_UDP_BYE, seq, send_ns, 0);

	return ret < 0 ? ret : RTL_UDP_HEADER_SIZE;
}

/* The start of each decoder: -EINVAL when its @out is NULL, else the
 * header of a datagram that must be of @type or @type2, into @h (NULL:
 * only checked). */
static int expect(const void *out, const uint8_t *buf, size_t len, struct rtl_udp_header *h,
		  unsigned type, unsigned type2)
{
	struct rtl_udp_header tmp;
	int ret;

	if (!out)
		return -EINVAL;
	if (!h)
		h = &tmp;
	ret = rtl_udp_decode_header(h, buf, len);
	if (ret < 0)
		return ret;
	if (h->type != type && h->type != type2)
		return -EPROTO;
	return ret;
}

RTL_API int rtl_udp_decode_state(struct rtl_udp_header *h, struct rtl_udp_state *s,
				 const uint8_t *buf, size_t len)
{
	int ret = expect(s, buf, len, h, RTL_UDP_STATE, RTL_UDP_STATE);

	if (ret < 0)
		return ret;
	ret = rtl_udp_state_decode(s, buf + RTL_UDP_HEADER_SIZE, RTL_UDP_STATE_SIZE);
	return ret < 0 ? ret : (int)len;
}

RTL_API int rtl_udp_decode_command(struct rtl_udp_header *h, struct rtl_udp_cmd *c,
				   const uint8_t *buf, size_t len)
{
	const uint8_t *p;
	int ret = expect(c, buf, len, h, RTL_UDP_COMMAND, RTL_UDP_COMMAND);

	if (ret < 0)
		return ret;
	p = buf + RTL_UDP_HEADER_SIZE;
	if (p[CMD_MODE] >= RTL_UDP_MODE_COUNT)
		return -EPROTO;
	c->mode = p[CMD_MODE];
	c->flags = p[CMD_FLAGS];
	c->echo_seq = get_u64(p + CMD_ECHO_SEQ);
	c->echo_ns = (int64_t)get_u64(p + CMD_ECHO_NS);
	c->target_time = get_f64(p + CMD_TIME);
	for (int i = 0; i < 6; i++) {
		c->pos[i] = get_f64(p + CMD_POS + 8 * i);
		c->vel[i] = get_f64(p + CMD_VEL + 8 * i);
		c->acc[i] = get_f64(p + CMD_ACC + 8 * i);
	}
	return (int)len;
}

RTL_API int rtl_udp_decode_hello(struct rtl_udp_header *h, struct rtl_udp_hello *out,
				 const uint8_t *buf, size_t len)
{
	const uint8_t *p;
	int ret = expect(out, buf, len, h, RTL_UDP_HELLO, RTL_UDP_WELCOME);

	if (ret < 0)
		return ret;
	p = buf + RTL_UDP_HEADER_SIZE;
	memcpy(out->schema, p, sizeof(out->schema));
	out->schema[sizeof(out->schema) - 1] = '\0';
	out->period_ns = get_u32(p + 8);
	out->loss_count = (int32_t)get_u32(p + 12);
	return (int)len;
}

/* Offsets of the ALARM payload. */
enum { ALARM_LEVEL = 0, ALARM_GROUP = 1, ALARM_CODE = 4, ALARM_TEXT = 8 };
_Static_assert(ALARM_TEXT + RTL_UDP_ALARM_TEXT == RTL_UDP_ALARM_SIZE, "alarm payload size");

RTL_API int rtl_udp_encode_alarm(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				 const struct rtl_udp_alarm *a)
{
	uint8_t *p;
	size_t n;
	int ret = begin(out, cap, out && a, RTL_UDP_ALARM, seq, send_ns, RTL_UDP_ALARM_SIZE);

	if (ret < 0)
		return ret;
	p = out + RTL_UDP_HEADER_SIZE;
	memset(p, 0, RTL_UDP_ALARM_SIZE);
	p[ALARM_LEVEL] = a->level;
	p[ALARM_GROUP] = a->group;
	put_u32(p + ALARM_CODE, a->code);
	n = strnlen(a->text, RTL_UDP_ALARM_TEXT - 1);
	memcpy(p + ALARM_TEXT, a->text, n);
	return RTL_UDP_HEADER_SIZE + RTL_UDP_ALARM_SIZE;
}

RTL_API int rtl_udp_decode_alarm(struct rtl_udp_header *h, struct rtl_udp_alarm *a,
				 const uint8_t *buf, size_t len)
{
	const uint8_t *p;
	int ret = expect(a, buf, len, h, RTL_UDP_ALARM, RTL_UDP_ALARM);

	if (ret < 0)
		return ret;
	p = buf + RTL_UDP_HEADER_SIZE;
	a->level = p[ALARM_LEVEL];
	a->group = p[ALARM_GROUP];
	a->code = get_u32(p + ALARM_CODE);
	/* Up to the first NUL; what is not printable ASCII becomes '?'. */
	for (size_t i = 0; i < RTL_UDP_ALARM_TEXT; i++) {
		uint8_t c = i < RTL_UDP_ALARM_TEXT - 1 ? p[ALARM_TEXT + i] : 0;

		if (!c) {
			memset(a->text + i, 0, RTL_UDP_ALARM_TEXT - i);
			break;
		}
		a->text[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	return (int)len;
}

/* The 16 values of a LIMITS payload, in wire order. */
static void limits_flat(struct rtl_udp_limits *l, double *v[16])
{
	v[0] = &l->velx[0];
	v[1] = &l->velx[1];
	v[2] = &l->accx[0];
	v[3] = &l->accx[1];
	for (int i = 0; i < 6; i++) {
		v[4 + i] = &l->velj[i];
		v[10 + i] = &l->accj[i];
	}
}

/* A limit is >= 0 and finite; the rotational ones (wire index 1 and 3)
 * may be AUTO. */
static bool limits_ok(const struct rtl_udp_limits *in)
{
	struct rtl_udp_limits l = *in;
	double *v[16];

	limits_flat(&l, v);
	for (int i = 0; i < 16; i++) {
		if ((i == 1 || i == 3) && *v[i] == RTL_UDP_AUTO)
			continue;
		if (!(*v[i] >= 0) || !isfinite(*v[i]))
			return false;
	}
	return true;
}

RTL_API int rtl_udp_encode_limits(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				  const struct rtl_udp_limits *l)
{
	struct rtl_udp_limits copy;
	double *v[16];
	int ret = begin(out, cap, out && l && limits_ok(l), RTL_UDP_LIMITS, seq, send_ns,
			RTL_UDP_LIMITS_SIZE);

	if (ret < 0)
		return ret;
	copy = *l;
	limits_flat(&copy, v);
	for (int i = 0; i < 16; i++)
		put_f64(out + RTL_UDP_HEADER_SIZE + 8 * i, *v[i]);
	return RTL_UDP_HEADER_SIZE + RTL_UDP_LIMITS_SIZE;
}

RTL_API int rtl_udp_decode_limits(struct rtl_udp_header *h, struct rtl_udp_limits *l,
				  const uint8_t *buf, size_t len)
{
	double *v[16];
	int ret = expect(l, buf, len, h, RTL_UDP_LIMITS, RTL_UDP_LIMITS);

	if (ret < 0)
		return ret;
	limits_flat(l, v);
	for (int i = 0; i < 16; i++)
		*v[i] = get_f64(buf + RTL_UDP_HEADER_SIZE + 8 * i);
	return limits_ok(l) ? (int)len : -EDOM;
}

/* ---- checks ------------------------------------------------------------------------------ */

static bool bad_vec(const double *v, bool auto_ok)
{
	for (int i = 0; i < 6; i++)
		if (!isfinite(v[i]) || (v[i] == RTL_UDP_AUTO && !auto_ok))
			return true;
	return false;
}

RTL_API int rtl_udp_cmd_check(const struct rtl_udp_cmd *c, char *why, size_t len,
			      const struct rtl_udp_cmd_limits *lim)
{
	static const struct rtl_udp_cmd_limits none;
	bool joint, servo;

	if (!c)
		return -EINVAL;
	if (!lim)
		lim = &none;
	joint = c->mode == RTL_UDP_MODE_SPEEDJ || c->mode == RTL_UDP_MODE_SERVOJ;
	servo = c->mode == RTL_UDP_MODE_SERVOJ || c->mode == RTL_UDP_MODE_SERVOL;
	if (c->mode >= RTL_UDP_MODE_COUNT) {
		snprintf(why, len, "command mode %u is unknown", c->mode);
		return -EDOM;
	}
	if (c->mode == RTL_UDP_MODE_NONE)
		return 0;
	if (!isfinite(c->target_time) || c->target_time < 0 || c->target_time > 3600) {
		snprintf(why, len, "%s: target_time %g is not in [0, 3600] s",
			 rtl_udp_mode_name(c->mode), c->target_time);
		return -EDOM;
	}
	/* Every double goes on the wire, used by the mode or not. */
	if (bad_vec(c->pos, !servo) || bad_vec(c->vel, servo) || bad_vec(c->acc, true)) {
		snprintf(why, len, "%s: a position, velocity or acceleration is not finite",
			 rtl_udp_mode_name(c->mode));
		return -EDOM;
	}
	if (c->mode == RTL_UDP_MODE_STOP)
		return 0; /* no speed to limit */
	for (int i = 0; i < 6; i++) {
		double l = joint ? lim->max_joint_vel
				 : (i < 3 ? lim->max_linear_vel : lim->max_angular_vel);

		if (l <= 0 || c->vel[i] == RTL_UDP_AUTO)
			continue;
		if (fabs(c->vel[i]) > l) {
			snprintf(why, len, "%s: vel[%d] = %g is above the limit %g %s",
				 rtl_udp_mode_name(c->mode), i, c->vel[i], l,
				 joint || i >= 3 ? "deg/s" : "mm/s");
			return -EDOM;
		}
	}
	return 0;
}

RTL_API unsigned rtl_udp_state_nonfinite(const struct rtl_udp_state *s, const char **first)
{
	unsigned n = 0;

	/* Walks the layout's list: every F32 and F64 member, element by
	 * element (the matrices as their 36 floats). */
#define CHECK_(name, type, ctype, dims, count, off, unit)                \
	if (type == RTL_UDP_F32 || type == RTL_UDP_F64) {                \
		const ctype *v_ = (const ctype *)(const void *)&s->name; \
		for (int i_ = 0; i_ < (count); i_++) {                   \
			if (!isfinite((double)v_[i_]) && !n++ && first)  \
				*first = #name;                          \
		}                                                        \
	}
	RTL_UDP_STATE_FIELDS(CHECK_)
#undef CHECK_
	return n;
}

RTL_API bool rtl_udp_state_at_rest(const struct rtl_udp_state *s, double rest_speed)
{
	for (int i = 0; i < 6; i++)
		if (!(fabs(s->actual_joint_velocity[i]) < rest_speed))
			return false;
	return true;
}

RTL_API bool rtl_udp_alarm_gate_pass(struct rtl_udp_alarm_gate *g, unsigned level, unsigned group,
				     unsigned code, int64_t now_ns)
{
	unsigned i, n = sizeof(g->seen) / sizeof(g->seen[0]);

	if (level != RTL_UDP_ALARM_INFO)
		return true;
	for (i = 0; i < n; i++) {
		if (g->seen[i].t_ns && g->seen[i].group == group && g->seen[i].code == code) {
			if (now_ns - g->seen[i].t_ns < RTL_UDP_ALARM_REPEAT_NS)
				return false;
			g->seen[i].t_ns = now_ns;
			return true;
		}
	}
	i = g->next++ % n;
	g->seen[i].group = group;
	g->seen[i].code = code;
	/* 0 means unused: a pass at time 0 is stored as 1 ns. */
	g->seen[i].t_ns = now_ns ? now_ns : 1;
	return true;
}

/* Types start at 1: [0] is a hole. */
static const char *const type_names[] = {
	[RTL_UDP_HELLO] = "hello",     [RTL_UDP_WELCOME] = "welcome", [RTL_UDP_STATE] = "state",
	[RTL_UDP_COMMAND] = "command", [RTL_UDP_BYE] = "bye",	      [RTL_UDP_ALARM] = "alarm",
	[RTL_UDP_LIMITS] = "limits"
};

static const char *const mode_names[RTL_UDP_MODE_COUNT] = {
	[RTL_UDP_MODE_NONE] = "none",	  [RTL_UDP_MODE_SPEEDJ] = "speedj",
	[RTL_UDP_MODE_SPEEDL] = "speedl", [RTL_UDP_MODE_SERVOJ] = "servoj",
	[RTL_UDP_MODE_SERVOL] = "servol", [RTL_UDP_MODE_STOP] = "stop"
};

RTL_API const char *rtl_udp_type_name(enum rtl_udp_type type)
{
	return RTL__NAME_OF(type_names, type, "?");
}

RTL_API const char *rtl_udp_mode_name(enum rtl_udp_mode mode)
{
	return RTL__NAME_OF(mode_names, mode, "?");
}
