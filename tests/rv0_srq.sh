#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared receive queues and memory windows on rv0 (rverbs loaded with
# rc=1; issue 29):
# rdma-core's unmodified ibv_srq_pingpong (16 RC QPs on one SRQ each end)
# with its buffer check (-c) and completion events (-e: no busy-polling
# pair, so that the test may run in a guest of one vCPU) between rv0
# (veth0) and a peer on veth1 in netns peer, first soft-RoCE (rxe1), then
# another rv device (rv1), both directions, IPv4 and IPv6 GIDs, 1 byte and
# 4 MTUs; and srq_cases.py case by case (creation errors and rounding,
# limits, resizes, RC, UC and UD QPs on SRQs, messages that do not fit,
# on SRQs and in QPs' own queues, the limit event, the last WQE event),
# once with the SRQ on rv0 and once with it on the peer: the same outcome
# each time (against rxe1: soft-RoCE's); and mw_cases.py likewise, with the
# windows on rv0 and on the peer (binds of type 1 and 2 and their errors,
# accesses through windows, local and remote invalidation, deregistering a
# bound region), and where rv0 is stricter than soft-RoCE, on rv devices;
# and rereg_cases.py likewise, with the region on rv0 and on the peer:
# ibv_rereg_mr of its access or PD while RDMA WRITEs stream into it.

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
MW=$(dirname "$0")/mw_cases.py
MW_CASES="alloc_type3 type1 type1_unbind type2 type2_rebind type2_local_inv type2_send_inv
	type2_dealloc bind_no_mw_access bind_write_no_local bind_past_region dereg_bound
	local_inv_type1 local_inv_mr send_inv_mr fences"
MW_RV_CASES="window_range"
REREG=$(dirname "$0")/rereg_cases.py
REREG_CASES="access pd"
TMP=$(mktemp -d /tmp/rv0_srq.XXXXXX)

trap rc_cleanup EXIT


ktap_print_header
rc_setup
n_srq=0
for c in $SRQ_CASES $MW_CASES $REREG_CASES; do n_srq=$((n_srq + 2)); done
n_rv=0
for c in $MW_RV_CASES; do n_rv=$((n_rv + 1)); done
# Per peer: 3 pingpongs, the shared cases twice, the rv cases on rv0 (and
# on rv1); then 4 checks.
ktap_set_plan $((2 * (3 + n_srq + n_rv) + n_rv + 4))

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
		ksft_check "SRQ on $peer, rv0 sending: $c, as on rv0 (srq_cases.py)" same_line "$TMP/srq.rv0" "$TMP/srq.peer" $c
	done
	script "$MW" rv0 "$g4" $peer "$p4" >"$TMP/mw.rv0"
	script "$MW" $peer "$p4" rv0 "$g4" >"$TMP/mw.peer"
	cat "$TMP/mw.rv0"
	for c in $MW_CASES; do
		ksft_check "windows on rv0, $peer accessing: $c (mw_cases.py)" \
			grep -qx "# ok $c" "$TMP/mw.rv0"
		ksft_check "windows on $peer, rv0 accessing: $c, as on rv0 (mw_cases.py)" same_line "$TMP/mw.rv0" "$TMP/mw.peer" $c
	done
	script "$REREG" all rv0 "$g4" $peer "$p4" >"$TMP/rereg.rv0"
	script "$REREG" all $peer "$p4" rv0 "$g4" >"$TMP/rereg.peer"
	cat "$TMP/rereg.rv0"
	for c in $REREG_CASES; do
		ksft_check "rereg_mr on rv0 under $peer's RDMA WRITEs: $c (rereg_cases.py)" \
			grep -qx "# ok $c" "$TMP/rereg.rv0"
		ksft_check "rereg_mr on $peer under rv0's RDMA WRITEs: $c, as on rv0 (rereg_cases.py)" \
			same_line "$TMP/rereg.rv0" "$TMP/rereg.peer" $c
	done
	script "$MW" rv0 "$g4" $peer "$p4" $MW_RV_CASES >"$TMP/mw.rv"
	[ $peer = rv1 ] && script "$MW" $peer "$p4" rv0 "$g4" $MW_RV_CASES >>"$TMP/mw.rv"
	cat "$TMP/mw.rv"
	for c in $MW_RV_CASES; do
		ksft_check "windows on rv0, $peer accessing: $c, stricter than soft-RoCE (mw_cases.py)" \
			grep -qx "# ok $c" "$TMP/mw.rv"
		[ $peer = rv1 ] && ksft_check "windows on rv1, rv0 accessing: $c (mw_cases.py)" \
			test "$(grep -cx "# ok $c" "$TMP/mw.rv")" = 2
	done
done

ksft_check "rv0: no SRQ, MW, QP, CQ or MR live afterwards" \
	bash -c "for o in srq mw qp cq mr; do grep -qx \"\$o 0 max [0-9]*\" $DBG/rv0/resources || exit 1; done"
ksft_check "rv0 dropped no packet as malformed (drop_header, _udp_checksum, _opcode, _length, _icrc)" \
	bash -c "! awk '\$1 ~ /^drop_(header|udp_checksum|opcode|length|icrc)\$/ && \$2 != 0' $DBG/rv0/wire | grep -q ."
ksft_check "rdma link del rv0 rv1 and rmmod rverbs" \
	bash -c "rdma link del rv0 && ip netns exec $NS rdma link del rv1 && rmmod rverbs && [ ! -e /sys/module/rverbs ]"
ktap_finished
