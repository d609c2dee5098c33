// SPDX-License-Identifier: MIT
/*
 * Recipes: builders (names, comma list, text, UR XML), every check with its
 * exact error code and message, the offset table, decode of a hand-built
 * payload, encode of an input recipe against the reference vector, and the
 * texts that explain NOT_FOUND and IN_USE.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/rtde_recipe.h>

#define VER(a, b, c) RTL_RTDE_VERSION(a, b, c, 0)

/* Recipes are large: keep them off the test's stack. */
static struct rtl_rtde_recipe rec;
static struct rtl_rtde_report rep;

static const struct rtl_rtde_recipe_opts out_any = { RTL_RTDE_RECIPE_OUTPUT, 0, 0 };
static const struct rtl_rtde_recipe_opts in_any = { RTL_RTDE_RECIPE_INPUT, 0, 0 };

#define assert_text(needle) \
	cr_assert(strstr(rep.text, needle), "report lacks \"%s\":\n%s", needle, rep.text)

/* Hex digits to bytes; blanks ignored. */
static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	while (*s) {
		unsigned v;

		if (*s == ' ') {
			s++;
			continue;
		}
		cr_assert_eq(sscanf(s, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

/* Write @text to a new temporary file; the caller unlinks @path. */
static void temp_file(char *path, size_t cap, const char *text)
{
	int fd;

	snprintf(path, cap, "/tmp/rtl-recipe-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int warnings_logged;

static void count_warnings(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	(void)msg;
	if (level == RTL_LOG_WARN)
		warnings_logged++;
}

/* ---- a known recipe: offsets, decode, accessors --------------------------- */

static const char *const known[] = {
	"timestamp",	    "actual_q",	      "robot_mode",
	"joint_mode",	    "runtime_state",  "actual_digital_input_bits",
	"tool_output_mode", "elbow_position", "payload",
};

/* Hand-built payload of the recipe above (fields part, no recipe id). */
static const char known_payload[] =
	"40D0070D2F1A9FBE"					/* timestamp 16412.206 */
	"3FF0000000000000 BFF0000000000000 3FE0000000000000"	/* actual_q 1, -1, 0.5 */
	"4000000000000000 BFE0000000000000 0000000000000000"	/* 2, -0.5, 0 */
	"00000007"						/* robot_mode 7 RUNNING */
	"000000FD 000000FD 000000FD 000000FD 000000FD FFFFFFFF" /* joint_mode */
	"00000002"						/* runtime_state PLAYING */
	"0000000100010003"					/* digital inputs */
	"01"							/* tool_output_mode */
	"3FD0000000000000 C000000000000000 405F400000000000"	/* elbow 0.25, -2, 125 */
	"3FF8000000000000";					/* payload 1.5 */

static void build_known(void)
{
	struct rtl_rtde_recipe_opts o = { RTL_RTDE_RECIPE_OUTPUT, VER(5, 12, 2), 0 };

	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &o, known, 9, &rep), 9, "%s", rep.text);
	cr_assert_eq(rep.error, 0);
	cr_assert_eq(rep.warnings, 0);
}

Test(rtde_recipe, offsets_of_a_known_recipe)
{
	static const uint32_t wire[] = { 0, 8, 56, 60, 84, 88, 96, 97, 121 };
	/* Host: natural alignment, joint_mode on 4, the UINT64 and the
	 * VECTOR3D after the bytes moved up to a multiple of 8. */
	static const uint32_t host[] = { 0, 8, 56, 60, 84, 88, 96, 104, 128 };

	build_known();
	cr_assert_eq(rec.n, 9);
	cr_assert_eq(rec.dir, RTL_RTDE_RECIPE_OUTPUT);
	for (int i = 0; i < 9; i++) {
		cr_assert_eq(rec.slots[i].wire_offset, wire[i], "wire offset of %s", known[i]);
		cr_assert_eq(rec.slots[i].host_offset, host[i], "host offset of %s", known[i]);
		cr_assert_str_eq(rec.fields[i]->name, known[i]);
	}
	cr_assert_eq(rec.slots[6].type, RTL_RTDE_TYPE_UINT8);
	cr_assert_eq(rec.slots[7].size, 24);
	cr_assert_eq(rec.wire_size, 129);
	cr_assert_eq(rec.host_size, 136);
}

Test(rtde_recipe, decodes_a_hand_built_payload)
{
	uint8_t payload[200];
	_Alignas(8) unsigned char storage[136];
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle ts, q, mode, jm, rs, din, tom, elbow, pl;
	double v6[6], v3[3];
	int32_t i6[6];
	size_t n = unhex(known_payload, payload);

	cr_assert_eq(n, 129);
	build_known();
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "timestamp", &ts), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "actual_q", &q), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "robot_mode", &mode), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "joint_mode", &jm), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "runtime_state", &rs), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "actual_digital_input_bits", &din), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "tool_output_mode", &tom), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "elbow_position", &elbow), 0);
	pl = rtl_rtde_recipe_handle_at(&rec, 8);
	cr_assert_eq(jm.index, 3);

	cr_assert_eq(rtl_rtde_recipe_decode(&rec, payload, n, &f), 0);
	cr_assert_eq(rtl_rtde_frame_get_double(&f, ts), 16412.206);
	cr_assert(rtl_rtde_frame_get_vec6(&f, q, v6));
	cr_assert_eq(v6[0], 1.0);
	cr_assert_eq(v6[1], -1.0);
	cr_assert_eq(v6[2], 0.5);
	cr_assert_eq(v6[3], 2.0);
	cr_assert_eq(v6[4], -0.5);
	cr_assert_eq(v6[5], 0.0);
	cr_assert_eq(rtl_rtde_frame_get_int(&f, mode), 7);
	cr_assert(rtl_rtde_frame_get_vec6_int(&f, jm, i6));
	cr_assert_eq(i6[0], 253);
	cr_assert_eq(i6[4], 253);
	cr_assert_eq(i6[5], -1);
	cr_assert_eq(rtl_rtde_frame_get_uint(&f, rs), 2);
	cr_assert_eq(rtl_rtde_frame_get_uint(&f, din), UINT64_C(0x100010003));
	cr_assert_eq(rtl_rtde_frame_get_uint(&f, tom), 1);
	cr_assert(rtl_rtde_frame_get_vec3(&f, elbow, v3));
	cr_assert_eq(v3[0], 0.25);
	cr_assert_eq(v3[1], -2.0);
	cr_assert_eq(v3[2], 125.0);
	cr_assert_eq(rtl_rtde_frame_get_double(&f, pl), 1.5);

	/* Wrong accessor for the type: a safe zero, NaN or false. */
	cr_assert_eq(rtl_rtde_frame_get_int(&f, ts), 0);
	cr_assert(isnan(rtl_rtde_frame_get_double(&f, mode)));
	cr_assert_eq(rtl_rtde_frame_get_uint(&f, q), 0);
	cr_assert_not(rtl_rtde_frame_get_bool(&f, tom));
	cr_assert_not(rtl_rtde_frame_get_vec6(&f, elbow, v6));
	cr_assert(isnan(v6[0]) && isnan(v6[5]));
	cr_assert_not(rtl_rtde_frame_get_vec6_int(&f, q, i6));
	cr_assert_eq(i6[0], 0);
	cr_assert(isnan(rtl_rtde_frame_get_double(&f, rtl_rtde_recipe_handle_at(&rec, 9))));
}

