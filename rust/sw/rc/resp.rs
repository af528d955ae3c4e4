// SPDX-License-Identifier: GPL-2.0

//! The responder of an RC QP (`rxe_resp.c`): requests taken in PSN order
//! into the receive ring, acknowledged when the requester asks; a
//! duplicate is acknowledged again, a gap answered with one sequence error
//! NAK, a request with no receive posted with an RNR NAK.

use super::{
    rkey::remote,
    Answer,
    InMsg,
    AETH_ACK_UNLIMITED,
    AETH_NAK_INVALID_REQ,
    AETH_NAK_PSN_SEQ_ERROR,
    AETH_NAK_REM_ACC_ERR,
    AETH_NAK_REM_OP_ERR,
    AETH_RNR_NAK, //
    MAX_MSG,
};
use crate::net::skb::DropReason;
use crate::rdma::{
    driver::DriverDevice,
    mr::{
        Access,
        AccessFlags, //
    },
    qp::{
        Psn,
        QpAttrs,
        QpState, //
    },
    rxe_abi::wqe::RecvWqe,
    wc::{
        UserWc,
        WcFlag,
        WcFlags,
        WcOpcode,
        WcStatus, //
    },
};
use crate::sw::{
    cq::CqFull,
    datapath::PORT,
    device::Rv,
    mw::{
        self,
        Invalidator, //
    },
    qp::{
        QpCore,
        RecvState, //
    },
    wire::{
        opcode::{
            Hdrs,
            Operation, //
        },
        Count,
        Incoming, //
    },
};
use kernel::sync::{
    rcu,
    ArcBorrow, //
};

/// A request for `qp`, an RC QP in a state that receives, from the path's
/// destination: what to count, and why the packet is dropped (`None`:
/// taken). Any context.
pub(crate) fn request(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: ArcBorrow<'_, QpCore>,
    a: &QpAttrs,
    pkt: &Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let mtu = a.path_mtu.bytes().unwrap_or(256);
    let (result, answer, failed, sender) = {
        let mut rs = qp.recv.lock();
        let expected = rs.resp.psn;
        let msn = rs.resp.msn;
        let taken = if pkt.psn.before(expected) && pkt.opcode.operation() == Operation::Read {
            // A duplicate READ is executed again from its own RETH (the
            // requester asks for what it is missing), without a lock.
            let (va, rkey, len) = pkt.reth;
            let read = Answer::Read {
                psn: pkt.psn,
                va,
                rkey,
                len,
                msn,
            };
            ((Count::RcDuplicate, None), Some(read), false)
        } else if let (true, Operation::Atomic(_) | Operation::AtomicWrite | Operation::Flush) =
            (pkt.psn.before(expected), pkt.opcode.operation())
        {
            // A duplicate atomic is answered with the value it found (an
            // ATOMIC WRITE or a FLUSH with its response), if it is
            // remembered, never executed again; else dropped
            // (`rxe_resp.c:duplicate_request`, class D).
            let write = matches!(
                pkt.opcode.operation(),
                Operation::AtomicWrite | Operation::Flush
            );
            let replay = rs.resp.kept_atomic(pkt.psn).map(|orig| match write {
                true => super::atomic::response(pkt.psn, msn),
                false => Answer::Atomic {
                    psn: pkt.psn,
                    orig,
                    msn,
                },
            });
            let drop = replay.is_none().then_some(DropReason::NotSpecified);
            ((Count::RcDuplicate, drop), replay, false)
        } else if pkt.psn.before(expected) {
            // A duplicate SEND is acknowledged again, with the PSN before
            // the one expected (C9-105, `rxe_resp.c:duplicate_request`).
            let prev = Psn::new(expected.value().wrapping_sub(1));
            let ack = Answer::Ack {
                syndrome: AETH_ACK_UNLIMITED,
                psn: prev,
                msn,
            };
            ((Count::RcDuplicate, None), Some(ack), false)
        } else if expected.before(pkt.psn) {
            // A gap: one NAK until the expected PSN comes (`check_psn`).
            let nak = (!rs.resp.nak_sent).then_some(Answer::Ack {
                syndrome: AETH_NAK_PSN_SEQ_ERROR,
                psn: expected,
                msn,
            });
            rs.resp.nak_sent = true;
            (
                (Count::RcSequence, Some(DropReason::NotSpecified)),
                nak,
                false,
            )
        } else {
            rs.resp.nak_sent = false;
            match take(dev, guard, &qp, a, &mut rs, pkt, mtu) {
                Ok((ans, failed)) => ((Count::Received, None), ans, failed),
                Err(fault) => refused(dev, &qp, a, &mut rs, pkt, fault),
            }
        };
        // READ responses wait in the queue of answers, and what is
        // answered after a READ behind them; this path sends them if no
        // one else is (its share; the send work the rest).
        match taken.1 {
            Some(ans)
                if rs.resp.queued() || rs.resp.held() || matches!(ans, Answer::Read { .. }) =>
            {
                rs.resp.push(ans);
                (taken.0, None, taken.2, rs.resp.hold())
            }
            answer => (taken.0, answer, taken.2, false),
        }
    };
    if sender {
        super::answer::send_held(dev, &qp, super::answer::Sender::Receive);
    }
    if failed {
        qp.attrs.lock().qp_state = QpState::Err;
        QpCore::flush_later(qp);
    }
    match answer {
        Some(Answer::Ack { syndrome, psn, msn }) => {
            if syndrome != AETH_ACK_UNLIMITED {
                dev.wire_counters().count(Count::RcNakSent);
            }
            super::answer::send_ack(dev, &qp, a, syndrome, psn, msn, None);
        }
        Some(Answer::Atomic { psn, orig, msn }) => {
            super::answer::send_ack(dev, &qp, a, AETH_ACK_UNLIMITED, psn, msn, Some(orig));
        }
        _ => {}
    }
    result
}

