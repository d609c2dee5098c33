// SPDX-License-Identifier: MIT
/*
 * The control loop: rx thread, ring, worker, accounting, watchdog,
 * reconnect, the stop at exit. The design note is in <rtloop/loop.h>; this
 * file adds the reasoning at the lines where it matters.
 *
 * Who does what, on which thread:
 *   rx thread    receives and decodes; in threads mode it also watches the
 *                worker (watchdog_check()); it reconnects (with the step
 *                parked) and runs the stop at exit (finish()).
 *   step thread  the worker, or the rx thread in inline mode, or the
 *                external loop's thread: runs the step, checks and sends
 *                the step's commands (do_send()).
 *   watch thread inline mode only: the watchdog of a step that runs on the
 *                rx thread.
 *   log thread   not real-time: drains the real-time threads' log queues
 *                into the application's handler.
 * The transmit side (tx_owner) is held for every send: by the step thread
 * for one send, by the watchdog for one safe package, by the rx thread for
 * a whole reconnect and for the whole stop at exit.
 */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/json.h>
#include <rtloop/log.h>
#include <rtloop/loop.h>
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
#define DEFAULT_STOP_TIMEOUT_NS (2 * RTL_NS_PER_SEC)
/* The stop at exit is sent again this often while the arm comes to rest
 * (a quarter of the controller's watchdog when it is known), so that a
 * controller-side watchdog that watches for packages stays fed. */
#define STOP_RESEND_NS (25 * RTL_NS_PER_MS)
/* Frames in a row that must show rest before the stop counts as done, and
 * the periods after the stop before a frame counts at all (earlier ones
 * may show the controller before it applied the stop). */
#define REST_FRAMES 2
#define REST_AFTER_PERIODS 2
/* The worker re-checks the stop flag at least this often while asleep. */
#define IDLE_WAKE_NS (100 * RTL_NS_PER_MS)
/* The log thread sleeps on its bell, and looks at least this often. */
#define LOG_IDLE_NS (500 * RTL_NS_PER_MS)
#define LOG_SLOTS 256
#define PREFAULT_STACK (128 * 1024)
/* Frames of receive times the watchdog remembers (a power of two); the
 * watchdog may span at most this many periods. */
#define WATCHDOG_HISTORY 256

struct counters {
	/* Single writer each (the rx thread, the step thread, or the thread
	 * that watches): relaxed load + store, readable by anyone. */
	_Atomic uint64_t frames, ctrl_skipped, worker_skipped, unstepped, ring_full, steps,
		overruns, sends, suppressed, would_block, rejected, stale, after_stop, watchdog,
		silent, reconnects, rx_errors, rx_timeouts, stop_frames, stop_wait_ns,
		stop_unconfirmed;
	/* Written by whoever holds the transmit side (read-modify-write:
	 * more than one thread sends safe packages); the step compares it
	 * before and after to see whether one went out meanwhile. */
	_Atomic uint64_t safe_sends;
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

	_Atomic int stop; /* the loop is ending: set once, by anyone */
	_Atomic int result;
	_Atomic int armed;
	_Atomic int tx_owner; /* 0 free, 1 held */
	/* Parking: the rx thread asks (park), the step thread says whether
	 * it is inside a step (in_step); Dekker's pattern, seq_cst. */
	_Atomic int park;
	_Atomic int in_step;
	/* The watchdog's view: frames below @done are finished or skipped;
	 * frame @done is being stepped or waits. @end_ns: when the last step
	 * ended (stored before @done, read after it). */
	_Atomic uint64_t done;
	_Atomic int64_t end_ns;
	/* When the running step started (0: none running) and when the last
	 * one did, for inline mode's watch thread. */
	_Atomic int64_t step_begin_ns, last_begin_ns;
	/* When anything last went on the wire (under the transmit side), and
	 * whether a step's command ever did (this run). */
	_Atomic int64_t last_tx_ns;
	_Atomic int commanded;

	struct rtl_thread *rx, *worker, *logger; /* joined (and freed): NULL */
	bool rx_running, worker_running, logger_running, started;
	_Atomic int log_stop;
	_Atomic uint32_t log_bell; /* rung by the queues and by join */
	struct rtl_log_queue *rx_log, *worker_log;
	int cpu_latency_fd; /* /dev/cpu_dma_latency held while running, or -1 */

	/* rx thread state. */
	uint64_t seq;
	int64_t last_rx_ns;
	int64_t last_frame_ns; /* the last data frame, for the receive time-out */
	bool connected;
	/* watchdog_periods periods; 0: off. Set at connect (on the rx thread
	 * after a reconnect); atomic because inline mode's watch thread
	 * reads it too. */
	_Atomic int64_t watchdog_ns;
	/* The transport's period, for the worker's overrun count: atomic
	 * because a reconnect on the rx thread may change it. */
	_Atomic int64_t period_ns;
	/* Receive time of frame seq at [seq % WATCHDOG_HISTORY]. */
	int64_t rx_times[WATCHDOG_HISTORY];
	/* The watching thread's (rx, or watch in inline mode): the @done of
	 * the last episode, so that one stall fires once. */
	bool fired_any;
	uint64_t fired_done;
	bool stop_on_loss; /* the safe package went out as the connection was lost */

	/* Step thread state: the frame being stepped (for
	 * rtloop:motion_event), the receive time of the last frame taken
	 * (the spin window), safe_sends when the step began, whether
	 * anything went out since the last safe package, whether the
	 * current silence was reported. */
	uint64_t step_seq;
	int64_t taken_rx_ns;
	uint64_t step_safe_seen;
	bool armed_sent;
	bool silent_noted;

	/* External-loop state. */
	bool holding, in_ext_step;
	uint64_t held_seq;
	int64_t last_read_start;

