#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The takeover switched under load: three processes create and destroy
# objects without pause, 8 live each at any time, the oldest destroyed when
# a new one is made (AHs on rxe0 and on rv0 through rdma-core, XRC domains
# on rv0 through raw uverbs), while the livepatch is switched on and off
# SWITCHES times (50; 10 on the debug lane).  Each switch is paced by the
# work done, not by time: once it is complete, every worker makes PACE (16)
# more pairs before the next, so the 8 objects it had at the switch are
# destroyed under the new core.  The workers tell which core served each
# create and each destroy (tests/load_cores.h: the task's livepatch state
# before and after the call), and count the objects made under C and
# destroyed under Rust and the other way round: both must be seen at least
# once per switch, by each worker.  Every create and destroy must succeed,
# whichever core is on; at the end nothing is live on rv0 and the livepatch
# is off.
#
# During the first WAIT_SWITCHES (2) switches a fourth process makes
# creates that wait for a neighbour that never answers (192.0.2.99 on
# veth0, nobody's: ib_core's 1000 ms, then ETIMEDOUT, with both cores):
# the livepatch's transition waits for the create in the patched function
# to return; the switch must complete, every such create end in ETIMEDOUT,
# and some must have had a switch begin or end under them.

. "$(dirname "$0")/lib.sh"

BIN=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}
SWITCHES=${SWITCHES:-50}
[ "${RVERBS_LANE:-}" = debug ] && SWITCHES=${SWITCHES_DEBUG:-10}
PACE=16
WAIT_SWITCHES=2
SILENT4=192.0.2.99
DBG=/sys/kernel/debug/rverbs
TMP=$(mktemp -d)
PIDS=()
LOADS=(ah_rxe0 ah_rv0 xrcd_rv0)

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -USR1 "$p" 2>/dev/null
	done
	wait
	rdma link del rxe0 2>/dev/null
	rdma link del rv0 2>/dev/null
	ip neigh del $SILENT4 dev veth0 2>/dev/null
	rm -rf "$TMP"
	teardown
}
trap cleanup EXIT

# worker NAME CMD... - start a load process; its output in $TMP/NAME, its
# progress (pairs so far) in $TMP/NAME.count.
worker() {
	local name=$1
	shift
	"$@" -C "$TMP/$name.count" >"$TMP/$name" 2>&1 &
	eval "PID_$name=\$!"
	PIDS+=($!)
	# A minute: on the debug lane four of them took over 10 s to start.
	wait_until 60 grep -qx started "$TMP/$name"
}

# stop NAME - end a worker; its exit status in RC_NAME.
stop() {
	local pid
	eval "pid=\$PID_$1"
	kill -USR1 "$pid"
	wait "$pid"
	eval "RC_$1=\$?"
	sed "s/^/# $1: /" "$TMP/$1"
}

# progress NAME - a worker's pairs so far.
progress() {
	local n=0
	read -r n <"$TMP/$1.count" 2>/dev/null
	echo "${n:-0}"
}

declare -A START
# grown - every load worker has made PACE pairs since paced began.
grown() {
	local w
	for w in "${LOADS[@]}"; do
		[ "$(progress "$w")" -ge $((START[$w] + PACE)) ] || return 1
	done
}
# paced - wait until every load worker has made PACE more pairs.
paced() {
	local w
	for w in "${LOADS[@]}"; do
		START[$w]=$(progress "$w")
	done
	wait_until 120 grown
}

# crossings NAME - "C_TO_RUST RUST_TO_C" of a worker's output.
crossings() {
	local -a f
	read -r -a f < <(grep '^crossings: ' "$TMP/$1")
	# crossings: same N c_to_rust N rust_to_c N unknown N spanned N
	echo "${f[4]:-0} ${f[6]:-0}"
}

# spanned NAME - the worker's calls that a switch began or ended in.
spanned() {
	local -a f
	read -r -a f < <(grep '^crossings: ' "$TMP/$1")
	echo "${f[10]:-0}"
}

ktap_print_header
# rv0 before rxe0 on veth0 (rverbs refuses a netdev that soft-RoCE has).
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 && rdma link add rxe0 type rxe netdev veth0 ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 11

