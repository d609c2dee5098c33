// SPDX-License-Identifier: MIT
/*
 * rtloop.Receive: the controller's state in Python, in the spirit of
 * ur_rtde's RTDEReceiveInterface, over rtloop's RTDE transport under the
 * loop with no input recipe (read-only). Also what rtloop.Control
 * (_control.c, a subclass) shares: opening the loop, taking frames,
 * converting them, the statistics, closing, the stop at interpreter exit.
 *
 * The approach: the loop runs with no step function. Its rx thread (C,
 * SCHED_FIFO where permitted) decodes every frame into the ring and never
 * waits for Python; Python takes the newest frame with rtl_loop_read(), the
 * GIL released while it waits, copies its values out of the ring slot into
 * the object, and converts them to Python objects only then (NumPy arrays
 * for vectors, float or int for scalars). Frames Python did not take are
 * the loop's worker_skipped, so every frame the rx thread received is
 * counted once: steps + worker_skipped + unstepped + ring_full == frames.
 *
 * Waits are cut into slices of READ_SLICE_NS, so Ctrl-C (a Python signal
 * handler) is seen between them. A read that returns no frame before its
 * slice is over means the loop has ended (rtl_loop_read() returns NULL at
 * once while the loop stops): the loop is joined and rtloop.Error says why,
 * with the transport's sentence.
 *
 * Freshness: a reader slower than the ring (ring_capacity frames) finds the
 * ring full and the frames after it dropped (ring_full), so the newest
 * frame in the ring is old; a read that sees ring_full grow takes again,
 * which waits for a frame received after the ring was drained.
 */
#include "_receive.h"
#include "_loop.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/rtde_fields.h>
#include <rtloop/time.h>

/* The longest a wait runs without looking at Python's signals. */
#define READ_SLICE_NS (100 * RTL_NS_PER_MS)
/* A read after a full ring waits at least this long for a fresh frame. */
#define REREAD_MIN_NS (100 * RTL_NS_PER_MS)
/* Receive's ring: a reader may pause this many frames (2 s at 500 Hz)
 * before frames are dropped. */
#define RECEIVE_RING 1024
/* A Receive's cached state is the newest while it is younger than this
 * many periods; older, get() waits for the next frame. */
#define FRESH_PERIODS 2
#define SECONDS_MAX 1e6

/* Casts of method implementations to PyCFunction through void (*)(void),
 * the cast GCC's -Wcast-function-type accepts. */
#define METH(f) ((PyCFunction)(void (*)(void))(f))

/* ---- argument parsers ------------------------------------------------------------- */

int py_parse_port(PyObject *o, const char *what, uint16_t *out)
{
	long v;

	if (!o) {
		*out = RTL_RTDE_PORT;
		return 0;
	}
	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: port must be an int, not %.80s", what,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred())
		PyErr_Clear();
	else if (v >= 1 && v <= 65535) {
		*out = (uint16_t)v;
		return 0;
	}
	PyErr_Format(PyExc_ValueError, "%s: port must be 1..65535, got %R", what, o);
	return -1;
}

/* The output fields of the registry, for the message that lists the valid
 * ones: named fields by name, register blocks as ranges. */
static void valid_outputs(char *buf, size_t cap)
{
	size_t len = 0, n = rtl_rtde_field_count();
	char prefix[RTL_RTDE_FIELD_NAME_MAX + 1] = "";
	int first = -1, last = -1;

	buf[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		const struct rtl_rtde_field *f = i < n ? rtl_rtde_field_at(i) : NULL;
		bool reg = f && (f->reg == RTL_RTDE_REG_BIT || f->reg == RTL_RTDE_REG_INT ||
				 f->reg == RTL_RTDE_REG_DOUBLE);
		size_t plen = 0;

		if (f && !(f->flags & RTL_RTDE_FIELD_OUTPUT))
			continue;
		if (reg) {
			plen = strlen(f->name);
			while (plen && f->name[plen - 1] >= '0' && f->name[plen - 1] <= '9')
				plen--;
		}
		/* A block ends where the next field is not its next register. */
		if (first >= 0 &&
		    !(reg && strlen(prefix) == plen && memcmp(prefix, f->name, plen) == 0 &&
		      f->reg_index == last + 1)) {
			len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s%d..%d",
						len ? ", " : "", prefix, first, last);
			first = -1;
		}
		if (!f)
			break;
		if (reg) {
			if (first < 0) {
				memcpy(prefix, f->name, plen);
				prefix[plen] = '\0';
				first = f->reg_index;
			}
			last = f->reg_index;
			continue;
		}
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
					len ? ", " : "", f->name);
	}
}

static int bad_field(const char *what, const char *name, Py_ssize_t len)
{
	const struct rtl_rtde_field *f = rtl_rtde_field_find(name);
	const struct rtl_rtde_field *near = NULL;
	char *valid = malloc(16384);

	if (!valid) {
		PyErr_NoMemory();
		return -1;
	}
	valid_outputs(valid, 16384);
	if (!f)
		near = rtl_rtde_field_suggest(NULL, name, (size_t)len, RTL_RTDE_FIELD_OUTPUT);
	if (f)
		PyErr_Format(PyExc_ValueError,
			     "%s: '%s' is an input of the controller, not an output it sends; "
			     "the output fields are: %s",
			     what, name, valid);
	else if (near)
		PyErr_Format(PyExc_ValueError,
			     "%s: unknown output field '%s' (did you mean '%s'?); the output "
			     "fields are: %s",
			     what, name, near->name, valid);
	else
		PyErr_Format(PyExc_ValueError,
			     "%s: unknown output field '%s'; the output fields are: %s", what, name,
			     valid);
	free(valid);
	return -1;
}

