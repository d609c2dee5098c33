// SPDX-License-Identifier: MIT
/*
 * The --upload options of the RTDE apps (see upload.h).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/ur_dashboard.h>

#include "cli.h"
#include "upload.h"

const char cli_upload_help[] =
	"Controller program (a real UR, or rtde-sim --boot):\n"
	"      --upload            send rtloop_control.script to the primary port at\n"
	"                          start (and after each reconnect), wait up to 5 s\n"
	"                          for its executor, stop the program at exit\n"
	"      --primary-port N    the script port for --upload (default 30001)\n"
	"      --dashboard-port N  the dashboard, to stop the program (default 29999)\n"
	"      --no-dashboard      the controller has none: the program is not stopped\n"
	"      --unlock            unlock a protective stop before uploading again\n"
	"      --reconnect N       reconnect (and upload again) up to N times after the\n"
	"                          stream ends, e.g. after a protective stop (default 0)\n"
	"      --robot-api-port N  PolyScope X: its Robot API, which stands in for the\n"
	"                          dashboard there (default 80)\n";

int cli_upload_check(const char *prog, const struct cli_upload *u, bool read_only)
{
	/* The ports are 1..65535 when given: 0 is their default. */
	bool given = u->cfg.primary_port || u->cfg.dashboard_port || u->cfg.robot_api_port ||
		     u->cfg.no_dashboard || u->cfg.unlock;

	if (u->enabled && read_only)
		return cli_usage_error(prog, "--upload starts a program on the controller, "
					     "--read-only writes nothing: choose one");
	if (!u->enabled && given)
		return cli_usage_error(prog, "--primary-port, --dashboard-port, "
					     "--robot-api-port, --no-dashboard and --unlock go "
					     "with --upload");
	if (u->cfg.unlock && u->cfg.no_dashboard)
		return cli_usage_error(prog, "--unlock needs the dashboard: not with "
					     "--no-dashboard");
	return 0;
}

int cli_upload_attach(struct cli_upload *u, struct rtl_rtde_transport_config *tc,
		      struct rtl_error *err)
{
	int ret;

	if (!u->enabled)
		return 0;
	u->cfg.size = sizeof(u->cfg);
	ret = rtl_ur_upload_create(&u->up, &u->cfg, err);
	if (ret < 0)
		return ret;
	tc->hook = &rtl_ur_upload_hook;
	tc->hook_ctx = u->up;
	return 0;
}

void cli_upload_free(struct cli_upload *u)
{
	rtl_ur_upload_destroy(u->up);
	u->up = NULL;
}

void cli_upload_started(const char *prog, const struct cli_upload *u, const char *host)
{
	struct rtl_ur_upload_counters c = { .size = sizeof(c) };

	if (!u->up)
		return;
	rtl_ur_upload_stats(u->up, &c);
	fprintf(stderr,
		"%s: upload: rtloop_control.script sent to %s:%u, executor ready after %.0f ms%s\n",
		prog, host, u->cfg.primary_port ? u->cfg.primary_port : 30001,
		(double)c.ready_ns / 1e6,
		c.unlocks ? " (a protective stop was unlocked first)" : "");
}

int cli_upload_finish(const char *prog, const struct cli_upload *u, struct rtl_rtde_transport *t)
{
	struct rtl_error err = { 0 };

	if (!u->up)
		return 0;
	if (u->cfg.no_dashboard) {
		fprintf(stderr,
			"%s: stop: the arm is at rest; no dashboard, so the program "
			"keeps running (idle) on the controller\n",
			prog);
		return 0;
	}
	if (rtl_ur_upload_stop_program(u->up, &err)) {
		fprintf(stderr, "%s: stopping the program failed: %s\n", prog, err.msg);
		return -1;
	}
	fprintf(stderr,
		"%s: stop: the arm is at rest and the program on the controller "
		"was stopped (%s)\n",
		prog,
		rtl_ur_is_polyscope_x(
			rtl_rtde_client_info(rtl_rtde_transport_client(t))->version.major)
			? "Robot API stop"
			: "dashboard stop");
	return 0;
}

void cli_upload_rearm(const char *prog, const struct cli_upload *u, struct rtl_loop *loop,
		      bool read_only, uint64_t *seen)
{
	struct rtl_loop_counters s = { .size = sizeof(s) };

	if (!u->reconnect)
		return;
	rtl_loop_stats(loop, &s);
	if (s.reconnects <= *seen)
		return;
	*seen = s.reconnects;
	if (!read_only)
		rtl_loop_arm(loop, true);
	fprintf(stderr, "%s: reconnected (%" PRIu64 ")%s; commands armed again\n", prog, *seen,
		u->enabled ? ", the program uploaded again" : "");
}
