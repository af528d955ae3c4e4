#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Signals while an AH waits for ARP. ib_core's C core waits for the
# neighbour uninterruptibly; the Rust core's wait is killable: a handled
# signal (handler without SA_RESTART, which rdma-core does not retry) must
# not end it, so the create fails exactly as with C (ETIMEDOUT, after the
# whole 1000 ms), never with EINTR; SIGKILL ends the process, and nothing
# is left behind. The destination (192.0.2.99, TEST-NET-1 on veth0) never
# answers: every packet stays inside the guest.

. "$(dirname "$0")/lib.sh"

PROBE=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ah_probe
SILENT=::ffff:192.0.2.99

trap teardown EXIT

# probe_signal - create an AH to the silent neighbour with a handled signal
# 300 ms into the wait; sets OUT.
probe_signal() {
	ip neigh flush dev veth0
	OUT=$($PROBE -d rxe0 -s "$GID" -g $SILENT -S 300 2>&1)
	sed 's/^/# /' <<<"$OUT"
}

# field NAME - a "NAME: value" of OUT.
field() {
	sed -n "s/^$1: //p" <<<"$OUT"
}

# killed_in_wait - a create waiting for the silent neighbour gets SIGKILL.
killed_in_wait() {
	local pid rc
	ip neigh flush dev veth0
	$PROBE -d rxe0 -s "$GID" -g $SILENT >/dev/null 2>&1 &
	pid=$!
	sleep 0.4
	kill -KILL $pid
	wait $pid
	rc=$?
	[ $rc = 137 ] || { ktap_print_msg "exit status $rc, not 137 (SIGKILL)"; return 1; }
}

# pds - the PDs on rxe0 (ib_core's own included).
pds() {
	rdma res show pd dev rxe0 2>/dev/null | wc -l
}

# nothing_left - rxe0 has no AH, and no more PDs than at the start.
nothing_left() {
	[ -z "$(rdma res show ah dev rxe0 2>/dev/null)" ] && [ "$(pds)" = "$PDS" ]
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rxe0 type rxe netdev veth0 || ktap_exit_fail_msg "setup failed"
GID=$(gid_index rxe0 ::ffff:$IP4_A) || ktap_exit_fail_msg "no GID for $IP4_A"
PDS=$(pds)
ktap_set_plan 10

probe_signal
ksft_check "[C] a handled signal during the ARP wait: ETIMEDOUT, not EINTR" \
	test "$(field create)" = -110 -a "$(field signals)" = 1
ksft_check "[C] ... after the whole 1000 ms" test "$(field elapsed_ms)" -ge 1000
ksft_check "[C] SIGKILL during the wait ends the process (exit 137)" killed_in_wait
ksft_check "[C] ... and nothing is left" nothing_left

takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
timeouts=$(counter error.110)
eintr=$(counter error.4)
created=$(counter ah_created)
probe_signal
ksft_check "[Rust] a handled signal during the ARP wait: ETIMEDOUT, not EINTR" \
	test "$(field create)" = -110 -a "$(field signals)" = 1
ksft_check "[Rust] ... after the whole 1000 ms" test "$(field elapsed_ms)" -ge 1000
ksft_check "[Rust] the Rust core returned it (error.110 +1, no EINTR)" \
	test $(($(counter error.110) - timeouts)) = 1 -a "$(counter error.4)" = "$eintr"
ksft_check "[Rust] SIGKILL during the wait ends the process" killed_in_wait
ksft_check "[Rust] nothing is left: no AH, no PD" nothing_left
ksft_check "[Rust] no AH was counted as created" test "$(counter ah_created)" = "$created"
takeover_off || ktap_exit_fail_msg "cannot disable the takeover"

ktap_finished
