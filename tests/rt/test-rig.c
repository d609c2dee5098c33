// SPDX-License-Identifier: MIT
/*
 * The rig (<rtloop/rig.h>): the stamp estimator on a fake clock, then rigs
 * of fake sources, each a seqpacket socketpair fed by a thread of the test
 * at its own period, through the real loops and the real worker: what the
 * step sees (frames, freshness, the frames it did not see, ages), the
 * policy on a lost, stale or non-finite source (stop all, or that one),
 * arming, the timer clock, no allocation in the steps, and the refused
 * configurations.
 *
 * The fake keeps the transport contract (<rtloop/loop.h>): connect builds
 * its safe package; recv waits at most the receive slice; send and
 * send_safe only count; the commands are written by the step's thread.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <rtloop/rig.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#include "../common/alloc-count.h"
#include "rig_private.h"

#define MS RTL_NS_PER_MS

/* ---- the stamp estimator, on a fake clock ---------------------------------------- */

Test(rig_stamp, constant_offset_gives_the_age_in_periods)
{
	struct rtl_rig_stamp e = { 0 };
	const int64_t period = 2 * MS, off = 5 * RTL_NS_PER_SEC;

	/* frames stamped k * 2 ms, received 5 s + 100 us later */
	for (int k = 1; k <= 10; k++)
		rtl_rig_stamp_update(&e, k * 0.002, off + k * period + 100000, period);
	/* at 1 ms after the last frame arrived: 0.5 periods */
	cr_expect_float_eq(rtl_rig_stamp_age(&e, 0.020, off + 10 * period + 100000,
					     off + 10 * period + 100000 + MS, period),
			   0.5, 1e-6);
}

Test(rig_stamp, a_late_frame_is_older_than_its_receive_time_says)
{
	struct rtl_rig_stamp e = { 0 };
	const int64_t period = 2 * MS;

	for (int k = 1; k <= 10; k++)
		rtl_rig_stamp_update(&e, k * 0.002, k * period, period);
	/* frame 11 arrives 3 ms late: its age counts from its stamp */
	rtl_rig_stamp_update(&e, 0.022, 11 * period + 3 * MS, period);
	cr_expect_float_eq(
		rtl_rig_stamp_age(&e, 0.022, 11 * period + 3 * MS, 11 * period + 3 * MS, period),
		1.5, 0.01);
}

Test(rig_stamp, the_floor_relaxes_so_drift_is_followed)
{
	struct rtl_rig_stamp e = { 0 };
	const int64_t period = 2 * MS;
	int64_t rx = 0;

	/* the host's clock runs 100 ppm slow against the controller's:
	 * the offset shrinks by 200 ns per frame */
	for (int k = 1; k <= 20000; k++) {
		rx = k * period - k * 200;
		rtl_rig_stamp_update(&e, k * 0.002, rx, period);
	}
	cr_expect_lt(fabs(rtl_rig_stamp_age(&e, 40.0, rx, rx, period)), 0.01);
	/* and the other way: the offset grows by 200 ns per frame, which the
	 * floor follows with its 2 us relaxation per frame */
	e = (struct rtl_rig_stamp){ 0 };
	for (int k = 1; k <= 20000; k++) {
		rx = k * period + k * 200;
		rtl_rig_stamp_update(&e, k * 0.002, rx, period);
	}
	cr_expect_lt(fabs(rtl_rig_stamp_age(&e, 40.0, rx, rx, period)), 0.01);
}

Test(rig_stamp, a_restarted_controller_starts_afresh_and_no_stamp_uses_receive_time)
{
	struct rtl_rig_stamp e = { 0 };
	const int64_t period = 2 * MS;

	for (int k = 1; k <= 10; k++)
		rtl_rig_stamp_update(&e, 100 + k * 0.002, k * period, period);
	rtl_rig_stamp_update(&e, 0.002, 11 * period, period); /* back to 0 */
	cr_expect_float_eq(rtl_rig_stamp_age(&e, 0.002, 11 * period, 11 * period, period), 0.0,
			   1e-9);
	/* NaN: the receive time */
	cr_expect_float_eq(rtl_rig_stamp_age(&e, NAN, 10 * period, 11 * period, period), 1.0, 1e-9);
	cr_expect(isnan(rtl_rig_stamp_age(&e, 0.002, 0, 0, 0)));
}

/* ---- the worker's pieces, on a fake clock ------------------------------------------ */

/* A rig built by hand, never started: sources without loops (the policy's
 * disarm of a NULL loop does nothing), each with storage for its frame. */
struct hand {
	struct rtl_rig rig;
	unsigned char store[RTL_RIG_MAX_SOURCES][256];
};

static struct hand *hand_rig(unsigned n, enum rtl_rig_policy policy, const bool *sensor,
			     const int64_t *period, const int64_t *stale)
{
	struct hand *h = calloc(1, sizeof(*h));

	cr_assert(h != NULL);
	h->rig.n = n;
	h->rig.cfg.policy = policy;
	h->rig.started_ns = 0;
	atomic_store(&h->rig.ended_by, -1);
	for (unsigned i = 0; i < n; i++) {
		struct rig_src *s = &h->rig.src[i];

		s->cfg.sensor = sensor[i];
		s->frame = (struct rtl_loop_frame *)(void *)h->store[i];
		s->frame_cap = sizeof(h->store[i]);
		s->period_ns = period[i];
		s->stale_ns = stale[i];
	}
	return h;
}

