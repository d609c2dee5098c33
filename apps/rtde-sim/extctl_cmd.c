// SPDX-License-Identifier: MIT
/*
 * The script command thread and tool contact of the External Control
 * program (extctl.h; docs/rtde-sim.md, "The UR Client Library's External
 * Control").
 *
 * Script commands come on their own socket, 28 int32 each: the command's
 * number, then its arguments scaled by MULT_jointstate (the payload's
 * transition time by MULT_time). The thread takes them one by one, each
 * at once (none blocks): zero_ftsensor, set_payload, set_tcp, force mode
 * with its damping and gain scaling, its end, tool contact's start and
 * end. The friction settings only set variables the torque mode reads;
 * the tool voltage, gravity and the external F/T sensor have no model
 * here and end the program with a runtime exception that names them.
 *
 * Tool contact: while it is on, a force on the tool beyond CONTACT_FORCE
 * ends the motion (stopl(3)), moves the TCP back linearly to where the
 * contact began, and answers 0 on the script command socket; its end
 * without a contact answers 1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/rtde_req.h>

#include "controller.h"
#include "extctl.h"
#include "kin.h"
#include "sim.h"

/* The threshold of tool_contact() on the measured force [N]. */
#define CONTACT_FORCE 10.0

/* ---- script commands ------------------------------------------------------------------- */

static void unmodelled(struct sim *sim, struct ext *x, const char *name)
{
	sim_ext_unmodelled(sim, x->s[EXT_CMD].line, name, "script command");
}

