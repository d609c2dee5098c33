// SPDX-License-Identifier: MIT
/*
 * The conformance material of docs/udp.md: see udp-spec.h. The data comes
 * from the header tests/io/udp/udp-spec-extract.py generates from the page
 * at build time; this file only reads the fields of a vector into rtloop's
 * structs and compares them, with the codec's own layout table for the
 * state, so the page is the only description of the expected values.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udp-spec.h"

#include "udp-spec-vectors.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const struct udp_spec_vector *udp_spec_vectors(size_t *n)
{
	*n = N_OF(spec_vectors);
	return spec_vectors;
}

const struct udp_spec_row *udp_spec_rows(size_t *n)
{
	*n = N_OF(spec_rows);
	return spec_rows;
}

const struct udp_spec_vector *udp_spec_vector(const char *name)
{
	for (size_t i = 0; i < N_OF(spec_vectors); i++)
		if (strcmp(spec_vectors[i].name, name) == 0)
			return &spec_vectors[i];
	return NULL;
}

const struct udp_spec_sequence *udp_spec_sequence(const char *name)
{
	for (size_t i = 0; i < N_OF(spec_sequences); i++)
		if (strcmp(spec_sequences[i].name, name) == 0)
			return &spec_sequences[i];
	return NULL;
}

int udp_spec_errno(const char *name)
{
	static const struct {
		const char *name;
		int code;
	} codes[] = {
		{ "EMSGSIZE", EMSGSIZE },
		{ "EBADMSG", EBADMSG },
		{ "EPROTONOSUPPORT", EPROTONOSUPPORT },
		{ "EPROTO", EPROTO },
		{ "ECONNRESET", ECONNRESET },
		{ "EDOM", EDOM },
		{ "EINVAL", EINVAL },
	};

	for (size_t i = 0; i < N_OF(codes); i++)
		if (strcmp(codes[i].name, name) == 0)
			return codes[i].code;
	return 0;
}

/* ---- numbers ------------------------------------------------------------------------ */

/* Each parser takes the whole of @s or fails (-1). */
static int num_double(const char *s, double *out)
{
	char *end;

	if (strcmp(s, "AUTO") == 0) {
		*out = RTL_UDP_AUTO;
		return 0;
	}
	if (strcmp(s, "nan") == 0) {
		*out = NAN;
		return 0;
	}
	errno = 0;
	*out = strtod(s, &end);
	return *s && !*end && !errno ? 0 : -1;
}

static int num_float(const char *s, float *out)
{
	char *end;

	if (strcmp(s, "AUTO") == 0) {
		*out = (float)RTL_UDP_AUTO;
		return 0;
	}
	if (strcmp(s, "nan") == 0) {
		*out = NAN;
		return 0;
	}
	/* strtof, not a double cast: one rounding, as the page's encoder did. */
	errno = 0;
	*out = strtof(s, &end);
	return *s && !*end && !errno ? 0 : -1;
}

/* An integer in [@lo, @hi]: decimal, or hexadecimal with 0x. */
static int num_int(const char *s, long double lo, long double hi, long long *out)
{
	char *end;

	errno = 0;
	if (*s == '-') {
		*out = strtoll(s, &end, 0);
	} else {
		unsigned long long u = strtoull(s, &end, 0);

		if ((long double)u > hi)
			return -1;
		*out = (long long)u;
	}
	if (!*s || *end || errno || (*s == '-' && (long double)*out < lo))
		return -1;
	return 0;
}

static int num_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return *s && *s != '-' && !*end && !errno ? 0 : -1;
}

/* Up to @n comma-separated doubles; exactly @n of them. */
static int num_doubles(const char *s, double *out, int n)
{
	char buf[512], *save = NULL, *tok;
	int k = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (k == n || num_double(tok, &out[k]) < 0)
			return -1;
		k++;
	}
	return k == n ? 0 : -1;
}

/* ---- fields -------------------------------------------------------------------------- */

