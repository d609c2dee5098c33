// SPDX-License-Identifier: MIT
/*
 * Allocation counting for tests (see alloc-count.h).
 *
 * Design. A thread counts only once it marked itself (a thread-local flag),
 * and only between rtl_test_alloc_start() and rtl_test_alloc_stop(); the
 * counter is one process-wide atomic, so threads other than the test's own
 * (an rx thread, a worker) count too, and the test reads their sum.
 *
 * Under ASan, TSan or MSan the sanitizer owns malloc: we install its malloc
 * hook, once per process (a second install would count every allocation
 * twice, which the positive control would catch). It sees every allocation
 * call, aligned ones and strdup included.
 *
 * Otherwise (glibc) this file defines malloc, calloc and realloc, which note
 * the call and forward to glibc's __libc_* entry points; free needs no
 * wrapper. They are in this object, next to the API, so that a test using
 * any of the functions below links them in. They are weak so that a test
 * file bringing its own copy still links; the positive control then fails
 * if that copy, not this one, is in effect (it does not count here).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "alloc-count.h"

/* Initial-exec: the malloc wrappers must not reach __tls_get_addr. */
static _Thread_local bool marked __attribute__((tls_model("initial-exec")));
static atomic_bool counting;
static atomic_long count;

static void note_alloc(void)
{
	if (marked && atomic_load(&counting))
		atomic_fetch_add(&count, 1);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RTL_TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define RTL_TEST_SANITIZER 1
#endif
#endif

#ifdef RTL_TEST_SANITIZER
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));

static void san_malloc_hook(const volatile void *p, size_t n)
{
	note_alloc();
}

static void san_free_hook(const volatile void *p)
{
}

static bool hooked;

static void install_hooks(void)
{
	hooked = __sanitizer_install_malloc_and_free_hooks(san_malloc_hook, san_free_hook) != 0;
}

bool rtl_test_alloc_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_hooks);
	return hooked;
}
#elif defined(__GLIBC__)
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);

__attribute__((weak)) void *malloc(size_t n)
{
	note_alloc();
	return __libc_malloc(n);
}

__attribute__((weak)) void *calloc(size_t k, size_t n)
{
	note_alloc();
	return __libc_calloc(k, n);
}

__attribute__((weak)) void *realloc(void *p, size_t n)
{
	note_alloc();
	return __libc_realloc(p, n);
}

bool rtl_test_alloc_init(void)
{
	return true;
}
#else
/* No sanitizer and no glibc: nothing to count with. */
bool rtl_test_alloc_init(void)
{
	return false;
}
#endif

void rtl_test_alloc_mark_thread(void)
{
	marked = true;
}

void rtl_test_alloc_unmark_thread(void)
{
	marked = false;
}

void rtl_test_alloc_start(void)
{
	atomic_store(&count, 0);
	atomic_store(&counting, true);
}

long rtl_test_alloc_stop(void)
{
	atomic_store(&counting, false);
	return atomic_load(&count);
}

bool rtl_test_alloc_selftest(void)
{
	/* Through a volatile pointer, and the result escapes: the compiler
	 * may elide neither the call nor the malloc/free pair. */
	void *(*volatile do_malloc)(size_t) = malloc;
	bool was_marked = marked;
	long n;
	void *p;

	if (!rtl_test_alloc_init())
		return false;
	marked = true;
	rtl_test_alloc_start();
	p = do_malloc(24);
	__asm__ volatile("" : : "r"(p) : "memory");
	n = rtl_test_alloc_stop();
	marked = was_marked;
	free(p);
	return n == 1;
}
