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
#include "sim.h"

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

/* ---- the CB3 profile's UR5 ---------------------------------------------- */

/* q = 0 by hand from the DH product: every joint rotation is identity, so
 * the flange sits at (a2 + a3, -(d4 + d6), d1 - d5) with the rotation
 * Rx(pi/2); the UR5e's analogue is robot.c's (-0.8172, -0.2329, 0.0628). */
Test(sim_kin, ur5_fk_of_zero_pose_is_the_hand_computed_pose)
{
	static const double q[N] = { 0 };
	static const double ur5[6] = {
		-0.425 - 0.39225, -(0.10915 + 0.0823), 0.089159 - 0.09465, M_PI / 2, 0, 0
	};
	static const double ur5e[6] = { -0.8172, -0.2329, 0.0628, M_PI / 2, 0, 0 };
	double pose[6], dp, dr;

	cr_assert_float_eq(ur5[0], -0.81725, 1e-12);
	cr_assert_float_eq(ur5[1], -0.19145, 1e-12);
	cr_assert_float_eq(ur5[2], -0.005491, 1e-12);
	cr_assert_eq(sim_kin_forward_dh(&sim_dh_ur5, q, NULL, pose), 0);
	pose_diff(pose, ur5, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "UR5 off by %g m", dp);
	cr_assert_leq(dr, 1e-12, "UR5 off by %g", dr);
	cr_assert_eq(sim_kin_forward_dh(&sim_dh_ur5e, q, NULL, pose), 0);
	pose_diff(pose, ur5e, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "UR5e off by %g m", dp);
	/* NULL is the UR5e, as the functions without _dh */
	cr_assert_eq(sim_kin_forward_dh(NULL, q, NULL, pose), 0);
	pose_diff(pose, ur5e, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "NULL off by %g m", dp);
}

/* Upright (shoulder and wrist 1 at -pi/2): the links stack along z. */
Test(sim_kin, ur5_fk_of_upright_pose)
{
	static const double q[N] = { 0, -M_PI / 2, 0, -M_PI / 2, 0, 0 };
	double pose[6];

	sim_robot_fk_dh(&sim_dh_ur5, q, NULL, pose);
	cr_assert_float_eq(pose[0], 0, 1e-12);
	cr_assert_float_eq(pose[1], -(0.10915 + 0.0823), 1e-12);
	cr_assert_float_eq(pose[2], 0.089159 + 0.425 + 0.39225 + 0.09465, 1e-12);
}

/* The UR5's IK returns the joints its FK started from, at the flange and
 * with a tool, and solving a UR5 pose with the UR5e's table does not. */
Test(sim_kin, ur5_round_trip_returns_q)
{
	const struct sim_dh *dh = &sim_dh_ur5;
	uint64_t s = 7;
	int k = 0, tries = 0, wrong = 0;

	while (k < 200) {
		double q[N], pose[6], got[N], e[N], wc[6];
		double off5[6] = { 0, 0, -dh->d[5], 0, 0, 0 };
		const double *off = k % 2 ? tool : NULL;

		cr_assert_lt(++tries, 10000);
		for (int i = 0; i < N; i++)
			q[i] = i == 2 ? uniform(&s, -M_PI, M_PI) : uniform(&s, -2 * M_PI, 2 * M_PI);
		sim_robot_fk_dh(dh, q, off5, wc);
		if (fabs(sin(q[4])) < 0.05 || fabs(sin(q[2])) < 0.05 ||
		    hypot(wc[0], wc[1]) < dh->d[3] + 0.01)
			continue;
		cr_assert_eq(sim_kin_forward_dh(dh, q, off, pose), 0);
		cr_assert_eq(sim_kin_inverse_dh(dh, pose, off, q, NULL, NULL, got), 0, "case %d",
			     k);
		cr_assert_leq(max_diff(q, got), 1e-9, "case %d: off by %g rad", k,
			      max_diff(q, got));
		if (sim_kin_inverse(pose, off, q, e) != 0 || max_diff(q, e) > 1e-6)
			wrong++;
		k++;
	}
	cr_assert_eq(wrong, 200, "the UR5e solved %d UR5 poses", 200 - wrong);
}

