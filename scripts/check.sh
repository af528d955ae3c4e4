#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [--debug] [--step prepare|main|side|summary] - build the
# kselftests and run the suite in VM boots.
#
# Called by "make check" after the lint and the module build, on Debian's
# stock kernel; with --debug ("make check-debug"), on the debug kernel of
# scripts/mkdebugkernel.sh (KASAN, lockdep, kmemleak, UBSAN, ...), with
# rverbs.ko, rverbs_takeover.ko and the test modules built for it from a
# copy of the tree (scripts/debug-modules.sh).  The stock lane boots twice,
# side by side: the suite, and the module-signature test (UEFI firmware,
# module.sig_enforce=1, one vCPU at the lowest priority: below).  The debug lane boots twice side
# by side: its main boot (2 vCPUs) runs the tests that need two CPUs, its
# second boot (1 vCPU, at the lowest priority) DEBUG_LANE_UP_TESTS of
# tests/Makefile (why: Documentation/rverbs.rst, "The two lanes").
#
# --step runs one part of the debug lane (make check-all runs the second
# boot beside the stock lane): prepare (kselftests, modules), main, side
# (the boots), summary.  Without it, all of them.
#
# The KTAP log (one document per boot) is kept in build/check[-debug]/ktap.log
# (each boot's in ktap-NAME.log) and each guest kernel log in
# build/check[-debug]/<boot>/dmesg.log (vm/, modsig/vm/, vm-side/).  The
# last line is "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lane=stock step=all
while [ $# -gt 0 ]; do
	case $1 in
	--debug) lane=debug ;;
	--step) step=${2:-}; shift ;;
	*) die "usage: check.sh [--debug] [--step prepare|main|side|summary]" ;;
	esac
	shift
done
case $step in
all) ;;
prepare | main | side | summary) [ $lane = debug ] || die "--step is for the debug lane" ;;
*) die "unknown step '$step'" ;;
esac

out=$RVERBS_TOP/build/check
[ $lane = debug ] && out=$RVERBS_TOP/build/check-debug

if [ $step = all ] || [ $step = prepare ]; then
	rm -rf "$out"
	mkdir -p "$out/tests"
	# make check-all prepares the debug lane beside the stock lane, and
	# both build the stock test modules in tests/test_modules (lib.mk's
	# TEST_GEN_MODS_DIR): one build at a time.
	info "building the kselftests"
	mkdir -p "$RVERBS_TOP/build"
	"$RVERBS_TOP/scripts/step.sh" "$lane: kselftests" flock "$RVERBS_TOP/build/.kselftests.lock" \
		"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$RVERBS_TOP/tests" OUTPUT="$out/tests" all ||
		die "building the kselftests failed"
	if [ $lane = debug ]; then
		"$RVERBS_TOP/scripts/step.sh" "debug: modules" "$RVERBS_TOP/scripts/debug-modules.sh" || exit 1
	fi
	[ $step = prepare ] && exit 0
fi

# make_list VAR - the words of a variable of tests/Makefile (continued
# lines too).
make_list() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$RVERBS_TOP/tests/Makefile" |
		sed -n "s/^$1[[:space:]]*:\?=//p" | tr -s ' \t' '\n' | sed '/^$/d'
}

vm_env=()
cmd_prefix=
if [ $lane = debug ]; then
	kdir=$(dbgk_base)/build
	# The whole lane's boot: its suite takes about 40 minutes; 75 minutes
	# is the bound past which it has hung (CI's 90 minutes).
	vm_env=(RVERBS_VM_KERNEL="$kdir" RVERBS_VM_TIMEOUT="${RVERBS_VM_TIMEOUT:-4500}")
	# The guest shows what it runs on before the suite.
	cmd_prefix="export RVERBS_LANE=debug; echo \"# debug kernel: \$(uname -r)\";"
	cmd_prefix+=" grep -E '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK|UBSAN|FAILSLAB)=' $kdir/.config | sed 's/^/# /';"
	cmd_prefix+=" test -e /sys/kernel/debug/kmemleak -a -e /proc/lockdep || { echo '# kmemleak or lockdep is not live'; exit 1; };"
fi

# The kernel source's selftests, for tests/run_suite.sh: computed here,
# where a program costs nothing like the guest's second.
cmd_prefix+=" export KSFT_DIR=$(printf '%q' "$(kdir_base)/src/tools/testing/selftests");"

