#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rv devices and soft-RoCE on the same host, in the same namespaces and on
# the same netdevs, with traffic. rdma_rxe finds its devices by netdev in
# ib_core's netdev table and takes them for a struct rxe_dev; rv devices
# are not in that table, so rxe must neither see them (it accepts their
# netdevs as free ones) nor write into them: not when its UD traffic flows
# beside them, not on MTU changes and link flaps of their netdevs, not for
# RoCE v2 packets (unicast and multicast) arriving at a netdev that only an
# rv device uses, in a namespace where rxe has its UDP socket. The runner
# checks the guest log (oops, WARN, lockdep, KASAN on the debug kernel,
# which would see rxe's writes past the end of an rv device). All traffic
# stays inside this machine (TEST-NET-1/-2 addresses, veth pairs, netns).

. "$(dirname "$0")/lib.sh"

NS2=peer2
IP4_C=198.51.100.1
IP4_D=198.51.100.2
GROUP=239.1.2.3
PACKETS=200

cleanup() {
	teardown
	ip link del veth2 2>/dev/null
	ip netns del $NS2 2>/dev/null
	true
}
trap cleanup EXIT

# rx_packets DEV [NETNS] - packets received by DEV.
rx_packets() {
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" cat /sys/class/net/"$1"/statistics/rx_packets
	else
		cat /sys/class/net/"$1"/statistics/rx_packets
	fi
}

# active DEV - the RDMA device's port 1 is ACTIVE.
active() {
	ibv_devinfo -d "$1" 2>/dev/null | grep -q 'state:.*PORT_ACTIVE'
}

# pingpong ITERS PORT - ibv_ud_pingpong from rxe0 here to rxe1 in $NS.
pingpong() {
	local iters=$1 port=$2 srv rc gid_a gid_b
	gid_a=$(gid_index rxe0 ::ffff:$IP4_A) && gid_b=$(gid_index rxe1 ::ffff:$IP4_B) || return 1
	ip netns exec $NS timeout 120 ibv_ud_pingpong -d rxe1 -g "$gid_b" -n "$iters" -p "$port" \
		>/tmp/rv0_coexist.srv 2>&1 &
	srv=$!
	sleep 2
	timeout 120 ibv_ud_pingpong -d rxe0 -g "$gid_a" -n "$iters" -p "$port" $IP4_B \
		>/tmp/rv0_coexist.cli 2>&1
	rc=$?
	wait $srv || rc=1
	sed 's/^/# /' /tmp/rv0_coexist.cli
	[ $rc = 0 ] && grep -q "$iters iters" /tmp/rv0_coexist.cli
}

# flap - MTU changes and link flaps on rv2's netdev (which rxe's notifier
# sees too), MTU changes on veth0 (rv0's and rxe0's).
flap() {
	local i
	for ((i = 0; i < 5; i++)); do
		ip link set veth2 mtu 9000 && ip link set veth2 down && sleep 0.2 &&
			ip link set veth2 up && ip link set veth2 mtu 1500 &&
			ip link set veth0 mtu 4000 && ip link set veth0 mtu 1500 || return 1
		sleep 0.2
	done
}

# send_roce NETNS SRC DST - RoCE v2 packets (UDP to port 4791: a BTH of a
# UD SEND_ONLY to QP 1, a DETH, a payload) from NETNS to DST, a unicast
# address or a multicast group reached through SRC's device.
send_roce() {
	ip netns exec "$1" python3 - "$2" "$3" "$PACKETS" <<'PY'
import socket, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bth = bytes([0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x01])
deth = bytes([0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02])
pkt = bth + deth + bytes(64) + bytes(4)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(src))
for _ in range(n):
    s.sendto(pkt, (dst, 4791))
PY
}

