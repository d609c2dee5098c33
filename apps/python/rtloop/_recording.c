// SPDX-License-Identifier: MIT
/*
 * rtloop.read_recording(): rtde-record's files as NumPy arrays
 * (docs/python.md "Recordings", docs/rtde-record.md for the formats).
 *
 * Design
 * ------
 * - One source of truth: the file is read by rtde-record's own C reader
 *   (apps/rtde-record/record.h): rec_bin_read_header() and
 *   rec_bin_parse_row() for the binary format, rec_csv_read_header()
 *   and rec_csv_parse_row(), the inverse of the CSV writer, for the
 *   CSV. Both give the same thing: a schema (names, RTDE types, offsets)
 *   and rows of values in host form, so one loop scatters either format
 *   into the columns.
 * - The file is read whole into memory (a regular file, or a pipe), with
 *   the GIL released; the rows are counted first (records by size, CSV
 *   lines by their '\n'), a NumPy array of the exact shape is made per
 *   column (numpy.empty, through its buffer), and the C loop fills them
 *   with the GIL released: no Python object per value.
 * - A file cut inside its last row (what a kill can leave:
 *   docs/rtde-record.md "After a crash") is refused, naming the row and the
 *   byte offset, unless partial_ok=True, which returns the whole rows with
 *   rec.truncated True. A FILE.partial that ends on a row boundary is an
 *   ordinary recording.
 * - Errors: FileNotFoundError, IsADirectoryError and the like from the
 *   system; rtloop.RecordingError (an rtloop.Error) for what the file holds:
 *   ENODATA empty, ENOMSG not a recording, EBADMSG a malformed one; its
 *   subclass rtloop.TruncatedRecording (EBADMSG) for a cut last row. Each
 *   has .filename, .row (1-based, the row at fault, or None), .offset (its
 *   byte offset, or None) and .rows (the whole rows before it).
 */
#include "_module.h"

#include <structmember.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rtloop/sized.h>

#include "record.h"

int py_recording_register(PyObject *module);

static PyObject *recording_error; /* rtloop.RecordingError */
static PyObject *truncated_error; /* rtloop.TruncatedRecording */
static PyTypeObject Recording_type;

/* The first line of a CSV header may be long (512 vector fields); past this
 * without a newline the file is not a CSV recording. */
#define HEADER_LINE_MAX ((size_t)1 << 20)
/* Bytes of a foreign file shown in the message. */
#define SHOW_BYTES 16

/* ---- the Recording object -------------------------------------------------------- */

typedef struct {
	PyObject ob_base;  /* PyObject_HEAD */
	PyObject *path;	   /* str */
	PyObject *format;  /* "csv" or "binary" */
	PyObject *fields;  /* tuple of str, in file order */
	PyObject *columns; /* dict: name -> ndarray */
	PyObject *meta;	   /* dict */
	Py_ssize_t rows;
	bool truncated;
} RecordingObject;

static int Recording_traverse(RecordingObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->path);
	Py_VISIT(self->format);
	Py_VISIT(self->fields);
	Py_VISIT(self->columns);
	Py_VISIT(self->meta);
	return 0;
}

static int Recording_clear(RecordingObject *self)
{
	Py_CLEAR(self->path);
	Py_CLEAR(self->format);
	Py_CLEAR(self->fields);
	Py_CLEAR(self->columns);
	Py_CLEAR(self->meta);
	return 0;
}

