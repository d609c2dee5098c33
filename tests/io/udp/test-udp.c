// SPDX-License-Identifier: MIT
/*
 * The UDP wire format: the Doosan v1.0 state layout (offsets and sizes
 * from docs/doosan-rt.md 4.1, which sum to 1,338), little-endian byte
 * vectors written by hand, round trips, and the exact error codes for
 * malformed datagrams; ALARM's text rules, LIMITS' value rules and HELLO's
 * loss count.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <rtloop/udp.h>

#include "alloc-count.h"

/* The layout as docs/doosan-rt.md 4.1 tabulates it: name, offset, bytes. */
static const struct {
	const char *name;
	unsigned off, bytes;
} doc[] = {
	{ "time_stamp", 0, 8 },
	{ "actual_joint_position", 8, 24 },
	{ "actual_joint_position_abs", 32, 24 },
	{ "actual_joint_velocity", 56, 24 },
	{ "actual_joint_velocity_abs", 80, 24 },
	{ "actual_tcp_position", 104, 24 },
	{ "actual_tcp_velocity", 128, 24 },
	{ "actual_flange_position", 152, 24 },
	{ "actual_flange_velocity", 176, 24 },
	{ "actual_motor_torque", 200, 24 },
	{ "actual_joint_torque", 224, 24 },
	{ "raw_joint_torque", 248, 24 },
	{ "raw_force_torque", 272, 24 },
	{ "external_joint_torque", 296, 24 },
	{ "external_tcp_force", 320, 24 },
	{ "target_joint_position", 344, 24 },
	{ "target_joint_velocity", 368, 24 },
	{ "target_joint_acceleration", 392, 24 },
	{ "target_motor_torque", 416, 24 },
	{ "target_tcp_position", 440, 24 },
	{ "target_tcp_velocity", 464, 24 },
	{ "jacobian_matrix", 488, 144 },
	{ "gravity_torque", 632, 24 },
	{ "coriolis_matrix", 656, 144 },
	{ "mass_matrix", 800, 144 },
	{ "solution_space", 944, 2 },
	{ "singularity", 946, 4 },
	{ "operation_speed_rate", 950, 4 },
	{ "joint_temperature", 954, 24 },
	{ "controller_digital_input", 978, 2 },
	{ "controller_digital_output", 980, 2 },
	{ "controller_analog_input_type", 982, 2 },
	{ "controller_analog_input", 984, 8 },
	{ "controller_analog_output_type", 992, 2 },
	{ "controller_analog_output", 994, 8 },
	{ "flange_digital_input", 1002, 1 },
	{ "flange_digital_output", 1003, 1 },
	{ "flange_analog_input", 1004, 16 },
	{ "external_encoder_strobe_count", 1020, 2 },
	{ "external_encoder_count", 1022, 8 },
	{ "goal_joint_position", 1030, 24 },
	{ "goal_tcp_position", 1054, 24 },
	{ "robot_mode", 1078, 1 },
	{ "robot_state", 1079, 1 },
	{ "control_mode", 1080, 2 },
	{ "reserved", 1082, 256 },
};
#define N_DOC (sizeof(doc) / sizeof(doc[0]))

static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 64];

Test(udp_wire, layout_matches_the_documented_table)
{
	size_t n;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);

	cr_assert_eq(n, N_DOC);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(f[i].name, doc[i].name);
		cr_expect_eq(f[i].offset, doc[i].off, "%s at %u, documented %u", f[i].name,
			     f[i].offset, doc[i].off);
		cr_expect_eq(f[i].size, doc[i].bytes, "%s", f[i].name);
		cr_expect_eq(f[i].size,
			     f[i].count * rtl_udp_elem_size((enum rtl_udp_elem)f[i].type), "%s",
			     f[i].name);
	}
}

Test(udp_wire, offsets_are_contiguous_and_sum_to_1338)
{
	size_t n, total = 0;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);

	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(f[i].offset, total, "%s starts at %u, the previous row ended at %zu",
			     f[i].name, f[i].offset, total);
		total += f[i].size;
	}
	cr_expect_eq(total, 1338);
	cr_expect_eq(RTL_UDP_STATE_SIZE, 1338);
}

