// SPDX-License-Identifier: MIT
/*
 * The control loop against an in-memory transport: frames are 16-byte
 * records (sequence, value) written by the test into a socketpair; commands
 * are one double, sent (to a counter) only when it changed. Every assertion
 * is an identity the loop must keep whatever the timing: frames are counted
 * once, as stepped, skipped or dropped; the watchdog fires once per stall;
 * nothing on the hot path allocates or faults.
 *
 * The file uses only the Criterion macros the TSan shim provides, so the
 * same tests run under ThreadSanitizer (suite "stress").
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <math.h>
#include <dirent.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/loop.h>
#include <rtloop/telemetry.h>
#include <rtloop/mem.h>
#include <rtloop/time.h>

#include "alloc-count.h"
#include "loop-modes.h"

#define PERIOD_NS (2 * RTL_NS_PER_MS)

struct wire {
	uint64_t seq;
	double value;
};

/* The rx thread and the worker mark themselves, from inside, for the malloc
 * count (tests/common/alloc-count.h). */
static _Atomic bool hot_seen[2];

static void note_hot_thread(int which)
{
	rtl_test_alloc_mark_thread();
	atomic_store(&hot_seen[which], true);
}

/* ---- the fake transport ---------------------------------------------------- */

/*
 * The fake keeps the contract of <rtloop/loop.h> as a real transport must:
 * the step writes fk.cmd (its commands) and only check() and send() read
 * it; the safe package is built at connect from fk.safe_value into storage
 * of its own (checked there) and send_safe() sends exactly that; recv()
 * waits at most the receive slice. Every value that goes on the "wire" is
 * logged, so the tests can look at all of it.
 */
#define WIRE_LOG 8192

/* A step is running: the fake's connect() counts what it overlaps. */
static _Atomic int step_running;
static _Atomic int connect_overlaps;

struct fake {
	/* Atomic: the rx thread replaces them on reconnect while the test
	 * thread writes to the peer and stops the loop. */
	_Atomic int fd;	  /* loop side of the socketpair */
	_Atomic int peer; /* test side */
	unsigned char buf[4096];
	size_t have, used;
	double cmd;	    /* what the step writes */
	double last_sent;   /* what was last sent (transmit side) */
	double safe_value;  /* configuration: the safe command */
	double safe_pkg;    /* the safe package, built at connect */
	bool resend;	    /* a safe package went out: send() re-sends */
	int64_t ctrl_wd_ns; /* what connect() says the controller's watchdog is */
	_Atomic int sends, safe_sends, connects;
	_Atomic int stall_ms;	   /* the step sleeps this long once */
	_Atomic uint64_t break_at; /* next() reports the stream broken at this frame */
	int64_t rx_faults_at[2];
	_Atomic uint64_t rx_frames;
	/* The wire: every value sent, and whether it was the safe package. */
	_Atomic uint32_t n_wire;
	double wire[WIRE_LOG];
	bool wire_safe[WIRE_LOG];
};

static void wire_put(struct fake *f, double v, bool safe)
{
	uint32_t n = atomic_load_explicit(&f->n_wire, memory_order_relaxed);

	if (n < WIRE_LOG) {
		f->wire[n] = v;
		f->wire_safe[n] = safe;
		/* release: the entry is written before the count says so. */
		atomic_store_explicit(&f->n_wire, n + 1, memory_order_release);
	}
}

static int fake_connect(struct rtl_transport *t, struct rtl_error *err)
{
	struct fake *f = t->impl;
	struct timeval slice = { .tv_usec = RTL_TRANSPORT_RX_SLICE_NS / 1000 };
	int sv[2];

	if (!isfinite(f->safe_value))
		return rtl_error_set(err, -EDOM, "fake: the safe value is not finite");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -errno;
	if (f->peer >= 0)
		close(f->peer); /* the last connection's, shut down already */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof(slice));
	f->fd = sv[0];
	f->peer = sv[1];
	f->have = f->used = 0;
	f->last_sent = NAN;
	f->safe_pkg = f->safe_value;
	t->values_size = sizeof(struct wire);
	t->period_ns = PERIOD_NS;
	t->ctrl_watchdog_ns = f->ctrl_wd_ns;
	atomic_fetch_add(&f->connects, 1);
	/* A step running now would see the transport change under it: the
	 * loop must have parked it. Give a racing step time to show. */
	for (int i = 0; i < 5 && atomic_load(&f->connects) > 1; i++) {
		if (atomic_load(&step_running))
			atomic_fetch_add(&connect_overlaps, 1);
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	}
	return 0;
}

static int fake_recv(struct rtl_transport *t)
{
	struct fake *f = t->impl;
	ssize_t n;

	if (f->used == f->have)
		f->used = f->have = 0;
	n = recv(f->fd, f->buf + f->have, sizeof(f->buf) - f->have, 0);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	f->have += (size_t)n;
	return (int)n;
}

static int fake_next(struct rtl_transport *t, struct rtl_loop_frame *fr, size_t cap)
{
	struct fake *f = t->impl;
	uint64_t n;

	if (f->have - f->used < sizeof(struct wire))
		return 0;
	if (atomic_load(&f->break_at) &&
	    atomic_load_explicit(&f->rx_frames, memory_order_relaxed) + 1 >=
		    atomic_load(&f->break_at))
		return -EPROTO;
	memcpy(fr->values, f->buf + f->used, sizeof(struct wire));
	f->used += sizeof(struct wire);
	fr->size = sizeof(struct wire);
	fr->ctrl_time = NAN;
	fr->ctrl_skipped = 0;
	fr->kernel_rx_ns = 0;
	n = atomic_load_explicit(&f->rx_frames, memory_order_relaxed) + 1;
	if (n == 1)
		note_hot_thread(0);
	atomic_store_explicit(&f->rx_frames, n, memory_order_relaxed);
	/* Sample the rx thread's page faults at frames 200 and 5200. */
	if (n == 200)
		f->rx_faults_at[0] = rtl_mem_thread_minor_faults();
	if (n == 5200)
		f->rx_faults_at[1] = rtl_mem_thread_minor_faults();
	return 1;
}

