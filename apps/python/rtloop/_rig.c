// SPDX-License-Identifier: MIT
/*
 * rtloop.Rig: a multi-source receive from Python (<rtloop/rig.h>,
 * docs/rig.md). Several arms (RTDE) and force/torque sensors (RDT) in one
 * rig: the rig's worker (C, real time) runs a step on the clock source's
 * frames (or a timer) that copies the newest frame of every source, with
 * its age and state, into a snapshot, and hands the snapshot to Python
 * through a triple buffer: read() takes the newest one, waiting on a futex
 * with the GIL released. The step never waits for Python; a Python that
 * reads slower than the step runs sees the newest snapshot and the step
 * numbers it skipped. Receive only: nothing is commanded (the arms'
 * commands stay empty).
 */
#include "_loop.h"
#include "_module.h"
#include "_receive.h"

#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/rdt_transport.h>
#include <rtloop/rig.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#define METH(f) ((PyCFunction)(void (*)(void))(f))
#define NEW_BIT 4u
/* Bytes of a source's values a snapshot keeps (an RTDE recipe's decoded
 * values, or a sensor's frame). */
#define SNAP_VALUES 2048

struct src_snap {
	bool has;
	struct rtl_rig_input in; /* .frame is not used: the copy below is */
	uint64_t seq;
	int64_t rx_ns;
	double ctrl_time;
	uint32_t size;
	_Alignas(8) unsigned char values[SNAP_VALUES];
};

struct snap {
	uint64_t step;
	int64_t now_ns;
	struct src_snap src[RTL_RIG_MAX_SOURCES];
};

/* The newest-value hand-over: a triple buffer with a futex bell. */
struct pub {
	struct snap slot[3];
	_Atomic uint32_t ready; /* a slot index | NEW_BIT when unread */
	uint32_t back;		/* the step's */
	uint32_t front;		/* the reader's */
	_Atomic uint32_t bell, waiting;
	uint64_t steps; /* the step's */
	unsigned n;
};

typedef struct {
	PyObject ob_base; /* PyObject_HEAD, spelled out for clang-format */
	struct rtl_rig *rig;
	unsigned n, n_arms;
	struct rtl_rtde_transport *arm[RTL_RIG_MAX_SOURCES];
	struct rtl_rdt_transport *sensor[RTL_RIG_MAX_SOURCES];
	unsigned n_fields[RTL_RIG_MAX_SOURCES];
	struct rtl_rtde_handle *handles[RTL_RIG_MAX_SOURCES];
	PyObject *fields; /* tuple of the arms' field names */
	PyObject *names;  /* tuple of the sources' names */
	struct pub *pub;
	bool busy;
	int end_code;
} RigObject;

#define RO(o) ((RigObject *)(o))

/* ---- the step (the rig's worker: no allocation, no Python) ------------------------------ */

static int publish_step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct pub *p = user;
	struct snap *s = &p->slot[p->back];
	uint32_t prev;

	(void)rig;
	s->step = ++p->steps;
	s->now_ns = rtl_time_now();
	for (unsigned i = 0; i < n; i++) {
		struct src_snap *d = &s->src[i];
		const struct rtl_loop_frame *f = in[i].frame;

		d->in = in[i];
		d->in.frame = NULL;
		d->has = f != NULL;
		if (!f)
			continue;
		d->seq = f->seq;
		d->rx_ns = f->rx_ns;
		d->ctrl_time = f->ctrl_time;
		d->size = f->size < SNAP_VALUES ? f->size : SNAP_VALUES;
		memcpy(d->values, f->values, d->size);
	}
	prev = atomic_exchange_explicit(&p->ready, p->back | NEW_BIT, memory_order_acq_rel);
	p->back = prev & 3u;
	atomic_fetch_add_explicit(&p->bell, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&p->waiting, memory_order_seq_cst))
		syscall(SYS_futex, (uint32_t *)&p->bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return 0;
}

/* The reader (GIL released): the newest unread snapshot, or NULL at the
 * deadline or when the rig ends. */
