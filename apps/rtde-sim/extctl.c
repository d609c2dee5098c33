// SPDX-License-Identifier: MIT
/*
 * The UR Client Library's External Control program, modelled (programs.h,
 * extctl.h; docs/rtde-sim.md, "The UR Client Library's External Control").
 *
 * The library (the base of UR's ROS 2 driver) fills its
 * external_control.urscript with the PC's address, its ports, the
 * multipliers of its fixed-point values and the servoj settings, and sends
 * it to a script port (headless mode, wrapped in "def externalControl():")
 * or hands it to the External Control URCap on request. The program then
 * connects back, in this order, to the trajectory port (50003 by
 * default), the script command port (50004) and the reverse port (50001),
 * and runs a main loop that reads 8 int32 per message from the reverse
 * socket: the read time-out in ms for the next read, six values
 * (joints, speeds, a pose, or a trajectory/freedrive action and its
 * argument) scaled by MULT_jointstate, and the control mode. A read that
 * times out, or a reverse connection that is gone, ends the program; the
 * mode MODE_STOPPED ends it in order.
 *
 * This file: recognising and reading the text, the connections, the main
 * loop with the motion thread of each mode. The script command thread and
 * tool contact: extctl_cmd.c; trajectories: extctl_traj.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_req.h>

#include "controller.h"
#include "extctl.h"
#include "kin.h"
#include "ports.h"
#include "programs.h"
#include "sim.h"

/* connect_socket_with_retry(): attempts and the time between them. */
#define CONNECT_ATTEMPTS 5
#define CONNECT_RETRY_NS (200 * INT64_C(1000000))
/* Reverse messages the main loop reads in one cycle at most. */
#define READS_PER_CYCLE 64

/* Actions in the reverse message of MODE_FORWARD and MODE_FREEDRIVE. */
#define TRAJ_RECEIVE 1
#define TRAJ_CANCEL (-1)
#define TRAJ_STREAM_START 2
#define TRAJ_STREAM_END 3
#define STREAMING_SENTINEL 2147483647
#define FREEDRIVE_START 1
#define FREEDRIVE_STOP (-1)

/* ---- the text ---------------------------------------------------------------------- */

/* The constants of the protocol this model speaks (the pinned release's
 * values): a text that gives one of them another value runs another
 * protocol, and is refused with the line that says so. */
