// SPDX-License-Identifier: GPL-2.0

//! rv0's completion queues: a ring that userspace maps and polls itself,
//! in the layout and with the geometry of soft-RoCE's (`rxe_cq.c`), so
//! that rdma-core's rxe provider uses it unchanged.
//!
//! The QPs on a CQ queue their completions with [`CqCore::post`]; userspace
//! polls them from the ring.

use super::device::Rv;
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        cq::{
            CqCreate,
            CqNotifier,
            CqNotify,
            CqNotifyFlags,
            CqResize, //
        },
        driver::DriverDevice,
        rxe_abi::ring::{
            MmInfo,
            QueueGeometry,
            UserQueue,
            RXE_CQE_SIZE, //
        },
        wc::UserWc,
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    types::ScopeGuard, //
};

/// Most completion queues per device (soft-RoCE's `RXE_MAX_CQ`).
pub(crate) const MAX_CQ: u32 = 1 << 20;

/// Deepest completion queue (soft-RoCE: `(1 << RXE_MAX_LOG_CQE) - 1`).
pub(crate) const MAX_CQE: u32 = (1 << 15) - 1;

/// `struct rxe_create_cq_resp { struct mminfo mi; }`.
const CREATE_CQ_RESP_LEN: usize = MmInfo::ABI_LEN;

/// `struct rxe_resize_cq_resp { struct mminfo mi; }`.
const RESIZE_CQ_RESP_LEN: usize = MmInfo::ABI_LEN;

/// What the data path changes in a CQ, under its lock.
struct CqState {
    /// The ring, offered to the process until the CQ is destroyed or
    /// resized (a resize puts a new ring here).
    queue: UserQueue,
    /// The kernel's producer index.
    producer: u32,
    /// The events asked for by `req_notify_cq`, until a completion fires
    /// them.
    notify: CqNotifyFlags,
    /// ib_core's handlers of the CQ, until `destroy_cq` takes them away:
    /// a destroyed CQ queues nothing. (The generic layer revokes the
    /// handlers themselves when the CQ goes.)
    notifier: Option<CqNotifier>,
}

/// The part of a CQ that its QPs share: the ring and what fills it.
#[pin_data]
pub(crate) struct CqCore {
    /// The ring, its producer index and the armed events, under the lock
    /// soft-RoCE calls `cq_lock` (taken from the doorbell's process
    /// context and from the receive path's softirq).
    #[pin]
    state: SpinLockBh<CqState>,
}

/// Why a completion could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CqFull;

impl CqState {
    /// The completions that userspace has not polled yet.
    fn pending(&self) -> u32 {
        self.queue.user_pending(self.producer)
    }
}

impl CqCore {
    /// Queues a completion (`rxe_cq.c:rxe_cq_post`): `CqFull` when the ring
    /// is full, after `IB_EVENT_CQ_ERR`; calls the completion handler if
    /// the CQ was armed for it (any completion, or a solicited one).
    pub(crate) fn post(&self, wc: &UserWc, solicited: bool) -> core::result::Result<(), CqFull> {
        let mut slot = [0u8; RXE_CQE_SIZE];
        slot[..UserWc::ABI_LEN].copy_from_slice(&wc.to_abi());
        // The completion handler is called under the lock, as soft-RoCE
        // calls it (it takes its own locks with irqsave and allocates
        // atomically); the event handler after it, as soft-RoCE does.
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Some(notifier) = st.notifier.as_ref() else {
            // Destroyed: nothing is queued any more.
            return Err(CqFull);
        };
        let next = st.queue.next(st.producer);
        if next == st.queue.user_consumer() {
            let notifier = notifier.clone();
            drop(guard);
            notifier.overrun();
            return Err(CqFull);
        }
        st.queue.write_slot(st.producer, &slot);
        st.queue.publish_producer(next);
        let fire = st.notify.contains(CqNotify::NextComp)
            || (solicited && st.notify.contains(CqNotify::Solicited));
        if fire {
            notifier.notify();
            st.notify = CqNotifyFlags::empty();
        }
        st.producer = next;
        Ok(())
    }
}

/// A completion queue of rv0.
pub(crate) struct SwCq {
    core: Arc<CqCore>,
}

impl SwCq {
    /// The part its QPs keep.
    pub(crate) fn core(&self) -> Arc<CqCore> {
        self.core.clone()
    }
}

