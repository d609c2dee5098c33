/* SPDX-License-Identifier: MIT */
/*
 * The --upload options of the RTDE apps (rtloop-admittance, rtloop-circle):
 * one parser, one help text, one report, so the apps bring a real arm's
 * program up and down the same way. They fill the RTDE transport's upload
 * option (<rtloop/rtde_transport.h>) and the loop's reconnect count.
 *
 *   --upload            send rtloop_control.script, wait for its executor
 *   --primary-port N    the script port (30001)
 *   --dashboard-port N  the dashboard, to stop the program (29999)
 *   --no-dashboard      none: the program is not stopped at exit
 *   --unlock            unlock a protective stop before uploading again
 *   --reconnect N       reconnect (and upload again) up to N times
 *   --robot-api-port N  PolyScope X's Robot API, instead of the dashboard (80)
 *
 * An app adds RTL_CLI_UPLOAD_LONGOPTS(base) to its getopt_long table and
 * passes every option value in [base, base + RTL_CLI_UPLOAD_N) to
 * rtl_cli_upload_option().
 */
#ifndef RTL_CLI_UPLOAD_H
#define RTL_CLI_UPLOAD_H

#include <stdbool.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_transport.h>

#define RTL_CLI_UPLOAD_N 7

#define RTL_CLI_UPLOAD_LONGOPTS(base)                                      \
	{ "upload", no_argument, NULL, (base) + 0 },                       \
		{ "primary-port", required_argument, NULL, (base) + 1 },   \
		{ "dashboard-port", required_argument, NULL, (base) + 2 }, \
		{ "no-dashboard", no_argument, NULL, (base) + 3 },         \
		{ "unlock", no_argument, NULL, (base) + 4 },               \
	{                                                                  \
		"reconnect", required_argument, NULL, (base) + 5           \
	}

/* The options' help, for the apps' --help. */
extern const char rtl_cli_upload_help[];

struct rtl_cli_upload {
	struct rtl_rtde_upload_config cfg;
	unsigned reconnect;
	bool given; /* an option other than --upload and --reconnect */
};

/* Option @which (0 .. RTL_CLI_UPLOAD_N - 1) with @arg. Returns 0 or
 * RTL_CLI_EXIT_USAGE (message printed). */
int rtl_cli_upload_option(const char *prog, int which, const char *arg, struct rtl_cli_upload *u);

/* After parsing: the port options go with --upload, which writes to the
 * controller (so not with @read_only). Returns 0 or RTL_CLI_EXIT_USAGE. */
int rtl_cli_upload_check(const char *prog, const struct rtl_cli_upload *u, bool read_only);

/* After the loop started: what the upload did (to stderr). */
void rtl_cli_upload_started(const char *prog, const struct rtl_cli_upload *u, const char *host,
			    struct rtl_rtde_transport *t);

/* After the loop stopped (the arm at rest): stop the program through the
 * dashboard and say so. Returns 0, or -1 when that failed (printed). */
int rtl_cli_upload_finish(const char *prog, const struct rtl_cli_upload *u,
			  struct rtl_rtde_transport *t);

/* While the loop runs: a reconnect left the commands disarmed; the
 * transport uploaded again and saw its executor ready, so arm them again
 * (unless @read_only). Call it now and then; @seen keeps the count. */
void rtl_cli_upload_rearm(const char *prog, const struct rtl_cli_upload *u, struct rtl_loop *loop,
			  bool read_only, uint64_t *seen);

#endif /* RTL_CLI_UPLOAD_H */
