#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The suite's runner (tests/run_suite.sh) after a test that leaves the
# network changed: the run fails and names it, and what it left is undone
# before the next test, so that one failure is not reported again by every
# test after it (CI, 2026-12-06: rverbs_rdmacore_diff.sh stopped by the
# runner's bound left soft-RoCE and its namespace, and the demo after it
# failed all six of its cases).  Runs the runner on a tree of two tests of
# its own: the first loads soft-RoCE, adds a namespace with a process in
# it, a veth pair, an RDMA link and a route, leaves a process running in
# this namespace, and fails; the second checks that none of it is there.
# The run names the first test twice: in the network state case and in the
# processes case (what a test leaves running fails the run since
# 2026-12-07).  Inside the VM only: it changes the guest's network.

. "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d /tmp/rverbs_harness.XXXXXX)
cleanup() {
	ip netns pids rvharness 2>/dev/null | xargs -r kill -9 2>/dev/null
	[ -s "$TMP/stray" ] && kill -9 "$(cat "$TMP/stray")" 2>/dev/null
	ip netns del rvharness 2>/dev/null
	rdma link del rxe9 2>/dev/null
	ip link del veth8 2>/dev/null
	modprobe -r rdma_rxe 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ktap_print_header
ktap_set_plan 7

fake=$TMP/fake
mkdir -p "$fake/tests"
ln -s "$RVERBS_TOP/scripts" "$fake/scripts"
cp "$RVERBS_TOP/tests/run_suite.sh" "$RVERBS_TOP/tests/settings" "$fake/tests/"
printf 'TEST_PROGS := t_leave.sh t_after.sh\n' >"$fake/tests/Makefile"
cat >"$fake/tests/t_leave.sh" <<EOF
#!/bin/bash
echo "TAP version 13"; echo "1..1"
modprobe rdma_rxe && ip netns add rvharness &&
	ip link add veth8 type veth peer name veth9 && ip link set veth8 up &&
	ip addr add 198.51.100.1/24 dev veth8 && ip route add 203.0.113.0/24 via 198.51.100.2 &&
	rdma link add rxe9 type rxe netdev veth8 && touch $TMP/set-up
ip netns exec rvharness sleep 1000 </dev/null >/dev/null 2>&1 &
echo \$! >$TMP/sleeper
sleep 1001 </dev/null >/dev/null 2>&1 &
echo \$! >$TMP/stray
echo "not ok 1 a test that fails and leaves everything behind"
exit 1
EOF
cat >"$fake/tests/t_after.sh" <<EOF
#!/bin/bash
echo "TAP version 13"; echo "1..1"
left=
[ -e /run/netns/rvharness ] && left+=" netns"
[ -e /sys/class/net/veth8 ] && left+=" veth8"
[ -n "\$(rdma link show 2>/dev/null)" ] && left+=" rdma-link"
[ -e /sys/module/rdma_rxe ] && left+=" rdma_rxe"
ip route show | grep -q 203.0.113.0 && left+=" route"
kill -0 \$(cat $TMP/sleeper) 2>/dev/null && left+=" process"
kill -0 \$(cat $TMP/stray) 2>/dev/null && left+=" stray"
[ -z "\$left" ] && echo "ok 1 nothing left" || { echo "not ok 1 left:\$left"; exit 1; }
EOF
chmod +x "$fake/tests/"t_*.sh
# As run_suite.sh's net_state sees it.
state() {
	local l
	ip -o route show table all
	ip -o -6 route show table all
	for l in /sys/class/net/*; do echo "link ${l##*/}"; done
	for l in /run/netns/*; do [ -e "$l" ] && echo "netns ${l##*/}"; done
}
before=$(state)
# Through a pipe: kselftest's runner opens /dev/stdout again for each
# test's output, which on a file would write over the start of it.
RVERBS_TESTS="t_leave.sh t_after.sh" "$fake/tests/run_suite.sh" "$TMP/bin" 2>&1 | cat >"$TMP/log"
rc=${PIPESTATUS[0]}
sed 's/^/# /' "$TMP/log"

ksft_check "the run fails" test "$rc" != 0
# Else the test after it would find nothing to miss, whatever the runner did.
[ -e "$TMP/set-up" ] || ktap_print_msg "t_leave.sh could not set up what it leaves"
ksft_check "the failing test is named in the network state case" \
	grep -q 'network state # left changed by t_leave.sh$' "$TMP/log"
ksft_check "the test after it found nothing of it (namespace, its process, a process in this namespace, links, RDMA link, route, soft-RoCE)" \
	eval 'test -e "$TMP/set-up" && grep -q "^ok 2 selftests: rverbs: t_after.sh" "$TMP/log"'
ksft_check "the runner killed and named what t_leave.sh left running (sleep)" \
	grep -q 'rverbs: t_leave.sh left processes running, killed: .*sleep' "$TMP/log"
ksft_check "the failing test is named in the processes case" \
	grep -q 'processes # left running by t_leave.sh$' "$TMP/log"
ksft_check "the runner undid all of it (no 'not all of it could be undone')" \
	bash -c "! grep -q 'not all of it could be undone' '$TMP/log'"
ksft_check "the network is as before the run" \
	test "$before" = "$(state)"

ktap_finished
