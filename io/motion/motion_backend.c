// SPDX-License-Identifier: MIT
/*
 * Motion setpoints as transport commands: see <rtloop/motion_backend.h>.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rtloop/motion_backend.h>
#include <rtloop/rtde_cmd.h>

#include "rtl_trace.h"

/* ---- the loop ------------------------------------------------------------------------- */

RTL_API int rtl_motion_loop_step(struct rtl_motion *m, struct rtl_motion_output *out,
				 struct rtl_loop *loop, int64_t now_ns,
				 const struct rtl_motion_state *measured)
{
	int ret = rtl_motion_step(m, out, now_ns, measured);

	/* The motion keeps its own counters (rtl_motion_stats()); the
	 * trace says which frame of the loop raised the events. */
	if (ret >= 0 && out->events)
		rtl_trace_motion_event(rtl_loop_step_seq(loop), out->events);
	return ret;
}

/* ---- UDP ---------------------------------------------------------------------------- */

/* |acc| per axis in Doosan units; 0 (constant velocity) is AUTO. */
static void acc_magnitude(enum rtl_motion_space space, const double acc[6], double out[6])
{
	rtl_motion_to_mm_deg(out, acc, space);
	for (int i = 0; i < 6; i++)
		out[i] = out[i] != 0 ? fabs(out[i]) : RTL_UDP_AUTO;
}

RTL_API void rtl_motion_from_udp(struct rtl_motion_state *out, const struct rtl_udp_state *s)
{
	double p[6], v[6], q[6], qd[6];

	for (int i = 0; i < 6; i++) {
		p[i] = s->actual_tcp_position[i];
		v[i] = s->actual_tcp_velocity[i];
		q[i] = s->actual_joint_position[i];
		qd[i] = s->actual_joint_velocity[i];
	}
	rtl_motion_from_mm_deg(out->tcp_pos, p, RTL_MOTION_CARTESIAN);
	rtl_motion_from_mm_deg(out->tcp_vel, v, RTL_MOTION_CARTESIAN);
	rtl_motion_from_mm_deg(out->joint_pos, q, RTL_MOTION_JOINT);
	rtl_motion_from_mm_deg(out->joint_vel, qd, RTL_MOTION_JOINT);
}

RTL_API int rtl_motion_to_udp(struct rtl_udp_cmd *cmd, const struct rtl_motion_output *out,
			      double target_time)
{
	bool joint;

	if (!out || !cmd || !(target_time > 0))
		return -EINVAL;
	joint = out->space == RTL_MOTION_JOINT;
	cmd->flags = 0;
	cmd->target_time = target_time;
	memset(cmd->pos, 0, sizeof(cmd->pos));
	switch (out->mode) {
	case RTL_MOTION_SPEED_CARTESIAN:
	case RTL_MOTION_SPEED_JOINT:
	case RTL_MOTION_STOPPING:
		/* Stopping: the decelerating setpoint as a speed command. */
		cmd->mode = joint ? RTL_UDP_MODE_SPEEDJ : RTL_UDP_MODE_SPEEDL;
		rtl_motion_to_mm_deg(cmd->vel, out->vel, out->space);
		acc_magnitude(out->space, out->acc, cmd->acc);
		break;
	case RTL_MOTION_SERVO_CARTESIAN:
	case RTL_MOTION_SERVO_JOINT:
		cmd->mode = joint ? RTL_UDP_MODE_SERVOJ : RTL_UDP_MODE_SERVOL;
		rtl_motion_to_mm_deg(cmd->pos, out->pose, out->space);
		rtl_motion_to_mm_deg(cmd->vel, out->vel, out->space);
		/* servoj_rt's acc is the signed end-of-segment acceleration. */
		rtl_motion_to_mm_deg(cmd->acc, out->acc, out->space);
		break;
	case RTL_MOTION_IDLE:
		/* At rest: keep the stream (and the controller's time-out)
		 * alive with a STOP that does nothing. */
		cmd->mode = RTL_UDP_MODE_STOP;
		memset(cmd->vel, 0, sizeof(cmd->vel));
		for (int i = 0; i < 6; i++)
			cmd->acc[i] = RTL_UDP_AUTO;
		break;
	default:
		return -EINVAL;
	}
	return cmd->mode;
}

/* ---- RTDE ---------------------------------------------------------------------------- */

