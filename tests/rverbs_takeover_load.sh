#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The takeover switched under load: four processes create and destroy
# objects without pause, up to 8 live each at any time (AHs on rxe0 and on
# rv0 through rdma-core to multicast destinations, AHs on rxe0 to the peer,
# whose neighbour entry is flushed before every switch so that the next
# create waits for ARP while the livepatch changes, and XRC domains on rv0
# through raw uverbs), while the livepatch is switched on and off SWITCHES
# times (50; 10 on the debug lane).  Each phase lasts until every process
# has done PACE more create+destroy pairs (load_progress.h), not a fixed
# time.  Every create and destroy must succeed, whichever core is on.
#
# Objects cross between the cores, both ways, and that is shown, not
# assumed: two whole phases of the Rust core are traced (rverbs'
# tracepoints, from before a switch on to after the next switch off), and
# in the trace AHs and XRC domains that the C core made are destroyed by
# the Rust core (destroys of objects the trace never saw made) and some the
# Rust core made are destroyed by the C core (made, and never destroyed in
# Rust); creates of the peer's AHs waited for ARP under the Rust core.  At
# the end nothing is live on rv0 and the livepatch is off.

. "$(dirname "$0")/lib.sh"

BIN=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}
SWITCHES=${SWITCHES:-50}
[ "${RVERBS_LANE:-}" = debug ] && SWITCHES=${SWITCHES_DEBUG:-10}
# Pairs per process and phase: twice what each keeps live, so that every
# object live at a switch is gone before the next one.
PACE=16
# The Rust phases traced whole: the second and the third.
TRACED="1 2"
DBG=/sys/kernel/debug/rverbs
T=/sys/kernel/tracing
TMP=$(mktemp -d)
PIDS=()
NAMES=(ah_rxe0 ah_rv0 ah_rxe0_arp xrcd_rv0)

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -USR1 "$p" 2>/dev/null
	done
	wait
	trace_stop
	rdma link del rxe0 2>/dev/null
	rdma link del rv0 2>/dev/null
	rm -rf "$TMP"
	teardown
}
trap cleanup EXIT

# worker NAME CMD... - start a load process; its output in $TMP/NAME, its
# pairs done so far in $TMP/NAME.progress.
worker() {
	local name=$1
	shift
	RVERBS_PROGRESS=$TMP/$name.progress "$@" >"$TMP/$name" 2>&1 &
	PIDS+=($!)
	wait_until 10 grep -qx started "$TMP/$name"
}

# pairs NAME - the pairs NAME has done so far.
pairs() {
	local n=0
	read -r n <"$TMP/$1.progress" 2>/dev/null
	echo "${n:-0}"
}

# MARK[NAME]: each process's pairs when the phase began; paced: every one
# has done PACE more since.
declare -A MARK
mark() {
	local name
	for name in "${NAMES[@]}"; do
		MARK[$name]=$(pairs "$name")
	done
}
paced() {
	local name
	for name in "${NAMES[@]}"; do
		[ "$(pairs "$name")" -ge $((MARK[$name] + PACE)) ] || return 1
	done
}

# trace_start / trace_stop - rverbs' events into a ring buffer large enough
# for a phase (16 MiB a CPU), and no more of them.
trace_start() {
	[ -e $T/trace ] || mount -t tracefs tracefs $T || return 1
	echo 0 >$T/tracing_on
	echo 16384 >$T/buffer_size_kb && : >$T/trace &&
		echo 1 >$T/events/rverbs/enable && echo 1 >$T/tracing_on
}
trace_stop() {
	[ -e $T/events/rverbs/enable ] || return 0
	echo 0 >$T/events/rverbs/enable
}
# crossings - from the trace: "KIND C_MADE_RUST_DESTROYED RUST_MADE_C_DESTROYED
# SAME_CORE" for ah and xrcd, and "neigh_wait N". An object the Rust core
# destroys that the trace never saw it make was made by the C core (the
# trace starts while the C core is on, after a phase in which every object
# of the phase before went); one it made and did not destroy (made again at
# the same address, or still there when the trace ends, after a C phase
# that turned every object over) was destroyed by the C core.
crossings() {
	awk '
		function made(k, id) {
			if ((k SUBSEP id) in rust) by_c[k]++
			rust[k SUBSEP id] = 1
		}
		function gone(k, id) {
			if ((k SUBSEP id) in rust) { delete rust[k SUBSEP id]; same[k]++ }
			else by_rust[k]++
		}
		/^# end of a traced phase/ {
			for (x in rust) { split(x, p, SUBSEP); by_c[p[1]]++; delete rust[x] }
			next
		}
		match($0, /rverbs_[a-z_]+: /) {
			ev = substr($0, RSTART, RLENGTH - 2)
			n = split(substr($0, RSTART + RLENGTH), kv, " ")
			delete f
			for (i = 1; i <= n; i++)
				if ((j = index(kv[i], "=")) > 0) f[substr(kv[i], 1, j - 1)] = substr(kv[i], j + 1)
			if (ev == "rverbs_resolve") { if (f["path"] == "neigh_wait") waited++; next }
			if (f["ret"] != "0") next
			if (ev == "rverbs_create_ah") made("ah", f["ah"])
			else if (ev == "rverbs_destroy_ah") gone("ah", f["ah"])
			else if (ev == "rverbs_alloc_xrcd") made("xrcd", f["xrcd"])
			else if (ev == "rverbs_dealloc_xrcd") gone("xrcd", f["xrcd"])
		}
		END {
			printf "ah %d %d %d\nxrcd %d %d %d\nneigh_wait %d\n", by_rust["ah"], by_c["ah"], same["ah"],
				by_rust["xrcd"], by_c["xrcd"], same["xrcd"], waited
		}
	' "$TMP/trace"
}

