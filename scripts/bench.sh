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
# Last the data path (tests/ud_many.c, rdma-core's librxe provider on both
# drivers): 64-byte UD messages echoed between two namespaces, soft-RoCE
# (rxe0 <-> rxe1 on veth0/veth1) against rverbs (rvd0 <-> rvd1 on a veth
# pair of their own), alternating over ROUNDS rounds: the round trip with
# one message in flight, and the message rate with 16 QPs a side, each
# with 16 in flight.
# A benchmark, not a test: it asserts nothing about speed; a run whose
# messages were lost, misdelivered or failed stops it with an error.
. "$(dirname "$0")/../tests/lib.sh"

PROBE=${1:?usage: bench.sh BUILD_DIR}/ah_probe
MANY=$1/ud_many
RATE=$1/net_rate
CHURN=$1/verbs_churn
CHURN_COUNT=${RVERBS_BENCH_CHURN:-1000}
COUNT=${RVERBS_BENCH_COUNT:-2000}
ROUNDS=${RVERBS_BENCH_ROUNDS:-5}

trap 'rdma link del rvd0 2>/dev/null; ip netns exec $NS rdma link del rvd1 2>/dev/null; ip link del vethd0 2>/dev/null; ip link del vethu0 2>/dev/null; teardown' EXIT
# max_ah: room on rv0 for the scale case (SCALE live AHs).
SCALE=${RVERBS_BENCH_SCALE:-100000}
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" max_ah=$((SCALE + 1000)) rc=1 &&
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

# RC connection set-up through rdma-core (tests/qp_probe.c -N): create an
# RC QP, INIT, RTR with the path (where ib_core resolves the destination,
# issue 31), RTS, destroy, QP_COUNT times per round, with each core in
# turn; the medians over the rounds of each round's median and 99th
# percentile, of the modify to RTR and of the whole set-up.  The fresh
# neighbour case flushes the neighbour table before each set-up (untimed):
# C's lost wake-up (Documentation/verbs-core.rst) shows in it.
QPROBE=$1/qp_probe
QP_COUNT=${RVERBS_BENCH_QP_COUNT:-200}
QP_FRESH_COUNT=${RVERBS_BENCH_QP_FRESH_COUNT:-20}
RC_CASES='IPv4, neighbour valid|::ffff:192.0.2.1|::ffff:192.0.2.2|
IPv6, neighbour valid|2001:db8::1|2001:db8::2|
IPv4, first connection to a fresh neighbour|::ffff:192.0.2.1|::ffff:192.0.2.2|ip neigh flush dev veth0'

# rc_run DEV SGID DGID PRE COUNT - one round: "rtr_median rtr_p99
# setup_median setup_p99" in ns.
rc_run() {
	local out
	if [ -n "$4" ]; then
		out=$($QPROBE -d "$1" -s "$(gid_index "$1" "$2")" -g "$3" -N "$5" -R "$4")
	else
		out=$($QPROBE -d "$1" -s "$(gid_index "$1" "$2")" -g "$3" -N "$5")
	fi
	awk '/^bench_error/ { exit 1 } { v[$1] = $2 }
		END { print v["bench_rtr_ns_median:"], v["bench_rtr_ns_p99:"],
			v["bench_setup_ns_median:"], v["bench_setup_ns_p99:"] }' <<<"$out"
}

# us NS - NS nanoseconds in microseconds, one decimal.
us() {
	awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }'
}

# rctable DEV - the RC set-up cases on DEV, C core against Rust core.
rctable() {
	local dev=$1 name sgid dgid pre n i k line
	local -a c r
	local -a cm rm
	printf '\n%-44s %10s %10s %7s %10s %10s %7s\n' \
		"$dev: RC set-up (median of $ROUNDS rounds), us" "C RTR" "Rust RTR" "C/Rust" \
		"C set-up" "Rust" "C/Rust"
	while IFS='|' read -r name sgid dgid pre; do
		n=$QP_COUNT
		[ -n "$pre" ] && n=$QP_FRESH_COUNT
		ping -c 1 -W 2 192.0.2.2 >/dev/null 2>&1
		ping -6 -c 1 -W 2 2001:db8::2 >/dev/null 2>&1
		c=()
		r=()
		for ((i = 0; i < ROUNDS; i++)); do
			c+=("$(rc_run "$dev" "$sgid" "$dgid" "$pre" "$n")") || exit 1
			takeover_on || exit 1
			r+=("$(rc_run "$dev" "$sgid" "$dgid" "$pre" "$n")") || exit 1
			takeover_off || exit 1
		done
		# Per field (RTR median, RTR p99, set-up median, set-up p99):
		# the median over the rounds.
		for k in 1 2 3 4; do
			cm[k]=$(printf '%s\n' "${c[@]}" | awk -v k=$k '{ print $k }' | median)
			rm[k]=$(printf '%s\n' "${r[@]}" | awk -v k=$k '{ print $k }' | median)
		done
		for k in 1 2 3 4; do
			[ -n "${cm[k]}" ] && [ -n "${rm[k]}" ] || {
				echo "bench: $dev: RC $name: a run failed" >&2
				exit 1
			}
		done
		for k in 1 3; do
			line+=$(printf ' %10s %10s %7s' "$(us "${cm[k]}")" "$(us "${rm[k]}")" "$(ratio "${cm[k]}" "${rm[k]}")")
		done
		printf '%-44s%s\n' "$name" "$line"
		line=''
		for k in 2 4; do
			line+=$(printf ' %10s %10s %7s' "$(us "${cm[k]}")" "$(us "${rm[k]}")" "$(ratio "${cm[k]}" "${rm[k]}")")
		done
		printf '%-44s%s\n' "  99th percentile" "$line"
		line=''
	done <<<"$RC_CASES"
}

