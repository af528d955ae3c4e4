#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# detector-window.sh BUG WANT WINDOW - judge the window of a planted bug of
# tests/rverbs_detectors.sh: WINDOW is the kernel log of the window (and,
# for the leak, kmemleak's report), WANT an extended regular expression of
# the report the bug must bring.  The window holds the planted report and
# nothing else: the first line of every report in it is the wanted one,
# and, but for the leak (kmemleak reports each of its objects), there is
# exactly one; and the window names the planted module (rv_planted: in the
# report's location, locks or backtrace), so that a report of the same
# kind from elsewhere does not pass for it.  Prints how many lines the lane's own log check
# (scripts/logcheck.sh --all) flags as the wanted report; exits 1, saying
# why, when the window holds anything else or a second report.
# scripts/harness-selftest.sh plants both.
set -uo pipefail

bug=${1:?usage: detector-window.sh BUG WANT WINDOW}
want=${2:?usage: detector-window.sh BUG WANT WINDOW}
window=${3:?usage: detector-window.sh BUG WANT WINDOW}
# The first line of a report of any of the checkers.
head_re='(BUG|WARNING):|Oops|kernel BUG|general protection fault|INFO: task .* blocked|INFO: rcu_|UBSAN:|unreferenced object'

found=$("$(dirname "$0")/logcheck.sh" --all "$window" | grep -E -c "$want")
headers=$(grep -E "$head_re" "$window")
others=$(grep -Ev "$want" <<<"$headers" | grep -c .)
wanted=$(grep -Ec "$want" <<<"$headers")
echo "$found"
if [ "$others" -gt 0 ] || { [ "$bug" != leak ] && [ "$wanted" -ne 1 ]; }; then
	echo "$bug: $wanted report(s) of the planted kind, $others of another kind in the window:"
	head -n 10 <<<"$headers"
	exit 1
fi
if ! grep -q rv_planted "$window"; then
	echo "$bug: the report in the window does not name rv_planted:"
	head -n 10 <<<"$headers"
	exit 1
fi