#define MAX_TOKENS 64

struct token {
	char key[64];
	char val[256];
};

/* Split "k=v k="quoted v" ..." into @t; the count, or -1. */
static int tokenize(const char *s, struct token *t, int max)
{
	int n = 0;

	for (;;) {
		size_t k = 0, v = 0;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -1;
		while (*s && *s != '=' && *s != ' ') {
			if (k + 1 >= sizeof(t[n].key))
				return -1;
			t[n].key[k++] = *s++;
		}
		t[n].key[k] = '\0';
		if (*s++ != '=' || !k)
			return -1;
		if (*s == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (v + 1 >= sizeof(t[n].val))
					return -1;
				t[n].val[v++] = *s;
			}
			if (*s++ != '"')
				return -1;
		} else {
			while (*s && *s != ' ' && *s != '\t') {
				if (v + 1 >= sizeof(t[n].val))
					return -1;
				t[n].val[v++] = *s++;
			}
		}
		t[n].val[v] = '\0';
		n++;
	}
}

static unsigned type_of(const char *s)
{
	for (unsigned t = 1; t < 256; t++)
		if (strcmp(rtl_udp_type_name((enum rtl_udp_type)t), s) == 0)
			return t;
	{
		long long v;

		if (num_int(s, 0, 255, &v) == 0)
			return (unsigned)v;
	}
	return 0;
}

/* Store @s as element @e of the layout row @f in @st. */
static int state_elem(const struct rtl_udp_field *f, unsigned e, const char *s,
		      struct rtl_udp_state *st)
{
	unsigned char *p = (unsigned char *)st + f->host_offset;
	long long v;

	if (e >= f->count)
		return -1;
	switch (f->type) {
	case RTL_UDP_F64: {
		double d;

		if (num_double(s, &d) < 0)
			return -1;
		memcpy(p + 8 * e, &d, sizeof(d));
		return 0;
	}
	case RTL_UDP_F32: {
		float x;

		if (num_float(s, &x) < 0)
			return -1;
		memcpy(p + 4 * e, &x, sizeof(x));
		return 0;
	}
	case RTL_UDP_U8: {
		uint8_t x;

		if (num_int(s, 0, UINT8_MAX, &v) < 0)
			return -1;
		x = (uint8_t)v;
		memcpy(p + e, &x, 1);
		return 0;
	}
	case RTL_UDP_U16: {
		uint16_t x;

		if (num_int(s, 0, UINT16_MAX, &v) < 0)
			return -1;
		x = (uint16_t)v;
		memcpy(p + 2 * e, &x, sizeof(x));
		return 0;
	}
	case RTL_UDP_U32: {
		uint32_t x;

		if (num_int(s, 0, UINT32_MAX, &v) < 0)
			return -1;
		x = (uint32_t)v;
		memcpy(p + 4 * e, &x, sizeof(x));
		return 0;
	}
	}
	return -1;
}

/* A state key: "name", "name[i]" or "name[row][column]" (the matrices). */
static int state_key(const struct token *t, struct rtl_udp_state *st)
{
	char name[64];
	const char *br = strchr(t->key, '[');
	size_t n, nf, len = br ? (size_t)(br - t->key) : strlen(t->key);
	const struct rtl_udp_field *f = NULL, *rows = rtl_udp_state_fields(&nf);
	unsigned idx[2], ni = 0;

	if (len >= sizeof(name))
		return -1;
	memcpy(name, t->key, len);
	name[len] = '\0';
	for (size_t i = 0; i < nf; i++)
		if (strcmp(rows[i].name, name) == 0)
			f = &rows[i];
	if (!f)
		return -1;
	for (const char *p = br; p && *p == '['; ni++) {
		char *end;
		unsigned long v = strtoul(p + 1, &end, 10);

		if (ni == 2 || *end != ']' || end == p + 1)
			return -1;
		idx[ni] = (unsigned)v;
		p = end + 1;
		if (*p && *p != '[')
			return -1;
	}
	if (ni == 0) {
		char buf[512], *save = NULL, *tok;
		unsigned e = 0;

		if (strlen(t->val) >= sizeof(buf))
			return -1;
		strcpy(buf, t->val);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (state_elem(f, e++, tok, st) < 0)
				return -1;
		return e == f->count ? 0 : -1;
	}
	/* A matrix (36 elements) takes [row][column], anything else [i]. */
	if ((f->count == 36) != (ni == 2) || (ni == 2 && (idx[0] > 5 || idx[1] > 5)))
		return -1;
	n = ni == 2 ? idx[0] * 6 + idx[1] : idx[0];
	return state_elem(f, (unsigned)n, t->val, st);
}

