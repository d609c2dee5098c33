// SPDX-License-Identifier: MIT
/*
 * The simulated UR5e, stepped on a fake clock: kinematics against poses
 * derived by hand from the DH table, each command mode against the motion
 * it must produce, the watchdog, the I/O masks, the speed slider and the
 * limiter's speed scaling, the virtual contact, and the outputs a client
 * reads about the arm's state (tool accelerometer, payload, execution
 * time).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>

#include "robot.h"
#include "sim.h"

#define PERIOD 2000000 /* ns: 500 Hz */
#define DT 0.002

struct rig {
	struct sim_robot r;
	struct sim_robot_cmd c;
	int64_t now;
};

static void rig_init(struct rig *g, const struct sim_robot_config *cfg)
{
	struct sim_robot_config def;

	if (!cfg) {
		sim_robot_config_default(&def);
		cfg = &def;
	}
	memset(g, 0, sizeof(*g));
	g->now = 1000000000; /* the clock does not start at 0 */
	cr_assert_eq(sim_robot_init(&g->r, cfg), 0);
}

/* One control cycle: the client writes g->c with a new heartbeat, the robot
 * steps. Returns the step's events. */
static uint32_t cycle(struct rig *g)
{
	g->c.seq++;
	cr_assert_eq(sim_robot_command(&g->r, &g->c, g->now), 0);
	g->now += PERIOD;
	return sim_robot_step(&g->r, g->now);
}

static uint32_t cycles(struct rig *g, int n)
{
	uint32_t ev = 0;

	for (int i = 0; i < n; i++)
		ev |= cycle(g);
	return ev;
}

/* A cycle in which the client sends nothing new. */
static uint32_t quiet_cycle(struct rig *g)
{
	g->now += PERIOD;
	return sim_robot_step(&g->r, g->now);
}

static void set_cmd(struct rig *g, int mode, const double p[6], double accel)
{
	g->c.mode = mode;
	for (int i = 0; i < 6; i++)
		g->c.param[i] = p ? p[i] : 0;
	g->c.accel = accel;
}

static void assert_vec_eq(const double *a, const double *b, int n, double eps, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_assert_float_eq(a[i], b[i], eps, "%s[%d]: %.12f != %.12f", what, i, a[i], b[i]);
}

static double dot_n(const double *a, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += a[i] * a[i];
	return s;
}

static double dist3(const double *a, const double *b)
{
	double d[3] = { a[0] - b[0], a[1] - b[1], a[2] - b[2] };

	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* angle of the rotation taking pose @a's orientation to pose @b's */
static double rot_dist(const double *a, const double *b)
{
	double ra[9], rb[9], m[9], rv[3];

	sim_robot_rotvec_to_matrix(a + 3, ra);
	sim_robot_rotvec_to_matrix(b + 3, rb);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			m[3 * i + j] = ra[3 * i] * rb[3 * j] + ra[3 * i + 1] * rb[3 * j + 1] +
				       ra[3 * i + 2] * rb[3 * j + 2];
	sim_robot_matrix_to_rotvec(m, rv);
	return sqrt(rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]);
}

/* ---- kinematics ---- */

Test(sim_robot, fk_of_zero_pose_is_the_hand_computed_ur5e_pose)
{
	/* q = 0: every joint rotation is identity, so the position is the sum of
	 * the DH translations, (a2 + a3, -(d4 + d6), d1 - d5), and the rotation
	 * is the product of the alpha rotations: Rx(pi/2). */
	static const double q[6] = { 0 };
	static const double want[6] = { -0.8172, -0.2329, 0.0628, M_PI / 2, 0, 0 };
	double pose[6];

	sim_robot_fk(q, NULL, pose);
	assert_vec_eq(pose, want, 6, 1e-12, "pose");
}

Test(sim_robot, fk_of_upright_pose_points_the_arm_straight_up)
{
	/* shoulder and wrist 1 at -pi/2: upper arm and forearm vertical, wrist
	 * offsets d4 + d6 along -y, d5 up; the flange faces -y with x reversed */
	static const double q[6] = { 0, -M_PI / 2, 0, -M_PI / 2, 0, 0 };
	static const double p[3] = { 0, -0.2329, 0.1625 + 0.425 + 0.3922 + 0.0997 };
	static const double rot[9] = { -1, 0, 0, 0, 0, -1, 0, -1, 0 };
	double pose[6], m[9];

	sim_robot_fk(q, NULL, pose);
	assert_vec_eq(pose, p, 3, 1e-12, "position");
	/* a half turn: the axis sign is free, the matrix is not */
	cr_assert_float_eq(sqrt(pose[3] * pose[3] + pose[4] * pose[4] + pose[5] * pose[5]), M_PI,
			   1e-9);
	sim_robot_rotvec_to_matrix(pose + 3, m);
	assert_vec_eq(m, rot, 9, 1e-9, "R");
}

Test(sim_robot, fk_base_joint_turns_the_pose_about_z)
{
	double q[6] = { 0.7, 0, 0, 0, 0, 0 }, pose[6], pose0[6], c = cos(0.7), s = sin(0.7);
	double want[3];

	sim_robot_fk((double[6]){ 0 }, NULL, pose0);
	sim_robot_fk(q, NULL, pose);
	want[0] = c * pose0[0] - s * pose0[1];
	want[1] = s * pose0[0] + c * pose0[1];
	want[2] = pose0[2];
	assert_vec_eq(pose, want, 3, 1e-12, "position");
	/* Rz(0.7) Rx(pi/2) as a rotation vector, computed independently */
	cr_assert_float_eq(
		rot_dist(pose, (double[6]){ 0, 0, 0, 1.5005066824, 0.5477276958, 0.5477276958 }), 0,
		1e-9);
}

Test(sim_robot, fk_matches_reference_configurations)
{
	/* From an independent DH implementation (4x4 homogeneous products). */
	static const struct {
		double q[6], pose[6];
	} ref[] = {
		{ { 0.3, -1.2, 1.4, -0.9, 1.1, 0.5 },
		  { -0.5878123679, -0.3686539875, 0.4616272357, 0.8904180102, -0.3863093242,
		    -0.5054466080 } },
		{ { -1.0, -2.0, -1.0, 0.7, -0.4, 2.5 },
		  { 0.0618500331, -0.5128289852, 0.6418034206, 1.4611083809, -1.2732209061,
		    -0.7607106710 } },
	};

	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		double pose[6];

		sim_robot_fk(ref[i].q, NULL, pose);
		assert_vec_eq(pose, ref[i].pose, 6, 1e-9, "pose");
	}
}

Test(sim_robot, fk_tcp_offset_is_applied_in_the_flange_frame)
{
	static const double q[6] = { 0 };
	static const double off[6] = { 0, 0, 0.1, 0, 0, 0 };
	double pose[6];

	/* at q = 0 the flange z axis is base -y */
	sim_robot_fk(q, off, pose);
	assert_vec_eq(pose, (double[6]){ -0.8172, -0.3329, 0.0628, M_PI / 2, 0, 0 }, 6, 1e-12,
		      "pose");
}

