#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UD traffic on rv0 through rdma-core's unmodified rxe provider:
# ibv_ud_pingpong with its server and its client on one device, to the
# device's own IPv4 RoCE v2 GID (delivered in the device, as soft-RoCE
# delivers a packet to its own address), message sizes 1, 16 (inline,
# the QP's max_inline_data), 17, 1000 and 1024 (the port's MTU), with
# completion events (-e) and without, then with ud_pingpong's own check of
# the received buffer (-c, one byte per page).  Every case runs on soft-RoCE (rxe0, on a
# veth pair of its own) first, as the reference, then on rv0; afterwards
# nothing is left on rv0 (debugfs resources).  ud_pingpong checks the
# completions (status, opcode, count), not the bytes; rv0_ud_ring.c, run on
# both devices, checks the bytes, the GRH, the completions field by field
# and the errors of bad work requests written straight into the rings (and
# on rv0 also random bytes in the send ring).

. "$(dirname "$0")/lib.sh"

ITERS=200
SIZES="1 16 17 1000 1024"
DEVS="rxe0 rv0"
FUZZ=3000
# The debug lane (KASAN, lockdep under TCG) keeps an odd size and the MTU,
# fewer exchanges and random WQEs, and rv0's runs only (soft-RoCE's are the
# C driver's reference, which the stock lane compares): the same code
# paths of rverbs, in the time CI has for it.
if [ "${RVERBS_LANE:-}" = debug ]; then
	ITERS=50 SIZES="17 1024" DEVS=rv0 FUZZ=1000
fi
DBG=/sys/kernel/debug/rverbs
RING=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/rv0_ud_ring
IP4_X=198.18.0.1
PORT=18600

cleanup() {
	rdma link del rv0 2>/dev/null
	rdma link del rxe0 2>/dev/null
	teardown
	ip link del vethx0 2>/dev/null
	rm -f /tmp/rv0_pingpong.*
	true
}
trap cleanup EXIT

# pingpong DEV GID SIZE [-e] - server and client of ibv_ud_pingpong on DEV;
# both must finish their ITERS exchanges.
pingpong() {
	local dev=$1 gid=$2 size=$3 ev=${4:-} srv rc i
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # $ev is empty or one flag
	timeout 60 ibv_ud_pingpong -d "$dev" -g "$gid" -s "$size" -n $ITERS -p $PORT $ev \
		>/tmp/rv0_pingpong.srv 2>&1 &
	srv=$!
	for ((i = 0; i < 50; i++)); do
		# shellcheck disable=SC2086
		timeout 60 ibv_ud_pingpong -d "$dev" -g "$gid" -s "$size" -n $ITERS -p $PORT \
			$ev 127.0.0.1 >/tmp/rv0_pingpong.cli 2>&1
		rc=$?
		grep -q "Couldn't connect" /tmp/rv0_pingpong.cli || break
		sleep 0.1
	done
	wait $srv || rc=1
	if [ "$rc" != 0 ] || ! grep -q "$ITERS iters" /tmp/rv0_pingpong.cli ||
		! grep -q "$ITERS iters" /tmp/rv0_pingpong.srv; then
		sed 's/^/# server: /' /tmp/rv0_pingpong.srv
		sed 's/^/# client: /' /tmp/rv0_pingpong.cli
		return 1
	fi
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	ip link add vethx0 type veth peer name vethx1 && ip link set vethx0 up &&
	ip link set vethx1 up && ip addr add $IP4_X/24 dev vethx0 &&
	rdma link add rxe0 type rxe netdev vethx0 &&
	rdma link add rv0 type rverbs netdev veth0 ||
	ktap_exit_fail_msg "setup failed"
n=0
for s in $SIZES; do n=$((n + 2)); done
read -ra devs <<<"$DEVS"
ktap_set_plan $((${#devs[@]} * n + ${#devs[@]} + 3))

gid_rxe=
gid_rv=
for ((i = 0; i < 100; i++)); do
	gid_rxe=$(gid_index rxe0 ::ffff:$IP4_X)
	gid_rv=$(gid_index rv0 ::ffff:$IP4_A)
	[ -n "$gid_rxe" ] && [ -n "$gid_rv" ] && break
	sleep 0.1
done
ksft_check "rxe0 and rv0 have their IPv4 RoCE v2 GIDs" test -n "$gid_rxe" -a -n "$gid_rv"

for dev in $DEVS; do
	gid=$gid_rxe
	[ $dev = rv0 ] && gid=$gid_rv
	for s in $SIZES; do
		ksft_check "$dev: ibv_ud_pingpong to itself, $s bytes, checking the buffer (-c)" \
			pingpong $dev "$gid" "$s" -c
		ksft_check "$dev: ibv_ud_pingpong to itself, $s bytes, with events (-e)" \
			pingpong $dev "$gid" "$s" -e
	done
done

# ring ENV... [-- ARGS...] - the rv0_ud_ring harness under ENV with ARGS;
# its totals, or all of its output when it fails or skips a case.
ring() {
	local out rc env=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	out=$(env "${env[@]}" "$RING" "$@" 2>&1)
	rc=$?
	if [ $rc != 0 ] || grep -q '# SKIP' <<<"$out"; then
		grep '^#\|^not ok\|^ok' <<<"$out" | sed 's/^/# ring: /'
		return 1
	fi
	grep '^# Totals:' <<<"$out" | sed 's/^/# ring: /'
}
# Not on soft-RoCE: the three cases of what rv0 refuses and soft-RoCE
# takes (inline data past the slot, random work requests, and a producer
# index with high bits set: rxe_req.c:req_next_wqe compares it unmasked with
# its own masked index, so it walks the whole ring and fails the QP with
# the slots' stale contents; Documentation/rv0.rst).
if [ "$DEVS" != rv0 ]; then
	ksft_check "rxe0: work requests written into the rings (rv0_ud_ring; not its three rv0-only cases)" \
		ring RV_DEV=rxe0 RV_GID="$gid_rxe" RV_IP=$IP4_X -- \
		-T inline_longer_than_max_inline -T random_bytes_in_the_send_ring \
		-T ring_headers_overwritten_are_not_trusted
fi
ksft_check "rv0: the same (errors with their status), strict inline bounds, $FUZZ random WQEs" \
	ring RV_DEV=rv0 RV_GID="$gid_rv" RV_IP=$IP4_A RV_EXPECT_STRICT_INLINE=1 \
		RV_EXPECT_ERROR_STATUS=1 RV_FUZZ=$FUZZ

ksft_check "rv0: nothing live afterwards" \
	bash -c "grep -qx 'qp 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'cq 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'mr 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "rdma link del rv0 and rmmod rverbs" \
	bash -c 'rdma link del rv0 && rmmod rverbs && [ ! -e /sys/module/rverbs ]'
ktap_finished
