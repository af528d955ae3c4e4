// SPDX-License-Identifier: GPL-2.0

//! Memory regions, as their driver sees them (`struct ib_mr`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! Unlike the other objects, ib_core does not allocate a memory region:
//! the driver's `reg_user_mr` returns one and its `dereg_mr` frees it
//! (there is no `size_ib_mr`). The driver abstraction allocates it as an
//! [`crate::rdma::driver`] object all the same (ib_core's struct first,
//! the driver's data after it), so drivers see the same shape as for
//! every other object.

use super::{
    pd::Pd,
    umem::Umem, //
};
use crate::bindings;
use kernel::{
    impl_flags,
    prelude::*, //
};

impl_flags!(
    /// The access flags of a memory region (`enum ib_access_flags`). Bits
    /// that name no flag are kept as given ([`AccessFlags::unknown`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct AccessFlags(u32);

    /// One access flag.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Access {
        /// `IB_ACCESS_LOCAL_WRITE`.
        LocalWrite = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE,
        /// `IB_ACCESS_REMOTE_WRITE`.
        RemoteWrite = bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE,
        /// `IB_ACCESS_REMOTE_READ`.
        RemoteRead = bindings::ib_access_flags_IB_ACCESS_REMOTE_READ,
        /// `IB_ACCESS_REMOTE_ATOMIC`.
        RemoteAtomic = bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC,
        /// `IB_ACCESS_MW_BIND`.
        MwBind = bindings::ib_access_flags_IB_ACCESS_MW_BIND,
        /// `IB_ZERO_BASED`.
        ZeroBased = bindings::ib_access_flags_IB_ZERO_BASED,
        /// `IB_ACCESS_ON_DEMAND`.
        OnDemand = bindings::ib_access_flags_IB_ACCESS_ON_DEMAND,
        /// `IB_ACCESS_HUGETLB`.
        Hugetlb = bindings::ib_access_flags_IB_ACCESS_HUGETLB,
        /// `IB_ACCESS_RELAXED_ORDERING`.
        RelaxedOrdering = bindings::ib_access_flags_IB_ACCESS_RELAXED_ORDERING,
        /// `IB_ACCESS_FLUSH_GLOBAL`.
        FlushGlobal = bindings::ib_access_flags_IB_ACCESS_FLUSH_GLOBAL,
        /// `IB_ACCESS_FLUSH_PERSISTENT`.
        FlushPersistent = bindings::ib_access_flags_IB_ACCESS_FLUSH_PERSISTENT,
    }
);

impl AccessFlags {
    /// The flags of `bits`, as ib_core gives them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// `IB_ACCESS_OPTIONAL`: the flags a device may ignore (a range of
    /// bits, some named above, some reserved).
    pub(crate) fn optional() -> Self {
        Self(bindings::ib_access_flags_IB_ACCESS_OPTIONAL)
    }

    /// The bits outside `supported`.
    pub(crate) fn outside(self, supported: Self) -> u32 {
        self.0 & !supported.0
    }
}

impl_flags!(
    /// What `rereg_user_mr` is asked to change (`enum ib_mr_rereg_flags`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct ReregFlags(u32);

    /// One thing `rereg_user_mr` may change.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Rereg {
        /// `IB_MR_REREG_TRANS`: the address range.
        Trans = bindings::ib_mr_rereg_flags_IB_MR_REREG_TRANS,
        /// `IB_MR_REREG_PD`: the protection domain.
        Pd = bindings::ib_mr_rereg_flags_IB_MR_REREG_PD,
        /// `IB_MR_REREG_ACCESS`: the access flags.
        Access = bindings::ib_mr_rereg_flags_IB_MR_REREG_ACCESS,
    }
);

impl ReregFlags {
    /// The flags of `bits`, as ib_core gives them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The bits outside `supported`.
    pub(crate) fn outside(self, supported: Self) -> u32 {
        self.0 & !supported.0
    }
}

