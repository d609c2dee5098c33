// SPDX-License-Identifier: MIT
/*
 * rtde-sim's UDP mode, the pure pieces of Doosan's RT session rules
 * (apps/rtde-sim/udp.h): the session's limits and how a LIMITS datagram
 * merges into them, the clamp of speedj / speedl commands and its alarm
 * text, the loss count, the alarm rate. No threads, no sockets, no clock:
 * the socket side is test-sim-udp-alarms.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <rtloop/time.h>
#include <rtloop/udp.h>

#include "robot.h"
#include "udp.h"

#define RAD (M_PI / 180.0)

static struct sim_robot robot_at_rest(void)
{
	struct sim_robot_config cfg;
	struct sim_robot r;

	sim_robot_config_default(&cfg);
	cfg.period_ns = RTL_NS_PER_MS;
	cr_assert_eq(sim_robot_init(&r, &cfg), 0);
	return r;
}

static struct rtl_udp_cmd speedj(double v0, double a0, double target_time)
{
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDJ, .target_time = target_time };

	c.vel[0] = v0;
	c.acc[0] = a0;
	return c;
}

/* ---- limits ----------------------------------------------------------------------------- */

Test(sim_udp_rules, a_limits_value_of_0_keeps_the_previous_one)
{
	struct rtl_udp_limits cur = { 0 }, in = { 0 };

	in.velj[2] = 30;
	in.accx[0] = 800;
	in.accx[1] = RTL_UDP_AUTO;
	sim_udp_limits_merge(&cur, &in);
	cr_assert_eq(cur.velj[2], 30);
	cr_assert_eq(cur.velj[1], 0, "never set: no limit");
	cr_assert_eq(cur.accx[0], 800);
	cr_assert_eq(cur.accx[1], RTL_UDP_AUTO, "AUTO is kept, to stay derived");

	memset(&in, 0, sizeof(in));
	in.velj[1] = 45;
	in.accx[0] = 400;
	sim_udp_limits_merge(&cur, &in);
	cr_assert_eq(cur.velj[2], 30, "0 keeps it");
	cr_assert_eq(cur.velj[1], 45);
	cr_assert_eq(cur.accx[0], 400);
	cr_assert_eq(cur.accx[1], RTL_UDP_AUTO, "still derived: now from 400");
}

Test(sim_udp_rules, no_limits_clamp_nothing)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits none = { 0 };
	struct rtl_udp_cmd c = speedj(1e4, 1e6, 0.01), orig = c;
	struct sim_udp_clamp cl;

	cr_assert_not(sim_udp_clamp(&none, &r, &c, &cl));
	cr_assert_eq(memcmp(&c, &orig, sizeof(c)), 0);
	cr_assert_not(cl.vel);
	cr_assert_not(cl.acc);
}

Test(sim_udp_rules, speedj_velocity_and_acceleration_above_the_limits_are_clamped)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c = speedj(20, 100, 0.01);
	struct sim_udp_clamp cl;
	char text[RTL_UDP_ALARM_TEXT];
	static const double acc[6] = { 100, 100, 900, 100, 100, 501 };

	for (int i = 0; i < 6; i++) {
		l.velj[i] = 30;
		l.accj[i] = 500;
	}
	memcpy(c.acc, acc, sizeof(acc)); /* explicit: none derived */
	c.vel[1] = -45;
	c.vel[4] = 60;
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert_eq(c.vel[0], 20, "below the limit: as asked");
	cr_assert_eq(c.vel[1], -30, "to -limit");
	cr_assert_eq(c.vel[4], 30);
	cr_assert_eq(c.acc[0], 100);
	cr_assert_eq(c.acc[2], 500);
	cr_assert_eq(c.acc[5], 500);
	cr_assert(cl.vel);
	cr_assert_eq(cl.vel_axis, 1, "the first clamped axis is named");
	cr_assert_eq(cl.vel_asked, -45);
	cr_assert_eq(cl.vel_limit, 30);
	cr_assert(cl.acc);
	cr_assert_eq(cl.acc_axis, 2);
	cr_assert_eq(cl.acc_asked, 900);
	cr_assert_not(cl.acc_auto);
	cr_assert_str_eq(sim_udp_clamp_text(RTL_UDP_MODE_SPEEDJ, &cl, true, text, sizeof(text)),
			 "speedj: acc[2] = 900 deg/s^2 is above the limit 500 deg/s^2: clamped");
	cr_assert_str_eq(sim_udp_clamp_text(RTL_UDP_MODE_SPEEDJ, &cl, false, text, sizeof(text)),
			 "speedj: vel[1] = -45 deg/s is above the limit 30 deg/s: clamped");
}

