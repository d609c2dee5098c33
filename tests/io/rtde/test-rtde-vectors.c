// SPDX-License-Identifier: MIT
/*
 * Every byte vector of docs/rtde-protocol.md section 7: encoding gives
 * exactly those bytes, decoding gives exactly those fields.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>

#include "test-rtde-vectors.h"

static uint8_t out[256];

static void assert_encoded(int n, const uint8_t *want, size_t len)
{
	cr_assert_eq(n, (int)len, "encoder returned %d, want %zu", n, len);
	cr_assert_eq(memcmp(out, want, len), 0, "encoded bytes differ from the vector");
}

static void assert_str(const char *got, size_t got_len, const char *want)
{
	cr_assert_eq(got_len, strlen(want), "length %zu, want %zu (%s)", got_len, strlen(want),
		     want);
	cr_assert_eq(memcmp(got, want, got_len), 0, "want \"%s\"", want);
}

Test(rtde_vectors, protocol_version_requests)
{
	uint16_t version = 0;

	assert_encoded(rtl_rtde_encode_protocol_version_request(out, sizeof(out), 2), vec_v_req_v2,
		       sizeof(vec_v_req_v2));
	assert_encoded(rtl_rtde_encode_protocol_version_request(out, sizeof(out), 1), vec_v_req_v1,
		       sizeof(vec_v_req_v1));
	cr_assert_eq(rtl_rtde_decode_protocol_version_request(&version, vec_v_req_v2,
							      sizeof(vec_v_req_v2)),
		     0);
	cr_assert_eq(version, 2);
	cr_assert_eq(rtl_rtde_decode_protocol_version_request(&version, vec_v_req_v1,
							      sizeof(vec_v_req_v1)),
		     0);
	cr_assert_eq(version, 1);
}

Test(rtde_vectors, protocol_version_replies)
{
	bool ok = false;

	assert_encoded(rtl_rtde_encode_accepted_reply(out, sizeof(out),
						      RTL_RTDE_PKG_PROTOCOL_VERSION, true),
		       vec_v_reply_ok, sizeof(vec_v_reply_ok));
	assert_encoded(rtl_rtde_encode_accepted_reply(out, sizeof(out),
						      RTL_RTDE_PKG_PROTOCOL_VERSION, false),
		       vec_v_reply_refused, sizeof(vec_v_reply_refused));
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, vec_v_reply_ok, sizeof(vec_v_reply_ok),
						    RTL_RTDE_PKG_PROTOCOL_VERSION),
		     0);
	cr_assert(ok);
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, vec_v_reply_refused,
						    sizeof(vec_v_reply_refused),
						    RTL_RTDE_PKG_PROTOCOL_VERSION),
		     0);
	cr_assert_not(ok);
}

Test(rtde_vectors, urcontrol_version_request)
{
	assert_encoded(rtl_rtde_encode_urcontrol_version_request(out, sizeof(out)), vec_urv_req,
		       sizeof(vec_urv_req));
	cr_assert_eq(rtl_rtde_decode_urcontrol_version_request(vec_urv_req, sizeof(vec_urv_req)),
		     0);
}

Test(rtde_vectors, urcontrol_version_replies)
{
	struct rtl_rtde_controller_version v58 = { 5, 8, 0, 0 };
	struct rtl_rtde_controller_version v512 = { 5, 12, 2, 0 };
	struct rtl_rtde_controller_version got;

	assert_encoded(rtl_rtde_encode_urcontrol_version_reply(out, sizeof(out), &v58),
		       vec_urv_reply_5_8, sizeof(vec_urv_reply_5_8));
	assert_encoded(rtl_rtde_encode_urcontrol_version_reply(out, sizeof(out), &v512),
		       vec_urv_reply_5_12, sizeof(vec_urv_reply_5_12));
	cr_assert_eq(rtl_rtde_decode_urcontrol_version_reply(&got, vec_urv_reply_5_8,
							     sizeof(vec_urv_reply_5_8)),
		     0);
	cr_assert(got.major == 5 && got.minor == 8 && got.bugfix == 0 && got.build == 0);
	cr_assert_eq(rtl_rtde_decode_urcontrol_version_reply(&got, vec_urv_reply_5_12,
							     sizeof(vec_urv_reply_5_12)),
		     0);
	cr_assert(got.major == 5 && got.minor == 12 && got.bugfix == 2 && got.build == 0);
}

Test(rtde_vectors, setup_outputs_request_v2_carries_500_hz)
{
	struct rtl_rtde_setup_request req;

	assert_encoded(rtl_rtde_encode_setup_outputs(out, sizeof(out), RTL_RTDE_PROTOCOL_V2, 500.0,
						     VEC_O_NAMES, strlen(VEC_O_NAMES)),
		       vec_o_req_v2, sizeof(vec_o_req_v2));
	cr_assert_eq(memcmp(vec_o_req_v2 + 3, vec_f64_500, 8), 0);
	cr_assert_eq(rtl_rtde_decode_setup_outputs(&req, vec_o_req_v2, sizeof(vec_o_req_v2),
						   RTL_RTDE_PROTOCOL_V2),
		     0);
	cr_assert_eq(req.frequency, 500.0);
	assert_str(req.names, req.names_len, VEC_O_NAMES);
}

Test(rtde_vectors, setup_outputs_request_v1_has_names_only)
{
	struct rtl_rtde_setup_request req;

	assert_encoded(rtl_rtde_encode_setup_outputs(out, sizeof(out), RTL_RTDE_PROTOCOL_V1, 500.0,
						     VEC_O_NAMES, strlen(VEC_O_NAMES)),
		       vec_o_req_v1, sizeof(vec_o_req_v1));
	cr_assert_eq(rtl_rtde_decode_setup_outputs(&req, vec_o_req_v1, sizeof(vec_o_req_v1),
						   RTL_RTDE_PROTOCOL_V1),
		     0);
	cr_assert_eq(req.frequency, 0.0);
	assert_str(req.names, req.names_len, VEC_O_NAMES);
}

static void check_setup_reply(const uint8_t *vec, size_t len, enum rtl_rtde_protocol proto,
			      bool has_id, uint8_t id, const char *types, enum rtl_rtde_type t0,
			      enum rtl_rtde_type t1)
{
	struct rtl_rtde_setup_reply reply;
	enum rtl_rtde_type parsed[4];
	bool inputs = vec[2] == RTL_RTDE_PKG_SETUP_INPUTS;

	if (inputs) {
		assert_encoded(rtl_rtde_encode_setup_inputs_reply(out, sizeof(out), id, types,
								  strlen(types)),
			       vec, len);
		cr_assert_eq(rtl_rtde_decode_setup_inputs_reply(&reply, vec, len), 0);
	} else {
		assert_encoded(rtl_rtde_encode_setup_outputs_reply(out, sizeof(out), proto, id,
								   types, strlen(types)),
			       vec, len);
		cr_assert_eq(rtl_rtde_decode_setup_outputs_reply(&reply, vec, len, proto), 0);
	}
	cr_assert_eq(reply.has_recipe_id, has_id);
	cr_assert_eq(reply.recipe_id, has_id ? id : 0);
	assert_str(reply.types, reply.types_len, types);
	cr_assert_eq(rtl_rtde_parse_types(parsed, 4, NULL, reply.types, reply.types_len), 2);
	cr_assert_eq(parsed[0], t0);
	cr_assert_eq(parsed[1], t1);
}

Test(rtde_vectors, setup_outputs_replies_v2)
{
	check_setup_reply(vec_o_reply_v2_ok, sizeof(vec_o_reply_v2_ok), RTL_RTDE_PROTOCOL_V2, true,
			  1, "DOUBLE,VECTOR6D", RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_VECTOR6D);
	check_setup_reply(vec_o_reply_v2_rejected, sizeof(vec_o_reply_v2_rejected),
			  RTL_RTDE_PROTOCOL_V2, true, 0, "NOT_FOUND,VECTOR6D",
			  RTL_RTDE_TYPE_NOT_FOUND, RTL_RTDE_TYPE_VECTOR6D);
}

Test(rtde_vectors, setup_outputs_replies_v1_have_no_recipe_id)
{
	check_setup_reply(vec_o_reply_v1_ok, sizeof(vec_o_reply_v1_ok), RTL_RTDE_PROTOCOL_V1, false,
			  1, "DOUBLE,VECTOR6D", RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_VECTOR6D);
	check_setup_reply(vec_o_reply_v1_rejected, sizeof(vec_o_reply_v1_rejected),
			  RTL_RTDE_PROTOCOL_V1, false, 0, "NOT_FOUND,VECTOR6D",
			  RTL_RTDE_TYPE_NOT_FOUND, RTL_RTDE_TYPE_VECTOR6D);
}

Test(rtde_vectors, setup_outputs_reply_with_lying_size_is_refused)
{
	struct rtl_rtde_setup_reply reply;

	cr_assert_eq(rtl_rtde_decode_setup_outputs_reply(&reply, vec_o_reply_lying_size,
							 sizeof(vec_o_reply_lying_size),
							 RTL_RTDE_PROTOCOL_V2),
		     -EMSGSIZE);
}

Test(rtde_vectors, setup_inputs_request)
{
	struct rtl_rtde_setup_request req;

	assert_encoded(
		rtl_rtde_encode_setup_inputs(out, sizeof(out), VEC_I_NAMES, strlen(VEC_I_NAMES)),
		vec_i_req, sizeof(vec_i_req));
	cr_assert_eq(rtl_rtde_decode_setup_inputs(&req, vec_i_req, sizeof(vec_i_req)), 0);
	assert_str(req.names, req.names_len, VEC_I_NAMES);
	cr_assert_eq(req.frequency, 0.0);
}

Test(rtde_vectors, setup_inputs_replies)
{
	check_setup_reply(vec_i_reply_ok, sizeof(vec_i_reply_ok), RTL_RTDE_PROTOCOL_V1, true, 1,
			  "UINT32,DOUBLE", RTL_RTDE_TYPE_UINT32, RTL_RTDE_TYPE_DOUBLE);
	check_setup_reply(vec_i_reply_rejected, sizeof(vec_i_reply_rejected), RTL_RTDE_PROTOCOL_V2,
			  true, 0, "IN_USE,IN_USE", RTL_RTDE_TYPE_IN_USE, RTL_RTDE_TYPE_IN_USE);
}

Test(rtde_vectors, start_and_pause)
{
	bool ok = false;

	assert_encoded(rtl_rtde_encode_start(out, sizeof(out)), vec_s_req, sizeof(vec_s_req));
	assert_encoded(rtl_rtde_encode_pause(out, sizeof(out)), vec_p_req, sizeof(vec_p_req));
	cr_assert_eq(rtl_rtde_decode_start(vec_s_req, sizeof(vec_s_req)), 0);
	cr_assert_eq(rtl_rtde_decode_pause(vec_p_req, sizeof(vec_p_req)), 0);

	assert_encoded(rtl_rtde_encode_accepted_reply(out, sizeof(out), RTL_RTDE_PKG_START, true),
		       vec_s_reply_ok, sizeof(vec_s_reply_ok));
	assert_encoded(rtl_rtde_encode_accepted_reply(out, sizeof(out), RTL_RTDE_PKG_START, false),
		       vec_s_reply_refused, sizeof(vec_s_reply_refused));
	assert_encoded(rtl_rtde_encode_accepted_reply(out, sizeof(out), RTL_RTDE_PKG_PAUSE, true),
		       vec_p_reply_ok, sizeof(vec_p_reply_ok));

	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, vec_s_reply_ok, sizeof(vec_s_reply_ok),
						    RTL_RTDE_PKG_START),
		     0);
	cr_assert(ok);
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, vec_s_reply_refused,
						    sizeof(vec_s_reply_refused),
						    RTL_RTDE_PKG_START),
		     0);
	cr_assert_not(ok);
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, vec_p_reply_ok, sizeof(vec_p_reply_ok),
						    RTL_RTDE_PKG_PAUSE),
		     0);
	cr_assert(ok);
}

Test(rtde_vectors, input_data_speed_slider_mask)
{
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_UINT32 };
	union rtl_rtde_value v = { .u32 = 1 };
	struct rtl_rtde_data data;
	uint8_t fields[4];

	cr_assert_eq(rtl_rtde_pack(fields, sizeof(fields), types, 1, &v), 4);
	/* Input packages carry the recipe id in both protocol versions. */
	for (int proto = 1; proto <= 2; proto++) {
		assert_encoded(rtl_rtde_encode_data(out, sizeof(out), proto, RTL_RTDE_FROM_CLIENT,
						    1, fields, sizeof(fields)),
			       vec_u_in_mask, sizeof(vec_u_in_mask));
		cr_assert_eq(rtl_rtde_decode_data(&data, vec_u_in_mask, sizeof(vec_u_in_mask),
						  proto, RTL_RTDE_FROM_CLIENT),
			     0);
		cr_assert(data.has_recipe_id);
		cr_assert_eq(data.recipe_id, 1);
		v.u32 = 0;
		cr_assert_eq(rtl_rtde_unpack(&v, data.fields, data.fields_len, types, 1), 0);
		cr_assert_eq(v.u32, 1);
	}
}

