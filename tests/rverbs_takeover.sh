#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The takeover: rverbs_takeover.ko patches ib_core's AH, XRCD and QP
# modify verbs onto the Rust core. With it on, rdma-core's tools
# interoperate between rxe0 and rxe1 (second namespace), every AH goes
# through Rust, and RC connections (ibv_rc_pingpong over IPv4 and IPv6
# GIDs, rping through rdma_cm) are resolved by Rust: ib_core's
# rdma_addr_find_l2_eth_by_grh is never entered, where it is with the
# takeover off; objects cross
# the modes (created under C, destroyed under Rust and the reverse); it can
# be switched off while UD traffic runs; XRCD on rxe fails as in C; the
# Rust core's entry points can be probed (kprobes count its calls) and its
# tracepoints (rverbs:*) show each create, destroy and resolution.

. "$(dirname "$0")/lib.sh"

PROBE=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ah_probe

trap teardown EXIT

setup() {
	modprobe rdma_rxe && modprobe ib_uverbs && modprobe rdma_ucm || return 1
	insmod "$RVERBS_KO" || return 1
	ns_setup && rxe_pair_up || return 1
	GID_A=$(gid_index rxe0 ::ffff:$IP4_A) && GID_B=$(gid_index rxe1 ::ffff:$IP4_B) &&
		GID6_A=$(gid_index rxe0 $IP6_A) && GID6_B=$(gid_index rxe1 $IP6_B)
}

# pingpong PROG ITERS PORT - server on rxe1 in the peer namespace, client
# here on rxe0; succeeds when both ends complete every iteration.
pingpong() {
	local prog=$1 iters=$2 port=$3 srv rc
	ip netns exec $NS timeout 120 $prog -d rxe1 -g "$GID_B" -n "$iters" -p "$port" \
		>/tmp/$prog.srv 2>&1 &
	srv=$!
	wait_listen $NS "$port"
	timeout 120 $prog -d rxe0 -g "$GID_A" -n "$iters" -p "$port" $IP4_B >/tmp/$prog.cli 2>&1
	rc=$?
	wait $srv || rc=1
	[ $rc = 0 ] && grep -q "$iters iters" /tmp/$prog.cli && grep -q "$iters iters" /tmp/$prog.srv
}

rping_pair() {
	local srv rc
	ip netns exec $NS timeout 60 rping -s -a $IP4_B -C 3 >/tmp/rping.srv 2>&1 &
	srv=$!
	sleep 2
	timeout 60 rping -c -a $IP4_B -C 3 -v >/tmp/rping.cli 2>&1
	rc=$?
	wait $srv || rc=1
	[ $rc = 0 ] && [ "$(grep -c 'ping data' /tmp/rping.cli)" = 3 ]
}

# rping_cm - rping_pair, and the connection manager made a reply address
# (cm_req_handler's ib_init_ah_attr_from_wc) with the Rust core.
rping_cm() {
	local before
	before=$(counter ah_attr_from_wc)
	rping_pair && [ "$(counter ah_attr_from_wc)" -gt "$before" ]
}

