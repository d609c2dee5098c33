/* SPDX-License-Identifier: MIT */
/*
 * The model of the UR Client Library's External Control program, between
 * its files: extctl.c (the text, the connections back to the PC, the
 * reverse interface), extctl_cmd.c (the script commands, tool contact),
 * extctl_traj.c (trajectory forwarding) and extctl_urcap.c (the URCap's program node,
 * played from the dashboard). docs/rtde-sim.md, "The UR Client Library's
 * External Control", is the long form.
 *
 * Design
 * ------
 * The program is a main loop that reads one message per iteration from
 * the reverse socket and a few threads (the motion thread of the control
 * mode, the trajectory thread, the script command thread, the trajectory
 * buffer cleanup). The model keeps each thread as state and runs them all
 * once per control cycle, in the program's order: script commands, the
 * main loop (every whole message that has arrived, unless it waits for a
 * cleanup), the trajectory thread, tool contact, and last the motion the
 * cycle commands to the robot (robot.h's sim_robot_command() and
 * sim_robot_request(): never its fields).
 *
 * Sockets: the three connections are sim_conn_connect()'s; what arrives is
 * held in a bounded buffer per socket, as the controller's socket buffer,
 * and read whole messages at a time (big-endian int32, as
 * socket_read_binary_integer() reads them).
 *
 * Thread safety: the server's thread only, as struct sim.
 */
#ifndef RTLSIM_EXTCTL_H
#define RTLSIM_EXTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "robot.h"

struct sim;
struct sim_conn;

/* The sockets, in the order the program opens them. */
enum ext_sock_id { EXT_TRAJ = 0, EXT_CMD, EXT_REV, EXT_SOCKS };

/* int32 values per message: reverse, trajectory point, script command. */
#define EXT_REV_INTS 8
#define EXT_TRAJ_INTS 21
#define EXT_CMD_INTS 28

/* Socket buffers: bytes that arrived and were not read yet. */
#define EXT_REV_BUF (64u * 1024u)
#define EXT_TRAJ_BUF (512u * 1024u)
#define EXT_CMD_BUF (16u * 1024u)

/* Control modes (the reverse interface's last value). */
enum ext_mode {
	EXT_MODE_STOPPED = -2,
	EXT_MODE_UNINITIALIZED = -1,
	EXT_MODE_IDLE = 0,
	EXT_MODE_SERVOJ = 1,
	EXT_MODE_SPEEDJ = 2,
	EXT_MODE_FORWARD = 3,
	EXT_MODE_SPEEDL = 4,
	EXT_MODE_POSE = 5,
	EXT_MODE_FREEDRIVE = 6,
	EXT_MODE_TOOL_IN_CONTACT = 7,
	EXT_MODE_TORQUE = 8,
};

/* Script commands (the script command thread's list). */
enum ext_cmd {
	CMD_ZERO_FTSENSOR = 0,
	CMD_SET_PAYLOAD = 1,
	CMD_SET_TOOL_VOLTAGE = 2,
	CMD_START_FORCE_MODE = 3,
	CMD_END_FORCE_MODE = 4,
	CMD_START_TOOL_CONTACT = 5,
	CMD_END_TOOL_CONTACT = 6,
	CMD_SET_FRICTION_COMPENSATION = 7,
	CMD_FT_RTDE_INPUT_ENABLE = 8,
	CMD_SET_GRAVITY = 9,
	CMD_SET_TCP_OFFSET = 10,
	CMD_SET_FRICTION_SCALES = 11,
	CMD_SET_TARGET_PAYLOAD = 12,
};

/* Tool contact's answers on the script command socket. */
#define CONTACT_SUCCESS 0
#define CONTACT_CANCELED 1

/* The trajectory result sent on the trajectory socket. */
enum ext_traj_result {
	EXT_TRAJ_SUCCESS = 0,
	EXT_TRAJ_CANCELED = 1,
	EXT_TRAJ_FAILURE = 2,
};

/* The trajectory thread's state. */
enum ext_traj_state {
	EXT_TRAJ_OFF = 0, /* not running */
	EXT_TRAJ_WAIT,	  /* reading the next point */
	EXT_TRAJ_SPLINE,  /* a spline segment: speedj every cycle */
	EXT_TRAJ_MOVE,	  /* a movej/movel point: a robot request */
};

struct ext;

struct ext_sock {
	struct ext *x;
	int handle;	    /* sim_conn_connect()'s; -1: none */
	struct sim_conn *c; /* while open */
	bool open, closed;  /* connected; ended (refused or lost) */
	int error;	    /* why it ended */
	uint16_t port;
	int32_t line;	  /* of the line that opens it */
	int attempts_max; /* connect_socket_with_retry's 5, socket_open's 1 */
	size_t len, cap;
	uint8_t *buf;
	bool overflow; /* more arrived than the buffer holds */
};

struct ext {
	/* ---- read from the text at start ---- */
	double mult_js, mult_time;
	double lookahead, gain; /* servoj's, as the text says */
	double stopj_acc;	/* STOPJ_ACCELERATION */
	double ignore_speed;	/* JOINT_IGNORE_SPEED */
	char host[48];
	double dt; /* the control period [s] (get_steptime()) */

	/* ---- connections ---- */
	bool running; /* the three are open: the main loop runs */
	int which;    /* the socket being opened */
	int attempts;
	int64_t retry_at;
	struct ext_sock s[EXT_SOCKS];

