# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the shell kselftests of rverbs.  Sourced, never run.
#
# Provides the KTAP helpers of the kernel source (ktap_helpers.sh) and:
#   RVERBS_KO         path of the built rverbs.ko
#   ksft_check DESC CMD...   one KTAP test case: ok when CMD succeeds (and
#                            "# took N s" after it when it took 3 s or more)
#   kmsg_mark / kmsg_since   the kernel log written after a mark
#   ns_setup / ns_cleanup    veth0 here, veth1 in netns "peer", with
#                            192.0.2.1/24 and 192.0.2.2/24 (TEST-NET-1)
#                            and 2001:db8::1/64, 2001:db8::2/64
#   rxe_pair_up / teardown   rxe0 and rxe1 on them; undo everything
#   gid_index DEV GID [TYPE] index of a GID of TYPE in DEV's table
#   takeover_on / _off       switch ib_core's verbs to Rust and back
#   wait_until SECS CMD...   poll CMD until it succeeds
#   wait_listen NETNS PORT   until a TCP server listens there
#   counter NAME             a counter of /sys/kernel/debug/rverbs/counters
#   has_line / prefixed      a file's exact line; its lines after a prefix
#   value_of FILE NAME       the value of a "NAME VALUE" line of FILE

RVERBS_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${RVERBS_TOP:=$(cd "$RVERBS_TESTS_DIR/.." && pwd)}"
: "${KSFT_DIR:=$("$RVERBS_TOP/scripts/kdir-path.sh" src)/tools/testing/selftests}"
: "${RVERBS_KO:=$RVERBS_TOP/rverbs.ko}"

# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/ktap_helpers.sh"

ksft_check() {
	local desc=$1 ksft_check_t0=$SECONDS
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
	# Where a script's time goes (the lanes' budget): a case of 3 s or more
	# says how long it took.
	[ $((SECONDS - ksft_check_t0)) -lt 3 ] || ktap_print_msg "took $((SECONDS - ksft_check_t0)) s"
}

# hang_detectors_on - the kernel reports hangs, which the lanes' log check
# (scripts/logcheck.sh) fails on: a task blocked in D state (the hung-task
# detector, its timeout not 0), a CPU that does not schedule (the soft-lockup
# watchdog) and an RCU stall (stall warnings not suppressed).  Says which
# is off.
hang_detectors_on() {
	local f v ok=0
	for f in /proc/sys/kernel/hung_task_timeout_secs /proc/sys/kernel/soft_watchdog \
		/sys/module/rcupdate/parameters/rcu_cpu_stall_suppress; do
		if ! read -r v <"$f" 2>/dev/null; then
			ktap_print_msg "$f is missing: the kernel lacks that detector"
			ok=1
			continue
		fi
		case $f in
		*/rcu_cpu_stall_suppress) [ "$v" = 0 ] ;;
		*) [ "$v" != 0 ] ;;
		esac || { ktap_print_msg "$f is $v: that detector is off"; ok=1; }
	done
	return $ok
}

kmsg_mark() {
	KMSG_MARK="rverbs-test: mark $$ $RANDOM"
	echo "$KMSG_MARK" >/dev/kmsg
}

kmsg_since() {
	dmesg | sed -n "/$KMSG_MARK/,\$p" | tail -n +2
}

NS=peer
IP4_A=192.0.2.1
IP4_B=192.0.2.2
IP6_A=2001:db8::1
IP6_B=2001:db8::2

# Three programs, not ten (ip's batch mode stops at the first error): on the
# debug kernel under TCG each costs most of a second.
ns_setup() {
	ip netns add $NS &&
		printf '%s\n' "link add veth0 type veth peer name veth1" \
			"link set veth1 netns $NS" "addr add $IP4_A/24 dev veth0" \
			"addr add $IP6_A/64 dev veth0 nodad" "link set veth0 up" | ip -batch - &&
		printf '%s\n' "addr add $IP4_B/24 dev veth1" "addr add $IP6_B/64 dev veth1 nodad" \
			"link set veth1 up" "link set lo up" | ip -n $NS -batch -
}

