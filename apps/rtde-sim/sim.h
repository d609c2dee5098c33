/* SPDX-License-Identifier: MIT */
/*
 * sim: the simulated UR controller behind rtde-sim: version profiles,
 * the current value of every RTDE field, input ownership across
 * connections, the control cycle that feeds the robot and streams every
 * started client's output recipe, fault injection and the echo round trip.
 *
 * Design
 * ------
 * Everything here is a step function over explicit state and explicit
 * time; the server (server.h) is the thin driver that owns the sockets,
 * the clock and the one absolute-deadline timer.
 *
 * - Profiles (section 6.1 and 3.3 of docs/rtde-protocol.md): cb3 answers
 *   3.15.8 at 125 Hz, eseries 5.26.0 at 500 Hz, polyscope-x 10.13.0 at
 *   500 Hz (or any version given in the options). Which fields exist is the
 *   field registry's answer for that packed version
 *   (rtl_rtde_field_available()): a field newer than the profile is
 *   NOT_FOUND, exactly as on the real firmware.
 * - Values: one union rtl_rtde_value per registry entry, indexed by the
 *   entry's index. Inputs written by clients land there (and are read back
 *   by output recipes that name them); the robot plant (robot.h) reads its
 *   command registers from there and publishes its state there every cycle.
 *   A data package is built by storing each recipe field's value at its
 *   precomputed wire offset: no lookup, no allocation in the cycle.
 * - Ownership: one owner tag per registry entry (0 free, else session id +
 *   1), set when an input recipe succeeds and cleared when its connection
 *   closes; with the fieldbus option the fieldbus ranges and the standard
 *   inputs (registry flags) are IN_USE to everyone, as with EtherNet/IP.
 * - Time: control cycle k has the deadline t0 + k * period and the
 *   timestamp start_time + k * period (42 s by default, like URCL's fake
 *   server, so clients that wait for "booted" (timestamp >= 40 s) start at
 *   once; section 6.7). control_step is timestamp / period, so both
 *   count from the simulated controller start. Timestamps are computed
 *   from the integer cycle, never accumulated, so they never drift.
 * - Scheduling and faults: sim_next_wake() says when the next cycle is
 *   due (its deadline, plus a random jitter, or later while a stall or a
 *   burst holds the sender); sim_run_due() runs every cycle that is due
 *   at "now", back to back, so held cycles come out together. Skips (a
 *   busy controller) run the cycle, so the plant moves and the timestamp
 *   advances, but send no package: they are never resent. Decisions come
 *   from a seeded xorshift generator, so a run repeats with its seed.
 *   Cycles that fall far behind through no injected fault (the host
 *   stalled the simulator) are run without sending, like a busy controller
 *   skips, and counted as overruns.
 * - Echo latency: every cycle that sends remembers (cycle, send time) in a
 *   ring. An input package that writes input_double_register_N (the echo
 *   register) with the timestamp of a package the controller sent records
 *   arrival - send into a latency histogram.
 *
 * Thread safety: one thread (the server's) owns a struct sim and its
 * sessions. Nothing here blocks or sleeps.
 */
#ifndef RTLSIM_SIM_H
#define RTLSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/hist.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_fields.h>

struct sim_ft_feed;

#include "controller.h"
#include "panel.h"
#include "ports.h"
#include "robot.h"
#include "session.h"

/* Connections at most (the client limit is an option below this). */
#define SIM_MAX_SESSIONS 64
/* Default of sim_opts.handshake_timeout_ns: 5 s. */
#define SIM_HANDSHAKE_TIMEOUT_DEFAULT (5 * 1000 * 1000 * 1000LL)
/* Cycles remembered for the echo measurement (4 s at 500 Hz). */
#define SIM_ECHO_RING 2048
/* Cycles a late simulator runs back to back before it skips instead. */
#define SIM_MAX_CATCH_UP 50
/* Robot outputs published per cycle, command and I/O input fields. */
#define SIM_PUBLISH_MAX 64
#define SIM_CMD_FIELDS 13
#define SIM_IO_FIELDS 12
/* Source of the controller's text messages. */
#define SIM_TEXT_SOURCE "rtde-sim"