/* Frame @seq received at @rx_ns, stamped @ctrl_s by its controller. */
static const struct rtl_loop_frame *frame(uint64_t seq, int64_t rx_ns, double ctrl_s)
{
	static union {
		struct rtl_loop_frame f;
		unsigned char b[sizeof(struct rtl_loop_frame) + 16];
	} u;

	memset(&u, 0, sizeof(u));
	u.f.seq = seq;
	u.f.rx_ns = rx_ns;
	u.f.ctrl_time = ctrl_s;
	u.f.size = 16;
	return &u.f;
}

Test(rig_pieces, the_step_sees_the_newest_of_each_the_unseen_and_the_ages)
{
	const bool sensor[2] = { false, true };
	const int64_t period[2] = { 2 * MS, MS / 2 }, stale[2] = { 8 * MS, 3 * MS };
	struct hand *h = hand_rig(2, RTL_RIG_STOP_ALL, sensor, period, stale);
	struct rtl_rig *rig = &h->rig;
	bool fresh[2];
	uint32_t gap[2];

	/* step 1 at 10 ms: the arm's frame 0 (received 9.9 ms), the
	 * sensor's frame 3 (9.8 ms); stamps 100 us before receipt */
	gap[0] = rtl__rig_take(&rig->src[0], frame(0, 9900000, 0.0098), true);
	gap[1] = rtl__rig_take(&rig->src[1], frame(3, 9800000, 0.0097), true);
	fresh[0] = fresh[1] = true;
	rtl__rig_fill(rig, 10 * MS, fresh, gap);
	cr_expect_eq(rig->in[0].frame->seq, 0);
	cr_expect_eq(rig->in[1].frame->seq, 3);
	cr_expect_eq(gap[1], 0, "the first frame: nothing before it counts");
	cr_expect_eq(rig->in[0].age_ns, 100000);
	cr_expect_eq(rig->in[1].age_ns, 200000);
	/* one frame: the stamp's offset is learnt from it, so its age in
	 * periods is its age since receipt */
	cr_expect_float_eq(rig->in[0].age_periods, 0.05, 1e-9, "100 us of a 2 ms period");
	cr_expect_float_eq(rig->in[1].age_periods, 0.4, 1e-9, "200 us of 500 us");
	/* step 2 at 12 ms: the arm's frame 1; the sensor's newest is 7:
	 * 4, 5 and 6 came and went */
	gap[0] = rtl__rig_take(&rig->src[0], frame(1, 11900000, 0.0118), true);
	gap[1] = rtl__rig_take(&rig->src[1], frame(7, 11950000, 0.0118), true);
	rtl__rig_fill(rig, 12 * MS, fresh, gap);
	cr_expect_eq(rig->in[1].unseen, 3);
	cr_expect_eq(rig->in[0].unseen, 0);
	cr_expect_eq(rtl_stat_get(&rig->src[1].c.unseen), 3);
	cr_expect_eq(rtl_stat_get(&rig->src[1].c.taken), 2);
	cr_expect_eq(rig->in[1].age_ns, 50000);
	/* the sensor's frame 7 came 50 us later than its stamp says (an
	 * offset of 150 us against the 100.5 us floor): its age counts from
	 * the stamp, 99.5 us, not from its receipt, 50 us */
	cr_expect_float_eq(rig->in[1].age_periods, 0.199, 1e-6);
	/* step 3 at 14 ms: nothing new from the sensor: its last frame, older */
	rtl__rig_take(&rig->src[0], frame(2, 13900000, 0.0138), true);
	fresh[1] = false;
	gap[1] = 0;
	rtl__rig_fill(rig, 14 * MS, fresh, gap);
	cr_expect_not(rig->in[1].fresh);
	cr_expect_eq(rig->in[1].frame->seq, 7);
	cr_expect_eq(rig->in[1].age_ns, 2050000);
	cr_expect(rig->in[1].live);
	cr_expect_eq(rtl_stat_get(&rig->src[1].c.max_age_ns), 2050000);
	free(h);
}

/* Two arms at 500 Hz (stale after 8 ms) and a 1 kHz sensor (after 5 ms). */
static const bool kinds3[3] = { false, false, true };
static const int64_t periods3[3] = { 2 * MS, 2 * MS, MS }, stale3[3] = { 8 * MS, 8 * MS, 5 * MS };