type Taken = ((Count, Option<DropReason>), Option<Answer>, bool);

/// Why a request in sequence is not executed: soft-RoCE's classes of
/// responder errors (`rxe_resp.c:rxe_receiver`), answered by transport.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fault {
    /// An operation the QP does not allow, out of order in its message,
    /// or of a bad length: on RC a NAK (invalid request) and the QP fails
    /// (class C), UC drops the message (class D).
    Invalid,
    /// An R_Key range the request may not access: on RC a NAK (remote
    /// access) and the QP fails, UC drops the message (class E).
    Access,
    /// No receive posted: on RC an RNR NAK, UC drops the message.
    NotReady,
    /// A receive work request with a bad buffer: the receive completes
    /// in error and the QP fails, on both (class A; RC NAKs, remote
    /// operational error).
    Malformed,
    /// No room for a READ's responses now: dropped, the requester asks
    /// again (RC only).
    Busy,
}

/// An RC request refused for `fault`: a NAK (or RNR NAK), and unless the
/// receiver was only not ready, the receive begun completes in error and
/// the QP fails.
fn refused(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    a: &QpAttrs,
    rs: &mut RecvState,
    pkt: &Incoming<'_>,
    fault: Fault,
) -> Taken {
    let psn = pkt.psn;
    let msn = rs.resp.msn;
    let (syndrome, status) = match fault {
        Fault::Busy => return ((Count::NoBuffer, Some(DropReason::NoBuffer)), None, false),
        Fault::NotReady => {
            let syndrome = AETH_RNR_NAK | u32::from(a.min_rnr_timer & 0x1f);
            dev.wire_counters().count(Count::RcRnrSent);
            let rnr = Answer::Ack { syndrome, psn, msn };
            return (
                (Count::NoBuffer, Some(DropReason::NoBuffer)),
                Some(rnr),
                false,
            );
        }
        Fault::Invalid => (AETH_NAK_INVALID_REQ, WcStatus::RemInvReqErr),
        Fault::Access => (AETH_NAK_REM_ACC_ERR, WcStatus::RemAccessErr),
        Fault::Malformed => (AETH_NAK_REM_OP_ERR, WcStatus::LocQpOpErr),
    };
    // A SEND begun, or a work request taken off an SRQ (for a WRITE's
    // immediate data), completes in error (class C).
    if matches!(rs.resp.in_msg.take(), Some(InMsg { write: None, .. })) || rs.held {
        complete_error(qp, rs, status);
    }
    let nak = Answer::Ack { syndrome, psn, msn };
    (
        (Count::RcRefused, Some(DropReason::NotSpecified)),
        Some(nak),
        true,
    )
}

