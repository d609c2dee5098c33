// SPDX-License-Identifier: MIT
/*
 * The names of the requests' kinds and reasons (<rtloop/rtde_req.h>), in a
 * file of their own: rtde-sim's program models name a failed request by
 * its reason without the transport the rest of rtde_req.c needs.
 */
#include <rtloop/rtde_req.h>
#include <rtloop/sized.h>

/* In the enum's order: its values are 0 .. RTL_RTDE_REQ_REASON_COUNT - 1. */
static const char *const reason_names[] = { "ok",	   "bad argument",    "unreachable",
					    "joint limit", "protective stop", "interrupted",
					    "no solution", "unknown kind",    "path full",
					    "watchdog",	   "not allowed now", "no contact" };
_Static_assert(sizeof(reason_names) / sizeof(reason_names[0]) == RTL_RTDE_REQ_REASON_COUNT,
	       "a name per value");

/* In the enum's order: its values are 0 .. RTL_RTDE_REQ_KIND_COUNT - 1. */
static const char *const kind_names[] = { "none",
					  "move_j",
					  "move_l",
					  "stop_move",
					  "path_add",
					  "force_mode",
					  "force_limits",
					  "end_force_mode",
					  "teach_mode",
					  "end_teach_mode",
					  "zero_ft_sensor",
					  "set_payload",
					  "set_tcp",
					  "forward_kinematics",
					  "inverse_kinematics",
					  "move_until_contact" };
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == RTL_RTDE_REQ_KIND_COUNT,
	       "a name per value");

RTL_API const char *rtl_rtde_req_reason_name(enum rtl_rtde_req_reason reason)
{
	return RTL__NAME_OF(reason_names, reason, "?");
}

RTL_API const char *rtl_rtde_req_kind_name(enum rtl_rtde_req_kind kind)
{
	return RTL__NAME_OF(kind_names, kind, "?");
}
