// SPDX-License-Identifier: MIT
/*
 * A UR arm's inverse kinematics in closed form (see kin.h for the API).
 *
 * Derivation, from a standard DH table of robot.c (A_i = Rz(q_i) Tz(d_i)
 * Tx(a_i) Rx(alpha_i), alpha = pi/2, 0, 0, pi/2, -pi/2, 0; the T_06 below
 * is the flange, the TCP offset taken off first):
 * - Joints 2, 3 and 4 turn about parallel axes, all along z1 = (s1, -c1, 0)
 *   in the base frame, and every link between them is offset along z1 only
 *   by d4 (d2 = d3 = 0). y4 = z1 (alpha4 = pi/2), and z5 = -s5 x4 + c5 y4
 *   (alpha5 = -pi/2), so z6 = z5 has z6 . z1 = c5, and the origin of frame 5,
 *   p05 = p06 - d6 z6, has p05 . z1 = d4.
 * - q1: with p05 = r (cos phi, sin phi) in the xy plane, r sin(q1 - phi) =
 *   d4, so q1 = phi + asin(d4 / r) or phi + pi - asin(d4 / r) (shoulder
 *   left/right); r < d4 means the wrist cannot be reached: no solution.
 * - q5 = +-acos(z6 . z1) (wrist up/down), computed as an atan2 (below).
 * - q6: z1 seen from frame 6 is (s5 c6, -s5 s6, c5), so
 *   q6 = atan2(-(y6 . z1) / s5, (x6 . z1) / s5). At s5 = 0 (wrist
 *   singularity) axes 4 and 6 line up and only q4 + q6 is defined: q6 is
 *   taken from q_near and q4 makes up the rest.
 * - q2, q3, q4: T_14 = A1^-1 T_06 A6^-1 A5^-1 = A2 A3 A4 is planar: its
 *   origin is (a2 c2 + a3 c23, a2 s2 + a3 s23, d4) and its rotation
 *   Rz(q2 + q3 + q4) Rx(pi/2). The law of cosines gives q3 = +-acos(...)
 *   (elbow up/down), then q2 from the angle of the origin, and q4 from the
 *   sum.
 * Every candidate is checked with sim_robot_fk_dh(), the simulator's own
 * forward kinematics of the same table, so a slip in the algebra above
 * shows up as a rejected solution, never as a wrong answer.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "kin.h"
#include "linalg.h"

#define N SIM_ROBOT_DOF
#define NSOL 8

/* The twists of every UR arm (robot.c's); the lengths come in a struct
 * sim_dh. */
static const double dh_sa[N] = { 1, 0, 0, 1, -1, 0 };
static const double dh_ca[N] = { 0, 1, 1, 0, 0, 1 };

/* Below this |sin q5| the wrist is singular and q6 is free: atan2 of two
 * round-off-sized numbers would pick an arbitrary q6. */
#define WRIST_EPS 1e-10
/* acos/asin arguments may exceed 1 by round-off on a reachable pose */
#define ARG_SLACK 1e-9
/* a representative may sit this far outside a limit (pi for the elbow) */
#define LIMIT_SLACK 1e-12

struct frame {
	double R[9]; /* row-major */
	double p[3];
};

/* out = a * b (out may alias neither) */
static void compose(const struct frame *a, const struct frame *b, struct frame *out)
{
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			out->R[3 * i + j] = a->R[3 * i] * b->R[j] + a->R[3 * i + 1] * b->R[3 + j] +
					    a->R[3 * i + 2] * b->R[6 + j];
		out->p[i] = a->p[i] + a->R[3 * i] * b->p[0] + a->R[3 * i + 1] * b->p[1] +
			    a->R[3 * i + 2] * b->p[2];
	}
}

/* out = a^-1 = (R^T, -R^T p) */
static void invert(const struct frame *a, struct frame *out)
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			out->R[3 * i + j] = a->R[3 * j + i];
	for (int i = 0; i < 3; i++)
		out->p[i] = -(a->R[i] * a->p[0] + a->R[3 + i] * a->p[1] + a->R[6 + i] * a->p[2]);
}

/* A_i(theta), joint i 0-based */
static void dh_frame(const struct sim_dh *dh, int i, double theta, struct frame *out)
{
	double ct = cos(theta), st = sin(theta), sa = dh_sa[i], ca = dh_ca[i];
	struct frame f = {
		.R = { ct, -st * ca, st * sa, st, ct * ca, -ct * sa, 0, sa, ca },
		.p = { dh->a[i] * ct, dh->a[i] * st, dh->d[i] },
	};

	*out = f;
}

static void pose_frame(const double pose[6], struct frame *out)
{
	sim_robot_rotvec_to_matrix(pose + 3, out->R);
	memcpy(out->p, pose, sizeof(out->p));
}