ktap_print_header
# rv0 before rxe0 on veth0 (rverbs refuses a netdev that soft-RoCE has).
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 && rdma link add rxe0 type rxe netdev veth0 ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 11

rxe_idx=$(gid_index rxe0 ::ffff:$IP4_A) && rv_idx=$(gid_index rv0 ::ffff:$IP4_A) ||
	ktap_exit_fail_msg "no IPv4 GID"
ping -c 1 -W 2 $IP4_B >/dev/null
worker ah_rxe0 "$BIN/ah_probe" -d rxe0 -s "$rxe_idx" -g ::ffff:239.1.2.3 -L &&
	worker ah_rv0 "$BIN/ah_probe" -d rv0 -s "$rv_idx" -g ::ffff:239.1.2.4 -L &&
	worker ah_rxe0_arp "$BIN/ah_probe" -d rxe0 -s "$rxe_idx" -g ::ffff:$IP4_B -L &&
	worker xrcd_rv0 "$BIN/uverbs_hold" -L rv0 ||
	ktap_exit_fail_msg "the load did not start"

# switch_to on|off - flush the peer's neighbour (the next create of its AHs
# waits for ARP), switch, then let every process do PACE pairs.
switch_to() {
	ip neigh flush dev veth0
	mark
	if [ "$1" = on ]; then takeover_on; else takeover_off; fi || return 1
	wait_until 120 paced
}

before=$(counters_all)
switched=0 paced_ok=1 traced_ok=1
: >"$TMP/trace"
for ((i = 0; i < SWITCHES; i++)); do
	if [[ " $TRACED " == *" $i "* ]]; then
		trace_start || traced_ok=0
	fi
	switch_to on || { ktap_print_msg "switch $i: on failed (or no progress)"; paced_ok=0; break; }
	switch_to off || { ktap_print_msg "switch $i: off failed (or no progress)"; paced_ok=0; break; }
	if [[ " $TRACED " == *" $i "* ]]; then
		trace_stop
		# The buffer holds every event written, or events were lost.
		lost=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\) .*/\1 \2/p' $T/trace)
		[ -n "$lost" ] && [ "${lost% *}" = "${lost#* }" ] ||
			{ ktap_print_msg "switch $i: the trace lost events ($lost)"; traced_ok=0; }
		grep 'rverbs_' $T/trace >>"$TMP/trace"
		echo "# end of a traced phase" >>"$TMP/trace"
		: >$T/trace
		echo 1408 >$T/buffer_size_kb
	fi
	switched=$((switched + 1))
done
after=$(counters_all)
ksft_check "the takeover was switched on and off $SWITCHES times under load ($switched done)" \
	test "$switched" = "$SWITCHES"
ksft_check "... every phase lasted until each process had done $PACE more pairs" test "$paced_ok" = 1

rc=()
for p in "${PIDS[@]}"; do
	kill -USR1 "$p"
	wait "$p"
	rc+=($?)
done
PIDS=()
for name in "${NAMES[@]}"; do
	sed "s/^/# $name: /" "$TMP/$name"
done
i=0
for name in "AHs on rxe0" "AHs on rv0" "AHs on rxe0 that wait for ARP" "XRC domains on rv0"; do
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

# "ah BY_RUST BY_C SAME", "xrcd ...", "neigh_wait N"
read -r _ ah_by_rust ah_by_c ah_same _ x_by_rust x_by_c x_same _ waited < <(crossings | tr '\n' ' ')
ktap_print_msg "traced Rust phases: AHs made by C destroyed by Rust $ah_by_rust, made by Rust destroyed by C $ah_by_c, both by Rust $ah_same; XRCDs $x_by_rust, $x_by_c, $x_same; creates that waited for ARP $waited"
ksft_check "objects cross the cores both ways: AHs and XRC domains made by one core were destroyed by the other" \
	test "$traced_ok" = 1 -a "${ah_by_rust:-0}" -gt 0 -a "${ah_by_c:-0}" -gt 0 \
	-a "${x_by_rust:-0}" -gt 0 -a "${x_by_c:-0}" -gt 0
ksft_check "creates of the peer's AHs waited for ARP under the Rust core, and succeeded" \
	test "${waited:-0}" -gt 0 -a "${rc[2]}" = 0
ksft_check "nothing is live on rv0 at the end (no PD, AH or XRCD)" \
	bash -c "grep -qx 'pd 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'xrcd 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "the livepatch is off at the end" test ! -d /sys/kernel/livepatch/rverbs_takeover
ktap_finished
