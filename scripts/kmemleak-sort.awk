# SPDX-License-Identifier: GPL-2.0
#
# kmemleak-sort.awk - sort kmemleak's report (on stdin) into what is a leak
# of the run (printed) and what is not, by record ("unreferenced object"
# and the lines after it):
#
#   * the objects that tests/rverbs_detectors.sh leaks on purpose (each
#     begins with "rv_planted leak!", in the record's hex dump) and that
#     kmemleak found only after that test's window, a stale pointer having
#     hidden them until then: into the file named by -v planted;
#   * ib_uverbs' own leak under fault injection (Documentation/rverbs.rst,
#     "Found by the debug lane, in ib_core"): a radix-tree node of the
#     device's uverbs API tree, allocated in uverbs_alloc_api() by a
#     radix_tree_insert() that failed one level further down, which
#     uverbs_destroy_api() never frees.  Recognised by that backtrace and
#     by its task, the fault injector of tests/rverbs_faults.sh
#     (fault_nth): into the file named by -v known.  The same leak of any
#     other task is a leak of the run;
#   * every other object is a leak of the run.
#
# Run by scripts/guest.sh at the end of a debug boot; the harness self-test
# (scripts/harness-selftest.sh) feeds it a record of each kind.
/^unreferenced object/ { flush(); rec = $0 "\n"; next }
{ rec = rec $0 "\n" }
function flush() {
	if (rec == "")
		return
	if (rec ~ /rv_planted leak!/)
		printf "%s", rec > planted
	else if (rec ~ /radix_tree_node_alloc/ && rec ~ /radix_tree_insert/ &&
		 rec ~ /uverbs_alloc_api/ && rec ~ /comm "fault_nth"/)
		printf "%s", rec > known
	else
		printf "%s", rec
	rec = ""
}
END { flush() }
