// SPDX-License-Identifier: MIT
/*
 * rtloop-arm: bring a Universal Robots arm up and down through its
 * dashboard server (<rtloop/ur_dashboard.h>), or on PolyScope X through its
 * Robot API (<rtloop/ur_robot_api.h>), one printed step at a time. The
 * steps ask the library's table of the interface's calls (<rtloop/ur_manage.h>), so
 * both interfaces run the same steps with the same printing.
 *
 *   check  read-only: the PolyScope version, remote control, robot mode,
 *          safety status and program state, and what "up" would do next
 *   up     (unlock a protective stop,) power on, wait for IDLE, release the
 *          brakes, wait for RUNNING
 *   stop   stop the program; the program state after
 *   down   stop, power off, wait for POWER_OFF
 *
 * A thin driver: every decision is one of the dashboard client's calls and
 * every failure its struct rtl_error sentence (cause and fix), printed with
 * the step that failed. The waits poll "robotmode" (the replies to "power
 * on" and "brake release" come when the command is accepted, not when the
 * arm got there: docs/ur-dashboard.md) and are bounded by --timeout; each
 * reply by the client's own timeout (2 s, or --timeout when shorter).
 * Ctrl-C ends a wait; nothing is undone (the arm stays as it got).
 * Exit status: 0 done (check: all readable), 1 a step failed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/error.h>
#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_manage.h>
#include <rtloop/ur_robot_api.h>

#include "cli.h"

#define PROG "rtloop-arm"
/* How often a wait asks "robotmode" or retries an early unlock. */
#define POLL_NS (50 * 1000 * 1000LL)
#define UNLOCK_RETRY_NS (250 * 1000 * 1000LL)

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };
enum cmd { CMD_CHECK, CMD_UP, CMD_STOP, CMD_DOWN };

struct opts {
	enum cmd cmd;
	const char *host;
	uint16_t port;
	double timeout_s;
	bool unlock;
	bool quiet;
	bool no_dashboard_ok;
	bool robot_api;	   /* --robot-api: PolyScope X, skip the dashboard */
	uint16_t api_port; /* the Robot API's port */
};

/* The steps below ask a struct arm, never a client: the dashboard server
 * (CB3, e-Series) and PolyScope X's Robot API fill the same table (further
 * down), so both bring an arm up with the same steps and printing. */
struct arm {
	const struct rtl_ur_manage_ops *ops; /* the dashboard's or the Robot API's */
	void *h;
	struct rtl_ur_version v;
	bool has_remote; /* the interface can ask for remote control */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: " PROG " check|up|stop|down HOST [options]\n"
		   "       " PROG " --help | --version\n"
		   "\n"
		   "Bring a Universal Robots arm up and down through its dashboard server\n"
		   "(TCP 29999), or PolyScope X's Robot API (HTTP 80), printing each step,\n"
		   "what it found and, when a step fails, the step and the fix.\n"
		   "\n"
		   "Commands:\n"
		   "  check   read-only: PolyScope version, remote control, robot mode, safety\n"
		   "          status, program state, and what 'up' would do; changes nothing\n"
		   "  up      power on, wait for IDLE, release the brakes, wait for RUNNING;\n"
		   "          refuses in local control and in a protective stop (--unlock)\n"
		   "  stop    stop the program, then print the program state\n"
		   "  down    stop the program, power off, wait for POWER_OFF\n"
		   "\n"
		   "Options:\n"
		   "  -p, --dashboard-port N  the dashboard server's port (default 29999)\n"
		   "  -t, --timeout S         bound of each wait, in seconds (default 30)\n"
		   "  -u, --unlock            up: unlock a protective stop first (retried\n"
		   "                          until the controller allows it, 5 s after it)\n"
		   "  -n, --no-dashboard-ok   check: a controller without a dashboard server\n"
		   "                          (refused, and no Robot API) is not a failure\n"
		   "  -r, --robot-api         PolyScope X: use the Robot API (HTTP) at once\n"
		   "                          (it is used anyway when the dashboard's port is\n"
		   "                          closed and the Robot API answers)\n"
		   "  -R, --robot-api-port N  the Robot API's port (default 80)\n"
		   "  -q, --quiet             print only failures\n"
		   "  -h, --help              print this help and exit\n"
		   "  -V, --version           print the version and exit\n"
		   "\n"
		   "Exit status: 0 done (check: everything readable), 1 a step failed,\n"
		   "2 usage error.\n");
}

static bool quiet;

