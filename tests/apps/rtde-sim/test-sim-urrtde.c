// SPDX-License-Identifier: MIT
/*
 * The model of ur_rtde's control script (apps/rtde-sim/urrtde.c) as a step
 * function: explicit time, registers written as ur_rtde's RTDE client
 * writes them, no sockets. The program text here carries the marks by
 * which the model knows ur_rtde's script (its "loaded" message with the
 * release stamp, rtde_cmd(), process_cmd(), the injected register offset
 * and path), and nothing else of it; ur_rtde's own script runs against
 * rtde-sim in the peers suite (tests/peers/).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>

#include "controller.h"
#include "sim.h"

#define MS (1000 * 1000LL)
#define PERIOD (2 * MS)

/* The marks of ur_rtde 1.5.8's script, with @offset injected as ur_rtde
 * injects it (after the comment that ends the line) and @path in
 * exec_move_path(). */
static char *program(const char *stamp, int offset, const char *path)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "def rtde_control():\n"
		 "    global reg_offset_float = # float register offset\n%d\n"
		 "    global reg_offset_int = # int register offset\n%d\n"
		 "    def exec_move_path():\n"
		 "        textmsg(\"exec_move_path\")\n"
		 "        # inject move path\n%s"
		 "    end\n"
		 "    def rtde_cmd():\n"
		 "      cmd = read_input_integer_reg(0)\n"
		 "      return cmd\n"
		 "    end\n"
		 "    def process_cmd(cmd):\n"
		 "        if cmd == 1:\n"
		 "            textmsg(\"movej\")\n"
		 "        elif cmd == 12:\n"
		 "            textmsg(\"servoc\")\n"
		 "        end\n"
		 "    end\n"
		 "    textmsg(\"RTDE Control Script Loaded (%s)\")\n"
		 "    while keep_running:\n"
		 "        sync()\n"
		 "    end\n"
		 "end\n",
		 offset, offset, path, stamp);
	return buf;
}

#define STAMP "14.02.2024-12:23"

struct rig {
	struct sim *sim;
	int64_t now;
	int off;
};

static void rig_up(struct rig *g, int offset, const char *path)
{
	struct sim_opts o;
	const char *text;
	int err = 0;

	sim_opts_default(&o);
	g->sim = sim_new(&o, 0, &err);
	cr_assert(g->sim, "sim_new: %d", err);
	g->now = 0;
	g->off = offset;
	text = program(STAMP, offset, path);
	cr_assert_eq(sim_ctrl_program(g->sim, 1, text, strlen(text), g->now), SIM_CTRL_OK);
	cr_assert_not_null(sim_ctrl_model(&g->sim->ctrl));
}

static union rtl_rtde_value *reg(struct rig *g, const char *family, int i)
{
	char name[64];
	union rtl_rtde_value *v;

	snprintf(name, sizeof(name), "%s%d", family, g->off + i);
	v = sim_value(g->sim, name);
	cr_assert_not_null(v, "%s", name);
	return v;
}

static void set_int(struct rig *g, int i, int32_t x)
{
	reg(g, "input_int_register_", i)->i32 = x;
}

static void set_dbl(struct rig *g, int i, double x)
{
	reg(g, "input_double_register_", i)->d = x;
}

static int32_t state(struct rig *g)
{
	return reg(g, "output_int_register_", 0)->i32;
}

static int32_t result_int(struct rig *g)
{
	return reg(g, "output_int_register_", 1)->i32;
}

static double result_dbl(struct rig *g, int i)
{
	return reg(g, "output_double_register_", i)->d;
}

static void cycles(struct rig *g, int n)
{
	for (int i = 0; i < n; i++) {
		g->now += PERIOD;
		sim_cycle(g->sim, g->now, false);
	}
}

/* Run until output_int_register_0 is @want, at most @max cycles. */
static bool until_state(struct rig *g, int32_t want, int max)
{
	for (int i = 0; i < max; i++) {
		cycles(g, 1);
		if (state(g) == want)
			return true;
	}
	return false;
}

/* ur_rtde's sendCommand for a command that waits: write it, wait for done,
 * write 0, wait for ready. */
static bool command(struct rig *g, int32_t cmd, int max)
{
	set_int(g, 0, cmd);
	if (!until_state(g, 2, max))
		return false;
	set_int(g, 0, 0);
	return until_state(g, 1, 10);
}

static void joints(struct rig *g, const double q[6])
{
	for (int i = 0; i < 6; i++)
		set_dbl(g, i, q[i]);
}

