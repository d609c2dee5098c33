// SPDX-License-Identifier: MIT
/* The size and alignment of every public struct as C sees it (layout-cpp.cpp
 * compares them with C++'s). */
#include <stddef.h>

#include "layout.h"
#include "layout-list.h"

#define RTL_LAYOUT(n) { #n, sizeof(struct n), _Alignof(struct n) },
const struct rtl_layout rtl_layout_c[] = {
#include "layout-list.h"
};
#undef RTL_LAYOUT
const size_t rtl_layout_c_n = sizeof(rtl_layout_c) / sizeof(rtl_layout_c[0]);
