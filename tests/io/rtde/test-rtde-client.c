// SPDX-License-Identifier: MIT
/*
 * RTDE client state machine, driven without sockets or threads: a tiny fake
 * controller in this file builds its bytes with the codec's encoders, the
 * client's requests are checked with the codec's decoders, and time is a
 * number the test sets. Covers the handshake (v2, v1 fallback, frequency
 * rule), every error with its code and text, loss accounting, pause and
 * resume, byte-at-a-time feeding, and that streaming allocates nothing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/rtde_client.h>
#include <rtloop/time.h>

#include "counters.h"
#include "alloc-count.h"

/* ---- the fake controller and an event log ---------------------------------- */

#define T0 (INT64_C(1000) * RTL_NS_PER_SEC)
#define OUTPUTS "timestamp,actual_q"
#define INPUT0 "input_int_register_24"

/* The client is big: keep it (and the second one) off the stack. */
static struct rtl_rtde_client *cl, *cl2;
/* The last create's error. */
static struct rtl_error cl_err;

/* (Re)create *@c for the configuration: the previous one is freed. */
static int make_client(struct rtl_rtde_client **c, const struct rtl_rtde_client_config *cf)
{
	rtl_rtde_client_destroy(*c);
	*c = NULL;
	return rtl_rtde_client_create(c, cf, &cl_err);
}
static struct rtl_rtde_client_config cfg;
static int64_t now = T0;
static uint8_t pkg[65536];
static enum rtl_rtde_protocol proto = RTL_RTDE_PROTOCOL_V2;

struct rec {
	int type;
	int from, to;
	int code;
	bool fatal;
	char msg[1024];
	uint64_t skipped;
	double ts;
	uint64_t cs;
	size_t len;
	uint8_t level;
};

static struct rec recs[256];
static int nrec;

static void record(const struct rtl_rtde_client_event *ev)
{
	struct rec *r = &recs[nrec < 255 ? nrec++ : 255];

	memset(r, 0, sizeof(*r));
	r->type = ev->type;
	switch (ev->type) {
	case RTL_RTDE_CLIENT_EV_STATE:
		r->from = ev->u.state.from;
		r->to = ev->u.state.to;
		break;
	case RTL_RTDE_CLIENT_EV_ERROR:
		r->code = ev->u.error->err.code;
		r->fatal = ev->u.error->fatal;
		/* Messages are shorter than the buffer; cut the rest if not. */
		r->len = strnlen(ev->u.error->err.msg, sizeof(r->msg) - 1);
		memcpy(r->msg, ev->u.error->err.msg, r->len);
		r->msg[r->len] = '\0';
		break;
	case RTL_RTDE_CLIENT_EV_TEXT:
		r->level = ev->u.text.level;
		snprintf(r->msg, sizeof(r->msg), "%.*s|%.*s", (int)ev->u.text.message_len,
			 ev->u.text.message, (int)ev->u.text.source_len,
			 ev->u.text.source ? ev->u.text.source : "");
		break;
	case RTL_RTDE_CLIENT_EV_DATA:
		r->skipped = ev->u.data.skipped;
		r->ts = ev->u.data.has_timestamp ? ev->u.data.timestamp : -1;
		r->cs = ev->u.data.has_control_step ? ev->u.data.control_step : UINT64_MAX;
		r->len = ev->u.data.len;
		break;
	}
}

/* Take every event; returns how many. */
static int drain(struct rtl_rtde_client *c)
{
	struct rtl_rtde_client_event ev;
	int n = 0, r;

	while ((r = rtl_rtde_client_next(c, &ev, now)) == 1) {
		record(&ev);
		n++;
	}
	cr_assert_eq(r, 0);
	return n;
}

/* The controller sends @n bytes (one feed). */
static void ctl_send(const void *p, size_t n)
{
	cr_assert_eq(rtl_rtde_client_feed(cl, p, n), 0);
	drain(cl);
}

static void ctl_accept(int type, bool ok)
{
	int n = rtl_rtde_encode_accepted_reply(pkg, sizeof(pkg), (enum rtl_rtde_pkg)type, ok);

	cr_assert_gt(n, 0);
	ctl_send(pkg, (size_t)n);
}

static void ctl_version(uint32_t major, uint32_t minor)
{
	struct rtl_rtde_controller_version v = { major, minor, 0, 1234 };
	int n = rtl_rtde_encode_urcontrol_version_reply(pkg, sizeof(pkg), &v);

	cr_assert_gt(n, 0);
	ctl_send(pkg, (size_t)n);
}

static void ctl_outputs(uint8_t id, const char *types)
{
	int n = rtl_rtde_encode_setup_outputs_reply(pkg, sizeof(pkg), proto, id, types,
						    strlen(types));

	cr_assert_gt(n, 0);
	ctl_send(pkg, (size_t)n);
}

static void ctl_inputs(uint8_t id, const char *types)
{
	int n = rtl_rtde_encode_setup_inputs_reply(pkg, sizeof(pkg), id, types, strlen(types));

	cr_assert_gt(n, 0);
	ctl_send(pkg, (size_t)n);
}

static int enc_text(uint8_t *buf, enum rtl_rtde_protocol p, uint8_t level, const char *msg,
		    const char *src)
{
	struct rtl_rtde_text t = { level, msg, strlen(msg), src, strlen(src) };
	int n = rtl_rtde_encode_text(buf, 65536, p, RTL_RTDE_FROM_CONTROLLER, &t);

	cr_assert_gt(n, 0);
	return n;
}

/* Data of OUTPUTS (timestamp, actual_q) with recipe id @id. */
static int enc_data(uint8_t *buf, uint8_t id, double ts)
{
	uint8_t f[56];
	int n;

	rtl_rtde_store_f64(f, ts);
	for (int i = 0; i < 6; i++)
		rtl_rtde_store_f64(f + 8 + 8 * i, 0.1 * i);
	n = rtl_rtde_encode_data(buf, 65536, proto, RTL_RTDE_FROM_CONTROLLER, id, f, sizeof(f));
	cr_assert_gt(n, 0);
	return n;
}

/* A data package of the output recipe's id with @nfields bytes of fields. */
static int enc_short_data(uint8_t *buf, double ts, size_t nfields)
{
	uint8_t f[56] = { 0 };
	int n;

	rtl_rtde_store_f64(f, ts);
	n = rtl_rtde_encode_data(buf, 65536, proto, RTL_RTDE_FROM_CONTROLLER, 1, f, nfields);
	cr_assert_gt(n, 0);
	return n;
}

static void ctl_data(double ts)
{
	int n = enc_data(pkg, 1, ts);

	ctl_send(pkg, (size_t)n);
}

/* The client's pending request: decode it, check its type, consume it. */
static struct rtl_rtde_msg req;

