#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build the RTDE libFuzzer harnesses with clang (fuzzer + ASan + UBSan)
# straight from the io/rtde/ sources, generate the seed corpora from the
# section-7 test vectors, and run each harness for a bounded time.
#
#   tests/fuzz/run-fuzz.sh [SECONDS_PER_HARNESS]     (default 20)
#
# Prints one line per harness; exits 1 if any harness crashed, leaked,
# timed out or failed to build (the reproducer is named in its line).
# Work files (binaries, corpora, logs, crash artifacts) go to
# $RTL_FUZZ_WORK, default tests/fuzz/corpus-work/ (git-ignored); the
# corpora grow across runs. CC may name another clang.
set -eu

secs=${1:-20}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [SECONDS_PER_HARNESS]" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${RTL_FUZZ_WORK:-$here/corpus-work}
cc=${CC:-clang}
case $cc in
*clang*) ;;
*) cc=clang ;;
esac

mkdir -p "$work/bin" "$work/corpus" "$work/artifacts" "$work/logs"

incs="-I$root/ring/include -I$root/rt/include -I$root/io/rtde/include -I$root/io/rtde -I$root/tests/io/rtde"
cflags="-std=c17 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter"
san="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
lib="$root/io/rtde/rtde_codec.c $root/io/rtde/rtde_framer.c"

# name:source:extra-flags. The decode-* variants pin the package type to a
# group so the fuzzer explores the payload parsers (see fuzz-decode.c).
harnesses="framer:fuzz-framer.c:
decode:fuzz-decode.c:
decode-fixed:fuzz-decode.c:-DFUZZ_TYPES=VvSP
decode-text:fuzz-decode.c:-DFUZZ_TYPES=M
decode-setup:fuzz-decode.c:-DFUZZ_TYPES=OI
decode-data:fuzz-decode.c:-DFUZZ_TYPES=U
values:fuzz-values.c:
types:fuzz-types.c:"

# Seeds are regenerated on every run from the test vectors.
rm -rf "$work/seeds"
# shellcheck disable=SC2086
"$cc" $cflags $incs -o "$work/bin/gen-seeds" "$here/gen-seeds.c"
"$work/bin/gen-seeds" "$work/seeds"

failed=0
echo "$harnesses" | while IFS=: read -r name src extra; do
	bin="$work/bin/fuzz-$name"
	log="$work/logs/$name.log"
	# shellcheck disable=SC2086
	if ! "$cc" $cflags $san $incs $extra -o "$bin" "$here/$src" $lib >"$log" 2>&1; then
		echo "fuzz-$name: BUILD FAILED (see $log)"
		echo 1 >"$work/failed"
		continue
	fi
	mkdir -p "$work/corpus/$name"
	start=$(date +%s)
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/$name-" \
		"$work/corpus/$name" "$work/seeds/$name" >>"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		size=$(find "$work/corpus/$name" -type f | wc -l)
		echo "fuzz-$name: ok, ${runs:-?} runs in $(($(date +%s) - start)) s, corpus $size"
	else
		art=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
		echo "fuzz-$name: FAILED (${art:-no artifact}; log $log)"
		echo 1 >"$work/failed"
	fi
done

if [ -e "$work/failed" ]; then
	rm -f "$work/failed"
	exit 1
fi
exit 0