Test(sim_robot, jacobian_matches_finite_differences)
{
	static const double q0[6] = { 0.3, -1.2, 1.4, -0.9, 1.1, 0.5 };
	static const double off[6] = { 0.01, -0.02, 0.15, 0.1, 0.2, -0.3 };
	const double h = 1e-6;
	double jac[36];

	sim_robot_jacobian(q0, off, jac);
	for (int c = 0; c < 6; c++) {
		double qp[6], qm[6], pp[6], pm[6], rp[9], rm[9], m[9], w[3];

		memcpy(qp, q0, sizeof(qp));
		memcpy(qm, q0, sizeof(qm));
		qp[c] += h;
		qm[c] -= h;
		sim_robot_fk(qp, off, pp);
		sim_robot_fk(qm, off, pm);
		for (int k = 0; k < 3; k++)
			cr_assert_float_eq(jac[6 * k + c], (pp[k] - pm[k]) / (2 * h), 1e-6,
					   "v%d of joint %d", k, c);
		/* angular: R+ R-^T = exp(2h [w]x) */
		sim_robot_rotvec_to_matrix(pp + 3, rp);
		sim_robot_rotvec_to_matrix(pm + 3, rm);
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				m[3 * i + j] = rp[3 * i] * rm[3 * j] +
					       rp[3 * i + 1] * rm[3 * j + 1] +
					       rp[3 * i + 2] * rm[3 * j + 2];
		sim_robot_matrix_to_rotvec(m, w);
		for (int k = 0; k < 3; k++)
			cr_assert_float_eq(jac[6 * (k + 3) + c], w[k] / (2 * h), 1e-6,
					   "w%d of joint %d", k, c);
	}
}

Test(sim_robot, rotation_vectors_round_trip)
{
	static const double cases[][3] = {
		{ 0, 0, 0 },
		{ 1e-10, -2e-10, 3e-10 },
		{ 1e-4, 0, -1e-4 },
		{ 0.3, -0.2, 0.1 },
		{ 0, 0, M_PI / 2 },
		{ 1.2, 1.3, -0.4 },
		{ 0, -(M_PI - 1e-7), 0 },
		{ (M_PI - 1e-3) / 1.7320508075688772, (M_PI - 1e-3) / 1.7320508075688772,
		  -(M_PI - 1e-3) / 1.7320508075688772 },
	};
	uint64_t s = 42;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double m[9], rv[3];

		sim_robot_rotvec_to_matrix(cases[i], m);
		sim_robot_matrix_to_rotvec(m, rv);
		assert_vec_eq(rv, cases[i], 3, 1e-9, "rv");
	}
	/* random axes, angles over (0, pi) */
	for (int i = 0; i < 1000; i++) {
		double v[3], m[9], rv[3], len = 0, ang;

		for (int k = 0; k < 3; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			v[k] = (double)(s >> 11) * 0x1p-53 - 0.5;
			len += v[k] * v[k];
		}
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		ang = ((double)(s >> 11) * 0x1p-53) * (M_PI - 1e-6);
		len = sqrt(len);
		for (int k = 0; k < 3; k++)
			v[k] = v[k] / len * ang;
		sim_robot_rotvec_to_matrix(v, m);
		sim_robot_matrix_to_rotvec(m, rv);
		assert_vec_eq(rv, v, 3, 1e-8, "random rv");
	}
	/* exactly pi: either sign, the same matrix */
	{
		double v[3] = { 0, M_PI / sqrt(2), -M_PI / sqrt(2) }, m[9], m2[9], rv[3];

		sim_robot_rotvec_to_matrix(v, m);
		sim_robot_matrix_to_rotvec(m, rv);
		sim_robot_rotvec_to_matrix(rv, m2);
		assert_vec_eq(m2, m, 9, 1e-12, "R at pi");
		cr_assert_float_eq(sqrt(rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]), M_PI,
				   1e-12);
	}
}

/* ---- arguments ---- */

Test(sim_robot, init_rejects_bad_configurations)
{
	struct sim_robot r;
	struct sim_robot_config c, bad;

	sim_robot_config_default(&c);
	cr_assert_eq(sim_robot_init(NULL, &c), -EINVAL);
	cr_assert_eq(sim_robot_init(&r, NULL), -EINVAL);
	bad = c;
	bad.period_ns = 0;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.qd_max[3] = 0;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.qdd_max[0] = NAN;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.q_min[2] = bad.q_max[2];
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.q0[2] = 3.5; /* beyond the elbow's +-pi */
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.force_noise = -1;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.payload_mass = -0.5;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.payload_cog[1] = NAN;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.payload_inertia[4] = INFINITY;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	bad = c;
	bad.contact = (struct sim_contact){ .enabled = true, .stiffness = 1000 };
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL, "zero normal");
	bad.contact.normal[2] = 1;
	bad.contact.damping = -1;
	cr_assert_eq(sim_robot_init(&r, &bad), -EINVAL);
	cr_assert_eq(sim_robot_set_contact(&r, &bad.contact), -EINVAL);
	cr_assert_eq(sim_robot_init(&r, &c), 0);
}

Test(sim_robot, command_rejects_unknown_modes_and_non_finite_values)
{
	struct rig g;
	struct sim_robot_cmd c = { .mode = RTL_RTDE_CMD_SPEEDJ, .param = { 0.1 } };

	rig_init(&g, NULL);
	cr_assert_eq(sim_robot_command(NULL, &c, 0), -EINVAL);
	cr_assert_eq(sim_robot_command(&g.r, NULL, 0), -EINVAL);
	c.mode = RTL_RTDE_CMD_MODE_COUNT;
	cr_assert_eq(sim_robot_command(&g.r, &c, 0), -EINVAL);
	c.mode = -1;
	cr_assert_eq(sim_robot_command(&g.r, &c, 0), -EINVAL);
	c.mode = RTL_RTDE_CMD_SPEEDJ;
	c.param[4] = INFINITY;
	cr_assert_eq(sim_robot_command(&g.r, &c, 0), -EINVAL);
	c.param[4] = 0;
	c.gain = NAN;
	cr_assert_eq(sim_robot_command(&g.r, &c, 0), -EINVAL);
	/* nothing was taken: the robot stays idle and at rest */
	quiet_cycle(&g);
	cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_IDLE);
	cr_assert_eq(g.r.target_qd[0], 0);
}

/* ---- motion ---- */

Test(sim_robot, speedj_ramps_at_the_acceleration_and_integrates_position)
{
	struct rig g;
	double q0[6], prev_q[6];

	rig_init(&g, NULL);
	memcpy(q0, g.r.target_q, sizeof(q0));
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.5, -0.25, 0, 0, 0, 0 }, 1.0);
	for (int k = 1; k <= 500; k++) {
		memcpy(prev_q, g.r.target_q, sizeof(prev_q));
		cr_assert_eq(cycle(&g) & SIM_ROBOT_EV_ACC_LIMIT, 0);
		if (k <= 250) {
			/* the leading joint at a; joint 1 in proportion, done together */
			cr_assert_float_eq(g.r.target_qd[0], k * DT * 1.0, 1e-12);
			cr_assert_float_eq(g.r.target_qd[1], -k * DT * 0.5, 1e-12);
			cr_assert_float_eq(g.r.target_qdd[0], 1.0, 1e-9);
		} else {
			cr_assert_float_eq(g.r.target_qd[0], 0.5, 1e-12);
			cr_assert_float_eq(g.r.target_qdd[0], 0, 1e-9);
		}
		/* the actual joints are the targets of the previous cycle */
		assert_vec_eq(g.r.actual_q, prev_q, 6, 0, "actual_q");
	}
	cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_SPEEDJ);
	/* 0.5 s ramp (area 0.125) then 0.5 s at 0.5 rad/s */
	cr_assert_float_eq(g.r.target_q[0] - q0[0], 0.375, 1e-9);
	cr_assert_float_eq(g.r.target_q[1] - q0[1], -0.1875, 1e-9);
	for (int i = 2; i < 6; i++)
		cr_assert_float_eq(g.r.target_q[i], q0[i], 1e-15);
	/* the TCP speed is the Jacobian times the joint speeds */
	{
		double jac[36], v;

		sim_robot_jacobian(g.r.target_q, NULL, jac);
		v = jac[0] * 0.5 - jac[1] * 0.25;
		cr_assert_float_eq(g.r.target_TCP_speed[0], v, 1e-12);
	}
}

