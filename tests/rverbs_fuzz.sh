#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Seeded differential fuzzing of the uverbs AH and XRCD verbs, and of
# the modify of the UD QPs they use (uverbs_fuzz.c; the modify is the Rust
# core's too since the takeover patches ib_modify_qp_with_udata): for each
# device, soft-RoCE's rxe0 (the C reference
# driver) and rv0, and for each seed, the same COUNT random uverbs commands
# run twice, with ib_core's C core (takeover off) and with the Rust core
# (takeover on), and the two outputs, one outcome per command ("ok" or the
# errno), must be identical line for line.  One KTAP case per device and
# seed, which also requires of each of its two runs: exit status 0 and
# "# live at end: 0" (everything the kernel accepted was destroyed again,
# nothing answered against the fuzzer's bookkeeping); afterwards the Rust
# core's AH and XRCD counters balance, and rv0's debugfs resources (nothing
# live) and ib_core's resource tracking ("rdma res") are as before.  With
# the C core no counter of the Rust core may move (proof that C ran); with
# the Rust core ah_created must move, by at least the AHs the run created,
# and on rv0 (which has XRC) xrcd_allocated too when an XRCD was opened.
# The device's GID table must not change during its runs: the fuzzer
# chooses source GIDs by it, and its GID queries (IOCTL_QUERY_GID_ENTRY)
# are answered from it.
# A few of each run's CREATE_AHs go to a destination that never answers
# (uverbs_fuzz -w), and wait for its neighbour (ETIMEDOUT after 1000 ms
# with the IPv4 source GID); each run must have sent some.
# Both cores could be wrong alike: each run also checks a sample of its
# CREATE_AHs against the C contract itself (uverbs_fuzz.c:ah_oracle, an
# oracle of neither core), which must have judged some; a last case runs
# the oracle told wrong (-O) and must fail.
#
# Seeds 1 2 3 and a random one, new every run, 20000 commands each (500 on
# the debug lane).  SEED="S..." and FUZZ_COUNT=N override them: every case
# names its seed, and a failing case prints the first lines
# that differ and the SEED= that reproduces it, e.g. after make check:
#   make vm CMD='SEED=7 RVERBS_TEST_BIN=$PWD/build/check/tests tests/rverbs_fuzz.sh'
# and, with this test's set-up in place, one run that also shows what each
# command sent:
#   uverbs_fuzz -v -n COUNT -s SEED -w ::ffff:192.0.2.99 DEV SGID_INDEX GID...
. "$(dirname "$0")/lib.sh"

FUZZ=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/uverbs_fuzz
DBG=/sys/kernel/debug
DEVS=(rxe0 rv0)
# Three fixed seeds, and one new every run (logged, for replay with SEED=).
read -ra SEEDS <<<"${SEED:-1 2 3 $(od -An -N4 -tu4 /dev/urandom)}"
if [ "${RVERBS_LANE:-}" = debug ]; then
	COUNT=${FUZZ_COUNT:-500}
	RUN_TIMEOUT=900
else
	COUNT=${FUZZ_COUNT:-20000}
	RUN_TIMEOUT=300
fi
OUT=$(mktemp -d /tmp/rverbs_fuzz.XXXXXX) || exit 1

trap 'rm -rf "$OUT"; rdma link del rv0 2>/dev/null; teardown' EXIT

