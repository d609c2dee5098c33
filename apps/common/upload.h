/* SPDX-License-Identifier: MIT */
/*
 * The --upload options of the RTDE apps (rtloop-admittance, rtloop-circle):
 * one parser, one help text, one report, so the apps bring a real arm's
 * program up and down the same way. They make io/ur's upload
 * (<rtloop/ur_upload.h>), hook it into the RTDE transport's connect, and
 * fill the loop's reconnect count.
 *
 *   --upload            send rtloop_control.script, wait for its executor
 *   --primary-port N    the script port (30001)
 *   --dashboard-port N  the dashboard, to stop the program (29999)
 *   --no-dashboard      none: the program is not stopped at exit
 *   --unlock            unlock a protective stop before uploading again
 *   --reconnect N       reconnect (and upload again) up to N times
 *   --robot-api-port N  PolyScope X's Robot API, instead of the dashboard (80)
 *
 * An app adds CLI_UPLOAD_ROWS(base, &its_struct_cli_upload) to its option
 * table (cli.h): the rows store the values themselves, and
 * cli_upload_check() judges them together after the parse.
 */
#ifndef CLI_UPLOAD_H
#define CLI_UPLOAD_H

#include <stdbool.h>

#include <rtloop/error.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/ur_upload.h>

#include "cli.h"

#define CLI_UPLOAD_N 7

/* The rows of the options, storing into @u (a struct cli_upload *), with
 * the long-only keys @base .. @base + CLI_UPLOAD_N - 1. */
#define CLI_UPLOAD_ROWS(base, u)                                                                  \
	CLI_FLAG((base) + 0, "upload", &(u)->enabled),                                            \
		CLI_UINT((base) + 1, "primary-port", &(u)->cfg.primary_port, 1, 65535, NULL),     \
		CLI_UINT((base) + 2, "dashboard-port", &(u)->cfg.dashboard_port, 1, 65535, NULL), \
		CLI_FLAG((base) + 3, "no-dashboard", &(u)->cfg.no_dashboard),                     \
		CLI_FLAG((base) + 4, "unlock", &(u)->cfg.unlock),                                 \
		CLI_UINT((base) + 5, "reconnect", &(u)->reconnect, 0, 1000, NULL),                \
		CLI_UINT((base) + 6, "robot-api-port", &(u)->cfg.robot_api_port, 1, 65535, NULL)

/* The options' help, for the apps' --help. */
extern const char cli_upload_help[];

struct cli_upload {
	bool enabled; /* --upload */
	struct rtl_ur_upload_config cfg;
	unsigned reconnect;
	struct rtl_ur_upload *up; /* cli_upload_attach() made it */
};

/* After parsing: the port options go with --upload, which writes to the
 * controller (so not with @read_only). Returns 0 or CLI_EXIT_USAGE. */
int cli_upload_check(const char *prog, const struct cli_upload *u, bool read_only);

/* Before the transport is created: with --upload, make the upload and
 * put it into @tc as the transport's hook. Returns 0 (also without
 * --upload: nothing to do) or -errno with @err filled (the program cannot
 * be read). Free it with cli_upload_free() after the transport. */
int cli_upload_attach(struct cli_upload *u, struct rtl_rtde_transport_config *tc,
		      struct rtl_error *err);

/* After the transport's destroy (which stops a program still running). */
void cli_upload_free(struct cli_upload *u);

/* After the loop started: what the upload did (to stderr). */
void cli_upload_started(const char *prog, const struct cli_upload *u, const char *host);

/* After the loop stopped (the arm at rest): stop the program through the
 * dashboard and say so. Returns 0, or -1 when that failed (printed). */
int cli_upload_finish(const char *prog, const struct cli_upload *u, struct rtl_rtde_transport *t);

/* While the loop runs: a reconnect left the commands disarmed; the
 * transport uploaded again and saw its executor ready, so arm them again
 * (unless @read_only). Call it now and then; @seen keeps the count. */
void cli_upload_rearm(const char *prog, const struct cli_upload *u, struct rtl_loop *loop,
		      bool read_only, uint64_t *seen);

#endif /* CLI_UPLOAD_H */