Test(rtde_vectors, input_data_speed_slider_mask_and_fraction)
{
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_UINT32, RTL_RTDE_TYPE_DOUBLE };
	union rtl_rtde_value v[2] = { { .u32 = 1 }, { .d = 0.5 } };
	struct rtl_rtde_data data;
	int off = rtl_rtde_data_fields_offset(RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT);

	/* In place: pack at the fields offset, then add header and id. */
	cr_assert_eq(off, 4);
	cr_assert_eq(rtl_rtde_pack(out + off, sizeof(out) - (size_t)off, types, 2, v), 12);
	assert_encoded(rtl_rtde_encode_data(out, sizeof(out), RTL_RTDE_PROTOCOL_V2,
					    RTL_RTDE_FROM_CLIENT, 1, out + off, 12),
		       vec_u_in_slider, sizeof(vec_u_in_slider));
	cr_assert_eq(rtl_rtde_decode_data(&data, vec_u_in_slider, sizeof(vec_u_in_slider),
					  RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CLIENT),
		     0);
	memset(v, 0, sizeof(v));
	cr_assert_eq(rtl_rtde_unpack(v, data.fields, data.fields_len, types, 2), 0);
	cr_assert_eq(v[0].u32, 1);
	cr_assert_eq(v[1].d, 0.5);
}

