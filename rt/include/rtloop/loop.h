/* SPDX-License-Identifier: MIT */
/*
 * rtl_loop: the control loop. A receive thread decodes the controller's
 * frames into a lock-free SPSC ring; a worker takes them, runs the user's
 * step function and sends the commands it produced; every cycle is counted
 * and timed.
 *
 * Design
 * ------
 *   [rx thread]  SCHED_FIFO, pinned, memory locked
 *        transport->recv() waits on the socket (at most a receive slice,
 *        so a stop is seen even when the controller is silent);
 *        transport->next() cuts and
 *        decodes each data frame straight into a reserved ring slot (header
 *        struct rtl_loop_frame + decoded values); commit; wake the worker.
 *        Setup replies and text messages stay inside the transport (slow
 *        path) and never reach the worker.
 *   [ring]       rtl_ring, slots of sizeof(struct rtl_loop_frame) + values,
 *                storage on the worker's NUMA node.
 *   [worker]     SCHED_FIFO, pinned to another CPU (or, with inline_step,
 *                the rx thread itself: see struct rtl_loop_config)
 *        wait: sleep on a futex, spinning for a bounded budget either
 *        right after the step or (spin_lead_ns) just before the next
 *        frame is due (rtl_loop_spin_window()); take the newest
 *        frame (counting the skipped ones) or every frame; call step();
 *        transport->send() encodes and sends only what changed, without
 *        blocking (a send that would block is counted and retried with the
 *        newest values next cycle).
 *
 * The loop knows no protocol: it talks to a small transport interface
 * (struct rtl_transport_ops), implemented for RTDE (rtloop/rtde_transport.h)
 * and for tests by in-memory fakes.
 *
 * Wake-ups use an event count: the rx thread bumps a 32-bit word after each
 * commit and calls FUTEX_WAKE only when the worker said it is going to
 * sleep; the worker announces sleep, re-checks the ring, then waits on the
 * value it read. Both sides use sequentially consistent operations on the
 * two words, so a wake-up cannot be lost (Dekker's pattern).
 *
 * Safety. The transmit side has one owner at a time (a compare-and-swap
 * flag that the hot path tries and never waits for): the step's thread for
 * one send, the watchdog for one safe package, the rx thread for a whole
 * reconnect and for the whole stop at exit. The safe package is the
 * transport's own, built and checked at connect; it never contains what
 * the step wrote (the contract below, and docs/architecture.md). The
 * watchdog fires once per stall and the late step's commands are then
 * discarded; a rejected step (a non-finite value, a limit) sends the safe
 * package instead; a reconnect parks the step (no step runs while the
 * transport and the application's callbacks change); every end of the
 * loop (rtl_loop_stop(), a step's error, a lost connection that does not
 * come back, rtl_loop_destroy()) sends the safe package and waits, bounded,
 * until the transport reports the arm at rest. A loop that is armed yet
 * sends nothing for longer than the controller's watchdog is reported.
 *
 * Logging. What the rx thread, the worker and the watch thread log goes
 * into their own lock-free queues (<rtloop/log.h>); a non-RT thread of the
 * loop ("rtl-log") hands it to the application's handler.
 *
 * Accounting is always on: counters are single-writer relaxed atomics and
 * the histograms are rtl_hist, so a non-RT thread reads them at any time
 * (rtl_loop_stats(), rtl_loop_report()) without disturbing the hot path.
 *
 * Hot-path rules: after rtl_loop_start() the rx thread and the worker make
 * no allocation, take no lock, print nothing and perform no system call
 * other than the transport's receive/send and the futex; tests/rt
 * proves it.
 */
#ifndef RTLOOP_LOOP_H
#define RTLOOP_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/compiler.h>
#include <rtloop/hist.h>
#include <rtloop/mem.h>

RTL_BEGIN_DECLS

/* ---- frames ----------------------------------------------------------------- */

/*
 * One received frame, as the rx thread writes it into a ring slot: this
 * header, then the transport's decoded values (values_size bytes, 8-byte
 * aligned).
 */
