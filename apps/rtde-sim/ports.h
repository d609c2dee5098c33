/* SPDX-License-Identifier: MIT */
/*
 * sim_conn, sim_port_ops: the controller's TCP services beside
 * RTDE, as the server (server.c) runs them: the dashboard server (29999),
 * the primary (30001), secondary (30002) and realtime (30003) script
 * ports, and PolyScope X's Robot API (HTTP, 80).
 *
 * Design
 * ------
 * The server owns the sockets; a service is four callbacks over one
 * connection's bytes, on the server's thread:
 * - open() when a client connects (queue a greeting, allocate state);
 * - feed() with every chunk that arrives (the service frames it: lines for
 *   the dashboard, programs for the script ports);
 * - tick() on every loop iteration, at least once per control cycle (the
 *   primary stream's 10 Hz state, messages of the controller);
 * - close() when the connection goes (free state).
 * Output goes into the connection's bounded queue with sim_conn_write();
 * the server writes it as the socket takes it. A client that does not read
 * fills its queue (SIM_CONN_OUT_MAX) and is closed; nobody waits for it.
 * Set .close to have the connection closed once its queue is written.
 *
 * Outgoing connections: a program on the controller may open TCP
 * connections to the PC (URScript's socket_open(); the UR Client
 * Library's External Control program connects back to its reverse,
 * trajectory and script command ports). A model asks with
 * sim_conn_connect(), which only queues the request in sim->dials: the
 * model runs inside the server's loop, which must never block, so the
 * loop itself makes the connection at its next iteration with a
 * non-blocking connect() and reports through the same four callbacks:
 * - open() once connected, with c->state = the caller's ctx and
 *   c->outgoing set; feed() and tick() then run as for a served port;
 * - close() once when it fails or ends, opened or not: c->error is
 *   -ECONNREFUSED, -ETIMEDOUT (no answer within SIM_DIAL_TIMEOUT_NS),
 *   another -errno, or 0 when the peer closed in order. The request slot
 *   is free when close() runs (the caller may dial again from it);
 * - sim_conn_drop(): the controller closes it; no callback after that.
 * The caller owns ctx (close() must not assume it was allocated).
 *
 * Thread safety: the server's thread only.
 */
#ifndef RTLSIM_PORTS_H
#define RTLSIM_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim;

enum sim_port_kind {
	SIM_PORT_DASHBOARD = 0,
	SIM_PORT_PRIMARY,
	SIM_PORT_SECONDARY,
	SIM_PORT_REALTIME,
	SIM_PORT_ROBOT_API, /* PolyScope X's REST interface (robot_api.c) */
	SIM_PORT_COUNT,
};

/* The real controller's port numbers. */
#define SIM_DASHBOARD_PORT 29999
#define SIM_PRIMARY_PORT 30001
#define SIM_SECONDARY_PORT 30002
#define SIM_REALTIME_PORT 30003
#define SIM_ROBOT_API_PORT 80

/* Service connections at most, all ports together. */
#define SIM_MAX_CONNS 32
/* Bytes a connection may have waiting to be written. */
#define SIM_CONN_OUT_MAX (1u << 20)

struct sim_conn {
	enum sim_port_kind kind;
	unsigned id; /* 0 .. SIM_MAX_CONNS - 1 */
	int64_t opened_ns;
	bool close; /* close once the queue is written */
	/* The output queue: bytes [off, len) wait. */
	uint8_t *out;
	size_t off, len, cap;
	uint64_t bytes_in, bytes_out;
	void *state;   /* the service's (an outgoing connection's ctx) */
	bool outgoing; /* made by sim_conn_connect(); kind is SIM_PORT_COUNT */
	int error;     /* outgoing, in close(): why it ended (0: the peer closed) */
};

struct sim_port_ops {
	const char *name; /* "dashboard", "script", "robot-api" */
	int (*open)(struct sim *sim, struct sim_conn *c, int64_t now);
	void (*feed)(struct sim *sim, struct sim_conn *c, const uint8_t *p, size_t n, int64_t now);
	void (*tick)(struct sim *sim, struct sim_conn *c, int64_t now);
	void (*close)(struct sim *sim, struct sim_conn *c);
};

/* Outgoing connection requests at most, queued or open. */
#define SIM_MAX_DIALS 8
/* An outgoing connect() with no answer after this long fails (-ETIMEDOUT). */
#define SIM_DIAL_TIMEOUT_NS (2 * INT64_C(1000000000))

enum sim_dial_state {
	SIM_DIAL_FREE = 0,
	SIM_DIAL_QUEUED, /* asked for; the server connects at its next iteration */
	SIM_DIAL_ACTIVE, /* connecting or open: server connection .slot */
	SIM_DIAL_DROP,	 /* sim_conn_drop(): the server closes it, silently */
};

/* One outgoing connection request (struct sim's dials[]). */
struct sim_dial {
	enum sim_dial_state state;
	uint32_t addr; /* IPv4, network byte order */
	uint16_t port;
	const struct sim_port_ops *ops;
	void *ctx;
	int slot; /* the server's connection while ACTIVE */
};

/* The services (dashboard.c, primary.c, robot_api.c); the primary,
 * secondary and realtime ports are one, sim_script_ops. */
extern const struct sim_port_ops sim_dashboard_ops;
extern const struct sim_port_ops sim_script_ops;
extern const struct sim_port_ops sim_robot_api_ops;

/* The ops of port @k, or NULL. */
const struct sim_port_ops *sim_port_ops(enum sim_port_kind k);

/* The port's name ("dashboard") and the real controller's number. */
const char *sim_port_name(enum sim_port_kind k);
uint16_t sim_port_default(enum sim_port_kind k);

/* Queue @n bytes on @c. Returns 0, or -ENOBUFS when the queue would pass
 * SIM_CONN_OUT_MAX (nothing queued; the connection is marked to close)
 * or -ENOMEM. */
int sim_conn_write(struct sim_conn *c, const void *p, size_t n);

/* printf into the queue (a dashboard line). Same results. */
int sim_conn_printf(struct sim_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A close() for a service whose state is one allocation (or none): frees
 * c->state. */
void sim_conn_free_state(struct sim *sim, struct sim_conn *c);

/*
 * Ask the server to connect to @host (an IPv4 address in dots: nothing
 * may block, so no name lookup) port @port, the callbacks @ops with
 * c->state = @ctx. Returns a handle >= 0 for sim_conn_drop(), or
 *   -EINVAL  @host is not an IPv4 address, @port is 0 or @ops is NULL;
 *   -EMFILE  SIM_MAX_DIALS requests are in use.
 * The result comes later, through @ops (see the design note above).
 * Server thread only; no allocation, no system call.
 */
int sim_conn_connect(struct sim *sim, const char *host, uint16_t port,
		     const struct sim_port_ops *ops, void *ctx);

/* Close the outgoing connection @handle (queued, connecting or open) at
 * the server's next iteration; its callbacks are not called again. A
 * handle that is not in use is ignored. */
void sim_conn_drop(struct sim *sim, int handle);

/* Bytes waiting in @c's queue. */
static inline size_t sim_conn_pending(const struct sim_conn *c)
{
	return c->len - c->off;
}

#endif /* RTLSIM_PORTS_H */
