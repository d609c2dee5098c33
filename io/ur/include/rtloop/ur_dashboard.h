/* SPDX-License-Identifier: MIT */
/*
 * rtl_ur_dashboard: a client of Universal Robots' dashboard server (TCP
 * port 29999), the text protocol that powers the arm on, releases the
 * brakes, unlocks a protective stop and loads and plays programs: the
 * steps of bringing an arm up before an RTDE loop can run.
 *
 * Design
 * ------
 * The protocol is one line per command and one line per reply, after a
 * greeting ("Connected: Universal Robots Dashboard Server"). The client
 * reads the greeting, asks the PolyScope version once, and from then on
 * refuses locally a command that the connected PolyScope does not have
 * (naming the version that added it) instead of sending it and parsing a
 * "could not understand". Every reply is matched against the strings the
 * controller sends; every refusal becomes -errno and one sentence with the
 * cause and the fix. Every call that waits is bounded by the configured
 * timeout. A time-out, a reply too long for the line buffer or a closed
 * peer leave the stream out of step: the connection is closed and later
 * calls return -ENOTCONN. A refusal (a whole line that says no) keeps it.
 *
 * PolyScope X (10.x) has no dashboard server: connecting to it is refused
 * on 29999. The client then tells PolyScope X apart from a controller
 * whose dashboard is off: by the controller version the caller knows
 * from RTDE (config.controller_major), or by asking the Robot API (HTTP,
 * port 80, /universal-robots/robot-api/openapi.json) once; it says so with
 * the fix (docs/ur-dashboard.md has what PolyScope X offers instead;
 * <rtloop/ur_robot_api.h> speaks it).
 *
 * Thread and RT safety: one client per thread (no locks inside). Nothing
 * here is RT-safe: these are bring-up calls (they block up to the timeout
 * and allocate at connect). The library never prints.
 */
#ifndef RTLOOP_UR_DASHBOARD_H
#define RTLOOP_UR_DASHBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

#define RTL_UR_DASHBOARD_PORT 29999
/* The Robot API of PolyScope X (HTTP), probed when 29999 is refused. */
#define RTL_UR_ROBOT_API_PORT 80
/* PolyScope X's controller versions start here (RTDE's major version). */
#define RTL_UR_POLYSCOPE_X_MAJOR 10

/* Returns true when a controller of major version @major runs PolyScope X:
 * no dashboard, the Robot API instead. */
RTL_INLINE bool rtl_ur_is_polyscope_x(unsigned major)
{
	return major >= RTL_UR_POLYSCOPE_X_MAJOR;
}
/* Bytes of one reply line, newline excluded: a longer line is an error. */
#define RTL_UR_DASHBOARD_LINE 1024

/* Robot mode, UR's numbering and names ("Robotmode: IDLE"). */
enum rtl_ur_robot_mode {
	RTL_UR_ROBOT_MODE_NO_CONTROLLER = -1,
	RTL_UR_ROBOT_MODE_DISCONNECTED = 0,
	RTL_UR_ROBOT_MODE_CONFIRM_SAFETY = 1,
	RTL_UR_ROBOT_MODE_BOOTING = 2,
	RTL_UR_ROBOT_MODE_POWER_OFF = 3,
	RTL_UR_ROBOT_MODE_POWER_ON = 4,
	RTL_UR_ROBOT_MODE_IDLE = 5,
	RTL_UR_ROBOT_MODE_BACKDRIVE = 6,
	RTL_UR_ROBOT_MODE_RUNNING = 7,
	RTL_UR_ROBOT_MODE_UPDATING_FIRMWARE = 8,
};

/* Safety status (and the older safety mode), UR's numbering and names. */
enum rtl_ur_safety_status {
	RTL_UR_SAFETY_NORMAL = 1,
	RTL_UR_SAFETY_REDUCED = 2,
	RTL_UR_SAFETY_PROTECTIVE_STOP = 3,
	RTL_UR_SAFETY_RECOVERY = 4,
	RTL_UR_SAFETY_SAFEGUARD_STOP = 5,
	RTL_UR_SAFETY_SYSTEM_EMERGENCY_STOP = 6,
	RTL_UR_SAFETY_ROBOT_EMERGENCY_STOP = 7,
	RTL_UR_SAFETY_VIOLATION = 8,
	RTL_UR_SAFETY_FAULT = 9,
	RTL_UR_SAFETY_VALIDATE_JOINT_ID = 10,
	RTL_UR_SAFETY_UNDEFINED_SAFETY_MODE = 11,
	RTL_UR_SAFETY_AUTOMATIC_MODE_SAFEGUARD_STOP = 12,
	RTL_UR_SAFETY_SYSTEM_THREE_POSITION_ENABLING_STOP = 13,
};

