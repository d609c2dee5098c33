// SPDX-License-Identifier: MIT
/*
 * RDT's wire format: requests and records, big-endian (<rtloop/rdt.h>,
 * docs/netft-rdt.md). Pure.
 */
#include <errno.h>

#include <rtloop/rdt.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

RTL_API int rtl_rdt_encode_request(uint8_t *out, size_t cap, const struct rtl_rdt_request *rq)
{
	if (!out || !rq || cap < RTL_RDT_REQUEST_SIZE)
		return -ENOSPC;
	put16(out, RTL_RDT_HEADER);
	put16(out + 2, rq->command);
	put32(out + 4, rq->count);
	return RTL_RDT_REQUEST_SIZE;
}

RTL_API int rtl_rdt_decode_request(struct rtl_rdt_request *rq, const uint8_t *in, size_t len)
{
	if (!rq || !in || len != RTL_RDT_REQUEST_SIZE || get16(in) != RTL_RDT_HEADER)
		return -EBADMSG;
	rq->command = get16(in + 2);
	rq->count = get32(in + 4);
	return RTL_RDT_REQUEST_SIZE;
}

RTL_API int rtl_rdt_encode_record(uint8_t *out, size_t cap, const struct rtl_rdt_record *r)
{
	if (!out || !r || cap < RTL_RDT_RECORD_SIZE)
		return -ENOSPC;
	put32(out, r->rdt_sequence);
	put32(out + 4, r->ft_sequence);
	put32(out + 8, r->status);
	for (int i = 0; i < 6; i++)
		put32(out + 12 + 4 * i, (uint32_t)r->counts[i]);
	return RTL_RDT_RECORD_SIZE;
}

RTL_API int rtl_rdt_decode_record(struct rtl_rdt_record *r, const uint8_t *in, size_t len,
				  unsigned i)
{
	size_t n = len / RTL_RDT_RECORD_SIZE;
	const uint8_t *p;

	if (!r || !in || !n || len % RTL_RDT_RECORD_SIZE || n > RTL_RDT_MAX_RECORDS || i >= n)
		return -EBADMSG;
	p = in + (size_t)i * RTL_RDT_RECORD_SIZE;
	r->rdt_sequence = get32(p);
	r->ft_sequence = get32(p + 4);
	r->status = get32(p + 8);
	for (int k = 0; k < 6; k++)
		r->counts[k] = (int32_t)get32(p + 12 + 4 * k);
	return (int)n;
}

RTL_API enum rtl_rdt_order rtl_rdt_classify(uint32_t *gap, uint32_t newest, uint32_t seq,
					    uint32_t window)
{
	uint32_t ahead = seq - newest; /* wraps */
	uint32_t behind = newest - seq;

	if (gap)
		*gap = 0;
	if (seq == newest)
		return RTL_RDT_DUPLICATE;
	if (behind <= window)
		return RTL_RDT_LATE;
	if (ahead <= UINT32_MAX / 2 - window) {
		if (gap)
			*gap = ahead - 1;
		return RTL_RDT_NEXT;
	}
	return RTL_RDT_RESTART;
}

RTL_API void rtl_rdt_scale(double out[6], const int32_t counts[6], double counts_per_force,
			   double counts_per_torque)
{
	for (int i = 0; i < 3; i++)
		out[i] = counts[i] / counts_per_force;
	for (int i = 3; i < 6; i++)
		out[i] = counts[i] / counts_per_torque;
}

RTL_API const char *rtl_rdt_command_name(uint16_t command)
{
	switch (command) {
	case RTL_RDT_STOP:
		return "stop streaming";
	case RTL_RDT_START_REALTIME:
		return "start real-time streaming";
	case RTL_RDT_START_BUFFERED:
		return "start buffered streaming";
	case RTL_RDT_START_MULTI:
		return "start multi-unit streaming";
	case RTL_RDT_RESET_LATCH:
		return "reset the threshold latch";
	case RTL_RDT_SET_BIAS:
		return "set software bias";
	default:
		return "unknown";
	}
}
