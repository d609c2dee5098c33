// SPDX-License-Identifier: MIT
/*
 * Every command of rtde-sim's dashboard table (apps/rtde-sim/dashboard.c),
 * over a raw socket, so each reply is checked byte for byte: per profile
 * (e-Series 5.26, CB3 3.15), a command newer than the simulated version
 * answered "could not understand", the state the dashboard owns
 * (panel.h: operational mode, user role, popup, log lines, installation),
 * addToLog reaching the primary stream, and hostile input (an overlong
 * line, binary bytes, many commands in one write, one command over many).
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "server.h"

#define SEC RTL_NS_PER_SEC

static struct sim_server *srv;

static void up(struct sim_opts *o)
{
	struct sim_server_opts so = { 0 };

	cr_assert_eq(sim_server_create(&srv, o, &so), 0);
	cr_assert_eq(sim_server_start(srv), 0);
}

static void stop_server(void)
{
	sim_server_stop(srv);
	cr_assert_eq(sim_server_join(srv), 0);
}

static void down(void)
{
	stop_server();
	sim_server_destroy(srv);
	srv = NULL;
}

static int dial(enum sim_port_kind k)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	a.sin_port = htons(sim_server_service_port(srv, k));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_neq(a.sin_port, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	return fd;
}

static void put(int fd, const void *p, size_t n)
{
	cr_assert_eq(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* One line (without its newline) within 3 s; -1 when the peer closed. */
static int get_line(int fd, char *buf, size_t cap)
{
	int64_t deadline = rtl_time_now() + 3 * SEC;
	size_t n = 0;

	while (rtl_time_now() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char ch;
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(fd, &ch, 1, 0);
		if (r <= 0)
			return -1;
		if (ch == '\n') {
			buf[n] = '\0';
			return (int)n;
		}
		if (n + 1 < cap)
			buf[n++] = ch;
	}
	cr_assert_fail("no reply line within 3 s");
	return -1;
}

static int open_dashboard(void)
{
	char line[256];
	int fd = dial(SIM_PORT_DASHBOARD);

	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "Connected: Universal Robots Dashboard Server");
	return fd;
}

/* Send @cmd, expect @want exactly, or its start when @want ends in '*'. */
static void expect(int fd, const char *cmd, const char *want)
{
	char line[2048];
	size_t n = strlen(want);

	put(fd, cmd, strlen(cmd));
	put(fd, "\n", 1);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0, "'%s': closed", cmd);
	if (n && want[n - 1] == '*')
		cr_assert(!strncmp(line, want, n - 1), "'%s': '%s', not '%s'", cmd, line, want);
	else
		cr_assert_str_eq(line, want, "'%s': '%s', not '%s'", cmd, line, want);
}

/* The reply of a version that lacks @cmd. */
static void lacks(int fd, const char *cmd)
{
	char want[512];

	snprintf(want, sizeof(want), "could not understand: '%s'", cmd);
	expect(fd, cmd, want);
}

struct row {
	const char *cmd;
	const char *eseries; /* NULL: not on e-Series */
	const char *cb3;     /* NULL: not on CB3 */
};

/* From the quick-start state (RUNNING, remote, the rtloop program playing
 * from a script port), in an order in which each reply is known. */
