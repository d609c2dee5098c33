/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_client: the RTDE client as a non-blocking step function.
 *
 * Design
 * ------
 * The client is a state machine that owns no socket and no thread. A
 * driver (the RTDE transport on the loop's rx thread, rtde_transport.h, or a
 * test that owns its socket) moves bytes and time in and out of it:
 *
 *   rtl_rtde_client_connected(c, now)        a TCP connection is up
 *   loop:
 *     send rtl_rtde_client_tx() bytes, then rtl_rtde_client_tx_done()
 *     wait for the socket, at most until rtl_rtde_client_deadline()
 *     rtl_rtde_client_feed(c, bytes)          what recv() returned
 *     while (rtl_rtde_client_next(c, &ev, now) == 1) handle ev
 *     on EOF or a reset: rtl_rtde_client_closed(c, now, err), then next()
 *
 * The handshake follows the typical order (docs/rtde-protocol.md 3.1):
 * REQUEST_PROTOCOL_VERSION 2 (and 1 when 2 is refused), then
 * GET_URCONTROL_VERSION, whose major must be one UR ships (3 CB3, 5
 * e-Series, 10 PolyScope X; RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION lets
 * others through); the recipes are then built from the configured
 * name lists against that controller version (rtde_recipe.h), so fields
 * newer than the controller fail with a clear report or are dropped, by
 * option. SETUP_OUTPUTS (with the frequency in v2), one SETUP_INPUTS per
 * input recipe, and START unless told not to. Each request gets a deadline
 * (2 s by default); text messages and data packages may arrive between a
 * request and its reply, and a data package while START is pending counts
 * as START accepted, as URCL does.
 *
 * States: IDLE -> PROTOCOL -> VERSION -> OUTPUTS -> INPUTS (once per input
 * recipe) -> STARTING -> RUNNING <-> PAUSING -> READY -> STARTING ...;
 * OUTPUTS and INPUTS are skipped when there is nothing to set up, STARTING
 * when RTL_RTDE_CLIENT_NO_START is set (the client then rests in READY).
 * Any fatal error leads to FAILED, the peer closing to CLOSED; from there
 * (and from anywhere) rtl_rtde_client_connected() starts over on a new
 * connection, with the counters kept.
 *
 * Events: each call of rtl_rtde_client_next() returns at most one event:
 * a DATA package of the output recipe (fields to decode, controller
 * timestamp and control step when the recipe has them, packages skipped
 * just before it), a TEXT message (also logged through rtl_log at its
 * level), a STATE change, or an ERROR. Errors carry -errno, a flag saying
 * whether they are fatal, and a message that names the cause and the fix.
 * Non-fatal errors (a data package of another recipe id or of the wrong
 * size, a malformed package, a package nobody asked for) drop the package
 * and count it, each under its own name in struct rtl_rtde_client_stats.
 * The event is the report: fatal errors go to rtl_log() at debug level
 * only, so a program that prints the event does not print them twice.
 *
 * Loss accounting: the controller skips packages when it is short of CPU
 * and sends only the newest. With `control_step` (UINT64, control cycles)
 * in the output recipe the client counts them exactly from its steps,
 * otherwise from `timestamp` (DOUBLE, seconds, in whole control periods):
 * one package every N control cycles, N = max(1, floor(max / requested))
 * with max = 125 Hz for controllers of major version < 5, else 500 Hz
 * (protocol 1: N = 1). A step backwards (the controller restarted its
 * RTDE server, docs/rtde-protocol.md 6.7) is counted as a reset and the
 * baseline starts over; so does every START. Data packages the client
 * dropped (wrong size, wrong recipe id, malformed) were sent by the
 * controller: they are subtracted from the gap before the next delivered
 * package, so `skipped` counts only what the controller's clock says it
 * skipped.
 *
 * Memory: the client is one large struct (the transmit buffer and every
 * recipe) and its framer (with 64 KiB of assembly storage).
 * rtl_rtde_client_create() allocates both, touching every page, and copies
 * the configured names; rtl_rtde_client_destroy() frees them.
 *
 * Thread and RT safety: a client belongs to one thread at a time. Set-up
 * (init, create, connected, the handshake replies) formats text and may
 * log; not RT-safe. Once RUNNING, feeding and taking data packages is
 * RT-safe: no allocation, no locks, no system calls, no formatting
 * through stdio. Text messages call rtl_log() (a slow path: the loop keeps
 * them off the worker). rtl_rtde_client_encode_inputs() is RT-safe and
 * only reads the client, so a worker may call it while the rx thread
 * steps the client, once the handshake is done.
 */