static int fake_send(struct rtl_transport *t, int64_t now)
{
	struct fake *f = t->impl;

	if (f->cmd == f->last_sent && !f->resend)
		return 0;
	f->last_sent = f->cmd;
	f->resend = false;
	wire_put(f, f->cmd, false);
	atomic_fetch_add(&f->sends, 1);
	return 8;
}

static int fake_send_safe(struct rtl_transport *t)
{
	struct fake *f = t->impl;

	wire_put(f, f->safe_pkg, true);
	f->resend = true;
	atomic_fetch_add(&f->safe_sends, 1);
	return 8;
}

static int fake_check(struct rtl_transport *t, char *why, size_t len)
{
	struct fake *f = t->impl;

	if (!isfinite(f->cmd)) {
		snprintf(why, len, "command is not finite");
		return -EDOM;
	}
	return 0;
}

static bool fake_at_rest(struct rtl_transport *t, const struct rtl_loop_frame *fr)
{
	struct wire w;

	(void)t;
	memcpy(&w, fr->values, sizeof(w));
	return w.value == 0;
}

static void fake_disconnect(struct rtl_transport *t)
{
	struct fake *f = t->impl;

	/* The peer is the test's: shut down (the "controller" sees the
	 * connection end), closed when no test thread can use it any more
	 * (the next connect, or the next test). */
	if (f->fd >= 0)
		close(f->fd);
	if (f->peer >= 0)
		shutdown(f->peer, SHUT_RDWR);
	f->fd = -1;
}

static const struct rtl_transport_ops fake_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "fake",
	.connect = fake_connect,
	.recv = fake_recv,
	.next = fake_next,
	.send = fake_send,
	.send_safe = fake_send_safe,
	.check = fake_check,
	.disconnect = fake_disconnect,
};

/* The same, with at_rest(): the stop at exit waits for a rest frame. */
static struct rtl_transport_ops fake_rest_ops;

static struct fake fk;
static struct rtl_transport tr;
/* Run the step on the rx thread (rtl_loop_config.inline_step): the tests
 * below that hold in both modes run twice, as loop/ and loop_inline/. */
static bool inline_mode;

static void fake_setup(void)
{
	/* An earlier test's peer (the shim runs every test in one process). */
	if (fk.peer > 0)
		close(fk.peer);
	memset(&fk, 0, sizeof(fk));
	fk.fd = fk.peer = -1;
	fk.safe_value = -1.0;
	atomic_store(&hot_seen[0], false);
	atomic_store(&hot_seen[1], false);
	fake_rest_ops = fake_ops;
	fake_rest_ops.at_rest = fake_at_rest;
	tr = (struct rtl_transport){
		.size = sizeof(tr), .ops = &fake_ops, .impl = &fk, .commands = &fk.cmd
	};
}

/* Nothing non-finite ever went on the fake's wire, and every safe entry
 * is the safe package exactly. (After the loop has joined.) */
static void expect_clean_wire(void)
{
	uint32_t n = atomic_load(&fk.n_wire);

	for (uint32_t i = 0; i < n; i++) {
		cr_expect(isfinite(fk.wire[i]), "wire entry %u is %g", i, fk.wire[i]);
		if (fk.wire_safe[i])
			cr_expect_eq(fk.wire[i], fk.safe_value, "safe entry %u is %g", i,
				     fk.wire[i]);
	}
}

/* Write @n frames, one every @gap_ns (0: as fast as the socket takes them). */
static void feed(uint64_t first, uint64_t n, int64_t gap_ns)
{
	int64_t next = rtl_time_now();

	for (uint64_t i = 0; i < n; i++) {
		struct wire w = { first + i, (double)(first + i) };

		if (gap_ns) {
			next += gap_ns;
			rtl_time_sleep_until(next);
		}
		if (send(fk.peer, &w, sizeof(w), MSG_NOSIGNAL) != (ssize_t)sizeof(w))
			break;
	}
}

/* Wait (bounded) until the loop has taken in @frames frames. */
static void settle(struct rtl_loop *loop, uint64_t frames)
{
	int64_t end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	struct rtl_loop_counters s = { .size = sizeof(s) };

	do {
		rtl_loop_stats(loop, &s);
		if (s.frames >= frames && s.steps + s.worker_skipped + s.ring_full >= frames)
			break;
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	} while (rtl_time_now() < end);
	/* The last step may still be sending: give it a moment. */
	rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
}

/* ---- step functions ----------------------------------------------------------------- */

struct seen {
	uint64_t steps;
	uint64_t out_of_order;
	uint64_t last_seq;
	bool any;
	int64_t worker_faults_at[2];
	int stop_at;
	bool write_nan;
	bool constant;	   /* write 0.5 every step */
	int step_sleep_us; /* every step takes this long */
};

static struct seen sn;

static int step_record(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct seen *s = user;
	struct wire w;
	int stall = atomic_exchange(&fk.stall_ms, 0);

	memcpy(&w, f->values, sizeof(w));
	if (s->any && w.seq <= s->last_seq)
		s->out_of_order++;
	s->any = true;
	s->last_seq = w.seq;
	s->steps++;
	if (s->steps == 1)
		note_hot_thread(1);
	if (s->steps == 200)
		s->worker_faults_at[0] = rtl_mem_thread_minor_faults();
	if (s->steps == 5200)
		s->worker_faults_at[1] = rtl_mem_thread_minor_faults();
	atomic_store(&step_running, 1);
	if (stall)
		rtl_time_sleep_until(rtl_time_now() + stall * RTL_NS_PER_MS);
	if (s->step_sleep_us)
		rtl_time_sleep_until(rtl_time_now() + s->step_sleep_us * RTL_NS_PER_US);
	*(double *)rtl_loop_commands(loop) = s->write_nan  ? NAN
					     : s->constant ? 0.5
							   : (double)(w.seq / 10);
	atomic_store(&step_running, 0);
	if (s->stop_at && s->steps == (uint64_t)s->stop_at)
		return -ECANCELED;
	return 0;
}

/* The tests' loop: the fake transport, step_record, plain threads, no
 * pinning, no watchdog, the mode the test runs in. */
static struct rtl_loop_config test_config(void)
{
	return (struct rtl_loop_config){
		.size = sizeof(struct rtl_loop_config),
		.transport = &tr,
		.step = step_record,
		.user = &sn,
		.rt_mode = RTL_LOOP_RT_OFF,
		.watchdog_periods = -1,
		.inline_step = inline_mode,
	};
}

