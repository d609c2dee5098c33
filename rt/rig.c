// SPDX-License-Identifier: MIT
/*
 * The rig: one step over several sources, each an rtl_loop of its own in
 * external-loop mode, with the rig's worker as the step's thread of all of
 * them. The design, the ownership contract for N sources and the safety
 * policy are written in <rtloop/rig.h>; this file is the worker, the
 * policy and the life of the rig. Counters and the report: rig_report.c.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/sized.h>
#include <rtloop/timer.h>

#include "loop_private.h"
#include "rig_private.h"

#define RIG_DEFAULT_WATCHDOG 3
/* The estimator's floor relaxes by period / STAMP_RELAX per frame. */
#define STAMP_RELAX 1000

static int fail(struct rtl_error *err, int code, const char *msg)
{
	rtl_log(RTL_LOG_ERROR, "%s", msg);
	return rtl_error_set(err, code, "%s", msg);
}

static bool rig_stopping(const struct rtl_rig *rig)
{
	return atomic_load_explicit(&rig->stop, memory_order_relaxed);
}

/* The rig ends with @ret (the first reason wins). Async-signal-safe. */
static void end_rig(struct rtl_rig *rig, int ret)
{
	int expect = 0;

	if (ret)
		atomic_compare_exchange_strong(&rig->result, &expect, ret);
	atomic_store(&rig->stop, 1);
	atomic_fetch_add(&rig->bell, 1);
	futex_wake(&rig->bell);
}

/* ---- the stamp estimator (pure) ----------------------------------------------------- */

static int64_t ctrl_ns(double ctrl_time)
{
	return (int64_t)llround(ctrl_time * 1e9);
}

RTL_API void rtl_rig_stamp_update(struct rtl_rig_stamp *est, double ctrl_time, int64_t rx_ns,
				  int64_t period_ns)
{
	int64_t off;

	if (!est || !isfinite(ctrl_time) || fabs(ctrl_time) > 9e9)
		return;
	off = rx_ns - ctrl_ns(ctrl_time);
	/* A controller clock that went back (a restart, a reconnect to
	 * another controller) starts the estimate afresh. */
	if (!est->have || ctrl_time < est->last_ctrl) {
		est->offset_ns = off;
		est->have = true;
	} else {
		est->offset_ns += period_ns > 0 ? period_ns / STAMP_RELAX : 0;
		if (off < est->offset_ns)
			est->offset_ns = off;
	}
	est->last_ctrl = ctrl_time;
}

RTL_API double rtl_rig_stamp_age(const struct rtl_rig_stamp *est, double ctrl_time, int64_t rx_ns,
				 int64_t now, int64_t period_ns)
{
	int64_t stamped = rx_ns;

	if (period_ns <= 0)
		return NAN;
	if (est && est->have && isfinite(ctrl_time) && fabs(ctrl_time) <= 9e9)
		stamped = ctrl_ns(ctrl_time) + est->offset_ns;
	return (double)(now - stamped) / (double)period_ns;
}

/* ---- create, destroy ----------------------------------------------------------------- */

static int check_config(const struct rtl_rig_config *c, struct rtl_error *err)
{
	if (!c->step)
		return fail(err, -EINVAL, "rig: no step function (cfg.step)");
	if (!c->sources || c->n_sources < 1 || c->n_sources > RTL_RIG_MAX_SOURCES)
		return fail(err, -EINVAL,
			    "rig: n_sources must be 1..8, with cfg.sources pointing to them");
	if (c->clock != RTL_RIG_TIMER && c->clock >= c->n_sources)
		return fail(err, -EINVAL,
			    "rig: cfg.clock is not a source index: give one, or RTL_RIG_TIMER with "
			    "cfg.period_ns");
	if (c->clock == RTL_RIG_TIMER && c->period_ns <= 0)
		return fail(err, -EINVAL,
			    "rig: clocked by the timer (RTL_RIG_TIMER) without cfg.period_ns > 0");
	if ((unsigned)c->policy > RTL_RIG_STOP_SOURCE)
		return fail(err, -EINVAL, "rig: unknown policy");
	if (c->watchdog_periods < -1 || c->watchdog_periods > 64)
		return fail(err, -EINVAL, "rig: watchdog_periods must be 1..64 (0: 3, -1: off)");
	if (c->pin_worker && c->worker_cpu < 0)
		return fail(err, -EINVAL, "rig: pin_worker is set with a negative CPU");
	for (unsigned i = 0; i < c->n_sources; i++) {
		if (!c->sources[i].transport)
			return fail(err, -EINVAL, "rig: a source has no transport");
		if (c->sources[i].stale_ns < 0)
			return fail(err, -EINVAL, "rig: a source's stale_ns is negative");
		for (unsigned k = 0; k < i; k++)
			if (c->sources[k].transport == c->sources[i].transport)
				return fail(
					err, -EINVAL,
					"rig: two sources share one transport: give each its own");
	}
	return 0;
}

