// SPDX-License-Identifier: MIT
/*
 * Tests of rtl_hist: the bucket layout (exact below 256, tiling, <= 1 %
 * error from 100 ns to 10 s), percentiles against sorted copies of known
 * data, overflow and underflow, merge, snapshot, the two writers read back
 * from memory streams, and that the RT-safe calls never allocate.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/hist.h>
#include <rtloop/time.h>

#include "alloc-count.h"

/* ---- helpers ------------------------------------------------------------- */

/* splitmix64: a fixed-seed generator, identical on every libc. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Log-uniform integer in [lo, hi]. */
static int64_t rng_log(uint64_t *s, double lo, double hi)
{
	double u = (double)(rng_next(s) >> 11) / 9007199254740992.0; /* [0, 1) */

	return (int64_t)exp(log(lo) + u * (log(hi) - log(lo)));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Exact nearest-rank percentile of @n sorted values, @pm in thousandths of
 * a percent (99.9 % = 99900), in integer arithmetic: rank ceil(pm * n /
 * 100000), at least 1.
 */
static int64_t exact_pct(const int64_t *sorted, size_t n, uint64_t pm)
{
	uint64_t rank = (pm * n + 99999) / 100000;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static const uint64_t pcts_pm[] = { 0,	   1000,  10000, 25000, 50000, 75000,
				    90000, 95000, 99000, 99900, 99990, 100000 };

/* Record @n values, sort them, and check every percentile in pcts_pm
 * against the exact one within 1 % (and the extremes exactly). */
static void check_against_sorted(int64_t *v, size_t n)
{
	static struct rtl_hist h;

	cr_assert_eq(rtl_hist_init(&h), 0);
	for (size_t i = 0; i < n; i++)
		rtl_hist_record(&h, v[i]);
	qsort(v, n, sizeof(*v), cmp_i64);
	for (size_t i = 0; i < sizeof(pcts_pm) / sizeof(pcts_pm[0]); i++) {
		double p = (double)pcts_pm[i] / 1000.0;
		int64_t want = exact_pct(v, n, pcts_pm[i]);
		int64_t got = rtl_hist_percentile(&h, p);

		cr_assert_leq(fabs((double)(got - want)), 0.01 * (double)want,
			      "p%g: histogram %lld, exact %lld", p, (long long)got,
			      (long long)want);
	}
	cr_assert_eq(rtl_hist_percentile(&h, 0.0), v[0]);
	cr_assert_eq(rtl_hist_percentile(&h, 100.0), v[n - 1]);
	cr_assert_eq(rtl_hist_count(&h), n);
}

/* Two histograms hold the same samples: every counter agrees. */
static void assert_same(const struct rtl_hist *a, const struct rtl_hist *b)
{
	cr_assert_eq(rtl_hist_count(a), rtl_hist_count(b));
	cr_assert_eq(rtl_hist_min(a), rtl_hist_min(b));
	cr_assert_eq(rtl_hist_max(a), rtl_hist_max(b));
	cr_assert_eq(rtl_hist_mean(a), rtl_hist_mean(b));
	cr_assert_eq(rtl_hist_overflow(a), rtl_hist_overflow(b));
	cr_assert_eq(rtl_hist_underflow(a), rtl_hist_underflow(b));
	for (int i = 0; i < RTL_HIST_BUCKETS; i++)
		cr_assert_eq(atomic_load(&a->buckets[i]), atomic_load(&b->buckets[i]), "bucket %d",
			     i);
}

/* ---- layout -------------------------------------------------------------- */

Test(hist, values_below_256_are_exact)
{
	static struct rtl_hist h;
	struct rtl_hist_bucket b;

	for (int64_t v = 0; v < 2 * RTL_HIST_SUB; v++) {
		cr_assert_eq(rtl_hist_bucket_index(v), v);
		cr_assert_eq(rtl_hist_bucket_bounds(&b, (int)v), 0);
		cr_assert_eq(b.lower, v);
		cr_assert_eq(b.upper, v + 1);
		cr_assert_eq(b.value, v);
	}
	/* Through the histogram, with min/max elsewhere so no clamping helps. */
	for (int64_t v = 0; v < 2 * RTL_HIST_SUB; v++) {
		rtl_hist_reset(&h);
		rtl_hist_record(&h, -1);
		rtl_hist_record(&h, v);
		rtl_hist_record(&h, v);
		rtl_hist_record(&h, 1000000);
		cr_assert_eq(rtl_hist_percentile(&h, 50.0), v);
	}
	/* 256 is the first value that shares a bucket. */
	cr_assert_eq(rtl_hist_bucket_index(256), rtl_hist_bucket_index(257));
}

Test(hist, buckets_tile_the_range_with_width_at_most_one_128th)
{
	struct rtl_hist_bucket b;
	int64_t next = 0;

	for (int i = 0; i < RTL_HIST_BUCKETS; i++) {
		cr_assert_eq(rtl_hist_bucket_bounds(&b, i), 0);
		cr_assert_eq(b.lower, next, "bucket %d starts at %lld, want %lld", i,
			     (long long)b.lower, (long long)next);
		cr_assert_gt(b.upper, b.lower);
		if (i < 2 * RTL_HIST_SUB)
			cr_assert_eq(b.upper - b.lower, 1);
		else
			cr_assert_leq((b.upper - b.lower) * RTL_HIST_SUB, b.lower,
				      "bucket %d too wide", i);
		cr_assert(b.value >= b.lower && b.value < b.upper);
		cr_assert_eq(rtl_hist_bucket_index(b.lower), i);
		cr_assert_eq(rtl_hist_bucket_index(b.upper - 1), i);
		cr_assert_eq(b.count, 0);
		next = b.upper;
	}
	cr_assert_eq(next, RTL_HIST_LIMIT_NS);
	cr_assert_geq(RTL_HIST_LIMIT_NS, 10 * RTL_NS_PER_SEC);
	cr_assert_eq(rtl_hist_bucket_index(RTL_HIST_LIMIT_NS - 1), RTL_HIST_BUCKETS - 1);
	cr_assert_eq(rtl_hist_bucket_index(RTL_HIST_LIMIT_NS), -ERANGE);
	cr_assert_eq(rtl_hist_bucket_index(INT64_MAX), -ERANGE);
	cr_assert_eq(rtl_hist_bucket_index(-5), 0);
	cr_assert_eq(rtl_hist_bucket_index(INT64_MIN), 0);
}

Test(hist, bucket_bounds_rejects_bad_arguments)
{
	struct rtl_hist_bucket b;

	cr_assert_eq(rtl_hist_bucket_bounds(&b, -1), -EINVAL);
	cr_assert_eq(rtl_hist_bucket_bounds(&b, RTL_HIST_BUCKETS), -EINVAL);
	cr_assert_eq(rtl_hist_bucket_bounds(NULL, 0), -EINVAL);
}

static double rel_error(int64_t v)
{
	struct rtl_hist_bucket b;
	int i = rtl_hist_bucket_index(v);

	cr_assert_geq(i, 0, "%lld has no bucket", (long long)v);
	cr_assert_eq(rtl_hist_bucket_bounds(&b, i), 0);
	cr_assert(v >= b.lower && v < b.upper, "%lld outside its bucket", (long long)v);
	return fabs((double)(b.value - v)) / (double)v;
}

Test(hist, relative_error_below_one_percent_from_100ns_to_10s)
{
	uint64_t seed = 42;
	double worst = 0.0, e;

	/* Geometric sweep, ratio 1.0001: every sub-bucket is hit many times. */
	for (double x = 100.0; x <= 1e10; x *= 1.0001) {
		for (int64_t d = -1; d <= 1; d++) {
			e = rel_error((int64_t)x + d);
			cr_assert_leq(e, 0.01, "value %lld: error %g", (long long)x + d, e);
			worst = e > worst ? e : worst;
		}
	}
	for (int i = 0; i < 200000; i++) {
		int64_t v = rng_log(&seed, 100.0, 1e10);

		e = rel_error(v);
		cr_assert_leq(e, 0.01, "value %lld: error %g", (long long)v, e);
	}
	/* The design promises half a bucket, 1/256; and the sweep did meet
	 * buckets that are not exact (else the check above proved nothing). */
	cr_assert_leq(worst, 1.0 / 256.0);
	cr_assert_gt(worst, 1.0 / 512.0);
}

/* ---- empty, init, reset -------------------------------------------------- */

Test(hist, empty_histogram_reports_zeros)
{
	static struct rtl_hist zeroed; /* all-zero storage is a valid empty histogram */
	struct rtl_hist_bucket b;

	cr_assert_eq(rtl_hist_count(&zeroed), 0);
	cr_assert_eq(rtl_hist_min(&zeroed), 0);
	cr_assert_eq(rtl_hist_max(&zeroed), 0);
	cr_assert_eq(rtl_hist_mean(&zeroed), 0.0);
	cr_assert_eq(rtl_hist_percentile(&zeroed, 0.0), 0);
	cr_assert_eq(rtl_hist_percentile(&zeroed, 50.0), 0);
	cr_assert_eq(rtl_hist_percentile(&zeroed, 100.0), 0);
	cr_assert_eq(rtl_hist_next_bucket(&zeroed, &b, 0), -ENOENT);
	/* The first sample becomes the minimum, even if it is large. */
	rtl_hist_record(&zeroed, 5000000);
	cr_assert_eq(rtl_hist_min(&zeroed), 5000000);
}

Test(hist, init_rejects_null_and_reset_empties)
{
	struct rtl_hist h;
	struct rtl_hist_bucket b;

	memset(&h, 0xa5, sizeof(h));
	cr_assert_eq(rtl_hist_init(NULL), -EINVAL);
	cr_assert_eq(rtl_hist_init(&h), 0);
	cr_assert_eq(rtl_hist_count(&h), 0);
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, 0), -ENOENT);
	rtl_hist_record(&h, 7);
	rtl_hist_record(&h, -7);
	rtl_hist_record(&h, INT64_MAX);
	rtl_hist_reset(&h);
	cr_assert_eq(rtl_hist_count(&h), 0);
	cr_assert_eq(rtl_hist_min(&h), 0);
	cr_assert_eq(rtl_hist_max(&h), 0);
	cr_assert_eq(rtl_hist_overflow(&h), 0);
	cr_assert_eq(rtl_hist_underflow(&h), 0);
	cr_assert_eq(rtl_hist_percentile(&h, 50.0), 0);
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, 0), -ENOENT);
	rtl_hist_record(&h, 300);
	cr_assert_eq(rtl_hist_min(&h), 300);
}