/* One line of progress on stdout (nothing with --quiet). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The failure of @step: "rtloop-arm: STEP failed: MESSAGE" on stderr. */
static int failed(const char *step, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failed(const char *step, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, PROG ": %s failed: ", step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

static int failed_err(const char *step, const struct rtl_error *e)
{
	return failed(step, "%s", e->msg[0] ? e->msg : strerror(-e->code));
}

static double since_s(int64_t t0)
{
	return (double)(rtl_time_now() - t0) / 1e9;
}

static bool has_remote_query(const struct rtl_ur_version *v)
{
	return v->major >= 5 && (v->major > 5 || v->minor >= 6);
}

/* The fix for a safety status that "up" cannot clear, or NULL if it can run. */
static const char *safety_fix(enum rtl_ur_safety_status s)
{
	switch (s) {
	case RTL_UR_SAFETY_NORMAL:
	case RTL_UR_SAFETY_REDUCED:
	case RTL_UR_SAFETY_PROTECTIVE_STOP:
		return NULL;
	case RTL_UR_SAFETY_SYSTEM_EMERGENCY_STOP:
	case RTL_UR_SAFETY_ROBOT_EMERGENCY_STOP:
		return "an emergency stop is pressed: release it (turn the button), then on "
		       "the teach pendant confirm the popup and run again";
	case RTL_UR_SAFETY_SAFEGUARD_STOP:
	case RTL_UR_SAFETY_AUTOMATIC_MODE_SAFEGUARD_STOP:
		return "a safeguard stop input is open (a light curtain, a door, an enabling "
		       "device): close it, then run again";
	case RTL_UR_SAFETY_SYSTEM_THREE_POSITION_ENABLING_STOP:
		return "the three-position enabling device is released: hold it in the middle "
		       "position or leave manual high speed mode";
	case RTL_UR_SAFETY_RECOVERY:
		return "a joint is outside the safety limits (recovery mode): move it back "
		       "inside on the teach pendant (Move tab), then run again";
	default:
		return "the safety system stopped the robot (violation or fault): read the "
		       "popup on the teach pendant, restart safety there, then run again";
	}
}

/* The fix for a robot mode "up" cannot start from, or NULL. */
static const char *mode_fix(enum rtl_ur_robot_mode m)
{
	switch (m) {
	case RTL_UR_ROBOT_MODE_POWER_OFF:
	case RTL_UR_ROBOT_MODE_POWER_ON:
	case RTL_UR_ROBOT_MODE_BOOTING:
	case RTL_UR_ROBOT_MODE_IDLE:
	case RTL_UR_ROBOT_MODE_RUNNING:
		return NULL;
	case RTL_UR_ROBOT_MODE_CONFIRM_SAFETY:
		return "the controller waits for its safety configuration to be confirmed: do "
		       "it on the teach pendant (the popup asks for the safety password)";
	case RTL_UR_ROBOT_MODE_BACKDRIVE:
		return "the arm is in backdrive (brakes released by hand from the pendant): "
		       "leave it on the teach pendant first";
	case RTL_UR_ROBOT_MODE_UPDATING_FIRMWARE:
		return "the joints' firmware is being updated: wait until PolyScope says it "
		       "is done";
	default:
		return "the controller does not reach the arm (disconnected, no controller): "
		       "check the arm's cable to the control box and the popup on the pendant";
	}
}

/* Wait until the robot mode is one of @a or @b; bounded by @o->timeout_s. */
static int wait_mode(struct arm *d, const struct opts *o, const char *step,
		     enum rtl_ur_robot_mode a, enum rtl_ur_robot_mode b,
		     enum rtl_ur_robot_mode *got, int64_t t0)
{
	int64_t deadline = t0 + (int64_t)(o->timeout_s * 1e9);
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_NO_CONTROLLER;
	struct rtl_error e = { 0 };

	for (;;) {
		int64_t next;

		if (d->ops->robot_mode(d->h, &m, &e) < 0)
			return failed_err(step, &e);
		if (m == a || m == b) {
			*got = m;
			return EXIT_OK;
		}
		if (stop_requested)
			return failed(step, "interrupted while waiting for %s (robot mode %s)",
				      rtl_ur_robot_mode_name(a), rtl_ur_robot_mode_name(m));
		next = rtl_time_now() + POLL_NS;
		if (next > deadline)
			return failed(step,
				      "robot mode still %s after %.1f s, not %s: look at the "
				      "teach pendant (a popup, a safety stop, the arm's power), "
				      "or allow more time with --timeout",
				      rtl_ur_robot_mode_name(m), since_s(t0),
				      rtl_ur_robot_mode_name(a));
		rtl_time_sleep_until(next);
	}
}

static int read_safety(struct arm *d, const char *step, enum rtl_ur_safety_status *s)
{
	struct rtl_error e = { 0 };

	if (d->ops->safety(d->h, s, &e) < 0)
		return failed_err(step, &e);
	return EXIT_OK;
}

/* Unlock a protective stop, retrying the controller's "too early". */
static int unlock(struct arm *d, const struct opts *o)
{
	int64_t t0 = rtl_time_now(), deadline = t0 + (int64_t)(o->timeout_s * 1e9);
	enum rtl_ur_safety_status s;
	struct rtl_error e = { 0 };
	bool told = false;
	int r;

	for (;;) {
		r = d->ops->unlock(d->h, &e);
		if (r == 0)
			break;
		if (r != -EAGAIN)
			return failed_err("unlock protective stop", &e);
		if (!told) {
			say("unlock protective stop: too early (the controller allows it 5 s "
			    "after the stop), retrying");
			told = true;
		}
		if (stop_requested)
			return failed("unlock protective stop", "interrupted");
		if (rtl_time_now() + UNLOCK_RETRY_NS > deadline)
			return failed("unlock protective stop", "still refused after %.1f s: %s",
				      since_s(t0), e.msg);
		rtl_time_sleep_until(rtl_time_now() + UNLOCK_RETRY_NS);
	}
	say("unlock protective stop: unlocked after %.2f s", since_s(t0));
	/* The popup stays on the pendant otherwise; a PolyScope without the
	 * command is no reason to stop. */
	r = d->ops->close_safety_popup(d->h, &e);
	if (r < 0 && r != -EOPNOTSUPP)
		return failed_err("close safety popup", &e);
	for (;;) {
		r = read_safety(d, "unlock protective stop", &s);
		if (r)
			return r;
		if (s != RTL_UR_SAFETY_PROTECTIVE_STOP)
			break;
		if (rtl_time_now() + POLL_NS > deadline)
			return failed("unlock protective stop",
				      "safety status still PROTECTIVE_STOP %.1f s after the "
				      "unlock: look at the teach pendant",
				      since_s(t0));
		rtl_time_sleep_until(rtl_time_now() + POLL_NS);
	}
	say("safety status: %s", rtl_ur_safety_status_name(s));
	return EXIT_OK;
}

/* No client's wait (@connect, @each reply) outlasts --timeout. */
static void cap_timeouts(const struct opts *o, int64_t *connect, int64_t *each)
{
	int64_t t = (int64_t)(o->timeout_s * 1e9);

	if (t < *connect)
		*connect = t;
	if (t < *each)
		*each = t;
}

/* The Robot API client on @o->api_port; prints the version. */
static int connect_api(const struct opts *o, struct arm *a)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };
	int r;

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = o->host;
	cfg.port = o->api_port;
	cap_timeouts(o, &cfg.connect_timeout_ns, &cfg.timeout_ns);
	say("connect: Robot API http://%s:%u" RTL_UR_ROBOT_API_BASE, o->host, o->api_port);
	if (rtl_ur_robot_api_create(&api, &cfg, &e) < 0)
		return failed_err("connect", &e);
	r = rtl_ur_robot_api_version(api, &a->v, &e);
	if (r == -EOPNOTSUPP) {
		/* /versions/v1 came with 10.14; the rest is older. */
		a->v = (struct rtl_ur_version){ 10, 0, 0, 0 };
		say("connect: PolyScope X (version not asked: before 10.14)");
	} else if (r < 0) {
		rtl_ur_robot_api_destroy(api);
		return failed_err("connect", &e);
	} else {
		say("connect: PolyScope X %u.%u.%u (Robot API)", a->v.major, a->v.minor,
		    a->v.patch);
	}
	a->ops = &rtl_ur_robot_api_manage;
	a->h = api;
	a->has_remote = true;
	return EXIT_OK;
}