enum sim_profile_id {
	SIM_PROFILE_CB3 = 0,
	SIM_PROFILE_ESERIES,
	SIM_PROFILE_POLYSCOPE_X,
	SIM_PROFILE_COUNT,
};

struct sim_profile {
	const char *name; /* "cb3", "eseries", "polyscope-x" */
	struct rtl_rtde_controller_version version;
	uint32_t frequency_hz; /* control (and maximum output) rate */
};

/* The profile @id, or NULL when out of range. */
const struct sim_profile *sim_profile(enum sim_profile_id id);

/* The profile named @name, or NULL. */
const struct sim_profile *sim_profile_find(const char *name);

/* Fault injection; all zero = a well-behaved controller. */
struct sim_faults {
	uint32_t jitter_us;    /* each cycle's send is delayed by 0..jitter_us */
	uint32_t skip_every;   /* skip skip_count packages in every skip_every cycles */
	uint32_t skip_count;   /* (0 counts as 1) */
	uint32_t stall_ms;     /* every stall_every_s the sender stalls stall_ms, */
	double stall_every_s;  /* then sends what it held back to back */
	uint32_t burst;	       /* every burst_every_s, burst packages are held */
	double burst_every_s;  /* and written together (0 counts as 1 s) */
	bool fragment;	       /* the server writes in random 1..fragment_max pieces */
	uint32_t fragment_max; /* (0 counts as 7) */
	uint64_t reset_after;  /* abortive close (RST) after this many data packages */
	uint32_t text_every;   /* an INFO text after every text_every-th data package */
	uint64_t seed;
};

struct sim_opts {
	enum sim_profile_id profile;
	/* Answer this version instead of the profile's (major 0 = the
	 * profile's); field availability follows it. */
	struct rtl_rtde_controller_version version;
	unsigned max_protocol; /* 1 or 2 (0 counts as 2) */
	bool fieldbus;	       /* fieldbus ranges and standard inputs are IN_USE */
	unsigned max_clients;  /* beyond: told so, served, closed after ~1 s (0: 16) */
	/* A connection that sends no whole package for this long before its
	 * first START is closed (idle_closed), so idle connections cannot
	 * hold the client slots; 0: 5 s, < 0: never. */
	int64_t handshake_timeout_ns;
	size_t send_buffer;  /* per-client bound (0: SIM_SEND_BUFFER_DEFAULT) */
	double start_time_s; /* timestamp of cycle 0 */
	int echo_register;   /* input_double_register_N to echo, -1 = none */
	bool text_v2;	     /* controller text messages always in the v2 layout */
	struct sim_faults faults;
	/* The plant; period_ns and the message hook are set by the sim. */
	struct sim_robot_config robot;
	/* The controller around it: start state, timings, the control script. */
	struct sim_ctrl_opts ctrl;
};

/* Fill @o with the defaults: eseries, protocol 2, 16 clients, 256 KiB,
 * start at 42 s, no echo register, no faults, the robot's defaults. */
void sim_opts_default(struct sim_opts *o);

