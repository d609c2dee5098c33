// SPDX-License-Identifier: MIT
/*
 * rtloop.Motion's reads (_motion.h): the newest state the step published,
 * taken from the triple buffer (waiting on its bell with the GIL
 * released), as Python objects in SI units (state(), the getters) or as
 * the UDP state came (raw()); the motion's events; and the figures: the
 * loop's counters with the transport's, the motion's and the binding's.
 */
#include "_motion.h"
#include "_loop.h"
#include "_receive.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/time.h>

/* The longest a wait runs without looking at Python's signals and the loop. */
#define WAIT_SLICE_NS (50 * RTL_NS_PER_MS)
#define METH(f) ((PyCFunction)(void (*)(void))(f))
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- what the step published ---------------------------------------------------------- */

/* Take a publication newer than the last one, waiting up to @timeout_ns
 * (the GIL released): 1 taken, 0 none in time, -1 exception set. */
static int take(struct py_motion *s, int64_t timeout_ns, const char *what)
{
	int64_t deadline = rtl_time_now() + timeout_ns;

	if (py_motion_usable(s, what, true) < 0)
		return -1;
	s->life.busy = 1;
	for (;;) {
		int64_t left = deadline - rtl_time_now();
		PyThreadState *ts;
		int got;

		ts = PyEval_SaveThread();
		got = py_mpub_wait(&s->rt->pub, left < WAIT_SLICE_NS ? left : WAIT_SLICE_NS);
		PyEval_RestoreThread(ts);
		if (got) {
			s->have = true;
			s->life.busy = 0;
			return 1;
		}
		if (s->life.closing) {
			s->life.busy = 0;
			return 0;
		}
		if (rtl_loop_stopping(s->loop)) {
			/* Still busy while the join lets the GIL go. */
			py_motion_loop_ended(s);
			s->life.busy = 0;
			py_motion_raise_ended(s, what);
			return -1;
		}
		if (rtl_time_now() >= deadline) {
			s->life.busy = 0;
			return 0;
		}
		if (PyErr_CheckSignals() < 0) {
			s->life.busy = 0;
			return -1;
		}
	}
}

/* The newest state: one published since the last take, else the one held,
 * else the first (waiting up to the time-out). 0, or -1 with the exception. */
static int current(struct py_motion *s, const char *what)
{
	int r;

	if (py_motion_usable(s, what, true) < 0)
		return -1;
	if (py_mpub_take(&s->rt->pub)) {
		s->have = true;
		return 0;
	}
	if (s->have)
		return 0;
	r = take(s, s->timeout_ns, what);
	if (r == 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: no state from the controller within %.3f s", what,
			 (double)s->timeout_ns / 1e9);
		py_raise(-ETIMEDOUT, msg);
	}
	return r > 0 ? 0 : -1;
}

static PyObject *vec6(const double *v)
{
	return py_array(v, 6, PY_F64);
}

/* The state taken, as a dict (SI units). */
static PyObject *state_dict(struct py_motion *s)
{
	static const char *const status_rtde[3] = { "robot_mode", "safety_mode", "runtime_state" };
	static const char *const status_udp[3] = { "robot_mode", "robot_state", "control_mode" };
	const struct py_mstate *st = py_mpub_front(&s->rt->pub);
	const char *const *status = s->rt->kind == PY_MT_RTDE ? status_rtde : status_udp;
	PyObject *d = PyDict_New();
	int bad;

	if (!d)
		return NULL;
	bad = py_put_u64(d, "seq", st->seq) < 0 ||
	      py_put_obj(d, "time", PyFloat_FromDouble((double)st->now_ns / 1e9)) < 0 ||
	      py_put_obj(d, "rx_ns", PyLong_FromLongLong(st->rx_ns)) < 0 ||
	      py_put_u64(d, "ctrl_skipped", st->ctrl_skipped) < 0 ||
	      py_put_obj(d, "actual_q", vec6(st->m.joint_pos)) < 0 ||
	      py_put_obj(d, "actual_qd", vec6(st->m.joint_vel)) < 0 ||
	      py_put_obj(d, "actual_tcp_pose", vec6(st->m.tcp_pos)) < 0 ||
	      py_put_obj(d, "actual_tcp_speed", vec6(st->m.tcp_vel)) < 0 ||
	      py_put_obj(d, "actual_tcp_force", vec6(st->force)) < 0 ||
	      py_put_obj(d, "mode", PyUnicode_FromString(rtl_motion_mode_name(st->out.mode))) < 0 ||
	      py_put_obj(d, "setpoint_space",
			 PyUnicode_FromString(
				 st->out.space == RTL_MOTION_JOINT ? "joint" : "cartesian")) < 0 ||
	      py_put_obj(d, "setpoint_vel", vec6(st->out.vel)) < 0 ||
	      py_put_obj(d, "setpoint_pose", vec6(st->out.pose)) < 0 ||
	      py_put_obj(d, "setpoint_acc", vec6(st->out.acc)) < 0;
	for (int i = 0; !bad && i < 3; i++)
		bad = py_put_obj(d, status[i], PyLong_FromLong(st->status[i])) < 0;
	if (bad)
		Py_CLEAR(d);
	return d;
}

