// SPDX-License-Identifier: MIT
/*
 * rtloop.Motion: the motion API from Python (_motion.h says how the C step
 * and Python share the work). This file is the object and its commands:
 * the arguments, checked before anything is queued (a command the step
 * would refuse never reaches it, and nothing non-finite does); the open,
 * whose connect runs without the GIL; and every way the object ends, each
 * of which is the loop's stop at exit (the safe package, then the wait for
 * rest). The reads and the figures are _motion_read.c's.
 */
#include "_motion.h"
#include "_loop.h"
#include "_receive.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if PY_HAVE_DRFL
#include <rtloop/drfl_real.h>
#endif
#include <rtloop/mem.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/time.h>

#define METH(f) ((PyCFunction)(void (*)(void))(f))
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* Room for the reading methods (_motion_read.c) beside these. */
#define READ_METHODS 24

/* ---- arguments ----------------------------------------------------------------------- */

/* An acceleration (or a servo's end velocity) per axis: None (AUTO on every
 * axis), a number for all six, or six numbers; each > 0. */
static int parse_per_axis(PyObject *o, const char *what, const char *name, double out[6])
{
	if (!o || o == Py_None) {
		for (int i = 0; i < 6; i++)
			out[i] = RTL_MOTION_ACC_AUTO;
		return 0;
	}
	if (PyNumber_Check(o) && !PySequence_Check(o)) {
		if (py_parse_number(o, what, name, &out[0]) < 0)
			return -1;
		for (int i = 1; i < 6; i++)
			out[i] = out[0];
	} else if (py_parse_vec(o, what, name, 6, out) < 0) {
		return -1;
	}
	for (int i = 0; i < 6; i++) {
		char buf[32];

		if (out[i] <= 0) {
			PyErr_Format(PyExc_ValueError,
				     "%s: %s must be > 0 on every axis (None: derived from the "
				     "target), got %s on axis %d",
				     what, name, py_g(buf, out[i]), i);
			return -1;
		}
	}
	return 0;
}

/* A servo segment's end velocity or acceleration: None is 0 on every axis
 * (the segment ends at rest). */
static int parse_end(PyObject *o, const char *what, const char *name, double out[6])
{
	if (!o || o == Py_None) {
		memset(out, 0, 6 * sizeof(double));
		return 0;
	}
	return py_parse_vec(o, what, name, 6, out);
}

/* target_time [s]: None is one period; else in [0, RTL_MOTION_MAX_TARGET_TIME]. */
static int parse_time(struct py_motion *s, PyObject *o, const char *what, double *out)
{
	if (!o || o == Py_None) {
		*out = s->period_s;
		return 0;
	}
	if (py_parse_number(o, what, "time", out) < 0)
		return -1;
	if (*out < 0 || *out > RTL_MOTION_MAX_TARGET_TIME) {
		char buf[32];

		PyErr_Format(PyExc_ValueError,
			     "%s: time must be in [0, %s] s (None: one control period), got %R",
			     what, py_g(buf, RTL_MOTION_MAX_TARGET_TIME), o);
		return -1;
	}
	return 0;
}

