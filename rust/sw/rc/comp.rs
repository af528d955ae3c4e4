// SPDX-License-Identifier: GPL-2.0

//! The completer of an RC QP (`rxe_comp.c`): acknowledgements and NAKs
//! complete the send work requests in order, rewind the requester to
//! what must be sent again, and fail the QP when retries run out; the
//! retransmit timer and the RNR timer (delayed work on the system
//! workqueue, one of each per QP, no global lock).

use super::{
    psn_distance,
    rnr_jiffies,
    ReqState,
    AETH_NAK_INVALID_REQ,
    AETH_NAK_PSN_SEQ_ERROR,
    AETH_NAK_REM_ACC_ERR,
    RETRY_FOREVER, //
};
use crate::net::skb::DropReason;
use crate::rdma::{
    driver::DriverDevice,
    qp::{
        Psn,
        QpState, //
    },
    wc::{
        UserWc,
        WcFlag,
        WcFlags,
        WcOpcode,
        WcStatus, //
    },
};
use crate::sw::{
    device::Rv,
    qp::QpCore,
    tx::TxFlow,
    wire::{
        Count,
        Incoming, //
    },
};
use kernel::{
    sync::{
        Arc,
        ArcBorrow, //
    },
    workqueue,
};

/// Completes, in order, the send work requests acknowledged, and fails
/// the QP at one refused before it was sent. Any context.
pub(crate) fn complete(qp: ArcBorrow<'_, QpCore>) {
    let mut r = qp.req.lock();
    let failed = complete_locked(&qp, &mut r);
    drop(r);
    if failed {
        qp_error(qp);
    }
}

/// [`complete`] under the lock: whether the QP failed.
fn complete_locked(qp: &QpCore, r: &mut ReqState) -> bool {
    while r.comp != r.fresh && !r.failed {
        let slot = r.comp;
        // CAST: A slot.
        let p = r.pending[slot as usize];
        if let Some(status) = p.error {
            fail_locked(qp, r, status);
            return true;
        }
        if !p.last.before(r.una) {
            return false;
        }
        if p.signaled {
            // `rxe_comp.c:make_send_cqe`.
            let wc = UserWc {
                wr_id: p.wr_id,
                status: WcStatus::Success,
                opcode: if p.write {
                    WcOpcode::RdmaWrite
                } else {
                    WcOpcode::Send
                },
                byte_len: p.len,
                qp_num: qp.qpn,
                wc_flags: if p.imm {
                    WcFlag::WithImm.into()
                } else {
                    WcFlags::empty()
                },
                ..UserWc::default()
            };
            // A full CQ loses it after `IB_EVENT_CQ_ERR` (`do_complete`).
            let _ = qp.send_cq.post(&wc, false);
        }
        r.comp = qp.sq.next(slot);
        qp.sq.publish_consumer(r.comp);
    }
    false
}

/// The oldest work request completes with `status` and the QP fails:
/// nothing more is sent, the rest is flushed.
fn fail_locked(qp: &QpCore, r: &mut ReqState, status: WcStatus) {
    if r.comp != r.fresh {
        // CAST: A slot.
        let wr_id = r.pending[r.comp as usize].wr_id;
        let _ = qp
            .send_cq
            .post(&UserWc::error(wr_id, status, qp.qpn), false);
        r.comp = qp.sq.next(r.comp);
        qp.sq.publish_consumer(r.comp);
    }
    r.failed = true;
    r.next = r.fresh;
}

/// The QP goes to error; its queues are flushed from a work item.
fn qp_error(qp: ArcBorrow<'_, QpCore>) {
    qp.attrs.lock().qp_state = QpState::Err;
    QpCore::flush_later(qp);
}

/// The requester could not send the work request in `slot`: it completes
/// with `status` once those before it have, and the QP fails.
pub(crate) fn fail_at(qp: ArcBorrow<'_, QpCore>, slot: u32, status: WcStatus) {
    let mut r = qp.req.lock();
    // CAST: A slot.
    r.pending[slot as usize].error = Some(status);
    let failed = complete_locked(&qp, &mut r);
    // Nothing after it is sent.
    r.next = r.fresh;
    drop(r);
    if failed {
        qp_error(qp);
    }
}

