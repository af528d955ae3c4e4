// SPDX-License-Identifier: GPL-2.0

//! rv0's shared receive queues (with `rc=1`): a receive ring that
//! userspace maps and posts to itself, in the layout and with the geometry
//! of soft-RoCE's (`rxe_srq.c`), from which the QPs created on it take
//! their receive work requests; and [`RecvQueue`], where a QP's receives
//! come from, its own ring or a shared one.
//!
//! A QP takes a work request off its SRQ when a message that needs one
//! begins (soft-RoCE's `get_srq_wqe`), keeps the copy until the message
//! completes, and then has nothing to give back: the SRQ's consumer index
//! moved at once. When fewer than the armed limit are left posted, the
//! SRQ's owner gets `IB_EVENT_SRQ_LIMIT_REACHED` once (the limit disarms).

use super::{
    device::{
        Rv,
        SwPd, //
    },
    ids::Ids,
    qp::{
        QpCore,
        RecvState, //
    },
};
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::DriverDevice,
        rxe_abi::{
            ring::{
                MmInfo,
                QueueGeometry,
                UserQueue, //
            },
            wqe::{
                RXE_RECV_WQE_SIZE,
                RXE_SGE_SIZE, //
            },
        },
        srq::{
            SrqAttr,
            SrqCreate,
            SrqModify,
            SrqNotifier, //
        },
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    types::ScopeGuard,
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// The first SRQ number (soft-RoCE's `RXE_MIN_SRQ_INDEX`).
const MIN_SRQN: u32 = 0x0002_0001;

/// The last SRQ number (soft-RoCE's `RXE_MAX_SRQ_INDEX`).
const MAX_SRQN: u32 = 1 << 20;

/// Most shared receive queues per device (soft-RoCE's `RXE_MAX_SRQ`).
pub(crate) const MAX_SRQ: u32 = MAX_SRQN - MIN_SRQN;

/// Deepest shared receive queue (soft-RoCE's `RXE_MAX_SRQ_WR`).
pub(crate) const MAX_SRQ_WR: u32 = 1 << 20;

/// Most scatter/gather entries of a shared receive work request
/// (soft-RoCE's `RXE_MAX_SRQ_SGE`).
pub(crate) const MAX_SRQ_SGE: u32 = 27;

/// `struct rxe_create_srq_resp { struct mminfo mi; __u32 srq_num; __u32
/// reserved; }`.
const CREATE_SRQ_RESP_LEN: usize = MmInfo::ABI_LEN + 8;

/// `struct rxe_modify_srq_cmd { __aligned_u64 mmap_info_addr; }`.
const MODIFY_SRQ_CMD_LEN: usize = 8;

/// The SRQ numbers of a device.
pub(crate) fn srq_numbers() -> impl PinInit<Ids> {
    Ids::new(MIN_SRQN, MAX_SRQN, MAX_SRQ)
}

/// What posting and taking change in an SRQ, under its lock (soft-RoCE's
/// `consumer_lock`; the producer is userspace's).
struct SrqState {
    /// The ring, offered to the process until the SRQ is destroyed or
    /// resized (a resize puts a new ring here).
    queue: UserQueue,
    /// The kernel's consumer index.
    consumer: u32,
    /// Below this many posted, the limit event (0: disarmed).
    limit: u32,
}

/// The part of an SRQ that its QPs share.
#[pin_data]
pub(crate) struct SrqCore {
    /// Scatter/gather entries of each work request.
    max_sge: u32,
    /// The bytes of a slot (the ring's element size, kept by a resize).
    elem_size: usize,
    /// The ring and its consumer index, under the lock soft-RoCE calls
    /// `consumer_lock` (taken in process context and in the network's
    /// softirq).
    #[pin]
    state: SpinLockBh<SrqState>,
    /// The owner's event handler.
    notifier: SrqNotifier,
}

impl SrqCore {
    /// Takes the next posted work request off the ring into `out` (a
    /// slot's size), `false` when none is posted; fires the limit event if
    /// that left fewer posted than the armed limit (soft-RoCE's
    /// `get_srq_wqe`). Any context.
    fn take(&self, out: &mut [u8]) -> bool {
        let fire = {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            let producer = st.queue.user_producer();
            if st.consumer == producer {
                return false;
            }
            st.queue.read_slot(st.consumer, out);
            st.consumer = st.queue.next(st.consumer);
            st.queue.publish_consumer(st.consumer);
            let left = st.queue.distance(st.consumer, producer);
            let fire = st.limit != 0 && left < st.limit;
            if fire {
                st.limit = 0;
            }
            fire
        };
        if fire {
            self.notifier.limit_reached();
        }
        true
    }
}

