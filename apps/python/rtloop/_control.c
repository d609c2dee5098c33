// SPDX-License-Identifier: MIT
/*
 * rtloop.Control: slow control loops from Python, a subclass of
 * rtloop.Receive (_receive.c) whose loop also has rtloop's command recipe
 * (RTL_RTDE_CMD_RECIPE, the register layout of <rtloop/rtde_cmd.h> that
 * rtloop_control.script executes on the controller).
 *
 * The approach: the external-loop API. read() takes the newest frame and
 * starts a step (rtl_loop_read()); each command method (speedj, speedl,
 * servoj, stop) checks its arguments, writes the whole command into the
 * registers and sends it at once (rtl_loop_write(): checked, coalesced,
 * non-blocking, as the loop's worker would), which ends the step; write()
 * sends what the registers hold. What guards a Python loop that is late or
 * dies is rtloop's C: the loop's watchdog sends the safe set (mode STOP)
 * when a frame waits watchdog_periods periods for a step and discards the
 * late step's commands (stale); every end of the loop (close(), __exit__,
 * the atexit hook, the dealloc, a lost connection) sends the stop and waits,
 * bounded, for rest. The heartbeat register is the transport's.
 *
 * Non-finite arguments are refused here with ValueError, before anything
 * is written: nothing non-finite reaches the registers, let alone the wire
 * (where the transport's check would refuse it again).
 */
#include "_receive.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#define RX(o) ((struct py_rx *)(o))
#define METH(f) ((PyCFunction)(void (*)(void))(f))

/* ---- arguments ----------------------------------------------------------------------- */

int py_parse_number(PyObject *o, const char *what, const char *name, double *out)
{
	if (PyBool_Check(o) || !PyNumber_Check(o) || PyComplex_Check(o) || PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: %s must be a number, not %.80s", what, name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyFloat_AsDouble(o);
	if (*out == -1.0 && PyErr_Occurred())
		return -1;
	if (!isfinite(*out)) {
		PyErr_Format(PyExc_ValueError, "%s: %s is %R: commands must be finite", what, name,
			     o);
		return -1;
	}
	return 0;
}

/* @n finite numbers from any sequence (list, tuple, NumPy array). */
int py_parse_vec(PyObject *o, const char *what, const char *name, Py_ssize_t n_want, double *out)
{
	PyObject *seq;
	Py_ssize_t n;

	if (PyUnicode_Check(o) || PyBytes_Check(o) || !PySequence_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of %zd numbers, not %.80s",
			     what, name, n_want, Py_TYPE(o)->tp_name);
		return -1;
	}
	seq = PySequence_Fast(o, "a sequence of numbers");
	if (!seq)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n != n_want) {
		PyErr_Format(PyExc_ValueError, "%s: %s must have %zd values%s, got %zd", what, name,
			     n_want, n_want == 6 ? " (one per joint or axis)" : "", n);
		Py_DECREF(seq);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		char item[64];

		snprintf(item, sizeof(item), "%s[%zd]", name, i);
		if (py_parse_number(PySequence_Fast_GET_ITEM(seq, i), what, item, &out[i]) < 0) {
			Py_DECREF(seq);
			return -1;
		}
	}
	Py_DECREF(seq);
	return 0;
}

/* An optional number in [@lo, @hi] (@lo_open: above @lo); None: 0, which
 * the executor reads as its default. */
int py_parse_opt(PyObject *o, const char *what, const char *name, double lo, bool lo_open,
		 double hi, double *out)
{
	if (!o || o == Py_None) {
		*out = 0;
		return 0;
	}
	if (py_parse_number(o, what, name, out) < 0)
		return -1;
	if ((lo_open ? *out <= lo : *out < lo) || *out > hi) {
		char a[32], b[32];

		PyErr_Format(PyExc_ValueError,
			     "%s: %s must be in %s%s, %s], got %R (None: the "
			     "controller's default)",
			     what, name, lo_open ? "(" : "[", py_g(a, lo), py_g(b, hi), o);
		return -1;
	}
	return 0;
}

/* ---- sending ------------------------------------------------------------------------- */

int py_ctl_usable(struct py_rx *s, const char *what)
{
	if (py_rx_check(s, what) < 0)
		return -1;
	if (!s->control) {
		/* Receive.__init__() called on a Control: no command recipe. */
		PyErr_Format(PyExc_TypeError, "%s: this connection was opened as a Receive", what);
		return -1;
	}
	return s->life.ended ? py_rx_raise_ended(s, what) : 0;
}

/* rtl_loop_write(): the bytes sent, 0 when nothing went (unchanged,
 * stale, rejected, stopping, would block: the stats say which). */
PyObject *py_ctl_send(struct py_rx *s, const char *what)
{
	bool lone = !s->in_step;
	int ret = rtl_loop_write(s->loop);

	s->n.writes++;
	if (lone)
		s->n.lone_writes++;
	s->in_step = false;
	if (ret >= 0 || ret == -EAGAIN)
		return PyLong_FromLong(ret > 0 ? ret : 0);
	s->n.write_errors++;
	{
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: the command could not be sent", what);
		return py_raise(ret, msg);
	}
}