#ifndef RTLOOP_RTDE_CLIENT_H
#define RTLOOP_RTDE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/stat.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/rtde_recipe.h>

RTL_BEGIN_DECLS

/* Most input recipes one client sets up. */
#define RTL_RTDE_CLIENT_MAX_INPUTS 8
/* Default time a reply may take. */
#define RTL_RTDE_CLIENT_REPLY_TIMEOUT_NS INT64_C(2000000000)
/* Default data time-out (at least 10 output periods: see
 * rtl_rtde_client_config.data_timeout_ns). */
#define RTL_RTDE_CLIENT_DATA_TIMEOUT_NS INT64_C(1000000000)
/* Transmit buffer: the longest setup request (256 names of at most 39
 * bytes and commas) or input data package (256 VECTOR6D) fits. */
#define RTL_RTDE_CLIENT_TX_SIZE 16384
/* Bytes of an error message, NUL included (room for a recipe report). */
#define RTL_RTDE_CLIENT_ERROR_MAX (RTL_RTDE_REPORT_TEXT_MAX + 512)
/* Events one package can cause at most, with room to spare. */
#define RTL_RTDE_CLIENT_EVENT_QUEUE 4
/* rtl_rtde_client_deadline() when no reply and no data is awaited. */
#define RTL_RTDE_CLIENT_NO_DEADLINE INT64_MAX

enum rtl_rtde_client_flag {
	/* Stop after the set-up in READY; start later with
	 * rtl_rtde_client_start(). */
	RTL_RTDE_CLIENT_NO_START = 1u << 0,
	/* Do not pass controller text messages to rtl_log() (they are still
	 * returned as events). */
	RTL_RTDE_CLIENT_NO_TEXT_LOG = 1u << 1,
	/* Accept a controller whose major version UR has not shipped (4,
	 * 6 to 9, above 10), with a warning, as the product line
	 * rtl_rtde_version_line() gives (4: CB3, 6 to 9: e-Series, above 10:
	 * PolyScope X). Without it the handshake fails with
	 * -EPROTONOSUPPORT. Majors below 3 are always refused. */
	RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION = 1u << 2,
};

/*
 * What to set up. A zeroed struct plus @outputs is a working default:
 * protocol 2 (1 if refused), the controller's maximum rate, 2 s replies,
 * START at the end of the handshake.
 */
struct rtl_rtde_client_config {
	size_t size; /* sizeof(struct rtl_rtde_client_config) */
	/* Output names, comma-separated ("timestamp,actual_q"); NULL or ""
	 * for a write-only client (which then cannot START: the controller
	 * needs at least one output). */
	const char *outputs;
	/* Input recipes, each a comma-separated names list; the list ends at
	 * the first NULL. rtl_rtde_client_encode_inputs() takes the index. */
	const char *inputs[RTL_RTDE_CLIENT_MAX_INPUTS];
	/* Requested output rate in Hz; 0 = the controller's maximum. Values
	 * above the maximum are sent as the maximum. Must be 0 or >= 1. */
	double frequency;
	/* Time one reply may take; 0 = RTL_RTDE_CLIENT_REPLY_TIMEOUT_NS. */
	int64_t reply_timeout_ns;
	/* While RUNNING (from START on), the longest time without a data
	 * package of the output recipe before a fatal -ETIMEDOUT that names
	 * it: a controller that stopped sending, a dead link, or one that
	 * sends only packages the client drops (wrong size, wrong recipe id,
	 * malformed: they do not reset it). 0 = the default,
	 * RTL_RTDE_CLIENT_DATA_TIMEOUT_NS or 10 output periods, whichever is
	 * longer; < 0 = no limit. */
	int64_t data_timeout_ns;
	unsigned recipe_flags; /* enum rtl_rtde_recipe_flag */
	unsigned flags;	       /* enum rtl_rtde_client_flag */
	/* Highest protocol version to ask for: 0 or 2 = 2 (then 1), 1 = 1. */
	uint16_t protocol;
};

