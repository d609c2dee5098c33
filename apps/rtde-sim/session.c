// SPDX-License-Identifier: MIT
/*
 * One RTDE connection of the simulated controller (see session.h).
 *
 * Every answer is encoded by the codec straight into the session's send
 * queue: reserve room for the largest package it can be, encode, commit
 * the size the encoder returned. A set-up request is answered in one pass
 * over its names: each name is looked up in the field registry, judged
 * (NOT_FOUND, IN_USE or its type) and its type name appended to the reply;
 * only when every name passed are the recipe tables allocated and, for
 * inputs, the fields claimed. So a refused request changes nothing, which
 * is what makes "a failed I does not consume an id" true by construction.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_fields.h>
#include <rtloop/time.h>

#include "session.h"
#include "sim.h"

/* Room for a setup reply's type list: the largest package's payload. */
#define TYPES_MAX RTL_RTDE_MAX_PAYLOAD_SIZE

/* ---- send queue ---------------------------------------------------------- */

/* Room for @n more bytes at the tail, compacting first if needed; NULL when
 * the bound would be exceeded. */
static uint8_t *q_reserve(struct sim_queue *q, size_t n)
{
	if (q->len + n > q->cap)
		return NULL;
	if (q->head + q->len + n > q->cap) {
		memmove(q->buf, q->buf + q->head, q->len);
		q->head = 0;
	}
	return q->buf + q->head + q->len;
}

static void q_commit(struct sim_queue *q, size_t n)
{
	q->len += n;
}

void sim_session_consumed(struct sim_session *s, size_t n)
{
	if (n > s->out.len)
		n = s->out.len;
	s->out.head += n;
	s->out.len -= n;
	if (s->out.len == 0)
		s->out.head = 0;
}

/* The send queue is full: the client reads too slowly. */
static int overflow(struct sim *sim, struct sim_session *s)
{
	if (s->close == SIM_CLOSE_NONE) {
		s->close = SIM_CLOSE_SLOW;
		sim->stats.slow_disconnects++;
	}
	return -ENOBUFS;
}

/* Room for a package of at most @max bytes in the send queue, or NULL when
 * it would overflow (the session is then marked for closing). */
static uint8_t *reserve(struct sim *sim, struct sim_session *s, size_t max)
{
	uint8_t *b = q_reserve(&s->out, max);

	if (!b)
		overflow(sim, s);
	return b;
}

/* Commit the package an encoder wrote (@n: its size or -errno). */
static int commit(struct sim *sim, struct sim_session *s, int n)
{
	if (n < 0)
		return n;
	q_commit(&s->out, (size_t)n);
	s->stats.bytes_out += (uint64_t)n;
	sim->stats.bytes_sent += (uint64_t)n;
	return 0;
}

/* q_reserve for an encoder that needs at most @max bytes, but never more
 * than the queue could hold when empty (large replies on small queues). */
static size_t room(const struct sim_session *s, size_t max)
{
	return max < s->out.cap ? max : s->out.cap;
}

int sim_session_text(struct sim *sim, struct sim_session *s, uint8_t level, const char *message,
		     const char *source)
{
	struct rtl_rtde_text t = { 0 };
	enum rtl_rtde_protocol proto = sim->opts.text_v2 ? RTL_RTDE_PROTOCOL_V2 : s->proto;
	size_t max = RTL_RTDE_HEADER_SIZE + 3 + 2 * RTL_RTDE_MAX_TEXT_LEN;
	uint8_t *b;
	int err;

	t.level = level;
	t.message = message;
	t.message_len = strlen(message);
	if (t.message_len > RTL_RTDE_MAX_TEXT_LEN)
		t.message_len = RTL_RTDE_MAX_TEXT_LEN;
	t.source = source;
	t.source_len = source ? strlen(source) : 0;
	if (t.source_len > RTL_RTDE_MAX_TEXT_LEN)
		t.source_len = RTL_RTDE_MAX_TEXT_LEN;
	b = reserve(sim, s, max);
	if (!b)
		return -ENOBUFS;
	err = commit(sim, s, rtl_rtde_encode_text(b, max, proto, RTL_RTDE_FROM_CONTROLLER, &t));
	if (!err)
		s->stats.texts_out++;
	return err;
}

