// SPDX-License-Identifier: MIT
/*
 * RTDE codec: bad input of every kind gets its exact error code, no decoder
 * reads past its buffer (every test runs under ASan in CI), and the value
 * and list helpers behave as documented.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>

static const enum rtl_rtde_type all_types[] = {
	RTL_RTDE_TYPE_BOOL,	     RTL_RTDE_TYPE_UINT8,    RTL_RTDE_TYPE_UINT32,
	RTL_RTDE_TYPE_UINT64,	     RTL_RTDE_TYPE_INT32,    RTL_RTDE_TYPE_DOUBLE,
	RTL_RTDE_TYPE_VECTOR3D,	     RTL_RTDE_TYPE_VECTOR6D, RTL_RTDE_TYPE_VECTOR6INT32,
	RTL_RTDE_TYPE_VECTOR6UINT32,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

/* A heap copy of exactly @len bytes, so ASan catches any read past it. */
static uint8_t *exact(const void *bytes, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	cr_assert_not_null(p);
	if (len)
		memcpy(p, bytes, len);
	return p;
}

/* Run every decoder over @bytes as (proto, dir) and return its result. */
typedef int (*decode_fn)(const uint8_t *buf, size_t len, int proto, int dir);

static int dec_v_req(const uint8_t *b, size_t l, int p, int d)
{
	uint16_t v;

	(void)p, (void)d;
	return rtl_rtde_decode_protocol_version_request(&v, b, l);
}

static int dec_urv_req(const uint8_t *b, size_t l, int p, int d)
{
	(void)p, (void)d;
	return rtl_rtde_decode_urcontrol_version_request(b, l);
}

static int dec_urv_reply(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_controller_version v;

	(void)p, (void)d;
	return rtl_rtde_decode_urcontrol_version_reply(&v, b, l);
}

static int dec_start(const uint8_t *b, size_t l, int p, int d)
{
	(void)p, (void)d;
	return rtl_rtde_decode_start(b, l);
}

static int dec_pause(const uint8_t *b, size_t l, int p, int d)
{
	(void)p, (void)d;
	return rtl_rtde_decode_pause(b, l);
}

static int dec_accepted(const uint8_t *b, size_t l, int p, int d)
{
	bool a;

	(void)p, (void)d;
	return rtl_rtde_decode_accepted_reply(&a, b, l, RTL_RTDE_PKG_START);
}

static int dec_o_req(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_setup_request r;

	(void)d;
	return rtl_rtde_decode_setup_outputs(&r, b, l, p);
}

static int dec_i_req(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_setup_request r;

	(void)p, (void)d;
	return rtl_rtde_decode_setup_inputs(&r, b, l);
}

static int dec_o_reply(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_setup_reply r;

	(void)d;
	return rtl_rtde_decode_setup_outputs_reply(&r, b, l, p);
}

static int dec_i_reply(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_setup_reply r;

	(void)p, (void)d;
	return rtl_rtde_decode_setup_inputs_reply(&r, b, l);
}

static int dec_text(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_text t;

	return rtl_rtde_decode_text(&t, b, l, p, d);
}

static int dec_data(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_data x;

	return rtl_rtde_decode_data(&x, b, l, p, d);
}

static int dec_any(const uint8_t *b, size_t l, int p, int d)
{
	struct rtl_rtde_msg m;

	return rtl_rtde_decode(&m, b, l, p, d);
}

static const decode_fn decoders[] = {
	dec_v_req, dec_urv_req, dec_urv_reply, dec_start, dec_pause, dec_accepted, dec_o_req,
	dec_i_req, dec_o_reply, dec_i_reply,   dec_text,  dec_data,  dec_any,
};
#define N_DECODERS (sizeof(decoders) / sizeof(decoders[0]))

static void expect_all(const void *bytes, size_t len, int want)
{
	uint8_t *p = exact(bytes, len);

	for (size_t i = 0; i < N_DECODERS; i++)
		for (int proto = 1; proto <= 2; proto++)
			for (int dir = 0; dir <= 1; dir++) {
				int got = decoders[i](p, len, proto, dir);

				cr_assert_eq(got, want, "decoder %zu v%d dir %d: %d, want %d", i,
					     proto, dir, got, want);
			}
	free(p);
}

/* ---- framing errors, common to every decoder --------------------------- */

Test(rtde_codec, empty_input_is_emsgsize_for_every_decoder)
{
	uint8_t none = 0;

	expect_all(&none, 0, -EMSGSIZE);
	for (size_t i = 0; i < N_DECODERS; i++)
		cr_assert_eq(decoders[i](NULL, 0, 2, 0), -EMSGSIZE);
}

Test(rtde_codec, null_buffer_with_length_is_einval)
{
	for (size_t i = 0; i < N_DECODERS; i++)
		cr_assert_eq(decoders[i](NULL, 4, 2, 0), -EINVAL);
}

Test(rtde_codec, buffers_shorter_than_a_header_are_emsgsize)
{
	static const uint8_t two[] = { 0x00, 0x02 };
	static const uint8_t one[] = { 0x00 };

	expect_all(two, sizeof(two), -EMSGSIZE);
	expect_all(one, sizeof(one), -EMSGSIZE);
}

Test(rtde_codec, truncated_package_is_emsgsize)
{
	/* A v reply whose header says 19 bytes, cut after 10. */
	static const uint8_t cut[] = { 0x00, 0x13, 0x76, 0, 0, 0, 5, 0, 0, 0 };

	expect_all(cut, sizeof(cut), -EMSGSIZE);
}

Test(rtde_codec, trailing_bytes_after_a_package_are_emsgsize)
{
	static const uint8_t two_starts[] = { 0x00, 0x03, 0x53, 0x00, 0x03, 0x53 };

	expect_all(two_starts, sizeof(two_starts), -EMSGSIZE);
}

Test(rtde_codec, header_declaring_less_than_three_is_emsgsize)
{
	static const uint8_t zero[] = { 0x00, 0x00, 0x53 };
	static const uint8_t two[] = { 0x00, 0x02, 0x53, 0x01 };

	expect_all(zero, sizeof(zero), -EMSGSIZE);
	expect_all(two, sizeof(two), -EMSGSIZE);
}

