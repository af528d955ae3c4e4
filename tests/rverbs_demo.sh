#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo of "make run" (scripts/demo.sh) works, in this boot: it exits
# with 0, the UD ping-pong completes on the Rust core, whose counters show
# the two AHs created and destroyed, rv0 carries a ping-pong with
# soft-RoCE (its wire counters), and nothing is left behind.

. "$(dirname "$0")/lib.sh"

ktap_print_header
ktap_set_plan 7

out=$("$RVERBS_TOP/scripts/demo.sh" 2>&1)
rc=$?
sed 's/^/# /' <<<"$out"
ksft_check "make run's demo exits with 0" test $rc = 0
ksft_check "the demo's ibv_ud_pingpong completed" grep -q '20 iters in' <<<"$out"
ksft_check "the demo shows both AHs created and destroyed by Rust" \
	bash -c 'grep -q "^  ah_created 2$" <<<"$1" && grep -q "^  ah_destroyed 2$" <<<"$1"' _ "$out"
ksft_check "the demo shows an AH on rv0 in its debugfs dump, to the peer's MAC" \
	bash -c 'mac=$(sed -n "s/.*peer.s veth3 MAC: \\(.*\\))/\\1/p" <<<"$1"); [ -n "$mac" ] && grep -qE "^1 roce 1 [0-9]+ 0000:0000:0000:0000:0000:ffff:c613:0002 $mac 64 " <<<"$1"' _ "$out"
# UD has no retransmission: ud_pingpong's client sends 20 messages and
# receives 20 echoes, so rv0's wire counts exactly that, and nothing else.
ksft_check "the demo's ping-pong between rv0 and soft-RoCE completed, rv0's wire: sent 20, received 20, nothing else" \
	bash -c '[ "$(grep -c "20 iters in" <<<"$1")" = 2 ] &&
		[ "$(sed -n "/rv0.s wire counters/,/reliable connection/p" <<<"$1" | grep "^  [a-z_]* [0-9]*$")" = "$(printf "  sent 20\n  received 20")" ]' _ "$out"
ksft_check "the demo's RC ping-pong between rv0 and soft-RoCE completed, buffers checked, acknowledged" \
	bash -c 'grep -q "^50 iters in" <<<"$1" && grep -qE "^  rc_ack [1-9][0-9]*$" <<<"$1"' _ "$out"
ksft_check "nothing is left: no RDMA link, no rverbs module" \
	test -z "$(rdma link show 2>/dev/null)" -a ! -e /sys/module/rverbs

ktap_finished