# rc_proof on|off PORT - RC traffic (ibv_rc_pingpong over IPv4 GIDs, over
# IPv6 GIDs, rping through rdma_cm) with a kprobe on ib_core's
# rdma_addr_find_l2_eth_by_grh: with the takeover on, every modify is
# Rust's (qp_modified moves by at least the 18 modifies of the three
# connections' six QPs) and the kprobe never fires; with it off, ib_core
# resolves each connection (the kprobe fires) and qp_modified stays.
rc_proof() {
	local t=/sys/kernel/tracing mode=$1 port=$2 hits modified ok=1
	[ -e $t/kprobe_events ] || mount -t tracefs tracefs $t || return 1
	echo 'p:rverbs_kp/rverbs_kp_l2 rdma_addr_find_l2_eth_by_grh' >>$t/kprobe_events || return 1
	echo 1 >$t/events/rverbs_kp/enable
	modified=$(counter qp_modified)
	pingpong ibv_rc_pingpong 20 "$port" || { ktap_print_msg "ibv_rc_pingpong IPv4 failed"; ok=0; }
	GID_A=$GID6_A GID_B=$GID6_B pingpong ibv_rc_pingpong 20 $((port + 1)) ||
		{ ktap_print_msg "ibv_rc_pingpong IPv6 failed"; ok=0; }
	rping_pair || { ktap_print_msg "rping failed"; ok=0; }
	modified=$(($(counter qp_modified) - modified))
	echo 0 >$t/events/rverbs_kp/enable
	hits=$(awk '$1 == "rverbs_kp_l2" { print $2 }' $t/kprobe_profile)
	echo '-:rverbs_kp/rverbs_kp_l2' >>$t/kprobe_events
	ktap_print_msg "rdma_addr_find_l2_eth_by_grh: $hits calls; qp_modified: +$modified"
	if [ "$mode" = on ]; then
		[ "$hits" = 0 ] && [ "$modified" -ge 18 ] || ok=0
	else
		[ "$hits" -ge 3 ] && [ "$modified" = 0 ] || ok=0
	fi
	[ $ok = 1 ]
}

xrcd_result() {
	$PROBE -d rxe0 -X | sed -n 's/^xrcd: //p'
}

# xrcd_no_core - XRCD on rxe0 fails with EOPNOTSUPP, and no counter of the
# Rust core moves (it never reaches a core).
xrcd_no_core() {
	local before after
	before=$(counters_all)
	[ "$(xrcd_result)" = -95 ] || return 1
	after=$(counters_all)
	[ "$before" = "$after" ]
}

# held_ah SWITCH - create an AH (rxe0 -> rxe1), run SWITCH, destroy it;
# prints the destroy result.
held_ah() {
	local line
	coproc HELD { $PROBE -d rxe0 -s "$GID_A" -g ::ffff:$IP4_B -H; }
	while read -r line <&"${HELD[0]}"; do
		[ "$line" = created ] && break
		[ "${line#create: }" != "$line" ] && [ "$line" != "create: 0" ] && break
	done
	$1 >/dev/null
	echo go >&"${HELD[1]}"
	sed -n 's/^destroy: //p' <&"${HELD[0]}"
	wait $HELD_PID 2>/dev/null
}

# kprobe_hits N WANT - kprobes on the Rust core's exported entry points (C
# functions, so the tracers see them: rust/takeover/exports.c) while
# rdma-core makes N AHs: each probe must count WANT calls (N with the
# takeover on, 0 with it off: then ib_core's C core runs).
kprobe_hits() {
	local t=/sys/kernel/tracing n=$1 want=$2 hits ok=1
	[ -e $t/kprobe_events ] || mount -t tracefs tracefs $t || return 1
	printf '%s\n' 'p:rverbs_kp/rverbs_kp_create rverbs_create_user_ah' \
		'p:rverbs_kp/rverbs_kp_destroy rverbs_destroy_ah_user' >>$t/kprobe_events || return 1
	echo 1 >$t/events/rverbs_kp/enable
	$PROBE -d rxe0 -s "$GID_A" -g ::ffff:$IP4_B -N "$n" >/dev/null || ok=0
	echo 0 >$t/events/rverbs_kp/enable
	hits=$(awk '$1 ~ /^rverbs_kp_/ { printf "%s=%s ", $1, $2 }' $t/kprobe_profile)
	printf '%s\n' '-:rverbs_kp/rverbs_kp_create' '-:rverbs_kp/rverbs_kp_destroy' \
		>>$t/kprobe_events
	[ "$hits" = "rverbs_kp_create=$want rverbs_kp_destroy=$want " ] || {
		ktap_print_msg "kprobe hits: $hits (expected $want of each)"
		ok=0
	}
	[ $ok = 1 ]
}

# traced ARGS... - the events of rverbs' tracepoints (rverbs:*) while
# ah_probe makes one AH on rxe0 with ARGS: "EVENT: FIELDS" lines.
traced() {
	local t=/sys/kernel/tracing
	[ -e $t/trace ] || mount -t tracefs tracefs $t || return 1
	: >$t/trace
	echo 1 >$t/events/rverbs/enable || return 1
	$PROBE -d rxe0 "$@" >/dev/null
	echo 0 >$t/events/rverbs/enable
	grep -o 'rverbs_[a-z_]*: .*' $t/trace
}

