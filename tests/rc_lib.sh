# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the tests of connected QPs on rv0 (rv0_rc.sh, rv0_srq.sh).
# Sourced after lib.sh, never run; the test sets NS (lib.sh), TMP (a
# directory of its own), DBG (rverbs' debugfs) and PORT (the first TCP port
# to use, less one).
#   wait_gid DEV ADDR        the index of DEV's RoCE v2 GID of ADDR
#   pingpong SRV_NS SRV_DEV SRV_GID CLI_DEV CLI_GID CLI_TARGET SIZE ITERS [ARGS...]
#                            ibv_rc_pingpong (or $PP) between two devices
#   uc_pingpong, srq_pingpong  the same with ibv_uc_pingpong, ibv_srq_pingpong
#   script PY ARGS...        a test script, its lines as comments
#   rc_setup, rc_cleanup     rverbs rc=1, rv0 and rxe1 in the namespaces; undone
#   same_line A B CASE       a script's line for CASE the same in files A and B
#   counter DEV NAME         a wire counter of rv device DEV
#   wire_clean DEV           DEV dropped nothing but RC's recovery and RNR

# wait_gid DEV ADDR - the index of DEV's RoCE v2 GID of ADDR, once it is
# there (up to 10 s).
wait_gid() {
	local i g
	for ((i = 0; i < 100; i++)); do
		g=$(gid_index "$1" "$2")
		[ -n "$g" ] && echo "$g" && return 0
		sleep 0.1
	done
	return 1
}

# PP_BOUND: one ping-pong's bound, against a hang, not a speed.  The debug
# lane's ibv_srq_pingpong (16 QPs a side) took 20 s on a good day and
# failed in CI's debug lane on a slow one; its bound is four times the
# stock lane's.
PP_BOUND=60
[ "${RVERBS_LANE:-}" = debug ] && PP_BOUND=240

# pingpong SRV_NS SRV_DEV SRV_GID CLI_DEV CLI_GID CLI_TARGET SIZE ITERS [ARGS...]
# - ibv_rc_pingpong's (or $PP's) server on SRV_DEV (in netns SRV_NS, "-"
# for the initial one) and its client on CLI_DEV in the other; both must
# finish, within PP_BOUND seconds each.
pingpong() {
	local sns=$1 sdev=$2 sgid=$3 cdev=$4 cgid=$5 target=$6 size=$7 n=$8 srv srv_rc rc i
	shift 8
	local -a sx=() cx=()
	if [ "$sns" = - ]; then cx=(ip netns exec "$NS"); else sx=(ip netns exec "$sns"); fi
	[ "$target" = 127.0.0.1 ] && cx=()
	PORT=$((PORT + 1))
	local pp=${PP:-ibv_rc_pingpong}
	"${sx[@]}" timeout $PP_BOUND $pp -d "$sdev" -g "$sgid" -s "$size" -n "$n" \
		-p $PORT "$@" >"$TMP/srv" 2>&1 &
	srv=$!
	for ((i = 0; i < 50; i++)); do
		"${cx[@]}" timeout $PP_BOUND $pp -d "$cdev" -g "$cgid" -s "$size" -n "$n" \
			-p $PORT "$@" "$target" >"$TMP/cli" 2>&1
		rc=$?
		grep -q "Couldn't connect" "$TMP/cli" || break
		sleep 0.1
	done
	wait $srv
	srv_rc=$?
	[ $srv_rc = 0 ] || rc=1
	if [ "$rc" != 0 ] || ! grep -q "$n iters" "$TMP/cli" || ! grep -q "$n iters" "$TMP/srv"; then
		sed 's/^/# server: /' "$TMP/srv"
		echo "# server: exit status $srv_rc (124: timeout(1) stopped it); client attempts: $((i < 50 ? i + 1 : 50))"
		sed 's/^/# client: /' "$TMP/cli"
		for d in rv0 rv1; do
			[ -e "$DBG/$d/wire" ] && awk -v d=$d '$2 != 0 { print "# " d ": " $0 }' "$DBG/$d/wire"
		done
		# The TCP exchange's path (w23: the client could not connect for
		# 174 s to a server that said nothing of why).
		{
			ip -br link show dev veth0
			ip neigh show dev veth0
			ip -n "$NS" -br link show dev veth1
			ip netns exec "$NS" ss -tan
		} 2>&1 | sed 's/^/# net: /'
		return 1
	fi
}

