#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build every libFuzzer harness of tests/fuzz/ with clang (fuzzer + ASan +
# UBSan, leak checking on) straight from the sources, and run each one in
# turn, one process at a time, on its committed seeds (tests/fuzz/seeds/
# <harness>/) plus its working corpus. docs/fuzzing.md has the method.
#
#   tests/fuzz/run-fuzz.sh [SECONDS] [HARNESS...]     each harness SECONDS (default 20)
#   tests/fuzz/run-fuzz.sh --runs N [HARNESS...]      each harness N executions (-runs=N)
#   tests/fuzz/run-fuzz.sh --write-seeds              regenerate tests/fuzz/seeds/ (gen-seeds.c)
#
# Prints one line per harness (executions, time, exec/s, coverage, corpus);
# exits 1 if any harness crashed, leaked, timed out or failed to build (the
# reproducer is named in its line), 2 on a usage error. The same lines go
# to $work/summary.tsv. Work files (objects, binaries, corpora, logs, crash
# artifacts) go to $RTL_FUZZ_WORK, default tests/fuzz/corpus-work/
# (git-ignored); the corpora grow across runs. CC may name another clang;
# RTL_FUZZ_MAX_TIME (seconds) caps each harness of a --runs run.
set -eu

usage() {
	echo "usage: $0 [SECONDS | --runs N] [HARNESS...]" >&2
	exit 2
}

secs=20
runs=
write_seeds=
case ${1:-} in
--write-seeds)
	[ $# -eq 1 ] || usage
	write_seeds=1
	shift
	;;
--runs)
	[ $# -ge 2 ] || usage
	runs=$2
	shift 2
	;;
'' | -*) [ $# -eq 0 ] || usage ;;
*)
	secs=$1
	shift
	;;
esac
for n in $secs ${runs:-1}; do
	case $n in
	'' | *[!0-9]*) usage ;;
	esac
done
only="$*"

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${RTL_FUZZ_WORK:-$here/corpus-work}
cc=${CC:-clang}
case $cc in
*clang*) ;;
*) cc=clang ;;
esac

mkdir -p "$work/bin" "$work/obj" "$work/gen/rtloop" "$work/corpus" "$work/artifacts" \
	"$work/logs"
rm -f "$work/failed" "$work/summary.tsv"

# The two headers Meson generates, for a build without tracing or NUMA.
printf '#define RTL_HAVE_NUMA 0\n#define RTL_HAVE_TRACING 0\n#define RTL_VERSION "fuzz"\n' \
	>"$work/gen/rtl-config.h"
sed -e 's/@MAJOR@/0/; s/@MINOR@/0/; s/@PATCH@/0/; s/@VERSION@/fuzz/' \
	"$root/ring/include/rtloop/version.h.in" >"$work/gen/rtloop/version.h"

incs="-I$work/gen -I$root/ring/include -I$root/rt/include -I$root/io/rtde/include"
incs="$incs -I$root/io/rtde -I$root/io/udp/include -I$root/tracing -I$root/apps/rtde-sim"
incs="$incs -I$root/apps/rtde-record -I$root/tests/io/rtde -I$here"
incs="$incs -I$root/io/net/include -I$root/io/ur/include -I$root/io/netft/include"
cflags="-std=c17 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter"
san="address,undefined -fno-sanitize-recover=all"
libs="-lexpat -lcurl -lm -lpthread"

# What an outsider's bytes reach, and what that needs to link, compiled
# once and linked into every harness as one archive. The parsers are
# instrumented for coverage; the plumbing and the simulated robot's
# arithmetic and the field registry's name search and "did you mean"
# (no parsers, and most of the time of an input) only for ASan and
# UBSan, so the fuzzer's time goes to the parsers.
plain="ring/error.c ring/ring.c ring/sized.c rt/log.c rt/mem.c rt/time.c rt/hist.c rt/json.c apps/rtde-sim/robot.c apps/rtde-sim/moves.c apps/rtde-sim/kin.c apps/rtde-sim/requests.c
io/rtde/rtde_fields.c io/net/tcp.c io/ur/ur_dashboard.c io/ur/ur_robot_api.c io/ur/ur_robot_api_json.c
apps/rtde-sim/ports.c io/rtde/rtde_req_names.c apps/rtde-sim/ft.c"
srcs="io/rtde/rtde_codec.c io/rtde/rtde_framer.c io/rtde/rtde_fields.c io/rtde/rtde_recipe.c
io/rtde/rtde_client.c io/udp/udp.c io/ur/ur_primary.c io/netft/rdt.c
apps/rtde-sim/session.c apps/rtde-sim/sim.c apps/rtde-sim/udp.c
apps/rtde-sim/controller.c apps/rtde-sim/dashboard.c apps/rtde-sim/primary.c
apps/rtde-sim/robot_api.c apps/rtde-sim/driver.c apps/rtde-sim/panel.c
apps/rtde-sim/urrtde.c apps/rtde-sim/extctl.c apps/rtde-sim/extctl_cmd.c
apps/rtde-sim/extctl_traj.c apps/rtde-sim/extctl_urcap.c
apps/rtde-record/format.c"

