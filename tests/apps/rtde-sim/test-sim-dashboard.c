// SPDX-License-Identifier: MIT
/*
 * rtde-sim's dashboard server (apps/rtde-sim/dashboard.c) through rtloop's
 * dashboard client (<rtloop/ur_dashboard.h>), in-process: the server on
 * its own thread with ephemeral ports, driven by the controller's state
 * machine. A bring-up from power-off, the refusals of local control, of a
 * protective stop and of an unlock before the delay, the CB3 profile's 3.x
 * answers, and the polyscope-x profile's missing dashboard. Waits for a
 * mode poll the dashboard with a deadline; nothing sleeps and hopes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>

#include "server.h"

#define SEC RTL_NS_PER_SEC
#define MS RTL_NS_PER_MS

static struct sim_server *srv;
static struct rtl_ur_dashboard *D;
static struct rtl_error E;

static void up(struct sim_opts *o)
{
	struct sim_server_opts so = { 0 };
	struct rtl_ur_dashboard_config cfg;

	cr_assert_eq(sim_server_create(&srv, o, &so), 0);
	cr_assert_eq(sim_server_start(srv), 0);
	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = sim_server_service_port(srv, SIM_PORT_DASHBOARD);
	cfg.robot_api_port = 0;
	cr_assert_neq(cfg.port, 0);
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), 0, "%s", E.msg);
}

static void down(void)
{
	rtl_ur_dashboard_destroy(D);
	D = NULL;
	sim_server_stop(srv);
	cr_assert_eq(sim_server_join(srv), 0);
	sim_server_destroy(srv);
	srv = NULL;
}

static void nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* Poll robotmode until @want, within 5 s. */
static void await_mode(enum rtl_ur_robot_mode want)
{
	int64_t deadline = rtl_time_now() + 5 * SEC;
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_NO_CONTROLLER;

	while (rtl_time_now() < deadline) {
		cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), 0, "%s", E.msg);
		if (m == want)
			return;
		nap();
	}
	cr_assert_fail("robot mode %s, not %s, after 5 s", rtl_ur_robot_mode_name(m),
		       rtl_ur_robot_mode_name(want));
}

static void await_safety(enum rtl_ur_safety_status want)
{
	int64_t deadline = rtl_time_now() + 5 * SEC;
	enum rtl_ur_safety_status s = RTL_UR_SAFETY_NORMAL;

	while (rtl_time_now() < deadline) {
		cr_assert_eq(rtl_ur_dashboard_safety_status(D, &s, &E), 0, "%s", E.msg);
		if (s == want)
			return;
		nap();
	}
	cr_assert_fail("safety %s, not %s, after 5 s", rtl_ur_safety_status_name(s),
		       rtl_ur_safety_status_name(want));
}

