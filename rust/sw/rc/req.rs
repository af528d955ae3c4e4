// SPDX-License-Identifier: GPL-2.0

//! The requester of an RC or UC QP (`rxe_req.c`): what the send ring
//! holds, sent a packet at a time in PSN order. On UC nothing is
//! acknowledged: a work request completes once its last packet is sent.

use super::{
    comp,
    psn_distance,
    Kind,
    Pending,
    MAX_MSG,
    MAX_UNACKED_PSNS, //
};
use crate::rdma::{
    driver::DriverDevice,
    qp::{
        Psn,
        QpType, //
    },
    rxe_abi::wqe::SendWqe,
    wc::WcStatus,
    wr::{
        SendFlag,
        WrOpcode, //
    },
};
use crate::sw::{
    datapath,
    device::Rv,
    mw::{
        self,
        Invalidator, //
    },
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
    xmit,
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

/// Checks a work request copied out of the ring: its length, whether it
/// carries immediate data, and what it does; or the status it completes
/// with (`rxe_req.c:rxe_requester`; soft-RoCE's other operations are not
/// here yet).
fn check(qp: &QpCore, w: &SendWqe<'_>) -> core::result::Result<(u32, bool, Kind), WcStatus> {
    let inline = w.send_flags().contains(SendFlag::Inline);
    let rc = qp.qp_type == QpType::Rc;
    if !inline && w.num_sge() > qp.cap.max_send_sge {
        return Err(WcStatus::LocQpOpErr);
    }
    if inline && w.length() > qp.cap.max_inline_data {
        return Err(WcStatus::LocQpOpErr);
    }
    let (imm, kind) = match w.opcode() {
        Some(WrOpcode::Send) => (false, Kind::Send),
        Some(WrOpcode::SendWithImm) => (true, Kind::Send),
        Some(WrOpcode::RdmaWrite) => (false, Kind::Write),
        Some(WrOpcode::RdmaWriteWithImm) => (true, Kind::Write),
        // Its SGEs are where the data goes: no inline READ or atomic; none
        // on UC.
        Some(WrOpcode::RdmaRead) if !inline && rc => (false, Kind::Read),
        Some(WrOpcode::AtomicCmpAndSwp) if !inline && rc => (false, Kind::CmpSwap),
        Some(WrOpcode::AtomicFetchAndAdd) if !inline && rc => (false, Kind::FetchAdd),
        // Its 8 bytes are in the work request (`dma.atomic_wr`).
        Some(WrOpcode::AtomicWrite) if rc => return Ok((8, false, Kind::AtomicWrite)),
        Some(WrOpcode::SendWithInv) if rc => (false, Kind::SendInv),
        // No payload; its length is the range flushed (`dma.length`).
        Some(WrOpcode::Flush) if rc => return Ok((w.length(), false, Kind::Flush)),
        // Local operations (`WR_LOCAL_OP_MASK`): a bind on RC and UC, a
        // local invalidation on RC.
        Some(WrOpcode::BindMw) => return Ok((0, false, Kind::Bind)),
        Some(WrOpcode::LocalInv) if rc => return Ok((0, false, Kind::LocalInv)),
        _ => return Err(WcStatus::LocQpOpErr),
    };
    let len = datapath::claimed_length(w).ok_or(WcStatus::LocQpOpErr)?;
    if len > MAX_MSG {
        return Err(WcStatus::LocLenErr);
    }
    // CAST: At most 2^31.
    Ok((len as u32, imm, kind))
}

/// What [`send`] does next, decided under the requester's lock.
enum Next {
    /// Send this packet.
    Packet(Step),
    /// A work request done or refused without a packet (a local
    /// operation, or one refused before it was sent): complete what may
    /// be completed, in order, and go on.
    Complete,
    /// Nothing to send now.
    Stop,
}

/// A local operation, done when the requester reaches it
/// (`rxe_req.c:rxe_do_local_ops`): the status it completes with if it
/// fails (the QP then fails too).
fn local_op(dev: &DriverDevice<Rv>, qp: &QpCore, w: &SendWqe<'_>, kind: Kind) -> Option<WcStatus> {
    let guard = rcu::read_lock();
    match kind {
        Kind::Bind => mw::bind(dev, &guard, qp, &w.bind())
            .err()
            .map(|()| WcStatus::MwBindErr),
        Kind::LocalInv => {
            let by = Invalidator::Local { pd: qp.pd };
            mw::invalidate(dev, &guard, w.invalidate_rkey(), by)
                .err()
                .map(|()| WcStatus::LocQpOpErr)
        }
        _ => None,
    }
}

/// Sends what the send ring of `qp`, an RC QP, holds, under its send
/// mutex (`st`): new work requests copied out of the ring, and what the
/// completer rewound to. It stops at the window, at the QP's packets in
/// flight ([`crate::sw::tx`] resumes it), while an RNR NAK's timer runs,
/// at a READ with no credit left, and when the ring is empty. Process
/// context.
pub(crate) fn send(dev: &DriverDevice<Rv>, qp: &Arc<QpCore>, st: &mut SendState) {
    let producer = qp.sq.user_producer();
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
        let step = match next(dev, qp, st, producer) {
            Next::Packet(step) => step,
            Next::Complete => {
                comp::complete(qp.as_arc_borrow());
                continue;
            }
            Next::Stop => return,
        };
        let Some(w) = SendWqe::new(&st.wqe) else {
            return;
        };
        if let Err(status) = packet(dev, qp, &w, &step) {
            comp::fail_at(qp.as_arc_borrow(), step.slot, status);
            return;
        }
        if qp.qp_type == QpType::Uc {
            // Done with its last packet: the gather is over.
            super::uc::sent_unreliable(qp.as_arc_borrow(), step.psn);
        }
    }
}

