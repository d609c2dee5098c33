// SPDX-License-Identifier: MIT
/*
 * The DRFL transport end to end: the loop over the real DRFL table
 * (io/drfl/drfl_real.cpp) compiled against the stand-in library
 * (io/drfl/standin/, CDRFLEx over rtloop's UDP stream), against
 * rtde-sim's UDP mode in this process on an ephemeral port. What the robot
 * did is read from the simulator.
 *
 * Only the Criterion macros the TSan shim provides: the same tests run
 * under ThreadSanitizer (DRFL's thread, the rx thread, the worker).
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
#include <string.h>

#include <rtloop/drfl_real.h>
#include <rtloop/drfl_transport.h>
#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/time.h>

#include "udp.h"

enum what { SPEEDJ, STOP, SILENT, FAST_ACC, SERVOL };

struct rig {
	struct sim_udp *sim;
	struct rtl_drfl_api api;
	struct rtl_drfl_transport *tr;
	struct rtl_loop *loop;
	_Atomic int what;
	_Atomic int64_t steps;
	double first_ts, last_ts, max_qd0, max_qd; /* deg/s: joint 0, any joint */
	uint64_t skipped_sum;
	/* What the loop logged (the alarms). */
	char log[8192];
	_Atomic int log_lines;
};

static struct rig R;

/* Handlers are called from any thread without a log queue (and from the
 * loop's log thread): one at a time. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture(void *user, enum rtl_log_level level, const char *msg)
{
	size_t n;

	(void)user;
	pthread_mutex_lock(&log_lock);
	n = strlen(R.log);
	snprintf(R.log + n, sizeof(R.log) - n, "%s: %s\n", rtl_log_level_name(level), msg);
	pthread_mutex_unlock(&log_lock);
	atomic_fetch_add(&R.log_lines, 1);
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct rig *r = user;
	const struct rtl_udp_frame *st = rtl_udp_loop_frame(f);
	struct rtl_udp_cmd *cmd = rtl_loop_commands(loop);
	int64_t n = atomic_load_explicit(&r->steps, memory_order_relaxed) + 1;

	if (n == 1)
		r->first_ts = st->rt.time_stamp;
	else
		r->skipped_sum += f->ctrl_skipped;
	r->last_ts = st->rt.time_stamp;
	r->max_qd0 = fmax(r->max_qd0, st->rt.actual_joint_velocity[0]);
	for (int i = 0; i < 6; i++)
		r->max_qd = fmax(r->max_qd, fabs(st->rt.actual_joint_velocity[i]));
	memset(cmd, 0, sizeof(*cmd));
	cmd->target_time = 0.001;
	switch (atomic_load_explicit(&r->what, memory_order_acquire)) {
	case SPEEDJ:
	case FAST_ACC:
		cmd->mode = RTL_UDP_MODE_SPEEDJ;
		cmd->vel[0] = 10.0; /* deg/s */
		for (int i = 0; i < 6; i++)
			cmd->acc[i] = r->what == FAST_ACC ? 5000.0 : 1000.0;
		break;
	case SILENT:
		cmd->mode = RTL_UDP_MODE_NONE; /* nothing goes out */
		break;
	case SERVOL:
		/* Where the TCP is, 20 mm up: rtde-sim does not model servol. */
		cmd->mode = RTL_UDP_MODE_SERVOL;
		for (int i = 0; i < 6; i++)
			cmd->pos[i] = st->rt.actual_tcp_position[i];
		cmd->pos[2] += 20.0;
		cmd->target_time = 0.02;
		break;
	default:
		cmd->mode = RTL_UDP_MODE_STOP;
		cmd->acc[0] = RTL_UDP_AUTO;
		break;
	}
	atomic_store_explicit(&r->steps, n, memory_order_relaxed);
	return 0;
}