/* The robot of a CB3 sim reports the UR5's pose, the e-Series the UR5e's. */
Test(sim_kin, cb3_profile_robot_is_a_ur5)
{
	struct sim_opts o;
	struct sim *sim;
	double want[6], dp, dr;
	int err = 0;

	sim_opts_default(&o);
	o.profile = SIM_PROFILE_CB3;
	sim = sim_new(&o, 0, &err);
	cr_assert(sim, "sim_new: %d", err);
	cr_assert_eq(memcmp(&sim->robot.cfg.dh, &sim_dh_ur5, sizeof(sim_dh_ur5)), 0);
	sim_robot_fk_dh(&sim_dh_ur5, sim->robot.actual_q, sim->robot.tcp_offset, want);
	pose_diff(sim->robot.actual_TCP_pose, want, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "off by %g m", dp);
	cr_assert_leq(dr, 1e-12, "off by %g", dr);
	sim_robot_fk(sim->robot.actual_q, sim->robot.tcp_offset, want);
	pose_diff(sim->robot.actual_TCP_pose, want, &dp, &dr);
	cr_assert_gt(dp, 0.01, "a CB3 reports the UR5e pose");
	sim_free(sim);

	o.profile = SIM_PROFILE_ESERIES;
	sim = sim_new(&o, 0, &err);
	cr_assert(sim, "sim_new: %d", err);
	cr_assert_eq(memcmp(&sim->robot.cfg.dh, &sim_dh_ur5e, sizeof(sim_dh_ur5e)), 0);
	sim_robot_fk(sim->robot.actual_q, sim->robot.tcp_offset, want);
	pose_diff(sim->robot.actual_TCP_pose, want, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "off by %g m", dp);
	sim_free(sim);
}

/* A UR5 robot at q = 0 publishes the hand-computed flange pose, and its
 * kinematics requests answer with the UR5's table. */
Test(sim_kin, ur5_robot_reports_and_solves_the_ur5_pose)
{
	static const double want[6] = { -0.81725, -0.19145, -0.005491, M_PI / 2, 0, 0 };
	static const double q[N] = { 0.5, -1.2, 1.5, -1.0, 1.5, 0.3 };
	struct sim_robot_config cfg;
	static struct sim_robot r;
	struct sim_robot_req req = { .id = 1, .kind = RTL_RTDE_REQ_FORWARD_KIN };
	double pose[6], dp, dr;

	sim_robot_config_default(&cfg);
	cr_assert_eq(memcmp(&cfg.dh, &sim_dh_ur5e, sizeof(cfg.dh)), 0);
	cfg.dh = sim_dh_ur5;
	memset(cfg.q0, 0, sizeof(cfg.q0));
	cr_assert_eq(sim_robot_init(&r, &cfg), 0);
	pose_diff(r.actual_TCP_pose, want, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "off by %g m", dp);
	cr_assert_leq(dr, 1e-12, "off by %g", dr);

	memcpy(req.arg, q, sizeof(q));
	cr_assert_eq(sim_robot_request(&r, &req, 0), 0);
	sim_robot_fk_dh(&sim_dh_ur5, q, r.tcp_offset, pose);
	pose_diff(r.req_result, pose, &dp, &dr);
	cr_assert_leq(dp, 1e-12, "FK off by %g m", dp);

	memset(&req, 0, sizeof(req));
	req.id = 2;
	req.kind = RTL_RTDE_REQ_INVERSE_KIN;
	req.flags = RTL_RTDE_REQ_FLAG_NEAR;
	memcpy(req.arg, pose, sizeof(pose));
	memcpy(req.arg + 6, q, sizeof(q));
	cr_assert_eq(sim_robot_request(&r, &req, 0), 0);
	cr_assert_leq(max_diff(r.req_result, q), 1e-9, "IK off by %g", max_diff(r.req_result, q));

	cfg.dh.a[1] = 0;
	cr_assert_eq(sim_robot_init(&r, &cfg), -EINVAL);
}