	/* First rejection reason, published once. */
	_Atomic int reject_noted;
	char reject_why[160];
	/* How the stop at exit went, published once by the rx thread. */
	_Atomic int stop_noted;
	char stop_note[320];

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

static bool stopping(const struct rtl_loop *loop)
{
	return atomic_load_explicit(&loop->stop, memory_order_relaxed);
}

/* Every thread that waits on the event count looks again (stop, unpark). */
static void wake_all(struct rtl_loop *loop)
{
	atomic_fetch_add(&loop->events, 1);
	futex_wake(&loop->events);
}

static void stop_all(struct rtl_loop *loop)
{
	atomic_store(&loop->stop, 1);
	wake_all(loop);
}

/* ---- set-up ------------------------------------------------------------------------ */

RTL_API const char *rtl_loop_hist_name(enum rtl_loop_hist_id id)
{
	return (unsigned)id < RTL_LOOP_H_COUNT ? hist_names[id] : "unknown";
}

static int fail(struct rtl_error *err, int code, const char *msg)
{
	rtl_log(RTL_LOG_ERROR, "%s", msg);
	return rtl_error_set(err, code, "%s", msg);
}

static int rx_cpu(const struct rtl_loop_config *cfg)
{
	return cfg->pin_rx ? cfg->rx_cpu : -1;
}

static int worker_cpu(const struct rtl_loop_config *cfg)
{
	return cfg->pin_worker ? cfg->worker_cpu : -1;
}

/* The NUMA node of the worker's CPU, or -1: where the memory it reads goes. */
static int worker_node(const struct rtl_loop_config *cfg)
{
	int node = worker_cpu(cfg) >= 0 ? rtl_mem_cpu_node(worker_cpu(cfg)) : -1;

	return node >= 0 ? node : -1;
}

static int validate(const struct rtl_loop_config *cfg, struct rtl_error *err)
{
	const struct rtl_transport *t = cfg->transport;

	if (!t || !t->ops || !t->ops->connect || !t->ops->recv || !t->ops->next || !t->ops->send ||
	    !t->ops->disconnect)
		return fail(err, -EINVAL,
			    "loop: the transport is missing or lacks a required operation "
			    "(connect, recv, next, send, disconnect)");
	if (cfg->ring_capacity & (cfg->ring_capacity - 1))
		return fail(err, -EINVAL,
			    "loop: ring_capacity must be a power of two (or 0 for the default)");
	if (cfg->inline_step && !cfg->step)
		return fail(err, -EINVAL,
			    "loop: inline_step needs a step function (with the external-loop "
			    "API your own thread runs the step: leave inline_step false)");
	if ((unsigned)cfg->rt_mode > RTL_LOOP_RT_OFF)
		return fail(err, -EINVAL, "loop: unknown rt_mode");
	if ((!cfg->pin_rx && cfg->rx_cpu > 0) || (!cfg->pin_worker && cfg->worker_cpu > 0))
		return fail(err, -EINVAL,
			    "loop: rx_cpu or worker_cpu is set but pin_rx or pin_worker is "
			    "not: set pin_rx = true (pin_worker = true) to pin the thread to "
			    "that CPU; a zeroed configuration pins nothing");
	if ((cfg->pin_rx && cfg->rx_cpu < 0) || (cfg->pin_worker && cfg->worker_cpu < 0))
		return fail(err, -EINVAL, "loop: pin_rx or pin_worker is set with a negative CPU");
	if (cfg->watchdog_periods > WATCHDOG_HISTORY / 2 || cfg->watchdog_periods < -1)
		return fail(err, -EINVAL, "loop: watchdog_periods must be 1..128 (0: 3, -1: off)");
	if (cfg->spin_ns < 0 || cfg->spin_lead_ns < 0 || cfg->reconnect_attempts < 0 ||
	    cfg->reconnect_backoff_ns < 0)
		return fail(err, -EINVAL,
			    "loop: spin_ns, spin_lead_ns, reconnect_attempts and "
			    "reconnect_backoff_ns must not be negative");
	return 0;
}

static void free_queues(struct rtl_loop *loop)
{
	rtl_log_queue_destroy(loop->rx_log);
	rtl_log_queue_destroy(loop->worker_log);
}

RTL_API int rtl_loop_create(struct rtl_loop **out, const struct rtl_loop_config *cfg,
			    struct rtl_error *err)
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
	if (!loop->cfg.stop_timeout_ns)
		loop->cfg.stop_timeout_ns = DEFAULT_STOP_TIMEOUT_NS;
	if (rtl_log_queue_create(&loop->rx_log, LOG_SLOTS) < 0 ||
	    rtl_log_queue_create(&loop->worker_log, LOG_SLOTS) < 0) {
		free_queues(loop);
		free(loop);
		return fail(err, -ENOMEM, "loop: cannot allocate the log queues");
	}
	/* The log thread sleeps until a queue rings: no periodic wake-up
	 * disturbs the real-time threads' CPUs. */
	rtl_log_queue_set_bell(loop->rx_log, (uint32_t *)&loop->log_bell);
	rtl_log_queue_set_bell(loop->worker_log, (uint32_t *)&loop->log_bell);
	ret = rtl_mem_alloc(&mem, sizeof(struct rtl_hist) * RTL_LOOP_H_COUNT, worker_node(cfg));
	if (ret < 0) {
		free_queues(loop);
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
static int make_ring(struct rtl_loop *loop, struct rtl_error *err)
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
static int connected(struct rtl_loop *loop, struct rtl_error *err)
{
	atomic_store_explicit(&loop->watchdog_ns,
			      loop->cfg.watchdog_periods > 0 && loop->t->period_ns > 0
				      ? (int64_t)loop->cfg.watchdog_periods * loop->t->period_ns
				      : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&loop->period_ns, loop->t->period_ns, memory_order_relaxed);
	loop->connected = true;
	loop->last_frame_ns = rtl_time_now();
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

/* Slow path (reconnect, the stop at exit): wait for the transmit side. Its
 * owner holds it only for the length of one non-blocking send, so this
 * waits microseconds. */
static void tx_take(struct rtl_loop *loop)
{
	while (!tx_try(loop))
		rtl_time_sleep_until(rtl_time_now() + 50 * RTL_NS_PER_US);
}

/* The safe package, by the holder of the transmit side. */
static int safe_locked(struct rtl_loop *loop)
{
	int ret;

	if (!loop->t->ops->send_safe)
		return -ENOTSUP;
	ret = loop->t->ops->send_safe(loop->t);
	if (ret > 0) {
		atomic_fetch_add_explicit(&loop->c.safe_sends, 1, memory_order_relaxed);
		atomic_store_explicit(&loop->last_tx_ns, rtl_time_now(), memory_order_relaxed);
	}
	return ret;
}

/* The safe package if the transmit side is free (-EAGAIN if not). */
static int send_safe(struct rtl_loop *loop)
{
	int ret;

	if (!tx_try(loop))
		return -EAGAIN;
	ret = safe_locked(loop);
	tx_release(loop);
	return ret;
}

/* Armed, yet nothing has gone out for longer than the controller waits
 * before it stops the arm: say so, once per silence. The step thread's. */
static void silence_check(struct rtl_loop *loop, int64_t now)
{
	int64_t wd = loop->t->ctrl_watchdog_ns;
	int64_t last = atomic_load_explicit(&loop->last_tx_ns, memory_order_relaxed);

	if (wd <= 0 || !loop->armed_sent || loop->silent_noted || !last || now - last <= wd)
		return;
	loop->silent_noted = true;
	rtl_stat_add(&loop->c.silent, 1);
	rtl_log(RTL_LOG_WARN,
		"loop: armed, but nothing was sent for %.0f ms, longer than the controller's "
		"watchdog (%.0f ms): the controller has stopped the arm. Is the step (or the "
		"external loop) too slow, or are its commands never written?",
		(double)(now - last) / 1e6, (double)wd / 1e6);
}

/* A rejected step: count it, keep the first reason, and send the safe
 * package instead (the caller holds the transmit side). */
static void rejected(struct rtl_loop *loop, const char *why)
{
	rtl_stat_add(&loop->c.rejected, 1);
	if (!atomic_load_explicit(&loop->reject_noted, memory_order_relaxed)) {
		snprintf(loop->reject_why, sizeof(loop->reject_why), "%s", why);
		/* release: the text is complete before the flag. */
		atomic_store_explicit(&loop->reject_noted, 1, memory_order_release);
		rtl_log(RTL_LOG_ERROR,
			"loop: commands rejected (%s): the safe package was sent instead; fix "
			"the step (later rejections are counted, not logged)",
			why);
	}
	safe_locked(loop);
}

/*
 * The step thread's send: stopping, disarmed, stale, check, coalesce.
 * Nothing the step wrote reaches the wire unchecked, and nothing it wrote
 * goes out once the watchdog has sent the safe package during its step.
 */
static int do_send(struct rtl_loop *loop, uint64_t seq, int64_t now)
{
	struct rtl_transport *t = loop->t;
	char why[sizeof(loop->reject_why)];
	int ret;

	if (stopping(loop)) {
		rtl_stat_add(&loop->c.after_stop, 1);
		return 0;
	}
	if (!atomic_load_explicit(&loop->armed, memory_order_relaxed)) {
		rtl_stat_add(&loop->c.suppressed, 1);
		/* Disarmed after commands went out: stop what they started. */
		if (loop->armed_sent && tx_try(loop)) {
			ret = safe_locked(loop);
			tx_release(loop);
			if (ret != -EAGAIN)
				loop->armed_sent = false;
		}
		return 0;
	}
	if (atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire) !=
	    loop->step_safe_seen) {
		rtl_stat_add(&loop->c.stale, 1);
		return 0;
	}
	silence_check(loop, now);
	if (!tx_try(loop)) {
		if (stopping(loop))
			rtl_stat_add(&loop->c.after_stop, 1);
		else
			rtl_stat_add(&loop->c.would_block, 1);
		return -EAGAIN;
	}
	if (t->ops->check && t->ops->check(t, why, sizeof(why)) < 0) {
		rejected(loop, why);
		tx_release(loop);
		return 0;
	}
	ret = t->ops->send(t, now);
	if (ret > 0)
		atomic_store_explicit(&loop->last_tx_ns, now, memory_order_relaxed);
	tx_release(loop);
	if (ret > 0) {
		if (!loop->armed_sent)
			atomic_store_explicit(&loop->commanded, 1, memory_order_relaxed);
		loop->armed_sent = true;
		loop->silent_noted = false;
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

/* ---- parking: connect only while no step runs ------------------------------------------ */

/*
 * The step thread, before it steps: announce, then look (seq_cst both, as
 * park_step() stores then looks: one of the two sees the other). false: a
 * reconnect has the transport, do not step now.
 */
static bool step_enter(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->in_step, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&loop->park, memory_order_seq_cst))
		return true;
	atomic_store_explicit(&loop->in_step, 0, memory_order_release);
	return false;
}

static void step_leave(struct rtl_loop *loop)
{
	/* release: the step's writes (commands, handles it read) happen
	 * before the rx thread's reconnect, which acquires in park_step(). */
	atomic_store_explicit(&loop->in_step, 0, memory_order_release);
}

/* The step thread, parked: wait until the reconnect is over (or stop, or
 * @deadline). */
static void wait_unparked(struct rtl_loop *loop, int64_t deadline)
{
	for (;;) {
		uint32_t seen = atomic_load_explicit(&loop->events, memory_order_seq_cst);
		int64_t now;

		if (!atomic_load_explicit(&loop->park, memory_order_acquire) || stopping(loop))
			return;
		now = rtl_time_now();
		if (now >= deadline)
			return;
		futex_wait(&loop->events, seen,
			   deadline - now < IDLE_WAKE_NS ? deadline - now : IDLE_WAKE_NS);
	}
}

/* The rx thread: keep the step thread out of its step. Returns false if
 * the loop is stopping meanwhile (a step that never ends). Slow path. */
static bool park_step(struct rtl_loop *loop)
{
	if (loop->cfg.inline_step)
		return true; /* the step runs on this very thread */
	atomic_store_explicit(&loop->park, 1, memory_order_seq_cst);
	while (atomic_load_explicit(&loop->in_step, memory_order_seq_cst)) {
		if (stopping(loop))
			return false;
		rtl_time_sleep_until(rtl_time_now() + 50 * RTL_NS_PER_US);
	}
	return true;
}

static void unpark_step(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->park, 0, memory_order_release);
	wake_all(loop);
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
 * A stall: send the safe package, once per episode. An episode is named by
 * the watchdog's @done at the time (the frame being stepped, or the oldest
 * waiting): it changes only when a step starts on a new frame or ends, so
 * one stall fires once however long it lasts, and the next stall, after a
 * recovery, has a new name and fires again. The name is the watching
 * thread's alone, so no store of the step thread can lose against it.
 * Transmit side busy: the next look tries again.
 */
static void watchdog_fire(struct rtl_loop *loop, uint64_t done, uint64_t seq, uint32_t pending)
{
	int ret;

	if (loop->fired_any && loop->fired_done == done)
		return;
	ret = send_safe(loop);
	if (ret == -EAGAIN)
		return;
	loop->fired_any = true;
	loop->fired_done = done;
	rtl_stat_add(&loop->c.watchdog, 1);
	rtl_trace_watchdog_fired(seq, pending);
	if (ret == -ENOTSUP)
		rtl_log(RTL_LOG_ERROR, "loop: watchdog: the step is late and the transport has no "
				       "safe package to send; the controller's own watchdog must "
				       "stop the arm");
}

/*
 * The worker is late when a frame has waited more than the watchdog time
 * with no step finishing since it arrived: the oldest unfinished frame's
 * arrival, or the end of the last step if that is later (frames that
 * arrived during a stall are skipped by the next step and must not start
 * the clock again). Measuring from arrivals, not from the worker's last
 * step, keeps a quiet controller from looking like a stuck worker.
 */
static void watchdog_check(struct rtl_loop *loop, int64_t now, uint64_t seq)
{
	/* acquire: the end_ns stored before this done is seen. */
	uint64_t done = atomic_load_explicit(&loop->done, memory_order_acquire);
	int64_t end = atomic_load_explicit(&loop->end_ns, memory_order_relaxed);
	int64_t limit = atomic_load_explicit(&loop->watchdog_ns, memory_order_relaxed);
	int64_t oldest;

	if (!limit || done > seq)
		return;
	/* More frames pending than remembered: the oldest is older still. */
	oldest = seq - done >= WATCHDOG_HISTORY ? INT64_MIN / 2
						: loop->rx_times[done % WATCHDOG_HISTORY];
	if (end > oldest)
		oldest = end;
	if (now - oldest > limit)
		watchdog_fire(loop, done, seq, (uint32_t)((seq - done) + 1));
}

/* Sleep @ns in chunks of at most 50 ms, so that a stop is seen quickly. */
static void backoff_sleep(struct rtl_loop *loop, int64_t ns)
{
	int64_t end = rtl_time_now() + ns;
	int64_t now;

	while (!stopping(loop) && (now = rtl_time_now()) < end)
		rtl_time_sleep_until(end - now > 50 * RTL_NS_PER_MS ? now + 50 * RTL_NS_PER_MS
								    : end);
}

static const char *errname(int code)
{
	const char *s = strerrordesc_np(code < 0 ? -code : code);

	return s ? s : "unknown error";
}

/*
 * The connection is gone: reconnect (slow path) or end the loop. The step
 * is parked and the transmit side held for the whole of it: connect()
 * rebuilds the transport's tables and runs the application's callbacks,
 * which no step may see half done. Returns true when the rx thread may go
 * on receiving.
 */
static bool reconnect(struct rtl_loop *loop, int why);

/* The transport says the stream is unusable (@code; 0: the peer closed):
 * say why, in the transport's words when it has them, then reconnect. */
static bool lost(struct rtl_loop *loop, int code)
{
	const char *why = loop->t->ops->error ? loop->t->ops->error(loop->t) : NULL;

	if (!why || !why[0])
		why = code ? errname(code) : "the controller closed the connection";
	/* A transport that keeps its own receive deadline (one that other
	 * datagrams cannot hold off) says so with -ETIMEDOUT. */
	if (code == -ETIMEDOUT && !stopping(loop))
		rtl_stat_add(&loop->c.rx_timeouts, 1);
	if (!stopping(loop))
		rtl_log(RTL_LOG_ERROR, "loop: connection lost: %s%s", why,
			loop->cfg.reconnect_attempts ? ""
						     : " (the loop ends: no reconnect_attempts)");
	return reconnect(loop, code ? code : -ECONNRESET);
}

static bool reconnect(struct rtl_loop *loop, int why)
{
	int64_t backoff = loop->cfg.reconnect_backoff_ns;
	struct rtl_error err = { 0 };
	int ret = why;

	if (!park_step(loop))
		return false;
	tx_take(loop);
	/* Commands stay off until the application says otherwise. A stream
	 * that broke (a protocol error, a silent controller) may still take a
	 * stop: send it before letting go (on a closed socket it just fails). */
	atomic_store(&loop->armed, 0);
	if (safe_locked(loop) > 0)
		loop->stop_on_loss = true;
	loop->t->ops->disconnect(loop->t);
	loop->connected = false;
	for (int i = 1; i <= loop->cfg.reconnect_attempts && !stopping(loop); i++) {
		rtl_log(RTL_LOG_WARN, "loop: reconnect attempt %d of %d", i,
			loop->cfg.reconnect_attempts);
		backoff_sleep(loop, backoff);
		if (stopping(loop))
			break;
		ret = loop->t->ops->connect(loop->t, &err);
		rtl_trace_reconnect((uint32_t)i, ret);
		if (ret == 0) {
			ret = connected(loop, &err);
			if (ret < 0)
				break;
			/* The controller may still hold the old connection's
			 * last command: start from the safe set. */
			safe_locked(loop);
			rtl_stat_add(&loop->c.reconnects, 1);
			tx_release(loop);
			unpark_step(loop);
			rtl_log(RTL_LOG_INFO, "loop: reconnected; the safe package was sent and "
					      "commands are disarmed until rtl_loop_arm()");
			return true;
		}
		rtl_log(RTL_LOG_WARN, "loop: reconnect attempt %d failed: %s", i, err.msg);
		backoff = backoff * 2 > MAX_BACKOFF_NS ? MAX_BACKOFF_NS : backoff * 2;
	}
	tx_release(loop);
	unpark_step(loop);
	if (!stopping(loop)) {
		int expect = 0;

		atomic_compare_exchange_strong(&loop->result, &expect, ret < 0 ? ret : -ECONNRESET);
	}
	return false;
}

static void stop_noted(struct rtl_loop *loop, bool confirmed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* How the stop at exit went: for the report, and the log. rx thread. */
static void stop_noted(struct rtl_loop *loop, bool confirmed, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(loop->stop_note, sizeof(loop->stop_note), fmt, ap);
	va_end(ap);
	if (!confirmed)
		rtl_stat_add(&loop->c.stop_unconfirmed, 1);
	/* release: the text is complete before the flag. */
	atomic_store_explicit(&loop->stop_noted, 1, memory_order_release);
	rtl_log(confirmed ? RTL_LOG_INFO : RTL_LOG_ERROR, "loop: stop: %s", loop->stop_note);
}

/*
 * Receive frames until the transport reports the arm at rest (REST_FRAMES
 * in a row), resending the safe package every @resend_ns, until
 * @deadline. Returns 1 at rest, 0 at the deadline, -errno when the
 * connection failed.
 */
static int await_rest(struct rtl_loop *loop, int64_t sent_at, int64_t deadline, int64_t resend_ns)
{
	struct rtl_transport *t = loop->t;
	int64_t now = rtl_time_now(), last_safe = sent_at;
	int64_t counts_from = now + REST_AFTER_PERIODS * t->period_ns;
	unsigned rest = 0;

	while (now < deadline) {
		int n;

		if (now - last_safe >= resend_ns && safe_locked(loop) > 0)
			last_safe = now;
		n = t->ops->recv(t);
		now = rtl_time_now();
		if (n == -EAGAIN)
			continue;
		if (n <= 0)
			return n < 0 ? n : -ECONNRESET;
		for (;;) {
			struct rtl_loop_frame *f = loop->scratch;
			int r;

			f->rx_ns = now;
			r = t->ops->next(t, f, loop->slot_size - sizeof(*f));
			if (r == 0)
				break;
			if (r < 0)
				return r;
			rtl_stat_add(&loop->c.stop_frames, 1);
			if (now < counts_from)
				continue;
			rest = t->ops->at_rest(t, f) ? rest + 1 : 0;
			if (rest >= REST_FRAMES)
				return 1;
		}
	}
	return 0;
}

/*
 * The stop at exit, on the rx thread, whatever ended the loop: hold the
 * transmit side to the end (nothing the step sends can follow), send the
 * safe package, and receive until the arm is at rest or the stop time-out.
 */
static void finish(struct rtl_loop *loop)
{
	struct rtl_transport *t = loop->t;
	int64_t timeout = loop->cfg.stop_timeout_ns, resend = STOP_RESEND_NS, sent_at;
	bool commanded;
	int ret;

	stop_all(loop);
	tx_take(loop);
	commanded = atomic_load_explicit(&loop->commanded, memory_order_relaxed);
	if (!loop->connected && commanded) {
		stop_noted(loop, false,
			   loop->stop_on_loss
				   ? "the connection was lost; the stop was sent as it went, but "
				     "whether the arm came to rest could not be seen: the "
				     "controller's own watchdog stops it"
				   : "the connection was lost, so no stop could be sent: the "
				     "controller's own watchdog stops the arm");
		return;
	}
	ret = loop->connected ? safe_locked(loop) : -ENOTSUP;
	if (ret == -ENOTSUP && !commanded) {
		stop_noted(loop, true, "no command was sent, so there was nothing to stop");
		return;
	}
	if (ret == -ENOTSUP) {
		stop_noted(loop, false,
			   "the transport has no safe package, so nothing was sent at exit; give "
			   "it one (RTDE: the safe callback, or the command registers in an input "
			   "recipe)");
		return;
	}
	if (ret < 0 && ret != -EAGAIN) {
		stop_noted(loop, false, "the stop could not be sent (%s)", errname(ret));
		return;
	}
	sent_at = rtl_time_now();
	if (timeout < 0) {
		stop_noted(loop, true, "the stop was sent; rest not awaited (stop_timeout_ns < 0)");
		return;
	}
	if (!t->ops->at_rest) {
		stop_noted(loop, false,
			   "the stop was sent, but the %s transport cannot tell whether the arm "
			   "came to rest",
			   t->ops->name);
		return;
	}
	if (t->ctrl_watchdog_ns > 0 && t->ctrl_watchdog_ns / 4 < resend)
		resend = t->ctrl_watchdog_ns / 4;
	ret = await_rest(loop, ret == -EAGAIN ? 0 : sent_at, sent_at + timeout, resend);
	if (ret == 1) {
		int64_t took = rtl_time_now() - sent_at;

		rtl_stat_add(&loop->c.stop_wait_ns, (uint64_t)took);
		stop_noted(loop, true, "the arm was at rest %.1f ms after the stop (%llu frames)",
			   (double)took / 1e6,
			   (unsigned long long)rtl_stat_get(&loop->c.stop_frames));
	} else if (ret == 0) {
		stop_noted(loop, false,
			   "the arm was not at rest %.1f s after the stop (%llu frames)",
			   (double)timeout / 1e9,
			   (unsigned long long)rtl_stat_get(&loop->c.stop_frames));
	} else {
		stop_noted(loop, false,
			   "the connection failed while waiting for rest (%s): the controller's "
			   "own watchdog stops the arm",
			   errname(ret));
	}
}

/* No data frame for the transport's receive time-out: a lost connection. */
static bool rx_timed_out(struct rtl_loop *loop, int64_t now)
{
	int64_t limit = loop->t->rx_timeout_ns;

	if (limit <= 0 || now - loop->last_frame_ns <= limit)
		return false;
	rtl_stat_add(&loop->c.rx_timeouts, 1);
	rtl_log(RTL_LOG_ERROR,
		"loop: no data frame from the controller for %.2f s (the %s transport's receive "
		"time-out): the connection counts as lost",
		(double)(now - loop->last_frame_ns) / 1e9, loop->t->ops->name);
	return true;
}

static int run_inline(struct rtl_loop *loop); /* below, with the worker */

/* Take in what one receive brought. Returns the number of frames, or
 * -errno (after a failed reconnect: the rx thread ends). */
static int take_in(struct rtl_loop *loop, int64_t now)
{
	struct rtl_transport *t = loop->t;
	int got = 0;

	for (;;) {
		struct rtl_loop_frame *slot = rtl_ring_reserve(loop->ring);
		struct rtl_loop_frame *f = slot ? slot : loop->scratch;
		int r;

		/* Before next(): the transport's "now", so it reads no clock
		 * per frame. */
		f->rx_ns = now;
		r = t->ops->next(t, f, loop->slot_size - sizeof(*f));
		if (r == 0)
			break;
		if (r < 0) {
			/* -ETIMEDOUT: the transport's own receive time-out
			 * (lost() counts it), not a bad frame. */
			if (r != -ETIMEDOUT)
				rtl_stat_add(&loop->c.rx_errors, 1);
			return lost(loop, r) ? got : r;
		}
		got++;
		f->seq = loop->seq++;
		loop->rx_times[f->seq % WATCHDOG_HISTORY] = now;
		/* Both events follow the decode (the frame's seq is known only
		 * then); the time recv() returned is in rx_ns. */
		rtl_trace_frame_received(f->seq, f->ctrl_time, f->rx_ns, f->size);
		rtl_trace_frame_decoded(f->seq, 0);
		rtl_stat_add(&loop->c.frames, 1);
		if (loop->last_rx_ns)
			rtl_hist_record(&loop->hist[RTL_LOOP_H_INTERARRIVAL],
					now - loop->last_rx_ns);
		loop->last_rx_ns = now;
		loop->last_frame_ns = now;
		if (f->ctrl_skipped) {
			rtl_stat_add(&loop->c.ctrl_skipped, f->ctrl_skipped);
			rtl_trace_skipped(f->seq, f->ctrl_skipped, RTL_TRACE_SKIP_CONTROLLER);
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
		/* Inline mode: the watch thread watches the step. */
		if (!loop->cfg.inline_step)
			watchdog_check(loop, now, f->seq);
	}
	return got;
}

static void *rx_main(void *arg)
{
	struct rtl_loop *loop = arg;
	struct rtl_transport *t = loop->t;

	rtl_log_queue_attach(loop->rx_log);
	while (!stopping(loop)) {
		int n = t->ops->recv(t), got = 0;
		int64_t now = rtl_time_now();

		if (n > 0)
			got = take_in(loop, now);
		else if (n != -EAGAIN && !stopping(loop))
			got = lost(loop, n) ? 0 : -ECONNRESET;
		if (got < 0)
			break;
		if (!got && !stopping(loop) && rx_timed_out(loop, now) &&
		    !reconnect(loop, -ETIMEDOUT))
			break;
		if (got > 0 && loop->cfg.inline_step && run_inline(loop) < 0)
			break;
	}
	finish(loop);
	rtl_log_queue_attach(NULL);
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
	while (!stopping(loop) && now < deadline) {
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
			if (!f && !stopping(loop))
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

/* Book-keeping when a frame starts being processed: the watchdog's @done
 * moves to it (the frames below are skipped or finished), and the safe
 * packages sent so far are noted (one sent during the step makes it
 * stale). */
static void frame_started(struct rtl_loop *loop, const struct rtl_loop_frame *f, int64_t now)
{
	int64_t wake = now - f->commit_ns;

	rtl_hist_record(&loop->hist[RTL_LOOP_H_WAKE], wake);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_RX_TO_STEP], now - f->rx_ns);
	rtl_trace_worker_woke(f->seq, wake);
	loop->step_seq = f->seq;
	loop->step_safe_seen = atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire);
	atomic_store_explicit(&loop->done, f->seq, memory_order_release);
}

/* The step for frame @seq has ended at @now. */
static void step_done(struct rtl_loop *loop, uint64_t seq, int64_t now)
{
	atomic_store_explicit(&loop->end_ns, now, memory_order_relaxed);
	/* release: end_ns is seen by whoever sees this done. */
	atomic_store_explicit(&loop->done, seq + 1, memory_order_release);
}

/*
 * Run the step for @f, send, release the slot. On a step error: record it,
 * stop the loop and return it (< 0). Worker and inline rx thread alike.
 */
static int run_step(struct rtl_loop *loop, const struct rtl_loop_frame *f)
{
	int64_t start = rtl_time_now(), end, period;
	uint64_t seq = f->seq;
	int ret;

	frame_started(loop, f, start);
	atomic_store_explicit(&loop->step_begin_ns, start, memory_order_relaxed);
	atomic_store_explicit(&loop->last_begin_ns, start, memory_order_relaxed);
	rtl_trace_step_started(seq);
	ret = loop->cfg.step(loop, f, loop->cfg.user);
	end = rtl_time_now();
	rtl_trace_step_finished(seq, end - start);
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
		/* The rx thread sees it at the next frame (or receive slice)
		 * and sends the stop. */
		stop_all(loop);
		return ret;
	}
	do_send(loop, seq, end);
	end = rtl_time_now();
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP_TO_SEND], end - start);
	rtl_ring_release(loop->ring); /* the slot is the producer's after this */
	atomic_store_explicit(&loop->step_begin_ns, 0, memory_order_relaxed);
	step_done(loop, seq, end);
	return 0;
}

