// SPDX-License-Identifier: MIT
/*
 * The simulated controller's protocol, driven as step functions: bytes
 * built by the codec (or copied from docs/rtde-protocol.md section 7) go
 * into a session, and the bytes it queues are compared byte-exactly with
 * the reference. Time is a number; no socket, no thread, no sleep.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/time.h>

#include "session.h"
#include "sim.h"

#define MS RTL_NS_PER_MS

static struct sim *new_sim(const struct sim_opts *o)
{
	int err = 0;
	struct sim *sim = sim_new(o, 0, &err);

	cr_assert_eq(err, 0, "sim_new: %d", err);
	cr_assert_not_null(sim);
	return sim;
}

static struct sim *new_sim_profile(enum sim_profile_id p)
{
	struct sim_opts o;

	sim_opts_default(&o);
	o.profile = p;
	return new_sim(&o);
}

/* Take everything the session queued (up to @cap bytes). */
static size_t take(struct sim_session *s, uint8_t *out, size_t cap)
{
	const uint8_t *p;
	size_t n = sim_session_pending(s, &p);

	cr_assert_leq(n, cap, "%zu bytes queued, room for %zu", n, cap);
	memcpy(out, p, n);
	sim_session_consumed(s, n);
	return n;
}

static void feed(struct sim *sim, struct sim_session *s, const void *b, size_t n)
{
	int r = sim_session_feed(sim, s, b, n, 0);

	cr_assert_geq(r, 0, "feed: %d", r);
}

/* Feed @req and expect exactly @exp (@elen bytes) back. */
static void expect_reply(struct sim *sim, struct sim_session *s, const void *req, size_t rlen,
			 const void *exp, size_t elen)
{
	uint8_t got[70000];
	size_t n;

	feed(sim, s, req, rlen);
	n = take(s, got, sizeof(got));
	cr_assert_eq(n, elen, "reply of %zu bytes, expected %zu", n, elen);
	cr_assert_arr_eq(got, exp, elen)
		;
}

static void negotiate(struct sim *sim, struct sim_session *s, uint16_t v)
{
	uint8_t req[8], rep[8];

	rtl_rtde_encode_protocol_version_request(req, sizeof(req), v);
	rtl_rtde_encode_accepted_reply(rep, sizeof(rep), RTL_RTDE_PKG_PROTOCOL_VERSION, true);
	expect_reply(sim, s, req, 5, rep, 4);
}

/* Send SETUP_OUTPUTS @names at @hz and expect reply id @id with @types. */
static void outputs(struct sim *sim, struct sim_session *s, double hz, const char *names,
		    uint8_t id, const char *types)
{
	static uint8_t req[70000], exp[70000];
	int rl =
		rtl_rtde_encode_setup_outputs(req, sizeof(req), s->proto, hz, names, strlen(names));
	int el = rtl_rtde_encode_setup_outputs_reply(exp, sizeof(exp), s->proto, id, types,
						     strlen(types));

	cr_assert_gt(rl, 0);
	cr_assert_gt(el, 0);
	expect_reply(sim, s, req, (size_t)rl, exp, (size_t)el);
}

static void inputs(struct sim *sim, struct sim_session *s, const char *names, uint8_t id,
		   const char *types)
{
	static uint8_t req[70000], exp[70000];
	int rl = rtl_rtde_encode_setup_inputs(req, sizeof(req), names, strlen(names));
	int el = rtl_rtde_encode_setup_inputs_reply(exp, sizeof(exp), id, types, strlen(types));

	cr_assert_gt(rl, 0);
	cr_assert_gt(el, 0);
	expect_reply(sim, s, req, (size_t)rl, exp, (size_t)el);
}

static void start(struct sim *sim, struct sim_session *s, bool ok)
{
	uint8_t req[4], rep[4];

	rtl_rtde_encode_start(req, sizeof(req));
	rtl_rtde_encode_accepted_reply(rep, sizeof(rep), RTL_RTDE_PKG_START, ok);
	expect_reply(sim, s, req, 3, rep, 4);
}

/* ---- version negotiation -------------------------------------------------------- */

Test(sim_session, protocol_v2_request_is_accepted_with_the_reference_bytes)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t req[] = { 0x00, 0x05, 0x56, 0x00, 0x02 };
	const uint8_t rep[] = { 0x00, 0x04, 0x56, 0x01 };

	cr_assert_eq(s->proto, RTL_RTDE_PROTOCOL_V1, "version 1 until V says otherwise");
	expect_reply(sim, s, req, sizeof(req), rep, sizeof(rep));
	cr_assert_eq(s->proto, RTL_RTDE_PROTOCOL_V2);
	sim_free(sim);
}