# In the kernel (tests/test_modules/rv_bench_ah.c): ib_core's C core against
# the Rust core on the same inputs, with the two floors beside them (the route
# and neighbour lookups alone; the lookups, the GID entry get/put and the
# driver's own create_ah/destroy_ah), no system call around them.  Its lines
# "LABEL KIND ROUND NS" are in the kernel log; a wrong result (a failed
# create, a MAC the cores and the lookup disagree on) fails the load.
KBENCH=$RVERBS_TOP/tests/test_modules/rv_bench_ah.ko
KREPS=${RVERBS_BENCH_KREPS:-2000}
# The guest writes only under /mnt, the VM's output directory
# (scripts/vm.sh: build/bench/vm on the host); the repository is read-only.
OUT=${RVERBS_BENCH_OUT:-/mnt}
KTSV=$OUT/kernel.tsv
: >"$KTSV"
KCASES='cached_v4|unicast IPv4, neighbour valid|::ffff:192.0.2.1|::ffff:192.0.2.2
cached_v6|unicast IPv6, neighbour valid|2001:db8::1|2001:db8::2
mcast_v4|multicast (no resolution)|::ffff:192.0.2.1|::ffff:239.1.2.3'

# kstats KIND - "median min max" of KIND's lines on standard input ("- - -").
kstats() {
	awk -v k="$1" '$1 == k { print $3 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)], v[1], v[NR]; else print "- - -" }'
}

# kcase NAME DEV SGID DGID [xrcd] - one in-kernel case: a table row, a line
# of $KTSV (name, then median min max of c, rust, lookup and floor, reps).
kcase() {
	local name=$1 dev=$2 sgid=$3 dgid=$4 xrcd=${5:-} idx=0 args out c r l f
	if [ -z "$xrcd" ]; then
		idx=$(gid_index "$dev" "$sgid") || { echo "bench: $dev has no GID $sgid" >&2; exit 1; }
	fi
	args=(netdev=veth0 sgid_index="$idx" label="$name" reps="$KREPS" rounds="$ROUNDS")
	if [ -n "$xrcd" ]; then args+=(xrcd=1); else args+=(dgid="$dgid"); fi
	if ! insmod "$KBENCH" "${args[@]}"; then
		echo "bench: in-kernel $name failed:" >&2
		dmesg | grep 'rv_bench_ah' | tail -n 5 >&2
		exit 1
	fi
	rmmod rv_bench_ah
	out=$(dmesg | sed -n "s/^.*rv_bench_ah: $name //p")
	c=$(kstats c <<<"$out")
	r=$(kstats rust <<<"$out")
	l=$(kstats lookup <<<"$out")
	f=$(kstats floor <<<"$out")
	printf '%s %s %s %s %s %s\n' "$name" "$c" "$r" "$l" "$f" "$KREPS" >>"$KTSV"
	read -r c _ <<<"$c"
	read -r r _ <<<"$r"
	read -r l _ <<<"$l"
	read -r f _ <<<"$f"
	printf '%-44s %10s %10s %10s %10s %7s %7s\n' "$name" "$c" "$r" "$l" "$f" \
		"$(awk -v a="$r" -v b="$c" 'BEGIN { printf "%.3f", a / b }')" \
		"$( [ "$f" = - ] && echo - || awk -v a="$r" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
}

# ktable DEV - the in-kernel cases on DEV (bound to veth0).
ktable() {
	local dev=$1 key name sgid dgid
	printf '\n%-44s %10s %10s %10s %10s %7s %7s\n' \
		"$dev in-kernel ($KREPS pairs, median of $ROUNDS)" "C ns" "Rust ns" "lookup" \
		"floor" "Rust/C" "R/floor"
	ping -c 1 -W 2 192.0.2.2 >/dev/null 2>&1
	ping -6 -c 1 -W 2 2001:db8::2 >/dev/null 2>&1
	while IFS='|' read -r key name sgid dgid; do
		kcase "kernel_ah_${key}_$dev" "$dev" "$sgid" "$dgid"
	done <<<"$KCASES"
}

