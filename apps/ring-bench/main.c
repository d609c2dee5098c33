// SPDX-License-Identifier: MIT
/*
 * ring-bench: rtl_ring against its peers between two pinned threads.
 *
 * What it measures, per item size (8 B and 64 B):
 *   - throughput (items/ms): the producer on CPU A pushes --items items as
 *     fast as it can, the consumer on CPU B pops and checks them; single
 *     push/pop, and for rtl_ring also batches of BENCH_BATCH;
 *   - round trip (ns): one item ping-ponged through two queues;
 *   - one-way latency (ns): the producer stamps the TSC into the item every
 *     microsecond, the consumer stamps again after the pop; p50, p99, p99.9
 *     and max of the differences.
 *
 * How (docs/benchmarks.md): absolute times on a shared 2-vCPU VM are noise,
 * so every figure is also a ratio to a peer measured in the same process.
 * Each repetition runs every implementation of a case back to back, A B A B,
 * rotating which goes first, and the report gives the median of the
 * per-repetition ratios with their min and max. A core-to-core probe (one
 * cache line ping-ponged between the two CPUs) is measured first and printed
 * as the floor.
 *
 * --callgrind runs only a single-threaded push+pop loop, for counting
 * instructions with valgrind; see docs/ring-bench.md.
 *
 * Peers: Concurrency Kit's ck_ring when libck-dev was found at build time;
 * boost::lockfree::spsc_queue and moodycamel::ReaderWriterQueue through the
 * C++ shim peers.cpp when a C++ compiler and their headers were found.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rtloop/hist.h>
#include <rtloop/ring.h>
#include <rtloop/time.h>

#include "bench.h"
#include "benchmark.h"
#include "cli.h"
#if RING_BENCH_HAVE_CK
#include <ck_ring.h>
#endif
#if RING_BENCH_HAVE_CPP_PEERS
#include "peers.h"
#endif

#define PROG "ring-bench"

/* ---- rtl_ring ---------------------------------------------------------- */

static void *ours_create(size_t size)
{
	struct rtl_ring *r = aligned_alloc(RTL_RING_ALIGN, sizeof(*r));
	void *storage = aligned_alloc(RTL_CACHELINE, BENCH_CAPACITY * size);

	if (!r || !storage || rtl_ring_init(r, storage, BENCH_CAPACITY, size) < 0) {
		free(r);
		free(storage);
		return NULL;
	}
	/* Pre-fault the storage so no run pays for page faults. */
	memset(storage, 0, BENCH_CAPACITY * size);
	return r;
}

static void ours_reset(void *q, size_t size)
{
	struct rtl_ring *r = q;

	rtl_ring_init(r, r->prod.slots, BENCH_CAPACITY, size);
}

static void ours_destroy(void *q)
{
	struct rtl_ring *r = q;

	if (r)
		free(r->prod.slots);
	free(r);
}

#define OURS_PUSH(q, p) rtl_ring_push_sz((q), (p), sizeof(*(p)))
#define OURS_POP(q, p) rtl_ring_pop_sz((q), (p), sizeof(*(p)))

/* Batch kernels: rtl_ring_push_n_sz()/pop_n_sz() of up to BENCH_BATCH. */
#define OURS_BATCH_KERNELS(tag, T)                                                                 \
	static void tag##_tput_prod(void *vq, uint64_t n)                                          \
	{                                                                                          \
		struct rtl_ring *r = vq;                                                           \
		T buf[BENCH_BATCH];                                                                \
		memset(buf, 0, sizeof(buf));                                                       \
		for (uint64_t i = 0; i < n;) {                                                     \
			uint32_t want = n - i < BENCH_BATCH ? (uint32_t)(n - i) : BENCH_BATCH;     \
			uint32_t done = 0;                                                         \
			for (uint32_t j = 0; j < want; j++)                                        \
				buf[j].v = i + j;                                                  \
			while (done < want)                                                        \
				done += rtl_ring_push_n_sz(r, buf + done, want - done, sizeof(T)); \
			i += want;                                                                 \
		}                                                                                  \
	}                                                                                          \
	static uint64_t tag##_tput_cons(void *vq, uint64_t n)                                      \
	{                                                                                          \
		struct rtl_ring *r = vq;                                                           \
		T buf[BENCH_BATCH];                                                                \
		uint64_t bad = 0;                                                                  \
		for (uint64_t i = 0; i < n;) {                                                     \
			uint32_t k = rtl_ring_pop_n_sz(r, buf, BENCH_BATCH, sizeof(T));            \
			for (uint32_t j = 0; j < k; j++)                                           \
				bad += buf[j].v != i + j;                                          \
			i += k;                                                                    \
		}                                                                                  \
		return bad;                                                                        \
	}                                                                                          \
	__attribute__((noinline)) static uint64_t tag##_cg_loop(void *vq, uint64_t n)              \
	{                                                                                          \
		struct rtl_ring *r = vq;                                                           \
		T in[BENCH_BATCH], out[BENCH_BATCH];                                               \
		uint64_t sum = 0;                                                                  \
		memset(in, 0, sizeof(in));                                                         \
		for (uint64_t i = 0; i < n; i += BENCH_BATCH) {                                    \
			for (uint32_t j = 0; j < BENCH_BATCH; j++)                                 \
				in[j].v = i + j;                                                   \
			(void)rtl_ring_push_n_sz(r, in, BENCH_BATCH, sizeof(T));                   \
			(void)rtl_ring_pop_n_sz(r, out, BENCH_BATCH, sizeof(T));                   \
			sum += out[BENCH_BATCH - 1].v;                                             \
		}                                                                                  \
		return sum;                                                                        \
	}

