// SPDX-License-Identifier: MIT
/*
 * Tests of the input coalescer: unchanged values send nothing, one changed
 * field sends only its recipe, masks carry exactly the changed bits and are
 * cleared after a commit, the slider and analog outputs apply their first
 * value and never an unset one, encode without commit re-sends the newest
 * values, the bytes are the codec's (decoded back), counters, force, bad
 * arguments with their exact codes, that setup and the RT-safe calls never
 * allocate, and the life cycle (create, setup again, destroy).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_coalesce.h>
#include <rtloop/rtde_recipe.h>

#include "alloc-count.h"

/* ---- fixtures ------------------------------------------------------------ */

/* Every masked input, plus one plain register. */
#define IO_LIST                                                                             \
	"standard_digital_output_mask, standard_digital_output, "                           \
	"configurable_digital_output_mask, configurable_digital_output, "                   \
	"tool_digital_output_mask, tool_digital_output, speed_slider_mask, "                \
	"speed_slider_fraction, standard_analog_output_mask, standard_analog_output_type, " \
	"standard_analog_output_0, standard_analog_output_1, input_int_register_24"
/* A servo-style set-point: no masks. */
#define SERVO_LIST                                                                       \
	"input_int_register_25, input_double_register_24, input_double_register_25, "    \
	"input_double_register_26, input_double_register_27, input_double_register_28, " \
	"input_double_register_29, input_bit_register_64"

#define IO 0
#define SERVO 1
#define IO_ID 3
#define SERVO_ID 7

/* Large: keep them off the stack. */
static struct rtl_rtde_recipe rec_io, rec_servo, rec_tmp;
static uint8_t buf[4096];
/* Created empty before every test and destroyed after it: tests set it up
 * with the recipes they want. */
static struct rtl_rtde_coalesce *coal;

static void create_coal(void)
{
	cr_assert_eq(rtl_rtde_coalesce_create(&coal, NULL), 0);
	cr_assert_not_null(coal);
}

static void destroy_coal(void)
{
	rtl_rtde_coalesce_destroy(coal);
	coal = NULL;
}

TestSuite(rtde_coalesce, .init = create_coal, .fini = destroy_coal);

static void build(struct rtl_rtde_recipe *r, const char *list)
{
	static const struct rtl_rtde_recipe_opts in = { sizeof(in), RTL_RTDE_RECIPE_INPUT, 0,
							RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };

	cr_assert_gt(rtl_rtde_recipe_from_list(r, &in, list, NULL), 0, "recipe %s", list);
}

static struct rtl_rtde_handle hnd(const struct rtl_rtde_recipe *r, const char *name)
{
	struct rtl_rtde_handle h;

	cr_assert_eq(rtl_rtde_recipe_handle(r, &h, name), 0, "no field %s", name);
	return h;
}

/* Both recipes, ids IO_ID and SERVO_ID. */
static void setup_two(void)
{
	const struct rtl_rtde_recipe *rs[] = { &rec_io, &rec_servo };
	const uint8_t ids[] = { IO_ID, SERVO_ID };

	build(&rec_io, IO_LIST);
	build(&rec_servo, SERVO_LIST);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), 0);
}

static struct rtl_rtde_frame *io(void)
{
	return rtl_rtde_coalesce_frame(coal, IO);
}

static struct rtl_rtde_frame *servo(void)
{
	return rtl_rtde_coalesce_frame(coal, SERVO);
}

/* One decoded package of the output. */
struct pkg {
	uint8_t id;
	const uint8_t *start;
	size_t len;
	const uint8_t *fields;
	size_t fields_len;
};

/* Cut @len bytes of encoder output into packages; returns their number. */
static size_t split(const uint8_t *p, size_t len, struct pkg *pkgs, size_t max)
{
	size_t n = 0, off = 0;

	while (off < len) {
		struct rtl_rtde_data d;
		size_t size;

		cr_assert_geq(len - off, 3);
		size = rtl_rtde_load_u16(p + off);
		cr_assert_leq(size, len - off, "package overruns the output");
		cr_assert_eq(rtl_rtde_decode_data(&d, p + off, size, RTL_RTDE_PROTOCOL_V2,
						  RTL_RTDE_FROM_CLIENT),
			     0);
		cr_assert(d.has_recipe_id);
		cr_assert_lt(n, max);
		pkgs[n].id = d.recipe_id;
		pkgs[n].start = p + off;
		pkgs[n].len = size;
		pkgs[n].fields = d.fields;
		pkgs[n].fields_len = d.fields_len;
		n++;
		off += size;
	}
	return n;
}