Test(rtde_codec, bad_protocol_version_argument_is_einval)
{
	static const uint8_t msg[] = { 0x00, 0x04, 0x4D, 0x00 };
	struct rtl_rtde_text t;
	struct rtl_rtde_data d;
	struct rtl_rtde_msg m;
	uint8_t buf[16];

	cr_assert_eq(rtl_rtde_decode_text(&t, msg, sizeof(msg), 3, RTL_RTDE_FROM_CLIENT), -EINVAL);
	cr_assert_eq(rtl_rtde_decode_data(&d, msg, sizeof(msg), 0, RTL_RTDE_FROM_CLIENT), -EINVAL);
	cr_assert_eq(rtl_rtde_decode(&m, msg, sizeof(msg), 0, RTL_RTDE_FROM_CLIENT), -EINVAL);
	cr_assert_eq(rtl_rtde_decode(&m, msg, sizeof(msg), 2, 7), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_setup_outputs(buf, sizeof(buf), 3, 1.0, "a", 1), -EINVAL);
	cr_assert_eq(rtl_rtde_data_fields_offset(0, RTL_RTDE_FROM_CLIENT), -EINVAL);
}

/* ---- wrong types ------------------------------------------------------ */

Test(rtde_codec, reply_of_the_wrong_type_is_eproto)
{
	static const uint8_t pause_ok[] = { 0x00, 0x04, 0x50, 0x01 };
	static const uint8_t start_req[] = { 0x00, 0x03, 0x53 };
	static const uint8_t o_reply[] = { 0x00, 0x0A, 0x4F, 0x01, 'D', 'O', 'U', 'B', 'L', 'E' };
	struct rtl_rtde_setup_reply reply;
	struct rtl_rtde_controller_version v;
	bool ok;

	cr_assert_eq(
		rtl_rtde_decode_accepted_reply(&ok, pause_ok, sizeof(pause_ok), RTL_RTDE_PKG_START),
		-EPROTO);
	cr_assert_eq(rtl_rtde_decode_setup_inputs_reply(&reply, o_reply, sizeof(o_reply)), -EPROTO);
	cr_assert_eq(rtl_rtde_decode_urcontrol_version_reply(&v, pause_ok, sizeof(pause_ok)),
		     -EPROTO);
	cr_assert_eq(rtl_rtde_decode_pause(start_req, sizeof(start_req)), -EPROTO);
	cr_assert_eq(rtl_rtde_decode_start(pause_ok, sizeof(pause_ok)), -EPROTO);
}

Test(rtde_codec, unknown_package_types_are_eproto)
{
	for (int type = 0; type < 256; type++) {
		uint8_t pkg[] = { 0x00, 0x04, (uint8_t)type, 0x01 };
		struct rtl_rtde_msg m;

		if (rtl_rtde_pkg_name(type))
			continue;
		cr_assert_eq(rtl_rtde_package_type(pkg, sizeof(pkg)), type);
		cr_assert_eq(rtl_rtde_decode(&m, pkg, sizeof(pkg), 2, RTL_RTDE_FROM_CONTROLLER),
			     -EPROTO);
		cr_assert_eq(rtl_rtde_decode(&m, pkg, sizeof(pkg), 1, RTL_RTDE_FROM_CLIENT),
			     -EPROTO);
	}
}

Test(rtde_codec, package_names_cover_the_eight_types)
{
	static const char letters[] = "VvMUOISP";
	int known = 0;

	for (int type = 0; type < 256; type++)
		known += rtl_rtde_pkg_name(type) != NULL;
	cr_assert_eq(known, 8);
	for (const char *c = letters; *c; c++)
		cr_assert_not_null(rtl_rtde_pkg_name(*c));
	cr_assert_str_eq(rtl_rtde_pkg_name('U'), "DATA_PACKAGE");
	cr_assert_str_eq(rtl_rtde_pkg_name('V'), "REQUEST_PROTOCOL_VERSION");
}

Test(rtde_codec, accepted_reply_for_a_type_without_one_is_einval)
{
	static const uint8_t o_reply[] = { 0x00, 0x04, 0x4F, 0x01 };
	uint8_t buf[8];
	bool ok;

	cr_assert_eq(
		rtl_rtde_encode_accepted_reply(buf, sizeof(buf), RTL_RTDE_PKG_SETUP_OUTPUTS, true),
		-EINVAL);
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, o_reply, sizeof(o_reply),
						    RTL_RTDE_PKG_SETUP_OUTPUTS),
		     -EINVAL);
}

/* ---- malformed payloads ------------------------------------------------ */

Test(rtde_codec, fixed_size_payloads_of_the_wrong_length_are_ebadmsg)
{
	static const uint8_t v_req_short[] = { 0x00, 0x04, 0x56, 0x02 };
	static const uint8_t v_req_long[] = { 0x00, 0x06, 0x56, 0x00, 0x02, 0x00 };
	static const uint8_t accepted_empty[] = { 0x00, 0x03, 0x56 };
	static const uint8_t accepted_long[] = { 0x00, 0x05, 0x53, 0x01, 0x00 };
	static const uint8_t urv_15[] = { 0x00, 0x12, 0x76, 0, 0, 0, 5, 0, 0,
					  0,	8,    0,    0, 0, 0, 0, 0, 0 };
	static const uint8_t urv_req_payload[] = { 0x00, 0x04, 0x76, 0x00 };
	static const uint8_t start_payload[] = { 0x00, 0x04, 0x53, 0x01 };
	uint16_t version;
	bool ok;
	struct rtl_rtde_controller_version v;
	uint8_t *p;

#define CHECK(bytes, call)                                  \
	do {                                                \
		p = exact(bytes, sizeof(bytes));            \
		cr_assert_eq(call, -EBADMSG, "%s", #bytes); \
		free(p);                                    \
	} while (0)
	CHECK(v_req_short, rtl_rtde_decode_protocol_version_request(&version, p, 4));
	CHECK(v_req_long, rtl_rtde_decode_protocol_version_request(&version, p, 6));
	CHECK(accepted_empty, rtl_rtde_decode_accepted_reply(&ok, p, 3, 'V'));
	CHECK(accepted_long, rtl_rtde_decode_accepted_reply(&ok, p, 5, 'S'));
	CHECK(urv_15, rtl_rtde_decode_urcontrol_version_reply(&v, p, 18));
	CHECK(urv_req_payload, rtl_rtde_decode_urcontrol_version_request(p, 4));
	CHECK(start_payload, rtl_rtde_decode_start(p, 4));
#undef CHECK
}

Test(rtde_codec, accepted_reply_treats_any_nonzero_byte_as_yes)
{
	static const uint8_t two[] = { 0x00, 0x04, 0x53, 0x02 };
	bool ok = false;

	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, two, sizeof(two), RTL_RTDE_PKG_START), 0);
	cr_assert(ok);
}

