// SPDX-License-Identifier: GPL-2.0

//! The timers of an RC QP's requester (`rxe_comp.c:retransmit_timer`,
//! `rnr_nak_timer`): delayed work on the system workqueue, one of each
//! per QP, no global lock. The retransmit timer is put off by every
//! answer (a flag the work checks when it fires); `destroy_qp` marks the
//! requester dead and runs what is queued at once.

use super::{
    comp::{
        fail_locked,
        qp_error,
        rewind, //
    },
    ReqState,
    RETRY_FOREVER, //
};
use crate::rdma::wc::WcStatus;
use crate::sw::{
    qp::QpCore,
    tx::TxFlow, //
};
use kernel::{
    sync::{
        Arc,
        ArcBorrow, //
    },
    workqueue,
};

/// Queues the retransmit timer if packets are in flight and it is not
/// queued.
pub(crate) fn arm_retry(qp: ArcBorrow<'_, QpCore>, r: &mut ReqState) {
    if r.timer_armed || r.dead || r.failed || r.timeout == 0 || r.una == r.sent {
        return;
    }
    let timer = Arc::from(qp);
    if workqueue::system()
        .enqueue_delayed::<Arc<QpCore>, 1>(timer, r.timeout)
        .is_ok()
    {
        r.timer_armed = true;
    }
}

/// The retransmit timer of `qp` fired (`rxe_comp.c:retransmit_timer`,
/// `COMPST_ERROR_RETRY`): nothing acknowledged for a whole timeout, so
/// the requester sends again from the oldest unacknowledged packet, or
/// the retries are used up and the oldest work request completes with
/// `IB_WC_RETRY_EXC_ERR`. Process context (the system workqueue).
pub(crate) fn retry_fired(qp: Arc<QpCore>) {
    let qp = qp.as_arc_borrow();
    let mut r = qp.req.lock();
    r.timer_armed = false;
    if r.dead || r.failed || r.una == r.sent {
        return;
    }
    if r.progress {
        // Moved on meanwhile: another whole timeout from now.
        r.progress = false;
        arm_retry(qp, &mut r);
        return;
    }
    if r.retry_left == 0 {
        fail_locked(&qp, &mut r, WcStatus::RetryExcErr);
        drop(r);
        qp_error(qp);
        return;
    }
    if r.retry_left != RETRY_FOREVER {
        r.retry_left -= 1;
    }
    let una = r.una;
    rewind(&qp, &mut r, una);
    // Answers showing a loss start no retry of their own until one moves
    // things on (`rxe_comp.c`: the timer's retry sets `started_retry`).
    r.early_retry = true;
    arm_retry(qp, &mut r);
    drop(r);
    TxFlow::kick(&qp.tx);
}

/// The RNR timer of `qp` ran out: the requester sends again.
pub(crate) fn rnr_fired(qp: Arc<QpCore>) {
    let mut r = qp.req.lock();
    if r.dead {
        return;
    }
    r.rnr_wait = false;
    drop(r);
    TxFlow::kick(&qp.tx);
}