Test(rig_pieces, episodes_open_at_the_bound_are_named_and_apply_the_policy)
{
	struct hand *h = hand_rig(3, RTL_RIG_STOP_ALL, kinds3, periods3, stale3);
	struct rtl_rig *rig = &h->rig;

	rtl__rig_take(&rig->src[2], frame(0, 10 * MS, NAN), true);
	/* exactly at the bound: not stale; a nanosecond after: stale */
	rtl__rig_judge(rig, 2, 15 * MS, false, false);
	cr_expect_not(rig->in[2].stale);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.caused), 0);
	rtl__rig_judge(rig, 2, 15 * MS + 1, false, false);
	cr_expect(rig->in[2].stale);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.caused), 1);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.stale), 1);
	cr_expect_eq(rtl_stat_get(&rig->c.episodes), 1);
	cr_expect(rig->src[0].stopped && rig->src[1].stopped, "stop-all: every robot");
	cr_expect_not(rig->src[2].stopped, "a sensor has nothing to stop");
	cr_expect_eq(rtl_stat_get(&rig->src[0].c.stopped), 1);
	/* still stale: the same episode, not counted again */
	rtl__rig_judge(rig, 2, 20 * MS, false, false);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.caused), 1);
	/* back: the episode closes, the robots stay stopped */
	rtl__rig_take(&rig->src[2], frame(9, 21 * MS, NAN), true);
	rtl__rig_judge(rig, 2, 21 * MS, false, false);
	cr_expect_not(rig->in[2].stale);
	cr_expect(rig->src[0].stopped);
	/* a non-finite frame: refused, counted, an episode of its own */
	cr_expect_eq(rtl__rig_take(&rig->src[2], frame(10, 22 * MS, NAN), false), 0);
	cr_expect_eq(rig->src[2].frame->seq, 9, "the refused frame is not the step's");
	rtl__rig_judge(rig, 2, 22 * MS, false, false);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.nonfinite), 1);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.caused), 2);
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.stale), 1);
	/* a reconnect of arm 1: lost, an episode against it; no end */
	rtl__rig_take(&rig->src[1], frame(0, 22 * MS, NAN), true);
	rtl__rig_judge(rig, 1, 22 * MS, true, false);
	cr_expect(rig->in[1].lost);
	cr_expect_eq(rtl_stat_get(&rig->src[1].c.lost), 1);
	cr_expect_not(rtl__rig_over(rig));
	/* arm 1's loop ends: under stop-all the rig ends */
	rtl__rig_judge(rig, 1, 23 * MS, false, true);
	cr_expect(rtl__rig_over(rig));
	cr_expect_eq(atomic_load(&rig->ended_by), 1);
	free(h);
}

Test(rig_pieces, stop_source_stops_itself_and_ends_with_the_last_robot)
{
	struct hand *h = hand_rig(3, RTL_RIG_STOP_SOURCE, kinds3, periods3, stale3);
	struct rtl_rig *rig = &h->rig;

	for (unsigned i = 0; i < 3; i++)
		rtl__rig_take(&rig->src[i], frame(0, 10 * MS, NAN), true);
	rtl__rig_judge(rig, 0, 19 * MS, false, false); /* arm 0 stale */
	cr_expect(rig->src[0].stopped);
	cr_expect_not(rig->src[1].stopped, "stop-source: the other robot goes on");
	rtl__rig_judge(rig, 2, 16 * MS, false, false); /* the sensor stale */
	cr_expect_not(rig->src[1].stopped, "a sensor's fault stops only itself: nothing");
	cr_expect_eq(rtl_stat_get(&rig->src[2].c.caused), 1);
	rtl__rig_judge(rig, 0, 20 * MS, false, true);
	cr_expect_not(rtl__rig_over(rig), "a robot is left");
	rtl__rig_judge(rig, 1, 20 * MS, false, true);
	cr_expect(rtl__rig_over(rig), "none is left");
	free(h);
	/* a rig of sensors alone ends when none is left */
	{
		const bool s2[2] = { true, true };
		struct hand *g = hand_rig(2, RTL_RIG_STOP_SOURCE, s2, periods3, stale3);

		rtl__rig_judge(&g->rig, 0, MS, false, true);
		cr_expect_not(rtl__rig_over(&g->rig));
		rtl__rig_judge(&g->rig, 1, MS, false, true);
		cr_expect(rtl__rig_over(&g->rig));
		free(g);
	}
}

/* ---- locks: every pthread lock of a marked thread is counted ----------------------------- */

/* The plain build interposes the pthread locks (the TSan build has its own
 * interceptors there, and runs without this count): a marked thread's
 * mutex, rwlock and semaphore waits are counted, then done. */
static _Thread_local bool lock_marked;

#ifndef RTL_TAP_SHIM
static _Atomic long locks_taken;
#include <dlfcn.h>
#include <semaphore.h>

