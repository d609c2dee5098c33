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
 *
 * Every list of counters is declared once, as an X-macro of
 * X(name, "what it counts") lines (RTL_LOOP_COUNTERS in <rtloop/loop.h>,
 * ...). From that one list the module makes its public snapshot struct
 * (RTL_STAT_U64), its single-writer atomics (RTL_STAT_ATOMIC), the copy
 * from one to the other, and a table of struct rtl_stat_field that the
 * report, the JSON output and the Python binding walk: a counter added to
 * the list appears in all of them, and no hand-kept copy can drift.
 */
#ifndef RTLOOP_STAT_H
#define RTLOOP_STAT_H

#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* Add @n to the single-writer counter @c. Writer thread only; RT-safe. */
RTL_INLINE void rtl_stat_add(RTL_ATOMIC(uint64_t) * c, uint64_t n)
{
	RTL_STORE(c, RTL_LOAD(c, relaxed) + n, relaxed);
}

/* Returns the value of @c, from any thread. RT-safe. */
RTL_INLINE uint64_t rtl_stat_get(const RTL_ATOMIC(uint64_t) * c)
{
	return RTL_LOAD(c, relaxed);
}

/* One counter of a snapshot struct: its name (the C member's), what it
 * counts, and where it is (offsetof in the snapshot, a uint64_t). */
struct rtl_stat_field {
	const char *name;
	const char *doc;
	size_t offset;
};

/* X-macro helpers: a member per counter, plain or atomic, and a field of a
 * struct rtl_stat_field table for snapshot type @type (use inside a macro
 * of one's own: #define F(n, d) RTL_STAT_FIELD(rtl_x_counters, n, d)). */
#define RTL_STAT_U64(name, doc) uint64_t name;
#define RTL_STAT_ATOMIC(name, doc) RTL_ATOMIC(uint64_t) name;
#define RTL_STAT_FIELD(type, name, doc) { #name, doc, offsetof(struct type, name) },

/* Returns the value of counter @f of snapshot @snap. RT-safe. */
RTL_INLINE uint64_t rtl_stat_value(const void *snap, const struct rtl_stat_field *f)
{
	return *(const uint64_t *)(const void *)((const char *)snap + f->offset);
}

RTL_END_DECLS

#endif /* RTLOOP_STAT_H */
