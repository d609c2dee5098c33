// SPDX-License-Identifier: MIT
/*
 * The simulated robot's request executor (apps/rtde-sim/requests.c), on a
 * fake clock: moves take the time of their profile and end on their
 * target at rest; a repeated identity is taken once; refusals carry the
 * controller's reasons; a stream, the watchdog, a stop and a newer move
 * interrupt a move; payload, TCP, sensor zero and kinematics answer at
 * once.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>

#include "kin.h"
#include "moves.h"
#include "robot.h"

#define PERIOD 2000000 /* ns: 500 Hz */
#define DT 0.002

struct rig {
	struct sim_robot r;
	struct sim_robot_cmd c; /* the stream: IDLE with a fresh heartbeat */
	int64_t now;
	int32_t id;
};

static void rig_init(struct rig *g)
{
	struct sim_robot_config cfg;

	sim_robot_config_default(&cfg);
	memset(g, 0, sizeof(*g));
	g->now = 1000000000;
	g->id = 100;
	cr_assert_eq(sim_robot_init(&g->r, &cfg), 0);
}

/* One control cycle: a new heartbeat (the keep-alive), then a step. */
static void cycle(struct rig *g)
{
	g->c.seq++;
	cr_assert_eq(sim_robot_command(&g->r, &g->c, g->now), 0);
	g->now += PERIOD;
	sim_robot_step(&g->r, g->now);
}

/* Send a request of @kind with @arg (13 values, may be NULL) and @flags;
 * returns its identity. */
static int32_t request(struct rig *g, int32_t kind, const double *arg, uint32_t flags)
{
	struct sim_robot_req q = { .id = ++g->id, .kind = kind, .flags = flags };

	if (arg)
		memcpy(q.arg, arg, sizeof(q.arg));
	cr_assert_eq(sim_robot_request(&g->r, &q, g->now), 0);
	return q.id;
}

/* Cycles until request @id is DONE or FAILED (at most @max); returns how
 * many it took. */
static int run_until_over(struct rig *g, int32_t id, int max)
{
	for (int n = 1; n <= max; n++) {
		cycle(g);
		if (g->r.req_id == id && (g->r.req_state == RTL_RTDE_REQ_STATE_DONE ||
					  g->r.req_state == RTL_RTDE_REQ_STATE_FAILED))
			return n;
	}
	return -1;
}

/* The profile's duration for distance @d at speed @v and acceleration @a. */
static double profile_time(double d, double v, double a)
{
	return d >= v * v / a ? d / v + v / a : 2 * sqrt(d / a);
}

Test(sim_requests, move_j_takes_the_profile_time_and_ends_on_target_at_rest)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;
	int n;

	rig_init(&g);
	memcpy(arg, g.r.target_q, sizeof(double) * 6);
	arg[0] += 1.0; /* the leading joint: 1 rad */
	arg[3] -= 0.4;
	arg[6] = 0.8; /* rad/s */
	arg[7] = 2.0; /* rad/s^2 */
	id = request(&g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	cr_assert_eq(g.r.req_id, id);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_RUNNING);
	n = run_until_over(&g, id, 5000);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE, "reason %d", g.r.req_reason);
	cr_assert_leq(fabs(n * DT - profile_time(1.0, 0.8, 2.0)), DT + 1e-9, "%d cycles", n);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(g.r.target_q[i], arg[i], 1e-12, "joint %d", i);
	cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r), "at rest after the move");
	cr_assert_eq(g.r.moves_done, 1);
	cr_assert_eq(g.r.stops, 0, "a move's own end is no stop");
}

Test(sim_requests, a_repeated_identity_is_taken_once)
{
	struct rig g;
	struct sim_robot_req q = { .id = 7, .kind = RTL_RTDE_REQ_SET_PAYLOAD, .arg = { 2.5 } };

	rig_init(&g);
	cr_assert_eq(sim_robot_request(&g.r, &q, g.now), 0);
	q.arg[0] = 4.0; /* the same identity: a resent package, not a request */
	cr_assert_eq(sim_robot_request(&g.r, &q, g.now), 1);
	cr_assert_float_eq(g.r.payload, 2.5, 1e-12);
	cr_assert_eq(g.r.requests, 1);
	q.id = 0;
	cr_assert_eq(sim_robot_request(&g.r, &q, g.now), 1, "identity 0 is no request");
}

