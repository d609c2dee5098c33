// SPDX-License-Identifier: MIT
/*
 * ctf: read an LTTng trace directory with libbabeltrace2.
 *
 * LTTng writes one CTF trace per buffer domain below the session's output
 * (ust/uid/0/64-bit/, or one per process with per-pid buffers), each a
 * directory with a "metadata" file and one stream file per CPU and
 * channel. source.ctf.fs reads the trace directories it is given but does
 * not search for them (the babeltrace2 CLI does that itself), so this file
 * first walks the directory for "metadata" files, then builds the graph
 *
 *     source.ctf.fs (all the traces) --N ports--> filter.utils.muxer
 *                                                   --> simple sink
 *
 * The muxer puts the streams of every CPU back into one time order; the
 * simple sink (bt_graph_add_simple_sink_component) is a consume callback
 * that pulls message batches and turns each event into an rtt_event for
 * the analysis. Event classes are looked up by name once and cached by
 * pointer, since a trace has a dozen classes and millions of events.
 * Discarded-events and discarded-packets messages (the tracer's ring buffer
 * was full) are counted as losses.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <babeltrace2/babeltrace.h>

#include "trace.h"

#define MAX_TRACES 256
#define MAX_CLASSES 64

struct reader {
	struct rtt_analysis *a;
	int err; /* -errno from the analysis */
	struct {
		const bt_event_class *ec;
		int kind;
	} cache[MAX_CLASSES];
	int ncache;
	bool no_clock;
};

/* ---- finding the traces -------------------------------------------------- */

/* nftw() has no user pointer: the walk's state lives here, for one walk. */
static char *found[MAX_TRACES];
static int nfound;

static int on_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;

	if (type != FTW_F || strcmp(base, "metadata") != 0 || nfound >= MAX_TRACES)
		return 0;
	found[nfound] = strndup(path, (size_t)ftw->base ? (size_t)ftw->base - 1 : 0);
	if (!found[nfound])
		return -1;
	nfound++;
	return 0;
}

static void free_found(void)
{
	for (int i = 0; i < nfound; i++)
		free(found[i]);
	nfound = 0;
}

/* LTTng creates ust/ (or kernel/) below the output even when no event
 * was recorded: tell that apart from a directory that was never a trace. */
static bool is_session_output(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ust", dir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	snprintf(path, sizeof(path), "%s/kernel", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- events ------------------------------------------------------------------ */

static int kind_of(const char *name)
{
	static const struct {
		const char *name;
		int kind;
	} map[] = {
		{ "rtloop:frame_received", RTT_RECEIVED },
		{ "rtloop:frame_decoded", RTT_DECODED },
		{ "rtloop:frame_committed", RTT_COMMITTED },
		{ "rtloop:worker_woke", RTT_WOKE },
		{ "rtloop:step_started", RTT_STEP_STARTED },
		{ "rtloop:step_finished", RTT_STEP_FINISHED },
		{ "rtloop:package_sent", RTT_EV_SENT },
		{ "rtloop:package_suppressed", RTT_EV_SUPPRESSED },
		{ "rtloop:skipped", RTT_EV_SKIPPED },
		{ "rtloop:watchdog_fired", RTT_EV_WATCHDOG },
		{ "rtloop:reconnect", RTT_EV_RECONNECT },
		{ "rtloop:text", RTT_EV_TEXT },
	};

	if (!name)
		return RTT_EV_OTHER;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(name, map[i].name) == 0)
			return map[i].kind;
	return RTT_EV_OTHER;
}

static int class_kind(struct reader *r, const bt_event_class *ec)
{
	int kind;

	for (int i = 0; i < r->ncache; i++)
		if (r->cache[i].ec == ec)
			return r->cache[i].kind;
	kind = kind_of(bt_event_class_get_name(ec));
	if (r->ncache < MAX_CLASSES) {
		r->cache[r->ncache].ec = ec;
		r->cache[r->ncache].kind = kind;
		r->ncache++;
	}
	return kind;
}

/* Integer (or enumeration) member @name of structure @s; false if absent. */
static bool get_int(const bt_field *s, const char *name, int64_t *v)
{
	const bt_field *f;
	bt_field_class_type t;

	if (!s)
		return false;
	f = bt_field_structure_borrow_member_field_by_name_const(s, name);
	if (!f)
		return false;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		*v = bt_field_integer_signed_get_value(f);
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		*v = (int64_t)bt_field_integer_unsigned_get_value(f);
	else
		return false;
	return true;
}

static bool get_uint(const bt_field *s, const char *name, uint64_t *v)
{
	const bt_field *f;

	if (!s)
		return false;
	f = bt_field_structure_borrow_member_field_by_name_const(s, name);
	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f),
					  BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return false;
	*v = bt_field_integer_unsigned_get_value(f);
	return true;
}

