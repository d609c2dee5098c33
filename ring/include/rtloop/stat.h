/* SPDX-License-Identifier: MIT */
/*
 * Statistics with one writer and any number of readers: the counters of the
 * ring, the loop, the transports, the coalescer and the histograms.
 *
 * The writer adds with a relaxed load and a relaxed store: no
 * read-modify-write instruction (no lock prefix) on the hot path, which is
 * correct only because nobody else writes the counter. Readers on other
 * threads load it relaxed and see a value that is not torn (and, as C11
 * atomics, no data race for ThreadSanitizer); they get no ordering with
 * anything else.
 */
#ifndef RTLOOP_STAT_H
#define RTLOOP_STAT_H

#include <stdint.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* Add @n to the single-writer counter @c. Writer thread only; RT-safe. */
RTL_INLINE void rtl_stat_add(RTL_ATOMIC(uint64_t) * c, uint64_t n)
{
	RTL_STORE(c, RTL_LOAD(c, relaxed) + n, relaxed);
}

/* The value of @c, from any thread. RT-safe. */
RTL_INLINE uint64_t rtl_stat_get(const RTL_ATOMIC(uint64_t) * c)
{
	return RTL_LOAD(c, relaxed);
}

RTL_END_DECLS

#endif /* RTLOOP_STAT_H */