enum rtl_rtde_client_state_id {
	RTL_RTDE_CLIENT_IDLE = 0, /* no connection yet */
	RTL_RTDE_CLIENT_PROTOCOL, /* REQUEST_PROTOCOL_VERSION sent */
	RTL_RTDE_CLIENT_VERSION,  /* GET_URCONTROL_VERSION sent */
	RTL_RTDE_CLIENT_OUTPUTS,  /* SETUP_OUTPUTS sent */
	RTL_RTDE_CLIENT_INPUTS,	  /* a SETUP_INPUTS sent */
	RTL_RTDE_CLIENT_STARTING, /* START sent */
	RTL_RTDE_CLIENT_READY,	  /* set up, not streaming */
	RTL_RTDE_CLIENT_RUNNING,  /* streaming data packages */
	RTL_RTDE_CLIENT_PAUSING,  /* PAUSE sent */
	RTL_RTDE_CLIENT_FAILED,	  /* a fatal error: reconnect */
	RTL_RTDE_CLIENT_CLOSED,	  /* the peer closed the connection: reconnect */
	RTL_RTDE_CLIENT_STATE_COUNT,
};

/*
 * An error. Codes (negative errno) and what they mean here:
 *   -ETIMEDOUT        no reply within the reply timeout, or no data
 *                     within the data timeout (fatal).
 *   -EPROTONOSUPPORT  the controller refused protocol 2 and 1, or reported
 *                     a major version UR has not shipped (not 3, 5 or
 *                     10) without RTL_RTDE_CLIENT_ALLOW_UNKNOWN_VERSION
 *                     (fatal).
 *   -ENOENT           a recipe field is unknown or NOT_FOUND (fatal).
 *   -EBUSY            an input came back IN_USE (fatal).
 *   -EEXIST, -E2BIG, -EINVAL  a names list that does not build (fatal).
 *   -EPERM            the controller refused START (fatal).
 *   -EPROTO           a reply of the wrong type, a controller version with
 *                     a major below 3 (0.0.0.0: no UR controller sends
 *                     it), a recipe refused without
 *                     a reason, a setup reply with other types than the
 *                     registry's, fields too new for the controller
 *                     (fatal); a package nobody asked for (not fatal).
 *   -EMSGSIZE         the stream is out of sync (fatal).
 *   -EBADMSG          a malformed package, or a data package whose fields
 *                     are not the output recipe's size (not fatal, except
 *                     a malformed reply to a request).
 *   -ENOMSG           a data package of another recipe id (not fatal).
 *   -ECONNRESET or the driver's code: the peer closed the connection.
 */
struct rtl_rtde_client_error {
	/* The code, and the cause and fix, e.g. "controller 5.12.0 rejected
	 * input recipe 1 (SETUP_INPUTS): error: the controller answered
	 * IN_USE for 'speed_slider_mask': ..." */
	struct rtl_error err;
	bool fatal;
	enum rtl_rtde_client_state_id state; /* the state it happened in */
};

enum rtl_rtde_client_event_type {
	RTL_RTDE_CLIENT_EV_DATA = 1,
	RTL_RTDE_CLIENT_EV_TEXT,
	RTL_RTDE_CLIENT_EV_STATE,
	RTL_RTDE_CLIENT_EV_ERROR,
};

/* A data package of the output recipe. */
struct rtl_rtde_client_data {
	const uint8_t *fields; /* the recipe's fields: rtl_rtde_client_decode() */
	size_t len;	       /* = the output recipe's wire_size */
	bool has_timestamp;    /* the recipe has `timestamp` */
	bool has_control_step; /* the recipe has `control_step` */
	double timestamp;      /* controller time [s] */
	uint64_t control_step; /* controller cycle count */
	uint64_t skipped;      /* packages the controller skipped just before this one */
};