/* One key of a payload of type @type. 0, or -1 (unknown key or bad value). */
static int payload_key(unsigned type, const struct token *t, struct udp_spec_msg *m)
{
	const char *k = t->key, *s = t->val;
	long long v;

	switch (type) {
	case RTL_UDP_HELLO:
	case RTL_UDP_WELCOME:
		if (strcmp(k, "schema") == 0) {
			if (strlen(s) >= sizeof(m->hello.schema))
				return -1;
			strcpy(m->hello.schema, s);
			return 0;
		}
		if (strcmp(k, "period_ns") == 0 && num_int(s, 0, UINT32_MAX, &v) == 0) {
			m->hello.period_ns = (uint32_t)v;
			return 0;
		}
		if (strcmp(k, "loss_count") == 0 && num_int(s, INT32_MIN, INT32_MAX, &v) == 0) {
			m->hello.loss_count = (int32_t)v;
			return 0;
		}
		return -1;
	case RTL_UDP_COMMAND:
		if (strcmp(k, "mode") == 0) {
			for (unsigned i = 0; i < RTL_UDP_MODE_COUNT; i++)
				if (strcmp(rtl_udp_mode_name((enum rtl_udp_mode)i), s) == 0) {
					m->cmd.mode = (uint8_t)i;
					return 0;
				}
			if (num_int(s, 0, UINT8_MAX, &v) < 0)
				return -1;
			m->cmd.mode = (uint8_t)v;
			return 0;
		}
		if (strcmp(k, "flags") == 0 && num_int(s, 0, UINT8_MAX, &v) == 0) {
			m->cmd.flags = (uint8_t)v;
			return 0;
		}
		if (strcmp(k, "echo_seq") == 0)
			return num_u64(s, &m->cmd.echo_seq);
		if (strcmp(k, "echo_ns") == 0 && num_int(s, INT64_MIN, INT64_MAX, &v) == 0) {
			m->cmd.echo_ns = v;
			return 0;
		}
		if (strcmp(k, "target_time") == 0)
			return num_double(s, &m->cmd.target_time);
		if (strcmp(k, "pos") == 0)
			return num_doubles(s, m->cmd.pos, 6);
		if (strcmp(k, "vel") == 0)
			return num_doubles(s, m->cmd.vel, 6);
		if (strcmp(k, "acc") == 0)
			return num_doubles(s, m->cmd.acc, 6);
		return -1;
	case RTL_UDP_ALARM:
		if (strcmp(k, "level") == 0 && num_int(s, 0, UINT8_MAX, &v) == 0) {
			m->alarm.level = (uint8_t)v;
			return 0;
		}
		if (strcmp(k, "group") == 0 && num_int(s, 0, UINT8_MAX, &v) == 0) {
			m->alarm.group = (uint8_t)v;
			return 0;
		}
		if (strcmp(k, "code") == 0 && num_int(s, 0, UINT32_MAX, &v) == 0) {
			m->alarm.code = (uint32_t)v;
			return 0;
		}
		if (strcmp(k, "text") == 0) {
			if (strlen(s) >= sizeof(m->alarm.text))
				return -1;
			strcpy(m->alarm.text, s);
			return 0;
		}
		return -1;
	case RTL_UDP_LIMITS:
		if (strcmp(k, "velx") == 0)
			return num_doubles(s, m->limits.velx, 2);
		if (strcmp(k, "accx") == 0)
			return num_doubles(s, m->limits.accx, 2);
		if (strcmp(k, "velj") == 0)
			return num_doubles(s, m->limits.velj, 6);
		if (strcmp(k, "accj") == 0)
			return num_doubles(s, m->limits.accj, 6);
		return -1;
	case RTL_UDP_STATE:
		return state_key(t, &m->state);
	}
	return -1;
}

