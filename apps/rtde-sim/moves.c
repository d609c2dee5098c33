// SPDX-License-Identifier: MIT
/*
 * Point-to-point moves (see moves.h for the model).
 *
 * Every segment's profile is a list of phases of constant acceleration, so
 * the trapezoid, the triangle and any number of stops cut into them are one
 * representation, sampled by one function. Times of the trapezoid are
 * computed from the closed-form expressions (T = d / v + v / a), not by
 * summing phases, so that a duration is the formula to the last bit.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moves.h"
#include "robot.h"
#include "linalg.h"

#define N SIM_ROBOT_DOF

static bool positive(double x)
{
	return isfinite(x) && x > 0;
}

/* ---- profiles ---------------------------------------------------------------- */

/*
 * The trapezoid (or triangle) over @d with @v, @a. The duration is the
 * closed form; the phases reproduce it.
 */
static void profile_plan(struct sim_move_seg *g, double d, double v, double a)
{
	g->d = d;
	g->u_end = d;
	if (d <= 0) {
		g->T = 0;
		g->nphase = 0;
		return;
	}
	g->phase[0] = (struct sim_move_phase){ 0, 0, 0, a };
	if (d >= v * v / a) {
		double t1 = v / a, u1 = v * v / (2 * a);

		g->T = d / v + v / a;
		g->phase[1] = (struct sim_move_phase){ t1, u1, v, 0 };
		g->phase[2] = (struct sim_move_phase){ d / v, d - u1, v, -a };
		g->nphase = 3;
	} else {
		double t1 = sqrt(d / a);

		g->T = 2 * t1;
		g->phase[1] = (struct sim_move_phase){ t1, d / 2, sqrt(d * a), -a };
		g->nphase = 2;
	}
}

/* The phase that holds @tau (the last one starting at or before it). */
static int phase_at(const struct sim_move_seg *g, double tau)
{
	int k = 0;

	while (k + 1 < g->nphase && g->phase[k + 1].t0 <= tau)
		k++;
	return k;
}

/* u and du/dt at @tau; at rest (u_end, 0) from T on. */
static void profile_eval(const struct sim_move_seg *g, double tau, double *u, double *w)
{
	const struct sim_move_phase *p;
	double dt;

	*w = 0;
	if (tau <= 0 && g->nphase > 0) {
		*u = 0;
		return;
	}
	if (g->nphase == 0 || tau >= g->T) {
		*u = g->u_end;
		return;
	}
	p = &g->phase[phase_at(g, tau)];
	dt = tau - p->t0;
	*u = p->u0 + p->w0 * dt + p->acc * dt * dt / 2;
	*w = p->w0 + p->acc * dt;
}

/*
 * The time the fresh trapezoid of @g reaches @u, in closed form per phase
 * (sqrt of the distance in the ramps), so a blend starts where its radius
 * says. Only for a profile profile_plan() made.
 */
static double profile_time_at(const struct sim_move_seg *g, double u)
{
	double a, u1, t1, vp;

	if (u <= 0 || g->nphase == 0)
		return 0;
	if (u >= g->d)
		return g->T;
	a = g->phase[0].acc;
	t1 = g->phase[1].t0;
	u1 = g->phase[1].u0;
	vp = g->phase[1].w0;
	if (u <= u1)
		return sqrt(2 * u / a);
	if (g->nphase == 3 && u <= g->d - u1)
		return t1 + (u - u1) / vp;
	return g->T - sqrt(2 * (g->d - u) / a);
}

/*
 * Cut @g at @tau into a deceleration to rest with @b. A profile already
 * braking to its end at least as hard keeps its course: it rests sooner.
 */
static int profile_stop(struct sim_move_seg *g, double tau, double b)
{
	double u, w, t_rest;
	int k;

	if (g->nphase == 0 || tau >= g->T)
		return 0;
	if (tau <= 0)
		tau = 0;
	profile_eval(g, tau, &u, &w);
	if (w <= 0) {
		/* at rest already (the start instant): it stays where it is */
		g->T = tau;
		g->u_end = u;
		g->nphase = tau > 0 ? phase_at(g, tau) + 1 : 0;
		return 0;
	}
	t_rest = tau + w / b;
	k = phase_at(g, tau);
	if (k == g->nphase - 1 && g->phase[k].acc < 0 && g->T <= t_rest)
		return 0;
	if (g->phase[k].t0 < tau)
		k++;
	if (k >= SIM_MOVE_MAX_PHASES)
		return -ENOSPC;
	g->phase[k] = (struct sim_move_phase){ tau, u, w, -b };
	g->nphase = k + 1;
	g->T = t_rest;
	g->u_end = u + w * w / (2 * b);
	return 0;
}

