// SPDX-License-Identifier: MIT
/*
 * io/ur's upload, the hook of the RTDE transport's connect
 * (<rtloop/ur_upload.h>), against rtde-sim --boot, in this process on free
 * ports: the controller starts powered off with no program; the dashboard
 * client powers it on and releases the brakes; at the transport's connect
 * the hook uploads rtloop_control.script through the primary port, waits
 * for the executor, and the loop moves the arm; at exit the arm is at rest
 * and the program stopped. What happened is read from the simulator's
 * controller (after the server has stopped) and its dashboard, not from
 * the upload's own counters alone.
 *
 * Hostile cases: the upload before the arm is ready, a program that is not
 * the rtloop program (the error names the line), a protective stop in the
 * middle of the run (the loop reports it; with --unlock the reconnect
 * unlocks and uploads again), and a controller without a dashboard.
 *
 * Only the Criterion macros the TSan shim provides: the same tests run
 * under ThreadSanitizer with the real transport, the dashboard and the
 * primary clients.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_robot_api.h>
#include <rtloop/ur_upload.h>

#include "server.h"

#define OUTPUTS "timestamp,actual_q,actual_qd"
#define WAIT_NS (10 * RTL_NS_PER_SEC)

struct rig {
	struct sim_server *srv;
	struct rtl_ur_upload *up;
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_rtde_handle mode, p0;
	double qd0;
	_Atomic int64_t steps;
	char log[4096];
	size_t log_len;
};

static struct rig R;

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct rig *r = user;

	r->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	r->p0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);

	(void)fr;
	atomic_fetch_add(&r->steps, 1);
	rtl_rtde_frame_set_int(cmd, r->mode, RTL_RTDE_CMD_SPEEDJ);
	rtl_rtde_frame_set_double(cmd, r->p0, r->qd0);
	return 0;
}

/* The loop's log lines, kept for the assertions: any thread logs (the
 * loop's threads, the rx thread's log queue), so under a lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_log(void *ctx, enum rtl_log_level lvl, const char *msg)
{
	struct rig *r = ctx;
	size_t n = strlen(msg);

	(void)lvl;
	pthread_mutex_lock(&log_lock);
	if (r->log_len + n + 2 < sizeof(r->log)) {
		memcpy(r->log + r->log_len, msg, n);
		r->log_len += n;
		r->log[r->log_len++] = '\n';
		r->log[r->log_len] = '\0';
	}
	pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *what)
{
	bool has;

	pthread_mutex_lock(&log_lock);
	has = strstr(R.log, what) != NULL;
	pthread_mutex_unlock(&log_lock);
	return has;
}

static void teardown(void);

static void start_sim(struct sim_opts *so, struct sim_server_opts *sv)
{
	struct sim_opts def;
	struct sim_server_opts sdef = { 0 };

	teardown(); /* what a failed test left (the shim runs no fini) */

	if (!so) {
		sim_opts_default(&def);
		def.ctrl.boot = true;
		so = &def;
	}
	if (!sv)
		sv = &sdef;
	cr_assert_eq(sim_server_create(&R.srv, so, sv), 0);
	cr_assert_eq(sim_server_start(R.srv), 0);
}

/* The loop and the transport go first (the transport's destroy stops an
 * uploaded program through the dashboard, which must still answer), then
 * the upload it hooked. */
static struct sim *stop_sim(void)
{
	rtl_loop_destroy(R.loop);
	R.loop = NULL;
	rtl_rtde_transport_destroy(R.tr);
	R.tr = NULL;
	rtl_ur_upload_destroy(R.up);
	R.up = NULL;
	sim_server_stop(R.srv);
	cr_assert_eq(sim_server_join(R.srv), 0);
	return sim_server_sim(R.srv);
}

static struct rtl_ur_dashboard *dash(void)
{
	struct rtl_ur_dashboard_config dc;
	struct rtl_ur_dashboard *d = NULL;
	struct rtl_error err = { 0 };

	rtl_ur_dashboard_config_init(&dc);
	dc.host = "127.0.0.1";
	dc.port = sim_server_service_port(R.srv, SIM_PORT_DASHBOARD);
	cr_assert_eq(rtl_ur_dashboard_create(&d, &dc, &err), 0, "%s", err.msg);
	return d;
}

/* Power on and release the brakes, waiting (bounded) for RUNNING. */
static void bring_up(void)
{
	struct rtl_ur_dashboard *d = dash();
	struct rtl_error err = { 0 };
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_POWER_OFF;
	int64_t until = rtl_time_now() + WAIT_NS;

	cr_assert_eq(rtl_ur_dashboard_power_on(d, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_ur_dashboard_brake_release(d, &err), 0, "%s", err.msg);
	while (rtl_time_now() < until) {
		cr_assert_eq(rtl_ur_dashboard_robot_mode(d, &m, &err), 0, "%s", err.msg);
		if (m == RTL_UR_ROBOT_MODE_RUNNING)
			break;
		rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	}
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_RUNNING, "robot mode %s", rtl_ur_robot_mode_name(m));
	rtl_ur_dashboard_destroy(d);
}

