// SPDX-License-Identifier: MIT
/*
 * Threaded stress of the SPSC ring: one producer and one consumer move at
 * least 10 million sequenced items through a small ring using every
 * operation in a seeded mix; the consumer checks that each item arrives
 * exactly once, in order, untorn. A second test checks that take-newest
 * accounts for every item it drops. Built and run under ThreadSanitizer in
 * CI. Every wait is bounded: a stuck ring fails the test instead of hanging.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include <rtloop/ring.h>
#include <rtloop/time.h>

#define ITEMS 10000000ull
#define CAP 256
#define BATCH 16
#define TIME_LIMIT_NS (240 * RTL_NS_PER_SEC)

struct item {
	uint64_t seq;
	uint64_t check; /* ~seq * K: a torn copy cannot match */
};

#define CHECK(seq) (~((seq)*0x9e3779b97f4a7c15ull))

struct shared {
	struct rtl_ring *r;
	uint64_t items;
	int64_t deadline;
	_Atomic int failed; /* set by either side on time-out */
};

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Back off politely: on two CPUs the other side may share ours. */
static bool backoff(struct shared *sh, unsigned *spins)
{
	if (++*spins % 64 == 0) {
		sched_yield();
		if (rtl_time_now() > sh->deadline) {
			atomic_store(&sh->failed, 1);
			return false;
		}
	}
	return !atomic_load_explicit(&sh->failed, memory_order_relaxed);
}

static void *producer(void *arg)
{
	struct shared *sh = arg;
	struct item batch[BATCH];
	uint64_t seq = 0;
	uint32_t rs = 12345;
	unsigned spins = 0;

	while (seq < sh->items) {
		uint32_t op = xorshift(&rs) % 3;
		bool done;

		if (op == 0) {
			struct item it = { seq, CHECK(seq) };

			done = rtl_ring_push_sz(sh->r, &it, sizeof(it));
			seq += done;
		} else if (op == 1) {
			uint32_t n = xorshift(&rs) % BATCH + 1;

			if (n > sh->items - seq)
				n = (uint32_t)(sh->items - seq);
			for (uint32_t i = 0; i < n; i++)
				batch[i] = (struct item){ seq + i, CHECK(seq + i) };
			n = rtl_ring_push_n_sz(sh->r, batch, n, sizeof(batch[0]));
			seq += n;
			done = n > 0;
		} else {
			struct item *slot = rtl_ring_reserve(sh->r);

			done = slot != NULL;
			if (slot) {
				slot->seq = seq;
				slot->check = CHECK(seq);
				rtl_ring_commit(sh->r);
				seq++;
			}
		}
		if (!done && !backoff(sh, &spins))
			break;
	}
	return NULL;
}

struct verdict {
	uint64_t received;
	uint64_t bad_seq_at; /* first sequence error, or UINT64_MAX */
	uint64_t bad_seq_got;
	uint64_t torn;
};

static bool accept(struct verdict *v, const struct item *it)
{
	if (it->check != CHECK(it->seq))
		v->torn++;
	if (it->seq != v->received) {
		v->bad_seq_at = v->received;
		v->bad_seq_got = it->seq;
		return false;
	}
	v->received++;
	return true;
}

static void consume_all(struct shared *sh, struct verdict *v)
{
	struct item batch[BATCH];
	uint32_t rs = 777;
	unsigned spins = 0;

	v->bad_seq_at = UINT64_MAX;
	while (v->received < sh->items) {
		uint32_t op = xorshift(&rs) % 3;
		bool got = false;

		if (op == 0) {
			struct item it;

			got = rtl_ring_pop_sz(sh->r, &it, sizeof(it));
			if (got && !accept(v, &it))
				return;
		} else if (op == 1) {
			uint32_t n = rtl_ring_pop_n_sz(sh->r, batch, xorshift(&rs) % BATCH + 1,
						       sizeof(batch[0]));

			got = n > 0;
			for (uint32_t i = 0; i < n; i++)
				if (!accept(v, &batch[i]))
					return;
		} else {
			const struct item *it = rtl_ring_peek(sh->r);

			got = it != NULL;
			if (it) {
				struct item copy = *it;

				rtl_ring_release(sh->r);
				if (!accept(v, &copy))
					return;
			}
		}
		if (!got && !backoff(sh, &spins))
			return;
	}
}

Test(ring_stress, ten_million_items_in_order_without_loss)
{
	struct shared sh = { .items = ITEMS };
	struct verdict v = { 0 };
	pthread_t prod;

	cr_assert_eq(rtl_ring_create(&sh.r, CAP, sizeof(struct item), NULL), 0);
	sh.deadline = rtl_time_now() + TIME_LIMIT_NS;
	cr_assert_eq(pthread_create(&prod, NULL, producer, &sh), 0);
	consume_all(&sh, &v);
	atomic_store(&sh.failed, v.received < sh.items);
	pthread_join(prod, NULL);

	cr_expect_eq(v.bad_seq_at, UINT64_MAX, "item %llu arrived where %llu was expected",
		     (unsigned long long)v.bad_seq_got, (unsigned long long)v.bad_seq_at);
	cr_expect_eq(v.torn, 0, "%llu items were torn", (unsigned long long)v.torn);
	cr_expect_eq(v.received, ITEMS, "received %llu of %llu (time limit hit?)",
		     (unsigned long long)v.received, ITEMS);
	cr_expect_eq(rtl_ring_size(sh.r), 0, "nothing is left over or duplicated");
	rtl_ring_destroy(sh.r);
}

Test(ring_stress, take_newest_accounts_for_every_dropped_item)
{
	struct shared sh = { .items = ITEMS / 4 };
	uint64_t taken = 0, skipped_sum = 0, last = 0, gaps_wrong = 0, torn = 0;
	bool first = true;
	unsigned spins = 0;
	pthread_t prod;

	cr_assert_eq(rtl_ring_create(&sh.r, 64, sizeof(struct item), NULL), 0);
	sh.deadline = rtl_time_now() + TIME_LIMIT_NS;
	cr_assert_eq(pthread_create(&prod, NULL, producer, &sh), 0);
	while (last + 1 < sh.items || first) {
		uint32_t skipped;
		const struct item *it = rtl_ring_peek_newest(sh.r, &skipped);

		if (!it) {
			if (!backoff(&sh, &spins))
				break;
			continue;
		}
		struct item copy = *it;

		rtl_ring_release(sh.r);
		torn += copy.check != CHECK(copy.seq);
		/* Everything between the previous newest and this one was
		 * dropped, and the count says exactly that. */
		if (copy.seq != (first ? 0 : last + 1) + skipped)
			gaps_wrong++;
		first = false;
		last = copy.seq;
		taken++;
		skipped_sum += skipped;
	}
	atomic_store(&sh.failed, 1);
	pthread_join(prod, NULL);

	cr_expect_eq(gaps_wrong, 0, "%llu takes reported a wrong skip count",
		     (unsigned long long)gaps_wrong);
	cr_expect_eq(torn, 0);
	cr_expect_eq(last, sh.items - 1, "the very last item is taken");
	cr_expect_eq(taken + skipped_sum, sh.items, "taken + skipped == produced");
	cr_expect_eq(rtl_ring_skipped_count(sh.r), skipped_sum);
	rtl_ring_destroy(sh.r);
}