Test(rtde_vectors, output_data_v2_timestamp_and_speed_fraction)
{
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_DOUBLE };
	union rtl_rtde_value v[2] = { { .d = 16412.206 }, { .d = 1.0 } };
	struct rtl_rtde_data data;
	uint8_t fields[16];

	cr_assert_eq(rtl_rtde_pack(fields, sizeof(fields), types, 2, v), 16);
	assert_encoded(rtl_rtde_encode_data(out, sizeof(out), RTL_RTDE_PROTOCOL_V2,
					    RTL_RTDE_FROM_CONTROLLER, 1, fields, sizeof(fields)),
		       vec_u_out_v2, sizeof(vec_u_out_v2));
	cr_assert_eq(rtl_rtde_decode_data(&data, vec_u_out_v2, sizeof(vec_u_out_v2),
					  RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert(data.has_recipe_id);
	cr_assert_eq(data.recipe_id, 1);
	memset(v, 0, sizeof(v));
	cr_assert_eq(rtl_rtde_unpack(v, data.fields, data.fields_len, types, 2), 0);
	cr_assert_eq(v[0].d, 16412.206);
	cr_assert_eq(v[1].d, 1.0);
}

static const double q_expected[7] = {
	16854.192, -1.6007, -1.7271, -2.2030, -0.8080, 1.5951, -0.0310
};

static void check_q_package(const uint8_t *vec, size_t len, enum rtl_rtde_protocol proto)
{
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_VECTOR6D };
	union rtl_rtde_value v[2];
	struct rtl_rtde_data data;
	uint8_t fields[56];

	cr_assert_eq(rtl_rtde_decode_data(&data, vec, len, proto, RTL_RTDE_FROM_CONTROLLER), 0);
	cr_assert_eq(data.has_recipe_id, proto == RTL_RTDE_PROTOCOL_V2);
	cr_assert_eq(data.fields_len, 56);
	cr_assert_eq(rtl_rtde_unpack(v, data.fields, data.fields_len, types, 2), 0);
	cr_assert(fabs(v[0].d - q_expected[0]) < 1e-4, "timestamp %f", v[0].d);
	for (int i = 0; i < 6; i++)
		cr_assert(fabs(v[1].v6d[i] - q_expected[1 + i]) < 1e-4, "q[%d] = %f", i,
			  v[1].v6d[i]);

	/* And back to exactly the same bytes. */
	cr_assert_eq(rtl_rtde_pack(fields, sizeof(fields), types, 2, v), 56);
	assert_encoded(rtl_rtde_encode_data(out, sizeof(out), proto, RTL_RTDE_FROM_CONTROLLER,
					    data.recipe_id, fields, sizeof(fields)),
		       vec, len);
}

