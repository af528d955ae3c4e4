#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Many UD queue pairs at once: ud_many (rdma-core, librxe's provider) runs
# QPS queue pairs on each of two devices, in two network namespaces joined
# by a veth pair, two threads a side, each with its own completion queue,
# for a bounded time, every pair with a window of messages in flight, each
# message checked for its pair, source QP, length and pattern and echoed
# back.  No completion may be lost, duplicated or misdelivered; the
# devices' own wire counters must agree with what the programs counted
# (every message sent is a packet the other side received, none dropped);
# and nothing is left on rv0 afterwards (debugfs resources).
#
# rv0 <-> rv1 (both rverbs), then rv0 <-> rxe1 (soft-RoCE) the same way;
# then with RC QPs (ud_many -r; rverbs loaded with rc=1), four threads a
# side: every message delivered, checked and echoed, none lost.
. "$(dirname "$0")/lib.sh"

MANY=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ud_many
DBG=/sys/kernel/debug/rverbs
QPS=64
# The same on the debug lane: as many QPs and threads, as long; fewer
# messages go there (each packet is many times slower).
SECS=5
PORT=18700

cleanup() {
	rdma link del rv0 2>/dev/null
	ip netns exec "$NS" rdma link del rv1 2>/dev/null
	teardown
}
trap cleanup EXIT

# wire_of DEV NAME - DEV's wire counter NAME.
wire_of() {
	value_of $DBG/"$1"/wire "$2"
}

# value FILE KEY - the number after KEY in ud_many's output FILE (-1 if
# it printed none).
value() {
	value_of "$1" "$2" || echo -1
}

# run PEER PEER_GID OUR_GID - ud_many's server on PEER in $NS, its client
# on rv0; five cases.
run() {
	local peer=$1 pgid=$2 ogid=$3 srv rs rc s0 r0 ps0 pr0 sent recv
	local out=/tmp/rv0_many.$peer
	s0=$(wire_of rv0 sent) r0=$(wire_of rv0 received)
	if [ -e $DBG/"$peer"/wire ]; then
		ps0=$(wire_of "$peer" sent) pr0=$(wire_of "$peer" received)
	fi
	PORT=$((PORT + 1))
	# Empty before the server starts (the wait below must not find an
	# earlier run's "listening").
	: >"$out.srv"
	ip netns exec "$NS" timeout 300 "$MANY" -d "$peer" -g "$pgid" -n $QPS -T $SECS -p $PORT \
		>"$out.srv" 2>&1 &
	srv=$!
	wait_until 120 has_line "$out.srv" listening
	timeout 300 "$MANY" -d rv0 -g "$ogid" -n $QPS -T $SECS -p $PORT $IP4_B >"$out.cli" 2>&1
	rc=$?
	wait $srv
	rs=$?
	prefixed "# $peer server: " "$out.srv"
	prefixed "# rv0 client: " "$out.cli"
	sent=$(value "$out.cli" sent) recv=$(value "$out.cli" received)
	ksft_check "rv0 -> $peer: $QPS UD QPs a side, $SECS s: both ends exit 0 ($rc, $rs)" \
		test $rc = 0 -a $rs = 0
	ksft_check "rv0 -> $peer: no message lost, duplicated or misdelivered" \
		test "$(value "$out.cli" lost)" = 0 -a "$(value "$out.cli" bad)" = 0 \
		-a "$(value "$out.srv" bad)" = 0 -a "$recv" = "$sent" -a "$sent" -gt "$QPS"
	ksft_check "rv0 -> $peer: the server received and echoed each of the client's $sent messages" \
		test "$(value "$out.srv" received)" = "$sent" -a "$(value "$out.srv" sent)" = "$sent"
	ktap_print_msg "rv0 wire: sent +$(($(wire_of rv0 sent) - s0)), received +$(($(wire_of rv0 received) - r0))"
	ksft_check "rv0 -> $peer: rv0 sent a packet for each message and received one for each echo" \
		test $(($(wire_of rv0 sent) - s0)) = "$sent" -a $(($(wire_of rv0 received) - r0)) = "$recv"
	if [ -n "${ps0:-}" ]; then
		ksft_check "rv0 -> $peer: $peer received a packet for each message and sent one for each echo" \
			test $(($(wire_of "$peer" received) - pr0)) = "$sent" \
			-a $(($(wire_of "$peer" sent) - ps0)) = "$sent"
	else
		# soft-RoCE's own counters, from its creation (just before).
		ksft_check "rv0 -> $peer: soft-RoCE received a packet for each message and sent one for each echo" \
			rxe_counted "$peer" "$sent"
	fi
}