Test(rtde_codec, setup_outputs_v2_without_a_whole_frequency_is_ebadmsg)
{
	static const uint8_t short_freq[] = { 0x00, 0x0A, 0x4F, 0x40, 0x7F, 0x40, 0, 0, 0, 0 };
	struct rtl_rtde_setup_request req;
	uint8_t *p = exact(short_freq, sizeof(short_freq));

	cr_assert_eq(
		rtl_rtde_decode_setup_outputs(&req, p, sizeof(short_freq), RTL_RTDE_PROTOCOL_V2),
		-EBADMSG);
	/* The same bytes are a valid v1 request (names "@\x7f@\0\0\0\0"). */
	cr_assert_eq(
		rtl_rtde_decode_setup_outputs(&req, p, sizeof(short_freq), RTL_RTDE_PROTOCOL_V1),
		0);
	cr_assert_eq(req.names_len, 7);
	free(p);
}

Test(rtde_codec, setup_outputs_v2_with_frequency_only_has_no_names)
{
	static const uint8_t freq_only[] = { 0x00, 0x0B, 0x4F, 0x40, 0x5F, 0x40, 0, 0, 0, 0, 0 };
	struct rtl_rtde_setup_request req;

	cr_assert_eq(rtl_rtde_decode_setup_outputs(&req, freq_only, sizeof(freq_only),
						   RTL_RTDE_PROTOCOL_V2),
		     0);
	cr_assert_eq(req.frequency, 125.0);
	cr_assert_eq(req.names_len, 0);
}

Test(rtde_codec, setup_replies_without_recipe_id_are_ebadmsg)
{
	static const uint8_t o_empty[] = { 0x00, 0x03, 0x4F };
	static const uint8_t i_empty[] = { 0x00, 0x03, 0x49 };
	struct rtl_rtde_setup_reply reply;

	cr_assert_eq(rtl_rtde_decode_setup_outputs_reply(&reply, o_empty, 3, RTL_RTDE_PROTOCOL_V2),
		     -EBADMSG);
	cr_assert_eq(rtl_rtde_decode_setup_inputs_reply(&reply, i_empty, 3), -EBADMSG);
	/* v1 output replies have no id: empty is an empty type list. */
	cr_assert_eq(rtl_rtde_decode_setup_outputs_reply(&reply, o_empty, 3, RTL_RTDE_PROTOCOL_V1),
		     0);
	cr_assert_not(reply.has_recipe_id);
	cr_assert_eq(reply.types_len, 0);
}

static int decode_text_exact(const uint8_t *bytes, size_t len, int proto, int dir,
			     struct rtl_rtde_text *t)
{
	uint8_t *p = exact(bytes, len);
	int err = rtl_rtde_decode_text(t, p, len, proto, dir);

	free(p);
	return err;
}

Test(rtde_codec, text_message_length_past_the_end_is_ebadmsg)
{
	/* message length 5, only 2 bytes follow */
	static const uint8_t msg_past[] = { 0x00, 0x06, 0x4D, 0x05, 'h', 'i' };
	/* message "hi", source length 9, only "UR" follows, no level */
	static const uint8_t src_past[] = {
		0x00, 0x0A, 0x4D, 0x02, 'h', 'i', 0x09, 'U', 'R', 0x02
	};
	/* message length exactly to the end: no source length byte */
	static const uint8_t no_src_len[] = { 0x00, 0x06, 0x4D, 0x02, 'h', 'i' };
	struct rtl_rtde_text t;

	for (int dir = 0; dir <= 1; dir++) {
		cr_assert_eq(decode_text_exact(msg_past, sizeof(msg_past), 2, dir, &t), -EBADMSG);
		cr_assert_eq(decode_text_exact(src_past, sizeof(src_past), 2, dir, &t), -EBADMSG);
		cr_assert_eq(decode_text_exact(no_src_len, sizeof(no_src_len), 2, dir, &t),
			     -EBADMSG);
	}
	cr_assert_eq(decode_text_exact(msg_past, sizeof(msg_past), 1, RTL_RTDE_FROM_CLIENT, &t),
		     -EBADMSG);
}

Test(rtde_codec, text_message_missing_level_or_with_trailing_bytes_is_ebadmsg)
{
	static const uint8_t no_level[] = { 0x00, 0x08, 0x4D, 0x02, 'h', 'i', 0x01, 'U' };
	static const uint8_t trailing[] = {
		0x00, 0x0A, 0x4D, 0x02, 'h', 'i', 0x01, 'U', 0x03, 0x00
	};
	static const uint8_t good[] = { 0x00, 0x09, 0x4D, 0x02, 'h', 'i', 0x01, 'U', 0x03 };
	struct rtl_rtde_text t;

	cr_assert_eq(decode_text_exact(no_level, sizeof(no_level), 2, 0, &t), -EBADMSG);
	cr_assert_eq(decode_text_exact(trailing, sizeof(trailing), 2, 0, &t), -EBADMSG);
	cr_assert_eq(decode_text_exact(good, sizeof(good), 2, 0, &t), 0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_INFO);
	cr_assert_eq(t.message_len, 2);
	cr_assert_eq(t.source_len, 1);
}

Test(rtde_codec, empty_text_message_payload_is_ebadmsg_in_every_layout)
{
	static const uint8_t empty[] = { 0x00, 0x03, 0x4D };
	struct rtl_rtde_text t;

	for (int proto = 1; proto <= 2; proto++)
		for (int dir = 0; dir <= 1; dir++)
			cr_assert_eq(decode_text_exact(empty, sizeof(empty), proto, dir, &t),
				     -EBADMSG);
}

Test(rtde_codec, text_v1_from_controller_is_level_then_rest)
{
	static const uint8_t level_only[] = { 0x00, 0x04, 0x4D, 0x01 };
	static const uint8_t hello[] = { 0x00, 0x09, 0x4D, 0x00, 'h', 'e', 'l', 'l', 'o' };
	struct rtl_rtde_text t;

	cr_assert_eq(decode_text_exact(level_only, sizeof(level_only), 1, 1, &t), 0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_ERROR);
	cr_assert_eq(t.message_len, 0);
	cr_assert_eq(rtl_rtde_decode_text(&t, hello, sizeof(hello), 1, 1), 0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_EXCEPTION);
	cr_assert_eq(t.message_len, 5);
	cr_assert_eq(memcmp(t.message, "hello", 5), 0);
	cr_assert_eq(t.source_len, 0);
}

