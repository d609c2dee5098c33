// SPDX-License-Identifier: MIT
/*
 * The dashboard client (design in <rtloop/ur_dashboard.h>; the protocol,
 * its replies and the differences between PolyScope generations in
 * docs/ur-dashboard.md).
 *
 * One table holds each command's text and the PolyScope versions that
 * added it on CB3 (3.x) and on e-Series (5.x): the gate before sending.
 * Each call then matches the reply against its success text; anything
 * else goes through refusal(), which knows the controller's ways of saying
 * no (remote control, protective stop, "Failed to execute", "could not
 * understand") and writes the one sentence with the cause and the fix.
 * Lines are read into a fixed buffer: a peer that floods text without a
 * newline gets -EMSGSIZE, not unbounded memory.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/sized.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>

#define GREETING "Connected: Universal Robots Dashboard Server"
#define ROBOT_API_PROBE "/universal-robots/robot-api/openapi.json"

struct rtl_ur_dashboard {
	int fd;
	char host[256];
	uint16_t port;
	int64_t timeout_ns;
	struct rtl_ur_version version;
	size_t have;
	char buf[RTL_UR_DASHBOARD_LINE + 1]; /* a line and its newline */
	char line[RTL_UR_DASHBOARD_LINE + 1];
};

/* ---- the commands and the versions that added them ------------------------------------------ */

enum cmd_id {
	C_POWER_ON,
	C_POWER_OFF,
	C_BRAKE_RELEASE,
	C_UNLOCK_PSTOP,
	C_CLOSE_SAFETY_POPUP,
	C_CLOSE_POPUP,
	C_ROBOTMODE,
	C_SAFETYSTATUS,
	C_SAFETYMODE,
	C_PROGRAM_STATE,
	C_REMOTE,
	C_VERSION,
	C_LOAD,
	C_PLAY,
	C_PAUSE,
	C_STOP,
	C_QUIT,
};

struct cmd {
	const char *text;
	/* The first version with the command, on CB3 and on e-Series; a
	 * major of 0 for CB3: the 3.x series never had it. */
	unsigned cb3_major, cb3_minor, e_major, e_minor;
};

// clang-format off
static const struct cmd CMDS[] = {
	[C_POWER_ON]           = { "power on",               3, 0,  5, 0 },
	[C_POWER_OFF]          = { "power off",              3, 0,  5, 0 },
	[C_BRAKE_RELEASE]      = { "brake release",          3, 0,  5, 0 },
	[C_UNLOCK_PSTOP]       = { "unlock protective stop", 3, 1,  5, 0 },
	[C_CLOSE_SAFETY_POPUP] = { "close safety popup",     3, 1,  5, 0 },
	[C_CLOSE_POPUP]        = { "close popup",            1, 6,  5, 0 },
	[C_ROBOTMODE]          = { "robotmode",              1, 6,  5, 0 },
	[C_SAFETYSTATUS]       = { "safetystatus",           3, 11, 5, 4 },
	[C_SAFETYMODE]         = { "safetymode",             3, 0,  5, 0 },
	[C_PROGRAM_STATE]      = { "programState",           1, 8,  5, 0 },
	[C_REMOTE]             = { "is in remote control",   0, 0,  5, 6 },
	[C_VERSION]            = { "PolyscopeVersion",       1, 8,  5, 0 },
	[C_LOAD]               = { "load",                   1, 4,  5, 0 },
	[C_PLAY]               = { "play",                   1, 4,  5, 0 },
	[C_PAUSE]              = { "pause",                  1, 4,  5, 0 },
	[C_STOP]               = { "stop",                   1, 4,  5, 0 },
	[C_QUIT]               = { "quit",                   1, 4,  5, 0 },
};

static const char *const ROBOT_MODES[] = {
	"NO_CONTROLLER", "DISCONNECTED", "CONFIRM_SAFETY", "BOOTING", "POWER_OFF",
	"POWER_ON", "IDLE", "BACKDRIVE", "RUNNING", "UPDATING_FIRMWARE",
};

