#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness-selftest.sh - the suite's own judges, judged: planted harness
# failures that must make a run fail and name the test.
#
# Runs on the host, with no VM, before "make check" boots one: synthetic
# KTAP logs through scripts/ktap-summary.sh and a synthetic kernel log
# through scripts/logcheck.sh.  Each case plants one kind of failure in an
# otherwise passing run (a test that exits 2, a missing nested case, a test
# with no KTAP output, an unexpected skip, a suite cut short, a kernel
# WARNING during one test) and expects a failed run that names the test; a
# control case expects the unplanted run to pass, with its expected skip
# counted as a skip; two documents (two boots) are counted together; a
# lane whose guest died names the test it was running (lane-summary.sh).
# Prints KTAP; exits non-zero if any case fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }

cat >"$tmp/skips" <<'EOF'
# synthetic
t_skip.sh: case b | a reviewed reason
EOF

# A passing run of three tests, the second with an expected skip; "@@n@@"
# marks where each case plants its failure.
good() {
	cat <<'EOF'
TAP version 13
1..3
# selftests: rverbs: t_one.sh
# TAP version 13
# 1..2
# ok 1 case a
# ok 2 case b
ok 1 selftests: rverbs: t_one.sh
# selftests: rverbs: t_skip.sh
# TAP version 13
# 1..2
# ok 1 case a
# ok 2 case b # SKIP a reason
ok 2 selftests: rverbs: t_skip.sh
# selftests: rverbs: t_three.sh
# TAP version 13
# 1..1
# ok 1 case a
ok 3 selftests: rverbs: t_three.sh
EOF
}

# summary CASE LOG-ON-STDIN - ktap-summary.sh's output and status.
summary() {
	cat >"$tmp/$1.log"
	"$top/scripts/ktap-summary.sh" "$tmp/$1.log" "$tmp/skips" >"$tmp/$1.out" 2>&1
}

# expect_fail CASE TEST WHY RC - the run failed (RC), and its list of
# failures names TEST and says WHY.
expect_fail() {
	local desc=$1 test=$2 why=$3 rc=$4
	if [ "$rc" -ne 0 ] && sed -n '/^failed:/,$p' "$tmp/$desc.out" | grep -F "$test" | grep -qF "$why" &&
		tail -n 1 "$tmp/$desc.out" | grep -qE '^[0-9]+ passed, [1-9][0-9]* failed'; then
		ok "$desc: the run fails and names $test"
	else
		sed 's/^/# /' "$tmp/$desc.out"
		not_ok "$desc: the run fails and names $test"
	fi
}

echo "TAP version 13"

good | summary control
if [ $? -eq 0 ] && tail -n 1 "$tmp/control.out" | grep -qx '4 passed, 0 failed, 1 skipped'; then
	ok "control: the unplanted run passes, its listed skip counted as a skip"
else
	sed 's/^/# /' "$tmp/control.out"
	not_ok "control: the unplanted run passes, its listed skip counted as a skip"
fi

# kselftest's runner reports exit status 2 (a bash syntax error) as XFAIL.
good | sed 's/^ok 3 selftests: rverbs: t_three.sh$/ok 3 selftests: rverbs: t_three.sh # XFAIL/' |
	summary exit2
expect_fail exit2 t_three.sh XFAIL $?

good | sed '/^# ok 2 case b$/d' | summary missing
expect_fail missing t_one.sh "1 of 2 planned cases" $?

good | sed '/^# selftests: rverbs: t_three.sh$/,/^ok 3/{/^# /d}' |
	sed 's/^ok 3 selftests: rverbs: t_three.sh$/# selftests: rverbs: t_three.sh\n&/' | summary silent
expect_fail silent t_three.sh "no KTAP output" $?

good | sed 's/^# ok 1 case a$/# ok 1 case a # SKIP no reason listed/' | summary unexpected_skip
expect_fail unexpected_skip t_one.sh "unexpected skip: SKIP no reason listed" $?

good | sed 's/^ok 3 selftests: rverbs: t_three.sh$/ok 3 selftests: rverbs: t_three.sh # SKIP gave up/' |
	summary skip_after_cases