static void free_rig(struct rtl_rig *rig)
{
	/* The telemetry keeps the final figures, and reads the rig no more. */
	rtl__telemetry_detach(rig->cfg.telemetry);
	free(rig->tel);
	for (unsigned i = 0; i < rig->n; i++) {
		rtl_loop_destroy(rig->src[i].loop);
		if (rig->src[i].frame)
			rtl_mem_free(rig->src[i].frame, rig->src[i].frame_cap);
	}
	if (rig->hist)
		rtl_mem_free(rig->hist, sizeof(struct rtl_hist) * RTL_RIG_H_COUNT);
	free(rig);
}

RTL_API int rtl_rig_create(struct rtl_rig **out, const struct rtl_rig_config *cfg,
			   struct rtl_error *err)
{
	struct rtl_rig *rig;
	void *mem;
	int ret;

	if (out)
		*out = NULL;
	if (!out)
		return fail(err, -EINVAL, "rig: no place for the rig (out)");
	rig = calloc(1, sizeof(*rig));
	if (!rig)
		return fail(err, -ENOMEM, "rig: out of memory");
	ret = rtl__sized_in(&rig->cfg, sizeof(rig->cfg), cfg, "struct rtl_rig_config", err);
	if (ret < 0 || (ret = check_config(&rig->cfg, err)) < 0) {
		free(rig);
		return ret;
	}
	rig->n = rig->cfg.n_sources;
	if (!rig->cfg.watchdog_periods)
		rig->cfg.watchdog_periods = RIG_DEFAULT_WATCHDOG;
	atomic_store(&rig->ended_by, -1);
	ret = rtl_mem_alloc(&mem, sizeof(struct rtl_hist) * RTL_RIG_H_COUNT, -1);
	if (ret < 0) {
		free(rig);
		return fail(err, ret, "rig: cannot allocate the histograms");
	}
	rig->hist = mem;
	for (int h = 0; h < RTL_RIG_H_COUNT; h++)
		rtl_hist_init(&rig->hist[h]);
	for (unsigned i = 0; i < rig->n; i++) {
		struct rig_src *s = &rig->src[i];
		struct rtl_loop_config lc = { .size = sizeof(lc) };

		s->cfg = rig->cfg.sources[i];
		if (s->cfg.name && s->cfg.name[0])
			snprintf(s->name, sizeof(s->name), "%s", s->cfg.name);
		else
			snprintf(s->name, sizeof(s->name), "source %u", i);
		s->cfg.name = s->name;
		lc.transport = s->cfg.transport;
		lc.rt_mode = rig->cfg.rt_mode;
		lc.rx_priority = s->cfg.rx_priority;
		lc.pin_rx = s->cfg.pin_rx;
		lc.rx_cpu = s->cfg.pin_rx ? s->cfg.rx_cpu : 0;
		/* The rx thread reads its ring on the worker's node. */
		lc.pin_worker = rig->cfg.pin_worker;
		lc.worker_cpu = rig->cfg.pin_worker ? rig->cfg.worker_cpu : 0;
		lc.ring_capacity = s->cfg.ring_capacity;
		lc.watchdog_periods = s->cfg.sensor ? -1 : rig->cfg.watchdog_periods;
		lc.reconnect_attempts = s->cfg.reconnect_attempts;
		lc.reconnect_backoff_ns = s->cfg.reconnect_backoff_ns;
		lc.start_disarmed = rig->cfg.start_disarmed && !s->cfg.sensor;
		lc.stop_timeout_ns = rig->cfg.stop_timeout_ns;
		s->stopped = lc.start_disarmed;
		ret = rtl_loop_create(&s->loop, &lc, err);
		if (ret < 0) {
			rig->n = i;
			free_rig(rig);
			return ret;
		}
	}
	if (rig->cfg.telemetry) {
		rig->tel = calloc(1, sizeof(*rig->tel));
		ret = rig->tel ? rtl__rig_telemetry_add(rig, err)
			       : fail(err, -ENOMEM, "rig: out of memory");
		if (ret < 0) {
			free_rig(rig);
			return ret;
		}
	}
	*out = rig;
	return 0;
}

