#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ktap-summary.sh LOG - count the test cases of a run_suite.sh KTAP log
# (one KTAP document per boot, each of which must finish).
#
# A case is a nested result ("# ok N ..." inside a test), or the test itself
# when it reported no nested results.  A test's nested plan ("# 1..N") must
# match its results; a test of rverbs with no KTAP output at all fails (the
# upstream rdma selftests print none and are judged by exit status); a test
# that reports SKIP after nested results fails.  A test that failed (exit status,
# timeout) while none of its cases did counts as one more failed case.
# Skips are counted and listed apart, never as passes; XFAIL and XPASS (a
# test that exited 2, e.g. a bash syntax error) are failures.  Prints the failed
# and skipped cases, then the closing line "N passed, N failed, N skipped";
# exits non-zero when anything failed or the suite did not finish.
#
# A test whose nested plan is empty ("# 1..0", as kselftest prints for a
# test that ran no case) passes nothing: with a passing result it fails as
# "no cases run"; skipped, it is a whole-test skip, pinned like a case
# (below).
#
# --floor N: the lane's floor on its case count (tests/case-floors, for a run
# of the whole lane): fewer than N passed cases fail the run, so that tests
# or cases that silently stop running cannot pass as a shorter green run.
#
# Skips are pinned: a skipped case (or a whole test skipped) that is not in
# EXPECTED_SKIPS (default tests/expected-skips: "TEST: CASE | why") fails as
# an unexpected skip; a listed case that passed is reported (the list is out
# of date), and does not fail the run.
floor=0
if [ "${1:-}" = --floor ]; then
	floor=${2:?usage: ktap-summary.sh [--floor N] LOG [EXPECTED_SKIPS]}
	[[ $floor =~ ^[0-9]+$ ]] || { echo "ktap-summary.sh: --floor takes a number, not '$floor'" >&2; exit 2; }
	shift 2
fi
log=${1:?usage: ktap-summary.sh [--floor N] LOG [EXPECTED_SKIPS]}
expected=${2:-$(dirname "$0")/../tests/expected-skips}
[ -r "$expected" ] || { echo "ktap-summary.sh: cannot read $expected" >&2; exit 2; }

awk -v expected="$expected" -v floor="$floor" '
function reset() { np = 0; nf = 0; ns = 0; nplan = -1 }
function result(line,    ok, name, directive) {
	ok = (line !~ /^not ok/)
	sub(/^(not )?ok [0-9]+ /, "", line)
	name = line; directive = ""
	if (match(line, / # .*$/)) {
		directive = substr(line, RSTART + 3)
		name = substr(line, 1, RSTART - 1)
	}
	if (directive ~ /^SKIP/) return "skip\t" name "\t" directive
	# kselftest reports a test that exited 2 (as bash does on a syntax
	# error) as XFAIL: no test of rverbs expects to fail.
	if (directive ~ /^(XFAIL|XPASS)/) return "fail\t" name "\t" directive
	return (ok ? "pass" : "fail") "\t" name "\t" directive
}
function count(kind, name, why,    key) {
	key = name; sub(/^rverbs: /, "", key)
	if (kind == "skip" && !(key in xskip)) { kind = "fail"; why = "unexpected skip: " why }
	if (kind == "pass" && key in xskip) stale[++nstale] = key
	if (kind == "pass") passed++
	else if (kind == "fail") { failed++; fails[failed] = name (why != "" ? " (" why ")" : "") }
	else { skipped++; skips[skipped] = name " (" xskip[key] ")" }
}
BEGIN {
	reset(); plan = -1; seen = 0
	while ((getline line < expected) > 0) {
		if (line ~ /^[ \t]*(#|$)/) continue
		i = index(line, " | ")
		if (i == 0) { printf "%s: no \" | \" in: %s\n", expected, line > "/dev/stderr"; exit 2 }
		xskip[substr(line, 1, i - 1)] = substr(line, i + 3)
	}
	close(expected)
}
# One KTAP document per boot (scripts/check.sh): each must finish.
function finished() {
	if (plan < 0 || seen < plan) {
		failed++
		fails[failed] = sprintf("suite did not finish: %d of %d tests reported", seen, plan < 0 ? 0 : plan)
	}
}
/^TAP version / { if (docs++) finished(); plan = -1; seen = 0; next }
/^1\.\.[0-9]+/ && plan < 0 { plan = substr($1, 4) + 0; next }
/^# selftests: / { reset(); test = substr($0, 14); next }
/^# 1\.\.[0-9]+/ { nplan = substr($2, 4) + 0; next }
/^# (not )?ok [0-9]+ / {
	split(result(substr($0, 3)), r, "\t")
	count(r[1], test ": " r[2], r[3])
	if (r[1] == "pass") np++; else if (r[1] == "fail") nf++; else ns++
	next
}
/^(not )?ok [0-9]+ / {
	seen++
	split(result($0), r, "\t")
	n = np + nf + ns
	if (n == 0 && nplan < 0 && r[1] == "pass" && test !~ /^rdma: /)
		# Every test of rverbs prints KTAP; the upstream rdma selftests
		# print none and are judged by their exit status.
		count("fail", test, "no KTAP output")
	else if (n == 0 && nplan == 0 && r[1] == "pass")
		count("fail", test, "no cases run (plan 1..0)")
	else if (n == 0 && nplan <= 0)
		count(r[1], test, r[3])
	else if (nplan >= 0 && n != nplan)
		count("fail", test, sprintf("%d of %d planned cases reported", n, nplan))
	else if (r[1] == "skip")
		count("fail", test, "skipped after " n " cases: " r[3])
	else if (r[1] == "fail" && nf == 0)
		count("fail", test, r[3] != "" ? r[3] : "test exited with an error")
	reset()
	next
}
END {
	finished()
	if (passed < floor) {
		failed++
		fails[failed] = sprintf("%d cases passed, fewer than the floor of %d (tests/case-floors)", passed, floor)
	}
	if (skipped) { print "skipped (expected, tests/expected-skips):"; for (i = 1; i <= skipped; i++) print "  " skips[i] }
	if (nstale) {
		print "listed as expected skips, yet passed (update tests/expected-skips):"
		for (i = 1; i <= nstale; i++) print "  " stale[i]
	}
	if (failed) { print "failed:"; for (i = 1; i <= failed; i++) print "  " fails[i] }
	printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
	exit failed != 0
}
' "$log"
