// SPDX-License-Identifier: MIT
/*
 * The control loop: rx thread, ring, worker, accounting, watchdog,
 * reconnect. The design note is in <rtloop/loop.h>; this file adds the
 * reasoning at the lines where it matters.
 */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/json.h>
#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/motion.h>
#include <rtloop/ring.h>
#include <rtloop/stat.h>
#include <rtloop/thread.h>
#include <rtloop/time.h>

#include "rtl_trace.h"

#define DEFAULT_RING 64
#define DEFAULT_RX_PRIO 90
#define DEFAULT_WORKER_PRIO 80
#define DEFAULT_WATCHDOG 3
#define DEFAULT_BACKOFF_NS (100 * RTL_NS_PER_MS)
#define MAX_BACKOFF_NS (2 * RTL_NS_PER_SEC)
/* The worker re-checks the stop flag at least this often while asleep. */
#define IDLE_WAKE_NS (100 * RTL_NS_PER_MS)
#define PREFAULT_STACK (128 * 1024)
/* Frames of receive times the watchdog remembers (a power of two); the
 * watchdog may span at most this many periods. */
#define WATCHDOG_HISTORY 256

/* Single-writer counters: relaxed load + store, readable by anyone. */
struct counters {
	_Atomic uint64_t frames, ctrl_skipped, worker_skipped, ring_full, steps, overruns, sends,
		suppressed, would_block, rejected, watchdog, reconnects, rx_errors;
	/* Written by the worker (rtl_loop_note_motion()). */
	_Atomic uint64_t motion_timeouts, motion_losses, motion_limits, motion_stops;
	/* Written by the waiting thread (worker or external reader). */
	_Atomic uint64_t spin_hits, spin_time_ns;
};

struct rtl_loop {
	struct rtl_loop_config cfg;
	struct rtl_transport *t;

	/* The ring and its storage (allocated at the first start). */
	struct rtl_ring *ring;
	void *ring_storage;
	size_t ring_bytes;
	size_t slot_size;
	struct rtl_loop_frame *scratch; /* decode target when the ring is full */

	/* Wake-up event count and the worker's "going to sleep" flag. */
	_Atomic uint32_t events;
	_Atomic uint32_t sleeping;

	_Atomic int stop;
	_Atomic int result;
	_Atomic int armed;
	_Atomic int tx_owner; /* 0 free, 1 held */
	/* Sequence number + 1 of the last frame the worker finished: every
	 * frame below it is done (or skipped). */
	_Atomic uint64_t done_count;
	_Atomic int watchdog_on; /* safe commands sent, worker not back yet */
	/* When the running step started (0: none running) and when the last
	 * one did, for inline mode's watchdog thread. */
	_Atomic int64_t step_begin_ns, last_begin_ns;

	struct rtl_thread rx, worker;
	bool rx_running, worker_running, started;
	int cpu_latency_fd; /* /dev/cpu_dma_latency held while running, or -1 */

	/* rx thread state. */
	uint64_t seq;
	int64_t last_rx_ns;
	/* watchdog_periods periods; 0: off. Set at connect (on the rx thread
	 * after a reconnect); atomic because inline mode's watchdog thread
	 * reads it too. */
	_Atomic int64_t watchdog_ns;
	/* The transport's period, for the worker's overrun count: atomic
	 * because a reconnect on the rx thread may change it. */
	_Atomic int64_t period_ns;
	/* Receive time of frame seq at [seq % WATCHDOG_HISTORY]: the
	 * watchdog's view of how long the oldest unfinished frame waits. */
	int64_t rx_times[WATCHDOG_HISTORY];

	/* Worker state: the frame being stepped (for rtloop:motion_event),
	 * and the receive time of the last frame taken (the spin window). */
	uint64_t step_seq;
	int64_t taken_rx_ns;

	/* External-loop state. */
	bool holding;
	uint64_t held_seq;
	int64_t last_read_start;

	/* First rejection reason, published once. */
	_Atomic int reject_noted;
	char reject_why[160];

	struct counters c;
	struct rtl_hist *hist; /* RTL_LOOP_H_COUNT of them */
	char rt_notes[4096];
};

static const char *const hist_names[RTL_LOOP_H_COUNT] = {
	[RTL_LOOP_H_RX_TO_STEP] = "rx_to_step",
	[RTL_LOOP_H_STEP] = "step",
	[RTL_LOOP_H_STEP_TO_SEND] = "step_to_send",
	[RTL_LOOP_H_INTERARRIVAL] = "interarrival",
	[RTL_LOOP_H_WAKE] = "wake",
};