static const struct snap *take(struct pub *p, int64_t deadline, struct rtl_rig *rig)
{
	for (;;) {
		uint32_t seen;
		int64_t now;
		struct timespec ts;

		if (atomic_load_explicit(&p->ready, memory_order_acquire) & NEW_BIT) {
			p->front = atomic_exchange_explicit(&p->ready, p->front,
							    memory_order_acq_rel) &
				   3u;
			return &p->slot[p->front];
		}
		now = rtl_time_now();
		if (now >= deadline || rtl_rig_stopping(rig))
			return NULL;
		atomic_store_explicit(&p->waiting, 1, memory_order_seq_cst);
		seen = atomic_load_explicit(&p->bell, memory_order_seq_cst);
		if (!(atomic_load_explicit(&p->ready, memory_order_seq_cst) & NEW_BIT)) {
			int64_t wait = deadline - now;

			if (wait > 50 * RTL_NS_PER_MS)
				wait = 50 * RTL_NS_PER_MS; /* look at the rig's end now and then */
			ts = rtl_time_to_timespec(wait);
			syscall(SYS_futex, (uint32_t *)&p->bell, FUTEX_WAIT_PRIVATE, seen, &ts,
				NULL, 0);
		}
		atomic_store_explicit(&p->waiting, 0, memory_order_relaxed);
	}
}

/* ---- opening ------------------------------------------------------------------------------- */

/* "host" or (host, port): the host (borrowed from @o) and the port. */
static int parse_address(PyObject *o, const char *what, uint16_t dflt, const char **host,
			 uint16_t *port)
{
	*port = dflt;
	if (PyUnicode_Check(o)) {
		*host = PyUnicode_AsUTF8(o);
		return *host ? 0 : -1;
	}
	if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 2 &&
	    PyUnicode_Check(PyTuple_GET_ITEM(o, 0))) {
		*host = PyUnicode_AsUTF8(PyTuple_GET_ITEM(o, 0));
		return *host ? py_parse_port(PyTuple_GET_ITEM(o, 1), what, port) : -1;
	}
	PyErr_Format(PyExc_TypeError,
		     "rtloop.Rig: each of %s must be a host (\"192.168.1.10\") or a (host, port) "
		     "tuple, not %R",
		     what, o);
	return -1;
}

static char *join_fields(PyObject *fields)
{
	size_t len = 1;
	char *out;

	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++)
		len += strlen(PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i))) + 1;
	out = calloc(1, len);
	if (!out)
		return NULL;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
		if (i)
			strcat(out, ",");
		strcat(out, PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i)));
	}
	return out;
}

static void rig_free(RigObject *r)
{
	struct rtl_rig *rig = r->rig;

	/* closed before the GIL goes: another thread's call sees it closed */
	r->rig = NULL;
	if (rig) {
		rtl_rig_stop(rig);
		Py_BEGIN_ALLOW_THREADS;
		rtl_rig_join(rig);
		Py_END_ALLOW_THREADS;
		rtl_rig_destroy(rig);
	}
	for (unsigned i = 0; i < RTL_RIG_MAX_SOURCES; i++) {
		rtl_rtde_transport_destroy(r->arm[i]);
		rtl_rdt_transport_destroy(r->sensor[i]);
		free(r->handles[i]);
		r->arm[i] = NULL;
		r->sensor[i] = NULL;
		r->handles[i] = NULL;
	}
	free(r->pub);
	r->pub = NULL;
}

static int add_name(PyObject *names, unsigned i, const char *kind, unsigned k)
{
	PyObject *n = PyUnicode_FromFormat("%s%u", kind, k);

	if (!n)
		return -1;
	PyTuple_SET_ITEM(names, (Py_ssize_t)i, n);
	return 0;
}