/* A limit: > 0, math.inf removes it. */
static int parse_limit(PyObject *o, const char *what, const char *name, double *out)
{
	if (PyBool_Check(o) || !PyNumber_Check(o) || PyComplex_Check(o) || PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: %s must be a number, not %.80s", what, name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyFloat_AsDouble(o);
	if (*out == -1.0 && PyErr_Occurred())
		return -1;
	if (isnan(*out) || *out <= 0) {
		PyErr_Format(PyExc_ValueError, "%s: %s must be > 0 (math.inf: no limit), got %R",
			     what, name, o);
		return -1;
	}
	return 0;
}

/* ---- the object's state ----------------------------------------------------------------- */

void py_motion_raise_ended(struct py_motion *s, const char *what)
{
	char msg[RTL_ERROR_MSG + 128];

	snprintf(msg, sizeof(msg), "%s: the loop has ended: %s", what, s->end_msg);
	py_raise(s->end_code, msg);
}

static struct rtl_transport *base_of(struct py_motion *s)
{
	if (s->udp)
		return rtl_udp_transport_base(s->udp);
	if (s->drfl)
		return rtl_drfl_transport_base(s->drfl);
	return rtl_rtde_transport_base(s->rtde);
}

/* The loop stopped by itself (the connection): join it, keep why. */
void py_motion_loop_ended(struct py_motion *s)
{
	struct rtl_transport *base = base_of(s);
	const char *why = NULL;
	int code = py_join_nogil(s->loop);

	/* The rx thread has ended: the transport may be read. */
	if (base->ops->error)
		why = base->ops->error(base);
	snprintf(s->end_msg, sizeof(s->end_msg), "%s",
		 why && why[0] ? why : "the connection to the controller was lost");
	s->end_code = code ? code : -ECONNRESET;
	s->life.ended = true;
}

/* 0 when @s may be used now: open, not ended, no other thread inside. */
int py_motion_usable(struct py_motion *s, const char *what, bool reader)
{
	if (!s->life.open) {
		PyErr_Format(PyExc_ValueError, "%s: the connection is closed", what);
		return -1;
	}
	if (reader && (s->life.busy || s->life.closing)) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "%s: another thread is reading this connection: read from one thread "
			 "at a time (commands may come from any)",
			 what);
		py_raise(-EBUSY, msg);
		return -1;
	}
	if (!s->life.ended && !s->life.busy && rtl_loop_stopping(s->loop)) {
		/* The join lets the GIL go: no other thread enters meanwhile. */
		s->life.busy = 1;
		py_motion_loop_ended(s);
		s->life.busy = 0;
	}
	if (s->life.ended) {
		py_motion_raise_ended(s, what);
		return -1;
	}
	return 0;
}

/* ---- commands ------------------------------------------------------------------------- */

static PyObject *queue(struct py_motion *s, const struct py_mcmd *c, const char *what)
{
	bool setting = c->op >= PY_MOP_VELX;

	if (py_motion_usable(s, what, false) < 0)
		return NULL;
	if (!rtl_ring_push_sz(s->rt->cmds, c, sizeof(*c))) {
		char msg[256];

		s->n.queue_full++;
		snprintf(msg, sizeof(msg),
			 "%s: %d commands wait for the control step, which takes every one "
			 "each period (%.3f ms): give fewer than that many per period",
			 what, PY_MOTION_CMD_SLOTS, s->period_s * 1e3);
		return py_raise(-EAGAIN, msg);
	}
	if (setting)
		s->n.settings++;
	else
		s->n.commands++;
	Py_RETURN_NONE;
}

/* speedl / speedj: the velocity, acc per axis, the ramp's time. */
static PyObject *speed(PyObject *self, PyObject *args, PyObject *kw, enum py_mop op)
{
	static char *kwlist[] = { "vel", "acc", "time", NULL };
	const char *what = op == PY_MOP_SPEEDL ? "rtloop.Motion.speedl" : "rtloop.Motion.speedj";
	struct py_motion *s = MO(self);
	struct py_mcmd c = { .op = op };
	PyObject *vel, *acc = Py_None, *time = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kwlist, &vel, &acc, &time) ||
	    py_parse_vec(vel, what, "vel", 6, c.vel) < 0 ||
	    parse_per_axis(acc, what, "acc", c.acc) < 0 || parse_time(s, time, what, &c.time) < 0)
		return NULL;
	return queue(s, &c, what);
}

static PyObject *m_speedl(PyObject *self, PyObject *args, PyObject *kw)
{
	return speed(self, args, kw, PY_MOP_SPEEDL);
}

static PyObject *m_speedj(PyObject *self, PyObject *args, PyObject *kw)
{
	return speed(self, args, kw, PY_MOP_SPEEDJ);
}

