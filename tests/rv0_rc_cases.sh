#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected QPs on rv0 (rverbs loaded with rc=1; issue 29), case by case:
# the single-process test scripts, each running both ends of its QPs, one
# device rv0 (veth0) and a peer on veth1 in netns peer, first soft-RoCE
# (rxe1), then another rv device (rv1).  With each peer, rc_atomic.py's
# results and errors of atomics, ATOMIC WRITE and FLUSH with rv0 at either end
# and the ends of
# retrying (rc_retry.py): a peer that never answers ends in
# IBV_WC_RETRY_EXC_ERR, a receiver with nothing posted in
# IBV_WC_RNR_RETRY_EXC_ERR, after the configured retries, and a QP
# destroyed while it retries; SQD with a large RDMA WRITE in flight
# (sqd_cases.py: drained, then IBV_EVENT_SQ_DRAINED).  Then, with rv1, RC
# under 5% loss both ways
# (rc_loss.py: every message whole, in order) and UC (uc_loss.py: whole
# messages in order or none of them), where the retransmissions and the
# messages dropped show in the wire counters; and hostile packets
# (rc_hostile.py): forged answers, requests out of range.  No busy-polling
# pair, no load: the debug lane runs it in its guest of one vCPU
# (tests/Makefile).  The programs users run are rv0_rc.sh's.

. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/rc_lib.sh
. "$(dirname "$0")/rc_lib.sh"

LOSS_ITERS=100
if [ "${RVERBS_LANE:-}" = debug ]; then
	LOSS_ITERS=50
fi
DBG=/sys/kernel/debug/rverbs
PORT=19100
RETRY=$(dirname "$0")/rc_retry.py
UC_LOSS=$(dirname "$0")/uc_loss.py
RC_LOSS=$(dirname "$0")/rc_loss.py
ATOMIC=$(dirname "$0")/rc_atomic.py
SQD=$(dirname "$0")/sqd_cases.py
ATOMIC_CASES="shared cas misaligned no_access qp_no_atomic flush flush_persistent flush_no_access
	flush_past flush_qp_no_access atomic_write atomic_write_misaligned atomic_write_qp_no_write"
TMP=$(mktemp -d /tmp/rv0_rc_cases.XXXXXX)

trap rc_cleanup EXIT


# atomics CASE REQ_DEV REQ_GIDX RESP_DEV RESP_GIDX - rc_atomic.py's CASE
# (or all).
atomics() { script "$ATOMIC" "$@"; }

ktap_print_header
rc_setup
ktap_set_plan 90

g4=$(wait_gid rv0 ::ffff:$IP4_A)
p4=$(wait_gid rxe1 ::ffff:$IP4_B)
ksft_check "rv0 and rxe1 have their RoCE v2 GIDs" test -n "$g4" -a -n "$p4"

for peer in rxe1 rv1; do
	if [ $peer = rv1 ]; then
		ip netns exec $NS rdma link del rxe1 &&
			ip netns exec $NS rdma link add rv1 type rverbs netdev veth1
		p4=$(wait_gid rv1 ::ffff:$IP4_B)
	fi
	# rv0's FLUSHes do not reach soft-RoCE, which expects its own ICRC of
	# FLUSH (Documentation/rv0.rst): towards rxe1, the cases without FLUSH.
	to_cases=$ATOMIC_CASES
	[ $peer = rxe1 ] && to_cases=$(printf '%s\n' $ATOMIC_CASES | grep -v '^flush')
	atomics "$(echo $to_cases | tr ' ' ,)" rv0 "$g4" $peer "$p4" >"$TMP/atomics.to"
	atomics all $peer "$p4" rv0 "$g4" >"$TMP/atomics.from"
	cat "$TMP/atomics.to" "$TMP/atomics.from"
	for c in $to_cases; do
		ksft_check "rv0 -> $peer: atomics, $c (rc_atomic.py)" \
			grep -qx "# ok $c" "$TMP/atomics.to"
	done
	for c in $ATOMIC_CASES; do
		ksft_check "$peer -> rv0: atomics, $c (rc_atomic.py)" \
			grep -qx "# ok $c" "$TMP/atomics.from"
	done
	script "$RETRY" all rv0 "$g4" $peer "$p4" >"$TMP/retry"
	cat "$TMP/retry"
	for c in retry rnr rnr_recovers destroy_retrying; do
		ksft_check "rv0 -> $peer: $c (rc_retry.py)" grep -qx "# ok $c" "$TMP/retry"
	done
	# SQD with a large RDMA WRITE in flight (sqd_cases.py), the drained
	# QP on rv0, then on the peer; what the other end sends (its ACKs) is
	# delayed by a second.
	ip netns exec $NS tc qdisc add dev veth1 root netem delay 1s
	script "$SQD" rv0 "$g4" $peer "$p4" >"$TMP/sqd.rv0"
	ip netns exec $NS tc qdisc del dev veth1 root
	tc qdisc add dev veth0 root netem delay 1s
	script "$SQD" $peer "$p4" rv0 "$g4" >"$TMP/sqd.peer"
	tc qdisc del dev veth0 root
	cat "$TMP/sqd.rv0" "$TMP/sqd.peer"
	ksft_check "rv0 -> $peer: SQD with an RDMA WRITE in flight drains it, SQ_DRAINED once (sqd_cases.py)" \
		grep -qx "# ok sqd_in_flight" "$TMP/sqd.rv0"
	ksft_check "$peer -> rv0: the same with the drained QP on $peer, as on rv0 (sqd_cases.py)" \
		same_line "$TMP/sqd.rv0" "$TMP/sqd.peer" sqd_in_flight
