// SPDX-License-Identifier: MIT
/*
 * The loop's transmit side: one holder at a time (the contract in
 * <rtloop/loop.h>), the safe package, and the step's send with the checks
 * that stand between what a step wrote and the wire.
 *
 * The flag is a compare-and-swap that the hot path tries and never waits
 * for: a step that finds it held (the watchdog is sending the safe package,
 * or a reconnect runs) counts a would-block and sends its newest values
 * next cycle. Only the slow paths (a reconnect, the stop at exit) wait for
 * it, and then only for the length of one non-blocking send.
 */
#include <errno.h>
#include <stdio.h>

#include "loop_private.h"
#include "rtl_trace.h"

bool rtl__loop_tx_try(struct rtl_loop *loop)
{
	int expect = 0;

	/* acq_rel: the winner sees everything the previous owner did on the
	 * transport's transmit state, and publishes its own on release. */
	return atomic_compare_exchange_strong_explicit(&loop->tx_owner, &expect, 1,
						       memory_order_acq_rel, memory_order_relaxed);
}

void rtl__loop_tx_release(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->tx_owner, 0, memory_order_release);
}

void rtl__loop_tx_take(struct rtl_loop *loop)
{
	while (!rtl__loop_tx_try(loop))
		rtl_time_sleep_until(rtl_time_now() + 50 * RTL_NS_PER_US);
}

int rtl__loop_safe_locked(struct rtl_loop *loop)
{
	int ret;

	if (!loop->ops.send_safe)
		return -ENOTSUP;
	ret = loop->ops.send_safe(loop->t);
	if (ret > 0) {
		atomic_fetch_add_explicit(&loop->c.safe_sends, 1, memory_order_relaxed);
		atomic_store_explicit(&loop->last_tx_ns, rtl_time_now(), memory_order_relaxed);
	}
	return ret;
}

int rtl__loop_send_safe(struct rtl_loop *loop)
{
	int ret;

	if (!rtl__loop_tx_try(loop))
		return -EAGAIN;
	ret = rtl__loop_safe_locked(loop);
	rtl__loop_tx_release(loop);
	return ret;
}

/* Armed, yet nothing has gone out for longer than the controller waits
 * before it stops the arm: say so, once per silence. The step's thread. */
static void silence_check(struct rtl_loop *loop, int64_t now)
{
	int64_t wd = loop->t->ctrl_watchdog_ns;
	int64_t last = atomic_load_explicit(&loop->last_tx_ns, memory_order_relaxed);

	if (wd <= 0 || !loop->step.armed_sent || loop->step.silent_noted || !last ||
	    now - last <= wd)
		return;
	loop->step.silent_noted = true;
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
	rtl__loop_safe_locked(loop);
}

/* Disarmed: nothing the step wrote goes out; if commands went out while
 * armed, the safe package stops what they started (once). */
static int disarmed(struct rtl_loop *loop)
{
	rtl_stat_add(&loop->c.suppressed, 1);
	if (loop->step.armed_sent && rtl__loop_tx_try(loop)) {
		int ret = rtl__loop_safe_locked(loop);

		rtl__loop_tx_release(loop);
		if (ret != -EAGAIN)
			loop->step.armed_sent = false;
	}
	return 0;
}

/* What a send returned, counted and traced. */
static void sent(struct rtl_loop *loop, uint64_t seq, int ret)
{
	if (ret > 0) {
		if (!loop->step.armed_sent)
			atomic_store_explicit(&loop->commanded, 1, memory_order_relaxed);
		loop->step.armed_sent = true;
		loop->step.silent_noted = false;
		rtl_stat_add(&loop->c.sends, 1);
		rtl_trace_package_sent(seq, 0, (uint32_t)ret);
	} else if (ret == 0) {
		rtl_stat_add(&loop->c.suppressed, 1);
		rtl_trace_package_suppressed(seq, 0, 0);
	} else if (ret == -EAGAIN) {
		rtl_stat_add(&loop->c.would_block, 1);
	}
}

/*
 * The step's send: stopping, disarmed, stale, check, coalesce. Nothing
 * the step wrote reaches the wire unchecked, and nothing it wrote goes out
 * once the watchdog has sent the safe package during its step.
 */
int rtl__loop_send(struct rtl_loop *loop, uint64_t seq, int64_t now)
{
	struct rtl_transport *t = loop->t;
	char why[sizeof(loop->reject_why)];
	int ret;

	if (stopping(loop)) {
		rtl_stat_add(&loop->c.after_stop, 1);
		return 0;
	}
	if (!atomic_load_explicit(&loop->armed, memory_order_relaxed))
		return disarmed(loop);
	/* acquire: pairs with the safe sender's increment; one sent since
	 * the step began makes its commands stale. */
	if (atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire) !=
	    loop->step.safe_seen) {
		rtl_stat_add(&loop->c.stale, 1);
		return 0;
	}
	silence_check(loop, now);
	if (!rtl__loop_tx_try(loop)) {
		rtl_stat_add(stopping(loop) ? &loop->c.after_stop : &loop->c.would_block, 1);
		return -EAGAIN;
	}
	if (loop->ops.check && loop->ops.check(t, why, sizeof(why)) < 0) {
		rejected(loop, why);
		rtl__loop_tx_release(loop);
		return 0;
	}
	ret = loop->ops.send(t, now);
	if (ret > 0)
		atomic_store_explicit(&loop->last_tx_ns, now, memory_order_relaxed);
	rtl__loop_tx_release(loop);
	sent(loop, seq, ret);
	return ret;
}