/* servol / servoj: the target, the segment's end velocity and acc, its time. */
static PyObject *servo(PyObject *self, PyObject *args, PyObject *kw, enum py_mop op)
{
	static char *kwlist[] = { "pos", "vel", "acc", "time", NULL };
	const char *what = op == PY_MOP_SERVOL ? "rtloop.Motion.servol" : "rtloop.Motion.servoj";
	struct py_motion *s = MO(self);
	struct py_mcmd c = { .op = op };
	PyObject *pos, *vel = Py_None, *acc = Py_None, *time = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO", kwlist, &pos, &vel, &acc, &time) ||
	    py_parse_vec(pos, what, "pos", 6, c.pos) < 0 ||
	    parse_end(vel, what, "vel", c.vel) < 0 || parse_end(acc, what, "acc", c.acc) < 0 ||
	    parse_time(s, time, what, &c.time) < 0)
		return NULL;
	return queue(s, &c, what);
}

static PyObject *m_servol(PyObject *self, PyObject *args, PyObject *kw)
{
	return servo(self, args, kw, PY_MOP_SERVOL);
}

static PyObject *m_servoj(PyObject *self, PyObject *args, PyObject *kw)
{
	return servo(self, args, kw, PY_MOP_SERVOJ);
}

static PyObject *m_stop(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dec", NULL };
	static const char what[] = "rtloop.Motion.stop";
	struct py_mcmd c = { .op = PY_MOP_STOP, .acc = { RTL_MOTION_ACC_AUTO } };
	PyObject *dec = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &dec))
		return NULL;
	if (dec != Py_None && py_parse_opt(dec, what, "dec", 0, true, 1e6, &c.acc[0]) < 0)
		return NULL;
	return queue(MO(self), &c, what);
}

/* set_velx / set_accx: the translation's limit, the rotation's (None:
 * derived from it). */
static PyObject *limit_x(PyObject *self, PyObject *args, PyObject *kw, enum py_mop op)
{
	static char *kwlist[] = { "trans", "rot", NULL };
	const char *what = op == PY_MOP_VELX ? "rtloop.Motion.set_velx" : "rtloop.Motion.set_accx";
	struct py_mcmd c = { .op = op };
	double *v = op == PY_MOP_VELX ? c.vel : c.acc;
	PyObject *trans, *rot = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &trans, &rot) ||
	    parse_limit(trans, what, "trans", &v[0]) < 0)
		return NULL;
	v[1] = RTL_MOTION_ACC_AUTO;
	if (rot != Py_None && parse_limit(rot, what, "rot", &v[1]) < 0)
		return NULL;
	return queue(MO(self), &c, what);
}

static PyObject *m_set_velx(PyObject *self, PyObject *args, PyObject *kw)
{
	return limit_x(self, args, kw, PY_MOP_VELX);
}

static PyObject *m_set_accx(PyObject *self, PyObject *args, PyObject *kw)
{
	return limit_x(self, args, kw, PY_MOP_ACCX);
}

/* set_velj / set_accj: six joint limits. */
static PyObject *limit_j(PyObject *self, PyObject *args, PyObject *kw, enum py_mop op)
{
	static char *kwlist[] = { "limits", NULL };
	const char *what = op == PY_MOP_VELJ ? "rtloop.Motion.set_velj" : "rtloop.Motion.set_accj";
	struct py_mcmd c = { .op = op };
	double *v = op == PY_MOP_VELJ ? c.vel : c.acc;
	PyObject *o, *seq;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O", kwlist, &o))
		return NULL;
	if (PyUnicode_Check(o) || !PySequence_Check(o) || PySequence_Size(o) != 6) {
		PyErr_Format(PyExc_ValueError, "%s: limits must be 6 numbers, one per joint", what);
		return NULL;
	}
	seq = PySequence_Fast(o, "limits");
	for (Py_ssize_t i = 0; seq && i < 6; i++) {
		char name[32];

		snprintf(name, sizeof(name), "limits[%zd]", i);
		if (parse_limit(PySequence_Fast_GET_ITEM(seq, i), what, name, &v[i]) < 0)
			Py_CLEAR(seq);
	}
	if (!seq)
		return NULL;
	Py_DECREF(seq);
	return queue(MO(self), &c, what);
}

static PyObject *m_set_velj(PyObject *self, PyObject *args, PyObject *kw)
{
	return limit_j(self, args, kw, PY_MOP_VELJ);
}