static void expect_tx(int type)
{
	const uint8_t *p;
	size_t n = rtl_rtde_client_tx(cl, &p);
	enum rtl_rtde_protocol pr = proto;

	cr_assert_gt(n, 0, "no request pending; expected '%c'", type);
	cr_assert_eq(p[2], type, "request '%c', expected '%c'", p[2], type);
	cr_assert_eq(rtl_rtde_load_u16(p), n, "exactly one request is pending");
	/* Until V is agreed the client speaks v1. */
	if (type == 'V' || type == 'v')
		pr = RTL_RTDE_PROTOCOL_V1;
	cr_assert_eq(rtl_rtde_decode(&req, p, n, pr, RTL_RTDE_FROM_CLIENT), 0);
	rtl_rtde_client_tx_done(cl, n);
	cr_assert_eq(rtl_rtde_client_tx(cl, &p), 0);
}

static int count(int type)
{
	int n = 0;

	for (int i = 0; i < nrec; i++)
		n += recs[i].type == type;
	return n;
}

static const struct rec *last(int type)
{
	for (int i = nrec - 1; i >= 0; i--)
		if (recs[i].type == type)
			return &recs[i];
	return NULL;
}

static bool saw_state(int to)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == RTL_RTDE_CLIENT_EV_STATE && recs[i].to == to)
			return true;
	return false;
}

static void setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.outputs = OUTPUTS;
	cfg.inputs[0] = INPUT0;
	cfg.frequency = 125;
	now = T0;
	nrec = 0;
	proto = RTL_RTDE_PROTOCOL_V2;
	rtl_log_set_handler(NULL, NULL);
}

static void start_client(void)
{
	cr_assert_eq(make_client(&cl, &cfg), 0, "%s", cl_err.msg);
	cr_assert_eq(rtl_rtde_client_connected(cl, now), 0);
	drain(cl);
}

/* Everything up to and including the SETUP_OUTPUTS request. */
static void to_outputs(uint32_t major, uint32_t minor)
{
	start_client();
	expect_tx('V');
	cr_assert_eq(req.u.protocol_version, 2);
	ctl_accept('V', true);
	expect_tx('v');
	ctl_version(major, minor);
	expect_tx('O');
}

/* The whole v2 handshake on an e-Series 5.12 at 125 Hz. */
static void handshake(void)
{
	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	expect_tx('S');
	ctl_accept('S', true);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
}

TestSuite(rtde_client, .init = setup);

/* ---- handshake ------------------------------------------------------------------- */

Test(rtde_client, full_v2_handshake)
{
	static const int seq[] = { RTL_RTDE_CLIENT_PROTOCOL, RTL_RTDE_CLIENT_VERSION,
				   RTL_RTDE_CLIENT_OUTPUTS,  RTL_RTDE_CLIENT_INPUTS,
				   RTL_RTDE_CLIENT_STARTING, RTL_RTDE_CLIENT_RUNNING };
	const struct rtl_rtde_handshake *info;
	int k = 0;

	to_outputs(5, 12);
	cr_assert_eq(req.u.setup.frequency, 125.0);
	cr_assert_eq(req.u.setup.names_len, strlen(OUTPUTS));
	cr_assert_eq(memcmp(req.u.setup.names, OUTPUTS, req.u.setup.names_len), 0);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	cr_assert_eq(memcmp(req.u.setup.names, INPUT0, strlen(INPUT0)), 0);
	ctl_inputs(1, "INT32");
	expect_tx('S');
	cr_assert_eq(rtl_rtde_client_deadline(cl), now + RTL_RTDE_CLIENT_REPLY_TIMEOUT_NS);
	ctl_accept('S', true);

	for (int i = 0; i < nrec; i++) {
		cr_assert_eq(recs[i].type, RTL_RTDE_CLIENT_EV_STATE, "only state changes");
		cr_assert_eq(recs[i].to, seq[k], "step %d: %s", k,
			     rtl_rtde_client_state_name((enum rtl_rtde_client_state_id)recs[i].to));
		k++;
	}
	cr_assert_eq(k, 6);
	info = rtl_rtde_client_info(cl);
	cr_assert_eq(info->protocol, RTL_RTDE_PROTOCOL_V2);
	cr_assert_eq(info->version.major, 5);
	cr_assert_eq(info->version.build, 1234);
	cr_assert_eq(info->output_id, 1);
	cr_assert_eq(info->n_inputs, 1);
	cr_assert_eq(info->input_ids[0], 1);
	cr_assert_eq(info->max_frequency, 500.0);
	cr_assert_eq(info->divisor, 4);
	cr_assert_eq(info->frequency, 125.0);
	cr_assert_eq(info->period_ns, 8 * RTL_NS_PER_MS);
	/* Streaming: the default data time-out is running. */
	cr_assert_eq(rtl_rtde_client_deadline(cl), now + RTL_RTDE_CLIENT_DATA_TIMEOUT_NS);
}

Test(rtde_client, v1_fallback_when_v2_refused)
{
	int n;

	cfg.inputs[0] = NULL;
	start_client();
	expect_tx('V');
	cr_assert_eq(req.u.protocol_version, 2);
	ctl_accept('V', false);
	expect_tx('V');
	cr_assert_eq(req.u.protocol_version, 1);
	ctl_accept('V', true);
	expect_tx('v');
	ctl_version(3, 14);
	proto = RTL_RTDE_PROTOCOL_V1;
	expect_tx('O'); /* decoded as v1: names only */
	cr_assert_eq(req.u.setup.names_len, strlen(OUTPUTS));
	ctl_outputs(0, "DOUBLE,VECTOR6D"); /* v1 reply: no id */
	expect_tx('S');
	ctl_accept('S', true);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(rtl_rtde_client_info(cl)->protocol, RTL_RTDE_PROTOCOL_V1);
	cr_assert_eq(rtl_rtde_client_info(cl)->divisor, 1, "v1 streams at the maximum rate");
	cr_assert_eq(rtl_rtde_client_info(cl)->frequency, 125.0);

	n = enc_data(pkg, 0, 42.0); /* v1 data: no recipe id */
	cr_assert_eq(n, 3 + 56);
	nrec = 0;
	ctl_send(pkg, (size_t)n);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 1);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_DATA)->ts, 42.0);
}

Test(rtde_client, protocol_refused_twice_is_fatal)
{
	start_client();
	expect_tx('V');
	ctl_accept('V', false);
	expect_tx('V');
	ctl_accept('V', false);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->code, -EPROTONOSUPPORT);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
}

