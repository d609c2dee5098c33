// SPDX-License-Identifier: MIT
/*
 * ur_rtde's control script, modelled (programs.h; docs/rtde-sim.md,
 * "ur_rtde's control script").
 *
 * ur_rtde's RTDEControlInterface uploads one URScript program, its
 * rtde_control.script with the register offset and the controller's
 * version applied (lines marked with a version are kept or dropped for
 * the controller ur_rtde talks to), and drives it through RTDE registers:
 * - input_int_register_0 (+ offset) holds the command, 0 for none; the
 *   other input registers hold its arguments;
 * - output_int_register_0 (+ offset) is the script's state: 1 ready for a
 *   command, 2 done with it; output_int_register_1 an integer result,
 *   output_int_register_2 the progress of an asynchronous operation,
 *   output_double_register_0..5 a pose or joint result.
 * The program's main loop runs once per control cycle: it reads the
 * command; a streaming command (speedj, speedl, servoj, servol, force mode
 * and the few that read state) is taken every cycle it is there and
 * answered "ready"; any other command is taken once, "done" is written
 * when it has finished (a synchronous move after the move), and the next
 * command is taken only after the client has written 0 (the script
 * answers "ready" again). This model runs that loop, with the program's
 * threads (speed, servo, force, jog, the asynchronous move and stop) as
 * state, on the robot of robot.h: streaming commands become the robot's
 * stream modes, moves and modes its requests.
 *
 * Recognised: a program with the script's marks (its "RTDE Control Script
 * Loaded (...)" message, rtde_cmd() and process_cmd()). Run: the release
 * whose stamp is in the table below; another stamp is answered with a
 * runtime exception that names it, as a command the model does not know
 * is: the program stops and ur_rtde reports the failure it reports for a
 * script that stopped, never a silent success.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/rtde_req.h>

#include "controller.h"
#include "kin.h"
#include "programs.h"
#include "robot.h"
#include "sim.h"

#define MARK_LOADED "RTDE Control Script Loaded ("
#define N_IN_INT 8
#define N_IN_DBL 18
#define N_OUT_INT 3
#define N_OUT_DBL 6
#define HISTORY 1024 /* cycles of actual_q kept (get_actual_joint_positions_history) */
#define MAX_CMD 256
#define PATH_MAX_WP RTL_RTDE_REQ_PATH_MAX

/* The releases whose script this model runs: the stamp in its "loaded"
 * message, and the release. */
static const struct {
	const char *stamp;
	const char *release;
} releases[] = {
	{ "14.02.2024-12:23", "1.5.8" },
};

/* The script's states in output_int_register_0. */
#define STATE_READY 1
#define STATE_DONE 2

/* Command numbers (ur_rtde's RTDE::RobotCommand::Type). */
enum {
	C_MOVEJ = 1,
	C_MOVEJ_IK = 2,
	C_MOVEL = 3,
	C_MOVEL_FK = 4,
	C_FORCE_MODE = 6,
	C_FORCE_MODE_STOP = 7,
	C_ZERO_FT = 8,
	C_SPEEDJ = 9,
	C_SPEEDL = 10,
	C_SERVOJ = 11,
	C_SERVOC = 12,
	C_SPEED_STOP = 15,
	C_SERVO_STOP = 16,
	C_SET_PAYLOAD = 17,
	C_TEACH = 18,
	C_END_TEACH = 19,
	C_FORCE_DAMPING = 20,
	C_FORCE_GAIN = 21,
	C_SERVOL = 24,
	C_TOOL_CONTACT = 25,
	C_GET_STEPTIME = 26,
	C_JOINT_HISTORY = 27,
	C_TARGET_WAYPOINT = 28,
	C_SET_TCP = 29,
	C_IK_ARGS = 30,
	C_PROTECTIVE_STOP = 31,
	C_STOPL = 33,
	C_STOPJ = 34,
	C_SET_WATCHDOG = 35,
	C_POSE_SAFE = 36,
	C_JOINTS_SAFE = 37,
	C_JOINT_TORQUES = 38,
	C_POSE_TRANS = 39,
	C_GET_TCP = 40,
	C_JOG_START = 41,
	C_JOG_STOP = 42,
	C_FK_DEFAULT = 43,
	C_FK_ARGS = 44,
	C_MOVE_PATH = 45,
	C_IK_DEFAULT = 46,
	C_IS_STEADY = 47,
	C_MOVE_UNTIL_CONTACT = 51,
	C_FREEDRIVE = 52,
	C_END_FREEDRIVE = 53,
	C_FREEDRIVE_STATUS = 54,
	C_FT_RTDE_INPUT = 56,
	C_EXTERNAL_FT = 57,
	C_FLANGE_POSE = 58,
	C_SET_GRAVITY = 59,
	C_IK_HAS_SOLUTION = 60,
	C_IK_HAS_SOLUTION_ARGS = 61,
	C_CONTACT_START = 62,
	C_CONTACT_STOP = 63,
	C_CONTACT_READ = 64,
	C_STOP_SCRIPT = 255,
};

