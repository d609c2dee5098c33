// SPDX-License-Identifier: MIT
/*
 * The library's only way to say something: format the text and hand it to
 * the application's handler, at once or, on a real-time thread, later.
 *
 * A real-time thread's messages go through its own struct rtl_log_queue:
 * an rtl_ring (single producer: the attached thread; single consumer: the
 * draining thread) of fixed slots, a level byte and the text. The producer
 * reserves a slot, formats into it and commits: the ring's release/acquire
 * pair publishes the text with the commit. The queue a thread logs into is
 * a thread-local pointer, so rtl_log() keeps one signature for every
 * caller and code deep in the RTDE client logs safely from the rx thread
 * without knowing where it runs.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/error.h>
#include <rtloop/log.h>
#include <rtloop/mem.h>
#include <rtloop/ring.h>
#include <rtloop/sized.h>
#include <rtloop/stat.h>

#define DEFAULT_SLOTS 64
#define MAX_SLOTS 65536

static rtl_log_fn log_fn;
static void *log_user;
/* Initial-exec: the hot path must not reach __tls_get_addr (which may
 * allocate); the pointer is set by the thread itself at its start. */
static _Thread_local struct rtl_log_queue *tl_queue __attribute__((tls_model("initial-exec")));

struct log_slot {
	uint8_t level;
	char msg[RTL_LOG_LINE];
};

struct rtl_log_queue {
	struct rtl_ring ring;
	void *storage;
	size_t storage_size;
	_Atomic uint64_t dropped; /* written by the producer only */
	uint32_t *bell;		  /* bumped and woken after each message */
};

RTL_API void rtl_log_set_handler(rtl_log_fn fn, void *user)
{
	log_fn = fn;
	log_user = user;
}

static const char *const level_names[] = { [RTL_LOG_ERROR] = "error",
					   [RTL_LOG_WARN] = "warning",
					   [RTL_LOG_INFO] = "info",
					   [RTL_LOG_DEBUG] = "debug" };

RTL_API const char *rtl_log_level_name(enum rtl_log_level level)
{
	return RTL__NAME_OF(level_names, level, "unknown");
}

RTL_API void rtl_log_stderr(void *user, enum rtl_log_level level, const char *msg)
{
	enum rtl_log_level max = (enum rtl_log_level)(intptr_t)user;

	if (level > max)
		return;
	fprintf(stderr, "rtloop: %s: %s\n", rtl_log_level_name(level), msg);
}

RTL_API void rtl_log(enum rtl_log_level level, const char *fmt, ...)
{
	struct rtl_log_queue *q = tl_queue;
	char buf[RTL_LOG_LINE];
	va_list ap;

	if (!log_fn)
		return;
	if (q) {
		struct log_slot *s = rtl_ring_reserve(&q->ring);

		if (!s) {
			rtl_stat_add(&q->dropped, 1);
			return;
		}
		s->level = (uint8_t)level;
		va_start(ap, fmt);
		vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
		va_end(ap);
		rtl_ring_commit(&q->ring);
		if (q->bell) {
			__atomic_fetch_add(q->bell, 1, __ATOMIC_SEQ_CST);
			syscall(SYS_futex, q->bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		}
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(log_user, level, buf);
}

RTL_API int rtl_log_queue_create(struct rtl_log_queue **out, unsigned slots, struct rtl_error *err)
{
	struct rtl_log_queue *q;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "rtl_log_queue_create: out is NULL");
	if (!slots)
		slots = DEFAULT_SLOTS;
	if (slots > MAX_SLOTS || (slots & (slots - 1)))
		return rtl_error_set(
			err, -EINVAL,
			"log queue of %u slots: give a power of two up to %u, or 0 for "
			"the default %u",
			slots, (unsigned)MAX_SLOTS, (unsigned)DEFAULT_SLOTS);
	ret = rtl_mem_alloc((void **)&q, sizeof(*q), -1);
	if (ret < 0)
		return rtl_error_set(err, ret, "log queue: cannot allocate locked memory");
	q->storage_size = rtl_ring_storage_size(slots, sizeof(struct log_slot));
	ret = rtl_mem_alloc(&q->storage, q->storage_size, -1);
	if (ret < 0) {
		rtl_mem_free(q, sizeof(*q));
		return rtl_error_set(err, ret,
				     "log queue: cannot allocate %zu bytes of locked memory",
				     q->storage_size);
	}
	ret = rtl_ring_init(&q->ring, q->storage, slots, sizeof(struct log_slot));
	if (ret < 0) {
		rtl_log_queue_destroy(q);
		return rtl_error_set(err, ret, "log queue: ring set-up failed");
	}
	*out = q;
	return 0;
}

RTL_API void rtl_log_queue_destroy(struct rtl_log_queue *q)
{
	if (!q)
		return;
	rtl_mem_free(q->storage, q->storage_size);
	rtl_mem_free(q, sizeof(*q));
}

RTL_API void rtl_log_queue_attach(struct rtl_log_queue *q)
{
	tl_queue = q;
}

RTL_API unsigned rtl_log_queue_drain(struct rtl_log_queue *q)
{
	const struct log_slot *s;
	unsigned n = 0;

	if (!q)
		return 0;
	while ((s = rtl_ring_peek(&q->ring))) {
		if (log_fn)
			log_fn(log_user, (enum rtl_log_level)s->level, s->msg);
		rtl_ring_release(&q->ring);
		n++;
	}
	return n;
}

RTL_API void rtl_log_queue_set_bell(struct rtl_log_queue *q, uint32_t *bell)
{
	if (q)
		q->bell = bell;
}

RTL_API uint64_t rtl_log_queue_dropped(const struct rtl_log_queue *q)
{
	return q ? rtl_stat_get(&q->dropped) : 0;
}
