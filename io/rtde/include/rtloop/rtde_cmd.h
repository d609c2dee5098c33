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
/* Force mode is on (RTL_RTDE_REQ_FORCE_MODE until END_FORCE_MODE or a stop). */
#define RTL_RTDE_CMD_STATUS_FORCE (1u << 2)
/* Teach mode (freedrive) is on (RTL_RTDE_REQ_TEACH_MODE until END_TEACH_MODE or a stop). */
#define RTL_RTDE_CMD_STATUS_TEACH (1u << 3)

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

/*
 * Requests: the commands beside the stream (move_j, move_l, force mode,
 * teach mode, payload, TCP, kinematics; docs/rtde-registers.md,
 * "Requests"). A request is one package of the request recipe
 * (RTL_RTDE_REQ_RECIPE): an identity, a kind, flags and up to 13
 * arguments, applied whole. The executor takes a request when its identity
 * differs from the last one it took, so a package sent twice is taken once;
 * it answers in the acknowledgement registers: the identity it is
 * answering, that request's state and, on failure, the reason. A new
 * request that moves the arm interrupts a running move (its outcome:
 * FAILED, INTERRUPTED), and so does a streaming mode other than IDLE.
 */
enum rtl_rtde_req_kind {
	RTL_RTDE_REQ_NONE = 0,
	/* ARG0..5 joint target [rad]; ARG6 speed of the leading joint
	 * [rad/s] (<= 0: 1.05); ARG7 its acceleration [rad/s^2] (<= 0: 1.4);
	 * with FLAG_PATH: the last target of the path added before. */
	RTL_RTDE_REQ_MOVE_J = 1,
	/* ARG0..5 TCP pose in the base frame [m, rotation vector rad]; ARG6
	 * tool speed [m/s] (<= 0: 0.25); ARG7 acceleration [m/s^2] (<= 0:
	 * 1.2); with FLAG_PATH as MOVE_J. */
	RTL_RTDE_REQ_MOVE_L = 2,
	/* Bring a move to rest: ARG7 deceleration (<= 0: the default). */
	RTL_RTDE_REQ_STOP_MOVE = 3,
	/* Append a waypoint to the path the next MOVE_J/MOVE_L with FLAG_PATH
	 * runs: as MOVE_J (FLAG_LINEAR clear) or MOVE_L (set), ARG8 its blend
	 * radius [m]. At most RTL_RTDE_REQ_PATH_MAX waypoints. */
	RTL_RTDE_REQ_PATH_ADD = 4,
	/* ARG0..5 task frame pose; ARG6..11 wrench [N, Nm]; FLAGS bits 0..5
	 * the selection vector (1: compliant), bits 8..9 the type (1, 2, 3
	 * as URScript force_mode). The limits are the last FORCE_LIMITS'
	 * (before any: RTL_RTDE_REQ_FORCE_LIMIT_DEFAULT on every axis). DONE
	 * once the mode is on; RTL_RTDE_CMD_STATUS_FORCE shows it. */
	RTL_RTDE_REQ_FORCE_MODE = 5,
	/* ARG0..5 limits (compliant axes: max speed [m/s, rad/s]; others:
	 * max deviation [m, rad]); ARG6 damping 0..1 (< 0: 0.005); ARG7 gain
	 * scaling 0..2 (< 0: 1). */
	RTL_RTDE_REQ_FORCE_LIMITS = 6,
	RTL_RTDE_REQ_END_FORCE_MODE = 7,
	/* Freedrive: the arm follows the force on the tool. Interrupts a
	 * move; DONE once on, RTL_RTDE_CMD_STATUS_TEACH shows it. */
	RTL_RTDE_REQ_TEACH_MODE = 8,
	RTL_RTDE_REQ_END_TEACH_MODE = 9,
	RTL_RTDE_REQ_ZERO_FT_SENSOR = 10,
	/* ARG0 mass [kg]; ARG1..3 centre of gravity in the flange frame [m]. */
	RTL_RTDE_REQ_SET_PAYLOAD = 11,
	/* ARG0..5 TCP pose in the flange frame. */
	RTL_RTDE_REQ_SET_TCP = 12,
	/* ARG0..5 joints: RESULT0..5 the TCP pose. */
	RTL_RTDE_REQ_FORWARD_KIN = 13,
	/* ARG0..5 TCP pose; ARG6..11 joints near which to look (FLAG_NEAR
	 * set; else the current joints): RESULT0..5 the closest solution. */
	RTL_RTDE_REQ_INVERSE_KIN = 14,
	/* ARG0..5 TCP speed in the base frame; ARG6 acceleration (<= 0:
	 * 1.2); ARG7 distance to retract after contact [m], along the
	 * opposite direction (0: none); ARG8 the contact force [N] (<= 0:
	 * RTL_RTDE_REQ_CONTACT_FORCE_DEFAULT). RUNNING until contact, DONE
	 * after the retract; FAILED/NO_CONTACT when a joint limit or the
	 * workspace stops it first. */
	RTL_RTDE_REQ_MOVE_UNTIL_CONTACT = 15,
};
#define RTL_RTDE_REQ_KIND_COUNT 16

