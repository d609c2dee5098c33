// SPDX-License-Identifier: MIT
/*
 * The motion backends: setpoints as UDP command datagrams (Doosan units),
 * as the RTDE command registers, and through the DRFL entry-point table,
 * tested against a fake DRFL that records every call.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/drfl_backend.h>
#include <rtloop/motion_backend.h>
#include <rtloop/rtde_cmd.h>

#define AUTO RTL_UDP_AUTO
#define DEG(x) ((x)*180.0 / M_PI)

static struct rtl_motion_output speed(enum rtl_motion_mode mode, enum rtl_motion_space space)
{
	struct rtl_motion_output o = { .mode = mode, .space = space };

	return o;
}

/* ---- UDP ---------------------------------------------------------------------------- */

Test(backend_udp, speedl_in_mm_and_deg_with_auto_for_constant_axes)
{
	struct rtl_motion_output o = speed(RTL_MOTION_SPEED_CARTESIAN, RTL_MOTION_CARTESIAN);
	struct rtl_udp_cmd c;

	o.vel[0] = 0.1;
	o.vel[5] = 0.5;
	o.acc[0] = -1.0;
	cr_assert_eq(rtl_motion_to_udp(&c, &o, 0.001), RTL_UDP_MODE_SPEEDL);
	cr_expect_float_eq(c.vel[0], 100.0, 1e-9);
	cr_expect_float_eq(c.vel[5], DEG(0.5), 1e-9);
	cr_expect_float_eq(c.acc[0], 1000.0, 1e-9, "the magnitude, in mm/s^2");
	cr_expect_eq(c.acc[1], AUTO, "no acceleration on the axis: AUTO");
	cr_expect_eq(c.target_time, 0.001);
}

Test(backend_udp, servoj_sends_pose_vel_and_signed_acc_in_deg)
{
	struct rtl_motion_output o = speed(RTL_MOTION_SERVO_JOINT, RTL_MOTION_JOINT);
	struct rtl_udp_cmd c;

	o.pose[1] = -M_PI / 2;
	o.vel[1] = 0.1;
	o.acc[1] = -0.2;
	cr_assert_eq(rtl_motion_to_udp(&c, &o, 0.02), RTL_UDP_MODE_SERVOJ);
	cr_expect_float_eq(c.pos[1], -90.0, 1e-9);
	cr_expect_float_eq(c.vel[1], DEG(0.1), 1e-9);
	cr_expect_float_eq(c.acc[1], DEG(-0.2), 1e-9);
	cr_expect_eq(c.target_time, 0.02);
}

Test(backend_udp, stopping_follows_the_profile_and_idle_is_a_stop)
{
	struct rtl_motion_output o = speed(RTL_MOTION_STOPPING, RTL_MOTION_JOINT);
	struct rtl_udp_cmd c;

	o.vel[0] = 0.05;
	o.acc[0] = -1.0;
	cr_assert_eq(rtl_motion_to_udp(&c, &o, 0.001), RTL_UDP_MODE_SPEEDJ);
	cr_expect_float_eq(c.vel[0], DEG(0.05), 1e-9);
	o = speed(RTL_MOTION_STOPPING, RTL_MOTION_CARTESIAN);
	cr_expect_eq(rtl_motion_to_udp(&c, &o, 0.001), RTL_UDP_MODE_SPEEDL);
	o = speed(RTL_MOTION_IDLE, RTL_MOTION_CARTESIAN);
	cr_assert_eq(rtl_motion_to_udp(&c, &o, 0.001), RTL_UDP_MODE_STOP);
	cr_expect_eq(c.acc[0], AUTO);
	cr_expect_eq(c.vel[0], 0.0);
}

