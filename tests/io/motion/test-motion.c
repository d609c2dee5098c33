// SPDX-License-Identifier: MIT
/*
 * The motion state machine on a fake clock: 500 Hz (period 2 ms). Step k
 * runs at t = k * P; its setpoint is the profile at the end of its period.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <rtloop/motion.h>

#include "alloc-count.h"

#define P INT64_C(2000000) /* 2 ms */
#define MS INT64_C(1000000)
#define A RTL_MOTION_ACC_AUTO
#define EPS 1e-12

#define EV(e) (1u << (e))

static const double zero[6] = { 0 };
static const double autos[6] = { A, A, A, A, A, A };

/* ---- helpers ------------------------------------------------------------- */

struct rec {
	int n;
	enum rtl_motion_event type[64];
	struct rtl_motion_event_info last;
};

static void record(void *user, const struct rtl_motion_event_info *ev)
{
	struct rec *r = user;

	if (r->n < 64)
		r->type[r->n] = ev->type;
	r->n++;
	r->last = *ev;
}

/* A motion at period P with @loss and @timeout_ns, recording its events
 * into @r (may be NULL). The caller destroys it. */
static struct rtl_motion *setup(int loss, int64_t timeout_ns, struct rec *r)
{
	struct rtl_motion_config c;
	struct rtl_motion *m;

	cr_assert_eq(rtl_motion_config_init(&c, P), 0);
	c.loss_count = loss;
	c.timeout_ns = timeout_ns;
	cr_assert_eq(rtl_motion_create(&m, &c, NULL), 0);
	cr_assert_not_null(m);
	if (r) {
		memset(r, 0, sizeof(*r));
		rtl_motion_set_handler(m, record, r);
	}
	return m;
}

static void vec(double v[6], double a, double b, double c, double d, double e, double f)
{
	v[0] = a;
	v[1] = b;
	v[2] = c;
	v[3] = d;
	v[4] = e;
	v[5] = f;
}

static unsigned step(struct rtl_motion *m, int64_t t, struct rtl_motion_output *o)
{
	cr_assert_geq(rtl_motion_step(m, o, t, NULL), 0);
	return o->events;
}

/* ---- configuration ------------------------------------------------------- */

/* Not a motion: what *out holds before a create that must clear it. */
static char not_a_motion;

/* rtl_motion_create() with @cfg must fail with -EINVAL and clear *out. */
static void expect_rejected(const struct rtl_motion_config *cfg, const char *what)
{
	struct rtl_motion *m = (struct rtl_motion *)&not_a_motion;

	cr_assert_eq(rtl_motion_create(&m, cfg, NULL), -EINVAL, "%s", what);
	cr_assert_null(m, "%s: *out is NULL after a failed create", what);
}

Test(motion, config_init_fills_the_defaults)
{
	struct rtl_motion_config c;

	cr_assert_eq(rtl_motion_config_init(NULL, P), -EINVAL);
	cr_assert_eq(rtl_motion_config_init(&c, 0), -EINVAL);
	cr_assert_eq(rtl_motion_config_init(&c, P), 0);
	cr_assert_eq(c.period_ns, P);
	cr_assert_eq(c.timeout_ns, 100 * MS, "default time-out is 0.1 s");
	cr_assert_eq(c.loss_count, RTL_MOTION_LOSS_OFF);
	cr_assert_eq(c.rot_radius_m, RTL_MOTION_DEFAULT_ROT_RADIUS_M);
	cr_assert(isinf(c.velx[0]) && isinf(c.accj[5]), "no limits by default");
}

Test(motion, create_rejects_null_arguments_and_bad_configuration)
{
	struct rtl_motion *m = (struct rtl_motion *)&not_a_motion;
	struct rtl_motion_config c, bad;

	cr_assert_eq(rtl_motion_config_init(&c, P), 0);
	cr_assert_eq(rtl_motion_create(NULL, &c, NULL), -EINVAL);
	expect_rejected(NULL, "cfg NULL");

	bad = c;
	bad.period_ns = 0;
	expect_rejected(&bad, "period_ns 0");
	bad.period_ns = -1;
	expect_rejected(&bad, "period_ns -1");
	bad = c;
	bad.timeout_ns = 0;
	expect_rejected(&bad, "timeout_ns 0");
	bad = c;
	bad.loss_count = 0;
	expect_rejected(&bad, "loss_count 0");
	bad.loss_count = -2;
	expect_rejected(&bad, "loss_count -2");
	bad = c;
	bad.rot_radius_m = 0;
	expect_rejected(&bad, "rot_radius_m 0");
	bad.rot_radius_m = INFINITY;
	expect_rejected(&bad, "rot_radius_m infinite");
	bad.rot_radius_m = NAN;
	expect_rejected(&bad, "rot_radius_m NaN");
	bad = c;
	bad.accx[3] = NAN;
	expect_rejected(&bad, "accx NaN");
	bad = c;
	bad.velj[0] = 0;
	expect_rejected(&bad, "velj 0");
	bad = c;
	bad.velx[5] = -1;
	expect_rejected(&bad, "velx -1");

	/* The edges that are allowed. */
	bad = c;
	bad.loss_count = 1;
	bad.accj[2] = 1e-9;
	cr_assert_eq(rtl_motion_create(&m, &bad, NULL), 0);
	cr_assert_not_null(m);
	rtl_motion_destroy(m);
	cr_assert_eq(rtl_motion_create(&m, &c, NULL), 0);
	cr_assert_not_null(m);
	rtl_motion_destroy(m);
}