# make check TESTS='a.sh b.sh': only those tests (tests/run_suite.sh); on
# the stock lane, those of the suite's boot (below).
[ -n "${TESTS:-}" ] && [ $lane = debug ] && cmd_prefix+=" export RVERBS_TESTS=$(printf '%q' "$TESTS");"
# make check TRACE=1: every command of every test script timed
# (scripts/trace-env.sh), in $out/vm/trace/; scripts/trace-report.sh reads it.
[ -n "${TRACE:-}" ] &&
	cmd_prefix+=" mkdir -p /mnt/trace; export RVERBS_TRACE_DIR=/mnt/trace BASH_ENV=$RVERBS_TOP/scripts/trace-env.sh;"

# boot NAME VMOUT PREFIX NICE [VAR=VALUE...] - one boot of the suite, at
# niceness NICE: its KTAP document in $out/ktap-NAME.log, vm.sh's exit
# status in $out/NAME.rc.
boot() {
	local name=$1 vmout=$2 prefix=$3 nice=$4 rc
	shift 4
	RVERBS_VM_OUT=$vmout nice -n "$nice" env "${vm_env[@]}" "$@" "$RVERBS_TOP/scripts/vm.sh" \
		"$prefix $RVERBS_TOP/tests/run_suite.sh $out/tests" 2>&1 | tee "$out/ktap-$name.log"
	rc=${PIPESTATUS[0]}
	echo "$rc" >"$out/$name.rc"
	return "$rc"
}

boots=()
if [ $lane = stock ]; then
	# The stock lane's second boot: Debian's kernel through UEFI firmware
	# whose signature database holds a throw-away certificate, booted with
	# module.sig_enforce=1: TEST_PROGS_MODSIG (tests/rverbs_package.sh,
	# tests/rverbs_modsig.sh).  It runs beside the suite's boot, a guest of
	# one vCPU at the lowest priority, as the debug lane's second boot
	# (below), or alone with TESTS=rverbs_modsig.sh.
	modsig_tests=" $(make_list TEST_PROGS_MODSIG | xargs) "
	second_tests=$(make_list STOCK_SECOND_BOOT_TESTS | xargs)
	suite=1 modsig='' second='' suite_tests='' modsig_prefix=''
	if [ -z "${TESTS:-}" ]; then
		modsig=1 second=1
		cmd_prefix_second="$cmd_prefix export RVERBS_TESTS=$(printf '%q' "$second_tests");"
		cmd_prefix+=" export RVERBS_EXCEPT=$(printf '%q' "$second_tests");"
	else
		suite='' chosen=''
		for t in $TESTS; do
			if [[ $modsig_tests == *" $t "* ]]; then
				modsig=1 chosen+="$t "
			else
				suite=1 suite_tests+="$t "
			fi
		done
		cmd_prefix+=" export RVERBS_TESTS=$(printf '%q' "$suite_tests");"
		modsig_prefix=" export RVERBS_TESTS=$(printf '%q' "$chosen");"
	fi
	boot_modsig() {
		info "the module-signature boot (1 vCPU, nice 19): UEFI firmware, a throw-away key in its db, module.sig_enforce=1"
		# With the keys, the package that tests/rverbs_package.sh installs
		# there, signed with the key the firmware trusts
		# (scripts/package-prep.sh: its failures are that test's cases).
		if "$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/modsig-prep.sh" "$out/modsig" &&
			"$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/package-prep.sh" "$out/package" \
				"$out/modsig/keys"; then
			boot modsig "$out/modsig/vm" \
				"export RVERBS_LANE=modsig RVERBS_MODSIG_DIR=$out/modsig RVERBS_PACKAGE_DIR=$out/package;$modsig_prefix" 19 \
				RVERBS_VM_STEP="stock: module-signature boot (1 vCPU)" RVERBS_VM_CPUS=1 RVERBS_VM_STARVED=1 \
				RVERBS_VM_BOOT_TIMEOUT="${RVERBS_VM_BOOT_TIMEOUT:-1200}" \
				RVERBS_VM_UEFI_VARS="$out/modsig/OVMF_VARS.fd" RVERBS_VM_APPEND=module.sig_enforce=1 \
				> >(sed -u 's/^/[modsig] /')
		else
			# No KTAP document: the summary counts the boot as not finished.
			printf 'TAP version 13\n1..1\n' >"$out/ktap-modsig.log"
			echo 1 >"$out/modsig.rc"
		fi
	}
	# The suite's second guest (STOCK_SECOND_BOOT_TESTS), one vCPU at the
	# lowest priority as the module-signature boot: the suite's guest of
	# two vCPUs keeps its priority (the text patches of the takeover's
	# livepatch want its vCPU threads not starved: Documentation/
	# rverbs.rst, "Seen twice on 2026-12-01"); it is one process at a time
	# most of its run, and the two guests of one vCPU share the core it
	# leaves.
	boot_second() {
		info "the suite's second boot (1 vCPU, nice 19): $second_tests"
		boot second "$out/vm-second" "$cmd_prefix_second" 19 \
			RVERBS_VM_STEP="stock: suite's second boot (1 vCPU)" RVERBS_VM_CPUS=1 RVERBS_VM_STARVED=1 \
			RVERBS_VM_BOOT_TIMEOUT="${RVERBS_VM_BOOT_TIMEOUT:-1200}" > >(sed -u 's/^/[second] /')
	}
	[ -n "$suite" ] && boots+=(suite)
	[ -n "$second" ] && boots+=(second)
	[ -n "$modsig" ] && boots+=(modsig)
	pids=()
	if [ -n "$modsig" ]; then
		boot_modsig &
		pids+=($!)
	fi
	if [ -n "$second" ]; then
		boot_second &
		pids+=($!)
	fi
	# A thread per vCPU (QEMU's default).  RVERBS_VM_TCG_THREAD=single
	# runs both on one host thread: tried as the default on 2026-12-04
	# against the guest that died in rverbs_takeover_load.sh in CI, and
	# taken back after a guest of it froze for good (Documentation/
	# rverbs.rst, "The two lanes").
	[ -n "$suite" ] && boot suite "$out/vm" "$cmd_prefix" 0 RVERBS_VM_STEP="stock: suite boot"
	for p in "${pids[@]}"; do wait "$p"; done