struct rtl_loop_frame {
	uint64_t seq;	       /* frames received since the loop started, from 0 */
	int64_t rx_ns;	       /* CLOCK_MONOTONIC when recv() returned the bytes */
	int64_t kernel_rx_ns;  /* kernel receive time (CLOCK_MONOTONIC), 0 if unknown */
	int64_t commit_ns;     /* when the frame was committed to the ring */
	double ctrl_time;      /* controller timestamp in s, NaN if the transport has none */
	uint32_t ctrl_skipped; /* controller frames lost just before this one */
	uint32_t size;	       /* bytes of values */
	RTL_FLEXIBLE_BEGIN
	RTL_ALIGNAS(8) unsigned char values[];
	RTL_FLEXIBLE_END
};

/* ---- the transport interface -------------------------------------------------- */

struct rtl_transport;

/*
 * Who owns what: the safety contract every transport keeps (and every
 * test fake, or it proves nothing). docs/architecture.md has the table.
 *
 *   commands (t->commands)  Written by the step's thread alone: the worker,
 *                           the rx thread in inline mode, or the thread of
 *                           the external loop (rtl_loop_read/write()).
 *                           check() and send() read them on that thread.
 *   transmit side           Encoder state, the socket's send path, its
 *                           backlog, the heartbeat: one holder at a time
 *                           (the loop's compare-and-swap flag, tried, never
 *                           waited for on the hot path). check(), send()
 *                           and send_safe() run only while holding it.
 *   safe package            Built by connect() into storage of its own,
 *                           pre-encoded, from the transport's configuration
 *                           (e.g. the application's safe callback), and
 *                           checked there: send_safe() sends exactly those
 *                           bytes (with fresh sequence fields) from any
 *                           thread that holds the transmit side, and never
 *                           reads t->commands. The watchdog, a rejected
 *                           step, a disarm and the stop at exit send it.
 *   connect()               With the application's callbacks in it: only
 *                           while no step runs: before the threads start,
 *                           or on the rx thread with the step's thread
 *                           parked and the transmit side held.
 *   recv(), next(), at_rest()  The rx thread alone.
 */
struct rtl_transport_ops {
	const char *name;
	/*
	 * Connect and set up (handshake, recipes, the safe package): slow
	 * path, may block up to the transport's own time-outs. Sets
	 * t->values_size, t->period_ns, t->rx_timeout_ns and
	 * t->ctrl_watchdog_ns. Returns 0 or -errno with @err filled.
	 */
	int (*connect)(struct rtl_transport *t, struct rtl_error *err);
	/*
	 * rx thread: wait up to RTL_TRANSPORT_RX_SLICE_NS for bytes and take
	 * them in. Returns the byte count (> 0), 0 when the peer closed,
	 * -EAGAIN when nothing came within the slice (the loop looks at its
	 * stop flag and its receive time-out, then calls again), or -errno
	 * (-ETIMEDOUT, here or from next(): the transport's own receive
	 * deadline passed; counted as rx_timeouts, explained by error()).
	 */
	int (*recv)(struct rtl_transport *t);
	/*
	 * rx thread: decode the next data frame of the bytes taken in into
	 * @f (values up to @cap bytes; fill size, ctrl_time, ctrl_skipped,
	 * kernel_rx_ns). @f->rx_ns already holds the time recv() returned:
	 * the transport's "now", so it need not read a clock per frame.
	 * Returns 1 for a frame, 0 when no whole frame is left, -errno when
	 * the stream is unusable (reconnect). Other packages are handled
	 * inside (slow path).
	 */
	int (*next)(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap);
	/*
	 * The step's thread, holding the transmit side: may the commands the
	 * step wrote be sent? 0, or -EDOM when a value is not finite or
	 * outside its configured limit (name it in @why, @len bytes). May be
	 * NULL (everything may be sent: then nothing can be non-finite).
	 */
	int (*check)(struct rtl_transport *t, char *why, size_t len);
	/*
	 * The step's thread, holding the transmit side: encode and send the
	 * commands without blocking (and keep the controller's watchdog fed
	 * while nothing changes). @now: CLOCK_MONOTONIC ns, read by the loop
	 * after the step (the transport need not read a clock). Returns the
	 * bytes sent (> 0), 0 when nothing
	 * changed (suppressed), -EAGAIN when the socket would block (nothing
	 * committed: the newest values go next time), or -errno. After a
	 * send_safe(), the next send() re-sends every command: the controller
	 * holds the safe values then.
	 */
	int (*send)(struct rtl_transport *t, int64_t now);
	/*
	 * Any thread holding the transmit side: send the safe package built at
	 * connect. Returns the bytes sent, -EAGAIN (would block; try again),
	 * -ENOTSUP (this transport has no safe package), or -errno.
	 */
	int (*send_safe)(struct rtl_transport *t);
	/*
	 * rx thread: does @f show the arm at rest? NULL: the transport cannot
	 * tell (the stop at exit is then sent without waiting).
	 */
	bool (*at_rest)(struct rtl_transport *t, const struct rtl_loop_frame *f);
	/* Close the connection (not the transport): reconnect may follow. */
	void (*disconnect)(struct rtl_transport *t);
	/*
	 * rx thread, after recv() or next() said the stream is unusable (or
	 * the peer closed): why, in a sentence that names the peer and the
	 * fix, for the loop's log. NULL or "": the loop says it with the
	 * error code. May be NULL.
	 */
	const char *(*error)(struct rtl_transport *t);
};