# The in-kernel modify of a kernel RC QP from INIT to RTR with a path
# (rv_bench_ah.ko qp=1): ib_modify_qp_with_udata with an empty udata, so
# that the core resolves the destination as for a user QP (C with the
# takeover off; the Rust core through the livepatch with it on: "Rust via
# takeover"), and rverbs_modify_qp_with_udata called directly ("Rust"), the
# module loaded once in each mode per round; beside them the lookups alone
# and the floor (the GID entry, the lookups and the driver's modify_qp).
# Soft-RoCE only: rv0 has no kernel QPs yet (issue 30).
KQP_REPS=${RVERBS_BENCH_KQP_REPS:-200}
KQP_CASES='qp_v4|modify to RTR, IPv4, neighbour valid|::ffff:192.0.2.1|::ffff:192.0.2.2
qp_v6|modify to RTR, IPv6, neighbour valid|2001:db8::1|2001:db8::2'

# kqp DEV - the in-kernel QP modify cases on DEV (bound to veth0).
kqp() {
	local dev=$1 key name sgid dgid idx i mode out c r t l f
	printf '\n%-40s %9s %9s %9s %9s %9s %7s %7s\n' \
		"$dev in-kernel ($KQP_REPS modifies, median of $ROUNDS)" "C ns" "Rust ns" \
		"takeover" "lookup" "floor" "Rust/C" "R/floor"
	ping -c 1 -W 2 192.0.2.2 >/dev/null 2>&1
	ping -6 -c 1 -W 2 2001:db8::2 >/dev/null 2>&1
	while IFS='|' read -r key name sgid dgid; do
		idx=$(gid_index "$dev" "$sgid") || { echo "bench: $dev has no GID $sgid" >&2; exit 1; }
		for ((i = 0; i < ROUNDS; i++)); do
			for mode in c rust; do
				if [ $mode = rust ]; then takeover_on || exit 1; fi
				if ! insmod "$KBENCH" qp=1 netdev=veth0 sgid_index="$idx" dgid="$dgid" \
					label="kernel_${key}_${dev}_$mode" reps="$KQP_REPS" rounds=1; then
					echo "bench: in-kernel $key ($mode) failed:" >&2
					dmesg | grep 'rv_bench_ah' | tail -n 5 >&2
					exit 1
				fi
				rmmod rv_bench_ah
				if [ $mode = rust ]; then takeover_off || exit 1; fi
			done
		done
		# "MODE KIND ROUND NS": kind "c" is ib_core's function, C with
		# the takeover off, Rust through the livepatch with it on.
		out=$(dmesg | sed -n "s/^.*rv_bench_ah: kernel_${key}_${dev}_//p")
		c=$(awk '$1 == "c" && $2 == "c" { print $4 }' <<<"$out" | median)
		t=$(awk '$1 == "rust" && $2 == "c" { print $4 }' <<<"$out" | median)
		r=$(awk '$2 == "rust" { print $4 }' <<<"$out" | median)
		l=$(awk '$2 == "lookup" { print $4 }' <<<"$out" | median)
		f=$(awk '$2 == "floor" { print $4 }' <<<"$out" | median)
		printf '%-40s %9s %9s %9s %9s %9s %7s %7s\n' "$name" "$c" "$r" "$t" "$l" "$f" \
			"$(awk -v a="$r" -v b="$c" 'BEGIN { printf "%.3f", a / b }')" \
			"$(awk -v a="$r" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
	done <<<"$KQP_CASES"
}

# churn DEV - the medians of ROUNDS verbs_churn runs on DEV: a 4 KiB MR
# registered and deregistered, a UD QP created and destroyed (ns per
# pair), into CHURN_MR[DEV] and CHURN_QP[DEV].
declare -A CHURN_MR CHURN_QP
churn() {
	local i out m=() q=()
	for ((i = 0; i < ROUNDS; i++)); do
		out=$("$CHURN" "$1" "$CHURN_COUNT") || { echo "bench: verbs_churn $1 failed" >&2; exit 1; }
		m+=("$(awk '$1 == "mr_ns_per_pair" { print $2 }' <<<"$out")")
		q+=("$(awk '$1 == "qp_ns_per_pair" { print $2 }' <<<"$out")")
	done
	CHURN_MR[$1]=$(printf '%s\n' "${m[@]}" | median)
	CHURN_QP[$1]=$(printf '%s\n' "${q[@]}" | median)
}

table rxe0
ktable rxe0
churn rxe0
rctable rxe0
kqp rxe0
rdma link del rxe0 && rdma link add rv0 type rverbs netdev veth0 ||
	{ echo "bench: rv0 setup failed" >&2; exit 1; }
table rv0
ktable rv0
rctable rv0
kcase xrcd_rv0 rv0 - - xrcd
churn rv0

# pct P - the P-th percentile (nearest rank) of the numbers on standard input.
pct() {
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int((p * NR + 99) / 100); print v[i < 1 ? 1 : i] }'
}

