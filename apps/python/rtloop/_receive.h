/* SPDX-License-Identifier: MIT */
/*
 * What rtloop.Receive (_receive.c) shares with rtloop.Control (_control.c),
 * which is its subclass: the object, the options both open the loop with,
 * the argument parsers, and the calls that read the loop.
 *
 * One object is one rtloop loop over the RTDE transport, with no step
 * function: the loop's rx thread (C, real time) receives every frame into
 * the ring, and Python takes the newest one through the external-loop API
 * (rtl_loop_read(), the GIL released while it waits). Nothing the rx
 * thread does ever waits for Python.
 *
 * Threads: every call that touches the loop's step side (a read, a
 * command, close) holds the GIL to begin with and marks the object busy
 * before it lets the GIL go, so a second Python thread that comes meanwhile
 * is refused (EBUSY) instead of racing the first one inside the loop.
 * Statistics and histograms are relaxed atomics in the library: any thread.
 */
#ifndef RTLOOP_PY_RECEIVE_H
#define RTLOOP_PY_RECEIVE_H

#include "_loop.h"
#include "_module.h"

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/loop.h>
#include <rtloop/stat.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_req.h>
#include <rtloop/rtde_transport.h>

/* The command registers of <rtloop/rtde_cmd.h>, resolved at connect. */
struct py_cmd_handles {
	struct rtl_rtde_handle mode, param[RTL_RTDE_CMD_NPARAM], accel, time, lookahead, gain;
	/* Control(echo=True): input_double_register_47 (RTL_RTDE_CMD_ECHO_RECIPE,
	 * input recipe 1), written with the step's frame timestamp by every
	 * command, so rtde-sim --echo-register 47 measures the round trip. */
	bool echo;
	struct rtl_rtde_handle echo_reg;
};

/* The binding's own counts, for the loop's identities (docs/python.md). */
/* The binding's own counters, declared once (as the library's are). */
#define PY_COUNTS(X)                                                       \
	X(reads, "rtl_loop_read() calls that returned a frame: the steps") \
	X(rereads, "of those: taken again because the ring had been full") \
	X(timeouts, "read() calls that returned None: no frame in time")   \
	X(writes, "rtl_loop_write() calls")                                \
	X(lone_writes, "of those: with no read since the last write")      \
	X(write_errors, "of those: failed with an error other than -EAGAIN")

struct py_counts {
	PY_COUNTS(RTL_STAT_U64)
};

/* Requests followed at once; an older handle keeps what it saw last. */
#define PY_REQ_TRACKED 8

struct py_rx {
	PyObject ob_base;    /* PyObject_HEAD, spelled out for clang-format */
	bool control;	     /* an rtloop.Control: commands; get() reads the step's frame */
	struct py_life life; /* open, closing, busy: _loop.h */
	bool in_step;	     /* a read returned a frame and no write ended its step */
	int end_code;
	char end_msg[RTL_ERROR_MSG];
	int64_t timeout_ns; /* the default wait of a read */
	char *outputs;	    /* the output names, comma-separated (the transport's) */
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	/* The output recipe as connected. */
	unsigned n_fields;
	struct rtl_rtde_handle *handles;
	PyObject *names; /* tuple of str, in recipe order */
	PyObject *index; /* dict: name -> position */
	double frequency;
	char version[32];
	struct py_cmd_handles cmd;
	/* Requests (_request.c): the recipe and registers, resolved at
	 * connect (req_ok), the identities, and the newest requests, each
	 * followed with every frame taken. */
	unsigned req_recipe;
	bool req_ok;
	struct rtl_rtde_req_handles req_h;
	struct rtl_rtde_req_ids req_ids;
	unsigned req_next;
	struct rtl_rtde_req_tracker req_t[PY_REQ_TRACKED];
	/* safety_mode and runtime_state: a request the program can no longer
	 * answer (a protective stop, the program stopped) ends with them */
	struct rtl_rtde_handle safety, runtime;
	/* The newest frame taken, copied out of the ring. */
	unsigned char *values;
	uint32_t values_cap, values_size;
	bool have;
	uint64_t seq;
	int64_t rx_ns;
	double ctrl_time;
	uint32_t ctrl_skipped;
	uint64_t ring_full_seen;
	struct py_counts n;
	/* What stats(), histograms() and report() say once closed. */
	PyObject *final_stats, *final_hists, *final_report;
	/* The open objects, for the stop at interpreter exit (_loop.h). */
	struct py_open node;
};

