/* SPDX-License-Identifier: MIT */
/*
 * Time in rtloop is int64_t nanoseconds of CLOCK_MONOTONIC: it covers
 * +-292 years, subtracts without overflow in any realistic loop, and keeps
 * struct timespec at the system-call boundary only. These helpers are the
 * one place that converts, with the carry and the sign handled once.
 */
#ifndef RTLOOP_TIME_H
#define RTLOOP_TIME_H

#include <stdint.h>
#include <time.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

#define RTL_NS_PER_US INT64_C(1000)
#define RTL_NS_PER_MS INT64_C(1000000)
#define RTL_NS_PER_SEC INT64_C(1000000000)

/*
 * Returns the nanoseconds of @ts. tv_nsec may lie outside [0, 1e9) (it is added as is),
 * so un-normalised values convert exactly. RT-safe.
 */
RTL_INLINE int64_t rtl_time_from_timespec(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * RTL_NS_PER_SEC + (int64_t)ts->tv_nsec;
}

/*
 * Returns the normalised timespec of @ns: tv_nsec in [0, 1e9) also for negative
 * values (-1 ns is { -1 s, 999999999 ns }). RT-safe.
 */
RTL_INLINE struct timespec rtl_time_to_timespec(int64_t ns)
{
	struct timespec ts;
	int64_t sec = ns / RTL_NS_PER_SEC;
	int64_t rem = ns % RTL_NS_PER_SEC;

	/* C division truncates toward zero; floor it so tv_nsec >= 0. */
	if (rem < 0) {
		rem += RTL_NS_PER_SEC;
		sec -= 1;
	}
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)rem;
	return ts;
}

/* Returns the time now on the POSIX clock @clock_id (a clockid_t), in ns;
 * 0 if the clock is invalid. RT-safe (vDSO). Out of line so that this header needs no POSIX
 * feature macros from its users. */
RTL_API int64_t rtl_time_now_clock(int clock_id);

/* Returns the time now on CLOCK_MONOTONIC, in ns. RT-safe (vDSO). */
RTL_API int64_t rtl_time_now(void);

/*
 * Sleep until the absolute CLOCK_MONOTONIC time @deadline_ns, resuming
 * after signals. Returns 0, or -errno from clock_nanosleep (-EINVAL for a
 * deadline it cannot represent). RT-safe (one system call).
 */
RTL_API int rtl_time_sleep_until(int64_t deadline_ns);

RTL_END_DECLS

#endif /* RTLOOP_TIME_H */