/* ---- statistics ---------------------------------------------------------- */

Test(hist, count_min_max_mean_are_exact)
{
	static struct rtl_hist h;
	static const int64_t v[] = { 123457, 99, 1000000007, 5, 777777 };
	uint64_t sum = 0;

	rtl_hist_init(&h);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		rtl_hist_record(&h, v[i]);
		sum += (uint64_t)v[i];
	}
	cr_assert_eq(rtl_hist_count(&h), 5);
	cr_assert_eq(rtl_hist_min(&h), 5);
	cr_assert_eq(rtl_hist_max(&h), 1000000007);
	cr_assert_eq(rtl_hist_mean(&h), (double)sum / 5.0);
	cr_assert_eq(rtl_hist_percentile(&h, 0.0), 5);
	cr_assert_eq(rtl_hist_percentile(&h, 100.0), 1000000007);
}

Test(hist, percentile_reports_bucket_midpoint_clamped_to_min_max)
{
	static struct rtl_hist h;

	/* 1000..1003 share the bucket [1000, 1004), midpoint 1002. */
	rtl_hist_init(&h);
	rtl_hist_record(&h, 1000);
	rtl_hist_record(&h, 1001);
	rtl_hist_record(&h, 1003);
	cr_assert_eq(rtl_hist_percentile(&h, 50.0), 1002);
	cr_assert_eq(rtl_hist_percentile(&h, 0.0), 1000);
	cr_assert_eq(rtl_hist_percentile(&h, 100.0), 1003);
	/* Out-of-range p is clamped, NaN counts as 0. */
	cr_assert_eq(rtl_hist_percentile(&h, -5.0), 1000);
	cr_assert_eq(rtl_hist_percentile(&h, 250.0), 1003);
	cr_assert_eq(rtl_hist_percentile(&h, NAN), 1000);
	/* Clamped from below: only 1001 in the bucket, min is 1001. */
	rtl_hist_reset(&h);
	rtl_hist_record(&h, 1001);
	rtl_hist_record(&h, 1001);
	cr_assert_eq(rtl_hist_percentile(&h, 50.0), 1001);
}