static const char *const SAFETY[] = {
	NULL, "NORMAL", "REDUCED", "PROTECTIVE_STOP", "RECOVERY", "SAFEGUARD_STOP",
	"SYSTEM_EMERGENCY_STOP", "ROBOT_EMERGENCY_STOP", "VIOLATION", "FAULT",
	"VALIDATE_JOINT_ID", "UNDEFINED_SAFETY_MODE", "AUTOMATIC_MODE_SAFEGUARD_STOP",
	"SYSTEM_THREE_POSITION_ENABLING_STOP",
};

static const char *const PROGRAM_STATES[] = { "STOPPED", "PLAYING", "PAUSED" };
// clang-format on

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- names and versions --------------------------------------------------------------------- */

/* ROBOT_MODES starts at NO_CONTROLLER (-1); SAFETY's [0] is a hole. */
RTL_API const char *rtl_ur_robot_mode_name(enum rtl_ur_robot_mode mode)
{
	return RTL__NAME_OF(ROBOT_MODES, (long)mode + 1, "?");
}

RTL_API const char *rtl_ur_safety_status_name(enum rtl_ur_safety_status status)
{
	return RTL__NAME_OF(SAFETY, status, "?");
}

RTL_API const char *rtl_ur_program_state_name(enum rtl_ur_program_state state)
{
	return RTL__NAME_OF(PROGRAM_STATES, state, "?");
}

RTL_API int rtl_ur_robot_mode_parse(enum rtl_ur_robot_mode *mode, const char *name)
{
	for (size_t i = 0; name && i < N(ROBOT_MODES); i++) {
		if (strcmp(name, ROBOT_MODES[i]) == 0) {
			*mode = (enum rtl_ur_robot_mode)((int)i - 1);
			return 0;
		}
	}
	return -EINVAL;
}

RTL_API int rtl_ur_safety_status_parse(enum rtl_ur_safety_status *status, const char *name)
{
	for (size_t i = 1; name && i < N(SAFETY); i++) {
		if (strcmp(name, SAFETY[i]) == 0) {
			*status = (enum rtl_ur_safety_status)i;
			return 0;
		}
	}
	return -EINVAL;
}

RTL_API int rtl_ur_version_parse(struct rtl_ur_version *v, const char *s)
{
	unsigned part[4] = { 0 };
	int n = 0;

	if (!s || !v)
		return -EINVAL;
	if (strncmp(s, "URSoftware ", 11) == 0)
		s += 11;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (n < 4 && isdigit((unsigned char)*s)) {
		char *end;
		unsigned long x = strtoul(s, &end, 10);

		if (x > 100000000UL)
			return -EINVAL;
		part[n++] = (unsigned)x;
		s = end;
		if (*s != '.')
			break;
		s++;
	}
	/* After the numbers: the end, or a space before the build date. */
	if (*s != '\0' && *s != ' ' && *s != '-')
		return -EINVAL;
	v->major = part[0];
	v->minor = part[1];
	v->patch = part[2];
	v->build = part[3];
	return 0;
}

/* ---- text helpers --------------------------------------------------------------------------- */

/* @s for a message: printable ASCII only, cut to about 100 characters. */
static const char *shown(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s && n + 4 < cap; s++) {
		if (n >= 100) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		out[n++] = isprint((unsigned char)*s) ? *s : '?';
	}
	out[n] = '\0';
	return out;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool starts_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_ci(const char *s, const char *what)
{
	return strcasestr(s, what) != NULL;
}

/* ---- the connection ------------------------------------------------------------------------- */

static void drop(struct rtl_ur_dashboard *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->have = 0;
}

/*
 * One reply line into d->line (newline, a carriage return and trailing
 * blanks removed) by @deadline. Returns its length or a negative code with
 * @err filled; every failure closes the connection (the stream is out of
 * step). @what names the exchange in the message.
 */
