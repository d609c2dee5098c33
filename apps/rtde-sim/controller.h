/* SPDX-License-Identifier: MIT */
/*
 * sim_ctrl: the controller around rtde-sim's arm: power, brakes, the
 * safety state, remote control, the program that runs and its executor,
 * and the messages a real controller sends about them. The dashboard
 * server (dashboard.c) and the script ports (primary.c) drive it; the
 * control cycle (sim.c) lets the arm follow the command registers only
 * while the rtloop program runs.
 *
 * Design
 * ------
 * A step function over explicit time, like the rest of the simulator:
 * operations take "now", timed transitions happen in sim_ctrl_tick(),
 * which the control cycle calls before it steps the robot. Nothing here
 * blocks, sleeps or does I/O after sim_ctrl_init().
 *
 * - Robot mode, UR's numbering: POWER_OFF -> (power on) POWER_ON -> after
 *   power_on_s IDLE (powered, brakes held) -> (brake release) RUNNING after
 *   brake_release_s. Power off from any state goes to POWER_OFF and stops
 *   the program.
 * - Safety: NORMAL or PROTECTIVE_STOP. A protective stop (injected:
 *   sim_ctrl_protective_stop(), or the protective_stop_after_s fault
 *   after the program has run that long) stops the program and brings the
 *   arm to rest at once; it must be unlocked (the dashboard's "unlock
 *   protective stop"), which a real controller refuses for the first 5 s
 *   (unlock_delay_s). Unlocking does not restart the program: the client
 *   uploads it again.
 * - Remote control (e-Series): in local control the dashboard refuses
 *   what would move or start anything (power on, brake release, load,
 *   play), and a real controller ignores programs sent to its script
 *   ports; the simulator answers them with a message so a client sees why.
 * - Programs: a complete program from a script port goes to
 *   sim_ctrl_program(). The rtloop program (byte-equal to the one this
 *   build generated, or to --control-script's file, trailing whitespace
 *   ignored) starts the executor when the arm is RUNNING, safety NORMAL and
 *   (e-Series) in remote control; it replaces whatever ran, as a new
 *   program does on a real controller. Any other program is recorded (the
 *   report lists name, size and first line) and answered with a runtime
 *   exception naming the first line that differs from the rtloop program,
 *   or the line the simulator cannot run. The dashboard's "load" knows one
 *   program, rtloop_control.urp (the rtloop program in a Script node), so
 *   "load" + "play" is the pendant's path.
 * - Executor: while it runs, the client's command registers reach the
 *   robot; otherwise the arm comes to rest and the command outputs
 *   (output_int_register_24..27) keep their last values, as a real
 *   controller's registers do after a program stops: a client must see the
 *   executor echo a heartbeat it sent after the upload before it trusts the
 *   ready bit.
 * - Messages: a ring of the last SIM_CTRL_MSGS controller messages,
 *   numbered from 1; each primary or secondary connection sends those newer
 *   than the last it sent. An overwritten message is counted (msgs_lost).
 *
 * The default start state (boot = false) is today's quick-test controller:
 * powered, brakes released, remote control, the rtloop program playing.
 * boot = true starts as a real controller after boot: powered off, no
 * program.
 *
 * Thread safety: one thread (the server's) owns it, as struct sim.
 */
#ifndef RTLSIM_CONTROLLER_H
#define RTLSIM_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* UR's robot modes, safety statuses and program states, with their names:
 * the dashboard client's (enum rtl_ur_robot_mode, RTL_UR_ROBOT_MODE_*). */
#include <rtloop/ur_dashboard.h>

#include "programs.h"

struct sim;

/* Why an operation was refused (SIM_CTRL_OK: done or under way). */
enum sim_ctrl_result {
	SIM_CTRL_OK = 0,
	SIM_CTRL_NOT_REMOTE,	  /* e-Series in local control */
	SIM_CTRL_POWERED_OFF,	  /* needs power (brake release) */
	SIM_CTRL_NOT_RUNNING,	  /* needs the brakes released (play) */
	SIM_CTRL_PROTECTIVE_STOP, /* refused while in protective stop */
	SIM_CTRL_TOO_EARLY,	  /* unlock within unlock_delay_s of the stop */
	SIM_CTRL_NOT_STOPPED,	  /* unlock without a protective stop */
	SIM_CTRL_NO_PROGRAM,	  /* play with nothing loaded */
	SIM_CTRL_NOT_FOUND,	  /* load of a program that does not exist */
	SIM_CTRL_BUSY,		  /* a transition is under way (powering on) */
	SIM_CTRL_NOT_RTLOOP,	  /* a program the simulator cannot run */
};