/// What `reg_user_mr` is asked for, and what it answers besides the
/// driver's data: the keys ([`MrReg::set_keys`]).
///
/// ib_core has checked the access flags against the device
/// (`ib_check_mr_access`: no remote write or atomic without local write,
/// no on-demand paging or flush the device does not offer) and, for a
/// `write()` verb, that `start` and `iova` share their offset in a page.
/// It sets the region's PD, type, and (only for a `write()` verb) address
/// and length itself after the driver returns, so the driver keeps its
/// own copy of what it needs.
///
/// # Invariants
///
/// `mr` is the fresh, zeroed `ib_mr` being registered, not yet seen by
/// ib_core; `pd` is valid for `'a`.
pub(crate) struct MrReg<'a> {
    mr: *mut bindings::ib_mr,
    pd: &'a Pd,
    start: u64,
    length: u64,
    iova: u64,
    access: u32,
    dmah: bool,
}

impl<'a> MrReg<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        mr: *mut bindings::ib_mr,
        pd: &'a Pd,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        dmah: bool,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            mr,
            pd,
            start,
            length,
            iova,
            access,
            dmah,
        }
    }

    /// The length in bytes.
    pub(crate) fn length(&self) -> u64 {
        self.length
    }

    /// The address work requests use for the first byte (`hca_va`).
    pub(crate) fn iova(&self) -> u64 {
        self.iova
    }

    /// The access flags.
    pub(crate) fn access(&self) -> AccessFlags {
        AccessFlags::from_bits(self.access)
    }

    /// Whether a DMA handle (`ib_dmah`, placement hints) came with it.
    pub(crate) fn has_dmah(&self) -> bool {
        self.dmah
    }

    /// Pins the range of the calling process's memory ([`Umem::get`]).
    pub(crate) fn pin(&self) -> Result<Umem> {
        Umem::get(self.pd.device(), self.start, self.length, self.access)
    }

    /// Sets the keys ib_core returns to userspace, and the page size
    /// (`PAGE_SIZE`: user memory is pinned in pages).
    pub(crate) fn set_keys(&self, lkey: u32, rkey: u32) {
        // SAFETY: The region being registered is ours until `reg_user_mr`
        // returns (type invariant).
        unsafe {
            (*self.mr).lkey = lkey;
            (*self.mr).rkey = rkey;
            // CAST: 4096.
            (*self.mr).page_size = bindings::PAGE_SIZE as u32;
        }
    }
}

/// What `rereg_user_mr` is asked to change in place: the flags
/// ([`ReregFlags`]; ib_core has refused none and unknown ones, and dropped
/// `PD` when the PD is the same), and the new values. `D` is the driver's
/// PD data. A new address range (`IB_MR_REREG_TRANS`) is among the flags,
/// but not its values: no driver of this abstraction supports it yet.
pub(crate) struct MrRereg<'a, D> {
    flags: ReregFlags,
    access: AccessFlags,
    pd: Option<&'a D>,
}

impl<'a, D> MrRereg<'a, D> {
    /// A request as ib_core makes it; `pd` the data of the new PD when
    /// `flags` has [`Rereg::Pd`].
    pub(crate) fn new(flags: ReregFlags, access: AccessFlags, pd: Option<&'a D>) -> Self {
        Self { flags, access, pd }
    }

    /// What changes ([`ReregFlags`]).
    pub(crate) fn flags(&self) -> ReregFlags {
        self.flags
    }

    /// The new access flags, with [`Rereg::Access`].
    pub(crate) fn access(&self) -> AccessFlags {
        self.access
    }

    /// The new PD's data, with [`Rereg::Pd`].
    pub(crate) fn pd(&self) -> Option<&'a D> {
        self.pd
    }
}

/// A random byte, for the low byte of a key (soft-RoCE's
/// `rxe_get_next_key`): keys of a reused index differ.
pub(crate) fn random_key_byte() -> u8 {
    // SAFETY: No preconditions; callable from any context.
    unsafe { bindings::get_random_u8() }
}
