// SPDX-License-Identifier: MIT
/*
 * The non-inline half of rtl_hist: layout queries, percentiles, merge and
 * the two writers (human line, JSON). The bucket layout and the concurrency
 * rules are explained in <rtloop/hist.h>; everything here reads counters
 * with relaxed loads and, when it writes, follows the single-writer rule
 * through rtl_stat_add().
 */
#include <errno.h>
#include <math.h>

#include <rtloop/hist.h>
#include <rtloop/time.h>

static void store(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, v, memory_order_relaxed);
}

static void bucket_bounds(unsigned i, struct rtl_hist_bucket *b)
{
	if (i < 2 * RTL_HIST_SUB) {
		b->lower = i;
		b->upper = (int64_t)i + 1;
		b->value = i;
	} else {
		/* Inverse of rtl_hist__index(): the high bits give the shift,
		 * the low bits the sub-bucket within [128, 256). */
		unsigned shift = (i >> RTL_HIST_SUB_BITS) - 1;
		int64_t sub = (int64_t)(i & (RTL_HIST_SUB - 1)) + RTL_HIST_SUB;
		int64_t width = INT64_C(1) << shift;

		b->lower = sub << shift;
		b->upper = b->lower + width;
		b->value = b->lower + width / 2;
	}
	b->count = 0;
}

RTL_API void rtl_hist_reset(struct rtl_hist *h)
{
	store(&h->count, 0);
	store(&h->sum, 0);
	store(&h->min_inv, 0);
	store(&h->max, 0);
	store(&h->overflow, 0);
	store(&h->underflow, 0);
	for (unsigned i = 0; i < RTL_HIST_BUCKETS; i++)
		store(&h->buckets[i], 0);
}

RTL_API int rtl_hist_init(struct rtl_hist *h)
{
	if (!h)
		return -EINVAL;
	rtl_hist_reset(h);
	return 0;
}

RTL_API int rtl_hist_merge(struct rtl_hist *dst, const struct rtl_hist *src)
{
	uint64_t v;

	if (!dst || !src)
		return -EINVAL;
	for (unsigned i = 0; i < RTL_HIST_BUCKETS; i++) {
		v = rtl_stat_get(&src->buckets[i]);
		if (v)
			rtl_stat_add(&dst->buckets[i], v);
	}
	rtl_stat_add(&dst->count, rtl_stat_get(&src->count));
	rtl_stat_add(&dst->sum, rtl_stat_get(&src->sum));
	rtl_stat_add(&dst->overflow, rtl_stat_get(&src->overflow));
	rtl_stat_add(&dst->underflow, rtl_stat_get(&src->underflow));
	/* Both stored so that "larger is more extreme"; an empty source
	 * contributes 0 to each and changes nothing. */
	v = rtl_stat_get(&src->min_inv);
	if (v > rtl_stat_get(&dst->min_inv))
		store(&dst->min_inv, v);
	v = rtl_stat_get(&src->max);
	if (v > rtl_stat_get(&dst->max))
		store(&dst->max, v);
	return 0;
}

RTL_API int rtl_hist_snapshot(struct rtl_hist *dst, const struct rtl_hist *src)
{
	if (!dst || !src)
		return -EINVAL;
	if (dst == src)
		return 0;
	/* Buckets before count: a reader that compares the two on the copy
	 * sees the count lag the buckets, never lead them by much. */
	for (unsigned i = 0; i < RTL_HIST_BUCKETS; i++)
		store(&dst->buckets[i], rtl_stat_get(&src->buckets[i]));
	store(&dst->overflow, rtl_stat_get(&src->overflow));
	store(&dst->underflow, rtl_stat_get(&src->underflow));
	store(&dst->count, rtl_stat_get(&src->count));
	store(&dst->sum, rtl_stat_get(&src->sum));
	store(&dst->min_inv, rtl_stat_get(&src->min_inv));
	store(&dst->max, rtl_stat_get(&src->max));
	return 0;
}

RTL_API double rtl_hist_mean(const struct rtl_hist *h)
{
	uint64_t n = rtl_stat_get(&h->count);

	return n ? (double)rtl_stat_get(&h->sum) / (double)n : 0.0;
}

/* Nearest rank of percentile @p among @n > 0 samples, in [1, n]. */
static uint64_t rank_of(double p, uint64_t n)
{
	double x = p / 100.0 * (double)n;

	/* The 1e-6 absorbs the rounding of p / 100 (99.9 / 100 * 1000 is
	 * 999.0000000000001, which must still be rank 999, not 1000). */
	x = ceil(x - 1e-6);
	if (x < 1.0)
		return 1;
	if (x >= (double)n)
		return n;
	return (uint64_t)x;
}

RTL_API int64_t rtl_hist_percentile(const struct rtl_hist *h, double p)
{
	struct rtl_hist_bucket b;
	uint64_t n = 0, seen = 0, rank;
	int64_t lo, hi;

	if (!(p >= 0.0)) /* also NaN */
		p = 0.0;
	if (p > 100.0)
		p = 100.0;
	/* Count from the buckets themselves, not h->count: on a live
	 * histogram the two may disagree, and the walk below must end. */
	for (unsigned i = 0; i < RTL_HIST_BUCKETS; i++)
		n += rtl_stat_get(&h->buckets[i]);
	n += rtl_stat_get(&h->overflow);
	if (n == 0)
		return 0;
	rank = rank_of(p, n);
	lo = rtl_hist_min(h);
	hi = rtl_hist_max(h);
	/* The first and the last rank are the extremes, which are known
	 * exactly; a bucket would only give them to within its width. */
	if (rank == 1)
		return lo;
	if (rank == n)
		return hi;
	for (unsigned i = 0; i < RTL_HIST_BUCKETS; i++) {
		seen += rtl_stat_get(&h->buckets[i]);
		if (seen >= rank) {
			bucket_bounds(i, &b);
			/* Clamp: no sample lies outside [min, max]. */
			if (b.value < lo)
				return lo;
			if (b.value > hi)
				return hi;
			return b.value;
		}
	}
	return hi; /* the rank lies among the overflow samples */
}

