#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - build the kselftests and run the whole suite in one VM boot.
#
# Called by "make check" after the lint and the module build.  The KTAP log
# is kept in build/check/ktap.log and the guest kernel log in
# build/check/vm/dmesg.log.  The last line is "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

out=$RVERBS_TOP/build/check
rm -rf "$out"
mkdir -p "$out/tests"

info "building the kselftests"
"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$RVERBS_TOP/tests" OUTPUT="$out/tests" all ||
	die "building the kselftests failed"

export RVERBS_VM_OUT=$out/vm
"$RVERBS_TOP/scripts/vm.sh" "$RVERBS_TOP/tests/run_suite.sh $out/tests" 2>&1 |
	tee "$out/ktap.log"
vm_rc=${PIPESTATUS[0]}

echo
"$RVERBS_TOP/scripts/ktap-summary.sh" "$out/ktap.log" >"$out/summary"
sum_rc=$?
if [ "$vm_rc" -ne 0 ] && [ "$sum_rc" -eq 0 ]; then
	# Every case passed, yet the VM run failed: the kernel log or the taint
	# check (vm.sh said which), or the guest died.  That is a failed case.
	passed=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$out/summary" | tail -n 1)
	skipped=$(sed -n 's/.* \([0-9]*\) skipped$/\1/p' "$out/summary" | tail -n 1)
	sed -i '$d' "$out/summary"
	{
		echo "failed:"
		echo "  vm: guest kernel log or taint check (exit $vm_rc, see $out/vm/dmesg.log)"
		echo "$passed passed, 1 failed, $skipped skipped"
	} >>"$out/summary"
	sum_rc=1
fi
cat "$out/summary"
exit "$sum_rc"
