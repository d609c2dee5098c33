/* SPDX-License-Identifier: MIT */
/*
 * Tracepoints of the control loop (internal; not installed).
 *
 * One LTTng-UST provider, "rtloop", with an event at every stage a frame
 * goes through: received, decoded, committed to the ring, worker woke, step
 * started and finished, package sent or suppressed; plus the exceptions
 * (skipped frames, watchdog, reconnect, the motion events a step reported)
 * and a slow-path text event. Every
 * per-frame event carries the frame's sequence number (uint64), so an
 * analysis pairs the events of one frame by "seq" and reads the time between
 * stages off the event timestamps (LTTng's clock is CLOCK_MONOTONIC).
 *
 * Loop code calls the rtl_trace_<event>() macros below and nothing else.
 * How they compile depends on RTL_HAVE_TRACING (rtl-config.h, from the
 * "tracing" feature option):
 *
 * - 1: each macro is lttng_ust_tracepoint(rtloop, <event>, ...). LTTng's
 *   design makes an event that no session records cost one load of a
 *   per-event "enabled" word and a not-taken branch, hinted unlikely; the
 *   arguments are evaluated only inside that branch, that is, only while a
 *   session records the event. Recording costs a probe call that reserves
 *   space in a per-CPU lock-free ring buffer and copies the fields: no
 *   locks, no allocation, no system call (docs/tracing.md has the figures).
 *
 * - 0: each macro is a statement that does nothing and evaluates nothing:
 *   the arguments sit in a call to a typed, empty inline function under
 *   if (0), so they are still type-checked (a call that compiles one way
 *   compiles the other) and count as used (no unused-variable warnings at
 *   call sites), but never run. No binary links liblttng-ust.
 *
 * In both cases an argument is evaluated at most once and possibly never:
 * never pass an expression with side effects. Where an argument is costly
 * to compute (an extra clock read), guard it with rtl_trace_enabled(event),
 * which is the constant 0 when tracing is compiled out.
 *
 * Every macro is RT-safe: no allocation, no locks, no system calls (with
 * tracing compiled in, the first event of a thread may take a page fault on
 * its per-CPU buffer unless the memory is pre-faulted; see docs/tracing.md).
 */
#ifndef RTL_TRACE_H
#define RTL_TRACE_H

#include <stdint.h>

#ifndef RTL_HAVE_TRACING
#include "rtl-config.h"
#endif

/* Why frames were skipped (the "reason" field of rtloop:skipped). */
enum rtl_trace_skip_reason {
	/* The controller did not send them (a gap in its timestamps or
	 * control step counter). */
	RTL_TRACE_SKIP_CONTROLLER = 0,
	/* The worker took only the newest frame and dropped older ones. */
	RTL_TRACE_SKIP_WORKER = 1,
	/* The rx thread found the ring full and dropped the frame. */
	RTL_TRACE_SKIP_RING_FULL = 2,
};

/* rx_ns of rtl_trace_frame_received() when the transport gave no kernel
 * receive timestamp. */
#define RTL_TRACE_NO_RX_TS INT64_C(-1)

#if RTL_HAVE_TRACING

/* All call sites live in the module that defines the tracepoints
 * (librtloop, or a program linking its static archive): keep the
 * tracepoint and provider symbols out of the shared library's ABI. */
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#define LTTNG_UST_TRACEPOINT_PROVIDER_HIDDEN_DEFINITION
#include "rtl_trace_provider.h"

#define RTL_TRACE_EVENT_(event, ...) lttng_ust_tracepoint(rtloop, event, __VA_ARGS__)
#define rtl_trace_enabled(event) lttng_ust_tracepoint_enabled(rtloop, event)

#else /* !RTL_HAVE_TRACING */

