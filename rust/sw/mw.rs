// SPDX-License-Identifier: GPL-2.0

//! rv0's memory windows (`rverbs rc=1`): type 1 and type 2B windows with
//! soft-RoCE's keys, states and checks (`rxe_mw.c`), bound by a send
//! work request (`IB_WR_BIND_MW`; rdma-core's rxe provider turns
//! `ibv_bind_mw` into one), invalidated by `IB_WR_LOCAL_INV` or a peer's
//! `IB_WR_SEND_WITH_INV`, released by `dealloc_mw`.
//!
//! A window is found by its R_Key in the device's table, as a region is
//! ([`super::mr::find`]): its indexes are above the regions'
//! (soft-RoCE's `RXE_MIN_MW_INDEX`), so a key says which it names
//! ([`is_window`]). A bound window keeps its region (which `dereg_mr`
//! then refuses to release) and, for type 2, the number of the QP it was
//! bound through; a remote access through it ([`remote`]) is checked
//! against the window, then made in the region.
//!
//! Where rv0 is stricter than soft-RoCE 7.2 (Documentation/rv0.rst): an
//! access through a window must lie within the window (soft-RoCE checks
//! the region's range only); a window binds only to a region of its PD;
//! invalidating a type 2 window that is not bound fails (soft-RoCE
//! dereferences its missing QP); a peer's SEND with invalidate reaches
//! only a window bound through the QP it arrives on (IBA o10-37.2.?:
//! soft-RoCE checks nothing), and a local invalidation only one of the
//! QP's PD.

use super::{
    device::{
        Rv,
        SwPd, //
    },
    ids::Ids,
    mr::{
        self,
        MrAccess,
        MrCore,
        MrError,
        MAX_MR_INDEX, //
    },
    qp::QpCore,
};
use crate::sync::{
    new_spinlock_bh,
    SpinLockBh, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::DriverDevice,
        mr::{
            random_key_byte,
            Access,
            AccessFlags, //
        },
        mw::{
            MwAlloc,
            MwType, //
        },
        rxe_abi::wqe::MwBind,
    },
};
use kernel::{
    prelude::*,
    sync::{
        rcu,
        Arc, //
    },
    types::ScopeGuard,
};

/// The first window index (soft-RoCE's `RXE_MIN_MW_INDEX`).
const MIN_MW_INDEX: u32 = MAX_MR_INDEX + 1;

/// The last window index (soft-RoCE's `RXE_MAX_MW_INDEX`).
const MAX_MW_INDEX: u32 = 1 << 20;

/// Most memory windows per device (soft-RoCE's `RXE_MAX_MW`).
pub(crate) const MAX_MW: u32 = MAX_MW_INDEX - MIN_MW_INDEX;

/// The window indexes of a device, given cyclically.
pub(crate) fn mw_indexes() -> impl PinInit<Ids> {
    Ids::new(MIN_MW_INDEX, MAX_MW_INDEX, MAX_MW)
}

/// Whether `key` names a window rather than a region
/// (`rxe_verbs.h:rkey_is_mw`).
pub(crate) fn is_window(key: u32) -> bool {
    (MIN_MW_INDEX..=MAX_MW_INDEX).contains(&(key >> 8))
}

/// A window's binding, changed by binds and invalidations.
struct Binding {
    /// Its R_Key now: its index, and a key byte each bind changes.
    rkey: u32,
    /// Type 1: allocated (valid) until released. Type 2: bound (valid) or
    /// free (`RXE_MW_STATE_VALID`, `RXE_MW_STATE_FREE`).
    valid: bool,
    /// What it gives, and the range, `[addr, addr + length)`, of
    /// addresses of its region; a length of 0 gives nothing.
    access: AccessFlags,
    addr: u64,
    length: u64,
    /// The region it is bound to (counted there).
    mr: Option<Arc<MrCore>>,
    /// Type 2: the QP it was bound through ([`QpCore::uid`]).
    qp: u64,
}

