#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rv0, rverbs' software RoCE device: its link type and its life. Creating
# and deleting devices with rdma(8) (several at once, refused duplicates,
# VLANs and netdevs already used by soft-RoCE), and taking them away while
# userspace holds objects on them: rdma link del, ip link del, rmmod rverbs,
# rmmod rdma_rxe (whose unregistration of its driver id takes rv devices
# too). Nothing may hang, crash or leak; the guest log is checked by the
# runner. With rdma_rxe loaded, its netdev notifier also sees rv0's netdev:
# events on it must leave rv0 and the kernel unharmed, and rv0's own port
# events (which rverbs sends: ib_core does so only for devices in its
# netdev table) come once per change.

. "$(dirname "$0")/lib.sh"

PROBE=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ah_probe
DBG=/sys/kernel/debug/rverbs

trap 'exec 3>&- 4>&- 2>/dev/null; teardown; ip link del veth2 2>/dev/null; ip link del vethr0 2>/dev/null' EXIT

# ib_exists DEV - whether the RDMA device DEV is registered.
ib_exists() { [ -e /sys/class/infiniband/"$1" ]; }

# wait_gone DEV - wait up to 10 s for DEV to be unregistered.
wait_gone() {
	local i
	for ((i = 0; i < 100; i++)); do
		ib_exists "$1" || return 0
		sleep 0.1
	done
	return 1
}

# Holders get none of the other holders' stdin writers (3, 4): each must
# see end of file when its own is closed.

# hold DEV FD SGID - start ah_probe holding a PD and an AH (multicast, no
# resolution) from GID SGID on DEV with its stdin on FD; HOLD_PID is its
# pid.
hold() {
	local fifo=/tmp/rv0_link.$2
	rm -f $fifo.in $fifo.out && mkfifo $fifo.in || return 1
	$PROBE -d "$1" -s "$(gid_index "$1" "$3")" -g ::ffff:239.1.1.1 -H \
		<$fifo.in >$fifo.out 3>&- 4>&- &
	HOLD_PID=$!
	eval "exec $2>$fifo.in"
	wait_line $fifo.out created || { sed 's/^/# holder: /' $fifo.out; return 1; }
}

# hold_xrcd DEV FD - as hold, with an XRC domain, a CQ and a UD QP whose
# three rings the holder maps, and a memory region of 4 pages
# (uverbs_hold -c -q -m).
hold_xrcd() {
	local fifo=/tmp/rv0_link.$2
	rm -f $fifo.in $fifo.out && mkfifo $fifo.in || return 1
	"$RVERBS_TEST_BIN"/uverbs_hold -c -q -m "$1" <$fifo.in >$fifo.out 3>&- 4>&- &
	HOLD_PID=$!
	eval "exec $2>$fifo.in"
	wait_line $fifo.out created || { sed 's/^/# holder: /' $fifo.out; return 1; }
}

wait_line() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -qx "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# release FD PID - let the holder go on (destroy, close) and wait for it.
release() {
	eval "exec $1>&-"
	wait "$2"
}

# both_answer DEV... - each DEV is ACTIVE and has veth0's IPv4 GID (ib_core's
# GID management fills the tables shortly after registration).
both_answer() {
	local dev i
	for dev in "$@"; do
		ibv_devinfo -d "$dev" | grep -q PORT_ACTIVE || return 1
		for ((i = 0; i < 50; i++)); do
			[ -n "$(gid_index "$dev" "::ffff:$IP4_A")" ] && break
			sleep 0.1
		done
		[ -n "$(gid_index "$dev" "::ffff:$IP4_A")" ] || return 1
	done
}

# link_fails ARGS - rdma link add ARGS fails with the message of errno MSG.
link_fails() {
	local msg=$1 out
	shift
	out=$(rdma link add "$@" 2>&1) && return 1
	grep -q "$msg" <<<"$out" || { ktap_print_msg "rdma link add $*: $out"; return 1; }
}

ktap_print_header
modprobe ib_uverbs && modprobe 8021q && insmod "$RVERBS_KO" && ns_setup &&
	ip link add veth2 type veth peer name veth3 && ip link set veth2 up && ip link set veth3 up &&
	ip addr add 198.19.0.1/24 dev veth2 || ktap_exit_fail_msg "setup failed"
ktap_set_plan 33

# Creation.
ksft_check "rdma link add rv0 type rverbs netdev veth0" rdma link add rv0 type rverbs netdev veth0
ksft_check "rv0 is listed on veth0, port ACTIVE" \
	bash -c 'rdma link show rv0/1 | grep -q "state ACTIVE .*netdev veth0"'
ksft_check "a second device on another netdev (rv1 on veth2)" \
	rdma link add rv1 type rverbs netdev veth2
ksft_check "both have a debugfs directory" test -d $DBG/rv0 -a -d $DBG/rv1
ksft_check "a second device on the same netdev fails with EEXIST" \
	link_fails "File exists" rv2 type rverbs netdev veth0