Test(backend_udp, a_udp_state_becomes_the_measured_state_in_si)
{
	struct rtl_udp_state s = { 0 };
	struct rtl_motion_state m;

	for (int i = 0; i < 6; i++) {
		s.actual_joint_position[i] = (float)(10 * (i + 1));		/* deg */
		s.actual_joint_velocity[i] = (float)-i;				/* deg/s */
		s.actual_tcp_position[i] = (float)(i < 3 ? 100 * (i + 1) : 90); /* mm, deg */
		s.actual_tcp_velocity[i] = (float)(i < 3 ? 5 : 45);		/* mm/s, deg/s */
	}
	rtl_motion_from_udp(&m, &s);
	for (int i = 0; i < 6; i++) {
		cr_expect_float_eq(m.joint_pos[i], (i + 1) * M_PI / 18, 1e-6, "q%d", i);
		cr_expect_float_eq(m.joint_vel[i], -i * M_PI / 180, 1e-9, "qd%d", i);
		cr_expect_float_eq(m.tcp_pos[i], i < 3 ? 0.1 * (i + 1) : M_PI / 2, 1e-6, "tcp%d",
				   i);
		cr_expect_float_eq(m.tcp_vel[i], i < 3 ? 0.005 : M_PI / 4, 1e-9, "tcp speed %d", i);
	}
}

Test(backend_udp, bad_arguments)
{
	struct rtl_motion_output o = speed(RTL_MOTION_IDLE, RTL_MOTION_JOINT);
	struct rtl_udp_cmd c;

	cr_expect_eq(rtl_motion_to_udp(&c, NULL, 0.001), -EINVAL);
	cr_expect_eq(rtl_motion_to_udp(&c, &o, 0.0), -EINVAL);
	cr_expect_eq(rtl_motion_to_udp(&c, &o, NAN), -EINVAL);
	o.mode = (enum rtl_motion_mode)42;
	cr_expect_eq(rtl_motion_to_udp(&c, &o, 0.001), -EINVAL);
}

/* ---- RTDE ---------------------------------------------------------------------------- */

static struct rtl_rtde_recipe rec;
static _Alignas(8) unsigned char storage[512];
static struct rtl_rtde_frame fr;
static struct rtl_rtde_handle h_mode, h_seq, h_wd, h_p0, h_p1, h_acc, h_time;

