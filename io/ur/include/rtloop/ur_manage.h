/* SPDX-License-Identifier: MIT */
/*
 * rtl_ur_manage_ops: the calls that bring a UR arm up and down, as both of
 * its management interfaces offer them: the dashboard server (CB3,
 * e-Series; <rtloop/ur_dashboard.h>) and the Robot API (PolyScope X;
 * <rtloop/ur_robot_api.h>). One table per interface, over the client as a
 * void pointer, so a caller written once (rtloop-arm, the RTDE
 * transport's upload option) drives either.
 *
 * The calls keep their client's contract: 0 or -errno with @e filled;
 * unlock() returns -EAGAIN while the controller refuses it as too early
 * after the stop (its 5 s), on both interfaces. A call the interface does
 * not have is answered as the table says (the Robot API closes the safety
 * popup with the unlock: 0).
 *
 * Thread and RT safety: the clients'. Nothing here is RT-safe.
 */
#ifndef RTLOOP_UR_MANAGE_H
#define RTLOOP_UR_MANAGE_H

#include <stdbool.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/ur_dashboard.h>

RTL_BEGIN_DECLS

struct rtl_ur_manage_ops {
	size_t size;	  /* sizeof the library's table: RTL_OPS_HAS() tells a call */
	const char *name; /* "dashboard", "Robot API" */
	int (*robot_mode)(void *h, enum rtl_ur_robot_mode *m, struct rtl_error *e);
	int (*safety)(void *h, enum rtl_ur_safety_status *s, struct rtl_error *e);
	int (*program_state)(void *h, struct rtl_ur_program *p, struct rtl_error *e);
	int (*remote)(void *h, bool *remote, struct rtl_error *e);
	int (*power_on)(void *h, struct rtl_error *e);
	int (*power_off)(void *h, struct rtl_error *e);
	int (*brake_release)(void *h, struct rtl_error *e);
	int (*unlock)(void *h, struct rtl_error *e);
	int (*close_safety_popup)(void *h, struct rtl_error *e);
	int (*stop)(void *h, struct rtl_error *e);
	void (*close)(void *h);
};

/* Over a struct rtl_ur_dashboard * and a struct rtl_ur_robot_api *. */
RTL_API extern const struct rtl_ur_manage_ops rtl_ur_dashboard_manage;
RTL_API extern const struct rtl_ur_manage_ops rtl_ur_robot_api_manage;

RTL_END_DECLS

#endif /* RTLOOP_UR_MANAGE_H */