/* Decode package @p of recipe @r back into a frame. */
static _Alignas(8) unsigned char decoded_buf[RTL_RTDE_COALESCE_MAX_BYTES];

static struct rtl_rtde_frame *decode(const struct rtl_rtde_recipe *r, const struct pkg *p)
{
	static struct rtl_rtde_frame f;

	cr_assert_eq(rtl_rtde_frame_init(&f, decoded_buf, sizeof(decoded_buf), r), 0);
	cr_assert_eq(rtl_rtde_recipe_decode(r, &f, p->fields, p->fields_len), 0);
	return &f;
}

static uint64_t get_uint(const struct rtl_rtde_frame *f, const struct rtl_rtde_recipe *r,
			 const char *name)
{
	return rtl_rtde_frame_get_uint(f, hnd(r, name));
}

static double get_double(const struct rtl_rtde_frame *f, const struct rtl_rtde_recipe *r,
			 const char *name)
{
	return rtl_rtde_frame_get_double(f, hnd(r, name));
}

/* Encode, expect exactly one package of recipe id @id, decode it. */
static struct rtl_rtde_frame *encode_one(const struct rtl_rtde_recipe *r, uint8_t id)
{
	static struct pkg p[8];
	int n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));

	cr_assert_gt(n, 0, "encode returned %d", n);
	cr_assert_eq(split(buf, (size_t)n, p, 8), 1);
	cr_assert_eq(p[0].id, id);
	return decode(r, &p[0]);
}

static void set_u(struct rtl_rtde_frame *f, const struct rtl_rtde_recipe *r, const char *name,
		  uint64_t v)
{
	cr_assert(rtl_rtde_frame_set_uint(f, hnd(r, name), v));
}

static void set_d(struct rtl_rtde_frame *f, const struct rtl_rtde_recipe *r, const char *name,
		  double v)
{
	cr_assert(rtl_rtde_frame_set_double(f, hnd(r, name), v));
}

/* ---- change detection ------------------------------------------------------ */

Test(rtde_coalesce, unchanged_values_send_nothing)
{
	setup_two();
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 0);

	/* Writing the value already sent is no change either. */
	set_d(servo(), &rec_servo, "input_double_register_24", 0.0);
	set_u(io(), &rec_io, "standard_digital_output", 0);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
}

Test(rtde_coalesce, one_changed_field_sends_only_its_recipe)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_d(servo(), &rec_servo, "input_double_register_27", 1.25);
	f = encode_one(&rec_servo, SERVO_ID);
	cr_assert_eq(get_double(f, &rec_servo, "input_double_register_27"), 1.25);
	cr_assert_eq(get_double(f, &rec_servo, "input_double_register_24"), 0.0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);

	cr_assert(rtl_rtde_frame_set_int(io(), hnd(&rec_io, "input_int_register_24"), 42));
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "input_int_register_24"), 0, "not a uint field");
	cr_assert_eq(rtl_rtde_frame_get_int(f, hnd(&rec_io, "input_int_register_24")), 42);
}

Test(rtde_coalesce, two_changed_recipes_travel_in_recipe_order)
{
	struct pkg p[4];
	int n;

	setup_two();
	cr_assert(rtl_rtde_frame_set_bool(servo(), hnd(&rec_servo, "input_bit_register_64"), true));
	cr_assert(rtl_rtde_frame_set_int(io(), hnd(&rec_io, "input_int_register_24"), -5));
	n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
	cr_assert_eq((size_t)n, 2 * 4 + rec_io.wire_size + rec_servo.wire_size);
	cr_assert_eq(split(buf, (size_t)n, p, 4), 2);
	cr_assert_eq(p[0].id, IO_ID);
	cr_assert_eq(p[1].id, SERVO_ID);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 2);
}

/* ---- bytes ------------------------------------------------------------------ */

/* The whole package as the codec makes it from frame @f. */
static size_t reference(const struct rtl_rtde_recipe *r, const struct rtl_rtde_frame *f, uint8_t id,
			uint8_t *out, size_t cap)
{
	uint8_t fields[1024];
	int n = rtl_rtde_recipe_encode(r, fields, sizeof(fields), f);

	cr_assert_gt(n, 0);
	n = rtl_rtde_encode_data(out, cap, RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT, id, fields,
				 (size_t)n);
	cr_assert_gt(n, 0);
	return (size_t)n;
}

