#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Differential test of ib_init_ah_attr_from_wc, the reply address of a
# received packet (what ib_core's MAD layer and CM answer through): the
# test module test_modules/rv_wc_ah.ko runs each scenario, a synthetic work
# completion and the 40 bytes of network header received with it, through
# ib_core's C function (takeover off) and through the Rust core's
# rverbs_init_ah_attr_from_wc, in this boot.  Each result must be the one
# ib_core is specified to give (verbs.c: the network type by flag or by the
# header's IPv4 checksum, the GIDs reversed, the local GID entry by GID,
# type and VLAN, the route's MAC and hop limit), and the two attributes
# must be identical byte for byte, the GID entry they reference included.
# With the C core no counter of the Rust core may move; with Rust,
# ah_attr_from_wc (or the error's counter) moves by one.
#
# Then with the takeover on, ib_core's own function must give Rust's
# result and move Rust's counters, and ib_core's rdma_addr_find_l2_eth_by_grh
# (its resolution, through rdma_resolve_ip) must not be entered (a kprobe's
# hits), where it is with the takeover off.  All of it on rxe0 (soft-RoCE),
# then on rv0 with RoCE v1 GIDs as well.
#
# Topology (lib.sh's ns_setup): veth0 192.0.2.1, 2001:db8::1 and VLAN 100
# 198.18.0.1 here; veth1 .2, ::2 and 198.18.0.2 in netns "peer".  Every
# address is a documentation/benchmark range; no packet leaves the guest.

. "$(dirname "$0")/lib.sh"

