#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared receive queues on rv0 (rverbs loaded with rc=1; issue 29):
# rdma-core's unmodified ibv_srq_pingpong (16 RC QPs on one SRQ each end)
# with its buffer check (-c) and completion events (-e: no busy-polling
# pair, so that the test may run in a guest of one vCPU) between rv0
# (veth0) and a peer on veth1 in netns peer, first soft-RoCE (rxe1), then
# another rv device (rv1), both directions, IPv4 and IPv6 GIDs, 1 byte and
# 4 MTUs; and srq_cases.py case by case (creation errors and rounding,
# limits, resizes, RC, UC and UD QPs on SRQs, messages that do not fit,
# on SRQs and in QPs' own queues, the limit event, the last WQE event), once with the SRQ on rv0 and once with it
# on the peer: the same outcome each time (against rxe1: soft-RoCE's).

. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/rc_lib.sh
. "$(dirname "$0")/rc_lib.sh"

ITERS=100
if [ "${RVERBS_LANE:-}" = debug ]; then
	ITERS=20
fi
DBG=/sys/kernel/debug/rverbs
PORT=18900
SRQ=$(dirname "$0")/srq_cases.py
SRQ_CASES="create_errors create_rounding limit_errors resize_posted rc_two_qps ud ud_too_small
	uc_too_long rc_too_long uc_too_long_rq rc_too_long_rq limit_event last_wqe"
TMP=$(mktemp -d /tmp/rv0_srq.XXXXXX)

cleanup() {
	rdma link del rv0 2>/dev/null
	rdma link del rv1 2>/dev/null
	rdma link del rxe1 2>/dev/null
	ns_cleanup
	rmmod rverbs 2>/dev/null
	rm -rf "$TMP"
	true
}
trap cleanup EXIT

# srq_same CASE - srq_cases.py's CASE had the same outcome with the SRQ on
# rv0 as on the peer, and was right on the peer.
srq_same() {
	local a b
	a=$(grep "^# $1: " "$TMP/srq.rv0")
	b=$(grep "^# $1: " "$TMP/srq.peer")
	[ -n "$a" ] && [ "$a" = "$b" ] && grep -qx "# ok $1" "$TMP/srq.peer" && return 0
	echo "# rv0:  $a"
	echo "# peer: $b"
	return 1
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" rc=1 &&
	ns_setup && rdma link add rv0 type rverbs netdev veth0 &&
	ip netns exec $NS rdma link add rxe1 type rxe netdev veth1 ||
	ktap_exit_fail_msg "setup failed"
n_srq=0
for c in $SRQ_CASES; do n_srq=$((n_srq + 2)); done
ktap_set_plan $((2 * (3 + n_srq) + 4))

g4=$(wait_gid rv0 ::ffff:$IP4_A)
g6=$(wait_gid rv0 $IP6_A)
p4=$(wait_gid rxe1 ::ffff:$IP4_B)
p6=$(wait_gid rxe1 $IP6_B)
ksft_check "rv0 and rxe1 have their RoCE v2 GIDs" test -n "$g4" -a -n "$g6" -a -n "$p4" -a -n "$p6"

for peer in rxe1 rv1; do
	if [ $peer = rv1 ]; then
		ip netns exec $NS rdma link del rxe1 &&
			ip netns exec $NS rdma link add rv1 type rverbs netdev veth1
		p4=$(wait_gid rv1 ::ffff:$IP4_B)
		p6=$(wait_gid rv1 $IP6_B)
	fi
	ksft_check "rv0 -> $peer: ibv_srq_pingpong -c -e, 4096 bytes" \
		srq_pingpong $NS $peer "$p4" rv0 "$g4" $IP4_B 4096 $ITERS -c -e
	ksft_check "$peer -> rv0: ibv_srq_pingpong -c -e, 4096 bytes" \
		srq_pingpong - rv0 "$g4" $peer "$p4" $IP4_A 4096 $ITERS -c -e
	ksft_check "rv0 -> $peer: ibv_srq_pingpong -c -e, IPv6, 1 byte" \
		srq_pingpong $NS $peer "$p6" rv0 "$g6" $IP4_B 1 $ITERS -c -e
	script "$SRQ" rv0 "$g4" $peer "$p4" >"$TMP/srq.rv0"
	script "$SRQ" $peer "$p4" rv0 "$g4" >"$TMP/srq.peer"
	cat "$TMP/srq.rv0"
	for c in $SRQ_CASES; do
		ksft_check "SRQ on rv0, $peer sending: $c (srq_cases.py)" \
			grep -qx "# ok $c" "$TMP/srq.rv0"
		ksft_check "SRQ on $peer, rv0 sending: $c, as on rv0 (srq_cases.py)" srq_same $c
	done
done

ksft_check "rv0: no SRQ, QP, CQ or MR live afterwards" \
	bash -c "grep -qx 'srq 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'qp 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'cq 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'mr 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "rv0 dropped no packet as malformed (drop_header, _udp_checksum, _opcode, _length, _icrc)" \
	bash -c "! awk '\$1 ~ /^drop_(header|udp_checksum|opcode|length|icrc)\$/ && \$2 != 0' $DBG/rv0/wire | grep -q ."
ksft_check "rdma link del rv0 rv1 and rmmod rverbs" \
	bash -c "rdma link del rv0 && ip netns exec $NS rdma link del rv1 && rmmod rverbs && [ ! -e /sys/module/rverbs ]"
ktap_finished