int py_parse_fields(PyObject *o, const char *what, PyObject **out)
{
	PyObject *seq, *tuple;
	Py_ssize_t n;

	if (!o || o == Py_None) {
		*out = py_default_fields();
		return *out ? 0 : -1;
	}
	if (PyUnicode_Check(o) || PyBytes_Check(o)) {
		PyErr_Format(PyExc_TypeError,
			     "%s: fields must be a sequence of names, e.g. (\"timestamp\", "
			     "\"actual_q\"), not a string",
			     what);
		return -1;
	}
	seq = PySequence_Fast(o, "fields must be a sequence of str");
	if (!seq) {
		PyErr_Format(PyExc_TypeError, "%s: fields must be a sequence of names, not %.80s",
			     what, Py_TYPE(o)->tp_name);
		return -1;
	}
	n = PySequence_Fast_GET_SIZE(seq);
	if (n == 0) {
		Py_DECREF(seq);
		PyErr_Format(PyExc_ValueError, "%s: fields is empty: name at least one output",
			     what);
		return -1;
	}
	tuple = PyTuple_New(n);
	if (!tuple) {
		Py_DECREF(seq);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		const struct rtl_rtde_field *f;
		const char *name;
		Py_ssize_t len;

		if (!PyUnicode_Check(item)) {
			PyErr_Format(PyExc_TypeError, "%s: fields[%zd] must be a str, not %.80s",
				     what, i, Py_TYPE(item)->tp_name);
			goto err;
		}
		name = PyUnicode_AsUTF8AndSize(item, &len);
		if (!name)
			goto err;
		f = rtl_rtde_field_find(name);
		if ((size_t)len != strlen(name) || !f || !(f->flags & RTL_RTDE_FIELD_OUTPUT)) {
			bad_field(what, name, len);
			goto err;
		}
		PyTuple_SET_ITEM(tuple, i, Py_NewRef(item));
	}
	Py_DECREF(seq);
	*out = tuple;
	return 0;

err:
	Py_DECREF(seq);
	Py_DECREF(tuple);
	return -1;
}

int py_parse_seconds(PyObject *o, const char *what, const char *name, double min,
		     const double *none, int64_t *ns)
{
	double v;

	if (o == Py_None && none) {
		*ns = (int64_t)llround(*none * 1e9);
		return 0;
	}
	if (PyBool_Check(o) || !PyNumber_Check(o) || PyComplex_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: %s must be a number of seconds, not %.80s", what,
			     name, Py_TYPE(o)->tp_name);
		return -1;
	}
	v = PyFloat_AsDouble(o);
	if (v == -1.0 && PyErr_Occurred())
		return -1;
	if (!isfinite(v) || v < min || v > SECONDS_MAX) {
		char a[32], b[32];

		PyErr_Format(PyExc_ValueError,
			     "%s: %s must be a finite number of seconds in "
			     "[%s, %s], got %R",
			     what, name, py_g(a, min), py_g(b, SECONDS_MAX), o);
		return -1;
	}
	*ns = (int64_t)llround(v * 1e9);
	return 0;
}

int py_parse_frequency(PyObject *o, const char *what, double *out)
{
	double v;

	if (!o || o == Py_None) {
		*out = 0;
		return 0;
	}
	if (PyBool_Check(o) || !PyNumber_Check(o) || PyComplex_Check(o)) {
		PyErr_Format(PyExc_TypeError,
			     "%s: frequency must be a number in Hz or None, not "
			     "%.80s",
			     what, Py_TYPE(o)->tp_name);
		return -1;
	}
	v = PyFloat_AsDouble(o);
	if (v == -1.0 && PyErr_Occurred())
		return -1;
	if (!isfinite(v) || v < 1.0) {
		PyErr_Format(PyExc_ValueError,
			     "%s: frequency must be a finite rate >= 1 Hz (None: the controller's "
			     "maximum), got %R",
			     what, o);
		return -1;
	}
	*out = v;
	return 0;
}

static const char *const default_fields[] = {
	"timestamp",	    "target_q",		"actual_q",   "actual_qd",   "actual_TCP_pose",
	"actual_TCP_speed", "actual_TCP_force", "robot_mode", "safety_mode", "runtime_state",
};

PyObject *py_default_fields(void)
{
	size_t n = sizeof(default_fields) / sizeof(default_fields[0]);
	PyObject *t = PyTuple_New((Py_ssize_t)n);

	for (size_t i = 0; t && i < n; i++) {
		PyObject *s = PyUnicode_FromString(default_fields[i]);

		if (!s) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
	}
	return t;
}

/* ---- opening ------------------------------------------------------------------------ */

/* The transport's connected() callback, inside rtl_loop_start() (on the
 * opening thread, the GIL released: C fields only). */
