// SPDX-License-Identifier: MIT
/*
 * The primary (30001), secondary (30002) and realtime (30003) script ports
 * of rtde-sim. Stub: accepts connections, ignores what arrives.
 */
#include "ports.h"

const struct rtl_sim_port_ops rtl_sim_primary_ops = { .name = "primary" };
const struct rtl_sim_port_ops rtl_sim_secondary_ops = { .name = "secondary" };
const struct rtl_sim_port_ops rtl_sim_realtime_ops = { .name = "realtime" };