static int read_line(struct rtl_ur_dashboard *d, int64_t deadline, int64_t timeout_ns,
		     const char *what, struct rtl_error *err)
{
	for (;;) {
		char *nl = memchr(d->buf, '\n', d->have);
		ssize_t r;

		if (nl) {
			size_t len = (size_t)(nl - d->buf);

			memcpy(d->line, d->buf, len);
			while (len > 0 && (d->line[len - 1] == '\r' || d->line[len - 1] == ' '))
				len--;
			d->line[len] = '\0';
			d->have -= (size_t)(nl + 1 - d->buf);
			memmove(d->buf, nl + 1, d->have);
			return (int)len;
		}
		if (d->have == sizeof(d->buf)) {
			drop(d);
			return rtl_error_set(
				err, -EMSGSIZE,
				"dashboard %s:%u: %s: a reply line longer than %d bytes "
				"without a newline: this is not a UR dashboard server "
				"(check the address and port %d); connection closed",
				d->host, d->port, what, RTL_UR_DASHBOARD_LINE,
				RTL_UR_DASHBOARD_PORT);
		}
		r = rtl_tcp_recv(d->fd, d->buf + d->have, sizeof(d->buf) - d->have, deadline);
		if (r > 0) {
			d->have += (size_t)r;
			continue;
		}
		drop(d);
		if (r == 0 || r == -ECONNRESET)
			return rtl_error_set(
				err, -ECONNRESET,
				"dashboard %s:%u: %s: the controller closed the "
				"connection before a whole reply: another client may "
				"have taken over, or PolyScope restarted; connect again",
				d->host, d->port, what);
		if (r == -ETIMEDOUT)
			return rtl_error_set(
				err, -ETIMEDOUT,
				"dashboard %s:%u: %s: no reply within %.1f s: PolyScope "
				"is busy or stuck (look at the teach pendant), or this "
				"port is not a dashboard server; connect again, with a "
				"longer timeout if PolyScope is just slow",
				d->host, d->port, what, (double)timeout_ns / 1e9);
		return rtl_error_set(err, (int)r, "dashboard %s:%u: %s: receive failed: %s",
				     d->host, d->port, what, strerror((int)-r));
	}
}

/* Send @cmd and read its reply into d->line. Returns its length or < 0. */
static int exchange(struct rtl_ur_dashboard *d, const char *cmd, struct rtl_error *err)
{
	char out[RTL_UR_DASHBOARD_LINE + 2];
	int64_t deadline;
	size_t n = strlen(cmd);
	int r;

	if (d->fd < 0)
		return rtl_error_set(err, -ENOTCONN,
				     "dashboard %s:%u: '%s': not connected (an earlier error "
				     "closed the connection): connect again",
				     d->host, d->port, cmd);
	if (n == 0 || n > RTL_UR_DASHBOARD_LINE || strpbrk(cmd, "\r\n"))
		return rtl_error_set(err, -EINVAL,
				     "dashboard %s:%u: a command must be one line of 1 to %d "
				     "bytes without line breaks",
				     d->host, d->port, RTL_UR_DASHBOARD_LINE);
	memcpy(out, cmd, n);
	out[n++] = '\n';
	deadline = rtl_time_now() + d->timeout_ns;
	r = rtl_tcp_send_all(d->fd, out, n, deadline);
	if (r < 0) {
		drop(d);
		if (r == -ETIMEDOUT)
			return rtl_error_set(err, r,
					     "dashboard %s:%u: '%s': could not send within %.1f s: "
					     "the controller does not read; connect again",
					     d->host, d->port, cmd, (double)d->timeout_ns / 1e9);
		return rtl_error_set(err, r,
				     "dashboard %s:%u: '%s': send failed (%s): the controller "
				     "closed the connection; connect again",
				     d->host, d->port, cmd, strerror(-r));
	}
	return read_line(d, deadline, d->timeout_ns, cmd, err);
}

static bool version_at_least(const struct rtl_ur_version *v, unsigned major, unsigned minor)
{
	return v->major > major || (v->major == major && v->minor >= minor);
}

