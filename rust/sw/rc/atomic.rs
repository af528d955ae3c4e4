// SPDX-License-Identifier: GPL-2.0

//! RDMA atomics at an RC QP's responder (`rxe_resp.c:atomic_reply`,
//! `atomic_write_reply`): compare-and-swap, fetch-and-add and ATOMIC WRITE
//! on 8 aligned bytes of a region, a
//! CPU atomic on the pinned page (atomic against other QPs, other devices
//! and the process itself; soft-RoCE takes one global lock instead), the
//! value before remembered for a duplicate; and FLUSH
//! (`rxe_resp.c:process_flush`), answered as ATOMIC WRITE is.

use super::{
    resp::Fault,
    rkey::{
        remote,
        remote_whole, //
    },
    Answer,
};
use crate::rdma::{
    driver::DriverDevice,
    mr::{
        Access,
        AccessFlags, //
    },
    qp::Psn,
    umem::AtomicOp,
};
use crate::sw::{
    device::Rv,
    qp::{
        QpCore,
        RecvState, //
    },
    wire::Incoming,
};
use kernel::sync::rcu;

/// An atomic, expected (`rxe_resp.c:atomic_reply`): allowed on the QP,
/// not within a message, 8-byte aligned, in a region of its R_Key with
/// remote atomic access; executed once, its value before remembered for
/// a duplicate and sent back in an atomic acknowledgement.
pub(super) fn execute(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    rs: &mut RecvState,
    pkt: &Incoming<'_>,
    access: AccessFlags,
    cas: bool,
) -> core::result::Result<(Option<Answer>, bool), Fault> {
    let ok =
        access.contains(Access::RemoteAtomic) && rs.resp.in_msg.is_none() && pkt.payload.is_empty();
    let (va, rkey, _) = pkt.reth;
    // `RESPST_ERR_MISALIGNED_ATOMIC`: an invalid request.
    if !ok || va % 8 != 0 {
        return Err(Fault::Invalid);
    }
    let (swap_add, compare) = pkt.atomic;
    let (mr_off, mr) =
        remote(dev, guard, qp, Access::RemoteAtomic, rkey, va, 8).map_err(|()| Fault::Access)?;
    let op = if cas {
        AtomicOp::CmpSwap {
            compare,
            swap: swap_add,
        }
    } else {
        AtomicOp::FetchAdd(swap_add)
    };
    let orig = mr.atomic(mr_off, op).map_err(|_| Fault::Access)?;
    rs.resp.keep_atomic(pkt.psn, orig);
    rs.resp.psn = pkt.psn.next();
    rs.resp.msn = (rs.resp.msn + 1) & Psn::MASK;
    let ans = Answer::Atomic {
        psn: pkt.psn,
        orig,
        msn: rs.resp.msn,
    };
    Ok((Some(ans), false))
}

/// An ATOMIC WRITE, expected (`rxe_resp.c:atomic_write_reply`): allowed
/// on the QP (remote write), not within a message, exactly 8 bytes (its
/// RETH's and its payload, IBA oA19-28) at an 8-byte aligned address of a
/// region of its R_Key with remote write access; stored in one access
/// (the bytes as they came), remembered for a duplicate (acknowledged
/// again, not executed again), and answered with an RDMA READ response of
/// no data, as soft-RoCE answers it.
pub(super) fn write(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    rs: &mut RecvState,
    pkt: &Incoming<'_>,
    access: AccessFlags,
) -> core::result::Result<(Option<Answer>, bool), Fault> {
    let (va, rkey, len) = pkt.reth;
    let bytes: Option<[u8; 8]> = pkt.payload.try_into().ok();
    let ok = access.contains(Access::RemoteWrite) && rs.resp.in_msg.is_none() && len == 8;
    let (Some(bytes), true, 0) = (bytes, ok, va % 8) else {
        return Err(Fault::Invalid);
    };
    let (mr_off, mr) =
        remote(dev, guard, qp, Access::RemoteWrite, rkey, va, 8).map_err(|()| Fault::Access)?;
    mr.atomic(mr_off, AtomicOp::Store(bytes))
        .map_err(|_| Fault::Access)?;
    Ok((Some(done_with_response(rs, pkt.psn)), false))
}

/// `IB_FLUSH_GLOBAL`, `IB_FLUSH_PERSISTENT`: a FLUSH's placement types.
const FLUSH_GLOBAL: u32 = 1;
const FLUSH_PERSISTENT: u32 = 2;

/// `IB_FLUSH_MR`: a FLUSH of the whole region (else of its RETH's range).
const FLUSH_MR: u32 = 1;

/// A FLUSH, expected (`rxe_resp.c:process_flush`): each placement type it
/// asks for allowed on the QP (`check_qp_attr_access`; else an invalid
/// request), not within a message, no payload (oA19-2); each allowed by
/// the region of its R_Key (a remote access error otherwise), over its
/// RETH's range or, at the region's level, the whole region (or window).
/// Global visibility: the stores of the requests before it were made by
/// this responder, in order, and are visible to every CPU once a full
/// barrier is passed. Persistence is never asked of rv0's regions: they
/// cannot be registered for it (rv0 does not report
/// `IB_DEVICE_FLUSH_PERSISTENT`). Remembered for a duplicate, answered
/// with an RDMA READ response of no data.
pub(super) fn flush(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    rs: &mut RecvState,
    pkt: &Incoming<'_>,
    access: AccessFlags,
) -> core::result::Result<(Option<Answer>, bool), Fault> {
    let placement = pkt.feth & 0xf;
    let level = (pkt.feth & 0x30) >> 4;
    let types = [
        (FLUSH_GLOBAL, Access::FlushGlobal),
        (FLUSH_PERSISTENT, Access::FlushPersistent),
    ];
    let mut needs = types
        .into_iter()
        .filter(|(bit, _)| placement & bit != 0)
        .map(|(_, a)| a);
    let allowed = needs.clone().all(|a| access.contains(a));
    if !allowed || rs.resp.in_msg.is_some() || !pkt.payload.is_empty() {
        return Err(Fault::Invalid);
    }
    let (va, rkey, len) = pkt.reth;
    needs.try_for_each(|a| {
        let found = if level == FLUSH_MR {
            remote_whole(dev, guard, qp, a, rkey).map(|_| ())
        } else {
            remote(dev, guard, qp, a, rkey, va, len).map(|_| ())
        };
        found.map_err(|()| Fault::Access)
    })?;
    if placement & FLUSH_GLOBAL != 0 {
        kernel::sync::barrier::smp_mb();
    }
    Ok((Some(done_with_response(rs, pkt.psn)), false))
}

/// The request of `psn`, an ATOMIC WRITE or a FLUSH, was executed:
/// remembered for a duplicate, the responder past it, and its answer.
fn done_with_response(rs: &mut RecvState, psn: Psn) -> Answer {
    rs.resp.keep_atomic(psn, 0);
    rs.resp.psn = psn.next();
    rs.resp.msn = (rs.resp.msn + 1) & Psn::MASK;
    response(psn, rs.resp.msn)
}

/// The answer to an ATOMIC WRITE or a FLUSH of `psn`: a READ response of
/// no data.
pub(super) fn response(psn: Psn, msn: u32) -> Answer {
    Answer::Read {
        psn,
        va: 0,
        rkey: 0,
        len: 0,
        msn,
    }
}