Test(sim_urrtde, the_script_says_ready_then_done_then_ready_again)
{
	struct rig g;
	double q[6];

	rig_up(&g, 0, "");
	cycles(&g, 1);
	cr_expect_eq(state(&g), 1, "ready after the start");
	memcpy(q, g.sim->robot.actual_q, sizeof(q));
	q[0] += 0.1;
	joints(&g, q);
	set_dbl(&g, 6, 1.0);
	set_dbl(&g, 7, 1.0);
	set_int(&g, 1, 0); /* synchronous */
	set_int(&g, 0, 1); /* moveJ */
	cycles(&g, 2);
	cr_expect_eq(state(&g), 1, "a synchronous move says done only when it is over");
	cr_assert(until_state(&g, 2, 2000));
	cr_expect_float_eq(g.sim->robot.actual_q[0], q[0], 1e-6);
	/* The command stays: it is not taken twice. */
	cycles(&g, 20);
	cr_expect_eq(g.sim->ctrl.stats.model[0].commands, 1);
	set_int(&g, 0, 0);
	cr_expect(until_state(&g, 1, 5));
	sim_free(g.sim);
}

Test(sim_urrtde, streaming_commands_are_taken_every_cycle_and_say_ready)
{
	struct rig g;
	uint64_t before;

	rig_up(&g, 24, "");
	for (int i = 0; i < 6; i++)
		set_dbl(&g, i, 0);
	set_dbl(&g, 0, 0.3); /* speedJ, base joint */
	set_dbl(&g, 6, 2.0);
	set_dbl(&g, 7, 0.002);
	set_int(&g, 0, 9);
	before = g.sim->ctrl.stats.model[0].commands;
	cycles(&g, 300);
	cr_expect_eq(state(&g), 1);
	cr_expect_geq(g.sim->ctrl.stats.model[0].commands - before, 299);
	cr_expect_float_eq(g.sim->robot.actual_qd[0], 0.3, 1e-9);
	/* speedStop waits for rest. */
	set_dbl(&g, 0, 5.0);
	cr_assert(command(&g, 15, 500));
	cr_expect(sim_robot_at_rest(&g.sim->robot));
	sim_free(g.sim);
}

Test(sim_urrtde, an_async_move_reports_progress_and_stops_half_way)
{
	struct rig g;
	double q[6], q_start;
	int32_t p;

	rig_up(&g, 0, "");
	memcpy(q, g.sim->robot.actual_q, sizeof(q));
	q_start = q[0];
	q[0] += 1.0;
	joints(&g, q);
	set_dbl(&g, 6, 0.5);
	set_dbl(&g, 7, 1.0);
	set_int(&g, 1, 1); /* async */
	cr_assert(command(&g, 1, 10), "an async move says done at once");
	p = reg(&g, "output_int_register_", 2)->i32;
	cr_expect(p & 32768, "running bit: %#x", (unsigned)p);
	cr_expect_eq((p >> 24) & 127, 1, "operation 1");
	cycles(&g, 300);
	cr_expect_gt(g.sim->robot.actual_q[0], q_start + 0.05);
	/* stopJ, synchronous: the move thread dies, the arm stops. */
	set_dbl(&g, 0, 2.0);
	set_int(&g, 1, 0);
	cr_assert(command(&g, 34, 1000));
	cr_expect(sim_robot_at_rest(&g.sim->robot));
	cr_expect_lt(g.sim->robot.actual_q[0], q_start + 0.9, "stopped half-way");
	p = reg(&g, "output_int_register_", 2)->i32;
	cr_expect_not(p & 32768, "finished: %#x", (unsigned)p);
	sim_free(g.sim);
}

Test(sim_urrtde, an_injected_path_runs_and_signals_each_waypoint)
{
	struct rig g;
	double *pose = NULL, p0[6];
	char path[1024];
	int seen = 0, last = -1;

	/* the waypoints are relative to the start pose of a default sim */
	{
		struct sim_opts o;
		struct sim *s;

		sim_opts_default(&o);
		s = sim_new(&o, 0, NULL);
		cr_assert(s);
		memcpy(p0, s->robot.actual_TCP_pose, sizeof(p0));
		sim_free(s);
	}
	snprintf(path, sizeof(path),
		 "\tsignal_async_progress(0)\n"
		 "\tmovel(p[%.6f,%.6f,%.6f,%.6f,%.6f,%.6f],a=0.5,v=0.1,r=0)\n"
		 "\tsignal_async_progress(1)\n"
		 "\tmovel(p[%.6f,%.6f,%.6f,%.6f,%.6f,%.6f],a=0.5,v=0.1,r=0)\n",
		 p0[0] + 0.02, p0[1], p0[2], p0[3], p0[4], p0[5], p0[0] + 0.04, p0[1], p0[2], p0[3],
		 p0[4], p0[5]);
	rig_up(&g, 0, path);
	set_int(&g, 1, 1);
	cr_assert(command(&g, 45, 10));
	for (int i = 0; i < 2000; i++) {
		int32_t p = reg(&g, "output_int_register_", 2)->i32;

		cycles(&g, 1);
		if ((p & 32768) && (p & 32767) != last) {
			last = p & 32767;
			seen |= 1 << last;
		}
		if (!(p & 32768) && i > 10)
			break;
	}
	cr_expect_eq(seen, 3, "progress 0 and 1 seen: %#x", (unsigned)seen);
	pose = g.sim->robot.actual_TCP_pose;
	cr_expect_float_eq(pose[0], p0[0] + 0.04, 1e-5);
	sim_free(g.sim);
}

