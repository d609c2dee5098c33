// SPDX-License-Identifier: MIT
/*
 * The whole chain over loopback: rtde-sim's server (in this process, on an
 * ephemeral port) streams at 500 Hz; the loop receives through the RTDE
 * transport, the step runs, the coalescer sends the command registers
 * back, and the simulated UR5e moves. What the robot did is read from the
 * simulator (its stops, watchdog trips, the doubles it received), not
 * from the loop's own counters. Each test runs a few seconds at most.
 *
 * The file uses only the Criterion macros the TSan shim provides, so the
 * same tests run under ThreadSanitizer with the real transport.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#include "counters.h"

#include "fake-rtde.h"
#include "loop-modes.h"
#include "server.h"

#define OUTPUTS "timestamp,actual_q,actual_qd," RTL_RTDE_CMD_STATUS_OUTPUTS
#define PERIOD_S 0.002
/* The safe set of these tests: stop at 2 rad/s^2. */
#define SAFE_DECEL 2.0

/* The doubles a step can write: the ten of the command recipe, then the
 * echo register (a second input recipe). */
#define N_DOUBLES 11
static const char *const doubles[N_DOUBLES] = {
	RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1, RTL_RTDE_CMD_FIELD_PARAM2,
	RTL_RTDE_CMD_FIELD_PARAM3, RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5,
	RTL_RTDE_CMD_FIELD_ACCEL,  RTL_RTDE_CMD_FIELD_TIME,   RTL_RTDE_CMD_FIELD_LOOKAHEAD,
	RTL_RTDE_CMD_FIELD_GAIN,   RTL_RTDE_CMD_FIELD_ECHO,
};

struct rig {
	struct sim_server *srv;
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	/* Handles, resolved on connect. */
	struct rtl_rtde_handle ts, q, qd, out_mode;
	struct rtl_rtde_handle mode, seq, p0, acc;
	struct rtl_rtde_handle dbl[N_DOUBLES];
	/* What the step does. */
	double qd0;	   /* joint 0 velocity to command (speedj) */
	int stall_at;	   /* stall the step once at this step number... */
	int stall_again;   /* ...and again at this one */
	int stop_at;	   /* return -ECANCELED at this step */
	bool poison;	   /* every other step writes NaN/Inf into a double */
	bool echo;	   /* write the echo register (new every frame) */
	uint64_t poisoned; /* steps that wrote one */
	bool safe_nan;	   /* the safe callback writes a NaN */
	_Atomic int64_t steps;
	uint64_t skipped_sum; /* ctrl_skipped of the frames stepped after the first */
	double first_ts, last_ts;
	double q0_first, q0_last;
	int last_out_mode;
	/* Telemetry (a test sets it before the start), and each frame's
	 * timestamp by its loop frame number for the records to match. */
	struct rtl_telemetry *tel;
	double ts_of_frame[4096];
};

static struct rig R;

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct rig *r = user;

	r->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	r->q = rtl_rtde_transport_output_handle(t, "actual_q");
	r->qd = rtl_rtde_transport_output_handle(t, "actual_qd");
	r->out_mode = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_MODE);
	r->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	r->seq = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_SEQ);
	r->p0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
	r->acc = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
	for (int i = 0; i < N_DOUBLES; i++)
		r->dbl[i] =
			rtl_rtde_transport_input_handle(t, i < N_DOUBLES - 1 ? 0 : 1, doubles[i]);
}

static void on_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame *f = rtl_rtde_coalesce_frame(c, 0);

	(void)t;
	rtl_rtde_frame_set_int(f, r->mode, RTL_RTDE_CMD_STOP);
	rtl_rtde_frame_set_double(f, r->acc, r->safe_nan ? NAN : SAFE_DECEL);
}

/* The values a poisoned step writes, in turn. */
static const double bad_values[3] = { NAN, INFINITY, -INFINITY };

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(fr);
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);
	struct rtl_rtde_frame *echo = rtl_rtde_loop_commands(loop, 1);
	int64_t n = atomic_load_explicit(&r->steps, memory_order_relaxed) + 1;
	double q[6];

	atomic_store_explicit(&r->steps, n, memory_order_relaxed);
	rtl_rtde_frame_get_vec6(&st, r->q, q);
	if (n == 1) {
		r->first_ts = rtl_rtde_frame_get_double(&st, r->ts);
		r->q0_first = q[0];
	} else
		r->skipped_sum += fr->ctrl_skipped;
	r->last_ts = rtl_rtde_frame_get_double(&st, r->ts);
	if (fr->seq < 4096)
		r->ts_of_frame[fr->seq] = r->last_ts;
	r->q0_last = q[0];
	r->last_out_mode = rtl_rtde_frame_get_int(&st, r->out_mode);
	if ((r->stall_at && n == r->stall_at) || (r->stall_again && n == r->stall_again))
		rtl_time_sleep_until(rtl_time_now() + 120 * RTL_NS_PER_MS);
	rtl_rtde_frame_set_int(cmd, r->mode, RTL_RTDE_CMD_SPEEDJ);
	/* What a user who writes the heartbeat writes: the transport owns
	 * the field, so this changes nothing on the wire. */
	rtl_rtde_frame_set_int(cmd, r->seq, 7);
	for (int i = 0; i < N_DOUBLES - 1; i++)
		rtl_rtde_frame_set_double(cmd, r->dbl[i], 0.0);
	rtl_rtde_frame_set_double(cmd, r->p0, r->qd0);
	rtl_rtde_frame_set_double(cmd, r->acc, 5.0);
	/* The echo register only where every double is exercised: it
	 * changes every frame, so it would defeat the coalescing tests. */
	if (r->poison || r->echo)
		rtl_rtde_frame_set_double(echo, r->dbl[N_DOUBLES - 1], r->last_ts);
	if (r->poison && n % 2 == 0) {
		/* Each double in turn, each bad value in turn. */
		int which = (int)((n / 2) % N_DOUBLES);

		rtl_rtde_frame_set_double(which < N_DOUBLES - 1 ? cmd : echo, r->dbl[which],
					  bad_values[(n / 2 / N_DOUBLES) % 3]);
		r->poisoned++;
	}
	return r->stop_at && n == r->stop_at ? -ECANCELED : 0;
}