Test(rtde_recipe, decode_rejects_wrong_length_and_small_frames)
{
	uint8_t payload[200];
	_Alignas(8) unsigned char storage[136];
	struct rtl_rtde_frame f;
	size_t n = unhex(known_payload, payload);

	build_known();
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, 135, &rec), -EINVAL);
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, payload, n - 1, &f), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, payload, n + 1, &f), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, NULL, n, &f), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_decode(NULL, payload, n, &f), -EINVAL);
	f.cap = 100;
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, payload, n, &f), -EINVAL);
}

Test(rtde_recipe, decodes_the_reference_data_package)
{
	/* [URCL] test_rtde_parser.cpp: U v2, timestamp, target_speed_fraction. */
	uint8_t pkg[32];
	_Alignas(8) unsigned char storage[16];
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle h;
	size_t n = unhex("0014 5501 40D0070D2F1A9FBE 3FF0000000000000", pkg);

	cr_assert_eq(
		rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,target_speed_fraction", &rep),
		2);
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, pkg + 4, n - 4, &f), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "target_speed_fraction", &h), 0);
	cr_assert_eq(rtl_rtde_frame_get_double(&f, h), 1.0);
	cr_assert_eq(rtl_rtde_frame_get_double(&f, rtl_rtde_recipe_handle_at(&rec, 0)), 16412.206);
}

