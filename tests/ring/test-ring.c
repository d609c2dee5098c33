// SPDX-License-Identifier: MIT
/*
 * Single-threaded validity of the SPSC ring: every API on its own, the error
 * codes of set-up, and the wrap of the free-running indices. The threaded
 * behaviour is in test-ring-stress.c, the randomised comparison against a
 * model in test-ring-model.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <rtloop/ring.h>

#define CAP 8

static _Alignas(RTL_RING_ALIGN) struct rtl_ring r;
static uint64_t storage[CAP];

static void setup_at(uint32_t start)
{
	memset(storage, 0, sizeof(storage));
	cr_assert_eq(rtl_ring_init_at(&r, storage, CAP, sizeof(uint64_t), start), 0);
}

static void setup(void)
{
	setup_at(0);
}

Test(ring, init_rejects_bad_geometry)
{
	static _Alignas(RTL_RING_ALIGN) struct rtl_ring q[2];
	struct rtl_ring *misaligned = (struct rtl_ring *)(void *)((char *)&q[0] + 8);

	cr_assert_eq(rtl_ring_init(NULL, storage, 8, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], NULL, 8, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, 0, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, 6, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, RTL_RING_MAX_CAPACITY * 2u, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, 8, 0), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, 8, (size_t)UINT32_MAX + 1), -EINVAL);
	cr_assert_eq(rtl_ring_init(misaligned, storage, 8, 8), -EINVAL);
	cr_assert_eq(rtl_ring_init(&q[0], storage, 1, 8), 0, "capacity 1 is a power of two");
}

Test(ring, storage_size_is_capacity_times_slot)
{
	cr_assert_eq(rtl_ring_storage_size(16, 24), 16 * 24);
	cr_assert_eq(rtl_ring_storage_size(12, 24), 0);
	cr_assert_eq(rtl_ring_storage_size(16, 0), 0);
}

Test(ring, control_block_sides_are_cache_line_apart)
{
	cr_assert_geq(offsetof(struct rtl_ring, cons) - offsetof(struct rtl_ring, prod),
		      (size_t)RTL_RING_ALIGN);
	cr_assert_eq(offsetof(struct rtl_ring, prod) % RTL_RING_ALIGN, 0);
	cr_assert_eq(offsetof(struct rtl_ring, cons) % RTL_RING_ALIGN, 0);
}

Test(ring, create_and_destroy)
{
	struct rtl_ring *q = NULL;
	uint64_t v = 42, out = 0;

	cr_assert_eq(rtl_ring_create(&q, 3, 8, NULL), -EINVAL);
	cr_assert_eq(rtl_ring_create(NULL, 4, 8, NULL), -EINVAL);
	cr_assert_eq(rtl_ring_create(&q, 1024, 64, NULL), 0);
	cr_assert_not_null(q);
	cr_assert_eq((uintptr_t)q % RTL_RING_ALIGN, 0);
	cr_assert_eq(rtl_ring_capacity(q), 1024);
	cr_assert_eq(rtl_ring_slot_size(q), 64);
	cr_assert(rtl_ring_push_sz(q, &v, sizeof(v)));
	cr_assert(rtl_ring_pop_sz(q, &out, sizeof(out)));
	cr_assert_eq(out, 42);
	rtl_ring_destroy(q);
	rtl_ring_destroy(NULL);
}

Test(ring, empty_ring_pops_nothing, .init = setup)
{
	uint64_t v = 7;
	uint32_t skipped = 99;

	cr_assert_not(rtl_ring_pop(&r, &v));
	cr_assert_eq(v, 7, "a failed pop must not write the output");
	cr_assert_null(rtl_ring_peek(&r));
	cr_assert_null(rtl_ring_peek_newest(&r, &skipped));
	cr_assert_eq(skipped, 0);
	cr_assert_eq(rtl_ring_pop_n(&r, &v, 1), 0);
	cr_assert_eq(rtl_ring_size(&r), 0);
	cr_assert_eq(rtl_ring_free(&r), CAP);
}

Test(ring, fifo_order_and_full_refusal, .init = setup)
{
	uint64_t v;

	for (uint64_t i = 0; i < CAP; i++) {
		cr_assert(rtl_ring_push(&r, &i), "push %llu", (unsigned long long)i);
		cr_assert_eq(rtl_ring_size(&r), i + 1);
	}
	v = 100;
	cr_assert_not(rtl_ring_push(&r, &v));
	cr_assert_null(rtl_ring_reserve(&r));
	cr_assert_eq(rtl_ring_full_count(&r), 2);
	cr_assert_eq(rtl_ring_free(&r), 0);
	for (uint64_t i = 0; i < CAP; i++) {
		cr_assert(rtl_ring_pop(&r, &v));
		cr_assert_eq(v, i);
	}
	cr_assert_not(rtl_ring_pop(&r, &v));
}

Test(ring, wraps_at_uint32_max)
{
	uint64_t v;
	uint64_t next_in = 0, next_out = 0;

	setup_at(UINT32_MAX - 3);
	/* Cross the 2^32 boundary several times over with a half-full ring. */
	for (int round = 0; round < 40; round++) {
		for (int k = 0; k < 5; k++) {
			cr_assert(rtl_ring_push(&r, &next_in));
			next_in++;
		}
		cr_assert_eq(rtl_ring_size(&r), next_in - next_out);
		for (int k = 0; k < 5; k++) {
			cr_assert(rtl_ring_pop(&r, &v));
			cr_assert_eq(v, next_out);
			next_out++;
		}
	}
	cr_assert_eq(rtl_ring_size(&r), 0);
	cr_assert_eq(rtl_ring_full_count(&r), 0);
}