/* The UDP and DRFL state as it came (Doosan's units), every field. */
static PyObject *raw_dict(struct py_motion *s)
{
	const struct py_mstate *st = py_mpub_front(&s->rt->pub);
	size_t n;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);
	PyObject *d = PyDict_New();
	double v[256];

	for (size_t i = 0; d && i < n; i++) {
		unsigned k = rtl_udp_state_get(&st->raw, &f[i], v, 256);
		PyObject *o;

		if (f[i].count > 1)
			o = py_array(v, k, PY_F64);
		else if (f[i].type == RTL_UDP_F64 || f[i].type == RTL_UDP_F32)
			o = PyFloat_FromDouble(v[0]);
		else
			o = PyLong_FromDouble(v[0]);
		if (py_put_obj(d, f[i].name, o) < 0)
			Py_CLEAR(d);
	}
	return d;
}

static PyObject *m_read(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	static const char what[] = "rtloop.Motion.read";
	struct py_motion *s = MO(self);
	PyObject *to = Py_None;
	double dflt = (double)s->timeout_ns / 1e9;
	int64_t ns;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:read", kwlist, &to) ||
	    py_parse_seconds(to, what, "timeout", 0.0, &dflt, &ns) < 0)
		return NULL;
	r = take(s, ns, what);
	if (r < 0)
		return NULL;
	if (r == 0) {
		s->n.timeouts++;
		Py_RETURN_NONE;
	}
	s->n.reads++;
	return state_dict(s);
}

static PyObject *m_state(PyObject *self, PyObject *unused)
{
	(void)unused;
	if (current(MO(self), "rtloop.Motion.state") < 0)
		return NULL;
	return state_dict(MO(self));
}

static PyObject *m_raw(PyObject *self, PyObject *unused)
{
	struct py_motion *s = MO(self);

	(void)unused;
	if (s->life.open && s->rt->kind == PY_MT_RTDE) {
		PyErr_SetString(
			PyExc_ValueError,
			"rtloop.Motion.raw: the RTDE transport's state is state(); raw() is "
			"the UDP and DRFL state (Doosan's layout)");
		return NULL;
	}
	if (current(s, "rtloop.Motion.raw") < 0)
		return NULL;
	return raw_dict(s);
}

static PyObject *m_get(PyObject *self, PyObject *name)
{
	PyObject *d, *v;

	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError,
			     "rtloop.Motion.get: the name must be a str, not %.80s",
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	d = m_state(self, NULL);
	if (!d)
		return NULL;
	v = PyDict_GetItemWithError(d, name);
	if (!v && !PyErr_Occurred()) {
		PyObject *keys = PyDict_Keys(d);

		if (keys)
			PyErr_Format(PyExc_KeyError,
				     "rtloop.Motion.get: no '%U' in the state; its keys are %R "
				     "(raw() holds the UDP state's fields)",
				     name, keys);
		Py_XDECREF(keys);
	}
	Py_XINCREF(v);
	Py_DECREF(d);
	return v;
}

