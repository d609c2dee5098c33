// SPDX-License-Identifier: MIT
/*
 * The control loop's core, in the order the data flows: set-up, the rx
 * thread that receives and decodes into the ring, the worker that takes
 * frames and runs the step, then starting, joining and freeing. The design
 * note and the contract of who owns what on which thread are in
 * <rtloop/loop.h>; loop_private.h says which file holds the rest (the
 * transmit side, reconnect and the stop at exit, the watchdog, the
 * external-loop API, the report).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/sized.h>

#include "loop_private.h"
#include "rtl_trace.h"

/* ---- set-up ------------------------------------------------------------------------ */

/* A real-time setting that could not be applied: kept for the report. */
static void note(struct rtl_loop *loop, const char *msg)
{
	size_t len = strlen(loop->rt_notes);

	snprintf(loop->rt_notes + len, sizeof(loop->rt_notes) - len, "%s\n", msg);
	rtl_log(RTL_LOG_WARN, "%s", msg);
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

/* The transport as this library reads it: its struct at least as large as
 * this library's, and its operations copied to this library's size. */
static int take_transport(struct rtl_loop *loop, struct rtl_transport *t, struct rtl_error *err)
{
	const struct rtl_transport_ops *o;
	int ret;

	if (!t || !t->ops)
		return fail(err, -EINVAL, "loop: no transport (cfg.transport, and its ops)");
	if (t->size < sizeof(*t))
		return fail(err, -EINVAL,
			    "loop: the transport's struct rtl_transport has no .size (or a "
			    "smaller one than this library's): its implementation must set .size "
			    "= sizeof(struct rtl_transport)");
	ret = rtl__sized_in(&loop->ops, sizeof(loop->ops), t->ops, "struct rtl_transport_ops", err);
	if (ret < 0) {
		rtl_log(RTL_LOG_ERROR, "loop: %s", err ? err->msg : "bad transport ops");
		return ret;
	}
	o = &loop->ops;
	if (!o->connect || !o->recv || !o->next || !o->send || !o->disconnect)
		return fail(err, -EINVAL,
			    "loop: the transport lacks a required operation (connect, recv, "
			    "next, send, disconnect)");
	if (!o->name)
		loop->ops.name = "unnamed";
	loop->t = t;
	return 0;
}

static int validate(const struct rtl_loop_config *cfg, struct rtl_error *err)
{
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
	if (cfg->watchdog_ns < 0)
		return fail(err, -EINVAL, "loop: watchdog_ns must be >= 0 (0: watchdog_periods)");
	if (cfg->spin_ns < 0 || cfg->spin_lead_ns < 0 || cfg->reconnect_attempts < 0 ||
	    cfg->reconnect_backoff_ns < 0)
		return fail(err, -EINVAL,
			    "loop: spin_ns, spin_lead_ns, reconnect_attempts and "
			    "reconnect_backoff_ns must not be negative");
	return 0;
}

/* Zero means the default: fill them in. */
static void defaults(struct rtl_loop_config *cfg)
{
	if (!cfg->ring_capacity)
		cfg->ring_capacity = DEFAULT_RING;
	if (!cfg->rx_priority)
		cfg->rx_priority = DEFAULT_RX_PRIO;
	if (!cfg->worker_priority)
		cfg->worker_priority = DEFAULT_WORKER_PRIO;
	if (!cfg->watchdog_periods)
		cfg->watchdog_periods = DEFAULT_WATCHDOG;
	if (!cfg->reconnect_backoff_ns)
		cfg->reconnect_backoff_ns = DEFAULT_BACKOFF_NS;
	if (!cfg->stop_timeout_ns)
		cfg->stop_timeout_ns = DEFAULT_STOP_TIMEOUT_NS;
}

static void free_loop(struct rtl_loop *loop)
{
	/* The telemetry keeps the final counters and histograms, not the
	 * loop's memory nor its transport's. */
	rtl__telemetry_detach(loop->cfg.telemetry);
	if (loop->hist)
		rtl_mem_free(loop->hist, sizeof(struct rtl_hist) * RTL_LOOP_H_COUNT);
	rtl_log_queue_destroy(loop->rx_log);
	rtl_log_queue_destroy(loop->worker_log);
	free(loop);
}

static int loop_stats(const void *loop, void *snapshot)
{
	return rtl_loop_stats(loop, snapshot);
}

/* The loop's counters and histograms in the telemetry, as "loop.*". */
static int add_telemetry(struct rtl_loop *loop, struct rtl_error *err)
{
	struct rtl_telemetry *t = loop->cfg.telemetry;
	size_t n;
	const struct rtl_stat_field *f = rtl_loop_counter_fields(&n);
	int ret = rtl_telemetry_counters(t, "loop", f, n, loop_stats, loop,
					 sizeof(struct rtl_loop_counters), err);

	for (int i = 0; ret == 0 && i < RTL_LOOP_H_COUNT; i++)
		ret = rtl_telemetry_hist(t, rtl_loop_hist_name((enum rtl_loop_hist_id)i),
					 &loop->hist[i], err);
	return ret;
}

RTL_API int rtl_loop_create(struct rtl_loop **out, const struct rtl_loop_config *cfg,
			    struct rtl_error *err)
{
	struct rtl_loop *loop;
	void *mem;
	int ret;

	if (out)
		*out = NULL;
	if (!out || !cfg)
		return fail(err, -EINVAL, "loop: no configuration");
	loop = calloc(1, sizeof(*loop));
	if (!loop)
		return fail(err, -ENOMEM, "loop: out of memory");
	ret = rtl__sized_in(&loop->cfg, sizeof(loop->cfg), cfg, "struct rtl_loop_config", err);
	if (ret < 0) {
		rtl_log(RTL_LOG_ERROR, "loop: %s", err ? err->msg : "bad configuration");
		goto err_free;
	}
	ret = take_transport(loop, loop->cfg.transport, err);
	if (ret == 0)
		ret = validate(&loop->cfg, err);
	if (ret < 0)
		goto err_free;
	defaults(&loop->cfg);
	if (rtl_log_queue_create(&loop->rx_log, LOG_SLOTS, NULL) < 0 ||
	    rtl_log_queue_create(&loop->worker_log, LOG_SLOTS, NULL) < 0) {
		ret = fail(err, -ENOMEM, "loop: cannot allocate the log queues");
		goto err_free;
	}
	/* The log thread sleeps until a queue rings: no periodic wake-up
	 * disturbs the real-time threads' CPUs. */
	rtl_log_queue_set_bell(loop->rx_log, (uint32_t *)&loop->log_bell);
	rtl_log_queue_set_bell(loop->worker_log, (uint32_t *)&loop->log_bell);
	ret = rtl_mem_alloc(&mem, sizeof(struct rtl_hist) * RTL_LOOP_H_COUNT,
			    worker_node(&loop->cfg));
	if (ret < 0) {
		fail(err, ret, "loop: cannot allocate the histograms");
		goto err_free;
	}
	loop->hist = mem;
	if (loop->cfg.telemetry) {
		ret = add_telemetry(loop, err);
		if (ret < 0)
			goto err_free;
	}
	atomic_init(&loop->armed, !loop->cfg.start_disarmed);
	loop->cpu_latency_fd = -1;
	*out = loop;
	return 0;

err_free:
	free_loop(loop);
	return ret;
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

int rtl__loop_connected(struct rtl_loop *loop, struct rtl_error *err)
{
	atomic_store_explicit(&loop->watchdog_ns,
			      loop->cfg.watchdog_periods < 0 ? 0
			      : loop->cfg.watchdog_ns > 0    ? loop->cfg.watchdog_ns
			      : loop->cfg.watchdog_periods > 0 && loop->t->period_ns > 0
				      ? (int64_t)loop->cfg.watchdog_periods * loop->t->period_ns
				      : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&loop->period_ns, loop->t->period_ns, memory_order_relaxed);
	loop->rx.connected = true;
	loop->rx.last_frame_ns = rtl_time_now();
	return make_ring(loop, err);
}

/* ---- rx thread ---------------------------------------------------------------------------- */

static void wake_worker(struct rtl_loop *loop)
{
	/* seq_cst on both words: with the worker's seq_cst read of the
	 * event count and store of "sleeping", either it sees our bump or we
	 * see it asleep (see rtl__loop_wait_frame()). */
	atomic_fetch_add_explicit(&loop->events, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&loop->sleeping, memory_order_seq_cst))
		futex_wake(&loop->events);
}

/* A frame was decoded into @f (@slot: a ring slot, or NULL: the scratch
 * frame, the ring being full): number, count, time, commit, wake. */
static void took_in(struct rtl_loop *loop, struct rtl_loop_frame *f, bool slot, int64_t now)
{
	f->seq = loop->rx.seq++;
	loop->rx.times[f->seq % WATCHDOG_HISTORY] = now;
	/* Both events follow the decode (the frame's seq is known only
	 * then); the time recv() returned is in rx_ns. */
	rtl_trace_frame_received(f->seq, f->ctrl_time, f->rx_ns, f->size);
	rtl_trace_frame_decoded(f->seq, 0);
	rtl_stat_add(&loop->c.frames, 1);
	if (loop->rx.last_rx_ns)
		rtl_hist_record(&loop->hist[RTL_LOOP_H_INTERARRIVAL], now - loop->rx.last_rx_ns);
	loop->rx.last_rx_ns = now;
	loop->rx.last_frame_ns = now;
	if (f->ctrl_skipped) {
		rtl_stat_add(&loop->c.ctrl_skipped, f->ctrl_skipped);
		rtl_trace_skipped(f->seq, f->ctrl_skipped, RTL_TRACE_SKIP_CONTROLLER);
	}
	if (!slot) {
		rtl_stat_add(&loop->c.ring_full, 1);
		rtl_trace_skipped(f->seq, 1, RTL_TRACE_SKIP_RING_FULL);
		return;
	}
	f->commit_ns = rtl_time_now();
	rtl_ring_commit(loop->ring);
	rtl_trace_frame_committed(f->seq, rtl_ring_size(loop->ring));
	if (!loop->cfg.inline_step)
		wake_worker(loop);
}

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
		r = loop->ops.next(t, f, loop->slot_size - sizeof(*f));
		if (r == 0)
			break;
		if (r < 0) {
			/* -ETIMEDOUT: the transport's own receive time-out
			 * (lost() counts it), not a bad frame. */
			if (r != -ETIMEDOUT)
				rtl_stat_add(&loop->c.rx_errors, 1);
			return rtl__loop_lost(loop, r) ? got : r;
		}
		got++;
		took_in(loop, f, slot != NULL, now);
		/* Inline mode: the watch thread watches the step. */
		if (!loop->cfg.inline_step)
			rtl__loop_watchdog_check(loop, now, f->seq);
	}
	return got;
}