/* Kinds of controller messages (the primary interface's robot messages). */
enum sim_ctrl_msg_kind {
	SIM_MSG_TEXT = 0,	   /* a text message (textmsg(), info) */
	SIM_MSG_RUNTIME_EXCEPTION, /* a program failed: line, column, text */
	SIM_MSG_KEY,		   /* a key message: code, title, text */
	SIM_MSG_SAFETY,		   /* the safety mode changed: code, text */
};

/* Report levels of key and safety messages, as the primary interface's. */
enum sim_ctrl_level {
	SIM_LEVEL_DEBUG = 0,
	SIM_LEVEL_INFO = 1,
	SIM_LEVEL_WARNING = 2,
	SIM_LEVEL_VIOLATION = 3,
	SIM_LEVEL_FAULT = 4,
};

#define SIM_CTRL_MSGS 64
#define SIM_CTRL_TEXT 256
#define SIM_CTRL_OTHERS 8 /* other programs recorded for the report */
#define SIM_CTRL_NAME 64

struct sim_ctrl_msg {
	uint64_t seq; /* 1, 2, ... */
	enum sim_ctrl_msg_kind kind;
	int64_t time_ns; /* controller time (the timestamp output) */
	enum sim_ctrl_level level;
	int32_t line, column;	/* runtime exception (1-based; 0 = none) */
	int32_t code, argument; /* key and safety messages */
	char title[SIM_CTRL_NAME];
	char text[SIM_CTRL_TEXT];
};

/* A program the simulator would not run, for the report. */
struct sim_ctrl_other {
	char name[SIM_CTRL_NAME]; /* after def/sec, or "" for a bare line */
	size_t size;
	char first_line[96];
	int port; /* enum sim_port_kind it came on */
};

struct sim_ctrl_opts {
	bool boot;			/* start powered off with no program */
	bool local;			/* start in local control (e-Series) */
	double power_on_s;		/* POWER_ON -> IDLE (0: 0.5 s) */
	double brake_release_s;		/* IDLE -> RUNNING (0: 0.5 s) */
	double unlock_delay_s;		/* a protective stop can be unlocked after (< 0: 5 s) */
	double protective_stop_after_s; /* fault: after the program ran this long; 0: never */
	const char *control_script;	/* the rtloop program to compare with; NULL: this build's */
	/* The .urp holding the External Control URCap's node (extctl.h):
	 * "load" takes it, "play" fetches the program from the script
	 * sender at urcap_host:urcap_port and runs it. NULL: none. */
	const char *external_control_urp; /* "external_control.urp" */
	const char *urcap_host;		  /* "127.0.0.1" */
	unsigned urcap_port;		  /* 50002 */
};

struct sim_ctrl_stats {
	uint64_t programs;	 /* complete programs received, all ports */
	uint64_t rtloop_started; /* rtloop programs that started the executor */
	uint64_t rtloop_refused; /* rtloop programs refused (not ready) */
	uint64_t others;	 /* other programs */
	uint64_t protective_stops;
	uint64_t unlocks;
	uint64_t power_ons, power_offs, brake_releases;
	uint64_t executor_stops;   /* the executor stopped (any reason) */
	uint64_t commands_ignored; /* command packages while no program ran */
	uint64_t msgs;		   /* messages queued */
	uint64_t script_floods;	   /* script-port clients cut off: no program end in bound */
	/* Other libraries' programs (programs.h), per model. */
	struct sim_prog_stats model[SIM_PROGS];
};

/* What the reports read of the controller (a copy: any thread may read it
 * through sim_server_stats()). */
struct sim_ctrl_summary {
	int32_t robot_mode, safety_mode;
	enum rtl_ur_program_state program_state;
	bool remote, boot;
	char program_name[SIM_CTRL_NAME];
	struct sim_ctrl_stats stats;
	struct sim_ctrl_other others[SIM_CTRL_OTHERS];
	uint64_t msgs_lost;
	struct sim_ctrl_msg last_exception; /* the last runtime exception (seq 0: none) */
};

struct sim_ctrl {
	struct sim_ctrl_opts opts;
	char *program; /* the rtloop program, trailing whitespace cut */
	size_t program_len;
	char program_error[SIM_CTRL_TEXT]; /* why it could not be read, or "" */

	enum rtl_ur_robot_mode robot_mode;
	enum rtl_ur_safety_status safety_mode;
	bool remote;
	enum rtl_ur_program_state program_state;
	char program_name[SIM_CTRL_NAME]; /* running or paused, or last */
	char loaded[SIM_CTRL_NAME];	  /* the dashboard's loaded .urp, or "" */
	bool executor;			  /* the rtloop program runs */
	int model;		      /* sim_progs[] index of the other program that runs, or -1 */
	int model_last;		      /* the model that ran last (its stats), 0 before any */
	void *model_state[SIM_PROGS]; /* each model's state */
	int64_t transition_ns;	      /* when POWER_ON/brake release completes */
	bool releasing;		      /* a brake release is under way */
	int64_t pstop_ns;	      /* when the protective stop happened */
	int64_t started_ns;	      /* when the executor started */
	bool pstop_fault_done;	      /* the injected stop fired this program */
	uint64_t trips_base;	      /* robot watchdog trips at program start */

