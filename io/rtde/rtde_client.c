// SPDX-License-Identifier: MIT
/*
 * RTDE client state machine (design in rtde_client.h).
 *
 * One function, rtl_rtde_client_next(), does the work: it hands out queued
 * events first, then cuts the next package out of the fed bytes and
 * dispatches on its type, then looks at the clock. A package causes at
 * most a few events (an implicit START is a state change followed by the
 * data), so they go through a four-entry queue in the client and the
 * caller still sees one event per call.
 *
 * Replies are matched against the one request in flight (the state says
 * which): a text message or a data package in between is handled as it
 * would be at any time, a reply of another type is fatal because the two
 * sides are out of step. A reply nobody waits for is dropped and counted.
 *
 * Two kinds of text are written. Set-up and fatal errors use snprintf and
 * may log: they happen once per connection. Non-fatal errors on the data
 * path (wrong recipe id, malformed or unknown packages) are assembled with
 * the small writers of txt.h, so that the receive thread stays free of
 * stdio while it streams.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/rtde_client.h>
#include <rtloop/sized.h>
#include <rtloop/stat.h>

#include "txt.h"

struct rtl_rtde_client {
	struct rtl_rtde_client_config cfg;
	unsigned n_inputs;
	bool has_outputs;
	enum rtl_rtde_client_state_id state;
	uint16_t asked_protocol; /* version the pending V asks for */
	unsigned input_index;	 /* the pending SETUP_INPUTS */
	bool late_start;	 /* data came first: the START reply is still due */
	int64_t timeout_ns;
	int64_t deadline;
	struct rtl_rtde_handshake info;
	int32_t ts_off; /* wire offset of `timestamp`, -1 if absent */
	int32_t cs_off; /* wire offset of `control_step`, -1 if absent */
	bool have_base;
	double base_ts;
	uint64_t base_cs;
	/* Data packages dropped since the last one delivered (or START), by
	 * cause: the controller sent them, so they are no controller skips. */
	struct {
		uint64_t size, recipe, malformed;
		size_t last_len; /* fields of the last wrong-size package */
		uint8_t last_id; /* id of the last package of another recipe */
	} run;
	int64_t started_ns;   /* RUNNING since (START accepted or first data) */
	int64_t last_data_ns; /* the last data package delivered; 0: none since START */
	struct {
		RTL_RTDE_CLIENT_COUNTERS(RTL_STAT_ATOMIC)
	} stats;
	struct rtl_rtde_client_event queue[RTL_RTDE_CLIENT_EVENT_QUEUE];
	unsigned q_head, q_len;
	struct rtl_rtde_client_error error;
	struct rtl_rtde_report report;
	struct rtl_rtde_framer *framer; /* create(): 64 KiB of assembly storage */
	size_t tx_off, tx_len;
	void *owned; /* create(): the copied names, freed by destroy() */
	struct rtl_rtde_recipe outputs;
	struct rtl_rtde_recipe inputs[RTL_RTDE_CLIENT_MAX_INPUTS];
	uint8_t tx[RTL_RTDE_CLIENT_TX_SIZE];
	char names[RTL_RTDE_CLIENT_TX_SIZE]; /* scratch for setup requests */
};

/* ---- names ------------------------------------------------------------------ */

static const char *const state_names[RTL_RTDE_CLIENT_STATE_COUNT] = {
	[RTL_RTDE_CLIENT_IDLE] = "IDLE",       [RTL_RTDE_CLIENT_PROTOCOL] = "PROTOCOL",
	[RTL_RTDE_CLIENT_VERSION] = "VERSION", [RTL_RTDE_CLIENT_OUTPUTS] = "OUTPUTS",
	[RTL_RTDE_CLIENT_INPUTS] = "INPUTS",   [RTL_RTDE_CLIENT_STARTING] = "STARTING",
	[RTL_RTDE_CLIENT_READY] = "READY",     [RTL_RTDE_CLIENT_RUNNING] = "RUNNING",
	[RTL_RTDE_CLIENT_PAUSING] = "PAUSING", [RTL_RTDE_CLIENT_FAILED] = "FAILED",
	[RTL_RTDE_CLIENT_CLOSED] = "CLOSED"
};

RTL_API const char *rtl_rtde_client_state_name(enum rtl_rtde_client_state_id s)
{
	return RTL__NAME_OF(state_names, s, "?");
}

/* The reply type the state waits for, or 0. */
static int expected_reply(enum rtl_rtde_client_state_id s)
{
	switch (s) {
	case RTL_RTDE_CLIENT_PROTOCOL:
		return RTL_RTDE_PKG_PROTOCOL_VERSION;
	case RTL_RTDE_CLIENT_VERSION:
		return RTL_RTDE_PKG_URCONTROL_VERSION;
	case RTL_RTDE_CLIENT_OUTPUTS:
		return RTL_RTDE_PKG_SETUP_OUTPUTS;
	case RTL_RTDE_CLIENT_INPUTS:
		return RTL_RTDE_PKG_SETUP_INPUTS;
	case RTL_RTDE_CLIENT_STARTING:
		return RTL_RTDE_PKG_START;
	case RTL_RTDE_CLIENT_PAUSING:
		return RTL_RTDE_PKG_PAUSE;
	default:
		return 0;
	}
}

static const char *pkg_name(int type)
{
	const char *n = rtl_rtde_pkg_name(type);

	return n ? n : "unknown";
}

static bool connected_state(enum rtl_rtde_client_state_id s)
{
	return s != RTL_RTDE_CLIENT_IDLE && s != RTL_RTDE_CLIENT_FAILED &&
	       s != RTL_RTDE_CLIENT_CLOSED;
}

/* ---- pure helpers -------------------------------------------------------------- */

RTL_API double rtl_rtde_max_frequency(uint32_t major)
{
	return major < 5 ? 125.0 : 500.0;
}

RTL_API unsigned rtl_rtde_output_divisor(double max_hz, double requested_hz)
{
	double q;

	if (!(requested_hz > 0) || !(max_hz > 0))
		return 1;
	/* The tolerance keeps rates such as 500/3 Hz, which the user computed
	 * from the same rule, from rounding down to the next divisor. */
	q = floor(max_hz / requested_hz * (1 + 1e-12));
	if (q < 1)
		return 1;
	if (q > 1e9)
		return 1000000000u;
	return (unsigned)q;
}

/* ---- events --------------------------------------------------------------------- */

static void push(struct rtl_rtde_client *c, const struct rtl_rtde_client_event *ev)
{
	/* No package causes more events than the queue holds; should that
	 * ever change, the oldest event wins over the newest. */
	if (c->q_len == RTL_RTDE_CLIENT_EVENT_QUEUE)
		return;
	c->queue[(c->q_head + c->q_len) % RTL_RTDE_CLIENT_EVENT_QUEUE] = *ev;
	c->q_len++;
}

static bool pop(struct rtl_rtde_client *c, struct rtl_rtde_client_event *ev)
{
	if (!c->q_len)
		return false;
	*ev = c->queue[c->q_head];
	c->q_head = (c->q_head + 1) % RTL_RTDE_CLIENT_EVENT_QUEUE;
	c->q_len--;
	return true;
}