Test(sim_robot, speedj_is_clamped_to_the_joint_speed_limit_keeping_direction)
{
	struct rig g;
	uint32_t ev;

	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 10, 5, 0, 0, 0, 0 }, 15);
	ev = cycles(&g, 200);
	cr_assert(ev & SIM_ROBOT_EV_VEL_LIMIT);
	cr_assert_float_eq(g.r.target_qd[0], M_PI, 1e-12);
	cr_assert_float_eq(g.r.target_qd[1], M_PI / 2, 1e-12);
	cr_assert(g.r.limited & SIM_ROBOT_EV_VEL_LIMIT);
}

Test(sim_robot, acceleration_beyond_the_joint_limit_is_capped)
{
	struct rig g;

	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1, 0, 0, 0.5, 0, 0 }, 100);
	cr_assert(cycle(&g) & SIM_ROBOT_EV_ACC_LIMIT);
	cr_assert_float_eq(g.r.target_qdd[0], 15, 1e-9);
	cr_assert_float_eq(g.r.target_qdd[3], 7.5, 1e-9, "direction kept");
	cycles(&g, 40); /* 1 / 15 s = 33.3 cycles */
	cr_assert_float_eq(g.r.target_qd[0], 1, 1e-12);
	cr_assert_float_eq(g.r.target_qd[3], 0.5, 1e-12);
}

Test(sim_robot, speedl_moves_the_tcp_along_a_straight_line)
{
	static const double v[6] = { 0.1, -0.05, 0.08, 0, 0, 0 };
	const double speed = sqrt(0.1 * 0.1 + 0.05 * 0.05 + 0.08 * 0.08), a = 0.5;
	struct rig g;
	double p0[6], u[3], along = 0, max_off = 0, max_rot = 0;

	rig_init(&g, NULL);
	memcpy(p0, g.r.target_TCP_pose, sizeof(p0));
	for (int k = 0; k < 3; k++)
		u[k] = v[k] / speed;
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, v, a);
	for (int n = 0; n < 500; n++) {
		double d[3], off[3];

		cr_assert_eq(cycle(&g) & ~(uint32_t)SIM_ROBOT_EV_WATCHDOG, 0, "no limit bound");
		for (int k = 0; k < 3; k++)
			d[k] = g.r.target_TCP_pose[k] - p0[k];
		along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
		for (int k = 0; k < 3; k++)
			off[k] = d[k] - along * u[k];
		max_off = fmax(max_off, sqrt(off[0] * off[0] + off[1] * off[1] + off[2] * off[2]));
		max_rot = fmax(max_rot, rot_dist(p0, g.r.target_TCP_pose));
	}
	cr_assert_lt(max_off, 2e-5, "off the line by %g m", max_off);
	cr_assert_lt(max_rot, 1e-4, "tool turned by %g rad", max_rot);
	/* ramp of speed / a seconds, then cruise: 1 s in all */
	cr_assert_float_eq(along, speed * (1 - speed / a / 2), 2e-4, "travelled %f", along);
	assert_vec_eq(g.r.target_TCP_speed, v, 6, 1e-4, "twist");
	assert_vec_eq(g.r.actual_TCP_speed, v, 6, 1e-3, "actual twist");
}

Test(sim_robot, speedl_rotation_turns_the_tool_in_place)
{
	static const double v[6] = { 0, 0, 0, 0, 0, 0.3 };
	struct rig g;
	double p0[6], r0[9], rz[9], want[9], got[9];
	double ang = 0.3 * (1 - 0.3 / 1.2 / 2); /* default 1.2 rad/s^2 ramp, 1 s */

	rig_init(&g, NULL);
	memcpy(p0, g.r.target_TCP_pose, sizeof(p0));
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, v, 0);
	cycles(&g, 500);
	cr_assert_lt(dist3(g.r.target_TCP_pose, p0), 1e-4);
	/* turned about base z: R = Rz(ang) R0 */
	sim_robot_rotvec_to_matrix(p0 + 3, r0);
	sim_robot_rotvec_to_matrix((double[3]){ 0, 0, ang }, rz);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			want[3 * i + j] = rz[3 * i] * r0[j] + rz[3 * i + 1] * r0[3 + j] +
					  rz[3 * i + 2] * r0[6 + j];
	sim_robot_rotvec_to_matrix(g.r.target_TCP_pose + 3, got);
	assert_vec_eq(got, want, 9, 2e-4, "R");
}

Test(sim_robot, servoj_converges_to_the_target_without_overshoot)
{
	static const double dq[6] = { 0.3, -0.2, 0.25, 0.1, -0.4, 0.5 };
	struct rig g;
	double tgt[6];

	rig_init(&g, NULL);
	for (int i = 0; i < 6; i++)
		tgt[i] = g.r.target_q[i] + dq[i];
	set_cmd(&g, RTL_RTDE_CMD_SERVOJ, tgt, 0);
	for (int n = 0; n < 1500; n++) {
		cycle(&g);
		for (int i = 0; i < 6; i++) {
			cr_assert_leq(fabs(g.r.target_qd[i]), M_PI + 1e-12);
			cr_assert_leq(fabs(g.r.target_qdd[i]), 15 + 1e-6);
			/* never beyond the target */
			cr_assert_geq((tgt[i] - g.r.target_q[i]) * (dq[i] > 0 ? 1 : -1), -1e-9,
				      "joint %d overshoots", i);
		}
	}
	assert_vec_eq(g.r.target_q, tgt, 6, 1e-6, "q");
	assert_vec_eq(g.r.target_qd, (double[6]){ 0 }, 6, 1e-4, "qd");
}

Test(sim_robot, servoj_gain_and_lookahead_set_the_stiffness)
{
	struct rig soft, stiff;
	double tgt[6];

	rig_init(&soft, NULL);
	rig_init(&stiff, NULL);
	memcpy(tgt, soft.r.target_q, sizeof(tgt));
	tgt[5] += 0.05;
	set_cmd(&soft, RTL_RTDE_CMD_SERVOJ, tgt, 0);
	soft.c.lookahead = 0.2;
	soft.c.gain = 100; /* tau = 0.6 s */
	set_cmd(&stiff, RTL_RTDE_CMD_SERVOJ, tgt, 0);
	stiff.c.lookahead = 0.03;
	stiff.c.gain = 2000; /* tau = 4.5 ms */
	cycles(&soft, 100);
	cycles(&stiff, 100);
	cr_assert_lt(fabs(tgt[5] - stiff.r.target_q[5]), 1e-4);
	/* a first-order lag of 0.6 s leaves about exp(-0.2 / 0.6) after 0.2 s */
	cr_assert_float_eq(tgt[5] - soft.r.target_q[5], 0.05 * exp(-0.2 / 0.6), 0.004);
}

