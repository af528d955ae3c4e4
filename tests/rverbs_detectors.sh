#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug lane's detectors catch what they are there for: a planted bug of
# each kind (test_modules/rv_planted.c) must be reported by the kernel's
# checker and flagged by the lane's own log check (scripts/logcheck.sh, the
# one vm.sh runs on the whole log).  Debug lane only, and its last test:
# lockdep turns itself off after its first report (and after KASAN's), and
# KASAN and the sleep-in-atomic check taint the kernel.
#
# Each bug runs in a window of the kernel log opened with
# "rverbs-expect: begin detector BUG (tainted N)"; the lane skips the window
# (this test checks it) and judges the kernel's taint as it was when the
# first window opened.  kmemleak: the leaks of the tests before this one are
# scanned for and saved for vm.sh first, the planted one is cleared after.
. "$(dirname "$0")/lib.sh"

PLANTED=${RVERBS_KAH%/*}/rv_planted.ko
KMEMLEAK=/sys/kernel/debug/kmemleak
LOGCHECK=$RVERBS_TOP/scripts/logcheck.sh
# bug, then what its report must show (an extended regular expression)
# Lockdep first: KASAN's report turns it off (add_taint with
# LOCKDEP_NOW_UNRELIABLE), and so does its own first report.
BUGS=(
	abba 'possible circular locking dependency detected'
	atomic_sleep 'BUG: sleeping function called from invalid context'
	hang 'INFO: task insmod:[0-9]+ blocked for more than [0-9]+ seconds'
	uaf 'KASAN: (slab-)?use-after-free'
	leak 'unreferenced object'
)

# A planted leak in kmemleak's report: the hex dump of its first bytes, or
# its allocation's backtrace.
PLANTED_LEAK='rv_planted leak!|rv_planted_leak_work'

ktap_print_header
if [ ! -e /proc/lockdep ] || [ ! -w $KMEMLEAK ] ||
	! dmesg | grep -q 'KernelAddressSanitizer initialized'; then
	ktap_skip_all "not the debug kernel (make check-debug runs this test)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan $((${#BUGS[@]} / 2 + 2))

ksft_check "the kernel reports hung tasks, soft lockups and RCU stalls" hang_detectors_on

ksft_check "rv_planted.ko is built for this kernel" test -e "$PLANTED"

# What the tests before this one leaked is theirs: scan and save it for
# vm.sh now, before a planted leak joins it, sorted as guest.sh sorts the
# final report (scripts/kmemleak-sort.awk: ib_uverbs' known leak under
# fault injection, which rverbs_faults.sh may have caused before this
# test, apart). The scans' summary line ("kmemleak: N new suspected memory
# leaks") is no finding of its own: the objects are judged one by one
# (logcheck.sh, after the marker).
kmemleak_save() {
	local out=${RVERBS_GUEST_OUT:-/tmp}
	echo "rverbs-expect: kmemleak-save" >/dev/kmsg
	echo scan >$KMEMLEAK
	sleep 6
	echo scan >$KMEMLEAK
	awk -v planted="$out/kmemleak-planted.log" -v known="$out/kmemleak-known.log" \
		-f "$RVERBS_TOP/scripts/kmemleak-sort.awk" <$KMEMLEAK >>"$out/kmemleak.log"
	echo clear >$KMEMLEAK
}

window=$(mktemp)
for ((i = 0; i < ${#BUGS[@]}; i += 2)); do
	bug=${BUGS[i]}
	want=${BUGS[i + 1]}
	[ "$bug" = leak ] && kmemleak_save
	kmsg_mark
	echo "rverbs-expect: begin detector $bug (tainted $(cat /proc/sys/kernel/tainted))" >/dev/kmsg
	ok=1
	if [ "$bug" = hang ]; then
		# The detector's timeout (120 s, as Debian's kernel) made short
		# for the window: insmod sleeps 10 s in D state, reported once
		# it has slept 2 s across two of the detector's checks.
		hung_timeout=$(cat /proc/sys/kernel/hung_task_timeout_secs)
		hung_warnings=$(cat /proc/sys/kernel/hung_task_warnings)
		echo 2 >/proc/sys/kernel/hung_task_timeout_secs
		echo 1 >/proc/sys/kernel/hung_task_warnings
		insmod "$PLANTED" bug=hang hang_secs=10 || ok=0
		echo "$hung_timeout" >/proc/sys/kernel/hung_task_timeout_secs
		echo "$hung_warnings" >/proc/sys/kernel/hung_task_warnings
	else
		insmod "$PLANTED" bug="$bug" || ok=0
	fi
	if [ "$bug" = leak ]; then
		# An object is reported once it is older than 5 s and a scan
		# found no pointer to it; scan up to 8 times.
		kmemleak_report=
		for ((scan = 0; scan < 8; scan++)); do
			sleep 6
			echo scan >$KMEMLEAK
			kmemleak_report=$(cat $KMEMLEAK)
			grep -Eq "$PLANTED_LEAK" <<<"$kmemleak_report" && break
		done
		# The planted objects that a stale pointer still hid are
		# reported by later scans: scan on, inside the window, until a
		# scan finds no more of them (at most 5), so that none is
		# reported after it.
		found_leaks=$(grep -c '^unreferenced object' <<<"$kmemleak_report")
		for ((scan = 0; scan < 5; scan++)); do
			sleep 6
			echo scan >$KMEMLEAK
			now=$(cat $KMEMLEAK)
			[ "$(grep -c '^unreferenced object' <<<"$now")" -gt "$found_leaks" ] || break
			kmemleak_report=$now
			found_leaks=$(grep -c '^unreferenced object' <<<"$now")
		done
		# The lane reads kmemleak's report from its file; here it goes
		# through the same check as the kernel log.
		echo clear >$KMEMLEAK
	else
		kmemleak_report=
	fi
	rmmod rv_planted 2>/dev/null || ok=0
	echo "rverbs-expect: end" >/dev/kmsg
	{
		kmsg_since
		printf '%s\n' "$kmemleak_report"
	} >"$window"
	# The window holds the planted report and nothing else
	# (scripts/detector-window.sh).
	if ! judged=$("$RVERBS_TOP/scripts/detector-window.sh" "$bug" "$want" "$window"); then
		tail -n +2 <<<"$judged" | sed 's/^/# /'
		found=0
	else
		found=$judged
	fi
	# Any object of the leak window's report that is not a planted one is a
	# leak of the run: kept for vm.sh, which fails on it.
	if [ "$bug" = leak ]; then
		awk '/^unreferenced object/ { flush(); rec = $0 "\n"; next }
			{ rec = rec $0 "\n" }
			function flush() { if (rec != "" && rec !~ /rv_planted leak!|rv_planted_leak_work/) printf "%s", rec; rec = "" }
			END { flush() }' <<<"$kmemleak_report" >>"${RVERBS_GUEST_OUT:-/tmp}/kmemleak.log"
	fi
	# The leak reported must be a planted one (its first bytes, or
	# where it was allocated).
	if [ "$bug" = leak ] && ! grep -Eq "$PLANTED_LEAK" <<<"$kmemleak_report"; then
		ktap_print_msg "leak: kmemleak did not report a planted object; it reported:"
		head -n 40 <<<"$kmemleak_report" | sed 's/^/# /'
		found=0
	fi
	ktap_print_msg "$bug: the lane's check flags $found line(s) matching '$want'"
	if [ "$ok" = 1 ] && [ "$found" -gt 0 ]; then
		ktap_test_pass "planted $bug is reported and caught"
	else
		"$LOGCHECK" --all "$window" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "planted $bug is reported and caught"
	fi
done
rm -f "$window"
ktap_finished
