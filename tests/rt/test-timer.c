// SPDX-License-Identifier: MIT
/* The periodic timer's step logic, on a fake clock. */
#include <criterion/criterion.h>
#include <errno.h>

#include <rtloop/time.h>
#include <rtloop/timer.h>

#define P 1000 /* period, fake ns */

Test(timer, init_rejects_bad_arguments)
{
	struct rtl_timer t;

	cr_assert_eq(rtl_timer_init(NULL, 0, P, RTL_TIMER_SKIP), -EINVAL);
	cr_assert_eq(rtl_timer_init(&t, 0, 0, RTL_TIMER_SKIP), -EINVAL);
	cr_assert_eq(rtl_timer_init(&t, 0, -5, RTL_TIMER_SKIP), -EINVAL);
	cr_assert_eq(rtl_timer_init(&t, 0, P, (enum rtl_timer_policy)7), -EINVAL);
	cr_assert_eq(rtl_timer_init(&t, 100, P, RTL_TIMER_CATCH_UP), 0);
	cr_assert_eq(t.deadline_ns, 100);
}

Test(timer, on_time_steps_follow_the_grid_without_drift)
{
	struct rtl_timer t;

	rtl_timer_init(&t, 5000, P, RTL_TIMER_SKIP);
	for (int i = 0; i < 1000; i++) {
		/* wake 37 ns late every time: lateness must not accumulate */
		int64_t late = rtl_timer_step(&t, t.deadline_ns + 37);

		cr_assert_eq(late, 37);
	}
	cr_assert_eq(t.deadline_ns, 5000 + 1000 * P, "next deadline = first + n * period");
	cr_assert_eq(t.cycles, 1000);
	cr_assert_eq(t.overruns, 0);
	cr_assert_eq(t.skipped, 0);
	cr_assert_eq(t.max_lateness_ns, 37);
}

Test(timer, skip_policy_drops_missed_periods)
{
	struct rtl_timer t;

	rtl_timer_init(&t, 0, P, RTL_TIMER_SKIP);
	/* wake 3.5 periods late: deadlines 1000, 2000, 3000 are missed */
	cr_assert_eq(rtl_timer_step(&t, 3500), 3500);
	cr_assert_eq(t.overruns, 1);
	cr_assert_eq(t.skipped, 3);
	cr_assert_eq(t.deadline_ns, 4000, "the first grid point after now");
	cr_assert_eq(rtl_timer_step(&t, 4000), 0);
	cr_assert_eq(t.deadline_ns, 5000);
}

Test(timer, exactly_one_period_late_is_an_overrun)
{
	struct rtl_timer t;

	rtl_timer_init(&t, 0, P, RTL_TIMER_SKIP);
	rtl_timer_step(&t, P - 1);
	cr_assert_eq(t.overruns, 0, "just under a period late is not an overrun");
	rtl_timer_step(&t, t.deadline_ns + P);
	cr_assert_eq(t.overruns, 1);
	cr_assert_eq(t.skipped, 1);
}

Test(timer, catch_up_policy_runs_every_cycle)
{
	struct rtl_timer t;

	rtl_timer_init(&t, 0, P, RTL_TIMER_CATCH_UP);
	cr_assert_eq(rtl_timer_step(&t, 3500), 3500);
	cr_assert_eq(t.deadline_ns, P, "next deadline is already past: run at once");
	cr_assert_eq(rtl_timer_step(&t, 3501), 2501);
	cr_assert_eq(rtl_timer_step(&t, 3502), 1502);
	cr_assert_eq(rtl_timer_step(&t, 3503), 503);
	cr_assert_eq(t.overruns, 3, "3500, 2501 and 1502 were a period or more late");
	cr_assert_eq(t.skipped, 0);
	cr_assert_eq(t.deadline_ns, 4 * P);
}

Test(timer, early_wake_records_negative_lateness)
{
	struct rtl_timer t;

	rtl_timer_init(&t, 1000, P, RTL_TIMER_SKIP);
	cr_assert_eq(rtl_timer_step(&t, 990), -10);
	cr_assert_eq(t.last_lateness_ns, -10);
	cr_assert_eq(t.max_lateness_ns, 0);
	cr_assert_eq(t.deadline_ns, 2000);
}

Test(timer, wait_sleeps_to_absolute_deadlines)
{
	struct rtl_timer t;
	int64_t start = rtl_time_now();

	rtl_timer_init(&t, start + RTL_NS_PER_MS, RTL_NS_PER_MS, RTL_TIMER_SKIP);
	for (int i = 0; i < 5; i++)
		cr_assert_geq(rtl_timer_wait(&t), 0);
	cr_assert_geq(rtl_time_now(), start + 5 * RTL_NS_PER_MS, "never returns early");
	cr_assert_eq(t.cycles, 5);
	cr_assert_eq(t.deadline_ns, start + (6 + (int64_t)t.skipped) * RTL_NS_PER_MS);
}
