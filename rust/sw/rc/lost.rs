// SPDX-License-Identifier: GPL-2.0

//! Answers that show a READ's or an atomic's answers lost
//! (`rxe_comp.c:check_psn`, `COMPST_ERROR_RETRY`): the requester asks again
//! at once, not at the retransmit timer.

use super::{
    comp::{
        complete_locked,
        fail_locked,
        qp_error,
        rewind, //
    },
    ReqState,
    RETRY_FOREVER, //
};
use crate::net::skb::DropReason;
use crate::rdma::{
    qp::Psn,
    wc::WcStatus, //
};
use crate::sw::{
    qp::QpCore,
    tx::TxFlow,
    wire::Count, //
};
use crate::sync::SpinLockBhBackend;
use kernel::sync::{
    lock::Guard,
    ArcBorrow, //
};

/// An answer of `psn` (a READ response or an atomic acknowledgement), past
/// the oldest PSN not acknowledged and before what was sent. If it
/// answers a work request after a READ or atomic whose answers have not
/// come, the responder executed that one and its answers were lost: what
/// came before it is acknowledged, and the requester sends it again at
/// once instead of at the retransmit timer, spending one of the QP's
/// retries (`IB_WC_RETRY_EXC_ERR` when none is left), as
/// `rxe_comp.c:check_psn` does (`COMPST_ERROR_RETRY`). Once per loss: until
/// an answer moves things on, more such answers are only dropped, as is
/// an answer out of order within the oldest READ's own (the timer asks
/// again).
pub(super) fn skipped(
    qp: ArcBorrow<'_, QpCore>,
    mut r: Guard<'_, ReqState, SpinLockBhBackend>,
    psn: Psn,
) -> (Count, Option<DropReason>) {
    let stale = (Count::RcStale, Some(DropReason::NotSpecified));
    if r.early_retry {
        return stale;
    }
    // The oldest READ or atomic not answered, at or before `psn`.
    let mut slot = r.comp;
    let mut lost = None;
    while slot != r.fresh {
        // CAST: A slot.
        let p = r.pending[slot as usize];
        if psn.before(p.first) || p.error.is_some() {
            break;
        }
        if p.kind.responds() {
            if p.last.before(psn) {
                lost = Some(if p.first.before(r.una) {
                    r.una
                } else {
                    p.first
                });
            }
            break;
        }
        slot = qp.sq.next(slot);
    }
    let Some(from) = lost else {
        return stale;
    };
    r.una = from;
    let mut failed = complete_locked(&qp, &mut r);
    if !failed {
        if r.retry_left == 0 {
            fail_locked(&qp, &mut r, WcStatus::RetryExcErr);
            failed = true;
        } else {
            if r.retry_left != RETRY_FOREVER {
                r.retry_left -= 1;
            }
            r.early_retry = true;
            rewind(&qp, &mut r, from);
            r.waiting = false;
        }
    }
    drop(r);
    if failed {
        qp_error(qp);
    } else {
        TxFlow::kick(&qp.tx);
    }
    stale
}