Test(sim_session, max_protocol_1_refuses_v2_and_keeps_the_connection_for_v1)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	const uint8_t v2[] = { 0x00, 0x05, 0x56, 0x00, 0x02 };
	const uint8_t v1[] = { 0x00, 0x05, 0x56, 0x00, 0x01 };
	const uint8_t v3[] = { 0x00, 0x05, 0x56, 0x00, 0x03 };
	const uint8_t no[] = { 0x00, 0x04, 0x56, 0x00 };
	const uint8_t yes[] = { 0x00, 0x04, 0x56, 0x01 };

	sim_opts_default(&o);
	o.max_protocol = 1;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	expect_reply(sim, s, v2, sizeof(v2), no, sizeof(no));
	expect_reply(sim, s, v3, sizeof(v3), no, sizeof(no));
	cr_assert_eq(s->close, SIM_CLOSE_NONE);
	expect_reply(sim, s, v1, sizeof(v1), yes, sizeof(yes));
	cr_assert_eq(s->proto, RTL_RTDE_PROTOCOL_V1);
	sim_free(sim);
}

Test(sim_session, every_profile_answers_its_controller_version)
{
	const uint8_t req[] = { 0x00, 0x03, 0x76 };
	static const uint8_t exp[SIM_PROFILE_COUNT][19] = {
		{ 0x00, 0x13, 0x76, 0, 0, 0, 3, 0, 0, 0, 15, 0, 0, 0, 8, 0, 0, 0, 0 },
		{ 0x00, 0x13, 0x76, 0, 0, 0, 5, 0, 0, 0, 26, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ 0x00, 0x13, 0x76, 0, 0, 0, 10, 0, 0, 0, 13, 0, 0, 0, 0, 0, 0, 0, 0 },
	};
	static const uint32_t hz[SIM_PROFILE_COUNT] = { 125, 500, 500 };

	for (int p = 0; p < SIM_PROFILE_COUNT; p++) {
		struct sim *sim = new_sim_profile((enum sim_profile_id)p);
		struct sim_session *s = sim_session_open(sim, 0);

		/* In any state: before V, too. */
		expect_reply(sim, s, req, sizeof(req), exp[p], sizeof(exp[p]));
		cr_assert_eq(sim->max_hz, hz[p]);
		cr_assert_eq(sim_period_ns(sim), RTL_NS_PER_SEC / hz[p]);
		sim_free(sim);
	}
}

Test(sim_session, controller_version_option_overrides_the_profile)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;

	sim_opts_default(&o);
	o.version = (struct rtl_rtde_controller_version){ 5, 8, 0, 0 };
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	/* ft_raw_wrench came with 5.9.0. */
	outputs(sim, s, 500, "timestamp,ft_raw_wrench", 0, "DOUBLE,NOT_FOUND");
	sim_free(sim);
}

/* ---- setup replies ------------------------------------------------------------------ */

Test(sim_session, setup_outputs_v2_reply_is_byte_exact)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const char names[] = "timestamp,actual_q";
	uint8_t req[64];
	uint8_t exp[] = { 0x00, 0x13, 0x4f, 0x01, 'D', 'O', 'U', 'B', 'L', 'E',
			  ',',	'V',  'E',  'C',  'T', 'O', 'R', '6', 'D' };
	int n;

	negotiate(sim, s, 2);
	n = rtl_rtde_encode_setup_outputs(req, sizeof(req), RTL_RTDE_PROTOCOL_V2, 500.0, names,
					  strlen(names));
	/* The frequency travels as 40 7F 40 00 00 00 00 00 (section 7.1). */
	cr_assert_eq(req[3], 0x40);
	cr_assert_eq(req[4], 0x7f);
	expect_reply(sim, s, req, (size_t)n, exp, sizeof(exp));
	cr_assert(s->out_valid);
	cr_assert_eq(s->divisor, 1);
	cr_assert_eq(s->outputs.n, 2);
	cr_assert_eq(s->outputs.wire_size, 56);
	sim_free(sim);
}

Test(sim_session, setup_outputs_v1_reply_has_no_recipe_id)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const char names[] = "timestamp,actual_q";
	uint8_t req[64];
	uint8_t exp[] = { 0x00, 0x12, 0x4f, 'D', 'O', 'U', 'B', 'L', 'E',
			  ',',	'V',  'E',  'C', 'T', 'O', 'R', '6', 'D' };
	int n = rtl_rtde_encode_setup_outputs(req, sizeof(req), RTL_RTDE_PROTOCOL_V1, 0, names,
					      strlen(names));

	expect_reply(sim, s, req, (size_t)n, exp, sizeof(exp));
	cr_assert(s->out_valid);
	sim_free(sim);
}

Test(sim_session, unknown_output_is_not_found_and_the_recipe_id_is_zero)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);

	negotiate(sim, s, 2);
	/* Section 7.1: 00 + NOT_FOUND,VECTOR6D. Names are case-sensitive. */
	outputs(sim, s, 500, "Timestamp,actual_q", 0, "NOT_FOUND,VECTOR6D");
	cr_assert_not(s->out_valid);
	/* An input-only field is not an output either. */
	outputs(sim, s, 500, "speed_slider_fraction", 0, "NOT_FOUND");
	sim_free(sim);
}

