// SPDX-License-Identifier: MIT
/*
 * The robot's request executor: the commands beside the stream
 * (docs/rtde-registers.md, "Requests"), as rtloop_control.script runs them
 * on a real controller.
 *
 * A request is taken once, when its identity changes, and answered in the
 * acknowledgement fields of struct sim_robot. What ends at once (payload,
 * TCP, sensor zero, kinematics, a waypoint) is DONE or FAILED before the
 * next step; a move is RUNNING until its plan (moves.h) comes to rest. The
 * plan drives the joints directly, so a move takes the time URScript's
 * profile takes to the period. A move that a newer move interrupts brakes
 * with the newer move's acceleration on its own line and the newer one
 * starts from rest, as a real arm cannot jump in speed.
 *
 * Force mode and teach mode are states robot.c's step runs (force_step(),
 * teach_step()); here they are switched and refused. move_until_contact
 * is a move of its own phases (enum sim_muc_phase): robot.c ramps and
 * brakes it, sim_robot_contact_rest() below plans its retract as a linear
 * move or ends it.
 *
 * Pure and RT-safe like robot.c: no allocation, no I/O, no clock.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kin.h"
#include "linalg.h"
#include "robot.h"

#define N SIM_ROBOT_DOF
#define MUC_DECEL_FACTOR 10.0 /* move_until_contact brakes with 10 a ... */
#define MUC_DECEL_MIN 2.5     /* ... at least 2.5 m/s^2 */

/* Answer request @id: @state, with @reason when it failed. */
static void answer(struct sim_robot *r, int32_t id, int32_t state, int32_t reason)
{
	r->req_id = id;
	r->req_state = state;
	r->req_reason = reason;
	if (state == RTL_RTDE_REQ_STATE_FAILED)
		r->requests_failed++;
}

static int fail(struct sim_robot *r, const struct sim_robot_req *q, int32_t reason)
{
	answer(r, q->id, RTL_RTDE_REQ_STATE_FAILED, reason);
	return 0;
}

/* Every joint of @q within the robot's position limits. */
static bool within_limits(const struct sim_robot *r, const double q[N])
{
	for (int i = 0; i < N; i++)
		if (q[i] < r->cfg.q_min[i] || q[i] > r->cfg.q_max[i])
			return false;
	return true;
}

/* The speed and acceleration of a move: the request's, or URScript's
 * defaults for <= 0. */
static void move_speeds(const struct sim_robot *r, const double arg[], bool linear, double *v,
			double *a)
{
	*v = arg[6] > 0 ? arg[6]
			: (linear ? RTL_RTDE_REQ_TOOL_SPEED_DEFAULT
				  : RTL_RTDE_REQ_JOINT_SPEED_DEFAULT);
	*a = arg[7] > 0 ? arg[7] : (linear ? r->cfg.linear_accel : r->cfg.joint_accel);
}

/*
 * Check a target as the controller does before it moves: a joint target
 * within the limits, a pose the arm can reach (some joint solution within
 * the limits). 0 or the reason.
 */
static int32_t judge_target(const struct sim_robot *r, const double target[6], bool linear)
{
	double q[N];
	int ret;

	if (!linear)
		return within_limits(r, target) ? RTL_RTDE_REQ_OK : RTL_RTDE_REQ_JOINT_LIMIT;
	ret = sim_kin_inverse_dh(&r->cfg.dh, target, r->tcp_offset, r->target_q, r->cfg.q_min,
				 r->cfg.q_max, q);
	if (ret == -EDOM)
		return RTL_RTDE_REQ_JOINT_LIMIT;
	return ret < 0 ? RTL_RTDE_REQ_UNREACHABLE : RTL_RTDE_REQ_OK;
}

/* Plan request @q (a move or a path's run) from where the arm is. 0 or a
 * reason. */
