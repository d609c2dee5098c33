/* SPDX-License-Identifier: MIT */
/*
 * rtl_rig: one control step over several devices. Two arms, an arm and an
 * external force/torque sensor, a haptic master and a slave: each device is
 * a source with its own transport, and one step sees the newest frame of
 * every source at the same instant and writes every robot's commands.
 *
 * Design
 * ------
 *   [source i]   an rtl_loop of its own in external-loop mode: its rx
 *                thread (SCHED_FIFO, pinned, memory locked), its ring,
 *                counters, histograms, watchdog, reconnect and stop at exit,
 *                exactly as a single loop (<rtloop/loop.h>).
 *   [rig worker] one SCHED_FIFO thread, the step's thread of every source:
 *        wait for the clock: the next frame of the clock source
 *        (rtl_rig_config.clock), or the next tick of a timer of its own
 *        (RTL_RIG_TIMER, period_ns); then take the newest frame of every
 *        other source without waiting (rtl_loop_read(source, 0)), copy
 *        it into the rig's storage for that source (so that a source
 *        with nothing new shows its last frame), check it, compute each
 *        source's age; apply the safety policy; run the step; then
 *        rtl_loop_write() every source: each robot's commands are checked,
 *        coalesced and sent only when they changed, through its own
 *        transport.
 * A clock source that is lost (its loop ended) is replaced by a timer of
 * its period, so that the other sources keep their steps or their stop.
 *
 * What a step sees of each source (struct rtl_rig_input): the newest
 * frame, whether it is new since the last step, the frames the step did
 * not see (a faster source: 14 of a 7 kHz sensor's frames per 500 Hz
 * step), its age twice: since it was received (the host's clock), and in
 * the source's periods since the controller stamped it (the controller's
 * timestamp carried to the host's clock by the smallest offset seen, a
 * floor that relaxes by a thousandth of a period per frame so the two
 * clocks may drift), and its state (live, stale, lost, stopped).
 *
 * Who owns what, on which thread (the N-source form of the single loop's
 * contract, which still holds for each source)
 * ---------------------------------------------------------------------
 *   each source's commands (rtl_rig_commands())
 *        written by the rig worker alone, inside the step, and only while
 *        the source is not lost; read by that source's check() and send()
 *        in rtl_loop_write(), on the worker. Each cycle the worker is
 *        inside every source's loop step (a frame read, or the step
 *        entered) from before the step to that source's write, so no
 *        reconnect takes a transport while the step writes its commands;
 *        a source whose step cannot be entered is reconnecting (lost).
 *   each source's transmit side, safe package, tables, received bytes
 *        as in <rtloop/loop.h>, per source: the source's loop holds them.
 *   the frames the step sees, the ages, the per-source state and counters
 *        the rig worker alone writes them; any thread reads the counters
 *        (rtl_rig_source_stats(): relaxed atomics).
 *   arming (rtl_rig_arm())
 *        any thread: it asks, by an atomic word; the worker applies it at
 *        the start of the next step, so arming never races the policy.
 *   the stop (rtl_rig_stop())
 *        any thread, async-signal-safe: an atomic store and a futex wake.
 *
 * Safety across devices. A source is faulty when it is lost (its loop
 * ended), reconnecting, stale (no frame for longer than its stale bound)
 * or sent a non-finite value (a frame the transport's finite() check
 * refused; the frame is not given to the step). The fault of a source is
 * an episode, counted once at its start against that source ("caused");
 * the policy then stops robots:
 *   RTL_RIG_STOP_ALL (default): every robot is disarmed. Each one's first
 *        write after that sends its safe package once; nothing the step
 *        writes is sent until rtl_rig_arm(). While a source reconnects
 *        the step is parked: not run (the robots' writes still go out,
 *        disarmed), as a single loop parks its step.
 *   RTL_RIG_STOP_SOURCE: only the faulty source is disarmed (a sensor has
 *        nothing to stop); the step goes on with the others, and sees the
 *        faulty source as not live.
 * Each robot's stops are counted against it ("stopped"). A stopped robot
 * stays disarmed until rtl_rig_arm(), which refuses a source that is still
 * faulty. A source whose loop ends for good (lost, no reconnect left)
 * ends the rig under RTL_RIG_STOP_ALL; under RTL_RIG_STOP_SOURCE the rig
 * ends when no robot is left. The late step: each robot's loop runs its own
 * watchdog on its own rx thread with the rig's watchdog time (watchdog
 * periods of the step's period), so a stalled step sends every robot its
 * safe package, once per stall, and their late commands are discarded.
 * The end: rtl_rig_stop(), a step's negative return, or a source's end as
 * above stops the worker, then stops every source at once (each sends its
 * safe package and waits for its arm at rest on its own rx thread) and
 * joins them all: rtl_rig_join() returns when every arm is at rest or its
 * stop timed out.
 *
 * Hot path: the worker makes no allocation, takes no lock and makes no
 * system call but the sources' sends, the futex and the clock's sleep;
 * tests/rt/test-rig.c proves it.
 */