static void *worker_main(void *arg)
{
	struct rtl_loop *loop = arg;

	rtl_log_queue_attach(loop->worker_log);
	while (!stopping(loop)) {
		const struct rtl_loop_frame *f = wait_frame(loop, INT64_MAX);
		int ret;

		if (!f)
			continue;
		/* A reconnect has the transport: wait, then take again (the
		 * frame stays in the ring; a newer one may have come). */
		if (!step_enter(loop)) {
			wait_unparked(loop, INT64_MAX);
			continue;
		}
		ret = run_step(loop, f);
		step_leave(loop);
		if (ret < 0)
			break;
	}
	rtl_log_queue_attach(NULL);
	return NULL;
}

/* Inline mode, on the rx thread: step what the last receive committed
 * (the newest frame, or each one with every_frame). */
static int run_inline(struct rtl_loop *loop)
{
	const struct rtl_loop_frame *f;

	while (!stopping(loop) && (f = take(loop)))
		if (run_step(loop, f) < 0)
			return -1;
	return 0;
}

/*
 * When the watch thread looks next: @limit after the step that counts
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
 * safe package, once per episode (watchdog_fire()). It sleeps on the event
 * count, which in this mode only stop_all() and unpark bump.
 */
static void *watch_main(void *arg)
{
	struct rtl_loop *loop = arg;

	rtl_log_queue_attach(loop->worker_log);
	while (!stopping(loop)) {
		uint32_t seen = atomic_load_explicit(&loop->events, memory_order_seq_cst);
		int64_t period = atomic_load_explicit(&loop->period_ns, memory_order_relaxed);
		int64_t limit = atomic_load_explicit(&loop->watchdog_ns, memory_order_relaxed);
		int64_t begin = atomic_load_explicit(&loop->step_begin_ns, memory_order_relaxed);
		int64_t now = rtl_time_now();

		if (limit && begin && now - begin > limit) {
			uint64_t done = atomic_load_explicit(&loop->done, memory_order_acquire);

			watchdog_fire(loop, done, done, 1);
		}
		if (stopping(loop))
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
	rtl_log_queue_attach(NULL);
	return NULL;
}

/* The log thread: not real-time; hands the real-time threads' messages
 * to the application's handler. It sleeps on the bell the queues ring (a
 * bump read before the drain makes the wait return at once: no message
 * waits for the next ring). */
static void *log_main(void *arg)
{
	struct rtl_loop *loop = arg;

	while (!atomic_load_explicit(&loop->log_stop, memory_order_acquire)) {
		uint32_t seen = atomic_load_explicit(&loop->log_bell, memory_order_seq_cst);

		rtl_log_queue_drain(loop->rx_log);
		rtl_log_queue_drain(loop->worker_log);
		if (!atomic_load_explicit(&loop->log_stop, memory_order_acquire))
			futex_wait(&loop->log_bell, seen, LOG_IDLE_NS);
	}
	return NULL;
}

static void stop_logger(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->log_stop, 1, memory_order_release);
	atomic_fetch_add(&loop->log_bell, 1);
	futex_wake(&loop->log_bell);
}