static int32_t plan(struct sim_robot *r, const struct sim_robot_req *q)
{
	bool linear = q->kind == RTL_RTDE_REQ_MOVE_L;
	enum sim_move_kind kind = linear ? SIM_MOVE_LINEAR : SIM_MOVE_JOINT;
	const double *start = linear ? r->target_TCP_pose : r->target_q;
	double v, a;
	int n = (q->flags & RTL_RTDE_REQ_FLAG_PATH) ? r->path_n : 0;

	if (sim_move_path_begin(&r->move, kind, start) < 0)
		return RTL_RTDE_REQ_BAD_ARGUMENT;
	for (int i = 0; i < n; i++) {
		const struct sim_robot_waypoint *w = &r->path[i];
		int32_t why;

		/* A path is one kind: a change of kind needs IK between. */
		if (w->linear != linear)
			return RTL_RTDE_REQ_BAD_ARGUMENT;
		why = judge_target(r, w->target, linear);
		if (why)
			return why;
		if (sim_move_path_add(&r->move, w->target, w->v, w->a, w->blend) < 0)
			return RTL_RTDE_REQ_BAD_ARGUMENT;
	}
	move_speeds(r, q->arg, linear, &v, &a);
	if (sim_move_path_add(&r->move, q->arg, v, a, 0) < 0)
		return RTL_RTDE_REQ_BAD_ARGUMENT;
	r->path_n = 0;
	r->move_t = 0;
	r->move_on = true;
	return RTL_RTDE_REQ_OK;
}

/* A move runs: brake it on its line with @decel; the move then ends when
 * the plan rests. */
static void brake(struct sim_robot *r, double decel)
{
	/* -ENOSPC means the plan has taken its most stops: it already brakes
	 * to rest on its line, which is what this stop asks for. */
	(void)sim_move_stop(&r->move, r->move_t, decel);
}

/* The running move or contact move brakes with @a; @q waits for rest. */
static int yield_to(struct sim_robot *r, const struct sim_robot_req *q, double a)
{
	if (r->move_on) {
		brake(r, a);
	} else {
		/* after a contact, no gentler than the contact's own brake */
		r->muc_decel = r->muc_phase == SIM_MUC_BRAKE ? fmax(a, r->muc_decel) : a;
		r->muc_phase = SIM_MUC_YIELD;
	}
	r->pending = *q;
	r->move_pending = true;
	answer(r, q->id, RTL_RTDE_REQ_STATE_RUNNING, 0);
	return 0;
}

/* move_until_contact's acceleration: the request's, or 1.2 m/s^2. */
static double contact_accel(const struct sim_robot_req *q)
{
	return q->arg[6] > 0 ? q->arg[6] : RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT;
}

/* Start move_until_contact @q (checked) from where the arm is. */
static void contact_begin(struct sim_robot *r, const struct sim_robot_req *q)
{
	memcpy(r->muc_twist, q->arg, sizeof(r->muc_twist));
	r->muc_accel = contact_accel(q);
	r->muc_decel = fmax(MUC_DECEL_FACTOR * r->muc_accel, MUC_DECEL_MIN);
	r->muc_retract = q->arg[7];
	r->muc_force = q->arg[8] > 0 ? q->arg[8] : RTL_RTDE_REQ_CONTACT_FORCE_DEFAULT;
	r->muc_phase = SIM_MUC_APPROACH;
	answer(r, q->id, RTL_RTDE_REQ_STATE_RUNNING, 0);
}

/* The arm rests at target_q: the move that waited for it starts. */
static void take_pending(struct sim_robot *r)
{
	r->move_pending = false;
	sim_kin_forward_dh(&r->cfg.dh, r->target_q, r->tcp_offset, r->target_TCP_pose);
	if (r->pending.kind == RTL_RTDE_REQ_MOVE_UNTIL_CONTACT)
		contact_begin(r, &r->pending);
	else if (plan(r, &r->pending))
		answer(r, r->pending.id, RTL_RTDE_REQ_STATE_FAILED, RTL_RTDE_REQ_INTERRUPTED);
}

static int start_contact(struct sim_robot *r, const struct sim_robot_req *q)
{
	if (r->teach_on || r->force_on)
		return fail(r, q, RTL_RTDE_REQ_NOT_ALLOWED);
	if (!(norm3(q->arg) > 0) || q->arg[7] < 0 || q->arg[7] > 1)
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	if (r->move_on || r->muc_phase)
		return yield_to(r, q, contact_accel(q));
	contact_begin(r, q);
	return 0;
}

