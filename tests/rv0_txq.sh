#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rv0's transmit backpressure, with a qdisc on veth0 that holds or drops its
# packets (sch_plug: held until released; its byte limit: dropped beyond).
# ud_burst sends a burst from a UD QP on rv0 to one on soft-RoCE (rxe1, in
# the other namespace), which counts what arrives.
#
# * A qdisc that holds every packet: the QP stops at 64 packets in flight
#   (the plug's backlog is exactly 64 and stays there; the wire's
#   send_wait counts the stop) and resumes when they are freed: released,
#   the whole burst arrives, every send completes with success, in order,
#   and the QP is still in RTS.  Before: the plug held the whole burst.
# * A qdisc that drops (the plug's limit full): a dropped packet is a
#   datagram lost on the way; the sends complete with success, the QP stays
#   in RTS and sends again (send_dropped counts the drops).  Before: the
#   first drop completed with IBV_WC_LOC_QP_OP_ERR and the QP went to error.
# * Packets held when their QP is destroyed and when rmmod comes: the
#   buffers outlive their QP; rmmod waits for them (the module's code is
#   their destructor) and returns once the qdisc lets them go.

. "$(dirname "$0")/lib.sh"

BURST=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ud_burst
DBG=/sys/kernel/debug/rverbs
N=300
TMP=/tmp/rv0_txq

cleanup() {
	local p
	for p in ${RECV_PID:-} ${SEND_PID:-} ${RMMOD_PID:-}; do
		kill "$p" 2>/dev/null
	done
	[ -n "${RECV_GO:-}" ] && eval "exec $RECV_GO>&-"
	tc qdisc del dev veth0 root 2>/dev/null
	rdma link del rv0 2>/dev/null
	ip netns exec "$NS" rdma link del rxe1 2>/dev/null
	teardown
	rm -rf $TMP
	true
}
trap cleanup EXIT

# wire NAME - a counter of rv0's wire.
wire() { value_of $DBG/rv0/wire "$1"; }

# The qdiscs of veth0: a prio root whose band 1:1 takes RoCE v2 (UDP to
# 4791, a u32 filter) into a plug qdisc (10:), and whose band 1:2 takes
# everything else (the host's own IPv6 neighbour discovery and MLD, which
# must not sit in the plug and be counted with rv0's packets).
#
# plug LIMIT - a new plug under band 1:1, which holds what it is given, at
# most LIMIT bytes (the rest dropped).
plug() {
	tc qdisc del dev veth0 root 2>/dev/null
	tc qdisc add dev veth0 root handle 1: prio bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev veth0 parent 1:1 handle 10: plug limit "$1" &&
		tc filter add dev veth0 parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:1
}
release() { tc qdisc change dev veth0 parent 1:1 handle 10: plug release_indefinite; }

# backlog - the packets the plug holds.
backlog() {
	tc -s qdisc show dev veth0 |
		awk '$1 == "qdisc" { plug = ($2 == "plug") } plug && $1 == "backlog" { sub("p$", "", $3); print $3; exit }'
}
backlog_is() { [ "$(backlog)" = "$1" ]; }

