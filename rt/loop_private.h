/* SPDX-License-Identifier: MIT */
/*
 * The loop's insides, shared by its files (not installed). Who owns what
 * on which thread is written once, in <rtloop/loop.h>; the struct below is
 * grouped by those owners, so a field's group says which thread may write
 * it.
 *
 *   loop.c           create, start, join, destroy; the rx thread; the
 *                    worker; the step's bookkeeping (step_begin/step_end)
 *   loop_tx.c        the transmit side: its flag, the safe package, the
 *                    step's send and its rejection, the silence check
 *   loop_life.c      parking the step, reconnect, a lost connection, the
 *                    receive time-out, the stop at exit and its wait for rest
 *   loop_watchdog.c  the watchdog: episodes, the rx thread's check, inline
 *                    mode's watch thread
 *   loop_ext.c       the external-loop API (rtl_loop_read/write)
 *   loop_report.c    counters, histograms, the report
 */
#ifndef RTLOOP_LOOP_PRIVATE_H
#define RTLOOP_LOOP_PRIVATE_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/ring.h>
#include <rtloop/stat.h>
#include <rtloop/telemetry.h>
#include <rtloop/thread.h>
#include <rtloop/time.h>

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

/*
 * The counters behind struct rtl_loop_counters, from the same list. Each
 * has a single writer (the rx thread, the step's thread, or the watching
 * thread), which adds with a relaxed load and store (rtl_stat_add());
 * anyone reads. One exception: safe_sends is written by whoever holds the
 * transmit side, more than one thread, so it is a read-modify-write; the
 * step compares it before and after to see whether one went out
 * meanwhile. log_dropped is the log queues' (the snapshot reads them).
 */
struct loop_counters {
	RTL_LOOP_COUNTERS(RTL_STAT_ATOMIC)
};

struct rtl_loop {
	struct rtl_loop_config cfg;
	struct rtl_transport *t;
	/* The transport's operations, copied at create to this library's
	 * size: an operation the transport's table is too old to have is
	 * NULL here. */
	struct rtl_transport_ops ops;

	/* The ring and its storage, made at the first connect. */
	struct rtl_ring *ring;
	void *ring_storage;
	size_t ring_bytes;
	size_t slot_size;
	struct rtl_loop_frame *scratch; /* decode target when the ring is full */

	/* Cross-thread words (atomics; each access says its order and why). */
	_Atomic uint32_t events;   /* the wake-up event count */
	_Atomic uint32_t sleeping; /* the worker said it is going to sleep */
	_Atomic int stop;	   /* the loop is ending: set once, by anyone */
	_Atomic int result;
	_Atomic int armed;
	_Atomic int tx_owner; /* 0 free, 1 held: the transmit side */
	/* Parking: the rx thread asks (park), the step's thread says whether
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
	/* watchdog_periods periods; 0: off. And the transport's period, for
	 * the overrun count. Set at connect (on the rx thread after a
	 * reconnect), read by the step's and the watch thread. */
	_Atomic int64_t watchdog_ns;
	_Atomic int64_t period_ns;
	/* First rejection reason and how the stop at exit went: each text is
	 * written once, then published by its flag (release). */
	_Atomic int reject_noted;
	char reject_why[160];
	_Atomic int stop_noted;
	char stop_note[320];

	/* The rx thread's. */
	struct {
		uint64_t seq;
		int64_t last_rx_ns;
		int64_t last_frame_ns; /* the last data frame, for the receive time-out */
		bool connected;
		bool stop_on_loss; /* the safe package went out as the connection was lost */
		/* Receive time of frame seq at [seq % WATCHDOG_HISTORY]. */
		int64_t times[WATCHDOG_HISTORY];
	} rx;
	/* The watching thread's (rx, or rtl-watch in inline mode): the @done
	 * of the last episode, so that one stall fires once. */
	struct {
		bool fired_any;
		uint64_t fired_done;
	} watch;
	/* The step's thread's: the frame being stepped (for what the step
	 * reports about itself) and when its step began, the receive time of
	 * the last frame taken (the spin window), safe_sends when the step
	 * began, whether anything went out since the last safe package,
	 * whether the current silence was reported. */
	struct {
		uint64_t seq;
		int64_t start_ns;
		int64_t taken_rx_ns;
		uint64_t safe_seen;
		bool armed_sent;
		bool silent_noted;
	} step;
	/* The external loop's thread's: the frame it holds (read, not yet
	 * released) and whether it is inside a step. */
	struct {
		bool holding, in_step;
		bool held; /* rtl__loop_ext_hold(): in a step without a frame */
		const struct rtl_loop_frame *frame; /* the one held, for the telemetry */
	} ext;

	/* Threads and the log (set-up and join only). */
	struct rtl_thread *rx_thread, *worker_thread, *log_thread; /* joined: NULL */
	bool started;
	_Atomic int log_stop;
	_Atomic uint32_t log_bell; /* rung by the queues and by join */
	struct rtl_log_queue *rx_log, *worker_log;
	int cpu_latency_fd; /* /dev/cpu_dma_latency held while running, or -1 */

	struct loop_counters c;
	struct rtl_hist *hist; /* RTL_LOOP_H_COUNT of them */
	char rt_notes[4096];
};

