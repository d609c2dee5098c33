// SPDX-License-Identifier: MIT
/*
 * The dashboard's and the Robot API's calls as one table each (see
 * <rtloop/ur_manage.h>).
 */
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_manage.h>
#include <rtloop/ur_robot_api.h>

#define WRAP(name, fn, T)                             \
	static int name(void *h, struct rtl_error *e) \
	{                                             \
		return fn((T *)h, e);                 \
	}
#define WRAP1(name, fn, T, A)                              \
	static int name(void *h, A a, struct rtl_error *e) \
	{                                                  \
		return fn((T *)h, a, e);                   \
	}

WRAP1(dash_mode, rtl_ur_dashboard_robot_mode, struct rtl_ur_dashboard, enum rtl_ur_robot_mode *)
WRAP1(dash_safety, rtl_ur_dashboard_safety_status, struct rtl_ur_dashboard,
      enum rtl_ur_safety_status *)
WRAP1(dash_program, rtl_ur_dashboard_program_state, struct rtl_ur_dashboard,
      struct rtl_ur_program *)
WRAP1(dash_remote, rtl_ur_dashboard_is_in_remote_control, struct rtl_ur_dashboard, bool *)
WRAP(dash_power_on, rtl_ur_dashboard_power_on, struct rtl_ur_dashboard)
WRAP(dash_power_off, rtl_ur_dashboard_power_off, struct rtl_ur_dashboard)
WRAP(dash_brake_release, rtl_ur_dashboard_brake_release, struct rtl_ur_dashboard)
WRAP(dash_unlock, rtl_ur_dashboard_unlock_protective_stop, struct rtl_ur_dashboard)
WRAP(dash_close_safety_popup, rtl_ur_dashboard_close_safety_popup, struct rtl_ur_dashboard)
WRAP(dash_stop, rtl_ur_dashboard_stop, struct rtl_ur_dashboard)

static void dash_close(void *h)
{
	rtl_ur_dashboard_destroy(h);
}

RTL_API const struct rtl_ur_manage_ops rtl_ur_dashboard_manage = {
	.size = sizeof(struct rtl_ur_manage_ops),
	.name = "dashboard",
	.robot_mode = dash_mode,
	.safety = dash_safety,
	.program_state = dash_program,
	.remote = dash_remote,
	.power_on = dash_power_on,
	.power_off = dash_power_off,
	.brake_release = dash_brake_release,
	.unlock = dash_unlock,
	.close_safety_popup = dash_close_safety_popup,
	.stop = dash_stop,
	.close = dash_close,
};

WRAP1(api_mode, rtl_ur_robot_api_robot_mode, struct rtl_ur_robot_api, enum rtl_ur_robot_mode *)
WRAP1(api_safety, rtl_ur_robot_api_safety_mode, struct rtl_ur_robot_api,
      enum rtl_ur_safety_status *)
WRAP1(api_program, rtl_ur_robot_api_program_state, struct rtl_ur_robot_api, struct rtl_ur_program *)
WRAP1(api_remote, rtl_ur_robot_api_is_in_remote_control, struct rtl_ur_robot_api, bool *)
WRAP(api_power_on, rtl_ur_robot_api_power_on, struct rtl_ur_robot_api)
WRAP(api_power_off, rtl_ur_robot_api_power_off, struct rtl_ur_robot_api)
WRAP(api_brake_release, rtl_ur_robot_api_brake_release, struct rtl_ur_robot_api)
WRAP(api_unlock, rtl_ur_robot_api_unlock_protective_stop, struct rtl_ur_robot_api)
WRAP(api_stop, rtl_ur_robot_api_stop, struct rtl_ur_robot_api)

/* PolyScope X closes the safety popup with the unlock (and before 10.14
 * has no endpoint for it). */
static int api_close_safety_popup(void *h, struct rtl_error *e)
{
	(void)h;
	(void)e;
	return 0;
}

static void api_close(void *h)
{
	rtl_ur_robot_api_destroy(h);
}

RTL_API const struct rtl_ur_manage_ops rtl_ur_robot_api_manage = {
	.size = sizeof(struct rtl_ur_manage_ops),
	.name = "Robot API",
	.robot_mode = api_mode,
	.safety = api_safety,
	.program_state = api_program,
	.remote = api_remote,
	.power_on = api_power_on,
	.power_off = api_power_off,
	.brake_release = api_brake_release,
	.unlock = api_unlock,
	.close_safety_popup = api_close_safety_popup,
	.stop = api_stop,
	.close = api_close,
};