static const struct {
	const char *name;
	int value;
} protocol[] = {
	{ "MODE_STOPPED", EXT_MODE_STOPPED },
	{ "MODE_UNINITIALIZED", EXT_MODE_UNINITIALIZED },
	{ "MODE_IDLE", EXT_MODE_IDLE },
	{ "MODE_SERVOJ", EXT_MODE_SERVOJ },
	{ "MODE_SPEEDJ", EXT_MODE_SPEEDJ },
	{ "MODE_FORWARD", EXT_MODE_FORWARD },
	{ "MODE_SPEEDL", EXT_MODE_SPEEDL },
	{ "MODE_POSE", EXT_MODE_POSE },
	{ "MODE_FREEDRIVE", EXT_MODE_FREEDRIVE },
	{ "MODE_TOOL_IN_CONTACT", EXT_MODE_TOOL_IN_CONTACT },
	{ "MODE_TORQUE", EXT_MODE_TORQUE },
	{ "REVERSE_INTERFACE_DATA_DIMENSION", EXT_REV_INTS },
	{ "SCRIPT_COMMAND_DATA_DIMENSION", EXT_CMD_INTS },
	{ "TRAJECTORY_MODE_RECEIVE", TRAJ_RECEIVE },
	{ "TRAJECTORY_MODE_CANCEL", TRAJ_CANCEL },
	{ "TRAJECTORY_MODE_STREAM_START", TRAJ_STREAM_START },
	{ "TRAJECTORY_MODE_STREAM_END", TRAJ_STREAM_END },
	{ "TRAJECTORY_RESULT_SUCCESS", EXT_TRAJ_SUCCESS },
	{ "TRAJECTORY_RESULT_CANCELED", EXT_TRAJ_CANCELED },
	{ "TRAJECTORY_RESULT_FAILURE", EXT_TRAJ_FAILURE },
	{ "ZERO_FTSENSOR", CMD_ZERO_FTSENSOR },
	{ "SET_PAYLOAD", CMD_SET_PAYLOAD },
	{ "SET_TOOL_VOLTAGE", CMD_SET_TOOL_VOLTAGE },
	{ "START_FORCE_MODE", CMD_START_FORCE_MODE },
	{ "END_FORCE_MODE", CMD_END_FORCE_MODE },
	{ "START_TOOL_CONTACT", CMD_START_TOOL_CONTACT },
	{ "END_TOOL_CONTACT", CMD_END_TOOL_CONTACT },
	{ "SET_FRICTION_COMPENSATION", CMD_SET_FRICTION_COMPENSATION },
	{ "FT_RTDE_INPUT_ENABLE", CMD_FT_RTDE_INPUT_ENABLE },
	{ "SET_GRAVITY", CMD_SET_GRAVITY },
	{ "SET_TCP_OFFSET", CMD_SET_TCP_OFFSET },
	{ "SET_FRICTION_SCALES", CMD_SET_FRICTION_SCALES },
	{ "SET_TARGET_PAYLOAD", CMD_SET_TARGET_PAYLOAD },
	{ "FREEDRIVE_MODE_START", FREEDRIVE_START },
	{ "FREEDRIVE_MODE_STOP", FREEDRIVE_STOP },
	{ "UNTIL_TOOL_CONTACT_RESULT_SUCCESS", CONTACT_SUCCESS },
	{ "UNTIL_TOOL_CONTACT_RESULT_CANCELED", CONTACT_CANCELED },
	{ "SPLINE_CUBIC", 1 },
	{ "SPLINE_QUINTIC", 2 },
	{ "MOTION_TYPE_MOVEJ", 0 },
	{ "MOTION_TYPE_MOVEL", 1 },
	{ "MOTION_TYPE_SPLINE", 51 },
};

static const char *const sock_name[EXT_SOCKS] = { "trajectory_socket", "script_command_socket",
						  "reverse_socket" };

static bool has(const char *text, size_t len, const char *what)
{
	return memmem(text, len, what, strlen(what)) != NULL;
}

static bool recognise(const char *text, size_t len)
{
	return has(text, len, "\"reverse_socket\"") &&
	       has(text, len, "socket_read_binary_integer(REVERSE_INTERFACE_DATA_DIMENSION") &&
	       has(text, len, "MULT_jointstate");
}

/* Line @n's text (leading blanks cut) into @out; false past the end. */
struct line_it {
	const char *p, *end;
	int32_t no;
};

static bool next_line(struct line_it *it, char *out, size_t cap)
{
	const char *nl;
	size_t n;

	if (it->p >= it->end)
		return false;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	n = (size_t)((nl ? nl : it->end) - it->p);
	while (n && (*it->p == ' ' || *it->p == '\t')) {
		it->p++;
		n--;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, it->p, n);
	out[n] = '\0';
	it->p = nl ? nl + 1 : it->end;
	it->no++;
	return true;
}

/* "NAME = value" at a line's start: the value, and its line. */
static bool assignment(const char *line, const char *name, double *v)
{
	size_t n = strlen(name);
	char *end;

	if (strncmp(line, name, n) || (line[n] != ' ' && line[n] != '='))
		return false;
	line += n;
	while (*line == ' ')
		line++;
	if (*line++ != '=')
		return false;
	*v = strtod(line, &end);
	return end != line;
}

