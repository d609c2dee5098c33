/* SPDX-License-Identifier: MIT */
/*
 * The C++ peers of ring-bench (peers.cpp): boost::lockfree::spsc_queue and
 * moodycamel::ReaderWriterQueue, each driven by the same BENCH_KERNELS() loops
 * as rtl_ring and ck_ring. Index 0 is the 8-byte item, 1 the 64-byte item.
 */
#ifndef RING_BENCH_PEERS_H
#define RING_BENCH_PEERS_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct bench_ops peer_boost_ops[2];
extern const struct bench_ops peer_rwq_ops[2];

#ifdef __cplusplus
}
#endif

#endif /* RING_BENCH_PEERS_H */