/*
 * The typed sinks for the compiled-out macros: one per event, with the
 * event's argument types, never called at run time. Their parameters are
 * unused by design; say so once instead of in thirteen bodies.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static inline void rtl_trace_nop_frame_received(uint64_t seq, double ctrl_ts, int64_t rx_ns,
						uint32_t bytes)
{
}

static inline void rtl_trace_nop_frame_decoded(uint64_t seq, uint8_t recipe)
{
}

static inline void rtl_trace_nop_frame_committed(uint64_t seq, uint32_t fill)
{
}

static inline void rtl_trace_nop_worker_woke(uint64_t seq, int64_t lateness_ns)
{
}

static inline void rtl_trace_nop_step_started(uint64_t seq)
{
}

static inline void rtl_trace_nop_step_finished(uint64_t seq, int64_t duration_ns)
{
}

static inline void rtl_trace_nop_package_sent(uint64_t seq, uint8_t recipe, uint32_t bytes)
{
}

static inline void rtl_trace_nop_package_suppressed(uint64_t seq, uint8_t recipe, uint32_t bytes)
{
}

static inline void rtl_trace_nop_skipped(uint64_t seq, uint32_t count, int reason)
{
}

static inline void rtl_trace_nop_watchdog_fired(uint64_t last_seq, uint32_t periods_missed)
{
}

static inline void rtl_trace_nop_reconnect(uint32_t attempt, int32_t result)
{
}

static inline void rtl_trace_nop_motion_event(uint64_t seq, uint32_t events)
{
}

static inline void rtl_trace_nop_text(int32_t level, const char *msg)
{
}
#pragma GCC diagnostic pop

/* if (0): type-checked, "used", never evaluated; folded away at -O0 too. */
#define RTL_TRACE_EVENT_(event, ...)                        \
	do {                                                \
		if (0)                                      \
			rtl_trace_nop_##event(__VA_ARGS__); \
	} while (0)
#define rtl_trace_enabled(event) 0

#endif /* RTL_HAVE_TRACING */

/* The rx thread read frame @seq: @bytes on the wire, the controller's own
 * timestamp @ctrl_ts (s), the kernel receive time @rx_ns (ns, as
 * SO_TIMESTAMPNS gives it) or RTL_TRACE_NO_RX_TS. */
#define rtl_trace_frame_received(seq, ctrl_ts, rx_ns, bytes) \
	RTL_TRACE_EVENT_(frame_received, seq, ctrl_ts, rx_ns, bytes)

/* Frame @seq was decoded with output recipe @recipe. */
#define rtl_trace_frame_decoded(seq, recipe) RTL_TRACE_EVENT_(frame_decoded, seq, recipe)

/* Frame @seq was committed to the ring, which then held @fill frames. */
#define rtl_trace_frame_committed(seq, fill) RTL_TRACE_EVENT_(frame_committed, seq, fill)

/* The worker woke for frame @seq, @lateness_ns after what woke it (the
 * frame's commit, or the timer deadline); negative if early. */
#define rtl_trace_worker_woke(seq, lateness_ns) RTL_TRACE_EVENT_(worker_woke, seq, lateness_ns)

/* The user's step callback starts on frame @seq. */
#define rtl_trace_step_started(seq) RTL_TRACE_EVENT_(step_started, seq)

/* The user's step callback on frame @seq returned after @duration_ns. */
#define rtl_trace_step_finished(seq, duration_ns) RTL_TRACE_EVENT_(step_finished, seq, duration_ns)

/* Input recipe @recipe, answering frame @seq, was sent: @bytes on the wire. */
#define rtl_trace_package_sent(seq, recipe, bytes) \
	RTL_TRACE_EVENT_(package_sent, seq, recipe, bytes)

/* The coalescer did not send input recipe @recipe for frame @seq because
 * nothing in it changed; @bytes is what sending it would have cost. */
#define rtl_trace_package_suppressed(seq, recipe, bytes) \
	RTL_TRACE_EVENT_(package_suppressed, seq, recipe, bytes)

/* @count frames before frame @seq were lost, for @reason (an enum
 * rtl_trace_skip_reason). */
#define rtl_trace_skipped(seq, count, reason) RTL_TRACE_EVENT_(skipped, seq, count, reason)

/* No frame arrived for @periods_missed periods after frame @last_seq. */
#define rtl_trace_watchdog_fired(last_seq, periods_missed) \
	RTL_TRACE_EVENT_(watchdog_fired, last_seq, periods_missed)

/* Connection attempt @attempt ended with @result (0, or -errno). */
#define rtl_trace_reconnect(attempt, result) RTL_TRACE_EVENT_(reconnect, attempt, result)

/* The step of frame @seq raised motion events @events (bit
 * 1u << enum rtl_motion_event each: 1 time-out, 2 loss, 4 limit,
 * 8 stopped), from rtl_motion_loop_step(). */
#define rtl_trace_motion_event(seq, events) RTL_TRACE_EVENT_(motion_event, seq, events)

/* A line of text at @level (the rtloop log level, or the controller's
 * message level). Copies the string: slow path only, never per frame. */
#define rtl_trace_text(level, msg) RTL_TRACE_EVENT_(text, level, msg)

#endif /* RTL_TRACE_H */
