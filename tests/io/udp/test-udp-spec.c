// SPDX-License-Identifier: MIT
/*
 * The byte vectors of docs/udp.md against rtloop's codec (io/udp/udp.c).
 * The vectors, their fields and the state table are read from the page at
 * build time (udp-spec-extract.py, udp-spec.h), so what is tested is what a
 * reader of the page implements: each vector decodes to the fields written
 * next to it and encodes back to its bytes, each rejected one gives its
 * documented error, and the page's state table is the codec's layout. A
 * positive control shows that a changed byte is caught.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/udp.h>

#include "udp-spec.h"

static uint8_t out[RTL_UDP_MAX_DATAGRAM + 64];
static struct udp_spec_msg want, got;
static char why[256];

static void fields_of(const struct udp_spec_vector *v, struct udp_spec_msg *m)
{
	cr_assert_eq(udp_spec_fields(v, m, why, sizeof(why)), 0, "%s", why);
}

Test(udp_spec, the_page_has_a_vector_of_every_message_type_and_rejection)
{
	static const char *const errors[] = { "EMSGSIZE", "EBADMSG", "EPROTONOSUPPORT", "EPROTO",
					      "EDOM" };
	bool type_seen[8] = { false }, mode_seen[RTL_UDP_MODE_COUNT] = { false };
	bool error_seen[5] = { false }, einval = false;
	size_t n;
	const struct udp_spec_vector *v = udp_spec_vectors(&n);

	for (size_t i = 0; i < n; i++) {
		fields_of(&v[i], &want);
		if (!v[i].decode[0] && want.type < 8)
			type_seen[want.type] = true;
		if (!v[i].decode[0] && !v[i].encode[0] && want.type == RTL_UDP_COMMAND)
			mode_seen[want.cmd.mode] = true;
		for (int e = 0; e < 5; e++)
			error_seen[e] |= strcmp(v[i].decode, errors[e]) == 0;
		einval |= strcmp(v[i].encode, "EINVAL") == 0;
	}
	for (unsigned t = RTL_UDP_HELLO; t <= RTL_UDP_LIMITS; t++)
		cr_expect(type_seen[t], "no vector of a %s",
			  rtl_udp_type_name((enum rtl_udp_type)t));
	for (unsigned m = RTL_UDP_MODE_SPEEDJ; m <= RTL_UDP_MODE_STOP; m++)
		cr_expect(mode_seen[m], "no COMMAND vector of mode %s",
			  rtl_udp_mode_name((enum rtl_udp_mode)m));
	for (int e = 0; e < 5; e++)
		cr_expect(error_seen[e], "no rejected vector with %s", errors[e]);
	cr_expect(einval, "no vector that a sender refuses to encode");
}

Test(udp_spec, every_vector_decodes_to_the_fields_written_next_to_it)
{
	size_t n, checked = 0;
	const struct udp_spec_vector *v = udp_spec_vectors(&n);

	for (size_t i = 0; i < n; i++) {
		int r;

		if (v[i].decode[0])
			continue;
		fields_of(&v[i], &want);
		r = udp_spec_decode(v[i].bytes, v[i].len, want.type, &got);
		cr_expect_eq(r, (int)v[i].len, "docs/udp.md:%u: %s: decoding returns %d", v[i].line,
			     v[i].name, r);
		if (r < 0)
			continue;
		cr_expect(want.has_header, "docs/udp.md:%u: %s: no seq and send_ns", v[i].line,
			  v[i].name);
		cr_expect(udp_spec_same(&want, &got, why, sizeof(why)), "docs/udp.md:%u: %s: %s",
			  v[i].line, v[i].name, why);
		checked++;
	}
	cr_expect_gt(checked, 15);
}

Test(udp_spec, every_vector_encodes_back_to_its_bytes_or_is_refused)
{
	size_t n, checked = 0;
	const struct udp_spec_vector *v = udp_spec_vectors(&n);

	for (size_t i = 0; i < n; i++) {
		int r;

		if (v[i].decode[0] || strcmp(v[i].encode, "none") == 0)
			continue;
		fields_of(&v[i], &want);
		memset(out, 0xa5, sizeof(out));
		r = udp_spec_encode(&want, out, sizeof(out));
		if (strcmp(v[i].encode, "EINVAL") == 0) {
			cr_expect_eq(r, -EINVAL, "docs/udp.md:%u: %s: the encoder returns %d",
				     v[i].line, v[i].name, r);
			continue;
		}
		cr_expect_eq(r, (int)v[i].len, "docs/udp.md:%u: %s: %d bytes encoded", v[i].line,
			     v[i].name, r);
		if (r != (int)v[i].len)
			continue;
		for (size_t b = 0; b < v[i].len; b++)
			if (out[b] != v[i].bytes[b]) {
				cr_expect_fail("docs/udp.md:%u: %s: byte %04zx is %02x, the page "
					       "says %02x",
					       v[i].line, v[i].name, b, out[b], v[i].bytes[b]);
				break;
			}
		checked++;
	}
	cr_expect_gt(checked, 15);
}

Test(udp_spec, rejected_vectors_give_the_documented_error)
{
	size_t n, checked = 0;
	const struct udp_spec_vector *v = udp_spec_vectors(&n);
	struct rtl_udp_header h;

	for (size_t i = 0; i < n; i++) {
		int code = udp_spec_errno(v[i].decode), r, rh;

		if (!v[i].decode[0])
			continue;
		cr_assert_neq(code, 0, "%s: %s", v[i].name, v[i].decode);
		fields_of(&v[i], &want);
		r = udp_spec_decode(v[i].bytes, v[i].len, want.type, &got);
		cr_expect_eq(r, -code, "docs/udp.md:%u: %s: %d, not -%s", v[i].line, v[i].name, r,
			     v[i].decode);
		/* The header's own checks give the same code, or accept a
		 * header whose payload is the problem (mode, limits). */
		rh = rtl_udp_decode_header(&h, v[i].bytes, v[i].len);
		cr_expect(rh == -code || rh == RTL_UDP_HEADER_SIZE,
			  "docs/udp.md:%u: %s: rtl_udp_decode_header() returns %d", v[i].line,
			  v[i].name, rh);
		checked++;
	}
	cr_expect_geq(checked, 8);
}