static void note(struct rtl_loop *loop, const char *msg)
{
	size_t len = strlen(loop->rt_notes);

	snprintf(loop->rt_notes + len, sizeof(loop->rt_notes) - len, "%s\n", msg);
	rtl_log(RTL_LOG_WARN, "%s", msg);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts = rtl_time_to_timespec(timeout_ns > 0 ? timeout_ns : 0);

	/* Returns at once (EAGAIN) if *word != val: a commit we raced. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* ---- set-up ------------------------------------------------------------------------ */

RTL_API const char *rtl_loop_hist_name(enum rtl_loop_hist_id id)
{
	return (unsigned)id < RTL_LOOP_H_COUNT ? hist_names[id] : "unknown";
}

static int fail(struct rtl_rt_error *err, int code, const char *msg)
{
	rtl_log(RTL_LOG_ERROR, "%s", msg);
	return rtl_rt_error_set(err, code, "%s", msg);
}

/* The NUMA node of the worker's CPU, or -1: where the memory it reads goes. */
static int worker_node(const struct rtl_loop_config *cfg)
{
	int node = cfg->worker_cpu >= 0 ? rtl_mem_cpu_node(cfg->worker_cpu) : -1;

	return node >= 0 ? node : -1;
}

static int validate(const struct rtl_loop_config *cfg, struct rtl_rt_error *err)
{
	const struct rtl_transport *t = cfg->transport;

	if (!t || !t->ops || !t->ops->connect || !t->ops->recv || !t->ops->next || !t->ops->send ||
	    !t->ops->shutdown || !t->ops->disconnect)
		return fail(err, -EINVAL,
			    "loop: the transport is missing or lacks a required operation "
			    "(connect, recv, next, send, shutdown, disconnect)");
	if (cfg->ring_capacity & (cfg->ring_capacity - 1))
		return fail(err, -EINVAL,
			    "loop: ring_capacity must be a power of two (or 0 for the default)");
	if (cfg->inline_step && !cfg->step)
		return fail(err, -EINVAL,
			    "loop: inline_step needs a step function (with the external-loop "
			    "API your own thread runs the step: leave inline_step false)");
	if ((unsigned)cfg->rt_mode > RTL_LOOP_RT_OFF)
		return fail(err, -EINVAL, "loop: unknown rt_mode");
	if (cfg->watchdog_periods > WATCHDOG_HISTORY / 2)
		return fail(err, -EINVAL,
			    "loop: watchdog_periods must be at most 128 (or -1: off)");
	if (cfg->spin_ns < 0 || cfg->spin_lead_ns < 0 || cfg->reconnect_attempts < 0 ||
	    cfg->reconnect_backoff_ns < 0)
		return fail(err, -EINVAL,
			    "loop: spin_ns, spin_lead_ns, reconnect_attempts and "
			    "reconnect_backoff_ns must not be negative");
	return 0;
}

RTL_API int rtl_loop_create(struct rtl_loop **out, const struct rtl_loop_config *cfg,
			    struct rtl_rt_error *err)
{
	struct rtl_loop *loop;
	void *mem;
	int ret;

	if (!out || !cfg)
		return fail(err, -EINVAL, "loop: no configuration");
	ret = validate(cfg, err);
	if (ret < 0)
		return ret;
	loop = calloc(1, sizeof(*loop));
	if (!loop)
		return fail(err, -ENOMEM, "loop: out of memory");
	loop->cfg = *cfg;
	loop->t = cfg->transport;
	if (!loop->cfg.ring_capacity)
		loop->cfg.ring_capacity = DEFAULT_RING;
	if (!loop->cfg.rx_priority)
		loop->cfg.rx_priority = DEFAULT_RX_PRIO;
	if (!loop->cfg.worker_priority)
		loop->cfg.worker_priority = DEFAULT_WORKER_PRIO;
	if (!loop->cfg.watchdog_periods)
		loop->cfg.watchdog_periods = DEFAULT_WATCHDOG;
	if (!loop->cfg.reconnect_backoff_ns)
		loop->cfg.reconnect_backoff_ns = DEFAULT_BACKOFF_NS;
	ret = rtl_mem_alloc(&mem, sizeof(struct rtl_hist) * RTL_LOOP_H_COUNT, worker_node(cfg));
	if (ret < 0) {
		free(loop);
		return fail(err, ret, "loop: cannot allocate the histograms");
	}
	loop->hist = mem;
	atomic_init(&loop->armed, !cfg->start_disarmed);
	loop->cpu_latency_fd = -1;
	*out = loop;
	return 0;
}

/* The ring is sized once the transport knows its frame size. */
static int make_ring(struct rtl_loop *loop, struct rtl_rt_error *err)
{
	size_t values = (loop->t->values_size + 7) & ~(size_t)7;
	size_t slot = sizeof(struct rtl_loop_frame) + values;
	int node;
	void *mem;
	int ret;

	if (loop->ring && slot <= loop->slot_size)
		return 0;
	if (loop->ring)
		return fail(
			err, -EMSGSIZE,
			"loop: the transport's frames grew after a reconnect; restart the loop");
	node = worker_node(&loop->cfg);
	loop->slot_size = slot;
	loop->ring_bytes = rtl_ring_storage_size(loop->cfg.ring_capacity, slot);
	/* Storage on the worker's node: the consumer reads every slot. */
	ret = rtl_mem_alloc(&loop->ring_storage, loop->ring_bytes + slot, node);
	if (ret < 0)
		return fail(err, ret, "loop: cannot allocate the ring");
	ret = rtl_mem_alloc(&mem, sizeof(struct rtl_ring) + RTL_RING_ALIGN, node);
	if (ret < 0)
		return fail(err, ret, "loop: cannot allocate the ring");
	/* rtl_mem_alloc returns page-aligned memory: aligned for the ring. */
	loop->ring = mem;
	/* Slots are multiples of 8 bytes: the scratch frame is aligned. */
	loop->scratch = (struct rtl_loop_frame *)(void *)((unsigned char *)loop->ring_storage +
							  loop->ring_bytes);
	return rtl_ring_init(loop->ring, loop->ring_storage, loop->cfg.ring_capacity, slot);
}

/* After every connect: what depends on the transport's frame size and
 * period is derived here, not per frame. */
static int connected(struct rtl_loop *loop, struct rtl_rt_error *err)
{
	atomic_store_explicit(&loop->watchdog_ns,
			      loop->cfg.watchdog_periods > 0 && loop->t->period_ns > 0
				      ? (int64_t)loop->cfg.watchdog_periods * loop->t->period_ns
				      : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&loop->period_ns, loop->t->period_ns, memory_order_relaxed);
	return make_ring(loop, err);
}

/* ---- transmit ownership ----------------------------------------------------------------- */

static bool tx_try(struct rtl_loop *loop)
{
	int expect = 0;

	/* acq_rel: the winner sees everything the previous owner did on the
	 * transport's transmit state, and publishes its own on release. */
	return atomic_compare_exchange_strong_explicit(&loop->tx_owner, &expect, 1,
						       memory_order_acq_rel, memory_order_relaxed);
}

static void tx_release(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->tx_owner, 0, memory_order_release);
}

