// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the RTDE framer against a one-shot reference.
 *
 * Input: byte 0 seeds the split sizes, bytes 1-2 the configured maximum
 * (big-endian, clamped to [3, 65535]), the rest is the stream. The stream
 * is fed in pseudo-random slices, each in its own heap block (ASan sees any
 * over-read), and every package the framer yields must be exactly the one
 * the reference cuts at the same place; the reference also says where the
 * first bad size is, and the framer must report exactly that offset and
 * value and then refuse input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)              \
	do {                     \
		if (!(cond))     \
			abort(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtl_rtde_framer *f;
	const struct rtl_rtde_framer_error *e;
	const uint8_t *stream, *pkg;
	size_t len, slen, ref = 0, fed = 0;
	uint32_t rng, max;
	size_t bad_at = SIZE_MAX;
	uint32_t bad_value = 0;
	int r = 0;

	if (size < 3)
		return 0;
	rng = 0x9E3779B9u * (data[0] + 1u);
	max = rtl_rtde_load_u16(data + 1);
	if (max < 3)
		max = 3;
	stream = data + 3;
	slen = size - 3;

	/* Reference: where is the first bad header (if its size bytes are in)? */
	for (size_t p = 0; p + 2 <= slen;) {
		uint32_t s = rtl_rtde_load_u16(stream + p);

		if (s < 3 || s > max) {
			bad_at = p;
			bad_value = s;
			break;
		}
		p += s;
	}

	CHECK(rtl_rtde_framer_create(&f, max, NULL) == 0);
	while (fed < slen) {
		size_t n;
		uint8_t *piece;

		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		n = 1 + rng % (rng & 1 ? 4 : 300);
		if (n > slen - fed)
			n = slen - fed;
		piece = malloc(n);
		CHECK(piece);
		memcpy(piece, stream + fed, n);
		r = rtl_rtde_framer_feed(f, piece, n);
		if (r == 0) {
			while ((r = rtl_rtde_framer_next(f, &pkg, &len)) == 1) {
				/* Same cut as the reference, same bytes. */
				CHECK(len >= 3 && len <= max);
				CHECK(rtl_rtde_load_u16(pkg) == len);
				CHECK(ref + len <= slen);
				CHECK(bad_at == SIZE_MAX || ref + len <= bad_at);
				CHECK(memcmp(pkg, stream + ref, len) == 0);
				ref += len;
			}
		}
		free(piece);
		fed += n;
		if (r < 0)
			break;
	}

	e = rtl_rtde_framer_last_error(f);
	if (bad_at != SIZE_MAX) {
		CHECK(r == -EMSGSIZE);
		CHECK(e && e->err.code == -EMSGSIZE);
		CHECK(e->offset == bad_at && e->value == bad_value);
		CHECK(ref == bad_at);
		CHECK(rtl_rtde_framer_next(f, &pkg, &len) == -EMSGSIZE);
		CHECK(rtl_rtde_framer_feed(f, stream, 1) == -EMSGSIZE);
	} else {
		CHECK(r == 0 && e == NULL);
		CHECK(ref + rtl_rtde_framer_pending(f) == slen);
		CHECK(rtl_rtde_framer_offset(f) == slen);
	}
	rtl_rtde_framer_destroy(f);
	return 0;
}
