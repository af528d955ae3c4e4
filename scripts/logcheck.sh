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
#                   own report of an allocation that was made to fail
#                   (warn_alloc's "page allocation failure" / "vmalloc
#                   error" and its stack dump, "FAULT_INJECTION: forcing a
#                   failure") is expected there; so are the trace events'
#                   warnings when an allocation of a module's event fails
#                   while it loads (event_define_fields warns with the
#                   error, "Could not initialize trace point events/...",
#                   and the half-made event's files then warn again in
#                   event_file_put as the module goes: 7.2's trace-event
#                   code, reached by any module with tracepoints; rverbs
#                   has them). Anything else is not.
# With --excused, prints the number of WARNINGs excused in alloc-failures
# windows (they taint the kernel W; scripts/vm.sh then allows that taint).
# After the planted leak's window, kmemleak's summary line ("kmemleak: N new
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

# Lockdep's reports start with WARNING: or BUG: ("WARNING: possible circular
# locking dependency detected", "BUG: held lock freed!"); its boot banner
# ("RCU lockdep checking is enabled") and kmemleak's ("memory leak detector
# initialized") are not reports.
pattern='Oops|BUG:|WARNING:|kernel BUG|general protection fault|Call Trace:|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|lockdep is turned off|suspicious RCU usage|INFO: rcu_.* detected stall|soft lockup|hung_task|blocked for more than [0-9]+ seconds|UBSAN:|KASAN:|kmemleak: [0-9]+ new suspected memory leak|unreferenced object|unregister_netdevice: waiting for|refcount_t:|ref_tracker|RESTRACK'

awk -v pat="$pattern" -v all=$all -v count=$excused_count '
	/rverbs-vm: test / {
		t = $0; sub(/.*rverbs-vm: test /, "", t); sub(/ \(tainted.*/, "", t)
		test = t; next
	}
	# guest.sh scans kmemleak twice after the suite and judges each object
	# it reports (vm.sh fails on any but the planted and the known ones):
	# those scans'"'"' summary lines are no finding of their own.
	/rverbs-vm: done, exit status/ { final = 1; next }
	/rverbs-vm: / { next }
	!all && final && /kmemleak: [0-9]+ new suspected memory leak/ { next }
	!all && /rverbs-expect: begin detector leak/ { planted = 1 }
	!all && /rverbs-expect: begin detector/ { window = "detector"; next }
	!all && planted && /kmemleak: [0-9]+ new suspected memory leak/ { next }
	!all && /rverbs-expect: begin alloc-failures/ { window = "alloc"; next }
	!all && /rverbs-expect: end/ { window = ""; excused = 0; next }
	/rverbs-expect: / { next }
	window == "detector" { next }
	window == "alloc" {
		if ($0 ~ /page allocation failure|vmalloc error|FAULT_INJECTION: forcing a failure/) { excused = 1; next }
		if ($0 ~ /WARNING: kernel\/trace\/trace_events\.c:[0-9]+ at (event_define_fields|event_file_put)\+/) {
			excused = 1; warned++; next
		}
		if (excused) {
			# The stack dump and memory summary of that report, up to
			# the end of its trace.
			if ($0 ~ /<\/TASK>/) excused = 0
			next
		}
	}
	$0 ~ pat {
		if (!count)
			printf "%s: %s\n", (test == "" ? "(before the first test)" : test), $0
		n++
	}
	END { if (count) { print warned + 0; exit 0 } exit n > 0 }
' "$log"
