#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rverbs.ko loads into the stock kernel, says so once, creates its debugfs
# directory, and unloads leaving nothing behind: no debugfs entry, no
# module, nothing bad in the kernel log, also over repeated cycles and
# after a load that fails (bad module parameters).

. "$(dirname "$0")/lib.sh"

CYCLES=20

cleanup() {
	rmmod rverbs 2>/dev/null
	true
}
trap cleanup EXIT

ktap_print_header
ktap_set_plan 18

if [ ! -r "$RVERBS_KO" ]; then
	ktap_exit_fail_msg "$RVERBS_KO not built"
fi
rmmod rverbs 2>/dev/null
# The version the module was built with (scripts/version.sh, through
# Kbuild): modinfo's, which debugfs and the load message must repeat.
VERSION=$(modinfo -F version "$RVERBS_KO")
[ -n "$VERSION" ] || ktap_exit_fail_msg "$RVERBS_KO has no modinfo version"
# rverbs.ko uses ib_core's symbols; insmod does not load dependencies.
modprobe ib_core || ktap_exit_fail_msg "cannot load ib_core"

debugfs_before=$(ls /sys/kernel/debug)
kmsg_mark

ksft_check "insmod succeeds" insmod "$RVERBS_KO"

log=$(kmsg_since)
ktap_print_msg "version $VERSION"
ksft_check "load logs exactly one version line" \
	test "$(grep -c "rverbs ${VERSION//./\\.} loaded$" <<<"$log")" = 1

ksft_check "debugfs directory exists" test -d /sys/kernel/debug/rverbs

ksft_check "debugfs version reads modinfo's version" \
	test "$(cat /sys/kernel/debug/rverbs/version 2>/dev/null)" = "$VERSION"

ksft_check "debugfs counters start at zero" \
	test "$(awk '$1 != "end" { s += $2 } END { print s + 0 }' /sys/kernel/debug/rverbs/counters)" = 0

ksft_check "module is live with no users" \
	test "$(cat /sys/module/rverbs/refcnt 2>/dev/null)" = 0

ksft_check "rmmod succeeds" rmmod rverbs

ksft_check "debugfs directory is gone after rmmod" test ! -e /sys/kernel/debug/rverbs

cycle() {
	local i
	for ((i = 0; i < CYCLES; i++)); do
		insmod "$RVERBS_KO" || return 1
		[ -d /sys/kernel/debug/rverbs ] || return 1
		rmmod rverbs || return 1
		[ ! -e /sys/kernel/debug/rverbs ] || return 1
	done
}
ksft_check "$CYCLES load/unload cycles" cycle

# A load that fails after the debugfs directory was made (here: a limit
# ib_core cannot report) must take it away again, or no later load could
# make it.
fails_einval() {
	local out
	out=$(insmod "$RVERBS_KO" "$1" 2>&1) && return 1
	# kmod words EINVAL from a module init as "Invalid parameters".
	grep -qE "Invalid (parameters|argument)" <<<"$out"
}
ksft_check "a load with max_ah=0 fails with EINVAL" fails_einval max_ah=0
ksft_check "... and leaves no debugfs directory" test ! -e /sys/kernel/debug/rverbs
ksft_check "a load with max_pd=2147483648 (more than an int) fails with EINVAL" \
	fails_einval max_pd=2147483648
ksft_check "a load with roce_v1=2 (neither 0 nor 1) fails with EINVAL" fails_einval roce_v1=2
ksft_check "a load with rc=2 (neither 0 nor 1) fails with EINVAL" fails_einval rc=2
ksft_check "the next load makes the directory again" \
	bash -c 'insmod "$1" && test -f /sys/kernel/debug/rverbs/counters && rmmod rverbs' _ "$RVERBS_KO"

ksft_check "debugfs root holds the same entries as before" \
	test "$(ls /sys/kernel/debug)" = "$debugfs_before"

ksft_check "the kernel reports hung tasks, soft lockups and RCU stalls" hang_detectors_on

log=$(kmsg_since)
ksft_check "kernel log since the first load is clean" \
	bash -c '! grep -qE "WARNING|BUG|Oops|Call Trace|leak" <<<"$1"' _ "$log"

ktap_finished
