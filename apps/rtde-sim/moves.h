/* SPDX-License-Identifier: MIT */
/*
 * sim_move: point-to-point moves as URScript's movej and movel plan them, so
 * that a simulated move takes the time a real UR move takes.
 *
 * Design
 * ------
 * A plan is a pure function of time: sim_move_plan_*() or the path calls
 * fill a struct sim_move (fixed arrays, no allocation), sim_move_sample()
 * gives the target at any time t, and sim_move_stop() rewrites the plan
 * from t on into a deceleration to rest. Nothing keeps state between
 * samples, so a caller may sample at any period, out of order, or twice.
 * Turning poses into joints is the caller's business; sim_move_follow()
 * is a damped least-squares step a caller can use to follow a linear plan
 * from the joints it has.
 *
 * The model:
 * - Every segment moves along a straight line in its space with a path
 *   parameter s in [0, 1] that follows a trapezoidal velocity profile over
 *   the segment's distance d (triangular when d < v^2 / a):
 *     d >= v^2 / a: T = d / v + v / a,    else T = 2 sqrt(d / a).
 * - Joint segments (movej): the line is q(s) = q0 + s (q1 - q0), d is the
 *   distance of the leading joint (the largest |q1 - q0|), which moves
 *   with speed v [rad/s] and acceleration a [rad/s^2]; every other joint
 *   moves with its share |dq_j| / d of them, so all start and arrive
 *   together.
 * - Linear segments (movel): the TCP position moves on the line
 *   p(s) = p0 + s (p1 - p0) with tool speed v [m/s] and acceleration
 *   a [m/s^2]; the orientation turns about one fixed axis,
 *   R(s) = R0 exp(s [w]x) with w the rotation vector of R0^T R1 (so the
 *   angle grows monotonically with s). When the position distance is below
 *   SIM_MOVE_EPS_M, the profile runs on the rotation angle instead, with v
 *   and a taken as rad/s and rad/s^2.
 * - Paths: up to SIM_MOVE_MAX_SEGS segments of one kind (all joint or all
 *   linear; a path that changes kind needs the IK the caller owns, so it
 *   is two paths). Segments run one after another, each with its own
 *   profile. A blend radius r > 0 at a waypoint starts the next segment
 *   when the remaining distance of the current one (in its units: rad of
 *   the leading joint, or m, or rad for a pure rotation) falls below r; the
 *   two displacements then add up (the new segment starts from where the
 *   old one will end, as an offset; for orientations the rotations
 *   compose in order), so the arm does not stop at the waypoint and
 *   passes within about r of it. r is clamped to half of either
 *   segment's distance, so at most two segments overlap. This is not UR's
 *   blend shape (a parabolic or circular arc with speed kept), only its
 *   timing to the first order: during the overlap the speeds add, and may
 *   exceed v.
 * - Stop (stopj / stopl): every segment moving at t_now decelerates along
 *   its own line with the given deceleration (in its units) from the speed
 *   it has at t_now, and comes to rest within its speed / decel; segments
 *   not started by t_now are dropped. A segment already braking to its
 *   end harder than that keeps its own profile, which rests sooner. A
 *   stop with a gentler deceleration than the move's own may carry the
 *   arm past the target, still on the segment's line (s > 1), as stopj
 *   past a movej's target on a real robot. During a blend both segments
 *   brake, so the joint (or TCP) deceleration may reach twice decel.
 *
 * Thread safety: none needed; a plan is plain data. Every function is
 * RT-safe (no allocation, no locks, no system calls).
 */
#ifndef RTLOOP_SIM_MOVES_H
#define RTLOOP_SIM_MOVES_H

#include <stdbool.h>

struct sim_dh; /* robot.h */

#define SIM_MOVE_MAX_SEGS 32
/* Below this position distance [m] a linear segment is a pure rotation. */
#define SIM_MOVE_EPS_M 1e-9
/* Phases of constant acceleration a segment's profile may hold: the three
 * of the trapezoid and one per later stop. */
#define SIM_MOVE_MAX_PHASES 8

enum sim_move_kind {
	SIM_MOVE_JOINT = 0,  /* samples are joint positions [rad] */
	SIM_MOVE_LINEAR = 1, /* samples are TCP poses: x y z [m], rotation vector [rad] */
};

