// SPDX-License-Identifier: MIT
/*
 * A struct shared between a C library and a C++ program must have one
 * layout: compare sizeof and alignof of every public struct as C++ sees it
 * (RTL_ATOMIC is std::atomic here) with what the C translation unit
 * layout-c.c recorded (RTL_ATOMIC is _Atomic there). TAP output, one case
 * per struct.
 */
#include <cstdio>
#include <cstring>

#include "layout.h"
#include "layout-list.h"

namespace
{

struct cpp_layout {
	const char *name;
	size_t size;
	size_t align;
};

#define RTL_LAYOUT(n) { #n, sizeof(struct n), alignof(struct n) },
const cpp_layout cpp[] = {
#include "layout-list.h"
};
#undef RTL_LAYOUT

} // namespace

int main()
{
	const size_t n = sizeof(cpp) / sizeof(cpp[0]);
	int failed = 0;

	std::printf("1..%zu\n", n + 1);
	std::printf("%s 1 - C and C++ see the same %zu structs\n",
		    n == rtl_layout_c_n ? "ok" : "not ok", n);
	failed += n != rtl_layout_c_n;
	for (size_t i = 0; i < n; i++) {
		const rtl_layout *c = i < rtl_layout_c_n ? &rtl_layout_c[i] : nullptr;
		bool same = c && std::strcmp(c->name, cpp[i].name) == 0 && c->size == cpp[i].size &&
			    c->align == cpp[i].align;
		std::printf("%s %zu - struct %s: C++ size %zu align %zu", same ? "ok" : "not ok",
			    i + 2, cpp[i].name, cpp[i].size, cpp[i].align);
		if (!same && c)
			std::printf(", C size %zu align %zu", c->size, c->align);
		std::printf("\n");
		failed += !same;
	}
	return failed ? 1 : 0;
}
