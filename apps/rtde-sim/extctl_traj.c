// SPDX-License-Identifier: MIT
/*
 * Trajectory forwarding of the External Control program (extctl.h;
 * docs/rtde-sim.md, "The UR Client Library's External Control").
 *
 * The reverse interface's MODE_FORWARD message announces a trajectory of
 * N points (or a stream until STREAM_END); the points come on the
 * trajectory socket, 21 int32 each: six target values, six more (joint
 * speeds of a spline, or the q_near/via of a move), six more (joint
 * accelerations of a quintic spline, or the move's speed, acceleration
 * and a flag), all scaled by MULT_jointstate; then the segment's time and
 * the blend radius (or the spline type) scaled by MULT_time, and the
 * motion type. The trajectory thread reads one point after the other:
 * within 0.5 s while the arm is at rest, within one control period while a
 * spline is moving it, and answers with one int32 on the trajectory
 * socket when it ends: 0 success, 1 canceled, 2 failure.
 *
 * Splines are run as the script runs them: a cubic or quintic polynomial
 * from the current joints and the last spline speed to the point, its
 * speed commanded with speedj every cycle, with the acceleration that
 * makes the change within that cycle. Moves (movej, movel, and movej to a
 * pose, movel to joints) are robot requests; their time, when given, sets
 * the speed that makes the move last that long.
 */
#include <math.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_req.h>

#include "controller.h"
#include "extctl.h"
#include "kin.h"
#include "sim.h"

#define POINT_TIMEOUT_NS (500 * INT64_C(1000000))
#define CLEANUP_TIMEOUT_NS (500 * INT64_C(1000000))

/* Motion types of a point. */
enum {
	MT_MOVEJ = 0,
	MT_MOVEL = 1,
	MT_MOVEP = 2,
	MT_MOVEC = 3,
	MT_OPTIMOVEJ = 4,
	MT_OPTIMOVEL = 5,
	MT_MOVEJ_POSE = 6,
	MT_MOVEL_JOINT = 7,
	MT_MOVEP_JOINT = 8,
	MT_MOVEC_JOINT = 9,
	MT_MOVEC_JOINT_POSE = 10,
	MT_MOVEC_POSE_JOINT = 11,
	MT_OPTIMOVEJ_POSE = 12,
	MT_OPTIMOVEL_JOINT = 13,
	MT_SPLINE = 51,
};

#define SPLINE_CUBIC 1
#define SPLINE_QUINTIC 2

static const char *result_name(int32_t r)
{
	return r == EXT_TRAJ_SUCCESS	? "SUCCESS"
	       : r == EXT_TRAJ_CANCELED ? "CANCELED"
	       : r == EXT_TRAJ_FAILURE	? "FAILURE"
					: "UNKNOWN";
}

void sim_ext_traj_start(struct sim *sim, struct ext *x, int32_t points, bool streaming)
{
	x->streaming = x->was_streaming = streaming;
	x->points_left = points;
	x->first_point = true;
	x->moving = false;
	memset(x->spline_qd, 0, sizeof(x->spline_qd));
	memset(x->spline_qdd, 0, sizeof(x->spline_qdd));
	x->result = EXT_TRAJ_SUCCESS;
	x->wait_deadline = 0;
	x->traj = EXT_TRAJ_WAIT;
	sim_ext_text(sim, "Executing trajectory. Number of points: %d", (int)points);
}

void sim_ext_traj_kill(struct ext *x)
{
	x->traj = EXT_TRAJ_OFF;
	x->spline_cmd = false;
}

void sim_ext_cleanup_request(struct ext *x, int64_t now)
{
	if (x->cleanup)
		return;
	x->cleanup = true;
	x->cleanup_deadline = now + CLEANUP_TIMEOUT_NS;
}

bool sim_ext_cleanup_step(struct ext *x, int64_t now)
{
	struct ext_sock *s = &x->s[EXT_TRAJ];
	int32_t v[EXT_TRAJ_INTS];

	while (x->points_left > 0 && sim_ext_read(s, v, EXT_TRAJ_INTS)) {
		x->points_left--;
		x->cleanup_deadline = now + CLEANUP_TIMEOUT_NS;
	}
	if (x->points_left > 0 && !s->closed && now < x->cleanup_deadline)
		return false;
	x->points_left = 0;
	x->cleanup = false;
	return true;
}