/* The upload (@up, on rtde-sim's ports), the transport it hooks, the loop,
 * started. */
static int make_loop(const struct rtl_ur_upload_config *up, int reconnects, struct rtl_error *err)
{
	struct rtl_ur_upload_config uc = *up;
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	int ret;

	uc.size = sizeof(uc);
	/* This build's program (the installed one may be of another). */
	if (!uc.script)
		uc.script = getenv("RTL_TEST_CONTROL_SCRIPT");
	if (!uc.primary_port)
		uc.primary_port = sim_server_service_port(R.srv, SIM_PORT_PRIMARY);
	if (!uc.dashboard_port && !uc.no_dashboard)
		uc.dashboard_port = sim_server_service_port(R.srv, SIM_PORT_DASHBOARD);
	if (!uc.robot_api_port)
		uc.robot_api_port = sim_server_service_port(R.srv, SIM_PORT_ROBOT_API);
	ret = rtl_ur_upload_create(&R.up, &uc, err);
	if (ret)
		return ret;
	tc.port = sim_server_port(R.srv);
	cc.outputs = OUTPUTS;
	cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
	tc.connected = on_connected;
	tc.user = &R;
	tc.hook = &rtl_ur_upload_hook;
	tc.hook_ctx = R.up;
	rtl_log_set_handler(on_log, &R);
	ret = rtl_rtde_transport_create(&R.tr, &tc, err);
	if (ret)
		return ret;
	lc.transport = rtl_rtde_transport_base(R.tr);
	lc.step = step;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.reconnect_attempts = reconnects;
	lc.watchdog_periods = 50;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, err), 0, "%s", err->msg);
	ret = rtl_loop_start(R.loop, err);
	/* The TSan shim prints no assertion message: say why here. */
	if (ret)
		fprintf(stderr, "# the loop's start: %d: %s\n", ret, err->msg);
	return ret;
}

static void wait_steps(int64_t n)
{
	int64_t until = rtl_time_now() + WAIT_NS;

	while (atomic_load(&R.steps) < n && rtl_time_now() < until)
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
	cr_assert_geq(atomic_load(&R.steps), n, "the loop stepped %ld times",
		      (long)atomic_load(&R.steps));
}

static void teardown(void)
{
	rtl_loop_destroy(R.loop);
	rtl_rtde_transport_destroy(R.tr);
	rtl_ur_upload_destroy(R.up);
	if (R.srv) {
		sim_server_stop(R.srv);
		sim_server_join(R.srv);
		sim_server_destroy(R.srv);
	}
	rtl_log_set_handler(NULL, NULL);
	pthread_mutex_lock(&log_lock);
	memset(&R, 0, sizeof(R));
	pthread_mutex_unlock(&log_lock);
}

/* boot -> power on -> brake release -> upload -> ready -> run -> stop, on
 * controller profile @profile. */
static void whole_sequence(enum sim_profile_id profile)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up) };
	struct rtl_ur_upload_counters uc = { .size = sizeof(uc) };
	struct sim_opts so;
	struct rtl_error err = { 0 };
	struct sim *sim;

	sim_opts_default(&so);
	so.profile = profile;
	so.ctrl.boot = true;
	start_sim(&so, NULL);
	bring_up();
	R.qd0 = 0.2;
	cr_assert_eq(make_loop(&up, 0, &err), 0, "%s", err.msg);
	rtl_ur_upload_stats(R.up, &uc);
	cr_expect_eq(uc.uploads, 1);
	cr_expect_gt(uc.ready_ns, 0);
	wait_steps(200);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	cr_assert_eq(rtl_ur_upload_stop_program(R.up, &err), 0, "%s", err.msg);
	rtl_ur_upload_stats(R.up, &uc);
	cr_expect_eq(uc.program_stops, 1);
	sim = stop_sim();
	/* The arm moved (the executor ran our commands), is at rest, and the
	 * program is stopped: the controller saw exactly one rtloop program. */
	cr_expect_eq(sim->ctrl.stats.rtloop_started, 1);
	cr_expect_eq(sim->ctrl.stats.others, 0);
	cr_expect_gt(sim->robot.stops, 0);
	cr_expect(sim_robot_at_rest(&sim->robot));
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	cr_expect_neq(sim->robot.actual_q[0], sim->opts.robot.q0[0]);
}

