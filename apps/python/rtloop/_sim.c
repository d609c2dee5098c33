// SPDX-License-Identifier: MIT
/*
 * rtloop.Sim: rtde-sim in-process, for tests (docs/python.md "The simulator
 * for tests").
 *
 * Design
 * ------
 * - The settings are rtde-sim's own table (apps/rtde-sim/options.h): the
 *   faults= keys and the keyword options are its flag names, with '_' or
 *   '-'; each value is converted to the table's kind, range-checked by the
 *   table's setter and the whole checked by sim_setup_check(), the
 *   checks rtde-sim makes. All of it at construction: a bad setting is a
 *   ValueError (a value of the wrong type a TypeError) before anything runs.
 * - start() creates the server (it binds now, so the port is known when
 *   start() returns) and runs its loop, sim_server_run() or
 *   sim_udp_run(), on a C thread of ours that never touches Python:
 *   no GIL, every signal blocked (Python's handlers run on the main
 *   thread). Our thread, not sim_server_start()'s, so that the end of
 *   the loop (a duration elapsed) is known: `running`, wait().
 * - One mutex guards the server's lifetime: report() (with the GIL
 *   released) writes the live report under it, and the first stop() (or
 *   the deallocation) stops, joins, keeps the final report as text and
 *   destroys the server under it. A second stop() waits on the same mutex,
 *   so every stop() returns with the thread joined.
 * - report() is rtde-sim's --json, written by the simulator's own
 *   functions (sim_server_report_json(), sim_udp_report_json())
 *   into a memory stream and parsed with json.loads: one source for the
 *   key names, which docs/rtde-sim.md describes.
 */
#include "_module.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "options.h"
#include "server.h"
#include "udp.h"

int py_sim_register(PyObject *module);

enum state { ST_NEW = 0, ST_STARTING, ST_RUNNING, ST_STOPPED };

typedef struct {
	PyObject ob_base; /* PyObject_HEAD */
	struct sim_setup su;
	char bind[64];		   /* su.srv.bind points here */
	char control_script[4096]; /* su.sim.ctrl.control_script points here */
	bool udp;
	enum state state;

	/* Guarded by lock once started: */
	pthread_mutex_t lock;
	struct sim_server *srv;
	struct sim_udp *u;
	bool joined;
	char *final; /* the report at the end (JSON text) */
	size_t final_len;
	int64_t t_start;
	char sched[32];			   /* the thread's scheduling, for the report */
	pid_t pid;			   /* of the process that started it */
	uint16_t port;			   /* bound */
	uint16_t svc_port[SIM_PORT_COUNT]; /* the dashboard's and script ports, bound */
	pthread_t thread;

	/* The loop's end, told by its thread. */
	pthread_mutex_t end_lock;
	pthread_cond_t end_cv;
	bool ended;
	int result;
	int64_t t_end;
} SimObject;

/* ---- settings -------------------------------------------------------------------- */

/* The names of the table's entries of one kind (faults or options) that
 * apply in this mode, comma-separated, for messages. */
static void valid_names(char *buf, size_t cap, bool fault, bool udp)
{
	size_t len = 0;
	char n[48];

	buf[0] = '\0';
	for (size_t i = 0; i < SIM_OPT_COUNT; i++) {
		const struct sim_option *o = sim_option_at(i);
		int w;

		if (o->fault != fault || (udp && !o->udp))
			continue;
		w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
			     sim_option_name(o, SIM_STYLE_KEY, n, sizeof(n)));
		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
	}
	if (!fault) {
		/* bind is the keyword options' own (not a table entry). */
		snprintf(buf + len, cap - len, "%sbind", len ? ", " : "");
	}
}

/* TypeError "@want, not <the type of @o>"; -1. */
static int wrong_type(const char *want, PyObject *o)
{
	PyErr_Format(PyExc_TypeError, "%s, not %.80s", want, Py_TYPE(o)->tp_name);
	return -1;
}