/// Where a QP's receive work requests come from.
pub(crate) enum RecvQueue {
    /// Its own ring (its consumer index in [`RecvState`]).
    Own(UserQueue),
    /// A shared receive queue.
    Shared(Arc<SrqCore>),
}

impl RecvQueue {
    /// Whether the QP takes its receives from an SRQ.
    pub(crate) fn shared(&self) -> bool {
        matches!(self, Self::Shared(_))
    }

    /// The bytes of a receive slot.
    pub(crate) fn elem_size(&self) -> usize {
        match self {
            Self::Own(q) => q.elem_size(),
            Self::Shared(srq) => srq.elem_size,
        }
    }
}

impl QpCore {
    /// Copies the receive work request of the message that begins into
    /// `rs.wqe`: the next one of its own ring (consumed when it completes,
    /// [`QpCore::consume_recv`]), or the one taken off its SRQ, kept until
    /// it completes (a message begun again gets the same one). `false`
    /// when none is posted. Under the receive lock.
    pub(crate) fn fetch_recv(&self, rs: &mut RecvState) -> bool {
        match &self.rq {
            RecvQueue::Own(q) => {
                if rs.consumer == q.user_producer() {
                    return false;
                }
                q.read_slot(rs.consumer, &mut rs.wqe);
                true
            }
            RecvQueue::Shared(srq) => {
                if !rs.held {
                    rs.held = srq.take(&mut rs.wqe);
                }
                rs.held
            }
        }
    }

    /// The receive work request in `rs.wqe` completed: the next one is
    /// another. Under the receive lock.
    pub(crate) fn consume_recv(&self, rs: &mut RecvState) {
        match &self.rq {
            RecvQueue::Own(q) => {
                rs.consumer = q.next(rs.consumer);
                q.publish_consumer(rs.consumer);
            }
            RecvQueue::Shared(_) => rs.held = false,
        }
    }

    /// The most scatter/gather entries a receive work request may have.
    pub(crate) fn recv_max_sge(&self) -> u32 {
        match &self.rq {
            RecvQueue::Own(_) => self.cap.max_recv_sge,
            RecvQueue::Shared(srq) => srq.max_sge,
        }
    }
}

/// A shared receive queue of rv0.
pub(crate) struct SwSrq {
    core: Arc<SrqCore>,
    /// Its number.
    num: u32,
}

impl SwSrq {
    /// The part its QPs keep.
    pub(crate) fn core(&self) -> Arc<SrqCore> {
        self.core.clone()
    }
}

/// `create_srq` of rv0, in soft-RoCE's order of checks
/// (`rxe_verbs.c:rxe_create_srq`, `rxe_srq.c:rxe_srq_chk_init`,
/// `rxe_srq_from_init`): `EINVAL` past a limit or for an empty queue; the
/// depth and entries rounded up to soft-RoCE's least; userspace only.
pub(crate) fn create_srq(
    dev: &DriverDevice<Rv>,
    req: &SrqCreate<'_>,
    _pd: &SwPd,
    notifier: SrqNotifier,
) -> Result<SwSrq> {
    // Kernel SRQs come with kernel verbs (soft-RoCE has them); SRQs with
    // the RC transport.
    let udata = req.udata().ok_or_else(eopnotsupp)?;
    if !dev.rc() {
        return Err(eopnotsupp());
    }
    if udata.outlen() < CREATE_SRQ_RESP_LEN {
        return Err(EINVAL);
    }
    if !req.basic() {
        return Err(eopnotsupp());
    }
    let asked = req.attr();
    if asked.max_wr > MAX_SRQ_WR || asked.max_wr == 0 || asked.max_sge > MAX_SRQ_SGE {
        return Err(EINVAL);
    }
    let max_sge = asked.max_sge.max(1);
    // The number goes back if anything below fails.
    let num = ScopeGuard::new_with_data(dev.srqs().take(GFP_KERNEL)?, |n| dev.srqs().put(n));
    // CAST: At most `MAX_SRQ_SGE` entries (checked above).
    let elem = RXE_RECV_WQE_SIZE + (max_sge as usize) * RXE_SGE_SIZE;
    let geo = QueueGeometry::new(asked.max_wr, elem)?;
    let queue = req.user_queue(geo)?;
    let mut resp = [0u8; CREATE_SRQ_RESP_LEN];
    resp[..MmInfo::ABI_LEN].copy_from_slice(&queue.mminfo().to_abi());
    resp[MmInfo::ABI_LEN..MmInfo::ABI_LEN + 4].copy_from_slice(&num.to_ne_bytes());
    udata.write_out(&resp)?;
    req.set_attr(geo.depth(), max_sge);
    let elem_size = queue.elem_size();
    let core = Arc::pin_init(
        pin_init!(SrqCore {
            max_sge,
            elem_size,
            state <- new_spinlock_bh!(SrqState {
                queue,
                consumer: 0,
                // Armed as created, as soft-RoCE's (`rxe_srq_from_init`).
                limit: asked.srq_limit,
            }),
            notifier,
        }),
        GFP_KERNEL,
    )?;
    Ok(SwSrq {
        core,
        num: num.dismiss(),
    })
}