/*
 * One event. Pointers (data fields, text, error) stay valid until the next
 * call of rtl_rtde_client_feed(), _next(), _poll(), _connected() or
 * _closed() on this client.
 */
struct rtl_rtde_client_event {
	enum rtl_rtde_client_event_type type;
	union {
		struct rtl_rtde_client_data data;
		struct rtl_rtde_text text; /* level: enum rtl_rtde_level */
		struct {
			enum rtl_rtde_client_state_id from, to;
		} state;
		const struct rtl_rtde_client_error *error;
	} u;
};

/* What the handshake found. Valid from READY on. */
struct rtl_rtde_handshake {
	enum rtl_rtde_protocol protocol;
	struct rtl_rtde_controller_version version;
	uint64_t controller_version; /* packed (RTL_RTDE_VERSION) */
	double max_frequency;	     /* 125 or 500 Hz */
	double requested_frequency;  /* as sent in SETUP_OUTPUTS (v2); 0 in v1 */
	unsigned divisor;	     /* N: one package every N control cycles */
	double frequency;	     /* effective: max_frequency / N */
	int64_t period_ns;	     /* N control periods */
	uint8_t output_id;	     /* 0 in v1 (no id on the wire) */
	uint8_t input_ids[RTL_RTDE_CLIENT_MAX_INPUTS];
	unsigned n_inputs;
};

/*
 * The client's counters, since create (kept across reconnects), declared
 * once: X(name, what it counts); the snapshot, the client's counters and
 * the table rtl_rtde_client_counter_fields() are made from it. Written by
 * the thread that steps the client, read by any (relaxed atomics). Every
 * dropped package is counted under its own name. New ones go at the end.
 */
#define RTL_RTDE_CLIENT_COUNTERS(X)                                                        \
	X(packages, "whole packages received")                                             \
	X(data, "data packages delivered as events")                                       \
	X(skipped, "packages the controller skipped")                                      \
	X(resets, "timestamp or control_step went backwards")                              \
	X(malformed, "packages dropped as malformed (they do not parse)")                  \
	X(wrong_recipe, "data packages of another recipe id, dropped")                     \
	X(wrong_size, "data packages of the output recipe's id and another size, dropped") \
	X(unexpected, "packages nobody asked for, dropped")                                \
	X(text, "text messages")                                                           \
	X(reconnects, "reconnects, counted by the driver")

/* A snapshot of the counters (rtl_rtde_client_stats()). Set .size. */
struct rtl_rtde_client_counters {
	size_t size;
	RTL_RTDE_CLIENT_COUNTERS(RTL_STAT_U64)
};

/* The client: opaque (rtl_rtde_client_create()). */
struct rtl_rtde_client;

/* ---- pure helpers ---------------------------------------------------------- */

/* Returns the controller's maximum output rate: 125 Hz for major < 5 (CB3),
 * else 500 Hz. RT-safe. */
RTL_API double rtl_rtde_max_frequency(uint32_t major);

/*
 * Returns N, the controller's divisor for a requested rate: one package
 * every N control cycles, N = max(1, floor(@max_hz / @requested_hz)), at
 * most 10^9; 1 when @requested_hz or @max_hz is <= 0 or NaN (the maximum
 * rate). RT-safe.
 */
RTL_API unsigned rtl_rtde_output_divisor(double max_hz, double requested_hz);

/* Returns the name of state @s: "IDLE", "PROTOCOL", ... "CLOSED"; "?" out
 * of range. RT-safe. */
RTL_API const char *rtl_rtde_client_state_name(enum rtl_rtde_client_state_id s);

/* ---- life cycle ------------------------------------------------------------ */

/*
 * A client for @cfg, which is copied with its name strings. The name lists
 * are checked against the field registry (no controller version yet), so
 * typos fail here, with the report in @err.
 * Returns 0 and sets *@out, or
 *   -EINVAL  a NULL pointer, a frequency below 1 Hz (not 0) or NaN, a
 *            negative reply timeout, protocol other than 0, 1 or 2, no outputs
 *            without RTL_RTDE_CLIENT_NO_START, or a names list that does
 *            not build (the builder's code: -ENOENT, -EEXIST, -E2BIG,
 *            -EBADMSG, -EINVAL);
 *   -ENOMEM.
 * Not RT-safe.
 */
