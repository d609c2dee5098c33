/* SPDX-License-Identifier: MIT */
/*
 * sim_udp: rtde-sim's UDP mode (`rtde-sim --udp`), a simulated
 * controller that speaks rtloop's 1 kHz UDP stream (<rtloop/udp.h>,
 * docs/udp.md) with the Doosan v1.0 state layout, driving the same UR5e
 * plant as the RTDE server (robot.h).
 *
 * Design
 * ------
 * The same split as the RTDE server: pure functions that map between the
 * wire and the robot, and one thin driver thread.
 * - sim_udp_fill_state() fills the Doosan layout from the robot,
 *   converting units: joints rad -> deg, TCP and flange m -> mm and
 *   rotation vector -> ZYZ Euler angles in deg, speeds likewise (angular
 *   velocity in deg/s about the base axes). What the plant does not model
 *   (the Coriolis and mass matrices, gravity torque alone, singularity,
 *   solution space) is zero.
 * - sim_udp_apply() turns a COMMAND into the robot's command API:
 *   speedj, speedl and stop directly (deg -> rad, mm -> m; an AUTO
 *   acceleration becomes |target - current| / target_time, or the robot's
 *   default); servoj becomes the robot's servoj tracker with a time
 *   constant of target_time / 3; servol is not modelled (-ENOTSUP: the
 *   robot stops). The datagram's sequence number is the robot's heartbeat,
 *   so the robot's 100 ms watchdog is Doosan's 0.1 s command time-out.
 * - The driver: one UDP socket, one timerfd armed at absolute deadlines
 *   t0 + k * period (never "now + period"), an eventfd to stop, epoll over
 *   the three; the thread sleeps in epoll_wait and never spins. Datagrams
 *   are read before each cycle, so a command is applied in the cycle it
 *   arrives in. Cycles that fall more than 50 behind (the host stalled us)
 *   step the robot without sending and count as overruns.
 * - One client at a time, as on a Doosan controller: the HELLO of another
 *   address is ignored (counted) while the current client has been heard
 *   from within the client time-out (1 s), and takes the session over
 *   after that silence; BYE ends the session. A silent client (monitoring
 *   only) keeps receiving the stream until then. State sequence numbers count the session's control
 * cycles from 1, so a skipped state (fault injection: skip_count of every skip_every cycles, the
 * last ones of each group) is a gap the client can count exactly.
 * - Echo: each sent state's (seq, send time) goes into a ring; a command
 *   that echoes a newer state number than any before records
 *   arrival - send time in a histogram (the round trip through the client).
 * - The controller side of Doosan's RT session rules, each a pure piece:
 *   - Loss count (set_rt_control_input's `loss`): the HELLO's loss_count
 *     N > 0 is kept for the session and echoed in the WELCOME (0: off).
 *     From the session's first accepted command on, every control cycle
 *     with no accepted command since the previous one is a miss, any
 *     command resets the run (sim_udp_loss_cycle()); more than N in a
 *     row sends ALARM LOSS and a BYE, stops the robot as a client's BYE
 *     does and ends the session. Cycles the host made us run late, in a
 *     catch-up after a stall, are the simulator's fault, not the
 *     client's: they neither count a miss nor end a run.
 *   - Command time-out: each trip of the robot's watchdog during a
 *     session sends one ALARM CMD_TIMEOUT.
 *   - Global RT limits (set_velj_rt, set_accj_rt, set_velx_rt,
 *     set_accx_rt): a LIMITS datagram merges into the session's limits
 *     (sim_udp_limits_merge(): 0 keeps a value; none at the start of
 *     a session), sim_udp_clamp() clamps each speedj / speedl
 *     velocity and acceleration above its limit (an AUTO acceleration by
 *     its derived value), and the motion goes on, as Doosan's does, with
 *     an INFO ALARM.
 *   - servol (not modelled) sends a WARN ALARM.
 *   The INFO and WARN alarms go out at most once per second per code
 *   (sim_udp_rate_ok()), on the simulated clock: cycle number x
 *   period, the clock of the states' time_stamp, so the count does not
 *   depend on how the host schedules us; the others are counted as
 *   suppressed. An ALARM's sequence number counts the session's alarms
 *   from 1 (a gap is a lost alarm); the server's BYE carries the number
 *   of the cycle that ended the session (whose state is not sent).
 *
 * Thread safety: the driver thread owns the robot while running;
 * sim_udp_stats() copies a snapshot published under a mutex, from any
 * thread; the echo histogram may be read live.
 */
#ifndef RTLSIM_UDP_H
#define RTLSIM_UDP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/hist.h>
#include <rtloop/udp.h>

#include "robot.h"