/* Step on the rx thread (rtl_loop_config.inline_step): the tests that
 * run in both modes set it. */
static bool rig_inline;

struct rig_opts {
	struct sim_faults faults;
	int watchdog_periods; /* 0: -1 (off) */
	int reconnects;
	int64_t keepalive_ns;
	bool default_safe; /* no safe callback: the transport's mode = STOP */
	bool external;	   /* no step function: the external-loop API */
};

static int rig_try_start(const struct rig_opts *o, struct rtl_error *err)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };

	sim_opts_default(&so);
	so.faults = o->faults;
	cr_assert_eq(sim_server_create(&R.srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(R.srv), 0);

	tc.host = "127.0.0.1";
	tc.port = sim_server_port(R.srv);
	cc.outputs = OUTPUTS;
	cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
	cc.inputs[1] = RTL_RTDE_CMD_ECHO_RECIPE;
	tc.connected = on_connected;
	tc.safe = o->default_safe ? NULL : on_safe;
	tc.user = &R;
	tc.keepalive_ns = o->keepalive_ns;
	cr_assert_eq(rtl_rtde_transport_create(&R.tr, &tc, err), 0, "%s", err->msg);
	if (R.tel)
		cr_assert_eq(rtl_rtde_transport_telemetry(
				     R.tr, R.tel, "timestamp,actual_q",
				     RTL_RTDE_CMD_FIELD_MODE "," RTL_RTDE_CMD_FIELD_PARAM0, err),
			     0, "%s", err->msg);

	lc.transport = rtl_rtde_transport_base(R.tr);
	lc.telemetry = R.tel;
	lc.step = o->external ? NULL : step;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.every_frame = true;
	lc.inline_step = rig_inline && !o->external;
	lc.watchdog_periods = o->watchdog_periods ? o->watchdog_periods : -1;
	lc.reconnect_attempts = o->reconnects;
	lc.reconnect_backoff_ns = 20 * RTL_NS_PER_MS;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, err), 0, "%s", err->msg);
	return rtl_loop_start(R.loop, err);
}

static void rig_start(const struct rig_opts *o)
{
	struct rtl_error err = { 0 };

	cr_assert_eq(rig_try_start(o, &err), 0, "%s", err.msg);
}

static void rig_reset(void)
{
	memset(&R, 0, sizeof(R));
}

