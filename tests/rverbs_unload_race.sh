#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod rverbs racing with everything else that unregisters rv devices:
# ip link del of a device's netdev (rverbs' notifier queues the
# unregistration), rdma link del, and rmmod rdma_rxe (whose
# ib_unregister_driver takes every device of the driver id rv devices
# share). rmmod must return only once no rverbs code runs for any device:
# in a loop, every round must end with rverbs and rdma_rxe unloaded, no rv
# device left, nothing hung (each step is bounded) and a clean kernel log
# (checked here for netdev references left behind, and by the runner).

. "$(dirname "$0")/lib.sh"

# 20 rounds; 3 on the debug lane (KASAN, lockdep under TCG: a round takes
# ten times as long there).
ROUNDS=${ROUNDS:-20}
[ "${RVERBS_LANE:-}" = debug ] && ROUNDS=${ROUNDS_DEBUG:-2}

cleanup() {
	local i
	for i in a b c d; do
		ip link del veth_$i 2>/dev/null
	done
	rmmod rverbs 2>/dev/null
	modprobe -r rdma_rxe 2>/dev/null
	true
}
trap cleanup EXIT

# round N - one race; prints what went wrong, if anything.
round() {
	local i pids=() rc=0
	insmod "$RVERBS_KO" && modprobe rdma_rxe || { echo "round $1: cannot load"; return 1; }
	# One ip for the four pairs (batch mode stops at the first error).
	for i in a b c d; do
		printf '%s\n' "link add veth_$i type veth peer name veth_${i}p" \
			"link set veth_$i up" "link set veth_${i}p up"
	done | ip -batch - || { echo "round $1: no veth pairs"; return 1; }
	for i in a b c; do
		rdma link add rv_$i type rverbs netdev veth_$i || { echo "round $1: no rv_$i"; return 1; }
	done
	# On a lockdep kernel rdma_rxe refuses to unload while it has a device
	# (rxe_pins_itself in lib.sh): there the race has no soft-RoCE device,
	# and rmmod rdma_rxe races for the rv devices alone.
	if ! rxe_pins_itself; then
		rdma link add rxe_d type rxe netdev veth_d || { echo "round $1: no rxe_d"; return 1; }
	fi
	# rv_c is left to rmmod rverbs (or rmmod rdma_rxe, whichever is first).
	# Each must succeed, except rdma link del when the device was already
	# taken by one of the others ("Wrong device name").
	timeout 60 ip link del veth_a >/tmp/race.a 2>&1 & pids+=($!)
	timeout 60 rdma link del rv_b >/tmp/race.b 2>&1 & pids+=($!)
	timeout 60 modprobe -r rdma_rxe >/tmp/race.c 2>&1 & pids+=($!)
	timeout 60 rmmod rverbs >/tmp/race.d 2>&1 & pids+=($!)
	i=0
	for step in a b c d; do
		if ! wait "${pids[$i]}" &&
		   ! { [ $step = b ] && grep -q "Wrong device name" /tmp/race.b; }; then
			echo "round $1: step $step failed: $(cat /tmp/race.$step)"
			rc=1
		fi
		i=$((i + 1))
	done
	if [ -d /sys/module/rverbs ] || [ -d /sys/module/rdma_rxe ]; then
		echo "round $1: a module is still loaded"
		rc=1
	fi
	if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
		echo "round $1: devices left: $(ls /sys/class/infiniband)"
		rc=1
	fi
	for i in b c d; do
		timeout 60 ip link del veth_$i || { echo "round $1: veth_$i cannot go"; rc=1; }
	done
	return $rc
}

ktap_print_header
modprobe ib_uverbs || ktap_exit_fail_msg "cannot load ib_uverbs"
rxe_pins_itself && ktap_print_msg "lockdep kernel: rdma_rxe pins itself while it has devices; no rxe_d in the race"
ktap_set_plan 3

kmsg_mark
failed=0
for ((r = 1; r <= ROUNDS; r++)); do
	out=$(round $r 2>&1) || failed=$((failed + 1))
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
	cleanup
done
ktap_print_msg "$ROUNDS rounds, $failed failed"
ksft_check "$ROUNDS rounds of rmmod rverbs against ip link del, rdma link del and rmmod rdma_rxe" \
	test $failed = 0
ksft_check "no netdev was left waiting for a reference" \
	bash -c "! dmesg | sed -n '/$KMSG_MARK/,\$p' | grep -q 'unregister_netdevice: waiting for'"
ksft_check "rverbs loads again and makes a device" \
	bash -c "insmod '$RVERBS_KO' && ip link add veth_a type veth peer name veth_ap &&
		rdma link add rv_a type rverbs netdev veth_a && rdma link del rv_a && rmmod rverbs"

ktap_finished