Test(udp_wire, host_fields_hold_their_wire_size)
{
	size_t n;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);

	for (size_t i = 0; i < n; i++)
		cr_expect_leq(f[i].host_offset + f[i].size, sizeof(struct rtl_udp_state), "%s",
			      f[i].name);
	cr_expect_eq(f[0].host_offset, offsetof(struct rtl_udp_state, time_stamp));
	cr_expect_eq(f[N_DOC - 1].host_offset, offsetof(struct rtl_udp_state, reserved));
}

Test(udp_wire, state_encodes_little_endian_at_the_documented_offsets)
{
	static struct rtl_udp_state s;
	uint8_t out[RTL_UDP_STATE_SIZE];
	static const uint8_t ts[8] = { 0, 0, 0, 0, 0, 0, 0xf8, 0x3f }; /* 1.5 */
	static const uint8_t one_f[4] = { 0, 0, 0x80, 0x3f };	       /* 1.0f */
	static const uint8_t two_f[4] = { 0, 0, 0, 0x40 };	       /* 2.0f */
	static const uint8_t m90_f[4] = { 0, 0, 0xb4, 0xc2 };	       /* -90.0f */

	memset(&s, 0, sizeof(s));
	s.time_stamp = 1.5;
	s.actual_joint_position[0] = 1.0f;
	s.actual_tcp_position[5] = -90.0f;
	s.jacobian_matrix[1][2] = 2.0f;
	s.solution_space = 0x0102;
	s.external_encoder_count[1] = 0xa1b2c3d4u;
	s.robot_state = 6;
	s.control_mode = 3;
	s.reserved[255] = 0x5a;
	cr_assert_eq(rtl_udp_state_encode(&s, out, sizeof(out)), 1338);
	cr_expect_arr_eq(out + 0, ts, 8);
	cr_expect_arr_eq(out + 8, one_f, 4);
	cr_expect_arr_eq(out + 104 + 5 * 4, m90_f, 4);
	cr_expect_arr_eq(out + 488 + (6 * 1 + 2) * 4, two_f, 4);
	cr_expect_eq(out[944], 0x02);
	cr_expect_eq(out[945], 0x01);
	cr_expect_eq(out[1026], 0xd4);
	cr_expect_eq(out[1027], 0xc3);
	cr_expect_eq(out[1028], 0xb2);
	cr_expect_eq(out[1029], 0xa1);
	cr_expect_eq(out[1079], 6);
	cr_expect_eq(out[1080], 3);
	cr_expect_eq(out[1081], 0);
	cr_expect_eq(out[1337], 0x5a);
}

Test(udp_wire, state_decodes_a_hand_built_vector)
{
	uint8_t in[RTL_UDP_STATE_SIZE] = { 0 };
	static struct rtl_udp_state s;

	/* time_stamp = 2.0 */
	in[7] = 0x40;
	/* actual_joint_velocity[2] = 2.0f at 56 + 8 */
	in[56 + 8 + 3] = 0x40;
	/* mass_matrix[5][5] = 1.0f at 800 + 35 * 4 */
	in[800 + 140 + 2] = 0x80;
	in[800 + 140 + 3] = 0x3f;
	/* controller_digital_output = 0x8001 */
	in[980] = 0x01;
	in[981] = 0x80;
	/* controller_analog_output_type = { 1, 0 } */
	in[992] = 1;
	/* flange_digital_output = 0x3c */
	in[1003] = 0x3c;
	/* external_encoder_strobe_count[1] = 7 */
	in[1021] = 7;
	/* robot_mode = 1 */
	in[1078] = 1;
	cr_assert_eq(rtl_udp_state_decode(&s, in, sizeof(in)), 1338);
	cr_expect_eq(s.time_stamp, 2.0);
	cr_expect_eq(s.actual_joint_velocity[2], 2.0f);
	cr_expect_eq(s.actual_joint_velocity[1], 0.0f);
	cr_expect_eq(s.mass_matrix[5][5], 1.0f);
	cr_expect_eq(s.controller_digital_output, 0x8001);
	cr_expect_eq(s.controller_analog_output_type[0], 1);
	cr_expect_eq(s.flange_digital_output, 0x3c);
	cr_expect_eq(s.external_encoder_strobe_count[1], 7);
	cr_expect_eq(s.robot_mode, 1);
}