/* Slow path (reconnect): wait for the transmit side. Its owner holds it
 * only for the length of one send, so this waits microseconds. */
static void tx_take(struct rtl_loop *loop)
{
	while (!tx_try(loop))
		rtl_time_sleep_until(rtl_time_now() + 50 * RTL_NS_PER_US);
}

/* Send the safe command set if the transmit side is free. */
static int send_safe(struct rtl_loop *loop)
{
	int ret;

	if (!loop->t->ops->send_safe)
		return -ENOTSUP;
	if (!tx_try(loop))
		return -EAGAIN;
	ret = loop->t->ops->send_safe(loop->t);
	tx_release(loop);
	return ret;
}

/* The worker's (or the external loop's) send: check, arm, coalesce. */
static int do_send(struct rtl_loop *loop, uint64_t seq)
{
	struct rtl_transport *t = loop->t;
	int ret;

	if (!atomic_load_explicit(&loop->armed, memory_order_relaxed)) {
		rtl_stat_add(&loop->c.suppressed, 1);
		return 0;
	}
	if (t->ops->check) {
		char why[sizeof(loop->reject_why)];

		if (t->ops->check(t, why, sizeof(why)) < 0) {
			rtl_stat_add(&loop->c.rejected, 1);
			if (!atomic_load_explicit(&loop->reject_noted, memory_order_relaxed)) {
				memcpy(loop->reject_why, why, sizeof(why));
				loop->reject_why[sizeof(why) - 1] = '\0';
				/* release: the text is complete before the flag. */
				atomic_store_explicit(&loop->reject_noted, 1, memory_order_release);
			}
			send_safe(loop);
			return 0;
		}
	}
	if (!tx_try(loop)) {
		rtl_stat_add(&loop->c.would_block, 1);
		return -EAGAIN;
	}
	ret = t->ops->send(t);
	tx_release(loop);
	if (ret > 0) {
		rtl_stat_add(&loop->c.sends, 1);
		rtl_trace_package_sent(seq, 0, (uint32_t)ret);
	} else if (ret == 0) {
		rtl_stat_add(&loop->c.suppressed, 1);
		rtl_trace_package_suppressed(seq, 0, 0);
	} else if (ret == -EAGAIN) {
		rtl_stat_add(&loop->c.would_block, 1);
	}
	return ret;
}

/* ---- rx thread ---------------------------------------------------------------------------- */

static void wake_worker(struct rtl_loop *loop)
{
	/* seq_cst on both words: with the worker's seq_cst read of the
	 * event count and store of "sleeping", either it sees our bump or we
	 * see it asleep (see wait_frame()). */
	atomic_fetch_add_explicit(&loop->events, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&loop->sleeping, memory_order_seq_cst))
		futex_wake(&loop->events);
}

/*
 * The worker is late when the oldest frame it has not finished has waited
 * more than N periods. Measuring from that frame's arrival (not from the
 * worker's last step) keeps a quiet controller from looking like a stuck
 * worker: after a gap in the stream, the first frame starts the clock.
 */
/* A stall: send the safe set, once per episode (until the worker finishes
 * a step again). Busy or would block: the next check tries again. */
static void watchdog_fire(struct rtl_loop *loop, uint64_t seq, uint32_t pending)
{
	if (atomic_load_explicit(&loop->watchdog_on, memory_order_relaxed))
		return;
	if (send_safe(loop) < 0)
		return;
	atomic_store_explicit(&loop->watchdog_on, 1, memory_order_relaxed);
	rtl_stat_add(&loop->c.watchdog, 1);
	rtl_trace_watchdog_fired(seq, pending);
}

static void watchdog_check(struct rtl_loop *loop, int64_t now, uint64_t seq)
{
	uint64_t done = atomic_load_explicit(&loop->done_count, memory_order_relaxed);
	int64_t limit = atomic_load_explicit(&loop->watchdog_ns, memory_order_relaxed);
	int64_t oldest;

	if (!limit || done > seq)
		return;
	/* More frames pending than remembered: the oldest is older still. */
	oldest = seq - done >= WATCHDOG_HISTORY ? INT64_MIN / 2
						: loop->rx_times[done % WATCHDOG_HISTORY];
	if (now - oldest > limit)
		watchdog_fire(loop, seq, (uint32_t)((seq - done) + 1));
}

/* Sleep @ns in chunks of at most 50 ms, so that a stop is seen quickly. */
static void backoff_sleep(struct rtl_loop *loop, int64_t ns)
{
	int64_t end = rtl_time_now() + ns;
	int64_t now;

	while (!atomic_load(&loop->stop) && (now = rtl_time_now()) < end)
		rtl_time_sleep_until(end - now > 50 * RTL_NS_PER_MS ? now + 50 * RTL_NS_PER_MS
								    : end);
}

