#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_suite.sh BUILD_DIR - the whole kselftest suite of rverbs, in one boot.
#
# Runs inside the VM (make check): rverbs' own tests (shell tests from
# tests/, compiled ones from BUILD_DIR), then, as a peer suite, the
# upstream soft-RoCE selftests of the kernel source
# (tools/testing/selftests/rdma).  Prints one KTAP document; each test's
# own KTAP output is nested in it, prefixed with "# ", as kselftest does.

# Its prelude starts as few programs as it can: each costs most of a
# second on the debug kernel under TCG (Documentation/rverbs.rst, "The two
# lanes").
case $0 in */*) RVERBS_TOP=${0%/*}/.. ;; *) RVERBS_TOP=.. ;; esac
RVERBS_TOP=$(cd "$RVERBS_TOP" && pwd)
build=${1:?usage: run_suite.sh BUILD_DIR}
# The kernel source's selftests: scripts/check.sh passes them (the host
# has computed the path), else the same computation here.
: "${KSFT_DIR:=$("$RVERBS_TOP/scripts/kdir-path.sh" src)/tools/testing/selftests}"
# The modules under test: the tree's own, or those the debug lane built
# for its kernel (make check-debug sets these).
RVERBS_KO=${RVERBS_KO:-$RVERBS_TOP/rverbs.ko}
RVERBS_TAKEOVER_KO=${RVERBS_TAKEOVER_KO:-$RVERBS_TOP/rverbs_takeover.ko}
RVERBS_KAH=${RVERBS_KAH:-$RVERBS_TOP/tests/test_modules/rv_kernel_ah.ko}
case $build in /*) RVERBS_TEST_BIN=$build ;; *) RVERBS_TEST_BIN=$PWD/$build ;; esac
export RVERBS_TOP KSFT_DIR RVERBS_KO RVERBS_TAKEOVER_KO RVERBS_KAH RVERBS_TEST_BIN

# make_list FILE VAR - the words of VAR's assignment in a kselftest
# Makefile (TEST_GEN_PROGS, TEST_PROGS, ...), continued lines too, in
# order, into the array "list".
make_list() {
	local line joined='' re="^$2[[:space:]]*:?=(.*)$" words
	list=()
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line == *\\ ]]; then
			joined+=${line%\\}
			continue
		fi
		joined+=$line
		if [[ $joined =~ $re ]]; then
			read -ra words <<<"${BASH_REMATCH[1]}"
			list+=("${words[@]}")
		fi
		joined=''
	done <"$1"
}

tests=()
make_list "$RVERBS_TOP/tests/Makefile" TEST_GEN_PROGS
for t in "${list[@]}"; do tests+=("$build/$t"); done
make_list "$RVERBS_TOP/tests/Makefile" TEST_PROGS
for t in "${list[@]}"; do tests+=("$RVERBS_TOP/tests/$t"); done
make_list "$KSFT_DIR/rdma/Makefile" TEST_PROGS
for t in "${list[@]}"; do tests+=("$KSFT_DIR/rdma/$t"); done
# The debug lane (make check-debug, RVERBS_LANE=debug) runs the tests of
# DEBUG_LANE_TESTS and then its own: fault injection, and last the planted
# bugs that prove its detectors work (lockdep turns itself off after its
# first report).  RVERBS_TESTS="NAME..." (make check TESTS=..., make
# check-debug TESTS=...) runs only those tests, on the debug lane any of
# them, in or out of DEBUG_LANE_TESTS.
if [ "${RVERBS_LANE:-}" = debug ]; then
	make_list "$RVERBS_TOP/tests/Makefile" DEBUG_LANE_TESTS
	lane=" ${list[*]} "
	make_list "$RVERBS_TOP/tests/Makefile" TEST_PROGS_DEBUG
	for t in "${list[@]}"; do
		tests+=("$RVERBS_TOP/tests/$t")
		lane+="$t "
	done
	[ -n "${RVERBS_TESTS:-}" ] || RVERBS_TESTS=$lane
fi
# The stock lane's module-signature boot (RVERBS_LANE=modsig, scripts/check.sh)
# runs TEST_PROGS_MODSIG, and nothing else.
if [ "${RVERBS_LANE:-}" = modsig ]; then
	tests=()
	make_list "$RVERBS_TOP/tests/Makefile" TEST_PROGS_MODSIG
	for t in "${list[@]}"; do tests+=("$RVERBS_TOP/tests/$t"); done
fi
# A name that is no test of the run is a failed case of its own, not a run
# of nothing that passes (make check TESTS=typo.sh), in RVERBS_TESTS and in
# RVERBS_EXCEPT alike.
unknown=()
# note_unknown NAMES - adds those of NAMES that are no test of the run to
# unknown.
note_unknown() {
	local name t found
	for name in $1; do
		found=
		for t in "${tests[@]}"; do
			[ "${t##*/}" = "$name" ] && found=1 && break
		done
		[ -n "$found" ] || unknown+=("$name")
	done
}
# RVERBS_EXCEPT="NAME...": the suite without those tests (the stock lane's
# suite boot, whose second boot runs them: scripts/check.sh).
if [ -n "${RVERBS_EXCEPT:-}" ]; then
	note_unknown "$RVERBS_EXCEPT"
	kept=()
	for t in "${tests[@]}"; do
		[[ " $RVERBS_EXCEPT " == *" ${t##*/} "* ]] || kept+=("$t")
	done
	tests=("${kept[@]}")