expect_fail skip_after_cases t_three.sh "skipped after 1 cases" $?

good | sed '/^# selftests: rverbs: t_three.sh$/,$d' | summary cut_short
expect_fail cut_short "suite did not finish" "2 of 3 tests reported" $?

# Two boots, two KTAP documents (the stock lane's module-signature boot):
# both count, and a second one cut short fails the run.
{ good; good; } | summary two_boots
if [ $? -eq 0 ] && tail -n 1 "$tmp/two_boots.out" | grep -qx '8 passed, 0 failed, 2 skipped'; then
	ok "two boots: both documents counted"
else
	sed 's/^/# /' "$tmp/two_boots.out"
	not_ok "two boots: both documents counted"
fi
{ good; good | sed '/^# selftests: rverbs: t_three.sh$/,$d'; } | summary second_cut_short
expect_fail second_cut_short "suite did not finish" "2 of 3 tests reported" $?

# A lane's boots (scripts/lane-summary.sh): a guest that died in its second
# test leaves its suite unfinished, and the lane's failures say which test
# it was running and how its kernel log ended (vm.sh's why, log-end.txt);
# a boot whose cases all passed but whose log check failed is one failed
# case, with the report.
# lane_dirs: a lane whose module-signature boot passed.
lane_dirs() {
	rm -rf "$tmp/lane"
	mkdir -p "$tmp/lane/vm" "$tmp/lane/modsig/vm"
	good >"$tmp/lane/ktap-modsig.log"
	echo 0 >"$tmp/lane/modsig.rc"
}
# lane NAME: its summary, in NAME.out.
lane() {
	local name=$1
	RVERBS_EXPECTED_SKIPS=$tmp/skips "$top/scripts/lane-summary.sh" "$tmp/lane" suite modsig \
		>"$tmp/$name.out" 2>&1
}
dead_boot() {
	good | sed '/^# selftests: rverbs: t_skip.sh$/,$d' >"$tmp/lane/ktap-suite.log"
	echo 1 >"$tmp/lane/suite.rc"
	echo "the guest died before its command finished (vng exit 255), in rverbs: t_skip.sh" >"$tmp/lane/vm/why"
	echo "[  99.000000] Oops: int3: 0000 [#1] SMP NOPTI" >"$tmp/lane/vm/log-end.txt"
}
# lane_case NAME DESC LAST PATTERN... - the lane planted by NAME (a
# function) fails, its failures show every PATTERN, and its closing line
# is LAST.
lane_case() {
	local name=$1 desc=$2 last=$3 p good=1
	shift 3
	lane_dirs
	"$name"
	if lane "$name"; then good=0; fi
	for p in "$@"; do
		sed -n '/^failed:/,$p' "$tmp/$name.out" | grep -q -- "$p" || good=0
	done
	tail -n 1 "$tmp/$name.out" | grep -qx -- "$last" || good=0
	if [ $good = 1 ]; then
		ok "$desc"
	else
		sed 's/^/# /' "$tmp/$name.out"
		not_ok "$desc"
	fi
}
log_check_boot() {
	good >"$tmp/lane/ktap-suite.log"
	echo 1 >"$tmp/lane/suite.rc"
	echo "the guest kernel log shows a problem (logcheck.txt)" >"$tmp/lane/vm/why"
	echo "t_three.sh: WARNING: CPU: 1 PID: 7 at x.c:1 f+0x1/0x2" >"$tmp/lane/vm/logcheck.txt"
}
lane_case dead_boot \
	"dead boot: the lane fails, its failures name the test the guest was running and its log's end" \
	'6 passed, 1 failed, 1 skipped' 'suite did not finish' 'in rverbs: t_skip.sh' 'Oops: int3'
lane_case log_check_boot \
	"log check: a boot whose cases passed but whose kernel log did not is one failed case, with the report" \
	'8 passed, 1 failed, 2 skipped' 't_three.sh: WARNING'
