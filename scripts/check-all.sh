#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh - both lanes, as CI runs them (make check-all, .ci/run):
# "make check" on Debian's stock kernel, then "make check-debug" on the
# debug kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection), each in
# its own VM boot.  The second runs whatever the first found.  Prints each
# lane's closing line and last one line for both together,
# "N passed, N failed, N skipped"; exits non-zero when anything failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cd "$RVERBS_TOP" || exit 1
# A lane that stops early must not leave an older run's summary behind.
rm -f build/check/summary build/check-debug/summary
start=$SECONDS
make check
stock_rc=$?
stock_s=$((SECONDS - start))
start=$SECONDS
make check-debug
debug_rc=$?
debug_s=$((SECONDS - start))

# lane NAME DIR RC - the lane's closing line; a lane that stopped before
# its suite ran (lint, build, a kernel build) counts as one failed case.
total_p=0 total_f=0 total_s=0
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
	echo "$name: $line"
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
}
echo
lane "stock lane ($((stock_s / 60)) min $((stock_s % 60)) s)" build/check $stock_rc
lane "debug lane ($((debug_s / 60)) min $((debug_s % 60)) s)" build/check-debug $debug_rc
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