/* Drop a bad package: answer with an ERROR text naming what was wrong. */
static int reject(struct sim *sim, struct sim_session *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reject(struct sim *sim, struct sim_session *s, const char *fmt, ...)
{
	char msg[RTL_RTDE_MAX_TEXT_LEN + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->stats.errors++;
	sim->stats.errors_answered++;
	return sim_session_text(sim, s, RTL_RTDE_LEVEL_ERROR, msg, SIM_TEXT_SOURCE);
}

static int accepted(struct sim *sim, struct sim_session *s, enum rtl_rtde_pkg type, bool ok)
{
	uint8_t *b = reserve(sim, s, 4);

	return b ? commit(sim, s, rtl_rtde_encode_accepted_reply(b, 4, type, ok)) : -ENOBUFS;
}

/* ---- session life ---------------------------------------------------------- */

static void recipe_free(struct sim_recipe *r)
{
	free(r->fields);
	free(r->types);
	free(r->offsets);
	memset(r, 0, sizeof(*r));
	r->echo_slot = -1;
}

struct sim_session *sim_session_open(struct sim *sim, int64_t now)
{
	struct sim_session *s;
	unsigned id, clients = 0;

	for (id = 0; id < SIM_MAX_SESSIONS; id++)
		if (sim->sessions[id])
			clients++;
	for (id = 0; id < SIM_MAX_SESSIONS && sim->sessions[id]; id++)
		;
	if (id == SIM_MAX_SESSIONS)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->out.cap = sim->opts.send_buffer;
	s->out.buf = malloc(s->out.cap);
	if (rtl_rtde_framer_create(&s->framer, RTL_RTDE_MAX_PACKAGE_SIZE, NULL) < 0 ||
	    !s->out.buf) {
		rtl_rtde_framer_destroy(s->framer);
		free(s->out.buf);
		free(s);
		return NULL;
	}
	s->id = id;
	s->proto = RTL_RTDE_PROTOCOL_V1; /* until 'V' says otherwise (3.2) */
	s->outputs.echo_slot = -1;
	for (unsigned i = 0; i < SIM_MAX_INPUT_RECIPES; i++)
		s->inputs[i].echo_slot = -1;
	if (clients >= sim->opts.max_clients) {
		/* Section 9: extra clients get answers, then are closed. */
		char msg[128];

		s->close = SIM_CLOSE_LIMIT;
		s->close_at = now + RTL_NS_PER_SEC;
		sim->stats.clients_over_limit++;
		/* Not silence: the client is told at once, in the v1 layout
		 * (no V yet), which every client must expect at any time. */
		snprintf(msg, sizeof(msg),
			 "client limit reached (%u connected, rtde-sim --max-clients %u): "
			 "this connection is closed in 1 s",
			 clients, sim->opts.max_clients);
		sim_session_text(sim, s, RTL_RTDE_LEVEL_ERROR, msg, SIM_TEXT_SOURCE);
	}
	s->last_in = now;
	sim->sessions[id] = s;
	sim->stats.connections++;
	return s;
}

void sim_session_close(struct sim *sim, struct sim_session *s)
{
	uint16_t tag;

	if (!s)
		return;
	tag = (uint16_t)(s->id + 1);
	/* Ownership ends with the connection (section 6.4). */
	for (size_t i = 0; i < sim->n_fields; i++)
		if (sim->owner[i] == tag)
			sim->owner[i] = 0;
	recipe_free(&s->outputs);
	for (unsigned i = 0; i < s->n_inputs; i++)
		recipe_free(&s->inputs[i]);
	if (sim->sessions[s->id] == s)
		sim->sessions[s->id] = NULL;
	rtl_rtde_framer_destroy(s->framer);
	free(s->out.buf);
	free(s);
}

/* ---- set-up requests ------------------------------------------------------- */

/* Count the items of a names list (one trailing comma ignored). */
static size_t count_names(const char *names, size_t len)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t n = 0, ilen;

	rtl_rtde_list_init(&it, names, len);
	while (rtl_rtde_list_next(&it, &item, &ilen))
		n++;
	return n;
}

static int recipe_alloc(struct sim_recipe *r, size_t n)
{
	r->fields = malloc(n * sizeof(*r->fields));
	r->types = malloc(n * sizeof(*r->types));
	r->offsets = malloc(n * sizeof(*r->offsets));
	if (!r->fields || !r->types || !r->offsets) {
		recipe_free(r);
		return -ENOMEM;
	}
	r->n = (uint32_t)n;
	r->echo_slot = -1;
	return 0;
}

/* Whether field @f may be written by session @s: 0 yes, else the pseudo
 * type that says why not. */
static enum rtl_rtde_type judge_input(const struct sim *sim, const struct sim_session *s,
				      const struct rtl_rtde_field *f, size_t idx)
{
	if (!f || !(f->flags & RTL_RTDE_FIELD_INPUT) || !rtl_rtde_field_available(f, sim->version))
		return RTL_RTDE_TYPE_NOT_FOUND;
	if (sim->opts.fieldbus &&
	    (f->flags & (RTL_RTDE_FIELD_FIELDBUS | RTL_RTDE_FIELD_STANDARD_INPUT)))
		return RTL_RTDE_TYPE_IN_USE;
	if (sim->owner[idx] && sim->owner[idx] != s->id + 1)
		return RTL_RTDE_TYPE_IN_USE;
	return f->type;
}

static enum rtl_rtde_type judge_output(const struct sim *sim, const struct rtl_rtde_field *f)
{
	if (!f || !(f->flags & RTL_RTDE_FIELD_OUTPUT) || !rtl_rtde_field_available(f, sim->version))
		return RTL_RTDE_TYPE_NOT_FOUND;
	return f->type;
}

/*
 * Judge every name of a set-up request, writing the reply's type list
 * into @types (TYPES_MAX bytes). Fills @r (already sized) when @r is not
 * NULL. Returns the list length, and *@ok whether every field passed; or
 * -E2BIG when the type list would not fit one package.
 */
static int judge(const struct sim *sim, const struct sim_session *s, bool input, const char *names,
		 size_t names_len, char *types, struct sim_recipe *r, bool *ok)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t ilen, len = 0, i = 0;

	*ok = true;
	rtl_rtde_list_init(&it, names, names_len);
	while (rtl_rtde_list_next(&it, &item, &ilen)) {
		const struct rtl_rtde_field *f = rtl_rtde_field_find_n(item, ilen);
		size_t idx = f ? (size_t)rtl_rtde_field_index(f) : 0;
		enum rtl_rtde_type t = input ? judge_input(sim, s, f, idx) : judge_output(sim, f);
		const char *tn = rtl_rtde_type_name(t);
		size_t tl = strlen(tn);

		if (!rtl_rtde_type_is_value(t))
			*ok = false;
		if (len + (i ? 1 : 0) + tl > TYPES_MAX - 1)
			return -E2BIG;
		if (i)
			types[len++] = ',';
		memcpy(types + len, tn, tl);
		len += tl;
		if (r && i < r->n) {
			r->fields[i] = (uint16_t)idx;
			r->types[i] = t;
			if (input && f && (int)idx == sim->echo_idx)
				r->echo_slot = (int)i;
			if (input && f)
				r->roles |= sim->role[idx];
		}
		i++;
	}
	return (int)len;
}