RTL_API void rtl_rig_destroy(struct rtl_rig *rig)
{
	if (!rig)
		return;
	if (rig->started && !rig->joined) {
		rtl_rig_stop(rig);
		rtl_rig_join(rig);
	}
	free_rig(rig);
}

/* ---- taking the frames ---------------------------------------------------------------- */

/* Source @s's frame @f (read from its loop, inside its step): refused when a
 * value is not finite, else copied for the step, its gap and stamp taken. */
uint32_t rtl__rig_take(struct rig_src *s, const struct rtl_loop_frame *f, bool finite)
{
	size_t bytes = sizeof(*f) + f->size;
	uint32_t gap = 0;

	if (!finite) {
		rtl_stat_add(&s->c.nonfinite, 1);
		s->bad = true;
		if (s->have)
			s->last_seq = f->seq; /* counted here, not again as unseen */
		return 0;
	}
	s->bad = false;
	if (bytes > s->frame_cap)
		bytes = s->frame_cap;
	memcpy(s->frame, f, bytes);
	if (s->have && f->seq > s->last_seq + 1) {
		gap = (uint32_t)(f->seq - s->last_seq - 1);
		rtl_stat_add(&s->c.unseen, gap);
	}
	rtl_rig_stamp_update(&s->stamp, f->ctrl_time, f->rx_ns, s->period_ns);
	s->last_seq = f->seq;
	s->have = true;
	rtl_stat_add(&s->c.taken, 1);
	return gap;
}

/* ---- the policy ------------------------------------------------------------------------ */

static void stop_robot(struct rig_src *s)
{
	if (s->cfg.sensor || s->stopped)
		return;
	s->stopped = true;
	rtl_loop_arm(s->loop, false);
	rtl_stat_add(&s->c.stopped, 1);
}

/* Source @i's health at @now: its episode opens (counted, the policy
 * applied) or closes. Returns whether it is reconnecting. */
void rtl__rig_judge(struct rtl_rig *rig, unsigned i, int64_t now, bool parked, bool stopping)
{
	struct rig_src *s = &rig->src[i];
	bool ended = !s->ended && stopping;
	int64_t last = s->have ? s->frame->rx_ns : rig->started_ns;
	bool stale = now - last > s->stale_ns;
	bool lost = s->ended || ended || parked;
	bool faulty = lost || stale || s->bad;

	if (ended) {
		s->ended = true;
		if (rig->cfg.policy == RTL_RIG_STOP_ALL) {
			int expect = -1;

			atomic_compare_exchange_strong(&rig->ended_by, &expect, (int)i);
		}
	}
	if (faulty && !s->faulty) {
		if (lost)
			rtl_stat_add(&s->c.lost, 1);
		else if (stale)
			rtl_stat_add(&s->c.stale, 1);
		rtl_stat_add(&s->c.caused, 1);
		rtl_stat_add(&rig->c.episodes, 1);
		if (rig->cfg.policy == RTL_RIG_STOP_ALL) {
			for (unsigned k = 0; k < rig->n; k++)
				stop_robot(&rig->src[k]);
		} else {
			stop_robot(s);
		}
	}
	s->faulty = faulty;
	rig->in[i].stale = stale;
	rig->in[i].lost = lost;
}

/* Source @i's frame @f, read from its loop (inside its step): checked by
 * its transport, then taken. */
static uint32_t take(struct rig_src *s, const struct rtl_loop_frame *f)
{
	struct rtl_loop *loop = s->loop;
	char why[96];

	return rtl__rig_take(
		s, f, !loop->ops.finite || loop->ops.finite(loop->t, f, why, sizeof(why)) == 0);
}

