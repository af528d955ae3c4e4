// SPDX-License-Identifier: GPL-2.0

//! The requester of an RC QP (`rxe_req.c`): what the send ring holds,
//! sent a packet at a time in PSN order.

use super::{
    comp,
    psn_distance,
    Pending,
    MAX_MSG,
    MAX_PKT_PER_ACK,
    MAX_UNACKED_PSNS, //
};
use crate::rdma::{
    driver::DriverDevice,
    qp::Psn,
    rxe_abi::wqe::SendWqe,
    wc::WcStatus,
    wr::{
        SendFlag,
        WrOpcode, //
    },
};
use crate::sw::{
    datapath::{
        self,
        Via, //
    },
    device::Rv,
    qp::{
        QpCore,
        SendState, //
    },
    wire::{
        self,
        opcode,
        Count,
        Outgoing, //
    },
};
use kernel::sync::{
    rcu,
    Arc, //
};

/// One packet to send: of the work request in `slot`, from byte `offset`.
struct Step {
    slot: u32,
    offset: u32,
    psn: Psn,
    p: Pending,
}

/// Checks a work request copied out of the ring: its length, or the
/// status it completes with (`rxe_req.c:rxe_requester`; soft-RoCE's other
/// operations are not here yet).
fn check(qp: &QpCore, w: &SendWqe<'_>) -> core::result::Result<(u32, bool, bool), WcStatus> {
    let inline = w.send_flags().contains(SendFlag::Inline);
    if !inline && w.num_sge() > qp.cap.max_send_sge {
        return Err(WcStatus::LocQpOpErr);
    }
    if inline && w.length() > qp.cap.max_inline_data {
        return Err(WcStatus::LocQpOpErr);
    }
    let (imm, write) = match w.opcode() {
        Some(WrOpcode::Send) => (false, false),
        Some(WrOpcode::SendWithImm) => (true, false),
        Some(WrOpcode::RdmaWrite) => (false, true),
        Some(WrOpcode::RdmaWriteWithImm) => (true, true),
        _ => return Err(WcStatus::LocQpOpErr),
    };
    let len = datapath::claimed_length(w).ok_or(WcStatus::LocQpOpErr)?;
    if len > MAX_MSG {
        return Err(WcStatus::LocLenErr);
    }
    // CAST: At most 2^31.
    Ok((len as u32, imm, write))
}