/* The connection is gone: reconnect (slow path) or end the loop. Returns
 * true when the rx thread may go on receiving. */
static bool reconnect(struct rtl_loop *loop, int why)
{
	int64_t backoff = loop->cfg.reconnect_backoff_ns;
	struct rtl_rt_error err = { 0 };
	int ret = why;

	/* Own the transmit side for the whole reconnect: the transport's
	 * send state is replaced under the worker's feet otherwise. */
	tx_take(loop);
	/* Commands stay off until the application says otherwise. */
	atomic_store(&loop->armed, 0);
	loop->t->ops->disconnect(loop->t);
	for (int i = 1; i <= loop->cfg.reconnect_attempts && !atomic_load(&loop->stop); i++) {
		rtl_log(RTL_LOG_WARN, "loop: connection lost (%s); reconnect attempt %d of %d",
			strerror(why < 0 ? -why : ECONNRESET), i, loop->cfg.reconnect_attempts);
		backoff_sleep(loop, backoff);
		if (atomic_load(&loop->stop))
			break;
		ret = loop->t->ops->connect(loop->t, &err);
		rtl_trace_reconnect((uint32_t)i, ret);
		if (ret == 0) {
			ret = connected(loop, &err);
			if (ret < 0)
				break;
			rtl_stat_add(&loop->c.reconnects, 1);
			tx_release(loop);
			rtl_log(RTL_LOG_INFO, "loop: reconnected; commands are disarmed until "
					      "rtl_loop_arm()");
			return true;
		}
		backoff = backoff * 2 > MAX_BACKOFF_NS ? MAX_BACKOFF_NS : backoff * 2;
	}
	tx_release(loop);
	if (!atomic_load(&loop->stop)) {
		int expect = 0;

		atomic_compare_exchange_strong(&loop->result, &expect, ret < 0 ? ret : -ECONNRESET);
	}
	return false;
}

static void stop_all(struct rtl_loop *loop)
{
	atomic_store(&loop->stop, 1);
	atomic_fetch_add(&loop->events, 1);
	futex_wake(&loop->events);
}

static int run_inline(struct rtl_loop *loop); /* below, with the worker */

static void *rx_main(void *arg)
{
	struct rtl_loop *loop = arg;
	struct rtl_transport *t = loop->t;

	while (!atomic_load_explicit(&loop->stop, memory_order_relaxed)) {
		int n = t->ops->recv(t);
		int64_t now;

		if (n <= 0) {
			if (atomic_load(&loop->stop) || !reconnect(loop, n < 0 ? n : -ECONNRESET))
				break;
			continue;
		}
		now = rtl_time_now();
		for (;;) {
			struct rtl_loop_frame *slot = rtl_ring_reserve(loop->ring);
			struct rtl_loop_frame *f = slot ? slot : loop->scratch;
			int r;

			/* Before next(): the transport's "now", so it reads no
			 * clock per frame. */
			f->rx_ns = now;
			r = t->ops->next(t, f, loop->slot_size - sizeof(*f));

			if (r == 0)
				break;
			if (r < 0) {
				rtl_stat_add(&loop->c.rx_errors, 1);
				if (!reconnect(loop, r))
					goto out;
				break;
			}
			f->seq = loop->seq++;
			loop->rx_times[f->seq % WATCHDOG_HISTORY] = now;
			/* Both events follow the decode (the frame's seq is known
			 * only then); the time recv() returned is in rx_ns. */
			rtl_trace_frame_received(f->seq, f->ctrl_time, f->rx_ns, f->size);
			rtl_trace_frame_decoded(f->seq, 0);
			rtl_stat_add(&loop->c.frames, 1);
			if (loop->last_rx_ns)
				rtl_hist_record(&loop->hist[RTL_LOOP_H_INTERARRIVAL],
						now - loop->last_rx_ns);
			loop->last_rx_ns = now;
			if (f->ctrl_skipped) {
				rtl_stat_add(&loop->c.ctrl_skipped, f->ctrl_skipped);
				rtl_trace_skipped(f->seq, f->ctrl_skipped,
						  RTL_TRACE_SKIP_CONTROLLER);
			}
			if (!slot) {
				rtl_stat_add(&loop->c.ring_full, 1);
				rtl_trace_skipped(f->seq, 1, RTL_TRACE_SKIP_RING_FULL);
			} else {
				f->commit_ns = rtl_time_now();
				rtl_ring_commit(loop->ring);
				rtl_trace_frame_committed(f->seq, rtl_ring_size(loop->ring));
				if (!loop->cfg.inline_step)
					wake_worker(loop);
			}
			/* Inline mode: the watchdog thread watches the step. */
			if (!loop->cfg.inline_step)
				watchdog_check(loop, now, f->seq);
		}
		if (loop->cfg.inline_step && run_inline(loop) < 0)
			break;
	}
out:
	stop_all(loop);
	return NULL;
}

/* ---- worker --------------------------------------------------------------------------------- */