/* Whether the connected PolyScope has @c (no message). */
static bool has_cmd(const struct rtl_ur_dashboard *d, const struct cmd *c)
{
	if (d->version.major >= 5)
		return version_at_least(&d->version, c->e_major, c->e_minor);
	return c->cb3_major != 0 && version_at_least(&d->version, c->cb3_major, c->cb3_minor);
}

static int gate(struct rtl_ur_dashboard *d, enum cmd_id id, struct rtl_error *err)
{
	const struct cmd *c = &CMDS[id];
	const struct rtl_ur_version *v = &d->version;

	if (has_cmd(d, c))
		return 0;
	if (v->major < 5 && c->cb3_major == 0)
		return rtl_error_set(
			err, -EOPNOTSUPP,
			"dashboard %s:%u: '%s' exists from PolyScope %u.%u on; this "
			"controller runs %u.%u.%u (CB3), which never had it: do this on "
			"the teach pendant, or use an e-Series controller",
			d->host, d->port, c->text, c->e_major, c->e_minor, v->major, v->minor,
			v->patch);
	return rtl_error_set(err, -EOPNOTSUPP,
			     "dashboard %s:%u: '%s' exists from PolyScope %u.%u on; this "
			     "controller runs %u.%u.%u: update PolyScope, or do this on the teach "
			     "pendant",
			     d->host, d->port, c->text, v->major >= 5 ? c->e_major : c->cb3_major,
			     v->major >= 5 ? c->e_minor : c->cb3_minor, v->major, v->minor,
			     v->patch);
}

/* The controller's refusals: a reply that holds (or, with at_start, begins
 * with) one of @match is refused with @code, the cause and the fix. */
struct refusal {
	const char *match[4];
	bool at_start;
	int code;
	bool failed; /* "'cmd' failed (...)" rather than "refused 'cmd' (...)" */
	const char *why;
};

static const struct refusal REFUSALS[] = {
	{ { "remote control", "local control", "remote mode", "local mode" },
	  false,
	  -EPERM,
	  false,
	  "the robot is not in remote control; on the teach pendant switch to Remote Control (top "
	  "right; enable it first in Settings > System > Remote Control)" },
	{ { "Command is not allowed due to safety reasons" },
	  true,
	  -EPERM,
	  false,
	  "the robot is not in remote control, or a safety stop forbids it; on the teach pendant "
	  "switch to Remote Control (top right) and check the safety status" },
	{ { "protective stop" },
	  false,
	  -EPERM,
	  false,
	  "the robot is in a protective stop; remove its cause, then 'unlock protective stop' (5 s "
	  "after the stop at the earliest) and 'close safety popup'" },
	{ { "Failed to execute" },
	  true,
	  -EIO,
	  true,
	  "the controller could not do it now; a program must be loaded, the arm powered on with "
	  "the brakes released (robot mode RUNNING), no safety stop active and the robot in remote "
	  "control" },
};

/*
 * A reply to @cmd that is not its success text @expect: one of the
 * controller's refusals, or a reply that is not the protocol's.
 */
static int refusal(struct rtl_ur_dashboard *d, const char *cmd, const char *expect,
		   struct rtl_error *err)
{
	char said[128];

	shown(d->line, said, sizeof(said));
	if (starts_ci(d->line, "could not understand"))
		return rtl_error_set(
			err, -EOPNOTSUPP,
			"dashboard %s:%u: '%s': the controller does not know the "
			"command ('%s'): PolyScope %u.%u.%u lacks it; update PolyScope "
			"or do this on the teach pendant",
			d->host, d->port, cmd, said, d->version.major, d->version.minor,
			d->version.patch);
	for (size_t k = 0; k < sizeof(REFUSALS) / sizeof(REFUSALS[0]); k++) {
		const struct refusal *f = &REFUSALS[k];
		bool hit = false;

		for (size_t m = 0; m < 4 && f->match[m] && !hit; m++)
			hit = f->at_start ? starts_ci(d->line, f->match[m])
					  : has_ci(d->line, f->match[m]);
		if (!hit)
			continue;
		if (f->failed)
			return rtl_error_set(err, f->code,
					     "dashboard %s:%u: '%s' failed ('%s'): %s", d->host,
					     d->port, cmd, said, f->why);
		return rtl_error_set(err, f->code, "dashboard %s:%u refused '%s' ('%s'): %s",
				     d->host, d->port, cmd, said, f->why);
	}
	return rtl_error_set(err, -EPROTO,
			     "dashboard %s:%u: '%s' answered '%s', not '%s...': a reply this "
			     "client does not know; check that the port is a UR dashboard server "
			     "(%d) and report the PolyScope version (%u.%u.%u)",
			     d->host, d->port, cmd, said, expect, RTL_UR_DASHBOARD_PORT,
			     d->version.major, d->version.minor, d->version.patch);
}

