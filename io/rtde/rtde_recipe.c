// SPDX-License-Identifier: MIT
/*
 * RTDE recipes: builders from names, text and UR's XML, the checks that run
 * before anything is sent, the offset and run tables, decode/encode, and
 * the texts that explain a controller's NOT_FOUND and IN_USE (design in
 * rtde_recipe.h).
 *
 * Every source (array, comma list, text lines, XML elements) ends up in
 * add_field(), which runs all the per-name checks and collects problems
 * instead of stopping at the first: a user fixing a recipe wants the whole
 * list at once. finish() then runs the per-recipe checks and computes the
 * layout: the slots (per field) and the runs that decode and encode walk.
 * The builder never allocates; expat allocates its own parser state, which
 * is freed before the builder returns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <expat.h>

#include <rtloop/log.h>
#include <rtloop/rtde_recipe.h>
#include <rtloop/sized.h>

/* The guide's limit on a setup request's names list (CB3 may enforce it;
 * PolyScope 5 does not, docs/rtde-protocol.md 6.2). */
#define GUIDE_NAMES_LIMIT 2048

/* ---- report ------------------------------------------------------------ */

/* Start the report in @rep, or in @local when the caller passed none; the
 * report in use. */
static struct rtl_rtde_report *report_start(struct rtl_rtde_report *rep,
					    struct rtl_rtde_report *local)
{
	if (!rep)
		rep = local;
	rep->error = 0;
	rep->errors = 0;
	rep->warnings = 0;
	rep->dropped = 0;
	rep->line = 0;
	rep->field[0] = '\0';
	rep->truncated = false;
	rep->len = 0;
	rep->text[0] = '\0';
	return rep;
}

/* Append "error: " or "warning: " + ("line N: ") + the message + "\n".
 * @code 0 is a warning, which also goes to rtl_log(). */
__attribute__((format(printf, 5, 6))) static void report(struct rtl_rtde_report *rep, int code,
							 unsigned line, const char *field,
							 const char *fmt, ...)
{
	char msg[768];
	size_t off = 0;
	va_list ap;
	int n;

	if (line)
		off = (size_t)snprintf(msg, sizeof(msg), "line %u: ", line);
	va_start(ap, fmt);
	vsnprintf(msg + off, sizeof(msg) - off, fmt, ap);
	va_end(ap);

	if (code == 0) {
		rep->warnings++;
		rtl_log(RTL_LOG_WARN, "RTDE recipe: %s", msg);
	} else {
		if (rep->errors++ == 0) {
			rep->error = code;
			rep->line = line;
			snprintf(rep->field, sizeof(rep->field), "%s", field ? field : "");
		}
	}
	if (rep->truncated)
		return;
	n = snprintf(rep->text + rep->len, sizeof(rep->text) - rep->len, "%s: %s\n",
		     code ? "error" : "warning", msg);
	if (n < 0 || (size_t)n >= sizeof(rep->text) - rep->len) {
		/* Keep whole lines only: cut back to the last complete one. */
		rep->text[rep->len] = '\0';
		rep->truncated = true;
		return;
	}
	rep->len += (size_t)n;
}

/* Copy at most @cap - 1 bytes of a non-terminated name for messages. */
static const char *name_str(char *buf, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

/* ---- explanations shared by the builder and the reply checks --------- */

static unsigned dir_flag(enum rtl_rtde_recipe_dir dir)
{
	return dir == RTL_RTDE_RECIPE_INPUT ? RTL_RTDE_FIELD_INPUT : RTL_RTDE_FIELD_OUTPUT;
}

/* "CB3 3.11.0, e-Series 5.5.1, all PolyScope X versions" */
static void history(char *buf, size_t cap, const struct rtl_rtde_field *f)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int l = 0; l < RTL_RTDE_LINE_COUNT && off < cap; l++) {
		uint64_t s = f->since[l];
		const char *sep = l ? ", " : "";
		const char *line = rtl_rtde_line_name((enum rtl_rtde_line)l);
		char v[32];
		int n;

		if (s == RTL_RTDE_VERSION_ABSENT) {
			n = snprintf(buf + off, cap - off, "%snot on %s", sep, line);
		} else if (s == 0) {
			n = snprintf(buf + off, cap - off, "%sall %s versions", sep, line);
		} else {
			rtl_rtde_version_format(v, sizeof(v), s);
			n = snprintf(buf + off, cap - off, "%s%s %s", sep, line, v);
		}
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/* Whether @f has been on every line since RTDE came to it. */
static bool everywhere(const struct rtl_rtde_field *f)
{
	for (int l = 0; l < RTL_RTDE_LINE_COUNT; l++)
		if (f->since[l] != 0)
			return false;
	return true;
}

/* "e-Series 5.12.2" or "unknown version". */
static void controller_str(char *buf, size_t cap, uint64_t version)
{
	char v[32];

	if (version == 0) {
		snprintf(buf, cap, "version unknown");
		return;
	}
	rtl_rtde_version_format(v, sizeof(v), version);
	snprintf(buf, cap, "%s %s", rtl_rtde_line_name(rtl_rtde_version_line(version)), v);
}

/*
 * Why a name is not a field: register numbering out of range gets its own
 * text, otherwise the closest name of @dir (if any). Writes into @buf.
 */
static void explain_unknown(char *buf, size_t cap, const char *name, size_t len,
			    enum rtl_rtde_recipe_dir dir)
{
	static const struct {
		const char *prefix;
		const char *kind;
	} regs[] = {
		{ "input_bit_register_", "input_bit" }, { "output_bit_register_", "output_bit" },
		{ "input_int_register_", "int" },	{ "output_int_register_", "int" },
		{ "input_double_register_", "double" }, { "output_double_register_", "double" },
	};
	const struct rtl_rtde_field *s;
	char nm[RTL_RTDE_REPORT_FIELD_MAX];

	name_str(nm, sizeof(nm), name, len);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		size_t pl = strlen(regs[i].prefix);

		if (len <= pl || memcmp(name, regs[i].prefix, pl) != 0)
			continue;
		if (name[pl] == '0' && len > pl + 1) {
			snprintf(buf, cap,
				 "unknown field '%s': register numbers are written without leading "
				 "zeros",
				 nm);
		} else if (strstr(regs[i].kind, "bit")) {
			const char *io = regs[i].kind[0] == 'i' ? "input" : "output";

			snprintf(buf, cap,
				 "unknown field '%s': single bit registers exist for 64-127 only; "
				 "bits 0-63 are read and written as the packed UINT32 words "
				 "%s_bit_registers0_to_31 and %s_bit_registers32_to_63",
				 nm, io, io);
		} else {
			snprintf(
				buf, cap,
				"unknown field '%s': %s registers are numbered 0-47 (0-23 fieldbus "
				"range, 24-47 for external clients)",
				nm, regs[i].kind);
		}
		return;
	}
	s = rtl_rtde_field_suggest(NULL, name, len, dir_flag(dir));
	if (s)
		snprintf(buf, cap, "unknown field '%s'; did you mean '%s'?", nm, s->name);
	else
		snprintf(buf, cap, "unknown field '%s'", nm);
}