Test(rtde_coalesce, bytes_equal_the_codec_output)
{
	static _Alignas(8) unsigned char refbuf[RTL_RTDE_COALESCE_MAX_BYTES];
	struct rtl_rtde_frame ref;
	uint8_t want[1024];
	size_t wn;
	int n;
	struct rtl_rtde_frame *f;

	setup_two();
	/* No masks: byte for byte the codec's package of the pending frame. */
	for (int i = 0; i < 6; i++) {
		char name[40];

		snprintf(name, sizeof(name), "input_double_register_%d", 24 + i);
		set_d(servo(), &rec_servo, name, 0.1 * (i + 1) - 0.35);
	}
	cr_assert(rtl_rtde_frame_set_int(servo(), hnd(&rec_servo, "input_int_register_25"),
					 INT32_MIN));
	cr_assert(rtl_rtde_frame_set_bool(servo(), hnd(&rec_servo, "input_bit_register_64"), true));
	n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
	wn = reference(&rec_servo, servo(), SERVO_ID, want, sizeof(want));
	cr_assert_eq((size_t)n, wn);
	cr_assert_arr_eq(buf, want, wn)
		;
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* Masks: the codec's package of the frame with the masks filled in
	 * and unset doubles as 0.0. */
	set_u(io(), &rec_io, "standard_digital_output", 0x81);
	set_u(io(), &rec_io, "tool_digital_output", 0x02);
	set_d(io(), &rec_io, "standard_analog_output_1", 0.5);
	n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
	cr_assert_eq(rtl_rtde_frame_init(&ref, refbuf, sizeof(refbuf), &rec_io), 0);
	memcpy(refbuf, io()->values, rec_io.host_size);
	set_u(&ref, &rec_io, "standard_digital_output_mask", 0x81);
	set_u(&ref, &rec_io, "tool_digital_output_mask", 0x02);
	set_u(&ref, &rec_io, "standard_analog_output_mask", 0x02);
	set_d(&ref, &rec_io, "speed_slider_fraction", 0.0);
	set_d(&ref, &rec_io, "standard_analog_output_0", 0.0);
	wn = reference(&rec_io, &ref, IO_ID, want, sizeof(want));
	cr_assert_eq((size_t)n, wn);
	cr_assert_arr_eq(buf, want, wn)
		;

	/* And decoded back with the codec. */
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x81);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x81);
	cr_assert_eq(get_uint(f, &rec_io, "configurable_digital_output_mask"), 0);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 0);
	cr_assert_eq(get_double(f, &rec_io, "standard_analog_output_1"), 0.5);
}

/* ---- masks ------------------------------------------------------------------ */

Test(rtde_coalesce, digital_mask_is_the_changed_bits_and_clears_after_commit)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_u(io(), &rec_io, "standard_digital_output", 0x09);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x09);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x09);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* Turn bit 0 off and bit 7 on: only those two bits are in the mask. */
	set_u(io(), &rec_io, "standard_digital_output", 0x88);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x81);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x88);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* Another field of the recipe changes: the mask is cleared. */
	cr_assert(rtl_rtde_frame_set_int(io(), hnd(&rec_io, "input_int_register_24"), 1));
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x88);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
}

Test(rtde_coalesce, each_digital_mask_follows_its_own_value)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_u(io(), &rec_io, "configurable_digital_output", 0x40);
	/* Bits 2-7 of the tool mask are reserved: never sent. */
	set_u(io(), &rec_io, "tool_digital_output", 0xfd);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "configurable_digital_output_mask"), 0x40);
	cr_assert_eq(get_uint(f, &rec_io, "tool_digital_output_mask"), 0x01);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0);
}

Test(rtde_coalesce, mask_fields_written_by_the_caller_are_ignored)
{
	setup_two();
	set_u(io(), &rec_io, "standard_digital_output_mask", 0xff);
	set_u(io(), &rec_io, "speed_slider_mask", 1);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert_eq(get_uint(io(), &rec_io, "standard_digital_output_mask"), 0);
}

Test(rtde_coalesce, speed_slider_first_write_applies_then_only_changes)
{
	struct rtl_rtde_frame *f;

	setup_two();
	/* Unset: NaN in the pending frame. */
	cr_assert(isnan(get_double(io(), &rec_io, "speed_slider_fraction")));
	/* 0.0 is a value like any other: the first write applies. */
	set_d(io(), &rec_io, "speed_slider_fraction", 0.0);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 1);
	cr_assert_eq(get_double(f, &rec_io, "speed_slider_fraction"), 0.0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	set_d(io(), &rec_io, "speed_slider_fraction", 0.0);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);

	set_d(io(), &rec_io, "speed_slider_fraction", 0.75);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 1);
	cr_assert_eq(get_double(f, &rec_io, "speed_slider_fraction"), 0.75);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	set_u(io(), &rec_io, "standard_digital_output", 1);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 0);
	cr_assert_eq(get_double(f, &rec_io, "speed_slider_fraction"), 0.75);
}

