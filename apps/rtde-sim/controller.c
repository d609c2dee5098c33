// SPDX-License-Identifier: MIT
/*
 * The controller around rtde-sim's arm (see controller.h for the design).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/time.h>

#include "controller.h"
#include "extctl.h"
#include "ports.h"
#include "sim.h"

/* This build's rtloop_control.script (generated with it, see meson.build). */
extern const char sim_control_program[];
extern const size_t sim_control_program_len;

/* UR joint modes the outputs report per robot mode. */
#define JOINT_MODE_POWER_OFF 239
#define JOINT_MODE_IDLE 255
#define JOINT_MODE_RUNNING 253

/* RTDE runtime_state values. */
#define RUNTIME_STOPPED 1
#define RUNTIME_PLAYING 2
#define RUNTIME_PAUSED 4

/* Bits of robot_status_bits and safety_status_bits. */
#define ROBOT_BIT_POWER_ON (1u << 0)
#define ROBOT_BIT_PROGRAM_RUNNING (1u << 1)
#define SAFETY_BIT_NORMAL (1u << 0)
#define SAFETY_BIT_PROTECTIVE (1u << 2)
#define SAFETY_BIT_STOPPED_BY_SAFETY (1u << 10)

/* Deceleration of a protective stop or a power off [rad/s^2]. */
#define HALT_DECEL 15.0

#define RTLOOP_URP "rtloop_control.urp"
#define RTLOOP_PROGRAM "rtloop_control"

void sim_ctrl_opts_default(struct sim_ctrl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->power_on_s = 0.5;
	o->brake_release_s = 0.5;
	o->unlock_delay_s = 5.0;
	o->external_control_urp = "external_control.urp";
	o->urcap_host = "127.0.0.1";
	o->urcap_port = 50002;
}

static size_t trim_len(const char *p, size_t n)
{
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	return n;
}

static int take_program(struct sim_ctrl *c, const char *text, size_t len)
{
	len = trim_len(text, len);
	c->program = malloc(len + 1);
	if (!c->program)
		return -ENOMEM;
	memcpy(c->program, text, len);
	c->program[len] = '\0';
	c->program_len = len;
	return 0;
}