/* A phase: u(t) = u0 + w0 (t - t0) + acc (t - t0)^2 / 2 from t0 on. */
struct sim_move_phase {
	double t0, u0, w0, acc;
};

/* One segment: its line, its profile u(tau) over [0, T], s = u / d. */
struct sim_move_seg {
	double start;	  /* time the segment starts at, in the plan [s] */
	double d;	  /* distance of the profile (leading joint, m or rad) */
	double delta[6];  /* joint: q1 - q0; linear: p1 - p0, then w (rotvec of R0^T R1) */
	double target[6]; /* the waypoint it ends at (the caller's numbers) */
	double v, a, blend;
	double T;     /* duration of the profile [s] */
	double u_end; /* u at rest, after T */
	int nphase;
	struct sim_move_phase phase[SIM_MOVE_MAX_PHASES];
};

struct sim_move {
	enum sim_move_kind kind;
	bool stopped; /* a stop rewrote the plan: the end is where it rests */
	int nseg;
	double origin[6]; /* where the path starts */
	struct sim_move_seg seg[SIM_MOVE_MAX_SEGS];
};

/*
 * Start a path of @kind at @start (joints, or a pose). The path holds no
 * segment yet: it samples @start. -EINVAL for a non-finite @start or kind.
 */
int sim_move_path_begin(struct sim_move *m, enum sim_move_kind kind, const double start[6]);
/*
 * Append a segment to @target with speed @v and acceleration @a (> 0,
 * units as the kind's) and blend radius @blend (>= 0, 0 = stop at the
 * waypoint) into the segment that follows. -EINVAL for non-finite numbers
 * or v, a <= 0 or blend < 0 or a stopped plan, -ENOSPC when the path is
 * full.
 */
int sim_move_path_add(struct sim_move *m, const double target[6], double v, double a, double blend);

/* movej from @q0 to @q1: a path of one joint segment. -EINVAL as above. */
int sim_move_plan_joint(struct sim_move *m, const double q0[6], const double q1[6], double v,
			double a);
/* movel from pose @p0 to pose @p1: a path of one linear segment. */
int sim_move_plan_linear(struct sim_move *m, const double p0[6], const double p1[6], double v,
			 double a);

/* The time the plan comes to rest at [s] (0 for an empty path). */
double sim_move_duration(const struct sim_move *m);
/*
 * The target at @t [s] from the plan's start: joints or pose, as the kind.
 * t <= 0 gives the start; t >= the duration gives exactly the last
 * waypoint (or, after a stop, where the plan rests).
 */
void sim_move_sample(const struct sim_move *m, double t, double out[6]);
/*
 * Decelerate from @t_now to rest with @decel (> 0, the kind's units), on
 * the lines of the segments moving at @t_now (see the model above). 0 on
 * success (also when the plan is at rest by then), -EINVAL for non-finite
 * numbers or decel <= 0, -ENOSPC when a segment has no room for another
 * phase (more than SIM_MOVE_MAX_PHASES - 3 stops).
 */
int sim_move_stop(struct sim_move *m, double t_now, double decel);

/*
 * Joints that put the TCP at @pose, from @q_now: @iters damped
 * least-squares steps (lambda 0.01) with the geometric Jacobian of
 * robot.h, the error being the position difference and the rotation
 * vector of R_pose R(q)^T. A caller following a linear plan passes the
 * joints of its last sample, so the solution stays on that branch; 2-3
 * iterations per 2 ms sample keep the TCP on the line within micrometres
 * away from singularities. @tcp_offset may be NULL (flange). Writes the
 * remaining error norm (m and rad together) to @residual when non-NULL.
 * -EINVAL for non-finite input or iters < 1.
 */
int sim_move_follow(const double q_now[6], const double pose[6], const double tcp_offset[6],
		    int iters, double q_out[6], double *residual);
/* sim_move_follow() for the arm @dh (NULL: the UR5e, which the above
 * follows). */
int sim_move_follow_dh(const struct sim_dh *dh, const double q_now[6], const double pose[6],
		       const double tcp_offset[6], int iters, double q_out[6], double *residual);

#endif /* RTLOOP_SIM_MOVES_H */
