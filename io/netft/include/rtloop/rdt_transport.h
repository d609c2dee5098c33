/* SPDX-License-Identifier: MIT */
/*
 * rtl_rdt_transport: a Net F/T force/torque sensor's RDT stream
 * (<rtloop/rdt.h>) as a transport of the loop, for a rig's sensor source
 * (<rtloop/rig.h>) or a loop of its own.
 *
 * Design
 * ------
 *   connect  connect(2) a UDP socket to the sensor (so only its datagrams
 *            are received and an ICMP "port unreachable" is ECONNREFUSED),
 *            send "start real-time streaming" (or buffered, cfg.buffered)
 *            for an endless count, every 100 ms until the first record
 *            arrives or the connect time-out ends. The period is the
 *            configured output rate's (the sensor cannot be asked over
 *            RDT). No safe package: a sensor moves nothing.
 *   recv     one recvmsg(2) with the kernel's receive time, waiting at most
 *            the loop's receive slice.
 *   next     each record of the datagram in turn: its rdt_sequence against
 *            the newest taken (rtl_rdt_classify()): the next or a later one is
 *            a frame (ctrl_skipped = the records lost before it); a
 *            duplicate, a late record (out of order: a newer one was
 *            already given to the loop) and a restarted stream's first
 *            record are counted, each under its own name; late and
 *            duplicate records are dropped, a restart resynchronises. A
 *            datagram that is not a whole number of records is counted as
 *            malformed. ctrl_time = ft_sequence / 7000 s (the sensor's
 *            clock). A record with the status word's error bit is counted
 *            and passed on (the step sees the status).
 *   send     the commands (struct rtl_rdt_cmd): a bias request is sent
 *            when cmd.bias changes (the sensor tares at its current
 *            reading), likewise a threshold latch reset; nothing else.
 *   disconnect  "stop streaming" (best effort) and close.
 *
 * Frames (struct rtl_rdt_frame, the values of a loop frame): the record,
 * and the wrench in the calibration's units (counts / counts per force or
 * torque; commonly N and N m).
 *
 * Threads: the contract of <rtloop/loop.h>.
 */
#ifndef RTLOOP_RDT_TRANSPORT_H
#define RTLOOP_RDT_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/loop.h>
#include <rtloop/rdt.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

struct rtl_rdt_transport_config {
	size_t size;		    /* sizeof(struct rtl_rdt_transport_config) */
	const char *host;	    /* the sensor's address (required) */
	uint16_t port;		    /* 0: 49152 */
	double rate_hz;		    /* the sensor's RDT output rate; 0: 7000 */
	double counts_per_force;    /* 0: 1,000,000 (the common calibration) */
	double counts_per_torque;   /* 0: 1,000,000 */
	bool buffered;		    /* buffered streaming (several records per datagram) */
	int64_t connect_timeout_ns; /* 0: 2 s */
	/* No record for this long is a lost sensor; 0: 100 periods, at least
	 * 100 ms. */
	int64_t rx_timeout_ns;
};

/* The commands a step may give the sensor: change a counter to send its
 * request once. */
struct rtl_rdt_cmd {
	uint32_t bias;	      /* tare at the current reading */
	uint32_t reset_latch; /* reset the threshold latch */
};

/* A frame's values. */
struct rtl_rdt_frame {
	struct rtl_rdt_record rec;
	uint32_t pad;
	double wrench[6]; /* Fx Fy Fz (N) Tx Ty Tz (N m), the calibration's units */
};

#define RTL_RDT_TRANSPORT_COUNTERS(X)                                              \
	X(records, "records received")                                             \
	X(lost, "records missing from the sequence (gaps)")                        \
	X(late, "records older than one already taken: out of order, dropped")     \
	X(duplicate, "records received twice, dropped")                            \
	X(restarts, "stream restarts (sequence jumped far): resynchronised")       \
	X(malformed, "datagrams that were not a whole number of records, dropped") \
	X(status_errors, "records whose status word had the error bit set")        \
	X(requests, "requests sent (start, bias, latch reset, stop)")

struct rtl_rdt_transport_counters {
	size_t size;
	RTL_RDT_TRANSPORT_COUNTERS(RTL_STAT_U64)
};

struct rtl_rdt_transport;

/* Create the transport (resolves @cfg->host; no socket yet). Not RT-safe.
 * Returns 0 and sets *@out, or -EINVAL / -EHOSTUNREACH / -ENOMEM with
 * @err filled. */
RTL_API int rtl_rdt_transport_create(struct rtl_rdt_transport **out,
				     const struct rtl_rdt_transport_config *cfg,
				     struct rtl_error *err);
RTL_API void rtl_rdt_transport_destroy(struct rtl_rdt_transport *t);

/* Returns the loop's view of @t (for cfg.transport or a rig source), NULL
 * for NULL. */
RTL_API struct rtl_transport *rtl_rdt_transport_base(struct rtl_rdt_transport *t);

/* Returns a frame's values as the sensor's frame. RT-safe. */
RTL_INLINE const struct rtl_rdt_frame *rtl_rdt_loop_frame(const struct rtl_loop_frame *f)
{
	return (const struct rtl_rdt_frame *)(const void *)f->values;
}

/* Returns the commands of a loop (or a rig source) over this transport,
 * NULL for NULL. */
RTL_API struct rtl_rdt_cmd *rtl_rdt_transport_command(struct rtl_rdt_transport *t);

/* A snapshot of the counters into @out (set out->size first). Returns 0
 * or -EINVAL. Any thread. */
RTL_API int rtl_rdt_transport_stats(const struct rtl_rdt_transport *t,
				    struct rtl_rdt_transport_counters *out);
/* Returns the counters' table (name, what it counts, offset); *@n its
 * length. */
RTL_API const struct rtl_stat_field *rtl_rdt_transport_counter_fields(size_t *n);

RTL_END_DECLS

#endif /* RTLOOP_RDT_TRANSPORT_H */
