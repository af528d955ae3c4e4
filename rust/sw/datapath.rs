// SPDX-License-Identifier: GPL-2.0

//! rv0's data path, UD only: the doorbell sends what a QP's send ring
//! holds; a message to the device's own address is delivered to the
//! destination QP's receive ring (loopback, as soft-RoCE delivers it:
//! `rxe_net.c:rxe_loopback`); completions go to the QPs' CQs.
//!
//! Everything userspace wrote is copied out of its ring once and checked
//! before use (see `Documentation/rv0-datapath.rst`, "What not to copy
//! from rxe"). Messages to other addresses need the wire, which rv0 does
//! not have yet: they complete with `IB_WC_LOC_QP_OP_ERR`.
//!
//! Locks, in the order they may nest: a QP's send mutex, a QP's receive
//! lock, a CQ's lock; a QP's attribute lock alone. The path runs in
//! process context (the doorbell is a system call); RCU keeps the QPs and
//! memory regions it finds alive while it uses them.

use super::{
    cq::CqFull,
    device::Rv,
    mr::{
        self,
        MrError, //
    },
    qp::{
        QpCore,
        SendState,
        SwQp, //
    },
};
use crate::rdma::{
    cq::{
        UserWc,
        WC_GRH,
        WC_LOC_QP_OP_ERR,
        WC_OP_RECV,
        WC_OP_SEND,
        WC_SUCCESS,
        WC_WITH_IMM,
        WC_WR_FLUSH_ERR, //
    },
    driver::{
        attrs::Mtu,
        DriverDevice, //
    },
    gid::Gid,
    gid_attr::{
        GidAttr,
        GidType, //
    },
    qp::{
        QpState,
        RecvWqe,
        SendWqe,
        SEND_INLINE,
        SEND_SIGNALED,
        SEND_SOLICITED,
        WR_SEND,
        WR_SEND_WITH_IMM, //
    },
};
use kernel::{
    prelude::*,
    sync::rcu, //
};

/// The only port.
const PORT: u8 = 1;

/// The bytes of the global route header a UD receive gets first.
const GRH_LEN: usize = 40;

/// RoCE v2 headers after IP, and the ICRC: UDP, BTH, DETH, ICRC.
const UDP_BTH_DETH_ICRC: usize = 8 + 12 + 8 + 4;

/// The multicast QP number (`IB_MULTICAST_QPN`).
const MULTICAST_QPN: u32 = 0xff_ffff;

/// A message on its way to a QP of this device.
struct Message<'a> {
    src_qpn: u32,
    qkey: u32,
    /// Immediate data, big endian as sent.
    imm: Option<u32>,
    solicited: bool,
    /// The header the receiver gets before the payload.
    grh: [u8; GRH_LEN],
    payload: &'a [u8],
}

/// Whether a QP in `state` may ring its doorbell (`rxe_verbs.c:rxe_post_send`:
/// from RTS on; a QP in error flushes).
fn may_post(state: QpState) -> bool {
    !matches!(state, QpState::Reset | QpState::Init | QpState::Rtr)
}

/// Whether a QP in `state` takes messages (`rxe_recv.c:check_type_state`:
/// from RTR on; in error they only flush its receives).
fn may_receive(state: QpState) -> bool {
    matches!(
        state,
        QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe | QpState::Err
    )
}

/// The completion of a work request that failed: only the ID, the status
/// and the QP are valid, the rest is zero (soft-RoCE's).
fn error_wc(wr_id: u64, status: u32, qpn: u32) -> UserWc {
    UserWc {
        wr_id,
        status,
        qp_num: qpn,
        ..UserWc::default()
    }
}