/* Connect and print the version: the dashboard, or the Robot API when asked
 * (--robot-api) or when the controller turns out to be PolyScope X. Returns
 * EXIT_OK with @a filled; otherwise the exit status (printed), @a->h NULL. */
static int connect_arm(const struct opts *o, struct arm *a)
{
	struct rtl_ur_dashboard_config cfg;
	struct rtl_ur_dashboard *d = NULL;
	const struct rtl_ur_version *v;
	struct rtl_error e = { 0 };
	int r;

	a->h = NULL;
	if (o->robot_api)
		return connect_api(o, a);
	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = o->host;
	cfg.port = o->port;
	cfg.robot_api_port = o->api_port;
	cap_timeouts(o, &cfg.connect_timeout_ns, &cfg.timeout_ns);
	say("connect: dashboard %s:%u", o->host, o->port);
	r = rtl_ur_dashboard_create(&d, &cfg, &e);
	if (r == -EPROTONOSUPPORT) {
		say("connect: PolyScope X: no dashboard server, using its Robot API");
		return connect_api(o, a);
	}
	if (r < 0) {
		if (o->no_dashboard_ok && r == -ECONNREFUSED) {
			say("connect: no dashboard server (%s); --no-dashboard-ok: bring the "
			    "arm up on the teach pendant",
			    e.msg);
			return EXIT_OK;
		}
		return failed_err("connect", &e);
	}
	v = rtl_ur_dashboard_version(d);
	say("connect: PolyScope %u.%u.%u.%u (%s)", v->major, v->minor, v->patch, v->build,
	    v->major >= 5 ? "e-Series" : "CB3");
	a->ops = &rtl_ur_dashboard_manage;
	a->h = d;
	a->v = *v;
	a->has_remote = has_remote_query(v);
	return EXIT_OK;
}