static void set_state(struct rtl_rtde_client *c, enum rtl_rtde_client_state_id to)
{
	struct rtl_rtde_client_event ev = { .type = RTL_RTDE_CLIENT_EV_STATE };

	if (c->state == to)
		return;
	ev.u.state.from = c->state;
	ev.u.state.to = to;
	c->state = to;
	push(c, &ev);
}

static void push_error(struct rtl_rtde_client *c)
{
	struct rtl_rtde_client_event ev = { .type = RTL_RTDE_CLIENT_EV_ERROR };

	ev.u.error = &c->error;
	push(c, &ev);
}

/* A fatal error: report it, then FAILED. Not RT-safe (formats). */
__attribute__((format(printf, 3, 4))) static void fail(struct rtl_rtde_client *c, int code,
						       const char *fmt, ...)
{
	va_list ap;

	c->error.err.code = code;
	c->error.fatal = true;
	c->error.state = c->state;
	va_start(ap, fmt);
	vsnprintf(c->error.err.msg, sizeof(c->error.err.msg), fmt, ap);
	va_end(ap);
	rtl_log(RTL_LOG_DEBUG, "RTDE client: fatal: %s", c->error.err.msg);
	push_error(c);
	set_state(c, RTL_RTDE_CLIENT_FAILED);
	c->deadline = RTL_RTDE_CLIENT_NO_DEADLINE;
	c->tx_off = c->tx_len = 0;
}

/* Start a non-fatal error message; finish it with t_str/t_u64 and
 * drop_done(). RT-safe. */
static struct txt drop_begin(struct rtl_rtde_client *c, int code)
{
	struct txt t = { c->error.err.msg, sizeof(c->error.err.msg), 0 };

	c->error.err.code = code;
	c->error.fatal = false;
	c->error.state = c->state;
	c->error.err.msg[0] = '\0';
	return t;
}

static void drop_done(struct rtl_rtde_client *c, struct txt *t)
{
	t_str(t, " (not fatal: dropped and counted)");
	push_error(c);
}

/* The report's text without its last newline. */
static const char *report_text(struct rtl_rtde_client *c)
{
	struct rtl_rtde_report *r = &c->report;

	while (r->len && r->text[r->len - 1] == '\n')
		r->text[--r->len] = '\0';
	return r->text;
}

static const char *version_text(const struct rtl_rtde_client *c, char *buf, size_t cap)
{
	rtl_rtde_version_format(buf, cap, c->info.controller_version);
	return buf;
}

/* ---- requests ---------------------------------------------------------------- */

/* Room at the end of the transmit buffer (compacting it first). */
static uint8_t *tx_room(struct rtl_rtde_client *c, size_t *cap)
{
	if (c->tx_off == c->tx_len)
		c->tx_off = c->tx_len = 0;
	*cap = sizeof(c->tx) - c->tx_len;
	return c->tx + c->tx_len;
}

/* An encoder wrote @n bytes (or failed) at tx_room(): send them and wait
 * for the reply in state @st. */
static void request(struct rtl_rtde_client *c, int64_t now, int n, enum rtl_rtde_client_state_id st,
		    const char *what)
{
	if (n < 0) {
		fail(c, n, "cannot encode the %s request (%s); this is a bug in rtloop", what,
		     strerror(-n));
		return;
	}
	c->tx_len += (size_t)n;
	c->deadline = now + c->timeout_ns;
	set_state(c, st);
}

static void send_protocol(struct rtl_rtde_client *c, int64_t now)
{
	size_t cap;
	uint8_t *p = tx_room(c, &cap);

	request(c, now, rtl_rtde_encode_protocol_version_request(p, cap, c->asked_protocol),
		RTL_RTDE_CLIENT_PROTOCOL, "REQUEST_PROTOCOL_VERSION");
}

static void send_version(struct rtl_rtde_client *c, int64_t now)
{
	size_t cap;
	uint8_t *p = tx_room(c, &cap);

	request(c, now, rtl_rtde_encode_urcontrol_version_request(p, cap), RTL_RTDE_CLIENT_VERSION,
		"GET_URCONTROL_VERSION");
}

static void send_start(struct rtl_rtde_client *c, int64_t now)
{
	size_t cap;
	uint8_t *p = tx_room(c, &cap);

	/* The controller's clock ran on while paused: a new baseline, or
	 * the pause would count as skipped packages. */
	c->have_base = false;
	c->late_start = false;
	memset(&c->run, 0, sizeof(c->run));
	request(c, now, rtl_rtde_encode_start(p, cap), RTL_RTDE_CLIENT_STARTING,
		"CONTROL_PACKAGE_START");
}

static void send_pause(struct rtl_rtde_client *c, int64_t now)
{
	size_t cap;
	uint8_t *p = tx_room(c, &cap);

	request(c, now, rtl_rtde_encode_pause(p, cap), RTL_RTDE_CLIENT_PAUSING,
		"CONTROL_PACKAGE_PAUSE");
}

/* A setup request for recipe @r: names through the scratch buffer (the
 * encoder copies them behind the header). */
static void send_setup(struct rtl_rtde_client *c, int64_t now, const struct rtl_rtde_recipe *r,
		       bool outputs)
{
	char *names = c->names;
	size_t cap;
	uint8_t *p = tx_room(c, &cap);
	int len = rtl_rtde_recipe_names(r, names, sizeof(c->names));
	int n;

	if (len < 0) {
		n = len;
	} else if (outputs) {
		n = rtl_rtde_encode_setup_outputs(p, cap, c->info.protocol,
						  c->info.requested_frequency, names, (size_t)len);
	} else {
		n = rtl_rtde_encode_setup_inputs(p, cap, names, (size_t)len);
	}
	request(c, now, n, outputs ? RTL_RTDE_CLIENT_OUTPUTS : RTL_RTDE_CLIENT_INPUTS,
		outputs ? "CONTROL_PACKAGE_SETUP_OUTPUTS" : "CONTROL_PACKAGE_SETUP_INPUTS");
}

static void setup_done(struct rtl_rtde_client *c, int64_t now)
{
	const struct rtl_rtde_handshake *i = &c->info;
	char v[48];

	if (c->has_outputs)
		rtl_log(RTL_LOG_INFO,
			"RTDE: controller %s (%s), protocol %d, %u outputs at %g Hz (one package "
			"every %u control cycles of %g ms), %u input recipes",
			version_text(c, v, sizeof(v)),
			rtl_rtde_line_name(rtl_rtde_version_line(i->controller_version)),
			(int)i->protocol, c->outputs.n, i->frequency, i->divisor,
			1000.0 / i->max_frequency, i->n_inputs);
	else
		rtl_log(RTL_LOG_INFO, "RTDE: controller %s (%s), protocol %d, %u input recipes",
			version_text(c, v, sizeof(v)),
			rtl_rtde_line_name(rtl_rtde_version_line(i->controller_version)),
			(int)i->protocol, i->n_inputs);
	if (c->cfg.flags & RTL_RTDE_CLIENT_NO_START) {
		c->deadline = RTL_RTDE_CLIENT_NO_DEADLINE;
		set_state(c, RTL_RTDE_CLIENT_READY);
	} else {
		send_start(c, now);
	}
}