Test(hist, uniform_1_to_100000_matches_exact_percentiles)
{
	static int64_t v[100000];
	size_t n = sizeof(v) / sizeof(v[0]);

	/* Shuffled, so the order of recording is not the sorted order. */
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)((i * 7919) % n) + 1;
	check_against_sorted(v, n);
	cr_assert_eq(v[0], 1);
	cr_assert_eq(v[n - 1], 100000);
}

Test(hist, bimodal_data_matches_exact_percentiles)
{
	static struct rtl_hist h;
	static int64_t v[10000];
	size_t n = sizeof(v) / sizeof(v[0]);
	uint64_t seed = 7;

	/* 90 % around 50 us, 10 % around 5 ms: the shape of a loop that is
	 * usually on time and sometimes preempted. */
	for (size_t i = 0; i < n; i++) {
		int64_t base = i % 10 == 9 ? 5000000 : 50000;

		v[i] = base + (int64_t)(rng_next(&seed) % (uint64_t)(base / 10));
	}
	rtl_hist_init(&h);
	for (size_t i = 0; i < n; i++)
		rtl_hist_record(&h, v[i]);
	/* p50 in the first mode, p95 in the second. */
	cr_assert_lt(rtl_hist_percentile(&h, 50.0), 56000);
	cr_assert_gt(rtl_hist_percentile(&h, 95.0), 4900000);
	check_against_sorted(v, n);
}