/* The longest a transport's recv() waits before it returns -EAGAIN. */
#define RTL_TRANSPORT_RX_SLICE_NS (50 * 1000 * 1000LL)

struct rtl_transport {
	const struct rtl_transport_ops *ops;
	void *impl;	    /* the implementation's state */
	void *commands;	    /* what the step function writes (transport-defined) */
	size_t values_size; /* bytes of decoded values per frame (set by connect) */
	int64_t period_ns;  /* expected time between frames (set by connect) */
	/* No data frame for this long is a lost connection (set by connect;
	 * 0: no limit). */
	int64_t rx_timeout_ns;
	/* The controller stops the arm after this long without a command
	 * (set by connect; 0: unknown). A loop that sends nothing for longer
	 * while armed is reported (rtl_loop_stats.silent). */
	int64_t ctrl_watchdog_ns;
};

/* ---- configuration ---------------------------------------------------------------- */

struct rtl_loop;

/*
 * The user's control step, run for each frame taken: read @f, write
 * commands into rtl_loop_commands(@loop). Return 0, or a negative value
 * to stop the loop. RT context: no allocation, no blocking.
 */
typedef int (*rtl_loop_step_fn)(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user);

enum rtl_loop_rt_mode {
	RTL_LOOP_RT_REQUIRE = 0, /* refuse to start without SCHED_FIFO and mlockall */
	RTL_LOOP_RT_DEGRADE = 1, /* report what could not be applied, run anyway */
	RTL_LOOP_RT_OFF = 2,	 /* plain threads, no memory locking (tests) */
};

/*
 * The loop's configuration. Zero is a safe value for every field: a
 * configuration with only .transport and .step set runs unpinned threads
 * at the default priorities (rx 90, worker 80) under SCHED_FIFO with
 * memory locked (refusing to start without them), a ring of 64, the newest
 * frame only, the watchdog on (3 periods), no reconnect, armed at start,
 * and at exit the stop is sent and rest awaited for up to 2 s.
 */
