#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# logcheck.sh [--all] LOG - the kernel log checks of both lanes.
#
# Reads a kernel log (dmesg text, as guest.sh streams it from boot) and
# prints every line that shows a problem: an oops, BUG, WARNING, lockdep,
# KASAN, UBSAN, kmemleak or refcount report, a reference-tracker report, an
# RCU stall, a soft lockup, a hung task, a netdev that cannot go away, a
# restrack leak.  Each line is prefixed with the test that was running when
# it appeared ("rverbs-vm: test NAME" lines, written by tests/run_suite.sh).
# Exit status 1 when it printed anything.
#
# Two kinds of windows, opened by a test with a line
#   rverbs-expect: begin detector <what>   ... rverbs-expect: end
#   rverbs-expect: begin alloc-failures    ... rverbs-expect: end
# change what counts:
#   detector        a planted bug (tests/rverbs_detectors.sh): the test
#                   itself runs this script with --all on the window and
#                   expects the report; the lane skips the window.
#   alloc-failures  fault injection (tests/rverbs_faults.sh): the kernel's
#                   own report of an allocation that was made to fail in
#                   the injecting task, fault_nth (warn_alloc's
#                   "fault_nth: page allocation failure" / "fault_nth:
#                   vmalloc error" and its stack dump, or fault injection's
#                   "FAULT_INJECTION: forcing a failure" with its "name ATTR"
#                   line, either alone (verbose 1) or with a dump that names
#                   "Comm: fault_nth"), up to the end of that report's trace,
#                   is expected there and counted. Anything else is not:
#                   the same report of another task, a WARNING, a second
#                   report inside the first one's dump.
# With --excused, prints the number of reports excused in alloc-failures
# windows.
# From rverbs_detectors.sh's save of the earlier tests' leaks (its marker
# "rverbs-expect: kmemleak-save", just before the planted leak's window)
# and after that window, kmemleak's summary line ("kmemleak: N new
# suspected memory leaks") is not flagged: later scans may still find planted
# objects that a stale pointer hid during the window, and the line cannot
# say whose objects it counts. The objects themselves are judged one by one:
# guest.sh leaves out of the run's kmemleak report only those that carry the
# planted marker (or ib_uverbs' known leak under fault injection), and vm.sh
# fails on any other. For the same reason the summary lines of guest.sh's
# final scans, after "rverbs-vm: done", are not flagged.
# --all ignores the windows (for the window's own check).
set -uo pipefail

all=0 excused_count=0
[ "${1:-}" = --all ] && { all=1; shift; }
[ "${1:-}" = --excused ] && { excused_count=1; shift; }
log=${1:?usage: logcheck.sh [--all | --excused] LOG}
# The task whose allocations fault injection fails (tests/fault_nth.c).
injector=fault_nth

# Lockdep's reports start with WARNING: or BUG: ("WARNING: possible circular
# locking dependency detected", "BUG: held lock freed!"); its boot banner
# ("RCU lockdep checking is enabled") and kmemleak's ("memory leak detector
# initialized") are not reports.
pattern='Oops|BUG:|WARNING:|page allocation failure|vmalloc error|kernel BUG|general protection fault|Call Trace:|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|lockdep is turned off|suspicious RCU usage|INFO: rcu_.* detected stall|soft lockup|hung_task|blocked for more than [0-9]+ seconds|UBSAN:|KASAN:|kmemleak: [0-9]+ new suspected memory leak|unreferenced object|unregister_netdevice: waiting for|refcount_t:|ref_tracker|RESTRACK'

awk -v pat="$pattern" -v all=$all -v count=$excused_count -v injector=$injector '
	/rverbs-vm: test / {
		t = $0; sub(/.*rverbs-vm: test /, "", t); sub(/ \(tainted.*/, "", t)
		test = t; next
	}
	# guest.sh scans kmemleak twice after the suite and judges each object
	# it reports (vm.sh fails on any but the planted and the known ones):
	# those scans'"'"' summary lines are no finding of their own.
	/rverbs-vm: done, exit status/ { final = 1; next }
	# The kernel command line (its hang detectors'"'"' thresholds,
	# vm.sh) is no report.
	/\] (Kernel c|C)ommand line: / { next }
	/rverbs-vm: / { next }
	!all && final && /kmemleak: [0-9]+ new suspected memory leak/ { next }
	!all && /rverbs-expect: begin detector leak/ { planted = 1 }
	# rverbs_detectors.sh saves (and sorts) the objects the tests before
	# it leaked, just before the planted leak: its scans'"'"' summary lines
	# are no finding either.
	!all && /rverbs-expect: kmemleak-save/ { planted = 1; next }
	!all && /rverbs-expect: begin detector/ { window = "detector"; next }
	!all && planted && /kmemleak: [0-9]+ new suspected memory leak/ { next }
	!all && /rverbs-expect: begin alloc-failures/ { window = "alloc"; next }
	!all && /rverbs-expect: end/ { window = ""; excused = 0; finj = 0; next }
	/rverbs-expect: / { next }
	window == "detector" { next }
	# A fault injection report is two lines, "FAULT_INJECTION: forcing a
	# failure." and "name ATTR, interval ...", then its dump (verbose 2)
	# or nothing more (verbose 1, rverbs_faults.sh: no task but one with
	# fail-nth armed, fault_nth, injects, every probability being 0).
	window == "alloc" && finj == 1 && /\] name [a-z_]+, interval / { finj = 2; next }
	window == "alloc" && finj {
		finj = 0
		if ($0 !~ / Comm: /)
			excused = 0
	}
	# An expected report: warn_alloc names its task first; fault
	# injection names it in the "Comm:" line of its dump, checked as it comes.
	window == "alloc" && !excused &&
	    ($0 ~ ("\\] " injector ": (page allocation failure|vmalloc error)") ||
	     $0 ~ /FAULT_INJECTION: forcing a failure/) {
		excused = 1; reports++; held = $0
		if ($0 ~ /FAULT_INJECTION/) finj = 1
		next
	}
	window == "alloc" && excused {
		if ($0 ~ / Comm: / && $0 !~ (" Comm: " injector "( |$)")) {
			# A report of another task: flagged, from its first line on.
			excused = 0; reports--
			if (!count) printf "%s: %s\n", (test == "" ? "(before the first test)" : test), held
			n++
		} else if ($0 ~ /<\/TASK>/) {
			excused = 0; next
		} else if ($0 ~ /WARNING:|BUG:|Oops|KASAN:|UBSAN:|page allocation failure|vmalloc error|FAULT_INJECTION:/) {
			# A report inside the dump of the expected one is one of its own.
			excused = 0
		} else
			next
	}
	$0 ~ pat {
		if (!count)
			printf "%s: %s\n", (test == "" ? "(before the first test)" : test), $0
		n++
	}
	END { if (count) { print reports + 0; exit 0 } exit n > 0 }
' "$log"
