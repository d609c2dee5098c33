/* SPDX-License-Identifier: MIT */
/*
 * The byte vectors of docs/rtde-protocol.md section 7, as whole packages.
 * Where the reference gives only a payload, the 3-byte header is added here
 * (size = 3 + payload). One table, shared by the Criterion tests
 * (test-rtde-vectors.c) and the fuzz seed generator (tests/fuzz/), so the
 * fuzzers start from exactly the bytes the tests pin down.
 */
#ifndef RTLOOP_TEST_RTDE_VECTORS_H
#define RTLOOP_TEST_RTDE_VECTORS_H

#include <stddef.h>
#include <stdint.h>

/* 7.1: V request v2 / v1, V reply accepted / refused. */
static const uint8_t vec_v_req_v2[] = { 0x00, 0x05, 0x56, 0x00, 0x02 };
static const uint8_t vec_v_req_v1[] = { 0x00, 0x05, 0x56, 0x00, 0x01 };
static const uint8_t vec_v_reply_ok[] = { 0x00, 0x04, 0x56, 0x01 };
static const uint8_t vec_v_reply_refused[] = { 0x00, 0x04, 0x56, 0x00 };

/* 7.1: v request; v reply 5.8.0.0 (full package); 5.12.2.0 (payload). */
static const uint8_t vec_urv_req[] = { 0x00, 0x03, 0x76 };
static const uint8_t vec_urv_reply_5_8[] = { 0x00, 0x13, 0x76, 0x00, 0x00, 0x00, 0x05,
					     0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
					     0x00, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t vec_urv_reply_5_12[] = { 0x00, 0x13, 0x76, 0x00, 0x00, 0x00, 0x05,
					      0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0x00,
					      0x02, 0x00, 0x00, 0x00, 0x00 };

/* 7.1: O request, 500 Hz (v2) and v1, names "actual_q,actual_qd". */
#define VEC_O_NAMES "actual_q,actual_qd"
static const uint8_t vec_o_req_v2[] = { 0x00, 0x1D, 0x4F, 0x40, 0x7F, 0x40, 0x00, 0x00, 0x00, 0x00,
					0x00, 'a',  'c',  't',	'u',  'a',  'l',  '_',	'q',  ',',
					'a',  'c',  't',  'u',	'a',  'l',  '_',  'q',	'd' };
static const uint8_t vec_o_req_v1[] = { 0x00, 0x15, 0x4F, 'a', 'c', 't', 'u', 'a', 'l', '_', 'q',
					',',  'a',  'c',  't', 'u', 'a', 'l', '_', 'q', 'd' };

/* 7.1: O replies (payloads in the reference). */
static const uint8_t vec_o_reply_v2_ok[] = { 0x00, 0x13, 0x4F, 0x01, 'D', 'O', 'U', 'B', 'L', 'E',
					     ',',  'V',	 'E',  'C',  'T', 'O', 'R', '6', 'D' };
static const uint8_t vec_o_reply_v2_rejected[] = { 0x00, 0x16, 0x4F, 0x00, 'N', 'O', 'T', '_',
						   'F',	 'O',  'U',  'N',  'D', ',', 'V', 'E',
						   'C',	 'T',  'O',  'R',  '6', 'D' };
static const uint8_t vec_o_reply_v1_ok[] = { 0x00, 0x12, 0x4F, 'D', 'O', 'U', 'B', 'L', 'E',
					     ',',  'V',	 'E',  'C', 'T', 'O', 'R', '6', 'D' };
static const uint8_t vec_o_reply_v1_rejected[] = { 0x00, 0x15, 0x4F, 'N', 'O', 'T', '_',
						   'F',	 'O',  'U',  'N', 'D', ',', 'V',
						   'E',	 'C',  'T',  'O', 'R', '6', 'D' };
/* 7.1 caveat: size field 17 on 19 bytes. Not a framing vector. */
static const uint8_t vec_o_reply_lying_size[] = { 0x00, 0x11, 0x4F, 0x01, 'D', 'O', 'U',
						  'B',	'L',  'E',  ',',  'V', 'E', 'C',
						  'T',	'O',  'R',  '6',  'D' };

/* 7.1: I request, I reply ok (full), I reply rejected (payload). */
#define VEC_I_NAMES "speed_slider_mask,speed_slider_fraction"
static const uint8_t vec_i_req[] = { 0x00, 0x2A, 0x49, 's', 'p', 'e', 'e', 'd', '_', 's', 'l',
				     'i',  'd',	 'e',  'r', '_', 'm', 'a', 's', 'k', ',', 's',
				     'p',  'e',	 'e',  'd', '_', 's', 'l', 'i', 'd', 'e', 'r',
				     '_',  'f',	 'r',  'a', 'c', 't', 'i', 'o', 'n' };
static const uint8_t vec_i_reply_ok[] = { 0x00, 0x11, 0x49, 0x01, 'U', 'I', 'N', 'T', '3',
					  '2',	',',  'D',  'O',  'U', 'B', 'L', 'E' };
static const uint8_t vec_i_reply_rejected[] = { 0x00, 0x11, 0x49, 0x00, 'I', 'N', '_', 'U', 'S',
						'E',  ',',  'I',  'N',	'_', 'U', 'S', 'E' };

/* 7.1: S and P requests and replies. */
static const uint8_t vec_s_req[] = { 0x00, 0x03, 0x53 };
static const uint8_t vec_s_reply_ok[] = { 0x00, 0x04, 0x53, 0x01 };
static const uint8_t vec_s_reply_refused[] = { 0x00, 0x04, 0x53, 0x00 };
static const uint8_t vec_p_req[] = { 0x00, 0x03, 0x50 };
static const uint8_t vec_p_reply_ok[] = { 0x00, 0x04, 0x50, 0x01 };

/* 7.1: U client->controller, recipe 1, speed_slider_mask = 1. */
static const uint8_t vec_u_in_mask[] = { 0x00, 0x08, 0x55, 0x01, 0x00, 0x00, 0x00, 0x01 };

/* 7.1: U controller->client v2, timestamp = 16412.206, target_speed_fraction = 1.0. */
static const uint8_t vec_u_out_v2[] = {
	0x00, 0x14, 0x55, 0x01, 0x40, 0xD0, 0x07, 0x0D, 0x2F, 0x1A,
	0x9F, 0xBE, 0x3F, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
};

/*
 * 7.1: U controller->client, timestamp + actual_q. The reference lists the
 * values rounded (16854.192, -1.6007, -1.7271, -2.2030, -0.8080, 1.5951,
 * -0.0310); the bytes are those of the [URCL] test it cites, whose values
 * agree to 1e-4. v2 payload = recipe id 1 + 56 bytes; v1 = the 56 bytes.
 */
#define VEC_U_Q_FIELDS                                                                            \
	0x40, 0xd0, 0x75, 0x8c, 0x49, 0xba, 0x5e, 0x35, 0xbf, 0xf9, 0x9c, 0x77, 0xd1, 0x10, 0xb4, \
		0x60, 0xbf, 0xfb, 0xa2, 0x33, 0xd1, 0x10, 0xb4, 0x60, 0xc0, 0x01, 0x9f, 0xbe,     \
		0x68, 0x88, 0x5a, 0x30, 0xbf, 0xe9, 0xdb, 0x22, 0xa2, 0x21, 0x68, 0xc0, 0x3f,     \
		0xf9, 0x85, 0x87, 0xa0, 0x00, 0x00, 0x00, 0xbf, 0x9f, 0xbe, 0x74, 0x44, 0x2d,     \
		0x18, 0x00
static const uint8_t vec_u_q_v2[] = { 0x00, 0x3C, 0x55, 0x01, VEC_U_Q_FIELDS };
static const uint8_t vec_u_q_v1[] = { 0x00, 0x3B, 0x55, VEC_U_Q_FIELDS };

/* 7.1: unknown package type 2. */
static const uint8_t vec_unknown_2[] = { 0x00, 0x05, 0x02, 0x00, 0x00 };

/* 7.2: U client->controller, speed_slider_mask = 1, speed_slider_fraction = 0.5. */
static const uint8_t vec_u_in_slider[] = { 0x00, 0x10, 0x55, 0x01, 0x00, 0x00, 0x00, 0x01,
					   0x3F, 0xE0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };

/* 7.2: M v2, PolyScope X's warning (74-byte message, source URControl, level 2). */
#define VEC_M_MESSAGE "SafetySetup has not been confirmed yet, therefore no data will be send yet"
#define VEC_M_SOURCE "URControl"
static const uint8_t vec_m_v2[] = {
	0x00, 0x59, 0x4D, 0x4A, 'S',  'a',  'f',  'e',	't',  'y',  'S',  'e',	't',  'u', 'p',
	' ',  'h',  'a',  's',	' ',  'n',  'o',  't',	' ',  'b',  'e',  'e',	'n',  ' ', 'c',
	'o',  'n',  'f',  'i',	'r',  'm',  'e',  'd',	' ',  'y',  'e',  't',	',',  ' ', 't',
	'h',  'e',  'r',  'e',	'f',  'o',  'r',  'e',	' ',  'n',  'o',  ' ',	'd',  'a', 't',
	'a',  ' ',  'w',  'i',	'l',  'l',  ' ',  'b',	'e',  ' ',  's',  'e',	'n',  'd', ' ',
	'y',  'e',  't',  0x09, 0x55, 0x52, 0x43, 0x6F, 0x6E, 0x74, 0x72, 0x6F, 0x6C, 0x02
};

/* 7.2: doubles 125.0 / 500.0 / 30.0. */
static const uint8_t vec_f64_125[] = { 0x40, 0x5F, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t vec_f64_500[] = { 0x40, 0x7F, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t vec_f64_30[] = { 0x40, 0x3E, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };

/* Every whole-package vector above, for table-driven users (framer streams,
 * fuzz seeds). from_controller: who sends it; proto: 0 = both versions. */
struct rtde_vector {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	int from_controller;
	int proto;
};

#define RTDE_VEC(n, ctrl, p)              \
	{                                 \
#n, n, sizeof(n), ctrl, p \
	}
static const struct rtde_vector rtde_vectors[] = {
	RTDE_VEC(vec_v_req_v2, 0, 0),
	RTDE_VEC(vec_v_req_v1, 0, 0),
	RTDE_VEC(vec_v_reply_ok, 1, 0),
	RTDE_VEC(vec_v_reply_refused, 1, 0),
	RTDE_VEC(vec_urv_req, 0, 0),
	RTDE_VEC(vec_urv_reply_5_8, 1, 0),
	RTDE_VEC(vec_urv_reply_5_12, 1, 0),
	RTDE_VEC(vec_o_req_v2, 0, 2),
	RTDE_VEC(vec_o_req_v1, 0, 1),
	RTDE_VEC(vec_o_reply_v2_ok, 1, 2),
	RTDE_VEC(vec_o_reply_v2_rejected, 1, 2),
	RTDE_VEC(vec_o_reply_v1_ok, 1, 1),
	RTDE_VEC(vec_o_reply_v1_rejected, 1, 1),
	RTDE_VEC(vec_i_req, 0, 0),
	RTDE_VEC(vec_i_reply_ok, 1, 0),
	RTDE_VEC(vec_i_reply_rejected, 1, 0),
	RTDE_VEC(vec_s_req, 0, 0),
	RTDE_VEC(vec_s_reply_ok, 1, 0),
	RTDE_VEC(vec_s_reply_refused, 1, 0),
	RTDE_VEC(vec_p_req, 0, 0),
	RTDE_VEC(vec_p_reply_ok, 1, 0),
	RTDE_VEC(vec_u_in_mask, 0, 0),
	RTDE_VEC(vec_u_out_v2, 1, 2),
	RTDE_VEC(vec_u_q_v2, 1, 2),
	RTDE_VEC(vec_u_q_v1, 1, 1),
	RTDE_VEC(vec_unknown_2, 1, 0),
	RTDE_VEC(vec_u_in_slider, 0, 0),
	RTDE_VEC(vec_m_v2, 1, 2),
};
#undef RTDE_VEC

#define RTDE_VECTOR_COUNT (sizeof(rtde_vectors) / sizeof(rtde_vectors[0]))

#endif /* RTLOOP_TEST_RTDE_VECTORS_H */