/* A field of the other direction. */
static void explain_wrong_dir(char *buf, size_t cap, const struct rtl_rtde_field *f,
			      enum rtl_rtde_recipe_dir dir)
{
	const struct rtl_rtde_field *s =
		rtl_rtde_field_suggest(NULL, f->name, strlen(f->name), dir_flag(dir));
	int n;

	if (dir == RTL_RTDE_RECIPE_INPUT)
		n = snprintf(buf, cap,
			     "'%s' is an output field (the controller reports it); an input "
			     "recipe cannot write it",
			     f->name);
	else
		n = snprintf(buf, cap,
			     "'%s' is an input field (the client writes it) and cannot be read "
			     "back in an output recipe",
			     f->name);
	if (s && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "; did you mean '%s'?", s->name);
}

/* A field the controller's version does not have, by the registry. */
static void explain_too_new(char *buf, size_t cap, const struct rtl_rtde_field *f, uint64_t version)
{
	char h[160], c[48];

	history(h, sizeof(h), f);
	controller_str(c, sizeof(c), version);
	snprintf(buf, cap, "field '%s' is not available on this controller (%s): %s%s", f->name, c,
		 h, f->flags & RTL_RTDE_FIELD_VERSION_APPROX ? " (known present by then)" : "");
}

/* The register of the external-client range that mirrors fieldbus
 * register @f, as advice. */
static void fieldbus_advice(char *buf, size_t cap, const struct rtl_rtde_field *f)
{
	const char *io = (f->flags & RTL_RTDE_FIELD_INPUT) ? "input" : "output";

	if (f->reg == RTL_RTDE_REG_INT || f->reg == RTL_RTDE_REG_DOUBLE) {
		const char *kind = f->reg == RTL_RTDE_REG_INT ? "int" : "double";

		snprintf(buf, cap,
			 "external clients should use %s_%s_register_24..47 (e.g. "
			 "%s_%s_register_%u)",
			 io, kind, io, kind, f->reg_index + 24u);
	} else {
		snprintf(buf, cap, "external clients should use %s_bit_register_64..127", io);
	}
}

/* NOT_FOUND for a known field of the right direction. */
static void explain_not_found(char *buf, size_t cap, const struct rtl_rtde_field *f,
			      uint64_t version)
{
	char h[160], c[48];

	history(h, sizeof(h), f);
	controller_str(c, sizeof(c), version);
	if (f->flags & RTL_RTDE_FIELD_VERSION_UNKNOWN) {
		snprintf(buf, cap,
			 "the controller (%s) answered NOT_FOUND for '%s': the firmware is "
			 "probably too old for it (the reference records no version for this "
			 "field)",
			 c, f->name);
	} else if (version && !rtl_rtde_field_available(f, version)) {
		snprintf(buf, cap,
			 "the controller (%s) answered NOT_FOUND for '%s': the firmware is too "
			 "old (%s%s)",
			 c, f->name, h,
			 f->flags & RTL_RTDE_FIELD_VERSION_APPROX ? ", known present by then" : "");
	} else if (everywhere(f)) {
		snprintf(buf, cap,
			 "the controller (%s) answered NOT_FOUND for '%s', which every controller "
			 "version has since RTDE came: is the peer a simulator or gateway with a "
			 "reduced field set?",
			 c, f->name);
	} else {
		snprintf(buf, cap,
			 "the controller (%s) answered NOT_FOUND for '%s': is the firmware too "
			 "old? It came with %s%s",
			 c, f->name, h,
			 f->flags & RTL_RTDE_FIELD_VERSION_APPROX ? " (known present by then)"
								  : "");
	}
}

