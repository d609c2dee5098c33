/* SPDX-License-Identifier: MIT */
/*
 * rtl_ring: a bounded, lock-free, single-producer single-consumer ring of
 * fixed-size slots.
 *
 * Design
 * ------
 * The ring is the only thing the receive thread and the worker share, so it is
 * built to move one cache line per item in the common case and nothing else.
 *
 * - Indices are free-running uint32_t counters. The slot of index i is
 *   i & mask; the fill level is head - tail, computed in unsigned arithmetic,
 *   so the counters may wrap past UINT32_MAX without any special case. The
 *   capacity is a power of two no larger than 2^31, so head - tail never
 *   exceeds it and "full" is simply head - tail == capacity.
 * - The producer owns head, the consumer owns tail. Each side keeps, on its
 *   own cache line, a limit derived from its last look at the other side's
 *   index (producer: tail + capacity; consumer: head) and looks again only
 *   when it reaches that limit ("full" or "empty" by the cached view).
 *   In steady state a push therefore touches only the producer's line and
 *   the slot; the consumer's line is read once per "apparently full".
 * - What the producer's cache costs, measured in docs/ring-bench.md: a
 *   saturated ring whose producer never reads the consumer's line settles
 *   empty when the two CPUs are far apart (a line transfer of about
 *   200 ns). The consumer catches up, then polls the producer's index and
 *   the slot line being filled, so the producer's stores wait for a line
 *   transfer on nearly every item; boost::lockfree::spsc_queue, which
 *   reads the other index on every operation, settles full instead and
 *   moves 1.2-1.7x our items there. A prefetch of the consumer's line in
 *   every push closes that gap but delays the consumer's store of tail, and
 *   every store behind it, by a line transfer: about 10 % more round-trip
 *   time at 8 B. So the producer prefetches that line only once every
 *   RTL_RING__LOOK_EVERY pushes (see rtl_ring__prod_free()): enough to keep
 *   the far ring out of the empty state, too rare to show in a round trip,
 *   and no instruction on the push's fast path.
 * - Each side also keeps its own copy of the read-only geometry (mask, slot
 *   size, storage pointer), so neither reads the other's line for it.
 * - The storage is separate from the control block: the caller may place it
 *   on the consumer's NUMA node, in huge pages, or in shared memory.
 * - Ordering uses C11 acquire/release only: the producer's release store of
 *   head publishes the slot contents; the consumer's release store of tail
 *   hands the slot back. No read-modify-write instruction is on the path.
 *
 * Thread contract: exactly one producer thread calls the producer functions
 * (push*, reserve, commit) and exactly one consumer thread calls the consumer
 * functions (pop*, peek, release, *_newest); any thread may call the queries
 * (size, free, counters), which are approximate while the ring is in use.
 *
 * RT-safe: every function in this header is wait-free: no allocation, no
 * locks, no system calls. rtl_ring_create() and rtl_ring_destroy() (ring.c)
 * allocate and are not RT-safe.
 */
#ifndef RTLOOP_RING_H
#define RTLOOP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rtloop/compiler.h>
#include <rtloop/stat.h>

struct rtl_error;

RTL_BEGIN_DECLS

/* Alignment of each side of the control block: two cache lines, so that the
 * adjacent-line prefetcher does not couple producer and consumer. */
#define RTL_RING_ALIGN (2 * RTL_CACHELINE)
/* Largest capacity: head - tail must stay representable below 2^32. */
#define RTL_RING_MAX_CAPACITY (UINT32_C(1) << 31)

struct rtl_ring_side {
	/* Producer: next index to write. Consumer: next index to read. */
	RTL_ATOMIC(uint32_t) index;
	/* First index this side may not pass without looking again (plain:
	 * private to this side). Consumer: the producer's index, from its last
	 * look. Producer: hard_limit, or RTL_RING__LOOK_EVERY past the push
	 * that set it if that is sooner. */
	uint32_t limit;
	/* Producer: items refused because the ring was full.
	 * Consumer: items dropped by the *_newest calls.
	 * Single writer (this side); atomic so other threads may read it. */
	RTL_ATOMIC(uint64_t) counter;
	/* Private copies of the read-only geometry. capacity is mask + 1,
	 * kept apart so that the limit reload does not share the mask with
	 * the slot computation (one instruction less per push). */
	uint32_t mask;
	uint32_t capacity;
	size_t slot_size; /* size_t: the slot offset is one multiply */
	unsigned char *slots;
	/* Producer only: consumer index + capacity from its last look at the
	 * consumer, the real end of the free space (limit may end sooner). */
	uint32_t hard_limit;
};

