// SPDX-License-Identifier: MIT
/*
 * RTDE framer: the same stream, fed in every slicing (all at once, one byte
 * at a time, random splits with fixed seeds), yields the same packages; bad
 * sizes stop the framer at a named offset until reset.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>

#include "alloc-count.h"
#include "test-rtde-vectors.h"

/* ---- a reference stream ------------------------------------------------ */

struct stream {
	uint8_t *bytes;
	size_t len;
	size_t starts[256]; /* offset of each package */
	size_t count;
};

static void add(struct stream *s, const uint8_t *pkg, size_t len)
{
	s->bytes = realloc(s->bytes, s->len + len);
	cr_assert_not_null(s->bytes);
	memcpy(s->bytes + s->len, pkg, len);
	cr_assert_lt(s->count, 256);
	s->starts[s->count++] = s->len;
	s->len += len;
}

/* All section-7 vectors, a package of the maximum size, empty ones, twice. */
static struct stream make_stream(size_t big)
{
	struct stream s = { 0 };
	uint8_t *pkg = malloc(big);

	cr_assert_not_null(pkg);
	for (size_t i = 0; i < big; i++)
		pkg[i] = (uint8_t)(i * 7);
	rtl_rtde_store_u16(pkg, (uint16_t)big);
	pkg[2] = RTL_RTDE_PKG_DATA;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
			add(&s, rtde_vectors[i].bytes, rtde_vectors[i].len);
			if (i % 9 == 0)
				add(&s, vec_s_req, sizeof(vec_s_req));
		}
		add(&s, pkg, big);
		add(&s, vec_p_req, sizeof(vec_p_req));
	}
	free(pkg);
	return s;
}

