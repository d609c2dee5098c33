// SPDX-License-Identifier: MIT
/*
 * The one sleeping primitive of rtloop: an absolute-deadline sleep on
 * CLOCK_MONOTONIC. Absolute, so that a late wake-up shortens the next sleep
 * instead of pushing every later deadline back.
 */
#include <errno.h>

#include <rtloop/time.h>

RTL_API int rtl_time_sleep_until(int64_t deadline_ns)
{
	struct timespec ts;
	int ret;

	if (deadline_ns < 0)
		return -EINVAL;
	ts = rtl_time_to_timespec(deadline_ns);
	do {
		/* Returns the error number directly, not through errno. */
		ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (ret == EINTR);
	return -ret;
}

RTL_API int64_t rtl_time_now_clock(int clock_id)
{
	struct timespec ts;

	if (clock_gettime((clockid_t)clock_id, &ts) != 0)
		return 0;
	return rtl_time_from_timespec(&ts);
}

RTL_API int64_t rtl_time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return rtl_time_from_timespec(&ts);
}