/// Sends what the send ring of `qp`, an RC QP, holds, under its send
/// mutex (`st`): new work requests copied out of the ring, and what the
/// completer rewound to. It stops at the window, at the QP's packets in
/// flight ([`crate::sw::tx`] resumes it), while an RNR NAK's timer runs,
/// and when the ring is empty. Process context.
pub(crate) fn send(dev: &DriverDevice<Rv>, qp: &Arc<QpCore>, st: &mut SendState) {
    let producer = qp.sq.user_producer();
    let elem = qp.sq.elem_size();
    let mut first = true;
    loop {
        if !first {
            crate::rdma::cond_resched();
        }
        first = false;
        if qp.tx.full() {
            dev.wire_counters().count(Count::SendWait);
            return;
        }
        let step = {
            let mut r = qp.req.lock();
            if r.dead || r.failed || r.rnr_wait {
                return;
            }
            if r.next == r.fresh {
                if r.fresh == producer {
                    return;
                }
                // A new work request: copied once, kept until it completes.
                let slot = r.fresh;
                // CAST: A slot below the ring's, times its element size.
                let at = slot as usize * elem;
                let Some(copy) = st.shadow.get_mut(at..at + elem) else {
                    return;
                };
                qp.sq.read_slot(slot, copy);
                let Some(w) = SendWqe::new(copy) else {
                    return;
                };
                let signaled = qp.sq_sig_all || w.send_flags().contains(SendFlag::Signaled);
                let checked = check(qp, &w);
                let (len, imm, write) = checked.unwrap_or((0, false, false));
                let mtu = r.mtu.max(1);
                let npkts = len.div_ceil(mtu).max(1);
                let psn = r.psn;
                let p = Pending {
                    wr_id: w.wr_id(),
                    first: psn,
                    last: Psn::new(psn.value().wrapping_add(npkts - 1)),
                    len,
                    imm,
                    write,
                    signaled,
                    error: checked.err(),
                };
                // CAST: A slot.
                r.pending[slot as usize] = p;
                r.fresh = qp.sq.next(slot);
                if p.error.is_some() {
                    // Completes in order, after what is in flight before it.
                    r.next = r.fresh;
                    drop(r);
                    comp::complete(qp.as_arc_borrow());
                    continue;
                }
            }
            if psn_distance(r.una, r.psn) >= MAX_UNACKED_PSNS {
                r.window_full = true;
                return;
            }
            let slot = r.next;
            let step = Step {
                slot,
                offset: r.offset,
                psn: r.psn,
                // CAST: A slot.
                p: r.pending[slot as usize],
            };
            // Counted as sent before it is: its acknowledgement may come
            // back before the IP layer returns (a veth delivers in the
            // sender's softirq).
            let resend = step.psn.before(r.sent);
            let n = step.p.len.saturating_sub(step.offset).min(r.mtu);
            r.psn = step.psn.next();
            if r.sent.before(r.psn) {
                r.sent = r.psn;
            }
            if step.offset + n >= step.p.len {
                r.next = qp.sq.next(slot);
                r.offset = 0;
            } else {
                r.offset += n;
            }
            comp::arm_retry(qp.as_arc_borrow(), &mut r);
            if resend {
                dev.wire_counters().count(Count::RcRetransmit);
            }
            step
        };
        // CAST: A slot below the ring's, times its element size.
        let at = step.slot as usize * elem;
        let Some(w) = st.shadow.get(at..at + elem).and_then(SendWqe::new) else {
            return;
        };
        if let Err(status) = packet(dev, qp, &w, &step) {
            comp::fail_at(qp.as_arc_borrow(), step.slot, status);
            return;
        }
    }
}

/// Sends the packet of `step`: its headers by its place in the message,
/// its payload gathered from the memory regions (or the inline data).
fn packet(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    w: &SendWqe<'_>,
    step: &Step,
) -> core::result::Result<(), WcStatus> {
    let (a, mtu) = {
        let a = *qp.attrs.lock();
        (a, qp.req.lock().mtu)
    };
    let av = a.av.ok_or(WcStatus::LocQpOpErr)?;
    let p = &step.p;
    let n = p.len.saturating_sub(step.offset).min(mtu);
    let first = step.offset == 0;
    let last = step.offset + n >= p.len;
    let index = psn_distance(p.first, step.psn) + 1;
    let (src, ndev) = datapath::source(dev, &av)?;
    let own_mac = {
        let guard = rcu::read_lock();
        dev.netdev_rcu(&guard).map(|n| n.mac())
    };
    let out = Outgoing {
        src,
        dst: av.dgid.ip(),
        traffic_class: av.traffic_class,
        hop_limit: av.hop_limit,
        src_port: wire::source_port(qp.qpn),
        opcode: if p.write {
            opcode::rc_write(first, last, p.imm)
        } else {
            opcode::rc_send(first, last, p.imm)
        },
        dest_qpn: a.dest_qp_num,
        src_qpn: qp.qpn,
        psn: step.psn,
        qkey: 0,
        imm: (last && p.imm).then(|| w.imm_data()),
        solicited: last && w.send_flags().contains(SendFlag::Solicited),
        ack_req: last || index % MAX_PKT_PER_ACK == 0,
        aeth: 0,
        // The whole message's, on its first packet.
        reth: (w.remote_addr(), w.rkey(), p.len),
        // CAST: At most the MTU.
        payload_len: n as usize,
    };
    let via = if own_mac == Some(av.dmac) {
        Via::Loopback
    } else {
        Via::Ip
    };
    datapath::transmit(dev, qp, &ndev, &out, via, |buf| {
        // CAST: An offset below 2^31.
        datapath::gather(dev, qp, w, step.offset as usize, buf)
    })
}
