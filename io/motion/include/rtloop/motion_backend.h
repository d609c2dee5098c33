/* SPDX-License-Identifier: MIT */
/*
 * rtl_motion backends: one period's setpoint of the motion API
 * (struct rtl_motion_output, from rtl_motion_step()) as the commands of a
 * transport: rtloop's UDP command datagram (Doosan units) or the RTDE
 * command registers of <rtloop/rtde_cmd.h> (SI units). The Doosan DRFL
 * library has its own backend (<rtloop/drfl_backend.h>) built on the same
 * UDP mapping.
 *
 * Design
 * ------
 * "Setpoint" streaming (docs/motion.md): rtl_motion owns the profile, the
 * time-out, the loss count and the limits; each period the backend sends
 * that period's setpoint with a horizon of one period (or the configured
 * target_time), so the controller's own interpolation adds no lag.
 * - Speed modes go out as speedl/speedj with the setpoint velocity; the
 *   acceleration is |out.acc| per axis (Doosan), or the rate the RTDE
 *   executor ramps the whole vector with (speedj: the leading joint's;
 *   speedl: the norm of the translation), at least the executor's default (RTDE: the profile is
 * already shaped, the executor's ramp must not become the bottleneck). An axis at constant velocity
 * (acc 0) gets AUTO on the UDP wire.
 * - Servo modes go out as servoj/servol with the setpoint pose, velocity
 *   and acceleration (servoj_rt's end-of-segment state).
 * - Stopping goes out as the speed command of its space with the
 *   decelerating setpoint velocity, so the robot follows rtl_motion's stop
 *   profile exactly; idle goes out as STOP (UDP: keeps the stream, and with
 *   it the controller's time-out, alive) or IDLE (RTDE).
 * - Units: UDP converts m/rad to mm/deg with rtl_motion_to_mm_deg() (only
 *   units: servol's orientation must already be in Doosan's ZYZ Euler
 *   angles); RTDE is SI already.
 *
 * RTDE specifics: the backend writes mode, watchdog timeout and parameters
 * of the command recipe (RTL_RTDE_CMD_RECIPE). The heartbeat is not the
 * backend's: the RTDE transport owns it (a new value in every package of
 * its recipe), so unchanged setpoints are coalesced away and the
 * transport's keep-alive feeds the executor's watchdog
 * (RTL_RTDE_CMD_REG_WATCHDOG_MS: 0 = the executor's 100 ms default, > 0 ms,
 * < 0 off).
 *
 * Events: the motion API raises them from rtl_motion_step() into its own
 * counters (rtl_motion_stats()), the user's RT-safe handler
 * (rtl_motion_set_handler()) and the output's `events` bits. In a loop,
 * step with rtl_motion_loop_step() instead: it also fires the
 * rtloop:motion_event tracepoint with the sequence number of the loop's
 * frame being stepped (rtl_loop_step_seq()). The loop itself knows nothing
 * of motion: the counters stay the motion's. The backends keep no counters
 * of their own: the transport counts what it sent.
 *
 * Every function is RT-safe: no allocation, no locks, no system calls.
 */
#ifndef RTLOOP_MOTION_BACKEND_H
#define RTLOOP_MOTION_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/loop.h>
#include <rtloop/motion.h>
#include <rtloop/udp.h>
#include <rtloop/rtde_recipe.h>

RTL_BEGIN_DECLS

/* ---- the loop ---------------------------------------------------------------------- */

/*
 * rtl_motion_step() from a loop's step function: step @m at @now_ns with
 * @measured (may be NULL) into @out; when out->events is not 0, fire the
 * rtloop:motion_event tracepoint with the frame @loop is stepping. @loop
 * may be NULL (plain rtl_motion_step(), traced with frame 0). Call it from
 * the step function, or from the external loop's reading thread.
 * Returns what rtl_motion_step() returns: the mode of @out, or -EINVAL
 * (@m or @out NULL; nothing is reported). RT-safe: no allocation, no
 * locks, no system calls.
 */
RTL_API int rtl_motion_loop_step(struct rtl_motion *m, struct rtl_motion_output *out,
				 struct rtl_loop *loop, int64_t now_ns,
				 const struct rtl_motion_state *measured);

/* ---- UDP (Doosan units) ---------------------------------------------------------- */

/*
 * Map @out onto the command datagram @cmd (all fields but the echo, which
 * the UDP transport fills), with horizon @target_time s (> 0; typically
 * one period). Returns the rtl_udp_mode written, or -EINVAL (a NULL
 * pointer, @target_time not > 0, an unknown mode in @out).
 */
RTL_API int rtl_motion_to_udp(struct rtl_udp_cmd *cmd, const struct rtl_motion_output *out,
			      double target_time);

/*
 * The measured state of @s (a UDP or DRFL state, Doosan's units: deg, mm)
 * into @out in SI (rad, m): joint positions and velocities, the TCP's
 * position and velocity. The TCP orientation stays Doosan's ZYZ Euler
 * angles, in radians (only the units change, as rtl_motion_from_mm_deg()).
 * RT-safe: no allocation, no locks, no system calls.
 */
RTL_API void rtl_motion_from_udp(struct rtl_motion_state *out, const struct rtl_udp_state *s);

/* ---- RTDE (the registers of <rtloop/rtde_cmd.h>) -------------------------------------- */

struct rtl_motion_rtde {
	/* Handles in the command recipe (rtl_motion_rtde_resolve()). */
	struct {
		struct rtl_rtde_handle mode, watchdog_ms, param[6], accel, time, lookahead, gain;
	} h;
	double period_s;     /* servoj's t: one period */
	double lookahead;    /* servoj lookahead [s]; 0: the executor's default */
	double gain;	     /* servoj gain; 0: the executor's default */
	int32_t watchdog_ms; /* see above */
};

/*
 * Set @b up for period @period_ns with the handles of the command recipe
 * @r (it must contain every field of RTL_RTDE_CMD_RECIPE). Returns 0,
 * -EINVAL (NULL, period <= 0) or -ENOENT (a field is missing).
 */
RTL_API int rtl_motion_rtde_init(struct rtl_motion_rtde *b, const struct rtl_rtde_recipe *r,
				 int64_t period_ns);

/*
 * Write @out into the command frame @f. Returns the rtl_rtde_cmd_mode
 * written, -ENOTSUP for servol (the executor has none: STOP is written
 * instead), or -EINVAL (NULL, unknown mode).
 */
RTL_API int rtl_motion_rtde_encode(struct rtl_motion_rtde *b, struct rtl_rtde_frame *f,
				   const struct rtl_motion_output *out);

RTL_END_DECLS

#endif /* RTLOOP_MOTION_BACKEND_H */