static int Rig_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "arms",   "sensors", "fields", "sensor_rate", "clock",
				  "period", "policy",  "stale",	 "timeout",	NULL };
	RigObject *r = RO(self);
	PyObject *arms, *sensors = NULL, *fields = Py_None, *clock = NULL, *period = Py_None;
	PyObject *stale = Py_None, *timeout = NULL;
	const char *policy = "all";
	double sensor_rate = 7000.0;
	int64_t stale_ns = 0, period_ns = 0, timeout_ns = 2 * RTL_NS_PER_SEC;
	struct rtl_rig_source src[RTL_RIG_MAX_SOURCES];
	struct rtl_rig_config rc = { .size = sizeof(rc), .sources = src, .step = publish_step };
	struct rtl_error err = { 0 };
	Py_ssize_t na, ns = 0;
	char *outputs = NULL;
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOdOOsOO:Rig", kwlist, &arms, &sensors,
					 &fields, &sensor_rate, &clock, &period, &policy, &stale,
					 &timeout))
		return -1;
	if (r->rig || r->pub || r->names || r->fields) {
		PyErr_SetString(PyExc_RuntimeError,
				"rtloop.Rig: __init__ runs once (open a new Rig)");
		return -1;
	}
	if (py_numpy_import() < 0)
		return -1;
	if (!PySequence_Check(arms) || PyUnicode_Check(arms) ||
	    (sensors && (!PySequence_Check(sensors) || PyUnicode_Check(sensors)))) {
		PyErr_SetString(PyExc_TypeError,
				"rtloop.Rig: arms and sensors are sequences of hosts or (host, "
				"port) tuples");
		return -1;
	}
	na = PySequence_Size(arms);
	ns = sensors ? PySequence_Size(sensors) : 0;
	if (na < 0 || ns < 0)
		return -1;
	if (na + ns < 1 || na + ns > RTL_RIG_MAX_SOURCES) {
		PyErr_Format(PyExc_ValueError,
			     "rtloop.Rig: 1 to %d sources (arms and sensors together), got %zd",
			     RTL_RIG_MAX_SOURCES, na + ns);
		return -1;
	}
	if (!strcmp(policy, "all"))
		rc.policy = RTL_RIG_STOP_ALL;
	else if (!strcmp(policy, "one"))
		rc.policy = RTL_RIG_STOP_SOURCE;
	else {
		PyErr_Format(PyExc_ValueError,
			     "rtloop.Rig: policy is \"all\" (a faulty source stops every arm) or "
			     "\"one\" (only itself), not '%s'",
			     policy);
		return -1;
	}
	if (!isfinite(sensor_rate) || sensor_rate < 1 || sensor_rate > 7000) {
		PyErr_SetString(PyExc_ValueError, "rtloop.Rig: sensor_rate must be 1..7000 Hz");
		return -1;
	}
	if ((timeout &&
	     py_parse_seconds(timeout, "rtloop.Rig", "timeout", 0.001, NULL, &timeout_ns) < 0) ||
	    (stale != Py_None &&
	     py_parse_seconds(stale, "rtloop.Rig", "stale", 0.0001, NULL, &stale_ns) < 0) ||
	    (period != Py_None &&
	     py_parse_seconds(period, "rtloop.Rig", "period", 0.0001, NULL, &period_ns) < 0))
		return -1;
	if (!clock || clock == Py_None) {
		if (clock == Py_None && period == Py_None) {
			PyErr_SetString(PyExc_ValueError,
					"rtloop.Rig: clock=None steps on a timer: give its period "
					"(s)");
			return -1;
		}
		rc.clock = clock ? RTL_RIG_TIMER : 0;
		rc.period_ns = period_ns;
	} else {
		long c = PyLong_AsLong(clock);

		if (c == -1 && PyErr_Occurred())
			return -1;
		if (c < 0 || c >= na + ns) {
			PyErr_Format(PyExc_ValueError,
				     "rtloop.Rig: clock is the index of the source whose frames "
				     "run the step (0..%zd), or None for a timer",
				     na + ns - 1);
			return -1;
		}
		rc.clock = (uint32_t)c;
	}
	if (fields == Py_None) {
		r->fields = py_default_fields();
		if (!r->fields)
			return -1;
	} else if (py_parse_fields(fields, "rtloop.Rig", &r->fields) < 0) {
		return -1;
	}
	outputs = join_fields(r->fields);
	r->pub = calloc(1, sizeof(*r->pub));
	r->names = PyTuple_New(na + ns);
	if (!outputs || !r->pub || !r->names) {
		free(outputs);
		PyErr_NoMemory();
		return -1;
	}
	r->pub->back = 1;
	r->pub->front = 2;
	memset(src, 0, sizeof(src));
	for (Py_ssize_t i = 0; i < na + ns; i++) {
		bool arm = i < na;
		PyObject *o = PySequence_GetItem(arm ? arms : sensors, arm ? i : i - na);
		const char *host;
		uint16_t port;

		if (!o)
			goto fail;
		ret = parse_address(o, arm ? "arms" : "sensors", arm ? RTL_RTDE_PORT : RTL_RDT_PORT,
				    &host, &port);
		if (ret == 0 && arm) {
			struct rtl_rtde_client_config cc = { .size = sizeof(cc),
							     .outputs = outputs };
			struct rtl_rtde_transport_config tc = { .size = sizeof(tc),
								.host = host,
								.port = port,
								.connect_timeout_ns = timeout_ns,
								.client = &cc };

			ret = rtl_rtde_transport_create(&r->arm[i], &tc, &err);
			if (ret == 0)
				src[i].transport = rtl_rtde_transport_base(r->arm[i]);
		} else if (ret == 0) {
			struct rtl_rdt_transport_config fc = {
				.size = sizeof(fc),
				.host = host,
				.port = port,
				.rate_hz = sensor_rate,
				.connect_timeout_ns = timeout_ns,
			};

			ret = rtl_rdt_transport_create(&r->sensor[i], &fc, &err);
			if (ret == 0)
				src[i].transport = rtl_rdt_transport_base(r->sensor[i]);
			src[i].sensor = true;
		}
		Py_DECREF(o);
		if (ret < 0) {
			if (!PyErr_Occurred())
				py_raise(ret, err.msg);
			goto fail;
		}
		src[i].stale_ns = stale_ns;
		if (add_name(r->names, (unsigned)i, arm ? "arm" : "sensor",
			     (unsigned)(arm ? i : i - na)) < 0)
			goto fail;
		src[i].name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(r->names, i));
	}
	free(outputs);
	outputs = NULL;
	r->n = (unsigned)(na + ns);
	r->n_arms = (unsigned)na;
	r->pub->n = r->n;
	rc.n_sources = r->n;
	rc.user = r->pub;
	rc.rt_mode = RTL_LOOP_RT_DEGRADE;
	ret = rtl_rig_create(&r->rig, &rc, &err);
	if (ret == 0) {
		Py_BEGIN_ALLOW_THREADS;
		ret = rtl_rig_start(r->rig, &err);
		Py_END_ALLOW_THREADS;
	}
	if (ret < 0) {
		py_raise(ret, err.msg);
		goto fail;
	}
	/* The arms' recipes as connected: what read() decodes. */
	for (unsigned i = 0; i < r->n_arms; i++) {
		const struct rtl_rtde_recipe *rec =
			rtl_rtde_client_output_recipe(rtl_rtde_transport_client(r->arm[i]));

		r->n_fields[i] = rec->n;
		r->handles[i] = calloc(rec->n ? rec->n : 1, sizeof(struct rtl_rtde_handle));
		if (!r->handles[i]) {
			PyErr_NoMemory();
			goto fail;
		}
		for (uint32_t k = 0; k < rec->n; k++)
			r->handles[i][k] = rtl_rtde_recipe_handle_at(rec, k);
	}
	return 0;
