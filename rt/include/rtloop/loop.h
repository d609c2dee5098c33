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
 *        transport->next() cuts and decodes each data frame straight into
 *        a reserved ring slot (header struct rtl_loop_frame + decoded
 *        values); commit; wake the worker. Setup replies and text messages
 *        stay inside the transport (slow path) and never reach the worker.
 *   [ring]       rtl_ring, slots of sizeof(struct rtl_loop_frame) + values,
 *                made at the first connect (when the transport knows its
 *                frame size), pre-faulted, on the worker's NUMA node.
 *   [worker]     SCHED_FIFO, pinned to another CPU (or, with inline_step,
 *                the rx thread itself: see struct rtl_loop_config)
 *        wait: sleep on a futex, spinning for a bounded budget either
 *        right after the step or (spin_lead_ns) just before the next
 *        frame is due (rtl_loop_spin_window()); take the newest frame
 *        (counting the skipped ones) or every frame; call step();
 *        transport->send() encodes and sends only what changed, without
 *        blocking (a send that would block is counted and retried with the
 *        newest values next cycle).
 *
 * The loop knows no protocol: it talks to a small transport interface
 * (struct rtl_transport_ops), implemented by the library for RTDE
 * (<rtloop/rtde_transport.h>), rtloop's UDP stream (<rtloop/udp_transport.h>)
 * and Doosan's DRFL (<rtloop/drfl_transport.h>), and by the tests' fakes,
 * which keep the same contract.
 *
 * Wake-ups use an event count: the rx thread bumps a 32-bit word after each
 * commit and calls FUTEX_WAKE only when the worker said it is going to
 * sleep; the worker announces sleep, re-checks the ring, then waits on the
 * value it read. Both sides use sequentially consistent operations on the
 * two words, so a wake-up cannot be lost (Dekker's pattern).
 *
 * Who owns what, on which thread
 * ------------------------------
 * The safety contract of the loop and of every transport (and every test
 * fake: one that does not keep it proves nothing about the races it is
 * meant to show). It is written here and only here; the loop's sources and
 * docs/architecture.md point to it.
 *
 *   the step's commands (rtl_loop_commands(): the coalescer's frames, the
 *        UDP command struct)
 *        written by the step's thread alone: the worker, the rx thread in
 *        inline mode, or the external loop's thread (rtl_loop_read() to
 *        rtl_loop_write()); check() and send() read them on that thread,
 *        every step.
 *   the transmit side (encoder state, the socket's send path and backlog,
 *        the heartbeat counter)
 *        one holder at a time, by the loop's compare-and-swap flag, tried
 *        and never waited for on the hot path: the step's thread for one
 *        send, the watchdog for one safe package, the rx thread for a whole
 *        reconnect and for the whole stop at exit. check(), send() and
 *        send_safe() run only while holding it.
 *   the safe package
 *        built by connect() into storage of its own, pre-encoded, from the
 *        transport's configuration (RTDE: the safe callback into a
 *        coalescer of its own; UDP: a STOP), and checked there; send_safe()
 *        sends exactly those bytes (with fresh sequence fields) from any
 *        thread that holds the transmit side, and never reads the step's
 *        commands. The watchdog, a rejected step, a disarm, every
 *        (re)connect and the stop at exit send it.
 *   the transport's tables (recipes, check tables, handles) and the
 *        application's callbacks (connected, safe)
 *        written by connect(), only while no step runs: before the threads
 *        start, or on the rx thread with the step's thread parked and the
 *        transmit side held; read by the step's thread.
 *   received bytes, the framer, the ring's producer side
 *        the rx thread alone (recv(), next(), at_rest()).
 *   the watchdog's episode
 *        the watching thread alone: the rx thread, or rtl-watch in inline
 *        mode.
 *   log lines of the real-time threads
 *        each thread into its own lock-free queue (<rtloop/log.h>); the
 *        loop's non-RT thread rtl-log hands them to the application's
 *        handler.
 *
 * What follows from it: the safe package is never derived from the step's
 * frames (a rejected step and a watchdog send the safe bytes, not the
 * step's); a reconnect parks the step (no step runs while the transport and
 * the application's callbacks change); the watchdog fires once per stall
 * and the late step's commands are then discarded; every end of the loop
 * (rtl_loop_stop(), a step's error, a lost connection that does not come
 * back, rtl_loop_destroy()) sends the safe package and waits, bounded,
 * until the transport reports the arm at rest. A loop that is armed yet
 * sends nothing for longer than the controller's watchdog is reported.
 *
 * Accounting is always on: counters are single-writer relaxed atomics and
 * the histograms are rtl_hist, so a non-RT thread reads them at any time
 * (rtl_loop_stats(), rtl_loop_report()) without disturbing the hot path.
 *
 * Hot-path rules: after rtl_loop_start() the rx thread and the worker make
 * no allocation, take no lock, print nothing and perform no system call
 * other than the transport's receive/send and the futex; tests/rt proves
 * it.
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
#include <rtloop/stat.h>

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
 * The transport's operations, called by the loop on the threads the
 * contract above names. Set .size = sizeof(struct rtl_transport_ops): the
 * loop reads only that many bytes, so an operation added later is NULL
 * for a transport built before it: the loop skips an optional call that is
 * NULL and refuses, at create, a transport without a required one.
 */
struct rtl_transport_ops {
	size_t size; /* sizeof(struct rtl_transport_ops) */
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
	/*
	 * The step's thread (inside a step, so no connect runs): are the
	 * values of received frame @f finite? 0, or -EDOM with the first
	 * value that is not named in @why (@len bytes). A rig
	 * (<rtloop/rig.h>) refuses such a frame and applies its policy. May
	 * be NULL (the transport cannot tell: every frame passes).
	 */
	int (*finite)(struct rtl_transport *t, const struct rtl_loop_frame *f, char *why,
		      size_t len);
};

/* The longest a transport's recv() waits before it returns -EAGAIN. */
#define RTL_TRANSPORT_RX_SLICE_NS (50 * 1000 * 1000LL)

/*
 * A transport as the loop sees it: the implementation fills it at create
 * (size, ops, impl, commands) and connect() sets the rest. Set .size =
 * sizeof(struct rtl_transport) (the loop reads only that many bytes).
 */
struct rtl_transport {
	size_t size; /* sizeof(struct rtl_transport) */
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
	 * while armed is reported (rtl_loop_counters.silent). */
	int64_t ctrl_watchdog_ns;
};

/* ---- configuration ---------------------------------------------------------------- */

struct rtl_loop;
struct rtl_telemetry;

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
 * The loop's configuration. Set .size = sizeof(struct rtl_loop_config)
 * (the loop reads only that many bytes: a field added later takes its
 * default for a program built before it). Zero is a safe value for every
 * other field: a configuration with only .size, .transport and .step set
 * runs unpinned threads
 * at the default priorities (rx 90, worker 80) under SCHED_FIFO with
 * memory locked (refusing to start without them), a ring of 64, the newest
 * frame only, the watchdog on (3 periods), no reconnect, armed at start,
 * and at exit the stop is sent and rest awaited for up to 2 s.
 */
struct rtl_loop_config {
	size_t size;			 /* sizeof(struct rtl_loop_config) */
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
	 * are discarded (rtl_loop_counters.stale). 0: 3; -1: off. */
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
	/* Telemetry (<rtloop/telemetry.h>; not owned; NULL: none): the loop
	 * adds its counters ("loop.*") and its histograms at create, starts
	 * it in rtl_loop_start() (the layout is fixed then), and publishes a
	 * record after each step's send (the external loop: after each
	 * rtl_loop_write() of a step), running the telemetry's captures with
	 * the step's frame. rtl_loop_destroy() mirrors the final counters and
	 * histograms and detaches; the telemetry goes after the loop. */
	struct rtl_telemetry *telemetry;
	/* The watchdog time in ns, for a loop whose steps are clocked by
	 * something other than its own frames (a rig's step: <rtloop/rig.h>):
	 * > 0 replaces watchdog_periods x the transport's period; 0: that
	 * product. Ignored when watchdog_periods is -1 (off). */
	int64_t watchdog_ns;
};

/* ---- accounting ---------------------------------------------------------------------- */

/*
 * The loop's counters, declared once: X(name, what it counts). The
 * snapshot struct, the loop's atomics, the snapshot copy, the report, its
 * JSON and the Python binding's dict are all made from this list
 * (rtl_loop_counter_fields()), so a counter is added here and nowhere else.
 * New counters go at the end (the snapshot's layout is ABI).
 */
#define RTL_LOOP_COUNTERS(X)                                                                 \
	X(frames, "data frames received (while running)")                                    \
	X(ctrl_skipped, "frames the controller skipped (timestamp steps)")                   \
	X(worker_skipped, "frames the worker skipped (newest only)")                         \
	X(unstepped, "frames received that no step took: the loop ended first")              \
	X(ring_full, "frames dropped because the ring was full")                             \
	X(steps, "step calls")                                                               \
	X(overruns, "steps that took longer than a period")                                  \
	X(sends, "sends that put bytes on the wire")                                         \
	X(suppressed, "sends with nothing changed, or disarmed")                             \
	X(would_block, "sends that would have blocked")                                      \
	X(rejected, "steps whose commands failed the check (the safe package was sent)")     \
	X(stale, "steps whose commands were discarded: the watchdog fired meanwhile")        \
	X(after_stop, "steps whose commands were discarded: the loop was stopping")          \
	X(watchdog, "watchdog episodes (one per stall)")                                     \
	X(safe_sends, "safe packages sent: watchdog, rejections, disarm, (re)connect, stop") \
	X(silent, "armed, yet nothing sent for longer than the controller's watchdog")       \
	X(reconnects, "successful reconnects")                                               \
	X(rx_errors, "malformed or failed receives")                                         \
	X(rx_timeouts, "connections declared lost: no frame for rx_timeout_ns")              \
	X(log_dropped, "log lines of the real-time threads dropped (queue full)")            \
	X(stop_frames, "the stop at exit: frames received while waiting for rest")           \
	X(stop_wait_ns, "the stop at exit: ns from the stop to rest confirmed")              \
	X(stop_unconfirmed, "the stop at exit: 1 when the arm was not seen at rest")         \
	X(spin_hits, "frames the wait found while spinning (no futex wake-up)")              \
	X(spin_time_ns, "ns the wait spent spinning, in total")                              \
	RTL_LOOP__TEST_COUNTERS(X)

/* A test of the table adds a counter here (tests/rt/test-loop-counters.c);
 * nothing else may define it. */
#ifndef RTL_LOOP__TEST_COUNTERS
#define RTL_LOOP__TEST_COUNTERS(X)
#endif

/* A snapshot of the counters (rtl_loop_stats()). Set .size = sizeof. */
struct rtl_loop_counters {
	size_t size;
	RTL_LOOP_COUNTERS(RTL_STAT_U64)
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
 * Returns the window, [from, until): empty (both @wait_start) when the wait
 * does not spin, and for a negative @spin_ns or @spin_lead_ns. The window
 * is never longer than @spin_ns (2 x @spin_lead_ns when @spin_ns is 0), the
 * budget the configuration gives. RT-safe.
 */
RTL_API struct rtl_loop_spin rtl_loop_spin_window(int64_t wait_start, int64_t last_rx_ns,
						  int64_t period_ns, int64_t spin_ns,
						  int64_t spin_lead_ns);

/*
 * Create a loop for @cfg (copied): allocates the histograms and the log
 * queues (on the worker CPU's NUMA node). Does not connect; the ring is
 * made, pre-faulted, at the first connect (rtl_loop_start()), when the
 * transport knows its frame size. Not RT-safe.
 * Returns 0 and sets *@out (NULL on failure), or
 *   -EINVAL  @out, @cfg or the transport is NULL, a size is not set (cfg,
 *            the transport or its ops), or a field is out of range,
 *   -E2BIG   @cfg (or the transport's ops) has a field this library does
 *            not know set (built against newer headers),
 *   -ENOMEM  allocation failed,
 * with @err filled.
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
 * Returns 0, or -EINVAL (@loop NULL), -EALREADY, the error of
 * rtl_mem_lock_all() (-EPERM, -ENOMEM, -EAGAIN: real time refused and
 * required), the transport's connect error, or the error of making the
 * ring or a thread, with @err filled.
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
 * Returns true once the loop is stopping or has stopped, whatever ended it
 * (rtl_loop_stop(), a step's negative return, a connection lost without
 * reconnect), false while it runs, before rtl_loop_start() and for a NULL
 * @loop. A thread beside a running loop (a binding's reader) learns from it
 * that the loop ended by itself; rtl_loop_join() then says why. Any thread
 * (a relaxed load). RT-safe.
 */
RTL_API bool rtl_loop_stopping(const struct rtl_loop *loop);

/*
 * Wait until the loop has stopped (stop requested, step returned < 0,
 * connection lost without reconnect), the stop at exit included, and join
 * its threads. Returns the reason: 0 for a requested stop, the step's
 * negative value, or -errno of the transport. Not RT-safe.
 */
RTL_API int rtl_loop_join(struct rtl_loop *loop);

/* rtl_loop_start() then rtl_loop_join(): the callback API in one call.
 * Returns rtl_loop_start()'s error when it fails, else what rtl_loop_join()
 * returns. */
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

/* Returns what the step function writes commands into, transport-defined
 * and untyped (NULL for a NULL @loop): prefer the transport's typed accessor
 * (rtl_rtde_loop_commands(), rtl_udp_transport_command(), rtl_drfl_transport_command()). RT-safe.
 */
RTL_API void *rtl_loop_commands(struct rtl_loop *loop);

/* Returns the transport the loop was created with (cfg.transport), NULL
 * for a NULL @loop. RT-safe. */
RTL_API struct rtl_transport *rtl_loop_transport(struct rtl_loop *loop);

/* Arm or disarm the commands. Disarmed, the step's commands are not sent;
 * the first step after a disarm sends the safe package once (if anything
 * was sent while armed). Any thread. The query, rtl_loop_armed(), returns
 * true when the commands are armed, false when not or for a NULL @loop. */
RTL_API void rtl_loop_arm(struct rtl_loop *loop, bool armed);
RTL_API bool rtl_loop_armed(const struct rtl_loop *loop);

/*
 * Returns the sequence number (struct rtl_loop_frame.seq) of the frame
 * being stepped, for what a step reports about itself (a tracepoint, a log line).
 * The step's thread only; 0 for NULL. RT-safe.
 */
RTL_API uint64_t rtl_loop_step_seq(const struct rtl_loop *loop);

/*
 * A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written), readable at any time from
 * any thread. Returns 0, or -EINVAL (@loop or @out NULL, or out->size not
 * set). RT-safe (relaxed loads).
 */
RTL_API int rtl_loop_stats(const struct rtl_loop *loop, struct rtl_loop_counters *out);

/*
 * Returns the counters' table, in report order: name, what it counts, offset in
 * struct rtl_loop_counters (read a snapshot's value with
 * rtl_stat_value()). Sets *@n to the number of counters. RT-safe.
 */
RTL_API const struct rtl_stat_field *rtl_loop_counter_fields(size_t *n);

/* Returns histogram @id, readable at any time (see rtl_hist on live
 * reads), or NULL for a NULL @loop or an unknown @id. */
RTL_API const struct rtl_hist *rtl_loop_hist(const struct rtl_loop *loop, enum rtl_loop_hist_id id);

/* Returns the name of histogram @id ("rx_to_step", ...), "unknown" for an
 * unknown @id. */
RTL_API const char *rtl_loop_hist_name(enum rtl_loop_hist_id id);

/* Returns the real-time settings that could not be applied, one line each,
 * or "" when all were (or for a NULL @loop). */
RTL_API const char *rtl_loop_rt_notes(const struct rtl_loop *loop);

/*
 * Write the report: counters, histograms (p50/p99/p99.9/max), and the
 * real-time notes, as text or, with @json, as one JSON object. Returns 0
 * or -EIO. Not RT-safe.
 */
RTL_API int rtl_loop_report(const struct rtl_loop *loop, FILE *f, bool json);

RTL_END_DECLS

#endif /* RTLOOP_LOOP_H */