/* Source @i's health from its loop, then judged. Returns whether it is
 * reconnecting. */
static bool judge(struct rtl_rig *rig, unsigned i, int64_t now)
{
	struct rig_src *s = &rig->src[i];
	bool stopping = rtl_loop_stopping(s->loop);
	/* not inside its step: a reconnect has the transport */
	bool parked = !s->held && !stopping && !s->ended;
	uint64_t rc = rtl_stat_get(&s->loop->c.reconnects);

	/* A reconnect the rig did not see parked (it fit between two looks)
	 * is a loss all the same, and left the loop disarmed. */
	if (rc != s->reconnects) {
		s->reconnects = rc;
		if (!s->cfg.sensor)
			s->stopped = true;
		rtl__rig_judge(rig, i, now, true, false);
	}
	rtl__rig_judge(rig, i, now, parked, stopping);
	return parked;
}

/* Arm requests: applied at the start of a step, refused for a source
 * that is faulty (it stays stopped). */
static void apply_arming(struct rtl_rig *rig)
{
	bool any_faulty = false;

	for (unsigned i = 0; i < rig->n; i++)
		any_faulty |= rig->src[i].faulty;
	for (unsigned i = 0; i < rig->n; i++) {
		struct rig_src *s = &rig->src[i];
		int req = atomic_exchange_explicit(&s->arm_req, ARM_NONE, memory_order_acquire);
		/* under stop-all a fault anywhere keeps every robot stopped */
		bool refuse = s->faulty || s->ended ||
			      (rig->cfg.policy == RTL_RIG_STOP_ALL && any_faulty);

		if (req == ARM_ON && !refuse) {
			s->stopped = false;
			rtl_loop_arm(s->loop, true);
		} else if (req == ARM_OFF) {
			s->stopped = true;
			rtl_loop_arm(s->loop, false);
		}
	}
}

/* The rig ends when a source's end ends it: under stop-all any source,
 * under stop-source when no robot is left (a rig of sensors only: when
 * none is left). */
bool rtl__rig_over(struct rtl_rig *rig)
{
	bool any_robot = false, robot_left = false, any_left = false;

	if (atomic_load_explicit(&rig->ended_by, memory_order_relaxed) >= 0)
		return true;
	for (unsigned i = 0; i < rig->n; i++) {
		bool left = !rig->src[i].ended;

		any_left |= left;
		if (!rig->src[i].cfg.sensor) {
			any_robot = true;
			robot_left |= left;
		}
	}
	return any_robot ? !robot_left : !any_left;
}

/* ---- the worker ------------------------------------------------------------------------- */

/* The timer: sleep until @deadline, or the stop. */
static void sleep_until(struct rtl_rig *rig, int64_t deadline)
{
	for (;;) {
		uint32_t seen = atomic_load_explicit(&rig->bell, memory_order_seq_cst);
		int64_t now = rtl_time_now();

		if (now >= deadline || rig_stopping(rig))
			return;
		futex_wait(&rig->bell, seen, deadline - now);
	}
}

/* One step's inputs, at @now. */
void rtl__rig_fill(struct rtl_rig *rig, int64_t now, const bool *fresh, const uint32_t *gap)
{
	for (unsigned i = 0; i < rig->n; i++) {
		struct rig_src *s = &rig->src[i];
		struct rtl_rig_input *in = &rig->in[i];

		in->frame = s->have ? s->frame : NULL;
		in->fresh = fresh[i];
		in->unseen = gap[i];
		in->stopped = s->stopped;
		in->live = s->have && !s->faulty && !s->stopped;
		if (s->have) {
			in->age_ns = now - s->frame->rx_ns;
			in->age_periods = rtl_rig_stamp_age(&s->stamp, s->frame->ctrl_time,
							    s->frame->rx_ns, now, s->period_ns);
			/* a single-writer maximum: the worker's relaxed store */
			if ((uint64_t)in->age_ns > rtl_stat_get(&s->c.max_age_ns))
				atomic_store_explicit(&s->c.max_age_ns, (uint64_t)in->age_ns,
						      memory_order_relaxed);
		} else {
			in->age_ns = 0;
			in->age_periods = NAN;
		}
	}
}