/// `post_send` of rv0: the doorbell (`rxe_verbs.c:rxe_post_send` for a
/// user QP, then what soft-RoCE's requester and completer do). `EINVAL`
/// below RTS.
pub(crate) fn post_send(dev: &DriverDevice<Rv>, qp: &SwQp) -> Result {
    let qp = qp.core();
    let state = qp.state();
    if !may_post(state) {
        return Err(EINVAL);
    }
    // A drained send queue holds what is posted until the QP is back in
    // RTS (`rxe_req.c:req_next_wqe`).
    if state == QpState::Sqd {
        return Ok(());
    }
    let mut st = qp.send.lock();
    let mut failed = false;
    // What was posted when the doorbell rang, at most a ring's worth:
    // userspace cannot keep this loop going.
    let producer = qp.sq.user_producer();
    let mut first = true;
    loop {
        if st.consumer == producer {
            break;
        }
        if !first {
            crate::rdma::cond_resched();
        }
        first = false;
        let SendState {
            consumer,
            wqe,
            payload,
        } = &mut *st;
        qp.sq.read_slot(*consumer, wqe);
        let Some(w) = SendWqe::new(wqe) else {
            break;
        };
        let flushing = qp.state() == QpState::Err;
        let with_imm = w.opcode() == WR_SEND_WITH_IMM;
        let (status, byte_len) = if flushing {
            (WC_WR_FLUSH_ERR, 0)
        } else {
            match send_one(dev, qp, &w, payload) {
                Ok(len) => (WC_SUCCESS, len),
                Err(status) => (status, 0),
            }
        };
        let signaled = qp.sq_sig_all || w.send_flags() & SEND_SIGNALED != 0;
        let wc = if status == WC_SUCCESS {
            // `rxe_comp.c:make_send_cqe`.
            UserWc {
                wr_id: w.wr_id(),
                status,
                opcode: WC_OP_SEND,
                byte_len,
                qp_num: qp.qpn,
                wc_flags: if with_imm { WC_WITH_IMM } else { 0 },
                ..UserWc::default()
            }
        } else {
            error_wc(w.wr_id(), status, qp.qpn)
        };
        *consumer = qp.sq.next(*consumer);
        qp.sq.publish_consumer(*consumer);
        if signaled || status != WC_SUCCESS {
            // A full send CQ loses the completion after `IB_EVENT_CQ_ERR`,
            // without failing the QP (`rxe_comp.c:do_complete`).
            let _ = qp.send_cq.post(&wc, false);
        }
        if status != WC_SUCCESS && !flushing {
            // The QP goes to error; what follows in the ring is flushed by
            // this loop.
            qp.attrs.lock().qp_state = QpState::Err;
            failed = true;
        }
    }
    drop(st);
    if failed {
        flush_recv(qp);
    }
    Ok(())
}

/// Sends one work request; the bytes sent, or the status of its error
/// completion (`rxe_req.c`, for UD).
fn send_one(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    w: &SendWqe<'_>,
    buf: &mut [u8],
) -> core::result::Result<u32, u32> {
    // soft-RoCE's order (`rxe_req.c:req_next_wqe`, `rxe_requester`): the
    // SGE count, the opcode, the MTU, the address, the payload.
    let inline = w.send_flags() & SEND_INLINE != 0;
    if !inline && w.num_sge() > qp.cap.max_send_sge {
        return Err(WC_LOC_QP_OP_ERR);
    }
    let opcode = w.opcode();
    if opcode != WR_SEND && opcode != WR_SEND_WITH_IMM {
        return Err(WC_LOC_QP_OP_ERR);
    }
    let claimed = claimed_length(w).ok_or(WC_LOC_QP_OP_ERR)?;
    let ndev = dev.netdev().ok_or(WC_LOC_QP_OP_ERR)?;
    // CAST: At most 4096.
    let mtu = Mtu::from_netdev_mtu(ndev.mtu()).bytes() as u64;
    if claimed > mtu {
        // A UD message larger than the path MTU is not sent, and
        // completes successfully (C10-93.1.1, `rxe_req.c:rxe_requester`),
        // before anything else is looked at.
        // CAST: Truncated to 32 bits, as the provider's own sum is.
        return Ok(claimed as u32);
    }
    // The address: an AH of this device and of the QP's PD (an address
    // vector in the ring, `ah_num` 0, is not taken; `rxe_av.c:rxe_get_av`).
    let av = match dev.ah_vector(w.ah_num()) {
        Some((av, pd)) if pd == qp.pd => av,
        _ => return Err(WC_LOC_QP_OP_ERR),
    };
    let len = gather(dev, qp, w, buf)?;
    let sgid = GidAttr::get(dev.device(), u32::from(PORT), u32::from(av.sgid_index))
        .map_err(|_| WC_LOC_QP_OP_ERR)?;
    // RoCE v2 only; and only to this device's own address until rv0 has
    // the wire.
    if sgid.gid_type() != GidType::RoceV2 || av.dmac != ndev.mac() {
        return Err(WC_LOC_QP_OP_ERR);
    }
    let with_imm = opcode == WR_SEND_WITH_IMM;
    let grh = grh(
        &sgid.gid(),
        &av.dgid,
        av.traffic_class,
        av.hop_limit,
        len,
        with_imm,
    );
    let msg = Message {
        src_qpn: qp.qpn,
        qkey: w.remote_qkey(),
        imm: with_imm.then(|| w.imm_data()),
        solicited: w.send_flags() & SEND_SOLICITED != 0,
        grh,
        payload: &buf[..len],
    };
    let dst = w.remote_qpn() & MULTICAST_QPN;
    let guard = rcu::read_lock();
    // No such QP, or multicast (no groups on rv0 yet): the datagram is
    // lost, the send succeeds.
    if dst != MULTICAST_QPN {
        if let Some(dest) = dev.qp_table().get(&guard, dst) {
            deliver(dev, &guard, dest, &msg);
        }
    }
    drop(guard);
    // CAST: At most the MTU.
    Ok(len as u32)
}