static void Recording_dealloc(RecordingObject *self)
{
	PyObject_GC_UnTrack(self);
	Recording_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t Recording_len(RecordingObject *self)
{
	return self->rows;
}

static PyObject *Recording_getitem(RecordingObject *self, PyObject *key)
{
	PyObject *v;

	if (!PyUnicode_Check(key)) {
		PyErr_Format(PyExc_TypeError, "a recording's columns are named by str, not %.80s",
			     Py_TYPE(key)->tp_name);
		return NULL;
	}
	v = PyDict_GetItemWithError(self->columns, key);
	if (v)
		return Py_NewRef(v);
	if (!PyErr_Occurred()) {
		PyObject *sep = PyUnicode_FromString(", ");
		PyObject *names = sep ? PyUnicode_Join(sep, self->fields) : NULL;

		if (names)
			PyErr_Format(PyExc_KeyError,
				     "no column %R in this recording (its fields: %U)", key, names);
		Py_XDECREF(names);
		Py_XDECREF(sep);
	}
	return NULL;
}

static int Recording_contains(RecordingObject *self, PyObject *key)
{
	if (!PyUnicode_Check(key))
		return 0;
	return PyDict_Contains(self->columns, key);
}

static PyObject *Recording_iter(RecordingObject *self)
{
	return PyObject_GetIter(self->fields);
}

static PyObject *Recording_keys(RecordingObject *self, PyObject *Py_UNUSED(ignored))
{
	return PySequence_List(self->fields);
}

static PyObject *Recording_repr(RecordingObject *self)
{
	return PyUnicode_FromFormat("<rtloop.Recording %R: %U, %zd rows, %zd fields%s>", self->path,
				    self->format, self->rows, PyTuple_GET_SIZE(self->fields),
				    self->truncated ? ", truncated" : "");
}

static PyObject *Recording_get_truncated(RecordingObject *self, void *Py_UNUSED(c))
{
	return PyBool_FromLong(self->truncated);
}

static PyMemberDef Recording_members[] = {
	{ "path", T_OBJECT_EX, offsetof(RecordingObject, path), READONLY, "The file read." },
	{ "format", T_OBJECT_EX, offsetof(RecordingObject, format), READONLY,
	  "'csv' or 'binary'." },
	{ "fields", T_OBJECT_EX, offsetof(RecordingObject, fields), READONLY,
	  "The column names: the recipe's fields in file order, then host_time_ns and lost "
	  "(and, from a binary file, seq, ctrl_skipped, dropped)." },
	{ "meta", T_OBJECT_EX, offsetof(RecordingObject, meta), READONLY,
	  "What the header says: the recipe and its types; a binary file's host, port, "
	  "controller, frequency, period_ns and layout." },
	{ NULL, 0, 0, 0, NULL },
};

static PyGetSetDef Recording_getset[] = {
	{ "truncated", (getter)Recording_get_truncated, NULL,
	  "True when the file ended inside a row and partial_ok=True returned the whole ones.",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef Recording_methods[] = {
	{ "keys", (PyCFunction)Recording_keys, METH_NOARGS, "The fields, as a list." },
	{ NULL, NULL, 0, NULL },
};

static PyMappingMethods Recording_mapping = {
	.mp_length = (lenfunc)Recording_len,
	.mp_subscript = (binaryfunc)Recording_getitem,
};

static PySequenceMethods Recording_sequence = {
	.sq_contains = (objobjproc)Recording_contains,
};

static PyObject *Recording_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyErr_SetString(PyExc_TypeError, "Recording objects come from rtloop.read_recording(path)");
	return NULL;
}

static PyTypeObject Recording_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Recording",
	.tp_basicsize = sizeof(RecordingObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "A recording of rtde-record, read by rtloop.read_recording(): rec[name] is a "
		  "NumPy array per field (N rows, N x 6 or N x 3 for vectors), len(rec) the rows.",
	.tp_new = Recording_new,
	.tp_dealloc = (destructor)Recording_dealloc,
	.tp_traverse = (traverseproc)Recording_traverse,
	.tp_clear = (inquiry)Recording_clear,
	.tp_repr = (reprfunc)Recording_repr,
	.tp_iter = (getiterfunc)Recording_iter,
	.tp_as_mapping = &Recording_mapping,
	.tp_as_sequence = &Recording_sequence,
	.tp_members = Recording_members,
	.tp_getset = Recording_getset,
	.tp_methods = Recording_methods,
};

/* ---- reading --------------------------------------------------------------------- */

/* The bookkeeping columns after the recipe's, with their dtypes. */
enum extra_col { X_HOST_TIME, X_LOST, X_SEQ, X_CTRL_SKIPPED, X_DROPPED, X_COUNT };
static const char *const extra_names[X_COUNT] = { "host_time_ns", "lost", "seq", "ctrl_skipped",
						  "dropped" };
static const char *const extra_dtypes[X_COUNT] = { "<i8", "<u8", "<u8", "<u8", "<u8" };

/* A column being filled: where its array's memory is and how big an
 * element is. */
struct col {
	unsigned char *dst;
	size_t size;	 /* bytes per row */
	uint32_t offset; /* in the row's values (recipe columns) */
};

/* What went wrong, raised once the GIL is back. */
struct fault {
	int code;	/* -errno; 0: none */
	bool system;	/* an errno of the system: OSError from it */
	bool truncated; /* the last row is cut */
	uint64_t row;	/* 1-based, 0: none */
	uint64_t offset;
	uint64_t rows; /* whole rows before it */
	char msg[RTL_ERROR_MSG + 256];
};

struct reading {
	unsigned char *buf;
	size_t len;
	bool binary;
	struct rec_schema *s;
	struct rec_meta meta;
	bool extra;	   /* CSV: host_time_ns and lost */
	size_t header_len; /* bytes before the first row */
	uint64_t rows;	   /* whole rows */
	size_t data_end;   /* end of the whole rows */
	struct col cols[RTL_RTDE_RECIPE_MAX_FIELDS];
	struct col xcols[X_COUNT];
	unsigned n_extra;
};

/* Read all of @path; GIL released. */
static int slurp(const char *path, struct reading *r, struct fault *f)
{
	struct stat st;
	size_t cap;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		goto sys;
	if (fstat(fd, &st))
		goto sys_close;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto sys_close;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		close(fd);
		f->code = -EINVAL;
		snprintf(f->msg, sizeof(f->msg),
			 "not a regular file or a pipe: a recording is a file rtde-record wrote");
		return -1;
	}
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	r->buf = malloc(cap);
	if (!r->buf) {
		errno = ENOMEM;
		goto sys_close;
	}
	for (;;) {
		ssize_t n;

		if (r->len == cap) {
			unsigned char *nb = realloc(r->buf, cap * 2);

			if (!nb) {
				errno = ENOMEM;
				goto sys_close;
			}
			r->buf = nb;
			cap *= 2;
		}
		n = read(fd, r->buf + r->len, cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto sys_close;
		if (n == 0)
			break;
		r->len += (size_t)n;
	}
	close(fd);
	return 0;

sys_close:
	f->code = -errno;
	close(fd);
	f->system = true;
	return -1;
sys:
	f->code = -errno;
	f->system = true;
	return -1;
}

/* The header of either format and the row count; GIL released. */
static int parse_header(struct reading *r, struct fault *f)
{
	struct rec_error err = { 0 };
	const size_t magic = sizeof(REC_MAGIC) - 1;
	int rc;

	if (r->len == 0) {
		f->code = -ENODATA;
		snprintf(f->msg, sizeof(f->msg),
			 "the file is empty (0 bytes): no rtde-record header, no rows");
		return -1;
	}
	if (r->len < magic && !memcmp(r->buf, REC_MAGIC, r->len)) {
		f->code = -EBADMSG;
		snprintf(
			f->msg, sizeof(f->msg),
			"the file ends inside the RTLREC1 magic line (%zu bytes): cut short before "
			"its header",
			r->len);
		return -1;
	}
	r->binary = r->len >= magic && !memcmp(r->buf, REC_MAGIC, magic);
	if (r->binary) {
		FILE *mf = fmemopen(r->buf, r->len, "rb");
		long pos;

		if (!mf) {
			f->code = -errno;
			f->system = true;
			return -1;
		}
		rc = rec_bin_read_header(mf, r->s, &r->meta, &err);
		pos = ftell(mf);
		fclose(mf);
		if (rc) {
			f->code = rc;
			snprintf(f->msg, sizeof(f->msg), "%s", err.err.msg);
			return -1;
		}
		r->header_len = (size_t)pos;
		r->rows = (r->len - r->header_len) / r->s->record_size;
		r->data_end = r->header_len + r->rows * r->s->record_size;
	} else {
		size_t scan = r->len < HEADER_LINE_MAX ? r->len : HEADER_LINE_MAX;
		unsigned char *nl = memchr(r->buf, '\n', scan);
		size_t hl = nl ? (size_t)(nl - r->buf) + 1 : scan;

		rc = rec_csv_read_header((const char *)r->buf, hl, r->s, &r->extra, &err);
		if (rc == -ENOMSG || (rc && !nl)) {
			f->code = -ENOMSG;
			snprintf(f->msg, sizeof(f->msg), "%s%s", err.err.msg,
				 nl ? ""
				    : "; and the file ends before the first line's newline "
				      "(a header cut short?)");
			return -1;
		}
		if (rc) {
			f->code = rc;
			snprintf(f->msg, sizeof(f->msg), "not a valid rtde-record CSV header: %s",
				 err.err.msg);
			return -1;
		}
		if (!nl) {
			f->code = -EBADMSG;
			snprintf(f->msg, sizeof(f->msg),
				 "the file ends inside its header line (%zu bytes, no newline): "
				 "cut short before any row",
				 r->len);
			return -1;
		}
		r->header_len = hl;
		/* Whole rows are the lines that end in '\n'. */
		r->data_end = hl;
		for (const unsigned char *p = r->buf + hl, *end = r->buf + r->len;
		     (p = memchr(p, '\n', (size_t)(end - p))); p++) {
			r->rows++;
			r->data_end = (size_t)(p - r->buf) + 1;
		}
	}
	if (r->data_end < r->len) {
		size_t cut = r->len - r->data_end;

		f->truncated = true;
		f->code = -EBADMSG;
		f->row = r->rows + 1;
		f->offset = r->data_end;
		f->rows = r->rows;
		if (r->binary)
			snprintf(f->msg, sizeof(f->msg),
				 "row %" PRIu64 " is cut short at byte offset %zu: the file ends "
				 "%zu of its %" PRIu32 " bytes in; the %" PRIu64 " rows before it "
				 "are whole (read_recording(..., partial_ok=True) returns them)",
				 f->row, r->data_end, cut, r->s->record_size, r->rows);
		else
			snprintf(f->msg, sizeof(f->msg),
				 "row %" PRIu64 " is cut short at byte offset %zu: the file ends "
				 "%zu bytes into it, without its newline; the %" PRIu64
				 " rows before it are whole (read_recording(..., partial_ok=True) "
				 "returns them)",
				 f->row, r->data_end, cut, r->rows);
	}
	return 0;
}

/* Every whole row into the columns; GIL released. */
static int fill(struct reading *r, struct fault *f)
{
	const struct rec_schema *s = r->s;
	struct rec_error err = { 0 };
	unsigned char *values = NULL;
	const unsigned char *p = r->buf + r->header_len;

	if (!r->binary) {
		values = malloc(s->values_size ? s->values_size : 1);
		if (!values) {
			f->code = -ENOMEM;
			f->system = true;
			return -1;
		}
	}
	for (uint64_t i = 0; i < r->rows; i++) {
		struct rec_row row;
		uint64_t lost;

		if (r->binary) {
			rec_bin_parse_row(s, p, &row);
			p += s->record_size;
		} else {
			const unsigned char *nl = memchr(p, '\n', (size_t)(r->buf + r->len - p));
			size_t n = (size_t)(nl - p) + 1;

			if (rec_csv_parse_row((const char *)p, n, s, r->extra, values, &row,
					      &err)) {
				f->code = err.err.code;
				f->row = i + 1;
				f->offset = (uint64_t)(p - r->buf);
				f->rows = i;
				/* Line numbers count the header as line 1. */
				snprintf(f->msg, sizeof(f->msg),
					 "row %" PRIu64 " (line %" PRIu64 ", byte offset %" PRIu64
					 "): %s",
					 f->row, f->row + 1, f->offset, err.err.msg);
				free(values);
				return -1;
			}
			p += n;
		}
		for (unsigned c = 0; c < s->n; c++)
			memcpy(r->cols[c].dst + i * r->cols[c].size, row.values + r->cols[c].offset,
			       r->cols[c].size);
		lost = row.ctrl_skipped + row.dropped;
		if (r->n_extra) {
			memcpy(r->xcols[X_HOST_TIME].dst + i * 8, &row.rx_ns, 8);
			memcpy(r->xcols[X_LOST].dst + i * 8, &lost, 8);
		}
		if (r->n_extra == X_COUNT) {
			memcpy(r->xcols[X_SEQ].dst + i * 8, &row.seq, 8);
			memcpy(r->xcols[X_CTRL_SKIPPED].dst + i * 8, &row.ctrl_skipped, 8);
			memcpy(r->xcols[X_DROPPED].dst + i * 8, &row.dropped, 8);
		}
	}
	free(values);
	return 0;
}

/* The NumPy dtype string of RTDE type @t (little-endian hosts only: the
 * binary format says "endian little" and its reader refuses others). */
static const char *dtype_of(enum rtl_rtde_type t)
{
	/* The doubles, and anything else, are "<f8". */
	static const char *const dtypes[] = {
		[RTL_RTDE_TYPE_BOOL] = "?",	     [RTL_RTDE_TYPE_UINT8] = "u1",
		[RTL_RTDE_TYPE_UINT32] = "<u4",	     [RTL_RTDE_TYPE_VECTOR6UINT32] = "<u4",
		[RTL_RTDE_TYPE_UINT64] = "<u8",	     [RTL_RTDE_TYPE_INT32] = "<i4",
		[RTL_RTDE_TYPE_VECTOR6INT32] = "<i4"
	};

	return RTL__NAME_OF(dtypes, t, "<f8");
}

/* numpy.empty(shape, dtype) and its writable memory in *@dst. The buffer
 * view is released at once: the array owns its memory and lives in the
 * Recording, which holds it for as long as we write. */
static PyObject *new_array(PyObject *np_empty, Py_ssize_t rows, unsigned elems, size_t size,
			   const char *dtype, unsigned char **dst)
{
	PyObject *arr, *shape;
	Py_buffer view;

	shape = elems > 1 ? Py_BuildValue("(nI)", rows, elems) : Py_BuildValue("(n)", rows);
	if (!shape)
		return NULL;
	arr = PyObject_CallFunction(np_empty, "Os", shape, dtype);
	Py_DECREF(shape);
	if (!arr)
		return NULL;
	if (PyObject_GetBuffer(arr, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
		Py_DECREF(arr);
		return NULL;
	}
	if (view.len != rows * (Py_ssize_t)size) {
		/* Not numpy's empty (a stand-in in sys.modules?): do not write. */
		PyBuffer_Release(&view);
		Py_DECREF(arr);
		PyErr_SetString(PyExc_RuntimeError,
				"read_recording: numpy.empty() gave a buffer of another size");
		return NULL;
	}
	*dst = view.buf;
	PyBuffer_Release(&view);
	return arr;
}

/* Text from the file or about it, which need not be UTF-8: undecodable
 * bytes become \xNN escapes, so a message or a name never fails. */
static PyObject *text(const char *s)
{
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "backslashreplace");
}

static PyObject *str_or_none(const char *s)
{
	if (!s[0] || !strcmp(s, "-"))
		Py_RETURN_NONE;
	return text(s);
}

static int put(PyObject *d, const char *k, PyObject *v)
{
	int rc;

	if (!v)
		return -1;
	rc = PyDict_SetItemString(d, k, v);
	Py_DECREF(v);
	return rc;
}

static PyObject *make_meta(const struct reading *r)
{
	PyObject *m = PyDict_New(), *recipe = PyList_New(0), *types = PyDict_New();
	const struct rec_schema *s = r->s;

	if (!m || !recipe || !types)
		goto fail;
	for (unsigned c = 0; c < s->n; c++) {
		PyObject *name = text(s->cols[c].name);
		PyObject *t = PyUnicode_FromString(
			rtl_rtde_type_name((enum rtl_rtde_type)s->cols[c].type));

		if (!name || !t || PyList_Append(recipe, name) < 0 ||
		    PyDict_SetItem(types, name, t) < 0) {
			Py_XDECREF(name);
			Py_XDECREF(t);
			goto fail;
		}
		Py_DECREF(name);
		Py_DECREF(t);
	}
	if (put(m, "format", PyUnicode_FromString(r->binary ? "binary" : "csv")) < 0 ||
	    put(m, "recipe", Py_NewRef(recipe)) < 0 || put(m, "types", Py_NewRef(types)) < 0 ||
	    put(m, "rows", PyLong_FromUnsignedLongLong(r->rows)) < 0 ||
	    put(m, "header_bytes", PyLong_FromSize_t(r->header_len)) < 0)
		goto fail;
	if (r->binary) {
		if (put(m, "host", str_or_none(r->meta.host)) < 0 ||
		    put(m, "port", PyLong_FromLong(r->meta.port)) < 0 ||
		    put(m, "controller", str_or_none(r->meta.controller)) < 0 ||
		    put(m, "frequency", PyFloat_FromDouble(r->meta.frequency)) < 0 ||
		    put(m, "period_ns", PyLong_FromLongLong(r->meta.period_ns)) < 0 ||
		    put(m, "endian", PyUnicode_FromString("little")) < 0 ||
		    put(m, "record_size", PyLong_FromUnsignedLong(s->record_size)) < 0 ||
		    put(m, "values_offset", PyLong_FromUnsignedLong(s->values_offset)) < 0 ||
		    put(m, "values_size", PyLong_FromUnsignedLong(s->values_size)) < 0)
			goto fail;
	} else if (put(m, "extra_columns", PyBool_FromLong(r->extra)) < 0) {
		goto fail;
	}
	Py_DECREF(recipe);
	Py_DECREF(types);
	return m;
fail:
	Py_XDECREF(m);
	Py_XDECREF(recipe);
	Py_XDECREF(types);
	return NULL;
}

/* Raise @f for @path (a str). */
static void raise_fault(const struct fault *f, PyObject *path, const unsigned char *buf, size_t len)
{
	PyObject *cls = f->truncated ? truncated_error : recording_error, *exc, *msg;
	PyObject *row = Py_None, *offset = Py_None, *rows = Py_None;

	if (f->system) {
		errno = -f->code;
		PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
		return;
	}
	if (f->code == -ENOMSG) {
		PyObject *start = PyBytes_FromStringAndSize(
			(const char *)buf, (Py_ssize_t)(len < SHOW_BYTES ? len : SHOW_BYTES));

		if (!start)
			return;
		PyObject *why = text(f->msg);

		msg = why ? PyUnicode_FromFormat("not an rtde-record file: starts with %R%s (%U)",
						 start, len > SHOW_BYTES ? "..." : "", why)
			  : NULL;
		Py_XDECREF(why);
		Py_DECREF(start);
	} else {
		msg = text(f->msg);
	}
	if (!msg)
		return;
	exc = PyObject_CallFunction(cls, "iOO", -f->code, msg, path);
	Py_DECREF(msg);
	if (!exc)
		return;
	if (f->row) {
		row = PyLong_FromUnsignedLongLong(f->row);
		offset = PyLong_FromUnsignedLongLong(f->offset);
		rows = PyLong_FromUnsignedLongLong(f->rows);
	} else {
		Py_INCREF(row);
		Py_INCREF(offset);
		Py_INCREF(rows);
	}
	if (row && offset && rows && PyObject_SetAttrString(exc, "row", row) == 0 &&
	    PyObject_SetAttrString(exc, "offset", offset) == 0 &&
	    PyObject_SetAttrString(exc, "rows", rows) == 0)
		PyErr_SetObject(cls, exc);
	Py_XDECREF(row);
	Py_XDECREF(offset);
	Py_XDECREF(rows);
	Py_DECREF(exc);
}

static PyObject *read_recording(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "path", "partial_ok", NULL };
	PyObject *path_bytes = NULL, *path_str = NULL, *np = NULL, *np_empty = NULL;
	RecordingObject *rec = NULL;
	struct reading *r = NULL;
	struct fault f = { 0 };
	PyObject *fields = NULL;
	int partial_ok = 0, rc;
	Py_ssize_t nf = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|$p:read_recording", kwlist,
					 PyUnicode_FSConverter, &path_bytes, &partial_ok))
		return NULL;
	if (strlen(PyBytes_AS_STRING(path_bytes)) != (size_t)PyBytes_GET_SIZE(path_bytes)) {
		PyErr_SetString(PyExc_ValueError, "read_recording: the path holds a NUL byte");
		goto out;
	}
	path_str = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path_bytes));
	if (!path_str)
		goto out;
	/* NumPy first: without it there is nothing to read into. */
	np = PyImport_ImportModule("numpy");
	if (!np)
		goto out;
	np_empty = PyObject_GetAttrString(np, "empty");
	if (!np_empty)
		goto out;
	r = calloc(1, sizeof(*r));
	if (r)
		r->s = calloc(1, sizeof(*r->s));
	if (!r || !r->s) {
		PyErr_NoMemory();
		goto out;
	}

	Py_BEGIN_ALLOW_THREADS rc = slurp(PyBytes_AS_STRING(path_bytes), r, &f);
	if (!rc)
		rc = parse_header(r, &f);
	Py_END_ALLOW_THREADS if (rc || (f.truncated && !partial_ok))
	{
		raise_fault(&f, path_str, r->buf, r->len);
		goto out;
	}

	/* The columns: the recipe's, then the bookkeeping ones. */
	rec = PyObject_GC_New(RecordingObject, &Recording_type);
	if (!rec)
		goto out;
	rec->path = Py_NewRef(path_str);
	rec->format = PyUnicode_FromString(r->binary ? "binary" : "csv");
	rec->columns = PyDict_New();
	rec->meta = NULL;
	rec->fields = NULL;
	rec->rows = (Py_ssize_t)r->rows;
	rec->truncated = f.truncated;
	PyObject_GC_Track(rec);
	r->n_extra = r->binary ? X_COUNT : (r->extra ? 2 : 0);
	fields = PyTuple_New((Py_ssize_t)(r->s->n + r->n_extra));
	if (!rec->format || !rec->columns || !fields)
		goto out;
	for (unsigned c = 0; c < r->s->n + r->n_extra; c++) {
		bool x = c >= r->s->n;
		const char *name = x ? extra_names[c - r->s->n] : r->s->cols[c].name;
		enum rtl_rtde_type t =
			x ? RTL_RTDE_TYPE_UINT64 : (enum rtl_rtde_type)r->s->cols[c].type;
		unsigned elems = x ? 1 : rtl_rtde_type_elems(t);
		struct col *col = x ? &r->xcols[c - r->s->n] : &r->cols[c];
		PyObject *arr, *key;

		col->size = x ? 8 : rtl_rtde_type_size(t);
		col->offset = x ? 0 : r->s->cols[c].offset;
		arr = new_array(np_empty, rec->rows, elems, col->size,
				x ? extra_dtypes[c - r->s->n] : dtype_of(t), &col->dst);
		if (!arr)
			goto out;
		key = text(name);
		if (key && PyDict_Contains(rec->columns, key) == 1) {
			/* The binary header's reader does not look for repeats. */
			f.code = -EBADMSG;
			snprintf(f.msg, sizeof(f.msg),
				 "not a valid rtde-record header: the field %s twice", name);
			Py_DECREF(key);
			Py_DECREF(arr);
			raise_fault(&f, path_str, r->buf, r->len);
			goto out;
		}
		if (!key || PyDict_SetItem(rec->columns, key, arr) < 0) {
			Py_XDECREF(key);
			Py_DECREF(arr);
			goto out;
		}
		Py_DECREF(arr);
		PyTuple_SET_ITEM(fields, nf++, key);
	}
	rec->fields = fields;
	fields = NULL;
	rec->meta = make_meta(r);
	if (!rec->meta)
		goto out;

	Py_BEGIN_ALLOW_THREADS rc = fill(r, &f);
	Py_END_ALLOW_THREADS if (rc)
	{
		f.truncated = false;
		raise_fault(&f, path_str, r->buf, r->len);
		goto out;
	}
	Py_DECREF(path_bytes);
	Py_DECREF(path_str);
	Py_DECREF(np);
	Py_DECREF(np_empty);
	free(r->buf);
	free(r->s);
	free(r);
	return (PyObject *)rec;