Test(sim_requests, move_l_runs_the_tcp_on_a_straight_line)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, p0[3], worst = 0;
	int32_t id;
	int n = 0;

	rig_init(&g);
	memcpy(arg, g.r.target_TCP_pose, sizeof(double) * 6);
	memcpy(p0, arg, sizeof(p0));
	arg[2] -= 0.2; /* 0.2 m down */
	arg[6] = 0.1;
	arg[7] = 0.5;
	id = request(&g, RTL_RTDE_REQ_MOVE_L, arg, 0);
	while (!(g.r.req_id == id && g.r.req_state == RTL_RTDE_REQ_STATE_DONE) && n < 5000) {
		double *p = g.r.target_TCP_pose;

		cycle(&g);
		n++;
		worst = fmax(worst, hypot(p[0] - p0[0], p[1] - p0[1]));
	}
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE, "reason %d", g.r.req_reason);
	cr_assert_leq(fabs(n * DT - profile_time(0.2, 0.1, 0.5)), DT + 1e-9, "%d cycles", n);
	cr_assert_float_eq(g.r.target_TCP_pose[2], arg[2], 1e-5);
	cr_assert_lt(worst, 1e-4, "off the line by %g m", worst);
}

Test(sim_requests, targets_the_controller_would_refuse_are_refused_with_the_reason)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };

	rig_init(&g);
	memcpy(arg, g.r.target_q, sizeof(double) * 6);
	arg[2] = 4.0; /* the elbow past +-pi */
	request(&g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_FAILED);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_JOINT_LIMIT);

	memset(arg, 0, sizeof(arg));
	arg[0] = 2.0; /* 2 m away: out of reach */
	request(&g, RTL_RTDE_REQ_MOVE_L, arg, 0);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_UNREACHABLE);
	request(&g, RTL_RTDE_REQ_INVERSE_KIN, arg, 0);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_NO_SOLUTION);

	arg[0] = NAN;
	request(&g, RTL_RTDE_REQ_SET_TCP, arg, 0);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_BAD_ARGUMENT);
	request(&g, 99, NULL, 0);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_UNKNOWN_KIND);
	cr_assert_eq(g.r.requests_failed, 5);
	cr_assert_not(g.r.move_on, "nothing moves after a refusal");
}

/* Start a 1.5 rad move of the base and run @n cycles into it. */
static int32_t start_long_move(struct rig *g, int n)
{
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;

	memcpy(arg, g->r.target_q, sizeof(double) * 6);
	arg[0] += 1.5;
	arg[6] = 1.0;
	arg[7] = 1.4;
	id = request(g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	for (int i = 0; i < n; i++)
		cycle(g);
	cr_assert(g->r.move_on);
	return id;
}

Test(sim_requests, a_stream_interrupts_a_move)
{
	struct rig g;
	int32_t id;

	rig_init(&g);
	id = start_long_move(&g, 200);
	g.c.mode = RTL_RTDE_CMD_STOP; /* e.g. the safe package at exit */
	cycle(&g);
	cr_assert_eq(g.r.req_id, id);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_FAILED);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_INTERRUPTED);
	for (int i = 0; i < 1000 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r), "the stop brings the arm to rest");
}