static int on_event(struct reader *r, const bt_message *m)
{
	const bt_event *e = bt_message_event_borrow_event_const(m);
	const bt_field *payload, *ctx;
	struct rtt_event ev = { .vpid = -1 };
	int64_t v;

	ev.kind = class_kind(r, bt_event_borrow_class_const(e));
	if (!bt_message_event_borrow_stream_class_default_clock_class_const(m) ||
	    bt_clock_snapshot_get_ns_from_origin(
		    bt_message_event_borrow_default_clock_snapshot_const(m), &ev.ts_ns) !=
		    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
		r->no_clock = true;
		return -EINVAL;
	}
	ctx = bt_event_borrow_common_context_field_const(e);
	if (get_int(ctx, "vpid", &v))
		ev.vpid = v;
	payload = bt_event_borrow_payload_field_const(e);
	switch (ev.kind) {
	case RTT_EV_SKIPPED:
		get_uint(payload, "count", &ev.count);
		if (!get_int(payload, "reason", &ev.value))
			ev.value = -1;
		break;
	case RTT_EV_WATCHDOG:
		get_uint(payload, "last_seq", &ev.seq);
		get_uint(payload, "periods_missed", &ev.count);
		break;
	case RTT_EV_RECONNECT:
		get_int(payload, "result", &ev.value);
		break;
	case RTT_EV_TEXT:
	case RTT_EV_OTHER:
		break;
	default:
		/* a per-frame event without its seq cannot be paired */
		if (!get_uint(payload, "seq", &ev.seq))
			ev.kind = RTT_EV_OTHER;
		break;
	}
	if (ev.kind == RTT_EV_SKIPPED)
		get_uint(payload, "seq", &ev.seq);
	return rtt_analysis_add(r->a, &ev);
}

/* How many events (or, with @packets, packets) a discarded-items message
 * @m counts: LTTng always knows the count; 1 when it does not. */
static uint64_t discarded_count(const bt_message *m, bool packets)
{
	uint64_t count;
	bt_property_availability have = packets ? bt_message_discarded_packets_get_count(m, &count)
						: bt_message_discarded_events_get_count(m, &count);

	return have == BT_PROPERTY_AVAILABILITY_AVAILABLE ? count : 1;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
								  void *data)
{
	struct reader *r = data;
	bt_message_array_const msgs;
	uint64_t n;
	int err = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++) {
		const bt_message *m = msgs[i];

		switch (bt_message_get_type(m)) {
		case BT_MESSAGE_TYPE_EVENT:
			if (!err)
				err = on_event(r, m);
			break;
		case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
			rtt_analysis_discarded(r->a, discarded_count(m, false), false);
			break;
		case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
			rtt_analysis_discarded(r->a, discarded_count(m, true), true);
			break;
		default:
			break;
		}
		/* the batch's references are ours to put, all of them */
		bt_message_put_ref(m);
	}
	if (err) {
		r->err = err;
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- the graph ---------------------------------------------------------------- */

/* Append libbabeltrace2's own explanation (its error causes) to @msg. */
static void take_bt_error(char *msg, size_t len)
{
	const bt_error *e = bt_current_thread_take_error();
	size_t used = strlen(msg);

	if (!e)
		return;
	/* The causes a component (the CTF reader) gave say what is wrong with
	 * the trace; the library's own ones only repeat that it failed. */
	for (uint64_t i = 0; i < bt_error_get_cause_count(e) && used + 1 < len; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
		const char *m = bt_error_cause_get_message(c);

		if (bt_error_cause_get_actor_type(c) != BT_ERROR_CAUSE_ACTOR_TYPE_COMPONENT &&
		    i > 0)
			continue;
		snprintf(msg + used, len - used, "\n  babeltrace2: %s", m ? m : "?");
		used = strlen(msg);
	}
	bt_error_release(e);
}

static const bt_plugin *find_plugin(const char *name)
{
	const bt_plugin *p = NULL;

	if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) !=
	    BT_PLUGIN_FIND_STATUS_OK)
		return NULL;
	return p;
}