static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct py_rx *s = user;
	struct py_cmd_handles *h = &s->cmd;
	static const char *const params[RTL_RTDE_CMD_NPARAM] = {
		RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1, RTL_RTDE_CMD_FIELD_PARAM2,
		RTL_RTDE_CMD_FIELD_PARAM3, RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5,
	};

	if (!s->control)
		return;
	h->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
		h->param[i] = rtl_rtde_transport_input_handle(t, 0, params[i]);
	h->accel = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
	h->time = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_TIME);
	h->lookahead = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_LOOKAHEAD);
	h->gain = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_GAIN);
	if (h->echo)
		h->echo_reg = rtl_rtde_transport_input_handle(t, 1, RTL_RTDE_CMD_FIELD_ECHO);
	s->req_ok = rtl_rtde_req_resolve(&s->req_h, t, s->req_recipe, NULL) == 0;
	s->safety = rtl_rtde_transport_output_handle(t, "safety_mode");
	s->runtime = rtl_rtde_transport_output_handle(t, "runtime_state");
}

/* The recipe as connected: names, handles, the position of each name. */
static int take_recipe(struct py_rx *s)
{
	struct rtl_rtde_client *c = rtl_rtde_transport_client(s->tr);
	const struct rtl_rtde_recipe *r = rtl_rtde_client_output_recipe(c);
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(c);
	struct rtl_transport *base = rtl_rtde_transport_base(s->tr);

	s->n_fields = r->n;
	s->handles = calloc(r->n ? r->n : 1, sizeof(*s->handles));
	s->values_cap =
		(uint32_t)(base->values_size > r->host_size ? base->values_size : r->host_size);
	s->values = calloc(s->values_cap ? s->values_cap : 1, 1);
	s->names = PyTuple_New((Py_ssize_t)r->n);
	s->index = PyDict_New();
	if (!s->handles || !s->values) {
		PyErr_NoMemory();
		return -1;
	}
	if (!s->names || !s->index)
		return -1;
	for (uint32_t i = 0; i < r->n; i++) {
		PyObject *name = PyUnicode_FromString(r->fields[i]->name);
		PyObject *pos = PyLong_FromUnsignedLong(i);
		int bad = !name || !pos || PyDict_SetItem(s->index, name, pos) < 0;

		Py_XDECREF(pos);
		if (bad) {
			Py_XDECREF(name);
			return -1;
		}
		PyTuple_SET_ITEM(s->names, (Py_ssize_t)i, name);
		s->handles[i] = rtl_rtde_recipe_handle_at(r, i);
	}
	s->frequency = info->frequency;
	rtl_rtde_version_format(s->version, sizeof(s->version), info->controller_version);
	return 0;
}

/* @fields in the tuple @fields. */
static bool has_name(PyObject *fields, const char *name, size_t len)
{
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
		const char *f = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i));

		if (strlen(f) == len && strncmp(f, name, len) == 0)
			return true;
	}
	return false;
}

/* The names, comma-separated, for the transport's client, then each name
 * of the comma-separated @extra (may be NULL) that is not among them. */
static char *join_names(PyObject *fields, const char *extra)
{
	Py_ssize_t n = PyTuple_GET_SIZE(fields);
	size_t len = 2 + (extra ? strlen(extra) : 0);
	char *out;

	for (Py_ssize_t i = 0; i < n; i++)
		len += strlen(PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i))) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (Py_ssize_t i = 0; i < n; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i)));
	}
	while (extra && *extra) {
		size_t k = strcspn(extra, ",");

		if (!has_name(fields, extra, k)) {
			if (out[0])
				strcat(out, ",");
			strncat(out, extra, k);
		}
		extra += k + (extra[k] == ',');
	}
	return out;
}

static void free_loop(struct py_rx *s)
{
	rtl_loop_destroy(s->loop);
	s->loop = NULL;
	rtl_rtde_transport_destroy(s->tr);
	s->tr = NULL;
	free(s->outputs);
	s->outputs = NULL;
}

/* The stop at the interpreter's exit (below, with close()). */
static void close_at_exit(PyObject *self);

int py_rx_open(struct py_rx *s, const struct py_rx_opts *o)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc), .frequency = o->frequency };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc),
		.host = o->host,
		.port = o->port,
		.connect_timeout_ns = o->timeout_ns,
		.client = &cc,
		.connected = on_connected,
		.user = s,
	};
	struct rtl_loop_config lc = { .size = sizeof(lc), .rt_mode = RTL_LOOP_RT_DEGRADE };
	struct rtl_error err = { 0 };
	PyThreadState *ts;
	int ret;

	if (py_numpy_import() < 0)
		return -1;
	/* A Control answers requests: their acknowledgement, the status word
	 * that shows force and teach mode, and the safety and program state
	 * that end a request the program can no longer answer, are read with
	 * every frame. */
	s->outputs = join_names(o->fields, o->control ? RTL_RTDE_REQ_ACK_OUTPUTS
						   "," RTL_RTDE_CMD_FIELD_OUT_STATUS
						   ",safety_mode,runtime_state"
						      : NULL);
	if (!s->outputs) {
		PyErr_NoMemory();
		return -1;
	}
	s->control = o->control;
	s->timeout_ns = o->timeout_ns;
	cc.outputs = s->outputs;
	if (o->control) {
		cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
		if (o->echo)
			cc.inputs[1] = RTL_RTDE_CMD_ECHO_RECIPE;
		s->cmd.echo = o->echo;
		/* the requests' recipe after the others, their answer in the outputs */
		s->req_recipe = o->echo ? 2 : 1;
		cc.inputs[s->req_recipe] = RTL_RTDE_REQ_RECIPE;
		rtl_rtde_req_ids_init(&s->req_ids);
		lc.watchdog_periods = o->watchdog_periods;
		lc.stop_timeout_ns = o->stop_timeout_ns;
	} else {
		/* Read-only: nothing to guard, and a reader that pauses is no
		 * stall; a ring that holds a pause of two seconds at 500 Hz. */
		lc.watchdog_periods = -1;
		lc.ring_capacity = RECEIVE_RING;
	}
	/* Resolving the host and connecting may take the time-out: without
	 * the GIL. The object is not open yet, so no other call enters. */
	s->life.busy = 1;
	ts = PyEval_SaveThread();
	ret = rtl_rtde_transport_create(&s->tr, &tc, &err);
	if (ret >= 0) {
		lc.transport = rtl_rtde_transport_base(s->tr);
		ret = rtl_loop_create(&s->loop, &lc, &err);
	}
	if (ret >= 0)
		ret = rtl_loop_start(s->loop, &err);
	PyEval_RestoreThread(ts);
	s->life.busy = 0;
	if (ret < 0) {
		free_loop(s);
		py_raise(ret, err.msg);
		return -1;
	}
	if (take_recipe(s) < 0) {
		s->life.busy = 1;
		ts = PyEval_SaveThread();
		rtl_loop_stop(s->loop);
		rtl_loop_join(s->loop);
		PyEval_RestoreThread(ts);
		s->life.busy = 0;
		free_loop(s);
		free(s->handles);
		s->handles = NULL;
		free(s->values);
		s->values = NULL;
		Py_CLEAR(s->names);
		Py_CLEAR(s->index);
		return -1;
	}
	s->life.open = true;
	py_open_link(&s->node, (PyObject *)s, close_at_exit);
	return 0;
}