Test(rtde_codec, text_v1_from_controller_encoding_drops_the_source)
{
	struct rtl_rtde_text t = { .level = 3,
				   .message = "hi",
				   .message_len = 2,
				   .source = "URControl",
				   .source_len = 9 };
	static const uint8_t want[] = { 0x00, 0x06, 0x4D, 0x03, 'h', 'i' };
	uint8_t buf[32];

	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 1, RTL_RTDE_FROM_CONTROLLER, &t), 6);
	cr_assert_eq(memcmp(buf, want, sizeof(want)), 0);
}

Test(rtde_codec, text_longer_than_a_length_byte_is_emsgsize)
{
	static char big[300];
	static uint8_t buf[400];
	struct rtl_rtde_text t = {
		.level = 1, .message = big, .message_len = 256, .source = "x", .source_len = 1
	};

	memset(big, 'a', sizeof(big));
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 2, 0, &t), -EMSGSIZE);
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 1, 0, &t), -EMSGSIZE);
	t.message_len = 255;
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 2, 0, &t), 3 + 255 + 1 + 3);
	t.source = big;
	t.source_len = 256;
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 2, 1, &t), -EMSGSIZE);
	/* v1 controller layout: no length byte, the rest of the payload. */
	t.message_len = 300;
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 1, 1, &t), 3 + 1 + 300);
}

Test(rtde_codec, data_package_without_its_recipe_id_is_ebadmsg)
{
	static const uint8_t empty[] = { 0x00, 0x03, 0x55 };
	struct rtl_rtde_data d;

	cr_assert_eq(rtl_rtde_decode_data(&d, empty, 3, 2, RTL_RTDE_FROM_CONTROLLER), -EBADMSG);
	cr_assert_eq(rtl_rtde_decode_data(&d, empty, 3, 1, RTL_RTDE_FROM_CLIENT), -EBADMSG);
	cr_assert_eq(rtl_rtde_decode_data(&d, empty, 3, 2, RTL_RTDE_FROM_CLIENT), -EBADMSG);
	/* v1 from the controller has no id: an empty recipe is well formed. */
	cr_assert_eq(rtl_rtde_decode_data(&d, empty, 3, 1, RTL_RTDE_FROM_CONTROLLER), 0);
	cr_assert_not(d.has_recipe_id);
	cr_assert_eq(d.fields_len, 0);
}

/* ---- encoders: limits and capacity ------------------------------------ */

