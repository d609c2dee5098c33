// SPDX-License-Identifier: MIT
/*
 * The primary interface client (<rtloop/ur_primary.h>) against rtde-sim's
 * script ports (apps/rtde-sim/primary.c), the simulator in process on
 * ephemeral ports: the version message is the simulated controller's, the
 * robot mode data follows the controller's state machine, the installed
 * rtloop_control.script starts the executor, a changed program is answered
 * with a runtime exception naming its first differing line, a program sent
 * before power-on is refused with a message, and a flood without a
 * complete program is cut off.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/tcp.h>
#include <rtloop/time.h>
#include <rtloop/ur_primary.h>

#include "controller.h"
#include "server.h"
#include "sim.h"

static struct sim_server *srv;

static void start(bool boot)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };

	sim_opts_default(&so);
	so.ctrl.boot = boot;
	so.ctrl.power_on_s = 0.1;
	so.ctrl.brake_release_s = 0.1;
	cr_assert_eq(sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(srv), 0);
}

/* Stop the server: its controller may be read after this. */
static struct sim *stop(void)
{
	sim_server_stop(srv);
	sim_server_join(srv);
	return sim_server_sim(srv);
}

static void done(void)
{
	sim_server_destroy(srv);
	srv = NULL;
}

static struct rtl_ur_primary *connect_to(enum sim_port_kind k)
{
	struct rtl_ur_primary *c = NULL;
	struct rtl_error err;
	uint16_t port = sim_server_service_port(srv, k);

	cr_assert_neq(port, 0);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", port, 2 * RTL_NS_PER_SEC, &err), 0,
		     "%s", err.msg);
	return c;
}

