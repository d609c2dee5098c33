/* SPDX-License-Identifier: MIT */
/*
 * sim_ft: a simulated Net F/T force/torque sensor on the simulated arm's
 * flange (`rtde-sim --ft-port N`), speaking RDT over UDP (<rtloop/rdt.h>,
 * docs/netft-rdt.md) at up to 7 kHz.
 *
 * Design
 * ------
 * - The reading is the arm's: the server thread publishes the robot's
 *   wrench in the tool frame (ft_raw_wrench: the contact plane's force,
 *   with --force-noise) after every control cycle into a feed (a seqlock
 *   of six doubles, sim_ft_feed_publish()); the sensor's thread reads the
 *   newest at each of its samples. So a loop that presses the arm into
 *   the contact plane reads the press back from the sensor, at the
 *   sensor's rate (the arm's value held between control cycles, as a
 *   real sensor sees a plant that moves slower than it samples).
 * - Counts: llround(value x counts per force or torque) minus the bias
 *   (the counts at the last "set software bias" request).
 * - One thread, absolute deadlines t0 + k / rate (clock_nanosleep), no
 *   spinning; requests are read (non-blocking) before each sample. A
 *   "start" request from an address makes it the client (the stream
 *   goes to where the request came from, as the sensor does); "stop"
 *   ends the stream; a sample count > 0 ends it after that many records.
 *   Samples that fall more than 50 periods behind (the host stalled us)
 *   are dropped and counted as overruns (their rdt_sequence numbers are
 *   not used: no gap the client could blame on the network).
 * - Faults, each counted: skip (records of skip-count in every skip-every
 *   are not sent: gaps in rdt_sequence), reorder (every reorder-every-th
 *   record is held and sent after the next one), stall (nothing sent for
 *   stall-ms every stall-every s; the numbers move on), jitter (each send
 *   delayed by 0..jitter-us), reset (after reset-after records the stream
 *   restarts its numbers at 1, as a rebooted sensor does).
 *
 * Thread safety: the feed is written by one thread (the server's) and
 * read by the sensor's; sim_ft_stats() copies relaxed atomics from any
 * thread.
 */
#ifndef RTLSIM_FT_H
#define RTLSIM_FT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sim_ft_opts {
	const char *bind;			    /* NULL: 127.0.0.1 */
	uint16_t port;				    /* 0: any free port */
	double rate_hz;				    /* 0: 7000 */
	double counts_per_force, counts_per_torque; /* 0: 1e6 */
	uint32_t skip_every, skip_count;
	uint32_t reorder_every;
	uint32_t stall_ms;
	double stall_every_s;
	uint32_t jitter_us;
	uint64_t reset_after;
	uint64_t seed;
};

/* The arm's wrench for the sensor: a seqlock, one writer. */
struct sim_ft_feed {
	_Atomic uint64_t seq;
	_Atomic uint64_t w[6];
};

void sim_ft_feed_publish(struct sim_ft_feed *f, const double w[6]);
/* Returns false when no value was published yet (@w zero). */
bool sim_ft_feed_read(const struct sim_ft_feed *f, double w[6]);

#define SIM_FT_COUNTERS(X)                                                  \
	X(records, "records sent")                                          \
	X(datagrams, "datagrams sent")                                      \
	X(requests, "requests received")                                    \
	X(bad_requests, "datagrams that were not a request (ignored)")      \
	X(biases, "software bias requests")                                 \
	X(skipped, "records not sent: --ft-skip-every")                     \
	X(reordered, "records sent after the next one: --ft-reorder-every") \
	X(stalls, "stalls: --ft-stall-ms")                                  \
	X(stalled, "records not sent during stalls")                        \
	X(jittered, "sends delayed: --ft-jitter-us")                        \
	X(resets, "stream restarts: --ft-reset-after")                      \
	X(overruns, "samples dropped: the host ran the sensor > 50 periods late")

struct sim_ft_stats {
#define SIM_FT_U64_(name, doc) uint64_t name;
	SIM_FT_COUNTERS(SIM_FT_U64_)
#undef SIM_FT_U64_
};

struct sim_ft;

/* Bind the socket (so a busy port fails now). Returns 0, or -errno with
 * @why filled. */
int sim_ft_create(struct sim_ft **out, const struct sim_ft_opts *o, struct sim_ft_feed *feed,
		  char *why, size_t len);
uint16_t sim_ft_port(const struct sim_ft *ft);
double sim_ft_rate(const struct sim_ft *ft);
/* Start the sensor's thread. Returns 0 or -errno. */
int sim_ft_start(struct sim_ft *ft);
/* Stop and join it (idempotent). */
void sim_ft_stop(struct sim_ft *ft);
/* Stop it, then free. */
void sim_ft_destroy(struct sim_ft *ft);
void sim_ft_stats(const struct sim_ft *ft, struct sim_ft_stats *out);
/* The counters' names and docs, in the list's order. */
extern const char *const sim_ft_counter_names[];
extern const char *const sim_ft_counter_docs[];
#define SIM_FT_N_COUNTERS (sizeof(struct sim_ft_stats) / sizeof(uint64_t))

#endif /* RTLSIM_FT_H */