static void rtde_setup(void)
{
	static const struct rtl_rtde_recipe_opts in = { sizeof(in), RTL_RTDE_RECIPE_INPUT, 0,
							RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };

	cr_assert_gt(rtl_rtde_recipe_from_list(&rec, &in, RTL_RTDE_CMD_RECIPE, NULL), 0);
	cr_assert_eq(rtl_rtde_frame_init(&fr, storage, sizeof(storage), &rec), 0);
	rtl_rtde_recipe_handle(&rec, &h_mode, RTL_RTDE_CMD_FIELD_MODE);
	rtl_rtde_recipe_handle(&rec, &h_seq, RTL_RTDE_CMD_FIELD_SEQ);
	rtl_rtde_recipe_handle(&rec, &h_wd, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	rtl_rtde_recipe_handle(&rec, &h_p0, RTL_RTDE_CMD_FIELD_PARAM0);
	rtl_rtde_recipe_handle(&rec, &h_p1, RTL_RTDE_CMD_FIELD_PARAM1);
	rtl_rtde_recipe_handle(&rec, &h_acc, RTL_RTDE_CMD_FIELD_ACCEL);
	rtl_rtde_recipe_handle(&rec, &h_time, RTL_RTDE_CMD_FIELD_TIME);
}

Test(backend_rtde, speedl_writes_si_registers_and_leaves_the_heartbeat_alone, .init = rtde_setup)
{
	struct rtl_motion_rtde b;
	struct rtl_motion_output o = speed(RTL_MOTION_SPEED_CARTESIAN, RTL_MOTION_CARTESIAN);

	cr_assert_eq(rtl_motion_rtde_init(&b, &rec, 2000000), 0);
	o.vel[0] = 0.1;
	o.vel[1] = -0.2;
	o.acc[0] = 3.0;
	o.acc[1] = 4.0;
	cr_assert_eq(rtl_motion_rtde_encode(&b, &fr, &o), RTL_RTDE_CMD_SPEEDL);
	cr_expect_eq(rtl_rtde_frame_get_int(&fr, h_mode), RTL_RTDE_CMD_SPEEDL);
	cr_expect_eq(rtl_rtde_frame_get_double(&fr, h_p0), 0.1);
	cr_expect_eq(rtl_rtde_frame_get_double(&fr, h_p1), -0.2);
	cr_expect_float_eq(rtl_rtde_frame_get_double(&fr, h_acc), 5.0, 1e-12,
			   "the translation's norm");
	cr_expect_eq(rtl_rtde_frame_get_int(&fr, h_wd), 0, "the executor's default watchdog");
	cr_expect_eq(rtl_rtde_frame_get_int(&fr, h_seq), 0, "the transport's field");
	/* A slow ramp is raised to the executor's default. */
	o.acc[0] = o.acc[1] = 0;
	rtl_motion_rtde_encode(&b, &fr, &o);
	cr_expect_eq(rtl_rtde_frame_get_double(&fr, h_acc), RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT);
}

Test(backend_rtde, servoj_idle_and_servol, .init = rtde_setup)
{
	struct rtl_motion_rtde b;
	struct rtl_motion_output o = speed(RTL_MOTION_SERVO_JOINT, RTL_MOTION_JOINT);

	cr_assert_eq(rtl_motion_rtde_init(&b, &rec, 2000000), 0);
	o.pose[0] = 1.25;
	cr_assert_eq(rtl_motion_rtde_encode(&b, &fr, &o), RTL_RTDE_CMD_SERVOJ);
	cr_expect_eq(rtl_rtde_frame_get_double(&fr, h_p0), 1.25);
	cr_expect_float_eq(rtl_rtde_frame_get_double(&fr, h_time), 0.002, 1e-15, "t = period");
	o = speed(RTL_MOTION_IDLE, RTL_MOTION_JOINT);
	cr_expect_eq(rtl_motion_rtde_encode(&b, &fr, &o), RTL_RTDE_CMD_IDLE);
	o = speed(RTL_MOTION_SERVO_CARTESIAN, RTL_MOTION_CARTESIAN);
	cr_expect_eq(rtl_motion_rtde_encode(&b, &fr, &o), -ENOTSUP);
	cr_expect_eq(rtl_rtde_frame_get_int(&fr, h_mode), RTL_RTDE_CMD_STOP, "stop instead");
}

Test(backend_rtde, init_needs_every_command_field)
{
	static const struct rtl_rtde_recipe_opts in = { sizeof(in), RTL_RTDE_RECIPE_INPUT, 0,
							RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };
	struct rtl_rtde_recipe r;
	struct rtl_motion_rtde b;

	cr_assert_gt(rtl_rtde_recipe_from_list(&r, &in, RTL_RTDE_CMD_FIELD_MODE, NULL), 0);
	cr_expect_eq(rtl_motion_rtde_init(&b, &r, 2000000), -ENOENT);
	cr_expect_eq(rtl_motion_rtde_init(&b, &r, 0), -EINVAL);
}

/* ---- DRFL, against a fake that records calls ---------------------------------------------- */

struct fake {
	char log[2048];
	const char *fail; /* the call that returns false */
	float last_vel[6], last_acc[6], last_pos[6], last_t, last_period;
	int last_loss;
	char last_ip[32];
	unsigned last_port;
	uint8_t state[RTL_UDP_STATE_SIZE];
	bool have_state;
};

static struct fake F;

static bool rec_call(const char *name)
{
	size_t n = strlen(F.log);

	snprintf(F.log + n, sizeof(F.log) - n, "%s%s", n ? " " : "", name);
	return !F.fail || strcmp(F.fail, name) != 0;
}

static bool f_connect(void *c, const char *ip, unsigned int port)
{
	snprintf(F.last_ip, sizeof(F.last_ip), "%s", ip);
	F.last_port = port;
	return rec_call("connect_rt_control");
}
static bool f_disconnect(void *c)
{
	return rec_call("disconnect_rt_control");
}
static bool f_set_in(void *c, const char *v, float p, int l)
{
	F.last_period = p;
	F.last_loss = l;
	return rec_call("set_rt_control_input");
}
static bool f_set_out(void *c, const char *v, float p, int l)
{
	cr_expect_str_eq(v, "v1.0");
	F.last_period = p;
	F.last_loss = l;
	return rec_call("set_rt_control_output");
}
static bool f_start(void *c)
{
	return rec_call("start_rt_control");
}
static bool f_stop(void *c)
{
	return rec_call("stop_rt_control");
}
static bool f_velx(void *c, float t, float r)
{
	F.last_vel[0] = t;
	F.last_vel[1] = r;
	return rec_call("set_velx_rt");
}
static bool f_accx(void *c, float t, float r)
{
	F.last_acc[0] = t;
	F.last_acc[1] = r;
	return rec_call("set_accx_rt");
}
static bool f_velj(void *c, float v[6])
{
	memcpy(F.last_vel, v, sizeof(F.last_vel));
	return rec_call("set_velj_rt");
}
static bool f_accj(void *c, float a[6])
{
	memcpy(F.last_acc, a, sizeof(F.last_acc));
	return rec_call("set_accj_rt");
}
static bool f_speedl(void *c, float v[6], float a[6], float t)
{
	memcpy(F.last_vel, v, sizeof(F.last_vel));
	memcpy(F.last_acc, a, sizeof(F.last_acc));
	F.last_t = t;
	return rec_call("speedl_rt");
}
static bool f_speedj(void *c, float v[6], float a[6], float t)
{
	memcpy(F.last_vel, v, sizeof(F.last_vel));
	memcpy(F.last_acc, a, sizeof(F.last_acc));
	F.last_t = t;
	return rec_call("speedj_rt");
}
static bool f_servol(void *c, float p[6], float v[6], float a[6], float t)
{
	memcpy(F.last_pos, p, sizeof(F.last_pos));
	return rec_call("servol_rt");
}
static bool f_servoj(void *c, float p[6], float v[6], float a[6], float t)
{
	memcpy(F.last_pos, p, sizeof(F.last_pos));
	F.last_t = t;
	return rec_call("servoj_rt");
}
static const void *f_read(void *c)
{
	rec_call("read_data_rt");
	return F.have_state ? F.state : NULL;
}

static const struct rtl_drfl_api fake_api = {
	.size = sizeof(fake_api),
	.ctx = &F,
	.connect_rt_control = f_connect,
	.disconnect_rt_control = f_disconnect,
	.set_rt_control_input = f_set_in,
	.set_rt_control_output = f_set_out,
	.start_rt_control = f_start,
	.stop_rt_control = f_stop,
	.set_velx_rt = f_velx,
	.set_accx_rt = f_accx,
	.set_velj_rt = f_velj,
	.set_accj_rt = f_accj,
	.speedl_rt = f_speedl,
	.speedj_rt = f_speedj,
	.servol_rt = f_servol,
	.servoj_rt = f_servoj,
	.read_data_rt = f_read,
};

static void fake_reset(void)
{
	memset(&F, 0, sizeof(F));
}

Test(backend_drfl, open_calls_in_doosans_order, .init = fake_reset)
{
	struct rtl_drfl_config cfg = {
		.size = sizeof(cfg), .host = "10.0.0.5", .velx = 0.25, .set_input = true
	};
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_drfl_api_connect(&fake_api, &cfg, &err), 0, "%s", err.msg);
	cr_expect_str_eq(F.log, "connect_rt_control set_rt_control_output set_rt_control_input "
				"set_velx_rt start_rt_control");
	cr_expect_str_eq(F.last_ip, "10.0.0.5");
	cr_expect_eq(F.last_port, 12347);
	cr_expect_float_eq(F.last_period, 0.001f, 1e-9);
	cr_expect_eq(F.last_loss, 4, "Doosan's samples use 4");
	cr_expect_float_eq(F.last_vel[0], 250.0f, 1e-3, "mm/s");
	cr_expect_eq(F.last_vel[1], -10000.0f, "rotational limit derived");
	F.log[0] = '\0';
	cr_expect_eq(rtl_drfl_api_disconnect(&fake_api), 0);
	cr_expect_str_eq(F.log, "stop_rt_control disconnect_rt_control");
}

