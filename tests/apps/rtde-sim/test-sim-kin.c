// SPDX-License-Identifier: MIT
/* The UR5e's inverse kinematics (apps/rtde-sim/kin.c) against the
 * simulator's forward kinematics: the round trip returns the joint vector it
 * started from, q_near chooses the branch, each joint takes the 2 pi
 * representative nearest q_near within the limits, and what cannot be
 * solved says why. Random joint vectors come from a seeded splitmix64, so a
 * failure repeats. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kin.h"

#define N SIM_ROBOT_DOF

static const double tool[6] = { 0.01, -0.02, 0.15, 0.3, -0.2, 0.1 };

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(splitmix64(s) >> 11) * 0x1p-53);
}

/* Distance of the wrist centre (frame 5's origin) from the base axis. */
static double wrist_radius(const double q[N])
{
	double pose[6], off[6] = { 0, 0, -0.0996, 0, 0, 0 };

	sim_robot_fk(q, off, pose);
	return hypot(pose[0], pose[1]);
}

/*
 * A joint vector within the limits, away from the singularities where the
 * solutions merge and q_near = q no longer singles one out: the wrist
 * (sin q5 = 0), the elbow (sin q3 = 0) and the shoulder (the wrist centre on
 * the cylinder of radius d4 about the base axis).
 */
static void random_q(uint64_t *s, double q[N])
{
	for (;;) {
		for (int i = 0; i < N; i++)
			q[i] = i == 2 ? uniform(s, -M_PI, M_PI) : uniform(s, -2 * M_PI, 2 * M_PI);
		if (fabs(sin(q[4])) > 0.05 && fabs(sin(q[2])) > 0.05 &&
		    wrist_radius(q) > 0.1333 + 0.01)
			return;
	}
}

static double max_diff(const double a[N], const double b[N])
{
	double m = 0;

	for (int i = 0; i < N; i++)
		m = fmax(m, fabs(a[i] - b[i]));
	return m;
}

/* Position and rotation distance of two poses; rotations as matrices, so
 * that the two rotation vectors of an angle of pi compare equal. */
static void pose_diff(const double a[6], const double b[6], double *dp, double *dr)
{
	double ra[9], rb[9];

	sim_robot_rotvec_to_matrix(a + 3, ra);
	sim_robot_rotvec_to_matrix(b + 3, rb);
	*dp = 0;
	*dr = 0;
	for (int i = 0; i < 3; i++)
		*dp = fmax(*dp, fabs(a[i] - b[i]));
	for (int i = 0; i < 9; i++)
		*dr = fmax(*dr, fabs(ra[i] - rb[i]));
}

static void round_trip(const double *off)
{
	uint64_t s = 42;

	for (int k = 0; k < 200; k++) {
		double q[N], pose[6], got[N];

		random_q(&s, q);
		cr_assert_eq(sim_kin_forward(q, off, pose), 0);
		cr_assert_eq(sim_kin_inverse(pose, off, q, got), 0, "case %d", k);
		cr_assert_leq(max_diff(q, got), 1e-9, "case %d: off by %g rad", k,
			      max_diff(q, got));
	}
}

Test(sim_kin, round_trip_returns_q_at_the_flange)
{
	round_trip(NULL);
}

Test(sim_kin, round_trip_returns_q_with_a_tool)
{
	round_trip(tool);
}

/* Every branch is reachable: with q_near next to another solution, that
 * one comes back. */
Test(sim_kin, q_near_chooses_each_branch)
{
	uint64_t s = 7;
	int branches = 0;

	for (int k = 0; k < 50; k++) {
		double q[N], pose[6], sol[8][N];
		int n;

		random_q(&s, q);
		sim_robot_fk(q, tool, pose);
		n = sim_kin_solutions(pose, tool, q, sol);
		cr_assert_geq(n, 1, "case %d", k);
		for (int b = 0; b < n; b++) {
			double near[N], want[N], got[N];
			bool in = true;

			/* the representative of each joint within limits */
			for (int i = 0; i < N; i++) {
				double lim = i == 2 ? M_PI : 2 * M_PI;

				want[i] = remainder(sol[b][i], 2 * M_PI);
				in = in && fabs(want[i]) <= lim;
				near[i] = want[i] + uniform(&s, -0.01, 0.01);
			}
			if (!in)
				continue;
			cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
			cr_assert_leq(max_diff(want, got), 1e-9, "case %d branch %d", k, b);
			branches++;
		}
	}
	cr_assert_geq(branches, 50 * 4, "only %d branches tried", branches);
}

/*
 * Flipping the wrist: the solution with the same shoulder and q5 of the
 * other sign (q6 turns by pi, and q2..q4 move too, since the wrist offset
 * d5 swings to the other side) is returned with q_near next to it. q5
 * negated alone is not enough in general: q2..q4 of the flip may lie
 * farther from q than 2 |q5|.
 */