Test(motion, create_makes_an_idle_motion_with_its_own_copy_of_the_configuration)
{
	struct rtl_motion *m;
	struct rtl_motion_config c;
	struct rtl_motion_output o;
	struct rtl_motion_counters st = { .size = sizeof(st) };
	double v[6];

	cr_assert_eq(rtl_motion_config_init(&c, P), 0);
	cr_assert_eq(rtl_motion_create(&m, &c, NULL), 0);
	/* Changing the caller's struct afterwards changes nothing. */
	c.velj[0] = 0.1;
	c.period_ns = 1;
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.steps + st.commands + st.rejected + st.latched + st.limit_clamps, 0);
	cr_assert_eq(rtl_motion_step(m, &o, 0, NULL), RTL_MOTION_IDLE);
	cr_assert_eq(o.space, RTL_MOTION_JOINT);
	vec(v, 1, 0, 0, 0, 0, 0);
	cr_assert_eq(rtl_motion_speedj(m, P, v, autos, 0.004), 0);
	step(m, P, &o);
	cr_assert_float_eq(o.vel[0], 0.5, EPS, "period still P, limit still none");
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.limit_clamps, 0);
	rtl_motion_destroy(m);
}

Test(motion, destroy_accepts_null)
{
	rtl_motion_destroy(NULL);
}

Test(motion, idle_outputs_zero_velocity_and_the_measured_pose)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rtl_motion_state s = { .joint_pos = { 1, 2, 3, 4, 5, 6 } };

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	cr_assert_eq(rtl_motion_step(m, &o, 0, &s), RTL_MOTION_IDLE);
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);
	cr_assert_eq(o.events, 0);
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(o.vel[i], 0.0);
		cr_assert_eq(o.pose[i], s.joint_pos[i]);
	}
	cr_assert_eq(rtl_motion_step(NULL, &o, 0, NULL), -EINVAL);
	cr_assert_eq(rtl_motion_step(m, NULL, 0, NULL), -EINVAL);
	rtl_motion_destroy(m);
}

/* ---- velocity profile ---------------------------------------------------- */

Test(motion, speedl_ramps_linearly_and_reaches_the_velocity_after_target_time)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(v, 0.5, 0, 0, 0, 0, -0.25);
	cr_assert_eq(rtl_motion_speedl(m, 0, v, autos, 0.1), 0);
	/* 0.1 s at 2 ms: 50 steps, 1/50 of the change per step. */
	for (int k = 0; k < 50; k++) {
		cr_assert_eq(step(m, k * P, &o), 0);
		cr_assert_eq(o.mode, RTL_MOTION_SPEED_CARTESIAN);
		cr_assert_eq(o.space, RTL_MOTION_CARTESIAN);
		cr_assert_float_eq(o.vel[0], 0.5 * (k + 1) / 50.0, EPS, "step %d: %.17g", k,
				   o.vel[0]);
		cr_assert_float_eq(o.vel[5], -0.25 * (k + 1) / 50.0, EPS);
		cr_assert_eq(o.vel[1], 0.0);
	}
	cr_assert_eq(o.vel[0], 0.5, "exactly the target after 50 steps");
	cr_assert_eq(o.vel[5], -0.25);
	rtl_motion_destroy(m);
}

Test(motion, target_time_at_or_below_one_period_applies_at_once)
{
	const double times[] = { 0.0, 0.001, 0.002 };

	for (int j = 0; j < 3; j++) {
		struct rtl_motion *m;
		struct rtl_motion_output o;
		double v[6];

		m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
		vec(v, 0.3, -0.1, 0, 0, 0.2, 0);
		cr_assert_eq(rtl_motion_speedj(m, 0, v, autos, times[j]), 0);
		step(m, 0, &o);
		cr_assert_eq(o.mode, RTL_MOTION_SPEED_JOINT);
		for (int i = 0; i < 6; i++)
			cr_assert_eq(o.vel[i], v[i], "target_time %g, axis %d", times[j], i);
		cr_assert_float_eq(o.acc[0], 0.3 / 0.002, 1e-9, "the step's acceleration");
		rtl_motion_destroy(m);
	}
	/* Just above one period: no longer at once. */
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(v, 0.3, 0, 0, 0, 0, 0);
	rtl_motion_speedj(m, 0, v, autos, 0.004);
	step(m, 0, &o);
	cr_assert_float_eq(o.vel[0], 0.15, EPS);
	step(m, P, &o);
	cr_assert_eq(o.vel[0], 0.3);
	rtl_motion_destroy(m);
}

Test(motion, acc_auto_is_the_velocity_change_over_target_time)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	cr_assert_eq(RTL_MOTION_ACC_AUTO, -10000.0);
	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, NULL);
	vec(v, 0.5, -0.2, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0.1);
	for (int k = 0; k < 50; k++) {
		step(m, k * P, &o);
		cr_assert_float_eq(o.acc[0], 5.0, 1e-9, "|dv| / T = 0.5 / 0.1");
		cr_assert_float_eq(o.acc[1], -2.0, 1e-9, "signed: -0.2 / 0.1");
		cr_assert_eq(o.acc[2], 0.0);
	}
	step(m, 50 * P, &o);
	cr_assert_eq(o.acc[0], 0.0, "no acceleration once the target is reached");
	rtl_motion_destroy(m);
}

Test(motion, explicit_acc_bounds_the_ramp_and_all_axes_arrive_together)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6], a[6];

	m = setup(RTL_MOTION_LOSS_OFF, 10000 * MS, NULL);
	vec(v, 0.5, 0.25, 0, 0, 0, 0);
	vec(a, 1.0, A, A, A, A, A);
	rtl_motion_speedl(m, 0, v, a, 0.1);
	/* 0.5 m/s at 1 m/s^2 takes 0.5 s = 250 steps; axis 1 follows. */
	for (int k = 0; k < 249; k++) {
		step(m, k * P, &o);
		cr_assert_float_eq(o.acc[0], 1.0, 1e-9);
		cr_assert_float_eq(o.vel[1], o.vel[0] / 2, EPS, "direction kept");
	}
	cr_assert_lt(o.vel[0], 0.5);
	step(m, 249 * P, &o);
	cr_assert_eq(o.vel[0], 0.5);
	cr_assert_eq(o.vel[1], 0.25);

	/* A larger explicit acc does not shorten the ramp below target_time. */
	rtl_motion_destroy(m);
	m = setup(RTL_MOTION_LOSS_OFF, 10000 * MS, NULL);
	vec(a, 100, 100, 100, 100, 100, 100);
	rtl_motion_speedl(m, 0, v, a, 0.1);
	step(m, 0, &o);
	cr_assert_float_eq(o.vel[0], 0.01, EPS);
	cr_assert_float_eq(o.acc[0], 5.0, 1e-9);
	rtl_motion_destroy(m);
}

