// SPDX-License-Identifier: MIT
/*
 * The Robot API client of a librtloop built without libcurl
 * (-Drobot_api=disabled, or auto without libcurl's headers): the same
 * symbols as ur_robot_api.c, so a program links against either build, and
 * each call fails with -ENOTSUP and a sentence that names the build as the
 * cause and says what to do. rtl_ur_robot_api_create() is where a caller
 * meets it first (rtloop-arm, the upload's unlock and stop on PolyScope X);
 * no client exists, so the other calls can only be reached with NULL.
 *
 * The configuration's defaults and the JSON scanner need no HTTP and are
 * in every build (ur_robot_api_json.c).
 */
#include <errno.h>

#include <rtloop/ur_robot_api.h>

static int none(struct rtl_error *err)
{
	return rtl_error_set(err, -ENOTSUP,
			     "robot api: this librtloop was built without the Robot API "
			     "(-Drobot_api=disabled, libcurl): PolyScope X (controller version "
			     "10 and up) has no dashboard server, and its power, brakes, unlock "
			     "and program stop go through that API; fix: rebuild rtloop with "
			     "libcurl (Debian: apt install libcurl4-openssl-dev, then meson "
			     "setup -Drobot_api=enabled), or do these steps on the teach pendant");
}

RTL_API int rtl_ur_robot_api_create(struct rtl_ur_robot_api **out,
				    const struct rtl_ur_robot_api_config *cfg,
				    struct rtl_error *err)
{
	(void)cfg;
	if (out)
		*out = NULL;
	return none(err);
}

RTL_API void rtl_ur_robot_api_destroy(struct rtl_ur_robot_api *api)
{
	(void)api;
}

#define NONE(name)                                                                               \
	RTL_API int rtl_ur_robot_api_##name(struct rtl_ur_robot_api *api, struct rtl_error *err) \
	{                                                                                        \
		(void)api;                                                                       \
		return none(err);                                                                \
	}
#define NONE1(name, T)                                                         \
	RTL_API int rtl_ur_robot_api_##name(struct rtl_ur_robot_api *api, T a, \
					    struct rtl_error *err)             \
	{                                                                      \
		(void)api;                                                     \
		(void)a;                                                       \
		return none(err);                                              \
	}

NONE(power_on)
NONE(power_off)
NONE(brake_release)
NONE(unlock_protective_stop)
NONE1(robot_mode, enum rtl_ur_robot_mode *)
NONE1(safety_mode, enum rtl_ur_safety_status *)
NONE1(program_state, struct rtl_ur_program *)
NONE1(is_in_remote_control, bool *)
NONE1(version, struct rtl_ur_version *)
NONE1(load, const char *)
NONE(play)
NONE(pause)
NONE(stop)
