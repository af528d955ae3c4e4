#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rv0 on the wire: RoCE v2 packets between two network namespaces joined
# by a veth pair (veth0 here, veth1 in namespace $NS).  ibv_ud_pingpong,
# through rdma-core's unmodified rxe provider, between two rv devices
# (rv0 here, rv1 there), then between rv0 and soft-RoCE (rxe1 there) in
# both directions, so that each side checks the other's ICRC; IPv4 and
# IPv6 GIDs, with and without completion events, with the tool's check of
# the received bytes (-c).  Then packets rv0 must drop, sent at it from the
# other namespace through a raw socket, each counted by its reason in
# /sys/kernel/debug/rverbs/rv0/wire: short, bad ICRC, bad opcode, unknown
# QP, bad UDP checksum.

. "$(dirname "$0")/lib.sh"

ITERS=100
# The debug lane (KASAN, lockdep under TCG, each run many times slower)
# keeps one run of each kind: rv1 <- rv0 at the MTU, with events, IPv6;
# rxe1 <- rv0 over IPv4, rv0 <- rxe1 over IPv6.
SIZES="1 17 1024"
FULL=1
[ "${RVERBS_LANE:-}" = debug ] && SIZES=1024 FULL=0
DBG=/sys/kernel/debug/rverbs
PORT=18700

cleanup() {
	rdma link del rv0 2>/dev/null
	rdma link del rv1 2>/dev/null
	rdma link del rxe1 2>/dev/null
	teardown
	rm -f /tmp/rv0_wire.*
	true
}
trap cleanup EXIT

# pingpong SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SERVER_IP SIZE [FLAG]
# - ibv_ud_pingpong's server on SRV_DEV (in namespace SRV_NS, "-" for this
# one) and its client on CLI_DEV; both must finish their ITERS exchanges.
pingpong() {
	local sns=$1 sdev=$2 sgid=$3 cns=$4 cdev=$5 cgid=$6 ip=$7 size=$8 flag=${9:-}
	local srv rc=1 i sx=() cx=()
	[ "$sns" != - ] && sx=(ip netns exec "$sns")
	[ "$cns" != - ] && cx=(ip netns exec "$cns")
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # $flag is empty or one flag
	"${sx[@]}" timeout 60 ibv_ud_pingpong -d "$sdev" -g "$sgid" -s "$size" -n $ITERS \
		-p $PORT $flag >/tmp/rv0_wire.srv 2>&1 &
	srv=$!
	for ((i = 0; i < 50; i++)); do
		# shellcheck disable=SC2086
		"${cx[@]}" timeout 60 ibv_ud_pingpong -d "$cdev" -g "$cgid" -s "$size" -n $ITERS \
			-p $PORT $flag "$ip" >/tmp/rv0_wire.cli 2>&1
		rc=$?
		grep -q "Couldn't connect" /tmp/rv0_wire.cli || break
		sleep 0.1
	done
	wait $srv || rc=1
	if [ "$rc" != 0 ] || ! grep -q "$ITERS iters" /tmp/rv0_wire.cli ||
		! grep -q "$ITERS iters" /tmp/rv0_wire.srv; then
		sed 's/^/# server: /' /tmp/rv0_wire.srv
		sed 's/^/# client: /' /tmp/rv0_wire.cli
		return 1
	fi
}

# wire NAME - rv0's counter NAME.
wire() {
	awk -v n="$1" '$1 == n { print $2 }' $DBG/rv0/wire
}

# gids DEV V4 V6 - sets g4 and g6 to DEV's RoCE v2 GID indexes of the two
# addresses, waiting for ib_core to fill them in.
gids() {
	local i
	g4=
	g6=
	for ((i = 0; i < 100; i++)); do
		g4=$(gid_index "$1" "::ffff:$2")
		g6=$(gid_index "$1" "$3")
		[ -n "$g4" ] && [ -n "$g6" ] && return 0
		sleep 0.1
	done
	return 1
}

# inject WHAT - sends one packet at rv0 (192.0.2.1, UDP port 4791) from
# the other namespace through a raw IPv4 socket: a UD SEND to the QP
# number in $QPN with Q_Key 0x11111111 and a right ICRC, spoilt as WHAT
# says.
inject() {
	ip netns exec "$NS" python3 - "$1" "$IP4_B" "$IP4_A" "${QPN:-17}" <<'EOF'
import socket, struct, sys, zlib

what, src, dst, qpn = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
payload = b"rv0 wire test!!!"
opcode = 0x64 if what != "opcode" else 0x04
bth = struct.pack(">BBHII", opcode, 0, 0xffff, qpn, 0)
deth = struct.pack(">II", 0x11111111, 0x33)
body = bth + deth + payload
udp_len = 8 + len(body) + 4
ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0x1234, 0x4000, 64, 17, 0,
                           socket.inet_aton(src), socket.inet_aton(dst)))