struct rtl_ring {
	RTL_ALIGNAS(RTL_RING_ALIGN) struct rtl_ring_side prod;
	RTL_ALIGNAS(RTL_RING_ALIGN) struct rtl_ring_side cons;
};

RTL_STATIC_ASSERT(offsetof(struct rtl_ring, cons) - offsetof(struct rtl_ring, prod) >=
			  RTL_RING_ALIGN,
		  "producer and consumer state must not share a cache line pair");
RTL_STATIC_ASSERT(sizeof(struct rtl_ring_side) <= RTL_RING_ALIGN,
		  "one side of the ring must fit its own cache lines");

/*
 * Bytes of storage a ring of @capacity slots of @slot_size bytes needs.
 * Returns 0 when the geometry is invalid (see rtl_ring_init()).
 */
RTL_API size_t rtl_ring_storage_size(uint32_t capacity, size_t slot_size);

/*
 * Initialise @r over caller-provided @storage of at least
 * rtl_ring_storage_size(capacity, slot_size) bytes. @r must be aligned to
 * RTL_RING_ALIGN. Not thread-safe: call before the threads start.
 *
 * Returns 0, or
 *   -EINVAL  @r or @storage is NULL, @r is misaligned, @capacity is not a
 *            power of two in [1, RTL_RING_MAX_CAPACITY], or @slot_size is 0
 *            or larger than UINT32_MAX, or the storage size
 *            overflows size_t.
 */
RTL_API int rtl_ring_init(struct rtl_ring *r, void *storage, uint32_t capacity, size_t slot_size);

/*
 * As rtl_ring_init(), with both indices starting at @start instead of 0.
 * Meant for tests that exercise the wrap of the free-running counters.
 * Returns 0, or -EINVAL as rtl_ring_init().
 */
RTL_API int rtl_ring_init_at(struct rtl_ring *r, void *storage, uint32_t capacity, size_t slot_size,
			     uint32_t start);

/*
 * Allocate an aligned control block and zeroed storage together (storage
 * right after the control block) and initialise them. Not RT-safe.
 *
 * Returns 0 and sets *@out, or -EINVAL (@out is NULL, or the geometry as
 * rtl_ring_init()) or -ENOMEM,
 * with the reason in @err (may be NULL).
 */
RTL_API int rtl_ring_create(struct rtl_ring **out, uint32_t capacity, size_t slot_size,
			    struct rtl_error *err);

/* Free a ring made by rtl_ring_create(). NULL is accepted. */
RTL_API void rtl_ring_destroy(struct rtl_ring *r);

/* ---- internal helpers (not part of the API) ------------------------------ */

RTL_INLINE unsigned char *rtl_ring__slot(const struct rtl_ring_side *s, uint32_t i)
{
	return s->slots + (size_t)(i & s->mask) * s->slot_size;
}

RTL_INLINE void rtl_ring__count(struct rtl_ring_side *s, uint64_t n)
{
	/* A statistic with a single writer (this side): no ordering with the
	 * data is needed, only a value that is not torn. */
	rtl_stat_add(&s->counter, n);
}

/* Pushes between two prefetches of the consumer's line (see
 * rtl_ring__prod_free()). */
#define RTL_RING__LOOK_EVERY 16u

/* Producer: free slots, reloading the consumer's index only when the cached
 * view shows fewer than @want free. The result may be less than the free
 * space, never more. */
RTL_INLINE uint32_t rtl_ring__prod_free(struct rtl_ring *r, uint32_t head, uint32_t want)
{
	struct rtl_ring_side *p = &r->prod;
	uint32_t free_slots = p->limit - head;

	if (RTL_UNLIKELY(free_slots < want)) {
		/* limit stops the producer here at least once every
		 * RTL_RING__LOOK_EVERY pushes, to prefetch the consumer's line
		 * without waiting for it. Otherwise a saturated ring between
		 * far-apart CPUs settles empty (the design notes above) and the
		 * consumer's polling makes every push wait for a line transfer;
		 * a prefetch in every push prevents that too, but costs the
		 * round trip about 10 % and adds an instruction per push
		 * (docs/ring-bench.md). */
		__builtin_prefetch(&r->cons.index, 0, 3);
		if (p->hard_limit - head < want) {
			/* acquire: pairs with the consumer's release store of
			 * tail, so its reads of the slots it handed back happen
			 * before we overwrite them. */
			p->hard_limit = RTL_LOAD(&r->cons.index, acquire) + p->capacity;
		}
		free_slots = p->hard_limit - head;
		/* The cap applies only to calls that want no more than it
		 * (single pushes, small batches); a larger batch gets all the
		 * room there is. */
		if (free_slots > RTL_RING__LOOK_EVERY && want <= RTL_RING__LOOK_EVERY)
			free_slots = RTL_RING__LOOK_EVERY;
		p->limit = head + free_slots;
	}
	return free_slots;
}

