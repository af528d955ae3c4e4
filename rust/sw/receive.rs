// SPDX-License-Identifier: GPL-2.0

//! rv0's receive side: a packet from the wire or the loopback path checked
//! (`rxe_recv.c`) and written into a receive buffer of its QP
//! (`rxe_resp.c`, UD), with its completion. The send side and the flushes
//! are in [`super::datapath`].

use super::{
    cq::CqFull,
    datapath::{
        Message,
        GRH_LEN,
        MULTICAST_QPN,
        PORT, //
    },
    device::Rv,
    mr::{
        self,
        MrError, //
    },
    qp::QpCore,
    wire::{
        self,
        opcode::{
            Hdrs,
            Transport, //
        },
        Count,
        Malformed, //
    },
};
use crate::net::skb::{
    DropReason,
    RxSkb, //
};
use crate::rdma::{
    driver::DriverDevice,
    qp::{
        QpState,
        QpType, //
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
use kernel::sync::{
    rcu,
    ArcBorrow, //
};

/// Whether a QP in `state` takes messages (`rxe_recv.c:check_type_state`:
/// from RTR on; in error they only flush its receives).
fn may_receive(state: QpState) -> bool {
    matches!(
        state,
        QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe | QpState::Err
    )
}

/// What became of a message for a QP.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// Written into a receive buffer, with a completion (or an error
    /// completion).
    Done,
    /// The QP is not ready to receive (below RTR).
    NotReady,
    /// The Q_Key does not match.
    Qkey,
    /// The QP is in error: its receives were flushed.
    Flushed,
    /// No receive posted, or too small a buffer.
    NoBuffer,
}

/// Delivers a message to `dest`, a QP of this device (soft-RoCE's receive
/// checks, `rxe_recv.c`, then its responder for UD, `rxe_resp.c`), with
/// a pass of its gate held by the caller. A
/// message the QP does not take is dropped. Process context or softirq:
/// a QP in error has its receive queue flushed from a work item
/// ([`QpCore::flush_later`]), not here, where a ring's worth could keep
/// the softirq going.
pub(super) fn deliver(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    dest: ArcBorrow<'_, QpCore>,
    msg: &Message<'_>,
) -> Delivery {
    let (state, qkey) = {
        let a = dest.attrs.lock();
        (a.qp_state, a.qkey)
    };
    // `rxe_recv.c:check_type_state`, then `check_keys`.
    if !may_receive(state) {
        return Delivery::NotReady;
    }
    if msg.qkey != qkey {
        return Delivery::Qkey;
    }
    if state == QpState::Err {
        // The responder of a QP in error flushes what was posted since
        // (`rxe_resp.c:rxe_receiver`), from its task.
        QpCore::flush_later(dest);
        return Delivery::Flushed;
    }
    let mut rs = dest.recv.lock();
    if !dest.fetch_recv(&mut rs) {
        // No receive posted: dropped.
        return Delivery::NoBuffer;
    }
    let Some(w) = RecvWqe::new(&rs.wqe) else {
        return Delivery::NoBuffer;
    };
    let total = GRH_LEN + msg.payload.len();
    let status = match scatter(dev, guard, &dest, &w, &msg.grh, msg.payload) {
        Ok(()) => WcStatus::Success,
        // Too small a buffer: the message is dropped, the WQE kept
        // (`rxe_resp.c:check_length`, for UD: class D) ...
        Err(Scatter::TooSmall) if !dest.rq.shared() => return Delivery::NoBuffer,
        // ... but one taken off an SRQ completes in error, the QP stays
        // (class E).
        Err(Scatter::TooSmall) => WcStatus::RemInvReqErr,
        Err(Scatter::Failed) => WcStatus::LocQpOpErr,
    };
    let mut flags = WcFlags::from(WcFlag::Grh);
    if msg.imm.is_some() {
        flags |= WcFlag::WithImm;
    }
    let wc = if status == WcStatus::Success {
        // `rxe_resp.c:do_complete`, for UD.
        UserWc {
            wr_id: w.wr_id(),
            status,
            opcode: WcOpcode::Recv,
            // CAST: At most 40 + a datagram (less than 64 KiB).
            byte_len: total as u32,
            imm_data: msg.imm.unwrap_or(0),
            qp_num: dest.qpn,
            src_qp: msg.src_qpn,
            wc_flags: flags,
            port_num: PORT,
        }
    } else {
        UserWc::error(w.wr_id(), status, dest.qpn)
    };
    dest.consume_recv(&mut rs);
    let posted = dest.recv_cq.post(&wc, msg.solicited);
    drop(rs);
    // A bad buffer, or a full CQ (`rxe_resp.c:do_complete`): the QP goes
    // to error and its receive queue is flushed, later.
    if status == WcStatus::LocQpOpErr || posted == Err(CqFull) {
        dest.attrs.lock().qp_state = QpState::Err;
        QpCore::flush_later(dest);
    }
    Delivery::Done
}

/// Whether a packet of headers `head` that came in on `skb`'s netdev is
/// this device's to take: for one of the port's RoCE v2 GIDs on that
/// netdev (or VLAN: `rxe_recv.c:rxe_chk_dgid`; multicast has no groups on
/// rv0 yet) and one of its QPs, read from the headers alone.
fn for_us(dev: &DriverDevice<Rv>, skb: &RxSkb<'_>, head: &[u8]) -> bool {
    let Some((dgid, qpn)) = wire::destination(head) else {
        return false;
    };
    if dgid.is_multicast() || qpn == 0 || qpn == MULTICAST_QPN {
        return false;
    }
    let guard = rcu::read_lock();
    dev.qp_table().get(&guard, qpn).is_some()
        && skb
            .rx_dev()
            .is_some_and(|ndev| dev.gids().has_roce_v2(&guard, &dgid, ndev))
}

/// Receives a packet from the wire for this device (softirq). One that is
/// not for a GID of the port and a QP of the device goes back to the
/// network stack as it came (`Err`), for the UDP layer and its sockets.
/// The rest is taken: soft-RoCE's checks (`rxe_recv.c:rxe_rcv`: the
/// headers and the ICRC, the QP, its state, the P_Key and the Q_Key), then
/// delivery. Every packet is counted, as passed on, as received or by the
/// reason it was dropped.
pub(crate) fn receive<'hook>(
    dev: &DriverDevice<Rv>,
    mut skb: RxSkb<'hook>,
) -> Result<(), RxSkb<'hook>> {
    let counters = dev.wire_counters();
    let mut head = [0u8; wire::DESTINATION_BYTES];
    if !for_us(dev, &skb, skb.copy_head(&mut head)) {
        counters.count(Count::PassedOn);
        return Err(skb);
    }
    let (count, drop) = take(dev, &mut skb);
    counters.count(count);
    match drop {
        None => skb.into_skb().consume(),
        Some(why) => skb.drop_for(why),
    }
    Ok(())
}