/* The names of the commands the script knows, for messages. */
static const char *const cmd_names[MAX_CMD] = {
	[C_MOVEJ] = "moveJ",
	[C_MOVEJ_IK] = "moveJ_IK",
	[C_MOVEL] = "moveL",
	[C_MOVEL_FK] = "moveL_FK",
	[C_FORCE_MODE] = "forceMode",
	[C_FORCE_MODE_STOP] = "forceModeStop",
	[C_ZERO_FT] = "zeroFtSensor",
	[C_SPEEDJ] = "speedJ",
	[C_SPEEDL] = "speedL",
	[C_SERVOJ] = "servoJ",
	[C_SERVOC] = "servoC",
	[C_SPEED_STOP] = "speedStop",
	[C_SERVO_STOP] = "servoStop",
	[C_SET_PAYLOAD] = "setPayload",
	[C_TEACH] = "teachMode",
	[C_END_TEACH] = "endTeachMode",
	[C_FORCE_DAMPING] = "forceModeSetDamping",
	[C_FORCE_GAIN] = "forceModeSetGainScaling",
	[C_SERVOL] = "servoL",
	[C_TOOL_CONTACT] = "toolContact",
	[C_GET_STEPTIME] = "getStepTime",
	[C_JOINT_HISTORY] = "getActualJointPositionsHistory",
	[C_TARGET_WAYPOINT] = "getTargetWaypoint",
	[C_SET_TCP] = "setTcp",
	[C_IK_ARGS] = "getInverseKinematics",
	[C_IK_DEFAULT] = "getInverseKinematics",
	[C_PROTECTIVE_STOP] = "triggerProtectiveStop",
	[C_STOPL] = "stopL",
	[C_STOPJ] = "stopJ",
	[C_SET_WATCHDOG] = "setWatchdog",
	[C_POSE_SAFE] = "isPoseWithinSafetyLimits",
	[C_JOINTS_SAFE] = "isJointsWithinSafetyLimits",
	[C_JOINT_TORQUES] = "getJointTorques",
	[C_POSE_TRANS] = "poseTrans",
	[C_GET_TCP] = "getTCPOffset",
	[C_JOG_START] = "jogStart",
	[C_JOG_STOP] = "jogStop",
	[C_FK_DEFAULT] = "getForwardKinematics",
	[C_FK_ARGS] = "getForwardKinematics",
	[C_MOVE_PATH] = "movePath",
	[C_IS_STEADY] = "isSteady",
	[C_MOVE_UNTIL_CONTACT] = "moveUntilContact",
	[C_FREEDRIVE] = "freedriveMode",
	[C_END_FREEDRIVE] = "endFreedriveMode",
	[C_FREEDRIVE_STATUS] = "getFreedriveStatus",
	[C_FT_RTDE_INPUT] = "ftRtdeInputEnable",
	[C_EXTERNAL_FT] = "enableExternalFtSensor",
	[C_FLANGE_POSE] = "getActualToolFlangePose",
	[C_SET_GRAVITY] = "setGravity",
	[C_IK_HAS_SOLUTION] = "getInverseKinematicsHasSolution",
	[C_IK_HAS_SOLUTION_ARGS] = "getInverseKinematicsHasSolution",
	[C_CONTACT_START] = "startContactDetection",
	[C_CONTACT_STOP] = "stopContactDetection",
	[C_CONTACT_READ] = "readContactDetection",
	[C_STOP_SCRIPT] = "stopScript",
};

static const char *cmd_name(int c)
{
	return c >= 0 && c < MAX_CMD ? cmd_names[c] : NULL;
}

/* The commands the main loop takes every cycle and answers "ready". */
static bool streaming(int c)
{
	return c == C_SERVOL || c == C_SERVOJ || c == C_SPEEDJ || c == C_SPEEDL ||
	       c == C_FORCE_MODE || c == C_TOOL_CONTACT || c == C_GET_STEPTIME ||
	       c == C_JOINT_HISTORY || c == C_JOINT_TORQUES || c == C_FLANGE_POSE;
}

/* What the main loop waits for before it writes "done". */
enum wait {
	WAIT_NONE = 0,
	WAIT_MOVE, /* the request wait_id ends */
	WAIT_REST, /* the arm is at rest (a stop) */
};

struct waypoint {
	bool linear;
	double target[6], a, v, r;
};

struct urr {
	const char *release;
	int offset; /* 0 or 24 */
	int in_int[N_IN_INT], in_dbl[N_IN_DBL], out_int[N_OUT_INT], out_dbl[N_OUT_DBL];
	int32_t cmd_line[MAX_CMD]; /* the line of each command's branch, 0: none */
	int32_t loop_line;	   /* the main loop's line */
	bool executing;		   /* a command was taken; wait for 0 */
	enum wait wait;
	int32_t wait_id;
	int wait_cmd;

	/* the program's threads */
	bool speed_on;
	int speed_type; /* 0 speedl, 1 speedj */
	double speed_target[6], speed_acc;
	bool servo_on;
	double servo_q[6], servo_t, servo_lh, servo_gain;
	bool force_on;
	double force_damping, force_gain;
	bool jog_on;
	double jog_speed[6], jog_R[9], jog_acc;
	bool stopping; /* a stop (stopj/stopl) brings the arm to rest */
	double stop_dec;
	bool move_thread; /* an asynchronous move runs */
	int32_t move_id;
	int move_seg; /* the path waypoint the progress register shows */
	bool move_is_path;
	bool stop_thread; /* an asynchronous stop runs */
	int async_wr, async_op;

	/* the RTDE input watchdog (rtde_set_watchdog) */
	bool wd_on;
	int wd_field;
	int64_t wd_period_ns, wd_last;

	/* the path injected into exec_move_path() */
	int path_n;
	struct waypoint path[PATH_MAX_WP];

	int32_t next_id, seq;
	double hist[HISTORY][6];
	uint32_t hist_n;
	char describe[64];
};

/* ---- the text --------------------------------------------------------------------------- */

static const char *find(const char *text, size_t len, const char *s)
{
	return memmem(text, len, s, strlen(s));
}

static bool recognise(const char *text, size_t len)
{
	return find(text, len, MARK_LOADED) && find(text, len, "def rtde_cmd():") &&
	       find(text, len, "def process_cmd(cmd):");
}

static int32_t line_of(const char *text, const char *p)
{
	int32_t line = 1;

	for (const char *q = text; q < p; q++)
		line += *q == '\n';
	return line;
}

/* The integer after "global @name =" in @text; -1 when absent. ur_rtde
 * injects the value after the comment that ends the line ("= # float
 * register offset\n" + "24"), so a comment and the line break are
 * skipped, as URScript's parser does. */
