// SPDX-License-Identifier: GPL-2.0

//! rv0's data path, UD only: the doorbell sends what a QP's send ring
//! holds, as RoCE v2 packets ([`super::wire`]) through the IP layer; a
//! message to the device's own MAC address is delivered to the destination
//! QP's receive ring directly (loopback, as soft-RoCE delivers it:
//! `rxe_net.c:rxe_loopback`). Packets from the wire come from the tap
//! ([`super::port`]) to [`receive`]. Completions go to the QPs' CQs.
//!
//! Everything userspace wrote is copied out of its ring once and checked
//! before use, and so is every received packet (see
//! `Documentation/rv0-datapath.rst`, "What not to copy from rxe").
//!
//! Locks, in the order they may nest: a QP's send mutex, a QP's receive
//! lock, a CQ's lock; a QP's attribute lock alone. Sending runs in process
//! context (the doorbell is a system call), receiving in the network's
//! softirq: every lock a receive takes disables bottom halves
//! ([`crate::sync::SpinLockBh`]). RCU keeps the QPs and memory regions the
//! path finds alive while it uses them.

use super::{
    device::Rv,
    qp::{
        QpCore,
        SendState,
        SwQp, //
    },
    wire::{
        self,
        opcode,
        Count,
        Outgoing, //
    },
    xmit::{
        self,
        Via, //
    },
};
use crate::net::{
    device::NetDevice,
    IpAddr, //
};
use crate::rdma::{
    ah_attr::AddressVector,
    driver::DriverDevice,
    gid_attr::GidType,
    qp::QpState,
    rxe_abi::wqe::SendWqe,
    wc::{
        UserWc,
        WcFlag,
        WcFlags,
        WcOpcode,
        WcStatus, //
    },
    wr::{
        SendFlag,
        WrOpcode, //
    },
};
use kernel::{
    prelude::*,
    sync::{
        aref::ARef,
        rcu,
        Arc, //
    },
};

/// The only port.
pub(super) const PORT: u8 = 1;

/// The bytes of the global route header a UD receive gets first.
pub(super) const GRH_LEN: usize = 40;

/// The multicast QP number (`IB_MULTICAST_QPN`).
pub(super) const MULTICAST_QPN: u32 = 0xff_ffff;

/// A message on its way to a QP of this device.
pub(super) struct Message<'a> {
    pub(super) src_qpn: u32,
    pub(super) qkey: u32,
    /// Immediate data, big endian as sent.
    pub(super) imm: Option<u32>,
    pub(super) solicited: bool,
    /// The header the receiver gets before the payload.
    pub(super) grh: [u8; GRH_LEN],
    pub(super) payload: &'a [u8],
}

/// Whether a QP in `state` may ring its doorbell (`rxe_verbs.c:rxe_post_send`:
/// from RTS on; a QP in error flushes).
fn may_post(state: QpState) -> bool {
    !matches!(state, QpState::Reset | QpState::Init | QpState::Rtr)
}

/// `post_send` of rv0: the doorbell (`rxe_verbs.c:rxe_post_send` for a
/// user QP, then what soft-RoCE's requester and completer do). `EINVAL`
/// below RTS.
pub(crate) fn post_send(dev: &DriverDevice<Rv>, qp: &SwQp) -> Result {
    send_queue(dev, qp.core())
}