Test(rtde_client, frequency_rule)
{
	cr_assert_eq(rtl_rtde_max_frequency(3), 125.0);
	cr_assert_eq(rtl_rtde_max_frequency(4), 125.0);
	cr_assert_eq(rtl_rtde_max_frequency(5), 500.0);
	cr_assert_eq(rtl_rtde_max_frequency(10), 500.0);
	cr_assert_eq(rtl_rtde_output_divisor(125, 25), 5);
	cr_assert_eq(rtl_rtde_output_divisor(500, 25), 20);
	cr_assert_eq(rtl_rtde_output_divisor(125, 50), 2, "50 Hz on CB3 is 62.5 Hz");
	cr_assert_eq(rtl_rtde_output_divisor(500, 300), 1, "300 Hz on e-Series is 500 Hz");
	cr_assert_eq(rtl_rtde_output_divisor(500, 500.0 / 3), 3);
	cr_assert_eq(rtl_rtde_output_divisor(500, 1000), 1);
	cr_assert_eq(rtl_rtde_output_divisor(500, 0), 1);
	cr_assert_eq(rtl_rtde_output_divisor(500, NAN), 1);
	cr_assert_eq(rtl_rtde_output_divisor(125, 1), 125);

	/* Through the handshake: 50 Hz on a CB3. */
	cfg.frequency = 50;
	to_outputs(3, 14);
	cr_assert_eq(req.u.setup.frequency, 50.0);
	cr_assert_eq(rtl_rtde_client_info(cl)->divisor, 2);
	cr_assert_eq(rtl_rtde_client_info(cl)->frequency, 62.5);
	cr_assert_eq(rtl_rtde_client_info(cl)->period_ns, 16 * RTL_NS_PER_MS);

	/* Above the maximum: the maximum is asked for. */
	cfg.frequency = 1000;
	to_outputs(5, 12);
	cr_assert_eq(req.u.setup.frequency, 500.0);
	cr_assert_eq(rtl_rtde_client_info(cl)->divisor, 1);

	/* 0: the controller's maximum. */
	cfg.frequency = 0;
	to_outputs(3, 14);
	cr_assert_eq(req.u.setup.frequency, 125.0);
}

/* The version reply, then the error it caused (or NULL). */
static const struct rec *version_reply(uint32_t major, uint32_t minor)
{
	start_client();
	expect_tx('V');
	ctl_accept('V', true);
	expect_tx('v');
	nrec = 0;
	ctl_version(major, minor);
	return last(RTL_RTDE_CLIENT_EV_ERROR);
}

Test(rtde_client, version_zero_is_refused)
{
	const struct rec *e;
	struct rtl_rtde_controller_version v = { 0, 0, 0, 0 };
	int n;

	start_client();
	expect_tx('V');
	ctl_accept('V', true);
	expect_tx('v');
	nrec = 0;
	n = rtl_rtde_encode_urcontrol_version_reply(pkg, sizeof(pkg), &v);
	ctl_send(pkg, (size_t)n);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e && e->fatal);
	cr_assert_eq(e->code, -EPROTO);
	cr_assert_str_eq(
		e->msg,
		"the controller reported version 0.0.0.0, which no UR controller sends (UR "
		"ships 3.x for CB3, 5.x for e-Series, 10.x for PolyScope X): the peer is not "
		"a UR controller, or its RTDE server is broken");
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
	cr_assert_eq(rtl_rtde_client_tx(cl, NULL), 0, "no SETUP_OUTPUTS");
	e = version_reply(2, 9);
	cr_assert(e && e->code == -EPROTO, "major 2 too");
}

Test(rtde_client, unknown_major_is_refused_unless_allowed)
{
	static const uint32_t unknown[] = { 4, 6, 9, 11, 99 };
	static const uint32_t shipped[] = { 3, 5, 10 };
	const struct rec *e;

	e = version_reply(99, 1);
	cr_assert(e && e->fatal);
	cr_assert_eq(e->code, -EPROTONOSUPPORT);
	cr_assert_str_eq(
		e->msg,
		"the controller reported version 99.1.0.1234, a major version UR has not "
		"shipped (3: CB3, 5: e-Series, 10: PolyScope X); the client would treat it "
		"as PolyScope X (500 Hz, the PolyScope X field versions): set "
		"RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION in the client's flags to accept that");
	e = version_reply(4, 0);
	cr_assert(e && e->code == -EPROTONOSUPPORT);
	cr_assert(strstr(e->msg, "treat it as CB3 (125 Hz, the CB3 field versions)"), "%s", e->msg);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		e = version_reply(unknown[i], 0);
		cr_assert(e && e->code == -EPROTONOSUPPORT, "major %u", unknown[i]);
	}
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		cr_assert_null(version_reply(shipped[i], 15), "major %u", shipped[i]);
		expect_tx('O');
	}
	cfg.flags = RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION;
	cr_assert_null(version_reply(6, 0));
	expect_tx('O');
	cr_assert_eq(rtl_rtde_client_info(cl)->max_frequency, 500.0);
}

Test(rtde_client, not_found_names_the_field)
{
	const struct rec *e;

	to_outputs(5, 12);
	ctl_outputs(0, "NOT_FOUND,VECTOR6D");
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -ENOENT);
	cr_assert(e->fatal);
	cr_assert(strstr(e->msg, "'timestamp'"), "%s", e->msg);
	cr_assert(strstr(e->msg, "SETUP_OUTPUTS"), "%s", e->msg);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
	cr_assert_eq(rtl_rtde_client_last_error(cl)->err.code, -ENOENT);
	cr_assert_eq(rtl_rtde_client_deadline(cl), RTL_RTDE_CLIENT_NO_DEADLINE);
	cr_assert_eq(rtl_rtde_client_feed(cl, pkg, 3), -ENOTCONN);
}

Test(rtde_client, in_use_names_the_field)
{
	const struct rec *e;

	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(0, "IN_USE");
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -EBUSY);
	cr_assert(e->fatal);
	cr_assert(strstr(e->msg, "'" INPUT0 "'"), "%s", e->msg);
	cr_assert(strstr(e->msg, "input recipe 0"), "%s", e->msg);
	cr_assert(strstr(e->msg, "another RTDE client"), "%s", e->msg);
}

Test(rtde_client, refused_recipe_without_bad_field)
{
	to_outputs(5, 12);
	ctl_outputs(0, "DOUBLE,VECTOR6D");
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->code, -EPROTO);
	cr_assert(strstr(last(RTL_RTDE_CLIENT_EV_ERROR)->msg, "recipe id 0"));
}

Test(rtde_client, start_refused)
{
	const struct rec *e;

	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	expect_tx('S');
	ctl_accept('S', false);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert_eq(e->code, -EPERM);
	cr_assert(strstr(e->msg, "refused START"), "%s", e->msg);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
}

Test(rtde_client, wrong_reply_type)
{
	const struct rec *e;

	start_client();
	expect_tx('V');
	ctl_accept('V', true);
	expect_tx('v');
	ctl_accept('S', true);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -EPROTO);
	cr_assert(e->fatal);
	cr_assert(strstr(e->msg, "expected a GET_URCONTROL_VERSION reply"), "%s", e->msg);
	cr_assert(strstr(e->msg, "received a CONTROL_PACKAGE_START reply"), "%s", e->msg);
}

Test(rtde_client, reply_nobody_asked_for_is_dropped)
{
	handshake();
	nrec = 0;
	ctl_accept('V', true);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->code, -EPROTO);
	cr_assert_not(last(RTL_RTDE_CLIENT_EV_ERROR)->fatal);
	cr_assert_eq(client_counts(cl).unexpected, 1);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
}

static int log_levels[8];
static char log_last[512];