lane_dirs
good >"$tmp/lane/ktap-suite.log"
echo 0 >"$tmp/lane/suite.rc"
lane clean_lane
if [ $? -eq 0 ] && tail -n 1 "$tmp/clean_lane.out" | grep -qx '8 passed, 0 failed, 2 skipped'; then
	ok "lane control: two clean boots pass"
else
	sed 's/^/# /' "$tmp/clean_lane.out"
	not_ok "lane control: two clean boots pass"
fi

# A test that ran no case: an empty nested plan passes nothing, and a
# whole-test skip is pinned like a skipped case.
empty_plan() {
	good | sed '/^# selftests: rverbs: t_three.sh$/,/^ok 3/{/^# [^s]/d}' |
		sed "s/^# selftests: rverbs: t_three.sh\$/&\n# TAP version 13\n# 1..0$1/; s/^ok 3 selftests: rverbs: t_three.sh\$/&$2/"
}
empty_plan "" "" | summary empty_plan
expect_fail empty_plan t_three.sh "no cases run (plan 1..0)" $?
empty_plan " # SKIP nothing to do" " # SKIP" | summary empty_plan_skip
expect_fail empty_plan_skip t_three.sh "unexpected skip" $?

# A lane's floor: the control run's 4 passed cases under a floor of 5 fail.
good | cat >"$tmp/floor.log"
"$top/scripts/ktap-summary.sh" --floor 5 "$tmp/floor.log" "$tmp/skips" >"$tmp/floor.out" 2>&1
expect_fail floor "4 cases passed" "fewer than the floor of 5" $?

# A test name that is no test of the run (make check TESTS=typo.sh) is a
# failed case, not an empty run that passes: tests/run_suite.sh's own
# output, on the host (it runs nothing else when no name is known).
if [ -d "$("$top/scripts/kdir-path.sh" src)/tools/testing/selftests/kselftest" ]; then
	mkdir -p "$tmp/bin"
	RVERBS_TESTS="rverbs_module.sh typo.sh" RVERBS_LANE=modsig "$top/tests/run_suite.sh" "$tmp/bin" \
		>"$tmp/unknown.log" 2>&1
	run_rc=$?
	"$top/scripts/ktap-summary.sh" "$tmp/unknown.log" "$tmp/skips" >"$tmp/unknown.out" 2>&1
	sum_rc=$?
	if [ "$run_rc" -ne 0 ]; then
		expect_fail unknown typo.sh "no such test" "$sum_rc"
	else
		sed 's/^/# /' "$tmp/unknown.log"
		not_ok "unknown: run_suite.sh fails a run of an unknown test"
	fi
	# The same for a name the suite's boot is to leave out (RVERBS_EXCEPT,
	# the second boot's tests): here every test of the run is left out,
	# so nothing runs but the failed case.
	RVERBS_EXCEPT="rverbs_package.sh typo.sh rverbs_modsig.sh" RVERBS_LANE=modsig \
		"$top/tests/run_suite.sh" "$tmp/bin" >"$tmp/except.log" 2>&1
	run_rc=$?
	"$top/scripts/ktap-summary.sh" "$tmp/except.log" "$tmp/skips" >"$tmp/except.out" 2>&1
	sum_rc=$?
	if [ "$run_rc" -ne 0 ] && ! grep -q 'selftests: rverbs: rverbs_package.sh$' "$tmp/except.log"; then
		expect_fail except typo.sh "no such test" "$sum_rc"
	else
		sed 's/^/# /' "$tmp/except.log"
		not_ok "except: run_suite.sh fails a run that leaves out an unknown test, and runs no test it left out"
	fi
else
	not_ok "unknown: the kernel source's kselftest runner is missing (make kdir first)"
fi

