// SPDX-License-Identifier: MIT
/*
 * rtl_telemetry, producer and reader in one process (the object is shared
 * memory all the same): names and the layout's rules, records read back
 * whole and in order, counters and histograms mirrored, a reader that
 * falls behind counting exactly what it missed (beside one that keeps
 * up), the final state a reader
 * keeps after the producer ends, a publish that allocates nothing and
 * makes no system call (a thread in seccomp's strict mode); then a
 * writer and a reader on two threads (also under ThreadSanitizer), every
 * record whole or counted as missed.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include <rtloop/hist.h>
#include <rtloop/stat.h>
#include <rtloop/telemetry.h>

#include "alloc-count.h"

/* A name of this test run's own: runs in parallel never meet. */
static const char *name_of(const char *what)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "test-%d-%s", (int)getpid(), what);
	return buf;
}

static struct rtl_telemetry *make(const char *name, uint32_t capacity)
{
	struct rtl_telemetry_config c = { .size = sizeof(c),
					  .name = name,
					  .capacity = capacity,
					  .label = "the test",
					  .period_ns = 1000000 };
	struct rtl_telemetry *t = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_telemetry_create(&t, &c, &err), 0, "%s", err.msg);
	return t;
}

/* A counter source: two counters in a snapshot of our own. */
#define FAKE_COUNTERS(X) X(alpha, "a") X(beta, "b")
struct fake_counters {
	size_t size;
	FAKE_COUNTERS(RTL_STAT_U64)
};
#define FIELD(n, d) RTL_STAT_FIELD(fake_counters, n, d)
static const struct rtl_stat_field fake_fields[] = { FAKE_COUNTERS(FIELD) };
#undef FIELD
static uint64_t fake_alpha, fake_beta;

static int fake_stats(const void *src, void *snap)
{
	struct fake_counters *c = snap;

	(void)src;
	c->alpha = fake_alpha;
	c->beta = fake_beta;
	return 0;
}

Test(telemetry, names_and_the_layout_have_their_rules)
{
	struct rtl_telemetry_config c = { .size = sizeof(c), .name = "bad/name" };
	struct rtl_telemetry *t = NULL, *t2 = NULL;
	struct rtl_error err = { 0 };

	cr_expect_eq(rtl_telemetry_create(&t, &c, &err), -EINVAL);
	cr_expect(strstr(err.msg, "[A-Za-z0-9_.-]") != NULL, "%s", err.msg);
	c.name = name_of("rules");
	c.capacity = 1000;
	cr_expect_eq(rtl_telemetry_create(&t, &c, &err), -EINVAL, "not a power of two");
	t = make(name_of("rules"), 16);
	c.capacity = 16;
	cr_expect_eq(rtl_telemetry_create(&t2, &c, &err), -EEXIST, "a running producer has it");
	cr_expect(strstr(err.msg, ".replace") != NULL, "%s", err.msg);
	cr_expect_eq(rtl_telemetry_signal(t, "q", 6, "rad", &err), 0);
	cr_expect_eq(rtl_telemetry_signal(t, "f", 1, "N", &err), 1);
	cr_expect_eq(rtl_telemetry_signal(t, "q", 1, NULL, &err), -EEXIST);
	cr_expect_eq(rtl_telemetry_signal(t, "", 1, NULL, &err), -EINVAL);
	cr_expect_eq(rtl_telemetry_signal(t, "zero", 0, NULL, &err), -EINVAL);
	cr_expect_eq(rtl_telemetry_signal(t, "huge", RTL_TELEMETRY_MAX_VALUES, NULL, &err),
		     -ENOSPC);
	cr_expect_eq(rtl_telemetry_find(t, "f"), 1);
	cr_expect_eq(rtl_telemetry_find(t, "g"), -ENOENT);
	cr_assert_eq(rtl_telemetry_start(t, &err), 0, "%s", err.msg);
	cr_expect_eq(rtl_telemetry_signal(t, "late", 1, NULL, &err), -EBUSY);
	cr_expect(strstr(err.msg, "layout is fixed") != NULL, "%s", err.msg);
	rtl_telemetry_destroy(t);
	/* ended: the name is free again */
	t = make(name_of("rules"), 16);
	rtl_telemetry_destroy(t);
}