Test(sim_session, one_trailing_empty_name_is_ignored)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);

	negotiate(sim, s, 2);
	outputs(sim, s, 125, "timestamp,actual_q,", 1, "DOUBLE,VECTOR6D");
	inputs(sim, s, "input_int_register_24,", 1, "INT32");
	/* Only one: an empty name in the middle is a name nobody knows. */
	outputs(sim, s, 125, "timestamp,,actual_q", 0, "DOUBLE,NOT_FOUND,VECTOR6D");
	sim_free(sim);
}

Test(sim_session, field_too_new_for_the_profile_is_not_found)
{
	struct sim *cb3 = new_sim_profile(SIM_PROFILE_CB3);
	struct sim *e = new_sim_profile(SIM_PROFILE_ESERIES);
	struct sim_session *s3 = sim_session_open(cb3, 0);
	struct sim_session *s5 = sim_session_open(e, 0);

	negotiate(cb3, s3, 2);
	negotiate(e, s5, 2);
	outputs(cb3, s3, 125, "timestamp,ft_raw_wrench,control_step", 0,
		"DOUBLE,NOT_FOUND,NOT_FOUND");
	outputs(e, s5, 500, "timestamp,ft_raw_wrench,control_step", 1, "DOUBLE,VECTOR6D,UINT64");
	/* tool_output_mode: not on CB3 at all, e-Series from 5.2.0. */
	outputs(cb3, s3, 125, "tool_output_mode", 0, "NOT_FOUND");
	outputs(e, s5, 500, "tool_output_mode", 1, "UINT8");
	sim_free(cb3);
	sim_free(e);
}

Test(sim_session, every_output_of_the_registry_fits_one_recipe)
{
	/* Like URCL's exhaustive recipe (406 names, 9 KB of names, 3 KB data
	 * packages): far beyond RTL_RTDE_RECIPE_MAX_FIELDS and 2048 bytes. */
	struct sim *sim = new_sim_profile(SIM_PROFILE_POLYSCOPE_X);
	struct sim_session *s = sim_session_open(sim, 0);
	static char names[20000], types[20000];
	size_t nl = 0, tl = 0, fields = 0, wire = 0;
	uint8_t buf[8192];

	for (size_t i = 0; i < rtl_rtde_field_count(); i++) {
		const struct rtl_rtde_field *f = rtl_rtde_field_at(i);

		if (!(f->flags & RTL_RTDE_FIELD_OUTPUT) ||
		    !rtl_rtde_field_available(f, sim->version))
			continue;
		nl += (size_t)sprintf(names + nl, "%s%s", fields ? "," : "", f->name);
		tl += (size_t)sprintf(types + tl, "%s%s", fields ? "," : "",
				      rtl_rtde_type_name(f->type));
		wire += rtl_rtde_type_size(f->type);
		fields++;
	}
	cr_assert_gt(fields, 400);
	cr_assert_gt(nl, 2048);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, names, 1, types);
	cr_assert_eq(s->outputs.wire_size, wire);
	start(sim, s, true);
	sim_run_due(sim, sim_next_wake(sim));
	cr_assert_eq(take(s, buf, sizeof(buf)), 4 + wire);
	sim_free(sim);
}

Test(sim_session, setup_inputs_reply_matches_the_reference_vector)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const char names[] = "speed_slider_mask,speed_slider_fraction";
	uint8_t req[64];
	/* Section 7.1: request 00 2A 49 + 39 bytes, reply 00 11 49 01 UINT32,DOUBLE. */
	const uint8_t exp[] = { 0x00, 0x11, 0x49, 0x01, 'U', 'I', 'N', 'T', '3',
				'2',  ',',  'D',  'O',	'U', 'B', 'L', 'E' };
	int n = rtl_rtde_encode_setup_inputs(req, sizeof(req), names, strlen(names));

	cr_assert_eq(n, 0x2a);
	expect_reply(sim, s, req, (size_t)n, exp, sizeof(exp));
	sim_free(sim);
}

Test(sim_session, input_recipe_ids_count_only_successful_setups)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);

	negotiate(sim, s, 2);
	inputs(sim, s, "input_int_register_24,input_double_register_24", 1, "INT32,DOUBLE");
	inputs(sim, s, "input_int_register_25,no_such_field", 0, "INT32,NOT_FOUND");
	inputs(sim, s, "output_int_register_25", 0, "NOT_FOUND");
	/* The same variable may appear in several recipes of one connection. */
	inputs(sim, s, "input_int_register_24,input_bit_register_64", 2, "INT32,BOOL");
	inputs(sim, s, "input_int_register_25", 3, "INT32");
	cr_assert_eq(s->n_inputs, 3);
	sim_free(sim);
}

