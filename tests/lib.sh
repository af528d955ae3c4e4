# SPDX-License-Identifier: GPL-2.0
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

# gid_index DEV IP4 - index of the RoCE v2 IPv4-mapped GID of IP4 on port 1.
gid_index() {
	local dev=$1 ip=$2 want f i type
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		type=$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/"$i" 2>/dev/null)
		if [ "$(cat "$f")" = "$want" ] && [ "$type" = "RoCE v2" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}
