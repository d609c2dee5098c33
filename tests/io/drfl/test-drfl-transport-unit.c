// SPDX-License-Identifier: MIT
/*
 * The DRFL transport's ops against a fake DRFL table: the test thread
 * plays DRFL's receiving thread and calls the registered callbacks itself,
 * so every state, alarm and call is scripted and every counter exact.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/drfl_transport.h>
#include <rtloop/log.h>
#include <rtloop/time.h>

#include "alloc-count.h"

/* ---- the fake DRFL ------------------------------------------------------------------ */

static struct {
	rtl_drfl_state_fn state_fn;
	void *state_user;
	rtl_drfl_alarm_fn alarm_fn;
	void *alarm_user;
	bool no_first_state; /* start_rt_control delivers no state */
	bool fail_speed;     /* speedl_rt / speedj_rt return false */
	char log[512];	     /* the calls, in order */
	float last_vel[6], last_acc[6], last_t;
	int speedj, speedl;
	double next_ts;
	char logged[16][RTL_LOG_LINE];
	int n_logged;
} F;

static void called(const char *name)
{
	size_t n = strlen(F.log);

	snprintf(F.log + n, sizeof(F.log) - n, "%s%s", n ? " " : "", name);
}

static void push_state(double ts, float q0vel)
{
	static struct rtl_udp_state s;
	static uint8_t bytes[RTL_UDP_STATE_SIZE];

	memset(&s, 0, sizeof(s));
	s.time_stamp = ts;
	s.actual_joint_velocity[0] = q0vel;
	cr_assert_eq(rtl_udp_state_encode(&s, bytes, sizeof(bytes)), RTL_UDP_STATE_SIZE);
	cr_assert(F.state_fn, "no state callback registered");
	F.state_fn(bytes, F.state_user);
}

static void push_nan_state(double ts)
{
	static struct rtl_udp_state s;
	static uint8_t bytes[RTL_UDP_STATE_SIZE];

	memset(&s, 0, sizeof(s));
	s.time_stamp = ts;
	s.mass_matrix[3][4] = NAN;
	rtl_udp_state_encode(&s, bytes, sizeof(bytes));
	F.state_fn(bytes, F.state_user);
}

static void push_alarm(unsigned level, unsigned index, const char *text)
{
	struct rtl_drfl_alarm a = { .level = level, .group = 1, .index = index };

	a.param[0] = text;
	F.alarm_fn(&a, F.alarm_user);
}

static bool f_connect(void *c, const char *ip, unsigned int port)
{
	called("connect_rt_control");
	return true;
}
static bool f_disconnect(void *c)
{
	called("disconnect_rt_control");
	return true;
}
static bool f_set_io(void *c, const char *v, float period, int loss)
{
	called("set_rt_control_io");
	return true;
}
static bool f_start(void *c)
{
	called("start_rt_control");
	if (!F.no_first_state)
		push_state(F.next_ts, 0);
	return true;
}
static bool f_stop(void *c)
{
	called("stop_rt_control");
	return true;
}
static bool f_lim2(void *c, float a, float b)
{
	return true;
}
static bool f_lim6(void *c, float v[6])
{
	return true;
}
static bool f_speed(void *c, float v[6], float a[6], float t, int *count)
{
	memcpy(F.last_vel, v, sizeof(F.last_vel));
	memcpy(F.last_acc, a, sizeof(F.last_acc));
	F.last_t = t;
	(*count)++;
	return !F.fail_speed;
}
static bool f_speedl(void *c, float v[6], float a[6], float t)
{
	return f_speed(c, v, a, t, &F.speedl);
}
static bool f_speedj(void *c, float v[6], float a[6], float t)
{
	return f_speed(c, v, a, t, &F.speedj);
}
static bool f_servo(void *c, float p[6], float v[6], float a[6], float t)
{
	return true;
}
static const void *f_read(void *c)
{
	return NULL;
}
static void f_on_state(void *c, rtl_drfl_state_fn fn, void *user)
{
	called(fn ? "set_on_rt_monitoring_data" : "unset_on_rt_monitoring_data");
	F.state_fn = fn;
	F.state_user = user;
}
static void f_on_alarm(void *c, rtl_drfl_alarm_fn fn, void *user)
{
	F.alarm_fn = fn;
	F.alarm_user = user;
}

