/* SPDX-License-Identifier: MIT */
/*
 * rtl_drfl: the motion API on a Doosan robot through the vendor's closed
 * DRFL library (docs/doosan-rt.md: the RT wire format is not public, so
 * the library is the transport).
 *
 * Design
 * ------
 * The mapping is plain C over a table of function pointers,
 * struct rtl_drfl_api, one entry per DRFL entry point it uses
 * (connect_rt_control, set_rt_control_input/output, start_rt_control,
 * stop_rt_control, disconnect_rt_control, set_velx_rt/set_accx_rt/
 * set_velj_rt/set_accj_rt, speedl_rt/speedj_rt/servol_rt/servoj_rt,
 * read_data_rt). The logic (call order, units, the choice of command,
 * error reporting) is therefore testable without the vendor library:
 * tests/io/motion/test-backends.c fills the table with a fake that records
 * every call. The real table (<rtloop/drfl_real.h>, a C++ file calling
 * DRAFramework::CDRFLEx) is built only when Meson finds the library and
 * DRFLEx.h (-Ddrfl=auto|enabled).
 *
 * Session (rtl_drfl_api_connect / rtl_drfl_api_disconnect), in Doosan's documented order:
 *   connect_rt_control(host, port) -> set_rt_control_output("v1.0",
 *   period, loss) -> [set_rt_control_input("v1.0", period, loss)] ->
 *   [set_velx_rt / set_accx_rt / set_velj_rt / set_accj_rt] ->
 *   start_rt_control ... stop_rt_control -> disconnect_rt_control.
 * Doosan's own samples call only set_rt_control_output, so the input call
 * is optional. A failure after connect disconnects again.
 *
 * Streaming (rtl_drfl_api_send): the setpoint of rtl_motion_step() goes
 * through rtl_motion_to_udp() (the same mapping as the UDP backend: mm,
 * deg, AUTO = -10000) and then to the DRFL call of its mode, as floats.
 * Idle (the UDP STOP) becomes speedj_rt with zero velocity and AUTO
 * acceleration, which keeps the 0.1 s command time-out fed at rest.
 * State (rtl_drfl_api_read): read_data_rt()'s buffer is the packed v1.0
 * layout, decoded with rtl_udp_state_decode() (copied out at once: DRFL
 * overwrites it every cycle).
 *
 * Preconditions DRFL leaves to the application (docs/doosan-rt.md 7):
 * real-robot mode, autonomous mode, safety mode MOVE, control authority,
 * STANDBY, the RT address of the firmware version. rtl_drfl_api_connect() does
 * not touch the TCP API; do those through DRFL before opening.
 *
 * RT safety: rtl_drfl_api_send() and rtl_drfl_api_read() allocate nothing and take
 * no lock; what the DRFL calls do inside is the vendor's business (Doosan
 * measured read_data_rt at 10-110 us). Open and close are not RT-safe.
 */
#ifndef RTLOOP_DRFL_BACKEND_H
#define RTLOOP_DRFL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/drfl_api.h>
#include <rtloop/mem.h>
#include <rtloop/motion.h>
#include <rtloop/udp.h>

RTL_BEGIN_DECLS

/* The RT session's settings. Set .size = sizeof(struct rtl_drfl_config);
 * zero is the default for every other field. */
struct rtl_drfl_config {
	size_t size;	  /* sizeof(struct rtl_drfl_config) */
	const char *host; /* default "192.168.137.100" (RT server, DRCF >= 3.4: the robot IP) */
	uint16_t port;	  /* default 12347 */
	double period_s;  /* stream period, 0.001..1 (default 0.001) */
	/* set_rt_control_*'s loss count: consecutive losses before the
	 * controller drops the RT connection; -1 off (default 0 = 4, as
	 * Doosan's samples). */
	int loss_count;
	bool set_input; /* also call set_rt_control_input */
	/* Global RT limits in SI (m/s, m/s^2, rad/s, rad/s^2), converted to
	 * Doosan units; 0 = leave the controller's. */
	double velx, accx; /* translational; the rotational is AUTO */
	double velj[6], accj[6];
};

/* Returns true when every entry the backend calls is set in @api (the two
 * callbacks are optional here), false otherwise or for a NULL @api or one
 * whose .size does not cover read_data_rt. */
RTL_API bool rtl_drfl_api_complete(const struct rtl_drfl_api *api);

/*
 * Open the RT session on @api (every entry set) as described above.
 * Returns 0, -EINVAL (NULL, a missing entry, period out of range),
 * -ECONNREFUSED (connect_rt_control failed), or -EIO (a later call failed;
 * @err names it). Not RT-safe.
 */
RTL_API int rtl_drfl_api_connect(const struct rtl_drfl_api *api, const struct rtl_drfl_config *cfg,
				 struct rtl_error *err);

/* stop_rt_control then disconnect_rt_control. Returns 0 or -EIO (either
 * call failed; both are made). Not RT-safe. */
RTL_API int rtl_drfl_api_disconnect(const struct rtl_drfl_api *api);

/*
 * Send one period's setpoint @out with horizon @target_time s. Returns the
 * enum rtl_udp_mode it was sent as, -EINVAL (NULL, target_time not
 * > 0) or -EIO (the DRFL call returned false). RT-safe on our side.
 */
RTL_API int rtl_drfl_api_send(const struct rtl_drfl_api *api, const struct rtl_motion_output *out,
			      double target_time);

/*
 * Send the command @c (Doosan units, as a UDP COMMAND carries it) as the
 * DRFL call of its mode; STOP and NONE become speedj_rt with zero
 * velocity and acc[0] on every axis. Returns the mode, -EINVAL (NULL, an
 * unknown mode) or -EIO (the call returned false: not sent; true means
 * sent, never applied). Checks nothing (rtl_udp_cmd_check() does). RT-safe
 * on our side.
 */
RTL_API int rtl_drfl_api_send_cmd(const struct rtl_drfl_api *api, const struct rtl_udp_cmd *c);

/* The latest state into @s. Returns 0, -EINVAL, or -ENODATA (no state
 * yet). RT-safe on our side. */
RTL_API int rtl_drfl_api_read(const struct rtl_drfl_api *api, struct rtl_udp_state *s);

RTL_END_DECLS

#endif /* RTLOOP_DRFL_BACKEND_H */