Test(motion, velocity_is_held_until_the_next_command)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];
	int64_t t = 0;

	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, NULL);
	vec(v, 0, 0, 0, 0.5, 0, 0);
	rtl_motion_speedj(m, 0, v, autos, 0.1);
	for (int k = 0; k < 450; k++, t += P) {
		cr_assert_eq(step(m, t, &o), 0);
		if (k >= 49)
			cr_assert_eq(o.vel[3], 0.5, "held at step %d", k);
	}
	cr_assert_eq(o.mode, RTL_MOTION_SPEED_JOINT);
	/* The next command ramps from the held velocity. */
	vec(v, 0, 0, 0, -0.5, 0, 0);
	rtl_motion_speedj(m, t, v, autos, 0.1);
	step(m, t, &o);
	cr_assert_float_eq(o.vel[3], 0.5 - 1.0 / 50, EPS);
	for (int k = 1; k < 50; k++)
		step(m, t + k * P, &o);
	cr_assert_eq(o.vel[3], -0.5);
	rtl_motion_destroy(m);
}

Test(motion, a_new_command_starts_from_the_current_setpoint_mid_ramp)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(v, 1.0, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0.1);
	for (int k = 0; k < 25; k++)
		step(m, k * P, &o);
	cr_assert_float_eq(o.vel[0], 0.5, EPS);
	vec(v, 0, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 25 * P, v, autos, 0.02);
	step(m, 25 * P, &o);
	cr_assert_float_eq(o.vel[0], 0.45, EPS, "0.5 -> 0 over 10 steps");
	rtl_motion_destroy(m);
}

Test(motion, speed_pose_integrates_the_setpoint_velocity)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rtl_motion_state s = { .tcp_pos = { 0.1, 0, 0, 0, 0, 0 } };
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(v, 0.5, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	for (int k = 0; k < 10; k++)
		cr_assert_geq(rtl_motion_step(m, &o, k * P, &s), 0);
	/* trapezoid: (0 + 0.5) / 2 * dt, then 0.5 * dt nine times */
	cr_assert_float_eq(o.pose[0], 0.1 + 0.0005 + 9 * 0.001, EPS);
	rtl_motion_destroy(m);
}

Test(motion, cartesian_and_joint_spaces_behave_alike)
{
	struct rtl_motion *ml, *mj;
	struct rtl_motion_output ol, oj;
	double v[6], lim[6];

	ml = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	mj = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(lim, 0.4, 0.4, 0.4, 4, 4, 4);
	cr_assert_eq(rtl_motion_set_velx(ml, 0.4, 4), 0);
	cr_assert_eq(rtl_motion_set_velj(mj, lim), 0);
	vec(v, 0.8, 0.2, -0.1, 1, 0, 0.5);
	rtl_motion_speedl(ml, 0, v, autos, 0.05);
	rtl_motion_speedj(mj, 0, v, autos, 0.05);
	for (int k = 0; k < 200; k++) {
		step(ml, k * P, &ol);
		step(mj, k * P, &oj);
		cr_assert_eq(ol.events, oj.events);
		for (int i = 0; i < 6; i++) {
			cr_assert_eq(ol.vel[i], oj.vel[i]);
			cr_assert_eq(ol.acc[i], oj.acc[i]);
		}
	}
	cr_assert_eq(ol.mode, RTL_MOTION_IDLE, "timed out and stopped, both");
	cr_assert_eq(oj.mode, RTL_MOTION_IDLE);
	rtl_motion_destroy(ml);
	rtl_motion_destroy(mj);
}

/* ---- time-out ------------------------------------------------------------ */

Test(motion, timeout_after_100_ms_stops_with_an_event_and_decelerates_to_zero)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6];
	struct rtl_motion_counters st = { .size = sizeof(st) };

	m = setup(RTL_MOTION_LOSS_OFF, RTL_MOTION_DEFAULT_TIMEOUT_NS, &r);
	cr_assert_eq(rtl_motion_set_accx(m, 2.5, A), 0);
	vec(v, 0.2, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0.1); /* 2 m/s^2: under the limit */
	for (int k = 0; k < 50; k++)
		cr_assert_eq(step(m, k * P, &o), 0, "no event before 0.1 s (step %d)", k);
	cr_assert_eq(o.vel[0], 0.2);
	/* Step 50 is at t = 100 ms: time-out, first period of deceleration. */
	cr_assert_eq(step(m, 50 * P, &o), EV(RTL_MOTION_EV_TIMEOUT));
	cr_assert_eq(r.n, 1);
	cr_assert_eq(r.last.type, RTL_MOTION_EV_TIMEOUT);
	cr_assert_eq(r.last.time_ns, 100 * MS);
	cr_assert_eq(r.last.mode, RTL_MOTION_SPEED_CARTESIAN);
	cr_assert_eq(o.mode, RTL_MOTION_STOPPING);
	cr_assert_float_eq(o.vel[0], 0.2 - 2.5 * 0.002, EPS);
	cr_assert_float_eq(o.acc[0], -2.5, 1e-9);
	/* 0.2 / 2.5 = 0.08 s = 40 steps in all. */
	for (int k = 51; k < 89; k++) {
		cr_assert_eq(step(m, k * P, &o), 0);
		cr_assert_gt(o.vel[0], 0);
	}
	cr_assert_eq(step(m, 89 * P, &o), EV(RTL_MOTION_EV_STOPPED));
	cr_assert_eq(o.vel[0], 0.0);
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.events[RTL_MOTION_EV_TIMEOUT], 1);
	cr_assert_eq(st.events[RTL_MOTION_EV_STOPPED], 1);
	cr_assert_eq(st.limit_clamps, 0);
	rtl_motion_destroy(m);
}

