// SPDX-License-Identifier: MIT
/* rtde-sim's point-to-point planner (apps/rtde-sim/moves.c): movej and
 * movel take the time UR's formulas say, keep the joints (or the TCP) on
 * their line, never exceed the speed and acceleration they were given, and
 * a stop brakes to rest on the line within v / decel. Sampled at the 2 ms
 * of a 500 Hz controller, as the simulator will. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moves.h"
#include "robot.h"

#define DT 0.002

static const double q_home[6] = { 0.3, -1.2, 1.5, -1.9, -1.57, 0.2 };

static double trap_T(double d, double v, double a)
{
	return d >= v * v / a ? d / v + v / a : 2 * sqrt(d / a);
}

static double dist3(const double a[3], const double b[3])
{
	double d[3] = { a[0] - b[0], a[1] - b[1], a[2] - b[2] };

	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* Distance of @p from the line through @a and @b. */
static double off_line(const double p[3], const double a[3], const double b[3])
{
	double ab[3], ap[3], c[3], l;

	for (int i = 0; i < 3; i++) {
		ab[i] = b[i] - a[i];
		ap[i] = p[i] - a[i];
	}
	c[0] = ab[1] * ap[2] - ab[2] * ap[1];
	c[1] = ab[2] * ap[0] - ab[0] * ap[2];
	c[2] = ab[0] * ap[1] - ab[1] * ap[0];
	l = sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
	return sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / l;
}

/* The rotation vector of R(a)^T R(b): b's orientation seen from a. */
static void rel_rotvec(const double a[3], const double b[3], double rv[3])
{
	double ra[9], rb[9], m[9];

	sim_robot_rotvec_to_matrix(a, ra);
	sim_robot_rotvec_to_matrix(b, rb);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			m[3 * i + j] =
				ra[i] * rb[j] + ra[3 + i] * rb[3 + j] + ra[6 + i] * rb[6 + j];
	sim_robot_matrix_to_rotvec(m, rv);
}

/* A long joint move: joint 1 leads with 1.5 rad. */
static void long_joint(double q1[6])
{
	static const double dq[6] = { 0.8, -1.5, 0.6, 0.3, -0.2, 0 };

	for (int i = 0; i < 6; i++)
		q1[i] = q_home[i] + dq[i];
}

/* Each joint's fraction of its distance is the same at every sample. */
static void check_together(const double q0[6], const double q1[6], const double q[6])
{
	double f = NAN;

	for (int j = 0; j < 6; j++) {
		double dq = q1[j] - q0[j], fj;

		if (fabs(dq) < 1e-9) {
			cr_assert(fabs(q[j] - q0[j]) < 1e-12, "joint %d moved", j);
			continue;
		}
		fj = (q[j] - q0[j]) / dq;
		if (isnan(f))
			f = fj;
		cr_assert(fabs(fj - f) < 1e-12, "joint %d at %.15g of its way, others %.15g", j, fj,
			  f);
	}
}

Test(sim_moves, joint_duration_is_the_formula)
{
	struct sim_move m;
	double q1[6];

	long_joint(q1);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, 1.05, 1.4), 0);
	cr_assert(fabs(sim_move_duration(&m) - (1.5 / 1.05 + 1.05 / 1.4)) < 1e-9);
	cr_assert(fabs(sim_move_duration(&m) - trap_T(1.5, 1.05, 1.4)) < 1e-9);
}

Test(sim_moves, joint_ends_are_exact)
{
	struct sim_move m;
	double q1[6], q[6], T;

	long_joint(q1);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, 1.05, 1.4), 0);
	T = sim_move_duration(&m);
	sim_move_sample(&m, 0, q);
	cr_assert(memcmp(q, q_home, sizeof(q)) == 0);
	sim_move_sample(&m, -1, q);
	cr_assert(memcmp(q, q_home, sizeof(q)) == 0);
	sim_move_sample(&m, T, q);
	cr_assert(memcmp(q, q1, sizeof(q)) == 0);
	sim_move_sample(&m, T + 5, q);
	cr_assert(memcmp(q, q1, sizeof(q)) == 0);
}