# uc_pingpong ARGS... - pingpong with ibv_uc_pingpong.
uc_pingpong() { PP=ibv_uc_pingpong pingpong "$@"; }

# srq_pingpong ARGS... - pingpong with ibv_srq_pingpong (16 RC QPs on an
# SRQ each end).
srq_pingpong() { PP=ibv_srq_pingpong pingpong "$@"; }

# script PY ARGS... - the test script PY with ARGS (up to 120 s), its lines
# as comments; its exit status.  It runs in a process forked by the test's
# script_runner.py (started here the first time, stopped by rc_cleanup),
# which has imported pyverbs already: the debug lane's guest takes 3.3 s
# to start Python and import it.  ARGS hold no tab.
script() {
	local out rc args
	if [ -z "${RUNNER_PID:-}" ] || ! kill -0 "$RUNNER_PID" 2>/dev/null; then
		coproc RUNNER { exec python3 "$RVERBS_TESTS_DIR/script_runner.py" 120; }
	fi
	out=$(mktemp /tmp/script.XXXXXX)
	args=$(IFS=$'\t'; printf '%s' "$*")
	printf '%s\t%s\n' "$out" "$args" >&"${RUNNER[1]}"
	if ! read -r -t 300 rc <&"${RUNNER[0]}"; then
		echo "# script_runner.py did not answer"
		runner_stop
		rc=1
	fi
	sed 's/^/# /' "$out"
	rm -f "$out"
	return "$rc"
}

# runner_stop - script's runner stopped.
runner_stop() {
	[ -n "${RUNNER_PID:-}" ] || return 0
	local pid=$RUNNER_PID
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	RUNNER_PID=
}

# counter DEV NAME - a wire counter of rv device DEV.
counter() { awk -v k="$2" '$1 == k { print $2 }' "$DBG/$1/wire"; }

# wire_clean DEV - DEV dropped nothing but what RC's recovery drops and
# the requests it answered with an RNR NAK (rc_retry.py's rnr cases).
wire_clean() {
	local bad
	bad=$(awk '$1 == "rc_rnr_nak_sent" { rnr = $2 } { v[$1] = $2 }
		END { for (k in v) if (k ~ /^drop_/ && k != "drop_rc_stale" && k != "drop_rc_sequence" &&
			!(k == "drop_no_buffer" && v[k] == rnr) && v[k] != 0) print k, v[k] }' "$DBG/$1/wire")
	[ -z "$bad" ] || { echo "$bad" | sed 's/^/# /'; return 1; }
}

wire_clean_both() { wire_clean rv0 && wire_clean rv1; }

# rc_setup - rverbs with rc=1 (soft-RoCE, uverbs and netem loaded), the
# peer namespace, rv0 on veth0 and rxe1 on veth1 in it; the test fails
# otherwise.
rc_setup() {
	modprobe rdma_rxe && modprobe ib_uverbs && modprobe sch_netem && insmod "$RVERBS_KO" rc=1 &&
		ns_setup && rdma link add rv0 type rverbs netdev veth0 &&
		ip netns exec $NS rdma link add rxe1 type rxe netdev veth1 ||
		ktap_exit_fail_msg "setup failed"
}

# rc_cleanup - what rc_setup made and the test added (qdiscs, rv1) undone,
# and TMP removed: the test's EXIT trap.
rc_cleanup() {
	runner_stop
	tc qdisc del dev veth0 root 2>/dev/null
	ip netns exec $NS tc qdisc del dev veth1 root 2>/dev/null
	rdma link del rv0 2>/dev/null
	rdma link del rv1 2>/dev/null
	rdma link del rxe1 2>/dev/null
	ns_cleanup
	rmmod rverbs 2>/dev/null
	rm -rf "$TMP"
	true
}

# same_line A B CASE - a case script's line for CASE ("# CASE: ...") is the
# same in A (the object on rv0) as in B (on the peer), and CASE was right
# in B ("# ok CASE"); otherwise both lines are shown.
same_line() {
	local a b
	a=$(grep "^# $3: " "$1")
	b=$(grep "^# $3: " "$2")
	[ -n "$a" ] && [ "$a" = "$b" ] && grep -qx "# ok $3" "$2" && return 0
	echo "# rv0:  $a"
	echo "# peer: $b"
	return 1
}