# kfirst NAME DEV SGID DGID N - the first AH to N fresh destinations
# (DGID, DGID+1, ...: the peer owns them, nothing has resolved them yet),
# C and Rust alternately; ns per create, the ARP/ND round trip included.
kfirst() {
	local name=$1 dev=$2 sgid=$3 dgid=$4 n=$5 out c r k
	insmod "$KBENCH" netdev=veth0 sgid_index="$(gid_index "$dev" "$sgid")" dgid="$dgid" \
		label="$name" first="$n" || {
		echo "bench: in-kernel $name failed:" >&2
		dmesg | grep 'rv_bench_ah' | tail -n 5 >&2
		exit 1
	}
	rmmod rv_bench_ah
	out=$(dmesg | sed -n "s/^.*rv_bench_ah: $name //p")
	# Every AH's time, a timeout's too (the time the caller waited for it).
	for k in c r; do
		local kind=c v
		[ $k = r ] && kind=rust
		v=$(awk -v k=$kind '$1 == k "_first" || $1 == k "_first_timeout" { print $3 }' <<<"$out")
		printf -v "$k" '%s %s %s %s %s' "$(pct 50 <<<"$v")" "$(pct 1 <<<"$v")" \
			"$(pct 100 <<<"$v")" "$(pct 99 <<<"$v")" \
			"$(awk -v k=$kind '$1 == k "_first_timeout"' <<<"$out" | wc -l)"
	done
	read -r cm cmin cmax c99 cto <<<"$c"
	read -r rm rmin rmax r99 rto <<<"$r"
	printf '%s %s %s %s %s %s %s - - - - - - %s c_p99_ns=%s rust_p99_ns=%s c_timeouts=%s rust_timeouts=%s\n' \
		"$name" "$cm" "$cmin" "$cmax" "$rm" "$rmin" "$rmax" $((n / 2)) "$c99" "$r99" \
		"$cto" "$rto" >>"$KTSV"
	printf '%-44s %10s %10s %10s %10s %7s %3s %3s\n' "$name" "$cm" "$rm" "$c99" "$r99" \
		"$(awk -v a="$rm" -v b="$cm" 'BEGIN { printf "%.4f", a / b }')" "$cto" "$rto"
}

printf '\n%-44s %10s %10s %10s %10s %7s %3s %3s\n' "first AH to a fresh neighbour (ns, 50 each)" \
	"C median" "Rust med" "C p99" "Rust p99" "Rust/C" "C t" "R t"
{
	seq -f 'addr add 192.0.2.%g/24 dev veth1' 100 199
	# 2001:db8::100 to 2001:db8::163: the module counts the last byte up.
	for i in $(seq 0 99); do printf 'addr add 2001:db8::1%02x/64 dev veth1 nodad\n' "$i"; done
} | ip -n $NS -batch - || { echo "bench: fresh peer addresses failed" >&2; exit 1; }
kfirst first_ah_unresolved_v4 rv0 ::ffff:192.0.2.1 ::ffff:192.0.2.100 100
kfirst first_ah_unresolved_v6 rv0 2001:db8::1 2001:db8::100 100

# The scale case: SCALE live AHs on rv0, made in batches of 10,000 by each
# core in turn, SROUNDS times; time per AH of each batch (the median over
# the rounds: a batch is measured once per round, and TCG's host noise
# would otherwise land on one batch), slab memory per AH.
SROUNDS=${RVERBS_BENCH_SROUNDS:-3}
printf '\n%-44s %10s %10s\n' "$SCALE live AHs on rv0, batches of 10000 (ns/AH, median of $SROUNDS)" "C" "Rust"
insmod "$KBENCH" netdev=veth0 sgid_index="$(gid_index rv0 ::ffff:192.0.2.1)" \
	dgid=::ffff:192.0.2.2 label=scale scale="$SCALE" batch=10000 rounds="$SROUNDS" || {
	echo "bench: the scale case failed:" >&2
	dmesg | grep 'rv_bench_ah' | tail -n 5 >&2
	exit 1
}
rmmod rv_bench_ah
out=$(dmesg | sed -n 's/^.*rv_bench_ah: scale //p')
SNAME=scale_$((SCALE / 1000))k_rv0
# batch I: "median min max" of the lines "c_batch I NS" or "rust_batch I NS".
for ((i = 0; ; i++)); do
	c=$(awk -v i=$i '$1 == "c_batch" && $2 == i { print "c", 0, $3 }' <<<"$out" | kstats c)
	r=$(awk -v i=$i '$1 == "rust_batch" && $2 == i { print "r", 0, $3 }' <<<"$out" | kstats r)
	[ "$c" != "- - -" ] && [ "$r" != "- - -" ] || break
	printf '%-44s %10s %10s\n' "batch $i" "${c%% *}" "${r%% *}"
	printf '%s %s %s - - - - - - 10000 live_ahs=%s\n' "${SNAME}_batch$i" \
		"$c" "$r" $(((i + 1) * 10000)) >>"$KTSV"