#define OURS_IMPL(S)                                                                \
	static void *rtl##S##_create(void)                                          \
	{                                                                           \
		return ours_create(sizeof(struct item##S));                         \
	}                                                                           \
	static void rtl##S##_reset(void *q)                                         \
	{                                                                           \
		ours_reset(q, sizeof(struct item##S));                              \
	}                                                                           \
	static void rtl##S##_destroy(void *q)                                       \
	{                                                                           \
		ours_destroy(q);                                                    \
	}                                                                           \
	BENCH_KERNELS(rtl##S, struct rtl_ring, struct item##S, OURS_PUSH, OURS_POP) \
	OURS_BATCH_KERNELS(rtlb##S, struct item##S)

OURS_IMPL(8)
OURS_IMPL(64)

/* ---- ck_ring ------------------------------------------------------------ */
#if RING_BENCH_HAVE_CK

/* ck_ring keeps the ring and its buffer apart; we keep them together. The
 * ring is aligned as ours so its own two-line layout is not disturbed. */
struct ckq8 {
	_Alignas(RTL_RING_ALIGN) ck_ring_t ring;
	ck_ring_buffer_t *buf;
};

struct ckq64 {
	_Alignas(RTL_RING_ALIGN) ck_ring_t ring;
	struct item64 *buf;
};

CK_RING_PROTOTYPE(item64, item64)

/* 8 B: the plain pointer API, with the value stored as a pointer. */
static inline bool ck8_push(struct ckq8 *q, const struct item8 *it)
{
	return ck_ring_enqueue_spsc(&q->ring, q->buf, (void *)(uintptr_t)it->v);
}

static inline bool ck8_pop(struct ckq8 *q, struct item8 *it)
{
	void *p;

	if (!ck_ring_dequeue_spsc(&q->ring, q->buf, &p))
		return false;
	it->v = (uintptr_t)p;
	return true;
}

/* 64 B: a typed ring from CK_RING_PROTOTYPE(). */
static inline bool ck64_push(struct ckq64 *q, struct item64 *it)
{
	return ck_ring_enqueue_spsc_item64(&q->ring, q->buf, it);
}

static inline bool ck64_pop(struct ckq64 *q, struct item64 *it)
{
	return ck_ring_dequeue_spsc_item64(&q->ring, q->buf, it);
}

#define CK_IMPL(S)                                                            \
	static void *ck##S##_create(void)                                     \
	{                                                                     \
		struct ckq##S *q = aligned_alloc(RTL_RING_ALIGN, sizeof(*q)); \
		size_t bytes = BENCH_CAPACITY * sizeof(*q->buf);              \
		if (!q)                                                       \
			return NULL;                                          \
		q->buf = aligned_alloc(RTL_CACHELINE, bytes);                 \
		if (!q->buf) {                                                \
			free(q);                                              \
			return NULL;                                          \
		}                                                             \
		memset(q->buf, 0, bytes);                                     \
		ck_ring_init(&q->ring, BENCH_CAPACITY);                       \
		return q;                                                     \
	}                                                                     \
	static void ck##S##_reset(void *vq)                                   \
	{                                                                     \
		struct ckq##S *q = vq;                                        \
		ck_ring_init(&q->ring, BENCH_CAPACITY);                       \
	}                                                                     \
	static void ck##S##_destroy(void *vq)                                 \
	{                                                                     \
		struct ckq##S *q = vq;                                        \
		if (q)                                                        \
			free(q->buf);                                         \
		free(q);                                                      \
	}                                                                     \
	BENCH_KERNELS(ck##S, struct ckq##S, struct item##S, ck##S##_push, ck##S##_pop)

CK_IMPL(8)
CK_IMPL(64)
#endif

/* ---- the implementations ----------------------------------------------- */

enum impl {
	I_RTL,	/* ours, single push/pop */
	I_RTLB, /* ours, batches (throughput only) */
	I_CK,
	I_BOOST,
	I_RWQ,
	NIMPL
};

static const char *const impl_name[NIMPL] = { "rtl", "rtl-batch", "ck", "boost", "rwq" };
static const int sizes[2] = { 8, 64 };

static const struct bench_ops rtl_ops[2] = { BENCH_OPS(rtl8), BENCH_OPS(rtl64) };
/* Batch: the single-item kernels for everything but throughput and cg. */
static const struct bench_ops rtlb_ops[2] = {
	{ rtl8_create, rtl8_reset, ours_destroy, rtlb8_tput_prod, rtlb8_tput_cons, rtl8_rt_ping,
	  rtl8_rt_pong, rtl8_lat_prod, rtl8_lat_cons, rtlb8_cg_loop },
	{ rtl64_create, rtl64_reset, ours_destroy, rtlb64_tput_prod, rtlb64_tput_cons,
	  rtl64_rt_ping, rtl64_rt_pong, rtl64_lat_prod, rtl64_lat_cons, rtlb64_cg_loop },
};
#if RING_BENCH_HAVE_CK
static const struct bench_ops ck_ops[2] = { BENCH_OPS(ck8), BENCH_OPS(ck64) };
#endif

/* ops[impl][size index], NULL where the peer was not built. */
static const struct bench_ops *ops_of(enum impl i, int s)
{
	switch (i) {
	case I_RTL:
		return &rtl_ops[s];
	case I_RTLB:
		return &rtlb_ops[s];
	case I_CK:
#if RING_BENCH_HAVE_CK
		return &ck_ops[s];
#else
		return NULL;
#endif
	case I_BOOST:
#if RING_BENCH_HAVE_CPP_PEERS
		return &peer_boost_ops[s];
#else
		return NULL;
#endif
	case I_RWQ:
#if RING_BENCH_HAVE_CPP_PEERS
		return &peer_rwq_ops[s];
#else
		return NULL;
#endif
	default:
		return NULL;
	}
}

static bool is_peer(enum impl i)
{
	return i == I_CK || i == I_BOOST || i == I_RWQ;
}

/* ---- options ----------------------------------------------------------- */

struct opts {
	struct bench_opts bench; /* --reps, --json, --callgrind */
	uint64_t items;
	int cpu[2];
	bool quick;
	enum impl cg_impl;
	int cg_size; /* index into sizes[] */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ring-bench [OPTIONS]\n"
		"Benchmark rtl_ring against ck_ring (and boost/moodycamel when built) between\n"
		"two pinned threads: throughput, round trip and one-way latency, 8 B and 64 B.\n"
		"\n"
		"  -h, --help          this text\n"
		"  -r, --reps N        repetitions, interleaved A B A B (default 7, max %d)\n"
		"  -n, --items N       items per throughput run (default 2000000; round trip\n"
		"                      and latency runs use N/20)\n"
		"  -c, --cpus A,B      producer and consumer CPUs (default 0,1)\n"
		"  -j, --json FILE     also write all figures as one JSON object ('-': stdout,\n"
		"                      the table then goes to stderr)\n"
		"  -q, --quick         200000 items per throughput run\n"
		"  -g, --callgrind N   only run a single-threaded loop of N push+pop pairs\n"
		"                      (function <impl><size>_cg_loop) and exit; for valgrind\n"
		"  -i, --impl NAME     with --callgrind: rtl, rtl-batch, ck, boost, rwq (default "
		"rtl)\n"
		"  -s, --size BYTES    with --callgrind: 8 or 64 (default 8)\n",
		BENCH_OPT_MAX_REPS);
}

static const char *const size_names[2] = { "8", "64" }; /* sizes[], as --size takes them */

/* Returns CLI_RUN, or the exit status to stop with (--help, a usage error,
 * printed). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	const struct cli_opt opts[] = {
		CLI_HELP,
		BENCH_ROWS(&o->bench),
		CLI_UINT('n', "items", &o->items, 2000, UINT64_C(1) << 40,
			 "want an integer >= 2000"),
		CLI_CASE_ARG('c', "cpus"),
		CLI_FLAG('q', "quick", &o->quick),
		CLI_CHOICE('i', "impl", &o->cg_impl, impl_name, NIMPL,
			   "want rtl, rtl-batch, ck, boost or rwq"),
		CLI_CHOICE('s', "size", &o->cg_size, size_names, 2, "want 8 or 64"),
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	uint64_t cpu[2];
	int c;

	/* .items 0: not given, the default of --quick or not. */
	*o = (struct opts){ .bench.reps = 7, .cpu = { 0, 1 }, .cg_impl = I_RTL };
	while ((c = cli_next(&p, argc, argv)) > 0) { /* 'c', --cpus */
		if (cli_parse_list(optarg, CPU_SETSIZE - 1, cpu, 2, 2) < 0)
			return cli_bad_value(PROG, "--cpus", optarg, "want two CPU numbers, A,B");
		if (cpu[0] == cpu[1])
			return cli_bad_value(PROG, "--cpus", optarg,
					     "the two threads spin: they need two different CPUs");
		o->cpu[0] = (int)cpu[0];
		o->cpu[1] = (int)cpu[1];
	}
	if (c < 0)
		return p.status;
	if (!o->items)
		o->items = o->quick ? 200000 : 2000000;
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

/* ---- threads and timing ------------------------------------------------ */

/* TSC ticks per ns, measured against CLOCK_MONOTONIC over 50 ms. */
static double calibrate_ticks(void)
{
	int64_t t0 = rtl_time_now(), t1;
	uint64_t k0 = bench_ticks(), k1;

	do {
		t1 = rtl_time_now();
	} while (t1 - t0 < 50000000);
	k1 = bench_ticks();
	return (double)(k1 - k0) / (double)(t1 - t0);
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

enum kind { K_PROBE, K_TPUT, K_RT, K_LAT };

/* One measurement: side A runs on the calling thread (CPU A), side B on a
 * fresh thread pinned to CPU B. */
struct job {
	enum kind kind;
	const struct bench_ops *ops;
	void *q1, *q2;
	uint64_t n;
	uint64_t gap;
	uint64_t *samples;
	uint64_t bad;
	int64_t t_end_b;
	_Atomic int ready;
	_Atomic int go;
};

/* The probe's line: alone on its pair of cache lines. */
static struct {
	_Alignas(RTL_RING_ALIGN) _Atomic uint64_t v;
} probe_line;

static void probe_ping(uint64_t n)
{
	for (uint64_t i = 1; i <= n; i++) {
		/* release/acquire: plain moves on x86; the point is the line
		 * moving, not the ordering. */
		atomic_store_explicit(&probe_line.v, 2 * i - 1, memory_order_release);
		while (atomic_load_explicit(&probe_line.v, memory_order_acquire) != 2 * i) {
		}
	}
}

static void probe_pong(uint64_t n)
{
	for (uint64_t i = 1; i <= n; i++) {
		while (atomic_load_explicit(&probe_line.v, memory_order_acquire) != 2 * i - 1) {
		}
		atomic_store_explicit(&probe_line.v, 2 * i, memory_order_release);
	}
}

static void *side_b(void *arg)
{
	struct job *j = arg;

	atomic_store(&j->ready, 1);
	while (!atomic_load_explicit(&j->go, memory_order_acquire)) {
	}
	switch (j->kind) {
	case K_PROBE:
		probe_pong(j->n);
		break;
	case K_TPUT:
		j->bad = j->ops->tput_cons(j->q1, j->n);
		break;
	case K_RT:
		j->ops->rt_pong(j->q1, j->q2, j->n);
		break;
	case K_LAT:
		j->ops->lat_cons(j->q1, j->n, j->samples);
		break;
	}
	j->t_end_b = rtl_time_now();
	return NULL;
}

/* Run @j; returns the elapsed ns (both sides done), or -errno. */
static int64_t run_job(struct job *j, int cpu_b)
{
	pthread_attr_t attr;
	pthread_t th;
	cpu_set_t set;
	int64_t t0, t_end_a;
	uint64_t bad_a = 0;
	int err;

	atomic_store(&j->ready, 0);
	atomic_store(&j->go, 0);
	CPU_ZERO(&set);
	CPU_SET(cpu_b, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(&th, &attr, side_b, j);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	while (!atomic_load(&j->ready)) {
	}
	t0 = rtl_time_now();
	atomic_store_explicit(&j->go, 1, memory_order_release);
	switch (j->kind) {
	case K_PROBE:
		probe_ping(j->n);
		break;
	case K_TPUT:
		j->ops->tput_prod(j->q1, j->n);
		break;
	case K_RT:
		bad_a = j->ops->rt_ping(j->q1, j->q2, j->n);
		break;
	case K_LAT:
		j->ops->lat_prod(j->q1, j->n, j->gap);
		break;
	}
	t_end_a = rtl_time_now();
	pthread_join(th, NULL);
	j->bad += bad_a;
	return (t_end_a > j->t_end_b ? t_end_a : j->t_end_b) - t0;
}

/* ---- statistics -------------------------------------------------------- */

/* ---- results ------------------------------------------------------------ */

enum lat_q { Q50, Q99, Q999, QMAX, NQ };
static const double lat_pct[NQ] = { 50.0, 99.0, 99.9, 100.0 };
static const char *const lat_label[NQ] = { "p50", "p99", "p99.9", "max" };

/* Per repetition figures; NaN where not measured. */
struct results {
	unsigned reps;
	double probe[BENCH_OPT_MAX_REPS];
	double tput[2][NIMPL][BENCH_OPT_MAX_REPS]; /* items/ms */
	double rt[2][NIMPL][BENCH_OPT_MAX_REPS];   /* ns per round trip */
	double lat[2][NIMPL][NQ][BENCH_OPT_MAX_REPS];
	uint64_t bad;
	/* Derived per repetition ratios. */
	double r_single[2][BENCH_OPT_MAX_REPS];	 /* rtl / best peer, throughput */
	double r_batch[2][BENCH_OPT_MAX_REPS];	 /* rtl batch / best peer single */
	double r_rt[2][BENCH_OPT_MAX_REPS];	 /* rtl / ck round trip */
	double r_lat[2][NQ][BENCH_OPT_MAX_REPS]; /* rtl / ck latency */
	enum impl best_peer[2][BENCH_OPT_MAX_REPS];
};

static struct results res;

static void fill_nan(double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = NAN;
}

/* ---- the run -------------------------------------------------------------- */

struct ctx {
	const struct opts *o;
	double ticks_per_ns;
	void *q[2][NIMPL][2];	   /* [size][impl][queue], created once */
	uint64_t *samples;	   /* one latency run's, in ticks */
	struct rtl_hist *lat_hist; /* the same in ns */
	uint64_t n_tput, n_rt, n_lat;
};

static int run_one(struct ctx *c, enum kind kind, int s, enum impl i, unsigned rep)
{
	const struct bench_ops *ops = ops_of(i, s);
	struct job j = { .kind = kind, .ops = ops, .q1 = c->q[s][i][0], .q2 = c->q[s][i][1] };
	int64_t ns;

	ops->reset(j.q1);
	ops->reset(j.q2);
	switch (kind) {
	case K_TPUT:
		j.n = c->n_tput;
		break;
	case K_RT:
		j.n = c->n_rt;
		break;
	case K_LAT:
		j.n = c->n_lat;
		j.gap = (uint64_t)(1000.0 * c->ticks_per_ns); /* one item per µs */
		j.samples = c->samples;
		break;
	case K_PROBE:
		return -EINVAL;
	}
	ns = run_job(&j, c->o->cpu[1]);
	if (ns < 0)
		return (int)ns;
	res.bad += j.bad;
	switch (kind) {
	case K_TPUT:
		res.tput[s][i][rep] = (double)j.n / ((double)ns / 1e6);
		break;
	case K_RT:
		res.rt[s][i][rep] = (double)ns / (double)j.n;
		break;
	case K_LAT:
		/* The percentiles of rtl_hist: within 0.4 % of the exact ones
		 * (the maximum exact), without sorting the samples. A negative
		 * difference (TSC skew between the CPUs) counts as underflow. */
		rtl_hist_reset(c->lat_hist);
		for (uint64_t k = 0; k < j.n; k++)
			rtl_hist_record(c->lat_hist, (int64_t)((double)(int64_t)c->samples[k] /
							       c->ticks_per_ns));
		for (int q = 0; q < NQ; q++)
			res.lat[s][i][q][rep] =
				(double)rtl_hist_percentile(c->lat_hist, lat_pct[q]);
		break;
	case K_PROBE:
		break;
	}
	return 0;
}

/* Run every available implementation of one case, rotating the start. */
static int run_case(struct ctx *c, enum kind kind, int s, unsigned rep)
{
	enum impl list[NIMPL];
	int n = 0;

	for (int i = 0; i < NIMPL; i++) {
		if (!ops_of((enum impl)i, s) || (i == I_RTLB && kind != K_TPUT))
			continue;
		list[n++] = (enum impl)i;
	}
	for (int k = 0; k < n; k++) {
		int err = run_one(c, kind, s, list[(k + (int)rep) % n], rep);

		if (err)
			return err;
	}
	return 0;
}

static void derive(void)
{
	for (int s = 0; s < 2; s++) {
		for (unsigned r = 0; r < res.reps; r++) {
			double best = NAN;
			enum impl bi = I_CK;

			for (int i = 0; i < NIMPL; i++)
				if (is_peer((enum impl)i) && !isnan(res.tput[s][i][r]) &&
				    (isnan(best) || res.tput[s][i][r] > best)) {
					best = res.tput[s][i][r];
					bi = (enum impl)i;
				}
			res.best_peer[s][r] = bi;
			res.r_single[s][r] = res.tput[s][I_RTL][r] / best;
			res.r_batch[s][r] = res.tput[s][I_RTLB][r] / best;
			res.r_rt[s][r] = res.rt[s][I_RTL][r] / res.rt[s][I_CK][r];
			for (int q = 0; q < NQ; q++)
				res.r_lat[s][q][r] =
					res.lat[s][I_RTL][q][r] / res.lat[s][I_CK][q][r];
		}
	}
}

/* The peer that was best in most repetitions (for the table's label). */
static enum impl usual_best(int s)
{
	int count[NIMPL] = { 0 };
	enum impl best = I_CK;

	for (unsigned r = 0; r < res.reps; r++)
		count[res.best_peer[s][r]]++;
	for (int i = 0; i < NIMPL; i++)
		if (count[i] > count[best])
			best = (enum impl)i;
	return best;
}

/* ---- report ---------------------------------------------------------------- */

/* "@pre@v@post" with @v in @width columns and @prec decimals, or "n/a". */
static void put_num(FILE *f, const char *pre, double v, int width, int prec, const char *post)
{
	if (isnan(v))
		fprintf(f, "%s%*s%s", pre, width, "n/a", post);
	else
		fprintf(f, "%s%*.*f%s", pre, width, prec, v, post);
}

static const char *verdict(double med, double target, bool at_least)
{
	if (isnan(med))
		return "n/a";
	return (at_least ? med >= target : med <= target) ? "met" : "MISSED";
}

static void report_text(FILE *f, const struct ctx *c)
{
	struct bench_stat3 p = bench_stat3(res.probe, res.reps);

	fprintf(f,
		"\nthroughput, items/ms (median of %u reps; ratio = median of per-rep ratios "
		"[min, max])\n",
		res.reps);
	fprintf(f, "%-14s %9s %9s %9s %9s  %-6s %-22s %-7s %s\n", "case", "rtl", "ck", "boost",
		"rwq", "best", "rtl/best peer", "target", "");
	for (int s = 0; s < 2; s++) {
		for (int b = 0; b < 2; b++) {
			struct bench_stat3 r =
				bench_stat3(b ? res.r_batch[s] : res.r_single[s], res.reps);
			char label[32];

			if (b)
				snprintf(label, sizeof(label), "%d B batch %u", sizes[s],
					 (unsigned)BENCH_BATCH);
			else
				snprintf(label, sizeof(label), "%d B single", sizes[s]);
			fprintf(f, "%-14s", label);
			put_num(f, " ", bench_stat3(res.tput[s][b ? I_RTLB : I_RTL], res.reps).med,
				9, 0, "");
			for (int i = I_CK; i < NIMPL; i++)
				put_num(f, " ", bench_stat3(res.tput[s][i], res.reps).med, 9, 0,
					"");
			fprintf(f, "  %-6s", impl_name[usual_best(s)]);
			put_num(f, " ", r.med, 5, 2, "");
			put_num(f, " [", r.min, 5, 2, "");
			put_num(f, ", ", r.max, 5, 2, "]");
			fprintf(f, "   >= %.1f  %s\n", b ? 3.0 : 1.0,
				verdict(r.med, b ? 3.0 : 1.0, true));
		}
	}

	fprintf(f,
		"\nround trip, ns (one item there and back through two queues; "
		"probe = %.1f ns one-way)\n",
		p.med);
	fprintf(f, "%-14s %9s %9s %9s %9s  %-22s %-9s %-7s\n", "case", "rtl", "ck", "boost", "rwq",
		"rtl/ck", "rtl/probe", "target");
	for (int s = 0; s < 2; s++) {
		struct bench_stat3 r = bench_stat3(res.r_rt[s], res.reps);
		double ours = bench_stat3(res.rt[s][I_RTL], res.reps).med;

		fprintf(f, "%-14s", sizes[s] == 8 ? "8 B" : "64 B");
		for (int i = 0; i < NIMPL; i++)
			if (i != I_RTLB)
				put_num(f, " ", bench_stat3(res.rt[s][i], res.reps).med, 9, 0, "");
		put_num(f, "  ", r.med, 5, 2, "");
		put_num(f, " [", r.min, 5, 2, "");
		put_num(f, ", ", r.max, 5, 2, "]");
		put_num(f, "  ", ours / p.med, 8, 1, "");
		fprintf(f, "   <= 1.0  %s\n", verdict(r.med, 1.0, false));
	}

	fprintf(f,
		"\none-way latency, ns (one item per µs; medians over reps of each rep's "
		"percentile; %" PRIu64 " samples per rep)\n",
		c->n_lat);
	fprintf(f, "%-14s %-6s %9s %9s %9s %9s\n", "case", "impl", "p50", "p99", "p99.9", "max");
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < NIMPL; i++) {
			if (i == I_RTLB || !ops_of((enum impl)i, s))
				continue;
			fprintf(f, "%-14s %-6s", sizes[s] == 8 ? "8 B" : "64 B", impl_name[i]);
			for (int q = 0; q < NQ; q++)
				put_num(f, " ", bench_stat3(res.lat[s][i][q], res.reps).med, 9, 0,
					"");
			fprintf(f, "\n");
		}
		fprintf(f, "%-14s %-6s", "", "rtl/ck");
		for (int q = 0; q < NQ; q++)
			put_num(f, " ", bench_stat3(res.r_lat[s][q], res.reps).med, 9, 2, "");
		fprintf(f, "  (median ratio)\n");
	}
	if (res.bad)
		fprintf(f, "\nERROR: %" PRIu64 " items arrived out of order or corrupted\n",
			res.bad);
}

static void json_stat(FILE *f, const char *key, const double *v, unsigned n, bool comma)
{
	struct bench_stat3 s = bench_stat3(v, n);

	fprintf(f, "\"%s\": ", key);
	if (isnan(s.med))
		fprintf(f, "null");
	else
		fprintf(f, "{\"median\": %.4g, \"min\": %.4g, \"max\": %.4g}", s.med, s.min, s.max);
	fprintf(f, "%s", comma ? ", " : "");
}

static int report_json(const struct ctx *c, const char *machine, const char *cpu_model)
{
	FILE *f = bench_json_open(PROG, c->o->bench.json);

	if (!f)
		return 1;
	fprintf(f, "{\"benchmark\": \"ring-bench\", \"machine\": ");
	rtl_json_string(f, machine);
	fprintf(f, ", \"cpu_model\": ");
	rtl_json_string(f, cpu_model);
	fprintf(f, ", ");
	fprintf(f,
		"\"config\": {\"reps\": %u, \"items\": %" PRIu64 ", \"rt_items\": %" PRIu64
		", \"lat_items\": %" PRIu64
		", \"cpus\": [%d, %d], \"capacity\": %u, \"batch\": %u, "
		"\"peers\": [",
		res.reps, c->n_tput, c->n_rt, c->n_lat, c->o->cpu[0], c->o->cpu[1], BENCH_CAPACITY,
		BENCH_BATCH);
	for (int i = I_CK, first = 1; i < NIMPL; i++)
		if (ops_of((enum impl)i, 0)) {
			fprintf(f, "%s\"%s\"", first ? "" : ", ", impl_name[i]);
			first = 0;
		}
	fprintf(f, "]}, ");
	json_stat(f, "probe_ns_one_way", res.probe, res.reps, true);
	fprintf(f, "\"cases\": {");
	for (int s = 0; s < 2; s++) {
		fprintf(f, "\"%d\": {\"throughput_items_per_ms\": {", sizes[s]);
		for (int i = 0; i < NIMPL; i++)
			json_stat(f, impl_name[i], res.tput[s][i], res.reps, i + 1 < NIMPL);
		fprintf(f, "}, \"round_trip_ns\": {");
		for (int i = 0; i < NIMPL; i++)
			if (i != I_RTLB)
				json_stat(f, impl_name[i], res.rt[s][i], res.reps, i + 1 < NIMPL);
		fprintf(f, "}, \"latency_ns\": {");
		for (int i = 0; i < NIMPL; i++) {
			if (i == I_RTLB)
				continue;
			fprintf(f, "\"%s\": {", impl_name[i]);
			for (int q = 0; q < NQ; q++)
				json_stat(f, lat_label[q], res.lat[s][i][q], res.reps, q + 1 < NQ);
			fprintf(f, "}%s", i + 1 < NIMPL ? ", " : "");
		}
		fprintf(f, "}, \"ratios\": {");
		json_stat(f, "throughput_single_vs_best_peer", res.r_single[s], res.reps, true);
		json_stat(f, "throughput_batch_vs_best_peer", res.r_batch[s], res.reps, true);
		json_stat(f, "round_trip_vs_ck", res.r_rt[s], res.reps, true);
		for (int q = 0; q < NQ; q++) {
			char key[32];

			snprintf(key, sizeof(key), "latency_%s_vs_ck", lat_label[q]);
			json_stat(f, key, res.r_lat[s][q], res.reps, q + 1 < NQ);
		}
		fprintf(f, "}}%s", s ? "" : ", ");
	}
	fprintf(f, "}, \"errors\": %" PRIu64 "}\n", res.bad);
	bench_json_close(f);
	return 0;
}

/* ---- --callgrind ------------------------------------------------------------ */

static int run_callgrind(const struct opts *o)
{
	const struct bench_ops *ops = ops_of(o->cg_impl, o->cg_size);
	void *q;
	uint64_t sum;

	if (!ops || o->cg_impl >= NIMPL) {
		fprintf(stderr, "ring-bench: --impl %s was not built into this binary\n",
			o->cg_impl < NIMPL ? impl_name[o->cg_impl] : "?");
		return 2;
	}
	q = ops->create();
	if (!q) {
		fprintf(stderr, "ring-bench: out of memory\n");
		return 1;
	}
	sum = ops->cg_loop(q, o->bench.callgrind);
	ops->destroy(q);
	printf("callgrind loop: impl %s, %d B items, %" PRIu64 " push+pop, checksum %" PRIu64 "\n",
	       impl_name[o->cg_impl], sizes[o->cg_size], o->bench.callgrind, sum);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct opts o;
	struct ctx c = { .o = &o };
	char machine[256], cpu_model[128];
	FILE *out;
	int ret = 1, err;

	/* 1. parse options and validate */
	err = parse_opts(argc, argv, &o);
	if (err != CLI_RUN)
		return err;
	if (o.bench.callgrind)
		return run_callgrind(&o);
	out = o.bench.json && !strcmp(o.bench.json, "-") ? stderr : stdout;

	/* 2. pin: producer (this thread) on CPU A; consumers go to CPU B. */
	{
		cpu_set_t allowed;

		if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0 ||
		    !CPU_ISSET(o.cpu[0], &allowed) || !CPU_ISSET(o.cpu[1], &allowed)) {
			fprintf(stderr,
				"ring-bench: bad --cpus '%d,%d': not both usable by this "
				"process (see --help)\n",
				o.cpu[0], o.cpu[1]);
			return 2;
		}
	}
	if ((err = pin_self(o.cpu[0])) < 0) {
		fprintf(stderr, "ring-bench: cannot pin to CPU %d: %s\n", o.cpu[0], strerror(-err));
		return 1;
	}

	/* 3. allocate */
	c.n_tput = o.items;
	c.n_rt = o.items / 20;
	c.n_lat = o.items / 20;
	c.samples = calloc(c.n_lat, sizeof(*c.samples));
	c.lat_hist = calloc(1, sizeof(*c.lat_hist));
	if (!c.samples || !c.lat_hist)
		goto err_oom;
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < NIMPL; i++) {
			const struct bench_ops *ops = ops_of((enum impl)i, s);

			if (!ops)
				continue;
			for (int k = 0; k < 2; k++)
				if (!(c.q[s][i][k] = ops->create()))
					goto err_oom;
		}
	fill_nan(&res.probe[0], BENCH_OPT_MAX_REPS);
	fill_nan(&res.tput[0][0][0], sizeof(res.tput) / sizeof(double));
	fill_nan(&res.rt[0][0][0], sizeof(res.rt) / sizeof(double));
	fill_nan(&res.lat[0][0][0][0], sizeof(res.lat) / sizeof(double));
	res.reps = o.bench.reps;
	c.ticks_per_ns = calibrate_ticks();

	bench_machine(machine, sizeof(machine), false);
	bench_cpu_model(cpu_model, sizeof(cpu_model));
	fprintf(out, "ring-bench: %s; %s\n", machine, cpu_model);
	fprintf(out,
		"cpus %d,%d; %u reps; %" PRIu64 " items per throughput run, %" PRIu64
		" per round-trip and latency run; capacity %u; batch %u\n",
		o.cpu[0], o.cpu[1], o.bench.reps, c.n_tput, c.n_rt, BENCH_CAPACITY, BENCH_BATCH);
	fprintf(out,
		"peers: ck_ring %s, boost::lockfree::spsc_queue %s, "
		"moodycamel::ReaderWriterQueue %s\n",
		ops_of(I_CK, 0) ? "yes" : "NOT BUILT (libck-dev missing)",
		ops_of(I_BOOST, 0) ? "yes" : "not built (no C++ shim)",
		ops_of(I_RWQ, 0) ? "yes" : "not built (no C++ shim)");

	/* 4. run: the floor first, then every case, interleaved per rep. */
	for (unsigned r = 0; r < o.bench.reps; r++) {
		struct job j = { .kind = K_PROBE, .n = c.n_rt };
		int64_t ns = run_job(&j, o.cpu[1]);

		if (ns < 0) {
			err = (int)ns;
			goto err_run;
		}
		res.probe[r] = (double)ns / (2.0 * (double)j.n);
	}
	{
		struct bench_stat3 p = bench_stat3(res.probe, o.bench.reps);

		fprintf(out,
			"core-to-core probe (one cache line, cpu %d <-> %d): %.1f ns one-way "
			"(median of %u; min %.1f, max %.1f)\n",
			o.cpu[0], o.cpu[1], p.med, o.bench.reps, p.min, p.max);
		fflush(out);
	}
	for (unsigned r = 0; r < o.bench.reps; r++) {
		for (int s = 0; s < 2; s++) {
			if ((err = run_case(&c, K_TPUT, s, r)) ||
			    (err = run_case(&c, K_RT, s, r)) || (err = run_case(&c, K_LAT, s, r)))
				goto err_run;
		}
		fprintf(out, "rep %u/%u done\r", r + 1, o.bench.reps);
		fflush(out);
	}
	derive();

	/* 5. report */
	report_text(out, &c);
	ret = res.bad ? 1 : 0;
	if (o.bench.json && report_json(&c, machine, cpu_model))
		ret = 1;
	goto out_free;

err_run:
	fprintf(stderr, "ring-bench: cannot start the consumer thread on CPU %d: %s\n", o.cpu[1],
		strerror(-err));
	goto out_free;
err_oom:
	fprintf(stderr, "ring-bench: out of memory\n");
out_free:
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < NIMPL; i++)
			for (int k = 0; k < 2; k++)
				if (c.q[s][i][k])
					ops_of((enum impl)i, s)->destroy(c.q[s][i][k]);
	free(c.samples);
	free(c.lat_hist);
	return ret;
}