Test(sim_kin, wrist_flip)
{
	uint64_t s = 11;
	int tried = 0;

	for (int k = 0; k < 400; k++) {
		double q[N], pose[6], near[N], got[N], sol[8][N], best = INFINITY;
		int n, flip = -1;

		random_q(&s, q);
		sim_robot_fk(q, tool, pose);
		n = sim_kin_solutions(pose, tool, q, sol);
		for (int b = 0; b < n; b++) {
			double d = 0;

			if (fabs(remainder(sol[b][0] - q[0], 2 * M_PI)) > 1e-9 ||
			    sol[b][4] * remainder(q[4], 2 * M_PI) > 0)
				continue;
			for (int i = 0; i < N; i++)
				d += pow(remainder(sol[b][i] - q[i], 2 * M_PI), 2);
			if (d < best) {
				best = d;
				flip = b;
			}
		}
		/* the flip moves the wrist centre's offset d5 to the other
		 * side, which may take it out of the elbow's reach */
		if (flip < 0)
			continue;
		for (int i = 0; i < N; i++)
			near[i] = q[i] + remainder(sol[flip][i] - q[i], 2 * M_PI);
		if (fabs(near[2]) > M_PI || fabs(near[0]) > 2 * M_PI || fabs(near[1]) > 2 * M_PI ||
		    fabs(near[3]) > 2 * M_PI || fabs(near[4]) > 2 * M_PI ||
		    fabs(near[5]) > 2 * M_PI)
			continue;
		memcpy(got, near, sizeof(got));
		for (int i = 0; i < N; i++)
			near[i] += uniform(&s, -0.02, 0.02);
		cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
		/* q5's sign as an angle: its representative may be q5 -+ 2 pi */
		cr_assert_lt(remainder(got[4], 2 * M_PI) * remainder(q[4], 2 * M_PI), 0, "case %d",
			     k);
		cr_assert_float_eq(remainder(got[4], 2 * M_PI), -remainder(q[4], 2 * M_PI), 1e-9,
				   "case %d", k);
		cr_assert_float_eq(got[0], q[0], 1e-9, "case %d", k);
		tried++;
	}
	cr_assert_geq(tried, 50, "only %d flips tried", tried);
}

/* FK(IK(p)) = p from an unrelated q_near. */
Test(sim_kin, forward_of_inverse_is_the_pose)
{
	uint64_t s = 3;
	static const double nears[3][N] = {
		{ 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 },
		{ 0, 0, 0, 0, 0, 0 },
		{ 3, -1, -2, 1, 2, -3 },
	};

	for (int k = 0; k < 200; k++) {
		double q[N], pose[6], got[N], back[6], dp, dr;

		random_q(&s, q);
		sim_robot_fk(q, tool, pose);
		cr_assert_eq(sim_kin_inverse(pose, tool, nears[k % 3], got), 0, "case %d", k);
		cr_assert_eq(sim_kin_forward(got, tool, back), 0);
		pose_diff(pose, back, &dp, &dr);
		cr_assert_leq(dp, 1e-9, "case %d: %g m", k, dp);
		cr_assert_leq(dr, 1e-9, "case %d: %g", k, dr);
		for (int i = 0; i < N; i++)
			cr_assert_leq(fabs(got[i]), i == 2 ? M_PI : 2 * M_PI);
	}
}

/* UR's "no solution": beyond the arm's reach (about 0.85 m), and inside
 * the cylinder about the base axis the wrist centre cannot enter. */
Test(sim_kin, out_of_reach_is_erange)
{
	static const double near[N] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };
	double far[6] = { 2.0, 0, 0.5, 0, M_PI, 0 };
	double inside[6] = { 0, 0, 0.5, 0, 0, 0 }; /* flange z up on the base axis */
	double got[N] = { 0 };

	cr_assert_eq(sim_kin_inverse(far, NULL, near, got), -ERANGE);
	cr_assert_eq(sim_kin_inverse(far, tool, near, got), -ERANGE);
	far[0] = 0.8; /* 1 m out, level with the shoulder */
	far[1] = 0.6;
	far[2] = 0.16;
	cr_assert_eq(sim_kin_inverse(far, NULL, near, got), -ERANGE);
	cr_assert_eq(sim_kin_inverse(inside, NULL, near, got), -ERANGE);
}

/* Each joint takes its representative nearest q_near, within limits. */
Test(sim_kin, nearest_representative)
{
	double q[N] = { 3.0, -1.0, 1.8, -1.0, 1.5, 6.0 };
	double pose[6], near[N], got[N];

	sim_robot_fk(q, tool, pose);

	/* q1 = 3 with q_near -3: 3 - 2 pi = -3.28 is 0.28 away, 3 is 6 */
	memcpy(near, q, sizeof(near));
	near[0] = -3.0;
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[0], 3.0 - 2 * M_PI, 1e-9);
	cr_assert_float_eq(got[2], 1.8, 1e-9);

	/* q6 = 6 with q_near -0.2: 6 - 2 pi */
	near[5] = -0.2;
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[5], 6.0 - 2 * M_PI, 1e-9);

	/* q_near beyond the limit: 6 + 2 pi would be nearest but is out */
	memcpy(near, q, sizeof(near));
	near[5] = 12.5;
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[5], 6.0, 1e-9);
	/* (-12.5 would pick the flipped wrist: its q6, 2.86 - 2 pi, is nearer) */

	/* q1 = 6 asked for near 2 pi - 0.1: 6, not 6 - 2 pi */
	memcpy(near, q, sizeof(near));
	near[0] = 2 * M_PI - 0.1;
	q[0] = 6.0;
	sim_robot_fk(q, tool, pose);
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[0], 6.0, 1e-9);
	near[0] = 0;
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[0], 6.0 - 2 * M_PI, 1e-9);
}

