// SPDX-License-Identifier: MIT
/*
 * Periodic timer: pure step logic plus a two-line driver.
 *
 * rtl_timer_step() is the whole policy. On a wake-up at "now" for deadline
 * D with period P:
 *   lateness = now - D
 *   overrun  = lateness >= P (a whole period or more was lost)
 *   CATCH_UP: next = D + P, even if that is already past, so every cycle
 *             runs (back to back until the loop has caught up);
 *   SKIP:     next = D + (k + 1) * P with k = floor(lateness / P), the first
 *             deadline on the original grid after now; the k cycles in
 *             between are counted as skipped and never run.
 * Both keep the grid D0 + n*P: lateness never turns into drift.
 */
#include <errno.h>

#include <rtloop/time.h>
#include <rtloop/timer.h>

RTL_API int rtl_timer_init(struct rtl_timer *t, int64_t first_deadline_ns, int64_t period_ns,
			   enum rtl_timer_policy policy)
{
	if (!t || period_ns <= 0)
		return -EINVAL;
	if (policy != RTL_TIMER_CATCH_UP && policy != RTL_TIMER_SKIP)
		return -EINVAL;
	*t = (struct rtl_timer){
		.period_ns = period_ns,
		.deadline_ns = first_deadline_ns,
		.policy = policy,
	};
	return 0;
}

RTL_API int64_t rtl_timer_step(struct rtl_timer *t, int64_t now_ns)
{
	int64_t late = now_ns - t->deadline_ns;
	int64_t missed = 0;

	t->cycles++;
	t->last_lateness_ns = late;
	if (late > t->max_lateness_ns)
		t->max_lateness_ns = late;
	if (late >= t->period_ns) {
		t->overruns++;
		if (t->policy == RTL_TIMER_SKIP) {
			missed = late / t->period_ns;
			t->skipped += (uint64_t)missed;
		}
	}
	t->deadline_ns += (missed + 1) * t->period_ns;
	return late;
}

RTL_API int64_t rtl_timer_wait(struct rtl_timer *t)
{
	int ret = rtl_time_sleep_until(t->deadline_ns);
	int64_t late;

	if (ret < 0)
		return ret;
	late = rtl_timer_step(t, rtl_time_now());
	return late < 0 ? 0 : late;
}