impl Binding {
    /// Lets go of the region, and of the QP; gives nothing more.
    fn clear(&mut self) {
        if let Some(mr) = self.mr.take() {
            mr.window_unbound();
        }
        self.access = AccessFlags::empty();
        self.addr = 0;
        self.length = 0;
        self.qp = 0;
    }
}

/// A memory window, as the data path finds it in the device's table.
#[pin_data]
pub(crate) struct MwCore {
    index: u32,
    mw_type: MwType,
    /// Its PD ([`SwPd::id`]).
    pd: u64,
    /// Taken by binds and invalidations (the send path, or a SEND's
    /// receive in the softirq) and by accesses.
    #[pin]
    binding: SpinLockBh<Binding>,
}

/// A memory window of rv0: its part in the device's table.
pub(crate) struct SwMw {
    core: Arc<MwCore>,
}

/// `alloc_mw` of rv0 (`rxe_mw.c:rxe_alloc_mw`): a type 1 window is valid
/// at once (with nothing bound), a type 2 one free. `EOPNOTSUPP` without
/// `rc=1` (no QP could bind it).
pub(crate) fn alloc_mw(dev: &DriverDevice<Rv>, pd: &SwPd, req: &MwAlloc) -> Result<SwMw> {
    if !dev.rc() {
        return Err(eopnotsupp());
    }
    // The index goes back if anything below fails.
    let index = ScopeGuard::new_with_data(dev.mws().take(GFP_KERNEL)?, |i| dev.mws().put(i));
    let rkey = *index << 8 | u32::from(random_key_byte());
    let mw_type = req.mw_type();
    let at = *index;
    let binding = Binding {
        rkey,
        valid: mw_type == MwType::One,
        access: AccessFlags::empty(),
        addr: 0,
        length: 0,
        mr: None,
        qp: 0,
    };
    let core = Arc::pin_init(
        pin_init!(MwCore {
            index: at,
            mw_type,
            pd: pd.id(),
            binding <- new_spinlock_bh!(binding),
        }),
        GFP_KERNEL,
    )?;
    dev.mw_table().insert(*index, core.clone())?;
    req.set_rkey(rkey);
    index.dismiss();
    Ok(SwMw { core })
}

/// `dealloc_mw` of rv0: out of the table, its region let go of (bound or
/// not, as `rxe_mw_cleanup`), its index back; an access in progress
/// finds it invalid. The table's part goes a grace period later.
pub(crate) fn dealloc_mw(dev: &DriverDevice<Rv>, mw: &SwMw) {
    let mw = &mw.core;
    dev.mw_table().remove(mw.index);
    {
        let mut b = mw.binding.lock();
        b.clear();
        b.valid = false;
    }
    dev.mws().put(mw.index);
}

/// `IB_WR_BIND_MW` posted on `qp` (`rxe_mw.c:rxe_bind_mw`): `Err` for
/// any check that fails (the work request completes with
/// `IB_WC_MW_BIND_ERR` and the QP fails). Any context.
pub(crate) fn bind(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    qp: &QpCore,
    w: &MwBind,
) -> core::result::Result<(), ()> {
    let mw = dev.mw_table().get(guard, w.mw_rkey >> 8).ok_or(())?;
    let access = AccessFlags::from_bits(w.access);
    // What a region may allow, not zero-based (`RXE_ACCESS_SUPPORTED_MW`).
    if access.outside(mr::supported_access()) != 0 {
        return Err(());
    }
    // The region, for a length (`rxe_bind_mw`): one of this key, of the
    // window's PD, allowing binds, and local writes for a window that
    // gives remote writes or atomics, the range within it.
    let region: Option<MrAccess<'_>> = if w.length != 0 {
        let mr = mr::find(dev, guard, w.mr_lkey).map_err(|_| ())?;
        mr.check_bind(mw.pd, access, w.addr, w.length)
            .map_err(|_: MrError| ())?;
        Some(mr)
    } else {
        None
    };
    let mut b = mw.binding.lock();
    if !b.valid && mw.mw_type == MwType::One {
        // Released meanwhile.
        return Err(());
    }
    if b.rkey != w.mw_rkey {
        return Err(());
    }
    if mw.mw_type == MwType::Two {
        // o10-37.2.30: free; C10-72: of the QP's PD; o10-37.2.40: a
        // region and a length (a type 2 window is invalidated otherwise).
        if b.valid || qp.pd != mw.pd || region.is_none() {
            return Err(());
        }
    }
    b.clear();
    b.rkey = (b.rkey & !0xff) | (w.rkey & 0xff);
    b.valid = true;
    b.access = access;
    b.addr = w.addr;
    b.length = w.length;
    if let Some(mr) = region {
        let kept = mr.keep();
        kept.window_bound();
        b.mr = Some(kept);
    }
    if mw.mw_type == MwType::Two {
        b.qp = qp.uid;
    }
    Ok(())
}