/* Set one setting from a Python value; -1 with the exception set. */
static int set_one(SimObject *self, const char *where, PyObject *key, PyObject *value, bool fault)
{
	const struct sim_option *o;
	const char *name;
	char why[256], list[1024];
	int err;

	if (!PyUnicode_Check(key)) {
		PyErr_Format(PyExc_TypeError, "%s: a key must be a str, not %.80s", where,
			     Py_TYPE(key)->tp_name);
		return -1;
	}
	name = PyUnicode_AsUTF8(key);
	if (!name)
		return -1;
	if (!fault && (!strcmp(name, "bind"))) {
		const char *b;

		if (!PyUnicode_Check(value))
			return wrong_type("bind must be a str (an IPv4 address)", value);
		b = PyUnicode_AsUTF8(value);
		if (!b)
			return -1;
		if (strlen(b) >= sizeof(self->bind)) {
			PyErr_Format(PyExc_ValueError, "bind %.80s: not an IPv4 address", b);
			return -1;
		}
		snprintf(self->bind, sizeof(self->bind), "%s", b);
		return 0;
	}
	o = sim_option_find(name);
	if (!o || o->fault != fault) {
		valid_names(list, sizeof(list), fault, self->udp);
		if (o)
			PyErr_Format(PyExc_ValueError, "%s: '%s' is %s, not %s (valid %s: %s)",
				     where, name,
				     o->fault ? "a fault: pass it in faults="
					      : "an option: pass it as a keyword of Sim()",
				     fault ? "a fault" : "an option", where, list);
		else
			PyErr_Format(PyExc_ValueError, "%s: unknown '%s' (valid %s: %s)", where,
				     name, where, list);
		return -1;
	}
	if (self->udp && !o->udp) {
		valid_names(list, sizeof(list), fault, true);
		PyErr_Format(
			PyExc_ValueError,
			"%s: '%s' does not apply to the UDP simulator (valid with udp=True: %s)",
			where, name, list);
		return -1;
	}
	if (value == Py_None) {
		PyErr_Format(PyExc_TypeError,
			     "%s: '%s' takes %s, not None (leave it out for the "
			     "default)",
			     where, name, o->what);
		return -1;
	}
	switch (o->kind) {
	case SIM_OPT_FLAG:
		if (!PyBool_Check(value)) {
			PyErr_Format(PyExc_TypeError,
				     "%s: '%s' is a flag: True or False, not %.80s", where, name,
				     Py_TYPE(value)->tp_name);
			return -1;
		}
		if (value == Py_False)
			return 0;
		err = sim_option_set_flag(&self->su, o, SIM_STYLE_KEY, why, sizeof(why));
		break;
	case SIM_OPT_UINT: {
		PyObject *idx;
		unsigned long long v;
		int overflow = 0;
		long long sv;

		if (PyBool_Check(value) || !PyIndex_Check(value)) {
			PyErr_Format(PyExc_TypeError, "%s: '%s' takes an integer, not %.80s", where,
				     name, Py_TYPE(value)->tp_name);
			return -1;
		}
		idx = PyNumber_Index(value);
		if (!idx)
			return -1;
		sv = PyLong_AsLongLongAndOverflow(idx, &overflow);
		if (sv == -1 && PyErr_Occurred()) {
			Py_DECREF(idx);
			return -1;
		}
		if (overflow < 0 || (!overflow && sv < 0)) {
			Py_DECREF(idx);
			PyErr_Format(PyExc_ValueError, "%s: '%s' is out of range [%llu, %llu]",
				     where, name, (unsigned long long)o->min,
				     (unsigned long long)o->max);
			return -1;
		}
		v = PyLong_AsUnsignedLongLong(idx);
		Py_DECREF(idx);
		if (v == (unsigned long long)-1 && PyErr_Occurred()) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "%s: '%s' is out of range [%llu, %llu]",
				     where, name, (unsigned long long)o->min,
				     (unsigned long long)o->max);
			return -1;
		}
		err = sim_option_set_uint(&self->su, o, v, SIM_STYLE_KEY, why, sizeof(why));
		break;
	}
	case SIM_OPT_DOUBLE: {
		double d;

		if (PyBool_Check(value) ||
		    !(PyFloat_Check(value) || PyLong_Check(value) || PyIndex_Check(value))) {
			PyErr_Format(PyExc_TypeError, "%s: '%s' takes a number, not %.80s", where,
				     name, Py_TYPE(value)->tp_name);
			return -1;
		}
		d = PyFloat_AsDouble(value);
		if (d == -1.0 && PyErr_Occurred()) {
			/* An integer too large for a double. */
			char a[32], b[32];

			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "%s: '%s' is out of range [%s, %s]", where,
				     name, py_g(a, o->dmin), py_g(b, o->dmax));
			return -1;
		}
		err = sim_option_set_double(&self->su, o, d, SIM_STYLE_KEY, why, sizeof(why));
		break;
	}
	default: {
		const char *t;

		if (!PyUnicode_Check(value)) {
			PyErr_Format(PyExc_TypeError, "%s: '%s' takes a str (%s), not %.80s", where,
				     name, o->what, Py_TYPE(value)->tp_name);
			return -1;
		}
		t = PyUnicode_AsUTF8(value);
		if (!t)
			return -1;
		if (o->id == SIM_OPT_CONTROL_SCRIPT) {
			/* Kept here: the str may go before the server starts. */
			if (strlen(t) >= sizeof(self->control_script)) {
				PyErr_Format(PyExc_ValueError, "%s: '%s' is too long", where, name);
				return -1;
			}
			snprintf(self->control_script, sizeof(self->control_script), "%s", t);
			t = self->control_script;
		}
		err = sim_option_set_text(&self->su, o, t, SIM_STYLE_KEY, why, sizeof(why));
		break;
	}
	}
	if (err) {
		PyErr_Format(PyExc_ValueError, "%s: %s", where, why);
		return -1;
	}
	return 0;
}