# trace_cached - a create to the cached IPv4 neighbour and its destroy are
# traced: the resolution by a valid neighbour, with B's MAC, no wait, then
# the create (ret 0, same MAC, hop limit 64), then the destroy of that AH.
trace_cached() {
	local out mac ah
	mac=$(ip neigh show $IP4_B dev veth0 | awk '{ print $3 }')
	out=$(traced -s "$GID_A" -g ::ffff:$IP4_B)
	printf '%s\n' "$out" | sed 's/^/# /'
	ah=$(printf '%s\n' "$out" | sed -n 's/^rverbs_create_ah: .* ah=\([0-9a-f]*\) ret=0 .*/\1/p')
	[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] &&
		printf '%s\n' "$out" | sed -n 1p |
		grep -q "^rverbs_resolve: path=neigh dgid=::ffff:$IP4_B dmac=$mac hop_limit=64 wait_ns=0$" &&
		printf '%s\n' "$out" | sed -n 2p |
		grep -q "^rverbs_create_ah: device=rxe0 ah=$ah ret=0 port=1 type=2 sgid_index=$GID_A dgid=::ffff:$IP4_B dmac=$mac hop_limit=64 ns=[1-9]" &&
		printf '%s\n' "$out" | sed -n 3p | grep -q "^rverbs_destroy_ah: device=rxe0 ah=$ah ret=0 ns=[1-9]"
}

# trace_multicast - a multicast destination is traced with its mapped MAC.
trace_multicast() {
	traced -s "$GID_A" -g ::ffff:239.1.2.3 | head -n 1 |
		grep -q '^rverbs_resolve: path=multicast dgid=::ffff:239.1.2.3 dmac=01:00:5e:01:02:03 '
}

# trace_failure - a create that fails in the kernel (an on-link address
# nobody has: ARP times out after 1 s) is traced with its error and the
# hop limit ib_core sets on failure, and nothing was resolved.
trace_failure() {
	local out
	out=$(traced -s "$GID_A" -g ::ffff:192.0.2.99)
	printf '%s\n' "$out" | sed 's/^/# /'
	[ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] &&
		printf '%s\n' "$out" |
		grep -q '^rverbs_create_ah: device=rxe0 ah=0000000000000000 ret=-110 .* dgid=::ffff:192.0.2.99 .* hop_limit=255 ns=[1-9]'
}

ktap_print_header
setup || ktap_exit_fail_msg "setup failed"
ktap_set_plan 23
ping -c 1 -W 2 $IP4_B >/dev/null

ksft_check "takeover loads, its transition completes" takeover_on
ksft_check "livepatch rverbs_takeover is enabled" test "$(cat $LP/enabled)" = 1
# delete_module answers EBUSY; kmod's rmmod names the user.
ksft_check "rverbs.ko cannot be unloaded while the takeover uses it (EBUSY)" \
	bash -c 'out=$(rmmod rverbs 2>&1) && exit 1; grep -q "is in use by: rverbs_takeover" <<<"$out" ||
		{ echo "# rmmod rverbs: $out"; exit 1; }'

created=$(counter ah_created)
destroyed=$(counter ah_destroyed)
ksft_check "ibv_ud_pingpong rxe0 -> rxe1 with the Rust core" pingpong ibv_ud_pingpong 50 18600
ksft_check "both UD AHs were created and destroyed by the Rust core" \
	test $(($(counter ah_created) - created)) = 2 -a $(($(counter ah_destroyed) - destroyed)) = 2
# RC QPs take their path in modify_qp, without an address handle.
ksft_check "ibv_rc_pingpong rxe0 -> rxe1, takeover on (RC: its path resolved at RTR by the Rust core)" \
	pingpong ibv_rc_pingpong 50 18601
ksft_check "RC over IPv4 and IPv6 GIDs and rping, takeover on: modified by Rust, ib_core's resolution never entered" \
	rc_proof on 18610
