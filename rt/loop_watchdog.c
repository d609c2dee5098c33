// SPDX-License-Identifier: MIT
/*
 * The loop's watchdog: when a frame has waited longer than the watchdog
 * time (watchdog_periods periods) with no step finishing since it arrived,
 * the safe package goes out, once per stall, and the late step's commands
 * are discarded when it returns (loop_tx.c sees safe_sends move).
 *
 * Who watches: the rx thread, at every frame it takes in, in threads mode;
 * in inline mode the step runs on the rx thread itself, so a thread of its
 * own (rtl-watch) looks, between frames.
 */
#include <errno.h>

#include "loop_private.h"
#include "rtl_trace.h"

/*
 * A stall: send the safe package, once per episode. An episode is named by
 * the watchdog's @done at the time (the frame being stepped, or the oldest
 * waiting): it changes only when a step starts on a new frame or ends, so
 * one stall fires once however long it lasts, and the next stall, after a
 * recovery, has a new name and fires again. The name is the watching
 * thread's alone, so no store of the step's thread can lose against it.
 * Transmit side busy: the next look tries again.
 */
static void fire(struct rtl_loop *loop, uint64_t done, uint64_t seq, uint32_t pending)
{
	int ret;

	if (loop->watch.fired_any && loop->watch.fired_done == done)
		return;
	ret = rtl__loop_send_safe(loop);
	if (ret == -EAGAIN)
		return;
	loop->watch.fired_any = true;
	loop->watch.fired_done = done;
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
void rtl__loop_watchdog_check(struct rtl_loop *loop, int64_t now, uint64_t seq)
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
						: loop->rx.times[done % WATCHDOG_HISTORY];
	if (end > oldest)
		oldest = end;
	if (now - oldest > limit)
		fire(loop, done, seq, (uint32_t)((seq - done) + 1));
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
 * safe package, once per episode (fire()). It sleeps on the event count,
 * which in this mode only stop_all() and unpark bump.
 */
void *rtl__loop_watch_main(void *arg)
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

			fire(loop, done, done, 1);
		}
		if (stopping(loop))
			break;
		if (!limit) {
			futex_wait(&loop->events, seen, IDLE_WAKE_NS);
			continue;
		}
		/* During a stall (safe set sent, or the transmit side busy):
		 * again on the same phase, at most a watchdog time later. */
		if (!begin)
			begin = atomic_load_explicit(&loop->last_begin_ns, memory_order_relaxed);
		futex_wait(&loop->events, seen, watch_next(now, begin, limit, period) - now);
	}
	rtl_log_queue_attach(NULL);
	return NULL;
}
