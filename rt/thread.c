// SPDX-License-Identifier: MIT
/*
 * Thread creation with real-time attributes, and the explanations that go
 * with a refusal. Validation happens before pthread_create so that a bad
 * argument is reported as such, never as a confusing kernel errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rtloop/sized.h>
#include <rtloop/log.h>
#include <rtloop/thread.h>

struct rtl_thread {
	pthread_t handle;
	struct rtl_thread_info info; /* fixed before create returns */
	/* What the trampoline needs. */
	void *(*fn)(void *);
	void *arg;
	size_t prefault;
	char name[16];
};

static const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_FIFO:
		return "SCHED_FIFO";
	case SCHED_RR:
		return "SCHED_RR";
	case SCHED_OTHER:
		return "SCHED_OTHER";
	}
	return "unknown policy";
}

static bool is_rt(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int validate(const struct rtl_thread_attr *a, struct rtl_error *e)
{
	cpu_set_t allowed;
	int lo, hi;

	if (a->policy != SCHED_FIFO && a->policy != SCHED_RR && a->policy != SCHED_OTHER) {
		rtl_error_set(e, -EINVAL,
			      "unknown scheduling policy %d; fix: use SCHED_FIFO, SCHED_RR or "
			      "SCHED_OTHER",
			      a->policy);
		return -EINVAL;
	}
	lo = sched_get_priority_min(a->policy);
	hi = sched_get_priority_max(a->policy);
	if (a->priority < lo || a->priority > hi) {
		rtl_error_set(e, -EINVAL,
			      "priority %d is outside %s's range %d..%d; fix: pick one in it",
			      a->priority, policy_name(a->policy), lo, hi);
		return -EINVAL;
	}
	if (a->name && strlen(a->name) > 15) {
		rtl_error_set(e, -EINVAL,
			      "thread name '%s' is longer than the kernel's 15 characters; fix: "
			      "shorten it",
			      a->name);
		return -EINVAL;
	}
	if (a->cpu >= 0) {
		CPU_ZERO(&allowed);
		if (a->cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
		    !CPU_ISSET(a->cpu, &allowed)) {
			rtl_error_set(
				e, -EINVAL,
				"CPU %d is not available to this process (it may use %d CPUs); "
				"fix: pin to a CPU listed by 'taskset -pc %d' or pass -1",
				a->cpu, CPU_COUNT(&allowed), (int)getpid());
			return -EINVAL;
		}
	} else if (a->cpu < -1) {
		rtl_error_set(e, -EINVAL,
			      "CPU %d is not valid; fix: a CPU number, or -1 for no pinning",
			      a->cpu);
		return -EINVAL;
	}
	return 0;
}

/* The caller's sized attributes @a copied into @copy and validated: 0, or
 * -EINVAL/-E2BIG with @e filled. */
static int take_attr(struct rtl_thread_attr *copy, const struct rtl_thread_attr *a,
		     struct rtl_error *e)
{
	int ret = rtl__sized_in(copy, sizeof(*copy), a, "thread: struct rtl_thread_attr", e);

	return ret < 0 ? ret : validate(copy, e);
}

static void explain_eperm(struct rtl_error *e, const struct rtl_thread_attr *a)
{
	struct rlimit rl = { 0, 0 };
	char lim[24];

	getrlimit(RLIMIT_RTPRIO, &rl);
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%llu", (unsigned long long)rl.rlim_cur);
	rtl_error_set(
		e, -EPERM,
		"%s priority %d refused (EPERM): RLIMIT_RTPRIO is %s and the process lacks "
		"CAP_SYS_NICE, or its cgroup has no real-time runtime; fix: run as root, "
		"'setcap cap_sys_nice+ep PROGRAM', or raise the limit ('@realtime - rtprio 98' "
		"in /etc/security/limits.conf, 'ulimit -r 98')",
		policy_name(a->policy), a->priority, lim);
}

/*
 * The kernel refused the real-time policy: explain it and, unless the
 * caller asked for best effort, fail with the explanation in @e. Returns
 * true when the caller continues under SCHED_OTHER, recorded in @info with
 * the explanation as the reason.
 */
static bool refused_rt(struct rtl_thread_info *info, const struct rtl_thread_attr *a,
		       struct rtl_error *e)
{
	explain_eperm(e, a);
	if (!a->best_effort)
		return false;
	rtl_log(RTL_LOG_WARN, "%s; continuing under SCHED_OTHER (best effort)", e->msg);
	/* Not a failure of the call: the reason moves to the info. */
	info->why = *e;
	*e = (struct rtl_error){ 0 };
	info->degraded = true;
	info->policy = SCHED_OTHER;
	info->priority = 0;
	return true;
}

static void *trampoline(void *p)
{
	struct rtl_thread *t = p;

	/* Named from inside: a high-priority thread may run before its
	 * creator gets the CPU back. */
	if (t->name[0])
		pthread_setname_np(pthread_self(), t->name);
	if (t->prefault)
		rtl_mem_prefault_stack(t->prefault);
	return t->fn(t->arg);
}

static int spawn(struct rtl_thread *t, const struct rtl_thread_attr *a, int policy, int prio)
{
	pthread_attr_t attr;
	struct sched_param sp = { .sched_priority = prio };
	size_t stack = a->stack_size ? a->stack_size : RTL_THREAD_DEFAULT_STACK;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_attr_setstacksize(&attr, stack);
	if (ret)
		goto out;
	ret = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	if (ret)
		goto out;
	ret = pthread_attr_setschedpolicy(&attr, policy);
	if (ret)
		goto out;
	ret = pthread_attr_setschedparam(&attr, &sp);
	if (ret)
		goto out;
	if (a->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(a->cpu, &set);
		ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (ret)
			goto out;
	}
	ret = pthread_create(&t->handle, &attr, trampoline, t);
out:
	pthread_attr_destroy(&attr);
	return -ret;
}

RTL_API int rtl_thread_create(struct rtl_thread **out, const struct rtl_thread_attr *a,
			      void *(*fn)(void *), void *arg, struct rtl_error *err)
{
	static const struct rtl_thread_attr plain = { .size = sizeof(plain),
						      .policy = SCHED_OTHER,
						      .cpu = -1 };
	/* Filled on every failure, so the log says why even when @err is NULL;
	 * copied to @err only then. */
	struct rtl_error e = { 0 };
	struct rtl_thread_attr copy;
	struct rtl_thread *t = NULL;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL,
				     "no place for the thread handle given (out is NULL)");
	*out = NULL;
	if (!fn)
		return rtl_error_set(err, -EINVAL, "no thread function given");
	ret = take_attr(&copy, a ? a : &plain, &e);
	if (ret < 0)
		goto fail;
	a = &copy;
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = rtl_error_set(&e, -ENOMEM, "out of memory for a thread handle (%zu bytes)",
				    sizeof(*t));
		goto fail;
	}
	t->fn = fn;
	t->arg = arg;
	t->prefault = a->prefault_stack;
	if (a->name)
		snprintf(t->name, sizeof(t->name), "%s", a->name);
	t->info.policy = a->policy;
	t->info.priority = a->priority;
	t->info.cpu = a->cpu;
	ret = spawn(t, a, a->policy, a->priority);
	if (ret == -EPERM && is_rt(a->policy)) {
		if (!refused_rt(&t->info, a, &e))
			goto fail;
		ret = spawn(t, a, SCHED_OTHER, 0);
	}
	if (ret < 0) {
		rtl_error_set(&e, ret,
			      "pthread_create failed: %s; fix: check memory and thread limits "
			      "(ulimit -u)",
			      strerror(-ret));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	free(t);
	rtl_log(RTL_LOG_ERROR, "%s", e.msg);
	if (err)
		*err = e;
	return ret;
}

