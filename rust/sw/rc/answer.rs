// SPDX-License-Identifier: GPL-2.0

//! What the responder of an RC QP sends ([`super::resp`] decides it):
//! acknowledgements and NAKs, and RDMA READ responses
//! (`rxe_resp.c:send_ack`, `read_reply`). READ responses, and what is
//! answered after a READ, wait in the QP's queue of answers, which one
//! sender at a time sends in order: the receive path that queued the first
//! of them (a share of packets, for a short round trip) and then the QP's
//! send work. An acknowledgement with nothing waiting goes out at once.

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
    tx::TxFlow,
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

/// At most this many packets of waiting answers go out from the receive
/// path that queued them (a READ of up to four path MTUs, its
/// acknowledgements behind it); the QP's send work sends the rest.
const RECEIVE_SHARE: u32 = 4;

/// Who sends the waiting answers of a QP.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sender {
    /// The QP's send work: all of them (process context).
    Work,
    /// The receive path that queued them and became their sender: up to
    /// [`RECEIVE_SHARE`] packets (any context).
    Receive,
}

/// The QP's send work sends the answers waiting for `qp`, an RC QP,
/// unless a receive path is sending them (it sends or hands over the
/// rest). Process context.
pub(crate) fn send_answers(dev: &DriverDevice<Rv>, qp: &QpCore) {
    if qp.recv.lock().resp.hold() {
        send_held(dev, qp, Sender::Work);
    }
}

/// Sends the answers waiting for `qp`, an RC QP, in order, for their
/// sender ([`RespState::hold`]): READ responses (`rxe_resp.c:read_reply`,
/// one per path MTU, FIRST, MIDDLE, LAST or ONLY, an AETH on the first and
/// the last, each payload read from the region when it is sent) and the
/// acknowledgements behind them. It gives them up at the QP's packets in
/// flight ([`crate::sw::tx`] resumes the send work) and, for a receive
/// path, after its share (the send work goes on). A region gone meanwhile
/// ends a READ's responses (the requester asks again).
///
/// [`RespState::hold`]: super::resp_state::RespState::hold
pub(super) fn send_held(dev: &DriverDevice<Rv>, qp: &QpCore, sender: Sender) {
    let mut share = match sender {
        Sender::Work => u32::MAX,
        Sender::Receive => RECEIVE_SHARE,
    };
    loop {
        let a = *qp.attrs.lock();
        let mtu = a.path_mtu.bytes().unwrap_or(256);
        let next = {
            let mut rs = qp.recv.lock();
            if matches!(a.qp_state, QpState::Err | QpState::Reset) {
                rs.resp.clear_out();
            }
            if share == 0 || qp.tx.full() {
                if share != 0 {
                    dev.wire_counters().count(Count::SendWait);
                }
                // At the mark, the buffer that brings the QP below it
                // queues the send work.
                if rs.resp.release() && share == 0 {
                    drop(rs);
                    TxFlow::kick(&qp.tx);
                }
                return;
            }
            // CAST: At most 4096.
            match rs.resp.next_out(mtu as u32) {
                None => return,
                Some(next) => next,
            }
        };
        share -= 1;
        match next {
            (Answer::Ack { syndrome, psn, msn }, _) => {
                send_ack(dev, qp, &a, syndrome, psn, msn, None)
            }
            (Answer::Atomic { psn, orig, msn }, _) => {
                send_ack(dev, qp, &a, AETH_ACK_UNLIMITED, psn, msn, Some(orig))
            }
            (
                Answer::Read {
                    psn,
                    va,
                    rkey,
                    len,
                    msn,
                },
                k,
            ) => {
                let guard = rcu::read_lock();
                send_read(dev, &guard, qp, &a, mtu, psn, (va, rkey, len), msn, k);
            }
        }
        if sender == Sender::Work {
            crate::rdma::cond_resched();
        }
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