/* ---- small helpers every file uses ------------------------------------------- */

static inline void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void futex_wait(_Atomic uint32_t *word, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts = rtl_time_to_timespec(timeout_ns > 0 ? timeout_ns : 0);

	/* Returns at once (EAGAIN) if *word != val: a commit we raced. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static inline bool stopping(const struct rtl_loop *loop)
{
	return atomic_load_explicit(&loop->stop, memory_order_relaxed);
}

/* Every thread that waits on the event count looks again (stop, unpark). */
static inline void wake_all(struct rtl_loop *loop)
{
	atomic_fetch_add(&loop->events, 1);
	futex_wake(&loop->events);
}

static inline void stop_all(struct rtl_loop *loop)
{
	atomic_store(&loop->stop, 1);
	wake_all(loop);
}

/* The loop's result, set once: the first reason the loop ended. */
static inline void set_result(struct rtl_loop *loop, int ret)
{
	int expect = 0;

	atomic_compare_exchange_strong(&loop->result, &expect, ret);
}

const char *rtl__loop_errname(int code);

/* ---- loop.c ---------------------------------------------------------------------- */

/* After every connect: what depends on the transport's frame size and
 * period (the watchdog time, the ring). */
int rtl__loop_connected(struct rtl_loop *loop, struct rtl_error *err);
/* The step's bookkeeping, for the worker, inline mode and the external
 * loop alike: a step on @f begins at @now; the step function (or the
 * external loop's own work) ran from @start to @end; the step on frame
 * @seq is over at @end (@sent: its send is done, else there was none). */
void rtl__loop_step_begin(struct rtl_loop *loop, const struct rtl_loop_frame *f, int64_t now);
void rtl__loop_step_ran(struct rtl_loop *loop, uint64_t seq, int64_t start, int64_t end);
void rtl__loop_step_done(struct rtl_loop *loop, uint64_t seq, int64_t start, int64_t end,
			 bool sent);
/* Wait for a frame until @deadline (INT64_MAX: until stop). */
const struct rtl_loop_frame *rtl__loop_wait_frame(struct rtl_loop *loop, int64_t deadline);

/* ---- loop_tx.c ------------------------------------------------------------------- */

bool rtl__loop_tx_try(struct rtl_loop *loop);
void rtl__loop_tx_release(struct rtl_loop *loop);
/* Slow path (reconnect, the stop at exit): wait microseconds for it. */
void rtl__loop_tx_take(struct rtl_loop *loop);
/* The safe package, by the holder of the transmit side. */
int rtl__loop_safe_locked(struct rtl_loop *loop);
/* The safe package if the transmit side is free (-EAGAIN if not). */
int rtl__loop_send_safe(struct rtl_loop *loop);
/* The loop's period for a telemetry configured without one (telemetry.c). */
void rtl__telemetry_period(struct rtl_telemetry *t, int64_t period_ns);
/* Mirror the final figures of every counter source and histogram, then
 * stop reading them: the loop that publishes goes away, and the sources
 * (the loop, its transport) may go before the telemetry does
 * (telemetry.c). */
void rtl__telemetry_detach(struct rtl_telemetry *t);
/* The step's send: stopping, disarmed, stale, check, coalesce. */
int rtl__loop_send(struct rtl_loop *loop, uint64_t seq, int64_t now);

/* ---- loop_life.c ----------------------------------------------------------------- */

/* The external loop's thread (a rig's worker): enter a step without a
 * frame, so that no reconnect takes the transport until the next
 * rtl_loop_write(), which ends it; a safe package sent meanwhile makes the
 * step's commands stale. true: inside (also when a read already is);
 * false: a reconnect runs (loop_ext.c). */
bool rtl__loop_ext_hold(struct rtl_loop *loop);
bool rtl__loop_step_enter(struct rtl_loop *loop);
void rtl__loop_step_leave(struct rtl_loop *loop);
void rtl__loop_wait_unparked(struct rtl_loop *loop, int64_t deadline);
/* The stream is unusable (@code; 0: the peer closed): say why, then
 * reconnect or end. true: the rx thread may go on receiving. */
bool rtl__loop_lost(struct rtl_loop *loop, int code);
bool rtl__loop_reconnect(struct rtl_loop *loop, int why);
/* No data frame for the transport's receive time-out (counted, logged). */
bool rtl__loop_rx_timed_out(struct rtl_loop *loop, int64_t now);
/* The stop at exit, on the rx thread, whatever ended the loop. */
void rtl__loop_finish(struct rtl_loop *loop);

/* ---- loop_watchdog.c ---------------------------------------------------------- */

/* The rx thread's look at the step after frame @seq arrived at @now. */
void rtl__loop_watchdog_check(struct rtl_loop *loop, int64_t now, uint64_t seq);
/* Inline mode's watch thread. */
void *rtl__loop_watch_main(void *arg);

/* ---- loop_ext.c -------------------------------------------------------------------- */

/* At join: the external loop's held frame and step end with the run. */
void rtl__loop_ext_reset(struct rtl_loop *loop);

#endif /* RTLOOP_LOOP_PRIVATE_H */