int udp_spec_fields(const struct udp_spec_vector *v, struct udp_spec_msg *m, char *why, size_t len)
{
	static struct token t[MAX_TOKENS];
	int n = tokenize(v->fields, t, MAX_TOKENS);

	memset(m, 0, sizeof(*m));
	if (n < 0) {
		snprintf(why, len, "docs/udp.md:%u: vector %s: the fields do not parse", v->line,
			 v->name);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		if (strcmp(t[i].key, "type") == 0)
			m->type = type_of(t[i].val);
	if (!m->type) {
		snprintf(why, len, "docs/udp.md:%u: vector %s: no type, or an unknown name",
			 v->line, v->name);
		return -EINVAL;
	}
	m->h.version = RTL_UDP_VERSION;
	m->h.type = (uint8_t)m->type;
	{
		int size = rtl_udp_payload_size((enum rtl_udp_type)m->type);

		m->h.length = size < 0 ? 0 : (uint32_t)size;
	}
	for (int i = 0; i < n; i++) {
		const char *k = t[i].key;
		long long x;
		int r;

		if (strcmp(k, "type") == 0)
			continue;
		if (strcmp(k, "seq") == 0) {
			r = num_u64(t[i].val, &m->h.seq);
			m->has_header = true;
		} else if (strcmp(k, "send_ns") == 0) {
			r = num_int(t[i].val, INT64_MIN, INT64_MAX, &x);
			m->h.send_ns = x;
			m->has_header = true;
		} else {
			r = payload_key(m->type, &t[i], m);
		}
		if (r < 0) {
			snprintf(why, len,
				 "docs/udp.md:%u: vector %s: '%s=%s' is no field of a %s, or its "
				 "value does not fit it",
				 v->line, v->name, k, t[i].val,
				 rtl_udp_type_name((enum rtl_udp_type)m->type));
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- decode, encode, compare -------------------------------------------------------- */

int udp_spec_decode(const uint8_t *buf, size_t len, unsigned type, struct udp_spec_msg *m)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->type = type;
	switch (type) {
	case RTL_UDP_HELLO:
	case RTL_UDP_WELCOME:
		r = rtl_udp_decode_hello(&m->h, &m->hello, buf, len);
		break;
	case RTL_UDP_STATE:
		r = rtl_udp_decode_state(&m->h, &m->state, buf, len);
		break;
	case RTL_UDP_COMMAND:
		r = rtl_udp_decode_command(&m->h, &m->cmd, buf, len);
		break;
	case RTL_UDP_ALARM:
		r = rtl_udp_decode_alarm(&m->h, &m->alarm, buf, len);
		break;
	case RTL_UDP_LIMITS:
		r = rtl_udp_decode_limits(&m->h, &m->limits, buf, len);
		break;
	default:
		r = rtl_udp_decode_header(&m->h, buf, len);
		break;
	}
	m->has_header = r >= 0;
	return r;
}

int udp_spec_encode(const struct udp_spec_msg *m, uint8_t *out, size_t cap)
{
	uint64_t seq = m->h.seq;
	int64_t ns = m->h.send_ns;

	switch (m->type) {
	case RTL_UDP_HELLO:
	case RTL_UDP_WELCOME:
		return rtl_udp_encode_hello(out, cap, (enum rtl_udp_type)m->type, seq, ns,
					    &m->hello);
	case RTL_UDP_STATE:
		return rtl_udp_encode_state(out, cap, seq, ns, &m->state);
	case RTL_UDP_COMMAND:
		return rtl_udp_encode_command(out, cap, seq, ns, &m->cmd);
	case RTL_UDP_BYE:
		return rtl_udp_encode_bye(out, cap, seq, ns);
	case RTL_UDP_ALARM:
		return rtl_udp_encode_alarm(out, cap, seq, ns, &m->alarm);
	case RTL_UDP_LIMITS:
		return rtl_udp_encode_limits(out, cap, seq, ns, &m->limits);
	}
	return -EINVAL;
}

static bool same_doubles(const char *name, const double *a, const double *b, int n, char *why,
			 size_t len)
{
	for (int i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof(a[i])) != 0) {
			snprintf(why, len, "%s[%d]: %.17g, not %.17g", name, i, b[i], a[i]);
			return false;
		}
	return true;
}

/* The state, row by row of the codec's layout, bit for bit. */
static bool same_state(const struct rtl_udp_state *a, const struct rtl_udp_state *b, char *why,
		       size_t len)
{
	size_t n;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);

	for (size_t i = 0; i < n; i++) {
		const unsigned char *pa = (const unsigned char *)a + f[i].host_offset;
		const unsigned char *pb = (const unsigned char *)b + f[i].host_offset;
		unsigned esz = rtl_udp_elem_size((enum rtl_udp_elem)f[i].type);

		for (unsigned e = 0; e < f[i].count; e++)
			if (memcmp(pa + e * esz, pb + e * esz, esz) != 0) {
				snprintf(why, len, "state field %s, element %u differs", f[i].name,
					 e);
				return false;
			}
	}
	return true;
}

bool udp_spec_same(const struct udp_spec_msg *a, const struct udp_spec_msg *b, char *why,
		   size_t len)
{
#define DIFF(cond, ...)                                  \
	do {                                             \
		if (cond) {                              \
			snprintf(why, len, __VA_ARGS__); \
			return false;                    \
		}                                        \
	} while (0)
	DIFF(a->h.type != b->h.type, "type %u, not %u", b->h.type, a->h.type);
	DIFF(b->h.version != RTL_UDP_VERSION, "version %u", b->h.version);
	DIFF(b->h.flags != 0, "header flags %u", b->h.flags);
	DIFF(a->h.length != b->h.length, "length %u, not %u", b->h.length, a->h.length);
	if (a->has_header) {
		DIFF(a->h.seq != b->h.seq, "seq %llu, not %llu", (unsigned long long)b->h.seq,
		     (unsigned long long)a->h.seq);
		DIFF(a->h.send_ns != b->h.send_ns, "send_ns %lld, not %lld",
		     (long long)b->h.send_ns, (long long)a->h.send_ns);
	}
	switch (a->type) {
	case RTL_UDP_HELLO:
	case RTL_UDP_WELCOME:
		DIFF(strncmp(a->hello.schema, b->hello.schema, sizeof(a->hello.schema)) != 0,
		     "schema '%.8s', not '%.8s'", b->hello.schema, a->hello.schema);
		DIFF(a->hello.period_ns != b->hello.period_ns, "period_ns %u, not %u",
		     b->hello.period_ns, a->hello.period_ns);
		DIFF(a->hello.loss_count != b->hello.loss_count, "loss_count %d, not %d",
		     b->hello.loss_count, a->hello.loss_count);
		return true;
	case RTL_UDP_COMMAND:
		DIFF(a->cmd.mode != b->cmd.mode, "mode %u, not %u", b->cmd.mode, a->cmd.mode);
		DIFF(a->cmd.flags != b->cmd.flags, "flags %u, not %u", b->cmd.flags, a->cmd.flags);
		DIFF(a->cmd.echo_seq != b->cmd.echo_seq, "echo_seq %llu, not %llu",
		     (unsigned long long)b->cmd.echo_seq, (unsigned long long)a->cmd.echo_seq);
		DIFF(a->cmd.echo_ns != b->cmd.echo_ns, "echo_ns %lld, not %lld",
		     (long long)b->cmd.echo_ns, (long long)a->cmd.echo_ns);
		return same_doubles("target_time", &a->cmd.target_time, &b->cmd.target_time, 1, why,
				    len) &&
		       same_doubles("pos", a->cmd.pos, b->cmd.pos, 6, why, len) &&
		       same_doubles("vel", a->cmd.vel, b->cmd.vel, 6, why, len) &&
		       same_doubles("acc", a->cmd.acc, b->cmd.acc, 6, why, len);
	case RTL_UDP_ALARM:
		DIFF(a->alarm.level != b->alarm.level, "level %u, not %u", b->alarm.level,
		     a->alarm.level);
		DIFF(a->alarm.group != b->alarm.group, "group %u, not %u", b->alarm.group,
		     a->alarm.group);
		DIFF(a->alarm.code != b->alarm.code, "code %u, not %u", b->alarm.code,
		     a->alarm.code);
		DIFF(strcmp(a->alarm.text, b->alarm.text) != 0, "text \"%s\", not \"%s\"",
		     b->alarm.text, a->alarm.text);
		return true;
	case RTL_UDP_LIMITS:
		return same_doubles("velx", a->limits.velx, b->limits.velx, 2, why, len) &&
		       same_doubles("accx", a->limits.accx, b->limits.accx, 2, why, len) &&
		       same_doubles("velj", a->limits.velj, b->limits.velj, 6, why, len) &&
		       same_doubles("accj", a->limits.accj, b->limits.accj, 6, why, len);
	case RTL_UDP_STATE:
		return same_state(&a->state, &b->state, why, len);
	}
	return true;
#undef DIFF
}

long udp_spec_diff_but_stamps(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		if ((i < 16 || i >= 32) && a[i] != b[i])
			return (long)i;
	return alen == blen ? -1 : (long)n;
}

/* ---- sequences ------------------------------------------------------------------------ */

/* The @i-th word of @s into @out; false past the last. */
static bool word(const char *s, int i, char *out, size_t len)
{
	for (;;) {
		size_t n;

		while (*s == ' ')
			s++;
		if (!*s)
			return false;
		n = strcspn(s, " ");
		if (i-- == 0) {
			snprintf(out, len, "%.*s", (int)n, s);
			return true;
		}
		s += n;
	}
}

bool udp_spec_outcome_has(const struct udp_spec_step *s, const char *w)
{
	char buf[64];

	for (int i = 0; word(s->outcome, i, buf, sizeof(buf)); i++)
		if (strcmp(buf, w) == 0)
			return true;
	return false;
}

bool udp_spec_outcome_value(const struct udp_spec_step *s, const char *key, char *out, size_t len)
{
	char buf[128];
	size_t k = strlen(key);

	for (int i = 0; word(s->outcome, i, buf, sizeof(buf)); i++)
		if (strncmp(buf, key, k) == 0 && buf[k] == '=') {
			snprintf(out, len, "%s", buf + k + 1);
			return true;
		}
	return false;
}

const char *udp_spec_outcome_unknown(const struct udp_spec_step *s, const char *const *counters,
				     const char *const *keys)
{
	static char buf[128];

	for (int i = 0; word(s->outcome, i, buf, sizeof(buf)); i++) {
		const char *eq = strchr(buf, '=');
		bool known = strcmp(buf, "-") == 0;

		for (const char *const *c = counters; !known && !eq && *c; c++)
			known = strcmp(buf, *c) == 0;
		for (const char *const *c = keys; !known && eq && *c; c++)
			known = strlen(*c) == (size_t)(eq - buf) &&
				strncmp(buf, *c, strlen(*c)) == 0;
		if (!known)
			return buf;
	}
	return NULL;
}
