// SPDX-License-Identifier: MIT
/*
 * The commands beside the stream on rtloop.Control: move_j, move_l,
 * stop_move, force mode, teach mode, payload, TCP, the sensor's zero,
 * kinematics and move_until_contact, as requests over the registers of
 * <rtloop/rtde_req.h> (docs/rtde-registers.md, "Requests"), and
 * rtloop.Request, the handle a move returns with wait=False.
 *
 * The approach: a request is written into its own input recipe and sent
 * at once (rtl_loop_write(), coalesced: it goes because it changed); its
 * answer comes back in every frame, and every frame a Control takes
 * (read(), a wait, a handle's done()) updates the last PY_REQ_TRACKED
 * requests' outcomes (py_req_on_frame(), called by py_rx_take()). Waiting
 * is reading: a wait takes each frame and ends its step with a write, so
 * the loop's watchdog sees a Python program that keeps up, the
 * transport's keep-alive feeds the controller's, and a Python program that
 * stops reading for watchdog_periods periods gets the safe set (which
 * interrupts any move and ends force and teach mode) exactly as a stream
 * does.
 *
 * A request waits until the one before it has been answered at least once
 * (accepted, running, or over), so two requests sent within one control
 * period cannot replace each other unseen. A move sets the stream's mode
 * to IDLE in the same package: a streaming mode would take the arm from it.
 *
 * Every argument is checked here, before anything is written, with the
 * builders of <rtloop/rtde_req.h> checking them again; errors name the
 * argument.
 */
#include "_receive.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <rtloop/time.h>

#define RX(o) ((struct py_rx *)(o))
#define METH(f) ((PyCFunction)(void (*)(void))(f))
#define NO_LIMIT (-1)
#define SAFETY_NORMAL 1	  /* safety_mode */
#define RUNTIME_PLAYING 2 /* runtime_state */
/* Not the executor's: its program stopped before it answered. */
#define PY_REQ_PROGRAM_STOPPED RTL_RTDE_REQ_REASON_COUNT

/* ---- answers --------------------------------------------------------------------- */

static bool final(enum rtl_rtde_req_outcome o)
{
	return o == RTL_RTDE_REQ_IS_DONE || o == RTL_RTDE_REQ_IS_FAILED ||
	       o == RTL_RTDE_REQ_IS_INTERRUPTED;
}

void py_req_on_frame(struct py_rx *s)
{
	struct rtl_rtde_frame f = { s->values, s->values_size, s->values_cap };
	struct rtl_rtde_req_ack ack;

	int32_t gone = 0;

	if (!s->req_ok || rtl_rtde_req_read_ack(&ack, &f, &s->req_h) < 0)
		return;
	/* A protective stop or a stopped program freezes the answer: what
	 * is still under way then ends with that reason. */
	if (rtl_rtde_handle_valid(s->safety) &&
	    rtl_rtde_frame_get_int(&f, s->safety) != SAFETY_NORMAL)
		gone = RTL_RTDE_REQ_PROTECTIVE_STOP;
	else if (rtl_rtde_handle_valid(s->runtime) &&
		 rtl_rtde_frame_get_uint(&f, s->runtime) != RUNTIME_PLAYING)
		gone = PY_REQ_PROGRAM_STOPPED;
	for (int i = 0; i < PY_REQ_TRACKED; i++) {
		struct rtl_rtde_req_tracker *t = &s->req_t[i];

		if (!t->id)
			continue;
		if (!final(rtl_rtde_req_track(t, &ack)) && gone) {
			t->outcome = RTL_RTDE_REQ_IS_FAILED;
			t->reason = gone;
		}
	}
}

/* The errno of a reason, for rtloop.Error. */
static int reason_errno(int32_t reason)
{
	switch (reason) {
	case RTL_RTDE_REQ_BAD_ARGUMENT:
		return EINVAL;
	case RTL_RTDE_REQ_UNREACHABLE:
	case RTL_RTDE_REQ_JOINT_LIMIT:
	case RTL_RTDE_REQ_NO_SOLUTION:
		return EDOM;
	case RTL_RTDE_REQ_PROTECTIVE_STOP:
		return EPERM;
	case RTL_RTDE_REQ_INTERRUPTED:
		return ECANCELED;
	case RTL_RTDE_REQ_UNKNOWN_KIND:
		return ENOTSUP;
	case RTL_RTDE_REQ_PATH_FULL:
		return ENOSPC;
	case RTL_RTDE_REQ_WATCHDOG:
		return ETIMEDOUT;
	case RTL_RTDE_REQ_NOT_ALLOWED:
		return EBUSY;
	case PY_REQ_PROGRAM_STOPPED:
		return ESRCH;
	default:
		return EIO;
	}
}