/* set_one() from a dict being walked: a value's __index__ may change the
 * dict, so @key and @value are held across the call. */
static int set_held(SimObject *self, const char *where, PyObject *key, PyObject *value, bool fault)
{
	int rc;

	Py_INCREF(key);
	Py_INCREF(value);
	rc = set_one(self, where, key, value, fault);
	Py_DECREF(key);
	Py_DECREF(value);
	return rc;
}

static void profile_names(char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < SIM_PROFILE_COUNT; i++) {
		int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
				 sim_profile((enum sim_profile_id)i)->name);

		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
	}
}

static int Sim_init(SimObject *self, PyObject *args, PyObject *kwargs)
{
	static const char *const known[] = { "profile", "faults", "port", "udp" };
	PyObject *profile = NULL, *faults = Py_None, *port = NULL, *udp = Py_False;
	PyObject *key, *value;
	const struct sim_profile *p;
	Py_ssize_t pos = 0;
	char why[256];
	long port_v = 0;

	if (self->state != ST_NEW) {
		PyErr_SetString(PyExc_RuntimeError, "Sim.__init__ called on a started simulator");
		return -1;
	}
	if (PyTuple_GET_SIZE(args) > 0) {
		PyErr_SetString(PyExc_TypeError,
				"Sim() takes keyword arguments only: Sim(profile=..., faults=..., "
				"port=..., udp=..., **options)");
		return -1;
	}
	/* The four parameters first (udp decides what the options may be). */
	if (kwargs) {
		profile = PyDict_GetItemString(kwargs, "profile");
		if (PyDict_GetItemString(kwargs, "faults"))
			faults = PyDict_GetItemString(kwargs, "faults");
		port = PyDict_GetItemString(kwargs, "port");
		if (PyDict_GetItemString(kwargs, "udp"))
			udp = PyDict_GetItemString(kwargs, "udp");
	}
	if (!PyBool_Check(udp))
		return wrong_type("udp must be True or False", udp);
	sim_setup_default(&self->su);
	snprintf(self->bind, sizeof(self->bind), "127.0.0.1");
	self->udp = udp == Py_True;

	if (profile) {
		const char *name;
		char list[128];

		if (!PyUnicode_Check(profile))
			return wrong_type("profile must be a str", profile);
		name = PyUnicode_AsUTF8(profile);
		if (!name)
			return -1;
		p = sim_profile_find(name);
		if (!p) {
			profile_names(list, sizeof(list));
			PyErr_Format(PyExc_ValueError, "unknown profile '%s' (valid profiles: %s)",
				     name, list);
			return -1;
		}
		self->su.sim.profile = (enum sim_profile_id)(p - sim_profile(0));
	}
	if (port) {
		int overflow = 0;

		PyObject *idx;

		if (PyBool_Check(port) || !PyIndex_Check(port))
			return wrong_type("port must be an int (0..65535)", port);
		idx = PyNumber_Index(port);
		if (!idx)
			return -1;
		port_v = PyLong_AsLongAndOverflow(idx, &overflow);
		Py_DECREF(idx);
		if (port_v == -1 && PyErr_Occurred())
			return -1;
		if (overflow || port_v < 0 || port_v > 65535) {
			PyErr_SetString(PyExc_ValueError,
					"port must be in 0..65535 (0: any free port)");
			return -1;
		}
	}
	self->su.srv.port = (uint16_t)port_v;
	self->su.udp_port = (uint16_t)port_v;

	if (faults != Py_None) {
		if (!PyDict_Check(faults))
			return wrong_type("faults must be a dict of rtde-sim fault options or None",
					  faults);
		while (PyDict_Next(faults, &pos, &key, &value))
			if (set_held(self, "faults", key, value, true) < 0)
				return -1;
	}
	pos = 0;
	if (kwargs)
		while (PyDict_Next(kwargs, &pos, &key, &value)) {
			bool param = false;

			if (PyUnicode_Check(key))
				for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
					if (PyUnicode_CompareWithASCIIString(key, known[i]) == 0)
						param = true;
			if (!param && set_held(self, "options", key, value, false) < 0)
				return -1;
		}
	self->su.srv.bind = self->bind;
	if (sim_setup_check(&self->su, SIM_STYLE_KEY, why, sizeof(why))) {
		PyErr_SetString(PyExc_ValueError, why);
		return -1;
	}
	return 0;
}