struct sim_udp_opts {
	const char *bind;	   /* NULL: "127.0.0.1" */
	uint16_t port;		   /* 0: ephemeral */
	int64_t period_ns;	   /* default 1 ms (1 kHz) */
	double duration_s;	   /* 0: until stopped */
	double start_time_s;	   /* time_stamp of cycle 0 */
	uint32_t skip_every;	   /* skip states: skip_count in every skip_every cycles */
	uint32_t skip_count;	   /* (0 counts as 1) */
	int64_t client_timeout_ns; /* silence after which another client may take over; 1 s */
	/* The plant; period_ns is set from the period above. */
	struct sim_robot_config robot;
};

struct sim_udp_stats {
	uint64_t cycles;	 /* control cycles run */
	uint64_t overruns;	 /* cycles run late without sending */
	uint64_t states_sent;	 /* state datagrams sent */
	uint64_t states_skipped; /* not sent by the skip fault */
	uint64_t send_errors;	 /* sendto() failures */
	uint64_t datagrams_in;
	uint64_t bad_in; /* malformed datagrams */
	uint64_t hellos;
	uint64_t sessions; /* sessions started */
	uint64_t rejected; /* HELLOs or commands from a second client (foreign) */
	uint64_t byes;
	uint64_t timeouts;	 /* sessions taken over after the client's silence */
	uint64_t commands;	 /* command datagrams received and accepted (in sequence) */
	uint64_t commands_lost;	 /* gaps in the command sequence numbers */
	uint64_t refused;	 /* commands the robot refused */
	uint64_t unsupported;	 /* servol (not modelled) */
	uint64_t watchdog_trips; /* the robot's 0.1 s command time-out */
	uint64_t echoes;	 /* round trips recorded */
	uint64_t echo_unmatched;
	uint64_t mode_count[RTL_UDP_MODE_COUNT]; /* commands per mode */
	uint64_t nonfinite_in; /* doubles in command datagrams that were NaN or infinite */
	/* Command datagrams dropped (not applied, not a heartbeat): */
	uint64_t stale_in;	  /* sequence number older than the newest */
	uint64_t duplicate_in;	  /* the newest sequence number again */
	uint64_t bad_target_time; /* target_time negative or not finite */
	/* Doosan's RT session rules (see the design note): */
	uint64_t loss_closed;			/* sessions ended by the loss count */
	uint64_t alarms_sent;			/* ALARM datagrams sent */
	uint64_t byes_sent;			/* BYE datagrams sent (the loss count) */
	uint64_t limits_in;			/* LIMITS datagrams applied */
	uint64_t bad_limits;			/* LIMITS dropped: a value < 0 or not finite */
	uint64_t vel_clamped;			/* speedj/speedl commands with a velocity clamped */
	uint64_t acc_clamped;			/* ... with an acceleration clamped */
	uint64_t limit_alarms_suppressed;	/* VEL/ACC_LIMIT alarms not sent (1/s per code) */
	uint64_t unsupported_alarms_suppressed; /* UNSUPPORTED alarms not sent (1/s) */
	bool client;				/* a session is on */
	struct sim_robot_summary robot;
};

struct sim_udp;

/* The defaults: 127.0.0.1:12347, 1 kHz, no faults, the robot's defaults. */
void sim_udp_opts_default(struct sim_udp_opts *o);

/*
 * Create the simulator and bind its socket now (sim_udp_port() is
 * valid on return). Returns 0 and sets *@out, or -EINVAL (bad options or
 * robot), -ENOMEM, or -errno of socket/bind/epoll/timerfd.
 */
int sim_udp_create(struct sim_udp **out, const struct sim_udp_opts *o);
uint16_t sim_udp_port(const struct sim_udp *u);
/* Run on the calling thread until stopped or the duration ends. */
int sim_udp_run(struct sim_udp *u);
int sim_udp_start(struct sim_udp *u);
/* Async-signal-safe, any thread. */
void sim_udp_stop(struct sim_udp *u);
int sim_udp_join(struct sim_udp *u);
void sim_udp_stats(struct sim_udp *u, struct sim_udp_stats *out);
const struct rtl_hist *sim_udp_echo_hist(const struct sim_udp *u);
/* The robot: read it only while the driver is not running. */
const struct sim_robot *sim_udp_robot(const struct sim_udp *u);
void sim_udp_destroy(struct sim_udp *u);

/* ---- pure pieces (unit-testable) ------------------------------------------------ */

/* Rotation matrix (row-major) to ZYZ Euler angles (rad): R = Rz(a) Ry(b)
 * Rz(c), b in [0, pi]; at b = 0 or pi, c = 0. */
void sim_udp_zyz(const double R[9], double abc[3]);