/// The expected request: executed (a SEND's payload written into the
/// receive work request, an RDMA WRITE's into the region of its R_Key),
/// with the acknowledgement asked for (RC) and whether the QP failed (its
/// receive CQ overflowed); or why not.
pub(super) fn take(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    a: &QpAttrs,
    rs: &mut RecvState,
    pkt: &Incoming<'_>,
    mtu: usize,
) -> core::result::Result<(Option<Answer>, bool), Fault> {
    let op = pkt.opcode;
    let start = op.hdrs.has(Hdrs::START);
    let end = op.hdrs.has(Hdrs::END);
    // CAST: The `int` of `ib_qp_attr`, the bits of `enum ib_access_flags`.
    let access = AccessFlags::from_bits(a.qp_access_flags as u32);
    if op.operation() == Operation::Read {
        // `check_op_valid`, `check_op_seq`, `check_rkey`: allowed, not
        // within a message, no payload, a region with remote read access.
        let ok = access.contains(Access::RemoteRead)
            && rs.resp.in_msg.is_none()
            && pkt.payload.is_empty();
        // IBA C9-94: at most 2^31 bytes (`check_length`).
        if !ok || u64::from(pkt.reth.2) > MAX_MSG {
            return Err(Fault::Invalid);
        }
        if rs.resp.full() {
            // No room for its responses now: dropped, asked for again.
            return Err(Fault::Busy);
        }
        let (va, rkey, len) = pkt.reth;
        if len != 0 && remote(dev, guard, qp, Access::RemoteRead, rkey, va, len).is_err() {
            return Err(Fault::Access);
        }
        // CAST: At most 4096.
        let npkts = len.div_ceil(mtu as u32).max(1);
        rs.resp.psn = Psn::new(pkt.psn.value().wrapping_add(npkts));
        rs.resp.msn = (rs.resp.msn + 1) & Psn::MASK;
        let read = Answer::Read {
            psn: pkt.psn,
            va,
            rkey,
            len,
            msn: rs.resp.msn,
        };
        return Ok((Some(read), false));
    }
    match op.operation() {
        Operation::Atomic(cas) => {
            return super::atomic::execute(dev, guard, qp, rs, pkt, access, cas)
        }
        Operation::AtomicWrite => return super::atomic::write(dev, guard, qp, rs, pkt, access),
        Operation::Flush => return super::atomic::flush(dev, guard, qp, rs, pkt, access),
        _ => {}
    }
    let write = match op.operation() {
        Operation::Send => false,
        // `check_op_valid`: the QP must allow it.
        Operation::Write if access.contains(Access::RemoteWrite) => true,
        _ => return Err(Fault::Invalid),
    };
    // In order (`check_op_seq`): a message's packets are of one operation.
    let in_order = match rs.resp.in_msg {
        None => start,
        Some(m) => !start && m.write.is_some() == write,
    };
    // Whole MTUs but the last, which is not empty unless it is the only
    // one (`check_length`).
    let len = pkt.payload.len();
    if !in_order || len > mtu || (!end && len != mtu) || (end && !start && len == 0) {
        return Err(Fault::Invalid);
    }
    // A receive work request for a SEND's first packet and for the packet
    // with a WRITE's immediate data (`RXE_RWR_MASK`), else not ready.
    let needs_wqe = (!write && start) || (write && pkt.imm.is_some());
    // Copied out once: the ring is userspace's (an SRQ's is taken now,
    // `get_srq_wqe`).
    if needs_wqe && !qp.fetch_recv(rs) {
        return Err(Fault::NotReady);
    }
    if start {
        let reth = write.then_some(pkt.reth);
        if let Some((va, rkey, total)) = reth {
            // `check_rkey`: the whole message's range, once.
            if u64::from(total) > MAX_MSG {
                // IBA C9-94 (`check_length`).
                return Err(Fault::Invalid);
            }
            if total != 0 && remote(dev, guard, qp, Access::RemoteWrite, rkey, va, total).is_err() {
                return Err(Fault::Access);
            }
        }
        rs.resp.in_msg = Some(InMsg {
            written: 0,
            write: reth,
        });
    }
    let m = rs.resp.in_msg.unwrap_or(InMsg {
        written: 0,
        write: None,
    });
    // CAST: At most 4096.
    let total = m.written.saturating_add(len as u32);
    let placed =
        match m.write {
            Some((va, rkey, rlen)) => {
                if total > rlen || (end && total != rlen) {
                    // More or less than the RETH said (`check_length`).
                    return Err(Fault::Invalid);
                }
                let at = va.wrapping_add(u64::from(m.written));
                if len == 0 {
                    Ok(())
                } else {
                    remote(dev, guard, qp, Access::RemoteWrite, rkey, at, len as u32)
                        .and_then(|(mr_off, mr)| mr.write(mr_off, pkt.payload).map_err(|_| ()))
                        .map_err(|()| Fault::Access)
                }
            }
            // More than the work request's length (`copy_data`'s EINVAL:
            // `RESPST_ERR_MALFORMED_WQE`, class A) or a bad buffer; past
            // its SGEs within its length (`copy_data`'s ENOSPC:
            // `RESPST_ERR_LENGTH`).
            None => match RecvWqe::new(&rs.wqe) {
                Some(w) if total > w.resid() => Err(Fault::Malformed),
                // CAST: `written` is below 2^31.
                Some(w) => scatter_at(dev, guard, qp, &w, m.written as usize, pkt.payload).map_err(
                    |status| match status {
                        WcStatus::LocLenErr => Fault::Invalid,
                        _ => Fault::Malformed,
                    },
                ),
                None => Err(Fault::Malformed),
            },
        };
    placed?;
    rs.resp.psn = pkt.psn.next();
    let mut failed = false;
    if end {
        rs.resp.in_msg = None;
        if let Some(key) = pkt.ieth {
            // A SEND with invalidate (`rxe_resp.c:execute`): the window of
            // its IETH is invalidated once the data is in; if it cannot be,
            // the receive completes with `IB_WC_REM_INV_REQ_ERR`, the SEND
            // is acknowledged all the same and the QP fails (class J).
            let by = Invalidator::Remote { uid: qp.uid };
            if mw::invalidate(dev, guard, key, by).is_err() {
                complete_error(qp, rs, WcStatus::RemInvReqErr);
                let ack = pkt.ack_req.then_some(Answer::Ack {
                    syndrome: AETH_ACK_UNLIMITED,
                    psn: pkt.psn,
                    msn: rs.resp.msn,
                });
                return Ok((ack, true));
            }
        }
        rs.resp.msn = (rs.resp.msn + 1) & Psn::MASK;
        if !write || pkt.imm.is_some() {
            let wr_id = RecvWqe::new(&rs.wqe).map_or(0, |w| w.wr_id());
            // As soft-RoCE's every user receive completion, RC's too
            // (`do_complete`), though no GRH is in the buffer.
            let mut flags = WcFlags::from(WcFlag::Grh);
            if pkt.imm.is_some() {
                flags |= WcFlag::WithImm;
            }
            if pkt.ieth.is_some() {
                flags |= WcFlag::WithInvalidate;
            }
            // `rxe_resp.c:do_complete`, for RC: a WRITE's length is the
            // whole message's.
            let wc = UserWc {
                wr_id,
                status: WcStatus::Success,
                opcode: if write {
                    WcOpcode::RecvRdmaWithImm
                } else {
                    WcOpcode::Recv
                },
                byte_len: total,
                // The union of `ex`: the R_Key invalidated, else the
                // immediate data.
                imm_data: pkt.ieth.or(pkt.imm).unwrap_or(0),
                qp_num: qp.qpn,
                // As soft-RoCE: the source QP only with a DETH (UD).
                src_qp: 0,
                wc_flags: flags,
                port_num: PORT,
            };
            qp.consume_recv(rs);
            failed = qp.recv_cq.post(&wc, pkt.solicited) == Err(CqFull);
        }
    } else {
        rs.resp.in_msg = Some(InMsg {
            written: total,
            ..m
        });
    }
    let ack = pkt.ack_req.then_some(Answer::Ack {
        syndrome: AETH_ACK_UNLIMITED,
        psn: pkt.psn,
        msn: rs.resp.msn,
    });
    Ok((ack, failed))
}