Test(udp_wire, state_bytes_round_trip)
{
	uint8_t in[RTL_UDP_STATE_SIZE], out[RTL_UDP_STATE_SIZE];
	static struct rtl_udp_state s;
	uint32_t x = 12345;

	/* Pseudo-random bytes, keeping every float and double finite (the
	 * exponent's top bit clear), so no NaN payload is at stake. */
	for (size_t i = 0; i < sizeof(in); i++) {
		x = x * 1103515245u + 12345u;
		in[i] = (uint8_t)(x >> 16);
	}
	for (size_t i = 0, n = 0; i < (rtl_udp_state_fields(&n), n); i++) {
		const struct rtl_udp_field *f = &rtl_udp_state_fields(NULL)[i];
		unsigned esz = rtl_udp_elem_size((enum rtl_udp_elem)f->type);

		if (f->type != RTL_UDP_F32 && f->type != RTL_UDP_F64)
			continue;
		for (unsigned e = 0; e < f->count; e++)
			in[f->offset + e * esz + esz - 1] &= 0x3f;
	}
	cr_assert_eq(rtl_udp_state_decode(&s, in, sizeof(in)), 1338);
	cr_assert_eq(rtl_udp_state_encode(&s, out, sizeof(out)), 1338);
	cr_expect_arr_eq(in, out, sizeof(in));
}

Test(udp_wire, state_length_errors)
{
	static struct rtl_udp_state s;
	uint8_t out[RTL_UDP_STATE_SIZE] = { 0 };

	cr_expect_eq(rtl_udp_state_decode(&s, out, 1337), -EMSGSIZE);
	cr_expect_eq(rtl_udp_state_decode(&s, out, 1339), -EMSGSIZE);
	cr_expect_eq(rtl_udp_state_decode(&s, NULL, 1338), -EINVAL);
	cr_expect_eq(rtl_udp_state_encode(&s, out, 1337), -ENOSPC);
	cr_expect_eq(rtl_udp_state_encode(NULL, out, 1338), -EINVAL);
}

Test(udp_wire, header_bytes)
{
	static struct rtl_udp_state s;
	static const uint8_t head[32] = {
		'R',  'T',  'L',  'U',	1,    3,    0,	  0,	/* magic, version, STATE */
		0x3a, 0x05, 0,	  0,	0,    0,    0,	  0,	/* 1338, reserved */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* seq */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* send_ns = -1 */
	};
	struct rtl_udp_header h;

	cr_assert_eq(rtl_udp_encode_state(buf, sizeof(buf), 0x0102030405060708ull, -1, &s),
		     32 + 1338);
	cr_expect_arr_eq(buf, head, 32);
	cr_assert_eq(rtl_udp_decode_header(&h, buf, 32 + 1338), 32);
	cr_expect_eq(h.version, 1);
	cr_expect_eq(h.type, RTL_UDP_STATE);
	cr_expect_eq(h.length, 1338);
	cr_expect_eq(h.seq, 0x0102030405060708ull);
	cr_expect_eq(h.send_ns, -1);
}