# A test that leaves the network changed (a route of no device, a
# namespace): tests/run_suite.sh fails the run and names it.  A tree of two
# harmless tests of its own, on the host; the state is a file the first
# test changes (RVERBS_NET_STATE_CMD), nothing of the host's.
if [ -d "$("$top/scripts/kdir-path.sh" src)/tools/testing/selftests/kselftest" ]; then
	fake=$tmp/fake
	mkdir -p "$fake/tests"
	ln -s "$top/scripts" "$fake/scripts"
	cp "$top/tests/run_suite.sh" "$top/tests/settings" "$fake/tests/"
	printf 'TEST_PROGS := t_route.sh t_quiet.sh\n' >"$fake/tests/Makefile"
	for t in t_route t_quiet; do
		{
			echo '#!/bin/bash'
			[ $t = t_route ] && echo "echo 'unreachable 198.51.100.0/24' >>'$tmp/netstate'"
			printf 'echo "TAP version 13"; echo "1..1"; echo "ok 1 case a"\n'
		} >"$fake/tests/$t.sh"
		chmod +x "$fake/tests/$t.sh"
	done
	echo 'link lo' >"$tmp/netstate"
	# Through a pipe: kselftest's runner opens /dev/stdout again for each
	# test's output, which on a file would write over the start of it.
	RVERBS_TESTS="t_route.sh t_quiet.sh" RVERBS_NET_STATE_CMD="cat '$tmp/netstate'" \
		"$fake/tests/run_suite.sh" "$tmp/bin" 2>&1 | cat >"$tmp/netstate.log"
	run_rc=${PIPESTATUS[0]}
	"$top/scripts/ktap-summary.sh" "$tmp/netstate.log" "$tmp/skips" >"$tmp/netstate.out" 2>&1
	sum_rc=$?
	if [ "$run_rc" -ne 0 ] && grep -q 'left the network changed' "$tmp/netstate.log" &&
		! grep -q 't_quiet.sh left' "$tmp/netstate.log"; then
		expect_fail netstate "network state" "not: t_route.sh" "$sum_rc"
	else
		sed 's/^/# /' "$tmp/netstate.log"
		not_ok "netstate: run_suite.sh fails a run whose test left a route behind, and names it"
	fi
else
	not_ok "netstate: the kernel source's kselftest runner is missing (make kdir first)"
fi

# A WARNING in the kernel log while t_skip.sh runs: logcheck.sh names it.
cat >"$tmp/dmesg.log" <<'EOF'
[    1.000000] rverbs-vm: test t_one.sh (tainted 0)
[    2.000000] rverbs-vm: test t_skip.sh (tainted 0)
[    2.500000] ------------[ cut here ]------------
[    2.500001] WARNING: CPU: 0 PID: 42 at drivers/infiniband/core/verbs.c:1 f+0x1/0x2
[    3.000000] rverbs-vm: test t_three.sh (tainted 512)
EOF
out=$("$top/scripts/logcheck.sh" "$tmp/dmesg.log")
if [ $? -ne 0 ] && grep -q '^t_skip.sh: .*WARNING: CPU' <<<"$out" && ! grep -q '^t_one.sh\|^t_three.sh' <<<"$out"; then
	ok "kernel WARNING during t_skip.sh: logcheck.sh fails and names t_skip.sh"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "kernel WARNING during t_skip.sh: logcheck.sh fails and names t_skip.sh"
fi

