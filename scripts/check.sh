#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [--debug] - build the kselftests and run the whole suite in one
# VM boot.
#
# Called by "make check" after the lint and the module build, on Debian's
# stock kernel; with --debug ("make check-debug"), on the debug kernel of
# scripts/mkdebugkernel.sh (KASAN, lockdep, kmemleak, UBSAN, ...), with
# rverbs.ko, rverbs_takeover.ko and the test modules built for it from a
# copy of the tree (scripts/debug-modules.sh).  The KTAP log is kept in build/check[-debug]/ktap.log
# and the guest kernel log in build/check[-debug]/vm/dmesg.log.  The last
# line is "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lane=stock
[ "${1:-}" = --debug ] && lane=debug

out=$RVERBS_TOP/build/check
[ $lane = debug ] && out=$RVERBS_TOP/build/check-debug
rm -rf "$out"
mkdir -p "$out/tests"

info "building the kselftests"
"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$RVERBS_TOP/tests" OUTPUT="$out/tests" all ||
	die "building the kselftests failed"

vm_env=()
cmd_prefix=
if [ $lane = debug ]; then
	kdir=$(dbgk_base)/build
	"$RVERBS_TOP/scripts/debug-modules.sh" || exit 1
	vm_env=(RVERBS_VM_KERNEL="$kdir")
	# The guest shows what it runs on before the suite.
	cmd_prefix="export RVERBS_LANE=debug; echo \"# debug kernel: \$(uname -r)\";"
	cmd_prefix+=" grep -E '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK|UBSAN|FAILSLAB)=' $kdir/.config | sed 's/^/# /';"
	cmd_prefix+=" test -e /sys/kernel/debug/kmemleak -a -e /proc/lockdep || { echo '# kmemleak or lockdep is not live'; exit 1; };"
fi

# make check TESTS='a.sh b.sh': only those tests (tests/run_suite.sh).
[ -n "${TESTS:-}" ] && cmd_prefix+=" export RVERBS_TESTS=$(printf '%q' "$TESTS");"

export RVERBS_VM_OUT=$out/vm
env "${vm_env[@]}" "$RVERBS_TOP/scripts/vm.sh" "$cmd_prefix $RVERBS_TOP/tests/run_suite.sh $out/tests" 2>&1 |
	tee "$out/ktap.log"
vm_rc=${PIPESTATUS[0]}

echo
"$RVERBS_TOP/scripts/ktap-summary.sh" "$out/ktap.log" >"$out/summary"
sum_rc=$?
if [ "$vm_rc" -ne 0 ] && [ "$sum_rc" -eq 0 ]; then
	# Every case passed, yet the VM run failed: the kernel log, kmemleak or
	# the taint check (vm.sh said which), or the guest died.  That is a
	# failed case.
	passed=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$out/summary" | tail -n 1)
	skipped=$(sed -n 's/.* \([0-9]*\) skipped$/\1/p' "$out/summary" | tail -n 1)
	sed -i '$d' "$out/summary"
	{
		echo "failed:"
		echo "  vm: guest kernel log, kmemleak or taint check (exit $vm_rc, see $out/vm/)"
		# The kernel log's reports, each named with its test.
		[ -s "$out/vm/logcheck.txt" ] && head -n 10 "$out/vm/logcheck.txt" | sed 's/^/    /'
		echo "$passed passed, 1 failed, $skipped skipped"
	} >>"$out/summary"
	sum_rc=1
fi
cat "$out/summary"
exit "$sum_rc"
