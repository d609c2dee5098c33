// SPDX-License-Identifier: MIT
/*
 * The simulated controller (see sim.h for the design).
 *
 * The robot's state reaches the wire through one table (publish[]): each
 * row names an RTDE output and where its value lives in struct
 * sim_robot. At init every row is resolved to a registry index once
 * (and checked against the registry's type), so a cycle publishes with a
 * memcpy per row, and a data package is built with one store per recipe
 * field. Inputs travel the other way: a client's input package lands in
 * the values array, and sim_inputs_written() passes the command
 * registers of <rtloop/rtde_cmd.h> and the standard outputs to the robot
 * at the moment they arrive, as the controller processes inputs in the
 * cycle they are received.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/time.h>

#include "ft.h"
#include "sim.h"

static const struct sim_profile profiles[SIM_PROFILE_COUNT] = {
	/* The last CB3 line (3.15), the newest e-Series and PolyScope X the
	 * reference names (5.26, 10.13: control_step exists there). */
	[SIM_PROFILE_CB3] = { "cb3", { 3, 15, 8, 0 }, 125 },
	[SIM_PROFILE_ESERIES] = { "eseries", { 5, 26, 0, 0 }, 500 },
	[SIM_PROFILE_POLYSCOPE_X] = { "polyscope-x", { 10, 13, 0, 0 }, 500 },
};

const struct sim_profile *sim_profile(enum sim_profile_id id)
{
	return (unsigned)id < SIM_PROFILE_COUNT ? &profiles[id] : NULL;
}

