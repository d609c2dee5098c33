/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_transport: RTDE as a transport of the control loop.
 *
 * It glues the pieces of io/ into the calls the loop makes:
 *   connect  TCP connect (TCP_NODELAY) to the address resolved at init (a
 *            reconnect never asks the resolver), then the client's
 *            handshake driven to RUNNING with the client step function;
 *            the coalescer is set up for the input recipes (ids from the
 *            controller) or, on a reconnect, re-keyed and forced so every
 *            input is re-sent; the application's connected() runs; the
 *            safe package is built (below); a hook of the connect, when
 *            one is configured, runs last (struct
 *            rtl_rtde_transport_hook_ops).
 *   recv     one recv(2) into a buffer the client's framer reads, waiting
 *            at most the loop's receive slice (SO_RCVTIMEO); after a slice
 *            with nothing, the client's data time-out is checked.
 *   next     the client's next data package, decoded with the output
 *            recipe straight into the ring slot; text messages and replies
 *            stay here (the client logs text messages: through the rx
 *            thread's log queue, never to a terminal from here).
 *   check    every input double finite (NaN only behind a mask, where it
 *            means "not set"), and the configured limits.
 *   send     the coalescer encodes only the changed input recipes; when
 *            the heartbeat's recipe has not gone out for keepalive_ns, it
 *            goes out anyway (the keep-alive), so the controller's watchdog
 *            is fed while coalescing still suppresses unchanged commands
 *            (and while other recipes, an echo, change every cycle). A
 *            non-blocking send; bytes the socket did not take wait in a
 *            small backlog that is flushed before anything new, so nothing
 *            queues without bound and a send that would block commits
 *            nothing (the next cycle sends the newest values).
 *   send_safe  the pre-encoded safe package, with a fresh heartbeat.
 *   at_rest  every joint of actual_qd slower than rest_speed (0.001 rad/s).
 *
 * The heartbeat. The command layout's heartbeat (RTL_RTDE_CMD_FIELD_SEQ,
 * or the field named in the configuration) belongs to the transport: the
 * coalescer puts a new value in every package of its recipe and ignores
 * what the step writes there, so it can be neither forgotten nor the
 * reason a package is sent.
 *
 * The safe package is built at every connect, after connected(), into a
 * coalescer of its own (never the step's frames): the application's safe
 * callback writes into its frames, which start zeroed (doubles behind a
 * mask unset), with the masks sent as written (raw: "mask 1, value 0"
 * turns an output off); without a callback and with the command register
 * layout in an input recipe, the safe set is mode = RTL_RTDE_CMD_STOP.
 * Every input recipe in which a value was set goes into the package, whole
 * (fields not set are 0); it is checked as the step's commands are (a NaN
 * there fails the connect) and encoded once. The watchdog, a rejected
 * step, a disarm, a (re)connect and the stop at exit send exactly these
 * bytes. Because the stop at exit waits for rest, actual_qd is added to
 * the output recipe when a safe package can exist and it is not there.
 *
 * The step function reads the frame with the output recipe's handles
 * (rtl_rtde_transport_output_handle()) through rtl_rtde_loop_state(), and
 * writes commands into rtl_rtde_coalesce_frame(rtl_loop_commands(loop), i)
 * with the input recipes' handles.
 *
 * Threads: as the contract of <rtloop/loop.h>: connect (and the callbacks)
 * while no step runs; recv, next and at_rest on the rx thread; check and
 * send on the step's thread holding the transmit side; send_safe on any
 * thread holding it.
 */
#ifndef RTLOOP_RTDE_TRANSPORT_H
#define RTLOOP_RTDE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_coalesce.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

#define RTL_RTDE_TRANSPORT_MAX_LIMITS 16

/* The transport: opaque (rtl_rtde_transport_create()). */
struct rtl_rtde_transport;