ktap_print_header
[ -x "$FUZZ" ] || ktap_exit_fail_msg "$FUZZ not built"
[ ${#SEEDS[@]} -gt 0 ] || ktap_exit_fail_msg "SEED names no seed"
[[ $COUNT =~ ^[0-9]+$ ]] || ktap_exit_fail_msg "FUZZ_COUNT=$COUNT is not a number"
ktap_set_plan $((${#DEVS[@]} * ${#SEEDS[@]} + 1))
ktap_print_msg "seeds ${SEEDS[*]} (SEED=\"${SEEDS[*]}\" runs these again)"

# rv0 before rxe0 on veth0 (rverbs refuses a netdev that soft-RoCE has).
# rv0 with RoCE v1 GIDs too: the fuzzer's AHs from them take the verbs
# core's RoCE v1 path.
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" roce_v1=1 && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 && rdma link add rxe0 type rxe netdev veth0 ||
	ktap_exit_fail_msg "setup failed"
takeover_off || ktap_exit_fail_msg "the takeover is on and does not switch off"
ping -c 1 -W 2 $IP4_B >/dev/null

# gid_table DEV - DEV's port 1 GID table: each valid entry's type and GID.
gid_table() {
	local d=/sys/class/infiniband/$1/ports/1

	(cd "$d"/gid_attrs/types && grep -H . -- * 2>/dev/null)
	(cd "$d"/gids && grep -H . -- *) | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$'
}

# veth0's link-local address comes with the link, and its GIDs a little
# later: wait until both GID tables have it and stay the same for a second,
# so that they do not change under the runs (the fuzzer picks source GIDs
# by them).
own_ll() {
	ip -6 -br addr show dev veth0 scope link | awk '{ sub("/.*", "", $3); print $3 }'
}
gids_settled() {
	local before

	before=$(gid_table rxe0; gid_table rv0)
	sleep 1
	[ "$before" = "$(gid_table rxe0; gid_table rv0)" ]
}
wait_until 30 eval '[ -n "$(own_ll)" ]' || ktap_exit_fail_msg "veth0 has no link-local address"
LL=$(own_ll)
for dev in "${DEVS[@]}"; do
	wait_until 30 gid_index "$dev" "$LL" >/dev/null ||
		ktap_exit_fail_msg "$dev has no GID for $LL"
done
wait_until 30 gids_settled || ktap_exit_fail_msg "the GID tables keep changing"

# The source GID the fuzzer uses mostly (veth0's IPv4 address), and
# destinations that resolve at once: the peer (which answers ARP and ND),
# our own address, multicast.
declare -A SGIDS
for dev in "${DEVS[@]}"; do
	SGIDS[$dev]=$(gid_index "$dev" "::ffff:$IP4_A") ||
		ktap_exit_fail_msg "no IPv4 RoCE v2 GID on $dev"
done
GIDS=("::ffff:$IP4_B" "::ffff:$IP4_A" "$IP6_B" ::ffff:239.1.1.1 ff0e::1:2:3)
# And one that waits: an on-link address nobody has (uverbs_fuzz -w: a
# few CREATE_AHs a run go there, ib_core's 1000 ms, then ETIMEDOUT).
SILENT=::ffff:192.0.2.99

# What a run must leave as it found it.
state() {
	cat $DBG/rverbs/rv0/resources
	rdma res show 2>&1
}

# oks FILE CMD - the commands CMD of a run that succeeded.
oks() {
	sed -n "s/^# $2: \([0-9]*\) ok.*/\1/p" "$1" | grep . || echo 0
}

declare -A PROBLEMS

# problem DEV SEED TEXT - something wrong with a run of the case DEV SEED.
problem() {
	PROBLEMS[$1/$2]+="$3"$'\n'
}

# fuzz DEV CORE SEED - one run of the fuzzer; its output in
# $OUT/DEV.SEED.CORE, anything wrong in PROBLEMS[DEV/SEED].
fuzz() {
	local dev=$1 core=$2 seed=$3 f=$OUT/$1.$3.$2 before after c0 c1 rc
	local ahs xrcds ah_ok x_ok checked silent

	before=$(state)
	c0=$(counters_all)
	timeout -k 10 $RUN_TIMEOUT "$FUZZ" -n "$COUNT" -s "$seed" -w $SILENT "$dev" "${SGIDS[$dev]}" \
		"${GIDS[@]}" >"$f" 2>"$f.err"
	rc=$?
	c1=$(counters_all)
	after=$(state)

	ahs=$(($(counter_in "$c1" ah_created) - $(counter_in "$c0" ah_created)))
	xrcds=$(($(counter_in "$c1" xrcd_allocated) - $(counter_in "$c0" xrcd_allocated)))
	ah_ok=$(oks "$f" CREATE_AH)
	x_ok=$(oks "$f" OPEN_XRCD)
	checked=$(sed -n 's/^# CREATE_AH checked against the contract: //p' "$f")
	silent=$(sed -n 's/^# CREATE_AH to the destination that never answers: //p' "$f")
	ktap_print_msg "$dev seed $seed [$core]: exit $rc, $(grep -c '^[0-9]' "$f") commands," \
		"$ah_ok AHs and $x_ok XRCDs created, ${checked:-no} CREATE_AH checked against the contract," \
		"${silent:-no} sent to the destination that never answers;" \
		"Rust core: +$ahs AHs, +$xrcds XRCDs; digest $(sed -n 's/^# digest //p' "$f")"
	# The fuzzer's own oracle (uverbs_fuzz.c:ah_oracle) must have had
	# commands to judge: one that judged none proves nothing.
	[[ ${checked:-0} =~ ^[1-9][0-9]*$ ]] ||
		problem "$dev" "$seed" "[$core] no CREATE_AH was checked against the contract"
	# Nor one that sent no create to the destination that waits.
	[[ ${silent:-0} =~ ^[1-9][0-9]*$ ]] ||
		problem "$dev" "$seed" "[$core] no CREATE_AH went to the destination that never answers"

	if [ $rc != 0 ]; then
		[ $rc = 124 ] && problem "$dev" "$seed" "[$core] timed out after $RUN_TIMEOUT s"
		problem "$dev" "$seed" "[$core] exit status $rc; its last lines:"
		problem "$dev" "$seed" "$(grep -v '^# [A-Z_]*: ' "$f" | tail -n 5; cat "$f.err")"
	fi
	grep -qx '# live at end: 0' "$f" ||
		problem "$dev" "$seed" "[$core] not \"# live at end: 0\""
	if [ "$before" != "$after" ]; then
		problem "$dev" "$seed" "[$core] left something behind:"
		problem "$dev" "$seed" "$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')"
	fi
	if [ -n "$(awk '$2 != 0' $DBG/rverbs/rv0/resources)" ]; then
		problem "$dev" "$seed" "[$core] rv0 has live objects: $(cat $DBG/rverbs/rv0/resources)"
	fi
	if [ "$(counter_in "$c1" ah_created)" != "$(counter_in "$c1" ah_destroyed)" ] ||
	   [ "$(counter_in "$c1" xrcd_allocated)" != "$(counter_in "$c1" xrcd_deallocated)" ]; then
		problem "$dev" "$seed" "[$core] the Rust core's counters do not balance:
$(grep -E '^(ah|xrcd)_' <<<"$c1" | tr '\n' ' ')"
	fi
	if [ "$core" = C ] && [ "$c0" != "$c1" ]; then
		problem "$dev" "$seed" "[C] the Rust core's counters moved:"
		problem "$dev" "$seed" "$(diff <(echo "$c0") <(echo "$c1") | grep '^[<>]')"
	fi
	if [ "$core" = Rust ]; then
		[ "$ahs" -gt 0 ] && [ "$ahs" -ge "$ah_ok" ] ||
			problem "$dev" "$seed" "[Rust] ah_created moved by $ahs for $ah_ok AHs created"
		if [ "$dev" = rv0 ] && [ "$x_ok" -gt 0 ] && [ "$xrcds" -le 0 ]; then
			problem "$dev" "$seed" "[Rust] xrcd_allocated did not move for $x_ok XRCDs opened"
		fi
	fi
}

# verdict DEV SEED - the KTAP case of DEV and SEED, both runs done.
verdict() {
	local dev=$1 seed=$2 c=$OUT/$1.$2.C rust=$OUT/$1.$2.Rust line

	if ! cmp -s "$c" "$rust"; then
		problem "$dev" "$seed" "C and Rust differ; the first lines that do (< C, > Rust):"
		problem "$dev" "$seed" "$(diff "$c" "$rust" | grep '^[<>]' | head -n 10)"
	fi
	if [ -n "${PROBLEMS[$dev/$seed]}" ]; then
		while IFS= read -r line; do
			[ -n "$line" ] && ktap_print_msg "$line"
		done <<<"${PROBLEMS[$dev/$seed]}"
		ktap_print_msg "reproduce: SEED=$seed FUZZ_COUNT=$COUNT RVERBS_TEST_BIN=$RVERBS_TEST_BIN" \
			"tests/rverbs_fuzz.sh in the VM (make vm CMD=...); what each command sent:" \
			"$FUZZ -v -n $COUNT -s $seed -w $SILENT $dev ${SGIDS[$dev]} ${GIDS[*]}"
		ktap_test_fail "fuzz $dev seed $seed: $COUNT commands, C and Rust identical, nothing left"
	else
		ktap_test_pass "fuzz $dev seed $seed: $COUNT commands, C and Rust identical, nothing left"
	fi
}

for dev in "${DEVS[@]}"; do
	gids_before=$(gid_table "$dev")
	for seed in "${SEEDS[@]}"; do
		fuzz "$dev" C "$seed"
	done
	takeover_on || ktap_exit_fail_msg "takeover_on failed"
	for seed in "${SEEDS[@]}"; do
		fuzz "$dev" Rust "$seed"
	done
	takeover_off || ktap_exit_fail_msg "takeover_off failed"
	if [ "$gids_before" != "$(gid_table "$dev")" ]; then
		for seed in "${SEEDS[@]}"; do
			problem "$dev" "$seed" "$dev's GID table changed during the runs"
		done
	fi
	for seed in "${SEEDS[@]}"; do
		verdict "$dev" "$seed"
	done
done

# The oracle is heard: told the wrong outcome for every CREATE_AH it
# judges (-O), a run must fail on them, and still leave nothing behind.
planted_oracle() {
	local f=$OUT/planted before rc

	before=$(state)
	timeout -k 10 $RUN_TIMEOUT "$FUZZ" -O -n 300 -s 1 rv0 "${SGIDS[rv0]}" "${GIDS[@]}" \
		>"$f" 2>"$f.err"
	rc=$?
	ktap_print_msg "planted: exit $rc, $(grep -c '^# surprise .*: the contract gives' "$f") CREATE_AH against the contract," \
		"$(sed -n 's/^# CREATE_AH checked against the contract: //p' "$f") checked"
	[ $rc = 1 ] && grep -q '^# surprise [0-9]* CREATE_AH: the contract gives' "$f" &&
		grep -qx '# live at end: 0' "$f" && [ "$before" = "$(state)" ]
}
ksft_check "fuzz rv0, the oracle told wrong (-O): the run fails on it and leaves nothing" planted_oracle

ktap_finished
