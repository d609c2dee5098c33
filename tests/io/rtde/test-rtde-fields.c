// SPDX-License-Identifier: MIT
/*
 * The field registry against docs/rtde-protocol.md section 5: counts,
 * types and versions of a sample of fields, the register ranges, exact
 * lookup, the version predicate and the closest-name suggestion.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <rtloop/rtde_fields.h>

#define VER(a, b, c) RTL_RTDE_VERSION(a, b, c, 0)

static const struct rtl_rtde_field *must(const char *name)
{
	const struct rtl_rtde_field *f = rtl_rtde_field_find(name);

	cr_assert_not_null(f, "'%s' must be in the registry", name);
	cr_assert_str_eq(f->name, name);
	return f;
}

Test(rtde_fields, counts_match_the_reference)
{
	size_t n = rtl_rtde_field_count(), in = 0, out = 0, both = 0, fb = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rtl_rtde_field *f = rtl_rtde_field_at(i);

		in += !!(f->flags & RTL_RTDE_FIELD_INPUT);
		out += !!(f->flags & RTL_RTDE_FIELD_OUTPUT);
		both += (f->flags & RTL_RTDE_FIELD_INPUT) && (f->flags & RTL_RTDE_FIELD_OUTPUT);
		fb += !!(f->flags & RTL_RTDE_FIELD_FIELDBUS);
	}
	/* 82 named outputs + 2 packed output bit words + 160 output registers
	 * + 162 input registers readable back = 406, the size of UR's
	 * exhaustive output recipe. */
	cr_assert_eq(out, 406);
	/* 13 named inputs + 2 packed words + 64 bits + 48 int + 48 double. */
	cr_assert_eq(in, 175);
	cr_assert_eq(both, 162, "input registers and packed words read back");
	cr_assert_eq(n, 419);
	/* Per direction: 2 packed words + int 0-23 + double 0-23. */
	cr_assert_eq(fb, 2 * (2 + 24 + 24));
	cr_assert_null(rtl_rtde_field_at(n));
}

Test(rtde_fields, every_name_finds_its_own_entry)
{
	size_t n = rtl_rtde_field_count(), longest = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rtl_rtde_field *f = rtl_rtde_field_at(i);

		cr_assert_eq(rtl_rtde_field_find(f->name), f, "lookup of '%s'", f->name);
		cr_assert_eq(rtl_rtde_field_index(f), (int)i);
		cr_assert(rtl_rtde_type_is_value(f->type), "'%s' has a value type", f->name);
		cr_assert(f->meaning && f->meaning[0], "'%s' has a meaning", f->name);
		if (strlen(f->name) > longest)
			longest = strlen(f->name);
	}
	cr_assert_eq(longest, RTL_RTDE_FIELD_NAME_MAX);
}

Test(rtde_fields, named_head_is_sorted_for_bsearch)
{
	size_t i;

	for (i = 1; i < rtl_rtde_field_count(); i++) {
		const struct rtl_rtde_field *f = rtl_rtde_field_at(i);

		if (f->reg == RTL_RTDE_REG_BIT || f->reg == RTL_RTDE_REG_INT ||
		    f->reg == RTL_RTDE_REG_DOUBLE)
			break;
		cr_assert_lt(strcmp(rtl_rtde_field_at(i - 1)->name, f->name), 0, "'%s' before '%s'",
			     rtl_rtde_field_at(i - 1)->name, f->name);
	}
	cr_assert_eq(i, 99, "99 named fields, then the register blocks");
}