Test(sim_dashboard, bring_up_from_power_off, .timeout = 30)
{
	struct sim_opts o;
	struct rtl_ur_program prog;
	enum rtl_ur_safety_status s;
	bool remote = false;

	sim_opts_default(&o);
	o.ctrl.boot = true;
	o.ctrl.power_on_s = 0.05;
	o.ctrl.brake_release_s = 0.05;
	up(&o);
	cr_assert_eq(rtl_ur_dashboard_version(D)->major, 5);
	await_mode(RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), 0, "%s", E.msg);
	cr_assert(remote);
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &s, &E), 0, "%s", E.msg);
	cr_assert_eq(s, RTL_UR_SAFETY_NORMAL);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), -EIO, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), 0, "%s", E.msg);
	await_mode(RTL_UR_ROBOT_MODE_IDLE);
	cr_assert_eq(rtl_ur_dashboard_brake_release(D, &E), 0, "%s", E.msg);
	await_mode(RTL_UR_ROBOT_MODE_RUNNING);
	cr_assert_eq(rtl_ur_dashboard_load(D, "nope.urp", &E), -ENOENT);
	cr_assert(strstr(E.msg, "File not found"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_load(D, "rtloop_control.urp", &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_program_state(D, &prog, &E), 0, "%s", E.msg);
	cr_assert_eq(prog.state, RTL_UR_PROGRAM_PLAYING);
	cr_assert(strstr(prog.name, "rtloop_control"), "%s", prog.name);
	cr_assert_eq(rtl_ur_dashboard_pause(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_program_state(D, &prog, &E), 0, "%s", E.msg);
	cr_assert_eq(prog.state, RTL_UR_PROGRAM_PAUSED);
	cr_assert_eq(rtl_ur_dashboard_stop(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_close_safety_popup(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_close_popup(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_power_off(D, &E), 0, "%s", E.msg);
	await_mode(RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_assert_eq(rtl_ur_dashboard_quit(D, &E), 0, "%s", E.msg);
	down();
}

Test(sim_dashboard, local_control_refuses_with_the_fix, .timeout = 30)
{
	struct sim_opts o;
	bool remote = true;
	char reply[128];

	sim_opts_default(&o);
	o.ctrl.boot = true;
	o.ctrl.local = true;
	up(&o);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), 0, "%s", E.msg);
	cr_assert(!remote);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), -EPERM);
	cr_assert(strstr(E.msg, "remote control") && strstr(E.msg, "Remote Control"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_load(D, "rtloop_control.urp", &E), -EPERM);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), -EPERM);
	/* Queries still answer; unknown commands get the controller's words. */
	cr_assert_eq(rtl_ur_dashboard_command(D, reply, sizeof(reply), "dance", &E), 29);
	cr_assert_str_eq(reply, "could not understand: 'dance'");
	down();
}

Test(sim_dashboard, protective_stop_unlock_waits_for_the_delay, .timeout = 30)
{
	struct sim_opts o;
	int64_t deadline;
	int r;

	sim_opts_default(&o);
	o.ctrl.protective_stop_after_s = 0.05; /* the rtloop program plays from the start */
	o.ctrl.unlock_delay_s = 0.3;
	up(&o);
	await_safety(RTL_UR_SAFETY_PROTECTIVE_STOP);
	r = rtl_ur_dashboard_unlock_protective_stop(D, &E);
	if (r == -EAGAIN)
		cr_assert(strstr(E.msg, "5 s") && strstr(E.msg, "cause"), "%s", E.msg);
	cr_assert(r == -EAGAIN || r == 0, "%d %s", r, E.msg);
	deadline = rtl_time_now() + 5 * SEC;
	while (r == -EAGAIN && rtl_time_now() < deadline) {
		nap();
		r = rtl_ur_dashboard_unlock_protective_stop(D, &E);
	}
	cr_assert_eq(r, 0, "%s", E.msg);
	await_safety(RTL_UR_SAFETY_NORMAL);
	down();
}

Test(sim_dashboard, unlock_too_early_is_eagain, .timeout = 30)
{
	struct sim_opts o;

	sim_opts_default(&o);
	o.ctrl.protective_stop_after_s = 0.05;
	up(&o); /* unlock delay: 5 s */
	await_safety(RTL_UR_SAFETY_PROTECTIVE_STOP);
	cr_assert_eq(rtl_ur_dashboard_unlock_protective_stop(D, &E), -EAGAIN);
	cr_assert(strstr(E.msg, "Cannot unlock protective stop until 5s"), "%s", E.msg);
	down();
}

Test(sim_dashboard, cb3_answers_as_3x, .timeout = 30)
{
	struct sim_opts o;
	enum rtl_ur_safety_status s;
	char reply[128];
	bool remote;

	sim_opts_default(&o);
	o.profile = SIM_PROFILE_CB3;
	up(&o);
	cr_assert_eq(rtl_ur_dashboard_version(D)->major, 3);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), -EOPNOTSUPP);
	cr_assert(strstr(E.msg, "5.6") && strstr(E.msg, "CB3"), "%s", E.msg);
	/* Sent anyway, the 3.x dashboard does not know it. */
	cr_assert_gt(rtl_ur_dashboard_command(D, reply, sizeof(reply), "is in remote control", &E),
		     0);
	cr_assert_str_eq(reply, "could not understand: 'is in remote control'");
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &s, &E), 0, "%s", E.msg);
	cr_assert_eq(s, RTL_UR_SAFETY_NORMAL);
	down();
}

Test(sim_dashboard, cb3_before_3_11_has_only_safetymode, .timeout = 30)
{
	struct sim_opts o;
	enum rtl_ur_safety_status s = RTL_UR_SAFETY_FAULT;
	char reply[128];

	sim_opts_default(&o);
	o.profile = SIM_PROFILE_CB3;
	o.version = (struct rtl_rtde_controller_version){ 3, 10, 0, 0 };
	up(&o);
	cr_assert_eq(rtl_ur_dashboard_version(D)->minor, 10);
	cr_assert_gt(rtl_ur_dashboard_command(D, reply, sizeof(reply), "safetystatus", &E), 0);
	cr_assert_str_eq(reply, "could not understand: 'safetystatus'");
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &s, &E), 0, "%s", E.msg);
	cr_assert_eq(s, RTL_UR_SAFETY_NORMAL);
	down();
}

Test(sim_dashboard, polyscope_x_serves_no_dashboard, .timeout = 30)
{
	struct sim_server_opts so = { 0 };
	struct rtl_ur_dashboard_config cfg;
	struct sim_opts o;

	sim_opts_default(&o);
	o.profile = SIM_PROFILE_POLYSCOPE_X;
	cr_assert_eq(sim_server_create(&srv, &o, &so), 0);
	cr_assert_eq(sim_server_service_port(srv, SIM_PORT_DASHBOARD), 0);
	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.controller_major = sim_profile(SIM_PROFILE_POLYSCOPE_X)->version.major;
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), -EPROTONOSUPPORT);
	cr_assert(strstr(E.msg, "PolyScope X"), "%s", E.msg);
	sim_server_destroy(srv);
	srv = NULL;
}
