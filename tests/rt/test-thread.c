// SPDX-License-Identifier: MIT
/*
 * Real-time threads. Tests that need SCHED_FIFO skip, with the reason the
 * library gives, where the kernel refuses it; the refusal paths are tested
 * everywhere by dropping privileges inside the (forked) test process.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rtloop/thread.h>

struct seen {
	int policy;
	int priority;
	int ncpus;
	int cpu0;
	char name[16];
};

static void *observe(void *arg)
{
	struct seen *s = arg;
	struct sched_param sp;
	cpu_set_t set;

	pthread_getschedparam(pthread_self(), &s->policy, &sp);
	s->priority = sp.sched_priority;
	CPU_ZERO(&set);
	pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
	s->ncpus = CPU_COUNT(&set);
	s->cpu0 = CPU_ISSET(0, &set);
	pthread_getname_np(pthread_self(), s->name, sizeof(s->name));
	return NULL;
}

static void require_rt(void)
{
	struct rtl_error err;

	if (!rtl_thread_rt_permitted(10, &err))
		cr_skip_test("SCHED_FIFO not permitted here: %s", err.msg);
}

/* Become an unprivileged user with no real-time allowance (forked test
 * process: nothing leaks into other tests). */
static void drop_privileges(void)
{
	struct rlimit zero = { 0, 0 };

	cr_assert_eq(setrlimit(RLIMIT_RTPRIO, &zero), 0);
	if (geteuid() == 0)
		cr_assert_eq(setuid(65534), 0, "drop to nobody: %s", strerror(errno));
}

Test(thread, fifo_thread_gets_policy_priority_cpu_and_name)
{
	struct rtl_thread_attr a = { .name = "rtl-test",
				     .policy = SCHED_FIFO,
				     .priority = 12,
				     .cpu = 0,
				     .prefault_stack = 64 * 1024 };
	struct rtl_thread t;
	struct seen s = { 0 };

	require_rt();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), 0, "%s", t.err.msg);
	cr_assert_eq(rtl_thread_join(&t, NULL), 0);
	cr_assert_eq(s.policy, SCHED_FIFO);
	cr_assert_eq(s.priority, 12);
	cr_assert_eq(s.ncpus, 1);
	cr_assert(s.cpu0);
	cr_assert_str_eq(s.name, "rtl-test");
	cr_assert_not(t.degraded);
	cr_assert_eq(t.err.code, 0);
}

Test(thread, apply_self_changes_the_calling_thread)
{
	struct rtl_thread_attr a = {
		.name = "rtl-self", .policy = SCHED_FIFO, .priority = 7, .cpu = 0
	};
	struct rtl_thread t;
	struct seen s = { 0 };

	require_rt();
	cr_assert_eq(rtl_thread_apply_self(&a, &t), 0, "%s", t.err.msg);
	observe(&s);
	cr_assert_eq(s.policy, SCHED_FIFO);
	cr_assert_eq(s.priority, 7);
	cr_assert_str_eq(s.name, "rtl-self");
}

Test(thread, bad_attributes_are_rejected_with_reason)
{
	struct rtl_thread t;
	struct seen s;
	struct rtl_thread_attr a = { .policy = 77, .cpu = -1 };

	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	cr_assert(strstr(t.err.msg, "policy"), "%s", t.err.msg);
	a = (struct rtl_thread_attr){ .policy = SCHED_FIFO, .priority = 0, .cpu = -1 };
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	cr_assert(strstr(t.err.msg, "priority 0"), "%s", t.err.msg);
	a = (struct rtl_thread_attr){ .policy = SCHED_OTHER, .priority = 5, .cpu = -1 };
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	a = (struct rtl_thread_attr){ .policy = SCHED_OTHER, .cpu = 4000 };
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	cr_assert(strstr(t.err.msg, "CPU 4000"), "%s", t.err.msg);
	a = (struct rtl_thread_attr){ .policy = SCHED_OTHER, .cpu = -2 };
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	a = (struct rtl_thread_attr){ .name = "a-name-that-is-too-long", .cpu = -1 };
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EINVAL);
	cr_assert(strstr(t.err.msg, "15 characters"), "%s", t.err.msg);
	cr_assert_eq(rtl_thread_create(&t, NULL, NULL, NULL), -EINVAL);
	cr_assert_eq(rtl_thread_create(NULL, NULL, observe, NULL), -EINVAL);
	cr_assert_eq(rtl_thread_apply_self(NULL, NULL), -EINVAL);
}

Test(thread, default_attributes_run_plain_thread)
{
	struct rtl_thread t;
	struct seen s = { 0 };

	cr_assert_eq(rtl_thread_create(&t, NULL, observe, &s), 0);
	rtl_thread_join(&t, NULL);
	cr_assert_eq(s.policy, SCHED_OTHER);
}

Test(thread, refused_fifo_names_cause_and_fix)
{
	struct rtl_thread_attr a = { .policy = SCHED_FIFO, .priority = 50, .cpu = -1 };
	struct rtl_thread t;
	struct seen s;

	drop_privileges();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), -EPERM);
	cr_assert_eq(t.err.code, -EPERM);
	cr_assert(strstr(t.err.msg, "RLIMIT_RTPRIO is 0"), "cause: %s", t.err.msg);
	cr_assert(strstr(t.err.msg, "CAP_SYS_NICE"), "cause: %s", t.err.msg);
	cr_assert(strstr(t.err.msg, "limits.conf"), "fix: %s", t.err.msg);
	cr_assert_not(t.degraded);
	cr_assert_not(rtl_thread_rt_permitted(50, NULL));
	cr_assert_eq(rtl_thread_apply_self(&a, &t), -EPERM);
}

Test(thread, best_effort_degrades_and_records_why)
{
	struct rtl_thread_attr a = {
		.policy = SCHED_FIFO, .priority = 50, .cpu = 0, .best_effort = true
	};
	struct rtl_thread t;
	struct seen s = { 0 };

	drop_privileges();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s), 0);
	rtl_thread_join(&t, NULL);
	cr_assert(t.degraded);
	cr_assert_eq(t.policy, SCHED_OTHER);
	cr_assert_eq(t.err.code, -EPERM);
	cr_assert_eq(s.policy, SCHED_OTHER, "the thread really runs under SCHED_OTHER");
	cr_assert_eq(s.ncpus, 1, "pinning still applies when degraded");
	cr_assert_eq(rtl_thread_apply_self(&a, &t), 0);
	cr_assert(t.degraded);
}

Test(thread, cpu_latency_request_is_held_or_explained)
{
	struct rtl_error err = { 0 };
	int fd = rtl_thread_hold_cpu_latency(0, &err);

	if (fd < 0) {
		cr_assert(fd == -EACCES || fd == -ENOENT || fd == -EPERM, "got %d", fd);
		cr_assert(strstr(err.msg, "cpu_dma_latency"), "%s", err.msg);
		cr_assert(strstr(err.msg, "fix:"), "%s", err.msg);
		return;
	}
	cr_assert_geq(fd, 0);
	rtl_thread_release_cpu_latency(fd);
	rtl_thread_release_cpu_latency(-1);
}

Test(thread, cpu_latency_refused_without_privileges)
{
	struct rtl_error err = { 0 };

	drop_privileges();
	cr_assert_lt(rtl_thread_hold_cpu_latency(0, &err), 0);
	cr_assert_neq(err.code, 0);
	cr_assert(strstr(err.msg, "fix:"), "%s", err.msg);
}