Test(udp_wire, bad_datagrams_have_clear_errors)
{
	static struct rtl_udp_state s;
	struct rtl_udp_header h;
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDL };
	int n = rtl_udp_encode_state(buf, sizeof(buf), 1, 1, &s);

	cr_assert_eq(n, 1370);
	cr_expect_eq(rtl_udp_decode_header(&h, buf, 31), -EMSGSIZE, "shorter than a header");
	cr_expect_eq(rtl_udp_decode_header(&h, buf, (size_t)n - 1), -EMSGSIZE, "truncated");
	cr_expect_eq(rtl_udp_decode_state(&h, &s, buf, (size_t)n + 1), -EMSGSIZE, "trailing byte");
	cr_expect_eq(rtl_udp_decode_header(&h, NULL, 32), -EINVAL);
	buf[0] = 'X';
	cr_expect_eq(rtl_udp_decode_header(&h, buf, (size_t)n), -EBADMSG, "magic");
	buf[0] = 'R';
	buf[4] = 2;
	cr_expect_eq(rtl_udp_decode_header(&h, buf, (size_t)n), -EPROTONOSUPPORT, "version");
	buf[4] = 1;
	buf[5] = 9;
	cr_expect_eq(rtl_udp_decode_header(&h, buf, (size_t)n), -EPROTO, "type");
	buf[5] = RTL_UDP_STATE;
	buf[8] = 0x39; /* length 1337 in a 1370-byte datagram */
	cr_expect_eq(rtl_udp_decode_header(&h, buf, (size_t)n), -EMSGSIZE, "length field");
	buf[8] = 0x3a;
	cr_expect_eq(rtl_udp_decode_state(&h, &s, buf, (size_t)n), n, "repaired");
	/* A command is not a state, and vice versa. */
	n = rtl_udp_encode_command(buf, sizeof(buf), 1, 1, &c);
	cr_assert_eq(n, 32 + 176);
	cr_expect_eq(rtl_udp_decode_state(&h, &s, buf, (size_t)n), -EPROTO);
	/* A command payload cut to a state's length field is no state. */
	cr_expect_eq(rtl_udp_encode_state(buf, 100, 1, 1, &s), -ENOSPC);
	cr_expect_eq(rtl_udp_encode_command(buf, 207, 1, 1, &c), -ENOSPC);
	c.mode = RTL_UDP_MODE_COUNT;
	cr_expect_eq(rtl_udp_encode_command(buf, sizeof(buf), 1, 1, &c), -EINVAL);
}

Test(udp_wire, command_bytes_and_round_trip)
{
	struct rtl_udp_cmd c = { 0 }, d;
	struct rtl_udp_header h;
	static const uint8_t tt[8] = { 0x7b, 0x14, 0xae, 0x47, 0xe1, 0x7a, 0x84, 0x3f }; /* 0.01 */
	static const uint8_t auto_acc[8] = { 0, 0, 0, 0, 0, 0x88, 0xc3, 0xc0 }; /* -10000 */
	uint8_t *p = buf + 32;

	c.mode = RTL_UDP_MODE_SPEEDL;
	c.echo_seq = 77;
	c.echo_ns = 123456789;
	c.target_time = 0.01;
	for (int i = 0; i < 6; i++) {
		c.pos[i] = i;
		c.vel[i] = 10.0 * i;
		c.acc[i] = RTL_UDP_AUTO;
	}
	cr_assert_eq(rtl_udp_encode_command(buf, sizeof(buf), 5, 6, &c), 208);
	cr_expect_eq(buf[5], RTL_UDP_COMMAND);
	cr_expect_eq(buf[8], 176);
	cr_expect_eq(p[0], RTL_UDP_MODE_SPEEDL);
	cr_expect_eq(p[8], 77);
	cr_expect_arr_eq(p + 24, tt, 8);
	cr_expect_arr_eq(p + 128 + 40, auto_acc, 8);
	/* vel[1] = 10.0 = 0x4024000000000000 */
	cr_expect_eq(p[80 + 8 + 7], 0x40);
	cr_expect_eq(p[80 + 8 + 6], 0x24);
	cr_assert_eq(rtl_udp_decode_command(&h, &d, buf, 208), 208);
	cr_expect_eq(h.seq, 5);
	cr_expect_eq(h.send_ns, 6);
	cr_expect_eq(d.mode, c.mode);
	cr_expect_eq(d.echo_seq, 77);
	cr_expect_eq(d.echo_ns, 123456789);
	cr_expect_eq(d.target_time, 0.01);
	cr_expect_arr_eq(d.pos, c.pos, sizeof(c.pos));
	cr_expect_arr_eq(d.vel, c.vel, sizeof(c.vel));
	cr_expect_arr_eq(d.acc, c.acc, sizeof(c.acc));
	p[0] = 6;
	cr_expect_eq(rtl_udp_decode_command(&h, &d, buf, 208), -EPROTO, "unknown mode");
}