static const struct rtl_drfl_api fake = {
	.size = sizeof(fake),
	.connect_rt_control = f_connect,
	.disconnect_rt_control = f_disconnect,
	.set_rt_control_input = f_set_io,
	.set_rt_control_output = f_set_io,
	.start_rt_control = f_start,
	.stop_rt_control = f_stop,
	.set_velx_rt = f_lim2,
	.set_accx_rt = f_lim2,
	.set_velj_rt = f_lim6,
	.set_accj_rt = f_lim6,
	.speedl_rt = f_speedl,
	.speedj_rt = f_speedj,
	.servol_rt = f_servo,
	.servoj_rt = f_servo,
	.read_data_rt = f_read,
	.set_on_rt_monitoring_data = f_on_state,
	.set_on_rt_log_alarm = f_on_alarm,
};

static void capture(void *user, enum rtl_log_level level, const char *msg)
{
	if (F.n_logged < 16)
		snprintf(F.logged[F.n_logged++], RTL_LOG_LINE, "%s: %s", rtl_log_level_name(level),
			 msg);
}

static void reset(void)
{
	memset(&F, 0, sizeof(F));
	F.next_ts = 10.0;
	rtl_log_set_handler(capture, NULL);
}

/* ---- the rig: the transport's ops on the test thread ------------------------------------- */

static struct rtl_drfl_transport *T;
static struct rtl_transport *B;
static union {
	struct rtl_loop_frame f;
	unsigned char bytes[sizeof(struct rtl_loop_frame) + sizeof(struct rtl_udp_frame)];
} slot;

static void open_transport(struct rtl_drfl_transport_config *cfg)
{
	struct rtl_error err = { 0 };

	cfg->api = &fake;
	cr_assert_eq(rtl_drfl_transport_create(&T, cfg, &err), 0, "%s", err.msg);
	B = rtl_drfl_transport_base(T);
	cr_assert_eq(B->ops->connect(B, &err), 0, "%s", err.msg);
}

static void open_default(void)
{
	struct rtl_drfl_transport_config cfg = { .size = sizeof(cfg), .safe_decel = 300 };

	open_transport(&cfg);
}

/* recv + next once: 1 and the frame in slot, or 0 / -errno. */
static int take(void)
{
	int ret = B->ops->recv(B);

	if (ret <= 0)
		return ret;
	slot.f.rx_ns = rtl_time_now();
	return B->ops->next(B, &slot.f, sizeof(struct rtl_udp_frame));
}

static const struct rtl_udp_frame *frame(void)
{
	return rtl_udp_loop_frame(&slot.f);
}

static void fini(void)
{
	rtl_drfl_transport_destroy(T);
	T = NULL;
	rtl_log_set_handler(NULL, NULL);
}

TestSuite(drfl_transport, .init = reset, .fini = fini);

/* ---- tests ------------------------------------------------------------------------------ */

Test(drfl_transport, connect_registers_opens_in_doosans_order_and_keeps_the_first_state)
{
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };

	open_default();
	cr_expect_str_eq(F.log, "set_on_rt_monitoring_data connect_rt_control set_rt_control_io "
				"start_rt_control");
	cr_expect_eq(B->period_ns, RTL_NS_PER_MS);
	cr_expect_eq(B->ctrl_watchdog_ns, 100 * RTL_NS_PER_MS, "Doosan's 0.1 s time-out");
	cr_expect_eq(take(), 1, "the state of the start is the first frame");
	cr_expect_eq(frame()->rt.time_stamp, 10.0);
	cr_expect_eq(frame()->seq, 1);
	cr_expect_eq(slot.f.ctrl_time, 10.0);
	B->ops->disconnect(B);
	cr_expect_str_eq(F.log,
			 "set_on_rt_monitoring_data connect_rt_control set_rt_control_io "
			 "start_rt_control stop_rt_control disconnect_rt_control "
			 "unset_on_rt_monitoring_data",
			 "stopped before the callback goes");
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.callbacks, 1);
	cr_expect_eq(st.states, 1);
}

