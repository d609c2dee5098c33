// SPDX-License-Identifier: MIT
/*
 * io/ur's upload (<rtloop/ur_upload.h>) without a controller: its create
 * checks the configuration's size and reads the program at once (a
 * missing one fails here, naming the path and the fix), its counters
 * start at zero, and a stop with nothing uploaded does nothing. The
 * upload against a controller is tests/io/rtde/test-rtde-upload.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/ur_upload.h>

/* This build's program (the build passes its path). */
static const char *program(void)
{
	const char *p = getenv("RTL_TEST_CONTROL_SCRIPT");

	cr_assert(p, "RTL_TEST_CONTROL_SCRIPT: the build passes the program's path");
	return p;
}

Test(ur_upload, create_reads_the_program_and_counts_nothing_yet)
{
	struct rtl_ur_upload_config uc = { .size = sizeof(uc), .script = program() };
	struct rtl_ur_upload_counters c = { sizeof(c), 1, 1, 1, 1 };
	struct rtl_ur_upload *u = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_ur_upload_create(&u, &uc, &err), 0, "%s", err.msg);
	cr_assert(u != NULL);
	cr_assert_eq(rtl_ur_upload_stats(u, &c), 0);
	cr_assert_eq(c.uploads, 0);
	cr_assert_eq(c.unlocks, 0);
	cr_assert_eq(c.ready_ns, 0);
	cr_assert_eq(c.program_stops, 0);
	c.size = 0;
	cr_assert_eq(rtl_ur_upload_stats(u, &c), -EINVAL, "a size not set");
	/* Nothing was uploaded: nothing to stop, no connection made. */
	cr_assert_eq(rtl_ur_upload_stop_program(u, &err), 0);
	rtl_ur_upload_destroy(u);
	rtl_ur_upload_destroy(NULL);
	cr_assert_eq(rtl_ur_upload_stats(NULL, &c), -EINVAL);
	cr_assert_eq(rtl_ur_upload_stop_program(NULL, &err), 0);
}

Test(ur_upload, create_checks_the_configurations_size)
{
	struct {
		struct rtl_ur_upload_config cfg;
		unsigned char more[16];
	} big;
	struct rtl_ur_upload_config uc = { .script = program() };
	struct rtl_ur_upload *u = (struct rtl_ur_upload *)&uc;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_ur_upload_create(&u, &uc, &err), -EINVAL);
	cr_assert(u == NULL, "*out is NULL on failure");
	cr_assert(strstr(err.msg, "set .size = sizeof(struct rtl_ur_upload_config)"), "%s",
		  err.msg);
	/* An older program's smaller configuration: the rest is default. */
	uc.size = offsetof(struct rtl_ur_upload_config, ready_timeout_ns);
	cr_assert_eq(rtl_ur_upload_create(&u, &uc, &err), 0, "%s", err.msg);
	rtl_ur_upload_destroy(u);
	u = NULL;

	memset(&big, 0, sizeof(big));
	big.cfg.size = sizeof(big);
	big.cfg.script = program();
	cr_assert_eq(rtl_ur_upload_create(&u, &big.cfg, &err), 0, "%s", err.msg);
	rtl_ur_upload_destroy(u);
	big.more[3] = 1;
	cr_assert_eq(rtl_ur_upload_create(&u, &big.cfg, &err), -E2BIG);
	cr_assert(u == NULL);
	cr_assert(strstr(err.msg, "struct rtl_ur_upload_config"), "%s", err.msg);

	cr_assert_eq(rtl_ur_upload_create(NULL, &uc, &err), -EINVAL);
	cr_assert_eq(rtl_ur_upload_create(&u, NULL, &err), -EINVAL);
}

Test(ur_upload, a_missing_program_fails_the_create_naming_the_path_and_the_fix)
{
	struct rtl_ur_upload_config uc = { .size = sizeof(uc),
					   .script = "/nonexistent/rtloop_control.script" };
	struct rtl_ur_upload *u = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_ur_upload_create(&u, &uc, &err), -ENOENT);
	cr_assert(u == NULL);
	cr_assert(strstr(err.msg, "/nonexistent/rtloop_control.script"), "%s", err.msg);
	cr_assert(strstr(err.msg, "fix:"), "%s", err.msg);
}

/* The hook as the transport sees it: a table of this version, named, with
 * the outputs the readiness wait and the watch read. */
Test(ur_upload, the_hook_table_names_its_outputs)
{
	cr_assert_eq(rtl_ur_upload_hook.size, sizeof(struct rtl_rtde_transport_hook_ops));
	cr_assert_str_eq(rtl_ur_upload_hook.name, "upload");
	cr_assert(rtl_ur_upload_hook.connected && rtl_ur_upload_hook.frame &&
		  rtl_ur_upload_hook.finish);
	for (const char *f = "robot_mode\0safety_mode\0runtime_state\0"; *f; f += strlen(f) + 1)
		cr_assert(strstr(rtl_ur_upload_hook.outputs, f), "%s", f);
	cr_assert(strstr(rtl_ur_upload_hook.outputs, RTL_RTDE_CMD_FIELD_OUT_STATUS));
	cr_assert(strstr(rtl_ur_upload_hook.outputs, RTL_RTDE_CMD_FIELD_OUT_SEQ));
}
