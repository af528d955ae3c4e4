// SPDX-License-Identifier: GPL-2.0

//! RDMA atomics at an RC QP's responder (`rxe_resp.c:atomic_reply`):
//! compare-and-swap and fetch-and-add on 8 aligned bytes of a region, a
//! CPU atomic on the pinned page (atomic against other QPs, other devices
//! and the process itself; soft-RoCE takes one global lock instead), the
//! value before remembered for a duplicate.

use super::{
    resp::{
        remote,
        Fault, //
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
    let orig = mr
        .atomic(mr_off, cas, compare, swap_add)
        .map_err(|_| Fault::Access)?;
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