out:
	Py_XDECREF(fields);
	Py_XDECREF(rec);
	Py_XDECREF(path_bytes);
	Py_XDECREF(path_str);
	Py_XDECREF(np);
	Py_XDECREF(np_empty);
	if (r) {
		free(r->buf);
		free(r->s);
		free(r);
	}
	return NULL;
}

static PyMethodDef functions[] = {
	{ "read_recording", (PyCFunction)(void (*)(void))read_recording,
	  METH_VARARGS | METH_KEYWORDS,
	  "read_recording($module, /, path, *, partial_ok=False)\n--\n\nRead a file "
	  "rtde-record wrote, CSV or binary (a FILE.partial too). A file cut inside its last "
	  "row raises rtloop.TruncatedRecording, unless partial_ok=True: then the whole "
	  "rows, with rec.truncated True.\n\nReturns: Recording." },
	{ NULL, NULL, 0, NULL },
};

int py_recording_register(PyObject *module)
{
	recording_error = PyErr_NewExceptionWithDoc(
		"rtloop.RecordingError",
		"The file is not a readable rtde-record recording (errno ENODATA: empty, ENOMSG: "
		"not a recording, EBADMSG: malformed). .filename, .row and .offset (the row at "
		"fault and its byte offset, or None), .rows (the whole rows before it).",
		py_error, NULL);
	if (!recording_error)
		return -1;
	truncated_error = PyErr_NewExceptionWithDoc(
		"rtloop.TruncatedRecording",
		"The file ends inside its last row (a recorder killed mid-write, a copy cut "
		"short): read_recording(path, partial_ok=True) returns the whole rows.",
		recording_error, NULL);
	if (!truncated_error)
		return -1;
	if (PyType_Ready(&Recording_type) < 0)
		return -1;
	if (PyModule_AddObjectRef(module, "RecordingError", recording_error) < 0 ||
	    PyModule_AddObjectRef(module, "TruncatedRecording", truncated_error) < 0 ||
	    PyModule_AddObjectRef(module, "Recording", (PyObject *)&Recording_type) < 0 ||
	    PyModule_AddFunctions(module, functions) < 0)
		return -1;
	return 0;
}