static double clamp1(double x)
{
	return x > 1 ? 1 : x < -1 ? -1 : x;
}

/* Position [m] and rotation [rad] error of @q's FK against @target. */
static void fk_error(const struct sim_dh *dh, const double q[N], const double off[6],
		     const struct frame *target, double *dp, double *dr)
{
	double pose[6], rv[3], e[3];
	struct frame f, fi, d;

	sim_robot_fk_dh(dh, q, off, pose);
	pose_frame(pose, &f);
	for (int i = 0; i < 3; i++)
		e[i] = f.p[i] - target->p[i];
	*dp = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
	invert(&f, &fi);
	compose(&fi, target, &d);
	sim_robot_matrix_to_rotvec(d.R, rv);
	*dr = sqrt(rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]);
}

/* The closed form above for the flange frame @t06: up to 8 raw solutions. */
static int solve(const struct sim_dh *dh, const struct frame *t06, double q6_free,
		 double sol[NSOL][N])
{
	const double a2 = dh->a[1], a3 = dh->a[2], d4 = dh->d[3], d6 = dh->d[5];
	const double *R = t06->R;
	double z6[3] = { R[2], R[5], R[8] };
	double p05[3], r, phi, s;
	int n = 0;

	for (int i = 0; i < 3; i++)
		p05[i] = t06->p[i] - d6 * z6[i];
	r = hypot(p05[0], p05[1]);
	/* the wrist centre inside the cylinder of radius d4 about the base
	 * axis: no shoulder angle puts it there */
	if (r < d4 * (1 - ARG_SLACK))
		return 0;
	phi = atan2(p05[1], p05[0]);
	s = asin(clamp1(d4 / r));

	for (int sh = 0; sh < 2; sh++) {
		double q1 = sh ? phi + M_PI - s : phi + s;
		double s1 = sin(q1), c1 = cos(q1);
		double c5 = z6[0] * s1 - z6[1] * c1;
		double xz = R[0] * s1 - R[3] * c1; /* x6 . z1 = s5 c6 */
		double yz = R[1] * s1 - R[4] * c1; /* y6 . z1 = -s5 s6 */
		/* |s5| from the other two components of z1 in frame 6, not
		 * acos(c5): acos loses half the digits near q5 = 0, exactly
		 * where the wrist singularity test needs them */
		double q5a = atan2(hypot(xz, yz), c5);

		for (int wr = 0; wr < 2; wr++) {
			double q5 = wr ? -q5a : q5a;
			double s5 = sin(q5), q6, q234, x, y, c3;
			struct frame a, ai, t, u, v;

			if (fabs(s5) < WRIST_EPS)
				q6 = q6_free;
			else if (s5 > 0)
				q6 = atan2(-yz, xz);
			else
				q6 = atan2(yz, -xz);

			/* T_14 = A1^-1 T_06 A6^-1 A5^-1 */
			dh_frame(dh, 0, q1, &a);
			invert(&a, &ai);
			compose(&ai, t06, &t);
			dh_frame(dh, 5, q6, &a);
			invert(&a, &ai);
			compose(&t, &ai, &u);
			dh_frame(dh, 4, q5, &a);
			invert(&a, &ai);
			compose(&u, &ai, &v);
			q234 = atan2(v.R[3], v.R[0]);
			x = v.p[0];
			y = v.p[1];
			c3 = (x * x + y * y - a2 * a2 - a3 * a3) / (2 * a2 * a3);
			/* the wrist farther than a2 + a3 (or nearer than
			 * |a2 - a3|) from the shoulder: out of reach */
			if (fabs(c3) > 1 + ARG_SLACK)
				continue;
			c3 = clamp1(c3);

			for (int el = 0; el < 2; el++) {
				double q3 = el ? -acos(c3) : acos(c3);
				double q2 = atan2(y, x) - atan2(a3 * sin(q3), a2 + a3 * cos(q3));
				double *q = sol[n++];

				q[0] = q1;
				q[1] = q2;
				q[2] = q3;
				q[3] = q234 - q2 - q3;
				q[4] = q5;
				q[5] = q6;
			}
		}
	}
	return n;
}

/*
 * @q[i] + 2 pi k nearest @near within [@lo, @hi]; false when no
 * representative lies within.
 */
static bool wrap_near(double *q, double near, double lo, double hi)
{
	double kmin = ceil((lo - LIMIT_SLACK - *q) / (2 * M_PI));
	double kmax = floor((hi + LIMIT_SLACK - *q) / (2 * M_PI));
	double k = round((near - *q) / (2 * M_PI));

	if (kmin > kmax)
		return false;
	if (k < kmin)
		k = kmin;
	if (k > kmax)
		k = kmax;
	*q += 2 * M_PI * k;
	/* the slack must not hand out a value past the limit */
	if (*q < lo)
		*q = lo;
	if (*q > hi)
		*q = hi;
	return true;
}