/* ---- the thread ------------------------------------------------------------------ */

static void *sim_thread(void *arg)
{
	SimObject *self = arg;
	int r = self->udp ? sim_udp_run(self->u) : sim_server_run(self->srv);
	int64_t end = rtl_time_now();

	pthread_mutex_lock(&self->end_lock);
	self->result = r;
	self->t_end = end;
	self->ended = true;
	pthread_cond_broadcast(&self->end_cv);
	pthread_mutex_unlock(&self->end_lock);
	return NULL;
}

static bool has_ended(SimObject *self, int64_t *t_end)
{
	bool e;

	pthread_mutex_lock(&self->end_lock);
	e = self->ended;
	if (t_end)
		*t_end = self->t_end;
	pthread_mutex_unlock(&self->end_lock);
	return e;
}

/* The calling thread's policy, which ours inherits. */
static void describe_sched(char *buf, size_t cap)
{
	struct sched_param sp;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) || policy == SCHED_OTHER)
		snprintf(buf, cap, "SCHED_OTHER");
	else
		snprintf(buf, cap, "%s %d", policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR",
			 sp.sched_priority);
}

/* Create and run; GIL released. Returns 0 or -errno. */
static int start_locked(SimObject *self)
{
	sigset_t all, old;
	int err;

	if (self->udp) {
		struct sim_udp_opts o;

		sim_setup_udp(&self->su, &o);
		err = sim_udp_create(&self->u, &o);
		if (err)
			return err;
		self->port = sim_udp_port(self->u);
	} else {
		err = sim_server_create(&self->srv, &self->su.sim, &self->su.srv);
		if (err)
			return err;
		self->port = sim_server_port(self->srv);
		for (int k = 0; k < SIM_PORT_COUNT; k++)
			self->svc_port[k] =
				sim_server_service_port(self->srv, (enum sim_port_kind)k);
	}
	describe_sched(self->sched, sizeof(self->sched));
	self->pid = getpid();
	self->ended = false;
	self->joined = false;
	self->t_start = rtl_time_now();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&self->thread, NULL, sim_thread, self);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		sim_server_destroy(self->srv);
		sim_udp_destroy(self->u);
		self->srv = NULL;
		self->u = NULL;
	}
	return err;
}