/* A request that must succeed, as the URScript call it stands for. */
static bool must(struct sim *sim, struct ext *x, const char *name, int32_t id)
{
	int32_t why, st = sim_ext_answer(sim, id, &why);

	if (st != RTL_RTDE_REQ_STATE_FAILED)
		return true;
	sim_ext_fail(sim, x->s[EXT_CMD].line, "%s: %s", name,
		     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
	return false;
}

static void force_mode(struct sim *sim, struct ext *x, const int32_t *raw, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double a[RTL_RTDE_REQ_NARG] = { 0 };
	uint32_t flags = 0;
	int type;

	/* raw[k] is the script's raw_command[k + 1] */
	for (int i = 0; i < 6; i++)
		a[i] = raw[20 + i] / x->mult_js; /* force_limits */
	a[6] = raw[26] / x->mult_js;		 /* force_mode_set_damping */
	/* gain scaling only on e-Series (step time < 8 ms) */
	a[7] = x->dt < 0.008 ? raw[27] / x->mult_js : r->force_gain;
	if (!must(sim, x, "force_mode_set_damping",
		  sim_ext_request(sim, x, RTL_RTDE_REQ_FORCE_LIMITS, a, 0, now)))
		return;
	for (int i = 0; i < 6; i++) {
		a[i] = raw[1 + i] / x->mult_js;	     /* task frame */
		a[6 + i] = raw[13 + i] / x->mult_js; /* wrench */
		if (raw[7 + i] != 0)
			flags |= 1u << i; /* selection vector */
	}
	type = (int)lround(raw[19] / x->mult_js);
	if (type < 1 || type > 3) {
		sim_ext_fail(sim, x->s[EXT_CMD].line, "force_mode: type %d is not 1, 2 or 3", type);
		return;
	}
	flags |= (uint32_t)type << 8;
	must(sim, x, "force_mode", sim_ext_request(sim, x, RTL_RTDE_REQ_FORCE_MODE, a, flags, now));
}

/* The script command thread: every whole command that has arrived. */
void sim_ext_commands(struct sim *sim, struct ext *x, int64_t now)
{
	int32_t raw[EXT_CMD_INTS];
	double a[RTL_RTDE_REQ_NARG];

	while (sim_ext_alive(sim) && sim_ext_read(&x->s[EXT_CMD], raw, EXT_CMD_INTS)) {
		memset(a, 0, sizeof(a));
		sim_ctrl_model_stats(sim)->commands++;
		switch (raw[0]) {
		case CMD_ZERO_FTSENSOR:
			sim_ext_request(sim, x, RTL_RTDE_REQ_ZERO_FT_SENSOR, NULL, 0, now);
			break;
		case CMD_SET_PAYLOAD:
		case CMD_SET_TARGET_PAYLOAD:
			for (int i = 0; i < 4; i++)
				a[i] = raw[1 + i] / x->mult_js;
			if (!must(sim, x, "set_payload",
				  sim_ext_request(sim, x, RTL_RTDE_REQ_SET_PAYLOAD, a, 0, now)))
				return;
			if (raw[0] == CMD_SET_TARGET_PAYLOAD)
				sim_ext_text(
					sim,
					"set_target_payload: rtde-sim sets mass and centre of "
					"gravity; inertia and transition time are not modelled");
			break;
		case CMD_SET_TCP_OFFSET:
			for (int i = 0; i < 6; i++)
				a[i] = raw[1 + i] / x->mult_js;
			if (!must(sim, x, "set_tcp",
				  sim_ext_request(sim, x, RTL_RTDE_REQ_SET_TCP, a, 0, now)))
				return;
			break;
		case CMD_START_FORCE_MODE:
			force_mode(sim, x, raw, now);
			break;
		case CMD_END_FORCE_MODE:
			sim_ext_request(sim, x, RTL_RTDE_REQ_END_FORCE_MODE, NULL, 0, now);
			break;
		case CMD_START_TOOL_CONTACT:
			x->contact_running = true;
			break;
		case CMD_END_TOOL_CONTACT:
			if (x->mode != EXT_MODE_TOOL_IN_CONTACT)
				sim_ext_send_int(&x->s[EXT_CMD], CONTACT_CANCELED);
			x->contact_running = false;
			break;
		case CMD_SET_FRICTION_COMPENSATION:
		case CMD_SET_FRICTION_SCALES:
			/* the script only stores them for direct_torque(),
			 * which the model refuses (MODE_TORQUE) */
			break;
		case CMD_SET_TOOL_VOLTAGE:
			unmodelled(sim, x, "set_tool_voltage");
			return;
		case CMD_FT_RTDE_INPUT_ENABLE:
			unmodelled(sim, x, "ft_rtde_input_enable");
			return;
		case CMD_SET_GRAVITY:
			unmodelled(sim, x, "set_gravity");
			return;
		default:
			break; /* the script's if-chain ignores other numbers */
		}
	}
}

/* ---- tool contact ---------------------------------------------------------------------- */

void sim_ext_contact_step(struct sim *sim, struct ext *x, int64_t now)
{
	struct sim_robot *r = &sim->robot;
	double f = 0, a[RTL_RTDE_REQ_NARG] = { 0 };
	int32_t why;

	if (x->contact_phase == 1 && !x->stopping) {
		/* movel(q) to the joints at the first contact */
		sim_kin_forward_dh(&r->cfg.dh, x->contact_q, r->cfg.tcp_offset, a);
		x->contact_id = sim_ext_request(sim, x, RTL_RTDE_REQ_MOVE_L, a, 0, now);
		x->contact_phase = 2;
		return;
	}
	if (x->contact_phase == 2) {
		int32_t st = sim_ext_answer(sim, x->contact_id, &why);

		if (st == RTL_RTDE_REQ_STATE_FAILED) {
			sim_ext_fail(sim, 0, "movel: %s",
				     rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)why));
			return;
		}
		if (st == RTL_RTDE_REQ_STATE_DONE) {
			x->contact_phase = 0;
			sim_ext_send_int(&x->s[EXT_CMD], CONTACT_SUCCESS);
			sim_ext_text(sim, "tool contact detected");
		}
		return;
	}
	if (!x->contact_running || x->mode == EXT_MODE_TOOL_IN_CONTACT)
		return;
	for (int i = 0; i < 3; i++)
		f += (r->actual_TCP_force[i] - r->ft_bias[i]) *
		     (r->actual_TCP_force[i] - r->ft_bias[i]);
	if (sqrt(f) <= CONTACT_FORCE)
		return;
	/* tool_contact() found one: the motion ends, back to where it began */
	if (x->mode == EXT_MODE_FORWARD) {
		sim_ext_traj_kill(x);
		sim_ext_cleanup_request(x, now);
	} else if (x->mode == EXT_MODE_FREEDRIVE) {
		sim_ext_text(sim, "Leaving freedrive mode");
		sim_ext_request(sim, x, RTL_RTDE_REQ_END_TEACH_MODE, NULL, 0, now);
	}
	x->mode = EXT_MODE_TOOL_IN_CONTACT;
	memcpy(x->contact_q, r->actual_q, sizeof(x->contact_q));
	sim_ext_stop(x, 3.0); /* stopl(3) */
	x->contact_phase = 1;
}