static void inputs_from(struct rtl_rtde_client *c, int64_t now, unsigned i)
{
	c->input_index = i;
	if (i < c->n_inputs)
		send_setup(c, now, &c->inputs[i], false);
	else
		setup_done(c, now);
}

/* ---- replies -------------------------------------------------------------- */

static void malformed_reply(struct rtl_rtde_client *c, int type, size_t len, int err)
{
	rtl_stat_add(&c->stats.malformed, 1);
	fail(c, err == -EPROTO ? -EPROTO : -EBADMSG,
	     "malformed %s reply (%zu bytes): %s; the peer is not a UR controller or speaks "
	     "another protocol version than agreed",
	     pkg_name(type), len, strerror(-err));
}

/* Decode the one-byte reply to a V, S or P request into *@ok; false after
 * failing on a malformed one. */
static bool decode_accepted(struct rtl_rtde_client *c, enum rtl_rtde_pkg type, const uint8_t *pkg,
			    size_t len, bool *ok)
{
	int err = rtl_rtde_decode_accepted_reply(ok, pkg, len, type);

	if (err)
		malformed_reply(c, type, len, err);
	return err == 0;
}

static void on_protocol(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	bool ok;

	if (!decode_accepted(c, RTL_RTDE_PKG_PROTOCOL_VERSION, pkg, len, &ok))
		return;
	if (ok) {
		c->info.protocol = (enum rtl_rtde_protocol)c->asked_protocol;
		send_version(c, now);
		return;
	}
	if (c->asked_protocol > 1) {
		rtl_log(RTL_LOG_INFO, "RTDE: the controller refused protocol %u; asking for %u",
			c->asked_protocol, c->asked_protocol - 1u);
		c->asked_protocol--;
		send_protocol(c, now);
		return;
	}
	fail(c, -EPROTONOSUPPORT,
	     "the controller refused RTDE protocol versions 2 and 1: it is not a UR controller "
	     "this client supports (UR software 3.2.19171 or later speaks RTDE)");
}

/* Build every recipe for the controller version just learnt. */
static bool build_recipes(struct rtl_rtde_client *c)
{
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT,
					  c->info.controller_version, c->cfg.recipe_flags };
	char v[48];
	int err;

	version_text(c, v, sizeof(v));
	if (c->has_outputs) {
		err = rtl_rtde_recipe_from_list(&c->outputs, &o, c->cfg.outputs, &c->report);
		if (err < 0) {
			fail(c, err, "the output recipe does not fit controller %s: %s%s", v,
			     report_text(c),
			     err == -EPROTO ? " (set RTL_RTDE_RECIPE_DROP_UNAVAILABLE in "
					      "recipe_flags to drop fields this controller lacks)"
					    : "");
			return false;
		}
	}
	o.dir = RTL_RTDE_RECIPE_INPUT;
	for (unsigned i = 0; i < c->n_inputs; i++) {
		err = rtl_rtde_recipe_from_list(&c->inputs[i], &o, c->cfg.inputs[i], &c->report);
		if (err < 0) {
			fail(c, err, "input recipe %u does not fit controller %s: %s", i, v,
			     report_text(c));
			return false;
		}
	}
	c->ts_off = c->cs_off = -1;
	for (uint32_t i = 0; c->has_outputs && i < c->outputs.n; i++) {
		const char *name = c->outputs.fields[i]->name;

		if (!strcmp(name, "timestamp"))
			c->ts_off = (int32_t)c->outputs.slots[i].wire_offset;
		else if (!strcmp(name, "control_step"))
			c->cs_off = (int32_t)c->outputs.slots[i].wire_offset;
	}
	return true;
}

static void set_rate(struct rtl_rtde_client *c)
{
	struct rtl_rtde_handshake *i = &c->info;
	double want = c->cfg.frequency;

	i->max_frequency = rtl_rtde_max_frequency(i->version.major);
	if (i->protocol == RTL_RTDE_PROTOCOL_V1) {
		if (c->has_outputs && want > 0 && want < i->max_frequency)
			rtl_log(RTL_LOG_WARN,
				"RTDE: protocol 1 cannot set the output rate: data comes at the "
				"maximum %g Hz, not the %g Hz requested",
				i->max_frequency, want);
		i->requested_frequency = 0;
		i->divisor = 1;
	} else {
		if (want > i->max_frequency) {
			rtl_log(RTL_LOG_WARN,
				"RTDE: %g Hz requested, but this controller streams at most %g Hz; "
				"asking for %g Hz",
				want, i->max_frequency, i->max_frequency);
			want = i->max_frequency;
		}
		if (!(want > 0))
			want = i->max_frequency;
		i->requested_frequency = want;
		i->divisor = rtl_rtde_output_divisor(i->max_frequency, want);
	}
	i->frequency = i->max_frequency / i->divisor;
	i->period_ns = (int64_t)llround(1e9 / i->max_frequency) * (int64_t)i->divisor;
}

/*
 * The reported version is one UR ships: major 3 (CB3), 5 (e-Series) or 10
 * (PolyScope X, which speaks RTDE as e-Series does, docs/rtde-protocol.md
 * 2). Below 3 is no controller at all (a zeroed reply from a peer that
 * only mimics RTDE); another major is refused unless the configuration
 * allows it, because the rate and the field set would be a guess.
 * False after failing.
 */
static bool check_version(struct rtl_rtde_client *c)
{
	const struct rtl_rtde_controller_version *v = &c->info.version;
	enum rtl_rtde_line line = rtl_rtde_version_line(c->info.controller_version);
	char txt[64];

	snprintf(txt, sizeof(txt), "%" PRIu32 ".%" PRIu32 ".%" PRIu32 ".%" PRIu32, v->major,
		 v->minor, v->bugfix, v->build);
	if (v->major < 3) {
		fail(c, -EPROTO,
		     "the controller reported version %s, which no UR controller sends (UR ships "
		     "3.x for CB3, 5.x for e-Series, 10.x for PolyScope X): the peer is not a UR "
		     "controller, or its RTDE server is broken",
		     txt);
		return false;
	}
	if (v->major == 3 || v->major == 5 || v->major == 10)
		return true;
	if (!(c->cfg.flags & RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION)) {
		fail(c, -EPROTONOSUPPORT,
		     "the controller reported version %s, a major version UR has not shipped (3: "
		     "CB3, 5: e-Series, 10: PolyScope X); the client would treat it as %s (%g Hz, "
		     "the %s field versions): set RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION in the "
		     "client's flags to accept that",
		     txt, rtl_rtde_line_name(line), rtl_rtde_max_frequency(v->major),
		     rtl_rtde_line_name(line));
		return false;
	}
	rtl_log(RTL_LOG_WARN,
		"RTDE: the controller reported version %s, a major version UR has not shipped; "
		"treated as %s (%g Hz), as RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION asks",
		txt, rtl_rtde_line_name(line), rtl_rtde_max_frequency(v->major));
	return true;
}