/* Write the report into a new buffer; under self->lock, GIL released. */
static int write_report(SimObject *self, char **out, size_t *len)
{
	int64_t t_end, now = rtl_time_now();
	double secs;
	FILE *f;
	int err;

	if (self->joined) {
		*out = malloc(self->final_len + 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, self->final, self->final_len + 1);
		*len = self->final_len;
		return 0;
	}
	if (has_ended(self, &t_end))
		now = t_end;
	secs = (double)(now - self->t_start) / 1e9;
	f = open_memstream(out, len);
	if (!f)
		return -errno;
	if (self->udp)
		err = sim_udp_report_json(self->u, f, secs);
	else
		err = sim_server_report_json(self->srv, f, secs, false, self->sched);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* Stop, join, keep the final report, destroy; GIL released. Idempotent. */
static void finish(SimObject *self)
{
	pthread_mutex_lock(&self->lock);
	if (!self->joined && (self->srv || self->u) && getpid() != self->pid) {
		/* A forked child: the thread and the sockets are the parent's,
		 * whose stop event we share. Leave them alone. */
		self->joined = true;
		self->srv = NULL;
		self->u = NULL;
	}
	if (!self->joined && (self->srv || self->u)) {
		if (self->udp)
			sim_udp_stop(self->u);
		else
			sim_server_stop(self->srv);
		pthread_join(self->thread, NULL);
		free(self->final);
		self->final = NULL;
		if (write_report(self, &self->final, &self->final_len))
			self->final = NULL;
		self->joined = true;
		sim_server_destroy(self->srv);
		sim_udp_destroy(self->u);
		self->srv = NULL;
		self->u = NULL;
	}
	pthread_mutex_unlock(&self->lock);
}

/* ---- methods ----------------------------------------------------------------------- */

static PyObject *Sim_start(SimObject *self, PyObject *Py_UNUSED(ignored))
{
	int err;

	if (self->state != ST_NEW) {
		PyErr_SetString(
			PyExc_RuntimeError,
			self->state == ST_STOPPED
				? "this Sim has stopped: a simulator runs once, create a new "
				  "one"
				: "this Sim is already running");
		return NULL;
	}
	self->state = ST_STARTING;
	Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&self->lock);
	err = start_locked(self);
	pthread_mutex_unlock(&self->lock);
	Py_END_ALLOW_THREADS if (err)
	{
		char msg[200];

		self->state = ST_NEW;
		if (err == -EINVAL)
			snprintf(msg, sizeof(msg),
				 "rtde-sim: the simulator refused these options (robot or fault "
				 "settings out of range)");
		else
			snprintf(msg, sizeof(msg), "rtde-sim: cannot %s on %s:%u: %s",
				 self->udp ? "serve UDP" : "listen", self->bind,
				 self->udp ? self->su.udp_port : self->su.srv.port, strerror(-err));
		return py_raise(err, msg);
	}
	self->state = ST_RUNNING;
	return Py_NewRef(self);
}

static PyObject *Sim_stop(SimObject *self, PyObject *Py_UNUSED(ignored))
{
	if (self->state == ST_NEW || self->state == ST_STARTING)
		Py_RETURN_NONE;
	Py_BEGIN_ALLOW_THREADS finish(self);
	Py_END_ALLOW_THREADS self->state = ST_STOPPED;
	Py_RETURN_NONE;
}

static PyObject *Sim_report(SimObject *self, PyObject *Py_UNUSED(ignored))
{
	PyObject *json, *res;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (self->state == ST_NEW || self->state == ST_STARTING) {
		PyErr_SetString(
			PyExc_RuntimeError,
			"this Sim has not started: no report yet (use 'with rtloop.Sim() as "
			"sim:' or sim.start())");
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&self->lock);
	err = (self->joined && !self->final) ? -EIO : write_report(self, &text, &len);
	pthread_mutex_unlock(&self->lock);
	Py_END_ALLOW_THREADS if (err) return py_raise(err,
						      "rtde-sim: the report could not be written");
	json = PyImport_ImportModule("json");
	if (!json) {
		free(text);
		return NULL;
	}
	res = PyObject_CallMethod(json, "loads", "s#", text, (Py_ssize_t)len);
	Py_DECREF(json);
	free(text);
	return res;
}

static PyObject *Sim_wait(SimObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *timeout = Py_None;
	int64_t deadline = 0;
	bool ended = false;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:wait", kwlist, &timeout))
		return NULL;
	if (self->state == ST_NEW || self->state == ST_STARTING) {
		PyErr_SetString(PyExc_RuntimeError,
				"this Sim has not started: nothing to wait for");
		return NULL;
	}
	if (timeout != Py_None) {
		double t = PyFloat_AsDouble(timeout);

		if (t == -1.0 && PyErr_Occurred())
			return NULL;
		if (!(t >= 0) || t > 1e9) {
			PyErr_SetString(PyExc_ValueError, "timeout must be None or 0..1e9 s");
			return NULL;
		}
		deadline = rtl_time_now() + (int64_t)(t * 1e9);
	}
	/* Slices of 100 ms, so Ctrl-C is seen while we wait. */
	for (;;) {
		int64_t now = rtl_time_now(), until = now + 100 * RTL_NS_PER_MS;

		struct timespec ts;

		if (timeout != Py_None && until > deadline)
			until = deadline;
		ts = rtl_time_to_timespec(until);
		Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&self->end_lock);
		while (!self->ended && rtl_time_now() < until)
			if (pthread_cond_timedwait(&self->end_cv, &self->end_lock, &ts) ==
			    ETIMEDOUT)
				break;
		ended = self->ended;
		pthread_mutex_unlock(&self->end_lock);
		Py_END_ALLOW_THREADS if (ended ||
					 (timeout != Py_None && rtl_time_now() >= deadline)) break;
		if (PyErr_CheckSignals() < 0)
			return NULL;
	}
	return PyBool_FromLong(ended);
}

