// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the datagrams a Net F/T sensor's client receives and
 * the requests a simulated sensor receives (io/netft/rdt.c), decoded as
 * io/netft/rdt_transport.c and apps/rtde-sim/ft.c decode them: every
 * record of a datagram, in order, each record's rdt_sequence classified
 * against the newest taken (rtl_rdt_classify()), and the datagram to the
 * request decoder too.
 *
 * Input: a sequence of datagrams, each a little-endian u16 length and that
 * many bytes (the last one cut to what is left). Oracles: documented codes
 * only; a datagram decodes exactly when it is a whole number (1..40) of
 * 36-byte records, every index below the count decodes and none above; a
 * decoded record encodes back to its bytes; a decoded request encodes back
 * to the datagram; the classification agrees with the wrapping arithmetic
 * (DUPLICATE exactly for the newest, NEXT's gap is the distance less one,
 * LATE within the window behind), and the scaled wrench is finite.
 */
#include <errno.h>
#include <math.h>

#include <rtloop/rdt.h>

#include "fuzz-common.h"

#define WINDOW 1000

static void one_record(const struct rtl_rdt_record *r, const uint8_t *bytes, uint32_t *newest,
		       bool *have)
{
	uint8_t back[RTL_RDT_RECORD_SIZE];
	double w[6];
	uint32_t gap = 7, ahead, behind;
	enum rtl_rdt_order o;

	FUZZ_CHECK(rtl_rdt_encode_record(back, sizeof(back), r) == RTL_RDT_RECORD_SIZE);
	FUZZ_CHECK(memcmp(back, bytes, sizeof(back)) == 0);
	rtl_rdt_scale(w, r->counts, 1e6, 1e6);
	for (int i = 0; i < 6; i++)
		FUZZ_CHECK(isfinite(w[i]));
	if (!*have) {
		*newest = r->rdt_sequence;
		*have = true;
		return;
	}
	o = rtl_rdt_classify(&gap, *newest, r->rdt_sequence, WINDOW);
	ahead = r->rdt_sequence - *newest;
	behind = *newest - r->rdt_sequence;
	FUZZ_CHECK((o == RTL_RDT_DUPLICATE) == (ahead == 0));
	FUZZ_CHECK(o != RTL_RDT_LATE || (behind >= 1 && behind <= WINDOW));
	FUZZ_CHECK(o != RTL_RDT_NEXT || (ahead >= 1 && gap == ahead - 1));
	FUZZ_CHECK(o == RTL_RDT_NEXT || gap == 0);
	if (o == RTL_RDT_NEXT || o == RTL_RDT_RESTART)
		*newest = r->rdt_sequence;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	uint32_t newest = 0;
	bool have = false;

	while (left >= 2) {
		size_t n = (size_t)p[0] | (size_t)p[1] << 8, count;
		struct rtl_rdt_record r;
		struct rtl_rdt_request rq;
		uint8_t *d;
		int ret;

		p += 2;
		left -= 2;
		if (n > left)
			n = left;
		d = malloc(n ? n : 1);
		FUZZ_CHECK(d);
		memcpy(d, p, n);
		p += n;
		left -= n;
		count = n / RTL_RDT_RECORD_SIZE;
		ret = rtl_rdt_decode_record(&r, d, n, 0);
		if (n && n % RTL_RDT_RECORD_SIZE == 0 && count <= RTL_RDT_MAX_RECORDS) {
			FUZZ_CHECK(ret == (int)count);
			for (size_t i = 0; i < count; i++) {
				FUZZ_CHECK(rtl_rdt_decode_record(&r, d, n, (unsigned)i) ==
					   (int)count);
				one_record(&r, d + i * RTL_RDT_RECORD_SIZE, &newest, &have);
			}
			FUZZ_CHECK(rtl_rdt_decode_record(&r, d, n, (unsigned)count) == -EBADMSG);
		} else {
			FUZZ_CHECK(ret == -EBADMSG);
		}
		ret = rtl_rdt_decode_request(&rq, d, n);
		FUZZ_CHECK(ret == RTL_RDT_REQUEST_SIZE || ret == -EBADMSG);
		if (ret > 0) {
			uint8_t back[RTL_RDT_REQUEST_SIZE];

			FUZZ_CHECK(n == RTL_RDT_REQUEST_SIZE);
			FUZZ_CHECK(rtl_rdt_encode_request(back, sizeof(back), &rq) ==
				   RTL_RDT_REQUEST_SIZE);
			FUZZ_CHECK(memcmp(back, d, n) == 0);
			FUZZ_CHECK(rtl_rdt_command_name(rq.command) != NULL);
		}
		free(d);
	}
	return 0;
}
