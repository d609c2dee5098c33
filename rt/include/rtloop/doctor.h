/* SPDX-License-Identifier: MIT */
/*
 * rtl_doctor: the preflight. Before a loop is trusted with a deadline, look
 * at the machine it runs on and say, for each thing that decides latency,
 * what we found, whether it is fine, and the command that fixes it.
 *
 * Design
 * ------
 * - One call, rtl_doctor_run(), fills a caller-given array with a fixed set
 *   of findings, always in the same order and always all of them (see
 *   rtl_doctor_id()): a check that cannot read its source still yields a
 *   finding, saying "unknown" and why, never a gap or a crash.
 * - Every file is read below a root prefix (opts->root), and every value
 *   that comes from a system call (rlimits, timer slack) or uname(2) can be
 *   overridden through the options, so the unit tests build a fake /proc,
 *   /sys and /dev in a temporary directory and check each verdict without
 *   privileges and without the machine they run on.
 * - The parsers (the selected entry of "a [b] c", one key of a kernel
 *   command line, a CPU list) are pure functions, exported so that they are
 *   tested on their own and reusable by the apps.
 * - A missing file means different things: ENOENT on a feature file says the
 *   kernel lacks the feature (no THP, no cpufreq, no swap support), and the
 *   verdict says whether that is fine; any other error, or ENOENT where the
 *   file always exists (/proc/cmdline), gives RTL_DOCTOR_WARN "unknown".
 *
 * Verdicts, and why:
 *   preempt         PREEMPT_RT (version string or /sys/kernel/realtime) ok;
 *                   full or lazy preemption (static PREEMPT, or
 *                   PREEMPT_DYNAMIC in mode full or lazy) warn: bounded
 *                   scheduling latency, but long non-preemptible sections
 *                   remain; none or voluntary bad: a kernel path can delay
 *                   the loop by milliseconds, longer than a 1 kHz period.
 *   rtprio          bad when RLIMIT_RTPRIO is 0 and CAP_SYS_NICE is not
 *                   held (SCHED_FIFO is refused); warn below
 *                   RTL_DOCTOR_RTPRIO_WANT; ok otherwise.
 *   memlock         bad when RLIMIT_MEMLOCK is below opts->memlock_need and
 *                   CAP_IPC_LOCK is not held (mlockall fails); ok otherwise.
 *   cap_sys_nice,   ok when held, or when the matching rlimit makes it
 *   cap_ipc_lock    unnecessary; warn otherwise (the rlimit finding carries
 *                   the bad verdict).
 *   governor        ok when every CPU with cpufreq runs "performance", or
 *                   when there is no cpufreq; warn otherwise.
 *   isolcpus        warn when absent from the kernel command line.
 *   nohz_full,      warn when absent or when they do not cover the CPUs of
 *   rcu_nocbs       isolcpus; rcu_nocbs is implied by nohz_full.
 *   numa            ok on one node; on several, ok when rtloop was built
 *                   with libnuma (it places memory per node), warn if not.
 *   thp             warn when "always" (khugepaged and fault-time
 *                   compaction stall threads); ok for madvise, never, absent.
 *   swap            warn when any swap area is active.
 *   cpu_dma_latency ok when present and writable, or when the command line
 *                   already limits C-states; warn otherwise.
 *   timer_slack     warn above 1000 ns (SCHED_OTHER sleeps wake late;
 *                   SCHED_FIFO threads are exempt).
 *
 * Thread safety: no global state; every function may be called from any
 * thread. Nothing here is RT-safe: it opens files and reads directories.
 * The library never prints: the writers print only to the FILE the caller
 * hands them.
 */
#ifndef RTLOOP_DOCTOR_H
#define RTLOOP_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* Number of findings rtl_doctor_run() produces: the @max it needs. */
#define RTL_DOCTOR_MAX_FINDINGS 14
/* Size of the text buffers of a finding, NUL included. */
#define RTL_DOCTOR_TEXT_MAX 256
/* Default for rtl_doctor_opts.memlock_need: 128 MiB. */
#define RTL_DOCTOR_MEMLOCK_NEED (UINT64_C(128) << 20)
/* RLIMIT_RTPRIO below this (without CAP_SYS_NICE) is a warning. */
#define RTL_DOCTOR_RTPRIO_WANT 80
/* An rlimit value meaning RLIM_INFINITY. */
#define RTL_DOCTOR_UNLIMITED UINT64_MAX

enum rtl_doctor_verdict {
	RTL_DOCTOR_OK = 0,
	RTL_DOCTOR_WARN = 1,
	RTL_DOCTOR_BAD = 2,
};

struct rtl_doctor_finding {
	/* Stable identifier ("preempt", "rtprio", ...): a static string. */
	const char *id;
	enum rtl_doctor_verdict verdict;
	/* What we found, one line, NUL-terminated. */
	char found[RTL_DOCTOR_TEXT_MAX];
	/* The concrete fix, one line; empty when the verdict is ok. */
	char fix[RTL_DOCTOR_TEXT_MAX];
};

/* A value that overrides what the system reports, when @set. */
struct rtl_doctor_value {
	bool set;
	uint64_t value;
};

/* Options of rtl_doctor_run(). All-zero (or a NULL pointer) means: the real
 * system, as seen by the calling process. */