/* The thread's end: stopj, the result, its message. */
static void finish(struct sim *sim, struct ext *x)
{
	x->traj = EXT_TRAJ_OFF;
	sim_ext_stop(x, x->stopj_acc);
	sim_ext_send_int(&x->s[EXT_TRAJ], x->result);
	sim_ext_text(sim, "Trajectory finished with result %s", result_name(x->result));
}

/* ---- splines ------------------------------------------------------------------------ */

static bool reachable(struct sim *sim, struct ext *x, const double *from, const double *to,
		      double t)
{
	for (int i = 0; i < SIM_ROBOT_DOF; i++)
		if (fabs(to[i] - from[i]) / t > x->ignore_speed) {
			sim_ext_text(
				sim,
				"Velocity %g required in joint %d to go from %g to %g within %g "
				"seconds is exceeding the joint velocity limits.",
				fabs(to[i] - from[i]) / t, i, from[i], to[i], t);
			return false;
		}
	return true;
}

/* One step of the segment: the speed at its next time, commanded. */
static void spline_step(struct ext *x)
{
	double t, ts, acc = 0, qd[SIM_ROBOT_DOF];
	double(*c)[SIM_ROBOT_DOF] = x->co;

	if (x->seg_T - x->seg_t > x->dt) {
		x->seg_t += x->dt;
		ts = x->dt;
	} else {
		ts = x->seg_T - x->seg_t;
		x->seg_t = x->seg_T;
		x->traj = EXT_TRAJ_WAIT; /* the segment's last step */
		x->wait_deadline = 0;
	}
	t = x->seg_t;
	if (!(ts > 0))
		ts = x->dt;
	for (int i = 0; i < SIM_ROBOT_DOF; i++) {
		qd[i] = c[0][i] + 2 * t * c[1][i] + 3 * t * t * c[2][i] + 4 * t * t * t * c[3][i] +
			5 * t * t * t * t * c[4][i];
		x->spline_qdd[i] = 2 * c[1][i] + 6 * t * c[2][i] + 12 * t * t * c[3][i] +
				   20 * t * t * t * c[4][i];
		if (fabs(qd[i] - x->spline_qd[i]) / ts > acc)
			acc = fabs(qd[i] - x->spline_qd[i]) / ts;
	}
	memcpy(x->spline_qd, qd, sizeof(qd));
	x->spline_acc = acc > 0 ? acc : 1e-3;
	x->spline_cmd = true;
}

/* cubicSplineRun() / quinticSplineRun(): the segment to @q at @T with
 * end speed @qd (and acceleration @qdd, quintic). */
static void spline_start(struct sim *sim, struct ext *x, const double *q, const double *qd,
			 const double *qdd, double T, bool last)
{
	const double *sq = sim->robot.target_q, *sqd = x->spline_qd, *sqdd = x->spline_qdd;
	double dist = 0, T2 = T * T, T3 = T2 * T;

	x->moving = false;
	if (T <= 0) {
		for (int i = 0; i < SIM_ROBOT_DOF; i++)
			dist += (q[i] - sq[i]) * (q[i] - sq[i]);
		if (x->first_point && T == 0 && sqrt(dist) < 0.01) {
			sim_ext_text(sim, "Ignoring first point with time 0");
			return;
		}
		sim_ext_text(sim, "Spline time shouldn't be zero as it would require infinite "
				  "velocity to reach the target. Canceling motion.");
		x->result = EXT_TRAJ_CANCELED;
		return;
	}
	if (!reachable(sim, x, sq, q, T)) {
		x->result = EXT_TRAJ_CANCELED;
		return;
	}
	for (int i = 0; i < SIM_ROBOT_DOF; i++) {
		x->co[0][i] = sqd[i];
		if (!qdd) {
			x->co[1][i] = (-3 * sq[i] + 3 * q[i] - 2 * sqd[i] * T - qd[i] * T) / T2;
			x->co[2][i] = (2 * sq[i] - 2 * q[i] + sqd[i] * T + qd[i] * T) / T3;
			x->co[3][i] = x->co[4][i] = 0;
			continue;
		}
		x->co[1][i] = 0.5 * sqdd[i];
		x->co[2][i] = (-20 * sq[i] + 20 * q[i] - 3 * sqdd[i] * T2 + qdd[i] * T2 -
			       12 * sqd[i] * T - 8 * qd[i] * T) /
			      (2 * T3);
		x->co[3][i] = (30 * sq[i] - 30 * q[i] + 3 * sqdd[i] * T2 - 2 * qdd[i] * T2 +
			       16 * sqd[i] * T + 14 * qd[i] * T) /
			      (2 * T3 * T);
		x->co[4][i] = (-12 * sq[i] + 12 * q[i] - sqdd[i] * T2 + qdd[i] * T2 -
			       6 * sqd[i] * T - 6 * qd[i] * T) /
			      (2 * T3 * T2);
	}
	x->seg_T = T;
	x->seg_t = 0;
	x->seg_last = last;
	x->moving = !last;
	x->traj = EXT_TRAJ_SPLINE;
	spline_step(x);
}

