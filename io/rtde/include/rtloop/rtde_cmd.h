/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_cmd: the register layout that drives motion through RTDE.
 *
 * Design
 * ------
 * RTDE itself moves nothing: a client can only write input registers, and a
 * program on the controller has to read them and call speedj/speedl/servoj.
 * This header fixes one layout that three parties share: rtloop clients
 * (which write it), the simulator rtde-sim (whose robot executes it), and
 * rtloop_control.script (the URScript program that executes it
 * on a real robot). docs/rtde-registers.md is the long form.
 *
 * - Only the external-client ranges are used (int and double registers
 *   24-47, PolyScope 3.9.0 / 5.3.0 and newer): registers 0-23 belong to
 *   fieldbus adapters, which report them IN_USE when enabled
 *   (docs/rtde-protocol.md 5.1).
 * - One command recipe carries mode, heartbeat, watchdog timeout and every
 *   parameter (RTL_RTDE_CMD_RECIPE), so a command is applied atomically: a
 *   data package is applied whole, never half.
 * - The heartbeat (RTL_RTDE_CMD_REG_SEQ) must change in every package the
 *   client sends. It is what the watchdog watches, and it also keeps an input
 *   coalescer (which sends only what changed) from going silent while the
 *   command stays the same.
 * - The echo register is separate (RTL_RTDE_CMD_ECHO_RECIPE): the client
 *   copies the `timestamp` of the newest data package into it; the simulator
 *   subtracts it from its clock on arrival (round trip), and on a real robot
 *   the client reads it back as an output field (input registers may be read
 *   back) to see when the controller applied it.
 * - Output registers 24-27 report what the executor is doing (mode, last
 *   heartbeat, watchdog trips, status bits).
 *
 * The names are built from the indices by the preprocessor, so a name string
 * can never disagree with its index. Constants only: no functions, no ABI.
 */
#ifndef RTLOOP_RTDE_CMD_H
#define RTLOOP_RTDE_CMD_H

#include <stddef.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

/* Command modes, written to RTL_RTDE_CMD_FIELD_MODE. */
enum rtl_rtde_cmd_mode {
	/* No motion command. A moving robot decelerates with the default
	 * acceleration (stopl after speedl, stopj otherwise), then holds. */
	RTL_RTDE_CMD_IDLE = 0,
	/* speedj: PARAM0..5 = joint velocities [rad/s]; ACCEL = acceleration
	 * of the leading joint [rad/s^2] (<= 0: default 1.4). */
	RTL_RTDE_CMD_SPEEDJ = 1,
	/* speedl: PARAM0..5 = TCP twist in the base frame, vx vy vz [m/s],
	 * wx wy wz [rad/s]; ACCEL = tool acceleration [m/s^2] (<= 0: default
	 * 1.2), used also as the angular acceleration [rad/s^2]. */
	RTL_RTDE_CMD_SPEEDL = 2,
	/* servoj: PARAM0..5 = joint position target [rad]; TIME = servoj's t
	 * [s]; LOOKAHEAD [s] (0.03..0.2, 0: 0.1); GAIN (100..2000, 0: 300). */
	RTL_RTDE_CMD_SERVOJ = 3,
	/* Decelerate to rest: ACCEL = deceleration (<= 0: default). After
	 * speedl in linear units (stopl, m/s^2), otherwise in joint units
	 * (stopj, rad/s^2 of the leading joint). */
	RTL_RTDE_CMD_STOP = 4,
};
#define RTL_RTDE_CMD_MODE_COUNT 5

/* Indices of the input integer registers (input_int_register_N). */
#define RTL_RTDE_CMD_REG_MODE 24 /* enum rtl_rtde_cmd_mode */
#define RTL_RTDE_CMD_REG_SEQ 25	 /* heartbeat: must change in every package */
/* Watchdog timeout [ms]: 0 = default (RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS),
 * > 0 = this many ms, < 0 = watchdog off (benchmarks only). */
#define RTL_RTDE_CMD_REG_WATCHDOG_MS 26