static PyObject *Sim_enter(SimObject *self, PyObject *Py_UNUSED(ignored))
{
	return Sim_start(self, NULL);
}

static PyObject *Sim_exit(SimObject *self, PyObject *Py_UNUSED(args))
{
	PyObject *r = Sim_stop(self, NULL);

	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

/* ---- attributes ---------------------------------------------------------------------- */

static PyObject *Sim_get_host(SimObject *self, void *Py_UNUSED(c))
{
	return PyUnicode_FromString(self->bind);
}

static PyObject *Sim_get_port(SimObject *self, void *Py_UNUSED(c))
{
	if (self->state == ST_RUNNING || self->state == ST_STOPPED)
		return PyLong_FromLong(self->port);
	return PyLong_FromLong(self->udp ? self->su.udp_port : self->su.srv.port);
}

/* The dashboard's and the script ports once started; None before, with
 * udp=True, or when not served. */
static PyObject *Sim_get_service_port(SimObject *self, void *kind)
{
	uint16_t p = 0;

	if (!self->udp && (self->state == ST_RUNNING || self->state == ST_STOPPED))
		p = self->svc_port[(intptr_t)kind];
	if (!p)
		Py_RETURN_NONE;
	return PyLong_FromLong(p);
}

static PyObject *Sim_get_period(SimObject *self, void *Py_UNUSED(c))
{
	struct sim_udp_opts o;

	if (self->udp) {
		sim_udp_opts_default(&o);
		return PyFloat_FromDouble((double)o.period_ns / 1e9);
	}
	return PyFloat_FromDouble(1.0 / sim_profile(self->su.sim.profile)->frequency_hz);
}

static PyObject *Sim_get_profile(SimObject *self, void *Py_UNUSED(c))
{
	return PyUnicode_FromString(sim_profile(self->su.sim.profile)->name);
}

static PyObject *Sim_get_udp(SimObject *self, void *Py_UNUSED(c))
{
	return PyBool_FromLong(self->udp);
}

static PyObject *Sim_get_running(SimObject *self, void *Py_UNUSED(c))
{
	return PyBool_FromLong(self->state == ST_RUNNING && !has_ended(self, NULL));
}

static PyObject *Sim_repr(SimObject *self)
{
	static const char *const names[] = { "not started", "starting", "running", "stopped" };
	const char *st = names[self->state];

	if (self->state == ST_RUNNING && has_ended(self, NULL))
		st = "ended";
	return PyUnicode_FromFormat(
		"<rtloop.Sim %s %s:%d %s>",
		self->udp ? "udp" : sim_profile(self->su.sim.profile)->name, self->bind,
		(int)(self->state >= ST_RUNNING ? self->port : self->su.srv.port), st);
}

/* ---- the type --------------------------------------------------------------------- */

static PyObject *Sim_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kw))
{
	SimObject *self = (SimObject *)type->tp_alloc(type, 0);
	pthread_condattr_t ca;

	if (!self)
		return NULL;
	/* tp_alloc zeroed the object: state ST_NEW, no server. */
	pthread_mutex_init(&self->lock, NULL);
	pthread_mutex_init(&self->end_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&self->end_cv, &ca);
	pthread_condattr_destroy(&ca);
	sim_setup_default(&self->su);
	snprintf(self->bind, sizeof(self->bind), "127.0.0.1");
	self->su.srv.bind = self->bind;
	self->su.srv.port = 0;
	self->su.udp_port = 0;
	return (PyObject *)self;
}