static PyObject *m_set_accj(PyObject *self, PyObject *args, PyObject *kw)
{
	return limit_j(self, args, kw, PY_MOP_ACCJ);
}

/* ---- opening and closing ------------------------------------------------------------------ */

/* Free the C side: the loop first (its thread steps the motion). */
static void free_c(struct py_motion *s)
{
	rtl_loop_destroy(s->loop);
	s->loop = NULL;
	/* After the loop: it detaches, leaving its final figures. */
	if (s->rt)
		rtl_telemetry_destroy(s->rt->tel);
	if (s->rt) {
		rtl_motion_destroy(s->rt->motion);
		rtl_ring_destroy(s->rt->cmds);
		rtl_ring_destroy(s->rt->events);
		rtl_mem_free(s->rt, sizeof(*s->rt));
		s->rt = NULL;
	}
	rtl_udp_transport_destroy(s->udp);
	s->udp = NULL;
	rtl_rtde_transport_destroy(s->rtde);
	s->rtde = NULL;
	rtl_drfl_transport_destroy(s->drfl);
	s->drfl = NULL;
#if PY_HAVE_DRFL
	if (s->drfl_api_made)
		rtl_drfl_api_real_free(&s->drfl_api);
#endif
	s->drfl_api_made = false;
}

/*
 * The stop at exit (the loop's: the safe package, then the wait for rest,
 * bounded by stop_timeout), the final figures kept when @keep, the C side
 * freed. A reader in another thread sees `closing` within a wait slice.
 */
static void motion_close(struct py_motion *s, bool keep)
{
	struct py_mcmd c;

	if (!py_life_close(&s->life, s->loop))
		return;
	/* The loop's threads have ended: the rings' other sides are ours. */
	while (rtl_ring_pop_sz(s->rt->cmds, &c, sizeof(c)))
		s->n.unapplied++;
	if (keep) {
		PyObject *type, *value, *tb;

		PyErr_Fetch(&type, &value, &tb);
		s->final_stats = py_motion_live_stats(s);
		s->final_hists = py_loop_hists(s->loop);
		s->final_report = py_loop_report(s->loop);
		if (!s->final_stats || !s->final_hists || !s->final_report)
			PyErr_Clear();
		PyErr_Restore(type, value, tb);
	}
	free_c(s);
	py_open_unlink(&s->node);
	py_life_closed(&s->life);
}

static void close_at_exit(PyObject *self)
{
	motion_close(MO(self), true);
}

struct open_opts {
	enum py_mt kind;
	const char *host;
	uint16_t port;
	int64_t timeout_ns, stop_timeout_ns, command_timeout_ns;
	int watchdog_periods, loss_count;
	const char *telemetry; /* NULL: none */
};

/* The transport of @o, made (not connected): 0, or -errno with @err. */
static int make_transport(struct py_motion *s, const struct open_opts *o, struct rtl_error *err,
			  struct rtl_transport **base)
{
	int ret;