Test(udp_wire, command_target_time_must_be_a_duration)
{
	static const double refused[] = { -1.0, -1e-9, RTL_UDP_AUTO, NAN, INFINITY, -INFINITY };
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDL };

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		c.target_time = refused[i];
		cr_expect_eq(rtl_udp_encode_command(buf, sizeof(buf), 1, 1, &c), -EINVAL,
			     "target_time %g", refused[i]);
	}
	/* 0 (and anything up to one period) means "at once": valid. */
	c.target_time = 0;
	cr_expect_eq(rtl_udp_encode_command(buf, sizeof(buf), 1, 1, &c), 208);
	c.target_time = 3600;
	cr_expect_eq(rtl_udp_encode_command(buf, sizeof(buf), 1, 1, &c), 208);
}

Test(udp_wire, hello_pads_the_schema)
{
	struct rtl_udp_hello hi = { .period_ns = 1000000 }, out;
	struct rtl_udp_header h;

	memcpy(hi.schema, "v1.0\0xyz", 8);
	cr_assert_eq(rtl_udp_encode_hello(buf, sizeof(buf), RTL_UDP_HELLO, 0, 0, &hi), 48);
	cr_expect_arr_eq(buf + 32, "v1.0\0\0\0\0", 8, "no stray bytes after the NUL");
	cr_expect_eq(buf[40], 0x40);
	cr_expect_eq(buf[41], 0x42);
	cr_expect_eq(buf[42], 0x0f);
	cr_assert_eq(rtl_udp_decode_hello(&h, &out, buf, 48), 48);
	cr_expect_str_eq(out.schema, "v1.0");
	cr_expect_eq(out.period_ns, 1000000);
	cr_expect_eq(rtl_udp_encode_hello(buf, sizeof(buf), RTL_UDP_STATE, 0, 0, &hi), -EINVAL);
	cr_assert_eq(rtl_udp_encode_bye(buf, sizeof(buf), 3, 4), 32);
	cr_expect_eq(rtl_udp_decode_hello(&h, &out, buf, 32), -EPROTO, "a bye is no hello");
	cr_expect_eq(rtl_udp_decode_header(&h, buf, 32), 32);
	cr_expect_eq(h.type, RTL_UDP_BYE);
}

Test(udp_wire, hello_carries_the_loss_count)
{
	static const int32_t counts[] = { 0, 4, -1, INT32_MAX, INT32_MIN };
	struct rtl_udp_hello hi = { .schema = "v1.0", .period_ns = 2000000 }, out;
	struct rtl_udp_header h;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		hi.loss_count = counts[i];
		cr_assert_eq(rtl_udp_encode_hello(buf, sizeof(buf), RTL_UDP_WELCOME, 9, 10, &hi),
			     48);
		/* i32 at payload offset 12, little-endian two's complement */
		cr_expect_eq((uint32_t)buf[44] | (uint32_t)buf[45] << 8 | (uint32_t)buf[46] << 16 |
				     (uint32_t)buf[47] << 24,
			     (uint32_t)counts[i]);
		memset(&out, 0x55, sizeof(out));
		cr_assert_eq(rtl_udp_decode_hello(&h, &out, buf, 48), 48);
		cr_expect_eq(h.type, RTL_UDP_WELCOME);
		cr_expect_eq(out.loss_count, counts[i], "loss_count %d", counts[i]);
		cr_expect_eq(out.period_ns, 2000000);
	}
}