/* IN_USE for a field (normally an input). */
static void explain_in_use(char *buf, size_t cap, const struct rtl_rtde_field *f)
{
	char adv[128];

	if (f->flags & RTL_RTDE_FIELD_FIELDBUS) {
		fieldbus_advice(adv, sizeof(adv), f);
		snprintf(buf, cap,
			 "the controller answered IN_USE for '%s': it is in the fieldbus range, so "
			 "an enabled EtherNet/IP, PROFINET or MODBUS adapter probably owns it "
			 "(disable the adapter in the installation); otherwise another RTDE client "
			 "or a URCap writes it; %s",
			 f->name, adv);
	} else if (f->flags & RTL_RTDE_FIELD_STANDARD_INPUT) {
		snprintf(buf, cap,
			 "the controller answered IN_USE for '%s': an enabled EtherNet/IP (also "
			 "reported for PROFINET and MODBUS) adapter claims all standard inputs, "
			 "speed slider and digital/analog outputs included (disable the adapter "
			 "or drop the field); otherwise another RTDE client or a URCap writes it",
			 f->name);
	} else {
		snprintf(buf, cap,
			 "the controller answered IN_USE for '%s': another RTDE client (another "
			 "program, a driver, or a connection of this program the controller has "
			 "not closed yet) or a URCap writes it; ownership ends when that "
			 "connection closes",
			 f->name);
	}
}

/* ---- building ---------------------------------------------------------- */

/* A recipe that decodes and encodes nothing: what every failed build
 * leaves behind (no stale runs of an earlier build). */
static void empty_recipe(struct rtl_rtde_recipe *r)
{
	r->n = 0;
	r->wire_size = 0;
	r->host_size = 0;
	r->n_runs = 0;
}

struct builder {
	struct rtl_rtde_recipe *r;
	const struct rtl_rtde_recipe_opts *o; /* &opts */
	struct rtl_rtde_recipe_opts opts;     /* the caller's, at this library's size */
	struct rtl_rtde_report *rep;	      /* the caller's, or &local */
	struct rtl_rtde_report local;	      /* the report when the caller passed none */
	bool too_many;			      /* -E2BIG already reported */
};

static void builder_init(struct builder *b, struct rtl_rtde_recipe *r, struct rtl_rtde_report *rep)
{
	const struct rtl_rtde_recipe_opts *o = &b->opts;

	b->r = r;
	b->o = o;
	b->rep = rep;
	b->too_many = false;
	r->dir = o->dir;
	empty_recipe(r);
	r->controller_version = o->controller_version;
}

/*
 * Check one name (and the XML type attribute @type, NULL if absent) and
 * append it, or report why not.
 */
static void add_field(struct builder *b, const char *name, size_t len, const char *type,
		      unsigned line)
{
	struct rtl_rtde_recipe *r = b->r;
	const struct rtl_rtde_field *f = rtl_rtde_field_find_n(name, len);
	char msg[512], nm[RTL_RTDE_REPORT_FIELD_MAX];

	name_str(nm, sizeof(nm), name, len);
	if (!f) {
		explain_unknown(msg, sizeof(msg), name, len, b->o->dir);
		report(b->rep, -ENOENT, line, nm, "%s", msg);
		return;
	}
	if (!(f->flags & dir_flag(b->o->dir))) {
		explain_wrong_dir(msg, sizeof(msg), f, b->o->dir);
		report(b->rep, -ENOENT, line, nm, "%s", msg);
		return;
	}
	if (type) {
		int t = rtl_rtde_type_from_name(type, strlen(type));

		if (t < 0 || !rtl_rtde_type_is_value((enum rtl_rtde_type)t)) {
			report(b->rep, -EPROTO, line, nm,
			       "field '%s': '%s' is not an RTDE type (its type is %s)", f->name,
			       type, rtl_rtde_type_name(f->type));
			return;
		}
		if ((enum rtl_rtde_type)t != f->type) {
			report(b->rep, -EPROTO, line, nm,
			       "field '%s' has type %s, but the recipe says %s", f->name,
			       rtl_rtde_type_name(f->type), type);
			return;
		}
	}
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->fields[i] == f) {
			report(b->rep, -EEXIST, line, nm,
			       "field '%s' appears twice (entries %u and %u)", f->name, i + 1,
			       r->n + 1);
			return;
		}
	}
	if (!rtl_rtde_field_available(f, b->o->controller_version)) {
		explain_too_new(msg, sizeof(msg), f, b->o->controller_version);
		if (b->o->flags & RTL_RTDE_RECIPE_DROP_UNAVAILABLE) {
			b->rep->dropped++;
			report(b->rep, 0, line, nm, "%s; dropped from the recipe", msg);
		} else {
			report(b->rep, -EPROTO, line, nm, "%s", msg);
		}
		return;
	}
	if (r->n >= RTL_RTDE_RECIPE_MAX_FIELDS) {
		if (!b->too_many)
			report(b->rep, -E2BIG, line, nm,
			       "too many fields: a recipe holds at most %d (first one over: "
			       "'%s')",
			       RTL_RTDE_RECIPE_MAX_FIELDS, f->name);
		b->too_many = true;
		return;
	}
	if (b->o->dir == RTL_RTDE_RECIPE_INPUT && (f->flags & RTL_RTDE_FIELD_FIELDBUS) &&
	    !(b->o->flags & RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING)) {
		char adv[128];

		fieldbus_advice(adv, sizeof(adv), f);
		report(b->rep, 0, line, nm,
		       "'%s' is in the range fieldbus adapters own: with EtherNet/IP, PROFINET "
		       "or MODBUS enabled the controller answers IN_USE; %s",
		       f->name, adv);
	}
	r->fields[r->n++] = f;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* The run kind of a value type's elements. */
static enum rtl_rtde_run_kind run_kind(enum rtl_rtde_type t)
{
	switch (t) {
	case RTL_RTDE_TYPE_BOOL:
		return RTL_RTDE_RUN_BOOL;
	case RTL_RTDE_TYPE_UINT8:
		return RTL_RTDE_RUN_COPY8;
	case RTL_RTDE_TYPE_UINT32:
	case RTL_RTDE_TYPE_INT32:
	case RTL_RTDE_TYPE_VECTOR6INT32:
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		return RTL_RTDE_RUN_SWAP32;
	default: /* UINT64, DOUBLE, VECTOR3D, VECTOR6D */
		return RTL_RTDE_RUN_SWAP64;
	}
}