enum rtl_ur_program_state {
	RTL_UR_PROGRAM_STOPPED = 0,
	RTL_UR_PROGRAM_PLAYING = 1,
	RTL_UR_PROGRAM_PAUSED = 2,
};

/* A PolyScope version: "URSoftware 5.11.1.108318 (Dec 06 2021)". */
struct rtl_ur_version {
	unsigned major, minor, patch, build;
};

/* programState's answer: the state and the loaded program's name. */
struct rtl_ur_program {
	enum rtl_ur_program_state state;
	char name[256]; /* as the controller says it ("<unnamed>" when none); cut to fit */
};

/* Fill with rtl_ur_dashboard_config_init() (it sets .size; docs/api.md,
 * "Room to grow"). */
struct rtl_ur_dashboard_config {
	size_t size;
	const char *host;	    /* name or address of the controller */
	uint16_t port;		    /* RTL_UR_DASHBOARD_PORT */
	int64_t connect_timeout_ns; /* connect and greeting: 3 s */
	int64_t timeout_ns;	    /* each command's reply: 2 s */
	/* The controller's major version if the caller knows it (RTDE's
	 * controller version): 10 and up is PolyScope X. 0: unknown. */
	unsigned controller_major;
	/* Where to ask PolyScope X's Robot API when 29999 is refused
	 * (RTL_UR_ROBOT_API_PORT; 0: do not ask). */
	uint16_t robot_api_port;
};

struct rtl_ur_dashboard;

/* The defaults above; host stays NULL. */
RTL_API void rtl_ur_dashboard_config_init(struct rtl_ur_dashboard_config *cfg);

/*
 * Connect to the dashboard server of @cfg->host, read the greeting, and ask
 * the PolyScope version (the version gate of every later call). On success
 * *@out is the client (free it with rtl_ur_dashboard_destroy()). Returns 0 or,
 * with @err filled:
 *   -EINVAL           @cfg, @cfg->host or @out NULL.
 *   -EPROTONOSUPPORT  the controller runs PolyScope X (no dashboard server).
 *   -ECONNREFUSED     nothing listens on the port (dashboard server off?).
 *   -ETIMEDOUT        no connection, or no greeting, within the timeout.
 *   -EPROTO           the peer is not a UR dashboard server (greeting).
 *   -ECONNRESET       the peer closed before greeting.
 *   -EMSGSIZE         a greeting line longer than RTL_UR_DASHBOARD_LINE.
 *   -ENOMEM, other -errno of the connect (rtl_tcp_connect()).
 */
RTL_API int rtl_ur_dashboard_create(struct rtl_ur_dashboard **out,
				    const struct rtl_ur_dashboard_config *cfg,
				    struct rtl_error *err);

/* Close the connection and free @d (NULL: nothing). Sends nothing. */
RTL_API void rtl_ur_dashboard_destroy(struct rtl_ur_dashboard *d);

/* Returns the PolyScope version read at connect (@d not NULL). */
RTL_API const struct rtl_ur_version *rtl_ur_dashboard_version(const struct rtl_ur_dashboard *d);

/* Change the reply timeout of later calls (> 0). */
RTL_API void rtl_ur_dashboard_set_timeout(struct rtl_ur_dashboard *d, int64_t timeout_ns);

/*
 * The codes every command below may return, besides its own:
 *   -ENOTCONN    an earlier error closed the connection: connect again.
 *   -EOPNOTSUPP  the connected PolyScope does not have the command (refused
 *                here, naming the version that added it), or the peer
 *                answered "could not understand".
 *   -EPERM       refused: the robot is not in remote control (or the
 *                controller refused "for safety reasons"), or it is in a
 *                protective stop.
 *   -EPROTO      a reply the command never gives (kept connected).
 *   -ETIMEDOUT   no reply within the timeout (closes the connection).
 *   -ECONNRESET  the peer closed (closes the connection); -EPIPE likewise.
 *   -EMSGSIZE    a reply line longer than RTL_UR_DASHBOARD_LINE (closes).
 *   -EINVAL      @d is NULL.
 */

/* "power on" -> "Powering on". Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_power_on(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "power off" -> "Powering off". Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_power_off(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "brake release" -> "Brake releasing". Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_brake_release(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "unlock protective stop" -> "Protective stop releasing". Returns 0 or a
 * code above, or -EAGAIN when the controller says it is too early (5 s
 * after the stop). */
RTL_API int rtl_ur_dashboard_unlock_protective_stop(struct rtl_ur_dashboard *d,
						    struct rtl_error *err);
/* "close safety popup" -> "closing safety popup". Returns 0 or a code
 * above. */