# recv_start COUNT - the receiver on rxe1, COUNT receives; its QP number
# in RQPN.
recv_start() {
	local line
	rm -f $TMP/go && mkfifo $TMP/go || return 1
	ip netns exec "$NS" timeout 300 "$BURST" rxe1 "$B_IDX" recv "$1" <$TMP/go >$TMP/recv 2>&1 &
	RECV_PID=$!
	exec {RECV_GO}>$TMP/go
	wait_until 60 grep -q '^qpn ' $TMP/recv || { sed 's/^/# recv: /' $TMP/recv; return 1; }
	line=$(grep '^qpn ' $TMP/recv)
	RQPN=${line#qpn }
}

# received - the receiver's count of good messages so far (and "bad" 0).
received() {
	local n
	n=$(grep -c '^received ' $TMP/recv)
	echo poll >&$RECV_GO
	wait_until 60 eval "[ \$(grep -c '^received ' $TMP/recv) -gt $n ]" || return 1
	[ "$(grep '^bad ' $TMP/recv | tail -n 1)" = "bad 0" ] ||
		{ sed 's/^/# recv: /' $TMP/recv; return 1; }
	grep '^received ' $TMP/recv | tail -n 1 | awk '{ print $2 }'
}

recv_stop() {
	eval "exec $RECV_GO>&-"
	RECV_GO=
	wait "$RECV_PID"
	RECV_PID=
}

# send_start COUNT - the sender on rv0, in the background.
send_start() {
	timeout 300 "$BURST" rv0 "$A_IDX" send "$1" "::ffff:$IP4_B" "$RQPN" >$TMP/send 2>&1 &
	SEND_PID=$!
}

# send_wait - the sender's verdict (its output shown when it failed).
send_wait() {
	local rc
	wait "$SEND_PID"
	rc=$?
	SEND_PID=
	[ $rc = 0 ] || sed 's/^/# send: /' $TMP/send
	return $rc
}

ktap_print_header
mkdir -p $TMP
modprobe rdma_rxe && modprobe ib_uverbs && modprobe sch_plug && modprobe sch_prio && modprobe cls_u32 && insmod "$RVERBS_KO" && ns_setup ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 9

ip netns exec "$NS" rdma link add rxe1 type rxe netdev veth1 &&
	rdma link add rv0 type rverbs netdev veth0 &&
	wait_until 10 gid_index rv0 "::ffff:$IP4_A" >/dev/null &&
	wait_until 10 gid_index rxe1 "::ffff:$IP4_B" >/dev/null &&
	A_IDX=$(gid_index rv0 "::ffff:$IP4_A") && B_IDX=$(gid_index rxe1 "::ffff:$IP4_B") &&
	# The peer's MAC fixed: nothing to resolve while the plug holds.
	ip neigh replace "$IP4_B" dev veth0 nud permanent \
		lladdr "$(ip netns exec "$NS" cat /sys/class/net/veth1/address)"
ksft_check "rv0 here, rxe1 in the other namespace, the peer's MAC permanent" test $? = 0

# 1. A qdisc that holds everything.
held() {
	local waits0
	waits0=$(wire send_wait)
	recv_start $((N + 1)) && plug 10000000 && send_start $N || return 1
	if ! wait_until 60 backlog_is 64; then
		ktap_print_msg "the plug holds $(backlog) packets, not 64"
		return 1
	fi
	# However long the doorbell had: still 64.
	nap 1
	backlog_is 64 || { ktap_print_msg "then $(backlog)"; return 1; }
	[ "$(wire send_wait)" -gt "$waits0" ] || { ktap_print_msg "send_wait did not move"; return 1; }
}
ksft_check "a plug that holds every packet: rv0's QP stops at 64 in flight (send_wait counted)" held

resumed() {
	local n
	release && send_wait || return 1
	n=$(received) || return 1
	[ "$n" = $((N + 1)) ] || { ktap_print_msg "received $n of $((N + 1))"; return 1; }
}
ksft_check "released: the QP resumes, all $N sends complete with success in order, the QP in RTS, all $((N + 1)) arrive" \
	resumed
recv_stop

# 2. A qdisc that drops: room for about ten packets.
dropped_on_the_way() {
	local drops0 n
	drops0=$(wire send_dropped)
	recv_start 101 && plug 1300 && send_start 100 && send_wait || return 1
	[ "$(wire send_dropped)" -gt "$drops0" ] || { ktap_print_msg "send_dropped did not move"; return 1; }
	release && n=$(received) || return 1
	[ "$n" -ge 1 ] && [ "$n" -lt 101 ] || { ktap_print_msg "received $n"; return 1; }
}
ksft_check "a plug that drops: every send completes with success, the QP stays in RTS and sends again (send_dropped counted)" \
	dropped_on_the_way
recv_stop
ksft_check "rv0's wire counted no send error" test "$(wire send_error)" = 0

# 3. Packets held past their QP, and past rmmod.
recv_start $((N + 1)) && plug 10000000 && send_start $N &&
	wait_until 60 backlog_is 64 && kill "$SEND_PID" && wait "$SEND_PID" 2>/dev/null
SEND_PID=
ksft_check "the sender killed with 64 packets held: its QP is destroyed, the packets stay queued" backlog_is 64
release
ksft_check "released after the QP is gone: the packets go out" wait_until 30 backlog_is 0
recv_stop

plug 10000000 && recv_start $((N + 1)) && send_start $N && wait_until 60 backlog_is 64 &&
	kill "$SEND_PID" && wait "$SEND_PID" 2>/dev/null
SEND_PID=
recv_stop
rdma link del rv0
rmmod rverbs &
RMMOD_PID=$!
# In the module's exit (its state "going"), and still there a second later.
unloading() {
	wait_until 60 has_line /sys/module/rverbs/initstate going && nap 1 &&
		kill -0 "$RMMOD_PID" 2>/dev/null && has_line /sys/module/rverbs/initstate going
}
ksft_check "rmmod rverbs waits in the module's exit while a qdisc holds its packets" unloading
release
wait "$RMMOD_PID"
rc=$?
RMMOD_PID=
ksft_check "released: rmmod returns (exit $rc), rverbs unloaded" \
	test $rc = 0 -a ! -d /sys/module/rverbs
ktap_finished