struct sim_stats {
	uint64_t cycles;	 /* control cycles run */
	uint64_t cycles_sending; /* cycles that sent to at least one client */
	uint64_t data_sent;	 /* data packages queued, all clients */
	uint64_t bytes_sent;	 /* bytes queued, all clients */
	uint64_t connections;	 /* sessions opened */
	uint64_t clients_over_limit;
	uint64_t idle_closed;	   /* closed by the handshake time-out */
	uint64_t slow_disconnects; /* closed as too slow to read */
	uint64_t desync_disconnects;
	uint64_t packages_in;
	uint64_t inputs_applied;
	uint64_t errors_answered; /* bad packages answered with an ERROR text */
	uint64_t texts_in;
	uint64_t commands_refused; /* command registers the robot refused (-EINVAL) */
	uint64_t nonfinite_in;	   /* doubles in input packages that were NaN or infinite */
	uint64_t overruns;	   /* cycles the host made us run late by > catch-up */
	/* Faults injected. */
	uint64_t jittered; /* cycles whose send was delayed */
	int64_t jitter_max_ns;
	uint64_t skipped_cycles;   /* cycles that sent to nobody by --skip-every */
	uint64_t skipped_packages; /* packages not sent to started clients */
	uint64_t stalls;
	uint64_t bursts;
	uint64_t fragments; /* writes of a fragmented package stream */
	uint64_t resets;    /* connections reset (RST) */
	uint64_t texts_injected;
	/* Echo measurement. */
	uint64_t echoes;	 /* round trips recorded */
	uint64_t echo_unmatched; /* echo values that named no remembered package */
	unsigned clients;	 /* connected now */
	unsigned streaming;	 /* started now */
	struct sim_robot_summary robot;
	struct sim_ctrl_summary ctrl;
};

struct sim_echo_slot {
	uint64_t cycle;
	int64_t sent_ns;
};

struct sim {
	struct sim_opts opts;
	uint64_t version; /* packed controller version of the profile */
	uint32_t max_hz;
	int64_t period_ns;
	int64_t start_ns;	      /* timestamp of cycle 0, in ns */
	size_t n_fields;	      /* registry entries */
	union rtl_rtde_value *values; /* per registry entry */
	uint16_t *owner;	      /* per registry entry: 0 free, else session id + 1 */
	uint8_t *role;		      /* per registry entry: command register, robot input */
	/* Registry indices resolved at init (-1: not in the registry). */
	int timestamp_idx, control_step_idx, echo_idx;
	int digital_out_idx, config_out_idx;
	int cmd_idx[SIM_CMD_FIELDS];
	int io_idx[SIM_IO_FIELDS];
	int cmd_out_idx[4];
	/* The request registers (id, kind, flags, ARG0..12) and the
	 * acknowledgement (id, state, reason, RESULT0..5). */
	int req_idx[3 + RTL_RTDE_REQ_NARG];
	int req_out_idx[3 + RTL_RTDE_REQ_NRESULT];
	int publish_idx[SIM_PUBLISH_MAX];

	struct sim_session *sessions[SIM_MAX_SESSIONS];

	/* Schedule. */
	int64_t t0;	     /* deadline of cycle 0 */
	uint64_t cycle;	     /* the next cycle to run */
	bool wake_known;     /* wake is decided for .cycle */
	int64_t wake;	     /* when .cycle is due */
	int64_t hold_until;  /* a stall or burst holds cycles due before this */
	uint64_t next_stall; /* cycle at which the next stall starts */
	uint64_t next_burst;
	uint64_t rng;

	struct sim_robot robot;
	/* A simulated F/T sensor on the flange reads the robot's wrench
	 * (ft.h): published after every cycle; NULL: none. */
	struct sim_ft_feed *ft_feed;
	struct sim_ctrl ctrl;
	struct sim_panel panel; /* what the dashboard owns (panel.h) */
	/* Outgoing connections the programs asked for (ports.h). */
	struct sim_dial dials[SIM_MAX_DIALS];

	struct sim_echo_slot echo_ring[SIM_ECHO_RING];
	struct rtl_hist echo_hist; /* send -> echo arrival, ns */
	struct rtl_hist wake_hist; /* lateness of the cycles vs. their wake time */
	struct sim_stats stats;
};

/*
 * Set up controller @sim with options @o (NULL: defaults); cycle 0 is due
 * at @t0 (CLOCK_MONOTONIC ns). @sim may be large (histograms): allocate it
 * with sim_new() or statically.
 * Returns 0, or
 *   -EINVAL  an option is out of range (profile, max_protocol, echo
 *            register, skip_count >= skip_every, a stall without period).
 *   -ENOMEM  out of memory.
 * Not RT-safe (allocates).
 */
