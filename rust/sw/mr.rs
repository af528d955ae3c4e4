// SPDX-License-Identifier: GPL-2.0

//! rv0's memory regions: user memory pinned by `reg_user_mr`, with
//! soft-RoCE's keys, checks and errors (`rxe_verbs.c:rxe_reg_user_mr`,
//! `rxe_mr.c:rxe_mr_init_user`), changed in place by `rereg_user_mr`
//! (its PD and access flags, as soft-RoCE), released by `dereg_mr`.
//!
//! The data path finds a region by its key ([`find`]) under RCU, checks
//! it ([`MrCore::check`]) and copies to or from its pages.

use super::{
    device::{
        Rv,
        SwPd, //
    },
    ids::Ids,
};
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::DriverDevice,
        gate::{
            Gated,
            GatedRef, //
        },
        mr::{
            random_key_byte,
            Access,
            AccessFlags,
            MrReg,
            MrRereg,
            Rereg,
            ReregFlags, //
        },
        umem::{
            AtomicOp,
            Umem, //
        },
    },
};
use kernel::{
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        rcu,
        Arc,
        ArcBorrow, //
    },
    types::ScopeGuard,
};

/// The first MR index (soft-RoCE's `RXE_MIN_MR_INDEX`).
const MIN_MR_INDEX: u32 = 1;

/// The last MR index (soft-RoCE's `RXE_MAX_MR_INDEX`; the indexes above it
/// are its memory windows').
pub(crate) const MAX_MR_INDEX: u32 = 1 << 19;

/// Most memory regions per device (soft-RoCE's `RXE_MAX_MR`).
pub(crate) const MAX_MR: u32 = MAX_MR_INDEX - MIN_MR_INDEX;

/// The largest memory region (soft-RoCE's `RXE_MAX_MR_SIZE`): no limit of
/// rv0's own; ib_core's pinning and `RLIMIT_MEMLOCK` set it.
pub(crate) const MAX_MR_SIZE: u64 = u64::MAX;

/// The access flags soft-RoCE accepts (`RXE_ACCESS_SUPPORTED_MR`). ib_core
/// refuses on-demand paging and the flush flags before rv0 sees them (rv0
/// does not offer them), so rv0 accepts what soft-RoCE accepts among the
/// rest.
pub(crate) fn supported_access() -> AccessFlags {
    Access::RemoteRead
        | Access::RemoteWrite
        | Access::RemoteAtomic
        | Access::LocalWrite
        | Access::MwBind
        | Access::OnDemand
        | Access::FlushGlobal
        | Access::FlushPersistent
        | AccessFlags::optional()
}

/// What `rereg_user_mr` may change in place (`RXE_MR_REREG_SUPPORTED`).
fn supported_rereg() -> ReregFlags {
    Rereg::Pd | Rereg::Access
}

/// The MR indexes of a device, given cyclically from 1.
pub(crate) fn mr_indexes() -> impl PinInit<Ids> {
    Ids::new(MIN_MR_INDEX, MAX_MR_INDEX, MAX_MR)
}

/// What `rereg_user_mr` changes.
#[derive(Clone, Copy)]
struct Binding {
    /// The PD ([`SwPd::id`]).
    pd: u64,
    /// The access flags.
    access: AccessFlags,
}

/// What a region is made of, fixed at registration.
struct Parts {
    /// Its index in the device's table: the key's upper 24 bits.
    index: u32,
    /// Its key, local and remote alike (soft-RoCE's user MRs).
    key: u32,
    /// The address work requests use for its first byte, and its length:
    /// kept here, as ib_core sets its own copy only for some verbs.
    iova: u64,
    length: u64,
}

/// A memory region, as the data path finds it in the device's table.
#[pin_data]
pub(crate) struct MrCore {
    parts: Parts,
    /// The pinned pages, which an access enters ([`find`]) and `dereg_mr`
    /// takes back (after the accesses in progress) and releases.
    #[pin]
    umem: Gated<Umem>,
    /// The PD and access flags, changed by `rereg_user_mr` (soft-RoCE
    /// changes them unlocked; the data path will read them here).
    #[pin]
    binding: SpinLockBh<Binding>,
    /// The memory windows bound to it ([`super::mw`]): `dereg_mr` refuses
    /// while there are any (IBA 10.6.7.2.6, `rxe_dereg_mr`).
    windows: Atomic<u32>,
}

impl MrCore {
    /// Its key.
    pub(crate) fn key(&self) -> u32 {
        self.parts.key
    }

    /// A memory window was bound to it.
    pub(crate) fn window_bound(&self) {
        self.windows.fetch_add(1, Relaxed);
    }

    /// A memory window bound to it was unbound, invalidated or released.
    pub(crate) fn window_unbound(&self) {
        self.windows.fetch_sub(1, Relaxed);
    }
}

/// `reg_user_mr` of rv0, in soft-RoCE's order of checks.
pub(crate) fn reg_user_mr(
    dev: &DriverDevice<Rv>,
    pd: &SwPd,
    req: &MrReg<'_>,
) -> impl PinInit<SwMr, Error> {
    register(dev, pd, req).map(|core| SwMr { core })
}

