#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rv0's receive hook (a netfilter LOCAL_IN hook, rust/helpers/roce.c) runs
# only in the network namespaces that have an rv device, and only while
# they have one: every packet delivered anywhere else, the host's own
# included, pays nothing for rverbs.  The function tracer counts the
# hook's calls (rverbs_tap_local_in) while pings go over a namespace's
# loopback, each echo and reply a locally delivered packet.  Before, the
# hook was registered in every namespace when rverbs loaded.
#
# Also: a namespace deleted while it has an rv device (the hook goes with
# the namespace, the device's unregistration after it) leaves nothing.

. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
FN=rverbs_tap_local_in
LONELY=rv0tap

cleanup() {
	trace_fn_off
	ip netns del $LONELY 2>/dev/null
	ip netns exec "$NS" rdma link del rv1 2>/dev/null
	teardown
	true
}
trap cleanup EXIT

TRACING_WAS=
# trace_fn_on - the function tracer on the hook alone, from now on.
trace_fn_on() {
	[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
	read -r TRACING_WAS <$T/tracing_on || return 1
	echo 0 >$T/tracing_on &&
		echo $FN >$T/set_ftrace_filter &&
		echo function >$T/current_tracer &&
		echo >$T/trace &&
		echo 1 >$T/tracing_on
}

# trace_fn_off - the tracer and its filter as before trace_fn_on.
trace_fn_off() {
	[ -n "$TRACING_WAS" ] || return 0
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	echo "$TRACING_WAS" >$T/tracing_on
	TRACING_WAS=
}

# hook_calls NETNS - pings over NETNS's loopback ("-": this namespace);
# prints the calls of the hook, anywhere, meanwhile.
hook_calls() {
	local x=()
	[ "$1" != - ] && x=(ip netns exec "$1")
	echo >$T/trace
	"${x[@]}" ping -q -c 3 -i 0.2 -W 2 127.0.0.1 >/dev/null || { echo ping-failed; return; }
	grep -c " $FN" $T/trace
}

# no_calls NETNS... - the hook ran while each pinged.
no_calls() {
	local ns n
	for ns in "$@"; do
		n=$(hook_calls "$ns")
		[ "$n" = 0 ] || { ktap_print_msg "in ${ns/-/this namespace}: $n calls"; return 1; }
	done
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	ip netns add $LONELY && ip -n $LONELY link set lo up && ip -n "$NS" link set lo up ||
	ktap_exit_fail_msg "setup failed"
trace_fn_on || ktap_exit_fail_msg "the function tracer cannot trace $FN"
ktap_set_plan 5

ksft_check "rverbs loaded, no rv device: the hook runs in no namespace (this one, $NS, a new one)" \
	no_calls - "$NS" $LONELY

calls_in_ns() {
	local n
	n=$(hook_calls "$NS")
	[ "$n" != ping-failed ] && [ "$n" -gt 0 ] || { ktap_print_msg "$n calls"; return 1; }
}
ip netns exec "$NS" rdma link add rv1 type rverbs netdev veth1 &&
	ksft_check "rv1 on veth1 in $NS: the hook runs there" calls_in_ns
ip netns exec "$NS" rdma link del rv1
ksft_check "rv1 gone, the last device of $NS: the hook runs in no namespace again" \
	no_calls "$NS" - $LONELY

# A device in a namespace that is deleted under it.
doomed() {
	printf '%s\n' "link add vt0 type veth peer name vt1" "link set vt0 up" "link set vt1 up" |
		ip -n $LONELY -batch - &&
		ip netns exec $LONELY rdma link add rv3 type rverbs netdev vt0 &&
		[ "$(hook_calls $LONELY)" -gt 0 ] &&
		ip netns del $LONELY &&
		wait_until 60 eval '! rdma link show rv3/1 >/dev/null 2>&1'
}
ksft_check "rv3 in a namespace deleted under it: the device goes" doomed
ksft_check "and the hook runs in no namespace" no_calls - "$NS"
ktap_finished