# wire_moved DEV NAME N - rv device DEV's wire counters (debugfs) against
# $WIRE_BEFORE: NAME moved by exactly N, and no other counter moved. What
# rv did with each packet, by its reason.
wire_moved() {
	local k v want
	local -A b=()
	while read -r k v; do
		b[$k]=$v
	done <<<"$WIRE_BEFORE"
	while read -r k v; do
		[[ $k == \#* ]] && continue
		want=${b[$k]:-missing}
		[ "$k" = "$2" ] && want=$((b[$k] + $3))
		[ "$v" = "$want" ] || return 1
	done </sys/kernel/debug/rverbs/$1/wire
}

# counted_as DEV NAME N - wire_moved, waited for (the packets are taken in
# softirq), and otherwise what moved.
counted_as() {
	wait_until 10 wire_moved "$@" && return 0
	ktap_print_msg "$1's wire counters, before and after (wanted: $2 +$3, nothing else):"
	diff <(echo "$WIRE_BEFORE") /sys/kernel/debug/rverbs/$1/wire | sed 's/^/# /'
	return 1
}

ktap_print_header
modprobe ib_uverbs && modprobe rdma_rxe && insmod "$RVERBS_KO" && ns_setup &&
	ip netns add $NS2 && ip link add veth2 type veth peer name veth3 &&
	ip link set veth3 netns $NS2 && ip addr add $IP4_C/24 dev veth2 && ip link set veth2 up &&
	ip -n $NS2 addr add $IP4_D/24 dev veth3 && ip -n $NS2 link set veth3 up ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 16

ksft_check "rv devices on veth0, on veth1 in netns $NS and on veth2" \
	bash -c "rdma link add rv0 type rverbs netdev veth0 &&
		ip netns exec $NS rdma link add rv1 type rverbs netdev veth1 &&
		rdma link add rv2 type rverbs netdev veth2"
ksft_check "soft-RoCE on the same netdevs: rxe0 on veth0, rxe1 on veth1 (rxe cannot see rv devices)" \
	rxe_pair_up
ksft_check "all five ports are ACTIVE" \
	bash -c "$(declare -f active); for d in rv0 rv1 rv2 rxe0 rxe1; do active \$d || exit 1; done"
ksft_check "ibv_ud_pingpong rxe0 -> rxe1 beside rv0 and rv1" pingpong 200 18601

# Traffic while rv devices' netdevs change.
pingpong 2000 18602 >/tmp/rv0_coexist.pp 2>&1 &
pp=$!
ksft_check "MTU changes and link flaps of rv devices' netdevs with rdma_rxe loaded" flap
wait $pp
pp_rc=$?
sed 's/^/# /' /tmp/rv0_coexist.pp
ksft_check "ibv_ud_pingpong rxe0 -> rxe1 went on meanwhile" test $pp_rc = 0
ksft_check "rv0, rv2 and rxe0 are ACTIVE again" \
	bash -c "$(declare -f active); sleep 1; for d in rv0 rv2 rxe0; do active \$d || exit 1; done"

# RoCE v2 packets at a netdev of rv2 alone, in rxe's namespace (rxe0 gave it
# its UDP socket there): rxe looks the netdev up and must find nothing.
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton("'$GROUP'") + socket.inet_aton("'$IP4_C'"))
time.sleep(60)' &
joined=$!
sleep 0.5
before=$(rx_packets veth2)
WIRE_BEFORE=$(cat /sys/kernel/debug/rverbs/rv2/wire)
ksft_check "$PACKETS unicast RoCE v2 packets sent to rv2's netdev" send_roce $NS2 $IP4_D $IP4_C
ksft_check "$PACKETS multicast RoCE v2 packets sent to $GROUP on rv2's netdev" \
	send_roce $NS2 $IP4_D $GROUP
sleep 0.5
after=$(rx_packets veth2)
ktap_print_msg "veth2 received $((after - before)) packets"
ksft_check "veth2 received them all" test $((after - before)) -ge $((2 * PACKETS))
# They are for QP 1, which rv2 does not have (and multicast has no groups
# on rv devices yet): rv2 passed each one on to the UDP layer untouched,
# which gave it to rxe0's socket there, and rxe looked the netdev up and
# found nothing (rxe has no device there).
ksft_check "rv2 passed each of them on to the UDP layer, and did nothing else" \
	counted_as rv2 passed_on $((2 * PACKETS))
kill $joined 2>/dev/null
wait $joined 2>/dev/null
WIRE_BEFORE=$(cat /sys/kernel/debug/rverbs/rv0/wire)
ksft_check "RoCE v2 packets at rv0's netdev (rxe0's too) from $NS" \
	send_roce $NS $IP4_B $IP4_A
# soft-RoCE has a device on veth0: rv0 leaves every packet to it.
ksft_check "rv0 left each of them to soft-RoCE, and did nothing else" \
	counted_as rv0 yield_rxe $PACKETS
ksft_check "rv2 is still ACTIVE with an empty AH table" \
	bash -c "ibv_devinfo -d rv2 | grep -q PORT_ACTIVE &&
		test \$(grep -vc '^#' /sys/kernel/debug/rverbs/rv2/ah) = 0"
ksft_check "ibv_ud_pingpong rxe0 -> rxe1 still works" pingpong 200 18603

ksft_check "all devices go away" \
	bash -c "rdma link del rv0 && ip netns exec $NS rdma link del rv1 && rdma link del rv2 &&
		rdma link del rxe0 && ip netns exec $NS rdma link del rxe1 &&
		test -z \"\$(rdma link show 2>/dev/null)\""

ktap_finished