done
cb=$(awk '$1 == "c_bytes" { print "c", 0, $3 }' <<<"$out" | kstats c)
rb=$(awk '$1 == "rust_bytes" { print "r", 0, $3 }' <<<"$out" | kstats r)
cb=${cb%% *} rb=${rb%% *}
printf '%-44s %10s %10s\n' "slab bytes per live AH" "$cb" "$rb"
printf '%s - - - - - - - - - - - - %s c_bytes_per_ah=%s rust_bytes_per_ah=%s\n' \
	"${SNAME}_memory" "$SCALE" "$cb" "$rb" >>"$KTSV"

# Concurrency: P processes create+destroy the same AH through rdma-core on
# rv0 at once, C core and Rust core; throughput over the span from the
# first start to the last end of their loops. Each process opens the device
# first and starts its loop at a common signal (ah_probe -B), so that the
# span does not hold one process's set-up beside another's loop.
# conc P - "pairs per second" of P processes.
conc() {
	local p=$1 i pids=() t0 t1 ready
	for ((i = 0; i < p; i++)); do
		$PROBE -d rv0 -s "$(gid_index rv0 ::ffff:192.0.2.1)" -g ::ffff:192.0.2.2 -N "$COUNT" -B \
			>/tmp/conc.$i &
		pids+=($!)
	done
	for ((i = 0; i < 600; i++)); do
		ready=$(cat /tmp/conc.* 2>/dev/null | grep -c '^ready$')
		[ "$ready" = "$p" ] && break
		sleep 0.05
	done
	[ "$ready" = "$p" ] || { echo "bench: $p processes did not get ready" >&2; exit 1; }
	kill -USR2 "${pids[@]}"
	for i in "${pids[@]}"; do
		wait "$i" || { echo "bench: a concurrent run failed" >&2; exit 1; }
	done
	t0=$(cat /tmp/conc.* | sed -n 's/^bench_start_ns: //p' | sort -n | head -n 1)
	t1=$(cat /tmp/conc.* | sed -n 's/^bench_end_ns: //p' | sort -n | tail -n 1)
	rm -f /tmp/conc.*
	awk -v n=$((p * COUNT)) -v t=$((t1 - t0)) 'BEGIN { printf "%d", n * 1e9 / t }'
}
printf '\n%-44s %10s %10s\n' "rv0 through rdma-core, P processes (pairs/s)" "C" "Rust"
for p in 1 2 4; do
	c=()
	r=()
	for ((i = 0; i < ROUNDS; i++)); do
		c+=("$(conc $p)")
		takeover_on || exit 1
		r+=("$(conc $p)")
		takeover_off || exit 1
	done
	cm=$(printf '%s\n' "${c[@]}" | median)
	rm_=$(printf '%s\n' "${r[@]}" | median)
	[ $p = 1 ] && { c1=$cm; r1=$rm_; }
	printf '%-44s %10s %10s\n' "$p process(es), x $(awk -v a="$cm" -v b="$c1" 'BEGIN { printf "%.2f", a / b }') / x $(awk -v a="$rm_" -v b="$r1" 'BEGIN { printf "%.2f", a / b }') of one" "$cm" "$rm_"
	printf '%s %s %s %s %s %s %s - - - - - - %s c_pairs_per_s=%s rust_pairs_per_s=%s\n' \
		"concurrency_${p}p_rv0" $((1000000000 / cm)) $((1000000000 / cm)) \
		$((1000000000 / cm)) $((1000000000 / rm_)) $((1000000000 / rm_)) $((1000000000 / rm_)) \
		"$COUNT" "$cm" "$rm_" >>"$KTSV"
done

# A function_graph profile of the Rust core's create and destroy on rv0
# (IPv4, neighbour valid): the exported entry points are C functions
# (rust/takeover/exports.c), so ftrace sees them and every C function under
# them; the Rust frames between are not traced (this kernel builds Rust
# without __fentry__, Documentation/tracing-rust-functions.md).
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs tracefs $T
FGRAPH=$OUT/fgraph.txt
echo 0 >$T/tracing_on && : >$T/trace && echo 1 >$T/options/funcgraph-tail &&
	echo 0 >$T/options/funcgraph-irqs &&
	printf '%s\n' rverbs_create_user_ah rverbs_destroy_ah_user >$T/set_graph_function &&
	echo function_graph >$T/current_tracer && echo 1 >$T/tracing_on ||
	{ echo "bench: function_graph tracer not available" >&2; exit 1; }
insmod "$KBENCH" netdev=veth0 sgid_index="$(gid_index rv0 ::ffff:192.0.2.1)" \
	dgid=::ffff:192.0.2.2 label=fgraph reps=1 rounds=1 ||
	{ echo "bench: the traced create failed" >&2; exit 1; }
echo 0 >$T/tracing_on
rmmod rv_bench_ah
cat $T/trace >"$FGRAPH"
echo nop >$T/current_tracer
: >$T/set_graph_function
# Lines "rverbs_create_user_ah [rverbs]() {" ... "} /* rverbs_create_user_ah [rverbs] */".
if ! grep -q 'rverbs_create_user_ah \[rverbs\]() {' "$FGRAPH"; then
	echo "bench: the function_graph trace has no rverbs_create_user_ah" >&2
	exit 1