static const struct row table[] = {
	{ "PolyscopeVersion", "URSoftware 5.26.0.0 (Jan 01 2025)",
	  "URSoftware 3.15.8.0 (Jan 01 2025)" },
	{ "polyscopeVersion", "URSoftware 5.26.0.0 (Jan 01 2025)",
	  "URSoftware 3.15.8.0 (Jan 01 2025)" },
	{ "version", "5.26.0.0", NULL },
	{ "get serial number", "20205500001", "20163500001" },
	{ "get robot model", "UR5", "UR5" },
	{ "robotmode", "Robotmode: RUNNING", "Robotmode: RUNNING" },
	{ "safetymode", "Safetymode: NORMAL", "Safetymode: NORMAL" },
	{ "safetystatus", "Safetystatus: NORMAL", "Safetystatus: NORMAL" },
	{ "is in remote control", "true", NULL },
	{ "running", "Program running: true", "Robot running: True" },
	{ "programState", "PLAYING rtloop_control", "PLAYING rtloop_control" },
	{ "get loaded program", "No program loaded", "No program loaded" },
	{ "isProgramSaved", "false rtloop_control", "False" },
	{ "getUserRole", NULL, "NONE" },
	{ "setUserRole locked", NULL, "Setting user role: locked" },
	{ "getUserRole", NULL, "LOCKED" },
	{ "setUserRole restricted", NULL, "Setting user role: restricted" },
	{ "setUserRole operator", NULL, "Setting user role: operator" },
	{ "setUserRole programmer", NULL, "Setting user role: programmer" },
	{ "getUserRole", NULL, "PROGRAMMER" },
	{ "setUserRole admin", NULL, "Failed setting user role: admin" },
	{ "setUserRole", NULL, "Setting user role: none" },
	{ "popup Hello from the test", "showing popup", "showing popup" },
	{ "close popup", "closing popup", "closing popup" },
	{ "close safety popup", "closing safety popup", "closing safety popup" },
	{ "addToLog the test was here", "Added log message", "Added log message" },
	{ "addToLog", "No log message to add", "No log message to add" },
	{ "get operational mode", "NONE", NULL },
	{ "set operational mode manual", "Operational mode 'manual' is set", NULL },
	{ "get operational mode", "MANUAL", NULL },
	{ "set operational mode automatic", "Operational mode 'automatic' is set", NULL },
	{ "get operational mode", "AUTOMATIC", NULL },
	{ "load rtloop_control.urp", "Error while loading program: rtloop_control.urp",
	  "Loading program: rtloop_control.urp" },
	{ "load installation default.installation",
	  "Failed to load installation: default.installation",
	  "Loading installation: default.installation" },
	{ "clear operational mode",
	  "No longer controlling the operational mode. Current operational mode: 'AUTOMATIC'.",
	  NULL },
	{ "get operational mode", "NONE", NULL },
	{ "set operational mode sideways", "Failed setting operational mode: sideways", NULL },
	{ "load installation default.installation", "Loading installation: default.installation",
	  "Loading installation: default.installation" },
	{ "load installation /programs/cell.installation",
	  "File not found: /programs/cell.installation",
	  "File not found: /programs/cell.installation" },
	{ "load nope.urp", "File not found: nope.urp", "File not found: nope.urp" },
	{ "load rtloop_control.urp", "Loading program: rtloop_control.urp",
	  "Loading program: rtloop_control.urp" },
	{ "get loaded program", "Loaded program: /programs/rtloop_control.urp",
	  "Loaded program: /programs/rtloop_control.urp" },
	{ "isProgramSaved", "true rtloop_control.urp", "True" },
	{ "programState", "STOPPED rtloop_control.urp", "STOPPED rtloop_control.urp" },
	{ "running", "Program running: false", "Robot running: False" },
	{ "play", "Starting program", "Starting program" },
	{ "pause", "Pausing program", "Pausing program" },
	{ "stop", "Stopped", "Stopped" },
	{ "generate flight report system", "5a000001", "5a000001" },
	{ "generate flight report controller", "5a000002", "5a000002" },
	{ "generate flight report software",
	  "Error: wait 30 seconds between controller or software reports",
	  "Error: wait 30 seconds between controller or software reports" },
	{ "generate flight report everything",
	  "Error: unknown report type 'everything' (controller, software or system)",
	  "Error: unknown report type 'everything' (controller, software or system)" },
	{ "generate support file usbdisk", "Completed successfully: ur_20205500001_2025-01-01_*",
	  "Completed successfully: ur_20163500001_2025-01-01_*" },
	/* a directory outside the programs directory (split so the docs
	 * checker does not take it for a file reference) */
	{ "generate support file .."
	  "/etc",
	  "Error: .."
	  "/etc is not a directory inside the programs directory",
	  "Error: .."
	  "/etc is not a directory inside the programs directory" },
	{ "saveLog", "Log saved to disk", "Log saved to disk" },
	{ "unlock protective stop", "Protective stop releasing", "Protective stop releasing" },
	{ "restart safety", "Restarting safety", "Restarting safety" },
	{ "robotmode", "Robotmode: POWER_OFF", "Robotmode: POWER_OFF" },
	{ "brake release", "Failed to execute: brake release", "Failed to execute: brake release" },
	{ "power on", "Powering on", "Powering on" },
	{ "power off", "Powering off", "Powering off" },
	{ "dance", "could not understand: 'dance'", "could not understand: 'dance'" },
	{ "load", "could not understand: 'load'", "could not understand: 'load'" },
	{ "robotmode now", "could not understand: 'robotmode now'",
	  "could not understand: 'robotmode now'" },
};