static void log_capture(void *user, enum rtl_log_level level, const char *msg)
{
	if (strstr(msg, "controller message")) {
		log_levels[level]++;
		snprintf(log_last, sizeof(log_last), "%s", msg);
	}
}

Test(rtde_client, text_between_request_and_reply)
{
	const struct rec *t;
	int n;

	memset(log_levels, 0, sizeof(log_levels));
	rtl_log_set_handler(log_capture, NULL);
	start_client();
	expect_tx('V');
	/* Before V is agreed: the v1 layout (level, then the message). */
	n = enc_text(pkg, RTL_RTDE_PROTOCOL_V1, RTL_RTDE_LEVEL_INFO, "hello v1", "");
	ctl_send(pkg, (size_t)n);
	t = last(RTL_RTDE_CLIENT_EV_TEXT);
	cr_assert(t);
	cr_assert_str_eq(t->msg, "hello v1|");
	cr_assert_eq(t->level, RTL_RTDE_LEVEL_INFO);
	/* ... or, as some controllers do, already the v2 layout. */
	n = enc_text(pkg, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_WARNING,
		     "SafetySetup has not been confirmed yet", "URControl");
	ctl_send(pkg, (size_t)n);
	cr_assert_str_eq(last(RTL_RTDE_CLIENT_EV_TEXT)->msg,
			 "SafetySetup has not been confirmed yet|URControl");
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_PROTOCOL, "still waiting");
	ctl_accept('V', true);
	expect_tx('v');
	n = enc_text(pkg, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_EXCEPTION, "boom", "URControl");
	ctl_send(pkg, (size_t)n);
	n = enc_text(pkg, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_ERROR, "bad", "URControl");
	ctl_send(pkg, (size_t)n);
	ctl_version(5, 12);
	expect_tx('O');
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_TEXT), 4);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_ERROR), 0);
	cr_assert_eq(client_counts(cl).text, 4);
	cr_assert_eq(log_levels[RTL_LOG_INFO], 1);
	cr_assert_eq(log_levels[RTL_LOG_WARN], 1);
	cr_assert_eq(log_levels[RTL_LOG_ERROR], 2);
	cr_assert(strstr(log_last, "ERROR"), "%s", log_last);
	cr_assert(strstr(log_last, "bad"), "%s", log_last);
	rtl_log_set_handler(NULL, NULL);
}

static char logged_line[1024];

static void keep_log(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	if (strstr(msg, "controller message"))
		snprintf(logged_line, sizeof(logged_line), "%s", msg);
}

/* What the controller writes reaches the log printable, on one line. */
Test(rtde_client, text_messages_are_logged_sanitized)
{
	int n;

	handshake();
	logged_line[0] = '\0';
	rtl_log_set_handler(keep_log, NULL);
	n = enc_text(pkg, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_ERROR,
		     "\x1b[2J\rrtde-record: connected\a\nfake\xff", "\x1b[31mURControl");
	ctl_send(pkg, (size_t)n);
	rtl_log_set_handler(NULL, NULL);
	cr_assert_str_eq(logged_line, "RTDE controller message (ERROR, from \\x1b[31mURControl): "
				      "\\x1b[2J\\rrtde-record: connected\\x07\\nfake\\xff");
	/* The event keeps the bytes as sent: a program that prints them
	 * sanitizes them itself. */
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_TEXT)->msg[0], '\x1b');
}

/* A type name in a setup reply is the controller's text too. */
Test(rtde_client, reply_type_text_is_sanitized_in_the_error)
{
	const struct rec *e;

	to_outputs(5, 12);
	nrec = 0;
	ctl_outputs(1, "DOUBLE,\x1b[2J\n");
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e && e->fatal);
	cr_assert(strstr(e->msg, "reply item 2, '\\x1b[2J\\n', is not an RTDE type"), "%s", e->msg);
	cr_assert_null(strchr(e->msg, '\x1b'));
}

Test(rtde_client, data_before_start_reply_counts_as_start)
{
	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	expect_tx('S');
	nrec = 0;
	ctl_data(50.0);
	cr_assert_eq(nrec, 2);
	cr_assert_eq(recs[0].type, RTL_RTDE_CLIENT_EV_STATE);
	cr_assert_eq(recs[0].from, RTL_RTDE_CLIENT_STARTING);
	cr_assert_eq(recs[0].to, RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(recs[1].type, RTL_RTDE_CLIENT_EV_DATA);
	cr_assert_eq(recs[1].ts, 50.0);
	/* The late reply is taken quietly. */
	ctl_accept('S', true);
	cr_assert_eq(nrec, 2);
	cr_assert_eq(client_counts(cl).unexpected, 0);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
}

/* The START reply and 100 data packages in one receive: every package
 * is delivered, in order, none counted as lost. */
Test(rtde_client, data_in_the_start_read_is_delivered)
{
	static uint8_t buf[8192];
	size_t len;

	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	expect_tx('S');
	len = (size_t)rtl_rtde_encode_accepted_reply(buf, sizeof(buf), RTL_RTDE_PKG_START, true);
	for (int i = 0; i < 100; i++)
		len += (size_t)enc_data(buf + len, 1, 10.0 + 0.008 * i);
	nrec = 0;
	ctl_send(buf, len);
	cr_assert_eq(recs[0].type, RTL_RTDE_CLIENT_EV_STATE);
	cr_assert_eq(recs[0].to, RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 100);
	for (int i = 0; i < 100; i++) {
		cr_assert_eq(recs[1 + i].type, RTL_RTDE_CLIENT_EV_DATA);
		cr_assert_float_eq(recs[1 + i].ts, 10.0 + 0.008 * i, 1e-9, "package %d", i);
		cr_assert_eq(recs[1 + i].skipped, 0);
	}
	cr_assert_eq(client_counts(cl).data, 100);
	cr_assert_eq(client_counts(cl).skipped, 0);
	cr_assert_eq(client_counts(cl).unexpected, 0);
}

Test(rtde_client, recipe_id_mismatch_is_dropped_and_counted)
{
	const struct rec *e;
	int n;

	handshake();
	nrec = 0;
	n = enc_data(pkg, 2, 50.0);
	ctl_send(pkg, (size_t)n);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -ENOMSG);
	cr_assert_not(e->fatal);
	cr_assert(strstr(e->msg, "recipe id 2"), "%s", e->msg);
	cr_assert(strstr(e->msg, "has id 1"), "%s", e->msg);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 0);
	cr_assert_eq(client_counts(cl).wrong_recipe, 1);
	ctl_data(50.008);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 1);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
}