Test(hist, single_value_gives_it_exactly_at_every_percentile)
{
	static struct rtl_hist h;

	rtl_hist_init(&h);
	for (int i = 0; i < 1000; i++)
		rtl_hist_record(&h, 12345);
	for (double p = 0.0; p <= 100.0; p += 0.5)
		cr_assert_eq(rtl_hist_percentile(&h, p), 12345, "p%g", p);
	cr_assert_eq(rtl_hist_min(&h), 12345);
	cr_assert_eq(rtl_hist_max(&h), 12345);
	cr_assert_eq(rtl_hist_mean(&h), 12345.0);
	cr_assert_eq(rtl_hist_count(&h), 1000);
}

Test(hist, random_log_uniform_data_matches_exact_percentiles)
{
	static int64_t v[200000];
	size_t n = sizeof(v) / sizeof(v[0]);
	uint64_t seed = 2024;

	for (size_t i = 0; i < n; i++)
		v[i] = rng_log(&seed, 100.0, 1e10);
	check_against_sorted(v, n);
}

Test(hist, p999_of_1000_samples_is_the_999th)
{
	static struct rtl_hist h;

	/* 99.9 / 100 * 1000 is 999.0000000000001 in doubles: still rank 999. */
	rtl_hist_init(&h);
	for (int64_t i = 1; i <= 1000; i++)
		rtl_hist_record(&h, i * 1000000);
	cr_assert_lt(llabs(rtl_hist_percentile(&h, 99.9) - 999000000), 999000000 / 100);
	cr_assert_eq(rtl_hist_percentile(&h, 99.95), 1000000000);
}

/* ---- overflow, underflow -------------------------------------------------- */