static int run_inline(struct rtl_loop *loop);

static void *rx_main(void *arg)
{
	struct rtl_loop *loop = arg;
	struct rtl_transport *t = loop->t;

	rtl_log_queue_attach(loop->rx_log);
	while (!stopping(loop)) {
		int n = loop->ops.recv(t), got = 0;
		int64_t now = rtl_time_now();

		if (n > 0)
			got = take_in(loop, now);
		else if (n != -EAGAIN && !stopping(loop))
			got = rtl__loop_lost(loop, n) ? 0 : -ECONNRESET;
		if (got < 0)
			break;
		if (!got && !stopping(loop) && rtl__loop_rx_timed_out(loop, now) &&
		    !rtl__loop_reconnect(loop, -ETIMEDOUT))
			break;
		if (got > 0 && loop->cfg.inline_step && run_inline(loop) < 0)
			break;
	}
	rtl__loop_finish(loop);
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

/* Sleep on the event count until a frame, @wake, or a stop. */
static const struct rtl_loop_frame *sleep_for_frame(struct rtl_loop *loop, int64_t wake)
{
	const struct rtl_loop_frame *f;
	uint32_t seen;

	/*
	 * No lost wake-up: "seen" is read (seq_cst, so also acquire) before
	 * we announce sleep. A commit whose event bump we read is visible to
	 * the take() below. A later bump changes the word, so futex_wait
	 * returns at once; and the rx thread, which bumps before it reads
	 * "sleeping" (both seq_cst), either sees us asleep and wakes us or
	 * bumped before our announcement.
	 */
	seen = atomic_load_explicit(&loop->events, memory_order_seq_cst);
	atomic_store_explicit(&loop->sleeping, 1, memory_order_seq_cst);
	f = take(loop);
	if (!f && !stopping(loop))
		futex_wait(&loop->events, seen, wake - rtl_time_now());
	atomic_store_explicit(&loop->sleeping, 0, memory_order_relaxed);
	return f;
}

/*
 * Wait for a frame until @deadline (absolute ns; INT64_MAX: until stop).
 * Sleep on the event count, spinning inside the window that
 * rtl_loop_spin_window() gives.
 */
const struct rtl_loop_frame *rtl__loop_wait_frame(struct rtl_loop *loop, int64_t deadline)
{
	const struct rtl_loop_frame *f = take(loop);
	struct rtl_loop_spin w;
	int64_t now;

	/* A frame that is already there costs no clock read. */
	if (f)
		goto out;
	now = rtl_time_now();
	w = rtl_loop_spin_window(now, loop->step.taken_rx_ns,
				 atomic_load_explicit(&loop->period_ns, memory_order_relaxed),
				 loop->cfg.spin_ns, loop->cfg.spin_lead_ns);
	while (!stopping(loop) && now < deadline) {
		if (now >= w.from && now < w.until) {
			f = spin_for_frame(loop, now, w.until < deadline ? w.until : deadline);
		} else {
			/* Until the window opens, the deadline, or the idle
			 * re-check of the stop flag, whichever comes first. */
			int64_t wake = now + IDLE_WAKE_NS;

			if (deadline < wake)
				wake = deadline;
			if (w.from > now && w.from < w.until && w.from < wake)
				wake = w.from;
			f = sleep_for_frame(loop, wake);
		}
		if (f || (f = take(loop)))
			break;
		now = rtl_time_now();
	}
out:
	if (f)
		loop->step.taken_rx_ns = f->rx_ns;
	return f;
}

/*
 * A step on @f begins at @now: the wake-up and receive-to-step times, the
 * watchdog's @done moves to it (the frames below are skipped or finished),
 * and the safe packages sent so far are noted (one sent during the step
 * makes its commands stale).
 */
void rtl__loop_step_begin(struct rtl_loop *loop, const struct rtl_loop_frame *f, int64_t now)
{
	int64_t wake = now - f->commit_ns;

	rtl_hist_record(&loop->hist[RTL_LOOP_H_WAKE], wake);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_RX_TO_STEP], now - f->rx_ns);
	rtl_trace_worker_woke(f->seq, wake);
	loop->step.seq = f->seq;
	loop->step.start_ns = now;
	loop->step.safe_seen = atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire);
	atomic_store_explicit(&loop->done, f->seq, memory_order_release);
	atomic_store_explicit(&loop->step_begin_ns, now, memory_order_relaxed);
	atomic_store_explicit(&loop->last_begin_ns, now, memory_order_relaxed);
	rtl_stat_add(&loop->c.steps, 1);
	rtl_trace_step_started(f->seq);
}