#ifndef RTLOOP_RIG_H
#define RTLOOP_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/compiler.h>
#include <rtloop/loop.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

/* Sources in a rig, at most. */
#define RTL_RIG_MAX_SOURCES 8
/* rtl_rig_config.clock: the rig's own timer clocks the step. */
#define RTL_RIG_TIMER UINT32_MAX

struct rtl_rig;

/* One device of the rig. */
struct rtl_rig_source {
	const char *name;		 /* for the report and the counters; NULL: "source N" */
	struct rtl_transport *transport; /* required; not owned */
	/* A sensor commands nothing that moves: the policy never stops it, it
	 * has no safe package, and its loop runs no watchdog. */
	bool sensor;
	bool pin_rx; /* its rx thread on CPU rx_cpu */
	int rx_cpu;
	int rx_priority;	/* 0: 90 */
	uint32_t ring_capacity; /* 0: 64 */
	/* No frame for this long is a stale source (an episode of the policy).
	 * 0: 3 of its periods plus one of the step's. */
	int64_t stale_ns;
	/* As in struct rtl_loop_config: reconnect attempts (0: none, a lost
	 * connection ends the source) and the first back-off. */
	int reconnect_attempts;
	int64_t reconnect_backoff_ns;
};

enum rtl_rig_policy {
	RTL_RIG_STOP_ALL = 0,	 /* a faulty source stops every robot */
	RTL_RIG_STOP_SOURCE = 1, /* a faulty source stops itself only */
};

/* What the step sees of a source. */
struct rtl_rig_input {
	/* The newest frame (the rig's copy: valid during the step), NULL
	 * before the first. */
	const struct rtl_loop_frame *frame;
	bool fresh;	    /* new since the last step */
	bool live;	    /* connected, not stale, not stopped */
	bool stale;	    /* no frame for longer than its stale bound */
	bool lost;	    /* lost or reconnecting */
	bool stopped;	    /* disarmed by the policy or rtl_rig_arm(): nothing is sent */
	uint32_t unseen;    /* frames since the last step the step did not see */
	int64_t age_ns;	    /* step start - frame->rx_ns */
	double age_periods; /* the source's periods since the controller stamped it */
};

/*
 * The step: read @in[0..n-1] (in the order of the sources), write the
 * robots' commands (rtl_rig_commands()). Return 0, or a negative value to
 * end the rig. RT context: no allocation, no blocking.
 */
typedef int (*rtl_rig_step_fn)(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n,
			       void *user);

/* Set .size = sizeof(struct rtl_rig_config); zero is the default of every
 * other field, as in struct rtl_loop_config. */