/* Create and start a loop for @cfg over the fake as it is set up now. */
static struct rtl_loop *launch_prepared(const struct rtl_loop_config *cfg)
{
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	atomic_store(&connect_overlaps, 0);
	cr_assert_eq(rtl_loop_create(&loop, cfg, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(loop, &err), 0, "%s", err.msg);
	return loop;
}

/* Fresh fake and step records, then create and start a loop for @cfg. */
static struct rtl_loop *launch(const struct rtl_loop_config *cfg)
{
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	memset(&sn, 0, sizeof(sn));
	fake_setup();
	atomic_store(&connect_overlaps, 0);
	cr_assert_eq(rtl_loop_create(&loop, cfg, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(loop, &err), 0, "%s", err.msg);
	return loop;
}

static struct rtl_loop *start_loop(bool every, uint32_t ring, enum rtl_loop_rt_mode mode)
{
	struct rtl_loop_config cfg = test_config();

	cfg.rt_mode = mode;
	cfg.ring_capacity = ring;
	cfg.every_frame = every;
	return launch(&cfg);
}

/* Stop and join: after this the test may read what the threads wrote
 * (join orders it), then read the stats. */
static void halt(struct rtl_loop *loop, struct rtl_loop_counters *s)
{
	rtl_loop_stop(loop);
	cr_expect_eq(rtl_loop_join(loop), 0);
	rtl_loop_stats(loop, s);
	expect_clean_wire();
}

/* ---- tests --------------------------------------------------------------------------- */

static void every_frame_steps_each_frame_in_order(void)
{
	struct rtl_loop *loop = start_loop(true, 1024, RTL_LOOP_RT_OFF);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	feed(0, 2000, 0);
	settle(loop, 2000);
	halt(loop, &s);
	cr_expect_eq(s.frames, 2000);
	cr_expect_eq(s.ring_full + s.steps, 2000, "every frame is stepped or counted as dropped");
	cr_expect_eq(s.worker_skipped, 0);
	cr_expect_eq(sn.out_of_order, 0);
	cr_expect_eq(s.steps, sn.steps);
	/* Commands change every 10 frames: coalescing sends at most one per
	 * ten frames (frames dropped on a full ring take no change away). */
	/* Every step ends one way: sent, nothing changed, or (on a loaded
	 * host) the stop came first or the transmit side was busy. */
	cr_expect_eq(s.sends + s.suppressed + s.after_stop + s.would_block + s.stale + s.rejected,
		     s.steps, "%llu sends, %llu suppressed, %llu after the stop, %llu would block",
		     (unsigned long long)s.sends, (unsigned long long)s.suppressed,
		     (unsigned long long)s.after_stop, (unsigned long long)s.would_block);
	cr_expect_eq(s.stale + s.rejected, 0);
	cr_expect_eq((uint64_t)fk.sends, s.sends);
	cr_expect(s.sends <= 2000 / 10 + 1, "%llu sends", (unsigned long long)s.sends);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, every_frame_steps_each_frame_in_order, inline_mode)

/* A capture: the step's frame number into signal 0 (what a state field's
 * capture does with a frame's values). */
static void capture_seq(void *user, struct rtl_telemetry *t, struct rtl_loop *loop,
			const struct rtl_loop_frame *f)
{
	(void)user;
	(void)loop;
	rtl_telemetry_set(t, 0, 0, (double)f->seq);
}

/* With telemetry, a record after each step: every step's frame, in order,
 * the capture's value from it, and the loop's counters mirrored, their
 * final values once the telemetry ends. */
static void telemetry_publishes_a_record_per_step(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_telemetry_config tc = { .size = sizeof(tc), .capacity = 4096 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	static struct rtl_telemetry_record rec[4096];
	struct rtl_telemetry *tel = NULL;
	struct rtl_telemetry_reader *r = NULL;
	struct rtl_telemetry_info info;
	char name[64];
	uint64_t counters[RTL_TELEMETRY_MAX_COUNTERS];
	size_t n_fields;
	const struct rtl_stat_field *fields = rtl_loop_counter_fields(&n_fields);
	struct rtl_loop *loop;
	int n, bad = 0;

	snprintf(name, sizeof(name), "test-loop-%d-%d", (int)getpid(), inline_mode);
	tc.name = name;
	cr_assert_eq(rtl_telemetry_create(&tel, &tc, NULL), 0);
	cr_assert_eq(rtl_telemetry_signal(tel, "seq", 1, NULL, NULL), 0);
	cr_assert_eq(rtl_telemetry_capture(tel, capture_seq, NULL, NULL), 0);
	cfg.telemetry = tel;
	cfg.every_frame = true;
	cfg.ring_capacity = 1024;
	loop = launch(&cfg);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name, NULL), 0, "started with the loop");
	feed(0, 1000, 0);
	settle(loop, 1000);
	halt(loop, &s);
	n = rtl_telemetry_reader_read(r, rec, 4096);
	cr_expect_eq((uint64_t)n, s.steps, "a record per step");
	cr_expect_eq(rtl_telemetry_reader_missed(r), 0);
	for (int i = 0; i < n; i++)
		if (rec[i].values[0] != (double)rec[i].frame ||
		    (i && rec[i].frame <= rec[i - 1].frame))
			bad++;
	cr_expect_eq(bad, 0, "each record holds its step's frame, in order");
	rtl_loop_destroy(loop);
	rtl_telemetry_destroy(tel);
	rtl_telemetry_reader_info(r, &info);
	cr_expect_eq(info.state, RTL_TELEMETRY_ENDED);
	cr_expect_eq(info.n_hists, RTL_LOOP_H_COUNT);
	cr_assert_eq(rtl_telemetry_reader_counters(r, counters, RTL_TELEMETRY_MAX_COUNTERS),
		     (int)n_fields);
	for (size_t i = 0; i < n_fields; i++) {
		char want[64];

		snprintf(want, sizeof(want), "loop.%s", fields[i].name);
		cr_expect_str_eq(rtl_telemetry_reader_counter_name(r, (unsigned)i), want);
		cr_expect_eq(counters[i], rtl_stat_value(&s, &fields[i]), "%s", want);
	}
	rtl_telemetry_reader_destroy(r);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, telemetry_publishes_a_record_per_step, inline_mode)

static void newest_only_counts_every_skipped_frame(void)
{
	struct rtl_loop *loop = start_loop(false, 256, RTL_LOOP_RT_OFF);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	atomic_store(&fk.stall_ms, 30); /* the first step stalls: frames pile up */
	feed(0, 200, 0);
	settle(loop, 200);
	halt(loop, &s);
	cr_expect_eq(s.frames, 200);
	cr_expect_eq(s.steps + s.worker_skipped + s.ring_full, 200,
		     "each frame is stepped, skipped or dropped: exactly once");
	cr_expect(s.worker_skipped > 0, "the stall made the worker skip");
	cr_expect_eq(sn.out_of_order, 0);
	cr_expect_eq(sn.last_seq, 199, "the newest frame is always taken");
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, newest_only_counts_every_skipped_frame, inline_mode)

static void full_ring_drops_are_counted(void)
{
	struct rtl_loop *loop = start_loop(true, 4, RTL_LOOP_RT_OFF);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	atomic_store(&fk.stall_ms, 50);
	feed(0, 100, 0);
	settle(loop, 100);
	halt(loop, &s);
	cr_expect_eq(s.frames, 100);
	cr_expect(s.ring_full > 0, "a ring of 4 overflows during a 50 ms stall");
	cr_expect_eq(s.steps + s.ring_full, 100);
	cr_expect_eq(sn.out_of_order, 0);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, full_ring_drops_are_counted, inline_mode)

/* Safe entries on the fake's wire (after the loop has joined). */
static unsigned wire_safe_count(void)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < atomic_load(&fk.n_wire); i++)
		n += fk.wire_safe[i];
	return n;
}

