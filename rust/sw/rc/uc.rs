// SPDX-License-Identifier: GPL-2.0

//! The responder of a UC QP (`rxe_resp.c` for `IB_QPT_UC`): RC's, with
//! no acknowledgement and no NAK. A packet out of sequence, or a request
//! not executed, drops what is left of its message; the next first packet
//! starts a message again at its own PSN, into the same receive work
//! request.

use super::resp::{
    self,
    Fault, //
};
use crate::net::skb::DropReason;
use crate::rdma::{
    driver::DriverDevice,
    qp::{
        Psn,
        QpAttrs,
        QpState, //
    },
    wc::WcStatus,
};
use crate::sw::{
    device::Rv,
    qp::QpCore,
    wire::{
        opcode::Hdrs,
        Count,
        Incoming, //
    },
};
use kernel::sync::{
    rcu,
    ArcBorrow, //
};

/// A request for `qp`, a UC QP in a state that receives, from the path's
/// destination: what to count, and why the packet is dropped (`None`:
/// taken). Any context.
pub(crate) fn request(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: ArcBorrow<'_, QpCore>,
    a: &QpAttrs,
    pkt: &Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let dropped = (Count::UcDropped, Some(DropReason::NotSpecified));
    let mtu = a.path_mtu.bytes().unwrap_or(256);
    let (count, failed) = {
        let mut rs = qp.recv.lock();
        if rs.resp.dropping || pkt.psn != rs.resp.psn {
            if !pkt.opcode.hdrs.has(Hdrs::START) {
                // The rest of a message with a packet lost (`check_psn`).
                rs.resp.dropping = true;
                rs.resp.in_msg = None;
                return dropped;
            }
            // A new message, wherever its PSN (soft-RoCE drops it too
            // when the message before lost its last packet: its
            // `resp.opcode` still says a message is in progress).
            rs.resp.dropping = false;
            rs.resp.in_msg = None;
            rs.resp.psn = pkt.psn;
        }
        match resp::take(dev, guard, &qp, a, &mut rs, pkt, mtu) {
            // A full receive CQ fails the QP (class G).
            Ok((_, failed)) => ((Count::Received, None), failed),
            // Class A: the receive completes in error, the QP fails.
            Err(Fault::Malformed) => {
                resp::fail_receive(&qp, &mut rs);
                (dropped, true)
            }
            // Classes D and E: the message is dropped, its receive work
            // request (if one was begun) kept for the next; one taken off
            // an SRQ completes in error (`rxe_resp.c`, UC with an SRQ).
            Err(fault) => {
                if rs.held {
                    let status = match fault {
                        Fault::Access => WcStatus::RemAccessErr,
                        _ => WcStatus::RemInvReqErr,
                    };
                    resp::complete_error(&qp, &mut rs, status);
                }
                rs.resp.dropping = true;
                rs.resp.in_msg = None;
                return dropped;
            }
        }
    };
    if failed {
        qp.attrs.lock().qp_state = QpState::Err;
        QpCore::flush_later(qp);
    }
    count
}

/// A UC QP's requester sent the packet of `psn`: the work requests whose
/// last packet it was complete (`rxe_req.c:update_state`, UC's
/// `wqe_state_done`), in order. Process context.
pub(crate) fn sent_unreliable(qp: ArcBorrow<'_, QpCore>, psn: Psn) {
    let mut r = qp.req.lock();
    if r.dead || r.failed {
        return;
    }
    if r.una.before(psn.next()) {
        r.una = psn.next();
    }
    let failed = super::comp::complete_locked(&qp, &mut r);
    drop(r);
    if failed {
        super::comp::qp_error(qp);
    }
}
