#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected QPs on rv0 (rverbs loaded with rc=1; issue 29), with the
# programs users run: rdma-core's unmodified ibv_rc_pingpong and
# ibv_uc_pingpong with their buffer check (-c) between rv0 (veth0) and a
# peer on veth1 in netns peer, first soft-RoCE (rxe1), then another rv
# device (rv1), both directions, IPv4 and IPv6 GIDs, 1 byte to 4 MTUs (the
# port's MTU is 1024), with completion events (-e); perftest's ib_send_bw,
# ib_write_bw and ib_read_bw both ways, ib_send_lat, ib_write_lat and
# ib_read_lat, ib_send_bw and ib_write_bw on UC both ways, ib_atomic_bw
# and ib_atomic_lat; the wire against soft-RoCE's (roce_decode.py); rv0 to
# itself (its loopback); ibv_rc_pingpong under reordering and duplication
# (netem on both veths), where the duplicates show in the wire counters;
# a route to the peer through a silent gateway added and deleted under RC
# traffic (the route a QP keeps is looked up again); rdma link del rv0 under RC traffic; rdma link del rv0 and rmmod rverbs
# with memory windows bound and in use (mw_cases.py bound_held).  The single-process scripts
# (atomics, retries, loss, hostile packets) are rv0_rc_cases.sh's.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/rc_lib.sh
. "$(dirname "$0")/rc_lib.sh"

ITERS=100
SIZES="1 1024 4096"
LOSS_ITERS=100
PERF_ITERS=2000
# perftest's bound on one run: against a hang, not a speed.  The debug
# lane's 64 KiB ib_read_bw between rv0 and soft-RoCE took 34 s alone on a
# slow day and over 60 s beside the lane's second boot (w24).
PERF_BOUND=60
if [ "${RVERBS_LANE:-}" = debug ]; then
	ITERS=20 SIZES="4096" LOSS_ITERS=50 PERF_ITERS=200 PERF_BOUND=240
fi
DBG=/sys/kernel/debug/rverbs
PORT=18700
MWC=$(dirname "$0")/mw_cases.py
TMP=$(mktemp -d /tmp/rv0_rc.XXXXXX)

trap rc_cleanup EXIT

# perf TOOL SRV_NS SRV_DEV SRV_GID CLI_DEV CLI_GID CLI_TARGET ARGS... - a
# perftest tool's server on SRV_DEV (in netns SRV_NS, "-" for the initial
# one) and its client on CLI_DEV; both must exit 0.
perf() {
	local tool=$1 sns=$2 sdev=$3 sgid=$4 cdev=$5 cgid=$6 target=$7 srv rc i
	shift 7
	local -a sx=() cx=()
	if [ "$sns" = - ]; then cx=(ip netns exec "$NS"); else sx=(ip netns exec "$sns"); fi
	PORT=$((PORT + 1))
	"${sx[@]}" timeout $PERF_BOUND "$tool" -d "$sdev" -x "$sgid" -p $PORT -F "$@" >"$TMP/srv" 2>&1 &
	srv=$!
	for ((i = 0; i < 50; i++)); do
		"${cx[@]}" timeout $PERF_BOUND "$tool" -d "$cdev" -x "$cgid" -p $PORT -F "$@" "$target" \
			>"$TMP/cli" 2>&1
		rc=$?
		grep -q "Couldn't connect\|Unable to open file descriptor" "$TMP/cli" || break
		sleep 0.1
	done
	wait $srv || rc=1
	if [ "$rc" != 0 ]; then
		grep -v '^ *$' "$TMP/srv" | tail -15 | sed 's/^/# server: /'
		grep -v '^ *$' "$TMP/cli" | tail -15 | sed 's/^/# client: /'
		return 1
	fi
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print; exit }' "$TMP/cli" |
		sed "s/^/# $tool: /"
}

