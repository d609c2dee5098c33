/* SPDX-License-Identifier: MIT */
/*
 * sim_option: rtde-sim's settings by name, one table for the command
 * line (main.c) and the Python bindings (rtloop.Sim, apps/python/rtloop/
 * _sim.c), so a flag, its range, the field it sets and the checks across
 * flags exist once.
 *
 * Design
 * ------
 * - A setting is named as its flag without the dashes ("skip-every");
 *   sim_option_find() also takes '_' for '-' ("skip_every"), the
 *   spelling of a Python keyword.
 * - Each entry says what kind of value it takes (a flag, an unsigned
 *   integer or a finite double in a closed range, or a text such as a
 *   version), whether it is a fault (a way for the controller or the link
 *   to misbehave: what rtloop.Sim takes in its faults= dict), and whether
 *   it applies to the UDP mode.
 * - The setters check the value against the entry's range and write the
 *   field of struct sim_setup that the entry names (.off and .size; the
 *   controller's options, the server's, the UDP port); the front ends
 *   parse text (cli_u64() and friends, so the command line's messages
 *   stay its own) or convert Python objects, then call them.
 *   sim_setup_check() holds the checks that involve more than one setting.
 * - Messages name a setting in the caller's style: "--skip-count" for the
 *   command line, "skip_count" for Python.
 *
 * Not in the table: what only one front end has (the port and the bind
 * address, the profile, --json, --quiet, --priority, --no-mlock, --udp).
 * Pure: no I/O, no allocation.
 */
#ifndef RTLSIM_OPTIONS_H
#define RTLSIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server.h"
#include "udp.h"

/* What the settings fill: the controller's options, the server's, and the
 * UDP mode's port. */
struct sim_setup {
	struct sim_opts sim;
	struct sim_server_opts srv;
	uint16_t udp_port;
};

enum sim_option_kind {
	SIM_OPT_FLAG = 0, /* no value: on */
	SIM_OPT_UINT,	  /* an integer in [min, max] */
	SIM_OPT_DOUBLE,	  /* a finite number in [dmin, dmax] */
	SIM_OPT_TEXT,	  /* a text of the form .what says */
};

enum sim_option_id {
	SIM_OPT_MAX_CLIENTS = 0,
	SIM_OPT_HANDSHAKE_TIMEOUT,
	SIM_OPT_SEND_BUFFER,
	SIM_OPT_SNDBUF,
	SIM_OPT_CONTROLLER_VERSION,
	SIM_OPT_MAX_PROTOCOL,
	SIM_OPT_FIELDBUS,
	SIM_OPT_START_TIME,
	SIM_OPT_TEXT_V2,
	SIM_OPT_JITTER_US,
	SIM_OPT_SKIP_EVERY,
	SIM_OPT_SKIP_COUNT,
	SIM_OPT_STALL_MS,
	SIM_OPT_STALL_EVERY,
	SIM_OPT_BURST,
	SIM_OPT_BURST_EVERY,
	SIM_OPT_FRAGMENT,
	SIM_OPT_FRAGMENT_MAX,
	SIM_OPT_RESET_AFTER,
	SIM_OPT_TEXT_EVERY,
	SIM_OPT_SEED,
	SIM_OPT_ECHO_REGISTER,
	SIM_OPT_DURATION,
	SIM_OPT_CONTACT_Z,
	SIM_OPT_CONTACT_STIFFNESS,
	SIM_OPT_CONTACT_DAMPING,
	SIM_OPT_FORCE_NOISE,
	SIM_OPT_WATCHDOG_MS,
	SIM_OPT_BOOT,
	SIM_OPT_LOCAL_CONTROL,
	SIM_OPT_NO_DASHBOARD,
	SIM_OPT_POWER_ON_TIME,
	SIM_OPT_BRAKE_RELEASE_TIME,
	SIM_OPT_UNLOCK_DELAY,
	SIM_OPT_PROTECTIVE_STOP_AFTER,
	SIM_OPT_CONTROL_SCRIPT,
	SIM_OPT_PUSH_X,
	SIM_OPT_PUSH_Y,
	SIM_OPT_PUSH_Z,
	SIM_OPT_PUSH_AFTER,
	SIM_OPT_PUSH_FOR,
	SIM_OPT_EXTERNAL_CONTROL_URP,
	SIM_OPT_URCAP_HOST,
	SIM_OPT_URCAP_PORT,
	SIM_OPT_COUNT,
};