RTL_API int rtl_motion_rtde_init(struct rtl_motion_rtde *b, const struct rtl_rtde_recipe *r,
				 int64_t period_ns)
{
	static const char *const params[6] = {
		RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1, RTL_RTDE_CMD_FIELD_PARAM2,
		RTL_RTDE_CMD_FIELD_PARAM3, RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5
	};
	int err = 0;

	if (!b || !r || period_ns <= 0)
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	b->period_s = (double)period_ns * 1e-9;
	err |= rtl_rtde_recipe_handle(r, &b->h.mode, RTL_RTDE_CMD_FIELD_MODE);
	err |= rtl_rtde_recipe_handle(r, &b->h.watchdog_ms, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	for (int i = 0; i < 6; i++)
		err |= rtl_rtde_recipe_handle(r, &b->h.param[i], params[i]);
	err |= rtl_rtde_recipe_handle(r, &b->h.accel, RTL_RTDE_CMD_FIELD_ACCEL);
	err |= rtl_rtde_recipe_handle(r, &b->h.time, RTL_RTDE_CMD_FIELD_TIME);
	err |= rtl_rtde_recipe_handle(r, &b->h.lookahead, RTL_RTDE_CMD_FIELD_LOOKAHEAD);
	err |= rtl_rtde_recipe_handle(r, &b->h.gain, RTL_RTDE_CMD_FIELD_GAIN);
	return err ? -ENOENT : 0;
}

/* The executor ramps the whole vector at one rate: joints by the leading
 * joint (the largest magnitude), speedl by the translation's norm. */
static double ramp_rate(bool joint, const double acc[6])
{
	double m = 0;

	if (!joint)
		return sqrt(acc[0] * acc[0] + acc[1] * acc[1] + acc[2] * acc[2]);
	for (int i = 0; i < 6; i++)
		m = fmax(m, fabs(acc[i]));
	return m;
}

RTL_API int rtl_motion_rtde_encode(struct rtl_motion_rtde *b, struct rtl_rtde_frame *f,
				   const struct rtl_motion_output *out)
{
	bool joint;
	const double *param;
	static const double zero[6];
	double accel = 0;
	int32_t mode;
	int ret;

	if (!b || !out || !f)
		return -EINVAL;
	joint = out->space == RTL_MOTION_JOINT;
	switch (out->mode) {
	case RTL_MOTION_SPEED_CARTESIAN:
	case RTL_MOTION_SPEED_JOINT:
	case RTL_MOTION_STOPPING:
		mode = joint ? RTL_RTDE_CMD_SPEEDJ : RTL_RTDE_CMD_SPEEDL;
		param = out->vel;
		/* The profile is shaped already: never ramp slower than the
		 * executor's default. */
		accel = fmax(ramp_rate(joint, out->acc), joint ? RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT
							       : RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT);
		break;
	case RTL_MOTION_SERVO_JOINT:
		mode = RTL_RTDE_CMD_SERVOJ;
		param = out->pose;
		break;
	case RTL_MOTION_SERVO_CARTESIAN:
		mode = RTL_RTDE_CMD_STOP;
		param = zero;
		break;
	case RTL_MOTION_IDLE:
		mode = RTL_RTDE_CMD_IDLE;
		param = zero;
		break;
	default:
		return -EINVAL;
	}
	ret = out->mode == RTL_MOTION_SERVO_CARTESIAN ? -ENOTSUP : mode;

	rtl_rtde_frame_set_int(f, b->h.mode, mode);
	rtl_rtde_frame_set_int(f, b->h.watchdog_ms, b->watchdog_ms);
	for (int i = 0; i < 6; i++)
		rtl_rtde_frame_set_double(f, b->h.param[i], param[i]);
	rtl_rtde_frame_set_double(f, b->h.accel, accel);
	rtl_rtde_frame_set_double(f, b->h.time, mode == RTL_RTDE_CMD_SERVOJ ? b->period_s : 0.0);
	rtl_rtde_frame_set_double(f, b->h.lookahead,
				  mode == RTL_RTDE_CMD_SERVOJ ? b->lookahead : 0.0);
	rtl_rtde_frame_set_double(f, b->h.gain, mode == RTL_RTDE_CMD_SERVOJ ? b->gain : 0.0);
	return ret;
}