Test(sim_requests, stop_move_brakes_on_the_path_and_ends_at_rest)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, q0;
	int32_t stop;
	int n;

	rig_init(&g);
	q0 = g.r.target_q[0];
	start_long_move(&g, 300); /* cruising at 1 rad/s */
	arg[7] = 4.0;
	stop = request(&g, RTL_RTDE_REQ_STOP_MOVE, arg, 0);
	n = run_until_over(&g, stop, 2000);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE);
	cr_assert_leq(n * DT, 1.0 / 4.0 + 2 * DT, "braked in %d cycles", n);
	cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));
	cr_assert_lt(g.r.target_q[0], q0 + 1.5 - 0.1, "stopped short of the target");
	for (int i = 1; i < 6; i++)
		cr_assert_float_eq(g.r.target_q[i], g.r.cfg.q0[i], 1e-9, "on the path: joint %d",
				   i);
}

Test(sim_requests, a_newer_move_takes_over_from_rest)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t first, second;

	rig_init(&g);
	first = start_long_move(&g, 200);
	memcpy(arg, g.r.cfg.q0, sizeof(double) * 6);
	arg[1] -= 0.3;
	second = request(&g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	cr_assert_neq(first, second);
	cr_assert_eq(g.r.req_id, second, "the answer is the newer one's: the first is over");
	cr_assert_eq(run_until_over(&g, second, 10000) > 0, true);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(g.r.target_q[i], arg[i], 1e-12, "joint %d", i);
}

Test(sim_requests, the_watchdog_ends_a_move_without_heartbeat)
{
	struct rig g;
	int32_t id;

	rig_init(&g);
	id = start_long_move(&g, 50);
	/* no command package: the heartbeat stops */
	for (int i = 0; i < 100; i++) {
		g.now += PERIOD;
		sim_robot_step(&g.r, g.now);
	}
	cr_assert_eq(g.r.req_id, id);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_FAILED);
	cr_assert_eq(g.r.req_reason, RTL_RTDE_REQ_WATCHDOG);
	cr_assert_eq(g.r.watchdog_trips, 1);
}

Test(sim_requests, kinematics_answer_with_the_robot_model)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, q[6] = { 0.3, -1.2, 1.4, -1.6, -1.5, 0.2 };
	double pose[6];

	rig_init(&g);
	memcpy(arg, q, sizeof(q));
	request(&g, RTL_RTDE_REQ_FORWARD_KIN, arg, 0);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE);
	sim_robot_fk(q, g.r.tcp_offset, pose);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(g.r.req_result[i], pose[i], 1e-12);

	memcpy(arg, pose, sizeof(pose));
	memcpy(arg + 6, q, sizeof(q));
	request(&g, RTL_RTDE_REQ_INVERSE_KIN, arg, RTL_RTDE_REQ_FLAG_NEAR);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE, "reason %d", g.r.req_reason);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(g.r.req_result[i], q[i], 1e-7, "joint %d", i);
}

Test(sim_requests, payload_tcp_and_the_zeroed_sensor)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, p0[3];

	rig_init(&g);
	cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_force[2], 0, 1e-9, "the mounted payload is compensated");
	/* told 0 kg while 1 kg hangs there: the sensor reads its weight */
	arg[0] = 0;
	request(&g, RTL_RTDE_REQ_SET_PAYLOAD, arg, 0);
	cycle(&g);
	cr_assert_float_eq(g.r.payload, 0, 1e-12);
	cr_assert_lt(g.r.actual_TCP_force[2], -9.0, "reads %g N", g.r.actual_TCP_force[2]);
	request(&g, RTL_RTDE_REQ_ZERO_FT_SENSOR, NULL, 0);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE);
	cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_force[2], 0, 1e-9, "zeroed at the current load");

	memcpy(p0, g.r.actual_TCP_pose, sizeof(p0));
	memset(arg, 0, sizeof(arg));
	arg[2] = 0.1; /* 10 cm along the flange's z */
	request(&g, RTL_RTDE_REQ_SET_TCP, arg, 0);
	cycle(&g);
	cr_assert_float_eq(g.r.tcp_offset[2], 0.1, 1e-12);
	cr_assert_float_eq(
		hypot(hypot(g.r.actual_TCP_pose[0] - p0[0], g.r.actual_TCP_pose[1] - p0[1]),
		      g.r.actual_TCP_pose[2] - p0[2]),
		0.1, 1e-9, "the TCP moved by its offset");
}

