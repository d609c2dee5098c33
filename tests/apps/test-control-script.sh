#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop_control.script is generated from its template with the constants
# of <rtloop/rtde_cmd.h> (io/rtde/script/gen-control-script.c): the
# generated program holds no placeholder, every register index, mode
# number and default in it equals the header's (read here from the header
# itself, not through the generator), and the generator refuses a template
# with an unknown placeholder, an unclosed one, or one that leaves a
# constant out.
# Usage: test-control-script.sh GENERATOR TEMPLATE GENERATED HEADER
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

gen=${1:?usage: $0 GENERATOR TEMPLATE GENERATED HEADER}
template=${2:?}
script=${3:?}
header=${4:?}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-control-script

# header_value NAME: the value #define NAME has in the header.
header_value() {
	sed -n "s/^#define $1 \([0-9.][0-9.]*\).*/\1/p" "$header"
}

# enum_value NAME: the value of an enumerator NAME = N.
enum_value() {
	sed -n "s/^[[:space:]]*$1 = \([0-9][0-9]*\),.*/\1/p" "$header"
}

# flag_bit NAME: the bit index of #define NAME (1u << N).
flag_bit() {
	sed -n "s/^#define $1 (1u << \([0-9][0-9]*\)).*/\1/p" "$header"
}

# script_value NAME: the value of "global NAME = V" in the program.
script_value() {
	sed -n "s/^[[:space:]]*global $1 = \([0-9.][0-9.]*\).*/\1/p" "$script"
}

# same NUMBER NUMBER: equal as numbers (300 and 300.0).
same() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 == b + 0) }'
}

check "the generated program holds no placeholder" sh -c "! grep -n '@' '$script'"
for pair in REG_MODE:RTL_RTDE_CMD_REG_MODE REG_SEQ:RTL_RTDE_CMD_REG_SEQ \
	REG_WD_MS:RTL_RTDE_CMD_REG_WATCHDOG_MS REG_PARAM:RTL_RTDE_CMD_REG_PARAM0 \
	REG_ACCEL:RTL_RTDE_CMD_REG_ACCEL REG_TIME:RTL_RTDE_CMD_REG_TIME \
	REG_LOOKAHEAD:RTL_RTDE_CMD_REG_LOOKAHEAD REG_GAIN:RTL_RTDE_CMD_REG_GAIN \
	OUT_MODE:RTL_RTDE_CMD_OUT_MODE OUT_SEQ:RTL_RTDE_CMD_OUT_SEQ \
	OUT_TRIPS:RTL_RTDE_CMD_OUT_WD_TRIPS OUT_STATUS:RTL_RTDE_CMD_OUT_STATUS \
	JOINT_ACCEL:RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT LINEAR_ACCEL:RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT \
	lookahead:RTL_RTDE_CMD_LOOKAHEAD_DEFAULT gain:RTL_RTDE_CMD_GAIN_DEFAULT; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(header_value "$h")
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
for pair in MODE_IDLE:RTL_RTDE_CMD_IDLE MODE_SPEEDJ:RTL_RTDE_CMD_SPEEDJ \
	MODE_SPEEDL:RTL_RTDE_CMD_SPEEDL MODE_SERVOJ:RTL_RTDE_CMD_SERVOJ MODE_STOP:RTL_RTDE_CMD_STOP; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(enum_value "$h")
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
# The requests: registers, defaults, kinds, states, reasons and flags.
for pair in REQ_REG_ID:RTL_RTDE_REQ_REG_ID REQ_REG_KIND:RTL_RTDE_REQ_REG_KIND \
	REQ_REG_FLAGS:RTL_RTDE_REQ_REG_FLAGS REQ_REG_ARG:RTL_RTDE_REQ_REG_ARG0 \
	REQ_OUT_ID:RTL_RTDE_REQ_OUT_ID REQ_OUT_STATE:RTL_RTDE_REQ_OUT_STATE \
	REQ_OUT_REASON:RTL_RTDE_REQ_OUT_REASON REQ_OUT_RESULT:RTL_RTDE_REQ_OUT_RESULT0 \
	REQ_NRESULT:RTL_RTDE_REQ_NRESULT PATH_MAX:RTL_RTDE_REQ_PATH_MAX \
	JOINT_SPEED:RTL_RTDE_REQ_JOINT_SPEED_DEFAULT TOOL_SPEED:RTL_RTDE_REQ_TOOL_SPEED_DEFAULT; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(header_value "$h")
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
for pair in REQ_MOVE_J:RTL_RTDE_REQ_MOVE_J REQ_MOVE_L:RTL_RTDE_REQ_MOVE_L \
	REQ_STOP_MOVE:RTL_RTDE_REQ_STOP_MOVE REQ_PATH_ADD:RTL_RTDE_REQ_PATH_ADD \
	REQ_ZERO_FT_SENSOR:RTL_RTDE_REQ_ZERO_FT_SENSOR REQ_SET_PAYLOAD:RTL_RTDE_REQ_SET_PAYLOAD \
	REQ_SET_TCP:RTL_RTDE_REQ_SET_TCP REQ_FORWARD_KIN:RTL_RTDE_REQ_FORWARD_KIN \
	REQ_INVERSE_KIN:RTL_RTDE_REQ_INVERSE_KIN \
	STATE_NONE:RTL_RTDE_REQ_STATE_NONE STATE_ACCEPTED:RTL_RTDE_REQ_STATE_ACCEPTED \
	STATE_RUNNING:RTL_RTDE_REQ_STATE_RUNNING STATE_DONE:RTL_RTDE_REQ_STATE_DONE \
	STATE_FAILED:RTL_RTDE_REQ_STATE_FAILED WHY_OK:RTL_RTDE_REQ_OK \
	WHY_BAD_ARGUMENT:RTL_RTDE_REQ_BAD_ARGUMENT WHY_UNREACHABLE:RTL_RTDE_REQ_UNREACHABLE \
	WHY_INTERRUPTED:RTL_RTDE_REQ_INTERRUPTED WHY_NO_SOLUTION:RTL_RTDE_REQ_NO_SOLUTION \
	WHY_UNKNOWN_KIND:RTL_RTDE_REQ_UNKNOWN_KIND WHY_PATH_FULL:RTL_RTDE_REQ_PATH_FULL \
	WHY_WATCHDOG:RTL_RTDE_REQ_WATCHDOG; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(enum_value "$h")
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
for pair in FLAG_PATH_BIT:RTL_RTDE_REQ_FLAG_PATH FLAG_LINEAR_BIT:RTL_RTDE_REQ_FLAG_LINEAR \
	FLAG_NEAR_BIT:RTL_RTDE_REQ_FLAG_NEAR; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(flag_bit "$h")
	check "$s in the program ($sv) is the bit of $h ($hv)" same "$sv" "$hv"
