/* SPDX-License-Identifier: MIT */
/*
 * ring-bench internals shared by main.c (rtl_ring, ck_ring) and the optional
 * C++ shim peers.cpp (boost::lockfree::spsc_queue, moodycamel's
 * ReaderWriterQueue).
 *
 * Every queue is driven by the same loops, stamped out by BENCH_KERNELS() with
 * the queue's own push and pop spliced in as expressions. The loops are
 * therefore textually identical for every implementation, and each one is
 * compiled with the queue calls inlined: the only indirection is one call per
 * run through struct bench_ops, never one per item.
 *
 * Spinning: a full push or an empty pop is retried at once, without PAUSE.
 * On a KVM guest, pause-loop exiting may deschedule a vCPU that executes many
 * PAUSEs, which would measure the hypervisor instead of the queue.
 */
#ifndef RING_BENCH_BENCH_H
#define RING_BENCH_BENCH_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#else
#define BENCH_HAVE_TSC 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The two payloads: one word, and one cache line. The consumer checks .v. */
struct item8 {
	uint64_t v;
};

struct item64 {
	uint64_t v;
	uint64_t pad[7];
};

/* Slots per queue (all implementations). ck_ring holds one item less;
 * boost::lockfree::spsc_queue<T, capacity<N>> holds N (it allocates N + 1). */
#define BENCH_CAPACITY 1024u
/* Items per rtl_ring_push_n_sz()/pop_n_sz() call in the batch runs: 128
 * 8-byte items are 1 KiB, an eighth of the ring, which amortises the index
 * transfers; -DBENCH_BATCH=32u to compare. */
#ifndef BENCH_BATCH
#define BENCH_BATCH 128u
#endif

/*
 * One queue implementation at one item size. @q is what create() returned;
 * the round trip uses two queues (@q1 there and back as @q2).
 * tput_cons() and the round trip return the number of items that arrived
 * out of order or corrupted (0 when the queue is correct).
 */
struct bench_ops {
	void *(*create)(void);
	void (*reset)(void *q);
	void (*destroy)(void *q);
	void (*tput_prod)(void *q, uint64_t n);
	uint64_t (*tput_cons)(void *q, uint64_t n);
	uint64_t (*rt_ping)(void *q1, void *q2, uint64_t n);
	void (*rt_pong)(void *q1, void *q2, uint64_t n);
	void (*lat_prod)(void *q, uint64_t n, uint64_t gap);
	void (*lat_cons)(void *q, uint64_t n, uint64_t *samples);
	/* Single-threaded push+pop of n items (the callgrind loop). */
	uint64_t (*cg_loop)(void *q, uint64_t n);
};

/* A timestamp in ticks (TSC on x86, else CLOCK_MONOTONIC ns). rdtscp waits
 * for earlier instructions, so the consumer's stamp follows its pop. */
static inline uint64_t bench_ticks(void)
{
#if BENCH_HAVE_TSC
	unsigned int aux;

	return __rdtscp(&aux);
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/*
 * The benchmark loops for queue type Q and item type T. PUSH(q, itemptr) and
 * POP(q, itemptr) are expressions that return nonzero on success.
 */
#define BENCH_KERNELS(tag, Q, T, PUSH, POP)                                           \
	static void tag##_tput_prod(void *vq, uint64_t n)                             \
	{                                                                             \
		Q *q = (Q *)vq;                                                       \
		T it;                                                                 \
		memset(&it, 0, sizeof(it));                                           \
		for (uint64_t i = 0; i < n; i++) {                                    \
			it.v = i;                                                     \
			while (!(PUSH(q, &it))) {                                     \
			}                                                             \
		}                                                                     \
	}                                                                             \
	static uint64_t tag##_tput_cons(void *vq, uint64_t n)                         \
	{                                                                             \
		Q *q = (Q *)vq;                                                       \
		T it;                                                                 \
		uint64_t bad = 0;                                                     \
		for (uint64_t i = 0; i < n; i++) {                                    \
			while (!(POP(q, &it))) {                                      \
			}                                                             \
			bad += it.v != i;                                             \
		}                                                                     \
		return bad;                                                           \
	}                                                                             \
	static uint64_t tag##_rt_ping(void *vq1, void *vq2, uint64_t n)               \
	{                                                                             \
		Q *q1 = (Q *)vq1;                                                     \
		Q *q2 = (Q *)vq2;                                                     \
		T it;                                                                 \
		uint64_t bad = 0;                                                     \
		memset(&it, 0, sizeof(it));                                           \
		for (uint64_t i = 0; i < n; i++) {                                    \
			it.v = i;                                                     \
			while (!(PUSH(q1, &it))) {                                    \
			}                                                             \
			while (!(POP(q2, &it))) {                                     \
			}                                                             \
			bad += it.v != i;                                             \
		}                                                                     \
		return bad;                                                           \
	}                                                                             \
	static void tag##_rt_pong(void *vq1, void *vq2, uint64_t n)                   \
	{                                                                             \
		Q *q1 = (Q *)vq1;                                                     \
		Q *q2 = (Q *)vq2;                                                     \
		T it;                                                                 \
		for (uint64_t i = 0; i < n; i++) {                                    \
			while (!(POP(q1, &it))) {                                     \
			}                                                             \
			while (!(PUSH(q2, &it))) {                                    \
			}                                                             \
		}                                                                     \
	}                                                                             \
	static void tag##_lat_prod(void *vq, uint64_t n, uint64_t gap)                \
	{                                                                             \
		Q *q = (Q *)vq;                                                       \
		T it;                                                                 \
		uint64_t next = bench_ticks();                                        \
		memset(&it, 0, sizeof(it));                                           \
		for (uint64_t i = 0; i < n; i++) {                                    \
			while (bench_ticks() < next) {                                \
			}                                                             \
			it.v = bench_ticks();                                         \
			while (!(PUSH(q, &it))) {                                     \
			}                                                             \
			next = it.v + gap;                                            \
		}                                                                     \
	}                                                                             \
	static void tag##_lat_cons(void *vq, uint64_t n, uint64_t *samples)           \
	{                                                                             \
		Q *q = (Q *)vq;                                                       \
		T it;                                                                 \
		for (uint64_t i = 0; i < n; i++) {                                    \
			while (!(POP(q, &it))) {                                      \
			}                                                             \
			samples[i] = bench_ticks() - it.v;                            \
		}                                                                     \
	}                                                                             \
	__attribute__((noinline)) static uint64_t tag##_cg_loop(void *vq, uint64_t n) \
	{                                                                             \
		Q *q = (Q *)vq;                                                       \
		T in, out;                                                            \
		uint64_t sum = 0;                                                     \
		memset(&in, 0, sizeof(in));                                           \
		memset(&out, 0, sizeof(out));                                         \
		for (uint64_t i = 0; i < n; i++) {                                    \
			in.v = i;                                                     \
			(void)(PUSH(q, &in));                                         \
			(void)(POP(q, &out));                                         \
			sum += out.v;                                                 \
		}                                                                     \
		return sum;                                                           \
	}

/* The bench_ops initialiser for the kernels of @tag (positional, so C++17
 * accepts it too). */
#define BENCH_OPS(tag)                                                                      \
	{                                                                                   \
		tag##_create, tag##_reset, tag##_destroy, tag##_tput_prod, tag##_tput_cons, \
			tag##_rt_ping, tag##_rt_pong, tag##_lat_prod, tag##_lat_cons,       \
			tag##_cg_loop                                                       \
	}

#ifdef __cplusplus
}
#endif

#endif /* RING_BENCH_BENCH_H */