# ib_core's registration (assign_name) answers ENFILE for a name in use.
ksft_check "a name already taken fails with ENFILE, as ib_core answers" \
	link_fails "Too many open files in system" rv0 type rverbs netdev veth3
ip link add link veth2 name veth2.7 type vlan id 7
ksft_check "a VLAN netdev fails with EPERM, as for soft-RoCE" \
	link_fails "Operation not permitted" rv3 type rverbs netdev veth2.7
ip link del veth2.7
# nldev_newlink looks the netdev up first: ENODEV.
ksft_check "an unknown netdev fails with ENODEV" link_fails "No such device" rv3 type rverbs netdev nosuch0
ksft_check "no device was left by the failures" \
	test "$(find /sys/class/infiniband -mindepth 1 -maxdepth 1 -name 'rv*' | wc -l)" = 2

# Soft-RoCE beside rv devices. rdma_rxe finds its devices by netdev and
# driver id in ib_core's netdev table (ib_device_get_by_netdev) and takes
# what it finds for a struct rxe_dev; rv devices are not in that table (they
# keep their netdev themselves, ops.get_netdev), so rdma_rxe cannot see
# them: it accepts rv0's netdev as a free one.
modprobe rdma_rxe
ksft_check "soft-RoCE cannot see rv0: rxe9 on rv0's netdev is a device of its own" \
	rdma link add rxe9 type rxe netdev veth0
ksft_check "rv0 and rxe9 on veth0 both answer, each with its own GIDs" both_answer rv0 rxe9
rdma link del rxe9
ip link add vethr0 type veth peer name vethr1 && ip link set vethr0 up && ip link set vethr1 up
rdma link add rxe9 type rxe netdev vethr0
ksft_check "rverbs refuses a soft-RoCE netdev (EEXIST)" \
	link_fails "File exists" rv9 type rverbs netdev vethr0
ibv_asyncwatch -d rv0 >/tmp/rv0_link.async 2>&1 &
watch_pid=$!
# has_event TYPE - the watcher has printed an event of TYPE for port 1.
has_event() { grep -q "$1.*port 1" /tmp/rv0_link.async; }
# Each transition waits for its event (up to 10 s) before the next: under
# load (a cold CI run builds the debug kernel beside this boot), a down and
# an up 0.5 s apart reached ib_core's event work as one state, ACTIVE, and
# the watcher saw no PORT_ERR (c11, 2026-12-05).
wait_until 10 grep -q "async event FD" /tmp/rv0_link.async
ip link set veth0 mtu 9000 && ip link set veth0 down && wait_until 10 has_event IBV_EVENT_PORT_ERR
ip link set veth0 up && ip link set veth0 mtu 1500 && wait_until 10 has_event IBV_EVENT_PORT_ACTIVE
ksft_check "MTU and state changes of rv0's netdev with soft-RoCE loaded leave rv0 working" \
	bash -c 'sleep 1; ibv_devinfo -d rv0 | grep -q PORT_ACTIVE'
kill $watch_pid
wait $watch_pid 2>/dev/null
sed 's/^/# /' /tmp/rv0_link.async
ksft_check "rv0's port went down and up once each (async events PORT_ERR, PORT_ACTIVE)" \
	bash -c 'test "$(grep -c "IBV_EVENT_PORT_ERR.*port 1" /tmp/rv0_link.async)" = 1 &&
		test "$(grep -c "IBV_EVENT_PORT_ACTIVE.*port 1" /tmp/rv0_link.async)" = 1'

# On a lockdep kernel rdma_rxe refuses to unload while it has a device
# (rxe_pins_itself): rxe9 goes first there, "rmmod rdma_rxe" below then
# takes rv0 alone.
if rxe_pins_itself; then
	ktap_print_msg "lockdep kernel: rdma_rxe pins itself while it has devices; rxe9 is deleted first"
	rdma link del rxe9
fi

# Taking devices away under live objects.
hold rv1 3 ::ffff:198.19.0.1 && pd_pid=$HOLD_PID && hold_xrcd rv1 4 && xrcd_pid=$HOLD_PID ||
	ktap_exit_fail_msg "cannot hold objects on rv1"
ksft_check "rv1 holds two PDs (one per holder), an AH, an XRCD, a mapped CQ, a mapped QP and an MR" \
	bash -c "grep -qx 'pd 2 max [0-9]*' $DBG/rv1/resources && grep -qx 'ah 1 max [0-9]*' $DBG/rv1/resources && grep -qx 'xrcd 1 max [0-9]*' $DBG/rv1/resources && grep -qx 'cq 1 max [0-9]*' $DBG/rv1/resources && grep -qx 'qp 1 max [0-9]*' $DBG/rv1/resources && grep -qx 'mr 1 max [0-9]*' $DBG/rv1/resources && grep -qx 'vmpin: 16' /tmp/rv0_link.4.out"