/// The length of the message `w` claims: its inline length, or the sum of
/// its SGEs' lengths (`None` past the slot).
fn claimed_length(w: &SendWqe<'_>) -> Option<u64> {
    if w.send_flags() & SEND_INLINE != 0 {
        return Some(u64::from(w.length()));
    }
    (0..w.num_sge()).try_fold(0u64, |sum, i| Some(sum + u64::from(w.sge(i)?.length)))
}

/// Copies the payload of `w` into `buf`: its inline data, or what its SGEs
/// point at in this QP's memory regions. The length, or the status of the
/// error completion.
fn gather(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    w: &SendWqe<'_>,
    buf: &mut [u8],
) -> core::result::Result<usize, u32> {
    if w.send_flags() & SEND_INLINE != 0 {
        // rv0 bounds inline data by the QP's own capacity (soft-RoCE
        // trusts `dma.resid` and `sge_offset`, from the ring).
        let len = w.length();
        if len > qp.cap.max_inline_data {
            return Err(WC_LOC_QP_OP_ERR);
        }
        // CAST: At most `max_inline_data`, 512.
        let data = w.inline_data(len as usize).ok_or(WC_LOC_QP_OP_ERR)?;
        buf.get_mut(..data.len())
            .ok_or(WC_LOC_QP_OP_ERR)?
            .copy_from_slice(data);
        return Ok(data.len());
    }
    let n = w.num_sge();
    let guard = rcu::read_lock();
    let mut len = 0usize;
    for i in 0..n {
        let sge = w.sge(i).ok_or(WC_LOC_QP_OP_ERR)?;
        if sge.length == 0 {
            continue;
        }
        // CAST: A `u32`.
        let end = len
            .checked_add(sge.length as usize)
            .ok_or(WC_LOC_QP_OP_ERR)?;
        // The caller checked the total against the MTU: within the buffer.
        let dst = buf.get_mut(len..end).ok_or(WC_LOC_QP_OP_ERR)?;
        let mr = mr::find(dev, &guard, sge.lkey).map_err(|_| WC_LOC_QP_OP_ERR)?;
        let off = mr
            .check(qp.pd, false, sge.addr, u64::from(sge.length))
            .map_err(|_| WC_LOC_QP_OP_ERR)?;
        mr.read(off, dst).map_err(|_| WC_LOC_QP_OP_ERR)?;
        len = end;
    }
    Ok(len)
}

/// The 40 bytes a UD receive gets before the payload (`union
/// rdma_network_hdr`): for IPv4, 20 zero bytes then the IPv4 header of the
/// packet; for IPv6 its IPv6 header (`rxe_resp.c:send_data_in`), as
/// soft-RoCE builds them (`rxe_net.c:prepare4`, `prepare6`), but the IPv4
/// identification, which is 0 here.
fn grh(sgid: &Gid, dgid: &Gid, tclass: u8, hop_limit: u8, len: usize, imm: bool) -> [u8; GRH_LEN] {
    let mut g = [0u8; GRH_LEN];
    let pad = (4 - len % 4) % 4;
    let inner = UDP_BTH_DETH_ICRC + if imm { 4 } else { 0 } + len + pad;
    if sgid.is_v4mapped() && dgid.is_v4mapped() {
        let h = &mut g[20..];
        h[0] = 0x45;
        h[1] = tclass;
        // CAST: At most 20 + 36 + 4096 + 3.
        h[2..4].copy_from_slice(&((20 + inner) as u16).to_be_bytes());
        // Don't fragment.
        h[6] = 0x40;
        h[8] = hop_limit;
        // UDP.
        h[9] = 17;
        h[12..16].copy_from_slice(&sgid.raw()[12..]);
        h[16..20].copy_from_slice(&dgid.raw()[12..]);
        let sum = ipv4_checksum(h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
    } else {
        g[0] = 0x60 | (tclass >> 4);
        g[1] = tclass << 4;
        // CAST: As above.
        g[4..6].copy_from_slice(&(inner as u16).to_be_bytes());
        g[6] = 17;
        g[7] = hop_limit;
        g[8..24].copy_from_slice(sgid.raw());
        g[24..40].copy_from_slice(dgid.raw());
    }
    g
}

/// The IPv4 header checksum of `h` (its checksum field 0).
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    // CAST: Folded to 16 bits above.
    !(sum as u16)
}