Test(rtde_upload, the_whole_sequence_from_boot, .fini = teardown, .timeout = 60)
{
	whole_sequence(SIM_PROFILE_ESERIES);
}

/* CB3 (PolyScope 3.x, 125 Hz): no remote control, the 3.x dashboard; the
 * same sequence. */
Test(rtde_upload, the_whole_sequence_on_a_cb3, .fini = teardown, .timeout = 60)
{
	whole_sequence(SIM_PROFILE_CB3);
}

/* Powered off: the program does not start, and the error says what to do. */
Test(rtde_upload, before_power_on_the_start_fails_with_the_fix, .fini = teardown, .timeout = 60)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up), .ready_timeout_ns = RTL_NS_PER_SEC };
	struct rtl_error err = { 0 };
	int ret;

	start_sim(NULL, NULL);
	ret = make_loop(&up, 0, &err);
	cr_assert(ret == -EAGAIN || ret == -ETIMEDOUT, "ret %d: %s", ret, err.msg);
	cr_expect(strstr(err.msg, "rtloop-arm up") != NULL, "%s", err.msg);
	cr_expect(strstr(err.msg, "power") != NULL, "%s", err.msg);
	cr_expect_eq(stop_sim()->ctrl.stats.rtloop_started, 0);
}

/* A program that is not this build's: the controller's runtime exception,
 * with its line, fails the start-up. */
Test(rtde_upload, a_changed_program_is_rejected_naming_its_line, .fini = teardown, .timeout = 60)
{
	char path[] = "/tmp/rtl-upload-XXXXXX";
	const char *installed = getenv("RTL_TEST_CONTROL_SCRIPT");
	struct rtl_ur_upload_config up = { .size = sizeof(up) };
	struct rtl_error err = { 0 };
	FILE *in, *out;
	char line[1024];
	int fd, n = 0, ret;

	cr_assert(installed, "RTL_TEST_CONTROL_SCRIPT: the build passes the program's path");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	out = fdopen(fd, "w");
	in = fopen(installed, "r");
	cr_assert(in && out);
	/* Line 40 changed, the rest as installed. */
	while (fgets(line, sizeof(line), in))
		fputs(++n == 40 ? "  global gain = 99999\n" : line, out);
	fclose(in);
	fclose(out);
	cr_assert_gt(n, 40);

	start_sim(NULL, NULL);
	bring_up();
	up.script = path;
	ret = make_loop(&up, 0, &err);
	unlink(path);
	cr_assert_eq(ret, -ENOEXEC, "ret %d: %s", ret, err.msg);
	cr_expect(strstr(err.msg, "line 40") != NULL, "%s", err.msg);
	cr_expect(strstr(err.msg, "fix:") != NULL, "%s", err.msg);
	cr_expect_eq(stop_sim()->ctrl.stats.others, 1);
}

/* A protective stop in the middle of the run: the loop reports it; with
 * unlock the reconnect unlocks and uploads again, and the run goes on. */
Test(rtde_upload, a_protective_stop_is_reported_and_recovered_when_asked, .fini = teardown,
     .timeout = 60)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up), .unlock = true };
	struct rtl_ur_upload_counters uc = { .size = sizeof(uc) };
	struct sim_opts so;
	struct rtl_error err = { 0 };
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	struct sim *sim;
	int64_t until;

	sim_opts_default(&so);
	so.ctrl.boot = true;
	so.ctrl.protective_stop_after_s = 0.3;
	so.ctrl.unlock_delay_s = 0.2;
	start_sim(&so, NULL);
	bring_up();
	R.qd0 = 0.1;
	cr_assert_eq(make_loop(&up, 5, &err), 0, "%s", err.msg);
	until = rtl_time_now() + WAIT_NS;
	do {
		rtl_loop_stats(R.loop, &ls);
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	} while (ls.reconnects < 1 && rtl_time_now() < until);
	cr_assert_eq(ls.reconnects, 1);
	rtl_ur_upload_stats(R.up, &uc);
	cr_expect_eq(uc.uploads, 2);
	cr_expect_eq(uc.unlocks, 1);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	cr_expect(log_has("protective stop"), "the loop's log names the protective stop");
	sim = stop_sim();
	cr_expect_eq(sim->ctrl.stats.protective_stops, 1);
	cr_expect_eq(sim->ctrl.stats.unlocks, 1);
	cr_expect_eq(sim->ctrl.stats.rtloop_started, 2);
	/* The transport's destroy stopped the program it had uploaded. */
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	cr_expect(sim_robot_at_rest(&sim->robot));
}

/* Without a dashboard the upload still works (nothing stops the program
 * at exit but the arm is at rest), and unlock is not asked for. */
