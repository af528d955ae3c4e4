#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python test suite (pyverbs) on rxe0, once with the C core
# and once with the Rust core: the AH tests (test_addr) and the UD traffic
# tests of test_qpex, test_cqex and test_cq_events must give the same
# results, test by test, in both modes, and the Rust run must have created
# its AHs in Rust.

. "$(dirname "$0")/lib.sh"

RDMA_CORE_TESTS=${RDMA_CORE_TESTS:-/opt/src/rdma-core/tests}
MODULES="test_addr test_qpex test_cqex test_cq_events"

trap teardown EXIT

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
ktap_set_plan 6

run_suite /tmp/rdmacore.c
c_total=$(wc -l </tmp/rdmacore.c)
c_pass=$(grep -c ' ok$' /tmp/rdmacore.c)
ktap_print_msg "C core: $c_total tests, $c_pass passed"
# The floor: what rdma-core 65.0's tests (scripts/toolchain.manifest) pass on soft-RoCE
# today; a regression that turns passes into skips must not go unseen.
RXE_MIN_PASS=29
ksft_check "rdma-core tests ran with the C core: $c_pass of $c_total passed, at least $RXE_MIN_PASS" \
	test "$c_pass" -ge $RXE_MIN_PASS
ksft_check "rdma-core tests pass with the C core (each ok or skipped, the run finished)" \
	bash -c '! grep -qvE " (ok|skipped)$" /tmp/rdmacore.c'
# What soft-RoCE skips, pinned by name (the same results with the Rust core
# are the diff below): a test that starts to skip, as one that starts to
# fail, is seen.
# Soft-RoCE has no XRC (IB_DEVICE_XRC clear): rdma-core 65.0 skips its
# three XRC tests of these modules.
RXE_SKIPS="tests.test_cqex.CqExTestCase.test_xrc_traffic_cq_ex tests.test_qpex.QpExTestCase.test_qp_ex_xrc_send tests.test_qpex.QpExTestCase.test_qp_ex_xrc_send_imm"
skips=$(awk -F '\t' '$2 == "skipped" { print $1 }' /tmp/rdmacore.c.full | sort | xargs)
ktap_print_msg "skipped on rxe0 with the C core: ${skips:-none}"
ksft_check "the tests skipped on rxe0 are the pinned ones" test "$skips" = "$RXE_SKIPS"

takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
created=$(counter ah_created)
run_suite /tmp/rdmacore.rust
rust_created=$(($(counter ah_created) - created))
takeover_off || ktap_exit_fail_msg "cannot disable the takeover"
ktap_print_msg "Rust core: $(wc -l </tmp/rdmacore.rust) tests, $(grep -c ' ok$' /tmp/rdmacore.rust) passed, $rust_created AHs created in Rust"

ksft_check "same results test by test with the Rust core" diff -u /tmp/rdmacore.c /tmp/rdmacore.rust
ksft_check "the Rust core created the AHs of the Rust run" test "$rust_created" -gt 0
ksft_check "every AH the Rust core created was destroyed" \
	test "$(counter ah_created)" = "$(counter ah_destroyed)"

ktap_finished