Test(sim_robot, stop_decelerates_to_rest_in_the_expected_time)
{
	struct rig g;
	double prev = 1.0;

	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1.0, 0, 0, -0.5, 0, 0 }, 2);
	cycles(&g, 300);
	cr_assert_float_eq(g.r.target_qd[0], 1.0, 1e-12);
	set_cmd(&g, RTL_RTDE_CMD_STOP, NULL, 2);
	/* 1 rad/s at 2 rad/s^2: 0.5 s = 250 cycles, all joints together */
	for (int n = 1; n <= 250; n++) {
		cycle(&g);
		cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_STOP);
		cr_assert_lt(g.r.target_qd[0], prev + 1e-15);
		prev = g.r.target_qd[0];
		cr_assert_float_eq(g.r.target_qd[3], -0.5 * g.r.target_qd[0], 1e-12);
		if (n < 250)
			cr_assert_gt(g.r.target_qd[0], 0, "at rest too early, cycle %d", n);
	}
	assert_vec_eq(g.r.target_qd, (double[6]){ 0 }, 6, 1e-12, "qd");
	cycle(&g);
	assert_vec_eq(g.r.actual_qd, (double[6]){ 0 }, 6, 1e-12, "actual qd");
}

Test(sim_robot, stop_after_speedl_brakes_along_the_line)
{
	static const double v[6] = { 0, 0.1, 0, 0, 0, 0 };
	struct rig g;
	double p0[6];

	rig_init(&g, NULL);
	memcpy(p0, g.r.target_TCP_pose, sizeof(p0));
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, v, 1.0);
	cycles(&g, 200);
	set_cmd(&g, RTL_RTDE_CMD_STOP, NULL, 0.5); /* stopl: 0.1 m/s at 0.5 m/s^2 = 0.2 s */
	cycles(&g, 95);
	cr_assert_gt(g.r.target_TCP_speed[1], 0.001, "still moving");
	cycles(&g, 30);
	cr_assert_lt(fabs(g.r.target_TCP_speed[1]), 1e-5);
	cr_assert_lt(fabs(g.r.target_TCP_pose[0] - p0[0]), 2e-5);
	cr_assert_lt(fabs(g.r.target_TCP_pose[2] - p0[2]), 2e-5);
	/* 0.1 s ramp up + 0.3 s cruise + 0.2 s brake */
	cr_assert_float_eq(g.r.target_TCP_pose[1] - p0[1], 0.1 * (0.05 + 0.3 + 0.1), 2e-4);
}

Test(sim_robot, idle_brings_a_moving_robot_to_rest_with_the_default_acceleration)
{
	struct rig g;

	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0, 0, 0, 0, 0, 0.7 }, 5);
	cycles(&g, 100);
	set_cmd(&g, RTL_RTDE_CMD_IDLE, NULL, 99); /* idle ignores the register */
	cycles(&g, 249);			  /* 0.7 / 1.4 = 0.5 s */
	cr_assert_gt(g.r.target_qd[5], 0);
	cycle(&g);
	cr_assert_float_eq(g.r.target_qd[5], 0, 1e-12);
	cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_IDLE);
}

Test(sim_robot, position_limit_brakes_the_joint)
{
	struct sim_robot_config c;
	struct rig g;
	uint32_t ev = 0;

	sim_robot_config_default(&c);
	c.q_max[0] = 0.5;
	rig_init(&g, &c);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 2, 0, 0, 0, 0, 0 }, 10);
	for (int n = 0; n < 1000; n++) {
		ev |= cycle(&g);
		cr_assert_leq(g.r.target_q[0], 0.5);
		cr_assert_leq(fabs(g.r.target_qdd[0]), 15 + 1e-6);
	}
	cr_assert(ev & SIM_ROBOT_EV_POS_LIMIT);
	cr_assert_float_eq(g.r.target_q[0], 0.5, 0.01);
	cr_assert_float_eq(g.r.target_qd[0], 0, 1e-9);
}

/* ---- watchdog ---- */

static int messages;
static enum sim_robot_level last_level;

static void on_message(void *ctx, enum sim_robot_level level, const char *text)
{
	cr_assert_eq(ctx, &messages);
	cr_assert(strstr(text, "watchdog"));
	last_level = level;
	messages++;
}

Test(sim_robot, watchdog_stops_the_robot_when_the_heartbeat_goes_stale)
{
	struct sim_robot_config c;
	struct rig g;
	int64_t last;
	int n;

	sim_robot_config_default(&c);
	c.message = on_message;
	c.message_ctx = &messages;
	messages = 0;
	rig_init(&g, &c);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.5, 0, 0, 0, 0, 0 }, 2);
	cr_assert_eq(cycles(&g, 250) & SIM_ROBOT_EV_WATCHDOG, 0);
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);
	last = g.now - PERIOD; /* when the last new heartbeat was written */
	cr_assert_eq(sim_robot_command(&g.r, &g.c, g.now), 0, "same heartbeat: accepted");
	/* the client keeps writing, but never a new heartbeat */
	for (n = 1;; n++) {
		uint32_t ev;

		g.now += PERIOD;
		ev = sim_robot_step(&g.r, g.now);
		if (ev & SIM_ROBOT_EV_WATCHDOG)
			break;
		cr_assert_eq(sim_robot_command(&g.r, &g.c, g.now), 0);
		cr_assert_leq(g.now - last, 100000000, "late trip");
	}
	cr_assert_eq(g.now - last, 102000000, "trips at the first step past 100 ms");
	cr_assert_eq(g.r.watchdog_trips, 1);
	cr_assert(g.r.watchdog_tripped);
	cr_assert_eq(messages, 1);
	cr_assert_eq(last_level, SIM_ROBOT_WARNING);
	cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_STOP);
	cr_assert_eq(sim_robot_cmd_status(&g.r),
		     RTL_RTDE_CMD_STATUS_READY | RTL_RTDE_CMD_STATUS_WATCHDOG);
	/* the stale command cannot restart the motion */
	cr_assert_eq(sim_robot_command(&g.r, &g.c, g.now), -ESTALE);
	/* 0.5 rad/s at 10 rad/s^2: 25 cycles, the trip step included */
	for (n = 0; n < 24; n++)
		quiet_cycle(&g);
	cr_assert_float_eq(g.r.target_qd[0], 0, 1e-12);
	cr_assert_eq(g.r.watchdog_trips, 1, "one trip, not one per step");
	cr_assert_eq(messages, 1);
	for (n = 0; n < 100; n++)
		quiet_cycle(&g);
	cr_assert_eq(g.r.target_qd[0], 0);
	/* a new heartbeat resumes */
	cycles(&g, 50);
	cr_assert(!g.r.watchdog_tripped);
	cr_assert_eq(g.r.active_mode, RTL_RTDE_CMD_SPEEDJ);
	cr_assert_float_eq(g.r.target_qd[0], 50 * DT * 2, 1e-12, "ramping again from rest");
	cr_assert_eq(sim_robot_cmd_status(&g.r), RTL_RTDE_CMD_STATUS_READY);
	cr_assert_eq(g.r.last_seq, g.c.seq);
}

Test(sim_robot, watchdog_timeout_comes_from_the_command_or_the_configuration)
{
	struct sim_robot_config c;
	struct rig g;
	int n;

	/* the register: 20 ms */
	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.1 }, 0);
	g.c.watchdog_ms = 20;
	cycle(&g);
	for (n = 1; !(quiet_cycle(&g) & SIM_ROBOT_EV_WATCHDOG); n++)
		cr_assert_lt(n, 100);
	cr_assert_eq(n, 10, "tripped after %d quiet cycles", n);

	/* the register: off */
	rig_init(&g, NULL);
	g.c.watchdog_ms = -1;
	cycle(&g);
	for (n = 0; n < 1000; n++)
		cr_assert_eq(quiet_cycle(&g), 0);

	/* the configuration: off */
	sim_robot_config_default(&c);
	c.watchdog_ns = 0;
	rig_init(&g, &c);
	cycle(&g);
	for (n = 0; n < 1000; n++)
		cr_assert_eq(quiet_cycle(&g), 0);
}

