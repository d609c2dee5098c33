// SPDX-License-Identifier: MIT
/*
 * The Robot API client against rtde-sim's polyscope-x profile, in process
 * on ephemeral ports: the bring-up of a booted controller (powered off, no
 * program) through the Robot API alone, local control's refusal, and the
 * dashboard client telling PolyScope X apart by the Robot API's probe.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_robot_api.h>

#include "controller.h"
#include "server.h"
#include "sim.h"

static struct rtl_sim_server *srv;

static void start(bool local)
{
	struct rtl_sim_opts so;
	struct rtl_sim_server_opts sv = { 0 };

	rtl_sim_opts_default(&so);
	so.profile = RTL_SIM_PROFILE_POLYSCOPE_X;
	so.ctrl.boot = true;
	so.ctrl.local = local;
	so.ctrl.power_on_s = 0.1;
	so.ctrl.brake_release_s = 0.1;
	cr_assert_eq(rtl_sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(rtl_sim_server_start(srv), 0);
}

static void done(void)
{
	rtl_sim_server_stop(srv);
	rtl_sim_server_join(srv);
	rtl_sim_server_destroy(srv);
	srv = NULL;
}

static struct rtl_ur_robot_api *client(void)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = rtl_sim_server_service_port(srv, RTL_SIM_PORT_ROBOT_API);
	cr_assert_neq(cfg.port, 0);
	cr_assert_eq(rtl_ur_robot_api_open(&cfg, &api, &e), 0, "%s", e.msg);
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
	struct rtl_sim_opts so;
	struct rtl_sim_server_opts sv = { 0 };

	start(false);
	cr_assert_neq(rtl_sim_server_service_port(srv, RTL_SIM_PORT_ROBOT_API), 0);
	cr_assert_eq(rtl_sim_server_service_port(srv, RTL_SIM_PORT_DASHBOARD), 0);
	done();
	rtl_sim_opts_default(&so);
	cr_assert_eq(rtl_sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(rtl_sim_server_service_port(srv, RTL_SIM_PORT_ROBOT_API), 0);
	rtl_sim_server_destroy(srv);
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
	rtl_ur_robot_api_close(api);
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
	rtl_ur_robot_api_close(api);
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
	cfg.robot_api_port = rtl_sim_server_service_port(srv, RTL_SIM_PORT_ROBOT_API);
	cr_assert_eq(rtl_ur_dashboard_connect(&cfg, &d, &e), -EPROTONOSUPPORT, "%s", e.msg);
	done();
}
