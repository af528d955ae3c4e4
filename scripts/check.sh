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
# copy of the tree (scripts/debug-modules.sh).  The stock lane then boots
# once more, for the module-signature test (UEFI firmware, module.sig_enforce=1:
# below).  The KTAP log (one document per boot) is kept in
# build/check[-debug]/ktap.log and the guest kernel log in
# build/check[-debug]/vm/dmesg.log (build/check/modsig/vm/dmesg.log).  The
# last line is "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lane=stock
[ "${1:-}" = --debug ] && lane=debug

out=$RVERBS_TOP/build/check
[ $lane = debug ] && out=$RVERBS_TOP/build/check-debug
rm -rf "$out"
mkdir -p "$out/tests"

info "building the kselftests"
"$RVERBS_TOP/scripts/step.sh" "$lane: kselftests" \
	"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$RVERBS_TOP/tests" OUTPUT="$out/tests" all ||
	die "building the kselftests failed"

vm_env=()
cmd_prefix=
if [ $lane = debug ]; then
	kdir=$(dbgk_base)/build
	"$RVERBS_TOP/scripts/step.sh" "debug: modules" "$RVERBS_TOP/scripts/debug-modules.sh" || exit 1
	# The whole lane's boot: its suite takes about 40 minutes; 75 minutes
	# is the bound past which it has hung (CI's 90 minutes).
	vm_env=(RVERBS_VM_KERNEL="$kdir" RVERBS_VM_TIMEOUT="${RVERBS_VM_TIMEOUT:-4500}")
	# The guest shows what it runs on before the suite.
	cmd_prefix="export RVERBS_LANE=debug; echo \"# debug kernel: \$(uname -r)\";"
	cmd_prefix+=" grep -E '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK|UBSAN|FAILSLAB)=' $kdir/.config | sed 's/^/# /';"
	cmd_prefix+=" test -e /sys/kernel/debug/kmemleak -a -e /proc/lockdep || { echo '# kmemleak or lockdep is not live'; exit 1; };"
fi

# make check TESTS='a.sh b.sh': only those tests (tests/run_suite.sh).
[ -n "${TESTS:-}" ] && cmd_prefix+=" export RVERBS_TESTS=$(printf '%q' "$TESTS");"

# The stock lane's second boot: Debian's kernel through UEFI firmware whose
# signature database holds a throw-away certificate, booted with
# module.sig_enforce=1 (tests/rverbs_modsig.sh, TEST_PROGS_MODSIG).  It runs
# after the suite's boot, or alone with TESTS=rverbs_modsig.sh.
modsig_tests=" $(sed -n 's/^TEST_PROGS_MODSIG[[:space:]]*:\?=//p' "$RVERBS_TOP/tests/Makefile" | xargs) "
suite=1 modsig=
if [ $lane = stock ]; then
	if [ -z "${TESTS:-}" ]; then
		modsig=1
	else
		suite=
		for t in $TESTS; do
			if [[ $modsig_tests == *" $t "* ]]; then modsig=1; else suite=1; fi
		done
	fi
fi

: >"$out/ktap.log"
vm_rc=0
if [ -n "$suite" ]; then
	RVERBS_VM_OUT=$out/vm RVERBS_VM_STEP="$lane: suite boot" env "${vm_env[@]}" "$RVERBS_TOP/scripts/vm.sh" \
		"$cmd_prefix $RVERBS_TOP/tests/run_suite.sh $out/tests" 2>&1 | tee "$out/ktap.log"
	vm_rc=${PIPESTATUS[0]}
fi
if [ -n "$modsig" ]; then
	info "the module-signature boot: UEFI firmware, a throw-away key in its db, module.sig_enforce=1"
	if "$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/modsig-prep.sh" "$out/modsig"; then
		RVERBS_VM_OUT=$out/modsig/vm RVERBS_VM_STEP="$lane: module-signature boot" \
			RVERBS_VM_UEFI_VARS=$out/modsig/OVMF_VARS.fd \
			RVERBS_VM_APPEND=module.sig_enforce=1 "$RVERBS_TOP/scripts/vm.sh" \
			"export RVERBS_LANE=modsig RVERBS_MODSIG_DIR=$out/modsig; $RVERBS_TOP/tests/run_suite.sh $out/tests" 2>&1 |
			tee -a "$out/ktap.log"
		rc=${PIPESTATUS[0]}
	else
		# No KTAP document: the summary counts the boot as not finished.
		echo "TAP version 13" >>"$out/ktap.log"
		echo "1..1" >>"$out/ktap.log"
		rc=1
	fi
	[ "$vm_rc" -ne 0 ] || vm_rc=$rc
fi

# A run of the whole lane has a floor on its passed cases (tests/case-floors).
floor=()
if [ -z "${TESTS:-}" ]; then
	n=$(awk -v lane=$lane '$1 == lane { print $2 }' "$RVERBS_TOP/tests/case-floors")
	[ -n "$n" ] || die "tests/case-floors has no floor for the $lane lane"
	floor=(--floor "$n")
fi
echo
"$RVERBS_TOP/scripts/ktap-summary.sh" "${floor[@]}" "$out/ktap.log" >"$out/summary"
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
		echo "  vm: guest kernel log, kmemleak or taint check (exit $vm_rc, see $out/vm/ and $out/modsig/vm/)"
		# The kernel log's reports, each named with its test.
		for f in "$out/vm/logcheck.txt" "$out/modsig/vm/logcheck.txt"; do
			[ -s "$f" ] && head -n 10 "$f" | sed 's/^/    /'
		done
		echo "$passed passed, 1 failed, $skipped skipped"
	} >>"$out/summary"
	sum_rc=1
fi
cat "$out/summary"
exit "$sum_rc"