static int read_file(struct sim_ctrl *c, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	if (!f) {
		snprintf(c->program_error, sizeof(c->program_error),
			 "the control script %s cannot be read: %s", path, strerror(errno));
		return 0;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *q = realloc(buf, cap ? cap * 2 : 16384);

			if (!q) {
				err = -ENOMEM;
				break;
			}
			buf = q;
			cap = cap ? cap * 2 : 16384;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (!err && ferror(f))
		snprintf(c->program_error, sizeof(c->program_error),
			 "the control script %s cannot be read: %s", path, strerror(errno));
	else if (!err)
		err = take_program(c, buf, len);
	fclose(f);
	free(buf);
	return err;
}

int sim_ctrl_init(struct sim *sim)
{
	struct sim_ctrl *c = &sim->ctrl;
	int err;

	memset(c, 0, sizeof(*c));
	c->opts = sim->opts.ctrl;
	if (!(c->opts.power_on_s > 0))
		c->opts.power_on_s = 0.5;
	if (!(c->opts.brake_release_s > 0))
		c->opts.brake_release_s = 0.5;
	if (!(c->opts.unlock_delay_s >= 0))
		c->opts.unlock_delay_s = 5.0;
	c->msg_next = 1;
	c->model = -1;
	for (int i = 0; i < SIM_PROGS; i++) {
		c->model_state[i] =
			calloc(1, sim_progs[i]->state_size ? sim_progs[i]->state_size : 1);
		if (!c->model_state[i])
			return -ENOMEM;
	}
	if (c->opts.control_script && c->opts.control_script[0])
		err = read_file(c, c->opts.control_script);
	else
		err = take_program(c, sim_control_program, sim_control_program_len);
	if (err)
		return err;
	c->safety_mode = RTL_UR_SAFETY_NORMAL;
	c->remote = !c->opts.local;
	if (c->opts.boot) {
		c->robot_mode = RTL_UR_ROBOT_MODE_POWER_OFF;
		c->program_state = RTL_UR_PROGRAM_STOPPED;
	} else {
		c->robot_mode = RTL_UR_ROBOT_MODE_RUNNING;
		c->program_state = RTL_UR_PROGRAM_PLAYING;
		c->executor = true;
		c->started_ns = -1; /* at the first tick: the server's clock starts later */
		snprintf(c->program_name, sizeof(c->program_name), "%s", RTLOOP_PROGRAM);
	}
	return 0;
}

void sim_ctrl_destroy(struct sim *sim)
{
	free(sim->ctrl.program);
	sim->ctrl.program = NULL;
	for (int i = 0; i < SIM_PROGS; i++) {
		free(sim->ctrl.model_state[i]);
		sim->ctrl.model_state[i] = NULL;
	}
}

int64_t sim_ctrl_time_ns(const struct sim *sim)
{
	return sim->start_ns + (int64_t)sim->cycle * sim->period_ns;
}

/* ---- messages ------------------------------------------------------------------------ */

void sim_ctrl_message(struct sim *sim, const struct sim_ctrl_msg *m)
{
	struct sim_ctrl *c = &sim->ctrl;
	struct sim_ctrl_msg *slot = &c->msgs[c->msg_next % SIM_CTRL_MSGS];

	if (slot->seq)
		c->msgs_lost++; /* counted as overwritten; readers see the gap */
	*slot = *m;
	slot->seq = c->msg_next++;
	slot->time_ns = sim_ctrl_time_ns(sim);
	if (m->kind == SIM_MSG_RUNTIME_EXCEPTION)
		c->last_exception = *slot;
	c->stats.msgs++;
}

const struct sim_ctrl_msg *sim_ctrl_msg_get(const struct sim *sim, uint64_t seq)
{
	const struct sim_ctrl_msg *m = &sim->ctrl.msgs[seq % SIM_CTRL_MSGS];

	return seq && m->seq == seq ? m : NULL;
}

static void key_message(struct sim *sim, enum sim_ctrl_msg_kind kind, enum sim_ctrl_level level,
			int32_t code, const char *title, const char *text)
{
	struct sim_ctrl_msg m = { .kind = kind, .level = level, .code = code };

	snprintf(m.title, sizeof(m.title), "%s", title);
	snprintf(m.text, sizeof(m.text), "%s", text);
	sim_ctrl_message(sim, &m);
}

/* ---- the executor -------------------------------------------------------------------- */

/* Bring the arm to rest with @decel (<= 0: the program's default). */
static void halt_arm(struct sim *sim, double decel)
{
	struct sim_robot *r = &sim->robot;
	struct sim_robot_cmd stop = {
		.mode = RTL_RTDE_CMD_STOP,
		.seq = r->last_seq,
		.accel = decel,
	};

	/* The heartbeat it carries is the last one: not fresh, so the
	 * watchdog is neither fed nor armed by it. */
	sim_robot_command(r, &stop, 0);
}

/* The model's program (programs.h) that runs ends. */
static void model_end(struct sim *sim)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (c->model >= 0) {
		const struct sim_prog_ops *m = sim_progs[c->model];
		void *st = c->model_state[c->model];

		c->model = -1;
		if (m->stop)
			m->stop(sim, st);
	}
}

static void executor_stop(struct sim *sim, double decel)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (c->executor)
		c->stats.executor_stops++;
	c->executor = false;
	model_end(sim);
	halt_arm(sim, decel);
}

static void program_stop(struct sim *sim, double decel)
{
	executor_stop(sim, decel);
	sim->ctrl.program_state = RTL_UR_PROGRAM_STOPPED;
}

static void executor_start(struct sim *sim, int64_t now, const char *name)
{
	struct sim_ctrl *c = &sim->ctrl;
	struct sim_robot *r = &sim->robot;

	/* A new program replaces whatever ran: its motion ends first. */
	model_end(sim);
	halt_arm(sim, 0);
	c->executor = true;
	c->program_state = RTL_UR_PROGRAM_PLAYING;
	c->started_ns = now;
	snprintf(c->program_name, sizeof(c->program_name), "%s", name);
	/* The program's start: no watchdog armed until a new heartbeat, its
	 * trip counter from zero. */
	r->armed = false;
	r->watchdog_tripped = false;
	r->seen_seq = false;
	c->trips_base = r->watchdog_trips;
	c->stats.rtloop_started++;
}

