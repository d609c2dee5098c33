// SPDX-License-Identifier: MIT
/*
 * The external-loop API: the user's own thread is the step's thread. From
 * a rtl_loop_read() that returns a frame to the rtl_loop_write() that
 * follows (or the next read), that thread is inside a step, with the same
 * bookkeeping as the worker's (rtl__loop_step_begin/ran/done in loop.c):
 * a reconnect parks it, the watchdog measures it, its send goes through
 * the same checks.
 */
#include <errno.h>

#include "loop_private.h"

/* The external loop's step ends at @now without a send (a read after a
 * read, without a write between). */
static void step_over(struct rtl_loop *loop, int64_t now)
{
	rtl__loop_step_ran(loop, loop->step.seq, loop->step.start_ns, now);
	rtl__loop_step_done(loop, loop->step.seq, loop->step.start_ns, now, false);
	loop->ext.in_step = false;
	rtl__loop_step_leave(loop);
}

static void release_held(struct rtl_loop *loop)
{
	if (loop->ext.holding) {
		rtl_ring_release(loop->ring);
		loop->ext.holding = false;
	}
}

RTL_API const struct rtl_loop_frame *rtl_loop_read(struct rtl_loop *loop, int64_t timeout_ns)
{
	const struct rtl_loop_frame *f;
	int64_t now, deadline;

	if (!loop || !loop->started || loop->cfg.step)
		return NULL;
	now = rtl_time_now();
	if (loop->ext.in_step)
		step_over(loop, now);
	if (loop->ext.held) { /* a hold without a write: it ends here */
		loop->ext.held = false;
		rtl__loop_step_leave(loop);
	}
	release_held(loop);
	deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
	for (;;) {
		f = rtl__loop_wait_frame(loop, deadline);
		if (!f)
			return NULL;
		if (rtl__loop_step_enter(loop))
			break;
		rtl__loop_wait_unparked(loop, deadline);
		if (rtl_time_now() >= deadline)
			return NULL;
	}
	rtl__loop_step_begin(loop, f, rtl_time_now());
	loop->ext.frame = f;
	loop->ext.holding = true;
	loop->ext.in_step = true;
	return f;
}

/* A step without a frame (a write of its own, or a hold): entered unless a
 * reconnect has the transport; a safe package sent from here on makes the
 * step's commands stale. */
static bool enter_frameless(struct rtl_loop *loop)
{
	if (!rtl__loop_step_enter(loop))
		return false;
	loop->step.safe_seen = atomic_load_explicit(&loop->c.safe_sends, memory_order_acquire);
	return true;
}

RTL_API int rtl_loop_write(struct rtl_loop *loop)
{
	int64_t now;
	int ret;

	if (!loop || !loop->started || loop->cfg.step)
		return -EINVAL;
	if (!loop->ext.in_step) {
		/* A write of its own (no read since the last write): a step
		 * of its own, as short as the send, or the one
		 * rtl__loop_ext_hold() began (a safe package sent since
		 * makes its commands stale). */
		if (loop->ext.held)
			loop->ext.held = false;
		else if (!enter_frameless(loop))
			return -EAGAIN;
		ret = rtl__loop_send(loop, loop->step.seq, rtl_time_now());
		rtl__loop_step_leave(loop);
		return ret;
	}
	now = rtl_time_now();
	rtl__loop_step_ran(loop, loop->step.seq, loop->step.start_ns, now);
	ret = rtl__loop_send(loop, loop->step.seq, now);
	now = rtl_time_now();
	if (loop->cfg.telemetry)
		rtl_telemetry_step(loop->cfg.telemetry, loop, loop->ext.frame, now);
	rtl__loop_step_done(loop, loop->step.seq, loop->step.start_ns, now, true);
	loop->ext.in_step = false;
	rtl__loop_step_leave(loop);
	return ret;
}

bool rtl__loop_ext_hold(struct rtl_loop *loop)
{
	if (loop->ext.in_step || loop->ext.held)
		return true;
	if (!enter_frameless(loop))
		return false;
	loop->ext.held = true;
	return true;
}

void rtl__loop_ext_reset(struct rtl_loop *loop)
{
	release_held(loop);
	loop->ext.in_step = false;
	loop->ext.held = false;
}