fi
printf '\nfunction_graph of one Rust create on rv0 (all of it: results/fgraph.txt):\n'
awk '/rverbs_create_user_ah \[rverbs\]\(\) \{/ { on = 1 } on { print } on && /\} \/\* rverbs_create_user_ah / { exit }' \
	"$FGRAPH" | head -n 60
echo "(lookup: route + neighbour lookups alone; floor: lookups + GID entry get/put +"
echo " the driver's create_ah/destroy_ah; XRCD: alloc+dealloc, no lookup, no floor)"

printf '\n%-44s %12s %12s %8s\n' "drivers, C core (medians above)" \
	"rxe0 ns/pair" "rv0 ns/pair" "rxe/rv0"
while IFS='|' read -r name _; do
	printf '%-44s %12d %12d %8s\n' "$name" "${C_MEDIAN[rxe0/$name]}" \
		"${C_MEDIAN[rv0/$name]}" "$(ratio "${C_MEDIAN[rxe0/$name]}" "${C_MEDIAN[rv0/$name]}")"
done <<<"$CASES"
printf '%-44s %12d %12d %8s\n' "MR reg+dereg, 4 KiB ($CHURN_COUNT, verbs_churn)" \
	"${CHURN_MR[rxe0]}" "${CHURN_MR[rv0]}" "$(ratio "${CHURN_MR[rxe0]}" "${CHURN_MR[rv0]}")"
printf '%-44s %12d %12d %8s\n' "UD QP create+destroy ($CHURN_COUNT, verbs_churn)" \
	"${CHURN_QP[rxe0]}" "${CHURN_QP[rv0]}" "$(ratio "${CHURN_QP[rxe0]}" "${CHURN_QP[rv0]}")"

# The data path.  many_run DEV PEER DEV_IP PEER_IP ARGS... - one ud_many
# exchange, server PEER in $NS, client DEV here; prints "RATE RTT_NS".
MANY_PORT=18800
many_run() {
	local dev=$1 peer=$2 ip=$3 pip=$4 srv out ok
	shift 4
	MANY_PORT=$((MANY_PORT + 1))
	out=$(mktemp)
	ip netns exec $NS timeout 60 "$MANY" -d "$peer" -g "$(gid_index "$peer" "::ffff:$pip")" \
		-p $MANY_PORT "$@" >"$out.srv" 2>&1 &
	srv=$!
	wait_until 30 has_line "$out.srv" listening
	ok=1
	timeout 60 "$MANY" -d "$dev" -g "$(gid_index "$dev" "::ffff:$ip")" -p $MANY_PORT "$@" \
		"$pip" >"$out" 2>&1 || ok=0
	wait $srv || ok=0
	if [ $ok = 0 ]; then
		echo "bench: ud_many $dev <-> $peer $* failed:" >&2
		cat "$out" "$out.srv" >&2
		exit 1
	fi
	awk '$1 == "rate_per_s" { r = $2 } $1 == "rtt_ns" { t = $2 } END { print r, t }' "$out"
	rm -f "$out" "$out.srv"
}

rdma link del rv0 && rdma link add rxe0 type rxe netdev veth0 &&
	printf '%s\n' "link add vethd0 type veth peer name vethd1" "link set vethd1 netns $NS" \
		"addr add 198.18.3.1/24 dev vethd0" "link set vethd0 up" | ip -batch - &&
	printf '%s\n' "addr add 198.18.3.2/24 dev vethd1" "link set vethd1 up" | ip -n $NS -batch - &&
	rdma link add rvd0 type rverbs netdev vethd0 &&
	ip netns exec $NS rdma link add rvd1 type rverbs netdev vethd1 &&
	wait_until 10 gid_index rxe1 ::ffff:192.0.2.2 >/dev/null &&
	wait_until 10 gid_index rvd1 ::ffff:198.18.3.2 >/dev/null &&
	ping -c 1 -W 5 192.0.2.2 >/dev/null && ping -c 1 -W 5 198.18.3.2 >/dev/null ||
	{ echo "bench: data path setup failed" >&2; exit 1; }

MANY_SECS=${RVERBS_BENCH_SECONDS:-3}
# name|ud_many's arguments|the field (1 rate, 2 round trip)|lower or higher is faster
MANY_CASES="round trip, 1 QP, 1 in flight (ns)|-n 1 -t 1 -w 1|2|lower
message rate, 16 QPs x 16 in flight (msg/s)|-n 16 -t 2 -w 16|1|higher"
printf '\n%-44s %12s %12s %8s\n' "data path: 64-byte UD, median of $ROUNDS x $MANY_SECS s" \
	"rxe" "rv" "rv faster"