static void on_version(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	int err = rtl_rtde_decode_urcontrol_version_reply(&c->info.version, pkg, len);

	if (err) {
		malformed_reply(c, RTL_RTDE_PKG_URCONTROL_VERSION, len, err);
		return;
	}
	c->info.controller_version = rtl_rtde_version_pack(&c->info.version);
	if (!check_version(c))
		return;
	if (!build_recipes(c))
		return;
	set_rate(c);
	if (c->has_outputs)
		send_setup(c, now, &c->outputs, true);
	else
		inputs_from(c, now, 0);
}

/* Check a setup reply against recipe @r; false after failing. */
static bool check_setup(struct rtl_rtde_client *c, const struct rtl_rtde_recipe *r,
			const struct rtl_rtde_setup_reply *rep, const char *what)
{
	char v[48];
	int err = rtl_rtde_recipe_check_reply(r, rep->types, rep->types_len, &c->report);

	version_text(c, v, sizeof(v));
	if (err) {
		fail(c, err, "controller %s rejected %s: %s%s", v, what, report_text(c),
		     err == -EBUSY ? " (the client retries on reconnect: a stale connection of "
				     "this program releases its inputs when it closes)"
				   : "");
		return false;
	}
	if (rep->has_recipe_id && rep->recipe_id == 0) {
		fail(c, -EPROTO,
		     "controller %s refused %s (recipe id 0) without naming a bad field: "
		     "too many recipes on this connection, or a controller limit",
		     v, what);
		return false;
	}
	return true;
}

static void on_outputs(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_setup_reply rep;
	int err = rtl_rtde_decode_setup_outputs_reply(&rep, pkg, len, c->info.protocol);

	if (err) {
		malformed_reply(c, RTL_RTDE_PKG_SETUP_OUTPUTS, len, err);
		return;
	}
	if (!check_setup(c, &c->outputs, &rep, "the output recipe (SETUP_OUTPUTS)"))
		return;
	c->info.output_id = rep.has_recipe_id ? rep.recipe_id : 0;
	inputs_from(c, now, 0);
}

static void on_inputs(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_setup_reply rep;
	unsigned i = c->input_index;
	char what[64];
	int err = rtl_rtde_decode_setup_inputs_reply(&rep, pkg, len);

	if (err) {
		malformed_reply(c, RTL_RTDE_PKG_SETUP_INPUTS, len, err);
		return;
	}
	snprintf(what, sizeof(what), "input recipe %u of %u (SETUP_INPUTS)", i, c->n_inputs);
	if (!check_setup(c, &c->inputs[i], &rep, what))
		return;
	c->info.input_ids[i] = rep.recipe_id;
	c->info.n_inputs = i + 1;
	inputs_from(c, now, i + 1);
}

/* The data time-out in force (the period is known from the handshake);
 * 0: none. */
static int64_t data_timeout(const struct rtl_rtde_client *c)
{
	int64_t t = c->cfg.data_timeout_ns;

	if (t < 0)
		return 0;
	if (t > 0)
		return t;
	t = 10 * c->info.period_ns;
	return t > RTL_RTDE_CLIENT_DATA_TIMEOUT_NS ? t : RTL_RTDE_CLIENT_DATA_TIMEOUT_NS;
}

static void running(struct rtl_rtde_client *c, int64_t now)
{
	int64_t t = data_timeout(c);

	c->deadline = t ? now + t : RTL_RTDE_CLIENT_NO_DEADLINE;
	c->started_ns = now;
	c->last_data_ns = 0;
	set_state(c, RTL_RTDE_CLIENT_RUNNING);
}

static void on_start(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	bool ok;

	if (!decode_accepted(c, RTL_RTDE_PKG_START, pkg, len, &ok))
		return;
	if (!ok) {
		fail(c, -EPERM,
		     "the controller refused START: it needs a valid output recipe with at least "
		     "one field, and may refuse while it boots or before its safety setup is "
		     "confirmed (see its text messages)");
		return;
	}
	running(c, now);
}

static void on_pause(struct rtl_rtde_client *c, const uint8_t *pkg, size_t len)
{
	bool ok;

	if (!decode_accepted(c, RTL_RTDE_PKG_PAUSE, pkg, len, &ok))
		return;
	if (!ok) {
		/* UR's guide says PAUSE is always accepted. */
		fail(c, -EPROTO,
		     "the controller refused PAUSE, which UR's guide says it always "
		     "accepts: the peer is not a faithful RTDE server");
		return;
	}
	c->deadline = RTL_RTDE_CLIENT_NO_DEADLINE;
	set_state(c, RTL_RTDE_CLIENT_READY);
}

static void on_reply(struct rtl_rtde_client *c, int64_t now, int type, const uint8_t *pkg,
		     size_t len)
{
	int want = expected_reply(c->state);

	if (type == RTL_RTDE_PKG_START && c->late_start) {
		/* The reply to a START that a data package already confirmed. */
		c->late_start = false;
		return;
	}
	if (!want) {
		struct txt t = drop_begin(c, -EPROTO);

		rtl_stat_add(&c->stats.unexpected, 1);
		t_str(&t, "a ");
		t_str(&t, pkg_name(type));
		t_str(&t, " reply arrived in state ");
		t_str(&t, rtl_rtde_client_state_name(c->state));
		t_str(&t, ", where no request was pending");
		drop_done(c, &t);
		return;
	}
	if (type != want) {
		fail(c, -EPROTO,
		     "expected a %s reply ('%c'), received a %s reply ('%c'): the client and the "
		     "peer are out of step (another program writing on this connection?) or the "
		     "peer is not a UR controller; reconnect",
		     pkg_name(want), want, pkg_name(type), type);
		return;
	}
	switch (type) {
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
		on_protocol(c, now, pkg, len);
		break;
	case RTL_RTDE_PKG_URCONTROL_VERSION:
		on_version(c, now, pkg, len);
		break;
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
		on_outputs(c, now, pkg, len);
		break;
	case RTL_RTDE_PKG_SETUP_INPUTS:
		on_inputs(c, now, pkg, len);
		break;
	case RTL_RTDE_PKG_START:
		on_start(c, now, pkg, len);
		break;
	default:
		on_pause(c, pkg, len);
		break;
	}
}

/* ---- text messages ------------------------------------------------------------ */

static const char *level_name(unsigned level)
{
	switch (level) {
	case RTL_RTDE_LEVEL_EXCEPTION:
		return "EXCEPTION";
	case RTL_RTDE_LEVEL_ERROR:
		return "ERROR";
	case RTL_RTDE_LEVEL_WARNING:
		return "WARNING";
	case RTL_RTDE_LEVEL_INFO:
		return "INFO";
	default:
		return "level ?";
	}
}