/// `create_cq` of rv0, in soft-RoCE's order of checks
/// (`rxe_verbs.c:rxe_create_cq`).
pub(crate) fn create_cq(dev: &DriverDevice<Rv>, req: &CqCreate<'_>) -> Result<SwCq> {
    // No kernel CQs: a kernel consumer polls through `poll_cq`, which rv0
    // leaves out (soft-RoCE has them).
    let udata = req.udata().ok_or_else(eopnotsupp)?;
    if udata.outlen() < CREATE_CQ_RESP_LEN {
        return Err(EINVAL);
    }
    if req.flags() != 0 {
        return Err(eopnotsupp());
    }
    if req.cqe() > MAX_CQE {
        return Err(EINVAL);
    }
    dev.cqs().get()?;
    // Counted back if anything below fails.
    let count = ScopeGuard::new(|| dev.cqs().put());
    let geo = QueueGeometry::new(req.cqe(), RXE_CQE_SIZE)?;
    let queue = req.user_queue(geo)?;
    udata.write_out(&queue.mminfo().to_abi())?;
    req.set_depth(geo.depth())?;
    let core = Arc::pin_init(
        pin_init!(CqCore {
            state <- new_spinlock_bh!(CqState {
                queue,
                producer: 0,
                notify: CqNotifyFlags::empty(),
                notifier: Some(req.notifier()),
            }),
        }),
        GFP_KERNEL,
    )?;
    count.dismiss();
    Ok(SwCq { core })
}

/// `destroy_cq` of rv0: the ring goes with the data (its mapping, if
/// any, keeps its pages until it is unmapped). ib_core has refused this
/// while a QP uses the CQ, so its QPs' references are gone.
pub(crate) fn destroy_cq(dev: &DriverDevice<Rv>, cq: &SwCq) {
    // A QP's completion that comes later (none can: ib_core has refused
    // this while a QP uses the CQ) is not queued.
    cq.core.state.lock().notifier = None;
    dev.cqs().put();
}

/// `req_notify_cq` of rv0 (`rxe_verbs.c:rxe_req_notify_cq`): remembers what
/// to signal; with `IB_CQ_REPORT_MISSED_EVENTS`, says whether completions
/// are already waiting.
pub(crate) fn req_notify_cq(cq: &SwCq, flags: CqNotifyFlags) -> bool {
    let mut st = cq.core.state.lock();
    st.notify |= flags.events();
    let waiting = st.producer != st.queue.user_consumer();
    drop(st);
    flags.contains(CqNotify::ReportMissedEvents) && waiting
}

/// `resize_user_cq` of rv0, in soft-RoCE's order of checks
/// (`rxe_verbs.c:rxe_resize_cq`, `rxe_queue.c:rxe_queue_resize`): a new
/// ring, with the completions not yet polled moved to its start, takes the
/// old one's place; the process maps it instead of the old one (rdma-core's
/// provider does so under its own CQ lock, which its polling takes too).
/// `EINVAL` for a depth past the limit or below the completions waiting.
pub(crate) fn resize_user_cq(cq: &SwCq, req: &CqResize<'_>) -> Result {
    let udata = req.udata();
    if udata.outlen() < RESIZE_CQ_RESP_LEN {
        return Err(EINVAL);
    }
    let cqe = req.cqe();
    if cqe > MAX_CQE || cqe < cq.core.state.lock().pending() {
        return Err(EINVAL);
    }
    // Allocated, offered and answered before the lock, as they sleep.
    let geo = QueueGeometry::new(cqe, RXE_CQE_SIZE)?;
    let mut queue = req.user_queue(geo)?;
    udata.write_out(&queue.mminfo().to_abi())?;
    let moved = {
        let mut guard = cq.core.state.lock();
        let st = &mut *guard;
        // Completions may have come since the check above.
        let moved = st.pending() <= geo.depth();
        if moved {
            let mut from = st.queue.user_consumer();
            let mut to = 0;
            while from != st.producer {
                queue.copy_slot(to, &st.queue, from);
                to = queue.next(to);
                from = st.queue.next(from);
            }
            queue.publish_producer(to);
            st.producer = to;
            core::mem::swap(&mut st.queue, &mut queue);
        }
        moved
    };
    // The old ring, or the new one if it was not used: the generic layer
    // withdraws its offer to the process when this verb returns. A mapping
    // of it keeps its pages until it is unmapped.
    drop(queue);
    if !moved {
        return Err(EINVAL);
    }
    // Outside the lock, as soft-RoCE (`rxe_cq_resize_queue`): rv0 itself
    // goes by the ring's own geometry, never by this number.
    req.set_depth(geo.depth())
}