/* The 512 fields of at most 6 elements fit a run's 16-bit count. */
_Static_assert(RTL_RTDE_RECIPE_MAX_FIELDS * 6 <= UINT16_MAX, "run count overflows");

/*
 * Add the @elems elements of @kind, @esize bytes each, at @wire / @host to
 * the runs of @r: to the last run when they continue it on the wire and in
 * the frame, else as a new run.
 */
static void add_run(struct rtl_rtde_recipe *r, enum rtl_rtde_run_kind kind, size_t esize,
		    size_t elems, size_t wire, size_t host)
{
	if (r->n_runs) {
		struct rtl_rtde_run *last = &r->runs[r->n_runs - 1];

		if (last->kind == (uint8_t)kind &&
		    last->wire_offset + last->count * esize == wire &&
		    last->host_offset + last->count * esize == host) {
			last->count = (uint16_t)(last->count + elems);
			return;
		}
	}
	r->runs[r->n_runs++] = (struct rtl_rtde_run){
		.wire_offset = (uint32_t)wire,
		.host_offset = (uint32_t)host,
		.count = (uint16_t)elems,
		.kind = (uint8_t)kind,
		.pad = 0,
	};
}

/* Per-recipe checks and the layout. Returns the field count or the first
 * error; on error the recipe is left empty. */
static int finish(struct builder *b)
{
	struct rtl_rtde_recipe *r = b->r;
	size_t wire = 0, host = 0, names = 0;

	if (b->rep->error)
		goto fail;
	if (r->n == 0) {
		if (b->rep->dropped)
			report(b->rep, -EPROTO, 0, NULL,
			       "every field was dropped as too new for this controller: the "
			       "recipe is empty");
		else
			report(b->rep, -EINVAL, 0, NULL, "the recipe is empty");
		goto fail;
	}
	r->n_runs = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		enum rtl_rtde_type t = r->fields[i]->type;
		size_t size = rtl_rtde_type_size(t);
		size_t elems = rtl_rtde_type_elems(t);
		/* Natural alignment of the element: 8 for doubles and 64-bit
		 * integers, 4 for 32-bit ones, 1 for bytes. */
		size_t align = size / elems;

		host = align_up(host, align);
		r->slots[i].wire_offset = (uint32_t)wire;
		r->slots[i].host_offset = (uint32_t)host;
		r->slots[i].type = (uint8_t)t;
		r->slots[i].size = (uint8_t)size;
		add_run(r, run_kind(t), align, elems, wire, host);
		wire += size;
		host += size;
		names += strlen(r->fields[i]->name) + (i ? 1 : 0);
	}
	/* 512 fields of at most 48 bytes: below one package. */
	r->wire_size = (uint32_t)wire;
	r->host_size = (uint32_t)align_up(host, 8);
	if (names > GUIDE_NAMES_LIMIT && r->controller_version &&
	    rtl_rtde_version_line(r->controller_version) == RTL_RTDE_LINE_CB3)
		report(b->rep, 0, 0, NULL,
		       "the names list is %zu bytes; UR's guide limits it to %d and a CB3 "
		       "controller may refuse it",
		       names, GUIDE_NAMES_LIMIT);
	return (int)r->n;
fail:
	empty_recipe(r);
	return b->rep->error;
}

static bool opts_ok(const struct rtl_rtde_recipe_opts *o)
{
	return o && (o->dir == RTL_RTDE_RECIPE_OUTPUT || o->dir == RTL_RTDE_RECIPE_INPUT);
}

/* Common entry checks; on a bad argument the recipe (if any) is emptied. */
static int enter(struct builder *b, struct rtl_rtde_recipe *r, const struct rtl_rtde_recipe_opts *o,
		 struct rtl_rtde_report *rep, bool args_ok)
{
	struct rtl_error e = { 0 };
	int ret = rtl__sized_in(&b->opts, sizeof(b->opts), o, "struct rtl_rtde_recipe_opts", &e);

	rep = report_start(rep, &b->local);
	if (ret < 0 && o) {
		if (r)
			empty_recipe(r);
		report(rep, ret, 0, NULL, "%s", e.msg);
		return ret;
	}
	if (!r || ret < 0 || !opts_ok(&b->opts) || !args_ok) {
		if (r)
			empty_recipe(r);
		report(rep, -EINVAL, 0, NULL, "invalid argument (NULL pointer or bad options)");
		return -EINVAL;
	}
	builder_init(b, r, rep);
	return 0;
}

RTL_API int rtl_rtde_recipe_from_names(struct rtl_rtde_recipe *r,
				       const struct rtl_rtde_recipe_opts *opts,
				       const char *const *names, size_t n,
				       struct rtl_rtde_report *rep)
{
	struct builder b;
	int ret;

	ret = enter(&b, r, opts, rep, names || n == 0);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		if (!names[i]) {
			report(b.rep, -EINVAL, 0, NULL, "name %zu of %zu is NULL", i + 1, n);
			continue;
		}
		add_field(&b, names[i], strlen(names[i]), NULL, 0);
	}
	return finish(&b);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Trim blanks around [*s, *s + *len). */
static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

RTL_API int rtl_rtde_recipe_from_list(struct rtl_rtde_recipe *r,
				      const struct rtl_rtde_recipe_opts *opts, const char *list,
				      struct rtl_rtde_report *rep)
{
	struct rtl_rtde_list it;
	struct builder b;
	const char *s;
	size_t len, item = 0;
	int ret;