ns_cleanup() {
	ip link del veth0 2>/dev/null
	ip netns del $NS 2>/dev/null
	true
}

# gid_text ADDR - ADDR (any IPv6 text form, ::ffff:a.b.c.d for IPv4) as
# sysfs shows a GID: eight groups of four hex digits.  In bash alone, as
# the helpers below: on the debug kernel under TCG each program started
# costs most of a second, and these run in loops.
gid_text() {
	local a=$1 head tail g q out=
	local -a h=() t=()
	if [[ $a =~ ^(.*:)([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]]; then
		printf -v q '%x:%x' $((BASH_REMATCH[2] * 256 + BASH_REMATCH[3])) \
			$((BASH_REMATCH[4] * 256 + BASH_REMATCH[5]))
		a=${BASH_REMATCH[1]}$q
	fi
	if [[ $a == *::* ]]; then
		head=${a%%::*} tail=${a#*::}
		[[ $tail == *::* ]] && return 1
	else
		head=$a tail=
	fi
	[ -n "$head" ] && IFS=: read -ra h <<<"$head"
	[ -n "$tail" ] && IFS=: read -ra t <<<"$tail"
	q=$((8 - ${#h[@]} - ${#t[@]}))
	if [[ $a == *::* ]]; then
		[ $q -ge 1 ] || return 1
	else
		[ $q = 0 ] || return 1
	fi
	for g in "${h[@]}"; do
		[[ $g =~ ^[0-9a-fA-F]{1,4}$ ]] || return 1
		printf -v out '%s%04x:' "$out" $((16#$g))
	done
	for ((; q > 0; q--)); do
		out+=0000:
	done
	for g in "${t[@]}"; do
		[[ $g =~ ^[0-9a-fA-F]{1,4}$ ]] || return 1
		printf -v out '%s%04x:' "$out" $((16#$g))
	done
	echo "${out%:}"
}

# gid_index DEV GID [TYPE] - index of the entry GID (any IPv6 text form,
# ::ffff:a.b.c.d for IPv4) of type TYPE ("RoCE v2" by default, or
# "IB/RoCE v1") in port 1's GID table of DEV.
gid_index() {
	local dev=$1 want type=${3:-RoCE v2} f i g t
	want=$(gid_text "$2") || return 1
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		read -r g <"$f" 2>/dev/null || continue
		[ "$g" = "$want" ] || continue
		i=${f##*/}
		read -r t <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null ||
			continue
		if [ "$t" = "$type" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# wait_until SECONDS CMD... - poll CMD every 0.1 s until it succeeds, for at
# most SECONDS (a bound on a wait, never a timing check: generous, for the
# debug kernel under TCG is many times slower than Debian's).
# nap SECONDS - sleep, without starting a program: a read that times out on
# a pipe this shell holds both ends of (under TCG each program started costs
# a tenth of a second to most of one, more than the nap itself).
exec {NAP_FD}<> <(:)
nap() {
	read -r -t "$1" -u "$NAP_FD" _ || :
}

wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		nap 0.1
	done
}

# wait_listen NETNS PORT - wait (up to 60 s) until a TCP socket listens on
# PORT in NETNS: the server side of a ping-pong is ready for its client.
wait_listen() {
	wait_until 60 eval "ip netns exec $1 ss -Hltn 'sport = :$2' | grep -q ."
}

# takeover_on / takeover_off - route ib_core's AH, XRCD and QP modify verbs to the
# Rust core (load rverbs_takeover.ko) or back to C (disable, unload); both
# wait for the livepatch transition to finish.
RVERBS_TAKEOVER_KO=${RVERBS_TAKEOVER_KO:-$RVERBS_TOP/rverbs_takeover.ko}
LP=/sys/kernel/livepatch/rverbs_takeover

# has_line FILE LINE - FILE has a line that is exactly LINE.
has_line() {
	local l
	[ -r "$1" ] || return 1
	while IFS= read -r l || [ -n "$l" ]; do
		[ "$l" = "$2" ] && return 0
	done <"$1"
	return 1
}

# value_of FILE NAME - the value of the line "NAME VALUE ..." of FILE (the
# last such line); fails, printing nothing, when there is none.
value_of() {
	local k v found=
	while read -r k v _; do
		[ "$k" = "$2" ] && found=$v
	done <"$1"
	[ -n "$found" ] && echo "$found"
}

# prefixed PREFIX [FILE] - each line of FILE (or stdin) after PREFIX.
prefixed() {
	local l
	while IFS= read -r l || [ -n "$l" ]; do
		printf '%s%s\n' "$1" "$l"
	done <"${2:-/dev/stdin}"
}

# lp_settled - the takeover's livepatch is in no transition.
lp_settled() {
	local t
	read -r t <$LP/transition 2>/dev/null && [ "$t" = 0 ]
}

# The transition waits for every task to pass a safe point: in a starved
# guest (the lanes' second boots: one vCPU at the lowest priority) that
# can take long.
takeover_on() {
	insmod "$RVERBS_TAKEOVER_KO" || return 1
	wait_until 300 lp_settled
}

takeover_off() {
	[ -d $LP ] || return 0
	echo 0 >$LP/enabled || return 1
	wait_until 300 eval '[ ! -d $LP ]' && rmmod rverbs_takeover
}

# rxe_pins_itself - true when rdma_rxe cannot be unloaded while it has a
# device: on a kernel with lockdep (the debug lane), each soft-RoCE device
# holds a reference to the rdma_rxe module (its sockets' lock classes are
# the module's: sock_lock_init_class_and_name() and sk_owner_set(), see
# drivers/infiniband/sw/rxe/rxe_net.c), so "rmmod rdma_rxe" is refused with
# EBUSY until its devices are deleted.  Debian's kernel has no lockdep.
rxe_pins_itself() {
	[ -e /proc/lockdep ]
}

# counters_all - every counter of the Rust core, its events and its
# error.<errno> lines: a [C] case must leave them all as they were.
counters_all() {
	local -a l
	mapfile -t l </sys/kernel/debug/rverbs/counters || return 1
	printf '%s\n' "${l[@]}"
}

# counter_in TEXT NAME - counter NAME in TEXT, a copy of counters_all (0 if
# absent).
counter_in() {
	local k v n=0
	while read -r k v _; do
		[ "$k" = "$2" ] && n=$v
	done <<<"$1"
	echo $((n + 0))
}

# counters_moved BEFORE AFTER - each counter that changed between two copies
# of counters_all, as "NAME +DELTA" (or -DELTA) lines, in the file's order.
counters_moved() {
	awk 'NR == FNR { v[$1] = $2; next }
		$1 != "end" && $2 != v[$1] + 0 { d = $2 - v[$1]; printf "%s %s%d\n", $1, (d > 0 ? "+" : ""), d }' \
		<(echo "$1") <(echo "$2")
}

# counter NAME - a counter of /sys/kernel/debug/rverbs/counters (0 if the
# file has no such counter, nothing if there is no file: rverbs unloaded).
counter() {
	local f=/sys/kernel/debug/rverbs/counters k v n=0
	[ -e $f ] || return 0
	while read -r k v _; do
		[ "$k" = "$1" ] && n=$v
	done <$f
	echo $((n + 0))
}

# rxe_pair_up - soft-RoCE on both ends: rxe0 on veth0 here, rxe1 on veth1 in
# netns $NS (ns_setup first).
rxe_pair_up() {
	rdma link add rxe0 type rxe netdev veth0 &&
	ip netns exec $NS rdma link add rxe1 type rxe netdev veth1
}

# teardown - undo whatever a test set up: background jobs, the takeover,
# rxe0/rxe1, the namespaces, rverbs.ko and rdma_rxe. Always succeeds, also
# under "set -e".
teardown() {
	local pids

	pids=$(jobs -p)
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	wait 2>/dev/null || true
	takeover_off || true
	rdma link del rxe0 2>/dev/null || true
	ip netns exec $NS rdma link del rxe1 2>/dev/null || true
	ns_cleanup
	rmmod rverbs 2>/dev/null || true
	modprobe -r rdma_rxe 2>/dev/null || true
}

# rdmacore_run OUT DEV TIMEOUT MODULE... - rdma-core's own Python tests
# (pyverbs, run_tests.py) of MODULEs on DEV. OUT gets one line per test,
# sorted: "name<TAB>result<TAB>detail", result ok, skipped, FAIL, ERROR,
# expected_failure or unexpected_success; detail is the skip reason, or for
# a FAIL or ERROR "failing source line -> exception" from its traceback. A
# class or module fixture that failed or skipped (setUpClass, ...) is a line
# of its own ("tests.mod.Class.setUpClass"): the tests it kept from running
# are then not lost. A run that did not finish as unittest finishes (an exit
# status other than 0 or 1: a crash, a signal, the timeout; no "Ran N tests"
# line; or N not the number of tests read) adds the line
# "run_tests.py<TAB>ERROR<TAB>why", so that it fails the caller's checks.
rdmacore_run() {
	local out=$1 dev=$2 limit=$3 rc ran n
	shift 3
	(cd "${RDMA_CORE_TESTS:?}" && timeout "$limit" python3 run_tests.py --dev "$dev" -v "$@") \
		>"$out.log" 2>&1
	rc=$?
	awk '
		# "test_x (tests.mod.Class.test_x)", maybe a docstring line, then
		# "... result" at the end of a line; a fixture is
		# "setUpClass (tests.mod.Class) ... result".
		!inb && /^test[^ ]* \([^)]*\)/ { name = $2; gsub(/[()]/, "", name) }
		!inb && /^(setUp|tearDown)(Class|Module) \([^)]*\)/ {
			name = $2; gsub(/[()]/, "", name); name = name "." $1
		}
		!inb && name != "" &&
		match($0, / \.\.\. (ok|skipped|FAIL|ERROR|expected failure|unexpected success)/) {
			r = substr($0, RSTART + 5)
			why = ""
			if (r ~ /^skipped/) {
				why = r; sub(/^skipped */, "", why)
				gsub(/^'\''|'\''$/, "", why); gsub(/#/, "", why)
				r = "skipped"
			} else if (r ~ /^(expected failure|unexpected success)/) {
				sub(/ /, "_", r); sub(/ .*/, "", r)
			} else
				sub(/ .*/, "", r)
			n++; names[n] = name; res[n] = r; whys[n] = why; name = ""
			next
		}
		# The report of a FAIL or ERROR: header, docstring, dashes,
		# traceback, then the dashes or equals of what follows.
		/^(FAIL|ERROR): [^ ]+ \(/ {
			blk = $3; gsub(/[()]/, "", blk)
			if ($2 !~ /^test/) blk = blk "." $2
			inb = 1; seps = 0; next
		}
		inb && /^(-+|=+)$/ { if (++seps == 2) inb = 0; next }
		inb && seps == 1 && /^  File "/ {
			if ((getline src) > 0) { gsub(/^ +| +$/, "", src); last[blk] = src }
			next
		}
		inb && seps == 1 && /^[A-Za-z_][A-Za-z0-9_.]*(:|$)/ { exc[blk] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				d = whys[i]
				if (res[i] == "FAIL" || res[i] == "ERROR")
					d = last[names[i]] " -> " exc[names[i]]
				printf "%s\t%s\t%s\n", names[i], res[i], d
			}
		}
	' "$out.log" | sort >"$out"
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out.log" | tail -n 1)
	n=$(grep -cvE '\.(setUp|tearDown)(Class|Module)	' "$out")
	if [ "$rc" -gt 1 ] || [ -z "$ran" ] || [ "$ran" != "$n" ]; then
		printf 'run_tests.py\tERROR\texit status %s, "Ran %s tests", %s tests read\n' \
			"$rc" "${ran:-no}" "$n" >>"$out"
	fi
}