Test(hist, overflow_is_counted_and_sets_max)
{
	static struct rtl_hist h;
	struct rtl_hist_bucket b;
	uint64_t in_buckets = 0;

	rtl_hist_init(&h);
	for (int i = 0; i < 98; i++)
		rtl_hist_record(&h, 200);
	rtl_hist_record(&h, RTL_HIST_LIMIT_NS);
	rtl_hist_record(&h, INT64_MAX);
	cr_assert_eq(rtl_hist_overflow(&h), 2);
	cr_assert_eq(rtl_hist_count(&h), 100);
	cr_assert_eq(rtl_hist_max(&h), INT64_MAX);
	cr_assert_eq(rtl_hist_percentile(&h, 50.0), 200);
	cr_assert_eq(rtl_hist_percentile(&h, 98.0), 200);
	/* Ranks 99 and 100 are overflow samples: reported as the maximum. */
	cr_assert_eq(rtl_hist_percentile(&h, 99.0), INT64_MAX);
	cr_assert_eq(rtl_hist_percentile(&h, 100.0), INT64_MAX);
	for (int i = rtl_hist_next_bucket(&h, &b, 0); i >= 0;
	     i = rtl_hist_next_bucket(&h, &b, i + 1))
		in_buckets += b.count;
	cr_assert_eq(in_buckets, 98);
	/* The largest value below the limit is not overflow. */
	rtl_hist_record(&h, RTL_HIST_LIMIT_NS - 1);
	cr_assert_eq(rtl_hist_overflow(&h), 2);
}

Test(hist, negative_values_count_as_zero_and_underflow)
{
	static struct rtl_hist h;
	struct rtl_hist_bucket b;

	rtl_hist_init(&h);
	rtl_hist_record(&h, 500);
	rtl_hist_record(&h, -1);
	rtl_hist_record(&h, INT64_MIN);
	cr_assert_eq(rtl_hist_underflow(&h), 2);
	cr_assert_eq(rtl_hist_overflow(&h), 0);
	cr_assert_eq(rtl_hist_count(&h), 3);
	cr_assert_eq(rtl_hist_min(&h), 0);
	cr_assert_eq(rtl_hist_max(&h), 500);
	cr_assert_eq(rtl_hist_mean(&h), 500.0 / 3.0);
	cr_assert_eq(rtl_hist_percentile(&h, 50.0), 0);
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, 0), 0);
	cr_assert_eq(b.count, 2);
}

/* ---- iteration ------------------------------------------------------------- */

Test(hist, next_bucket_visits_nonempty_buckets_in_order)
{
	static struct rtl_hist h;
	static const int64_t v[] = { 3, 3, 1000, 1001, 70000, 9000000000 };
	struct rtl_hist_bucket b;
	int idx[8], n = 0;

	rtl_hist_init(&h);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		rtl_hist_record(&h, v[i]);
	for (int i = rtl_hist_next_bucket(&h, &b, 0); i >= 0;
	     i = rtl_hist_next_bucket(&h, &b, i + 1)) {
		cr_assert_lt(n, 8);
		idx[n++] = i;
		cr_assert_eq(rtl_hist_bucket_index(b.lower), i);
	}
	cr_assert_eq(n, 4);
	cr_assert_eq(idx[0], 3);
	cr_assert_eq(idx[1], rtl_hist_bucket_index(1000));
	cr_assert_eq(idx[2], rtl_hist_bucket_index(70000));
	cr_assert_eq(idx[3], rtl_hist_bucket_index(9000000000));
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, idx[1]), idx[1]);
	cr_assert_eq(b.count, 2);
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, RTL_HIST_BUCKETS), -ENOENT);
	cr_assert_eq(rtl_hist_next_bucket(&h, &b, -1), -EINVAL);
	cr_assert_eq(rtl_hist_next_bucket(NULL, &b, 0), -EINVAL);
	cr_assert_eq(rtl_hist_next_bucket(&h, NULL, 0), -EINVAL);
}

/* ---- merge, snapshot -------------------------------------------------------- */

Test(hist, merge_equals_recording_both_sets)
{
	static struct rtl_hist a, b, both;
	uint64_t seed = 99;

	rtl_hist_init(&a);
	rtl_hist_init(&b);
	rtl_hist_init(&both);
	for (int i = 0; i < 50000; i++) {
		int64_t x = rng_log(&seed, 50.0, 1e11) - 60; /* some negative, some overflow */

		rtl_hist_record(&a, x);
		rtl_hist_record(&both, x);
	}
	for (int i = 0; i < 30000; i++) {
		int64_t x = rng_log(&seed, 1000.0, 1e6);

		rtl_hist_record(&b, x);
		rtl_hist_record(&both, x);
	}
	cr_assert_gt(rtl_hist_overflow(&a), 0);
	cr_assert_gt(rtl_hist_underflow(&a), 0);
	cr_assert_eq(rtl_hist_merge(&b, &a), 0);
	assert_same(&b, &both);
	cr_assert_eq(rtl_hist_percentile(&b, 99.0), rtl_hist_percentile(&both, 99.0));
}