Test(sim_requests, a_path_runs_its_waypoints_without_stopping)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, min_speed = 1e9;
	int32_t run;
	int n = 0;

	rig_init(&g);
	memcpy(arg, g.r.target_q, sizeof(double) * 6);
	arg[0] += 0.5;
	arg[6] = 1.0;
	arg[7] = 2.0;
	arg[8] = 0.2; /* blend */
	request(&g, RTL_RTDE_REQ_PATH_ADD, arg, 0);
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_ACCEPTED);
	arg[0] += 0.5;
	run = request(&g, RTL_RTDE_REQ_MOVE_J, arg, RTL_RTDE_REQ_FLAG_PATH);
	while (!(g.r.req_id == run && g.r.req_state == RTL_RTDE_REQ_STATE_DONE) && n < 10000) {
		cycle(&g);
		n++;
		/* near the waypoint, halfway, the base keeps moving */
		if (fabs(g.r.target_q[0] - (g.r.cfg.q0[0] + 0.5)) < 0.01)
			min_speed = fmin(min_speed, fabs(g.r.target_qd[0]));
	}
	cr_assert_eq(g.r.req_state, RTL_RTDE_REQ_STATE_DONE, "reason %d", g.r.req_reason);
	cr_assert_float_eq(g.r.target_q[0], arg[0], 1e-12);
	cr_assert_gt(min_speed, 0.1, "blended through the waypoint at %g rad/s", min_speed);
	cr_assert_lt(n * DT, 2 * profile_time(0.5, 1.0, 2.0), "faster than two stops");
}

/* ---- force mode, teach mode, move_until_contact ---- */

#define SEL_Z (1u << 2)
#define TYPE(t) ((uint32_t)(t) << 8)

/* A robot with a contact plane @below m under the TCP (stiffness 5000 N/m,
 * damping 50 N s/m), or none for @below <= 0, and the hand's push @push
 * (may be NULL) from @after s for @len s of teach mode. */
static void rig_init_with(struct rig *g, double below, const double push[3], double after,
			  double len)
{
	struct sim_robot_config cfg;
	double pose[6];

	sim_robot_config_default(&cfg);
	sim_robot_fk(cfg.q0, cfg.tcp_offset, pose);
	if (below > 0)
		cfg.contact = (struct sim_contact){ .enabled = true,
						    .point = { 0, 0, pose[2] - below },
						    .normal = { 0, 0, 1 },
						    .stiffness = 5000,
						    .damping = 50 };
	if (push)
		memcpy(cfg.push, push, sizeof(cfg.push));
	cfg.push_after = after;
	cfg.push_for = len;
	memset(g, 0, sizeof(*g));
	g->now = 1000000000;
	g->id = 100;
	cr_assert_eq(sim_robot_init(&g->r, &cfg), 0);
}

/* FORCE_MODE in the base frame, pressing @fz [N] along z (compliant). */
static int32_t press(struct rig *g, double fz, uint32_t flags)
{
	double arg[RTL_RTDE_REQ_NARG] = { 0 };

	arg[8] = fz;
	return request(g, RTL_RTDE_REQ_FORCE_MODE, arg, flags);
}

static void assert_answer(const struct rig *g, int32_t id, int32_t state, int32_t reason)
{
	cr_assert_eq(g->r.req_id, id);
	cr_assert_eq(g->r.req_state, state, "state %d, reason %d", g->r.req_state, g->r.req_reason);
	cr_assert_eq(g->r.req_reason, reason, "reason %d", g->r.req_reason);
}

