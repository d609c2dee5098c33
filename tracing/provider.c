/* SPDX-License-Identifier: MIT */
/*
 * The one compile unit that creates the "rtloop" LTTng-UST probes and
 * defines the tracepoints (built only when the "tracing" feature is on).
 *
 * LTTNG_UST_TRACEPOINT_CREATE_PROBES makes lttng/tracepoint-event.h re-read
 * rtl_trace_provider.h to generate the probe functions and the event
 * descriptions, plus a constructor that registers them with liblttng-ust.
 * LTTNG_UST_TRACEPOINT_DEFINE emits the tracepoint structures (the
 * per-event "enabled" word the call sites test) and a constructor that
 * registers them. Both live in this one file so that any call site pulls the
 * whole provider out of the static archive: the call sites reference the
 * tracepoint structures, and the structures reference the provider symbol.
 * Both sets of symbols are hidden (see rtl_trace.h): they are not part of
 * librtloop's ABI.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "rtl_trace.h"
