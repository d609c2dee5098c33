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

template <typename Q> void *create_q()
{
	return new (std::nothrow) Q();
}

template <typename T> void *create_rwq()
{
	return new (std::nothrow) rwq_q<T>(BENCH_CAPACITY);
}

// Reset = rebuild in place: both queues are empty after every run (the
// consumer pops all items), but a fresh object matches the C peers' reset.
template <typename Q> void reset_q(void *q)
{
	Q *p = static_cast<Q *>(q);
	p->~Q();
	new (p) Q();
}

template <typename T> void reset_rwq(void *q)
{
	rwq_q<T> *p = static_cast<rwq_q<T> *>(q);
	p->~rwq_q<T>();
	new (p) rwq_q<T>(BENCH_CAPACITY);
}

template <typename Q> void destroy_q(void *q)
{
	delete static_cast<Q *>(q);
}

#define BOOST_PUSH(q, p) (q)->push(*(p))
#define BOOST_POP(q, p) (q)->pop(*(p))
#define RWQ_PUSH(q, p) (q)->try_enqueue(*(p))
#define RWQ_POP(q, p) (q)->try_dequeue(*(p))

typedef boost_q<item8> boost8_t;
typedef boost_q<item64> boost64_t;
typedef rwq_q<item8> rwq8_t;
typedef rwq_q<item64> rwq64_t;

void *boost8_create()
{
	return create_q<boost8_t>();
}
void *boost64_create()
{
	return create_q<boost64_t>();
}
void boost8_reset(void *q)
{
	reset_q<boost8_t>(q);
}
void boost64_reset(void *q)
{
	reset_q<boost64_t>(q);
}
void boost8_destroy(void *q)
{
	destroy_q<boost8_t>(q);
}
void boost64_destroy(void *q)
{
	destroy_q<boost64_t>(q);
}
void *rwq8_create()
{
	return create_rwq<item8>();
}
void *rwq64_create()
{
	return create_rwq<item64>();
}
void rwq8_reset(void *q)
{
	reset_rwq<item8>(q);
}
void rwq64_reset(void *q)
{
	reset_rwq<item64>(q);
}
void rwq8_destroy(void *q)
{
	destroy_q<rwq8_t>(q);
}
void rwq64_destroy(void *q)
{
	destroy_q<rwq64_t>(q);
}

BENCH_KERNELS(boost8, boost8_t, item8, BOOST_PUSH, BOOST_POP)
BENCH_KERNELS(boost64, boost64_t, item64, BOOST_PUSH, BOOST_POP)
BENCH_KERNELS(rwq8, rwq8_t, item8, RWQ_PUSH, RWQ_POP)
BENCH_KERNELS(rwq64, rwq64_t, item64, RWQ_PUSH, RWQ_POP)

} // namespace

extern "C" {
const struct bench_ops peer_boost_ops[2] = { BENCH_OPS(boost8), BENCH_OPS(boost64) };
const struct bench_ops peer_rwq_ops[2] = { BENCH_OPS(rwq8), BENCH_OPS(rwq64) };
}