/* Consumer: filled slots, reloading the producer's index only when the
 * cached view shows fewer than @want. */
RTL_INLINE uint32_t rtl_ring__cons_avail(struct rtl_ring *r, uint32_t tail, uint32_t want)
{
	struct rtl_ring_side *c = &r->cons;
	uint32_t avail = c->limit - tail;

	if (avail < want) {
		/* acquire: pairs with the producer's release store of head, so
		 * the slot contents it wrote are visible before we read them. */
		c->limit = RTL_LOAD(&r->prod.index, acquire);
		avail = c->limit - tail;
	}
	return avail;
}

/* ---- producer ---------------------------------------------------------- */

/*
 * Zero-copy push, step one: returns the slot the next item goes to, or NULL
 * when the ring is full (counted in rtl_ring_full_count()). Write the item in place,
 * then rtl_ring_commit(). Calling reserve again before commit returns the
 * same slot. Producer only; RT-safe, wait-free.
 */
RTL_INLINE void *rtl_ring_reserve(struct rtl_ring *r)
{
	/* relaxed: only this thread writes head. */
	uint32_t head = RTL_LOAD(&r->prod.index, relaxed);

	if (RTL_UNLIKELY(rtl_ring__prod_free(r, head, 1) == 0)) {
		rtl_ring__count(&r->prod, 1);
		return NULL;
	}
	return rtl_ring__slot(&r->prod, head);
}

/*
 * Zero-copy push, step two: publish the slot returned by the last successful
 * rtl_ring_reserve(). Producer only; RT-safe, wait-free.
 */
RTL_INLINE void rtl_ring_commit(struct rtl_ring *r)
{
	uint32_t head = RTL_LOAD(&r->prod.index, relaxed);

	/* release: the item written into the slot becomes visible to the
	 * consumer no later than the new head does. */
	RTL_STORE(&r->prod.index, head + 1, release);
}

/*
 * Copy @size bytes (at most the slot size) from @item into the next slot.
 * With a compile-time @size (sizeof) the copy inlines to plain moves.
 * Returns false, counting the refusal, when the ring is full.
 * Producer only; RT-safe, wait-free.
 */
RTL_INLINE bool rtl_ring_push_sz(struct rtl_ring *r, const void *item, size_t size)
{
	struct rtl_ring_side *p = &r->prod;
	/* relaxed: only this thread writes head. Read once: reserve + commit
	 * would read it twice. */
	uint32_t head = RTL_LOAD(&p->index, relaxed);
	/* Computed before head is masked: lets the compiler use one lea
	 * instead of a register copy and an add. */
	uint32_t next = head + 1;

	if (RTL_UNLIKELY(rtl_ring__prod_free(r, head, 1) == 0)) {
		rtl_ring__count(p, 1);
		return false;
	}
	memcpy(rtl_ring__slot(p, head), item, size);
	/* release: the item is visible no later than the new head. */
	RTL_STORE(&p->index, next, release);
	return true;
}

/* Push one slot-sized item. Returns true, or false when the ring is full
 * (counted in rtl_ring_full_count()). See rtl_ring_push_sz(). */
RTL_INLINE bool rtl_ring_push(struct rtl_ring *r, const void *item)
{
	return rtl_ring_push_sz(r, item, r->prod.slot_size);
}

/*
 * Push up to @n items of @size bytes each, laid out contiguously at @items,
 * publishing them with a single release store. Returns the number pushed;
 * the items that did not fit are counted in rtl_ring_full_count().
 * Producer only; RT-safe, wait-free.
 */
RTL_INLINE uint32_t rtl_ring_push_n_sz(struct rtl_ring *r, const void *items, uint32_t n,
				       size_t size)
{
	struct rtl_ring_side *p = &r->prod;
	uint32_t head = RTL_LOAD(&p->index, relaxed);
	uint32_t k = rtl_ring__prod_free(r, head, n);
	const unsigned char *src = (const unsigned char *)items;

	if (k > n)
		k = n;
	if (RTL_UNLIKELY(k < n))
		rtl_ring__count(p, n - k);
	if (size == p->slot_size) {
		/* Contiguous runs: at most two copies, split at the wrap. */
		uint32_t idx = head & p->mask;
		uint32_t first = p->mask + 1 - idx;

		if (first > k)
			first = k;
		memcpy(p->slots + (size_t)idx * size, src, (size_t)first * size);
		if (RTL_UNLIKELY(k > first))
			memcpy(p->slots, src + (size_t)first * size, (size_t)(k - first) * size);
	} else {
		for (uint32_t i = 0; i < k; i++)
			memcpy(rtl_ring__slot(p, head + i), src + (size_t)i * size, size);
	}
	/* release: all k items are visible before the head that covers them. */
	RTL_STORE(&p->index, head + k, release);
	return k;
}

