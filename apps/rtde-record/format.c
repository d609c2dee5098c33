// SPDX-License-Identifier: MIT
/*
 * rtde-record's file formats: the record.py-compatible CSV, the binary
 * recording with its text schema, and the binary-to-CSV dump.
 *
 * The CSV is what UR's record.py writes (csv.writer, delimiter ' ', one
 * header line, vector fields expanded name_0..name_N-1) so that UR's
 * csv_reader.py and users' scripts read it unchanged; the numbers are
 * printed the way Python prints them. Python's repr() of a float is the
 * shortest decimal that reads back to the same double; we find it by
 * asking printf for 15, then 16, then 17 significant digits and keeping the
 * first that round-trips through strtod: 15-digit decimals are spaced
 * wider than doubles, so when any string of at most 15 digits reads back
 * to v, the correctly rounded 15-digit one is that string padded with
 * zeros (subnormals, with fewer digits of precision, are searched from one
 * digit up). The layout then follows Python (fixed notation for exponents
 * -4..15, with ".0" for integral values; else "1e-05", "1.5e+16").
 *
 * One row formatter serves the live recording and the dump, so a binary
 * recording dumps to the byte-identical CSV (tests/apps/test-record.c
 * checks it).
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_fields.h>

#include "record.h"

/* ---- numbers -------------------------------------------------------------------- */