Test(rtde_fields, sample_types_and_directions)
{
	const struct rtl_rtde_field *f;

	f = must("timestamp");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_DOUBLE);
	cr_assert_eq(f->flags, RTL_RTDE_FIELD_OUTPUT);
	cr_assert_eq(f->since[0], 0);
	cr_assert_eq(must("actual_TCP_pose")->type, RTL_RTDE_TYPE_VECTOR6D);
	cr_assert_eq(must("joint_mode")->type, RTL_RTDE_TYPE_VECTOR6INT32);
	cr_assert_eq(must("actual_tool_accelerometer")->type, RTL_RTDE_TYPE_VECTOR3D);
	cr_assert_eq(must("tool_output_voltage")->type, RTL_RTDE_TYPE_INT32);
	cr_assert_eq(must("runtime_state")->type, RTL_RTDE_TYPE_UINT32);
	cr_assert_eq(must("actual_digital_input_bits")->type, RTL_RTDE_TYPE_UINT64);
	cr_assert_eq(must("control_step")->type, RTL_RTDE_TYPE_UINT64);
	cr_assert_eq(must("time_scale_source")->type, RTL_RTDE_TYPE_INT32);
	cr_assert_eq(must("euromap67_24V_voltage")->type, RTL_RTDE_TYPE_DOUBLE);
	cr_assert_eq(must("standard_analog_output0")->flags, RTL_RTDE_FIELD_OUTPUT);

	f = must("speed_slider_mask");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_UINT32);
	cr_assert_eq(f->flags, RTL_RTDE_FIELD_INPUT | RTL_RTDE_FIELD_STANDARD_INPUT);
	f = must("standard_analog_output_0");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_DOUBLE);
	cr_assert(f->flags & RTL_RTDE_FIELD_INPUT);
	cr_assert_not(f->flags & RTL_RTDE_FIELD_OUTPUT);
	cr_assert_eq(must("standard_digital_output_mask")->type, RTL_RTDE_TYPE_UINT8);
	f = must("tool_digital_output_mask");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_UINT8);
	cr_assert(f->flags & RTL_RTDE_FIELD_UNOFFICIAL);
	cr_assert_not(f->flags & RTL_RTDE_FIELD_STANDARD_INPUT);
	f = must("external_force_torque");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_VECTOR6D);
	cr_assert_eq(f->flags, RTL_RTDE_FIELD_INPUT);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 3, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], 0);
}

Test(rtde_fields, sample_versions)
{
	const struct rtl_rtde_field *f;

	f = must("tool_output_mode");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_UINT8);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], RTL_RTDE_VERSION_ABSENT);
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 2, 0));
	f = must("payload_inertia");
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 15, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 11, 0));
	f = must("payload");
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 5, 1));
	f = must("safety_status");
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 10, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 4, 0));
	f = must("elbow_velocity");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_VECTOR3D);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 5, 0));
	f = must("script_control_line");
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 14, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 9, 0));
	f = must("ft_raw_wrench");
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], RTL_RTDE_VERSION_ABSENT);
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 9, 0));
	f = must("actual_current_as_torque");
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], RTL_RTDE_VERSION_ABSENT);
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 23, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_POLYSCOPE_X], VER(10, 11, 0));
	f = must("target_gravity");
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 26, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_POLYSCOPE_X], VER(10, 12, 0));
	f = must("target_base_wrench");
	cr_assert_eq(f->since[RTL_RTDE_LINE_POLYSCOPE_X], VER(10, 13, 0));
	f = must("control_step");
	cr_assert_eq(f->since[RTL_RTDE_LINE_POLYSCOPE_X], VER(10, 13, 0));
	f = must("tcp_offset");
	cr_assert(f->flags & RTL_RTDE_FIELD_VERSION_APPROX);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 12, 0));
	cr_assert(must("encoder0_raw")->flags & RTL_RTDE_FIELD_VERSION_UNKNOWN);
	cr_assert(must("target_TCP_acceleration")->flags & RTL_RTDE_FIELD_VERSION_UNKNOWN);
	cr_assert_not(must("actual_q")->flags & RTL_RTDE_FIELD_VERSION_UNKNOWN);
}