while IFS='|' read -r name args field faster; do
	x=()
	v=()
	for ((i = 0; i < ROUNDS; i++)); do
		# shellcheck disable=SC2086 # the arguments of the case
		read -ra m <<<"$(many_run rxe0 rxe1 192.0.2.1 192.0.2.2 $args -T "$MANY_SECS")"
		x+=("${m[field - 1]}")
		# shellcheck disable=SC2086
		read -ra m <<<"$(many_run rvd0 rvd1 198.18.3.1 198.18.3.2 $args -T "$MANY_SECS")"
		v+=("${m[field - 1]}")
	done
	xm=$(printf '%s\n' "${x[@]}" | median)
	vm=$(printf '%s\n' "${v[@]}" | median)
	if [ "$faster" = lower ]; then
		printf '%-44s %12d %12d %8s\n' "$name" "$xm" "$vm" "$(ratio "$xm" "$vm")"
	else
		printf '%-44s %12d %12d %8s\n' "$name" "$xm" "$vm" "$(ratio "$vm" "$xm")"
	fi
done <<<"$MANY_CASES"
echo "(rv faster: rxe's time over rv's, or rv's rate over rxe's; above 1.00x rv is faster)"

# RC (issue 29): perftest between rxe0 and rxe1 and between
# rvd0 and rvd1, the same pairs of namespaces, rounds taking turns.
# perf_run TOOL DEV PEER IP PIP ARGS... - one run, server PEER in $NS,
# client DEV here; prints perftest's result line.
PERF_PORT=18900
perf_run() {
	local tool=$1 dev=$2 peer=$3 ip=$4 pip=$5 srv out ok
	shift 5
	PERF_PORT=$((PERF_PORT + 1))
	out=$(mktemp)
	ip netns exec $NS timeout 60 "$tool" -d "$peer" -x "$(gid_index "$peer" "::ffff:$pip")" \
		-p $PERF_PORT -F "$@" >"$out.srv" 2>&1 &
	srv=$!
	ok=0
	for ((j = 0; j < 50; j++)); do
		timeout 60 "$tool" -d "$dev" -x "$(gid_index "$dev" "::ffff:$ip")" -p $PERF_PORT -F \
			"$@" "$pip" >"$out" 2>&1 && { ok=1; break; }
		grep -q "Couldn't connect" "$out" || break
		sleep 0.1
	done
	wait $srv || ok=0
	if [ $ok = 0 ]; then
		echo "bench: $tool $dev <-> $peer $* failed:" >&2
		cat "$out" "$out.srv" >&2
		exit 1
	fi
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print; exit }' "$out"
	rm -f "$out" "$out.srv"
}
# name|tool|arguments|the result line's field|lower or higher is faster|scale
PERF_CASES="SEND bandwidth, 64 KiB (MB/s)|ib_send_bw|-s 65536 -D $MANY_SECS|4|higher|1
SEND message rate, 64 B (msg/s)|ib_send_bw|-s 64 -D $MANY_SECS|5|higher|1000000
SEND latency, 64 B, typical (ns)|ib_send_lat|-s 64 -n 5000|5|lower|1000
WRITE bandwidth, 64 KiB (MB/s)|ib_write_bw|-s 65536 -D $MANY_SECS|4|higher|1
WRITE latency, 64 B, typical (ns)|ib_write_lat|-s 64 -n 5000|5|lower|1000
READ bandwidth, 64 KiB (MB/s)|ib_read_bw|-s 65536 -D $MANY_SECS|4|higher|1
READ latency, 64 B, typical (ns)|ib_read_lat|-s 64 -n 5000|5|lower|1000
fetch-and-add rate (op/s)|ib_atomic_bw|-D $MANY_SECS|5|higher|1000000"
# perf_table TITLE CASES - PERF_CASES' rows for CASES, rxe against rv.
perf_table() {
	local name tool args field faster scale x v xm vm i m
	printf '\n%-44s %12s %12s %8s\n' "$1" "rxe" "rv" "rv faster"
	while IFS='|' read -r name tool args field faster scale; do
		x=()
		v=()
		for ((i = 0; i < ROUNDS; i++)); do
			# shellcheck disable=SC2086 # the arguments of the case
			read -ra m <<<"$(perf_run "$tool" rxe0 rxe1 192.0.2.1 192.0.2.2 $args)"
			x+=("$(awk -v v="${m[field - 1]}" -v k="$scale" 'BEGIN { printf "%d", v * k }')")
			# shellcheck disable=SC2086
			read -ra m <<<"$(perf_run "$tool" rvd0 rvd1 198.18.3.1 198.18.3.2 $args)"
			v+=("$(awk -v v="${m[field - 1]}" -v k="$scale" 'BEGIN { printf "%d", v * k }')")
		done
		xm=$(printf '%s\n' "${x[@]}" | median)
		vm=$(printf '%s\n' "${v[@]}" | median)
		if [ "$faster" = lower ]; then
			printf '%-44s %12d %12d %8s\n' "$name" "$xm" "$vm" "$(ratio "$xm" "$vm")"
		else
			printf '%-44s %12d %12d %8s\n' "$name" "$xm" "$vm" "$(ratio "$vm" "$xm")"
		fi
	done <<<"$2"
}

perf_table "RC (perftest), median of $ROUNDS x $MANY_SECS s" "$PERF_CASES"