/* ---- moves -------------------------------------------------------------------------- */

/* The speed (and acceleration) that make a trapezoid of @d last @t. */
static void timed(double d, double t, double *v, double *a)
{
	double disc;

	if (!(t > 0) || !(d > 0))
		return;
	if (!(*a > 0))
		*a = RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT;
	disc = *a * *a * t * t - 4 * *a * d;
	if (disc < 0) {
		*a = 4 * d / (t * t);
		*v = 2 * d / t;
	} else {
		*v = (*a * t - sqrt(disc)) / 2;
	}
}

/* movej(@q) or movel(@pose): a robot request the thread waits for. */
static void move(struct sim *sim, struct ext *x, bool linear, const double *target, double v,
		 double a, double t, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double arg[RTL_RTDE_REQ_NARG] = { 0 }, d = 0, p[6];

	if (linear) {
		sim_kin_forward_dh(&r->cfg.dh, r->target_q, r->cfg.tcp_offset, p);
		for (int i = 0; i < 3; i++)
			d += (target[i] - p[i]) * (target[i] - p[i]);
		d = sqrt(d);
	} else {
		for (int i = 0; i < SIM_ROBOT_DOF; i++)
			if (fabs(target[i] - r->target_q[i]) > d)
				d = fabs(target[i] - r->target_q[i]);
	}
	timed(d, t, &v, &a);
	memcpy(arg, target, 6 * sizeof(double));
	arg[6] = v;
	arg[7] = a;
	memset(x->spline_qd, 0, sizeof(x->spline_qd));
	memset(x->spline_qdd, 0, sizeof(x->spline_qdd));
	x->stopping = false;
	x->move_id = sim_ext_request(sim, x, linear ? RTL_RTDE_REQ_MOVE_L : RTL_RTDE_REQ_MOVE_J,
				     arg, 0, now);
	x->traj = EXT_TRAJ_MOVE;
}

static void unmodelled_motion(struct sim *sim, struct ext *x, const char *name)
{
	sim_ext_unmodelled(sim, x->s[EXT_TRAJ].line, name, "a trajectory point");
}