/* Wait (bounded by 8 s) until @steps steps ran. */
static void await_steps(int64_t steps)
{
	int64_t end = rtl_time_now() + 8 * RTL_NS_PER_SEC;

	while (atomic_load(&R.steps) < steps && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
}

/* The simulator's view once it has applied @packages input packages
 * (bounded wait: the last ones may still be in its socket). */
static void sim_stats_after(uint64_t packages, struct sim_stats *ss)
{
	int64_t end = rtl_time_now() + RTL_NS_PER_SEC;

	do {
		sim_server_stats(R.srv, ss);
		if (ss->inputs_applied >= packages)
			break;
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
	} while (rtl_time_now() < end);
}

/* Input packages the transport put on the wire, the safe ones included. */
static uint64_t packages_sent(void)
{
	struct rtl_rtde_transport_counters ts = { .size = sizeof(ts) };

	rtl_rtde_transport_stats(R.tr, &ts);
	return ts.packages + ts.safe_packages;
}

/* After the loop has joined: wait until the simulator applied every
 * package sent, then stop it. */
static void sim_finish(struct sim_stats *ss)
{
	sim_stats_after(packages_sent(), ss);
	sim_server_stop(R.srv);
	sim_server_join(R.srv);
	sim_server_stats(R.srv, ss);
}

/* Stop the loop (the stop at exit included), then read both sides. */
static void rig_finish(struct rtl_loop_counters *s, struct sim_stats *ss)
{
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	rtl_loop_stats(R.loop, s);
	sim_finish(ss);
}

static void rig_run(int64_t steps, struct rtl_loop_counters *s, struct sim_stats *ss)
{
	await_steps(steps);
	rig_finish(s, ss);
}

static void rig_free(void)
{
	rtl_loop_destroy(R.loop);
	rtl_rtde_transport_destroy(R.tr);
	sim_server_destroy(R.srv);
}

/* What every run must show at the controller: nothing non-finite
 * received, no command refused, the arm at rest at the end, and the
 * controller's own watchdog never needed. */
static void expect_safe_end(const struct rtl_loop_counters *s, const struct sim_stats *ss)
{
	cr_expect_eq(ss->nonfinite_in, 0, "%llu non-finite doubles reached the controller",
		     (unsigned long long)ss->nonfinite_in);
	cr_expect_eq(ss->commands_refused, 0);
	/* At rest as the transport judges it (its default rest speed, 0.001
	 * rad/s; the simulator reaches exactly 0 a cycle or two later). */
	cr_expect(ss->robot.max_speed < 0.001, "the arm moves at the end (%g rad/s)",
		  ss->robot.max_speed);
	cr_expect_eq(ss->robot.watchdog_trips, 0, "the controller's watchdog tripped");
	cr_expect_eq(s->stop_unconfirmed, 0, "the stop at exit was confirmed");
	cr_expect_eq(ss->inputs_applied, packages_sent(),
		     "every package sent was applied: %llu of %llu",
		     (unsigned long long)ss->inputs_applied, (unsigned long long)packages_sent());
}

/* ---- counting ------------------------------------------------------------------------ */

static void skipped_packages_counted_exactly(void)
{
	struct rig_opts o = { .faults = { .skip_every = 50 } };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;
	double cycles;

	rig_reset();
	rig_start(&o);
	rig_run(1200, &s, &ss);
	/* Every control cycle between the first and the last frame stepped is
	 * a frame stepped or a skip that a stepped frame carried. (A frame the
	 * rx thread took in while the stop was on its way is counted as
	 * received but never stepped, so the identity is the step's view.) */
	cycles = round((R.last_ts - R.first_ts) / PERIOD_S) + 1;
	cr_expect_eq((double)(s.steps + R.skipped_sum), cycles,
		     "steps %llu + skipped %llu vs %g cycles", (unsigned long long)s.steps,
		     (unsigned long long)R.skipped_sum, cycles);
	cr_expect_gt(R.skipped_sum, 0);
	cr_expect_geq(s.ctrl_skipped, R.skipped_sum, "the loop counts what the frames say");
	/* The simulator skipped at most one more at each end of the window. */
	cr_expect_geq(ss.skipped_packages, s.ctrl_skipped);
	cr_expect_leq(ss.skipped_packages, s.ctrl_skipped + 2);
	/* every_frame: no frame skipped or dropped; only the stop leaves
	 * frames unstepped, at most a ring's worth. */
	cr_expect_eq(s.worker_skipped + s.ring_full, 0);
	cr_expect(s.frames >= s.steps && s.frames - s.steps <= 64,
		  "frames %llu, steps %llu: every frame stepped but those in flight at the stop",
		  (unsigned long long)s.frames, (unsigned long long)s.steps);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, skipped_packages_counted_exactly, rig_inline)

/* ---- the heartbeat ----------------------------------------------------------------------- */

/*
 * The step never changes the heartbeat (it writes 7 every time): the
 * transport owns it, coalescing sends the constant speedj once, and the
 * keep-alive feeds the controller's watchdog, which never trips.
 */
Test(loop_rtde, commands_move_the_robot_and_the_heartbeat_cannot_be_forgotten)
{
	struct rig_opts o = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;
	double moved, expect;

	rig_reset();
	R.qd0 = 0.2;
	rig_start(&o);
	rig_run(1000, &s, &ss);
	/* 0.2 rad/s reached after 0.04 s at 5 rad/s^2; over the window the
	 * joint moves 0.2 rad/s times the time, less the ramp and the lag. */
	expect = 0.2 * (R.last_ts - R.first_ts);
	moved = R.q0_last - R.q0_first;
	cr_expect(fabs(moved - expect) < 0.02, "joint 0 moved %g rad, expected about %g", moved,
		  expect);
	cr_expect_eq(R.last_out_mode, RTL_RTDE_CMD_SPEEDJ, "the executor runs speedj");
	/* 2 s at one keep-alive per 25 ms: about 80 packages, not 1000. */
	cr_expect_gt(s.sends, 40);
	cr_expect_lt(s.sends, 200, "%llu sends: unchanged commands are coalesced",
		     (unsigned long long)s.sends);
	/* Every step ends one way: sent, nothing changed, or (on a loaded
	 * host) the stop came first or the transmit side was busy. */
	cr_expect_eq(s.sends + s.suppressed + s.after_stop + s.would_block + s.stale + s.rejected,
		     s.steps, "%llu sends, %llu suppressed, %llu after the stop, %llu would block",
		     (unsigned long long)s.sends, (unsigned long long)s.suppressed,
		     (unsigned long long)s.after_stop, (unsigned long long)s.would_block);
	cr_expect_eq(s.stale + s.rejected, 0);
	cr_expect_eq(s.silent, 0);
	expect_safe_end(&s, &ss);
	rig_free();
}

/* The transport's telemetry: a record per step with that step's output
 * fields and the inputs it wrote, the transport's counters mirrored; a
 * field that is not an output is refused by name. */
/* Counter @name of an ended telemetry (UINT64_MAX: not there). */
static uint64_t final_counter(const struct rtl_telemetry_reader *r, const char *name)
{
	uint64_t v[RTL_TELEMETRY_MAX_COUNTERS];
	struct rtl_telemetry_info info;
	int n = rtl_telemetry_reader_counters(r, v, RTL_TELEMETRY_MAX_COUNTERS);

	rtl_telemetry_reader_info(r, &info);
	cr_expect_eq(info.state, RTL_TELEMETRY_ENDED);
	for (int i = 0; i < n; i++)
		if (strcmp(rtl_telemetry_reader_counter_name(r, (unsigned)i), name) == 0)
			return v[i];
	return UINT64_MAX;
}

Test(loop_rtde, telemetry_records_the_fields_and_the_commands_of_each_step)
{
	struct rtl_telemetry_config tcfg = { .size = sizeof(tcfg), .capacity = 4096 };
	struct rig_opts o = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct rtl_rtde_transport_counters ts = { .size = sizeof(ts) };
	static struct rtl_telemetry_record rec[4096];
	struct rtl_telemetry_reader *tr = NULL;
	struct rtl_error err = { 0 };
	struct sim_stats ss;
	char name[64];
	int n, bad = 0, i_ts = -1, i_q = -1, i_mode = -1, i_p0 = -1;

	rig_reset();
	R.qd0 = 0.2;
	snprintf(name, sizeof(name), "test-rtde-%d", (int)getpid());
	tcfg.name = name;
	cr_assert_eq(rtl_telemetry_create(&R.tel, &tcfg, NULL), 0);
	rig_start(&o);
	cr_expect_eq(rtl_rtde_transport_telemetry(R.tr, R.tel, "input_int_register_24", NULL, &err),
		     -EBUSY, "after the start the layout is fixed");
	cr_assert_eq(rtl_telemetry_reader_create(&tr, name, NULL), 0);
	rig_run(500, &s, &ss);
	for (unsigned i = 0; rtl_telemetry_reader_signal(tr, i); i++) {
		const struct rtl_telemetry_signal_info *si = rtl_telemetry_reader_signal(tr, i);

		if (strcmp(si->name, "timestamp") == 0)
			i_ts = (int)si->first;
		if (strcmp(si->name, "actual_q") == 0 && si->count == 6)
			i_q = (int)si->first;
		if (strcmp(si->name, RTL_RTDE_CMD_FIELD_MODE) == 0)
			i_mode = (int)si->first;
		if (strcmp(si->name, RTL_RTDE_CMD_FIELD_PARAM0) == 0)
			i_p0 = (int)si->first;
	}
	cr_assert(i_ts >= 0 && i_q >= 0 && i_mode >= 0 && i_p0 >= 0, "the signals are there");
	n = rtl_telemetry_reader_read(tr, rec, 4096);
	cr_expect_eq((uint64_t)n, s.steps, "a record per step");
	for (int i = 0; i < n; i++)
		if (rec[i].frame >= 4096 || rec[i].values[i_ts] != R.ts_of_frame[rec[i].frame] ||
		    rec[i].values[i_mode] != RTL_RTDE_CMD_SPEEDJ || rec[i].values[i_p0] != 0.2 ||
		    !isfinite(rec[i].values[i_q]))
			bad++;
	cr_expect_eq(bad, 0, "each record holds its step's fields and commands");
	/* The loop and the transport go first, as an app's exit does: the
	 * telemetry reads them no more, and its readers keep the figures. */
	rtl_rtde_transport_stats(R.tr, &ts);
	rig_free();
	R.loop = NULL;
	rtl_telemetry_destroy(R.tel);
	R.tel = NULL;
	cr_expect_eq(final_counter(tr, "loop.steps"), s.steps);
	cr_expect_eq(final_counter(tr, "transport.packages"), ts.packages);
	cr_expect_eq(final_counter(tr, "transport.safe_packages"), ts.safe_packages);
	rtl_telemetry_reader_destroy(tr);
}

Test(loop_rtde, telemetry_refuses_a_field_by_name)
{
	struct rtl_telemetry_config tcfg = { .size = sizeof(tcfg) };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc), .outputs = "timestamp" };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_rtde_transport *t = NULL;
	struct rtl_telemetry *tel = NULL;
	struct rtl_error err = { 0 };
	char name[64];

	snprintf(name, sizeof(name), "test-rtde-refuse-%d", (int)getpid());
	tcfg.name = name;
	cr_assert_eq(rtl_telemetry_create(&tel, &tcfg, NULL), 0);
	cr_assert_eq(rtl_rtde_transport_create(&t, &tc, &err), 0, "%s", err.msg);
	cr_expect_eq(rtl_rtde_transport_telemetry(t, tel, "actual_qq", NULL, &err), -EINVAL);
	cr_expect(strstr(err.msg, "'actual_qq' is not an RTDE output field") != NULL, "%s",
		  err.msg);
	cr_expect_eq(rtl_rtde_transport_telemetry(t, tel, NULL, "actual_q", &err), -EINVAL,
		     "an output named as an input");
	rtl_rtde_transport_destroy(t);
	rtl_telemetry_destroy(tel);
}

