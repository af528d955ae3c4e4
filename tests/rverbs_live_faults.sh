#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults with live objects, under each core: while a process holds an AH
# (created through rdma-core) and another a PD and an XRC domain (raw
# uverbs; a PD only on soft-RoCE, which has no XRC) on rxe0 or rv0, the
# device is taken away: "rdma link del", "ip link del" of its netdev,
# "rmmod rdma_rxe" (which takes rv devices too: they share its driver id).
# Then the holders let go.  rv0 disassociates its contexts (the device goes
# at once, ib_uverbs destroys the objects, the holders' own destroys fail);
# soft-RoCE cannot, so its unregistration waits for the holders to close.
#
# Each run, C core then Rust core: the device goes, the step ends, the
# holders end normally, nothing is left (the Rust core's counters balance,
# no device, no netdev).  With the Rust core its counters must show it
# created the objects (proof it ran); with C none of them may move.  The
# holders' results and the order of events must be the same with both
# cores.  Last, a netdev removed while a create waits for ARP: the same
# result with both cores, and nothing left.

. "$(dirname "$0")/lib.sh"

BIN=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}
PROBE=$BIN/ah_probe
HOLD=$BIN/uverbs_hold
TMP=$(mktemp -d)

cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	takeover_off 2>/dev/null
	rdma link del rv0 2>/dev/null
	rdma link del rxe0 2>/dev/null
	ip link del vethf0 2>/dev/null
	rm -rf "$TMP"
	teardown
}
trap cleanup EXIT

# net_up - a fresh veth pair for the device under test.
net_up() {
	ip link del vethf0 2>/dev/null
	printf '%s\n' "link add vethf0 type veth peer name vethf1" \
		"addr add 198.18.2.1/24 dev vethf0" "link set vethf0 up" "link set vethf1 up" |
		ip -batch -
}

# dev_up DEV - DEV (rxe0 or rv0) on vethf0, its IPv4 GID in place, and
# rdma-core can open it (the first case of a fresh boot found the GID there
# and libibverbs not yet able to open the device).
dev_up() {
	local type=rxe
	[ "$1" = rv0 ] && type=rverbs
	modprobe rdma_rxe && net_up && rdma link add "$1" type $type netdev vethf0 &&
		wait_until 10 gid_index "$1" ::ffff:198.18.2.1 >/dev/null &&
		wait_until 30 eval "ibv_devinfo -d $1 >/dev/null 2>&1"
}

gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

wait_line() {
	wait_until 10 has_line "$1" "$2"
}

# start_holders DEV - the AH holder on fd 3, the PD (and XRCD) holder on fd 4.
start_holders() {
	local dev=$1 idx xrcd=
	idx=$(gid_index "$dev" ::ffff:198.18.2.1) || return 1
	rm -f "$TMP"/h3.* "$TMP"/h4.*
	mkfifo "$TMP/h3.in" "$TMP/h4.in" || return 1
	"$PROBE" -d "$dev" -s "$idx" -g ::ffff:239.1.1.1 -H <"$TMP/h3.in" >"$TMP/h3.out" 2>&1 3>&- 4>&- &
	H3=$!
	exec 3>"$TMP/h3.in"
	[ "$dev" = rxe0 ] && xrcd=-n
	"$HOLD" $xrcd "$dev" <"$TMP/h4.in" >"$TMP/h4.out" 2>&1 3>&- 4>&- &
	H4=$!
	exec 4>"$TMP/h4.in"
	wait_line "$TMP/h3.out" created && wait_line "$TMP/h4.out" created
}