Test(rtde_coalesce, unset_slider_and_analog_outputs_are_never_applied)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_u(io(), &rec_io, "standard_digital_output", 4);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 0);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_mask"), 0);
	/* 0.0 on the wire, not NaN. */
	cr_assert_eq(get_double(f, &rec_io, "speed_slider_fraction"), 0.0);
	cr_assert_eq(get_double(f, &rec_io, "standard_analog_output_0"), 0.0);
	cr_assert_eq(get_double(f, &rec_io, "standard_analog_output_1"), 0.0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	/* Still unset after the commit: no change, nothing sent. */
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert(isnan(get_double(io(), &rec_io, "standard_analog_output_0")));
}

Test(rtde_coalesce, analog_mask_bit_per_output_and_type)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_d(io(), &rec_io, "standard_analog_output_0", 0.25);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_mask"), 0x01);
	cr_assert_eq(get_double(f, &rec_io, "standard_analog_output_0"), 0.25);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	set_d(io(), &rec_io, "standard_analog_output_1", 0.5);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_mask"), 0x02);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* Output 0 switches to voltage: its bit goes with the type bit. */
	set_u(io(), &rec_io, "standard_analog_output_type", 0x01);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_mask"), 0x01);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_type"), 0x01);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
}

Test(rtde_coalesce, a_mask_without_its_value_stays_zero)
{
	const struct rtl_rtde_recipe *rs[] = { &rec_tmp };
	const uint8_t ids[] = { 1 };
	struct rtl_rtde_frame *f;

	build(&rec_tmp, "standard_digital_output_mask, input_int_register_30");
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 1), 0);
	set_u(rtl_rtde_coalesce_frame(coal, 0), &rec_tmp, "standard_digital_output_mask", 0xff);
	cr_assert(rtl_rtde_frame_set_int(rtl_rtde_coalesce_frame(coal, 0),
					 hnd(&rec_tmp, "input_int_register_30"), 9));
	f = encode_one(&rec_tmp, 1);
	cr_assert_eq(get_uint(f, &rec_tmp, "standard_digital_output_mask"), 0);
}

/* ---- two phases --------------------------------------------------------------- */

Test(rtde_coalesce, encode_without_commit_resends_the_newest_values)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_d(servo(), &rec_servo, "input_double_register_24", 1.0);
	set_u(io(), &rec_io, "standard_digital_output", 0x02);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	/* The send would block: no commit. The IO change was undone. */
	set_d(servo(), &rec_servo, "input_double_register_24", 2.0);
	set_u(io(), &rec_io, "standard_digital_output", 0x00);
	f = encode_one(&rec_servo, SERVO_ID);
	cr_assert_eq(get_double(f, &rec_servo, "input_double_register_24"), 2.0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 0, "a second commit commits nothing");
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
}

Test(rtde_coalesce, commit_records_what_was_encoded_not_later_writes)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_d(servo(), &rec_servo, "input_double_register_25", 1.0);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	/* Written while the package is on its way. */
	set_d(servo(), &rec_servo, "input_double_register_25", 3.0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	f = encode_one(&rec_servo, SERVO_ID);
	cr_assert_eq(get_double(f, &rec_servo, "input_double_register_25"), 3.0);
}

Test(rtde_coalesce, uncommitted_mask_is_sent_again)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_u(io(), &rec_io, "standard_digital_output", 0x10);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x10);
	f = encode_one(&rec_io, IO_ID);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x10);
}

/* ---- counters ------------------------------------------------------------------ */

static void assert_stats(size_t i, uint64_t sent, uint64_t suppressed)
{
	struct rtl_rtde_coalesce_counters st = { .size = sizeof(st) };

	cr_assert_eq(rtl_rtde_coalesce_stats(coal, i, &st), 0);
	cr_assert_eq(st.sent, sent, "recipe %zu: sent %llu, want %llu", i,
		     (unsigned long long)st.sent, (unsigned long long)sent);
	cr_assert_eq(st.suppressed, suppressed, "recipe %zu: suppressed %llu, want %llu", i,
		     (unsigned long long)st.suppressed, (unsigned long long)suppressed);
}

