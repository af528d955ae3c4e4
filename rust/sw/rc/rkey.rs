// SPDX-License-Identifier: GPL-2.0

//! The memory an RC request's R_Key names, for the responder
//! (`rxe_resp.c:check_rkey`): a region, directly or through a memory
//! window.

use crate::rdma::{
    driver::DriverDevice,
    mr::Access, //
};
use crate::sw::{
    device::Rv,
    mr::{
        self,
        MrAccess, //
    },
    mw,
    qp::QpCore,
};
use kernel::sync::rcu;

/// The region of R_Key `rkey` for `len` bytes at `va`, with remote
/// `access`, for `qp`'s PD, directly or through a memory window
/// ([`mw::remote`]): its offset and the access, or `Err` for a remote
/// access error (`rxe_resp.c:check_rkey`).
pub(super) fn remote<'a>(
    dev: &'a DriverDevice<Rv>,
    guard: &'a rcu::Guard,
    qp: &QpCore,
    access: Access,
    rkey: u32,
    va: u64,
    len: u32,
) -> core::result::Result<(usize, MrAccess<'a>), ()> {
    if mw::is_window(rkey) {
        return mw::remote(dev, guard, qp, access, rkey, va, u64::from(len));
    }
    let mr = mr::find(dev, guard, rkey).map_err(|_| ())?;
    let off = mr
        .check_remote(qp.pd, access, va, u64::from(len))
        .map_err(|_| ())?;
    Ok((off, mr))
}

/// The whole region of R_Key `rkey` (or the whole window), with remote
/// `access`, for `qp`'s PD: a FLUSH of a region's level
/// (`rxe_resp.c:check_rkey` skips the range then). `Err` for a remote
/// access error.
pub(super) fn remote_whole<'a>(
    dev: &'a DriverDevice<Rv>,
    guard: &'a rcu::Guard,
    qp: &QpCore,
    access: Access,
    rkey: u32,
) -> core::result::Result<MrAccess<'a>, ()> {
    if mw::is_window(rkey) {
        let (va, len) = mw::range(dev, guard, rkey).ok_or(())?;
        return mw::remote(dev, guard, qp, access, rkey, va, len).map(|(_, mr)| mr);
    }
    let mr = mr::find(dev, guard, rkey).map_err(|_| ())?;
    mr.check_remote_whole(qp.pd, access).map_err(|_| ())?;
    Ok(mr)
}