#define COUNTED_LOCK(name, type)                                   \
	int name(type *l)                                          \
	{                                                          \
		static int (*real)(type *);                        \
                                                                   \
		if (!real)                                         \
			*(void **)&real = dlsym(RTLD_NEXT, #name); \
		if (lock_marked)                                   \
			atomic_fetch_add(&locks_taken, 1);         \
		return real(l);                                    \
	}
COUNTED_LOCK(pthread_mutex_lock, pthread_mutex_t)
COUNTED_LOCK(pthread_mutex_trylock, pthread_mutex_t)
COUNTED_LOCK(pthread_rwlock_rdlock, pthread_rwlock_t)
COUNTED_LOCK(pthread_rwlock_wrlock, pthread_rwlock_t)
COUNTED_LOCK(pthread_spin_lock, pthread_spinlock_t)
COUNTED_LOCK(sem_wait, sem_t)
#endif

/* ---- the fake sources ---------------------------------------------------------------- */

struct wire {
	double value, ctrl_time;
};

struct fake {
	struct rtl_transport tr;
	int fd, peer;
	int64_t period_ns;
	double cmd;
	_Atomic int safe_sends, sends;
	/* the feeder: its thread, what it sends, what it has sent */
	pthread_t feeder;
	_Atomic int stop, pause, poison, close_now;
	/* After close_now, come back 50 ms later on a new socketpair, whose
	 * loop side waits in next_fd for the loop's reconnect; dead: the rx
	 * thread's, the old connection ended. */
	_Atomic int comeback, next_fd;
	bool dead;
	_Atomic uint64_t fed;
	struct wire rx;
};

static struct fake *of(struct rtl_transport *t)
{
	return t->impl;
}

static int f_connect(struct rtl_transport *t, struct rtl_error *err)
{
	struct fake *f = of(t);
	struct timeval slice = { .tv_usec = RTL_TRANSPORT_RX_SLICE_NS / 1000 };

	if (f->dead) {
		int nf = atomic_exchange(&f->next_fd, -1);

		if (nf < 0)
			return rtl_error_set(err, -ECONNREFUSED, "fake: the controller is away");
		close(f->fd);
		f->fd = nf;
		f->dead = false;
	}
	setsockopt(f->fd, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof(slice));
	t->values_size = sizeof(struct wire);
	t->period_ns = f->period_ns;
	t->rx_timeout_ns = 0;
	return 0;
}

static int f_recv(struct rtl_transport *t)
{
	struct fake *f = of(t);
	ssize_t n = recv(f->fd, &f->rx, sizeof(f->rx), 0);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		f->dead = true;
	return n == 0 ? 0 : (int)n;
}

static int f_next(struct rtl_transport *t, struct rtl_loop_frame *fr, size_t cap)
{
	struct fake *f = of(t);

	if (isnan(f->rx.ctrl_time) || cap < sizeof(struct wire))
		return 0;
	memcpy(fr->values, &f->rx, sizeof(f->rx));
	fr->size = sizeof(f->rx);
	fr->ctrl_time = f->rx.ctrl_time;
	fr->ctrl_skipped = 0;
	fr->kernel_rx_ns = 0;
	f->rx.ctrl_time = NAN; /* taken */
	return 1;
}

static int f_send(struct rtl_transport *t, int64_t now)
{
	(void)now;
	atomic_fetch_add(&of(t)->sends, 1);
	return 8;
}

static int f_send_safe(struct rtl_transport *t)
{
	atomic_fetch_add(&of(t)->safe_sends, 1);
	return 8;
}

static int f_check(struct rtl_transport *t, char *why, size_t len)
{
	if (!isfinite(of(t)->cmd)) {
		snprintf(why, len, "command not finite");
		return -EDOM;
	}
	return 0;
}

static bool f_at_rest(struct rtl_transport *t, const struct rtl_loop_frame *fr)
{
	(void)t;
	(void)fr;
	return true;
}

static void f_disconnect(struct rtl_transport *t)
{
	(void)t;
}

static int f_finite(struct rtl_transport *t, const struct rtl_loop_frame *fr, char *why, size_t len)
{
	struct wire w;

	(void)t;
	memcpy(&w, fr->values, sizeof(w));
	if (isfinite(w.value))
		return 0;
	snprintf(why, len, "value not finite");
	return -EDOM;
}

static const struct rtl_transport_ops fake_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "fake",
	.connect = f_connect,
	.recv = f_recv,
	.next = f_next,
	.send = f_send,
	.send_safe = f_send_safe,
	.check = f_check,
	.at_rest = f_at_rest,
	.disconnect = f_disconnect,
	.finite = f_finite,
};

static void *feed_main(void *arg)
{
	struct fake *f = arg;
	int64_t next = rtl_time_now();
	uint64_t k = 0;

	while (!atomic_load(&f->stop)) {
		struct wire w = { 0.0, 0.0 };

		next += f->period_ns;
		rtl_time_sleep_until(next);
		if (atomic_load(&f->close_now)) {
			int sv[2];

			shutdown(f->peer, SHUT_RDWR);
			if (!atomic_load(&f->comeback) ||
			    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
				break;
			rtl_time_sleep_until(rtl_time_now() + 50 * MS);
			close(f->peer);
			f->peer = sv[1];
			atomic_store(&f->next_fd, sv[0]);
			atomic_store(&f->close_now, 0);
			next = rtl_time_now();
			continue;
		}
		k++;
		if (atomic_load(&f->pause))
			continue;
		w.ctrl_time = (double)k * (double)f->period_ns / 1e9;
		if (atomic_exchange(&f->poison, 0)) {
			/* then silent: the poisoned frame stays the newest
			 * (the rig checks the frames it takes, the newest) */
			w.value = NAN;
			atomic_store(&f->pause, 1);
		}
		send(f->peer, &w, sizeof(w), MSG_DONTWAIT);
		atomic_fetch_add(&f->fed, 1);
	}
	return NULL;
}

static void fake_init(struct fake *f, int64_t period_ns)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	f->fd = sv[0];
	f->peer = sv[1];
	f->period_ns = period_ns;
	f->rx.ctrl_time = NAN;
	atomic_store(&f->next_fd, -1);
	f->tr = (struct rtl_transport){
		.size = sizeof(f->tr), .ops = &fake_ops, .impl = f, .commands = &f->cmd
	};
	cr_assert_eq(pthread_create(&f->feeder, NULL, feed_main, f), 0);
}