/* Take a frame: the oldest (every_frame) or the newest. */
static const struct rtl_loop_frame *take(struct rtl_loop *loop)
{
	uint32_t skipped = 0;
	const struct rtl_loop_frame *f;

	if (loop->cfg.every_frame)
		return rtl_ring_peek(loop->ring);
	f = rtl_ring_peek_newest(loop->ring, &skipped);
	if (f && skipped) {
		rtl_stat_add(&loop->c.worker_skipped, skipped);
		rtl_trace_skipped(f->seq, skipped, RTL_TRACE_SKIP_WORKER);
	}
	return f;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

RTL_API struct rtl_loop_spin rtl_loop_spin_window(int64_t wait_start, int64_t last_rx_ns,
						  int64_t period_ns, int64_t spin_ns,
						  int64_t spin_lead_ns)
{
	struct rtl_loop_spin w = { wait_start, wait_start };

	if (spin_ns < 0 || spin_lead_ns < 0)
		return w;
	if (!spin_lead_ns) {
		w.until = wait_start + spin_ns;
		return w;
	}
	if (period_ns <= 0 || last_rx_ns <= 0)
		return w;
	w.from = last_rx_ns + period_ns - spin_lead_ns;
	w.until = w.from + (spin_ns ? spin_ns : 2 * spin_lead_ns);
	if (w.from < wait_start)
		w.from = wait_start;
	return w;
}

/* Spin from @now until @until for a frame. Counts the time spun inside the
 * window (a preemption that carries us past @until is not spinning). */
static const struct rtl_loop_frame *spin_for_frame(struct rtl_loop *loop, int64_t now,
						   int64_t until)
{
	const struct rtl_loop_frame *f = NULL;
	int64_t start = now;

	while (now < until) {
		f = take(loop);
		if (f) {
			rtl_stat_add(&loop->c.spin_hits, 1);
			break;
		}
		cpu_relax();
		now = rtl_time_now();
	}
	rtl_stat_add(&loop->c.spin_time_ns, (uint64_t)((now < until ? now : until) - start));
	return f;
}

/*
 * Wait for a frame until @deadline (absolute ns; INT64_MAX: until stop).
 * Sleep on the event count, spinning inside the window that
 * rtl_loop_spin_window() gives.
 */
static const struct rtl_loop_frame *wait_frame(struct rtl_loop *loop, int64_t deadline)
{
	const struct rtl_loop_frame *f = take(loop);
	struct rtl_loop_spin w;
	int64_t now;

	/* A frame that is already there costs no clock read. */
	if (f)
		goto out;
	now = rtl_time_now();
	w = rtl_loop_spin_window(now, loop->taken_rx_ns,
				 atomic_load_explicit(&loop->period_ns, memory_order_relaxed),
				 loop->cfg.spin_ns, loop->cfg.spin_lead_ns);
	while (!atomic_load_explicit(&loop->stop, memory_order_relaxed) && now < deadline) {
		int64_t wake;
		uint32_t seen;

		if (now >= w.from && now < w.until) {
			f = spin_for_frame(loop, now, w.until < deadline ? w.until : deadline);
			if (f)
				break;
		} else {
			/* Sleep until the window opens, the deadline, or the
			 * idle re-check of the stop flag, whichever comes first. */
			wake = now + IDLE_WAKE_NS;
			if (deadline < wake)
				wake = deadline;
			if (w.from > now && w.from < w.until && w.from < wake)
				wake = w.from;
			/*
			 * No lost wake-up: "seen" is read (seq_cst, so also
			 * acquire) before we announce sleep. A commit whose event
			 * bump we read is visible to the take() below. A later
			 * bump changes the word, so futex_wait returns at once;
			 * and the rx thread, which bumps before it reads
			 * "sleeping" (both seq_cst), either sees us asleep and
			 * wakes us or bumped before our announcement.
			 */
			seen = atomic_load_explicit(&loop->events, memory_order_seq_cst);
			atomic_store_explicit(&loop->sleeping, 1, memory_order_seq_cst);
			f = take(loop);
			if (!f && !atomic_load(&loop->stop))
				futex_wait(&loop->events, seen, wake - rtl_time_now());
			atomic_store_explicit(&loop->sleeping, 0, memory_order_relaxed);
			if (f)
				break;
		}
		f = take(loop);
		if (f)
			break;
		now = rtl_time_now();
	}
out:
	if (f)
		loop->taken_rx_ns = f->rx_ns;
	return f;
}

/* Book-keeping when a frame starts being processed. */
static void frame_started(struct rtl_loop *loop, const struct rtl_loop_frame *f, int64_t now)
{
	int64_t wake = now - f->commit_ns;

	rtl_hist_record(&loop->hist[RTL_LOOP_H_WAKE], wake);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_RX_TO_STEP], now - f->rx_ns);
	rtl_trace_worker_woke(f->seq, wake);
	loop->step_seq = f->seq;
}

static void step_done(struct rtl_loop *loop, uint64_t seq)
{
	atomic_store_explicit(&loop->done_count, seq + 1, memory_order_relaxed);
	atomic_store_explicit(&loop->watchdog_on, 0, memory_order_relaxed);
}

/*
 * Run the step for @f, send, release the slot. On a step error: record it,
 * stop the loop and return it (< 0). Worker and inline rx thread alike.
 */
static int run_step(struct rtl_loop *loop, const struct rtl_loop_frame *f)
{
	int64_t start = rtl_time_now(), end, period;
	uint64_t seq;
	int ret;

	frame_started(loop, f, start);
	atomic_store_explicit(&loop->step_begin_ns, start, memory_order_relaxed);
	atomic_store_explicit(&loop->last_begin_ns, start, memory_order_relaxed);
	rtl_trace_step_started(f->seq);
	ret = loop->cfg.step(loop, f, loop->cfg.user);
	end = rtl_time_now();
	rtl_trace_step_finished(f->seq, end - start);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP], end - start);
	rtl_stat_add(&loop->c.steps, 1);
	period = atomic_load_explicit(&loop->period_ns, memory_order_relaxed);
	if (period > 0 && end - start > period)
		rtl_stat_add(&loop->c.overruns, 1);
	if (ret < 0) {
		int expect = 0;

		rtl_ring_release(loop->ring);
		atomic_store_explicit(&loop->step_begin_ns, 0, memory_order_relaxed);
		atomic_compare_exchange_strong(&loop->result, &expect, ret);
		stop_all(loop);
		loop->t->ops->shutdown(loop->t);
		return ret;
	}
	do_send(loop, f->seq);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP_TO_SEND], rtl_time_now() - start);
	seq = f->seq; /* the slot is the producer's after the release */
	rtl_ring_release(loop->ring);
	atomic_store_explicit(&loop->step_begin_ns, 0, memory_order_relaxed);
	step_done(loop, seq);
	return 0;
}

