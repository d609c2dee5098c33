// SPDX-License-Identifier: MIT
/*
 * rtloop.Telemetry: a loop's telemetry (<rtloop/telemetry.h>,
 * docs/telemetry.md) read from Python: the records since the last read as
 * NumPy arrays (one column per signal, filled by C, no Python object per
 * value), the counters, the histograms. The object maps the producer's
 * shared memory read-only; reading never touches the loop.
 */
#include "_loop.h"
#include "_module.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/hist.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#define METH(f) ((PyCFunction)(void (*)(void))(f))
/* Records copied per call into the scratch before the columns grow. */
#define CHUNK 256

typedef struct {
	PyObject ob_base; /* PyObject_HEAD, spelled out for clang-format */
	struct rtl_telemetry_reader *r;
	char name[RTL_TELEMETRY_NAME_MAX + 1];
	struct rtl_telemetry_record *scratch; /* CHUNK records */
} TelemetryObject;

#define TO(o) ((TelemetryObject *)(o))

static const char *state_name(enum rtl_telemetry_state s)
{
	return s == RTL_TELEMETRY_RUNNING ? "running"
	       : s == RTL_TELEMETRY_ENDED ? "ended"
					  : "setup";
}

static int usable(TelemetryObject *t)
{
	if (t->r)
		return 0;
	PyErr_SetString(PyExc_ValueError, "rtloop.Telemetry: closed");
	return -1;
}

/* ---- opening -------------------------------------------------------------------------- */

