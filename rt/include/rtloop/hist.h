/* SPDX-License-Identifier: MIT */
/*
 * rtl_hist: a fixed-size latency histogram that an RT thread can fill
 * without locks while another thread reads it.
 *
 * Design
 * ------
 * The buckets are log-linear, as in HdrHistogram: every power of two is cut
 * into RTL_HIST_SUB (128) equal sub-buckets, and values below 2 * 128 get one
 * bucket each. A bucket's width is therefore at most 1/128 of its lower
 * bound, so its midpoint is within 1/256 (0.4 %) of any value in it: well
 * inside the 1 % the control loops need, at 3584 counters (28 KiB) for the
 * range 0 .. 2^34 ns (17.2 s). The index is a count-leading-zeros, a shift
 * and an add, without a branch or a table:
 *
 *     e     = floor(log2(v | 255))        7 for every v < 256
 *     index = (e - 7) * 128 + (v >> (e - 7))
 *
 * For v < 256 this is v itself; for larger v, v >> (e - 7) lies in
 * [128, 256), so each power of two 2^e starts at index (e - 6) * 128 and the
 * ranges tile without gaps. Values at or above RTL_HIST_LIMIT_NS are counted
 * as overflow (and still set the maximum); negative values count as 0 and
 * as underflow, since a negative latency is a clock or caller bug worth
 * seeing but not worth a bucket.
 *
 * Memory: struct rtl_hist is plain storage, embedded by the caller; nothing
 * here allocates. An all-zero struct is a valid empty histogram (the
 * minimum is stored inverted for that reason), so static and calloc'ed
 * histograms need no init call.
 *
 * Concurrency: one writer thread calls rtl_hist_record() (and reset, merge
 * into it). Every counter is an RTL_ATOMIC(uint64_t) that the writer updates
 * with a relaxed load and a relaxed store: no read-modify-write instruction,
 * no lock prefix, yet any other thread may read any counter at any time
 * without tearing (and without a data race in the C11 sense, so
 * ThreadSanitizer stays quiet). Relaxed loads give no consistency *between*
 * counters, so a reader of a live histogram may see a bucket without its
 * count; readers that want a coherent picture take rtl_hist_snapshot() and
 * work on the copy. The query functions tolerate live input: percentiles
 * use the bucket totals they read, never the separate count.
 */
#ifndef RTLOOP_HIST_H
#define RTLOOP_HIST_H

#include <stdint.h>
#include <stdio.h>

#include <rtloop/compiler.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

/* log2 of the sub-buckets per power of two. */
#define RTL_HIST_SUB_BITS 7
/* Sub-buckets per power of two; values below 2 * RTL_HIST_SUB are exact. */
#define RTL_HIST_SUB (1 << RTL_HIST_SUB_BITS)
/* Values are tracked in buckets below 2^RTL_HIST_TOP_BITS ns. */
#define RTL_HIST_TOP_BITS 34
/* First value that counts as overflow: 2^34 ns, about 17.18 s. */
#define RTL_HIST_LIMIT_NS (INT64_C(1) << RTL_HIST_TOP_BITS)
/* Number of buckets: 3584. */
#define RTL_HIST_BUCKETS ((RTL_HIST_TOP_BITS - RTL_HIST_SUB_BITS + 1) * RTL_HIST_SUB)

struct rtl_hist {
	/* Hot scalars first: one record touches these and one bucket. */
	RTL_ATOMIC(uint64_t) count; /* all samples, overflow and underflow included */
	RTL_ATOMIC(uint64_t) sum;   /* of the (clamped) samples; wraps modulo 2^64 */
	/* (INT64_MAX + 1) - min, so that 0 means "no sample yet". */
	RTL_ATOMIC(uint64_t) min_inv;
	RTL_ATOMIC(uint64_t) max;	/* 0 when empty; samples are >= 0 after clamping */
	RTL_ATOMIC(uint64_t) overflow;	/* samples >= RTL_HIST_LIMIT_NS */
	RTL_ATOMIC(uint64_t) underflow; /* samples < 0, recorded as 0 */
	RTL_ATOMIC(uint64_t) buckets[RTL_HIST_BUCKETS];
};

RTL_STATIC_ASSERT(RTL_HIST_BUCKETS == 3584, "bucket layout changed: update the design note");

/* One bucket, as reported by rtl_hist_bucket_bounds() and
 * rtl_hist_next_bucket(). */
struct rtl_hist_bucket {
	int64_t lower; /* smallest value that falls in the bucket */
	int64_t upper; /* one past the largest value */
	int64_t value; /* representative value: lower for one-wide buckets,
			* else the midpoint; what percentiles report */
	uint64_t count;
};

/* ---- internal helpers (not part of the API) ------------------------------ */

