// SPDX-License-Identifier: MIT
/*
 * rtl_bench: the reporting plumbing of the apps that measure (ring-bench,
 * rtde-codec-bench, rtloop-bench, rtloop-trace).
 *
 * docs/benchmarks.md asks for every figure as a ratio to something measured
 * in the same run, summarised over the repetitions by the median of the
 * per-repetition ratios with their min and max; bench_stat3() is that
 * summary. The rest is what each report wrote again: the machine and CPU
 * model it ran on, and a string as a JSON value.
 *
 * Internal to apps/ (a static library, not part of librtloop). Not RT-safe:
 * for the report, after the measurement.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <rtloop/json.h> /* rtl_json_string() for the JSON reports */

/* bench_stat3() looks at no more values than this. */
#define BENCH_MAX_VALUES 128

/* Median, min and max of the finite values, and how many there were. */
struct bench_stat3 {
	double med, min, max;
	unsigned n;
};

/*
 * The median (the mean of the middle two for an even count), min and max of
 * the finite values among the first @n (at most BENCH_MAX_VALUES) of
 * @v: NaN marks a figure that was not measured. With none, all three are NaN
 * and .n is 0.
 */
struct bench_stat3 bench_stat3(const double *v, unsigned n);

/*
 * "SYSNAME RELEASE [VERSION ]MACHINE, N CPUs online" from uname(2) into @buf:
 * with @with_version the kernel's build string too (which names
 * PREEMPT_DYNAMIC or PREEMPT_RT).
 */
void bench_machine(char *buf, size_t len, bool with_version);

/* The first "model name" of /proc/cpuinfo into @buf, or "unknown". */
void bench_cpu_model(char *buf, size_t len);

#endif /* BENCH_H */