/// A SEND begun into the receive work request in `rs` completes with
/// `IB_WC_LOC_QP_OP_ERR` (a bad buffer: soft-RoCE's class A).
pub(super) fn fail_receive(qp: &QpCore, rs: &mut RecvState) {
    if let Some(InMsg { write: None, .. }) = rs.resp.in_msg.take() {
        complete_error(qp, rs, WcStatus::LocQpOpErr);
    }
}

/// The receive work request in `rs` completes with `status`.
pub(super) fn complete_error(qp: &QpCore, rs: &mut RecvState, status: WcStatus) {
    let wr_id = RecvWqe::new(&rs.wqe).map_or(0, |w| w.wr_id());
    qp.consume_recv(rs);
    let _ = qp
        .recv_cq
        .post(&UserWc::error(wr_id, status, qp.qpn), false);
}

/// Writes `payload` at byte `off` of the buffer of `w`, in `qp`'s memory
/// regions (local write access, `qp`'s PD): `IB_WC_LOC_LEN_ERR` past its
/// end, `IB_WC_LOC_QP_OP_ERR` for a bad SGE.
fn scatter_at(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    w: &RecvWqe<'_>,
    off: usize,
    payload: &[u8],
) -> core::result::Result<(), WcStatus> {
    let n = w.num_sge();
    if n > qp.recv_max_sge() {
        return Err(WcStatus::LocQpOpErr);
    }
    crate::sw::sge::scatter(dev, guard, qp.pd, n, |i| w.sge(i), off, payload)
}