Test(telemetry, a_reader_waits_for_the_start_then_sees_the_layout)
{
	struct rtl_telemetry *t = make(name_of("layout"), 64);
	struct rtl_telemetry_reader *r = NULL;
	struct rtl_telemetry_info info;
	struct rtl_error err = { 0 };
	const struct rtl_telemetry_signal_info *s;

	cr_expect_eq(rtl_telemetry_reader_create(&r, name_of("nothing"), &err), -ENOENT);
	cr_expect(strstr(err.msg, "no loop publishes") != NULL, "%s", err.msg);
	cr_expect_eq(rtl_telemetry_reader_create(&r, name_of("layout"), &err), -EAGAIN,
		     "not started");
	rtl_telemetry_signal(t, "q", 6, "rad", NULL);
	rtl_telemetry_signal(t, "f", 1, "N", NULL);
	rtl_telemetry_counters(t, "fake", fake_fields, 2, fake_stats, NULL,
			       sizeof(struct fake_counters), NULL);
	cr_assert_eq(rtl_telemetry_start(t, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name_of("layout"), &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_telemetry_reader_info(r, &info), 0);
	cr_expect_str_eq(info.label, "the test");
	cr_expect_eq(info.state, RTL_TELEMETRY_RUNNING);
	cr_expect_eq(info.period_ns, 1000000);
	cr_expect_eq(info.pid, (int64_t)getpid());
	cr_expect_eq(info.capacity, 64);
	cr_expect_eq(info.n_values, 7);
	cr_expect_eq(info.n_signals, 2);
	cr_expect_eq(info.n_counters, 2);
	cr_expect_eq(info.records, 0);
	cr_assert((s = rtl_telemetry_reader_signal(r, 1)) != NULL);
	cr_expect_str_eq(s->name, "f");
	cr_expect_str_eq(s->unit, "N");
	cr_expect_eq(s->first, 6);
	cr_expect_eq(s->count, 1);
	cr_expect(rtl_telemetry_reader_signal(r, 2) == NULL);
	cr_expect_str_eq(rtl_telemetry_reader_counter_name(r, 1), "fake.beta");
	rtl_telemetry_reader_destroy(r);
	rtl_telemetry_destroy(t);
}

Test(telemetry, records_counters_and_histograms_come_through)
{
	struct rtl_telemetry *t = make(name_of("through"), 256);
	static struct rtl_telemetry_record rec[300];
	static struct rtl_hist h, mirror;
	struct rtl_telemetry_reader *r = NULL;
	struct rtl_telemetry_info info;
	uint64_t counters[2];
	int q, f, n;

	rtl_hist_init(&h);
	q = rtl_telemetry_signal(t, "q", 3, "rad", NULL);
	f = rtl_telemetry_signal(t, "f", 1, "N", NULL);
	rtl_telemetry_counters(t, "fake", fake_fields, 2, fake_stats, NULL,
			       sizeof(struct fake_counters), NULL);
	cr_assert_eq(rtl_telemetry_hist(t, "lat", &h, NULL), 0);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name_of("through"), NULL), 0);
	for (int i = 0; i < 200; i++) {
		double v[3] = { i, -i, 0.5 * i };

		rtl_telemetry_set_vec(t, q, v, 3);
		if (i % 2 == 0)
			rtl_telemetry_set(t, f, 0, i * 10.0); /* held between sets */
		rtl_hist_record(&h, 1000 + i);
		fake_alpha = (uint64_t)i;
		fake_beta = (uint64_t)(2 * i);
		rtl_telemetry_publish(t, 1000000 + i, (uint64_t)(500 + i), 42.0 + i * 0.001);
	}
	n = rtl_telemetry_reader_read(r, rec, 300);
	cr_assert_eq(n, 200);
	cr_expect_eq(rtl_telemetry_reader_missed(r), 0);
	for (int i = 0; i < n; i++) {
		cr_expect_eq(rec[i].index, (uint64_t)i);
		cr_expect_eq(rec[i].t_ns, 1000000 + i);
		cr_expect_eq(rec[i].frame, (uint64_t)(500 + i));
		cr_assert_float_eq(rec[i].ctrl_time, 42.0 + i * 0.001, 1e-12);
		cr_expect_eq(rec[i].values[0], i);
		cr_expect_eq(rec[i].values[1], -i);
		cr_expect_eq(rec[i].values[2], 0.5 * i);
		cr_expect_eq(rec[i].values[3], (i - i % 2) * 10.0, "record %d", i);
	}
	cr_expect_eq(rtl_telemetry_reader_read(r, rec, 300), 0, "nothing new");
	cr_assert_eq(rtl_telemetry_reader_counters(r, counters, 2), 2);
	cr_expect_eq(counters[0], 199);
	cr_expect_eq(counters[1], 398);
	/* 200 publishes: three whole passes over the 64 slices */
	rtl_telemetry_reader_info(r, &info);
	cr_expect_eq(info.records, 200);
	cr_expect_eq(info.hist_rounds, 3);
	cr_assert_eq(rtl_telemetry_reader_hist(r, 0, &mirror), 0);
	cr_expect_str_eq(rtl_telemetry_reader_hist_name(r, 0), "lat");
	/* count is in the first slice, copied last by publish 192, which came
	 * after its sample: 193 samples then */
	cr_expect_eq(rtl_hist_count(&mirror), 193,
		     "the count as the last copy of its slice saw it");
	cr_expect_eq(rtl_hist_min(&mirror), 1000);
	rtl_telemetry_reader_destroy(r);
	rtl_telemetry_destroy(t);
}