Test(motion, commands_every_period_never_time_out_and_timeout_is_configurable)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 20 * MS, NULL);
	vec(v, 0.1, 0, 0, 0, 0, 0);
	for (int k = 0; k < 1000; k++) {
		rtl_motion_speedl(m, k * P, v, autos, 0);
		cr_assert_eq(step(m, k * P, &o), 0);
	}
	/* Last command at 1998 ms: 20 ms later is step 1009. */
	for (int k = 1000; k < 1009; k++)
		cr_assert_eq(step(m, k * P, &o), 0);
	cr_assert_eq(step(m, 1009 * P, &o) & EV(RTL_MOTION_EV_TIMEOUT), EV(RTL_MOTION_EV_TIMEOUT));
	/* No limits: the stop takes the one period. */
	cr_assert_eq(o.vel[0], 0.0);
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);
	rtl_motion_destroy(m);
}

/* ---- loss count ---------------------------------------------------------- */

Test(motion, loss_count_3_ends_the_stream_after_exactly_3_missing_periods)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6];

	m = setup(3, RTL_MOTION_DEFAULT_TIMEOUT_NS, &r);
	vec(v, 0.1, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	cr_assert_eq(step(m, 0, &o), 0);
	cr_assert_eq(step(m, 1 * P, &o), 0, "1 missing");
	cr_assert_eq(step(m, 2 * P, &o), 0, "2 missing");
	cr_assert_eq(step(m, 3 * P, &o) & EV(RTL_MOTION_EV_LOSS), EV(RTL_MOTION_EV_LOSS),
		     "3 missing");
	cr_assert_eq(r.type[0], RTL_MOTION_EV_LOSS);
	cr_assert_eq(o.vel[0], 0.0, "no limit: stopped at once");
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);

	/* A command resets the count. */
	rtl_motion_destroy(m);
	m = setup(3, RTL_MOTION_DEFAULT_TIMEOUT_NS, &r);
	rtl_motion_speedl(m, 0, v, autos, 0);
	step(m, 0, &o);
	step(m, 1 * P, &o);
	step(m, 2 * P, &o);
	rtl_motion_speedl(m, 3 * P, v, autos, 0);
	cr_assert_eq(step(m, 3 * P, &o), 0);
	cr_assert_eq(step(m, 4 * P, &o), 0);
	cr_assert_eq(step(m, 5 * P, &o), 0);
	cr_assert_eq(step(m, 6 * P, &o) & EV(RTL_MOTION_EV_LOSS), EV(RTL_MOTION_EV_LOSS));
	cr_assert_eq(r.n, 2, "loss, then stopped");
	cr_assert_eq(r.type[1], RTL_MOTION_EV_STOPPED);
	rtl_motion_destroy(m);
}

Test(motion, loss_count_applies_to_servo_streams_and_decelerates_at_the_limit)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double p[6], lim[6];

	m = setup(2, RTL_MOTION_DEFAULT_TIMEOUT_NS, NULL);
	vec(lim, 10, 10, 10, 10, 10, 10);
	rtl_motion_set_accj(m, lim);
	vec(p, 1, 0, 0, 0, 0, 0);
	/* The same target with the remaining time, every period: re-planning
	 * from the setpoint reproduces the one quintic of 1 s. */
	for (int k = 0; k < 250; k++) {
		rtl_motion_servoj(m, k * P, p, autos, autos, 1.0 - k * 0.002);
		cr_assert_eq(step(m, k * P, &o), 0, "step %d: events %#x", k, o.events);
	}
	cr_assert_eq(o.mode, RTL_MOTION_SERVO_JOINT);
	cr_assert_float_eq(o.pose[0], 0.5, 1e-9, "s = 0.5 of the 1 s quintic");
	cr_assert_float_eq(o.vel[0], 1.875, 1e-9);
	cr_assert_eq(step(m, 250 * P, &o), 0, "1 missing");
	double v = o.vel[0];
	cr_assert_eq(step(m, 251 * P, &o), EV(RTL_MOTION_EV_LOSS), "2 missing");
	cr_assert_eq(o.mode, RTL_MOTION_STOPPING);
	/* ~1.875 rad/s at 10 rad/s^2: the first period of deceleration */
	cr_assert_float_eq(o.vel[0], v - 10 * 0.002, 1e-9, "decelerating at the limit");
	cr_assert_float_eq(o.acc[0], -10.0, 1e-6);
	cr_assert_lt(o.pose[0], 0.6, "not jumping to the pose");
	rtl_motion_destroy(m);
}

Test(motion, loss_count_off_never_ends_the_stream)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double p[6];

	m = setup(RTL_MOTION_LOSS_OFF, RTL_MOTION_DEFAULT_TIMEOUT_NS, NULL);
	vec(p, 0.3, 0, 0, 0, 0, 0);
	/* Servo streams have no time-out: only the loss count could end it. */
	rtl_motion_servoj(m, 0, p, autos, autos, 0.02);
	for (int k = 0; k < 100000; k++)
		cr_assert_eq(step(m, k * P, &o), 0);
	cr_assert_eq(o.mode, RTL_MOTION_SERVO_JOINT);
	cr_assert_eq(o.pose[0], 0.3);
	cr_assert_eq(o.vel[0], 0.0);
	rtl_motion_destroy(m);
}

/* ---- limits -------------------------------------------------------------- */