/*
 * One stall fires the watchdog exactly once, however many frames pile up
 * behind it and whatever the newest-only take skips; a second stall after
 * the recovery fires it again. The stalled steps' commands are discarded
 * (stale), and the next step's command is sent again although unchanged
 * (the controller holds the safe set). The watchdog is 50 periods (100 ms)
 * against 300 ms stalls, so scheduling noise cannot make an episode.
 */
static void watchdog_fires_exactly_once_per_stall(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	unsigned values = 0;

	cfg.watchdog_periods = 50;
	memset(&sn, 0, sizeof(sn));
	fake_setup();
	sn.constant = true;
	loop = launch_prepared(&cfg);
	feed(0, 10, PERIOD_NS);
	atomic_store(&fk.stall_ms, 300);
	feed(10, 200, PERIOD_NS); /* the stall, and the recovery */
	atomic_store(&fk.stall_ms, 300);
	feed(210, 200, PERIOD_NS); /* a hang right after a recovery */
	settle(loop, 410);
	halt(loop, &s);
	cr_expect_eq(s.watchdog, 2, "%llu episodes for two stalls", (unsigned long long)s.watchdog);
	cr_expect_eq(s.stale, 2, "each stalled step's commands are discarded");
	/* Safe packages: the start, one per episode, the stop at exit. */
	cr_expect_eq(s.safe_sends, 4);
	cr_expect_eq(wire_safe_count(), 4);
	for (uint32_t i = 0; i < fk.n_wire; i++)
		values += !fk.wire_safe[i] && fk.wire[i] == 0.5;
	cr_expect_eq(values, 3, "0.5 goes out first and again after each safe package");
	cr_expect(fk.n_wire > 0 && fk.wire_safe[fk.n_wire - 1], "the stop is the last thing sent");
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, watchdog_fires_exactly_once_per_stall, inline_mode)

static void non_finite_commands_are_rejected_and_replaced(void)
{
	struct rtl_loop *loop = start_loop(true, 64, RTL_LOOP_RT_OFF);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	sn.write_nan = true;
	feed(0, 20, 0);
	settle(loop, 20);
	halt(loop, &s);
	cr_expect_eq(s.rejected, s.steps);
	cr_expect_eq(s.sends, 0);
	/* One at the start, one for each rejected step, one at the stop. */
	cr_expect_eq((uint64_t)fk.safe_sends, s.steps + 2, "the safe set goes out instead");
	cr_expect_eq(s.safe_sends, s.steps + 2);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, non_finite_commands_are_rejected_and_replaced, inline_mode)

static void step_error_stops_the_loop_with_its_code(void)
{
	struct rtl_loop *loop = start_loop(true, 64, RTL_LOOP_RT_OFF);

	sn.stop_at = 5;
	feed(0, 50, 0);
	cr_expect_eq(rtl_loop_join(loop), -ECANCELED);
	cr_expect_eq(sn.steps, 5);
	cr_expect(fk.n_wire > 0 && fk.wire_safe[fk.n_wire - 1],
		  "a step that ends the loop leaves the stop as the last thing sent");
	expect_clean_wire();
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, step_error_stops_the_loop_with_its_code, inline_mode)

static void disarmed_loop_sends_nothing(void)
{
	struct rtl_loop *loop = start_loop(true, 64, RTL_LOOP_RT_OFF);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	rtl_loop_arm(loop, false);
	cr_expect(!rtl_loop_armed(loop));
	feed(0, 30, 0);
	settle(loop, 30);
	halt(loop, &s);
	cr_expect_eq(s.sends, 0);
	cr_expect_eq(s.suppressed, s.steps);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, disarmed_loop_sends_nothing, inline_mode)

static void lost_connection_reconnects_disarmed(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	int64_t end;

	cfg.reconnect_attempts = 3;
	cfg.reconnect_backoff_ns = RTL_NS_PER_MS;
	loop = launch(&cfg);
	feed(0, 10, 0);
	settle(loop, 10);
	shutdown(fk.peer, SHUT_RDWR); /* the "controller" goes away */
	end = rtl_time_now() + 3 * RTL_NS_PER_SEC;
	do {
		rtl_loop_stats(loop, &s);
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	} while (s.reconnects == 0 && rtl_time_now() < end);
	cr_expect_eq(s.reconnects, 1);
	cr_expect_eq(fk.connects, 2);
	cr_expect(!rtl_loop_armed(loop), "commands stay off after a reconnect");
	feed(10, 10, 0);
	settle(loop, 20);
	halt(loop, &s);
	cr_expect_eq(s.frames, 20, "frames flow again on the new connection");
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, lost_connection_reconnects_disarmed, inline_mode)

