/* SPDX-License-Identifier: MIT */
/*
 * The client configurations the client harness (fuzz-client.c) picks from
 * and gen-seeds.c records a conversation with rtde-sim for, so that every
 * seed of the client harness is a whole, valid controller stream for the
 * configuration its byte 0 selects.
 */
#ifndef RTL_FUZZ_CONFIGS_H
#define RTL_FUZZ_CONFIGS_H

#include <rtloop/rtde_client.h>

/* Byte 0 % FUZZ_CLIENT_CONFIGS of a client input picks one. */
#define FUZZ_CLIENT_CONFIGS 4

static const struct rtl_rtde_client_config fuzz_client_configs[FUZZ_CLIENT_CONFIGS] = {
	{ .size = sizeof(struct rtl_rtde_client_config),
	  .outputs = "timestamp,actual_q,actual_TCP_pose,robot_mode" },
	{ .size = sizeof(struct rtl_rtde_client_config),
	  .outputs = "timestamp,control_step,actual_qd,output_int_register_0",
	  .inputs = { "input_double_register_30,speed_slider_mask",
		      "input_int_register_30,input_bit_register_70" },
	  .frequency = 125 },
	{ .size = sizeof(struct rtl_rtde_client_config),
	  .outputs = "timestamp,runtime_state,actual_digital_output_bits",
	  .inputs = { "speed_slider_fraction" },
	  .protocol = 1 },
	{ .size = sizeof(struct rtl_rtde_client_config),
	  .outputs = "timestamp,actual_q",
	  .inputs = { "input_double_register_31" },
	  .frequency = 250,
	  .protocol = 2,
	  .flags = RTL_RTDE_CLIENT_NO_START },
};

#endif /* RTL_FUZZ_CONFIGS_H */
