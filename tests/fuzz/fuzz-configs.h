/* SPDX-License-Identifier: MIT */
/*
 * The client configurations the client harness (fuzz-client.c) picks from
 * and gen-seeds.c records a conversation with rtde-sim for, so that every
 * seed of the client harness is a whole, valid controller stream for the
 * configuration its byte 0 selects.
 */
#ifndef RTL_FUZZ_CONFIGS_H
#define RTL_FUZZ_CONFIGS_H

#include <stdint.h>

/* Byte 0 % FUZZ_CLIENT_CONFIGS of a client input picks one. */
#define FUZZ_CLIENT_CONFIGS 4

static const struct {
	const char *outputs;
	const char *inputs[3];
	double frequency;
	uint16_t protocol;
	unsigned flags;
} fuzz_client_configs[FUZZ_CLIENT_CONFIGS] = {
	{ "timestamp,actual_q,actual_TCP_pose,robot_mode", { NULL }, 0, 0, 0 },
	{ "timestamp,control_step,actual_qd,output_int_register_0",
	  { "input_double_register_30,speed_slider_mask",
	    "input_int_register_30,input_bit_register_70" },
	  125,
	  0,
	  0 },
	{ "timestamp,runtime_state,actual_digital_output_bits",
	  { "speed_slider_fraction" },
	  0,
	  1,
	  0 },
	{ "timestamp,actual_q", { "input_double_register_31" }, 250, 2, 1u /* NO_START */ },
};

#endif /* RTL_FUZZ_CONFIGS_H */