/* Push up to @n slot-sized items. Returns the number pushed. See
 * rtl_ring_push_n_sz(). */
RTL_INLINE uint32_t rtl_ring_push_n(struct rtl_ring *r, const void *items, uint32_t n)
{
	return rtl_ring_push_n_sz(r, items, n, r->prod.slot_size);
}

/* ---- consumer ---------------------------------------------------------- */

/*
 * Zero-copy pop, step one: returns the oldest item, left in the ring, or NULL
 * when the ring is empty. Read it, then rtl_ring_release(). Consumer only;
 * RT-safe, wait-free.
 */
RTL_INLINE const void *rtl_ring_peek(struct rtl_ring *r)
{
	/* relaxed: only this thread writes tail. */
	uint32_t tail = RTL_LOAD(&r->cons.index, relaxed);

	if (rtl_ring__cons_avail(r, tail, 1) == 0)
		return NULL;
	return rtl_ring__slot(&r->cons, tail);
}

/*
 * Zero-copy pop, step two: hand the slot returned by the last successful
 * rtl_ring_peek() (or rtl_ring_peek_newest()) back to the producer.
 * Consumer only; RT-safe, wait-free.
 */
RTL_INLINE void rtl_ring_release(struct rtl_ring *r)
{
	uint32_t tail = RTL_LOAD(&r->cons.index, relaxed);

	/* release: our reads of the slot are complete before the producer can
	 * see it free and overwrite it. */
	RTL_STORE(&r->cons.index, tail + 1, release);
}

/*
 * Copy the oldest item (@size bytes, at most the slot size) to @item and
 * remove it. Returns false when the ring is empty. Consumer only; RT-safe,
 * wait-free.
 */
RTL_INLINE bool rtl_ring_pop_sz(struct rtl_ring *r, void *item, size_t size)
{
	struct rtl_ring_side *c = &r->cons;
	/* relaxed: only this thread writes tail. */
	uint32_t tail = RTL_LOAD(&c->index, relaxed);
	uint32_t next = tail + 1; /* early, as in rtl_ring_push_sz() */

	if (rtl_ring__cons_avail(r, tail, 1) == 0)
		return false;
	memcpy(item, rtl_ring__slot(c, tail), size);
	/* release: the copy out of the slot completes before the producer
	 * may reuse it. */
	RTL_STORE(&c->index, next, release);
	return true;
}

/* Pop one slot-sized item. Returns true, or false when the ring is empty.
 * See rtl_ring_pop_sz(). */
RTL_INLINE bool rtl_ring_pop(struct rtl_ring *r, void *item)
{
	return rtl_ring_pop_sz(r, item, r->cons.slot_size);
}

/*
 * Pop up to @max items of @size bytes into the contiguous array @items,
 * releasing them with a single store. Returns the number popped.
 * Consumer only; RT-safe, wait-free.
 */
RTL_INLINE uint32_t rtl_ring_pop_n_sz(struct rtl_ring *r, void *items, uint32_t max, size_t size)
{
	struct rtl_ring_side *c = &r->cons;
	uint32_t tail = RTL_LOAD(&c->index, relaxed);
	uint32_t k = rtl_ring__cons_avail(r, tail, max);
	unsigned char *dst = (unsigned char *)items;

	if (k > max)
		k = max;
	if (k == 0)
		return 0;
	if (size == c->slot_size) {
		uint32_t idx = tail & c->mask;
		uint32_t first = c->mask + 1 - idx;

		if (first > k)
			first = k;
		memcpy(dst, c->slots + (size_t)idx * size, (size_t)first * size);
		if (RTL_UNLIKELY(k > first))
			memcpy(dst + (size_t)first * size, c->slots, (size_t)(k - first) * size);
	} else {
		for (uint32_t i = 0; i < k; i++)
			memcpy(dst + (size_t)i * size, rtl_ring__slot(c, tail + i), size);
	}
	/* release: our copies out of the k slots complete before the producer
	 * may reuse them. */
	RTL_STORE(&c->index, tail + k, release);
	return k;
}