RTL_API int rtl_rtde_client_create(struct rtl_rtde_client **out,
				   const struct rtl_rtde_client_config *cfg, struct rtl_error *err);

/* Free a client. NULL is a no-op. Not RT-safe. */
RTL_API void rtl_rtde_client_destroy(struct rtl_rtde_client *c);

/* ---- driving ---------------------------------------------------------------- */

/*
 * A new TCP connection is up at time @now (ns): forget everything of the
 * previous connection but the counters, and queue REQUEST_PROTOCOL_VERSION.
 * Returns 0, or -EINVAL for @c NULL. Not RT-safe.
 */
RTL_API int rtl_rtde_client_connected(struct rtl_rtde_client *c, int64_t now);

/*
 * The connection ended at @now: @err is 0 for an orderly close (EOF) or
 * the -errno of the failed recv/send (e.g. -ECONNRESET). Unless the client
 * had already failed or closed, queues a fatal error event that says in
 * which state the peer closed, whether a package was cut in the middle,
 * and what usually causes it; the state becomes CLOSED.
 * Returns 0, or -EINVAL for @c NULL. Not RT-safe.
 */
RTL_API int rtl_rtde_client_closed(struct rtl_rtde_client *c, int64_t now, int err);

/*
 * Bytes waiting to be sent: sets *@data and returns how many (0: none).
 * After sending some, call rtl_rtde_client_tx_done(). RT-safe.
 */
RTL_API size_t rtl_rtde_client_tx(const struct rtl_rtde_client *c, const uint8_t **data);

/* @n bytes of rtl_rtde_client_tx() have been sent (n is clamped to what
 * was waiting). RT-safe. */
RTL_API void rtl_rtde_client_tx_done(struct rtl_rtde_client *c, size_t n);

/*
 * Hand the @len bytes of one recv() to the client (not copied: they must
 * stay valid until rtl_rtde_client_next() has returned 0). Returns 0, or
 *   -EBUSY     bytes of the previous feed are not consumed yet.
 *   -ENOTCONN  the client is IDLE, FAILED or CLOSED (the bytes are
 *              ignored; call rtl_rtde_client_connected() on a new
 *              connection).
 *   -EINVAL    @c NULL, or @data NULL with @len > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_client_feed(struct rtl_rtde_client *c, const void *data, size_t len);

/*
 * The next event at time @now (ns, CLOCK_MONOTONIC or any clock used
 * consistently): events already queued, then those of the next package
 * fed, then, when the fed bytes are used up, an expired deadline. Returns
 * 1 with *@ev set, or 0 when there is nothing more (all fed bytes
 * consumed, or the client is IDLE, FAILED or CLOSED), or -EINVAL for a
 * NULL pointer. RT-safe for data packages while RUNNING; replies, text
 * messages and errors may format text and log.
 */
RTL_API int rtl_rtde_client_next(struct rtl_rtde_client *c, struct rtl_rtde_client_event *ev,
				 int64_t now);

/*
 * Check the deadline alone at @now (no new bytes): returns 1 with the
 * queued event or the timeout error in *@ev, or 0. rtl_rtde_client_next()
 * does the same once the fed bytes are used up. A driver that stopped
 * reading for a while feeds what its socket holds before it checks, or
 * packages that did arrive count as missing. Same return codes and
 * safety as rtl_rtde_client_next().
 */
RTL_API int rtl_rtde_client_poll(struct rtl_rtde_client *c, struct rtl_rtde_client_event *ev,
				 int64_t now);

/* Returns the absolute time by which the pending reply (or, while RUNNING, the next
 * data package) must arrive; RTL_RTDE_CLIENT_NO_DEADLINE if none.
 * A driver sleeps at most until then. RT-safe. */
RTL_API int64_t rtl_rtde_client_deadline(const struct rtl_rtde_client *c);