/* Deterministic xorshift, so a failing split can be replayed. */
static uint32_t next_rand(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/*
 * Feed @s in chunks chosen by @chunk (0 = all at once, else random sizes in
 * [1, chunk], or exactly 1 when chunk == 1) and check every package.
 */
static void feed_and_check(const struct stream *s, size_t max_size, size_t chunk, uint32_t seed)
{
	struct rtl_rtde_framer *f;
	size_t pos = 0, got = 0;
	uint32_t rng = seed;

	cr_assert_eq(rtl_rtde_framer_create(&f, max_size, NULL), 0);
	while (pos < s->len) {
		size_t n = s->len - pos;
		const uint8_t *pkg;
		uint8_t *piece;
		size_t len;
		int r;

		if (chunk == 1)
			n = 1;
		else if (chunk > 1 && n > 1)
			n = 1 + next_rand(&rng) % (chunk < n ? chunk : n);
		/* Each chunk in its own heap block: ASan sees any over-read. */
		piece = malloc(n);
		cr_assert_not_null(piece);
		memcpy(piece, s->bytes + pos, n);
		cr_assert_eq(rtl_rtde_framer_feed(f, piece, n), 0);
		while ((r = rtl_rtde_framer_next(f, &pkg, &len)) == 1) {
			size_t start = s->starts[got];
			size_t want = (got + 1 < s->count ? s->starts[got + 1] : s->len) - start;

			cr_assert_lt(got, s->count, "more packages than sent");
			cr_assert_eq(len, want, "package %zu: %zu bytes, want %zu (chunk %zu)", got,
				     len, want, chunk);
			cr_assert_eq(memcmp(pkg, s->bytes + start, len), 0, "package %zu differs",
				     got);
			got++;
		}
		cr_assert_eq(r, 0, "next returned %d", r);
		free(piece);
		pos += n;
		cr_assert_eq(rtl_rtde_framer_offset(f), pos);
	}
	cr_assert_eq(got, s->count);
	cr_assert_eq(rtl_rtde_framer_pending(f), 0);
	cr_assert_null(rtl_rtde_framer_last_error(f));
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, yields_every_package_when_fed_all_at_once)
{
	struct stream s = make_stream(RTL_RTDE_MAX_PACKAGE_SIZE);

	feed_and_check(&s, RTL_RTDE_MAX_PACKAGE_SIZE, 0, 0);
	free(s.bytes);
}

Test(rtde_framer, yields_the_same_packages_fed_one_byte_at_a_time)
{
	struct stream s = make_stream(RTL_RTDE_MAX_PACKAGE_SIZE);

	feed_and_check(&s, RTL_RTDE_MAX_PACKAGE_SIZE, 1, 0);
	free(s.bytes);
}

Test(rtde_framer, yields_the_same_packages_for_random_splits)
{
	static const size_t chunks[] = { 2, 3, 5, 17, 64, 200, 4096, 70000 };
	struct stream s = make_stream(RTL_RTDE_MAX_PACKAGE_SIZE);

	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		for (uint32_t seed = 1; seed <= 8; seed++)
			feed_and_check(&s, RTL_RTDE_MAX_PACKAGE_SIZE, chunks[c],
				       seed * 2654435761u);
	free(s.bytes);
}

Test(rtde_framer, works_with_a_small_configured_maximum)
{
	/* The largest section-7 vector is 89 bytes. */
	struct stream s = make_stream(100);

	feed_and_check(&s, 100, 0, 0);
	feed_and_check(&s, 100, 1, 0);
	feed_and_check(&s, 100, 7, 42);
	free(s.bytes);
}

Test(rtde_framer, returns_whole_packages_in_place_and_copies_only_straddlers)
{
	struct rtl_rtde_framer *f;
	uint8_t in[sizeof(vec_v_req_v2) + sizeof(vec_s_req)];
	const uint8_t *pkg, *part;
	size_t len, part_len;

	memcpy(in, vec_v_req_v2, sizeof(vec_v_req_v2));
	memcpy(in + sizeof(vec_v_req_v2), vec_s_req, sizeof(vec_s_req));
	cr_assert_eq(rtl_rtde_framer_create(&f, 64, NULL), 0);

	/* Whole packages: pointers into the fed bytes. */
	cr_assert_eq(rtl_rtde_framer_feed(f, in, sizeof(in)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(pkg, in);
	cr_assert_eq(len, 5);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(pkg, in + 5);
	cr_assert_eq(len, 3);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_null(rtl_rtde_framer_partial(f, &part_len));
	cr_assert_eq(part_len, 0);

	/* A package split over two feeds: assembled in the framer's storage,
	 * where the partial bytes were (header first). */
	cr_assert_eq(rtl_rtde_framer_feed(f, in, 2), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_pending(f), 2);
	part = rtl_rtde_framer_partial(f, &part_len);
	cr_assert_not_null(part);
	cr_assert_eq(part_len, 2);
	cr_assert_neq(part, in, "partial bytes are the framer's copy");
	cr_assert_eq(memcmp(part, vec_v_req_v2, 2), 0);
	cr_assert_eq(rtl_rtde_framer_partial(f, NULL), part);
	cr_assert_eq(rtl_rtde_framer_feed(f, in + 2, 6), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(pkg, part);
	cr_assert_eq(memcmp(pkg, vec_v_req_v2, 5), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(pkg, in + 5);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_offset(f), 16);
	cr_assert_null(rtl_rtde_framer_partial(f, &part_len));
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, accepts_exactly_the_configured_maximum)
{
	struct rtl_rtde_framer *f;
	uint8_t pkg[40] = { 0x00, 40, 0x55, 0x01 };
	const uint8_t *out;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 40, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, pkg, sizeof(pkg)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &out, &len), 1);
	cr_assert_eq(len, 40);
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, size_below_three_is_an_error_naming_offset_and_value)
{
	struct rtl_rtde_framer *f;
	uint8_t stream[5 + 3 + 3];
	const struct rtl_rtde_framer_error *e;
	const uint8_t *pkg;
	size_t len;

	memcpy(stream, vec_v_req_v2, 5);
	memcpy(stream + 5, vec_s_req, 3);
	memcpy(stream + 8, "\x00\x02\x53", 3);
	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, stream, sizeof(stream)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), -EMSGSIZE);
	e = rtl_rtde_framer_last_error(f);
	cr_assert_not_null(e);
	cr_assert_eq(e->err.code, -EMSGSIZE);
	cr_assert_eq(e->offset, 8);
	cr_assert_eq(e->value, 2);
	cr_assert_eq(e->limit, 3);
	cr_assert_str_eq(e->err.msg, "RTDE framer: package at stream offset 8 declares size 2 "
				     "(minimum 3); the stream is not RTDE or is out of sync: "
				     "reconnect");
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, size_above_the_maximum_is_an_error_before_the_body_arrives)
{
	struct rtl_rtde_framer *f;
	const struct rtl_rtde_framer_error *e;
	const uint8_t *pkg;
	size_t len;
	/* One package of 1234 bytes, then a header declaring 4097. */
	static uint8_t stream[1234 + 3];

	memset(stream, 0, sizeof(stream));
	rtl_rtde_store_u16(stream, 1234);
	stream[2] = RTL_RTDE_PKG_DATA;
	rtl_rtde_store_u16(stream + 1234, 4097);
	stream[1236] = RTL_RTDE_PKG_DATA;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, stream, sizeof(stream)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(len, 1234);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), -EMSGSIZE);
	e = rtl_rtde_framer_last_error(f);
	cr_assert_not_null(e);
	cr_assert_eq(e->offset, 1234);
	cr_assert_eq(e->value, 4097);
	cr_assert_eq(e->limit, 4096);
	cr_assert_str_eq(e->err.msg, "RTDE framer: package at stream offset 1234 declares size "
				     "4097 (maximum 4096); the stream is not RTDE or is out of "
				     "sync: reconnect");
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, bad_header_split_over_feeds_names_the_package_start)
{
	struct rtl_rtde_framer *f;
	static const uint8_t stream[] = { 0x00, 0x03, 0x53, 0x00, 0x04, 0x53, 0x01, 0x00, 0x00 };
	const struct rtl_rtde_framer_error *e;
	const uint8_t *pkg;
	size_t len;
	int r = 0, packages = 0;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	for (size_t i = 0; i < sizeof(stream) && r >= 0; i++) {
		cr_assert_eq(rtl_rtde_framer_feed(f, stream + i, 1), 0);
		while ((r = rtl_rtde_framer_next(f, &pkg, &len)) == 1)
			packages++;
	}
	cr_assert_eq(packages, 2);
	cr_assert_eq(r, -EMSGSIZE);
	e = rtl_rtde_framer_last_error(f);
	cr_assert_not_null(e);
	cr_assert_eq(e->offset, 7);
	cr_assert_eq(e->value, 0);
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, refuses_all_input_after_an_error_until_reset)
{
	struct rtl_rtde_framer *f;
	static const uint8_t bad[] = { 0x00, 0x01, 0x53, 0x00, 0x03, 0x53 };
	const uint8_t *pkg;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, bad, sizeof(bad)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), -EMSGSIZE);
	/* The valid START after the bad header is never returned. */
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), -EMSGSIZE);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_s_req, sizeof(vec_s_req)), -EMSGSIZE);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), -EMSGSIZE);
	cr_assert_not_null(rtl_rtde_framer_last_error(f));

	rtl_rtde_framer_reset(f);
	cr_assert_null(rtl_rtde_framer_last_error(f));
	cr_assert_eq(rtl_rtde_framer_offset(f), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_s_req, sizeof(vec_s_req)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(len, 3);
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, feeding_before_the_previous_feed_is_consumed_is_ebusy)
{
	struct rtl_rtde_framer *f;
	const uint8_t *pkg;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_m_v2, sizeof(vec_m_v2)), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_s_req, sizeof(vec_s_req)), -EBUSY);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_s_req, sizeof(vec_s_req)), 0);
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, empty_feeds_and_empty_framers_yield_nothing)
{
	struct rtl_rtde_framer *f;
	const uint8_t *pkg;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, NULL, 0), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_pending(f), 0);
	cr_assert_eq(rtl_rtde_framer_offset(f), 0);
	cr_assert_null(rtl_rtde_framer_partial(f, NULL));
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, pending_reports_a_truncated_tail)
{
	struct rtl_rtde_framer *f;
	const uint8_t *pkg;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_m_v2, 50), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 0);
	cr_assert_eq(rtl_rtde_framer_pending(f), 50);
	cr_assert_eq(rtl_rtde_framer_offset(f), 50);
	rtl_rtde_framer_destroy(f);
}