/// Delivers a message to `dest`, a QP of this device (soft-RoCE's receive
/// checks, `rxe_recv.c`, then its responder for UD, `rxe_resp.c`). A
/// message the QP does not take is dropped.
fn deliver(dev: &DriverDevice<Rv>, guard: &rcu::Guard, dest: &QpCore, msg: &Message<'_>) {
    let (state, qkey) = {
        let a = dest.attrs.lock();
        (a.qp_state, a.qkey)
    };
    if state == QpState::Err {
        // The responder of a QP in error flushes what was posted since
        // (`rxe_resp.c:rxe_receiver`).
        flush_recv(dest);
        return;
    }
    if !may_receive(state) || msg.qkey != qkey {
        return;
    }
    let mut rs = dest.recv.lock();
    if rs.consumer == dest.rq.user_producer() {
        // No receive posted: dropped.
        return;
    }
    let consumer = rs.consumer;
    dest.rq.read_slot(consumer, &mut rs.wqe);
    let Some(w) = RecvWqe::new(&rs.wqe) else {
        return;
    };
    let total = GRH_LEN + msg.payload.len();
    let status = match scatter(dev, guard, dest, &w, &msg.grh, msg.payload) {
        Ok(()) => WC_SUCCESS,
        // Too small a buffer: the message is dropped, the WQE kept
        // (`rxe_resp.c:check_length`, for UD).
        Err(Scatter::TooSmall) => return,
        Err(Scatter::Failed) => WC_LOC_QP_OP_ERR,
    };
    let mut flags = WC_GRH;
    if msg.imm.is_some() {
        flags |= WC_WITH_IMM;
    }
    let wc = if status == WC_SUCCESS {
        // `rxe_resp.c:do_complete`, for UD.
        UserWc {
            wr_id: w.wr_id(),
            status,
            opcode: WC_OP_RECV,
            // CAST: At most 40 + the MTU.
            byte_len: total as u32,
            imm_data: msg.imm.unwrap_or(0),
            qp_num: dest.qpn,
            src_qp: msg.src_qpn,
            wc_flags: flags,
            port_num: PORT,
        }
    } else {
        error_wc(w.wr_id(), status, dest.qpn)
    };
    rs.consumer = dest.rq.next(consumer);
    dest.rq.publish_consumer(rs.consumer);
    let posted = dest.recv_cq.post(&wc, msg.solicited);
    drop(rs);
    // An error, or a full CQ (`rxe_resp.c:do_complete`): the QP goes to
    // error and its receive queue is flushed.
    if status != WC_SUCCESS || posted == Err(CqFull) {
        dest.attrs.lock().qp_state = QpState::Err;
        flush_recv(dest);
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
    if n > dest.cap.max_recv_sge {
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

/// Flushes the receive queue of a QP in error: every posted receive
/// completes with `IB_WC_WR_FLUSH_ERR` (`rxe_resp.c:flush_recv_queue`).
pub(crate) fn flush_recv(qp: &QpCore) {
    let mut rs = qp.recv.lock();
    // What is posted now, at most a ring's worth: userspace cannot keep
    // this loop going. A full CQ takes no more completions, but the queue
    // is flushed all the same (`rxe_resp.c:flush_recv_queue`).
    let producer = qp.rq.user_producer();
    let mut posting = true;
    while rs.consumer != producer {
        let consumer = rs.consumer;
        qp.rq.read_slot(consumer, &mut rs.wqe);
        let wr_id = RecvWqe::new(&rs.wqe).map_or(0, |w| w.wr_id());
        rs.consumer = qp.rq.next(consumer);
        qp.rq.publish_consumer(rs.consumer);
        // `rxe_resp.c:flush_recv_wqe`.
        let wc = error_wc(wr_id, WC_WR_FLUSH_ERR, qp.qpn);
        if posting && qp.recv_cq.post(&wc, false).is_err() {
            posting = false;
        }
    }
}

/// Flushes the send queue of a QP in error: every posted send completes
/// with `IB_WC_WR_FLUSH_ERR` (`rxe_comp.c:flush_send_queue`).
fn flush_send(qp: &QpCore) {
    let mut st = qp.send.lock();
    // As in `flush_recv` (`rxe_comp.c:flush_send_queue`).
    let producer = qp.sq.user_producer();
    let mut posting = true;
    while st.consumer != producer {
        let SendState { consumer, wqe, .. } = &mut *st;
        qp.sq.read_slot(*consumer, wqe);
        let wr_id = SendWqe::new(wqe).map_or(0, |w| w.wr_id());
        *consumer = qp.sq.next(*consumer);
        qp.sq.publish_consumer(*consumer);
        // `rxe_comp.c:flush_send_wqe`.
        let wc = error_wc(wr_id, WC_WR_FLUSH_ERR, qp.qpn);
        if posting && qp.send_cq.post(&wc, false).is_err() {
            posting = false;
        }
    }
}

/// A QP moved to error by `modify_qp`: both queues are flushed.
pub(crate) fn flush(_dev: &DriverDevice<Rv>, qp: &QpCore) {
    flush_send(qp);
    flush_recv(qp);
}