Test(rtde_fields, register_ranges)
{
	const struct rtl_rtde_field *f;

	f = must("input_int_register_0");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_INT32);
	cr_assert_eq(f->flags,
		     RTL_RTDE_FIELD_INPUT | RTL_RTDE_FIELD_OUTPUT | RTL_RTDE_FIELD_FIELDBUS);
	cr_assert_eq(f->reg, RTL_RTDE_REG_INT);
	cr_assert_eq(f->reg_index, 0);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 4, 0));
	cr_assert(must("input_double_register_23")->flags & RTL_RTDE_FIELD_FIELDBUS);
	f = must("input_double_register_24");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_DOUBLE);
	cr_assert_not(f->flags & RTL_RTDE_FIELD_FIELDBUS);
	cr_assert_eq(f->reg_index, 24);
	cr_assert_eq(f->since[RTL_RTDE_LINE_CB3], VER(3, 9, 0));
	cr_assert_eq(f->since[RTL_RTDE_LINE_E_SERIES], VER(5, 3, 0));
	f = must("output_int_register_47");
	cr_assert_eq(f->flags, RTL_RTDE_FIELD_OUTPUT);
	cr_assert_eq(f->reg_index, 47);
	f = must("input_bit_register_64");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_BOOL);
	cr_assert_eq(f->reg, RTL_RTDE_REG_BIT);
	cr_assert_not(f->flags & RTL_RTDE_FIELD_FIELDBUS);
	cr_assert_eq(must("output_bit_register_127")->reg_index, 127);
	f = must("input_bit_registers32_to_63");
	cr_assert_eq(f->type, RTL_RTDE_TYPE_UINT32);
	cr_assert_eq(f->reg, RTL_RTDE_REG_BITS32);
	cr_assert_eq(f->reg_index, 32);
	cr_assert(f->flags & RTL_RTDE_FIELD_FIELDBUS);
	cr_assert(f->flags & RTL_RTDE_FIELD_OUTPUT, "readable back");
	cr_assert_eq(must("output_bit_registers0_to_31")->flags,
		     RTL_RTDE_FIELD_OUTPUT | RTL_RTDE_FIELD_FIELDBUS);

	/* What does not exist. */
	cr_assert_null(rtl_rtde_field_find("input_int_register_48"));
	cr_assert_null(rtl_rtde_field_find("output_double_register_100"));
	cr_assert_null(rtl_rtde_field_find("input_bit_register_63"));
	cr_assert_null(rtl_rtde_field_find("input_bit_register_0"));
	cr_assert_null(rtl_rtde_field_find("output_bit_register_128"));
	cr_assert_null(rtl_rtde_field_find("input_int_register_07"));
	cr_assert_null(rtl_rtde_field_find("input_int_register_"));
	cr_assert_null(rtl_rtde_field_find("input_int_register_-1"));
	cr_assert_null(rtl_rtde_field_find("input_int_register_1x"));
	cr_assert_null(rtl_rtde_field_find("input_int_register_0001"));
}

Test(rtde_fields, lookup_is_exact)
{
	const char *list = "timestamp,actual_q";

	cr_assert_null(rtl_rtde_field_find("actual_tcp_pose"), "case-sensitive");
	cr_assert_null(rtl_rtde_field_find("Timestamp"));
	cr_assert_null(rtl_rtde_field_find("timestamp "));
	cr_assert_null(rtl_rtde_field_find(""));
	cr_assert_null(rtl_rtde_field_find(NULL));
	cr_assert_null(rtl_rtde_field_find("actual_"));
	cr_assert_null(rtl_rtde_field_find("zzz"));
	cr_assert_null(rtl_rtde_field_find("aaa"));
	cr_assert_eq(rtl_rtde_field_find_n(list, 9), must("timestamp"));
	cr_assert_eq(rtl_rtde_field_find_n(list + 10, 8), must("actual_q"));
	cr_assert_null(rtl_rtde_field_find_n("actual_qd", 7), "a prefix is no match");
	cr_assert_eq(rtl_rtde_field_find_n("input_int_register_12,", 21),
		     must("input_int_register_12"));
	cr_assert_null(rtl_rtde_field_find_n("time\0stamp", 10));
}

Test(rtde_fields, index_rejects_foreign_pointers)
{
	struct rtl_rtde_field copy = *must("actual_q");

	cr_assert_eq(rtl_rtde_field_index(&copy), -EINVAL);
	cr_assert_eq(rtl_rtde_field_index(NULL), -EINVAL);
}

Test(rtde_fields, versions_pack_format_and_line)
{
	struct rtl_rtde_controller_version v = { 5, 12, 2, 1101534 };
	struct rtl_rtde_controller_version big = { 300, 300, 70000, 1 };
	char buf[40];

	cr_assert_eq(rtl_rtde_version_pack(&v), RTL_RTDE_VERSION(5, 12, 2, 1101534));
	cr_assert_eq(rtl_rtde_version_pack(&big), RTL_RTDE_VERSION(255, 255, 65535, 1));
	cr_assert_eq(rtl_rtde_version_pack(NULL), 0);
	cr_assert_lt(VER(3, 15, 0), VER(5, 0, 0));
	cr_assert_lt(RTL_RTDE_VERSION(3, 2, 19171, 0), VER(3, 3, 0));
	cr_assert_eq(rtl_rtde_version_format(buf, sizeof(buf), rtl_rtde_version_pack(&v)), 14);
	cr_assert_str_eq(buf, "5.12.2.1101534");
	rtl_rtde_version_format(buf, sizeof(buf), VER(10, 11, 0));
	cr_assert_str_eq(buf, "10.11.0");
	cr_assert_eq(rtl_rtde_version_format(NULL, 4, 0), -EINVAL);
	cr_assert_eq(rtl_rtde_version_line(VER(3, 15, 0)), RTL_RTDE_LINE_CB3);
	cr_assert_eq(rtl_rtde_version_line(VER(5, 26, 0)), RTL_RTDE_LINE_E_SERIES);
	cr_assert_eq(rtl_rtde_version_line(VER(10, 7, 0)), RTL_RTDE_LINE_POLYSCOPE_X);
	cr_assert_str_eq(rtl_rtde_line_name(RTL_RTDE_LINE_E_SERIES), "e-Series");
	cr_assert_str_eq(rtl_rtde_line_name(RTL_RTDE_LINE_POLYSCOPE_X), "PolyScope X");
}

