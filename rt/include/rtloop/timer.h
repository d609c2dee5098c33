/* SPDX-License-Identifier: MIT */
/*
 * Periodic timer on absolute deadlines.
 *
 * The logic is a step function over explicit state and explicit time
 * (rtl_timer_step), so tests drive it with a fake clock; rtl_timer_wait()
 * is the thin driver that sleeps with clock_nanosleep(TIMER_ABSTIME) and
 * then steps with the real clock. The next deadline is always the previous
 * deadline plus the period, never "now" plus the period, so lateness never
 * accumulates into drift.
 */
#ifndef RTLOOP_TIMER_H
#define RTLOOP_TIMER_H

#include <stdint.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* What to do after an overrun (a wake-up a whole period or more late). */
enum rtl_timer_policy {
	/* Run the missed cycles back to back: next deadline = last + period. */
	RTL_TIMER_CATCH_UP = 0,
	/* Drop the missed cycles (counted in .skipped): the next deadline is
	 * the first one on the original grid that lies after "now". */
	RTL_TIMER_SKIP = 1,
};

struct rtl_timer {
	int64_t period_ns;
	int64_t deadline_ns; /* the deadline the next wait sleeps until */
	enum rtl_timer_policy policy;
	uint64_t cycles;	  /* steps taken */
	uint64_t overruns;	  /* steps that came >= one period late */
	uint64_t skipped;	  /* periods dropped under RTL_TIMER_SKIP */
	int64_t last_lateness_ns; /* now - deadline at the last step */
	int64_t max_lateness_ns;
};

/*
 * Start a timer whose first deadline is @first_deadline_ns.
 * Returns 0, or -EINVAL when @t is NULL, @period_ns <= 0 or @policy is
 * unknown. RT-safe.
 */
RTL_API int rtl_timer_init(struct rtl_timer *t, int64_t first_deadline_ns, int64_t period_ns,
			   enum rtl_timer_policy policy);

/*
 * One cycle happened at time @now_ns, woken for t->deadline_ns. Records the
 * lateness (now - deadline; negative if woken early), counts an overrun when
 * it is a period or more, and moves t->deadline_ns to the next deadline per
 * the policy. Returns the lateness. RT-safe, pure (no clock, no syscalls).
 */
RTL_API int64_t rtl_timer_step(struct rtl_timer *t, int64_t now_ns);

/*
 * Sleep until t->deadline_ns on CLOCK_MONOTONIC, then rtl_timer_step() with
 * the time read on waking. Returns the lateness in ns (>= 0), or -errno if
 * the sleep failed. RT-safe (two system calls: sleep and clock read).
 */
RTL_API int64_t rtl_timer_wait(struct rtl_timer *t);

RTL_END_DECLS

#endif /* RTLOOP_TIMER_H */
