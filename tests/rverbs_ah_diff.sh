#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Differential test of address handle creation: every scenario runs through
# rdma-core (ibv_create_ah on rxe0, via ib_uverbs) twice in this boot, with
# ib_core's C core (takeover off) and with the Rust core (takeover on), and
# both must give exactly the result the C core is specified to give: the
# errno, and on the wire (one UD datagram sent through the AH, captured on
# veth0) the destination MAC, the IP hop limit, the VLAN and the traffic
# class. In Rust mode the counter of the path taken must move by one.
#
# Then the same scenarios on rv0, rverbs' software device (rxe0 replaced by
# rv0 on veth0), where no datagram can be sent (rv0 has no QPs): what the
# core resolved is read from rv0's AH dump in debugfs instead, and the dump
# line must be the expected one (MAC, hop limit, flow label, traffic class,
# SL) and the same with both cores. rv0 also has RoCE v1 GIDs, so the
# link-local RoCE v1 case (MAC taken from the GID) runs there.
#
# Topology: veth0 (192.0.2.1, 2001:db8::1, VLAN 100: 198.18.0.1, VLAN 200:
# 198.19.0.1) here with rxe0, later rv0; veth1 (.2 and .3, ::2 and ::3,
# 198.18.0.2) in netns "peer" with rxe1.  Routes: .3 and ::3 with hop limit
# 9; 203.0.113.0/24 and 2001:db8:2::/64 through the peer as gateway;
# 198.18.5.0/24 and 2001:db8:4::/64 through a gateway nobody is (.98,
# ::98); local routes on veth0 to 198.18.8.1 and 2001:db8:6::1, which no
# device has (addr.c: a local destination for IPv4, whose __ip_dev_find
# falls back to the local table, ENODEV for IPv6, whose ipv6_chk_addr
# does not); unreachable 198.51.100.0/24 and 2001:db8:1::/64, prohibit
# 198.18.6.0/24 and 2001:db8:3::/64, blackhole 198.18.7.0/24 and
# 2001:db8:5::/64.  Neighbours: .4 and ::4 permanent with MAC
# 02:00:00:00:00:44, .7 with 02:00:00:00:00:77 (probe()'s marks).  Every
# address is a documentation/benchmark range; no packet leaves the guest.

. "$(dirname "$0")/lib.sh"

PROBE=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ah_probe
USER_HOP=7	# what the application asks for; unicast RoCE uses the route's
ROUTE_HOP=9	# the hop limit of the routes to .3 and ::3
FIXED_MAC=02:00:00:00:00:44	# the permanent neighbours .4 and ::4
STALE_MAC=02:00:00:00:00:55	# a STALE neighbour .5 (nobody has that address)
NEW_MAC=02:00:00:00:00:66	# the peer's MAC after it changed
MARK_MAC=02:00:00:00:00:77	# the permanent neighbour .7: probe()'s marks
MARK_IP=192.0.2.7
CAP=/tmp/rverbs_ah_diff.cap

# The routes of no device (unreachable, prohibit, blackhole) outlive the
# veths: removed here, or the tests after this one would find them
# (tests/run_suite.sh checks that each test leaves the routes as it found
# them).
ah_diff_teardown() {
	ip route del unreachable 198.51.100.0/24 2>/dev/null
	ip -6 route del unreachable 2001:db8:1::/64 2>/dev/null
	ip route del prohibit 198.18.6.0/24 2>/dev/null
	ip -6 route del prohibit 2001:db8:3::/64 2>/dev/null
	ip route del blackhole 198.18.7.0/24 2>/dev/null
	ip -6 route del blackhole 2001:db8:5::/64 2>/dev/null
	teardown
}
trap ah_diff_teardown EXIT

