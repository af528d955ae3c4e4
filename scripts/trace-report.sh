#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# trace-report.sh [-n N] TRACE... - the N (default 25) source lines that
# took the most time in traces of scripts/trace-env.sh: each command's time
# is until the next traced command of the file (the next one of the same
# process, or the first one of a command substitution or script it
# started), summed over the runs of that line: what a line cost itself, the
# programs it ran included.  Commands running in the background overlap the
# time of others.  Prints seconds, runs and "file:line" with the first
# command seen there.
set -euo pipefail
n=25
[ "${1:-}" = -n ] && { n=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: trace-report.sh [-n N] TRACE..." >&2; exit 2; }
# Lines of nested commands start with more than one "+"; a file's last
# command has no end, and files are not joined.
awk '
	FNR == 1 { prevw = "" }
	!/^\++ [0-9]+\.[0-9]+ [0-9]+ / { next }
	{
		t = $2; where = $4
		cmd = ""
		for (i = 5; i <= NF && length(cmd) < 60; i++) cmd = cmd (cmd == "" ? "" : " ") $i
		if (prevw != "") {
			sum[prevw] += t - prevt
			runs[prevw]++
		}
		prevt = t; prevw = where
		if (!(where in text)) text[where] = cmd
	}
	END {
		for (w in sum) printf "%9.2f %6d  %s  %s\n", sum[w], runs[w], w, text[w]
	}' "$@" | sort -rn | head -n "$n"