/* ---- statistics --------------------------------------------------------------------- */

/* The counters of the client and the transport come with the library's
 * tables (<rtloop/stat.h>): the dicts below follow every counter added
 * there. The binding's own, from PY_COUNTS. */
#define PY_FIELD(name, doc) RTL_STAT_FIELD(py_counts, name, doc)
static const struct rtl_stat_field py_counters_tab[] = { PY_COUNTS(PY_FIELD) };
#undef PY_FIELD

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static PyObject *live_stats(struct py_rx *s)
{
	struct rtl_rtde_client_counters cs = { .size = sizeof(cs) };
	struct rtl_rtde_transport_counters ts = { .size = sizeof(ts) };
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	const struct rtl_stat_field *lf, *cf, *tf;
	size_t ln, cn, tn;
	PyObject *d;

	lf = rtl_loop_counter_fields(&ln);
	cf = rtl_rtde_client_counter_fields(&cn);
	tf = rtl_rtde_transport_counter_fields(&tn);
	rtl_loop_stats(s->loop, &ls);
	rtl_rtde_client_stats(rtl_rtde_transport_client(s->tr), &cs);
	rtl_rtde_transport_stats(s->tr, &ts);
	d = py_counters(&ls, lf, ln);
	if (!d || py_put_obj(d, "client", py_counters(&cs, cf, cn)) < 0 ||
	    py_put_obj(d, "transport", py_counters(&ts, tf, tn)) < 0 ||
	    py_put_obj(d, "python", py_counters(&s->n, py_counters_tab, N_OF(py_counters_tab))) <
		    0) {
		Py_XDECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *live_hists(struct py_rx *s)
{
	return py_loop_hists(s->loop);
}

static PyObject *live_report(struct py_rx *s)
{
	return py_loop_report(s->loop);
}

/* ---- closing ------------------------------------------------------------------------ */

/*
 * Stop the loop (the stop at exit: the safe package, then the wait for
 * rest, bounded by the stop time-out), keep its final figures when
 * @keep, free it. A reader in another thread is woken (the stop makes
 * rtl_loop_read() return) and waited for.
 */
static void rx_close(struct py_rx *s, bool keep)
{
	if (!py_life_close(&s->life, s->loop))
		return;
	if (keep) {
		PyObject *type, *value, *tb;

		/* close() from __exit__ with an exception on its way: keep it. */
		PyErr_Fetch(&type, &value, &tb);
		s->final_stats = live_stats(s);
		if (!s->final_stats)
			PyErr_Clear();
		s->final_hists = live_hists(s);
		if (!s->final_hists)
			PyErr_Clear();
		s->final_report = live_report(s);
		if (!s->final_report)
			PyErr_Clear();
		PyErr_Restore(type, value, tb);
	}
	free_loop(s);
	py_open_unlink(&s->node);
	py_life_closed(&s->life);
}

static void close_at_exit(PyObject *self)
{
	rx_close((struct py_rx *)self, true);
}

/* ---- taking frames ------------------------------------------------------------------ */

int py_rx_check(struct py_rx *s, const char *what)
{
	if (!s->life.open) {
		PyErr_Format(PyExc_ValueError, "%s: the connection is closed", what);
		return -1;
	}
	if (s->life.busy || s->life.closing) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "%s: another thread is inside this connection's loop (a read, a command "
			 "or close): use one connection from one thread at a time",
			 what);
		py_raise(-EBUSY, msg);
		return -1;
	}
	return 0;
}

int py_rx_raise_ended(struct py_rx *s, const char *what)
{
	char msg[RTL_ERROR_MSG + 128];

	snprintf(msg, sizeof(msg), "%s: the loop has ended: %s", what, s->end_msg);
	py_raise(s->end_code, msg);
	return -1;
}