Test(rtde_framer, create_rejects_bad_arguments_and_clears_out)
{
	/* Not a framer: create must overwrite it, also when it fails. */
	struct rtl_rtde_framer *const junk = (struct rtl_rtde_framer *)(uintptr_t)1;
	static const size_t bad[] = { 0, 2, RTL_RTDE_MAX_PACKAGE_SIZE + 1, SIZE_MAX };
	struct rtl_rtde_framer *f;

	cr_assert_eq(rtl_rtde_framer_create(NULL, 64, NULL), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = junk;
		cr_assert_eq(rtl_rtde_framer_create(&f, bad[i], NULL), -EINVAL, "max_size %zu",
			     bad[i]);
		cr_assert_null(f, "*out is NULL on failure (max_size %zu)", bad[i]);
	}
	f = junk;
	cr_assert_eq(rtl_rtde_framer_create(&f, RTL_RTDE_MAX_PACKAGE_SIZE, NULL), 0);
	cr_assert_neq(f, junk);
	cr_assert_not_null(f);
	rtl_rtde_framer_destroy(f);
	rtl_rtde_framer_destroy(NULL);
	cr_assert_null(rtl_rtde_framer_partial(NULL, NULL));
}

Test(rtde_framer, feed_and_next_reject_bad_arguments)
{
	struct rtl_rtde_framer *f;
	const uint8_t *pkg;
	size_t len;

	cr_assert_eq(rtl_rtde_framer_create(&f, 3, NULL), 0);
	cr_assert_eq(rtl_rtde_framer_feed(NULL, vec_s_req, 3), -EINVAL);
	cr_assert_eq(rtl_rtde_framer_feed(f, NULL, 3), -EINVAL);
	cr_assert_eq(rtl_rtde_framer_next(NULL, &pkg, &len), -EINVAL);
	cr_assert_eq(rtl_rtde_framer_next(f, NULL, &len), -EINVAL);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, NULL), -EINVAL);
	/* The smallest maximum still frames a header-only package. */
	cr_assert_eq(rtl_rtde_framer_feed(f, vec_s_req, sizeof(vec_s_req)), 0);
	cr_assert_eq(rtl_rtde_framer_next(f, &pkg, &len), 1);
	cr_assert_eq(len, 3);
	rtl_rtde_framer_destroy(f);
}