/* Write one whole command into the registers, then send it. */
static PyObject *command(struct py_rx *s, const char *what, int mode, const double p[6],
			 double accel, double time, double lookahead, double gain)
{
	struct rtl_rtde_frame *f = rtl_rtde_loop_commands(s->loop, 0);
	const struct py_cmd_handles *h = &s->cmd;
	bool ok = f && rtl_rtde_frame_set_int(f, h->mode, mode);

	for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
		ok = ok && rtl_rtde_frame_set_double(f, h->param[i], p ? p[i] : 0.0);
	ok = ok && rtl_rtde_frame_set_double(f, h->accel, accel) &&
	     rtl_rtde_frame_set_double(f, h->time, time) &&
	     rtl_rtde_frame_set_double(f, h->lookahead, lookahead) &&
	     rtl_rtde_frame_set_double(f, h->gain, gain);
	if (ok && h->echo) {
		/* The timestamp of the step's frame: the controller matches it
		 * with the package it sent (its round trip). */
		struct rtl_rtde_frame *e = rtl_rtde_loop_commands(s->loop, 1);

		ok = e && rtl_rtde_frame_set_double(e, h->echo_reg, s->ctrl_time);
	}
	if (!ok) {
		PyErr_Format(PyExc_SystemError,
			     "%s: the command registers are not in the input "
			     "recipe",
			     what);
		return NULL;
	}
	return py_ctl_send(s, what);
}

/* speedj(qd, acc=None) and speedl(xd, acc=None): a vector and an
 * acceleration, only the mode and the names differ. */
static PyObject *speed(PyObject *self, PyObject *args, PyObject *kw, int mode, const char *what,
		       const char *fmt, char **kwlist)
{
	struct py_rx *s = RX(self);
	PyObject *v, *acc = Py_None;
	double p[RTL_RTDE_CMD_NPARAM], a;

	if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &v, &acc) ||
	    py_parse_vec(v, what, kwlist[0], 6, p) < 0 ||
	    py_parse_opt(acc, what, "acc", 0, true, HUGE_VAL, &a) < 0 || py_ctl_usable(s, what) < 0)
		return NULL;
	return command(s, what, mode, p, a, 0, 0, 0);
}

static PyObject *m_speedj(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "qd", "acc", NULL };

	return speed(self, args, kw, RTL_RTDE_CMD_SPEEDJ, "rtloop.Control.speedj", "O|O:speedj",
		     kwlist);
}

static PyObject *m_speedl(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "xd", "acc", NULL };

	return speed(self, args, kw, RTL_RTDE_CMD_SPEEDL, "rtloop.Control.speedl", "O|O:speedl",
		     kwlist);
}

static PyObject *m_servoj(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "q", "time", "lookahead", "gain", NULL };
	static const char what[] = "rtloop.Control.servoj";
	struct py_rx *s = RX(self);
	PyObject *q, *time = Py_None, *la = Py_None, *gain = Py_None;
	double p[RTL_RTDE_CMD_NPARAM], t, l, g;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO:servoj", kwlist, &q, &time, &la, &gain) ||
	    py_parse_vec(q, what, "q", 6, p) < 0 ||
	    py_parse_opt(time, what, "time", 0, true, 1e3, &t) < 0 ||
	    py_parse_opt(la, what, "lookahead", RTL_RTDE_CMD_LOOKAHEAD_MIN, false,
			 RTL_RTDE_CMD_LOOKAHEAD_MAX, &l) < 0 ||
	    py_parse_opt(gain, what, "gain", RTL_RTDE_CMD_GAIN_MIN, false, RTL_RTDE_CMD_GAIN_MAX,
			 &g) < 0 ||
	    py_ctl_usable(s, what) < 0)
		return NULL;
	return command(s, what, RTL_RTDE_CMD_SERVOJ, p, 0, t, l, g);
}

static PyObject *m_stop(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "decel", NULL };
	static const char what[] = "rtloop.Control.stop";
	struct py_rx *s = RX(self);
	PyObject *decel = Py_None;
	double d;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:stop", kwlist, &decel) ||
	    py_parse_opt(decel, what, "decel", 0, true, HUGE_VAL, &d) < 0 ||
	    py_ctl_usable(s, what) < 0)
		return NULL;
	return command(s, what, RTL_RTDE_CMD_STOP, NULL, d, 0, 0, 0);
}

static PyObject *m_write(PyObject *self, PyObject *unused)
{
	static const char what[] = "rtloop.Control.write";
	struct py_rx *s = RX(self);

	(void)unused;
	if (py_ctl_usable(s, what) < 0)
		return NULL;
	return py_ctl_send(s, what);
}

