/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h with rverbs' bound on one test case.
 *
 * The harness kills a case after TEST_TIMEOUT_DEFAULT seconds, 30 upstream:
 * a bound meant for native hardware.  Here every case runs under TCG, the
 * debug lane's under KASAN, lockdep and kmemleak beside a second guest, on
 * a host whose speed varies by a factor of two or more from one day to the
 * next: rv0_uverbs.sh's modify_qp_ud_every_state_pair (43 QPs created,
 * driven, drained and destroyed) passed there for weeks, then failed in
 * CI's debug lane on a slow day (2026-12-06; CI's log of it is not kept,
 * and 30 s is the likely cause).  The bound is against a hang, not a speed (the
 * kselftest runner's own timeout, tests/settings, bounds the whole
 * program), so it is 300 s.  TEST_F and TEST expand it where they are used,
 * after this header.
 */
#ifndef RVERBS_HARNESS_H
#define RVERBS_HARNESS_H

#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#endif