	if (o->kind == PY_MT_UDP) {
		struct rtl_udp_transport_config tc = { .size = sizeof(tc),
						       .host = o->host,
						       .port = o->port,
						       .connect_timeout_ns = o->timeout_ns };

		ret = rtl_udp_transport_create(&s->udp, &tc, err);
		*base = rtl_udp_transport_base(s->udp);
		return ret;
	}
	if (o->kind == PY_MT_RTDE) {
		struct rtl_rtde_client_config cc = { .size = sizeof(cc),
						     .outputs = py_motion_rtde_outputs,
						     .inputs = { RTL_RTDE_CMD_RECIPE } };
		struct rtl_rtde_transport_config tc = { .size = sizeof(tc),
							.host = o->host,
							.port = o->port,
							.connect_timeout_ns = o->timeout_ns,
							.client = &cc,
							.connected = py_motion_rtde_connected,
							.safe = py_motion_rtde_safe,
							.user = s->rt };

		ret = rtl_rtde_transport_create(&s->rtde, &tc, err);
		*base = rtl_rtde_transport_base(s->rtde);
		return ret;
	}
#if PY_HAVE_DRFL
	{
		struct rtl_drfl_config dc = { .size = sizeof(dc),
					      .host = o->host,
					      .port = o->port };
		struct rtl_drfl_transport_config tc = { .size = sizeof(tc),
							.api = &s->drfl_api,
							.drfl = &dc,
							.connect_timeout_ns = o->timeout_ns };

		ret = rtl_drfl_api_real(&s->drfl_api);
		if (ret < 0)
			return rtl_error_set(err, ret, "the DRFL robot object: %s", strerror(-ret));
		s->drfl_api_made = true;
		ret = rtl_drfl_transport_create(&s->drfl, &tc, err);
		*base = rtl_drfl_transport_base(s->drfl);
		return ret;
	}
#else
	*base = NULL;
	return rtl_error_set(err, -ENOTSUP,
			     "transport='drfl': this rtloop was built without Doosan's DRFL "
			     "library; fix: install DRFL (libDRFL and DRFLEx.h) and rebuild with "
			     "meson setup -Ddrfl=enabled (or try it on rtde-sim --udp with "
			     "-Ddrfl_standin=true)");
#endif
}

/* The telemetry of @o->telemetry: the motion's signals, the transport's
 * counters and (UDP, DRFL) the command, (RTDE) the robot's status. */
static int make_telemetry(struct py_motion *s, const struct open_opts *o, struct rtl_error *err)
{
	struct rtl_telemetry_config tc = { .size = sizeof(tc), .name = o->telemetry };
	struct py_motion_rt *r = s->rt;
	char label[RTL_TELEMETRY_LABEL];
	int ret;

	snprintf(label, sizeof(label), "rtloop.Motion, %s %s:%u", py_mt_names[o->kind], o->host,
		 o->port);
	tc.label = label;
	ret = rtl_telemetry_create(&r->tel, &tc, err);
	if (ret < 0)
		return ret;
	if ((r->t_q = rtl_telemetry_signal(r->tel, "actual_q", 6, "rad", err)) < 0 ||
	    (r->t_qd = rtl_telemetry_signal(r->tel, "actual_qd", 6, "rad/s", err)) < 0 ||
	    (r->t_pose = rtl_telemetry_signal(r->tel, "actual_tcp_pose", 6, "m, rad", err)) < 0 ||
	    (r->t_speed = rtl_telemetry_signal(r->tel, "actual_tcp_speed", 6, "m/s, rad/s", err)) <
		    0 ||
	    (r->t_sp_vel = rtl_telemetry_signal(r->tel, "setpoint_vel", 6, "SI", err)) < 0 ||
	    (r->t_sp_pose = rtl_telemetry_signal(r->tel, "setpoint_pose", 6, "SI", err)) < 0 ||
	    (r->t_mode = rtl_telemetry_signal(r->tel, "motion_mode", 1, NULL, err)) < 0)
		return -EINVAL;
	if (s->udp)
		return rtl_udp_transport_telemetry(s->udp, r->tel, "robot_state", true, err);
	if (s->drfl)
		return rtl_drfl_transport_telemetry(s->drfl, r->tel, "robot_state", true, err);
	return rtl_rtde_transport_telemetry(s->rtde, r->tel, "robot_mode,safety_mode,runtime_state",
					    NULL, err);
}

