// SPDX-License-Identifier: MIT
/*
 * The loop's life after start: parking the step while a reconnect has the
 * transport, a lost connection and the reconnect, the receive time-out,
 * and the stop at exit with its wait for rest. All of it is slow path,
 * run on the rx thread (the step's thread only parks and unparks).
 *
 * Parking is Dekker's pattern on two words: the step's thread stores
 * in_step then loads park; the rx thread stores park then loads in_step;
 * all four sequentially consistent, so at least one of the two sees the
 * other and no step can start while a reconnect changes the transport.
 *
 * The stop at exit holds the transmit side from its start to the end of
 * the loop: nothing the step sends can follow the safe package.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loop_private.h"
#include "rtl_trace.h"

const char *rtl__loop_errname(int code)
{
	const char *s = strerrordesc_np(code < 0 ? -code : code);

	return s ? s : "unknown error";
}

/* ---- parking: connect only while no step runs ------------------------------------------ */

/*
 * The step's thread, before it steps: announce, then look (seq_cst both,
 * as park_step() stores then looks: one of the two sees the other).
 * false: a reconnect has the transport, do not step now.
 */
bool rtl__loop_step_enter(struct rtl_loop *loop)
{
	atomic_store_explicit(&loop->in_step, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&loop->park, memory_order_seq_cst))
		return true;
	atomic_store_explicit(&loop->in_step, 0, memory_order_release);
	return false;
}

void rtl__loop_step_leave(struct rtl_loop *loop)
{
	/* release: the step's writes (commands, handles it read) happen
	 * before the rx thread's reconnect, which acquires in park_step(). */
	atomic_store_explicit(&loop->in_step, 0, memory_order_release);
}

/* The step's thread, parked: wait until the reconnect is over (or stop,
 * or @deadline). */
void rtl__loop_wait_unparked(struct rtl_loop *loop, int64_t deadline)
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

/* The rx thread: keep the step's thread out of its step. Returns false if
 * the loop is stopping meanwhile (a step that never ends). */
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

/* ---- a lost connection, the reconnect ------------------------------------------------------ */

/* Sleep @ns in chunks of at most 50 ms, so that a stop is seen quickly. */
static void backoff_sleep(struct rtl_loop *loop, int64_t ns)
{
	int64_t end = rtl_time_now() + ns;
	int64_t now;

	while (!stopping(loop) && (now = rtl_time_now()) < end)
		rtl_time_sleep_until(end - now > 50 * RTL_NS_PER_MS ? now + 50 * RTL_NS_PER_MS
								    : end);
}

bool rtl__loop_lost(struct rtl_loop *loop, int code)
{
	const char *why = loop->ops.error ? loop->ops.error(loop->t) : NULL;

	if (!why || !why[0])
		why = code ? rtl__loop_errname(code) : "the controller closed the connection";
	/* A transport that keeps its own receive deadline (one that other
	 * datagrams cannot hold off) says so with -ETIMEDOUT. */
	if (code == -ETIMEDOUT && !stopping(loop))
		rtl_stat_add(&loop->c.rx_timeouts, 1);
	if (!stopping(loop))
		rtl_log(RTL_LOG_ERROR, "loop: connection lost: %s%s", why,
			loop->cfg.reconnect_attempts ? ""
						     : " (the loop ends: no reconnect_attempts)");
	return rtl__loop_reconnect(loop, code ? code : -ECONNRESET);
}

/* One attempt succeeded: start from the safe set, let the step go on. */
static bool reconnected(struct rtl_loop *loop)
{
	/* The controller may still hold the old connection's last command. */
	rtl__loop_safe_locked(loop);
	rtl_stat_add(&loop->c.reconnects, 1);
	rtl__loop_tx_release(loop);
	unpark_step(loop);
	rtl_log(RTL_LOG_INFO, "loop: reconnected; the safe package was sent and commands are "
			      "disarmed until rtl_loop_arm()");
	return true;
}

/*
 * The connection is gone: reconnect (slow path) or end the loop. The step
 * is parked and the transmit side held for the whole of it: connect()
 * rebuilds the transport's tables and runs the application's callbacks,
 * which no step may see half done. Returns true when the rx thread may go
 * on receiving.
 */
bool rtl__loop_reconnect(struct rtl_loop *loop, int why)
{
	int64_t backoff = loop->cfg.reconnect_backoff_ns;
	struct rtl_error err = { 0 };
	int ret = why;

	if (!park_step(loop))
		return false;
	rtl__loop_tx_take(loop);
	/* Commands stay off until the application says otherwise. A stream
	 * that broke (a protocol error, a silent controller) may still take a
	 * stop: send it before letting go (on a closed socket it just fails). */
	atomic_store(&loop->armed, 0);
	if (rtl__loop_safe_locked(loop) > 0)
		loop->rx.stop_on_loss = true;
	loop->ops.disconnect(loop->t);
	loop->rx.connected = false;
	for (int i = 1; i <= loop->cfg.reconnect_attempts && !stopping(loop); i++) {
		rtl_log(RTL_LOG_WARN, "loop: reconnect attempt %d of %d", i,
			loop->cfg.reconnect_attempts);
		backoff_sleep(loop, backoff);
		if (stopping(loop))
			break;
		ret = loop->ops.connect(loop->t, &err);
		rtl_trace_reconnect((uint32_t)i, ret);
		if (ret == 0) {
			ret = rtl__loop_connected(loop, &err);
			if (ret < 0)
				break;
			return reconnected(loop);
		}
		rtl_log(RTL_LOG_WARN, "loop: reconnect attempt %d failed: %s", i, err.msg);
		backoff = backoff * 2 > MAX_BACKOFF_NS ? MAX_BACKOFF_NS : backoff * 2;
	}
	rtl__loop_tx_release(loop);
	unpark_step(loop);
	if (!stopping(loop))
		set_result(loop, ret < 0 ? ret : -ECONNRESET);
	return false;
}

