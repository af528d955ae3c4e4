#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python test suite (pyverbs) on rxe0, once with the C core
# and once with the Rust core: the AH tests (test_addr), the QP tests
# (test_qp), the traffic tests of test_qpex, test_cqex and test_cq_events
# and the connection manager's (test_rdmacm) must give the same results,
# test by test, in both modes; the Rust run must have created its AHs in
# Rust, and made the reply addresses of the connections it accepted in Rust
# (ib_init_ah_attr_from_wc).

. "$(dirname "$0")/lib.sh"

RDMA_CORE_TESTS=${RDMA_CORE_TESTS:-/opt/src/rdma-core/tests}
MODULES="test_addr test_qp test_qpex test_cqex test_cq_events test_rdmacm"

trap 'echo 0 >/sys/kernel/tracing/events/kprobes/rverbs_diff_kah/enable 2>/dev/null; echo "-:rverbs_diff_kah" >>/sys/kernel/tracing/kprobe_events 2>/dev/null; teardown' EXIT

# run_suite OUT - rdma-core's tests on rxe0 (tests/lib.sh, rdmacore_run);
# OUT gets one "name result" line per test, sorted. A run that did not
# finish is the line "run_tests.py ERROR", which fails the checks below.
run_suite() {
	rdmacore_run "$1.full" rxe0 900 $MODULES
	cut -f 1,2 "$1.full" | tr '\t' ' ' >"$1"
}

ktap_print_header
[ -d "$RDMA_CORE_TESTS" ] || ktap_exit_fail_msg "rdma-core tests not found in $RDMA_CORE_TESTS"
modprobe rdma_rxe && modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rxe0 type rxe netdev veth0 || ktap_exit_fail_msg "setup failed"
ktap_set_plan 7

run_suite /tmp/rdmacore.c
c_total=$(wc -l </tmp/rdmacore.c)
c_pass=$(grep -c ' ok$' /tmp/rdmacore.c)
ktap_print_msg "C core: $c_total tests, $c_pass passed"
# The floor: what rdma-core 65.0's tests (scripts/toolchain.manifest) pass on soft-RoCE
# today; a regression that turns passes into skips must not go unseen.
RXE_MIN_PASS=63
ksft_check "rdma-core tests ran with the C core: $c_pass of $c_total passed, at least $RXE_MIN_PASS" \
	test "$c_pass" -ge $RXE_MIN_PASS
ksft_check "rdma-core tests pass with the C core (each ok or skipped, the run finished)" \
	bash -c '! grep -qvE " (ok|skipped)$" /tmp/rdmacore.c'
# What soft-RoCE skips, pinned by name (the same results with the Rust core
# are the diff below): a test that starts to skip, as one that starts to
# fail, is seen.
# Soft-RoCE has no XRC (IB_DEVICE_XRC clear): rdma-core 65.0 skips its
# three XRC tests of these modules.
# Nor raw packet QPs (IBV_QPT_RAW_PACKET): test_qp skips its six.
RXE_SKIPS="tests.test_cqex.CqExTestCase.test_xrc_traffic_cq_ex tests.test_qp.QPTest.test_create_raw_qp_ex_no_attr tests.test_qp.QPTest.test_create_raw_qp_ex_with_attr tests.test_qp.QPTest.test_create_raw_qp_no_attr tests.test_qp.QPTest.test_create_raw_qp_with_attr tests.test_qp.QPTest.test_query_raw_qp tests.test_qp.QPTest.test_raw_qp_rate_limit_modify tests.test_qpex.QpExTestCase.test_qp_ex_xrc_send tests.test_qpex.QpExTestCase.test_qp_ex_xrc_send_imm"
skips=$(awk -F '\t' '$2 == "skipped" { print $1 }' /tmp/rdmacore.c.full | sort | xargs)
ktap_print_msg "skipped on rxe0 with the C core: ${skips:-none}"
ksft_check "the tests skipped on rxe0 are the pinned ones" test "$skips" = "$RXE_SKIPS"

# The kernel's own AHs (ib_cm's replies: ib_create_ah_from_wc) are made by
# ib_core's rdma_create_ah, which the takeover leaves in C, and destroyed
# through rdma_destroy_ah_user, which it routes to Rust: counted by a kprobe.
KP=/sys/kernel/tracing
echo "p:rverbs_diff_kah rdma_create_ah" >>$KP/kprobe_events &&
	echo 1 >$KP/events/kprobes/rverbs_diff_kah/enable || ktap_exit_fail_msg "cannot probe rdma_create_ah"
kernel_ahs() { awk '$1 == "rverbs_diff_kah" { print $2 }' $KP/kprobe_profile; }

takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
created=$(counter ah_created)
destroyed=$(counter ah_destroyed)
kahs=$(kernel_ahs)
from_wc=$(counter ah_attr_from_wc)
run_suite /tmp/rdmacore.rust
rust_created=$(($(counter ah_created) - created))
rust_from_wc=$(($(counter ah_attr_from_wc) - from_wc))
# Every AH of the run destroyed: those Rust created and the kernel's (the
# CM's reply AHs go when their MAD's send completes).
balanced() {
	rust_destroyed=$(($(counter ah_destroyed) - destroyed))
	kernel_created=$(($(kernel_ahs) - kahs))
	[ "$rust_destroyed" = $((rust_created + kernel_created)) ]
}
wait_until 30 balanced
takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
ktap_print_msg "Rust core: $(wc -l </tmp/rdmacore.rust) tests, $(grep -c ' ok$' /tmp/rdmacore.rust) passed, $rust_created AHs created in Rust, $rust_from_wc reply addresses made in Rust"

ksft_check "same results test by test with the Rust core" diff -u /tmp/rdmacore.c /tmp/rdmacore.rust
ksft_check "the Rust core created the AHs of the Rust run" test "$rust_created" -gt 0
ksft_check "the Rust core made the reply addresses of the connections of the Rust run" \
	test "$rust_from_wc" -gt 0
ktap_print_msg "Rust run: $rust_created AHs created in Rust, $kernel_created by the kernel in C, $rust_destroyed destroyed in Rust"
ksft_check "every AH of the Rust run was destroyed in Rust (its own and the kernel's)" balanced
echo 0 >$KP/events/kprobes/rverbs_diff_kah/enable
echo "-:rverbs_diff_kah" >>$KP/kprobe_events

ktap_finished