/* The divisor N = max(1, floor(max / f)) of section 6.1, or 0 for a
 * frequency that makes the recipe invalid (<= 0, NaN). */
static uint32_t divisor_of(double max_hz, double f)
{
	double n;

	if (!(f > 0.0))
		return 0;
	n = floor(max_hz / f);
	if (n < 1.0)
		return 1;
	if (n > 1e9)
		return 1000000000u;
	return (uint32_t)n;
}

/*
 * The part SETUP_OUTPUTS and SETUP_INPUTS share: the @n names of @req
 * judged into @r (sized here) and the reply's type list, in *@types
 * (TYPES_MAX bytes, the caller frees it). Returns the list's length and
 * *@ok as judge() does; or -1 after rejecting the package (too many names,
 * no memory, a type list too long), with nothing left allocated and
 * *@err what reject() returned.
 */
static int judge_request(struct sim *sim, struct sim_session *s, bool input,
			 const struct rtl_rtde_setup_request *req, size_t n, struct sim_recipe *r,
			 char **types, bool *ok, int *err)
{
	const char *what = input ? "SETUP_INPUTS" : "SETUP_OUTPUTS";
	int tlen;

	*types = NULL;
	if (n > SIM_MAX_RECIPE_FIELDS) {
		*err = reject(sim, s, "%s: %zu names, more than one data package holds", what, n);
		return -1;
	}
	*types = malloc(TYPES_MAX);
	if (!*types || (n && recipe_alloc(r, n))) {
		free(*types);
		*err = reject(sim, s, "%s: out of memory", what);
		return -1;
	}
	tlen = judge(sim, s, input, req->names, req->names_len, *types, r, ok);
	if (tlen < 0) {
		recipe_free(r);
		free(*types);
		*err = reject(sim, s, "%s: the type list would not fit one package", what);
		return -1;
	}
	return tlen;
}