setup() {
	modprobe rdma_rxe && modprobe ib_uverbs && modprobe 8021q || return 1
	sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
	ip netns add $NS || return 1
	ip netns exec $NS sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
	ip netns del $NS
	ns_setup || return 1
	ip link add link veth0 name veth0.100 type vlan id 100 &&
	ip addr add 198.18.0.1/24 dev veth0.100 && ip link set veth0.100 up &&
	ip -n $NS link add link veth1 name veth1.100 type vlan id 100 &&
	ip -n $NS addr add 198.18.0.2/24 dev veth1.100 && ip -n $NS link set veth1.100 up || return 1
	ip link add link veth0 name veth0.200 type vlan id 200 &&
	ip addr add 198.19.0.1/24 dev veth0.200 && ip link set veth0.200 up || return 1
	ip route add unreachable 198.51.100.0/24 &&
	ip -6 route add unreachable 2001:db8:1::/64 &&
	ip route add prohibit 198.18.6.0/24 && ip -6 route add prohibit 2001:db8:3::/64 &&
	ip route add blackhole 198.18.7.0/24 && ip -6 route add blackhole 2001:db8:5::/64 ||
		return 1
	ip -n $NS addr add 192.0.2.3/32 dev veth1 &&
	ip -n $NS addr add 2001:db8::3/128 dev veth1 nodad &&
	ip route add 192.0.2.3/32 dev veth0 hoplimit $ROUTE_HOP &&
	ip -6 route add 2001:db8::3/128 dev veth0 hoplimit $ROUTE_HOP &&
	ip route add 203.0.113.0/24 via 192.0.2.2 &&
	ip -6 route add 2001:db8:2::/64 via 2001:db8::2 &&
	ip route add 198.18.5.0/24 via 192.0.2.98 &&
	ip -6 route add 2001:db8:4::/64 via 2001:db8::98 &&
	ip route add local 198.18.8.1 dev veth0 && ip -6 route add local 2001:db8:6::1 dev veth0 &&
	ip neigh add 192.0.2.4 lladdr $FIXED_MAC dev veth0 nud permanent &&
	ip -6 neigh add 2001:db8::4 lladdr $FIXED_MAC dev veth0 nud permanent &&
	ip neigh add $MARK_IP lladdr $MARK_MAC dev veth0 nud permanent || return 1
	# rv0 with RoCE v1 GIDs too, for the RoCE v1 scenarios.
	insmod "$RVERBS_KO" roce_v1=1 || return 1
	rxe_pair_up || return 1
	PEER_MAC=$(ip netns exec $NS cat /sys/class/net/veth1/address)
	OWN_MAC=$(cat /sys/class/net/veth0/address)
	PEER_LL=$(ip -n $NS -6 -br addr show dev veth1 scope link | awk '{ sub("/.*", "", $3); print $3 }')
	OWN_LL=$(ip -6 -br addr show dev veth0 scope link | awk '{ sub("/.*", "", $3); print $3 }')
	[ -n "$PEER_LL" ] && [ -n "$OWN_LL" ]
}

# Neighbour preparations.
neigh_valid() { ping -c 1 -W 2 "$1" >/dev/null 2>&1; }
# neigh_absent - no entry for the peer here, and none for us in the peer:
# a peer that still knows us revalidates its entry with unicast probes
# (DELAY, PROBE), whose ARP requests would make a STALE entry for it here
# between the flush and the AH (seen on a loaded machine).
neigh_absent() {
	ip -n $NS neigh flush dev veth1 >/dev/null 2>&1
	ip -n $NS -6 neigh flush dev veth1 >/dev/null 2>&1
	ip -n $NS neigh flush dev veth1.100 >/dev/null 2>&1
	ip neigh flush dev veth0 >/dev/null 2>&1
	ip -6 neigh flush dev veth0 >/dev/null 2>&1
	ip neigh flush dev veth0.100 >/dev/null 2>&1
	true
}
none() { true; }
# neigh_stale ADDR MAC - a STALE entry: ib_core uses its MAC as it is (a
# STALE neighbour is NUD_VALID) and the kernel revalidates it later.
neigh_stale() { ip neigh replace "$1" dev veth0 lladdr "$2" nud stale; }
# neigh_failed ADDR - a FAILED entry: resolved again on first use.
neigh_failed() { ip neigh replace "$1" dev veth0 nud failed; }
# peer_mac MAC - the peer's veth1 takes MAC; our entry is made again (the
# cores must not have kept the old MAC anywhere).
peer_mac() {
	ip -n $NS link set veth1 address "$1"
	neigh_absent
	neigh_valid 192.0.2.2
}
# link_down DEV - an interface that is down keeps its IPv4 GID; its routes
# are gone.
link_down() { ip link set "$1" down; }