/* Command @id, where this PolyScope has it: its reply in d->line. */
static int query(struct rtl_ur_dashboard *d, enum cmd_id id, struct rtl_error *err)
{
	int r;

	if (!d)
		return rtl_error_set(err, -EINVAL, "dashboard: no client");
	r = gate(d, id, err);
	if (r < 0)
		return r;
	return exchange(d, CMDS[id].text, err);
}

/* A command whose success is one fixed reply. */
static int simple(struct rtl_ur_dashboard *d, enum cmd_id id, const char *expect,
		  struct rtl_error *err)
{
	int r = query(d, id, err);

	if (r < 0)
		return r;
	if (starts_ci(d->line, expect))
		return 0;
	return refusal(d, CMDS[id].text, expect, err);
}

/* ---- PolyScope X: the Robot API instead of a dashboard -------------------------------------- */

/*
 * Whether @host answers the Robot API of PolyScope X on @port: an HTTP GET
 * of its OpenAPI document answered with status 200. Bounded by @timeout_ns.
 */
static bool robot_api_answers(const char *host, uint16_t port, int64_t timeout_ns)
{
	char req[512], rsp[64];
	int64_t deadline = rtl_time_now() + timeout_ns;
	size_t have = 0;
	int fd, n;
	bool yes = false;

	fd = rtl_tcp_connect(host, port, timeout_ns, NULL);
	if (fd < 0)
		return false;
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n"
		     "Connection: close\r\n\r\n",
		     ROBOT_API_PROBE, host);
	if (n < 0 || (size_t)n >= sizeof(req) || rtl_tcp_send_all(fd, req, (size_t)n, deadline) < 0)
		goto out;
	while (have < sizeof(rsp) - 1 && !memchr(rsp, '\n', have)) {
		ssize_t r = rtl_tcp_recv(fd, rsp + have, sizeof(rsp) - 1 - have, deadline);

		if (r <= 0)
			break;
		have += (size_t)r;
	}
	rsp[have] = '\0';
	/* "HTTP/1.1 200 OK" */
	yes = starts(rsp, "HTTP/1.") && strlen(rsp) >= 12 && strncmp(rsp + 8, " 200", 4) == 0;
out:
	close(fd);
	return yes;
}

static int polyscope_x(struct rtl_error *err, const char *host, const char *how)
{
	return rtl_error_set(err, -EPROTONOSUPPORT,
			     "dashboard %s:%d: the controller runs PolyScope X (%s), which has no "
			     "dashboard server: power on, brake release, unlock and programs go "
			     "through its Robot API (HTTP, /universal-robots/robot-api, from "
			     "10.11) or the teach pendant; see docs/ur-dashboard.md",
			     host, RTL_UR_DASHBOARD_PORT, how);
}

/* ---- the public calls ----------------------------------------------------------------------- */

RTL_API void rtl_ur_dashboard_config_init(struct rtl_ur_dashboard_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->port = RTL_UR_DASHBOARD_PORT;
	cfg->connect_timeout_ns = 3 * RTL_NS_PER_SEC;
	cfg->timeout_ns = 2 * RTL_NS_PER_SEC;
	cfg->robot_api_port = RTL_UR_ROBOT_API_PORT;
}

