// SPDX-License-Identifier: GPL-2.0

//! Address handles: `rdma_create_user_ah` and `rdma_destroy_ah_user`.

use super::{
    dmac,
    stats, //
};
use crate::rdma::{
    ah::{
        AhHandle,
        SgidRef, //
    },
    ah_attr::{
        AhAttr,
        AhType, //
    },
    device::Device,
    gid_attr::GidAttr,
    pd::Pd,
    udata::Udata,
};
use kernel::prelude::*;

/// Checks an address vector against the device (`rdma_check_ah_attr`):
/// the port exists, a GRH is there when the port or the RoCE type needs
/// one, and a given source GID entry matches its index and port.
fn check_ah_attr(device: &Device, attr: &AhAttr) -> Result {
    let port = attr.port_num();
    if !device.is_port_valid(port) {
        return Err(EINVAL);
    }
    if (device.is_grh_required(port) || attr.ah_type() == AhType::Roce) && !attr.has_grh() {
        return Err(EINVAL);
    }
    if let Some(sgid_attr) = attr.sgid_attr() {
        if sgid_attr.index() != attr.sgid_index() || sgid_attr.port_num() != port {
            return Err(EINVAL);
        }
    }
    Ok(())
}

/// Makes sure a GRH address vector references its source GID entry
/// (`rdma_fill_sgid_attr`). Returns whether it took a reference that
/// [`unfill_sgid_attr`] must give back.
pub(super) fn fill_sgid_attr(device: &Device, attr: &mut AhAttr) -> Result<bool> {
    check_ah_attr(device, attr)?;
    if !attr.has_grh() || attr.sgid_attr().is_some() {
        return Ok(false);
    }
    let sgid_attr = GidAttr::get(device, attr.port_num(), attr.sgid_index())?;
    attr.set_sgid_attr(sgid_attr);
    Ok(true)
}

/// Undoes [`fill_sgid_attr`] so the caller sees its attribute unchanged
/// (`rdma_unfill_sgid_attr`); nothing is left to undo when a handle took
/// the reference ([`SgidRef::Take`]).
pub(super) fn unfill_sgid_attr(attr: &mut AhAttr, filled: bool) {
    if filled {
        drop(attr.take_sgid_attr());
    }
}

/// Creates an address handle for userspace or a kernel caller
/// (`rdma_create_user_ah`).
///
/// For RoCE the destination MAC and hop limit are resolved first, into
/// `attr`. The handle is made by `ops.create_user_ah` with `udata`, by
/// `ops.create_ah` without. Every error is ib_core's for the same input,
/// and leaves `attr`, the GID entries and `pd` as they were.
pub(crate) fn create_user_ah(
    pd: &Pd,
    attr: &mut AhAttr,
    udata: Option<&Udata>,
) -> Result<AhHandle> {
    let device = pd.device();
    let filled = stats::counted(fill_sgid_attr(device, attr))?;

    let result = (|| {
        if attr.ah_type() == AhType::Roce {
            dmac::resolve(attr)?;
        }
        // The reference `fill_sgid_attr` took becomes the handle's, rather
        // than a second one taken and the first given back (ib_core's
        // `rdma_update_sgid_attr` and `rdma_unfill_sgid_attr`): the same
        // result, two atomic operations on the entry fewer.
        let sgid_ref = if filled { SgidRef::Take } else { SgidRef::Hold };
        AhHandle::create(pd, attr, sgid_ref, true, udata)
    })();

    unfill_sgid_attr(attr, filled);
    // Counted (and traced) by the entry point as it returns.
    stats::counted(result)
}

/// Destroys an address handle (`rdma_destroy_ah_user`): the driver first,
/// then the PD use and the GID entry reference are given back. On a driver
/// error the handle stays, as in ib_core.
pub(crate) fn destroy_ah_user(ah: AhHandle, flags: u32, udata: Option<&Udata>) -> Result {
    stats::counted(ah.destroy(flags, udata))
}