Test(udp_spec, the_state_table_of_the_page_is_the_codec_layout)
{
	static const struct {
		const char *name;
		enum rtl_udp_elem type;
	} types[] = { { "f64", RTL_UDP_F64 },
		      { "f32", RTL_UDP_F32 },
		      { "u8", RTL_UDP_U8 },
		      { "u16", RTL_UDP_U16 },
		      { "u32", RTL_UDP_U32 } };
	size_t n, nf, total = 0;
	const struct udp_spec_row *r = udp_spec_rows(&n);
	const struct rtl_udp_field *f = rtl_udp_state_fields(&nf);

	cr_assert_eq(n, nf, "the page has %zu rows, the codec %zu", n, nf);
	for (size_t i = 0; i < n; i++) {
		char base[8] = "";
		unsigned d0 = 1, d1 = 1, count;
		int dims = sscanf(r[i].type, "%7[a-z0-9][%u][%u]", base, &d0, &d1);
		bool known = false;

		cr_expect_str_eq(r[i].name, f[i].name, "docs/udp.md:%u", r[i].line);
		cr_expect_eq(r[i].offset, f[i].offset, "docs/udp.md:%u: %s at %u, the codec %u",
			     r[i].line, r[i].name, r[i].offset, f[i].offset);
		cr_expect_eq(r[i].bytes, f[i].size, "docs/udp.md:%u: %s", r[i].line, r[i].name);
		cr_expect_eq(r[i].offset, total, "docs/udp.md:%u: %s does not follow the row above",
			     r[i].line, r[i].name);
		total += r[i].bytes;
		cr_expect_geq(dims, 1, "docs/udp.md:%u: type %s", r[i].line, r[i].type);
		count = dims == 1 ? 1 : dims == 2 ? d0 : d0 * d1;
		cr_expect_eq(count, f[i].count, "docs/udp.md:%u: %s has %u elements, the codec %u",
			     r[i].line, r[i].name, count, f[i].count);
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			if (strcmp(base, types[t].name) == 0) {
				known = true;
				cr_expect_eq(types[t].type, f[i].type, "docs/udp.md:%u: %s is %s",
					     r[i].line, r[i].name, r[i].type);
			}
		cr_expect(known, "docs/udp.md:%u: type %s", r[i].line, r[i].type);
	}
	cr_expect_eq(total, RTL_UDP_STATE_SIZE);
}

/* Positive control: the comparisons above see one changed byte anywhere in a
 * vector, whichever of decode and encode notices it. */
Test(udp_spec, a_changed_byte_is_caught)
{
	const struct udp_spec_vector *names[] = { udp_spec_vector("hello-basic"),
						  udp_spec_vector("command-speedl"),
						  udp_spec_vector("limits-basic") };
	static uint8_t b[RTL_UDP_MAX_DATAGRAM];

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const struct udp_spec_vector *v = names[k];

		cr_assert_not_null(v);
		fields_of(v, &want);
		for (size_t i = 0; i < v->len; i++) {
			bool caught;
			int r;

			memcpy(b, v->bytes, v->len);
			b[i] ^= 0x10;
			r = udp_spec_decode(b, v->len, want.type, &got);
			caught = r < 0 || !udp_spec_same(&want, &got, why, sizeof(why));
			if (!caught) {
				/* Decoding ignores it (flags, reserved): the encoder
				 * writes the page's byte back, so the bytes differ. */
				cr_assert_eq(udp_spec_encode(&want, out, sizeof(out)), (int)v->len);
				caught = memcmp(out, b, v->len) != 0;
			}
			cr_expect(caught, "%s: byte %zu changed, nothing noticed", v->name, i);
		}
	}
}
