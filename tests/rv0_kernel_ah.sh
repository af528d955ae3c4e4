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

. "$(dirname "$0")/lib.sh"

KAH=${RVERBS_KAH:-$RVERBS_TOP/tests/test_modules/rv_kernel_ah.ko}
DBG=/sys/kernel/debug/rverbs

trap 'rmmod rv_kernel_ah 2>/dev/null; teardown; ip link del vethk0 2>/dev/null' EXIT

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
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	ip link add vethk0 type veth peer name vethk1 && ip addr add 198.18.1.1/24 dev vethk0 &&
	ip link set vethk0 up && ip link set vethk1 up &&
	rdma link add rxe0 type rxe netdev vethk0 &&
	rdma link add rv0 type rverbs netdev veth0 || ktap_exit_fail_msg "setup failed"
ktap_set_plan 7

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
ksft_check "a bad source GID index fails the test module (the checks can fail)" \
	bash -c "! insmod '$KAH' netdev=veth0 sgid_index=31 2>/dev/null"
ksft_check "rv0 has no PD or AH left" \
	bash -c "grep -qx 'pd 0 max [0-9]*' $DBG/rv0/resources && grep -qx 'ah 0 max [0-9]*' $DBG/rv0/resources"

ktap_finished
