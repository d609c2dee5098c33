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
	cat "$(dirname "$0")/ring-consumer.c"
} >"$stage/consumer.c"
# shellcheck disable=SC2046
cc -std=c17 -Wall -Wextra -Wpedantic -Werror -o "$stage/consumer" "$stage/consumer.c" \
	$(pkg-config --cflags --libs rtloop)
LD_LIBRARY_PATH=$(dirname "$(find "$stage" -name 'librtloop.so' | head -1)") "$stage/consumer"