struct rtl_doctor_opts {
	size_t size; /* sizeof(struct rtl_doctor_opts) */
	/* Prefix of every /proc, /sys and /dev path; NULL or "/": the real
	 * system. */
	const char *root;
	/* The kernel version string as uname -v prints it ("#1 SMP
	 * PREEMPT_RT ..."). NULL: <root>/proc/sys/kernel/version, then
	 * uname(2) when @root is the real system. */
	const char *kernel_version;
	/* Soft RLIMIT_RTPRIO; unset: getrlimit(2). */
	struct rtl_doctor_value rtprio;
	/* Soft RLIMIT_MEMLOCK in bytes (RTL_DOCTOR_UNLIMITED for infinity);
	 * unset: getrlimit(2). */
	struct rtl_doctor_value memlock;
	/* Timer slack in ns; unset: prctl(PR_GET_TIMERSLACK). */
	struct rtl_doctor_value timer_slack_ns;
	/* Locked memory the program needs, in bytes; 0: the default,
	 * RTL_DOCTOR_MEMLOCK_NEED. */
	uint64_t memlock_need;
};

/*
 * Inspect the system and write one finding per check to @out, in the order
 * of rtl_doctor_id(). @opts may be NULL (the real system). Thread-safe; not
 * RT-safe (reads files under /proc, /sys and /dev).
 *
 * Returns the number of findings (RTL_DOCTOR_MAX_FINDINGS), or
 *   -EINVAL        @out is NULL, or @opts->root is the empty string,
 *   -ENOSPC        @max is below RTL_DOCTOR_MAX_FINDINGS, the count needed;
 *                  @out is left untouched,
 *   -ENAMETOOLONG  @opts->root is too long to build paths under,
 *   -ENOENT, -ENOTDIR, -EACCES  @opts->root is not a directory we can use.
 */
RTL_API int rtl_doctor_run(struct rtl_doctor_finding *out, size_t max,
			   const struct rtl_doctor_opts *opts);

/* Returns the id of the @i-th finding of rtl_doctor_run(), or NULL when @i is not
 * below RTL_DOCTOR_MAX_FINDINGS. Thread-safe. */
RTL_API const char *rtl_doctor_id(size_t i);

/* Returns the name of @v: "ok", "warn" or "bad"; "unknown" for any other
 * value. Thread-safe. */
RTL_API const char *rtl_doctor_verdict_name(enum rtl_doctor_verdict v);

/* Returns the worst verdict among the @n findings at @f (RTL_DOCTOR_OK when
 * @n is 0 or @f is NULL).
 * Thread-safe. */
RTL_API enum rtl_doctor_verdict rtl_doctor_worst(const struct rtl_doctor_finding *f, size_t n);

/*
 * Of @s, the entry a sysfs choice file marks as selected: "madvise" of
 * "always [madvise] never", "full" of "none voluntary (full) lazy". Copies
 * it, NUL-terminated, to @out of @len bytes. Pure; thread-safe.
 *
 * Returns its length, or
 *   -EINVAL  @s or @out is NULL, or @len is 0,
 *   -ENOENT  no complete [..] or (..) entry in @s,
 *   -ENOSPC  the entry does not fit @len bytes (@out is then empty).
 */
RTL_API int rtl_doctor_parse_selected(char *out, size_t len, const char *s);

/*
 * The value of parameter @key on the kernel command line @cmdline (as in
 * /proc/cmdline): the last "key=value" wins, surrounding double quotes are
 * removed, and parsing stops at a lone "--" (what follows is for init).
 * Copies the value, NUL-terminated, to @out of @len bytes. Pure;
 * thread-safe.
 *
 * Returns the value's length (0 for a bare "key" or "key="), or
 *   -EINVAL  an argument is NULL, @key is empty, or @len is 0,
 *   -ENOENT  @key is not on the command line,
 *   -ENOSPC  the value does not fit @len bytes (@out is then empty).
 */
RTL_API int rtl_doctor_cmdline_get(char *out, size_t len, const char *cmdline, const char *key);

/*
 * Parse a kernel CPU list ("2-3,6", "0-7:2/4") into the bit mask @mask of
 * @words 64-bit words (bit c of word c / 64 for CPU c), which it clears
 * first. Leading flags such as isolcpus' "managed_irq,domain," are not
 * accepted here: strip them first. Pure; thread-safe.
 *
 * Returns the number of CPUs set, or
 *   -EINVAL  @s or @mask is NULL, @words is 0, or @s is not a CPU list,
 *   -ERANGE  a CPU number does not fit @words * 64 bits.
 */
RTL_API int rtl_doctor_parse_cpulist(uint64_t *mask, size_t words, const char *s);

/*
 * Write @n findings to @f as aligned text: one line per finding ("verdict
 * id found"), the fix indented under each one that is not ok, then a
 * summary line. Not RT-safe (stdio). Returns 0, or -EINVAL (@f NULL, or
 * @fi NULL with @n > 0) or -EIO (a write failed).
 */
RTL_API int rtl_doctor_write_text(FILE *f, const struct rtl_doctor_finding *fi, size_t n);

/*
 * Write @n findings to @f as one JSON object:
 *   {"worst":"warn","counts":{"ok":..,"warn":..,"bad":..},
 *    "findings":[{"id":..,"verdict":..,"found":..,"fix":..},...]}
 * followed by a newline. Not RT-safe (stdio). Returns as
 * rtl_doctor_write_text().
 */
RTL_API int rtl_doctor_write_json(FILE *f, const struct rtl_doctor_finding *fi, size_t n);

RTL_END_DECLS

#endif /* RTLOOP_DOCTOR_H */
