// SPDX-License-Identifier: MIT
/* One public struct's layout, as one language sees it. */
#ifndef RTL_TEST_LAYOUT_H
#define RTL_TEST_LAYOUT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rtl_layout {
	const char *name;
	size_t size;
	size_t align;
};

extern const struct rtl_layout rtl_layout_c[];
extern const size_t rtl_layout_c_n;

#ifdef __cplusplus
}
#endif

#endif
