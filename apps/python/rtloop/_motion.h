/* SPDX-License-Identifier: MIT */
/*
 * rtloop.Motion: the motion API (<rtloop/motion.h>, Doosan's speedl_rt
 * family) from Python, over rtloop's UDP stream, RTDE or Doosan's DRFL.
 *
 * Python is too slow and too irregular to be the step of a 1 kHz stream,
 * and the speedl_rt family is built for a caller that is neither: a
 * command is the newest target, and the profile, the time-out and the
 * limits run every period without it. So the step here is C and runs on
 * the loop's rx thread (inline mode) every period; Python only hands it
 * commands and takes what it published:
 *
 *   Python --commands--> [ring, SPSC] --> step: rtl_motion_* at the
 *          period's time, rtl_motion_loop_step(), the backend writes the
 *          transport's command, the loop sends it
 *   Python <--newest state-- [triple buffer] <-- step: the measured state
 *          (SI), the setpoint, the transport's raw state
 *   Python <--events-- [ring, SPSC] <-- the motion's event handler
 *
 * Every hand-over is wait-free on the step's side: a ring push or pop, a
 * copy into the writer's slot of a triple buffer and one atomic exchange,
 * a relaxed counter, and a futex wake only when Python sleeps on the
 * buffer. tests/python/test-motion-rt.c counts no allocation in the step
 * and runs the buffer's writer and reader on two threads, also under
 * ThreadSanitizer. Python waits on the buffer's event word with the GIL
 * released.
 *
 * Threads: the step (the loop's rx thread) owns struct rtl_motion, the
 * back slot of the buffer, the command ring's consumer side and the event
 * ring's producer side; the Python thread that holds the object (busy, as
 * Receive's) owns the front slot and the event ring's consumer side; the
 * command ring's producer side is taken with the GIL held and never
 * released in between, so any Python thread may command while another one
 * waits in read().
 */
#ifndef RTLOOP_PY_MOTION_H
#define RTLOOP_PY_MOTION_H

#include "_loop.h"
#include "_module.h"
#include "_motion_rt.h"

/* ---- _motion.c, _motion_read.c: the Python object ---- */

/* One rtloop.Motion. */
struct py_motion {
	PyObject ob_base;    /* PyObject_HEAD, spelled out for clang-format */
	struct py_life life; /* open, closing, busy: _loop.h */
	int kind;	     /* enum py_mt once opened; -1 before */
	int end_code;
	char end_msg[RTL_ERROR_MSG];
	int64_t timeout_ns;
	double period_s;
	char host[64];
	uint16_t port;
	struct rtl_udp_transport *udp;
	struct rtl_rtde_transport *rtde;
	struct rtl_drfl_transport *drfl;
	struct rtl_drfl_api drfl_api;
	bool drfl_api_made;
	struct rtl_loop *loop;
	struct py_motion_rt *rt; /* the step's, apart: it is large and aligned */
	bool have;		 /* a state was taken */
	struct py_motion_counts n;
	PyObject *final_stats, *final_hists, *final_report;
	struct py_open node; /* the open objects, for atexit (_loop.h) */
};

#define MO(o) ((struct py_motion *)(o))

/* 0 when @s may be used now: open, the loop not ended (else rtloop.Error
 * with why), and for a @reader no other thread reading (EBUSY). */
int py_motion_usable(struct py_motion *s, const char *what, bool reader);
/* The loop ended by itself: join it, keep why; raise it. */
void py_motion_loop_ended(struct py_motion *s);
void py_motion_raise_ended(struct py_motion *s, const char *what);
/* The counters as stats() gives them. */
PyObject *py_motion_live_stats(struct py_motion *s);
/* The reading methods (_motion_read.c), NULL-terminated. */
extern PyMethodDef py_motion_read_methods[];

#endif /* RTLOOP_PY_MOTION_H */