Test(motion, velocity_limit_scales_the_target_keeping_its_direction)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, &r);
	cr_assert_eq(rtl_motion_set_velx(m, 0.25, A), 0);
	vec(v, 0.5, 0.25, 0, 1.0, 0, 0); /* rot limit 0.25 / 0.1 = 2.5 rad/s */
	rtl_motion_speedl(m, 0, v, autos, 0);
	cr_assert_eq(step(m, 0, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(o.mode, RTL_MOTION_SPEED_CARTESIAN, "the motion goes on");
	cr_assert_float_eq(o.vel[0], 0.25, EPS);
	cr_assert_float_eq(o.vel[1], 0.125, EPS);
	cr_assert_float_eq(o.vel[3], 0.5, EPS);
	cr_assert_eq(r.last.type, RTL_MOTION_EV_LIMIT);
	cr_assert_eq(r.last.limit, RTL_MOTION_LIMIT_VEL);
	cr_assert_eq(r.last.axis, 0);
	cr_assert_eq(r.last.value, 0.5);
	cr_assert_eq(r.last.max, 0.25);
	for (int k = 1; k < 100; k++)
		cr_assert_eq(step(m, k * P, &o), 0);
	cr_assert_float_eq(o.vel[0], 0.25, EPS);
	rtl_motion_destroy(m);
}

Test(motion, acceleration_limit_stretches_the_ramp)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, &r);
	cr_assert_eq(rtl_motion_set_accx(m, 2.5, A), 0);
	vec(v, 0.5, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0.1); /* asks for 5 m/s^2 */
	cr_assert_eq(step(m, 0, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(r.last.limit, RTL_MOTION_LIMIT_ACC);
	cr_assert_float_eq(r.last.value, 5.0, 1e-9);
	cr_assert_eq(r.last.max, 2.5);
	cr_assert_float_eq(o.acc[0], 2.5, 1e-9);
	/* 0.5 / 2.5 = 0.2 s = 100 steps */
	for (int k = 1; k < 99; k++)
		step(m, k * P, &o);
	cr_assert_lt(o.vel[0], 0.5);
	step(m, 99 * P, &o);
	cr_assert_eq(o.vel[0], 0.5);
	rtl_motion_destroy(m);
}

/* Issue a violating command at each time in @at (ms) and step through 3 s. */
static int limit_events(const int *at, int n, struct rtl_motion_counters *st)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double fast[6], slow[6];

	m = setup(RTL_MOTION_LOSS_OFF, 10000 * MS, &r);
	rtl_motion_set_velj(m, (double[6]){ 1, 1, 1, 1, 1, 1 });
	vec(fast, 2, 0, 0, 0, 0, 0);
	vec(slow, 0.5, 0, 0, 0, 0, 0);
	for (int k = 0, j = 0; k < 1500; k++) {
		int64_t t = k * P;

		if (j < n && t == at[j] * MS) {
			rtl_motion_speedj(m, t, fast, autos, 0);
			j++;
		} else if (k % 100 == 50) {
			rtl_motion_speedj(m, t, slow, autos, 0); /* within the limit */
		}
		step(m, t, &o);
	}
	rtl_motion_stats(m, st);
	cr_assert_eq(st->events[RTL_MOTION_EV_LIMIT], (uint64_t)r.n);
	rtl_motion_destroy(m);
	return r.n;
}

Test(motion, limit_event_is_raised_at_most_once_per_second)
{
	struct rtl_motion_counters st = { .size = sizeof(st) };

	cr_assert_eq(limit_events((const int[]){ 0, 500 }, 2, &st), 1, "0.5 s apart: one");
	cr_assert_eq(st.limit_clamps, 2, "but both clamps counted");
	cr_assert_eq(limit_events((const int[]){ 0, 1500 }, 2, &st), 2, "1.5 s apart: two");
	cr_assert_eq(limit_events((const int[]){ 100, 1100 }, 2, &st), 2, "1 s apart: two");
	cr_assert_eq(limit_events((const int[]){ 0, 400, 800, 1200, 1600, 2000, 2400 }, 7, &st), 3,
		     "at 0, 1.2 and 2.4 s");
	cr_assert_eq(st.limit_clamps, 7);
}

/* The limits live inside the opaque motion: read them back through what
 * they do to a command (the clamp event names the limit it applied). */
