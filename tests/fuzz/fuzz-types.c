// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: comma-separated lists and type names.
 *
 * The input is a setup reply's type list. Items from the iterator must lie
 * inside the list and rebuild it (with commas, one trailing comma dropped);
 * a list that parses must format back to a list that parses to the same
 * types; every item's verdict must match rtl_rtde_type_from_name().
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

#define MAX_TYPES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *list = (const char *)data;
	enum rtl_rtde_type types[MAX_TYPES], again[MAX_TYPES];
	char text[MAX_TYPES * (RTL_RTDE_TYPE_NAME_MAX + 1)];
	struct rtl_rtde_list it;
	const char *item;
	size_t item_len, pos = 0, bad = SIZE_MAX, count = 0;
	int n, m;

	rtl_rtde_list_init(&it, list, size);
	while (rtl_rtde_list_next(&it, &item, &item_len)) {
		int t;

		CHECK(item >= list && item_len <= (size_t)(list + size - item));
		CHECK(item == list + pos);
		pos += item_len;
		CHECK(pos == size || list[pos] == ',');
		pos += pos < size;
		t = rtl_rtde_type_from_name(item, item_len);
		CHECK(t == -EPROTO || (t >= 0 && t < RTL_RTDE_TYPE_COUNT));
		if (t >= 0)
			CHECK(strlen(rtl_rtde_type_name(t)) == item_len &&
			      memcmp(rtl_rtde_type_name(t), item, item_len) == 0);
		count++;
	}
	CHECK(pos == size);

	n = rtl_rtde_parse_types(types, MAX_TYPES, &bad, list, size);
	CHECK(n >= 0 || n == -EPROTO || n == -EBADMSG || n == -ENOSPC);
	if (n < 0) {
		CHECK(bad < count || (n == -ENOSPC && bad == MAX_TYPES));
		return 0;
	}
	CHECK((size_t)n == count);
	m = rtl_rtde_format_types(text, sizeof(text), types, (size_t)n);
	CHECK(m >= 0 && (size_t)m <= size);
	CHECK(rtl_rtde_parse_types(again, MAX_TYPES, NULL, text, (size_t)m) == n);
	CHECK(memcmp(types, again, (size_t)n * sizeof(types[0])) == 0);
	return 0;
}