static void run_table(enum sim_profile_id profile)
{
	struct sim_opts o;
	int fd;

	sim_opts_default(&o);
	o.profile = profile;
	up(&o);
	fd = open_dashboard();
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const char *want = profile == SIM_PROFILE_CB3 ? table[i].cb3 : table[i].eseries;

		if (want)
			expect(fd, table[i].cmd, want);
		else
			lacks(fd, table[i].cmd);
	}
	expect(fd, "shutdown", "Shutting down");
	close(fd);
	down();
}

Test(sim_dashboard_commands, every_command_on_eseries, .timeout = 60)
{
	run_table(SIM_PROFILE_ESERIES);
}

Test(sim_dashboard_commands, every_command_on_cb3, .timeout = 60)
{
	run_table(SIM_PROFILE_CB3);
}

/* The simulated version @major.@minor lacks each of @cmds (NULL-ended)
 * and has @have. */
static void version_gate(enum sim_profile_id p, unsigned major, unsigned minor, const char *have,
			 const char *have_reply, const char *const *cmds)
{
	struct sim_opts o;
	int fd;

	sim_opts_default(&o);
	o.profile = p;
	o.version = (struct rtl_rtde_controller_version){ major, minor, 0, 0 };
	up(&o);
	fd = open_dashboard();
	for (; *cmds; cmds++)
		lacks(fd, *cmds);
	expect(fd, have, have_reply);
	close(fd);
	down();
}

Test(sim_dashboard_commands, newer_commands_are_not_understood, .timeout = 60)
{
	static const char *const e55[] = { "get serial number",
					   "get robot model",
					   "is in remote control",
					   "get operational mode",
					   "generate flight report system",
					   NULL };
	static const char *const e50[] = { "safetystatus", "restart safety", NULL };
	static const char *const e57[] = { "generate support file usbdisk", "saveLog", NULL };
	static const char *const c311[] = { "get serial number",
					    "get robot model",
					    "saveLog",
					    "version",
					    "set operational mode manual",
					    NULL };
	static const char *const c36[] = { "safetystatus", "restart safety",
					   "load installation default.installation", NULL };

	version_gate(SIM_PROFILE_ESERIES, 5, 5, "safetystatus", "Safetystatus: NORMAL", e55);
	version_gate(SIM_PROFILE_ESERIES, 5, 0, "clear operational mode",
		     "No longer controlling the operational mode. Current operational mode: "
		     "'AUTOMATIC'.",
		     e50);
	version_gate(SIM_PROFILE_ESERIES, 5, 7, "get serial number", "20205500001", e57);
	version_gate(SIM_PROFILE_CB3, 3, 11, "safetystatus", "Safetystatus: NORMAL", c311);
	version_gate(SIM_PROFILE_CB3, 3, 1, "getUserRole", "NONE", c36);
}

/* What local control refuses first, and what it still answers. */
Test(sim_dashboard_commands, local_control_refuses_state_changes, .timeout = 30)
{
	struct sim_opts o;
	int fd;

	sim_opts_default(&o);
	o.ctrl.local = true;
	up(&o);
	fd = open_dashboard();
	expect(fd, "is in remote control", "false");
	expect(fd, "load installation default.installation",
	       "Command is not allowed due to safety reasons");
	expect(fd, "restart safety", "Command is not allowed due to safety reasons");
	expect(fd, "shutdown", "Command is not allowed due to safety reasons");
	expect(fd, "popup still shown", "showing popup");
	expect(fd, "get serial number", "20205500001");
	close(fd);
	down();
}

static bool find(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(hay + i, needle, k))
			return true;
	return false;
}

/* The simulator's JSON report, live or final; the caller frees it. */
static char *report_json(void)
{
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);

	cr_assert_not_null(f);
	cr_assert_eq(sim_server_report_json(srv, f, 1.0, false, "other"), 0);
	fclose(f);
	return json;
}