int sim_init(struct sim *sim, const struct sim_opts *o, int64_t t0);

/* Close every session and free what sim_init() allocated. */
void sim_destroy(struct sim *sim);

/* Allocate and init (NULL on failure, *@err = -errno if @err) / destroy
 * and free. */
struct sim *sim_new(const struct sim_opts *o, int64_t t0, int *err);
void sim_free(struct sim *sim);

/* The controller version it answers: the options' override (major > 0)
 * or the profile's. The dashboard, the script ports and the Robot API
 * give it in their own forms. */
const struct rtl_rtde_controller_version *sim_version(const struct sim *sim);

/* Control period in ns (8 ms or 2 ms). */
static inline int64_t sim_period_ns(const struct sim *sim)
{
	return sim->period_ns;
}

/* The timestamp output of cycle @k, in seconds. */
double sim_timestamp(const struct sim *sim, uint64_t k);

/*
 * When the next cycle (sim->cycle) is due: its deadline, plus its jitter,
 * or the end of the stall or burst holding it. Decides (and counts) the
 * cycle's faults once; repeated calls return the same time. Pure apart
 * from that.
 */
int64_t sim_next_wake(struct sim *sim);

/*
 * Run one control cycle at time @now: step the robot with the current
 * inputs, publish its state, set timestamp and control_step, and (if @send)
 * queue a data package to every started session whose divisor selects this
 * cycle, unless the cycle is skipped by injection. Returns the number of
 * packages queued.
 */
int sim_cycle(struct sim *sim, int64_t now, bool send);

/*
 * Run every cycle due at @now (sim_next_wake() <= @now), back to back;
 * if more than SIM_MAX_CATCH_UP are late through no injected hold, the
 * older ones run without sending (counted as overruns). Returns the number
 * of cycles run.
 */
int sim_run_due(struct sim *sim, int64_t now);

/*
 * The packages of the last @n cycles run were handed to the sockets at
 * @now: make that their send time for the echo round trip, so the
 * measurement starts when the bytes leave, not before the plant step and
 * the encoding (which a bare ping-pong does not pay either).
 */
void sim_mark_sent(struct sim *sim, int n, int64_t now);

/* Copy the robot's state, timestamp and control_step of cycle @k into the
 * values array (done by sim_cycle(); tests call it after poking the
 * robot). */
void sim_publish(struct sim *sim, uint64_t k);

/*
 * Session @s has written the fields of input recipe @r into the values
 * array at time @now: pass command registers and standard outputs to the
 * robot, and record an echo if @r carries the echo register.
 */
void sim_inputs_written(struct sim *sim, struct sim_session *s, const struct sim_recipe *r,
			int64_t now);

/* Size of the next piece of a fragmented write, in 1..min(@avail, max). */
size_t sim_fragment_len(struct sim *sim, size_t avail);

/* Sessions that want closing now (close set; LIMIT only once due). */
bool sim_session_due_close(struct sim *sim, struct sim_session *s, int64_t now);

/*
 * Record an echo: @value was written to the echo register by session @s
 * at time @now. Records arrival - send when @value is the timestamp of a
 * remembered cycle (each value once per session), else counts it as
 * unmatched (0.0, the register's initial value, is ignored).
 */
void sim_echo(struct sim *sim, struct sim_session *s, double value, int64_t now);

/* Refresh stats.clients and stats.streaming and copy the stats. */
void sim_get_stats(struct sim *sim, struct sim_stats *out);

/* The values array entry of registry field @name, or NULL (tests). */
union rtl_rtde_value *sim_value(struct sim *sim, const char *name);

/* Uniform random 64 bits from the seeded generator. */
uint64_t sim_rand(struct sim *sim);

#endif /* RTLSIM_SIM_H */