Test(rtde_vectors, output_data_timestamp_and_actual_q_v2)
{
	check_q_package(vec_u_q_v2, sizeof(vec_u_q_v2), RTL_RTDE_PROTOCOL_V2);
}

Test(rtde_vectors, output_data_timestamp_and_actual_q_v1_has_no_recipe_id)
{
	check_q_package(vec_u_q_v1, sizeof(vec_u_q_v1), RTL_RTDE_PROTOCOL_V1);
}

Test(rtde_vectors, v1_output_data_read_as_v2_does_not_match_the_recipe)
{
	static const enum rtl_rtde_type types[] = { RTL_RTDE_TYPE_DOUBLE, RTL_RTDE_TYPE_VECTOR6D };
	union rtl_rtde_value v[2];
	struct rtl_rtde_data data;

	cr_assert_eq(rtl_rtde_decode_data(&data, vec_u_q_v1, sizeof(vec_u_q_v1),
					  RTL_RTDE_PROTOCOL_V2, RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert_eq(rtl_rtde_unpack(v, data.fields, data.fields_len, types, 2), -EBADMSG);
}

Test(rtde_vectors, unknown_type_2_is_framed_but_not_decoded)
{
	struct rtl_rtde_msg msg;

	cr_assert_eq(rtl_rtde_package_type(vec_unknown_2, sizeof(vec_unknown_2)), 2);
	cr_assert_null(rtl_rtde_pkg_name(2));
	for (int proto = 1; proto <= 2; proto++)
		for (int dir = 0; dir <= 1; dir++)
			cr_assert_eq(rtl_rtde_decode(&msg, vec_unknown_2, sizeof(vec_unknown_2),
						     proto, dir),
				     -EPROTO);
}

Test(rtde_vectors, text_message_v2_polyscope_x_warning)
{
	struct rtl_rtde_text text = {
		.level = RTL_RTDE_LEVEL_WARNING,
		.message = VEC_M_MESSAGE,
		.message_len = strlen(VEC_M_MESSAGE),
		.source = VEC_M_SOURCE,
		.source_len = strlen(VEC_M_SOURCE),
	};
	struct rtl_rtde_text got;

	cr_assert_eq(text.message_len, 74);
	/* v2 both ways, and v1 from the client, share this layout. */
	assert_encoded(rtl_rtde_encode_text(out, sizeof(out), RTL_RTDE_PROTOCOL_V2,
					    RTL_RTDE_FROM_CONTROLLER, &text),
		       vec_m_v2, sizeof(vec_m_v2));
	assert_encoded(rtl_rtde_encode_text(out, sizeof(out), RTL_RTDE_PROTOCOL_V2,
					    RTL_RTDE_FROM_CLIENT, &text),
		       vec_m_v2, sizeof(vec_m_v2));
	assert_encoded(rtl_rtde_encode_text(out, sizeof(out), RTL_RTDE_PROTOCOL_V1,
					    RTL_RTDE_FROM_CLIENT, &text),
		       vec_m_v2, sizeof(vec_m_v2));

	cr_assert_eq(rtl_rtde_decode_text(&got, vec_m_v2, sizeof(vec_m_v2), RTL_RTDE_PROTOCOL_V2,
					  RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert_eq(got.level, RTL_RTDE_LEVEL_WARNING);
	assert_str(got.message, got.message_len, VEC_M_MESSAGE);
	assert_str(got.source, got.source_len, VEC_M_SOURCE);
}

Test(rtde_vectors, text_message_v2_read_with_v1_controller_layout_shows_issue_758)
{
	struct rtl_rtde_text got;

	/* Universal_Robots_ROS2_Driver#758: the v2 bytes read as v1 give a
	 * level of 0x4A and a message ending in "\tURControl\x02". */
	cr_assert_eq(rtl_rtde_decode_text(&got, vec_m_v2, sizeof(vec_m_v2), RTL_RTDE_PROTOCOL_V1,
					  RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert_eq(got.level, 0x4A);
	cr_assert_eq(got.message_len, 85);
	cr_assert_eq(memcmp(got.message + 74, "\tURControl\x02", 11), 0);
	cr_assert_eq(got.source_len, 0);
}

Test(rtde_vectors, doubles_125_500_30)
{
	uint8_t b[8];

	rtl_rtde_store_f64(b, 125.0);
	cr_assert_eq(memcmp(b, vec_f64_125, 8), 0);
	rtl_rtde_store_f64(b, 500.0);
	cr_assert_eq(memcmp(b, vec_f64_500, 8), 0);
	rtl_rtde_store_f64(b, 30.0);
	cr_assert_eq(memcmp(b, vec_f64_30, 8), 0);
	cr_assert_eq(rtl_rtde_load_f64(vec_f64_125), 125.0);
	cr_assert_eq(rtl_rtde_load_f64(vec_f64_500), 500.0);
	cr_assert_eq(rtl_rtde_load_f64(vec_f64_30), 30.0);
}

Test(rtde_vectors, every_vector_round_trips_through_generic_decode_and_encode)
{
	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
		const struct rtde_vector *v = &rtde_vectors[i];
		int dir = v->from_controller ? RTL_RTDE_FROM_CONTROLLER : RTL_RTDE_FROM_CLIENT;

		for (int proto = 1; proto <= 2; proto++) {
			struct rtl_rtde_msg msg;
			int err;

			if (v->proto && v->proto != proto)
				continue;
			err = rtl_rtde_decode(&msg, v->bytes, v->len, proto, dir);
			if (v->bytes[2] == 2) {
				cr_assert_eq(err, -EPROTO, "%s", v->name);
				continue;
			}
			cr_assert_eq(err, 0, "%s v%d: %d", v->name, proto, err);
			cr_assert_eq(msg.type, v->bytes[2]);
			cr_assert_eq((int)msg.dir, dir);
			assert_encoded(rtl_rtde_encode(out, sizeof(out), proto, &msg), v->bytes,
				       v->len);
		}
	}
}