Test(sim_session, input_recipe_ids_end_at_255_and_the_reply_comes_before_the_text)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const char names[] = "input_int_register_24";
	uint8_t req[64], buf[1024];
	struct rtl_rtde_setup_reply r;
	size_t len, first;
	int n = rtl_rtde_encode_setup_inputs(req, sizeof(req), names, strlen(names));

	negotiate(sim, s, 2);
	for (int i = 1; i <= 255; i++)
		inputs(sim, s, names, (uint8_t)i, "INT32");
	feed(sim, s, req, (size_t)n);
	len = take(s, buf, sizeof(buf));
	first = rtl_rtde_load_u16(buf);
	cr_assert_eq(buf[2], 'I', "the reply first: lockstep clients read one package");
	cr_assert_eq(rtl_rtde_decode_setup_inputs_reply(&r, buf, first), 0);
	cr_assert_eq(r.recipe_id, 0);
	cr_assert_gt(len, first);
	cr_assert_eq(buf[first + 2], 'M', "then the explanation");
	cr_assert_eq(s->n_inputs, 255);
	sim_free(sim);
}

Test(sim_session, empty_setup_inputs_gets_no_reply)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t req[] = { 0x00, 0x03, 0x49 };
	uint8_t got[64];

	negotiate(sim, s, 2);
	feed(sim, s, req, sizeof(req));
	cr_assert_eq(take(s, got, sizeof(got)), 0);
	cr_assert_eq(s->n_inputs, 0);
	sim_free(sim);
}

Test(sim_session, input_owned_by_another_connection_is_in_use_until_it_closes)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *a = sim_session_open(sim, 0);
	struct sim_session *b = sim_session_open(sim, 0);

	negotiate(sim, a, 2);
	negotiate(sim, b, 2);
	inputs(sim, a, "input_int_register_24,input_double_register_30", 1, "INT32,DOUBLE");
	/* Section 7.1: 00 + IN_USE,IN_USE. */
	inputs(sim, b, "input_double_register_30,input_int_register_24", 0, "IN_USE,IN_USE");
	inputs(sim, b, "input_double_register_31,input_int_register_24", 0, "DOUBLE,IN_USE");
	/* Reading an input back as an output needs no ownership. */
	outputs(sim, b, 500, "input_int_register_24", 1, "INT32");
	sim_session_close(sim, a);
	inputs(sim, b, "input_double_register_30,input_int_register_24", 1, "DOUBLE,INT32");
	sim_free(sim);
}

Test(sim_session, fieldbus_owns_the_low_registers_and_the_standard_inputs)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;

	sim_opts_default(&o);
	o.fieldbus = true;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	inputs(sim, s, "input_int_register_0,input_double_register_23,speed_slider_mask", 0,
	       "IN_USE,IN_USE,IN_USE");
	inputs(sim, s, "standard_digital_output_mask,input_bit_registers0_to_31", 0,
	       "IN_USE,IN_USE");
	inputs(sim, s, "input_int_register_24,input_double_register_47,input_bit_register_64", 1,
	       "INT32,DOUBLE,BOOL");
	sim_free(sim);
}

/* ---- start, pause, frequency ------------------------------------------------------------- */

Test(sim_session, start_is_refused_without_a_valid_output_recipe)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);

	negotiate(sim, s, 2);
	start(sim, s, false);
	inputs(sim, s, "input_int_register_24", 1, "INT32");
	start(sim, s, false); /* inputs alone are not enough (3.7) */
	outputs(sim, s, 500, "timestamp,bogus", 0, "DOUBLE,NOT_FOUND");
	start(sim, s, false);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	cr_assert(s->started);
	/* An invalid replacement stops the stream and refuses the next start. */
	outputs(sim, s, 500, "bogus", 0, "NOT_FOUND");
	cr_assert_not(s->started);
	start(sim, s, false);
	sim_free(sim);
}

Test(sim_session, pause_is_always_accepted)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t req[] = { 0x00, 0x03, 0x50 };
	const uint8_t rep[] = { 0x00, 0x04, 0x50, 0x01 };

	expect_reply(sim, s, req, sizeof(req), rep, sizeof(rep)); /* before anything */
	negotiate(sim, s, 2);
	expect_reply(sim, s, req, sizeof(req), rep, sizeof(rep));
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	expect_reply(sim, s, req, sizeof(req), rep, sizeof(rep));
	cr_assert_not(s->started);
	expect_reply(sim, s, req, sizeof(req), rep, sizeof(rep)); /* twice */
	start(sim, s, true);					  /* and again */
	sim_free(sim);
}