Test(sim_requests, force_mode_holds_the_force_on_the_plane_while_speedl_moves_along_it)
{
	struct rig g;
	int32_t id;

	rig_init_with(&g, 0.005, NULL, 0, 0);
	id = press(&g, -10.0, SEL_Z | TYPE(2));
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_FORCE);
	/* 5 mm at 0.05 m/s, then a 50 ms settling (40 ms and the plane's damping) */
	for (int i = 0; i < 500; i++)
		cycle(&g);
	cr_assert_float_eq(g.r.tcp_force_scalar, 10.0, 0.5, "settled at %g N",
			   g.r.tcp_force_scalar);
	cr_assert_float_eq(g.r.actual_TCP_force[2], -10.0, 0.5);
	cr_assert_float_eq(g.r.actual_TCP_pose[2], g.r.cfg.contact.point[2] - 0.002, 2e-4,
			   "2 mm into the plane");

	/* x is not compliant: it follows speedl */
	g.c.mode = RTL_RTDE_CMD_SPEEDL;
	g.c.param[0] = 0.02;
	for (int i = 0; i < 250; i++)
		cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_speed[0], 0.02, 2e-4, "vx %g", g.r.actual_TCP_speed[0]);
	cr_assert_float_eq(g.r.actual_TCP_speed[1], 0.0, 2e-4);
	cr_assert_float_eq(g.r.tcp_force_scalar, 10.0, 0.5, "still pressing: %g N",
			   g.r.tcp_force_scalar);
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_FORCE);
}

Test(sim_requests, the_compliant_speed_is_bounded_by_the_limit_in_free_space)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, vmax = 0;
	int32_t id;

	rig_init_with(&g, 0, NULL, 0, 0);
	for (int i = 0; i < 6; i++)
		arg[i] = 0.1;
	arg[2] = 0.03;
	arg[6] = arg[7] = -1; /* the defaults */
	id = request(&g, RTL_RTDE_REQ_FORCE_LIMITS, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	press(&g, -100.0, SEL_Z | TYPE(2)); /* 0.5 m/s unbounded */
	for (int i = 0; i < 300; i++) {
		cycle(&g);
		vmax = fmax(vmax, fabs(g.r.actual_TCP_speed[2]));
	}
	cr_assert_leq(vmax, 0.03 * 1.01, "%g m/s", vmax);
	cr_assert_float_eq(g.r.actual_TCP_speed[2], -0.03, 3e-4);
	cr_assert_float_eq(g.r.actual_TCP_speed[0], 0.0, 1e-4);

	/* a new limit applies to the force mode that is on */
	arg[2] = 0.01;
	request(&g, RTL_RTDE_REQ_FORCE_LIMITS, arg, 0);
	for (int i = 0; i < 300; i++)
		cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_speed[2], -0.01, 1e-4);
	id = request(&g, RTL_RTDE_REQ_END_FORCE_MODE, NULL, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert_not(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_FORCE);
	for (int i = 0; i < 500 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r), "IDLE brings the arm to rest after force mode");
}

