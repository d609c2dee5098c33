/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST provider "rtloop": the event definitions.
 *
 * Include rtl_trace.h, never this file: rtl_trace.h decides whether tracing
 * is compiled in, sets the symbol visibility and defines the enums used
 * here. LTTng reads this header several times (LTTNG_UST_TRACEPOINT_HEADER_
 * MULTI_READ), each time with the field macros redefined: once for the
 * declarations every caller sees, and, in provider.c only, once more per
 * generated piece of the probe (event descriptions, field sizes, the
 * serialising functions). Hence the unusual include guard.
 *
 * Field types are fixed-width and match the rtl_trace_nop_* sinks of
 * rtl_trace.h one for one; docs/tracing.md lists them. Log levels let a
 * session record only the exceptions: per-frame events are DEBUG, text is
 * INFO, skips, watchdog, reconnects and motion events are WARNING.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER rtloop

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "rtl_trace_provider.h"

#if !defined(RTL_TRACE_PROVIDER_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define RTL_TRACE_PROVIDER_H

#ifndef RTL_TRACE_H
#error "include rtl_trace.h, not rtl_trace_provider.h"
#endif

#include <stdint.h>

#include <lttng/tracepoint.h>

/* The event DSL is not C that clang-format understands: laid out by hand. */
/* clang-format off */
LTTNG_UST_TRACEPOINT_ENUM(rtloop, skip_reason,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("controller", RTL_TRACE_SKIP_CONTROLLER)
		lttng_ust_field_enum_value("worker", RTL_TRACE_SKIP_WORKER)
		lttng_ust_field_enum_value("ring_full", RTL_TRACE_SKIP_RING_FULL)))

/* ---- per frame, in the order a frame meets them ------------------------- */

LTTNG_UST_TRACEPOINT_EVENT(rtloop, frame_received,
	LTTNG_UST_TP_ARGS(uint64_t, seq, double, ctrl_ts, int64_t, rx_ns, uint32_t, bytes),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_float(double, ctrl_ts, ctrl_ts)
		lttng_ust_field_integer(int64_t, rx_ns, rx_ns)
		lttng_ust_field_integer(uint32_t, bytes, bytes)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, frame_decoded,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint8_t, recipe),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint8_t, recipe, recipe)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, frame_committed,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint32_t, fill),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint32_t, fill, fill)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, worker_woke,
	LTTNG_UST_TP_ARGS(uint64_t, seq, int64_t, lateness_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(int64_t, lateness_ns, lateness_ns)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, step_started,
	LTTNG_UST_TP_ARGS(uint64_t, seq),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, step_finished,
	LTTNG_UST_TP_ARGS(uint64_t, seq, int64_t, duration_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(int64_t, duration_ns, duration_ns)))

/* Sent and suppressed packages carry the same fields: one class, two
 * events (a class alone records nothing). */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(rtloop, package,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint8_t, recipe, uint32_t, bytes),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint8_t, recipe, recipe)
		lttng_ust_field_integer(uint32_t, bytes, bytes)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtloop, package, rtloop, package_sent,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint8_t, recipe, uint32_t, bytes))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtloop, package, rtloop, package_suppressed,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint8_t, recipe, uint32_t, bytes))

/* ---- exceptions --------------------------------------------------------- */

LTTNG_UST_TRACEPOINT_EVENT(rtloop, skipped,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint32_t, count, int, reason),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint32_t, count, count)
		lttng_ust_field_enum(rtloop, skip_reason, int, reason, reason)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, watchdog_fired,
	LTTNG_UST_TP_ARGS(uint64_t, last_seq, uint32_t, periods_missed),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, last_seq, last_seq)
		lttng_ust_field_integer(uint32_t, periods_missed, periods_missed)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, reconnect,
	LTTNG_UST_TP_ARGS(uint32_t, attempt, int32_t, result),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, attempt, attempt)
		lttng_ust_field_integer(int32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, motion_event,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint32_t, events),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint32_t, events, events)))

LTTNG_UST_TRACEPOINT_EVENT(rtloop, text,
	LTTNG_UST_TP_ARGS(int32_t, level, const char *, msg),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, level, level)
		lttng_ust_field_string(msg, msg)))

LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, frame_received, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, frame_decoded, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, frame_committed, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, worker_woke, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, step_started, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, step_finished, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, package_sent, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, package_suppressed, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, skipped, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, watchdog_fired, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, reconnect, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, motion_event, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)
LTTNG_UST_TRACEPOINT_LOGLEVEL(rtloop, text, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)
/* clang-format on */

#endif /* RTL_TRACE_PROVIDER_H */

#include <lttng/tracepoint-event.h>
