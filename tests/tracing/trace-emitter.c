// SPDX-License-Identifier: MIT
/*
 * trace-emitter: fires every rtloop tracepoint with values a checker can
 * recompute, or times one tracepoint.
 *
 * Default mode plays --frames frames through the stages of the loop, in the
 * order the loop will emit them, with every field a function of the frame's
 * sequence number (seq = 1000, 1001, ...); test-trace.sh records it with
 * lttng and checks the babeltrace2 text against the same formulas:
 *
 *   reconnect(1, -ECONNREFUSED), reconnect(2, 0), text(6, "trace-emitter start")
 *   per frame:
 *     frame_received(seq, seq / 2.0, seq % 4 ? 5000000000 + seq : NO_RX_TS, 1060)
 *     skipped(seq, seq % 3 + 1, (seq / 10) % 3)        only when seq % 10 == 0
 *     frame_decoded(seq, 1)
 *     frame_committed(seq, seq % 8 + 1)
 *     worker_woke(seq, seq odd ? -seq : seq)
 *     step_started(seq)
 *     motion_event(seq, 9)                              only when seq == 1007
 *     step_finished(seq, 2 * seq + 1)
 *     package_sent(seq, 2, 40) when seq is even, else package_suppressed(seq, 2, 40)
 *   watchdog_fired(last seq, 3), text(6, "trace-emitter end")
 *
 * --bench N times N calls of rtl_trace_step_started() against an empty loop
 * of N iterations, interleaved over --reps repetitions (docs/benchmarks.md),
 * and prints the median ns per call of each and of their difference. Run it
 * with and without a recording session (docs/tracing.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/time.h>

#include "rtl_trace.h"

#define SEQ0 1000
/* The one frame whose step reports motion events: time-out and stopped. */
#define MOTION_SEQ (SEQ0 + 7)
#define MOTION_EVENTS 9u
#define MAX_REPS 101

/* Keeps the compiler from deleting or merging the loop bodies. */
#define barrier() __asm__ __volatile__("" ::: "memory")

static void emit_frames(uint64_t frames)
{
	uint64_t seq = SEQ0;

	rtl_trace_reconnect(1, -ECONNREFUSED);
	rtl_trace_reconnect(2, 0);
	rtl_trace_text(6, "trace-emitter start");
	for (uint64_t i = 0; i < frames; i++) {
		seq = SEQ0 + i;
		rtl_trace_frame_received(
			seq, (double)seq / 2.0,
			seq % 4 ? INT64_C(5000000000) + (int64_t)seq : RTL_TRACE_NO_RX_TS, 1060);
		if (seq % 10 == 0)
			rtl_trace_skipped(seq, (uint32_t)(seq % 3 + 1), (int)((seq / 10) % 3));
		rtl_trace_frame_decoded(seq, 1);
		rtl_trace_frame_committed(seq, (uint32_t)(seq % 8 + 1));
		rtl_trace_worker_woke(seq, seq % 2 ? -(int64_t)seq : (int64_t)seq);
		rtl_trace_step_started(seq);
		if (seq == MOTION_SEQ)
			rtl_trace_motion_event(seq, MOTION_EVENTS);
		rtl_trace_step_finished(seq, 2 * (int64_t)seq + 1);
		if (seq % 2 == 0)
			rtl_trace_package_sent(seq, 2, 40);
		else
			rtl_trace_package_suppressed(seq, 2, 40);
	}
	rtl_trace_watchdog_fired(seq, 3);
	rtl_trace_text(6, "trace-emitter end");
}

static int64_t time_floor(uint64_t n)
{
	int64_t t0 = rtl_time_now();

	for (uint64_t i = 0; i < n; i++)
		barrier();
	return rtl_time_now() - t0;
}

static int64_t time_tracepoint(uint64_t n)
{
	int64_t t0 = rtl_time_now();

	for (uint64_t i = 0; i < n; i++) {
		rtl_trace_step_started(i);
		barrier();
	}
	return rtl_time_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int bench(uint64_t n, int reps, int json)
{
	double floor_ns[MAX_REPS], tp_ns[MAX_REPS], diff_ns[MAX_REPS];
	int recording = rtl_trace_enabled(step_started) ? 1 : 0;

	/* warm up: page in the code, the per-CPU buffers when recording */
	time_tracepoint(n / 10 + 1);
	for (int r = 0; r < reps; r++) {
		/* A B A B, alternating which goes first */
		int64_t f, t;

		if (r % 2) {
			t = time_tracepoint(n);
			f = time_floor(n);
		} else {
			f = time_floor(n);
			t = time_tracepoint(n);
		}
		floor_ns[r] = (double)f / (double)n;
		tp_ns[r] = (double)t / (double)n;
		diff_ns[r] = tp_ns[r] - floor_ns[r];
		if (!json)
			printf("rep %d: empty loop %.3f ns/iter, tracepoint %.3f ns/iter\n", r + 1,
			       floor_ns[r], tp_ns[r]);
	}
	double dmin = diff_ns[0], dmax = diff_ns[0];

	for (int r = 1; r < reps; r++) {
		dmin = diff_ns[r] < dmin ? diff_ns[r] : dmin;
		dmax = diff_ns[r] > dmax ? diff_ns[r] : dmax;
	}
	double mf = median(floor_ns, reps), mt = median(tp_ns, reps), md = median(diff_ns, reps);

	if (json)
		printf("{\"event\":\"rtloop:step_started\",\"calls\":%" PRIu64 ",\"reps\":%d,"
		       "\"recording\":%s,\"floor_ns\":%.3f,\"tracepoint_ns\":%.3f,"
		       "\"cost_ns\":%.3f,\"cost_min_ns\":%.3f,\"cost_max_ns\":%.3f}\n",
		       n, reps, recording ? "true" : "false", mf, mt, md, dmin, dmax);
	else
		printf("rtloop:step_started x %" PRIu64 ", %d reps, session recording it: %s\n"
		       "median: empty loop %.3f ns/iter, tracepoint %.3f ns/iter, "
		       "cost %.3f ns/event (min %.3f, max %.3f)\n",
		       n, reps, recording ? "yes" : "no", mf, mt, md, dmin, dmax);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: trace-emitter [--frames N]\n"
		   "       trace-emitter --bench N [--reps R] [--json]\n"
		   "Fires every rtloop tracepoint for N frames (default 60) with values\n"
		   "derived from the sequence number (see the source), or times N calls\n"
		   "of one tracepoint against an empty loop, R interleaved repetitions\n"
		   "(default 7), and prints the medians.\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || end == s || *end || s[0] == '-' || v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'f' },
		{ "bench", required_argument, NULL, 'b' },
		{ "reps", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t frames = 60, bench_n = 0, reps = 7;
	int json = 0, c;

	while ((c = getopt_long(argc, argv, "f:b:r:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (parse_u64(optarg, &frames)) {
				fprintf(stderr, "trace-emitter: --frames wants a positive count\n");
				return 2;
			}
			break;
		case 'b':
			if (parse_u64(optarg, &bench_n)) {
				fprintf(stderr, "trace-emitter: --bench wants a positive count\n");
				return 2;
			}
			break;
		case 'r':
			if (parse_u64(optarg, &reps) || reps > MAX_REPS) {
				fprintf(stderr, "trace-emitter: --reps wants 1..%d\n", MAX_REPS);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "trace-emitter: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (bench_n)
		return bench(bench_n, (int)reps, json);
	emit_frames(frames);
	return 0;
}