Test(sim_udp_rules, an_auto_acceleration_is_clamped_by_its_derived_value)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c = speedj(90, RTL_UDP_AUTO, 0.01);
	struct sim_udp_clamp cl;
	char text[RTL_UDP_ALARM_TEXT];

	l.velj[0] = 30;
	l.accj[0] = 500;
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	/* From rest to the clamped 30 deg/s in 0.01 s: 3000 deg/s^2. */
	cr_assert_eq(c.vel[0], 30);
	cr_assert_eq(c.acc[0], 500);
	cr_assert_float_eq(cl.acc_asked, 3000, 1e-9);
	cr_assert(cl.acc_auto);
	cr_assert_str_eq(
		sim_udp_clamp_text(RTL_UDP_MODE_SPEEDJ, &cl, true, text, sizeof(text)),
		"speedj: acc[0] = 3000 deg/s^2 (AUTO) is above the limit 500 deg/s^2: clamped");

	/* Derived below the limit: 30 deg/s over 0.1 s is 300 deg/s^2. */
	c = speedj(30, RTL_UDP_AUTO, 0.1);
	cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert_eq(c.acc[0], RTL_UDP_AUTO);
	/* target_time 0 derives nothing (the plant's default ramp). */
	c = speedj(30, RTL_UDP_AUTO, 0);
	cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl));
}

Test(sim_udp_rules, the_derived_acceleration_counts_from_the_robots_target_speed)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c = speedj(28, RTL_UDP_AUTO, 0.01);
	struct sim_udp_clamp cl;

	l.accj[0] = 500;
	r.target_qd[0] = 25 * RAD;
	/* 3 deg/s in 0.01 s: 300 deg/s^2, below. */
	cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl));
	r.target_qd[0] = 20 * RAD;
	/* 8 deg/s in 0.01 s: 800 deg/s^2, above. */
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert_float_eq(cl.acc_asked, 800, 1e-6);
}

Test(sim_udp_rules, speedl_limits_split_translation_and_rotation)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDL, .target_time = 0.01 };
	struct sim_udp_clamp cl;
	char text[RTL_UDP_ALARM_TEXT];
	static const double vel[6] = { 200, -50, 0, 0, 0, -150 };
	static const double want[6] = { 100, -50, 0, 0, 0, -100 };

	l.velx[0] = 100;
	l.velx[1] = RTL_UDP_AUTO; /* the rotations: 100 deg/s too */
	l.accx[0] = 1000;
	l.accx[1] = 200;
	memcpy(c.vel, vel, sizeof(vel));
	c.acc[0] = c.acc[1] = c.acc[2] = 500;
	c.acc[3] = 300;
	c.acc[4] = c.acc[5] = 100;
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	for (int i = 0; i < 6; i++)
		cr_assert_eq(c.vel[i], want[i], "vel[%d]", i);
	cr_assert_eq(c.acc[0], 500, "mm/s^2, below 1000");
	cr_assert_eq(c.acc[3], 200, "deg/s^2, above 200");
	cr_assert_str_eq(sim_udp_clamp_text(RTL_UDP_MODE_SPEEDL, &cl, false, text, sizeof(text)),
			 "speedl: vel[0] = 200 mm/s is above the limit 100 mm/s: clamped");
	cr_assert_str_eq(sim_udp_clamp_text(RTL_UDP_MODE_SPEEDL, &cl, true, text, sizeof(text)),
			 "speedl: acc[3] = 300 deg/s^2 is above the limit 200 deg/s^2: clamped");

	/* Only a rotation above: named in deg/s. */
	memset(c.vel, 0, sizeof(c.vel));
	c.vel[5] = 120;
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert_str_eq(sim_udp_clamp_text(RTL_UDP_MODE_SPEEDL, &cl, false, text, sizeof(text)),
			 "speedl: vel[5] = 120 deg/s is above the limit 100 deg/s: clamped");
}

Test(sim_udp_rules, other_modes_and_non_finite_values_are_left_alone)
{
	static const enum rtl_udp_mode modes[] = { RTL_UDP_MODE_NONE, RTL_UDP_MODE_SERVOJ,
						   RTL_UDP_MODE_SERVOL, RTL_UDP_MODE_STOP };
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c, orig;
	struct sim_udp_clamp cl;

	for (int i = 0; i < 6; i++) {
		l.velj[i] = l.accj[i] = 1;
		l.velx[i % 2] = l.accx[i % 2] = 1;
	}
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		c = speedj(500, 5000, 0.01);
		c.mode = modes[m];
		orig = c;
		cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl), "mode %d", modes[m]);
		cr_assert_eq(memcmp(&c, &orig, sizeof(c)), 0);
	}
	/* The robot refuses these; a clamp must not make them acceptable. */
	c = speedj(INFINITY, INFINITY, 0.01);
	cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert(isinf(c.vel[0]) && isinf(c.acc[0]));
	c = speedj(NAN, 0.5, 0.01);
	cr_assert_not(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert(isnan(c.vel[0]));
}