Test(rtde_coalesce, counters_count_sent_and_suppressed_per_recipe_and_total)
{
	struct rtl_rtde_coalesce_counters t = { .size = sizeof(t) };

	setup_two();
	assert_stats(IO, 0, 0);
	assert_stats(SERVO, 0, 0);

	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0); /* 2 suppressed */
	set_d(servo(), &rec_servo, "input_double_register_29", 9.0);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0); /* IO suppressed */
	assert_stats(SERVO, 0, 1);					   /* not sent yet */
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	assert_stats(SERVO, 1, 1);
	assert_stats(IO, 0, 2);

	set_u(io(), &rec_io, "standard_digital_output", 1);
	set_d(servo(), &rec_servo, "input_double_register_29", 8.0);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 2);
	assert_stats(IO, 1, 2);
	assert_stats(SERVO, 2, 1);

	cr_assert_eq(rtl_rtde_coalesce_total(coal, &t), 0);
	cr_assert_eq(t.sent, 3);
	cr_assert_eq(t.suppressed, 3);
}

/* ---- force ------------------------------------------------------------------------ */

Test(rtde_coalesce, force_resends_every_recipe_with_the_outputs_ever_set)
{
	struct pkg p[4];
	struct rtl_rtde_frame *f;
	int n;

	setup_two();
	set_u(io(), &rec_io, "standard_digital_output", 0x03);
	set_d(io(), &rec_io, "speed_slider_fraction", 0.5);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	set_u(io(), &rec_io, "standard_digital_output", 0x01);
	cr_assert_gt(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* Reconnect: everything goes again, the digital mask holds bits 0 and
	 * 1 (both ever set), the slider is re-applied, unset analog stays 0. */
	cr_assert_eq(rtl_rtde_coalesce_force(coal), 0);
	n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
	cr_assert_eq(split(buf, (size_t)n, p, 4), 2);
	cr_assert_eq(p[0].id, IO_ID);
	cr_assert_eq(p[1].id, SERVO_ID);
	f = decode(&rec_io, &p[0]);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x03);
	cr_assert_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x01);
	cr_assert_eq(get_uint(f, &rec_io, "configurable_digital_output_mask"), 0);
	cr_assert_eq(get_uint(f, &rec_io, "speed_slider_mask"), 1);
	cr_assert_eq(get_uint(f, &rec_io, "standard_analog_output_mask"), 0);

	/* Without a commit the force holds. */
	n = rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
	cr_assert_eq(split(buf, (size_t)n, p, 4), 2);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 2);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	/* The last encode found both unchanged. */
	assert_stats(IO, 3, 1);
	assert_stats(SERVO, 1, 3);
}

Test(rtde_coalesce, set_id_changes_the_package_id)
{
	setup_two();
	cr_assert_eq(rtl_rtde_coalesce_set_id(coal, SERVO, 9), 0);
	cr_assert_eq(rtl_rtde_coalesce_set_id(coal, SERVO, IO_ID), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_set_id(coal, SERVO, 0), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_set_id(coal, 2, 10), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_set_id(NULL, 0, 10), -EINVAL);
	set_d(servo(), &rec_servo, "input_double_register_24", 1.0);
	encode_one(&rec_servo, 9);
}

/* ---- limits and bad arguments ---------------------------------------------------------- */

Test(rtde_coalesce, a_recipe_of_every_input_fits)
{
	static const char *names[512];
	static const struct rtl_rtde_recipe_opts in = { sizeof(in), RTL_RTDE_RECIPE_INPUT, 0,
							RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING };
	const struct rtl_rtde_recipe *rs[] = { &rec_tmp };
	const uint8_t ids[] = { 1 };
	size_t n = 0;
	struct rtl_rtde_frame *f;

	for (size_t i = 0; i < rtl_rtde_field_count(); i++) {
		const struct rtl_rtde_field *fd = rtl_rtde_field_at(i);

		if (fd->flags & RTL_RTDE_FIELD_INPUT)
			names[n++] = fd->name;
	}
	cr_assert_eq(rtl_rtde_recipe_from_names(&rec_tmp, &in, names, n, NULL), (int)n);
	cr_assert_leq(rec_tmp.host_size, RTL_RTDE_COALESCE_MAX_BYTES);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 1), 0);
	f = rtl_rtde_coalesce_frame(coal, 0);
	set_u(f, &rec_tmp, "standard_digital_output", 0x20);
	f = encode_one(&rec_tmp, 1);
	cr_assert_eq(get_uint(f, &rec_tmp, "standard_digital_output_mask"), 0x20);
}

