#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh - both lanes, as CI runs them (make check-all, .ci/run):
# "make check" on Debian's stock kernel and "make check-debug" on the debug
# kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection), side by side.
#
# The toolchain root and the stock kernel's Rust metadata come first (both
# lanes need them).  Then the debug lane starts in the background, with its
# kernel build when the cache has none, and the stock lane runs in the
# foreground: on 2 cores a TCG guest keeps about one busy (the suite's
# tests run one at a time), so the two lanes, or the debug kernel's build
# and the stock lane, share the machine instead of taking turns
# (Documentation/rverbs.rst, "The two lanes", has the times).  Each lane's
# output is kept in build/check-all/{stock,debug}.log and shown as it comes,
# every line with its lane's name.
#
# Prints each lane's closing line, the time of every step (scripts/step.sh:
# the root, the metadata, each lane's lint, module, kernel, boots, and each
# test), and last one line for both together, "N passed, N failed,
# N skipped"; exits non-zero when anything failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cd "$RVERBS_TOP" || exit 1
all=$RVERBS_TOP/build/check-all
# A lane that stops early must not leave an older run's summary behind.
rm -rf build/check/summary build/check-debug/summary "$all"
mkdir -p "$all"
export RVERBS_STEPS=$all/steps
: >"$RVERBS_STEPS"
# At most two guests at once (scripts/vm.sh).
export RVERBS_VM_SLOTS=$all/slots
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

if [ "$setup_rc" -eq 0 ]; then
	# run_lane NAME TARGET - one lane, its output kept and shown with its name.
	run_lane() {
		local start=$SECONDS rc
		make "$2" 2>&1 | tee "$all/$1.log" | sed -u "s/^/[$1] /"
		rc=${PIPESTATUS[0]}
		echo "$rc $((SECONDS - start))" >"$all/$1.rc"
		return "$rc"
	}
	run_lane debug check-debug &
	debug_pid=$!
	run_lane stock check
	wait "$debug_pid"
fi

# rc_of NAME - a lane's exit status and seconds (1 and 0 when it never ran).
rc_of() { cat "$all/$1.rc" 2>/dev/null || echo "1 0"; }
read -r stock_rc stock_s < <(rc_of stock)
read -r debug_rc debug_s < <(rc_of debug)
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