fail:
	free(outputs);
	rig_free(r);
	Py_CLEAR(r->names);
	Py_CLEAR(r->fields);
	return -1;
}

/* ---- reading ---------------------------------------------------------------------------- */

static int put_bool(PyObject *d, const char *k, bool v)
{
	return PyDict_SetItemString(d, k, v ? Py_True : Py_False);
}

static PyObject *source_dict(RigObject *r, unsigned i, const struct src_snap *s)
{
	PyObject *d = PyDict_New();
	bool arm = i < r->n_arms;

	if (!d)
		return NULL;
	if (py_put_obj(d, "name", Py_NewRef(PyTuple_GET_ITEM(r->names, i))) < 0 ||
	    py_put_obj(d, "kind", PyUnicode_FromString(arm ? "arm" : "sensor")) < 0 ||
	    put_bool(d, "fresh", s->in.fresh) < 0 || put_bool(d, "live", s->in.live) < 0 ||
	    put_bool(d, "stale", s->in.stale) < 0 || put_bool(d, "lost", s->in.lost) < 0 ||
	    put_bool(d, "stopped", s->in.stopped) < 0 || py_put_u64(d, "unseen", s->in.unseen) < 0)
		goto fail;
	if (!s->has)
		return d;
	if (py_put_obj(d, "age", PyFloat_FromDouble((double)s->in.age_ns / 1e9)) < 0 ||
	    py_put_obj(d, "age_periods", PyFloat_FromDouble(s->in.age_periods)) < 0 ||
	    py_put_u64(d, "seq", s->seq) < 0)
		goto fail;
	if (arm) {
		struct rtl_rtde_frame fr = { (unsigned char *)s->values, s->size, SNAP_VALUES };

		for (unsigned k = 0; k < r->n_fields[i]; k++) {
			PyObject *v = py_rtde_value(&fr, r->handles[i][k]);

			if (!v || PyDict_SetItem(d, PyTuple_GET_ITEM(r->fields, k), v) < 0) {
				Py_XDECREF(v);
				goto fail;
			}
			Py_DECREF(v);
		}
	} else {
		struct rtl_rdt_frame f;

		memcpy(&f, s->values, sizeof(f));
		if (py_put_obj(d, "wrench", py_array(f.wrench, 6, PY_F64)) < 0 ||
		    py_put_obj(d, "counts", py_array(f.rec.counts, 6, PY_I32)) < 0 ||
		    py_put_u64(d, "status", f.rec.status) < 0 ||
		    py_put_u64(d, "rdt_sequence", f.rec.rdt_sequence) < 0 ||
		    py_put_u64(d, "ft_sequence", f.rec.ft_sequence) < 0)
			goto fail;
	}
	return d;
fail:
	Py_DECREF(d);
	return NULL;
}