Test(rtde_client, malformed_packages_are_dropped_and_counted)
{
	uint8_t bad[16] = { 0, 8, 'U', 1, 0, 0, 0, 0 }; /* 4 bytes of fields, recipe has 56 */
	uint8_t no_id[3] = { 0, 3, 'U' };		/* v2: no recipe id */
	uint8_t unknown[4] = { 0, 4, 'A', 0 };
	uint8_t text[5] = { 0, 5, 'M', 9, 'x' }; /* v2: length 9 runs past the end */

	handshake();
	nrec = 0;
	ctl_send(bad, 8);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->code, -EBADMSG);
	cr_assert_not(last(RTL_RTDE_CLIENT_EV_ERROR)->fatal);
	cr_assert_str_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->msg,
			 "DATA_PACKAGE of the wrong size: 4 bytes of fields, the output recipe "
			 "has 56 (the controller streams another recipe than the one set up) "
			 "(not fatal: dropped and counted)");
	cr_assert_eq(client_counts(cl).wrong_size, 1);
	cr_assert_eq(client_counts(cl).malformed, 0, "a wrong size is no malformed");
	ctl_send(no_id, 3);
	cr_assert_str_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->msg,
			 "malformed DATA_PACKAGE of 3 bytes (no recipe id) (not fatal: dropped and "
			 "counted)");
	ctl_send(unknown, 4);
	cr_assert(strstr(last(RTL_RTDE_CLIENT_EV_ERROR)->msg, "unknown type 65"), "%s",
		  last(RTL_RTDE_CLIENT_EV_ERROR)->msg);
	ctl_send(text, 5);
	cr_assert(strstr(last(RTL_RTDE_CLIENT_EV_ERROR)->msg, "TEXT_MESSAGE"));
	cr_assert_eq(client_counts(cl).malformed, 3);
	cr_assert_eq(client_counts(cl).wrong_size, 1);
	cr_assert_eq(client_counts(cl).wrong_recipe, 0);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_ERROR), 4);
	ctl_data(7.0);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 1);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
}

Test(rtde_client, framer_out_of_sync_is_fatal)
{
	uint8_t junk[4] = { 0, 2, 'U', 0 }; /* declares 2 bytes: below the header */
	const struct rec *e;

	handshake();
	ctl_send(junk, sizeof(junk));
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -EMSGSIZE);
	cr_assert(e->fatal);
	cr_assert(strstr(e->msg, "out of sync"), "%s", e->msg);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
	/* A new connection starts over. */
	nrec = 0;
	cr_assert_eq(rtl_rtde_client_connected(cl, now), 0);
	drain(cl);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_PROTOCOL);
	expect_tx('V');
}

Test(rtde_client, reply_timeout_via_poll)
{
	struct rtl_rtde_client_event ev;

	cfg.reply_timeout_ns = 500 * RTL_NS_PER_MS;
	start_client();
	cr_assert_eq(rtl_rtde_client_deadline(cl), T0 + 500 * RTL_NS_PER_MS);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, T0 + 499 * RTL_NS_PER_MS), 0);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, T0 + 500 * RTL_NS_PER_MS), 1);
	cr_assert_eq(ev.type, RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert_eq(ev.u.error->err.code, -ETIMEDOUT);
	cr_assert(ev.u.error->fatal);
	cr_assert(strstr(ev.u.error->err.msg, "no REQUEST_PROTOCOL_VERSION reply within 0.500 s"),
		  "%s", ev.u.error->err.msg);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, T0 + 600 * RTL_NS_PER_MS), 1);
	cr_assert_eq(ev.type, RTL_RTDE_CLIENT_EV_STATE);
	cr_assert_eq(ev.u.state.to, RTL_RTDE_CLIENT_FAILED);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, T0 + 700 * RTL_NS_PER_MS), 0);
}

Test(rtde_client, default_timeout_is_two_seconds_per_reply)
{
	struct rtl_rtde_client_event ev;

	start_client();
	expect_tx('V');
	now = T0 + RTL_NS_PER_SEC;
	ctl_accept('V', true); /* the next request gets its own 2 s */
	expect_tx('v');
	cr_assert_eq(rtl_rtde_client_deadline(cl), T0 + 3 * RTL_NS_PER_SEC);
	now = T0 + 3 * RTL_NS_PER_SEC - 1;
	cr_assert_eq(rtl_rtde_client_next(cl, &ev, now), 0);
	now++;
	cr_assert_eq(rtl_rtde_client_next(cl, &ev, now), 1);
	cr_assert_eq(ev.u.error->err.code, -ETIMEDOUT);
	cr_assert(strstr(ev.u.error->err.msg, "GET_URCONTROL_VERSION"));
}

Test(rtde_client, data_timeout_while_running)
{
	struct rtl_rtde_client_event ev;

	cfg.data_timeout_ns = 100 * RTL_NS_PER_MS;
	handshake();
	now += 50 * RTL_NS_PER_MS;
	ctl_data(1.0);
	cr_assert_eq(rtl_rtde_client_deadline(cl), now + 100 * RTL_NS_PER_MS);
	now += 100 * RTL_NS_PER_MS;
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, now), 1);
	cr_assert_eq(ev.u.error->err.code, -ETIMEDOUT);
	cr_assert(ev.u.error->fatal);
	cr_assert_str_eq(ev.u.error->err.msg,
			 "no data package for 0.1 s after the last one (0.050 s after START) (the "
			 "controller stopped sending; raise data_timeout_ns if it is expected to "
			 "pause)");
}

/* A controller that accepts START and never sends: 1 s by default. */
Test(rtde_client, default_data_timeout_ends_a_silent_stream)
{
	struct rtl_rtde_client_event ev;

	handshake();
	cr_assert_eq(rtl_rtde_client_deadline(cl), now + RTL_NS_PER_SEC);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, now + RTL_NS_PER_SEC - 1), 0);
	cr_assert_eq(rtl_rtde_client_poll(cl, &ev, now + RTL_NS_PER_SEC), 1);
	cr_assert_eq(ev.type, RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert_eq(ev.u.error->err.code, -ETIMEDOUT);
	cr_assert(ev.u.error->fatal);
	cr_assert_eq(ev.u.error->state, RTL_RTDE_CLIENT_RUNNING);
	cr_assert_str_eq(ev.u.error->err.msg,
			 "no data package for 1.0 s after START (the controller stopped sending; "
			 "raise data_timeout_ns if it is expected to pause)");
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
}

/* At a slow rate the default is 10 periods; < 0 is no limit. */
Test(rtde_client, data_timeout_default_follows_the_rate_and_can_be_off)
{
	cfg.frequency = 5; /* one package every 100 cycles: 200 ms */
	handshake();
	cr_assert_eq(rtl_rtde_client_info(cl)->period_ns, 200 * RTL_NS_PER_MS);
	cr_assert_eq(rtl_rtde_client_deadline(cl), now + 2 * RTL_NS_PER_SEC);

	cfg.frequency = 125;
	cfg.data_timeout_ns = -1;
	handshake();
	cr_assert_eq(rtl_rtde_client_deadline(cl), RTL_RTDE_CLIENT_NO_DEADLINE);
}

/*
 * 2,000 data packages of the wrong size, 2 ms apart, and nothing valid:
 * they do not reset the data time-out, so the session ends after 1 s (500
 * packages) with a message that says what the controller sent.
 */