# Fault injection's window excuses exactly the reports of the injecting
# task (fault_nth), each up to the end of its trace, and counts them; the
# same report of another task, a WARNING (the trace events' own, which
# rverbs_faults.sh now keeps injection away from), and a report inside an
# excused one's dump are flagged.
alloc_report() { # TIME COMM
	printf '%s\n' "[    $1.000000] $2: page allocation failure: order:0, mode:0xcc0(GFP_KERNEL)" \
		"[    $1.000001] CPU: 1 UID: 0 PID: 2197 Comm: $2 Not tainted 7.2.13-rverbs-debug" \
		"[    $1.000002] Call Trace:" "[    $1.000003]  <TASK>" "[    $1.000004]  dump_stack_lvl+0x1/0x2" \
		"[    $1.000005]  </TASK>" "[    $1.000006] Mem-Info:"
}
inject_report() { # TIME COMM
	printf '%s\n' "[    $1.000000] FAULT_INJECTION: forcing a failure." \
		"[    $1.000001] name fail_usercopy, interval 1, probability 0, space 0, times 1" \
		"[    $1.000002] CPU: 0 UID: 0 PID: 2197 Comm: $2 Not tainted 7.2.13-rverbs-debug" \
		"[    $1.000003] Call Trace:" "[    $1.000004]  <TASK>" "[    $1.000005]  </TASK>"
}
inject_line() { # TIME ATTR - a report of verbose 1: two lines, no dump
	printf '%s\n' "[    $1.000000] FAULT_INJECTION: forcing a failure." \
		"[    $1.000001] name $2, interval 1, probability 0, space 0, times 1"
}
trace_warn() {
	printf '%s\n' "[    $1.000000] ------------[ cut here ]------------" \
		"[    $1.000001] WARNING: kernel/trace/trace_events.c:3058 at event_define_fields+0x5f2/0x610, CPU#1: fault_nth/2197" \
		"[    $1.000002] Call Trace:" "[    $1.000003]  <TASK>" "[    $1.000004]  </TASK>"
}
window() { # REPORT...
	echo '[    1.000000] rverbs-vm: test t_one.sh (tainted 0)'
	echo '[    1.500000] rverbs-expect: begin alloc-failures (a case)'
	"$@"
	echo '[    9.500000] rverbs-expect: end'
}
window eval 'alloc_report 2 fault_nth; inject_report 3 fault_nth' >"$tmp/alloc_ok.log"
# rverbs_faults.sh's reports (verbose 1): a slab fault, a page allocator's
# with warn_alloc's report after it, a copy's: four excused; a WARNING
# right after a one-line report is not part of it.
window eval 'inject_line 2 failslab; inject_line 3 fail_page_alloc; alloc_report 3 fault_nth;
	inject_line 4 fail_usercopy' >"$tmp/inject_lines.log"
window eval 'inject_line 2 failslab; trace_warn 3' >"$tmp/inject_warn.log"
window alloc_report 2 kworker/0:1 >"$tmp/alloc_other.log"
window inject_report 2 python3 >"$tmp/inject_other.log"
window eval 'alloc_report 2 fault_nth; trace_warn 3' >"$tmp/alloc_warn.log"
{ alloc_report 2 fault_nth | sed '/<\/TASK>/d'; trace_warn 3; } >"$tmp/inner.tmp"
window cat "$tmp/inner.tmp" >"$tmp/alloc_inner.log"
flags() { "$top/scripts/logcheck.sh" "$1" >"$tmp/flags.out"; }
if flags "$tmp/alloc_ok.log" && [ "$("$top/scripts/logcheck.sh" --excused "$tmp/alloc_ok.log")" = 2 ]; then
	ok "alloc-failures window: fault_nth's two reports excused and counted"
else
	sed 's/^/# /' "$tmp/flags.out"
	not_ok "alloc-failures window: fault_nth's two reports excused and counted"
fi
if flags "$tmp/inject_lines.log" && [ "$("$top/scripts/logcheck.sh" --excused "$tmp/inject_lines.log")" = 4 ]; then
	ok "alloc-failures window: one-line fault reports (verbose 1) and warn_alloc's excused and counted"
else
	sed 's/^/# /' "$tmp/flags.out"
	not_ok "alloc-failures window: one-line fault reports (verbose 1) and warn_alloc's excused and counted"