RTL_API int rtl_ur_dashboard_close_safety_popup(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "close popup" -> "closing popup". Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_close_popup(struct rtl_ur_dashboard *d, struct rtl_error *err);

/* "robotmode" -> "Robotmode: <NAME>" into *@mode. Returns 0 or a code above
 * (-EPROTO for a mode this client does not know). */
RTL_API int rtl_ur_dashboard_robot_mode(struct rtl_ur_dashboard *d, enum rtl_ur_robot_mode *mode,
					struct rtl_error *err);
/* "safetystatus" -> "Safetystatus: <NAME>" into *@status; on a PolyScope
 * without it (before 3.11 / 5.4) "safetymode" -> "Safetymode: <NAME>".
 * Returns 0 or a code above (-EPROTO for a status this client does not
 * know). */
RTL_API int rtl_ur_dashboard_safety_status(struct rtl_ur_dashboard *d,
					   enum rtl_ur_safety_status *status,
					   struct rtl_error *err);
/* "programState" -> "<STOPPED|PLAYING|PAUSED> <name>" into *@prog. Returns 0
 * or a code above. */
RTL_API int rtl_ur_dashboard_program_state(struct rtl_ur_dashboard *d, struct rtl_ur_program *prog,
					   struct rtl_error *err);
/* "is in remote control" -> "true" / "false" (PolyScope 5.6 and up) into
 * *@remote. Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_is_in_remote_control(struct rtl_ur_dashboard *d, bool *remote,
						  struct rtl_error *err);
/* "PolyscopeVersion" -> "URSoftware a.b.c.d (date)", parsed into *@v.
 * Returns 0 or a code above (-EPROTO for a version that does not parse). */
RTL_API int rtl_ur_dashboard_polyscope_version(struct rtl_ur_dashboard *d, struct rtl_ur_version *v,
					       struct rtl_error *err);

/* "load <program>" -> "Loading program: <program>". Returns 0 or a code
 * above, or -ENOENT "File not found", -EIO "Error while loading program",
 * -EINVAL @program NULL, empty, with a line break or too long for a line. */
RTL_API int rtl_ur_dashboard_load(struct rtl_ur_dashboard *d, const char *program,
				  struct rtl_error *err);
/* "play" -> "Starting program". Returns 0 or a code above, or -EIO "Failed
 * to execute: play". */
RTL_API int rtl_ur_dashboard_play(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "pause" -> "Pausing program". Returns 0 or a code above, or -EIO "Failed
 * to execute: pause". */
RTL_API int rtl_ur_dashboard_pause(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "stop" -> "Stopped". Returns 0 or a code above, or -EIO "Failed to
 * execute: stop". */
RTL_API int rtl_ur_dashboard_stop(struct rtl_ur_dashboard *d, struct rtl_error *err);
/* "quit" -> "Disconnected"; the connection is closed after (even on error).
 * Returns 0 or a code above. */
RTL_API int rtl_ur_dashboard_quit(struct rtl_ur_dashboard *d, struct rtl_error *err);

/*
 * Send any command line @cmd (no line break in it) and copy the reply line
 * (without newline) to @reply (@cap bytes, cut to fit). No version gate, no
 * reply check: the codes of the transport only (-ENOTCONN, -ETIMEDOUT,
 * -ECONNRESET, -EPIPE, -EMSGSIZE, -EINVAL). Returns the reply's length.
 */
RTL_API int rtl_ur_dashboard_command(struct rtl_ur_dashboard *d, char *reply, size_t cap,
				     const char *cmd, struct rtl_error *err);

/*
 * Parse "URSoftware 5.11.1.108318 (Dec 06 2021)" (or a bare "5.11.1.108318";
 * missing parts are 0) into *@v. Returns 0 or -EINVAL.
 */
RTL_API int rtl_ur_version_parse(struct rtl_ur_version *v, const char *s);

/* The name functions return UR's names ("IDLE", "PROTECTIVE_STOP",
 * "PLAYING"), "?" for other values. The parsers return 0 and set *@mode or
 * *@status, or -EINVAL for a name that is not one (or NULL). */
RTL_API const char *rtl_ur_robot_mode_name(enum rtl_ur_robot_mode mode);
RTL_API const char *rtl_ur_safety_status_name(enum rtl_ur_safety_status status);
RTL_API const char *rtl_ur_program_state_name(enum rtl_ur_program_state state);
RTL_API int rtl_ur_robot_mode_parse(enum rtl_ur_robot_mode *mode, const char *name);
RTL_API int rtl_ur_safety_status_parse(enum rtl_ur_safety_status *status, const char *name);

RTL_END_DECLS

#endif /* RTLOOP_UR_DASHBOARD_H */
