/* SPDX-License-Identifier: MIT */
/*
 * rtloop.Motion's C side, which knows nothing of Python (so the tests
 * build it alone, tests/python/test-motion-rt.c): the command and event
 * rings, the triple buffer of the newest state, the step. _motion.h says
 * how the step and Python share the work.
 */
#ifndef RTLOOP_PY_MOTION_RT_H
#define RTLOOP_PY_MOTION_RT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rtloop/drfl_api.h>
#include <rtloop/drfl_transport.h>
#include <rtloop/loop.h>
#include <rtloop/motion.h>
#include <rtloop/motion_backend.h>
#include <rtloop/ring.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/stat.h>
#include <rtloop/telemetry.h>
#include <rtloop/udp.h>
#include <rtloop/udp_transport.h>

/* The transports, in the order of their names (py_mt_names). */
enum py_mt { PY_MT_UDP, PY_MT_RTDE, PY_MT_DRFL, PY_MT_COUNT };
extern const char *const py_mt_names[PY_MT_COUNT];

/* What a command asks the step to call. */
enum py_mop {
	PY_MOP_SPEEDL,
	PY_MOP_SPEEDJ,
	PY_MOP_SERVOL,
	PY_MOP_SERVOJ,
	PY_MOP_STOP, /* acc[0]: the deceleration */
	PY_MOP_VELX, /* vel[0], vel[1]: translation, rotation */
	PY_MOP_ACCX,
	PY_MOP_VELJ, /* vel[] */
	PY_MOP_ACCJ, /* acc[] */
};

/* One command, a slot of the command ring; SI units, checked by Python. */
struct py_mcmd {
	enum py_mop op;
	double pos[RTL_MOTION_AXES], vel[RTL_MOTION_AXES], acc[RTL_MOTION_AXES];
	double time; /* target_time [s] */
};

/* What the step publishes every period it steps. */
struct py_mstate {
	uint64_t seq;		       /* the loop's frame number */
	int64_t rx_ns;		       /* when the frame was received (CLOCK_MONOTONIC) */
	int64_t now_ns;		       /* the controller's time the motion was stepped at */
	uint32_t ctrl_skipped;	       /* controller periods lost before this frame */
	struct rtl_motion_state m;     /* measured, SI */
	struct rtl_motion_output out;  /* the setpoint sent */
	double force[RTL_MOTION_AXES]; /* the TCP wrench [N, N m] */
	/* RTDE: robot_mode, safety_mode, runtime_state; UDP and DRFL:
	 * robot_mode, robot_state, control_mode. */
	int32_t status[3];
	struct rtl_udp_state raw; /* UDP and DRFL: the state as it came */
};

/* The newest-value hand-over from the step to Python: a triple buffer.
 * The writer fills slot[back] and swaps it with @ready; the reader swaps
 * @front with @ready when PY_MPUB_NEW is set. */
#define PY_MPUB_NEW 4u
struct py_mpub {
	struct py_mstate slot[3];
	_Atomic uint32_t ready;	  /* a slot index | PY_MPUB_NEW when unread */
	uint32_t back;		  /* the step's */
	uint32_t front;		  /* the reader's */
	_Atomic uint32_t bell;	  /* +1 per publication: the futex word */
	_Atomic uint32_t waiting; /* a reader sleeps on @bell */
};

/* The step's counters (one writer: the step), declared once. */
#define PY_MOTION_STEP_COUNTS(X)                                                     \
	X(stepped, "periods the motion was stepped and its setpoint written")        \
	X(not_ready, "frames stepped before the motion was set up: nothing written") \
	X(nonfinite, "states holding a NaN or an infinity: not stepped")             \
	X(clock_back, "controller times that went back: the last one was used")      \
	X(applied, "commands and settings the step took from Python")                \
	X(backend_errors, "setpoints the transport cannot carry (STOP went instead)")

struct py_motion_step_counts {
	PY_MOTION_STEP_COUNTS(RTL_STAT_U64)
};

struct py_motion_step_atomics {
	PY_MOTION_STEP_COUNTS(RTL_STAT_ATOMIC)
};

/* Python's counters (written with the GIL held), declared once. */
#define PY_MOTION_COUNTS(X)                                               \
	X(commands, "motion commands and stops Python queued")            \
	X(settings, "limit settings Python queued")                       \
	X(queue_full, "commands refused: the queue to the step was full") \
	X(reads, "read() calls that returned a state")                    \
	X(timeouts, "read() calls that returned None: no state in time")  \
	X(events, "motion events events() handed over")                   \
	X(unapplied, "commands and settings still queued when it closed")

struct py_motion_counts {
	PY_MOTION_COUNTS(RTL_STAT_U64)
};

/* The C side of one rtloop.Motion: what the step reads and writes. */
struct py_motion_rt {
	enum py_mt kind;
	int64_t period_ns;
	double horizon_s; /* UDP: the target time of each setpoint (a period) */
	struct rtl_motion *motion;
	_Atomic bool ready; /* motion set up (release: the step may use it) */
	bool handler_set;   /* the step's: the event handler installed */
	int64_t last_now;   /* the step's: the time of the last step */
	struct rtl_ring *cmds, *events;
	struct py_mpub pub;
	struct py_motion_step_atomics c;
	/* Telemetry (NULL: none): the step sets these signals before the
	 * loop publishes (the measured state, the setpoint, its mode). */
	struct rtl_telemetry *tel;
	int t_q, t_qd, t_pose, t_speed, t_sp_vel, t_sp_pose, t_mode;
	/* RTDE: the backend and the output handles (set by connected()). */
	struct rtl_motion_rtde rtde_b;
	struct rtl_rtde_handle h_ts, h_q, h_qd, h_pose, h_speed, h_force, h_status[3];
};

/* ---- _motion_rt.c: the step's side and the hand-overs ---- */

/* Slots of the command ring and of the event ring. */
#define PY_MOTION_CMD_SLOTS 64
#define PY_MOTION_EVENT_SLOTS 64

void py_mpub_init(struct py_mpub *p);
/* The writer (the step): slot[back] is filled; make it the newest, ring
 * the bell, wake a reader that sleeps. RT-safe. */
void py_mpub_publish(struct py_mpub *p);
/* The reader: the newest publication if one came since the last take
 * (else NULL); wait up to @timeout_ns for one (1: taken, 0: none). */
const struct py_mstate *py_mpub_take(struct py_mpub *p);
int py_mpub_wait(struct py_mpub *p, int64_t timeout_ns);
/* The reader's slot: the state last taken. */
const struct py_mstate *py_mpub_front(const struct py_mpub *p);

/* The loop's step (user: the struct py_motion_rt). RT-safe. */
int py_motion_step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user);
/* RTDE's connected() and safe() callbacks (user: the struct py_motion_rt). */
void py_motion_rtde_connected(struct rtl_rtde_transport *t, void *user);
void py_motion_rtde_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user);
/* The outputs the RTDE transport asks for. */
extern const char py_motion_rtde_outputs[];

#endif /* RTLOOP_PY_MOTION_RT_H */