Test(sim_moves, joints_arrive_together_within_their_share)
{
	struct sim_move m;
	double q1[6], prev[6], q[6], prev_v[6] = { 0 }, v = 1.05, a = 1.4, d = 1.5, vmax = 0,
				     amax = 0, T;
	int n;

	long_joint(q1);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, v, a), 0);
	T = sim_move_duration(&m);
	n = (int)ceil(T / DT) + 2;
	sim_move_sample(&m, 0, prev);
	for (int k = 1; k <= n; k++) {
		sim_move_sample(&m, k * DT, q);
		check_together(q_home, q1, q);
		for (int j = 0; j < 6; j++) {
			double share = fabs(q1[j] - q_home[j]) / d;
			double vj = (q[j] - prev[j]) / DT;

			cr_assert(fabs(vj) <= v * share + 1e-9, "joint %d at %g rad/s, cap %g", j,
				  vj, v * share);
			if (j == 1) {
				double aj = (vj - prev_v[j]) / DT;

				vmax = fmax(vmax, fabs(vj));
				amax = fmax(amax, fabs(aj));
			}
			prev_v[j] = vj;
		}
		memcpy(prev, q, sizeof(q));
	}
	cr_assert(fabs(vmax - v) < 1e-6, "the leading joint peaks at %g, not %g", vmax, v);
	cr_assert(amax <= a * (1 + 1e-6), "the leading joint accelerates at %g > %g", amax, a);
}

Test(sim_moves, short_joint_move_is_triangular)
{
	struct sim_move m;
	double q1[6], q[6], prev[6], v = 1.0, a = 1.0, d = 0.1, vmax = 0;

	memcpy(q1, q_home, sizeof(q1));
	q1[2] += d;
	q1[0] -= 0.05;
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, v, a), 0);
	cr_assert(fabs(sim_move_duration(&m) - 2 * sqrt(d / a)) < 1e-9);
	sim_move_sample(&m, 0, prev);
	for (int k = 1; k * DT < sim_move_duration(&m) + DT; k++) {
		sim_move_sample(&m, k * DT, q);
		check_together(q_home, q1, q);
		vmax = fmax(vmax, fabs(q[2] - prev[2]) / DT);
		memcpy(prev, q, sizeof(q));
	}
	/* the peak of the triangle, sqrt(d a), never v */
	cr_assert(vmax <= sqrt(d * a) + 1e-9 && vmax > 0.95 * sqrt(d * a), "peak %g", vmax);
	sim_move_sample(&m, sim_move_duration(&m), q);
	cr_assert(memcmp(q, q1, sizeof(q)) == 0);
}

Test(sim_moves, no_motion_is_an_empty_move)
{
	struct sim_move m;
	double q[6];

	cr_assert_eq(sim_move_plan_joint(&m, q_home, q_home, 1, 1), 0);
	cr_assert_eq(sim_move_duration(&m), 0);
	sim_move_sample(&m, 0.5, q);
	cr_assert(memcmp(q, q_home, sizeof(q)) == 0);
}

/* A 0.2 m line from the TCP at q_home, turning 0.3 rad about a tilted axis. */
static void line_poses(double p0[6], double p1[6])
{
	static const double dp[3] = { 0.12, 0.096, -0.128 }; /* 0.2 m */
	static const double w[3] = { 0.3 * 0.6, 0, 0.3 * 0.8 };
	double r0[9], e[9], r1[9];

	sim_robot_fk(q_home, NULL, p0);
	memcpy(p1, p0, 6 * sizeof(*p1));
	for (int i = 0; i < 3; i++)
		p1[i] += dp[i];
	sim_robot_rotvec_to_matrix(p0 + 3, r0);
	sim_robot_rotvec_to_matrix(w, e);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			r1[3 * i + j] = r0[3 * i] * e[j] + r0[3 * i + 1] * e[3 + j] +
					r0[3 * i + 2] * e[6 + j];
	sim_robot_matrix_to_rotvec(r1, p1 + 3);
}

