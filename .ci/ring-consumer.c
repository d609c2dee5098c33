/* SPDX-License-Identifier: MIT */
/* The consumer both install checks build against an installed rtloop
 * (.ci/check-install.sh with pkg-config, .ci/check-consumers.sh with
 * CMake): a ring round trip through the shared or static library, and
 * the run-time library's version against the headers'. */
#include <stdio.h>
#include <string.h>

#include <rtloop/ring.h>
#include <rtloop/version.h>

int main(void)
{
	struct rtl_ring *r;
	unsigned long v = 7, out = 0;

	if (rtl_ring_create(&r, 16, sizeof(v), NULL) != 0)
		return 1;
	rtl_ring_push_sz(r, &v, sizeof(v));
	rtl_ring_pop_sz(r, &out, sizeof(out));
	rtl_ring_destroy(r);
	printf("consumer ok: %lu, rtloop %s\n", out, rtl_version());
	return out == 7 && strcmp(rtl_version(), RTL_VERSION_STRING) == 0 ? 0 : 1;
}