Test(rtde_recipe, encodes_an_input_recipe_like_the_reference)
{
	/* docs/rtde-protocol.md 7.2: recipe 1, mask 1, fraction 0.5. */
	uint8_t want[32], fields[32], pkg[32];
	_Alignas(8) unsigned char storage[16];
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle mask, frac;
	size_t n = unhex("0010 5501 00000001 3FE0000000000000", want);
	int len;

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any,
					       "speed_slider_mask, speed_slider_fraction", &rep),
		     2, "%s", rep.text);
	cr_assert_eq(rec.wire_size, 12);
	cr_assert_eq(rec.host_size, 16);
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "speed_slider_mask", &mask), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "speed_slider_fraction", &frac), 0);
	cr_assert(rtl_rtde_frame_set_uint(&f, mask, 1));
	cr_assert(rtl_rtde_frame_set_double(&f, frac, 0.5));
	cr_assert_not(rtl_rtde_frame_set_double(&f, mask, 0.5), "type checked");
	cr_assert_not(rtl_rtde_frame_set_uint(&f, mask, UINT64_C(1) << 32), "does not fit");
	cr_assert_not(rtl_rtde_frame_set_int(&f, frac, 3));
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, &f, fields, 11), -ENOSPC);
	len = rtl_rtde_recipe_encode(&rec, &f, fields, sizeof(fields));
	cr_assert_eq(len, 12);
	cr_assert_eq(memcmp(fields, want + 4, 12), 0);
	cr_assert_eq(rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2,
					  RTL_RTDE_FROM_CLIENT, 1, fields, (size_t)len),
		     (int)n);
	cr_assert_eq(memcmp(pkg, want, n), 0);
}

Test(rtde_recipe, encode_decode_round_trip_of_every_type)
{
	static const char *const names[] = {
		"input_bit_register_64", "standard_digital_output",  "speed_slider_mask",
		"input_int_register_30", "input_double_register_31", "external_force_torque",
	};
	_Alignas(8) unsigned char a[128], b[128];
	struct rtl_rtde_frame fa, fb;
	uint8_t wire[128];
	double w[6] = { 1, 2, 3, -4, 5.5, -6.25 }, got[6];
	union rtl_rtde_value v;

	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &in_any, names, 6, &rep), 6);
	cr_assert_eq(rtl_rtde_frame_init(&fa, a, sizeof(a), &rec), 0);
	cr_assert_eq(rtl_rtde_frame_init(&fb, b, sizeof(b), &rec), 0);
	cr_assert(rtl_rtde_frame_set_bool(&fa, rtl_rtde_recipe_handle_at(&rec, 0), true));
	cr_assert(rtl_rtde_frame_set_uint(&fa, rtl_rtde_recipe_handle_at(&rec, 1), 0xA5));
	cr_assert_not(rtl_rtde_frame_set_uint(&fa, rtl_rtde_recipe_handle_at(&rec, 1), 256));
	cr_assert(rtl_rtde_frame_set_uint(&fa, rtl_rtde_recipe_handle_at(&rec, 2), 1));
	cr_assert(rtl_rtde_frame_set_int(&fa, rtl_rtde_recipe_handle_at(&rec, 3), -123456));
	cr_assert(rtl_rtde_frame_set_double(&fa, rtl_rtde_recipe_handle_at(&rec, 4), -0.125));
	cr_assert(rtl_rtde_frame_set_vec6(&fa, rtl_rtde_recipe_handle_at(&rec, 5), w));
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, &fa, wire, sizeof(wire)), 1 + 1 + 4 + 4 + 8 + 48);
	cr_assert_eq(wire[0], 1);
	cr_assert_eq(wire[1], 0xA5);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, wire, rec.wire_size, &fb), 0);
	cr_assert_eq(memcmp(a, b, rec.host_size), 0);
	cr_assert(rtl_rtde_frame_get_bool(&fb, rtl_rtde_recipe_handle_at(&rec, 0)));
	cr_assert_eq(rtl_rtde_frame_get_int(&fb, rtl_rtde_recipe_handle_at(&rec, 3)), -123456);
	cr_assert(rtl_rtde_frame_get_vec6(&fb, rtl_rtde_recipe_handle_at(&rec, 5), got));
	cr_assert_eq(got[5], -6.25);
	cr_assert(rtl_rtde_frame_get(&fb, rtl_rtde_recipe_handle_at(&rec, 4), &v));
	cr_assert_eq(v.d, -0.125);
}

Test(rtde_recipe, handles_of_missing_names_are_invalid)
{
	struct rtl_rtde_handle h;

	build_known();
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "actual_qd", &h), -ENOENT);
	cr_assert_not(rtl_rtde_handle_valid(h));
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, NULL, &h), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "actual_q", NULL), -EINVAL);
	cr_assert_not(rtl_rtde_handle_valid(rtl_rtde_recipe_handle_at(&rec, 9)));
	cr_assert(rtl_rtde_handle_valid(rtl_rtde_recipe_handle_at(&rec, 8)));
}

Test(rtde_recipe, names_list_for_the_setup_request)
{
	char buf[64];

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, " timestamp ,\tactual_q,", &rep), 2);
	cr_assert_eq(rtl_rtde_recipe_names(&rec, buf, sizeof(buf)), 18);
	cr_assert_str_eq(buf, "timestamp,actual_q");
	cr_assert_eq(rtl_rtde_recipe_names(&rec, buf, 18), -ENOSPC);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(rtl_rtde_recipe_names(&rec, buf, 19), 18);
	cr_assert_eq(rtl_rtde_recipe_names(NULL, buf, 19), -EINVAL);
}

