/* SPDX-License-Identifier: MIT */
/*
 * Logging: the library never prints. It hands each message to a handler the
 * application installs (default: none, messages are dropped), so programs
 * decide where text goes and RT threads never block on a terminal.
 *
 * Real-time threads do not call the handler at all. A thread that attached
 * a log queue (rtl_log_queue_attach(); the loop does it for its rx thread,
 * worker and watchdog thread) formats each message into a slot of its own
 * bounded single-producer ring and returns: no lock, no allocation, no
 * system call but one FUTEX_WAKE on the drainer's bell. A non-RT thread
 * drains the queues (rtl_log_queue_drain(), the loop's "rtl-log" thread,
 * asleep until a bell rings) and calls the handler there. A full queue
 * drops the message and counts it (rtl_log_queue_dropped()): a flood of
 * controller text never stalls the thread that receives it.
 */
#ifndef RTLOOP_LOG_H
#define RTLOOP_LOG_H

#include <stdint.h>

#include <rtloop/compiler.h>

struct rtl_error;

RTL_BEGIN_DECLS

enum rtl_log_level {
	RTL_LOG_ERROR = 0,
	RTL_LOG_WARN = 1,
	RTL_LOG_INFO = 2,
	RTL_LOG_DEBUG = 3,
};

/* Longest message, terminating NUL included: longer ones are cut. */
#define RTL_LOG_LINE 512

/* A log handler receives one complete, NUL-terminated message without a
 * trailing newline. It may be called from any thread that has no log
 * queue attached, and from the thread that drains the queues; never from
 * a thread with a queue attached. */
typedef void (*rtl_log_fn)(void *user, enum rtl_log_level level, const char *msg);

/* Install @fn (NULL to drop messages) with its @user pointer. Not
 * thread-safe with respect to concurrent logging: call during set-up. */
RTL_API void rtl_log_set_handler(rtl_log_fn fn, void *user);

/* A ready-made handler that writes "rtloop: <level>: <msg>\n" to stderr
 * for messages at or above the level passed (cast) as @user. */
RTL_API void rtl_log_stderr(void *user, enum rtl_log_level level, const char *msg);

/* Returns the name of @level: "error", "warning", "info" or "debug";
 * "unknown" for any other value. */
RTL_API const char *rtl_log_level_name(enum rtl_log_level level);

/*
 * Emit a message (printf format). On a thread with a log queue attached:
 * format it into the queue (or count it as dropped when the queue is
 * full), ring its bell and return; RT-safe (no allocation, no lock, no
 * system call but the futex wake; vsnprintf into the slot). On any other thread: format on the
 * stack and call the handler; not RT-safe (the handler may block). No handler: the message is not
 * even formatted.
 */
RTL_API void rtl_log(enum rtl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- log queues for real-time threads --------------------------------------------- */

struct rtl_log_queue;

/*
 * A queue of @slots messages (a power of two; 0: 64), each up to
 * RTL_LOG_LINE bytes, in locked, pre-faulted memory. Not RT-safe.
 * Returns 0 and sets *@out, or -EINVAL (@out NULL, @slots not a power of
 * two or above 65536) or -ENOMEM, with the reason in @err (may be NULL).
 */
RTL_API int rtl_log_queue_create(struct rtl_log_queue **out, unsigned slots, struct rtl_error *err);

/* Free @q (detach it from every thread first). NULL is accepted. */
RTL_API void rtl_log_queue_destroy(struct rtl_log_queue *q);

/*
 * From now on rtl_log() on the calling thread goes into @q (NULL: back to
 * the handler). One producer thread per queue at a time. RT-safe.
 */
RTL_API void rtl_log_queue_attach(struct rtl_log_queue *q);

/*
 * Hand every queued message of @q to the handler, in order, on the calling
 * thread (one draining thread per queue at a time). Returns the number of
 * messages handed over. Not RT-safe (the handler runs here). NULL: 0.
 */
RTL_API unsigned rtl_log_queue_drain(struct rtl_log_queue *q);

/*
 * After each message queued in @q, bump the 32-bit word @bell and
 * FUTEX_WAKE one waiter on it, so that the draining thread can sleep on
 * @bell (FUTEX_WAIT) instead of polling. One system call per message, on
 * the producer's thread; none while nothing is logged. NULL: no bell.
 * Set-up time.
 */
RTL_API void rtl_log_queue_set_bell(struct rtl_log_queue *q, uint32_t *bell);

/* Returns the number of messages dropped because @q was full, from any
 * thread; 0 for a NULL @q. */
RTL_API uint64_t rtl_log_queue_dropped(const struct rtl_log_queue *q);

RTL_END_DECLS

#endif /* RTLOOP_LOG_H */
