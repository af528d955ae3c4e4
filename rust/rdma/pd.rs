// SPDX-License-Identifier: GPL-2.0

//! Protection domains (`struct ib_pd`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::device::Device;
use crate::bindings;
use kernel::types::Opaque;

/// A protection domain.
///
/// # Invariants
///
/// The wrapped `struct ib_pd` is valid, with a valid `device`, for as long
/// as a reference to it exists.
#[repr(transparent)]
pub(crate) struct Pd(Opaque<bindings::ib_pd>);

impl Pd {
    /// Returns the protection domain behind a raw pointer.
    ///
    /// # Safety
    ///
    /// - `ptr` points to a valid `struct ib_pd` of a registered device,
    /// - that is not deallocated during the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_pd) -> &'a Self {
        // SAFETY: `Pd` is transparent over `ib_pd`; validity and lifetime
        // are the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_pd {
        self.0.get()
    }

    /// The device of the protection domain.
    pub(crate) fn device(&self) -> &Device {
        // SAFETY: By the type invariant `device` is valid while the PD is.
        unsafe { Device::from_raw((*self.as_raw()).device) }
    }

    /// Counts one more object using the PD.
    pub(super) fn get_use(&self) {
        // SAFETY: By the type invariant the PD is valid.
        unsafe { bindings::atomic_inc(&raw mut (*self.as_raw()).usecnt) }
    }

    /// Counts one object less using the PD.
    pub(super) fn put_use(&self) {
        // SAFETY: By the type invariant the PD is valid.
        unsafe { bindings::atomic_dec(&raw mut (*self.as_raw()).usecnt) }
    }
}