/// The next packet of [`send`], its work request copied into `st.wqe`,
/// counted as sent: its acknowledgement may come back before the IP layer
/// returns (a veth delivers in the sender's softirq).
fn next(dev: &DriverDevice<Rv>, qp: &Arc<QpCore>, st: &mut SendState, producer: u32) -> Next {
    let mut r = qp.req.lock();
    if r.dead || r.failed || r.refused || r.rnr_wait {
        return Next::Stop;
    }
    if r.next == r.fresh {
        // In SQD nothing new is begun (`rxe_req.c:req_next_wqe`).
        if r.fresh == producer || r.sqd {
            return Next::Stop;
        }
        // A new work request: copied once, kept until it completes.
        let slot = r.fresh;
        // CAST: A slot below the ring's, times its element size.
        let at = slot as usize * r.elem;
        let elem = r.elem;
        let Some(copy) = r.shadow.get_mut(at..at + elem) else {
            return Next::Stop;
        };
        qp.sq.read_slot(slot, copy);
        let Some(w) = r.slot(slot).and_then(SendWqe::new) else {
            return Next::Stop;
        };
        let signaled = qp.sq_sig_all || w.send_flags().contains(SendFlag::Signaled);
        let wr_id = w.wr_id();
        let checked = check(qp, &w);
        let (len, imm, kind) = checked.unwrap_or((0, false, Kind::Send));
        if checked.is_ok() {
            // `rxe_req.c:rxe_wqe_is_fenced`: a local invalidation waits
            // until everything before it completed (IBA 10.6.5.1, made
            // mandatory as soft-RoCE does), a fenced request until the
            // READs and atomics before it did (IBA 10.8.3.3). The
            // completer kicks the requester on.
            let fenced = if kind == Kind::LocalInv {
                r.comp != slot
            } else {
                w.send_flags().contains(SendFlag::Fence) && r.reads_out != 0
            };
            if fenced {
                r.waiting = true;
                return Next::Stop;
            }
        }
        if checked.is_ok() && kind.local() {
            let error = local_op(dev, qp, &w, kind);
            let psn = r.psn;
            // CAST: A slot.
            r.pending[slot as usize] = Pending {
                wr_id,
                // No PSN of its own: complete once what was sent before
                // it is acknowledged; never sent again.
                first: psn,
                last: Psn::new(psn.value().wrapping_sub(1)),
                len: 0,
                imm: false,
                kind,
                signaled,
                error,
            };
            r.fresh = qp.sq.next(slot);
            r.next = r.fresh;
            if error.is_some() {
                // Completes in order, then the QP fails.
                r.refused = true;
            }
            return Next::Complete;
        }
        if checked.is_ok() && kind.credit() {
            // `rxe_req.c`: a READ or an atomic waits for a credit
            // (`max_rd_atomic`).
            if r.reads_out >= r.max_reads {
                r.waiting = true;
                return Next::Stop;
            }
            r.reads_out += 1;
        }
        // An atomic is one packet (its SGEs take the value before), so is
        // a FLUSH whatever its length.
        let npkts = if kind.one_packet() {
            1
        } else {
            len.div_ceil(r.mtu.max(1)).max(1)
        };
        let psn = r.psn;
        let p = Pending {
            wr_id,
            first: psn,
            last: Psn::new(psn.value().wrapping_add(npkts - 1)),
            len,
            imm,
            kind,
            signaled,
            error: checked.err(),
        };
        // CAST: A slot.
        r.pending[slot as usize] = p;
        r.fresh = qp.sq.next(slot);
        if p.error.is_some() {
            // Completes in order, after what is in flight before it; what
            // follows waits for the flush.
            r.next = r.fresh;
            r.refused = true;
            return Next::Complete;
        }
    }
    // A local operation was done when first reached: the requester sends
    // again what came before it (a retransmission), never it.
    // CAST: A slot.
    while r.next != r.fresh && r.pending[r.next as usize].kind.local() {
        r.next = qp.sq.next(r.next);
        r.offset = 0;
    }
    if r.next == r.fresh {
        return Next::Complete;
    }
    if qp.qp_type == QpType::Rc && psn_distance(r.una, r.psn) >= MAX_UNACKED_PSNS {
        r.waiting = true;
        return Next::Stop;
    }
    let slot = r.next;
    let step = Step {
        slot,
        offset: r.offset,
        psn: r.psn,
        // CAST: A slot.
        p: r.pending[slot as usize],
    };
    match r.slot(slot) {
        Some(copy) if st.wqe.len() == copy.len() => st.wqe.copy_from_slice(copy),
        _ => return Next::Stop,
    }
    let resend = step.psn.before(r.sent);
    let left = step.p.len.saturating_sub(step.offset);
    if step.p.kind.responds() {
        // One request for the rest of the READ (or the atomic); its
        // responses use the PSNs up to its last.
        r.psn = step.p.last.next();
        r.next = qp.sq.next(slot);
        r.offset = 0;
    } else {
        let n = left.min(r.mtu);
        r.psn = step.psn.next();
        if n >= left {
            r.next = qp.sq.next(slot);
            r.offset = 0;
        } else {
            r.offset += n;
        }
    }
    if r.sent.before(r.psn) {
        r.sent = r.psn;
    }
    super::timer::arm_retry(qp.as_arc_borrow(), &mut r);
    if resend {
        dev.wire_counters().count(Count::RcRetransmit);
    }
    Next::Packet(step)
}