static void *worker_main(void *arg)
{
	struct rtl_loop *loop = arg;

	while (!atomic_load_explicit(&loop->stop, memory_order_relaxed)) {
		const struct rtl_loop_frame *f = wait_frame(loop, INT64_MAX);

		if (f && run_step(loop, f) < 0)
			break;
	}
	return NULL;
}

/* Inline mode, on the rx thread: step what the last receive committed
 * (the newest frame, or each one with every_frame). */
static int run_inline(struct rtl_loop *loop)
{
	const struct rtl_loop_frame *f;

	while ((f = take(loop)))
		if (run_step(loop, f) < 0)
			return -1;
	return 0;
}

/*
 * When the watchdog thread looks next: @limit after the step that counts
 * (the running one, else the last one), plus half a period. Steps start
 * when frames arrive, so the look falls between two frames, away from the
 * receive-step-send path: a wake-up there would make the rx thread's own
 * wake-up an interrupt to a busy CPU. With no step for a while, once per
 * @limit, on the same phase.
 */
static int64_t watch_next(int64_t now, int64_t base, int64_t limit, int64_t period)
{
	int64_t next = (base ? base : now) + limit + period / 2;

	if (next <= now)
		next += ((now - next) / limit + 1) * limit;
	return next;
}

/*
 * Inline mode's watchdog, on a thread of its own (the rx thread is the one
 * that stalls): a step running for longer than the watchdog time sends the
 * safe commands, once per episode. It sleeps on the event count, which only
 * stop_all() bumps in this mode.
 */
static void *watch_main(void *arg)
{
	struct rtl_loop *loop = arg;

	while (!atomic_load_explicit(&loop->stop, memory_order_relaxed)) {
		uint32_t seen = atomic_load_explicit(&loop->events, memory_order_seq_cst);
		int64_t period = atomic_load_explicit(&loop->period_ns, memory_order_relaxed);
		int64_t limit = atomic_load_explicit(&loop->watchdog_ns, memory_order_relaxed);
		int64_t begin = atomic_load_explicit(&loop->step_begin_ns, memory_order_relaxed);
		int64_t now = rtl_time_now();

		if (limit && begin && now - begin > limit)
			watchdog_fire(loop,
				      atomic_load_explicit(&loop->done_count, memory_order_relaxed),
				      1);
		if (atomic_load_explicit(&loop->stop, memory_order_relaxed))
			break;
		if (!limit) {
			futex_wait(&loop->events, seen, IDLE_WAKE_NS);
			continue;
		}
		/* During a stall (safe set sent, or the transmit side busy):
		 * again on the same phase, at most a watchdog time later. */
		futex_wait(&loop->events, seen,
			   watch_next(now,
				      begin ? begin
					    : atomic_load_explicit(&loop->last_begin_ns,
								   memory_order_relaxed),
				      limit, period) -
				   now);
	}
	return NULL;
}

/* ---- start, stop ------------------------------------------------------------------------------
 */

static int spawn(struct rtl_loop *loop, struct rtl_thread *th, const char *name, int prio, int cpu,
		 void *(*fn)(void *), struct rtl_rt_error *err)
{
	struct rtl_thread_attr a = {
		.name = name,
		.policy = SCHED_FIFO,
		.priority = prio,
		.cpu = cpu,
		.prefault_stack = PREFAULT_STACK,
		.best_effort = loop->cfg.rt_mode == RTL_LOOP_RT_DEGRADE,
	};
	int ret;

	if (loop->cfg.rt_mode == RTL_LOOP_RT_OFF) {
		a.policy = SCHED_OTHER;
		a.priority = 0;
	}
	ret = rtl_thread_create(th, &a, fn, loop);
	if (ret < 0) {
		if (err)
			*err = th->err;
		return ret;
	}
	if (th->degraded) {
		char msg[sizeof(th->err.msg) + 64];

		snprintf(msg, sizeof(msg), "%s thread runs under SCHED_OTHER: %s", name,
			 th->err.msg);
		note(loop, msg);
	}
	return 0;
}