# same_wire - a capture on veth1 (both directions) of SENDs, RDMA WRITEs,
# READs, atomics and SENDs with invalidate run both ways between rv0 and rxe1 decodes as valid
# RoCE v2 (roce_decode.py: each header, the ICRC), and for each payload
# size what rv0 sent has the same fields as what rxe1 sent.
same_wire() {
	local cap=$TMP/rc.pcap out rc t
	: >"$TMP/cap.out"
	ip netns exec "$NS" python3 "$(dirname "$0")/pcap_capture.py" veth1 "$cap" 300 \
		>"$TMP/cap.out" 2>&1 &
	local cap_pid=$!
	wait_until 60 has_line "$TMP/cap.out" capturing || return 1
	rc=0
	pingpong $NS rxe1 "$p4" rv0 "$g4" $IP4_B 4096 10 -c || rc=1
	pingpong - rv0 "$g4" rxe1 "$p4" $IP4_A 4096 10 -c || rc=1
	for t in ib_write_bw ib_read_bw ib_atomic_bw; do
		perf $t $NS rxe1 "$p4" rv0 "$g4" $IP4_B -n 20 || rc=1
		perf $t - rv0 "$g4" rxe1 "$p4" $IP4_A -n 20 || rc=1
	done
	# SENDs with invalidate (an IETH) each way, and the NAKs of the
	# writes through the windows they invalidated (mw_cases.py).
	script "$MWC" rv0 "$g4" rxe1 "$p4" type2_send_inv >/dev/null || rc=1
	script "$MWC" rxe1 "$p4" rv0 "$g4" type2_send_inv >/dev/null || rc=1
	kill -TERM $cap_pid 2>/dev/null
	wait $cap_pid
	out=$(python3 "$(dirname "$0")/roce_decode.py" "$cap" $IP4_A $IP4_B) || rc=1
	printf '%s\n' "$out" | grep -v '^packet [0-9]*: [0-9a-f.:]* -> ' | sed 's/^/# /'
	printf '%s\n' "$out" | grep INVALID | head -n 5 | sed 's/^/# /'
	return $rc
}

# duplicates_seen - rv0 or rv1 acknowledged a duplicate again, or dropped
# an acknowledgement of nothing in flight.
duplicates_seen() {
	local n=0 d c
	for d in rv0 rv1; do
		for c in rc_duplicate drop_rc_stale; do
			n=$((n + $(counter $d $c)))
		done
	done
	[ $n -gt 0 ]
}

