/* SPDX-License-Identifier: MIT */
/*
 * sim_session: one RTDE connection of the simulated controller, as a
 * step function from the bytes a client sent to the bytes it gets back.
 *
 * Design
 * ------
 * A session is the per-connection state of docs/rtde-protocol.md section
 * 3.1: the negotiated protocol version, the output recipe (fields, types,
 * wire offsets, frequency divisor, id), the input recipes (ids 1, 2, 3 ...
 * in the order of successful set-ups), the streaming flag and, through the
 * controller (sim.h), the input variables it owns. It never touches a
 * socket: sim_session_feed() takes the bytes of one read, cuts them
 * into packages with the codec's framer and appends every reply, text
 * message and (from the controller's cycle) data package to the session's
 * bounded send queue; the server writes the queue out and tells the session
 * how much went (sim_session_consumed()). So the unit tests drive the
 * whole protocol with codec-built bytes and compare the queued bytes
 * byte-exactly, without threads, sockets or sleeps.
 *
 * The send queue is the simulated controller's send buffer. It is bounded
 * (SIM_SEND_BUFFER_DEFAULT): when a package would not fit, the client
 * is not reading fast enough and the session is marked for an orderly
 * close, as a real controller closes the connection of a slow reader
 * (section 6.6). Nothing is ever dropped silently.
 *
 * Choices where the reference has no answer (section 9) are made here and
 * listed in docs/rtde-sim.md: unknown, malformed and misaddressed packages
 * are dropped and answered with an ERROR text message, the connection is
 * kept; a second SETUP_OUTPUTS replaces the first (id stays 1); set-ups
 * are accepted while started; inputs are applied while paused; an empty
 * SETUP_INPUTS gets no reply; a failed SETUP_INPUTS does not consume an id;
 * a frequency <= 0 (or NaN) makes the output recipe invalid.
 *
 * Memory: a session creates its framer (with its storage) and allocates its
 * send queue when it is opened, and its recipe tables when a set-up
 * succeeds (set-up time, never in the cycle). Thread safety: a session and
 * its controller are owned by one thread (the server's).
 */
#ifndef RTLSIM_SESSION_H
#define RTLSIM_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/rtde.h>

struct sim;

/* Per-client send buffer bound, as the controller's (section 6.6). */
#define SIM_SEND_BUFFER_DEFAULT (256u * 1024u)
/* Input recipes per connection: ids 1..255, 0 = invalid (section 3.6). */
#define SIM_MAX_INPUT_RECIPES 255
/* Recipe fields at most; the payload limit allows no more than this many
 * one-byte fields anyway. */
#define SIM_MAX_RECIPE_FIELDS 32766

/* Why a session wants its connection closed (0: it does not). */
enum sim_close {
	SIM_CLOSE_NONE = 0,
	SIM_CLOSE_SLOW,	    /* send buffer would overflow: orderly close */
	SIM_CLOSE_RESET,    /* --reset-after: abortive close (RST) */
	SIM_CLOSE_DESYNC,   /* a header declares a size below 3: stream lost */
	SIM_CLOSE_LIMIT,    /* over the client limit: closed after ~1 s */
	SIM_CLOSE_IDLE,	    /* no whole package within the handshake time-out */
	SIM_CLOSE_SHUTDOWN, /* the simulator stops */
};

/* Bytes waiting to be written to the client: [head, head + len) of buf. */
struct sim_queue {
	uint8_t *buf;
	size_t cap;
	size_t head;
	size_t len;
};

/* One recipe: registry index, type and wire offset of each field. */
struct sim_recipe {
	uint32_t n;
	uint32_t wire_size; /* bytes of the fields in a data package */
	uint16_t *fields;   /* index in the field registry */
	enum rtl_rtde_type *types;
	uint32_t *offsets; /* within the fields part of a data package */
	int echo_slot;	   /* input recipes: field index of the echo register, or -1 */
	unsigned roles;	   /* input recipes: what its fields drive (sim->role of each, OR-ed) */
};

/* What a session did, for the report. */
struct sim_session_stats {
	uint64_t packages_in;	 /* whole packages received */
	uint64_t inputs_applied; /* input data packages applied */
	uint64_t texts_in;	 /* text messages received */
	uint64_t errors;	 /* packages dropped with an ERROR text */
	uint64_t data_out;	 /* data packages queued */
	uint64_t texts_out;	 /* text messages queued (errors and injected) */
	uint64_t bytes_out;	 /* bytes queued */
};

struct sim_session {
	unsigned id; /* slot in the controller; owner tag is id + 1 */
	enum rtl_rtde_protocol proto;
	struct rtl_rtde_framer *framer;
	struct sim_queue out;

