// SPDX-License-Identifier: MIT
/*
 * Memory locking, stack pre-faulting and NUMA-placed allocation.
 *
 * Allocation goes through mmap (or libnuma, which is mmap plus mbind) rather
 * than malloc: the memory is page-aligned, never shared with the allocator's
 * arenas (whose later growth could fault on the hot path), and returned to
 * the kernel on free.
 */
#include <alloca.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rtl-config.h"
#include <rtloop/log.h>
#include <rtloop/mem.h>

#if RTL_HAVE_NUMA
#include <numa.h>
#endif

#define STACK_GUARD_MARGIN (16 * 1024)

static void set_error(struct rtl_error *err, int code, const char *msg)
{
	rtl_log(RTL_LOG_ERROR, "%s", msg);
	rtl_error_set(err, code, "%s", msg);
}

static void format_limit(char *buf, size_t len, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(v / 1024));
}

RTL_API int rtl_mem_lock_all(struct rtl_error *err)
{
	struct rlimit rl = { 0, 0 };
	char lim[32];
	char msg[320];
	int e;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		return 0;
	e = errno;
	getrlimit(RLIMIT_MEMLOCK, &rl);
	format_limit(lim, sizeof(lim), rl.rlim_cur);
	switch (e) {
	case ENOMEM:
		snprintf(msg, sizeof(msg),
			 "mlockall refused (ENOMEM): RLIMIT_MEMLOCK is %s, smaller than the "
			 "process; fix: raise it ('ulimit -l unlimited', or 'memlock unlimited' in "
			 "/etc/security/limits.conf) or grant CAP_IPC_LOCK "
			 "(setcap cap_ipc_lock+ep PROGRAM)",
			 lim);
		break;
	case EPERM:
		snprintf(msg, sizeof(msg),
			 "mlockall refused (EPERM): no CAP_IPC_LOCK and RLIMIT_MEMLOCK is %s; fix: "
			 "run as root, grant CAP_IPC_LOCK, or raise RLIMIT_MEMLOCK",
			 lim);
		break;
	default:
		snprintf(msg, sizeof(msg),
			 "mlockall failed (%s): the kernel could not lock the process memory; fix: "
			 "free memory or retry",
			 strerror(e));
		break;
	}
	set_error(err, -e, msg);
	return -e;
}

RTL_API int rtl_mem_unlock_all(void)
{
	return munlockall() == 0 ? 0 : -errno;
}

RTL_API bool rtl_mem_is_locked(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmLck: %lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb > 0;
}

/* Bytes of stack between the current frame and the bottom of this thread's
 * stack (the stack grows down on every architecture we run on). */
static size_t stack_left(void)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;
	char here;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if ((uintptr_t)&here < (uintptr_t)addr)
		return 0;
	return (size_t)((uintptr_t)&here - (uintptr_t)addr);
}

/* noinline: the alloca'd frame must be a real frame below the caller's. */
static __attribute__((noinline)) void touch_stack(size_t bytes)
{
	volatile unsigned char *p = alloca(bytes);
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < bytes; i += (size_t)page)
		p[i] = 0;
	p[bytes - 1] = 0;
}

RTL_API int rtl_mem_prefault_stack(size_t bytes)
{
	size_t left = stack_left();

	if (bytes == 0)
		return 0;
	if (left < STACK_GUARD_MARGIN || bytes > left - STACK_GUARD_MARGIN) {
		rtl_log(RTL_LOG_ERROR,
			"cannot pre-fault %zu bytes of stack: only %zu bytes are left to this "
			"thread; fix: ask for less, or create the thread with a larger stack",
			bytes, left);
		return -E2BIG;
	}
	touch_stack(bytes);
	return 0;
}

RTL_API bool rtl_mem_numa_available(void)
{
#if RTL_HAVE_NUMA
	return numa_available() >= 0;
#else
	return false;
#endif
}

RTL_API int rtl_mem_numa_nodes(void)
{
#if RTL_HAVE_NUMA
	if (numa_available() >= 0)
		return numa_num_configured_nodes();
#endif
	return 1;
}

RTL_API int rtl_mem_cpu_node(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (cpu < 0 || cpu >= ncpu)
		return -EINVAL;
#if RTL_HAVE_NUMA
	if (numa_available() >= 0) {
		int node = numa_node_of_cpu(cpu);

		return node < 0 ? -EINVAL : node;
	}
#endif
	return 0;
}

RTL_API int rtl_mem_alloc(void **out, size_t size, int node)
{
	void *p;

	if (!out || size == 0 || node < -1 || node >= rtl_mem_numa_nodes())
		return -EINVAL;
#if RTL_HAVE_NUMA
	if (numa_available() >= 0) {
		p = node < 0 ? numa_alloc_local(size) : numa_alloc_onnode(size, node);
		if (!p)
			return -ENOMEM;
		goto prefault;
	}
#endif
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
#if RTL_HAVE_NUMA
prefault:
#endif
	/* Writing, not reading: a read fault maps the shared zero page and the
	 * first write would fault again. */
	memset(p, 0, size);
	*out = p;
	return 0;
}

RTL_API void rtl_mem_free(void *p, size_t size)
{
	if (!p)
		return;
#if RTL_HAVE_NUMA
	if (numa_available() >= 0) {
		numa_free(p, size);
		return;
	}
#endif
	munmap(p, size);
}

RTL_API int64_t rtl_mem_thread_minor_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -errno;
	return (int64_t)ru.ru_minflt;
}