/* Validate, and take the TCP offset off @pose: the flange frame T_06. */
static int flange_target(const double pose[6], const double off[6], struct frame *tcp,
			 struct frame *t06)
{
	struct frame o, oi;

	if (!pose || !all_finite(pose, 6) || (off && !all_finite(off, 6)))
		return -EINVAL;
	pose_frame(pose, tcp);
	if (off) {
		pose_frame(off, &o);
		invert(&o, &oi);
		compose(tcp, &oi, t06);
	} else {
		*t06 = *tcp;
	}
	return 0;
}

/* Keep the raw solutions whose FK meets @tcp; returns how many. */
static int verified(const struct sim_dh *dh, const double off[6], const struct frame *tcp,
		    double raw[NSOL][N], int n, double sol[NSOL][N])
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		double dp, dr;

		fk_error(dh, raw[i], off, tcp, &dp, &dr);
		if (dp <= SIM_KIN_TOL && dr <= SIM_KIN_TOL)
			memcpy(sol[m++], raw[i], sizeof(raw[i]));
	}
	return m;
}

int sim_kin_solutions_dh(const struct sim_dh *dh, const double pose[6], const double tcp_offset[6],
			 const double q_near[N], double sol[NSOL][N])
{
	double raw[NSOL][N];
	struct frame tcp, t06;
	int n, err;

	if (!sol || (q_near && !all_finite(q_near, N)))
		return -EINVAL;
	err = flange_target(pose, tcp_offset, &tcp, &t06);
	if (err)
		return err;
	if (!dh)
		dh = &sim_dh_ur5e;
	n = solve(dh, &t06, q_near ? q_near[5] : 0, raw);
	return verified(dh, tcp_offset, &tcp, raw, n, sol);
}

int sim_kin_solutions(const double pose[6], const double tcp_offset[6], const double q_near[N],
		      double sol[NSOL][N])
{
	return sim_kin_solutions_dh(&sim_dh_ur5e, pose, tcp_offset, q_near, sol);
}

int sim_kin_inverse_dh(const struct sim_dh *dh, const double pose[6], const double tcp_offset[6],
		       const double q_near[N], const double q_min[N], const double q_max[N],
		       double q_out[N])
{
	struct sim_robot_config cfg;
	double sol[NSOL][N], best_d = INFINITY;
	int n, best = -1;

	if (!q_near || !q_out || !all_finite(q_near, N))
		return -EINVAL;
	if ((q_min && !all_finite(q_min, N)) || (q_max && !all_finite(q_max, N)))
		return -EINVAL;
	sim_robot_config_default(&cfg);
	if (!q_min)
		q_min = cfg.q_min;
	if (!q_max)
		q_max = cfg.q_max;
	for (int i = 0; i < N; i++)
		if (q_min[i] > q_max[i])
			return -EINVAL;
	n = sim_kin_solutions_dh(dh, pose, tcp_offset, q_near, sol);
	if (n < 0)
		return n;
	if (n == 0)
		return -ERANGE;

	for (int s = 0; s < n; s++) {
		double d = 0;
		bool ok = true;

		for (int i = 0; i < N && ok; i++) {
			ok = wrap_near(&sol[s][i], q_near[i], q_min[i], q_max[i]);
			d += (sol[s][i] - q_near[i]) * (sol[s][i] - q_near[i]);
		}
		if (ok && d < best_d) {
			best_d = d;
			best = s;
		}
	}
	if (best < 0)
		return -EDOM;
	memcpy(q_out, sol[best], sizeof(sol[best]));
	return 0;
}

int sim_kin_inverse_limited(const double pose[6], const double tcp_offset[6],
			    const double q_near[N], const double q_min[N], const double q_max[N],
			    double q_out[N])
{
	return sim_kin_inverse_dh(&sim_dh_ur5e, pose, tcp_offset, q_near, q_min, q_max, q_out);
}

int sim_kin_inverse(const double pose[6], const double tcp_offset[6], const double q_near[N],
		    double q_out[N])
{
	return sim_kin_inverse_dh(&sim_dh_ur5e, pose, tcp_offset, q_near, NULL, NULL, q_out);
}

int sim_kin_forward_dh(const struct sim_dh *dh, const double q[N], const double tcp_offset[6],
		       double pose[6])
{
	if (!q || !pose || !all_finite(q, N) || (tcp_offset && !all_finite(tcp_offset, 6)))
		return -EINVAL;
	sim_robot_fk_dh(dh, q, tcp_offset, pose);
	return 0;
}

int sim_kin_forward(const double q[N], const double tcp_offset[6], double pose[6])
{
	return sim_kin_forward_dh(&sim_dh_ur5e, q, tcp_offset, pose);
}