static long global_int(const char *text, size_t len, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "global %s =", name);
	p = find(text, len, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '#')) {
		if (*p == '#')
			while (p < text + len && *p != '\n')
				p++;
		else
			p++;
	}
	if (p >= text + len || *p < '0' || *p > '9')
		return -1;
	return strtol(p, NULL, 10);
}

/* The numbers of a URScript list "[a,b,...]" at *p (after an optional p):
 * 6 of them into @v; advances *p. */
static bool parse_list(const char **p, const char *end, double v[6], bool *pose)
{
	const char *s = *p;
	char *e;

	*pose = s < end && *s == 'p';
	if (*pose)
		s++;
	if (s >= end || *s != '[')
		return false;
	s++;
	for (int i = 0; i < 6; i++) {
		v[i] = strtod(s, &e);
		if (e == s || !isfinite(v[i]))
			return false;
		s = e;
		if (s >= end || *s != (i < 5 ? ',' : ']'))
			return false;
		s++;
	}
	*p = s;
	return true;
}

/* "name=value" after a comma. */
static bool parse_named(const char **p, const char *end, char name, double *v)
{
	const char *s = *p;
	char *e;

	if (s + 2 >= end || s[0] != ',' || s[1] != name || s[2] != '=')
		return false;
	s += 3;
	*v = strtod(s, &e);
	if (e == s || !isfinite(*v))
		return false;
	*p = e;
	return true;
}

/* The path ur_rtde injected into exec_move_path(): its movej/movel lines. */
static int read_path(struct urr *u, const char *text, size_t len, struct sim_prog_error *err)
{
	const char *p = find(text, len, "def exec_move_path():"), *end = text + len;

	if (!p)
		return 0;
	p = memchr(p, '\n', (size_t)(end - p));
	while (p && ++p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *s = p;
		struct waypoint *w;
		bool pose;

		if (!eol)
			eol = end;
		while (s < eol && (*s == ' ' || *s == '\t'))
			s++;
		if (eol - s >= 3 && !memcmp(s, "end", 3))
			return 0;
		if (s == eol || *s == '#' || !strncmp(s, "textmsg(", 8) ||
		    !strncmp(s, "signal_async_progress(", 22)) {
			p = eol;
			continue;
		}
		if (u->path_n == PATH_MAX_WP) {
			err->line = line_of(text, s);
			snprintf(err->text, sizeof(err->text),
				 "rtde-sim runs paths of at most %d waypoints", PATH_MAX_WP);
			return -EINVAL;
		}
		w = &u->path[u->path_n];
		w->linear = !strncmp(s, "movel(", 6);
		if ((!w->linear && strncmp(s, "movej(", 6)) ||
		    (s += 6, !parse_list(&s, eol, w->target, &pose)) ||
		    !parse_named(&s, eol, 'a', &w->a) || !parse_named(&s, eol, 'v', &w->v) ||
		    !parse_named(&s, eol, 'r', &w->r) || s >= eol || *s != ')' ||
		    (w->linear && !pose) || (!w->linear && pose)) {
			/* movep, movec and joint/pose mixes are not modelled */
			err->line = line_of(text, p);
			snprintf(err->text, sizeof(err->text),
				 "rtde-sim does not model this line of the path: '%.*s' (it runs "
				 "movej([q],a=,v=,r=) and movel(p[pose],a=,v=,r=))",
				 (int)(eol - p > 80 ? 80 : eol - p), p);
			return -EINVAL;
		}
		u->path_n++;
		p = eol;
	}
	return 0;
}

/* Remember the line of each "cmd == N:" branch of process_cmd(). */
static void read_lines(struct urr *u, const char *text, size_t len)
{
	const char *p = find(text, len, "def process_cmd(cmd):"), *end = text + len;
	const char *loop = find(text, len, "while keep_running:");

	u->loop_line = loop ? line_of(text, loop) : 0;
	while (p && (p = find(p, (size_t)(end - p), "cmd == ")) != NULL) {
		char *e;
		long c = strtol(p + 7, &e, 10);

		if (e < end && *e == ':' && c >= 0 && c < MAX_CMD && !u->cmd_line[c])
			u->cmd_line[c] = line_of(text, p);
		p = e;
		if (loop && p > loop)
			break;
	}
}

/* The registry index of register @n of the family @family
 * ("input_int_register_"). */
static int field(const char *family, int n)
{
	char name[48];
	const struct rtl_rtde_field *f;

	snprintf(name, sizeof(name), "%s%d", family, n);
	f = rtl_rtde_field_find(name);
	return f ? rtl_rtde_field_index(f) : -1;
}

/* ---- registers ---------------------------------------------------------------------- */

static int32_t in_int(const struct sim *sim, const struct urr *u, int i)
{
	return sim->values[u->in_int[i]].i32;
}

static double in_dbl(const struct sim *sim, const struct urr *u, int i)
{
	return sim->values[u->in_dbl[i]].d;
}

static void in_vec(const struct sim *sim, const struct urr *u, int i, double v[6])
{
	for (int k = 0; k < 6; k++)
		v[k] = in_dbl(sim, u, i + k);
}

static void out_int(struct sim *sim, const struct urr *u, int i, int32_t v)
{
	sim->values[u->out_int[i]].i32 = v;
}

static void out_vec(struct sim *sim, const struct urr *u, const double v[6])
{
	for (int k = 0; k < 6; k++)
		sim->values[u->out_dbl[k]].d = v[k];
}

/* write_async_progress_register(): bits 24-30 the operation, 16-23 a
 * count of writes, 15 running, 0-14 the progress. */
static void async_progress(struct sim *sim, struct urr *u, int value)
{
	int32_t reg;

	if (++u->async_wr > 127)
		u->async_wr = 0;
	if (value == 0 && ++u->async_op > 127)
		u->async_op = 0;
	reg = u->async_wr * 65536 + u->async_op * 16777216;
	if (value >= 0)
		reg += (value > 32767 ? 32767 : value) + 32768;
	out_int(sim, u, 2, reg);
}

/* ---- the version gates of the script ($5.4, $5.10|3.15) --------------------------------- */