/* ---- start, stop ------------------------------------------------------------------------------
 */

static int spawn(struct rtl_loop *loop, struct rtl_thread **th, const char *name, int prio, int cpu,
		 void *(*fn)(void *), struct rtl_error *err)
{
	const struct rtl_thread_info *info;
	struct rtl_thread_attr a = {
		.name = name,
		.policy = SCHED_FIFO,
		.priority = prio,
		.cpu = cpu,
		.prefault_stack = PREFAULT_STACK,
		.best_effort = loop->cfg.rt_mode == RTL_LOOP_RT_DEGRADE,
	};
	int ret;

	if (loop->cfg.rt_mode == RTL_LOOP_RT_OFF || prio == 0) {
		a.policy = SCHED_OTHER;
		a.priority = 0;
	}
	ret = rtl_thread_create(th, &a, fn, loop, err);
	if (ret < 0)
		return ret;
	info = rtl_thread_info(*th);
	if (info->degraded) {
		char msg[sizeof(info->why.msg) + 64];

		snprintf(msg, sizeof(msg), "%s thread runs under SCHED_OTHER: %s", name,
			 info->why.msg);
		note(loop, msg);
	}
	return 0;
}

/* Join (and so free) a thread of the loop; its pointer says it is gone. */
static void join_thread(struct rtl_thread **th)
{
	rtl_thread_join(*th, NULL);
	*th = NULL;
}

