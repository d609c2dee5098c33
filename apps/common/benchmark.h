// SPDX-License-Identifier: MIT
/*
 * rtl_bench: the reporting plumbing of the apps that measure (ring-bench,
 * rtde-codec-bench, rtloop-bench, rtloop-trace).
 *
 * docs/benchmarks.md asks for every figure as a ratio to something measured
 * in the same run, summarised over the repetitions by the median of the
 * per-repetition ratios with their min and max; bench_stat3() is that
 * summary. The rest is what each report wrote again: the machine and CPU
 * model it ran on, and a string as a JSON value; and, for the
 * micro-benchmarks (ring-bench, rtde-codec-bench), the options they share
 * (--reps, --json, --callgrind) and the stream of --json.
 *
 * Internal to apps/ (a static library, not part of librtloop). Not RT-safe:
 * for the report, after the measurement.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/json.h> /* rtl_json_string() for the JSON reports */

#include "cli.h" /* the option table rows of BENCH_ROWS() */

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

/* Repetitions a micro-benchmark runs at most (--reps). */
#define BENCH_OPT_MAX_REPS 101

/* The options the micro-benchmarks share; the app sets the defaults. */
struct bench_opts {
	unsigned reps;	    /* -r, --reps N: 1..BENCH_OPT_MAX_REPS */
	const char *json;   /* -j, --json FILE ('-': stdout); NULL: none */
	uint64_t callgrind; /* -g, --callgrind N: loop iterations; 0: normal run */
};

#define BENCH__STR_(x) #x
#define BENCH__STR(x) BENCH__STR_(x)

/*
 * The rows of the shared options for a micro-benchmark's option table
 * (cli.h), storing into struct bench_opts *@o: a bad value is named on
 * stderr ("PROG: bad --reps 'X': want an integer in 1..101; see PROG
 * --help") and is a usage error.
 */
#define BENCH_ROWS(o)                                                             \
	CLI_UINT('r', "reps", &(o)->reps, 1, BENCH_OPT_MAX_REPS,                  \
		 "want an integer in 1.." BENCH__STR(BENCH_OPT_MAX_REPS)),        \
		CLI_TEXT('j', "json", &(o)->json),                                \
		CLI_UINT('g', "callgrind", &(o)->callgrind, 1, UINT64_C(1) << 40, \
			 "want a positive integer")

/*
 * The stream of --json @path: stdout for "-", else the file, created or
 * truncated. On failure prints "PROG: cannot write --json 'PATH': REASON"
 * to stderr and returns NULL.
 */
FILE *bench_json_open(const char *prog, const char *path);

/* Done with bench_json_open()'s @f: close a file, flush stdout. */
void bench_json_close(FILE *f);

#endif /* BENCH_H */
