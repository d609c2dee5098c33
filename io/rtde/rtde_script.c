// SPDX-License-Identifier: MIT
/*
 * Where rtloop_control.script is at run time: see <rtloop/rtde_cmd.h>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/error.h>
#include <rtloop/rtde_cmd.h>

#ifndef RTL_DATADIR
#error "RTL_DATADIR: the build passes <prefix>/<datadir>"
#endif

RTL_API const char *rtl_rtde_cmd_script_installed(void)
{
	return RTL_DATADIR "/rtloop/" RTL_RTDE_CMD_SCRIPT_NAME;
}

RTL_API int rtl_rtde_cmd_script_path(char *out, size_t len, struct rtl_error *err)
{
	const char *env = getenv(RTL_RTDE_CMD_SCRIPT_ENV);
	const char *path = env && env[0] ? env : rtl_rtde_cmd_script_installed();
	int n;

	if (!out || !len)
		return rtl_error_set(err, -EINVAL,
				     "rtloop_control.script: nowhere to put its path");
	n = snprintf(out, len, "%s", path);
	if (n < 0 || (size_t)n >= len)
		return rtl_error_set(err, -ENAMETOOLONG,
				     "rtloop_control.script: the path %s is longer than %zu bytes",
				     path, len - 1);
	if (access(path, R_OK) == 0)
		return 0;
	n = -errno;
	if (env && env[0])
		return rtl_error_set(err, n,
				     "rtloop_control.script: %s (from $" RTL_RTDE_CMD_SCRIPT_ENV
				     ") cannot be read: %s; fix: point " RTL_RTDE_CMD_SCRIPT_ENV
				     " at the file, or unset it to use the installed %s",
				     path, strerror(-n), rtl_rtde_cmd_script_installed());
	return rtl_error_set(
		err, n,
		"rtloop_control.script: the installed copy %s cannot be read: %s; "
		"fix: meson install rtloop, or set " RTL_RTDE_CMD_SCRIPT_ENV
		" to the generated file (build/io/rtde/script/" RTL_RTDE_CMD_SCRIPT_NAME
		" in a build tree)",
		path, strerror(-n));
}