/* The loop ended by itself: join it, keep why. */
static void loop_ended(struct py_rx *s)
{
	struct rtl_transport *base = rtl_rtde_transport_base(s->tr);
	const struct rtl_rtde_client_error *ce;
	const char *why = NULL;
	PyThreadState *ts;
	int code;

	ts = PyEval_SaveThread();
	code = rtl_loop_join(s->loop);
	PyEval_RestoreThread(ts);
	/* The rx thread has ended: the transport and its client may be read. */
	if (base->ops->error)
		why = base->ops->error(base);
	ce = rtl_rtde_client_last_error(rtl_rtde_transport_client(s->tr));
	if ((!why || !why[0]) && ce && ce->err.code)
		why = ce->err.msg;
	if (!code)
		code = ce && ce->err.code ? ce->err.code : -ECONNRESET;
	snprintf(s->end_msg, sizeof(s->end_msg), "%s",
		 why && why[0] ? why : "the connection to the controller was lost");
	s->end_code = code;
	s->life.ended = true;
}

int py_rx_take(struct py_rx *s, int64_t timeout_ns, const char *what)
{
	int64_t deadline;
	bool reread = false;
	PyThreadState *ts;

	if (py_rx_check(s, what) < 0)
		return -1;
	if (s->life.ended)
		return py_rx_raise_ended(s, what);
	deadline = rtl_time_now() + timeout_ns;
	s->life.busy = 1;
	for (;;) {
		int64_t asked = rtl_time_now(), slice = deadline - asked;
		const struct rtl_loop_frame *f;
		struct rtl_loop_frame head = { 0 };
		bool got = false, stopped = false;
		struct rtl_loop_counters st = { .size = sizeof(st) };

		if (slice < 0)
			slice = 0;
		if (slice > READ_SLICE_NS)
			slice = READ_SLICE_NS;
		ts = PyEval_SaveThread();
		f = rtl_loop_read(s->loop, slice);
		if (f) {
			uint32_t n = f->size < s->values_cap ? f->size : s->values_cap;

			/* The slot is ours until the next read. */
			memcpy(s->values, f->values, n);
			head = *f;
			head.size = n;
			got = true;
			rtl_loop_stats(s->loop, &st);
		} else {
			/* NULL before the slice is over: the loop stops. */
			stopped = rtl_time_now() - asked < slice;
		}
		PyEval_RestoreThread(ts);
		/* Any read ends the step before it. */
		s->in_step = false;
		if (got) {
			s->n.reads++;
			s->have = true;
			s->in_step = true;
			s->seq = head.seq;
			s->rx_ns = head.rx_ns;
			s->ctrl_time = head.ctrl_time;
			s->ctrl_skipped = head.ctrl_skipped;
			s->values_size = head.size;
			if (s->control)
				py_req_on_frame(s);
			if (st.ring_full == s->ring_full_seen || reread) {
				s->ring_full_seen = st.ring_full;
				s->life.busy = 0;
				return 1;
			}
			/* The ring was full since the last read: what it held
			 * last is old. The next frame is received after the
			 * take above drained it. */
			s->ring_full_seen = st.ring_full;
			s->n.rereads++;
			reread = true;
			if (deadline < rtl_time_now() + REREAD_MIN_NS)
				deadline = rtl_time_now() + REREAD_MIN_NS;
			continue;
		}
		if (stopped) {
			/* Still busy while the join runs without the GIL: no
			 * other thread may enter the loop meanwhile. */
			if (!s->life.closing)
				loop_ended(s);
			s->life.busy = 0;
			return s->life.closing ? 0 : py_rx_raise_ended(s, what);
		}
		if (rtl_time_now() >= deadline) {
			s->life.busy = 0;
			/* After a full ring, the old frame is still a frame. */
			return reread ? 1 : 0;
		}
		if (PyErr_CheckSignals() < 0) {
			s->life.busy = 0;
			return -1;
		}
	}
}

/* ---- values ------------------------------------------------------------------------- */

PyObject *py_rtde_value(const struct rtl_rtde_frame *fr, struct rtl_rtde_handle h)
{
	union rtl_rtde_value v;

	if (!rtl_rtde_frame_get(fr, h, &v)) {
		PyErr_Format(PyExc_SystemError, "rtloop: field %u is not in the frame", h.index);
		return NULL;
	}
	switch ((enum rtl_rtde_type)h.type) {
	case RTL_RTDE_TYPE_BOOL:
		return PyBool_FromLong(v.b);
	case RTL_RTDE_TYPE_UINT8:
		return PyLong_FromUnsignedLong(v.u8);
	case RTL_RTDE_TYPE_UINT32:
		return PyLong_FromUnsignedLong(v.u32);
	case RTL_RTDE_TYPE_UINT64:
		return PyLong_FromUnsignedLongLong(v.u64);
	case RTL_RTDE_TYPE_INT32:
		return PyLong_FromLong(v.i32);
	case RTL_RTDE_TYPE_DOUBLE:
		return PyFloat_FromDouble(v.d);
	case RTL_RTDE_TYPE_VECTOR3D:
		return py_array(v.v3d, 3, PY_F64);
	case RTL_RTDE_TYPE_VECTOR6D:
		return py_array(v.v6d, 6, PY_F64);
	case RTL_RTDE_TYPE_VECTOR6INT32:
		return py_array(v.v6i32, 6, PY_I32);
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		return py_array(v.v6u32, 6, PY_U32);
	default:
		PyErr_Format(PyExc_SystemError, "rtloop: field %u has no value type", h.index);
		return NULL;
	}
}

