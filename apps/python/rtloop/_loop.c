// SPDX-License-Identifier: MIT
/*
 * The loop's figures as Python objects, and the waits without the GIL,
 * for every part that runs an rtloop loop (_loop.h).
 */
#include "_loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rtloop/hist.h>

int py_put_u64(PyObject *d, const char *key, uint64_t v)
{
	return py_put_obj(d, key, PyLong_FromUnsignedLongLong(v));
}

int py_put_obj(PyObject *d, const char *key, PyObject *o)
{
	int ret = o ? PyDict_SetItemString(d, key, o) : -1;

	Py_XDECREF(o);
	return ret;
}

/* ---- the loop's figures ---------------------------------------------------------------- */

PyObject *py_counters(const void *snap, const struct rtl_stat_field *f, size_t n)
{
	PyObject *d = PyDict_New();

	for (size_t i = 0; d && i < n; i++)
		if (py_put_u64(d, f[i].name, rtl_stat_value(snap, &f[i])) < 0)
			Py_CLEAR(d);
	return d;
}

PyObject *py_hist_summary(const struct rtl_hist *h)
{
	return Py_BuildValue(
		"{s:K,s:L,s:L,s:L,s:L,s:L,s:d,s:s}", "count", (unsigned long long)rtl_hist_count(h),
		"min", (long long)rtl_hist_min(h), "p50", (long long)rtl_hist_percentile(h, 50),
		"p90", (long long)rtl_hist_percentile(h, 90), "p99",
		(long long)rtl_hist_percentile(h, 99), "max", (long long)rtl_hist_max(h), "mean",
		rtl_hist_mean(h), "unit", "ns");
}

PyObject *py_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

PyObject *py_loop_hists(const struct rtl_loop *loop)
{
	/* A snapshot is large (its buckets): on the heap, not the stack. */
	struct rtl_hist *h = malloc(sizeof(*h));
	PyObject *d = PyDict_New();

	if (!h || !d) {
		free(h);
		Py_XDECREF(d);
		return h ? NULL : PyErr_NoMemory();
	}
	for (int i = 0; i < RTL_LOOP_H_COUNT; i++) {
		PyObject *one;

		rtl_hist_snapshot(h, rtl_loop_hist(loop, (enum rtl_loop_hist_id)i));
		one = py_hist_summary(h);
		if (py_put_obj(d, rtl_loop_hist_name((enum rtl_loop_hist_id)i), one) < 0) {
			free(h);
			Py_DECREF(d);
			return NULL;
		}
	}
	free(h);
	return d;
}

PyObject *py_loop_report(const struct rtl_loop *loop)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	PyObject *out;

	if (!f)
		return PyErr_NoMemory();
	rtl_loop_report(loop, f, false);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return PyErr_NoMemory();
	}
	out = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
	free(buf);
	return out;
}

/* ---- NumPy --------------------------------------------------------------------------- */

static PyObject *np_empty, *np_type[PY_DTYPES];

int py_numpy_import(void)
{
	static const char *const names[PY_DTYPES] = { "float64", "int32", "uint32", "int64",
						      "uint64" };
	PyObject *np;
	bool ok = true;

	if (np_empty)
		return 0;
	np = PyImport_ImportModule("numpy");
	if (!np)
		return -1;
	for (int i = 0; i < PY_DTYPES; i++)
		ok = (np_type[i] = PyObject_GetAttrString(np, names[i])) != NULL && ok;
	np_empty = PyObject_GetAttrString(np, "empty");
	Py_DECREF(np);
	if (!np_empty || !ok) {
		Py_CLEAR(np_empty);
		for (int i = 0; i < PY_DTYPES; i++)
			Py_CLEAR(np_type[i]);
		return -1;
	}
	return 0;
}

PyObject *py_array2(const void *src, Py_ssize_t rows, Py_ssize_t cols, enum py_dtype type,
		    void **data)
{
	static const size_t elem[PY_DTYPES] = { sizeof(double), sizeof(int32_t), sizeof(uint32_t),
						sizeof(int64_t), sizeof(uint64_t) };
	PyObject *a = cols ? PyObject_CallFunction(np_empty, "(nn)O", rows, cols, np_type[type])
			   : PyObject_CallFunction(np_empty, "nO", rows, np_type[type]);
	size_t n = (size_t)rows * (size_t)(cols ? cols : 1);
	Py_buffer b;

	if (!a)
		return NULL;
	if (PyObject_GetBuffer(a, &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
		Py_DECREF(a);
		return NULL;
	}
	if ((size_t)b.len != n * elem[type]) {
		PyBuffer_Release(&b);
		Py_DECREF(a);
		PyErr_SetString(PyExc_SystemError, "rtloop: numpy.empty() gave another size");
		return NULL;
	}
	if (src)
		memcpy(b.buf, src, (size_t)b.len);
	if (data)
		*data = b.buf; /* the array owns the memory; it stays while a lives */
	PyBuffer_Release(&b);
	return a;
}

PyObject *py_array(const void *src, Py_ssize_t n, enum py_dtype type)
{
	return py_array2(src, n, 0, type, NULL);
}

/* ---- closing ------------------------------------------------------------------------------ */

bool py_life_close(struct py_life *l, struct rtl_loop *loop)
{
	if (!l->open)
		return false;
	if (l->closing) {
		/* Another thread closes it: wait for that to finish. */
		while (l->open)
			py_sleep_ms_nogil();
		return false;
	}
	l->closing = true;
	rtl_loop_stop(loop);
	while (l->busy)
		py_sleep_ms_nogil();
	l->busy = 1;
	if (!l->ended)
		py_join_nogil(loop);
	return true;
}

void py_life_closed(struct py_life *l)
{
	l->open = false;
	l->closed = true;
	l->closing = false;
	l->busy = 0;
}

/* ---- the open objects ------------------------------------------------------------------- */

static struct py_open *open_list;

void py_open_link(struct py_open *n, PyObject *obj, void (*close)(PyObject *obj))
{
	n->obj = obj;
	n->close = close;
	n->prev = NULL;
	n->next = open_list;
	if (open_list)
		open_list->prev = n;
	open_list = n;
}

void py_open_unlink(struct py_open *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else if (open_list == n)
		open_list = n->next;
	if (n->next)
		n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

void py_open_close_all(void)
{
	while (open_list) {
		struct py_open *n = open_list;
		PyObject *obj = n->obj;

		Py_INCREF(obj);
		n->close(obj);
		/* close() unlinks it; make sure of it whatever happened. */
		if (open_list == n)
			py_open_unlink(n);
		Py_DECREF(obj);
	}
}

/* ---- waits without the GIL ------------------------------------------------------------- */

void py_sleep_ms_nogil(void)
{
	PyThreadState *ts = PyEval_SaveThread();

	usleep(1000);
	PyEval_RestoreThread(ts);
}

/* Python 3.13 made the finalization query public and dropped the old name. */
static int finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
	return Py_IsFinalizing();
#else
	return _Py_IsFinalizing();
#endif
}

int py_join_nogil(struct rtl_loop *loop)
{
	PyThreadState *ts;
	int ret;

	if (finalizing())
		return rtl_loop_join(loop);
	ts = PyEval_SaveThread();
	ret = rtl_loop_join(loop);
	PyEval_RestoreThread(ts);
	return ret;
}