	/* ---- main loop ---- */
	int32_t mode;
	int64_t read_timeout_ns; /* 0: the read does not time out */
	int64_t last_read_ns;

	/* ---- the motion thread of the mode ---- */
	int servo_state; /* -1 uninitialised, 0 idle, 1 a new setpoint */
	double servo_q[SIM_ROBOT_DOF];
	double speed_qd[SIM_ROBOT_DOF], twist[SIM_ROBOT_DOF];
	bool stopping; /* stopj/stopl until rest */
	double stop_acc;
	bool teach_pending; /* freedrive asked for while the arm stops */
	uint64_t violations;

	/* ---- the trajectory thread ---- */
	enum ext_traj_state traj;
	int32_t points_left;
	bool streaming, was_streaming, first_point, moving;
	int32_t result;
	int64_t wait_deadline;
	double co[5][SIM_ROBOT_DOF]; /* the spline's coefficients 1..5 */
	double seg_T, seg_t;
	bool seg_last;
	double spline_qd[SIM_ROBOT_DOF], spline_qdd[SIM_ROBOT_DOF];
	bool spline_cmd; /* a speedj of the spline this cycle */
	double spline_acc;
	int32_t move_id;
	/* the cleanup of unread points, and what waits for it */
	bool cleanup;
	int64_t cleanup_deadline;
	bool after_cancel; /* send CANCELED once clean and at rest */
	int32_t after_points;
	bool after_streaming;
	/* the message the main loop is processing, and its part */
	int32_t held[EXT_REV_INTS];
	int part;
	bool wait_rest; /* the main loop is in a stopj() */

	/* ---- tool contact ---- */
	bool contact_running;
	int contact_phase; /* 0 none, 1 braking, 2 moving back */
	double contact_q[SIM_ROBOT_DOF];
	int32_t contact_id;

	/* ---- the robot ---- */
	int32_t next_id, seq;
	char describe[96];

	uint8_t rev_buf[EXT_REV_BUF];
	uint8_t traj_buf[EXT_TRAJ_BUF];
	uint8_t cmd_buf[EXT_CMD_BUF];
};

/* Between the files of the model (extctl.c). */
void sim_ext_text(struct sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A runtime exception naming @fmt: the program stops. */
void sim_ext_fail(struct sim *sim, int32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The next whole message of @n int32 from socket @s into @v: true when
 * there was one. */
bool sim_ext_read(struct ext_sock *s, int32_t *v, size_t n);
/* socket_send_int(): @v as a big-endian int32 on @s (dropped when it is
 * not open, as URScript's send to a closed socket fails). */
void sim_ext_send_int(struct ext_sock *s, int32_t v);
/* A robot request of @kind with @arg (RTL_RTDE_REQ_NARG values; NULL:
 * none) and @flags; returns its identity. */
int32_t sim_ext_request(struct sim *sim, struct ext *x, int32_t kind, const double *arg,
			uint32_t flags, int64_t now);
/* The state of request @id (RTL_RTDE_REQ_STATE_NONE: another answered
 * since), @why its reason. */
int32_t sim_ext_answer(const struct sim *sim, int32_t id, int32_t *why);
/* stopj(@acc) / stopl: bring the arm to rest. */
void sim_ext_stop(struct ext *x, double acc);
/* A command the model has no model of: counted, then a runtime
 * exception naming @name (@what: where it came from). */
void sim_ext_unmodelled(struct sim *sim, int32_t line, const char *name, const char *what);
/* Is the program still playing (a failure or an end stops it)? */
bool sim_ext_alive(const struct sim *sim);

/* The script command thread: every whole command that has arrived
 * (extctl_cmd.c). */
void sim_ext_commands(struct sim *sim, struct ext *x, int64_t now);
/* Tool contact, once per cycle. */
void sim_ext_contact_step(struct sim *sim, struct ext *x, int64_t now);

/* Trajectory forwarding (extctl_traj.c). */
/* A trajectory of @points points (streaming: until STREAM_END) starts. */
void sim_ext_traj_start(struct sim *sim, struct ext *x, int32_t points, bool streaming);
/* kill thread_trajectory. */
void sim_ext_traj_kill(struct ext *x);
/* request_trajectory_cleanup(): discard the points left unread. */
void sim_ext_cleanup_request(struct ext *x, int64_t now);
/* One cycle of the cleanup: false while it still waits for points. */
bool sim_ext_cleanup_step(struct ext *x, int64_t now);
/* One cycle of the trajectory thread. */
void sim_ext_traj_tick(struct sim *sim, struct ext *x, int64_t now);

/* The URCap's program node (extctl_urcap.c): connect to the script
 * sender at @host:@port, send "request_program\n", and run the program
 * that comes back as a script port's program (sim_ctrl_program()). The
 * answer is complete when the sender closes the connection or stays quiet
 * for 100 ms after its first byte. A refusal, no answer within 5 s, or an
 * unrecognised program end in a runtime exception. @urp is the .urp that
 * plays (it stays loaded). Returns 0, or -EINVAL (@host is not an IPv4
 * address), -EMFILE (no connection slot), -ENOMEM. */
int sim_ext_urcap_play(struct sim *sim, const char *urp, const char *host, uint16_t port,
		       int64_t now);

#endif /* RTLSIM_EXTCTL_H */