static const char *reason_name(int32_t reason)
{
	return reason == PY_REQ_PROGRAM_STOPPED ? "program stopped"
						: rtl_rtde_req_reason_name(reason);
}

/* rtloop.Error for a request the controller refused or that failed, with
 * .reason the reason's name; returns NULL. */
static PyObject *raise_reason(const char *what, int32_t reason)
{
	const char *name = reason_name(reason);
	PyObject *exc, *r;

	exc = PyObject_CallFunction(py_error, "is", reason_errno(reason),
				    reason == RTL_RTDE_REQ_INTERRUPTED
					    ? "interrupted: a newer command took the arm"
					    : name);
	if (!exc)
		return NULL;
	r = PyUnicode_FromString(name);
	if (r) {
		PyObject *msg = PyUnicode_FromFormat("%s: the controller says: %s", what,
						     reason == RTL_RTDE_REQ_INTERRUPTED
							     ? "interrupted (a newer command "
							       "took the arm)"
							     : name);

		if (msg) {
			PyObject_SetAttrString(exc, "strerror", msg);
			Py_DECREF(msg);
		}
		PyObject_SetAttrString(exc, "reason", r);
		Py_DECREF(r);
	}
	PyErr_SetObject(py_error, exc);
	Py_DECREF(exc);
	return NULL;
}

/*
 * Take frames (ending each step with a write) until @t is past @until
 * (PENDING: answered at all; else final), or @timeout_ns (NO_LIMIT: none)
 * ran out. 1: reached, 0: timed out, -1: exception (the loop ended, a
 * signal).
 */
static int pump(struct py_rx *s, const char *what, const struct rtl_rtde_req_tracker *t,
		bool to_final, int64_t timeout_ns)
{
	int64_t deadline = timeout_ns == NO_LIMIT ? INT64_MAX : rtl_time_now() + timeout_ns;

	/* at least one take, so that a timeout of 0 takes what has come */
	for (bool first = true;; first = false) {
		int64_t left;
		int got;

		if (to_final ? final(t->outcome) : t->outcome != RTL_RTDE_REQ_PENDING)
			return 1;
		left = deadline - rtl_time_now();
		if (left <= 0 && !first)
			return 0;
		got = py_rx_take(s, left > 0 ? left : 0, what);
		if (got < 0)
			return -1;
		if (got) {
			PyObject *b = py_ctl_send(s, what);

			if (!b)
				return -1;
			Py_DECREF(b);
		}
	}
}

/* ---- sending ---------------------------------------------------------------------- */

/*
 * Send @q (with the stream's mode set to IDLE when @idle): the tracker's
 * slot, or NULL with the exception set.
 */
static struct rtl_rtde_req_tracker *issue(struct py_rx *s, const char *what,
					  const struct rtl_rtde_req *q, bool idle)
{
	struct rtl_rtde_req_tracker *prev, *t;
	struct rtl_error err = { 0 };
	PyObject *b;

	if (py_ctl_usable(s, what) < 0)
		return NULL;
	if (!s->req_ok) {
		PyErr_Format(PyExc_RuntimeError,
			     "%s: the request registers are not in the recipes "
			     "(the controller refused input int 40-42 / double 34-46)",
			     what);
		return NULL;
	}
	prev = &s->req_t[(s->req_next + PY_REQ_TRACKED - 1) % PY_REQ_TRACKED];
	if (prev->id) {
		int r = pump(s, what, prev, false, s->timeout_ns);

		if (r < 0)
			return NULL;
		if (r == 0) {
			py_raise(-ETIMEDOUT, "the controller did not answer the last request: "
					     "is rtloop's control program running?");
			return NULL;
		}
	}
	t = &s->req_t[s->req_next++ % PY_REQ_TRACKED];
	if (rtl_rtde_req_write(q, rtl_rtde_loop_commands(s->loop, s->req_recipe), &s->req_ids, t,
			       &s->req_h, &err) < 0) {
		py_raise(err.code, err.msg);
		return NULL;
	}
	if (idle && !rtl_rtde_frame_set_int(rtl_rtde_loop_commands(s->loop, 0), s->cmd.mode,
					    RTL_RTDE_CMD_IDLE)) {
		PyErr_Format(PyExc_SystemError, "%s: no mode register", what);
		return NULL;
	}
	b = py_ctl_send(s, what);
	if (!b)
		return NULL;
	Py_DECREF(b);
	return t;
}