/* The Doosan v1.0 state of @r at controller time @time_s. */
void sim_udp_fill_state(const struct sim_robot *r, double time_s, struct rtl_udp_state *s);

/*
 * Apply command @c (Doosan units) with heartbeat @seq at @now_ns to @r.
 * Returns 0, -ENOTSUP (servol: the robot is told to stop instead), or the
 * robot's -EINVAL / -ESTALE.
 */
int sim_udp_apply(struct sim_robot *r, const struct rtl_udp_cmd *c, int32_t seq, int64_t now_ns);

/*
 * Limits of one session, Doosan units (struct rtl_udp_limits: 0 is no
 * limit, RTL_UDP_AUTO in a rotational value is the translational number).
 * Merge a LIMITS datagram's @in into @cur: each value that is not 0
 * replaces the one in @cur, an AUTO included (it stays derived).
 */
void sim_udp_limits_merge(struct rtl_udp_limits *cur, const struct rtl_udp_limits *in);

/* What sim_udp_clamp() clamped: the first axis of each kind, what the
 * command asked there and the limit (Doosan units). */
struct sim_udp_clamp {
	bool vel, acc;
	int vel_axis, acc_axis;
	double vel_asked, vel_limit;
	double acc_asked, acc_limit;
	bool acc_auto; /* acc_asked was derived: |dv| / target_time */
};

/*
 * Clamp the speedj or speedl command @c (Doosan units) in place to the
 * limits @l: each finite velocity above its limit (speedj: velj[i] deg/s;
 * speedl: velx[0] mm/s on x, y, z, the rotational velx[1] deg/s on the
 * rotations) to +-limit, then each acceleration above its limit (accj[i];
 * accx[0], accx[1]) to the limit. An acceleration that is AUTO (or not
 * above 0, which the plant also derives) stands for |dv| / target_time,
 * dv from the robot's target speed (@r) to the clamped velocity; with
 * target_time 0 nothing is derived (the plant's default ramp), so nothing
 * is clamped. Other modes, and non-finite values (the robot refuses
 * them), are left alone. Fills @out; returns its vel | acc. Pure.
 */
bool sim_udp_clamp(const struct rtl_udp_limits *l, const struct sim_robot *r, struct rtl_udp_cmd *c,
		   struct sim_udp_clamp *out);

/* The INFO text of a clamp (@acc: the acceleration's, else the
 * velocity's) of @mode into @buf: "speedj: acc[2] = 900 deg/s^2 is above
 * the limit 500 deg/s^2: clamped". Returns @buf. */
const char *sim_udp_clamp_text(enum rtl_udp_mode mode, const struct sim_udp_clamp *cl, bool acc,
			       char *buf, size_t len);

/* The loss count of a session (set_rt_control_input's `loss`). */
struct sim_udp_loss {
	int32_t count;	 /* N: the session ends after more than N misses; <= 0: never */
	bool armed;	 /* the session's first command arrived */
	bool fresh;	 /* a command arrived since the previous cycle */
	uint32_t misses; /* cycles in a row without one */
};

/* An accepted command arrived. */
void sim_udp_loss_command(struct sim_udp_loss *l);
/*
 * One control cycle: counts a miss (or ends the run); true when the
 * session must end: more than l->count misses in a row. A @late cycle (one
 * of a catch-up after the host stalled the simulator: not the newest one
 * due) changes nothing, as the client had no state to answer meanwhile.
 * Pure.
 */
bool sim_udp_loss_cycle(struct sim_udp_loss *l, bool late);

/* At most one event per @interval_ns: true (and the time kept) when the
 * last one let through is @interval_ns or more before @now_ns, or there
 * was none yet. Pure. */
struct sim_udp_rate {
	bool any;
	int64_t last_ns;
};
bool sim_udp_rate_ok(struct sim_udp_rate *r, int64_t now_ns, int64_t interval_ns);

/* ---- the program's UDP mode ------------------------------------------------------- */

/*
 * rtde-sim --udp's report as one JSON object (--json; docs/rtde-sim.md "UDP
 * mode"): the configuration, every counter as of the driver's last
 * snapshot, the echo histogram, with @secs the run's length. Any thread,
 * while the driver runs or after. Returns 0, or -EIO when @f failed.
 */
int sim_udp_report_json(struct sim_udp *u, FILE *f, double secs);

/*
 * rtde-sim --udp: create, run until SIGINT/SIGTERM (through
 * sim_udp_stop() from the caller's handler, see *@running) or the
 * duration, then print the report to @out (and JSON to @json when not
 * NULL). Returns 0 or -errno.
 */
int sim_udp_main(const struct sim_udp_opts *o, FILE *out, FILE *json, bool quiet,
		 struct sim_udp **running);

#endif /* RTLSIM_UDP_H */
