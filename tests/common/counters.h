/* SPDX-License-Identifier: MIT */
/*
 * Counter snapshots as values, for assertions: client_counts(c).malformed
 * reads as the old pointer accessor did, through the library's sized
 * snapshot call (rtl_rtde_client_stats() with .size set).
 */
#ifndef RTLOOP_TESTS_COUNTERS_H
#define RTLOOP_TESTS_COUNTERS_H

#include <rtloop/rtde_client.h>

static inline struct rtl_rtde_client_counters client_counts(const struct rtl_rtde_client *c)
{
	struct rtl_rtde_client_counters s = { .size = sizeof(s) };

	rtl_rtde_client_stats(c, &s);
	return s;
}

#endif /* RTLOOP_TESTS_COUNTERS_H */