/* Send @q and wait for its end (@timeout_ns, NO_LIMIT: none): the
 * tracker, or NULL with the exception (refused, failed, timed out). */
static struct rtl_rtde_req_tracker *run(struct py_rx *s, const char *what,
					const struct rtl_rtde_req *q, bool idle, int64_t timeout_ns)
{
	struct rtl_rtde_req_tracker *t = issue(s, what, q, idle);
	/* a waypoint ends when it is taken (ACCEPTED); the rest, when over */
	bool waypoint = q->kind == RTL_RTDE_REQ_PATH_ADD;
	int r;

	if (!t)
		return NULL;
	r = pump(s, what, t, !waypoint, timeout_ns);
	if (r < 0)
		return NULL;
	if (r == 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: no answer from the controller in time", what);
		py_raise(-ETIMEDOUT, msg);
		return NULL;
	}
	if (t->outcome != RTL_RTDE_REQ_IS_DONE &&
	    !(waypoint && t->outcome == RTL_RTDE_REQ_IS_ACCEPTED)) {
		raise_reason(what, t->reason ? t->reason : RTL_RTDE_REQ_INTERRUPTED);
		return NULL;
	}
	return t;
}

/* A builder's error as ValueError (the argument is named in it). */
static PyObject *bad(const struct rtl_error *err)
{
	PyErr_SetString(PyExc_ValueError, err->msg);
	return NULL;
}

static PyObject *done_or_null(struct rtl_rtde_req_tracker *t)
{
	if (!t)
		return NULL;
	Py_RETURN_NONE;
}

/* ---- rtloop.Request ------------------------------------------------------------------ */

struct py_req {
	PyObject ob_base; /* PyObject_HEAD, spelled out for clang-format */
	PyObject *ctl;	  /* the rtloop.Control */
	char what[48];
	struct rtl_rtde_req_tracker last; /* what was seen of it last */
};

static PyTypeObject request_type;

/* The handle's request as followed: the Control's slot while it holds
 * it (a wait updates that), else what the handle saw last. */
static struct rtl_rtde_req_tracker *slot(struct py_req *h)
{
	struct py_rx *s = RX(h->ctl);

	for (int i = 0; i < PY_REQ_TRACKED; i++)
		if (s->req_t[i].id == h->last.id)
			return &s->req_t[i];
	return &h->last;
}

/* What is known of the handle's request, kept in the handle. */
static struct rtl_rtde_req_tracker *refresh(struct py_req *h)
{
	h->last = *slot(h);
	return &h->last;
}

static PyObject *handle_new(struct py_rx *s, const char *what, struct rtl_rtde_req_tracker *t)
{
	struct py_req *h;

	if (!t)
		return NULL;
	h = PyObject_New(struct py_req, &request_type);
	if (!h)
		return NULL;
	Py_INCREF((PyObject *)s);
	h->ctl = (PyObject *)s;
	snprintf(h->what, sizeof(h->what), "%s", what);
	h->last = *t;
	return (PyObject *)h;
}

static void handle_dealloc(PyObject *o)
{
	Py_CLEAR(((struct py_req *)o)->ctl);
	PyObject_Free(o);
}

/* Ends (by its outcome) the request @h follows: True, None, or raises. */
static PyObject *handle_result(struct py_req *h)
{
	struct rtl_rtde_req_tracker *t = refresh(h);

	if (t->outcome == RTL_RTDE_REQ_IS_DONE)
		Py_RETURN_TRUE;
	return raise_reason(h->what, t->reason ? t->reason : RTL_RTDE_REQ_INTERRUPTED);
}

static PyObject *handle_done(PyObject *self, PyObject *unused)
{
	struct py_req *h = (struct py_req *)self;
	struct py_rx *s = RX(h->ctl);

	(void)unused;
	/* Outside a step, take what has come (without waiting) and answer it. */
	if (!final(refresh(h)->outcome) && s->life.open && !s->life.ended && !s->in_step &&
	    py_rx_check(s, "rtloop.Request.done") == 0 && pump(s, h->what, slot(h), true, 0) < 0)
		return NULL;
	return PyBool_FromLong(final(refresh(h)->outcome));
}

