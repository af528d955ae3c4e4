// SPDX-License-Identifier: GPL-2.0

//! XRC domains: `ib_alloc_xrcd_user` and `ib_dealloc_xrcd_user`.

use super::stats;
use crate::errno::eopnotsupp;
use crate::rdma::{
    device::Device,
    udata::Udata,
    xrcd::{
        Inode,
        XrcdHandle, //
    },
};
use kernel::prelude::*;

/// Allocates an XRC domain, shared through `inode` when given
/// (`ib_alloc_xrcd_user`). `EOPNOTSUPP` when the device has no XRC.
pub(crate) fn alloc_xrcd_user(
    device: &Device,
    inode: Option<&Inode>,
    udata: Option<&Udata>,
) -> Result<XrcdHandle> {
    if !device.has_alloc_xrcd() {
        stats::count_error(eopnotsupp());
        return Err(eopnotsupp());
    }
    // Counted (and traced) by the entry point as it returns.
    stats::counted(XrcdHandle::alloc(device, inode, udata))
}

/// Deallocates an XRC domain (`ib_dealloc_xrcd_user`): `EBUSY` while QPs
/// or SRQs still use it; on a driver error the domain stays.
pub(crate) fn dealloc_xrcd_user(xrcd: XrcdHandle, udata: Option<&Udata>) -> Result {
    // With no users, this warns as ib_core does if target QPs remain.
    if xrcd.users() != 0 {
        stats::count_error(EBUSY);
        return Err(EBUSY);
    }
    stats::counted(xrcd.dealloc(udata))
}
