// SPDX-License-Identifier: GPL-2.0

//! The completer of an RC QP (`rxe_comp.c`): acknowledgements and NAKs
//! complete the send work requests in order, rewind the requester to
//! what must be sent again, and fail the QP when retries run out; the
//! retransmit timer and the RNR timer (delayed work on the system
//! workqueue, one of each per QP, no global lock).

use super::{
    psn_distance,
    rnr_jiffies,
    Kind,
    ReqState,
    AETH_NAK_INVALID_REQ,
    AETH_NAK_PSN_SEQ_ERROR,
    AETH_NAK_REM_ACC_ERR,
    RETRY_FOREVER, //
};
use crate::net::skb::DropReason;
use crate::rdma::rxe_abi::wqe::SendWqe;
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
        opcode::Hdrs,
        Count,
        Incoming, //
    },
};
use crate::sync::SpinLockBhBackend;
use kernel::{
    sync::{
        lock::Guard,
        rcu,
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

/// [`complete`] under the lock: whether the QP failed. The last work
/// request begun before the QP moved to SQD completing reports
/// `IB_EVENT_SQ_DRAINED` (`rxe_comp.c:comp_check_sq_drain_done`).
pub(super) fn complete_locked(qp: &QpCore, r: &mut ReqState) -> bool {
    let failed = complete_in_order(qp, r);
    if r.draining && !failed && r.idle() {
        r.draining = false;
        // The handler takes no lock of ours (uverbs queues the event).
        qp.events.sq_drained();
    }
    failed
}

/// The completions of [`complete_locked`].
fn complete_in_order(qp: &QpCore, r: &mut ReqState) -> bool {
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
        if p.kind.credit() {
            // A credit back: a READ or atomic waiting for one goes.
            r.reads_out = r.reads_out.saturating_sub(1);
        }
        // The slot is free before its completion is seen: userspace may
        // post into it as soon as it polls the completion.
        r.comp = qp.sq.next(slot);
        qp.sq.publish_consumer(r.comp);
        if p.signaled {
            // `rxe_comp.c:make_send_cqe`.
            let wc = UserWc {
                wr_id: p.wr_id,
                status: WcStatus::Success,
                opcode: match p.kind {
                    Kind::Send => WcOpcode::Send,
                    Kind::Write => WcOpcode::RdmaWrite,
                    Kind::Read => WcOpcode::RdmaRead,
                    Kind::CmpSwap => WcOpcode::CompSwap,
                    Kind::FetchAdd => WcOpcode::FetchAdd,
                    Kind::AtomicWrite => WcOpcode::AtomicWrite,
                    Kind::SendInv => WcOpcode::Send,
                    Kind::Bind => WcOpcode::BindMw,
                    Kind::LocalInv => WcOpcode::LocalInv,
                    Kind::Flush => WcOpcode::Flush,
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
    }
    false
}

/// The oldest work request completes with `status` and the QP fails:
/// nothing more is sent, the rest is flushed.
pub(super) fn fail_locked(qp: &QpCore, r: &mut ReqState, status: WcStatus) {
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
pub(super) fn qp_error(qp: ArcBorrow<'_, QpCore>) {
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
    r.refused = true;
    drop(r);
    if failed {
        qp_error(qp);
    }
}

/// Moves the requester to `to` (`rxe_req.c:req_retry`): back to a PSN of
/// a work request in flight, to send again from that packet, or forward
/// past packets acknowledged before it sent them again (then, past every
/// work request begun, to the next one).
pub(super) fn rewind(qp: &QpCore, r: &mut ReqState, to: Psn) {
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

/// The first READ or atomic in flight at or before `psn`, if any: the
/// first PSN of it not answered, and whether `psn` is past its last (an
/// answer of a later work request). An answer of `psn` stands for what
/// came before that READ only.
fn up_to_read(qp: &QpCore, r: &ReqState, psn: Psn) -> Option<(Psn, bool)> {
    let mut slot = r.comp;
    while slot != r.fresh {
        // CAST: A slot.
        let p = r.pending[slot as usize];
        if p.first.before(psn.next()) && p.kind.responds() && p.error.is_none() {
            let from = if p.first.before(r.una) {
                r.una
            } else {
                p.first
            };
            return Some((from, p.last.before(psn)));
        }
        if psn.before(p.first) {
            break;
        }
        slot = qp.sq.next(slot);
    }
    None
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
    // An answer does not stand for a READ's responses or an atomic's
    // acknowledgement (`rxe_comp.c:check_ack` expects them).
    let limited = match up_to_read(&qp, &r, psn) {
        // An answer of a later work request: the READ's or atomic's
        // answers were lost (`rxe_comp.c:check_psn`, `COMPST_ERROR_RETRY`,
        // once per loss).
        Some((_, true)) => return super::lost::skipped(qp, r, psn),
        // An acknowledgement within a READ's PSNs stands for no response
        // (`check_psn`: `COMPST_DONE`); the timer asks again.
        Some(_) if syndrome >> 5 == 0 => {
            return (Count::RcStale, Some(DropReason::NotSpecified));
        }
        // A NAK of the READ or atomic itself.
        Some((from, false)) => Some(from),
        None => None,
    };
    let psn = limited.unwrap_or(psn);
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
        r.early_retry = false;
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
    if r.waiting && !failed {
        r.waiting = false;
        kick = true;
    }
    super::timer::arm_retry(qp, &mut r);
    drop(r);
    if failed {
        qp_error(qp);
    } else if kick {
        TxFlow::kick(&qp.tx);
    }
    (Count::RcAck, None)
}

/// An RDMA READ response for `qp` (`rxe_comp.c`, `do_read`): the one of
/// the oldest PSN not acknowledged, which acknowledges what came before
/// it, written into the READ's buffer at its place. A response out of
/// order is dropped (the retransmit timer asks again). Any context.
pub(crate) fn on_read_response(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: ArcBorrow<'_, QpCore>,
    pkt: &Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let stale = (Count::RcStale, Some(DropReason::NotSpecified));
    let psn = pkt.psn;
    let mut r = qp.req.lock();
    if r.dead || r.failed || psn.before(r.una) || !psn.before(r.sent) {
        return stale;
    }
    if psn != r.una {
        return super::lost::skipped(qp, r, psn);
    }
    r.progress = true;
    // What came before the READ is acknowledged by its response.
    if complete_locked(&qp, &mut r) {
        drop(r);
        qp_error(qp);
        return stale;
    }
    let slot = r.comp;
    if slot == r.fresh {
        return stale;
    }
    // CAST: A slot.
    let p = r.pending[slot as usize];
    if matches!(p.kind, Kind::AtomicWrite | Kind::Flush) {
        // Its answer (`rxe_comp.c:check_ack`, `COMPST_WRITE_SEND`, and
        // `do_read` of nothing for a FLUSH): a READ response of no data,
        // its own PSN.
        if psn != p.first || !pkt.opcode.hdrs.has(Hdrs::START.with(Hdrs::END)) {
            return stale;
        }
        if !pkt.payload.is_empty() {
            return stale;
        }
        return acknowledged(qp, r, psn);
    }
    if p.kind != Kind::Read || psn.before(p.first) || p.last.before(psn) {
        return stale;
    }
    let index = psn_distance(p.first, psn);
    // CAST: Below 2^31 (a READ's packets times the MTU).
    let off = index * r.mtu;
    let want = p.len.saturating_sub(off).min(r.mtu);
    let first = pkt.opcode.hdrs.has(Hdrs::START);
    let last = pkt.opcode.hdrs.has(Hdrs::END);
    // CAST: At most 4096 (parsed).
    if first != (index == 0) || last != (psn == p.last) || pkt.payload.len() as u32 != want {
        return stale;
    }
    let placed = match r.slot(slot).and_then(SendWqe::new) {
        // CAST: Below 2^31.
        Some(w) => scatter_local(dev, guard, &qp, &w, off as usize, pkt.payload),
        None => Err(WcStatus::LocQpOpErr),
    };
    if let Err(status) = placed {
        fail_locked(&qp, &mut r, status);
        drop(r);
        qp_error(qp);
        return (Count::RcAck, None);
    }
    acknowledged(qp, r, psn)
}

/// The answer of `psn`, a READ's last or an atomic's, was taken: what
/// came up to it completes, the requester moves past it and goes on.
fn acknowledged(
    qp: ArcBorrow<'_, QpCore>,
    mut r: Guard<'_, ReqState, SpinLockBhBackend>,
    psn: Psn,
) -> (Count, Option<DropReason>) {
    r.una = psn.next();
    r.retry_left = r.retry_cnt;
    r.early_retry = false;
    let failed = complete_locked(&qp, &mut r);
    if r.psn.before(r.una) {
        let una = r.una;
        rewind(&qp, &mut r, una);
    }
    let kick = !failed && r.waiting;
    if kick {
        r.waiting = false;
    }
    super::timer::arm_retry(qp, &mut r);
    drop(r);
    if failed {
        qp_error(qp);
    } else if kick {
        TxFlow::kick(&qp.tx);
    }
    (Count::RcAck, None)
}

/// An atomic acknowledgement for `qp` (`rxe_comp.c`, `do_atomic`): the
/// one of the oldest PSN not acknowledged, an atomic's, which
/// acknowledges what came before it; the value before the atomic is
/// written into the atomic's buffer (8 bytes, in the host's order). Any
/// other is dropped. Any context.
pub(crate) fn on_atomic_ack(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: ArcBorrow<'_, QpCore>,
    pkt: &Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let stale = (Count::RcStale, Some(DropReason::NotSpecified));
    let psn = pkt.psn;
    let mut r = qp.req.lock();
    if r.dead || r.failed || psn.before(r.una) || !psn.before(r.sent) || pkt.aeth >> 29 != 0 {
        return stale;
    }
    if psn != r.una {
        return super::lost::skipped(qp, r, psn);
    }
    r.progress = true;
    if complete_locked(&qp, &mut r) {
        drop(r);
        qp_error(qp);
        return stale;
    }
    let slot = r.comp;
    // CAST: A slot.
    if slot == r.fresh || r.pending[slot as usize].first != psn {
        return stale;
    }
    // CAST: A slot.
    if !r.pending[slot as usize].kind.atomic() {
        return stale;
    }
    let orig = pkt.orig.to_ne_bytes();
    let placed = match r.slot(slot).and_then(SendWqe::new) {
        Some(w) => scatter_local(dev, guard, &qp, &w, 0, &orig),
        None => Err(WcStatus::LocQpOpErr),
    };
    if let Err(status) = placed {
        fail_locked(&qp, &mut r, status);
        drop(r);
        qp_error(qp);
        return (Count::RcAck, None);
    }
    acknowledged(qp, r, psn)
}

/// Writes `payload` at byte `off` of the buffer of `w`'s SGEs, in `qp`'s
/// memory regions with local write access: `IB_WC_LOC_PROT_ERR` for a bad
/// SGE, `IB_WC_LOC_LEN_ERR` past their end.
fn scatter_local(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    w: &SendWqe<'_>,
    off: usize,
    payload: &[u8],
) -> core::result::Result<(), WcStatus> {
    let n = w.num_sge().min(qp.cap.max_send_sge);
    crate::sw::sge::scatter(dev, guard, qp.pd, n, |i| w.sge(i), off, payload)
}