Test(rtde_codec, every_encoder_reports_enospc_one_byte_short)
{
	static uint8_t buf[128];
	struct rtl_rtde_controller_version v = { 10, 11, 0, 0 };
	struct rtl_rtde_text t = { 2, "msg", 3, "src", 3 };
	static const uint8_t fields[] = { 1, 2, 3, 4 };
	int sizes[12];
	int n = 0;

#define BOTH(call_with_cap)                                                 \
	do {                                                                \
		size_t cap = sizeof(buf);                                   \
		int full = call_with_cap;                                   \
		cr_assert_gt(full, 0, "%s", #call_with_cap);                \
		cap = (size_t)full - 1;                                     \
		cr_assert_eq(call_with_cap, -ENOSPC, "%s", #call_with_cap); \
		cap = 0;                                                    \
		cr_assert_eq(call_with_cap, -ENOSPC, "%s", #call_with_cap); \
		sizes[n++] = full;                                          \
	} while (0)
	BOTH(rtl_rtde_encode_protocol_version_request(buf, cap, 2));
	BOTH(rtl_rtde_encode_urcontrol_version_request(buf, cap));
	BOTH(rtl_rtde_encode_urcontrol_version_reply(buf, cap, &v));
	BOTH(rtl_rtde_encode_start(buf, cap));
	BOTH(rtl_rtde_encode_pause(buf, cap));
	BOTH(rtl_rtde_encode_accepted_reply(buf, cap, RTL_RTDE_PKG_PAUSE, true));
	BOTH(rtl_rtde_encode_setup_outputs(buf, cap, 2, 125.0, "timestamp", 9));
	BOTH(rtl_rtde_encode_setup_inputs(buf, cap, "speed_slider_mask", 17));
	BOTH(rtl_rtde_encode_setup_outputs_reply(buf, cap, 2, 1, "DOUBLE", 6));
	BOTH(rtl_rtde_encode_setup_inputs_reply(buf, cap, 1, "UINT32", 6));
	BOTH(rtl_rtde_encode_text(buf, cap, 2, RTL_RTDE_FROM_CLIENT, &t));
	BOTH(rtl_rtde_encode_data(buf, cap, 2, RTL_RTDE_FROM_CLIENT, 1, fields, 4));
#undef BOTH
	cr_assert_eq(sizes[0], 5);
	cr_assert_eq(sizes[1], 3);
	cr_assert_eq(sizes[2], 19);
	cr_assert_eq(sizes[6], 3 + 8 + 9);
	cr_assert_eq(sizes[10], 3 + 1 + 3 + 1 + 3 + 1);
	cr_assert_eq(sizes[11], 8);
}

Test(rtde_codec, encoders_reject_null_buffers_and_strings)
{
	uint8_t buf[64];
	struct rtl_rtde_text t = { 0, NULL, 4, NULL, 0 };

	cr_assert_eq(rtl_rtde_encode_start(NULL, 64), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_setup_inputs(buf, sizeof(buf), NULL, 3), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 2, 0, &t), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_text(buf, sizeof(buf), 2, 0, NULL), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_data(buf, sizeof(buf), 2, 0, 1, NULL, 4), -EINVAL);
	cr_assert_eq(rtl_rtde_encode_urcontrol_version_reply(buf, sizeof(buf), NULL), -EINVAL);
	/* Empty strings may be NULL. */
	cr_assert_eq(rtl_rtde_encode_setup_inputs(buf, sizeof(buf), NULL, 0), 3);
	cr_assert_eq(rtl_rtde_encode_data(buf, sizeof(buf), 1, 1, 0, NULL, 0), 3);
}

Test(rtde_codec, packages_past_65535_bytes_are_emsgsize)
{
	size_t big = RTL_RTDE_MAX_PACKAGE_SIZE + 16;
	char *names = malloc(big);
	uint8_t *buf = malloc(big);

	cr_assert(names && buf);
	memset(names, 'a', big);
	/* The largest payload fits exactly. */
	cr_assert_eq(rtl_rtde_encode_setup_inputs(buf, big, names, RTL_RTDE_MAX_PAYLOAD_SIZE),
		     RTL_RTDE_MAX_PACKAGE_SIZE);
	cr_assert_eq(rtl_rtde_load_u16(buf), 65535);
	cr_assert_eq(rtl_rtde_encode_setup_inputs(buf, big, names, RTL_RTDE_MAX_PAYLOAD_SIZE + 1),
		     -EMSGSIZE);
	cr_assert_eq(rtl_rtde_encode_setup_outputs(buf, big, 2, 1.0, names,
						   RTL_RTDE_MAX_PAYLOAD_SIZE - 7),
		     -EMSGSIZE);
	cr_assert_eq(rtl_rtde_encode_setup_outputs(buf, big, 1, 1.0, names,
						   RTL_RTDE_MAX_PAYLOAD_SIZE - 7),
		     RTL_RTDE_MAX_PACKAGE_SIZE - 7);
	cr_assert_eq(rtl_rtde_encode_data(buf, big, 2, 0, 1, buf, RTL_RTDE_MAX_PAYLOAD_SIZE),
		     -EMSGSIZE);
	/* Lengths that would wrap a size_t are limits, not wraps. */
	cr_assert_eq(rtl_rtde_encode_setup_outputs(buf, big, 2, 1.0, names, SIZE_MAX - 2),
		     -EMSGSIZE);
	free(names);
	free(buf);
}

Test(rtde_codec, data_encoding_in_place_moves_nothing)
{
	uint8_t buf[16] = { 0 };
	int off = rtl_rtde_data_fields_offset(1, RTL_RTDE_FROM_CONTROLLER);

	cr_assert_eq(off, 3);
	memcpy(buf + off, "\x01\x02\x03", 3);
	cr_assert_eq(rtl_rtde_encode_data(buf, sizeof(buf), 1, RTL_RTDE_FROM_CONTROLLER, 9,
					  buf + off, 3),
		     6);
	cr_assert_eq(memcmp(buf, "\x00\x06\x55\x01\x02\x03", 6), 0);
	/* Overlapping source one byte early is moved, not corrupted. */
	memcpy(buf + 3, "\xAA\xBB\xCC", 3);
	cr_assert_eq(
		rtl_rtde_encode_data(buf, sizeof(buf), 2, RTL_RTDE_FROM_CONTROLLER, 7, buf + 3, 3),
		7);
	cr_assert_eq(memcmp(buf, "\x00\x07\x55\x07\xAA\xBB\xCC", 7), 0);
}

/* ---- types and lists --------------------------------------------------- */

Test(rtde_codec, type_names_round_trip_exactly)
{
	static const char *const names[] = { "BOOL",	      "UINT8",	   "UINT32",
					     "UINT64",	      "INT32",	   "DOUBLE",
					     "VECTOR3D",      "VECTOR6D",  "VECTOR6INT32",
					     "VECTOR6UINT32", "NOT_FOUND", "IN_USE" };

	for (int t = 0; t < RTL_RTDE_TYPE_COUNT; t++) {
		cr_assert_str_eq(rtl_rtde_type_name(t), names[t]);
		cr_assert_eq(rtl_rtde_type_from_name(names[t], strlen(names[t])), t);
		cr_assert_leq(strlen(names[t]), RTL_RTDE_TYPE_NAME_MAX);
	}
	cr_assert_null(rtl_rtde_type_name(RTL_RTDE_TYPE_COUNT));
	cr_assert_null(rtl_rtde_type_name((enum rtl_rtde_type) - 1));
}

Test(rtde_codec, pseudo_types_are_distinct_from_unknown_names)
{
	cr_assert_eq(rtl_rtde_type_from_name("NOT_FOUND", 9), RTL_RTDE_TYPE_NOT_FOUND);
	cr_assert_eq(rtl_rtde_type_from_name("IN_USE", 6), RTL_RTDE_TYPE_IN_USE);
	cr_assert_not(rtl_rtde_type_is_value(RTL_RTDE_TYPE_NOT_FOUND));
	cr_assert_not(rtl_rtde_type_is_value(RTL_RTDE_TYPE_IN_USE));
	cr_assert_eq(rtl_rtde_type_size(RTL_RTDE_TYPE_IN_USE), 0);
	cr_assert_eq(rtl_rtde_type_from_name("STRING", 6), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name("double", 6), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name("DOUBLEX", 7), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name("DOUBL", 5), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name("NOT_FOUNDX", 10), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name("", 0), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name(NULL, 0), -EPROTO);
	cr_assert_eq(rtl_rtde_type_from_name(NULL, 3), -EINVAL);
}

Test(rtde_codec, type_sizes_and_element_counts_follow_the_reference)
{
	static const size_t sizes[] = { 1, 1, 4, 8, 4, 8, 24, 48, 24, 24 };
	static const unsigned elems[] = { 1, 1, 1, 1, 1, 1, 3, 6, 6, 6 };

	for (size_t i = 0; i < N_TYPES; i++) {
		cr_assert(rtl_rtde_type_is_value(all_types[i]));
		cr_assert_eq(rtl_rtde_type_size(all_types[i]), sizes[i]);
		cr_assert_eq(rtl_rtde_type_elems(all_types[i]), elems[i]);
		cr_assert_leq(sizes[i], RTL_RTDE_VALUE_MAX_SIZE);
	}
	cr_assert_eq(rtl_rtde_type_elems(RTL_RTDE_TYPE_NOT_FOUND), 0);
	cr_assert_eq(rtl_rtde_type_size(RTL_RTDE_TYPE_COUNT), 0);
}

static int parse(const char *list, enum rtl_rtde_type *types, size_t max, size_t *bad)
{
	return rtl_rtde_parse_types(types, max, bad, list, strlen(list));
}

Test(rtde_codec, parse_types_keeps_pseudo_types_and_rejects_garbage)
{
	enum rtl_rtde_type t[8];
	size_t bad = 99;

	cr_assert_eq(parse("DOUBLE,NOT_FOUND,IN_USE,VECTOR6INT32", t, 8, &bad), 4);
	cr_assert_eq(t[1], RTL_RTDE_TYPE_NOT_FOUND);
	cr_assert_eq(t[2], RTL_RTDE_TYPE_IN_USE);
	cr_assert_eq(t[3], RTL_RTDE_TYPE_VECTOR6INT32);
	cr_assert_eq(parse("DOUBLE,BANANA,INT32", t, 8, &bad), -EPROTO);
	cr_assert_eq(bad, 1);
	cr_assert_eq(parse("DOUBLE, INT32", t, 8, &bad), -EPROTO);
	cr_assert_eq(bad, 1);
	cr_assert_eq(parse("DOUBLE,,INT32", t, 8, &bad), -EBADMSG);
	cr_assert_eq(bad, 1);
	cr_assert_eq(parse(",INT32", t, 8, &bad), -EBADMSG);
	cr_assert_eq(bad, 0);
	cr_assert_eq(parse("BOOL,BOOL,BOOL", t, 2, &bad), -ENOSPC);
	cr_assert_eq(bad, 2);
	cr_assert_eq(parse("", t, 8, &bad), 0);
	cr_assert_eq(parse("UINT8,", t, 8, NULL), 1);
	cr_assert_eq(rtl_rtde_parse_types(NULL, 0, NULL, NULL, 0), 0);
	cr_assert_eq(rtl_rtde_parse_types(t, 8, NULL, NULL, 3), -EINVAL);
}

Test(rtde_codec, list_iterator_ignores_one_trailing_comma)
{
	static const struct {
		const char *list;
		const char *items; /* items joined by '|' */
	} cases[] = {
		{ "", "" },	   { "a", "a" },	{ "a,b", "a|b" },
		{ "a,b,", "a|b" }, { "a,,b", "a||b" },	{ ",", "" },
		{ ",,", "|" },	   { "a,b,,", "a|b|" }, { ",a", "|a" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rtl_rtde_list it;
		const char *item;
		size_t len;
		char joined[32] = "";
		size_t pos = 0;
		int count = 0;

		rtl_rtde_list_init(&it, cases[c].list, strlen(cases[c].list));
		while (rtl_rtde_list_next(&it, &item, &len)) {
			if (count++)
				joined[pos++] = '|';
			memcpy(joined + pos, item, len);
			pos += len;
		}
		joined[pos] = '\0';
		cr_assert_str_eq(joined, cases[c].items, "list \"%s\"", cases[c].list);
	}
}

Test(rtde_codec, list_iterator_counts_items)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t len;
	int n = 0;

	/* "," is one empty item: distinct from the empty list. */
	rtl_rtde_list_init(&it, ",", 1);
	while (rtl_rtde_list_next(&it, &item, &len))
		n++;
	cr_assert_eq(n, 1);
	rtl_rtde_list_init(&it, NULL, 0);
	cr_assert_not(rtl_rtde_list_next(&it, &item, &len));
}

Test(rtde_codec, format_types_writes_a_reply_list)
{
	enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_NOT_FOUND, RTL_RTDE_TYPE_VECTOR6D };
	char buf[32];
	enum rtl_rtde_type back[4];

	cr_assert_eq(rtl_rtde_format_types(buf, sizeof(buf), t, 2), 18);
	cr_assert_eq(memcmp(buf, "NOT_FOUND,VECTOR6D", 18), 0);
	cr_assert_eq(rtl_rtde_parse_types(back, 4, NULL, buf, 18), 2);
	cr_assert_eq(back[0], t[0]);
	cr_assert_eq(back[1], t[1]);
	cr_assert_eq(rtl_rtde_format_types(buf, 17, t, 2), -ENOSPC);
	cr_assert_eq(rtl_rtde_format_types(buf, sizeof(buf), t, 0), 0);
	t[1] = RTL_RTDE_TYPE_COUNT;
	cr_assert_eq(rtl_rtde_format_types(buf, sizeof(buf), t, 2), -EINVAL);
}

/* ---- values ---------------------------------------------------------- */

Test(rtde_codec, load_and_store_are_big_endian_at_any_offset)
{
	uint8_t b[16] = { 0 };

	rtl_rtde_store_u16(b + 1, 0x1234);
	cr_assert_eq(memcmp(b + 1, "\x12\x34", 2), 0);
	cr_assert_eq(rtl_rtde_load_u16(b + 1), 0x1234);
	rtl_rtde_store_u32(b + 3, 0xDEADBEEF);
	cr_assert_eq(memcmp(b + 3, "\xDE\xAD\xBE\xEF", 4), 0);
	cr_assert_eq(rtl_rtde_load_u32(b + 3), 0xDEADBEEF);
	rtl_rtde_store_i32(b + 1, -2);
	cr_assert_eq(memcmp(b + 1, "\xFF\xFF\xFF\xFE", 4), 0);
	cr_assert_eq(rtl_rtde_load_i32(b + 1), -2);
	rtl_rtde_store_u64(b + 5, 0x0102030405060708ULL);
	cr_assert_eq(memcmp(b + 5, "\x01\x02\x03\x04\x05\x06\x07\x08", 8), 0);
	cr_assert_eq(rtl_rtde_load_u64(b + 5), 0x0102030405060708ULL);
	rtl_rtde_store_f64(b + 7, -2.0);
	cr_assert_eq(memcmp(b + 7, "\xC0\x00\x00\x00\x00\x00\x00\x00", 8), 0);
	cr_assert_eq(rtl_rtde_load_f64(b + 7), -2.0);
}

static void fill_values(union rtl_rtde_value *v)
{
	memset(v, 0, sizeof(*v) * N_TYPES);
	v[0].b = true;
	v[1].u8 = 0xFE;
	v[2].u32 = UINT32_MAX;
	v[3].u64 = UINT64_MAX - 1;
	v[4].i32 = INT32_MIN;
	v[5].d = -0.0;
	v[6].v3d[0] = DBL_MAX;
	v[6].v3d[1] = -DBL_MIN;
	v[6].v3d[2] = INFINITY;
	for (int i = 0; i < 6; i++) {
		v[7].v6d[i] = -1.5 * i;
		v[8].v6i32[i] = -i * 1000000;
		v[9].v6u32[i] = 0x80000000u + (uint32_t)i;
	}
}

Test(rtde_codec, pack_and_unpack_round_trip_every_type)
{
	union rtl_rtde_value in[N_TYPES], back[N_TYPES];
	uint32_t offsets[N_TYPES];
	uint8_t fields[256];
	int size = rtl_rtde_layout(offsets, all_types, N_TYPES);

	cr_assert_eq(size, 1 + 1 + 4 + 8 + 4 + 8 + 24 + 48 + 24 + 24);
	cr_assert_eq(offsets[0], 0);
	cr_assert_eq(offsets[2], 2);
	cr_assert_eq(offsets[9], (uint32_t)size - 24);
	fill_values(in);
	cr_assert_eq(rtl_rtde_pack(fields, sizeof(fields), all_types, N_TYPES, in), size);
	/* Spot-check the wire bytes. */
	cr_assert_eq(fields[0], 1);
	cr_assert_eq(fields[1], 0xFE);
	cr_assert_eq(memcmp(fields + offsets[4], "\x80\x00\x00\x00", 4), 0);
	cr_assert_eq(memcmp(fields + offsets[5], "\x80\0\0\0\0\0\0\0", 8), 0);

	cr_assert_eq(rtl_rtde_unpack(back, fields, (size_t)size, all_types, N_TYPES), 0);
	for (size_t i = 0; i < N_TYPES; i++)
		cr_assert_eq(memcmp(&back[i], &in[i], rtl_rtde_type_size(all_types[i])), 0,
			     "type %s", rtl_rtde_type_name(all_types[i]));
	/* A single field, by offset. */
	rtl_rtde_load_value(&back[0], fields + offsets[8], RTL_RTDE_TYPE_VECTOR6INT32);
	cr_assert_eq(back[0].v6i32[5], -5000000);
}

Test(rtde_codec, nan_payloads_survive_a_round_trip)
{
	static const uint8_t snan[] = { 0x7F, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
	enum rtl_rtde_type t = RTL_RTDE_TYPE_DOUBLE;
	union rtl_rtde_value v;
	uint8_t out[8];

	cr_assert_eq(rtl_rtde_unpack(&v, snan, 8, &t, 1), 0);
	cr_assert(isnan(v.d));
	cr_assert_eq(rtl_rtde_pack(out, 8, &t, 1, &v), 8);
	cr_assert_eq(memcmp(out, snan, 8), 0);
}

Test(rtde_codec, bool_reads_any_nonzero_byte_as_true_and_writes_one)
{
	static const uint8_t two[] = { 0x02 };
	enum rtl_rtde_type t = RTL_RTDE_TYPE_BOOL;
	union rtl_rtde_value v;
	uint8_t out[1];

	cr_assert_eq(rtl_rtde_unpack(&v, two, 1, &t, 1), 0);
	cr_assert(v.b);
	cr_assert_eq(rtl_rtde_pack(out, 1, &t, 1, &v), 1);
	cr_assert_eq(out[0], 1);
}

Test(rtde_codec, unpack_of_the_wrong_length_is_ebadmsg_and_writes_nothing)
{
	static const enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_INT32 };
	union rtl_rtde_value v[2];
	uint8_t fields[12] = { 0x40 };
	uint8_t *shorter = exact(fields, 11);
	double d[2];

	memset(v, 0x5A, sizeof(v));
	cr_assert_eq(rtl_rtde_unpack(v, shorter, 11, t, 2), -EBADMSG);
	cr_assert_eq(((uint8_t *)v)[0], 0x5A);
	cr_assert_eq(rtl_rtde_unpack(v, fields, 12, t, 2), 0);
	cr_assert_eq(rtl_rtde_unpack(v, fields, 12, t, 1), -EBADMSG);
	cr_assert_eq(rtl_rtde_unpack_to(v, shorter, 11, t, 2, NULL), -EBADMSG);
	cr_assert_eq(rtl_rtde_unpack_doubles(d, 2, shorter, 11, t, 2), -EBADMSG);
	free(shorter);
}

Test(rtde_codec, pseudo_types_in_a_recipe_are_eproto)
{
	static const enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_NOT_FOUND };
	union rtl_rtde_value v[2] = { 0 };
	uint8_t fields[16] = { 0 };

	cr_assert_eq(rtl_rtde_layout(NULL, t, 2), -EPROTO);
	cr_assert_eq(rtl_rtde_unpack(v, fields, 8, t, 2), -EPROTO);
	cr_assert_eq(rtl_rtde_pack(fields, sizeof(fields), t, 2, v), -EPROTO);
}

