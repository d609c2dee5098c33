/* SPDX-License-Identifier: MIT */
/*
 * Allocation counting for the "the hot path allocates nothing" tests.
 *
 * Only threads that marked themselves count, into one process-wide counter
 * that is zero and off until rtl_test_alloc_start(). Tests mark the test
 * thread, or the threads under test from inside them (the rx thread in a
 * transport callback, the worker in its step function), so that whatever
 * Criterion's or the libraries' other threads do never counts.
 *
 * A zero means something only if the counter sees a real allocation from a
 * marked thread: run rtl_test_alloc_selftest() first (the positive control).
 * Under ASan, TSan and MSan the sanitizer owns malloc and the counting goes
 * through its hook interface; in plain glibc builds alloc-count.c
 * interposes malloc, calloc and realloc (see there).
 */
#ifndef RTL_TEST_ALLOC_COUNT_H
#define RTL_TEST_ALLOC_COUNT_H

#include <stdbool.h>

/*
 * Set up counting: install the sanitizer hooks where needed (once per
 * process; later calls are no-ops). Returns false if counting cannot work
 * in this build (the test should fail, not pass vacuously).
 */
bool rtl_test_alloc_init(void);

/* Allocations of the calling thread count from now on (thread-local flag). */
void rtl_test_alloc_mark_thread(void);
/* ... and no longer. */
void rtl_test_alloc_unmark_thread(void);

/* Zero the counter and start counting the marked threads. */
void rtl_test_alloc_start(void);
/* Stop counting; returns the allocations counted since the start. */
long rtl_test_alloc_stop(void);

/*
 * The positive control: one malloc from the calling thread, marked for the
 * duration (its mark is restored after), must count exactly once. Calls
 * rtl_test_alloc_init(). Run it while no other marked thread allocates and
 * before rtl_test_alloc_start() (it uses the counter).
 */
bool rtl_test_alloc_selftest(void);

/*
 * The same for output: stdio calls (fprintf, vfprintf, printf, fputs,
 * puts, fputc, putc, fwrite, dprintf and the _chk variants) and write(2)
 * and writev(2) of the marked threads, counted between start and stop.
 * Plain glibc builds only (under a sanitizer the selftest fails: the test
 * must not pass vacuously).
 */
void rtl_test_io_start(void);
long rtl_test_io_stop(void);
/* One fputs from the calling thread, marked, must count exactly once. */
bool rtl_test_io_selftest(void);

/* write(2)-family system calls of thread @tid of this process so far, from
 * the kernel's accounting (/proc/self/task/TID/io, syscw), or -1. Catches
 * what the stdio hooks cannot: a write made inside libc. */
long rtl_test_thread_write_syscalls(int tid);

#endif /* RTL_TEST_ALLOC_COUNT_H */