# Goodput under 1 % loss (netem on both veths of each pair, both ways):
# what arrives while RC's NAKs and retransmissions recover the rest.
LOSS_CASES="SEND goodput, 64 KiB, 1 % loss (MB/s)|ib_send_bw|-s 65536 -D $MANY_SECS|4|higher|1
WRITE goodput, 64 KiB, 1 % loss (MB/s)|ib_write_bw|-s 65536 -D $MANY_SECS|4|higher|1"
modprobe sch_netem || { echo "bench: no netem" >&2; exit 1; }
for d in veth0 vethd0; do tc qdisc add dev $d root netem loss 1%; done
for d in veth1 vethd1; do ip netns exec $NS tc qdisc add dev $d root netem loss 1%; done
perf_table "RC under 1 % loss, median of $ROUNDS x $MANY_SECS s" "$LOSS_CASES"
for d in veth0 vethd0; do tc qdisc del dev $d root; done
for d in veth1 vethd1; do ip netns exec $NS tc qdisc del dev $d root; done

# What the receive hook costs other traffic (issue 28): plain UDP and TCP
# to a socket in namespace $NS over a veth pair of their own (vethu0 here,
# vethu1 there), which carries no RDMA device, while rvd1 is bound in $NS
# (its hook registered there: every locally delivered packet of $NS passes
# it) and while it is not (rvd1 deleted: no hook in $NS); the two
# alternate within each round. A namespace without an rv device has no
# hook at all (rv0_tap.sh).
printf '%s\n' "link add vethu0 type veth peer name vethu1" "link set vethu1 netns $NS" \
	"addr add 198.18.5.1/24 dev vethu0" "link set vethu0 up" | ip -batch - &&
	printf '%s\n' "addr add 198.18.5.2/24 dev vethu1" "link set vethu1 up" | ip -n $NS -batch - &&
	ping -c 1 -W 5 198.18.5.2 >/dev/null || { echo "bench: hook cost setup failed" >&2; exit 1; }
RATE_PORT=5300
# rate_run udp|tcp - one run: the receiver's rate, datagrams or bytes per second.
rate_run() {
	local out srv r
	RATE_PORT=$((RATE_PORT + 1))
	out=$(mktemp)
	ip netns exec $NS timeout 60 "$RATE" "$1-recv" $RATE_PORT "$MANY_SECS" >"$out" 2>&1 &
	srv=$!
	wait_until 30 has_line "$out" listening
	timeout 60 "$RATE" "$1-send" 198.18.5.2 $RATE_PORT "$MANY_SECS" ||
		{ echo "bench: net_rate $1-send failed" >&2; exit 1; }
	wait $srv || { echo "bench: net_rate $1-recv failed:" >&2; cat "$out" >&2; exit 1; }
	r=$(sed -n 's/^rate_per_s //p' "$out")
	rm -f "$out"
	echo "$r"
}
# hooked yes|no - rvd1 bound in $NS (the hook there) or not; then 2 s for
# the work a device's coming or going starts (GID table, netdev events) to
# end before anything is measured.
hooked() {
	if [ "$1" = yes ]; then
		ip netns exec $NS rdma link add rvd1 type rverbs netdev vethd1 &&
			wait_until 10 gid_index rvd1 ::ffff:198.18.3.2 >/dev/null
	else
		ip netns exec $NS rdma link del rvd1
	fi || { echo "bench: rvd1 $1 failed" >&2; exit 1; }
	sleep 2
}
printf '\n%-44s %12s %12s %8s\n' "the hook's cost to other traffic, median of $ROUNDS x $MANY_SECS s" \
	"no hook" "hook" "hook/no"
for kind in udp tcp; do
	x=()
	v=()
	# Each round measures both, in turns: hook first in even rounds, last
	# in odd ones, so that neither always follows a change.
	for ((i = 0; i < ROUNDS; i++)); do
		if ((i % 2 == 0)); then
			v+=("$(rate_run $kind)")
			hooked no
			x+=("$(rate_run $kind)")
		else
			x+=("$(rate_run $kind)")
			hooked yes
			v+=("$(rate_run $kind)")
		fi
	done
	((ROUNDS % 2 == 1)) && hooked yes
	xm=$(printf '%s\n' "${x[@]}" | median)
	vm=$(printf '%s\n' "${v[@]}" | median)
	if [ $kind = udp ]; then name="UDP, 64-byte datagrams received (per s)"; else
		name="TCP, bytes received (per s)"
	fi
	printf '%-44s %12d %12d %8s\n' "$name" "$xm" "$vm" "$(ratio "$vm" "$xm")"
	# The spread of the rounds, which says how much of the ratio is noise.
	printf '  rounds, no hook: %s\n  rounds, hook:    %s\n' "$(printf '%s ' "${x[@]}")" \
		"$(printf '%s ' "${v[@]}")"
done
echo "(a netdev without an RDMA device, in a namespace with an rv device and without;"
echo " hook/no below 1.00x is what the hook costs, within the rounds' spread otherwise)"
