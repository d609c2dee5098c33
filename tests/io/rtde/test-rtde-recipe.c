// SPDX-License-Identifier: MIT
/*
 * Recipes: builders (names, comma list, text, UR XML), every check with its
 * exact error code and message, the offset table, decode of a hand-built
 * payload, encode of an input recipe against the reference vector, the runs
 * that decode and encode walk (against the codec's unpack_to / pack_from in
 * many field orders, BOOL normalisation, no allocation), and the texts that
 * explain NOT_FOUND and IN_USE.
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

#include "alloc-count.h"

#define VER(a, b, c) RTL_RTDE_VERSION(a, b, c, 0)

/* Recipes are large: keep them off the test's stack. */
static struct rtl_rtde_recipe rec;
static struct rtl_rtde_report rep;

static const struct rtl_rtde_recipe_opts out_any = { sizeof(out_any), RTL_RTDE_RECIPE_OUTPUT, 0,
						     0 };
static const struct rtl_rtde_recipe_opts in_any = { sizeof(in_any), RTL_RTDE_RECIPE_INPUT, 0, 0 };
/* Inputs without the fieldbus-range warnings (recipes of many registers). */
static const struct rtl_rtde_recipe_opts in_quiet = { sizeof(in_quiet), RTL_RTDE_RECIPE_INPUT, 0,
						      RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };

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
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT, VER(5, 12, 2), 0 };

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
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &ts, "timestamp"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &q, "actual_q"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &mode, "robot_mode"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &jm, "joint_mode"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &rs, "runtime_state"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &din, "actual_digital_input_bits"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &tom, "tool_output_mode"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &elbow, "elbow_position"), 0);
	pl = rtl_rtde_recipe_handle_at(&rec, 8);
	cr_assert_eq(jm.index, 3);

	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, payload, n), 0);
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
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, payload, n - 1), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, payload, n + 1), -EBADMSG);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, NULL, n), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_decode(NULL, &f, payload, n), -EINVAL);
	f.cap = 100;
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, payload, n), -EINVAL);
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
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, pkg + 4, n - 4), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &h, "target_speed_fraction"), 0);
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
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &mask, "speed_slider_mask"), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &frac, "speed_slider_fraction"), 0);
	cr_assert(rtl_rtde_frame_set_uint(&f, mask, 1));
	cr_assert(rtl_rtde_frame_set_double(&f, frac, 0.5));
	cr_assert_not(rtl_rtde_frame_set_double(&f, mask, 0.5), "type checked");
	cr_assert_not(rtl_rtde_frame_set_uint(&f, mask, UINT64_C(1) << 32), "does not fit");
	cr_assert_not(rtl_rtde_frame_set_int(&f, frac, 3));
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, fields, 11, &f), -ENOSPC);
	len = rtl_rtde_recipe_encode(&rec, fields, sizeof(fields), &f);
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
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, wire, sizeof(wire), &fa), 1 + 1 + 4 + 4 + 8 + 48);
	cr_assert_eq(wire[0], 1);
	cr_assert_eq(wire[1], 0xA5);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &fb, wire, rec.wire_size), 0);
	cr_assert_eq(memcmp(a, b, rec.host_size), 0);
	cr_assert(rtl_rtde_frame_get_bool(&fb, rtl_rtde_recipe_handle_at(&rec, 0)));
	cr_assert_eq(rtl_rtde_frame_get_int(&fb, rtl_rtde_recipe_handle_at(&rec, 3)), -123456);
	cr_assert(rtl_rtde_frame_get_vec6(&fb, rtl_rtde_recipe_handle_at(&rec, 5), got));
	cr_assert_eq(got[5], -6.25);
	cr_assert(rtl_rtde_frame_get(&fb, rtl_rtde_recipe_handle_at(&rec, 4), &v));
	cr_assert_eq(v.d, -0.125);
}

/* The names of every field of direction @flag, in registry order, into
 * @names (room for RTL_RTDE_RECIPE_MAX_FIELDS + 1); returns the count. */
static size_t every_field(const char **names, unsigned flag)
{
	size_t n = 0;

	for (size_t i = 0; i < rtl_rtde_field_count(); i++)
		if ((rtl_rtde_field_at(i)->flags & flag) && n <= RTL_RTDE_RECIPE_MAX_FIELDS)
			names[n++] = rtl_rtde_field_at(i)->name;
	return n;
}

/* ---- runs: what decode and encode walk --------------------------------------- */

