// SPDX-License-Identifier: GPL-2.0

//! Address handles (`struct ib_ah`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    ah_attr::AhAttr,
    pd::Pd,
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
    sync::aref::ARef,
    task::might_sleep, //
};

/// Where an address handle's reference to its source GID entry comes from
/// ([`AhHandle::create`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SgidRef {
    /// A reference of its own is taken (`rdma_update_sgid_attr`).
    Hold,
    /// The address's own reference moves to the handle when it is made.
    Take,
}

/// An address handle, owned by whoever created it (a uverbs object, a
/// kernel ULP) until it is passed to [`AhHandle::destroy`].
///
/// This type has no destructor: ib_core's caller owns the object. Dropping
/// a handle leaks the AH (its memory, a PD use and a GID entry reference),
/// so it is `#[must_use]`: hand it back with [`AhHandle::into_raw`] or end
/// it with [`AhHandle::destroy`].
///
/// # Invariants
///
/// The pointer is a valid `struct ib_ah`, allocated with the driver's
/// `size_ib_ah` by kzalloc, with valid `device` and `pd`, that holds one
/// `pd->usecnt` and, when `sgid_attr` is set, one reference to it.
#[must_use = "an AhHandle has no destructor: pass it on with `into_raw` or end it with `destroy`"]
pub(crate) struct AhHandle(NonNull<bindings::ib_ah>);