Test(udp_wire, alarm_bytes_and_round_trip)
{
	struct rtl_udp_alarm a = { .level = RTL_UDP_ALARM_ERROR,
				   .group = RTL_UDP_ALARM_GROUP_RT,
				   .code = RTL_UDP_ALARM_LOSS },
			     d;
	struct rtl_udp_header h;
	static const uint8_t head[8] = { 'R', 'T', 'L', 'U', 1, RTL_UDP_ALARM, 0, 0 };
	uint8_t *p = buf + 32;

	strcpy(a.text, "loss count: session ended");
	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(rtl_udp_encode_alarm(buf, sizeof(buf), 0x0102, -2, &a), 32 + 128);
	cr_expect_arr_eq(buf, head, 8);
	cr_expect_eq(buf[8], 128);
	cr_expect_eq(buf[16], 0x02);
	cr_expect_eq(buf[17], 0x01);
	cr_expect_eq(p[0], RTL_UDP_ALARM_ERROR, "level at 0");
	cr_expect_eq(p[1], RTL_UDP_ALARM_GROUP_RT, "group at 1");
	cr_expect_eq(p[2] | p[3], 0, "reserved u16");
	cr_expect_eq(p[4], RTL_UDP_ALARM_LOSS, "u32 code at 4");
	cr_expect_eq(p[5] | p[6] | p[7], 0);
	cr_expect_arr_eq(p + 8, "loss count: session ended", 25);
	for (int i = 8 + 25; i < 128; i++)
		cr_expect_eq(p[i], 0, "NUL padding at payload byte %d", i);
	memset(&d, 0x55, sizeof(d));
	cr_assert_eq(rtl_udp_decode_alarm(&h, &d, buf, 160), 160);
	cr_expect_eq(h.type, RTL_UDP_ALARM);
	cr_expect_eq(h.seq, 0x0102);
	cr_expect_eq(h.send_ns, -2);
	cr_expect_eq(d.level, a.level);
	cr_expect_eq(d.group, a.group);
	cr_expect_eq(d.code, a.code);
	cr_expect_str_eq(d.text, a.text);
	cr_expect_eq(d.text[RTL_UDP_ALARM_TEXT - 1], 0);
	/* A code above 255 and a level the codec does not name travel as
	 * they are: a client reports what comes. */
	a.code = 0xa1b2c3d4u;
	a.level = 7;
	cr_assert_eq(rtl_udp_encode_alarm(buf, sizeof(buf), 1, 1, &a), 160);
	cr_expect_eq(p[4], 0xd4);
	cr_expect_eq(p[7], 0xa1);
	cr_assert_eq(rtl_udp_decode_alarm(NULL, &d, buf, 160), 160);
	cr_expect_eq(d.code, 0xa1b2c3d4u);
	cr_expect_eq(d.level, 7);
	/* An alarm is no LIMITS datagram; sizes and pointers. */
	cr_expect_eq(rtl_udp_decode_limits(&h, &(struct rtl_udp_limits){ 0 }, buf, 160), -EPROTO);
	cr_expect_eq(rtl_udp_encode_alarm(buf, 159, 1, 1, &a), -ENOSPC);
	cr_expect_eq(rtl_udp_encode_alarm(buf, sizeof(buf), 1, 1, NULL), -EINVAL);
	cr_expect_eq(rtl_udp_decode_alarm(&h, NULL, buf, 160), -EINVAL);
	cr_expect_eq(rtl_udp_decode_alarm(&h, &d, buf, 159), -EMSGSIZE);
}

Test(udp_wire, alarm_text_is_cut_at_119_bytes)
{
	struct rtl_udp_alarm a = { .code = 1 }, d;

	memset(a.text, 'x', sizeof(a.text)); /* no NUL at all */
	cr_assert_eq(rtl_udp_encode_alarm(buf, sizeof(buf), 1, 1, &a), 160);
	for (int i = 0; i < RTL_UDP_ALARM_TEXT - 1; i++)
		cr_expect_eq(buf[40 + i], 'x');
	cr_expect_eq(buf[40 + RTL_UDP_ALARM_TEXT - 1], 0, "the last text byte is the NUL");
	/* A peer's text without a NUL: byte 119 is read as one. */
	memset(buf + 40, 'y', RTL_UDP_ALARM_TEXT);
	cr_assert_eq(rtl_udp_decode_alarm(NULL, &d, buf, 160), 160);
	cr_expect_eq(strlen(d.text), RTL_UDP_ALARM_TEXT - 1);
	cr_expect_eq(d.text[0], 'y');
}