static int setup_outputs(struct sim *sim, struct sim_session *s, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_setup_request req;
	struct sim_recipe r = { .echo_slot = -1 };
	char *types = NULL;
	const char *why = NULL; /* explained after the reply, never before it */
	uint8_t *b;
	uint32_t divisor = 1;
	bool ok;
	int tlen, size, err;
	size_t n, max;

	err = rtl_rtde_decode_setup_outputs(&req, pkg, len, s->proto);
	if (err)
		return reject(sim, s,
			      "malformed CONTROL_PACKAGE_SETUP_OUTPUTS (%zu bytes): dropped", len);
	if (s->proto == RTL_RTDE_PROTOCOL_V2)
		divisor = divisor_of(sim->max_hz, req.frequency);
	n = count_names(req.names, req.names_len);
	tlen = judge_request(sim, s, false, &req, n, &r, &types, &ok, &err);
	if (tlen < 0)
		return err;
	if (ok && n) {
		size = rtl_rtde_layout(r.offsets, r.types, r.n);
		if (size < 0) {
			ok = false;
			why = "SETUP_OUTPUTS: the data package would exceed 65535 bytes";
		} else {
			r.wire_size = (uint32_t)size;
		}
	}
	/* Section 9: f <= 0 makes the recipe invalid; the types are listed. */
	if (!divisor)
		ok = false;
	ok = ok && n > 0;

	max = room(s, RTL_RTDE_HEADER_SIZE + 1 + (size_t)tlen);
	b = reserve(sim, s, max);
	err = b ? commit(sim, s,
			 rtl_rtde_encode_setup_outputs_reply(b, max, s->proto, ok ? 1 : 0, types,
							     (size_t)tlen))
		: -ENOBUFS;
	free(types);
	/* One output recipe per connection: a new one replaces the old. */
	recipe_free(&s->outputs);
	s->has_outputs = true;
	s->out_valid = ok;
	if (ok) {
		s->outputs = r;
		s->divisor = divisor;
		s->frequency = s->proto == RTL_RTDE_PROTOCOL_V2 ? req.frequency : sim->max_hz;
	} else {
		recipe_free(&r);
		s->started = false;
	}
	if (!err && why)
		err = reject(sim, s, "%s", why);
	return err;
}

static int setup_inputs(struct sim *sim, struct sim_session *s, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_setup_request req;
	struct sim_recipe r = { .echo_slot = -1 };
	char *types;
	bool ok;
	int tlen, size, err;
	size_t n, max;
	const char *why = NULL; /* explained after the reply, never before it */
	uint8_t *b, id = 0;

	err = rtl_rtde_decode_setup_inputs(&req, pkg, len);
	if (err)
		return reject(sim, s, "malformed CONTROL_PACKAGE_SETUP_INPUTS (%zu bytes): dropped",
			      len);
	n = count_names(req.names, req.names_len);
	/* Section 9 (UR staff, unverified): an empty request gets no reply. */
	if (n == 0)
		return 0;
	tlen = judge_request(sim, s, true, &req, n, &r, &types, &ok, &err);
	if (tlen < 0)
		return err;
	if (ok) {
		size = rtl_rtde_layout(r.offsets, r.types, r.n);
		if (size < 0)
			ok = false;
		else
			r.wire_size = (uint32_t)size;
	}
	if (ok && s->n_inputs >= SIM_MAX_INPUT_RECIPES) {
		ok = false;
		why = "SETUP_INPUTS: all 255 input recipe ids are used";
	}
	if (ok) {
		/* Claim the fields and take the next id (a failure took none). */
		for (uint32_t i = 0; i < r.n; i++)
			sim->owner[r.fields[i]] = (uint16_t)(s->id + 1);
		s->inputs[s->n_inputs] = r;
		id = (uint8_t)++s->n_inputs;
	} else {
		recipe_free(&r);
	}
	max = room(s, RTL_RTDE_HEADER_SIZE + 1 + (size_t)tlen);
	b = reserve(sim, s, max);
	err = b ? commit(sim, s,
			 rtl_rtde_encode_setup_inputs_reply(b, max, id, types, (size_t)tlen))
		: -ENOBUFS;
	free(types);
	if (!err && why)
		err = reject(sim, s, "%s", why);
	return err;
}