static int motion_open(struct py_motion *s, const struct open_opts *o)
{
	struct rtl_loop_config lc = {
		.size = sizeof(lc),
		.step = py_motion_step,
		.rt_mode = RTL_LOOP_RT_DEGRADE,
		/* The step is short and the rx thread runs it: no hand-off. */
		.inline_step = true,
		.watchdog_periods = o->watchdog_periods,
		.stop_timeout_ns = o->stop_timeout_ns,
	};
	struct rtl_motion_config mc;
	struct rtl_error err = { 0 };
	struct rtl_transport *base = NULL;
	PyThreadState *ts;
	int ret;

	if (py_numpy_import() < 0)
		return -1;
	/* Zeroed and pre-faulted: the step never takes a page fault on it. */
	ret = rtl_mem_alloc((void **)&s->rt, sizeof(*s->rt), -1);
	if (ret < 0) {
		py_raise(ret, "rtloop.Motion: no memory for the step's state");
		return -1;
	}
	s->rt->kind = o->kind;
	s->kind = (int)o->kind;
	py_mpub_init(&s->rt->pub);
	s->timeout_ns = o->timeout_ns;
	snprintf(s->host, sizeof(s->host), "%s", o->host);
	s->port = o->port;
	/* Connecting may take the time-out: without the GIL. The object is
	 * not open yet, so no other call enters. */
	s->life.busy = 1;
	ts = PyEval_SaveThread();
	ret = rtl_ring_create(&s->rt->cmds, PY_MOTION_CMD_SLOTS, sizeof(struct py_mcmd), &err);
	if (ret >= 0)
		ret = rtl_ring_create(&s->rt->events, PY_MOTION_EVENT_SLOTS,
				      sizeof(struct rtl_motion_event_info), &err);
	if (ret >= 0)
		ret = make_transport(s, o, &err, &base);
	if (ret >= 0 && o->telemetry)
		ret = make_telemetry(s, o, &err);
	if (ret >= 0) {
		lc.transport = base;
		lc.telemetry = s->rt->tel;
		lc.user = s->rt;
		ret = rtl_loop_create(&s->loop, &lc, &err);
	}
	if (ret >= 0)
		ret = rtl_loop_start(s->loop, &err);
	if (ret >= 0) {
		/* The period is known once connected (RTDE: connected() set it). */
		if (o->kind != PY_MT_RTDE)
			s->rt->period_ns = base->period_ns;
		s->rt->horizon_s = (double)s->rt->period_ns / 1e9;
		s->period_s = s->rt->horizon_s;
		ret = rtl_motion_config_init(&mc, s->rt->period_ns);
		if (ret < 0)
			rtl_error_set(&err, ret, "the controller's period (%lld ns) is not usable",
				      (long long)s->rt->period_ns);
	}
	if (ret >= 0) {
		mc.timeout_ns = o->command_timeout_ns;
		mc.loss_count = o->loss_count;
		ret = rtl_motion_create(&s->rt->motion, &mc, &err);
	}
	if (ret >= 0) { /* release: the step sees the motion made before the flag */
		atomic_store_explicit(&s->rt->ready, true, memory_order_release);
	} else {
		rtl_loop_destroy(s->loop); /* the stop at exit, if it started */
		s->loop = NULL;
	}
	PyEval_RestoreThread(ts);
	s->life.busy = 0;
	if (ret < 0) {
		free_c(s);
		py_raise(ret, err.msg);
		return -1;
	}
	s->life.open = true;
	py_open_link(&s->node, (PyObject *)s, close_at_exit);
	return 0;
}

