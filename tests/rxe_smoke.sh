#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soft-RoCE smoke test: rxe0 on veth0, rxe1 on its peer veth1 in network
# namespace "peer"; both ports come up with their IPv4-mapped RoCE v2 GIDs,
# and UD and RC traffic flows between the namespaces.  Every packet stays
# inside this machine (192.0.2.0/24, TEST-NET-1).

. "$(dirname "$0")/lib.sh"

ITERS=50

trap teardown EXIT

ktap_print_header
ktap_set_plan 11

modprobe rdma_rxe || ktap_exit_fail_msg "cannot load rdma_rxe"
ns_setup || ktap_exit_fail_msg "cannot set up veth0/veth1 and netns $NS"

ksft_check "rdma link add rxe0 on veth0" rdma link add rxe0 type rxe netdev veth0
ksft_check "rdma link add rxe1 on veth1 in netns $NS" \
	ip netns exec $NS rdma link add rxe1 type rxe netdev veth1

ksft_check "rdma link lists both devices" \
	bash -c 'rdma link | grep -q "link rxe0/1 state ACTIVE .* netdev veth0" &&
		 rdma link | grep -q "link rxe1/1 state ACTIVE"'

info=$(ibv_devinfo -d rxe0 -v 2>&1)
ksft_check "ibv_devinfo: rxe0 port 1 is PORT_ACTIVE" \
	grep -q 'state:.*PORT_ACTIVE' <<<"$info"
ksft_check "ibv_devinfo: rxe0 link layer is Ethernet" \
	grep -q 'link_layer:.*Ethernet' <<<"$info"
ksft_check "ibv_devinfo: rxe0 has the RoCE v2 GID of $IP4_A" \
	grep -q "GID\[ *[0-9]*\]:.*::ffff:$IP4_A, RoCE v2" <<<"$info"

gid_a=$(gid_index rxe0 ::ffff:$IP4_A)
gid_b=$(gid_index rxe1 ::ffff:$IP4_B)
ksft_check "IPv4-mapped RoCE v2 GIDs found in sysfs" test -n "$gid_a" -a -n "$gid_b"

# pingpong: server in netns $NS on rxe1, client here on rxe0.
pingpong() {
	local prog=$1 port=$2 srv rc
	ip netns exec $NS timeout 120 $prog -d rxe1 -g "$gid_b" -n $ITERS -p "$port" \
		>/tmp/$prog.srv 2>&1 &
	srv=$!
	sleep 2
	timeout 120 $prog -d rxe0 -g "$gid_a" -n $ITERS -p "$port" $IP4_B >/tmp/$prog.cli 2>&1
	rc=$?
	wait $srv || rc=1
	sed 's/^/# /' /tmp/$prog.cli
	[ $rc = 0 ] && grep -q "$ITERS iters" /tmp/$prog.cli
}
ksft_check "ibv_ud_pingpong rxe0 -> rxe1 across namespaces" pingpong ibv_ud_pingpong 18515
ksft_check "ibv_rc_pingpong rxe0 -> rxe1 across namespaces" pingpong ibv_rc_pingpong 18516

ksft_check "rdma link del rxe0 and rxe1" \
	bash -c 'rdma link del rxe0 && ip netns exec '$NS' rdma link del rxe1'
ksft_check "no RDMA link is left" test -z "$(rdma link show 2>/dev/null)"

ktap_finished