/* The step's own work ran from @start to @end. */
void rtl__loop_step_ran(struct rtl_loop *loop, uint64_t seq, int64_t start, int64_t end)
{
	int64_t period = atomic_load_explicit(&loop->period_ns, memory_order_relaxed);

	rtl_trace_step_finished(seq, end - start);
	rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP], end - start);
	if (period > 0 && end - start > period)
		rtl_stat_add(&loop->c.overruns, 1);
}

/* The step on @seq is over at @end, its send done when @sent. */
void rtl__loop_step_done(struct rtl_loop *loop, uint64_t seq, int64_t start, int64_t end, bool sent)
{
	if (sent)
		rtl_hist_record(&loop->hist[RTL_LOOP_H_STEP_TO_SEND], end - start);
	atomic_store_explicit(&loop->step_begin_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&loop->end_ns, end, memory_order_relaxed);
	/* release: end_ns is seen by whoever sees this done. */
	atomic_store_explicit(&loop->done, seq + 1, memory_order_release);
}

/*
 * Run the step for @f, send, release the slot. On a step error: record it,
 * stop the loop and return it (< 0). Worker and inline rx thread alike.
 */
static int run_step(struct rtl_loop *loop, const struct rtl_loop_frame *f)
{
	int64_t start = rtl_time_now(), end;
	uint64_t seq = f->seq;
	int ret;

	rtl__loop_step_begin(loop, f, start);
	ret = loop->cfg.step(loop, f, loop->cfg.user);
	end = rtl_time_now();
	rtl__loop_step_ran(loop, seq, start, end);
	if (ret < 0) {
		rtl_ring_release(loop->ring);
		atomic_store_explicit(&loop->step_begin_ns, 0, memory_order_relaxed);
		set_result(loop, ret);
		/* The rx thread sees it at the next frame (or receive slice)
		 * and sends the stop. */
		stop_all(loop);
		return ret;
	}
	rtl__loop_send(loop, seq, end);
	end = rtl_time_now();
	/* After the send and its timing: the record costs the wire nothing. */
	if (loop->cfg.telemetry)
		rtl_telemetry_step(loop->cfg.telemetry, loop, f, end);
	rtl_ring_release(loop->ring); /* the slot is the producer's after this */
	rtl__loop_step_done(loop, seq, start, end, true);
	return 0;
}