static void on_text(struct rtl_rtde_client *c, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_client_event ev = { .type = RTL_RTDE_CLIENT_EV_TEXT };
	struct rtl_rtde_text *t = &ev.u.text;
	enum rtl_log_level lvl;
	char msg[1024], src[256];
	int err;

	/*
	 * The layout follows the agreed version, but a controller has been
	 * seen sending the v2 layout to a client that had not agreed on v2
	 * (docs/rtde-protocol.md 3.4, 9): before v2 is agreed, take the v2
	 * layout when it parses exactly (lengths add up, known level), which
	 * a v1 message practically never does.
	 */
	err = rtl_rtde_decode_text(t, pkg, len, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CONTROLLER);
	if (c->info.protocol != RTL_RTDE_PROTOCOL_V2 && (err || t->level > RTL_RTDE_LEVEL_INFO))
		err = rtl_rtde_decode_text(t, pkg, len, RTL_RTDE_PROTOCOL_V1,
					   RTL_RTDE_FROM_CONTROLLER);
	if (err) {
		struct txt m = drop_begin(c, -EBADMSG);

		rtl_stat_add(&c->stats.malformed, 1);
		t_str(&m, "malformed TEXT_MESSAGE of ");
		t_u64(&m, len);
		t_str(&m, " bytes (lengths do not add up)");
		drop_done(c, &m);
		return;
	}
	rtl_stat_add(&c->stats.text, 1);
	if (!(c->cfg.flags & RTL_RTDE_CLIENT_NO_TEXT_LOG)) {
		switch (t->level) {
		case RTL_RTDE_LEVEL_EXCEPTION:
		case RTL_RTDE_LEVEL_ERROR:
			lvl = RTL_LOG_ERROR;
			break;
		case RTL_RTDE_LEVEL_WARNING:
			lvl = RTL_LOG_WARN;
			break;
		default:
			lvl = RTL_LOG_INFO;
			break;
		}
		/* The controller's bytes, made printable: no escape sequence,
		 * no line of their own (rtl_rtde_text_sanitize()). */
		rtl_rtde_text_sanitize(msg, sizeof(msg), t->message, t->message_len);
		rtl_rtde_text_sanitize(src, sizeof(src), t->source, t->source_len);
		rtl_log(lvl, "RTDE controller message (%s%s%s): %s", level_name(t->level),
			t->source_len ? ", from " : "", src, msg);
	}
	push(c, &ev);
}

/* ---- data packages --------------------------------------------------------------- */

/* Packages skipped before the one with these fields; updates the
 * baseline. RT-safe. */
static uint64_t account(struct rtl_rtde_client *c, struct rtl_rtde_client_data *d)
{
	uint64_t cycles = 0, steps, skipped = 0;
	uint64_t dropped = c->run.size + c->run.recipe + c->run.malformed;
	unsigned n = c->info.divisor; /* >= 1: init, connected and set_rate see to it */
	bool back = false;

	memset(&c->run, 0, sizeof(c->run));

	if (c->ts_off >= 0) {
		d->has_timestamp = true;
		d->timestamp = rtl_rtde_load_f64(d->fields + c->ts_off);
	}
	if (c->cs_off >= 0) {
		d->has_control_step = true;
		d->control_step = rtl_rtde_load_u64(d->fields + c->cs_off);
	}
	if (d->has_control_step) {
		/* Exact: the controller counts its cycles. */
		if (c->have_base) {
			if (d->control_step < c->base_cs)
				back = true;
			else
				cycles = d->control_step - c->base_cs;
		}
		c->base_cs = d->control_step;
	} else if (d->has_timestamp && isfinite(d->timestamp)) {
		/* Timestamps are whole control periods: round the quotient to
		 * the nearest cycle to shed the binary fraction. */
		if (c->have_base) {
			double dc = (d->timestamp - c->base_ts) * c->info.max_frequency;

			if (dc < -0.5)
				back = true;
			else if (dc > 1e15)
				cycles = (uint64_t)1e15;
			else if (dc > 0)
				cycles = (uint64_t)(dc + 0.5);
		}
		c->base_ts = d->timestamp;
	} else {
		return 0;
	}
	if (c->have_base && !back) {
		/* Rounded to the nearest step without cycles + n / 2, which
		 * wraps for a control_step that jumped near 2^64. */
		steps = cycles / n + (cycles % n + n / 2 >= n);
		/* The packages the client dropped filled part of the gap. */
		if (steps > 1 + dropped)
			skipped = steps - 1 - dropped;
	}
	if (back)
		rtl_stat_add(&c->stats.resets, 1);
	c->have_base = true;
	/* Saturating: a jump's count must not wrap the total. */
	rtl_stat_add(&c->stats.skipped, skipped > UINT64_MAX - rtl_stat_get(&c->stats.skipped)
						? UINT64_MAX - rtl_stat_get(&c->stats.skipped)
						: skipped);
	return skipped;
}

static void on_data(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	struct rtl_rtde_client_event ev = { .type = RTL_RTDE_CLIENT_EV_DATA };
	struct rtl_rtde_data d;
	struct txt t;
	int err;

	if (c->state == RTL_RTDE_CLIENT_STARTING) {
		/* Data can overtake the START reply (URCL PR #403). */
		c->late_start = true;
		running(c, now);
	} else if (c->state != RTL_RTDE_CLIENT_RUNNING && c->state != RTL_RTDE_CLIENT_PAUSING) {
		t = drop_begin(c, -EPROTO);
		rtl_stat_add(&c->stats.unexpected, 1);
		t_str(&t, "a DATA_PACKAGE arrived in state ");
		t_str(&t, rtl_rtde_client_state_name(c->state));
		t_str(&t, ", before START");
		drop_done(c, &t);
		return;
	}
	err = rtl_rtde_decode_data(&d, pkg, len, c->info.protocol, RTL_RTDE_FROM_CONTROLLER);
	if (err) {
		t = drop_begin(c, -EBADMSG);
		rtl_stat_add(&c->stats.malformed, 1);
		c->run.malformed++;
		t_str(&t, "malformed DATA_PACKAGE of ");
		t_u64(&t, len);
		t_str(&t, " bytes (no recipe id)");
		drop_done(c, &t);
		return;
	}
	if (d.has_recipe_id && d.recipe_id != c->info.output_id) {
		t = drop_begin(c, -ENOMSG);
		rtl_stat_add(&c->stats.wrong_recipe, 1);
		c->run.recipe++;
		c->run.last_id = d.recipe_id;
		t_str(&t, "DATA_PACKAGE with recipe id ");
		t_u64(&t, d.recipe_id);
		t_str(&t, ", but the output recipe has id ");
		t_u64(&t, c->info.output_id);
		t_str(&t, ": the controller streams another recipe (a second SETUP_OUTPUTS on "
			  "this connection?)");
		drop_done(c, &t);
		return;
	}
	if (d.fields_len != c->outputs.wire_size) {
		t = drop_begin(c, -EBADMSG);
		rtl_stat_add(&c->stats.wrong_size, 1);
		c->run.size++;
		c->run.last_len = d.fields_len;
		t_str(&t, "DATA_PACKAGE of the wrong size: ");
		t_u64(&t, d.fields_len);
		t_str(&t, " bytes of fields, the output recipe has ");
		t_u64(&t, c->outputs.wire_size);
		t_str(&t, " (the controller streams another recipe than the one set up)");
		drop_done(c, &t);
		return;
	}
	if (c->state == RTL_RTDE_CLIENT_RUNNING && data_timeout(c))
		c->deadline = now + data_timeout(c);
	c->last_data_ns = now;
	rtl_stat_add(&c->stats.data, 1);
	ev.u.data.fields = d.fields;
	ev.u.data.len = d.fields_len;
	ev.u.data.skipped = account(c, &ev.u.data);
	push(c, &ev);
}

/* ---- stepping ------------------------------------------------------------------- */