Test(sim_robot, watchdog_waits_for_the_first_heartbeat)
{
	struct rig g;

	rig_init(&g, NULL);
	for (int n = 0; n < 1000; n++)
		cr_assert_eq(quiet_cycle(&g), 0);
	cr_assert_eq(g.r.watchdog_trips, 0);
}

Test(sim_robot, stop_and_idle_never_trip_the_watchdog)
{
	struct rig g;

	for (int mode = RTL_RTDE_CMD_IDLE; mode <= RTL_RTDE_CMD_STOP; mode += RTL_RTDE_CMD_STOP) {
		rig_init(&g, NULL);
		set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.5 }, 2);
		cycles(&g, 100);
		/* The client says stop once and leaves: no new heartbeat. */
		set_cmd(&g, mode, NULL, 2);
		cycle(&g);
		for (int n = 0; n < 1000; n++)
			cr_assert_eq(quiet_cycle(&g), 0, "mode %d tripped after %d cycles", mode,
				     n);
		cr_assert_eq(g.r.watchdog_trips, 0);
		cr_assert(sim_robot_at_rest(&g.r), "mode %d: at rest", mode);
	}
	/* A motion command still does. */
	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SERVOJ, (double[6]){ 0 }, 0);
	cycles(&g, 10);
	for (int n = 0; n < 100; n++)
		quiet_cycle(&g);
	cr_assert_eq(g.r.watchdog_trips, 1);
}

Test(sim_robot, stops_are_counted_with_the_cycles_to_rest)
{
	struct rig g;
	struct sim_robot_summary sum;

	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_STOP, NULL, 2);
	cycles(&g, 10);
	cr_assert_eq(g.r.stops, 0, "a stop at rest is no stop");
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1.0 }, 2);
	cycles(&g, 300);
	set_cmd(&g, RTL_RTDE_CMD_STOP, (double[6]){ 0 }, 4);
	cycles(&g, 200);
	/* 1 rad/s at 4 rad/s^2: 125 cycles */
	cr_assert_eq(g.r.stops, 1);
	cr_assert_eq(g.r.stops_at_rest, 1);
	cr_assert_eq(g.r.last_stop_cycles, 125);
	cr_assert_eq(g.r.last_stop_cmd.accel, 4);
	/* A stop superseded before rest does not count as reaching it. */
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1.0 }, 2);
	cycles(&g, 300);
	set_cmd(&g, RTL_RTDE_CMD_IDLE, NULL, 0);
	cycles(&g, 10);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1.0 }, 2);
	cycles(&g, 10);
	sim_robot_summarize(&g.r, &sum);
	cr_assert_eq(sum.stops, 2);
	cr_assert_eq(sum.stops_at_rest, 1);
	cr_assert_eq(sum.max_stop_cycles, 125);
	cr_assert(!sum.at_rest);
	cr_assert_gt(sum.max_speed, 0.9);
}

/* ---- inputs ---- */

Test(sim_robot, digital_outputs_change_only_under_their_masks)
{
	struct rig g;
	struct sim_robot_inputs in = { 0 };

	rig_init(&g, NULL);
	in.standard_digital_output_mask = 0x05;
	in.standard_digital_output = 0xff;
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0);
	cr_assert_eq(g.r.standard_digital_out, 0x05);
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0, "idempotent");
	cr_assert_eq(g.r.standard_digital_out, 0x05);
	in.standard_digital_output_mask = 0x02;
	in.standard_digital_output = 0x00;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_eq(g.r.standard_digital_out, 0x05, "clearing an unset bit");
	in.standard_digital_output_mask = 0x01;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_eq(g.r.standard_digital_out, 0x04);

	in.standard_digital_output_mask = 0;
	in.configurable_digital_output_mask = 0xf0;
	in.configurable_digital_output = 0xa5;
	in.tool_digital_output_mask = 0xff;
	in.tool_digital_output = 0xff;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_eq(g.r.standard_digital_out, 0x04);
	cr_assert_eq(g.r.configurable_digital_out, 0xa0);
	cr_assert_eq(g.r.tool_digital_out, 0x03, "the tool has two outputs");
	cr_assert_eq(sim_robot_digital_output_bits(&g.r), 0x04 | 0xa0 << 8 | 0x3 << 16);
	cr_assert_eq(sim_robot_set_inputs(&g.r, NULL), -EINVAL);
}

Test(sim_robot, analog_outputs_take_domain_and_ratio_under_their_mask)
{
	struct rig g;
	struct sim_robot_inputs in = { 0 };

	rig_init(&g, NULL);
	in.standard_analog_output_mask = 0x2;
	in.standard_analog_output_type = 0x3;
	in.standard_analog_output_0 = 0.5;
	in.standard_analog_output_1 = 0.25;
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0);
	cr_assert_float_eq(g.r.standard_analog_output[0], 4.0, 1e-12, "AO0 untouched");
	cr_assert_float_eq(g.r.standard_analog_output[1], 2.5, 1e-12, "0.25 of 10 V");
	cr_assert_eq(g.r.analog_io_types, 0x8);
	in.standard_analog_output_mask = 0x1;
	in.standard_analog_output_type = 0x0;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_float_eq(g.r.standard_analog_output[0], 12.0, 1e-12, "4 + 0.5 * 16 mA");
	cr_assert_eq(g.r.analog_io_types, 0x8);
	in.standard_analog_output_0 = 2.0;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_float_eq(g.r.standard_analog_output[0], 20.0, 1e-12, "ratio clamped");
	in.standard_analog_output_0 = NAN;
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), -EINVAL);
}

Test(sim_robot, speed_slider_scales_commanded_motion)
{
	struct rig g;
	struct sim_robot_inputs in = { .speed_slider_mask = 0, .speed_slider_fraction = 0.1 };
	double q0;

	rig_init(&g, NULL);
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0);
	cr_assert_float_eq(g.r.target_speed_fraction, 1.0, 0, "mask 0: ignored");
	in.speed_slider_mask = 1;
	in.speed_slider_fraction = 0.5;
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0);
	cr_assert_float_eq(g.r.target_speed_fraction, 0.5, 0);
	cr_assert_float_eq(g.r.speed_scaling, 1.0, 0, "the slider is not the limiter");

	/* half the commanded speed, and so half the distance */
	q0 = g.r.target_q[0];
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.4 }, 1.0);
	cycles(&g, 500);
	cr_assert_float_eq(g.r.target_qd[0], 0.2, 1e-12);
	cr_assert_float_eq(g.r.target_q[0] - q0, 0.2 * (1 - 0.1), 1e-9);
	cr_assert_float_eq(g.r.speed_scaling, 1.0, 0, "0.2 rad/s is within the limit");
	cr_assert_float_eq(g.r.speed_scaling * g.r.target_speed_fraction, g.r.target_qd[0] / 0.4,
			   1e-12, "the combined scaling is the executed fraction");

	/* servoj moves no faster than the scaled joint limit */
	set_cmd(&g, RTL_RTDE_CMD_SERVOJ, g.r.target_q, 0);
	g.c.param[1] += 2;
	g.c.gain = 2000;
	g.c.lookahead = 0.03;
	cycles(&g, 300);
	cr_assert_float_eq(g.r.target_qd[1], 0.5 * M_PI, 1e-9);

	in.speed_slider_fraction = 1.7;
	sim_robot_set_inputs(&g.r, &in);
	cr_assert_float_eq(g.r.target_speed_fraction, 1.0, 0, "clamped");
	in.speed_slider_fraction = NAN;
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), -EINVAL);
	cr_assert_float_eq(g.r.target_speed_fraction, 1.0, 0);
}