static int refuse(struct sim_prog_error *err, int32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct sim_prog_error *err, int32_t line, const char *fmt, ...)
{
	va_list ap;

	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A socket's line: connect_socket_with_retry("host", port, "name") or
 * socket_open("host", port, "name"). */
static int socket_line(struct ext *x, const char *line, int32_t no, struct sim_prog_error *err)
{
	const char *p = strstr(line, "connect_socket_with_retry(\"");
	int attempts = CONNECT_ATTEMPTS;
	char host[sizeof(x->host)];
	const char *q;
	long port;
	char *end;
	int k;

	if (!p) {
		p = strstr(line, "socket_open(\"");
		attempts = 1;
	}
	for (k = 0; k < EXT_SOCKS; k++) {
		char quoted[48];

		snprintf(quoted, sizeof(quoted), "\"%s\")", sock_name[k]);
		if (strstr(line, quoted))
			break;
	}
	if (!p || k == EXT_SOCKS || x->s[k].line)
		return 0;
	p = strchr(p, '"') + 1;
	q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= sizeof(host))
		return refuse(err, no, "external_control: no host in '%.120s'", line);
	memcpy(host, p, (size_t)(q - p));
	host[q - p] = '\0';
	p = q + 1;
	while (*p == ',' || *p == ' ')
		p++;
	port = strtol(p, &end, 10);
	if (end == p || port <= 0 || port > 65535 || strstr(host, "{{"))
		return refuse(
			err, no,
			"external_control: the host and port of %s are not filled in: '%.100s'",
			sock_name[k], line);
	if (x->host[0] && strcmp(x->host, host))
		return refuse(err, no, "external_control: %s names host %s, the others %s",
			      sock_name[k], host, x->host);
	snprintf(x->host, sizeof(x->host), "%s", host);
	x->s[k].port = (uint16_t)port;
	x->s[k].line = no;
	x->s[k].attempts_max = attempts;
	return 0;
}

/* servoj(q, t=steptime, lookahead_time=L, gain=G): the settings. */
static void servoj_line(struct ext *x, const char *line)
{
	const char *p = strstr(line, "servoj(q, t=steptime,");

	if (!p)
		return;
	if ((p = strstr(line, "lookahead_time=")))
		x->lookahead = strtod(p + 15, NULL);
	if ((p = strstr(line, "gain=")))
		x->gain = strtod(p + 5, NULL);
}

static int read_text(struct sim *sim, struct ext *x, const char *text, size_t len,
		     struct sim_prog_error *err)
{
	struct line_it it = { .p = text, .end = text + len };
	char line[512];
	double v;

	x->mult_js = x->mult_time = 0;
	x->lookahead = 0.03; /* the library's defaults */
	x->gain = 2000;
	x->stopj_acc = 4.0;
	x->ignore_speed = 20.0;
	while (next_line(&it, line, sizeof(line))) {
		if (line[0] == '#')
			continue;
		if (strstr(line, "{{") && !strstr(line, "{%"))
			return refuse(err, it.no,
				      "external_control: a placeholder is not filled in: '%.120s'",
				      line);
		if (assignment(line, "MULT_jointstate", &v))
			x->mult_js = v;
		else if (assignment(line, "MULT_time", &v))
			x->mult_time = v;
		else if (assignment(line, "STOPJ_ACCELERATION", &v))
			x->stopj_acc = v;
		else if (assignment(line, "JOINT_IGNORE_SPEED", &v))
			x->ignore_speed = v;
		for (size_t i = 0; i < sizeof(protocol) / sizeof(protocol[0]); i++)
			if (assignment(line, protocol[i].name, &v) && v != protocol[i].value)
				return refuse(
					err, it.no,
					"external_control: %s = %g; rtde-sim models the protocol "
					"where it is %d",
					protocol[i].name, v, protocol[i].value);
		servoj_line(x, line);
		if (socket_line(x, line, it.no, err))
			return -EINVAL;
	}
	if (!(x->mult_js > 0) || !(x->mult_time > 0))
		return refuse(err, 0, "external_control: MULT_jointstate or MULT_time is missing");
	for (int k = 0; k < EXT_SOCKS; k++)
		if (!x->s[k].line)
			return refuse(err, 0, "external_control: the program opens no %s",
				      sock_name[k]);
	if (x->lookahead < RTL_RTDE_CMD_LOOKAHEAD_MIN ||
	    x->lookahead > RTL_RTDE_CMD_LOOKAHEAD_MAX || x->gain < RTL_RTDE_CMD_GAIN_MIN ||
	    x->gain > RTL_RTDE_CMD_GAIN_MAX)
		return refuse(err, 0, "servoj: lookahead_time %g or gain %g out of range",
			      x->lookahead, x->gain);
	(void)sim;
	return 0;
}

