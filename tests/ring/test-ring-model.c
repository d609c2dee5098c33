// SPDX-License-Identifier: MIT
/*
 * Every ring API against a simple model: a plain array queue that cannot be
 * wrong. A seeded random sequence of operations runs on both, across slot
 * sizes, capacities and start indices (including just below UINT32_MAX), and
 * every result, item and counter must agree.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include <rtloop/ring.h>

#define MAXCAP 64
#define MAXSLOT 40
#define MAXBATCH 80

struct model {
	unsigned char items[MAXCAP * 8][MAXSLOT]; /* generous: never wraps here */
	size_t head, tail;
	uint32_t cap;
	uint64_t full, skipped;
};

static size_t model_size(const struct model *m)
{
	return m->head - m->tail;
}

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64*: a fixed-seed generator, reproducible everywhere. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

static void fill(unsigned char *p, size_t size, uint32_t seq)
{
	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)(seq * 31 + i);
}

/* Keep the model's window small by sliding it down when it drifts. */
static void model_compact(struct model *m)
{
	if (m->tail > MAXCAP * 4) {
		size_t n = model_size(m);

		memmove(m->items, m->items[m->tail], n * MAXSLOT);
		m->tail = 0;
		m->head = n;
	}
}

static void run_model(uint32_t cap, uint32_t slot, uint32_t start, uint64_t seed)
{
	static _Alignas(RTL_RING_ALIGN) struct rtl_ring r;
	static unsigned char storage[MAXCAP * MAXSLOT];
	static struct model m;
	unsigned char buf[MAXBATCH * MAXSLOT];
	uint32_t seq = 0;

	memset(&m, 0, sizeof(m));
	m.cap = cap;
	rng_state = seed;
	cr_assert_eq(rtl_ring_init_at(&r, storage, cap, slot, start), 0);

	for (int step = 0; step < 20000; step++) {
		uint32_t op = rnd(10);

		model_compact(&m);
		if (op == 0) { /* push one */
			fill(buf, slot, seq);
			bool ok = rtl_ring_push(&r, buf);
			bool want = model_size(&m) < cap;
			cr_assert_eq(ok, want, "step %d push", step);
			if (want) {
				memcpy(m.items[m.head++], buf, slot);
				seq++;
			} else {
				m.full++;
			}
		} else if (op == 1) { /* pop one */
			bool ok = rtl_ring_pop(&r, buf);
			cr_assert_eq(ok, model_size(&m) > 0, "step %d pop", step);
			if (ok)
				cr_assert_arr_eq(buf, m.items[m.tail++], slot, "step %d pop", step)
					;
		} else if (op == 2 || op == 3) { /* push batch */
			uint32_t n = rnd(cap + 8) + 1;
			uint32_t room = cap - (uint32_t)model_size(&m);
			uint32_t want = n < room ? n : room;

			for (uint32_t i = 0; i < n; i++)
				fill(buf + (size_t)i * slot, slot, seq + i);
			cr_assert_eq(rtl_ring_push_n(&r, buf, n), want, "step %d push_n", step);
			for (uint32_t i = 0; i < want; i++)
				memcpy(m.items[m.head++], buf + (size_t)i * slot, slot);
			seq += want;
			m.full += n - want;
		} else if (op == 4 || op == 5) { /* pop batch */
			uint32_t n = rnd(cap + 8) + 1;
			uint32_t have = (uint32_t)model_size(&m);
			uint32_t want = n < have ? n : have;

			cr_assert_eq(rtl_ring_pop_n(&r, buf, n), want, "step %d pop_n", step);
			for (uint32_t i = 0; i < want; i++)
				cr_assert_arr_eq(buf + (size_t)i * slot, m.items[m.tail++], slot)
					;
		} else if (op == 6) { /* reserve/commit */
			unsigned char *p = rtl_ring_reserve(&r);

			cr_assert_eq(p != NULL, model_size(&m) < cap, "step %d reserve", step);
			if (p) {
				fill(p, slot, seq);
				memcpy(m.items[m.head++], p, slot);
				seq++;
				rtl_ring_commit(&r);
			} else {
				m.full++;
			}
		} else if (op == 7) { /* peek/release */
			const unsigned char *p = rtl_ring_peek(&r);

			cr_assert_eq(p != NULL, model_size(&m) > 0, "step %d peek", step);
			if (p) {
				cr_assert_arr_eq(p, m.items[m.tail++], slot)
					;
				rtl_ring_release(&r);
			}
		} else if (op == 8 && rnd(4) == 0) { /* take newest (rarely: it drains) */
			uint32_t skipped = 1234;
			bool ok = rtl_ring_pop_newest(&r, buf, &skipped);

			cr_assert_eq(ok, model_size(&m) > 0);
			if (ok) {
				cr_assert_eq(skipped, model_size(&m) - 1);
				cr_assert_arr_eq(buf, m.items[m.head - 1], slot)
					;
				m.skipped += skipped;
				m.tail = m.head;
			} else {
				cr_assert_eq(skipped, 0);
			}
		} else { /* queries */
			cr_assert_eq(rtl_ring_size(&r), model_size(&m), "step %d size", step);
			cr_assert_eq(rtl_ring_free(&r), cap - model_size(&m));
		}
		cr_assert_eq(rtl_ring_full_count(&r), m.full, "step %d full count", step);
		cr_assert_eq(rtl_ring_skipped_count(&r), m.skipped);
	}
}

Test(ring_model, every_api_matches_the_model)
{
	static const uint32_t caps[] = { 1, 2, 8, 64 };
	static const uint32_t slots[] = { 1, 8, 24, 40 };
	static const uint32_t starts[] = { 0, UINT32_MAX - 5, UINT32_MAX / 2 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (unsigned c = 0; c < 4; c++)
		for (unsigned s = 0; s < 4; s++)
			for (unsigned i = 0; i < 3; i++)
				run_model(caps[c], slots[s], starts[i], seed++);
}