/* ---- plans ---------------------------------------------------------------- */

int sim_move_path_begin(struct sim_move *m, enum sim_move_kind kind, const double start[6])
{
	if (!m || !start || (kind != SIM_MOVE_JOINT && kind != SIM_MOVE_LINEAR) ||
	    !all_finite(start, 6))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	memcpy(m->origin, start, sizeof(m->origin));
	return 0;
}

/* The line and the distance of a segment from @from to @to. */
static double seg_line(enum sim_move_kind kind, const double from[6], const double to[6],
		       double delta[6])
{
	double d = 0;

	if (kind == SIM_MOVE_JOINT) {
		for (int i = 0; i < N; i++) {
			delta[i] = to[i] - from[i];
			d = fmax(d, fabs(delta[i]));
		}
		return d;
	}
	double r0[9], r1[9], rel[9];

	for (int i = 0; i < 3; i++)
		delta[i] = to[i] - from[i];
	/* the relative rotation in the start's frame, so that R0 exp(s [w]x)
	 * turns about one axis; componentwise rotation vectors would not */
	sim_robot_rotvec_to_matrix(from + 3, r0);
	sim_robot_rotvec_to_matrix(to + 3, r1);
	matmul3_at(r0, r1, rel);
	sim_robot_matrix_to_rotvec(rel, delta + 3);
	d = norm3(delta);
	if (d < SIM_MOVE_EPS_M)
		d = norm3(delta + 3);
	return d;
}

int sim_move_path_add(struct sim_move *m, const double target[6], double v, double a, double blend)
{
	struct sim_move_seg *g, *prev;
	const double *from;

	if (!m || !target || !all_finite(target, 6) || !positive(v) || !positive(a) ||
	    !isfinite(blend) || blend < 0 || m->stopped)
		return -EINVAL;
	if (m->nseg >= SIM_MOVE_MAX_SEGS)
		return -ENOSPC;
	g = &m->seg[m->nseg];
	prev = m->nseg ? &m->seg[m->nseg - 1] : NULL;
	from = prev ? prev->target : m->origin;
	memset(g, 0, sizeof(*g));
	memcpy(g->target, target, sizeof(g->target));
	g->v = v;
	g->a = a;
	g->blend = blend;
	profile_plan(g, seg_line(m->kind, from, target, g->delta), v, a);
	if (prev) {
		/* the radius of the waypoint between them, at most half of
		 * either segment, so no three segments overlap */
		double r = fmin(prev->blend, fmin(prev->d, g->d) / 2);

		g->start = prev->start + profile_time_at(prev, prev->d - r);
	}
	m->nseg++;
	return 0;
}

int sim_move_plan_joint(struct sim_move *m, const double q0[6], const double q1[6], double v,
			double a)
{
	int ret = sim_move_path_begin(m, SIM_MOVE_JOINT, q0);

	return ret ? ret : sim_move_path_add(m, q1, v, a, 0);
}

int sim_move_plan_linear(struct sim_move *m, const double p0[6], const double p1[6], double v,
			 double a)
{
	int ret = sim_move_path_begin(m, SIM_MOVE_LINEAR, p0);

	return ret ? ret : sim_move_path_add(m, p1, v, a, 0);
}

double sim_move_duration(const struct sim_move *m)
{
	double T = 0;

	for (int i = 0; i < m->nseg; i++)
		T = fmax(T, m->seg[i].start + m->seg[i].T);
	return T;
}