	ret = enter(&b, r, opts, rep, list != NULL);
	if (ret)
		return ret;
	rtl_rtde_list_init(&it, list, strlen(list));
	while (rtl_rtde_list_next(&it, &s, &len)) {
		item++;
		trim(&s, &len);
		if (len > 0)
			add_field(&b, s, len, NULL, 0);
		else if (!it.done)
			/* Blanks after the last comma are allowed, like the
			 * trailing comma itself (and an all-blank list is
			 * simply empty); anywhere else an empty item is not. */
			report(b.rep, -EBADMSG, 0, NULL, "empty name at position %zu of the list",
			       item);
	}
	return finish(&b);
}

/* One line of a text recipe (without its newline). */
static void text_line(struct builder *b, const char *s, size_t len, unsigned line)
{
	const char *hash = memchr(s, '#', len);
	char nm[RTL_RTDE_REPORT_FIELD_MAX];

	if (hash)
		len = (size_t)(hash - s);
	trim(&s, &len);
	if (len == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		if (!is_name_char(s[i])) {
			name_str(nm, sizeof(nm), s, len);
			report(b->rep, -EBADMSG, line, nm,
			       "'%s' is not a field name (one name per line; '#' starts a "
			       "comment)",
			       nm);
			return;
		}
	}
	add_field(b, s, len, NULL, line);
}

RTL_API int rtl_rtde_recipe_from_text(struct rtl_rtde_recipe *r,
				      const struct rtl_rtde_recipe_opts *opts, const char *text,
				      size_t len, struct rtl_rtde_report *rep)
{
	struct builder b;
	unsigned line = 0;
	size_t pos = 0;
	int ret;

	ret = enter(&b, r, opts, rep, text || len == 0);
	if (ret)
		return ret;
	while (pos < len) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		line++;
		if (memchr(s, '\0', n))
			report(b.rep, -EBADMSG, line, NULL, "NUL byte in a text recipe");
		else
			text_line(&b, s, n, line);
		pos += n + (nl ? 1 : 0);
	}
	return finish(&b);
}

/* fopen() with a report line on failure. Returns NULL and sets *@err. */
static FILE *open_source(const char *path, struct rtl_rtde_report *rep, int *err)
{
	FILE *fp = fopen(path, "r");
	char ebuf[96];

	if (fp)
		return fp;
	*err = -errno;
	report(rep, *err, 0, NULL, "cannot open '%s': %s", path,
	       strerror_r(errno, ebuf, sizeof(ebuf)));
	return NULL;
}

RTL_API int rtl_rtde_recipe_from_text_file(struct rtl_rtde_recipe *r,
					   const struct rtl_rtde_recipe_opts *opts,
					   const char *path, struct rtl_rtde_report *rep)
{
	char buf[RTL_RTDE_RECIPE_LINE_MAX + 2];
	struct builder b;
	unsigned line = 0;
	bool skipping = false; /* inside an over-long line */
	FILE *fp;
	int ret;

	ret = enter(&b, r, opts, rep, path != NULL);
	if (ret)
		return ret;
	fp = open_source(path, b.rep, &ret);
	if (!fp)
		goto fail;
	while (fgets(buf, sizeof(buf), fp)) {
		size_t n = strlen(buf);
		bool whole = n > 0 && buf[n - 1] == '\n';

		if (skipping) {
			skipping = !whole;
			continue;
		}
		line++;
		if (!whole && !feof(fp)) {
			report(b.rep, -EBADMSG, line, NULL, "line longer than %d bytes",
			       RTL_RTDE_RECIPE_LINE_MAX);
			skipping = true;
			continue;
		}
		text_line(&b, buf, whole ? n - 1 : n, line);
	}
	if (ferror(fp)) {
		ret = -EIO;
		report(b.rep, ret, line, NULL, "read error on '%s'", path);
	}
	fclose(fp);
	if (ret)
		goto fail;
	return finish(&b);
fail:
	empty_recipe(r);
	return b.rep->error;
}

/* ---- XML (UR's rtde_config format) --------------------------------------- */

struct xml_ctx {
	struct builder b;
	XML_Parser parser;
	const char *want; /* key asked for, or NULL: the only recipe */
	unsigned depth;
	unsigned recipes;  /* <recipe> elements seen */
	unsigned selected; /* of them, selected */
	bool in_selected;
	bool several;	/* @want NULL and more than one recipe */
	bool stopped;	/* we stopped the parser on a structural error */
	char keys[256]; /* keys seen, for messages */
	size_t keys_len;
};

static unsigned xml_line(struct xml_ctx *x)
{
	return (unsigned)XML_GetCurrentLineNumber(x->parser);
}

__attribute__((format(printf, 2, 3))) static void xml_fail(struct xml_ctx *x, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(x->b.rep, -EBADMSG, xml_line(x), NULL, "%s", msg);
	x->stopped = true;
	XML_StopParser(x->parser, XML_FALSE);
}

static const char *attr(const XML_Char **atts, const char *name)
{
	for (size_t i = 0; atts[i]; i += 2)
		if (strcmp(atts[i], name) == 0)
			return atts[i + 1];
	return NULL;
}

static void add_key(struct xml_ctx *x, const char *key)
{
	int n = snprintf(x->keys + x->keys_len, sizeof(x->keys) - x->keys_len, "%s'%s'",
			 x->keys_len ? ", " : "", key);

	if (n > 0 && (size_t)n < sizeof(x->keys) - x->keys_len)
		x->keys_len += (size_t)n;
}