static int motion_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "host",
				  "port",
				  "transport",
				  "timeout",
				  "watchdog_periods",
				  "stop_timeout",
				  "command_timeout",
				  "loss_count",
				  "telemetry",
				  NULL };
	static const char what[] = "rtloop.Motion";
	static const double dflt_timeout = 2.0, dflt_stop = 2.0, dflt_cmd = 0.1;
	struct py_motion *s = MO(self);
	PyObject *host, *port = Py_None, *to = Py_None, *stop = Py_None, *cmd = Py_None,
			*loss = Py_None;
	const char *transport = "udp";
	struct open_opts o = { .watchdog_periods = 3, .loss_count = RTL_MOTION_LOSS_OFF };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$sOiOOOz:Motion", kwlist, &host, &port,
					 &transport, &to, &o.watchdog_periods, &stop, &cmd, &loss,
					 &o.telemetry))
		return -1;
	if (s->life.open || s->life.closed || s->life.busy) {
		py_raise(-EALREADY, "rtloop.Motion: this object was already opened; make a new one "
				    "to connect again");
		return -1;
	}
	for (o.kind = 0; o.kind < PY_MT_COUNT; o.kind++)
		if (strcmp(transport, py_mt_names[o.kind]) == 0)
			break;
	if (o.kind == PY_MT_COUNT) {
		PyErr_Format(PyExc_ValueError,
			     "%s: transport must be 'udp' (rtloop's 1 kHz stream), 'rtde' (a UR "
			     "controller running rtloop_control.script) or 'drfl' (Doosan's "
			     "library), got '%s'",
			     what, transport);
		return -1;
	}
	if (o.watchdog_periods < 1 || o.watchdog_periods > 128) {
		PyErr_Format(PyExc_ValueError, "%s: watchdog_periods must be 1..128, got %d", what,
			     o.watchdog_periods);
		return -1;
	}
	if (port == Py_None)
		o.port = o.kind == PY_MT_RTDE ? RTL_RTDE_PORT : RTL_UDP_DEFAULT_PORT;
	else if (py_parse_port(port, what, &o.port) < 0)
		return -1;
	if (loss != Py_None) {
		long v = PyLong_Check(loss) && !PyBool_Check(loss) ? PyLong_AsLong(loss) : 0;

		if (v < 1 || v > 100000) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError,
				     "%s: loss_count must be an int in 1..100000 (periods in a row "
				     "without a command that end the stream) or None (off), got %R",
				     what, loss);
			return -1;
		}
		o.loss_count = (int)v;
	}
	if (py_parse_host(host, what, &o.host) < 0 ||
	    py_parse_seconds(to, what, "timeout", 0.001, &dflt_timeout, &o.timeout_ns) < 0 ||
	    py_parse_seconds(stop, what, "stop_timeout", 0.001, &dflt_stop, &o.stop_timeout_ns) <
		    0 ||
	    py_parse_seconds(cmd, what, "command_timeout", 0.001, &dflt_cmd,
			     &o.command_timeout_ns) < 0)
		return -1;
	return motion_open(s, &o);
}

static PyObject *m_close(PyObject *self, PyObject *unused)
{
	(void)unused;
	motion_close(MO(self), true);
	Py_RETURN_NONE;
}

static PyObject *motion_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *self = PyType_GenericNew(type, args, kw);

	if (self)
		MO(self)->kind = -1; /* no transport until opened */
	return self;
}

static void motion_dealloc(PyObject *self)
{
	struct py_motion *s = MO(self);

	motion_close(s, false);
	Py_XDECREF(s->final_stats);
	Py_XDECREF(s->final_hists);
	Py_XDECREF(s->final_report);
	Py_TYPE(self)->tp_free(self);
}

static PyObject *p_closed(PyObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(!MO(self)->life.open);
}

static PyObject *p_transport(PyObject *self, void *unused)
{
	(void)unused;
	if (MO(self)->kind < 0)
		Py_RETURN_NONE;
	return PyUnicode_FromString(py_mt_names[MO(self)->kind]);
}

static PyObject *p_period(PyObject *self, void *unused)
{
	(void)unused;
	return PyFloat_FromDouble(MO(self)->period_s);
}