/* ---- checks and their errors ------------------------------------------- */

Test(rtde_recipe, unknown_name_suggests_the_closest)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,actual_tcp_pose", &rep),
		     -ENOENT);
	cr_assert_eq(rec.n, 0, "a failed build leaves the recipe empty");
	cr_assert_eq(rep.error, -ENOENT);
	cr_assert_str_eq(rep.field, "actual_tcp_pose");
	assert_text("error: unknown field 'actual_tcp_pose'; did you mean 'actual_TCP_pose'?");
}

Test(rtde_recipe, all_problems_are_collected)
{
	static const char *const names[] = { "timestmp", "acutal_q", "actual_q", "actual_q" };

	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, names, 4, &rep), -ENOENT);
	cr_assert_eq(rep.errors, 3);
	assert_text("did you mean 'timestamp'?");
	assert_text("did you mean 'actual_q'?");
	assert_text("field 'actual_q' appears twice (entries 1 and 2)");
	cr_assert_str_eq(rep.field, "timestmp", "the first error's field");
}

Test(rtde_recipe, duplicate_is_eexist)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any,
					       "input_int_register_24,input_int_register_24", &rep),
		     -EEXIST);
	cr_assert_str_eq(rep.field, "input_int_register_24");
	assert_text("appears twice");
}

Test(rtde_recipe, direction_is_checked)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any, "actual_q", &rep), -ENOENT);
	assert_text("'actual_q' is an output field");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "speed_slider_mask", &rep), -ENOENT);
	assert_text("'speed_slider_mask' is an input field");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any, "standard_analog_output0", &rep),
		     -ENOENT);
	assert_text("did you mean 'standard_analog_output_0'?");
	/* Input registers may be read back. */
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any,
					       "input_int_register_30,input_bit_registers0_to_31",
					       &rep),
		     2);
}

Test(rtde_recipe, register_numbering_is_explained)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any, "input_int_register_48", &rep),
		     -ENOENT);
	assert_text("int registers are numbered 0-47");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any, "input_bit_register_5", &rep),
		     -ENOENT);
	assert_text("input_bit_registers0_to_31 and input_bit_registers32_to_63");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "output_double_register_07", &rep),
		     -ENOENT);
	assert_text("without leading zeros");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "output_bit_register_200", &rep),
		     -ENOENT);
	assert_text("single bit registers exist for 64-127 only");
	assert_text("output_bit_registers0_to_31");
}

Test(rtde_recipe, too_new_fails_by_default)
{
	struct rtl_rtde_recipe_opts o = { RTL_RTDE_RECIPE_OUTPUT, VER(5, 12, 2), 0 };

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o, "timestamp,target_gravity", &rep),
		     -EPROTO);
	cr_assert_str_eq(rep.field, "target_gravity");
	assert_text("'target_gravity' is not available on this controller (e-Series 5.12.2)");
	assert_text("not on CB3, e-Series 5.26.0, PolyScope X 10.12.0");
	o.controller_version = VER(3, 15, 0);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o, "ft_raw_wrench", &rep), -EPROTO);
	assert_text("(CB3 3.15.0): not on CB3, e-Series 5.9.0");
	o.controller_version = VER(3, 11, 0);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o, "tcp_offset", &rep), -EPROTO);
	assert_text("CB3 3.12.0, e-Series 5.5.1");
	assert_text("known present by then");
}

Test(rtde_recipe, too_new_is_dropped_by_option)
{
	struct rtl_rtde_recipe_opts o = { RTL_RTDE_RECIPE_OUTPUT, VER(10, 11, 0),
					  RTL_RTDE_RECIPE_DROP_UNAVAILABLE };
	struct rtl_rtde_handle h;

	warnings_logged = 0;
	rtl_log_set_handler(count_warnings, NULL);
	cr_assert_eq(rtl_rtde_recipe_from_list(
			     &rec, &o, "timestamp,control_step,actual_current_as_torque", &rep),
		     2, "%s", rep.text);
	rtl_log_set_handler(NULL, NULL);
	cr_assert_eq(rep.error, 0);
	cr_assert_eq(rep.dropped, 1);
	cr_assert_eq(rep.warnings, 1);
	cr_assert_eq(warnings_logged, 1, "warnings also go to rtl_log");
	assert_text("warning: field 'control_step' is not available on this controller "
		    "(PolyScope X 10.11.0)");
	assert_text("PolyScope X 10.13.0");
	assert_text("dropped from the recipe");
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "control_step", &h), -ENOENT);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, "actual_current_as_torque", &h), 0);
	cr_assert_eq(h.index, 1);

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o, "control_step,target_base_wrench", &rep),
		     -EPROTO);
	cr_assert_eq(rep.dropped, 2);
	assert_text("every field was dropped");
}

