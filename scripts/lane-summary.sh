#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lane-summary.sh [--floor N] OUT BOOT... - a lane's summary, from what its
# boots left in OUT (scripts/check.sh): each boot's KTAP document
# (OUT/ktap-BOOT.log), vm.sh's exit status (OUT/BOOT.rc) and, for a boot
# that failed, its reason (why), its kernel log's reports (logcheck.txt)
# and the end of its kernel log (log-end.txt) in the boot's VM directory.
#
# Writes OUT/ktap.log (the documents in the order given) and OUT/summary,
# prints the summary and exits non-zero when anything failed.  A boot that
# failed while every case passed (its kernel log, kmemleak or taint check)
# is one failed case; a boot that died leaves its suite unfinished, which
# fails already, and its reason is listed with the failures: a CI log that
# keeps only its end still says which test a dead guest was running.
# scripts/harness-selftest.sh plants both.
set -uo pipefail

floor=()
if [ "${1:-}" = --floor ]; then
	floor=(--floor "${2:?usage: lane-summary.sh [--floor N] OUT BOOT...}")
	shift 2
fi
out=${1:?usage: lane-summary.sh [--floor N] OUT BOOT...}
shift
boots=("$@")
[ ${#boots[@]} -gt 0 ] || { echo "usage: lane-summary.sh [--floor N] OUT BOOT..." >&2; exit 2; }

# vm_dir BOOT - where vm.sh left that boot's output (scripts/check.sh).
vm_dir() {
	case $1 in
	suite | main) echo "$out/vm" ;;
	side) echo "$out/vm-side" ;;
	second) echo "$out/vm-second" ;;
	modsig) echo "$out/modsig/vm" ;;
	*) echo "$out/$1" ;;
	esac
}

: >"$out/ktap.log"
vm_rc=0 bad=()
for b in "${boots[@]}"; do
	if [ -s "$out/ktap-$b.log" ]; then
		cat "$out/ktap-$b.log" >>"$out/ktap.log"
	else
		# A boot that never ran or wrote nothing: not finished.
		printf 'TAP version 13\n1..1\n' >>"$out/ktap.log"
	fi
	rc=$(cat "$out/$b.rc" 2>/dev/null || echo 1)
	if [ "$rc" -ne 0 ]; then
		bad+=("$b")
		[ "$vm_rc" -ne 0 ] || vm_rc=$rc
	fi
done

# RVERBS_EXPECTED_SKIPS: another list of expected skips (the harness
# self-test's).
"$(dirname "$0")/ktap-summary.sh" "${floor[@]}" "$out/ktap.log" ${RVERBS_EXPECTED_SKIPS:+"$RVERBS_EXPECTED_SKIPS"} \
	>"$out/summary"
sum_rc=$?

# reasons - each failed boot's reason (vm.sh) and its kernel log's
# reports, each named with its test, and the end of the log of a guest
# that died.
reasons() {
	local b d
	for b in "${bad[@]}"; do
		d=$(vm_dir "$b")
		echo "    $b boot (exit $(cat "$out/$b.rc" 2>/dev/null || echo 1), $d):"
		[ -s "$d/why" ] && sed 's/^/      /' "$d/why"
		[ -s "$d/logcheck.txt" ] && head -n 8 "$d/logcheck.txt" | sed 's/^/      /'
		if [ -s "$d/log-end.txt" ]; then
			echo "      the end of its kernel log:"
			sed 's/^/        /' "$d/log-end.txt"
		fi
	done
}

if [ "$vm_rc" -ne 0 ]; then
	last=$(tail -n 1 "$out/summary")
	if [[ ! $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		echo "lane-summary.sh: no closing line in $out/summary" >&2
		exit 2
	fi
	passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
	sed -i '$d' "$out/summary"
	{
		if [ "$sum_rc" -eq 0 ]; then
			# Every case passed, yet a VM run failed: its kernel log,
			# kmemleak or taint check.  That is a failed case.
			echo "failed:"
			echo "  vm: guest kernel log, kmemleak or taint check"
			failed=1
		else
			echo "  vm: a boot failed:"
		fi
		reasons
		echo "$passed passed, $failed failed, $skipped skipped"
	} >>"$out/summary"
	sum_rc=1
fi
cat "$out/summary"
exit "$sum_rc"
