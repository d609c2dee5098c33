// SPDX-License-Identifier: MIT
/*
 * rtde-sim's controller around the arm (apps/rtde-sim/controller.h) as the
 * step function it is: explicit time, no sockets. Power, brakes, the
 * protective stop and its unlock delay, remote control, the program
 * comparison (the first differing line), the executor's gate on the
 * command registers, its frozen outputs, and the message ring.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/time.h>

#include "sim.h"

extern const char sim_control_program[];
extern const size_t sim_control_program_len;

#define MS (1000 * 1000LL)

static struct sim *booted(bool local)
{
	struct sim_opts o;
	struct sim *sim;
	int err = 0;

	sim_opts_default(&o);
	o.ctrl.boot = true;
	o.ctrl.local = local;
	o.ctrl.power_on_s = 0.1;
	o.ctrl.brake_release_s = 0.1;
	o.ctrl.unlock_delay_s = 1.0;
	sim = sim_new(&o, 0, &err);
	cr_assert(sim, "sim_new: %d", err);
	return sim;
}

/* Power on and release the brakes, by the clock. */
static void up(struct sim *sim, int64_t *now)
{
	cr_assert_eq(sim_ctrl_power_on(sim, *now), SIM_CTRL_OK);
	cr_assert_eq(sim_ctrl_brake_release(sim, *now), SIM_CTRL_OK);
	*now += 250 * MS;
	sim_ctrl_tick(sim, *now);
	cr_assert_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_RUNNING);
}

static enum sim_ctrl_result send_program(struct sim *sim, const char *text, int64_t now)
{
	return sim_ctrl_program(sim, 1, text, strlen(text), now);
}

/* The newest message of the ring, or NULL. */
static const struct sim_ctrl_msg *last_msg(const struct sim *sim)
{
	return sim_ctrl_msg_get(sim, sim->ctrl.msg_next - 1);
}

Test(sim_controller, boot_goes_power_off_power_on_idle_running_by_the_clock)
{
	struct sim *sim = booted(false);

	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_expect_eq(sim->robot.robot_mode, RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_expect_eq(sim->robot.robot_status_bits & 1u, 0);
	/* Brakes first: refused, powered off. */
	cr_expect_eq(sim_ctrl_brake_release(sim, 0), SIM_CTRL_POWERED_OFF);
	cr_expect_eq(sim_ctrl_power_on(sim, 0), SIM_CTRL_OK);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_POWER_ON);
	sim_ctrl_tick(sim, 99 * MS);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_POWER_ON);
	sim_ctrl_tick(sim, 100 * MS);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_IDLE);
	cr_expect_eq(sim->robot.robot_status_bits & 1u, 1u);
	cr_expect_eq(sim->robot.joint_mode[0], 255);
	cr_expect_eq(sim_ctrl_brake_release(sim, 100 * MS), SIM_CTRL_OK);
	sim_ctrl_tick(sim, 199 * MS);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_IDLE);
	sim_ctrl_tick(sim, 200 * MS);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_RUNNING);
	cr_expect_eq(sim->robot.joint_mode[0], 253);
	cr_expect_eq(sim->ctrl.stats.power_ons, 1);
	cr_expect_eq(sim->ctrl.stats.brake_releases, 1);
	sim_free(sim);
}