Test(rtde_recipe, runs_of_a_known_recipe)
{
	/* timestamp + actual_q: 7 doubles; robot_mode, joint_mode and
	 * runtime_state: 8 four-byte words; the UINT64 alone (the kind
	 * changes before and after); the UINT8; elbow_position and payload,
	 * 4 doubles (the frame's padding moves both by the same 7 bytes). */
	static const struct rtl_rtde_run want[] = {
		{ 0, 0, 7, RTL_RTDE_RUN_SWAP64, 0 },	{ 56, 56, 8, RTL_RTDE_RUN_SWAP32, 0 },
		{ 88, 88, 1, RTL_RTDE_RUN_SWAP64, 0 },	{ 96, 96, 1, RTL_RTDE_RUN_COPY8, 0 },
		{ 97, 104, 4, RTL_RTDE_RUN_SWAP64, 0 },
	};

	build_known();
	cr_assert_eq(rec.n_runs, 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(rec.runs[i].wire_offset, want[i].wire_offset, "run %d", i);
		cr_assert_eq(rec.runs[i].host_offset, want[i].host_offset, "run %d", i);
		cr_assert_eq(rec.runs[i].count, want[i].count, "run %d", i);
		cr_assert_eq(rec.runs[i].kind, want[i].kind, "run %d", i);
	}
	/* A BOOL and a UINT8 side by side are two runs: one is normalised. */
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any,
					       "output_bit_register_64,output_bit_register_65,"
					       "tool_output_mode,output_bit_register_66",
					       &rep),
		     4, "%s", rep.text);
	cr_assert_eq(rec.n_runs, 3);
	cr_assert_eq(rec.runs[0].kind, RTL_RTDE_RUN_BOOL);
	cr_assert_eq(rec.runs[0].count, 2);
	cr_assert_eq(rec.runs[1].kind, RTL_RTDE_RUN_COPY8);
	cr_assert_eq(rec.runs[2].kind, RTL_RTDE_RUN_BOOL);
	cr_assert_eq(rec.runs[2].wire_offset, 3);
}

Test(rtde_recipe, a_failed_build_leaves_no_runs)
{
	_Alignas(8) unsigned char storage[136];
	struct rtl_rtde_frame f;

	build_known();
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any, "timestamp,nope", &rep), -ENOENT);
	cr_assert_eq(rec.n_runs, 0);
	cr_assert_eq(rec.wire_size, 0);
	memset(storage, 0xAB, sizeof(storage));
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, NULL, 0), 0);
	cr_assert_eq(storage[0], 0xAB, "an empty recipe writes nothing");
}

/* splitmix64: fixed-seed test data. */
static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The element size and run kind of value type @t. */
static void elem_of(enum rtl_rtde_type t, size_t *size, uint8_t *kind)
{
	*size = rtl_rtde_type_size(t) / rtl_rtde_type_elems(t);
	if (t == RTL_RTDE_TYPE_BOOL)
		*kind = RTL_RTDE_RUN_BOOL;
	else if (t == RTL_RTDE_TYPE_UINT8)
		*kind = RTL_RTDE_RUN_COPY8;
	else
		*kind = *size == 8 ? RTL_RTDE_RUN_SWAP64 : RTL_RTDE_RUN_SWAP32;
}

/*
 * The runs of @r cover the elements of its slots exactly, in order, each
 * with its kind, and are maximal (no two neighbours could be one run).
 */
static void check_runs(const struct rtl_rtde_recipe *r)
{
	uint32_t run = 0, at = 0; /* current run, elements of it seen */

	cr_assert_leq(r->n_runs, r->n);
	cr_assert_gt(r->n_runs, 0);
	for (uint32_t i = 0; i < r->n; i++) {
		enum rtl_rtde_type t = (enum rtl_rtde_type)r->slots[i].type;
		size_t es;
		uint8_t kind;

		elem_of(t, &es, &kind);
		for (unsigned e = 0; e < rtl_rtde_type_elems(t); e++) {
			const struct rtl_rtde_run *u;

			if (at == r->runs[run].count) {
				run++;
				at = 0;
			}
			cr_assert_lt(run, r->n_runs, "field %u: past the last run", i);
			u = &r->runs[run];
			cr_assert_eq(u->kind, kind, "field %u", i);
			cr_assert_eq(u->wire_offset + at * es, r->slots[i].wire_offset + e * es);
			cr_assert_eq(u->host_offset + at * es, r->slots[i].host_offset + e * es);
			at++;
		}
	}
	cr_assert_eq(run + 1, r->n_runs, "unused runs");
	cr_assert_eq(at, r->runs[run].count);
	for (uint32_t k = 1; k < r->n_runs; k++) {
		const struct rtl_rtde_run *a = &r->runs[k - 1], *b = &r->runs[k];
		size_t es = a->kind == RTL_RTDE_RUN_SWAP64   ? 8
			    : a->kind == RTL_RTDE_RUN_SWAP32 ? 4
							     : 1;

		cr_assert(a->kind != b->kind || a->wire_offset + a->count * es != b->wire_offset ||
				  a->host_offset + a->count * es != b->host_offset,
			  "runs %u and %u could be one", k - 1, k);
	}
}

