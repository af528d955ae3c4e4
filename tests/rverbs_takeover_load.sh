#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The takeover switched under load: three processes create and destroy
# objects without pause, up to 8 live each at any time (AHs on rxe0 and on
# rv0 through rdma-core, XRC domains on rv0 through raw uverbs), while the
# livepatch is switched on and off SWITCHES times (50; 10 on the debug
# lane).  An object made under one core is often destroyed under the
# other.  Every create and destroy must succeed, whichever core is on; both
# cores must have taken part (the Rust core's counters moved, and it both
# created and destroyed); at the end nothing is live on rv0 and the
# livepatch is off.

. "$(dirname "$0")/lib.sh"

BIN=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}
SWITCHES=${SWITCHES:-50}
[ "${RVERBS_LANE:-}" = debug ] && SWITCHES=${SWITCHES_DEBUG:-10}
DBG=/sys/kernel/debug/rverbs
TMP=$(mktemp -d)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -USR1 "$p" 2>/dev/null
	done
	wait
	rdma link del rxe0 2>/dev/null
	rdma link del rv0 2>/dev/null
	rm -rf "$TMP"
	teardown
}
trap cleanup EXIT

# worker NAME CMD... - start a load process; its output in $TMP/NAME.
worker() {
	local name=$1
	shift
	"$@" >"$TMP/$name" 2>&1 &
	PIDS+=($!)
	wait_until 10 grep -qx started "$TMP/$name"
}

ktap_print_header
# rv0 before rxe0 on veth0 (rverbs refuses a netdev that soft-RoCE has).
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 && rdma link add rxe0 type rxe netdev veth0 ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 7

rxe_idx=$(gid_index rxe0 ::ffff:$IP4_A) && rv_idx=$(gid_index rv0 ::ffff:$IP4_A) ||
	ktap_exit_fail_msg "no IPv4 GID"
# Multicast destinations: no neighbour resolution, every create succeeds.
worker ah_rxe0 "$BIN/ah_probe" -d rxe0 -s "$rxe_idx" -g ::ffff:239.1.2.3 -L &&
	worker ah_rv0 "$BIN/ah_probe" -d rv0 -s "$rv_idx" -g ::ffff:239.1.2.4 -L &&
	worker xrcd_rv0 "$BIN/uverbs_hold" -L rv0 ||
	ktap_exit_fail_msg "the load did not start"

before=$(counters_all)
switched=0
for ((i = 0; i < SWITCHES; i++)); do
	takeover_on || { ktap_print_msg "switch $i: takeover_on failed"; break; }
	nap 0.2
	takeover_off || { ktap_print_msg "switch $i: takeover_off failed"; break; }
	nap 0.2
	switched=$((switched + 1))
done
after=$(counters_all)
ksft_check "the takeover was switched on and off $SWITCHES times under load ($switched done)" \
	test "$switched" = "$SWITCHES"

rc=()
for p in "${PIDS[@]}"; do
	kill -USR1 "$p"
	wait "$p"
	rc+=($?)
done
PIDS=()
for name in ah_rxe0 ah_rv0 xrcd_rv0; do
	sed "s/^/# $name: /" "$TMP/$name"
done
i=0
for name in "AHs on rxe0" "AHs on rv0" "XRC domains on rv0"; do
	ksft_check "every create and destroy of the $name succeeded, whichever core was on" \
		test "${rc[i]}" = 0
	i=$((i + 1))
done

ah_c=$(($(counter_in "$after" ah_created) - $(counter_in "$before" ah_created)))
ah_d=$(($(counter_in "$after" ah_destroyed) - $(counter_in "$before" ah_destroyed)))
x_a=$(($(counter_in "$after" xrcd_allocated) - $(counter_in "$before" xrcd_allocated)))
x_d=$(($(counter_in "$after" xrcd_deallocated) - $(counter_in "$before" xrcd_deallocated)))
ktap_print_msg "the Rust core: $ah_c AHs created, $ah_d destroyed; $x_a XRCDs allocated, $x_d deallocated"
ksft_check "the Rust core took part: it created and destroyed AHs and XRC domains" \
	test "$ah_c" -gt 0 -a "$ah_d" -gt 0 -a "$x_a" -gt 0 -a "$x_d" -gt 0
ksft_check "nothing is live on rv0 at the end (no PD, AH or XRCD)" \
	bash -c "grep -qx 'pd 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'xrcd 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "the livepatch is off at the end" test ! -d /sys/kernel/livepatch/rverbs_takeover
ktap_finished