Test(sim_moves, linear_tcp_follows_the_line)
{
	struct sim_move m;
	double p0[6], p1[6], pose[6], q[6], tcp[6], rv[3], prev_ang = 0, max_off = 0, prev[3],
							   vmax = 0, v = 0.25, a = 1.2;

	line_poses(p0, p1);
	cr_assert(fabs(dist3(p0, p1) - 0.2) < 1e-9);
	cr_assert_eq(sim_move_plan_linear(&m, p0, p1, v, a), 0);
	cr_assert(fabs(sim_move_duration(&m) - trap_T(dist3(p0, p1), v, a)) < 1e-9);
	sim_move_sample(&m, 0, pose);
	cr_assert(memcmp(pose, p0, sizeof(pose)) == 0);
	memcpy(q, q_home, sizeof(q));
	memcpy(prev, p0, sizeof(prev));
	for (int k = 1; k * DT <= sim_move_duration(&m) + DT; k++) {
		double res;

		sim_move_sample(&m, k * DT, pose);
		cr_assert(off_line(pose, p0, p1) < 1e-12);
		vmax = fmax(vmax, dist3(pose, prev) / DT);
		memcpy(prev, pose, sizeof(prev));
		/* the orientation turns about the one axis, monotonically */
		rel_rotvec(p0 + 3, pose + 3, rv);
		cr_assert(fabs(rv[1]) < 1e-12, "axis left the plane: %g", rv[1]);
		cr_assert(fabs(rv[0] * 0.8 - rv[2] * 0.6) < 1e-12, "axis turned");
		cr_assert(sqrt(rv[0] * rv[0] + rv[2] * rv[2]) >= prev_ang - 1e-15);
		prev_ang = sqrt(rv[0] * rv[0] + rv[2] * rv[2]);
		/* and a caller following it with the helper stays on it */
		cr_assert_eq(sim_move_follow(q, pose, NULL, 3, q, &res), 0);
		sim_robot_fk(q, NULL, tcp);
		max_off = fmax(max_off, off_line(tcp, p0, p1));
		cr_assert(dist3(tcp, pose) < 1e-4, "TCP %g m from its sample", dist3(tcp, pose));
	}
	cr_assert(max_off < 1e-4, "TCP %g m off the line", max_off);
	cr_assert(fabs(prev_ang - 0.3) < 1e-9);
	cr_assert(vmax <= v + 1e-9 && vmax > v - 1e-6, "tool speed peaks at %g", vmax);
	sim_move_sample(&m, sim_move_duration(&m), pose);
	cr_assert(memcmp(pose, p1, sizeof(pose)) == 0);
}

Test(sim_moves, pure_rotation_runs_on_the_angle)
{
	struct sim_move m;
	double p0[6], p1[6], pose[6], rv[3];

	line_poses(p0, p1);
	memcpy(p1, p0, 3 * sizeof(*p1));
	cr_assert_eq(sim_move_plan_linear(&m, p0, p1, 0.5, 1.0), 0);
	cr_assert(fabs(sim_move_duration(&m) - trap_T(0.3, 0.5, 1.0)) < 1e-9);
	sim_move_sample(&m, sim_move_duration(&m) / 2, pose);
	cr_assert(dist3(pose, p0) < 1e-15);
	rel_rotvec(p0 + 3, pose + 3, rv);
	cr_assert(fabs(sqrt(rv[0] * rv[0] + rv[2] * rv[2]) - 0.15) < 1e-9);
}