# one MODE DEV EVENT - take DEV away with EVENT while its objects are held;
# one KTAP case; the outcome, for the comparison of the cores, in
# $TMP/MODE.DEV.EVENT.
one() {
	local mode=$1 dev=$2 event=$3 desc ok=1 before after ev evrc rc3 rc4 order=after i l
	local out=$TMP/$mode.$dev.$event
	desc="$dev, $event with an AH, a PD${4:+ and an XRCD} held [$mode]"
	dev_up "$dev" || { ktap_test_fail "$desc: setup"; return; }
	before=$(counters_all)
	start_holders "$dev" || { ok=0; ktap_print_msg "$desc: the holders did not start"; }
	# Not with the holders' stdin (fds 3 and 4) open: soft-RoCE's
	# unregistration waits for them, and they wait for their EOF.
	case $event in
	"rdma link del") rdma link del "$dev" 3>&- 4>&- >"$TMP/ev.out" 2>&1 & ;;
	"ip link del") ip link del vethf0 3>&- 4>&- >"$TMP/ev.out" 2>&1 & ;;
	"rmmod rdma_rxe") modprobe -r rdma_rxe 3>&- 4>&- >"$TMP/ev.out" 2>&1 & ;;
	esac
	ev=$!
	# rv0 goes at once (it disassociates its contexts); soft-RoCE waits
	# for its contexts to be closed, and holds the netdev meanwhile: the
	# holders let go after 1 s, so that the netdev's unregistration ends
	# well before the kernel's 10 s "waiting for ... to become free"
	# warning even on the debug kernel, whose teardown is slow.
	for ((i = 0; i < 10; i++)); do
		gone "$dev" && { order=before; break; }
		sleep 0.1
	done
	exec 3>&- 4>&-
	wait $H3
	rc3=$?
	wait $H4
	rc4=$?
	if ! timeout 30 tail --pid=$ev -f /dev/null; then
		ok=0
		ktap_print_msg "$desc: '$event' did not end"
		kill $ev 2>/dev/null
	fi
	wait $ev
	evrc=$?
	if [ "$dev/$event" = "rxe0/rmmod rdma_rxe" ]; then
		# Soft-RoCE cannot disassociate a context: each open uverbs
		# file pins its module (ib_uverbs_open), so the unload is
		# refused while the holders run; once they are gone it works.
		if [ $evrc = 0 ] || ! grep -q "in use" "$TMP/ev.out"; then
			ok=0
			ktap_print_msg "$desc: not refused while rxe0 was open (exit $evrc: $(cat "$TMP/ev.out"))"
		fi
		echo "refused while held" >"$TMP/ev.note"
		modprobe -r rdma_rxe || { ok=0; ktap_print_msg "$desc: rmmod rdma_rxe fails after the holders"; }
	else
		[ $evrc = 0 ] || { ok=0; ktap_print_msg "$desc: '$event' failed: $(cat "$TMP/ev.out")"; }
		: >"$TMP/ev.note"
	fi
	wait_until 30 gone "$dev" || { ok=0; ktap_print_msg "$desc: $dev is still there"; }
	if [ $rc3 != 0 ] || [ $rc4 != 0 ]; then
		ok=0
		ktap_print_msg "$desc: the holders exited $rc3 and $rc4"
	fi
	after=$(counters_all)
	# What the cores must agree on (not how long the create took).
	{
		echo "gone $order the holders let go"
		prefixed "" "$TMP/ev.note"
		while IFS= read -r l; do
			[[ $l == elapsed_ms:* ]] || echo "ah holder: $l"
		done <"$TMP/h3.out"
		prefixed "pd holder: " "$TMP/h4.out"
	} >"$out"
	prefixed "# " "$out"
	if [ "$(($(counter_in "$after" ah_created) - $(counter_in "$after" ah_destroyed)))" != 0 ] ||
		[ "$(($(counter_in "$after" xrcd_allocated) - $(counter_in "$after" xrcd_deallocated)))" != 0 ]; then
		ok=0
		ktap_print_msg "$desc: the Rust core's counters do not balance"
	fi
	if [ "$mode" = C ] && [ "$before" != "$after" ]; then
		ok=0
		ktap_print_msg "$desc: the Rust core's counters moved with the C core"
	fi
	if [ "$mode" = Rust ] &&
		{ [ $(($(counter_in "$after" ah_created) - $(counter_in "$before" ah_created))) != 1 ] ||
			{ [ -n "${4:-}" ] &&
				[ $(($(counter_in "$after" xrcd_allocated) - $(counter_in "$before" xrcd_allocated))) != 1 ]; }; }; then
		ok=0
		ktap_print_msg "$desc: the Rust core did not create the objects"
	fi
	ip link del vethf0 2>/dev/null
	if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
}

