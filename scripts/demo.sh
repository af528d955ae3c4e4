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
# counters that Rust resolved the address handles. Then it switches back to
# C, tears everything down and unloads rverbs.
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

step "takeover: ib_core's AH and XRCD verbs now run in Rust"
takeover_on
echo "\$ cat /sys/kernel/livepatch/rverbs_takeover/enabled"
cat /sys/kernel/livepatch/rverbs_takeover/enabled
kmsg_since | grep livepatch | sed 's/^/  /'

step "UD ping-pong between the namespaces (ibv_ud_pingpong), on the Rust core"
gid_a=$(gid_index rxe0 ::ffff:$IP4_A)
gid_b=$(gid_index rxe1 ::ffff:$IP4_B)
ip netns exec $NS ibv_ud_pingpong -d rxe1 -g "$gid_b" -n 20 >/dev/null &
sleep 2
ibv_ud_pingpong -d rxe0 -g "$gid_a" -n 20 $IP4_B
wait

step "rverbs counters: both AHs resolved by the Rust core"
echo "(each end's AH through a neighbour entry that the ping-pong's TCP"
echo " handshake had just made valid: read at once, no ARP wait)"
echo "\$ cat /sys/kernel/debug/rverbs/counters"
grep -v '^end$' /sys/kernel/debug/rverbs/counters | sed 's/^/  /'

step "back to C, tearing down and unloading rverbs"
takeover_off
rdma link del rxe0
ip netns exec $NS rdma link del rxe1
rmmod rverbs
echo "  rdma link: $(rdma link | wc -l) links; debugfs rverbs: $(ls -d /sys/kernel/debug/rverbs 2>/dev/null || echo gone)"
