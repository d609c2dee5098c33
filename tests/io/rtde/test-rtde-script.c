// SPDX-License-Identifier: MIT
/*
 * rtl_rtde_cmd_script_path(): $RTLOOP_CONTROL_SCRIPT first, else the
 * installed copy; an unreadable file is an error naming the path and the
 * fix.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/rtde_cmd.h>

static void fini(void)
{
	unsetenv(RTL_RTDE_CMD_SCRIPT_ENV);
}

TestSuite(rtde_script, .fini = fini);

Test(rtde_script, the_override_names_a_readable_file)
{
	char path[] = "/tmp/rtl-script-XXXXXX", out[256];
	struct rtl_error err = { 0 };
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	setenv(RTL_RTDE_CMD_SCRIPT_ENV, path, 1);
	cr_expect_eq(rtl_rtde_cmd_script_path(out, sizeof(out), &err), 0, "%s", err.msg);
	cr_expect_str_eq(out, path);
	unlink(path);
	cr_expect_eq(rtl_rtde_cmd_script_path(out, sizeof(out), &err), -ENOENT);
	cr_expect(strstr(err.msg, "(from $RTLOOP_CONTROL_SCRIPT) cannot be read: No such file or "
				  "directory; fix: point RTLOOP_CONTROL_SCRIPT at the file"),
		  "%s", err.msg);
}

Test(rtde_script, without_the_override_the_installed_copy)
{
	char out[256];
	struct rtl_error err = { 0 };
	const char *inst = rtl_rtde_cmd_script_installed();
	int ret;

	unsetenv(RTL_RTDE_CMD_SCRIPT_ENV);
	cr_expect(strstr(inst, "/rtloop/rtloop_control.script") != NULL, "%s", inst);
	cr_expect_eq(inst[0], '/', "an absolute path: %s", inst);
	ret = rtl_rtde_cmd_script_path(out, sizeof(out), &err);
	cr_expect_str_eq(out, inst);
	if (access(inst, R_OK) == 0) {
		cr_expect_eq(ret, 0, "%s", err.msg);
	} else {
		cr_expect_eq(ret, -errno);
		cr_expect(strstr(err.msg, "the installed copy") && strstr(err.msg, "meson install"),
			  "%s", err.msg);
	}
	cr_expect_eq(rtl_rtde_cmd_script_path(out, 8, &err), -ENAMETOOLONG);
	cr_expect_eq(rtl_rtde_cmd_script_path(NULL, 8, &err), -EINVAL);
}

Test(rtde_script, the_generated_program_is_found_through_the_override)
{
	char out[512];
	struct rtl_error err = { 0 };
	const char *gen = getenv("RTL_TEST_CONTROL_SCRIPT");
	FILE *f;
	char line[256];
	bool ready = false;

	cr_assert_not_null(gen, "meson passes the generated program's path");
	setenv(RTL_RTDE_CMD_SCRIPT_ENV, gen, 1);
	cr_assert_eq(rtl_rtde_cmd_script_path(out, sizeof(out), &err), 0, "%s", err.msg);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		ready = ready || strstr(line, "def rtloop_control():") != NULL;
	fclose(f);
	cr_expect(ready, "the file is the program");
}
