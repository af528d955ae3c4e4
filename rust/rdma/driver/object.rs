// SPDX-License-Identifier: GPL-2.0

//! The storage of driver objects: ib_core's struct, then the driver's data.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use core::mem::MaybeUninit;
use kernel::{
    alloc::flags::__GFP_ZERO,
    prelude::*, //
};

/// An object ib_core allocates with the driver's size (`size_ib_*`):
/// ib_core's struct `C` first (drivers embed it at offset 0, as
/// `INIT_RDMA_OBJ_SIZE` checks in C), then the driver's data `D`.
///
/// ib_core allocates the object zeroed, calls the driver's constructor,
/// and frees it after the destructor; it never moves it. `data` is
/// initialised in place (so it may hold locks) when the constructor
/// succeeds, and dropped after the destructor succeeds.
#[repr(C)]
pub(crate) struct Object<C, D> {
    core: C,
    data: D,
}

impl<C, D> Object<C, D> {
    /// Initialises the data of a fresh object in place.
    ///
    /// # Safety
    ///
    /// - `core` is ib_core's struct at the start of an allocation of at
    ///   least `size_of::<Self>()` bytes that stays where it is until freed,
    /// - whose data is not initialised.
    pub(super) unsafe fn init(core: *mut C, init: impl PinInit<D, Error>) -> Result {
        // SAFETY: `core` is at offset 0 of the `repr(C)` object, so the
        // projection stays inside the allocation; the slot is valid for
        // writes and never moves (the caller's promise). On error the
        // initialiser leaves the slot uninitialised, as it was.
        unsafe { init.__pinned_init(&raw mut (*core.cast::<Self>()).data) }
    }

    /// The data of an object whose constructor succeeded.
    ///
    /// # Safety
    ///
    /// `core` is the ib_core struct of an `Object<C, D>` whose data is
    /// initialised and stays so for the lifetime `'a`.
    pub(super) unsafe fn data<'a>(core: *mut C) -> &'a D {
        // SAFETY: `core` is at offset 0 of the `repr(C)` object; the rest
        // is the caller's promise.
        unsafe { &(*core.cast::<Self>()).data }
    }

    /// Drops the data of an object.
    ///
    /// # Safety
    ///
    /// `core` is the ib_core struct of an `Object<C, D>` whose data is
    /// initialised and not used afterwards.
    pub(super) unsafe fn drop_data(core: *mut C) {
        // SAFETY: `core` is at offset 0 of the `repr(C)` object, so the
        // projection is its `data`, initialised and used by nobody after
        // this (the caller's promise): dropped once, in place.
        unsafe { core::ptr::drop_in_place(&raw mut (*core.cast::<Self>()).data) };
    }

    /// Allocates a zeroed object, with its data not initialised: for the
    /// objects ib_core leaves to the driver to allocate (memory regions).
    /// The object does not move until [`Object::free`].
    pub(super) fn alloc_zeroed() -> Result<*mut C> {
        let obj = KBox::<Self>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
        Ok(KBox::into_raw(obj).cast())
    }

    /// Frees an object from [`Object::alloc_zeroed`].
    ///
    /// # Safety
    ///
    /// `core` comes from [`Object::alloc_zeroed`] of this type, is not
    /// freed yet, and is not used afterwards; its data is not initialised
    /// (never, or dropped).
    pub(super) unsafe fn free(core: *mut C) {
        // SAFETY: The caller's promise: the allocation of a
        // `KBox<MaybeUninit<Self>>`, which drops nothing of the data.
        drop(unsafe { KBox::from_raw(core.cast::<MaybeUninit<Self>>()) });
    }
}