/* A fresh run: every cross-thread flag and the per-run state. */
static void reset_run(struct rtl_loop *loop)
{
	atomic_store(&loop->stop, 0);
	atomic_store(&loop->result, 0);
	atomic_store(&loop->tx_owner, 0);
	atomic_store(&loop->park, 0);
	atomic_store(&loop->in_step, 0);
	atomic_store(&loop->log_stop, 0);
	atomic_store(&loop->done, loop->seq);
	atomic_store(&loop->end_ns, 0);
	atomic_store(&loop->step_begin_ns, 0);
	atomic_store(&loop->last_begin_ns, 0);
	atomic_store(&loop->last_tx_ns, 0);
	atomic_store(&loop->stop_noted, 0);
	atomic_store(&loop->commanded, 0);
	/* The stop at exit is this run's. */
	atomic_store(&loop->c.stop_frames, 0);
	atomic_store(&loop->c.stop_wait_ns, 0);
	atomic_store(&loop->c.stop_unconfirmed, 0);
	loop->fired_any = false;
	loop->stop_on_loss = false;
	loop->armed_sent = false;
	loop->silent_noted = false;
	loop->in_ext_step = false;
}

RTL_API int rtl_loop_start(struct rtl_loop *loop, struct rtl_error *err)
{
	struct rtl_error e = { 0 };
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
	reset_run(loop);
	ret = loop->t->ops->connect(loop->t, &e);
	if (ret < 0) {
		if (err)
			*err = e;
		goto err_latency;
	}
	ret = connected(loop, err);
	if (ret < 0)
		goto err_disconnect;
	/* Whatever the controller holds from an earlier client, the loop
	 * starts from the safe set (no threads yet: nobody else sends). */
	safe_locked(loop);
	if (!loop->t->ops->send_safe && atomic_load(&loop->armed))
		rtl_log(RTL_LOG_WARN,
			"loop: the %s transport has no safe package: neither the "
			"watchdog nor the stop at exit can stop the arm",
			loop->t->ops->name);
	ret = spawn(loop, &loop->logger, "rtl-log", 0, -1, log_main, err);
	if (ret < 0)
		goto err_disconnect;
	loop->logger_running = true;
	if (loop->cfg.step) {
		/* Inline mode steps on the rx thread; the second thread then
		 * only keeps the watchdog. */
		ret = spawn(loop, &loop->worker, loop->cfg.inline_step ? "rtl-watch" : "rtl-worker",
			    loop->cfg.worker_priority, worker_cpu(&loop->cfg),
			    loop->cfg.inline_step ? watch_main : worker_main, err);
		if (ret < 0)
			goto err_stop_threads;
		loop->worker_running = true;
	}
	ret = spawn(loop, &loop->rx, "rtl-rx", loop->cfg.rx_priority, rx_cpu(&loop->cfg), rx_main,
		    err);
	if (ret < 0)
		goto err_stop_threads;
	loop->rx_running = true;
	loop->started = true;
	return 0;

err_stop_threads:
	stop_all(loop);
	if (loop->worker_running)
		join_thread(&loop->worker);
	loop->worker_running = false;
	stop_logger(loop);
	if (loop->logger_running)
		join_thread(&loop->logger);
	loop->logger_running = false;
err_disconnect:
	loop->t->ops->disconnect(loop->t);
	loop->connected = false;
err_latency:
	rtl_thread_release_cpu_latency(loop->cpu_latency_fd);
	loop->cpu_latency_fd = -1;
	return ret;
}