WCAH=${RVERBS_KAH%/*}/rv_wc_ah.ko
CASE=/sys/kernel/debug/rv_wc_ah/case
KP=/sys/kernel/tracing
KPROBE=rverbs_wc_ah_l2

# Work completion flags (enum ib_wc_flags) and network types.
GRH=1
WITH_VLAN=32
WITH_NET=64

cleanup() {
	rmmod rv_wc_ah 2>/dev/null
	echo 0 >$KP/events/kprobes/$KPROBE/enable 2>/dev/null
	echo "-:$KPROBE" >>$KP/kprobe_events 2>/dev/null
	ip link del veth0.100 2>/dev/null
	rdma link del rv0 2>/dev/null
	teardown
}
trap cleanup EXIT

# hex32 GID - the 16 bytes of a GID (any IPv6 text form) as 32 hex digits.
hex32() {
	local t
	t=$(gid_text "$1") || return 1
	echo "${t//:/}"
}

# ip4_hdr SRC DST [PREFIX] - the 40-byte network header of a RoCE v2 IPv4
# packet from SRC to DST: 20 bytes PREFIX (hex, zeros by default: what is
# before the IPv4 header in the buffer), then the header with its
# checksum.  IHL=N in the environment gives another header length (the
# checksum stays that of the 20 bytes).
ip4_hdr() {
	local prefix=${3:-0000000000000000000000000000000000000000} s d w sum=0
	local -a words
	printf -v s '%02x%02x%02x%02x' ${1//./ }
	printf -v d '%02x%02x%02x%02x' ${2//./ }
	# Version and IHL, TOS; length 60; ID; don't fragment; TTL 64, UDP.
	words=("4${IHL:-5}00" 003c 0000 4000 4011 "${s:0:4}" "${s:4:4}" "${d:0:4}" "${d:4:4}")
	for w in "${words[@]}"; do
		sum=$((sum + 16#$w))
	done
	while [ $sum -gt 65535 ]; do
		sum=$(((sum & 65535) + (sum >> 16)))
	done
	printf '%s%s%s%s%s%s%04x%s%s' "$prefix" "${words[@]:0:5}" $((~sum & 65535)) "$s" "$d"
}

# grh_hdr SRC DST [NEXT] [CLASS] [FLOW] - a 40-byte GRH / IPv6 header from
# GID SRC to GID DST, next header NEXT (17, UDP: RoCE v2 over IPv6; 27, the
# BTH: RoCE v1), traffic class and flow label.
grh_hdr() {
	local next=${3:-17} tc=${4:-0} fl=${5:-0}
	printf '%08x0020%02x40%s%s' $(((6 << 28) | (tc << 20) | fl)) "$next" \
		"$(hex32 "$1")" "$(hex32 "$2")"
}

# run_case CORE PORT FLAGS NET VLAN SL HDR - the module's result line.
run_case() {
	local line
	echo "$*" >$CASE || { echo "write failed"; return; }
	IFS= read -r line <$CASE
	echo "$line"
}

# field LINE NAME - NAME's value in a result line.
field() {
	local f
	for f in $1; do
		[ "${f%%=*}" = "$2" ] && { echo "${f#*=}"; return; }
	done
}

# matches LINE EXPECT - every NAME=VALUE of EXPECT is LINE's; "error:" lines
# (a reference left on failure) never match.
matches() {
	local f
	[[ $1 != *error:* ]] || return 1
	for f in $2; do
		[ "$(field "$1" "${f%%=*}")" = "${f#*=}" ] || return 1
	done
}

# Neighbour preparations, as rverbs_ah_diff.sh's.
neigh_valid() { ping -c 1 -W 2 "$1" >/dev/null 2>&1; }
neigh_absent() {
	ip -n $NS neigh flush dev veth1 >/dev/null 2>&1
	ip -n $NS -6 neigh flush dev veth1 >/dev/null 2>&1
	ip neigh flush dev veth0 >/dev/null 2>&1
	ip -6 neigh flush dev veth0 >/dev/null 2>&1
	true
}
neigh_failed() { ip neigh replace "$1" dev veth0 nud failed; }
none() { true; }

# The scenarios: name | preparation | port flags net vlan sl | header |
# expected fields.  The errors and values are ib_core's for the input.
scenarios() {
	local i4 i6 ill iv hv4 hv6 bad
	i4="entry=$(gid_index "$DEV" ::ffff:$IP4_A)/2/veth0"
	i6="entry=$(gid_index "$DEV" $IP6_A)/2/veth0"
	ill="entry=$(gid_index "$DEV" "$OWN_LL")/2/veth0"
	iv="entry=$(gid_index "$DEV" ::ffff:198.18.0.1)/2/veth0.100"
	hv4=$(ip4_hdr $IP4_B $IP4_A)
	hv6=$(grh_hdr $IP6_B $IP6_A 17 0x28 0x12345)
	# An IPv6 version nibble and UDP as next header in the 20 bytes
	# before the IPv4 header: the header's checksum decides.
	bad=6000000000001140000000000000000000000000
	cat <<-EOT
	ipv4, type from the header, neighbour valid|neigh_valid $IP4_B|1 $GRH 0 0 0|$hv4|ret=0 dgid=::ffff:$IP4_B hop=64 dmac=$PEER_MAC flow=0x0 tclass=0 $i4
	ipv4, type from the completion|neigh_valid $IP4_B|1 $((GRH | WITH_NET)) 2 0 0|$hv4|ret=0 dgid=::ffff:$IP4_B hop=64 dmac=$PEER_MAC $i4
	ipv4 behind an IPv6 version nibble, checksum right|neigh_valid $IP4_B|1 $GRH 0 0 0|$(ip4_hdr $IP4_B $IP4_A $bad)|ret=0 dgid=::ffff:$IP4_B dmac=$PEER_MAC $i4
	ipv4 behind an IPv6 version nibble, checksum wrong: read as IPv6 (ENOENT)|none|1 $GRH 0 0 0|$(ip4_hdr $IP4_B $IP4_A $bad | sed 's/^\(.\{60\}\)..../\1beef/')|ret=-2 entry=- hop=0
	ipv4 header of 24 bytes behind an IPv6 version nibble: read as IPv6 (ENOENT)|none|1 $GRH 0 0 0|$(IHL=6 ip4_hdr $IP4_B $IP4_A $bad)|ret=-2 entry=-
	ipv4 ARP on first use|neigh_absent|1 $GRH 0 0 0|$hv4|ret=0 dmac=$PEER_MAC hop=64 $i4
	ipv4 FAILED neighbour (resolved again)|neigh_failed $IP4_B|1 $GRH 0 0 0|$hv4|ret=0 dmac=$PEER_MAC hop=64 $i4
	ipv4 source that never answers ARP (ETIMEDOUT, no reference kept)|neigh_absent|1 $GRH 0 0 0|$(ip4_hdr 192.0.2.99 $IP4_A)|ret=-110 dgid=::ffff:192.0.2.99 hop=255 dmac=00:00:00:00:00:00 entry=-
	ipv4 source is a local address (our own MAC)|none|1 $GRH 0 0 0|$(ip4_hdr $IP4_A $IP4_A)|ret=0 dmac=$OWN_MAC $i4
	ipv4 multicast source (through the route: the group's MAC)|none|1 $GRH 0 0 0|$(ip4_hdr 239.1.2.3 $IP4_A)|ret=0 dmac=01:00:5e:01:02:03 $i4
	ipv6, flow label 0x12345 and class 0x28|neigh_valid $IP6_B|1 $GRH 0 0 0|$hv6|ret=0 dgid=$IP6_B hop=64 dmac=$PEER_MAC flow=0x12345 tclass=40 $i6
	ipv6, type from the completion, sl 5|neigh_valid $IP6_B|1 $((GRH | WITH_NET)) 3 0 5|$hv6|ret=0 dgid=$IP6_B sl=5 dmac=$PEER_MAC $i6
	ipv6 link-local, ND on first use|neigh_absent|1 $GRH 0 0 0|$(grh_hdr "$PEER_LL" "$OWN_LL")|ret=0 dgid=$PEER_LL dmac=$PEER_MAC hop=64 $ill
	no GRH flag (EPROTOTYPE)|none|1 0 0 0 0|$hv4|ret=-91 entry=-
	received on VLAN 100|neigh_valid 198.18.0.2|1 $((GRH | WITH_VLAN)) 0 100 0|$(ip4_hdr 198.18.0.2 198.18.0.1)|ret=0 dgid=::ffff:198.18.0.2 dmac=$PEER_MAC hop=64 $iv
	a VLAN GID received without the VLAN flag (ENOENT)|none|1 $GRH 0 0 0|$(ip4_hdr 198.18.0.2 198.18.0.1)|ret=-2 entry=-
	a GID of veth0 received on VLAN 100 (ENOENT)|none|1 $((GRH | WITH_VLAN)) 0 100 0|$hv4|ret=-2 entry=-
	a destination GID that is not ours (ENOENT)|none|1 $GRH 0 0 0|$(ip4_hdr $IP4_B 192.0.2.77)|ret=-2 entry=-
	network type 7 in the completion (EINVAL)|none|1 $((GRH | WITH_NET)) 7 0 0|$hv4|ret=-22 entry=- type=2 port=0
	network type IB in the completion of a RoCE port (ENOENT)|none|1 $((GRH | WITH_NET)) 0 0 0|$hv6|ret=-2 entry=-
	EOT
	# soft-RoCE has RoCE v2 GIDs only; rv0 here has v1 ones too.
	[ "$DEV" = rv0 ] || cat <<-EOT
	a GRH with a next header other than UDP on RoCE v2 GIDs only (ENOENT)|none|1 $GRH 0 0 0|$(grh_hdr $IP6_B $IP6_A 27)|ret=-2 entry=-
	EOT
}

# rv0 only: RoCE v1 GIDs.
rv_scenarios() {
	local v1 v1ll
	v1="entry=$(gid_index rv0 $IP6_A "IB/RoCE v1")/1/veth0"
	v1ll="entry=$(gid_index rv0 "$OWN_LL" "IB/RoCE v1")/1/veth0"
	cat <<-EOT
	roce v1 link-local: the MAC from the GID|none|1 $GRH 0 0 0|$(grh_hdr "$PEER_LL" "$OWN_LL" 27)|ret=0 dgid=$PEER_LL dmac=$PEER_MAC hop=255 $v1ll
	roce v1 global GID, type from the completion (through the route)|neigh_valid $IP6_B|1 $((GRH | WITH_NET)) 1 0 0|$(grh_hdr $IP6_B $IP6_A 27)|ret=0 dgid=$IP6_B dmac=$PEER_MAC hop=64 $v1
	EOT
}

# rust_counted LINE BEFORE AFTER - between two copies of counters_all, the
# Rust core counted result LINE once: ah_attr_from_wc for a success, its
# error's counter for a failure, and nothing else (the resolution's dmac_*
# counters aside).  Sets want and moved, for the messages.
rust_counted() {
	local ret
	ret=$(field "$1" ret)
	want=ah_attr_from_wc
	[ "$ret" = 0 ] || want=error.$((-ret))
	moved=$(counters_moved "$2" "$3" | grep -v '^dmac_')
	[ "$moved" = "$want +1" ]
}

# kprobe_hits - how often ib_core's rdma_addr_find_l2_eth_by_grh was
# entered since the kprobe was made.
kprobe_hits() {
	awk -v p=$KPROBE '$1 == p { print $2 }' $KP/kprobe_profile
}

# phase DEV - every scenario on DEV: C, Rust, identical; then with the
# takeover, ib_core's function must be Rust.
phase() {
	local c name prep args hdr expect line_c line_r line_t ok before after moved want
	local hits_c hits_t
	local -a all
	DEV=$1
	insmod "$WCAH" netdev=veth0 || return 1
	mapfile -t all < <(scenarios; [ "$DEV" = rv0 ] && rv_scenarios)
	hits_c=$(kprobe_hits)
	for c in "${all[@]}"; do
		IFS='|' read -r name prep args hdr expect <<<"$c"
		$prep
		before=$(counters_all)
		line_c=$(run_case c $args "$hdr")
		after=$(counters_all)
		ok=1
		matches "$line_c" "$expect" || ok=0
		[ "$before" = "$after" ] || {
			ok=0
			ktap_print_msg "the Rust core's counters moved with the C core:"
			counters_moved "$before" "$after" | sed 's/^/#   /'
		}
		[ $ok = 1 ] || ktap_print_msg "C: got '$line_c', want '$expect'"
		if [ $ok = 1 ]; then ktap_test_pass "$DEV: $name [C]"; else ktap_test_fail "$DEV: $name [C]"; fi

		$prep
		before=$(counters_all)
		line_r=$(run_case rust $args "$hdr")
		after=$(counters_all)
		ok=1
		matches "$line_r" "$expect" || { ok=0; ktap_print_msg "Rust: got '$line_r', want '$expect'"; }
		rust_counted "$line_r" "$before" "$after" || {
			ok=0
			ktap_print_msg "Rust: the counters moved: '${moved//$'\n'/, }', want '$want +1'"
		}
		if [ $ok = 1 ]; then ktap_test_pass "$DEV: $name [Rust]"; else ktap_test_fail "$DEV: $name [Rust]"; fi

		if [ "$line_c" = "$line_r" ]; then
			ktap_test_pass "$DEV: $name: the same attribute with both cores"
		else
			ktap_print_msg "C:    $line_c"
			ktap_print_msg "Rust: $line_r"
			ktap_test_fail "$DEV: $name: the same attribute with both cores"
		fi
	done
	hits_c=$(($(kprobe_hits) - hits_c))

	# A port the device does not have: Rust refuses it (C would read past
	# the device's port array; it is not called with one).
	before=$(counters_all)
	line_r=$(run_case rust 2 $GRH 0 0 0 "$(ip4_hdr $IP4_B $IP4_A)")
	after=$(counters_all)
	ksft_check "$DEV: a port the device does not have (EINVAL, counted) [Rust]" \
		eval 'matches "$line_r" "ret=-22 entry=- port=0 type=0" && rust_counted "$line_r" "$before" "$after"'

	takeover_on || return 1
	hits_t=$(kprobe_hits)
	ok=1
	for c in "${all[@]}"; do
		IFS='|' read -r name prep args hdr expect <<<"$c"
		$prep
		before=$(counters_all)
		line_t=$(run_case c $args "$hdr")
		after=$(counters_all)
		if ! matches "$line_t" "$expect" || ! rust_counted "$line_t" "$before" "$after"; then
			ok=0
			ktap_print_msg "$name: got '$line_t' (counters: ${moved//$'\n'/, }), want '$expect' ($want +1)"
		fi
	done
	hits_t=$(($(kprobe_hits) - hits_t))
	if [ $ok = 1 ]; then
		ktap_test_pass "$DEV: with the takeover, ib_init_ah_attr_from_wc is the Rust core's"
	else
		ktap_test_fail "$DEV: with the takeover, ib_init_ah_attr_from_wc is the Rust core's"
	fi
	ktap_print_msg "$DEV: rdma_addr_find_l2_eth_by_grh entered $hits_c times with C, $hits_t with the takeover"
	ksft_check "$DEV: ib_core's resolution is entered with the C core" test "$hits_c" -gt 0
	ksft_check "$DEV: ib_core's resolution is not entered with the takeover" test "$hits_t" = 0
	takeover_off || return 1
	rmmod rv_wc_ah
}

ktap_print_header
[ -f "$WCAH" ] || ktap_exit_fail_msg "$WCAH is not built"
modprobe rdma_rxe && modprobe ib_uverbs && modprobe 8021q &&
	insmod "$RVERBS_KO" roce_v1=1 && ns_setup || ktap_exit_fail_msg "setup failed"
ip link add link veth0 name veth0.100 type vlan id 100 &&
	ip addr add 198.18.0.1/24 dev veth0.100 && ip link set veth0.100 up &&
	ip -n $NS link add link veth1 name veth1.100 type vlan id 100 &&
	ip -n $NS addr add 198.18.0.2/24 dev veth1.100 && ip -n $NS link set veth1.100 up &&
	rdma link add rxe0 type rxe netdev veth0 || ktap_exit_fail_msg "setup failed"
echo "p:$KPROBE rdma_addr_find_l2_eth_by_grh" >>$KP/kprobe_events &&
	echo 1 >$KP/events/kprobes/$KPROBE/enable || ktap_exit_fail_msg "cannot probe rdma_addr_find_l2_eth_by_grh"
PEER_MAC=$(ip netns exec $NS cat /sys/class/net/veth1/address)
OWN_MAC=$(cat /sys/class/net/veth0/address)
PEER_LL=$(ip -n $NS -6 -br addr show dev veth1 scope link | awk '{ sub("/.*", "", $3); print $3 }')
OWN_LL=$(ip -6 -br addr show dev veth0 scope link | awk '{ sub("/.*", "", $3); print $3 }')
[ -n "$PEER_LL" ] && [ -n "$OWN_LL" ] || ktap_exit_fail_msg "no link-local addresses"

n=$(( $(DEV=rxe0 scenarios | wc -l) + $(DEV=rv0 scenarios | wc -l) + $(rv_scenarios | wc -l) ))
# Three cases a scenario; the bad port, the takeover and the two kprobe
# counts on each device.
ktap_set_plan $((n * 3 + 2 * 4))

phase rxe0 || ktap_exit_fail_msg "rxe0: the phase could not run"
rdma link del rxe0 || ktap_exit_fail_msg "cannot remove rxe0"
rdma link add rv0 type rverbs netdev veth0 || ktap_exit_fail_msg "cannot add rv0"
phase rv0 || ktap_exit_fail_msg "rv0: the phase could not run"
ktap_finished