Test(sim_session, output_rate_is_the_maximum_over_floor_max_over_f)
{
	struct sim *e = new_sim_profile(SIM_PROFILE_ESERIES);
	struct sim *cb3 = new_sim_profile(SIM_PROFILE_CB3);
	struct sim_session *s = sim_session_open(e, 0);
	struct sim_session *s3 = sim_session_open(cb3, 0);
	static const struct {
		double hz;
		uint32_t e, cb3;
	} cases[] = {
		{ 25, 20, 5 },	{ 50, 10, 2 },	    { 300, 1, 1 }, { 500, 1, 1 },
		{ 1000, 1, 1 }, { 0.5, 1000, 250 }, { 124, 4, 1 },
	};

	negotiate(e, s, 2);
	negotiate(cb3, s3, 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		outputs(e, s, cases[i].hz, "timestamp", 1, "DOUBLE");
		cr_assert_eq(s->divisor, cases[i].e, "%g Hz on e-Series", cases[i].hz);
		outputs(cb3, s3, cases[i].hz, "timestamp", 1, "DOUBLE");
		cr_assert_eq(s3->divisor, cases[i].cb3, "%g Hz on CB3", cases[i].hz);
	}
	/* f <= 0 or NaN: an invalid recipe (assumption of section 9). */
	outputs(e, s, 0.0, "timestamp", 0, "DOUBLE");
	outputs(e, s, -5.0, "timestamp", 0, "DOUBLE");
	outputs(e, s, NAN, "timestamp", 0, "DOUBLE");
	sim_free(e);
	sim_free(cb3);
}

/* ---- streaming ------------------------------------------------------------------------------- */

/* Run cycles 0..n-1 at their deadlines; collect the timestamps of the
 * v2 data packages queued to @s (other packages are skipped). */
static size_t stream(struct sim *sim, struct sim_session *s, unsigned n, double *ts, size_t max)
{
	static uint8_t buf[1 << 20];
	size_t got = 0, len, off = 0;

	for (unsigned i = 0; i < n; i++)
		sim_run_due(sim, sim_next_wake(sim));
	len = take(s, buf, sizeof(buf));
	while (off < len) {
		size_t plen = rtl_rtde_load_u16(buf + off);
		struct rtl_rtde_data d;

		cr_assert_geq(plen, 3);
		if (buf[off + 2] == RTL_RTDE_PKG_DATA && got < max) {
			cr_assert_eq(rtl_rtde_decode_data(&d, buf + off, plen, s->proto,
							  RTL_RTDE_FROM_CONTROLLER),
				     0);
			ts[got++] = rtl_rtde_load_f64(d.fields);
		}
		off += plen;
	}
	cr_assert_eq(off, len, "whole packages only");
	return got;
}

Test(sim_session, data_packages_carry_whole_control_periods_from_42_s)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	uint8_t buf[256];
	double ts[16];
	size_t n, len;
	struct rtl_rtde_data d;

	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp,control_step,actual_q", 1, "DOUBLE,UINT64,VECTOR6D");
	start(sim, s, true);
	sim_run_due(sim, sim_next_wake(sim));
	len = take(s, buf, sizeof(buf));
	cr_assert_eq(len, 4 + 8 + 8 + 48);
	cr_assert_eq(buf[2], 'U');
	cr_assert_eq(buf[3], 1, "recipe id 1");
	cr_assert_eq(
		rtl_rtde_decode_data(&d, buf, len, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CONTROLLER),
		0);
	cr_assert_eq(rtl_rtde_load_f64(d.fields), 42.0);
	cr_assert_eq(rtl_rtde_load_u64(d.fields + 8), 21000, "42 s / 2 ms");
	/* UR5e at its start pose: the shoulder at -pi/2. */
	cr_assert_float_eq(rtl_rtde_load_f64(d.fields + 16 + 8), -M_PI / 2, 1e-9);

	n = stream(sim, s, 10, ts, 16);
	cr_assert_eq(n, 10);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(ts[i], (double)(42000000000LL + (int64_t)(i + 1) * 2000000) / 1e9);
	sim_free(sim);
}

Test(sim_session, v1_data_packages_have_no_recipe_id_and_run_at_the_maximum_rate)
{
	struct sim *sim = new_sim_profile(SIM_PROFILE_CB3);
	struct sim_session *s = sim_session_open(sim, 0);
	uint8_t buf[64];

	outputs(sim, s, 0, "timestamp", 0, "DOUBLE"); /* v1: no id in the reply */
	cr_assert(s->out_valid);
	cr_assert_eq(s->divisor, 1);
	start(sim, s, true);
	sim_run_due(sim, sim_next_wake(sim));
	cr_assert_eq(take(s, buf, sizeof(buf)), 3 + 8);
	cr_assert_eq(rtl_rtde_load_f64(buf + 3), 42.0);
	sim_free(sim);
}

Test(sim_session, divisor_spaces_timestamps_by_n_periods)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	double ts[16];
	size_t n;

	negotiate(sim, s, 2);
	outputs(sim, s, 25, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	n = stream(sim, s, 100, ts, 16);
	cr_assert_eq(n, 5);
	for (size_t i = 1; i < n; i++)
		cr_assert_float_eq(ts[i] - ts[i - 1], 0.04, 1e-9);
	sim_free(sim);
}