static uint8_t wire_a[4096], wire_b[4096], wire_c[4096];
static _Alignas(8) unsigned char host_a[4096], host_b[4096];
static enum rtl_rtde_type ref_types[RTL_RTDE_RECIPE_MAX_FIELDS];
static uint32_t host_offs[RTL_RTDE_RECIPE_MAX_FIELDS];

/*
 * Build @names (@n) of direction @o and check decode and encode against the
 * codec's rtl_rtde_unpack_to() / rtl_rtde_pack_from() with the recipe's
 * layout: random package bytes (BOOL bytes any value), then encode of the
 * decoded frame, then encode of a frame with raw BOOL bytes.
 */
static void round_trip(const struct rtl_rtde_recipe_opts *o, const char *const *names, size_t n,
		       uint64_t seed)
{
	struct rtl_rtde_frame f;
	size_t len;

	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, o, names, n, &rep), (int)n, "%s", rep.text);
	check_runs(&rec);
	len = rec.wire_size;
	cr_assert_leq(len, sizeof(wire_a));
	cr_assert_leq(rec.host_size, sizeof(host_a));
	for (size_t i = 0; i < n; i++) {
		ref_types[i] = (enum rtl_rtde_type)rec.slots[i].type;
		host_offs[i] = rec.slots[i].host_offset;
	}
	for (size_t i = 0; i < len; i++)
		wire_a[i] = (uint8_t)rng(&seed);

	/* Decode: the same frame as the reference, padding untouched. */
	memset(host_a, 0x5C, sizeof(host_a));
	memset(host_b, 0x5C, sizeof(host_b));
	f = (struct rtl_rtde_frame){ host_a, rec.host_size, rec.host_size };
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, wire_a, len), 0);
	cr_assert_eq(rtl_rtde_unpack_to(host_b, wire_a, len, ref_types, n, host_offs), 0);
	cr_assert_eq(memcmp(host_a, host_b, sizeof(host_a)), 0, "decode differs from unpack_to");

	/* Encode of the decoded frame: the reference bytes, and the package
	 * with its BOOL bytes as 0 or 1. */
	memset(wire_b, 0xEE, sizeof(wire_b));
	memset(wire_c, 0xEE, sizeof(wire_c));
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, wire_b, len, &f), (int)len);
	cr_assert_eq(rtl_rtde_pack_from(wire_c, len, ref_types, n, host_offs, host_a), (int)len);
	cr_assert_eq(memcmp(wire_b, wire_c, sizeof(wire_b)), 0, "encode differs from pack_from");
	for (size_t i = 0; i < n; i++) {
		uint32_t w = rec.slots[i].wire_offset;

		if (ref_types[i] == RTL_RTDE_TYPE_BOOL) {
			cr_assert_eq(wire_b[w], wire_a[w] != 0);
			wire_b[w] = wire_a[w];
		}
	}
	cr_assert_eq(memcmp(wire_a, wire_b, len), 0, "round trip changed the package");

	/* Encode of a frame whose BOOL bytes are not 0 or 1 (written
	 * directly, not through the setters). */
	for (size_t i = 0; i < n; i++)
		if (ref_types[i] == RTL_RTDE_TYPE_BOOL)
			host_a[host_offs[i]] = (unsigned char)(rng(&seed) | 2);
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, wire_b, len, &f), (int)len);
	cr_assert_eq(rtl_rtde_pack_from(wire_c, len, ref_types, n, host_offs, host_a), (int)len);
	cr_assert_eq(memcmp(wire_b, wire_c, len), 0);
}

/* Up to @per fields of each value type of direction @flag, grouped by type
 * (in type order); returns the count and the types present in *@covered. */