RTL_API void rtl_loop_stop(struct rtl_loop *loop)
{
	if (loop)
		stop_all(loop);
}

RTL_API int rtl_loop_join(struct rtl_loop *loop)
{
	if (!loop || !loop->started)
		return -EINVAL;
	/* The rx thread ends after the stop at exit. */
	if (loop->rx_running)
		join_thread(&loop->rx);
	stop_all(loop);
	if (loop->worker_running)
		join_thread(&loop->worker);
	stop_logger(loop);
	if (loop->logger_running)
		join_thread(&loop->logger);
	/* What the threads said after the log thread's last look. */
	rtl_log_queue_drain(loop->rx_log);
	rtl_log_queue_drain(loop->worker_log);
	loop->rx_running = loop->worker_running = loop->logger_running = false;
	loop->started = false;
	if (loop->holding) {
		rtl_ring_release(loop->ring);
		loop->holding = false;
	}
	/* Frames the rx thread committed that no step took before the loop
	 * ended (the stream was lost right after a burst, or the stop came):
	 * counted, then dropped, so that a next run starts empty. */
	while (loop->ring && rtl_ring_peek(loop->ring)) {
		rtl_stat_add(&loop->c.unstepped, 1);
		rtl_ring_release(loop->ring);
	}
	loop->in_ext_step = false;
	loop->t->ops->disconnect(loop->t);
	loop->connected = false;
	rtl_thread_release_cpu_latency(loop->cpu_latency_fd);
	loop->cpu_latency_fd = -1;
	return atomic_load(&loop->result);
}