Test(telemetry, a_reader_behind_by_more_than_the_ring_counts_what_it_missed)
{
	struct rtl_telemetry *t = make(name_of("behind"), 16);
	static struct rtl_telemetry_record rec[64];
	struct rtl_telemetry_reader *r = NULL;
	int n, h;

	h = rtl_telemetry_signal(t, "i", 1, NULL, NULL);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name_of("behind"), NULL), 0);
	rtl_telemetry_reader_seek(r, 0);
	for (int i = 0; i < 50; i++) {
		rtl_telemetry_set(t, h, 0, i);
		rtl_telemetry_publish(t, i, (uint64_t)i, NAN);
	}
	n = rtl_telemetry_reader_read(r, rec, 64);
	cr_expect_eq(n, 16, "the ring's worth");
	cr_expect_eq(rtl_telemetry_reader_missed(r), 34, "50 published, 16 held: 34 gone");
	cr_expect_eq(rec[0].index, 34);
	cr_expect_eq(rec[0].values[0], 34);
	cr_expect(isnan(rec[0].ctrl_time));
	cr_expect_eq(rec[15].values[0], 49);
	/* from now on only */
	rtl_telemetry_reader_seek(r, UINT64_MAX);
	rtl_telemetry_publish(t, 50, 50, NAN);
	n = rtl_telemetry_reader_read(r, rec, 64);
	cr_expect_eq(n, 1);
	cr_expect_eq(rec[0].index, 50);
	rtl_telemetry_reader_destroy(r);
	rtl_telemetry_destroy(t);
}

/* Readers never meet: one that keeps up sees every record while another,
 * behind, counts exactly what it missed; neither moves the other. */
Test(telemetry, readers_at_once_each_see_every_record_or_count_it)
{
	struct rtl_telemetry *t = make(name_of("two"), 16);
	static struct rtl_telemetry_record rec[64];
	struct rtl_telemetry_reader *fast = NULL, *slow = NULL;
	int n, h, bad = 0;
	uint64_t seen = 0;

	h = rtl_telemetry_signal(t, "i", 1, NULL, NULL);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&fast, name_of("two"), NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&slow, name_of("two"), NULL), 0);
	rtl_telemetry_reader_seek(fast, 0);
	rtl_telemetry_reader_seek(slow, 0);
	for (int i = 0; i < 200; i++) {
		rtl_telemetry_set(t, h, 0, i);
		rtl_telemetry_publish(t, i, (uint64_t)i, NAN);
		if (i % 10 == 9) {
			n = rtl_telemetry_reader_read(fast, rec, 64);
			for (int k = 0; k < n; k++)
				if (rec[k].values[0] != (double)seen++)
					bad++;
		}
	}
	cr_expect_eq(seen, 200, "the reader that keeps up sees all 200");
	cr_expect_eq(bad, 0, "in order, each its own value");
	cr_expect_eq(rtl_telemetry_reader_missed(fast), 0);
	n = rtl_telemetry_reader_read(slow, rec, 64);
	cr_expect_eq(n, 16, "the one behind gets the ring's worth");
	cr_expect_eq(rtl_telemetry_reader_missed(slow), 184, "and counts the other 184");
	cr_expect_eq(rec[0].values[0], 184);
	rtl_telemetry_reader_destroy(fast);
	rtl_telemetry_reader_destroy(slow);
	rtl_telemetry_destroy(t);
}