Test(sim_robot, speed_scaling_is_the_speed_limiters_ratio)
{
	struct rig g;
	struct sim_robot_inputs in = { .speed_slider_mask = 1, .speed_slider_fraction = 0.5 };

	/* 10 rad/s on joint 0 against a pi rad/s limit: the limiter takes
	 * pi / 10 of the command, from the first cycle on */
	rig_init(&g, NULL);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 10, 5, 0, 0, 0, 0 }, 15);
	cycle(&g);
	cr_assert_float_eq(g.r.speed_scaling, M_PI / 10, 1e-12);
	cycles(&g, 200);
	cr_assert_float_eq(g.r.target_qd[0], M_PI, 1e-12);
	cr_assert_float_eq(g.r.speed_scaling, g.r.target_qd[0] / 10, 1e-12, "the applied ratio");
	cr_assert_float_eq(g.r.target_speed_fraction, 1.0, 0);

	/* with the slider at half, the limiter has half as much to take */
	cr_assert_eq(sim_robot_set_inputs(&g.r, &in), 0);
	cycles(&g, 10);
	cr_assert_float_eq(g.r.speed_scaling, M_PI / 5, 1e-12);
	cr_assert_float_eq(g.r.speed_scaling * g.r.target_speed_fraction, g.r.target_qd[0] / 10,
			   1e-12, "combined = executed / commanded");

	/* back within the limit: no scaling */
	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 1, 0, 0, 0, 0, 0 }, 15);
	cycle(&g);
	cr_assert_float_eq(g.r.speed_scaling, 1.0, 0);
}

Test(sim_robot, speedl_beyond_the_joint_limits_reports_speed_scaling)
{
	struct rig g;
	double lead = 0;

	rig_init(&g, NULL);
	/* turning the tool about its own (vertical) axis at 8 rad/s: the last
	 * wrist cannot follow past pi rad/s; 0.4 s is past the ramp at the
	 * joints' 15 rad/s^2 */
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, (double[6]){ 0, 0, 0, 0, 0, 8 }, 50);
	cycles(&g, 200);
	cr_assert(g.r.limited & SIM_ROBOT_EV_VEL_LIMIT);
	cr_assert_lt(g.r.speed_scaling, 1.0);
	cr_assert_gt(g.r.speed_scaling, 0.0);
	for (int i = 0; i < 6; i++)
		lead = fmax(lead, fabs(g.r.target_qd[i]) / g.r.cfg.qd_max[i]);
	cr_assert_float_eq(lead, 1.0, 1e-9, "the leading joint runs at its limit");
}

/* ---- tool accelerometer ---- */

#define G_PLANT 9.82 /* UR's g, which the plant uses */

/* What an accelerometer at rest in the flange reads at @q: "up" (specific
 * force, +g away from the earth) resolved along the flange's axes, which
 * are the columns of the flange's rotation from the FK. */
static void gravity_in_flange(const double q[6], double out[3])
{
	double pose[6], rot[9], up[3] = { 0, 0, G_PLANT };

	sim_robot_fk(q, NULL, pose);
	sim_robot_rotvec_to_matrix(pose + 3, rot);
	for (int axis = 0; axis < 3; axis++)
		out[axis] = rot[0 + axis] * up[0] + rot[3 + axis] * up[1] + rot[6 + axis] * up[2];
}

Test(sim_robot, tool_accelerometer_reads_gravity_in_the_flange_frame_at_rest)
{
	static const double poses[][6] = {
		{ 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 },
		{ 0, 0, 0, 0, 0, 0 },
		{ 0.3, -1.2, 1.9, -2.0, -1.1, 0.7 },
		{ -1.0, -0.4, -1.5, 0.8, 2.2, -2.5 },
	};
	struct sim_robot_config c;
	struct rig g;
	double want[3];

	/* the start pose points the flange straight down (the FK's rotation
	 * is pi about (1, 1, 0) / sqrt 2): "up" is -z of the tool */
	rig_init(&g, NULL);
	quiet_cycle(&g);
	assert_vec_eq(g.r.actual_tool_accelerometer, (double[3]){ 0, 0, -G_PLANT }, 3, 1e-12,
		      "start pose");

	sim_robot_config_default(&c);
	for (size_t k = 0; k < sizeof(poses) / sizeof(poses[0]); k++) {
		memcpy(c.q0, poses[k], sizeof(c.q0));
		rig_init(&g, &c);
		quiet_cycle(&g);
		gravity_in_flange(poses[k], want);
		cr_assert_float_eq(sqrt(dot_n(g.r.actual_tool_accelerometer, 3)), 9.81, 0.02,
				   "pose %zu", k);
		assert_vec_eq(g.r.actual_tool_accelerometer, want, 3, 1e-12, "direction");
	}

	/* a TCP offset moves the TCP, not the flange the sensor sits in */
	c.tcp_offset[2] = 0.1;
	c.tcp_offset[3] = 0.9;
	c.tcp_offset[5] = -0.4;
	rig_init(&g, &c);
	quiet_cycle(&g);
	assert_vec_eq(g.r.actual_tool_accelerometer, want, 3, 1e-12, "with a TCP offset");
}

Test(sim_robot, tool_accelerometer_adds_the_tcp_acceleration)
{
	struct rig g;
	double rot[9], up[3], want[3], rest[3];

	rig_init(&g, NULL);
	/* the start pose's flange: z down, so base x and y swap in the tool */
	sim_robot_rotvec_to_matrix(g.r.actual_TCP_pose + 3, rot);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, (double[6]){ 0.2, 0, 0, 0, 0, 0 }, 1.0);
	cycles(&g, 50); /* halfway up the 0.2 s ramp at 1 m/s^2 */
	up[0] = 1.0;
	up[1] = 0;
	up[2] = G_PLANT;
	for (int axis = 0; axis < 3; axis++)
		want[axis] = rot[0 + axis] * up[0] + rot[3 + axis] * up[1] + rot[6 + axis] * up[2];
	assert_vec_eq(g.r.actual_tool_accelerometer, want, 3, 0.02, "ramping");

	/* at constant speed only gravity is left; at rest again, exactly */
	cycles(&g, 200);
	gravity_in_flange(g.r.actual_q, rest);
	assert_vec_eq(g.r.actual_tool_accelerometer, rest, 3, 0.02, "constant speed");
	set_cmd(&g, RTL_RTDE_CMD_STOP, NULL, 2.0);
	cycles(&g, 200);
	cr_assert(sim_robot_at_rest(&g.r));
	cycle(&g);
	gravity_in_flange(g.r.actual_q, rest);
	assert_vec_eq(g.r.actual_tool_accelerometer, rest, 3, 1e-12, "at rest");
}

/* ---- payload ---- */