done
# The path's fixed-size list holds PATH_MAX waypoints (URScript lists do
# not grow before PolyScope 5.15).
wp_count=$(awk '/global wp_t = \[/ { on = 1 } on { n += gsub(/p\[/, "") } on && /\]\]$/ { on = 0 } END { print n + 0 }' "$script")
hv=$(header_value RTL_RTDE_REQ_PATH_MAX)
check "the path list holds RTL_RTDE_REQ_PATH_MAX ($hv) waypoints ($wp_count)" same "$wp_count" "$hv"
# Kinds the program does not run yet are refused as the simulator does.
check "an unknown kind fails with UNKNOWN_KIND" grep -q "why = WHY_UNKNOWN_KIND" "$script"

lo=$(header_value RTL_RTDE_CMD_LOOKAHEAD_MIN) hi=$(header_value RTL_RTDE_CMD_LOOKAHEAD_MAX)
check "the lookahead is clamped to the header's range ($lo..$hi)" \
	grep -Eq "clamp\(lookahead, $lo, $hi\)" "$script"

# The generator's refusals.
printf 'x = @RTL_RTDE_CMD_NO_SUCH@\n' >"$tmp/unknown.in"
run_cmd "$gen" "$tmp/unknown.in" "$tmp/unknown.out"
check "an unknown placeholder fails, naming it and where" \
	sh -c "[ $rc -ne 0 ] && printf '%s' \"\$1\" | grep -q \"unknown.in:1: unknown placeholder '@RTL_RTDE_CMD_NO_SUCH@'\" && [ ! -e '$tmp/unknown.out' ]" \
	sh "$err"
sed 's/@RTL_RTDE_CMD_REG_GAIN@/33/g' "$template" >"$tmp/left.in"
run_cmd "$gen" "$tmp/left.in" "$tmp/left.out"
check "a template that leaves a constant out fails, naming it" \
	sh -c "[ $rc -ne 0 ] && printf '%s' \"\$1\" | grep -q 'RTL_RTDE_CMD_REG_GAIN is never used'" sh "$err"
printf 'x = @RTL_RTDE_CMD_REG_MODE\n' >"$tmp/open.in"
run_cmd "$gen" "$tmp/open.in" "$tmp/open.out"
check "an unclosed placeholder fails" sh -c "[ $rc -ne 0 ] && printf '%s' \"\$1\" | grep -q 'unclosed placeholder'" sh "$err"
finish