/* @brake: the strongest deceleration allowed after the stop */
static void check_stop_joint(double t_stop, double decel, double brake)
{
	struct sim_move m;
	double q1[6], q[6], prev[6], before[6], after[6], v = 1.05, T, vj, prev_v;

	long_joint(q1);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, v, 1.4), 0);
	sim_move_sample(&m, t_stop - DT, before);
	sim_move_sample(&m, t_stop, prev);
	cr_assert_eq(sim_move_stop(&m, t_stop, decel), 0);
	T = sim_move_duration(&m);
	cr_assert(T - t_stop <= v / decel + DT, "rest %g s after the stop", T - t_stop);
	/* nothing before the stop changed */
	sim_move_sample(&m, t_stop - DT, q);
	cr_assert(memcmp(q, before, sizeof(q)) == 0);
	prev_v = (prev[1] - before[1]) / DT;
	for (int k = 1; k * DT <= T - t_stop + 2 * DT; k++) {
		sim_move_sample(&m, t_stop + k * DT, q);
		check_together(q_home, q1, q);
		vj = (q[1] - prev[1]) / DT;
		/* slowing, in the same direction, no faster than decel */
		cr_assert(vj <= 1e-12 && vj >= prev_v - 1e-12, "speed %g after %g", vj, prev_v);
		cr_assert(fabs(vj - prev_v) / DT <= brake * (1 + 1e-6) + 1e-9);
		prev_v = vj;
		memcpy(prev, q, sizeof(q));
	}
	cr_assert(fabs(prev_v) < 1e-12, "still moving at %g", prev_v);
	sim_move_sample(&m, T + 1, after);
	sim_move_sample(&m, T + 2, q);
	cr_assert(memcmp(q, after, sizeof(q)) == 0);
}

Test(sim_moves, stop_rests_on_the_line_in_cruise)
{
	check_stop_joint(1.0, 3.0, 3.0);
}

Test(sim_moves, stop_rests_on_the_line_while_accelerating)
{
	check_stop_joint(0.3, 2.0, 2.0);
}

Test(sim_moves, gentle_stop_while_braking_keeps_on_the_line)
{
	/* braking already, harder (1.4) than the stop asks: the move keeps its
	 * own profile, which rests sooner, on the target */
	check_stop_joint(1.9, 1.0, 1.4);
}

Test(sim_moves, linear_stop_rests_on_the_line)
{
	struct sim_move m;
	double p0[6], p1[6], pose[6], rest[6], v = 0.25, decel = 2.0, t_stop = 0.5, T;

	line_poses(p0, p1);
	cr_assert_eq(sim_move_plan_linear(&m, p0, p1, v, 1.2), 0);
	cr_assert_eq(sim_move_stop(&m, t_stop, decel), 0);
	T = sim_move_duration(&m);
	cr_assert(T - t_stop <= v / decel + DT);
	for (double t = t_stop; t <= T + DT; t += DT) {
		sim_move_sample(&m, t, pose);
		cr_assert(off_line(pose, p0, p1) < 1e-12);
	}
	sim_move_sample(&m, T, rest);
	sim_move_sample(&m, T + 1, pose);
	cr_assert(memcmp(pose, rest, sizeof(pose)) == 0);
	cr_assert(dist3(rest, p0) < dist3(p1, p0), "stopped short of the target");
	/* a stop at rest changes nothing */
	cr_assert_eq(sim_move_stop(&m, T + 1, decel), 0);
	sim_move_sample(&m, T + 1, pose);
	cr_assert(memcmp(pose, rest, sizeof(pose)) == 0);
}

Test(sim_moves, path_without_blends_is_the_sum)
{
	struct sim_move m;
	double w1[6], w2[6], q[6], T;

	long_joint(w1);
	memcpy(w2, w1, sizeof(w2));
	w2[0] -= 1.0;
	cr_assert_eq(sim_move_path_begin(&m, SIM_MOVE_JOINT, q_home), 0);
	cr_assert_eq(sim_move_path_add(&m, w1, 1.05, 1.4, 0), 0);
	cr_assert_eq(sim_move_path_add(&m, w2, 0.5, 1.0, 0), 0);
	T = trap_T(1.5, 1.05, 1.4) + trap_T(1.0, 0.5, 1.0);
	cr_assert(fabs(sim_move_duration(&m) - T) < 1e-9);
	/* at rest on the waypoint between them */
	sim_move_sample(&m, trap_T(1.5, 1.05, 1.4), q);
	for (int j = 0; j < 6; j++)
		cr_assert(fabs(q[j] - w1[j]) < 1e-12);
	sim_move_sample(&m, T, q);
	cr_assert(memcmp(q, w2, sizeof(q)) == 0);
}