done
ksft_check "rv0 and rv1 dropped nothing but RC's recovery and RNR" wire_clean_both


retr0=$(counter rv0 rc_retransmit)
tc qdisc add dev veth0 root netem loss 5% &&
	ip netns exec $NS tc qdisc add dev veth1 root netem loss 5%
# rc_loss.py, not ibv_rc_pingpong, whose end that finishes first exits
# while the other may still wait for an acknowledgement that was lost:
# with retry_cnt 7 (forever, soft-RoCE's reading) it would retry for ever.
script "$RC_LOSS" both rv0 "$g4" rv1 "$p4" $LOSS_ITERS >"$TMP/rc_loss"
cat "$TMP/rc_loss"
ksft_check "rv0 -> rv1 RC under 5% loss both ways: every message whole, in order (rc_loss.py)" \
	grep -qx "# ok rv0 -> rv1" "$TMP/rc_loss"
ksft_check "rv1 -> rv0 RC under 5% loss both ways: every message whole, in order (rc_loss.py)" \
	grep -qx "# ok rv1 -> rv0" "$TMP/rc_loss"
ksft_check "the loss shows: rv0 sent packets again" test "$(counter rv0 rc_retransmit)" -gt "$retr0"
ucd0=$(counter rv1 drop_uc_message)
script "$UC_LOSS" both rv0 "$g4" rv1 "$p4" >"$TMP/uc_loss"
cat "$TMP/uc_loss"
ksft_check "rv0 -> rv1 UC under 5% loss both ways: whole messages in order or none (uc_loss.py)" \
	grep -qx "# ok rv0 -> rv1" "$TMP/uc_loss"
ksft_check "rv1 -> rv0 UC under 5% loss both ways: whole messages in order or none (uc_loss.py)" \
	grep -qx "# ok rv1 -> rv0" "$TMP/uc_loss"
ksft_check "the loss shows: rv1 dropped the rest of UC messages" \
	test "$(counter rv1 drop_uc_message)" -gt "$ucd0"
tc qdisc del dev veth0 root
ip netns exec $NS tc qdisc del dev veth1 root

# Hostile RC packets at rv0 (rc_hostile.py: forged in the peer's netns
# with rv1's address, the path's destination): one line per case.
HOSTILE_CASES="ack_unsolicited nak_forged read_response_unsolicited atomic_ack_unsolicited
	unknown_qpn bad_icrc still_works read_response_within answer_past_read answer_past_again
	ack_within_read ack_past_read ack_past_again
	gap duplicate write_huge write_bad_rkey
	write_out_of_range read_huge atomic_misaligned destroyed"
script "$(dirname "$0")/rc_hostile.py" "$NS" rv0 "$g4" rv1 "$p4" $IP4_B $IP4_A >"$TMP/hostile"
cat "$TMP/hostile"
for c in $HOSTILE_CASES; do
	ksft_check "hostile RC at rv0: $c (rc_hostile.py)" grep -qx "# ok $c" "$TMP/hostile"
done

ksft_check "rv0: nothing live afterwards" \
	bash -c "for o in qp cq mr mw srq; do grep -qx \"\$o 0 max [0-9]*\" $DBG/rv0/resources || exit 1; done"
ksft_check "rdma link del rv0 rv1 and rmmod rverbs" \
	bash -c "rdma link del rv0 && ip netns exec $NS rdma link del rv1 && rmmod rverbs && [ ! -e /sys/module/rverbs ]"
ktap_finished
