// SPDX-License-Identifier: MIT
/*
 * Real-time threads. Tests that need SCHED_FIFO skip, with the reason the
 * library gives, where the kernel refuses it; the refusal paths are tested
 * everywhere by dropping privileges inside the (forked) test process.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
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

/* Not a thread: create must overwrite it, also when it fails. */
#define NOT_A_THREAD ((struct rtl_thread *)(uintptr_t)1)

Test(thread, fifo_thread_gets_policy_priority_cpu_and_name)
{
	struct rtl_thread_attr a = { .size = sizeof(a),
				     .name = "rtl-test",
				     .policy = SCHED_FIFO,
				     .priority = 12,
				     .cpu = 0,
				     .prefault_stack = 64 * 1024 };
	const struct rtl_thread_info *info;
	struct rtl_error err = { 0 };
	struct rtl_thread *t;
	struct seen s = { 0 };

	require_rt();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s, &err), 0, "%s", err.msg);
	info = rtl_thread_applied(t);
	cr_assert_not_null(info);
	cr_assert_eq(info->policy, SCHED_FIFO);
	cr_assert_eq(info->priority, 12);
	cr_assert_eq(info->cpu, 0);
	cr_assert_not(info->degraded);
	cr_assert_eq(info->why.code, 0);
	cr_assert_eq(rtl_thread_join(t, NULL), 0);
	cr_assert_eq(s.policy, SCHED_FIFO);
	cr_assert_eq(s.priority, 12);
	cr_assert_eq(s.ncpus, 1);
	cr_assert(s.cpu0);
	cr_assert_str_eq(s.name, "rtl-test");
}

Test(thread, apply_self_changes_the_calling_thread)
{
	struct rtl_thread_attr a = {
		.size = sizeof(a), .name = "rtl-self", .policy = SCHED_FIFO, .priority = 7, .cpu = 0
	};
	struct rtl_thread_info info;
	struct rtl_error err = { 0 };
	struct seen s = { 0 };

	require_rt();
	cr_assert_eq(rtl_thread_apply_self(&info, &a, &err), 0, "%s", err.msg);
	observe(&s);
	cr_assert_eq(s.policy, SCHED_FIFO);
	cr_assert_eq(s.priority, 7);
	cr_assert_str_eq(s.name, "rtl-self");
	cr_assert_eq(info.policy, SCHED_FIFO);
	cr_assert_eq(info.priority, 7);
	cr_assert_eq(info.cpu, 0);
	cr_assert_not(info.degraded);
}

/* Create with @a fails with -EINVAL, *out cleared, and a message naming @what. */
static void rejected(const struct rtl_thread_attr *a, const char *what)
{
	struct rtl_error err = { 0 };
	struct rtl_thread *t = NOT_A_THREAD;
	struct seen s;

	cr_assert_eq(rtl_thread_create(&t, a, observe, &s, &err), -EINVAL, "want %s", what);
	cr_assert_null(t, "*out is NULL on failure");
	cr_assert_eq(err.code, -EINVAL);
	cr_assert(strstr(err.msg, what), "want '%s' in: %s", what, err.msg);
}

Test(thread, bad_attributes_are_rejected_with_reason)
{
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .policy = 77,
					    .cpu = -1 },
		 "policy");
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .policy = SCHED_FIFO,
					    .priority = 0,
					    .cpu = -1 },
		 "priority 0");
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .policy = SCHED_OTHER,
					    .priority = 5,
					    .cpu = -1 },
		 "priority 5");
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .policy = SCHED_OTHER,
					    .cpu = 4000 },
		 "CPU 4000");
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .policy = SCHED_OTHER,
					    .cpu = -2 },
		 "CPU -2");
	rejected(&(struct rtl_thread_attr){ .size = sizeof(struct rtl_thread_attr),
					    .name = "a-name-that-is-too-long",
					    .cpu = -1 },
		 "15 characters");
}

Test(thread, null_out_or_fn_is_einval_with_a_message)
{
	struct rtl_error err = { 0 };
	struct rtl_thread *t = NOT_A_THREAD;
	struct rtl_thread_info info;
	struct seen s;

	cr_assert_eq(rtl_thread_create(&t, NULL, NULL, &s, &err), -EINVAL);
	cr_assert_null(t, "*out is NULL on failure");
	cr_assert_eq(err.code, -EINVAL);
	cr_assert(strstr(err.msg, "function"), "%s", err.msg);
	err = (struct rtl_error){ 0 };
	cr_assert_eq(rtl_thread_create(NULL, NULL, observe, &s, &err), -EINVAL);
	cr_assert_eq(err.code, -EINVAL);
	cr_assert(strstr(err.msg, "out is NULL"), "%s", err.msg);
	/* @err is optional. */
	cr_assert_eq(rtl_thread_create(NULL, NULL, observe, &s, NULL), -EINVAL);
	cr_assert_eq(rtl_thread_create(&t, NULL, NULL, NULL, NULL), -EINVAL);
	err = (struct rtl_error){ 0 };
	cr_assert_eq(rtl_thread_apply_self(&info, NULL, &err), -EINVAL);
	cr_assert_eq(err.code, -EINVAL);
	cr_assert_neq(err.msg[0], '\0');
	cr_assert_eq(rtl_thread_apply_self(NULL, NULL, NULL), -EINVAL);
}