# arp_race MODE - a create that waits for ARP (no answer) while its netdev
# is removed; the result in $TMP/MODE.arp.
arp_race() {
	local mode=$1 idx before after ok=1 desc
	desc="rxe0, ip link del of the netdev while a create waits for ARP [$mode]"
	dev_up rxe0 || { ktap_test_fail "$desc: setup"; return; }
	idx=$(gid_index rxe0 ::ffff:198.18.2.1)
	before=$(counters_all)
	"$PROBE" -d rxe0 -s "$idx" -g ::ffff:198.18.2.99 >"$TMP/$mode.arp.out" 2>&1 &
	local pid=$!
	# Once the create is waiting: its ARP request made the neighbour
	# entry (INCOMPLETE).  Under the debug kernel the process takes more
	# than a second to get there.
	wait_until 20 eval 'ip neigh show 198.18.2.99 dev vethf0 | grep -q INCOMPLETE' ||
		{ ok=0; ktap_print_msg "$desc: no ARP request seen before the netdev went"; }
	ip link del vethf0
	timeout 30 tail --pid=$pid -f /dev/null ||
		{ ok=0; ktap_print_msg "$desc: the create did not end"; kill $pid 2>/dev/null; }
	wait $pid
	after=$(counters_all)
	grep '^create\|^destroy' "$TMP/$mode.arp.out" >"$TMP/$mode.arp"
	sed 's/^/# /' "$TMP/$mode.arp"
	wait_until 10 gone rxe0 || { ok=0; ktap_print_msg "$desc: rxe0 is still there"; }
	[ -s "$TMP/$mode.arp" ] || ok=0
	if [ "$mode" = C ] && [ "$before" != "$after" ]; then
		ok=0
		ktap_print_msg "$desc: the Rust core's counters moved with the C core"
	fi
	if [ "$mode" = Rust ] && [ "$before" = "$after" ]; then
		ok=0
		ktap_print_msg "$desc: no counter of the Rust core moved"
	fi
	if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" ||
	ktap_exit_fail_msg "setup failed"

RUNS=(
	"rxe0|rdma link del|"
	"rxe0|ip link del|"
	"rxe0|rmmod rdma_rxe|"
	"rv0|rdma link del|xrcd"
	"rv0|ip link del|xrcd"
	"rv0|rmmod rdma_rxe|xrcd"
)
# On a lockdep kernel rdma_rxe refuses to unload while it has a device
# (rxe_pins_itself in lib.sh): no "rmmod rdma_rxe" under rxe0 there.
if rxe_pins_itself; then
	ktap_print_msg "lockdep kernel: rdma_rxe pins itself while it has devices; no rmmod rdma_rxe with rxe0"
	RUNS=("${RUNS[@]:0:2}" "${RUNS[@]:3}")
fi
# The debug lane keeps soft-RoCE's "rdma link del" (the Rust core's AHs on
# a C driver) and every rv0 run (rverbs' own teardown), under the Rust
# core only: the C core's runs, the reference that the comparisons need,
# are ib_core's own code, and the stock lane compares.  Its time in CI.
MODES=(C Rust)
if [ "${RVERBS_LANE:-}" = debug ]; then
	ktap_print_msg "debug lane: soft-RoCE's ip link del, the C core's runs and the comparisons are left to the stock lane"
	RUNS=("${RUNS[0]}" "${RUNS[@]:2}")
	MODES=(Rust)
fi
if [ ${#MODES[@]} = 2 ]; then
	ktap_set_plan $((${#RUNS[@]} * 3 + 3))
else
	ktap_set_plan $((${#RUNS[@]} + 2))
fi

for mode in "${MODES[@]}"; do
	if [ $mode = Rust ]; then
		takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
	fi
	for r in "${RUNS[@]}"; do
		IFS='|' read -r dev event xrcd <<<"$r"
		one $mode "$dev" "$event" $xrcd
	done
	arp_race $mode
	if [ $mode = Rust ]; then
		takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
	fi
done

# The C core's own result depends on when its request is looked at again
# (addr.c's process_one_req: on a valid neighbour's update, or at the
# timeout), that is on how far the netdev's removal has gone: ENETUNREACH
# (no route), ENODEV (the GID has no netdev), EINVAL (the GID entry is
# gone) or ETIMEDOUT.  The Rust core looks again every 100 ms: its result
# must be one that C can give too.
arp_ok() {
	grep -qxE 'create: -(101|19|22|110)' "$TMP/$1.arp"
}
if [ ${#MODES[@]} = 1 ]; then
	ksft_check "the create waiting for ARP when its netdev goes fails with an errno C can give: $(tr '\n' ' ' <"$TMP/Rust.arp" 2>/dev/null)" \
		arp_ok Rust
	ktap_finished
	exit
fi
for r in "${RUNS[@]}"; do
	IFS='|' read -r dev event _ <<<"$r"
	ksft_check "$dev, $event: the same with both cores" \
		diff -u "$TMP/C.$dev.$event" "$TMP/Rust.$dev.$event"
done
arp_both() {
	arp_ok C && arp_ok Rust
}
ksft_check "the create waiting for ARP when its netdev goes fails with an errno C gives: C $(cat "$TMP/C.arp" 2>/dev/null | tr '\n' ' '), Rust $(cat "$TMP/Rust.arp" 2>/dev/null | tr '\n' ' ')" \
	arp_both
ktap_finished