RTL_API int rtl_loop_start(struct rtl_loop *loop, struct rtl_rt_error *err)
{
	struct rtl_rt_error e = { 0 };
	int ret;

	if (!loop)
		return fail(err, -EINVAL, "loop: NULL");
	if (loop->started)
		return fail(err, -EALREADY, "loop: already started");
	if (loop->cfg.rt_mode != RTL_LOOP_RT_OFF) {
		ret = rtl_mem_lock_all(&e);
		if (ret < 0) {
			if (loop->cfg.rt_mode == RTL_LOOP_RT_REQUIRE) {
				if (err)
					*err = e;
				return ret;
			}
			note(loop, e.msg);
		}
		/* Shallow C-states while the loop runs: exits from deep ones
		 * cost 100 us and more. */
		loop->cpu_latency_fd = rtl_thread_hold_cpu_latency(0, &e);
		if (loop->cpu_latency_fd < 0)
			note(loop, e.msg);
	}
	ret = loop->t->ops->connect(loop->t, &e);
	if (ret < 0) {
		if (err)
			*err = e;
		return ret;
	}
	ret = connected(loop, err);
	if (ret < 0)
		goto err_disconnect;
	atomic_store(&loop->stop, 0);
	atomic_store(&loop->result, 0);
	atomic_store(&loop->done_count, loop->seq);
	if (loop->cfg.step) {
		/* Inline mode steps on the rx thread; the second thread then
		 * only keeps the watchdog. */
		ret = spawn(loop, &loop->worker, loop->cfg.inline_step ? "rtl-watch" : "rtl-worker",
			    loop->cfg.worker_priority, loop->cfg.worker_cpu,
			    loop->cfg.inline_step ? watch_main : worker_main, err);
		if (ret < 0)
			goto err_disconnect;
		loop->worker_running = true;
	}
	ret = spawn(loop, &loop->rx, "rtl-rx", loop->cfg.rx_priority, loop->cfg.rx_cpu, rx_main,
		    err);
	if (ret < 0)
		goto err_stop_worker;
	loop->rx_running = true;
	loop->started = true;
	return 0;

err_stop_worker:
	if (loop->worker_running) {
		stop_all(loop);
		rtl_thread_join(&loop->worker, NULL);
		loop->worker_running = false;
	}
err_disconnect:
	loop->t->ops->disconnect(loop->t);
	rtl_thread_release_cpu_latency(loop->cpu_latency_fd);
	loop->cpu_latency_fd = -1;
	return ret;
}

RTL_API void rtl_loop_stop(struct rtl_loop *loop)
{
	if (!loop)
		return;
	stop_all(loop);
	loop->t->ops->shutdown(loop->t);
}

RTL_API int rtl_loop_join(struct rtl_loop *loop)
{
	if (!loop || !loop->started)
		return -EINVAL;
	if (loop->rx_running)
		rtl_thread_join(&loop->rx, NULL);
	/* The rx thread has ended: make sure the worker ends too. */
	stop_all(loop);
	if (loop->worker_running)
		rtl_thread_join(&loop->worker, NULL);
	loop->rx_running = loop->worker_running = false;
	loop->started = false;
	if (loop->holding) {
		rtl_ring_release(loop->ring);
		loop->holding = false;
	}
	loop->t->ops->disconnect(loop->t);
	rtl_thread_release_cpu_latency(loop->cpu_latency_fd);
	loop->cpu_latency_fd = -1;
	return atomic_load(&loop->result);
}

RTL_API int rtl_loop_run(struct rtl_loop *loop, struct rtl_rt_error *err)
{
	int ret = rtl_loop_start(loop, err);

	return ret < 0 ? ret : rtl_loop_join(loop);
}

RTL_API void rtl_loop_destroy(struct rtl_loop *loop)
{
	if (!loop)
		return;
	if (loop->started) {
		rtl_loop_stop(loop);
		rtl_loop_join(loop);
	}
	if (loop->ring) {
		rtl_mem_free(loop->ring, sizeof(struct rtl_ring) + RTL_RING_ALIGN);
		rtl_mem_free(loop->ring_storage, loop->ring_bytes + loop->slot_size);
	}
	rtl_mem_free(loop->hist, sizeof(struct rtl_hist) * RTL_LOOP_H_COUNT);
	free(loop);
}

/* ---- external-loop API ---------------------------------------------------------------------- */

RTL_API const struct rtl_loop_frame *rtl_loop_read(struct rtl_loop *loop, int64_t timeout_ns)
{
	const struct rtl_loop_frame *f;
	int64_t now;

	if (!loop || !loop->started || loop->cfg.step)
		return NULL;
	if (loop->holding) {
		rtl_ring_release(loop->ring);
		loop->holding = false;
		step_done(loop, loop->held_seq);
	}
	now = rtl_time_now();
	if (loop->last_read_start)
		rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP], now - loop->last_read_start);
	f = wait_frame(loop, timeout_ns < 0 ? INT64_MAX : now + timeout_ns);
	if (!f)
		return NULL;
	now = rtl_time_now();
	frame_started(loop, f, now);
	loop->last_read_start = now;
	rtl_stat_add(&loop->c.steps, 1);
	loop->holding = true;
	loop->held_seq = f->seq;
	return f;
}

RTL_API int rtl_loop_write(struct rtl_loop *loop)
{
	int ret;

	if (!loop || !loop->started)
		return -EINVAL;
	ret = do_send(loop, loop->seq);
	if (loop->last_read_start)
		rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP_TO_SEND],
				rtl_time_now() - loop->last_read_start);
	return ret;
}

/* ---- queries ----------------------------------------------------------------------------------
 */

RTL_API void *rtl_loop_commands(struct rtl_loop *loop)
{
	return loop ? loop->t->commands : NULL;
}

RTL_API void rtl_loop_arm(struct rtl_loop *loop, bool armed)
{
	if (loop)
		atomic_store(&loop->armed, armed);
}

RTL_API bool rtl_loop_armed(const struct rtl_loop *loop)
{
	return loop && atomic_load(&loop->armed);
}

/* The motion API's event numbers are the loop's bit positions. */
_Static_assert(RTL_MOTION_EV_TIMEOUT == 0 && RTL_MOTION_EV_LOSS == 1 && RTL_MOTION_EV_LIMIT == 2 &&
		       RTL_MOTION_EV_STOPPED == 3,
	       "rtl_loop_note_motion() maps the bits of enum rtl_motion_event");

