#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Differential test of the connected-QP modify (issue 31): ib_core resolves
# a RoCE destination when userspace moves an RC, UC or XRC QP to RTR with
# an address vector (ib_modify_qp_with_udata).  Every scenario of
# rverbs_ah_diff.sh runs here with an RC QP on rxe0 instead of an AH
# (qp_probe: INIT, RTR with the scenario's path, RTS, one SEND whose
# first packet is captured on veth0), with ib_core's C core (takeover off)
# and with the Rust core (takeover on), and both must give exactly the
# result ib_core is specified to give: the errno of the modify to RTR, and
# on the wire the destination MAC, hop limit, VLAN and traffic class.
# With Rust, the scenario's counter moves by one and qp_modified by each
# modify; with C, no counter of the Rust core moves.  Then what only a QP
# has: a UC QP, a UD QP given a path (filled, not resolved, refused by the
# driver), an alternate path on RoCE, PSNs over 24 bits (masked, with
# ib_core's warning).  Kprobes count ib_core's functions: its resolution
# (rdma_addr_find_l2_eth_by_grh) is entered with C and never with Rust;
# the three that ib_core does not export and the Rust core calls through
# the takeover's livepatch relocations (rdma_counter_bind_qp_auto at
# INIT, rdma_lag_get_ah_roce_slave and _put_ for each path) are entered as
# often with Rust as with C.
#
# Topology and scenarios: rverbs_ah_diff.sh's (sourced; its own main does
# not run).  Every address is a documentation/benchmark range; no packet
# leaves the guest.

. "$(dirname "$0")/rverbs_ah_diff.sh"

PROBE=$RVERBS_TEST_BIN/qp_probe
# rverbs_ah_diff.sh's capture file, read by its probe().
# shellcheck disable=SC2034
CAP=/tmp/rverbs_qp_diff.cap
KP=/sys/kernel/tracing
# The kprobes: name (as in kprobe_profile) and ib_core function.
declare -A KPROBES=(
	[rverbs_qp_diff_l2]=rdma_addr_find_l2_eth_by_grh
	[rverbs_qp_diff_bind]=rdma_counter_bind_qp_auto
	[rverbs_qp_diff_lag_get]=rdma_lag_get_ah_roce_slave
	[rverbs_qp_diff_lag_put]=rdma_lag_put_ah_roce_slave
)

qp_diff_teardown() {
	local k
	for k in "${!KPROBES[@]}"; do
		echo 0 >$KP/events/kprobes/$k/enable 2>/dev/null
		echo "-:$k" >>$KP/kprobe_events 2>/dev/null
	done
	rdma link del rxe_b 2>/dev/null
	ip link del rvbond0 2>/dev/null
	ip link del veth4 2>/dev/null
	# Its sysfs file (bonding_masters) is a link of /sys/class/net.
	modprobe -r bonding 2>/dev/null
	ah_diff_teardown
}

# bond_setup - rxe_b on an active-backup bond (slave veth4, whose peer
# veth5 stays here), 198.18.9.1/24 with a permanent neighbour .2: a RoCE v2
# path with a flow label from there has a bond slave to send on
# (rdma_lag_get_ah_roce_slave finds veth4), which the modify must give
# back.  Returns 2 in a kernel without the bonding driver (the debug
# kernel's configuration has none), whose bond cases are then skipped.
bond_setup() {
	modprobe bonding max_bonds=0 2>/dev/null || return 2
	ip link add rvbond0 type bond mode active-backup &&
	ip link add veth4 type veth peer name veth5 &&
	ip link set veth4 master rvbond0 &&
	ip link set veth5 up && ip link set veth4 up && ip link set rvbond0 up &&
	ip addr add 198.18.9.1/24 dev rvbond0 &&
	ip neigh add 198.18.9.2 lladdr 02:00:00:00:00:99 dev rvbond0 nud permanent &&
	rdma link add rxe_b type rxe netdev rvbond0
}
trap qp_diff_teardown EXIT

# kprobe_hits NAME - how often the function of kprobe NAME was entered.
kprobe_hits() {
	awk -v p="$1" '$1 == p { print $2 }' $KP/kprobe_profile
}