/* ---- data from the client ---------------------------------------------------- */

static int input_data(struct sim *sim, struct sim_session *s, const uint8_t *pkg, size_t len,
		      int64_t now)
{
	struct rtl_rtde_data d;
	const struct sim_recipe *r;
	int err;

	err = rtl_rtde_decode_data(&d, pkg, len, s->proto, RTL_RTDE_FROM_CLIENT);
	if (err)
		return reject(sim, s, "malformed DATA_PACKAGE (%zu bytes): dropped", len);
	if (d.recipe_id == 0 || d.recipe_id > s->n_inputs)
		return reject(sim, s,
			      "DATA_PACKAGE for input recipe %u, which this connection "
			      "has not set up: dropped",
			      d.recipe_id);
	r = &s->inputs[d.recipe_id - 1];
	if (d.fields_len != r->wire_size)
		return reject(sim, s,
			      "DATA_PACKAGE for input recipe %u has %zu bytes of fields, "
			      "the recipe %u: dropped",
			      d.recipe_id, d.fields_len, r->wire_size);
	/* Applied now, whether started or not (sections 9 and 10): the robot
	 * sees it in the next control cycle. */
	for (uint32_t i = 0; i < r->n; i++) {
		union rtl_rtde_value *v = &sim->values[r->fields[i]];

		rtl_rtde_load_value(v, d.fields + r->offsets[i], r->types[i]);
		/* Every double a client sends is looked at: a NaN on the wire
		 * is the client's bug, and the tests count them here. */
		if (r->types[i] == RTL_RTDE_TYPE_DOUBLE)
			sim->stats.nonfinite_in += !isfinite(v->d);
		else if (r->types[i] == RTL_RTDE_TYPE_VECTOR3D ||
			 r->types[i] == RTL_RTDE_TYPE_VECTOR6D)
			for (unsigned k = 0; k < rtl_rtde_type_elems(r->types[i]); k++)
				sim->stats.nonfinite_in += !isfinite(v->v6d[k]);
	}
	s->stats.inputs_applied++;
	sim->stats.inputs_applied++;
	sim_inputs_written(sim, s, r, now);
	return 0;
}

/* ---- data to the client -------------------------------------------------------- */

int sim_session_data(struct sim *sim, struct sim_session *s)
{
	const struct sim_recipe *r = &s->outputs;
	int off = rtl_rtde_data_fields_offset(s->proto, RTL_RTDE_FROM_CONTROLLER);
	size_t size = (size_t)off + r->wire_size;
	uint8_t *b;
	int n;

	if (!s->out_valid || off < 0)
		return -EINVAL;
	b = reserve(sim, s, size);
	if (!b)
		return -ENOBUFS;
	for (uint32_t i = 0; i < r->n; i++)
		rtl_rtde_store_value(b + off + r->offsets[i], &sim->values[r->fields[i]],
				     r->types[i]);
	/* Fields already in place: the encoder writes the header around them. */
	n = rtl_rtde_encode_data(b, size, s->proto, RTL_RTDE_FROM_CONTROLLER, 1, b + off,
				 r->wire_size);
	if (n < 0)
		return n;
	commit(sim, s, n);
	s->stats.data_out++;
	sim->stats.data_sent++;
	return 0;
}

/* ---- dispatch ------------------------------------------------------------------ */