Test(rtde_codec, recipe_larger_than_a_package_is_emsgsize)
{
	static enum rtl_rtde_type t[1400];

	for (size_t i = 0; i < 1400; i++)
		t[i] = RTL_RTDE_TYPE_VECTOR6D; /* 67200 bytes */
	cr_assert_eq(rtl_rtde_layout(NULL, t, 1365), 65520);
	cr_assert_eq(rtl_rtde_layout(NULL, t, 1366), -EMSGSIZE);
}

Test(rtde_codec, pack_into_too_small_a_buffer_is_enospc)
{
	static const enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_VECTOR6D };
	union rtl_rtde_value v = { 0 };
	uint8_t fields[48];

	cr_assert_eq(rtl_rtde_pack(fields, 47, t, 1, &v), -ENOSPC);
	cr_assert_eq(rtl_rtde_pack(fields, 48, t, 1, &v), 48);
	cr_assert_eq(rtl_rtde_pack_from(fields, 47, t, 1, NULL, &v), -ENOSPC);
}

struct user_state {
	double timestamp;
	bool running;
	int32_t mode;
	double q[6];
	uint64_t bits;
};

Test(rtde_codec, unpack_to_fills_a_user_struct_by_offsets)
{
	static const enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_BOOL,
						RTL_RTDE_TYPE_INT32, RTL_RTDE_TYPE_VECTOR6D,
						RTL_RTDE_TYPE_UINT64 };
	static const uint32_t offs[] = { offsetof(struct user_state, timestamp),
					 offsetof(struct user_state, running),
					 offsetof(struct user_state, mode),
					 offsetof(struct user_state, q),
					 offsetof(struct user_state, bits) };
	struct user_state in = { 12.5, true, -7, { 1, 2, 3, 4, 5, 6 }, 0x8000000000000001ULL };
	struct user_state out;
	uint8_t fields[128];
	int n = rtl_rtde_pack_from(fields, sizeof(fields), t, 5, offs, &in);

	cr_assert_eq(n, 8 + 1 + 4 + 48 + 8);
	memset(&out, 0, sizeof(out));
	cr_assert_eq(rtl_rtde_unpack_to(&out, fields, (size_t)n, t, 5, offs), 0);
	cr_assert_eq(out.timestamp, 12.5);
	cr_assert(out.running);
	cr_assert_eq(out.mode, -7);
	cr_assert_eq(out.q[5], 6.0);
	cr_assert_eq(out.bits, 0x8000000000000001ULL);
}