static PyObject *handle_wait(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	struct py_req *h = (struct py_req *)self;
	struct py_rx *s = RX(h->ctl);
	PyObject *to = Py_None;
	int64_t ns = NO_LIMIT;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait", kwlist, &to) ||
	    (to != Py_None &&
	     py_parse_seconds(to, "rtloop.Request.wait", "timeout", 0, NULL, &ns) < 0))
		return NULL;
	if (!final(refresh(h)->outcome)) {
		if (py_ctl_usable(s, h->what) < 0)
			return NULL;
		r = pump(s, h->what, slot(h), true, ns);
		if (r < 0)
			return NULL;
		if (r == 0)
			Py_RETURN_FALSE;
	}
	return handle_result(h);
}

static PyObject *handle_outcome(PyObject *self, void *unused)
{
	static const char *const names[] = { "pending", "accepted", "running",
					     "done",	"failed",   "interrupted" };
	enum rtl_rtde_req_outcome o = refresh((struct py_req *)self)->outcome;

	(void)unused;
	return PyUnicode_FromString((unsigned)o < 6 ? names[o] : "?");
}

static PyObject *handle_reason(PyObject *self, void *unused)
{
	struct rtl_rtde_req_tracker *t = refresh((struct py_req *)self);

	(void)unused;
	if (t->outcome == RTL_RTDE_REQ_IS_INTERRUPTED)
		return PyUnicode_FromString(rtl_rtde_req_reason_name(RTL_RTDE_REQ_INTERRUPTED));
	if (t->outcome != RTL_RTDE_REQ_IS_FAILED)
		Py_RETURN_NONE;
	return PyUnicode_FromString(reason_name(t->reason));
}

static PyObject *handle_id(PyObject *self, void *unused)
{
	(void)unused;
	return PyLong_FromLong(((struct py_req *)self)->last.id);
}

static PyObject *handle_repr(PyObject *self)
{
	PyObject *o = handle_outcome(self, NULL), *r;

	if (!o)
		return NULL;
	r = PyUnicode_FromFormat("<rtloop.Request %s #%d: %U>", ((struct py_req *)self)->what,
				 (int)((struct py_req *)self)->last.id, o);
	Py_DECREF(o);
	return r;
}

