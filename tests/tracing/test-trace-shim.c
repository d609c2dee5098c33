// SPDX-License-Identifier: MIT
/*
 * With tracing compiled out, every rtl_trace_*() macro is a statement that
 * evaluates nothing. RTL_HAVE_TRACING is forced to 0 here, so this holds in
 * every build, whatever the "tracing" option says.
 */
#define RTL_HAVE_TRACING 0
#include <criterion/criterion.h>

#include "rtl_trace.h"

/* Compiled out, "enabled" is a constant expression: guarded blocks vanish. */
_Static_assert(!rtl_trace_enabled(frame_received), "rtl_trace_enabled() must be constant 0");

static int calls;

static uint64_t side_effect(void)
{
	calls++;
	return 42;
}

Test(trace_shim, arguments_are_never_evaluated)
{
	/* one counter per argument position: n[i]++ twice in one call would be
	 * undefined behaviour if it ran */
	uint64_t seq = 7;
	int n[3] = { 0, 0, 0 };

	calls = 0;
	rtl_trace_frame_received(seq++, (double)n[0]++, (int64_t)n[1]++, (uint32_t)n[2]++);
	rtl_trace_frame_decoded(seq++, (uint8_t)n[0]++);
	rtl_trace_frame_committed(seq++, (uint32_t)n[0]++);
	rtl_trace_worker_woke(seq++, (int64_t)n[0]++);
	rtl_trace_step_started(seq++);
	rtl_trace_step_finished(seq++, (int64_t)n[0]++);
	rtl_trace_package_sent(seq++, (uint8_t)n[0]++, (uint32_t)n[1]++);
	rtl_trace_package_suppressed(seq++, (uint8_t)n[0]++, (uint32_t)n[1]++);
	rtl_trace_skipped(seq++, (uint32_t)n[0]++, RTL_TRACE_SKIP_RING_FULL);
	rtl_trace_watchdog_fired(seq++, (uint32_t)n[0]++);
	rtl_trace_reconnect((uint32_t)n[0]++, (int32_t)n[1]++);
	rtl_trace_motion_event(seq++, (uint32_t)n[0]++);
	rtl_trace_text(n[0]++, "never");
	rtl_trace_step_started(side_effect());
	cr_assert_eq(seq, 7, "a sequence argument was evaluated");
	cr_assert(n[0] == 0 && n[1] == 0 && n[2] == 0, "a field argument was evaluated");
	cr_assert_eq(calls, 0, "a function in an argument was called");
}

Test(trace_shim, macros_are_single_statements)
{
	int taken = 0;

	/* Unbraced if/else around a macro only compiles and branches right if
	 * the macro is one statement (the do { } while (0) idiom). */
	if (taken)
		rtl_trace_step_started(1);
	else
		taken = 1;
	cr_assert_eq(taken, 1);
	for (int i = 0; i < 3; i++)
		rtl_trace_step_finished((uint64_t)i, 0);
}

Test(trace_shim, enabled_is_false_and_guards_skip_costly_arguments)
{
	int computed = 0;

	if (rtl_trace_enabled(worker_woke)) {
		computed = 1;
		rtl_trace_worker_woke(1, 0);
	}
	cr_assert_eq(computed, 0);
}

Test(trace_shim, skip_reasons_have_their_documented_values)
{
	/* The values are the trace format: analyses match on them. */
	cr_assert_eq(RTL_TRACE_SKIP_CONTROLLER, 0);
	cr_assert_eq(RTL_TRACE_SKIP_WORKER, 1);
	cr_assert_eq(RTL_TRACE_SKIP_RING_FULL, 2);
	cr_assert_eq(RTL_TRACE_NO_RX_TS, -1);
}
