// SPDX-License-Identifier: MIT
/*
 * rtl__name_of() (<rtloop/sized.h>), the checked lookup behind every
 * rtl_<module>_<enum>_name(): the fallback for a negative value, one past
 * the table and a hole; and, for the enums whose switch became a table,
 * each value's name as the switch returned it (the strings are written
 * out here, not taken from the tables, so a changed one fails).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include <rtloop/doctor.h>
#include <rtloop/log.h>
#include <rtloop/motion.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/sized.h>
#include <rtloop/udp.h>
#include <rtloop/ur_dashboard.h>

static const char *const holey[] = { [1] = "one", [3] = "three" };

Test(names, lookup_in_range)
{
	cr_assert_str_eq(RTL__NAME_OF(holey, 1, "?"), "one");
	cr_assert_str_eq(RTL__NAME_OF(holey, 3, "?"), "three");
	cr_assert_eq(sizeof(holey) / sizeof(holey[0]), 4);
}

Test(names, holes_negatives_and_past_the_end)
{
	cr_assert_str_eq(RTL__NAME_OF(holey, 0, "?"), "?");
	cr_assert_str_eq(RTL__NAME_OF(holey, 2, "fallback"), "fallback");
	cr_assert_str_eq(RTL__NAME_OF(holey, -1, "?"), "?");
	cr_assert_str_eq(RTL__NAME_OF(holey, LONG_MIN, "?"), "?");
	cr_assert_str_eq(RTL__NAME_OF(holey, 4, "?"), "?");
	cr_assert_str_eq(RTL__NAME_OF(holey, LONG_MAX, "?"), "?");
	cr_assert_null(RTL__NAME_OF(holey, 4, NULL));
	cr_assert_str_eq(rtl__name_of(holey, 2, 3, "?"), "?", "n bounds the lookup");
	cr_assert_str_eq(rtl__name_of(NULL, 0, 0, "?"), "?");
}

#define EQ(got, want) cr_assert_str_eq(got, want, "%s", #got)

Test(names, udp_type)
{
	EQ(rtl_udp_type_name(RTL_UDP_HELLO), "hello");
	EQ(rtl_udp_type_name(RTL_UDP_WELCOME), "welcome");
	EQ(rtl_udp_type_name(RTL_UDP_STATE), "state");
	EQ(rtl_udp_type_name(RTL_UDP_COMMAND), "command");
	EQ(rtl_udp_type_name(RTL_UDP_BYE), "bye");
	EQ(rtl_udp_type_name(RTL_UDP_ALARM), "alarm");
	EQ(rtl_udp_type_name(RTL_UDP_LIMITS), "limits");
	EQ(rtl_udp_type_name((enum rtl_udp_type)0), "?");
	EQ(rtl_udp_type_name((enum rtl_udp_type)8), "?");
	EQ(rtl_udp_type_name((enum rtl_udp_type) - 1), "?");
}

Test(names, udp_mode)
{
	static const char *const want[] = {
		"none", "speedj", "speedl", "servoj", "servol", "stop"
	};

	for (int m = 0; m < RTL_UDP_MODE_COUNT; m++)
		EQ(rtl_udp_mode_name((enum rtl_udp_mode)m), want[m]);
	EQ(rtl_udp_mode_name((enum rtl_udp_mode)RTL_UDP_MODE_COUNT), "?");
	EQ(rtl_udp_mode_name((enum rtl_udp_mode) - 1), "?");
}

Test(names, motion_mode_and_event)
{
	EQ(rtl_motion_mode_name(RTL_MOTION_IDLE), "idle");
	EQ(rtl_motion_mode_name(RTL_MOTION_SPEED_CARTESIAN), "speed-cartesian");
	EQ(rtl_motion_mode_name(RTL_MOTION_SPEED_JOINT), "speed-joint");
	EQ(rtl_motion_mode_name(RTL_MOTION_SERVO_CARTESIAN), "servo-cartesian");
	EQ(rtl_motion_mode_name(RTL_MOTION_SERVO_JOINT), "servo-joint");
	EQ(rtl_motion_mode_name(RTL_MOTION_STOPPING), "stopping");
	EQ(rtl_motion_mode_name((enum rtl_motion_mode)6), "?");
	EQ(rtl_motion_mode_name((enum rtl_motion_mode) - 1), "?");
	EQ(rtl_motion_event_name(RTL_MOTION_EV_TIMEOUT), "timeout");
	EQ(rtl_motion_event_name(RTL_MOTION_EV_LOSS), "loss");
	EQ(rtl_motion_event_name(RTL_MOTION_EV_LIMIT), "limit");
	EQ(rtl_motion_event_name(RTL_MOTION_EV_STOPPED), "stopped");
	EQ(rtl_motion_event_name((enum rtl_motion_event)RTL_MOTION_EV_COUNT), "?");
	EQ(rtl_motion_event_name((enum rtl_motion_event) - 1), "?");
}

Test(names, log_level)
{
	EQ(rtl_log_level_name(RTL_LOG_ERROR), "error");
	EQ(rtl_log_level_name(RTL_LOG_WARN), "warning");
	EQ(rtl_log_level_name(RTL_LOG_INFO), "info");
	EQ(rtl_log_level_name(RTL_LOG_DEBUG), "debug");
	EQ(rtl_log_level_name((enum rtl_log_level)4), "unknown");
	EQ(rtl_log_level_name((enum rtl_log_level) - 1), "unknown");
}

Test(names, doctor_verdict_and_rtde_line)
{
	EQ(rtl_doctor_verdict_name(RTL_DOCTOR_OK), "ok");
	EQ(rtl_doctor_verdict_name(RTL_DOCTOR_WARN), "warn");
	EQ(rtl_doctor_verdict_name(RTL_DOCTOR_BAD), "bad");
	EQ(rtl_doctor_verdict_name((enum rtl_doctor_verdict)3), "unknown");
	EQ(rtl_rtde_line_name(RTL_RTDE_LINE_CB3), "CB3");
	EQ(rtl_rtde_line_name(RTL_RTDE_LINE_E_SERIES), "e-Series");
	EQ(rtl_rtde_line_name(RTL_RTDE_LINE_POLYSCOPE_X), "PolyScope X");
	EQ(rtl_rtde_line_name(RTL_RTDE_LINE_COUNT), "?");
	EQ(rtl_rtde_line_name((enum rtl_rtde_line) - 1), "?");
}

Test(names, ur_offsets_and_holes)
{
	EQ(rtl_ur_robot_mode_name(RTL_UR_ROBOT_MODE_NO_CONTROLLER), "NO_CONTROLLER");
	EQ(rtl_ur_robot_mode_name(RTL_UR_ROBOT_MODE_DISCONNECTED), "DISCONNECTED");
	EQ(rtl_ur_robot_mode_name(RTL_UR_ROBOT_MODE_UPDATING_FIRMWARE), "UPDATING_FIRMWARE");
	EQ(rtl_ur_robot_mode_name((enum rtl_ur_robot_mode) - 2), "?");
	EQ(rtl_ur_robot_mode_name((enum rtl_ur_robot_mode)9), "?");
	EQ(rtl_ur_safety_status_name((enum rtl_ur_safety_status)0), "?");
	EQ(rtl_ur_safety_status_name(RTL_UR_SAFETY_NORMAL), "NORMAL");
	EQ(rtl_ur_safety_status_name(RTL_UR_SAFETY_SYSTEM_THREE_POSITION_ENABLING_STOP),
	   "SYSTEM_THREE_POSITION_ENABLING_STOP");
	EQ(rtl_ur_safety_status_name((enum rtl_ur_safety_status)14), "?");
	EQ(rtl_ur_program_state_name(RTL_UR_PROGRAM_PAUSED), "PAUSED");
	EQ(rtl_ur_program_state_name((enum rtl_ur_program_state)3), "?");
}