struct rtl_loop_config {
	struct rtl_transport *transport; /* required; not owned */
	rtl_loop_step_fn step;		 /* NULL for the external-loop API */
	void *user;
	/* Real-time settings. */
	enum rtl_loop_rt_mode rt_mode; /* 0: RTL_LOOP_RT_REQUIRE */
	int rx_priority;	       /* SCHED_FIFO priority; 0: 90 */
	int worker_priority;	       /* 0: 80 */
	/* Pinning: with pin_rx (pin_worker) set, the rx thread (worker) runs
	 * on CPU rx_cpu (worker_cpu) only. Not set (0): not pinned; a CPU
	 * given without its pin flag is refused (-EINVAL), so that "rx_cpu =
	 * 1" alone never silently means something else. -1 is accepted as
	 * "not pinned". */
	bool pin_rx, pin_worker;
	int rx_cpu, worker_cpu;
	/* Ring of frames: power of two; 0: 64. */
	uint32_t ring_capacity;
	/* true: the worker runs the step for every frame; false (default):
	 * only for the newest, counting the ones it skipped. */
	bool every_frame;
	/* Inline mode: the rx thread runs the step (and the send) itself,
	 * right after the frames of a receive are decoded, instead of waking
	 * a worker. Where the two threads would share a CPU anyway (two-CPU
	 * machines, laptops) this drops the futex wake-up and a context
	 * switch, about 3 us per cycle on the development VM
	 * (docs/rtloop-bench.md). The second thread (worker_cpu,
	 * worker_priority) then only keeps the watchdog: it checks every half
	 * watchdog time whether a step has run too long and sends the safe
	 * commands. While a step runs nothing is received: frames wait in the
	 * socket, and after a stall the newest of a receive is stepped (the
	 * rest count as worker-skipped). Needs a step function; spin_ns and
	 * spin_lead_ns do not apply. Default false. */
	bool inline_step;
	/* Worker wait: spin this long before sleeping on the futex
	 * (default 0: sleep at once; spinning needs a CPU of its own, and
	 * with SCHED_FIFO it starves lower priorities on that CPU meanwhile). */
	int64_t spin_ns;
	/* Place the spin around the next frame's arrival instead of after
	 * the step: the worker sleeps until spin_lead_ns before the frame is
	 * due (the last frame's receive time + the transport's period) and
	 * spins from there for spin_ns (0: 2 x spin_lead_ns). A frame that
	 * comes early wakes the worker through the futex as usual. Default
	 * 0 (off). For a periodic controller this is the cheap way to skip
	 * the futex wake-up: a few per cent of a CPU instead of all of it.
	 * See rtl_loop_spin_window(). */
	int64_t spin_lead_ns;
	/* Watchdog: when a frame has waited this many periods without a
	 * step finishing (the worker hangs, or a step runs too long), the
	 * safe package is sent, once per stall, and the late step's commands
	 * are discarded (rtl_loop_stats.stale). 0: 3; -1: off. */
	int watchdog_periods;
	/* Reconnect after a lost connection: attempts (default 0: stop the
	 * loop instead) and the first back-off (default 100 ms, doubling up
	 * to 2 s). The step is parked meanwhile; after a reconnect the safe
	 * package is sent and commands stay disarmed until rtl_loop_arm(). */
	int reconnect_attempts;
	int64_t reconnect_backoff_ns;
	/* Commands are sent only while armed; default armed at start. */
	bool start_disarmed;
	/* At exit (rtl_loop_stop(), a step's error, rtl_loop_destroy()) the
	 * safe package is sent and the loop waits until the transport reports
	 * the arm at rest, for up to this long. 0: 2 s; < 0: send, do not
	 * wait. */
	int64_t stop_timeout_ns;
};

/* ---- accounting ---------------------------------------------------------------------- */

struct rtl_loop_stats {
	uint64_t frames;	 /* data frames received (while running) */
	uint64_t ctrl_skipped;	 /* frames the controller skipped (timestamp steps) */
	uint64_t worker_skipped; /* frames the worker skipped (newest only) */
	uint64_t unstepped;	 /* frames received that no step took: the loop ended first */
	uint64_t ring_full;	 /* frames dropped because the ring was full */
	uint64_t steps;		 /* step calls */
	uint64_t overruns;	 /* steps that took longer than a period */
	uint64_t sends;		 /* sends that put bytes on the wire */
	uint64_t suppressed;	 /* sends with nothing changed, or disarmed */
	uint64_t would_block;	 /* sends that would have blocked */
	uint64_t rejected;	 /* steps whose commands failed the check (safe set sent) */
	uint64_t stale;	     /* steps whose commands were discarded: the watchdog fired meanwhile */
	uint64_t after_stop; /* steps whose commands were discarded: the loop was stopping */
	uint64_t watchdog;   /* watchdog episodes (one per stall) */
	uint64_t safe_sends; /* safe packages sent: watchdog, rejections, disarm, (re)connect, stop
			      */
	uint64_t silent;     /* armed, yet nothing sent for longer than the controller's watchdog */
	uint64_t reconnects; /* successful reconnects */
	uint64_t rx_errors;  /* malformed or failed receives */
	uint64_t rx_timeouts; /* connections declared lost: no frame for rx_timeout_ns */
	uint64_t log_dropped; /* log lines of the real-time threads dropped (queue full) */
	/* The stop at exit: */
	uint64_t stop_frames;	   /* frames received while waiting for rest */
	uint64_t stop_wait_ns;	   /* from the stop to rest confirmed */
	uint64_t stop_unconfirmed; /* 1: the arm was not seen at rest (see the report) */
	/* The worker's wait (and rtl_loop_read()'s): */
	uint64_t spin_hits;    /* frames found while spinning (no futex wake-up) */
	uint64_t spin_time_ns; /* time spent spinning, in total */
};