Test(ring, full_detected_across_the_wrap)
{
	uint64_t v = 0;

	setup_at(UINT32_MAX - 2);
	for (int i = 0; i < CAP; i++)
		cr_assert(rtl_ring_push(&r, &v));
	cr_assert_eq(rtl_ring_size(&r), CAP);
	cr_assert_not(rtl_ring_push(&r, &v), "full ring must refuse after the index wrapped");
}

Test(ring, reserve_commit_is_zero_copy, .init = setup)
{
	uint64_t *slot = rtl_ring_reserve(&r);
	const uint64_t *seen;

	cr_assert_not_null(slot);
	cr_assert_eq(rtl_ring_reserve(&r), slot, "reserve twice without commit: same slot");
	cr_assert((uint64_t *)slot >= storage && (uint64_t *)slot < storage + CAP);
	*slot = 0xfeed;
	cr_assert_eq(rtl_ring_size(&r), 0, "nothing is visible before commit");
	cr_assert_null(rtl_ring_peek(&r));
	rtl_ring_commit(&r);
	seen = rtl_ring_peek(&r);
	cr_assert_eq(seen, slot, "peek returns the very slot that was written");
	cr_assert_eq(*seen, 0xfeed);
	cr_assert_eq(rtl_ring_peek(&r), seen, "peek twice without release: same slot");
	rtl_ring_release(&r);
	cr_assert_eq(rtl_ring_size(&r), 0);
}

Test(ring, batch_push_is_partial_when_nearly_full, .init = setup)
{
	uint64_t in[CAP + 4], out[CAP + 4];

	for (unsigned i = 0; i < CAP + 4; i++)
		in[i] = 1000 + i;
	cr_assert_eq(rtl_ring_push_n(&r, in, 3), 3);
	cr_assert_eq(rtl_ring_push_n(&r, in + 3, CAP), CAP - 3);
	cr_assert_eq(rtl_ring_full_count(&r), 3, "the 3 items that did not fit are counted");
	cr_assert_eq(rtl_ring_pop_n(&r, out, 2), 2);
	cr_assert_eq(out[0], 1000);
	cr_assert_eq(out[1], 1001);
	cr_assert_eq(rtl_ring_pop_n(&r, out, CAP + 4), CAP - 2);
	for (unsigned i = 0; i < CAP - 2; i++)
		cr_assert_eq(out[i], 1002 + i);
}

