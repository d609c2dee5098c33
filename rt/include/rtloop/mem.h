/* SPDX-License-Identifier: MIT */
/*
 * Memory for real-time threads: lock it, touch it, place it.
 *
 * A page fault on the hot path costs microseconds (a minor fault) to
 * milliseconds (a major one), so every byte the receive thread and the worker
 * touch is allocated, locked and pre-faulted before the loop starts:
 *   - rtl_mem_lock_all() locks current and future mappings (mlockall);
 *   - rtl_mem_prefault_stack() touches the calling thread's stack;
 *   - rtl_mem_alloc() returns zeroed, pre-faulted memory, on a chosen NUMA
 *     node when libnuma is built in and the kernel supports it, plain
 *     anonymous memory otherwise.
 * Refusals (limits, missing capabilities) come back as -errno plus a
 * sentence in struct rtl_error that names the cause and the fix.
 */
#ifndef RTLOOP_MEM_H
#define RTLOOP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

/*
 * mlockall(MCL_CURRENT | MCL_FUTURE). On failure fills @err (may be NULL)
 * and logs it at error level. Not RT-safe (set-up only).
 * Returns 0, or
 *   -ENOMEM  RLIMIT_MEMLOCK is smaller than the process (raise it or grant
 *            CAP_IPC_LOCK),
 *   -EPERM   no CAP_IPC_LOCK and RLIMIT_MEMLOCK is 0,
 *   -EAGAIN  the kernel could not lock some pages.
 */
RTL_API int rtl_mem_lock_all(struct rtl_error *err);

/* munlockall(). Returns 0 or -errno. */
RTL_API int rtl_mem_unlock_all(void);

/* Returns true when the process has locked memory (VmLck > 0 in
 * /proc/self/status), false otherwise or when the file cannot be read.
 * Not RT-safe (reads a file). */
RTL_API bool rtl_mem_is_locked(void);

/*
 * Touch @bytes of the calling thread's stack below the current frame so that
 * later calls do not fault. Not RT-safe (set-up only).
 * Returns 0, or -E2BIG when @bytes exceeds the stack left to this thread
 * (minus a 16 KiB guard margin); nothing is touched then.
 */
RTL_API int rtl_mem_prefault_stack(size_t bytes);

/*
 * Allocate @size bytes, zeroed and pre-faulted, on NUMA node @node (-1: no
 * preference). Without libnuma, or when numa_available() < 0, the memory is
 * plain anonymous memory and @node must be -1 or 0. Free with
 * rtl_mem_free() and the same size. Not RT-safe.
 * Returns 0 and sets *@out, or
 *   -EINVAL  @out is NULL, @size is 0, or @node is not a node of this machine,
 *   -ENOMEM  the allocation failed.
 */
RTL_API int rtl_mem_alloc(void **out, size_t size, int node);

/* Free memory from rtl_mem_alloc(). NULL is accepted. Not RT-safe. */
RTL_API void rtl_mem_free(void *p, size_t size);

/* Returns true when NUMA placement is in effect (libnuma built in and
 * available), false otherwise. */
RTL_API bool rtl_mem_numa_available(void);

/* Returns the number of configured NUMA nodes (1 without NUMA). */
RTL_API int rtl_mem_numa_nodes(void);

/* Returns the NUMA node of @cpu (0 without NUMA), or -EINVAL for a CPU
 * that does not exist or that libnuma knows no node of. */
RTL_API int rtl_mem_cpu_node(int cpu);

/* Returns the minor page faults of the calling thread so far (getrusage
 * RUSAGE_THREAD), or -errno of getrusage(). RT-safe (one system call): for before/after
 * deltas around a hot loop. */
RTL_API int64_t rtl_mem_thread_minor_faults(void);

RTL_END_DECLS

#endif /* RTLOOP_MEM_H */