Test(telemetry, the_reader_keeps_the_final_state_after_the_producer_ends)
{
	struct rtl_telemetry *t = make(name_of("ended"), 16);
	struct rtl_telemetry_reader *r = NULL, *r2 = NULL;
	struct rtl_telemetry_info info;
	uint64_t counters[2];
	struct rtl_error err = { 0 };

	rtl_telemetry_counters(t, "fake", fake_fields, 2, fake_stats, NULL,
			       sizeof(struct fake_counters), NULL);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name_of("ended"), NULL), 0);
	fake_alpha = 1;
	rtl_telemetry_publish(t, 1, 1, NAN);
	fake_alpha = 7; /* after the last step: the stop at exit */
	rtl_telemetry_destroy(t);
	rtl_telemetry_reader_info(r, &info);
	cr_expect_eq(info.state, RTL_TELEMETRY_ENDED);
	rtl_telemetry_reader_counters(r, counters, 2);
	cr_expect_eq(counters[0], 7, "the counters once more at the end");
	cr_expect_eq(rtl_telemetry_reader_create(&r2, name_of("ended"), &err), -ENOENT, "unlinked");
	rtl_telemetry_reader_destroy(r);
}

Test(telemetry, publishing_allocates_nothing)
{
	struct rtl_telemetry *t = make(name_of("alloc"), 64);
	static struct rtl_hist h;
	long n;
	int q;

	q = rtl_telemetry_signal(t, "q", 6, "rad", NULL);
	rtl_telemetry_counters(t, "fake", fake_fields, 2, fake_stats, NULL,
			       sizeof(struct fake_counters), NULL);
	rtl_telemetry_hist(t, "lat", &h, NULL);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	cr_assert(rtl_test_alloc_selftest(), "the allocation counter counts (positive control)");
	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int i = 0; i < 1000; i++) {
		rtl_telemetry_set(t, q, (unsigned)(i % 6), i);
		rtl_telemetry_publish(t, i, (uint64_t)i, i * 0.001);
	}
	n = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_expect_eq(n, 0, "%ld allocations in 1000 publishes", n);
	cr_expect_eq(rtl_telemetry_records(t), 1000);
	rtl_telemetry_destroy(t);
}

/* ---- no system call: seccomp's strict mode ---------------------------------------------- */

struct strict {
	struct rtl_telemetry *t;
	int q;
	bool control;	      /* make one system call after the publishes */
	_Atomic bool through; /* set after the publishes (and the control's call) */
};

/*
 * In seccomp's strict mode the kernel kills the thread at any system call
 * but read, write, _exit and sigreturn: a thread that gets through 1000
 * publishes proves none made one (a lock that had to wait would, as a
 * futex). It leaves by the raw exit call, the one way out the mode allows.
 */
static void *strict_publisher(void *arg)
{
	struct strict *a = arg;

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
		_exit(3);
	for (int i = 0; i < 1000; i++) {
		rtl_telemetry_set(a->t, a->q, (unsigned)(i % 6), i);
		rtl_telemetry_publish(a->t, i, (uint64_t)i, i * 0.001);
	}
	if (a->control)
		syscall(SYS_getpid); /* the positive control: killed here */
	atomic_store(&a->through, true);
	syscall(SYS_exit, 0);
	return NULL;
}

/* In a child process: a telemetry published from a strict thread. Returns
 * the child's exit status: 0 the thread got through, 7 it was killed. */
static int strict_run(bool control)
{
	pid_t pid = fork();
	int status = 0;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static struct rtl_hist h;
		struct rtl_telemetry_config c = { .size = sizeof(c),
						  .name = name_of(control ? "strict-c" : "strict"),
						  .capacity = 64 };
		struct strict a = { .control = control };
		pthread_t th;

		if (rtl_telemetry_create(&a.t, &c, NULL) < 0)
			_exit(4);
		a.q = rtl_telemetry_signal(a.t, "q", 6, "rad", NULL);
		rtl_telemetry_counters(a.t, "fake", fake_fields, 2, fake_stats, NULL,
				       sizeof(struct fake_counters), NULL);
		rtl_telemetry_hist(a.t, "lat", &h, NULL);
		if (rtl_telemetry_start(a.t, NULL) < 0 ||
		    pthread_create(&th, NULL, strict_publisher, &a) != 0)
			_exit(5);
		pthread_join(th, NULL);
		status = !atomic_load(&a.through) ? 7 : rtl_telemetry_records(a.t) == 1000 ? 0 : 6;
		rtl_telemetry_destroy(a.t);
		_exit(status);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

Test(telemetry, publishing_makes_no_system_call)
{
	int st;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	cr_skip_test("a sanitizer's runtime makes system calls of its own in the thread");
#endif
	st = strict_run(true);
	cr_assert(
		WIFEXITED(st) && WEXITSTATUS(st) == 7,
		"the positive control: a system call in strict mode kills the thread (status %#x)",
		st);
	st = strict_run(false);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "1000 publishes in strict mode: no system call (status %#x; 7: the thread was "
		  "killed at one)",
		  st);
}