Test(sim_requests, force_and_teach_requests_refused_in_the_wrong_state_or_with_bad_arguments)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;

	rig_init_with(&g, 0, NULL, 0, 0);
	/* bad type and flags */
	id = press(&g, -10.0, SEL_Z);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	id = press(&g, -10.0, SEL_Z | TYPE(2) | (1u << 6));
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	id = press(&g, -10.0, SEL_Z | TYPE(2) | RTL_RTDE_REQ_FLAG_PATH);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	/* bad limits */
	for (int i = 0; i < 6; i++)
		arg[i] = 0.1;
	arg[3] = 0;
	id = request(&g, RTL_RTDE_REQ_FORCE_LIMITS, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	arg[3] = 0.1;
	arg[6] = 1.5;
	id = request(&g, RTL_RTDE_REQ_FORCE_LIMITS, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	arg[6] = 0.5;
	arg[7] = 2.5;
	id = request(&g, RTL_RTDE_REQ_FORCE_LIMITS, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);

	/* in teach mode: no force mode, no move */
	id = request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_TEACH);
	id = press(&g, -10.0, SEL_Z | TYPE(2));
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	memset(arg, 0, sizeof(arg));
	memcpy(arg, g.r.target_q, sizeof(double) * 6);
	arg[0] += 0.1;
	id = request(&g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	cr_assert_not(g.r.move_on);
	id = request(&g, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);

	/* during a move: no force mode */
	id = start_long_move(&g, 10);
	id = press(&g, -10.0, SEL_Z | TYPE(2));
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	cr_assert(g.r.move_on, "the move runs on");
	request(&g, RTL_RTDE_REQ_STOP_MOVE, NULL, 0);
	for (int i = 0; i < 2000 && (g.r.move_on || !sim_robot_at_rest(&g.r)); i++)
		cycle(&g);

	/* in force mode: no move, no teach mode, no contact move */
	id = press(&g, -10.0, SEL_Z | TYPE(1));
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	id = request(&g, RTL_RTDE_REQ_MOVE_J, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	id = request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	memset(arg, 0, sizeof(arg));
	arg[2] = -0.05;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NOT_ALLOWED);
	cr_assert_eq(sim_robot_cmd_status(&g.r),
		     RTL_RTDE_CMD_STATUS_READY | RTL_RTDE_CMD_STATUS_FORCE);
}

Test(sim_requests, teach_mode_follows_the_push_and_stands_still_without_one)
{
	static const double push[3] = { 10.0, 0, 0 };
	struct rig g;
	double p0[6];

	/* no push: exactly still */
	rig_init_with(&g, 0, NULL, 0, 0);
	memcpy(p0, g.r.actual_TCP_pose, sizeof(p0));
	request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	g.c.mode = RTL_RTDE_CMD_SPEEDL; /* ignored in teach mode */
	g.c.param[2] = 0.1;
	for (int i = 0; i < 200; i++) {
		cycle(&g);
		cr_assert(sim_robot_at_rest(&g.r), "still at cycle %d", i);
	}
	cr_assert_arr_eq(g.r.actual_TCP_pose, p0, sizeof(p0))
		;

	/* 10 N along x: 0.1 m/s along x */
	rig_init_with(&g, 0, push, 0, 0);
	request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	for (int i = 0; i < 250; i++)
		cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_speed[0], 0.1, 1e-3, "vx %g", g.r.actual_TCP_speed[0]);
	cr_assert_float_eq(g.r.actual_TCP_speed[1], 0.0, 1e-4);
	cr_assert_float_eq(g.r.actual_TCP_speed[2], 0.0, 1e-4);
	cr_assert_float_eq(g.r.actual_TCP_force[0], -10.0, 1e-9, "the tool resists the push");

	/* END_TEACH_MODE: to rest, the push gone */
	request(&g, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0);
	cr_assert_not(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_TEACH);
	for (int i = 0; i < 500 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));
	cr_assert_float_eq(g.r.actual_TCP_force[0], 0.0, 1e-12);
}

Test(sim_requests, the_push_starts_after_push_after_and_lasts_push_for)
{
	static const double push[3] = { 0, 0, -20.0 };
	struct rig g;

	rig_init_with(&g, 0, push, 0.2, 0.3);
	/* no teach mode: no push */
	for (int i = 0; i < 150; i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));
	cr_assert_eq(g.r.actual_TCP_force[2], 0.0);
	request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	/* the n-th step of teach mode runs at t = (n - 1) period */
	for (int i = 0; i < 100; i++)
		cycle(&g);
	cr_assert_eq(g.r.actual_TCP_force[2], 0.0, "no push before 0.2 s");
	cr_assert(sim_robot_at_rest(&g.r));
	cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_force[2], 20.0, 1e-9, "the push from 0.2 s");
	for (int i = 0; i < 149; i++)
		cycle(&g);
	cr_assert_float_eq(g.r.actual_TCP_force[2], 20.0, 1e-9, "until 0.5 s");
	cr_assert_lt(g.r.actual_TCP_speed[2], -0.19, "down at 0.2 m/s: %g",
		     g.r.actual_TCP_speed[2]);
	cycle(&g);
	cr_assert_eq(g.r.actual_TCP_force[2], 0.0, "no push after 0.5 s");
	for (int i = 0; i < 500 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r), "to rest without the push");
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_TEACH);
}