impl AhHandle {
    /// Takes ownership of an address handle created by ib_core or rverbs.
    ///
    /// # Safety
    ///
    /// `ptr` is a live address handle created by `rdma_create_ah`,
    /// `rdma_create_user_ah` or [`AhHandle::create`], and the caller hands
    /// over its ownership (as `rdma_destroy_ah_user`'s caller does).
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::ib_ah) -> Self {
        // SAFETY: The caller passes a live, hence non-null, AH.
        // INVARIANT: The caller's promise.
        Self(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// Gives up ownership, returning the raw pointer.
    pub(crate) fn into_raw(self) -> *mut bindings::ib_ah {
        self.0.as_ptr()
    }

    /// Allocates the driver's address handle object and has the driver
    /// create it (`_rdma_create_ah` of verbs.c, without a LAG slave).
    ///
    /// With `udata` this calls `ops.create_user_ah`, otherwise
    /// `ops.create_ah`; `EOPNOTSUPP` when the driver has no such op. The
    /// handle references the source GID entry when the address has a GRH,
    /// and counts one use of `pd`. On error nothing is left.
    ///
    /// The handle's GID entry reference is one more (`SgidRef::Hold`, as
    /// `rdma_update_sgid_attr`), or the one `attr` holds, moved to the
    /// handle when it is made (`SgidRef::Take`: `attr` is then left without
    /// a source GID entry, as `rdma_unfill_sgid_attr` would leave it, and
    /// no reference is taken or given back in between).
    pub(crate) fn create(
        pd: &Pd,
        attr: &mut AhAttr,
        sgid_ref: SgidRef,
        sleepable: bool,
        udata: Option<&Udata>,
    ) -> Result<AhHandle> {
        // `might_sleep_if(flags & RDMA_CREATE_AH_SLEEPABLE)`.
        if sleepable {
            might_sleep();
        }
        let device = pd.device();
        let ops = device.ops();
        let op = match udata {
            Some(_) => ops.create_user_ah,
            None => ops.create_ah,
        };
        let Some(op) = op else {
            return Err(crate::errno::eopnotsupp());
        };
        let gfp = if sleepable {
            bindings::GFP_KERNEL
        } else {
            bindings::GFP_ATOMIC
        };

        // SAFETY: `device` is valid; the helper allocates `size_ib_ah`
        // zeroed bytes.
        let ah = NonNull::new(unsafe { bindings::rverbs_zalloc_ah(device.as_raw(), gfp) })
            .ok_or(ENOMEM)?;
        let ah_ptr = ah.as_ptr();

        // The entry the handle will reference; with `Hold` its reference
        // is taken now, with `Take` the one of `attr` moves on success.
        let sgid_attr = if attr.has_grh() {
            attr.sgid_attr()
        } else {
            None
        };
        let sgid_raw = sgid_attr.map_or(core::ptr::null(), |a| a.as_raw().cast_const());
        let held = match (sgid_attr, sgid_ref) {
            (Some(a), SgidRef::Hold) => Some(ARef::from(a)),
            _ => None,
        };

        // SAFETY: `ah` is a fresh, zeroed, exclusively owned allocation of
        // at least `size_of::<ib_ah>()` bytes (drivers embed `ib_ah` first).
        unsafe {
            (*ah_ptr).device = device.as_raw();
            (*ah_ptr).pd = pd.as_raw();
            (*ah_ptr).type_ = attr.raw_type();
            (*ah_ptr).sgid_attr = sgid_raw;
        }

        let mut init_attr = bindings::rdma_ah_init_attr {
            ah_attr: attr.as_raw(),
            flags: if sleepable {
                bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE
            } else {
                0
            },
            xmit_slave: core::ptr::null_mut(),
        };
        // SAFETY: `ah` is initialised as ib_core initialises it before the
        // driver call; `init_attr` and `udata` are valid for the call.
        let ret = to_result(unsafe { op(ah_ptr, &mut init_attr, udata::as_raw_opt(udata)) });
        if let Err(e) = ret {
            // A reference taken above (`Hold`) is given back as `held`
            // goes; with `Take`, `attr` keeps its own.
            drop(held);
            // SAFETY: The driver failed, so it keeps no pointer to `ah`,
            // which was allocated by kzalloc above.
            unsafe { bindings::kfree(ah_ptr.cast()) };
            return Err(e);
        }
        // The handle's reference to the entry: the one taken above, or the
        // one of `attr`, which is left without an entry. (A driver does not
        // change the attribute's entry: ib_core's `rdma_unfill_sgid_attr`
        // gives back the one it set, too.)
        let owned = match sgid_ref {
            SgidRef::Hold => held,
            SgidRef::Take if !sgid_raw.is_null() => attr.take_sgid_attr(),
            SgidRef::Take => None,
        };
        // The reference count moves into `ah->sgid_attr` (set above).
        if let Some(owned) = owned {
            let _ = ARef::into_raw(owned);
        }

        pd.get_use();
        // INVARIANT: Created by the driver, with one PD use and the GID
        // entry reference counted.
        Ok(AhHandle(ah))
    }

    /// Has the driver destroy the address handle, then frees it
    /// (`rdma_destroy_ah_user`).
    ///
    /// If the driver fails, its error is returned and the handle stays as
    /// it was (ib_core's caller still owns it).
    /// `_udata` is not handed to the driver: `ops.destroy_ah` has none.
    pub(crate) fn destroy(self, flags: u32, _udata: Option<&Udata>) -> Result {
        // `might_sleep_if(flags & RDMA_DESTROY_AH_SLEEPABLE)`.
        if flags & bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE != 0 {
            might_sleep();
        }
        let ah = self.0.as_ptr();
        // SAFETY: By the type invariant the AH and its device and PD are
        // valid.
        let (device, pd, sgid_attr) = unsafe { ((*ah).device, (*ah).pd, (*ah).sgid_attr) };
        // SAFETY: The device is valid.
        let Some(destroy) = (unsafe { (*device).ops.destroy_ah }) else {
            return Err(crate::errno::eopnotsupp());
        };
        // SAFETY: The AH is live and owned by us; `udata` is valid.
        to_result(unsafe { destroy(ah, flags) })?;
        // SAFETY: The PD outlives its AHs (it is busy while `usecnt` > 0).
        unsafe { Pd::from_raw(pd) }.put_use();
        if !sgid_attr.is_null() {
            // SAFETY: The AH owned that reference.
            unsafe { bindings::rdma_put_gid_attr(sgid_attr) };
        }
        // SAFETY: The driver destroyed its part; the memory came from
        // kzalloc (by ib_core or `create`).
        unsafe { bindings::kfree(ah.cast()) };
        Ok(())
    }
}
