// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: data payloads by RTDE type.
 *
 * Input: byte 0 = number of fields (mod 17), then one byte per field (its
 * type, mod 13: the ten value types, the two pseudo-types and one out of
 * range), then the fields bytes. Every unpack variant must agree on the
 * result code; a successful unpack must pack back to the same bytes (with
 * BOOL bytes normalised to 0/1), through the union, through a host struct
 * and field by field at the offsets of rtl_rtde_layout().
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum rtl_rtde_type types[16];
	union rtl_rtde_value v[16];
	uint32_t offsets[16];
	uint8_t host[16 * RTL_RTDE_VALUE_MAX_SIZE];
	uint8_t back[16 * RTL_RTDE_VALUE_MAX_SIZE];
	double d[16 * 6];
	const uint8_t *fields;
	size_t n, len;
	int total, r, rd;

	if (size < 1)
		return 0;
	n = data[0] % 17;
	if (size < 1 + n)
		return 0;
	for (size_t i = 0; i < n; i++)
		types[i] = (enum rtl_rtde_type)(data[1 + i] % 13);
	fields = data + 1 + n;
	len = size - 1 - n;

	total = rtl_rtde_layout(offsets, types, n);
	CHECK(total >= 0 || total == -EPROTO);
	r = rtl_rtde_unpack(v, fields, len, types, n);
	CHECK(r == 0 || r == -EPROTO || r == -EBADMSG);
	CHECK(rtl_rtde_unpack_to(host, fields, len, types, n, NULL) == r);
	rd = rtl_rtde_unpack_doubles(d, sizeof(d) / sizeof(d[0]), fields, len, types, n);
	CHECK(r ? rd == r : rd >= (int)n);
	if (total < 0) {
		CHECK(r == -EPROTO);
		return 0;
	}
	if ((size_t)total != len) {
		CHECK(r == -EBADMSG);
		return 0;
	}
	CHECK(r == 0);

	CHECK(rtl_rtde_pack(back, sizeof(back), types, n, v) == total);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *src = fields + offsets[i];
		size_t s = rtl_rtde_type_size(types[i]);

		if (types[i] == RTL_RTDE_TYPE_BOOL)
			CHECK(back[offsets[i]] == (src[0] != 0));
		else
			CHECK(memcmp(back + offsets[i], src, s) == 0);
	}
	CHECK(rtl_rtde_pack_from(back, sizeof(back), types, n, NULL, host) == total);
	for (size_t i = 0; i < n; i++)
		if (types[i] != RTL_RTDE_TYPE_BOOL)
			CHECK(memcmp(back + offsets[i], fields + offsets[i],
				     rtl_rtde_type_size(types[i])) == 0);
	if (total > 0)
		CHECK(rtl_rtde_pack(back, (size_t)total - 1, types, n, v) == -ENOSPC);
	return 0;
}
