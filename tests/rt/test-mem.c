// SPDX-License-Identifier: MIT
/* Memory locking, pre-faulting and placement. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rtloop/mem.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* AddressSanitizer intercepts mlockall and makes it a no-op that succeeds. */
static void require_real_mlock(void)
{
#ifdef UNDER_ASAN
	cr_skip_test("mlockall is a no-op under AddressSanitizer");
#endif
}

Test(mem, lock_all_locks_the_process)
{
	struct rtl_error err;
	int ret;

	require_real_mlock();
	ret = rtl_mem_lock_all(&err);

	if (ret == -EPERM || ret == -ENOMEM)
		cr_skip_test("memory locking not permitted here: %s", err.msg);
	cr_assert_eq(ret, 0);
	cr_assert_eq(err.code, 0);
	cr_assert(rtl_mem_is_locked());
	cr_assert_eq(rtl_mem_unlock_all(), 0);
	cr_assert_not(rtl_mem_is_locked());
}

Test(mem, refused_lock_names_the_limit_and_fix)
{
	struct rlimit zero = { 0, 0 };
	struct rtl_error err;
	int ret;

	require_real_mlock();
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &zero), 0);
	if (geteuid() == 0)
		cr_assert_eq(setuid(65534), 0);
	ret = rtl_mem_lock_all(&err);
	cr_assert(ret == -EPERM || ret == -ENOMEM, "got %d", ret);
	cr_assert_eq(err.code, ret);
	cr_assert(strstr(err.msg, "RLIMIT_MEMLOCK is 0 KiB"), "%s", err.msg);
	cr_assert(strstr(err.msg, "CAP_IPC_LOCK"), "%s", err.msg);
	cr_assert_not(rtl_mem_is_locked());
}

Test(mem, alloc_is_zeroed_and_prefaulted)
{
	size_t size = 4 << 20;
	unsigned char *p = NULL;
	int64_t before, after;

	cr_assert_eq(rtl_mem_alloc((void **)&p, size, -1), 0);
	cr_assert_not_null(p);
	before = rtl_mem_thread_minor_faults();
	cr_assert_geq(before, 0);
	/* Touch every page for reading and writing: all were faulted in
	 * already, so the thread takes (almost) no new faults. */
	for (size_t i = 0; i < size; i += 4096) {
		cr_assert_eq(p[i], 0);
		p[i] = 1;
	}
	after = rtl_mem_thread_minor_faults();
	cr_assert_lt(after - before, 8, "%lld faults touching 1024 pre-faulted pages",
		     (long long)(after - before));
	rtl_mem_free(p, size);
	rtl_mem_free(NULL, 0);
}

Test(mem, fresh_mmap_does_fault_so_the_fault_counter_works)
{
	size_t size = 4 << 20;
	unsigned char *p =
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int64_t before = rtl_mem_thread_minor_faults();

	for (size_t i = 0; i < size; i += 4096)
		p[i] = 1;
	cr_assert_gt(rtl_mem_thread_minor_faults() - before, 100);
	munmap(p, size);
}

Test(mem, alloc_rejects_bad_arguments)
{
	void *p;

	cr_assert_eq(rtl_mem_alloc(NULL, 64, -1), -EINVAL);
	cr_assert_eq(rtl_mem_alloc(&p, 0, -1), -EINVAL);
	cr_assert_eq(rtl_mem_alloc(&p, 64, rtl_mem_numa_nodes()), -EINVAL);
	cr_assert_eq(rtl_mem_alloc(&p, 64, -2), -EINVAL);
}

Test(mem, alloc_on_node_zero)
{
	void *p = NULL;

	cr_assert_eq(rtl_mem_alloc(&p, 1 << 16, 0), 0);
	rtl_mem_free(p, 1 << 16);
	cr_assert_geq(rtl_mem_numa_nodes(), 1);
	cr_assert_eq(rtl_mem_cpu_node(0), 0);
	cr_assert_eq(rtl_mem_cpu_node(-1), -EINVAL);
	cr_assert_eq(rtl_mem_cpu_node(100000), -EINVAL);
}

Test(mem, prefault_stack_within_and_beyond_the_stack)
{
	cr_assert_eq(rtl_mem_prefault_stack(0), 0);
	cr_assert_eq(rtl_mem_prefault_stack(128 * 1024), 0);
	cr_assert_eq(rtl_mem_prefault_stack((size_t)1 << 40), -E2BIG);
}