Test(udp_wire, alarm_text_non_printable_bytes_become_question_marks)
{
	struct rtl_udp_alarm a = { .level = RTL_UDP_ALARM_WARN, .group = 1, .code = 5 }, d;

	strcpy(a.text, "servol: not modelled");
	cr_assert_eq(rtl_udp_encode_alarm(buf, sizeof(buf), 1, 1, &a), 160);
	buf[40 + 6] = 0x1b; /* ESC for the ':' */
	buf[40 + 7] = 0x7f; /* DEL for the space */
	buf[40 + 8] = 0xc3; /* a byte of UTF-8 for the 'n' */
	buf[40 + 30] = 'z'; /* after the NUL: not read */
	memset(&d, 0x55, sizeof(d));
	cr_assert_eq(rtl_udp_decode_alarm(NULL, &d, buf, 160), 160);
	cr_expect_str_eq(d.text, "servol???ot modelled");
	for (size_t i = strlen(d.text); i < sizeof(d.text); i++)
		cr_expect_eq(d.text[i], 0, "NUL padded at %zu", i);
	/* The printable range's ends stay: 0x20 and 0x7e. */
	memset(buf + 40, 0, RTL_UDP_ALARM_TEXT);
	buf[40] = 0x20;
	buf[41] = 0x7e;
	buf[42] = 0x1f;
	cr_assert_eq(rtl_udp_decode_alarm(NULL, &d, buf, 160), 160);
	cr_expect_str_eq(d.text, " ~?");
}

static const struct rtl_udp_limits some_limits = {
	.velx = { 250, RTL_UDP_AUTO },
	.accx = { 2500, 0 },
	.velj = { 60, 60, 60, 90, 90, 90 },
	.accj = { 0, 1, 2, 3, 4, 5 },
};

Test(udp_wire, limits_bytes_and_round_trip)
{
	struct rtl_udp_limits d;
	struct rtl_udp_header h;
	static const uint8_t v250[8] = { 0, 0, 0, 0, 0, 0x40, 0x6f, 0x40 };  /* 250.0 */
	static const uint8_t auto_[8] = { 0, 0, 0, 0, 0, 0x88, 0xc3, 0xc0 }; /* -10000 */
	static const uint8_t v90[8] = { 0, 0, 0, 0, 0, 0x80, 0x56, 0x40 };   /* 90.0 */
	static const uint8_t v5[8] = { 0, 0, 0, 0, 0, 0, 0x14, 0x40 };	     /* 5.0 */
	uint8_t *p = buf + 32;

	cr_assert_eq(rtl_udp_encode_limits(buf, sizeof(buf), 3, 4, &some_limits), 32 + 128);
	cr_expect_eq(buf[5], RTL_UDP_LIMITS);
	cr_expect_eq(buf[8], 128);
	cr_expect_arr_eq(p + 0, v250, 8, "velx[0] at 0");
	cr_expect_arr_eq(p + 8, auto_, 8, "velx[1] at 8: AUTO");
	cr_expect_eq(p[16 + 7], 0x40, "accx[0] = 2500 at 16");
	cr_expect_eq(p[16 + 6], 0xa3);
	cr_expect_arr_eq(p + 24, (uint8_t[8]){ 0 }, 8, "accx[1] = 0 at 24");
	cr_expect_arr_eq(p + 32 + 3 * 8, v90, 8, "velj[3] at 56");
	cr_expect_arr_eq(p + 80 + 5 * 8, v5, 8, "accj[5] at 120");
	memset(&d, 0x55, sizeof(d));
	cr_assert_eq(rtl_udp_decode_limits(&h, &d, buf, 160), 160);
	cr_expect_eq(h.seq, 3);
	cr_expect_eq(h.send_ns, 4);
	cr_expect_arr_eq(&d, &some_limits, sizeof(d));
	cr_expect_eq(rtl_udp_encode_limits(buf, 159, 1, 1, &some_limits), -ENOSPC);
	cr_expect_eq(rtl_udp_decode_limits(&h, NULL, buf, 160), -EINVAL);
}