/*
 * Queue START (resume after a pause, or the first start with
 * RTL_RTDE_CLIENT_NO_START) at @now. Returns 0, or
 *   -EALREADY  already RUNNING or STARTING.
 *   -EBUSY     a set-up or PAUSE reply is pending.
 *   -ENOTCONN  IDLE, FAILED or CLOSED.
 *   -EINVAL    @c NULL, or no output recipe (the controller would refuse).
 * Not RT-safe (RT-safe in practice: it formats nothing).
 */
RTL_API int rtl_rtde_client_start(struct rtl_rtde_client *c, int64_t now);

/*
 * Queue PAUSE at @now. Data packages sent before the reply are still
 * delivered; the reply leads to READY. Returns 0, or
 *   -EALREADY  already READY or PAUSING.
 *   -EBUSY     a set-up or START reply is pending.
 *   -ENOTCONN  IDLE, FAILED or CLOSED.
 *   -EINVAL    @c NULL.
 */
RTL_API int rtl_rtde_client_pause(struct rtl_rtde_client *c, int64_t now);

/* ---- data ----------------------------------------------------------------- */

/*
 * Decode the fields of DATA event @ev into frame @f (sized for
 * rtl_rtde_client_output_recipe(c)->host_size). Returns 0, or
 *   -EINVAL   a NULL pointer, @ev not a DATA event, @f too small.
 *   -EBADMSG  the fields do not match the recipe (cannot happen for an
 *             event of this client).
 * RT-safe.
 */
RTL_API int rtl_rtde_client_decode(const struct rtl_rtde_client *c, struct rtl_rtde_frame *f,
				   const struct rtl_rtde_client_event *ev);

/*
 * Encode frame @f of input recipe @idx as a whole DATA_PACKAGE with the
 * recipe id the controller gave, into @buf of capacity @cap; send it as
 * is. Returns the package size, or
 *   -EINVAL    a NULL pointer, @idx past the configured input recipes, or
 *              @f smaller than the recipe's host_size.
 *   -ENOTCONN  the recipe has no id yet (handshake not done).
 *   -ENOSPC    @cap is too small.
 * RT-safe; reads the client only.
 */
RTL_API int rtl_rtde_client_encode_inputs(const struct rtl_rtde_client *c, unsigned idx,
					  uint8_t *buf, size_t cap, const struct rtl_rtde_frame *f);

/* ---- getters (RT-safe) ----------------------------------------------------------- */

/* Returns the client's state, RTL_RTDE_CLIENT_IDLE for a NULL @c. */
RTL_API enum rtl_rtde_client_state_id rtl_rtde_client_state(const struct rtl_rtde_client *c);

/* Returns the output recipe (rebuilt for the controller's version during the
 * handshake: size frames from READY on), or NULL when there is none. */
RTL_API const struct rtl_rtde_recipe *
rtl_rtde_client_output_recipe(const struct rtl_rtde_client *c);

/* Returns input recipe @idx, or NULL past the configured ones (or for a
 * NULL @c). */
RTL_API const struct rtl_rtde_recipe *rtl_rtde_client_input_recipe(const struct rtl_rtde_client *c,
								   unsigned idx);

/* Returns what the handshake found (valid from READY on), NULL for a NULL
 * @c. */
RTL_API const struct rtl_rtde_handshake *rtl_rtde_client_info(const struct rtl_rtde_client *c);
/* A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written); any thread. Returns 0, or
 * -EINVAL (@c or @out NULL, out->size not set). RT-safe. */
RTL_API int rtl_rtde_client_stats(const struct rtl_rtde_client *c,
				  struct rtl_rtde_client_counters *out);

/* Returns the counters' table (names, what each counts, offsets in the
 * snapshot); sets *@n (may be NULL) to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_rtde_client_counter_fields(size_t *n);

/* Returns the last error (fatal or not), code 0 when none yet; NULL for a
 * NULL @c. */
RTL_API const struct rtl_rtde_client_error *
rtl_rtde_client_last_error(const struct rtl_rtde_client *c);

/* The driver reconnected: count it in stats.reconnects. */
RTL_API void rtl_rtde_client_count_reconnect(struct rtl_rtde_client *c);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_CLIENT_H */