/* q5 = 0: axis 6 lines up with axes 2, 3 and 4, so the pose fixes only
 * q2 + q3 + q4 + q6; q6 comes from q_near and q2..q4 take the rest. */
Test(sim_kin, wrist_singularity_takes_q6_from_q_near)
{
	double q[N] = { 0.4, -1.3, 1.6, -1.0, 0, 0.7 };
	double pose[6], near[N], got[N], back[6], dp, dr;

	sim_robot_fk(q, tool, pose);
	cr_assert_eq(sim_kin_inverse(pose, tool, q, got), 0);
	cr_assert_leq(max_diff(q, got), 1e-9);

	memcpy(near, q, sizeof(near));
	near[5] = 2.0;
	cr_assert_eq(sim_kin_inverse(pose, tool, near, got), 0);
	cr_assert_float_eq(got[5], 2.0, 1e-9);
	cr_assert_float_eq(
		remainder(got[1] + got[2] + got[3] + got[5] - (q[1] + q[2] + q[3] + q[5]),
			  2 * M_PI),
		0, 1e-9);
	sim_robot_fk(got, tool, back);
	pose_diff(pose, back, &dp, &dr);
	cr_assert_leq(dp, 1e-9);
	cr_assert_leq(dr, 1e-9);
}

/* Solutions that exist only outside the limits: -EDOM. */
Test(sim_kin, outside_the_limits_is_edom)
{
	double q[N] = { 0.5, -1.2, 1.5, -1.0, 1.5, 0.3 };
	double lo[N], hi[N], pose[6], got[N], sol[8][N];
	int n;

	for (int i = 0; i < N; i++) {
		hi[i] = i == 2 ? M_PI : 2 * M_PI;
		lo[i] = -hi[i];
	}
	sim_robot_fk(q, tool, pose);
	cr_assert_eq(sim_kin_inverse_limited(pose, tool, q, lo, hi, got), 0);
	cr_assert_leq(max_diff(q, got), 1e-9);

	/* the elbow confined to (0.1, 0.2): no branch has it there */
	n = sim_kin_solutions(pose, tool, q, sol);
	cr_assert_geq(n, 4);
	for (int b = 0; b < n; b++)
		cr_assert(fabs(sol[b][2]) > 0.2 || fabs(sol[b][2]) < 0.1);
	lo[2] = 0.1;
	hi[2] = 0.2;
	cr_assert_eq(sim_kin_inverse_limited(pose, tool, q, lo, hi, got), -EDOM);
	lo[2] = 0.3;
	cr_assert_eq(sim_kin_inverse_limited(pose, tool, q, lo, hi, got), -EINVAL);
}

Test(sim_kin, bad_input_is_einval)
{
	double q[N] = { 0.5, -1.2, 1.5, -1.0, 1.5, 0.3 };
	double pose[6], p[6], o[6], n[N], got[N];

	cr_assert_eq(sim_kin_forward(q, tool, pose), 0);
	cr_assert_eq(sim_kin_forward(NULL, tool, pose), -EINVAL);
	cr_assert_eq(sim_kin_forward(q, tool, NULL), -EINVAL);
	memcpy(n, q, sizeof(n));
	n[3] = NAN;
	cr_assert_eq(sim_kin_forward(n, tool, pose), -EINVAL);
	memcpy(o, tool, sizeof(o));
	o[4] = INFINITY;
	cr_assert_eq(sim_kin_forward(q, o, pose), -EINVAL);

	cr_assert_eq(sim_kin_inverse(NULL, tool, q, got), -EINVAL);
	cr_assert_eq(sim_kin_inverse(pose, tool, NULL, got), -EINVAL);
	cr_assert_eq(sim_kin_inverse(pose, tool, q, NULL), -EINVAL);
	memcpy(p, pose, sizeof(p));
	p[0] = NAN;
	cr_assert_eq(sim_kin_inverse(p, tool, q, got), -EINVAL);
	memcpy(p, pose, sizeof(p));
	p[5] = -INFINITY;
	cr_assert_eq(sim_kin_inverse(p, tool, q, got), -EINVAL);
	cr_assert_eq(sim_kin_inverse(pose, o, q, got), -EINVAL);
	cr_assert_eq(sim_kin_inverse(pose, tool, n, got), -EINVAL);
	/* NULL offset is the flange, as sim_robot_fk() */
	cr_assert_eq(sim_kin_forward(q, NULL, pose), 0);
	cr_assert_eq(sim_kin_inverse(pose, NULL, q, got), 0);
	cr_assert_leq(max_diff(q, got), 1e-9);
}