RTL_API int rtl_ur_dashboard_create(struct rtl_ur_dashboard **out,
				    const struct rtl_ur_dashboard_config *user_cfg,
				    struct rtl_error *err)
{
	struct rtl_ur_dashboard_config full, *cfg = &full;
	struct rtl_ur_dashboard *d;
	char said[128];
	int64_t cto;
	int fd, r;

	if (out)
		*out = NULL;
	r = rtl__sized_in(&full, sizeof(full), user_cfg, "struct rtl_ur_dashboard_config", err);
	if (r < 0)
		return r;
	if (!cfg->host || !*cfg->host || !out)
		return rtl_error_set(err, -EINVAL,
				     "dashboard: no configuration, host or result pointer: "
				     "rtl_ur_dashboard_config_init() and set host");
	*out = NULL;
	if (rtl_ur_is_polyscope_x(cfg->controller_major))
		return polyscope_x(err, cfg->host, "its RTDE controller version is 10 or newer");
	cto = cfg->connect_timeout_ns > 0 ? cfg->connect_timeout_ns : 3 * RTL_NS_PER_SEC;
	fd = rtl_tcp_connect(cfg->host, cfg->port, cto, err);
	if (fd == -ECONNREFUSED) {
		if (cfg->robot_api_port &&
		    robot_api_answers(cfg->host, cfg->robot_api_port,
				      cto < RTL_NS_PER_SEC ? cto : RTL_NS_PER_SEC))
			return polyscope_x(err, cfg->host,
					   "port 29999 is closed and the Robot API answers");
		return rtl_error_set(err, -ECONNREFUSED,
				     "dashboard %s:%u: connection refused: nothing listens there: "
				     "is the controller on and PolyScope started, and on PolyScope "
				     "5 the dashboard server enabled (Settings > Security > "
				     "Services)? PolyScope X has none",
				     cfg->host, cfg->port);
	}
	if (fd < 0)
		return fd;
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return rtl_error_set(err, -ENOMEM, "dashboard %s:%u: out of memory", cfg->host,
				     cfg->port);
	}
	d->fd = fd;
	snprintf(d->host, sizeof(d->host), "%s", cfg->host);
	d->port = cfg->port;
	d->timeout_ns = cfg->timeout_ns > 0 ? cfg->timeout_ns : 2 * RTL_NS_PER_SEC;

	r = read_line(d, rtl_time_now() + cto, cto, "greeting", err);
	if (r < 0)
		goto err_free;
	if (!starts(d->line, GREETING)) {
		r = rtl_error_set(err, -EPROTO,
				  "dashboard %s:%u: greeted with '%s', not '" GREETING
				  "': this port is not a UR dashboard server; check the address "
				  "and use port %d",
				  d->host, d->port, shown(d->line, said, sizeof(said)),
				  RTL_UR_DASHBOARD_PORT);
		goto err_free;
	}
	/* Every dashboard since 1.8 knows PolyscopeVersion: the gate's input. */
	r = exchange(d, CMDS[C_VERSION].text, err);
	if (r < 0)
		goto err_free;
	if (!starts(d->line, "URSoftware ") || rtl_ur_version_parse(&d->version, d->line) < 0) {
		r = rtl_error_set(
			err, -EPROTO,
			"dashboard %s:%u: 'PolyscopeVersion' answered '%s', not "
			"'URSoftware <version> (<date>)': PolyScope older than 1.8 or not a "
			"UR dashboard server; check the address and port",
			d->host, d->port, shown(d->line, said, sizeof(said)));
		goto err_free;
	}
	*out = d;
	return 0;

err_free:
	rtl_ur_dashboard_destroy(d);
	return r;
}

RTL_API void rtl_ur_dashboard_destroy(struct rtl_ur_dashboard *d)
{
	if (!d)
		return;
	drop(d);
	free(d);
}

RTL_API const struct rtl_ur_version *rtl_ur_dashboard_version(const struct rtl_ur_dashboard *d)
{
	return &d->version;
}

RTL_API void rtl_ur_dashboard_set_timeout(struct rtl_ur_dashboard *d, int64_t timeout_ns)
{
	if (timeout_ns > 0)
		d->timeout_ns = timeout_ns;
}