static void on_package(struct rtl_rtde_client *c, int64_t now, const uint8_t *pkg, size_t len)
{
	int type = pkg[2];
	struct txt t;

	rtl_stat_add(&c->stats.packages, 1);
	switch (type) {
	case RTL_RTDE_PKG_DATA:
		on_data(c, now, pkg, len);
		break;
	case RTL_RTDE_PKG_TEXT_MESSAGE:
		on_text(c, pkg, len);
		break;
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
	case RTL_RTDE_PKG_URCONTROL_VERSION:
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
	case RTL_RTDE_PKG_SETUP_INPUTS:
	case RTL_RTDE_PKG_START:
	case RTL_RTDE_PKG_PAUSE:
		on_reply(c, now, type, pkg, len);
		break;
	default:
		t = drop_begin(c, -EBADMSG);
		rtl_stat_add(&c->stats.malformed, 1);
		t_str(&t, "package of unknown type ");
		t_u64(&t, (uint64_t)type);
		t_str(&t, " (");
		t_u64(&t, len);
		t_str(&t, " bytes): not an RTDE package type");
		drop_done(c, &t);
		break;
	}
}

/* The data time-out expired: say for how long, since what, and what the
 * controller sent instead (the packages dropped since the last good one). */
static void data_timed_out(struct rtl_rtde_client *c)
{
	int64_t t = data_timeout(c);
	uint64_t dropped = c->run.size + c->run.recipe + c->run.malformed;
	char secs[32], since[96], what[400];

	/* "1.0 s" for whole tenths, else milliseconds. */
	snprintf(secs, sizeof(secs), t % (100 * INT64_C(1000000)) ? "%.3f s" : "%.1f s",
		 (double)t / 1e9);
	if (c->last_data_ns)
		snprintf(since, sizeof(since), "after the last one (%.3f s after START)",
			 (double)(c->last_data_ns - c->started_ns) / 1e9);
	else
		snprintf(since, sizeof(since), "after START");
	if (!dropped) {
		fail(c, -ETIMEDOUT,
		     "no data package for %s %s (the controller stopped sending; raise "
		     "data_timeout_ns if it is expected to pause)",
		     secs, since);
		return;
	}
	/* Only the kinds that came, e.g. "500 of the wrong size (the last
	 * with 8 bytes of fields, the recipe has 56)". */
	what[0] = '\0';
	if (c->run.size)
		snprintf(what, sizeof(what),
			 "%" PRIu64 " of the wrong size (the last with %zu bytes of fields, the "
			 "recipe has %u)",
			 c->run.size, c->run.last_len, (unsigned)c->outputs.wire_size);
	if (c->run.recipe) {
		size_t n = strlen(what);

		snprintf(what + n, sizeof(what) - n,
			 "%s%" PRIu64
			 " of another recipe id (the last: %u, the output recipe's: %u)",
			 n ? ", " : "", c->run.recipe, (unsigned)c->run.last_id,
			 (unsigned)c->info.output_id);
	}
	if (c->run.malformed) {
		size_t n = strlen(what);

		snprintf(what + n, sizeof(what) - n, "%s%" PRIu64 " malformed", n ? ", " : "",
			 c->run.malformed);
	}
	fail(c, -ETIMEDOUT,
	     "no valid data package for %s %s: the controller sent %" PRIu64
	     " data packages in that time and every one was dropped (%s): it streams "
	     "something else than the recipe set up; reconnect",
	     secs, since, dropped, what);
}

static void timeout(struct rtl_rtde_client *c)
{
	double s = (double)c->timeout_ns / 1e9;
	int want = expected_reply(c->state);

	switch (c->state) {
	case RTL_RTDE_CLIENT_PROTOCOL:
	case RTL_RTDE_CLIENT_VERSION:
		fail(c, -ETIMEDOUT,
		     "no %s reply within %.3f s: the peer accepted the connection but does not "
		     "answer RTDE (is it port 30004 of a UR controller?), or the controller is "
		     "overloaded",
		     pkg_name(want), s);
		break;
	case RTL_RTDE_CLIENT_STARTING:
		fail(c, -ETIMEDOUT,
		     "no %s reply and no data within %.3f s: the controller is busy, or (PolyScope "
		     "X) sends no data until its safety setup is confirmed (see its text messages)",
		     pkg_name(want), s);
		break;
	case RTL_RTDE_CLIENT_RUNNING:
		data_timed_out(c);
		break;
	default:
		fail(c, -ETIMEDOUT,
		     "no %s reply within %.3f s: the controller is overloaded or the stream is out "
		     "of step; reconnect (a longer reply_timeout_ns helps a busy controller)",
		     pkg_name(want), s);
		break;
	}
}

static bool check_deadline(struct rtl_rtde_client *c, int64_t now)
{
	if (!connected_state(c->state) || c->deadline == RTL_RTDE_CLIENT_NO_DEADLINE ||
	    now < c->deadline)
		return false;
	timeout(c);
	return true;
}

RTL_API int rtl_rtde_client_next(struct rtl_rtde_client *c, struct rtl_rtde_client_event *ev,
				 int64_t now)
{
	const uint8_t *pkg;
	size_t len;
	int r;

	if (!c || !ev)
		return -EINVAL;
	for (;;) {
		if (pop(c, ev))
			return 1;
		if (!connected_state(c->state))
			return 0;
		r = rtl_rtde_framer_next(c->framer, &pkg, &len);
		if (r == 1) {
			on_package(c, now, pkg, len);
			continue;
		}
		if (r < 0) {
			rtl_stat_add(&c->stats.malformed, 1);
			fail(c, r, "%s", rtl_rtde_framer_last_error(c->framer)->err.msg);
			continue;
		}
		if (check_deadline(c, now))
			continue;
		return 0;
	}
}

RTL_API int rtl_rtde_client_poll(struct rtl_rtde_client *c, struct rtl_rtde_client_event *ev,
				 int64_t now)
{
	if (!c || !ev)
		return -EINVAL;
	if (pop(c, ev))
		return 1;
	if (check_deadline(c, now) && pop(c, ev))
		return 1;
	return 0;
}

RTL_API int64_t rtl_rtde_client_deadline(const struct rtl_rtde_client *c)
{
	if (!c || !connected_state(c->state))
		return RTL_RTDE_CLIENT_NO_DEADLINE;
	return c->deadline;
}

RTL_API int rtl_rtde_client_feed(struct rtl_rtde_client *c, const void *data, size_t len)
{
	if (!c || (!data && len))
		return -EINVAL;
	if (!connected_state(c->state))
		return -ENOTCONN;
	return rtl_rtde_framer_feed(c->framer, data, len);
}

RTL_API size_t rtl_rtde_client_tx(const struct rtl_rtde_client *c, const uint8_t **data)
{
	if (!c)
		return 0;
	if (data)
		*data = c->tx + c->tx_off;
	return c->tx_len - c->tx_off;
}

RTL_API void rtl_rtde_client_tx_done(struct rtl_rtde_client *c, size_t n)
{
	if (!c)
		return;
	if (n > c->tx_len - c->tx_off)
		n = c->tx_len - c->tx_off;
	c->tx_off += n;
	if (c->tx_off == c->tx_len)
		c->tx_off = c->tx_len = 0;
}

