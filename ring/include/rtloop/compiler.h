/* SPDX-License-Identifier: MIT */
/*
 * Compiler helpers shared by every public rtloop header.
 *
 * The library is built with -fvisibility=hidden; RTL_API marks the symbols
 * that make up the public ABI. It lives with ring/ because ring/ is the leaf
 * module every other one depends on.
 */
#ifndef RTLOOP_COMPILER_H
#define RTLOOP_COMPILER_H

#define RTL_API __attribute__((visibility("default")))

/* Size of the unit of coherence we keep producer and consumer apart by. Two
 * lines, not one: adjacent-line prefetchers on x86 pull pairs of lines. */
#define RTL_CACHELINE 64

#define RTL_LIKELY(x) __builtin_expect(!!(x), 1)
#define RTL_UNLIKELY(x) __builtin_expect(!!(x), 0)

#if defined(__GNUC__)
#define RTL_INLINE static inline __attribute__((always_inline))
#else
#define RTL_INLINE static inline
#endif

#endif /* RTLOOP_COMPILER_H */