/* ---- the stop at exit ------------------------------------------------------------------ */

/*
 * A controller for the stop tests, on its own thread: a frame every
 * period, "moving" (value 1) until a safe package reaches the wire after
 * @base entries, then at rest (value 0); or never at rest.
 */
struct ctl {
	pthread_t th;
	_Atomic int quit;
	_Atomic uint32_t base; /* UINT32_MAX: no stop asked yet */
	bool never_rest;
	_Atomic uint64_t sent;
};

static struct ctl ctl;

static bool stop_on_wire(uint32_t base)
{
	uint32_t n = atomic_load_explicit(&fk.n_wire, memory_order_acquire);

	for (uint32_t i = base; i < n; i++)
		if (fk.wire_safe[i])
			return true;
	return false;
}

static void *controller_main(void *arg)
{
	uint64_t seq = 0;
	bool rest = false;

	(void)arg;
	while (!atomic_load(&ctl.quit)) {
		uint32_t base = atomic_load(&ctl.base);
		struct wire w;

		if (!rest && !ctl.never_rest && base != UINT32_MAX && stop_on_wire(base))
			rest = true;
		w = (struct wire){ seq++, rest ? 0.0 : 1.0 };
		if (send(fk.peer, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(w))
			atomic_fetch_add(&ctl.sent, 1);
		rtl_time_sleep_until(rtl_time_now() + PERIOD_NS);
	}
	return NULL;
}

/* A loop over the rest-aware fake, fed by the controller thread. */
static struct rtl_loop *launch_with_controller(struct rtl_loop_config *cfg, bool never_rest,
					       int stop_at)
{
	struct rtl_loop *loop;

	memset(&sn, 0, sizeof(sn));
	sn.stop_at = stop_at;
	fake_setup();
	tr.ops = &fake_rest_ops;
	loop = launch_prepared(cfg);
	memset(&ctl, 0, sizeof(ctl));
	atomic_store(&ctl.base, UINT32_MAX);
	ctl.never_rest = never_rest;
	cr_assert_eq(pthread_create(&ctl.th, NULL, controller_main, NULL), 0);
	return loop;
}

/* Wait (bounded) until @steps steps ran. */
static void await_steps(struct rtl_loop *loop, uint64_t steps)
{
	int64_t end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	struct rtl_loop_counters s = { .size = sizeof(s) };

	do {
		rtl_loop_stats(loop, &s);
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	} while (s.steps < steps && rtl_time_now() < end);
}

static void controller_quit(void)
{
	atomic_store(&ctl.quit, 1);
	pthread_join(ctl.th, NULL);
}

static char *report_text(struct rtl_loop *loop)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert(f != NULL);
	cr_expect_eq(rtl_loop_report(loop, f, false), 0);
	fclose(f);
	return text;
}

static void stop_waits_until_the_arm_is_at_rest(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop = launch_with_controller(&cfg, false, 0);
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char *text;

	await_steps(loop, 20);
	atomic_store(&ctl.base, atomic_load(&fk.n_wire));
	rtl_loop_stop(loop);
	cr_expect_eq(rtl_loop_join(loop), 0);
	controller_quit();
	rtl_loop_stats(loop, &s);
	expect_clean_wire();
	cr_expect_eq(s.stop_unconfirmed, 0, "the arm was seen at rest");
	cr_expect_geq(s.stop_frames, 2, "two frames at rest in a row");
	cr_expect_gt(s.stop_wait_ns, 0);
	cr_expect(fk.wire_safe[fk.n_wire - 1], "the stop is the last thing sent");
	text = report_text(loop);
	cr_expect(strstr(text, "stop at exit: the arm was at rest") != NULL, "report: %s", text);
	free(text);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, stop_waits_until_the_arm_is_at_rest, inline_mode)

Test(loop, stop_without_rest_is_reported_and_bounded)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char *text;

	cfg.stop_timeout_ns = 200 * RTL_NS_PER_MS;
	loop = launch_with_controller(&cfg, true, 0);
	await_steps(loop, 20);
	rtl_loop_stop(loop);
	cr_expect_eq(rtl_loop_join(loop), 0, "join returns after the stop time-out");
	controller_quit();
	rtl_loop_stats(loop, &s);
	cr_expect_eq(s.stop_unconfirmed, 1);
	cr_expect_gt(s.stop_frames, 0, "frames came, none at rest");
	cr_expect(fk.wire_safe[fk.n_wire - 1]);
	text = report_text(loop);
	cr_expect(strstr(text, "stop at exit: NOT CONFIRMED: the arm was not at rest 0.2 s") !=
			  NULL,
		  "report: %s", text);
	free(text);
	rtl_loop_destroy(loop);
}

static void step_error_sends_the_stop_and_waits_for_rest(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop = launch_with_controller(&cfg, false, 30);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	atomic_store(&ctl.base, 0); /* the stop: any safe package after the first */
	cr_expect_eq(rtl_loop_join(loop), -ECANCELED);
	controller_quit();
	rtl_loop_stats(loop, &s);
	expect_clean_wire();
	cr_expect_eq(s.stop_unconfirmed, 0);
	cr_expect(fk.wire_safe[fk.n_wire - 1]);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, step_error_sends_the_stop_and_waits_for_rest, inline_mode)

Test(loop, destroy_of_a_running_loop_sends_the_stop)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop = launch_with_controller(&cfg, false, 0);

	await_steps(loop, 20);
	atomic_store(&ctl.base, atomic_load(&fk.n_wire));
	rtl_loop_destroy(loop);
	controller_quit();
	expect_clean_wire();
	cr_expect(fk.n_wire > 0 && fk.wire_safe[fk.n_wire - 1], "the stop went out");
}

/* A stream that breaks (a protocol error) with no reconnect: the loop ends
 * with the error, and the stop went out on the way. */