static PyMethodDef request_methods[] = {
	{ "done", handle_done, METH_NOARGS,
	  "done($self, /)\n--\n\nTrue once the command is over (done, failed or interrupted). "
	  "Outside a step it first takes the frames that have come, without waiting.\n\n"
	  "Returns: bool." },
	{ "wait", METH(handle_wait), METH_VARARGS | METH_KEYWORDS,
	  "wait($self, /, timeout=None)\n--\n\nTake frames until the command is over: True "
	  "when done, False when the timeout [s] ran out first; raises rtloop.Error with "
	  ".reason when it failed or was interrupted.\n\nReturns: bool." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef request_getset[] = {
	{ "outcome", handle_outcome, NULL,
	  "'pending', 'accepted', 'running', 'done', 'failed' or 'interrupted'.", NULL },
	{ "reason", handle_reason, NULL,
	  "Why it failed ('joint limit', 'unreachable', ...), None unless it failed.", NULL },
	{ "id", handle_id, NULL, "The request's identity in the registers.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject request_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Request",
	.tp_basicsize = sizeof(struct py_req),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A command in progress (a move with wait=False): done(), wait(timeout), "
		  "outcome, reason. docs/python.md.",
	.tp_dealloc = handle_dealloc,
	.tp_repr = handle_repr,
	.tp_methods = request_methods,
	.tp_getset = request_getset,
};

int py_request_register(PyObject *module)
{
	if (PyType_Ready(&request_type) < 0)
		return -1;
	return PyModule_AddType(module, &request_type);
}

/* ---- the calls --------------------------------------------------------------------- */

/* A move's end: wait for it (None, or raise), or its handle. */
static PyObject *move_end(struct py_rx *s, const char *what, const struct rtl_rtde_req *q, int wait)
{
	if (wait)
		return done_or_null(run(s, what, q, true, NO_LIMIT));
	return handle_new(s, what, issue(s, what, q, true));
}

/*
 * move_j / move_l: a target with speed and acceleration, or a path: a
 * sequence of rows of 9 (target, speed, acceleration, blend radius), as
 * ur_rtde's moveJ/moveL(path).
 */
static PyObject *move(PyObject *self, PyObject *args, PyObject *kw, bool linear)
{
	/* The target's keyword is ur_rtde's: moveJ(q, ...), moveL(pose, ...). */
	static char *kw_j[] = { "q", "speed", "acceleration", "wait", NULL };
	static char *kw_l[] = { "pose", "speed", "acceleration", "wait", NULL };
	const char *what = linear ? "rtloop.Control.move_l" : "rtloop.Control.move_j";
	const char *tname = linear ? "pose" : "q";
	double vmax = linear ? 3.0 : 3.15, amax = linear ? 150 : 40;
	struct py_rx *s = RX(self);
	PyObject *target, *speed = Py_None, *acc = Py_None, *first;
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;
	double t[9], rows[RTL_RTDE_REQ_PATH_MAX + 1][9], v, a;
	const double *t6;
	int wait = 1;
	Py_ssize_t n;

	if (!PyArg_ParseTupleAndKeywords(args, kw, linear ? "O|OOp:move_l" : "O|OOp:move_j",
					 linear ? kw_l : kw_j, &target, &speed, &acc, &wait) ||
	    py_parse_opt(speed, what, "speed", 0, true, vmax, &v) < 0 ||
	    py_parse_opt(acc, what, "acceleration", 0, true, amax, &a) < 0)
		return NULL;
	n = PySequence_Check(target) && !PyUnicode_Check(target) ? PySequence_Size(target) : -1;
	first = n > 0 ? PySequence_GetItem(target, 0) : NULL;
	if (first && PySequence_Check(first) && !PyUnicode_Check(first)) {
		/* a path: each row a waypoint, the last one the move's target */
		Py_DECREF(first);
		if (n > RTL_RTDE_REQ_PATH_MAX + 1)
			return PyErr_Format(PyExc_ValueError,
					    "%s: the path has %zd waypoints, at most %d", what, n,
					    RTL_RTDE_REQ_PATH_MAX + 1);
		/* every row checked before anything is written, then sent */
		for (Py_ssize_t i = 0; i < n; i++) {
			PyObject *row = PySequence_GetItem(target, i);
			double *w = rows[i];
			char name[32];
			int bad_row;

			snprintf(name, sizeof(name), "path[%zd]", i);
			bad_row = !row || py_parse_vec(row, what, name, 9, w) < 0;
			Py_XDECREF(row);
			if (bad_row)
				return NULL;
			if (!(w[6] > 0 && w[6] <= vmax) || !(w[7] > 0 && w[7] <= amax) ||
			    w[8] < 0) {
				char vs[32], as[32];

				return PyErr_Format(PyExc_ValueError,
						    "%s: %s must be [6 values, speed in (0, %s], "
						    "acceleration in (0, %s], blend >= 0]",
						    what, name, py_g(vs, vmax), py_g(as, amax));
			}
		}
		for (Py_ssize_t i = 0; i + 1 < n; i++) {
			const double *w = rows[i];

			if (rtl_rtde_req_path_add(&q, w, linear, w[6], w[7], w[8], &err) < 0)
				return bad(&err);
			if (!run(s, what, &q, true, s->timeout_ns))
				return NULL;
		}
		t6 = rows[n - 1];
		if ((linear ? rtl_rtde_req_move_l : rtl_rtde_req_move_j)(&q, t6, t6[6], t6[7],
									 &err) < 0 ||
		    rtl_rtde_req_run_path(&q, &err) < 0)
			return bad(&err);
		return move_end(s, what, &q, wait);
	}
	Py_XDECREF(first);
	PyErr_Clear();
	if (py_parse_vec(target, what, tname, 6, t) < 0)
		return NULL;
	if ((linear ? rtl_rtde_req_move_l : rtl_rtde_req_move_j)(&q, t, v, a, &err) < 0)
		return bad(&err);
	return move_end(s, what, &q, wait);
}

static PyObject *py_req_move_j(PyObject *self, PyObject *args, PyObject *kw)
{
	return move(self, args, kw, false);
}

static PyObject *py_req_move_l(PyObject *self, PyObject *args, PyObject *kw)
{
	return move(self, args, kw, true);
}

static PyObject *py_req_stop_move(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "deceleration", "wait", NULL };
	static const char what[] = "rtloop.Control.stop_move";
	PyObject *d = Py_None;
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;
	double dec;
	int wait = 1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:stop_move", kwlist, &d, &wait) ||
	    py_parse_opt(d, what, "deceleration", 0, true, 150, &dec) < 0)
		return NULL;
	if (rtl_rtde_req_stop_move(&q, dec, &err) < 0)
		return bad(&err);
	return move_end(RX(self), what, &q, wait);
}

/* A request without arguments, waited for. */
static PyObject *plain(PyObject *self, PyObject *args, PyObject *kw, enum rtl_rtde_req_kind kind,
		       const char *what)
{
	static char *kwlist[] = { NULL };
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;

	if (!PyArg_ParseTupleAndKeywords(args, kw, ":request", kwlist))
		return NULL;
	if (rtl_rtde_req_simple(&q, kind, &err) < 0)
		return bad(&err);
	return done_or_null(run(RX(self), what, &q, false, RX(self)->timeout_ns));
}

static PyObject *py_req_end_force_mode(PyObject *self, PyObject *args, PyObject *kw)
{
	return plain(self, args, kw, RTL_RTDE_REQ_END_FORCE_MODE, "rtloop.Control.end_force_mode");
}

static PyObject *py_req_teach_mode(PyObject *self, PyObject *args, PyObject *kw)
{
	return plain(self, args, kw, RTL_RTDE_REQ_TEACH_MODE, "rtloop.Control.teach_mode");
}

static PyObject *py_req_end_teach_mode(PyObject *self, PyObject *args, PyObject *kw)
{
	return plain(self, args, kw, RTL_RTDE_REQ_END_TEACH_MODE, "rtloop.Control.end_teach_mode");
}

static PyObject *py_req_zero_ft_sensor(PyObject *self, PyObject *args, PyObject *kw)
{
	return plain(self, args, kw, RTL_RTDE_REQ_ZERO_FT_SENSOR, "rtloop.Control.zero_ft_sensor");
}

static PyObject *py_req_force_mode(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "task_frame", "selection_vector", "wrench",	    "type",
				  "limits",	"damping",	    "gain_scaling", NULL };
	static const char what[] = "rtloop.Control.force_mode";
	struct py_rx *s = RX(self);
	PyObject *frame, *sel, *wrench, *limits, *damp = Py_None, *gain = Py_None;
	double f[6], w[6], l[6], sv[6], d, g;
	int type, seli[6];
	struct rtl_error err = { 0 };
	struct rtl_rtde_req ql, qm;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOiO|OO:force_mode", kwlist, &frame, &sel,
					 &wrench, &type, &limits, &damp, &gain) ||
	    py_parse_vec(frame, what, "task_frame", 6, f) < 0 ||
	    py_parse_vec(sel, what, "selection_vector", 6, sv) < 0 ||
	    py_parse_vec(wrench, what, "wrench", 6, w) < 0 ||
	    py_parse_vec(limits, what, "limits", 6, l) < 0 ||
	    py_parse_opt(damp, what, "damping", 0, false, 1, &d) < 0 ||
	    py_parse_opt(gain, what, "gain_scaling", 0, false, 2, &g) < 0)
		return NULL;
	for (int i = 0; i < 6; i++) {
		if (sv[i] != 0 && sv[i] != 1)
			return PyErr_Format(PyExc_ValueError,
					    "%s: selection_vector[%d] must be 0 or 1 (1: "
					    "compliant)",
					    what, i);
		seli[i] = (int)sv[i];
	}
	/* None is "the default": the builder's < 0 */
	if (rtl_rtde_req_force_limits(&ql, l, damp == Py_None ? -1 : d, gain == Py_None ? -1 : g,
				      &err) < 0 ||
	    rtl_rtde_req_force_mode(&qm, f, seli, w, type, &err) < 0)
		return bad(&err);
	if (!run(s, what, &ql, false, s->timeout_ns))
		return NULL;
	return done_or_null(run(s, what, &qm, false, s->timeout_ns));
}