Test(motion, set_limits_validate_and_derive_rotation)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rtl_motion_counters st = { .size = sizeof(st) };
	struct rec r;
	double v[6], bad[6] = { 1, 1, 1, 1, 1, 0 };

	/* Velocity: AUTO rotation is trans / rot_radius_m. */
	m = setup(RTL_MOTION_LOSS_OFF, 10000 * MS, &r);
	cr_assert_eq(rtl_motion_set_velx(m, 0.5, A), 0);
	vec(v, 0, 0, 0, 10, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	cr_assert_eq(step(m, 0, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(r.last.limit, RTL_MOTION_LIMIT_VEL);
	cr_assert_eq(r.last.axis, 3);
	cr_assert_float_eq(r.last.max, 5.0, EPS, "0.5 / 0.1 m");
	cr_assert_float_eq(o.vel[3], 5.0, EPS);
	vec(v, 0, 0, 1, 0, 0, 0);
	rtl_motion_speedl(m, P, v, autos, 0);
	step(m, P, &o);
	cr_assert_eq(o.vel[2], 0.5, "translation: trans itself");
	cr_assert_eq(rtl_motion_set_velx(m, INFINITY, INFINITY), 0, "INFINITY lifts a limit");
	vec(v, 10, 0, 0, 10, 0, 0);
	rtl_motion_speedl(m, 2 * P, v, autos, 0);
	step(m, 2 * P, &o);
	cr_assert_eq(o.vel[0], 10.0);
	cr_assert_eq(o.vel[3], 10.0);
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.limit_clamps, 2, "no clamp once lifted");
	rtl_motion_destroy(m);

	/* Acceleration: trans on x, y, z and rot on rx, ry, rz. */
	m = setup(RTL_MOTION_LOSS_OFF, 10000 * MS, &r);
	cr_assert_eq(rtl_motion_set_accx(m, 2, 3), 0);
	vec(v, 1, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	cr_assert_eq(step(m, 0, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(r.last.limit, RTL_MOTION_LIMIT_ACC);
	cr_assert_eq(r.last.axis, 0);
	cr_assert_eq(r.last.max, 2.0);
	cr_assert_float_eq(o.acc[0], 2.0, 1e-9);
	for (int k = 1; k < 500; k++)
		step(m, k * P, &o);
	cr_assert_eq(o.vel[0], 1.0);
	/* 1 s later: the next limit event is due. */
	vec(v, 1, 0, 0, 0, 0, 6);
	rtl_motion_speedl(m, 500 * P, v, autos, 0);
	cr_assert_eq(step(m, 500 * P, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(r.last.axis, 5);
	cr_assert_eq(r.last.max, 3.0);
	cr_assert_float_eq(o.acc[5], 3.0, 1e-9);

	/* Validation. */
	cr_assert_eq(rtl_motion_set_velx(m, 0, A), -EINVAL);
	cr_assert_eq(rtl_motion_set_velx(m, -1, A), -EINVAL);
	cr_assert_eq(rtl_motion_set_velx(m, 1, -1), -EINVAL);
	cr_assert_eq(rtl_motion_set_velx(m, NAN, A), -EDOM);
	cr_assert_eq(rtl_motion_set_velx(NULL, 1, 1), -EINVAL);
	cr_assert_eq(rtl_motion_set_velj(m, bad), -EINVAL);
	bad[5] = NAN;
	cr_assert_eq(rtl_motion_set_accj(m, bad), -EDOM);
	cr_assert_eq(rtl_motion_set_accj(m, NULL), -EINVAL);

	/* A failed call changes nothing: the joints are still unlimited, so a
	 * joint stream reaches 100 rad/s in one period without a clamp. */
	vec(v, 100, 0, 0, 0, 0, 0);
	rtl_motion_speedj(m, 501 * P, v, autos, 0);
	step(m, 501 * P, &o);
	cr_assert_eq(o.mode, RTL_MOTION_SPEED_JOINT);
	cr_assert_eq(o.vel[0], 100.0);
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.limit_clamps, 2);
	rtl_motion_destroy(m);
}

/* ---- rejection ----------------------------------------------------------- */

Test(motion, non_finite_commands_are_rejected_and_change_nothing)
{
	struct rtl_motion *a, *b;
	struct rtl_motion_output oa, ob;
	struct rtl_motion_counters st = { .size = sizeof(st) };
	double v[6], bad[6];

	a = setup(4, RTL_MOTION_DEFAULT_TIMEOUT_NS, NULL);
	b = setup(4, RTL_MOTION_DEFAULT_TIMEOUT_NS, NULL);
	vec(v, 0.5, 0, 0, 0, 0, 0);
	rtl_motion_speedl(a, 0, v, autos, 0.1);
	rtl_motion_speedl(b, 0, v, autos, 0.1);
	step(a, 0, &oa);
	step(b, 0, &ob);

	/* b gets every kind of bad command between two steps. */
	vec(bad, 0.5, NAN, 0, 0, 0, 0);
	cr_assert_eq(rtl_motion_speedl(b, P, bad, autos, 0.1), -EDOM);
	cr_assert_eq(rtl_motion_speedj(b, P, v, (double[6]){ A, A, INFINITY, A, A, A }, 0.1),
		     -EDOM);
	cr_assert_eq(rtl_motion_speedl(b, P, v, autos, NAN), -EDOM);
	cr_assert_eq(rtl_motion_speedl(b, P, v, autos, INFINITY), -EDOM);
	vec(bad, 0, 0, -INFINITY, 0, 0, 0);
	cr_assert_eq(rtl_motion_servol(b, P, bad, autos, autos, 0.1), -EDOM);
	cr_assert_eq(rtl_motion_servoj(b, P, v, bad, autos, 0.1), -EDOM);
	cr_assert_eq(rtl_motion_servoj(b, P, v, autos, bad, 0.1), -EDOM);
	cr_assert_eq(rtl_motion_stop(b, P, NAN), -EDOM);
	cr_assert_eq(rtl_motion_stop(b, P, INFINITY), -EDOM);
	/* and the invalid ones */
	cr_assert_eq(rtl_motion_speedl(b, P, v, autos, -0.1), -EINVAL);
	cr_assert_eq(rtl_motion_speedl(b, P, v, zero, 0.1), -EINVAL, "acc 0 is not AUTO");
	cr_assert_eq(rtl_motion_speedl(b, P, v, (double[6]){ A, -1, A, A, A, A }, 0.1), -EINVAL);
	cr_assert_eq(rtl_motion_speedl(b, P, NULL, autos, 0.1), -EINVAL);
	cr_assert_eq(rtl_motion_servoj(b, P, v, autos, autos, 1e6), -EINVAL);
	cr_assert_eq(rtl_motion_stop(b, P, 0), -EINVAL);
	cr_assert_eq(rtl_motion_stop(b, P, -3), -EINVAL);
	cr_assert_eq(rtl_motion_speedl(NULL, P, v, autos, 0.1), -EINVAL);

	/* Same outputs as the untouched twin, loss count included. */
	for (int k = 1; k < 100; k++) {
		step(a, k * P, &oa);
		step(b, k * P, &ob);
		cr_assert_eq(oa.mode, ob.mode, "step %d", k);
		cr_assert_eq(oa.events, ob.events, "step %d", k);
		cr_assert_eq(memcmp(oa.vel, ob.vel, sizeof(oa.vel)), 0, "step %d", k);
		cr_assert_eq(memcmp(oa.pose, ob.pose, sizeof(oa.pose)), 0, "step %d", k);
	}
	rtl_motion_stats(b, &st);
	cr_assert_eq(st.rejected, 16);
	cr_assert_eq(st.commands, 1);
	cr_assert_eq(st.latched, 1);
	rtl_motion_destroy(a);
	rtl_motion_destroy(b);
}

/* ---- stop ---------------------------------------------------------------- */

Test(motion, stop_reaches_zero_in_v_over_dec_seconds)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, &r);
	vec(v, 1.0, 0, 0.5, 0, 0, 0);
	rtl_motion_speedj(m, 0, v, autos, 0);
	step(m, 0, &o);
	cr_assert_eq(rtl_motion_stop(m, P, 4.0), 0);
	/* 1.0 rad/s at 4 rad/s^2: 0.25 s = 125 steps; axis 2 in step. */
	for (int j = 0; j < 124; j++) {
		cr_assert_eq(step(m, (1 + j) * P, &o), 0);
		cr_assert_eq(o.mode, RTL_MOTION_STOPPING);
		cr_assert_float_eq(o.vel[0], 1.0 * (1 - (j + 1) / 125.0), EPS, "j %d", j);
		cr_assert_float_eq(o.vel[2], o.vel[0] / 2, EPS);
		cr_assert_float_eq(o.acc[0], -4.0, 1e-9);
	}
	cr_assert_float_eq(o.vel[0], 0.008, EPS);
	cr_assert_eq(step(m, 125 * P, &o), EV(RTL_MOTION_EV_STOPPED));
	cr_assert_eq(o.vel[0], 0.0);
	cr_assert_eq(o.vel[2], 0.0);
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);
	cr_assert_eq(r.n, 1);

	/* A stop when idle does nothing. */
	rtl_motion_stop(m, 130 * P, 4.0);
	cr_assert_eq(step(m, 130 * P, &o), 0);
	cr_assert_eq(o.mode, RTL_MOTION_IDLE);
	rtl_motion_destroy(m);
}

Test(motion, stop_auto_uses_the_acceleration_limits)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 1000 * MS, NULL);
	rtl_motion_set_accx(m, 1.0, A);
	vec(v, 0.1, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0.1);
	for (int k = 0; k < 50; k++)
		step(m, k * P, &o);
	rtl_motion_stop(m, 50 * P, A);
	/* 0.1 / 1.0 = 0.1 s = 50 steps */
	for (int k = 50; k < 99; k++)
		cr_assert_eq(step(m, k * P, &o), 0);
	cr_assert_eq(step(m, 99 * P, &o), EV(RTL_MOTION_EV_STOPPED));
	rtl_motion_destroy(m);
}