/// Sends what the send ring of `qp` holds, as the doorbell and the send
/// work of [`super::tx`] do. It stops early, leaving the rest posted,
/// when the QP has [`super::tx::INFLIGHT_HIGH`] packets in flight; the
/// send work calls it again when they are down to
/// [`super::tx::INFLIGHT_LOW`]. `EINVAL` below RTS. Process context.
pub(crate) fn send_queue(dev: &DriverDevice<Rv>, qp: &Arc<QpCore>) -> Result {
    let state = qp.state();
    if !may_post(state) {
        return Err(EINVAL);
    }
    // A drained send queue holds what is posted until the QP is back in
    // RTS (`rxe_req.c:req_next_wqe`); a connected QP's requester sends what
    // it has begun (again, if need be) and begins nothing new.
    if state == QpState::Sqd && !qp.qp_type.connected() {
        return Ok(());
    }
    if qp.qp_type.connected() {
        if state == QpState::Err {
            super::flush::flush_send(qp);
        } else {
            super::rc::req::send(dev, qp, &mut qp.send.lock());
        }
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
        let flushing = qp.state() == QpState::Err;
        // Backpressure: the rest waits for packets in flight to be freed
        // (`rxe_req.c:rxe_requester`, `need_req_skb`).
        if !flushing && qp.tx.full() {
            dev.wire_counters().count(Count::SendWait);
            break;
        }
        let SendState {
            consumer,
            wqe,
            payload,
            ..
        } = &mut *st;
        qp.sq.read_slot(*consumer, wqe);
        let Some(w) = SendWqe::new(wqe) else {
            break;
        };
        let with_imm = w.opcode() == Some(WrOpcode::SendWithImm);
        let (status, byte_len) = if flushing {
            (WcStatus::WrFlushErr, 0)
        } else {
            match send_one(dev, qp, &w, payload) {
                Ok(len) => (WcStatus::Success, len),
                Err(status) => (status, 0),
            }
        };
        let signaled = qp.sq_sig_all || w.send_flags().contains(SendFlag::Signaled);
        let wc = if status == WcStatus::Success {
            // `rxe_comp.c:make_send_cqe`.
            UserWc {
                wr_id: w.wr_id(),
                status,
                opcode: WcOpcode::Send,
                byte_len,
                qp_num: qp.qpn,
                wc_flags: if with_imm {
                    WcFlag::WithImm.into()
                } else {
                    WcFlags::empty()
                },
                ..UserWc::default()
            }
        } else {
            UserWc::error(w.wr_id(), status, qp.qpn)
        };
        *consumer = qp.sq.next(*consumer);
        qp.sq.publish_consumer(*consumer);
        if signaled || status != WcStatus::Success {
            // A full send CQ loses the completion after `IB_EVENT_CQ_ERR`,
            // without failing the QP (`rxe_comp.c:do_complete`).
            let _ = qp.send_cq.post(&wc, false);
        }
        if status != WcStatus::Success && !flushing {
            // The QP goes to error; what follows in the ring is flushed by
            // this loop.
            qp.attrs.lock().qp_state = QpState::Err;
            failed = true;
        }
    }
    drop(st);
    if failed {
        super::flush::flush_recv(qp);
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
) -> core::result::Result<u32, WcStatus> {
    // soft-RoCE's order (`rxe_req.c:req_next_wqe`, `rxe_requester`): the
    // SGE count, the opcode, the MTU, the address; then the source GID,
    // and the route and the packet before the payload, which is gathered
    // into the packet (so a request with no route and a bad key counts as
    // `send_error`; either way it completes with `IB_WC_LOC_QP_OP_ERR`).
    let inline = w.send_flags().contains(SendFlag::Inline);
    if !inline && w.num_sge() > qp.cap.max_send_sge {
        return Err(WcStatus::LocQpOpErr);
    }
    let opcode = match w.opcode() {
        Some(op @ (WrOpcode::Send | WrOpcode::SendWithImm)) => op,
        _ => return Err(WcStatus::LocQpOpErr),
    };
    let claimed = claimed_length(w).ok_or(WcStatus::LocQpOpErr)?;
    // The netdev's MTU and MAC, read without a lock.
    let (mtu, own_mac) = {
        let guard = rcu::read_lock();
        let ndev = dev.netdev_rcu(&guard).ok_or(WcStatus::LocQpOpErr)?;
        // CAST: At most 4096.
        (wire::port_mtu(ndev.mtu()).bytes() as u64, ndev.mac())
    };
    if claimed > mtu {
        // A UD message larger than the path MTU is not sent, and
        // completes successfully (C10-93.1.1, `rxe_req.c:rxe_requester`),
        // before anything else is looked at; its PSN is used up.
        next_psn(qp);
        // CAST: Truncated to 32 bits, as the provider's own sum is.
        return Ok(claimed as u32);
    }
    // The address: an AH of this device and of the QP's PD (an address
    // vector in the ring, `ah_num` 0, is not taken; `rxe_av.c:rxe_get_av`).
    let av = match dev.ah_vector(w.ah_num()) {
        Some((av, pd)) if pd == qp.pd => av,
        _ => return Err(WcStatus::LocQpOpErr),
    };
    let dst = av.dgid.ip();
    let (src, gid_ndev) = source(dev, &av)?;
    let with_imm = opcode.has_imm();
    let out = Outgoing {
        src,
        dst,
        traffic_class: av.traffic_class,
        hop_limit: av.hop_limit,
        src_port: wire::source_port(qp.qpn),
        opcode: if with_imm {
            &opcode::UD_SEND_ONLY_WITH_IMMEDIATE
        } else {
            &opcode::UD_SEND_ONLY
        },
        dest_qpn: w.remote_qpn() & MULTICAST_QPN,
        src_qpn: qp.qpn,
        psn: qp.attrs.lock().sq_psn,
        qkey: w.remote_qkey(),
        imm: with_imm.then(|| w.imm_data()),
        ieth: 0,
        feth: 0,
        solicited: w.send_flags().contains(SendFlag::Solicited),
        ack_req: false,
        aeth: 0,
        reth: (0, 0, 0),
        atomic: (0, 0),
        orig: 0,
        // CAST: At most the MTU (checked above).
        payload_len: claimed as usize,
    };
    // To the device's own MAC: looped back without the IP layer, as
    // soft-RoCE does (`rxe_net.c:rxe_prepare`), from the QP's buffer.
    // Otherwise the payload is gathered straight into the packet.
    if av.dmac == own_mac {
        let into = buf.get_mut(..out.payload_len).ok_or(WcStatus::LocQpOpErr)?;
        let len = gather(dev, qp, w, 0, into)?;
        loopback(dev, &out, &into[..len]);
    } else {
        xmit::transmit(dev, qp, &gid_ndev, &out, Via::Ip, |payload| {
            gather(dev, qp, w, 0, payload)
        })?;
    }
    next_psn(qp);
    // CAST: At most the MTU.
    Ok(out.payload_len as u32)
}

/// The source of packets to `av`: the address of its source GID, from the
/// device's copy of the table, without a lock, and the netdev of the GID's
/// entry (a VLAN device for a GID of a VLAN address, so that the packet
/// carries its tag, as soft-RoCE sends: `rxe_net.c:rxe_init_packet`,
/// `rxe_find_route4`). RoCE v2 only, between addresses of one family.
pub(super) fn source(
    dev: &DriverDevice<Rv>,
    av: &AddressVector,
) -> core::result::Result<(IpAddr, ARef<NetDevice>), WcStatus> {
    let guard = rcu::read_lock();
    let sgid = dev
        .gids()
        .get(&guard, u32::from(av.sgid_index))
        .ok_or(WcStatus::LocQpOpErr)?;
    let src = sgid.gid().ip();
    if sgid.gid_type() != GidType::RoceV2 || !src.same_family(&av.dgid.ip()) {
        return Err(WcStatus::LocQpOpErr);
    }
    Ok((src, ARef::from(sgid.ndev())))
}

/// The QP sent a packet: its next PSN, which `query_qp` reports
/// (`rxe_req.c:update_wqe_psn`).
fn next_psn(qp: &QpCore) {
    let mut a = qp.attrs.lock();
    a.sq_psn = a.sq_psn.next();
}

/// Delivers a packet to a QP of this device without the IP layer, with
/// the GRH it would have had on the wire. No such QP, or multicast (no
/// groups on rv0 yet): the datagram is lost, the send succeeds.
fn loopback(dev: &DriverDevice<Rv>, out: &Outgoing, payload: &[u8]) {
    let mut grh = [0u8; GRH_LEN];
    if out.is_ipv6() {
        out.write_ip_header(&mut grh);
    } else {
        // IPv4: 20 zero bytes, then the IPv4 header.
        out.write_ip_header(&mut grh[20..]);
    }
    let msg = Message {
        src_qpn: out.src_qpn,
        qkey: out.qkey,
        imm: out.imm,
        solicited: out.solicited,
        grh,
        payload,
    };
    if out.dest_qpn == MULTICAST_QPN {
        return;
    }
    let guard = rcu::read_lock();
    if let Some(dest) = dev.qp_table().borrow(&guard, out.dest_qpn) {
        // A QP being destroyed takes nothing more.
        if let Some(_delivering) = dest.gate.enter() {
            super::receive::deliver(dev, &guard, dest, &msg);
        }
    }
}

/// The length of the message `w` claims: its inline length, or the sum of
/// its SGEs' lengths (`None` past the slot).
pub(super) fn claimed_length(w: &SendWqe<'_>) -> Option<u64> {
    if w.send_flags().contains(SendFlag::Inline) {
        return Some(u64::from(w.length()));
    }
    (0..w.num_sge()).try_fold(0u64, |sum, i| Some(sum + u64::from(w.sge(i)?.length)))
}

/// Copies the payload of `w` from its byte `skip` on into `buf`: its
/// inline data, or what its SGEs point at in this QP's memory regions. The
/// length, or the status of the error completion.
pub(super) fn gather(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    w: &SendWqe<'_>,
    skip: usize,
    buf: &mut [u8],
) -> core::result::Result<usize, WcStatus> {
    if w.send_flags().contains(SendFlag::Inline) {
        // rv0 bounds inline data by the QP's own capacity (soft-RoCE
        // trusts `dma.resid` and `sge_offset`, from the ring).
        let len = w.length();
        if len > qp.cap.max_inline_data {
            return Err(WcStatus::LocQpOpErr);
        }
        // CAST: At most `max_inline_data`, 512.
        let data = w.inline_data(len as usize).ok_or(WcStatus::LocQpOpErr)?;
        let data = data.get(skip..).ok_or(WcStatus::LocQpOpErr)?;
        let data = &data[..data.len().min(buf.len())];
        buf.get_mut(..data.len())
            .ok_or(WcStatus::LocQpOpErr)?
            .copy_from_slice(data);
        return Ok(data.len());
    }
    super::sge::gather(dev, qp.pd, w.num_sge(), |i| w.sge(i), skip, buf)
}