/* ---- state ----------------------------------------------------------------------------- */

static bool powered(enum rtl_ur_robot_mode m)
{
	return m == RTL_UR_ROBOT_MODE_POWER_ON || m == RTL_UR_ROBOT_MODE_IDLE ||
	       m == RTL_UR_ROBOT_MODE_BACKDRIVE || m == RTL_UR_ROBOT_MODE_RUNNING;
}

static int64_t secs(double s)
{
	return llround(s * 1e9);
}

static void publish_state(struct sim *sim)
{
	const struct sim_ctrl *c = &sim->ctrl;
	struct sim_robot *r = &sim->robot;
	int32_t jm = c->robot_mode == RTL_UR_ROBOT_MODE_RUNNING ? JOINT_MODE_RUNNING
		     : powered(c->robot_mode)			? JOINT_MODE_IDLE
								: JOINT_MODE_POWER_OFF;

	r->robot_mode = c->robot_mode;
	r->safety_mode = c->safety_mode;
	r->safety_status = c->safety_mode;
	r->runtime_state = c->program_state == RTL_UR_PROGRAM_PLAYING  ? RUNTIME_PLAYING
			   : c->program_state == RTL_UR_PROGRAM_PAUSED ? RUNTIME_PAUSED
								       : RUNTIME_STOPPED;
	r->robot_status_bits =
		(powered(c->robot_mode) ? ROBOT_BIT_POWER_ON : 0) |
		(c->program_state == RTL_UR_PROGRAM_PLAYING ? ROBOT_BIT_PROGRAM_RUNNING : 0);
	r->safety_status_bits = c->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP
					? SAFETY_BIT_PROTECTIVE | SAFETY_BIT_STOPPED_BY_SAFETY
					: SAFETY_BIT_NORMAL;
	for (int i = 0; i < SIM_ROBOT_DOF; i++)
		r->joint_mode[i] = jm;
}

void sim_ctrl_tick(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	if ((c->executor || c->model >= 0) && c->started_ns < 0)
		c->started_ns = now;
	if (c->robot_mode == RTL_UR_ROBOT_MODE_POWER_ON && now >= c->transition_ns)
		c->robot_mode = RTL_UR_ROBOT_MODE_IDLE;
	if (c->robot_mode == RTL_UR_ROBOT_MODE_IDLE && c->releasing && now >= c->transition_ns) {
		c->robot_mode = RTL_UR_ROBOT_MODE_RUNNING;
		c->releasing = false;
	}
	if (c->opts.protective_stop_after_s > 0 && !c->pstop_fault_done &&
	    (sim_ctrl_executing(c) || sim_ctrl_model(c)) &&
	    now - c->started_ns >= secs(c->opts.protective_stop_after_s)) {
		c->pstop_fault_done = true;
		sim_ctrl_protective_stop(sim, now, "injected by --protective-stop-after");
	}
	publish_state(sim);
	if (sim_ctrl_model(c))
		sim_progs[c->model]->tick(sim, c->model_state[c->model], now);
}

void sim_ctrl_protective_stop(struct sim *sim, int64_t now, const char *why)
{
	struct sim_ctrl *c = &sim->ctrl;
	char text[SIM_CTRL_TEXT];

	if (c->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP)
		return;
	c->safety_mode = RTL_UR_SAFETY_PROTECTIVE_STOP;
	c->pstop_ns = now;
	c->stats.protective_stops++;
	program_stop(sim, HALT_DECEL);
	snprintf(text, sizeof(text), "Protective stop: %s", why ? why : "");
	key_message(sim, SIM_MSG_SAFETY, SIM_LEVEL_VIOLATION, RTL_UR_SAFETY_PROTECTIVE_STOP,
		    "PROTECTIVE_STOP", text);
	publish_state(sim);
}

/* ---- dashboard operations ------------------------------------------------------------- */

static bool eseries(const struct sim *sim)
{
	return sim->opts.profile != SIM_PROFILE_CB3;
}

