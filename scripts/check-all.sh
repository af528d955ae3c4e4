#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh - both lanes, as CI runs them (make check-all, .ci/run):
# "make check" on Debian's stock kernel, then "make check-debug" on the
# debug kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection).
#
# The toolchain root comes first, then the stock kernel's Rust metadata
# (both lanes need them) and the stock lane, and beside them, at the lowest
# priority (nice 19): the debug kernel when the cache has none (it needs
# only the root), the debug lane's modules and kselftests, and the debug
# lane's second boot (a guest of one vCPU, DEBUG_LANE_UP_TESTS of
# tests/Makefile).  Under TCG the stock
# lane's guest keeps about one of the 2 cores busy; what it leaves goes to
# them.  After the stock lane, the debug lane's main boot (2 vCPUs).  At
# most one guest of two vCPUs runs at a time, at normal priority: a vCPU
# thread starved beside another guest can see a text patch's breakpoint
# after the patch (Documentation/rverbs.rst, "The two lanes", "Seen twice
# on 2026-12-01"), and two such guests side by side were no faster.
#
# Prints each lane's closing line, the time of every step (scripts/step.sh:
# the root, the metadata, each lane's lint, module, kernel, kselftest
# build and boots, and each test), and last one line for both together,
# "N passed, N failed, N skipped"; exits non-zero when anything failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cd "$RVERBS_TOP" || exit 1
all=$RVERBS_TOP/build/check-all
# A lane that stops early must not leave an older run's summary behind.
rm -rf build/check/summary build/check-debug/summary "$all"
mkdir -p "$all"
export RVERBS_STEPS=$all/steps
: >"$RVERBS_STEPS"
start_all=$SECONDS

total_p=0 total_f=0 total_s=0 lines=()
# lane NAME DIR RC - the lane's closing line; a lane that stopped before
# its suite ran (lint, build, a kernel build) counts as one failed case.
lane() {
	local name=$1 summary=$2/summary rc=$3 line p f s
	line=$(tail -n 1 "$summary" 2>/dev/null)
	if [[ ! $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		line="0 passed, 1 failed, 0 skipped (the lane stopped before its suite reported, exit $rc)"
		p=0 f=1 s=0
	else
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
		# A lane that failed after its suite passed is one more failure.
		[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 && line="$line (but the lane exited $rc)"
	fi
	lines+=("$name: $line")
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
}

# What both lanes need, once: the root, then the stock kernel's Rust
# metadata (the kselftests of both lanes are built against its source).
# The debug kernel needs only the root: its build (a no-op when cached)
# starts as soon as the root is there, beside the metadata and then the
# stock lane, as an idle task (SCHED_IDLE: it gets only the CPU that no
# other task wants, the stock lane's guests at nice 19 included; at nice
# 19 itself it took an equal share with them, and the suite's second boot
# and the module-signature boot of c6, a cold run, took 993 s and over
# 1,000 s, against 407 s and 603 s warm); the preparation of the debug lane
# waits for the metadata.  Then the debug lane's second boot (1 vCPU, nice
# 19: scripts/check.sh).  Their lines are marked.
# idle CMD... - CMD as an idle task (SCHED_IDLE), or at nice 19 where chrt
# cannot make one.
idle() {
	if chrt -i 0 true 2>/dev/null; then
		chrt -i 0 "$@"
	else
		nice -n 19 "$@"
	fi
}

setup_rc=0
scripts/step.sh "toolchain root" make -s toolchain || setup_rc=$?

stock_rc=1 stock_s=0 debug_rc=1 debug_s=0
if [ "$setup_rc" -eq 0 ]; then
	rm -f "$all/debug-prepared" "$all/kdir-done"
	start_debug=$SECONDS
	(
		set -e
		idle scripts/step.sh "debug: kernel, beside the stock lane" make -s debug-kernel
		scripts/step.sh "debug: harness self-test" make -s harness-selftest
		while [ ! -e "$all/kdir-done" ]; do sleep 2; done
		[ "$(cat "$all/kdir-done")" = 0 ]
		nice -n 19 scripts/check.sh --debug --step prepare
		touch "$all/debug-prepared"
		scripts/check.sh --debug --step side
	) > >(sed -u 's/^/[debug] /') 2>&1 &
	debug_pid=$!
	scripts/step.sh "stock kernel's Rust metadata" make -s kdir || setup_rc=$?
	echo "$setup_rc" >"$all/kdir-done"
fi
if [ "$setup_rc" -eq 0 ]; then
	start=$SECONDS
	make check
	stock_rc=$?
	stock_s=$((SECONDS - start))
	# Then the debug lane's main boot, once its modules are built.
	while [ ! -e "$all/debug-prepared" ] && kill -0 "$debug_pid" 2>/dev/null; do
		sleep 5
	done
	[ -e "$all/debug-prepared" ] && scripts/check.sh --debug --step main
	wait "$debug_pid"
	scripts/check.sh --debug --step summary
	debug_rc=$?
	debug_s=$((SECONDS - start_debug))
fi
lane "stock lane ($((stock_s / 60)) min $((stock_s % 60)) s)" build/check "$stock_rc"
lane "debug lane ($((debug_s / 60)) min $((debug_s % 60)) s, from the start, beside the stock lane)" build/check-debug "$debug_rc"

echo
echo "steps (seconds):"
awk -F '\t' '{ printf "  %6d  %s%s\n", $2, $1, ($3 != 0 ? "  (exit " $3 ")" : "") }' "$RVERBS_STEPS"
# Each test's time, from the lanes' KTAP logs (tests/run_suite.sh).
for l in check check-debug; do
	[ -s "build/$l/ktap.log" ] || continue
	sed -n 's/^# \([^ ]*\): \(.*\) took \([0-9]*\) s$/\3\t\2/p' "build/$l/ktap.log" |
		awk -F '\t' -v lane="${l#check}" '{ printf "  %6d  %s test %s\n", $1, (lane == "" ? "stock:" : "debug:"), $2 }'
done
echo "  $(printf '%6d' $((SECONDS - start_all)))  in all"
# What failed, again, next to the closing lines: a CI log that keeps only
# its end still names the failed cases and the boots' log reports (each
# lane printed them in full above).
for l in stock:check debug:check-debug; do
	f=build/${l#*:}/summary
	[ -s "$f" ] && grep -q '^failed:' "$f" || continue
	echo
	echo "${l%%:*} lane, what failed:"
	sed -n '/^failed:/,$p' "$f" | sed '1d; $d' | head -n 40
done
echo
printf '%s\n' "${lines[@]}"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