static void XMLCALL xml_start(void *user, const XML_Char *el, const XML_Char **atts)
{
	struct xml_ctx *x = user;
	unsigned depth = x->depth++;

	if (x->stopped)
		return;
	if (depth == 0) {
		if (strcmp(el, "rtde_config") != 0)
			xml_fail(x, "the root element is <%s>, expected <rtde_config>", el);
		return;
	}
	if (depth == 1) {
		const char *key = attr(atts, "key");

		if (strcmp(el, "recipe") != 0) {
			xml_fail(x, "unexpected element <%s> in <rtde_config> (only <recipe>)", el);
			return;
		}
		if (!key) {
			xml_fail(x, "<recipe> without a key attribute");
			return;
		}
		add_key(x, key);
		x->recipes++;
		if (x->want) {
			x->in_selected = strcmp(key, x->want) == 0;
		} else {
			x->in_selected = x->recipes == 1;
			x->several = x->recipes > 1;
		}
		if (x->in_selected && ++x->selected > 1)
			xml_fail(x, "two recipes with the key '%s'", key);
		return;
	}
	if (depth == 2 && strcmp(el, "field") == 0) {
		const char *name = attr(atts, "name");

		if (!name) {
			xml_fail(x, "<field> without a name attribute");
			return;
		}
		if (x->in_selected)
			add_field(&x->b, name, strlen(name), attr(atts, "type"), xml_line(x));
		return;
	}
	xml_fail(x, "unexpected element <%s> in <%s> (only <field>)", el,
		 depth == 2 ? "recipe" : "field");
}

static void XMLCALL xml_end(void *user, const XML_Char *el)
{
	struct xml_ctx *x = user;

	(void)el;
	if (--x->depth == 1)
		x->in_selected = false;
}

static int xml_begin(struct xml_ctx *x, const char *key)
{
	x->want = key;
	x->depth = 0;
	x->recipes = 0;
	x->selected = 0;
	x->in_selected = false;
	x->several = false;
	x->stopped = false;
	x->keys[0] = '\0';
	x->keys_len = 0;
	x->parser = XML_ParserCreate(NULL);
	if (!x->parser) {
		/* expat's own allocation: the one -ENOMEM of this module. */
		report(x->b.rep, -ENOMEM, 0, NULL, "cannot create an XML parser");
		return -ENOMEM;
	}
	XML_SetUserData(x->parser, x);
	XML_SetElementHandler(x->parser, xml_start, xml_end);
	return 0;
}

/* Feed a chunk; false once parsing has failed (the report says why). */
static bool xml_feed(struct xml_ctx *x, const char *buf, size_t len, bool final)
{
	do {
		/* XML_Parse() takes an int length. */
		int chunk = len > (size_t)1 << 30 ? 1 << 30 : (int)len;

		len -= (size_t)chunk;
		if (XML_Parse(x->parser, buf, chunk, final && len == 0) == XML_STATUS_ERROR) {
			if (!x->stopped)
				report(x->b.rep, -EBADMSG, xml_line(x), NULL, "malformed XML: %s",
				       XML_ErrorString(XML_GetErrorCode(x->parser)));
			return false;
		}
		buf += chunk;
	} while (len > 0);
	return true;
}

/* After the whole document: selection errors, then the recipe checks. */
static int xml_end_doc(struct xml_ctx *x, bool ok)
{
	XML_ParserFree(x->parser);
	x->parser = NULL;
	if (!ok)
		goto fail;
	if (x->several) {
		report(x->b.rep, -EINVAL, 0, NULL,
		       "the file holds several recipes (%s): choose one by key", x->keys);
		goto fail;
	}
	if (x->selected == 0) {
		if (x->want)
			report(x->b.rep, -ENOENT, 0, NULL,
			       "no recipe with key '%s' (the file has: %s)", x->want,
			       x->recipes ? x->keys : "no recipes");
		else
			report(x->b.rep, -EINVAL, 0, NULL, "the file holds no recipe");
		goto fail;
	}
	return finish(&x->b);
fail:
	empty_recipe(x->b.r);
	return x->b.rep->error;
}

RTL_API int rtl_rtde_recipe_from_xml(struct rtl_rtde_recipe *r,
				     const struct rtl_rtde_recipe_opts *opts, const char *xml,
				     size_t len, const char *key, struct rtl_rtde_report *rep)
{
	struct xml_ctx x;
	int ret;

	ret = enter(&x.b, r, opts, rep, xml || len == 0);
	if (ret)
		return ret;
	ret = xml_begin(&x, key);
	if (ret) {
		empty_recipe(r);
		return ret;
	}
	return xml_end_doc(&x, xml_feed(&x, xml ? xml : "", len, true));
}

RTL_API int rtl_rtde_recipe_from_xml_file(struct rtl_rtde_recipe *r,
					  const struct rtl_rtde_recipe_opts *opts, const char *path,
					  const char *key, struct rtl_rtde_report *rep)
{
	struct xml_ctx x;
	char buf[4096];
	bool ok = true;
	FILE *fp;
	int ret;

	ret = enter(&x.b, r, opts, rep, path != NULL);
	if (ret)
		return ret;
	fp = open_source(path, x.b.rep, &ret);
	if (!fp) {
		empty_recipe(r);
		return ret;
	}
	ret = xml_begin(&x, key);
	if (ret) {
		fclose(fp);
		empty_recipe(r);
		return ret;
	}
	while (ok) {
		size_t n = fread(buf, 1, sizeof(buf), fp);

		if (n == 0) {
			if (ferror(fp)) {
				report(x.b.rep, -EIO, 0, NULL, "read error on '%s'", path);
				ok = false;
			} else {
				ok = xml_feed(&x, buf, 0, true);
			}
			break;
		}
		ok = xml_feed(&x, buf, n, false);
	}
	fclose(fp);
	return xml_end_doc(&x, ok);
}

/* ---- names, handles, frames ------------------------------------------------ */

