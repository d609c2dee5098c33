// SPDX-License-Identifier: MIT
/*
 * The UR Client Library's External Control program (programs.h): not
 * modelled yet; recognises nothing, so the program is answered as any
 * other program rtde-sim cannot run.
 */
#include <stddef.h>

#include "programs.h"

static bool recognise(const char *text, size_t len)
{
	(void)text;
	(void)len;
	return false;
}

const struct sim_prog_ops sim_prog_extctl = {
	.name = "external_control",
	.recognise = recognise,
};
