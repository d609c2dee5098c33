// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: every RTDE decoder, in both protocol versions and both
 * directions.
 *
 * Built once as is (the input is one package: framing errors are fuzzed
 * too) and once per group of package types with -DFUZZ_TYPES=<letters>: then
 * byte 0 picks the type from the group, the rest is the payload, and the
 * header is made consistent, so that the fuzzer spends its time inside the
 * payload parsers.
 *
 * Oracles: only documented error codes; results point inside the buffer;
 * and a package that decodes must encode back to exactly the same bytes
 * (the one exception, an "accepted" byte above 1, is normalised first).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)              \
	do {                     \
		if (!(cond))     \
			abort(); \
	} while (0)

/* -DFUZZ_TYPES=VvSP: the type letters, unquoted (no shell quoting). */
#define STR_(x) #x
#define STR(x) STR_(x)

static uint8_t out[RTL_RTDE_MAX_PACKAGE_SIZE];

static void check_code(int r)
{
	CHECK(r == 0 || r == -EMSGSIZE || r == -EPROTO || r == -EBADMSG);
}

static void check_span(const uint8_t *buf, size_t len, const void *p, size_t n)
{
	const uint8_t *q = p;

	CHECK(q >= buf && q <= buf + len && n <= (size_t)(buf + len - q));
}

static void check_msg(const uint8_t *buf, size_t len, const struct rtl_rtde_msg *m)
{
	bool ctrl = m->dir == RTL_RTDE_FROM_CONTROLLER;

	switch (m->type) {
	case RTL_RTDE_PKG_TEXT_MESSAGE:
		check_span(buf, len, m->u.text.message, m->u.text.message_len);
		check_span(buf, len, m->u.text.source, m->u.text.source_len);
		break;
	case RTL_RTDE_PKG_DATA:
		check_span(buf, len, m->u.data.fields, m->u.data.fields_len);
		break;
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
	case RTL_RTDE_PKG_SETUP_INPUTS:
		if (ctrl)
			check_span(buf, len, m->u.setup_reply.types, m->u.setup_reply.types_len);
		else
			check_span(buf, len, m->u.setup.names, m->u.setup.names_len);
		break;
	default:
		break;
	}
}

static void every_decoder(const uint8_t *buf, size_t len)
{
	for (int proto = 1; proto <= 2; proto++) {
		for (int dir = 0; dir <= 1; dir++) {
			struct rtl_rtde_msg m;
			int r = rtl_rtde_decode(&m, buf, len, proto, dir);
			int n;

			check_code(r);
			if (r)
				continue;
			check_msg(buf, len, &m);
			n = rtl_rtde_encode(out, sizeof(out), proto, &m);
			CHECK(n == (int)len);
			if (dir == RTL_RTDE_FROM_CONTROLLER && len == 4 &&
			    (m.type == 'V' || m.type == 'S' || m.type == 'P'))
				CHECK(out[3] == (buf[3] != 0));
			else
				CHECK(memcmp(out, buf, len) == 0);
		}
	}

	/* The specific decoders, whatever the type byte says. */
	{
		struct rtl_rtde_controller_version v;
		struct rtl_rtde_setup_request req;
		struct rtl_rtde_setup_reply reply;
		struct rtl_rtde_text text;
		struct rtl_rtde_data d;
		uint16_t version;
		bool ok;

		check_code(rtl_rtde_decode_protocol_version_request(&version, buf, len));
		check_code(rtl_rtde_decode_urcontrol_version_request(buf, len));
		check_code(rtl_rtde_decode_urcontrol_version_reply(&v, buf, len));
		check_code(rtl_rtde_decode_start(buf, len));
		check_code(rtl_rtde_decode_pause(buf, len));
		check_code(rtl_rtde_decode_accepted_reply(&ok, buf, len,
							  RTL_RTDE_PKG_PROTOCOL_VERSION));
		check_code(rtl_rtde_decode_accepted_reply(&ok, buf, len, RTL_RTDE_PKG_START));
		check_code(rtl_rtde_decode_accepted_reply(&ok, buf, len, RTL_RTDE_PKG_PAUSE));
		check_code(rtl_rtde_decode_setup_inputs(&req, buf, len));
		check_code(rtl_rtde_decode_setup_inputs_reply(&reply, buf, len));
		for (int proto = 1; proto <= 2; proto++) {
			check_code(rtl_rtde_decode_setup_outputs(&req, buf, len, proto));
			check_code(rtl_rtde_decode_setup_outputs_reply(&reply, buf, len, proto));
			for (int dir = 0; dir <= 1; dir++) {
				check_code(rtl_rtde_decode_text(&text, buf, len, proto, dir));
				check_code(rtl_rtde_decode_data(&d, buf, len, proto, dir));
			}
		}
		check_code(rtl_rtde_package_type(buf, len) < 0 ? rtl_rtde_package_type(buf, len)
							       : 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef FUZZ_TYPES
	static const char types[] = STR(FUZZ_TYPES);
	uint8_t *buf;
	size_t len;

	if (size < 1 || size - 1 > RTL_RTDE_MAX_PAYLOAD_SIZE)
		return 0;
	len = size - 1 + RTL_RTDE_HEADER_SIZE;
	/* Exactly len bytes on the heap: ASan flags any read past them. */
	buf = malloc(len);
	CHECK(buf);
	rtl_rtde_store_u16(buf, (uint16_t)len);
	buf[2] = (uint8_t)types[data[0] % (sizeof(types) - 1)];
	memcpy(buf + 3, data + 1, size - 1);
	every_decoder(buf, len);
	free(buf);
#else
	every_decoder(data, size);
#endif
	return 0;
}