fi
for c in alloc_other:"page allocation failure" inject_other:"Call Trace" alloc_warn:"WARNING: kernel/trace" \
	alloc_inner:"WARNING: kernel/trace" inject_warn:"WARNING: kernel/trace"; do
	f=${c%%:*} want=${c#*:}
	if ! flags "$tmp/$f.log" && grep -q "^t_one.sh: .*$want" "$tmp/flags.out"; then
		ok "alloc-failures window, $f: flagged ($want)"
	else
		sed 's/^/# /' "$tmp/flags.out"
		not_ok "alloc-failures window, $f: flagged ($want)"
	fi
done

# kmemleak's summary line: a failure before the planted leak's window; after
# it, the planted objects may still be found (guest.sh judges each object).
cat >"$tmp/leak.log" <<'EOF'
[    1.000000] rverbs-vm: test t_one.sh (tainted 0)
[    2.000000] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[    3.000000] rverbs-vm: test rverbs_detectors.sh (tainted 0)
[    4.000000] rverbs-expect: begin detector leak (tainted 0)
[    5.000000] kmemleak: 8 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[    6.000000] rverbs-expect: end
[    7.000000] kmemleak: 7 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
EOF
out=$("$top/scripts/logcheck.sh" "$tmp/leak.log")
if [ $? -ne 0 ] && grep -q '^t_one.sh: .*3 new suspected' <<<"$out"; then
	ok "kmemleak's summary before the planted leak: logcheck.sh fails and names t_one.sh"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "kmemleak's summary before the planted leak: logcheck.sh fails and names t_one.sh"
fi
if ! grep -q 'rverbs_detectors.sh' <<<"$out"; then
	ok "kmemleak's summary after the planted leak's window: not flagged"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "kmemleak's summary after the planted leak's window: not flagged"
fi

# rverbs_detectors.sh's save of the earlier tests' leaks, just before the
# planted one (its marker): its scans' summary is no finding (the objects
# saved are judged one by one); the same summary without the marker is.
cat >"$tmp/save.log" <<'EOF'
[    1.000000] rverbs-vm: test rverbs_detectors.sh (tainted 0)
[    2.000000] rverbs-expect: kmemleak-save
[    3.000000] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[    4.000000] rverbs-expect: begin detector leak (tainted 0)
EOF
grep -v kmemleak-save "$tmp/save.log" >"$tmp/nosave.log"
if "$top/scripts/logcheck.sh" "$tmp/save.log" >/dev/null &&
	! "$top/scripts/logcheck.sh" "$tmp/nosave.log" >/dev/null; then
	ok "kmemleak's summary of the detectors' save: not flagged, flagged without its marker"
else
	not_ok "kmemleak's summary of the detectors' save: not flagged, flagged without its marker"
fi

# The final scans' summary (after "rverbs-vm: done"): each object is judged
# by guest.sh and vm.sh instead; one during the run still fails.
cat >"$tmp/final.log" <<'EOF'
[    1.000000] rverbs-vm: test t_one.sh (tainted 0)
[    2.000000] rverbs-vm: done, exit status 0
[    3.000000] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
EOF
if "$top/scripts/logcheck.sh" "$tmp/final.log" >/dev/null; then
	ok "kmemleak's summary of the final scans: not flagged"
else
	not_ok "kmemleak's summary of the final scans: not flagged"
fi

# The kernel's command line names the hang detectors' thresholds (vm.sh,
# RVERBS_VM_STARVED): no report; a hung task after it still is one.
cat >"$tmp/cmdline.log" <<'EOF'
[    0.000000] Command line: console=ttyS0 sysctl.kernel.hung_task_timeout_secs=600 watchdog_thresh=60
[    0.200000] Kernel command line: console=ttyS0 sysctl.kernel.hung_task_timeout_secs=600 watchdog_thresh=60
[    1.000000] rverbs-vm: test t_one.sh (tainted 0)
EOF
if "$top/scripts/logcheck.sh" "$tmp/cmdline.log" >/dev/null; then
	ok "the hang detectors' thresholds on the kernel command line: not flagged"
else
	not_ok "the hang detectors' thresholds on the kernel command line: not flagged"
fi
echo "[  700.000000] INFO: task rmmod:99 blocked for more than 600 seconds." >>"$tmp/cmdline.log"
if ! out=$("$top/scripts/logcheck.sh" "$tmp/cmdline.log") && grep -q 't_one.sh' <<<"$out"; then
	ok "a hung task after that command line: logcheck.sh fails and names t_one.sh"
else
	not_ok "a hung task after that command line: logcheck.sh fails and names t_one.sh"
fi

# A planted bug's window (scripts/detector-window.sh, for
# tests/rverbs_detectors.sh): its one report passes; a report of another
# kind beside it, or a second report of its kind, fails, and says so.
uaf_report() {
	printf '[  %s.000000] BUG: KASAN: slab-use-after-free in rv_planted_init+0x1/0x2\n' "$1"
	printf '[  %s.000001] Read of size 8 at addr ffff888000000000 by task insmod/99\n' "$1"
	printf '[  %s.000002] Call Trace:\n[  %s.000003]  <TASK>\n[  %s.000004]  </TASK>\n' "$1" "$1" "$1"
}
window() {
	"$top/scripts/detector-window.sh" uaf 'KASAN: (slab-)?use-after-free' "$tmp/window" >"$tmp/window.out" 2>&1
}
uaf_report 10 >"$tmp/window"
if window && [ "$(head -n 1 "$tmp/window.out")" -gt 0 ]; then
	ok "detector window: the planted report alone passes"
else
	sed 's/^/# /' "$tmp/window.out"
	not_ok "detector window: the planted report alone passes"
fi
{ uaf_report 10; echo "[   11.000000] WARNING: CPU: 0 PID: 99 at lib/list_debug.c:1 f+0x1/0x2"; } >"$tmp/window"
if ! window && grep -q "1 of another kind" "$tmp/window.out"; then
	ok "detector window: a report of another kind beside the planted one fails it"
else
	sed 's/^/# /' "$tmp/window.out"
	not_ok "detector window: a report of another kind beside the planted one fails it"
fi
{ uaf_report 10; uaf_report 12; } >"$tmp/window"
if ! window && grep -q "2 report(s) of the planted kind" "$tmp/window.out"; then
	ok "detector window: a second report of the planted kind fails it"
else
	sed 's/^/# /' "$tmp/window.out"
	not_ok "detector window: a second report of the planted kind fails it"
fi

uaf_report 10 | sed 's/rv_planted_init/other_init/' >"$tmp/window"
if ! window && grep -q "does not name rv_planted" "$tmp/window.out"; then
	ok "detector window: a report of the planted kind from elsewhere fails it"
else
	sed 's/^/# /' "$tmp/window.out"
	not_ok "detector window: a report of the planted kind from elsewhere fails it"
fi

# kmemleak's report at the end of a debug boot (scripts/kmemleak-sort.awk,
# run by guest.sh): a late planted object and ib_uverbs' known leak of
# fault_nth are set aside; the same radix-tree leak of another task, and
# any other object, are leaks of the run.
leak_rec() {
	printf 'unreferenced object 0xffff8880%s (size 576):\n  comm "%s", pid 1, jiffies 1\n' "$1" "$2"
	printf '  hex dump (first 32 bytes):\n    %s\n  backtrace (crc 0):\n' "$3"
	local f
	for f in "${@:4}"; do printf '    %s+0x1/0x2\n' "$f"; done
}
{
	leak_rec 00000001 insmod "72 76 5f 70 6c 61  rv_planted leak!" kmalloc_trace rv_planted_init
	leak_rec 00000002 fault_nth "00 00 00 00" radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uverbs_alloc_api
	leak_rec 00000003 rdma "00 00 00 00" radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uverbs_alloc_api
	leak_rec 00000004 fault_nth "00 00 00 00" kmalloc_trace rv0_create_qp
} >"$tmp/kmemleak.txt"
awk -v planted="$tmp/leak-planted" -v known="$tmp/leak-known" -f "$top/scripts/kmemleak-sort.awk" \
	<"$tmp/kmemleak.txt" >"$tmp/leak-run"
if [ "$(grep -c '^unreferenced' "$tmp/leak-planted")" = 1 ] && grep -q 00000001 "$tmp/leak-planted" &&
	[ "$(grep -c '^unreferenced' "$tmp/leak-known")" = 1 ] && grep -q 00000002 "$tmp/leak-known" &&
	[ "$(grep -c '^unreferenced' "$tmp/leak-run")" = 2 ] && grep -q 00000003 "$tmp/leak-run" &&
	grep -q 00000004 "$tmp/leak-run"; then
	ok "kmemleak's report: the late planted object and fault_nth's uverbs_alloc_api node set aside; that node of another task and any other object are leaks of the run"
else
	for f in leak-planted leak-known leak-run; do sed "s/^/# $f: /" "$tmp/$f"; done
	not_ok "kmemleak's report: the late planted object and fault_nth's uverbs_alloc_api node set aside; that node of another task and any other object are leaks of the run"
fi

echo "1..$n"
echo "# harness self-test: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