/* Bits of the request's flags register. */
#define RTL_RTDE_REQ_FLAG_PATH (1u << 16)   /* MOVE_J/MOVE_L: run the added path */
#define RTL_RTDE_REQ_FLAG_LINEAR (1u << 17) /* PATH_ADD: a linear waypoint */
#define RTL_RTDE_REQ_FLAG_NEAR (1u << 18)   /* INVERSE_KIN: ARG6..11 hold q_near */
#define RTL_RTDE_REQ_PATH_MAX 32

/* The state of the request ACK_ID names (RTL_RTDE_REQ_OUT_STATE). */
enum rtl_rtde_req_state {
	RTL_RTDE_REQ_STATE_NONE = 0,	 /* no request taken yet */
	RTL_RTDE_REQ_STATE_ACCEPTED = 1, /* taken, not started (a path being added) */
	RTL_RTDE_REQ_STATE_RUNNING = 2,	 /* a move or a mode in progress */
	RTL_RTDE_REQ_STATE_DONE = 3,	 /* finished: RESULT holds what it returns */
	RTL_RTDE_REQ_STATE_FAILED = 4,	 /* refused or failed: see the reason */
};

/* Why a request failed (RTL_RTDE_REQ_OUT_REASON; 0 otherwise). */
enum rtl_rtde_req_reason {
	RTL_RTDE_REQ_OK = 0,
	RTL_RTDE_REQ_BAD_ARGUMENT = 1,	  /* non-finite, out of range, unknown flags */
	RTL_RTDE_REQ_UNREACHABLE = 2,	  /* a pose outside the arm's reach */
	RTL_RTDE_REQ_JOINT_LIMIT = 3,	  /* a target past a joint's limit */
	RTL_RTDE_REQ_PROTECTIVE_STOP = 4, /* the arm is (or went) in protective stop */
	RTL_RTDE_REQ_INTERRUPTED = 5,	  /* another command took the arm */
	RTL_RTDE_REQ_NO_SOLUTION = 6,	  /* inverse kinematics found none */
	RTL_RTDE_REQ_UNKNOWN_KIND = 7,	  /* not a kind this executor knows */
	RTL_RTDE_REQ_PATH_FULL = 8,	  /* more than RTL_RTDE_REQ_PATH_MAX waypoints */
	RTL_RTDE_REQ_WATCHDOG = 9,	  /* the heartbeat stopped during the move */
	RTL_RTDE_REQ_NOT_ALLOWED = 10,	  /* not in this state (e.g. teach mode) */
	RTL_RTDE_REQ_NO_CONTACT = 11,	  /* move_until_contact stopped without one */
};
#define RTL_RTDE_REQ_REASON_COUNT 12

/* The request's registers: input int 40..42, input double 34..46. */
#define RTL_RTDE_REQ_REG_ID 40	  /* identity: a new non-zero value per request */
#define RTL_RTDE_REQ_REG_KIND 41  /* enum rtl_rtde_req_kind */
#define RTL_RTDE_REQ_REG_FLAGS 42 /* RTL_RTDE_REQ_FLAG_*, kind-specific bits */
#define RTL_RTDE_REQ_NARG 13
#define RTL_RTDE_REQ_REG_ARG0 34 /* ARG0..ARG12: double registers 34..46 */
/* The acknowledgement: output int 40..42, output double 24..29. */
#define RTL_RTDE_REQ_OUT_ID 40	   /* the identity answered (0: none yet) */
#define RTL_RTDE_REQ_OUT_STATE 41  /* enum rtl_rtde_req_state */
#define RTL_RTDE_REQ_OUT_REASON 42 /* enum rtl_rtde_req_reason */
#define RTL_RTDE_REQ_NRESULT 6
#define RTL_RTDE_REQ_OUT_RESULT0 24 /* RESULT0..5: output double 24..29 */

