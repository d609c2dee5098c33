// SPDX-License-Identifier: MIT
/*
 * The dashboard server of rtde-sim (port 29999): UR's line protocol
 * (docs/ur-dashboard.md) over the simulated controller (controller.h).
 *
 * Each connection collects bytes into a bounded line buffer; each complete
 * line is one command, answered with one line in the controller's words.
 * Operations go to the controller's state machine, whose result (done, or
 * why not) becomes the reply a real controller gives: "Powering on",
 * "Cannot unlock protective stop until 5s after occurrence...", "File not
 * found: x", "Failed to execute: play". The answers follow the simulated
 * PolyScope version: a CB3 (3.x) profile knows no "is in remote control",
 * nor "safetystatus" before 3.11, and answers them with "could not
 * understand", as a 3.x dashboard does. The polyscope-x profile serves no
 * dashboard at all (the server does not listen; server.c).
 *
 * Where UR documents no reply text (a brake release refused in a
 * protective stop, a refusal in local control) the simulator answers with
 * the wording real controllers have been seen to use, or a line naming the
 * cause, so that a client's refusal handling is exercised either way.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "ports.h"
#include "sim.h"

#define LINE_MAX_BYTES 1024

/* The reply of an e-Series controller in local control to a command that
 * would change its state. */
#define LOCAL_REFUSAL "Command is not allowed due to safety reasons"
#define PSTOP_UNLOCK_EARLY                                                                  \
	"Cannot unlock protective stop until 5s after occurrence. Always inspect cause of " \
	"protective stop before unlocking"

struct dash {
	size_t have;
	bool overflow; /* a line too long: skipped to its newline */
	char line[LINE_MAX_BYTES + 1];
};

static bool at_least(const struct rtl_rtde_controller_version *v, uint32_t major, uint32_t minor)
{
	return v->major > major || (v->major == major && v->minor >= minor);
}

static void reply(struct sim_conn *c, const char *text)
{
	sim_conn_printf(c, "%s\n", text);
}

static void not_understood(struct sim_conn *c, const char *cmd)
{
	sim_conn_printf(c, "could not understand: '%s'\n", cmd);
}

/* The reply to a refused operation @what ("play", "power on"). */
static void refused(struct sim_conn *c, enum sim_ctrl_result r, const char *what)
{
	switch (r) {
	case SIM_CTRL_NOT_REMOTE:
		reply(c, LOCAL_REFUSAL);
		return;
	case SIM_CTRL_TOO_EARLY:
		reply(c, PSTOP_UNLOCK_EARLY);
		return;
	case SIM_CTRL_PROTECTIVE_STOP:
		sim_conn_printf(c, "Failed to execute: %s: robot is in protective stop\n", what);
		return;
	default:
		sim_conn_printf(c, "Failed to execute: %s\n", what);
		return;
	}
}

/* An operation whose success is one fixed reply. */
static void op(struct sim_conn *c, enum sim_ctrl_result r, const char *what, const char *ok)
{
	if (r == SIM_CTRL_OK)
		reply(c, ok);
	else
		refused(c, r, what);
}

/* The operations whose success is one fixed reply: the command (also the
 * "what" of a refusal), the controller's call, the reply. */
static const struct {
	const char *cmd;
	enum sim_ctrl_result (*call)(struct sim *sim, int64_t now);
	const char *ok;
} ops[] = {
	{ "power on", sim_ctrl_power_on, "Powering on" },
	{ "power off", sim_ctrl_power_off, "Powering off" },
	{ "brake release", sim_ctrl_brake_release, "Brake releasing" },
	{ "play", sim_ctrl_play, "Starting program" },
	{ "pause", sim_ctrl_pause, "Pausing program" },
	{ "stop", sim_ctrl_stop, "Stopped" },
};

