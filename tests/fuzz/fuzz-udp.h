/* SPDX-License-Identifier: MIT */
/*
 * What the two UDP harnesses share: the input as a sequence of datagrams,
 * and the header checks.
 *
 * Input layout: each datagram is a little-endian u16 length and that many
 * bytes (the last one cut to what is left). A datagram longer than a
 * receive buffer holds is cut as recvmsg(2) cuts it: to one byte more than
 * the largest valid datagram, as io/udp/udp_transport.c sizes its buffer,
 * so "too long" stays visible. Each datagram is decoded from a heap block
 * of exactly its length.
 */
#ifndef RTL_FUZZ_UDP_H
#define RTL_FUZZ_UDP_H

#include <errno.h>

#include <rtloop/udp.h>

#include "fuzz-common.h"

/* The next datagram as a fresh heap copy (free() it) and *@len, or NULL. */
static inline uint8_t *fuzz_udp_next(const uint8_t **p, size_t *left, size_t *len)
{
	uint8_t *d;
	size_t n;

	if (*left < 2)
		return NULL;
	n = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
	*p += 2;
	*left -= 2;
	if (n > *left)
		n = *left;
	*len = n > RTL_UDP_MAX_DATAGRAM + 1 ? RTL_UDP_MAX_DATAGRAM + 1 : n;
	d = malloc(*len ? *len : 1);
	FUZZ_CHECK(d);
	memcpy(d, *p, *len);
	*p += n;
	*left -= n;
	return d;
}

/* rtl_udp_decode_header() keeps its promises: documented codes only, and an
 * accepted header describes exactly this datagram. */
static inline int fuzz_udp_header(const uint8_t *d, size_t len, struct rtl_udp_header *h)
{
	int r = rtl_udp_decode_header(h, d, len);

	FUZZ_CHECK(r == RTL_UDP_HEADER_SIZE || r == -EMSGSIZE || r == -EBADMSG ||
		   r == -EPROTONOSUPPORT || r == -EPROTO);
	if (r < 0)
		return r;
	FUZZ_CHECK(h->version == RTL_UDP_VERSION);
	FUZZ_CHECK(rtl_udp_payload_size((enum rtl_udp_type)h->type) == (int)h->length);
	FUZZ_CHECK(len == RTL_UDP_HEADER_SIZE + h->length);
	return r;
}

/* A re-encoded datagram equals the received one but for what decoding
 * ignores: the header's flags (bytes 6-7) and reserved word (12-15), and
 * the bytes listed in @skip (offsets, -1 ends). */
static inline void fuzz_udp_same(const uint8_t *a, const uint8_t *b, size_t len, const int *skip)
{
	uint8_t *x = malloc(len), *y = malloc(len);

	FUZZ_CHECK(x && y && len >= RTL_UDP_HEADER_SIZE);
	memcpy(x, a, len);
	memcpy(y, b, len);
	memset(x + 6, 0, 2);
	memset(y + 6, 0, 2);
	memset(x + 12, 0, 4);
	memset(y + 12, 0, 4);
	for (const int *s = skip; s && *s >= 0; s++)
		x[*s] = y[*s] = 0;
	FUZZ_CHECK(memcmp(x, y, len) == 0);
	free(y);
	free(x);
}

#endif /* RTL_FUZZ_UDP_H */