# start_capture - one capture of every RoCE datagram leaving veth0, for
# the whole run; probe() reads the datagram each AH sent.
start_capture() {
	local i
	tcpdump -i veth0 -e -n -v -l --immediate-mode \
		'udp dst port 4791 or (vlan and udp dst port 4791)' >$CAP 2>$CAP.err &
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' $CAP.err 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# probe_fields OUT - ah_probe's output OUT read with bash alone (each
# program costs the guest tens of milliseconds, and a probe ran five):
# PROBE_CREATE its "create:" value, PROBE_DUMP its "dump:" line without
# "dump: N ", and its "elapsed_ms:" value written to $CAP.ms.
probe_fields() {
	local l re='^dump: [0-9]* (.*)$' ms=''
	PROBE_CREATE='' PROBE_DUMP=''
	while IFS= read -r l; do
		case $l in
		"create: "*) PROBE_CREATE+=${PROBE_CREATE:+$'\n'}${l#create: } ;;
		"elapsed_ms: "*) ms+=${l#elapsed_ms: }$'\n' ;;
		"dump: "*) [[ $l =~ $re ]] && PROBE_DUMP+=${PROBE_DUMP:+$'\n'}${BASH_REMATCH[1]} ;;
		esac
	done <<<"$1"
	printf '%s' "$ms" >$CAP.ms
}

# probe SGID DGID [ARGS] - create an AH on rxe0 (or PROBE_DEV) and send one datagram
# through it; prints "create=E dmac=M hop=H vlan=V" (- where not seen) and
# " tc=0xNN" when the datagram's traffic class (IPv4 TOS) is not 0.  After
# a send, a datagram of this shell's own to the permanent neighbour .7
# (MARK_MAC, nobody has it) follows on veth0: the capture prints in order,
# so once it shows that mark it has shown the probe's datagram if there was
# one (none for a local destination), however slow the machine.
probe() {
	local sgid=$1 dgid=$2 idx out create dmac=- hop=- vlan=- tc='' seen marks line i
	shift 2
	idx=${GIDX[$sgid]}
	[ -n "$idx" ] || { echo "no-sgid-$sgid"; return; }
	seen=$(grep ethertype $CAP | grep -vc "> $MARK_MAC,")
	marks=$(grep -c "> $MARK_MAC," $CAP)
	out=$($PROBE -d "${PROBE_DEV:-rxe0}" -s "$idx" -g "$dgid" -l $USER_HOP -x "$@")
	probe_fields "$out"
	# The whole output, for what a caller reads besides (qp_probe's query).
	printf '%s\n' "$out" >$CAP.out
	create=$PROBE_CREATE
	if [ "$create" = 0 ]; then
		# The send has completed: its datagram went through veth0's
		# taps before the mark is sent.
		echo mark >/dev/udp/$MARK_IP/4791
		for ((i = 0; i < 300; i++)); do
			[ "$(grep -c "> $MARK_MAC," $CAP)" -gt "$marks" ] && break
			sleep 0.1
		done
	fi
	line=$(grep ethertype $CAP | grep -v "> $MARK_MAC," | sed -n "$((seen + 1))p")
	if [ -n "$line" ]; then
		dmac=$(awk '{ sub(",", "", $4); print $4 }' <<<"$line")
		hop=$(grep -o -m1 -E '(ttl|hlim) [0-9]+' <<<"$line" | awk '{ print $2 }')
		vlan=$(grep -o -m1 -E 'vlan [0-9]+' <<<"$line" | awk '{ print $2 }')
		[ -n "$vlan" ] || vlan=-
		# tcpdump prints an IPv4 TOS always, an IPv6 class when not 0.
		tc=$(grep -o -m1 -E '(tos|class) 0x[0-9a-f]+' <<<"$line" | awk '{ print $2 }')
		[ "$tc" = 0x0 ] && tc=''
	fi
	echo "create=$create dmac=$dmac hop=$hop vlan=${vlan}${tc:+ tc=$tc}"
}

# The scenarios: name | preparation | source GID | destination GID | extra
# probe args | expected result | Rust counter that moves by one ("-": the
# case never reaches a core, and no counter may move with either).  With
# the C core, no counter of the Rust core may move (proof that C ran).
# The expected results are ib_core's (verbs.c, addr.c) for the input.
scenarios() {
	cat <<-EOT
	ipv4 neighbour valid|neigh_valid 192.0.2.2|::ffff:192.0.2.1|::ffff:192.0.2.2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv4 neighbour absent (ARP on first use)|neigh_absent|::ffff:192.0.2.1|::ffff:192.0.2.2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv4 neighbour never answers|neigh_absent|::ffff:192.0.2.1|::ffff:192.0.2.99||create=-110 dmac=- hop=- vlan=-|error.110
	ipv4 unreachable route, bound to veth0 (on-link assumed, ARP times out)|neigh_absent|::ffff:192.0.2.1|::ffff:198.51.100.1||create=-110 dmac=- hop=- vlan=-|error.110
	ipv4 destination is a local address|none|::ffff:192.0.2.1|::ffff:192.0.2.1||create=0 dmac=- hop=- vlan=-|dmac_local
	ipv6 neighbour valid|neigh_valid 2001:db8::2|2001:db8::1|2001:db8::2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv6 neighbour absent (ND on first use)|neigh_absent|2001:db8::1|2001:db8::2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv6 neighbour never answers|neigh_absent|2001:db8::1|2001:db8::99||create=-110 dmac=- hop=- vlan=-|error.110
	ipv6 no route|none|2001:db8::1|2001:db8:1::1||create=-113 dmac=- hop=- vlan=-|error.113
	ipv4 prohibit route, bound to veth0 (on-link assumed, ARP times out)|neigh_absent|::ffff:192.0.2.1|::ffff:198.18.6.1||create=-110 dmac=- hop=- vlan=-|error.110
	ipv4 blackhole route, bound to veth0 (on-link assumed, ARP times out)|neigh_absent|::ffff:192.0.2.1|::ffff:198.18.7.1||create=-110 dmac=- hop=- vlan=-|error.110
	ipv6 prohibit route (EACCES, the route's error)|none|2001:db8::1|2001:db8:3::1||create=-13 dmac=- hop=- vlan=-|error.13
	ipv6 blackhole route (EINVAL, the route's error)|none|2001:db8::1|2001:db8:5::1||create=-22 dmac=- hop=- vlan=-|error.22
	ipv4 gateway that never answers|neigh_absent|::ffff:192.0.2.1|::ffff:198.18.5.1||create=-110 dmac=- hop=- vlan=-|error.110
	ipv6 gateway that never answers|neigh_absent|2001:db8::1|2001:db8:4::1||create=-110 dmac=- hop=- vlan=-|error.110
	ipv6 destination is a local address|none|2001:db8::1|2001:db8::1||create=0 dmac=- hop=- vlan=-|dmac_local
	ipv4 local route to an address no device has (__ip_dev_find finds the route's device: a local destination)|none|::ffff:192.0.2.1|::ffff:198.18.8.1||create=0 dmac=- hop=- vlan=-|dmac_local
	ipv6 local route to an address no device has (ENODEV)|none|2001:db8::1|2001:db8:6::1||create=-19 dmac=- hop=- vlan=-|error.19
	ipv6 link-local destination|neigh_absent|$OWN_LL|$PEER_LL||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	multicast ipv4-mapped GID|none|::ffff:192.0.2.1|::ffff:239.1.2.3||create=0 dmac=01:00:5e:01:02:03 hop=$USER_HOP vlan=-|dmac_multicast
	multicast ipv6 GID|none|2001:db8::1|ff0e::1:2:3||create=0 dmac=33:33:00:02:00:03 hop=$USER_HOP vlan=-|dmac_multicast
	sgid on a VLAN device|neigh_valid 198.18.0.2|::ffff:198.18.0.1|::ffff:198.18.0.2||create=0 dmac=$PEER_MAC hop=64 vlan=100|dmac_neigh_fast
	ipv4 traffic class 0x28, flow label 0x12345, SL 3|neigh_valid 192.0.2.2|::ffff:192.0.2.1|::ffff:192.0.2.2|-T 0x28 -f 0x12345 -V 3|create=0 dmac=$PEER_MAC hop=64 vlan=- tc=0x28|dmac_neigh_fast
	ipv6 traffic class 0x28, flow label 0x12345, SL 3|neigh_valid 2001:db8::2|2001:db8::1|2001:db8::2|-T 0x28 -f 0x12345 -V 3|create=0 dmac=$PEER_MAC hop=64 vlan=- tc=0x28|dmac_neigh_fast
	ipv4 route with hop limit $ROUTE_HOP|neigh_valid 192.0.2.3|::ffff:192.0.2.1|::ffff:192.0.2.3||create=0 dmac=$PEER_MAC hop=$ROUTE_HOP vlan=-|dmac_neigh_fast
	ipv6 route with hop limit $ROUTE_HOP|neigh_valid 2001:db8::3|2001:db8::1|2001:db8::3||create=0 dmac=$PEER_MAC hop=$ROUTE_HOP vlan=-|dmac_neigh_fast
	ipv4 destination behind a gateway (its MAC, ARP on first use)|neigh_absent|::ffff:192.0.2.1|::ffff:203.0.113.5||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv6 destination behind a gateway (its MAC, ND on first use)|neigh_absent|2001:db8::1|2001:db8:2::5||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv4 permanent neighbour with a fixed MAC|none|::ffff:192.0.2.1|::ffff:192.0.2.4||create=0 dmac=$FIXED_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv6 permanent neighbour with a fixed MAC|none|2001:db8::1|2001:db8::4||create=0 dmac=$FIXED_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv4 STALE neighbour (its MAC is used as it is)|neigh_stale 192.0.2.5 $STALE_MAC|::ffff:192.0.2.1|::ffff:192.0.2.5||create=0 dmac=$STALE_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv4 FAILED neighbour (resolved again)|neigh_failed 192.0.2.2|::ffff:192.0.2.1|::ffff:192.0.2.2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv6 STALE neighbour (its MAC is used as it is)|neigh_stale 2001:db8::5 $STALE_MAC|2001:db8::1|2001:db8::5||create=0 dmac=$STALE_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv6 FAILED neighbour (resolved again)|neigh_failed 2001:db8::2|2001:db8::1|2001:db8::2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_wait
	ipv4 the peer's MAC changed after an AH was made|peer_mac $NEW_MAC|::ffff:192.0.2.1|::ffff:192.0.2.2||create=0 dmac=$NEW_MAC hop=64 vlan=-|dmac_neigh_fast
	ipv4 the peer's MAC changed back|peer_mac $PEER_MAC|::ffff:192.0.2.1|::ffff:192.0.2.2||create=0 dmac=$PEER_MAC hop=64 vlan=-|dmac_neigh_fast
	source ipv4, destination ipv6 (EINVAL)|none|::ffff:192.0.2.1|2001:db8::2||create=-22 dmac=- hop=- vlan=-|error.22
	source ipv6, destination ipv4 (EINVAL)|none|2001:db8::1|::ffff:192.0.2.2||create=-22 dmac=- hop=- vlan=-|error.22
	ipv4 source on a netdev that is down (its route is gone)|link_down veth0.200|::ffff:198.19.0.1|::ffff:198.19.0.2||create=-101 dmac=- hop=- vlan=-|error.101
	multicast ipv4 group with the 24th bit set (239.129.2.3)|none|::ffff:192.0.2.1|::ffff:239.129.2.3||create=0 dmac=01:00:5e:01:02:03 hop=$USER_HOP vlan=-|dmac_multicast
	bad port number (ib_uverbs refuses it before either core runs)|none|::ffff:192.0.2.1|::ffff:192.0.2.2|-p 2|create=-22 dmac=- hop=- vlan=-|-
	RoCE port without GRH|none|::ffff:192.0.2.1|::ffff:192.0.2.2|-n|create=-22 dmac=- hop=- vlan=-|error.22
	EOT
}

# probe_index IDX DGID [DEV] - as probe, with a raw source GID index.
probe_index() {
	local out
	out=$($PROBE -d "${3:-rxe0}" -s "$1" -g "$2" -l $USER_HOP)
	echo "create=$(sed -n 's/^create: //p' <<<"$out")"
}

# index_case DESC MODE ERRNO IDX DGID [DEV] - one KTAP case: a raw source
# GID index fails with -ERRNO, and the core that failed it is the one of
# MODE: with Rust, its error.<errno> counter moves by one; with C, no
# counter of the Rust core moves.
index_case() {
	local desc=$1 mode=$2 want=$3 before after got ok=1
	shift 3
	before=$(counters_all)
	got=$(probe_index "$@")
	after=$(counters_all)
	if [ "$got" != "create=$want" ]; then
		ok=0
		ktap_print_msg "$desc: got '$got', want 'create=$want'"
	fi
	if [ "$mode" = C ] && [ "$before" != "$after" ]; then
		ok=0
		ktap_print_msg "$desc: the Rust core's counters moved with the C core"
	fi
	if [ "$mode" = Rust ]; then
		local n0 n1
		n0=$(counter_in "$before" "error.$((-want))")
		n1=$(counter_in "$after" "error.$((-want))")
		if [ $((n1 - n0)) != 1 ]; then
			ok=0
			ktap_print_msg "$desc: error.$((-want)) of the Rust core moved by $((n1 - n0)), not 1"
		fi
	fi
	if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
}

RV_DUMP=/sys/kernel/debug/rverbs/rv0/ah

# probe_rv SGID_INDEX DGID [ARGS] - create an AH on rv0 and read it back
# from rv0's AH dump; prints "create=E dmac=M hop=H fl=F tc=T sl=S|LINE"
# (the last three only when the AH is in the dump; LINE: the dump line
# without the AH number).
probe_rv() {
	local idx=$1 dgid=$2 out create line dmac=- hop=- rest='' f
	shift 2
	[ -n "$idx" ] || { echo "no-sgid"; return; }
	out=$($PROBE -d rv0 -s "$idx" -g "$dgid" -l $USER_HOP -P $RV_DUMP "$@")
	probe_fields "$out"
	create=$PROBE_CREATE line=$PROBE_DUMP
	if [ -n "$line" ]; then
		read -r -a f <<<"$line"
		dmac=${f[4]} hop=${f[5]} rest=" fl=${f[6]} tc=${f[7]} sl=${f[8]}"
	fi
	echo "create=$create dmac=$dmac hop=$hop$rest|$line"
}

# rv_expect EXPECT [ARGS] - a wire expectation of scenarios() as rv0 shows
# it: no VLAN or wire traffic class; an AH to a local address has our own
# MAC (nothing reaches the wire on rxe); a created AH has the flow label,
# traffic class and SL that ARGS asked for (-f, -T, -V; 0 without).
rv_expect() {
	local e=${1% vlan=*} fl=0 tc=0 sl=0
	shift
	if [ "${e#create=0 dmac=- }" != "$e" ]; then
		e="create=0 dmac=$OWN_MAC hop=64"
	fi
	while [ $# -gt 0 ]; do
		case $1 in
		-f) fl=$2 ;;
		-T) tc=$2 ;;
		-V) sl=$2 ;;
		esac
		shift
	done
	if [ "${e#create=0 }" != "$e" ]; then
		e="$e fl=$(printf '0x%x' $((fl))) tc=$((tc)) sl=$((sl))"
	fi
	echo "$e"
}

# The scenarios rxe cannot have: a RoCE v1 source GID (rxe has only v2).
rv_scenarios() {
	cat <<-EOT
	roce v1 link-local destination (MAC from the GID)|none|$OWN_LL|$PEER_LL||create=0 dmac=$PEER_MAC hop=$USER_HOP|dmac_link_local|IB/RoCE v1
	EOT
}

# rv_phase - every scenario on rv0, C then Rust; dumps must be identical.
rv_phase() {
	local mode c name prep sgid dgid args expect ctr type idx got before after desc ok
	local all_before all_after
	local -A RVRES RVIDX
	local -a RVCASES
	rdma link del rxe0 || return 1
	# Up again for its GID to be looked up (its case takes it down).
	ip link set veth0.200 up || return 1
	rdma link add rv0 type rverbs netdev veth0 || return 1
	mapfile -t RVCASES < <(scenarios | sed 's/$/|RoCE v2/'; rv_scenarios)
	for c in "${RVCASES[@]}"; do
		IFS='|' read -r _ _ sgid _ _ _ _ type <<<"$c"
		[ -n "${RVIDX[$sgid/$type]}" ] ||
			RVIDX[$sgid/$type]=$(gid_index rv0 "$sgid" "$type")
	done
	for mode in C Rust; do
		if [ $mode = Rust ]; then
			takeover_on || { ktap_print_msg "cannot enable the takeover"; return 1; }
		fi
		for c in "${RVCASES[@]}"; do
			IFS='|' read -r name prep sgid dgid args expect ctr type <<<"$c"
			expect=$(rv_expect "$expect" $args)
			$prep
			all_before=$(counters_all)
			before=$(counter "$ctr")
			got=$(probe_rv "${RVIDX[$sgid/$type]}" "$dgid" $args)
			after=$(counter "$ctr")
			all_after=$(counters_all)
			desc="rv0: $name [$mode]"
			ok=1
			[ "${got%%|*}" = "$expect" ] || {
				ok=0
				ktap_print_msg "$desc: got '${got%%|*}', want '$expect'"
			}
			if [ $mode = Rust ] && [ "$ctr" != - ] && [ $((after - before)) != 1 ]; then
				ok=0
				ktap_print_msg "$desc: counter $ctr moved by $((after - before)), not 1"
			fi
			if { [ $mode = C ] || [ "$ctr" = - ]; } && [ "$all_before" != "$all_after" ]; then
				ok=0
				ktap_print_msg "$desc: the Rust core's counters moved:"
				diff <(echo "$all_before") <(echo "$all_after") | sed -n 's/^[<>]/#   &/p'
			fi
			RVRES[$name/$mode]=${got#*|}
			if [ "${expect#create=-110}" != "$expect" ]; then
				TIMES[${#TIMES[@]}]="$desc:$(cat $CAP.ms)"
			fi
			if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
		done
		# rv0's table has 32 entries: 20 is empty, 40 is past the table.
		index_case "rv0: sgid index of an empty GID slot fails with ENODATA [$mode]" \
			$mode -61 20 ::ffff:192.0.2.2 rv0
		index_case "rv0: sgid index past the GID table fails with EINVAL [$mode]" \
			$mode -22 40 ::ffff:192.0.2.2 rv0
		if [ $mode = Rust ]; then
			takeover_off || { ktap_print_msg "cannot disable the takeover"; return 1; }
		fi
	done
	# A created AH must be in the dump, the same with both cores; a failed
	# create must have left no line with either (not two empty dumps
	# taken for the same one).
	for c in "${RVCASES[@]}"; do
		IFS='|' read -r name _ _ _ _ expect _ <<<"$c"
		ok=0
		if [ "${expect#create=0 }" != "$expect" ]; then
			desc="rv0: $name: same AH dump with both cores"
			[ -n "${RVRES[$name/C]}" ] && [ "${RVRES[$name/C]}" = "${RVRES[$name/Rust]}" ] && ok=1
		else
			desc="rv0: $name: no AH in the dump with either core"
			[ -z "${RVRES[$name/C]}" ] && [ -z "${RVRES[$name/Rust]}" ] && ok=1
		fi
		if [ $ok = 1 ]; then
			ktap_test_pass "$desc"
		else
			ktap_print_msg "C:    ${RVRES[$name/C]:-(no line)}"
			ktap_print_msg "Rust: ${RVRES[$name/Rust]:-(no line)}"
			ktap_test_fail "$desc"
		fi
	done
	ksft_check "rv0: no AH left in the dump" \
		test "$(grep -vc '^#' $RV_DUMP)" = 0
}

# gid_indexes DEV [TYPE] - GIDX[SGID]: the index of each source GID of
# CASES in DEV's table (of TYPE when given).  The GID table does not
# change during a run: each is looked up once.
gid_indexes() {
	local c sgid
	for c in "${CASES[@]}"; do
		IFS='|' read -r _ _ sgid _ <<<"$c"
		[ -n "${GIDX[$sgid]}" ] || GIDX[$sgid]=$(gid_index "$1" "$sgid" ${2:+"$2"})
	done
}

# ah_diff_main - the test.  rverbs_qp_diff.sh sources this file for its
# set-up, scenarios and probe(), and runs its own main.
ah_diff_main() {
	ktap_print_header
	setup || ktap_exit_fail_msg "setup failed"
	start_capture || ktap_exit_fail_msg "tcpdump did not start"
	mapfile -t CASES < <(scenarios)
	declare -A GIDX
	gid_indexes rxe0
	# Two results per scenario and per raw-index case, and a timing check for
	# each timeout.
	timeouts=$(printf '%s\n' "${CASES[@]}" | grep -c '|create=-110 ')
	rv_cases=$((${#CASES[@]} + $(rv_scenarios | wc -l)))
	ktap_set_plan $((${#CASES[@]} * 2 + 4 + rv_cases * 3 + 5 + timeouts * 4))

	for mode in C Rust; do
		if [ $mode = Rust ]; then
			takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
		fi
		for c in "${CASES[@]}"; do
			IFS='|' read -r name prep sgid dgid args expect ctr <<<"$c"
			$prep
			all_before=$(counters_all)
			before=$(counter "$ctr")
			got=$(probe "$sgid" "$dgid" $args)
			after=$(counter "$ctr")
			all_after=$(counters_all)
			desc="$name [$mode]"
			ok=1
			[ "$got" = "$expect" ] || ok=0
			if [ $mode = Rust ] && [ "$ctr" != - ] && [ $((after - before)) != 1 ]; then
				ok=0
				ktap_print_msg "$desc: counter $ctr moved by $((after - before)), not 1"
			fi
			if { [ $mode = C ] || [ "$ctr" = - ]; } && [ "$all_before" != "$all_after" ]; then
				ok=0
				ktap_print_msg "$desc: the Rust core's counters moved:"
				diff <(echo "$all_before") <(echo "$all_after") | sed -n 's/^[<>]/#   &/p'
			fi
			[ "$got" = "$expect" ] || ktap_print_msg "$desc: got '$got', want '$expect'"
			if [ "${expect#create=-110}" != "$expect" ]; then
				TIMES[${#TIMES[@]}]="$name [$mode]:$(cat $CAP.ms)"
			fi
			if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
		done
		# Raw GID indexes: an empty slot of the table, and the last index.
		index_case "sgid index of an empty GID slot fails with ENODATA [$mode]" \
			$mode -61 20 ::ffff:192.0.2.2
		index_case "sgid index 255 (past the entries) fails with ENODATA [$mode]" \
			$mode -61 255 ::ffff:192.0.2.2
		if [ $mode = Rust ]; then
			takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
		fi
	done

	rv_phase || ktap_exit_fail_msg "rv0 setup failed"

	# ib_core bounds neighbour resolution by 1000 ms; so must Rust.
	for t in "${TIMES[@]}"; do
		ms=${t##*:}
		ksft_check "${t%:*} gave up after 1000 ms (took $ms ms)" test "$ms" -ge 1000 -a "$ms" -lt 3000
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	ah_diff_main
	ktap_finished
fi