Test(drfl_transport, time_stamps_give_skips_and_drop_stale_duplicate_and_nonfinite_states)
{
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };

	open_default();
	cr_assert_eq(take(), 1); /* 10.000 */
	push_state(10.001, 0);
	push_state(10.001, 0); /* duplicate */
	push_state(10.000, 0); /* stale */
	push_state(10.004, 0); /* 2 skipped */
	push_nan_state(10.005);
	push_state(10.006, 0); /* 1 skipped: the NaN one never counted as received */
	push_state(2.0, 0);    /* 8004 periods back: a restarted controller */
	cr_expect_eq(take(), 1);
	cr_expect_eq(frame()->rt.time_stamp, 10.001);
	cr_expect_eq(slot.f.ctrl_skipped, 0);
	cr_expect_eq(take(), 1, "the duplicate and the stale one are passed over");
	cr_expect_eq(frame()->rt.time_stamp, 10.004);
	cr_expect_eq(slot.f.ctrl_skipped, 2);
	cr_expect_eq(take(), 1);
	cr_expect_eq(frame()->rt.time_stamp, 10.006);
	cr_expect_eq(slot.f.ctrl_skipped, 1);
	cr_expect_eq(take(), 1);
	cr_expect_eq(frame()->rt.time_stamp, 2.0);
	cr_expect_eq(slot.f.ctrl_skipped, 0, "a resync is no skip");
	cr_expect_eq(frame()->seq, 5);
	cr_expect_eq(B->ops->next(B, &slot.f, sizeof(struct rtl_udp_frame)), 0, "nothing left");
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.callbacks, 8);
	cr_expect_eq(st.states, 5);
	cr_expect_eq(st.duplicate, 1);
	cr_expect_eq(st.stale, 1);
	cr_expect_eq(st.nonfinite_state, 1);
	cr_expect_eq(st.resyncs, 1);
	cr_expect_eq(st.states + st.duplicate + st.stale + st.nonfinite_state, st.callbacks,
		     "every state is a frame or a drop under its name");
	cr_expect_eq(F.n_logged, 1);
	cr_expect(strstr(F.logged[0], "NaN or an infinity (mass_matrix first)"), "%s", F.logged[0]);
}

Test(drfl_transport, a_full_ring_drops_and_counts_what_drfl_hands_over)
{
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };
	int n = 0;

	open_default();
	for (int i = 1; i <= 70; i++)
		push_state(10.0 + i * 0.001, 0);
	while (take() == 1)
		n++;
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.callbacks, 71);
	cr_expect_eq(st.overflow, 71 - 64, "64 slots, the first state among them");
	cr_expect_eq(n, 64);
	cr_expect_eq(st.states, 64);
}

Test(drfl_transport, info_alarms_repeat_at_most_once_a_second_and_others_always)
{
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };
	int64_t t0, t1;

	open_default();
	t0 = rtl_time_now();
	for (int i = 0; i < 12; i++) {
		push_alarm(0, 3, "speedj: acc[2] = 900 deg/s^2 is above the limit 500");
		cr_assert_eq(take(), i == 0 ? 1 : -EAGAIN);
	}
	t1 = rtl_time_now();
	push_alarm(2, 1, "RT command time-out\x1b[2J\a");
	push_alarm(2, 1, "RT command time-out");
	take();
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.alarms, 14);
	cr_expect_eq(st.alarms_logged + st.alarms_suppressed, 14, "each alarm logged or counted");
	/* The 12 info alarms came within t1 - t0: one logged per second begun. */
	cr_expect_geq(st.alarms_logged, 3);
	cr_expect_leq(st.alarms_logged, 3 + (t1 - t0) / RTL_NS_PER_SEC);
	cr_expect_str_eq(
		F.logged[0],
		"info: DRFL info 1.3: speedj: acc[2] = 900 deg/s^2 is above the limit 500");
	cr_expect_str_eq(F.logged[F.n_logged - 2],
			 "error: DRFL alarm 1.1: RT command time-out?[2J?",
			 "the controller's text, sanitised");
	cr_expect_str_eq(F.logged[F.n_logged - 1], "error: DRFL alarm 1.1: RT command time-out",
			 "not an info: every one logged");
}

Test(drfl_transport, no_valid_state_ends_the_stream_in_bounded_time_and_names_the_last_alarm)
{
	struct rtl_drfl_transport_config cfg = { .size = sizeof(cfg),
						 .rx_timeout_ns = 100 * RTL_NS_PER_MS };
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };
	int64_t end;
	int ret;

	open_transport(&cfg);
	cr_assert_eq(take(), 1);
	push_alarm(2, 2, "RT input lost 5 periods in a row (loss count 4): RT session closed");
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	do {
		/* Garbage keeps coming: states the transport must drop. */
		push_state(10.0, 0);
		ret = take();
	} while ((ret == -EAGAIN || ret == 0) && rtl_time_now() < end);
	cr_expect_eq(ret, -ETIMEDOUT);
	cr_expect(strstr(B->ops->error(B), "DRFL: no valid RT state for 0."), "%s",
		  B->ops->error(B));
	cr_expect(strstr(B->ops->error(B),
			 "the controller's last alarm: alarm 1.2: RT input lost 5 periods in a "
			 "row (loss count 4): RT session closed"),
		  "%s", B->ops->error(B));
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.rx_deadline, 1);
	cr_expect_gt(st.duplicate, 0);
}