static void broken_stream_still_gets_the_stop(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char *text;

	memset(&sn, 0, sizeof(sn));
	fake_setup();
	atomic_store(&fk.break_at, 30);
	loop = launch_prepared(&cfg);
	feed(0, 20, 0);
	settle(loop, 20); /* commands went out: there is something to stop */
	cr_expect(!rtl_loop_stopping(loop), "a running loop is not stopping");
	feed(20, 30, 0);
	/* It ends by itself: a thread beside it learns so without joining
	 * (bounded: 2 s). */
	for (int i = 0; i < 2000 && !rtl_loop_stopping(loop); i++)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	cr_expect(rtl_loop_stopping(loop), "the broken stream stopped the loop");
	cr_expect_eq(rtl_loop_join(loop), -EPROTO);
	rtl_loop_stats(loop, &s);
	expect_clean_wire();
	cr_expect(fk.n_wire > 0 && fk.wire_safe[fk.n_wire - 1], "the stop is the last thing sent");
	cr_expect_eq(s.rx_errors, 1);
	text = report_text(loop);
	cr_expect(strstr(text, "the stop was sent as it went") != NULL, "report: %s", text);
	free(text);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, broken_stream_still_gets_the_stop, inline_mode)

/* ---- arming, silence, parking ------------------------------------------------------------ */

static void disarm_sends_the_safe_package_once(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	uint32_t at_disarm;
	bool value_after = false;

	memset(&sn, 0, sizeof(sn));
	fake_setup();
	sn.constant = true;
	loop = launch_prepared(&cfg);
	feed(0, 20, PERIOD_NS);
	settle(loop, 20);
	rtl_loop_arm(loop, false);
	at_disarm = atomic_load(&fk.n_wire);
	feed(20, 20, PERIOD_NS);
	settle(loop, 40);
	halt(loop, &s);
	/* start, disarm, stop */
	cr_expect_eq(wire_safe_count(), 3);
	cr_expect(fk.wire_safe[at_disarm], "the first thing after the disarm is the safe package");
	for (uint32_t i = at_disarm; i < fk.n_wire; i++)
		value_after |= !fk.wire_safe[i];
	cr_expect(!value_after, "no step command while disarmed");
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, disarm_sends_the_safe_package_once, inline_mode)

static void silence_longer_than_the_controller_watchdog_is_reported(void)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char *text;

	memset(&sn, 0, sizeof(sn));
	fake_setup();
	fk.ctrl_wd_ns = 20 * RTL_NS_PER_MS;
	sn.constant = true; /* sent once, then coalesced away: the fake has no keep-alive */
	loop = launch_prepared(&cfg);
	feed(0, 50, PERIOD_NS);
	settle(loop, 50);
	halt(loop, &s);
	cr_expect_eq(s.sends, 1);
	cr_expect_eq(s.silent, 1, "one silence, reported once");
	text = report_text(loop);
	cr_expect(strstr(text, "SILENT: 1 times armed with nothing sent") != NULL, "report: %s",
		  text);
	free(text);
	rtl_loop_destroy(loop);
}

RTL_TEST_BOTH_MODES(loop, loop_inline, silence_longer_than_the_controller_watchdog_is_reported,
		    inline_mode)

Test(loop, reconnect_never_runs_beside_a_step)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	int64_t end;

	cfg.reconnect_attempts = 3;
	cfg.reconnect_backoff_ns = RTL_NS_PER_MS;
	cfg.every_frame = true;
	cfg.ring_capacity = 256;
	memset(&sn, 0, sizeof(sn));
	fake_setup();
	sn.step_sleep_us = 3000; /* 40 frames: 120 ms of steps still to run */
	loop = launch_prepared(&cfg);
	feed(0, 40, 0);
	shutdown(fk.peer, SHUT_RDWR); /* lost while the worker is busy */
	end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	do {
		rtl_loop_stats(loop, &s);
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	} while (s.reconnects == 0 && rtl_time_now() < end);
	cr_expect_eq(s.reconnects, 1);
	cr_expect_eq(atomic_load(&connect_overlaps), 0, "connect() ran while a step ran");
	settle(loop, 40);
	halt(loop, &s);
	cr_expect_eq(s.steps + s.ring_full, 40, "the parked steps ran after the reconnect");
	rtl_loop_destroy(loop);
}

/* ---- safe defaults --------------------------------------------------------------------- */

/* The CPUs thread @name of this process may run on, or -1. */
static int thread_cpus(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = -1;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;
		cpu_set_t set;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (strcmp(comm, name) != 0)
			continue;
		if (sched_getaffinity(atoi(e->d_name), sizeof(set), &set) == 0)
			n = CPU_COUNT(&set);
		break;
	}
	if (d)
		closedir(d);
	return n;
}

Test(loop, zeroed_config_pins_nothing_and_keeps_the_watchdog_on)
{
	/* Only what a test must set: RT_OFF (unprivileged). */
	struct rtl_loop_config cfg = { .size = sizeof(cfg),
				       .transport = &tr,
				       .step = step_record,
				       .user = &sn,
				       .rt_mode = RTL_LOOP_RT_OFF };
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	cpu_set_t all;

	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	memset(&sn, 0, sizeof(sn));
	fake_setup();
	loop = launch_prepared(&cfg);
	feed(0, 10, PERIOD_NS);
	settle(loop, 10);
	cr_expect_eq(thread_cpus("rtl-rx"), CPU_COUNT(&all), "the rx thread is not pinned");
	cr_expect_eq(thread_cpus("rtl-worker"), CPU_COUNT(&all), "the worker is not pinned");
	atomic_store(&fk.stall_ms, 200); /* the default watchdog: 3 periods */
	feed(10, 150, PERIOD_NS);
	settle(loop, 160);
	halt(loop, &s);
	cr_expect_eq(s.watchdog, 1, "the watchdog is on by default");
	rtl_loop_destroy(loop);
}

Test(loop, a_cpu_without_its_pin_flag_is_refused)
{
	struct rtl_loop_config cfg = { .size = sizeof(cfg), .rx_cpu = 1 };
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	fake_setup();
	cfg.transport = &tr;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "set pin_rx = true") != NULL, "message: %s", err.msg);
	cfg.rx_cpu = 0;
	cfg.worker_cpu = 1;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cfg.pin_worker = true;
	cr_assert_eq(rtl_loop_create(&loop, &cfg, &err), 0, "%s", err.msg);
	rtl_loop_destroy(loop);
}