void sim_move_sample(const struct sim_move *m, double t, double out[6])
{
	double r[9], e[9], tmp[9], u, w;

	if (m->nseg && !m->stopped && t >= sim_move_duration(m)) {
		/* exactly the waypoint, not the sum of the displacements */
		memcpy(out, m->seg[m->nseg - 1].target, 6 * sizeof(*out));
		return;
	}
	memcpy(out, m->origin, 6 * sizeof(*out));
	if (!(t > 0))
		return; /* exactly the start: no matrix round trip */
	if (m->kind == SIM_MOVE_LINEAR)
		sim_robot_rotvec_to_matrix(m->origin + 3, r);
	for (int i = 0; i < m->nseg; i++) {
		const struct sim_move_seg *g = &m->seg[i];
		double s;

		if (g->d <= 0)
			continue;
		profile_eval(g, t - g->start, &u, &w);
		s = u / g->d;
		if (s == 0)
			continue;
		if (m->kind == SIM_MOVE_JOINT) {
			for (int j = 0; j < N; j++)
				out[j] += s * g->delta[j];
			continue;
		}
		double rv[3] = { s * g->delta[3], s * g->delta[4], s * g->delta[5] };

		for (int j = 0; j < 3; j++)
			out[j] += s * g->delta[j];
		/* the increments are in the frame each segment starts from,
		 * so they compose on the right, in order */
		sim_robot_rotvec_to_matrix(rv, e);
		matmul3(r, e, tmp);
		memcpy(r, tmp, sizeof(tmp));
	}
	if (m->kind == SIM_MOVE_LINEAR)
		sim_robot_matrix_to_rotvec(r, out + 3);
}

int sim_move_stop(struct sim_move *m, double t_now, double decel)
{
	int n = 0, ret;

	if (!m || !isfinite(t_now) || !positive(decel))
		return -EINVAL;
	if (t_now >= sim_move_duration(m) && !m->stopped) {
		/* at rest on the last waypoint: nothing moves */
		return 0;
	}
	/* a segment that has not started by now never will */
	while (n < m->nseg && m->seg[n].start <= t_now)
		n++;
	for (int i = 0; i < n; i++) {
		ret = profile_stop(&m->seg[i], t_now - m->seg[i].start, decel);
		if (ret)
			return ret;
	}
	m->nseg = n;
	m->stopped = true;
	return 0;
}

/* ---- following a pose ------------------------------------------------------- */

/* The error from @q's TCP to @pose: position, then the rotation vector of
 * R_pose R^T (base frame, as the Jacobian's angular rows). */
static double pose_error(const struct sim_dh *dh, const double q[N], const double pose[6],
			 const double rt[9], const double *off, double e[6])
{
	double cur[6], rc[9], err[9];

	sim_robot_fk_dh(dh, q, off, cur);
	sim_robot_rotvec_to_matrix(cur + 3, rc);
	matmul3_bt(rt, rc, err);
	for (int i = 0; i < 3; i++)
		e[i] = pose[i] - cur[i];
	sim_robot_matrix_to_rotvec(err, e + 3);
	return sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] + e[4] * e[4] +
		    e[5] * e[5]);
}

int sim_move_follow_dh(const struct sim_dh *dh, const double q_now[6], const double pose[6],
		       const double tcp_offset[6], int iters, double q_out[6], double *residual)
{
	double q[N], rt[9], e[6], jac[36], dq[N], res;

	if (!q_now || !pose || !q_out || iters < 1 || !all_finite(q_now, N) ||
	    !all_finite(pose, 6) || (tcp_offset && !all_finite(tcp_offset, 6)))
		return -EINVAL;
	memcpy(q, q_now, sizeof(q));
	sim_robot_rotvec_to_matrix(pose + 3, rt);
	res = pose_error(dh, q, pose, rt, tcp_offset, e);
	for (int it = 0; it < iters; it++) {
		sim_robot_jacobian_dh(dh, q, tcp_offset, jac);
		sim_robot_dls(jac, e, dq);
		for (int j = 0; j < N; j++)
			q[j] += dq[j];
		res = pose_error(dh, q, pose, rt, tcp_offset, e);
	}
	memcpy(q_out, q, sizeof(q));
	if (residual)
		*residual = res;
	return 0;
}

int sim_move_follow(const double q_now[6], const double pose[6], const double tcp_offset[6],
		    int iters, double q_out[6], double *residual)
{
	return sim_move_follow_dh(&sim_dh_ur5e, q_now, pose, tcp_offset, iters, q_out, residual);
}