Test(rtde_coalesce, bad_arguments_at_setup)
{
	const struct rtl_rtde_recipe *rs[RTL_RTDE_COALESCE_MAX_RECIPES + 1];
	uint8_t ids[RTL_RTDE_COALESCE_MAX_RECIPES + 1];
	static struct rtl_rtde_recipe out_rec, big, empty;
	static const struct rtl_rtde_recipe_opts out = { sizeof(out), RTL_RTDE_RECIPE_OUTPUT, 0,
							 0 };

	build(&rec_servo, SERVO_LIST);
	for (size_t i = 0; i <= RTL_RTDE_COALESCE_MAX_RECIPES; i++) {
		rs[i] = &rec_servo;
		ids[i] = (uint8_t)(i + 1);
	}
	cr_assert_eq(rtl_rtde_coalesce_setup(NULL, rs, ids, 1), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, NULL, ids, 1), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, NULL, 1), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 0), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, RTL_RTDE_COALESCE_MAX_RECIPES + 1),
		     -E2BIG);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, RTL_RTDE_COALESCE_MAX_RECIPES), 0);

	/* A recipe id of 0 is the controller's "refused"; ids are unique. */
	ids[1] = 0;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -EINVAL);
	ids[1] = 1;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -EINVAL);
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 0), "a failed setup leaves no recipes");
	ids[1] = 2;

	/* Output recipes, empty recipes and NULL recipes are refused. */
	cr_assert_gt(rtl_rtde_recipe_from_list(&out_rec, &out, "timestamp", NULL), 0);
	rs[1] = &out_rec;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -EINVAL);
	memset(&empty, 0, sizeof(empty));
	empty.dir = RTL_RTDE_RECIPE_INPUT;
	rs[1] = &empty;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -EINVAL);
	rs[1] = NULL;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -EINVAL);

	/* Every registry input fits, so only a recipe built by hand can be
	 * too large for the fixed frames. */
	big = rec_servo;
	big.host_size = RTL_RTDE_COALESCE_MAX_BYTES + 8;
	rs[1] = &big;
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 2), -E2BIG);
}

Test(rtde_coalesce, bad_arguments_after_setup)
{
	struct rtl_rtde_coalesce_counters st = { .size = sizeof(st) };

	setup_two();
	cr_assert_eq(rtl_rtde_coalesce_encode(NULL, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, NULL, 10), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, NULL, 0), 0, "nothing to send needs no room");
	cr_assert_eq(rtl_rtde_coalesce_commit(NULL), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_force(NULL), -EINVAL);
	cr_assert_null(rtl_rtde_coalesce_frame(NULL, 0));
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 2));
	cr_assert_eq(rtl_rtde_coalesce_stats(NULL, 0, &st), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_stats(coal, 0, NULL), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_stats(coal, 2, &st), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_total(NULL, &st), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_total(coal, NULL), -EINVAL);
}

Test(rtde_coalesce, too_small_a_buffer_is_enospc_and_commits_nothing)
{
	size_t both;
	int n;

	setup_two();
	both = 2 * 4 + rec_io.wire_size + rec_servo.wire_size;
	set_u(io(), &rec_io, "standard_digital_output", 0x04);
	set_d(servo(), &rec_servo, "input_double_register_24", 1.0);
	/* Room for the first package but not the second. */
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, both - 1), -ENOSPC);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, NULL, 0), -ENOSPC);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 0);
	assert_stats(IO, 0, 0);
	assert_stats(SERVO, 0, 0);

	/* An earlier successful encode is dropped by a failed one. */
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), (int)both);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, 1), -ENOSPC);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 0);

	n = rtl_rtde_coalesce_encode(coal, buf, both);
	cr_assert_eq(n, (int)both);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 2);
}

/* ---- RT safety ------------------------------------------------------------------------ */

Test(rtde_coalesce, rt_calls_do_not_allocate)
{
	const struct rtl_rtde_recipe *rs[] = { &rec_io, &rec_servo };
	const uint8_t ids[] = { IO_ID, SERVO_ID };
	struct rtl_rtde_coalesce_counters st = { .size = sizeof(st) };
	struct rtl_rtde_handle hd, hdo, hs;
	long sink = 0;
	long allocs;

	build(&rec_io, IO_LIST);
	build(&rec_servo, SERVO_LIST);
	hd = hnd(&rec_servo, "input_double_register_26");
	hdo = hnd(&rec_io, "standard_digital_output");
	hs = hnd(&rec_io, "speed_slider_fraction");

	/* Positive control: the counter sees an allocation, so a zero below
	 * means something. */
	cr_assert(rtl_test_alloc_selftest(), "malloc counting inactive");

	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	sink += rtl_rtde_coalesce_setup(coal, rs, ids, 2);
	for (int i = 0; i < 1000; i++) {
		rtl_rtde_frame_set_double(servo(), hd, i * 0.001);
		rtl_rtde_frame_set_uint(io(), hdo, (uint64_t)(i / 10) & 0xff);
		rtl_rtde_frame_set_double(io(), hs, (i / 100) * 0.1);
		if (i % 250 == 0)
			sink += rtl_rtde_coalesce_force(coal);
		sink += rtl_rtde_coalesce_encode(coal, buf, sizeof(buf));
		if (i % 3)
			sink += rtl_rtde_coalesce_commit(coal);
		sink += rtl_rtde_coalesce_encode(coal, buf, 8);
		sink += rtl_rtde_coalesce_stats(coal, 1, &st);
		sink += rtl_rtde_coalesce_total(coal, &st);
		sink += rtl_rtde_coalesce_set_id(coal, 0, IO_ID);
	}
	allocs = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_assert_eq(allocs, 0, "%ld allocations", allocs);
	cr_assert_neq(sink, 0);
	cr_assert_gt(st.sent, 0);
}

