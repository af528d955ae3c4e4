// SPDX-License-Identifier: GPL-2.0

//! rv0's completion queues: a ring that userspace maps and polls itself,
//! in the layout and with the geometry of soft-RoCE's (`rxe_cq.c`), so
//! that rdma-core's rxe provider uses it unchanged.
//!
//! Nothing produces completions yet (rv0 has no QPs): a CQ can be created,
//! mapped, polled empty, armed and destroyed, with soft-RoCE's limits and
//! errors.

use super::device::Rv;
use crate::{
    errno::eopnotsupp,
    rdma::{
        cq::CqCreate,
        driver::DriverDevice,
        ring::{
            MmInfo,
            QueueGeometry,
            UserQueue,
            RXE_CQE_SIZE, //
        },
    },
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// Most completion queues per device (soft-RoCE's `RXE_MAX_CQ`).
pub(crate) const MAX_CQ: u32 = 1 << 20;

/// Deepest completion queue (soft-RoCE: `(1 << RXE_MAX_LOG_CQE) - 1`).
pub(crate) const MAX_CQE: u32 = (1 << 15) - 1;

/// `struct rxe_create_cq_resp { struct mminfo mi; }`.
const CREATE_CQ_RESP_LEN: usize = MmInfo::ABI_LEN;

/// `IB_CQ_SOLICITED_MASK`: the events `req_notify_cq` arms
/// (`IB_CQ_SOLICITED`, `IB_CQ_NEXT_COMP`).
const NOTIFY_MASK: u32 = 3;

/// A completion queue of rv0.
pub(crate) struct SwCq {
    /// The ring, offered to the process until the CQ is destroyed.
    _queue: UserQueue,
    /// The events asked for by `req_notify_cq` (`IB_CQ_SOLICITED`,
    /// `IB_CQ_NEXT_COMP`), until a completion fires them.
    notify: Atomic<u32>,
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
    let cq = (|| {
        let geo = QueueGeometry::new(req.cqe(), RXE_CQE_SIZE)?;
        let queue = req.user_queue(geo)?;
        udata.write_out(&queue.mminfo().to_abi())?;
        req.set_depth(geo.depth())?;
        Ok(SwCq {
            _queue: queue,
            notify: Atomic::new(0),
        })
    })();
    if cq.is_err() {
        dev.cqs().put();
    }
    cq
}

/// `destroy_cq` of rv0: the ring goes with the data (its mapping, if
/// any, keeps its pages until it is unmapped).
pub(crate) fn destroy_cq(dev: &DriverDevice<Rv>, _cq: &SwCq) {
    dev.cqs().put();
}

/// `req_notify_cq` of rv0: remembers what to signal. Nothing is ever
/// queued yet, so no event can have been missed.
pub(crate) fn req_notify_cq(cq: &SwCq, flags: u32) -> bool {
    let mut cur = cq.notify.load(Relaxed);
    while let Err(now) = cq.notify.cmpxchg(cur, cur | (flags & NOTIFY_MASK), Relaxed) {
        cur = now;
    }
    false
}