Test(backend_drfl, output_only_by_default_and_joint_limits_in_deg, .init = fake_reset)
{
	struct rtl_drfl_config cfg = { .size = sizeof(cfg), .period_s = 0.002, .loss_count = -1 };

	cfg.velj[0] = M_PI;
	cr_assert_eq(rtl_drfl_api_connect(&fake_api, &cfg, NULL), 0);
	cr_expect_str_eq(F.log,
			 "connect_rt_control set_rt_control_output set_velj_rt start_rt_control");
	cr_expect_str_eq(F.last_ip, "192.168.137.100");
	cr_expect_eq(F.last_loss, -1);
	cr_expect_float_eq(F.last_vel[0], 180.0f, 1e-3);
}

Test(backend_drfl, a_failed_call_disconnects_and_is_named, .init = fake_reset)
{
	struct rtl_drfl_config cfg = { .size = sizeof(cfg) };
	struct rtl_error err = { 0 };

	F.fail = "start_rt_control";
	cr_expect_eq(rtl_drfl_api_connect(&fake_api, &cfg, &err), -EIO);
	cr_expect_str_eq(F.log, "connect_rt_control set_rt_control_output start_rt_control "
				"disconnect_rt_control");
	cr_expect(strstr(err.msg, "start_rt_control") != NULL, "%s", err.msg);
	fake_reset();
	F.fail = "connect_rt_control";
	cr_expect_eq(rtl_drfl_api_connect(&fake_api, &cfg, &err), -ECONNREFUSED);
	cr_expect_str_eq(F.log, "connect_rt_control", "nothing after a failed connect");
	cfg.period_s = 2.0;
	cr_expect_eq(rtl_drfl_api_connect(&fake_api, &cfg, &err), -EINVAL);
}

