// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the UDP datagrams the loop's side receives
 * (io/udp/udp.c), decoded as io/udp/udp_transport.c decodes them: the
 * handshake reads WELCOME (rtl_udp_decode_header(), then
 * rtl_udp_decode_hello()), the stream reads STATE (the header, then
 * rtl_udp_state_decode() of the payload at the length the header gave),
 * and anything else is counted and dropped. A client that reports the
 * server's ALARMs reads them with rtl_udp_decode_alarm(), which is fed
 * every datagram too. The transport itself is tied to its socket; these
 * are the functions its op_next() and handshake() hand the received bytes
 * to.
 *
 * Input: a sequence of datagrams (fuzz-udp.h). Oracles: documented codes
 * only; an accepted header describes the datagram exactly; the two ways to
 * decode a state agree; a decoded STATE or HELLO/WELCOME encodes back to
 * the same bytes (but for the fields decoding ignores); a decoded ALARM's
 * text is NUL-terminated printable ASCII, and it encodes back to the
 * received bytes with the text sanitised as docs/udp.md 4.5 says (read up
 * to the first NUL or byte 119, '?' for what is not printable), which the
 * harness computes itself.
 */
#include <stdbool.h>

#include "fuzz-udp.h"

/* The ALARM @d (@len bytes) as a receiver must read it, re-encoded: the
 * text up to its first NUL (byte 119 is one), each byte outside 0x20 to
 * 0x7e as '?', NULs after; the reserved u16 as 0. */
static void alarm_expected(const uint8_t *d, size_t len, uint8_t *x)
{
	uint8_t *t = x + RTL_UDP_HEADER_SIZE + 8;
	bool end = false;

	memcpy(x, d, len);
	x[RTL_UDP_HEADER_SIZE + 2] = x[RTL_UDP_HEADER_SIZE + 3] = 0;
	for (int i = 0; i < RTL_UDP_ALARM_TEXT; i++) {
		end |= i == RTL_UDP_ALARM_TEXT - 1 || t[i] == 0;
		t[i] = end ? 0 : t[i] >= 0x20 && t[i] <= 0x7e ? t[i] : '?';
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtl_udp_state *st = malloc(2 * sizeof(*st));
	uint8_t *out = malloc(RTL_UDP_MAX_DATAGRAM);
	uint8_t *want = malloc(RTL_UDP_MAX_DATAGRAM + 1);
	const uint8_t *p = data;
	size_t left = size, len;
	uint8_t *d;

	FUZZ_CHECK(st && out && want);
	while ((d = fuzz_udp_next(&p, &left, &len)) != NULL) {
		struct rtl_udp_header h, h2;
		struct rtl_udp_hello w;
		struct rtl_udp_alarm a;
		int schema_tail[9];
		int r = fuzz_udp_header(d, len, &h);
		int rs = rtl_udp_decode_state(&h2, &st[1], d, len);
		int rh = rtl_udp_decode_hello(NULL, &w, d, len);
		int ra = rtl_udp_decode_alarm(NULL, &a, d, len);

		FUZZ_CHECK(r < 0 ? ra == r : ra == (h.type == RTL_UDP_ALARM ? (int)len : -EPROTO));
		if (r < 0) {
			FUZZ_CHECK(rs == r && rh == r);
		} else if (h.type == RTL_UDP_ALARM) {
			size_t n = strnlen(a.text, sizeof(a.text));

			FUZZ_CHECK(rs == -EPROTO && rh == -EPROTO);
			FUZZ_CHECK(n < sizeof(a.text));
			for (size_t i = 0; i < sizeof(a.text); i++)
				FUZZ_CHECK(i < n ? a.text[i] >= 0x20 && a.text[i] <= 0x7e
						 : a.text[i] == 0);
			FUZZ_CHECK(rtl_udp_encode_alarm(out, RTL_UDP_MAX_DATAGRAM, h.seq, h.send_ns,
							&a) == (int)len);
			alarm_expected(d, len, want);
			fuzz_udp_same(want, out, len, NULL);
		} else if (h.type == RTL_UDP_STATE) {
			FUZZ_CHECK(rtl_udp_state_decode(&st[0], d + RTL_UDP_HEADER_SIZE,
							h.length) == RTL_UDP_STATE_SIZE);
			FUZZ_CHECK(rs == (int)len && rh == -EPROTO);
			FUZZ_CHECK(h2.seq == h.seq && h2.send_ns == h.send_ns);
			FUZZ_CHECK(rtl_udp_encode_state(out, RTL_UDP_MAX_DATAGRAM, h.seq, h.send_ns,
							&st[0]) == (int)len);
			fuzz_udp_same(d, out, len, NULL);
			FUZZ_CHECK(rtl_udp_encode_state(out, RTL_UDP_MAX_DATAGRAM, h.seq, h.send_ns,
							&st[1]) == (int)len);
			fuzz_udp_same(d, out, len, NULL);
		} else if (h.type == RTL_UDP_HELLO || h.type == RTL_UDP_WELCOME) {
			FUZZ_CHECK(rh == (int)len && rs == -EPROTO);
			FUZZ_CHECK(memchr(w.schema, '\0', sizeof(w.schema)));
			FUZZ_CHECK(rtl_udp_encode_hello(out, RTL_UDP_MAX_DATAGRAM,
							(enum rtl_udp_type)h.type, h.seq, h.send_ns,
							&w) == (int)len);
			/* The schema is a C string: what follows its NUL (or its
			 * eighth byte, which decoding makes the NUL) is not read. */
			for (int i = 0; i < 9; i++)
				schema_tail[i] = -1;
			for (size_t i = strlen(w.schema), k = 0; i < sizeof(w.schema); i++)
				schema_tail[k++] = (int)(RTL_UDP_HEADER_SIZE + i);
			fuzz_udp_same(d, out, len, schema_tail);
		} else {
			FUZZ_CHECK(rs == -EPROTO && rh == -EPROTO);
		}
		free(d);
	}
	free(want);
	free(out);
	free(st);
	return 0;
}