/// A memory region of rv0: its part in the device's table.
pub(crate) struct SwMr {
    core: Arc<MrCore>,
}

/// A new region in the device's table: its index, key and pages.
fn register(dev: &DriverDevice<Rv>, pd: &SwPd, req: &MrReg<'_>) -> Result<Arc<MrCore>> {
    // Placement hints (a DMA handle) mean nothing to a software device.
    if req.has_dmah() {
        return Err(eopnotsupp());
    }
    if req.access().outside(supported_access()) != 0 {
        return Err(eopnotsupp());
    }
    // The index goes back if anything below fails.
    let index = ScopeGuard::new_with_data(dev.mrs().take(GFP_KERNEL)?, |i| dev.mrs().put(i));
    let umem = req.pin()?;
    let key = *index << 8 | u32::from(random_key_byte());
    req.set_keys(key, key);
    let parts = Parts {
        index: *index,
        key,
        iova: req.iova(),
        length: req.length(),
    };
    let binding = Binding {
        pd: pd.id(),
        access: req.access(),
    };
    let core = Arc::pin_init(
        pin_init!(MrCore {
            parts,
            umem <- Gated::new(umem),
            binding <- new_spinlock_bh!(binding),
            windows: Atomic::new(0),
        }),
        GFP_KERNEL,
    )?;
    dev.mr_table().insert(*index, core.clone())?;
    index.dismiss();
    Ok(core)
}

/// `rereg_user_mr` of rv0 (`rxe_verbs.c:rxe_rereg_user_mr`): a new PD or
/// new access flags, in place; a new range is not supported.
pub(crate) fn rereg_user_mr(mr: &SwMr, req: &MrRereg<'_, SwPd>) -> Result {
    let flags = req.flags();
    if flags.outside(supported_rereg()) != 0 {
        return Err(eopnotsupp());
    }
    let mr = &mr.core;
    // Registered until `dereg_mr`, which does not run meanwhile (uverbs
    // holds the MR for this verb).
    mr.umem
        .enter()
        .ok_or(EINVAL)?
        .check_rereg(flags, req.access())?;
    if flags.contains(Rereg::Access) && req.access().outside(supported_access()) != 0 {
        return Err(eopnotsupp());
    }
    let mut b = mr.binding.lock();
    if let Some(pd) = req.pd() {
        b.pd = pd.id();
    }
    if flags.contains(Rereg::Access) {
        b.access = req.access();
    }
    Ok(())
}

/// `dereg_mr` of rv0: out of the table, its pages released once no access
/// is in progress (soft-RoCE waits for the MR's references,
/// `rxe_pool.c:__rxe_cleanup`, then releases them, `rxe_mr_cleanup`), the
/// index goes back; the table's part goes a grace period later. No
/// access begins after this returns, and the pinned memory is no longer
/// charged to the process (`RLIMIT_MEMLOCK`). `EINVAL` while memory
/// windows are bound to it (the region stays).
///
/// A bind racing with this (another thread posting one) may still take
/// the region after the check: the window then names a region whose
/// accesses fail ([`find`] no longer finds it), as any unbound key.
pub(crate) fn dereg_mr(dev: &DriverDevice<Rv>, mr: &SwMr) -> Result {
    if mr.core.windows.load(Relaxed) != 0 {
        return Err(EINVAL);
    }
    let index = mr.core.parts.index;
    dev.mr_table().remove(index);
    drop(mr.core.umem.close());
    dev.mrs().put(index);
    Ok(())
}

/// Why a region refuses an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrError {
    /// No region has the key (or another key of its index).
    NoKey,
    /// The region belongs to another PD.
    OtherPd,
    /// The region does not allow local writes.
    NotWritable,
    /// The range is not within the region.
    OutOfRange,
}

/// The region with `key`, for one access, at most as long as `guard`
/// lasts; a region being deregistered has no key any more.
pub(crate) fn find<'a>(
    dev: &'a DriverDevice<Rv>,
    guard: &'a rcu::Guard,
    key: u32,
) -> core::result::Result<MrAccess<'a>, MrError> {
    let (mr, arc) = dev
        .mr_table()
        .get_both(guard, key >> 8)
        .ok_or(MrError::NoKey)?;
    if mr.parts.key != key {
        return Err(MrError::NoKey);
    }
    let umem = mr.umem.enter().ok_or(MrError::NoKey)?;
    Ok(MrAccess { mr, arc, umem })
}

/// A region found by its key, during one access: `dereg_mr` waits for it.
pub(crate) struct MrAccess<'a> {
    mr: &'a MrCore,
    arc: ArcBorrow<'a, MrCore>,
    umem: GatedRef<'a, Umem>,
}

