// SPDX-License-Identifier: GPL-2.0

//! rv0's queue pairs: unreliable datagram (UD) QPs, and reliable
//! connected (RC) ones with `rc=1` ([`super::rc`]), with a send and a
//! receive ring that userspace maps, in the layout and with the geometry
//! of soft-RoCE's (`rxe_qp.c`), so that rdma-core's rxe provider uses them
//! unchanged.
//!
//! A QP can be created, moved through the states of ib_core's table for
//! UD, queried and destroyed, with soft-RoCE's limits, checks and errors;
//! the data path (`super::datapath`) sends what its send ring holds when
//! userspace rings the doorbell and fills its receive ring.

use super::{
    cq::CqCore,
    device::Rv,
    ids::Ids,
    rc::{
        self,
        ReqState,
        RespState, //
    },
    srq::RecvQueue,
    tx::TxFlow, //
};
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::{
            ops::QpObjects,
            DriverDevice, //
        },
        gate::Gate,
        qp::{
            PathMtu,
            QpAttrs,
            QpCap,
            QpCreate,
            QpNotifier,
            QpQuery,
            QpState,
            QpType, //
        },
        rxe_abi::{
            ring::{
                MmInfo,
                QueueGeometry,
                UserQueue, //
            },
            wqe::{
                RXE_RECV_WQE_SIZE,
                RXE_SEND_WQE_SIZE,
                RXE_SGE_SIZE, //
            },
        },
    },
};
use kernel::{
    impl_has_delayed_work,
    impl_has_work,
    new_delayed_work,
    new_mutex,
    new_work, //
    prelude::*,
    sync::{
        atomic::Relaxed,
        Arc,
        ArcBorrow,
        Mutex, //
    },
    types::ScopeGuard,
    workqueue::{
        self,
        DelayedWork,
        Work,
        WorkItem, //
    },
};

mod modify;
pub(crate) use modify::modify_qp;

/// The first QP number given to a QP (soft-RoCE's `RXE_MIN_QP_INDEX`;
/// 0 and 1 are the special QPs of IBTA, the rest is reserved).
const MIN_QPN: u32 = 16;

/// The last QP number (soft-RoCE's `RXE_MAX_QP_INDEX`).
const MAX_QPN: u32 = 1 << 20;

/// Most queue pairs per device (soft-RoCE's `RXE_MAX_QP`).
pub(crate) const MAX_QP: u32 = MAX_QPN - MIN_QPN;

/// Deepest work queue (soft-RoCE's `RXE_MAX_QP_WR`).
pub(crate) const MAX_QP_WR: u32 = 1 << 20;

/// Most scatter/gather entries per work request, sends and receives
/// (soft-RoCE's `RXE_MAX_SGE`).
pub(crate) const MAX_SGE: u32 = 32;

/// Most inline data of a send work request: what the largest list of
/// scatter/gather entries takes (soft-RoCE's `RXE_MAX_INLINE_DATA`).
// CAST: 16 bytes.
pub(crate) const MAX_INLINE_DATA: u32 = MAX_SGE * RXE_SGE_SIZE as u32;

/// Most outstanding RDMA reads and atomics (soft-RoCE's
/// `RXE_MAX_QP_RD_ATOM`).
pub(crate) const MAX_QP_RD_ATOM: u8 = 128;

/// The largest local ACK timeout exponent.
const MAX_TIMEOUT: u8 = 31;

/// `IB_MTU_4096`: the largest path MTU (the port's `max_mtu`).
const MAX_PATH_MTU: PathMtu = PathMtu::MAX;

/// `IB_MTU_256`: the path MTU of a new QP (`rxe_qp_init_misc`).
const INITIAL_PATH_MTU: PathMtu = PathMtu::MIN;

/// The largest payload of a message: the largest path MTU, 4096 bytes.
pub(crate) const MAX_PAYLOAD: usize = 4096;

/// `struct rxe_create_qp_resp { struct mminfo rq_mi; struct mminfo sq_mi; }`.
const CREATE_QP_RESP_LEN: usize = 2 * MmInfo::ABI_LEN;

/// The QP numbers of a device: from 16 (on soft-RoCE the first user QP
/// gets 17, the MAD layer's GSI QP having drawn 16 from the same pool).
pub(crate) fn qp_numbers() -> impl PinInit<Ids> {
    Ids::new(MIN_QPN, MAX_QPN, MAX_QP)
}

/// What the send path keeps between doorbells, under the QP's send lock.
pub(crate) struct SendState {
    /// The kernel's consumer index of the send ring.
    pub(crate) consumer: u32,
    /// A send slot, copied out of the ring (the ring's element size).
    pub(crate) wqe: KVec<u8>,
    /// The payload of a message being sent (the largest MTU).
    pub(crate) payload: KVec<u8>,
}