const struct sim_profile *sim_profile_find(const char *name)
{
	for (unsigned i = 0; name && i < SIM_PROFILE_COUNT; i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

/* ---- robot state -> RTDE outputs ------------------------------------------ */

#define RO(name_, member_, type_)                                                 \
	{                                                                         \
		name_, offsetof(struct sim_robot, member_), RTL_RTDE_TYPE_##type_ \
	}

static const struct {
	const char *name;
	size_t offset;
	enum rtl_rtde_type type;
} publish[] = {
	RO("target_q", target_q, VECTOR6D),
	RO("target_qd", target_qd, VECTOR6D),
	RO("target_qdd", target_qdd, VECTOR6D),
	RO("target_current", target_current, VECTOR6D),
	RO("target_moment", target_moment, VECTOR6D),
	RO("actual_q", actual_q, VECTOR6D),
	RO("actual_qd", actual_qd, VECTOR6D),
	RO("actual_current", actual_current, VECTOR6D),
	RO("joint_control_output", joint_control_output, VECTOR6D),
	RO("actual_current_as_torque", target_moment, VECTOR6D),
	RO("actual_TCP_pose", actual_TCP_pose, VECTOR6D),
	RO("actual_TCP_speed", actual_TCP_speed, VECTOR6D),
	RO("actual_TCP_force", actual_TCP_force, VECTOR6D),
	RO("target_TCP_pose", target_TCP_pose, VECTOR6D),
	RO("target_TCP_speed", target_TCP_speed, VECTOR6D),
	RO("ft_raw_wrench", ft_raw_wrench, VECTOR6D),
	RO("tcp_force_scalar", tcp_force_scalar, DOUBLE),
	RO("tcp_offset", tcp_offset, VECTOR6D),
	RO("joint_temperatures", joint_temperatures, VECTOR6D),
	RO("actual_joint_voltage", actual_joint_voltage, VECTOR6D),
	RO("actual_main_voltage", actual_main_voltage, DOUBLE),
	RO("actual_robot_voltage", actual_robot_voltage, DOUBLE),
	RO("actual_robot_current", actual_robot_current, DOUBLE),
	RO("actual_momentum", actual_momentum, DOUBLE),
	RO("actual_tool_accelerometer", actual_tool_accelerometer, VECTOR3D),
	RO("actual_execution_time", actual_execution_time, DOUBLE),
	RO("tool_temperature", tool_temperature, DOUBLE),
	RO("payload", payload, DOUBLE),
	RO("payload_cog", payload_cog, VECTOR3D),
	RO("payload_inertia", payload_inertia, VECTOR6D),
	RO("elbow_position", elbow_position, VECTOR3D),
	RO("elbow_velocity", elbow_velocity, VECTOR3D),
	RO("joint_mode", joint_mode, VECTOR6INT32),
	RO("robot_mode", robot_mode, INT32),
	RO("safety_mode", safety_mode, INT32),
	RO("safety_status", safety_status, INT32),
	RO("robot_status_bits", robot_status_bits, UINT32),
	RO("safety_status_bits", safety_status_bits, UINT32),
	RO("runtime_state", runtime_state, UINT32),
	RO("speed_scaling", speed_scaling, DOUBLE),
	RO("target_speed_fraction", target_speed_fraction, DOUBLE),
	RO("analog_io_types", analog_io_types, UINT32),
	RO("standard_analog_output0", standard_analog_output[0], DOUBLE),
	RO("standard_analog_output1", standard_analog_output[1], DOUBLE),
	RO("standard_analog_input0", standard_analog_input[0], DOUBLE),
	RO("standard_analog_input1", standard_analog_input[1], DOUBLE),
	RO("actual_digital_input_bits", actual_digital_input_bits, UINT64),
};

#define N_PUBLISH (sizeof(publish) / sizeof(publish[0]))
_Static_assert(N_PUBLISH <= SIM_PUBLISH_MAX, "raise SIM_PUBLISH_MAX");

/* Registry index of @name, or -1. */
static int field_idx(const char *name)
{
	const struct rtl_rtde_field *f = rtl_rtde_field_find(name);

	return f ? rtl_rtde_field_index(f) : -1;
}

/* Slots of sim->cmd_idx[]: the command registers in struct order. */
enum {
	CMD_MODE,
	CMD_SEQ,
	CMD_WATCHDOG_MS,
	CMD_PARAM0,
	CMD_ACCEL = CMD_PARAM0 + RTL_RTDE_CMD_NPARAM,
	CMD_TIME,
	CMD_LOOKAHEAD,
	CMD_GAIN,
};

/* The command registers of <rtloop/rtde_cmd.h>. */
static const char *const cmd_fields[] = {
	[CMD_MODE] = RTL_RTDE_CMD_FIELD_MODE,
	[CMD_SEQ] = RTL_RTDE_CMD_FIELD_SEQ,
	[CMD_WATCHDOG_MS] = RTL_RTDE_CMD_FIELD_WATCHDOG_MS,
	[CMD_PARAM0] = RTL_RTDE_CMD_FIELD_PARAM0,
	RTL_RTDE_CMD_FIELD_PARAM1,
	RTL_RTDE_CMD_FIELD_PARAM2,
	RTL_RTDE_CMD_FIELD_PARAM3,
	RTL_RTDE_CMD_FIELD_PARAM4,
	RTL_RTDE_CMD_FIELD_PARAM5,
	[CMD_ACCEL] = RTL_RTDE_CMD_FIELD_ACCEL,
	[CMD_TIME] = RTL_RTDE_CMD_FIELD_TIME,
	[CMD_LOOKAHEAD] = RTL_RTDE_CMD_FIELD_LOOKAHEAD,
	[CMD_GAIN] = RTL_RTDE_CMD_FIELD_GAIN,
};
#define N_CMD (sizeof(cmd_fields) / sizeof(cmd_fields[0]))
_Static_assert(N_CMD == SIM_CMD_FIELDS, "command registers changed");

/* The standard inputs that act on the robot, in struct sim_robot_inputs
 * order. */
static const char *const io_fields[] = {
	"speed_slider_mask",
	"speed_slider_fraction",
	"standard_digital_output_mask",
	"standard_digital_output",
	"configurable_digital_output_mask",
	"configurable_digital_output",
	"tool_digital_output_mask",
	"tool_digital_output",
	"standard_analog_output_mask",
	"standard_analog_output_type",
	"standard_analog_output_0",
	"standard_analog_output_1",
};
#define N_IO (sizeof(io_fields) / sizeof(io_fields[0]))
_Static_assert(N_IO == SIM_IO_FIELDS, "robot inputs changed");

enum { ROLE_CMD = 1, ROLE_IO = 2, ROLE_REQ = 4 };

/* The registry index of the @dir ("input", "output") @type ("int",
 * "double") register @n. */
static int reg_idx(const char *dir, const char *type, int n)
{
	char name[48];

	snprintf(name, sizeof(name), "%s_%s_register_%d", dir, type, n);
	return field_idx(name);
}

/* The output registers the executor reports in, RTL_RTDE_CMD_OUT_MODE on. */
static const char *const cmd_out_fields[] = {
	RTL_RTDE_CMD_FIELD_OUT_MODE,
	RTL_RTDE_CMD_FIELD_OUT_SEQ,
	RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS,
	RTL_RTDE_CMD_FIELD_OUT_STATUS,
};
#define N_CMD_OUT (sizeof(cmd_out_fields) / sizeof(cmd_out_fields[0]))
_Static_assert(N_CMD_OUT == 4, "executor outputs changed");

/* The request executor's acknowledgement, in output int 40-42 and
 * double 24-29. */
static void publish_ack(struct sim *sim, const struct sim_robot *r)
{
	const int32_t ack[3] = { r->req_id, r->req_state, r->req_reason };

	for (int i = 0; i < 3 + RTL_RTDE_REQ_NRESULT; i++) {
		int idx = sim->req_out_idx[i];

		if (idx < 0)
			continue;
		if (i < 3)
			sim->values[idx].i32 = ack[i];
		else
			sim->values[idx].d = r->req_result[i - 3];
	}
}

/* The robot has something to say (a watchdog trip): tell the connection
 * that owns the heartbeat register, which is the one commanding. */
static void robot_message(void *ctx, enum sim_robot_level level, const char *text)
{
	struct sim *sim = ctx;
	unsigned owner = sim->owner[sim->cmd_idx[CMD_SEQ]];
	struct sim_session *s = owner ? sim->sessions[owner - 1] : NULL;

	struct sim_ctrl_msg m = { .kind = SIM_MSG_TEXT, .level = SIM_LEVEL_WARNING };

	if (s && s->close == SIM_CLOSE_NONE)
		sim_session_text(sim, s, (uint8_t)level, text, "URControl");
	/* and the controller's log, which the primary interface streams */
	snprintf(m.text, sizeof(m.text), "%s", text);
	sim_ctrl_message(sim, &m);
}

/* ---- set-up ------------------------------------------------------------------ */

void sim_opts_default(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->profile = SIM_PROFILE_ESERIES;
	o->max_protocol = 2;
	o->max_clients = 16;
	o->handshake_timeout_ns = SIM_HANDSHAKE_TIMEOUT_DEFAULT;
	o->send_buffer = SIM_SEND_BUFFER_DEFAULT;
	o->start_time_s = 42.0;
	o->echo_register = -1;
	o->faults.skip_count = 1;
	o->faults.fragment_max = 7;
	o->faults.burst_every_s = 1.0;
	o->faults.seed = 1;
	sim_robot_config_default(&o->robot);
	sim_ctrl_opts_default(&o->ctrl);
}

static uint64_t seconds_to_cycles(double s, uint32_t hz)
{
	double c = s * hz;

	return c < 1.0 ? 1 : (uint64_t)llround(c);
}

int sim_init(struct sim *sim, const struct sim_opts *o, int64_t t0)
{
	struct sim_opts def;
	const struct sim_profile *p;
	struct sim_faults *f;
	int err;

	if (!sim)
		return -EINVAL;
	if (!o) {
		sim_opts_default(&def);
		o = &def;
	}
	memset(sim, 0, offsetof(struct sim, echo_ring));
	sim->opts = *o;
	f = &sim->opts.faults;
	p = sim_profile(o->profile);
	if (!p)
		return -EINVAL;
	if (!sim->opts.max_protocol)
		sim->opts.max_protocol = 2;
	if (sim->opts.max_protocol > 2)
		return -EINVAL;
	if (!sim->opts.max_clients)
		sim->opts.max_clients = 16;
	if (!sim->opts.handshake_timeout_ns)
		sim->opts.handshake_timeout_ns = SIM_HANDSHAKE_TIMEOUT_DEFAULT;
	if (!sim->opts.send_buffer)
		sim->opts.send_buffer = SIM_SEND_BUFFER_DEFAULT;
	if (sim->opts.send_buffer < 4096)
		return -EINVAL;
	if (o->echo_register < -1 || o->echo_register >= RTL_RTDE_REG_COUNT)
		return -EINVAL;
	if (!f->skip_count)
		f->skip_count = 1;
	if (f->skip_every && f->skip_count >= f->skip_every)
		return -EINVAL;
	if (f->stall_ms && !(f->stall_every_s > 0.0))
		return -EINVAL;
	if (!(f->burst_every_s > 0.0))
		f->burst_every_s = 1.0;
	if (!f->fragment_max)
		f->fragment_max = 7;
	if (!(o->start_time_s >= 0.0) || o->start_time_s > 1e9)
		return -EINVAL;

	sim->version = rtl_rtde_version_pack(sim_version(sim));
	sim->max_hz = p->frequency_hz;
	sim->period_ns = RTL_NS_PER_SEC / p->frequency_hz;
	sim->start_ns = llround(o->start_time_s * 1e9);
	sim->n_fields = rtl_rtde_field_count();
	sim->values = calloc(sim->n_fields, sizeof(*sim->values));
	sim->owner = calloc(sim->n_fields, sizeof(*sim->owner));
	sim->role = calloc(sim->n_fields, 1);
	if (!sim->values || !sim->owner || !sim->role) {
		sim_destroy(sim);
		return -ENOMEM;
	}
	for (size_t i = 0; i < N_CMD; i++) {
		sim->cmd_idx[i] = field_idx(cmd_fields[i]);
		sim->role[sim->cmd_idx[i]] |= ROLE_CMD;
	}
	for (size_t i = 0; i < N_IO; i++) {
		sim->io_idx[i] = field_idx(io_fields[i]);
		sim->role[sim->io_idx[i]] |= ROLE_IO;
	}
	for (int i = 0; i < 3 + RTL_RTDE_REQ_NARG; i++) {
		sim->req_idx[i] = i < 3 ? reg_idx("input", "int", RTL_RTDE_REQ_REG_ID + i)
					: reg_idx("input", "double", RTL_RTDE_REQ_REG_ARG0 + i - 3);
		if (sim->req_idx[i] >= 0)
			sim->role[sim->req_idx[i]] |= ROLE_REQ;
	}
	for (int i = 0; i < 3 + RTL_RTDE_REQ_NRESULT; i++)
		sim->req_out_idx[i] =
			i < 3 ? reg_idx("output", "int", RTL_RTDE_REQ_OUT_ID + i)
			      : reg_idx("output", "double", RTL_RTDE_REQ_OUT_RESULT0 + i - 3);
	for (size_t i = 0; i < N_PUBLISH; i++) {
		int idx = field_idx(publish[i].name);

		sim->publish_idx[i] =
			idx >= 0 && rtl_rtde_field_at((size_t)idx)->type == publish[i].type ? idx
											    : -1;
	}
	sim->timestamp_idx = field_idx("timestamp");
	sim->control_step_idx = field_idx("control_step");
	sim->digital_out_idx = field_idx("actual_digital_output_bits");
	sim->config_out_idx = field_idx("actual_configurable_digital_output_bits");
	for (size_t i = 0; i < N_CMD_OUT; i++)
		sim->cmd_out_idx[i] = field_idx(cmd_out_fields[i]);
	sim->echo_idx = -1;
	if (o->echo_register >= 0) {
		char name[40];

		snprintf(name, sizeof(name), "input_double_register_%d", o->echo_register);
		sim->echo_idx = field_idx(name);
	}

	sim->opts.robot.period_ns = sim->period_ns;
	/* a CB3 controller drives a UR5, the others a UR5e */
	sim->opts.robot.dh = o->profile == SIM_PROFILE_CB3 ? sim_dh_ur5 : sim_dh_ur5e;
	sim->opts.robot.message = robot_message;
	sim->opts.robot.message_ctx = sim;
	err = sim_robot_init(&sim->robot, &sim->opts.robot);
	if (!err)
		err = sim_ctrl_init(sim);
	if (err) {
		sim_destroy(sim);
		return err;
	}
	sim_ctrl_tick(sim, t0);
	sim_panel_init(&sim->panel);

	sim->t0 = t0;
	sim->rng = f->seed ? f->seed : 0x9e3779b97f4a7c15ull;
	sim->next_stall = f->stall_ms ? seconds_to_cycles(f->stall_every_s, sim->max_hz) : 0;
	sim->next_burst = f->burst > 1 ? seconds_to_cycles(f->burst_every_s, sim->max_hz) : 0;
	for (size_t i = 0; i < SIM_ECHO_RING; i++)
		sim->echo_ring[i].cycle = UINT64_MAX;
	rtl_hist_reset(&sim->echo_hist);
	rtl_hist_reset(&sim->wake_hist);
	/* Cycle 0's outputs exist before the first cycle runs. */
	sim_publish(sim, 0);
	return 0;
}

void sim_destroy(struct sim *sim)
{
	if (!sim)
		return;
	for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++)
		sim_session_close(sim, sim->sessions[i]);
	sim_ctrl_destroy(sim);
	sim_panel_destroy(&sim->panel);
	free(sim->values);
	free(sim->owner);
	free(sim->role);
	sim->values = NULL;
	sim->owner = NULL;
	sim->role = NULL;
}

struct sim *sim_new(const struct sim_opts *o, int64_t t0, int *err)
{
	struct sim *sim = calloc(1, sizeof(*sim));
	int e = sim ? sim_init(sim, o, t0) : -ENOMEM;

	if (err)
		*err = e;
	if (e) {
		free(sim);
		return NULL;
	}
	return sim;
}

void sim_free(struct sim *sim)
{
	sim_destroy(sim);
	free(sim);
}

const struct rtl_rtde_controller_version *sim_version(const struct sim *sim)
{
	return sim->opts.version.major ? &sim->opts.version
				       : &sim_profile(sim->opts.profile)->version;
}

/* ---- values ------------------------------------------------------------------- */

union rtl_rtde_value *sim_value(struct sim *sim, const char *name)
{
	int idx = field_idx(name);

	return idx >= 0 ? &sim->values[idx] : NULL;
}

double sim_timestamp(const struct sim *sim, uint64_t k)
{
	int64_t ns;

	/* From integers, so timestamp k is the double nearest start + k T;
	 * past 2^63 ns (k near 4.6e12 at 500 Hz, fed by a fuzzer, never by a
	 * clock) in doubles rather than an overflow. */
	if (k <= INT64_MAX && !__builtin_mul_overflow((int64_t)k, sim->period_ns, &ns) &&
	    !__builtin_add_overflow(ns, sim->start_ns, &ns))
		return (double)ns / 1e9;
	return ((double)sim->start_ns + (double)k * (double)sim->period_ns) / 1e9;
}

void sim_publish(struct sim *sim, uint64_t k)
{
	const struct sim_robot *r = &sim->robot;
	int32_t regs[4];

	for (size_t i = 0; i < N_PUBLISH; i++)
		if (sim->publish_idx[i] >= 0)
			memcpy(&sim->values[sim->publish_idx[i]],
			       (const char *)r + publish[i].offset,
			       rtl_rtde_type_size(publish[i].type));
	if (sim->digital_out_idx >= 0)
		sim->values[sim->digital_out_idx].u64 = sim_robot_digital_output_bits(r);
	if (sim->config_out_idx >= 0)
		sim->values[sim->config_out_idx].u64 = r->configurable_digital_out;
	/* The executor's outputs; while no rtloop program runs they keep
	 * their last values, as a real controller's registers do. */
	if (sim_ctrl_executing(&sim->ctrl)) {
		uint64_t trips = r->watchdog_trips - sim->ctrl.trips_base;

		regs[0] = r->active_mode;
		regs[1] = r->last_seq;
		regs[2] = (int32_t)(trips > INT32_MAX ? INT32_MAX : trips);
		regs[3] = (int32_t)sim_robot_cmd_status(r);
		for (int i = 0; i < 4; i++)
			if (sim->cmd_out_idx[i] >= 0)
				sim->values[sim->cmd_out_idx[i]].i32 = regs[i];
		publish_ack(sim, r);
	}
	if (sim->timestamp_idx >= 0)
		sim->values[sim->timestamp_idx].d = sim_timestamp(sim, k);
	if (sim->control_step_idx >= 0)
		sim->values[sim->control_step_idx].u64 =
			(uint64_t)(sim->start_ns / sim->period_ns) + k;
}

/* ---- inputs ----------------------------------------------------------------------- */

void sim_inputs_written(struct sim *sim, struct sim_session *s, const struct sim_recipe *r,
			int64_t now)
{
	const union rtl_rtde_value *v = sim->values;
	const struct sim_prog_ops *m = sim_ctrl_model(&sim->ctrl);

	if (m && m->inputs)
		m->inputs(sim, sim->ctrl.model_state[sim->ctrl.model], r->fields, r->n, now);
	if (r->roles & ROLE_CMD) {
		struct sim_robot_cmd c = {
			.mode = v[sim->cmd_idx[CMD_MODE]].i32,
			.seq = v[sim->cmd_idx[CMD_SEQ]].i32,
			.watchdog_ms = v[sim->cmd_idx[CMD_WATCHDOG_MS]].i32,
			.accel = v[sim->cmd_idx[CMD_ACCEL]].d,
			.time = v[sim->cmd_idx[CMD_TIME]].d,
			.lookahead = v[sim->cmd_idx[CMD_LOOKAHEAD]].d,
			.gain = v[sim->cmd_idx[CMD_GAIN]].d,
		};

		for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
			c.param[i] = v[sim->cmd_idx[CMD_PARAM0 + i]].d;
		/* The registers are written either way; only a running rtloop
		 * program reads them. */
		if (!sim_ctrl_executing(&sim->ctrl)) {
			/* another library's program owns these registers then
			 * (ur_rtde's upper range is 24-47): not ignored */
			if (!m)
				sim->ctrl.stats.commands_ignored++;
		} else if (sim_robot_command(&sim->robot, &c, now) == -EINVAL)
			sim->stats.commands_refused++;
	}
	if ((r->roles & ROLE_REQ) && sim->req_idx[0] >= 0 && sim_ctrl_executing(&sim->ctrl)) {
		struct sim_robot_req q = {
			.id = v[sim->req_idx[0]].i32,
			.kind = v[sim->req_idx[1]].i32,
			.flags = (uint32_t)v[sim->req_idx[2]].i32,
		};

		for (int i = 0; i < RTL_RTDE_REQ_NARG; i++)
			q.arg[i] = v[sim->req_idx[3 + i]].d;
		sim_robot_request(&sim->robot, &q, now);
	}
	if (r->roles & ROLE_IO) {
		struct sim_robot_inputs in = {
			.speed_slider_mask = v[sim->io_idx[0]].u32,
			.speed_slider_fraction = v[sim->io_idx[1]].d,
			.standard_digital_output_mask = v[sim->io_idx[2]].u8,
			.standard_digital_output = v[sim->io_idx[3]].u8,
			.configurable_digital_output_mask = v[sim->io_idx[4]].u8,
			.configurable_digital_output = v[sim->io_idx[5]].u8,
			.tool_digital_output_mask = v[sim->io_idx[6]].u8,
			.tool_digital_output = v[sim->io_idx[7]].u8,
			.standard_analog_output_mask = v[sim->io_idx[8]].u8,
			.standard_analog_output_type = v[sim->io_idx[9]].u8,
			.standard_analog_output_0 = v[sim->io_idx[10]].d,
			.standard_analog_output_1 = v[sim->io_idx[11]].d,
		};

		sim_robot_set_inputs(&sim->robot, &in);
	}
	if (r->echo_slot >= 0)
		sim_echo(sim, s, v[r->fields[r->echo_slot]].d, now);
}

void sim_echo(struct sim *sim, struct sim_session *s, double value, int64_t now)
{
	const struct sim_echo_slot *e;
	double k;

	if (value == 0.0 || value == s->last_echo)
		return;
	s->last_echo = value;
	/* The cycle whose timestamp this is: exact or nothing. */
	k = nearbyint((value * 1e9 - (double)sim->start_ns) / (double)sim->period_ns);
	if (!(k >= 0.0 && k < 1.8e19) || sim_timestamp(sim, (uint64_t)k) != value) {
		sim->stats.echo_unmatched++;
		return;
	}
	e = &sim->echo_ring[(uint64_t)k % SIM_ECHO_RING];
	if (e->cycle != (uint64_t)k) {
		sim->stats.echo_unmatched++;
		return;
	}
	rtl_hist_record(&sim->echo_hist, now - e->sent_ns);
	sim->stats.echoes++;
}

/* ---- schedule and faults -------------------------------------------------------------- */

uint64_t sim_rand(struct sim *sim)
{
	/* xorshift64*: small, fast, and repeatable from the seed. */
	uint64_t x = sim->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sim->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int64_t deadline(const struct sim *sim, uint64_t k)
{
	return sim->t0 + (int64_t)k * sim->period_ns;
}

int64_t sim_next_wake(struct sim *sim)
{
	const struct sim_faults *f = &sim->opts.faults;
	uint64_t k = sim->cycle;
	int64_t d = deadline(sim, k), wake = d;

	if (sim->wake_known)
		return sim->wake;
	if (sim->hold_until > d) {
		/* Held by a stall or a burst in progress. */
		wake = sim->hold_until;
	} else if (f->stall_ms && k >= sim->next_stall) {
		sim->hold_until = d + (int64_t)f->stall_ms * RTL_NS_PER_MS;
		wake = sim->hold_until;
		sim->next_stall = k + seconds_to_cycles(f->stall_every_s, sim->max_hz);
		sim->stats.stalls++;
	} else if (f->burst > 1 && k >= sim->next_burst) {
		/* Hold burst - 1 cycles; they go out with the burst-th. */
		sim->hold_until = deadline(sim, k + f->burst - 1);
		wake = sim->hold_until;
		sim->next_burst = k + seconds_to_cycles(f->burst_every_s, sim->max_hz);
		sim->stats.bursts++;
	} else if (f->jitter_us) {
		int64_t j = (int64_t)(sim_rand(sim) % ((uint64_t)f->jitter_us + 1)) * RTL_NS_PER_US;

		wake = d + j;
		if (j) {
			sim->stats.jittered++;
			if (j > sim->stats.jitter_max_ns)
				sim->stats.jitter_max_ns = j;
		}
	}
	sim->wake = wake;
	sim->wake_known = true;
	return wake;
}

static bool skipped(const struct sim *sim, uint64_t k)
{
	const struct sim_faults *f = &sim->opts.faults;

	return f->skip_every && k % f->skip_every >= f->skip_every - f->skip_count;
}

int sim_cycle(struct sim *sim, int64_t now, bool send)
{
	const struct sim_faults *f = &sim->opts.faults;
	uint64_t k = sim->cycle;
	bool skip = skipped(sim, k), skipped_any = false;
	int queued = 0;

	sim_ctrl_tick(sim, now);
	sim_robot_step(&sim->robot, now);
	if (sim->ft_feed)
		sim_ft_feed_publish(sim->ft_feed, sim->robot.ft_raw_wrench);
	sim_publish(sim, k);

	for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++) {
		struct sim_session *s = sim->sessions[i];

		if (!s || !s->started || !s->out_valid)
			continue;
		if (s->close != SIM_CLOSE_NONE && s->close != SIM_CLOSE_LIMIT)
			continue;
		if ((k - s->start_cycle) % s->divisor)
			continue;
		if (skip || !send) {
			/* Never resent: the next package carries a later
			 * timestamp, and the client sees the gap. */
			if (skip) {
				sim->stats.skipped_packages++;
				skipped_any = true;
			}
			continue;
		}
		if (sim_session_data(sim, s))
			continue;
		queued++;
		if (f->text_every && ++s->data_since_text >= f->text_every) {
			char msg[64];

			s->data_since_text = 0;
			snprintf(msg, sizeof(msg), "injected text message after package %llu",
				 (unsigned long long)s->stats.data_out);
			if (!sim_session_text(sim, s, RTL_RTDE_LEVEL_INFO, msg, SIM_TEXT_SOURCE))
				sim->stats.texts_injected++;
		}
		if (f->reset_after && s->stats.data_out >= f->reset_after &&
		    s->close == SIM_CLOSE_NONE)
			s->close = SIM_CLOSE_RESET;
	}
	if (skipped_any)
		sim->stats.skipped_cycles++;
	if (queued) {
		struct sim_echo_slot *e = &sim->echo_ring[k % SIM_ECHO_RING];

		e->cycle = k;
		e->sent_ns = now;
		sim->stats.cycles_sending++;
	}
	if (!send)
		sim->stats.overruns++;
	sim->stats.cycles++;
	sim->cycle++;
	sim->wake_known = false;
	return queued;
}

int sim_run_due(struct sim *sim, int64_t now)
{
	int n = 0;

	while (sim_next_wake(sim) <= now) {
		bool held = sim->hold_until > deadline(sim, sim->cycle);
		int64_t late = now - sim->wake;

		rtl_hist_record(&sim->wake_hist, late);
		/* Far behind through no fault of ours (the host stalled us):
		 * run the cycle, but send only the recent ones. */
		sim_cycle(sim, now, held || late < SIM_MAX_CATCH_UP * sim->period_ns);
		n++;
	}
	return n;
}

void sim_mark_sent(struct sim *sim, int n, int64_t now)
{
	for (uint64_t k = n > 0 && (uint64_t)n <= sim->cycle ? sim->cycle - (uint64_t)n
							     : sim->cycle;
	     k < sim->cycle; k++) {
		struct sim_echo_slot *e = &sim->echo_ring[k % SIM_ECHO_RING];

		if (e->cycle == k)
			e->sent_ns = now;
	}
}

size_t sim_fragment_len(struct sim *sim, size_t avail)
{
	size_t n = 1 + (size_t)(sim_rand(sim) % sim->opts.faults.fragment_max);

	return n < avail ? n : avail;
}

bool sim_session_due_close(struct sim *sim, struct sim_session *s, int64_t now)
{
	int64_t limit = sim->opts.handshake_timeout_ns;

	/* Idle before its first START: the slot is given back, with a word
	 * to the client (the text goes out with the orderly close). */
	if ((s->close == SIM_CLOSE_NONE || s->close == SIM_CLOSE_LIMIT) && !s->was_started &&
	    limit > 0 && now - s->last_in >= limit) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "no complete package for %.1f s before the stream was started: "
			 "connection closed (rtde-sim --handshake-timeout)",
			 (double)limit / 1e9);
		sim_session_text(sim, s, RTL_RTDE_LEVEL_ERROR, msg, SIM_TEXT_SOURCE);
		s->close = SIM_CLOSE_IDLE;
		sim->stats.idle_closed++;
		return true;
	}
	if (s->close == SIM_CLOSE_NONE)
		return false;
	return s->close != SIM_CLOSE_LIMIT || now >= s->close_at;
}

void sim_get_stats(struct sim *sim, struct sim_stats *out)
{
	unsigned clients = 0, streaming = 0;

	for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++) {
		const struct sim_session *s = sim->sessions[i];

		if (!s)
			continue;
		clients++;
		if (s->started && s->out_valid)
			streaming++;
	}
	sim->stats.clients = clients;
	sim->stats.streaming = streaming;
	sim_robot_summarize(&sim->robot, &sim->stats.robot);
	sim_ctrl_summarize(sim, &sim->stats.ctrl);
	*out = sim->stats;
}
