// SPDX-License-Identifier: GPL-2.0

//! Transmit backpressure: each QP has at most [`INFLIGHT_HIGH`] packets
//! in the network stack at a time, and its sending resumes when they are
//! down to [`INFLIGHT_LOW`] (soft-RoCE's `RXE_INFLIGHT_SKBS_PER_QP_HIGH`
//! and `_LOW`, `rxe_req.c:rxe_requester`, `rxe_net.c:rxe_skb_tx_dtor`).
//!
//! A packet is in flight from the doorbell's hand-off to the IP layer
//! until its buffer is freed: sent by the driver, dropped by a qdisc, or
//! taken by the receiving IP layer (a veth peer). Each buffer holds a
//! reference to its QP's [`TxFlow`] and its destructor
//! ([`TxOwner::released`]) counts it back; the last of a burst that brings the
//! count below the low mark queues the QP's send work, which rings the
//! doorbell again from process context (the destructor may run in any
//! network softirq).
//!
//! The send work is on the system workqueue, which runs it on the CPU
//! that queued it, after that CPU's softirq: what a receive path sent
//! from the softirq (its share of a READ's responses) waits in that CPU's
//! backlog (veth) and is delivered before what the work sends next. On
//! the unbound workqueue (soft-RoCE's `rxe_wq` is) the work sent from
//! another CPU at once and overtook them: READ responses out of order,
//! which the requester drops until it asks again (measured 2026-12-06:
//! `ib_read_bw` of 2000 READs of 64 KiB between two rv devices did not
//! end in 40 s, 49,068 responses dropped as stale).
//!
//! Lifetimes: the flow keeps its QP and device only until `destroy_qp`
//! ([`TxFlow::disarm`]), which then waits for a send work that is queued or
//! running. A buffer may outlive its QP (a qdisc may hold it for as long as
//! it is configured to): it keeps only the flow, a few words that any
//! context may free. The module's exit waits for every buffer
//! ([`barrier`]).

use super::{
    datapath,
    device::Rv,
    qp::QpCore, //
};
use crate::net::skb::{
    SkBuff,
    TxOwner, //
};
use crate::rdma::{
    driver::{
        DeviceRef,
        DriverDevice, //
    },
    qp::QpType,
};
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use core::sync::atomic::{
    AtomicBool,
    AtomicU32,
    Ordering::SeqCst, //
};
use kernel::{
    impl_has_work,
    new_work, //
    prelude::*,
    sync::Arc,
    workqueue::{
        self,
        Work,
        WorkItem, //
    },
};

/// At this many packets in flight a QP stops sending.
pub(crate) const INFLIGHT_HIGH: u32 = 64;

/// Below this many, a QP that stopped sends again.
pub(crate) const INFLIGHT_LOW: u32 = 16;

/// What the send work needs: the QP and its device.
struct Resume {
    qp: Arc<QpCore>,
    dev: DeviceRef<Rv>,
}

/// A QP's packets in flight, and the work that resumes its sending.
#[pin_data]
pub(crate) struct TxFlow {
    /// Buffers of this QP not freed yet.
    inflight: AtomicU32,
    /// The doorbell stopped at [`INFLIGHT_HIGH`]: the buffer that brings
    /// the count below [`INFLIGHT_LOW`] queues the send work.
    waiting: AtomicBool,
    /// The QP to resume, from `create_qp` until `destroy_qp`.
    #[pin]
    resume: SpinLockBh<Option<Resume>>,
    #[pin]
    work: Work<TxFlow>,
}

impl_has_work! {
    impl HasWork<Self> for TxFlow { self.work }
}

impl WorkItem for TxFlow {
    type Pointer = Arc<TxFlow>;

    fn run(flow: Arc<TxFlow>) {
        let armed = flow
            .resume
            .lock()
            .as_ref()
            .and_then(|r| Some((r.qp.clone(), r.dev.try_get()?)));
        // Disarmed, or the device is going (its QPs with it).
        let Some((qp, dev)) = armed else {
            return;
        };
        // A QP moved out of the states that send meanwhile sends when its
        // doorbell rings next.
        let _ = datapath::send_queue(&dev, &qp);
        // RC's responder: READ responses, and what waits behind them (a
        // QP in RTR answers too).
        if qp.qp_type == QpType::Rc {
            super::rc::answer::send_answers(&dev, &qp);
        }
    }
}

impl TxFlow {
    /// A flow with nothing in flight, not armed.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inflight: AtomicU32::new(0),
            waiting: AtomicBool::new(false),
            resume <- new_spinlock_bh!(None),
            work <- new_work!("TxFlow::work"),
        })
    }

    /// From now on a stopped doorbell of `qp` (whose flow this is) on
    /// `dev` is resumed by the send work.
    pub(crate) fn arm(&self, dev: &DriverDevice<Rv>, qp: Arc<QpCore>) {
        let dev = DeviceRef::new(dev);
        *self.resume.lock() = Some(Resume { qp, dev });
    }

    /// `destroy_qp`: nothing resumes the QP any more; a send work queued
    /// or running has ended when this returns. Process context.
    pub(crate) fn disarm(&self) {
        // Dropped after the lock: the QP's reference is not the last (the
        // caller's QP holds one).
        let old = self.resume.lock().take();
        drop(old);
        crate::sync::flush_work(&self.work);
    }

    /// Has the send work ring the QP's doorbell (the RC completer: the
    /// window opened, or a retransmission is due). Any context.
    pub(crate) fn kick(this: &Arc<Self>) {
        let guard = this.resume.lock();
        if guard.is_some() {
            // Already queued: that run sends what is due by then.
            let _ = workqueue::system().enqueue(this.clone());
        }
        drop(guard);
    }

    /// Whether the QP has [`INFLIGHT_HIGH`] packets in flight: then it
    /// stops sending until the send work resumes it.
    pub(crate) fn full(&self) -> bool {
        if self.inflight.load(SeqCst) < INFLIGHT_HIGH {
            return false;
        }
        // Said before looking again, so that a buffer freed meanwhile
        // either sees it or is seen (both sequentially consistent).
        self.waiting.store(true, SeqCst);
        self.inflight.load(SeqCst) >= INFLIGHT_HIGH
    }

    /// Makes `skb`, a packet of this QP about to be handed to the IP
    /// layer, count as in flight until it is freed.
    pub(crate) fn attach(this: &Arc<Self>, skb: &mut SkBuff) {
        // Counted before the buffer can be freed, once it is the owner's.
        this.inflight.fetch_add(1, SeqCst);
        if skb.set_tx_owner(this.clone()).is_err() {
            // A new buffer has no destructor: never here.
            this.inflight.fetch_sub(1, SeqCst);
        }
    }
}

impl TxOwner for TxFlow {
    /// A buffer of this QP was freed: the one that brings a stopped QP
    /// below the low mark queues its send work.
    fn released(this: Arc<Self>) {
        let left = this.inflight.fetch_sub(1, SeqCst) - 1;
        if left < INFLIGHT_LOW && this.waiting.load(SeqCst) && this.waiting.swap(false, SeqCst) {
            let guard = this.resume.lock();
            if guard.is_some() {
                // Already queued: that run sends what is posted by then.
                let _ = workqueue::system().enqueue(this.clone());
            }
            drop(guard);
        }
        // Maybe the last reference, once the QP is gone: a few words.
    }
}

/// The module's exit, after every device is gone: no transmit buffer of
/// rverbs is left, and no destructor of ours runs
/// ([`crate::net::skb::tx_barrier`]). It sleeps for as long as a qdisc
/// keeps a buffer.
pub(crate) fn barrier() {
    crate::net::skb::tx_barrier();
}