/* "is in remote control" where the version has it: 1 yes or not asked, 0 no. */
static int remote_control(struct arm *d, const char *step, bool *remote)
{
	const struct rtl_ur_version *v = &d->v;
	struct rtl_error e = { 0 };

	*remote = true;
	if (!d->has_remote) {
		say("remote control: not asked (PolyScope %u.%u has no 'is in remote "
		    "control'%s)",
		    v->major, v->minor,
		    v->major < 5 ? "; CB3 takes commands from the network" : "");
		return EXIT_OK;
	}
	if (d->ops->remote(d->h, remote, &e) < 0)
		return failed_err(step, &e);
	say("remote control: %s", *remote ? "yes" : "no (local control)");
	return EXIT_OK;
}

#define LOCAL_FIX                                                                            \
	"the robot is in local control: on the teach pendant switch to Remote Control (top " \
	"right; enable it first in Settings > System > Remote Control), then run again"

static const char *next_step(bool remote, enum rtl_ur_safety_status s, enum rtl_ur_robot_mode m,
			     char *buf, size_t cap)
{
	const char *fix = safety_fix(s);

	if (!remote) {
		snprintf(buf, cap, "local control: ARM=1 would refuse; %s", LOCAL_FIX);
	} else if (fix) {
		snprintf(buf, cap, "safety status %s: ARM=1 would refuse; %s",
			 rtl_ur_safety_status_name(s), fix);
	} else if (mode_fix(m)) {
		snprintf(buf, cap, "robot mode %s: ARM=1 would refuse; %s",
			 rtl_ur_robot_mode_name(m), mode_fix(m));
	} else {
		const char *what = "leave power and brakes as they are";

		if (m == RTL_UR_ROBOT_MODE_POWER_OFF)
			what = "power on and release the brakes";
		else if (m == RTL_UR_ROBOT_MODE_POWER_ON || m == RTL_UR_ROBOT_MODE_BOOTING)
			what = "wait for IDLE and release the brakes";
		else if (m == RTL_UR_ROBOT_MODE_IDLE)
			what = "release the brakes";
		if (s == RTL_UR_SAFETY_PROTECTIVE_STOP)
			snprintf(buf, cap,
				 "safety status PROTECTIVE_STOP: ARM=1 would refuse; ARM=1 "
				 "UNLOCK=1 (up --unlock) would unlock it, then %s (robot mode %s)",
				 what, rtl_ur_robot_mode_name(m));
		else
			snprintf(buf, cap, "robot mode %s: ARM=1 would %s",
				 rtl_ur_robot_mode_name(m), what);
	}
	return buf;
}

/* Did query @step answer (@r >= 0)? If not, print why and set *@status. */
static bool answered(int r, const char *step, const struct rtl_error *e, int *status)
{
	if (r >= 0)
		return true;
	*status = failed_err(step, e);
	return false;
}

/* Step @step: call @send (NULL: the controller is at it already), wait
 * for robot mode @a or @b (into *@m) and say how long that took. */
static int step_wait(struct arm *d, const struct opts *o, const char *step,
		     int (*send)(void *h, struct rtl_error *e), enum rtl_ur_robot_mode a,
		     enum rtl_ur_robot_mode b, enum rtl_ur_robot_mode *m)
{
	struct rtl_error e = { 0 };
	int64_t t0 = rtl_time_now();
	int r;