Test(sim_controller, local_control_refuses_what_would_move_or_start_anything)
{
	struct sim *sim = booted(true);

	cr_expect_eq(sim_ctrl_power_on(sim, 0), SIM_CTRL_NOT_REMOTE);
	cr_expect_eq(sim_ctrl_brake_release(sim, 0), SIM_CTRL_NOT_REMOTE);
	cr_expect_eq(sim_ctrl_load(sim, "rtloop_control.urp"), SIM_CTRL_NOT_REMOTE);
	cr_expect_eq(sim_ctrl_play(sim, 0), SIM_CTRL_NO_PROGRAM);
	cr_expect_eq(sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_expect_eq(sim->ctrl.stats.power_ons, 0);
	/* Switched to remote on the pendant: accepted. */
	sim_ctrl_set_remote(sim, true);
	cr_expect_eq(sim_ctrl_power_on(sim, 0), SIM_CTRL_OK);
	sim_free(sim);
}

Test(sim_controller, the_rtloop_program_starts_the_executor_and_nothing_else_does)
{
	struct sim *sim = booted(false);
	char *changed;
	int64_t now = 0;

	/* Before power on: refused, with a message that says why. */
	cr_expect_eq(send_program(sim, sim_control_program, 0), SIM_CTRL_POWERED_OFF);
	cr_assert(last_msg(sim));
	cr_expect_eq(last_msg(sim)->kind, SIM_MSG_KEY);
	cr_expect(strstr(last_msg(sim)->text, "powered off") != NULL, "%s", last_msg(sim)->text);
	cr_expect_not(sim_ctrl_executing(&sim->ctrl));
	up(sim, &now);

	/* Line 40 (in the def) changed: a runtime exception naming line 40. */
	changed = strdup(sim_control_program);
	cr_assert(changed);
	{
		char *p = changed;

		for (int l = 1; l < 40; l++)
			p = strchr(p, '\n') + 1;
		p[0] = p[0] == '#' ? '%' : '#';
	}
	cr_expect_eq(send_program(sim, changed, now), SIM_CTRL_NOT_RTLOOP);
	cr_assert(last_msg(sim));
	cr_expect_eq(last_msg(sim)->kind, SIM_MSG_RUNTIME_EXCEPTION);
	cr_expect_eq(last_msg(sim)->line, 40);
	cr_expect(strstr(last_msg(sim)->text, "line 40") != NULL, "%s", last_msg(sim)->text);
	cr_expect_eq(sim->ctrl.stats.others, 1);
	cr_expect_str_eq(sim->ctrl.others[0].name, "rtloop_control");
	cr_expect_eq(sim->ctrl.others[0].size, strlen(changed));
	cr_expect_not(sim_ctrl_executing(&sim->ctrl));
	free(changed);

	/* Another program altogether: named, line 1, recorded. */
	cr_expect_eq(send_program(sim, "def other():\n  textmsg(\"hi\")\nend\n", now),
		     SIM_CTRL_NOT_RTLOOP);
	cr_expect_eq(last_msg(sim)->line, 1);
	cr_expect_str_eq(sim->ctrl.others[1].name, "other");
	cr_expect_str_eq(sim->ctrl.others[1].first_line, "def other():");

	/* The rtloop program, with trailing blank lines: the executor runs. */
	{
		size_t n = sim_control_program_len;
		char *t = malloc(n + 4);

		cr_assert(t);
		memcpy(t, sim_control_program, n);
		memcpy(t + n, "\n\n \n", 4);
		cr_expect_eq(sim_ctrl_program(sim, 1, t, n + 4, now), SIM_CTRL_OK);
		free(t);
	}
	cr_expect(sim_ctrl_executing(&sim->ctrl));
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_PLAYING);
	cr_expect_eq(sim->ctrl.stats.rtloop_started, 1);
	sim_free(sim);
}

/* The protective stop: the program stops, the unlock is refused within the
 * delay, and the unlock does not restart the program. */