/* One point (@v: the 21 values after the count). */
static void point(struct sim *sim, struct ext *x, const int32_t *v, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double q[6], b2[6], b3[6], sol[6];
	double t = v[18] / x->mult_time;
	bool last = x->points_left == 0;

	for (int i = 0; i < 6; i++) {
		q[i] = v[i] / x->mult_js;
		b2[i] = v[6 + i] / x->mult_js;
		b3[i] = v[12 + i] / x->mult_js;
	}
	switch (v[20]) {
	case MT_MOVEJ:
		move(sim, x, false, q, b3[0], b3[1], t, now);
		break;
	case MT_MOVEL:
		move(sim, x, true, q, b3[0], b3[1], t, now);
		break;
	case MT_MOVEJ_POSE:
		if (sim_kin_inverse_dh(&r->cfg.dh, q, r->cfg.tcp_offset,
				       b3[2] != 0 ? b2 : r->target_q, r->cfg.q_min, r->cfg.q_max,
				       sol)) {
			sim_ext_fail(
				sim, x->s[EXT_TRAJ].line,
				"movej(): no inverse kinematics solution for the point's pose");
			return;
		}
		move(sim, x, false, sol, b3[0], b3[1], t, now);
		break;
	case MT_MOVEL_JOINT:
		sim_kin_forward_dh(&r->cfg.dh, q, r->cfg.tcp_offset, sol);
		move(sim, x, true, sol, b3[0], b3[1], t, now);
		break;
	case MT_SPLINE:
		if (v[19] == SPLINE_CUBIC) {
			spline_start(sim, x, q, b2, NULL, t, last);
			memset(x->spline_qdd, 0, sizeof(x->spline_qdd));
		} else if (v[19] == SPLINE_QUINTIC) {
			spline_start(sim, x, q, b2, b3, t, last);
		} else {
			sim_ext_text(sim, "Unknown spline type given: %d", (int)v[19]);
			sim_ext_cleanup_request(x, now);
			sim_ext_stop(x, x->stopj_acc);
			x->result = EXT_TRAJ_FAILURE;
		}
		break;
	case MT_MOVEP:
	case MT_MOVEP_JOINT:
		unmodelled_motion(sim, x, "movep");
		break;
	case MT_MOVEC:
	case MT_MOVEC_JOINT:
	case MT_MOVEC_JOINT_POSE:
	case MT_MOVEC_POSE_JOINT:
		unmodelled_motion(sim, x, "movec");
		break;
	case MT_OPTIMOVEJ:
	case MT_OPTIMOVEJ_POSE:
		unmodelled_motion(sim, x, "optimovej");
		break;
	case MT_OPTIMOVEL:
	case MT_OPTIMOVEL_JOINT:
		unmodelled_motion(sim, x, "optimovel");
		break;
	default:
		break; /* the script's if-chain ignores other types */
	}
}

/* Reading the next point (trajectoryThread's loop). */
static void wait_point(struct sim *sim, struct ext *x, int64_t now)
{
	struct ext_sock *s = &x->s[EXT_TRAJ];
	int32_t v[EXT_TRAJ_INTS];

	if (x->result != EXT_TRAJ_SUCCESS || x->points_left <= 0) {
		finish(sim, x);
		return;
	}
	if (!x->wait_deadline)
		x->wait_deadline = now + (x->moving ? sim_period_ns(sim) : POINT_TIMEOUT_NS);
	if (sim_ext_read(s, v, EXT_TRAJ_INTS)) {
		x->points_left--;
		x->wait_deadline = 0;
		point(sim, x, v, now);
		x->first_point = false;
	} else if (s->closed || s->overflow || now >= x->wait_deadline) {
		x->points_left--;
		x->wait_deadline = 0;
		if (x->was_streaming && !x->streaming && x->points_left < 0) {
			x->points_left = 0; /* STREAM_END after the last point */
		} else {
			sim_ext_text(sim, "Receiving trajectory point failed!");
			x->result = EXT_TRAJ_FAILURE;
		}
		x->first_point = false;
	} else {
		return;
	}
	if (sim_ext_alive(sim) && x->traj == EXT_TRAJ_WAIT &&
	    (x->result != EXT_TRAJ_SUCCESS || x->points_left <= 0))
		finish(sim, x);
}

void sim_ext_traj_tick(struct sim *sim, struct ext *x, int64_t now)
{
	int32_t why, st;

	switch (x->traj) {
	case EXT_TRAJ_OFF:
		return;
	case EXT_TRAJ_SPLINE:
		spline_step(x); /* its last step: the next point is read next cycle */
		return;
	case EXT_TRAJ_MOVE:
		st = sim_ext_answer(sim, x->move_id, &why);
		if (st == RTL_RTDE_REQ_STATE_FAILED) {
			sim_ext_fail(sim, x->s[EXT_TRAJ].line, "%s: %s", "movej/movel",
				     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
			return;
		}
		/* a later request (a payload) answers in its place: the move
		 * is over when the arm has no plan left */
		if (st != RTL_RTDE_REQ_STATE_DONE &&
		    (st != RTL_RTDE_REQ_STATE_NONE || sim->robot.move_on ||
		     sim->robot.move_pending))
			return;
		x->traj = EXT_TRAJ_WAIT;
		x->wait_deadline = 0;
		wait_point(sim, x, now);
		return;
	case EXT_TRAJ_WAIT:
		wait_point(sim, x, now);
		return;
	}
}
