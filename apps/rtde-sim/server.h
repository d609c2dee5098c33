/* SPDX-License-Identifier: MIT */
/*
 * sim_server: the socket driver of rtde-sim. One thread, one epoll set,
 * one absolute-deadline timer for every client.
 *
 * Design
 * ------
 * The protocol and the controller are step functions (session.h, sim.h);
 * this file only moves bytes and time between them and the kernel:
 * - a listening TCP socket (127.0.0.1:30004 unless told otherwise; port 0
 *   picks an ephemeral port, which sim_server_port() returns, so tests
 *   run in parallel);
 * - non-blocking client sockets (TCP_NODELAY, as RTDE clients set it):
 *   every read goes to the session's framer, every answer and data package
 *   waits in the session's bounded send queue and is written as far as the
 *   socket takes it; EPOLLOUT is asked for only while bytes wait. A client
 *   that does not read fills its own queue and is closed; nobody else
 *   waits for it;
 * - one timerfd armed at an absolute CLOCK_MONOTONIC time: the wake time
 *   of the controller's next cycle (its deadline, or later by an injected
 *   fault). The thread sleeps in epoll_wait; it never spins.
 * - an eventfd to stop it, written by sim_server_stop(), which is
 *   async-signal-safe so a SIGINT handler may call it.
 * - the controller's other TCP services (ports.h): the dashboard server and
 *   the script ports, each a listener of its own and connections whose
 *   bytes go to the service's callbacks, in the same loop, so the
 *   controller state they drive has one owner;
 * - outgoing connections the controller's programs ask for
 *   (sim_conn_connect(), ports.h): queued in sim->dials by the model,
 *   made here at the next iteration with a non-blocking connect()
 *   (EPOLLOUT tells its answer; SIM_DIAL_TIMEOUT_NS bounds it), then
 *   served as the connections above, through the caller's callbacks;
 * Fault injection at this level is only how bytes leave: fragmented writes
 * (random 1..n byte pieces, one send() each) and the abortive close
 * (SO_LINGER 0, so close() sends RST) of --reset-after.
 *
 * Thread safety: the server thread owns the controller and its sessions
 * while running. sim_server_stats() may be called from any thread (it
 * copies a snapshot the loop publishes under a mutex); the controller may
 * be read directly only after sim_server_join() or before the start.
 */
#ifndef RTLSIM_SERVER_H
#define RTLSIM_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ports.h"
#include "sim.h"

struct sim_server_opts {
	const char *bind;	    /* address to listen on; NULL: "127.0.0.1" */
	uint16_t port;		    /* 0: ephemeral */
	int sndbuf;		    /* SO_SNDBUF of client sockets; 0: the kernel's */
	double duration_s;	    /* stop after this long; 0: until stopped */
	int64_t status_interval_ns; /* 0: 500 ms */
	/* The dashboard, primary, secondary, realtime and Robot API ports (ports.h,
	 * indexed by enum sim_port_kind): 0 = an ephemeral port (what a
	 * zeroed struct asks for, so tests run in parallel), > 0 = that
	 * port, < 0 = not served (a controller without it). The polyscope-x
	 * profile serves no dashboard whatever this says (PolyScope X has
	 * none on 29999), and only it serves the Robot API. */
	int32_t service_port[SIM_PORT_COUNT];
	/* Called on the server thread every status interval (NULL: never). */
	void (*status)(void *ctx, const struct sim_stats *st, int64_t now);
	void *status_ctx;
};

struct sim_server;

/*
 * Create a server around a new controller (options @sim_opts, NULL for the
 * defaults): bind and listen now, so that sim_server_port() is valid
 * when this returns. Not RT-safe.
 * Returns 0 and sets *@out, or
 *   -EINVAL        a bad option, or @bind is not an IPv4 address;
 *   -EADDRINUSE    the port is taken;
 *   -ENOMEM        out of memory;
 *   other -errno   from socket(), bind(), listen(), epoll or timerfd.
 */
int sim_server_create(struct sim_server **out, const struct sim_opts *sim_opts,
		      const struct sim_server_opts *opts);

/* The TCP port the server listens on. */
uint16_t sim_server_port(const struct sim_server *srv);

/* The port service @k listens on, or 0 when it is not served. */
uint16_t sim_server_service_port(const struct sim_server *srv, enum sim_port_kind k);

/* The controller (read it only while the server thread is not running). */
struct sim *sim_server_sim(struct sim_server *srv);

/*
 * Run the loop on the calling thread until sim_server_stop() or the
 * duration ends; then close every connection. Cycle 0 is due one period
 * after the call. Returns 0, or -errno of a failing epoll_wait or timer.
 */
int sim_server_run(struct sim_server *srv);

/* Run the loop on a new thread. Returns 0 or -errno (pthread_create). */
int sim_server_start(struct sim_server *srv);

/* Ask the loop to stop. Async-signal-safe; any thread. */
void sim_server_stop(struct sim_server *srv);

/* Wait for the thread of sim_server_start(); returns run()'s result. */
int sim_server_join(struct sim_server *srv);

/* A copy of the controller's statistics as of the loop's last iteration.
 * Any thread. */
void sim_server_stats(struct sim_server *srv, struct sim_stats *out);

/* The controller's echo round-trip and cycle wake-up histograms. Unlike the
 * rest of the controller, these may be read while the server runs: rtl_hist
 * has a single writer (the server thread) and tear-free readers. */
const struct rtl_hist *sim_server_echo_hist(struct sim_server *srv);
const struct rtl_hist *sim_server_wake_hist(struct sim_server *srv);

/*
 * rtde-sim's report as one JSON object (rtde-sim --json, docs/rtde-sim.md
 * "The report"): the configuration, the statistics as of the loop's last
 * iteration, the injected faults and both histograms, with @seconds the
 * run's length and @mem_locked and @sched (e.g. "SCHED_OTHER") what the
 * host gave the server. Any thread, while the server runs or after (it
 * reads only what may be read live). Returns 0, or -EIO when @f failed.
 */
int sim_server_report_json(struct sim_server *srv, FILE *f, double seconds, bool mem_locked,
			   const char *sched);

/* Close the sockets and free the server and its controller (after the
 * loop has returned). NULL is accepted. */
void sim_server_destroy(struct sim_server *srv);

#endif /* RTLSIM_SERVER_H */