static PyMethodDef motion_methods[] = {
	{ "speedl", METH(m_speedl), METH_VARARGS | METH_KEYWORDS,
	  "speedl($self, /, vel, acc=None, time=None)\n--\n\nVelocity streaming of the TCP "
	  "(Doosan: speedl_rt): vel [m/s, rad/s] in the base frame, reached along a linear "
	  "ramp over time [s] (None: one period) with at most acc per axis [m/s^2, rad/s^2] "
	  "(None: derived from the ramp; a number: every axis), then held until the next "
	  "command or command_timeout." },
	{ "speedj", METH(m_speedj), METH_VARARGS | METH_KEYWORDS,
	  "speedj($self, /, vel, acc=None, time=None)\n--\n\nVelocity streaming of the joints "
	  "(Doosan: speedj_rt) [rad/s, rad/s^2], as speedl." },
	{ "servol", METH(m_servol), METH_VARARGS | METH_KEYWORDS,
	  "servol($self, /, pos, vel=None, acc=None, time=None)\n--\n\nPosition streaming of "
	  "the TCP (Doosan: servol_rt): to pos [m, rad] over time [s] (None: one period) "
	  "along a quintic that ends with vel and acc (None: at rest). UDP and DRFL take "
	  "Doosan's ZYZ Euler angles; RTDE has no servol (STOP goes instead)." },
	{ "servoj", METH(m_servoj), METH_VARARGS | METH_KEYWORDS,
	  "servoj($self, /, pos, vel=None, acc=None, time=None)\n--\n\nPosition streaming of "
	  "the joints (Doosan: servoj_rt) [rad], as servol." },
	{ "stop", METH(m_stop), METH_VARARGS | METH_KEYWORDS,
	  "stop($self, /, dec=None)\n--\n\nDecelerate every axis together to rest at dec "
	  "(None: the acceleration limits, or at once without them)." },
	{ "set_velx", METH(m_set_velx), METH_VARARGS | METH_KEYWORDS,
	  "set_velx($self, /, trans, rot=None)\n--\n\nThe TCP's velocity limit [m/s] and its "
	  "rotation's [rad/s] (None: trans / 0.1 m); math.inf removes one." },
	{ "set_accx", METH(m_set_accx), METH_VARARGS | METH_KEYWORDS,
	  "set_accx($self, /, trans, rot=None)\n--\n\nThe TCP's acceleration limits, as "
	  "set_velx." },
	{ "set_velj", METH(m_set_velj), METH_VARARGS | METH_KEYWORDS,
	  "set_velj($self, /, limits)\n--\n\nThe joints' velocity limits [rad/s], six." },
	{ "set_accj", METH(m_set_accj), METH_VARARGS | METH_KEYWORDS,
	  "set_accj($self, /, limits)\n--\n\nThe joints' acceleration limits [rad/s^2], six." },
	{ "close", m_close, METH_NOARGS,
	  "close($self, /)\n--\n\nStop the loop (the stop at exit) and free it; again: "
	  "nothing." },
	{ "__enter__", py_enter, METH_NOARGS, NULL },
	{ "__exit__", m_close, METH_VARARGS, NULL }, /* ignores its arguments */
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef motion_getset[] = {
	{ "closed", p_closed, NULL, "True once closed (or never opened).", NULL },
	{ "transport", p_transport, NULL, "'udp', 'rtde' or 'drfl'.", NULL },
	{ "period", p_period, NULL, "The control period [s].", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject motion_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Motion",
	.tp_basicsize = sizeof(struct py_motion),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Motion(host, port=None, *, transport='udp', timeout=2.0, watchdog_periods=3, "
		  "stop_timeout=2.0, command_timeout=0.1, loss_count=None, telemetry=None)\n--\n\n"
		  "The motion API (Doosan's speedl_rt family) over rtloop's UDP stream, RTDE or "
		  "DRFL: a C step runs the profile, the time-out and the limits every period; "
		  "Python gives the newest command at any rate. Every exit stops the arm. "
		  "docs/python.md.",
	.tp_new = motion_new,
	.tp_init = motion_init,
	.tp_dealloc = motion_dealloc,
	.tp_getset = motion_getset,
};

int py_motion_register(PyObject *module)
{
	PyObject *t;
	int ret;

	static PyMethodDef all[N_OF(motion_methods) + READ_METHODS];
	size_t n = 0;

	for (size_t i = 0; motion_methods[i].ml_name; i++)
		all[n++] = motion_methods[i];
	for (size_t i = 0; py_motion_read_methods[i].ml_name && n + 1 < N_OF(all); i++)
		all[n++] = py_motion_read_methods[i];
	motion_type.tp_methods = all;
	if (PyType_Ready(&motion_type) < 0)
		return -1;
	t = Py_BuildValue("(ss)", "udp", "rtde");
	if (PY_HAVE_DRFL) {
		Py_XDECREF(t);
		t = Py_BuildValue("(sss)", "udp", "rtde", "drfl");
	}
	ret = PyModule_AddObjectRef(module, "Motion", (PyObject *)&motion_type) < 0 || !t ||
			      PyModule_AddObjectRef(module, "TRANSPORTS", t) < 0
		      ? -1
		      : 0;
	Py_XDECREF(t);
	return ret;
}