Test(backend_drfl, incomplete_table_is_refused, .init = fake_reset)
{
	struct rtl_drfl_api a = fake_api;
	struct rtl_drfl_config cfg = { .size = sizeof(cfg) };

	a.read_data_rt = NULL;
	cr_expect_eq(rtl_drfl_api_connect(&a, &cfg, NULL), -EINVAL);
	cr_expect_str_eq(F.log, "");
}

Test(backend_drfl, setpoints_become_the_rt_calls, .init = fake_reset)
{
	struct rtl_motion_output o = speed(RTL_MOTION_SPEED_CARTESIAN, RTL_MOTION_CARTESIAN);

	o.vel[1] = 0.05;
	o.acc[1] = 0.5;
	cr_expect_eq(rtl_drfl_api_send(&fake_api, &o, 0.001), RTL_UDP_MODE_SPEEDL);
	cr_expect_float_eq(F.last_vel[1], 50.0f, 1e-4, "mm/s");
	cr_expect_float_eq(F.last_acc[1], 500.0f, 1e-3);
	cr_expect_eq(F.last_acc[0], -10000.0f, "constant axes: AUTO");
	cr_expect_float_eq(F.last_t, 0.001f, 1e-9);
	o = speed(RTL_MOTION_SERVO_JOINT, RTL_MOTION_JOINT);
	o.pose[2] = M_PI / 2;
	cr_expect_eq(rtl_drfl_api_send(&fake_api, &o, 0.02), RTL_UDP_MODE_SERVOJ);
	cr_expect_float_eq(F.last_pos[2], 90.0f, 1e-4);
	o = speed(RTL_MOTION_SERVO_CARTESIAN, RTL_MOTION_CARTESIAN);
	cr_expect_eq(rtl_drfl_api_send(&fake_api, &o, 0.02), RTL_UDP_MODE_SERVOL);
	o = speed(RTL_MOTION_IDLE, RTL_MOTION_CARTESIAN);
	cr_expect_eq(rtl_drfl_api_send(&fake_api, &o, 0.001), RTL_UDP_MODE_STOP);
	cr_expect_str_eq(F.log, "speedl_rt servoj_rt servol_rt speedj_rt",
			 "idle: zero joint velocity");
	cr_expect_eq(F.last_vel[0], 0.0f);
	F.fail = "speedj_rt";
	o = speed(RTL_MOTION_SPEED_JOINT, RTL_MOTION_JOINT);
	cr_expect_eq(rtl_drfl_api_send(&fake_api, &o, 0.001), -EIO);
}

Test(backend_drfl, read_decodes_the_packed_layout, .init = fake_reset)
{
	static struct rtl_udp_state in, out;

	cr_expect_eq(rtl_drfl_api_read(&fake_api, &out), -ENODATA);
	in.time_stamp = 12.5;
	in.actual_joint_position[3] = -45.0f;
	in.robot_state = 2;
	cr_assert_eq(rtl_udp_state_encode(&in, F.state, sizeof(F.state)), RTL_UDP_STATE_SIZE);
	F.have_state = true;
	cr_assert_eq(rtl_drfl_api_read(&fake_api, &out), 0);
	cr_expect_eq(out.time_stamp, 12.5);
	cr_expect_eq(out.actual_joint_position[3], -45.0f);
	cr_expect_eq(out.robot_state, 2);
}