Test(rtde_recipe, fieldbus_range_inputs_warn)
{
	struct rtl_rtde_recipe_opts o = in_any;

	warnings_logged = 0;
	rtl_log_set_handler(count_warnings, NULL);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o,
					       "input_int_register_3,input_int_register_27,"
					       "input_bit_registers0_to_31",
					       &rep),
		     3);
	cr_assert_eq(rep.warnings, 2);
	cr_assert_eq(warnings_logged, 2);
	assert_text("'input_int_register_3' is in the range fieldbus adapters own");
	assert_text("e.g. input_int_register_27");
	assert_text("input_bit_register_64..127");
	/* Reading the same registers back, or opting out, is quiet. */
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "input_int_register_3", &rep), 1);
	cr_assert_eq(rep.warnings, 0);
	o.flags = RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING;
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &o, "input_int_register_3", &rep), 1);
	cr_assert_eq(rep.warnings, 0);
	rtl_log_set_handler(NULL, NULL);
	cr_assert_eq(warnings_logged, 2);
}

Test(rtde_recipe, too_many_fields_is_e2big)
{
	static const char *names[RTL_RTDE_RECIPE_MAX_FIELDS + 2];
	size_t n = 0;

	for (size_t i = 0; i < rtl_rtde_field_count() && n < RTL_RTDE_RECIPE_MAX_FIELDS + 2; i++)
		if (rtl_rtde_field_at(i)->flags & RTL_RTDE_FIELD_OUTPUT)
			names[n++] = rtl_rtde_field_at(i)->name;
	cr_assert_eq(n, RTL_RTDE_RECIPE_MAX_FIELDS + 2);
	cr_assert_eq(
		rtl_rtde_recipe_from_names(&rec, &out_any, names, RTL_RTDE_RECIPE_MAX_FIELDS, &rep),
		RTL_RTDE_RECIPE_MAX_FIELDS);
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, names, n, &rep), -E2BIG);
	cr_assert_eq(rep.errors, 1, "reported once");
	cr_assert_str_eq(rep.field, names[RTL_RTDE_RECIPE_MAX_FIELDS]);
	assert_text("too many fields: a recipe holds at most 256");
}

Test(rtde_recipe, empty_and_bad_arguments_are_einval)
{
	struct rtl_rtde_recipe_opts bad = { (enum rtl_rtde_recipe_dir)7, 0, 0 };
	static const char *const with_null[] = { "timestamp", NULL };

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "", &rep), -EINVAL);
	assert_text("the recipe is empty");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, " \t", &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, NULL, 0, &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, with_null, 2, &rep), -EINVAL);
	assert_text("name 2 of 2 is NULL");
	cr_assert_eq(rtl_rtde_recipe_from_list(NULL, &out_any, "timestamp", &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, NULL, "timestamp", &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &bad, "timestamp", &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, NULL, &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp", NULL), 1,
		     "the report is optional");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "actual_q,nope", NULL), -ENOENT);
}

Test(rtde_recipe, empty_list_item_is_ebadmsg)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,,actual_q", &rep),
		     -EBADMSG);
	assert_text("empty name at position 2");
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, ",timestamp", &rep), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,,", &rep), -EBADMSG);
}

/* ---- text recipes ------------------------------------------------------------ */

static const char text_recipe[] = "# UR-style output recipe\n"
				  "timestamp\n"
				  "\n"
				  "  actual_q   # joint positions\r\n"
				  "\t# indented comment\n"
				  "runtime_state";

Test(rtde_recipe, text_with_comments_and_blank_lines)
{
	cr_assert_eq(
		rtl_rtde_recipe_from_text(&rec, &out_any, text_recipe, strlen(text_recipe), &rep),
		3, "%s", rep.text);
	cr_assert_str_eq(rec.fields[0]->name, "timestamp");
	cr_assert_str_eq(rec.fields[1]->name, "actual_q");
	cr_assert_str_eq(rec.fields[2]->name, "runtime_state");
}

Test(rtde_recipe, text_errors_carry_the_line)
{
	static const char bad[] = "timestamp\n# ok\nactual q\nactual_qd\nactual_tcp_pose\n";

	cr_assert_eq(rtl_rtde_recipe_from_text(&rec, &out_any, bad, strlen(bad), &rep), -EBADMSG);
	cr_assert_eq(rep.line, 3);
	cr_assert_eq(rep.errors, 2);
	assert_text("error: line 3: 'actual q' is not a field name");
	assert_text("error: line 5: unknown field 'actual_tcp_pose'");
	cr_assert_eq(rtl_rtde_recipe_from_text(&rec, &out_any, "# nothing\n\n", 11, &rep), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_from_text(&rec, &out_any, "a,b\n", 4, &rep), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_from_text(&rec, &out_any, "time\0stamp\n", 11, &rep),
		     -EBADMSG);
}

