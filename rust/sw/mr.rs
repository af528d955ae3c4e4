// SPDX-License-Identifier: GPL-2.0

//! rv0's memory regions: user memory pinned by `reg_user_mr`, with
//! soft-RoCE's keys, checks and errors (`rxe_verbs.c:rxe_reg_user_mr`,
//! `rxe_mr.c:rxe_mr_init_user`), changed in place by `rereg_user_mr`
//! (its PD and access flags, as soft-RoCE), released by `dereg_mr`.
//!
//! Nothing reads or writes the pages yet: there is no data path.

use super::{
    device::{
        Rv,
        SwPd, //
    },
    ids::Ids,
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::DriverDevice,
        mr::{
            access,
            random_key_byte,
            rereg,
            MrReg,
            MrRereg, //
        },
        umem::Umem,
    },
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::SpinLock, //
};

/// The first MR index (soft-RoCE's `RXE_MIN_MR_INDEX`).
const MIN_MR_INDEX: u32 = 1;

/// The last MR index (soft-RoCE's `RXE_MAX_MR_INDEX`; the indexes above it
/// are its memory windows').
const MAX_MR_INDEX: u32 = 1 << 19;

/// Most memory regions per device (soft-RoCE's `RXE_MAX_MR`).
pub(crate) const MAX_MR: u32 = MAX_MR_INDEX - MIN_MR_INDEX;

/// The largest memory region (soft-RoCE's `RXE_MAX_MR_SIZE`): no limit of
/// rv0's own; ib_core's pinning and `RLIMIT_MEMLOCK` set it.
pub(crate) const MAX_MR_SIZE: u64 = u64::MAX;

/// The access flags soft-RoCE accepts (`RXE_ACCESS_SUPPORTED_MR`). ib_core
/// refuses on-demand paging and the flush flags before rv0 sees them (rv0
/// does not offer them), so rv0 accepts what soft-RoCE accepts among the
/// rest.
const SUPPORTED_ACCESS: u32 = access::REMOTE_READ
    | access::REMOTE_WRITE
    | access::REMOTE_ATOMIC
    | access::LOCAL_WRITE
    | access::MW_BIND
    | access::ON_DEMAND
    | access::FLUSH_GLOBAL
    | access::FLUSH_PERSISTENT
    | access::OPTIONAL;

/// What `rereg_user_mr` may change in place (`RXE_MR_REREG_SUPPORTED`).
const SUPPORTED_REREG: u32 = rereg::PD | rereg::ACCESS;

/// The MR indexes of a device, given cyclically from 1.
pub(crate) fn mr_indexes() -> impl PinInit<Ids> {
    Ids::new(MIN_MR_INDEX, MAX_MR_INDEX, MAX_MR)
}

/// What `rereg_user_mr` changes.
struct Binding {
    /// The PD ([`SwPd::id`]).
    pd: u64,
    /// The access flags.
    access: u32,
}

/// What a region is made of, fixed at registration.
#[expect(dead_code, reason = "for the data path (next step)")]
struct Parts {
    /// Its index in the device's table: the key's upper 24 bits.
    index: u32,
    /// Its key, local and remote alike (soft-RoCE's user MRs).
    key: u32,
    /// The address work requests use for its first byte, and its length:
    /// kept here, as ib_core sets its own copy only for some verbs.
    iova: u64,
    length: u64,
    /// The pinned pages.
    umem: Umem,
}

/// A memory region of rv0.
#[pin_data]
pub(crate) struct SwMr {
    parts: Parts,
    /// The PD and access flags, changed by `rereg_user_mr` (soft-RoCE
    /// changes them unlocked; the data path will read them here).
    #[pin]
    binding: SpinLock<Binding>,
}

/// `reg_user_mr` of rv0, in soft-RoCE's order of checks.
pub(crate) fn reg_user_mr(
    dev: &DriverDevice<Rv>,
    pd: &SwPd,
    req: &MrReg<'_>,
) -> impl PinInit<SwMr, Error> {
    let parts = register(dev, req);
    let binding = Binding {
        pd: pd.id(),
        access: req.access(),
    };
    try_pin_init!(SwMr {
        parts: parts?,
        binding <- new_spinlock!(binding),
    }? Error)
}

/// The index, key and pages of a new region.
fn register(dev: &DriverDevice<Rv>, req: &MrReg<'_>) -> Result<Parts> {
    // Placement hints (a DMA handle) mean nothing to a software device.
    if req.has_dmah() {
        return Err(eopnotsupp());
    }
    if req.access() & !SUPPORTED_ACCESS != 0 {
        return Err(eopnotsupp());
    }
    let index = dev.mrs().take(GFP_KERNEL)?;
    match req.pin() {
        Ok(umem) => {
            let key = index << 8 | u32::from(random_key_byte());
            req.set_keys(key, key);
            Ok(Parts {
                index,
                key,
                iova: req.iova(),
                length: req.length(),
                umem,
            })
        }
        Err(e) => {
            dev.mrs().put(index);
            Err(e)
        }
    }
}

/// `rereg_user_mr` of rv0 (`rxe_verbs.c:rxe_rereg_user_mr`): a new PD or
/// new access flags, in place; a new range is not supported.
pub(crate) fn rereg_user_mr(mr: &SwMr, req: &MrRereg<'_, SwPd>) -> Result {
    let flags = req.flags();
    if flags & !SUPPORTED_REREG != 0 {
        return Err(eopnotsupp());
    }
    mr.parts.umem.check_rereg(flags, req.access())?;
    if flags & rereg::ACCESS != 0 && req.access() & !SUPPORTED_ACCESS != 0 {
        return Err(eopnotsupp());
    }
    let mut b = mr.binding.lock();
    if let Some(pd) = req.pd() {
        b.pd = pd.id();
    }
    if flags & rereg::ACCESS != 0 {
        b.access = req.access();
    }
    Ok(())
}

/// `dereg_mr` of rv0: the pages are unpinned as the data is dropped, the
/// index goes back.
pub(crate) fn dereg_mr(dev: &DriverDevice<Rv>, mr: &SwMr) {
    dev.mrs().put(mr.parts.index);
}
