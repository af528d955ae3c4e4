// SPDX-License-Identifier: GPL-2.0

//! Memory windows, as their driver sees them (`struct ib_mw`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! ib_core allocates a window with the driver's size (`size_ib_mw`), sets
//! its device, PD and type, and calls `alloc_mw`, which gives it its first
//! R_Key ([`MwAlloc::set_rkey`]); uverbs answers userspace with that key.
//! Binding and invalidating a window are work requests of the send queue
//! (`IB_WR_BIND_MW`, `IB_WR_LOCAL_INV`, `IB_WR_SEND_WITH_INV`), the
//! driver's data path: ib_core's copy of the key is not updated by them,
//! as in C.

use crate::bindings;

/// The type of a memory window (`enum ib_mw_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwType {
    /// `IB_MW_TYPE_1`: bound by `ibv_bind_mw`, to the PD only.
    One,
    /// `IB_MW_TYPE_2`: bound by a work request, to the QP that posted it.
    Two,
}

impl MwType {
    /// The type numbered `v`, `None` for a number that names none.
    pub(crate) fn from_raw(v: u32) -> Option<Self> {
        match v {
            bindings::ib_mw_type_IB_MW_TYPE_1 => Some(Self::One),
            bindings::ib_mw_type_IB_MW_TYPE_2 => Some(Self::Two),
            _ => None,
        }
    }
}

/// A memory window being allocated (`alloc_mw`).
///
/// # Invariants
///
/// `mw` is ib_core's fresh `struct ib_mw` with its own fields set, nobody
/// else's until `alloc_mw` returns.
pub(crate) struct MwAlloc {
    mw: *mut bindings::ib_mw,
    mw_type: MwType,
}

impl MwAlloc {
    /// The window's request, `None` for a type ib_core does not know
    /// (uverbs refuses those before the driver is called).
    ///
    /// # Safety
    ///
    /// As the type invariants, until `alloc_mw` returns.
    pub(crate) unsafe fn from_raw(mw: *mut bindings::ib_mw) -> Option<Self> {
        // SAFETY: A valid window (the caller's promise).
        let mw_type = MwType::from_raw(unsafe { (*mw).type_ })?;
        // INVARIANT: The caller's promise.
        Some(Self { mw, mw_type })
    }

    /// The window's type.
    pub(crate) fn mw_type(&self) -> MwType {
        self.mw_type
    }

    /// Sets the window's first R_Key, which uverbs returns to userspace.
    pub(crate) fn set_rkey(&self, rkey: u32) {
        // SAFETY: The window being allocated is ours until `alloc_mw`
        // returns (type invariant).
        unsafe { (*self.mw).rkey = rkey };
    }
}