/// Checks and delivers a packet the device takes: what to count, and why
/// the packet is dropped (`None`: delivered).
fn take(dev: &DriverDevice<Rv>, skb: &mut RxSkb<'_>) -> (Count, Option<DropReason>) {
    if skb.linearize().is_err() {
        return (Count::Header, Some(DropReason::NoMem));
    }
    let csum_known_good = skb.csum_unnecessary();
    dispatch(dev, skb.network_bytes(), csum_known_good)
}

/// Receives a packet this device sent to its own address (RC's loopback,
/// `rxe_net.c:rxe_loopback`), counted as one from the wire. Any context.
pub(super) fn local(dev: &DriverDevice<Rv>, bytes: &[u8]) {
    let (count, _) = dispatch(dev, bytes, true);
    dev.wire_counters().count(count);
}

/// Checks the packet in `bytes` and hands it to its QP: what to count,
/// and why the packet is dropped.
fn dispatch(
    dev: &DriverDevice<Rv>,
    bytes: &[u8],
    csum_known_good: bool,
) -> (Count, Option<DropReason>) {
    let pkt = match wire::parse(bytes, csum_known_good) {
        Ok(pkt) => pkt,
        Err(why) => {
            return match why {
                Malformed::Header => (Count::Header, Some(DropReason::IpHeader)),
                Malformed::UdpChecksum => (Count::UdpChecksum, Some(DropReason::UdpChecksum)),
                Malformed::Opcode => (Count::Opcode, Some(DropReason::UnhandledProto)),
                Malformed::Length => (Count::Length, Some(DropReason::TooSmall)),
                Malformed::Icrc => (Count::Icrc, Some(DropReason::NotSpecified)),
            };
        }
    };
    let guard = rcu::read_lock();
    let Some(dest) = dev.qp_table().borrow(&guard, pkt.dest_qpn) else {
        return (Count::Qpn, Some(DropReason::NoQp));
    };
    // Being destroyed: as if it were gone already.
    let Some(_delivering) = dest.gate.enter() else {
        return (Count::Qpn, Some(DropReason::NoQp));
    };
    if !wire::pkey_ok(pkt.pkey) {
        return (Count::Pkey, Some(DropReason::NotSpecified));
    }
    // A QP takes its own transport's opcodes (`check_type_state`).
    match (dest.qp_type, pkt.opcode.transport()) {
        (QpType::Ud, Transport::Ud) => {}
        (QpType::Rc, Transport::Rc) | (QpType::Uc, Transport::Uc) => {
            return connected(dev, &guard, dest, &pkt)
        }
        _ => return (Count::Opcode, Some(DropReason::UnhandledProto)),
    }
    let mut grh = [0u8; GRH_LEN];
    // The GRH a UD receive gets: the packet's own IP header
    // (`rxe_resp.c:send_data_in`), after 20 zero bytes for IPv4.
    grh[GRH_LEN - pkt.ip_header.len()..].copy_from_slice(pkt.ip_header);
    let msg = Message {
        src_qpn: pkt.src_qpn,
        qkey: pkt.qkey,
        imm: pkt.imm,
        solicited: pkt.solicited,
        grh,
        payload: pkt.payload,
    };
    match deliver(dev, &guard, dest, &msg) {
        Delivery::Done => (Count::Received, None),
        Delivery::NotReady => (Count::State, Some(DropReason::NotSpecified)),
        Delivery::Qkey => (Count::Qkey, Some(DropReason::NotSpecified)),
        Delivery::Flushed => (Count::Flushed, Some(DropReason::NotSpecified)),
        Delivery::NoBuffer => (Count::NoBuffer, Some(DropReason::NoBuffer)),
    }
}