/* Indices of the input double registers (input_double_register_N). */
#define RTL_RTDE_CMD_NPARAM 6
#define RTL_RTDE_CMD_REG_PARAM0 24 /* mode-specific parameters 0..5 */
#define RTL_RTDE_CMD_REG_PARAM1 25
#define RTL_RTDE_CMD_REG_PARAM2 26
#define RTL_RTDE_CMD_REG_PARAM3 27
#define RTL_RTDE_CMD_REG_PARAM4 28
#define RTL_RTDE_CMD_REG_PARAM5 29
#define RTL_RTDE_CMD_REG_ACCEL 30     /* acceleration / deceleration */
#define RTL_RTDE_CMD_REG_TIME 31      /* servoj t [s] */
#define RTL_RTDE_CMD_REG_LOOKAHEAD 32 /* servoj lookahead_time [s] */
#define RTL_RTDE_CMD_REG_GAIN 33      /* servoj gain */
/* Latency echo: the client writes the `timestamp` [s] of the newest data
 * package it has received. Travels in its own recipe. */
#define RTL_RTDE_CMD_REG_ECHO 47

/* Indices of the output integer registers the executor writes. */
#define RTL_RTDE_CMD_OUT_MODE 24     /* mode executed now (STOP after a trip) */
#define RTL_RTDE_CMD_OUT_SEQ 25	     /* last heartbeat value seen */
#define RTL_RTDE_CMD_OUT_WD_TRIPS 26 /* watchdog trips since program start */
#define RTL_RTDE_CMD_OUT_STATUS 27   /* RTL_RTDE_CMD_STATUS_* bits */

/* Bits of RTL_RTDE_CMD_OUT_STATUS. */
#define RTL_RTDE_CMD_STATUS_READY (1u << 0) /* the executor is running */
/* The watchdog stopped the robot; clears with the next new heartbeat. */
#define RTL_RTDE_CMD_STATUS_WATCHDOG (1u << 1)

/* Defaults and the ranges URScript accepts. */
#define RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS 100
#define RTL_RTDE_CMD_LOOKAHEAD_DEFAULT 0.1
#define RTL_RTDE_CMD_LOOKAHEAD_MIN 0.03
#define RTL_RTDE_CMD_LOOKAHEAD_MAX 0.2
#define RTL_RTDE_CMD_GAIN_DEFAULT 300.0
#define RTL_RTDE_CMD_GAIN_MIN 100.0
#define RTL_RTDE_CMD_GAIN_MAX 2000.0
#define RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT 1.4  /* rad/s^2, as URScript movej */
#define RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT 1.2 /* m/s^2, as URScript movel */

/* Field names, for recipes. */
#define RTL_RTDE_CMD_STR_(x) #x
#define RTL_RTDE_CMD_STR(x) RTL_RTDE_CMD_STR_(x)
#define RTL_RTDE_CMD_IN_INT(n) "input_int_register_" RTL_RTDE_CMD_STR(n)
#define RTL_RTDE_CMD_IN_DOUBLE(n) "input_double_register_" RTL_RTDE_CMD_STR(n)
#define RTL_RTDE_CMD_OUT_INT(n) "output_int_register_" RTL_RTDE_CMD_STR(n)