struct sim_option {
	enum sim_option_id id;
	const char *name; /* the flag without "--" */
	enum sim_option_kind kind;
	bool fault;	    /* a misbehaviour (rtloop.Sim's faults=) */
	bool udp;	    /* applies to the UDP mode as well */
	uint64_t min, max;  /* SIM_OPT_UINT */
	double dmin, dmax;  /* SIM_OPT_DOUBLE */
	const char *what;   /* the value, for messages ("an integer", "X.Y.Z[.B]") */
	const char *effect; /* one line: what it does */
	/* The field of struct sim_setup a FLAG, UINT or DOUBLE is stored in,
	 * at @off, of @size bytes; 0: the setter's own case (a value that
	 * sets two fields or is converted, such as --seed or --watchdog-ms). */
	size_t off, size;
};

/* How messages name a setting. */
enum sim_option_style {
	SIM_STYLE_FLAG = 0, /* "--skip-count" */
	SIM_STYLE_KEY,	    /* "skip_count" */
};

/* The defaults of rtde-sim: sim_opts_default(), a contact plane of
 * 5000 N/m and 50 N s/m when one is enabled, 127.0.0.1:30004, UDP port
 * 12347. */
void sim_setup_default(struct sim_setup *su);

/* Entry @i of the table, 0 <= @i < SIM_OPT_COUNT (in id order), or NULL. */
const struct sim_option *sim_option_at(size_t i);

/* The entry named @name, with '-' or '_' between the words, or NULL. */
const struct sim_option *sim_option_find(const char *name);

/* @o's name in @style into @buf of @cap bytes; returns @buf. */
const char *sim_option_name(const struct sim_option *o, enum sim_option_style style, char *buf,
			    size_t cap);

/*
 * Set @o to @v (SIM_OPT_UINT), @d (SIM_OPT_DOUBLE), on (a flag) or
 * the text @text (SIM_OPT_TEXT: parsed here). Returns 0, or -EINVAL
 * (the wrong kind for @o, a text that does not parse, a double that is not
 * finite) or -ERANGE (outside the entry's range), with a sentence naming
 * the setting in @style and the accepted values in @why (may be NULL).
 */
int sim_option_set_uint(struct sim_setup *su, const struct sim_option *o, uint64_t v,
			enum sim_option_style style, char *why, size_t cap);
int sim_option_set_double(struct sim_setup *su, const struct sim_option *o, double d,
			  enum sim_option_style style, char *why, size_t cap);
int sim_option_set_flag(struct sim_setup *su, const struct sim_option *o,
			enum sim_option_style style, char *why, size_t cap);
int sim_option_set_text(struct sim_setup *su, const struct sim_option *o, const char *text,
			enum sim_option_style style, char *why, size_t cap);

/*
 * The checks across settings, as rtde-sim makes them before it runs: a
 * controller version of the profile's product line, a skip count below
 * the skip period and only with it, a stall length only with a stall
 * period, an echo register outside the fieldbus range when the fieldbus
 * is on, the bind address an IPv4 address. Returns 0, or -EINVAL with the
 * sentence in @why (settings named in @style).
 */
int sim_setup_check(const struct sim_setup *su, enum sim_option_style style, char *why, size_t cap);

/* The UDP mode's options from @su (rtde-sim --udp: the bind address, the
 * UDP port, the duration, the start time, the skips and the robot). */
void sim_setup_udp(const struct sim_setup *su, struct sim_udp_opts *o);

#endif /* RTLSIM_OPTIONS_H */