static int usable(RigObject *r, const char *what)
{
	if (!r->rig) {
		PyErr_Format(PyExc_ValueError, "rtloop.Rig.%s: the rig is closed", what);
		return -1;
	}
	if (r->busy) {
		py_raise(-EBUSY, "rtloop.Rig: another thread is reading it; read from one thread");
		return -1;
	}
	return 0;
}

static PyObject *m_read(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	RigObject *r = RO(self);
	PyObject *timeout = Py_None, *list;
	int64_t t = -1;
	const struct snap *s;
	int64_t deadline;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:read", kwlist, &timeout))
		return NULL;
	if (timeout != Py_None &&
	    py_parse_seconds(timeout, "rtloop.Rig.read", "timeout", 0, NULL, &t) < 0)
		return NULL;
	if (usable(r, "read") < 0)
		return NULL;
	deadline = t < 0 ? INT64_MAX : rtl_time_now() + t;
	/* busy until the snapshot is converted: close() and a second read()
	 * are refused meanwhile (the front buffer stays this read's) */
	r->busy = true;
	Py_BEGIN_ALLOW_THREADS;
	s = take(r->pub, deadline, r->rig);
	Py_END_ALLOW_THREADS;
	if (!s) {
		if (rtl_rig_stopping(r->rig)) {
			int code;

			Py_BEGIN_ALLOW_THREADS;
			code = rtl_rig_join(r->rig);
			Py_END_ALLOW_THREADS;
			r->busy = false;
			return py_raise(code ? code : -ENOTCONN,
					"rtloop.Rig: the rig ended: a source was lost, or stopped "
					"(see report())");
		}
		r->busy = false;
		Py_RETURN_NONE;
	}
	list = PyList_New(r->n);
	for (unsigned i = 0; list && i < r->n; i++) {
		PyObject *d = source_dict(r, i, &s->src[i]);

		if (!d)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, i, d);
	}
	r->busy = false;
	return list;
}

static PyObject *m_stats(PyObject *self, PyObject *unused)
{
	RigObject *r = RO(self);
	struct rtl_rig_counters rc = { .size = sizeof(rc) };
	const struct rtl_stat_field *f;
	PyObject *out, *srcs;
	size_t n;

	(void)unused;
	if (!r->rig)
		return PyErr_Format(PyExc_ValueError, "rtloop.Rig.stats: the rig is closed");
	rtl_rig_stats(r->rig, &rc);
	f = rtl_rig_counter_fields(&n);
	out = py_counters(&rc, f, n);
	srcs = PyList_New(r->n);
	if (!out || !srcs)
		goto fail;
	for (unsigned i = 0; i < r->n; i++) {
		struct rtl_rig_source_counters sc = { .size = sizeof(sc) };
		struct rtl_loop_counters lc = { .size = sizeof(lc) };
		PyObject *d;
		size_t m;

		rtl_rig_source_stats(r->rig, i, &sc);
		rtl_loop_stats(rtl_rig_loop(r->rig, i), &lc);
		f = rtl_rig_source_counter_fields(&m);
		d = py_counters(&sc, f, m);
		if (!d)
			goto fail;
		PyList_SET_ITEM(srcs, i, d);
		f = rtl_loop_counter_fields(&m);
		if (py_put_obj(d, "name", Py_NewRef(PyTuple_GET_ITEM(r->names, i))) < 0 ||
		    py_put_obj(d, "loop", py_counters(&lc, f, m)) < 0)
			goto fail;
	}
	if (py_put_obj(out, "sources", srcs) < 0) {
		srcs = NULL;
		goto fail;
	}
	return out;
fail:
	Py_XDECREF(out);
	Py_XDECREF(srcs);
	return NULL;
}