ksft_check "rdma res show pd lists rv1's PD" bash -c 'rdma res show pd dev rv1 | grep -q rv1'
ksft_check "rdma link del rv1 with open contexts and live objects" timeout 30 rdma link del rv1
ksft_check "rv1 is gone, with its debugfs directory" bash -c "! test -e /sys/class/infiniband/rv1 && ! test -e $DBG/rv1"
release 3 $pd_pid
rc1=$?
release 4 $xrcd_pid
rc2=$?
sed 's/^/# holder: /' /tmp/rv0_link.3.out /tmp/rv0_link.4.out
ksft_check "the holders ended normally after their device went away" test $rc1 = 0 -a $rc2 = 0
# The ring stays mapped (its pages) after the device went: the holder read
# its header. uverbs destroyed the CQ with the device; the holder's own
# destroy then succeeds, as for its PD and XRCD.
ksft_check "the CQ ring stayed readable in the holder after rdma link del" \
	grep -qx 'ring: log2 7 mask 255' /tmp/rv0_link.4.out
ksft_check "so did the QP's send and receive rings" \
	grep -Eqx 'qp rings: sq log2 [0-9]+ mask 127 rq log2 [0-9]+ mask 127' /tmp/rv0_link.4.out
# uverbs deregistered the MR with the device: its pages were unpinned then.
ksft_check "the MR's pages were unpinned when rv1 went away" \
	grep -qx 'vmpin after: 0' /tmp/rv0_link.4.out

rdma link add rv1 type rverbs netdev veth2
hold rv1 3 ::ffff:198.19.0.1 && pd_pid=$HOLD_PID && hold_xrcd rv1 4 && xrcd_pid=$HOLD_PID ||
	ktap_exit_fail_msg "cannot hold objects on rv1"
ksft_check "ip link del of rv1's netdev with live objects does not hang" timeout 30 ip link del veth2
ksft_check "rv1 went away with its netdev" wait_gone rv1
release 3 $pd_pid
r3=$?
release 4 $xrcd_pid
r4=$?
# The AH's destroy on a context whose device went away must report success
# (0), as rdma-core reports any destroy after a device's removal: the
# object went with the device.  An errno here is a failure, not an answer.
ksft_check "... and both holders ended normally (exit 0, the AH's destroy answered 0)" \
	bash -c "test $r3 = 0 -a $r4 = 0 && grep -qx 'destroy: 0' /tmp/rv0_link.3.out"

hold rv0 3 ::ffff:$IP4_A && pd_pid=$HOLD_PID || ktap_exit_fail_msg "cannot hold objects on rv0"
ksft_check "rmmod rdma_rxe while rv0 exists succeeds" timeout 30 modprobe -r rdma_rxe
ksft_check "rmmod rdma_rxe took rv0 with it (shared driver id), rverbs stays loaded" \
	bash -c '! test -e /sys/class/infiniband/rv0 && test -d /sys/module/rverbs'
release 3 $pd_pid
r3=$?
ksft_check "... and the holder ended normally (exit 0, the AH's destroy answered 0)" \
	bash -c "test $r3 = 0 && grep -qx 'destroy: 0' /tmp/rv0_link.3.out"
ksft_check "rv0 can be created again" rdma link add rv0 type rverbs netdev veth0

hold rv0 3 ::ffff:$IP4_A && pd_pid=$HOLD_PID && hold_xrcd rv0 4 && xrcd_pid=$HOLD_PID ||
	ktap_exit_fail_msg "cannot hold objects on rv0"
ksft_check "rmmod rverbs with rv0, open contexts, a mapped CQ ring and a mapped QP succeeds" timeout 30 rmmod rverbs
ksft_check "rv0 and the link type are gone" \
	bash -c '! test -e /sys/class/infiniband/rv0 && ! test -d /sys/module/rverbs'
release 3 $pd_pid
rc1=$?
release 4 $xrcd_pid
rc2=$?
sed 's/^/# holder: /' /tmp/rv0_link.4.out
ksft_check "the rings' holder read them after rverbs was gone, its MR unpinned, and ended normally" \
	bash -c "test $rc1 = 0 && grep -qx 'destroy: 0' /tmp/rv0_link.3.out && test $rc2 = 0 && grep -qx 'ring: log2 7 mask 255' /tmp/rv0_link.4.out && grep -Eqx 'qp rings: sq log2 [0-9]+ mask 127 rq log2 [0-9]+ mask 127' /tmp/rv0_link.4.out && grep -qx 'vmpin after: 0' /tmp/rv0_link.4.out"
ksft_check "rverbs loads again and makes rv0" \
	bash -c "insmod '$RVERBS_KO' && rdma link add rv0 type rverbs netdev veth0 && rdma link del rv0"

ktap_finished