static PyMethodDef control_methods[] = {
	{ "speedj", METH(m_speedj), METH_VARARGS | METH_KEYWORDS,
	  "speedj($self, /, qd, acc=None)\n--\n\nJoint velocities [rad/s] with the leading "
	  "joint's acceleration [rad/s^2] (None: 1.4); sent at once, ending the step. Returns "
	  "the bytes sent (0: nothing went; stats() says why). ur_rtde: speedJ().\n\nReturns: "
	  "int." },
	{ "speedl", METH(m_speedl), METH_VARARGS | METH_KEYWORDS,
	  "speedl($self, /, xd, acc=None)\n--\n\nA TCP twist in the base frame [m/s, rad/s] "
	  "with the tool acceleration [m/s^2] (None: 1.2). ur_rtde: speedL().\n\nReturns: int." },
	{ "servoj", METH(m_servoj), METH_VARARGS | METH_KEYWORDS,
	  "servoj($self, /, q, time=None, lookahead=None, gain=None)\n--\n\nA joint position "
	  "target [rad]; time [s] (None: the control period), lookahead 0.03..0.2 s (None: "
	  "0.1), gain 100..2000 (None: 300). ur_rtde: servoJ().\n\nReturns: int." },
	{ "stop", METH(m_stop), METH_VARARGS | METH_KEYWORDS,
	  "stop($self, /, decel=None)\n--\n\nDecelerate to rest (None: the default "
	  "deceleration). ur_rtde: speedStop(), servoStop(), stopJ(), stopL().\n\nReturns: "
	  "int." },
	{ "write", m_write, METH_NOARGS,
	  "write($self, /)\n--\n\nSend what the registers hold (the last command) and end the "
	  "step.\n\nReturns: int." },
	{ NULL, NULL, 0, NULL },
};

/* ---- the type ------------------------------------------------------------------------- */

static int control_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "host",	  "port",    "fields",
				  "frequency",	  "timeout", "watchdog_periods",
				  "stop_timeout", "echo",    NULL };
	static const char what[] = "rtloop.Control";
	static const double dflt_timeout = 2.0, dflt_stop = 2.0;
	struct py_rx *s = RX(self);
	PyObject *host, *port = NULL, *fields = NULL, *freq = NULL, *to = Py_None, *wd = NULL,
			*stop = Py_None;
	struct py_rx_opts o = { .control = true, .watchdog_periods = 3 };
	int echo = 0, ret;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOOOOp:Control", kwlist, &host, &port,
					 &fields, &freq, &to, &wd, &stop, &echo))
		return -1;
	o.echo = echo;
	if (wd) {
		long v;

		if (!PyLong_Check(wd) || PyBool_Check(wd)) {
			PyErr_Format(PyExc_TypeError,
				     "%s: watchdog_periods must be an int, not %.80s", what,
				     Py_TYPE(wd)->tp_name);
			return -1;
		}
		v = PyLong_AsLong(wd);
		if (v == -1 && PyErr_Occurred())
			PyErr_Clear();
		if (v < 1 || v > 128) {
			PyErr_Format(
				PyExc_ValueError,
				"%s: watchdog_periods must be 1..128 (periods a frame may wait "
				"for a step before the safe set goes out), got %R",
				what, wd);
			return -1;
		}
		o.watchdog_periods = (int)v;
	}
	if (py_rx_begin(s, what) < 0 || py_parse_host(host, what, &o.host) < 0 ||
	    py_parse_port(port, what, &o.port) < 0 ||
	    py_parse_frequency(freq, what, &o.frequency) < 0 ||
	    py_parse_seconds(to, what, "timeout", 0.001, &dflt_timeout, &o.timeout_ns) < 0 ||
	    py_parse_seconds(stop, what, "stop_timeout", 0.001, &dflt_stop, &o.stop_timeout_ns) <
		    0 ||
	    py_parse_fields(fields, what, &o.fields) < 0)
		return -1;
	ret = py_rx_open(s, &o);
	Py_DECREF(o.fields);
	return ret;
}

static PyTypeObject control_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Control",
	.tp_basicsize = sizeof(struct py_rx),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc =
		"Control(host, port=30004, *, fields=None, frequency=None, timeout=2.0, "
		"watchdog_periods=3, stop_timeout=2.0, echo=False)\n--\n\nA control loop from "
		"Python over RTDE with rtloop's command registers (ur_rtde: RTDEControlInterface): "
		"read() starts a step, a command ends it. rtloop's watchdog sends the safe set "
		"when "
		"a step is late; every exit stops the arm. docs/python.md.",
	.tp_new = PyType_GenericNew,
	.tp_init = control_init,
};

int py_control_register(PyObject *module)
{
	control_type.tp_base = &py_receive_type;
	/* the streaming commands, then the requests (_request.c) */
	static PyMethodDef all[sizeof(control_methods) / sizeof(control_methods[0]) + 16];
	size_t n = 0;

	for (size_t i = 0; control_methods[i].ml_name; i++)
		all[n++] = control_methods[i];
	for (size_t i = 0; py_req_methods[i].ml_name && n + 1 < sizeof(all) / sizeof(all[0]); i++)
		all[n++] = py_req_methods[i];
	control_type.tp_methods = all;
	if (py_request_register(module) < 0)
		return -1;
	if (PyType_Ready(&control_type) < 0)
		return -1;
	return PyModule_AddType(module, &control_type);
}