RTL_API int rtl_hist_bucket_index(int64_t ns)
{
	if (ns >= RTL_HIST_LIMIT_NS)
		return -ERANGE;
	return (int)rtl_hist__index(ns < 0 ? 0 : (uint64_t)ns);
}

RTL_API int rtl_hist_bucket_bounds(struct rtl_hist_bucket *b, int index)
{
	if (!b || index < 0 || index >= RTL_HIST_BUCKETS)
		return -EINVAL;
	bucket_bounds((unsigned)index, b);
	return 0;
}

RTL_API int rtl_hist_next_bucket(const struct rtl_hist *h, struct rtl_hist_bucket *b, int from)
{
	uint64_t c;

	if (!h || !b || from < 0)
		return -EINVAL;
	for (int i = from; i < RTL_HIST_BUCKETS; i++) {
		c = rtl_stat_get(&h->buckets[i]);
		if (c) {
			bucket_bounds((unsigned)i, b);
			b->count = c;
			return i;
		}
	}
	return -ENOENT;
}

/* Mean in whole ns, rounded half up, without floating point or overflow. */
static uint64_t mean_ns(const struct rtl_hist *h)
{
	uint64_t n = rtl_stat_get(&h->count), s = rtl_stat_get(&h->sum);
	uint64_t q, r;

	if (n == 0)
		return 0;
	q = s / n;
	r = s % n;
	return r >= n - r ? q + 1 : q;
}

static const char *unit_name(int64_t unit_ns)
{
	switch (unit_ns) {
	case 1:
		return "ns";
	case RTL_NS_PER_US:
		return "us";
	case RTL_NS_PER_MS:
		return "ms";
	case RTL_NS_PER_SEC:
		return "s";
	default:
		return NULL;
	}
}

static int put_value(FILE *f, const char *key, double ns, int64_t unit_ns)
{
	double x = ns / (double)unit_ns;
	int prec = unit_ns == 1 ? 0 : fabs(x) < 10.0 ? 3 : fabs(x) < 100.0 ? 2 : 1;

	return fprintf(f, " %s=%.*f", key, prec, x);
}

RTL_API int rtl_hist_print(const struct rtl_hist *h, FILE *f, const char *title, int64_t unit_ns)
{
	static const struct {
		const char *key;
		double p;
	} pct[] = { { "p50", 50.0 }, { "p90", 90.0 }, { "p99", 99.0 }, { "p99.9", 99.9 } };
	const char *unit = unit_name(unit_ns);
	struct rtl_hist s;
	int bad = 0;

	if (!h || !f || !unit)
		return -EINVAL;
	rtl_hist_snapshot(&s, h);
	bad |= fprintf(f, "%s [%s]: n=%llu", title ? title : "hist", unit,
		       (unsigned long long)rtl_hist_count(&s)) < 0;
	bad |= put_value(f, "min", (double)rtl_hist_min(&s), unit_ns) < 0;
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		bad |= put_value(f, pct[i].key, (double)rtl_hist_percentile(&s, pct[i].p),
				 unit_ns) < 0;
	bad |= put_value(f, "max", (double)rtl_hist_max(&s), unit_ns) < 0;
	bad |= put_value(f, "mean", rtl_hist_mean(&s), unit_ns) < 0;
	if (rtl_hist_overflow(&s))
		bad |= fprintf(f, " overflow=%llu", (unsigned long long)rtl_hist_overflow(&s)) < 0;
	if (rtl_hist_underflow(&s))
		bad |= fprintf(f, " underflow=%llu", (unsigned long long)rtl_hist_underflow(&s)) <
		       0;
	bad |= fputc('\n', f) == EOF;
	return bad || ferror(f) ? -EIO : 0;
}

RTL_API int rtl_hist_write_json(const struct rtl_hist *h, FILE *f)
{
	struct rtl_hist_bucket b;
	struct rtl_hist s;
	const char *sep = "";
	int bad = 0;

	if (!h || !f)
		return -EINVAL;
	rtl_hist_snapshot(&s, h);
	bad |= fprintf(f,
		       "{\"count\":%llu,\"min_ns\":%lld,\"p50_ns\":%lld,\"p90_ns\":%lld,"
		       "\"p99_ns\":%lld,\"p999_ns\":%lld,\"max_ns\":%lld,\"mean_ns\":%llu,"
		       "\"overflow\":%llu,\"underflow\":%llu,\"buckets\":[",
		       (unsigned long long)rtl_hist_count(&s), (long long)rtl_hist_min(&s),
		       (long long)rtl_hist_percentile(&s, 50.0),
		       (long long)rtl_hist_percentile(&s, 90.0),
		       (long long)rtl_hist_percentile(&s, 99.0),
		       (long long)rtl_hist_percentile(&s, 99.9), (long long)rtl_hist_max(&s),
		       (unsigned long long)mean_ns(&s), (unsigned long long)rtl_hist_overflow(&s),
		       (unsigned long long)rtl_hist_underflow(&s)) < 0;
	for (int i = rtl_hist_next_bucket(&s, &b, 0); i >= 0 && !bad;
	     i = rtl_hist_next_bucket(&s, &b, i + 1)) {
		bad |= fprintf(f, "%s[%lld,%llu]", sep, (long long)b.lower,
			       (unsigned long long)b.count) < 0;
		sep = ",";
	}
	bad |= fputs("]}\n", f) == EOF;
	return bad || ferror(f) ? -EIO : 0;
}