Test(sim_session, paused_session_gets_no_data_and_inputs_still_apply)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	uint8_t pkg[16], fields[4], buf[64];
	double ts[4];
	int n;

	negotiate(sim, s, 2);
	inputs(sim, s, "input_int_register_30", 1, "INT32");
	rtl_rtde_store_i32(fields, -7);
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, 1,
				 fields, 4);
	feed(sim, s, pkg, (size_t)n);
	cr_assert_eq(take(s, buf, sizeof(buf)), 0, "inputs get no reply");
	cr_assert_eq(sim_value(sim, "input_int_register_30")->i32, -7);
	cr_assert_eq(stream(sim, s, 5, ts, 4), 0);
	sim_free(sim);
}

/* ---- bad packages ------------------------------------------------------------------------------
 */

/* Expect exactly one ERROR text message in the v2 layout queued. */
static void expect_error_text(struct sim_session *s)
{
	uint8_t buf[512];
	size_t n = take(s, buf, sizeof(buf));
	struct rtl_rtde_text t;

	cr_assert_gt(n, 3);
	cr_assert_eq(rtl_rtde_load_u16(buf), n, "one package");
	cr_assert_eq(rtl_rtde_decode_text(&t, buf, n, s->proto, RTL_RTDE_FROM_CONTROLLER), 0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_ERROR);
	cr_assert_gt(t.message_len, 0);
	cr_assert_eq(s->close, SIM_CLOSE_NONE, "the connection is kept");
}

Test(sim_session, unknown_and_malformed_packages_are_answered_with_an_error_text)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t unknown[] = { 0x00, 0x05, 0x02, 0x00, 0x00 };
	const uint8_t short_v[] = { 0x00, 0x04, 0x56, 0x02 };
	const uint8_t long_start[] = { 0x00, 0x04, 0x53, 0x00 };
	uint8_t pkg[32], fields[8] = { 0 };
	int n;

	/* Before V: the v1 layout (level byte, then the text). */
	feed(sim, s, unknown, sizeof(unknown));
	expect_error_text(s);
	negotiate(sim, s, 2);
	feed(sim, s, unknown, sizeof(unknown));
	expect_error_text(s);
	feed(sim, s, short_v, sizeof(short_v));
	expect_error_text(s);
	feed(sim, s, long_start, sizeof(long_start));
	expect_error_text(s);
	cr_assert_not(s->started);

	/* Input data for a recipe that does not exist, or of the wrong size. */
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, 1,
				 fields, 4);
	feed(sim, s, pkg, (size_t)n);
	expect_error_text(s);
	inputs(sim, s, "input_int_register_24", 1, "INT32");
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, 1,
				 fields, 8);
	feed(sim, s, pkg, (size_t)n);
	expect_error_text(s);
	cr_assert_eq(sim->stats.errors_answered, 6);
	/* Still in business. */
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	sim_free(sim);
}

Test(sim_session, client_text_messages_get_no_reply)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	struct rtl_rtde_text t = {
		.level = 3, .message = "hello", .message_len = 5, .source = "test", .source_len = 4
	};
	uint8_t pkg[64], buf[64];
	int n = rtl_rtde_encode_text(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V1, RTL_RTDE_FROM_CLIENT,
				     &t);

	feed(sim, s, pkg, (size_t)n);
	cr_assert_eq(take(s, buf, sizeof(buf)), 0);
	cr_assert_eq(s->stats.texts_in, 1);
	sim_free(sim);
}

Test(sim_session, header_below_three_bytes_loses_the_stream)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t bad[] = { 0x00, 0x02, 0x56 };

	cr_assert_eq(sim_session_feed(sim, s, bad, sizeof(bad), 0), -EMSGSIZE);
	cr_assert_eq(s->close, SIM_CLOSE_DESYNC);
	cr_assert_gt(s->out.len, 0, "an error text goes out first");
	sim_free(sim);
}

Test(sim_session, packages_split_across_reads_are_reassembled)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	const uint8_t reqs[] = { 0x00, 0x05, 0x56, 0x00, 0x02, 0x00, 0x03, 0x76, 0x00, 0x03, 0x50 };
	uint8_t buf[64];

	for (size_t i = 0; i < sizeof(reqs); i++)
		feed(sim, s, reqs + i, 1);
	cr_assert_eq(take(s, buf, sizeof(buf)), 4 + 19 + 4);
	sim_free(sim);
}

/* ---- slow readers, faults, echo
 * -------------------------------------------------------------------- */