int sim_session_handle(struct sim *sim, struct sim_session *s, const uint8_t *pkg, size_t len,
		       int64_t now)
{
	struct rtl_rtde_controller_version v;
	struct rtl_rtde_text text;
	uint16_t version;
	uint8_t *b;
	int type;

	if (!sim || !s || !pkg)
		return -EINVAL;
	s->stats.packages_in++;
	sim->stats.packages_in++;
	type = rtl_rtde_package_type(pkg, len);
	if (type < 0)
		return reject(sim, s, "package of %zu bytes does not match its header: dropped",
			      len);

	switch (type) {
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
		if (rtl_rtde_decode_protocol_version_request(&version, pkg, len))
			return reject(sim, s, "malformed REQUEST_PROTOCOL_VERSION: dropped");
		if (version >= 1 && version <= sim->opts.max_protocol) {
			s->proto = (enum rtl_rtde_protocol)version;
			return accepted(sim, s, RTL_RTDE_PKG_PROTOCOL_VERSION, true);
		}
		/* Refused: nothing changes, the connection stays (3.2). */
		return accepted(sim, s, RTL_RTDE_PKG_PROTOCOL_VERSION, false);

	case RTL_RTDE_PKG_URCONTROL_VERSION:
		if (rtl_rtde_decode_urcontrol_version_request(pkg, len))
			return reject(sim, s, "malformed GET_URCONTROL_VERSION: dropped");
		v.major = RTL_RTDE_VERSION_MAJOR(sim->version);
		v.minor = RTL_RTDE_VERSION_MINOR(sim->version);
		v.bugfix = RTL_RTDE_VERSION_BUGFIX(sim->version);
		v.build = RTL_RTDE_VERSION_BUILD(sim->version);
		b = reserve(sim, s, 19);
		return b ? commit(sim, s, rtl_rtde_encode_urcontrol_version_reply(b, 19, &v))
			 : -ENOBUFS;

	case RTL_RTDE_PKG_SETUP_OUTPUTS:
		return setup_outputs(sim, s, pkg, len);

	case RTL_RTDE_PKG_SETUP_INPUTS:
		return setup_inputs(sim, s, pkg, len);

	case RTL_RTDE_PKG_START:
		if (rtl_rtde_decode_start(pkg, len))
			return reject(sim, s, "malformed CONTROL_PACKAGE_START: dropped");
		/* Refused without a valid output recipe (3.7). A START while
		 * started keeps the stream as it is. */
		if (!s->out_valid)
			return accepted(sim, s, RTL_RTDE_PKG_START, false);
		if (!s->started) {
			s->started = true;
			s->was_started = true;
			s->start_cycle = sim->cycle;
		}
		return accepted(sim, s, RTL_RTDE_PKG_START, true);

	case RTL_RTDE_PKG_PAUSE:
		if (rtl_rtde_decode_pause(pkg, len))
			return reject(sim, s, "malformed CONTROL_PACKAGE_PAUSE: dropped");
		s->started = false;
		return accepted(sim, s, RTL_RTDE_PKG_PAUSE, true); /* always (3.8) */

	case RTL_RTDE_PKG_DATA:
		return input_data(sim, s, pkg, len, now);

	case RTL_RTDE_PKG_TEXT_MESSAGE:
		/* Client texts use the v2 layout in both versions (3.4). */
		if (rtl_rtde_decode_text(&text, pkg, len, s->proto, RTL_RTDE_FROM_CLIENT))
			return reject(sim, s, "malformed TEXT_MESSAGE: dropped");
		s->stats.texts_in++;
		sim->stats.texts_in++;
		return 0;

	default:
		return reject(sim, s, "unknown package type %d (0x%02x): dropped", type, type);
	}
}

int sim_session_feed(struct sim *sim, struct sim_session *s, const void *bytes, size_t len,
		     int64_t now)
{
	const struct rtl_rtde_framer_error *fe;
	const uint8_t *pkg;
	size_t plen;
	int n = 0, r, err;

	if (!sim || !s || (!bytes && len))
		return -EINVAL;
	if (s->close == SIM_CLOSE_DESYNC)
		return -EMSGSIZE;
	r = rtl_rtde_framer_feed(s->framer, bytes, len);
	while (r == 0 && (r = rtl_rtde_framer_next(s->framer, &pkg, &plen)) == 1) {
		s->last_in = now;
		err = sim_session_handle(sim, s, pkg, plen, now);
		n++;
		if (err == -ENOBUFS)
			return err;
		r = 0;
	}
	if (r == -EMSGSIZE) {
		fe = rtl_rtde_framer_last_error(s->framer);
		sim_session_text(sim, s, RTL_RTDE_LEVEL_ERROR,
				 fe ? fe->err.msg : "RTDE stream out of sync", SIM_TEXT_SOURCE);
		s->stats.errors++;
		sim->stats.errors_answered++;
		if (s->close == SIM_CLOSE_NONE || s->close == SIM_CLOSE_LIMIT) {
			s->close = SIM_CLOSE_DESYNC;
			sim->stats.desync_disconnects++;
		}
		return -EMSGSIZE;
	}
	return r < 0 ? r : n;
}