Test(sim_requests, teach_mode_interrupts_a_move)
{
	struct rig g;
	int32_t move, teach;

	rig_init_with(&g, 0, NULL, 0, 0);
	move = start_long_move(&g, 100);
	teach = request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	cr_assert_neq(move, teach);
	assert_answer(&g, teach, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert_not(g.r.move_on);
	for (int i = 0; i < 1000 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r), "without a push the arm comes to rest");
}

Test(sim_requests, move_until_contact_stops_at_the_plane_and_retracts)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, zmin = 1e9, plane;
	int32_t id;
	int n;

	rig_init_with(&g, 0.02, NULL, 0, 0);
	plane = g.r.cfg.contact.point[2];
	arg[2] = -0.05; /* down at 5 cm/s */
	arg[7] = 0.01;	/* then 1 cm back up */
	arg[8] = 10.0;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_RUNNING, 0);
	for (n = 0; n < 3000; n++) {
		cycle(&g);
		zmin = fmin(zmin, g.r.actual_TCP_pose[2]);
		if (g.r.req_state != RTL_RTDE_REQ_STATE_RUNNING)
			break;
	}
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_DONE, 0);
	cr_assert_lt(zmin, plane, "it reached the plane");
	cr_assert_gt(zmin, plane - 0.003, "and stopped there: %g below", plane - zmin);
	cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));
	cr_assert_float_eq(g.r.actual_TCP_pose[2] - zmin, 0.01, 1e-5, "retracted %g m",
			   g.r.actual_TCP_pose[2] - zmin);
	cr_assert_eq(g.r.tcp_force_scalar, 0.0, "off the plane");
}

Test(sim_requests, move_until_contact_without_a_plane_fails_at_a_joint_limit)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;
	int n;

	/* turning the wrist at 1 rad/s: joint 6 reaches 2 pi within 7 s */
	rig_init_with(&g, 0, NULL, 0, 0);
	arg[2] = -0.001;
	arg[5] = 1.0;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	n = run_until_over(&g, id, 4000);
	cr_assert_gt(n, 0, "over within 8 s");
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NO_CONTACT);
	cr_assert(g.r.limited & SIM_ROBOT_EV_POS_LIMIT);
	cr_assert_gt(fabs(g.r.target_q[5]), 5.5, "near the limit: %g", g.r.target_q[5]);
	for (int i = 0; i < 2000 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));

	/* straight down: the arm stretches to the edge of its reach */
	rig_init_with(&g, 0, NULL, 0, 0);
	memset(arg, 0, sizeof(arg));
	arg[2] = -0.25;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	n = run_until_over(&g, id, 4000);
	cr_assert_gt(n, 0, "over within 8 s");
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_NO_CONTACT);
	for (int i = 0; i < 2000 && !sim_robot_at_rest(&g.r); i++)
		cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));

	memset(arg, 0, sizeof(arg));
	arg[3] = 0.1; /* no linear part */
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
	arg[2] = -0.1;
	arg[7] = 1.5; /* retract too far */
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_BAD_ARGUMENT);
}

Test(sim_requests, stop_ends_force_and_teach_mode)
{
	struct rig g;

	rig_init_with(&g, 0, NULL, 0, 0);
	press(&g, -10.0, SEL_Z | TYPE(2));
	cycle(&g);
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_FORCE);
	g.c.mode = RTL_RTDE_CMD_STOP;
	cycle(&g);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);
	cr_assert_not(g.r.force_on);

	g.c.mode = RTL_RTDE_CMD_IDLE;
	request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	cycle(&g);
	cr_assert(sim_robot_cmd_status(&g.r) & RTL_RTDE_CMD_STATUS_TEACH);
	g.c.mode = RTL_RTDE_CMD_STOP;
	cycle(&g);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);
	cr_assert_not(g.r.teach_on);
}