Test(rtde_recipe, text_file)
{
	char path[64], longline[400];

	temp_file(path, sizeof(path), text_recipe);
	cr_assert_eq(rtl_rtde_recipe_from_text_file(&rec, &out_any, path, &rep), 3, "%s", rep.text);
	cr_assert_str_eq(rec.fields[2]->name, "runtime_state");
	unlink(path);

	memset(longline, 'a', sizeof(longline));
	memcpy(longline, "timestamp\n", 10);
	memcpy(longline + sizeof(longline) - 12, "\nactual_q\n", 11);
	temp_file(path, sizeof(path), longline);
	cr_assert_eq(rtl_rtde_recipe_from_text_file(&rec, &out_any, path, &rep), -EBADMSG);
	cr_assert_eq(rep.line, 2);
	assert_text("line longer than 256 bytes");
	cr_assert_eq(rep.errors, 1, "the rest of the long line is skipped");
	unlink(path);

	cr_assert_eq(rtl_rtde_recipe_from_text_file(&rec, &out_any, path, &rep), -ENOENT);
	assert_text("cannot open");
	cr_assert_eq(rtl_rtde_recipe_from_text_file(&rec, &out_any, NULL, &rep), -EINVAL);
}

/* ---- XML recipes --------------------------------------------------------- */

/* UR's examples/control_loop_configuration.xml (RTDE Python client). */
static const char ur_xml[] = "<?xml version=\"1.0\"?>\n"
			     "<rtde_config>\n"
			     "\t<recipe key=\"state\">\n"
			     "\t\t<field name=\"target_q\" type=\"VECTOR6D\"/>\n"
			     "\t\t<field name=\"target_qd\" type=\"VECTOR6D\"/>\n"
			     "\t\t<field name=\"output_int_register_0\" type=\"INT32\"/>\n"
			     "\t</recipe>\n"
			     "\n"
			     "\t<recipe key=\"setp\">\n"
			     "\t\t<field name=\"input_double_register_0\" type=\"DOUBLE\"/>\n"
			     "\t\t<field name=\"input_double_register_1\" type=\"DOUBLE\"/>\n"
			     "\t\t<field name=\"input_double_register_2\" type=\"DOUBLE\"/>\n"
			     "\t\t<field name=\"input_double_register_3\" type=\"DOUBLE\"/>\n"
			     "\t\t<field name=\"input_double_register_4\" type=\"DOUBLE\"/>\n"
			     "\t\t<field name=\"input_double_register_5\" type=\"DOUBLE\"/>\n"
			     "\t</recipe>\n"
			     "\n"
			     "\t<recipe key=\"watchdog\">\n"
			     "\t\t<field name=\"input_int_register_0\" type=\"INT32\"/>\n"
			     "\t</recipe>\n"
			     "</rtde_config>";

Test(rtde_recipe, xml_selects_recipes_by_key)
{
	cr_assert_eq(
		rtl_rtde_recipe_from_xml(&rec, &out_any, ur_xml, strlen(ur_xml), "state", &rep), 3,
		"%s", rep.text);
	cr_assert_str_eq(rec.fields[2]->name, "output_int_register_0");
	cr_assert_eq(rec.wire_size, 48 + 48 + 4);
	cr_assert_eq(rep.warnings, 0);

	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &in_any, ur_xml, strlen(ur_xml), "setp", &rep),
		     6, "%s", rep.text);
	cr_assert_eq(rec.dir, RTL_RTDE_RECIPE_INPUT);
	cr_assert_str_eq(rec.fields[5]->name, "input_double_register_5");
	cr_assert_eq(rep.warnings, 6, "UR's example uses the fieldbus range");
	assert_text("e.g. input_double_register_29");

	cr_assert_eq(
		rtl_rtde_recipe_from_xml(&rec, &in_any, ur_xml, strlen(ur_xml), "watchdog", &rep),
		1);
	/* The state recipe is outputs: as an input recipe it is refused. */
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &in_any, ur_xml, strlen(ur_xml), "state", &rep),
		     -ENOENT);
	assert_text("'target_q' is an output field");
}

Test(rtde_recipe, xml_key_errors)
{
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, ur_xml, strlen(ur_xml), "nope", &rep),
		     -ENOENT);
	assert_text("no recipe with key 'nope' (the file has: 'state', 'setp', 'watchdog')");
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, ur_xml, strlen(ur_xml), NULL, &rep),
		     -EINVAL);
	assert_text("several recipes");
	static const char one[] = "<rtde_config><recipe key=\"out\"><field "
				  "name=\"timestamp\"/></recipe></rtde_config>";
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, one, strlen(one), NULL, &rep), 1,
		     "a single recipe needs no key; type is optional");
	static const char twice[] = "<rtde_config><recipe key=\"a\"><field name=\"timestamp\"/>"
				    "</recipe><recipe key=\"a\"><field name=\"actual_q\"/></recipe>"
				    "</rtde_config>";
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, twice, strlen(twice), "a", &rep),
		     -EBADMSG);
	assert_text("two recipes with the key 'a'");
	static const char empty[] = "<rtde_config><recipe key=\"a\"/></rtde_config>";
	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, empty, strlen(empty), "a", &rep),
		     -EINVAL);
	assert_text("the recipe is empty");
}