impl MrAccess<'_> {
    /// The region, with a reference of the caller's own (a window keeps
    /// the region it is bound to).
    pub(crate) fn keep(&self) -> Arc<MrCore> {
        Arc::from(self.arc)
    }

    /// Whether this is the region at `mr` (compared, never dereferenced).
    pub(crate) fn is(&self, mr: *const MrCore) -> bool {
        core::ptr::eq(self.mr, mr)
    }

    /// soft-RoCE's checks of a bind to this region (`rxe_mw.c:
    /// rxe_check_bind_mw`, C10-73 to C10-75) of a window of PD `pd`
    /// giving `access`, over `[addr, addr + len)`; and the PD, which
    /// soft-RoCE does not check (IBA C10-71: a window and its region are
    /// of one PD).
    pub(crate) fn check_bind(
        &self,
        pd: u64,
        access: AccessFlags,
        addr: u64,
        len: u64,
    ) -> core::result::Result<(), MrError> {
        let b = *self.mr.binding.lock();
        if b.pd != pd {
            return Err(MrError::OtherPd);
        }
        if !b.access.contains(Access::MwBind) {
            return Err(MrError::NotWritable);
        }
        let writes = access.contains(Access::RemoteWrite) || access.contains(Access::RemoteAtomic);
        if writes && !b.access.contains(Access::LocalWrite) {
            return Err(MrError::NotWritable);
        }
        self.offset(addr, len).map(|_| ())
    }

    /// The offset of `[addr, addr + len)` within the region, for an
    /// access through a window bound to it (whose checks were the bind's
    /// and the window's).
    pub(crate) fn window_offset(
        &self,
        addr: u64,
        len: u64,
    ) -> core::result::Result<usize, MrError> {
        self.offset(addr, len)
    }

    /// soft-RoCE's checks of a local access (`rxe_mr.c:lookup_mr`,
    /// `mr_check_range`): the PD, local write access when writing, and
    /// `[addr, addr + len)` within the region. Returns the offset of
    /// `addr` from the start of the first pinned page.
    pub(crate) fn check(
        &self,
        pd: u64,
        write: bool,
        addr: u64,
        len: u64,
    ) -> core::result::Result<usize, MrError> {
        self.checked(pd, write.then_some(Access::LocalWrite), addr, len)
    }

    /// soft-RoCE's checks of a remote access by an RC QP of PD `pd`
    /// (`rxe_resp.c:check_rkey`, `rxe_mr.c:lookup_mr` with
    /// `RXE_LOOKUP_REMOTE`): the PD, the remote access asked for, the
    /// range. The offset, as [`MrAccess::check`].
    pub(crate) fn check_remote(
        &self,
        pd: u64,
        access: Access,
        addr: u64,
        len: u64,
    ) -> core::result::Result<usize, MrError> {
        self.checked(pd, Some(access), addr, len)
    }

    /// soft-RoCE's checks of a remote access to the whole region (a FLUSH
    /// of the region's level): the PD and the access.
    pub(crate) fn check_remote_whole(
        &self,
        pd: u64,
        access: Access,
    ) -> core::result::Result<(), MrError> {
        let p = &self.mr.parts;
        self.checked(pd, Some(access), p.iova, 0).map(|_| ())
    }

    /// The PD, the access `needs` (if any; `NotWritable` without it) and
    /// the range, for [`MrAccess::check`] and [`MrAccess::check_remote`].
    fn checked(
        &self,
        pd: u64,
        needs: Option<Access>,
        addr: u64,
        len: u64,
    ) -> core::result::Result<usize, MrError> {
        let b = *self.mr.binding.lock();
        if b.pd != pd {
            return Err(MrError::OtherPd);
        }
        if needs.is_some_and(|a| !b.access.contains(a)) {
            return Err(MrError::NotWritable);
        }
        self.offset(addr, len)
    }

    /// `[addr, addr + len)` within the region: the offset of `addr` from
    /// the start of the first pinned page.
    fn offset(&self, addr: u64, len: u64) -> core::result::Result<usize, MrError> {
        let p = &self.mr.parts;
        if addr < p.iova || len > p.length || addr - p.iova > p.length - len {
            return Err(MrError::OutOfRange);
        }
        // The first page starts at the page of `iova` (ib_core made `start`
        // and `iova` share their offset in a page).
        let first = p.iova & (PAGE_SIZE as u64 - 1);
        usize::try_from(addr - p.iova + first).map_err(|_| MrError::OutOfRange)
    }

    /// Fills `dst` from offset `off` (from [`MrAccess::check`]).
    pub(crate) fn read(&self, off: usize, dst: &mut [u8]) -> Result {
        self.umem.read(off, dst)
    }

    /// An RDMA atomic `op` at offset `off` (from
    /// [`MrAccess::check_remote`] for 8 bytes); the value before, or `Err`
    /// for memory that may not be written or an `off` not 8-byte aligned.
    pub(crate) fn atomic(&self, off: usize, op: AtomicOp) -> Result<u64> {
        self.umem.atomic(off, op)
    }

    /// Writes `src` at offset `off` (from [`MrAccess::check`] with `write`).
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        self.umem.write(off, src)
    }
}