RTL_API int rtl_thread_join(struct rtl_thread *t, void **ret)
{
	int e;

	if (!t)
		return -EINVAL;
	e = pthread_join(t->handle, ret);
	/* A failed join leaves the thread running (or never joinable): its
	 * handle stays valid, and the caller's. */
	if (e)
		return -e;
	free(t);
	return 0;
}

RTL_API const struct rtl_thread_info *rtl_thread_applied(const struct rtl_thread *t)
{
	return t ? &t->info : NULL;
}

RTL_API int rtl_thread_apply_self(struct rtl_thread_info *info, const struct rtl_thread_attr *a,
				  struct rtl_error *err)
{
	struct rtl_thread_info got = { 0 };
	struct rtl_error e = { 0 };
	struct rtl_thread_attr copy;
	struct sched_param sp;
	int ret;

	if (info)
		*info = got;
	if (!a)
		return rtl_error_set(err, -EINVAL, "no thread attributes given");
	ret = take_attr(&copy, a, &e);
	if (ret < 0)
		goto fail;
	a = &copy;
	got.policy = a->policy;
	got.priority = a->priority;
	got.cpu = a->cpu;
	if (a->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(a->cpu, &set);
		ret = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (ret < 0) {
			rtl_error_set(&e, ret, "cannot pin to CPU %d: %s", a->cpu, strerror(-ret));
			goto fail;
		}
	}
	sp.sched_priority = a->priority;
	ret = -pthread_setschedparam(pthread_self(), a->policy, &sp);
	if (ret == -EPERM && is_rt(a->policy)) {
		if (!refused_rt(&got, a, &e))
			goto fail;
		ret = 0;
	} else if (ret < 0) {
		rtl_error_set(&e, ret, "cannot set %s priority %d: %s", policy_name(a->policy),
			      a->priority, strerror(-ret));
		goto fail;
	}
	if (a->name)
		pthread_setname_np(pthread_self(), a->name);
	if (info)
		*info = got;
	return 0;
fail:
	rtl_log(RTL_LOG_ERROR, "%s", e.msg);
	if (err)
		*err = e;
	return ret;
}

static void *noop(void *arg)
{
	return arg;
}

RTL_API bool rtl_thread_rt_permitted(int priority, struct rtl_error *err)
{
	struct rtl_thread_attr a = { .size = sizeof(a),
				     .policy = SCHED_FIFO,
				     .priority = priority,
				     .cpu = -1,
				     .stack_size = 64 * 1024 };
	struct rtl_thread *t;
	int ret = rtl_thread_create(&t, &a, noop, NULL, err);

	if (ret == 0) {
		rtl_thread_join(t, NULL);
		/* Permitted: no reason to give. */
		if (err)
			*err = (struct rtl_error){ 0 };
	}
	return ret == 0;
}

RTL_API int rtl_thread_hold_cpu_latency(int32_t us, struct rtl_error *err)
{
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	int e;

	if (fd < 0) {
		e = errno;
		goto fail;
	}
	/* The device takes a binary 32-bit value. */
	if (write(fd, &us, sizeof(us)) != (ssize_t)sizeof(us)) {
		e = errno ? errno : EIO;
		close(fd);
		goto fail;
	}
	return fd;
fail:
	return rtl_error_set(err, -e,
			     "cannot hold /dev/cpu_dma_latency (%s): deep C-states may add "
			     "wake-up latency; fix: run as root, or give the user write "
			     "access to the device",
			     strerror(e));
}

RTL_API void rtl_thread_release_cpu_latency(int fd)
{
	if (fd >= 0)
		close(fd);
}