/* ---- the heartbeat, keep-alives and raw masks --------------------------------------- */

static int32_t beat_of(const struct rtl_rtde_frame *f)
{
	return rtl_rtde_frame_get_int(f, hnd(&rec_servo, "input_int_register_25"));
}

Test(rtde_coalesce, heartbeat_is_ours_never_a_change_and_new_in_every_package)
{
	struct rtl_rtde_frame *f;

	setup_two();
	cr_assert_eq(rtl_rtde_coalesce_set_heartbeat(coal, SERVO,
						     hnd(&rec_servo, "input_int_register_25")),
		     0);
	/* The caller's writes to it change nothing. */
	cr_assert(rtl_rtde_frame_set_int(servo(), hnd(&rec_servo, "input_int_register_25"), 77));
	cr_expect_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0,
		     "a heartbeat write alone is no change");
	set_d(servo(), &rec_servo, "input_double_register_24", 0.5);
	f = encode_one(&rec_servo, SERVO_ID);
	cr_expect_eq(beat_of(f), 1, "the first package carries 1, not the caller's 77");
	/* Not committed: the re-encode takes the next value. */
	f = encode_one(&rec_servo, SERVO_ID);
	cr_expect_eq(beat_of(f), 2);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_expect_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0, "unchanged after commit");
	cr_expect_eq(rtl_rtde_coalesce_next_beat(coal), 3, "a value given out elsewhere");
	set_d(servo(), &rec_servo, "input_double_register_24", 0.75);
	f = encode_one(&rec_servo, SERVO_ID);
	cr_expect_eq(beat_of(f), 4, "never a value handed out before");
	cr_expect_eq(rtl_rtde_coalesce_beat_recipe(coal), SERVO);
	cr_expect_eq(
		rtl_rtde_coalesce_beat_offset(coal),
		(int)(RTL_RTDE_HEADER_SIZE + 1 +
		      rec_servo.slots[hnd(&rec_servo, "input_int_register_25").index].wire_offset));
	/* Wrong type or recipe: refused. */
	cr_expect_eq(rtl_rtde_coalesce_set_heartbeat(coal, SERVO,
						     hnd(&rec_servo, "input_double_register_24")),
		     -EINVAL);
	cr_expect_eq(
		rtl_rtde_coalesce_set_heartbeat(coal, 9, hnd(&rec_servo, "input_int_register_25")),
		-EINVAL);
	cr_expect_eq(
		rtl_rtde_coalesce_set_heartbeat(NULL, 0, hnd(&rec_servo, "input_int_register_25")),
		-EINVAL);
}

Test(rtde_coalesce, resend_sends_one_unchanged_recipe_once_with_no_mask)
{
	struct rtl_rtde_frame *f;

	setup_two();
	set_u(io(), &rec_io, "standard_digital_output", 0x05);
	encode_one(&rec_io, IO_ID);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_assert_eq(rtl_rtde_coalesce_resend(coal, IO), 0);
	f = encode_one(&rec_io, IO_ID);
	cr_expect_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0,
		     "a keep-alive re-applies no output");
	cr_expect_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x05);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	cr_expect_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0, "once only");
	cr_expect_eq(rtl_rtde_coalesce_resend(coal, 2), -EINVAL);
	cr_expect_eq(rtl_rtde_coalesce_resend(NULL, 0), -EINVAL);
}