Test(rtde_recipe, xml_type_must_match_the_registry)
{
	static const char xml[] = "<rtde_config>\n<recipe key=\"s\">\n"
				  "<field name=\"timestamp\" type=\"DOUBLE\"/>\n"
				  "<field name=\"robot_mode\" type=\"DOUBLE\"/>\n"
				  "<field name=\"actual_q\" type=\"VECTOR6X\"/>\n"
				  "</recipe>\n</rtde_config>\n";

	cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, xml, strlen(xml), "s", &rep),
		     -EPROTO);
	cr_assert_eq(rep.errors, 2);
	cr_assert_eq(rep.line, 4);
	cr_assert_str_eq(rep.field, "robot_mode");
	assert_text("line 4: field 'robot_mode' has type INT32, but the recipe says DOUBLE");
	assert_text("line 5: field 'actual_q': 'VECTOR6X' is not an RTDE type");
}

Test(rtde_recipe, malformed_xml_is_ebadmsg)
{
	static const char *const bad[] = {
		"<rtde_config><recipe key=\"s\"><field name=\"timestamp\"></recipe></rtde_config>",
		"<rtde_config><recipe key=\"s\">",
		"",
		"not xml at all",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(
			rtl_rtde_recipe_from_xml(&rec, &out_any, bad[i], strlen(bad[i]), "s", &rep),
			-EBADMSG, "case %zu", i);
		assert_text("malformed XML");
		cr_assert_eq(rec.n, 0);
	}
}

Test(rtde_recipe, xml_structure_is_checked)
{
	static const struct {
		const char *xml;
		const char *msg;
	} bad[] = {
		{ "<config><recipe key=\"s\"/></config>", "root element is <config>" },
		{ "<rtde_config><recipe><field name=\"timestamp\"/></recipe></rtde_config>",
		  "<recipe> without a key" },
		{ "<rtde_config><recipe key=\"s\"><feild "
		  "name=\"timestamp\"/></recipe></rtde_config>",
		  "unexpected element <feild> in <recipe>" },
		{ "<rtde_config><recipe key=\"s\"><field type=\"DOUBLE\"/></recipe></rtde_config>",
		  "<field> without a name" },
		{ "<rtde_config><field name=\"timestamp\"/></rtde_config>",
		  "unexpected element <field> in <rtde_config>" },
		{ "<rtde_config><recipe key=\"s\"><field name=\"timestamp\"><x/></field></recipe>"
		  "</rtde_config>",
		  "unexpected element <x> in <field>" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(rtl_rtde_recipe_from_xml(&rec, &out_any, bad[i].xml,
						      strlen(bad[i].xml), "s", &rep),
			     -EBADMSG, "case %zu: %s", i, rep.text);
		assert_text(bad[i].msg);
	}
}

Test(rtde_recipe, xml_file)
{
	char path[64];

	temp_file(path, sizeof(path), ur_xml);
	cr_assert_eq(rtl_rtde_recipe_from_xml_file(&rec, &in_any, path, "setp", &rep), 6, "%s",
		     rep.text);
	cr_assert_eq(rtl_rtde_recipe_from_xml_file(&rec, &out_any, path, "state", &rep), 3);
	unlink(path);
	temp_file(path, sizeof(path), "<rtde_config><recipe key=\"s\">\n<field name=\"x\"");
	cr_assert_eq(rtl_rtde_recipe_from_xml_file(&rec, &out_any, path, "s", &rep), -EBADMSG);
	cr_assert_eq(rep.line, 2);
	unlink(path);
	cr_assert_eq(rtl_rtde_recipe_from_xml_file(&rec, &out_any, path, "s", &rep), -ENOENT);
	assert_text("cannot open");
}

/* ---- explaining the controller's answers ---------------------------------- */

Test(rtde_recipe, reply_that_matches_is_accepted)
{
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,actual_q", &rep), 2);
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, "DOUBLE,VECTOR6D", 15, &rep), 0);
	cr_assert_eq(rep.errors, 0);
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, "DOUBLE,INT32", 12, &rep), -EPROTO);
	assert_text("the controller reports type INT32 for 'actual_q', the registry says VECTOR6D");
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, "DOUBLE", 6, &rep), -EBADMSG);
	assert_text("the reply lists 1 types for a recipe of 2 fields");
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, "DOUBLE,VECTOR6D,DOUBLE", 22, &rep),
		     -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, "DOUBLE,FOO", 10, &rep), -EBADMSG);
	assert_text("'FOO', is not an RTDE type");
	cr_assert_eq(rtl_rtde_recipe_check_reply(NULL, "DOUBLE", 6, &rep), -EINVAL);
}