static void rig_start(enum what what, uint32_t skip_every, const struct rtl_drfl_config *dc)
{
	struct sim_udp_opts so;
	struct rtl_drfl_transport_config tc = { .size = sizeof(tc) };
	struct rtl_drfl_config drfl = { .size = sizeof(drfl) };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };

	memset(&R, 0, sizeof(R));
	rtl_log_set_handler(capture, NULL);
	atomic_store(&R.what, what);
	sim_udp_opts_default(&so);
	so.port = 0;
	so.skip_every = skip_every;
	cr_assert_eq(sim_udp_create(&R.sim, &so), 0);
	cr_assert_eq(sim_udp_start(R.sim), 0);

	cr_assert_eq(rtl_drfl_api_real(&R.api), 0);
	tc.api = &R.api;
	if (dc)
		drfl = *dc;
	drfl.host = "127.0.0.1";
	drfl.port = sim_udp_port(R.sim);
	tc.drfl = &drfl;
	tc.safe_decel = 500.0;
	tc.limits.max_joint_vel = 180.0;
	tc.rx_timeout_ns = 300 * RTL_NS_PER_MS;
	cr_assert_eq(rtl_drfl_transport_create(&R.tr, &tc, &err), 0, "%s", err.msg);

	lc.transport = rtl_drfl_transport_base(R.tr);
	lc.step = step;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(R.loop, &err), 0, "%s", err.msg);
}

