/* SPDX-License-Identifier: MIT */
/*
 * sim_panel: what the dashboard server owns of the simulated controller,
 * besides the arm and its program (controller.h): the operational mode the
 * dashboard holds (e-Series), the user role of the Welcome screen (CB3),
 * the popup on the pendant, the loaded installation, whether the loaded
 * program is saved, a requested shutdown, and counters of what the
 * dashboard was asked to do.
 *
 * Design
 * ------
 * Plain state, no allocation, no time of its own: the dashboard
 * (dashboard.c) changes it while it answers a command, on the server's one
 * thread, and the report reads it after the run. The counters are one
 * X-macro list (SIM_PANEL_COUNTERS), from which the struct fields and the
 * JSON are both produced, so a counter added is reported without a second
 * edit.
 *
 * The operational mode follows the e-Series manual: without a password for
 * the mode in the settings (the simulator has none) "get operational mode"
 * answers NONE; "set operational mode" makes the dashboard hold MANUAL or
 * AUTOMATIC, and "clear operational mode" gives the mode back (NONE
 * again). The user role is the CB3 Welcome screen's; it restricts the
 * pendant's buttons, not the dashboard, so it changes no reply but
 * getUserRole's.
 *
 * Thread safety: one thread (the server's) owns it, as struct sim.
 */
#ifndef RTLSIM_PANEL_H
#define RTLSIM_PANEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_PANEL_TEXT 256
#define SIM_PANEL_NAME 128

enum sim_panel_op_mode {
	SIM_PANEL_OP_NONE = 0, /* not held by the dashboard, no mode password */
	SIM_PANEL_OP_MANUAL,
	SIM_PANEL_OP_AUTOMATIC,
};

/* The CB3 user roles, as setUserRole spells them. */
enum sim_panel_role {
	SIM_PANEL_ROLE_NONE = 0, /* every button enabled (the default) */
	SIM_PANEL_ROLE_PROGRAMMER,
	SIM_PANEL_ROLE_OPERATOR,
	SIM_PANEL_ROLE_LOCKED,
	SIM_PANEL_ROLE_RESTRICTED,
	SIM_PANEL_ROLE_COUNT,
};

/* The counters: X(field, what it counts). */
#define SIM_PANEL_COUNTERS(X)                                               \
	X(commands, "dashboard commands answered")                          \
	X(not_understood, "commands answered with could not understand")    \
	X(log_lines, "addToLog lines queued as controller messages")        \
	X(popups, "popups shown")                                           \
	X(popups_closed, "close popup and close safety popup")              \
	X(installations_loaded, "load installation that succeeded")         \
	X(installations_refused, "load installation not found or refused")  \
	X(op_mode_changes, "set and clear operational mode that succeeded") \
	X(role_changes, "setUserRole that succeeded")                       \
	X(safety_restarts, "restart safety")                                \
	X(shutdowns, "shutdown")                                            \
	X(flight_reports, "generate flight report that succeeded")          \
	X(support_files, "generate support file that succeeded")            \
	X(logs_saved, "saveLog")

struct sim_panel_counters {
#define SIM_PANEL_FIELD(name, what) uint64_t name;
	SIM_PANEL_COUNTERS(SIM_PANEL_FIELD)
#undef SIM_PANEL_FIELD
};

struct sim_panel {
	enum sim_panel_op_mode op_mode; /* held by the dashboard unless NONE */
	enum sim_panel_role role;
	bool popup; /* a popup is shown */
	char popup_text[SIM_PANEL_TEXT];
	char installation[SIM_PANEL_NAME]; /* the loaded installation */
	bool saved;			   /* the loaded program is saved */
	bool shutdown;			   /* a shutdown was asked for */
	int64_t report_ns;		   /* last controller or software flight report */
	struct sim_panel_counters n;
};

/* Start state: mode NONE, role none, no popup, default.installation, no
 * program saved. */
void sim_panel_init(struct sim_panel *p);
void sim_panel_destroy(struct sim_panel *p);

/* The names as the dashboard spells them: "NONE"/"MANUAL"/"AUTOMATIC";
 * "none", "programmer", ... ; NULL when out of range. */
const char *sim_panel_op_mode_name(enum sim_panel_op_mode m);
const char *sim_panel_role_name(enum sim_panel_role r);

/* The role named @name (any case), or -EINVAL. */
int sim_panel_role_parse(const char *name);

/* Write the panel as one JSON object (state and counters) to @f. */
void sim_panel_json(FILE *f, const struct sim_panel *p);

#endif /* RTLSIM_PANEL_H */