static void fake_fini(struct fake *f)
{
	atomic_store(&f->stop, 1);
	pthread_join(f->feeder, NULL);
	close(f->fd);
	close(f->peer);
}

/* ---- what the step records ------------------------------------------------------------- */

struct seen {
	_Atomic uint64_t steps;
	uint64_t fresh[2], unseen[2], first_seq[2], last_seq[2];
	_Atomic uint64_t fresh_b; /* fresh[1], for the test's thread */
	bool any[2], negative_age, stale_frame_given;
	_Atomic int stopped0, stopped1, live1;
	_Atomic bool count_allocs;
	int alloc_steps;
	_Atomic int stall_ms; /* the next step sleeps this long, once */
	/* steps where rtl_rig_commands() was NULL for a source not lost, or
	 * not NULL for a lost one */
	int wrong_commands;
};

static int record_step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct seen *s = user;

	for (unsigned i = 0; i < n && i < 2; i++) {
		if (!in[i].frame)
			continue;
		if (in[i].age_ns < 0)
			s->negative_age = true;
		if (in[i].fresh) {
			if (!s->any[i])
				s->first_seq[i] = in[i].frame->seq;
			s->any[i] = true;
			s->fresh[i]++;
			if (i == 1)
				atomic_fetch_add(&s->fresh_b, 1);
			s->unseen[i] += in[i].unseen;
			s->last_seq[i] = in[i].frame->seq;
		}
		{
			double *cmd = rtl_rig_commands(rig, i);

			/* a lost source's commands are not the step's to write */
			if (!cmd != in[i].lost)
				s->wrong_commands++;
			if (cmd)
				*cmd = (double)(atomic_load(&s->steps) % 7);
		}
	}
	atomic_store(&s->stopped0, in[0].stopped);
	if (n > 1) {
		atomic_store(&s->stopped1, in[1].stopped);
		atomic_store(&s->live1, in[1].live);
	}
	if (atomic_load(&s->count_allocs) && !s->alloc_steps++) {
		rtl_test_alloc_mark_thread();
		lock_marked = true;
	}
	{
		int ms = atomic_exchange(&s->stall_ms, 0);

		if (ms)
			rtl_time_sleep_until(rtl_time_now() + ms * MS);
	}
	atomic_fetch_add(&s->steps, 1);
	return 0;
}

/* The stale bound: wide, so that a loaded machine (CI, TSan) never makes a
 * slow feeder look stale, except where a test asks for one. */
static int64_t stale_bound = 200 * MS;
/* Source 1's reconnect attempts (0: none). */
static int reconnect_b;
/* The rig's telemetry (NULL: none). */
static struct rtl_telemetry *telemetry;

static struct rtl_rig *make_rig(struct fake *f, unsigned n, uint32_t clock, int64_t period,
				enum rtl_rig_policy policy, struct seen *s)
{
	struct rtl_rig_source src[RTL_RIG_MAX_SOURCES];
	struct rtl_rig_config rc = { .size = sizeof(rc),
				     .sources = src,
				     .n_sources = n,
				     .clock = clock,
				     .period_ns = period,
				     .step = record_step,
				     .user = s,
				     .rt_mode = RTL_LOOP_RT_OFF,
				     .policy = policy,
				     /* 10 steps: a loaded machine (CI, TSan) does
				      * not stall that long by itself */
				     .watchdog_periods = 10,
				     .stop_timeout_ns = 200 * MS,
				     .telemetry = telemetry };
	struct rtl_error err = { 0 };
	struct rtl_rig *rig = NULL;

	memset(src, 0, sizeof(src));
	for (unsigned i = 0; i < n; i++) {
		src[i].transport = &f[i].tr;
		src[i].name = i ? "b" : "a";
		src[i].stale_ns = stale_bound;
		if (i == 1 && reconnect_b) {
			src[i].reconnect_attempts = reconnect_b;
			src[i].reconnect_backoff_ns = 20 * MS;
		}
	}
	cr_assert_eq(rtl_rig_create(&rig, &rc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_rig_start(rig, &err), 0, "%s", err.msg);
	return rig;
}

static void wait_steps(struct seen *s, uint64_t n)
{
	int64_t end = rtl_time_now() + 5 * RTL_NS_PER_SEC;

	while (atomic_load(&s->steps) < n && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + MS);
}

static struct rtl_rig_source_counters src_stats(struct rtl_rig *rig, unsigned i)
{
	struct rtl_rig_source_counters c = { .size = sizeof(c) };

