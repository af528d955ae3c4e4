#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flush that userspace can make long runs in a work item, not in the
# network's softirq.  A UD QP in error with a full receive queue
# (ud_flush: COUNT receives posted after the move to error, so nothing
# flushed them yet) gets one packet from the other namespace (roce_inject.py
# through a raw socket, over the veth pair): its responder flushes every
# receive (rxe_resp.c:rxe_receiver).  On soft-RoCE (rxe1, the reference)
# and on rv0: all COUNT complete once, in order, IBV_WC_WR_FLUSH_ERR; on
# rv0 none before the packet (soft-RoCE's task may take a few early: it
# flushes the empty queue of the move to error when it gets to it).  For
# rv0, the kernel's own tracepoints show where the
# flush ran: a work item of the QP (the workqueue's events name its
# function, rverbs' work item of QpCore) between the packet's arrival and
# the end, and the longest NET_RX softirq and the flush's time are printed
# (measured, not asserted: a timed test would depend on the machine).
# rv0 first flushed inside the softirq, under its receive lock with bottom
# halves off, a ring's worth at most (2^20), again for each packet.

. "$(dirname "$0")/lib.sh"

# The receive queue and the CQ: the largest CQ soft-RoCE and rv0 make.
COUNT=32767
[ "${RVERBS_LANE:-}" = debug ] && COUNT=4096
T=/sys/kernel/tracing
FLUSH=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ud_flush

cleanup() {
	trace_off
	[ -n "${FLUSH_PID:-}" ] && kill "$FLUSH_PID" 2>/dev/null
	rdma link del rv0 2>/dev/null
	ip netns exec "$NS" rdma link del rxe1 2>/dev/null
	teardown
	rm -f /tmp/rv0_flush.*
	true
}
trap cleanup EXIT

EVENTS=(irq/softirq_entry irq/softirq_exit workqueue/workqueue_execute_start
	workqueue/workqueue_execute_end)
TRACING_WAS=

# trace_off - the events off again, their filters cleared, tracing as it
# was before trace_on (later tests use it).
trace_off() {
	local e
	[ -n "$TRACING_WAS" ] || return 0
	for e in "${EVENTS[@]}"; do
		echo 0 >$T/events/$e/enable
		echo 0 >$T/events/$e/filter
	done
	echo "$TRACING_WAS" >$T/tracing_on
	TRACING_WAS=
}

# trace_on - the NET_RX softirqs and the work items run, from now on.
trace_on() {
	local e
	[ -d $T/events/irq ] || mount -t tracefs nodev $T 2>/dev/null
	read -r TRACING_WAS <$T/tracing_on || return 1
	echo 0 >$T/tracing_on && echo >$T/trace || return 1
	echo 'vec == 3' >$T/events/irq/softirq_entry/filter &&
		echo 'vec == 3' >$T/events/irq/softirq_exit/filter || return 1
	for e in "${EVENTS[@]}"; do
		echo 1 >$T/events/$e/enable || return 1
	done
	echo 1 >$T/tracing_on
}

# flushed DEV NETNS FROM TO [-a] - ud_flush on DEV (in NETNS, "-" for this
# one) with COUNT receives; one good packet from the other side (FROM, to
# TO) at its QP; ud_flush's verdict.  Its output in /tmp/rv0_flush.DEV.
# -a: completions before the packet allowed (ud_flush -a: soft-RoCE).
flushed() {
	local dev=$1 ns=$2 x=() y=(ip netns exec "$NS") line qpn rc opt=()
	[ "${5:-}" = -a ] && opt=(-a)
	if [ "$ns" != - ]; then
		x=(ip netns exec "$ns")
		y=()
	fi
	rm -f /tmp/rv0_flush.go && mkfifo /tmp/rv0_flush.go || return 1
	"${x[@]}" timeout 300 "$FLUSH" "${opt[@]}" "$dev" $COUNT </tmp/rv0_flush.go >/tmp/rv0_flush.$dev 2>&1 &
	FLUSH_PID=$!
	exec {go}>/tmp/rv0_flush.go
	if ! wait_until 120 grep -q '^qpn ' /tmp/rv0_flush.$dev; then
		eval "exec $go>&-"
		wait $FLUSH_PID
		FLUSH_PID=
		sed 's/^/# ud_flush: /' /tmp/rv0_flush.$dev
		return 1
	fi
	line=$(grep '^qpn ' /tmp/rv0_flush.$dev)
	qpn=${line#qpn }
	"${y[@]}" python3 "$RVERBS_TESTS_DIR/roce_inject.py" good "$3" "$4" "$qpn" |
		sed 's/^/# roce_inject.py: /'
	echo go >&$go
	eval "exec $go>&-"
	wait $FLUSH_PID
	rc=$?
	FLUSH_PID=
	sed 's/^/# ud_flush: /' /tmp/rv0_flush.$dev
	return $rc
}

# where_flushed - from the trace: rv0's flush ran in its QP's work item
# (a workqueue_execute_start of a function of QpCore's, and its end);
# prints the longest NET_RX softirq and the work item's time.
where_flushed() {
	cp $T/trace /tmp/rv0_flush.trace
	awk '
	function t(s) { sub(":", "", s); return s + 0 }
	{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				break
		ts = t($i)
		cpu = $(i - 2)
	}
	/softirq_entry: vec=3/ { start[cpu] = ts }
	/softirq_exit: vec=3/ && (cpu in start) {
		d = ts - start[cpu]
		if (d > net)
			net = d
		delete start[cpu]
	}
	/workqueue_execute_start: .*QpCore/ { ws[cpu] = ts; seen++ }
	/workqueue_execute_end: .*QpCore/ && (cpu in ws) {
		work += ts - ws[cpu]
		ended++
		delete ws[cpu]
	}
	END {
		printf "# longest NET_RX softirq %d us, QpCore work items %d (%d ended), %d us in them\n",
			net * 1e6, seen, ended, work * 1e6
		exit !(seen >= 1 && ended == seen)
	}' /tmp/rv0_flush.trace
}

ktap_print_header
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup ||
	ktap_exit_fail_msg "setup failed"
ktap_set_plan 4

ip netns exec "$NS" rdma link add rxe1 type rxe netdev veth1 &&
	rdma link add rv0 type rverbs netdev veth0 &&
	wait_until 10 gid_index rv0 "::ffff:$IP4_A" >/dev/null &&
	wait_until 10 gid_index rxe1 "::ffff:$IP4_B" >/dev/null
ksft_check "rxe1 in the other namespace, rv0 here" test $? = 0

ksft_check "rxe1: a QP in error with $COUNT receives posted, one packet: all flushed once, in order" \
	flushed rxe1 "$NS" "$IP4_A" "$IP4_B" -a

trace_on || ktap_print_msg "tracing did not start"
ksft_check "rv0: a QP in error with $COUNT receives posted, one packet: all flushed once, in order" \
	flushed rv0 - "$IP4_B" "$IP4_A"
trace_off
ksft_check "rv0: the flush ran in the QP's work item, not in the packet's softirq (trace)" \
	where_flushed
ktap_finished