/*
 * A hook of the connect: work that must happen on every connection before
 * the loop takes it, and that belongs to a module above io/rtde. io/ur's
 * upload of the control program is one (<rtloop/ur_upload.h>: it sends
 * rtloop_control.script to the primary port, waits for its executor and
 * watches the data for a protective stop); io/rtde knows nothing of it.
 *
 * The transport calls, on the hook's context @ctx:
 *   connected  at every connect (the first and each reconnect), after the
 *              handshake, the coalescer, the application's connected() and
 *              the safe package, while no step runs and the caller holds
 *              the transmit side. It may send and receive with
 *              rtl_rtde_transport_send_safe() and
 *              rtl_rtde_transport_receive(). Returns 0, or -errno with
 *              @err filled: the connect then fails with that code and
 *              sentence (the transport closes the connection and names
 *              the controller).
 *   frame      on the rx thread, for each data package decoded into a loop
 *              frame (@fr: the output recipe's values). Returns 0, or
 *              -errno with @why filled: the stream ends with that code
 *              and sentence (the loop reconnects when it was asked to, and
 *              the reconnect calls connected again). Must be RT-safe: no
 *              allocation, no lock, no system call.
 *   finish     in rtl_rtde_transport_destroy(), before the connection
 *              closes: the session is over (the loop's stop at exit has
 *              brought the arm to rest before). Not RT-safe.
 * Every member but size may be NULL.
 *
 * The output recipe gains the fields named in @outputs (at create, when
 * the configured outputs lack them), so the hook can read them with
 * rtl_rtde_transport_output_handle() in connected.
 *
 * Versions: set .size = sizeof(struct rtl_rtde_transport_hook_ops).
 * rtl_rtde_transport_create() refuses 0 or less than this first version
 * (-EINVAL), and more than it knows unless the extra bytes are zero
 * (-E2BIG). The table and @ctx must outlive the transport.
 */
struct rtl_rtde_transport_hook_ops {
	size_t size;
	const char *name;    /* for messages: "upload" */
	const char *outputs; /* comma-separated output fields it reads; NULL: none */
	int (*connected)(struct rtl_rtde_transport *t, void *ctx, struct rtl_error *err);
	int (*frame)(struct rtl_rtde_transport *t, const struct rtl_rtde_frame *fr, void *ctx,
		     struct rtl_error *why);
	void (*finish)(struct rtl_rtde_transport *t, void *ctx);
};

/* A bound on one input double (all elements of a vector field). */
struct rtl_rtde_limit {
	const char *field; /* input field name, e.g. "input_double_register_24" */
	double min, max;
};

/* Set .size = sizeof(struct rtl_rtde_transport_config) (docs/api.md,
 * "Room to grow"); zero is the default of every other field. */
struct rtl_rtde_transport_config {
	size_t size;
	const char *host;	    /* default "127.0.0.1" */
	uint16_t port;		    /* default 30004 */
	int64_t connect_timeout_ns; /* TCP connect and whole handshake; default 3 s */
	/* The client's configuration (its own .size set; copied at create):
	 * the output fields, the input recipes, the frequency. Required. A
	 * pointer rather than a member, so that each of the two structs can
	 * grow on its own. */
	const struct rtl_rtde_client_config *client;
	/* Write the safe command values into @c's frames (a coalescer of
	 * the safe package's own, zeroed; e.g. mode = stop). Called once per
	 * connect, after connected(), while no step runs. NULL: mode =
	 * RTL_RTDE_CMD_STOP when an input recipe has the command layout's
	 * mode register, else no safe package (the watchdog, rejections and
	 * the stop at exit then send nothing: avoid). */
	void (*safe)(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user);
	/* Called at the end of every successful connect (handshake done,
	 * coalescer ready), while no step runs: resolve handles here. */
	void (*connected)(struct rtl_rtde_transport *t, void *user);
	void *user;
	struct rtl_rtde_limit limits[RTL_RTDE_TRANSPORT_MAX_LIMITS];
	unsigned n_limits;
	/* The heartbeat field (an input INT32 the transport owns, see
	 * above). NULL: RTL_RTDE_CMD_FIELD_SEQ if an input recipe has it;
	 * "": none. */
	const char *heartbeat;
	/* The controller's watchdog: it stops the arm after this long without
	 * a new heartbeat. 0: RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS; < 0: none. */
	int64_t controller_watchdog_ns;
	/* Keep-alive: send the heartbeat's recipe when nothing went out for
	 * this long. 0: a quarter of the controller's watchdog; < 0: off. */
	int64_t keepalive_ns;
	/* No data package for this long is a lost connection. 0: 1 s or 10
	 * periods, whichever is longer; < 0: never. It is also the client's
	 * data time-out when client.data_timeout_ns is 0, so the stream ends
	 * with the client's explanation ("no data package for 1.0 s after
	 * START ..."); the loop's own check stays as the last resort. */
	int64_t rx_timeout_ns;
	/* At rest: every joint's actual_qd below this [rad/s]. 0: 0.001. */
	double rest_speed;
	/* A hook of the connect (above), e.g. io/ur's upload of the control
	 * program: hook = &rtl_ur_upload_hook, hook_ctx = the struct
	 * rtl_ur_upload (<rtloop/ur_upload.h>). Both must outlive the
	 * transport. NULL: none. */
	const struct rtl_rtde_transport_hook_ops *hook;
	void *hook_ctx;
};

