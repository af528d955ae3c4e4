# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the shell kselftests of rverbs.  Sourced, never run.
#
# Provides the KTAP helpers of the kernel source (ktap_helpers.sh) and:
#   RVERBS_KO         path of the built rverbs.ko
#   ksft_check DESC CMD...   one KTAP test case: ok when CMD succeeds
#   kmsg_mark / kmsg_since   the kernel log written after a mark
#   ns_setup / ns_cleanup    veth0 here, veth1 in netns "peer", with
#                            192.0.2.1/24 and 192.0.2.2/24 (TEST-NET-1)
#                            and 2001:db8::1/64, 2001:db8::2/64
#   rxe_pair_up / teardown   rxe0 and rxe1 on them; undo everything
#   gid_index DEV GID [TYPE] index of a GID of TYPE in DEV's table
#   takeover_on / _off       switch ib_core's verbs to Rust and back
#   wait_until SECS CMD...   poll CMD until it succeeds
#   wait_listen NETNS PORT   until a TCP server listens there
#   counter NAME             a counter of /sys/kernel/debug/rverbs/counters

RVERBS_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${RVERBS_TOP:=$(cd "$RVERBS_TESTS_DIR/.." && pwd)}"
: "${KSFT_DIR:=$("$RVERBS_TOP/scripts/kdir-path.sh" src)/tools/testing/selftests}"
: "${RVERBS_KO:=$RVERBS_TOP/rverbs.ko}"

# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/ktap_helpers.sh"

ksft_check() {
	local desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

kmsg_mark() {
	KMSG_MARK="rverbs-test: mark $$ $RANDOM"
	echo "$KMSG_MARK" >/dev/kmsg
}

kmsg_since() {
	dmesg | sed -n "/$KMSG_MARK/,\$p" | tail -n +2
}

NS=peer
IP4_A=192.0.2.1
IP4_B=192.0.2.2
IP6_A=2001:db8::1
IP6_B=2001:db8::2

ns_setup() {
	ip netns add $NS &&
	ip link add veth0 type veth peer name veth1 &&
	ip link set veth1 netns $NS &&
	ip addr add $IP4_A/24 dev veth0 &&
	ip -6 addr add $IP6_A/64 dev veth0 nodad &&
	ip link set veth0 up &&
	ip -n $NS addr add $IP4_B/24 dev veth1 &&
	ip -n $NS -6 addr add $IP6_B/64 dev veth1 nodad &&
	ip -n $NS link set veth1 up &&
	ip -n $NS link set lo up
}

ns_cleanup() {
	ip link del veth0 2>/dev/null
	ip netns del $NS 2>/dev/null
	true
}

# gid_index DEV GID [TYPE] - index of the entry GID (any IPv6 text form,
# ::ffff:a.b.c.d for IPv4) of type TYPE ("RoCE v2" by default, or
# "IB/RoCE v1") in port 1's GID table of DEV.
gid_index() {
	local dev=$1 want type=${3:-RoCE v2} f i
	want=$(python3 -c 'import socket, sys
b = socket.inet_pton(socket.AF_INET6, sys.argv[1])
print(":".join(b[i:i + 2].hex() for i in range(0, 16, 2)))' "$2") || return 1
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		if [ "$(cat "$f")" = "$want" ] &&
		   [ "$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/"$i" 2>/dev/null)" = "$type" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# wait_until SECONDS CMD... - poll CMD every 0.1 s until it succeeds, for at
# most SECONDS (a bound on a wait, never a timing check: generous, for the
# debug kernel under TCG is many times slower than Debian's).
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

# wait_listen NETNS PORT - wait (up to 60 s) until a TCP socket listens on
# PORT in NETNS: the server side of a ping-pong is ready for its client.
wait_listen() {
	wait_until 60 eval "ip netns exec $1 ss -Hltn 'sport = :$2' | grep -q ."
}

# takeover_on / takeover_off - route ib_core's AH and XRCD verbs to the
# Rust core (load rverbs_takeover.ko) or back to C (disable, unload); both
# wait for the livepatch transition to finish.
RVERBS_TAKEOVER_KO=${RVERBS_TAKEOVER_KO:-$RVERBS_TOP/rverbs_takeover.ko}
LP=/sys/kernel/livepatch/rverbs_takeover

takeover_on() {
	insmod "$RVERBS_TAKEOVER_KO" || return 1
	wait_until 60 eval '[ "$(cat $LP/transition 2>/dev/null)" = 0 ]'
}

takeover_off() {
	[ -d $LP ] || return 0
	echo 0 >$LP/enabled || return 1
	wait_until 60 eval '[ ! -d $LP ]' && rmmod rverbs_takeover
}

# rxe_pins_itself - true when rdma_rxe cannot be unloaded while it has a
# device: on a kernel with lockdep (the debug lane), each soft-RoCE device
# holds a reference to the rdma_rxe module (its sockets' lock classes are
# the module's: sock_lock_init_class_and_name() and sk_owner_set(), see
# drivers/infiniband/sw/rxe/rxe_net.c), so "rmmod rdma_rxe" is refused with
# EBUSY until its devices are deleted.  Debian's kernel has no lockdep.
rxe_pins_itself() {
	[ -e /proc/lockdep ]
}

# counters_all - every counter of the Rust core, its events and its
# error.<errno> lines: a [C] case must leave them all as they were.
counters_all() {
	cat /sys/kernel/debug/rverbs/counters
}

# counter_in TEXT NAME - counter NAME in TEXT, a copy of counters_all (0 if
# absent).
counter_in() {
	awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }' <<<"$1"
}

# counters_moved BEFORE AFTER - each counter that changed between two copies
# of counters_all, as "NAME +DELTA" (or -DELTA) lines, in the file's order.
counters_moved() {
	awk 'NR == FNR { v[$1] = $2; next }
		$1 != "end" && $2 != v[$1] + 0 { d = $2 - v[$1]; printf "%s %s%d\n", $1, (d > 0 ? "+" : ""), d }' \
		<(echo "$1") <(echo "$2")
}

# counter NAME - a counter of /sys/kernel/debug/rverbs/counters (0 if the
# file has no such counter, nothing if there is no file: rverbs unloaded).
counter() {
	local f=/sys/kernel/debug/rverbs/counters
	[ -e $f ] || return 0
	awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }' $f
}

# rxe_pair_up - soft-RoCE on both ends: rxe0 on veth0 here, rxe1 on veth1 in
# netns $NS (ns_setup first).
rxe_pair_up() {
	rdma link add rxe0 type rxe netdev veth0 &&
	ip netns exec $NS rdma link add rxe1 type rxe netdev veth1
}

# teardown - undo whatever a test set up: background jobs, the takeover,
# rxe0/rxe1, the namespaces, rverbs.ko and rdma_rxe. Always succeeds, also
# under "set -e".
teardown() {
	local pids

	pids=$(jobs -p)
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	wait 2>/dev/null || true
	takeover_off || true
	rdma link del rxe0 2>/dev/null || true
	ip netns exec $NS rdma link del rxe1 2>/dev/null || true
	ns_cleanup
	rmmod rverbs 2>/dev/null || true
	modprobe -r rdma_rxe 2>/dev/null || true
}
