// SPDX-License-Identifier: GPL-2.0

//! Driver-specific user data of a verb (`struct ib_udata`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::rdma::bindings;
use kernel::types::Opaque;

/// The input and output buffers that userspace passed with a verb, for the
/// driver. The core only hands it on.
///
/// # Invariants
///
/// The wrapped `struct ib_udata` is valid for as long as a reference to it
/// exists.
#[repr(transparent)]
pub(crate) struct Udata(Opaque<bindings::ib_udata>);

impl Udata {
    /// Returns the user data behind a raw pointer, `None` for a kernel call.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or points to a valid `struct ib_udata` for the
    /// lifetime `'a`.
    pub(crate) unsafe fn from_raw_opt<'a>(ptr: *mut bindings::ib_udata) -> Option<&'a Self> {
        // SAFETY: `Udata` is transparent over `ib_udata`; validity and
        // lifetime are the caller's promise.
        unsafe { ptr.cast::<Self>().as_ref() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_udata {
        self.0.get()
    }
}

/// Returns the raw pointer of optional user data (null for a kernel call).
pub(crate) fn as_raw_opt(udata: Option<&Udata>) -> *mut bindings::ib_udata {
    udata.map_or(core::ptr::null_mut(), Udata::as_raw)
}