int rec_format_double(char *buf, size_t cap, double v)
{
	char tmp[40], digits[24];
	int nd = 0, exp10, p, len = 0;
	const char *s;
	char *end;

	if (isnan(v))
		return snprintf(buf, cap, "nan");
	if (isinf(v))
		return snprintf(buf, cap, v < 0 ? "-inf" : "inf");
	if (v == 0)
		return snprintf(buf, cap, signbit(v) ? "-0.0" : "0.0");
	/* Subnormals have fewer digits of precision: there the spacing argument
	 * fails, so search from one digit up (rare: values below 2.2e-308). */
	for (p = fabs(v) < DBL_MIN ? 1 : 15; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
		if (p == 17 || strtod(tmp, NULL) == v)
			break;
	}
	/* tmp: [-]d.ddddde[+-]xx */
	s = tmp;
	if (*s == '-') {
		buf[len++] = '-';
		s++;
	}
	for (; *s && *s != 'e'; s++)
		if (*s != '.')
			digits[nd++] = *s;
	exp10 = (int)strtol(s + 1, &end, 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';

	if (exp10 < -4 || exp10 >= 16) {
		buf[len++] = digits[0];
		if (nd > 1) {
			buf[len++] = '.';
			memcpy(buf + len, digits + 1, (size_t)nd - 1);
			len += nd - 1;
		}
		len += snprintf(buf + len, cap - (size_t)len, "e%c%02d", exp10 < 0 ? '-' : '+',
				abs(exp10));
		return len;
	}
	if (exp10 < 0) {
		buf[len++] = '0';
		buf[len++] = '.';
		for (int i = 0; i < -exp10 - 1; i++)
			buf[len++] = '0';
		memcpy(buf + len, digits, (size_t)nd);
		len += nd;
	} else {
		for (int i = 0; i <= exp10; i++)
			buf[len++] = i < nd ? digits[i] : '0';
		buf[len++] = '.';
		if (nd > exp10 + 1) {
			memcpy(buf + len, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
			len += nd - exp10 - 1;
		} else {
			buf[len++] = '0';
		}
	}
	buf[len] = '\0';
	return len;
}

/* ---- schema ----------------------------------------------------------------------- */

static uint32_t record_size_at(uint32_t values_offset, uint32_t values_size)
{
	return values_offset + ((values_size + 7u) & ~7u);
}

static uint32_t record_size(uint32_t values_size)
{
	return record_size_at(REC_RECORD_HEADER, values_size);
}

int rec_schema_from_recipe(struct rec_schema *s, const struct rtl_rtde_recipe *r)
{
	if (!s || !r || r->n == 0 || r->n > RTL_RTDE_RECIPE_MAX_FIELDS)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < r->n; i++) {
		struct rec_column *c = &s->cols[i];

		snprintf(c->name, sizeof(c->name), "%s", r->fields[i]->name);
		c->type = r->slots[i].type;
		c->offset = r->slots[i].host_offset;
	}
	s->n = r->n;
	s->values_size = r->host_size;
	s->record_size = record_size(r->host_size);
	s->values_offset = REC_RECORD_HEADER;
	return 0;
}

unsigned rec_csv_columns(const struct rec_schema *s, bool extra)
{
	unsigned n = extra ? 2 : 0;

	for (unsigned i = 0; i < s->n; i++)
		n += rtl_rtde_type_elems((enum rtl_rtde_type)s->cols[i].type);
	return n;
}

/* A double needs at most 24 characters ("-2.2250738585072014e-308"), a
 * 64-bit integer 20; one separator each. */
#define CELL_MAX 32

size_t rec_csv_line_max(const struct rec_schema *s)
{
	size_t names = 0;

	for (unsigned i = 0; i < s->n; i++)
		names += (strlen(s->cols[i].name) + 4) * 6;
	return (size_t)rec_csv_columns(s, true) * CELL_MAX + names + 64;
}

/* ---- CSV ---------------------------------------------------------------------------- */

int rec_csv_header(char *buf, size_t cap, const struct rec_schema *s, bool extra)
{
	size_t len = 0;
	int n;

	for (unsigned i = 0; i < s->n; i++) {
		unsigned elems = rtl_rtde_type_elems((enum rtl_rtde_type)s->cols[i].type);

		for (unsigned e = 0; e < elems; e++) {
			if (elems > 1)
				n = snprintf(buf + len, cap - len, "%s%s_%u", len ? " " : "",
					     s->cols[i].name, e);
			else
				n = snprintf(buf + len, cap - len, "%s%s", len ? " " : "",
					     s->cols[i].name);
			if (n < 0 || (size_t)n >= cap - len)
				return -ENOSPC;
			len += (size_t)n;
		}
	}
	n = snprintf(buf + len, cap - len, "%s\n", extra ? " host_time_ns lost" : "");
	if (n < 0 || (size_t)n >= cap - len)
		return -ENOSPC;
	return (int)(len + (size_t)n);
}

static int put_u64(char *p, uint64_t v)
{
	char t[24];
	int n = 0, len = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		p[len++] = t[--n];
	return len;
}

static int put_i64(char *p, int64_t v)
{
	if (v < 0) {
		p[0] = '-';
		return 1 + put_u64(p + 1, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static int put_double(char *p, const unsigned char *src)
{
	double d;

	memcpy(&d, src, sizeof(d));
	return rec_format_double(p, CELL_MAX, d);
}

int rec_csv_row(char *buf, size_t cap, const struct rec_schema *s, const struct rec_row *row,
		bool extra)
{
	size_t len = 0;

	if (cap < rec_csv_line_max(s))
		return -ENOSPC;
	for (unsigned i = 0; i < s->n; i++) {
		const unsigned char *v = row->values + s->cols[i].offset;
		enum rtl_rtde_type t = (enum rtl_rtde_type)s->cols[i].type;
		unsigned elems = rtl_rtde_type_elems(t);

		for (unsigned e = 0; e < elems; e++) {
			uint32_t u32;
			int32_t i32;
			uint64_t u64;

			if (len)
				buf[len++] = ' ';
			switch (t) {
			case RTL_RTDE_TYPE_BOOL:
				buf[len++] = v[0] ? '1' : '0';
				break;
			case RTL_RTDE_TYPE_UINT8:
				len += (size_t)put_u64(buf + len, v[0]);
				break;
			case RTL_RTDE_TYPE_UINT32:
			case RTL_RTDE_TYPE_VECTOR6UINT32:
				memcpy(&u32, v + 4 * e, 4);
				len += (size_t)put_u64(buf + len, u32);
				break;
			case RTL_RTDE_TYPE_INT32:
			case RTL_RTDE_TYPE_VECTOR6INT32:
				memcpy(&i32, v + 4 * e, 4);
				len += (size_t)put_i64(buf + len, i32);
				break;
			case RTL_RTDE_TYPE_UINT64:
				memcpy(&u64, v, 8);
				len += (size_t)put_u64(buf + len, u64);
				break;
			default: /* DOUBLE, VECTOR3D, VECTOR6D */
				len += (size_t)put_double(buf + len, v + 8 * e);
				break;
			}
		}
	}
	if (extra) {
		buf[len++] = ' ';
		len += (size_t)put_i64(buf + len, row->rx_ns);
		buf[len++] = ' ';
		len += (size_t)put_u64(buf + len, row->ctrl_skipped + row->dropped);
	}
	buf[len++] = '\n';
	buf[len] = '\0';
	return (int)len;
}

/* ---- CSV, read back --------------------------------------------------------------------- */

void rec_error_print(FILE *f, const char *prefix, const struct rec_error *e)
{
	fprintf(f, "%s%s%s\n", prefix, e->err.msg, e->detail);
}

/* A name as the CSV header may hold it: letters, digits and '_'. */
static bool name_ok(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return false;
	return true;
}

/* The @i-th space-separated token of @p[0..@n) in *@tok, *@tlen; false past
 * the last. Tokens are found one after the other: @pos carries the scan. */
static bool next_token(const char *p, size_t n, size_t *pos, const char **tok, size_t *tlen)
{
	size_t a = *pos, b;

	if (a > n)
		return false;
	for (b = a; b < n && p[b] != ' '; b++)
		;
	*tok = p + a;
	*tlen = b - a;
	*pos = b + 1;
	return true;
}

/* The line without its end ("\n", or the "\r\n" record.py's csv.writer
 * writes). */
static size_t strip_eol(const char *line, size_t len)
{
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	return len;
}

int rec_csv_read_header(const char *line, size_t len, struct rec_schema *s, bool *extra,
			struct rec_error *err)
{
	/* At most every column a scalar, plus the two extra ones. */
	enum { MAX_TOKENS = RTL_RTDE_RECIPE_MAX_FIELDS * 6 + 2 };
	const char *tok;
	size_t tlen, pos = 0, n = strip_eol(line, len), ntok = 0, i;
	uint32_t off = 0;
	bool have_ts = false;
	int ret;
	struct span {
		const char *p;
		size_t n;
	} * toks;

	memset(s, 0, sizeof(*s));
	*extra = false;
	toks = malloc(sizeof(*toks) * MAX_TOKENS);
	if (!toks)
		return rtl_error_set(rec_err(err), -ENOMEM, "out of memory");
	while (next_token(line, n, &pos, &tok, &tlen)) {
		if (ntok == MAX_TOKENS) {
			ret = rtl_error_set(rec_err(err), -ENOMSG, "more than %d columns",
					    MAX_TOKENS);
			goto out;
		}
		if (!name_ok(tok, tlen)) {
			ret = rtl_error_set(
				rec_err(err), -ENOMSG,
				"header column %zu is not a field name (letters, digits, '_')",
				ntok + 1);
			goto out;
		}
		toks[ntok].p = tok;
		toks[ntok++].n = tlen;
	}
	/* The two columns of the recorder's own, both or none, last. */
	if (ntok >= 2 && toks[ntok - 2].n == 12 && !memcmp(toks[ntok - 2].p, "host_time_ns", 12) &&
	    toks[ntok - 1].n == 4 && !memcmp(toks[ntok - 1].p, "lost", 4)) {
		*extra = true;
		ntok -= 2;
	}
	for (i = 0; i < ntok;) {
		const struct rtl_rtde_field *f = rtl_rtde_field_find_n(toks[i].p, toks[i].n);
		enum rtl_rtde_type t = RTL_RTDE_TYPE_DOUBLE;
		size_t name_len = toks[i].n, used = 1;
		unsigned elems;

		if (f && rtl_rtde_type_elems(f->type) == 1) {
			t = f->type;
		} else if (toks[i].n > 2 && !memcmp(toks[i].p + toks[i].n - 2, "_0", 2) &&
			   (f = rtl_rtde_field_find_n(toks[i].p, toks[i].n - 2)) &&
			   rtl_rtde_type_elems(f->type) > 1) {
			/* name_0 .. name_{n-1}: one vector field. */
			t = f->type;
			name_len = toks[i].n - 2;
			elems = rtl_rtde_type_elems(t);
			for (unsigned e = 1; e < elems; e++) {
				char want[REC_NAME_MAX + 8];
				int w = snprintf(want, sizeof(want), "%.*s_%u", (int)name_len,
						 toks[i].p, e);

				if (i + e >= ntok || toks[i + e].n != (size_t)w ||
				    memcmp(toks[i + e].p, want, (size_t)w)) {
					ret = rtl_error_set(
						rec_err(err), -EBADMSG,
						"header: the vector %.*s is not expanded as "
						"%.*s_0 .. %.*s_%u",
						(int)name_len, toks[i].p, (int)name_len, toks[i].p,
						(int)name_len, toks[i].p, elems - 1);
					goto out;
				}
			}
			used = elems;
		} else if (f) {
			ret = rtl_error_set(rec_err(err), -EBADMSG,
					    "header: the vector %.*s must be expanded as %.*s_0 ..",
					    (int)toks[i].n, toks[i].p, (int)toks[i].n, toks[i].p);
			goto out;
		}
		/* else a name this registry does not know: a double, as record.py's
		 * readers take every column. */
		if (name_len >= REC_NAME_MAX || s->n == RTL_RTDE_RECIPE_MAX_FIELDS) {
			ret = rtl_error_set(rec_err(err), -EBADMSG,
					    "header: a name too long, or too many fields");
			goto out;
		}
		for (unsigned c = 0; c < s->n; c++)
			if (strlen(s->cols[c].name) == name_len &&
			    !memcmp(s->cols[c].name, toks[i].p, name_len)) {
				ret = rtl_error_set(rec_err(err), -EBADMSG,
						    "header: the field %.*s twice", (int)name_len,
						    toks[i].p);
				goto out;
			}
		memcpy(s->cols[s->n].name, toks[i].p, name_len);
		s->cols[s->n].name[name_len] = '\0';
		s->cols[s->n].type = (uint8_t)t;
		s->cols[s->n].offset = off;
		off += (uint32_t)rtl_rtde_type_size(t);
		if (t == RTL_RTDE_TYPE_DOUBLE && !strcmp(s->cols[s->n].name, "timestamp"))
			have_ts = true;
		s->n++;
		i += used;
	}
	if (!have_ts) {
		ret = rtl_error_set(
			rec_err(err), -ENOMSG,
			"no timestamp column (rtde-record records timestamp in every file)");
		goto out;
	}
	s->values_size = off;
	s->record_size = record_size(off);
	s->values_offset = REC_RECORD_HEADER;
	ret = 0;
out:
	free(toks);
	return ret;
}

/* Cells are copied out (at most this long) so that strtod stops at the
 * cell's end whatever follows it. */
#define CELL_TEXT_MAX 64

static bool parse_u64_text(const char *p, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	if (x > max)
		return false;
	*v = x;
	return true;
}

static bool parse_i64_text(const char *p, size_t n, int64_t min, int64_t max, int64_t *v)
{
	uint64_t u;
	bool neg = n && p[0] == '-';

	if (!parse_u64_text(p + neg, n - neg, neg ? (uint64_t)0 - (uint64_t)min : (uint64_t)max,
			    &u))
		return false;
	*v = neg ? (int64_t)((uint64_t)0 - u) : (int64_t)u;
	return true;
}

static bool parse_double_text(const char *p, size_t n, double *v)
{
	char cell[CELL_TEXT_MAX];
	char *end;

	if (n == 0 || n >= sizeof(cell))
		return false;
	memcpy(cell, p, n);
	cell[n] = '\0';
	*v = strtod(cell, &end);
	return *end == '\0';
}

int rec_csv_parse_row(const char *line, size_t len, const struct rec_schema *s, bool extra,
		      unsigned char *values, struct rec_row *row, struct rec_error *err)
{
	size_t n = strip_eol(line, len), pos = 0, tlen;
	unsigned cell = 0, want = rec_csv_columns(s, extra);
	const char *tok;

	memset(row, 0, sizeof(*row));
	memset(values, 0, s->values_size);
	row->values = values;
	if (n == 0)
		return rtl_error_set(rec_err(err), -EBADMSG,
				     "an empty line, the header has %u cells", want);
	for (unsigned i = 0; i < s->n; i++) {
		enum rtl_rtde_type t = (enum rtl_rtde_type)s->cols[i].type;
		unsigned elems = rtl_rtde_type_elems(t);
		unsigned char *dst = values + s->cols[i].offset;

		for (unsigned e = 0; e < elems; e++, cell++) {
			uint64_t u;
			int64_t i64;
			uint32_t u32;
			int32_t i32;
			double d;
			bool ok;

			if (!next_token(line, n, &pos, &tok, &tlen))
				return rtl_error_set(rec_err(err), -EBADMSG,
						     "%u cells, the header has %u", cell, want);
			switch (t) {
			case RTL_RTDE_TYPE_BOOL:
				ok = (tlen == 1 && (tok[0] == '0' || tok[0] == '1')) ||
				     (tlen == 4 && !memcmp(tok, "True", 4)) ||
				     (tlen == 5 && !memcmp(tok, "False", 5));
				dst[0] = ok && (tok[0] == '1' || tok[0] == 'T');
				break;
			case RTL_RTDE_TYPE_UINT8:
				ok = parse_u64_text(tok, tlen, UINT8_MAX, &u);
				if (ok)
					dst[0] = (uint8_t)u;
				break;
			case RTL_RTDE_TYPE_UINT32:
			case RTL_RTDE_TYPE_VECTOR6UINT32:
				ok = parse_u64_text(tok, tlen, UINT32_MAX, &u);
				u32 = (uint32_t)u;
				if (ok)
					memcpy(dst + 4 * e, &u32, 4);
				break;
			case RTL_RTDE_TYPE_INT32:
			case RTL_RTDE_TYPE_VECTOR6INT32:
				ok = parse_i64_text(tok, tlen, INT32_MIN, INT32_MAX, &i64);
				i32 = (int32_t)i64;
				if (ok)
					memcpy(dst + 4 * e, &i32, 4);
				break;
			case RTL_RTDE_TYPE_UINT64:
				ok = parse_u64_text(tok, tlen, UINT64_MAX, &u);
				if (ok)
					memcpy(dst, &u, 8);
				break;
			default: /* DOUBLE, VECTOR3D, VECTOR6D */
				ok = parse_double_text(tok, tlen, &d);
				if (ok)
					memcpy(dst + 8 * e, &d, 8);
				break;
			}
			if (!ok) {
				if (elems > 1)
					return rtl_error_set(
						rec_err(err), -EBADMSG,
						"cell %u (%s_%u): '%.*s' is not a %s value",
						cell + 1, s->cols[i].name, e,
						(int)(tlen < 40 ? tlen : 40), tok,
						rtl_rtde_type_name(t));
				return rtl_error_set(rec_err(err), -EBADMSG,
						     "cell %u (%s): '%.*s' is not a %s value",
						     cell + 1, s->cols[i].name,
						     (int)(tlen < 40 ? tlen : 40), tok,
						     rtl_rtde_type_name(t));
			}
		}
	}
	if (extra) {
		uint64_t lost;

		if (!next_token(line, n, &pos, &tok, &tlen))
			return rtl_error_set(rec_err(err), -EBADMSG, "%u cells, the header has %u",
					     cell, want);
		if (!parse_i64_text(tok, tlen, INT64_MIN, INT64_MAX, &row->rx_ns))
			return rtl_error_set(
				rec_err(err), -EBADMSG,
				"cell %u (host_time_ns): '%.*s' is not a 64-bit integer", cell + 1,
				(int)(tlen < 40 ? tlen : 40), tok);
		if (!next_token(line, n, &pos, &tok, &tlen))
			return rtl_error_set(rec_err(err), -EBADMSG, "%u cells, the header has %u",
					     cell + 1, want);
		if (!parse_u64_text(tok, tlen, UINT64_MAX, &lost))
			return rtl_error_set(
				rec_err(err), -EBADMSG,
				"cell %u (lost): '%.*s' is not an unsigned 64-bit integer",
				cell + 2, (int)(tlen < 40 ? tlen : 40), tok);
		/* The CSV holds the sum: the controller's skips and the host's drops. */
		row->ctrl_skipped = lost;
		cell += 2;
	}
	if (pos <= n) {
		unsigned more = cell;

		while (next_token(line, n, &pos, &tok, &tlen))
			more++;
		return rtl_error_set(rec_err(err), -EBADMSG, "%u cells, the header has %u", more,
				     want);
	}
	return 0;
}

/* ---- binary ----------------------------------------------------------------------------- */

int rec_bin_header(char *buf, size_t cap, const struct rec_schema *s, const struct rec_meta *m)
{
	size_t len;
	int n;

	n = snprintf(buf, cap,
		     REC_MAGIC "# rtde-record binary recording; see docs/rtde-record.md\n"
			       "endian little\n"
			       "host %s\n"
			       "port %u\n"
			       "controller %s\n"
			       "frequency %.17g\n"
			       "period_ns %" PRId64 "\n"
			       "record_size %" PRIu32 "\n"
			       "values_offset %d\n"
			       "values_size %" PRIu32 "\n"
			       "fields %u\n",
		     m->host[0] ? m->host : "-", m->port, m->controller[0] ? m->controller : "-",
		     m->frequency, m->period_ns, s->record_size, REC_RECORD_HEADER, s->values_size,
		     s->n);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	len = (size_t)n;
	for (unsigned i = 0; i < s->n; i++) {
		n = snprintf(buf + len, cap - len, "field %s %s %" PRIu32 "\n", s->cols[i].name,
			     rtl_rtde_type_name((enum rtl_rtde_type)s->cols[i].type),
			     s->cols[i].offset);
		if (n < 0 || (size_t)n >= cap - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	n = snprintf(buf + len, cap - len, "end\n");
	if (n < 0 || (size_t)n >= cap - len)
		return -ENOSPC;
	return (int)(len + (size_t)n);
}

static void le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int rec_bin_row(unsigned char *buf, size_t cap, const struct rec_schema *s,
		const struct rec_row *row)
{
	size_t pad = s->record_size - REC_RECORD_HEADER - s->values_size;

	if (cap < s->record_size)
		return -ENOSPC;
	le64(buf, row->seq);
	le64(buf + 8, (uint64_t)row->rx_ns);
	le64(buf + 16, row->ctrl_skipped);
	le64(buf + 24, row->dropped);
	/* The values are in host form; the header says "endian little" and the
	 * dump refuses other hosts (rtloop runs on x86-64 and arm64). */
	memcpy(buf + REC_RECORD_HEADER, row->values, s->values_size);
	memset(buf + REC_RECORD_HEADER + s->values_size, 0, pad);
	return (int)s->record_size;
}

void rec_bin_parse_row(const struct rec_schema *s, const unsigned char *rec, struct rec_row *row)
{
	row->seq = get_le64(rec);
	row->rx_ns = (int64_t)get_le64(rec + 8);
	if (s->values_offset == REC_RECORD_HEADER_V0) {
		/* 0.1.0's layout: the counts were u32. */
		row->ctrl_skipped = get_le32(rec + 16);
		row->dropped = get_le32(rec + 20);
	} else {
		row->ctrl_skipped = get_le64(rec + 16);
		row->dropped = get_le64(rec + 24);
	}
	row->values = rec + s->values_offset;
}

static int bad(struct rec_error *err, unsigned line, const char *what)
{
	return rtl_error_set(rec_err(err), -EBADMSG,
			     "not a valid rtde-record binary recording: header line %u: %s", line,
			     what);
}

int rec_bin_read_header(FILE *f, struct rec_schema *s, struct rec_meta *m, struct rec_error *err)
{
	char line[512], name[REC_NAME_MAX], type[32];
	unsigned fields = 0, line_no = 1, n_declared = 0, port = 0;
	unsigned long long u;
	long long ll;
	bool have_rs = false, have_vs = false, have_fields = false;

	memset(s, 0, sizeof(*s));
	memset(m, 0, sizeof(*m));
	if (!fgets(line, sizeof(line), f) || strcmp(line, REC_MAGIC) != 0)
		return bad(err, 1, "no RTLREC1 magic (is it a CSV? only binary files dump)");
	while (fgets(line, sizeof(line), f)) {
		unsigned off;
		int t;

		line_no++;
		if (!strchr(line, '\n'))
			return bad(err, line_no, "line too long or cut short");
		if (line[0] == '#')
			continue;
		if (strcmp(line, "end\n") == 0) {
			if (!have_rs || !have_vs || !have_fields || fields != n_declared ||
			    fields == 0)
				return bad(err, line_no, "schema incomplete before 'end'");
			if (!s->values_offset)
				s->values_offset = REC_RECORD_HEADER_V0;
			if (s->record_size != record_size_at(s->values_offset, s->values_size))
				return bad(err, line_no, "record_size does not match values_size");
			return 0;
		}
		if (strcmp(line, "endian little\n") == 0)
			continue;
		if (strncmp(line, "endian ", 7) == 0)
			return bad(err, line_no, "recorded on a big-endian host");
		if (sscanf(line, "host %127s", m->host) == 1)
			continue;
		if (sscanf(line, "port %u", &port) == 1) {
			m->port = (uint16_t)port;
			continue;
		}
		if (sscanf(line, "controller %31s", m->controller) == 1)
			continue;
		if (sscanf(line, "frequency %lf", &m->frequency) == 1)
			continue;
		if (sscanf(line, "period_ns %lld", &ll) == 1) {
			m->period_ns = ll;
			continue;
		}
		if (sscanf(line, "record_size %llu", &u) == 1) {
			if (have_rs)
				return bad(err, line_no, "record_size given twice");
			s->record_size = (uint32_t)u;
			have_rs = true;
			continue;
		}
		if (sscanf(line, "values_offset %llu", &u) == 1) {
			if (u != REC_RECORD_HEADER && u != REC_RECORD_HEADER_V0)
				return bad(err, line_no, "unsupported values_offset");
			if (s->values_offset)
				return bad(err, line_no, "values_offset given twice");
			s->values_offset = (uint32_t)u;
			continue;
		}
		if (sscanf(line, "values_size %llu", &u) == 1) {
			if (u == 0 || u > (1u << 20))
				return bad(err, line_no, "values_size out of range");
			/* Once: the fields were checked against the first one. */
			if (have_vs)
				return bad(err, line_no, "values_size given twice");
			s->values_size = (uint32_t)u;
			have_vs = true;
			continue;
		}
		if (sscanf(line, "fields %u", &n_declared) == 1) {
			if (n_declared == 0 || n_declared > RTL_RTDE_RECIPE_MAX_FIELDS)
				return bad(err, line_no, "field count out of range");
			if (have_fields)
				return bad(err, line_no, "fields given twice");
			have_fields = true;
			continue;
		}
		if (sscanf(line, "field %63s %31s %u", name, type, &off) == 3) {
			if (!have_vs || fields >= RTL_RTDE_RECIPE_MAX_FIELDS)
				return bad(err, line_no, "field before values_size, or too many");
			t = rtl_rtde_type_from_name(type, strlen(type));
			if (t < 0 || !rtl_rtde_type_is_value((enum rtl_rtde_type)t))
				return bad(err, line_no, "unknown field type");
			if ((uint64_t)off + rtl_rtde_type_size((enum rtl_rtde_type)t) >
			    s->values_size)
				return bad(err, line_no, "field offset past the values");
			snprintf(s->cols[fields].name, sizeof(s->cols[fields].name), "%s", name);
			s->cols[fields].type = (uint8_t)t;
			s->cols[fields].offset = off;
			s->n = ++fields;
			continue;
		}
		return bad(err, line_no, "unknown line");
	}
	if (ferror(f)) {
		return rtl_error_set(rec_err(err), -EIO, "read error in the binary header");
	}
	return bad(err, line_no, "no 'end' line");
}

static int fail_errno(struct rec_error *err, int code, const char *what, const char *path)
{
	return rtl_error_set(rec_err(err), code, "%s '%s': %s", what, path, strerror(-code));
}

int rec_dump(const char *in_path, const char *out_path, bool extra, uint64_t *rows,
	     struct rec_error *err)
{
	struct rec_schema *s = NULL;
	struct rec_meta m;
	unsigned char *rec = NULL;
	char *line = NULL;
	size_t line_cap;
	uint64_t n = 0;
	FILE *in, *out = NULL;
	bool to_stdout = out_path && strcmp(out_path, "-") == 0;
	int ret, len;

	if (err)
		*err = (struct rec_error){ 0 };
	in = fopen(in_path, "rb");
	if (!in)
		return fail_errno(err, -errno, "cannot open the binary recording", in_path);
	s = malloc(sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	ret = rec_bin_read_header(in, s, &m, err);
	if (ret < 0)
		goto out;
	line_cap = rec_csv_line_max(s);
	line = malloc(line_cap);
	rec = malloc(s->record_size);
	if (!line || !rec) {
		ret = -ENOMEM;
		goto out;
	}
	if (!out_path || to_stdout) {
		out = stdout;
	} else {
		out = fopen(out_path, "w");
		if (!out) {
			ret = fail_errno(err, -errno, "cannot create", out_path);
			goto out;
		}
	}
	setvbuf(out, NULL, _IOFBF, REC_IO_BUFFER);
	len = rec_csv_header(line, line_cap, s, extra);
	if (len < 0 || fwrite(line, (size_t)len, 1, out) != 1) {
		ret = -EIO;
		goto out;
	}
	for (;;) {
		size_t got = fread(rec, 1, s->record_size, in);
		struct rec_row row;

		if (got == 0)
			break;
		if (got < s->record_size) {
			rtl_error_set(rec_err(err), 0,
				      "the last record is cut short (%zu of %" PRIu32
				      " bytes): ignored",
				      got, s->record_size);
			break;
		}
		rec_bin_parse_row(s, rec, &row);
		len = rec_csv_row(line, line_cap, s, &row, extra);
		if (len < 0 || fwrite(line, (size_t)len, 1, out) != 1) {
			ret = -EIO;
			goto out;
		}
		n++;
	}
	if (ferror(in)) {
		ret = fail_errno(err, -EIO, "read error in", in_path);
		goto out;
	}
	ret = 0;
out:
	if (out && fflush(out) != 0 && ret == 0)
		ret = -EIO;
	if (ret == -EIO && err && !err->err.msg[0])
		rtl_error_set(&err->err, ret, "cannot write the CSV '%s': %s",
			      out_path ? out_path : "-", strerror(errno ? errno : EIO));
	if (ret == -ENOMEM)
		rtl_error_set(rec_err(err), ret, "out of memory");
	if (err && ret < 0)
		err->err.code = ret;
	if (out && out != stdout && fclose(out) != 0 && ret == 0)
		ret = -EIO;
	fclose(in);
	free(line);
	free(rec);
	free(s);
	if (rows)
		*rows = n;
	return ret;
}