/* Wait for what clocks the next step. Returns the clock's time (the
 * frame's receive time, or the tick), or 0 when there is nothing to step
 * on (the clock source gave no frame within its stale bound, or the rig
 * ends); *@cf is the clock source's frame, NULL for a tick. */
static int64_t wait_clock(struct rtl_rig *rig, struct rtl_timer *timer,
			  const struct rtl_loop_frame **cf)
{
	uint32_t c = rig->cfg.clock;

	*cf = NULL;
	/* A faulty clock source (stale, reconnecting, refused frames) hands
	 * the step to the timer until it is back, so the other sources keep
	 * their steps (or their stop); the reads below take its frames. */
	if (c != RTL_RIG_TIMER && !rig->src[c].ended && !rig->src[c].faulty &&
	    !rtl_loop_stopping(rig->src[c].loop)) {
		int64_t deadline = rtl_time_now() + rig->src[c].stale_ns;

		/* in slices, so that a stop is seen within 50 ms */
		for (;;) {
			int64_t left = deadline - rtl_time_now();

			if (left <= 0 || rig_stopping(rig))
				break;
			*cf = rtl_loop_read(rig->src[c].loop,
					    left < 50 * RTL_NS_PER_MS ? left : 50 * RTL_NS_PER_MS);
			if (*cf)
				return (*cf)->rx_ns;
			/* a reconnect or the end: its read returned at once */
			if (atomic_load_explicit(&rig->src[c].loop->park, memory_order_acquire) ||
			    rtl_loop_stopping(rig->src[c].loop))
				break;
		}
		if (!rig_stopping(rig))
			rtl_stat_add(&rig->c.clock_waits, 1);
		return 0;
	}
	/* The timer's, or the faulty clock source's period. */
	if (!timer->period_ns)
		rtl_timer_init(timer, rtl_time_now() + rig->period_ns, rig->period_ns,
			       RTL_TIMER_SKIP);
	sleep_until(rig, timer->deadline_ns);
	if (rig_stopping(rig))
		return 0;
	{
		int64_t tick = timer->deadline_ns;

		rtl_timer_step(timer, rtl_time_now());
		rtl_stat_add(&rig->c.timer_ticks, 1);
		return tick;
	}
}

static void *worker_main(void *arg)
{
	struct rtl_rig *rig = arg;
	struct rtl_timer timer = { 0 };
	bool fresh[RTL_RIG_MAX_SOURCES];
	uint32_t gap[RTL_RIG_MAX_SOURCES];

	while (!rig_stopping(rig)) {
		const struct rtl_loop_frame *cf;
		int64_t clock_ns = wait_clock(rig, &timer, &cf);
		int64_t now, end;
		bool parked = false;

		if (rig_stopping(rig))
			break;
		apply_arming(rig);
		for (unsigned i = 0; i < rig->n; i++) {
			struct rig_src *s = &rig->src[i];
			const struct rtl_loop_frame *f =
				i == rig->cfg.clock && cf ? cf : rtl_loop_read(s->loop, 0);

			fresh[i] = false;
			gap[i] = 0;
			/* Inside this source's step from here to its write: a
			 * frame read entered it; else enter it now, so that no
			 * reconnect takes the transport while the step writes
			 * its commands (refused: a reconnect runs). */
			s->held = f != NULL || (!s->ended && rtl__loop_ext_hold(s->loop));
			if (f) {
				gap[i] = take(s, f);
				fresh[i] = !s->bad;
			}
		}
		/* after the reads: no frame the step sees is younger than now */
		now = rtl_time_now();
		for (unsigned i = 0; i < rig->n; i++)
			parked |= judge(rig, i, now);
		if (rtl__rig_over(rig)) {
			end_rig(rig, -ENOTCONN);
			break;
		}
		parked = parked && rig->cfg.policy == RTL_RIG_STOP_ALL;
		if (clock_ns && !parked) {
			int ret;

			rtl__rig_fill(rig, now, fresh, gap);
			rtl_hist_record(&rig->hist[RTL_RIG_H_CLOCK_TO_STEP], now - clock_ns);
			rig->in_step = true;
			ret = rig->cfg.step(rig, rig->in, rig->n, rig->cfg.user);
			rig->in_step = false;
			rtl_stat_add(&rig->c.steps, 1);
			if (ret < 0) {
				end_rig(rig, ret);
				/* the stop at exit follows: nothing of this step goes out */
				break;
			}
		} else if (clock_ns) {
			rtl_stat_add(&rig->c.parked, 1);
		}
		for (unsigned i = 0; i < rig->n; i++) {
			struct rig_src *s = &rig->src[i];

			if (s->ended || !s->held)
				continue;
			/* ends the step its read or step_enter() began */
			if (rtl_loop_write(s->loop) > 0)
				rtl_stat_add(&s->c.sent, 1);
			s->held = false;
		}
		end = rtl_time_now();
		if (rig->tel && clock_ns && !parked)
			rtl__rig_telemetry_publish(rig, end, cf ? cf->ctrl_time : (double)NAN);
		rtl_hist_record(&rig->hist[RTL_RIG_H_STEP], end - now);
		if (clock_ns && end > clock_ns + rig->period_ns)
			rtl_stat_add(&rig->c.overruns, 1);
	}
	return NULL;
}