/* Height of the payload's centre of gravity at @q, from the FK. */
static double cog_height(const double q[6], const double cog[3])
{
	double pose[6], rot[9];

	sim_robot_fk(q, NULL, pose);
	sim_robot_rotvec_to_matrix(pose + 3, rot);
	return pose[2] + rot[6] * cog[0] + rot[7] * cog[1] + rot[8] * cog[2];
}

Test(sim_robot, payload_is_reported_and_loads_the_joints)
{
	struct sim_robot_config c;
	struct rig bare, loaded;
	const double m = 2.5, cog[3] = { 0.02, -0.01, 0.08 };

	/* the default: a 1 kg tool */
	rig_init(&loaded, NULL);
	cr_assert_float_eq(loaded.r.payload, 1.0, 0);
	assert_vec_eq(loaded.r.payload_cog, (double[3]){ 0, 0, 0.05 }, 3, 0, "cog");
	assert_vec_eq(loaded.r.payload_inertia, (double[6]){ 0.001, 0.001, 0.001, 0, 0, 0 }, 6, 0,
		      "inertia");

	sim_robot_config_default(&c);
	c.q0[1] = -1.0;
	c.q0[3] = -1.2;
	c.q0[4] = 0.6;
	c.payload_mass = 0;
	rig_init(&bare, &c);
	c.payload_mass = m;
	memcpy(c.payload_cog, cog, sizeof(cog));
	rig_init(&loaded, &c);
	quiet_cycle(&bare);
	quiet_cycle(&loaded);
	cr_assert_float_eq(loaded.r.payload, m, 0);
	assert_vec_eq(loaded.r.payload_cog, cog, 3, 0, "cog");
	/* a weight m g at height h(q) takes m g dh/dq_j more of joint j */
	for (int j = 0; j < 6; j++) {
		double qp[6], qm[6], dh;

		memcpy(qp, c.q0, sizeof(qp));
		memcpy(qm, c.q0, sizeof(qm));
		qp[j] += 1e-6;
		qm[j] -= 1e-6;
		dh = (cog_height(qp, cog) - cog_height(qm, cog)) / 2e-6;
		cr_assert_float_eq(loaded.r.target_moment[j] - bare.r.target_moment[j],
				   m * G_PLANT * dh, 1e-6, "joint %d", j);
	}
	cr_assert_gt(fabs(loaded.r.actual_current[1]), fabs(bare.r.actual_current[1]) + 0.1,
		     "the shoulder feels the payload");
	cr_assert_gt(loaded.r.actual_robot_current, bare.r.actual_robot_current);
}

/* ---- execution time ---- */

Test(sim_robot, execution_time_is_plausible_seeded_and_varies)
{
	struct sim_robot_config c;
	struct rig g, same, other;
	double lo = 1e9, hi = 0, rest = 0, moving = 0;
	bool differs = false;
	const int n = 2000;

	sim_robot_config_default(&c);
	c.seed = 11;
	rig_init(&g, &c);
	rig_init(&same, &c);
	c.seed = 12;
	rig_init(&other, &c);
	for (int i = 0; i < n; i++) {
		double t;

		quiet_cycle(&g);
		t = g.r.actual_execution_time;
		cr_assert(t >= 0.3 && t <= 0.6, "%.6f ms", t);
		lo = fmin(lo, t);
		hi = fmax(hi, t);
		rest += t / n;
		if (i < 100) {
			quiet_cycle(&same);
			quiet_cycle(&other);
			cr_assert_eq(same.r.actual_execution_time, t,
				     "the seed fixes the sequence");
			differs |= other.r.actual_execution_time != t;
		}
	}
	cr_assert(differs, "another seed, another sequence");
	cr_assert_gt(hi - lo, 0.05, "not constant");
	cr_assert_float_eq(rest, 0.35, 0.01, "mean at rest");

	set_cmd(&g, RTL_RTDE_CMD_SPEEDJ, (double[6]){ 0.3, 0, 0, 0, 0, 0 }, 1.0);
	cycles(&g, 10);
	for (int i = 0; i < n; i++) {
		cycle(&g);
		moving += g.r.actual_execution_time / n;
	}
	cr_assert_gt(moving, rest + 0.03, "motion costs the controller more");
}

/* ---- what the simulator publishes ---- */

Test(sim_robot, sim_publishes_the_state_fields)
{
	int err = 1;
	struct sim *sim = sim_new(NULL, 0, &err);
	union rtl_rtde_value *v;

	cr_assert_not_null(sim, "sim_new: %d", err);
	v = sim_value(sim, "payload");
	cr_assert_not_null(v);
	cr_assert_float_eq(v->d, 1.0, 0);
	v = sim_value(sim, "payload_cog");
	cr_assert_float_eq(v->v3d[2], 0.05, 0);
	v = sim_value(sim, "payload_inertia");
	cr_assert_float_eq(v->v6d[0], 0.001, 0);
	v = sim_value(sim, "actual_tool_accelerometer");
	cr_assert_float_eq(v->v3d[2], -G_PLANT, 1e-12);
	v = sim_value(sim, "actual_execution_time");
	cr_assert(v->d >= 0.3 && v->d <= 0.6);
	v = sim_value(sim, "tool_temperature");
	cr_assert(v->d > 25 && v->d < 60);
	v = sim_value(sim, "actual_main_voltage");
	cr_assert_float_eq(v->d, 48, 0.5);
	v = sim_value(sim, "actual_robot_current");
	cr_assert(v->d > 0.5 && v->d < 3);
	v = sim_value(sim, "speed_scaling");
	cr_assert_float_eq(v->d, 1.0, 0);
	sim_free(sim);
}

/* ---- contact and force sensor ---- */

static void contact_at(struct rig *g, double dz, double k, double d)
{
	struct sim_contact c = { .enabled = true, .normal = { 0, 0, 2 } };

	memcpy(c.point, g->r.actual_TCP_pose, sizeof(c.point));
	c.point[2] += dz;
	c.stiffness = k;
	c.damping = d;
	cr_assert_eq(sim_robot_set_contact(&g->r, &c), 0);
}

Test(sim_robot, contact_force_is_zero_above_the_plane_and_k_depth_below)
{
	struct rig g;
	double rot[9], want[3], free_current;

	rig_init(&g, NULL);
	contact_at(&g, -0.01, 5000, 200); /* surface 1 cm below the TCP */
	quiet_cycle(&g);
	assert_vec_eq(g.r.actual_TCP_force, (double[6]){ 0 }, 6, 0, "free");
	cr_assert_eq(g.r.tcp_force_scalar, 0);
	free_current = g.r.actual_current[1];

	contact_at(&g, 0.004, 5000, 200); /* TCP 4 mm into it, at rest */
	quiet_cycle(&g);
	/* the tool pushes into the surface: -normal * k * depth */
	assert_vec_eq(g.r.actual_TCP_force, (double[6]){ 0, 0, -20, 0, 0, 0 }, 6, 1e-9, "F");
	cr_assert_float_eq(g.r.tcp_force_scalar, 20, 1e-9);
	/* the same wrench in the tool frame */
	sim_robot_rotvec_to_matrix(g.r.actual_TCP_pose + 3, rot);
	for (int i = 0; i < 3; i++)
		want[i] = rot[3 * 2 + i] * -20;
	assert_vec_eq(g.r.ft_raw_wrench, want, 3, 1e-9, "ft_raw");
	cr_assert_gt(fabs(g.r.actual_current[1] - free_current), 0.01,
		     "the shoulder feels the contact");

	/* moving into the surface adds damping: -d * vz */
	contact_at(&g, 0.0, 5000, 200);
	set_cmd(&g, RTL_RTDE_CMD_SPEEDL, (double[6]){ 0, 0, -0.01, 0, 0, 0 }, 1.0);
	cycles(&g, 100);
	{
		double depth = g.r.cfg.contact.point[2] - g.r.actual_TCP_pose[2];
		double rate = -g.r.actual_TCP_speed[2];

		cr_assert_gt(depth, 0.0005);
		cr_assert_float_eq(rate, 0.01, 1e-4);
		cr_assert_float_eq(g.r.actual_TCP_force[2], -(5000 * depth + 200 * rate), 1e-6);
	}
}