rxe_idx=$(gid_index rxe0 ::ffff:$IP4_A) && rv_idx=$(gid_index rv0 ::ffff:$IP4_A) ||
	ktap_exit_fail_msg "no IPv4 GID"
# Multicast destinations: no neighbour resolution, every create succeeds.
worker ah_rxe0 "$BIN/ah_probe" -d rxe0 -s "$rxe_idx" -g ::ffff:239.1.2.3 -L &&
	worker ah_rv0 "$BIN/ah_probe" -d rv0 -s "$rv_idx" -g ::ffff:239.1.2.4 -L &&
	worker xrcd_rv0 "$BIN/uverbs_hold" -L rv0 &&
	worker waits "$BIN/ah_probe" -d rv0 -s "$rv_idx" -g ::ffff:$SILENT4 -L -E 110 ||
	ktap_exit_fail_msg "the load did not start"

before=$(counters_all)
switched=0 unpaced=0
for ((i = 0; i < SWITCHES; i++)); do
	takeover_on || { ktap_print_msg "switch $i: takeover_on failed"; break; }
	paced || unpaced=$((unpaced + 1))
	takeover_off || { ktap_print_msg "switch $i: takeover_off failed"; break; }
	paced || unpaced=$((unpaced + 1))
	switched=$((switched + 1))
	if [ "$switched" = "$WAIT_SWITCHES" ]; then
		stop waits
		# What is left of the waits' neighbour does not slow the rest.
		ip neigh del $SILENT4 dev veth0 2>/dev/null
	fi
done
after=$(counters_all)
ksft_check "the takeover was switched on and off $SWITCHES times under load ($switched done)" \
	test "$switched" = "$SWITCHES"
ksft_check "every worker made $PACE pairs after each switch, before the next ($unpaced phases short)" \
	test "$unpaced" = 0

for name in "${LOADS[@]}"; do
	stop "$name"
done
PIDS=()
i=0 rc=
for name in "AHs on rxe0" "AHs on rv0" "XRC domains on rv0"; do
	eval "rc=\$RC_${LOADS[i]}"
	ksft_check "every create and destroy of the $name succeeded, whichever core was on" \
		test "$rc" = 0
	i=$((i + 1))
done

# crossed_both - each worker saw objects cross both ways, each way at
# least once per switch.
crossed_both() {
	local w c r bad=0
	for w in "${LOADS[@]}"; do
		read -r c r < <(crossings "$w")
		ktap_print_msg "$w: $c made under C and destroyed under Rust, $r the other way"
		[ "$c" -ge "$SWITCHES" ] && [ "$r" -ge "$SWITCHES" ] || bad=1
	done
	return $bad
}
ksft_check "objects made under one core were destroyed under the other, both ways, in every worker" \
	crossed_both
ksft_check "the creates waiting for a neighbour that never answers all ended in ETIMEDOUT ($WAIT_SWITCHES switches under them)" \
	test "${RC_waits:-1}" = 0
ktap_print_msg "waits: $(spanned waits) creates had a switch begin or end under them"
ksft_check "... and switches began or ended under some of them" test "$(spanned waits)" -ge 1

ah_c=$(($(counter_in "$after" ah_created) - $(counter_in "$before" ah_created)))
ah_d=$(($(counter_in "$after" ah_destroyed) - $(counter_in "$before" ah_destroyed)))
x_a=$(($(counter_in "$after" xrcd_allocated) - $(counter_in "$before" xrcd_allocated)))
x_d=$(($(counter_in "$after" xrcd_deallocated) - $(counter_in "$before" xrcd_deallocated)))
ktap_print_msg "the Rust core: $ah_c AHs created, $ah_d destroyed; $x_a XRCDs allocated, $x_d deallocated"
ksft_check "the Rust core's own counters moved: it created and destroyed AHs and XRC domains" \
	test "$ah_c" -gt 0 -a "$ah_d" -gt 0 -a "$x_a" -gt 0 -a "$x_d" -gt 0
ksft_check "nothing is live on rv0 at the end (no PD, AH or XRCD)" \
	bash -c "grep -qx 'pd 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'xrcd 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "the livepatch is off at the end" test ! -d /sys/kernel/livepatch/rverbs_takeover
ktap_finished