	cr_assert_eq(rtl_rig_source_stats(rig, i, &c), 0);
	return c;
}

/* ---- rigs ----------------------------------------------------------------------------------- */

Test(rig, the_step_sees_every_source_and_counts_what_it_did_not_see, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_rig_source_counters b;

	fake_init(&f[0], 4 * MS);
	fake_init(&f[1], 1 * MS); /* four frames of b per step */
	rig = make_rig(f, 2, 0, 0, RTL_RIG_STOP_ALL, &s);
	wait_steps(&s, 100);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	b = src_stats(rig, 1);
	cr_expect_geq(s.steps, 100);
	cr_expect(s.any[1]);
	cr_expect_not(s.negative_age);
	/* every frame of b between the first and the last the step saw was
	 * either seen or counted as unseen */
	cr_expect_eq(s.fresh[1] + s.unseen[1], s.last_seq[1] - s.first_seq[1] + 1,
		     "%llu fresh + %llu unseen != frames %llu..%llu",
		     (unsigned long long)s.fresh[1], (unsigned long long)s.unseen[1],
		     (unsigned long long)s.first_seq[1], (unsigned long long)s.last_seq[1]);
	cr_expect_gt(s.unseen[1], s.fresh[1], "b runs 4x faster: most of its frames go unseen");
	cr_expect_eq(b.taken, s.fresh[1]);
	cr_expect_eq(b.caused, 0);
	cr_expect_eq(src_stats(rig, 0).stopped, 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

/* A source lost under each policy. */
static void lose_source(enum rtl_rig_policy policy)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_rig_source_counters a, b;
	uint64_t at_loss;
	int safe_before, ret;

	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	rig = make_rig(f, 2, 0, 0, policy, &s);
	wait_steps(&s, 50);
	safe_before = atomic_load(&f[0].safe_sends);
	atomic_store(&f[1].close_now, 1); /* b's controller goes away */
	at_loss = atomic_load(&s.steps);
	if (policy == RTL_RIG_STOP_SOURCE) {
		wait_steps(&s, at_loss + 200);
		cr_expect_not(rtl_rig_stopping(rig), "the other robot goes on");
		cr_expect_eq(atomic_load(&s.stopped0), 0);
		cr_expect_eq(atomic_load(&s.stopped1), 1);
		cr_expect_eq(atomic_load(&s.live1), 0);
		cr_expect_eq(s.wrong_commands, 0, "commands given exactly to the sources not lost");
		rtl_rig_stop(rig);
	}
	ret = rtl_rig_join(rig);
	a = src_stats(rig, 0);
	b = src_stats(rig, 1);
	cr_expect_eq(b.caused, 1, "the lost source is named as the cause");
	cr_expect_eq(b.lost, 1);
	cr_expect_eq(a.caused, 0);
	if (policy == RTL_RIG_STOP_ALL) {
		cr_expect_lt(ret, 0, "the rig ends: a source ended under stop-all");
		cr_expect_eq(a.stopped, 1, "the other robot was stopped by the policy");
		cr_expect_gt(atomic_load(&f[0].safe_sends), safe_before,
			     "and got its safe package");
	} else {
		cr_expect_eq(ret, 0);
		cr_expect_eq(a.stopped, 0);
		cr_expect_gt(atomic_load(&s.steps), at_loss + 100);
	}
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, a_lost_source_stops_every_robot_under_stop_all, .timeout = 20)
{
	lose_source(RTL_RIG_STOP_ALL);
}

Test(rig, a_lost_source_stops_only_itself_under_stop_source, .timeout = 20)
{
	lose_source(RTL_RIG_STOP_SOURCE);
}

Test(rig, a_reconnect_parks_the_step_and_stops_all_until_armed, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_rig_counters c = { .size = sizeof(c) };
	struct rtl_loop_counters lb = { .size = sizeof(lb) };
	int64_t end;
	uint64_t n;

	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	reconnect_b = 10;
	rig = make_rig(f, 2, 0, 0, RTL_RIG_STOP_ALL, &s);
	reconnect_b = 0;
	wait_steps(&s, 50);
	atomic_store(&f[1].comeback, 1);
	atomic_store(&f[1].close_now, 1); /* away for 50 ms, then back */
	end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	do {
		rtl_time_sleep_until(rtl_time_now() + 5 * MS);
		rtl_loop_stats(rtl_rig_loop(rig, 1), &lb);
	} while (lb.reconnects < 1 && rtl_time_now() < end);
	cr_assert_eq(lb.reconnects, 1, "b came back");
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 50);
	cr_expect_eq(rtl_rig_stats(rig, &c), 0);
	cr_expect_gt(c.parked, 0, "no step ran while b reconnected");
	cr_expect_eq(src_stats(rig, 1).lost, 1);
	cr_expect_eq(src_stats(rig, 1).caused, 1);
	cr_expect_eq(src_stats(rig, 0).stopped, 1);
	cr_expect_eq(atomic_load(&s.stopped0), 1, "back, but stopped until armed");
	cr_expect_not(rtl_rig_stopping(rig));
	cr_expect_eq(rtl_rig_arm(rig, RTL_RIG_TIMER, true), 0);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 20);
	cr_expect_eq(atomic_load(&s.stopped0), 0);
	cr_expect_eq(atomic_load(&s.stopped1), 0);
	cr_expect_eq(atomic_load(&s.live1), 1);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

/* Two fake sources at 2 ms, a rig of them clocked by the first with the
 * stale bound @bound and @policy, 50 steps in. */
static struct rtl_rig *running_rig(struct fake *f, enum rtl_rig_policy policy, int64_t bound,
				   struct seen *s)
{
	struct rtl_rig *rig;

	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	stale_bound = bound;
	rig = make_rig(f, 2, 0, 0, policy, s);
	stale_bound = 200 * MS;
	wait_steps(s, 50);
	return rig;
}

Test(rig, a_stale_clock_hands_the_step_to_the_timer_until_it_is_back, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_rig_counters c = { .size = sizeof(c) };
	uint64_t n, fresh_b;

	rig = running_rig(f, RTL_RIG_STOP_SOURCE, 50 * MS, &s);
	atomic_store(&f[0].pause, 1); /* the clock source silent for 300 ms */
	rtl_time_sleep_until(rtl_time_now() + 120 * MS);
	n = atomic_load(&s.steps);
	fresh_b = atomic_load(&s.fresh_b);
	rtl_time_sleep_until(rtl_time_now() + 100 * MS);
	cr_expect_gt(atomic_load(&s.steps), n + 20, "the other source's steps go on");
	cr_expect_gt(atomic_load(&s.fresh_b), fresh_b + 20, "and take its frames");
	cr_expect_eq(atomic_load(&s.stopped1), 0, "stop-source: b is not stopped");
	rtl_time_sleep_until(rtl_time_now() + 80 * MS);
	atomic_store(&f[0].pause, 0);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 50);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	rtl_rig_stats(rig, &c);
	cr_expect_gt(c.timer_ticks, 20, "the timer clocked the steps meanwhile");
	cr_expect_eq(src_stats(rig, 0).stale, 1);
	cr_expect_eq(src_stats(rig, 0).caused, 1);
	cr_expect_eq(src_stats(rig, 1).stopped, 0);
	cr_expect_eq(s.wrong_commands, 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, a_stale_source_stops_all_until_armed_again, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	uint64_t n;

	rig = running_rig(f, RTL_RIG_STOP_ALL, 50 * MS, &s);
	atomic_store(&f[1].pause, 1); /* silent for 150 ms: beyond the 50 ms bound */
	rtl_time_sleep_until(rtl_time_now() + 150 * MS);
	atomic_store(&f[1].pause, 0);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 50);
	cr_expect_eq(src_stats(rig, 1).stale, 1);
	cr_expect_eq(src_stats(rig, 1).caused, 1);
	cr_expect_eq(src_stats(rig, 0).stopped, 1);
	cr_expect_eq(atomic_load(&s.stopped0), 1, "stopped until armed");
	cr_expect_eq(rtl_rig_arm(rig, RTL_RIG_TIMER, true), 0);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 20);
	cr_expect_eq(atomic_load(&s.stopped0), 0, "armed again");
	cr_expect_eq(atomic_load(&s.stopped1), 0);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, a_non_finite_frame_is_refused_and_applies_the_policy, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	uint64_t n;

	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	rig = make_rig(f, 2, 0, 0, RTL_RIG_STOP_SOURCE, &s);
	wait_steps(&s, 50);
	atomic_store(&f[1].poison, 1);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 25); /* 50 ms: not yet stale (200 ms) */
	atomic_store(&f[1].pause, 0);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 25);
	cr_expect_eq(src_stats(rig, 1).nonfinite, 1);
	cr_expect_eq(src_stats(rig, 1).caused, 1);
	cr_expect_eq(src_stats(rig, 1).stopped, 1);
	cr_expect_eq(src_stats(rig, 0).stopped, 0, "stop-source: the other goes on");
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, a_late_step_stops_every_robot_once, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_loop_counters c[2] = { { .size = sizeof(c[0]) }, { .size = sizeof(c[1]) } };
	int safe[2];
	uint64_t n;

	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	rig = make_rig(f, 2, 0, 0, RTL_RIG_STOP_ALL, &s);
	wait_steps(&s, 50);
	for (int i = 0; i < 2; i++)
		safe[i] = atomic_load(&f[i].safe_sends);
	/* one step of 150 ms: over seven of the rig's 20 ms watchdog times */
	atomic_store(&s.stall_ms, 150);
	n = atomic_load(&s.steps);
	wait_steps(&s, n + 50);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	for (int i = 0; i < 2; i++) {
		rtl_loop_stats(rtl_rig_loop(rig, i), &c[i]);
		cr_expect_eq(c[i].watchdog, 1, "robot %d: one episode for one stall", i);
		cr_expect_geq(atomic_load(&f[i].safe_sends), safe[i] + 1,
			      "robot %d got its safe package", i);
		cr_expect_geq(c[i].stale, 1, "robot %d: the late step's commands discarded", i);
	}
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, the_timer_clocks_the_step_and_nothing_is_allocated_or_locked, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_rig_counters c = { .size = sizeof(c) };
	long allocs;

	cr_assert(rtl_test_alloc_selftest());