RTL_API int rtl_loop_run(struct rtl_loop *loop, struct rtl_error *err)
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
	free_queues(loop);
	free(loop);
}

/* ---- external-loop API ---------------------------------------------------------------------- */

/* The external loop's step ends (a write, or a read without one). */
static void ext_step_end(struct rtl_loop *loop, int64_t now)
{
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP], now - loop->last_read_start);
	step_done(loop, loop->held_seq, now);
	loop->in_ext_step = false;
	step_leave(loop);
}

RTL_API const struct rtl_loop_frame *rtl_loop_read(struct rtl_loop *loop, int64_t timeout_ns)
{
	const struct rtl_loop_frame *f;
	int64_t now, deadline;

	if (!loop || !loop->started || loop->cfg.step)
		return NULL;
	now = rtl_time_now();
	if (loop->in_ext_step)
		ext_step_end(loop, now);
	if (loop->holding) {
		rtl_ring_release(loop->ring);
		loop->holding = false;
	}
	deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
	for (;;) {
		f = wait_frame(loop, deadline);
		if (!f)
			return NULL;
		if (step_enter(loop))
			break;
		wait_unparked(loop, deadline);
		if (rtl_time_now() >= deadline)
			return NULL;
	}
	now = rtl_time_now();
	frame_started(loop, f, now);
	loop->last_read_start = now;
	rtl_stat_add(&loop->c.steps, 1);
	loop->holding = true;
	loop->in_ext_step = true;
	loop->held_seq = f->seq;
	return f;
}

