#!/bin/sh
# Install a build into a staging directory and build a program against it
# with pkg-config alone: the headers under include/rtloop/ must be complete
# and the shared library must export what they declare.
set -eu
build=${1:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --destdir "$stage" >/dev/null
pc=$(dirname "$(find "$stage" -name rtloop.pc | head -1)")
export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$pc"
includes=$(cd "$(find "$stage" -type d -path '*include/rtloop' | head -1)" && ls *.h)
{
	for h in $includes; do echo "#include <rtloop/$h>"; done
	cat <<'C'
#include <stdio.h>
int main(void)
{
	struct rtl_ring *r;
	unsigned long v = 7, out = 0;

	if (rtl_ring_create(&r, 16, sizeof(v)) != 0)
		return 1;
	rtl_ring_push_sz(r, &v, sizeof(v));
	rtl_ring_pop_sz(r, &out, sizeof(out));
	rtl_ring_destroy(r);
	printf("consumer ok: %lu\n", out);
	return out == 7 ? 0 : 1;
}
C
} >"$stage/consumer.c"
# shellcheck disable=SC2046
cc -std=c17 -Wall -Wextra -Wpedantic -Werror -o "$stage/consumer" "$stage/consumer.c" \
	$(pkg-config --cflags --libs rtloop)
LD_LIBRARY_PATH=$(dirname "$(find "$stage" -name 'librtloop.so' | head -1)") "$stage/consumer"