static bool at_least(const struct sim *sim, uint32_t major, uint32_t minor)
{
	const struct rtl_rtde_controller_version *v = sim_version(sim);

	return v->major > major || (v->major == major && v->minor >= minor);
}

/* "$5.10|3.15": 5.10 or later, or 3.15 or later on the 3 line. */
static bool at_least_or(const struct sim *sim, uint32_t minor5, uint32_t minor3)
{
	const struct rtl_rtde_controller_version *v = sim_version(sim);

	return at_least(sim, 5, minor5) || (v->major == 3 && v->minor >= minor3);
}

/* ---- the robot ------------------------------------------------------------------------- */

static int32_t request(struct sim *sim, struct urr *u, int kind, uint32_t flags, const double *arg,
		       int n, int64_t now)
{
	struct sim_robot_req q = { .kind = kind, .flags = flags };

	if (++u->next_id == 0)
		u->next_id = 1;
	q.id = u->next_id;
	for (int i = 0; i < n && i < RTL_RTDE_REQ_NARG; i++)
		q.arg[i] = arg[i];
	sim_robot_request(&sim->robot, &q, now);
	return q.id;
}

/* The answer to request @id: its state, and the reason in *@why. */
static int32_t answer(const struct sim *sim, int32_t id, int32_t *why)
{
	const struct sim_robot *r = &sim->robot;

	if (r->req_id != id)
		return RTL_RTDE_REQ_STATE_NONE;
	*why = r->req_reason;
	return r->req_state;
}