# run_rc PEER PEER_GID OUR_GID - ud_many -r (RC) with four threads a side,
# its server on PEER in $NS, its client on rv0; three cases.
run_rc() {
	local peer=$1 pgid=$2 ogid=$3 srv rs rc sent
	local out=/tmp/rv0_many.rc.$peer
	PORT=$((PORT + 1))
	: >"$out.srv"
	ip netns exec "$NS" timeout 300 "$MANY" -r -t 4 -d "$peer" -g "$pgid" -n $QPS -T $SECS \
		-p $PORT >"$out.srv" 2>&1 &
	srv=$!
	wait_until 120 has_line "$out.srv" listening
	timeout 300 "$MANY" -r -t 4 -d rv0 -g "$ogid" -n $QPS -T $SECS -p $PORT $IP4_B \
		>"$out.cli" 2>&1
	rc=$?
	wait $srv
	rs=$?
	prefixed "# $peer server: " "$out.srv"
	prefixed "# rv0 client: " "$out.cli"
	sent=$(value "$out.cli" sent)
	ksft_check "rv0 -> $peer: $QPS RC QPs a side, 4 threads, $SECS s: both ends exit 0 ($rc, $rs)" \
		test $rc = 0 -a $rs = 0
	ksft_check "rv0 -> $peer: RC: no message lost, duplicated or misdelivered" \
		test "$(value "$out.cli" lost)" = 0 -a "$(value "$out.cli" bad)" = 0 \
		-a "$(value "$out.srv" bad)" = 0 -a "$(value "$out.cli" received)" = "$sent" \
		-a "$sent" -gt "$QPS"
	ksft_check "rv0 -> $peer: RC: the server received and echoed each of the client's $sent messages" \
		test "$(value "$out.srv" received)" = "$sent" -a "$(value "$out.srv" sent)" = "$sent"
}

# rxe_counted DEV N - soft-RoCE's DEV received exactly N packets and sent
# exactly N since its creation (its hw counters rcvd_pkts, sent_pkts).
rxe_counted() {
	local c=/sys/class/infiniband/$1/ports/1/hw_counters r s
	read -r r <$c/rcvd_pkts && read -r s <$c/sent_pkts || return 1
	ktap_print_msg "$1: rcvd_pkts $r, sent_pkts $s"
	[ "$r" = "$2" ] && [ "$s" = "$2" ]
}

nothing_left() {
	grep -qx 'qp 0 max [0-9]*' $DBG/rv0/resources &&
		grep -qx 'cq 0 max [0-9]*' $DBG/rv0/resources &&
		grep -qx 'mr 0 max [0-9]*' $DBG/rv0/resources &&
		grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources && return 0
	prefixed "# resources: " $DBG/rv0/resources
	return 1
}

no_drops() {
	local k v bad=0 retransmitted
	retransmitted=$(awk '$1 == "rc_retransmit" { print $2 }' $DBG/rv0/wire)
	while read -r k v _; do
		[[ $k == drop_* ]] && [ "$v" != 0 ] || continue
		# What RC's own recovery drops, once it sent packets again (an
		# acknowledgement slower than the QPs' 67 ms timeout: the debug
		# kernel's round trip under this load reached a second in w17):
		# the duplicates' acknowledgements again, a request past a gap.
		if [ "${retransmitted:-0}" -gt 0 ] && [[ $k == drop_rc_stale || $k == drop_rc_sequence ]]; then
			ktap_print_msg "$k $v, after $retransmitted packets sent again (RC's recovery)"
			continue
		fi
		bad=1
	done <$DBG/rv0/wire
	[ $bad = 0 ] && return 0
	prefixed "# wire: " $DBG/rv0/wire
	return 1
}

ktap_print_header
[ -x "$MANY" ] || ktap_exit_fail_msg "$MANY not built"
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" rc=1 && ns_setup ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 20

rdma link add rv0 type rverbs netdev veth0 &&
	ip netns exec "$NS" rdma link add rv1 type rverbs netdev veth1 &&
	a4=$(wait_until 10 gid_index rv0 ::ffff:$IP4_A) &&
	b4=$(wait_until 10 gid_index rv1 ::ffff:$IP4_B)
ksft_check "rv0 here and rv1 in the other namespace, with their IPv4 RoCE v2 GIDs" test $? = 0
ping -c 1 -W 5 $IP4_B >/dev/null

run rv1 "${b4:-0}" "${a4:-0}"

ip netns exec "$NS" rdma link del rv1 &&
	ip netns exec "$NS" rdma link add rxe1 type rxe netdev veth1 &&
	b4=$(wait_until 10 gid_index rxe1 ::ffff:$IP4_B)
ksft_check "soft-RoCE (rxe1) in the other namespace instead" test $? = 0

run rxe1 "${b4:-0}" "${a4:-0}"
run_rc rxe1 "${b4:-0}" "${a4:-0}"

ip netns exec "$NS" rdma link del rxe1 &&
	ip netns exec "$NS" rdma link add rv1 type rverbs netdev veth1 &&
	b4=$(wait_until 10 gid_index rv1 ::ffff:$IP4_B)
run_rc rv1 "${b4:-0}" "${a4:-0}"

ksft_check "rv0 dropped no packet" no_drops
ksft_check "nothing is left on rv0 (debugfs resources)" nothing_left
ktap_finished