Test(sim_session, a_client_that_does_not_read_is_closed_when_its_queue_would_overflow)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s, *other;
	uint8_t buf[8192];

	sim_opts_default(&o);
	o.send_buffer = 4096;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	other = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	negotiate(sim, other, 2);
	outputs(sim, s, 500, "actual_q,actual_qd,target_q,target_qd", 1,
		"VECTOR6D,VECTOR6D,VECTOR6D,VECTOR6D");
	outputs(sim, other, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	start(sim, other, true);
	for (int i = 0; i < 21; i++) {
		sim_run_due(sim, sim_next_wake(sim));
		take(other, buf, sizeof(buf)); /* the other one reads */
	}
	/* 196-byte packages: 20 fit 4096 bytes, the 21st does not. */
	cr_assert_eq(s->stats.data_out, 20);
	cr_assert_eq(s->close, SIM_CLOSE_SLOW);
	cr_assert(sim_session_due_close(sim, s, 0));
	cr_assert_eq(other->stats.data_out, 21);
	cr_assert_eq(other->close, SIM_CLOSE_NONE);
	cr_assert_eq(sim->stats.slow_disconnects, 1);
	sim_free(sim);
}

Test(sim_session, skipped_packages_leave_gaps_of_exactly_the_skip_count)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	double ts[64];
	size_t n, gaps = 0;

	sim_opts_default(&o);
	o.faults.skip_every = 10;
	o.faults.skip_count = 3;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	n = stream(sim, s, 50, ts, 64);
	cr_assert_eq(n, 35);
	for (size_t i = 1; i < n; i++) {
		double dt = ts[i] - ts[i - 1];

		if (fabs(dt - 0.002) < 1e-9)
			continue;
		cr_assert_float_eq(dt, 0.008, 1e-9, "a gap of 3 skipped packages");
		gaps++;
	}
	cr_assert_eq(gaps, 4);
	cr_assert_eq(sim->stats.skipped_packages, 15);
	cr_assert_eq(sim->stats.skipped_cycles, 15);
	sim_free(sim);
}

Test(sim_session, reset_after_marks_the_connection_after_n_packages)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	double ts[16];

	sim_opts_default(&o);
	o.faults.reset_after = 5;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	cr_assert_eq(stream(sim, s, 4, ts, 16), 4);
	cr_assert_eq(s->close, SIM_CLOSE_NONE);
	cr_assert_eq(stream(sim, s, 3, ts, 16), 1);
	cr_assert_eq(s->close, SIM_CLOSE_RESET);
	sim_free(sim);
}

Test(sim_session, text_every_interleaves_info_messages)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	uint8_t buf[4096];
	size_t len, off = 0, texts = 0, data = 0;

	sim_opts_default(&o);
	o.faults.text_every = 3;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	for (int i = 0; i < 9; i++)
		sim_run_due(sim, sim_next_wake(sim));
	len = take(s, buf, sizeof(buf));
	while (off < len) {
		size_t plen = rtl_rtde_load_u16(buf + off);
		struct rtl_rtde_text t;

		if (buf[off + 2] == 'M') {
			cr_assert_eq(rtl_rtde_decode_text(&t, buf + off, plen, RTL_RTDE_PROTOCOL_V2,
							  RTL_RTDE_FROM_CONTROLLER),
				     0);
			cr_assert_eq(t.level, RTL_RTDE_LEVEL_INFO);
			cr_assert_eq(data % 3, 0, "after every third package");
			texts++;
		} else {
			data++;
		}
		off += plen;
	}
	cr_assert_eq(data, 9);
	cr_assert_eq(texts, 3);
	cr_assert_eq(sim->stats.texts_injected, 3);
	sim_free(sim);
}

Test(sim_session, faults_repeat_with_the_seed)
{
	struct sim_opts o;
	struct sim *a, *b;

	sim_opts_default(&o);
	o.faults.jitter_us = 500;
	o.faults.seed = 1234;
	a = new_sim(&o);
	b = new_sim(&o);
	for (int i = 0; i < 100; i++) {
		int64_t wa = sim_next_wake(a), wb = sim_next_wake(b);

		cr_assert_eq(wa, wb);
		cr_assert_geq(wa - (int64_t)i * 2 * MS, 0);
		cr_assert_leq(wa - (int64_t)i * 2 * MS, 500 * RTL_NS_PER_US);
		cr_assert_eq(sim_next_wake(a), wa, "decided once per cycle");
		sim_run_due(a, wa);
		sim_run_due(b, wb);
	}
	cr_assert_gt(a->stats.jittered, 50);
	cr_assert_eq(a->stats.jittered, b->stats.jittered);
	sim_free(a);
	sim_free(b);
}

Test(sim_session, stall_holds_cycles_and_releases_them_back_to_back)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	double ts[64];

	sim_opts_default(&o);
	o.faults.stall_ms = 20;
	o.faults.stall_every_s = 0.1; /* from cycle 50 on */
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	start(sim, s, true);
	for (int i = 0; i < 50; i++)
		sim_run_due(sim, sim_next_wake(sim));
	/* Cycle 50 is due at 100 ms, held until 120 ms; cycles 50..60 then
	 * run together, with consecutive timestamps. */
	cr_assert_eq(sim_next_wake(sim), 120 * MS);
	cr_assert_eq(sim_run_due(sim, 119 * MS), 0);
	cr_assert_eq(sim_run_due(sim, 120 * MS), 11, "cycles 50..60");
	cr_assert_eq(sim->stats.stalls, 1);
	cr_assert_eq(sim->stats.overruns, 0, "held cycles are sent");
	cr_assert_eq(stream(sim, s, 0, ts, 64), 61);
	for (int i = 1; i < 61; i++)
		cr_assert_float_eq(ts[i] - ts[i - 1], 0.002, 1e-9);
	sim_free(sim);
}

