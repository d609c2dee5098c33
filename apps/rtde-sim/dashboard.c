// SPDX-License-Identifier: MIT
/*
 * The dashboard server of rtde-sim (port 29999). Stub: greets and closes.
 */
#include "ports.h"

static int dash_open(struct rtl_sim *sim, struct rtl_sim_conn *c, int64_t now)
{
	(void)sim;
	(void)now;
	return rtl_sim_conn_printf(c, "Connected: Universal Robots Dashboard Server\n");
}

const struct rtl_sim_port_ops rtl_sim_dashboard_ops = {
	.name = "dashboard",
	.open = dash_open,
};