RTL_API void rtl_loop_note_motion(struct rtl_loop *loop, uint32_t events)
{
	struct counters *c;

	if (!loop || !events)
		return;
	c = &loop->c;
	if (events & (1u << RTL_MOTION_EV_TIMEOUT))
		rtl_stat_add(&c->motion_timeouts, 1);
	if (events & (1u << RTL_MOTION_EV_LOSS))
		rtl_stat_add(&c->motion_losses, 1);
	if (events & (1u << RTL_MOTION_EV_LIMIT))
		rtl_stat_add(&c->motion_limits, 1);
	if (events & (1u << RTL_MOTION_EV_STOPPED))
		rtl_stat_add(&c->motion_stops, 1);
	rtl_trace_motion_event(loop->step_seq, events);
}

RTL_API void rtl_loop_stats(const struct rtl_loop *loop, struct rtl_loop_stats *s)
{
	const struct counters *c;

	if (!loop || !s)
		return;
	c = &loop->c;
	*s = (struct rtl_loop_stats){
		.frames = rtl_stat_get(&c->frames),
		.ctrl_skipped = rtl_stat_get(&c->ctrl_skipped),
		.worker_skipped = rtl_stat_get(&c->worker_skipped),
		.ring_full = rtl_stat_get(&c->ring_full),
		.steps = rtl_stat_get(&c->steps),
		.overruns = rtl_stat_get(&c->overruns),
		.sends = rtl_stat_get(&c->sends),
		.suppressed = rtl_stat_get(&c->suppressed),
		.would_block = rtl_stat_get(&c->would_block),
		.rejected = rtl_stat_get(&c->rejected),
		.watchdog = rtl_stat_get(&c->watchdog),
		.reconnects = rtl_stat_get(&c->reconnects),
		.rx_errors = rtl_stat_get(&c->rx_errors),
		.motion_timeouts = rtl_stat_get(&c->motion_timeouts),
		.motion_losses = rtl_stat_get(&c->motion_losses),
		.motion_limits = rtl_stat_get(&c->motion_limits),
		.motion_stops = rtl_stat_get(&c->motion_stops),
		.spin_hits = rtl_stat_get(&c->spin_hits),
		.spin_time_ns = rtl_stat_get(&c->spin_time_ns),
	};
}

RTL_API const struct rtl_hist *rtl_loop_hist(const struct rtl_loop *loop, enum rtl_loop_hist_id id)
{
	if (!loop || (unsigned)id >= RTL_LOOP_H_COUNT)
		return NULL;
	return &loop->hist[id];
}

RTL_API const char *rtl_loop_rt_notes(const struct rtl_loop *loop)
{
	return loop ? loop->rt_notes : "";
}

/* The counters as (name, value) pairs, in report order. */
static size_t counter_list(const struct rtl_loop_stats *s, const char **names, uint64_t *v)
{
	size_t n = 0;

#define C(field)                   \
	do {                       \
		names[n] = #field; \
		v[n++] = s->field; \
	} while (0)
	C(frames);
	C(ctrl_skipped);
	C(worker_skipped);
	C(ring_full);
	C(steps);
	C(overruns);
	C(sends);
	C(suppressed);
	C(would_block);
	C(rejected);
	C(watchdog);
	C(reconnects);
	C(rx_errors);
	C(motion_timeouts);
	C(motion_losses);
	C(motion_limits);
	C(motion_stops);
	C(spin_hits);
	C(spin_time_ns);
#undef C
	return n;
}

RTL_API int rtl_loop_report(const struct rtl_loop *loop, FILE *f, bool json)
{
	struct rtl_loop_stats s;
	const char *names[sizeof(struct rtl_loop_stats) / sizeof(uint64_t)];
	uint64_t v[sizeof(struct rtl_loop_stats) / sizeof(uint64_t)];
	size_t n;
	const char *why = NULL;

	if (!loop || !f)
		return -EINVAL;
	rtl_loop_stats(loop, &s);
	n = counter_list(&s, names, v);
	if (atomic_load_explicit(&loop->reject_noted, memory_order_acquire))
		why = loop->reject_why;
	if (json) {
		fputs("{\"counters\":{", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s\"%s\":%llu", i ? "," : "", names[i],
				(unsigned long long)v[i]);
		fputs("},\"histograms\":{", f);
		for (int h = 0; h < RTL_LOOP_H_COUNT; h++) {
			fprintf(f, "%s\"%s\":", h ? "," : "", hist_names[h]);
			rtl_hist_write_json(&loop->hist[h], f);
		}
		fputs("},\"rt_notes\":", f);
		rtl_json_string(f, loop->rt_notes);
		fputs(",\"first_rejection\":", f);
		rtl_json_string(f, why ? why : "");
		fputs("}\n", f);
	} else {
		fputs("loop counters:\n", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "  %-15s %llu\n", names[i], (unsigned long long)v[i]);
		fputs("loop latency:\n", f);
		for (int h = 0; h < RTL_LOOP_H_COUNT; h++) {
			char title[32];

			snprintf(title, sizeof(title), "  %-13s", hist_names[h]);
			rtl_hist_print(&loop->hist[h], f, title, RTL_NS_PER_US);
		}
		if (why)
			fprintf(f, "first rejected command: %s\n", why);
		if (loop->rt_notes[0])
			fprintf(f, "real-time settings not applied:\n%s", loop->rt_notes);
	}
	return ferror(f) ? -EIO : 0;
}