/* ---- helpers (extctl.h) ---------------------------------------------------------------- */

void sim_ext_text(struct sim *sim, const char *fmt, ...)
{
	struct sim_ctrl_msg m = { .kind = SIM_MSG_TEXT, .level = SIM_LEVEL_INFO };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	sim_ctrl_message(sim, &m);
}

void sim_ext_fail(struct sim *sim, int32_t line, const char *fmt, ...)
{
	char text[SIM_CTRL_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sim_ctrl_program_fail(sim, line, text);
}

void sim_ext_unmodelled(struct sim *sim, int32_t line, const char *name, const char *what)
{
	struct sim_prog_stats *st = sim_ctrl_model_stats(sim);

	st->unmodelled++;
	snprintf(st->last_unmodelled, sizeof(st->last_unmodelled), "%s", name);
	sim_ext_fail(sim, line, "external_control: %s (%s) is not modelled by rtde-sim", name,
		     what);
}

bool sim_ext_alive(const struct sim *sim)
{
	return sim_ctrl_model(&sim->ctrl) == &sim_prog_extctl;
}

static int32_t be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

bool sim_ext_read(struct ext_sock *s, int32_t *v, size_t n)
{
	size_t bytes = 4 * n;

	if (s->len < bytes)
		return false;
	for (size_t i = 0; i < n; i++)
		v[i] = be32(s->buf + 4 * i);
	memmove(s->buf, s->buf + bytes, s->len - bytes);
	s->len -= bytes;
	return true;
}

void sim_ext_send_int(struct ext_sock *s, int32_t v)
{
	uint8_t b[4] = { (uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
			 (uint8_t)((uint32_t)v >> 8), (uint8_t)v };

	if (s->open && s->c)
		sim_conn_write(s->c, b, sizeof(b));
}

int32_t sim_ext_request(struct sim *sim, struct ext *x, int32_t kind, const double *arg,
			uint32_t flags, int64_t now)
{
	struct sim_robot_req q = { .id = ++x->next_id, .kind = kind, .flags = flags };

	if (arg)
		memcpy(q.arg, arg, sizeof(q.arg));
	sim_robot_request(&sim->robot, &q, now);
	return q.id;
}

int32_t sim_ext_answer(const struct sim *sim, int32_t id, int32_t *why)
{
	const struct sim_robot *r = &sim->robot;

	*why = 0;
	if (r->req_id != id)
		return RTL_RTDE_REQ_STATE_NONE;
	*why = r->req_reason;
	return r->req_state;
}

void sim_ext_stop(struct ext *x, double acc)
{
	x->stopping = true;
	x->stop_acc = acc;
}

/* ---- the connections ------------------------------------------------------------------- */

static int sock_open(struct sim *sim, struct sim_conn *c, int64_t now)
{
	struct ext_sock *s = c->state;

	(void)sim;
	(void)now;
	s->c = c;
	s->open = true;
	return 0;
}

static void sock_feed(struct sim *sim, struct sim_conn *c, const uint8_t *p, size_t n, int64_t now)
{
	struct ext_sock *s = c->state;

	(void)sim;
	(void)now;
	if (n > s->cap - s->len) {
		s->overflow = true;
		n = s->cap - s->len;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void sock_close(struct sim *sim, struct sim_conn *c)
{
	struct ext_sock *s = c->state;

	(void)sim;
	s->c = NULL;
	s->open = false;
	s->closed = true;
	s->error = c->error;
	s->handle = -1;
}

static const struct sim_port_ops sock_ops = {
	.name = "external-control",
	.open = sock_open,
	.feed = sock_feed,
	.close = sock_close,
};

static void dial(struct sim *sim, struct ext *x, int k)
{
	struct ext_sock *s = &x->s[k];

	s->closed = false;
	s->error = 0;
	s->handle = sim_conn_connect(sim, x->host, s->port, &sock_ops, s);
	if (s->handle < 0) {
		s->closed = true;
		s->error = s->handle;
	}
}

static const char *tf(bool b)
{
	return b ? "True" : "False";
}

/* The three connections, one after the other, as the program opens them. */
static void connect_step(struct sim *sim, struct ext *x, int64_t now)
{
	struct ext_sock *s = &x->s[x->which];

	if (s->open) {
		sim_ext_text(sim, "Successfully connected to %s", sock_name[x->which]);
		if (++x->which < EXT_SOCKS) {
			x->attempts = 0;
			dial(sim, x, x->which);
			return;
		}
		x->running = true;
		x->mode = EXT_MODE_UNINITIALIZED;
		x->read_timeout_ns = 0; /* the first read does not time out */
		x->last_read_ns = now;
		sim_ext_text(sim, "ExternalControl: External control active");
		return;
	}
	if (!s->closed || now < x->retry_at)
		return;
	if (x->retry_at) {
		x->retry_at = 0;
		dial(sim, x, x->which);
		return;
	}
	if (++x->attempts < s->attempts_max) {
		x->retry_at = now + CONNECT_RETRY_NS;
		return;
	}
	/* The program's blocking popup: nobody presses Continue. */
	sim_ext_fail(sim, s->line,
		     "Error connecting to remote: Trajectory socket (%u) connected: %s, Script "
		     "command socket (%u) connected: %s, Reverse socket (%u) connected: %s "
		     "(%s: %s). Please check that the external control end at %s is running "
		     "correctly.",
		     x->s[EXT_TRAJ].port, tf(x->which > EXT_TRAJ), x->s[EXT_CMD].port,
		     tf(x->which > EXT_CMD), x->s[EXT_REV].port, tf(false), sock_name[x->which],
		     strerror(-s->error), x->host);
}

/* ---- the start ------------------------------------------------------------------------- */

static int start(struct sim *sim, void *state, const char *text, size_t len, int64_t now,
		 struct sim_prog_error *err)
{
	struct ext *x = state;
	uint8_t *bufs[EXT_SOCKS] = { x->traj_buf, x->cmd_buf, x->rev_buf };
	const size_t caps[EXT_SOCKS] = { EXT_TRAJ_BUF, EXT_CMD_BUF, EXT_REV_BUF };

	for (int k = 0; k < EXT_SOCKS; k++)
		x->s[k] = (struct ext_sock){ .x = x, .handle = -1, .buf = bufs[k], .cap = caps[k] };
	if (read_text(sim, x, text, len, err))
		return -EINVAL;
	x->dt = (double)sim_period_ns(sim) / 1e9;
	x->next_id = sim->robot.req_last + 1000;
	x->seq = sim->robot.last_seq;
	x->mode = EXT_MODE_UNINITIALIZED;
	x->servo_state = -1;
	memcpy(x->servo_q, sim->robot.target_q, sizeof(x->servo_q));
	snprintf(x->describe, sizeof(x->describe), "external_control to %s:%u", x->host,
		 x->s[EXT_REV].port);
	sim_ext_text(sim, "ExternalControl: steptime=%g", x->dt);
	dial(sim, x, EXT_TRAJ);
	(void)now;
	return 0;
}

static void stop(struct sim *sim, void *state)
{
	struct ext *x = state;

	for (int k = 0; k < EXT_SOCKS; k++) {
		sim_conn_drop(sim, x->s[k].handle);
		x->s[k].handle = -1;
		x->s[k].open = false;
		x->s[k].c = NULL;
	}
}

static const char *describe(const void *state)
{
	return ((const struct ext *)state)->describe;
}

/* ---- the main loop --------------------------------------------------------------------- */

static bool within_limits(struct sim *sim, struct ext *x, const double *from, const double *to,
			  double t)
{
	for (int i = 0; i < SIM_ROBOT_DOF; i++)
		if (fabs(to[i] - from[i]) / t > x->ignore_speed) {
			if (x->violations++ == 0)
				sim_ext_text(
					sim,
					"Velocity %g required in joint %d is exceeding the "
					"joint velocity limits. Ignoring commands until a valid "
					"command is received.",
					fabs(to[i] - from[i]) / t, i);
			return false;
		}
	return true;
}

/* set_servo_setpoint(). */
static void servo_setpoint(struct sim *sim, struct ext *x, const double *q)
{
	x->servo_state = 1;
	if (within_limits(sim, x, x->servo_q, q, x->dt) ||
	    within_limits(sim, x, sim->robot.target_q, q, x->dt)) {
		if (x->violations) {
			sim_ext_text(sim, "Received valid command. Resuming execution.");
			x->violations = 0;
		}
		memcpy(x->servo_q, q, sizeof(x->servo_q));
	}
}

/*
 * A message goes through the main loop's parts in order; the loop blocks
 * in stopj() (until the arm is at rest), in join thread_move (the old
 * thread's stopj()) and in wait_for_trajectory_cleanup(), and reads the
 * next message only once this one is through.
 */
enum { PART_NONE = 0, PART_LEAVE, PART_JOIN, PART_ENTER, PART_UPDATE, PART_START };

static bool motion_thread(int32_t mode)
{
	return mode == EXT_MODE_SERVOJ || mode == EXT_MODE_SPEEDJ || mode == EXT_MODE_SPEEDL ||
	       mode == EXT_MODE_POSE;
}

static bool blocked(const struct ext *x)
{
	return x->cleanup || (x->wait_rest && x->stopping) || x->contact_phase;
}

/* stopj() in the main loop: it waits for the arm to rest. */
static void main_stop(struct ext *x, double acc)
{
	sim_ext_stop(x, acc);
	x->wait_rest = true;
}

/* The mode the program leaves: what its branch does. */
static void leave_mode(struct sim *sim, struct ext *x, int64_t now)
{
	if (x->mode == EXT_MODE_FORWARD) {
		sim_ext_traj_kill(x);
		if (x->points_left > 0) {
			sim_ext_cleanup_request(x, now);
			main_stop(x, x->stopj_acc);
			x->after_cancel = true;
		}
	} else if (x->mode == EXT_MODE_FREEDRIVE) {
		sim_ext_text(sim, "Leaving freedrive mode");
		sim_ext_request(sim, x, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0, now);
	}
}

/* The new mode's thread starts (after the old one was joined). */
static void enter_mode(struct sim *sim, struct ext *x)
{
	if (x->mode == EXT_MODE_SERVOJ || x->mode == EXT_MODE_POSE) {
		memcpy(x->servo_q, sim->robot.target_q, sizeof(x->servo_q));
	} else if (x->mode == EXT_MODE_FORWARD) {
		main_stop(x, x->stopj_acc);
	} else if (x->mode == EXT_MODE_TORQUE) {
		sim_ext_unmodelled(sim, x->s[EXT_REV].line, "direct_torque",
				   "torque control, MODE_TORQUE");
	}
}

/* MODE_FORWARD's message: the trajectory action and its point count. */
static void forward_action(struct sim *sim, struct ext *x, int32_t action, int32_t count,
			   int64_t now)
{
	switch (action) {
	case TRAJ_RECEIVE:
	case TRAJ_STREAM_START:
		sim_ext_traj_kill(x);
		sim_ext_cleanup_request(x, now);
		x->after_streaming = action == TRAJ_STREAM_START;
		x->after_points = action == TRAJ_RECEIVE ? count : STREAMING_SENTINEL;
		x->part = PART_START;
		break;
	case TRAJ_STREAM_END:
		if (x->streaming) {
			x->points_left = count - (STREAMING_SENTINEL - x->points_left);
			x->streaming = false;
		}
		break;
	case TRAJ_CANCEL:
		sim_ext_text(sim, "cancel received");
		sim_ext_traj_kill(x);
		if (x->streaming) {
			x->points_left = count - (STREAMING_SENTINEL - x->points_left);
			x->streaming = false;
		}
		sim_ext_cleanup_request(x, now);
		main_stop(x, x->stopj_acc);
		x->after_cancel = true;
		break;
	default:
		break; /* TRAJECTORY_NOOP: a keep-alive */
	}
}

/* "Update the motion commands with new parameters". */
static void update(struct sim *sim, struct ext *x, const int32_t *p, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double v[SIM_ROBOT_DOF], q[SIM_ROBOT_DOF];

	for (int i = 0; i < SIM_ROBOT_DOF; i++)
		v[i] = p[1 + i] / x->mult_js;
	switch (x->mode) {
	case EXT_MODE_SERVOJ:
		servo_setpoint(sim, x, v);
		break;
	case EXT_MODE_SPEEDJ:
		memcpy(x->speed_qd, v, sizeof(v));
		break;
	case EXT_MODE_SPEEDL:
		memcpy(x->twist, v, sizeof(v));
		break;
	case EXT_MODE_POSE:
		if (sim_kin_inverse_dh(&r->cfg.dh, v, r->cfg.tcp_offset, x->servo_q, r->cfg.q_min,
				       r->cfg.q_max, q)) {
			sim_ext_fail(sim, x->s[EXT_REV].line,
				     "get_inverse_kin(): no solution for the pose of MODE_POSE");
			return;
		}
		servo_setpoint(sim, x, q);
		break;
	case EXT_MODE_FORWARD:
		forward_action(sim, x, p[1], p[2], now);
		break;
	case EXT_MODE_FREEDRIVE:
		if (p[1] == FREEDRIVE_START) {
			sim_ext_text(sim, "Entering freedrive mode");
			x->teach_pending = true;
		} else if (p[1] == FREEDRIVE_STOP) {
			sim_ext_text(sim, "Leaving freedrive mode");
			x->teach_pending = false;
			sim_ext_request(sim, x, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0, now);
		}
		break;
	default:
		break;
	}
}

/* Run the held message's parts until one blocks or it is through. */
static void advance(struct sim *sim, struct ext *x, int64_t now)
{
	const int32_t *p = x->held;
	int32_t old;

	while (x->part != PART_NONE && !blocked(x) && sim_ext_alive(sim)) {
		if (x->after_cancel) {
			x->after_cancel = false;
			sim_ext_send_int(&x->s[EXT_TRAJ], EXT_TRAJ_CANCELED);
		}
		x->wait_rest = false;
		switch (x->part) {
		case PART_LEAVE:
			x->part = PART_UPDATE;
			if (x->mode != p[7]) {
				leave_mode(sim, x, now);
				x->part = PART_JOIN;
			}
			break;
		case PART_JOIN:
			x->part = PART_ENTER;
			old = x->mode;
			if (old == EXT_MODE_TOOL_IN_CONTACT) {
				/* tool contact must be ended before another mode */
				if (!x->contact_running)
					x->mode = p[7];
				break;
			}
			x->mode = p[7];
			if (motion_thread(old))
				main_stop(x, x->stopj_acc); /* the old thread's stopj */
			break;
		case PART_ENTER:
			x->part = PART_UPDATE;
			enter_mode(sim, x);
			break;
		case PART_UPDATE:
			x->part = PART_NONE;
			update(sim, x, p, now);
			break;
		case PART_START:
			x->part = PART_NONE;
			sim_ext_traj_start(sim, x, x->after_points, x->after_streaming);
			break;
		}
	}
	if (x->part == PART_NONE && !blocked(x) && x->after_cancel) {
		x->after_cancel = false;
		sim_ext_send_int(&x->s[EXT_TRAJ], EXT_TRAJ_CANCELED);
	}
}

/* The main loop's reads: every whole message that has arrived; the read
 * time-out; the reverse socket that is gone. False: the program ended. */
static bool main_loop(struct sim *sim, struct ext *x, int64_t now)
{
	struct ext_sock *rev = &x->s[EXT_REV];
	int n = 0;

	for (;;) {
		if (x->part != PART_NONE || blocked(x))
			advance(sim, x, now);
		if (!sim_ext_alive(sim))
			return false;
		if (x->part != PART_NONE || blocked(x)) {
			x->last_read_ns = now; /* no read runs while it blocks */
			return true;
		}
		if (x->mode <= EXT_MODE_STOPPED) {
			sim_ext_text(sim, "ExternalControl: Stopping communication and control");
			sim_ext_text(sim, "ExternalControl: All threads ended");
			sim_ctrl_program_end(sim);
			return false;
		}
		if (n >= READS_PER_CYCLE || !sim_ext_read(rev, x->held, EXT_REV_INTS))
			break;
		n++;
		x->last_read_ns = now;
		x->read_timeout_ns = (int64_t)x->held[0] * 1000000;
		x->part = PART_LEAVE;
	}
	if (n)
		return true;
	/* A read on a closed socket returns at once with nothing: the same
	 * branch as a time-out. */
	if (rev->closed || rev->overflow ||
	    (x->read_timeout_ns > 0 && now - x->last_read_ns > x->read_timeout_ns)) {
		sim_ext_text(sim, "Socket timed out waiting for command on reverse_socket. The "
				  "script will exit now.");
		if (x->mode == EXT_MODE_FREEDRIVE)
			sim_ext_request(sim, x, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0, now);
		sim_ctrl_model_stats(sim)->watchdog_stops++;
		sim_ctrl_program_end(sim);
		return false;
	}
	return true;
}

/* ---- the cycle ----------------------------------------------------------------------- */

/* What the threads command the robot this cycle. */
static void stream(struct sim *sim, struct ext *x, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	struct sim_robot_cmd c = { .mode = RTL_RTDE_CMD_IDLE, .watchdog_ms = -1 };

	if (x->stopping && sim_robot_at_rest(r))
		x->stopping = false;
	if (x->teach_pending && !x->stopping) {
		x->teach_pending = false;
		sim_ext_request(sim, x, RTL_RTDE_REQ_TEACH_MODE, NULL, 0, now);
	}
	if (x->spline_cmd) {
		c.mode = RTL_RTDE_CMD_SPEEDJ;
		memcpy(c.param, x->spline_qd, sizeof(x->spline_qd));
		c.accel = x->spline_acc;
		x->stopping = false;
	} else if (x->stopping) {
		if (!r->teach_on) {
			c.mode = RTL_RTDE_CMD_STOP;
			c.accel = x->stop_acc;
		}
	} else if (x->mode == EXT_MODE_SERVOJ || x->mode == EXT_MODE_POSE) {
		if (x->servo_state == 0) /* no new setpoint: extrapolate */
			for (int i = 0; i < SIM_ROBOT_DOF; i++)
				x->servo_q[i] += r->target_qd[i] * x->dt;
		if (x->servo_state >= 0) {
			c.mode = RTL_RTDE_CMD_SERVOJ;
			memcpy(c.param, x->servo_q, sizeof(x->servo_q));
			c.time = x->dt;
			c.lookahead = x->lookahead;
			c.gain = x->gain;
			x->servo_state = 0;
		}
	} else if (x->mode == EXT_MODE_SPEEDJ) {
		c.mode = RTL_RTDE_CMD_SPEEDJ;
		memcpy(c.param, x->speed_qd, sizeof(x->speed_qd));
		c.accel = 40.0;
	} else if (x->mode == EXT_MODE_SPEEDL) {
		c.mode = RTL_RTDE_CMD_SPEEDL;
		memcpy(c.param, x->twist, sizeof(x->twist));
		c.accel = 40.0;
	}
	x->spline_cmd = false;
	if (!x->stopping)
		x->wait_rest = false; /* a stopj the main loop waited in is over */
	c.seq = ++x->seq;
	if (sim_robot_command(r, &c, now) == -EINVAL)
		sim->stats.commands_refused++;
}

static void tick(struct sim *sim, void *state, int64_t now)
{
	struct ext *x = state;

	if (!x->running) {
		connect_step(sim, x, now);
		if (sim_ext_alive(sim))
			stream(sim, x, now);
		return;
	}
	sim_ext_commands(sim, x, now);
	if (!sim_ext_alive(sim))
		return;
	if (x->cleanup)
		sim_ext_cleanup_step(x, now);
	if (!main_loop(sim, x, now))
		return;
	sim_ext_traj_tick(sim, x, now);
	if (!sim_ext_alive(sim))
		return;
	sim_ext_contact_step(sim, x, now);
	if (!sim_ext_alive(sim))
		return;
	stream(sim, x, now);
}

const struct sim_prog_ops sim_prog_extctl = {
	.name = "external_control",
	.state_size = sizeof(struct ext),
	.recognise = recognise,
	.start = start,
	.tick = tick,
	.stop = stop,
	.describe = describe,
};