/* ---- servo --------------------------------------------------------------- */

Test(motion, servoj_interpolates_to_the_pose_over_target_time)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rtl_motion_state s = { .joint_pos = { 0.2, 1, 0, 0, 0, 0 } };
	double p[6];
	double prev = 0.2;

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(p, 1.2, 1, 0, 0, 0, 0);
	rtl_motion_servoj(m, 0, p, autos, autos, 0.1);
	for (int k = 0; k < 50; k++) {
		cr_assert_geq(rtl_motion_step(m, &o, k * P, &s), 0);
		cr_assert_eq(o.mode, RTL_MOTION_SERVO_JOINT);
		cr_assert_gt(o.pose[0], prev, "monotonic");
		prev = o.pose[0];
		cr_assert_float_eq(o.pose[1], 1.0, EPS, "axis at its target stays");
		if (k == 24) {
			/* s = 0.5 of the rest-to-rest quintic */
			cr_assert_float_eq(o.pose[0], 0.7, EPS);
			cr_assert_float_eq(o.vel[0], 1.875 * 1.0 / 0.1, 1e-9);
			cr_assert_float_eq(o.acc[0], 0.0, 1e-6);
		}
		if (k == 9) {
			double x = 0.2; /* 10 x^3 - 15 x^4 + 6 x^5 */

			cr_assert_float_eq(o.pose[0],
					   0.2 + 10 * pow(x, 3) - 15 * pow(x, 4) + 6 * pow(x, 5),
					   EPS);
		}
	}
	cr_assert_eq(o.pose[0], 1.2);
	cr_assert_eq(o.vel[0], 0.0);
	/* No newer command: hold the pose; no time-out for servo streams. */
	for (int k = 50; k < 500; k++)
		cr_assert_eq(rtl_motion_step(m, &o, k * P, &s), RTL_MOTION_SERVO_JOINT);
	cr_assert_eq(o.pose[0], 1.2);
	cr_assert_eq(o.events, 0);
	rtl_motion_destroy(m);
}

Test(motion, servol_at_or_below_one_period_jumps_to_the_pose)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double p[6], v[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	vec(p, 0.4, 0.1, 0.3, 0, 3.1, 0);
	vec(v, 0.01, A, A, A, A, A);
	rtl_motion_servol(m, 0, p, v, autos, 0.002);
	step(m, 0, &o);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(o.pose[i], p[i]);
	cr_assert_eq(o.vel[0], 0.01, "the end velocity asked for");
	cr_assert_eq(o.vel[1], 0.0, "AUTO end velocity: at rest");
	cr_assert_eq(o.mode, RTL_MOTION_STOPPING, "ended moving: decelerate from next period");
	cr_assert_eq(step(m, P, &o), EV(RTL_MOTION_EV_STOPPED), "no limit: at once");

	/* Ending at rest, the servo mode stays and holds the pose. */
	rtl_motion_destroy(m);
	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	rtl_motion_servol(m, 0, p, autos, autos, 0);
	step(m, 0, &o);
	cr_assert_eq(o.mode, RTL_MOTION_SERVO_CARTESIAN);
	cr_assert_eq(o.pose[4], 3.1);
	rtl_motion_destroy(m);
}

Test(motion, servo_segment_ending_with_velocity_decelerates_at_the_limit)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double p[6], v[6], lim[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, &r);
	vec(p, 0.1, 0, 0, 0, 0, 0);
	vec(v, 1.0, 0, 0, 0, 0, 0);
	rtl_motion_servoj(m, 0, p, v, autos, 0.1);
	step(m, 0, &o);
	/* Limits apply to later commands, and to the stop at the segment end. */
	vec(lim, 10, 10, 10, 10, 10, 10);
	rtl_motion_set_accj(m, lim);
	for (int k = 1; k < 50; k++)
		step(m, k * P, &o);
	cr_assert_eq(o.pose[0], 0.1);
	cr_assert_eq(o.vel[0], 1.0);
	cr_assert_eq(o.mode, RTL_MOTION_STOPPING);
	/* 1.0 / 10 = 0.1 s = 50 steps */
	step(m, 50 * P, &o);
	cr_assert_float_eq(o.vel[0], 0.98, EPS);
	for (int k = 51; k < 99; k++)
		cr_assert_eq(step(m, k * P, &o), 0);
	cr_assert_eq(step(m, 99 * P, &o), EV(RTL_MOTION_EV_STOPPED));
	cr_assert_float_eq(o.pose[0], 0.1 + 1.0 * 0.1 / 2, 1e-9, "v^2 / 2a further");
	cr_assert_eq(r.n, 1);
	rtl_motion_destroy(m);
}