static PyObject *py_req_set_payload(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "mass", "cog", NULL };
	static const char what[] = "rtloop.Control.set_payload";
	PyObject *m, *cog = Py_None;
	double mass, c[3] = { 0, 0, 0 };
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_payload", kwlist, &m, &cog) ||
	    py_parse_number(m, what, "mass", &mass) < 0 ||
	    (cog != Py_None && py_parse_vec(cog, what, "cog", 3, c) < 0))
		return NULL;
	if (rtl_rtde_req_set_payload(&q, mass, c, &err) < 0)
		return bad(&err);
	return done_or_null(run(RX(self), what, &q, false, RX(self)->timeout_ns));
}

/* set_tcp(pose), forward_kinematics(q): one vector of 6. */
static PyObject *vec6_call(PyObject *self, PyObject *args, PyObject *kw, const char *name,
			   bool result)
{
	static char *kw_pose[] = { "pose", NULL }, *kw_q[] = { "q", NULL };
	char what[64];
	PyObject *o;
	double v[6];
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;
	struct rtl_rtde_req_tracker *t;

	snprintf(what, sizeof(what), "rtloop.Control.%s", name);
	if (!PyArg_ParseTupleAndKeywords(args, kw, result ? "O:forward_kinematics" : "O:set_tcp",
					 result ? kw_q : kw_pose, &o) ||
	    py_parse_vec(o, what, result ? "q" : "pose", 6, v) < 0)
		return NULL;
	if ((result ? rtl_rtde_req_forward_kin(&q, v, &err) : rtl_rtde_req_set_tcp(&q, v, &err)) <
	    0)
		return bad(&err);
	t = run(RX(self), what, &q, false, RX(self)->timeout_ns);
	if (!t || !result)
		return done_or_null(t);
	return Py_BuildValue("[dddddd]", t->result[0], t->result[1], t->result[2], t->result[3],
			     t->result[4], t->result[5]);
}