static size_t by_type(const char **names, unsigned flag, size_t per, unsigned *covered)
{
	size_t n = 0;

	*covered = 0;
	for (int t = 0; t < RTL_RTDE_TYPE_COUNT; t++) {
		size_t k = 0;

		for (size_t i = 0; i < rtl_rtde_field_count() && k < per; i++) {
			const struct rtl_rtde_field *f = rtl_rtde_field_at(i);

			if ((int)f->type != t || !(f->flags & flag))
				continue;
			names[n++] = f->name;
			k++;
			*covered |= 1u << t;
		}
	}
	return n;
}

static void shuffle(const char **names, size_t n, uint64_t *seed)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(rng(seed) % i);
		const char *t = names[i - 1];

		names[i - 1] = names[j];
		names[j] = t;
	}
}

Test(rtde_recipe, runs_decode_and_encode_like_the_codec_in_any_order)
{
	static const char *names[RTL_RTDE_RECIPE_MAX_FIELDS + 1], *rr[RTL_RTDE_RECIPE_MAX_FIELDS];
	unsigned covered, want = 0;
	uint64_t seed = 7;
	size_t n, m;

	/* Every value type the registry has an output of: all but
	 * VECTOR6UINT32, which no field has (the codec's own tests cover
	 * it; its run kind is SWAP32, as VECTOR6INT32's). */
	for (int t = RTL_RTDE_TYPE_BOOL; t <= RTL_RTDE_TYPE_VECTOR6INT32; t++)
		want |= 1u << t;
	n = by_type(names, RTL_RTDE_FIELD_OUTPUT, 3, &covered);
	cr_assert_eq(covered, want, "types with output fields: %#x", covered);

	/* Grouped by type (long runs), reversed, interleaved one of each type
	 * (a run per field, padding between most), then shuffled. */
	round_trip(&out_any, names, n, seed++);
	for (size_t i = 0; i < n; i++)
		rr[i] = names[n - 1 - i];
	round_trip(&out_any, rr, n, seed++);
	m = 0;
	for (size_t k = 0; k < 3; k++)
		for (size_t i = k; i < n; i += 3)
			rr[m++] = names[i];
	round_trip(&out_any, rr, m, seed++);
	for (int r = 0; r < 20; r++) {
		shuffle(names, n, &seed);
		round_trip(&out_any, names, n, seed++);
	}

	/* Every output, in registry order and shuffled; random subsets. */
	n = every_field(names, RTL_RTDE_FIELD_OUTPUT);
	round_trip(&out_any, names, n, seed++);
	for (int r = 0; r < 20; r++) {
		shuffle(names, n, &seed);
		round_trip(&out_any, names, 1 + (size_t)(rng(&seed) % n), seed++);
	}

	/* Inputs: every type they have, grouped, shuffled, all of them. */
	n = by_type(names, RTL_RTDE_FIELD_INPUT, 3, &covered);
	cr_assert_geq(__builtin_popcount(covered), 5);
	round_trip(&in_quiet, names, n, seed++);
	shuffle(names, n, &seed);
	round_trip(&in_quiet, names, n, seed++);
	n = every_field(names, RTL_RTDE_FIELD_INPUT);
	round_trip(&in_quiet, names, n, seed++);
}

Test(rtde_recipe, decode_and_encode_allocate_nothing)
{
	static const char *names[RTL_RTDE_RECIPE_MAX_FIELDS + 1];
	size_t n = every_field(names, RTL_RTDE_FIELD_OUTPUT);
	struct rtl_rtde_frame f;
	int bad = 0;
	long allocs;

	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, names, n, &rep), (int)n);
	cr_assert_eq(rtl_rtde_frame_init(&f, host_a, sizeof(host_a), &rec), 0);
	memset(wire_a, 1, sizeof(wire_a));
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");

	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int i = 0; i < 100; i++) {
		bad |= rtl_rtde_recipe_decode(&rec, &f, wire_a, rec.wire_size) != 0;
		bad |= rtl_rtde_recipe_encode(&rec, wire_b, sizeof(wire_b), &f) !=
		       (int)rec.wire_size;
	}
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_not(bad);
	cr_assert_eq(allocs, 0, "%ld allocations in decode/encode", allocs);
}

