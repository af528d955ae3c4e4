#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh BUILD_DIR - C core vs Rust core, side by side, in one VM run.
#
# For each case, rdma-core creates and destroys an address handle on rxe0
# COUNT times (tests/ah_probe.c -N), with the takeover off (ib_core's C
# core) and on (the Rust core), alternating over ROUNDS rounds; the median
# time per create+destroy pair of each core and their ratio are printed.
# Both cores see the same inputs; the time includes the system calls.
# Then the same on rv0, rverbs' Rust software device (replacing rxe0 on
# veth0), and the drivers side by side: rxe0 (soft-RoCE, C) against rv0
# (Rust), both under ib_core's C core.
# A benchmark, not a test: it asserts nothing about speed.
. "$(dirname "$0")/../tests/lib.sh"

PROBE=${1:?usage: bench.sh BUILD_DIR}/ah_probe
COUNT=${RVERBS_BENCH_COUNT:-2000}
ROUNDS=${RVERBS_BENCH_ROUNDS:-5}

trap teardown EXIT
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" &&
	ns_setup && rxe_pair_up || { echo "bench: setup failed" >&2; exit 1; }

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# run DEV SGID DGID - ns per create+destroy pair, one round.
run() {
	$PROBE -d "$1" -s "$(gid_index "$1" "$2")" -g "$3" -N "$COUNT" |
		sed -n 's/^bench_ns_per_pair: //p'
}

ratio() {
	awk -v c="$1" -v r="$2" 'BEGIN { printf "%.2fx", c / r }'
}

CASES='unicast IPv4, neighbour valid|::ffff:192.0.2.1|::ffff:192.0.2.2
unicast IPv6, neighbour valid|2001:db8::1|2001:db8::2
local destination|::ffff:192.0.2.1|::ffff:192.0.2.1
multicast (no resolution)|::ffff:192.0.2.1|::ffff:239.1.2.3'

declare -A C_MEDIAN

# table DEV - the cases on DEV, C core against Rust core.
table() {
	local dev=$1 name sgid dgid c r cm rm i
	printf '\n%-44s %12s %12s %8s\n' "$dev: case ($COUNT create+destroy, median of $ROUNDS)" \
		"C ns/pair" "Rust ns/pair" "C/Rust"
	while IFS='|' read -r name sgid dgid; do
		ping -c 1 -W 2 192.0.2.2 >/dev/null 2>&1
		ping -6 -c 1 -W 2 2001:db8::2 >/dev/null 2>&1
		c=()
		r=()
		for ((i = 0; i < ROUNDS; i++)); do
			c+=("$(run "$dev" "$sgid" "$dgid")")
			takeover_on || exit 1
			r+=("$(run "$dev" "$sgid" "$dgid")")
			takeover_off || exit 1
		done
		cm=$(printf '%s\n' "${c[@]}" | median)
		rm=$(printf '%s\n' "${r[@]}" | median)
		if [ -z "$cm" ] || [ -z "$rm" ]; then
			echo "bench: $dev: $name: a run failed" >&2
			exit 1
		fi
		C_MEDIAN[$dev/$name]=$cm
		printf '%-44s %12d %12d %8s\n' "$name" "$cm" "$rm" "$(ratio "$cm" "$rm")"
	done <<<"$CASES"
}

table rxe0
rdma link del rxe0 && rdma link add rv0 type rverbs netdev veth0 ||
	{ echo "bench: rv0 setup failed" >&2; exit 1; }
table rv0

printf '\n%-44s %12s %12s %8s\n' "drivers, C core (medians above)" \
	"rxe0 ns/pair" "rv0 ns/pair" "rxe/rv0"
while IFS='|' read -r name _; do
	printf '%-44s %12d %12d %8s\n' "$name" "${C_MEDIAN[rxe0/$name]}" \
		"${C_MEDIAN[rv0/$name]}" "$(ratio "${C_MEDIAN[rxe0/$name]}" "${C_MEDIAN[rv0/$name]}")"
done <<<"$CASES"