/* A runtime exception at the command's branch: the program stops. */
static void fail(struct sim *sim, struct urr *u, int c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail(struct sim *sim, struct urr *u, int c, const char *fmt, ...)
{
	char text[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* the line of the command's branch, else the main loop's */
	sim_ctrl_program_fail(
		sim, c >= 0 && c < MAX_CMD && u->cmd_line[c] ? u->cmd_line[c] : u->loop_line, text);
}

/* A command the model does not run: reported, by name, never answered "done". */
static void unmodelled(struct sim *sim, struct urr *u, int c)
{
	struct sim_prog_stats *st = sim_ctrl_model_stats(sim);
	const char *name = cmd_name(c);

	st->unmodelled++;
	snprintf(st->last_unmodelled, sizeof(st->last_unmodelled), "%s (%d)", name ? name : "?", c);
	fail(sim, u, c,
	     "rtde-sim does not model ur_rtde's %s (command %d); the program stopped "
	     "(see docs/rtde-sim.md, \"ur_rtde's control script\")",
	     name ? name : "?", c);
}

/* A request that failed at once: the URScript call raised. */
static bool refused(struct sim *sim, struct urr *u, int c, int32_t id, const char *what)
{
	int32_t why = 0;

	if (answer(sim, id, &why) != RTL_RTDE_REQ_STATE_FAILED)
		return false;
	fail(sim, u, c, "%s failed: %s", what,
	     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
	return true;
}

static void stop_arm(struct urr *u, double dec)
{
	u->stopping = true;
	u->stop_dec = dec;
}

/* stop_async_move(): the asynchronous move's thread is killed; its move
 * brakes along its path with @dec (0: the default). Returns whether one
 * ran. */
static bool stop_async_move(struct sim *sim, struct urr *u, double dec, int64_t now)
{
	double arg[8] = { 0 };

	if (!u->move_thread)
		return false;
	arg[7] = dec;
	u->move_thread = false;
	request(sim, u, RTL_RTDE_REQ_STOP_MOVE, 0, arg, 8, now);
	async_progress(sim, u, -1);
	return true;
}

static int ik(struct sim *sim, const double pose[6], const double *near, double q[6])
{
	const struct sim_robot *r = &sim->robot;

	return sim_kin_inverse_dh(&r->cfg.dh, pose, r->tcp_offset, near ? near : r->target_q,
				  r->cfg.q_min, r->cfg.q_max, q);
}

static void pose_trans(const double a[6], const double b[6], double out[6])
{
	double ra[9], rb[9], rc[9];

	sim_robot_rotvec_to_matrix(a + 3, ra);
	sim_robot_rotvec_to_matrix(b + 3, rb);
	for (int i = 0; i < 3; i++) {
		out[i] = a[i];
		for (int k = 0; k < 3; k++)
			out[i] += ra[3 * i + k] * b[k];
		for (int j = 0; j < 3; j++) {
			rc[3 * i + j] = 0;
			for (int k = 0; k < 3; k++)
				rc[3 * i + j] += ra[3 * i + k] * rb[3 * k + j];
		}
	}
	sim_robot_matrix_to_rotvec(rc, out + 3);
}

/* Request @id moves the arm: on the move thread (@async; the progress
 * register says it started) or the main thread waits for it. */
static void follow(struct sim *sim, struct urr *u, int32_t id, bool async, bool path)
{
	u->move_is_path = path;
	u->move_seg = -1;
	if (async) {
		u->move_thread = true;
		u->move_id = id;
		async_progress(sim, u, 0);
	} else {
		u->wait = WAIT_MOVE;
		u->wait_id = id;
	}
}

/* A move (movej, movel) of the main thread or of the move thread. */
static void move(struct sim *sim, struct urr *u, int c, bool linear, const double target[6],
		 double v, double a, bool async, int64_t now)
{
	double arg[8];
	int32_t id;

	memcpy(arg, target, sizeof(double) * 6);
	arg[6] = v;
	arg[7] = a;
	stop_async_move(sim, u, 0, now);
	u->stopping = false;
	id = request(sim, u, linear ? RTL_RTDE_REQ_MOVE_L : RTL_RTDE_REQ_MOVE_J, 0, arg, 8, now);
	if (refused(sim, u, c, id, linear ? "movel" : "movej"))
		return;
	follow(sim, u, id, async, false);
}

/* A move whose speed, acceleration and async flag are in the registers
 * (double 6 and 7, int 1), as every move command has them. */
static void move_regs(struct sim *sim, struct urr *u, int c, bool linear, const double target[6],
		      int64_t now)
{
	move(sim, u, c, linear, target, in_dbl(sim, u, 6), in_dbl(sim, u, 7),
	     in_int(sim, u, 1) == 1, now);
}

static void move_path(struct sim *sim, struct urr *u, int c, bool async, int64_t now)
{
	double arg[9];
	int32_t id = 0;

	stop_async_move(sim, u, 0, now);
	u->stopping = false;
	if (u->path_n == 0)
		return; /* exec_move_path() with nothing injected */
	for (int i = 0; i < u->path_n; i++) {
		const struct waypoint *w = &u->path[i];
		bool last = i == u->path_n - 1;

		memcpy(arg, w->target, sizeof(double) * 6);
		arg[6] = w->v;
		arg[7] = w->a;
		arg[8] = w->r;
		id = request(sim, u,
			     last ? (w->linear ? RTL_RTDE_REQ_MOVE_L : RTL_RTDE_REQ_MOVE_J)
				  : RTL_RTDE_REQ_PATH_ADD,
			     last ? (u->path_n > 1 ? RTL_RTDE_REQ_FLAG_PATH : 0)
				  : (w->linear ? RTL_RTDE_REQ_FLAG_LINEAR : 0),
			     arg, 9, now);
		if (refused(sim, u, c, id, w->linear ? "movel (path)" : "movej (path)"))
			return;
	}
	follow(sim, u, id, async, true);
}

/* The path waypoint the running move is on. */
static int path_segment(const struct sim_robot *r)
{
	int s = 0;

	for (int i = 1; i < r->move.nseg; i++)
		if (r->move_t >= r->move.seg[i].start)
			s = i;
	return s;
}

static void track_path(struct sim *sim, struct urr *u)
{
	const struct sim_robot *r = &sim->robot;
	int s;

	if (!u->move_is_path || !r->move_on)
		return;
	s = path_segment(r);
	if (s != u->move_seg) {
		u->move_seg = s;
		async_progress(sim, u, s);
	}
}

/* ---- one command ---------------------------------------------------------------------- */

/* process_cmd(): returns false for stopScript (the loop ends). */
static bool process(struct sim *sim, struct urr *u, int c, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double v[6], w[6], q[6], arg[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t id;
	int e;

	if (c != C_STOP_SCRIPT)
		sim_ctrl_model_stats(sim)->commands++;
	switch (c) {
	case C_MOVEJ:
		in_vec(sim, u, 0, v);
		move_regs(sim, u, c, false, v, now);
		break;
	case C_MOVEJ_IK:
		in_vec(sim, u, 0, v);
		if (ik(sim, v, NULL, q)) {
			fail(sim, u, c, "get_inverse_kin(): no solution for the pose");
			return true;
		}
		move_regs(sim, u, c, false, q, now);
		break;
	case C_MOVEL:
		in_vec(sim, u, 0, v);
		move_regs(sim, u, c, true, v, now);
		break;
	case C_MOVEL_FK:
		in_vec(sim, u, 0, q);
		if (sim_kin_forward_dh(&r->cfg.dh, q, r->tcp_offset, v)) {
			fail(sim, u, c, "movel(): the joint target is not finite");
			return true;
		}
		move_regs(sim, u, c, true, v, now);
		break;
	case C_MOVE_PATH:
		move_path(sim, u, c, in_int(sim, u, 1) == 1, now);
		break;
	case C_FORCE_MODE: {
		uint32_t sel = 0, type = (uint32_t)in_int(sim, u, 1);

		for (int i = 0; i < 6; i++)
			sel |= in_int(sim, u, 2 + i) ? 1u << i : 0;
		in_vec(sim, u, 12, arg);
		arg[6] = u->force_damping;
		arg[7] = u->force_gain;
		id = request(sim, u, RTL_RTDE_REQ_FORCE_LIMITS, 0, arg, 8, now);
		if (refused(sim, u, c, id, "force_mode() limits"))
			return true;
		in_vec(sim, u, 0, arg);
		in_vec(sim, u, 6, arg + 6);
		id = request(sim, u, RTL_RTDE_REQ_FORCE_MODE, sel | (type & 3u) << 8, arg, 12, now);
		if (refused(sim, u, c, id, "force_mode()"))
			return true;
		u->force_on = true;
		break;
	}
	case C_FORCE_MODE_STOP:
		u->force_on = false;
		request(sim, u, RTL_RTDE_REQ_END_FORCE_MODE, 0, arg, 0, now);
		stop_arm(u, 10);
		u->wait = WAIT_REST;
		break;
	case C_ZERO_FT:
		request(sim, u, RTL_RTDE_REQ_ZERO_FT_SENSOR, 0, arg, 0, now);
		break;
	case C_SPEEDJ:
	case C_SPEEDL:
		in_vec(sim, u, 0, u->speed_target);
		u->speed_type = c == C_SPEEDJ;
		u->speed_acc = in_dbl(sim, u, 6);
		u->speed_on = true;
		u->stopping = false;
		break;
	case C_SERVOJ:
	case C_SERVOL:
		in_vec(sim, u, 0, v);
		if (c == C_SERVOL && ik(sim, v, NULL, v)) {
			fail(sim, u, c, "get_inverse_kin(): no solution for the servoL pose");
			return true;
		}
		memcpy(u->servo_q, v, sizeof(v));
		u->servo_t = in_dbl(sim, u, 8);
		u->servo_lh = in_dbl(sim, u, 9);
		u->servo_gain = in_dbl(sim, u, 10);
		u->servo_on = true;
		u->stopping = false;
		break;
	case C_SPEED_STOP:
		u->speed_on = false;
		stop_arm(u, in_dbl(sim, u, 0));
		u->wait = WAIT_REST;
		break;
	case C_SERVO_STOP:
		u->servo_on = false;
		stop_arm(u, in_dbl(sim, u, 0));
		u->wait = WAIT_REST;
		break;
	case C_SET_PAYLOAD:
		arg[0] = in_dbl(sim, u, 0);
		for (int i = 0; i < 3; i++)
			arg[1 + i] = in_dbl(sim, u, 1 + i);
		/* 5.0 and later: a zero centre of gravity keeps the current one */
		if (at_least(sim, 5, 0) && !arg[1] && !arg[2] && !arg[3])
			memcpy(arg + 1, r->payload_cog, sizeof(double) * 3);
		id = request(sim, u, RTL_RTDE_REQ_SET_PAYLOAD, 0, arg, 4, now);
		refused(sim, u, c, id, "set_payload()");
		break;
	case C_TEACH:
	case C_FREEDRIVE:
		if (c == C_FREEDRIVE && !at_least(sim, 5, 10))
			break;
		id = request(sim, u, RTL_RTDE_REQ_TEACH_MODE, 0, arg, 0, now);
		refused(sim, u, c, id, c == C_TEACH ? "teach_mode()" : "freedrive_mode()");
		break;
	case C_END_TEACH:
	case C_END_FREEDRIVE:
		if (c == C_END_FREEDRIVE && !at_least(sim, 5, 10))
			break;
		request(sim, u, RTL_RTDE_REQ_END_TEACH_MODE, 0, arg, 0, now);
		break;
	case C_FREEDRIVE_STATUS:
		if (at_least(sim, 5, 10))
			out_int(sim, u, 1, r->teach_on ? 1 : 0);
		break;
	case C_FORCE_DAMPING:
		if (at_least(sim, 3, 5))
			u->force_damping = in_dbl(sim, u, 0);
		break;
	case C_FORCE_GAIN:
		if (at_least(sim, 5, 0))
			u->force_gain = in_dbl(sim, u, 0);
		break;
	case C_GET_STEPTIME:
		if (at_least(sim, 5, 4))
			sim->values[u->out_dbl[0]].d = (double)sim_period_ns(sim) / 1e9;
		break;
	case C_JOINT_HISTORY:
		if (at_least(sim, 5, 4)) {
			int32_t steps = in_int(sim, u, 1);
			uint32_t have = u->hist_n < HISTORY ? u->hist_n : HISTORY;

			if (steps < 0 || (uint32_t)steps >= have) {
				fail(sim, u, c,
				     "get_actual_joint_positions_history(%d): rtde-sim keeps %u "
				     "cycles",
				     (int)steps, have);
				return true;
			}
			out_vec(sim, u, u->hist[(u->hist_n - 1 - (uint32_t)steps) % HISTORY]);
		}
		break;
	case C_SET_TCP:
		in_vec(sim, u, 0, arg);
		id = request(sim, u, RTL_RTDE_REQ_SET_TCP, 0, arg, 6, now);
		refused(sim, u, c, id, "set_tcp()");
		break;
	case C_IK_ARGS:
	case C_IK_DEFAULT:
	case C_IK_HAS_SOLUTION:
	case C_IK_HAS_SOLUTION_ARGS: {
		bool args = c == C_IK_ARGS || c == C_IK_HAS_SOLUTION_ARGS;
		bool has = c == C_IK_HAS_SOLUTION || c == C_IK_HAS_SOLUTION_ARGS;

		if (has && !at_least_or(sim, 10, 15))
			break;
		in_vec(sim, u, 0, v);
		in_vec(sim, u, 6, w);
		e = ik(sim, v, args ? w : NULL, q);
		if (has) {
			out_int(sim, u, 1, e == 0);
		} else if (e) {
			fail(sim, u, c, "get_inverse_kin(): %s",
			     e == -EDOM ? "no solution within the joint limits"
					: "the pose is out of reach");
			return true;
		} else {
			out_vec(sim, u, q);
		}
		break;
	}
	case C_FK_DEFAULT:
	case C_FK_ARGS:
		if (c == C_FK_ARGS) {
			in_vec(sim, u, 0, q);
			in_vec(sim, u, 6, w);
		} else {
			memcpy(q, r->actual_q, sizeof(q));
			memcpy(w, r->tcp_offset, sizeof(w));
		}
		if (sim_kin_forward_dh(&r->cfg.dh, q, w, v)) {
			fail(sim, u, c, "get_forward_kin(): an argument is not finite");
			return true;
		}
		out_vec(sim, u, v);
		break;
	case C_FLANGE_POSE:
		sim_kin_forward_dh(&r->cfg.dh, r->actual_q, NULL, v);
		out_vec(sim, u, v);
		break;
	case C_GET_TCP:
		if (at_least(sim, 3, 6))
			out_vec(sim, u, r->tcp_offset);
		break;
	case C_POSE_TRANS:
		in_vec(sim, u, 0, v);
		in_vec(sim, u, 6, w);
		pose_trans(v, w, q);
		out_vec(sim, u, q);
		break;
	case C_POSE_SAFE:
		in_vec(sim, u, 0, v);
		out_int(sim, u, 1, ik(sim, v, NULL, q) == 0);
		break;
	case C_JOINTS_SAFE: {
		bool ok = true;

		in_vec(sim, u, 0, q);
		for (int i = 0; i < 6; i++)
			ok = ok && q[i] >= r->cfg.q_min[i] && q[i] <= r->cfg.q_max[i];
		out_int(sim, u, 1, ok);
		break;
	}
	case C_IS_STEADY:
		out_int(sim, u, 1, sim_robot_at_rest(r));
		break;
	case C_PROTECTIVE_STOP:
		if (at_least(sim, 3, 8))
			sim_ctrl_protective_stop(sim, now,
						 "protective_stop() called by the program");
		break;
	case C_STOPL:
	case C_STOPJ: {
		bool move_stops = true;

		if (u->stop_thread) {
			move_stops = false;
			u->stop_thread = false;
			async_progress(sim, u, -1);
		}
		/* a move brakes along its path (stopl on a movel's line); any
		 * other motion stops as the stream's stop */
		if (!(move_stops && stop_async_move(sim, u, in_dbl(sim, u, 0), now)))
			stop_arm(u, in_dbl(sim, u, 0));
		if (in_int(sim, u, 1) == 1) {
			u->stop_thread = true;
			async_progress(sim, u, 0);
		} else {
			u->wait = WAIT_REST;
		}
		break;
	}
	case C_SET_WATCHDOG: {
		double f = in_dbl(sim, u, 0);

		if (!(f > 0) || !isfinite(f)) {
			fail(sim, u, c, "rtde_set_watchdog(): the frequency %g is not positive", f);
			return true;
		}
		u->wd_on = true;
		u->wd_field = field("input_int_register_", u->offset == 24 ? 24 : 0);
		u->wd_period_ns = (int64_t)(1e9 / f);
		u->wd_last = now;
		break;
	}
	case C_JOG_START: {
		int feature = (int)in_dbl(sim, u, 6);
		double frame[6] = { 0 };

		in_vec(sim, u, 0, u->jog_speed);
		u->jog_acc = in_dbl(sim, u, 7);
		if (!u->jog_on) {
			/* the frame is taken when the jog thread starts */
			if (feature == 1)
				memcpy(frame, r->actual_TCP_pose, sizeof(frame));
			else if (feature == 2)
				in_vec(sim, u, 8, frame);
			sim_robot_rotvec_to_matrix(frame + 3, u->jog_R);
		}
		u->jog_on = true;
		u->stopping = false;
		break;
	}
	case C_JOG_STOP:
		u->jog_on = false;
		stop_arm(u, 1.2);
		u->wait = WAIT_REST;
		break;
	case C_MOVE_UNTIL_CONTACT:
		if (!at_least(sim, 5, 4))
			break;
		in_vec(sim, u, 0, arg);
		arg[6] = in_dbl(sim, u, 12);
		stop_async_move(sim, u, 0, now);
		u->stopping = false;
		id = request(sim, u, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, 0, arg, 9, now);
		if (refused(sim, u, c, id, "move_until_contact"))
			return true;
		u->wait = WAIT_MOVE;
		u->wait_id = id;
		break;
	case C_STOP_SCRIPT:
		return false;
	case C_SERVOC:
	case C_TOOL_CONTACT:
	case C_TARGET_WAYPOINT:
	case C_JOINT_TORQUES:
	case C_FT_RTDE_INPUT:
	case C_EXTERNAL_FT:
	case C_SET_GRAVITY:
	case C_CONTACT_START:
	case C_CONTACT_STOP:
	case C_CONTACT_READ:
		/* The version gates of the script drop these bodies on older
		 * controllers: there they do nothing, and say done. */
		if ((c == C_TOOL_CONTACT && !at_least(sim, 5, 4)) ||
		    (c == C_TARGET_WAYPOINT && !at_least(sim, 5, 3)) ||
		    (c == C_FT_RTDE_INPUT && !at_least(sim, 5, 9)))
			break;
		unmodelled(sim, u, c);
		return true;
	default:
		/* No branch of process_cmd() takes it: only "done". */
		break;
	}
	return true;
}

/* ---- the program ---------------------------------------------------------------------- */

static int start(struct sim *sim, void *state, const char *text, size_t len, int64_t now,
		 struct sim_prog_error *err)
{
	struct urr *u = state;
	const char *p = find(text, len, MARK_LOADED), *stamp, *close;
	long of = global_int(text, len, "reg_offset_float"),
	     oi = global_int(text, len, "reg_offset_int");
	size_t n;

	(void)now;
	stamp = p + strlen(MARK_LOADED);
	close = memchr(stamp, ')', (size_t)(text + len - stamp));
	n = close ? (size_t)(close - stamp) : 0;
	for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++)
		if (n == strlen(releases[i].stamp) && !memcmp(stamp, releases[i].stamp, n))
			u->release = releases[i].release;
	if (!u->release) {
		err->line = line_of(text, p);
		snprintf(err->text, sizeof(err->text),
			 "rtde-sim models ur_rtde 1.5.8's control script (stamped %s); this "
			 "one is stamped '%.*s': a release rtde-sim does not model",
			 releases[0].stamp, (int)(n > 40 ? 40 : n), stamp);
		return -EINVAL;
	}
	if ((of != 0 && of != 24) || oi != of) {
		const char *g = find(text, len, "global reg_offset_float");

		err->line = g ? line_of(text, g) : 1;
		snprintf(err->text, sizeof(err->text),
			 "the register offsets (float %ld, int %ld) are not 0 or 24 as ur_rtde "
			 "injects them",
			 of, oi);
		return -EINVAL;
	}
	u->offset = (int)of;
	for (int i = 0; i < N_IN_INT; i++)
		u->in_int[i] = field("input_int_register_", u->offset + i);
	for (int i = 0; i < N_IN_DBL; i++)
		u->in_dbl[i] = field("input_double_register_", u->offset + i);
	for (int i = 0; i < N_OUT_INT; i++)
		u->out_int[i] = field("output_int_register_", u->offset + i);
	for (int i = 0; i < N_OUT_DBL; i++)
		u->out_dbl[i] = field("output_double_register_", u->offset + i);
	read_lines(u, text, len);
	if (read_path(u, text, len, err))
		return -EINVAL;
	/* the main loop's preamble: gain scaling (5.0+) and damping (3.5+) */
	u->force_gain = at_least(sim, 5, 0) ? 0.5 : 1.0;
	u->force_damping = at_least(sim, 3, 5) ? 0.025 : 0.005;
	u->next_id = sim->robot.req_last + 1000;
	u->seq = sim->robot.last_seq;
	u->wd_field = -1;
	snprintf(u->describe, sizeof(u->describe), "ur_rtde %s, registers %d-%d", u->release,
		 u->offset, u->offset + 23);
	async_progress(sim, u, -1); /* reset_async_progress() */
	out_int(sim, u, 0, STATE_READY);
	return 0;
}

/* The robot's stream: what the program's threads command this cycle. */
static void stream(struct sim *sim, struct urr *u, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	struct sim_robot_cmd c = { .mode = RTL_RTDE_CMD_IDLE, .watchdog_ms = -1 };

	if (u->stopping && sim_robot_at_rest(r))
		u->stopping = false;
	if (u->jog_on) {
		c.mode = RTL_RTDE_CMD_SPEEDL;
		for (int i = 0; i < 3; i++) {
			c.param[i] = c.param[3 + i] = 0;
			for (int k = 0; k < 3; k++) {
				c.param[i] += u->jog_R[3 * i + k] * u->jog_speed[k];
				c.param[3 + i] += u->jog_R[3 * i + k] * u->jog_speed[3 + k];
			}
		}
		c.accel = u->jog_acc;
	} else if (u->speed_on) {
		c.mode = u->speed_type ? RTL_RTDE_CMD_SPEEDJ : RTL_RTDE_CMD_SPEEDL;
		memcpy(c.param, u->speed_target, sizeof(u->speed_target));
		c.accel = u->speed_acc;
	} else if (u->servo_on) {
		c.mode = RTL_RTDE_CMD_SERVOJ;
		memcpy(c.param, u->servo_q, sizeof(u->servo_q));
		c.time = u->servo_t;
		c.lookahead = u->servo_lh;
		c.gain = u->servo_gain;
	} else if (u->stopping) {
		c.mode = RTL_RTDE_CMD_STOP;
		c.accel = u->stop_dec;
	}
	c.seq = ++u->seq;
	if (sim_robot_command(r, &c, now) == -EINVAL)
		sim->stats.commands_refused++;
}

static void tick(struct sim *sim, void *state, int64_t now)
{
	struct urr *u = state;
	struct sim_robot *r = &sim->robot;
	int32_t why = 0, st;
	int c;

	memcpy(u->hist[u->hist_n++ % HISTORY], r->actual_q, sizeof(u->hist[0]));
	if (u->wd_on && now - u->wd_last > u->wd_period_ns) {
		sim_ctrl_model_stats(sim)->watchdog_stops++;
		fail(sim, u, C_SET_WATCHDOG,
		     "RTDE input watchdog: input_int_register_%d not updated for %.0f ms "
		     "(rtde_set_watchdog(..., %.3g Hz, \"stop\")); the program stopped",
		     u->offset == 24 ? 24 : 0, (double)(now - u->wd_last) / 1e6,
		     1e9 / (double)u->wd_period_ns);
		return;
	}
	/* the asynchronous threads */
	track_path(sim, u);
	if (u->move_thread) {
		st = answer(sim, u->move_id, &why);
		/* a later request (a payload, a TCP) answers in its place: the
		 * move is over when the arm has no plan left */
		if (st == RTL_RTDE_REQ_STATE_NONE && !r->move_on && !r->move_pending &&
		    !r->muc_phase)
			st = RTL_RTDE_REQ_STATE_DONE;
		if (st == RTL_RTDE_REQ_STATE_DONE || st == RTL_RTDE_REQ_STATE_FAILED) {
			u->move_thread = false;
			async_progress(sim, u, -1);
			if (st == RTL_RTDE_REQ_STATE_FAILED && why != RTL_RTDE_REQ_INTERRUPTED) {
				fail(sim, u, C_MOVEJ, "the asynchronous move failed: %s",
				     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
				return;
			}
		}
	}
	if (u->stop_thread && !u->stopping && !r->move_on && sim_robot_at_rest(r)) {
		u->stop_thread = false;
		async_progress(sim, u, -1);
	}
	/* the main thread, blocked in a command */
	if (u->wait == WAIT_MOVE) {
		st = answer(sim, u->wait_id, &why);
		if (st == RTL_RTDE_REQ_STATE_FAILED) {
			fail(sim, u, u->wait_cmd, "the move failed: %s",
			     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
			return;
		}
		if (st == RTL_RTDE_REQ_STATE_DONE) {
			u->wait = WAIT_NONE;
			out_int(sim, u, 0, STATE_DONE);
		}
	} else if (u->wait == WAIT_REST && !u->stopping && !r->move_on && sim_robot_at_rest(r)) {
		u->wait = WAIT_NONE;
		out_int(sim, u, 0, STATE_DONE);
	} else if (u->wait == WAIT_NONE) {
		/* the main loop: rtde_cmd(), then by kind */
		c = in_int(sim, u, 0);
		if (streaming(c)) {
			if (!process(sim, u, c, now) || sim_ctrl_model(&sim->ctrl) == NULL)
				goto ended;
			out_int(sim, u, 0, STATE_READY);
		} else if (c == 0) {
			u->executing = false;
			out_int(sim, u, 0, STATE_READY);
		} else if (!u->executing) {
			u->executing = true;
			u->wait_cmd = c;
			if (!process(sim, u, c, now))
				goto ended;
			if (sim_ctrl_model(&sim->ctrl) == NULL)
				return; /* a runtime exception, or a protective stop */
			if (u->wait == WAIT_NONE)
				out_int(sim, u, 0, STATE_DONE);
		}
	}
	stream(sim, u, now);
	return;
ended:
	if (sim_ctrl_model(&sim->ctrl))
		sim_ctrl_program_end(sim);
}

static void inputs(struct sim *sim, void *state, const uint16_t *fields, uint32_t n, int64_t now)
{
	struct urr *u = state;

	(void)sim;
	if (!u->wd_on)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (fields[i] == u->wd_field)
			u->wd_last = now;
}

static const char *describe(const void *state)
{
	return ((const struct urr *)state)->describe;
}

const struct sim_prog_ops sim_prog_urrtde = {
	.name = "ur_rtde",
	.state_size = sizeof(struct urr),
	.recognise = recognise,
	.start = start,
	.tick = tick,
	.inputs = inputs,
	.describe = describe,
};
