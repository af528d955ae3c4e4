#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection of every error path (debug lane): for each entry point,
# the n-th slab allocation, page allocation or user copy of the one system
# call that reaches it fails, for n = 1, 2, ... until the call succeeds
# without a fault (fault_nth.c, /proc/thread-self/fail-nth).  The destroy
# verbs allocate nothing: their fault points are the copies of the command
# (the object must survive them); a create's last ones are the copies of its
# answer (the object, already made, must be destroyed again).  Every injected failure must
# give a clean error and leave nothing behind; the next attempt must work
# from the same state.  Checked after each entry point: the Rust core's
# AH and XRCD counters balance, rv0's debugfs resources, ib_core's resource
# tracking ("rdma res") and the list of RDMA devices are as before, and
# the kernel log shows nothing but the reports of the failed allocations
# themselves (the "alloc-failures" window of scripts/logcheck.sh).
# kmemleak, at the end of the run, finds anything left unreferenced.
#
# Entry points: rdma_create_user_ah and rdma_destroy_ah_user on soft-RoCE
# (rxe0) and rv0, C core and Rust core; ib_alloc_xrcd_user and
# ib_dealloc_xrcd_user on rv0, C and Rust (soft-RoCE has no XRC); rv0's
# ucontext, PD, CQ and QP creation (UD, RC), an RC QP's modify to RTS, CQ
# resize, SRQ creation, MW allocation and MR registration;
# "rdma link add ... type rverbs"; loading
# rverbs.ko (these two sampled: their first and last fault points, a few
# between, unless RVERBS_FAULTS=all).  Each case reports its number of fault points and
# fails if there is none.
. "$(dirname "$0")/lib.sh"

FAULT=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/fault_nth
DBG=/sys/kernel/debug

trap 'echo Y >/sys/kernel/debug/failslab/ignore-gfp-wait 2>/dev/null; rdma link del rv0 2>/dev/null; ip link del veth2 2>/dev/null; teardown' EXIT

ktap_print_header
if [ ! -e /proc/thread-self/fail-nth ] || [ ! -d $DBG/failslab ]; then
	ktap_skip_all "no fault injection in this kernel (make check-debug runs this test)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 31

# GFP_KERNEL allocations too (failslab ignores them by default), and each
# injected fault reported in one line, without a stack dump (verbose 1):
# fault_nth reads the kind of each point from it.
echo N >$DBG/failslab/ignore-gfp-wait
for attr in failslab fail_page_alloc fail_usercopy; do
	echo 1 >$DBG/$attr/verbose || ktap_exit_fail_msg "cannot set $attr's verbose"
done

# rv0 before rxe0 on veth0 (rverbs refuses a netdev that soft-RoCE has);
# veth2 for the link added under faults.
# rc=1: RC QPs too.
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" rc=1 && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 && rdma link add rxe0 type rxe netdev veth0 &&
	ip link add veth2 type veth peer name veth3 && ip link set veth2 up ||
	ktap_exit_fail_msg "setup failed"
ping -c 1 -W 2 $IP4_B >/dev/null
PEER=::ffff:$IP4_B

# What must be the same before and after an entry point's run, in bash
# alone but for "rdma res": on the debug kernel under TCG each program
# started costs most of a second, twice per case.
# live NAME CREATED DESTROYED - "NAME live N" from two counters of the Rust
# core (COUNTERS, read by state), or that they are absent (rverbs unloaded,
# for the module-load case).
live() {
	if [ -n "${COUNTERS[$2]:-}" ] && [ -n "${COUNTERS[$3]:-}" ]; then
		echo "$1 live $((COUNTERS[$2] - COUNTERS[$3]))"
	else
		echo "$1 counters absent"
	fi
}