/// `modify_srq` of rv0 (`rxe_verbs.c:rxe_modify_srq`,
/// `rxe_srq.c:rxe_srq_chk_attr`, `rxe_srq_from_attr`,
/// `rxe_queue.c:rxe_queue_resize`): a new depth moves what is posted to
/// the start of a new ring, whose `struct mminfo` goes where the command
/// says (soft-RoCE's ABI: not in the response); a new limit arms the
/// event. `EINVAL` for a depth past the limit, below the limit or below
/// what is posted, and for a limit past the depth.
pub(crate) fn modify_srq(srq: &SwSrq, req: &SrqModify<'_>) -> Result {
    let mut cmd = [0u8; MODIFY_SRQ_CMD_LEN];
    if let Some(udata) = req.udata() {
        udata.read_in(&mut cmd, MODIFY_SRQ_CMD_LEN)?;
    }
    let (limit, depth) = {
        let st = srq.core.state.lock();
        (st.limit, st.queue.slots() - 1)
    };
    if let Some(max_wr) = req.max_wr() {
        if max_wr > MAX_SRQ_WR || max_wr == 0 || (limit != 0 && max_wr < limit) {
            return Err(EINVAL);
        }
    }
    if let Some(new) = req.limit() {
        if new > MAX_SRQ_WR || new > depth {
            return Err(EINVAL);
        }
    }
    if let Some(max_wr) = req.max_wr() {
        resize(srq, req, max_wr, u64::from_ne_bytes(cmd))?;
    }
    if let Some(new) = req.limit() {
        srq.core.state.lock().limit = new;
    }
    Ok(())
}

/// Resizes the ring of `srq` to `max_wr` work requests, its mapping
/// described at `mi_addr` in the caller's memory.
fn resize(srq: &SwSrq, req: &SrqModify<'_>, max_wr: u32, mi_addr: u64) -> Result {
    // Allocated, offered and told before the lock, as they sleep.
    let geo = QueueGeometry::new(max_wr, srq.core.elem_size)?;
    let mut queue = req.user_queue(geo)?;
    let mi = UserPtr::from_addr(usize::try_from(mi_addr).map_err(|_| EFAULT)?);
    UserSlice::new(mi, MmInfo::ABI_LEN)
        .writer()
        .write_slice(&queue.mminfo().to_abi())?;
    let moved = {
        let mut guard = srq.core.state.lock();
        let st = &mut *guard;
        let producer = st.queue.user_producer();
        // Userspace holds its own lock over the verb, so nothing is posted
        // meanwhile; a hostile process only loses its own work requests.
        let moved = st.queue.distance(st.consumer, producer) <= geo.depth();
        if moved {
            let mut from = st.consumer;
            let mut to = 0;
            while from != producer {
                queue.copy_slot(to, &st.queue, from);
                to = queue.next(to);
                from = st.queue.next(from);
            }
            queue.publish_producer(to);
            queue.publish_consumer(0);
            st.consumer = 0;
            core::mem::swap(&mut st.queue, &mut queue);
        }
        moved
    };
    // The old ring, or the new one if it was not used: the generic layer
    // withdraws its offer when this verb returns. A mapping of it keeps its
    // pages until it is unmapped.
    drop(queue);
    if moved {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// `query_srq` of rv0 (`rxe_verbs.c:rxe_query_srq`): the depth of the ring,
/// the entries of each work request, the armed limit.
pub(crate) fn query_srq(srq: &SwSrq) -> SrqAttr {
    let st = srq.core.state.lock();
    SrqAttr {
        max_wr: st.queue.slots() - 1,
        max_sge: srq.core.max_sge,
        srq_limit: st.limit,
    }
}

/// `destroy_srq` of rv0: ib_core has refused it while a QP uses the SRQ,
/// so no receive path takes from it any more; the ring goes with the last
/// reference (a QP's data may hold one a moment longer), its mapping keeps
/// its pages until it is unmapped.
pub(crate) fn destroy_srq(dev: &DriverDevice<Rv>, srq: &SwSrq) {
    dev.srqs().put(srq.num);
}