ktap_print_header
rc_setup
n=0
for s in $SIZES; do n=$((n + 2)); done
ktap_set_plan $((2 * (2 * n + 21) + 14))

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
	for s in $SIZES; do
		ksft_check "rv0 -> $peer: ibv_rc_pingpong -c, IPv4, $s bytes" \
			pingpong $NS $peer "$p4" rv0 "$g4" $IP4_B "$s" $ITERS -c
		ksft_check "$peer -> rv0: ibv_rc_pingpong -c, IPv4, $s bytes" \
			pingpong - rv0 "$g4" $peer "$p4" $IP4_A "$s" $ITERS -c
	done
	ksft_check "rv0 -> $peer: ibv_rc_pingpong -c -e, IPv6, 4096 bytes" \
		pingpong $NS $peer "$p6" rv0 "$g6" $IP4_B 4096 $ITERS -c -e
	ksft_check "$peer -> rv0: ibv_rc_pingpong -c -e, IPv6, 4096 bytes" \
		pingpong - rv0 "$g6" $peer "$p6" $IP4_A 4096 $ITERS -c -e
	ksft_check "rv0 -> $peer: ib_send_bw, 4096 bytes, $PERF_ITERS messages" \
		perf ib_send_bw $NS $peer "$p4" rv0 "$g4" $IP4_B -s 4096 -n $PERF_ITERS
	ksft_check "$peer -> rv0: ib_send_bw, 4096 bytes, $PERF_ITERS messages" \
		perf ib_send_bw - rv0 "$g4" $peer "$p4" $IP4_A -s 4096 -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_send_lat, 64 bytes, $PERF_ITERS messages" \
		perf ib_send_lat $NS $peer "$p4" rv0 "$g4" $IP4_B -s 64 -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_write_bw, 65536 bytes, $PERF_ITERS messages" \
		perf ib_write_bw $NS $peer "$p4" rv0 "$g4" $IP4_B -s 65536 -n $PERF_ITERS
	ksft_check "$peer -> rv0: ib_write_bw, 65536 bytes, $PERF_ITERS messages" \
		perf ib_write_bw - rv0 "$g4" $peer "$p4" $IP4_A -s 65536 -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_write_lat, 64 bytes, $PERF_ITERS messages" \
		perf ib_write_lat $NS $peer "$p4" rv0 "$g4" $IP4_B -s 64 -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_read_bw, 65536 bytes, $PERF_ITERS messages" \
		perf ib_read_bw $NS $peer "$p4" rv0 "$g4" $IP4_B -s 65536 -n $PERF_ITERS
	ksft_check "$peer -> rv0: ib_read_bw, 65536 bytes, $PERF_ITERS messages" \
		perf ib_read_bw - rv0 "$g4" $peer "$p4" $IP4_A -s 65536 -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_read_lat, 64 bytes, $PERF_ITERS messages" \
		perf ib_read_lat $NS $peer "$p4" rv0 "$g4" $IP4_B -s 64 -n $PERF_ITERS
	for s in $SIZES; do
		ksft_check "rv0 -> $peer: ibv_uc_pingpong -c, IPv4, $s bytes" \
			uc_pingpong $NS $peer "$p4" rv0 "$g4" $IP4_B "$s" $ITERS -c
		ksft_check "$peer -> rv0: ibv_uc_pingpong -c, IPv4, $s bytes" \
			uc_pingpong - rv0 "$g4" $peer "$p4" $IP4_A "$s" $ITERS -c
	done
	ksft_check "rv0 -> $peer: ibv_uc_pingpong -c -e, IPv6, 4096 bytes" \
		uc_pingpong $NS $peer "$p6" rv0 "$g6" $IP4_B 4096 $ITERS -c -e
	ksft_check "$peer -> rv0: ibv_uc_pingpong -c -e, IPv6, 4096 bytes" \
		uc_pingpong - rv0 "$g6" $peer "$p6" $IP4_A 4096 $ITERS -c -e
	for t in ib_send_bw ib_write_bw; do
		ksft_check "rv0 -> $peer: $t -c UC, 4096 bytes, $PERF_ITERS messages" \
			perf $t $NS $peer "$p4" rv0 "$g4" $IP4_B -c UC -s 4096 -n $PERF_ITERS
		ksft_check "$peer -> rv0: $t -c UC, 4096 bytes, $PERF_ITERS messages" \
			perf $t - rv0 "$g4" $peer "$p4" $IP4_A -c UC -s 4096 -n $PERF_ITERS
	done
	ksft_check "rv0 -> $peer: ib_atomic_bw (fetch-and-add), $PERF_ITERS" \
		perf ib_atomic_bw $NS $peer "$p4" rv0 "$g4" $IP4_B -n $PERF_ITERS
	ksft_check "$peer -> rv0: ib_atomic_bw (fetch-and-add), $PERF_ITERS" \
		perf ib_atomic_bw - rv0 "$g4" $peer "$p4" $IP4_A -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_atomic_bw -A CMP_AND_SWAP, $PERF_ITERS" \
		perf ib_atomic_bw $NS $peer "$p4" rv0 "$g4" $IP4_B -A CMP_AND_SWAP -n $PERF_ITERS
	ksft_check "rv0 -> $peer: ib_atomic_lat, $PERF_ITERS" \
		perf ib_atomic_lat $NS $peer "$p4" rv0 "$g4" $IP4_B -n $PERF_ITERS
	if [ $peer = rxe1 ]; then
		ksft_check "rv0 and rxe1 put the same RC fields on the wire (roce_decode.py)" \
			same_wire
	fi
done
ksft_check "rv0 and rv1 dropped nothing" wire_clean_both
ksft_check "rv0 took acknowledgements" test "$(counter rv0 rc_ack)" -gt 0

ksft_check "rv0 to itself: ibv_rc_pingpong -c, 4096 bytes (the device's loopback)" \
	pingpong - rv0 "$g4" rv0 "$g4" 127.0.0.1 4096 $ITERS -c