static void Sim_dealloc(SimObject *self)
{
	if (self->state != ST_NEW) {
		Py_BEGIN_ALLOW_THREADS finish(self);
		Py_END_ALLOW_THREADS
	}
	free(self->final);
	pthread_mutex_destroy(&self->lock);
	pthread_mutex_destroy(&self->end_lock);
	pthread_cond_destroy(&self->end_cv);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Sim_methods[] = {
	{ "start", (PyCFunction)Sim_start, METH_NOARGS,
	  "start($self, /)\n--\n\nBind the port and run the simulator on its own C thread.\n\n"
	  "Returns: self." },
	{ "stop", (PyCFunction)Sim_stop, METH_NOARGS,
	  "stop($self, /)\n--\n\nStop the simulator and join its thread (again: nothing)." },
	{ "report", (PyCFunction)Sim_report, METH_NOARGS,
	  "report($self, /)\n--\n\nrtde-sim's JSON report (docs/rtde-sim.md), live while it "
	  "runs, final after stop().\n\nReturns: dict." },
	{ "wait", (PyCFunction)(void (*)(void))Sim_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait($self, /, timeout=None)\n--\n\nWait until the simulator has ended (its "
	  "duration option, or stop()); True if it has.\n\nReturns: bool." },
	{ "__enter__", (PyCFunction)Sim_enter, METH_NOARGS, "start() and return self." },
	{ "__exit__", (PyCFunction)Sim_exit, METH_VARARGS, "stop()." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Sim_getset[] = {
	{ "host", (getter)Sim_get_host, NULL, "The address it listens on (127.0.0.1).", NULL },
	{ "port", (getter)Sim_get_port, NULL,
	  "The port it listens on once started (before: the one asked for, 0 = any).", NULL },
	{ "dashboard_port", (getter)Sim_get_service_port, NULL,
	  "The dashboard server's port once started (None: not served, e.g. no_dashboard=True).",
	  (void *)(intptr_t)SIM_PORT_DASHBOARD },
	{ "primary_port", (getter)Sim_get_service_port, NULL,
	  "The primary script port once started (programs and the state stream).",
	  (void *)(intptr_t)SIM_PORT_PRIMARY },
	{ "secondary_port", (getter)Sim_get_service_port, NULL,
	  "The secondary script port once started.", (void *)(intptr_t)SIM_PORT_SECONDARY },
	{ "realtime_port", (getter)Sim_get_service_port, NULL,
	  "The realtime script port once started.", (void *)(intptr_t)SIM_PORT_REALTIME },
	{ "period", (getter)Sim_get_period, NULL,
	  "The control period in s (0.002 at 500 Hz, 0.008 for cb3, 0.001 with udp=True).", NULL },
	{ "profile", (getter)Sim_get_profile, NULL, "The version profile's name.", NULL },
	{ "udp", (getter)Sim_get_udp, NULL, "True for rtloop's UDP stream (rtde-sim --udp).",
	  NULL },
	{ "running", (getter)Sim_get_running, NULL,
	  "True while the simulator's thread runs (started, not stopped, duration not over).",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Sim_doc,
	     "Sim(*, profile='eseries', faults=None, port=0, udp=False, **options)\n--\n\n"
	     "rtde-sim in this process, for tests: 'with rtloop.Sim() as sim:' starts it on\n"
	     "127.0.0.1:sim.port (an ephemeral port) on a C thread of its own. faults is a dict\n"
	     "of rtde-sim's fault options (skip_every, jitter_us, fieldbus, max_protocol, ...;\n"
	     "'-' or '_'), options are its other settings (start_time, duration, echo_register,\n"
	     "contact_z, ...). udp=True serves rtloop's UDP stream instead (rtde-sim --udp).\n"
	     "docs/python.md and docs/rtde-sim.md describe them.");

static PyTypeObject Sim_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Sim",
	.tp_basicsize = sizeof(SimObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Sim_doc,
	.tp_new = Sim_new,
	.tp_init = (initproc)Sim_init,
	.tp_dealloc = (destructor)Sim_dealloc,
	.tp_repr = (reprfunc)Sim_repr,
	.tp_methods = Sim_methods,
	.tp_getset = Sim_getset,
};

int py_sim_register(PyObject *module)
{
	if (PyType_Ready(&Sim_type) < 0)
		return -1;
	return PyModule_AddObjectRef(module, "Sim", (PyObject *)&Sim_type);
}
