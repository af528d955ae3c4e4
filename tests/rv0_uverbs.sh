#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The raw uverbs kselftest rv0_uverbs, in five runs of one boot, each of its
# cases reported as a case of this test ("RUN: fixture.test"):
#   rxe0                 soft-RoCE (the C driver) for reference: cases of
#                        verbs rxe lacks (XRC, RoCE v1) are skipped
#   rv0                  rverbs' device loaded with rc=0 (UD QPs only: the
#                        verbs it then refuses are pinned), every case
#                        applies: none skipped
#   rv0-takeover         the same with ib_core's AH, XRCD and modify verbs on the
#                        Rust core (rverbs_takeover.ko)
#   rv0-limits           rv0 made with max_pd=4 max_ah=3 max_xrcd=2: the
#                        "limits" cases reach each limit
#   rv0-limits-takeover  the same on the Rust core
# rxe0 is on a veth pair of its own (rdma_rxe and rverbs refuse to share a
# netdev), rv0 on veth0.  After the runs nothing may be left on rv0 (its
# debugfs resources) and the Rust core's counters must balance.

. "$(dirname "$0")/lib.sh"

BIN=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/rv0_uverbs
DBG=/sys/kernel/debug/rverbs
RV0_ENV=(RV_DEV=rv0 RV_EXPECT_NO_ODP=1 RV_EXPECT_NO_MW=1 RV_EXPECT_NO_SRQ=1 RV_EXPECT_UD_ONLY=1)
SMALL=(max_pd=4 max_ah=3 max_xrcd=2)

cleanup() {
	rdma link del rv0 2>/dev/null
	teardown
	ip link del vethx0 2>/dev/null
	true
}
trap cleanup EXIT

# ktap_test_skip with a reason: "ok N DESC # SKIP REASON".
ktap_test_skip_why() {
	set -f		# __ktap_test echoes unquoted
	__ktap_test ok "$1" "SKIP $2"
	set +f
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# cases -f|-F FIXTURE - the harness' cases, "fixture.test" in run order, of
# FIXTURE (-f) or of all the other fixtures (-F), as its filters pick them.
cases() {
	RV_DEV=none "$BIN" -l 2>&1 | awk -v mode="$1" -v fix="$2" '
		/^# FIXTURE/ || /^-+$/ { next }
		/^[^ ]/ { f = $1 }
		(mode == "-f") == (f == fix) { print f "." $NF }'
}

# harness RUN -f|-F FIXTURE ENV... - run the harness under ENV on those
# cases and report each as "RUN: fixture.test"; a case without a result
# fails.  HARNESS_RC is its exit status, HARNESS_SKIPS its skipped cases.
harness() {
	local run=$1 filter=$2 fixture=$3 out rc line name c skips=0 fails=0
	local re='^(not )?ok [0-9]+ ([^ ]+)( # (.*))?$'
	local -A res=() why=()

	shift 3
	out=$(env "$@" "$BIN" "$filter" "$fixture" 2>&1)
	rc=$?
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		name=${BASH_REMATCH[2]}
		if [ -n "${BASH_REMATCH[1]}" ]; then
			res[$name]=fail
		elif [[ ${BASH_REMATCH[4]} == SKIP* ]]; then
			res[$name]=skip
			why[$name]=${BASH_REMATCH[4]#SKIP}
			why[$name]=${why[$name]# }
		else
			res[$name]=pass
		fi
	done <<<"$out"

	for c in $(cases "$filter" "$fixture"); do
		case ${res[$c]-} in
		pass)
			ktap_test_pass "$run: $c" ;;
		skip)
			ktap_test_skip_why "$run: $c" "${why[$c]}"
			skips=$((skips + 1)) ;;
		fail)
			ktap_test_fail "$run: $c"
			fails=$((fails + 1)) ;;
		*)
			ktap_test_fail "$run: $c"
			ktap_print_msg "$run: $c: no result"
			fails=$((fails + 1)) ;;
		esac
	done
	if [ $fails != 0 ] || [ $rc != 0 ]; then
		ktap_print_msg "$run: the harness exited with $rc; its output:"
		grep '^#' <<<"$out"
	else
		grep '^# Totals:' <<<"$out" | sed "s/^# /# $run: /"
	fi
	HARNESS_RC=$rc
	HARNESS_SKIPS=$skips
}

