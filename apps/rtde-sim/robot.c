// SPDX-License-Identifier: MIT
/*
 * The simulated UR5e: kinematics, trajectory generation, limits, and the
 * outputs a controller publishes, as one step function (see robot.h for the
 * model and its order).
 *
 * Numbers worth knowing:
 * - Kinematics: the standard DH table of cfg.dh, the UR5e's by default
 *   and the UR5's on the CB3 profile. Frame 0 is the controller's base
 *   frame, so q = 0 puts the flange at (a2 + a3, -(d4 + d6), d1 - d5) =
 *   (-0.8172, -0.2329, 0.0628) with the rotation vector (pi/2, 0, 0),
 *   which is what a UR5e reports (a UR5: (-0.81725, -0.19145, -0.005491)).
 * - speedl inverts the Jacobian by damped least squares,
 *   qd = J^T (J J^T + lambda^2 I)^-1 v with lambda = 0.01: away from
 *   singularities (singular values >= 0.1) the error is below 1% and the
 *   pose feedback (gain 0.1 / period) removes what is left; near them the
 *   joint speeds stay bounded and the joint limits take over.
 * - Dynamics are for plausible numbers, not identification: gravity from
 *   UR's published UR5e link masses and centres of mass, a diagonal
 *   inertia, viscous friction, and torque constants of the order of UR's
 *   joint sizes. Temperatures follow I^2 with a 10-minute time constant.
 * - Noise: splitmix64 and Box-Muller, so a seed gives one exact sequence
 *   on every machine with IEEE doubles.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "robot.h"
#include "linalg.h"

#define N SIM_ROBOT_DOF

/* ---- UR5e / UR5 ------------------------------------------------------------ */

const struct sim_dh sim_dh_ur5e = {
	.d = { 0.1625, 0, 0, 0.1333, 0.0997, 0.0996 },
	.a = { 0, -0.425, -0.3922, 0, 0, 0 },
};
const struct sim_dh sim_dh_ur5 = {
	.d = { 0.089159, 0, 0, 0.10915, 0.09465, 0.0823 },
	.a = { 0, -0.425, -0.39225, 0, 0, 0 },
};
/* sin and cos of alpha = pi/2, 0, 0, pi/2, -pi/2, 0, exactly */
static const double dh_sa[N] = { 1, 0, 0, 1, -1, 0 };
static const double dh_ca[N] = { 0, 1, 1, 0, 0, 1 };

/* Link masses [kg] and centres of mass in their DH frames [m] (UR). */
static const double link_mass[N] = { 3.761, 8.058, 2.846, 1.37, 1.3, 0.365 };
static const double link_com[N][3] = {
	{ 0, -0.02561, 0.00193 }, { 0.2125, 0, 0.11336 }, { 0.15, 0, 0.0265 },
	{ 0, -0.0018, 0.01634 },  { 0, 0.0018, 0.01634 }, { 0, 0, -0.001159 },
};
static const double torque_const[N] = { 11.0, 11.0, 11.0, 7.5, 7.5, 7.5 };  /* N m / A */
static const double joint_inertia[N] = { 2.0, 2.5, 0.9, 0.15, 0.15, 0.05 }; /* kg m^2 */
static const double viscous[N] = { 6.0, 6.0, 4.0, 1.5, 1.5, 1.5 };	    /* N m s */

#define GRAVITY 9.82
#define DLS_LAMBDA 0.01
#define CLIK_GAIN 0.1 /* per control period */
/* A stopped arm's joints below this [rad/s] are at rest (the stop's tail). */
#define STOP_SNAP_SPEED 1e-6
#define SERVO_BRAKE 0.9 /* share of the acceleration limit servoj plans to brake with */
#define T_AMBIENT 28.0
#define T_RISE 0.8 /* deg C per A^2 at steady state */
#define T_TAU 600.0
#define V_SUPPLY 48.0
#define P_IDLE 35.0   /* W drawn by the arm's electronics */
#define R_WINDING 0.3 /* ohm */
#define EXEC_BASE_MS 0.35
#define EXEC_MOVING_MS 0.05
#define EXEC_JITTER_MS 0.03
#define EXEC_MIN_MS 0.3
#define EXEC_MAX_MS 0.6
#define FORCE_ADMIT_LIN 0.005 /* force mode: m/(N s) on a force axis */
#define FORCE_ADMIT_ANG 0.05  /* rad/(N m s) on a torque axis */
#define TEACH_DAMPING 100.0   /* teach mode: N s/m from push to TCP speed */
#define MUC_LAG_MAX 1e-3      /* move_until_contact: the most the TCP may lag its line [m] */

static const char wd_text[] = "rtde-sim: RTDE watchdog: no new heartbeat within the timeout, "
			      "stopping the robot";

/* out = m * v (out may not alias v) */
static void matvec3(const double m[9], const double v[3], double out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
}

/* out = m^T * v */
static void matvec3_t(const double m[9], const double v[3], double out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = m[i] * v[0] + m[3 + i] * v[1] + m[6 + i] * v[2];
}

void sim_robot_rotvec_to_matrix(const double rv[3], double m[9])
{
	double th = norm3(rv);
	double k[3], c, s, v;

	if (th < 1e-12) {
		/* first order: I + [rv]x, exact to the precision of doubles */
		double t[9] = { 1, -rv[2], rv[1], rv[2], 1, -rv[0], -rv[1], rv[0], 1 };

		memcpy(m, t, sizeof(t));
		return;
	}
	for (int i = 0; i < 3; i++)
		k[i] = rv[i] / th;
	c = cos(th);
	s = sin(th);
	v = 1 - c;
	/* Rodrigues: c I + s [k]x + (1 - c) k k^T */
	m[0] = c + v * k[0] * k[0];
	m[1] = v * k[0] * k[1] - s * k[2];
	m[2] = v * k[0] * k[2] + s * k[1];
	m[3] = v * k[1] * k[0] + s * k[2];
	m[4] = c + v * k[1] * k[1];
	m[5] = v * k[1] * k[2] - s * k[0];
	m[6] = v * k[2] * k[0] - s * k[1];
	m[7] = v * k[2] * k[1] + s * k[0];
	m[8] = c + v * k[2] * k[2];
}

void sim_robot_matrix_to_rotvec(const double m[9], double rv[3])
{
	/* 2 sin(th) k = vee(m - m^T); 2 cos(th) + 1 = trace. atan2 keeps the
	 * angle accurate at both ends, where acos alone would not. */
	double v[3] = { m[7] - m[5], m[2] - m[6], m[3] - m[1] };
	double s = norm3(v) / 2, c = (m[0] + m[4] + m[8] - 1) / 2;
	double th = atan2(s, c);
	double b[9], n[3], len;
	int k = 0;

	if (c > 0) {
		/* th < pi/2: the skew part holds the axis well */
		double f = s < 1e-12 ? 0.5 : th / (2 * s);

		for (int i = 0; i < 3; i++)
			rv[i] = f * v[i];
		return;
	}
	/* th >= pi/2: the skew part vanishes toward pi; the symmetric part
	 * (m + m^T) / 2 - c I = (1 - c) k k^T does not. Take its strongest
	 * column, and the sign from the skew part. */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			b[3 * i + j] = (m[3 * i + j] + m[3 * j + i]) / 2 - (i == j ? c : 0);
	if (b[4] > b[3 * k + k])
		k = 1;
	if (b[8] > b[3 * k + k])
		k = 2;
	for (int i = 0; i < 3; i++)
		n[i] = b[3 * i + k];
	len = norm3(n);
	if (dot3(n, v) < 0)
		len = -len;
	for (int i = 0; i < 3; i++)
		rv[i] = th * n[i] / len;
}