/* addToLog is a controller message: the primary stream carries it, and
 * the report counts it with the rest of the panel. A live report read
 * after an answer already shows what the answer said was done. */
Test(sim_dashboard_commands, add_to_log_reaches_the_primary_stream, .timeout = 30)
{
	static const char text[] = "logged through the dashboard";
	struct sim_opts o;
	char buf[65536];
	size_t n = 0;
	int64_t deadline;
	char *json;
	int fd, pfd;

	sim_opts_default(&o);
	up(&o);
	fd = open_dashboard();
	pfd = dial(SIM_PORT_PRIMARY);
	expect(fd, "addToLog logged through the dashboard", "Added log message");
	expect(fd, "popup a popup", "showing popup");
	expect(fd, "set operational mode automatic", "Operational mode 'automatic' is set");
	json = report_json();
	cr_assert(strstr(json, "\"panel\":{\"operational_mode\":\"AUTOMATIC\""), "%s", json);
	free(json);
	expect(fd, "load installation gone.installation", "File not found: gone.installation");
	json = report_json();
	cr_assert(strstr(json, "\"installations_refused\":1,"), "%s", json);
	free(json);
	deadline = rtl_time_now() + 3 * SEC;
	while (rtl_time_now() < deadline && !find(buf, n, text) && n < sizeof(buf)) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(pfd, buf + n, sizeof(buf) - n, 0);
		cr_assert_gt(r, 0);
		n += (size_t)r;
	}
	cr_assert(find(buf, n, text), "the primary stream never carried the log line");
	close(pfd);
	close(fd);
	stop_server();
	json = report_json();
	cr_assert(strstr(json, "\"panel\":{\"operational_mode\":\"AUTOMATIC\""), "%s", json);
	cr_assert(strstr(json, "\"popup\":true,\"popup_text\":\"a popup\""), "%s", json);
	cr_assert(strstr(json, "\"log_lines\":1,"), "%s", json);
	cr_assert(strstr(json, "\"installations_refused\":1,"), "%s", json);
	free(json);
	sim_server_destroy(srv);
	srv = NULL;
}

Test(sim_dashboard_commands, shutdown_powers_off_and_closes, .timeout = 30)
{
	struct sim_opts o;
	char line[256];
	int fd;

	sim_opts_default(&o);
	up(&o);
	fd = open_dashboard();
	expect(fd, "shutdown", "Shutting down");
	cr_assert_eq(get_line(fd, line, sizeof(line)), -1, "still open after shutdown");
	close(fd);
	fd = open_dashboard();
	expect(fd, "robotmode", "Robotmode: POWER_OFF");
	close(fd);
	down();
}

Test(sim_dashboard_commands, hostile_input_keeps_the_stream_in_step, .timeout = 30)
{
	static const char binary[] = "\x01\xfe\x7f\x1b[2J\x00zz\n";
	struct sim_opts o;
	char line[2048];
	char *big = malloc(5000);
	int fd;

	sim_opts_default(&o);
	up(&o);
	fd = open_dashboard();
	/* a line far over the bound: one refusal, then in step again */
	memset(big, 'A', 4999);
	big[4999] = '\n';
	put(fd, big, 5000);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "could not understand: command too long");
	expect(fd, "robotmode", "Robotmode: RUNNING");
	/* binary bytes: not understood, still in step */
	put(fd, binary, sizeof(binary) - 1);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert(!strncmp(line, "could not understand: '", 23), "%s", line);
	expect(fd, "get robot model", "UR5");
	/* many commands in one write: one reply each, in order */
	put(fd, "robotmode\r\nrunning\nversion\n\n", 28);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "Robotmode: RUNNING");
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "Program running: true");
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "5.26.0.0");
	/* one command over three writes */
	put(fd, "get ser", 7);
	put(fd, "ial num", 7);
	put(fd, "ber\n", 4);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "20205500001");
	/* an overlong addToLog is refused whole, not logged in part */
	memcpy(big, "addToLog ", 9);
	put(fd, big, 5000);
	cr_assert_geq(get_line(fd, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "could not understand: command too long");
	expect(fd, "quit", "Disconnected");
	free(big);
	close(fd);
	down();
}