/* ---- start, stop, join ---------------------------------------------------------------- */

static int spawn_worker(struct rtl_rig *rig, struct rtl_error *err)
{
	struct rtl_thread_attr a = {
		.size = sizeof(a),
		.name = "rtl-rig",
		.policy = SCHED_FIFO,
		.priority = rig->cfg.worker_priority ? rig->cfg.worker_priority : 80,
		.cpu = rig->cfg.pin_worker ? rig->cfg.worker_cpu : -1,
		.prefault_stack = 128 * 1024,
		.best_effort = rig->cfg.rt_mode == RTL_LOOP_RT_DEGRADE,
	};

	if (rig->cfg.rt_mode == RTL_LOOP_RT_OFF) {
		a.policy = SCHED_OTHER;
		a.priority = 0;
	}
	return rtl_thread_create(&rig->worker, &a, worker_main, rig, err);
}

/* Stop and join the sources started so far (each waits for its arm at
 * rest on its own rx thread, all at once). */
static int stop_sources(struct rtl_rig *rig, unsigned n)
{
	int ret = 0, by = atomic_load(&rig->ended_by);

	for (unsigned i = 0; i < n; i++)
		rtl_loop_stop(rig->src[i].loop);
	for (unsigned i = 0; i < n; i++) {
		int r = rtl_loop_join(rig->src[i].loop);

		if ((int)i == by && r < 0)
			ret = r;
	}
	return ret;
}

/* A start that failed: stop what started (a loop not started joins as a
 * no-op). */
static void stop_started(struct rtl_rig *rig)
{
	for (unsigned i = 0; i < rig->n; i++)
		if (rig->src[i].loop->started)
			rtl_loop_stop(rig->src[i].loop);
	for (unsigned i = 0; i < rig->n; i++)
		if (rig->src[i].loop->started)
			rtl_loop_join(rig->src[i].loop);
}