#define RTL_RTDE_CMD_FIELD_MODE RTL_RTDE_CMD_IN_INT(RTL_RTDE_CMD_REG_MODE)
#define RTL_RTDE_CMD_FIELD_SEQ RTL_RTDE_CMD_IN_INT(RTL_RTDE_CMD_REG_SEQ)
#define RTL_RTDE_CMD_FIELD_WATCHDOG_MS RTL_RTDE_CMD_IN_INT(RTL_RTDE_CMD_REG_WATCHDOG_MS)
#define RTL_RTDE_CMD_FIELD_PARAM0 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM0)
#define RTL_RTDE_CMD_FIELD_PARAM1 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM1)
#define RTL_RTDE_CMD_FIELD_PARAM2 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM2)
#define RTL_RTDE_CMD_FIELD_PARAM3 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM3)
#define RTL_RTDE_CMD_FIELD_PARAM4 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM4)
#define RTL_RTDE_CMD_FIELD_PARAM5 RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_PARAM5)
#define RTL_RTDE_CMD_FIELD_ACCEL RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_ACCEL)
#define RTL_RTDE_CMD_FIELD_TIME RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_TIME)
#define RTL_RTDE_CMD_FIELD_LOOKAHEAD RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_LOOKAHEAD)
#define RTL_RTDE_CMD_FIELD_GAIN RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_GAIN)
#define RTL_RTDE_CMD_FIELD_ECHO RTL_RTDE_CMD_IN_DOUBLE(RTL_RTDE_CMD_REG_ECHO)
#define RTL_RTDE_CMD_FIELD_OUT_MODE RTL_RTDE_CMD_OUT_INT(RTL_RTDE_CMD_OUT_MODE)
#define RTL_RTDE_CMD_FIELD_OUT_SEQ RTL_RTDE_CMD_OUT_INT(RTL_RTDE_CMD_OUT_SEQ)
#define RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS RTL_RTDE_CMD_OUT_INT(RTL_RTDE_CMD_OUT_WD_TRIPS)
#define RTL_RTDE_CMD_FIELD_OUT_STATUS RTL_RTDE_CMD_OUT_INT(RTL_RTDE_CMD_OUT_STATUS)

/* The command input recipe, in wire order: 3 INT32 then 10 DOUBLE. */
#define RTL_RTDE_CMD_RECIPE                                                                   \
	RTL_RTDE_CMD_FIELD_MODE "," RTL_RTDE_CMD_FIELD_SEQ "," RTL_RTDE_CMD_FIELD_WATCHDOG_MS \
				"," RTL_RTDE_CMD_FIELD_PARAM0 "," RTL_RTDE_CMD_FIELD_PARAM1   \
				"," RTL_RTDE_CMD_FIELD_PARAM2 "," RTL_RTDE_CMD_FIELD_PARAM3   \
				"," RTL_RTDE_CMD_FIELD_PARAM4 "," RTL_RTDE_CMD_FIELD_PARAM5   \
				"," RTL_RTDE_CMD_FIELD_ACCEL "," RTL_RTDE_CMD_FIELD_TIME      \
				"," RTL_RTDE_CMD_FIELD_LOOKAHEAD "," RTL_RTDE_CMD_FIELD_GAIN
/* The latency echo input recipe. */
#define RTL_RTDE_CMD_ECHO_RECIPE RTL_RTDE_CMD_FIELD_ECHO
/* Executor status, for the client's output recipe. */
#define RTL_RTDE_CMD_STATUS_OUTPUTS                                     \
	RTL_RTDE_CMD_FIELD_OUT_MODE "," RTL_RTDE_CMD_FIELD_OUT_SEQ      \
				    "," RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS \
				    "," RTL_RTDE_CMD_FIELD_OUT_STATUS

/*
 * The control program, rtloop_control.script: generated at build time from
 * these constants (io/rtde/script/rtloop_control.script.in) and installed to
 * <datadir>/rtloop/. rtl_rtde_cmd_script_path() writes where it is into
 * @out (@len bytes): $RTLOOP_CONTROL_SCRIPT when set (an override, e.g. a
 * build tree's generated copy, build/io/rtde/script/<name>), else the installed
 * copy. Returns 0 when the file is readable, or -errno (-EINVAL,
 * -ENAMETOOLONG, the access error) with @err naming the path and the fix.
 * Not RT-safe.
 */
#define RTL_RTDE_CMD_SCRIPT_NAME "rtloop_control.script"
#define RTL_RTDE_CMD_SCRIPT_ENV "RTLOOP_CONTROL_SCRIPT"
RTL_API int rtl_rtde_cmd_script_path(char *out, size_t len, struct rtl_error *err);
/* Returns the installed copy's path
 * (<prefix>/<datadir>/rtloop/rtloop_control.script), a static string. */
RTL_API const char *rtl_rtde_cmd_script_installed(void);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_CMD_H */