Test(motion, consecutive_servo_commands_join_without_jumps)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	double p[6], pv = 0, pp = 0;

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, NULL);
	/* A ramp of waypoints, one per period, each 20 periods ahead. */
	for (int k = 0; k < 300; k++) {
		vec(p, 0.001 * k, 0, 0, 0, 0, 0);
		rtl_motion_servoj(m, k * P, p, autos, autos, 0.04);
		step(m, k * P, &o);
		cr_assert_lt(fabs(o.pose[0] - pp), 0.002, "no position jump at step %d", k);
		cr_assert_lt(fabs(o.vel[0] - pv), 0.2, "no velocity jump at step %d", k);
		pp = o.pose[0];
		pv = o.vel[0];
	}
	cr_assert_float_eq(o.vel[0], 0.5, 0.05, "follows 0.5 rad/s");
	rtl_motion_destroy(m);
}

Test(motion, servo_limits_stretch_the_segment)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double p[6], lim[6];

	m = setup(RTL_MOTION_LOSS_OFF, 100 * MS, &r);
	vec(lim, 1, 1, 1, 1, 1, 1);
	rtl_motion_set_velj(m, lim);
	vec(p, 1, 0, 0, 0, 0, 0);
	/* Peak 1.875 * 1 / 0.1 = 18.75 rad/s > 1: stretched to 1.875 s. */
	rtl_motion_servoj(m, 0, p, autos, autos, 0.1);
	cr_assert_eq(step(m, 0, &o), EV(RTL_MOTION_EV_LIMIT));
	cr_assert_eq(r.last.limit, RTL_MOTION_LIMIT_VEL);
	cr_assert_float_eq(r.last.value, 18.75, 1e-9);
	double peak = 0;
	int k;
	for (k = 1; o.pose[0] < 1.0; k++) {
		step(m, k * P, &o);
		peak = fmax(peak, o.vel[0]);
	}
	cr_assert_eq(k, 938, "ceil(1.875 s / 2 ms) steps, got %d", k);
	cr_assert_leq(peak, 1.0 + 1e-9);
	cr_assert_gt(peak, 0.99);
	rtl_motion_destroy(m);
}

/* ---- events, counters, units, RT safety ---------------------------------- */

Test(motion, commands_never_call_back_and_the_newest_unstepped_command_wins)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rtl_motion_counters st = { .size = sizeof(st) };
	struct rec r;
	double v[6];

	m = setup(1, RTL_MOTION_DEFAULT_TIMEOUT_NS, &r);
	rtl_motion_set_velx(m, 0.1, A);
	vec(v, 1, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	vec(v, 0.05, 0, 0, 0, 0, 0);
	rtl_motion_speedl(m, 0, v, autos, 0);
	cr_assert_eq(r.n, 0);
	cr_assert_eq(step(m, 0, &o), 0, "only the newest, in-limit command is latched");
	cr_assert_eq(o.vel[0], 0.05);
	rtl_motion_stats(m, &st);
	cr_assert_eq(st.commands, 2);
	cr_assert_eq(st.latched, 1);
	cr_assert_eq(st.steps, 1);
	cr_assert_str_eq(rtl_motion_mode_name(RTL_MOTION_SERVO_JOINT), "servo-joint");
	cr_assert_str_eq(rtl_motion_event_name(RTL_MOTION_EV_LOSS), "loss");
	cr_assert_str_eq(rtl_motion_event_name((enum rtl_motion_event)9), "?");
	rtl_motion_destroy(m);
}

Test(motion, unit_conversion_for_mm_and_degree_backends)
{
	double in[6], out[6], back[6];

	vec(in, 1, 0.5, -0.002, M_PI, M_PI / 2, A);
	rtl_motion_to_mm_deg(out, in, RTL_MOTION_CARTESIAN);
	cr_assert_float_eq(out[0], 1000, EPS);
	cr_assert_float_eq(out[1], 500, EPS);
	cr_assert_float_eq(out[2], -2, EPS);
	cr_assert_float_eq(out[3], 180, EPS);
	cr_assert_float_eq(out[4], 90, EPS);
	cr_assert_eq(out[5], A, "AUTO passes through");
	rtl_motion_from_mm_deg(back, out, RTL_MOTION_CARTESIAN);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(back[i], in[i], EPS);

	vec(in, 1, M_PI, 0, 0, 0, A);
	rtl_motion_to_mm_deg(in, in, RTL_MOTION_JOINT); /* in place */
	cr_assert_float_eq(in[0], 180 / M_PI, EPS, "joints: all degrees");
	cr_assert_float_eq(in[1], 180, EPS);
	cr_assert_eq(in[5], A);
	cr_assert_float_eq(rtl_motion_rad_to_deg(M_PI), 180, EPS);
	cr_assert_float_eq(rtl_motion_deg_to_rad(90), M_PI / 2, EPS);
	cr_assert_eq(rtl_motion_m_to_mm(0.25), 250);
	cr_assert_eq(rtl_motion_mm_to_m(250), 0.25);
}

Test(motion, step_and_commands_do_not_allocate)
{
	struct rtl_motion *m;
	struct rtl_motion_output o;
	struct rec r;
	double v[6], p[6];
	long allocs;

	m = setup(3, RTL_MOTION_DEFAULT_TIMEOUT_NS, &r);
	rtl_motion_set_accx(m, 1, A);
	vec(v, 0.5, 0.1, 0, 0, 0, 0);
	vec(p, 0.1, 0.1, 0, 0, 0, 0);

	/* Positive control: the counter must see a malloc. */
	cr_assert(rtl_test_alloc_selftest(), "malloc counting is not working");

	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int k = 0; k < 2000; k++) {
		int64_t t = k * P;

		if (k % 400 < 200)
			rtl_motion_speedl(m, t, v, autos, 0.05);
		else if (k % 400 < 300)
			rtl_motion_servoj(m, t, p, autos, autos, 0.04);
		else if (k % 400 == 300)
			rtl_motion_stop(m, t, A);
		rtl_motion_step(m, &o, t, NULL);
	}
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_eq(allocs, 0, "%ld allocations in the step path", allocs);
	cr_assert_gt(r.n, 0, "the run raised events (and took those paths)");
	rtl_motion_destroy(m);
}