/*
 * The echo recipe changes every frame and goes out every frame; the
 * command recipe, which carries the heartbeat, does not change: the
 * keep-alive must still send it (packages going out are not enough).
 */
Test(loop_rtde, keepalive_feeds_the_heartbeat_while_another_recipe_streams)
{
	struct rig_opts o = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;
	struct rtl_rtde_coalesce_counters cmd = { .size = sizeof(cmd) };

	rig_reset();
	R.qd0 = 0.1;
	R.echo = true;
	rig_start(&o);
	rig_run(500, &s, &ss);
	rtl_rtde_coalesce_stats(rtl_loop_commands(R.loop), 0, &cmd);
	cr_expect_gt(cmd.sent, 20, "the command recipe went out %llu times in 1 s",
		     (unsigned long long)cmd.sent);
	cr_expect_lt(cmd.sent, 100, "but was coalesced");
	expect_safe_end(&s, &ss);
	rig_free();
}

Test(loop_rtde, silence_without_keepalive_is_reported_and_the_controller_stops)
{
	struct rig_opts o = { .keepalive_ns = -1 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;

	rig_reset();
	R.qd0 = 0.1;
	rig_start(&o);
	rig_run(300, &s, &ss);
	cr_expect_eq(s.sends, 1, "one command, then nothing changes and nothing is sent");
	cr_expect_eq(s.silent, 1, "the silence is reported once");
	cr_expect_eq(ss.robot.watchdog_trips, 1, "and the controller did stop the arm");
	rig_free();
}

/* ---- the watchdog ------------------------------------------------------------------------ */

/*
 * Two 120 ms stalls against a 10-period (20 ms) watchdog: exactly two
 * episodes, the stalled steps' commands discarded, and at the controller
 * each stop is the safe set (mode STOP at 2 rad/s^2, parameters 0 although
 * the step commands 0.1 rad/s), brings the arm from 0.1 rad/s to rest in
 * 25 periods (0.1 / 2 s) plus one for the command to take effect, and the
 * controller's own watchdog never trips.
 */
static void watchdog_stops_the_robot_once_per_stall(void)
{
	struct rig_opts o = { .watchdog_periods = 10 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats mid, ss;

	rig_reset();
	R.qd0 = 0.1;
	R.stall_at = 100;
	R.stall_again = 300;
	rig_start(&o);
	await_steps(250);
	sim_server_stats(R.srv, &mid);
	cr_expect_eq(mid.robot.stops, 1, "the first stall: one stop");
	cr_expect_eq(mid.robot.stops_at_rest, 1, "which reached rest during the stall");
	cr_expect_leq(mid.robot.last_stop_cycles, 26, "in %llu periods",
		      (unsigned long long)mid.robot.last_stop_cycles);
	cr_expect_geq(mid.robot.last_stop_cycles, 24);
	cr_expect_eq(mid.robot.last_stop_cmd.mode, RTL_RTDE_CMD_STOP);
	cr_expect_eq(mid.robot.last_stop_cmd.accel, SAFE_DECEL);
	cr_expect_eq(mid.robot.last_stop_cmd.param[0], 0.0, "the safe set, not the step's 0.1");
	rig_run(450, &s, &ss);
	cr_expect_eq(s.watchdog, 2, "%llu episodes for two stalls", (unsigned long long)s.watchdog);
	cr_expect_eq(s.stale, 2, "each stalled step's commands were discarded");
	cr_expect_eq(ss.robot.stops_at_rest, 3, "two stalls and the stop at exit");
	cr_expect_leq(ss.robot.max_stop_cycles, 26);
	expect_safe_end(&s, &ss);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, watchdog_stops_the_robot_once_per_stall,
		    rig_inline)

/* ---- nothing non-finite reaches the wire --------------------------------------------- */

/*
 * Every other step writes NaN, +Inf or -Inf into one of the eleven doubles
 * it can write (the command recipe's ten and the echo register), each in
 * turn: every such step is rejected and the safe set goes out instead, and
 * the controller, which looks at every double it receives, sees none.
 */
static void non_finite_commands_never_reach_the_controller(void)
{
	struct rig_opts o = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;

	rig_reset();
	R.qd0 = 0.05;
	R.poison = true;
	rig_start(&o);
	rig_run(2 * N_DOUBLES * 3 * 3, &s, &ss);
	cr_expect_gt(R.poisoned, N_DOUBLES * 3, "every double with every bad value");
	RTL_TEST_EXPECT_POISON_REJECTED(s.rejected, R.poisoned);
	expect_safe_end(&s, &ss);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, non_finite_commands_never_reach_the_controller,
		    rig_inline)

Test(loop_rtde, a_non_finite_safe_set_fails_the_connect)
{
	struct rig_opts o = { 0 };
	struct rtl_error err = { 0 };

	rig_reset();
	R.safe_nan = true;
	cr_expect_eq(rig_try_start(&o, &err), -EDOM);
	cr_expect(strstr(err.msg, "the safe set cannot be sent: input "
				  "'input_double_register_30' is not finite") != NULL,
		  "message: %s", err.msg);
	sim_server_stop(R.srv);
	sim_server_join(R.srv);
	rig_free();
}

/* ---- the stop at exit ------------------------------------------------------------------- */

static void stop_leaves_the_arm_at_rest(void)
{
	struct rig_opts o = { .default_safe = true }; /* the transport's own: mode STOP */
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;

	rig_reset();
	R.qd0 = 0.3;
	rig_start(&o);
	rig_run(400, &s, &ss);
	cr_expect_gt(s.stop_frames, 0);
	cr_expect_gt(s.stop_wait_ns, 0);
	cr_expect_eq(ss.robot.stops_at_rest, 1);
	cr_expect_eq(ss.robot.last_stop_cmd.mode, RTL_RTDE_CMD_STOP);
	expect_safe_end(&s, &ss);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, stop_leaves_the_arm_at_rest, rig_inline)

static void step_error_leaves_the_arm_at_rest(void)
{
	struct rig_opts o = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;

	rig_reset();
	R.qd0 = 0.3;
	R.stop_at = 300;
	rig_start(&o);
	cr_expect_eq(rtl_loop_join(R.loop), -ECANCELED);
	rtl_loop_stats(R.loop, &s);
	sim_finish(&ss);
	cr_expect_eq(ss.robot.stops_at_rest, 1);
	expect_safe_end(&s, &ss);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, step_error_leaves_the_arm_at_rest, rig_inline)

/* ---- reconnect ----------------------------------------------------------------------------- */

static void reset_connection_reconnects_disarmed(void)
{
	struct rig_opts o = { .faults = { .reset_after = 200 }, .reconnects = 5 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;

	rig_reset();
	rig_start(&o);
	rig_run(500, &s, &ss);
	cr_expect_geq(s.reconnects, 1);
	cr_expect_geq(ss.resets, 1);
	cr_expect(!rtl_loop_armed(R.loop), "commands stay off after the reconnect");
	cr_expect_geq(s.frames, 400, "frames flow again after the reconnect");
	/* The start, each reconnect, and the stop: the safe set. */
	cr_expect_geq(s.safe_sends, 2 + s.reconnects);
	cr_expect_eq(ss.nonfinite_in, 0);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, reset_connection_reconnects_disarmed, rig_inline)

/* ---- the external-loop API ----------------------------------------------------------------- */

/* A thread of the application's own: read, command, write, at 500 Hz. */
static void *external_main(void *arg)
{
	(void)arg;
	while (atomic_load(&R.steps) < 500) {
		const struct rtl_loop_frame *f = rtl_loop_read(R.loop, 100 * RTL_NS_PER_MS);
		struct rtl_rtde_frame *cmd;

		if (!f)
			break;
		cmd = rtl_rtde_loop_commands(R.loop, 0);
		rtl_rtde_frame_set_int(cmd, R.mode, RTL_RTDE_CMD_SPEEDJ);
		rtl_rtde_frame_set_double(cmd, R.p0, 0.2);
		rtl_rtde_frame_set_double(cmd, R.acc, 5.0);
		rtl_loop_write(R.loop);
		atomic_fetch_add(&R.steps, 1);
	}
	return NULL;
}

Test(loop_rtde, external_loop_moves_the_robot_and_stops_it)
{
	struct rig_opts o = { .external = true, .watchdog_periods = 50 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_stats ss;
	pthread_t th;

	rig_reset();
	rig_start(&o);
	/* The typed accessor is the coalescer's frame, and nothing else. */
	cr_assert(rtl_rtde_loop_commands(R.loop, 0) != NULL);
	cr_assert_eq(rtl_rtde_loop_commands(R.loop, 0),
		     rtl_rtde_coalesce_frame(rtl_loop_commands(R.loop), 0));
	cr_assert(rtl_rtde_loop_commands(R.loop, RTL_RTDE_COALESCE_MAX_RECIPES) == NULL);
	cr_assert(rtl_rtde_loop_commands(NULL, 0) == NULL);
	cr_assert_eq(pthread_create(&th, NULL, external_main, NULL), 0);
	pthread_join(th, NULL);
	rig_finish(&s, &ss);
	cr_expect_geq(s.steps, 500);
	cr_expect_gt(s.sends, 0);
	cr_expect_eq(s.watchdog, 0);
	cr_expect_eq(ss.robot.stops_at_rest, 1, "the stop at exit");
	expect_safe_end(&s, &ss);
	rig_free();
}

/* ---- a controller that sends the START reply and data in one write -------------------------- */

/*
 * Real controllers sometimes send the START reply and the first data
 * packages back to back, so that one receive holds them all. Every one of
 * them must reach the loop as a frame (none swallowed by the handshake).
 */
/* What the burst's steps saw: each frame's seq and controller time in
 * order (the fake's timestamps: 42 s, then 2 ms apart). */
static struct {
	_Atomic int64_t n, out_of_order;
	_Atomic uint64_t skipped;
} B;

static int step_check_order(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	int64_t k = atomic_load_explicit(&B.n, memory_order_relaxed);

	(void)loop;
	(void)user;
	if ((int64_t)fr->seq != k || fabs(fr->ctrl_time - (42.0 + 0.002 * (double)k)) > 1e-9)
		atomic_fetch_add_explicit(&B.out_of_order, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&B.skipped, fr->ctrl_skipped, memory_order_relaxed);
	atomic_store_explicit(&B.n, k + 1, memory_order_relaxed);
	return 0;
}

/* One burst from @fk through a loop with @step_fn on every frame (inline or
 * not), to its end: rtl_loop_join()'s result, the stats in @s, and the
 * transport and the loop in @tr and @loop for the caller to look at and
 * destroy. */
static int run_burst(struct fake *fk, rtl_loop_step_fn step_fn, bool inline_step,
		     struct rtl_loop_counters *s, struct rtl_rtde_transport **tr,
		     struct rtl_loop **loop)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	int ret;

	rig_reset();
	atomic_store(&B.n, 0);
	atomic_store(&B.out_of_order, 0);
	atomic_store(&B.skipped, 0);
	atomic_store(&fk->served, 0);
	fake_start(fk);
	tc.port = fk->port;
	cc.outputs = "timestamp,actual_q";
	cr_assert_eq(rtl_rtde_transport_create(tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(*tr);
	lc.step = step_fn;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.every_frame = true;
	lc.inline_step = inline_step;
	lc.ring_capacity = 128; /* the whole burst: no ring-full loss */
	cr_assert_eq(rtl_loop_create(loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(*loop, &err), 0, "%s", err.msg);
	ret = rtl_loop_join(*loop);
	rtl_loop_stats(*loop, s);
	fake_stop(fk);
	return ret;
}

static void data_in_the_start_read_reaches_the_loop(void)
{
	/* It holds the connection after the burst, so the loop ends by the
	 * data time-out once every frame has been stepped. */
	static struct fake fk = { .conns = 1, .ndata = 100, .burst = true, .hold = true };
	struct rtl_rtde_transport *tr = NULL;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct rtl_loop *loop;

	cr_expect_eq(run_burst(&fk, step_check_order, rig_inline, &s, &tr, &loop), -ETIMEDOUT);
	cr_expect_eq(s.frames, 100, "frames %llu of the 100 sent", (unsigned long long)s.frames);
	cr_expect_eq(client_counts(rtl_rtde_transport_client(tr)).data, 100);
	/* Each one stepped, in order, with the right seq and timestamp; none
	 * lost anywhere. */
	cr_expect_eq(atomic_load(&B.n), 100, "%lld stepped", (long long)atomic_load(&B.n));
	cr_expect_eq(atomic_load(&B.out_of_order), 0);
	cr_expect_eq(atomic_load(&B.skipped), 0);
	cr_expect_eq(s.ring_full + s.worker_skipped + s.ctrl_skipped, 0);
	cr_expect_eq(client_counts(rtl_rtde_transport_client(tr)).skipped, 0);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, data_in_the_start_read_reaches_the_loop,
		    rig_inline)

/* A slow step: 1 ms, so that the close after the burst finds frames the
 * worker has not taken yet. */
static int step_slowly(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	return step_check_order(loop, fr, user);
}

Test(loop_rtde, frames_left_when_the_stream_ends_are_counted)
{
	/* The controller sends 100 packages at once and closes: the loop ends
	 * with frames in the ring that no step took. Every frame received is
	 * stepped, skipped by the worker or counted as unstepped: none
	 * vanishes. */
	static struct fake fk = { .conns = 1, .ndata = 100, .burst = true };
	struct rtl_rtde_transport *tr = NULL;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct rtl_loop *loop;

	cr_expect_lt(run_burst(&fk, step_slowly, false, &s, &tr, &loop), 0);
	cr_expect_eq(s.frames, 100, "frames %llu of the 100 sent", (unsigned long long)s.frames);
	cr_expect_eq((uint64_t)atomic_load(&B.n) + s.worker_skipped + s.unstepped + s.ring_full,
		     s.frames,
		     "%lld stepped + %llu skipped + %llu unstepped + %llu ring full != %llu",
		     (long long)atomic_load(&B.n), (unsigned long long)s.worker_skipped,
		     (unsigned long long)s.unstepped, (unsigned long long)s.ring_full,
		     (unsigned long long)s.frames);
	cr_expect_eq(atomic_load(&B.out_of_order), 0);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
}

/* ---- connection errors ---------------------------------------------------------------------- */

Test(loop_rtde, refused_connection_names_the_fix)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_rtde_transport *tr = NULL;
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_loop *loop;
	struct rtl_error err = { 0 };
	uint16_t port;

	/* A port that nothing listens on: a server made and destroyed. */
	cr_assert_eq(sim_server_create(&R.srv, NULL, &(struct sim_server_opts){ 0 }), 0);
	port = sim_server_port(R.srv);
	sim_server_destroy(R.srv);

	tc.port = port;
	cc.outputs = "timestamp";
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0);
	lc.transport = rtl_rtde_transport_base(tr);
	lc.rt_mode = RTL_LOOP_RT_OFF;
	cr_assert_eq(rtl_loop_create(&loop, &lc, &err), 0);
	cr_expect_eq(rtl_loop_start(loop, &err), -ECONNREFUSED);
	cr_expect(strstr(err.msg, "rtde-sim") != NULL, "message: %s", err.msg);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
}

Test(loop_rtde, unknown_host_fails_at_init_not_at_reconnect)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_rtde_transport *tr = NULL;
	struct rtl_error err = { 0 };

	tc.host = "no-such-host.invalid";
	cc.outputs = "timestamp";
	cr_expect_lt(rtl_rtde_transport_create(&tr, &tc, &err), 0);
	cr_expect(strstr(err.msg, "no-such-host.invalid") != NULL, "message: %s", err.msg);
}

/* ---- steady state: no allocation, no fault, no stdio, over 10,000 cycles ------------------- */

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(RTL_TAP_SHIM)
#include <dirent.h>
#include <unistd.h>

#include <rtloop/mem.h>

#include "alloc-count.h"

/*
 * The rx thread marks itself for the counts from inside the RTDE
 * transport: its ops, copied, with recv() and next() (rx thread only)
 * wrapped. The worker marks itself in step_counting().
 */
static struct rtl_transport_ops counting_ops;
static int (*rtde_recv)(struct rtl_transport *t);
static int (*rtde_next)(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap);
static _Atomic bool hot_seen[2]; /* rx thread, worker */

static void note_hot_thread(int which)
{
	rtl_test_alloc_mark_thread();
	atomic_store(&hot_seen[which], true);
}

static int counting_recv(struct rtl_transport *t)
{
	note_hot_thread(0);
	return rtde_recv(t);
}

static int counting_next(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap)
{
	note_hot_thread(0);
	return rtde_next(t, f, cap);
}

static void count_rx_thread(struct rtl_transport *t)
{
	counting_ops = *t->ops;
	rtde_recv = counting_ops.recv;
	rtde_next = counting_ops.next;
	counting_ops.recv = counting_recv;
	counting_ops.next = counting_next;
	t->ops = &counting_ops;
}

/* The thread of this process named @name: its tid, and minor faults. */
static pid_t find_thread(const char *name, long *minflt)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "", stat[512];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0)
			found = atoi(e->d_name);
		fclose(f);
		if (!found)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(stat, sizeof(stat), f)) {
			/* Field 10 is minflt; the comm field (2) may hold blanks,
			 * so count from the closing parenthesis. */
			char *p = strrchr(stat, ')');

			if (p)
				sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", minflt);
		}
		if (f)
			fclose(f);
		break;
	}
	if (d)
		closedir(d);
	return found;
}