int rtt_ctf_read(const char *dir, struct rtt_analysis *a, char *msg, size_t len)
{
	struct reader r = { .a = a };
	const bt_plugin *ctf = NULL, *utils = NULL;
	const bt_component_class_source *src_cls;
	const bt_component_class_filter *mux_cls;
	const bt_component_source *src;
	const bt_component_filter *mux;
	bt_value *params = NULL, *inputs = NULL;
	bt_graph *graph = NULL;
	bt_graph_run_status st;
	struct stat sb;
	int err = -EIO;

	msg[0] = '\0';
	if (stat(dir, &sb) != 0) {
		err = -errno;
		snprintf(msg, len,
			 "%s: %s; give the directory " RTT_PROG " record wrote (its --output)", dir,
			 strerror(-err));
		return err;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(msg, len,
			 "%s: not a directory; give the directory " RTT_PROG
			 " record wrote (its --output)",
			 dir);
		return -ENOTDIR;
	}
	nfound = 0;
	if (nftw(dir, on_file, 32, FTW_PHYS) != 0) {
		err = errno ? -errno : -EIO;
		snprintf(msg, len, "%s: cannot search it for traces: %s", dir, strerror(-err));
		goto out;
	}
	if (nfound == 0 && is_session_output(dir)) {
		err = -ENOENT;
		snprintf(msg, len,
			 "%s: the LTTng session recorded no event; was the program built with "
			 "tracing (meson -Dtracing=enabled) and linked with librtloop's static "
			 "library, and did it run while the session was recording?",
			 dir);
		goto out;
	}
	if (nfound == 0) {
		err = -ENOENT;
		snprintf(msg, len,
			 "%s: no CTF trace found (no 'metadata' file below it); record one with "
			 "'" RTT_PROG " record --output %s -- COMMAND'",
			 dir, dir);
		goto out;
	}

	ctf = find_plugin("ctf");
	utils = find_plugin("utils");
	if (!ctf || !utils) {
		snprintf(msg, len,
			 "cannot load the babeltrace2 '%s' plugin; install babeltrace2's plugins "
			 "(Debian: libbabeltrace2-0) or set BABELTRACE_PLUGIN_PATH",
			 ctf ? "utils" : "ctf");
		goto out;
	}
	src_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	graph = bt_graph_create(0);
	params = bt_value_map_create();
	if (!src_cls || !mux_cls || !graph || !params ||
	    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		snprintf(msg, len, "cannot set up the babeltrace2 graph");
		goto out;
	}
	for (int i = 0; i < nfound; i++) {
		if (bt_value_array_append_string_element(inputs, found[i]) !=
		    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
			err = -ENOMEM;
			snprintf(msg, len, "out of memory");
			goto out;
		}
	}
	if (bt_graph_add_source_component(graph, src_cls, "src", params, BT_LOGGING_LEVEL_NONE,
					  &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		snprintf(msg, len,
			 "%s: not a readable CTF trace (source.ctf.fs refused %s); is it an LTTng "
			 "trace directory, complete (session stopped)?",
			 dir, found[0]);
		take_bt_error(msg, len);
		goto out;
	}
	if (bt_graph_add_filter_component(graph, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_NONE,
					  &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		snprintf(msg, len, "cannot add the muxer to the babeltrace2 graph");
		take_bt_error(msg, len);
		goto out;
	}
	/* The muxer adds a new input port each time one gets connected. */
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
		const bt_port_output *out =
			bt_component_source_borrow_output_port_by_index_const(src, i);
		const bt_port_input *in =
			bt_component_filter_borrow_input_port_by_index_const(mux, i);

		if (!in || bt_graph_connect_ports(graph, out, in, NULL) !=
				   BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			snprintf(msg, len, "cannot connect the babeltrace2 graph");
			take_bt_error(msg, len);
			goto out;
		}
	}
	{
		const bt_component_sink *sink;
		const bt_port_output *mux_out =
			bt_component_filter_borrow_output_port_by_name_const(mux, "out");

		if (bt_graph_add_simple_sink_component(graph, "rtloop-trace", NULL, consume, NULL,
						       &r,
						       &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
		    !mux_out ||
		    bt_graph_connect_ports(
			    graph, mux_out,
			    bt_component_sink_borrow_input_port_by_index_const(sink, 0),
			    NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			snprintf(msg, len, "cannot connect the babeltrace2 sink");
			take_bt_error(msg, len);
			goto out;
		}
	}

	do
		st = bt_graph_run(graph);
	while (st == BT_GRAPH_RUN_STATUS_AGAIN);
	if (st != BT_GRAPH_RUN_STATUS_OK) {
		if (r.err == -ENOMEM) {
			err = -ENOMEM;
			snprintf(msg, len, "%s: out of memory while reading the trace", dir);
		} else if (r.no_clock) {
			err = -EINVAL;
			snprintf(msg, len, "%s: events without a timestamp: not an LTTng trace?",
				 dir);
		} else {
			snprintf(msg, len, "%s: cannot read the trace (corrupt or incomplete?)",
				 dir);
		}
		take_bt_error(msg, len);
		goto out;
	}
	err = 0;
out:
	bt_value_put_ref(params);
	bt_graph_put_ref(graph);
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	free_found();
	return err;
}