Test(sim_requests, the_watchdog_ends_force_mode)
{
	struct rig g;

	rig_init_with(&g, 0, NULL, 0, 0);
	press(&g, -10.0, SEL_Z | TYPE(2));
	for (int i = 0; i < 10; i++)
		cycle(&g);
	cr_assert(g.r.force_on);
	/* IDLE, but force mode moves the arm: the heartbeat is watched */
	for (int i = 0; i < 100; i++) {
		g.now += PERIOD;
		sim_robot_step(&g.r, g.now);
	}
	cr_assert_eq(g.r.watchdog_trips, 1);
	cr_assert_not(g.r.force_on);
	cr_assert_eq(sim_robot_cmd_status(&g.r),
		     RTL_RTDE_CMD_STATUS_READY | RTL_RTDE_CMD_STATUS_WATCHDOG);
	for (int i = 0; i < 500 && !sim_robot_at_rest(&g.r); i++) {
		g.now += PERIOD;
		sim_robot_step(&g.r, g.now);
	}
	cr_assert(sim_robot_at_rest(&g.r));
}

Test(sim_requests, a_protective_stop_ends_the_modes_and_fails_a_contact_move)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;

	rig_init_with(&g, 0, NULL, 0, 0);
	press(&g, -10.0, SEL_Z | TYPE(3));
	cycle(&g);
	g.r.safety_mode = SIM_SAFETY_MODE_NORMAL + 2; /* as the controller sets it */
	cycle(&g);
	cr_assert_not(g.r.force_on);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);

	g.r.safety_mode = SIM_SAFETY_MODE_NORMAL;
	arg[2] = -0.05;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	for (int i = 0; i < 50; i++)
		cycle(&g);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_RUNNING, 0);
	g.r.safety_mode = SIM_SAFETY_MODE_NORMAL + 2;
	cycle(&g);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_PROTECTIVE_STOP);
	cr_assert_eq(g.r.muc_phase, SIM_MUC_NONE);
}

Test(sim_requests, a_stream_interrupts_a_contact_move_and_a_stop_move_brakes_it)
{
	struct rig g;
	double arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id, stop;

	rig_init_with(&g, 0, NULL, 0, 0);
	arg[2] = -0.05;
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	for (int i = 0; i < 50; i++)
		cycle(&g);
	g.c.mode = RTL_RTDE_CMD_SPEEDJ;
	cycle(&g);
	assert_answer(&g, id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_INTERRUPTED);

	rig_init_with(&g, 0, NULL, 0, 0);
	id = request(&g, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, arg, 0);
	for (int i = 0; i < 50; i++)
		cycle(&g);
	stop = request(&g, RTL_RTDE_REQ_STOP_MOVE, NULL, 0);
	assert_answer(&g, stop, RTL_RTDE_REQ_STATE_RUNNING, 0);
	cr_assert_gt(run_until_over(&g, stop, 500), 0);
	assert_answer(&g, stop, RTL_RTDE_REQ_STATE_DONE, 0);
	cycle(&g);
	cr_assert(sim_robot_at_rest(&g.r));
}

Test(sim_requests, the_watchdog_ends_teach_mode_when_the_client_is_gone)
{
	static const double push[3] = { 10.0, 0, 0 };
	struct rig g;

	rig_init_with(&g, 0, push, 0, 0);
	request(&g, RTL_RTDE_REQ_TEACH_MODE, NULL, 0);
	for (int i = 0; i < 50; i++)
		cycle(&g);
	cr_assert(g.r.teach_on);
	cr_assert_gt(sim_robot_max_speed(&g.r), 0, "the hand moves the arm");
	/* no heartbeat any more: freedrive must not outlive the client */
	for (int i = 0; i < 100; i++) {
		g.now += PERIOD;
		sim_robot_step(&g.r, g.now);
	}
	cr_assert_eq(g.r.watchdog_trips, 1);
	cr_assert_not(g.r.teach_on);
	for (int i = 0; i < 500 && !sim_robot_at_rest(&g.r); i++) {
		g.now += PERIOD;
		sim_robot_step(&g.r, g.now);
	}
	cr_assert(sim_robot_at_rest(&g.r), "at rest although the hand still pushes");
}