static void await_steps(int64_t steps)
{
	int64_t end = rtl_time_now() + 8 * RTL_NS_PER_SEC;

	while (atomic_load(&R.steps) < steps && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
}

/* Calls that reached the controller: the commands and the safe stops. */
static uint64_t calls_sent(void)
{
	struct rtl_drfl_transport_counters ts = { .size = sizeof(ts) };

	rtl_drfl_transport_stats(R.tr, &ts);
	return ts.commands + ts.safe;
}

/* Stop the loop (or, !@stop, wait for it to end by itself: bounded by the
 * transport's receive deadline), then the simulator. */
static int rig_end(struct rtl_loop_counters *s, struct sim_udp_stats *ss, bool stop)
{
	int64_t end;
	int ret;

	if (stop)
		rtl_loop_stop(R.loop);
	ret = rtl_loop_join(R.loop);
	rtl_loop_stats(R.loop, s);
	end = rtl_time_now() + RTL_NS_PER_SEC;
	do {
		sim_udp_stats(R.sim, ss);
		if (ss->commands >= calls_sent())
			break;
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
	} while (rtl_time_now() < end);
	sim_udp_stop(R.sim);
	sim_udp_join(R.sim);
	sim_udp_stats(R.sim, ss);
	return ret;
}

static int rig_finish(struct rtl_loop_counters *s, struct sim_udp_stats *ss)
{
	return rig_end(s, ss, true);
}

static void rig_free(void)
{
	rtl_loop_destroy(R.loop);
	rtl_drfl_transport_destroy(R.tr);
	rtl_drfl_api_real_free(&R.api);
	sim_udp_destroy(R.sim);
	rtl_log_set_handler(NULL, NULL);
}

Test(drfl_e2e, speedj_through_drfl_moves_the_robot_and_the_loop_stops_it_at_exit, .timeout = 30)
{
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_udp_stats ss;
	struct rtl_drfl_transport_counters ts = { .size = sizeof(ts) };

	rig_start(SPEEDJ, 50, NULL);
	await_steps(1000);
	cr_expect_eq(rig_finish(&s, &ss), 0);
	rtl_drfl_transport_stats(R.tr, &ts);
	cr_expect_geq(s.steps, 1000);
	cr_expect_gt(R.max_qd0, 9.0, "joint 0 reached ~10 deg/s (%g)", R.max_qd0);
	/* Every state DRFL handed over is a frame or a drop under its name. */
	cr_expect_eq(ts.states, s.frames + s.stop_frames, "states %llu frames %llu stop %llu",
		     (unsigned long long)ts.states, (unsigned long long)s.frames,
		     (unsigned long long)s.stop_frames);
	{
		uint64_t used =
			ts.states + ts.overflow + ts.stale + ts.duplicate + ts.nonfinite_state;

		/* ... or still in the transport's ring (64 slots) at the end. */
		cr_expect_geq(ts.callbacks, used);
		cr_expect_leq(ts.callbacks, used + 64, "callbacks %llu, used %llu",
			      (unsigned long long)ts.callbacks, (unsigned long long)used);
	}
	/* The time_stamp does the sequence number's work: every period between
	 * the first and the last frame stepped is a step or a skip. */
	cr_expect_eq((uint64_t)llround((R.last_ts - R.first_ts) / 0.001) + 1,
		     s.steps + R.skipped_sum, "periods vs steps %llu + skipped %llu",
		     (unsigned long long)s.steps, (unsigned long long)R.skipped_sum);
	cr_expect_gt(R.skipped_sum, 10, "one state in 50 skipped by the simulator");
	/* A gap the step saw is a state the simulator skipped, or one lost on
	 * the way: in the kernel (sent, never handed over; on a loaded
	 * machine, as under ThreadSanitizer, a socket buffer can overflow)
	 * or dropped by the transport under its name. */
	cr_expect_leq(R.skipped_sum,
		      ss.states_skipped + (ss.states_sent - ts.callbacks) + ts.overflow +
			      ts.nonfinite_state + s.ring_full,
		      "skipped %llu, by the simulator %llu", (unsigned long long)R.skipped_sum,
		      (unsigned long long)ss.states_skipped);
	/* The controller saw what the transport sent, and stopped. */
	cr_expect_eq(ss.commands, calls_sent(), "%llu of %llu calls arrived",
		     (unsigned long long)ss.commands, (unsigned long long)calls_sent());
	cr_expect_gt(ss.mode_count[RTL_UDP_MODE_SPEEDJ], 900);
	cr_expect_eq(ss.nonfinite_in, 0);
	cr_expect_eq(ss.watchdog_trips, 0, "the command time-out never needed");
	cr_expect_gt(ts.safe, 0, "the stop at exit");
	cr_expect_eq(s.stop_unconfirmed, 0, "the arm was seen at rest");
	cr_expect(ss.robot.max_speed < 0.001, "the arm moves at the end (%g rad/s)",
		  ss.robot.max_speed);
	cr_expect_eq(ss.byes, 1, "stop_rt_control said BYE");
	rig_free();
}

Test(drfl_e2e, a_step_that_sends_nothing_is_stopped_by_the_time_out_and_the_alarm_is_logged,
     .timeout = 30)
{
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_udp_stats ss;
	int64_t end;

	rig_start(SPEEDJ, 0, NULL);
	await_steps(300);
	atomic_store(&R.what, SILENT);
	/* The simulator's 0.1 s command time-out stops the robot. */
	end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	do {
		sim_udp_stats(R.sim, &ss);
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	} while (!ss.watchdog_trips && rtl_time_now() < end);
	cr_expect_eq(ss.watchdog_trips, 1);
	atomic_store(&R.what, STOP);
	rig_finish(&s, &ss);
	cr_expect_gt(s.silent, 0, "the loop reports that it sent nothing while armed");
	rig_free();
	/* The controller's alarm, through DRFL's callback into the loop's log. */
	cr_expect(strstr(R.log, "error: DRFL alarm 1.1: RT command time-out: no command for "
				"100 ms; robot stopped\n"),
		  "%s", R.log);
}

Test(drfl_e2e, the_loss_count_ends_the_session_and_the_loop_says_why, .timeout = 30)
{
	struct rtl_drfl_config dc = { .size = sizeof(dc), .set_input = true, .loss_count = 200 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_udp_stats ss;
	struct rtl_drfl_transport_counters ts = { .size = sizeof(ts) };
	const char *timeout, *loss, *end;

	/* set_rt_control_input's loss count 200: 201 periods without a
	 * command end the session (the 0.1 s command time-out stops the
	 * robot first). A loose count: a loaded host must not end it early. */
	rig_start(SPEEDJ, 0, &dc);
	await_steps(300);
	atomic_store(&R.what, SILENT);
	cr_expect_eq(rig_end(&s, &ss, false), -ETIMEDOUT, "no state after the session ended");
	rtl_drfl_transport_stats(R.tr, &ts);
	cr_expect_eq(ss.loss_closed, 1);
	cr_expect_eq(ss.byes_sent, 1);
	cr_expect_eq(ts.rx_deadline, 1);
	rig_free();
	timeout = strstr(R.log, "error: DRFL alarm 1.1: RT command time-out");
	loss = strstr(R.log, "error: DRFL alarm 1.2: RT input lost 201 periods in a row (loss "
			     "count 200): RT session closed\n");
	end = strstr(R.log, "the controller's last alarm: alarm 1.2: RT input lost 201 periods");
	cr_expect(timeout && loss && end && timeout < loss && loss < end,
		  "the time-out, the loss, then the end of the stream: %s", R.log);
}

Test(drfl_e2e, a_call_that_returns_true_was_sent_not_applied, .timeout = 30)
{
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_udp_stats ss;
	struct rtl_drfl_transport_counters ts = { .size = sizeof(ts) };

	/* servol_rt goes out and DRFL says true; the controller (rtde-sim: not
	 * modelled) does not apply it and the robot does not move. */
	rig_start(SERVOL, 0, NULL);
	await_steps(300);
	rig_finish(&s, &ss);
	rtl_drfl_transport_stats(R.tr, &ts);
	cr_expect_geq(ts.commands, 300, "every servol_rt call returned true (sent)");
	cr_expect_eq(ts.command_failed, 0);
	cr_expect_geq(ss.mode_count[RTL_UDP_MODE_SERVOL], 300, "and reached the controller");
	cr_expect_eq(ss.unsupported, ss.mode_count[RTL_UDP_MODE_SERVOL],
		     "which applied none of them");
	cr_expect(R.max_qd < 0.06, "the robot did not move (%g deg/s in a state)", R.max_qd);
	rig_free();
}

/* Lines of @log that hold @what. */
static int count_lines(const char *log, const char *what)
{
	int n = 0;

	for (const char *p = log; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

Test(drfl_e2e, an_acceleration_above_the_limit_is_clamped_with_one_info_a_second, .timeout = 30)
{
	struct rtl_drfl_config dc = { .size = sizeof(dc) };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct sim_udp_stats ss;
	int64_t t0, t1;
	int infos;

	/* set_accj_rt: 2 rad/s^2 (114.6 deg/s^2) on every joint; the step asks
	 * for 5000 deg/s^2 in every period. */
	for (int i = 0; i < 6; i++)
		dc.accj[i] = 2.0;
	t0 = rtl_time_now();
	rig_start(FAST_ACC, 0, &dc);
	await_steps(1500);
	rig_finish(&s, &ss);
	t1 = rtl_time_now();
	rig_free();
	cr_expect_gt(ss.limits_in, 0, "the limits reached the controller");
	cr_expect_gt(ss.acc_clamped, 1000, "the commands were clamped (%llu)",
		     (unsigned long long)ss.acc_clamped);
	infos = count_lines(R.log, "info: DRFL info 1.3: speedj: acc[");
	cr_expect_geq(infos, 1, "%s", R.log);
	cr_expect_leq(infos, 1 + (t1 - t0) / RTL_NS_PER_SEC, "at most one a second: %d in %.1f s",
		      infos, (double)(t1 - t0) * 1e-9);
	cr_expect_gt(ss.limit_alarms_suppressed, 0, "the controller held the rest back");
	cr_expect(ss.robot.max_speed < 0.001, "stopped at the end");
}