state() {
	local k v l
	local -A COUNTERS=()
	if [ -e $DBG/rverbs/counters ]; then
		while read -r k v _; do
			COUNTERS[$k]=$v
		done <$DBG/rverbs/counters
	fi
	live ah ah_created ah_destroyed
	live xrcd xrcd_allocated xrcd_deallocated
	if [ -e $DBG/rverbs/rv0/resources ]; then
		while IFS= read -r l; do
			echo "$l"
		done <$DBG/rverbs/rv0/resources
	fi
	rdma res show 2>&1
	echo /sys/class/infiniband/*
	while read -r k _; do
		[[ $k == rverbs* ]] && echo "$k"
	done </proc/modules
}

declare -A ERRNOS

# The errno an injected failure must end in, by the kind of the fault
# (fault_nth reads it from the kernel log's report of the fault), as the C
# code gives it: ENOMEM for a failed allocation (failslab, fail_page_alloc,
# or "unreported": an allocation that asked for no warning, __GFP_NOWARN),
# EFAULT for a failed copy from or to the user (fail_usercopy).  EXTRA: an
# errno allowed besides, for any kind; "rdma link add" has ENOBUFS, netlink's
# answer when the request's buffer cannot be allocated (netlink_sendmsg).
EXTRA=
expected_errno() {
	case $1 in
	failslab | fail_page_alloc | unreported) echo ENOMEM ;;
	fail_usercopy) echo EFAULT ;;
	*) echo "(a fault of kind $1)" ;;
	esac
}

# odd_points LINE... - the fault points of fault_nth's output that make a
# case fail: each "# n=K: ..." line but those that end in success or in the
# errno of their fault's kind (or EXTRA), and those that say more ("undoing
# it failed", "no fault injected, yet ...", two faults reported for one).
# A netlink answer lost to an injected failure (netlink_ack() could not
# allocate it: the request's outcome is unknown to the caller, either is
# right, fault_nth.c) is ENOBUFS.
odd_points() {
	local l m
	for l in "$@"; do
		[[ $l == "# n="* ]] || continue
		m=$l
		[[ $l =~ ^#\ n=[0-9]+:\ the\ answer\ was\ lost\ \(ENOBUFS\),\ [^\ ]+\ (exists|does\ not\ exist)$ ]] &&
			m="# n=0: ENOBUFS (failslab)"
		if [[ $m =~ ^#\ n=[0-9]+:\ ([A-Za-z0-9]+)\ \(([a-z_]+)\)$ ]]; then
			[ "${BASH_REMATCH[1]}" = succeeded ] ||
				[ "${BASH_REMATCH[1]}" = "$(expected_errno "${BASH_REMATCH[2]}")" ] ||
				[[ " $EXTRA " == *" ${BASH_REMATCH[1]} "* ]] ||
				echo "$l"
		else
			echo "$l"
		fi
	done
}

# run CASE ARGS... - fault_nth ARGS as one KTAP case named CASE.
run() {
	local desc=$1 before after out rc last points e l i j
	local -a lines n_lines=() odd=() errnos=()
	local -A seen=()
	shift
	before=$(state)
	echo "rverbs-expect: begin alloc-failures ($desc)" >/dev/kmsg
	out=$("$FAULT" "$@" 2>&1)
	rc=$?
	echo "rverbs-expect: end" >/dev/kmsg
	after=$(state)
	mapfile -t lines <<<"$out"
	for l in "${lines[@]}"; do
		[[ $l == "# n="* ]] && n_lines+=("$l")
	done
	mapfile -t odd < <(odd_points "${lines[@]}")
	for l in "${n_lines[@]:$((${#n_lines[@]} > 3 ? ${#n_lines[@]} - 3 : 0))}"; do
		echo "$l"
	done
	last=${lines[-1]}
	ktap_print_msg "$desc: $last"
	points=
	[[ $last =~ :\ ([0-9]+)\ fault\ points ]] && points=${BASH_REMATCH[1]}
	# The errnos, as a sorted set.
	if [[ $last == *"errnos "* ]]; then
		IFS=, read -ra errnos <<<"${last##*errnos }"
		for e in "${errnos[@]}"; do
			seen[$e]=1
		done
	fi
	# Sorted (insertion sort: a handful of names).
	errnos=("${!seen[@]}")
	for ((i = 1; i < ${#errnos[@]}; i++)); do
		e=${errnos[i]}
		for ((j = i - 1; j >= 0; j--)); do
			[[ ${errnos[j]} > $e ]] || break
			errnos[j + 1]=${errnos[j]}
		done
		errnos[j + 1]=$e
	done
	ERRNOS[$desc]=
	for e in "${errnos[@]}"; do
		ERRNOS[$desc]+="$e "
	done
	if [ "$before" != "$after" ]; then
		ktap_print_msg "$desc: left something behind:"
		diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
		rc=1
	fi
	if [ ${#odd[@]} -gt 0 ]; then
		ktap_print_msg "$desc: ${#odd[@]} fault point(s) ended otherwise than in their kind's errno${EXTRA:+ (or $EXTRA)} or success"
		rc=1
	fi
	if [ "$rc" = 0 ] && [ "${points:-0}" -gt 0 ]; then
		ktap_test_pass "$desc: ${points} fault points, all clean"
	else
		for l in "${odd[@]:$((${#odd[@]} > 20 ? ${#odd[@]} - 20 : 0))}"; do
			echo "# $l"
		done
		ktap_test_fail "$desc: ${points:-no} fault points, rc $rc"
	fi
}

# same_errnos A B - the errnos of two runs, as sets, are the same.
same_errnos() {
	ktap_print_msg "errnos: $1: ${ERRNOS[$1]}; $2: ${ERRNOS[$2]}"
	ksft_check "$1 and $2 fail with the same errnos" [ "${ERRNOS[$1]}" = "${ERRNOS[$2]}" ]
}

# The errno check itself: a failed allocation that ended in EFAULT or
# EINVAL, a failed copy in ENOMEM, a fault of no known kind, two faults for
# one, an undo that failed are flagged; ENOMEM of an allocation (reported
# or not), EFAULT of a copy and success are not; a lost netlink answer only
# where ENOBUFS is allowed.
planted=$(odd_points "# n=1: ENOMEM (failslab)" "# n=2: EFAULT (failslab)" "# n=3: EFAULT (fail_usercopy)" \
	"# n=4: undoing it failed: EIO" "# n=5: succeeded (fail_page_alloc)" \
	"# about 5 fault points; all of the first 4 and the last 1" \
	"# n=6: the answer was lost (ENOBUFS), rvf exists" "# n=7: ENOMEM (fail_usercopy)" \
	"# n=8: ENOMEM (unreported)" "# n=9: ENOMEM (nameless)" "# n=10: EINVAL (fail_page_alloc)" \
	"# n=11: 2 faults reported for one armed" "# n=12: ENOMEM (fail_page_alloc)")
planted_nl=$(EXTRA=ENOBUFS odd_points "# n=1: the answer was lost (ENOBUFS), rvf exists" \
	"# n=2: the answer was lost (ENOBUFS), rvf does not exist" "# n=3: ENOBUFS (failslab)" \
	"# n=4: EINVAL (failslab)")
ksft_check "the errno check flags a fault point ending otherwise than in its kind's errno, a failed undo or a lost answer where ENOBUFS is not allowed, and only those" \
	test "$planted" = $'# n=2: EFAULT (failslab)\n# n=4: undoing it failed: EIO\n# n=6: the answer was lost (ENOBUFS), rvf exists\n# n=7: ENOMEM (fail_usercopy)\n# n=9: ENOMEM (nameless)\n# n=10: EINVAL (fail_page_alloc)\n# n=11: 2 faults reported for one armed' \
	-a "$planted_nl" = '# n=4: EINVAL (failslab)'

for dev in rxe0 rv0; do
	sgid=$(gid_index $dev ::ffff:$IP4_A) || ktap_exit_fail_msg "no IPv4 RoCE v2 GID on $dev"
	for core in C Rust; do
		if [ $core = Rust ]; then
			takeover_on || ktap_exit_fail_msg "takeover_on failed"
		fi
		run "create_user_ah $dev [$core]" ah $dev "$sgid" $PEER
		run "destroy_ah_user $dev [$core]" destroy_ah $dev "$sgid" $PEER
		if [ $dev = rv0 ]; then
			run "alloc_xrcd_user $dev [$core]" xrcd $dev
			run "dealloc_xrcd_user $dev [$core]" close_xrcd $dev
		fi
		if [ $core = Rust ]; then
			takeover_off || ktap_exit_fail_msg "takeover_off failed"
		fi
	done
	same_errnos "create_user_ah $dev [C]" "create_user_ah $dev [Rust]"
	same_errnos "destroy_ah_user $dev [C]" "destroy_ah_user $dev [Rust]"
done
same_errnos "alloc_xrcd_user rv0 [C]" "alloc_xrcd_user rv0 [Rust]"
same_errnos "dealloc_xrcd_user rv0 [C]" "dealloc_xrcd_user rv0 [Rust]"

run "rv0 ucontext" ucontext rv0
run "rv0 alloc_pd" pd rv0
# A CQ: its ring (vmalloc_user), its mmap entry, the response.  (Soft-RoCE's
# CQ, QP and MR error paths were the first runs' reference, all clean; they
# are the C driver's code, and left out for the time CI has.)
run "rv0 create_cq" cq rv0
# Resizing it from 255 to 511 entries: the new ring, its mmap entry, the
# response; after a failure the CQ must be as it was (resized again, then
# destroyed).
run "rv0 resize_cq" resize_cq rv0
# A UD QP: ib_core's part (the object, restrack, security), the driver's
# (its number, two rings, two mmap entries, the response).
run "rv0 create_qp" qp rv0
# An RC QP: the driver's copy of the send ring, what it keeps of each work
# request in flight, the responder's queue of answers and its atomics.
run "rv0 create_qp (RC)" rc_qp rv0
# That RC QP modified from RESET to INIT, RTR and RTS: ib_core's
# resolution of the destination MAC (a route, the neighbour) and the
# driver's state for the path; a step that fails leaves the QP in the state
# before it, from which the rest of the way must work.
sgid=$(gid_index rv0 ::ffff:$IP4_A)
run "rv0 modify_qp (RC) to RTS" modify_qp rv0 "$sgid" $PEER
# A shared receive queue: ib_core's part, the driver's (its number, the
# ring, its mmap entry, the response).
run "rv0 create_srq" srq rv0
# A memory window (type 2): ib_core's part (the object), the driver's (its
# index, its entry in the device's table of windows).
run "rv0 alloc_mw" mw rv0
# A memory region of 4 pages: ib_core's part (the object, restrack), the
# driver's (its index, the pinned pages and their list); nothing may stay
# pinned (VmPin) after a failure.
run "rv0 reg_mr" mr rv0
# These two have hundreds of fault points, almost all in the driver core's
# sysfs code (device_add of the IB device and its ports, of the module),
# at seconds each on the debug kernel, and rverbs' own work last (the
# device's port binding and debugfs files; the module's init): link add
# (about 2000 points) every one of the first 8 and the last 16, every
# 512th between; the module load (about 450) the first 4 and the last 24,
# every 192nd between; unless RVERBS_FAULTS=all.
sparse=(-a 8 -e 512 -l 16)
[ "${RVERBS_FAULTS:-}" = all ] && sparse=()
EXTRA=ENOBUFS run "rdma link add rvf type rverbs" "${sparse[@]}" link rvf rverbs veth2
sparse=(-a 4 -e 192 -l 24)
[ "${RVERBS_FAULTS:-}" = all ] && sparse=()

rdma link del rxe0
rdma link del rv0 && rmmod rverbs || ktap_exit_fail_msg "unloading rverbs failed"
# The module's trace events are registered by the kernel's tracing code as
# the module comes (trace_module_notify); a failed allocation there makes
# 7.2's trace-event code WARN (event_define_fields, then event_file_put as
# the half-made event goes), whatever the module. That code is not rverbs':
# the fault points under it are left out of injection (the fault attributes'
# stack filter, CONFIG_FAULT_INJECTION_STACKTRACE_FILTER), so that no
# warning needs excusing.
# Two static functions of the kernel are named trace_module_notify (trace.c's,
# for the eval maps, and trace_events.c's): the one meant is the one nearest
# to event_create_dir, of the same file.  Until 2026-12-03 the first in
# address order was taken, trace.c's, and a fault point under the events'
# registration was still injected now and then (their number varies from
# run to run), and its WARNING failed the lane.
reject_range() { # SYMBOL NEAR - "START END" of the SYMBOL nearest to NEAR
	local kind a b near='' best='' d bd
	local -a ranges=()
	while read -r kind a b; do
		if [ "$kind" = N ]; then near=$((16#$a)); else ranges+=("$a $b"); fi
	done < <(sort /proc/kallsyms | awk -v sym="$1" -v near="$2" '$2 ~ /^[tT]$/ {
		if (p != "") { print "R", p, $1; p = "" }
		if ($3 == sym) p = $1
		if ($3 == near) print "N", $1 }')
	[ -n "$near" ] || return 1
	for a in "${ranges[@]}"; do
		d=$(((16#${a% *}) - near))
		[ $d -lt 0 ] && d=$((-d))
		if [ -z "$best" ] || [ $d -lt "$bd" ]; then best=$a bd=$d; fi
	done
	[ -n "$best" ] && echo "$best"
}
read -r rej_start rej_end < <(reject_range trace_module_notify event_create_dir)
[ -n "$rej_start" ] && [ -n "$rej_end" ] && [ "$rej_start" != 0000000000000000 ] ||
	ktap_exit_fail_msg "trace_module_notify or event_create_dir is not in /proc/kallsyms"
for attr in failslab fail_page_alloc fail_usercopy; do
	echo "0x$rej_start" >$DBG/$attr/reject-start && echo "0x$rej_end" >$DBG/$attr/reject-end ||
		ktap_exit_fail_msg "cannot set $attr's stack filter"
done
ktap_print_msg "trace_events.c's trace_module_notify (0x$rej_start-0x$rej_end) left out of injection"
run "rverbs.ko load" "${sparse[@]}" module "$RVERBS_KO"
for attr in failslab fail_page_alloc fail_usercopy; do
	echo 0 >$DBG/$attr/reject-start
	echo 0 >$DBG/$attr/reject-end
done
[ -d $DBG/rverbs ] && ktap_print_msg "rverbs' debugfs directory is left"

echo Y >$DBG/failslab/ignore-gfp-wait
for attr in failslab fail_page_alloc fail_usercopy; do
	echo 0 >$DBG/$attr/verbose
done
ktap_finished