Test(rtde_fields, availability_by_controller_version)
{
	const struct rtl_rtde_field *g = must("target_gravity");
	const struct rtl_rtde_field *m = must("tool_output_mode");
	const struct rtl_rtde_field *r = must("input_int_register_30");
	const struct rtl_rtde_field *low = must("output_int_register_3");

	cr_assert_not(rtl_rtde_field_available(g, VER(3, 15, 0)));
	cr_assert_not(rtl_rtde_field_available(g, VER(5, 25, 9)));
	cr_assert(rtl_rtde_field_available(g, VER(5, 26, 0)));
	cr_assert_not(rtl_rtde_field_available(g, VER(10, 11, 0)));
	cr_assert(rtl_rtde_field_available(g, VER(10, 12, 0)));
	cr_assert(rtl_rtde_field_available(g, 0), "unknown version: no judgement");
	cr_assert_not(rtl_rtde_field_available(m, VER(3, 15, 0)));
	cr_assert_not(rtl_rtde_field_available(m, VER(5, 1, 9)));
	cr_assert(rtl_rtde_field_available(m, RTL_RTDE_VERSION(5, 2, 0, 1234)));
	cr_assert_not(rtl_rtde_field_available(r, VER(3, 8, 0)));
	cr_assert(rtl_rtde_field_available(r, VER(3, 9, 0)));
	cr_assert_not(rtl_rtde_field_available(r, VER(5, 2, 0)));
	cr_assert(rtl_rtde_field_available(r, VER(5, 3, 0)));
	cr_assert(rtl_rtde_field_available(r, VER(10, 0, 0)));
	cr_assert_not(rtl_rtde_field_available(low, VER(3, 3, 0)));
	cr_assert(rtl_rtde_field_available(low, VER(3, 4, 0)));
	cr_assert(rtl_rtde_field_available(low, VER(5, 0, 0)));
	cr_assert(rtl_rtde_field_available(must("encoder0_raw"), VER(3, 0, 0)));
	cr_assert_not(rtl_rtde_field_available(NULL, VER(5, 0, 0)));
	cr_assert_eq(rtl_rtde_field_since(g, VER(5, 1, 0)), VER(5, 26, 0));
	cr_assert_eq(rtl_rtde_field_since(g, VER(3, 1, 0)), RTL_RTDE_VERSION_ABSENT);
}

Test(rtde_fields, suggests_the_closest_name)
{
	unsigned d = 0;

	cr_assert_eq(rtl_rtde_field_suggest(&d, "actual_tcp_pose", 15, 0), must("actual_TCP_pose"));
	cr_assert_eq(d, 3, "three case changes cost half an edit each");
	cr_assert_eq(rtl_rtde_field_suggest(&d, "timestmp", 8, RTL_RTDE_FIELD_OUTPUT),
		     must("timestamp"));
	cr_assert_eq(d, 2);
	cr_assert_eq(rtl_rtde_field_suggest(&d, "acutal_q", 8, RTL_RTDE_FIELD_OUTPUT),
		     must("actual_q"), "transposition");
	cr_assert_eq(d, 2);
	cr_assert_eq(
		rtl_rtde_field_suggest(NULL, "standard_analog_output0", 23, RTL_RTDE_FIELD_INPUT),
		must("standard_analog_output_0"), "direction filter");
	cr_assert_eq(
		rtl_rtde_field_suggest(NULL, "speed_slider_fractoin", 21, RTL_RTDE_FIELD_INPUT),
		must("speed_slider_fraction"));
	cr_assert_null(rtl_rtde_field_suggest(NULL, "xyzzy_completely_wrong", 22, 0));
	cr_assert_null(rtl_rtde_field_suggest(NULL, "", 0, 0));
	cr_assert_null(rtl_rtde_field_suggest(NULL, NULL, 3, 0));
}