fi
# RVERBS_TESTS="NAME...": only those tests.
if [ -n "${RVERBS_TESTS:-}" ]; then
	note_unknown "$RVERBS_TESTS"
	chosen=()
	for t in "${tests[@]}"; do
		[[ " $RVERBS_TESTS " == *" ${t##*/} "* ]] && chosen+=("$t")
	done
	tests=("${chosen[@]}")
fi

BASE_DIR=$KSFT_DIR
# shellcheck source=/dev/null
. "$BASE_DIR/kselftest/runner.sh"
while IFS= read -r line; do
	[[ $line == timeout=* ]] && kselftest_override_timeout=${line#timeout=}
done <"$RVERBS_TOP/tests/settings"
# The debug kernel (KASAN, lockdep, ... under TCG) runs the same tests
# several times slower.
[ "${RVERBS_LANE:-}" = debug ] && kselftest_override_timeout=$((kselftest_override_timeout * 3))
# The module-signature boot is starved by design (one vCPU at nice 19
# beside the suite's boot and, on a cold run, the debug kernel's build):
# there rverbs_package.sh's two depmods of Debian's whole module tree took
# 604 s of a cold run (2026-12-04, c2), 416 s of CI's warm one, 193 s in a
# guest that is not starved.  Its bound is twice the suite's.
[ "${RVERBS_LANE:-}" = modsig ] && kselftest_override_timeout=$((kselftest_override_timeout * 2))
base_timeout=$kselftest_override_timeout
# bound_of NAME - the runner's bound on test NAME: the lane's, three times
# it for the two tests that run rdma-core's pyverbs suites, several runs of
# them, each bounded itself (tests/lib.sh, rdmacore_run), so a hang ends
# there first.  On a host twice as slow as usual they go past 600 s:
# rverbs_rdmacore_diff.sh took 143 s in c13, 460 s in w24, and reported 3
# of its 6 cases in CI's run of 2026-12-06, which ran 1.5 times slower
# than c13 (most likely the runner's 600 s; CI keeps no more of its log)
# (rv0_rdmacore.sh: 322 s in c13).
bound_of() {
	case $1 in
	rverbs_rdmacore_diff.sh | rv0_rdmacore.sh) echo $((base_timeout * 3)) ;;
	*) echo "$base_timeout" ;;
	esac
}