static void answer(struct sim *sim, struct sim_conn *c, const char *cmd, int64_t now)
{
	struct rtl_rtde_controller_version v = *sim_version(sim);
	struct sim_ctrl *ctl = &sim->ctrl;
	bool cb3 = v.major < 5;

	/* In local control an e-Series controller refuses, before anything
	 * else, what would move the arm or start a program. */
	if (!cb3 && !ctl->remote &&
	    (!strcasecmp(cmd, "power on") || !strcasecmp(cmd, "brake release") ||
	     !strncasecmp(cmd, "load ", 5) || !strcasecmp(cmd, "play"))) {
		reply(c, LOCAL_REFUSAL);
		return;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcasecmp(cmd, ops[i].cmd)) {
			op(c, ops[i].call(sim, now), ops[i].cmd, ops[i].ok);
			return;
		}
	}
	if (!strcasecmp(cmd, "unlock protective stop")) {
		enum sim_ctrl_result r;

		if (cb3 && !at_least(&v, 3, 1)) {
			not_understood(c, cmd);
			return;
		}
		r = sim_ctrl_unlock(sim, now);
		/* Unlocking when there is nothing to unlock does no harm. */
		op(c, r == SIM_CTRL_NOT_STOPPED ? SIM_CTRL_OK : r, "unlock protective stop",
		   "Protective stop releasing");
	} else if (!strcasecmp(cmd, "close safety popup")) {
		if (cb3 && !at_least(&v, 3, 1))
			not_understood(c, cmd);
		else
			reply(c, "closing safety popup");
	} else if (!strcasecmp(cmd, "close popup")) {
		reply(c, "closing popup");
	} else if (!strcasecmp(cmd, "robotmode")) {
		sim_conn_printf(c, "Robotmode: %s\n", rtl_ur_robot_mode_name(ctl->robot_mode));
	} else if (!strcasecmp(cmd, "safetystatus")) {
		if (cb3 ? !at_least(&v, 3, 11) : !at_least(&v, 5, 4))
			not_understood(c, cmd);
		else
			sim_conn_printf(c, "Safetystatus: %s\n",
					rtl_ur_safety_status_name(ctl->safety_mode));
	} else if (!strcasecmp(cmd, "safetymode")) {
		sim_conn_printf(c, "Safetymode: %s\n", rtl_ur_safety_status_name(ctl->safety_mode));
	} else if (!strcasecmp(cmd, "programState")) {
		const char *name = ctl->loaded[0] ? ctl->loaded : ctl->program_name;

		sim_conn_printf(c, "%s %s\n", rtl_ur_program_state_name(ctl->program_state),
				name[0] ? name : "<unnamed>");
	} else if (!strcasecmp(cmd, "running")) {
		sim_conn_printf(c, "Program running: %s\n",
				ctl->program_state == RTL_UR_PROGRAM_PLAYING ? "true" : "false");
	} else if (!strcasecmp(cmd, "get loaded program")) {
		if (ctl->loaded[0])
			sim_conn_printf(c, "Loaded program: %s\n", ctl->loaded);
		else
			reply(c, "No program loaded");
	} else if (!strcasecmp(cmd, "is in remote control")) {
		if (cb3 || !at_least(&v, 5, 6))
			not_understood(c, cmd);
		else
			reply(c, ctl->remote ? "true" : "false");
	} else if (!strcasecmp(cmd, "PolyscopeVersion")) {
		sim_conn_printf(c, "URSoftware %u.%u.%u.%u (Jan 01 2025)\n", v.major, v.minor,
				v.bugfix, v.build);
	} else if (!strcasecmp(cmd, "version") && !cb3) {
		sim_conn_printf(c, "%u.%u.%u.%u\n", v.major, v.minor, v.bugfix, v.build);
	} else if (!strncasecmp(cmd, "load ", 5) && cmd[5]) {
		const char *name = cmd + 5;
		enum sim_ctrl_result r = sim_ctrl_load(sim, name);

		if (r == SIM_CTRL_OK)
			sim_conn_printf(c, "Loading program: %s\n", name);
		else if (r == SIM_CTRL_NOT_FOUND)
			sim_conn_printf(c, "File not found: %s\n", name);
		else
			refused(c, r, "load");
	} else if (!strcasecmp(cmd, "quit")) {
		reply(c, "Disconnected");
		c->close = true;
	} else {
		not_understood(c, cmd);
	}
}

static int dash_open(struct sim *sim, struct sim_conn *c, int64_t now)
{
	struct dash *d = calloc(1, sizeof(*d));

	(void)sim;
	(void)now;
	if (!d)
		return -ENOMEM;
	c->state = d;
	return sim_conn_printf(c, "Connected: Universal Robots Dashboard Server\n");
}

static void dash_feed(struct sim *sim, struct sim_conn *c, const uint8_t *p, size_t n, int64_t now)
{
	struct dash *d = c->state;

	for (size_t i = 0; i < n && !c->close; i++) {
		if (p[i] != '\n') {
			if (d->have < LINE_MAX_BYTES)
				d->line[d->have++] = (char)p[i];
			else
				d->overflow = true;
			continue;
		}
		while (d->have > 0 && (d->line[d->have - 1] == '\r' || d->line[d->have - 1] == ' '))
			d->have--;
		d->line[d->have] = '\0';
		if (d->overflow)
			reply(c, "could not understand: command too long");
		else if (d->have > 0)
			answer(sim, c, d->line, now);
		d->have = 0;
		d->overflow = false;
	}
}

const struct sim_port_ops sim_dashboard_ops = {
	.name = "dashboard",
	.open = dash_open,
	.feed = dash_feed,
	.close = sim_conn_free_state,
};