Test(rtde_client, only_dropped_packages_end_the_session)
{
	const struct rec *e;
	int n, fed = 0;

	handshake();
	nrec = 0;
	n = enc_short_data(pkg, 1.0, 8);
	for (int i = 0; i < 2000; i++) {
		now += 2 * RTL_NS_PER_MS;
		if (rtl_rtde_client_feed(cl, pkg, (size_t)n) != 0)
			break;
		fed++;
		nrec = 0; /* keep only this package's events */
		drain(cl);
	}
	cr_assert_eq(fed, 500);
	cr_assert_eq(client_counts(cl).wrong_size, 500);
	cr_assert_eq(client_counts(cl).data, 0);
	cr_assert_eq(client_counts(cl).skipped, 0);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_FAILED);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e && e->fatal);
	cr_assert_eq(e->code, -ETIMEDOUT);
	cr_assert_str_eq(
		e->msg, "no valid data package for 1.0 s after START: the controller sent 500 data "
			"packages in that time and every one was dropped (500 of the wrong size "
			"(the last with 8 bytes of fields, the recipe has 56)): it streams "
			"something else than the recipe set up; reconnect");
}

/* ---- loss accounting ------------------------------------------------------------ */

Test(rtde_client, skipped_counted_from_timestamp_steps)
{
	/* 125 Hz on e-Series: one package every 4 cycles of 2 ms. */
	static const double ts[] = { 100.0, 100.008, 100.016, 100.040, 100.048, 100.128 };
	static const uint64_t want[] = { 0, 0, 0, 2, 0, 9 };

	handshake();
	nrec = 0;
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		ctl_data(ts[i]);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 6);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(recs[i].skipped, want[i], "package %d: %llu skipped", i,
			     (unsigned long long)recs[i].skipped);
	cr_assert_eq(client_counts(cl).skipped, 11);
	cr_assert_eq(client_counts(cl).data, 6);
	cr_assert_eq(client_counts(cl).resets, 0);
}

/* A running client whose output recipe is timestamp,control_step (recipe
 * 1), with nothing recorded yet. */
static void stream_timestamp_and_control_step(void)
{
	cfg.outputs = "timestamp,control_step";
	to_outputs(5, 26);
	ctl_outputs(1, "DOUBLE,UINT64");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	expect_tx('S');
	ctl_accept('S', true);
	nrec = 0;
}

/* One data package of that recipe. */
static void ctl_data_cs(double ts, uint64_t cs)
{
	uint8_t f[16];
	int n;

	rtl_rtde_store_f64(f, ts);
	rtl_rtde_store_u64(f + 8, cs);
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), proto, RTL_RTDE_FROM_CONTROLLER, 1, f,
				 sizeof(f));
	ctl_send(pkg, (size_t)n);
}

Test(rtde_client, skipped_counted_from_control_step)
{
	/* control_step wins over a timestamp that says otherwise. */
	static const uint64_t cs[] = { 1000, 1004, 1016, 1020, 10 };
	static const uint64_t want[] = { 0, 0, 2, 0, 0 };

	stream_timestamp_and_control_step();
	for (int i = 0; i < 5; i++)
		ctl_data_cs(100.0 + 0.008 * i, cs[i]);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(recs[i].cs, cs[i]);
		cr_assert_eq(recs[i].skipped, want[i], "package %d", i);
	}
	cr_assert_eq(client_counts(cl).skipped, 2);
	cr_assert_eq(client_counts(cl).resets, 1, "control_step went backwards");
}

/*
 * Packages the controller sent but the client dropped are no controller
 * skips: 100.000 delivered, 100.008 (wrong size), 100.016 (wrong recipe
 * id) and 100.024 (no recipe id) dropped, 100.032 delivered with 0
 * skipped; then a real gap of two cycles (100.032 -> 100.056) counts 2.
 */
Test(rtde_client, dropped_packages_are_not_controller_skips)
{
	int n;

	handshake();
	nrec = 0;
	ctl_data(100.0);
	n = enc_short_data(pkg, 100.008, 8);
	ctl_send(pkg, (size_t)n);
	n = enc_data(pkg, 7, 100.016);
	ctl_send(pkg, (size_t)n);
	ctl_send("\x00\x03U", 3);
	ctl_data(100.032);
	ctl_data(100.056);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 3);
	cr_assert_eq(client_counts(cl).wrong_size, 1);
	cr_assert_eq(client_counts(cl).wrong_recipe, 1);
	cr_assert_eq(client_counts(cl).malformed, 1);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_DATA)->skipped, 2, "the real gap");
	cr_assert_eq(client_counts(cl).skipped, 2, "%llu skipped",
		     (unsigned long long)client_counts(cl).skipped);
}

/*
 * control_step jumping from 0 to 2^64 - 1 at one package every 4 cycles:
 * 2^62 steps, so 2^62 - 1 skipped, all 64 bits of it (rounding by
 * cycles + n / 2 wrapped to 0 here).
 */
Test(rtde_client, control_step_jump_keeps_64_bits)
{
	stream_timestamp_and_control_step();
	for (int i = 0; i < 2; i++)
		ctl_data_cs(100.0, i ? UINT64_MAX : 0);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 2);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_DATA)->skipped, (UINT64_C(1) << 62) - 1, "%llu",
		     (unsigned long long)last(RTL_RTDE_CLIENT_EV_DATA)->skipped);
	cr_assert_eq(client_counts(cl).skipped, (UINT64_C(1) << 62) - 1);
	cr_assert_eq(client_counts(cl).resets, 0);
}

Test(rtde_client, timestamp_reset_counted_and_rebased)
{
	static const double ts[] = { 100.0, 100.008, 0.008, 0.016, 0.032 };
	static const uint64_t want[] = { 0, 0, 0, 0, 1 };

	handshake();
	nrec = 0;
	for (int i = 0; i < 5; i++)
		ctl_data(ts[i]);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(recs[i].skipped, want[i], "package %d", i);
	cr_assert_eq(client_counts(cl).resets, 1);
	cr_assert_eq(client_counts(cl).skipped, 1);
}

Test(rtde_client, fields_too_new_fail_or_drop)
{
	const struct rec *e;

	/* control_step came with 5.26: a 5.12 controller does not have it. */
	cfg.outputs = "timestamp,control_step";
	start_client();
	expect_tx('V');
	ctl_accept('V', true);
	expect_tx('v');
	ctl_version(5, 12);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -EPROTO);
	cr_assert(strstr(e->msg, "control_step"), "%s", e->msg);
	cr_assert(strstr(e->msg, "RTL_RTDE_RECIPE_DROP_UNAVAILABLE"), "%s", e->msg);

	nrec = 0;
	cfg.recipe_flags = RTL_RTDE_RECIPE_DROP_UNAVAILABLE;
	to_outputs(5, 12);
	cr_assert_eq(req.u.setup.names_len, strlen("timestamp"));
	cr_assert_eq(rtl_rtde_client_output_recipe(cl)->n, 1);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_ERROR), 0);
}

/* ---- pause, resume, close ---------------------------------------------------------- */

