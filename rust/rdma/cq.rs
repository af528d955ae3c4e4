// SPDX-License-Identifier: GPL-2.0

//! Completion queues, as their driver sees them (`struct ib_cq`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    ring::{
        QueueGeometry,
        UserQueue, //
    },
    udata::Udata,
};
use crate::bindings;
use kernel::prelude::*;

/// What `create_cq` is asked for, and what it answers besides the
/// driver's data: the real depth ([`CqCreate::set_depth`], which ib_core
/// returns to userspace) and the queue it offers to the process
/// ([`CqCreate::user_queue`]).
///
/// # Invariants
///
/// `cq` is the fresh `ib_cq` being created, `attr` its attributes, and
/// `attrs` null (a kernel caller) or the verb's attribute bundle, with its
/// ucontext; all valid while this value lives.
pub(crate) struct CqCreate<'a> {
    cq: *mut bindings::ib_cq,
    attr: &'a bindings::ib_cq_init_attr,
    attrs: *mut bindings::uverbs_attr_bundle,
}

impl<'a> CqCreate<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            cq,
            // SAFETY: Valid for `'a` (the caller's promise).
            attr: unsafe { &*attr },
            attrs,
        }
    }

    /// Entries asked for (`cqe`), at least 1 for userspace (ib_core
    /// refuses 0, `uverbs_std_types_cq.c`).
    pub(crate) fn cqe(&self) -> u32 {
        self.attr.cqe
    }

    /// `IB_UVERBS_CQ_FLAGS_*` asked for.
    pub(crate) fn flags(&self) -> u32 {
        self.attr.flags
    }

    /// The driver's user data, `None` for a kernel caller.
    pub(crate) fn udata(&self) -> Option<&Udata> {
        if self.attrs.is_null() {
            return None;
        }
        // SAFETY: A live bundle (type invariant); `driver_udata` is valid
        // while it is.
        Some(unsafe { Udata::from_raw(&raw mut (*self.attrs).__bindgen_anon_1.hdr.driver_udata) })
    }

    /// Sets the depth ib_core reports (`ib_cq.cqe`).
    pub(crate) fn set_depth(&self, depth: u32) -> Result {
        let depth = i32::try_from(depth).map_err(|_| EINVAL)?;
        // SAFETY: The CQ being created is ours during `create_cq` (type
        // invariant); ib_core reads `cqe` only after it returns.
        unsafe { (*self.cq).cqe = depth };
        Ok(())
    }

    /// A queue of geometry `geo` that the process can map; `EINVAL` for a
    /// kernel caller, which has no process.
    pub(crate) fn user_queue(&self, geo: QueueGeometry) -> Result<UserQueue> {
        if self.attrs.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: A live bundle (type invariant).
        let uctx = unsafe { (*self.attrs).__bindgen_anon_1.hdr.context };
        if uctx.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_cq`), and it outlives the CQ, whose data holds the queue
        // (ib_core destroys every object of a context before the context).
        unsafe { UserQueue::new(uctx, geo) }
    }
}