Test(rtde_codec, unpack_to_without_offsets_gives_the_payload_in_host_order)
{
	static const enum rtl_rtde_type t[] = { RTL_RTDE_TYPE_UINT8, RTL_RTDE_TYPE_UINT32 };
	static const uint8_t fields[] = { 0x07, 0x00, 0x00, 0x01, 0x02 };
	uint8_t host[5];
	uint32_t u;

	cr_assert_eq(rtl_rtde_unpack_to(host, fields, 5, t, 2, NULL), 0);
	cr_assert_eq(host[0], 7);
	memcpy(&u, host + 1, 4);
	cr_assert_eq(u, 0x102);
}

Test(rtde_codec, unpack_doubles_flattens_every_element)
{
	union rtl_rtde_value in[N_TYPES];
	uint8_t fields[256];
	double d[32];
	int size;

	fill_values(in);
	size = rtl_rtde_pack(fields, sizeof(fields), all_types, N_TYPES, in);
	cr_assert_eq(rtl_rtde_unpack_doubles(d, 32, fields, (size_t)size, all_types, N_TYPES),
		     6 + 3 + 6 + 6 + 6);
	cr_assert_eq(d[0], 1.0);
	cr_assert_eq(d[1], 254.0);
	cr_assert_eq(d[2], 4294967295.0);
	cr_assert_eq(d[3], (double)(UINT64_MAX - 1));
	cr_assert_eq(d[4], -2147483648.0);
	cr_assert(d[5] == 0.0 && signbit(d[5]));
	cr_assert_eq(d[6], DBL_MAX);
	cr_assert_eq(d[9 + 5], -7.5);
	cr_assert_eq(d[15 + 5], -5000000.0);
	cr_assert_eq(d[21 + 5], 2147483653.0);
	cr_assert_eq(rtl_rtde_unpack_doubles(d, 26, fields, (size_t)size, all_types, N_TYPES),
		     -ENOSPC);
}