Test(sim_robot, force_noise_is_seeded_gaussian)
{
	struct sim_robot_config c;
	struct rig g, same, other;
	double sum = 0, sq = 0, tsum = 0, tsq = 0;
	const int n = 20000;
	bool differs = false;

	sim_robot_config_default(&c);
	c.force_noise = 2.0;
	c.torque_noise = 0.1;
	c.seed = 7;
	rig_init(&g, &c);
	rig_init(&same, &c);
	c.seed = 8;
	rig_init(&other, &c);
	for (int i = 0; i < n; i++) {
		quiet_cycle(&g);
		sum += g.r.actual_TCP_force[2];
		sq += g.r.actual_TCP_force[2] * g.r.actual_TCP_force[2];
		tsum += g.r.actual_TCP_force[4];
		tsq += g.r.actual_TCP_force[4] * g.r.actual_TCP_force[4];
		if (i < 100) {
			quiet_cycle(&same);
			quiet_cycle(&other);
			assert_vec_eq(same.r.actual_TCP_force, g.r.actual_TCP_force, 6, 0, "seed");
			differs |= other.r.actual_TCP_force[0] != g.r.actual_TCP_force[0];
		}
	}
	cr_assert(differs, "another seed, another sequence");
	/* mean within 4 standard errors, deviation within 3% */
	cr_assert_lt(fabs(sum / n), 4 * 2.0 / sqrt(n));
	cr_assert_float_eq(sqrt(sq / n - (sum / n) * (sum / n)), 2.0, 0.06);
	cr_assert_lt(fabs(tsum / n), 4 * 0.1 / sqrt(n));
	cr_assert_float_eq(sqrt(tsq / n - (tsum / n) * (tsum / n)), 0.1, 0.003);
}

/* ---- reporting ---- */

Test(sim_robot, reports_a_powered_running_robot)
{
	struct rig g;

	rig_init(&g, NULL);
	quiet_cycle(&g);
	cr_assert_eq(g.r.robot_mode, 7);
	cr_assert_eq(g.r.safety_mode, 1);
	cr_assert_eq(g.r.safety_status, 1);
	cr_assert_eq(g.r.runtime_state, 2);
	cr_assert_eq(g.r.robot_status_bits, 0x3, "power on, program running");
	cr_assert_eq(g.r.safety_status_bits, 0x1, "normal mode");
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(g.r.joint_mode[i], 253);
		cr_assert(g.r.joint_temperatures[i] > 25 && g.r.joint_temperatures[i] < 60);
		cr_assert_float_eq(g.r.actual_joint_voltage[i], 47.5, 0.5);
	}
	cr_assert_float_eq(g.r.actual_robot_voltage, 48, 0.5);
	cr_assert_float_eq(g.r.actual_main_voltage, 48, 0.5);
	cr_assert(g.r.tool_temperature > 25 && g.r.tool_temperature < 60);
	cr_assert(g.r.actual_robot_current > 0.5 && g.r.actual_robot_current < 3);
	/* the forearm is horizontal in the start pose: shoulder and elbow hold it */
	cr_assert_gt(fabs(g.r.actual_current[1]), 0.5);
	cr_assert_gt(fabs(g.r.actual_current[2]), 0.2);
	cr_assert_float_eq(g.r.actual_current[0], 0, 1e-9, "the base carries no weight");
	cr_assert_eq(g.r.cycles, 1);
	cr_assert_eq(g.r.actual_momentum, 0);
}

Test(sim_robot, same_inputs_give_the_same_trajectory)
{
	struct sim_robot_config c;
	struct rig a, b;

	sim_robot_config_default(&c);
	c.force_noise = 1;
	rig_init(&a, &c);
	rig_init(&b, &c);
	set_cmd(&a, RTL_RTDE_CMD_SPEEDL, (double[6]){ 0.05, 0, -0.02, 0.1, 0, 0 }, 0.3);
	b.c = a.c;
	for (int n = 0; n < 300; n++) {
		cycle(&a);
		cycle(&b);
	}
	cr_assert_arr_eq(a.r.target_q, b.r.target_q, sizeof(a.r.target_q))
		;
	cr_assert_arr_eq(a.r.actual_TCP_force, b.r.actual_TCP_force, sizeof(a.r.actual_TCP_force))
		;
}

Test(sim_robot, register_layout_uses_external_registers_only)
{
	static const int ints[] = { RTL_RTDE_CMD_REG_MODE,	  RTL_RTDE_CMD_REG_SEQ,
				    RTL_RTDE_CMD_REG_WATCHDOG_MS, RTL_RTDE_CMD_OUT_MODE,
				    RTL_RTDE_CMD_OUT_SEQ,	  RTL_RTDE_CMD_OUT_WD_TRIPS,
				    RTL_RTDE_CMD_OUT_STATUS };
	static const int dbls[] = { RTL_RTDE_CMD_REG_PARAM0,	RTL_RTDE_CMD_REG_PARAM1,
				    RTL_RTDE_CMD_REG_PARAM2,	RTL_RTDE_CMD_REG_PARAM3,
				    RTL_RTDE_CMD_REG_PARAM4,	RTL_RTDE_CMD_REG_PARAM5,
				    RTL_RTDE_CMD_REG_ACCEL,	RTL_RTDE_CMD_REG_TIME,
				    RTL_RTDE_CMD_REG_LOOKAHEAD, RTL_RTDE_CMD_REG_GAIN,
				    RTL_RTDE_CMD_REG_ECHO };

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		cr_assert(ints[i] >= 24 && ints[i] <= 47);
	for (size_t i = 0; i < sizeof(dbls) / sizeof(dbls[0]); i++) {
		cr_assert(dbls[i] >= 24 && dbls[i] <= 47);
		for (size_t j = 0; j < i; j++)
			cr_assert_neq(dbls[i], dbls[j], "double register %d used twice", dbls[i]);
	}
	cr_assert_eq(RTL_RTDE_CMD_REG_PARAM5, RTL_RTDE_CMD_REG_PARAM0 + RTL_RTDE_CMD_NPARAM - 1);
	cr_assert_str_eq(RTL_RTDE_CMD_FIELD_MODE, "input_int_register_24");
	cr_assert_str_eq(RTL_RTDE_CMD_FIELD_PARAM5, "input_double_register_29");
	cr_assert_str_eq(RTL_RTDE_CMD_FIELD_ECHO, "input_double_register_47");
	cr_assert_str_eq(RTL_RTDE_CMD_FIELD_OUT_STATUS, "output_int_register_27");
	cr_assert_str_eq(RTL_RTDE_CMD_RECIPE,
			 "input_int_register_24,input_int_register_25,input_int_register_26,"
			 "input_double_register_24,input_double_register_25,"
			 "input_double_register_26,input_double_register_27,"
			 "input_double_register_28,input_double_register_29,"
			 "input_double_register_30,input_double_register_31,"
			 "input_double_register_32,input_double_register_33");
}