#ifndef RTL_TAP_SHIM
	{
		/* the positive control: a marked thread's lock counts */
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

		lock_marked = true;
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		lock_marked = false;
		cr_assert_eq(atomic_exchange(&locks_taken, 0), 1, "the lock count works");
	}
#endif
	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 3 * MS);
	rig = make_rig(f, 2, RTL_RIG_TIMER, 2 * MS, RTL_RIG_STOP_ALL, &s);
	wait_steps(&s, 20);
	atomic_store(&s.count_allocs, true);
	wait_steps(&s, 30);
	rtl_test_alloc_start();
	wait_steps(&s, 230);
	allocs = rtl_test_alloc_stop();
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	cr_expect_eq(rtl_rig_stats(rig, &c), 0);
	cr_expect_geq(c.timer_ticks, c.steps);
	cr_expect_geq(c.steps, 230);
	cr_expect_eq(allocs, 0, "%ld allocations in 200 steps of two sources", allocs);
#ifndef RTL_TAP_SHIM
	cr_expect_eq(atomic_load(&locks_taken), 0, "%ld locks taken by the rig's worker",
		     atomic_load(&locks_taken));
#endif
	cr_expect_gt(s.fresh[0], 0);
	cr_expect_gt(s.fresh[1], 0);
	rtl_rig_destroy(rig);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