/* The loop's histograms (ns). */
enum rtl_loop_hist_id {
	RTL_LOOP_H_RX_TO_STEP = 0, /* receive to step start */
	RTL_LOOP_H_STEP,	   /* step duration */
	RTL_LOOP_H_STEP_TO_SEND,   /* step start to send done */
	RTL_LOOP_H_INTERARRIVAL,   /* between consecutive frames */
	RTL_LOOP_H_WAKE,	   /* commit to worker running (wake-up lateness) */
	RTL_LOOP_H_COUNT,
};

/* ---- API ----------------------------------------------------------------------------- */

/* Where the wait spins: [from, until), absolute ns; empty when until <= from. */
struct rtl_loop_spin {
	int64_t from, until;
};

/*
 * The wait's spin policy, a pure function (the worker and rtl_loop_read()
 * use it; exposed for tests and for external loops that want the same):
 * a wait that started at @wait_start, after a frame received at
 * @last_rx_ns (0: none yet), with the transport's @period_ns (0: unknown)
 * and the configuration's @spin_ns and @spin_lead_ns.
 *   - @spin_lead_ns == 0: spin right away, [wait_start, wait_start + spin_ns).
 *   - @spin_lead_ns > 0 with a known period and a previous frame: the next
 *     frame is due at last_rx_ns + period_ns; spin from spin_lead_ns
 *     before that for spin_ns (0: 2 x spin_lead_ns), but not before
 *     @wait_start (a late start shortens the window, never moves its end).
 *   - @spin_lead_ns > 0 without them: no spin (the next frame gives one).
 * Never spins longer than the budget. RT-safe.
 */
RTL_API struct rtl_loop_spin rtl_loop_spin_window(int64_t wait_start, int64_t last_rx_ns,
						  int64_t period_ns, int64_t spin_ns,
						  int64_t spin_lead_ns);

/*
 * Create a loop for @cfg (copied): allocates and pre-faults the ring and
 * the histograms (on the worker CPU's NUMA node). Does not connect.
 * Not RT-safe.
 * Returns 0 and sets *@out, or
 *   -EINVAL  @out, @cfg or the transport is NULL, or a field is out of
 *            range (message in @err),
 *   -ENOMEM  allocation failed.
 */
RTL_API int rtl_loop_create(struct rtl_loop **out, const struct rtl_loop_config *cfg,
			    struct rtl_error *err);

/* Stop (if running: the stop at exit is sent and awaited, as with
 * rtl_loop_stop()) and free. NULL is accepted. Not RT-safe. */
RTL_API void rtl_loop_destroy(struct rtl_loop *loop);

/*
 * Apply the real-time settings (mlockall, priorities, CPUs), connect the
 * transport and start the rx thread (and the worker when a step function
 * is configured). What could not be applied is logged and listed by
 * rtl_loop_report(); with RTL_LOOP_RT_REQUIRE it is an error instead.
 * Not RT-safe.
 * Returns 0, or -EPERM (real time refused and required), -EALREADY, or the
 * transport's connect error, with @err filled.
 */
RTL_API int rtl_loop_start(struct rtl_loop *loop, struct rtl_error *err);