/// What the receive path keeps, under the QP's receive lock.
pub(crate) struct RecvState {
    /// The kernel's consumer index of the receive ring (its own).
    pub(crate) consumer: u32,
    /// A receive slot, copied out of the ring (RC: the one a message
    /// being received goes to).
    pub(crate) wqe: KVec<u8>,
    /// With an SRQ: `wqe` was taken off it for a message not completed
    /// yet ([`QpCore::fetch_recv`]).
    pub(crate) held: bool,
    /// RC: the responder.
    pub(crate) resp: RespState,
}

/// A QP as the data path finds it in the device's table.
#[pin_data]
pub(crate) struct QpCore {
    /// Its number.
    pub(crate) qpn: u32,
    /// A number no other QP of the device ever has (QP numbers come round
    /// again): what a type 2 memory window bound through it keeps.
    pub(crate) uid: u64,
    /// Its type: UD or RC.
    pub(crate) qp_type: QpType,
    /// Its PD ([`super::device::SwPd::id`]).
    pub(crate) pd: u64,
    /// The send ring, offered to the process until the QP is destroyed.
    pub(crate) sq: UserQueue,
    /// Where its receive work requests come from: its own ring, offered
    /// likewise, or an SRQ.
    pub(crate) rq: RecvQueue,
    /// The capacities, as returned at creation.
    pub(crate) cap: QpCap,
    /// Whether every send work request completes.
    pub(crate) sq_sig_all: bool,
    /// The CQs.
    pub(crate) send_cq: Arc<CqCore>,
    pub(crate) recv_cq: Arc<CqCore>,
    /// The attributes `modify_qp` sets, under the lock soft-RoCE calls
    /// `state_lock` (taken in process context and in the network's
    /// softirq, where received packets are delivered).
    #[pin]
    pub(crate) attrs: SpinLockBh<QpAttrs>,
    /// The send path: one doorbell at a time (they may sleep).
    #[pin]
    pub(crate) send: Mutex<SendState>,
    /// The receive path: one message at a time.
    #[pin]
    pub(crate) recv: SpinLockBh<RecvState>,
    /// The flush of the receive queue that the softirq asks for
    /// ([`QpCore::flush_later`]).
    #[pin]
    flush: Work<QpCore>,
    /// RC: the requester's and completer's state.
    #[pin]
    pub(crate) req: SpinLockBh<ReqState>,
    /// RC: the retransmit timer and the RNR timer.
    #[pin]
    retry_timer: DelayedWork<QpCore, 1>,
    #[pin]
    rnr_timer: DelayedWork<QpCore, 2>,
    /// RC and UC: the route of its path, kept between packets
    /// ([`super::xmit::KeptRoute`]).
    #[pin]
    pub(crate) route: SpinLockBh<Option<super::xmit::KeptRoute>>,
    /// Its packets in flight, and what resumes its sending.
    pub(crate) tx: Arc<TxFlow>,
    /// Its owner's event handler (`IB_EVENT_QP_LAST_WQE_REACHED`).
    pub(crate) events: QpNotifier,
    /// What a packet for the QP enters to be delivered (or to queue its
    /// flush); `destroy_qp` closes it: nothing completes on it after.
    #[pin]
    pub(crate) gate: Gate,
}

impl_has_work! {
    impl HasWork<Self> for QpCore { self.flush }
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self, 1> for QpCore { self.retry_timer }
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self, 2> for QpCore { self.rnr_timer }
}

impl WorkItem for QpCore {
    type Pointer = Arc<QpCore>;

    fn run(qp: Arc<QpCore>) {
        if qp.qp_type.connected() {
            super::flush::flush_send(&qp);
        }
        super::flush::flush_recv(&qp);
    }
}

impl WorkItem<1> for QpCore {
    type Pointer = Arc<QpCore>;

    fn run(qp: Arc<QpCore>) {
        rc::timer::retry_fired(qp);
    }
}

impl WorkItem<2> for QpCore {
    type Pointer = Arc<QpCore>;

    fn run(qp: Arc<QpCore>) {
        rc::timer::rnr_fired(qp);
    }
}

impl QpCore {
    /// The QP's state.
    pub(crate) fn state(&self) -> QpState {
        self.attrs.lock().qp_state
    }

    /// Has the queues of this QP, in error, flushed by a work item on the
    /// system workqueue, as soft-RoCE's tasks do it: a packet's softirq
    /// only queues it (the receive queue; RC's send queue too). Any
    /// context.
    pub(crate) fn flush_later(this: ArcBorrow<'_, QpCore>) {
        // Already queued: that run flushes what is posted by then. The
        // reference is not the last (the caller borrows another), so it
        // may be dropped here.
        let _ = workqueue::system().enqueue::<Arc<QpCore>, 0>(Arc::from(this));
    }

