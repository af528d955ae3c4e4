#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh - both lanes, as CI runs them (make check-all, .ci/run):
# "make check" on Debian's stock kernel, then "make check-debug" on the
# debug kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection).
#
# The toolchain root and the stock kernel's Rust metadata come first (both
# lanes need them).  When the cache has no debug kernel, it builds beside
# the stock lane at the lowest priority (nice 19): the stock lane's guest
# keeps the CPU it uses, the build takes what is left, and the debug lane
# finds its kernel ready or nearly so.  The guests themselves run one at a
# time: a TCG guest of the debug kernel keeps both cores busy (a thread
# per vCPU), and two guests side by side were no faster and booted far
# slower (Documentation/rverbs.rst, "The two lanes").
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

# What both lanes need, once.
setup_rc=0
scripts/step.sh "toolchain root" make -s toolchain || setup_rc=$?
[ "$setup_rc" -eq 0 ] && { scripts/step.sh "stock kernel's Rust metadata" make -s kdir || setup_rc=$?; }

stock_rc=1 stock_s=0 debug_rc=1 debug_s=0
if [ "$setup_rc" -eq 0 ]; then
	# The debug kernel beside the stock lane (a no-op when cached); its
	# progress lines marked.
	(nice -n 19 scripts/step.sh "debug: kernel, beside the stock lane" make -s debug-kernel 2>&1 |
		sed -u 's/^/[debug kernel] /') &
	build_pid=$!
	start=$SECONDS
	make check
	stock_rc=$?
	stock_s=$((SECONDS - start))
	wait "$build_pid"
	start=$SECONDS
	make check-debug
	debug_rc=$?
	debug_s=$((SECONDS - start))
fi
lane "stock lane ($((stock_s / 60)) min $((stock_s % 60)) s)" build/check "$stock_rc"
lane "debug lane ($((debug_s / 60)) min $((debug_s % 60)) s)" build/check-debug "$debug_rc"

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
echo
printf '%s\n' "${lines[@]}"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