Test(rtde_client, pause_and_resume)
{
	handshake();
	ctl_data(10.0);
	cr_assert_eq(rtl_rtde_client_start(cl, now), -EALREADY);
	cr_assert_eq(rtl_rtde_client_pause(cl, now), 0);
	expect_tx('P');
	cr_assert_eq(rtl_rtde_client_pause(cl, now), -EALREADY);
	cr_assert_eq(rtl_rtde_client_start(cl, now), -EBUSY);
	nrec = 0;
	ctl_data(10.008); /* queued before the reply: still delivered */
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 1);
	ctl_accept('P', true);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_READY);
	cr_assert_eq(rtl_rtde_client_deadline(cl), RTL_RTDE_CLIENT_NO_DEADLINE);

	cr_assert_eq(rtl_rtde_client_start(cl, now), 0);
	expect_tx('S');
	ctl_accept('S', true);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_RUNNING);
	nrec = 0;
	ctl_data(60.0); /* the controller ran on while paused: not skips */
	ctl_data(60.008);
	cr_assert_eq(recs[0].skipped, 0);
	cr_assert_eq(recs[1].skipped, 0);
	cr_assert_eq(client_counts(cl).skipped, 0);
	cr_assert_eq(client_counts(cl).unexpected, 0);
}

Test(rtde_client, no_start_rests_in_ready)
{
	cfg.flags = RTL_RTDE_CLIENT_NO_START;
	to_outputs(5, 12);
	ctl_outputs(1, "DOUBLE,VECTOR6D");
	expect_tx('I');
	ctl_inputs(1, "INT32");
	cr_assert_eq(rtl_rtde_client_tx(cl, NULL), 0);
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_READY);
	cr_assert_eq(rtl_rtde_client_pause(cl, now), -EALREADY);
	cr_assert_eq(rtl_rtde_client_start(cl, now), 0);
	expect_tx('S');
}

Test(rtde_client, closed_mid_package_says_so)
{
	const struct rec *e;
	int n;

	handshake();
	n = enc_data(pkg, 1, 1.0);
	cr_assert_eq(rtl_rtde_client_feed(cl, pkg, 10), 0);
	drain(cl);
	nrec = 0;
	cr_assert_eq(rtl_rtde_client_closed(cl, now, 0), 0);
	drain(cl);
	e = last(RTL_RTDE_CLIENT_EV_ERROR);
	cr_assert(e);
	cr_assert_eq(e->code, -ECONNRESET);
	cr_assert(e->fatal);
	cr_assert(strstr(e->msg, "closed the connection in the middle of a package"), "%s", e->msg);
	char want[64];
	snprintf(want, sizeof(want), "10 of %d bytes of a DATA_PACKAGE", n);
	cr_assert(strstr(e->msg, want), "%s", e->msg);
	cr_assert(strstr(e->msg, "reads too slowly"), "%s", e->msg);
	cr_assert(saw_state(RTL_RTDE_CLIENT_CLOSED));
	cr_assert_eq(rtl_rtde_client_state(cl), RTL_RTDE_CLIENT_CLOSED);
	/* Closing again says nothing more. */
	nrec = 0;
	cr_assert_eq(rtl_rtde_client_closed(cl, now, 0), 0);
	cr_assert_eq(drain(cl), 0);
}

Test(rtde_client, closed_during_handshake_names_the_reply)
{
	start_client();
	expect_tx('V');
	cr_assert_eq(rtl_rtde_client_closed(cl, now, -ECONNRESET), 0);
	drain(cl);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_ERROR)->code, -ECONNRESET);
	cr_assert(strstr(last(RTL_RTDE_CLIENT_EV_ERROR)->msg,
			 "reset the connection while the client waited for the "
			 "REQUEST_PROTOCOL_VERSION reply"),
		  "%s", last(RTL_RTDE_CLIENT_EV_ERROR)->msg);
}

/* ---- byte-at-a-time and the data helpers ----------------------------------------- */

/* The controller's side of a whole session as one byte stream. */
static size_t session(uint8_t *s)
{
	struct rtl_rtde_controller_version v = { 5, 12, 0, 1 };
	size_t n = 0;

	n += (size_t)rtl_rtde_encode_accepted_reply(s + n, 65536, RTL_RTDE_PKG_PROTOCOL_VERSION,
						    true);
	n += (size_t)enc_text(s + n, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_WARNING, "w", "src");
	n += (size_t)rtl_rtde_encode_urcontrol_version_reply(s + n, 65536, &v);
	n += (size_t)rtl_rtde_encode_setup_outputs_reply(s + n, 65536, RTL_RTDE_PROTOCOL_V2, 1,
							 "DOUBLE,VECTOR6D", 15);
	n += (size_t)rtl_rtde_encode_setup_inputs_reply(s + n, 65536, 1, "INT32", 5);
	n += (size_t)enc_data(s + n, 1, 20.0); /* overtakes the START reply */
	n += (size_t)rtl_rtde_encode_accepted_reply(s + n, 65536, RTL_RTDE_PKG_START, true);
	n += (size_t)enc_data(s + n, 1, 20.008);
	n += (size_t)enc_data(s + n, 2, 20.016); /* wrong id */
	/* Two cycles missing: the client dropped one, the controller skipped one. */
	n += (size_t)enc_data(s + n, 1, 20.032);
	n += (size_t)enc_text(s + n, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_LEVEL_INFO, "i", "src");
	n += (size_t)enc_data(s + n, 1, 20.040);
	return n;
}

static void run_session(const uint8_t *s, size_t len, size_t step)
{
	struct rtl_rtde_client_event ev;

	cr_assert_eq(make_client(&cl2, &cfg), 0);
	cr_assert_eq(rtl_rtde_client_connected(cl2, now), 0);
	for (size_t at = 0; at < len; at += step) {
		size_t k = len - at < step ? len - at : step;

		cr_assert_eq(rtl_rtde_client_feed(cl2, s + at, k), 0);
		while (rtl_rtde_client_next(cl2, &ev, now) == 1)
			record(&ev);
	}
}

Test(rtde_client, byte_at_a_time_gives_the_same_events)
{
	static uint8_t s[4096];
	static struct rec whole[256];
	size_t len = session(s);
	int n_whole;

	run_session(s, len, len);
	n_whole = nrec;
	memcpy(whole, recs, sizeof(whole));
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_DATA), 4);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_TEXT), 2);
	cr_assert_eq(count(RTL_RTDE_CLIENT_EV_ERROR), 1);
	cr_assert_eq(last(RTL_RTDE_CLIENT_EV_DATA)->skipped, 0);
	cr_assert_eq(client_counts(cl2).skipped, 1);

	for (size_t step = 1; step <= 7; step += 6) {
		nrec = 0;
		run_session(s, len, step);
		cr_assert_eq(nrec, n_whole, "step %zu: %d events, whole: %d", step, nrec, n_whole);
		for (int i = 0; i < nrec; i++) {
			cr_assert_eq(recs[i].type, whole[i].type, "event %d", i);
			cr_assert_eq(recs[i].from, whole[i].from);
			cr_assert_eq(recs[i].to, whole[i].to);
			cr_assert_eq(recs[i].code, whole[i].code);
			cr_assert_eq(recs[i].skipped, whole[i].skipped);
			cr_assert_eq(recs[i].ts, whole[i].ts);
			cr_assert_str_eq(recs[i].msg, whole[i].msg);
		}
		cr_assert_eq(client_counts(cl2).skipped, 1);
		cr_assert_eq(client_counts(cl2).wrong_recipe, 1);
	}
}