/*
 * Ask the loop to stop. Async-signal-safe (atomic stores and a futex
 * wake): the rx thread sees it at the next frame or within
 * RTL_TRANSPORT_RX_SLICE_NS, discards what the step sends from then on,
 * sends the safe package and waits (bounded by stop_timeout_ns) until the
 * arm is reported at rest; rtl_loop_join() returns after that.
 */
RTL_API void rtl_loop_stop(struct rtl_loop *loop);

/*
 * Wait until the loop has stopped (stop requested, step returned < 0,
 * connection lost without reconnect), the stop at exit included, and join
 * its threads. Returns the reason: 0 for a requested stop, the step's
 * negative value, or -errno of the transport. Not RT-safe.
 */
RTL_API int rtl_loop_join(struct rtl_loop *loop);

/* rtl_loop_start() then rtl_loop_join(): the callback API in one call. */
RTL_API int rtl_loop_run(struct rtl_loop *loop, struct rtl_error *err);

/*
 * External-loop API, for users who own their loop thread (no step function
 * configured): wait up to @timeout_ns for a frame newer than the last one
 * read and return it (the newest, older ones counting as worker-skipped;
 * with every_frame, the oldest not yet read, so that every frame is read
 * in order), or NULL on time-out, stop, or while a reconnect runs. The
 * frame stays valid until the next read. From the read until the
 * rtl_loop_write() that follows (or the next read) the caller is in a
 * step: a reconnect waits for its end, and the watchdog measures it. Call
 * from one thread only. RT-safe.
 */
RTL_API const struct rtl_loop_frame *rtl_loop_read(struct rtl_loop *loop, int64_t timeout_ns);

/*
 * External-loop API: send the commands written into rtl_loop_commands()
 * (checked, coalesced, non-blocking, as the worker would) and end the
 * step. Returns the bytes sent, 0 (nothing changed, disarmed, rejected,
 * stale or stopping: see the stats), -EAGAIN (would block, or a reconnect
 * runs; retried next time with the newest values) or -errno. From the
 * thread that calls rtl_loop_read(). RT-safe.
 */
RTL_API int rtl_loop_write(struct rtl_loop *loop);

/* What the step function writes commands into (transport-defined, e.g.
 * a struct rtl_rtde_coalesce * for RTDE, an opaque handle: write through
 * rtl_rtde_coalesce_frame()). */
RTL_API void *rtl_loop_commands(struct rtl_loop *loop);

/* Arm or disarm the commands. Disarmed, the step's commands are not sent;
 * the first step after a disarm sends the safe package once (if anything
 * was sent while armed). Any thread. */
RTL_API void rtl_loop_arm(struct rtl_loop *loop, bool armed);
RTL_API bool rtl_loop_armed(const struct rtl_loop *loop);

/*
 * The sequence number (struct rtl_loop_frame.seq) of the frame being
 * stepped, for what a step reports about itself (a tracepoint, a log line).
 * The step's thread only; 0 for NULL. RT-safe.
 */
RTL_API uint64_t rtl_loop_step_seq(const struct rtl_loop *loop);

/* Counters, readable at any time from any thread. */
RTL_API void rtl_loop_stats(const struct rtl_loop *loop, struct rtl_loop_stats *out);

/* A histogram, readable at any time (see rtl_hist on live reads). */
RTL_API const struct rtl_hist *rtl_loop_hist(const struct rtl_loop *loop, enum rtl_loop_hist_id id);

/* Name of a histogram ("rx_to_step", ...). */
RTL_API const char *rtl_loop_hist_name(enum rtl_loop_hist_id id);

/* The real-time settings that could not be applied, "" when all were
 * (one line each). */
RTL_API const char *rtl_loop_rt_notes(const struct rtl_loop *loop);

/*
 * Write the report: counters, histograms (p50/p99/p99.9/max), and the
 * real-time notes, as text or, with @json, as one JSON object. Returns 0
 * or -EIO. Not RT-safe.
 */
RTL_API int rtl_loop_report(const struct rtl_loop *loop, FILE *f, bool json);

RTL_END_DECLS

#endif /* RTLOOP_LOOP_H */