struct rtl_rig_config {
	size_t size;
	const struct rtl_rig_source *sources; /* copied */
	unsigned n_sources;		      /* 1..RTL_RIG_MAX_SOURCES */
	/* The source whose frames run the step (the others are sampled), or
	 * RTL_RIG_TIMER: a timer of period_ns. */
	uint32_t clock;
	int64_t period_ns; /* RTL_RIG_TIMER: the step's period (required) */
	rtl_rig_step_fn step;
	void *user;
	enum rtl_loop_rt_mode rt_mode; /* as the loop's: also for every source */
	int worker_priority;	       /* 0: 80 */
	bool pin_worker;
	int worker_cpu;
	enum rtl_rig_policy policy;
	/* The late step: every robot's watchdog fires after this many of the
	 * step's periods without a step finishing. 0: 3; -1: off. */
	int watchdog_periods;
	/* Each source's stop at exit: as the loop's stop_timeout_ns. */
	int64_t stop_timeout_ns;
	bool start_disarmed; /* robots start disarmed: rtl_rig_arm() */
	/*
	 * Telemetry (<rtloop/telemetry.h>; not owned; NULL: none): the rig adds
	 * its counters and every source's as "rig.*" ("rig.steps",
	 * "rig.NAME.caused", ...), its two histograms, and two signals per
	 * source, "NAME.age_ms" and "NAME.live"; it starts it in
	 * rtl_rig_start() and publishes one record per step, after the
	 * writes (the step may set signals of its own, added before the
	 * start). rtl_rig_destroy() mirrors the final figures and detaches.
	 */
	struct rtl_telemetry *telemetry;
};

/*
 * The rig's counters per source, besides the source's own loop counters
 * (rtl_rig_loop()): X(name, what it counts).
 */
#define RTL_RIG_SOURCE_COUNTERS(X)                                                     \
	X(taken, "frames the step saw")                                                \
	X(unseen, "frames the step did not see (a newer one was taken)")               \
	X(nonfinite, "frames refused: a value was not finite (not given to the step)") \
	X(stale, "episodes: no frame for longer than the stale bound")                 \
	X(lost, "episodes: the connection was lost or reconnecting")                   \
	X(caused, "times a fault of this source applied the policy")                   \
	X(stopped, "times the policy stopped this robot")                              \
	X(sent, "writes that put bytes on the wire")                                   \
	X(max_age_ns, "the oldest frame a step saw, ns since it was received")

struct rtl_rig_source_counters {
	size_t size;
	RTL_RIG_SOURCE_COUNTERS(RTL_STAT_U64)
};

/* The rig's own counters. */
#define RTL_RIG_COUNTERS(X)                                                                \
	X(steps, "step calls")                                                             \
	X(overruns, "steps that ended after the next was due")                             \
	X(parked, "clock ticks with no step: a source reconnects (stop all)")              \
	X(clock_waits, "waits for the clock source that timed out (stale clock)")          \
	X(timer_ticks, "steps clocked by the timer (the timer, or the clock source lost)") \
	X(episodes, "faults that applied the policy, every source together")

struct rtl_rig_counters {
	size_t size;
	RTL_RIG_COUNTERS(RTL_STAT_U64)
};

/* Create the rig and a loop per source (not connected). Not RT-safe.
 * Returns 0 and sets *@out, or -EINVAL (a field out of range, named in
 * @err), -ENOMEM, or a source loop's create error. */
RTL_API int rtl_rig_create(struct rtl_rig **out, const struct rtl_rig_config *cfg,
			   struct rtl_error *err);

/* Stop (if running) and free the rig and its loops. NULL is accepted. */
RTL_API void rtl_rig_destroy(struct rtl_rig *rig);

/* Start every source (connect, rx thread; the clock source first), then
 * the worker. On a failure the sources started so far are stopped. Not
 * RT-safe. Returns 0, or -EINVAL, -EALREADY, a source's start error (its
 * loop's: real time refused, the transport's connect error), or the
 * worker's thread error, with @err filled. */
RTL_API int rtl_rig_start(struct rtl_rig *rig, struct rtl_error *err);

/* Ask the rig to end (async-signal-safe). */
RTL_API void rtl_rig_stop(struct rtl_rig *rig);

/* Wait for the end: the worker, then every source's stop at exit. Returns
 * 0 for a requested stop, the step's negative value, or the error of the
 * source that ended the rig (-ENOTCONN when it ended without one). */
RTL_API int rtl_rig_join(struct rtl_rig *rig);