Test(hist, merge_handles_empty_sides_and_null)
{
	static struct rtl_hist a, empty, copy;

	rtl_hist_init(&a);
	rtl_hist_init(&empty);
	rtl_hist_record(&a, 4000);
	rtl_hist_record(&a, 9000);
	rtl_hist_snapshot(&copy, &a);
	/* Empty into non-empty: nothing changes (the minimum in particular). */
	cr_assert_eq(rtl_hist_merge(&a, &empty), 0);
	assert_same(&a, &copy);
	/* Non-empty into empty: takes the minimum from the source. */
	cr_assert_eq(rtl_hist_merge(&empty, &a), 0);
	assert_same(&empty, &a);
	cr_assert_eq(rtl_hist_min(&empty), 4000);
	/* Into itself: doubles. */
	cr_assert_eq(rtl_hist_merge(&a, &a), 0);
	cr_assert_eq(rtl_hist_count(&a), 4);
	cr_assert_eq(rtl_hist_min(&a), 4000);
	cr_assert_eq(rtl_hist_merge(NULL, &a), -EINVAL);
	cr_assert_eq(rtl_hist_merge(&a, NULL), -EINVAL);
}

Test(hist, snapshot_copies_every_counter)
{
	static struct rtl_hist a, s;
	uint64_t seed = 5;

	rtl_hist_init(&a);
	memset(&s, 0x5a, sizeof(s));
	for (int i = 0; i < 10000; i++)
		rtl_hist_record(&a, rng_log(&seed, 1.0, 1e11) - 2);
	cr_assert_eq(rtl_hist_snapshot(&s, &a), 0);
	assert_same(&s, &a);
	/* The copy is independent of the original. */
	rtl_hist_record(&a, 1);
	cr_assert_eq(rtl_hist_count(&s) + 1, rtl_hist_count(&a));
	cr_assert_eq(rtl_hist_snapshot(&a, &a), 0);
	cr_assert_eq(rtl_hist_snapshot(NULL, &a), -EINVAL);
	cr_assert_eq(rtl_hist_snapshot(&s, NULL), -EINVAL);
}

/* ---- writers ------------------------------------------------------------ */