static PyObject *value_at(struct py_rx *s, unsigned i)
{
	struct rtl_rtde_frame fr = { s->values, s->values_size, s->values_cap };

	return py_rtde_value(&fr, s->handles[i]);
}

PyObject *py_rx_state(struct py_rx *s)
{
	PyObject *d = PyDict_New();

	for (unsigned i = 0; d && i < s->n_fields; i++) {
		PyObject *v = value_at(s, i);

		if (!v || PyDict_SetItem(d, PyTuple_GET_ITEM(s->names, i), v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

/*
 * What get() and state() read: a Control's the frame of its step (the last
 * read()); a Receive's the newest, as ur_rtde's interface gives it: a newer
 * frame if one has come (without waiting), else the one held while it is
 * younger than FRESH_PERIODS periods, else the next (waiting up to the
 * time-out, which also finds a loop that has ended).
 */
static int current(struct py_rx *s, const char *what)
{
	int64_t period, r;

	if (py_rx_check(s, what) < 0)
		return -1;
	if (s->control) {
		if (s->have)
			return 0;
		PyErr_Format(PyExc_ValueError,
			     "%s: no state yet: read() takes the newest state and starts a step",
			     what);
		return -1;
	}
	r = py_rx_take(s, 0, what);
	if (r != 0)
		return r < 0 ? -1 : 0;
	period = rtl_rtde_transport_base(s->tr)->period_ns;
	if (s->have && rtl_time_now() - s->rx_ns <= FRESH_PERIODS * period)
		return 0;
	r = py_rx_take(s, s->timeout_ns, what);
	if (r > 0)
		return 0;
	if (r == 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s: no data frame from the controller within %.3f s",
			 what, (double)s->timeout_ns / 1e9);
		py_raise(-ETIMEDOUT, msg);
	}
	return -1;
}

static PyObject *get_named(struct py_rx *s, PyObject *name, const char *what)
{
	PyObject *pos;

	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "%s: the field name must be a str, not %.80s", what,
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	if (py_rx_check(s, what) < 0)
		return NULL;
	pos = PyDict_GetItemWithError(s->index, name);
	if (!pos && !PyErr_Occurred()) {
		PyObject *sep = PyUnicode_FromString(", ");
		PyObject *list = sep ? PyUnicode_Join(sep, s->names) : NULL;

		if (list)
			PyErr_Format(PyExc_KeyError,
				     "%s: '%U' is not a field of this connection's output recipe; "
				     "its fields are: %U (name more with fields=...)",
				     what, name, list);
		Py_XDECREF(sep);
		Py_XDECREF(list);
		return NULL;
	}
	if (!pos)
		return NULL;
	if (current(s, what) < 0)
		return NULL;
	return value_at(s, (unsigned)PyLong_AsUnsignedLong(pos));
}

/* ---- methods ------------------------------------------------------------------------ */

#define RX(o) ((struct py_rx *)(o))

static PyObject *m_read(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	struct py_rx *s = RX(self);
	const char *what = s->control ? "rtloop.Control.read" : "rtloop.Receive.read";
	PyObject *to = Py_None;
	int64_t ns;
	double dflt;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:read", kwlist, &to))
		return NULL;
	dflt = (double)s->timeout_ns / 1e9;
	if (py_parse_seconds(to, what, "timeout", 0.0, &dflt, &ns) < 0)
		return NULL;
	r = py_rx_take(s, ns, what);
	if (r < 0)
		return NULL;
	if (r == 0) {
		s->n.timeouts++;
		Py_RETURN_NONE;
	}
	return py_rx_state(s);
}

static PyObject *m_get(PyObject *self, PyObject *name)
{
	return get_named(RX(self), name,
			 RX(self)->control ? "rtloop.Control.get" : "rtloop.Receive.get");
}

static PyObject *m_state(PyObject *self, PyObject *unused)
{
	struct py_rx *s = RX(self);

	(void)unused;
	if (current(s, s->control ? "rtloop.Control.state" : "rtloop.Receive.state") < 0)
		return NULL;
	return py_rx_state(s);
}

static PyObject *m_frame(PyObject *self, PyObject *unused)
{
	struct py_rx *s = RX(self);

	(void)unused;
	if (py_rx_check(s, s->control ? "rtloop.Control.frame" : "rtloop.Receive.frame") < 0)
		return NULL;
	if (!s->have)
		Py_RETURN_NONE;
	return Py_BuildValue("{s:K,s:L,s:d,s:I}", "seq", (unsigned long long)s->seq, "rx_ns",
			     (long long)s->rx_ns, "ctrl_time", s->ctrl_time, "ctrl_skipped",
			     (unsigned)s->ctrl_skipped);
}

/* The final figures of a closed connection: a copy the caller may change
 * (dicts two levels deep), or ValueError when it never opened. */
static PyObject *copy_or_closed(PyObject *final, const char *what)
{
	PyObject *out, *k, *v;
	Py_ssize_t pos = 0;

	if (!final) {
		PyErr_Format(PyExc_ValueError, "%s: the connection was never opened", what);
		return NULL;
	}
	if (!PyDict_Check(final))
		return Py_NewRef(final);
	out = PyDict_New();
	while (out && PyDict_Next(final, &pos, &k, &v)) {
		PyObject *c = PyDict_Check(v) ? PyDict_Copy(v) : Py_NewRef(v);

		if (!c || PyDict_SetItem(out, k, c) < 0)
			Py_CLEAR(out);
		Py_XDECREF(c);
	}
	return out;
}

/* After the close, a copy of the @final snapshot; while open, the @live one. */
static PyObject *final_or_live(struct py_rx *s, PyObject *final, const char *what,
			       PyObject *(*live)(struct py_rx *))
{
	if (!s->life.open)
		return copy_or_closed(final, what);
	return live(s);
}

static PyObject *m_stats(PyObject *self, PyObject *unused)
{
	(void)unused;
	return final_or_live(RX(self), RX(self)->final_stats, "rtloop.stats", live_stats);
}

static PyObject *m_histograms(PyObject *self, PyObject *unused)
{
	(void)unused;
	return final_or_live(RX(self), RX(self)->final_hists, "rtloop.histograms", live_hists);
}

static PyObject *m_report(PyObject *self, PyObject *unused)
{
	(void)unused;
	return final_or_live(RX(self), RX(self)->final_report, "rtloop.report", live_report);
}

static PyObject *m_close(PyObject *self, PyObject *unused)
{
	(void)unused;
	rx_close(RX(self), true);
	Py_RETURN_NONE;
}

static PyObject *m_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	if (py_rx_check(RX(self), "__enter__") < 0)
		return NULL;
	return Py_NewRef(self);
}

static PyObject *m_exit(PyObject *self, PyObject *args)
{
	(void)args;
	rx_close(RX(self), true);
	Py_RETURN_FALSE;
}

/* ur_rtde's getters, for the common fields (getActualQ() ...). */
#define GETTER(fn, field)                                                      \
	static PyObject *g_##fn(PyObject *self, PyObject *unused)              \
	{                                                                      \
		PyObject *name = PyUnicode_FromString(field);                  \
		PyObject *v;                                                   \
                                                                               \
		(void)unused;                                                  \
		if (!name)                                                     \
			return NULL;                                           \
		v = get_named(RX(self), name,                                  \
			      RX(self)->control ? "rtloop.Control." #fn "()"   \
						: "rtloop.Receive." #fn "()"); \
		Py_DECREF(name);                                               \
		return v;                                                      \
	}

GETTER(timestamp, "timestamp")
GETTER(target_q, "target_q")
GETTER(actual_q, "actual_q")
GETTER(actual_qd, "actual_qd")
GETTER(actual_tcp_pose, "actual_TCP_pose")
GETTER(actual_tcp_speed, "actual_TCP_speed")
GETTER(actual_tcp_force, "actual_TCP_force")
GETTER(robot_mode, "robot_mode")
GETTER(safety_mode, "safety_mode")
GETTER(runtime_state, "runtime_state")

#define GETTER_DOC(ur) \
	"The newest value of the field (ur_rtde: " ur "()); KeyError when not received."
#define GETTER_DEF(fn, ur)                                                  \
	{                                                                   \
		.ml_name = #fn, .ml_meth = g_##fn, .ml_flags = METH_NOARGS, \
		.ml_doc = #fn "($self, /)\n--\n\n" GETTER_DOC(ur)           \
	}

static PyMethodDef rx_methods[] = {
	{ "read", METH(m_read), METH_VARARGS | METH_KEYWORDS,
	  "read($self, /, timeout=None)\n--\n\nWait up to timeout seconds (None: the "
	  "connection's) for a frame newer than the last one taken and return its state; None "
	  "on time-out. rtloop.Error when the loop has ended (the connection).\n\nReturns: "
	  "dict or None." },
	{ "get", m_get, METH_O,
	  "get($self, name, /)\n--\n\nThe newest value of an output field: a NumPy array for "
	  "vectors, float or int for scalars.\n\nReturns: value." },
	{ "state", m_state, METH_NOARGS,
	  "state($self, /)\n--\n\nEvery field of the newest state.\n\nReturns: dict." },
	{ "frame", m_frame, METH_NOARGS,
	  "frame($self, /)\n--\n\nThe loop's header of the frame last taken: seq, rx_ns, "
	  "ctrl_time, ctrl_skipped.\n\nReturns: dict or None." },
	{ "stats", m_stats, METH_NOARGS,
	  "stats($self, /)\n--\n\nThe loop's counters (struct rtl_loop_counters, by C name), "
	  "with 'client', 'transport' and 'python' dicts. After close(): the final ones.\n\n"
	  "Returns: dict." },
	{ "histograms", m_histograms, METH_NOARGS,
	  "histograms($self, /)\n--\n\nname -> {count, min, p50, p90, p99, max, mean, unit}.\n"
	  "\nReturns: dict." },
	{ "report", m_report, METH_NOARGS,
	  "report($self, /)\n--\n\nThe loop's text report.\n\nReturns: str." },
	{ "close", m_close, METH_NOARGS,
	  "close($self, /)\n--\n\nStop the loop (the stop at exit) and free it; again: "
	  "nothing." },
	{ "__enter__", m_enter, METH_NOARGS, NULL },
	{ "__exit__", m_exit, METH_VARARGS, NULL },
	GETTER_DEF(timestamp, "getTimestamp"),
	GETTER_DEF(target_q, "getTargetQ"),
	GETTER_DEF(actual_q, "getActualQ"),
	GETTER_DEF(actual_qd, "getActualQd"),
	GETTER_DEF(actual_tcp_pose, "getActualTCPPose"),
	GETTER_DEF(actual_tcp_speed, "getActualTCPSpeed"),
	GETTER_DEF(actual_tcp_force, "getActualTCPForce"),
	GETTER_DEF(robot_mode, "getRobotMode"),
	GETTER_DEF(safety_mode, "getSafetyMode"),
	GETTER_DEF(runtime_state, "getRuntimeState"),
	{ NULL, NULL, 0, NULL },
};

static PyObject *p_closed(PyObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(!RX(self)->life.open);
}

static PyObject *p_fields(PyObject *self, void *unused)
{
	(void)unused;
	if (!RX(self)->names)
		Py_RETURN_NONE;
	return Py_NewRef(RX(self)->names);
}

static PyObject *p_frequency(PyObject *self, void *unused)
{
	(void)unused;
	return PyFloat_FromDouble(RX(self)->frequency);
}

static PyObject *p_version(PyObject *self, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(RX(self)->version);
}

static PyGetSetDef rx_getset[] = {
	{ "closed", p_closed, NULL, "True once closed (or never opened).", NULL },
	{ "fields", p_fields, NULL, "The output recipe's fields, in order.", NULL },
	{ "frequency", p_frequency, NULL, "The rate the controller sends at [Hz].", NULL },
	{ "controller_version", p_version, NULL, "The controller's version.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- the type ----------------------------------------------------------------------- */

static int parse_host(PyObject *o, const char *what, const char **out)
{
	Py_ssize_t len;

	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: host must be a str, not %.80s", what,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyUnicode_AsUTF8AndSize(o, &len);
	if (!*out)
		return -1;
	if (len == 0 || (size_t)len != strlen(*out)) {
		PyErr_Format(PyExc_ValueError, "%s: host must be a host name or an address, got %R",
			     what, o);
		return -1;
	}
	return 0;
}

/* Shared by both types' __init__: refuse a second one. */
int py_rx_begin(struct py_rx *s, const char *what)
{
	if (s->life.open || s->life.closed || s->life.busy) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "%s: this object was already opened; make a new one to connect again",
			 what);
		py_raise(-EALREADY, msg);
		return -1;
	}
	return 0;
}

int py_parse_host(PyObject *o, const char *what, const char **out)
{
	return parse_host(o, what, out);
}

static int rx_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "host", "port", "fields", "frequency", "timeout", NULL };
	static const char what[] = "rtloop.Receive";
	static const double dflt_timeout = 2.0;
	struct py_rx *s = RX(self);
	PyObject *host, *port = NULL, *fields = NULL, *freq = NULL, *to = Py_None;
	struct py_rx_opts o = { 0 };
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOO:Receive", kwlist, &host, &port, &fields,
					 &freq, &to))
		return -1;
	if (py_rx_begin(s, what) < 0 || parse_host(host, what, &o.host) < 0 ||
	    py_parse_port(port, what, &o.port) < 0 ||
	    py_parse_frequency(freq, what, &o.frequency) < 0 ||
	    py_parse_seconds(to, what, "timeout", 0.001, &dflt_timeout, &o.timeout_ns) < 0 ||
	    py_parse_fields(fields, what, &o.fields) < 0)
		return -1;
	ret = py_rx_open(s, &o);
	Py_DECREF(o.fields);
	return ret;
}