Test(rtde_recipe, in_use_names_the_likely_owner)
{
	const char *types = "IN_USE,IN_USE,IN_USE,UINT8";

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &in_any,
					       "input_int_register_3,speed_slider_mask,"
					       "input_double_register_40,tool_digital_output",
					       &rep),
		     4);
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, types, strlen(types), &rep), -EBUSY);
	cr_assert_eq(rep.errors, 3);
	cr_assert_str_eq(rep.field, "input_int_register_3");
	assert_text("IN_USE for 'input_int_register_3': it is in the fieldbus range, so an enabled "
		    "EtherNet/IP, PROFINET or MODBUS adapter probably owns it");
	assert_text("e.g. input_int_register_27");
	assert_text("IN_USE for 'speed_slider_mask': an enabled EtherNet/IP");
	assert_text("claims all standard inputs");
	assert_text("IN_USE for 'input_double_register_40': another RTDE client");
	assert_text("or a URCap writes it");
	cr_assert_null(strstr(rep.text, "tool_digital_output"), "accepted fields are quiet");
}

Test(rtde_recipe, not_found_says_which_version_introduced_the_field)
{
	struct rtl_rtde_recipe_opts o = { RTL_RTDE_RECIPE_OUTPUT, VER(5, 11, 0), 0 };
	const char *types = "DOUBLE,NOT_FOUND,NOT_FOUND";

	cr_assert_eq(
		rtl_rtde_recipe_from_list(&rec, &o, "timestamp,payload_inertia,encoder0_raw", &rep),
		3);
	cr_assert_eq(rtl_rtde_recipe_check_reply(&rec, types, strlen(types), &rep), -ENOENT);
	cr_assert_eq(rep.errors, 2);
	assert_text("e-Series 5.11.0, all PolyScope X versions");
	assert_text("the controller (e-Series 5.11.0) answered NOT_FOUND for 'payload_inertia': "
		    "is the firmware too old? It came with CB3 3.15.0, e-Series 5.11.0");
	assert_text("NOT_FOUND for 'encoder0_raw': the firmware is probably too old for it (the "
		    "reference records no version");
}

Test(rtde_recipe, explains_a_raw_reply_like_the_cb3_capture)
{
	/* isri-aist/mc_rtde capture: a CB3 answered NOT_FOUND for these. */
	const char *names = "timestamp,ft_raw_wrench,payload,payload_cog,payload_inertia,"
			    "actual_tcp_pose,speed_slider_mask";
	const char *types = "DOUBLE,NOT_FOUND,NOT_FOUND,NOT_FOUND,NOT_FOUND,NOT_FOUND,NOT_FOUND";

	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_OUTPUT, VER(3, 10, 0), names,
					    strlen(names), types, strlen(types), &rep),
		     -ENOENT);
	cr_assert_eq(rep.errors, 6);
	cr_assert_str_eq(rep.field, "ft_raw_wrench");
	assert_text("(CB3 3.10.0) answered NOT_FOUND for 'ft_raw_wrench': the firmware is too old "
		    "(not on CB3, e-Series 5.9.0");
	assert_text("NOT_FOUND for 'payload': the firmware is too old (CB3 3.11.0");
	assert_text("unknown field 'actual_tcp_pose'; did you mean 'actual_TCP_pose'? (a typo?)");
	assert_text("'speed_slider_mask' is an input field");
}

Test(rtde_recipe, explain_raw_reply_edge_cases)
{
	const char *in_names = "input_bit_registers0_to_31,brand_new_field";

	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_INPUT, 0, in_names, strlen(in_names),
					    "IN_USE,DOUBLE", 13, &rep),
		     -EBUSY);
	assert_text("fieldbus range");
	assert_text("input_bit_register_64..127");
	assert_text("warning: the controller knows 'brand_new_field' (type DOUBLE)");
	cr_assert_eq(rep.warnings, 1);
	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_OUTPUT, 0, "timestamp", 9,
					    "DOUBLE,DOUBLE", 13, &rep),
		     -EBADMSG);
	assert_text("the reply lists 2 types for 1 names");
	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_OUTPUT, 0, "timestamp,", 10, "DOUBLE",
					    6, &rep),
		     0, "a trailing comma in the request is no name");
	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_OUTPUT, 0, "actual_q", 8, "NOT_FOUND",
					    9, &rep),
		     -ENOENT);
	assert_text("which every controller version has");
	cr_assert_eq(rtl_rtde_explain_reply(RTL_RTDE_RECIPE_OUTPUT, 0, NULL, 3, "DOUBLE", 6, &rep),
		     -EINVAL);
}