	if (send && send(d->h, &e) < 0)
		return failed_err(step, &e);
	say("%s: %s, waiting for %s ...", step, send ? "sent" : "under way",
	    rtl_ur_robot_mode_name(a));
	r = wait_mode(d, o, step, a, b, m, t0);
	if (r)
		return r;
	say("%s: %s after %.2f s", step, rtl_ur_robot_mode_name(*m), since_s(t0));
	return EXIT_OK;
}

static int cmd_check(struct arm *d)
{
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_NO_CONTROLLER;
	enum rtl_ur_safety_status s = RTL_UR_SAFETY_NORMAL;
	struct rtl_ur_program p;
	struct rtl_error e = { 0 };
	int status = EXIT_OK;
	bool remote = true, got_m, got_s;
	char buf[512];

	if (remote_control(d, "remote control", &remote))
		status = EXIT_FAIL;
	got_m = answered(d->ops->robot_mode(d->h, &m, &e), "robot mode", &e, &status);
	if (got_m)
		say("robot mode: %s", rtl_ur_robot_mode_name(m));
	got_s = answered(d->ops->safety(d->h, &s, &e), "safety status", &e, &status);
	if (got_s)
		say("safety status: %s", rtl_ur_safety_status_name(s));
	if (answered(d->ops->program_state(d->h, &p, &e), "program state", &e, &status))
		say("program state: %s %s", rtl_ur_program_state_name(p.state), p.name);
	if (got_m && got_s)
		say("next: %s", next_step(remote, s, m, buf, sizeof(buf)));
	if (status == EXIT_OK)
		say("check: done, nothing changed");
	return status;
}

static int cmd_up(struct arm *d, const struct opts *o)
{
	enum rtl_ur_robot_mode m;
	enum rtl_ur_safety_status s;
	struct rtl_error e = { 0 };
	const char *fix;
	bool remote;
	int r;

	r = remote_control(d, "remote control", &remote);
	if (r)
		return r;
	if (!remote)
		return failed("remote control", LOCAL_FIX);
	r = read_safety(d, "safety status", &s);
	if (r)
		return r;
	say("safety status: %s", rtl_ur_safety_status_name(s));
	fix = safety_fix(s);
	if (fix)
		return failed("safety status", "safety status %s: %s", rtl_ur_safety_status_name(s),
			      fix);
	if (s == RTL_UR_SAFETY_PROTECTIVE_STOP) {
		if (!o->unlock)
			return failed("safety status",
				      "the robot is in a protective stop: inspect and remove "
				      "its cause, then run again with --unlock (make demo: "
				      "UNLOCK=1)");
		r = unlock(d, o);
		if (r)
			return r;
	}
	if (d->ops->robot_mode(d->h, &m, &e) < 0)
		return failed_err("robot mode", &e);
	say("robot mode: %s", rtl_ur_robot_mode_name(m));
	fix = mode_fix(m);
	if (fix)
		return failed("robot mode", "robot mode %s: %s", rtl_ur_robot_mode_name(m), fix);

	if (m == RTL_UR_ROBOT_MODE_POWER_OFF || m == RTL_UR_ROBOT_MODE_POWER_ON ||
	    m == RTL_UR_ROBOT_MODE_BOOTING) {
		/* Powering on already (POWER_ON, BOOTING): only wait. */
		r = step_wait(d, o, "power on",
			      m == RTL_UR_ROBOT_MODE_POWER_OFF ? d->ops->power_on : NULL,
			      RTL_UR_ROBOT_MODE_IDLE, RTL_UR_ROBOT_MODE_RUNNING, &m);
		if (r)
			return r;
	} else {
		say("power on: not needed (%s)", rtl_ur_robot_mode_name(m));
	}

	if (m == RTL_UR_ROBOT_MODE_IDLE) {
		r = step_wait(d, o, "brake release", d->ops->brake_release,
			      RTL_UR_ROBOT_MODE_RUNNING, RTL_UR_ROBOT_MODE_RUNNING, &m);
		if (r)
			return r;
	} else {
		say("brake release: not needed (RUNNING)");
	}
	say("up: robot mode RUNNING, ready for the control program");
	return EXIT_OK;
}

/* Stop the program; a refused stop (the dashboard's "Failed to execute:
 * stop", the Robot API's HTTP 409) with nothing playing is done. */