Test(sim_moves, blended_path_does_not_stop_at_the_waypoint)
{
	struct sim_move m;
	double w1[6], w2[6], q[6], prev[6], T, T1 = trap_T(1.5, 1.05, 1.4), r = 0.2, vmin = 1e9,
					       closest = 1e9;

	long_joint(w1);
	memcpy(w2, w1, sizeof(w2));
	w2[0] -= 1.0;
	cr_assert_eq(sim_move_path_begin(&m, SIM_MOVE_JOINT, q_home), 0);
	cr_assert_eq(sim_move_path_add(&m, w1, 1.05, 1.4, r), 0);
	cr_assert_eq(sim_move_path_add(&m, w2, 0.5, 1.0, 0), 0);
	T = sim_move_duration(&m);
	cr_assert(T < T1 + trap_T(1.0, 0.5, 1.0) - 0.1, "no time saved: %g", T);
	/* the second segment starts when 0.2 rad are left of the first */
	sim_move_sample(&m, m.seg[1].start, q);
	cr_assert(fabs(fabs(q[1] - w1[1]) - r) < 1e-9);
	sim_move_sample(&m, 1.0, prev);
	for (double t = 1.0 + DT; t < T - 0.5; t += DT) {
		double s = 0, dd = 0;

		sim_move_sample(&m, t, q);
		for (int j = 0; j < 6; j++) {
			s += (q[j] - prev[j]) * (q[j] - prev[j]);
			dd = fmax(dd, fabs(q[j] - w1[j]));
		}
		vmin = fmin(vmin, sqrt(s) / DT);
		closest = fmin(closest, dd);
		memcpy(prev, q, sizeof(q));
	}
	cr_assert(vmin > 0.1, "the arm nearly stopped: %g rad/s", vmin);
	cr_assert(closest < r, "passed %g rad from the waypoint", closest);
	sim_move_sample(&m, T, q);
	cr_assert(memcmp(q, w2, sizeof(q)) == 0);
}

Test(sim_moves, bad_inputs_are_refused)
{
	struct sim_move m;
	double q1[6], bad[6];

	long_joint(q1);
	memcpy(bad, q1, sizeof(bad));
	bad[3] = NAN;
	cr_assert_eq(sim_move_plan_joint(&m, q_home, bad, 1, 1), -EINVAL);
	cr_assert_eq(sim_move_plan_joint(&m, bad, q1, 1, 1), -EINVAL);
	bad[3] = INFINITY;
	cr_assert_eq(sim_move_plan_linear(&m, q_home, bad, 1, 1), -EINVAL);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, 0, 1), -EINVAL);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, 1, -1), -EINVAL);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, NAN, 1), -EINVAL);
	cr_assert_eq(sim_move_plan_linear(&m, q_home, q1, 1, INFINITY), -EINVAL);
	cr_assert_eq(sim_move_plan_joint(&m, q_home, q1, 1, 1), 0);
	cr_assert_eq(sim_move_path_add(&m, q_home, 1, 1, -0.1), -EINVAL);
	cr_assert_eq(sim_move_stop(&m, 0.5, 0), -EINVAL);
	cr_assert_eq(sim_move_stop(&m, NAN, 1), -EINVAL);
	cr_assert_eq(sim_move_path_begin(&m, (enum sim_move_kind)7, q_home), -EINVAL);
	cr_assert_eq(sim_move_follow(q_home, bad, NULL, 3, q1, NULL), -EINVAL);
	cr_assert_eq(sim_move_follow(q_home, q_home, NULL, 0, q1, NULL), -EINVAL);

	cr_assert_eq(sim_move_path_begin(&m, SIM_MOVE_JOINT, q_home), 0);
	for (int i = 0; i < SIM_MOVE_MAX_SEGS; i++)
		cr_assert_eq(sim_move_path_add(&m, i % 2 ? q_home : q1, 1, 1, 0), 0);
	cr_assert_eq(sim_move_path_add(&m, q1, 1, 1, 0), -ENOSPC);
	/* a stopped plan takes no more segments */
	cr_assert_eq(sim_move_path_begin(&m, SIM_MOVE_JOINT, q_home), 0);
	cr_assert_eq(sim_move_path_add(&m, q1, 1, 1, 0), 0);
	cr_assert_eq(sim_move_stop(&m, 0.5, 1), 0);
	cr_assert_eq(sim_move_path_add(&m, q_home, 1, 1, 0), -EINVAL);
}