RTL_API int rtl_ur_dashboard_power_on(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_POWER_ON, "Powering on", err);
}

RTL_API int rtl_ur_dashboard_power_off(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_POWER_OFF, "Powering off", err);
}

RTL_API int rtl_ur_dashboard_brake_release(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_BRAKE_RELEASE, "Brake releasing", err);
}

RTL_API int rtl_ur_dashboard_unlock_protective_stop(struct rtl_ur_dashboard *d,
						    struct rtl_error *err)
{
	char said[128];
	int r = simple(d, C_UNLOCK_PSTOP, "Protective stop releasing", err);

	if (r == -EPERM && starts_ci(d->line, "Cannot unlock protective stop until"))
		return rtl_error_set(
			err, -EAGAIN,
			"dashboard %s:%u refused 'unlock protective stop' ('%s'): the "
			"controller unlocks a protective stop only 5 s after it "
			"happened; inspect and remove its cause, wait, and unlock again",
			d->host, d->port, shown(d->line, said, sizeof(said)));
	return r;
}

RTL_API int rtl_ur_dashboard_close_safety_popup(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_CLOSE_SAFETY_POPUP, "closing safety popup", err);
}

RTL_API int rtl_ur_dashboard_close_popup(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_CLOSE_POPUP, "closing popup", err);
}

static int bad_value(struct rtl_ur_dashboard *d, const char *cmd, const char *what,
		     struct rtl_error *err)
{
	char said[128];

	return rtl_error_set(err, -EPROTO,
			     "dashboard %s:%u: '%s' answered '%s': not a %s this client knows; "
			     "report the PolyScope version (%u.%u.%u)",
			     d->host, d->port, cmd, shown(d->line, said, sizeof(said)), what,
			     d->version.major, d->version.minor, d->version.patch);
}

RTL_API int rtl_ur_dashboard_robot_mode(struct rtl_ur_dashboard *d, enum rtl_ur_robot_mode *mode,
					struct rtl_error *err)
{
	int r = query(d, C_ROBOTMODE, err);

	if (r < 0)
		return r;
	if (!starts_ci(d->line, "Robotmode: "))
		return refusal(d, "robotmode", "Robotmode: ", err);
	if (rtl_ur_robot_mode_parse(mode, d->line + 11) < 0)
		return bad_value(d, "robotmode", "robot mode", err);
	return 0;
}

RTL_API int rtl_ur_dashboard_safety_status(struct rtl_ur_dashboard *d,
					   enum rtl_ur_safety_status *status, struct rtl_error *err)
{
	/* safetystatus came in 3.11 / 5.4; safetymode answers before. */
	bool old = d && !has_cmd(d, &CMDS[C_SAFETYSTATUS]);
	const char *prefix = old ? "Safetymode: " : "Safetystatus: ";
	int r = query(d, old ? C_SAFETYMODE : C_SAFETYSTATUS, err);

	if (r < 0)
		return r;
	if (!starts_ci(d->line, prefix))
		return refusal(d, CMDS[old ? C_SAFETYMODE : C_SAFETYSTATUS].text, prefix, err);
	if (rtl_ur_safety_status_parse(status, d->line + strlen(prefix)) < 0)
		return bad_value(d, CMDS[old ? C_SAFETYMODE : C_SAFETYSTATUS].text, "safety status",
				 err);
	return 0;
}

RTL_API int rtl_ur_dashboard_program_state(struct rtl_ur_dashboard *d, struct rtl_ur_program *prog,
					   struct rtl_error *err)
{
	int r = query(d, C_PROGRAM_STATE, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < N(PROGRAM_STATES); i++) {
		size_t n = strlen(PROGRAM_STATES[i]);

		if (strncmp(d->line, PROGRAM_STATES[i], n) == 0 &&
		    (d->line[n] == ' ' || d->line[n] == '\0')) {
			const char *name = d->line + n;

			while (*name == ' ')
				name++;
			prog->state = (enum rtl_ur_program_state)i;
			snprintf(prog->name, sizeof(prog->name), "%s", name);
			return 0;
		}
	}
	return refusal(d, "programState", "STOPPED|PLAYING|PAUSED <name>", err);
}