static int Telemetry_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "name", "timeout", NULL };
	TelemetryObject *t = TO(self);
	const char *name;
	double timeout = 0.0;
	struct rtl_error err = { 0 };
	int64_t deadline;
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|$d:Telemetry", kwlist, &name, &timeout))
		return -1;
	if (t->r) {
		PyErr_SetString(PyExc_RuntimeError, "rtloop.Telemetry: already open");
		return -1;
	}
	if (!isfinite(timeout) || timeout < 0 || timeout > 3600) {
		PyErr_Format(PyExc_ValueError,
			     "rtloop.Telemetry: timeout must be 0..3600 s (how long to wait for "
			     "the loop to start publishing), got %R",
			     PyTuple_Size(args) > 1 ? PyTuple_GET_ITEM(args, 1) : Py_None);
		return -1;
	}
	if (py_numpy_import() < 0)
		return -1;
	t->scratch = malloc(CHUNK * sizeof(*t->scratch));
	if (!t->scratch) {
		PyErr_NoMemory();
		return -1;
	}
	/* A loop that has not started yet (-ENOENT, -EAGAIN) is waited for,
	 * up to the time-out, without the GIL. */
	deadline = rtl_time_now() + (int64_t)(timeout * 1e9);
	for (;;) {
		PyThreadState *ts = PyEval_SaveThread();

		ret = rtl_telemetry_reader_create(&t->r, name, &err);
		if ((ret == -ENOENT || ret == -EAGAIN) && rtl_time_now() < deadline)
			rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
		PyEval_RestoreThread(ts);
		if (!(ret == -ENOENT || ret == -EAGAIN) || rtl_time_now() >= deadline)
			break;
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
	if (ret < 0) {
		py_raise(ret, err.msg);
		return -1;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

static void Telemetry_dealloc(PyObject *self)
{
	rtl_telemetry_reader_destroy(TO(self)->r);
	free(TO(self)->scratch);
	Py_TYPE(self)->tp_free(self);
}

static PyObject *m_close(PyObject *self, PyObject *unused)
{
	(void)unused;
	rtl_telemetry_reader_destroy(TO(self)->r);
	TO(self)->r = NULL;
	Py_RETURN_NONE;
}

/* ---- the records ---------------------------------------------------------------------- */

struct column {
	PyObject *arr;
	unsigned char *data;
	size_t elem;
};

/* Grow every column to @cap rows (numpy.resize would copy through Python:
 * a new array and a memcpy here). */
static int grow(struct column *c, size_t n_cols, const enum py_dtype *types, const unsigned *counts,
		size_t rows, size_t cap)
{
	for (size_t i = 0; i < n_cols; i++) {
		void *data;
		PyObject *a = py_array2(NULL, (Py_ssize_t)cap, counts[i] > 1 ? counts[i] : 0,
					types[i], &data);

		if (!a)
			return -1;
		if (c[i].arr)
			memcpy(data, c[i].data, rows * c[i].elem);
		Py_XDECREF(c[i].arr);
		c[i].arr = a;
		c[i].data = data;
	}
	return 0;
}

static PyObject *m_read(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "max", NULL };
	TelemetryObject *t = TO(self);
	struct rtl_telemetry_info info;
	Py_ssize_t max = PY_SSIZE_T_MAX;
	PyObject *max_o = Py_None;
	size_t n_sig, n_cols, rows = 0, cap = 0;
	struct column *col = NULL;
	enum py_dtype *types = NULL;
	unsigned *counts = NULL;
	PyObject *d = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:read", kwlist, &max_o) || usable(t) < 0)
		return NULL;
	if (max_o != Py_None && (max = PyNumber_AsSsize_t(max_o, PyExc_OverflowError)) == -1 &&
	    PyErr_Occurred())
		return NULL;
	if (max < 0) {
		PyErr_SetString(PyExc_ValueError, "rtloop.Telemetry.read: max must be >= 0");
		return NULL;
	}
	rtl_telemetry_reader_info(t->r, &info);
	n_sig = info.n_signals;
	n_cols = 4 + n_sig;
	col = calloc(n_cols, sizeof(*col));
	types = calloc(n_cols, sizeof(*types));
	counts = calloc(n_cols, sizeof(*counts));
	if (!col || !types || !counts) {
		PyErr_NoMemory();
		goto out;
	}
	types[0] = PY_U64; /* index */
	types[1] = PY_I64; /* t_ns */
	types[2] = PY_U64; /* frame */
	types[3] = PY_F64; /* ctrl_time */
	for (size_t i = 0; i < 4; i++) {
		counts[i] = 1;
		col[i].elem = 8;
	}
	for (size_t i = 0; i < n_sig; i++) {
		counts[4 + i] = rtl_telemetry_reader_signal(t->r, (unsigned)i)->count;
		types[4 + i] = PY_F64;
		col[4 + i].elem = 8 * counts[4 + i];
	}
	for (;;) {
		size_t want = (size_t)max - rows < CHUNK ? (size_t)max - rows : CHUNK;
		int got = want ? rtl_telemetry_reader_read(t->r, t->scratch, (unsigned)want) : 0;

		if (got <= 0 && cap)
			break;
		if (rows + (size_t)(got > 0 ? got : 0) > cap || !cap) {
			size_t ncap = cap ? 2 * cap : CHUNK;

			while (ncap < rows + (size_t)(got > 0 ? got : 0))
				ncap *= 2;
			if (grow(col, n_cols, types, counts, rows, ncap) < 0)
				goto out;
			cap = ncap;
		}
		for (int k = 0; k < got; k++, rows++) {
			const struct rtl_telemetry_record *rec = &t->scratch[k];

			memcpy(col[0].data + rows * 8, &rec->index, 8);
			memcpy(col[1].data + rows * 8, &rec->t_ns, 8);
			memcpy(col[2].data + rows * 8, &rec->frame, 8);
			memcpy(col[3].data + rows * 8, &rec->ctrl_time, 8);
			for (size_t i = 0; i < n_sig; i++)
				memcpy(col[4 + i].data + rows * col[4 + i].elem,
				       &rec->values[rtl_telemetry_reader_signal(t->r, (unsigned)i)
							    ->first],
				       col[4 + i].elem);
		}
		if (got <= 0)
			break;
	}
	d = PyDict_New();
	for (size_t i = 0; d && i < n_cols; i++) {
		static const char *const fixed[4] = { "index", "t_ns", "frame", "ctrl_time" };
		const char *key =
			i < 4 ? fixed[i]
			      : rtl_telemetry_reader_signal(t->r, (unsigned)(i - 4))->name;
		/* The rows read, as a view of the column (its base keeps it). */
		PyObject *view = PySequence_GetSlice(col[i].arr, 0, (Py_ssize_t)rows);

		if (py_put_obj(d, key, view) < 0)
			Py_CLEAR(d);
	}
out:
	for (size_t i = 0; col && i < n_cols; i++)
		Py_XDECREF(col[i].arr);
	free(col);
	free(types);
	free(counts);
	return d;
}

static PyObject *m_seek(PyObject *self, PyObject *arg)
{
	unsigned long long index;

	if (usable(TO(self)) < 0)
		return NULL;
	index = arg == Py_None ? UINT64_MAX : PyLong_AsUnsignedLongLong(arg);
	if (PyErr_Occurred())
		return NULL;
	rtl_telemetry_reader_seek(TO(self)->r, index);
	Py_RETURN_NONE;
}

/* ---- counters and histograms ------------------------------------------------------------ */

static PyObject *m_counters(PyObject *self, PyObject *unused)
{
	uint64_t v[RTL_TELEMETRY_MAX_COUNTERS];
	PyObject *d;
	int n;

	(void)unused;
	if (usable(TO(self)) < 0)
		return NULL;
	n = rtl_telemetry_reader_counters(TO(self)->r, v, RTL_TELEMETRY_MAX_COUNTERS);
	d = PyDict_New();
	for (int i = 0; d && i < n; i++)
		if (py_put_u64(d, rtl_telemetry_reader_counter_name(TO(self)->r, (unsigned)i),
			       v[i]) < 0)
			Py_CLEAR(d);
	return d;
}

/* Histogram @i's mirror, snapshotted into heap memory (28 KiB). */
static struct rtl_hist *hist_at(TelemetryObject *t, unsigned i)
{
	struct rtl_hist *h = malloc(sizeof(*h));

	if (!h) {
		PyErr_NoMemory();
		return NULL;
	}
	rtl_telemetry_reader_hist(t->r, i, h);
	return h;
}

static PyObject *m_histograms(PyObject *self, PyObject *unused)
{
	TelemetryObject *t = TO(self);
	struct rtl_telemetry_info info;
	PyObject *d;

	(void)unused;
	if (usable(t) < 0)
		return NULL;
	rtl_telemetry_reader_info(t->r, &info);
	d = PyDict_New();
	for (unsigned i = 0; d && i < info.n_hists; i++) {
		struct rtl_hist *h = hist_at(t, i);
		PyObject *one;

		if (!h) {
			Py_CLEAR(d);
			break;
		}
		one = py_hist_summary(h);
		free(h);
		if (py_put_obj(d, rtl_telemetry_reader_hist_name(t->r, i), one) < 0)
			Py_CLEAR(d);
	}
	return d;
}

/* One histogram's non-empty buckets: (lower bounds [ns], counts). */
static PyObject *m_histogram(PyObject *self, PyObject *name)
{
	TelemetryObject *t = TO(self);
	struct rtl_telemetry_info info;
	const char *want = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
	PyObject *out = NULL;

	if (!want) {
		PyErr_SetString(PyExc_TypeError, "rtloop.Telemetry.histogram: the name is a str");
		return NULL;
	}
	if (usable(t) < 0)
		return NULL;
	rtl_telemetry_reader_info(t->r, &info);
	for (unsigned i = 0; i < info.n_hists; i++) {
		struct rtl_hist *h;
		struct rtl_hist_bucket b;
		int64_t *lower = NULL;
		uint64_t *count = NULL;
		size_t n = 0;

		if (strcmp(rtl_telemetry_reader_hist_name(t->r, i), want) != 0)
			continue;
		if (!(h = hist_at(t, i)))
			return NULL;
		lower = malloc(RTL_HIST_BUCKETS * sizeof(*lower));
		count = malloc(RTL_HIST_BUCKETS * sizeof(*count));
		for (int k = lower && count ? rtl_hist_next_bucket(h, &b, 0) : -1; k >= 0;
		     k = rtl_hist_next_bucket(h, &b, k + 1)) {
			lower[n] = b.lower;
			count[n++] = b.count;
		}
		if (lower && count)
			out = Py_BuildValue("(NN)", py_array(lower, (Py_ssize_t)n, PY_I64),
					    py_array(count, (Py_ssize_t)n, PY_U64));
		else
			PyErr_NoMemory();
		free(lower);
		free(count);
		free(h);
		return out;
	}
	return PyErr_Format(PyExc_KeyError, "rtloop.Telemetry.histogram: no histogram '%s'", want);
}

/* ---- what the header says ---------------------------------------------------------------- */

static PyObject *m_info(PyObject *self, PyObject *unused)
{
	TelemetryObject *t = TO(self);
	struct rtl_telemetry_info info;
	PyObject *sig, *d;

	(void)unused;
	if (usable(t) < 0)
		return NULL;
	rtl_telemetry_reader_info(t->r, &info);
	sig = PyDict_New();
	for (unsigned i = 0; sig && i < info.n_signals; i++) {
		const struct rtl_telemetry_signal_info *s = rtl_telemetry_reader_signal(t->r, i);

		if (py_put_obj(sig, s->name,
			       Py_BuildValue("{s:s,s:I}", "unit", s->unit, "count", s->count)) < 0)
			Py_CLEAR(sig);
	}
	if (!sig)
		return NULL;
	d = Py_BuildValue("{s:s,s:s,s:s,s:d,s:L,s:L,s:L,s:I,s:K,s:K,s:K,s:N}", "name", t->name,
			  "label", info.label, "state", state_name(info.state), "period",
			  (double)info.period_ns / 1e9, "pid", (long long)info.pid, "created_ns",
			  (long long)info.created_ns, "last_ns", (long long)info.last_ns,
			  "capacity", info.capacity, "records", (unsigned long long)info.records,
			  "missed", (unsigned long long)rtl_telemetry_reader_missed(t->r),
			  "hist_rounds", (unsigned long long)info.hist_rounds, "signals", sig);
	return d;
}

static PyMethodDef methods[] = {
	{ "read", METH(m_read), METH_VARARGS | METH_KEYWORDS,
	  "read($self, /, max=None)\n--\n\nThe records published since the last read (at most "
	  "max), as NumPy arrays: index, t_ns, frame, ctrl_time, and one per signal ((N,) or "
	  "(N, count)). Records overwritten before they were read are counted in "
	  "info()['missed'].\n\nReturns: dict." },
	{ "seek", m_seek, METH_O,
	  "seek($self, index, /)\n--\n\nThe next read starts at record index (0: the oldest "
	  "held; None: only records published from now on)." },
	{ "info", m_info, METH_NOARGS,
	  "info($self, /)\n--\n\nWhat the header says: label, state, period, pid, records, "
	  "missed, signals (name: unit, count), ...\n\nReturns: dict." },
	{ "counters", m_counters, METH_NOARGS,
	  "counters($self, /)\n--\n\nThe counters now, by name ('loop.frames', "
	  "'transport.commands', ...).\n\nReturns: dict." },
	{ "histograms", m_histograms, METH_NOARGS,
	  "histograms($self, /)\n--\n\nEach histogram's count, min, p50, p90, p99, max, mean "
	  "[ns].\n\nReturns: dict." },
	{ "histogram", m_histogram, METH_O,
	  "histogram($self, name, /)\n--\n\nOne histogram's non-empty buckets: (lower bounds "
	  "[ns], counts) as NumPy arrays.\n\nReturns: tuple." },
	{ "close", m_close, METH_NOARGS,
	  "close($self, /)\n--\n\nUnmap it; again: nothing. The loop is not affected." },
	{ "__enter__", py_enter, METH_NOARGS, NULL },
	{ "__exit__", m_close, METH_VARARGS, NULL }, /* ignores its arguments */
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject Telemetry_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Telemetry",
	.tp_basicsize = sizeof(TelemetryObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Telemetry(name, *, timeout=0.0)\n--\n\nA loop's telemetry, "
		  "/dev/shm/rtloop-NAME, read-only (docs/telemetry.md): records as NumPy arrays, "
		  "counters, histograms. timeout: how long to wait for the loop to start "
		  "publishing.",
	.tp_new = PyType_GenericNew,
	.tp_init = Telemetry_init,
	.tp_dealloc = Telemetry_dealloc,
	.tp_methods = methods,
};

int py_telemetry_register(PyObject *module)
{
	if (PyType_Ready(&Telemetry_type) < 0)
		return -1;
	return PyModule_AddObjectRef(module, "Telemetry", (PyObject *)&Telemetry_type);
}