/* Returns true once the rig is ending. Any thread. */
RTL_API bool rtl_rig_stopping(const struct rtl_rig *rig);

/* Returns source @i's loop (its counters, histograms, report; its typed
 * commands: rtl_rtde_loop_commands(rtl_rig_loop(rig, i), ...)), NULL when
 * out of range. */
RTL_API struct rtl_loop *rtl_rig_loop(const struct rtl_rig *rig, unsigned i);

/* Returns what the step writes source @i's commands into
 * (rtl_loop_commands() of its loop), NULL when out of range, and during a
 * step for a source that is lost (in[i].lost: a reconnect may hold its
 * transport; a step that writes through the transport's typed accessor
 * checks in[i].lost itself). RT-safe. */
RTL_API void *rtl_rig_commands(struct rtl_rig *rig, unsigned i);

/* Returns source @i's name, "" when out of range. */
RTL_API const char *rtl_rig_source_name(const struct rtl_rig *rig, unsigned i);

/* Returns the number of sources (0 for NULL). */
RTL_API unsigned rtl_rig_sources(const struct rtl_rig *rig);

/*
 * Arm (or disarm) robot @i, or every robot with @i = RTL_RIG_TIMER. The
 * worker applies it at its next step. Arming a source that is faulty is
 * refused there (the request is dropped, the source stays stopped).
 * Returns 0, or -EINVAL (@i out of range, or a sensor). Any thread.
 */
RTL_API int rtl_rig_arm(struct rtl_rig *rig, uint32_t i, bool armed);

/* Snapshots of the counters (set out->size first). Any thread. Return 0
 * or -EINVAL. */
RTL_API int rtl_rig_stats(const struct rtl_rig *rig, struct rtl_rig_counters *out);
RTL_API int rtl_rig_source_stats(const struct rtl_rig *rig, unsigned i,
				 struct rtl_rig_source_counters *out);
RTL_API const struct rtl_stat_field *rtl_rig_counter_fields(size_t *n);
RTL_API const struct rtl_stat_field *rtl_rig_source_counter_fields(size_t *n);

/* The rig's histograms (ns): the step's duration (with the writes), and
 * the time from the clock's frame (or tick) to the step's start. */
enum rtl_rig_hist_id {
	RTL_RIG_H_STEP = 0,
	RTL_RIG_H_CLOCK_TO_STEP,
	RTL_RIG_H_COUNT,
};

/* Returns histogram @id, readable at any time; NULL for a NULL @rig or an
 * unknown @id. */
RTL_API const struct rtl_hist *rtl_rig_hist(const struct rtl_rig *rig, enum rtl_rig_hist_id id);

/* The report: the rig's counters and histograms, then each source's
 * counters and its loop's report. Text, or one JSON object. Not RT-safe.
 * Returns 0, -EINVAL or -EIO. */
RTL_API int rtl_rig_report(const struct rtl_rig *rig, FILE *f, bool json);

/* ---- the pure pieces (exposed for tests and for external loops) ------------------- */

/*
 * The age of a frame in its source's periods since the controller stamped
 * it. @est: the estimator's state, zeroed before the first frame (and at a
 * reconnect). rtl_rig_stamp_update() takes each frame's controller time
 * @ctrl_time (s; NaN: the source has none, the receive time stands in) and
 * receive time @rx_ns; rtl_rig_stamp_age() returns the age at @now in
 * periods of @period_ns (NaN without a period). Pure, RT-safe.
 */
struct rtl_rig_stamp {
	int64_t offset_ns; /* smallest rx - controller time seen, relaxed */
	double last_ctrl;  /* the last controller time, s */
	bool have;
};
RTL_API void rtl_rig_stamp_update(struct rtl_rig_stamp *est, double ctrl_time, int64_t rx_ns,
				  int64_t period_ns);
/* Returns the age in periods (above), NaN when @period_ns <= 0. */
RTL_API double rtl_rig_stamp_age(const struct rtl_rig_stamp *est, double ctrl_time, int64_t rx_ns,
				 int64_t now, int64_t period_ns);

RTL_END_DECLS

#endif /* RTLOOP_RIG_H */
