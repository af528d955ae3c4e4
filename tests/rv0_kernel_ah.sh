#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Address handles of a kernel caller: rdma_create_ah (sleepable and not),
# rdma_query_ah, rdma_modify_ah, rdma_destroy_ah, through the test module
# test_modules/rv_kernel_ah.ko, which runs its checks when loaded and loads
# only if they pass. query_ah and modify_ah have no user verb: this is the
# only way to reach them. First on rxe0 (soft-RoCE, the C driver, as the
# reference of the checks), then on rv0 with the C core, from a RoCE v2 and
# a RoCE v1 source GID, and with the takeover on (the kernel's
# rdma_create_ah is not taken over: C creates, the Rust core destroys);
# nothing may be left.
#
# Then XRC domains: one in use (a use held by the test module
# test_modules/rv_xrcd.ko, as an XRC SRQ or target QP would hold one) cannot
# be deallocated (EBUSY), with the C core and the Rust core; soft-RoCE has
# none (EOPNOTSUPP); and XRC domains allocated under one core are freed under
# the other (uverbs_hold keeps one while the takeover is switched).

. "$(dirname "$0")/lib.sh"

KAH=${RVERBS_KAH:-$RVERBS_TOP/tests/test_modules/rv_kernel_ah.ko}
KXRCD=${KAH%/*}/rv_xrcd.ko
DBG=/sys/kernel/debug/rverbs

trap 'exec 5>&- 2>/dev/null; rmmod rv_kernel_ah rv_xrcd 2>/dev/null; teardown; ip link del vethk0 2>/dev/null' EXIT

# kah DESC ARGS - one case: the test module loads with ARGS (its checks
# passed); its log lines are shown.
kah() {
	local desc=$1 ok=1
	shift
	kmsg_mark
	insmod "$KAH" "$@" || ok=0
	kmsg_since | grep rv_kernel_ah | sed 's/^/# /'
	rmmod rv_kernel_ah 2>/dev/null
	if [ $ok = 1 ]; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
}

ktap_print_header
[ -f "$KAH" ] || ktap_exit_fail_msg "$KAH is not built"
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" roce_v1=1 && ns_setup &&
	ip link add vethk0 type veth peer name vethk1 && ip addr add 198.18.1.1/24 dev vethk0 &&
	ip link set vethk0 up && ip link set vethk1 up &&
	rdma link add rxe0 type rxe netdev vethk0 &&
	rdma link add rv0 type rverbs netdev veth0 || ktap_exit_fail_msg "setup failed"
ktap_set_plan 14

rxe_idx=$(gid_index rxe0 ::ffff:198.18.1.1)
v2_idx=$(gid_index rv0 ::ffff:$IP4_A)
v1_idx=$(gid_index rv0 ::ffff:$IP4_A "IB/RoCE v1")

kah "rxe0 (C driver): create, query, modify, query, create not sleepable, destroy" \
	netdev=vethk0 sgid_index="$rxe_idx"
kah "rv0, C core: the same, query_ah also giving back sl and dmac" \
	netdev=veth0 sgid_index="$v2_idx" full=1
kah "rv0, C core, RoCE v1 source GID" netdev=veth0 sgid_index="$v1_idx" full=1
takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
destroyed=$(counter ah_destroyed)
created=$(counter ah_created)
# The takeover routes rdma_destroy_ah_user (which the kernel's
# rdma_destroy_ah calls), not the kernel's rdma_create_ah: C creates these
# AHs, Rust destroys them.
kah "rv0, takeover on: the same, created by C, destroyed by the Rust core" \
	netdev=veth0 sgid_index="$v2_idx" full=1
ksft_check "the Rust core destroyed the two kernel AHs and created none" \
	test $(($(counter ah_destroyed) - destroyed)) = 2 -a "$(counter ah_created)" = "$created"
takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
# An empty slot of rv0's 32-entry GID table: rdma_get_gid_attr answers
# ENODATA, and the module's init passes it on.
ksft_check "a source GID index of an empty slot fails the test module with ENODATA (the checks can fail)" \
	bash -c "out=\$(insmod '$KAH' netdev=veth0 sgid_index=31 2>&1) && exit 1
		grep -q 'No data available' <<<\"\$out\" || { echo \"# insmod: \$out\"; exit 1; }"
ksft_check "rv0 has no PD or AH left" \
	bash -c "grep -qx 'pd 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources"

# xrcd_busy MODE - one case: rv_xrcd.ko's checks pass on rv0, and the core
# of MODE ran them: with Rust, one XRCD allocated and deallocated and one
# EBUSY counted, and traced (rverbs:rverbs_alloc_xrcd, _dealloc_xrcd: the
# same XRCD allocated, refused with EBUSY, deallocated); with C, no counter
# of the Rust core moves and nothing is traced.
xrcd_busy() {
	local mode=$1 before after ok=1 moved want trace t=/sys/kernel/tracing x
	[ -e $t/trace ] || mount -t tracefs tracefs $t
	: >$t/trace
	echo 1 >$t/events/rverbs/rverbs_alloc_xrcd/enable
	echo 1 >$t/events/rverbs/rverbs_dealloc_xrcd/enable
	before=$(counters_all)
	kmsg_mark
	insmod "$KXRCD" netdev=veth0 || ok=0
	kmsg_since | grep rv_xrcd | sed 's/^/# /'
	rmmod rv_xrcd 2>/dev/null
	echo 0 >$t/events/rverbs/rverbs_alloc_xrcd/enable
	echo 0 >$t/events/rverbs/rverbs_dealloc_xrcd/enable
	trace=$(grep -o 'rverbs_[a-z_]*: .*' $t/trace | sed 's/ ns=[0-9]*$//')
	printf '%s\n' "$trace" | sed 's/^/# /'
	x=$(printf '%s\n' "$trace" | sed -n 's/^rverbs_alloc_xrcd: device=rv0 xrcd=\([0-9a-f]*\) ret=0$/\1/p')
	want="rverbs_alloc_xrcd: device=rv0 xrcd=$x ret=0
rverbs_dealloc_xrcd: device=rv0 xrcd=$x ret=-16
rverbs_dealloc_xrcd: device=rv0 xrcd=$x ret=0"
	[ "$mode" = C ] && want=
	if [ "$trace" != "$want" ]; then
		ok=0
		ktap_print_msg "the rverbs XRCD tracepoints did not show the expected events"
	fi
	after=$(counters_all)
	moved=$(counters_moved "$before" "$after" | tr '\n' ' ')
	want="xrcd_allocated +1 xrcd_deallocated +1 error.16 +1 "
	[ "$mode" = C ] && want=
	if [ "$moved" != "$want" ]; then
		ok=0
		ktap_print_msg "the Rust core's counters moved: '$moved', want '$want'"
	fi
	grep -qx 'xrcd 0 max [0-9]*' $DBG/rv0/resources ||
		{ ok=0; ktap_print_msg "rv0 has an XRCD left: $(grep '^xrcd ' $DBG/rv0/resources)"; }
	if [ $ok = 1 ]; then
		ktap_test_pass "rv0: an XRCD in use is not deallocated (EBUSY), then is [$mode]"
	else
		ktap_test_fail "rv0: an XRCD in use is not deallocated (EBUSY), then is [$mode]"
	fi
}

# xrcd_across SWITCH - uverbs_hold allocates an XRCD (and a PD) on rv0,
# SWITCH changes the core, the holder frees them; prints its close_xrcd
# result.
xrcd_across() {
	local fifo=/tmp/rv0_kernel_ah.hold out=/tmp/rv0_kernel_ah.hold.out pid
	rm -f $fifo && mkfifo $fifo || return 1
	"$RVERBS_TEST_BIN"/uverbs_hold rv0 <$fifo >$out 2>&1 5>&- &
	pid=$!
	exec 5>$fifo
	# Generous: in the debug lane's second boot (one vCPU at the lowest
	# priority) a process can take many seconds to start.
	wait_until 120 grep -qx created $out || {
		exec 5>&-
		ktap_print_msg "uverbs_hold did not create its XRCD: $(tr '\n' ' ' <$out)"
		return 1
	}
	$1 >/dev/null || {
		exec 5>&-
		ktap_print_msg "$1 failed: livepatch $(cat $LP/enabled $LP/transition 2>&1 | tr '\n' ' ')"
		return 1
	}
	exec 5>&-
	wait $pid || { ktap_print_msg "uverbs_hold: $(tr '\n' ' ' <$out)"; return 1; }
	sed -n 's/^close_xrcd: //p' $out
}

ksft_check "rxe0 has no XRC: ib_alloc_xrcd_user fails with EOPNOTSUPP" \
	insmod "$KXRCD" netdev=vethk0 no_xrc=1
rmmod rv_xrcd 2>/dev/null
xrcd_busy C
takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
xrcd_busy Rust
before=$(counters_all)
ksft_check "rv0: an XRCD allocated by the Rust core is freed by C" test "$(xrcd_across takeover_off)" = 0
after=$(counters_all)
ksft_check "... counted as allocated, not deallocated, by Rust" \
	test "$(counters_moved "$before" "$after")" = "xrcd_allocated +1"
before=$(counters_all)
ksft_check "rv0: an XRCD allocated by C is freed by the Rust core" test "$(xrcd_across takeover_on)" = 0
after=$(counters_all)
ksft_check "... counted as deallocated, not allocated, by Rust" \
	test "$(counters_moved "$before" "$after")" = "xrcd_deallocated +1"
takeover_off || ktap_exit_fail_msg "cannot disable the takeover"

ktap_finished