/* Counter @name of the reader's, or UINT64_MAX. */
static uint64_t counter(struct rtl_telemetry_reader *r, const char *name)
{
	uint64_t v[RTL_TELEMETRY_MAX_COUNTERS];
	int n = rtl_telemetry_reader_counters(r, v, RTL_TELEMETRY_MAX_COUNTERS);

	for (int i = 0; i < n; i++)
		if (!strcmp(rtl_telemetry_reader_counter_name(r, (unsigned)i), name))
			return v[i];
	return UINT64_MAX;
}

Test(rig, the_rig_publishes_a_record_per_step_and_every_source_counters, .timeout = 20)
{
	struct fake f[2];
	struct seen s = { 0 };
	struct rtl_rig *rig;
	struct rtl_telemetry_config tc = { .size = sizeof(tc) };
	struct rtl_telemetry_reader *r;
	struct rtl_telemetry_info info;
	struct rtl_telemetry_record *rec = calloc(256, sizeof(*rec));
	struct rtl_rig_counters c = { .size = sizeof(c) };
	struct rtl_error err = { 0 };
	char name[64];
	int age_b = -1, live_b = -1, n, live_seen = 0;

	snprintf(name, sizeof(name), "test-rig-%d", (int)getpid());
	tc.name = name;
	tc.replace = true;
	cr_assert(rec != NULL);
	cr_assert_eq(rtl_telemetry_create(&telemetry, &tc, &err), 0, "%s", err.msg);
	fake_init(&f[0], 2 * MS);
	fake_init(&f[1], 2 * MS);
	rig = make_rig(f, 2, 0, 0, RTL_RIG_STOP_ALL, &s);
	cr_assert_eq(rtl_telemetry_reader_create(&r, name, &err), 0, "%s", err.msg);
	rtl_telemetry_reader_info(r, &info);
	for (unsigned i = 0; i < info.n_signals; i++) {
		const struct rtl_telemetry_signal_info *si = rtl_telemetry_reader_signal(r, i);

		if (!strcmp(si->name, "b.age_ms"))
			age_b = (int)si->first;
		if (!strcmp(si->name, "b.live"))
			live_b = (int)si->first;
	}
	cr_expect_geq(age_b, 0, "a signal per source: b.age_ms");
	cr_expect_geq(live_b, 0, "and b.live");
	wait_steps(&s, 100);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	rtl_rig_stats(rig, &c);
	rtl_rig_destroy(rig); /* the final figures stay in the telemetry */
	rtl_telemetry_reader_info(r, &info);
	cr_expect_eq(info.records, c.steps, "a record per step: %llu records, %llu steps",
		     (unsigned long long)info.records, (unsigned long long)c.steps);
	cr_expect_eq(counter(r, "rig.steps"), c.steps);
	cr_expect_eq(counter(r, "rig.b.taken"), s.fresh[1]);
	cr_expect_eq(counter(r, "rig.a.caused"), 0);
	n = rtl_telemetry_reader_read(r, rec, 256);
	cr_expect_gt(n, 50);
	for (int i = 0; i < n && age_b >= 0 && live_b >= 0; i++) {
		double age = rec[i].values[age_b];

		/* NaN: no frame of b yet (not live); else an age */
		cr_expect(isnan(age) ? rec[i].values[live_b] == 0.0 : age >= 0 && age < 1000,
			  "age %g ms", age);
		live_seen += rec[i].values[live_b] == 1.0;
	}
	cr_expect_gt(live_seen, 0);
	rtl_telemetry_reader_destroy(r);
	rtl_telemetry_destroy(telemetry);
	telemetry = NULL;
	free(rec);
	fake_fini(&f[0]);
	fake_fini(&f[1]);
}

Test(rig, configurations_that_cannot_work_are_refused)
{
	struct fake f = { 0 };
	struct rtl_rig_source src[2] = { { .transport = &f.tr }, { .transport = &f.tr } };
	struct rtl_rig_config rc = {
		.size = sizeof(rc), .sources = src, .n_sources = 2, .step = record_step
	};
	struct rtl_error err = { 0 };
	struct rtl_rig *rig = NULL;

	f.tr = (struct rtl_transport){ .size = sizeof(f.tr), .ops = &fake_ops, .impl = &f };
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL, "one transport, two sources");
	cr_expect(strstr(err.msg, "share one transport"), "%s", err.msg);
	rc.n_sources = 1;
	rc.clock = 3;
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL);
	rc.clock = RTL_RIG_TIMER;
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL, "a timer without a period");
	cr_expect(strstr(err.msg, "period_ns"), "%s", err.msg);
	rc.clock = 0;
	rc.n_sources = 0;
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL);
	rc.n_sources = RTL_RIG_MAX_SOURCES + 1;
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL);
	rc.n_sources = 1;
	rc.step = NULL;
	cr_expect_eq(rtl_rig_create(&rig, &rc, &err), -EINVAL);
	cr_expect_null(rig);
	cr_expect_eq(rtl_rig_arm(NULL, 0, true), -EINVAL);
}
