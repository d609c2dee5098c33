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
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "alloc-count.h"

/* Initial-exec: the malloc wrappers must not reach __tls_get_addr. */
static _Thread_local bool marked __attribute__((tls_model("initial-exec")));
static atomic_bool counting;
static atomic_long count;

static atomic_bool io_counting;
static atomic_long io_count;

static void note_alloc(void)
{
	if (marked && atomic_load(&counting))
		atomic_fetch_add(&count, 1);
}

static __attribute__((unused)) void note_io(void)
{
	if (marked && atomic_load(&io_counting))
		atomic_fetch_add(&io_count, 1);
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

/*
 * Output: the wrappers note the call and forward to the next definition
 * (libc's), found once with dlsym(RTLD_NEXT). They are weak for the same
 * reason as the allocation wrappers.
 */
#define RTL_TEST_IO_HOOKS 1
static struct {
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*vfprintf)(FILE *, const char *, va_list);
	int (*vdprintf)(int, const char *, va_list);
	int (*vfprintf_chk)(FILE *, int, const char *, va_list);
	int (*fputs)(const char *, FILE *);
	int (*puts)(const char *);
	int (*fputc)(int, FILE *);
	int (*putc)(int, FILE *);
	size_t (*fwrite)(const void *, size_t, size_t, FILE *);
} real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/* dlsym() returns an object pointer; POSIX guarantees it converts to a
 * function pointer, ISO C does not say so: copy the bits. */
#define FIND(field, name)                                     \
	do {                                                  \
		void *p_ = dlsym(RTLD_NEXT, name);            \
		memcpy(&real.field, &p_, sizeof(real.field)); \
	} while (0)

static void find_real(void)
{
	FIND(write, "write");
	FIND(writev, "writev");
	FIND(vfprintf, "vfprintf");
	FIND(vdprintf, "vdprintf");
	FIND(vfprintf_chk, "__vfprintf_chk");
	FIND(fputs, "fputs");
	FIND(puts, "puts");
	FIND(fputc, "fputc");
	FIND(putc, "putc");
	FIND(fwrite, "fwrite");
}

#define REAL(name) (pthread_once(&real_once, find_real), real.name)

/* glibc's fortified entry points (declared only under _FORTIFY_SOURCE). */
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);

__attribute__((weak)) ssize_t write(int fd, const void *buf, size_t n)
{
	note_io();
	return REAL(write)(fd, buf, n);
}

__attribute__((weak)) ssize_t writev(int fd, const struct iovec *iov, int n)
{
	note_io();
	return REAL(writev)(fd, iov, n);
}

__attribute__((weak)) int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	note_io();
	return REAL(vfprintf)(f, fmt, ap);
}

__attribute__((weak)) int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int r;

	note_io();
	va_start(ap, fmt);
	r = REAL(vfprintf)(f, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((weak)) int printf(const char *fmt, ...)
{
	va_list ap;
	int r;

	note_io();
	va_start(ap, fmt);
	r = REAL(vfprintf)(stdout, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((weak)) int vprintf(const char *fmt, va_list ap)
{
	note_io();
	return REAL(vfprintf)(stdout, fmt, ap);
}

__attribute__((weak)) int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int r;

	note_io();
	va_start(ap, fmt);
	r = REAL(vdprintf)(fd, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((weak)) int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	note_io();
	va_start(ap, fmt);
	r = REAL(vfprintf_chk)(f, flag, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((weak)) int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	note_io();
	return REAL(vfprintf_chk)(f, flag, fmt, ap);
}

__attribute__((weak)) int fputs(const char *s, FILE *f)
{
	note_io();
	return REAL(fputs)(s, f);
}

__attribute__((weak)) int puts(const char *s)
{
	note_io();
	return REAL(puts)(s);
}

__attribute__((weak)) int fputc(int c, FILE *f)
{
	note_io();
	return REAL(fputc)(c, f);
}

__attribute__((weak)) int putc(int c, FILE *f)
{
	note_io();
	return REAL(putc)(c, f);
}

__attribute__((weak)) size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	note_io();
	return REAL(fwrite)(p, size, n, f);
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

void rtl_test_io_start(void)
{
	atomic_store(&io_count, 0);
	atomic_store(&io_counting, true);
}

long rtl_test_io_stop(void)
{
	atomic_store(&io_counting, false);
	return atomic_load(&io_count);
}

bool rtl_test_io_selftest(void)
{
#ifdef RTL_TEST_IO_HOOKS
	int (*volatile do_fputs)(const char *, FILE *) = fputs;
	bool was_marked = marked;
	FILE *f = fopen("/dev/null", "w");
	long n;

	if (!f)
		return false;
	marked = true;
	rtl_test_io_start();
	do_fputs("x", f);
	n = rtl_test_io_stop();
	marked = was_marked;
	fclose(f);
	return n == 1;
#else
	return false;
#endif
}

long rtl_test_thread_write_syscalls(int tid)
{
	char path[64], line[64];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/io", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "syscw: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
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
