/* SPDX-License-Identifier: MIT */
/*
 * Real-time threads: explicit policy, priority, CPU, name and stack.
 *
 * The kernel refuses SCHED_FIFO to a process without CAP_SYS_NICE whose
 * RLIMIT_RTPRIO is below the priority asked for (and, in some containers and
 * cgroups, to everyone). rtloop never hides that: the call fails with the
 * errno and a sentence that names the cause and the fix, unless the caller
 * asked for best effort, in which case the thread runs under SCHED_OTHER
 * and its rtl_thread_applied() records that it was degraded and why.
 */
#ifndef RTLOOP_THREAD_H
#define RTLOOP_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/mem.h>

RTL_BEGIN_DECLS

/* Default stack for rtloop threads. Small on purpose: with
 * mlockall(MCL_FUTURE) every byte of a thread stack is locked. */
#define RTL_THREAD_DEFAULT_STACK (512 * 1024)

struct rtl_thread_attr {
	size_t size;	       /* sizeof(struct rtl_thread_attr) */
	const char *name;      /* at most 15 characters; NULL: inherit */
	int policy;	       /* SCHED_FIFO, SCHED_RR or SCHED_OTHER */
	int priority;	       /* 1..99 for FIFO/RR, 0 for OTHER */
	int cpu;	       /* CPU to pin to, or -1 for no pinning */
	size_t stack_size;     /* 0: RTL_THREAD_DEFAULT_STACK */
	size_t prefault_stack; /* bytes of stack touched before fn runs */
	bool best_effort;      /* on EPERM, run under SCHED_OTHER instead */
};

/*
 * A thread started by rtl_thread_create(). Opaque: the handle is allocated
 * by create and freed by rtl_thread_join(), which is the destroy of a
 * thread, as with pthreads (a thread never joined keeps its handle).
 */
struct rtl_thread;

/* What was applied to a thread: a value, copied or read in place. */
struct rtl_thread_info {
	int policy;   /* SCHED_FIFO, SCHED_RR or SCHED_OTHER (after a fallback) */
	int priority; /* 0 under SCHED_OTHER */
	int cpu;      /* the CPU it is pinned to, or -1 */
	/* Best effort fell back to SCHED_OTHER; @why says why (code -EPERM,
	 * the cause and the fix). Zero when not degraded. */
	bool degraded;
	struct rtl_error why;
};

/*
 * Start @fn(@arg) in a thread with the attributes @a (NULL: SCHED_OTHER,
 * unpinned) and store its handle in *@out, to be given to
 * rtl_thread_join(). The policy and priority are set at creation
 * (PTHREAD_EXPLICIT_SCHED), so the thread never runs with the wrong ones.
 * What was applied, and whether best effort degraded it, is in
 * rtl_thread_applied().
 *
 * Returns 0, or (with @err, which may be NULL, filled with the code and
 * the cause and fix; failures other than a NULL @out or @fn are also
 * logged)
 *   -EINVAL  @out or @fn is NULL, unknown policy, priority outside the
 *            policy's range, CPU not available to this process, or a name
 *            longer than 15 characters (@err says which),
 *   -EPERM   the kernel refused the real-time policy and @a->best_effort is
 *            false (@err names the cause and the fix),
 *   -EAGAIN  out of threads or memory for the stack,
 *   -ENOMEM  out of memory for the handle.
 * On failure *@out (when @out is not NULL) is NULL and no thread runs. On
 * success @err is left as it was. Not RT-safe (allocates).
 */
RTL_API int rtl_thread_create(struct rtl_thread **out, const struct rtl_thread_attr *a,
			      void *(*fn)(void *), void *arg, struct rtl_error *err);

/*
 * Wait for @t to end, store what its function returned in *@ret (when @ret
 * is not NULL), and free @t: join is the destroy of a thread, so @t and
 * its rtl_thread_applied() are gone once it returns 0. Each thread is joined
 * exactly once, by one other thread.
 *
 * Returns 0, or
 *   -EINVAL   @t is NULL (or, from pthread_join(), not joinable),
 *   -EDEADLK  @t is the calling thread (or the two would deadlock),
 * and on failure @t is left as it was. Blocks; not RT-safe.
 */
RTL_API int rtl_thread_join(struct rtl_thread *t, void **ret);

/*
 * What was applied to @t (policy, priority, CPU) and, when best effort fell
 * back to SCHED_OTHER, why. Fixed once rtl_thread_create() has returned, so
 * any thread may read it until @t is joined. Returns NULL for a NULL @t.
 * RT-safe.
 */
RTL_API const struct rtl_thread_info *rtl_thread_applied(const struct rtl_thread *t);

/*
 * Apply @a's policy, priority, CPU and name to the calling thread (for loops
 * the application runs itself) and fill @info (may be NULL) with what was
 * applied, like rtl_thread_applied() for a created thread; on failure @info is
 * zeroed. Returns and @err as for rtl_thread_create() (-EINVAL also for a
 * NULL @a), without -ENOMEM. Not RT-safe.
 */
RTL_API int rtl_thread_apply_self(struct rtl_thread_info *info, const struct rtl_thread_attr *a,
				  struct rtl_error *err);

/*
 * Returns true when this process may use SCHED_FIFO at @priority right now
 * (probed by applying it to a short-lived thread), and clears @err; false
 * when it may not, with the reason in @err (may be NULL). Not RT-safe.
 */
RTL_API bool rtl_thread_rt_permitted(int priority, struct rtl_error *err);

/*
 * Ask the kernel's PM QoS to keep CPUs out of C-states whose exit latency
 * exceeds @us microseconds (0: stay in C0/C1), by holding
 * /dev/cpu_dma_latency open with the value written; the request lasts until
 * the descriptor is closed (rtl_thread_release_cpu_latency()). Not RT-safe.
 * Returns the descriptor (>= 0), or -errno (-EACCES: not root; -ENOENT: no
 * such device) with @err filled (may be NULL).
 */
RTL_API int rtl_thread_hold_cpu_latency(int32_t us, struct rtl_error *err);

/* Drop the request of rtl_thread_hold_cpu_latency(); a negative @fd is a
 * no-op. */
RTL_API void rtl_thread_release_cpu_latency(int fd);

RTL_END_DECLS

#endif /* RTLOOP_THREAD_H */
