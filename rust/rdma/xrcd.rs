// SPDX-License-Identifier: GPL-2.0

//! XRC domains (`struct ib_xrcd`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    device::Device,
    udata::{
        self,
        Udata, //
    },
};
use crate::{
    bindings,
    errno::to_result, //
};
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// The inode an XRC domain is shared through (opened with `O_CREAT`).
///
/// # Invariants
///
/// The wrapped `struct inode` is valid for as long as a reference exists.
#[repr(transparent)]
pub(crate) struct Inode(Opaque<bindings::inode>);

impl Inode {
    /// Returns the inode behind a raw pointer, `None` for null.
    ///
    /// # Safety
    ///
    /// `ptr` is null or a valid inode, referenced for the lifetime `'a`.
    pub(crate) unsafe fn from_raw_opt<'a>(ptr: *mut bindings::inode) -> Option<&'a Self> {
        // SAFETY: `Inode` is transparent over `inode`; the rest is the
        // caller's promise.
        unsafe { ptr.cast::<Self>().as_ref() }
    }
}

/// An XRC domain, owned by its creator until [`XrcdHandle::dealloc`].
///
/// This type has no destructor: ib_core's caller owns the object. Dropping
/// a handle leaks the domain, so it is `#[must_use]`: hand it back with
/// [`XrcdHandle::into_raw`] or end it with [`XrcdHandle::dealloc`].
///
/// # Invariants
///
/// The pointer is a valid `struct ib_xrcd` allocated with the driver's
/// `size_ib_xrcd` by kzalloc, with a valid `device`.
#[must_use = "an XrcdHandle has no destructor: pass it on with `into_raw` or end it with `dealloc`"]
pub(crate) struct XrcdHandle(NonNull<bindings::ib_xrcd>);

impl XrcdHandle {
    /// Takes ownership of an XRC domain.
    ///
    /// # Safety
    ///
    /// `ptr` is a live XRCD made by `ib_alloc_xrcd_user` or
    /// [`XrcdHandle::alloc`], whose ownership the caller hands over.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::ib_xrcd) -> Self {
        // SAFETY: A live XRCD pointer is non-null (caller's promise).
        // INVARIANT: The caller's promise.
        Self(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// Gives up ownership, returning the raw pointer.
    pub(crate) fn into_raw(self) -> *mut bindings::ib_xrcd {
        self.0.as_ptr()
    }

    /// Allocates the driver's XRCD object, initialises ib_core's part and
    /// has the driver set it up (`ops.alloc_xrcd`).
    ///
    /// The caller checked [`Device::has_alloc_xrcd`]; otherwise this fails
    /// with `EOPNOTSUPP`. On error nothing is left.
    pub(crate) fn alloc(
        device: &Device,
        inode: Option<&Inode>,
        udata: Option<&Udata>,
    ) -> Result<XrcdHandle> {
        let Some(alloc) = device.ops().alloc_xrcd else {
            return Err(crate::errno::eopnotsupp());
        };
        let inode = inode.map_or(core::ptr::null_mut(), |i| i.0.get());
        // SAFETY: `device` is valid, `inode` null or referenced (the type
        // invariant of `Inode`); the helper allocates `size_ib_xrcd` zeroed
        // bytes with GFP_KERNEL and sets ib_core's fields (`usecnt` starts at
        // 0 by the zeroing, as `atomic_set(.., 0)`).
        let xrcd = NonNull::new(unsafe { bindings::rverbs_xrcd_new(device.as_raw(), inode) })
            .ok_or(ENOMEM)?;
        let ptr = xrcd.as_ptr();
        // SAFETY: The XRCD is initialised as ib_core does before this call.
        if let Err(e) = to_result(unsafe { alloc(ptr, udata::as_raw_opt(udata)) }) {
            // SAFETY: The driver failed and keeps no pointer to it.
            unsafe { bindings::kfree(ptr.cast()) };
            return Err(e);
        }
        // INVARIANT: Allocated and set up above.
        Ok(XrcdHandle(xrcd))
    }

    /// The number of objects (QPs, SRQs) that use the domain. When there
    /// are none, warns (`WARN_ON`, as ib_core's `ib_dealloc_xrcd_user`) if
    /// XRC target QPs are still registered: each holds a use.
    pub(crate) fn users(&self) -> i32 {
        // SAFETY: By the type invariant the XRCD is valid.
        unsafe { bindings::rverbs_xrcd_users(self.0.as_ptr()) }
    }

    /// Has the driver release the domain, then frees it.
    ///
    /// On a driver error the handle stays as it was, owned by the caller.
    pub(crate) fn dealloc(self, udata: Option<&Udata>) -> Result {
        let ptr = self.0.as_ptr();
        // SAFETY: By the type invariant the XRCD and its device are valid.
        let dealloc =
            unsafe { (*(*ptr).device).ops.dealloc_xrcd }.ok_or_else(crate::errno::eopnotsupp)?;
        // SAFETY: The XRCD is live and owned; `udata` is valid.
        to_result(unsafe { dealloc(ptr, udata::as_raw_opt(udata)) })?;
        // SAFETY: The driver released its part; the memory is from kzalloc.
        unsafe { bindings::kfree(ptr.cast()) };
        Ok(())
    }
}