void sim_robot_contact_rest(struct sim_robot *r)
{
	int phase = r->muc_phase;
	double from[6], to[6], v = norm3(r->muc_twist);

	r->muc_phase = SIM_MUC_NONE;
	if (r->move_pending) {
		take_pending(r);
		return;
	}
	if (phase == SIM_MUC_BRAKE && r->muc_retract > 0) {
		/* straight back against the approach, at its linear speed */
		sim_kin_forward_dh(&r->cfg.dh, r->target_q, r->tcp_offset, from);
		memcpy(to, from, sizeof(to));
		for (int k = 0; k < 3; k++)
			to[k] -= r->muc_retract * r->muc_twist[k] / v;
		if (judge_target(r, to, true) == RTL_RTDE_REQ_OK &&
		    sim_move_plan_linear(&r->move, from, to, v, r->muc_accel) == 0) {
			r->move_t = 0;
			r->move_on = true; /* sim_robot_move_step() ends it DONE */
			return;
		}
		sim_robot_contact_fail(r, RTL_RTDE_REQ_UNREACHABLE);
		return;
	}
	if (r->req_state == RTL_RTDE_REQ_STATE_RUNNING)
		answer(r, r->req_id, RTL_RTDE_REQ_STATE_DONE, 0);
}

void sim_robot_contact_fail(struct sim_robot *r, int32_t reason)
{
	r->muc_phase = SIM_MUC_NONE;
	if (r->req_state == RTL_RTDE_REQ_STATE_RUNNING)
		answer(r, r->req_id, RTL_RTDE_REQ_STATE_FAILED, reason);
}

/* FORCE_LIMITS: the limits, damping and gain of force mode, now and later. */
static int force_limits(struct sim_robot *r, const struct sim_robot_req *q)
{
	for (int i = 0; i < 6; i++)
		if (!(q->arg[i] > 0))
			return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	if (q->arg[6] > 1 || q->arg[7] > 2)
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	memcpy(r->force_limit, q->arg, sizeof(r->force_limit));
	r->force_damping = q->arg[6] < 0 ? RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT : q->arg[6];
	r->force_gain = q->arg[7] < 0 ? RTL_RTDE_REQ_FORCE_GAIN_DEFAULT : q->arg[7];
	answer(r, q->id, RTL_RTDE_REQ_STATE_DONE, 0);
	return 0;
}

/* FLAGS of FORCE_MODE: bits 0-5 the compliant axes, 8-9 the type. */
#define FORCE_SEL_MASK 0x3fu
#define FORCE_TYPE_SHIFT 8
#define FORCE_FLAGS_MASK (FORCE_SEL_MASK | 3u << FORCE_TYPE_SHIFT)

static int force_mode(struct sim_robot *r, const struct sim_robot_req *q)
{
	uint32_t type = (q->flags >> FORCE_TYPE_SHIFT) & 3u;

	if (r->teach_on || r->move_on || r->move_pending || r->muc_phase)
		return fail(r, q, RTL_RTDE_REQ_NOT_ALLOWED);
	/* types 1 and 3 run as type 2 (docs/rtde-sim.md) */
	if ((q->flags & ~FORCE_FLAGS_MASK) || type == 0)
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	sim_robot_rotvec_to_matrix(q->arg + 3, r->force_R);
	memcpy(r->force_wrench, q->arg + 6, sizeof(r->force_wrench));
	r->force_sel = q->flags & FORCE_SEL_MASK;
	if (!r->force_on)
		r->linear = false; /* the first step takes the arm's motion */
	r->force_on = true;
	answer(r, q->id, RTL_RTDE_REQ_STATE_DONE, 0);
	return 0;
}

static int teach_mode(struct sim_robot *r, const struct sim_robot_req *q)
{
	if (r->force_on)
		return fail(r, q, RTL_RTDE_REQ_NOT_ALLOWED);
	sim_robot_move_abort(r, RTL_RTDE_REQ_INTERRUPTED);
	if (!r->teach_on) {
		r->teach_on = true;
		r->teach_cycles = 0;
		r->linear = false;
	}
	answer(r, q->id, RTL_RTDE_REQ_STATE_DONE, 0);
	return 0;
}

