#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop_control.script is generated from its template with the constants
# of <rtloop/rtde_cmd.h> (io/rtde/script/gen-control-script.c): the
# generated program holds no placeholder, every register index, mode
# number and default in it equals the header's (read here from the header
# itself, not through the generator), every request kind has its branch
# in the dispatch and the mode calls are there (grep level: no URScript
# interpreter runs here), and the generator refuses a template with an
# unknown placeholder, an unclosed one, or one that leaves a constant out.
# FORCE_MODE's type shift is read from rtde_req.c beside the header's
# include directory (io/rtde/rtde_req.c, which writes it).
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
	JOINT_SPEED:RTL_RTDE_REQ_JOINT_SPEED_DEFAULT TOOL_SPEED:RTL_RTDE_REQ_TOOL_SPEED_DEFAULT \
	FORCE_LIMIT:RTL_RTDE_REQ_FORCE_LIMIT_DEFAULT FORCE_DAMPING:RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT \
	FORCE_GAIN:RTL_RTDE_REQ_FORCE_GAIN_DEFAULT CONTACT_FORCE:RTL_RTDE_REQ_CONTACT_FORCE_DEFAULT; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hv=$(header_value "$h")
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
for pair in REQ_MOVE_J:RTL_RTDE_REQ_MOVE_J REQ_MOVE_L:RTL_RTDE_REQ_MOVE_L \
	REQ_STOP_MOVE:RTL_RTDE_REQ_STOP_MOVE REQ_PATH_ADD:RTL_RTDE_REQ_PATH_ADD \
	REQ_ZERO_FT_SENSOR:RTL_RTDE_REQ_ZERO_FT_SENSOR REQ_SET_PAYLOAD:RTL_RTDE_REQ_SET_PAYLOAD \
	REQ_SET_TCP:RTL_RTDE_REQ_SET_TCP REQ_FORWARD_KIN:RTL_RTDE_REQ_FORWARD_KIN \
	REQ_INVERSE_KIN:RTL_RTDE_REQ_INVERSE_KIN \
	REQ_FORCE_MODE:RTL_RTDE_REQ_FORCE_MODE REQ_FORCE_LIMITS:RTL_RTDE_REQ_FORCE_LIMITS \
	REQ_END_FORCE_MODE:RTL_RTDE_REQ_END_FORCE_MODE REQ_TEACH_MODE:RTL_RTDE_REQ_TEACH_MODE \
	REQ_END_TEACH_MODE:RTL_RTDE_REQ_END_TEACH_MODE \
	REQ_MOVE_UNTIL_CONTACT:RTL_RTDE_REQ_MOVE_UNTIL_CONTACT \
	STATE_NONE:RTL_RTDE_REQ_STATE_NONE STATE_ACCEPTED:RTL_RTDE_REQ_STATE_ACCEPTED \
	STATE_RUNNING:RTL_RTDE_REQ_STATE_RUNNING STATE_DONE:RTL_RTDE_REQ_STATE_DONE \
	STATE_FAILED:RTL_RTDE_REQ_STATE_FAILED WHY_OK:RTL_RTDE_REQ_OK \
	WHY_BAD_ARGUMENT:RTL_RTDE_REQ_BAD_ARGUMENT WHY_UNREACHABLE:RTL_RTDE_REQ_UNREACHABLE \
	WHY_INTERRUPTED:RTL_RTDE_REQ_INTERRUPTED WHY_NO_SOLUTION:RTL_RTDE_REQ_NO_SOLUTION \
	WHY_UNKNOWN_KIND:RTL_RTDE_REQ_UNKNOWN_KIND WHY_PATH_FULL:RTL_RTDE_REQ_PATH_FULL \
	WHY_WATCHDOG:RTL_RTDE_REQ_WATCHDOG WHY_NOT_ALLOWED:RTL_RTDE_REQ_NOT_ALLOWED \
	WHY_NO_CONTACT:RTL_RTDE_REQ_NO_CONTACT; do
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
# The status bits: the program adds their values (no bitwise operators).
for pair in STATUS_READY:RTL_RTDE_CMD_STATUS_READY STATUS_FORCE:RTL_RTDE_CMD_STATUS_FORCE \
	STATUS_TEACH:RTL_RTDE_CMD_STATUS_TEACH; do
	s=${pair%%:*} h=${pair#*:}
	sv=$(script_value "$s") hb=$(flag_bit "$h")
	hv=$([ -n "$hb" ] && echo $((1 << hb)))
	check "$s in the program ($sv) is $h ($hv)" same "$sv" "$hv"
done
hv=$(($(script_value STATUS_READY) + (1 << $(flag_bit RTL_RTDE_CMD_STATUS_WATCHDOG))))
sv=$(script_value STATUS_READY_WATCHDOG)
check "STATUS_READY_WATCHDOG in the program ($sv) is READY | WATCHDOG ($hv)" same "$sv" "$hv"
# FORCE_MODE's type: flags bits 8..9, as rtl_rtde_req_force_mode() writes it.
hb=$(sed -n 's/.*r\.flags |= (uint32_t)type << \([0-9][0-9]*\);.*/\1/p' "$(dirname "$header")/../../rtde_req.c")
sv=$(script_value FORCE_TYPE_BIT)
check "FORCE_TYPE_BIT in the program ($sv) is the type's shift in rtde_req.c ($hb)" same "$sv" "$hb"

# Every kind of the header has its branch in the request dispatch (grep
# level: there is no URScript interpreter here), and its URScript call.
for k in MOVE_J MOVE_L STOP_MOVE PATH_ADD FORCE_MODE FORCE_LIMITS END_FORCE_MODE TEACH_MODE \
	END_TEACH_MODE ZERO_FT_SENSOR SET_PAYLOAD SET_TCP FORWARD_KIN INVERSE_KIN MOVE_UNTIL_CONTACT; do
	check "REQ_$k has a branch in the request dispatch" \
		grep -Eq "^[[:space:]]*(el)?if (.* or )?kind == REQ_$k( or .*)?:\$" "$script"
done
# The kinds of enum rtl_rtde_req_kind but NONE: each has its global.
kinds=$(awk '/^enum rtl_rtde_req_kind/ { on = 1 } on && /^};/ { on = 0 }
	on && /^[[:space:]]*RTL_RTDE_REQ_[A-Z_]* = [0-9]+,/ { sub(/^[[:space:]]*RTL_RTDE_REQ_/, ""); sub(/ .*/, ""); print }' \
	"$header" | grep -v '^NONE$')
nk=$(printf '%s\n' "$kinds" | grep -c .)
hv=$(($(header_value RTL_RTDE_REQ_KIND_COUNT) - 1))
check "the header's kinds ($nk, RTL_RTDE_REQ_KIND_COUNT - 1 = $hv) all have a global in the program" \
	sh -c '[ "$3" -eq "$4" ] && for k in $1; do grep -q "^[[:space:]]*global REQ_$k = " "$2" || exit 1; done' \
	sh "$kinds" "$script" "$nk" "$hv"
for call in 'force_mode(force_frame, force_sel, force_wrench, force_type, force_limits)' \
	'force_mode_set_damping(force_damping)' \
	'end_force_mode()' 'teach_mode()' 'end_teach_mode()' 'get_tcp_force()'; do
	check "the program calls $call" grep -qF "$call" "$script"
done
# e-Series only: a CB3 controller would refuse the whole program for it
check "the program does not call force_mode_set_gain_scaling" \
	sh -c '! grep -q "^[^#]*force_mode_set_gain_scaling(" "$1"' sh "$script"
check "the status register carries the force and teach bits" \
	sh -c 'grep -q "status = status + STATUS_FORCE" "$1" && grep -q "status = status + STATUS_TEACH" "$1" &&
		grep -q "write_output_integer_register(OUT_STATUS, status)" "$1"' sh "$script"
# STOP and a watchdog trip end force mode and teach mode: end_force_mode
# and teach_want = False in the STOP branch and in the trip.
check "STOP ends force mode and teach mode" \
	sh -c 'awk "/if mode == MODE_STOP:/ { on = 1 } on && /end_force_mode\(\)/ { f = 1 } on && /teach_want = False/ { t = 1 } on && /^    else:/ { on = 0 } END { exit !(f && t) }" "$1"' sh "$script"
check "a watchdog trip ends force mode and teach mode" \
	sh -c 'awk "/tripped = True/ { on = 1 } on && /end_force_mode\(\)/ { f = 1 } on && /teach_want = False/ { t = 1 } on && /textmsg/ { on = 0 } END { exit !(f && t) }" "$1"' sh "$script"
# rtde-sim's framing reads a block line bare: no comment may follow it.
check "no block line carries a trailing comment" \
	sh -c "! grep -nE '^[[:space:]]*(def|thread|if|elif|else|while|for|end)([[:space:]:(].*)?#' '$script'"

# The path's fixed-size list holds PATH_MAX waypoints (URScript lists do
# not grow before PolyScope 5.15).
wp_count=$(awk '/global wp_t = \[/ { on = 1 } on { n += gsub(/p\[/, "") } on && /\]\]$/ { on = 0 } END { print n + 0 }' "$script")
hv=$(header_value RTL_RTDE_REQ_PATH_MAX)
check "the path list holds RTL_RTDE_REQ_PATH_MAX ($hv) waypoints ($wp_count)" same "$wp_count" "$hv"
# Kinds the program does not know are refused as the simulator does.
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