Test(rtde_recipe, bool_is_normalised_both_ways)
{
	/* Three BOOLs in one run between a double and a UINT8. */
	uint8_t wire[16] = { 0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xFF, 0x80 };
	uint8_t out[16];
	_Alignas(8) unsigned char storage[16];
	struct rtl_rtde_frame f;

	cr_assert_eq(rtl_rtde_recipe_from_list(&rec, &out_any,
					       "timestamp,output_bit_register_64,"
					       "output_bit_register_65,output_bit_register_66,"
					       "tool_output_mode",
					       &rep),
		     5, "%s", rep.text);
	cr_assert_eq(rec.n_runs, 3);
	cr_assert_eq(rec.runs[1].kind, RTL_RTDE_RUN_BOOL);
	cr_assert_eq(rec.runs[1].count, 3);
	cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage), &rec), 0);
	cr_assert_eq(rtl_rtde_recipe_decode(&rec, &f, wire, 12), 0);
	cr_assert_eq(storage[8], 1);
	cr_assert_eq(storage[9], 0);
	cr_assert_eq(storage[10], 1);
	cr_assert_eq(storage[11], 0x80, "a UINT8 is copied as is");
	cr_assert(rtl_rtde_frame_get_bool(&f, rtl_rtde_recipe_handle_at(&rec, 3)));
	storage[9] = 0x40; /* written directly, not through a setter */
	cr_assert_eq(rtl_rtde_recipe_encode(&rec, out, sizeof(out), &f), 12);
	cr_assert_eq(out[8], 1);
	cr_assert_eq(out[9], 1);
	cr_assert_eq(out[10], 1);
	cr_assert_eq(out[11], 0x80);
	cr_assert_eq(memcmp(out, wire, 8), 0);
}

Test(rtde_recipe, handles_of_missing_names_are_invalid)
{
	struct rtl_rtde_handle h;

	build_known();
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &h, "actual_qd"), -ENOENT);
	cr_assert_not(rtl_rtde_handle_valid(h));
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &h, NULL), -EINVAL);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, NULL, "actual_q"), -EINVAL);
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
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT, VER(5, 12, 2), 0 };

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
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT, VER(10, 11, 0),
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
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &h, "control_step"), -ENOENT);
	cr_assert_eq(rtl_rtde_recipe_handle(&rec, &h, "actual_current_as_torque"), 0);
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

Test(rtde_recipe, every_field_of_a_direction_is_one_recipe)
{
	static const char *names[RTL_RTDE_RECIPE_MAX_FIELDS + 1];
	size_t n = every_field(names, RTL_RTDE_FIELD_OUTPUT);
	size_t wire = 0;

	/* UR's exhaustive output recipe: 406 names, about 3 KB packages. */
	cr_assert_eq(n, 406);
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, names, n, &rep), 406, "%s",
		     rep.text);
	for (size_t i = 0; i < n; i++)
		wire += rtl_rtde_type_size(rtl_rtde_field_find(names[i])->type);
	cr_assert_eq(rec.wire_size, wire);
	cr_assert_eq(rec.wire_size, 3003);
	n = every_field(names, RTL_RTDE_FIELD_INPUT);
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &in_quiet, names, n, &rep), (int)n, "%s",
		     rep.text);
}

Test(rtde_recipe, the_field_limit_is_out_of_reach_of_distinct_names)
{
	/* -E2BIG is defensive: the registry has fewer fields of either
	 * direction than a recipe holds, and a name past them is a
	 * duplicate, which is reported (-EEXIST) before the count. When the
	 * registry outgrows the limit, this fails: test -E2BIG then. */
	static const char *names[RTL_RTDE_RECIPE_MAX_FIELDS + 1];
	size_t n = every_field(names, RTL_RTDE_FIELD_OUTPUT);

	cr_assert_lt(n, RTL_RTDE_RECIPE_MAX_FIELDS);
	cr_assert_lt(every_field(names, RTL_RTDE_FIELD_INPUT), RTL_RTDE_RECIPE_MAX_FIELDS);
	n = every_field(names, RTL_RTDE_FIELD_OUTPUT);
	for (size_t i = n; i <= RTL_RTDE_RECIPE_MAX_FIELDS; i++)
		names[i] = names[i - n];
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec, &out_any, names,
						RTL_RTDE_RECIPE_MAX_FIELDS + 1, &rep),
		     -EEXIST);
	cr_assert_eq(rep.errors, RTL_RTDE_RECIPE_MAX_FIELDS + 1 - n);
	cr_assert_null(strstr(rep.text, "too many fields"));
	cr_assert_eq(rec.n, 0);
	cr_assert_eq(rec.n_runs, 0);
}

Test(rtde_recipe, empty_and_bad_arguments_are_einval)
{
	struct rtl_rtde_recipe_opts bad = { sizeof(bad), (enum rtl_rtde_recipe_dir)7, 0, 0 };
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
	struct rtl_rtde_recipe_opts o = { sizeof(o), RTL_RTDE_RECIPE_OUTPUT, VER(5, 11, 0), 0 };
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