Test(loop, external_loop_reads_newest_and_writes)
{
	struct rtl_loop_config cfg = {
		.size = sizeof(cfg),
		.transport = &tr,
		.rt_mode = RTL_LOOP_RT_OFF,
		.watchdog_periods = -1,
	};
	struct rtl_loop *loop;
	const struct rtl_loop_frame *f;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	struct wire w;

	fake_setup();
	cr_assert_eq(rtl_loop_create(&loop, &cfg, NULL), 0);
	cr_assert_eq(rtl_loop_start(loop, NULL), 0);
	cr_expect(rtl_loop_read(loop, 10 * RTL_NS_PER_MS) == NULL, "nothing yet: time-out");
	feed(0, 5, 0);
	rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	f = rtl_loop_read(loop, RTL_NS_PER_SEC);
	cr_assert(f != NULL);
	memcpy(&w, f->values, sizeof(w));
	cr_expect_eq(w.seq, 4, "the newest of the five");
	fk.cmd = 1.5;
	cr_expect_eq(rtl_loop_write(loop), 8);
	cr_expect_eq(rtl_loop_write(loop), 0, "unchanged: suppressed");
	halt(loop, &s);
	cr_expect_eq(s.worker_skipped, 4);
	cr_expect_eq(s.sends, 1);
	cr_expect_eq(s.suppressed, 1);
	rtl_loop_destroy(loop);
}

Test(loop, bad_configuration_is_refused)
{
	struct rtl_transport bad = { .ops = NULL };
	struct rtl_loop_config cfg = { .size = sizeof(cfg), .transport = &bad };
	struct rtl_loop *loop;
	struct rtl_error err = { 0 };

	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "transport") != NULL);
	fake_setup();
	cfg.transport = &tr;
	cfg.ring_capacity = 6;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "power of two") != NULL);
	cr_expect_eq(rtl_loop_create(NULL, &cfg, NULL), -EINVAL);
	cfg.ring_capacity = 0;
	cfg.inline_step = true; /* without a step function */
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "inline_step needs a step function") != NULL, "message: %s",
		  err.msg);
}

/* ---- the wait's spin window ------------------------------------------------------------------ */

static void expect_window(struct rtl_loop_spin w, int64_t from, int64_t until, const char *what)
{
	cr_expect_eq(w.from, from, "%s: from %lld, expected %lld", what, (long long)w.from,
		     (long long)from);
	cr_expect_eq(w.until, until, "%s: until %lld, expected %lld", what, (long long)w.until,
		     (long long)until);
}

Test(loop, spin_window_follows_the_policy)
{
	/* No spin configured: an empty window at the start of the wait. */
	expect_window(rtl_loop_spin_window(5000, 1000, 1000, 0, 0), 5000, 5000, "off");
	/* spin_ns alone: right away, for the budget. */
	expect_window(rtl_loop_spin_window(5000, 1000, 1000, 300, 0), 5000, 5300, "after step");
	/* Lead: the next frame is due at 10000 + 1000; spin from 100 before,
	 * for 2 x 100 by default or for spin_ns. */
	expect_window(rtl_loop_spin_window(10200, 10000, 1000, 0, 100), 10900, 11100, "lead");
	expect_window(rtl_loop_spin_window(10200, 10000, 1000, 350, 100), 10900, 11250,
		      "lead + budget");
	/* A wait that starts late shortens the window; its end stays. */
	expect_window(rtl_loop_spin_window(11000, 10000, 1000, 0, 100), 11000, 11100, "late");
	/* ...and one that starts after the end spins not at all. */
	{
		struct rtl_loop_spin w = rtl_loop_spin_window(11500, 10000, 1000, 0, 100);

		cr_expect(w.until <= w.from, "a wait after the window must not spin");
	}
	/* Without a previous frame or a period there is no due time. */
	expect_window(rtl_loop_spin_window(7000, 0, 1000, 0, 100), 7000, 7000, "no frame yet");
	expect_window(rtl_loop_spin_window(7000, 6000, 0, 0, 100), 7000, 7000, "no period");
	/* Negative settings never spin. */
	expect_window(rtl_loop_spin_window(7000, 6000, 1000, -1, 0), 7000, 7000, "negative");
	expect_window(rtl_loop_spin_window(7000, 6000, 1000, 0, -5), 7000, 7000, "negative lead");
}

/*
 * Run @frames frames @gap_ns apart through a worker that spins with
 * @spin_ns / @lead_ns: it still steps every frame, finds frames while it
 * spins, and never spins longer than @budget per wait.
 */
static void spin_run(int64_t spin_ns, int64_t lead_ns, uint64_t frames, int64_t gap_ns,
		     int64_t budget)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };

	cfg.inline_step = false; /* the worker's wait is what spins */
	cfg.every_frame = true;
	cfg.spin_ns = spin_ns;
	cfg.spin_lead_ns = lead_ns;
	loop = launch(&cfg);
	feed(0, frames, gap_ns);
	settle(loop, frames);
	halt(loop, &s);
	cr_expect_eq(s.steps, frames);
	cr_expect_eq(sn.out_of_order, 0);
	cr_expect(s.spin_hits >= 1 && s.spin_hits <= s.steps, "spin hits %llu of %llu steps",
		  (unsigned long long)s.spin_hits, (unsigned long long)s.steps);
	/* One window per wait: at most steps + 1 waits (the last one ends
	 * with the stop), each at most the budget. */
	cr_expect((int64_t)s.spin_time_ns <= (int64_t)(s.steps + 1) * budget,
		  "spun %lld ns over %llu waits", (long long)s.spin_time_ns,
		  (unsigned long long)s.steps + 1);
	rtl_loop_destroy(loop);
}

/*
 * A spinning worker still steps every frame, finds frames while it spins,
 * and never spins longer than its budget per wait. The windows are wide
 * (tens of ms against frames 2 to 5 ms apart), so a frame lands in one
 * however the threads are scheduled.
 */
Test(loop, spinning_worker_steps_every_frame_within_its_budget)
{
	spin_run(50 * RTL_NS_PER_MS, 0, 20, 5 * RTL_NS_PER_MS, 50 * RTL_NS_PER_MS);
}

Test(loop, spin_lead_spins_before_the_due_frame_within_its_budget)
{
	/* Frames every 2 ms (the fake's period): the window opens 1.5 ms
	 * after a frame and lasts 3 ms (2 x the lead), so the next frame
	 * falls inside it. */
	spin_run(0, 1500 * RTL_NS_PER_US, 40, PERIOD_NS, 2 * 1500 * RTL_NS_PER_US);
}