/// Sends the packet of `step`: its headers by its place in the message,
/// its payload gathered from the memory regions (or the inline data).
fn packet(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    w: &SendWqe<'_>,
    step: &Step,
) -> core::result::Result<(), WcStatus> {
    let a = *qp.attrs.lock();
    let av = a.av.ok_or(WcStatus::LocQpOpErr)?;
    let (src, ndev, via) = xmit::route(dev, &av, false)?;
    let p = &step.p;
    let uc = qp.qp_type == QpType::Uc;
    let read = p.kind.responds();
    let first = step.offset == 0;
    let (n, last, ack_req) = {
        let mut r = qp.req.lock();
        let n = if p.kind == Kind::AtomicWrite {
            8
        } else if read {
            0
        } else {
            p.len.saturating_sub(step.offset).min(r.mtu)
        };
        let last = read || step.offset + n >= p.len;
        // UC asks for none, and counts none (`init_req_packet`).
        (n, last, !uc && r.ack_request(last))
    };
    let out = Outgoing {
        src,
        dst: av.dgid.ip(),
        traffic_class: av.traffic_class,
        hop_limit: av.hop_limit,
        src_port: wire::source_port(qp.qpn),
        opcode: match p.kind {
            Kind::Send => opcode::send(uc, first, last, p.imm),
            Kind::Write => opcode::write(uc, first, last, p.imm),
            Kind::Read => &opcode::RC_READ_REQUEST,
            Kind::CmpSwap => &opcode::RC_COMPARE_SWAP,
            Kind::FetchAdd => &opcode::RC_FETCH_ADD,
            Kind::AtomicWrite => &opcode::RC_ATOMIC_WRITE,
            Kind::SendInv => opcode::send_inv(first, last),
            Kind::Flush => &opcode::RC_FLUSH,
            // Never sent.
            Kind::Bind | Kind::LocalInv => return Err(WcStatus::LocQpOpErr),
        },
        dest_qpn: a.dest_qp_num,
        src_qpn: qp.qpn,
        psn: step.psn,
        qkey: 0,
        imm: (last && p.imm).then(|| w.imm_data()),
        ieth: w.invalidate_rkey(),
        // `feth_init`: the level in bits 5-4, the placement type in 3-0.
        feth: {
            let (_, placement, level) = w.flush();
            (u32::from(level) << 4 & 0x30) | (u32::from(placement) & 0xf)
        },
        solicited: last && w.send_flags().contains(SendFlag::Solicited),
        ack_req,
        aeth: 0,
        // The whole message's, on its first packet; a READ's, from where
        // it is sent again.
        reth: if p.kind.atomic() {
            (w.remote_addr(), w.atomic_rkey(), 0)
        } else if p.kind == Kind::Flush {
            (w.remote_addr(), w.flush().0, p.len)
        } else if p.kind == Kind::AtomicWrite {
            (w.remote_addr(), w.rkey(), 8)
        } else if read {
            (
                w.remote_addr().wrapping_add(u64::from(step.offset)),
                w.rkey(),
                p.len - step.offset.min(p.len),
            )
        } else {
            (w.remote_addr(), w.rkey(), p.len)
        },
        // `rxe_req.c:init_req_packet`: a fetch-and-add's compare is 0.
        atomic: match p.kind {
            Kind::CmpSwap => (w.swap(), w.compare_add()),
            Kind::FetchAdd => (w.compare_add(), 0),
            _ => (0, 0),
        },
        orig: 0,
        // CAST: At most the MTU.
        payload_len: n as usize,
    };
    if p.kind == Kind::AtomicWrite {
        return xmit::transmit(dev, qp, &ndev, &out, via, |buf| {
            let bytes = w.inline_data(8).ok_or(WcStatus::LocQpOpErr)?;
            buf.get_mut(..8)
                .ok_or(WcStatus::LocQpOpErr)?
                .copy_from_slice(bytes);
            Ok(8)
        });
    }
    if read {
        return xmit::transmit(dev, qp, &ndev, &out, via, |_| Ok(0));
    }
    xmit::transmit(dev, qp, &ndev, &out, via, |buf| {
        // CAST: An offset below 2^31.
        datapath::gather(dev, qp, w, step.offset as usize, buf)
    })
}