static void *worker_main(void *arg)
{
	struct rtl_loop *loop = arg;

	rtl_log_queue_attach(loop->worker_log);
	while (!stopping(loop)) {
		const struct rtl_loop_frame *f = rtl__loop_wait_frame(loop, INT64_MAX);
		int ret;

		if (!f)
			continue;
		/* A reconnect has the transport: wait, then take again (the
		 * frame stays in the ring; a newer one may have come). */
		if (!rtl__loop_step_enter(loop)) {
			rtl__loop_wait_unparked(loop, INT64_MAX);
			continue;
		}
		ret = run_step(loop, f);
		rtl__loop_step_leave(loop);
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

/* ---- start, stop --------------------------------------------------------------------------- */

static int spawn(struct rtl_loop *loop, struct rtl_thread **th, const char *name, int prio, int cpu,
		 void *(*fn)(void *), struct rtl_error *err)
{
	const struct rtl_thread_info *info;
	struct rtl_thread_attr a = {
		.size = sizeof(a),
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
	info = rtl_thread_applied(*th);
	if (info->degraded) {
		char msg[sizeof(info->why.msg) + 64];

		snprintf(msg, sizeof(msg), "%s thread runs under SCHED_OTHER: %s", name,
			 info->why.msg);
		note(loop, msg);
	}
	return 0;
}

/* Join (and so free) a thread of the loop, if it runs; NULL says it is gone. */
static void join_thread(struct rtl_thread **th)
{
	if (*th)
		rtl_thread_join(*th, NULL);
	*th = NULL;
}

static void stop_logger(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->log_stop, 1, memory_order_release);
	atomic_fetch_add(&loop->log_bell, 1);
	futex_wake(&loop->log_bell);
	join_thread(&loop->log_thread);
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
	atomic_store(&loop->done, loop->rx.seq);
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
	loop->watch.fired_any = false;
	loop->rx.stop_on_loss = false;
	loop->step.armed_sent = false;
	loop->step.silent_noted = false;
	loop->ext.in_step = false;
}

/* Memory locked and C-states held, as the real-time mode asks. */
static int apply_rt(struct rtl_loop *loop, struct rtl_error *err)
{
	struct rtl_error e = { 0 };
	int ret;

	if (loop->cfg.rt_mode == RTL_LOOP_RT_OFF)
		return 0;
	ret = rtl_mem_lock_all(&e);
	if (ret < 0) {
		if (loop->cfg.rt_mode == RTL_LOOP_RT_REQUIRE) {
			if (err)
				*err = e;
			return ret;
		}
		note(loop, e.msg);
	}
	/* Shallow C-states while the loop runs: exits from deep ones cost
	 * 100 us and more. */
	loop->cpu_latency_fd = rtl_thread_hold_cpu_latency(0, &e);
	if (loop->cpu_latency_fd < 0)
		note(loop, e.msg);
	return 0;
}

/* The log thread, the worker (or inline mode's watch thread), the rx
 * thread: in that order, so that each finds what it needs running. */
static int spawn_threads(struct rtl_loop *loop, struct rtl_error *err)
{
	int ret = spawn(loop, &loop->log_thread, "rtl-log", 0, -1, log_main, err);

	if (ret < 0)
		return ret;
	if (loop->cfg.step) {
		/* Inline mode steps on the rx thread; the second thread then
		 * only keeps the watchdog. */
		ret = spawn(loop, &loop->worker_thread,
			    loop->cfg.inline_step ? "rtl-watch" : "rtl-worker",
			    loop->cfg.worker_priority, worker_cpu(&loop->cfg),
			    loop->cfg.inline_step ? rtl__loop_watch_main : worker_main, err);
		if (ret < 0)
			goto err_stop;
	}
	ret = spawn(loop, &loop->rx_thread, "rtl-rx", loop->cfg.rx_priority, rx_cpu(&loop->cfg),
		    rx_main, err);
	if (ret < 0)
		goto err_stop;
	return 0;

err_stop:
	stop_all(loop);
	join_thread(&loop->worker_thread);
	stop_logger(loop);
	return ret;
}

RTL_API int rtl_loop_start(struct rtl_loop *loop, struct rtl_error *err)
{
	struct rtl_error e = { 0 };
	int ret;

	if (!loop)
		return fail(err, -EINVAL, "loop: NULL");
	if (loop->started)
		return fail(err, -EALREADY, "loop: already started");
	ret = apply_rt(loop, err);
	if (ret < 0)
		return ret;
	reset_run(loop);
	ret = loop->ops.connect(loop->t, &e);
	if (ret < 0) {
		if (err)
			*err = e;
		goto err_latency;
	}
	ret = rtl__loop_connected(loop, err);
	if (ret < 0)
		goto err_disconnect;
	/* The telemetry's layout is fixed now (connected callbacks may have
	 * added signals), before any step publishes. */
	if (loop->cfg.telemetry) {
		rtl__telemetry_period(loop->cfg.telemetry, loop->t->period_ns);
		ret = rtl_telemetry_start(loop->cfg.telemetry, err);
		if (ret < 0)
			goto err_disconnect;
	}
	/* Whatever the controller holds from an earlier client, the loop
	 * starts from the safe set (no threads yet: nobody else sends). */
	rtl__loop_safe_locked(loop);
	if (!loop->ops.send_safe && loop->ops.at_rest && atomic_load(&loop->armed))
		rtl_log(RTL_LOG_WARN,
			"loop: the %s transport has no safe package: neither the "
			"watchdog nor the stop at exit can stop the arm",
			loop->ops.name);
	ret = spawn_threads(loop, err);
	if (ret < 0)
		goto err_disconnect;
	loop->started = true;
	return 0;

err_disconnect:
	loop->ops.disconnect(loop->t);
	loop->rx.connected = false;
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

RTL_API bool rtl_loop_stopping(const struct rtl_loop *loop)
{
	return loop && stopping(loop);
}

RTL_API int rtl_loop_join(struct rtl_loop *loop)
{
	if (!loop || !loop->started)
		return -EINVAL;
	/* The rx thread ends after the stop at exit. */
	join_thread(&loop->rx_thread);
	stop_all(loop);
	join_thread(&loop->worker_thread);
	stop_logger(loop);
	/* What the threads said after the log thread's last look. */
	rtl_log_queue_drain(loop->rx_log);
	rtl_log_queue_drain(loop->worker_log);
	loop->started = false;
	rtl__loop_ext_reset(loop);
	/* Frames the rx thread committed that no step took before the loop
	 * ended (the stream was lost right after a burst, or the stop came):
	 * counted, then dropped, so that a next run starts empty. */
	while (loop->ring && rtl_ring_peek(loop->ring)) {
		rtl_stat_add(&loop->c.unstepped, 1);
		rtl_ring_release(loop->ring);
	}
	loop->ops.disconnect(loop->t);
	loop->rx.connected = false;
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
	free_loop(loop);
}

/* ---- small queries ------------------------------------------------------------------------- */

RTL_API void *rtl_loop_commands(struct rtl_loop *loop)
{
	return loop ? loop->t->commands : NULL;
}

RTL_API struct rtl_transport *rtl_loop_transport(struct rtl_loop *loop)
{
	return loop ? loop->t : NULL;
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
	return loop ? loop->step.seq : 0;
}