Test(sim_controller, a_protective_stop_holds_until_unlocked_after_the_delay)
{
	struct sim *sim = booted(false);
	int64_t now = 0;

	up(sim, &now);
	cr_assert_eq(send_program(sim, sim_control_program, now), SIM_CTRL_OK);
	cr_expect_eq(sim_ctrl_unlock(sim, now), SIM_CTRL_NOT_STOPPED);
	sim_ctrl_protective_stop(sim, now, "test");
	cr_expect_eq(sim->ctrl.safety_mode, RTL_UR_SAFETY_PROTECTIVE_STOP);
	cr_expect_eq(sim->robot.safety_mode, RTL_UR_SAFETY_PROTECTIVE_STOP);
	cr_expect_not(sim_ctrl_executing(&sim->ctrl));
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	cr_expect_eq(last_msg(sim)->kind, SIM_MSG_SAFETY);
	/* Nothing starts while stopped. */
	cr_expect_eq(send_program(sim, sim_control_program, now), SIM_CTRL_PROTECTIVE_STOP);
	cr_expect_eq(sim_ctrl_brake_release(sim, now), SIM_CTRL_PROTECTIVE_STOP);
	cr_expect_eq(sim_ctrl_unlock(sim, now + 999 * MS), SIM_CTRL_TOO_EARLY);
	cr_expect_eq(sim_ctrl_unlock(sim, now + 1000 * MS), SIM_CTRL_OK);
	cr_expect_eq(sim->ctrl.safety_mode, RTL_UR_SAFETY_NORMAL);
	cr_expect_not(sim_ctrl_executing(&sim->ctrl));
	cr_expect_eq(send_program(sim, sim_control_program, now + 1000 * MS), SIM_CTRL_OK);
	cr_expect_eq(sim->ctrl.stats.protective_stops, 1);
	cr_expect_eq(sim->ctrl.stats.unlocks, 1);
	sim_free(sim);
}

/* Without the program the command registers are written but not obeyed,
 * and the executor's outputs keep the last run's values. */
Test(sim_controller, without_the_program_commands_are_ignored_and_the_outputs_frozen)
{
	struct sim *sim = booted(false);
	struct sim_robot_cmd cmd = { .mode = RTL_RTDE_CMD_SPEEDJ, .seq = 7 };
	union rtl_rtde_value *status, *seq;
	int64_t now = 0;

	up(sim, &now);
	cr_assert_eq(send_program(sim, sim_control_program, now), SIM_CTRL_OK);
	cmd.param[0] = 0.2;
	cr_assert_eq(sim_robot_command(&sim->robot, &cmd, now), 0);
	for (int i = 0; i < 20; i++)
		sim_cycle(sim, now + i * 2 * MS, false);
	status = sim_value(sim, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	seq = sim_value(sim, RTL_RTDE_CMD_FIELD_OUT_SEQ);
	cr_assert(status && seq);
	cr_expect_eq(status->i32 & RTL_RTDE_CMD_STATUS_READY, RTL_RTDE_CMD_STATUS_READY);
	cr_expect_eq(seq->i32, 7);
	cr_expect_gt(sim->robot.actual_qd[0], 0.0);

	/* The program stops (dashboard stop): the arm comes to rest, the
	 * outputs stay as they were. */
	cr_expect_eq(sim_ctrl_stop(sim, now), SIM_CTRL_OK);
	for (int i = 20; i < 400; i++)
		sim_cycle(sim, now + i * 2 * MS, false);
	cr_expect(sim_robot_at_rest(&sim->robot));
	cr_expect_eq(status->i32 & RTL_RTDE_CMD_STATUS_READY, RTL_RTDE_CMD_STATUS_READY);
	cr_expect_eq(seq->i32, 7);
	sim_free(sim);
}

Test(sim_controller, the_message_ring_counts_what_it_overwrote)
{
	struct sim *sim = booted(false);
	struct sim_ctrl_msg m = { .kind = SIM_MSG_TEXT };

	for (int i = 0; i < SIM_CTRL_MSGS + 5; i++) {
		snprintf(m.text, sizeof(m.text), "message %d", i);
		sim_ctrl_message(sim, &m);
	}
	cr_expect_eq(sim->ctrl.msgs_lost, 5);
	cr_expect_null(sim_ctrl_msg_get(sim, 5));
	cr_assert_not_null(sim_ctrl_msg_get(sim, 6));
	cr_expect_str_eq(sim_ctrl_msg_get(sim, 6)->text, "message 5");
	cr_expect_null(sim_ctrl_msg_get(sim, sim->ctrl.msg_next));
	sim_free(sim);
}