Test(rtde_client, decode_and_encode_inputs)
{
	static unsigned char store[1024];
	struct rtl_rtde_client_event ev;
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle h;
	struct rtl_rtde_msg m;
	uint8_t out[64];
	double q[6];
	int n;

	handshake();
	n = enc_data(pkg, 1, 3.5);
	cr_assert_eq(rtl_rtde_client_feed(cl, pkg, (size_t)n), 0);
	cr_assert_eq(rtl_rtde_client_next(cl, &ev, now), 1);
	cr_assert_eq(
		rtl_rtde_frame_init(&f, store, sizeof(store), rtl_rtde_client_output_recipe(cl)),
		0);
	cr_assert_eq(rtl_rtde_client_decode(cl, &f, &ev), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(cl), &h, "actual_q"), 0);
	cr_assert(rtl_rtde_frame_get_vec6(&f, h, q));
	cr_assert_float_eq(q[5], 0.5, 1e-12);
	cr_assert_eq(rtl_rtde_client_next(cl, &ev, now), 0);

	cr_assert_eq(
		rtl_rtde_frame_init(&f, store, sizeof(store), rtl_rtde_client_input_recipe(cl, 0)),
		0);
	cr_assert_eq(rtl_rtde_recipe_handle(rtl_rtde_client_input_recipe(cl, 0), &h, INPUT0), 0);
	cr_assert(rtl_rtde_frame_set_int(&f, h, -7));
	n = rtl_rtde_client_encode_inputs(cl, 0, out, sizeof(out), &f);
	cr_assert_eq(n, 8);
	cr_assert_eq(rtl_rtde_decode(&m, out, (size_t)n, proto, RTL_RTDE_FROM_CLIENT), 0);
	cr_assert_eq(m.type, RTL_RTDE_PKG_DATA);
	cr_assert_eq(m.u.data.recipe_id, 1);
	cr_assert_eq(rtl_rtde_load_i32(m.u.data.fields), -7);
	cr_assert_eq(rtl_rtde_client_encode_inputs(cl, 1, out, sizeof(out), &f), -EINVAL);
	cr_assert_eq(rtl_rtde_client_encode_inputs(cl, 0, out, 6, &f), -ENOSPC);
}

Test(rtde_client, init_checks_names_and_config)
{
	struct rtl_error err;
	struct rtl_rtde_client *c = NULL;

	cfg.outputs = "timestamp,actual_tcp_pose";
	cr_assert_eq(make_client(&cl, &cfg), -ENOENT);
	cr_assert(strstr(cl_err.msg, "did you mean 'actual_TCP_pose'"), "%s", cl_err.msg);
	cr_assert_null(cl, "nothing is created on failure");

	cfg.outputs = OUTPUTS;
	cfg.frequency = 0.5;
	cr_assert_eq(make_client(&cl, &cfg), -EINVAL);
	cfg.frequency = 125;
	cfg.outputs = NULL;
	cr_assert_eq(make_client(&cl, &cfg), -EINVAL);
	cr_assert(strstr(cl_err.msg, "RTL_RTDE_CLIENT_NO_START"));
	cfg.flags = RTL_RTDE_CLIENT_NO_START;
	cr_assert_eq(make_client(&cl, &cfg), 0);
	cr_assert_eq(rtl_rtde_client_start(cl, now), -ENOTCONN);
	cr_assert_eq(rtl_rtde_client_feed(cl, pkg, 1), -ENOTCONN);
	cr_assert_eq(rtl_rtde_client_create(NULL, &cfg, &err), -EINVAL);
	cr_assert_eq(rtl_rtde_client_create(&c, NULL, &err), -EINVAL);

	/* create copies the names: the recipe's are the configured ones
	 * after the caller's buffer is overwritten. */
	{
		char outs[] = OUTPUTS;

		cfg.outputs = outs;
		cfg.flags = 0;
		cr_assert_eq(rtl_rtde_client_create(&c, &cfg, &err), 0, "%s", err.msg);
		memset(outs, 'x', sizeof(outs) - 1);
		cr_assert_str_eq(rtl_rtde_client_output_recipe(c)->fields[0]->name, "timestamp");
		rtl_rtde_client_destroy(c);
	}
	rtl_rtde_client_destroy(NULL);
}

Test(rtde_client, running_data_allocates_nothing)
{
	static unsigned char store[1024];
	static uint8_t burst[8192];
	struct rtl_rtde_client_event ev;
	struct rtl_rtde_frame f;
	uint64_t sink = 0;
	size_t len = 0;
	long allocs;

	handshake();
	cr_assert_eq(
		rtl_rtde_frame_init(&f, store, sizeof(store), rtl_rtde_client_output_recipe(cl)),
		0);
	/* A burst: good packages, a skip, a wrong id and a malformed one. */
	for (int i = 0; i < 100; i++)
		len += (size_t)enc_data(burst + len, i == 50 ? 3 : 1, 1.0 + 0.008 * i + (i > 70));
	memcpy(burst + len, "\x00\x08U\x01\x00\x00\x00\x00", 8);
	len += 8;

	/* Positive control: the counter sees an allocation. */
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");

	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int round = 0; round < 20; round++) {
		/* Whole, then split across feeds (the framer assembles). */
		size_t cut = len / 3 + (size_t)round;

		rtl_rtde_client_feed(cl, burst, cut);
		while (rtl_rtde_client_next(cl, &ev, now) == 1)
			if (ev.type == RTL_RTDE_CLIENT_EV_DATA) {
				rtl_rtde_client_decode(cl, &f, &ev);
				sink += ev.u.data.skipped + f.values[0];
			}
		rtl_rtde_client_feed(cl, burst + cut, len - cut);
		while (rtl_rtde_client_next(cl, &ev, now) == 1)
			if (ev.type == RTL_RTDE_CLIENT_EV_DATA) {
				rtl_rtde_client_decode(cl, &f, &ev);
				sink += ev.u.data.skipped + f.values[0];
			}
	}
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_eq(allocs, 0, "%ld allocations", allocs);
	cr_assert_eq(client_counts(cl).data, 20 * 99);
	cr_assert_eq(client_counts(cl).wrong_recipe, 20);
	cr_assert_eq(client_counts(cl).wrong_size, 20);
	cr_assert_eq(client_counts(cl).malformed, 0);
	cr_assert_gt(client_counts(cl).skipped, 0);
	cr_assert_neq(sink, 0);
}