RTL_API int rtl_rtde_client_connected(struct rtl_rtde_client *c, int64_t now)
{
	if (!c)
		return -EINVAL;
	rtl_rtde_framer_reset(c->framer);
	c->q_head = c->q_len = 0;
	c->tx_off = c->tx_len = 0;
	c->have_base = false;
	c->late_start = false;
	memset(&c->run, 0, sizeof(c->run));
	c->input_index = 0;
	memset(&c->info, 0, sizeof(c->info));
	c->info.protocol = RTL_RTDE_PROTOCOL_V1; /* until V is accepted */
	c->info.divisor = 1;
	c->asked_protocol = c->cfg.protocol ? c->cfg.protocol : 2;
	send_protocol(c, now);
	return 0;
}

RTL_API int rtl_rtde_client_closed(struct rtl_rtde_client *c, int64_t now, int err)
{
	const uint8_t *part;
	size_t pending;
	char cut[160] = "";
	const char *why;
	int want;

	(void)now;
	if (!c)
		return -EINVAL;
	if (!connected_state(c->state))
		return 0;
	part = rtl_rtde_framer_partial(c->framer, &pending);
	if (pending >= RTL_RTDE_HEADER_SIZE) {
		/* A package that straddles reads is assembled header first, so
		 * the framer's partial bytes say what was cut. */
		int type = part[2];

		snprintf(cut, sizeof(cut),
			 " in the middle of a package (%zu of %u bytes of a %s received)", pending,
			 (unsigned)rtl_rtde_load_u16(part), pkg_name(type));
	} else if (pending) {
		snprintf(cut, sizeof(cut),
			 " in the middle of a package header (%zu of 3 bytes received)", pending);
	}
	want = expected_reply(c->state);
	if (c->state == RTL_RTDE_CLIENT_RUNNING && err < 0)
		/* A reset is no slow-reader close: name what the peer did. */
		why = ": the controller (or a device between) aborted the stream with a reset: "
		      "it restarted, or dropped this client; reconnect";
	else if (c->state == RTL_RTDE_CLIENT_RUNNING)
		why = ": controllers close a client that reads too slowly (its receive buffer "
		      "overflowed: keep the receive thread fed), and restart RTDE once while "
		      "booting; reconnect";
	else if (c->state == RTL_RTDE_CLIENT_READY)
		why = ": the controller restarted or dropped the connection; reconnect";
	else if (want == RTL_RTDE_PKG_PROTOCOL_VERSION)
		why = ": the peer is not an RTDE server, or the controller has too many RTDE "
		      "clients (about 3, fieldbus adapters included); reconnect";
	else
		why = ": the controller restarted or rejected the request; check its text "
		      "messages, then reconnect";
	c->error.err.code = err < 0 ? err : -ECONNRESET;
	c->error.fatal = true;
	c->error.state = c->state;
	snprintf(c->error.err.msg, sizeof(c->error.err.msg),
		 "the controller %s the connection%s%s%s%s", err < 0 ? "reset" : "closed", cut,
		 want ? " while the client waited for the " : " in state ",
		 want ? pkg_name(want) : rtl_rtde_client_state_name(c->state),
		 want ? " reply" : "");
	/* Append the cause separately: the fixed part above is short. */
	strncat(c->error.err.msg, why, sizeof(c->error.err.msg) - strlen(c->error.err.msg) - 1);
	if (err < 0 && err != -ECONNRESET) {
		size_t n = strlen(c->error.err.msg);

		snprintf(c->error.err.msg + n, sizeof(c->error.err.msg) - n, " (%s)",
			 strerror(-err));
	}
	rtl_log(RTL_LOG_DEBUG, "RTDE client: %s", c->error.err.msg);
	push_error(c);
	set_state(c, RTL_RTDE_CLIENT_CLOSED);
	c->deadline = RTL_RTDE_CLIENT_NO_DEADLINE;
	c->tx_off = c->tx_len = 0;
	return 0;
}

/* What start or pause returns in a state that can take neither: no
 * session (-ENOTCONN), or one in the middle of another step (-EBUSY). */
static int refused(enum rtl_rtde_client_state_id state)
{
	switch (state) {
	case RTL_RTDE_CLIENT_IDLE:
	case RTL_RTDE_CLIENT_FAILED:
	case RTL_RTDE_CLIENT_CLOSED:
		return -ENOTCONN;
	default:
		return -EBUSY;
	}
}

RTL_API int rtl_rtde_client_start(struct rtl_rtde_client *c, int64_t now)
{
	if (!c)
		return -EINVAL;
	switch (c->state) {
	case RTL_RTDE_CLIENT_RUNNING:
	case RTL_RTDE_CLIENT_STARTING:
		return -EALREADY;
	case RTL_RTDE_CLIENT_READY:
		if (!c->has_outputs)
			return -EINVAL;
		send_start(c, now);
		return 0;
	default:
		return refused(c->state);
	}
}

RTL_API int rtl_rtde_client_pause(struct rtl_rtde_client *c, int64_t now)
{
	if (!c)
		return -EINVAL;
	switch (c->state) {
	case RTL_RTDE_CLIENT_READY:
	case RTL_RTDE_CLIENT_PAUSING:
		return -EALREADY;
	case RTL_RTDE_CLIENT_RUNNING:
		send_pause(c, now);
		return 0;
	default:
		return refused(c->state);
	}
}

/* ---- data helpers ------------------------------------------------------------ */

RTL_API int rtl_rtde_client_decode(const struct rtl_rtde_client *c, struct rtl_rtde_frame *f,
				   const struct rtl_rtde_client_event *ev)
{
	if (!c || !ev || !f || ev->type != RTL_RTDE_CLIENT_EV_DATA)
		return -EINVAL;
	return rtl_rtde_recipe_decode(&c->outputs, f, ev->u.data.fields, ev->u.data.len);
}

RTL_API int rtl_rtde_client_encode_inputs(const struct rtl_rtde_client *c, unsigned idx,
					  uint8_t *buf, size_t cap, const struct rtl_rtde_frame *f)
{
	const struct rtl_rtde_recipe *r;
	int n, off = 4; /* header and recipe id: client packages always carry the id */

	if (!c || !f || !buf || idx >= c->n_inputs)
		return -EINVAL;
	if (idx >= c->info.n_inputs || !c->info.input_ids[idx])
		return -ENOTCONN;
	r = &c->inputs[idx];
	if (f->size < r->host_size)
		return -EINVAL;
	if (cap < (size_t)off)
		return -ENOSPC;
	n = rtl_rtde_recipe_encode(r, buf + off, cap - (size_t)off, f);
	if (n < 0)
		return n;
	/* Fields already sit where the encoder puts them: no copy. */
	return rtl_rtde_encode_data(buf, cap, c->info.protocol, RTL_RTDE_FROM_CLIENT,
				    c->info.input_ids[idx], buf + off, (size_t)n);
}

/* ---- life cycle ------------------------------------------------------------------ */