/* Bucket index of 0 <= @v < RTL_HIST_LIMIT_NS (see the design note). */
RTL_INLINE unsigned rtl_hist__index(uint64_t v)
{
	unsigned e = 63u - (unsigned)__builtin_clzll(v | (2u * RTL_HIST_SUB - 1));
	unsigned shift = e - RTL_HIST_SUB_BITS;

	return (shift << RTL_HIST_SUB_BITS) + (unsigned)(v >> shift);
}

/* ---- writer -------------------------------------------------------------- */

/*
 * Zero @h: no samples, no overflow, no underflow. Writer only (or while no
 * thread uses @h). RT-safe: no allocation, no locks; bounded time (one pass
 * over the 3584 counters).
 *
 * Returns 0, or
 *   -EINVAL  @h is NULL.
 */
RTL_API int rtl_hist_init(struct rtl_hist *h);

/* As rtl_hist_init() for a histogram known to be non-NULL. Writer only;
 * RT-safe, bounded time. */
RTL_API void rtl_hist_reset(struct rtl_hist *h);

/*
 * Record one sample of @ns nanoseconds. Values >= RTL_HIST_LIMIT_NS are
 * counted as overflow, in no bucket, but do update count, sum and max;
 * negative values are recorded as 0 and counted as underflow.
 * Single writer: exactly one thread records into @h (readers may run
 * concurrently). RT-safe and wait-free: no allocation, no locks, no
 * read-modify-write instructions, no system calls.
 */
RTL_INLINE void rtl_hist_record(struct rtl_hist *h, int64_t ns)
{
	uint64_t v;

	if (RTL_UNLIKELY(ns < 0)) {
		rtl_stat_add(&h->underflow, 1);
		ns = 0;
	}
	v = (uint64_t)ns;
	if (RTL_LIKELY(v < (uint64_t)RTL_HIST_LIMIT_NS))
		rtl_stat_add(&h->buckets[rtl_hist__index(v)], 1);
	else
		rtl_stat_add(&h->overflow, 1);
	rtl_stat_add(&h->count, 1);
	rtl_stat_add(&h->sum, v);
	/* min is stored as (2^63 - min): larger stored value = smaller min. */
	if ((uint64_t)INT64_MAX + 1 - v > RTL_LOAD(&h->min_inv, relaxed))
		RTL_STORE(&h->min_inv, (uint64_t)INT64_MAX + 1 - v, relaxed);
	if (v > RTL_LOAD(&h->max, relaxed))
		RTL_STORE(&h->max, v, relaxed);
}

/*
 * Add every sample of @src to @dst, as if each had been recorded into @dst
 * (counts, sum, min, max, overflow, underflow). @dst == @src doubles it.
 * The calling thread must be @dst's writer; @src should be quiescent or a
 * snapshot (else the merge is as consistent as a live read, see above).
 * RT-safe: no allocation, no locks; bounded time (one pass).
 *
 * Returns 0, or
 *   -EINVAL  @dst or @src is NULL.
 */
RTL_API int rtl_hist_merge(struct rtl_hist *dst, const struct rtl_hist *src);

/* ---- readers (any thread) ------------------------------------------------ */

/*
 * Copy @src into @dst, counter by counter, so that a reader can work on a
 * stable picture while the writer carries on with @src. @dst must not be in
 * use by another thread. Counters of the copy are each untorn but may be up
 * to one record apart from each other (count vs. buckets) if the writer was
 * active. RT-safe: no allocation, no locks; bounded time.
 *
 * Returns 0, or
 *   -EINVAL  @dst or @src is NULL.
 */
RTL_API int rtl_hist_snapshot(struct rtl_hist *dst, const struct rtl_hist *src);

/* Returns the number of samples recorded, overflow and underflow included. Any thread;
 * RT-safe. */
RTL_INLINE uint64_t rtl_hist_count(const struct rtl_hist *h)
{
	return RTL_LOAD(&h->count, relaxed);
}

/* Returns the number of samples >= RTL_HIST_LIMIT_NS. Any thread; RT-safe. */
RTL_INLINE uint64_t rtl_hist_overflow(const struct rtl_hist *h)
{
	return RTL_LOAD(&h->overflow, relaxed);
}

/* Returns the number of negative samples (recorded as 0). Any thread;
 * RT-safe. */
RTL_INLINE uint64_t rtl_hist_underflow(const struct rtl_hist *h)
{
	return RTL_LOAD(&h->underflow, relaxed);
}

/* Returns the smallest sample (exact, negative ones counting as 0), or 0
 * when empty.
 * Any thread; RT-safe. */
RTL_INLINE int64_t rtl_hist_min(const struct rtl_hist *h)
{
	uint64_t inv = RTL_LOAD(&h->min_inv, relaxed);

	return inv ? (int64_t)((uint64_t)INT64_MAX + 1 - inv) : 0;
}

/* Returns the largest sample (exact, overflow included), or 0 when empty.
 * Any thread; RT-safe. */