RTL_API int rtl_rtde_recipe_names(const struct rtl_rtde_recipe *r, char *buf, size_t cap)
{
	size_t off = 0;

	if (!r || (!buf && cap > 0))
		return -EINVAL;
	for (uint32_t i = 0; i < r->n; i++) {
		const char *nm = r->fields[i]->name;
		size_t n = strlen(nm);

		if (off + (i ? 1 : 0) + n + 1 > cap) {
			if (cap)
				buf[0] = '\0';
			return -ENOSPC;
		}
		if (i)
			buf[off++] = ',';
		memcpy(buf + off, nm, n);
		off += n;
	}
	if (off + 1 > cap)
		return -ENOSPC;
	buf[off] = '\0';
	return (int)off;
}

static const struct rtl_rtde_handle invalid_handle = {
	.offset = 0,
	.index = 0,
	.type = RTL_RTDE_TYPE_COUNT,
	.size = 0,
};

RTL_API struct rtl_rtde_handle rtl_rtde_recipe_handle_at(const struct rtl_rtde_recipe *r, size_t i)
{
	struct rtl_rtde_handle h = invalid_handle;

	if (!r || i >= r->n)
		return h;
	h.offset = r->slots[i].host_offset;
	h.index = (uint16_t)i;
	h.type = r->slots[i].type;
	h.size = r->slots[i].size;
	return h;
}

RTL_API int rtl_rtde_recipe_handle(const struct rtl_rtde_recipe *r, struct rtl_rtde_handle *h,
				   const char *name)
{
	if (!h)
		return -EINVAL;
	*h = invalid_handle;
	if (!r || !name)
		return -EINVAL;
	for (uint32_t i = 0; i < r->n; i++) {
		if (strcmp(r->fields[i]->name, name) == 0) {
			*h = rtl_rtde_recipe_handle_at(r, i);
			return 0;
		}
	}
	return -ENOENT;
}

RTL_API int rtl_rtde_frame_init(struct rtl_rtde_frame *f, void *storage, size_t cap,
				const struct rtl_rtde_recipe *r)
{
	if (!f || !storage || !r || cap < r->host_size)
		return -EINVAL;
	f->values = storage;
	f->size = r->host_size;
	f->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	memset(storage, 0, r->host_size);
	return 0;
}

/*
 * Big-endian wire to host and back. RTDE is big-endian; on a little-endian
 * host (every controller PC and every rtloop target so far) that is one
 * bswap instruction, on a big-endian one nothing. Not rtl_rtde_load_u64()
 * and friends: GCC makes the same code of both, but clang unrolls the run
 * loops below less when the swap is spelled as shifts.
 */
static inline uint64_t swap64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

static inline uint32_t swap32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

/*
 * Decode and encode are the same walk in two directions: per run one
 * switch, then a loop of constant stride over its elements. A byte swap is
 * its own inverse, so only the side each offset applies to changes;
 * @to_wire is a constant at both call sites and the inlined copies keep no
 * test of it in the loops. Everything the loops read from the recipe is
 * copied into locals first: the stores go through unsigned char pointers,
 * which may alias the recipe, so the compiler would otherwise reload the
 * table after every store. Indices are size_t so that the element address
 * is one scaled add. The element loops use memcpy for the unaligned wire
 * side (one mov each at -O2).
 */
static inline __attribute__((always_inline)) void walk_runs(const struct rtl_rtde_run *runs,
							    size_t n_runs, const unsigned char *src,
							    unsigned char *dst, bool to_wire)
{
	for (size_t i = 0; i < n_runs; i++) {
		const unsigned char *s =
			src + (to_wire ? runs[i].host_offset : runs[i].wire_offset);
		unsigned char *d = dst + (to_wire ? runs[i].wire_offset : runs[i].host_offset);
		size_t n = runs[i].count;

		switch (runs[i].kind) {
		case RTL_RTDE_RUN_SWAP64:
			for (size_t j = 0; j < n; j++) {
				uint64_t v;

				memcpy(&v, s + 8 * j, 8);
				v = swap64(v);
				memcpy(d + 8 * j, &v, 8);
			}
			break;
		case RTL_RTDE_RUN_SWAP32:
			for (size_t j = 0; j < n; j++) {
				uint32_t v;

				memcpy(&v, s + 4 * j, 4);
				v = swap32(v);
				memcpy(d + 4 * j, &v, 4);
			}
			break;
		case RTL_RTDE_RUN_COPY8:
			memcpy(d, s, n);
			break;
		default: /* RTL_RTDE_RUN_BOOL */
			for (size_t j = 0; j < n; j++)
				d[j] = s[j] != 0;
			break;
		}
	}
}

RTL_API int rtl_rtde_recipe_decode(const struct rtl_rtde_recipe *r, struct rtl_rtde_frame *f,
				   const uint8_t *fields, size_t len)
{
	if (!r || !f || !f->values || (!fields && len) || f->cap < r->host_size)
		return -EINVAL;
	if (len != r->wire_size)
		return -EBADMSG;
	/* An empty recipe has no runs: @fields may be NULL then. */
	walk_runs(r->runs, r->n_runs, fields, f->values, false);
	f->size = r->host_size;
	return 0;
}

RTL_API int rtl_rtde_recipe_encode(const struct rtl_rtde_recipe *r, uint8_t *out, size_t cap,
				   const struct rtl_rtde_frame *f)
{
	if (!r || !f || !f->values || !out || f->size < r->host_size)
		return -EINVAL;
	if (cap < r->wire_size)
		return -ENOSPC;
	walk_runs(r->runs, r->n_runs, f->values, out, true);
	return (int)r->wire_size;
}

/* ---- explaining setup replies -------------------------------------------- */

/*
 * One (name, answered type) pair. @f is the registry entry of the name, or
 * NULL if it has none; @name/@len the name as sent.
 */
