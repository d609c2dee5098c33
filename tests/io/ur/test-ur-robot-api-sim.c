// SPDX-License-Identifier: MIT
/*
 * The Robot API client against rtde-sim's polyscope-x profile, in process
 * on ephemeral ports: the bring-up of a booted controller (powered off, no
 * program) through the Robot API alone, local control's refusal, and the
 * dashboard client telling PolyScope X apart by the Robot API's probe; and
 * the simulator's HTTP reader in raw bytes (400, 404, 405, 413, pipelining,
 * Connection: close).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_robot_api.h>

#include "controller.h"
#include "server.h"
#include "sim.h"

static struct sim_server *srv;

static void start(bool local)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };

	sim_opts_default(&so);
	so.profile = SIM_PROFILE_POLYSCOPE_X;
	so.ctrl.boot = true;
	so.ctrl.local = local;
	so.ctrl.power_on_s = 0.1;
	so.ctrl.brake_release_s = 0.1;
	cr_assert_eq(sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(srv), 0);
}

static void done(void)
{
	sim_server_stop(srv);
	sim_server_join(srv);
	sim_server_destroy(srv);
	srv = NULL;
}

static struct rtl_ur_robot_api *client(void)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };
	int ret;

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = sim_server_service_port(srv, SIM_PORT_ROBOT_API);
	cr_assert_neq(cfg.port, 0);
	ret = rtl_ur_robot_api_create(&api, &cfg, &e);
	/* A librtloop built without libcurl has no client: its sentence is
	 * the reason to skip. */
	if (ret == -ENOTSUP) {
		done();
		cr_skip_test("%s", e.msg);
	}
	cr_assert_eq(ret, 0, "%s", e.msg);
	return api;
}

/* Poll the robot mode until @want; bounded to 5 s. */
static void wait_mode(struct rtl_ur_robot_api *api, enum rtl_ur_robot_mode want)
{
	int64_t deadline = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_NO_CONTROLLER;
	struct rtl_error e = { 0 };

	while (rtl_time_now() < deadline) {
		cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), 0, "%s", e.msg);
		if (m == want)
			return;
		rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	}
	cr_assert_fail("robot mode %s, not %s, after 5 s", rtl_ur_robot_mode_name(m),
		       rtl_ur_robot_mode_name(want));
}

Test(ur_robot_api_sim, only_polyscope_x_serves_it)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };

	start(false);
	cr_assert_neq(sim_server_service_port(srv, SIM_PORT_ROBOT_API), 0);
	cr_assert_eq(sim_server_service_port(srv, SIM_PORT_DASHBOARD), 0);
	done();
	sim_opts_default(&so);
	cr_assert_eq(sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(sim_server_service_port(srv, SIM_PORT_ROBOT_API), 0);
	sim_server_destroy(srv);
	srv = NULL;
}

