/* SPDX-License-Identifier: MIT */
/*
 * Real-time threads: explicit policy, priority, CPU, name and stack.
 *
 * The kernel refuses SCHED_FIFO to a process without CAP_SYS_NICE whose
 * RLIMIT_RTPRIO is below the priority asked for (and, in some containers and
 * cgroups, to everyone). rtloop never hides that: the call fails with the
 * errno and a sentence that names the cause and the fix, unless the caller
 * asked for best effort, in which case the thread runs under SCHED_OTHER
 * and the result records that it was degraded and why.
 */
#ifndef RTLOOP_THREAD_H
#define RTLOOP_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/mem.h>

/* Default stack for rtloop threads. Small on purpose: with
 * mlockall(MCL_FUTURE) every byte of a thread stack is locked. */
#define RTL_THREAD_DEFAULT_STACK (512 * 1024)

struct rtl_thread_attr {
	const char *name;      /* at most 15 characters; NULL: inherit */
	int policy;	       /* SCHED_FIFO, SCHED_RR or SCHED_OTHER */
	int priority;	       /* 1..99 for FIFO/RR, 0 for OTHER */
	int cpu;	       /* CPU to pin to, or -1 for no pinning */
	size_t stack_size;     /* 0: RTL_THREAD_DEFAULT_STACK */
	size_t prefault_stack; /* bytes of stack touched before fn runs */
	bool best_effort;      /* on EPERM, run under SCHED_OTHER instead */
};

struct rtl_thread {
	pthread_t handle;
	/* What was applied. */
	int policy;
	int priority;
	int cpu;
	/* Best effort fell back to SCHED_OTHER; err says why. */
	bool degraded;
	struct rtl_error err;
	/* Private. */
	void *(*fn)(void *);
	void *arg;
	size_t prefault;
	char name[16];
};

/*
 * Start @fn(@arg) in a thread with the attributes @a (NULL: SCHED_OTHER,
 * unpinned); @t must stay valid until the thread is joined.
 * The policy and priority are set at creation
 * (PTHREAD_EXPLICIT_SCHED), so the thread never runs with the wrong ones.
 * Not RT-safe.
 * Returns 0, or
 *   -EINVAL  @t or @fn is NULL, unknown policy, priority outside the
 *            policy's range, CPU not available to this process, or a name
 *            longer than 15 characters (t->err says which),
 *   -EPERM   the kernel refused the real-time policy and @a->best_effort is
 *            false (t->err names the cause and the fix),
 *   -EAGAIN  out of threads or memory for the stack.
 */
RTL_API int rtl_thread_create(struct rtl_thread *t, const struct rtl_thread_attr *a,
			      void *(*fn)(void *), void *arg);

/* Wait for a thread from rtl_thread_create(). Returns 0 or -errno. */
RTL_API int rtl_thread_join(struct rtl_thread *t, void **ret);

/*
 * Apply @a's policy, priority, CPU and name to the calling thread (for loops
 * the application runs itself), filling @t (may be NULL) like
 * rtl_thread_create(). Not RT-safe. Same returns as rtl_thread_create().
 */
RTL_API int rtl_thread_apply_self(const struct rtl_thread_attr *a, struct rtl_thread *t);

/*
 * Whether this process may use SCHED_FIFO at @priority right now (probed by
 * applying it to a short-lived thread). Fills @err (may be NULL) with the
 * reason when it may not. Not RT-safe.
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

#endif /* RTLOOP_THREAD_H */