/// A packet for an RC QP: a request to its responder, an acknowledgement
/// to its completer, from the QP's path's destination only
/// (`rxe_recv.c:check_addr`).
fn connected(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    dest: ArcBorrow<'_, QpCore>,
    pkt: &wire::Incoming<'_>,
) -> (Count, Option<DropReason>) {
    let a = *dest.attrs.lock();
    if !may_receive(a.qp_state) {
        return (Count::State, Some(DropReason::NotSpecified));
    }
    if a.qp_state == QpState::Err {
        QpCore::flush_later(dest);
        return (Count::Flushed, Some(DropReason::NotSpecified));
    }
    let from_path =
        a.av.is_some_and(|av| wire::source_address(pkt.ip_header) == Some(av.dgid.ip()));
    if !from_path {
        return (Count::State, Some(DropReason::NotSpecified));
    }
    if dest.qp_type == QpType::Uc {
        // UC has requests only (the transport's opcodes, checked).
        super::rc::uc::request(dev, guard, dest, &a, pkt)
    } else if pkt.opcode.hdrs.has(Hdrs::REQ) {
        super::rc::resp::request(dev, guard, dest, &a, pkt)
    } else if pkt.opcode.is_read_response() {
        super::rc::comp::on_read_response(dev, guard, dest, pkt)
    } else if pkt.opcode.hdrs.has(Hdrs::ATMACK) {
        super::rc::comp::on_atomic_ack(dev, guard, dest, pkt)
    } else if pkt.opcode.hdrs.has(Hdrs::AETH) && !pkt.opcode.hdrs.has(Hdrs::PAYLOAD) {
        super::rc::comp::on_ack(dev, dest, pkt)
    } else {
        // No other answer of RC has no payload (the opcodes, checked).
        (Count::Opcode, Some(DropReason::UnhandledProto))
    }
}

/// Why a message could not be written into a receive buffer.
enum Scatter {
    /// Its SGEs hold less than the GRH and the payload.
    TooSmall,
    /// An SGE is not valid.
    Failed,
}

/// Writes the GRH then the payload through the SGEs of `w`, in `dest`'s
/// memory regions (local write access, `dest`'s PD).
fn scatter(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    dest: &QpCore,
    w: &RecvWqe<'_>,
    grh: &[u8; GRH_LEN],
    payload: &[u8],
) -> core::result::Result<(), Scatter> {
    let n = w.num_sge();
    if n > dest.recv_max_sge() {
        return Err(Scatter::Failed);
    }
    let total = GRH_LEN + payload.len();
    let mut room = 0u64;
    for i in 0..n {
        room += u64::from(w.sge(i).ok_or(Scatter::Failed)?.length);
    }
    if room < total as u64 {
        return Err(Scatter::TooSmall);
    }
    // The bytes still to write, GRH first.
    let mut done = 0usize;
    for i in 0..n {
        if done == total {
            break;
        }
        let sge = w.sge(i).ok_or(Scatter::Failed)?;
        // CAST: A `u32`.
        let n = (sge.length as usize).min(total - done);
        if n == 0 {
            continue;
        }
        let mr = mr::find(dev, guard, sge.lkey).map_err(|_: MrError| Scatter::Failed)?;
        let mut off = mr
            .check(dest.pd, true, sge.addr, n as u64)
            .map_err(|_| Scatter::Failed)?;
        let end = done + n;
        // The part of the GRH, then of the payload, in this SGE.
        if done < GRH_LEN {
            let g = &grh[done..end.min(GRH_LEN)];
            mr.write(off, g).map_err(|_| Scatter::Failed)?;
            off += g.len();
        }
        if end > GRH_LEN {
            let p = &payload[done.max(GRH_LEN) - GRH_LEN..end - GRH_LEN];
            mr.write(off, p).map_err(|_| Scatter::Failed)?;
        }
        done = end;
    }
    Ok(())
}
