// SPDX-License-Identifier: GPL-2.0

//! What the responder of an RC QP sends ([`super::resp`] decides it):
//! acknowledgements and NAKs, and RDMA READ responses, the latter from the
//! QP's send work with what is answered after them queued behind
//! (`rxe_resp.c:send_ack`, `read_reply`).

use super::{
    rkey::remote,
    Answer,
    AETH_ACK_UNLIMITED, //
};
use crate::rdma::{
    driver::DriverDevice,
    mr::Access,
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
        self,
        opcode::{
            rc_read_response,
            RC_ACKNOWLEDGE,
            RC_ATOMIC_ACKNOWLEDGE, //
        },
        Count,
        Outgoing, //
    },
    xmit,
};
use kernel::sync::rcu;

/// Sends an acknowledgement (or NAK) of `qp` to its path: an RC
/// ACKNOWLEDGE with the AETH (`rxe_resp.c:send_ack`), or with an atomic's
/// value before (`orig`) an ATOMIC_ACKNOWLEDGE (`send_atomic_ack`). Lost
/// if the path has no route (the requester retries). Any context.
pub(super) fn send_ack(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    a: &QpAttrs,
    syndrome: u32,
    psn: Psn,
    msn: u32,
    orig: Option<u64>,
) {
    let Some(av) = a.av else {
        return;
    };
    let Ok((src, ndev, via)) = xmit::route(dev, &av, true) else {
        return;
    };
    let out = Outgoing {
        src,
        dst: av.dgid.ip(),
        traffic_class: av.traffic_class,
        hop_limit: av.hop_limit,
        src_port: wire::source_port(qp.qpn),
        opcode: if orig.is_some() {
            &RC_ATOMIC_ACKNOWLEDGE
        } else {
            &RC_ACKNOWLEDGE
        },
        dest_qpn: a.dest_qp_num,
        src_qpn: qp.qpn,
        psn,
        qkey: 0,
        imm: None,
        ieth: 0,
        feth: 0,
        solicited: false,
        ack_req: false,
        aeth: (syndrome << 24) | (msn & Psn::MASK),
        reth: (0, 0, 0),
        atomic: (0, 0),
        orig: orig.unwrap_or(0),
        payload_len: 0,
    };
    let _ = xmit::transmit(dev, qp, &ndev, &out, via, |_| Ok(0));
}

/// Sends the answers waiting for `qp`, an RC QP, in order: READ responses
/// (`rxe_resp.c:read_reply`, one per path MTU, FIRST, MIDDLE, LAST or
/// ONLY, an AETH on the first and the last, each payload read from the
/// region when it is sent) and the acknowledgements behind them. It stops
/// at the QP's packets in flight ([`crate::sw::tx`] resumes it). A region
/// gone meanwhile ends a READ's responses (the requester asks again).
/// Process context (the QP's send work).
pub(crate) fn send_answers(dev: &DriverDevice<Rv>, qp: &QpCore) {
    loop {
        if qp.tx.full() {
            dev.wire_counters().count(Count::SendWait);
            return;
        }
        let a = *qp.attrs.lock();
        let mtu = a.path_mtu.bytes().unwrap_or(256);
        let next = {
            let mut rs = qp.recv.lock();
            if matches!(a.qp_state, QpState::Err | QpState::Reset) {
                rs.resp.clear_out();
                return;
            }
            // CAST: At most 4096.
            rs.resp.next_out(mtu as u32)
        };
        match next {
            None => return,
            Some((Answer::Ack { syndrome, psn, msn }, _)) => {
                send_ack(dev, qp, &a, syndrome, psn, msn, None)
            }
            Some((Answer::Atomic { psn, orig, msn }, _)) => {
                send_ack(dev, qp, &a, AETH_ACK_UNLIMITED, psn, msn, Some(orig))
            }
            Some((
                Answer::Read {
                    psn,
                    va,
                    rkey,
                    len,
                    msn,
                },
                k,
            )) => {
                let guard = rcu::read_lock();
                send_read(dev, &guard, qp, &a, mtu, psn, (va, rkey, len), msn, k);
            }
        }
        crate::rdma::cond_resched();
    }
}

/// Sends response `k` of an RDMA READ of `qp` from `psn` of the
/// `(va, rkey, len)` asked for.
#[allow(clippy::too_many_arguments)]
fn send_read(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    a: &QpAttrs,
    mtu: usize,
    psn: Psn,
    (va, rkey, len): (u64, u32, u32),
    msn: u32,
    k: u32,
) {
    let Some(av) = a.av else {
        return;
    };
    // Built under the read-side critical section that keeps the region
    // found: allocated atomically.
    let Ok((src, ndev, via)) = xmit::route(dev, &av, true) else {
        return;
    };
    // CAST: At most 4096.
    let mtu = mtu as u32;
    let npkts = len.div_ceil(mtu).max(1);
    let off = k * mtu;
    let n = len.saturating_sub(off).min(mtu);
    let out = Outgoing {
        src,
        dst: av.dgid.ip(),
        traffic_class: av.traffic_class,
        hop_limit: av.hop_limit,
        src_port: wire::source_port(qp.qpn),
        opcode: rc_read_response(k == 0, k + 1 == npkts),
        dest_qpn: a.dest_qp_num,
        src_qpn: qp.qpn,
        psn: Psn::new(psn.value().wrapping_add(k)),
        qkey: 0,
        imm: None,
        ieth: 0,
        feth: 0,
        solicited: false,
        ack_req: false,
        aeth: (AETH_ACK_UNLIMITED << 24) | (msn & Psn::MASK),
        reth: (0, 0, 0),
        atomic: (0, 0),
        orig: 0,
        // CAST: At most the MTU.
        payload_len: n as usize,
    };
    let at = va.wrapping_add(u64::from(off));
    let _ = xmit::transmit(dev, qp, &ndev, &out, via, |buf| {
        if n == 0 {
            return Ok(0);
        }
        let (mr_off, mr) = remote(dev, guard, qp, Access::RemoteRead, rkey, at, n)
            .map_err(|()| WcStatus::RemAccessErr)?;
        mr.read(mr_off, buf).map_err(|_| WcStatus::RemAccessErr)?;
        Ok(buf.len())
    });
}