/* Pop up to @max slot-sized items. Returns the number popped. See
 * rtl_ring_pop_n_sz(). */
RTL_INLINE uint32_t rtl_ring_pop_n(struct rtl_ring *r, void *items, uint32_t max)
{
	return rtl_ring_pop_n_sz(r, items, max, r->cons.slot_size);
}

/*
 * "Take newest", zero-copy: drop every item but the most recent one and
 * return that one in place (NULL when empty); finish with rtl_ring_release().
 * The number dropped is stored in *@skipped (may be NULL) and added to
 * rtl_ring_skipped_count(). Consumer only; RT-safe, wait-free.
 */
RTL_INLINE const void *rtl_ring_peek_newest(struct rtl_ring *r, uint32_t *skipped)
{
	struct rtl_ring_side *c = &r->cons;
	uint32_t tail = RTL_LOAD(&c->index, relaxed);
	/* acquire: always look at the producer's current head (the cached one
	 * may be stale, and "newest" means newest now); pairs with its release
	 * store so the newest slot's contents are visible. */
	uint32_t head = RTL_LOAD(&r->prod.index, acquire);
	uint32_t drop;

	c->limit = head;
	if (head == tail) {
		if (skipped)
			*skipped = 0;
		return NULL;
	}
	drop = head - tail - 1;
	if (drop) {
		/* release: keeps the rule that every tail store is a release,
		 * so the producer's acquire of tail orders after our reads. */
		RTL_STORE(&c->index, head - 1, release);
		rtl_ring__count(c, drop);
	}
	if (skipped)
		*skipped = drop;
	return rtl_ring__slot(c, head - 1);
}

/*
 * "Take newest", copying: copy the most recent item (@size bytes) to @item,
 * drop it and every older one. Returns false when empty; *@skipped as in
 * rtl_ring_peek_newest(). Consumer only; RT-safe, wait-free.
 */
RTL_INLINE bool rtl_ring_pop_newest_sz(struct rtl_ring *r, void *item, size_t size,
				       uint32_t *skipped)
{
	const void *slot = rtl_ring_peek_newest(r, skipped);

	if (!slot)
		return false;
	memcpy(item, slot, size);
	rtl_ring_release(r);
	return true;
}

/* Slot-sized rtl_ring_pop_newest_sz(). Returns true, or false when the ring
 * is empty. */
RTL_INLINE bool rtl_ring_pop_newest(struct rtl_ring *r, void *item, uint32_t *skipped)
{
	return rtl_ring_pop_newest_sz(r, item, r->cons.slot_size, skipped);
}

/* ---- queries (any thread; approximate while the ring is in use) ----------- */

/* Returns the number of slots. */
RTL_INLINE uint32_t rtl_ring_capacity(const struct rtl_ring *r)
{
	return r->prod.mask + 1;
}

/* Returns the size of a slot, in bytes. */
RTL_INLINE size_t rtl_ring_slot_size(const struct rtl_ring *r)
{
	return r->prod.slot_size;
}

/* Returns the number of items in the ring: exact from the producer or consumer thread when the
 * other side is idle; otherwise a value that was true at some instant
 * during the call, never above the capacity. */
RTL_INLINE uint32_t rtl_ring_size(const struct rtl_ring *r)
{
	/* acquire on both, tail first: head only grows and never passes
	 * tail + capacity, so reading tail before head gives a size that is
	 * never negative; the clamp covers tail moving on meanwhile. */
	uint32_t tail = RTL_LOAD(&r->cons.index, acquire);
	uint32_t head = RTL_LOAD(&r->prod.index, acquire);
	uint32_t n = head - tail;

	return n > r->prod.mask + 1 ? r->prod.mask + 1 : n;
}

/* Returns the number of free slots: capacity - size. */
RTL_INLINE uint32_t rtl_ring_free(const struct rtl_ring *r)
{
	return rtl_ring_capacity(r) - rtl_ring_size(r);
}

/* Returns the number of items refused because the ring was full, since
 * init. */
RTL_INLINE uint64_t rtl_ring_full_count(const struct rtl_ring *r)
{
	return RTL_LOAD(&r->prod.counter, relaxed);
}

/* Returns the number of items dropped by the *_newest calls, since init. */
RTL_INLINE uint64_t rtl_ring_skipped_count(const struct rtl_ring *r)
{
	return RTL_LOAD(&r->cons.counter, relaxed);
}

RTL_END_DECLS

#endif /* RTLOOP_RING_H */