static int start_move(struct sim_robot *r, const struct sim_robot_req *q)
{
	bool linear = q->kind == RTL_RTDE_REQ_MOVE_L;
	double v, a;
	int32_t why;

	if (r->teach_on || r->force_on)
		return fail(r, q, RTL_RTDE_REQ_NOT_ALLOWED);
	move_speeds(r, q->arg, linear, &v, &a);
	if (!(v > 0) || !(a > 0) || (!linear && (v > r->cfg.qd_max[0] * 1.0001)))
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	why = judge_target(r, q->arg, linear);
	if (why)
		return fail(r, q, why);
	/* the running move brakes first; this one starts at rest */
	if (r->move_on || r->muc_phase)
		return yield_to(r, q, a);
	why = plan(r, q);
	if (why)
		return fail(r, q, why);
	answer(r, q->id, RTL_RTDE_REQ_STATE_RUNNING, 0);
	return 0;
}

static int add_waypoint(struct sim_robot *r, const struct sim_robot_req *q)
{
	struct sim_robot_waypoint *w;
	bool linear = q->flags & RTL_RTDE_REQ_FLAG_LINEAR;

	if (r->path_n >= RTL_RTDE_REQ_PATH_MAX)
		return fail(r, q, RTL_RTDE_REQ_PATH_FULL);
	if (q->arg[8] < 0)
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	w = &r->path[r->path_n++];
	memcpy(w->target, q->arg, sizeof(w->target));
	move_speeds(r, q->arg, linear, &w->v, &w->a);
	w->blend = q->arg[8];
	w->linear = linear;
	answer(r, q->id, RTL_RTDE_REQ_STATE_ACCEPTED, 0);
	return 0;
}

static int kinematics(struct sim_robot *r, const struct sim_robot_req *q)
{
	double out[6];
	int ret;

	if (q->kind == RTL_RTDE_REQ_FORWARD_KIN) {
		ret = sim_kin_forward_dh(&r->cfg.dh, q->arg, r->tcp_offset, out);
	} else {
		const double *near = (q->flags & RTL_RTDE_REQ_FLAG_NEAR) ? q->arg + 6 : r->target_q;

		ret = sim_kin_inverse_dh(&r->cfg.dh, q->arg, r->tcp_offset, near, r->cfg.q_min,
					 r->cfg.q_max, out);
	}
	if (ret == -EDOM)
		return fail(r, q, RTL_RTDE_REQ_JOINT_LIMIT);
	if (ret == -ERANGE)
		return fail(r, q, RTL_RTDE_REQ_NO_SOLUTION);
	if (ret < 0)
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	memcpy(r->req_result, out, sizeof(out));
	answer(r, q->id, RTL_RTDE_REQ_STATE_DONE, 0);
	return 0;
}

