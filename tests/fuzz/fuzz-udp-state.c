// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the UDP datagrams the loop's side receives
 * (io/udp/udp.c), decoded as io/udp/udp_transport.c decodes them: the
 * handshake reads WELCOME (rtl_udp_decode_header(), then
 * rtl_udp_decode_hello()), the stream reads STATE (the header, then
 * rtl_udp_state_decode() of the payload at the length the header gave),
 * and anything else is counted and dropped. The transport itself is tied
 * to its socket; these are the functions its op_next() and handshake()
 * hand the received bytes to.
 *
 * Input: a sequence of datagrams (fuzz-udp.h). Oracles: documented codes
 * only; an accepted header describes the datagram exactly; the two ways to
 * decode a state agree; a decoded STATE or HELLO/WELCOME encodes back to
 * the same bytes (but for the fields decoding ignores); the sequence
 * numbers the stream would hand on are the ones received.
 */
#include <stdbool.h>

#include "fuzz-udp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtl_udp_state *st = malloc(2 * sizeof(*st));
	uint8_t *out = malloc(RTL_UDP_MAX_DATAGRAM);
	const uint8_t *p = data;
	size_t left = size, len;
	uint8_t *d;

	FUZZ_CHECK(st && out);
	while ((d = fuzz_udp_next(&p, &left, &len)) != NULL) {
		struct rtl_udp_header h, h2;
		struct rtl_udp_hello w;
		int schema_tail[9];
		int r = fuzz_udp_header(d, len, &h);
		int rs = rtl_udp_decode_state(d, len, &h2, &st[1]);
		int rh = rtl_udp_decode_hello(d, len, NULL, &w);

		if (r < 0) {
			FUZZ_CHECK(rs == r && rh == r);
		} else if (h.type == RTL_UDP_STATE) {
			FUZZ_CHECK(rtl_udp_state_decode(d + RTL_UDP_HEADER_SIZE, h.length,
							&st[0]) == RTL_UDP_STATE_SIZE);
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
	free(out);
	free(st);
	return 0;
}
