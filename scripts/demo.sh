#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - what "make run" shows, inside the VM.
#
# Loads rverbs.ko into Debian's stock kernel, brings up soft-RoCE between
# two network namespaces (rxe0 here, rxe1 in netns "peer", on a veth pair;
# no packet leaves the guest), switches ib_core's address handle verbs to
# the Rust core (rverbs_takeover.ko), runs UD traffic between the
# namespaces with rdma-core's ibv_ud_pingpong, and shows from rverbs'
# counters that Rust resolved the address handles. Then it creates rv0,
# rverbs' own software RoCE device written in Rust, on a second veth pair,
# opens it with rdma-core (its unmodified rxe provider) and creates an
# address handle on it, shown from rv0's debugfs AH dump, and runs a UD
# ping-pong between rv0 and a soft-RoCE device in the other namespace,
# shown from rv0's wire counters, and an RC ping-pong (ibv_rc_pingpong -c,
# the buffers checked) between the same two. Then it switches
# back to C, tears everything down and unloads rverbs.
set -e
. "$(dirname "$0")/../tests/lib.sh"

step() {
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

trap teardown EXIT

step "kernel $(uname -r), loading rverbs.ko"
kmsg_mark
modprobe ib_uverbs
insmod "$RVERBS_KO"
kmsg_since | sed 's/^/  /'
echo "  /sys/kernel/debug/rverbs/version: $(cat /sys/kernel/debug/rverbs/version)"

step "soft-RoCE: rxe0 on veth0 ($IP4_A), rxe1 on veth1 ($IP4_B) in netns $NS"
modprobe rdma_rxe
ns_setup
rxe_pair_up
echo "\$ rdma link"
rdma link

step "ibv_devinfo -d rxe0"
ibv_devinfo -d rxe0

step "takeover: ib_core's AH, XRCD and QP modify verbs now run in Rust"
takeover_on
echo "\$ cat /sys/kernel/livepatch/rverbs_takeover/enabled"
cat /sys/kernel/livepatch/rverbs_takeover/enabled
kmsg_since | grep livepatch | sed 's/^/  /'

step "UD ping-pong between the namespaces (ibv_ud_pingpong), on the Rust core"
gid_a=$(gid_index rxe0 ::ffff:$IP4_A)
gid_b=$(gid_index rxe1 ::ffff:$IP4_B)
ip netns exec $NS ibv_ud_pingpong -d rxe1 -g "$gid_b" -n 20 >/dev/null &
# Until the server listens (2 s were too few in a guest of one starved
# vCPU, w24).
wait_listen $NS 18515
ibv_ud_pingpong -d rxe0 -g "$gid_a" -n 20 $IP4_B
wait

step "rverbs counters: both AHs resolved by the Rust core"
echo "(each end's AH through a neighbour entry that the ping-pong's TCP"
echo " handshake had just made valid: read at once, no ARP wait)"
echo "\$ cat /sys/kernel/debug/rverbs/counters"
grep -v '^end$' /sys/kernel/debug/rverbs/counters | sed 's/^/  /'

step "rv0: rverbs' software RoCE device (Rust ib_device_ops) on veth2 (198.19.0.1)"
ip link add veth2 type veth peer name veth3
ip link set veth3 netns $NS
ip addr add 198.19.0.1/24 dev veth2
ip link set veth2 up
ip -n $NS addr add 198.19.0.2/24 dev veth3
ip -n $NS link set veth3 up
echo "\$ rdma link add rv0 type rverbs netdev veth2"
rdma link add rv0 type rverbs netdev veth2
echo "\$ rdma link show rv0/1"
rdma link show rv0/1
echo "\$ ibv_devinfo -d rv0 -v | grep -E 'hca_id|transport|state|active_mtu|link_layer|XRC|GID'"
ibv_devinfo -d rv0 -v | grep -E 'hca_id|transport|state|active_mtu|link_layer|XRC|GID'

step "an address handle on rv0 through rdma-core (pyverbs), to 198.19.0.2 in netns $NS"
gid_rv=$(gid_index rv0 ::ffff:198.19.0.1)
python3 - "$gid_rv" <<-'PY'
	import sys
	from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
	from pyverbs.device import Context
	from pyverbs.pd import PD

	with Context(name="rv0") as ctx, PD(ctx) as pd:
	    gr = GlobalRoute(dgid=GID("0000:0000:0000:0000:0000:ffff:c613:0002"), sgid_index=int(sys.argv[1]), hop_limit=64)
	    ah = AH(pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))
	    print("  ibv_create_ah on rv0: ok (sgid index %s, the Rust core resolved the MAC)" % sys.argv[1])
	    print("$ cat /sys/kernel/debug/rverbs/rv0/ah")
	    print(open("/sys/kernel/debug/rverbs/rv0/ah").read().rstrip())
	    ah.close()
	PY
echo "  (the peer's veth3 MAC: $(ip netns exec $NS cat /sys/class/net/veth3/address))"
echo "\$ cat /sys/kernel/debug/rverbs/rv0/resources"
sed 's/^/  /' /sys/kernel/debug/rverbs/rv0/resources

step "rv0 carries traffic: UD ping-pong with soft-RoCE (rxe2 on veth3 in netns $NS)"
echo "\$ ip netns exec $NS rdma link add rxe2 type rxe netdev veth3"
ip netns exec $NS rdma link add rxe2 type rxe netdev veth3
gid_rxe2=$(gid_index rxe2 ::ffff:198.19.0.2)
ip netns exec $NS ibv_ud_pingpong -d rxe2 -g "$gid_rxe2" -n 20 -p 18516 >/dev/null &
wait_listen $NS 18516
echo "\$ ibv_ud_pingpong -d rv0 -g $gid_rv -n 20 -p 18516 198.19.0.2"
ibv_ud_pingpong -d rv0 -g "$gid_rv" -n 20 -p 18516 198.19.0.2
wait
echo "rv0's wire counters, the lines that are not zero (every drop would have its own line):"
echo "\$ grep -v ' 0\$' /sys/kernel/debug/rverbs/rv0/wire"
grep -v ' 0$' /sys/kernel/debug/rverbs/rv0/wire | sed 's/^/  /'

step "rv0's reliable connection: RC ping-pong with soft-RoCE, buffers checked (ibv_rc_pingpong -c)"
ip netns exec $NS ibv_rc_pingpong -d rxe2 -g "$gid_rxe2" -n 50 -s 4096 -c -p 18517 >/dev/null &
wait_listen $NS 18517
echo "\$ ibv_rc_pingpong -d rv0 -g $gid_rv -n 50 -s 4096 -c -p 18517 198.19.0.2"
ibv_rc_pingpong -d rv0 -g "$gid_rv" -n 50 -s 4096 -c -p 18517 198.19.0.2
wait
echo "\$ grep -E '^(rc_ack|rc_duplicate|drop_rc_stale) ' /sys/kernel/debug/rverbs/rv0/wire"
grep -E '^(rc_ack|rc_duplicate|drop_rc_stale) ' /sys/kernel/debug/rverbs/rv0/wire | sed 's/^/  /'

step "back to C, tearing down and unloading rverbs"
takeover_off
ip netns exec $NS rdma link del rxe2
rdma link del rv0
ip link del veth2
rdma link del rxe0
ip netns exec $NS rdma link del rxe1
rmmod rverbs
echo "  rdma link: $(rdma link | wc -l) links; debugfs rverbs: $(ls -d /sys/kernel/debug/rverbs 2>/dev/null || echo gone)"