static _Atomic int64_t worker_faults[2];

static int step_counting(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	int64_t n = atomic_load(&R.steps) + 1;

	if (n == 1)
		note_hot_thread(1);
	if (n == 300)
		atomic_store(&worker_faults[0], rtl_mem_thread_minor_faults());
	if (n == 10300)
		atomic_store(&worker_faults[1], rtl_mem_thread_minor_faults());
	return step(loop, fr, user);
}

/* The application's log handler: it writes with stdio, as real ones do;
 * it must run on the log thread, never on the rx thread or the worker. */
static _Atomic uint64_t texts_logged;
static FILE *log_sink;

static void log_to_sink(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	if (strstr(msg, "controller message"))
		atomic_fetch_add(&texts_logged, 1);
	fprintf(log_sink, "%s: %s\n", rtl_log_level_name(level), msg);
}

/*
 * 10,000 cycles after warm-up with the controller sending a text message
 * every 10 packages (1,000 of them): the rx thread and the worker make no
 * allocation, take no page fault and make no stdio or write() call; the
 * messages reach the application's handler through the log thread.
 */
Test(loop_rtde_rt, steady_state_allocates_nothing_faults_nothing_and_prints_nothing, .timeout = 90)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	long rx_faults[2] = { -1, -1 }, unused;
	long writes[2][2] = { { -1, -1 }, { -1, -1 } };
	pid_t rx_tid, worker_tid;
	long allocs, io;
	uint64_t texts0;
	int64_t end;

	/* Positive controls: the counters see a marked thread's malloc and
	 * stdio. */
	cr_assert(rtl_test_alloc_selftest(), "the allocation counter works");
	cr_assert(rtl_test_io_selftest(), "the stdio/write counter works");
	atomic_store(&hot_seen[0], false);
	atomic_store(&hot_seen[1], false);
	log_sink = fopen("/dev/null", "w");
	cr_assert(log_sink != NULL);
	rtl_log_set_handler(log_to_sink, NULL);

	rig_reset();
	sim_opts_default(&so);
	so.faults.text_every = 10;
	cr_assert_eq(sim_server_create(&R.srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(R.srv), 0);
	tc.port = sim_server_port(R.srv);
	cc.outputs = OUTPUTS;
	cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
	cc.inputs[1] = RTL_RTDE_CMD_ECHO_RECIPE;
	tc.connected = on_connected;
	tc.safe = on_safe;
	tc.user = &R;
	cr_assert_eq(rtl_rtde_transport_create(&R.tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(R.tr);
	count_rx_thread(lc.transport);
	lc.step = step_counting;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_DEGRADE; /* mlockall and SCHED_FIFO where permitted */
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	R.qd0 = 0.05;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(R.loop, &err), 0, "%s", err.msg);

	end = rtl_time_now() + 60 * RTL_NS_PER_SEC;
	while (atomic_load(&R.steps) < 300 && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	rx_tid = find_thread("rtl-rx", &rx_faults[0]);
	worker_tid = find_thread("rtl-worker", &unused);
	writes[0][0] = rtl_test_thread_write_syscalls(rx_tid);
	writes[1][0] = rtl_test_thread_write_syscalls(worker_tid);
	cr_assert(hot_seen[0] && hot_seen[1], "both hot threads marked");
	texts0 = atomic_load(&texts_logged);
	rtl_test_alloc_start();
	rtl_test_io_start();
	while (atomic_load(&R.steps) < 10300 && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	find_thread("rtl-rx", &rx_faults[1]);
	writes[0][1] = rtl_test_thread_write_syscalls(rx_tid);
	writes[1][1] = rtl_test_thread_write_syscalls(worker_tid);
	io = rtl_test_io_stop();
	allocs = rtl_test_alloc_stop();
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	rtl_loop_stats(R.loop, &s);
	sim_server_stop(R.srv);
	sim_server_join(R.srv);
	rtl_log_set_handler(NULL, NULL);
	fclose(log_sink);

	cr_expect_geq(s.steps, 10300, "10,000 cycles after warm-up");
	cr_expect_neq(rx_tid, 0, "found the rx thread");
	cr_expect_eq(allocs, 0, "%ld allocations in the rx thread and worker", allocs);
	cr_expect_eq(io, 0, "%ld stdio or write() calls in the rx thread and worker", io);
	cr_expect(writes[0][0] >= 0 && writes[1][0] >= 0, "the kernel's write counts are there");
	cr_expect_eq(writes[0][1] - writes[0][0], 0, "write system calls of the rx thread");
	cr_expect_eq(writes[1][1] - writes[1][0], 0, "write system calls of the worker");
	cr_expect_eq(rx_faults[1] - rx_faults[0], 0, "rx thread minor faults");
	cr_expect_eq(worker_faults[1] - worker_faults[0], 0, "worker minor faults");
	cr_expect_geq(atomic_load(&texts_logged) - texts0, 900,
		      "the controller's texts reached the handler: %llu",
		      (unsigned long long)(atomic_load(&texts_logged) - texts0));
	cr_expect_eq(s.log_dropped, 0);
	rig_free();
	rtl_mem_unlock_all();
}
#endif