Test(sim_urrtde, kinematics_answer_in_the_output_registers)
{
	struct rig g;
	double q[6], p[6];

	rig_up(&g, 0, "");
	memcpy(q, g.sim->robot.actual_q, sizeof(q));
	cr_assert(command(&g, 43, 10)); /* FK of the actual joints */
	for (int i = 0; i < 6; i++)
		p[i] = result_dbl(&g, i);
	cr_expect_float_eq(p[2], g.sim->robot.actual_TCP_pose[2], 1e-9);
	for (int i = 0; i < 6; i++)
		set_dbl(&g, i, p[i]);
	cr_assert(command(&g, 46, 10)); /* IK of that pose */
	for (int i = 0; i < 6; i++)
		cr_expect_float_eq(result_dbl(&g, i), q[i], 1e-6, "joint %d", i);
	/* A joint vector past a limit is not within the safety limits. */
	q[2] = 4.0;
	joints(&g, q);
	cr_assert(command(&g, 37, 10));
	cr_expect_eq(result_int(&g), 0);
	q[2] = 1.0;
	joints(&g, q);
	cr_assert(command(&g, 37, 10));
	cr_expect_eq(result_int(&g), 1);
	/* IK of an unreachable pose: get_inverse_kin() raises, the program stops. */
	p[0] = 5.0;
	for (int i = 0; i < 6; i++)
		set_dbl(&g, i, p[i]);
	set_int(&g, 0, 46);
	cycles(&g, 3);
	cr_expect_null(sim_ctrl_model(&g.sim->ctrl));
	cr_expect_eq(g.sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	cr_expect_eq(g.sim->ctrl.stats.model[0].failed, 1);
	/* no 'cmd == 46' branch in this text: the main loop's line */
	cr_expect_eq(g.sim->ctrl.last_exception.line, 22);
	cr_expect(strstr(g.sim->ctrl.last_exception.text, "get_inverse_kin"), "%s",
		  g.sim->ctrl.last_exception.text);
	sim_free(g.sim);
}

Test(sim_urrtde, payload_tcp_and_modes_reach_the_robot)
{
	struct rig g;

	rig_up(&g, 0, "");
	set_dbl(&g, 0, 2.5);
	set_dbl(&g, 1, 0);
	set_dbl(&g, 2, 0.01);
	set_dbl(&g, 3, 0.1);
	cr_assert(command(&g, 17, 10));
	cr_expect_float_eq(g.sim->robot.payload, 2.5, 1e-12);
	cr_expect_float_eq(g.sim->robot.payload_cog[2], 0.1, 1e-12);
	for (int i = 0; i < 6; i++)
		set_dbl(&g, i, i == 2 ? 0.15 : 0);
	cr_assert(command(&g, 29, 10));
	cr_expect_float_eq(g.sim->robot.tcp_offset[2], 0.15, 1e-12);
	cr_assert(command(&g, 18, 10));
	cr_expect(g.sim->robot.teach_on);
	cr_assert(command(&g, 19, 10));
	cr_expect_not(g.sim->robot.teach_on);
	sim_free(g.sim);
}

Test(sim_urrtde, a_command_not_modelled_stops_the_program_by_name)
{
	struct rig g;

	rig_up(&g, 0, "");
	set_int(&g, 0, 12); /* servoC */
	cycles(&g, 3);
	cr_expect_null(sim_ctrl_model(&g.sim->ctrl));
	cr_expect_neq(state(&g), 2, "never answered done");
	cr_expect_eq(g.sim->ctrl.stats.model[0].unmodelled, 1);
	cr_expect_str_eq(g.sim->ctrl.stats.model[0].last_unmodelled, "servoC (12)");
	cr_expect(strstr(g.sim->ctrl.last_exception.text, "servoC"), "%s",
		  g.sim->ctrl.last_exception.text);
	cr_expect_eq(g.sim->ctrl.last_exception.line, 17, "the line of 'cmd == 12'");
	sim_free(g.sim);
}

Test(sim_urrtde, a_number_no_branch_takes_is_only_done)
{
	struct rig g;

	rig_up(&g, 0, "");
	cr_expect(command(&g, 99, 10), "kickWatchdog's 99: no branch, done");
	cr_expect_not_null(sim_ctrl_model(&g.sim->ctrl));
	sim_free(g.sim);
}

Test(sim_urrtde, stop_script_ends_the_program)
{
	struct rig g;

	rig_up(&g, 0, "");
	set_int(&g, 0, 255);
	cycles(&g, 2);
	cr_expect_null(sim_ctrl_model(&g.sim->ctrl));
	cr_expect_eq(g.sim->robot.runtime_state, 1, "STOPPED");
	cr_expect_eq(g.sim->ctrl.stats.model[0].failed, 0);
	sim_free(g.sim);
}

Test(sim_urrtde, the_rtde_watchdog_stops_a_program_whose_register_goes_quiet)
{
	struct rig g;
	uint16_t field;
	struct sim_recipe r = { .n = 1, .fields = &field, .echo_slot = -1 };
	const struct rtl_rtde_field *f = rtl_rtde_field_find("input_int_register_0");

	cr_assert(f);
	field = (uint16_t)rtl_rtde_field_index(f);
	rig_up(&g, 0, "");
	set_dbl(&g, 0, 10.0); /* 10 Hz: 100 ms */
	cr_assert(command(&g, 35, 10));
	for (int i = 0; i < 100; i++) { /* kicked every 50 ms for 1 s */
		cycles(&g, 25);
		sim_inputs_written(g.sim, NULL, &r, g.now);
	}
	cr_expect_not_null(sim_ctrl_model(&g.sim->ctrl));
	cycles(&g, 60); /* 120 ms quiet */
	cr_expect_null(sim_ctrl_model(&g.sim->ctrl));
	cr_expect_eq(g.sim->ctrl.stats.model[0].watchdog_stops, 1);
	sim_free(g.sim);
}

Test(sim_urrtde, another_release_or_a_bad_offset_or_path_does_not_start)
{
	struct sim_opts o;
	struct sim *sim;
	const char *t;

	sim_opts_default(&o);
	sim = sim_new(&o, 0, NULL);
	cr_assert(sim);
	t = program("01.01.2030-00:00", 0, "");
	cr_expect_eq(sim_ctrl_program(sim, 1, t, strlen(t), 0), SIM_CTRL_NOT_RTLOOP);
	cr_expect(strstr(sim->ctrl.last_exception.text, "01.01.2030-00:00"), "%s",
		  sim->ctrl.last_exception.text);
	t = program(STAMP, 7, "");
	cr_expect_eq(sim_ctrl_program(sim, 1, t, strlen(t), 0), SIM_CTRL_NOT_RTLOOP);
	cr_expect_eq(sim->ctrl.last_exception.line, 2);
	t = program(STAMP, 0, "\tmovec(p[0,0,0,0,0,0],p[0,0,0,0,0,0],a=1,v=1,r=0)\n");
	cr_expect_eq(sim_ctrl_program(sim, 1, t, strlen(t), 0), SIM_CTRL_NOT_RTLOOP);
	cr_expect(strstr(sim->ctrl.last_exception.text, "movec"), "%s",
		  sim->ctrl.last_exception.text);
	cr_expect_eq(sim->ctrl.stats.model[0].failed, 3);
	cr_expect_eq(sim->ctrl.stats.model[0].started, 0);
	cr_expect_eq(sim->ctrl.program_state, RTL_UR_PROGRAM_STOPPED);
	sim_free(sim);
}

Test(sim_urrtde, a_protective_stop_ends_the_program_and_restart_safety_clears_it)
{
	struct rig g;

	rig_up(&g, 0, "");
	set_int(&g, 0, 31); /* triggerProtectiveStop */
	cycles(&g, 2);
	cr_expect_null(sim_ctrl_model(&g.sim->ctrl));
	cr_expect_eq(g.sim->ctrl.safety_mode, RTL_UR_SAFETY_PROTECTIVE_STOP);
	cr_expect_eq(sim_ctrl_unlock(g.sim, g.now), SIM_CTRL_TOO_EARLY);
	cr_expect_eq(sim_ctrl_restart_safety(g.sim, g.now), SIM_CTRL_OK);
	cr_expect_eq(g.sim->ctrl.safety_mode, RTL_UR_SAFETY_NORMAL);
	cr_expect_eq(g.sim->ctrl.robot_mode, RTL_UR_ROBOT_MODE_POWER_OFF);
	sim_free(g.sim);
}