ksft_check "rping rxe0 -> rxe1, takeover on (RC through rdma_cm: the CM's reply addresses from the Rust core)" \
	rping_cm
ksft_check "kprobes on rverbs_create_user_ah/rverbs_destroy_ah_user fire once per AH, takeover on" \
	kprobe_hits 7 7
ksft_check "tracepoints: a cached IPv4 AH is traced resolved (neighbour, MAC, no wait), created and destroyed" \
	trace_cached
ksft_check "tracepoints: a multicast AH is traced with its mapped MAC" trace_multicast
ksft_check "tracepoints: a failing create is traced with its error (ETIMEDOUT), nothing resolved" \
	trace_failure
# Soft-RoCE has no XRC: libibverbs fails ibv_open_xrcd before the kernel.
ksft_check "ibv_open_xrcd on rxe0 fails with EOPNOTSUPP in libibverbs, takeover on (no core involved)" \
	xrcd_no_core

ksft_check "takeover disables and unloads" takeover_off
ksft_check "ibv_open_xrcd on rxe0 fails with EOPNOTSUPP in libibverbs, takeover off" xrcd_no_core
ksft_check "kprobes on rverbs_create_user_ah/rverbs_destroy_ah_user stay at 0, takeover off" \
	kprobe_hits 7 0
ksft_check "RC over IPv4 and IPv6 GIDs and rping, takeover off: ib_core resolves, Rust's counters stay" \
	rc_proof off 18620
ksft_check "tracepoints stay silent with the takeover off (ib_core's C core runs)" \
	test -z "$(traced -s "$GID_A" -g ::ffff:$IP4_B)"

created=$(counter ah_created)
destroyed=$(counter ah_destroyed)
ksft_check "AH created under C is destroyed under Rust" test "$(held_ah takeover_on)" = 0
ksft_check "... counted as destroyed, not created, by Rust" \
	test $(($(counter ah_created) - created)) = 0 -a $(($(counter ah_destroyed) - destroyed)) = 1

created=$(counter ah_created)
destroyed=$(counter ah_destroyed)
ksft_check "AH created under Rust is destroyed under C" test "$(held_ah takeover_off)" = 0
ksft_check "... counted as created, not destroyed, by Rust" \
	test $(($(counter ah_created) - created)) = 1 -a $(($(counter ah_destroyed) - destroyed)) = 0

sent_pkts() {
	cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts
}

switch_during_traffic() {
	local pp rc running start i iters=30000 after=1000
	# Under the debug kernel (KASAN, lockdep, TCG) a tenth: 30,000
	# round trips there take longer than the ping-pong's 120 s.
	[ "${RVERBS_LANE:-}" = debug ] && iters=3000 after=300
	takeover_on || return 1
	start=$(sent_pkts)
	pingpong ibv_ud_pingpong $iters 18602 &
	pp=$!
	# Switch once the UD traffic is flowing ($after packets out), while the
	# ping-pong is still running.
	for ((i = 0; i < 300; i++)); do
		[ $(($(sent_pkts) - start)) -gt $after ] && break
		sleep 0.1
	done
	kill -0 $pp 2>/dev/null && running=1
	takeover_off
	rc=$?
	if [ -z "$running" ]; then
		ktap_print_msg "the ping-pong had ended before the switch:"
		sed "s/^/# /" /tmp/ibv_ud_pingpong.cli /tmp/ibv_ud_pingpong.srv
		return 1
	fi
	ktap_print_msg "switched after $(($(sent_pkts) - start)) packets"
	wait $pp || {
		ktap_print_msg "the ping-pong failed; client, then server:"
		tail -n 5 /tmp/ibv_ud_pingpong.cli /tmp/ibv_ud_pingpong.srv | sed "s/^/# /"
		return 1
	}
	[ $rc = 0 ] || ktap_print_msg "takeover_off failed"
	[ $rc = 0 ]
}
ksft_check "takeover disabled while ibv_ud_pingpong runs; traffic completes" switch_during_traffic

ktap_finished