udp = bytearray(struct.pack(">HHHH", 0xc001, 4791, udp_len, 0))
# The ICRC: CRC-32 from the seed of a masked LRH over the headers with
# the variant fields masked, then the rest (zlib's CRC-32 inverts before
# and after: start from ~seed).
pseudo = bytearray(ip) + udp + bytearray(bth)
pseudo[1] = 0xff
pseudo[8] = 0xff
pseudo[10:12] = b"\xff\xff"
pseudo[26:28] = b"\xff\xff"
pseudo[32] = 0xff
icrc = zlib.crc32(bytes(pseudo) + deth + payload, 0xdebb20e3 ^ 0xffffffff)
if what == "icrc":
    icrc ^= 1
packet = udp + body + struct.pack("<I", icrc)
if what == "short":
    packet = udp[:4] + struct.pack(">H", 8 + 6) + udp[6:8] + bth[:6]
if what == "udpsum":
    packet[6:8] = b"\x12\x34"
# The whole IP header is ours (IP_HDRINCL): the ICRC covers its
# identification and flags; the kernel fills in only the checksum.
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(bytes(ip) + bytes(packet), (dst, 0))
EOF
}

# dropped WHAT COUNTER - injecting WHAT moves rv0's COUNTER by one and
# nothing is delivered.
dropped() {
	local before after got
	before=$(wire "$2")
	got=$(wire received)
	inject "$1" || return 1
	wait_until 10 test "$(wire "$2")" = $((before + 1)) || {
		echo "# $2: $before before, $(wire "$2") after"
		return 1
	}
	after=$(wire received)
	[ "$after" = "$got" ]
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup ||
	ktap_exit_fail_msg "setup failed"
n=0
for s in $SIZES; do n=$((n + 1)); done
ktap_set_plan $((n + 14 + 2 * FULL))

rdma link add rv0 type rverbs netdev veth0 &&
	ip netns exec "$NS" rdma link add rv1 type rverbs netdev veth1
ksft_check "rv0 here, rv1 in the other namespace" test $? = 0
gids rv0 $IP4_A $IP6_A && a4=$g4 && a6=$g6 && gids rv1 $IP4_B $IP6_B && b4=$g4 && b6=$g6
ksft_check "both have their IPv4 and IPv6 RoCE v2 GIDs" test $? = 0

for s in $SIZES; do
	ksft_check "rv1 <- rv0, IPv4, $s bytes, checking the bytes (-c)" \
		pingpong "$NS" rv1 "$b4" - rv0 "$a4" $IP4_B $s -c
done
ksft_check "rv1 <- rv0, IPv4, 1000 bytes, with events (-e)" \
	pingpong "$NS" rv1 "$b4" - rv0 "$a4" $IP4_B 1000 -e
ksft_check "rv0 <- rv1, IPv6, 1024 bytes (-c)" \
	pingpong - rv0 "$a6" "$NS" rv1 "$b6" $IP4_A 1024 -c
# counted_clean MIN - rv0 sent and received at least MIN packets and
# dropped none (its counters are printed otherwise).
counted_clean() {
	if [ "$(wire sent)" -ge "$1" ] && [ "$(wire received)" -ge "$1" ] &&
		! grep -q '^drop_.* [1-9]' $DBG/rv0/wire; then
		return 0
	fi
	sed 's/^/# wire: /' $DBG/rv0/wire
	return 1
}
# Each run sends ITERS messages each way.
ksft_check "rv0 counted packets both ways, none dropped" counted_clean $(((n + 2) * ITERS))

ip netns exec "$NS" rdma link del rv1 &&
	ip netns exec "$NS" rdma link add rxe1 type rxe netdev veth1 && gids rxe1 $IP4_B $IP6_B &&
	b4=$g4 && b6=$g6
ksft_check "soft-RoCE (rxe1) in the other namespace instead" test $? = 0
ksft_check "rxe1 <- rv0, IPv4, 1024 bytes (-c)" \
	pingpong "$NS" rxe1 "$b4" - rv0 "$a4" $IP4_B 1024 -c
if [ $FULL = 1 ]; then
	ksft_check "rv0 <- rxe1, IPv4, 17 bytes, with events (-e)" \
		pingpong - rv0 "$a4" "$NS" rxe1 "$b4" $IP4_A 17 -e
	ksft_check "rxe1 <- rv0, IPv6, 1000 bytes (-c)" \
		pingpong "$NS" rxe1 "$b6" - rv0 "$a6" $IP4_B 1000 -c
fi
ksft_check "rv0 <- rxe1, IPv6, 1 byte (-c)" \
	pingpong - rv0 "$a6" "$NS" rxe1 "$b6" $IP4_A 1 -c

ksft_check "a datagram too short for its headers: dropped, counted" dropped short drop_length
ksft_check "a bad ICRC: dropped, counted" dropped icrc drop_icrc
ksft_check "an RC opcode: dropped, counted" dropped opcode drop_opcode
ksft_check "a QP number nobody has: dropped, counted" dropped qpn drop_qpn
ksft_check "a bad UDP checksum: dropped, counted" dropped udpsum drop_udp_checksum
ksft_check "rdma link del rv0 and rmmod rverbs" \
	bash -c 'rdma link del rv0 && rmmod rverbs && [ ! -e /sys/module/rverbs ]'
ktap_finished