Test(rtde_coalesce, raw_masks_go_out_as_written)
{
	struct rtl_rtde_frame *f;

	setup_two();
	cr_assert_eq(rtl_rtde_coalesce_raw_masks(coal, true), 0);
	/* Turn output 0 off: only a raw mask can say "bit 0, value 0". */
	set_u(io(), &rec_io, "standard_digital_output_mask", 0x01);
	set_u(io(), &rec_io, "standard_digital_output", 0x00);
	set_u(io(), &rec_io, "speed_slider_mask", 1); /* but the fraction stays unset */
	f = encode_one(&rec_io, IO_ID);
	cr_expect_eq(get_uint(f, &rec_io, "standard_digital_output_mask"), 0x01);
	cr_expect_eq(get_uint(f, &rec_io, "standard_digital_output"), 0x00);
	cr_expect_eq(get_uint(f, &rec_io, "speed_slider_mask"), 0, "an unset value never applies");
	cr_expect_eq(get_double(f, &rec_io, "speed_slider_fraction"), 0.0, "and goes out as 0.0");
	cr_expect_eq(rtl_rtde_coalesce_raw_masks(NULL, true), -EINVAL);
}

/* ---- life cycle ------------------------------------------------------------------------ */

Test(rtde_coalesce, create_wants_somewhere_to_put_it)
{
	cr_assert_eq(rtl_rtde_coalesce_create(NULL, NULL), -EINVAL);
}

Test(rtde_coalesce, destroy_accepts_null)
{
	rtl_rtde_coalesce_destroy(NULL);
}

Test(rtde_coalesce, a_created_coalescer_has_no_recipes_until_setup)
{
	struct rtl_rtde_coalesce_counters st = { .size = sizeof(st), .sent = 1, .suppressed = 1 };

	/* The counters sit on their own cache lines only if the whole
	 * coalescer does. */
	cr_assert_eq((uintptr_t)coal % RTL_CACHELINE, 0, "not cache-line aligned");
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 0));
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0, "no bytes to send");
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, NULL, 0), 0);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 0);
	cr_assert_eq(rtl_rtde_coalesce_force(coal), 0);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0, "nothing to force");
	cr_assert_eq(rtl_rtde_coalesce_resend(coal, 0), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_set_id(coal, 0, 1), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_beat_recipe(coal), -1);
	cr_assert_eq(rtl_rtde_coalesce_beat_offset(coal), -1);
	cr_assert_eq(rtl_rtde_coalesce_stats(coal, 0, &st), -EINVAL);
	cr_assert_eq(rtl_rtde_coalesce_total(coal, &st), 0);
	cr_assert_eq(st.sent, 0);
	cr_assert_eq(st.suppressed, 0);
}

Test(rtde_coalesce, setup_after_a_failed_setup_works)
{
	const struct rtl_rtde_recipe *rs[] = { &rec_io, &rec_servo };
	const uint8_t same[] = { IO_ID, IO_ID };

	build(&rec_io, IO_LIST);
	build(&rec_servo, SERVO_LIST);
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, same, 2), -EINVAL);
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 0));
	setup_two();
	set_d(servo(), &rec_servo, "input_double_register_24", 2.5);
	cr_assert_eq(get_double(encode_one(&rec_servo, SERVO_ID), &rec_servo,
				"input_double_register_24"),
		     2.5);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);
	assert_stats(SERVO, 1, 0);
}

Test(rtde_coalesce, setup_again_starts_over)
{
	const struct rtl_rtde_recipe *rs[] = { &rec_servo };
	const uint8_t ids[] = { SERVO_ID };

	setup_two();
	cr_assert_eq(rtl_rtde_coalesce_set_heartbeat(coal, SERVO,
						     hnd(&rec_servo, "input_int_register_25")),
		     0);
	cr_assert_eq(rtl_rtde_coalesce_raw_masks(coal, true), 0);
	set_d(servo(), &rec_servo, "input_double_register_24", 1.0);
	encode_one(&rec_servo, SERVO_ID);
	cr_assert_eq(rtl_rtde_coalesce_commit(coal), 1);

	/* One recipe now: the old ones, their values, the heartbeat and the
	 * counters are gone. */
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 1), 0);
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 1));
	cr_assert_eq(rtl_rtde_coalesce_beat_recipe(coal), -1);
	cr_assert_eq(rtl_rtde_frame_get_double(rtl_rtde_coalesce_frame(coal, 0),
					       hnd(&rec_servo, "input_double_register_24")),
		     0.0);
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
	assert_stats(0, 0, 1);

	/* And a failed setup leaves it empty, as after create. */
	cr_assert_eq(rtl_rtde_coalesce_setup(coal, rs, ids, 0), -EINVAL);
	cr_assert_null(rtl_rtde_coalesce_frame(coal, 0));
	cr_assert_eq(rtl_rtde_coalesce_encode(coal, buf, sizeof(buf)), 0);
}