Test(loop, negative_spin_settings_are_refused)
{
	struct rtl_loop_config cfg = { .size = sizeof(cfg), .spin_lead_ns = -1 };
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	fake_setup();
	cfg.transport = &tr;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "spin_lead_ns") != NULL, "message: %s", err.msg);
	cr_expect(loop == NULL);
	cfg.spin_lead_ns = 0;
	cfg.spin_ns = -1;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "spin_ns") != NULL, "message: %s", err.msg);
}

/* ---- the hot path allocates nothing and takes no page fault ----------------------------- */

/* Not under sanitizers nor under the TSan shim: the test locks memory
 * (mlockall), which cannot work over a sanitizer's shadow memory. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(RTL_TAP_SHIM)
#define RTL_NO_MALLOC_HOOK 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RTL_NO_MALLOC_HOOK 1
#endif
#endif

#ifndef RTL_NO_MALLOC_HOOK

static void steady_state_allocates_nothing_and_takes_no_fault(void)
{
	struct rtl_loop *loop = start_loop(true, 256, RTL_LOOP_RT_DEGRADE);
	struct rtl_loop_counters s = { .size = sizeof(s) };
	long allocs;

	/* The counter itself works (the hot threads, unmarked before their
	 * first frame, allocate nothing meanwhile that counts). */
	cr_assert(rtl_test_alloc_selftest(), "the malloc counter must see a malloc");

	feed(0, 100, 100 * RTL_NS_PER_US); /* warm-up */
	settle(loop, 100);
	cr_assert(hot_seen[0] && hot_seen[1], "both hot threads seen");
	rtl_test_alloc_start();
	feed(100, 5200, 100 * RTL_NS_PER_US);
	settle(loop, 5300);
	allocs = rtl_test_alloc_stop();
	halt(loop, &s);
	cr_expect_eq(s.frames, 5300);
	cr_expect_eq(allocs, 0,
		     "%ld allocations in the rx thread and the worker during 5200 cycles", allocs);
	cr_expect(fk.rx_faults_at[1] >= 0 && fk.rx_faults_at[0] >= 0);
	cr_expect_eq(fk.rx_faults_at[1] - fk.rx_faults_at[0], 0,
		     "rx thread page faults over 5000 frames");
	cr_expect_eq(sn.worker_faults_at[1] - sn.worker_faults_at[0], 0,
		     "worker page faults over 5000 steps");
	rtl_loop_destroy(loop);
	rtl_mem_unlock_all();
}

Test(loop_rt, steady_state_allocates_nothing_and_takes_no_fault)
{
	inline_mode = false;
	steady_state_allocates_nothing_and_takes_no_fault();
}

Test(loop_rt, inline_steady_state_allocates_nothing_and_takes_no_fault)
{
	inline_mode = true;
	steady_state_allocates_nothing_and_takes_no_fault();
}

/*
 * Refused real-time threads: the process gives up CAP_SYS_NICE and its
 * real-time allowance (a forked test: nothing leaks into other tests; hence
 * not under the shim, which runs tests in one process). It stays the same
 * user with its other capabilities, so that mlockall still works and the
 * thread refusal is what the loop meets.
 */
static void drop_rt_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct rlimit zero = { 0, 0 };
	uint32_t nice = 1u << (CAP_SYS_NICE % 32);

	cr_assert_eq(setrlimit(RLIMIT_RTPRIO, &zero), 0);
	cr_assert_eq(syscall(SYS_capget, &h, d), 0, "capget: %s", strerror(errno));
	d[CAP_SYS_NICE / 32].effective &= ~nice;
	d[CAP_SYS_NICE / 32].permitted &= ~nice;
	d[CAP_SYS_NICE / 32].inheritable &= ~nice;
	cr_assert_eq(syscall(SYS_capset, &h, d), 0, "capset: %s", strerror(errno));
}

Test(loop_rt, refused_fifo_degrades_and_the_notes_say_why)
{
	struct rtl_loop *loop;
	struct rtl_loop_counters s = { .size = sizeof(s) };
	const char *notes;

	inline_mode = false;
	drop_rt_privileges();
	loop = start_loop(true, 64, RTL_LOOP_RT_DEGRADE);
	notes = rtl_loop_rt_notes(loop);
	cr_assert(strstr(notes, "rtl-worker thread runs under SCHED_OTHER: SCHED_FIFO"), "%s",
		  notes);
	cr_assert(strstr(notes, "rtl-rx thread runs under SCHED_OTHER: SCHED_FIFO"), "%s", notes);
	cr_assert(strstr(notes, "RLIMIT_RTPRIO is 0"), "%s", notes);
	cr_assert_not(strstr(notes, "rtl-log"), "the log thread asks for no priority: %s", notes);
	/* Degraded, the loop still runs. */
	feed(0, 20, 0);
	settle(loop, 20);
	halt(loop, &s);
	cr_expect_eq(s.frames, 20);
	rtl_loop_destroy(loop);
	rtl_mem_unlock_all();
}

Test(loop_rt, refused_fifo_fails_the_start_when_required)
{
	struct rtl_loop_config cfg = test_config();
	struct rtl_error err = { 0 };
	struct rtl_loop *loop = NULL;

	inline_mode = false;
	cfg = test_config();
	cfg.rt_mode = RTL_LOOP_RT_REQUIRE;
	drop_rt_privileges();
	memset(&sn, 0, sizeof(sn));
	fake_setup();
	cr_assert_eq(rtl_loop_create(&loop, &cfg, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(loop, &err), -EPERM, "%s", err.msg);
	cr_assert_eq(err.code, -EPERM);
	cr_assert(strstr(err.msg, "SCHED_FIFO priority"), "%s", err.msg);
	cr_assert(strstr(err.msg, "RLIMIT_RTPRIO is 0"), "%s", err.msg);
	/* The threads already started (the log thread) are joined: the loop
	 * is not started, and destroying it does not wait for anything. */
	cr_assert_eq(rtl_loop_join(loop), -EINVAL);
	rtl_loop_destroy(loop);
	rtl_mem_unlock_all();
}
#endif /* RTL_NO_MALLOC_HOOK */