	/* Output recipe (one per connection). */
	bool has_outputs; /* a SETUP_OUTPUTS was answered */
	bool out_valid;	  /* ... and accepted (id 1) */
	uint32_t divisor; /* one package every divisor control cycles */
	double frequency; /* as requested (v2), or the maximum (v1) */
	struct sim_recipe outputs;

	/* Input recipes: inputs[i] has id i + 1. */
	unsigned n_inputs;
	struct sim_recipe inputs[SIM_MAX_INPUT_RECIPES];

	bool started;
	bool was_started;     /* a START was accepted once: the handshake is over */
	int64_t last_in;      /* when the last whole package came (or the open) */
	uint64_t start_cycle; /* first controller cycle after the accepted START */

	/* Fault injection and the echo measurement. */
	uint64_t data_since_text;
	double last_echo; /* last echoed timestamp, to count each echo once */

	enum sim_close close;
	int64_t close_at; /* for SIM_CLOSE_LIMIT: when to close */
	struct sim_session_stats stats;
};

/*
 * Open a session for a new connection at time @now on controller @sim.
 * Over the controller's client limit the session still works, but is
 * marked SIM_CLOSE_LIMIT with close_at = @now + 1 s (section 9).
 * Returns the new session (owned by @sim until sim_session_close()), or
 * NULL: no free slot (SIM_MAX_SESSIONS) or out of memory. Not RT-safe.
 */
struct sim_session *sim_session_open(struct sim *sim, int64_t now);

/*
 * Close @s: release the inputs it owns, free its memory and its slot.
 * NULL is accepted. Not RT-safe.
 */
void sim_session_close(struct sim *sim, struct sim_session *s);

/*
 * Hand the @len bytes of one read from the client to @s at time @now:
 * every whole package is handled (sim_session_handle()) and its answer
 * queued; a partial package waits in the framer.
 * Returns the number of packages handled, or
 *   -EMSGSIZE  a header declares a size below 3: the stream cannot be
 *              resynchronised; an ERROR text is queued and s->close is
 *              SIM_CLOSE_DESYNC.
 *   -ENOBUFS   an answer did not fit the send queue (s->close is
 *              SIM_CLOSE_SLOW).
 *   -EINVAL    a NULL pointer.
 */
int sim_session_feed(struct sim *sim, struct sim_session *s, const void *bytes, size_t len,
		     int64_t now);

/*
 * Handle one whole package (@len bytes at @pkg, @len equal to its header's
 * size) from the client at time @now and queue the answer, if any:
 *   'V'  accepted 1 for version 1 or 2 up to the controller's maximum;
 *   'v'  the profile's controller version, in any state;
 *   'O'  one type name (or NOT_FOUND) per name, id 1 if all are known to
 *        the profile and (v2) the frequency is > 0; the divisor is
 *        max(1, floor(max / frequency));
 *   'I'  types, NOT_FOUND or IN_USE per name; on success the next id and
 *        the fields are claimed; an empty list gets no reply;
 *   'S'  accepted if a valid output recipe exists; 'P' always accepted;
 *   'U'  the input recipe's values are written to the controller;
 *   'M'  counted, no reply;
 * anything else, or a payload that does not parse: dropped, answered with
 * an ERROR text message.
 * Returns 0, or -ENOBUFS (the answer did not fit: s->close is set), or
 * -EINVAL for a NULL pointer.
 */
int sim_session_handle(struct sim *sim, struct sim_session *s, const uint8_t *pkg, size_t len,
		       int64_t now);

/*
 * Queue a text message from the controller (level: enum rtl_rtde_level) in
 * the layout of the session's protocol version (v1 before 'V'; v2 always
 * when the controller's text_v2 option is set). Message and source are
 * truncated to 255 bytes. Returns 0, or -ENOBUFS (s->close is set).
 */
int sim_session_text(struct sim *sim, struct sim_session *s, uint8_t level, const char *message,
		     const char *source);

/*
 * Queue a data package of the session's output recipe with the controller's
 * current values (the controller's cycle calls this). Counts it.
 * Returns 0, or -ENOBUFS (s->close is set), or -EINVAL when the session has
 * no valid output recipe.
 */
int sim_session_data(struct sim *sim, struct sim_session *s);

/* The queued bytes: sets *@p to the first and returns how many. */
static inline size_t sim_session_pending(const struct sim_session *s, const uint8_t **p)
{
	*p = s->out.buf + s->out.head;
	return s->out.len;
}

/* @n of the pending bytes were written to the socket. */
void sim_session_consumed(struct sim_session *s, size_t n);

#endif /* RTLSIM_SESSION_H */