static int client_init(struct rtl_rtde_client *c, const struct rtl_rtde_client_config *cfg)
{
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT, 0,
					  RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };
	int err;

	if (!c || !cfg)
		return -EINVAL;
	/* Touches every page of the big struct: pre-faulted before use. */
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->deadline = RTL_RTDE_CLIENT_NO_DEADLINE;
	c->ts_off = c->cs_off = -1;
	c->info.divisor = 1;
	c->error.state = RTL_RTDE_CLIENT_IDLE;
	c->error.fatal = true;
	c->has_outputs = cfg->outputs && cfg->outputs[0];
	while (c->n_inputs < RTL_RTDE_CLIENT_MAX_INPUTS && cfg->inputs[c->n_inputs])
		c->n_inputs++;
	c->timeout_ns =
		cfg->reply_timeout_ns ? cfg->reply_timeout_ns : RTL_RTDE_CLIENT_REPLY_TIMEOUT_NS;

	err = -EINVAL;
	if (isnan(cfg->frequency) || (cfg->frequency != 0 && cfg->frequency < 1)) {
		snprintf(c->error.err.msg, sizeof(c->error.err.msg),
			 "output frequency %g Hz: use 0 for the controller's maximum, or 1 Hz to "
			 "the maximum (125 Hz CB3, 500 Hz e-Series and PolyScope X)",
			 cfg->frequency);
		goto err;
	}
	if (cfg->reply_timeout_ns < 0) {
		snprintf(c->error.err.msg, sizeof(c->error.err.msg),
			 "negative reply timeout: use 0 for the default");
		goto err;
	}
	if (cfg->protocol > 2) {
		snprintf(c->error.err.msg, sizeof(c->error.err.msg),
			 "protocol %u: RTDE has versions 1 and 2 (0 asks for 2, then 1)",
			 (unsigned)cfg->protocol);
		goto err;
	}
	if (!c->has_outputs && !(cfg->flags & RTL_RTDE_CLIENT_NO_START)) {
		snprintf(c->error.err.msg, sizeof(c->error.err.msg),
			 "no output fields: the controller refuses START without at least one "
			 "output (add e.g. \"timestamp\"), or set RTL_RTDE_CLIENT_NO_START for a "
			 "write-only client");
		goto err;
	}
	/* Check the names now, without a controller version: typos fail
	 * before any connection. The handshake builds them again for the
	 * controller's version. */
	if (c->has_outputs) {
		err = rtl_rtde_recipe_from_list(&c->outputs, &o, cfg->outputs, &c->report);
		if (err < 0) {
			/* The report is cut to the message's size. */
			snprintf(c->error.err.msg, sizeof(c->error.err.msg), "output recipe: %.*s",
				 RTL_ERROR_MSG - 32, report_text(c));
			goto err;
		}
	}
	o.dir = RTL_RTDE_RECIPE_INPUT;
	for (unsigned i = 0; i < c->n_inputs; i++) {
		err = rtl_rtde_recipe_from_list(&c->inputs[i], &o, cfg->inputs[i], &c->report);
		if (err < 0) {
			snprintf(c->error.err.msg, sizeof(c->error.err.msg),
				 "input recipe %u: %.*s", i, RTL_ERROR_MSG - 32, report_text(c));
			goto err;
		}
	}
	c->error.fatal = false;
	return 0;
err:
	c->error.err.code = err;
	return err;
}

RTL_API int rtl_rtde_client_create(struct rtl_rtde_client **out,
				   const struct rtl_rtde_client_config *cfg, struct rtl_error *err)
{
	struct rtl_rtde_client_config copy;
	struct rtl_rtde_framer *fr = NULL;
	struct rtl_rtde_client *c;
	size_t total = 0, at = 0;
	char *names = NULL;
	int e;

	if (!out || !cfg)
		return rtl_error_set(err, -EINVAL, "RTDE client: no configuration given");
	*out = NULL;
	e = rtl__sized_in(&copy, sizeof(copy), cfg, "RTDE client: struct rtl_rtde_client_config",
			  err);
	if (e < 0)
		return e;
	cfg = &copy;
	/* The names are copied into one block, in the order below. */
	if (cfg->outputs)
		total += strlen(cfg->outputs) + 1;
	for (unsigned i = 0; i < RTL_RTDE_CLIENT_MAX_INPUTS && cfg->inputs[i]; i++)
		total += strlen(cfg->inputs[i]) + 1;
	c = malloc(sizeof(*c));
	if (total)
		names = malloc(total);
	/* The framer, with room for the largest package the protocol allows:
	 * a controller's reply is not bounded by anything smaller. */
	e = rtl_rtde_framer_create(&fr, RTL_RTDE_MAX_PACKAGE_SIZE, NULL);
	if (!c || (total && !names) || e) {
		free(c);
		free(names);
		rtl_rtde_framer_destroy(fr);
		return rtl_error_set(err, -ENOMEM,
				     "RTDE client: out of memory for a client (%zu bytes)",
				     sizeof(*c) + RTL_RTDE_MAX_PACKAGE_SIZE);
	}
	if (cfg->outputs) {
		copy.outputs = strcpy(names + at, cfg->outputs);
		at += strlen(cfg->outputs) + 1;
	}
	for (unsigned i = 0; i < RTL_RTDE_CLIENT_MAX_INPUTS && cfg->inputs[i]; i++) {
		copy.inputs[i] = strcpy(names + at, cfg->inputs[i]);
		at += strlen(cfg->inputs[i]) + 1;
	}
	e = client_init(c, &copy);
	if (e) {
		if (err)
			*err = c->error.err;
		rtl_rtde_framer_destroy(fr);
		free(names);
		free(c);
		return e;
	}
	/* After client_init(), which clears the whole struct. */
	c->framer = fr;
	c->owned = names;
	*out = c;
	return 0;
}

RTL_API void rtl_rtde_client_destroy(struct rtl_rtde_client *c)
{
	if (!c)
		return;
	rtl_rtde_framer_destroy(c->framer);
	free(c->owned);
	free(c);
}

/* ---- getters ---------------------------------------------------------------------- */

RTL_API enum rtl_rtde_client_state_id rtl_rtde_client_state(const struct rtl_rtde_client *c)
{
	return c ? c->state : RTL_RTDE_CLIENT_IDLE;
}

RTL_API const struct rtl_rtde_recipe *rtl_rtde_client_output_recipe(const struct rtl_rtde_client *c)
{
	return c && c->has_outputs ? &c->outputs : NULL;
}

RTL_API const struct rtl_rtde_recipe *rtl_rtde_client_input_recipe(const struct rtl_rtde_client *c,
								   unsigned idx)
{
	return c && idx < c->n_inputs ? &c->inputs[idx] : NULL;
}

RTL_API const struct rtl_rtde_handshake *rtl_rtde_client_info(const struct rtl_rtde_client *c)
{
	return c ? &c->info : NULL;
}

RTL__DEFINE_COUNTERS(rtl_rtde_client, RTL_RTDE_CLIENT_COUNTERS, stats)

RTL_API const struct rtl_rtde_client_error *
rtl_rtde_client_last_error(const struct rtl_rtde_client *c)
{
	return c ? &c->error : NULL;
}

RTL_API void rtl_rtde_client_count_reconnect(struct rtl_rtde_client *c)
{
	if (c)
		rtl_stat_add(&c->stats.reconnects, 1);
}