int sim_robot_request(struct sim_robot *r, const struct sim_robot_req *q, int64_t now_ns)
{
	(void)now_ns;
	if (!r || !q)
		return -EINVAL;
	if (q->id == 0 || (r->req_seen && q->id == r->req_last))
		return 1;
	r->req_seen = true;
	r->req_last = q->id;
	r->requests++;
	if (!all_finite(q->arg, RTL_RTDE_REQ_NARG))
		return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
	if (r->safety_mode != SIM_SAFETY_MODE_NORMAL)
		return fail(r, q, RTL_RTDE_REQ_PROTECTIVE_STOP);
	switch (q->kind) {
	case RTL_RTDE_REQ_MOVE_J:
	case RTL_RTDE_REQ_MOVE_L:
		return start_move(r, q);
	case RTL_RTDE_REQ_PATH_ADD:
		return add_waypoint(r, q);
	case RTL_RTDE_REQ_STOP_MOVE:
		if (r->move_on)
			brake(r, q->arg[7] > 0 ? q->arg[7] : r->cfg.joint_accel);
		if (r->muc_phase) {
			r->muc_phase = SIM_MUC_YIELD;
			r->muc_decel = q->arg[7] > 0 ? q->arg[7] : r->cfg.linear_accel;
		}
		r->move_pending = false;
		answer(r, q->id,
		       r->move_on || r->muc_phase ? RTL_RTDE_REQ_STATE_RUNNING
						  : RTL_RTDE_REQ_STATE_DONE,
		       0);
		return 0;
	case RTL_RTDE_REQ_MOVE_UNTIL_CONTACT:
		return start_contact(r, q);
	case RTL_RTDE_REQ_FORCE_MODE:
		return force_mode(r, q);
	case RTL_RTDE_REQ_FORCE_LIMITS:
		return force_limits(r, q);
	case RTL_RTDE_REQ_END_FORCE_MODE:
		if (r->force_on)
			r->linear = false;
		r->force_on = false;
		break;
	case RTL_RTDE_REQ_TEACH_MODE:
		return teach_mode(r, q);
	case RTL_RTDE_REQ_END_TEACH_MODE:
		if (r->teach_on)
			r->linear = false; /* to rest in joint space */
		r->teach_on = r->push_on = false;
		break;
	case RTL_RTDE_REQ_ZERO_FT_SENSOR:
		for (int i = 0; i < 6; i++)
			r->ft_bias[i] += r->actual_TCP_force[i];
		break;
	case RTL_RTDE_REQ_SET_PAYLOAD:
		if (q->arg[0] < 0 || q->arg[0] > 1000)
			return fail(r, q, RTL_RTDE_REQ_BAD_ARGUMENT);
		r->payload = q->arg[0];
		memcpy(r->payload_cog, q->arg + 1, sizeof(r->payload_cog));
		break;
	case RTL_RTDE_REQ_SET_TCP:
		/* the kinematics use the configured offset; the output shows it */
		memcpy(r->cfg.tcp_offset, q->arg, sizeof(r->cfg.tcp_offset));
		memcpy(r->tcp_offset, q->arg, sizeof(r->tcp_offset));
		break;
	case RTL_RTDE_REQ_FORWARD_KIN:
	case RTL_RTDE_REQ_INVERSE_KIN:
		return kinematics(r, q);
	default:
		return fail(r, q, RTL_RTDE_REQ_UNKNOWN_KIND);
	}
	answer(r, q->id, RTL_RTDE_REQ_STATE_DONE, 0);
	return 0;
}

/*
 * One step of the running move into @q_next (joints): true while the plan
 * drives the arm. Called by sim_robot_step() when no streaming mode has
 * the arm. The move ends DONE at rest on its target, or, braked, at rest
 * where the brake left it; a pending move then starts.
 */
bool sim_robot_move_step(struct sim_robot *r, double dt, double q_next[N])
{
	double out[6];

	if (!r->move_on)
		return false;
	r->move_t += dt;
	sim_move_sample(&r->move, r->move_t, out);
	if (r->move.kind == SIM_MOVE_LINEAR)
		sim_move_follow_dh(&r->cfg.dh, r->target_q, out, r->tcp_offset, 3, q_next, NULL);
	else
		memcpy(q_next, out, sizeof(out));
	if (r->move_t >= sim_move_duration(&r->move)) {
		r->move_on = false;
		r->moves_done++;
		if (r->move_pending) {
			/* the arm is at rest where this sample puts it */
			memcpy(r->target_q, q_next, sizeof(double) * N);
			take_pending(r);
		} else if (r->req_state == RTL_RTDE_REQ_STATE_RUNNING) {
			answer(r, r->req_id, RTL_RTDE_REQ_STATE_DONE, 0);
		}
	}
	return true;
}

/* A streaming mode, the watchdog or a protective stop took the arm:
 * the running move ends with @reason, and a pending one is dropped. */
void sim_robot_move_abort(struct sim_robot *r, int32_t reason)
{
	if (!r->move_on && !r->move_pending && !r->muc_phase)
		return;
	r->move_on = false;
	r->move_pending = false;
	r->muc_phase = SIM_MUC_NONE;
	if (r->req_state == RTL_RTDE_REQ_STATE_RUNNING)
		answer(r, r->req_id, RTL_RTDE_REQ_STATE_FAILED, reason);
}