static char *read_script(size_t *len)
{
	const char *path = getenv("RTL_TEST_CONTROL_SCRIPT");
	FILE *f;
	char *s;
	long n;

	cr_assert(path, "RTL_TEST_CONTROL_SCRIPT is not set (tests/meson.build sets it)");
	f = fopen(path, "rb");
	cr_assert(f, "%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
	s[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return s;
}

/* Wait until the robot mode is @mode (within 2 s). */
static void wait_mode(struct rtl_ur_primary *c, int mode, struct rtl_ur_robot_mode_data *m)
{
	int64_t end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	struct rtl_error err;

	for (;;) {
		if (rtl_ur_primary_robot_mode(c, m) && m->robot_mode == mode)
			return;
		cr_assert_lt(rtl_time_now(), end, "robot mode %d, never %d", m->robot_mode, mode);
		cr_assert_geq(rtl_ur_primary_poll(c, 50 * RTL_NS_PER_MS, &err), 0, "%s", err.msg);
	}
}

/* The next robot message of @type within 2 s. */
static void wait_msg(struct rtl_ur_primary *c, int type, struct rtl_ur_robot_msg *m)
{
	int64_t end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	struct rtl_error err;

	for (;;) {
		while (rtl_ur_primary_next_msg(c, m))
			if (m->type == type)
				return;
		cr_assert_lt(rtl_time_now(), end, "no robot message of type %d", type);
		cr_assert_geq(rtl_ur_primary_poll(c, 50 * RTL_NS_PER_MS, &err), 0, "%s", err.msg);
	}
}

Test(ur_primary_sim, version_is_the_simulated_controllers)
{
	const struct rtl_ur_version_msg *v;
	const struct rtl_rtde_controller_version *want;
	struct rtl_ur_primary *c;

	start(false);
	want = &sim_profile(sim_server_sim(srv)->opts.profile)->version;
	for (int k = SIM_PORT_PRIMARY; k <= SIM_PORT_SECONDARY; k++) {
		c = connect_to((enum sim_port_kind)k);
		v = rtl_ur_primary_version(c);
		cr_assert_str_eq(v->project, "URControl");
		cr_assert_eq(v->major, want->major);
		cr_assert_eq(v->minor, want->minor);
		cr_assert_eq((uint32_t)v->bugfix, want->bugfix);
		cr_assert_eq((uint32_t)v->build, want->build);
		rtl_ur_primary_destroy(c);
	}
	stop();
	done();
}

/* "power on" and "brake release" on the dashboard port; false when the
 * dashboard does not answer (its service not there). */
static bool dashboard(const char *cmd)
{
	uint16_t port = sim_server_service_port(srv, SIM_PORT_DASHBOARD);
	int64_t end = rtl_time_now() + RTL_NS_PER_SEC;
	char buf[512];
	size_t got = 0;
	int lines = 0, fd;

	if (!port)
		return false;
	fd = rtl_tcp_connect("127.0.0.1", port, RTL_NS_PER_SEC, NULL);
	cr_assert_geq(fd, 0);
	cr_assert_eq(rtl_tcp_send_all(fd, cmd, strlen(cmd), end), 0);
	/* The greeting and the reply: two lines. */
	while (lines < 2) {
		ssize_t n = rtl_tcp_recv(fd, buf + got, sizeof(buf) - 1 - got, end);

		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			lines += buf[got + (size_t)i] == '\n';
		got += (size_t)n;
	}
	close(fd);
	return lines >= 2;
}

Test(ur_primary_sim, robot_mode_follows_power_on)
{
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_mode_data m;

	start(true);
	c = connect_to(SIM_PORT_PRIMARY);
	wait_mode(c, RTL_UR_ROBOT_MODE_POWER_OFF, &m);
	cr_assert_not(m.power_on);
	cr_assert_not(m.program_running);
	if (!dashboard("power on\n")) {
		rtl_ur_primary_destroy(c);
		stop();
		done();
		cr_skip_test("rtde-sim's dashboard does not answer: no way to power on");
	}
	wait_mode(c, RTL_UR_ROBOT_MODE_IDLE, &m);
	cr_assert(m.power_on);
	cr_assert(dashboard("brake release\n"));
	wait_mode(c, RTL_UR_ROBOT_MODE_RUNNING, &m);
	rtl_ur_primary_destroy(c);
	stop();
	done();
}

Test(ur_primary_sim, control_script_starts_the_executor)
{
	struct rtl_ur_primary *c;
	struct rtl_error err;
	struct sim *sim;
	size_t len;
	char *s = read_script(&len);

	start(false);
	c = connect_to(SIM_PORT_SECONDARY);
	cr_assert_eq(rtl_ur_primary_run_script(c, NULL, s, len, 300 * RTL_NS_PER_MS, &err), 0, "%s",
		     err.msg);
	rtl_ur_primary_destroy(c);
	sim = stop();
	cr_assert_eq(sim->ctrl.stats.rtloop_started, 1);
	cr_assert_eq(sim->ctrl.stats.others, 0);
	cr_assert(sim_ctrl_executing(&sim->ctrl));
	done();
	free(s);
}

Test(ur_primary_sim, control_script_on_the_realtime_port_starts_the_executor)
{
	size_t len;
	char *s = read_script(&len);
	uint16_t port;
	struct sim *sim;
	int fd;

	start(false);
	port = sim_server_service_port(srv, SIM_PORT_REALTIME);
	fd = rtl_tcp_connect("127.0.0.1", port, RTL_NS_PER_SEC, NULL);
	cr_assert_geq(fd, 0);
	/* In pieces, as a slow client sends it. */
	for (size_t at = 0; at < len; at += 100)
		cr_assert_eq(rtl_tcp_send_all(fd, s + at, len - at < 100 ? len - at : 100,
					      rtl_time_now() + RTL_NS_PER_SEC),
			     0);
	usleep(300000);
	close(fd);
	sim = stop();
	cr_assert_eq(sim->ctrl.stats.rtloop_started, 1);
	done();
	free(s);
}

/* The line number (1-based) of the first line of @s that holds @what. */
static int line_of(const char *s, const char *what)
{
	const char *p = strstr(s, what);
	int line = 1;

	cr_assert(p, "'%s' is not in the control script", what);
	for (const char *q = s; q < p; q++)
		line += *q == '\n';
	return line;
}

Test(ur_primary_sim, changed_program_gets_a_runtime_exception_naming_the_line)
{
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg rtx;
	struct rtl_error err;
	size_t len;
	char *s = read_script(&len);
	char *p = strstr(s, "end\n");
	size_t at;
	int want;

	/* Change the first "end" into "end # changed": a line that differs. */
	cr_assert(p);
	at = (size_t)(p - s) + 3;
	want = line_of(s, "end\n");
	s = realloc(s, len + 16);
	cr_assert(s);
	p = s + at;
	memmove(p + 10, p, len - (size_t)(p - s) + 1);
	memcpy(p, " # changed", 10);
	len += 10;
	start(false);
	c = connect_to(SIM_PORT_PRIMARY);
	cr_assert_eq(rtl_ur_primary_run_script(c, &rtx, s, len, RTL_NS_PER_SEC, &err), -ENOEXEC);
	cr_assert_eq(rtx.line, want, "line %d, expected %d: %s", rtx.line, want, rtx.text);
	cr_assert(strstr(err.msg, "line"), "%s", err.msg);
	rtl_ur_primary_destroy(c);
	stop();
	done();
	free(s);
}

Test(ur_primary_sim, program_before_power_on_is_refused_with_a_message)
{
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg m;
	struct rtl_error err;
	struct sim *sim;
	size_t len;
	char *s = read_script(&len);

	start(true);
	c = connect_to(SIM_PORT_PRIMARY);
	cr_assert_eq(rtl_ur_primary_send_script(c, s, len, RTL_NS_PER_SEC, &err), 0, "%s", err.msg);
	wait_msg(c, RTL_UR_RMSG_KEY, &m);
	cr_assert(m.text[0]);
	rtl_ur_primary_destroy(c);
	sim = stop();
	cr_assert_eq(sim->ctrl.stats.rtloop_refused, 1);
	cr_assert_not(sim_ctrl_executing(&sim->ctrl));
	done();
	free(s);
}

Test(ur_primary_sim, single_lines_are_programs_of_their_own)
{
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg rtx;
	struct rtl_error err;
	static const char line[] = "textmsg(\"hello\")\n";
	struct sim *sim;

	start(false);
	c = connect_to(SIM_PORT_SECONDARY);
	cr_assert_eq(rtl_ur_primary_run_script(c, &rtx, line, strlen(line), RTL_NS_PER_SEC, &err),
		     -ENOEXEC);
	cr_assert_eq(rtx.line, 1);
	rtl_ur_primary_destroy(c);
	sim = stop();
	cr_assert_eq(sim->ctrl.stats.programs, 1);
	done();
}

Test(ur_primary_sim, flood_without_a_complete_program_is_cut_off)
{
	static char junk[64 * 1024];
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg m;
	struct rtl_error err;
	int64_t end;
	int fd, r = 0;

	start(false);
	c = connect_to(SIM_PORT_PRIMARY);
	fd = rtl_tcp_connect("127.0.0.1", sim_server_service_port(srv, SIM_PORT_SECONDARY),
			     RTL_NS_PER_SEC, NULL);
	cr_assert_geq(fd, 0);
	memset(junk, ' ', sizeof(junk));
	junk[sizeof(junk) - 1] = '\n';
	memcpy(junk, "def flood():\n", 13);
	end = rtl_time_now() + 3 * RTL_NS_PER_SEC;
	for (int i = 0; i < 64 && r == 0; i++)
		r = rtl_tcp_send_all(fd, i ? junk + 13 : junk, sizeof(junk) - (i ? 13 : 0), end);
	wait_msg(c, RTL_UR_RMSG_KEY, &m);
	cr_assert(strstr(m.text, "without a complete program"), "%s", m.text);
	close(fd);
	rtl_ur_primary_destroy(c);
	(void)err;
	stop();
	done();
}