# name:source:extra-flags. The decode-* variants pin the package type to a
# group so the fuzzer explores the payload parsers (see fuzz-decode.c).
harnesses="framer:fuzz-framer.c:
decode:fuzz-decode.c:
decode-fixed:fuzz-decode.c:-DFUZZ_TYPES=VvSP
decode-text:fuzz-decode.c:-DFUZZ_TYPES=M
decode-setup:fuzz-decode.c:-DFUZZ_TYPES=OI
decode-data:fuzz-decode.c:-DFUZZ_TYPES=U
values:fuzz-values.c:
types:fuzz-types.c:
client:fuzz-client.c:
sim-session:fuzz-sim-session.c:
udp-state:fuzz-udp-state.c:
udp-command:fuzz-udp-command.c:
recipe-xml:fuzz-recipe.c:-DFUZZ_RECIPE_XML
recipe-text:fuzz-recipe.c:
record:fuzz-record.c:
ur-primary:fuzz-ur-primary.c:
sim-services:fuzz-sim-services.c:
rdt:fuzz-rdt.c:"

fail() {
	echo "$1"
	echo 1 >"$work/failed"
}

objs=
for s in $plain $srcs; do
	o="$work/obj/$(echo "$s" | tr / _).o"
	objs="$objs $o"
	inst=-fsanitize=fuzzer-no-link,
	# shellcheck disable=SC2086,SC2116
	case " $(echo $plain) " in
	*" $s "*) inst=-fsanitize= ;;
	esac
	# shellcheck disable=SC2086
	if ! "$cc" $cflags $inst$san $incs -c -o "$o" "$root/$s" \
		>"$work/logs/build-lib.log" 2>&1; then
		echo "fuzz: BUILD FAILED: $s (see $work/logs/build-lib.log)"
		exit 1
	fi
done
# The simulator knows the rtloop program of its build: generated here as
# the build generates it (io/rtde/script/meson.build).
# shellcheck disable=SC2086
if ! "$cc" $cflags $incs -o "$work/bin/gen-control-script" \
	"$root/io/rtde/script/gen-control-script.c" >"$work/logs/build-gen.log" 2>&1 ||
	! "$work/bin/gen-control-script" "$root/io/rtde/script/rtloop_control.script.in" \
		"$work/gen/rtloop_control.script" "$work/gen/rtloop_control_program.c" \
		>>"$work/logs/build-gen.log" 2>&1; then
	echo "fuzz: BUILD FAILED: the control program (see $work/logs/build-gen.log)"
	exit 1
fi
o="$work/obj/rtloop_control_program.o"
# shellcheck disable=SC2086
"$cc" $cflags -fsanitize=$san -c -o "$o" "$work/gen/rtloop_control_program.c"
objs="$objs $o"
rm -f "$work/obj/librtlfuzz.a"
# shellcheck disable=SC2086
ar rcs "$work/obj/librtlfuzz.a" $objs

if [ -n "$write_seeds" ]; then
	# Files are overwritten by name, never deleted: reproducers of fixed
	# crashes kept in the seed directories stay.
	# shellcheck disable=SC2086
	"$cc" $cflags -fsanitize=$san $incs -o "$work/bin/gen-seeds" "$here/gen-seeds.c" \
		"$work/obj/librtlfuzz.a" $libs
	"$work/bin/gen-seeds" "$here/seeds"
	echo "seeds written to $here/seeds ($(du -sk "$here/seeds" | cut -f1) KiB)"
	exit 0
fi

if [ -n "$runs" ]; then
	# RTL_FUZZ_MAX_TIME caps a harness too slow for N executions (seconds).
	limit="-runs=$runs -max_total_time=${RTL_FUZZ_MAX_TIME:-0}"
else
	limit="-max_total_time=$secs"
fi

echo "$harnesses" | while IFS=: read -r name src extra; do
	if [ -n "$only" ]; then
		case " $only " in
		*" $name "*) ;;
		*) continue ;;
		esac
	fi
	bin="$work/bin/fuzz-$name"
	log="$work/logs/$name.log"
	# shellcheck disable=SC2086
	if ! "$cc" $cflags -fsanitize=fuzzer,$san $incs $extra -o "$bin" "$here/$src" \
		"$work/obj/librtlfuzz.a" $libs >"$log" 2>&1; then
		fail "fuzz-$name: BUILD FAILED (see $log)"
		continue
	fi
	mkdir -p "$work/corpus/$name"
	seeds="$here/seeds/$name"
	[ -d "$seeds" ] || seeds=
	start=$(date +%s)
	# shellcheck disable=SC2086
	if "$bin" $limit -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
		-print_final_stats=1 -detect_leaks=1 \
		-artifact_prefix="$work/artifacts/$name-" \
		"$work/corpus/$name" $seeds >>"$log" 2>&1; then
		secs_run=$(($(date +%s) - start))
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
		cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
		ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
		size=$(find "$work/corpus/$name" -type f | wc -l)
		echo "fuzz-$name: ok, ${n:-?} runs in $secs_run s (${eps:-?}/s)," \
			"cov ${cov:-?} ft ${ft:-?}, corpus $size"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${n:-?}" "$secs_run" "${eps:-?}" \
			"${cov:-?}" "${ft:-?}" "$size" >>"$work/summary.tsv"
	else
		art=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
		fail "fuzz-$name: FAILED (${art:-no artifact}; log $log)"
	fi
done

if [ -e "$work/failed" ]; then
	rm -f "$work/failed"
	exit 1
fi
exit 0