/* ---- RT safety: the hot path does not allocate ----------------------- */

/* Counted on this thread (tests/common/alloc-count.h), after a positive
 * control. */
Test(rtde_framer, framing_and_decoding_do_not_allocate)
{
	struct stream s = make_stream(3000);
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_VECTOR6D };
	union rtl_rtde_value v[2];
	struct rtl_rtde_framer *f;
	struct rtl_rtde_msg msg;
	const uint8_t *pkg;
	size_t len;
	long allocs;
	static uint8_t out[4096];
	int decoded = 0;

	cr_assert_eq(rtl_rtde_framer_create(&f, 4096, NULL), 0);
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");
	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (size_t pos = 0; pos < s.len; pos += 7) {
		size_t n = s.len - pos < 7 ? s.len - pos : 7;

		rtl_rtde_framer_feed(f, s.bytes + pos, n);
		while (rtl_rtde_framer_next(f, &pkg, &len) == 1) {
			if (rtl_rtde_decode(&msg, pkg, len, 2, RTL_RTDE_FROM_CONTROLLER) == 0) {
				decoded++;
				rtl_rtde_encode(out, sizeof(out), 2, &msg);
			}
		}
	}
	rtl_rtde_unpack(v, vec_u_q_v2 + 4, 56, types, 2);
	rtl_rtde_pack(out, sizeof(out), types, 2, v);
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_eq(allocs, 0, "%ld allocations on the hot path", allocs);
	cr_assert_gt(decoded, 10);
	rtl_rtde_framer_destroy(f);
	free(s.bytes);
}