Test(hist, print_writes_a_parsable_summary_line)
{
	static struct rtl_hist h;
	char *buf = NULL, title[64], unit[8];
	size_t len = 0;
	unsigned long long n;
	double mn, p50, p90, p99, p999, mx, mean;
	FILE *f = open_memstream(&buf, &len);
	int end = 0;

	cr_assert_not_null(f);
	rtl_hist_init(&h);
	for (int64_t i = 1; i <= 1000; i++)
		rtl_hist_record(&h, i * 1000); /* 1 us .. 1000 us */
	cr_assert_eq(rtl_hist_print(&h, f, "wakeup", RTL_NS_PER_US), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(sscanf(buf,
			    "%63s [%7[^]]]: n=%llu min=%lf p50=%lf p90=%lf p99=%lf p99.9=%lf "
			    "max=%lf mean=%lf%n",
			    title, unit, &n, &mn, &p50, &p90, &p99, &p999, &mx, &mean, &end),
		     10, "unparsable: %s", buf);
	cr_assert_str_eq(title, "wakeup");
	cr_assert_str_eq(unit, "us");
	cr_assert_str_eq(buf + end, "\n", "trailing text: %s", buf + end);
	cr_assert_eq(n, 1000);
	cr_assert_eq(mn, 1.0);
	cr_assert_eq(mx, 1000.0);
	cr_assert_eq(mean, 500.5);
	/* Printed to 1 decimal at these magnitudes. */
	cr_assert_leq(fabs(p50 - (double)rtl_hist_percentile(&h, 50.0) / 1000.0), 0.05);
	cr_assert_leq(fabs(p90 - (double)rtl_hist_percentile(&h, 90.0) / 1000.0), 0.05);
	cr_assert_leq(fabs(p99 - (double)rtl_hist_percentile(&h, 99.0) / 1000.0), 0.05);
	cr_assert_leq(fabs(p999 - (double)rtl_hist_percentile(&h, 99.9) / 1000.0), 0.05);
	cr_assert_leq(fabs(p50 - 500.0), 5.0);
	cr_assert_leq(fabs(p99 - 990.0), 9.9);
	/* Three decimals below 10 units: "min=1.000". */
	cr_assert_not_null(strstr(buf, " min=1.000 "), "%s", buf);
	free(buf);
}

Test(hist, print_shows_overflow_underflow_and_ns_unit)
{
	static struct rtl_hist h;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	rtl_hist_init(&h);
	rtl_hist_record(&h, 150);
	rtl_hist_record(&h, -3);
	rtl_hist_record(&h, RTL_HIST_LIMIT_NS + 1);
	cr_assert_eq(rtl_hist_print(&h, f, NULL, 1), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_str_eq(buf, "hist [ns]: n=3 min=0 p50=150 p90=17179869185 p99=17179869185 "
			      "p99.9=17179869185 max=17179869185 mean=5726623112 overflow=1 "
			      "underflow=1\n");
	free(buf);
}

Test(hist, print_and_json_reject_bad_arguments_and_report_write_errors)
{
	static struct rtl_hist h;
	FILE *ro = fopen("/dev/null", "r");

	cr_assert_not_null(ro);
	rtl_hist_init(&h);
	rtl_hist_record(&h, 1);
	cr_assert_eq(rtl_hist_print(NULL, stdout, "x", 1), -EINVAL);
	cr_assert_eq(rtl_hist_print(&h, NULL, "x", 1), -EINVAL);
	cr_assert_eq(rtl_hist_print(&h, stdout, "x", 10), -EINVAL);
	cr_assert_eq(rtl_hist_print(&h, stdout, "x", 0), -EINVAL);
	cr_assert_eq(rtl_hist_write_json(NULL, stdout), -EINVAL);
	cr_assert_eq(rtl_hist_write_json(&h, NULL), -EINVAL);
	/* A stream opened for reading refuses every write. */
	cr_assert_eq(rtl_hist_print(&h, ro, "x", RTL_NS_PER_MS), -EIO);
	cr_assert_eq(rtl_hist_write_json(&h, ro), -EIO);
	fclose(ro);
}

/* Value of "key": in the JSON text @s, which must be present. */
static long long json_int(const char *s, const char *key)
{
	char pat[64];
	const char *p;
	char *end;
	long long v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	cr_assert_not_null(p, "no %s in %s", pat, s);
	v = strtoll(p + strlen(pat), &end, 10);
	cr_assert(*end == ',' || *end == '}', "%s is not an integer", key);
	return v;
}

Test(hist, json_lists_summary_and_nonempty_buckets)
{
	static struct rtl_hist h;
	static const char *keys[] = { "count",	  "min_ns",    "p50_ns", "p90_ns",
				      "p99_ns",	  "p999_ns",   "max_ns", "mean_ns",
				      "overflow", "underflow", "buckets" };
	char *buf = NULL, *p, *end;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rtl_hist_bucket b;
	long long total = 0, prev = -1;
	int nb = 0;
	uint64_t seed = 11;

	cr_assert_not_null(f);
	rtl_hist_init(&h);
	for (int i = 0; i < 5000; i++)
		rtl_hist_record(&h, rng_log(&seed, 100.0, 1e8));
	rtl_hist_record(&h, RTL_HIST_LIMIT_NS);
	rtl_hist_record(&h, -1);
	cr_assert_eq(rtl_hist_write_json(&h, f), 0);
	cr_assert_eq(fclose(f), 0);

	/* Shape: one object on one line, keys in the documented order. */
	cr_assert_eq(buf[0], '{');
	cr_assert_eq(len, strlen(buf));
	cr_assert_str_eq(buf + len - 3, "]}\n");
	p = buf;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char pat[32];

		snprintf(pat, sizeof(pat), "\"%s\":", keys[i]);
		p = strstr(p, pat);
		cr_assert_not_null(p, "%s missing or out of order", keys[i]);
	}

	cr_assert_eq(json_int(buf, "count"), 5002);
	cr_assert_eq(json_int(buf, "min_ns"), 0);
	cr_assert_eq(json_int(buf, "p50_ns"), rtl_hist_percentile(&h, 50.0));
	cr_assert_eq(json_int(buf, "p90_ns"), rtl_hist_percentile(&h, 90.0));
	cr_assert_eq(json_int(buf, "p99_ns"), rtl_hist_percentile(&h, 99.0));
	cr_assert_eq(json_int(buf, "p999_ns"), rtl_hist_percentile(&h, 99.9));
	cr_assert_eq(json_int(buf, "max_ns"), RTL_HIST_LIMIT_NS);
	cr_assert_eq(json_int(buf, "mean_ns"), llround(rtl_hist_mean(&h)));
	cr_assert_eq(json_int(buf, "overflow"), 1);
	cr_assert_eq(json_int(buf, "underflow"), 1);

	/* "buckets":[[lower,count],...]: each pair names a real bucket
	 * boundary, in increasing order, and the counts add up. */
	p = strstr(buf, "\"buckets\":[") + strlen("\"buckets\":[");
	while (*p == '[') {
		long long lower = strtoll(p + 1, &end, 10);
		long long count;
		int i;

		cr_assert_eq(*end, ',');
		count = strtoll(end + 1, &end, 10);
		cr_assert_eq(*end, ']');
		p = end + 1;
		cr_assert(*p == ',' || *p == ']', "bad separator %c", *p);
		if (*p == ',')
			p++;
		i = rtl_hist_bucket_index(lower);
		cr_assert_eq(rtl_hist_bucket_bounds(&b, i), 0);
		cr_assert_eq(b.lower, lower, "%lld is not a bucket boundary", lower);
		cr_assert_gt(lower, prev);
		cr_assert_gt(count, 0);
		cr_assert_eq(rtl_hist_next_bucket(&h, &b, i), i);
		cr_assert_eq((long long)b.count, count);
		prev = lower;
		total += count;
		nb++;
	}
	cr_assert_str_eq(p, "]}\n");
	cr_assert_eq(total, 5001); /* all but the overflow sample */
	cr_assert_gt(nb, 100);
	free(buf);
}

Test(hist, json_of_empty_histogram)
{
	static struct rtl_hist h;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	rtl_hist_init(&h);
	cr_assert_eq(rtl_hist_write_json(&h, f), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_str_eq(buf, "{\"count\":0,\"min_ns\":0,\"p50_ns\":0,\"p90_ns\":0,\"p99_ns\":0,"
			      "\"p999_ns\":0,\"max_ns\":0,\"mean_ns\":0,\"overflow\":0,"
			      "\"underflow\":0,\"buckets\":[]}\n");
	free(buf);
}

/* ---- RT safety --------------------------------------------------------------- */

Test(hist, rt_calls_do_not_allocate)
{
	static struct rtl_hist h, other;
	struct rtl_hist_bucket b;
	uint64_t seed = 1;
	int64_t sink = 0;
	long allocs;

	/* Positive control: the counter sees an allocation, so a zero below
	 * means something. */
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");

	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	rtl_hist_init(&h);
	rtl_hist_init(&other);
	for (int i = 0; i < 100000; i++)
		rtl_hist_record(&h, rng_log(&seed, 1.0, 1e11) - 10);
	rtl_hist_merge(&other, &h);
	rtl_hist_snapshot(&other, &h);
	sink += rtl_hist_percentile(&h, 99.9) + rtl_hist_min(&h) + rtl_hist_max(&h);
	sink += (int64_t)rtl_hist_mean(&h) + (int64_t)rtl_hist_count(&h);
	sink += rtl_hist_next_bucket(&h, &b, 0) + rtl_hist_bucket_index(12345);
	rtl_hist_reset(&h);
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_eq(allocs, 0, "%ld allocations", allocs);
	cr_assert_neq(sink, 0);
}