tc qdisc add dev veth0 root netem delay 1ms reorder 50% gap 3 duplicate 5% &&
	ip netns exec $NS tc qdisc add dev veth1 root netem delay 1ms reorder 50% gap 3 duplicate 5%
ksft_check "rv0 <-> rv1 reordered and duplicated: ibv_rc_pingpong -c, 4096 bytes" \
	pingpong $NS rv1 "$p4" rv0 "$g4" $IP4_B 4096 $LOSS_ITERS -c
ksft_check "the duplicates show: acknowledged again or dropped as stale" duplicates_seen
tc qdisc del dev veth0 root
ip netns exec $NS tc qdisc del dev veth1 root

# route_changed_under_load - ibv_rc_pingpong from rv0 to rv1, and a route
# to rv1's address through a gateway that does not answer (192.0.2.99)
# added under it: a connected QP keeps its route between packets only
# while nothing changed the routes (xmit.rs: KeptRoute, dst_check, as
# soft-RoCE keeps it in the QP's socket), so rv0's packets go to the
# gateway, nothing is acknowledged and rv0 sends again (rc_retransmit);
# the route deleted, they go to rv1 again and the acknowledgements
# resume.  With a route kept regardless, none of it would show.  (An
# unreachable route would not do: a lookup with the output device given
# takes a destination with no route as on the link, ip_route_output_key_hash_rcu.)
route_changed_under_load() {
	local srv cli rc=0 ack0 re0 i
	PORT=$((PORT + 1))
	ip netns exec $NS timeout 60 ibv_rc_pingpong -d rv1 -g "$p4" -s 64 -n 1000000 -p $PORT -e \
		>"$TMP/srv" 2>&1 &
	srv=$!
	(
		for ((i = 0; i < 50; i++)); do
			timeout 60 ibv_rc_pingpong -d rv0 -g "$g4" -s 64 -n 1000000 -p $PORT -e $IP4_B \
				>"$TMP/cli" 2>&1
			grep -q "Couldn't connect" "$TMP/cli" || exit 0
			sleep 0.1
		done
	) &
	cli=$!
	# until_acks N - rv0 took N more acknowledgements than ack0 (30 s).
	until_acks() {
		for ((i = 0; i < 300; i++)); do
			[ "$(counter rv0 rc_ack)" -gt $((ack0 + $1)) ] && return 0
			sleep 0.1
		done
		return 1
	}
	ack0=$(counter rv0 rc_ack)
	until_acks 20 || { echo "# no traffic before the route changed"; rc=1; }
	ip route add $IP4_B/32 via 192.0.2.99 dev veth0 || rc=1
	re0=$(counter rv0 rc_retransmit)
	sleep 2
	[ "$(counter rv0 rc_retransmit)" -gt "$re0" ] ||
		{ echo "# rv0 sent nothing again while its packets went to the gateway"; rc=1; }
	ip neigh show 192.0.2.99 dev veth0 | sed 's/^/# the gateway: /'
	ip route del $IP4_B/32 via 192.0.2.99 dev veth0 || rc=1
	ack0=$(counter rv0 rc_ack)
	until_acks 20 || { echo "# the acknowledgements did not resume"; rc=1; }
	kill $srv 2>/dev/null
	wait $srv
	pkill -P $cli timeout
	wait $cli
	return $rc
}

# link_del_under_load - rdma link del rv0 while ibv_rc_pingpong (with
# completion events: a polling end would poll the zeroed ring of a
# disassociated context for ever) runs between rv0 and rv1: it returns,
# rv0's end ends, and rv0 comes back and carries traffic again.
link_del_under_load() {
	local srv cli rc=0
	PORT=$((PORT + 1))
	ip netns exec $NS timeout 60 ibv_rc_pingpong -d rv1 -g "$p4" -s 4096 -n 1000000 -p $PORT -e \
		>"$TMP/srv" 2>&1 &
	srv=$!
	sleep 1
	timeout 60 ibv_rc_pingpong -d rv0 -g "$g4" -s 4096 -n 1000000 -p $PORT -e $IP4_B \
		>"$TMP/cli" 2>&1 &
	cli=$!
	sleep 3
	timeout 30 rdma link del rv0 || { echo "# rdma link del rv0 did not return"; rc=1; }
	# The ends see the device go (or their peer stop answering); neither
	# may outlive its timeout.
	wait $cli
	[ $? = 124 ] && { echo "# the client outlived the device"; rc=1; }
	kill $srv 2>/dev/null
	wait $srv
	rdma link add rv0 type rverbs netdev veth0 || return 1
	g4=$(wait_gid rv0 ::ffff:$IP4_A) || return 1
	return $rc
}