Test(sim_udp_rules, the_robot_runs_the_clamped_command)
{
	struct sim_robot r = robot_at_rest();
	struct rtl_udp_limits l = { 0 };
	struct rtl_udp_cmd c = speedj(90, 900, 0.01);
	struct sim_udp_clamp cl;
	int64_t now = RTL_NS_PER_SEC;

	l.velj[0] = 30;
	l.accj[0] = 500;
	cr_assert(sim_udp_clamp(&l, &r, &c, &cl));
	cr_assert_eq(sim_udp_apply(&r, &c, 1, now), 0);
	sim_robot_step(&r, now);
	cr_assert_float_eq(r.target_qdd[0], 500 * RAD, 1e-9, "ramps at the acceleration limit");
	for (int k = 0; k < 200; k++)
		sim_robot_step(&r, now);
	cr_assert_float_eq(r.target_qd[0], 30 * RAD, 1e-12, "runs at the velocity limit");
}

/* ---- loss count ------------------------------------------------------------------------ */

Test(sim_udp_rules, the_loss_count_ends_after_more_than_n_misses_in_a_row)
{
	struct sim_udp_loss l = { .count = 3 };

	for (int k = 0; k < 100; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, false), "no command yet: nothing is lost");
	cr_assert_eq(l.misses, 0);
	sim_udp_loss_command(&l);
	cr_assert_not(sim_udp_loss_cycle(&l, false), "a command since the last cycle");
	for (int k = 1; k <= 3; k++) {
		cr_assert_not(sim_udp_loss_cycle(&l, false), "miss %d", k);
		cr_assert_eq(l.misses, (uint32_t)k);
	}
	/* A command resets the run. */
	sim_udp_loss_command(&l);
	sim_udp_loss_command(&l);
	cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert_eq(l.misses, 0);
	for (int k = 1; k <= 3; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, false), "miss %d", k);
	cr_assert(sim_udp_loss_cycle(&l, false), "the 4th miss in a row is more than 3");
	cr_assert_eq(l.misses, 4);
}

Test(sim_udp_rules, late_cycles_of_a_catch_up_neither_count_nor_reset)
{
	struct sim_udp_loss l = { .count = 3 };

	sim_udp_loss_command(&l);
	cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert_eq(l.misses, 1);
	/* The host stalled the simulator for 50 periods: 49 late cycles. */
	for (int k = 0; k < 49; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, true), "late cycle %d", k);
	cr_assert_eq(l.misses, 1, "not the client's fault");
	/* A command read in that wake still counts for the newest cycle. */
	sim_udp_loss_command(&l);
	for (int k = 0; k < 10; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, true));
	cr_assert(l.fresh, "kept for the newest cycle");
	cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert_eq(l.misses, 0);
	for (int k = 1; k <= 3; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert(sim_udp_loss_cycle(&l, false));
}

Test(sim_udp_rules, a_loss_count_of_0_never_ends)
{
	struct sim_udp_loss l = { .count = 0 };

	sim_udp_loss_command(&l);
	for (int k = 0; k < 100000; k++)
		cr_assert_not(sim_udp_loss_cycle(&l, false));
	cr_assert_eq(l.misses, 99999, "counted all the same");
}

/* ---- alarm rate ------------------------------------------------------------------------- */

Test(sim_udp_rules, the_alarm_rate_lets_one_through_per_interval)
{
	struct sim_udp_rate r = { 0 };
	int64_t s = RTL_NS_PER_SEC;

	cr_assert(sim_udp_rate_ok(&r, 0, s), "the first one, even at time 0");
	cr_assert_not(sim_udp_rate_ok(&r, 1, s));
	cr_assert_not(sim_udp_rate_ok(&r, s - 1, s));
	cr_assert(sim_udp_rate_ok(&r, s, s), "one interval later");
	cr_assert_not(sim_udp_rate_ok(&r, s + s / 2, s));
	cr_assert(sim_udp_rate_ok(&r, 5 * s, s));
	cr_assert_eq(r.last_ns, 5 * s);
}