/// Moves the requester to `to` (`rxe_req.c:req_retry`): back to a PSN of
/// a work request in flight, to send again from that packet, or forward
/// past packets acknowledged before it sent them again (then, past every
/// work request begun, to the next one).
fn rewind(qp: &QpCore, r: &mut ReqState, to: Psn) {
    let mut slot = r.comp;
    while slot != r.fresh {
        // CAST: A slot.
        let p = r.pending[slot as usize];
        if p.error.is_none() && !to.before(p.first) && !p.last.before(to) {
            r.next = slot;
            r.offset = psn_distance(p.first, to) * r.mtu;
            r.psn = to;
            return;
        }
        slot = qp.sq.next(slot);
    }
    r.next = r.fresh;
    r.offset = 0;
    r.psn = to;
}

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

/// An acknowledgement, a NAK or an RNR NAK for `qp` (`rxe_comp.c`): what
/// to count, and why the packet is dropped (`None`: taken). Any context.
pub(crate) fn on_ack(
    dev: &DriverDevice<Rv>,
    qp: ArcBorrow<'_, QpCore>,
    pkt: &Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let syndrome = pkt.aeth >> 24;
    let psn = pkt.psn;
    let mut r = qp.req.lock();
    // For a PSN in flight: duplicates and forgeries are dropped.
    if r.dead || r.failed || psn.before(r.una) || !psn.before(r.sent) {
        return (Count::RcStale, Some(DropReason::NotSpecified));
    }
    let before = r.una;
    let mut kick = false;
    let mut fail = None;
    match syndrome >> 5 {
        // ACK: everything up to `psn`.
        0 => r.una = psn.next(),
        // RNR NAK: everything before `psn`; `psn` again after the timer.
        1 => {
            r.una = psn;
            if r.rnr_left == 0 {
                fail = Some(WcStatus::RnrRetryExcErr);
            } else {
                if r.rnr_left != RETRY_FOREVER {
                    r.rnr_left -= 1;
                }
                if !r.rnr_wait {
                    r.rnr_wait = true;
                    let timer = Arc::from(qp);
                    // Already queued: that wait stands.
                    let _ = workqueue::system()
                        .enqueue_delayed::<Arc<QpCore>, 2>(timer, rnr_jiffies(syndrome));
                }
                rewind(&qp, &mut r, psn);
            }
        }
        // NAK: everything before `psn`.
        3 => {
            r.una = psn;
            match syndrome {
                AETH_NAK_PSN_SEQ_ERROR => {
                    dev.wire_counters().count(Count::RcNakReceived);
                    if r.retry_left == 0 {
                        fail = Some(WcStatus::RetryExcErr);
                    } else {
                        if r.retry_left != RETRY_FOREVER {
                            r.retry_left -= 1;
                        }
                        rewind(&qp, &mut r, psn);
                        kick = true;
                    }
                }
                AETH_NAK_INVALID_REQ => fail = Some(WcStatus::RemInvReqErr),
                AETH_NAK_REM_ACC_ERR => fail = Some(WcStatus::RemAccessErr),
                _ => fail = Some(WcStatus::RemOpErr),
            }
        }
        _ => return (Count::Opcode, Some(DropReason::NotSpecified)),
    }
    // Any answer puts the retransmit timer off by a timeout
    // (`rxe_comp.c:rxe_completer`, `COMPST_EXIT`).
    r.progress = true;
    if r.una != before {
        // Progress: the retry counts start over (`reset_retry_counters`).
        r.retry_left = r.retry_cnt;
        if syndrome >> 5 == 0 {
            r.rnr_left = r.rnr_retry;
        }
    }
    let mut failed = complete_locked(&qp, &mut r);
    if r.psn.before(r.una) {
        // Acknowledged past what the requester is sending again.
        let una = r.una;
        rewind(&qp, &mut r, una);
    }
    if let (Some(status), false) = (fail, failed) {
        fail_locked(&qp, &mut r, status);
        failed = true;
    }
    if r.window_full && !failed {
        r.window_full = false;
        kick = true;
    }
    arm_retry(qp, &mut r);
    drop(r);
    if failed {
        qp_error(qp);
    } else if kick {
        TxFlow::kick(&qp.tx);
    }
    (Count::RcAck, None)
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