RTL_INLINE int64_t rtl_hist_max(const struct rtl_hist *h)
{
	return (int64_t)RTL_LOAD(&h->max, relaxed);
}

/*
 * Returns the arithmetic mean of the samples in ns (negative ones counting
 * as 0), or 0 when empty. Exact as long as the sum of all samples stays below 2^64 ns
 * (584 years). Any thread; RT-safe.
 */
RTL_API double rtl_hist_mean(const struct rtl_hist *h);

/*
 * The @p-th percentile, @p in [0, 100], by nearest rank: the value of rank
 * ceil(@p / 100 * n) among the n samples (rank 1 for @p = 0). Ranks 1 and n
 * give the exact minimum and maximum; any other rank gives the
 * representative value of the bucket holding it (exact below 256 ns, within
 * 1/256 above) clamped to [min, max], or the maximum when the rank falls
 * among the overflow samples. @p below 0 or NaN counts as 0, above 100 as
 * 100.
 *
 * Returns the value in ns, or 0 when @h is empty. Any thread; RT-safe (no
 * allocation, no locks) but O(RTL_HIST_BUCKETS): not for every cycle.
 */
RTL_API int64_t rtl_hist_percentile(const struct rtl_hist *h, double p);

/*
 * Index of the bucket that @ns falls in (negative values: bucket 0).
 * Pure function of the layout; any thread; RT-safe.
 *
 * Returns the index in [0, RTL_HIST_BUCKETS), or
 *   -ERANGE  @ns >= RTL_HIST_LIMIT_NS (it would count as overflow).
 */
RTL_API int rtl_hist_bucket_index(int64_t ns);

/*
 * Fill @b with the bounds and representative value of bucket @index;
 * b->count is set to 0. Pure function of the layout; any thread; RT-safe.
 *
 * Returns 0, or
 *   -EINVAL  @b is NULL or @index is outside [0, RTL_HIST_BUCKETS).
 */
RTL_API int rtl_hist_bucket_bounds(struct rtl_hist_bucket *b, int index);

/*
 * Find the first non-empty bucket at or after @from and describe it in @b
 * (bounds, representative value, count). Iterate all non-empty buckets
 * with
 *
 *     for (i = rtl_hist_next_bucket(h, &b, 0); i >= 0;
 *          i = rtl_hist_next_bucket(h, &b, i + 1))
 *
 * Overflow samples are in no bucket (see rtl_hist_overflow()). Any thread;
 * RT-safe, O(RTL_HIST_BUCKETS) per full iteration.
 *
 * Returns the bucket's index, or
 *   -ENOENT  no non-empty bucket at or after @from (including
 *            @from >= RTL_HIST_BUCKETS);
 *   -EINVAL  @h or @b is NULL, or @from < 0.
 */
RTL_API int rtl_hist_next_bucket(const struct rtl_hist *h, struct rtl_hist_bucket *b, int from);

/*
 * Write a one-line human summary of @h to @f:
 *
 *     title [us]: n=1000 min=1.234 p50=2.50 p90=3.10 p99=12.1 p99.9=40.2 \
 *         max=51.7 mean=2.612
 *
 * (one line), followed by " overflow=N" and " underflow=N" when non-zero.
 * Values are in @unit_ns units: 1 ("ns", no decimals), 1000 ("us"), 10^6
 * ("ms") or 10^9 ("s") (RTL_NS_PER_US and friends of <rtloop/time.h>),
 * with three decimals
 * below 10 units, two below 100 and one above. @title may be NULL ("hist").
 * Works on an internal snapshot, so the figures agree with each other even
 * while the writer runs. Not RT-safe (stdio; about 28 KiB of stack).
 *
 * Returns 0, or
 *   -EINVAL  @h or @f is NULL, or @unit_ns is not one of the four units;
 *   -EIO     writing to @f failed.
 */
RTL_API int rtl_hist_print(const struct rtl_hist *h, FILE *f, const char *title, int64_t unit_ns);

/*
 * Write @h as one line of JSON to @f:
 *
 *     {"count":N,"min_ns":N,"p50_ns":N,"p90_ns":N,"p99_ns":N,"p999_ns":N,
 *      "max_ns":N,"mean_ns":N,"overflow":N,"underflow":N,
 *      "buckets":[[lower_ns,count],...]}
 *
 * All numbers are integers (mean rounded to the nearest ns, so the output
 * does not depend on the locale's decimal point); "buckets" lists only the
 * non-empty buckets, in increasing order, each by its lower bound. Works on
 * an internal snapshot. Not RT-safe (stdio; about 28 KiB of stack).
 *
 * Returns 0, or
 *   -EINVAL  @h or @f is NULL;
 *   -EIO     writing to @f failed.
 */
RTL_API int rtl_hist_write_json(const struct rtl_hist *h, FILE *f);

RTL_END_DECLS

#endif /* RTLOOP_HIST_H */