bool rtl__loop_rx_timed_out(struct rtl_loop *loop, int64_t now)
{
	int64_t limit = loop->t->rx_timeout_ns;

	if (limit <= 0 || now - loop->rx.last_frame_ns <= limit)
		return false;
	rtl_stat_add(&loop->c.rx_timeouts, 1);
	rtl_log(RTL_LOG_ERROR,
		"loop: no data frame from the controller for %.2f s (the %s transport's receive "
		"time-out): the connection counts as lost",
		(double)(now - loop->rx.last_frame_ns) / 1e9, loop->ops.name);
	return true;
}

/* ---- the stop at exit --------------------------------------------------------------------- */

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

		if (now - last_safe >= resend_ns && rtl__loop_safe_locked(loop) > 0)
			last_safe = now;
		n = loop->ops.recv(t);
		now = rtl_time_now();
		if (n == -EAGAIN)
			continue;
		if (n <= 0)
			return n < 0 ? n : -ECONNRESET;
		for (;;) {
			struct rtl_loop_frame *f = loop->scratch;
			int r;

			f->rx_ns = now;
			r = loop->ops.next(t, f, loop->slot_size - sizeof(*f));
			if (r == 0)
				break;
			if (r < 0)
				return r;
			rtl_stat_add(&loop->c.stop_frames, 1);
			if (now < counts_from)
				continue;
			rest = loop->ops.at_rest(t, f) ? rest + 1 : 0;
			if (rest >= REST_FRAMES)
				return 1;
		}
	}
	return 0;
}

/*
 * Whether the stop can be sent and awaited at all (@ret: what sending it
 * returned). Returns true when it was noted here (nothing to await).
 */
static bool stop_cannot_wait(struct rtl_loop *loop, int ret, bool commanded)
{
	if (ret == -ENOTSUP && !loop->ops.at_rest) {
		stop_noted(loop, true,
			   "the %s transport moves nothing (a sensor): there is nothing to stop",
			   loop->ops.name);
		return true;
	}
	if (ret == -ENOTSUP && !commanded) {
		stop_noted(loop, true, "no command was sent, so there was nothing to stop");
		return true;
	}
	if (ret == -ENOTSUP) {
		stop_noted(loop, false,
			   "the transport has no safe package, so nothing was sent at exit; give "
			   "it one (RTDE: the safe callback, or the command registers in an input "
			   "recipe)");
		return true;
	}
	if (ret < 0 && ret != -EAGAIN) {
		stop_noted(loop, false, "the stop could not be sent (%s)", rtl__loop_errname(ret));
		return true;
	}
	if (loop->cfg.stop_timeout_ns < 0) {
		stop_noted(loop, true, "the stop was sent; rest not awaited (stop_timeout_ns < 0)");
		return true;
	}
	if (!loop->ops.at_rest) {
		stop_noted(loop, false,
			   "the stop was sent, but the %s transport cannot tell whether the arm "
			   "came to rest",
			   loop->ops.name);
		return true;
	}
	return false;
}

/* What the wait for rest found (@ret: await_rest()'s). */
static void stop_awaited(struct rtl_loop *loop, int ret, int64_t sent_at)
{
	unsigned long long frames = (unsigned long long)rtl_stat_get(&loop->c.stop_frames);

	if (ret == 1) {
		int64_t took = rtl_time_now() - sent_at;

		rtl_stat_add(&loop->c.stop_wait_ns, (uint64_t)took);
		stop_noted(loop, true, "the arm was at rest %.1f ms after the stop (%llu frames)",
			   (double)took / 1e6, frames);
	} else if (ret == 0) {
		stop_noted(loop, false,
			   "the arm was not at rest %.1f s after the stop (%llu frames)",
			   (double)loop->cfg.stop_timeout_ns / 1e9, frames);
	} else {
		stop_noted(loop, false,
			   "the connection failed while waiting for rest (%s): the controller's "
			   "own watchdog stops the arm",
			   rtl__loop_errname(ret));
	}
}

/*
 * The stop at exit, on the rx thread, whatever ended the loop: hold the
 * transmit side to the end (nothing the step sends can follow), send the
 * safe package, and receive until the arm is at rest or the stop time-out.
 */
void rtl__loop_finish(struct rtl_loop *loop)
{
	struct rtl_transport *t = loop->t;
	int64_t resend = STOP_RESEND_NS, sent_at;
	bool commanded;
	int ret;

	stop_all(loop);
	rtl__loop_tx_take(loop);
	commanded = atomic_load_explicit(&loop->commanded, memory_order_relaxed);
	if (!loop->rx.connected && commanded) {
		stop_noted(loop, false,
			   loop->rx.stop_on_loss
				   ? "the connection was lost; the stop was sent as it went, but "
				     "whether the arm came to rest could not be seen: the "
				     "controller's own watchdog stops it"
				   : "the connection was lost, so no stop could be sent: the "
				     "controller's own watchdog stops the arm");
		return;
	}
	ret = loop->rx.connected ? rtl__loop_safe_locked(loop) : -ENOTSUP;
	if (stop_cannot_wait(loop, ret, commanded))
		return;
	sent_at = rtl_time_now();
	if (t->ctrl_watchdog_ns > 0 && t->ctrl_watchdog_ns / 4 < resend)
		resend = t->ctrl_watchdog_ns / 4;
	ret = await_rest(loop, ret == -EAGAIN ? 0 : sent_at, sent_at + loop->cfg.stop_timeout_ns,
			 resend);
	stop_awaited(loop, ret, sent_at);
}
