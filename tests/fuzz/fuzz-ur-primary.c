// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the UR primary interface codec (io/ur/ur_primary.c).
 *
 * Input: byte 0 picks the controller version robot mode data is read for
 * (3.0, 3.2, 3.5, 5.x, 10.x, or 1.8, which must be refused); the rest is a
 * stream, cut with rtl_ur_frame() as the client cuts it. Every message is
 * copied into a heap block of exactly its size (ASan sees a read past it)
 * and given to every decoder. Oracles: documented codes only; sub-packages
 * lie inside their message; anything that decodes encodes, and the
 * encoding decodes to the same fields and strings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/ur_primary.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)              \
	do {                     \
		if (!(cond))     \
			abort(); \
	} while (0)

static const uint8_t versions[][2] = {
	{ 3, 0 }, { 3, 2 }, { 3, 5 }, { 5, 15 }, { 10, 0 }, { 1, 8 }
};

static void state(const uint8_t *msg, size_t len, uint8_t major, uint8_t minor)
{
	const uint8_t *sub;
	size_t off = 0, sl;
	uint8_t type, buf[128];
	int r;

	while ((r = rtl_ur_state_next(&off, &sub, &sl, &type, msg, len)) == 1) {
		struct rtl_ur_robot_mode_data m, m2;
		int d, n;

		CHECK(sub >= msg + RTL_UR_HEADER && sl >= RTL_UR_HEADER && sub + sl <= msg + len);
		d = rtl_ur_decode_robot_mode(&m, sub, sl, major, minor);
		CHECK(d == 0 || d == -EBADMSG || d == -EPROTONOSUPPORT);
		if (major < 3)
			CHECK(d == -EPROTONOSUPPORT);
		if (d)
			continue;
		n = rtl_ur_encode_robot_state(buf, sizeof(buf), major, minor, &m);
		CHECK(n == RTL_UR_HEADER + rtl_ur_robot_mode_size(major, minor));
		CHECK(rtl_ur_decode_robot_mode(&m2, buf + RTL_UR_HEADER, (size_t)n - RTL_UR_HEADER,
					       major, minor) == 0);
		CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	}
	CHECK(r == 0 || r == -EBADMSG);
}

static void robot_msg(const uint8_t *msg, size_t len)
{
	static uint8_t buf[RTL_UR_MAX_MESSAGE];
	struct rtl_ur_version_msg v, v2;
	struct rtl_ur_robot_msg m, m2;
	int d, n;

	d = rtl_ur_decode_version(&v, msg, len);
	CHECK(d == 0 || d == -EBADMSG);
	if (d == 0) {
		n = rtl_ur_encode_version(buf, sizeof(buf), &v);
		CHECK(n > 0 && rtl_ur_decode_version(&v2, buf, (size_t)n) == 0);
		CHECK(v.major == v2.major && v.minor == v2.minor && v.bugfix == v2.bugfix &&
		      v.build == v2.build && v.timestamp == v2.timestamp);
		CHECK(!strcmp(v.project, v2.project) && !strcmp(v.build_date, v2.build_date));
	}
	d = rtl_ur_decode_robot_msg(&m, msg, len);
	CHECK(d == 0 || d == -EBADMSG || d == -ENOMSG);
	if (d)
		return;
	n = rtl_ur_encode_robot_msg(buf, sizeof(buf), &m);
	CHECK(n > 0 && rtl_ur_decode_robot_msg(&m2, buf, (size_t)n) == 0);
	CHECK(m.type == m2.type && m.timestamp == m2.timestamp && m.source == m2.source);
	CHECK(m.code == m2.code && m.argument == m2.argument && m.report_level == m2.report_level);
	CHECK(m.data_type == m2.data_type && m.data == m2.data);
	CHECK(m.line == m2.line && m.column == m2.column);
	CHECK(!strcmp(m.title, m2.title) && !strcmp(m.text, m2.text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *v;
	size_t at = 1, n;
	int r;

	if (size < 1 || size > 8192)
		return 0;
	v = versions[data[0] % (sizeof(versions) / sizeof(versions[0]))];
	while ((r = rtl_ur_frame(&n, data + at, size - at)) == 1) {
		uint8_t *msg = malloc(n);
		int t;

		CHECK(msg && n >= RTL_UR_HEADER && n <= size - at);
		memcpy(msg, data + at, n);
		t = rtl_ur_msg_type(msg, n);
		CHECK(t == msg[4]);
		if (t == RTL_UR_MSG_ROBOT_STATE)
			state(msg, n, v[0], v[1]);
		else
			CHECK(rtl_ur_state_next(&(size_t){ 0 }, NULL, NULL, NULL, msg, n) ==
			      -EBADMSG);
		robot_msg(msg, n);
		free(msg);
		at += n;
	}
	CHECK(r == 0 || r == -EBADMSG || r == -EMSGSIZE);
	return 0;
}