/* The getters: one vector of the newest state. */
#define GETTER(fn, member)                                              \
	static PyObject *g_##fn(PyObject *self, PyObject *unused)       \
	{                                                               \
		(void)unused;                                           \
		if (current(MO(self), "rtloop.Motion." #fn "") < 0)     \
			return NULL;                                    \
		return vec6(py_mpub_front(&MO(self)->rt->pub)->member); \
	}
GETTER(actual_q, m.joint_pos)
GETTER(actual_qd, m.joint_vel)
GETTER(actual_tcp_pose, m.tcp_pos)
GETTER(actual_tcp_speed, m.tcp_vel)
#undef GETTER

/* The motion's events since the last call, oldest first. */
static PyObject *m_events(PyObject *self, PyObject *unused)
{
	static const char *const limit[] = { "none", "velocity", "acceleration" };
	struct py_motion *s = MO(self);
	struct rtl_motion_event_info ev;
	PyObject *list;

	(void)unused;
	if (py_motion_usable(s, "rtloop.Motion.events", true) < 0)
		return NULL;
	list = PyList_New(0);
	while (list && rtl_ring_pop_sz(s->rt->events, &ev, sizeof(ev))) {
		PyObject *d = Py_BuildValue(
			"{s:s,s:d,s:s,s:s,s:s,s:i,s:d,s:d}", "type", rtl_motion_event_name(ev.type),
			"time", (double)ev.time_ns / 1e9, "mode", rtl_motion_mode_name(ev.mode),
			"space", ev.space == RTL_MOTION_JOINT ? "joint" : "cartesian", "limit",
			(unsigned)ev.limit < N_OF(limit) ? limit[ev.limit] : "?", "axis", ev.axis,
			"value", ev.value, "max", ev.max);

		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
		s->n.events++;
	}
	return list;
}

/* ---- figures ------------------------------------------------------------------------------ */

#define PY_FIELD(name, doc) RTL_STAT_FIELD(py_motion_counts, name, doc)
static const struct rtl_stat_field py_fields[] = { PY_MOTION_COUNTS(PY_FIELD) };
#undef PY_FIELD
#define STEP_FIELD(name, doc) RTL_STAT_FIELD(py_motion_step_counts, name, doc)
static const struct rtl_stat_field step_fields[] = { PY_MOTION_STEP_COUNTS(STEP_FIELD) };
#undef STEP_FIELD

static PyObject *transport_counters(struct py_motion *s)
{
	const struct rtl_stat_field *f;
	size_t n;

	if (s->udp) {
		struct rtl_udp_transport_counters c = { .size = sizeof(c) };

		rtl_udp_transport_stats(s->udp, &c);
		f = rtl_udp_transport_counter_fields(&n);
		return py_counters(&c, f, n);
	}
	if (s->drfl) {
		struct rtl_drfl_transport_counters c = { .size = sizeof(c) };

		rtl_drfl_transport_stats(s->drfl, &c);
		f = rtl_drfl_transport_counter_fields(&n);
		return py_counters(&c, f, n);
	} else {
		struct rtl_rtde_transport_counters c = { .size = sizeof(c) };

		rtl_rtde_transport_stats(s->rtde, &c);
		f = rtl_rtde_transport_counter_fields(&n);
		return py_counters(&c, f, n);
	}
}

static PyObject *motion_counters(struct py_motion *s)
{
	struct rtl_motion_counters c = { .size = sizeof(c) };
	const struct rtl_stat_field *f;
	PyObject *d, *ev;
	size_t n;

	if (s->rt->motion)
		rtl_motion_stats(s->rt->motion, &c);
	f = rtl_motion_counter_fields(&n);
	d = py_counters(&c, f, n);
	ev = PyDict_New();
	for (int i = 0; ev && i < RTL_MOTION_EV_COUNT; i++)
		if (py_put_u64(ev, rtl_motion_event_name((enum rtl_motion_event)i), c.events[i]) <
		    0)
			Py_CLEAR(ev);
	if (!d || py_put_obj(d, "events", ev) < 0)
		Py_CLEAR(d);
	return d;
}

static PyObject *python_counters(struct py_motion *s)
{
	struct py_motion_step_counts sc;
	PyObject *d = py_counters(&s->n, py_fields, N_OF(py_fields)), *more;

	/* The step's counters: relaxed loads, each exact. */
#define COPY(name, doc) sc.name = rtl_stat_get(&s->rt->c.name);
	PY_MOTION_STEP_COUNTS(COPY)
#undef COPY
	more = py_counters(&sc, step_fields, N_OF(step_fields));
	if (!d || !more || PyDict_Update(d, more) < 0 ||
	    py_put_u64(d, "events_dropped", rtl_ring_full_count(s->rt->events)) < 0)
		Py_CLEAR(d);
	Py_XDECREF(more);
	return d;
}

PyObject *py_motion_live_stats(struct py_motion *s)
{
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	const struct rtl_stat_field *lf;
	size_t ln;
	PyObject *d;

	lf = rtl_loop_counter_fields(&ln);
	rtl_loop_stats(s->loop, &ls);
	d = py_counters(&ls, lf, ln);
	if (!d || py_put_obj(d, "transport", transport_counters(s)) < 0 ||
	    py_put_obj(d, "motion", motion_counters(s)) < 0 ||
	    py_put_obj(d, "python", python_counters(s)) < 0)
		Py_CLEAR(d);
	return d;
}

/* After close() the final figures (copies), before it the live ones. */
static PyObject *figures(struct py_motion *s, PyObject *final,
			 PyObject *(*live)(struct py_motion *))
{
	if (!s->life.open) {
		if (!final) {
			PyErr_SetString(PyExc_ValueError,
					"rtloop.Motion: never opened: no figures to give");
			return NULL;
		}
		return PyDict_Check(final) ? PyDict_Copy(final) : Py_NewRef(final);
	}
	return live(s);
}

static PyObject *live_hists(struct py_motion *s)
{
	return py_loop_hists(s->loop);
}

static PyObject *live_report(struct py_motion *s)
{
	return py_loop_report(s->loop);
}

static PyObject *m_stats(PyObject *self, PyObject *unused)
{
	(void)unused;
	return figures(MO(self), MO(self)->final_stats, py_motion_live_stats);
}

static PyObject *m_histograms(PyObject *self, PyObject *unused)
{
	(void)unused;
	return figures(MO(self), MO(self)->final_hists, live_hists);
}

static PyObject *m_report(PyObject *self, PyObject *unused)
{
	(void)unused;
	return figures(MO(self), MO(self)->final_report, live_report);
}

PyMethodDef py_motion_read_methods[] = {
	{ "read", METH(m_read), METH_VARARGS | METH_KEYWORDS,
	  "read($self, /, timeout=None)\n--\n\nWait up to timeout s (None: the connection's) "
	  "for a state newer than the last one taken; None on time-out.\n\nReturns: dict or "
	  "None." },
	{ "state", m_state, METH_NOARGS,
	  "state($self, /)\n--\n\nThe newest state (SI units), without waiting once one "
	  "came.\n\nReturns: dict." },
	{ "raw", m_raw, METH_NOARGS,
	  "raw($self, /)\n--\n\nUDP and DRFL: the newest state as the controller sent it, "
	  "every field of Doosan's layout in its units.\n\nReturns: dict." },
	{ "get", m_get, METH_O,
	  "get($self, name, /)\n--\n\nOne value of the newest state.\n\nReturns: value." },
	{ "actual_q", g_actual_q, METH_NOARGS,
	  "actual_q($self, /)\n--\n\nThe joints [rad] of the newest state." },
	{ "actual_qd", g_actual_qd, METH_NOARGS,
	  "actual_qd($self, /)\n--\n\nThe joint velocities [rad/s]." },
	{ "actual_tcp_pose", g_actual_tcp_pose, METH_NOARGS,
	  "actual_tcp_pose($self, /)\n--\n\nThe TCP [m, rad; UDP and DRFL: ZYZ Euler, RTDE: a "
	  "rotation vector]." },
	{ "actual_tcp_speed", g_actual_tcp_speed, METH_NOARGS,
	  "actual_tcp_speed($self, /)\n--\n\nThe TCP's velocity [m/s, rad/s]." },
	{ "events", m_events, METH_NOARGS,
	  "events($self, /)\n--\n\nThe motion's events since the last call (timeout, loss, "
	  "limit, stopped), oldest first.\n\nReturns: list." },
	{ "stats", m_stats, METH_NOARGS,
	  "stats($self, /)\n--\n\nThe loop's counters, with 'transport', 'motion' and "
	  "'python' dicts. After close(): the final ones.\n\nReturns: dict." },
	{ "histograms", m_histograms, METH_NOARGS,
	  "histograms($self, /)\n--\n\nThe loop's histograms.\n\nReturns: dict." },
	{ "report", m_report, METH_NOARGS,
	  "report($self, /)\n--\n\nThe loop's text report.\n\nReturns: str." },
	{ NULL, NULL, 0, NULL },
};