static void explain_one(struct rtl_rtde_report *rep, enum rtl_rtde_recipe_dir dir, uint64_t version,
			const char *name, size_t len, const struct rtl_rtde_field *f,
			enum rtl_rtde_type got)
{
	char msg[640], nm[RTL_RTDE_REPORT_FIELD_MAX];

	name_str(nm, sizeof(nm), name, len);
	if (got == RTL_RTDE_TYPE_NOT_FOUND) {
		if (!f) {
			explain_unknown(msg, sizeof(msg), name, len, dir);
			report(rep, -ENOENT, 0, nm,
			       "the controller answered NOT_FOUND: %s (a typo?)", msg);
		} else if (!(f->flags & dir_flag(dir))) {
			explain_wrong_dir(msg, sizeof(msg), f, dir);
			report(rep, -ENOENT, 0, nm, "the controller answered NOT_FOUND: %s", msg);
		} else {
			explain_not_found(msg, sizeof(msg), f, version);
			report(rep, -ENOENT, 0, nm, "%s", msg);
		}
		return;
	}
	if (got == RTL_RTDE_TYPE_IN_USE) {
		if (f) {
			explain_in_use(msg, sizeof(msg), f);
			report(rep, -EBUSY, 0, nm, "%s", msg);
		} else {
			report(rep, -EBUSY, 0, nm,
			       "the controller answered IN_USE for '%s': another RTDE client, a "
			       "URCap or a fieldbus adapter writes it",
			       nm);
		}
		return;
	}
	if (!f) {
		report(rep, 0, 0, nm,
		       "the controller knows '%s' (type %s) but rtloop's field registry does not",
		       nm, rtl_rtde_type_name(got));
		return;
	}
	if (got != f->type)
		report(rep, -EPROTO, 0, nm,
		       "the controller reports type %s for '%s', the registry says %s",
		       rtl_rtde_type_name(got), f->name, rtl_rtde_type_name(f->type));
}

/* Next type of a reply list; -EBADMSG (reported) if it does not parse. */
static int next_type(struct rtl_rtde_report *rep, struct rtl_rtde_list *it, size_t pos,
		     enum rtl_rtde_type *t, bool *have)
{
	const char *item;
	size_t len;
	int v;

	*have = rtl_rtde_list_next(it, &item, &len);
	if (!*have)
		return 0;
	v = rtl_rtde_type_from_name(item, len);
	if (v < 0) {
		char nm[RTL_RTDE_REPORT_FIELD_MAX];

		/* The controller's bytes: made printable before they reach a
		 * message. */
		rtl_rtde_text_sanitize(nm, sizeof(nm), item, len);
		report(rep, -EBADMSG, 0, NULL, "reply item %zu, '%s', is not an RTDE type", pos + 1,
		       nm);
		return -EBADMSG;
	}
	*t = (enum rtl_rtde_type)v;
	return 0;
}

RTL_API int rtl_rtde_recipe_check_reply(const struct rtl_rtde_recipe *r, const char *types,
					size_t len, struct rtl_rtde_report *rep)
{
	struct rtl_rtde_report local;
	struct rtl_rtde_list it;
	size_t i = 0;

	rep = report_start(rep, &local);
	if (!r || (!types && len)) {
		report(rep, -EINVAL, 0, NULL, "invalid argument (NULL pointer)");
		return -EINVAL;
	}
	rtl_rtde_list_init(&it, types, len);
	for (;; i++) {
		enum rtl_rtde_type t = RTL_RTDE_TYPE_COUNT;
		bool have;

		if (next_type(rep, &it, i, &t, &have))
			return rep->error;
		if (!have)
			break;
		if (i >= r->n)
			continue; /* counted below */
		explain_one(rep, r->dir, r->controller_version, r->fields[i]->name,
			    strlen(r->fields[i]->name), r->fields[i], t);
	}
	if (i != r->n)
		report(rep, -EBADMSG, 0, NULL,
		       "the reply lists %zu types for a recipe of %u fields", i, r->n);
	return rep->error;
}

RTL_API int rtl_rtde_explain_reply(enum rtl_rtde_recipe_dir dir, uint64_t controller_version,
				   const char *names, size_t names_len, const char *types,
				   size_t types_len, struct rtl_rtde_report *rep)
{
	struct rtl_rtde_report local;
	struct rtl_rtde_list in, it;
	size_t nn = 0, nt = 0;

	rep = report_start(rep, &local);
	if ((!names && names_len) || (!types && types_len) ||
	    (dir != RTL_RTDE_RECIPE_OUTPUT && dir != RTL_RTDE_RECIPE_INPUT)) {
		report(rep, -EINVAL, 0, NULL, "invalid argument (NULL pointer or direction)");
		return -EINVAL;
	}
	rtl_rtde_list_init(&in, names, names_len);
	rtl_rtde_list_init(&it, types, types_len);
	for (;;) {
		enum rtl_rtde_type t = RTL_RTDE_TYPE_COUNT;
		const char *name = NULL;
		size_t len = 0;
		bool have_name = rtl_rtde_list_next(&in, &name, &len);
		bool have_type;

		if (next_type(rep, &it, nt, &t, &have_type))
			return rep->error;
		nn += have_name;
		nt += have_type;
		if (!have_name || !have_type) {
			/* Count the rest of the longer list for the message. */
			while (have_name && rtl_rtde_list_next(&in, &name, &len))
				nn++;
			while (have_type && rtl_rtde_list_next(&it, &name, &len))
				nt++;
			break;
		}
		explain_one(rep, dir, controller_version, name, len,
			    rtl_rtde_field_find_n(name, len), t);
	}
	if (nn != nt)
		report(rep, -EBADMSG, 0, NULL, "the reply lists %zu types for %zu names", nt, nn);
	return rep->error;
}