    /// Waits until no flush that [`QpCore::flush_later`] queued is queued
    /// or running. Process context.
    fn wait_flush(&self) {
        crate::sync::flush_work(&self.flush);
    }
}

/// A queue pair of rv0: its part in the device's table.
pub(crate) struct SwQp {
    core: Arc<QpCore>,
}

impl SwQp {
    /// The part the data path uses.
    pub(crate) fn core(&self) -> &Arc<QpCore> {
        &self.core
    }
}

/// soft-RoCE's capacity checks (`rxe_qp.c:rxe_qp_chk_cap`): `EINVAL` past
/// a limit. Receive capacities are not checked with a shared receive
/// queue.
fn check_cap(cap: &QpCap, has_srq: bool) -> Result {
    let send_ok = cap.max_send_wr <= MAX_QP_WR && cap.max_send_sge <= MAX_SGE;
    let recv_ok = has_srq || (cap.max_recv_wr <= MAX_QP_WR && cap.max_recv_sge <= MAX_SGE);
    if send_ok && recv_ok && cap.max_inline_data <= MAX_INLINE_DATA {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// `create_qp` of rv0, in soft-RoCE's order of checks
/// (`rxe_verbs.c:rxe_create_qp`, `rxe_qp.c:rxe_qp_chk_init`).
pub(crate) fn create_qp(
    dev: &DriverDevice<Rv>,
    req: &QpCreate<'_>,
    objs: QpObjects<'_, Rv>,
) -> Result<SwQp> {
    // No kernel QPs: they would need kernel CQs, which rv0 leaves out.
    let udata = req.udata().ok_or_else(eopnotsupp)?;
    if udata.inlen() != 0 || udata.outlen() < CREATE_QP_RESP_LEN {
        return Err(EINVAL);
    }
    if req.create_flags() != 0 {
        return Err(eopnotsupp());
    }
    // Datagrams, and connections (RC, UC) with `rc=1`.
    let qp_type = req.qp_type();
    if qp_type != QpType::Ud && !(qp_type.connected() && dev.rc()) {
        return Err(eopnotsupp());
    }
    let (Some(pd), Some(send_cq), Some(recv_cq)) = (objs.pd, objs.send_cq, objs.recv_cq) else {
        return Err(EINVAL);
    };
    // An SRQ only with `rc=1`, which creates them.
    let srq = objs.srq.map(|s| s.core());
    let asked = req.cap();
    check_cap(&asked, srq.is_some())?;
    // The number goes back if anything below fails.
    let qpn = ScopeGuard::new_with_data(dev.qps().take(GFP_KERNEL)?, |qpn| dev.qps().put(qpn));
    let num = *qpn;
    // The send ring (`rxe_init_sq`): room in each slot for the largest
    // list of SGEs or for the inline data, whichever is larger.
    // CAST: 16 bytes.
    let sge = RXE_SGE_SIZE as u32;
    let room = (asked.max_send_sge * sge).max(asked.max_inline_data);
    // CAST: At most `MAX_INLINE_DATA` bytes (checked above).
    let sq_geo = QueueGeometry::new(asked.max_send_wr, RXE_SEND_WQE_SIZE + room as usize)?;
    let sq = req.user_queue(sq_geo)?;
    let mut resp = [0u8; CREATE_QP_RESP_LEN];
    // What the QP really has: soft-RoCE returns it, larger than asked
    // where the rings round up.
    let mut cap = QpCap {
        max_send_wr: sq_geo.depth(),
        max_recv_wr: asked.max_recv_wr,
        max_send_sge: room / sge,
        max_recv_sge: asked.max_recv_sge,
        max_inline_data: room,
    };
    // With an SRQ, no ring of its own: its `struct mminfo` stays zero, and
    // the receive capacities are returned as asked, queried as 0
    // (`rxe_qp.c:rxe_qp_init_resp`, `rxe_qp_to_init`).
    let mut reported = cap;
    let rq = match srq {
        Some(srq) => {
            cap.max_recv_wr = 0;
            cap.max_recv_sge = 0;
            RecvQueue::Shared(srq)
        }
        None => {
            // The receive ring (`rxe_init_rq`).
            // CAST: At most `MAX_SGE` entries (checked above).
            let rq_elem = RXE_RECV_WQE_SIZE + (asked.max_recv_sge * sge) as usize;
            let rq_geo = QueueGeometry::new(asked.max_recv_wr, rq_elem)?;
            let rq = req.user_queue(rq_geo)?;
            resp[..MmInfo::ABI_LEN].copy_from_slice(&rq.mminfo().to_abi());
            cap.max_recv_wr = rq_geo.depth();
            reported = cap;
            RecvQueue::Own(rq)
        }
    };
    resp[MmInfo::ABI_LEN..].copy_from_slice(&sq.mminfo().to_abi());
    udata.write_out(&resp)?;
    let mut swqe = KVec::new();
    swqe.resize(sq.elem_size(), 0, GFP_KERNEL)?;
    let mut rwqe = KVec::new();
    rwqe.resize(rq.elem_size(), 0, GFP_KERNEL)?;
    let mut payload = KVec::new();
    payload.resize(MAX_PAYLOAD, 0, GFP_KERNEL)?;
    let resp = RespState::new(qp_type == QpType::Rc)?;
    // RC and UC keep a copy of each send slot and what is in flight of it.
    let req_state = if qp_type.connected() {
        ReqState::new(sq.slots(), sq.elem_size())?
    } else {
        ReqState::new(0, 0)?
    };
    let tx = Arc::pin_init(TxFlow::new(), GFP_KERNEL)?;
    // Taken here: inside the initialiser `req` names the requester's field.
    let events = req.notifier();
    let uid = dev.res.uids.fetch_add(1, Relaxed);
    let core = Arc::pin_init(
        pin_init!(QpCore {
            qpn: num,
            uid,
            qp_type,
            pd: pd.id(),
            sq,
            rq,
            cap,
            sq_sig_all: req.sq_sig_all(),
            send_cq: send_cq.core(),
            recv_cq: recv_cq.core(),
            attrs <- new_spinlock_bh!(QpAttrs {
                path_mtu: INITIAL_PATH_MTU,
                ..QpAttrs::default()
            }),
            send <- new_mutex!(SendState {
                consumer: 0,
                wqe: swqe,
                payload,
            }),
            recv <- new_spinlock_bh!(RecvState {
                consumer: 0,
                wqe: rwqe,
                held: false,
                resp,
            }),
            flush <- new_work!("QpCore::flush"),
            req <- new_spinlock_bh!(req_state),
            retry_timer <- new_delayed_work!("QpCore::retry_timer"),
            rnr_timer <- new_delayed_work!("QpCore::rnr_timer"),
            route <- new_spinlock_bh!(None),
            tx,
            events,
            gate <- Gate::new(),
        }),
        GFP_KERNEL,
    )?;
    dev.qp_table().insert(num, core.clone())?;
    req.set_cap(reported);
    req.set_qp_num(num);
    // Last: the flow holds the QP until `destroy_qp`.
    core.tx.arm(dev, core.clone());
    qpn.dismiss();
    Ok(SwQp { core })
}

/// `query_qp` of rv0 (`rxe_qp.c:rxe_qp_to_attr`, `rxe_qp_to_init`).
pub(crate) fn query_qp(qp: &SwQp, query: QpQuery) {
    let qp = &qp.core;
    let mut attrs = *qp.attrs.lock();
    if qp.qp_type.connected() {
        // The PSNs as they are now (`rxe_qp.c:rxe_qp_to_attr`).
        let r = qp.req.lock();
        attrs.sq_psn = r.psn;
        attrs.sq_draining = u8::from(r.draining);
        drop(r);
        attrs.rq_psn = qp.recv.lock().resp.psn;
    }
    query.answer(&attrs, qp.cap, qp.sq_sig_all);
}

/// `destroy_qp` of rv0: out of the table, its gate closed once no packet
/// is being delivered to it, the number goes back; the rings go with the
/// data (their mappings keep their pages), the table's part a grace period
/// later. Nothing completes (as soft-RoCE, which flushes without
/// completions at destruction) but a flush already due.
pub(crate) fn destroy_qp(dev: &DriverDevice<Rv>, qp: &SwQp) {
    let qpn = qp.core.qpn;
    dev.qp_table().remove(qpn);
    // A packet that found it before is delivered, or refused at the gate,
    // before this returns (as `rxe_pool.c:__rxe_cleanup` waits).
    qp.core.gate.close();
    // No timer is queued from now on; one queued runs now, and ends.
    qp.core.req.lock().kill();
    crate::sync::flush_delayed_work(&qp.core.retry_timer);
    crate::sync::flush_delayed_work(&qp.core.rnr_timer);
    // So nothing queues a flush any more; one queued before ends now
    // (`rxe_qp.c:rxe_qp_do_cleanup`): no work item holds the QP after this.
    qp.core.wait_flush();
    // Nothing resumes its sending now; its packets still in flight keep
    // only the flow (`super::tx`).
    qp.core.tx.disarm();
    dev.qps().put(qpn);
}