static int stop_program(struct arm *d)
{
	struct rtl_error e = { 0 }, e2 = { 0 };
	struct rtl_ur_program p;
	int r;

	r = d->ops->stop(d->h, &e);
	if ((r == -EIO || r == -EPERM) && d->ops->program_state(d->h, &p, &e2) == 0 &&
	    p.state == RTL_UR_PROGRAM_STOPPED) {
		say("stop: nothing to stop (%s %s)", rtl_ur_program_state_name(p.state), p.name);
		return EXIT_OK;
	}
	if (r < 0)
		return failed_err("stop", &e);
	say("stop: sent");
	if (d->ops->program_state(d->h, &p, &e) < 0)
		return failed_err("program state", &e);
	say("program state: %s %s", rtl_ur_program_state_name(p.state), p.name);
	return EXIT_OK;
}

static int cmd_down(struct arm *d, const struct opts *o)
{
	enum rtl_ur_robot_mode m;
	struct rtl_error e = { 0 };
	int r;

	r = stop_program(d);
	if (r)
		return r;
	if (d->ops->robot_mode(d->h, &m, &e) < 0)
		return failed_err("robot mode", &e);
	if (m == RTL_UR_ROBOT_MODE_POWER_OFF) {
		say("power off: not needed (POWER_OFF)");
		return EXIT_OK;
	}
	return step_wait(d, o, "power off", d->ops->power_off, RTL_UR_ROBOT_MODE_POWER_OFF,
			 RTL_UR_ROBOT_MODE_POWER_OFF, &m);
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct cli_opt opts[] = {
		CLI_UINT('p', "dashboard-port", &o->port, 1, 65535, NULL),
		CLI_HELP,
		CLI_FLAG('n', "no-dashboard-ok", &o->no_dashboard_ok),
		CLI_FLAG('q', "quiet", &o->quiet),
		CLI_FLAG('r', "robot-api", &o->robot_api),
		CLI_UINT('R', "robot-api-port", &o->api_port, 1, 65535, NULL),
		CLI_REAL('t', "timeout", &o->timeout_s, 0.1, 3600, NULL),
		CLI_FLAG('u', "unlock", &o->unlock),
		CLI_VERSION,
		CLI_END,
	};
	static const char *const cmds[] = { "check", "up", "stop", "down" };
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	int k;

	/* No row is a CLI_CASE: cli_next() returns only 0 or -1. */
	if (cli_next(&p, argc, argv) < 0)
		return p.status;
	if (optind >= argc)
		return cli_usage_error(PROG, "missing command: check, up, stop or down");
	k = cli_lookup(argv[optind], cmds, 4);
	if (k < 0)
		return cli_usage_error(PROG, "unknown command '%s' (check, up, stop or down)",
				       argv[optind]);
	o->cmd = (enum cmd)k;
	if (optind + 1 >= argc)
		return cli_usage_error(PROG, "%s: missing HOST", cmds[k]);
	o->host = argv[optind + 1];
	if (!*o->host)
		return cli_usage_error(PROG, "HOST is empty");
	if (cli_extra_args(PROG, optind + 2, argc, argv))
		return EXIT_USAGE;
	if (o->unlock && o->cmd != CMD_UP)
		return cli_usage_error(PROG, "--unlock goes with 'up' only");
	if (o->no_dashboard_ok && o->cmd != CMD_CHECK)
		return cli_usage_error(PROG, "--no-dashboard-ok goes with 'check' only");
	return CLI_RUN;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.port = RTL_UR_DASHBOARD_PORT,
		.api_port = RTL_UR_ROBOT_API_PORT,
		.timeout_s = 30,
	};
	struct arm arm;
	int r, status = EXIT_OK;

	/* Parse and validate. */
	r = parse(argc, argv, &o);
	if (r != CLI_RUN)
		return r;
	quiet = o.quiet;
	r = cli_on_stop_signals(on_signal);
	if (r < 0) {
		fprintf(stderr, PROG ": cannot catch SIGINT: %s\n", strerror(-r));
		return EXIT_FAIL;
	}

	/* Run: one connection, one command. */
	status = connect_arm(&o, &arm);
	if (!arm.h)
		return status;
	status = o.cmd == CMD_CHECK  ? cmd_check(&arm)
		 : o.cmd == CMD_UP   ? cmd_up(&arm, &o)
		 : o.cmd == CMD_STOP ? stop_program(&arm)
				     : cmd_down(&arm, &o);
	arm.ops->close(arm.h);
	return status;
}
