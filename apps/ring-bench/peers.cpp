// SPDX-License-Identifier: MIT
/*
 * C++ shim for ring-bench: boost::lockfree::spsc_queue (compile-time
 * capacity) and moodycamel::ReaderWriterQueue (try_enqueue only, so it never
 * allocates on the hot path), both sized BENCH_CAPACITY. The loops are the
 * BENCH_KERNELS() of bench.h, compiled here so the queue calls inline.
 */
#include <new>

#include <boost/lockfree/spsc_queue.hpp>
#include <readerwriterqueue/readerwriterqueue.h>

#include "peers.h"

namespace
{

template <typename T>
using boost_q = boost::lockfree::spsc_queue<T, boost::lockfree::capacity<BENCH_CAPACITY>>;

template <typename T> using rwq_q = moodycamel::ReaderWriterQueue<T>;

#define BOOST_PUSH(q, p) (q)->push(*(p))
#define BOOST_POP(q, p) (q)->pop(*(p))
#define RWQ_PUSH(q, p) (q)->try_enqueue(*(p))
#define RWQ_POP(q, p) (q)->try_dequeue(*(p))

typedef boost_q<item8> boost8_t;
typedef boost_q<item64> boost64_t;
typedef rwq_q<item8> rwq8_t;
typedef rwq_q<item64> rwq64_t;

// create, reset and destroy of queue type Q, built with the constructor
// arguments ARGS, in parentheses (moodycamel's capacity; boost's is in its
// type). Reset = rebuild in place: both queues are empty after every run
// (the consumer pops all items), but a fresh object matches the C peers'
// reset.
#define PEER_LIFECYCLE(tag, Q, ARGS)              \
	void *tag##_create()                      \
	{                                         \
		return new (std::nothrow) Q ARGS; \
	}                                         \
	void tag##_reset(void *q)                 \
	{                                         \
		Q *p = static_cast<Q *>(q);       \
		p->~Q();                          \
		new (p) Q ARGS;                   \
	}                                         \
	void tag##_destroy(void *q)               \
	{                                         \
		delete static_cast<Q *>(q);       \
	}

PEER_LIFECYCLE(boost8, boost8_t, ())
PEER_LIFECYCLE(boost64, boost64_t, ())
PEER_LIFECYCLE(rwq8, rwq8_t, (BENCH_CAPACITY))
PEER_LIFECYCLE(rwq64, rwq64_t, (BENCH_CAPACITY))

BENCH_KERNELS(boost8, boost8_t, item8, BOOST_PUSH, BOOST_POP)
BENCH_KERNELS(boost64, boost64_t, item64, BOOST_PUSH, BOOST_POP)
BENCH_KERNELS(rwq8, rwq8_t, item8, RWQ_PUSH, RWQ_POP)
BENCH_KERNELS(rwq64, rwq64_t, item64, RWQ_PUSH, RWQ_POP)

} // namespace

extern "C" {
const struct bench_ops peer_boost_ops[2] = { BENCH_OPS(boost8), BENCH_OPS(boost64) };
const struct bench_ops peer_rwq_ops[2] = { BENCH_OPS(rwq8), BENCH_OPS(rwq64) };
}