static PyObject *py_req_set_tcp(PyObject *self, PyObject *args, PyObject *kw)
{
	return vec6_call(self, args, kw, "set_tcp", false);
}

static PyObject *py_req_forward_kinematics(PyObject *self, PyObject *args, PyObject *kw)
{
	return vec6_call(self, args, kw, "forward_kinematics", true);
}

static PyObject *py_req_inverse_kinematics(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "pose", "q_near", NULL };
	static const char what[] = "rtloop.Control.inverse_kinematics";
	PyObject *p, *near = Py_None;
	double pose[6], qn[6];
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;
	struct rtl_rtde_req_tracker *t;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:inverse_kinematics", kwlist, &p, &near) ||
	    py_parse_vec(p, what, "pose", 6, pose) < 0 ||
	    (near != Py_None && py_parse_vec(near, what, "q_near", 6, qn) < 0))
		return NULL;
	if (rtl_rtde_req_inverse_kin(&q, pose, near == Py_None ? NULL : qn, &err) < 0)
		return bad(&err);
	t = run(RX(self), what, &q, false, RX(self)->timeout_ns);
	if (!t)
		return NULL;
	return Py_BuildValue("[dddddd]", t->result[0], t->result[1], t->result[2], t->result[3],
			     t->result[4], t->result[5]);
}

static PyObject *py_req_move_until_contact(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "xd", "acceleration", "retract", "force", "wait", NULL };
	static const char what[] = "rtloop.Control.move_until_contact";
	PyObject *xd, *acc = Py_None, *ret = Py_None, *force = Py_None;
	double v[6], a, r, f;
	int wait = 1;
	struct rtl_error err = { 0 };
	struct rtl_rtde_req q;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOp:move_until_contact", kwlist, &xd, &acc,
					 &ret, &force, &wait) ||
	    py_parse_vec(xd, what, "xd", 6, v) < 0 ||
	    py_parse_opt(acc, what, "acceleration", 0, true, 150, &a) < 0 ||
	    py_parse_opt(ret, what, "retract", 0, false, 1, &r) < 0 ||
	    py_parse_opt(force, what, "force", 0, true, 1000, &f) < 0)
		return NULL;
	if (rtl_rtde_req_move_until_contact(&q, v, a, r, f, &err) < 0)
		return bad(&err);
	return move_end(RX(self), what, &q, wait);
}