RTL_API int rtl_rig_start(struct rtl_rig *rig, struct rtl_error *err)
{
	int ret;

	if (!rig)
		return rtl_error_set(err, -EINVAL, "rig: NULL");
	if (rig->started)
		return rtl_error_set(err, -EALREADY, "rig: started already");
	/* The clock source first: its period is the step's, and the other
	 * robots' watchdogs are set from it before their threads start. Its
	 * own watchdog is its loop's default (its frames clock the step). */
	rig->period_ns = rig->cfg.clock == RTL_RIG_TIMER ? rig->cfg.period_ns : 0;
	for (unsigned k = 0; k < rig->n; k++) {
		unsigned i = rig->cfg.clock == RTL_RIG_TIMER ? k
			     : k == 0			     ? rig->cfg.clock
			     : k <= rig->cfg.clock	     ? k - 1
							     : k;
		struct rig_src *s = &rig->src[i];

		if (i != rig->cfg.clock && !s->cfg.sensor && rig->cfg.watchdog_periods > 0)
			s->loop->cfg.watchdog_ns =
				(int64_t)rig->cfg.watchdog_periods * rig->period_ns;
		ret = rtl_loop_start(s->loop, err);
		if (ret < 0) {
			rtl_log(RTL_LOG_ERROR, "rig: source %s did not start: %s", s->name,
				err ? err->msg : "");
			stop_started(rig);
			return ret;
		}
		if (!rig->period_ns)
			rig->period_ns = s->loop->t->period_ns > 0 ? s->loop->t->period_ns
								   : 8 * RTL_NS_PER_MS;
	}
	/* The frames' storage, the stale bounds. */
	for (unsigned i = 0; i < rig->n; i++) {
		struct rig_src *s = &rig->src[i];
		void *mem;

		s->period_ns = s->loop->t->period_ns > 0 ? s->loop->t->period_ns : rig->period_ns;
		s->stale_ns = s->cfg.stale_ns ? s->cfg.stale_ns : 3 * s->period_ns + rig->period_ns;
		if (s->frame) /* a start that failed before: its storage */
			rtl_mem_free(s->frame, s->frame_cap);
		s->frame = NULL;
		s->frame_cap = s->loop->slot_size;
		ret = rtl_mem_alloc(&mem, s->frame_cap, -1);
		if (ret < 0) {
			stop_started(rig);
			return rtl_error_set(err, ret, "rig: cannot allocate the frames");
		}
		s->frame = mem;
	}
	if (rig->cfg.telemetry) {
		rtl__telemetry_period(rig->cfg.telemetry, rig->period_ns);
		ret = rtl_telemetry_start(rig->cfg.telemetry, err);
		if (ret < 0) {
			stop_started(rig);
			return ret;
		}
	}
	rig->started_ns = rtl_time_now();
	ret = spawn_worker(rig, err);
	if (ret < 0) {
		stop_started(rig);
		return ret;
	}
	rig->started = true;
	return 0;
}

RTL_API void rtl_rig_stop(struct rtl_rig *rig)
{
	if (rig)
		end_rig(rig, 0);
}

RTL_API bool rtl_rig_stopping(const struct rtl_rig *rig)
{
	return rig && rig_stopping(rig);
}

RTL_API int rtl_rig_join(struct rtl_rig *rig)
{
	int ret;

	if (!rig || !rig->started)
		return -EINVAL;
	if (rig->joined)
		return atomic_load(&rig->result);
	rtl_thread_join(rig->worker, NULL);
	rig->worker = NULL;
	ret = stop_sources(rig, rig->n);
	rig->joined = true;
	if (atomic_load(&rig->result) == -ENOTCONN && ret < 0)
		atomic_store(&rig->result, ret);
	return atomic_load(&rig->result);
}

/* ---- small accessors --------------------------------------------------------------------- */

RTL_API struct rtl_loop *rtl_rig_loop(const struct rtl_rig *rig, unsigned i)
{
	return rig && i < rig->n ? rig->src[i].loop : NULL;
}

RTL_API void *rtl_rig_commands(struct rtl_rig *rig, unsigned i)
{
	/* in a step, a source outside its loop's step (reconnecting) has no
	 * commands to write */
	if (!rig || i >= rig->n || (rig->in_step && (!rig->src[i].held || rig->in[i].lost)))
		return NULL;
	return rtl_loop_commands(rig->src[i].loop);
}

RTL_API const char *rtl_rig_source_name(const struct rtl_rig *rig, unsigned i)
{
	return rig && i < rig->n ? rig->src[i].name : "";
}

RTL_API unsigned rtl_rig_sources(const struct rtl_rig *rig)
{
	return rig ? rig->n : 0;
}

RTL_API int rtl_rig_arm(struct rtl_rig *rig, uint32_t i, bool armed)
{
	if (!rig || (i != RTL_RIG_TIMER && (i >= rig->n || rig->src[i].cfg.sensor)))
		return -EINVAL;
	for (unsigned k = 0; k < rig->n; k++)
		if ((i == RTL_RIG_TIMER || k == i) && !rig->src[k].cfg.sensor)
			atomic_store_explicit(&rig->src[k].arm_req, armed ? ARM_ON : ARM_OFF,
					      memory_order_release);
	return 0;
}