Test(ring, batch_copies_split_at_the_wrap)
{
	uint64_t in[CAP], out[CAP];

	setup_at(5); /* slot 5: a batch of 6 covers slots 5,6,7,0,1,2 */
	for (unsigned i = 0; i < CAP; i++)
		in[i] = 7 * i + 3;
	cr_assert_eq(rtl_ring_push_n(&r, in, 6), 6);
	cr_assert_eq(storage[0], in[3], "the batch continues at slot 0 after the wrap");
	cr_assert_eq(rtl_ring_pop_n(&r, out, 6), 6);
	cr_assert_arr_eq(out, in, 6 * sizeof(uint64_t))
		;
}

Test(ring, sized_copies_move_only_the_given_bytes)
{
	static _Alignas(RTL_RING_ALIGN) struct rtl_ring q;
	unsigned char st[4 * 16];
	unsigned char item[16], out[16];
	uint32_t skipped;

	memset(st, 0xaa, sizeof(st));
	cr_assert_eq(rtl_ring_init(&q, st, 4, 16), 0);
	memset(item, 0x11, sizeof(item));
	cr_assert(rtl_ring_push_sz(&q, item, 4));
	cr_assert_eq(st[3], 0x11);
	cr_assert_eq(st[4], 0xaa, "bytes past the given size are untouched");
	memset(item, 0x22, sizeof(item));
	cr_assert_eq(rtl_ring_push_n_sz(&q, item, 2, 8), 2);
	cr_assert_eq(st[16 + 7], 0x22);
	cr_assert_eq(st[16 + 8], 0xaa, "a narrow batch copies per item, not contiguously");
	cr_assert_eq(st[32 + 0], 0x22, "the second narrow item starts at its own slot");
	memset(out, 0, sizeof(out));
	cr_assert(rtl_ring_pop_sz(&q, out, 4));
	cr_assert_eq(out[0], 0x11);
	cr_assert_eq(out[4], 0, "pop copies only the given size");
	cr_assert_eq(rtl_ring_pop_n_sz(&q, out, 1, 8), 1);
	cr_assert(rtl_ring_pop_newest_sz(&q, out, 8, &skipped));
	cr_assert_eq(skipped, 0);
}

Test(ring, take_newest_drops_older_items, .init = setup)
{
	uint64_t v;
	uint32_t skipped = 0;
	const uint64_t *p;

	for (uint64_t i = 10; i < 15; i++)
		rtl_ring_push(&r, &i);
	p = rtl_ring_peek_newest(&r, &skipped);
	cr_assert_not_null(p);
	cr_assert_eq(*p, 14);
	cr_assert_eq(skipped, 4);
	cr_assert_eq(rtl_ring_size(&r), 1, "the newest stays until released");
	rtl_ring_release(&r);
	cr_assert_eq(rtl_ring_size(&r), 0);
	cr_assert_eq(rtl_ring_skipped_count(&r), 4);

	v = 20;
	rtl_ring_push(&r, &v);
	cr_assert(rtl_ring_pop_newest(&r, &v, &skipped));
	cr_assert_eq(v, 20);
	cr_assert_eq(skipped, 0);
	cr_assert_eq(rtl_ring_skipped_count(&r), 4, "nothing skipped: count unchanged");
	cr_assert_not(rtl_ring_pop_newest(&r, &v, NULL));
}

Test(ring, take_newest_after_the_wrap)
{
	uint64_t v;
	uint32_t skipped;

	setup_at(UINT32_MAX - 1);
	for (uint64_t i = 0; i < 6; i++)
		rtl_ring_push(&r, &i);
	cr_assert(rtl_ring_pop_newest(&r, &v, &skipped));
	cr_assert_eq(v, 5);
	cr_assert_eq(skipped, 5);
	cr_assert_eq(rtl_ring_size(&r), 0);
	cr_assert(rtl_ring_push(&r, &v));
	cr_assert_eq(rtl_ring_size(&r), 1);
}

Test(ring, pushes_after_full_succeed_once_space_frees, .init = setup)
{
	uint64_t v = 1;

	for (int i = 0; i < CAP; i++)
		rtl_ring_push(&r, &v);
	cr_assert_not(rtl_ring_push(&r, &v));
	cr_assert(rtl_ring_pop(&r, &v));
	cr_assert(rtl_ring_push(&r, &v), "the producer must reload the consumer's index");
	cr_assert_eq(rtl_ring_full_count(&r), 1);
}