/* Defaults of the moves, as URScript's movej and movel. */
#define RTL_RTDE_REQ_JOINT_SPEED_DEFAULT 1.05	 /* rad/s */
#define RTL_RTDE_REQ_TOOL_SPEED_DEFAULT 0.25	 /* m/s */
#define RTL_RTDE_REQ_FORCE_LIMIT_DEFAULT 0.1	 /* m/s (rad/s) compliant, m (rad) others */
#define RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT 0.005 /* force_mode_set_damping */
#define RTL_RTDE_REQ_FORCE_GAIN_DEFAULT 1.0	 /* force_mode_set_gain_scaling */
#define RTL_RTDE_REQ_CONTACT_FORCE_DEFAULT 10.0	 /* N, move_until_contact */

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

/* The request recipe, in wire order: id, kind, flags, then ARG0..12
 * (3 x INT32, 13 x DOUBLE). */
#define RTL_RTDE_CMD_OUT_DOUBLE(n) "output_double_register_" RTL_RTDE_CMD_STR(n)
#define RTL_RTDE_REQ_RECIPE                                                                                                                                                                                                                            \
	RTL_RTDE_CMD_IN_INT(40)                                                                                                                                                                                                                        \
	"," RTL_RTDE_CMD_IN_INT(41) "," RTL_RTDE_CMD_IN_INT(42) "," RTL_RTDE_CMD_IN_DOUBLE(34) "," RTL_RTDE_CMD_IN_DOUBLE(35) "," RTL_RTDE_CMD_IN_DOUBLE(36) "," RTL_RTDE_CMD_IN_DOUBLE(37) "," RTL_RTDE_CMD_IN_DOUBLE(38) "," RTL_RTDE_CMD_IN_DOUBLE( \
		39) "," RTL_RTDE_CMD_IN_DOUBLE(40) "," RTL_RTDE_CMD_IN_DOUBLE(41) "," RTL_RTDE_CMD_IN_DOUBLE(42) "," RTL_RTDE_CMD_IN_DOUBLE(43) "," RTL_RTDE_CMD_IN_DOUBLE(44) "," RTL_RTDE_CMD_IN_DOUBLE(45) "," RTL_RTDE_CMD_IN_DOUBLE(46)
/* The acknowledgement, for the client's output recipe. */
#define RTL_RTDE_REQ_ACK_OUTPUTS                                                                                               \
	RTL_RTDE_CMD_OUT_INT(40)                                                                                               \
	"," RTL_RTDE_CMD_OUT_INT(41) "," RTL_RTDE_CMD_OUT_INT(42) "," RTL_RTDE_CMD_OUT_DOUBLE(24) "," RTL_RTDE_CMD_OUT_DOUBLE( \
		25) "," RTL_RTDE_CMD_OUT_DOUBLE(26) "," RTL_RTDE_CMD_OUT_DOUBLE(27) "," RTL_RTDE_CMD_OUT_DOUBLE(28) "," RTL_RTDE_CMD_OUT_DOUBLE(29)
/* The indices above, checked against the names (a change of one without
 * the other does not build). */
RTL_STATIC_ASSERT(RTL_RTDE_REQ_REG_ID == 40 && RTL_RTDE_REQ_REG_KIND == 41 &&
			  RTL_RTDE_REQ_REG_FLAGS == 42 && RTL_RTDE_REQ_REG_ARG0 == 34 &&
			  RTL_RTDE_REQ_REG_ARG0 + RTL_RTDE_REQ_NARG - 1 == 46,
		  "RTL_RTDE_REQ_RECIPE names registers 40-42 and 34-46");
RTL_STATIC_ASSERT(RTL_RTDE_REQ_OUT_ID == 40 && RTL_RTDE_REQ_OUT_RESULT0 == 24 &&
			  RTL_RTDE_REQ_NRESULT == 6,
		  "RTL_RTDE_REQ_ACK_OUTPUTS names registers 40-42 and 24-29");

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