PyMethodDef py_req_methods[] = {
	{ "move_j", METH(py_req_move_j), METH_VARARGS | METH_KEYWORDS,
	  "move_j($self, /, q, speed=None, acceleration=None, wait=True)\n--\n\nA "
	  "point-to-point move in joint space to q [rad]: the leading joint at speed [rad/s] "
	  "(None: 1.05) and acceleration [rad/s^2] (None: 1.4). q may be a path: rows of "
	  "[q0..q5, speed, acceleration, blend radius [m]]. wait=True blocks until the arm is "
	  "there (raising rtloop.Error with .reason on failure); wait=False returns an "
	  "rtloop.Request. ur_rtde: moveJ()." },
	{ "move_l", METH(py_req_move_l), METH_VARARGS | METH_KEYWORDS,
	  "move_l($self, /, pose, speed=None, acceleration=None, wait=True)\n--\n\nA "
	  "straight-line move of the TCP to pose (base frame [m, rotation vector rad]) at "
	  "speed [m/s] (None: 0.25) and acceleration [m/s^2] (None: 1.2); a path as move_j's. "
	  "ur_rtde: moveL()." },
	{ "stop_move", METH(py_req_stop_move), METH_VARARGS | METH_KEYWORDS,
	  "stop_move($self, /, deceleration=None, wait=True)\n--\n\nBring the running move to "
	  "rest. ur_rtde: stopJ(), stopL()." },
	{ "force_mode", METH(py_req_force_mode), METH_VARARGS | METH_KEYWORDS,
	  "force_mode($self, /, task_frame, selection_vector, wrench, type, limits, "
	  "damping=None, gain_scaling=None)\n--\n\nForce mode: compliant axes (selection 1) "
	  "seek the wrench [N, N m] in the task frame, at most limits[i] m/s (rad/s); the "
	  "others follow the stream (speedl in force mode). damping 0..1 (None: 0.005), "
	  "gain_scaling 0..2 (None: 1). ur_rtde: forceMode(), forceModeSetDamping(), "
	  "forceModeSetGainScaling()." },
	{ "end_force_mode", METH(py_req_end_force_mode), METH_VARARGS | METH_KEYWORDS,
	  "end_force_mode($self, /)\n--\n\nUr_rtde: forceModeStop()." },
	{ "teach_mode", METH(py_req_teach_mode), METH_VARARGS | METH_KEYWORDS,
	  "teach_mode($self, /)\n--\n\nFreedrive: the arm follows a hand on the tool. "
	  "ur_rtde: teachMode()." },
	{ "end_teach_mode", METH(py_req_end_teach_mode), METH_VARARGS | METH_KEYWORDS,
	  "end_teach_mode($self, /)\n--\n\nUr_rtde: endTeachMode()." },
	{ "zero_ft_sensor", METH(py_req_zero_ft_sensor), METH_VARARGS | METH_KEYWORDS,
	  "zero_ft_sensor($self, /)\n--\n\nThe force sensor reads zero at the current load. "
	  "ur_rtde: zeroFtSensor()." },
	{ "set_payload", METH(py_req_set_payload), METH_VARARGS | METH_KEYWORDS,
	  "set_payload($self, /, mass, cog=None)\n--\n\nMass [kg] 0..1000, centre of gravity "
	  "[m] in the flange frame (None: the flange). ur_rtde: setPayload()." },
	{ "set_tcp", METH(py_req_set_tcp), METH_VARARGS | METH_KEYWORDS,
	  "set_tcp($self, /, pose)\n--\n\nThe TCP in the flange frame. ur_rtde: setTcp()." },
	{ "forward_kinematics", METH(py_req_forward_kinematics), METH_VARARGS | METH_KEYWORDS,
	  "forward_kinematics($self, /, q)\n--\n\nThe TCP pose at joints q, by the "
	  "controller's solver. ur_rtde: getForwardKinematics().\n\nReturns: list." },
	{ "inverse_kinematics", METH(py_req_inverse_kinematics), METH_VARARGS | METH_KEYWORDS,
	  "inverse_kinematics($self, /, pose, q_near=None)\n--\n\nThe joint solution for pose "
	  "closest to q_near (None: the current joints); rtloop.Error with .reason 'no "
	  "solution' when there is none. ur_rtde: getInverseKinematics().\n\nReturns: list." },
	{ "move_until_contact", METH(py_req_move_until_contact), METH_VARARGS | METH_KEYWORDS,
	  "move_until_contact($self, /, xd, acceleration=None, retract=None, force=None, "
	  "wait=True)\n--\n\nMove with the TCP speed xd (base frame) until the tool meets "
	  "force [N] (None: 10), stop, and retract [m] (None: 0) back along the way. ur_rtde: "
	  "moveUntilContact()." },
	{ NULL, NULL, 0, NULL },
};
