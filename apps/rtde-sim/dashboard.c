// SPDX-License-Identifier: MIT
/*
 * The dashboard server of rtde-sim (port 29999): UR's line protocol
 * (docs/ur-dashboard.md) over the simulated controller (controller.h) and
 * the state the dashboard owns (panel.h).
 *
 * Each connection collects bytes into a bounded line buffer; each complete
 * line is one command, answered with one line in the controller's words.
 * Every command of UR's two dashboard manuals ("Dashboard Server
 * CB-Series" for PolyScope 3.x, "Dashboard Server e-Series" for 5.x) is one
 * row of the table below: its name, whether it takes an argument, the
 * version that added it on CB3 and on e-Series (0.0: never there), whether
 * an e-Series controller in local control refuses it, and its answer. A
 * command newer than the simulated version (the profile's, or
 * --controller-version) is answered "could not understand: '<line>'", as
 * the older dashboard does; so is a line no row names. The polyscope-x
 * profile serves no dashboard at all (the server does not listen;
 * server.c).
 *
 * Operations go to the controller's state machine, whose result (done, or
 * why not) becomes the reply a real controller gives: "Powering on",
 * "Cannot unlock protective stop until 5s after occurrence...", "File not
 * found: x", "Failed to execute: play". Where the manuals give no text (a
 * brake release refused in a protective stop, a refusal in local control,
 * a flight report asked for too soon) the simulator answers with the
 * wording real controllers have been seen to use, or a line naming the
 * cause, so that a client's refusal handling is exercised either way.
 * docs/rtde-sim.md ("The dashboard server") lists every reply and where
 * it comes from.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
/* The one installation every controller has. */
#define DEFAULT_INSTALLATION "default.installation"
/* Controller and software flight reports at most this often (the manual). */
#define REPORT_INTERVAL_NS (30 * 1000 * 1000 * 1000LL)
/* Controller time 0 as a date (2025-01-01), for the support file's name. */
#define EPOCH_2025 1735689600LL

/* The simulated arm: a UR5 on CB3, a UR5e on e-Series, which answers
 * "get robot model" with "UR5" too. Serial numbers in the manual's form
 * (year, model code, sequence: "20175599999"). */
#define MODEL "UR5"
#define SERIAL_CB3 "20163500001"
#define SERIAL_ESERIES "20205500001"
struct dash {
	size_t have;
	bool overflow; /* a line too long: skipped to its newline */
	char line[LINE_MAX_BYTES + 1];
};

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

/* One command being answered: who asks, when, and what it says. */
struct ask {
	struct sim *sim;
	struct sim_conn *c;
	int64_t now;
	bool cb3;	 /* PolyScope 3.x: the CB-Series manual's replies */
	const char *arg; /* after the command's name and one blank ("" if none) */
};