/// Who invalidates a window.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invalidator {
    /// `IB_WR_LOCAL_INV` posted on a QP of PD `pd`.
    Local { pd: u64 },
    /// A SEND with invalidate received on the QP `uid`
    /// ([`QpCore::uid`]).
    Remote { uid: u64 },
}

/// Invalidates the window of R_Key `key` (`rxe_mw.c:rxe_invalidate_mw`;
/// a key of a region is `rxe_mr.c:rxe_invalidate_mr`'s, which succeeds for
/// fast-registered regions only, which rv0 does not have): a bound type 2
/// window becomes free. `Err` for anything else. Any context.
pub(crate) fn invalidate(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    key: u32,
    by: Invalidator,
) -> core::result::Result<(), ()> {
    if !is_window(key) {
        return Err(());
    }
    let mw = dev.mw_table().get(guard, key >> 8).ok_or(())?;
    let mut b = mw.binding.lock();
    // o10-37.2.26: not a type 1 window.
    if b.rkey != key || mw.mw_type != MwType::Two || !b.valid {
        return Err(());
    }
    let allowed = match by {
        Invalidator::Local { pd } => pd == mw.pd,
        Invalidator::Remote { uid } => uid == b.qp,
    };
    if !allowed {
        return Err(());
    }
    b.clear();
    b.valid = false;
    Ok(())
}

/// The range of the window of R_Key `key` as it is bound now (its first
/// byte's address and its length), `None` if no window has the key.
pub(crate) fn range(dev: &DriverDevice<Rv>, guard: &rcu::Guard, key: u32) -> Option<(u64, u64)> {
    let mw = dev.mw_table().get(guard, key >> 8)?;
    let b = mw.binding.lock();
    (b.rkey == key).then_some((b.addr, b.length))
}

/// The window of R_Key `key`, for a remote `access` of `len` bytes at
/// `va` by `qp` (`rxe_mw.c:rxe_lookup_mw`, `rxe_resp.c:check_rkey`): of
/// the QP's PD, through this QP for type 2, bound, giving `access`, the
/// range within the window. Its region's offset and access, or `Err` for
/// a remote access error. Any context.
pub(crate) fn remote<'a>(
    dev: &'a DriverDevice<Rv>,
    guard: &'a rcu::Guard,
    qp: &QpCore,
    access: Access,
    key: u32,
    va: u64,
    len: u64,
) -> core::result::Result<(usize, MrAccess<'a>), ()> {
    let mw = dev.mw_table().get(guard, key >> 8).ok_or(())?;
    let (mr_key, mr_ptr) = {
        let b = mw.binding.lock();
        let ok = b.rkey == key
            && b.valid
            && mw.pd == qp.pd
            && (mw.mw_type == MwType::One || b.qp == qp.uid)
            && b.length != 0
            && b.access.contains(access)
            && va >= b.addr
            && len <= b.length
            && va - b.addr <= b.length - len;
        match (&b.mr, ok) {
            (Some(mr), true) => (mr.key(), Arc::as_ptr(mr)),
            _ => return Err(()),
        }
    };
    // Its region, still registered (it cannot be deregistered while bound)
    // unless the window was unbound meanwhile.
    let mr = mr::find(dev, guard, mr_key).map_err(|_| ())?;
    if !mr.is(mr_ptr) {
        return Err(());
    }
    let off = mr.window_offset(va, len).map_err(|_| ())?;
    Ok((off, mr))
}