Test(drfl_transport, commands_become_their_drfl_calls_every_period_and_failures_count)
{
	struct rtl_udp_cmd *c;
	struct rtl_drfl_transport_counters st = { .size = sizeof(st) };
	char why[128];

	open_default();
	c = rtl_drfl_transport_command(T);
	cr_assert_eq((void *)c, B->commands);
	cr_expect_eq(B->ops->send(B, 0), 0, "mode NONE: nothing to send");
	cr_expect_eq(F.speedl + F.speedj, 0);
	c->mode = RTL_UDP_MODE_SPEEDL;
	c->vel[0] = 50;
	for (int i = 0; i < 6; i++)
		c->acc[i] = RTL_UDP_AUTO;
	c->target_time = 0.001;
	cr_expect_eq(B->ops->check(B, why, sizeof(why)), 0, "%s", why);
	cr_expect_gt(B->ops->send(B, 0), 0);
	cr_expect_gt(B->ops->send(B, 0), 0, "unchanged, sent again: the time-out counts periods");
	cr_expect_eq(F.speedl, 2);
	cr_expect_eq(F.last_vel[0], 50.0f);
	cr_expect_eq(F.last_acc[5], -10000.0f);
	F.fail_speed = true;
	cr_expect_eq(B->ops->send(B, 0), -EIO);
	F.fail_speed = false;
	c->vel[3] = NAN;
	cr_expect_eq(B->ops->check(B, why, sizeof(why)), -EDOM);
	cr_expect_str_eq(why, "speedl: a position, velocity or acceleration is not finite");
	cr_expect_gt(B->ops->send_safe(B), 0);
	cr_expect_eq(F.speedj, 1, "the safe stop is a zero speedj_rt");
	for (int i = 0; i < 6; i++) {
		cr_expect_eq(F.last_vel[i], 0.0f);
		cr_expect_eq(F.last_acc[i], 300.0f, "the safe deceleration on every axis");
	}
	cr_expect_float_eq(F.last_t, 0.001f, 1e-9, "over one period");
	rtl_drfl_transport_stats(T, &st);
	cr_expect_eq(st.commands, 2);
	cr_expect_eq(st.command_failed, 1);
	cr_expect_eq(st.safe, 1);
}

Test(drfl_transport, the_hot_path_allocates_nothing)
{
	struct rtl_udp_cmd *c;

	cr_assert(rtl_test_alloc_init());
	cr_assert(rtl_test_alloc_selftest());
	open_default();
	c = rtl_drfl_transport_command(T);
	c->mode = RTL_UDP_MODE_SPEEDJ;
	c->target_time = 0.001;
	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int i = 1; i <= 200; i++) {
		char why[64];

		push_state(10.0 + i * 0.001, 0);
		if (i % 50 == 0)
			push_alarm(1, 7, "a warning");
		take();
		B->ops->check(B, why, sizeof(why));
		B->ops->send(B, 0);
		B->ops->at_rest(B, &slot.f);
	}
	B->ops->send_safe(B);
	cr_expect_eq(rtl_test_alloc_stop(), 0, "recv, next, check, send, at_rest, send_safe");
	rtl_test_alloc_unmark_thread();
}

Test(drfl_transport, a_start_without_a_state_and_a_table_without_the_callback_are_named)
{
	struct rtl_drfl_transport_config cfg = { .size = sizeof(cfg),
						 .connect_timeout_ns = 50 * RTL_NS_PER_MS,
						 .api = &fake };
	struct rtl_drfl_config bad_period = { .size = sizeof(bad_period), .period_s = 2 };
	struct rtl_drfl_api no_cb = fake;
	struct rtl_error err = { 0 };

	F.no_first_state = true;
	cr_assert_eq(rtl_drfl_transport_create(&T, &cfg, &err), 0, "%s", err.msg);
	B = rtl_drfl_transport_base(T);
	cr_expect_eq(B->ops->connect(B, &err), -ETIMEDOUT);
	cr_expect(strstr(err.msg, "no state came within 0.1 s; check that nothing else holds "
				  "the robot's RT session"),
		  "%s", err.msg);
	cr_expect(strstr(F.log, "stop_rt_control disconnect_rt_control"), "closed again: %s",
		  F.log);
	rtl_drfl_transport_destroy(T);
	T = NULL;
	no_cb.set_on_rt_monitoring_data = NULL;
	cfg.api = &no_cb;
	cr_expect_eq(rtl_drfl_transport_create(&T, &cfg, &err), -ENOTSUP);
	cr_expect(strstr(err.msg, "no set_on_rt_monitoring_data"), "%s", err.msg);
	cfg.api = &fake;
	cfg.drfl = &bad_period;
	cr_expect_eq(rtl_drfl_transport_create(&T, &cfg, &err), -EINVAL);
	cr_expect_null(T);
}