static const char *program_name(const struct sim_ctrl *ctl)
{
	const char *name = ctl->loaded[0] ? ctl->loaded : ctl->program_name;

	return name[0] ? name : "<unnamed>";
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* ---- the answers, in the manuals' order ---------------------------------------------- */

static void do_load(struct ask *q)
{
	enum sim_ctrl_result r;

	/* automatic: "loading and editing programs is not allowed" */
	if (q->sim->panel.op_mode == SIM_PANEL_OP_AUTOMATIC) {
		sim_conn_printf(q->c, "Error while loading program: %s\n", q->arg);
		return;
	}
	r = sim_ctrl_load(q->sim, q->arg);
	if (r == SIM_CTRL_OK) {
		q->sim->panel.saved = true; /* as it is on disk */
		sim_conn_printf(q->c, "Loading program: %s\n", q->arg);
	} else if (r == SIM_CTRL_NOT_FOUND) {
		sim_conn_printf(q->c, "File not found: %s\n", q->arg);
	} else {
		refused(q->c, r, "load");
	}
}

static void do_play(struct ask *q)
{
	op(q->c, sim_ctrl_play(q->sim, q->now), "play", "Starting program");
}

static void do_stop(struct ask *q)
{
	op(q->c, sim_ctrl_stop(q->sim, q->now), "stop", "Stopped");
}

static void do_pause(struct ask *q)
{
	op(q->c, sim_ctrl_pause(q->sim, q->now), "pause", "Pausing program");
}

static void do_quit(struct ask *q)
{
	reply(q->c, "Disconnected");
	q->c->close = true;
}

/* Shuts down robot and controller: the simulator powers the arm off and
 * closes the connection, as the controller going away does; the server
 * itself keeps serving (panel.shutdown records the request). */
static void do_shutdown(struct ask *q)
{
	sim_ctrl_power_off(q->sim, q->now);
	q->sim->panel.shutdown = true;
	q->sim->panel.n.shutdowns++;
	reply(q->c, "Shutting down");
	q->c->close = true;
}

static void do_running(struct ask *q)
{
	bool on = q->sim->ctrl.program_state == RTL_UR_PROGRAM_PLAYING;

	if (q->cb3)
		sim_conn_printf(q->c, "Robot running: %s\n", on ? "True" : "False");
	else
		sim_conn_printf(q->c, "Program running: %s\n", on ? "true" : "false");
}

static void do_robotmode(struct ask *q)
{
	sim_conn_printf(q->c, "Robotmode: %s\n", rtl_ur_robot_mode_name(q->sim->ctrl.robot_mode));
}

static void do_get_loaded(struct ask *q)
{
	if (q->sim->ctrl.loaded[0])
		sim_conn_printf(q->c, "Loaded program: /programs/%s\n", q->sim->ctrl.loaded);
	else
		reply(q->c, "No program loaded");
}

static void do_popup(struct ask *q)
{
	struct sim_panel *p = &q->sim->panel;

	snprintf(p->popup_text, sizeof(p->popup_text), "%s", q->arg);
	p->popup = true;
	p->n.popups++;
	reply(q->c, "showing popup");
}

static void do_close_popup(struct ask *q)
{
	q->sim->panel.popup = false;
	q->sim->panel.n.popups_closed++;
	reply(q->c, "closing popup");
}

/* The line goes to the controller's log, which the primary and secondary
 * streams carry as a text message. */
static void do_add_to_log(struct ask *q)
{
	struct sim_ctrl_msg m = { .kind = SIM_MSG_TEXT, .level = SIM_LEVEL_INFO };

	if (!q->arg[0]) {
		reply(q->c, "No log message to add");
		return;
	}
	snprintf(m.text, sizeof(m.text), "%s", q->arg);
	sim_ctrl_message(q->sim, &m);
	q->sim->panel.n.log_lines++;
	reply(q->c, "Added log message");
}

static void do_set_user_role(struct ask *q)
{
	/* a bare setUserRole is "none" */
	int role = q->arg[0] ? sim_panel_role_parse(q->arg) : SIM_PANEL_ROLE_NONE;

	if (role < 0) {
		sim_conn_printf(q->c, "Failed setting user role: %s\n", q->arg);
		return;
	}
	q->sim->panel.role = (enum sim_panel_role)role;
	q->sim->panel.n.role_changes++;
	sim_conn_printf(q->c, "Setting user role: %s\n",
			sim_panel_role_name((enum sim_panel_role)role));
}

static void do_get_user_role(struct ask *q)
{
	const char *name = sim_panel_role_name(q->sim->panel.role);
	char up[16];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[i] = '\0';
	reply(q->c, up);
}

static void do_is_program_saved(struct ask *q)
{
	bool saved = q->sim->panel.saved && q->sim->ctrl.loaded[0];

	if (q->cb3)
		reply(q->c, saved ? "True" : "False");
	else
		sim_conn_printf(q->c, "%s %s\n", saved ? "true" : "false",
				program_name(&q->sim->ctrl));
}

static void do_program_state(struct ask *q)
{
	sim_conn_printf(q->c, "%s %s\n", rtl_ur_program_state_name(q->sim->ctrl.program_state),
			program_name(&q->sim->ctrl));
}

static void do_polyscope_version(struct ask *q)
{
	const struct rtl_rtde_controller_version *v = sim_version(q->sim);

	sim_conn_printf(q->c, "URSoftware %u.%u.%u.%u (Jan 01 2025)\n", v->major, v->minor,
			v->bugfix, v->build);
}

static void do_version(struct ask *q)
{
	const struct rtl_rtde_controller_version *v = sim_version(q->sim);

	sim_conn_printf(q->c, "%u.%u.%u.%u\n", v->major, v->minor, v->bugfix, v->build);
}

static void do_set_op_mode(struct ask *q)
{
	enum sim_panel_op_mode m;

	if (!strcasecmp(q->arg, "manual"))
		m = SIM_PANEL_OP_MANUAL;
	else if (!strcasecmp(q->arg, "automatic"))
		m = SIM_PANEL_OP_AUTOMATIC;
	else {
		sim_conn_printf(q->c, "Failed setting operational mode: %s\n", q->arg);
		return;
	}
	q->sim->panel.op_mode = m;
	q->sim->panel.n.op_mode_changes++;
	/* What controllers answer (and URCL and UR's ROS driver match), not
	 * the manual's "Setting operational mode: <mode>" (docs/rtde-sim.md). */
	sim_conn_printf(q->c, "Operational mode '%s' is set\n", q->arg);
}

static void do_get_op_mode(struct ask *q)
{
	reply(q->c, sim_panel_op_mode_name(q->sim->panel.op_mode));
}

static void do_clear_op_mode(struct ask *q)
{
	enum sim_panel_op_mode was = q->sim->panel.op_mode;

	q->sim->panel.op_mode = SIM_PANEL_OP_NONE;
	q->sim->panel.n.op_mode_changes++;
	/* As set: the controllers' text, not the manual's. The pendant keeps
	 * the mode the dashboard left. */
	sim_conn_printf(
		q->c,
		"No longer controlling the operational mode. Current operational mode: "
		"'%s'.\n",
		sim_panel_op_mode_name(was == SIM_PANEL_OP_NONE ? SIM_PANEL_OP_AUTOMATIC : was));
}

static void do_power_on(struct ask *q)
{
	op(q->c, sim_ctrl_power_on(q->sim, q->now), "power on", "Powering on");
}

static void do_power_off(struct ask *q)
{
	op(q->c, sim_ctrl_power_off(q->sim, q->now), "power off", "Powering off");
}

static void do_brake_release(struct ask *q)
{
	op(q->c, sim_ctrl_brake_release(q->sim, q->now), "brake release", "Brake releasing");
}

static void do_safetystatus(struct ask *q)
{
	sim_conn_printf(q->c, "Safetystatus: %s\n",
			rtl_ur_safety_status_name(q->sim->ctrl.safety_mode));
}

static void do_safetymode(struct ask *q)
{
	sim_conn_printf(q->c, "Safetymode: %s\n",
			rtl_ur_safety_status_name(q->sim->ctrl.safety_mode));
}

static void do_unlock(struct ask *q)
{
	enum sim_ctrl_result r = sim_ctrl_unlock(q->sim, q->now);

	/* Unlocking when there is nothing to unlock does no harm. */
	op(q->c, r == SIM_CTRL_NOT_STOPPED ? SIM_CTRL_OK : r, "unlock protective stop",
	   "Protective stop releasing");
}

static void do_close_safety_popup(struct ask *q)
{
	q->sim->panel.n.popups_closed++;
	reply(q->c, "closing safety popup");
}

static void do_load_installation(struct ask *q)
{
	struct sim_panel *p = &q->sim->panel;

	if (strcmp(basename_of(q->arg), DEFAULT_INSTALLATION) != 0) {
		p->n.installations_refused++;
		sim_conn_printf(q->c, "File not found: %s\n", q->arg);
		return;
	}
	/* automatic: "loading and editing ... installations is not allowed" */
	if (p->op_mode == SIM_PANEL_OP_AUTOMATIC) {
		p->n.installations_refused++;
		sim_conn_printf(q->c, "Failed to load installation: %s\n", q->arg);
		return;
	}
	snprintf(p->installation, sizeof(p->installation), "%s", q->arg);
	p->n.installations_loaded++;
	sim_conn_printf(q->c, "Loading installation: %s\n", q->arg);
}

/* After a restart the safety system is NORMAL and the arm powered off.
 * The controller (controller.h) has no restart of its own: the simulator
 * powers off and unlocks a protective stop when the unlock delay allows
 * it; a stop younger than that stays (docs/rtde-sim.md). */
static void do_restart_safety(struct ask *q)
{
	enum sim_ctrl_result r = sim_ctrl_restart_safety(q->sim, q->now);

	if (r != SIM_CTRL_OK) {
		refused(q->c, r, "restart safety");
		return;
	}
	q->sim->panel.n.safety_restarts++;
	reply(q->c, "Restarting safety");
}

static void do_remote(struct ask *q)
{
	reply(q->c, q->sim->ctrl.remote ? "true" : "false");
}

static const char *serial(const struct ask *q)
{
	return q->sim->opts.profile == SIM_PROFILE_CB3 ? SERIAL_CB3 : SERIAL_ESERIES;
}

static void do_serial(struct ask *q)
{
	reply(q->c, serial(q));
}

static void do_model(struct ask *q)
{
	reply(q->c, MODEL);
}

static void do_flight_report(struct ask *q)
{
	struct sim_panel *p = &q->sim->panel;
	bool timed = !strcasecmp(q->arg, "controller") || !strcasecmp(q->arg, "software");

	if (!timed && strcasecmp(q->arg, "system") != 0) {
		sim_conn_printf(
			q->c, "Error: unknown report type '%s' (controller, software or system)\n",
			q->arg);
		return;
	}
	if (timed && q->now - p->report_ns < REPORT_INTERVAL_NS) {
		reply(q->c, "Error: wait 30 seconds between controller or software reports");
		return;
	}
	if (timed)
		p->report_ns = q->now;
	p->n.flight_reports++;
	/* The report id: the manual gives no form; a number per report. */
	sim_conn_printf(q->c, "%08llx\n", (unsigned long long)(0x5a000000u + p->n.flight_reports));
}

static void do_support_file(struct ask *q)
{
	int64_t t = EPOCH_2025 + sim_ctrl_time_ns(q->sim) / 1000000000LL;
	time_t tt = (time_t)t;
	struct tm tm;
	char when[32];

	/* a directory inside the programs directory, which ".." leaves */
	if (strstr(q->arg, "..")) {
		sim_conn_printf(q->c,
				"Error: %s is not a directory inside the programs directory\n",
				q->arg);
		return;
	}
	gmtime_r(&tt, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d_%H-%M-%S", &tm);
	q->sim->panel.n.support_files++;
	sim_conn_printf(q->c, "Completed successfully: ur_%s_%s.zip\n", serial(q), when);
}

static void do_save_log(struct ask *q)
{
	q->sim->panel.n.logs_saved++;
	reply(q->c, "Log saved to disk");
}

/* ---- the table ----------------------------------------------------------------------- */

enum arg {
	ARG_NONE = 0, /* the line is the name, nothing after it */
	ARG_TEXT,     /* optional text after the name and a blank */
	ARG_NEEDED,   /* text needed: a bare name is not understood */
};

/* A version a command appeared in; {0, 0}: never on that series. */
struct since {
	unsigned char major, minor;
};

static const struct cmd {
	const char *name; /* as the manual spells it; matched in any case */
	enum arg arg;
	struct since cb3, eseries;
	bool local; /* e-Series in local control refuses it first */
	void (*answer)(struct ask *q);
} cmds[] = {
	/* Longer names first where one starts another ("load installation"). */
	{ "load installation", ARG_NEEDED, { 3, 2 }, { 5, 0 }, true, do_load_installation },
	{ "load", ARG_NEEDED, { 1, 4 }, { 5, 0 }, true, do_load },
	{ "play", ARG_NONE, { 1, 4 }, { 5, 0 }, true, do_play },
	{ "stop", ARG_NONE, { 1, 4 }, { 5, 0 }, false, do_stop },
	{ "pause", ARG_NONE, { 1, 4 }, { 5, 0 }, false, do_pause },
	{ "quit", ARG_NONE, { 1, 4 }, { 5, 0 }, false, do_quit },
	{ "shutdown", ARG_NONE, { 1, 4 }, { 5, 0 }, true, do_shutdown },
	{ "running", ARG_NONE, { 1, 6 }, { 5, 0 }, false, do_running },
	{ "robotmode", ARG_NONE, { 1, 6 }, { 5, 0 }, false, do_robotmode },
	{ "get loaded program", ARG_NONE, { 1, 6 }, { 5, 0 }, false, do_get_loaded },
	{ "popup", ARG_TEXT, { 1, 6 }, { 5, 0 }, false, do_popup },
	{ "close popup", ARG_NONE, { 1, 6 }, { 5, 0 }, false, do_close_popup },
	{ "addToLog", ARG_TEXT, { 1, 8 }, { 5, 0 }, false, do_add_to_log },
	{ "setUserRole", ARG_TEXT, { 1, 8 }, { 0, 0 }, false, do_set_user_role },
	{ "getUserRole", ARG_NONE, { 3, 1 }, { 0, 0 }, false, do_get_user_role },
	{ "isProgramSaved", ARG_NONE, { 1, 8 }, { 5, 0 }, false, do_is_program_saved },
	{ "programState", ARG_NONE, { 1, 8 }, { 5, 0 }, false, do_program_state },
	{ "PolyscopeVersion", ARG_NONE, { 1, 8 }, { 5, 0 }, false, do_polyscope_version },
	{ "version", ARG_NONE, { 0, 0 }, { 5, 0 }, false, do_version },
	{ "set operational mode", ARG_NEEDED, { 0, 0 }, { 5, 0 }, false, do_set_op_mode },
	{ "get operational mode", ARG_NONE, { 0, 0 }, { 5, 6 }, false, do_get_op_mode },
	{ "clear operational mode", ARG_NONE, { 0, 0 }, { 5, 0 }, false, do_clear_op_mode },
	{ "power on", ARG_NONE, { 3, 0 }, { 5, 0 }, true, do_power_on },
	{ "power off", ARG_NONE, { 3, 0 }, { 5, 0 }, false, do_power_off },
	{ "brake release", ARG_NONE, { 3, 0 }, { 5, 0 }, true, do_brake_release },
	{ "safetymode", ARG_NONE, { 3, 0 }, { 5, 0 }, false, do_safetymode },
	{ "safetystatus", ARG_NONE, { 3, 11 }, { 5, 4 }, false, do_safetystatus },
	{ "unlock protective stop", ARG_NONE, { 3, 1 }, { 5, 0 }, false, do_unlock },
	{ "close safety popup", ARG_NONE, { 3, 1 }, { 5, 0 }, false, do_close_safety_popup },
	{ "restart safety", ARG_NONE, { 3, 7 }, { 5, 1 }, true, do_restart_safety },
	{ "is in remote control", ARG_NONE, { 0, 0 }, { 5, 6 }, false, do_remote },
	{ "get serial number", ARG_NONE, { 3, 12 }, { 5, 6 }, false, do_serial },
	{ "get robot model", ARG_NONE, { 3, 12 }, { 5, 6 }, false, do_model },
	{ "generate flight report", ARG_NEEDED, { 3, 13 }, { 5, 8 }, false, do_flight_report },
	{ "generate support file", ARG_NEEDED, { 3, 13 }, { 5, 8 }, false, do_support_file },
	{ "saveLog", ARG_NONE, { 3, 13 }, { 5, 8 }, false, do_save_log },
};

/* Does the simulated version @v have a command that appeared in @s? */
static bool has(const struct rtl_rtde_controller_version *v, struct since s)
{
	if (!s.major)
		return false;
	return v->major > s.major || (v->major == s.major && v->minor >= s.minor);
}

/* The row whose name @line is (with its argument after a blank), or NULL. */
static const struct cmd *lookup(const char *line, const char **arg)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmd *k = &cmds[i];
		size_t n = strlen(k->name);

		if (strncasecmp(line, k->name, n) != 0)
			continue;
		if (line[n] == '\0') {
			if (k->arg == ARG_NEEDED)
				return NULL;
			*arg = "";
			return k;
		}
		if (line[n] == ' ' && k->arg != ARG_NONE) {
			*arg = line + n + 1;
			if (k->arg == ARG_NEEDED && !**arg)
				return NULL;
			return k;
		}
	}
	return NULL;
}

static void answer(struct sim *sim, struct sim_conn *c, const char *line, int64_t now)
{
	const struct rtl_rtde_controller_version *v = sim_version(sim);
	struct ask q = { .sim = sim, .c = c, .now = now, .cb3 = v->major < 5 };
	const struct cmd *k = lookup(line, &q.arg);

	sim->panel.n.commands++;
	if (!k || !has(v, q.cb3 ? k->cb3 : k->eseries)) {
		sim->panel.n.not_understood++;
		not_understood(c, line);
		return;
	}
	/* In local control an e-Series controller refuses, before anything
	 * else, what would move the arm or start a program. */
	if (k->local && !q.cb3 && !sim->ctrl.remote) {
		reply(c, LOCAL_REFUSAL);
		return;
	}
	k->answer(&q);
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