/* ---- kinematics ------------------------------------------------------------ */

struct frame {
	double R[9];
	double p[3];
};

/*
 * f[0] = base, f[i] = frame after joint i (DH frame i), f[7] = TCP. Joint i
 * (0-based) turns about the z axis of f[i] through f[i].p.
 */
static void chain(const struct sim_dh *dh, const double q[N], const double off[6],
		  struct frame f[N + 2])
{
	f[0] = (struct frame){ .R = { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
	for (int i = 0; i < N; i++) {
		double ct = cos(q[i]), st = sin(q[i]);
		double sa = dh_sa[i], ca = dh_ca[i];
		double l[9] = { ct, -st * ca, st * sa, st, ct * ca, -ct * sa, 0, sa, ca };
		double lp[3] = { dh->a[i] * ct, dh->a[i] * st, dh->d[i] };
		double t[3];

		matmul3(f[i].R, l, f[i + 1].R);
		matvec3(f[i].R, lp, t);
		for (int j = 0; j < 3; j++)
			f[i + 1].p[j] = f[i].p[j] + t[j];
	}
	if (off) {
		double r[9], t[3];

		sim_robot_rotvec_to_matrix(off + 3, r);
		matmul3(f[N].R, r, f[N + 1].R);
		matvec3(f[N].R, off, t);
		for (int j = 0; j < 3; j++)
			f[N + 1].p[j] = f[N].p[j] + t[j];
	} else {
		f[N + 1] = f[N];
	}
}

static void jacobian_of(const struct frame f[N + 2], double jac[36])
{
	const double *tcp = f[N + 1].p;

	for (int c = 0; c < N; c++) {
		double z[3] = { f[c].R[2], f[c].R[5], f[c].R[8] };
		double r[3] = { tcp[0] - f[c].p[0], tcp[1] - f[c].p[1], tcp[2] - f[c].p[2] };
		double v[3];

		cross3(z, r, v);
		for (int k = 0; k < 3; k++) {
			jac[6 * k + c] = v[k];
			jac[6 * (k + 3) + c] = z[k];
		}
	}
}

static void pose_of(const struct frame *tcp, double pose[6])
{
	memcpy(pose, tcp->p, sizeof(tcp->p));
	sim_robot_matrix_to_rotvec(tcp->R, pose + 3);
}

void sim_robot_fk_dh(const struct sim_dh *dh, const double q[N], const double tcp_offset[6],
		     double pose[6])
{
	struct frame f[N + 2];

	chain(dh ? dh : &sim_dh_ur5e, q, tcp_offset, f);
	pose_of(&f[N + 1], pose);
}

void sim_robot_fk(const double q[N], const double tcp_offset[6], double pose[6])
{
	sim_robot_fk_dh(&sim_dh_ur5e, q, tcp_offset, pose);
}

void sim_robot_jacobian_dh(const struct sim_dh *dh, const double q[N], const double tcp_offset[6],
			   double jac[36])
{
	struct frame f[N + 2];

	chain(dh ? dh : &sim_dh_ur5e, q, tcp_offset, f);
	jacobian_of(f, jac);
}

void sim_robot_jacobian(const double q[N], const double tcp_offset[6], double jac[36])
{
	sim_robot_jacobian_dh(&sim_dh_ur5e, q, tcp_offset, jac);
}

static void jac_mul(const double jac[36], const double qd[N], double out[6])
{
	for (int r = 0; r < 6; r++) {
		out[r] = 0;
		for (int c = 0; c < N; c++)
			out[r] += jac[6 * r + c] * qd[c];
	}
}

/* qd = J^T (J J^T + lambda^2 I)^-1 v, by Cholesky (the matrix is SPD). */
void sim_robot_dls(const double jac[36], const double v[6], double qd[N])
{
	double a[36], y[6];

	for (int i = 0; i < 6; i++)
		for (int j = 0; j <= i; j++) {
			double s = i == j ? DLS_LAMBDA * DLS_LAMBDA : 0;

			for (int k = 0; k < N; k++)
				s += jac[6 * i + k] * jac[6 * j + k];
			a[6 * i + j] = s;
		}
	/* a = L L^T, L in the lower triangle */
	for (int j = 0; j < 6; j++) {
		double d = a[6 * j + j];

		for (int k = 0; k < j; k++)
			d -= a[6 * j + k] * a[6 * j + k];
		d = sqrt(d);
		a[6 * j + j] = d;
		for (int i = j + 1; i < 6; i++) {
			double s = a[6 * i + j];

			for (int k = 0; k < j; k++)
				s -= a[6 * i + k] * a[6 * j + k];
			a[6 * i + j] = s / d;
		}
	}
	for (int i = 0; i < 6; i++) {
		double s = v[i];

		for (int k = 0; k < i; k++)
			s -= a[6 * i + k] * y[k];
		y[i] = s / a[6 * i + i];
	}
	for (int i = 5; i >= 0; i--) {
		double s = y[i];

		for (int k = i + 1; k < 6; k++)
			s -= a[6 * k + i] * y[k];
		y[i] = s / a[6 * i + i];
	}
	for (int c = 0; c < N; c++) {
		qd[c] = 0;
		for (int r = 0; r < 6; r++)
			qd[c] += jac[6 * r + c] * y[r];
	}
}

/* ---- noise ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1): never 0, so log() below is finite */
static double uniform01(uint64_t *s)
{
	return ((double)(splitmix64(s) >> 11) + 0.5) * 0x1p-53;
}

static double gauss(struct sim_robot *r)
{
	double u, w;

	if (r->have_spare) {
		r->have_spare = false;
		return r->spare_gauss;
	}
	u = sqrt(-2 * log(uniform01(&r->rng)));
	w = 2 * M_PI * uniform01(&r->rng);
	r->spare_gauss = u * sin(w);
	r->have_spare = true;
	return u * cos(w);
}

/* ---- configuration ------------------------------------------------------------ */

void sim_robot_config_default(struct sim_robot_config *cfg)
{
	static const double q0[N] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };

	*cfg = (struct sim_robot_config){
		.period_ns = 2000000,
		.joint_accel = RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT,
		.linear_accel = RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT,
		.watchdog_ns = (int64_t)RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS * 1000000,
		.watchdog_decel = 10.0,
		.contact = { .normal = { 0, 0, 1 } },
		/* a 1 kg tool 5 cm out along the flange axis, a solid sphere
		 * of radius 5 cm: 2/5 m r^2 = 0.001 kg m^2 about each axis */
		.payload_mass = 1.0,
		.payload_cog = { 0, 0, 0.05 },
		.payload_inertia = { 0.001, 0.001, 0.001, 0, 0, 0 },
		.seed = 1,
	};
	cfg->dh = sim_dh_ur5e;
	for (int i = 0; i < N; i++) {
		cfg->q0[i] = q0[i];
		cfg->qd_max[i] = M_PI;
		cfg->qdd_max[i] = 15.0;
		/* the elbow cannot pass through the upper arm */
		cfg->q_max[i] = i == 2 ? M_PI : 2 * M_PI;
		cfg->q_min[i] = -cfg->q_max[i];
	}
}

static bool positive(double x)
{
	return isfinite(x) && x > 0;
}

static bool nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

/* Validate @c and store it in @dst with a unit normal. */
static int take_contact(struct sim_contact *dst, const struct sim_contact *c)
{
	double len;

	if (!c->enabled) {
		*dst = *c;
		return 0;
	}
	if (!all_finite(c->point, 3) || !all_finite(c->normal, 3) || !nonneg(c->stiffness) ||
	    !nonneg(c->damping))
		return -EINVAL;
	len = norm3(c->normal);
	if (!(len > 1e-12))
		return -EINVAL;
	*dst = *c;
	for (int i = 0; i < 3; i++)
		dst->normal[i] = c->normal[i] / len;
	return 0;
}

static int check_config(const struct sim_robot_config *c)
{
	if (c->period_ns <= 0 || c->watchdog_ns < 0)
		return -EINVAL;
	for (int i = 0; i < N; i++) {
		if (!positive(c->qd_max[i]) || !positive(c->qdd_max[i]))
			return -EINVAL;
		if (!isfinite(c->q_min[i]) || !isfinite(c->q_max[i]) ||
		    !(c->q_min[i] < c->q_max[i]))
			return -EINVAL;
		if (!(c->q0[i] >= c->q_min[i] && c->q0[i] <= c->q_max[i]))
			return -EINVAL;
	}
	if (!positive(c->joint_accel) || !positive(c->linear_accel) || !positive(c->watchdog_decel))
		return -EINVAL;
	if (!all_finite(c->tcp_offset, 6) || !nonneg(c->force_noise) || !nonneg(c->torque_noise))
		return -EINVAL;
	if (!nonneg(c->payload_mass) || !all_finite(c->payload_cog, 3) ||
	    !all_finite(c->payload_inertia, 6))
		return -EINVAL;
	if (!all_finite(c->push, 3) || !nonneg(c->push_after) || !nonneg(c->push_for))
		return -EINVAL;
	/* the closed-form inverse divides by a2 a3 and by the shoulder
	 * offset d4 */
	if (!all_finite(c->dh.d, N) || !all_finite(c->dh.a, N) || !(c->dh.d[3] > 0) ||
	    c->dh.a[1] == 0 || c->dh.a[2] == 0)
		return -EINVAL;
	return 0;
}

/* ---- outputs ------------------------------------------------------------------- */

static bool at_rest(const double qd[N]);

/*
 * Motor torques holding @q against gravity, and the norm of the linear
 * momentum of the links and the payload at @qd. Body N is the payload: its
 * centre of gravity is given in the flange frame, f[N], and it hangs on
 * every joint, as the last link does.
 */
static void gravity_and_momentum(const struct sim_robot *r, const struct frame f[N + 2],
				 const double qd[N], double tau[N], double *momentum)
{
	double com[N + 1][3], mass[N + 1], p[3] = { 0, 0, 0 };

	for (int i = 0; i <= N; i++) {
		const double *c = i < N ? link_com[i] : r->cfg.payload_cog;
		double t[3];

		mass[i] = i < N ? link_mass[i] : r->cfg.payload_mass;
		matvec3(f[i < N ? i + 1 : N].R, c, t);
		for (int k = 0; k < 3; k++)
			com[i][k] = f[i < N ? i + 1 : N].p[k] + t[k];
	}
	for (int j = 0; j < N; j++) {
		double z[3] = { f[j].R[2], f[j].R[5], f[j].R[8] };

		tau[j] = 0;
		/* body i hangs on joints 0..i: its weight loads every one of them,
		 * and joint j moves it with z_j x (c_i - o_j) */
		for (int i = j; i <= N; i++) {
			double rr[3] = { com[i][0] - f[j].p[0], com[i][1] - f[j].p[1],
					 com[i][2] - f[j].p[2] };
			double v[3];

			cross3(z, rr, v);
			tau[j] += mass[i] * GRAVITY * v[2];
			for (int k = 0; k < 3; k++)
				p[k] += mass[i] * v[k] * qd[j];
		}
	}
	*momentum = norm3(p);
}

/*
 * actual_execution_time [ms]: how long the controller's real-time thread
 * took this cycle. The model: 0.35 ms of fixed work, 0.05 ms more while the
 * arm moves (trajectory generation, dynamics), and seeded Gaussian jitter
 * of 0.03 ms, kept within 0.3-0.6 ms, well inside the 2 ms (or 8 ms) period
 * as on a healthy controller. Its own generator, so that the force noise
 * sequence of a seed does not depend on it.
 */
static double execution_time(struct sim_robot *r)
{
	double u = sqrt(-2 * log(uniform01(&r->exec_rng)));
	double w = 2 * M_PI * uniform01(&r->exec_rng);
	double t = EXEC_BASE_MS + (at_rest(r->actual_qd) ? 0 : EXEC_MOVING_MS) +
		   EXEC_JITTER_MS * u * cos(w);

	return fmin(EXEC_MAX_MS, fmax(EXEC_MIN_MS, t));
}

static void contact_force(struct sim_robot *r, const double pose[6], const double speed[6],
			  double force[3])
{
	const struct sim_contact *c = &r->cfg.contact;
	double rel[3], depth, rate, mag;

	force[0] = force[1] = force[2] = 0;
	if (!c->enabled)
		return;
	for (int k = 0; k < 3; k++)
		rel[k] = c->point[k] - pose[k];
	depth = dot3(c->normal, rel); /* > 0: the TCP is behind the surface */
	if (depth <= 0)
		return;
	rate = -dot3(c->normal, speed);
	mag = c->stiffness * depth + c->damping * rate;
	if (mag < 0)
		mag = 0; /* a surface pushes, it never pulls */
	for (int k = 0; k < 3; k++)
		force[k] = -c->normal[k] * mag;
}

/* Everything derived from the joint state; @dt = 0 on power-up. */
static void update_outputs(struct sim_robot *r, double dt)
{
	struct frame ft[N + 2], fa[N + 2];
	double jt[36], ja[36], gt[N], ga[N], f3[3], mom, dummy, p_elec = P_IDLE;
	double prev_v[3], sf[3];

	memcpy(prev_v, r->actual_TCP_speed, sizeof(prev_v));
	chain(&r->cfg.dh, r->target_q, r->cfg.tcp_offset, ft);
	chain(&r->cfg.dh, r->actual_q, r->cfg.tcp_offset, fa);
	jacobian_of(ft, jt);
	jacobian_of(fa, ja);
	pose_of(&ft[N + 1], r->target_TCP_pose);
	pose_of(&fa[N + 1], r->actual_TCP_pose);
	jac_mul(jt, r->target_qd, r->target_TCP_speed);
	jac_mul(ja, r->actual_qd, r->actual_TCP_speed);

	/* elbow = origin of DH frame 2, on the elbow axis; moved by joints 0, 1 */
	memcpy(r->elbow_position, fa[2].p, sizeof(r->elbow_position));
	memset(r->elbow_velocity, 0, sizeof(r->elbow_velocity));
	for (int j = 0; j < 2; j++) {
		double z[3] = { fa[j].R[2], fa[j].R[5], fa[j].R[8] };
		double rr[3], v[3];

		for (int k = 0; k < 3; k++)
			rr[k] = fa[2].p[k] - fa[j].p[k];
		cross3(z, rr, v);
		for (int k = 0; k < 3; k++)
			r->elbow_velocity[k] += v[k] * r->actual_qd[j];
	}

	/* The tool accelerometer reads specific force in the flange frame:
	 * the TCP's acceleration (from consecutive TCP speeds) minus gravity,
	 * so +g away from the earth at rest. At rest both speeds are exactly
	 * zero, and the reading is gravity exactly, rotated into the flange. */
	for (int k = 0; k < 3; k++)
		sf[k] = dt > 0 ? (r->actual_TCP_speed[k] - prev_v[k]) / dt : 0;
	sf[2] += GRAVITY;
	matvec3_t(fa[N].R, sf, r->actual_tool_accelerometer);

	/* contact and force sensor */
	contact_force(r, r->actual_TCP_pose, r->actual_TCP_speed, f3);
	/* the hand's push in teach mode: the tool resists it */
	for (int k = 0; k < 3 && r->push_on; k++)
		f3[k] -= r->cfg.push[k];
	for (int k = 0; k < 3; k++) {
		r->actual_TCP_force[k] = f3[k];
		r->actual_TCP_force[k + 3] = 0; /* point contact at the TCP */
	}
	if (r->cfg.force_noise > 0 || r->cfg.torque_noise > 0)
		for (int k = 0; k < 3; k++) {
			r->actual_TCP_force[k] += r->cfg.force_noise * gauss(r);
			r->actual_TCP_force[k + 3] += r->cfg.torque_noise * gauss(r);
		}
	/* The controller compensates the payload it was told (set_payload):
	 * a mounted mass other than that one reads as its weight's
	 * difference. zero_ft_sensor's bias comes off last. */
	r->actual_TCP_force[2] -= (r->cfg.payload_mass - r->payload) * GRAVITY;
	for (int k = 0; k < 6; k++)
		r->actual_TCP_force[k] -= r->ft_bias[k];
	matvec3_t(fa[N + 1].R, r->actual_TCP_force, r->ft_raw_wrench);
	matvec3_t(fa[N + 1].R, r->actual_TCP_force + 3, r->ft_raw_wrench + 3);
	r->tcp_force_scalar = norm3(r->actual_TCP_force);

	/* joint torques and currents */
	gravity_and_momentum(r, ft, r->target_qd, gt, &dummy);
	gravity_and_momentum(r, fa, r->actual_qd, ga, &mom);
	r->actual_momentum = mom;
	for (int i = 0; i < N; i++) {
		/* the motors also hold what the tool exerts: J^T f */
		double ext = ja[6 * 0 + i] * f3[0] + ja[6 * 1 + i] * f3[1] + ja[6 * 2 + i] * f3[2];
		double tt =
			gt[i] + joint_inertia[i] * r->target_qdd[i] + viscous[i] * r->target_qd[i];
		double ta = ga[i] + joint_inertia[i] * r->target_qdd[i] +
			    viscous[i] * r->actual_qd[i] + ext;
		double ia = ta / torque_const[i];
		double t_ss = T_AMBIENT + T_RISE * ia * ia;

		r->target_moment[i] = tt;
		r->target_current[i] = tt / torque_const[i];
		r->actual_current[i] = ia;
		r->joint_control_output[i] = ia;
		r->joint_temperatures[i] =
			dt > 0 ? r->joint_temperatures[i] +
					 dt / T_TAU * (t_ss - r->joint_temperatures[i])
			       : t_ss;
		r->actual_joint_voltage[i] = V_SUPPLY - 0.4 - 0.02 * fabs(ia);
		p_elec += fabs(ta * r->actual_qd[i]) + R_WINDING * ia * ia;
	}
	r->actual_robot_current = p_elec / V_SUPPLY;
	r->actual_robot_voltage = V_SUPPLY - 0.05 * r->actual_robot_current;
	/* the tool connector sits on the last joint and shares its heat */
	r->tool_temperature = r->joint_temperatures[N - 1];
	r->actual_execution_time = execution_time(r);
}

/* ---- lifecycle ------------------------------------------------------------------- */

int sim_robot_init(struct sim_robot *r, const struct sim_robot_config *cfg)
{
	struct sim_contact contact;
	int ret;

	if (!r || !cfg)
		return -EINVAL;
	ret = check_config(cfg);
	if (ret < 0)
		return ret;
	ret = take_contact(&contact, &cfg->contact);
	if (ret < 0)
		return ret;
	*r = (struct sim_robot){
		.cfg = *cfg,
		.robot_mode = SIM_ROBOT_MODE_RUNNING,
		.safety_mode = SIM_SAFETY_MODE_NORMAL,
		.safety_status = SIM_SAFETY_MODE_NORMAL,
		.robot_status_bits = SIM_ROBOT_STATUS_POWER_ON | SIM_ROBOT_STATUS_PROGRAM_RUNNING,
		.safety_status_bits = SIM_SAFETY_STATUS_NORMAL,
		.runtime_state = SIM_RUNTIME_PLAYING,
		.speed_scaling = 1.0,
		.target_speed_fraction = 1.0,
		.standard_analog_output = { 4.0, 4.0 }, /* current domain, ratio 0 */
		.actual_main_voltage = V_SUPPLY,
		.active_mode = RTL_RTDE_CMD_IDLE,
		.rng = cfg->seed,
		/* another stream of the same seed, for the execution time */
		.exec_rng = cfg->seed ^ 0x5851f42d4c957f2dull,
		.payload = cfg->payload_mass,
		.force_damping = RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT,
		.force_gain = RTL_RTDE_REQ_FORCE_GAIN_DEFAULT,
	};
	r->cfg.contact = contact;
	memcpy(r->tcp_offset, cfg->tcp_offset, sizeof(r->tcp_offset));
	memcpy(r->payload_cog, cfg->payload_cog, sizeof(r->payload_cog));
	memcpy(r->payload_inertia, cfg->payload_inertia, sizeof(r->payload_inertia));
	memcpy(r->target_q, cfg->q0, sizeof(r->target_q));
	memcpy(r->actual_q, cfg->q0, sizeof(r->actual_q));
	for (int i = 0; i < N; i++) {
		r->joint_mode[i] = SIM_JOINT_MODE_RUNNING;
		r->force_limit[i] = RTL_RTDE_REQ_FORCE_LIMIT_DEFAULT;
	}
	update_outputs(r, 0);
	return 0;
}

int sim_robot_set_contact(struct sim_robot *r, const struct sim_contact *c)
{
	if (!r || !c)
		return -EINVAL;
	return take_contact(&r->cfg.contact, c);
}

int sim_robot_command(struct sim_robot *r, const struct sim_robot_cmd *cmd, int64_t now_ns)
{
	bool fresh;

	if (!r || !cmd)
		return -EINVAL;
	if (cmd->mode < 0 || cmd->mode >= RTL_RTDE_CMD_MODE_COUNT)
		return -EINVAL;
	if (!all_finite(cmd->param, RTL_RTDE_CMD_NPARAM) || !isfinite(cmd->accel) ||
	    !isfinite(cmd->time) || !isfinite(cmd->lookahead) || !isfinite(cmd->gain))
		return -EINVAL;
	fresh = !r->seen_seq || cmd->seq != r->last_seq;
	if (r->watchdog_tripped && !fresh)
		return -ESTALE;
	if (fresh) {
		r->seen_seq = true;
		r->last_seq = cmd->seq;
		r->armed = true;
		r->last_refresh_ns = now_ns;
		r->watchdog_tripped = false;
	}
	r->cmd = *cmd;
	return 0;
}

/* ---- inputs -------------------------------------------------------------------- */

static uint8_t masked(uint8_t old, uint8_t mask, uint8_t val)
{
	return (uint8_t)((old & ~mask) | (val & mask));
}

static void set_analog(struct sim_robot *r, int i)
{
	bool volt = r->analog_io_types & (1u << (2 + i));
	double x = r->analog_output_ratio[i];

	r->standard_analog_output[i] = volt ? 10.0 * x : 4.0 + 16.0 * x;
}

int sim_robot_set_inputs(struct sim_robot *r, const struct sim_robot_inputs *in)
{
	double ao[2];

	if (!r || !in)
		return -EINVAL;
	ao[0] = in->standard_analog_output_0;
	ao[1] = in->standard_analog_output_1;
	if (in->speed_slider_mask == 1 && !isfinite(in->speed_slider_fraction))
		return -EINVAL;
	for (int i = 0; i < 2; i++)
		if ((in->standard_analog_output_mask & (1u << i)) && !isfinite(ao[i]))
			return -EINVAL;

	r->standard_digital_out = masked(r->standard_digital_out, in->standard_digital_output_mask,
					 in->standard_digital_output);
	r->configurable_digital_out =
		masked(r->configurable_digital_out, in->configurable_digital_output_mask,
		       in->configurable_digital_output);
	/* the tool has two outputs; the other bits are reserved */
	r->tool_digital_out = masked(r->tool_digital_out, in->tool_digital_output_mask & 0x3,
				     in->tool_digital_output);
	for (int i = 0; i < 2; i++) {
		if (!(in->standard_analog_output_mask & (1u << i)))
			continue;
		if (in->standard_analog_output_type & (1u << i))
			r->analog_io_types |= 1u << (2 + i);
		else
			r->analog_io_types &= ~(1u << (2 + i));
		r->analog_output_ratio[i] = fmin(1.0, fmax(0.0, ao[i]));
		set_analog(r, i);
	}
	if (in->speed_slider_mask == 1) {
		double s = fmin(1.0, fmax(0.0, in->speed_slider_fraction));

		r->target_speed_fraction = s;
	}
	return 0;
}

uint64_t sim_robot_digital_output_bits(const struct sim_robot *r)
{
	return (uint64_t)r->standard_digital_out | (uint64_t)r->configurable_digital_out << 8 |
	       (uint64_t)(r->tool_digital_out & 0x3) << 16;
}

uint32_t sim_robot_cmd_status(const struct sim_robot *r)
{
	return RTL_RTDE_CMD_STATUS_READY |
	       (r->watchdog_tripped ? RTL_RTDE_CMD_STATUS_WATCHDOG : 0) |
	       (r->force_on ? RTL_RTDE_CMD_STATUS_FORCE : 0) |
	       (r->teach_on ? RTL_RTDE_CMD_STATUS_TEACH : 0);
}

/* ---- trajectory generation ----------------------------------------------------- */

static double period_s(const struct sim_robot *r)
{
	return (double)r->cfg.period_ns * 1e-9;
}

/*
 * Scale @v uniformly into the joint speed limits. *@ratio takes the factor
 * applied when it is the smallest yet (the trajectory limiter's speed
 * scaling of this step). Returns the event bit.
 */
static uint32_t clamp_speed(const struct sim_robot *r, double v[N], double *ratio)
{
	double f = 1.0;

	for (int i = 0; i < N; i++)
		f = fmax(f, fabs(v[i]) / r->cfg.qd_max[i]);
	if (f <= 1.0)
		return 0;
	for (int i = 0; i < N; i++)
		v[i] /= f;
	*ratio = fmin(*ratio, 1.0 / f);
	return SIM_ROBOT_EV_VEL_LIMIT;
}

/* speedj / stopj: ramp toward @target, the leading joint at @a. */
static void ramp_joints(const struct sim_robot *r, const double target[N], double a, double out[N])
{
	double e[N], m = 0, step = a * period_s(r);

	for (int i = 0; i < N; i++) {
		e[i] = target[i] - r->target_qd[i];
		m = fmax(m, fabs(e[i]));
	}
	for (int i = 0; i < N; i++)
		out[i] = m <= step ? target[i] : r->target_qd[i] + e[i] * (step / m);
}

static void target_tcp(const struct sim_robot *r, struct frame f[N + 2], double jac[36])
{
	chain(&r->cfg.dh, r->target_q, r->cfg.tcp_offset, f);
	jacobian_of(f, jac);
}

/* Start Cartesian motion from where the robot is and how it moves now. */
static void enter_linear(struct sim_robot *r)
{
	struct frame f[N + 2];
	double jac[36];

	target_tcp(r, f, jac);
	jac_mul(jac, r->target_qd, r->twist);
	memcpy(r->ref_p, f[N + 1].p, sizeof(r->ref_p));
	memcpy(r->ref_R, f[N + 1].R, sizeof(r->ref_R));
}

/* Ramp the twist toward @target at @a (m/s^2 and rad/s^2, one factor for
 * both so the twist keeps its direction) into @nw. */
static void ramp_twist(const struct sim_robot *r, const double target[6], double a, double nw[6])
{
	double e[6], step = a * period_s(r), f_lin, f_ang, s = 1;

	for (int i = 0; i < 6; i++)
		e[i] = target[i] - r->twist[i];
	f_lin = norm3(e);
	f_ang = norm3(e + 3);
	if (f_lin > step)
		s = fmin(s, step / f_lin);
	if (f_ang > step)
		s = fmin(s, step / f_ang);
	for (int i = 0; i < 6; i++)
		nw[i] = r->twist[i] + s * e[i];
}

/*
 * Map the twist @nw (after @prev, last period's) to joint velocities with
 * pose feedback toward the reference, which integrates the twist.
 */
static void follow_twist(struct sim_robot *r, const double prev[6], const double nw[6],
			 double out[N])
{
	struct frame f[N + 2];
	double jac[36], v[6], err_R[9], dR[9], newR[9], w[3];
	double dt = period_s(r), k = CLIK_GAIN / dt;

	target_tcp(r, f, jac);
	matmul3_bt(r->ref_R, f[N + 1].R, err_R);
	sim_robot_matrix_to_rotvec(err_R, v + 3);
	for (int i = 0; i < 3; i++) {
		v[i] = nw[i] + k * (r->ref_p[i] - f[N + 1].p[i]);
		v[i + 3] = nw[i + 3] + k * v[i + 3];
	}
	sim_robot_dls(jac, v, out);

	/* the reference moves with the mean twist of the period, as the
	 * trapezoidal joint integration does */
	for (int i = 0; i < 3; i++) {
		r->ref_p[i] += (prev[i] + nw[i]) / 2 * dt;
		w[i] = (prev[i + 3] + nw[i + 3]) / 2 * dt;
	}
	sim_robot_rotvec_to_matrix(w, dR);
	matmul3(dR, r->ref_R, newR);
	memcpy(r->ref_R, newR, sizeof(newR));
}

/* speedl / stopl: ramp the twist toward @target at @a, then follow it. */
static void ramp_linear(struct sim_robot *r, const double target[6], double a, double out[N])
{
	double nw[6];

	ramp_twist(r, target, a, nw);
	follow_twist(r, r->twist, nw, out);
	memcpy(r->twist, nw, sizeof(nw));
}

/* servoj: first-order tracker per joint, braking so as not to overshoot. */
static void track_joints(const struct sim_robot *r, double out[N])
{
	const struct sim_robot_cmd *c = &r->cmd;
	double la = c->lookahead > 0 ? c->lookahead : RTL_RTDE_CMD_LOOKAHEAD_DEFAULT;
	double g = c->gain > 0 ? c->gain : RTL_RTDE_CMD_GAIN_DEFAULT;
	double tau;

	la = fmin(RTL_RTDE_CMD_LOOKAHEAD_MAX, fmax(RTL_RTDE_CMD_LOOKAHEAD_MIN, la));
	g = fmin(RTL_RTDE_CMD_GAIN_MAX, fmax(RTL_RTDE_CMD_GAIN_MIN, g));
	/* 0.1 s at URScript's defaults (0.1, 300); stiffer with more gain,
	 * smoother with more lookahead; never faster than one period */
	tau = fmax(la * RTL_RTDE_CMD_GAIN_DEFAULT / g, period_s(r));
	for (int i = 0; i < N; i++) {
		double e = c->param[i] - r->target_q[i];
		double lim = fmin(sqrt(2 * SERVO_BRAKE * r->cfg.qdd_max[i] * fabs(e)),
				  r->target_speed_fraction * r->cfg.qd_max[i]);

		out[i] = fmax(-lim, fmin(lim, e / tau));
	}
}

/*
 * Joint limits on the velocity @qd planned for the end of this period:
 * speed (uniform), braking ahead of a position limit (per joint), velocity
 * change (uniform, or per joint when @per_joint). *@ratio as clamp_speed().
 */
static uint32_t apply_limits(const struct sim_robot *r, double qd[N], bool per_joint, double *ratio)
{
	double dt = period_s(r), f = 1.0;
	uint32_t ev = clamp_speed(r, qd, ratio);

	for (int i = 0; i < N; i++) {
		/* The fastest v to end this period with such that braking at a
		 * from there still stops inside the limit. Trapezoidal steps
		 * travel (qd + v) / 2 dt now and at most v^2 / 2a + v dt / 2
		 * while braking (the last, partial step is a whole period), so
		 * v^2 / 2a + v dt <= room - qd dt / 2. */
		double a = r->cfg.qdd_max[i], dir = qd[i] > 0 ? 1 : -1;
		double room = dir > 0 ? r->cfg.q_max[i] - r->target_q[i]
				      : r->target_q[i] - r->cfg.q_min[i];
		double rest = room - dir * r->target_qd[i] * dt / 2;
		double vb = rest > 0 ? a * (sqrt(dt * dt + 2 * rest / a) - dt) : 0;

		if (fabs(qd[i]) > vb) {
			qd[i] = qd[i] > 0 ? vb : -vb;
			ev |= SIM_ROBOT_EV_POS_LIMIT;
		}
	}
	for (int i = 0; i < N; i++) {
		double d = qd[i] - r->target_qd[i], lim = r->cfg.qdd_max[i] * dt;

		if (fabs(d) <= lim * (1 + 1e-12))
			continue;
		ev |= SIM_ROBOT_EV_ACC_LIMIT;
		if (per_joint)
			qd[i] = r->target_qd[i] + (d > 0 ? lim : -lim);
		else
			f = fmax(f, fabs(d) / lim);
	}
	if (f > 1.0)
		for (int i = 0; i < N; i++)
			qd[i] = r->target_qd[i] + (qd[i] - r->target_qd[i]) / f;
	return ev;
}

static void watchdog_trip(struct sim_robot *r)
{
	r->watchdog_tripped = true;
	r->armed = false;
	r->watchdog_trips++;
	r->linear = false; /* the stop after a trip is in joint space */
	if (r->cfg.message)
		r->cfg.message(r->cfg.message_ctx, SIM_ROBOT_WARNING, wd_text);
}

/* Every joint velocity below @v in magnitude. */
static bool below(const double qd[N], double v)
{
	for (int i = 0; i < N; i++)
		if (fabs(qd[i]) >= v)
			return false;
	return true;
}

/* Joint velocities below 1e-9 rad/s: the arm is at rest. */
static bool at_rest(const double qd[N])
{
	return below(qd, 1e-9);
}

/* No twist commanded (a joint-space motion, or a linear one ramped to 0). */
static bool twist_zero(const struct sim_robot *r)
{
	for (int i = 0; r->linear && i < 6; i++)
		if (r->twist[i] != 0)
			return false;
	return true;
}

static bool motion_mode(int32_t mode)
{
	return mode == RTL_RTDE_CMD_SPEEDJ || mode == RTL_RTDE_CMD_SPEEDL ||
	       mode == RTL_RTDE_CMD_SERVOJ;
}

static bool moving(const struct sim_robot *r)
{
	return !at_rest(r->target_qd);
}

/* The stop book-keeping, once per step, after the mode is known: @mode is
 * what this step executes (STOP after a watchdog trip is not a client's
 * stop). */
static void track_stop(struct sim_robot *r, int32_t mode, bool tripped)
{
	bool stop_mode = !tripped && !r->move_on && !r->muc_phase && !r->force_on && !r->teach_on &&
			 (mode == RTL_RTDE_CMD_STOP || mode == RTL_RTDE_CMD_IDLE);

	if (r->stopping && !stop_mode)
		r->stopping = false; /* superseded before rest */
	if (!r->stopping && stop_mode && moving(r)) {
		r->stopping = true;
		r->stop_started = r->cycles;
		r->stops++;
		r->last_stop_cmd = r->cmd;
	}
}

static void track_rest(struct sim_robot *r)
{
	uint64_t took;

	if (!r->stopping || moving(r))
		return;
	r->stopping = false;
	took = r->cycles - r->stop_started;
	r->stops_at_rest++;
	r->last_stop_cycles = took;
	if (took > r->max_stop_cycles)
		r->max_stop_cycles = took;
}

bool sim_robot_at_rest(const struct sim_robot *r)
{
	for (int i = 0; i < N; i++)
		if (r->actual_qd[i] != 0)
			return false;
	return true;
}

void sim_robot_summarize(const struct sim_robot *r, struct sim_robot_summary *out)
{
	*out = (struct sim_robot_summary){
		.watchdog_trips = r->watchdog_trips,
		.stops = r->stops,
		.stops_at_rest = r->stops_at_rest,
		.last_stop_cycles = r->last_stop_cycles,
		.max_stop_cycles = r->max_stop_cycles,
		.last_stop_cmd = r->last_stop_cmd,
		.at_rest = sim_robot_at_rest(r),
		.max_speed = sim_robot_max_speed(r),
		.payload = r->payload,
		.force_on = r->force_on,
		.teach_on = r->teach_on,
		.requests = r->requests,
		.requests_failed = r->requests_failed,
		.moves_done = r->moves_done,
	};
	memcpy(out->q, r->actual_q, sizeof(out->q));
	memcpy(out->tcp_pose, r->actual_TCP_pose, sizeof(out->tcp_pose));
	memcpy(out->tcp_offset, r->tcp_offset, sizeof(out->tcp_offset));
	memcpy(out->payload_cog, r->payload_cog, sizeof(out->payload_cog));
	memcpy(out->ft_bias, r->ft_bias, sizeof(out->ft_bias));
}

static void json_vec(FILE *f, const char *name, const double *v, int n)
{
	fprintf(f, ",\"%s\":[", name);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.9g", i ? "," : "", v[i]);
	fputc(']', f);
}

void sim_robot_summary_json(FILE *f, const struct sim_robot_summary *s)
{
	fprintf(f,
		"{\"watchdog_trips\":%llu,\"stops\":%llu,\"stops_at_rest\":%llu,"
		"\"last_stop_cycles\":%llu,\"max_stop_cycles\":%llu,\"at_rest\":%s,"
		"\"max_speed\":%.9g",
		(unsigned long long)s->watchdog_trips, (unsigned long long)s->stops,
		(unsigned long long)s->stops_at_rest, (unsigned long long)s->last_stop_cycles,
		(unsigned long long)s->max_stop_cycles, s->at_rest ? "true" : "false",
		s->max_speed);
	json_vec(f, "q", s->q, SIM_ROBOT_DOF);
	json_vec(f, "tcp_pose", s->tcp_pose, 6);
	json_vec(f, "tcp_offset", s->tcp_offset, 6);
	fprintf(f, ",\"payload\":%.9g", s->payload);
	json_vec(f, "payload_cog", s->payload_cog, 3);
	json_vec(f, "ft_bias", s->ft_bias, 6);
	fprintf(f,
		",\"force_mode\":%s,\"teach_mode\":%s,\"requests\":%llu,"
		"\"requests_failed\":%llu,\"moves_done\":%llu}",
		s->force_on ? "true" : "false", s->teach_on ? "true" : "false",
		(unsigned long long)s->requests, (unsigned long long)s->requests_failed,
		(unsigned long long)s->moves_done);
}

double sim_robot_max_speed(const struct sim_robot *r)
{
	double m = 0;

	for (int i = 0; i < N; i++)
		m = fmax(m, fabs(r->actual_qd[i]));
	return m;
}

/* ---- force mode, teach mode, move_until_contact ------------------------------- */

void sim_robot_modes_end(struct sim_robot *r)
{
	if (r->force_on || r->teach_on)
		r->linear = false; /* to rest in joint space */
	r->force_on = r->teach_on = r->push_on = false;
}

/*
 * Force mode: the stream's twist (speedl's ramped one, J qd of speedj's or
 * servoj's command, zero under IDLE) with each compliant axis of the task
 * frame replaced by the admittance's speed toward the commanded wrench.
 */
static uint32_t force_step(struct sim_robot *r, int32_t mode, bool was_linear, double *limiter,
			   double qd[N])
{
	const struct sim_robot_cmd *c = &r->cmd;
	struct frame f[N + 2];
	double jac[36], nw[6] = { 0 }, target[6], vt[6], ft[6], v[6], qc[N];
	uint32_t ev = 0;

	if (!was_linear) {
		enter_linear(r);
		memcpy(r->force_twist, r->twist, sizeof(r->twist));
	}
	if (mode == RTL_RTDE_CMD_SPEEDL) {
		for (int i = 0; i < 6; i++)
			target[i] = r->target_speed_fraction * c->param[i];
		ramp_twist(r, target, c->accel > 0 ? c->accel : r->cfg.linear_accel, nw);
	} else if (mode == RTL_RTDE_CMD_SPEEDJ || mode == RTL_RTDE_CMD_SERVOJ) {
		if (mode == RTL_RTDE_CMD_SPEEDJ) {
			for (int i = 0; i < N; i++)
				qc[i] = r->target_speed_fraction * c->param[i];
			ev |= clamp_speed(r, qc, limiter);
		} else {
			track_joints(r, qc);
		}
		target_tcp(r, f, jac);
		jac_mul(jac, qc, nw);
	}
	memcpy(r->twist, nw, sizeof(nw));
	matvec3_t(r->force_R, nw, vt);
	matvec3_t(r->force_R, nw + 3, vt + 3);
	matvec3_t(r->force_R, r->actual_TCP_force, ft);
	matvec3_t(r->force_R, r->actual_TCP_force + 3, ft + 3);
	for (int i = 0; i < 6; i++) {
		double adm = i < 3 ? FORCE_ADMIT_LIN : FORCE_ADMIT_ANG, lim = r->force_limit[i];
		double s =
			r->force_gain * (1 - r->force_damping) * adm * (r->force_wrench[i] - ft[i]);

		if (r->force_sel & (1u << i))
			vt[i] = fmin(lim, fmax(-lim, s));
	}
	matvec3(r->force_R, vt, v);
	matvec3(r->force_R, vt + 3, v + 3);
	follow_twist(r, r->force_twist, v, qd);
	memcpy(r->force_twist, v, sizeof(v));
	return ev;
}

/* Teach mode: the TCP moves with the hand's push / TEACH_DAMPING, ramped
 * with the default linear acceleration; without a push, to rest. */
static void teach_step(struct sim_robot *r, bool was_linear, double qd[N])
{
	const struct sim_robot_config *k = &r->cfg;
	int64_t t = (int64_t)r->teach_cycles * k->period_ns;
	int64_t after = llround(k->push_after * 1e9), len = llround(k->push_for * 1e9);
	double target[6] = { 0 };

	r->teach_cycles++;
	r->push_on = t >= after && (len <= 0 || t < after + len);
	for (int i = 0; i < 3 && r->push_on; i++)
		target[i] = k->push[i] / TEACH_DAMPING;
	if (!was_linear)
		enter_linear(r);
	ramp_linear(r, target, k->linear_accel, qd);
	if (at_rest(qd))
		memset(qd, 0, sizeof(double) * N);
}

/* move_until_contact under IDLE: true when it has brought the arm to rest. */
static bool contact_step(struct sim_robot *r, bool was_linear, double qd[N])
{
	static const double zero[6];

	if (!was_linear)
		enter_linear(r);
	if (r->muc_phase == SIM_MUC_APPROACH && norm3(r->actual_TCP_force) >= r->muc_force)
		r->muc_phase = SIM_MUC_BRAKE;
	if (r->muc_phase == SIM_MUC_APPROACH) {
		double lag[3];

		for (int k = 0; k < 3; k++)
			lag[k] = r->ref_p[k] - r->target_TCP_pose[k];
		if (norm3(lag) <= MUC_LAG_MAX) {
			ramp_linear(r, r->muc_twist, r->muc_accel, qd);
			return false;
		}
		/* the arm cannot follow the line (its reach, a singularity) */
		sim_robot_contact_fail(r, RTL_RTDE_REQ_NO_CONTACT);
		ramp_linear(r, zero, r->cfg.linear_accel, qd);
		return false;
	}
	ramp_linear(r, zero, r->muc_decel, qd);
	if (!at_rest(qd))
		return false;
	memset(qd, 0, sizeof(double) * N);
	return true;
}

uint32_t sim_robot_step(struct sim_robot *r, int64_t now_ns)
{
	const struct sim_robot_cmd *c = &r->cmd;
	static const double zero[6];
	double dt = period_s(r), qd[N], target[6], limiter = 1.0;
	int32_t mode = c->mode;
	bool per_joint = false, was_linear = r->linear;
	uint32_t ev = 0;
	int64_t timeout;
	double q_plan[N];
	int plan = 0; /* 1: the move's plan drives the joints, 2: and ends here */
	bool watched, contact_rest = false;

	/* watchdog: the command's timeout, 0 = the configured one, < 0 = off;
	 * only a motion command or a move can go stale */
	timeout = c->watchdog_ms > 0 ? (int64_t)c->watchdog_ms * 1000000
				     : (c->watchdog_ms == 0 ? r->cfg.watchdog_ns : 0);
	/* teach mode too: a client that is gone must not leave freedrive on */
	watched = r->teach_on || motion_mode(c->mode) || r->move_on || r->muc_phase || r->force_on;
	if (r->armed && timeout > 0 && watched && now_ns - r->last_refresh_ns > timeout) {
		watchdog_trip(r);
		sim_robot_move_abort(r, RTL_RTDE_REQ_WATCHDOG);
		sim_robot_modes_end(r);
		ev |= SIM_ROBOT_EV_WATCHDOG;
	}
	/* a protective stop, or a streaming mode taking the arm, ends a move;
	 * a protective stop and STOP end force and teach mode */
	if (r->safety_mode != SIM_SAFETY_MODE_NORMAL) {
		sim_robot_move_abort(r, RTL_RTDE_REQ_PROTECTIVE_STOP);
		sim_robot_modes_end(r);
	} else if (mode != RTL_RTDE_CMD_IDLE) {
		sim_robot_move_abort(r, RTL_RTDE_REQ_INTERRUPTED);
	}
	if (mode == RTL_RTDE_CMD_STOP)
		sim_robot_modes_end(r);
	was_linear = r->linear;

	track_stop(r, mode, r->watchdog_tripped);
	if (r->watchdog_tripped) {
		mode = RTL_RTDE_CMD_STOP;
		ramp_joints(r, zero, r->cfg.watchdog_decel, qd);
	} else if (r->teach_on) {
		/* the arm follows the hand; the stream is ignored */
		teach_step(r, was_linear, qd);
		r->linear = true;
	} else if (r->force_on) {
		ev |= force_step(r, mode, was_linear, &limiter, qd);
		r->linear = true;
	} else if (mode == RTL_RTDE_CMD_IDLE && r->muc_phase) {
		contact_rest = contact_step(r, was_linear, qd);
		r->linear = true;
	} else {
		double a = c->accel;

		switch (mode) {
		case RTL_RTDE_CMD_SPEEDJ:
			for (int i = 0; i < N; i++)
				target[i] = r->target_speed_fraction * c->param[i];
			ev |= clamp_speed(r, target, &limiter);
			ramp_joints(r, target, a > 0 ? a : r->cfg.joint_accel, qd);
			r->linear = false;
			break;
		case RTL_RTDE_CMD_SPEEDL:
			if (!was_linear)
				enter_linear(r);
			for (int i = 0; i < 6; i++)
				target[i] = r->target_speed_fraction * c->param[i];
			ramp_linear(r, target, a > 0 ? a : r->cfg.linear_accel, qd);
			r->linear = true;
			break;
		case RTL_RTDE_CMD_SERVOJ:
			track_joints(r, qd);
			per_joint = true;
			r->linear = false;
			break;
		default: /* IDLE and STOP: to rest, in the space of the last motion */
			if (mode == RTL_RTDE_CMD_IDLE && r->move_on) {
				/* a move: its plan gives the joints (below) */
				plan = sim_robot_move_step(r, dt, q_plan) ? 1 : 0;
				plan += plan && !r->move_on;
				memcpy(qd, r->target_qd, sizeof(double) * N);
				r->linear = false;
				break;
			}
			if (mode == RTL_RTDE_CMD_IDLE)
				a = 0;
			if (r->linear)
				ramp_linear(r, zero, a > 0 ? a : r->cfg.linear_accel, qd);
			else
				ramp_joints(r, zero, a > 0 ? a : r->cfg.joint_accel, qd);
			/* At rest means exactly zero. After a linear stop the
			 * Cartesian correction decays by CLIK_GAIN a period: a
			 * joint at 1e-3 rad/s takes a quarter of a second to
			 * fall below 1e-9, and would leave 1e-14 forever. Once
			 * the twist is zero and every joint is below
			 * STOP_SNAP_SPEED (the pose then within 1e-7 of the
			 * reference), the arm is at rest, so clients waiting for
			 * actual_qd == 0 see it when a real arm would be. */
			if (at_rest(qd) || (twist_zero(r) && below(qd, STOP_SNAP_SPEED)))
				memset(qd, 0, sizeof(double) * N);
			break;
		}
	}
	r->active_mode = mode;
	ev |= apply_limits(r, qd, per_joint, &limiter);
	/* The slider is the operator's (target_speed_fraction, applied to the
	 * command above); speed_scaling is only what the limiter took on top,
	 * as ur_rtde's combined scaling multiplies the two. */
	r->speed_scaling = limiter;

	/* the actual joints follow one cycle behind the targets */
	memcpy(r->actual_q, r->target_q, sizeof(r->actual_q));
	memcpy(r->actual_qd, r->target_qd, sizeof(r->actual_qd));
	for (int i = 0; i < N; i++) {
		double q = r->target_q[i] + (r->target_qd[i] + qd[i]) / 2 * dt;

		if (q > r->cfg.q_max[i] || q < r->cfg.q_min[i]) {
			q = fmin(r->cfg.q_max[i], fmax(r->cfg.q_min[i], q));
			qd[i] = 0;
			ev |= SIM_ROBOT_EV_POS_LIMIT;
		}
		r->target_qdd[i] = (qd[i] - r->target_qd[i]) / dt;
		r->target_qd[i] = qd[i];
		r->target_q[i] = q;
	}
	/* A move's plan respects its own speed and acceleration and its
	 * targets the limits (checked at the request): the joints follow it
	 * exactly, at rest exactly when it ends. */
	if (plan) {
		for (int i = 0; i < N; i++) {
			double v = plan == 2 ? 0 : (q_plan[i] - r->actual_q[i]) / dt;

			r->target_qdd[i] = (v - r->actual_qd[i]) / dt;
			r->target_qd[i] = v;
			r->target_q[i] = q_plan[i];
		}
	}
	r->limited = ev & ~(uint32_t)SIM_ROBOT_EV_WATCHDOG;
	/* a joint limit or the speed limiter stopped the approach */
	if (r->muc_phase == SIM_MUC_APPROACH &&
	    (r->limited & (SIM_ROBOT_EV_POS_LIMIT | SIM_ROBOT_EV_VEL_LIMIT)))
		sim_robot_contact_fail(r, RTL_RTDE_REQ_NO_CONTACT);
	if (contact_rest && at_rest(r->target_qd))
		sim_robot_contact_rest(r);
	/* a limit broke the Cartesian plan: restart it from where the robot is,
	 * or the reference would run away from the arm */
	if (r->linear && r->limited)
		enter_linear(r);
	r->cycles++;
	track_rest(r);
	update_outputs(r, dt);
	return ev;
}