/* docs/telemetry.md's record, byte for byte, where the format says it is. */
Test(telemetry, the_record_of_the_docs_is_what_is_in_the_object)
{
	static const unsigned char want[40] = {
		0x02, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, 0xf4, 0x01, 0,    0, 0,
		0,    0, 0, 0, 0, 0, 0, 0, 0x40, 0x45, 0x40, 0, 0, 0, 0, 0, 0,	  0x24, 0x40,
	};
	struct rtl_telemetry *t = make(name_of("bytes"), 16);
	unsigned char hdr[96], got[40];
	char path[128];
	uint64_t records_off;
	uint32_t record_size;
	int fd, f;

	f = rtl_telemetry_signal(t, "f", 1, NULL, NULL);
	cr_assert_eq(rtl_telemetry_start(t, NULL), 0);
	rtl_telemetry_set(t, f, 0, 10.0);
	rtl_telemetry_publish(t, 1000000, 500, 42.5);
	snprintf(path, sizeof(path), "/dev/shm/rtloop-%s", name_of("bytes"));
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0, "%s", path);
	cr_assert_eq(pread(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	cr_expect(memcmp(hdr, "RTLTELE", 8) == 0, "the magic at 0");
	memcpy(&record_size, hdr + 28, 4);
	memcpy(&records_off, hdr + 88, 8);
	cr_expect_eq(record_size, 40, "8 x (4 + 1 value)");
	cr_assert_eq(pread(fd, got, sizeof(got), (off_t)records_off), (ssize_t)sizeof(got));
	close(fd);
	cr_expect(memcmp(got, want, sizeof(want)) == 0, "record 0 as docs/telemetry.md shows it");
	rtl_telemetry_destroy(t);
}

/* ---- a writer and a reader on two threads -------------------------------------------------- */

#define N_RECORDS 200000
static struct rtl_telemetry *shared;
static int shared_h;

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N_RECORDS; i++) {
		for (unsigned k = 0; k < 4; k++)
			rtl_telemetry_set(shared, shared_h, k, i);
		rtl_telemetry_publish(shared, i, (uint64_t)i, (double)i);
	}
	return NULL;
}

Test(telemetry, a_reader_beside_the_writer_gets_whole_records_or_counts_them_missed)
{
	static struct rtl_telemetry_record rec[64];
	struct rtl_telemetry_reader *r = NULL;
	uint64_t missed = 0, got = 0, torn = 0, out_of_order = 0, last = 0;
	bool first = true;
	pthread_t w;

	shared = make(name_of("threads"), 256);
	shared_h = rtl_telemetry_signal(shared, "v", 4, NULL, NULL);
	cr_assert_eq(rtl_telemetry_start(shared, NULL), 0);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name_of("threads"), NULL), 0);
	rtl_telemetry_reader_seek(r, 0);
	cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
	/* bounded: the writer ends, and then the reader drains the ring */
	while (got + (missed = rtl_telemetry_reader_missed(r)) < N_RECORDS) {
		int n = rtl_telemetry_reader_read(r, rec, 64);

		for (int i = 0; i < n; i++) {
			for (unsigned k = 0; k < 4; k++)
				if (rec[i].values[k] != (double)rec[i].index)
					torn++;
			if (rec[i].frame != rec[i].index ||
			    rec[i].ctrl_time != (double)rec[i].index)
				torn++;
			if (!first && rec[i].index <= last)
				out_of_order++;
			last = rec[i].index;
			first = false;
		}
		got += (uint64_t)n;
		if (n == 0)
			sched_yield();
	}
	pthread_join(w, NULL);
	cr_expect_eq(torn, 0, "a record mixed two writes");
	cr_expect_eq(out_of_order, 0);
	cr_expect_eq(got + missed, N_RECORDS, "read %llu + missed %llu", (unsigned long long)got,
		     (unsigned long long)missed);
	cr_expect_gt(got, 0);
	rtl_telemetry_reader_destroy(r);
	rtl_telemetry_destroy(shared);
}