/*
 * The transport's counters, declared once: X(name, what it counts); the
 * snapshot, the transport's atomics and the table
 * rtl_rtde_transport_counter_fields() are made from it. Each has one
 * writer: the rx thread (rx_bytes) or the holder of the transmit side
 * (the rest). The client's are the client's (rtl_rtde_client_stats()), a
 * hook's its own (io/ur's upload: rtl_ur_upload_stats()). New counters go
 * at the end.
 */
#define RTL_RTDE_TRANSPORT_COUNTERS(X)                                         \
	X(packages, "input data packages of the step's commands sent")         \
	X(keepalives, "of those: sent only to feed the controller's watchdog") \
	X(safe_packages, "data packages of the safe package sent")             \
	X(backlogged, "sends the socket took only in part")                    \
	X(rx_bytes, "bytes received")                                          \
	X(tx_bytes, "bytes sent")

/* A snapshot of the counters (rtl_rtde_transport_stats()). Set .size. */
struct rtl_rtde_transport_counters {
	size_t size;
	RTL_RTDE_TRANSPORT_COUNTERS(RTL_STAT_U64)
};

/*
 * A transport for @cfg (copied, and *cfg->client with it; the name
 * strings in the client's configuration are copied, the heartbeat and
 * limit names must outlive the transport). Resolves the host (once:
 * reconnects reuse the address) and allocates the client, the two
 * coalescers (the step's commands and the safe package's; connect only
 * sets them up) and the transport's buffers. Does not connect. Not
 * RT-safe.
 * Returns 0 and sets *@out, or -EINVAL (NULL, no client configuration or
 * no outputs, too many limits, a negative rest speed, a configuration or
 * hook table whose .size is not set), -E2BIG (a configuration or hook
 * table of a newer rtloop with fields this one does not know set), -ENOENT or -EAGAIN (the host
 * does not resolve), -ENOMEM, or the client's configuration error (bad names), with @err filled;
 * *@out is NULL on failure.
 */
RTL_API int rtl_rtde_transport_create(struct rtl_rtde_transport **out,
				      const struct rtl_rtde_transport_config *cfg,
				      struct rtl_error *err);

/* Call the hook's finish (if any), close and free. NULL is accepted. Not
 * RT-safe. */
RTL_API void rtl_rtde_transport_destroy(struct rtl_rtde_transport *t);

/* Returns the loop's view of @t (for struct rtl_loop_config.transport),
 * NULL for a NULL @t. RT-safe. */
RTL_API struct rtl_transport *rtl_rtde_transport_base(struct rtl_rtde_transport *t);

/*
 * The command frame of input recipe @i that the step of @loop writes: the
 * typed form of rtl_rtde_coalesce_frame(rtl_loop_commands(loop), i).
 * Returns the frame, or NULL when @loop is NULL, its transport is not one
 * made by rtl_rtde_transport_create() (a copy of its ops table with some
 * calls wrapped still is), or @i is not one of its input recipes. From the step's
 * thread (the worker, or the caller of rtl_loop_read()). RT-safe.
 */
RTL_API struct rtl_rtde_frame *rtl_rtde_loop_commands(struct rtl_loop *loop, unsigned i);

/* A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written); any thread (relaxed
 * loads). Returns 0, or -EINVAL (@t or @out NULL, out->size not set).
 * RT-safe. */
RTL_API int rtl_rtde_transport_stats(const struct rtl_rtde_transport *t,
				     struct rtl_rtde_transport_counters *out);

