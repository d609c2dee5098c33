/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_transport: RTDE as a transport of the control loop.
 *
 * It glues the pieces of io/ into the four calls the loop makes:
 *   connect  TCP connect (TCP_NODELAY), then the client's handshake driven
 *            to RUNNING with the client step function; the coalescer is
 *            set up for the input recipes (ids from the controller) or, on
 *            a reconnect, re-keyed and forced so every input is re-sent.
 *   recv     one blocking recv(2) into a buffer the client's framer reads.
 *   next     the client's next data package, decoded with the output
 *            recipe straight into the ring slot; text messages and replies
 *            stay here (the client logs text messages: a rare slow path).
 *   send     the coalescer encodes only the changed input recipes; a
 *            non-blocking send; bytes the socket did not take wait in a
 *            small backlog that is flushed before anything new, so nothing
 *            queues without bound and a send that would block commits
 *            nothing (the next cycle sends the newest values).
 * plus check (every input double finite, configured limits) and send_safe
 * (the application's safe values, e.g. "stop", forced out).
 *
 * The step function reads the frame with the output recipe's handles
 * (rtl_rtde_transport_output_handle()) through rtl_rtde_loop_state(), and
 * writes commands into rtl_rtde_coalesce_frame(rtl_loop_commands(loop), i)
 * with the input recipes' handles.
 *
 * Threads: connect runs on the thread that starts the loop (or the rx
 * thread, on reconnect, while it owns the transmit side); recv and next on
 * the rx thread; send, send_safe and check on the transmit owner.
 */
#ifndef RTLOOP_RTDE_TRANSPORT_H
#define RTLOOP_RTDE_TRANSPORT_H

#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_coalesce.h>

#define RTL_RTDE_TRANSPORT_MAX_LIMITS 16
#define RTL_RTDE_TRANSPORT_TX_SIZE 4096
/* Input doubles (and vectors) check() tests: each takes 8 or more of the
 * bytes of a recipe the coalescer holds. */
#define RTL_RTDE_TRANSPORT_MAX_FINITE \
	(RTL_RTDE_COALESCE_MAX_RECIPES * RTL_RTDE_COALESCE_MAX_BYTES / sizeof(double))

struct rtl_rtde_transport;

/* A bound on one input double (all elements of a vector field). */
struct rtl_rtde_limit {
	const char *field; /* input field name, e.g. "input_double_register_24" */
	double min, max;
};

struct rtl_rtde_transport_config {
	const char *host;	    /* default "127.0.0.1" */
	uint16_t port;		    /* default 30004 */
	int64_t connect_timeout_ns; /* TCP connect and whole handshake; default 3 s */
	struct rtl_rtde_client_config client;
	/* Write the safe command values into the coalescer's frames (e.g.
	 * mode = stop). Called by the transmit owner before send_safe. NULL:
	 * the loop has no safe set (watchdog and rejections send nothing). */
	void (*safe)(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user);
	/* Called at the end of every successful connect (handshake done,
	 * coalescer ready): resolve handles here. */
	void (*connected)(struct rtl_rtde_transport *t, void *user);
	void *user;
	struct rtl_rtde_limit limits[RTL_RTDE_TRANSPORT_MAX_LIMITS];
	unsigned n_limits;
};

/* Private: an input double (or vector) that must be finite. */
struct rtl_rtde_transport_finite {
	const unsigned char *at; /* in the coalescer's frame */
	uint16_t slot;		 /* position in the recipe (for the name) */
	uint8_t recipe;
	uint8_t elems;
	bool nan_ok; /* behind a mask: NaN means "not set" */
};

/* Private: a limited field (bounds in cfg.limits, same index). */
struct rtl_rtde_transport_bound {
	const unsigned char *at; /* in the coalescer's frame */
	uint8_t elems;
};

/* Fields are private. */
struct rtl_rtde_transport {
	struct rtl_transport base;
	struct rtl_rtde_transport_config cfg;
	struct rtl_rtde_client *client;
	struct rtl_rtde_coalesce coal;
	int fd;
	bool coal_ready;
	size_t tx_off, tx_len;
	uint64_t rx_bytes, tx_bytes, backlogged;
	/* Resolved at connect, walked by check() on every send. */
	struct rtl_rtde_transport_finite finite[RTL_RTDE_TRANSPORT_MAX_FINITE];
	unsigned n_finite;
	struct rtl_rtde_transport_bound limits[RTL_RTDE_TRANSPORT_MAX_LIMITS];
	unsigned n_limits;
	uint8_t tx[RTL_RTDE_TRANSPORT_TX_SIZE];
	uint8_t rx[RTL_RTDE_MAX_PACKAGE_SIZE];
};

/*
 * Set up @t for @cfg (copied; the name strings in cfg->client must outlive
 * @t). Allocates the client. Does not connect. Not RT-safe.
 * Returns 0, or -EINVAL (NULL, no outputs, too many limits), -ENOMEM, or
 * the client's configuration error (bad names), with @err filled.
 */
RTL_API int rtl_rtde_transport_init(struct rtl_rtde_transport *t,
				    const struct rtl_rtde_transport_config *cfg,
				    struct rtl_rt_error *err);

/* Close and free what init allocated. Not RT-safe. */
RTL_API void rtl_rtde_transport_fini(struct rtl_rtde_transport *t);

/* The loop's view of @t (for struct rtl_loop_config.transport). */
RTL_INLINE struct rtl_transport *rtl_rtde_transport_base(struct rtl_rtde_transport *t)
{
	return &t->base;
}

/* The client (handshake info, counters, recipes). */
RTL_API struct rtl_rtde_client *rtl_rtde_transport_client(struct rtl_rtde_transport *t);

/* Handle of output field @name in the connected output recipe, or the
 * invalid handle. Set-up time (string compares). */
RTL_API struct rtl_rtde_handle rtl_rtde_transport_output_handle(struct rtl_rtde_transport *t,
								const char *name);

/* Handle of input field @name in input recipe @i. Set-up time. */
RTL_API struct rtl_rtde_handle rtl_rtde_transport_input_handle(struct rtl_rtde_transport *t,
							       unsigned i, const char *name);

/* A loop frame of this transport as a recipe frame, for the accessors.
 * RT-safe. */
RTL_INLINE struct rtl_rtde_frame rtl_rtde_loop_state(const struct rtl_loop_frame *f)
{
	struct rtl_rtde_frame fr = { (unsigned char *)f->values, f->size, f->size };

	return fr;
}

#endif /* RTLOOP_RTDE_TRANSPORT_H */