# windows_held_while END CMD... - mw_cases.py's bound_held: memory windows
# of both types bound on rv0, rv1 writing and reading through them over and
# over; once both worked, CMD (rdma link del rv0, rmmod rverbs) under it:
# CMD returns within 30 s, and the script ends within 60 s on the failure
# END, an extended regular expression ("status (10|12)": rv1's access ends
# in IBV_WC_REM_ACCESS_ERR when it reached rv0's QP after uverbs' cleanup
# of the context took the windows, which it does newest first, before the
# QP; else in IBV_WC_RETRY_EXC_ERR, nothing answering; both seen, debug
# and stock lane. "no completion": rv1 went too), having seen both windows
# work.
windows_held_while() {
	local want=$1 pid i rc=0 t0=$SECONDS st
	shift
	python3 -X faulthandler "$MWC" rv0 "$g4" rv1 "$p4" bound_held >"$TMP/held" 2>&1 &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -qx bound "$TMP/held" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -qx bound "$TMP/held"; then
		# What it was doing (a SIGTERM makes mw_cases.py print its
		# Python stack), or how it ended.
		if kill -0 $pid 2>/dev/null; then
			echo "# no \"bound\" from mw_cases.py in $((SECONDS - t0)) s; in the kernel:"
			sed 's/^/#   /' /proc/$pid/stack 2>/dev/null
			kill $pid
		fi
		wait $pid
		st=$?
		echo "# mw_cases.py ended with status $st after $((SECONDS - t0)) s, saying:"
		sed 's/^/#   /' "$TMP/held"
		df -h "$TMP" | sed 's/^/# space: /'
		return 1
	fi
	timeout 30 "$@" || { echo "# $* failed or did not return"; rc=1; }
	for ((i = 0; i < 600; i++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill $pid 2>/dev/null && { echo "# the script outlived its device"; rc=1; }
	wait $pid || rc=1
	grep -v '^bound$' "$TMP/held" | sed 's/^/# /'
	grep -qE "^bound_held: bound; [1-9][0-9]* accesses, then $want\$" "$TMP/held" ||
		{ echo "# expected the accesses to end in: $want"; rc=1; }
	return $rc
}

ksft_check "a route to rv1 through a silent gateway added under RC traffic, then deleted: rv0 follows both" \
	route_changed_under_load
ksft_check "rdma link del rv0 under RC traffic: returns, the ends end" link_del_under_load
ksft_check "rdma link del rv0 with memory windows bound and in use: returns, the script ends" \
	windows_held_while "status (10|12)" rdma link del rv0
rdma link add rv0 type rverbs netdev veth0 && g4=$(wait_gid rv0 ::ffff:$IP4_A)
ksft_check "rv0 again -> rv1: ibv_rc_pingpong -c, 4096 bytes" \
	pingpong $NS rv1 "$p4" rv0 "$g4" $IP4_B 4096 $ITERS -c

ksft_check "rv0: nothing live afterwards" \
	bash -c "grep -qx 'qp 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'cq 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'mr 0 max [0-9]*' $DBG/rv0/resources"
ksft_check "rmmod rverbs with memory windows bound on rv0 and in use from rv1: returns, the script ends" \
	windows_held_while "no completion" rmmod rverbs
ksft_check "rverbs is unloaded, no rv device is left" \
	bash -c "[ ! -e /sys/module/rverbs ] && ! rdma link show | grep -q ' rv[01]/'"
ktap_finished
