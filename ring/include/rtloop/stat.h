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

#include <stdatomic.h>
#include <stdint.h>

#include <rtloop/compiler.h>

/* Add @n to the single-writer counter @c. Writer thread only; RT-safe. */
RTL_INLINE void rtl_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* The value of @c, from any thread. RT-safe. */
RTL_INLINE uint64_t rtl_stat_get(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

#endif /* RTLOOP_STAT_H */