# net_state - what every test must leave as it found it: the routes of the
# initial namespace (both families, every table), its links, and the named
# namespaces.  A route of no device (unreachable, prohibit, blackhole) or
# a namespace left behind changes what the tests after it see.
net_state() {
	local l
	ip -o route show table all 2>&1
	ip -o -6 route show table all 2>&1
	for l in /sys/class/net/*; do echo "link ${l##*/}"; done
	for l in /run/netns/*; do [ -e "$l" ] && echo "netns ${l##*/}"; done
}
# RVERBS_NET_STATE_CMD: a command that prints the state instead
# (scripts/harness-selftest.sh plants a change with it).
state_now() {
	if [ -n "${RVERBS_NET_STATE_CMD:-}" ]; then bash -c "$RVERBS_NET_STATE_CMD"; else net_state; fi
}

# restore BEFORE - after a test that left the network changed (it failed,
# or the runner's bound stopped it before its own teardown finished), undo
# what it left, so that the tests after it start as they expect: one
# failure is reported once (the "network state" case below), not again by
# every test it would break.  BEFORE is net_state's output before it.
# What was added goes: the named namespaces (their processes killed first),
# links, routes; with them rverbs' modules and soft-RoCE, which tests load
# and unload themselves, and RDMA links (none exists between tests).
restore() {
	local line ns i
	while IFS= read -r line; do
		case $line in
		"netns "*)
			ns=${line#netns }
			ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
			ip netns del "$ns" 2>/dev/null
			;;
		"link "*) ip link del "${line#link }" 2>/dev/null ;;
		esac
	done < <(comm -13 <(sort <<<"$1") <(net_state | sort))
	if [ -d /sys/kernel/livepatch/rverbs_takeover ]; then
		echo 0 >/sys/kernel/livepatch/rverbs_takeover/enabled 2>/dev/null
		for ((i = 0; i < 300; i++)); do
			[ -d /sys/kernel/livepatch/rverbs_takeover ] || break
			sleep 1
		done
	fi
	while read -r _ line _; do
		rdma link del "${line%/*}" 2>/dev/null
	done < <(rdma link show 2>/dev/null)
	rmmod rverbs_takeover rverbs 2>/dev/null
	modprobe -r rdma_rxe 2>/dev/null
	# Routes last: those of the links gone went with them.
	while IFS= read -r line; do
		# shellcheck disable=SC2086 # a route's words, as ip printed them
		case $line in *:*) ip -6 route del $line ;; *) ip route del $line ;; esac 2>/dev/null
	done < <(comm -13 <(sort <<<"$1") <(net_state | sort) | grep -vE '^(netns|link) ')
	true
}

