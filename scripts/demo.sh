#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - what "make run" shows, inside the VM.
#
# Loads rverbs.ko into Debian's stock kernel, brings up soft-RoCE between
# two network namespaces (rxe0 here, rxe1 in netns "peer", on a veth pair;
# no packet leaves the guest), shows the devices and UD traffic between
# them, then tears everything down and unloads rverbs.
set -e
. "$(dirname "$0")/../tests/lib.sh"

step() {
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

cleanup() {
	rdma link del rxe0 2>/dev/null || true
	ip netns exec $NS rdma link del rxe1 2>/dev/null || true
	ns_cleanup
	rmmod rverbs 2>/dev/null || true
}
trap cleanup EXIT

step "kernel $(uname -r), loading rverbs.ko"
kmsg_mark
insmod "$RVERBS_KO"
kmsg_since | sed 's/^/  /'
echo "  /sys/kernel/debug/rverbs/version: $(cat /sys/kernel/debug/rverbs/version)"

step "soft-RoCE: rxe0 on veth0 ($IP4_A), rxe1 on veth1 ($IP4_B) in netns $NS"
modprobe rdma_rxe
ns_setup
rdma link add rxe0 type rxe netdev veth0
ip netns exec $NS rdma link add rxe1 type rxe netdev veth1
echo "\$ rdma link"
rdma link

step "ibv_devinfo -d rxe0"
ibv_devinfo -d rxe0

step "UD ping-pong between the namespaces (ibv_ud_pingpong)"
gid_a=$(gid_index rxe0 ::ffff:$IP4_A)
gid_b=$(gid_index rxe1 ::ffff:$IP4_B)
ip netns exec $NS ibv_ud_pingpong -d rxe1 -g "$gid_b" -n 20 >/dev/null &
sleep 2
ibv_ud_pingpong -d rxe0 -g "$gid_a" -n 20 $IP4_B
wait

step "tearing down and unloading rverbs"
rdma link del rxe0
ip netns exec $NS rdma link del rxe1
rmmod rverbs
echo "  rdma link: $(rdma link | wc -l) links; debugfs rverbs: $(ls -d /sys/kernel/debug/rverbs 2>/dev/null || echo gone)"