/* ---- controller text, made printable --------------------------------------- */

/* Sanitize the @n bytes at @src into a buffer of @size; returns the result. */
static const char *sanitized(const char *src, size_t n, size_t size, size_t *len)
{
	static char out[65536];

	cr_assert_leq(size, sizeof(out));
	memset(out, 'Z', sizeof(out));
	*len = rtl_rtde_text_sanitize(out, size, src, n);
	cr_assert_lt(*len, size);
	cr_assert_eq(out[*len], '\0', "always NUL-terminated");
	cr_assert_eq(strlen(out), *len);
	return out;
}

Test(rtde_codec, sanitize_escapes_terminal_control)
{
	static const char in[] = "\x1b[2J\x1b]0;owned\a\rrtde-record: done\nA\tB\\C";
	size_t len;
	const char *s = sanitized(in, sizeof(in) - 1, 256, &len);

	cr_assert_str_eq(s, "\\x1b[2J\\x1b]0;owned\\x07\\rrtde-record: done\\nA\\tB\\\\C");
	cr_assert_null(strchr(s, '\x1b'));
	cr_assert_null(strchr(s, '\n'), "a fake line of the program cannot start");
	cr_assert_null(strchr(s, '\r'));
	cr_assert_null(strchr(s, '\a'));
}

Test(rtde_codec, sanitize_keeps_printable_ascii)
{
	size_t len;
	const char *s = sanitized("Protective stop: C204A3 (joint 3)", 33, 64, &len);

	cr_assert_str_eq(s, "Protective stop: C204A3 (joint 3)");
	cr_assert_eq(len, 33);
}

Test(rtde_codec, sanitize_embedded_nul_and_invalid_utf8)
{
	static const char in[] = { 'a',	       '\0',	   'b', (char)0xff, (char)0xc3, (char)0x28,
				   (char)0xe2, (char)0x82, 'c', (char)0x7f, (char)0x80 };
	size_t len;
	const char *s = sanitized(in, sizeof(in), 256, &len);

	/* The NUL does not end the text; no byte from 0x7f up survives. */
	cr_assert_str_eq(s, "a\\x00b\\xff\\xc3(\\xe2\\x82c\\x7f\\x80");
	for (size_t i = 0; i < len; i++)
		cr_assert(s[i] >= 0x20 && s[i] < 0x7f, "byte %zu: 0x%02x", i, (unsigned char)s[i]);
}

Test(rtde_codec, sanitize_cuts_long_text_with_a_mark)
{
	static char big[10240];
	size_t len;
	const char *s;

	memset(big, 'x', sizeof(big));
	for (size_t i = 0; i < sizeof(big); i += 100)
		big[i] = '\x1b';
	s = sanitized(big, sizeof(big), 1024, &len);
	cr_assert_leq(len, 1023);
	cr_assert_geq(len, 1023 - 3, "filled up to an escape's size");
	cr_assert_eq(strcmp(s + len - strlen(RTL_RTDE_TEXT_CUT_MARK), RTL_RTDE_TEXT_CUT_MARK), 0,
		     "ends with the mark: %s", s + len - 16);
	/* No escape is split before the mark: every '\' starts a whole one. */
	for (size_t i = 0; i + strlen(RTL_RTDE_TEXT_CUT_MARK) < len; i++)
		if (s[i] == '\\')
			cr_assert(s[i + 1] == 'x' && s[i + 2] == '1' && s[i + 3] == 'b', "at %zu",
				  i);
	/* Exactly fitting text is not cut; one byte more is. */
	s = sanitized("abcdefghi", 9, 10, &len);
	cr_assert_str_eq(s, "abcdefghi");
	s = sanitized("abcdefghij", 10, 10, &len);
	cr_assert_str_eq(s, "abcd" RTL_RTDE_TEXT_CUT_MARK);
	/* The whole 10 KB with room: four bytes per escape, one per other. */
	s = sanitized(big, sizeof(big), sizeof(big) * 4 + 1, &len);
	cr_assert_eq(len, sizeof(big) + 3 * (sizeof(big) / 100 + 1));
}

Test(rtde_codec, sanitize_edge_cases)
{
	char out[4] = "zzz";
	size_t len;

	cr_assert_eq(rtl_rtde_text_sanitize(NULL, 10, "a", 1), 0);
	cr_assert_eq(rtl_rtde_text_sanitize(out, 0, "a", 1), 0);
	cr_assert_eq(out[0], 'z', "nothing written into a 0-byte buffer");
	cr_assert_eq(rtl_rtde_text_sanitize(out, sizeof(out), NULL, 5), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(rtl_rtde_text_sanitize(out, 1, "abc", 3), 0);
	cr_assert_str_eq(out, "");
	/* A buffer smaller than the mark holds what of it fits. */
	len = rtl_rtde_text_sanitize(out, sizeof(out), "\x1b\x1b", 2);
	cr_assert_eq(len, 3);
	cr_assert_str_eq(out, "[..");
}