# strays MARK - kills what a test left running: every process that
# inherited MARK (RVERBS_TEST_RUN, exported for the test alone) and lives
# on after it, in any namespace (kselftest's runner bounds a test with
# "timeout --foreground", which leaves its children running); prints
# "PID COMM" for each.  The runner's own subshells never exec'd with it.
strays() {
	local f pid comm
	for f in $(grep -lzxF "RVERBS_TEST_RUN=$1" /proc/[0-9]*/environ 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		[ "$pid" = "$$" ] && continue
		comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
		kill -9 "$pid" 2>/dev/null && echo "$pid $comm"
	done
}

# cpu_now - the guest's CPU time so far, in ticks, from /proc/stat's first
# line: "user system irq idle" (user with nice, irq with softirq, idle with
# iowait; bash alone, no program started).
cpu_now() {
	local _ user nice system idle iowait irq softirq
	read -r _ user nice system idle iowait irq softirq _ </proc/stat
	echo "$((user + nice)) $system $((irq + softirq)) $((idle + iowait))"
}

# cpu_used BEFORE AFTER - how the guest's CPUs spent a test, in percent of
# all their time: under TCG every busy tick of a vCPU is a host CPU's, and
# an idle one (halted) costs the host nothing, so this is what the test
# cost the host's cores, and where: a test busy mostly in user space with
# the kernel idle is a program polling (Documentation/rverbs.rst, "The two
# lanes").
cpu_used() {
	local -a a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	local u=$((b[0] - a[0])) s=$((b[1] - a[1])) i=$((b[2] - a[2])) d=$((b[3] - a[3]))
	local all=$((u + s + i + d))
	((all > 0)) || all=1
	echo "busy $(((u + s + i) * 100 / all)) % (user $((u * 100 / all)), system $((s * 100 / all)), irq $((i * 100 / all))) of $(nproc_bash) CPUs"
}

# nproc_bash - the guest's CPUs, counted in /proc/stat (bash alone).
nproc_bash() {
	local line n=0
	while read -r line; do
		[[ $line == cpu[0-9]* ]] && n=$((n + 1))
	done </proc/stat
	echo $n
}

ktap_print_header
ktap_set_plan $((${#tests[@]} + ${#unknown[@]} + 2))
for name in "${unknown[@]}"; do
	echo "# selftests: rverbs: $name"
	ktap_test_fail "selftests: rverbs: $name # no such test in this run (tests/Makefile)"
done
state=$(state_now)
left=()
strayed=()
for t in "${tests[@]}"; do
	case $t in
	"$KSFT_DIR"/*) dir=${t#"$KSFT_DIR"/}; dir=${dir%/*} ;;
	*) dir=rverbs ;;
	esac
	start=$SECONDS
	# Names the test in the kernel log: scripts/logcheck.sh attributes
	# each report to the test that was running.
	echo "rverbs-vm: test $dir: ${t##*/} (tainted $(cat /proc/sys/kernel/tainted))" >/dev/kmsg
	kselftest_override_timeout=$(bound_of "${t##*/}")
	mark="${t##*/}.$$.$start.$RANDOM"
	cpu=$(cpu_now)
	RVERBS_TEST_RUN=$mark run_one "$dir" "$t"
	ktap_print_msg "$dir: ${t##*/} took $((SECONDS - start)) s"
	ktap_print_msg "$dir: ${t##*/} cpu: $(cpu_used "$cpu" "$(cpu_now)")"
	# Not with a planted state (the harness self-test, on the host).
	if [ -z "${RVERBS_NET_STATE_CMD:-}" ]; then
		killed=$(strays "$mark" | xargs)
		if [ -n "$killed" ]; then
			ktap_print_msg "$dir: ${t##*/} left processes running, killed: $killed"
			strayed+=("${t##*/}")
		fi
	fi
	now=$(state_now)
	if [ "$now" != "$state" ]; then
		ktap_print_msg "$dir: ${t##*/} left the network changed (- before, + after):"
		diff <(echo "$state") <(echo "$now") | sed -n 's/^[<>]/# &/p' | head -n 20
		left+=("${t##*/}")
		# Not with a planted state (the harness self-test, on the host).
		if [ -z "${RVERBS_NET_STATE_CMD:-}" ]; then
			restore "$state"
			now=$(state_now)
			[ "$now" = "$state" ] ||
				ktap_print_msg "$dir: ${t##*/}: not all of it could be undone; the tests after it see the change"
		fi
		state=$now
	fi
done
# One case of its own: every test left the routes, links and namespaces as
# it found them.
echo "# selftests: rverbs: network state"
echo "# TAP version 13"
echo "# 1..1"
if [ ${#left[@]} -eq 0 ]; then
	echo "# ok 1 every test left the routes, links and namespaces as it found them"
	ktap_test_pass "selftests: rverbs: network state"
else
	echo "# not ok 1 every test left the routes, links and namespaces as it found them # not: ${left[*]}"
	ktap_test_fail "selftests: rverbs: network state # left changed by ${left[*]}"
fi
# And one more: no test left a process running after it (what one leaves
# holds devices, ports and namespaces that the tests after it expect free;
# strays() above named and killed each).
echo "# selftests: rverbs: processes"
echo "# TAP version 13"
echo "# 1..1"
if [ ${#strayed[@]} -eq 0 ]; then
	echo "# ok 1 no test left a process running after it"
	ktap_test_pass "selftests: rverbs: processes"
else
	echo "# not ok 1 no test left a process running after it # not: ${strayed[*]}"
	ktap_test_fail "selftests: rverbs: processes # left running by ${strayed[*]}"
fi
ktap_print_totals
[ "$KTAP_CNT_FAIL" -eq 0 ]