Test(rtde_upload, a_controller_without_a_dashboard, .fini = teardown, .timeout = 60)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up), .no_dashboard = true };
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_error err = { 0 };
	struct sim *sim;

	sim_opts_default(&so); /* the quick start state: already RUNNING */
	sv.service_port[SIM_PORT_DASHBOARD] = -1;
	start_sim(&so, &sv);
	cr_assert_eq(sim_server_service_port(R.srv, SIM_PORT_DASHBOARD), 0);
	cr_assert_eq(make_loop(&up, 0, &err), 0, "%s", err.msg);
	wait_steps(50);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	cr_expect_eq(rtl_ur_upload_stop_program(R.up, &err), 0);
	sim = stop_sim();
	cr_expect(sim_robot_at_rest(&sim->robot));
	cr_expect_eq(sim->ctrl.stats.rtloop_started, 1);
}

/* A primary port that accepts and never says a word: the start-up fails
 * within its bound, saying what was missing, and nothing was uploaded. */
Test(rtde_upload, a_silent_primary_port_fails_the_start_within_its_bound, .fini = teardown,
     .timeout = 60)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up) };
	struct rtl_ur_upload_counters uc = { .size = sizeof(uc) };
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	struct rtl_error err = { 0 };
	int64_t t0;
	int ls, ret;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(ls, 0);
	cr_assert_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(ls, 4), 0);
	cr_assert_eq(getsockname(ls, (struct sockaddr *)&sa, &len), 0);
	start_sim(NULL, NULL);
	bring_up();
	up.primary_port = ntohs(sa.sin_port);
	t0 = rtl_time_now();
	ret = make_loop(&up, 0, &err);
	cr_expect_eq(ret, -ETIMEDOUT, "ret %d: %s", ret, err.msg);
	cr_expect_lt(rtl_time_now() - t0, 10 * RTL_NS_PER_SEC);
	cr_expect(strstr(err.msg, "version") != NULL, "%s", err.msg);
	rtl_ur_upload_stats(R.up, &uc);
	cr_expect_eq(uc.uploads, 0);
	close(ls);
	cr_expect_eq(stop_sim()->ctrl.stats.programs, 0);
}

/* PolyScope X: no dashboard; the Robot API brings the arm up, and the
 * transport stops the program through it at the end. */
Test(rtde_upload, polyscope_x_through_the_robot_api, .fini = teardown, .timeout = 60)
{
	struct rtl_ur_upload_config up = { .size = sizeof(up) };
	struct rtl_ur_robot_api_config ac;
	struct rtl_ur_robot_api *api = NULL;
	enum rtl_ur_robot_mode m = RTL_UR_ROBOT_MODE_POWER_OFF;
	struct rtl_ur_upload_counters uc = { .size = sizeof(uc) };
	struct sim_opts so;
	struct rtl_error err = { 0 };
	struct sim *sim;
	int64_t until;
	int ret;

	sim_opts_default(&so);
	so.profile = SIM_PROFILE_POLYSCOPE_X;
	so.ctrl.boot = true;
	start_sim(&so, NULL);
	cr_assert_eq(sim_server_service_port(R.srv, SIM_PORT_DASHBOARD), 0);
	rtl_ur_robot_api_config_init(&ac);
	ac.host = "127.0.0.1";
	ac.port = sim_server_service_port(R.srv, SIM_PORT_ROBOT_API);
	/* A librtloop built without libcurl has no Robot API client: its
	 * sentence is the reason. */
	ret = rtl_ur_robot_api_create(&api, &ac, &err);
	if (ret == -ENOTSUP)
		cr_skip_test("%s", err.msg);
	cr_assert_eq(ret, 0, "%s", err.msg);
	cr_assert_eq(rtl_ur_robot_api_power_on(api, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_ur_robot_api_brake_release(api, &err), 0, "%s", err.msg);
	until = rtl_time_now() + WAIT_NS;
	while (m != RTL_UR_ROBOT_MODE_RUNNING && rtl_time_now() < until) {
		cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &err), 0, "%s", err.msg);
		rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	}
	rtl_ur_robot_api_destroy(api);
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_RUNNING);
	R.qd0 = 0.2;
	cr_assert_eq(make_loop(&up, 0, &err), 0, "%s", err.msg);
	wait_steps(100);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	cr_assert_eq(rtl_ur_upload_stop_program(R.up, &err), 0, "%s", err.msg);
	rtl_ur_upload_stats(R.up, &uc);
	cr_expect_eq(uc.uploads, 1);
	cr_expect_eq(uc.program_stops, 1);
	sim = stop_sim();
	cr_expect_eq(sim->ctrl.stats.rtloop_started, 1);
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	cr_expect(sim_robot_at_rest(&sim->robot));
}