Test(thread, join_null_is_einval_and_info_null_is_null)
{
	void *ret = NULL;

	cr_assert_eq(rtl_thread_join(NULL, NULL), -EINVAL);
	cr_assert_eq(rtl_thread_join(NULL, &ret), -EINVAL);
	cr_assert_null(rtl_thread_applied(NULL));
}

static void *give_back(void *arg)
{
	return arg;
}

Test(thread, join_returns_what_the_thread_returned)
{
	struct rtl_thread *t;
	int token;
	void *ret = NULL;

	cr_assert_eq(rtl_thread_create(&t, NULL, give_back, &token, NULL), 0);
	cr_assert_eq(rtl_thread_join(t, &ret), 0);
	cr_assert_eq(ret, &token);
}

Test(thread, default_attributes_run_plain_thread)
{
	const struct rtl_thread_info *info;
	struct rtl_thread *t;
	struct seen s = { 0 };

	cr_assert_eq(rtl_thread_create(&t, NULL, observe, &s, NULL), 0);
	info = rtl_thread_applied(t);
	cr_assert_eq(info->policy, SCHED_OTHER);
	cr_assert_eq(info->priority, 0);
	cr_assert_eq(info->cpu, -1);
	cr_assert_not(info->degraded);
	cr_assert_eq(rtl_thread_join(t, NULL), 0);
	cr_assert_eq(s.policy, SCHED_OTHER);
}

Test(thread, refused_fifo_names_cause_and_fix)
{
	struct rtl_thread_attr a = {
		.size = sizeof(a), .policy = SCHED_FIFO, .priority = 50, .cpu = -1
	};
	struct rtl_error err = { 0 };
	struct rtl_thread *t = NOT_A_THREAD;
	struct rtl_thread_info info;
	struct seen s;

	drop_privileges();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s, &err), -EPERM);
	cr_assert_null(t);
	cr_assert_eq(err.code, -EPERM);
	cr_assert(strstr(err.msg, "RLIMIT_RTPRIO is 0"), "cause: %s", err.msg);
	cr_assert(strstr(err.msg, "CAP_SYS_NICE"), "cause: %s", err.msg);
	cr_assert(strstr(err.msg, "limits.conf"), "fix: %s", err.msg);
	cr_assert_not(rtl_thread_rt_permitted(50, NULL));
	err = (struct rtl_error){ 0 };
	cr_assert_not(rtl_thread_rt_permitted(50, &err));
	cr_assert_eq(err.code, -EPERM);
	err = (struct rtl_error){ 0 };
	cr_assert_eq(rtl_thread_apply_self(&info, &a, &err), -EPERM);
	cr_assert_eq(err.code, -EPERM);
	cr_assert(strstr(err.msg, "CAP_SYS_NICE"), "%s", err.msg);
	cr_assert_not(info.degraded, "a failure is not a degraded success");
}

Test(thread, best_effort_degrades_and_records_why)
{
	struct rtl_thread_attr a = { .size = sizeof(a),
				     .policy = SCHED_FIFO,
				     .priority = 50,
				     .cpu = 0,
				     .best_effort = true };
	/* Untouched on success, also when best effort degraded. */
	struct rtl_error err = { .code = 1 };
	const struct rtl_thread_info *info;
	struct rtl_thread_info self;
	struct rtl_thread *t;
	struct seen s = { 0 };

	drop_privileges();
	cr_assert_eq(rtl_thread_create(&t, &a, observe, &s, &err), 0);
	cr_assert_eq(err.code, 1);
	info = rtl_thread_applied(t);
	cr_assert(info->degraded);
	cr_assert_eq(info->policy, SCHED_OTHER);
	cr_assert_eq(info->priority, 0);
	cr_assert_eq(info->cpu, 0);
	cr_assert_eq(info->why.code, -EPERM);
	cr_assert(strstr(info->why.msg, "RLIMIT_RTPRIO is 0"), "why: %s", info->why.msg);
	cr_assert_eq(rtl_thread_join(t, NULL), 0);
	cr_assert_eq(s.policy, SCHED_OTHER, "the thread really runs under SCHED_OTHER");
	cr_assert_eq(s.ncpus, 1, "pinning still applies when degraded");
	cr_assert_eq(rtl_thread_apply_self(&self, &a, &err), 0);
	cr_assert_eq(err.code, 1);
	cr_assert(self.degraded);
	cr_assert_eq(self.policy, SCHED_OTHER);
	cr_assert_eq(self.why.code, -EPERM);
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