/* Remote control matters on e-Series only; CB3 has no such mode. */
static bool refused_local(const struct sim *sim)
{
	return eseries(sim) && !sim->ctrl.remote;
}

enum sim_ctrl_result sim_ctrl_power_on(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (c->robot_mode == RTL_UR_ROBOT_MODE_POWER_OFF) {
		c->robot_mode = RTL_UR_ROBOT_MODE_POWER_ON;
		c->transition_ns = now + secs(c->opts.power_on_s);
		c->stats.power_ons++;
		publish_state(sim);
	}
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_power_off(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	(void)now;
	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (c->robot_mode != RTL_UR_ROBOT_MODE_POWER_OFF) {
		program_stop(sim, HALT_DECEL);
		c->robot_mode = RTL_UR_ROBOT_MODE_POWER_OFF;
		c->releasing = false;
		c->stats.power_offs++;
		publish_state(sim);
	}
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_brake_release(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (!powered(c->robot_mode))
		return SIM_CTRL_POWERED_OFF;
	if (c->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP)
		return SIM_CTRL_PROTECTIVE_STOP;
	if (c->robot_mode == RTL_UR_ROBOT_MODE_RUNNING || c->releasing)
		return SIM_CTRL_OK;
	c->releasing = true;
	/* Powering on still: the release follows it. */
	if (c->robot_mode == RTL_UR_ROBOT_MODE_POWER_ON)
		c->transition_ns += secs(c->opts.brake_release_s);
	else
		c->transition_ns = now + secs(c->opts.brake_release_s);
	c->stats.brake_releases++;
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_unlock(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (c->safety_mode != RTL_UR_SAFETY_PROTECTIVE_STOP)
		return SIM_CTRL_NOT_STOPPED;
	if (now - c->pstop_ns < secs(c->opts.unlock_delay_s))
		return SIM_CTRL_TOO_EARLY;
	c->safety_mode = RTL_UR_SAFETY_NORMAL;
	c->stats.unlocks++;
	key_message(sim, SIM_MSG_SAFETY, SIM_LEVEL_INFO, RTL_UR_SAFETY_NORMAL, "NORMAL",
		    "Protective stop unlocked: safety mode NORMAL");
	publish_state(sim);
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_restart_safety(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;
	enum sim_ctrl_result r = sim_ctrl_power_off(sim, now);

	if (r)
		return r;
	if (c->safety_mode != RTL_UR_SAFETY_NORMAL) {
		c->safety_mode = RTL_UR_SAFETY_NORMAL;
		key_message(sim, SIM_MSG_SAFETY, SIM_LEVEL_INFO, RTL_UR_SAFETY_NORMAL, "NORMAL",
			    "Safety system restarted: safety mode NORMAL, robot powered off");
		publish_state(sim);
	}
	return SIM_CTRL_OK;
}

/* The .urp of the External Control URCap's node (extctl.h)? */
static bool is_urcap_urp(const struct sim_ctrl *c, const char *base)
{
	return c->opts.external_control_urp && !strcmp(base, c->opts.external_control_urp);
}

enum sim_ctrl_result sim_ctrl_load(struct sim *sim, const char *name)
{
	struct sim_ctrl *c = &sim->ctrl;
	const char *base = name ? strrchr(name, '/') : NULL;

	base = base ? base + 1 : name;
	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (!base || (strcmp(base, RTLOOP_URP) != 0 && !is_urcap_urp(c, base)))
		return SIM_CTRL_NOT_FOUND;
	if (c->program_state != RTL_UR_PROGRAM_STOPPED)
		program_stop(sim, 0);
	snprintf(c->loaded, sizeof(c->loaded), "%s", base);
	publish_state(sim);
	return SIM_CTRL_OK;
}

/* Can a program start now? */
static enum sim_ctrl_result can_start(const struct sim *sim)
{
	const struct sim_ctrl *c = &sim->ctrl;

	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (c->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP)
		return SIM_CTRL_PROTECTIVE_STOP;
	if (!powered(c->robot_mode))
		return SIM_CTRL_POWERED_OFF;
	if (c->robot_mode != RTL_UR_ROBOT_MODE_RUNNING)
		return SIM_CTRL_NOT_RUNNING;
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_play(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;
	enum sim_ctrl_result res;

	if (c->program_state == RTL_UR_PROGRAM_PAUSED) {
		res = can_start(sim);
		if (res)
			return res;
		c->program_state = RTL_UR_PROGRAM_PLAYING;
		publish_state(sim);
		return SIM_CTRL_OK;
	}
	if (!c->loaded[0])
		return SIM_CTRL_NO_PROGRAM;
	res = can_start(sim);
	if (res)
		return res;
	if (is_urcap_urp(c, c->loaded)) {
		/* The URCap's node fetches its program; it runs when it
		 * arrives (sim_ctrl_program()), the .urp playing meanwhile. */
		size_t n = strcspn(c->loaded, ".");
		int err;

		executor_stop(sim, 0);
		c->program_state = RTL_UR_PROGRAM_PLAYING;
		c->started_ns = now;
		snprintf(c->program_name, sizeof(c->program_name), "%.*s", (int)n, c->loaded);
		err = sim_ext_urcap_play(sim, c->loaded, c->opts.urcap_host,
					 (uint16_t)c->opts.urcap_port, now);
		if (err) {
			char text[SIM_CTRL_TEXT];

			snprintf(text, sizeof(text),
				 "External Control: cannot reach the script sender at %s:%u: %s",
				 c->opts.urcap_host ? c->opts.urcap_host : "?", c->opts.urcap_port,
				 strerror(-err));
			sim_ctrl_program_fail(sim, 0, text);
		}
		publish_state(sim);
		return SIM_CTRL_OK;
	}
	executor_start(sim, now, RTLOOP_PROGRAM);
	publish_state(sim);
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_pause(struct sim *sim, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;

	(void)now;
	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (c->program_state != RTL_UR_PROGRAM_PLAYING)
		return SIM_CTRL_NO_PROGRAM;
	c->program_state = RTL_UR_PROGRAM_PAUSED;
	/* A paused program's motion ends; the executor resumes on play. */
	halt_arm(sim, 0);
	publish_state(sim);
	return SIM_CTRL_OK;
}

enum sim_ctrl_result sim_ctrl_stop(struct sim *sim, int64_t now)
{
	(void)now;
	if (refused_local(sim))
		return SIM_CTRL_NOT_REMOTE;
	if (sim->ctrl.program_state != RTL_UR_PROGRAM_STOPPED)
		program_stop(sim, 0);
	publish_state(sim);
	return SIM_CTRL_OK;
}

void sim_ctrl_set_remote(struct sim *sim, bool remote)
{
	sim->ctrl.remote = remote;
}

/* ---- programs ------------------------------------------------------------------------- */

/* The 1-based line of the first difference between @a and @b (the longer
 * one's first extra line when one is a prefix of the other). */
static int32_t first_diff_line(const char *a, size_t alen, const char *b, size_t blen)
{
	int32_t line = 1;
	size_t i = 0;

	while (i < alen && i < blen && a[i] == b[i]) {
		if (a[i] == '\n')
			line++;
		i++;
	}
	/* Report the line the difference is on (a difference just after a
	 * newline belongs to the next line, which line already names). */
	return line;
}

static void copy_line(char *out, size_t cap, const char *text, size_t len, int32_t line)
{
	const char *p = text, *end = text + len;
	size_t n;

	for (int32_t l = 1; l < line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		p = nl ? nl + 1 : end;
	}
	n = strcspn(p, "\r\n");
	if (n > (size_t)(end - p))
		n = (size_t)(end - p);
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
	out[n] = '\0';
}

/* The name after "def " or "sec " on the program's first line that is
 * neither blank nor a comment. */
static void program_name(char *out, size_t cap, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	out[0] = '\0';
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
			p++;
		if (p >= end || *p != '#')
			break;
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return;
	}
	if (end - p > 4 && (!memcmp(p, "def ", 4) || !memcmp(p, "sec ", 4))) {
		size_t n = 0;

		p += 4;
		while (p + n < end && n + 1 < cap &&
		       (p[n] == '_' || (p[n] >= '0' && p[n] <= '9') ||
			(p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z')))
			n++;
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

/* @len: the program's bytes as they came (@text's first @len). */
static void record_other(struct sim *sim, int port, const char *text, size_t len)
{
	struct sim_ctrl *c = &sim->ctrl;
	struct sim_ctrl_other *o;

	if (c->stats.others >= SIM_CTRL_OTHERS) {
		c->stats.others++;
		return;
	}
	o = &c->others[c->stats.others++];
	program_name(o->name, sizeof(o->name), text, len);
	o->size = len;
	o->port = port;
	copy_line(o->first_line, sizeof(o->first_line), text, len, 1);
}

static void runtime_exception(struct sim *sim, const char *title, int32_t line, const char *text)
{
	struct sim_ctrl_msg m = {
		.kind = SIM_MSG_RUNTIME_EXCEPTION,
		.level = SIM_LEVEL_FAULT,
		.line = line,
	};

	snprintf(m.title, sizeof(m.title), "%s", title[0] ? title : "<unnamed>");
	snprintf(m.text, sizeof(m.text), "%s", text);
	sim_ctrl_message(sim, &m);
}

/* Model @i recognised the program @text, named @name: start it if the arm
 * is ready and the model can run every line it needs. */
static enum sim_ctrl_result model_start(struct sim *sim, int i, const char *name, const char *text,
					size_t n, int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;
	const struct sim_prog_ops *m = sim_progs[i];
	struct sim_robot *r = &sim->robot;
	struct sim_prog_error err = { 0 };
	enum sim_ctrl_result res = can_start(sim);

	c->stats.model[i].recognised++;
	if (res) {
		char why[SIM_CTRL_TEXT];

		c->stats.model[i].refused++;
		snprintf(why, sizeof(why), "Program %s (%s) did not start: %s",
			 name[0] ? name : "<unnamed>", m->name, sim_ctrl_result_text(res));
		key_message(sim, SIM_MSG_KEY, SIM_LEVEL_WARNING, (int32_t)res,
			    "PROGRAM_NOT_STARTED", why);
		return res;
	}
	/* What ran ends first, as on a real controller. */
	executor_stop(sim, 0);
	memset(c->model_state[i], 0, m->state_size);
	c->model_last = i;
	if (m->start(sim, c->model_state[i], text, n, now, &err)) {
		c->stats.model[i].failed++;
		runtime_exception(sim, name, err.line, err.text);
		c->program_state = RTL_UR_PROGRAM_STOPPED;
		publish_state(sim);
		return SIM_CTRL_NOT_RTLOOP;
	}
	c->model = c->model_last = i;
	c->program_state = RTL_UR_PROGRAM_PLAYING;
	c->started_ns = now;
	c->loaded[0] = '\0';
	snprintf(c->program_name, sizeof(c->program_name), "%s", name[0] ? name : m->name);
	r->armed = false;
	r->watchdog_tripped = false;
	r->seen_seq = false;
	c->trips_base = r->watchdog_trips;
	c->stats.model[i].started++;
	if (m->describe)
		snprintf(c->stats.model[i].last, sizeof(c->stats.model[i].last), "%s",
			 m->describe(c->model_state[i]));
	publish_state(sim);
	return SIM_CTRL_OK;
}

struct sim_prog_stats *sim_ctrl_model_stats(struct sim *sim)
{
	struct sim_ctrl *c = &sim->ctrl;

	return &c->stats.model[c->model_last];
}

void sim_ctrl_program_end(struct sim *sim)
{
	program_stop(sim, 0);
	publish_state(sim);
}

void sim_ctrl_program_fail(struct sim *sim, int32_t line, const char *text)
{
	struct sim_ctrl *c = &sim->ctrl;

	if (c->model >= 0)
		c->stats.model[c->model].failed++;
	runtime_exception(sim, c->program_name, line, text);
	program_stop(sim, 0);
	publish_state(sim);
}

enum sim_ctrl_result sim_ctrl_program(struct sim *sim, int port, const char *text, size_t len,
				      int64_t now)
{
	struct sim_ctrl *c = &sim->ctrl;
	size_t n = trim_len(text, len);
	enum sim_ctrl_result res;
	char name[SIM_CTRL_NAME];

	c->stats.programs++;
	program_name(name, sizeof(name), text, n);
	for (int i = 0; i < SIM_PROGS; i++)
		if (sim_progs[i]->recognise(text, n))
			return model_start(sim, i, name, text, n, now);
	if (!c->program || n != c->program_len || memcmp(text, c->program, n) != 0) {
		struct sim_ctrl_msg m = {
			.kind = SIM_MSG_RUNTIME_EXCEPTION,
			.level = SIM_LEVEL_FAULT,
			.column = 0,
		};
		char line[80];

		m.line = c->program ? first_diff_line(text, n, c->program, c->program_len) : 1;
		copy_line(line, sizeof(line), text, n, m.line);
		snprintf(m.title, sizeof(m.title), "%s", name[0] ? name : "<unnamed>");
		if (!c->program)
			snprintf(m.text, sizeof(m.text), "rtde-sim cannot run this program: %.200s",
				 c->program_error);
		else
			snprintf(m.text, sizeof(m.text),
				 "rtde-sim runs only rtloop_control.script of this build; line %d "
				 "differs from it: '%s'",
				 (int)m.line, line);
		record_other(sim, port, text, len);
		sim_ctrl_message(sim, &m);
		/* A new program replaces the old one even when it fails. */
		program_stop(sim, 0);
		publish_state(sim);
		return SIM_CTRL_NOT_RTLOOP;
	}
	res = can_start(sim);
	if (res) {
		char text2[SIM_CTRL_TEXT];

		c->stats.rtloop_refused++;
		snprintf(text2, sizeof(text2), "Program %s did not start: %s", RTLOOP_PROGRAM,
			 sim_ctrl_result_text(res));
		key_message(sim, SIM_MSG_KEY, SIM_LEVEL_WARNING, (int32_t)res,
			    "PROGRAM_NOT_STARTED", text2);
		return res;
	}
	executor_start(sim, now, RTLOOP_PROGRAM);
	c->loaded[0] = '\0';
	publish_state(sim);
	return SIM_CTRL_OK;
}

void sim_ctrl_summarize(const struct sim *sim, struct sim_ctrl_summary *out)
{
	const struct sim_ctrl *c = &sim->ctrl;

	*out = (struct sim_ctrl_summary){
		.robot_mode = c->robot_mode,
		.safety_mode = c->safety_mode,
		.program_state = c->program_state,
		.remote = c->remote,
		.boot = c->opts.boot,
		.stats = c->stats,
		.msgs_lost = c->msgs_lost,
	};
	memcpy(out->program_name, c->program_name, sizeof(out->program_name));
	memcpy(out->others, c->others, sizeof(out->others));
	out->last_exception = c->last_exception;
}

/* ---- names ------------------------------------------------------------------------------ */

const struct sim_prog_ops *const sim_progs[SIM_PROGS] = { &sim_prog_urrtde, &sim_prog_extctl };

const char *sim_ctrl_result_text(enum sim_ctrl_result r)
{
	switch (r) {
	case SIM_CTRL_OK:
		return "done";
	case SIM_CTRL_NOT_REMOTE:
		return "the robot is in local control; switch the pendant to remote control";
	case SIM_CTRL_POWERED_OFF:
		return "the robot is powered off; power it on first";
	case SIM_CTRL_NOT_RUNNING:
		return "the brakes are not released; release them first";
	case SIM_CTRL_PROTECTIVE_STOP:
		return "the robot is in protective stop; unlock it first";
	case SIM_CTRL_TOO_EARLY:
		return "a protective stop can be unlocked only 5 s after it happened";
	case SIM_CTRL_NOT_STOPPED:
		return "the robot is not in protective stop";
	case SIM_CTRL_NO_PROGRAM:
		return "no program is loaded";
	case SIM_CTRL_NOT_FOUND:
		return "no such program";
	case SIM_CTRL_BUSY:
		return "a transition is under way";
	case SIM_CTRL_NOT_RTLOOP:
		return "the simulator runs only rtloop_control.script";
	}
	return "unknown";
}