/* Returns the counters' table (names, what each counts, offsets in the
 * snapshot); sets *@n (may be NULL) to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_rtde_transport_counter_fields(size_t *n);

struct rtl_telemetry;

/*
 * @tr in a loop's telemetry @t (<rtloop/telemetry.h>, docs/telemetry.md):
 * its counters as "transport.*" and its client's as "client.*", and, as
 * signals named after them, the output fields @outputs and the fields of
 * input recipe 0 @inputs (the commands the step wrote), comma-separated
 * (NULL or "": none). A capture sets them from each step's frame and
 * command; a field the connected recipe lacks stays NaN. Set-up time:
 * before the loop starts. Returns 0, or -EINVAL (NULL, a name that is not
 * an output or an input field of the registry: named), -ENOSPC (more than
 * 32 fields, or the telemetry's limits), -EEXIST, -EBUSY (the telemetry's
 * errors), -ENOMEM, with @err filled.
 */
RTL_API int rtl_rtde_transport_telemetry(struct rtl_rtde_transport *tr, struct rtl_telemetry *t,
					 const char *outputs, const char *inputs,
					 struct rtl_error *err);

/* Returns the client (handshake info, counters, recipes), NULL for a NULL
 * @t. */
RTL_API struct rtl_rtde_client *rtl_rtde_transport_client(struct rtl_rtde_transport *t);

/*
 * The controller's host as configured ("127.0.0.1" when none was), and
 * the numeric address it resolved to at create, which every connect uses
 * (for a hook's own connections to the controller: no resolver at a
 * reconnect). Both return strings that live as long as @t, NULL for a NULL
 * @t. Any thread; RT-safe.
 */
RTL_API const char *rtl_rtde_transport_host(const struct rtl_rtde_transport *t);
RTL_API const char *rtl_rtde_transport_address(const struct rtl_rtde_transport *t);

/*
 * For a hook: send the safe package built at this connect, after what an
 * earlier send left in flight, with a heartbeat the controller has not
 * seen; that heartbeat into *@beat when @beat is not NULL. The caller
 * holds the transmit side (a hook's connected does). Returns the bytes
 * sent, -EAGAIN (the socket still holds an earlier send's bytes: nothing
 * went, try again), -ENOTSUP (no safe package, or @beat given and the
 * safe package carries no heartbeat: nothing went), -ENOTCONN, or the
 * send's -errno. RT-safe: one non-blocking send.
 */
RTL_API int rtl_rtde_transport_send_safe(struct rtl_rtde_transport *t, uint32_t *beat);

/* Returns true when this connect built a safe package that carries the
 * heartbeat (what rtl_rtde_transport_send_safe() needs to give a beat): a hook that
 * waits for the controller to echo a beat checks it before it starts.
 * Set-up time (a hook's connected); RT-safe. */
RTL_API bool rtl_rtde_transport_has_safe_heartbeat(const struct rtl_rtde_transport *t);

/*
 * For a hook's connected: take the data packages the connection holds, or
 * wait until one arrives or @deadline (CLOCK_MONOTONIC ns) passes, and
 * decode the newest into @newest (its values, at most newest->cap bytes;
 * size is set). What the handshake's last read left in the client comes
 * first (the loop then finds nothing pending). Text messages are the
 * client's (it logs them). Returns the number of data packages decoded
 * (0: none before the deadline), or, with @err filled, -ECONNRESET (the
 * controller closed the connection), -ENOTCONN, the client's code when the
 * stream broke (its sentence), or recv()'s -errno. Not RT-safe (blocks up
 * to the deadline).
 */
RTL_API int rtl_rtde_transport_receive(struct rtl_rtde_transport *t, struct rtl_rtde_frame *newest,
				       int64_t deadline, struct rtl_error *err);

/* Returns the handle of output field @name in the connected output recipe,
 * or the invalid handle (no such field, not connected, a NULL pointer).
 * Set-up time (string compares). */
RTL_API struct rtl_rtde_handle rtl_rtde_transport_output_handle(struct rtl_rtde_transport *t,
								const char *name);

/* Returns the handle of input field @name in input recipe @i, or the
 * invalid handle (no such field or recipe, not connected, a NULL pointer).
 * Set-up time. */
RTL_API struct rtl_rtde_handle rtl_rtde_transport_input_handle(struct rtl_rtde_transport *t,
							       unsigned i, const char *name);

/* Returns loop frame @f of this transport as a recipe frame, for the
 * accessors. RT-safe. */
RTL_INLINE struct rtl_rtde_frame rtl_rtde_loop_state(const struct rtl_loop_frame *f)
{
	struct rtl_rtde_frame fr = { (unsigned char *)f->values, f->size, f->size };

	return fr;
}

RTL_END_DECLS

#endif /* RTLOOP_RTDE_TRANSPORT_H */