RTL_API int rtl_loop_write(struct rtl_loop *loop)
{
	int64_t now;
	int ret;

	if (!loop || !loop->started || loop->cfg.step)
		return -EINVAL;
	if (!loop->in_ext_step) {
		/* A write of its own (no read since the last write): a step
		 * of its own, as short as the send. */
		if (!step_enter(loop))
			return -EAGAIN;
		loop->step_safe_seen =
			atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire);
		ret = do_send(loop, loop->held_seq, rtl_time_now());
		step_leave(loop);
		return ret;
	}
	ret = do_send(loop, loop->held_seq, rtl_time_now());
	now = rtl_time_now();
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP_TO_SEND], now - loop->last_read_start);
	ext_step_end(loop, now);
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

RTL_API uint64_t rtl_loop_step_seq(const struct rtl_loop *loop)
{
	return loop ? loop->step_seq : 0;
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
		.unstepped = rtl_stat_get(&c->unstepped),
		.ring_full = rtl_stat_get(&c->ring_full),
		.steps = rtl_stat_get(&c->steps),
		.overruns = rtl_stat_get(&c->overruns),
		.sends = rtl_stat_get(&c->sends),
		.suppressed = rtl_stat_get(&c->suppressed),
		.would_block = rtl_stat_get(&c->would_block),
		.rejected = rtl_stat_get(&c->rejected),
		.stale = rtl_stat_get(&c->stale),
		.after_stop = rtl_stat_get(&c->after_stop),
		.watchdog = rtl_stat_get(&c->watchdog),
		.safe_sends = rtl_stat_get(&c->safe_sends),
		.silent = rtl_stat_get(&c->silent),
		.reconnects = rtl_stat_get(&c->reconnects),
		.rx_errors = rtl_stat_get(&c->rx_errors),
		.rx_timeouts = rtl_stat_get(&c->rx_timeouts),
		.log_dropped = rtl_log_queue_dropped(loop->rx_log) +
			       rtl_log_queue_dropped(loop->worker_log),
		.stop_frames = rtl_stat_get(&c->stop_frames),
		.stop_wait_ns = rtl_stat_get(&c->stop_wait_ns),
		.stop_unconfirmed = rtl_stat_get(&c->stop_unconfirmed),
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
	C(unstepped);
	C(ring_full);
	C(steps);
	C(overruns);
	C(sends);
	C(suppressed);
	C(would_block);
	C(rejected);
	C(stale);
	C(after_stop);
	C(watchdog);
	C(safe_sends);
	C(silent);
	C(reconnects);
	C(rx_errors);
	C(rx_timeouts);
	C(log_dropped);
	C(stop_frames);
	C(stop_wait_ns);
	C(stop_unconfirmed);
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
	const char *why = NULL, *stop = NULL;

	if (!loop || !f)
		return -EINVAL;
	rtl_loop_stats(loop, &s);
	n = counter_list(&s, names, v);
	if (atomic_load_explicit(&loop->reject_noted, memory_order_acquire))
		why = loop->reject_why;
	if (atomic_load_explicit(&loop->stop_noted, memory_order_acquire))
		stop = loop->stop_note;
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
		fputs(",\"stop\":", f);
		rtl_json_string(f, stop ? stop : "");
		fputs("}\n", f);
	} else {
		fputs("loop counters:\n", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "  %-16s %llu\n", names[i], (unsigned long long)v[i]);
		fputs("loop latency:\n", f);
		for (int h = 0; h < RTL_LOOP_H_COUNT; h++) {
			char title[32];

			snprintf(title, sizeof(title), "  %-13s", hist_names[h]);
			rtl_hist_print(&loop->hist[h], f, title, RTL_NS_PER_US);
		}
		if (why)
			fprintf(f, "first rejected command: %s\n", why);
		if (s.silent)
			fprintf(f,
				"SILENT: %llu times armed with nothing sent for longer than the "
				"controller's watchdog: the controller stopped the arm\n",
				(unsigned long long)s.silent);
		if (stop)
			fprintf(f, "stop at exit: %s%s\n",
				s.stop_unconfirmed ? "NOT CONFIRMED: " : "", stop);
		if (loop->rt_notes[0])
			fprintf(f, "real-time settings not applied:\n%s", loop->rt_notes);
	}
	return ferror(f) ? -EIO : 0;
}