else
	# The debug lane: with TESTS=, those in one boot; else the main boot
	# (2 vCPUs) and the second (1 vCPU, DEBUG_LANE_UP_TESTS) side by side.
	# The second runs at the lowest priority, so that it takes only what
	# the main boot leaves of the 2 cores: a vCPU thread of a guest that
	# is starved can see a text patch's breakpoint after the patch ended
	# (Documentation/rverbs.rst, "The two lanes", "Seen twice on
	# 2026-12-01"), and a guest of one vCPU has no other vCPU to race
	# with.  Its boot may take many minutes beside the main one.
	up=" $(make_list DEBUG_LANE_UP_TESTS | xargs) "
	main="" side=""
	for t in $(make_list DEBUG_LANE_TESTS) $(make_list TEST_PROGS_DEBUG); do
		if [[ $up == *" $t "* ]]; then side+="$t "; else main+="$t "; fi
	done
	for t in $up; do
		[[ " $main$side " == *" $t "* ]] || die "DEBUG_LANE_UP_TESTS names $t, which is no test of the debug lane"
	done
	boot_main() {
		local p=$cmd_prefix
		[ -n "${TESTS:-}" ] || p+=" export RVERBS_TESTS=$(printf '%q' "$main");"
		boot main "$out/vm" "$p" 0 RVERBS_VM_STEP="debug: main boot"
	}
	boot_side() {
		info "the debug lane's second boot (1 vCPU, nice 19): $side"
		boot side "$out/vm-side" "$cmd_prefix export RVERBS_TESTS=$(printf '%q' "$side");" 19 \
			RVERBS_VM_STEP="debug: second boot (1 vCPU)" RVERBS_VM_CPUS=1 RVERBS_VM_STARVED=1 \
			RVERBS_VM_BOOT_TIMEOUT="${RVERBS_VM_BOOT_TIMEOUT:-1800}" > >(sed -u 's/^/[side] /')
	}
	case $step in
	main | side)
		"boot_$step"
		exit
		;;
	all)
		if [ -n "${TESTS:-}" ]; then
			boot_main
		else
			boot_side &
			side_pid=$!
			boot_main
			wait "$side_pid"
		fi
		;;
	esac
	boots=(main)
	[ -n "${TESTS:-}" ] || boots+=(side)
fi

# A run of the whole lane has a floor on its passed cases (tests/case-floors).
floor=()
if [ -z "${TESTS:-}" ]; then
	n=$(awk -v lane=$lane '$1 == lane { print $2 }' "$RVERBS_TOP/tests/case-floors")
	[ -n "$n" ] || die "tests/case-floors has no floor for the $lane lane"
	floor=(--floor "$n")
fi
echo
"$RVERBS_TOP/scripts/lane-summary.sh" "${floor[@]}" "$out" "${boots[@]}"
