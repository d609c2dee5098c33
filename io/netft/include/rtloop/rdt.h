/* SPDX-License-Identifier: MIT */
/*
 * rtl_rdt: the Raw Data Transfer (RDT) protocol of ATI's Net F/T
 * force/torque sensors, the de facto Ethernet protocol of lab F/T sensors
 * (docs/netft-rdt.md has the wire format with byte vectors).
 *
 * UDP, the sensor's port 49152, every field big-endian:
 *   request  (client -> sensor, 8 bytes): uint16 header 0x1234, uint16
 *            command, uint32 sample count (0: until told to stop).
 *   record   (sensor -> client, 36 bytes): uint32 rdt_sequence (+1 per
 *            record sent), uint32 ft_sequence (+1 per internal sample),
 *            uint32 status (0: healthy), int32 Fx Fy Fz Tx Ty Tz in counts.
 * A datagram holds one record (real-time streaming) or several (buffered).
 *
 * Pure functions: no I/O, no allocation, RT-safe.
 */
#ifndef RTLOOP_RDT_H
#define RTLOOP_RDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

#define RTL_RDT_PORT 49152
#define RTL_RDT_HEADER 0x1234
#define RTL_RDT_REQUEST_SIZE 8
#define RTL_RDT_RECORD_SIZE 36
/* The internal sample rate of a Net F/T, Hz (ft_sequence counts these). */
#define RTL_RDT_INTERNAL_HZ 7000
/* Records in one datagram, at most (buffered streaming). */
#define RTL_RDT_MAX_RECORDS 40

enum rtl_rdt_command {
	RTL_RDT_STOP = 0x0000,
	RTL_RDT_START_REALTIME = 0x0002, /* one record per datagram */
	RTL_RDT_START_BUFFERED = 0x0003, /* several records per datagram */
	RTL_RDT_START_MULTI = 0x0004,	 /* multi-unit streaming */
	RTL_RDT_RESET_LATCH = 0x0041,	 /* reset the threshold latch */
	RTL_RDT_SET_BIAS = 0x0042,	 /* software bias: tare at the current reading */
};

/* One decoded record. */
struct rtl_rdt_record {
	uint32_t rdt_sequence;
	uint32_t ft_sequence;
	uint32_t status;
	int32_t counts[6]; /* Fx Fy Fz Tx Ty Tz */
};

/* A request. */
struct rtl_rdt_request {
	uint16_t command;
	uint32_t count;
};

/* Encode @rq into @out (8 bytes). Returns 8, or -ENOSPC. */
RTL_API int rtl_rdt_encode_request(uint8_t *out, size_t cap, const struct rtl_rdt_request *rq);

/* Decode a request. Returns 8, or -EBADMSG (not 8 bytes, or not the 0x1234
 * header). */
RTL_API int rtl_rdt_decode_request(struct rtl_rdt_request *rq, const uint8_t *in, size_t len);

/* Encode @r into @out (36 bytes). Returns 36, or -ENOSPC. */
RTL_API int rtl_rdt_encode_record(uint8_t *out, size_t cap, const struct rtl_rdt_record *r);

/* Decode record @i of a datagram of @len bytes. Returns the number of
 * records in the datagram (>= 1, @i < it filled into @r), or -EBADMSG
 * (not a whole number of records, none, or more than
 * RTL_RDT_MAX_RECORDS). */
RTL_API int rtl_rdt_decode_record(struct rtl_rdt_record *r, const uint8_t *in, size_t len,
				  unsigned i);

/* What a record's rdt_sequence says, against the newest one taken. */
enum rtl_rdt_order {
	RTL_RDT_NEXT = 0,  /* newer: take it (the gap is the records lost) */
	RTL_RDT_DUPLICATE, /* the newest again */
	RTL_RDT_LATE,	   /* older than the newest: out of order, arrived late */
	RTL_RDT_RESTART,   /* far behind or far ahead: a restarted stream */
};

/*
 * Classify @seq against @newest (wrapping 32-bit arithmetic). Returns
 * DUPLICATE for @newest itself, LATE for a record up to @window behind,
 * RESTART further behind or more than 2^31 - @window ahead, else NEXT.
 * *@gap (may be NULL): the records skipped before a NEXT (0 for the one
 * right after), 0 otherwise.
 */
RTL_API enum rtl_rdt_order rtl_rdt_classify(uint32_t *gap, uint32_t newest, uint32_t seq,
					    uint32_t window);

/* Status bits a healthy sensor does not set; bit 31 is the summary "error
 * or warning" bit of the Net F/T. */
#define RTL_RDT_STATUS_ERROR (1u << 31)

/* Force (N or the calibration's unit) and torque from counts into @out. */
RTL_API void rtl_rdt_scale(double out[6], const int32_t counts[6], double counts_per_force,
			   double counts_per_torque);

/* Returns what request @command asks ("set software bias"), "unknown" for
 * a command RDT does not have. */
RTL_API const char *rtl_rdt_command_name(uint16_t command);

RTL_END_DECLS

#endif /* RTLOOP_RDT_H */