# moved_ok MODE CTRS CREATE BEFORE AFTER MODIFIES - whether the Rust
# core's counters moved as they must: with C, none; with Rust, each of
# CTRS (space-separated; "-" for none) by one and qp_modified by MODIFIES
# (the successful modifies of the probe).  Prints what moved otherwise.
moved_ok() {
	local mode=$1 ctr moved want=''
	moved=$(counters_moved "$4" "$5")
	if [ "$mode" = Rust ]; then
		want="qp_modified +$6"
		for ctr in $2; do
			[ "$ctr" != - ] && want=$(printf '%s\n%s +1' "$want" "$ctr")
		done
		want=$(sort <<<"$want")
		moved=$(sort <<<"$moved")
	fi
	[ "$moved" = "$want" ] && return 0
	ktap_print_msg "counters moved: '${moved//$'\n'/, }', want '${want//$'\n'/, }'"
	return 1
}

# modifies CREATE SENT - how many modifies of a probe succeeded: INIT,
# then RTR and RTS when RTR did.
modifies() {
	[ "$1" = 0 ] && echo 3 || echo 1
}

# extra_case MODE NAME WANT CTR MODIFIES SGID DGID ARGS... - one probe
# without the wire: its "create:" and "query:" lines must be WANT (a
# pattern of the form "create=E" or "create=E|QUERY").
extra_case() {
	local mode=$1 name=$2 want=$3 ctr=$4 n=$5 sgid=$6 dgid=$7 out got before after ok=1
	shift 7
	before=$(counters_all)
	out=$($PROBE -d "${PROBE_DEV:-rxe0}" -s "${GIDX[$sgid]}" -g "$dgid" -l $USER_HOP "$@")
	after=$(counters_all)
	got="create=$(sed -n 's/^create: //p' <<<"$out")"
	if [ "${want#*|}" != "$want" ]; then
		got="$got|$(sed -n 's/^query: //p' <<<"$out")"
	fi
	[ "$got" = "$want" ] || {
		ok=0
		ktap_print_msg "$name [$mode]: got '$got', want '$want'"
	}
	moved_ok "$mode" "$ctr" "" "$before" "$after" "$n" || ok=0
	if [ $ok = 1 ]; then ktap_test_pass "$name [$mode]"; else ktap_test_fail "$name [$mode]"; fi
}

