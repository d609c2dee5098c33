/* SPDX-License-Identifier: MIT */
/*
 * What the parts that run an rtloop loop share (rtloop.Receive and
 * rtloop.Control in _receive.c, rtloop.Motion in _motion.c): the loop's
 * counters, histograms and report as Python objects, NumPy arrays of
 * values, and the waits that let the GIL go.
 */
#ifndef RTLOOP_PY_LOOP_H
#define RTLOOP_PY_LOOP_H

#include "_module.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/loop.h>
#include <rtloop/stat.h>

/* d[key] = v: 0, or -1 with the exception set. */
int py_put_u64(PyObject *d, const char *key, uint64_t v);
/* d[key] = o, taking the reference to @o (NULL: the exception is set,
 * -1): 0, or -1 with the exception set. */
int py_put_obj(PyObject *d, const char *key, PyObject *o);
/* A dict of the counters of snapshot @snap, by the names of table @f (the
 * library's <rtloop/stat.h> tables: a counter added there shows here). */
PyObject *py_counters(const void *snap, const struct rtl_stat_field *f, size_t n);
/* The loop's histograms: name -> {count, min, p50, p90, p99, max, mean,
 * unit}. */
PyObject *py_loop_hists(const struct rtl_loop *loop);
/* One histogram as {count, min, p50, p90, p99, max, mean, unit} (ns), the
 * form py_loop_hists() gives each: a new reference, or NULL with the
 * exception set. */
PyObject *py_hist_summary(const struct rtl_hist *h);
/* __enter__ of the objects that close in __exit__: returns @self. */
PyObject *py_enter(PyObject *self, PyObject *unused);
/* The loop's text report (rtl_loop_report()). */
PyObject *py_loop_report(const struct rtl_loop *loop);

/* NumPy, imported once (the first open): 0, or -1 with the exception. */
int py_numpy_import(void);
/* The element types of py_array(). */
enum py_dtype { PY_F64, PY_I32, PY_U32, PY_I64, PY_U64, PY_DTYPES };
/* A new, writable NumPy array of @n elements of @type copied from @src
 * (after py_numpy_import()). */
PyObject *py_array(const void *src, Py_ssize_t n, enum py_dtype type);
/* The same, of shape (@rows, @cols) (@cols 0: one dimension, @rows long);
 * @src NULL: uninitialised, for the caller to fill through *@data (may be
 * NULL). */
PyObject *py_array2(const void *src, Py_ssize_t rows, Py_ssize_t cols, enum py_dtype type,
		    void **data);

/*
 * Where an object that runs a loop is in its life, and who is inside it:
 * every call on the loop's step side holds the GIL to begin with and sets
 * busy before it lets the GIL go, so a second Python thread that comes
 * meanwhile is refused (EBUSY) instead of racing the first in the loop.
 */
struct py_life {
	bool open;    /* opened, not yet closed */
	bool closed;  /* close() has run (or the open failed) */
	bool closing; /* close() waits for another thread to leave */
	bool ended;   /* the loop ended by itself, and was joined */
	int busy;     /* a call with the GIL released is inside the loop */
};

/*
 * The first half of every close: ask @loop to stop (the stop at exit: the
 * safe package, then the wait for rest), wait for a thread inside to
 * leave, join the loop. Returns true when the caller is to finish the
 * close (keep the figures, free, py_life_closed()); false when there is
 * nothing to do: never opened, closed, or closed by another thread
 * meanwhile (waited for).
 */
bool py_life_close(struct py_life *l, struct rtl_loop *loop);
/* The second half: closed, nobody inside. */
void py_life_closed(struct py_life *l);

/* The objects whose loop runs, each stopped as close() would at the
 * interpreter's exit (atexit, py_open_close_all()): a node in the object,
 * linked when it opens, unlinked when it closes. GIL held throughout. */
struct py_open {
	struct py_open *prev, *next;
	PyObject *obj;
	void (*close)(PyObject *obj); /* must unlink the node */
};
void py_open_link(struct py_open *n, PyObject *obj, void (*close)(PyObject *obj));
void py_open_unlink(struct py_open *n);
void py_open_close_all(void);

/* Sleep 1 ms without the GIL. */
void py_sleep_ms_nogil(void);
/* rtl_loop_join() without the GIL (with it while the interpreter is
 * finalizing: a dealloc then, and the thread state must stay). Returns
 * what rtl_loop_join() returns. */
int py_join_nogil(struct rtl_loop *loop);

#endif /* RTLOOP_PY_LOOP_H */