Test(sim_session, burst_holds_n_packages_and_writes_them_together)
{
	struct sim_opts o;
	struct sim *sim;

	sim_opts_default(&o);
	o.faults.burst = 5;
	o.faults.burst_every_s = 0.1; /* from cycle 50 on */
	sim = new_sim(&o);
	for (int i = 0; i < 50; i++)
		sim_run_due(sim, sim_next_wake(sim));
	cr_assert_eq(sim_next_wake(sim), 54 * 2 * MS);
	cr_assert_eq(sim_run_due(sim, 54 * 2 * MS), 5);
	cr_assert_eq(sim->stats.bursts, 1);
	sim_free(sim);
}

Test(sim_session, late_cycles_beyond_the_catch_up_limit_are_skipped_as_overruns)
{
	struct sim *sim = new_sim(NULL);

	/* One second late: 500 cycles due, most run without sending. */
	cr_assert_eq(sim_run_due(sim, RTL_NS_PER_SEC), 501);
	cr_assert_eq(sim->stats.overruns, 501 - SIM_MAX_CATCH_UP);
	sim_free(sim);
}

Test(sim_session, echo_of_a_timestamp_records_the_round_trip)
{
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	uint8_t pkg[16], fields[8];
	double ts[4];
	int n;

	sim_opts_default(&o);
	o.echo_register = RTL_RTDE_CMD_REG_ECHO;
	sim = new_sim(&o);
	s = sim_session_open(sim, 0);
	negotiate(sim, s, 2);
	outputs(sim, s, 500, "timestamp", 1, "DOUBLE");
	inputs(sim, s, RTL_RTDE_CMD_ECHO_RECIPE, 1, "DOUBLE");
	start(sim, s, true);
	cr_assert_eq(stream(sim, s, 3, ts, 4), 3); /* sent at 0, 2 and 4 ms */

	rtl_rtde_store_f64(fields, ts[1]);
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, 1,
				 fields, 8);
	cr_assert_eq(sim_session_feed(sim, s, pkg, (size_t)n, 2 * MS + 345678), 1);
	cr_assert_eq(sim->stats.echoes, 1);
	cr_assert_eq(rtl_hist_count(&sim->echo_hist), 1);
	cr_assert_eq(rtl_hist_max(&sim->echo_hist), 345678);
	/* The same value again is not a new round trip; an unknown one is
	 * counted as unmatched. */
	cr_assert_eq(sim_session_feed(sim, s, pkg, (size_t)n, 3 * MS), 1);
	cr_assert_eq(sim->stats.echoes, 1);
	rtl_rtde_store_f64(fields, 12.5);
	n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, 1,
				 fields, 8);
	cr_assert_eq(sim_session_feed(sim, s, pkg, (size_t)n, 3 * MS), 1);
	cr_assert_eq(sim->stats.echo_unmatched, 1);
	sim_free(sim);
}

Test(sim_session, command_registers_move_the_robot)
{
	struct sim *sim = new_sim(NULL);
	struct sim_session *s = sim_session_open(sim, 0);
	uint8_t pkg[256], fields[128] = { 0 };
	int n, seq = 1;
	double q0 = sim_value(sim, "actual_q")->v6d[0];

	negotiate(sim, s, 2);
	inputs(sim, s, RTL_RTDE_CMD_RECIPE, 1,
	       "INT32,INT32,INT32,DOUBLE,DOUBLE,DOUBLE,DOUBLE,DOUBLE,DOUBLE,DOUBLE,DOUBLE,"
	       "DOUBLE,DOUBLE");
	for (int i = 0; i < 100; i++) {
		int64_t now = sim_next_wake(sim);

		rtl_rtde_store_i32(fields, RTL_RTDE_CMD_SPEEDJ);
		rtl_rtde_store_i32(fields + 4, seq++);
		rtl_rtde_store_f64(fields + 12, 0.5); /* base joint at 0.5 rad/s */
		n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2,
					 RTL_RTDE_FROM_CLIENT, 1, fields, 12 + 80);
		cr_assert_eq(sim_session_feed(sim, s, pkg, (size_t)n, now), 1);
		sim_run_due(sim, now);
	}
	cr_assert_gt(sim_value(sim, "actual_q")->v6d[0], q0 + 0.01);
	cr_assert_eq(sim_value(sim, "output_int_register_24")->i32, RTL_RTDE_CMD_SPEEDJ);
	sim_free(sim);
}