# all_ran - the last harness run exited with 0 and skipped nothing.
all_ran() {
	[ "$HARNESS_RC" = 0 ] && [ "$HARNESS_SKIPS" = 0 ]
}

# has_gid_type DEV TYPE - whether port 1 of DEV has a GID of TYPE.
has_gid_type() {
	grep -qxF "$2" /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/* 2>/dev/null
}

# wait_gids DEV TYPE... - wait up to 10 s for GIDs of each TYPE on DEV
# (ib_core fills the table from a work queue).
wait_gids() {
	local dev=$1 i t ok
	shift
	for ((i = 0; i < 100; i++)); do
		ok=1
		for t in "$@"; do
			has_gid_type "$dev" "$t" || ok=
		done
		[ -n "$ok" ] && return 0
		sleep 0.1
	done
	return 1
}

rv0_up() {
	rdma link add rv0 type rverbs netdev veth0 &&
		wait_gids rv0 "RoCE v2" "IB/RoCE v1"
}

setup() {
	modprobe rdma_rxe && modprobe ib_uverbs || return 1
	# RoCE v1 GIDs too, for the RoCE v1 address handle cases.
	insmod "$RVERBS_KO" roce_v1=1 rc=0 || return 1
	ns_setup || return 1
	ip link add vethx0 type veth peer name vethx1 &&
		ip link set vethx0 up && ip link set vethx1 up || return 1
	rdma link add rxe0 type rxe netdev vethx0 &&
		wait_gids rxe0 "RoCE v2" && rv0_up
}

# reload PARAM... - rv0 again, on rverbs.ko unloaded and loaded with PARAMs.
# shellcheck disable=SC2120 # called through ksft_check, with parameters
reload() {
	local i
	rdma link del rv0 || return 1
	for ((i = 0; i < 50; i++)); do
		rmmod rverbs 2>/dev/null && break
		sleep 0.1
	done
	[ ! -e /sys/module/rverbs ] && insmod "$RVERBS_KO" roce_v1=1 rc=0 "$@" && rv0_up
}

# resources FIELD - "name value" of the lines of rv0's debugfs resources
# with FIELD: 2 the live objects, 4 the limits.
resources() {
	awk -v f="$1" 'NF >= f { printf "%s%s %s", sep, $1, $f; sep = " " }' \
		$DBG/rv0/resources
}

# expect_resources FIELD TEXT - resources FIELD is TEXT; tells otherwise.
expect_resources() {
	local got
	got=$(resources "$1")
	[ "$got" = "$2" ] && return 0
	ktap_print_msg "rv0 resources: $got (expected $2)"
	return 1
}

nothing_live() {
	expect_resources 2 "ucontext 0 pd 0 ah 0 xrcd 0 cq 0 qp 0 mr 0 srq 0 mw 0"
}

counters_balance() {
	local ah_c ah_d x_a x_d
	ah_c=$(counter ah_created) ah_d=$(counter ah_destroyed)
	x_a=$(counter xrcd_allocated) x_d=$(counter xrcd_deallocated)
	ktap_print_msg "Rust core: AHs $ah_c created, $ah_d destroyed;" \
		"XRCDs $x_a allocated, $x_d deallocated"
	[ "$ah_c" = "$ah_d" ] && [ "$x_a" = "$x_d" ]
}

# grew NAME BEFORE - counter NAME is above BEFORE.
grew() {
	[ "$(counter "$1")" -gt "$2" ]
}

through_rust() {
	grew ah_created "$1" && grew xrcd_allocated "$2" && grew dmac_link_local "$3"
}

reload_defaults() {
	reload && expect_resources 4 "pd 32768 ah 32767 xrcd 1024 cq 1048576 qp 1048560 mr 524287 srq 917503 mw 524287"
}

unload() {
	rdma link del rv0 && rdma link del rxe0 && rmmod rverbs &&
		[ -z "$(rdma link show 2>/dev/null)" ] && [ ! -e /sys/module/rverbs ]
}

ktap_print_header
[ -x "$BIN" ] || ktap_exit_fail_msg "$BIN not built"
setup || ktap_exit_fail_msg "setup failed"

n_all=$(cases -F limits | wc -l)
n_limits=$(cases -f limits | wc -l)
# The debug lane (KASAN, lockdep under TCG) runs rv0 under the Rust core
# only: rv0's own code runs the same under either core, and soft-RoCE's
# run and the C core's are the reference that the stock lane compares.
FULL=1
[ "${RVERBS_LANE:-}" = debug ] && FULL=0
if [ $FULL = 1 ]; then
	# The harness' cases in the five runs, and 19 checks of this script.
	ktap_set_plan $((3 * n_all + 2 * n_limits + 19))
else
	ktap_print_msg "debug lane: rv0 under the Rust core only; soft-RoCE's and the C core's runs are the stock lane's"
	ktap_set_plan $((n_all + n_limits + 16))
fi

if [ $FULL = 1 ]; then
	harness rxe0 -F limits RV_DEV=rxe0
	ksft_check "rxe0: the harness exits with 0" test "$HARNESS_RC" = 0

	harness rv0 -F limits "${RV0_ENV[@]}"
	ksft_check "rv0: the harness exits with 0, no case skipped" all_ran
fi

ksft_check "the takeover switches on" takeover_on
before="$(counter ah_created) $(counter xrcd_allocated) $(counter dmac_link_local)"
harness rv0-takeover -F limits "${RV0_ENV[@]}"
ksft_check "rv0-takeover: the harness exits with 0, no case skipped" all_ran
# shellcheck disable=SC2086
ksft_check "rv0-takeover: AHs, XRCDs and a RoCE v1 link-local dmac went through the Rust core" \
	through_rust $before
ksft_check "the takeover switches off" takeover_off

ksft_check "rv0: nothing live after the runs" nothing_live
ksft_check "the Rust core's AH and XRCD counters balance" counters_balance

ksft_check "rverbs reloads with ${SMALL[*]}, rv0 on it" reload "${SMALL[@]}"
ksft_check "rv0's debugfs resources show these limits" \
	expect_resources 4 "pd 4 ah 3 xrcd 2 cq 1048576 qp 1048560 mr 524287 srq 917503 mw 524287"

if [ $FULL = 1 ]; then
	harness rv0-limits -f limits "${RV0_ENV[@]}" RV_LIMITS=1 RV_MAX_XRCD=2
	ksft_check "rv0-limits: the harness exits with 0, no case skipped" all_ran
fi

ksft_check "the takeover switches on again" takeover_on
einval=$(counter error.22)
harness rv0-limits-takeover -f limits "${RV0_ENV[@]}" RV_LIMITS=1 RV_MAX_XRCD=2
ksft_check "rv0-limits-takeover: the harness exits with 0, no case skipped" all_ran
ksft_check "rv0-limits-takeover: the Rust core returned the driver's EINVALs" \
	grew error.22 "$einval"
ksft_check "the takeover switches off again" takeover_off

ksft_check "rv0: nothing live after the limit runs" nothing_live
ksft_check "the Rust core's AH and XRCD counters balance after the limit runs" \
	counters_balance

ksft_check "rverbs reloads with its default limits, rv0 shows them" reload_defaults
ksft_check "rv0 and rxe0 delete, rverbs unloads: no link, no module left" unload

ktap_finished