/* How to open one (the arguments, checked). */
struct py_rx_opts {
	const char *host;
	uint16_t port;
	PyObject *fields; /* a tuple of str, checked against the registry */
	double frequency; /* 0: the controller's maximum */
	int64_t timeout_ns;
	bool control;
	bool echo; /* Control only: the echo register (struct py_cmd_handles) */
	int watchdog_periods;
	int64_t stop_timeout_ns;
};

extern PyTypeObject py_receive_type;

/* Argument parsers: 0, or -1 with TypeError / ValueError set. @what names
 * the call ("rtloop.Receive"). */
int py_parse_port(PyObject *o, const char *what, uint16_t *out);
int py_parse_fields(PyObject *o, const char *what, PyObject **out);
/* Seconds, finite, in [@min, 1e6]; @none (if not NULL) for None. */
int py_parse_seconds(PyObject *o, const char *what, const char *name, double min,
		     const double *none, int64_t *ns);
int py_parse_frequency(PyObject *o, const char *what, double *out);
int py_parse_host(PyObject *o, const char *what, const char **out);
/* Refuse a second __init__ (-1, rtloop.Error EALREADY). */
int py_rx_begin(struct py_rx *s, const char *what);
/* Defaults (the fields tuple is the module's DEFAULT_FIELDS). */
PyObject *py_default_fields(void);

/* Create, connect and start the loop for @o: 0, or -1 with the exception
 * set (rtloop.Error with the library's sentence). */
int py_rx_open(struct py_rx *s, const struct py_rx_opts *o);

/* Refuse (-1, exception set) a call on a closed object, or while another
 * thread is inside the loop; 0 when @s may be used now. */
int py_rx_check(struct py_rx *s, const char *what);

/* The state of the newest frame taken, as a dict (every field). */
PyObject *py_rx_state(struct py_rx *s);

/* Take a frame newer than the last one, waiting up to @timeout_ns (the
 * GIL released). 1: taken (copied out), 0: none in time, -1: exception
 * set (the loop ended, a signal's exception, misuse). */
int py_rx_take(struct py_rx *s, int64_t timeout_ns, const char *what);

/* The loop ended by itself: rtloop.Error with the code and the sentence
 * of why; returns -1. */
int py_rx_raise_ended(struct py_rx *s, const char *what);

/* ---- shared by _control.c and _request.c ---- */

/* A finite number, six of them from any sequence, or an optional one in
 * [@lo, @hi] (@lo_open: above @lo; None: 0, the executor's default): 0,
 * or -1 with TypeError / ValueError naming @name. */
int py_parse_number(PyObject *o, const char *what, const char *name, double *out);
int py_parse_vec(PyObject *o, const char *what, const char *name, Py_ssize_t n, double *out);
int py_parse_opt(PyObject *o, const char *what, const char *name, double lo, bool lo_open,
		 double hi, double *out);
/* 0 when @s may send commands now; -1 with the exception set. */
int py_ctl_usable(struct py_rx *s, const char *what);
/* rtl_loop_write(): the bytes sent as an int, NULL with the exception. */
PyObject *py_ctl_send(struct py_rx *s, const char *what);

/* Follow the tracked requests with the frame just taken. */
void py_req_on_frame(struct py_rx *s);
/* The request methods of rtloop.Control (NULL-terminated), and the type
 * rtloop.Request of what they return with wait=False. */
extern PyMethodDef py_req_methods[];
int py_request_register(PyObject *module);

/* Field @h of the RTDE frame @fr as a Python value (bool, int, float, or a
 * NumPy array for the vectors): a new reference, or NULL with the exception
 * set. */
PyObject *py_rtde_value(const struct rtl_rtde_frame *fr, struct rtl_rtde_handle h);

#endif /* RTLOOP_PY_RECEIVE_H */