static PyObject *m_report(PyObject *self, PyObject *unused)
{
	RigObject *r = RO(self);
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	PyObject *s;

	(void)unused;
	if (!r->rig)
		return PyErr_Format(PyExc_ValueError, "rtloop.Rig.report: the rig is closed");
	m = open_memstream(&buf, &len);
	if (!m)
		return PyErr_NoMemory();
	rtl_rig_report(r->rig, m, false);
	fclose(m);
	s = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
	free(buf);
	return s;
}

static PyObject *m_close(PyObject *self, PyObject *unused)
{
	RigObject *r = RO(self);

	(void)unused;
	if (r->busy)
		return py_raise(-EBUSY, "rtloop.Rig.close: another thread is reading it");
	rig_free(r);
	Py_RETURN_NONE;
}

static PyObject *p_names(PyObject *self, void *unused)
{
	(void)unused;
	return Py_NewRef(RO(self)->names ? RO(self)->names : Py_None);
}

static PyObject *p_closed(PyObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(RO(self)->rig == NULL);
}

static void Rig_dealloc(PyObject *self)
{
	rig_free(RO(self));
	Py_XDECREF(RO(self)->fields);
	Py_XDECREF(RO(self)->names);
	Py_TYPE(self)->tp_free(self);
}

static PyMethodDef methods[] = {
	{ "read", METH(m_read), METH_VARARGS | METH_KEYWORDS,
	  "read($self, /, timeout=None)\n--\n\nThe newest step's view of every source: a list "
	  "of dicts (name, kind, fresh, live, stale, lost, stopped, unseen, age, age_periods, "
	  "seq, and the arm's fields or the sensor's wrench, counts, status, rdt_sequence, "
	  "ft_sequence), or None at the timeout. Raises rtloop.Error once the rig ended." },
	{ "stats", METH(m_stats), METH_NOARGS,
	  "stats($self, /)\n--\n\nThe rig's counters, and per source its own and its loop's." },
	{ "report", METH(m_report), METH_NOARGS,
	  "report($self, /)\n--\n\nThe rig's text report (rtl_rig_report())." },
	{ "close", METH(m_close), METH_NOARGS,
	  "close($self, /)\n--\n\nStop every source (the stop at exit) and free the rig." },
	{ "__enter__", METH(py_enter), METH_NOARGS, NULL },
	{ "__exit__", METH(m_close), METH_VARARGS, NULL }, /* ignores its arguments */
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef getset[] = {
	{ "names", p_names, NULL, "The sources' names: arm0.., then sensor0..", NULL },
	{ "closed", p_closed, NULL, "Whether close() has run.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject Rig_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Rig",
	.tp_basicsize = sizeof(RigObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Rig(arms, *, sensors=(), fields=None, sensor_rate=7000.0, clock=0, "
		  "period=None, policy='all', stale=None, timeout=2.0)\n--\n\n"
		  "Several arms (RTDE) and force/torque sensors (RDT) in one rig: each step sees "
		  "the newest frame of every source (docs/rig.md). Receive only.",
	.tp_new = PyType_GenericNew,
	.tp_init = Rig_init,
	.tp_dealloc = Rig_dealloc,
	.tp_methods = methods,
	.tp_getset = getset,
};

int py_rig_register(PyObject *module)
{
	if (PyType_Ready(&Rig_type) < 0)
		return -1;
	return PyModule_AddObjectRef(module, "Rig", (PyObject *)&Rig_type);
}