RTL_API int rtl_ur_dashboard_is_in_remote_control(struct rtl_ur_dashboard *d, bool *remote,
						  struct rtl_error *err)
{
	int r = query(d, C_REMOTE, err);

	if (r < 0)
		return r;
	if (strcasecmp(d->line, "true") == 0 || strcasecmp(d->line, "false") == 0) {
		*remote = strcasecmp(d->line, "true") == 0;
		return 0;
	}
	return refusal(d, "is in remote control", "true|false", err);
}

RTL_API int rtl_ur_dashboard_polyscope_version(struct rtl_ur_dashboard *d, struct rtl_ur_version *v,
					       struct rtl_error *err)
{
	int r = query(d, C_VERSION, err);

	if (r < 0)
		return r;
	if (!starts(d->line, "URSoftware "))
		return refusal(d, "PolyscopeVersion", "URSoftware ", err);
	if (rtl_ur_version_parse(v, d->line) < 0)
		return bad_value(d, "PolyscopeVersion", "version", err);
	return 0;
}

RTL_API int rtl_ur_dashboard_load(struct rtl_ur_dashboard *d, const char *program,
				  struct rtl_error *err)
{
	char cmd[RTL_UR_DASHBOARD_LINE + 1], said[128];
	int r;

	if (!d)
		return rtl_error_set(err, -EINVAL, "dashboard: no client");
	if (!program || !*program || strpbrk(program, "\r\n") ||
	    strlen(program) + 5 > RTL_UR_DASHBOARD_LINE)
		return rtl_error_set(err, -EINVAL,
				     "dashboard %s:%u: 'load': the program must be one line, a "
				     "path such as /programs/rtloop.urp",
				     d->host, d->port);
	r = gate(d, C_LOAD, err);
	if (r < 0)
		return r;
	snprintf(cmd, sizeof(cmd), "load %s", program);
	r = exchange(d, cmd, err);
	if (r < 0)
		return r;
	if (starts_ci(d->line, "Loading program:"))
		return 0;
	shown(d->line, said, sizeof(said));
	if (starts_ci(d->line, "File not found"))
		return rtl_error_set(
			err, -ENOENT,
			"dashboard %s:%u: 'load %s' ('%s'): the controller has no such "
			"program; give its path on the controller (under /programs, "
			"e.g. /programs/%s) or copy it there",
			d->host, d->port, program, said, program);
	if (starts_ci(d->line, "Error while loading program"))
		return rtl_error_set(err, -EIO,
				     "dashboard %s:%u: 'load %s' ('%s'): the program or its "
				     "installation did not load (an installation whose safety "
				     "settings need confirming does not); open it on the teach "
				     "pendant to see why",
				     d->host, d->port, program, said);
	return refusal(d, cmd, "Loading program: ", err);
}

RTL_API int rtl_ur_dashboard_play(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_PLAY, "Starting program", err);
}

RTL_API int rtl_ur_dashboard_pause(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_PAUSE, "Pausing program", err);
}

RTL_API int rtl_ur_dashboard_stop(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	return simple(d, C_STOP, "Stopped", err);
}

RTL_API int rtl_ur_dashboard_quit(struct rtl_ur_dashboard *d, struct rtl_error *err)
{
	int r = simple(d, C_QUIT, "Disconnected", err);

	if (d)
		drop(d);
	return r;
}

RTL_API int rtl_ur_dashboard_command(struct rtl_ur_dashboard *d, char *reply, size_t cap,
				     const char *cmd, struct rtl_error *err)
{
	int r;

	if (!d || !cmd)
		return rtl_error_set(err, -EINVAL, "dashboard: no client or command");
	r = exchange(d, cmd, err);
	if (r < 0)
		return r;
	if (reply && cap)
		snprintf(reply, cap, "%s", d->line);
	return r;
}