	struct sim_ctrl_msg msgs[SIM_CTRL_MSGS];
	uint64_t msg_next; /* seq of the next message */
	uint64_t msgs_lost;

	struct sim_ctrl_other others[SIM_CTRL_OTHERS];
	struct sim_ctrl_stats stats;
	struct sim_ctrl_msg last_exception; /* the last runtime exception (seq 0: none) */
};

/* Fill @o: no boot, remote, 0.5 s transitions, unlock after 5 s. */
void sim_ctrl_opts_default(struct sim_ctrl_opts *o);

/* Set up @sim->ctrl from @sim->opts.ctrl (reads the control script file if
 * one is named; a file that cannot be read leaves program_error set and
 * every program "other"). Returns 0 or -ENOMEM. Not RT-safe. */
int sim_ctrl_init(struct sim *sim);
void sim_ctrl_destroy(struct sim *sim);

/* Timed transitions and the injected protective stop; called by the
 * control cycle before the robot steps. Also writes robot_mode,
 * safety_mode, runtime_state and the status bits into the robot's outputs. */
void sim_ctrl_tick(struct sim *sim, int64_t now);

/* Controller time (the timestamp output) at the current cycle, in ns. */
int64_t sim_ctrl_time_ns(const struct sim *sim);

/* Dashboard operations. Each returns SIM_CTRL_OK or why it was refused;
 * a refused operation changes nothing. */
enum sim_ctrl_result sim_ctrl_power_on(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_power_off(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_brake_release(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_unlock(struct sim *sim, int64_t now);
/* The dashboard's "restart safety": the safety system restarts, which
 * clears a protective stop of any age and leaves the arm powered off. */
enum sim_ctrl_result sim_ctrl_restart_safety(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_load(struct sim *sim, const char *name);
enum sim_ctrl_result sim_ctrl_play(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_pause(struct sim *sim, int64_t now);
enum sim_ctrl_result sim_ctrl_stop(struct sim *sim, int64_t now);
void sim_ctrl_set_remote(struct sim *sim, bool remote);

/* A protective stop now (the fault flag, tests), with @why in its message. */
void sim_ctrl_protective_stop(struct sim *sim, int64_t now, const char *why);

/*
 * A complete program @text (@len bytes, no NUL needed) arrived on script
 * port @port (enum sim_port_kind). Returns SIM_CTRL_OK when the
 * rtloop executor started; otherwise why not, with a message queued
 * (a runtime exception naming the line, or a key message saying what the
 * arm needs).
 */
enum sim_ctrl_result sim_ctrl_program(struct sim *sim, int port, const char *text, size_t len,
				      int64_t now);

/* Queue a controller message (seq and time are filled in). */
void sim_ctrl_message(struct sim *sim, const struct sim_ctrl_msg *m);

/* Message @seq, or NULL when it is not (or no longer) in the ring. */
const struct sim_ctrl_msg *sim_ctrl_msg_get(const struct sim *sim, uint64_t seq);

/* A model's program (programs.h) ended by itself (ur_rtde's stopScript):
 * the program stops, the arm comes to rest. */
void sim_ctrl_program_end(struct sim *sim);

/* A model's program failed, as URScript fails: a runtime exception naming
 * @line (1-based, 0: none) with @text, then the program stops. */
void sim_ctrl_program_fail(struct sim *sim, int32_t line, const char *text);

/* The statistics of the model that runs (or ran last). */
struct sim_prog_stats *sim_ctrl_model_stats(struct sim *sim);

/* The model that plays now, or NULL. */
static inline const struct sim_prog_ops *sim_ctrl_model(const struct sim_ctrl *c)
{
	return c->model >= 0 && c->program_state == RTL_UR_PROGRAM_PLAYING ? sim_progs[c->model]
									   : NULL;
}

/* The command registers reach the robot (the rtloop program runs). */
static inline bool sim_ctrl_executing(const struct sim_ctrl *c)
{
	return c->executor && c->program_state == RTL_UR_PROGRAM_PLAYING;
}

/* Copy what the reports read. */
void sim_ctrl_summarize(const struct sim *sim, struct sim_ctrl_summary *out);

/* What a refusal means, in a sentence. */
const char *sim_ctrl_result_text(enum sim_ctrl_result r);

#endif /* RTLSIM_CONTROLLER_H */
