// SPDX-License-Identifier: MIT
/* Conversions between int64_t ns and struct timespec, and the sleep. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>

#include <rtloop/time.h>

Test(time, timespec_round_trip_with_carry)
{
	struct timespec ts = { 3, 999999999 };
	int64_t ns = rtl_time_from_timespec(&ts);

	cr_assert_eq(ns, 3999999999LL);
	ts = rtl_time_to_timespec(ns + 1);
	cr_assert_eq(ts.tv_sec, 4);
	cr_assert_eq(ts.tv_nsec, 0);
}

Test(time, negative_values_normalise_to_positive_nsec)
{
	struct timespec ts = rtl_time_to_timespec(-1);

	cr_assert_eq(ts.tv_sec, -1);
	cr_assert_eq(ts.tv_nsec, 999999999);
	ts = rtl_time_to_timespec(-RTL_NS_PER_SEC);
	cr_assert_eq(ts.tv_sec, -1);
	cr_assert_eq(ts.tv_nsec, 0);
	ts = rtl_time_to_timespec(-1500000000LL);
	cr_assert_eq(ts.tv_sec, -2);
	cr_assert_eq(ts.tv_nsec, 500000000);
	cr_assert_eq(rtl_time_from_timespec(&ts), -1500000000LL);
}

Test(time, unnormalised_timespec_converts_exactly)
{
	struct timespec ts = { 1, -1 };

	cr_assert_eq(rtl_time_from_timespec(&ts), 999999999LL);
	ts = (struct timespec){ 0, 2500000000L };
	cr_assert_eq(rtl_time_from_timespec(&ts), 2500000000LL);
}

Test(time, values_past_2_pow_31_seconds)
{
	int64_t big = (INT64_C(1) << 31) * RTL_NS_PER_SEC + 7; /* year 2038 and beyond */
	struct timespec ts = rtl_time_to_timespec(big);

	cr_assert_eq((int64_t)ts.tv_sec, INT64_C(1) << 31);
	cr_assert_eq(ts.tv_nsec, 7);
	cr_assert_eq(rtl_time_from_timespec(&ts), big);
	big = INT64_C(9000000000) * RTL_NS_PER_SEC; /* ~285 years */
	ts = rtl_time_to_timespec(big);
	cr_assert_eq(rtl_time_from_timespec(&ts), big);
}

Test(time, now_is_monotonic_and_positive)
{
	int64_t a = rtl_time_now();
	int64_t b = rtl_time_now();

	cr_assert_gt(a, 0);
	cr_assert_geq(b, a);
	cr_assert_eq(rtl_time_now_clock(-12345), 0, "an invalid clock reads as 0");
}

Test(time, sleep_until_past_deadline_returns_at_once)
{
	int64_t before = rtl_time_now();

	cr_assert_eq(rtl_time_sleep_until(before - RTL_NS_PER_SEC), 0);
	cr_assert_eq(rtl_time_sleep_until(before + RTL_NS_PER_MS), 0);
	cr_assert_geq(rtl_time_now(), before + RTL_NS_PER_MS, "never wakes before the deadline");
	cr_assert_eq(rtl_time_sleep_until(-5), -EINVAL);
}