Test(ur_robot_api_sim, bring_up_from_boot)
{
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;
	enum rtl_ur_safety_status s;
	struct rtl_ur_program p;
	struct rtl_ur_version v;
	bool remote = false;

	start(false);
	api = client();
	cr_assert_eq(rtl_ur_robot_api_version(api, &v, &e), 0, "%s", e.msg);
	cr_assert_eq(v.major, 10);
	cr_assert_eq(rtl_ur_robot_api_is_in_remote_control(api, &remote, &e), 0, "%s", e.msg);
	cr_assert(remote);
	cr_assert_eq(rtl_ur_robot_api_safety_mode(api, &s, &e), 0, "%s", e.msg);
	cr_assert_eq(s, RTL_UR_SAFETY_NORMAL);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), 0, "%s", e.msg);
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_POWER_OFF);
	/* Brakes cannot be released before power: a 409 refusal. */
	cr_assert_eq(rtl_ur_robot_api_brake_release(api, &e), -EPERM);
	cr_assert(strstr(e.msg, "HTTP 409"), "%s", e.msg);

	cr_assert_eq(rtl_ur_robot_api_power_on(api, &e), 0, "%s", e.msg);
	wait_mode(api, RTL_UR_ROBOT_MODE_IDLE);
	cr_assert_eq(rtl_ur_robot_api_brake_release(api, &e), 0, "%s", e.msg);
	wait_mode(api, RTL_UR_ROBOT_MODE_RUNNING);

	cr_assert_eq(rtl_ur_robot_api_load(api, "nothing.urp", &e), -ENOENT);
	cr_assert_eq(rtl_ur_robot_api_load(api, "rtloop_control.urp", &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_play(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_program_state(api, &p, &e), 0, "%s", e.msg);
	cr_assert_eq(p.state, RTL_UR_PROGRAM_PLAYING);
	cr_assert_eq(rtl_ur_robot_api_stop(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_program_state(api, &p, &e), 0, "%s", e.msg);
	cr_assert_eq(p.state, RTL_UR_PROGRAM_STOPPED);

	cr_assert_eq(rtl_ur_robot_api_power_off(api, &e), 0, "%s", e.msg);
	wait_mode(api, RTL_UR_ROBOT_MODE_POWER_OFF);
	rtl_ur_robot_api_destroy(api);
	done();
}

Test(ur_robot_api_sim, local_control_refuses_power_on)
{
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	bool remote = true;

	start(true);
	api = client();
	cr_assert_eq(rtl_ur_robot_api_is_in_remote_control(api, &remote, &e), 0, "%s", e.msg);
	cr_assert(!remote);
	cr_assert_eq(rtl_ur_robot_api_power_on(api, &e), -EPERM);
	cr_assert(strstr(e.msg, "switch to remote control"), "%s", e.msg);
	cr_assert(strstr(e.msg, "HTTP 403"), "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
	done();
}

Test(ur_robot_api_sim, dashboard_client_recognises_polyscope_x)
{
	struct rtl_ur_dashboard_config cfg;
	struct rtl_ur_dashboard *d = NULL;
	struct rtl_error e = { 0 };

	start(false);
	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	/* The profile serves no dashboard: a port nobody listens on (1, a
	 * privileged one no test binds) stands for PolyScope X's closed 29999. */
	cfg.port = 1;
	cfg.robot_api_port = sim_server_service_port(srv, SIM_PORT_ROBOT_API);
	cr_assert_eq(rtl_ur_dashboard_create(&d, &cfg, &e), -EPROTONOSUPPORT, "%s", e.msg);
	done();
}

/* ---- the simulator's HTTP reader, in raw bytes ----------------------------------------- */

/* Send @req on a new connection and read what comes back until the peer
 * closes, a reply is followed by 100 ms of silence, or 1 s passes; returns
 * the bytes read (NUL-terminated in @out), *@closed when the peer closed. */
static size_t raw(const char *req, size_t len, char *out, size_t cap, bool *closed)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int64_t deadline = rtl_time_now() + RTL_NS_PER_SEC;
	size_t have = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_port = htons(sim_server_service_port(srv, SIM_PORT_ROBOT_API));
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(write(fd, req, len), (ssize_t)len);
	*closed = false;
	while (have + 1 < cap && rtl_time_now() < deadline) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0) {
			/* A reply came and 100 ms brought nothing more: kept open. */
			if (have)
				break;
			continue;
		}
		n = read(fd, out + have, cap - 1 - have);
		if (n <= 0) {
			*closed = true;
			break;
		}
		have += (size_t)n;
	}
	out[have] = '\0';
	close(fd);
	return have;
}

#define BASE "/universal-robots/robot-api"

Test(ur_robot_api_sim, http_reader_answers_bad_requests)
{
	static char big[9000];
	char out[4096];
	bool closed;
	const char *r;

	start(false);
	raw("GARBAGE\r\n\r\n", 11, out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 400 ", 13), "%s", out);
	cr_assert(closed, "a bad request closes the connection");

	r = "GET " BASE "/nothing HTTP/1.1\r\nHost: x\r\n\r\n";
	raw(r, strlen(r), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 404 ", 13), "%s", out);
	cr_assert(!closed, "keep-alive after a 404");

	r = "GET /elsewhere HTTP/1.1\r\n\r\n";
	raw(r, strlen(r), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 404 ", 13), "%s", out);

	r = "POST " BASE "/robotstate/v1/state HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
	raw(r, strlen(r), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 405 ", 13), "%s", out);
	cr_assert(strstr(out, "Allow: PUT\r\n"), "%s", out);

	r = "PUT " BASE "/robotstate/v1/state HTTP/1.1\r\nContent-Length: 999999\r\n\r\n";
	raw(r, strlen(r), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 413 ", 13), "%s", out);
	cr_assert(closed);

	r = "PUT " BASE "/robotstate/v1/state HTTP/1.1\r\nContent-Length: 5\r\n\r\nnope!";
	raw(r, strlen(r), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 400 ", 13), "%s", out);

	/* A head that never ends: bounded, then 413. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	raw(big, sizeof(big), out, sizeof(out), &closed);
	cr_assert(!strncmp(out, "HTTP/1.1 413 ", 13), "%s", out);
	cr_assert(closed);
	done();
}

Test(ur_robot_api_sim, http_reader_pipelines_and_closes_on_request)
{
	char out[4096];
	bool closed;
	const char *r = "GET " BASE "/robotstate/v1/robotmode HTTP/1.1\r\n\r\n"
			"PUT " BASE "/robotstate/v1/state HTTP/1.1\r\nContent-Length: 22\r\n\r\n"
			"{\"action\": \"POWER_ON\"}"
			"GET " BASE "/system/v1/controlmode HTTP/1.1\r\nConnection: close\r\n\r\n";
	const char *a, *b, *c;

	start(false);
	raw(r, strlen(r), out, sizeof(out), &closed);
	a = strstr(out, "{\"mode\": \"POWER_OFF\"}");
	b = strstr(out,
		   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n");
	c = strstr(out, "{\"mode\": \"REMOTE\"}");
	cr_assert(a && b && c && a < b && b < c, "%s", out);
	cr_assert(strstr(out, "Connection: close\r\n"), "%s", out);
	cr_assert(closed, "Connection: close is honoured");
	done();
}