# scenario_loop MODE PREFIX - every scenario of rverbs_ah_diff.sh with an
# RC QP on PROBE_DEV (rxe0 by default), each a KTAP case named PREFIX:
# NAME [MODE].  The QP's path as ibv_query_qp gives it back (after RTS) is
# kept from the C run (QUERY[PREFIX/NAME]) and must be the same with Rust.
scenario_loop() {
	local mode=$1 prefix=$2 c name prep sgid dgid args expect ctr got before after ok create
	local query
	for c in "${CASES[@]}"; do
		IFS='|' read -r name prep sgid dgid args expect ctr <<<"$c"
		$prep
		before=$(counters_all)
		got=$(probe "$sgid" "$dgid" $args)
		after=$(counters_all)
		query=$(sed -n 's/^query: //p' $CAP.out)
		ok=1
		[ "$got" = "$expect" ] || {
			ok=0
			ktap_print_msg "$prefix: $name [$mode]: got '$got', want '$expect'"
		}
		if [ "$mode" = C ]; then
			QUERY[$prefix/$name]=$query
		elif [ "$query" != "${QUERY[$prefix/$name]}" ]; then
			ok=0
			ktap_print_msg "$prefix: $name: queried path with C: '${QUERY[$prefix/$name]}', with Rust: '$query'"
		fi
		create=${got%% *}
		moved_ok $mode "$ctr" "" "$before" "$after" "$(modifies "${create#create=}")" ||
			ok=0
		if [ $ok = 1 ]; then
			ktap_test_pass "$prefix: $name [$mode]"
		else
			ktap_test_fail "$prefix: $name [$mode]"
		fi
	done
}

# rv0_phase - the scenarios again on rv0 (rverbs' software device, which
# has RC) in place of rxe0 on veth0, with both cores; then the case only
# rv0 has, a RoCE v1 source GID (rverbs_ah_diff.sh loads rverbs with
# roce_v1=1) towards a link-local destination: its MAC comes from the GID,
# no neighbour (rv0 sends RoCE v2 only, so nothing is on the wire: the
# modify's result, the QP's path as queried and, with Rust, the
# link-local counter).
rv0_phase() {
	local mode
	rdma link del rxe0 || return 1
	# Up again for its GID to be looked up (its scenario takes it down).
	ip link set veth0.200 up || return 1
	rdma link add rv0 type rverbs netdev veth0 || return 1
	GIDX=()
	gid_indexes rv0 "RoCE v2"
	GIDX[v1:$OWN_LL]=$(gid_index rv0 "$OWN_LL" "IB/RoCE v1")
	for mode in C Rust; do
		if [ $mode = Rust ]; then
			takeover_on || return 1
		fi
		PROBE_DEV=rv0 scenario_loop $mode "rv0 RC"
		PROBE_DEV=rv0 extra_case $mode "rv0 RC: roce v1 link-local destination (MAC from the GID)" \
			"create=0|state=2 port=1 global=1 sgid_index=${GIDX[v1:$OWN_LL]} hop=$USER_HOP fl=0x0 tc=0 sl=0 dgid=$PEER_LL psn=0/0" \
			dmac_link_local 2 "v1:$OWN_LL" "$PEER_LL"
		if [ $mode = Rust ]; then
			takeover_off || return 1
		fi
	done
	rdma link del rv0
}

qp_diff_main() {
	local mode got before after ok hits k
	local psn_warnings lag del i
	local -A HITS QUERY
	ktap_print_header
	setup || ktap_exit_fail_msg "setup failed"
	start_capture || ktap_exit_fail_msg "tcpdump did not start"
	for k in "${!KPROBES[@]}"; do
		echo "p:$k ${KPROBES[$k]}" >>$KP/kprobe_events &&
			echo 1 >$KP/events/kprobes/$k/enable ||
			ktap_exit_fail_msg "cannot make the kprobe on ${KPROBES[$k]}"
	done
	BOND=1
	bond_setup || {
		[ $? = 2 ] || ktap_exit_fail_msg "bond setup failed"
		BOND=0
	}
	mapfile -t CASES < <(scenarios)
	declare -A GIDX
	gid_indexes rxe0
	[ $BOND = 1 ] && GIDX[::ffff:198.18.9.1]=$(gid_index rxe_b ::ffff:198.18.9.1)
	# Per mode: the scenarios, 8 cases of a QP's own, the resolution's
	# kprobe; then two unexported functions' kprobes and the bond's
	# removal; then the scenarios and the RoCE v1 case on rv0 with each core.
	ktap_set_plan $(((${#CASES[@]} + 9) * 2 + 3 + (${#CASES[@]} + 1) * 2))

	for mode in C Rust; do
		if [ $mode = Rust ]; then
			takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
		fi
		for k in "${!KPROBES[@]}"; do
			HITS[$k/$mode]=$(kprobe_hits $k)
		done
		scenario_loop $mode RC
		for k in "${!KPROBES[@]}"; do
			HITS[$k/$mode]=$(($(kprobe_hits $k) - HITS[$k/$mode]))
		done
		hits=${HITS[rverbs_qp_diff_l2/$mode]}

		neigh_valid 192.0.2.2
		before=$(counters_all)
		got=$(probe ::ffff:192.0.2.1 ::ffff:192.0.2.2 -t uc)
		after=$(counters_all)
		ok=1
		[ "$got" = "create=0 dmac=$PEER_MAC hop=64 vlan=-" ] || {
			ok=0
			ktap_print_msg "UC [$mode]: got '$got'"
		}
		moved_ok $mode dmac_neigh_fast "" "$before" "$after" 3 || ok=0
		if [ $ok = 1 ]; then
			ktap_test_pass "UC: ipv4 neighbour valid [$mode]"
		else
			ktap_test_fail "UC: ipv4 neighbour valid [$mode]"
		fi
		# A UD QP: the path's source GID is filled, nothing resolved, and
		# the driver refuses a path at RTR (ib_modify_qp_is_ok).
		extra_case $mode "UD QP given a path at RTR (EINVAL from the driver)" \
			create=-22 error.22 1 ::ffff:192.0.2.1 ::ffff:192.0.2.2 -t ud
		# The primary path is resolved before the alternate one is
		# refused (ib_core's order).
		neigh_valid 192.0.2.2
		extra_case $mode "RC QP with an alternate path on RoCE (EINVAL after the primary is resolved)" \
			create=-22 "dmac_neigh_fast error.22" 1 ::ffff:192.0.2.1 ::ffff:192.0.2.2 -A
		extra_case $mode "RC QP without GRH on RoCE (EINVAL)" \
			create=-22 error.22 1 ::ffff:192.0.2.1 ::ffff:192.0.2.2 -n
		psn_warnings=$(dmesg | grep -c "_ib_modify_qp rq_psn overflow, masking to 24 bits")
		extra_case $mode "RC QP with an RQ PSN over 24 bits (masked)" \
			"create=0|state=2 port=1 global=1 sgid_index=${GIDX[::ffff:192.0.2.1]} hop=64 fl=0x0 tc=0 sl=0 dgid=::ffff:192.0.2.2 psn=5/0" \
			dmac_neigh_fast 2 ::ffff:192.0.2.1 ::ffff:192.0.2.2 -r 0x1000005
		ksft_check "the RQ PSN's warning is ib_core's [$mode]" \
			test "$(dmesg | grep -c "_ib_modify_qp rq_psn overflow, masking to 24 bits")" = $((psn_warnings + 1))
		if [ $BOND = 1 ]; then
			lag=$(kprobe_hits rverbs_qp_diff_lag_put)
			PROBE_DEV=rxe_b extra_case $mode "RC QP on a bond, RoCE v2 with a flow label" \
				create=0 dmac_neigh_fast 2 ::ffff:198.18.9.1 ::ffff:198.18.9.2 -f 0x12345
			lag=$(($(kprobe_hits rverbs_qp_diff_lag_put) - lag))
			ksft_check "the bond's slave was given back once ($lag rdma_lag_put_ah_roce_slave) [$mode]" \
				test "$lag" = 1
		else
			ktap_test_skip "RC QP on a bond [$mode]: no bonding driver in this kernel"
			ktap_test_skip "the bond's slave was given back once [$mode]: no bonding driver"
		fi
		if [ $mode = C ]; then
			ksft_check "C: ib_core's rdma_addr_find_l2_eth_by_grh resolved the scenarios ($hits calls)" \
				test "$hits" -gt 20
		else
			ksft_check "Rust: ib_core's rdma_addr_find_l2_eth_by_grh never entered ($hits calls)" \
				test "$hits" = 0
		fi
		if [ $mode = Rust ]; then
			takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
		fi
	done
	# rdma_lag_put_ah_roce_slave: C calls it for every path, with no
	# slave too (a no-op); Rust only for a slave (the bond case above).
	for k in rverbs_qp_diff_bind rverbs_qp_diff_lag_get; do
		ksft_check "${KPROBES[$k]} (not exported) entered as often with Rust as with C (${HITS[$k/Rust]}, ${HITS[$k/C]})" \
			test "${HITS[$k/C]}" -gt 0 -a "${HITS[$k/Rust]}" = "${HITS[$k/C]}"
	done
	# A reference left on the slave would make its removal wait forever.
	if [ $BOND = 1 ]; then
		rdma link del rxe_b
		ip link del rvbond0 &
		del=$!
		for ((i = 0; i < 200; i++)); do
			kill -0 $del 2>/dev/null || break
			sleep 0.1
		done
		ksft_check "the bond is removed at once (no reference left on its slave)" \
			test "$i" -lt 200
		ip link del veth4 2>/dev/null
		modprobe -r bonding
	else
		ktap_test_skip "the bond is removed at once: no bonding driver in this kernel"
	fi

	rv0_phase || ktap_exit_fail_msg "rv0 setup failed"
}

qp_diff_main
ktap_finished