/* The value at wire index @i of a LIMITS payload (0 velx[0] ... 15 accj[5]). */
static double *limit_at(struct rtl_udp_limits *l, int i)
{
	return i < 2	? &l->velx[i]
	       : i < 4	? &l->accx[i - 2]
	       : i < 10 ? &l->velj[i - 4]
			: &l->accj[i - 10];
}

Test(udp_wire, limits_refuse_nan_infinite_and_negative_values)
{
	static const double bad[] = { NAN, INFINITY, -INFINITY, -1.0, -1e-300 };
	struct rtl_udp_limits l, d;

	for (int i = 0; i < 16; i++)
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			l = some_limits;
			*limit_at(&l, i) = bad[k];
			cr_expect_eq(rtl_udp_encode_limits(buf, sizeof(buf), 1, 1, &l), -EINVAL,
				     "value %d = %g", i, bad[k]);
			/* The same bytes from a peer: -EDOM, whole datagram. */
			l = some_limits;
			cr_assert_eq(rtl_udp_encode_limits(buf, sizeof(buf), 1, 1, &l), 160);
			memcpy(buf + 32 + 8 * i, &bad[k], 8); /* little-endian host */
			cr_expect_eq(rtl_udp_decode_limits(NULL, &d, buf, 160), -EDOM,
				     "value %d = %g", i, bad[k]);
		}
	/* AUTO only where Doosan allows it: the rotational velx[1], accx[1]. */
	for (int i = 0; i < 16; i++) {
		l = some_limits;
		*limit_at(&l, i) = RTL_UDP_AUTO;
		cr_expect_eq(rtl_udp_encode_limits(buf, sizeof(buf), 1, 1, &l),
			     i == 1 || i == 3 ? 160 : -EINVAL, "AUTO at %d", i);
	}
	/* 0 (keep) everywhere is valid. */
	memset(&l, 0, sizeof(l));
	cr_expect_eq(rtl_udp_encode_limits(buf, sizeof(buf), 1, 1, &l), 160);
	cr_expect_eq(rtl_udp_decode_limits(NULL, &d, buf, 160), 160);
}

Test(udp_wire, names)
{
	cr_expect_str_eq(rtl_udp_type_name(RTL_UDP_STATE), "state");
	cr_expect_str_eq(rtl_udp_type_name((enum rtl_udp_type)0), "?");
	cr_expect_str_eq(rtl_udp_mode_name(RTL_UDP_MODE_SPEEDL), "speedl");
	cr_expect_str_eq(rtl_udp_mode_name((enum rtl_udp_mode)9), "?");
	cr_expect_str_eq(rtl_udp_type_name(RTL_UDP_ALARM), "alarm");
	cr_expect_str_eq(rtl_udp_type_name(RTL_UDP_LIMITS), "limits");
	cr_expect_str_eq(rtl_udp_type_name((enum rtl_udp_type)8), "?");
}

/* ---- RT safety: the codec never allocates ----------------------------------- */

Test(udp_wire, codec_does_not_allocate)
{
	static struct rtl_udp_state s;
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_STOP };
	struct rtl_udp_alarm a = { .text = "an alarm" };
	struct rtl_udp_limits l;
	struct rtl_udp_header h;
	long allocs;

	/* Positive control: the counter sees an allocation, so a zero below
	 * means something (tests/common/alloc-count.h). */
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");
	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int i = 0; i < 100; i++) {
		rtl_udp_encode_state(buf, sizeof(buf), (uint64_t)i, i, &s);
		rtl_udp_decode_state(&h, &s, buf, 1370);
		rtl_udp_encode_command(buf, sizeof(buf), (uint64_t)i, i, &c);
		rtl_udp_decode_command(&h, &c, buf, 208);
		rtl_udp_encode_alarm(buf, sizeof(buf), (uint64_t)i, i, &a);
		rtl_udp_decode_alarm(&h, &a, buf, 160);
		rtl_udp_encode_limits(buf, sizeof(buf), (uint64_t)i, i, &some_limits);
		rtl_udp_decode_limits(&h, &l, buf, 160);
	}
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_expect_eq(allocs, 0, "%ld allocations", allocs);
}
