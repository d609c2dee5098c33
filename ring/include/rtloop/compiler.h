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

#include <stddef.h>

#define RTL_API __attribute__((visibility("default")))

/* Size of the unit of coherence we keep producer and consumer apart by. Two
 * lines, not one: adjacent-line prefetchers on x86 pull pairs of lines. */
#define RTL_CACHELINE 64

#define RTL_LIKELY(x) __builtin_expect(!!(x), 1)
#define RTL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * Structs that can grow (docs/api.md, "Room to grow") start with a size_t
 * size member. RTL_SIZED_HAS(type, p, m): does the struct *@p, of @type,
 * reach member @m (a table of an older build does not have the members
 * added after it)? RTL_OPS_HAS: and is that member, a function pointer,
 * set? For the ops tables the library fills and a program calls through
 * (struct rtl_ur_manage_ops), and the library's own reads.
 */
#define RTL_SIZED_HAS(type, p, m) ((p)->size >= offsetof(type, m) + sizeof(((type *)0)->m))
#define RTL_OPS_HAS(type, p, m) (RTL_SIZED_HAS(type, p, m) && (p)->m)

#if defined(__GNUC__)
#define RTL_INLINE static inline __attribute__((always_inline))
#else
#define RTL_INLINE static inline
#endif

/*
 * C and C++: every public header compiles as C17, C++17 and C++20 (checked
 * by the build, tests/headers/). The declarations sit between
 * RTL_BEGIN_DECLS and RTL_END_DECLS (extern "C" in C++), and the few C-only
 * constructs the inline hot paths need have one spelling per language:
 *
 *   RTL_ATOMIC(T)                _Atomic(T) in C, std::atomic<T> in C++: the
 *                                same size, alignment and lock-free
 *                                representation with GCC and Clang (the
 *                                pairing C++23's <stdatomic.h> makes too);
 *                                tests/headers/ checks every layout.
 *   RTL_LOAD(p, order)           atomic load, order one of relaxed, acquire,
 *   RTL_STORE(p, v, order)       seq_cst; store: relaxed, release, seq_cst.
 *   RTL_ALIGNAS(n)               _Alignas / alignas.
 *   RTL_STATIC_ASSERT(e, msg)    _Static_assert / static_assert.
 *   RTL_FLEXIBLE_BEGIN/END       around a flexible array member (C99; an
 *                                extension GCC and Clang accept in C++):
 *                                silence the pedantic warning in C++ alone.
 *
 * In C++ the structs that hold RTL_ATOMIC fields cannot be copied (as
 * std::atomic cannot): read them with the accessor functions.
 */
#ifdef __cplusplus
#include <atomic>
#define RTL_BEGIN_DECLS extern "C" {
#define RTL_END_DECLS }
#define RTL_ATOMIC(T) std::atomic<T>
#define RTL_LOAD(p, order) std::atomic_load_explicit((p), std::memory_order_##order)
#define RTL_STORE(p, v, order) std::atomic_store_explicit((p), (v), std::memory_order_##order)
#define RTL_ALIGNAS(n) alignas(n)
#define RTL_STATIC_ASSERT(e, msg) static_assert(e, msg)
#if defined(__clang__)
#define RTL_FLEXIBLE_BEGIN \
	_Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wc99-extensions\"")
#define RTL_FLEXIBLE_END _Pragma("clang diagnostic pop")
#else
#define RTL_FLEXIBLE_BEGIN \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wpedantic\"")
#define RTL_FLEXIBLE_END _Pragma("GCC diagnostic pop")
#endif
#else
#include <stdatomic.h>
#define RTL_BEGIN_DECLS
#define RTL_END_DECLS
#define RTL_ATOMIC(T) _Atomic(T)
#define RTL_LOAD(p, order) atomic_load_explicit((p), memory_order_##order)
#define RTL_STORE(p, v, order) atomic_store_explicit((p), (v), memory_order_##order)
#define RTL_ALIGNAS(n) _Alignas(n)
#define RTL_STATIC_ASSERT(e, msg) _Static_assert(e, msg)
#define RTL_FLEXIBLE_BEGIN
#define RTL_FLEXIBLE_END
#endif

#endif /* RTLOOP_COMPILER_H */