static void rx_dealloc(PyObject *self)
{
	struct py_rx *s = RX(self);

	/* Never closed: the stop at exit runs here. */
	rx_close(s, false);
	free(s->handles);
	free(s->values);
	Py_XDECREF(s->names);
	Py_XDECREF(s->index);
	Py_XDECREF(s->final_stats);
	Py_XDECREF(s->final_hists);
	Py_XDECREF(s->final_report);
	Py_TYPE(self)->tp_free(self);
}

PyTypeObject py_receive_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rtloop.Receive",
	.tp_basicsize = sizeof(struct py_rx),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc =
		"Receive(host, port=30004, *, fields=None, frequency=None, timeout=2.0)\n"
		"--\n\nThe controller's state over RTDE, read-only (ur_rtde: "
		"RTDEReceiveInterface). "
		"rtloop's C rx thread receives every frame; Python takes the newest. fields None: "
		"DEFAULT_FIELDS. "
		"docs/python.md.",
	.tp_new = PyType_GenericNew,
	.tp_init = rx_init,
	.tp_dealloc = rx_dealloc,
	.tp_methods = rx_methods,
	.tp_getset = rx_getset,
};

/* atexit: every connection still open (Receive, Control, Motion) is
 * stopped as close() would. */
static PyObject *close_all(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	py_open_close_all();
	Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
	{ "_close_all", close_all, METH_NOARGS,
	  "Close every open Receive, Control and Motion (registered with atexit)." },
	{ NULL, NULL, 0, NULL },
};

int py_receive_register(PyObject *module)
{
	PyObject *fields, *fn, *atexit, *r;

	if (PyType_Ready(&py_receive_type) < 0 || PyModule_AddType(module, &py_receive_type) < 0 ||
	    PyModule_AddFunctions(module, module_methods) < 0)
		return -1;
	fields = py_default_fields();
	if (!fields || PyModule_AddObjectRef(module, "DEFAULT_FIELDS", fields) < 0) {
		Py_XDECREF(fields);
		return -1;
	}
	Py_DECREF(fields);
	fn = PyObject_GetAttrString(module, "_close_all");
	atexit = PyImport_ImportModule("atexit");
	r = fn && atexit ? PyObject_CallMethod(atexit, "register", "O", fn) : NULL;
	Py_XDECREF(fn);
	Py_XDECREF(atexit);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}
