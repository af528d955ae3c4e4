// SPDX-License-Identifier: GPL-2.0

//! Constructors and destructors of the objects ib_core allocates for the
//! driver (ucontext, PD, AH, XRCD), and the AH's other operations.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    dev,
    opt_udata,
    Vtable, //
};
use crate::{
    bindings,
    rdma::{
        ah_attr::AhAttr,
        driver::{
            object::Object,
            Driver, //
        },
        udata::Udata,
    },
};
use kernel::{
    error::from_result,
    ffi::c_int, //
};

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.alloc_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` is a zeroed object of `size_ib_ucontext` bytes from ib_core,
    /// with `device` set to a `DriverDevice<T>`, that stays in place until
    /// freed; `udata` is valid for the call.
    pub(super) unsafe extern "C" fn alloc_ucontext(
        uctx: *mut bindings::ib_ucontext,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `uctx` is ib_core's fresh context, its `device` a
        // `DriverDevice<T>`, and `udata` is valid for the call (the
        // caller's promise): what `dev` and `Udata::from_raw` need.
        let (dev, udata) = unsafe { (dev::<T>((*uctx).device), Udata::from_raw(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(uctx, T::alloc_ucontext(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` was set up by a successful `alloc_ucontext` of this table and
    /// is released: it is not used after this call.
    pub(super) unsafe extern "C" fn dealloc_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe {
            (
                dev::<T>((*uctx).device),
                Object::<_, T::Ucontext>::data(uctx),
            )
        };
        T::dealloc_ucontext(dev, data);
        // SAFETY: Released: nobody uses the data any more.
        unsafe { Object::<_, T::Ucontext>::drop_data(uctx) };
    }

    /// `ib_device_ops.disassociate_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` was set up by a successful `alloc_ucontext` of this table and
    /// is not released before this call returns.
    pub(super) unsafe extern "C" fn disassociate_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe {
            (
                dev::<T>((*uctx).device),
                Object::<_, T::Ucontext>::data(uctx),
            )
        };
        T::disassociate_ucontext(dev, data);
    }

    /// `ib_device_ops.alloc_pd`.
    ///
    /// # Safety
    ///
    /// `pd` is a zeroed object of `size_ib_pd` bytes from ib_core, with
    /// `device` set to a `DriverDevice<T>`, that stays in place until
    /// freed; `udata` is null or valid for the call.
    pub(super) unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `pd` is ib_core's fresh PD, its `device` a
        // `DriverDevice<T>`, and `udata` null or valid for the call (the
        // caller's promise): what `dev` and `opt_udata` need.
        let (dev, udata) = unsafe { (dev::<T>((*pd).device), opt_udata(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(pd, T::alloc_pd(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_pd`.
    ///
    /// # Safety
    ///
    /// `pd` was set up by a successful `alloc_pd` of this table; on success
    /// ib_core frees it without using it again. `udata` is null or valid.
    pub(super) unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The PD is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*pd).device),
                Object::<_, T::Pd>::data(pd),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::dealloc_pd(dev, data, udata)?;
            // SAFETY: Released: ib_core frees the object next.
            unsafe { Object::<_, T::Pd>::drop_data(pd) };
            Ok(0)
        })
    }

    /// `ib_device_ops.create_ah` and `create_user_ah`.
    ///
    /// # Safety
    ///
    /// `ah` is a zeroed object of `size_ib_ah` bytes with `device` (a
    /// `DriverDevice<T>`), `pd`, `type` and `sgid_attr` set, that stays in
    /// place until freed; `init_attr` and its attribute are valid and the
    /// caller's for the call, the attribute's `sgid_attr` null or
    /// referenced; `udata` is null or valid.
    pub(super) unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init_attr: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `ah` is ib_core's fresh AH on a `DriverDevice<T>`,
        // `init_attr` and its attribute are valid and ours for the call,
        // `udata` null or valid (the caller's promise): what `dev`,
        // `AhAttr::from_raw` and `opt_udata` need.
        let (dev, attr, flags, udata) = unsafe {
            (
                dev::<T>((*ah).device),
                AhAttr::from_raw((*init_attr).ah_attr),
                (*init_attr).flags,
                opt_udata(udata),
            )
        };
        let sleepable = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
        // SAFETY: ib_core (and rverbs' own core) set the AH's PD, of this
        // device, held for the AH (`pd->usecnt`), before calling.
        let pd = unsafe { Object::<_, T::Pd>::data((*ah).pd) };
        let init = T::create_ah(dev, pd, attr, sleepable, udata);
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(ah, init) }.map(|()| 0))
    }

    /// `ib_device_ops.query_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table and is not
    /// destroyed during the call; `attr` is valid for writes and the
    /// caller's for the call (its contents are not initialised:
    /// `rdma_query_ah` callers pass stack structs, only `sgid_attr` set).
    pub(super) unsafe extern "C" fn query_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: `attr` is valid for writes; all-zero is a valid attribute
        // (no GID entry), as soft-RoCE's `rxe_query_ah` starts from too.
        unsafe { attr.write_bytes(0, 1) };
        // SAFETY: The AH is live with initialised data, on a
        // `DriverDevice<T>`; `attr` is now a valid attribute without a GID
        // entry, ours for the call.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| T::query_ah(dev, data, attr).map(|()| 0))
    }

    /// `ib_device_ops.modify_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table and is not
    /// destroyed during the call; `attr` is a valid attribute, the
    /// caller's for the call.
    pub(super) unsafe extern "C" fn modify_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: `ah` is a live AH of this table, its data initialised,
        // on a `DriverDevice<T>`, and `attr` valid and ours for the call
        // (the caller's promise): what `dev`, `Object::data` and
        // `AhAttr::from_raw` need.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| T::modify_ah(dev, data, attr).map(|()| 0))
    }

    /// `ib_device_ops.destroy_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table; on
    /// success ib_core frees it without using it again.
    pub(super) unsafe extern "C" fn destroy_ah(ah: *mut bindings::ib_ah, flags: u32) -> c_int {
        // SAFETY: The AH is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
        let (dev, data) = unsafe { (dev::<T>((*ah).device), Object::<_, T::Ah>::data(ah)) };
        from_result(|| {
            T::destroy_ah(dev, data, flags)?;
            // SAFETY: Destroyed: ib_core frees the object next.
            unsafe { Object::<_, T::Ah>::drop_data(ah) };
            Ok(0)
        })
    }

    /// `ib_device_ops.alloc_xrcd`.
    ///
    /// # Safety
    ///
    /// `xrcd` is a zeroed object of `size_ib_xrcd` bytes with `device` set
    /// to a `DriverDevice<T>`, that stays in place until freed; `udata` is
    /// null or valid for the call.
    pub(super) unsafe extern "C" fn alloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `xrcd` is ib_core's fresh XRCD, its `device` a
        // `DriverDevice<T>`, and `udata` null or valid for the call (the
        // caller's promise): what `dev` and `opt_udata` need.
        let (dev, udata) = unsafe { (dev::<T>((*xrcd).device), opt_udata(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(xrcd, T::alloc_xrcd(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_xrcd`.
    ///
    /// # Safety
    ///
    /// `xrcd` was set up by a successful `alloc_xrcd` of this table; on
    /// success ib_core frees it without using it again. `udata` is null or
    /// valid.
    pub(super) unsafe extern "C" fn dealloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The XRCD is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*xrcd).device),
                Object::<_, T::Xrcd>::data(xrcd),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::dealloc_xrcd(dev, data, udata)?;
            // SAFETY: Released: ib_core frees the object next.
            unsafe { Object::<_, T::Xrcd>::drop_data(xrcd) };
            Ok(0)
        })
    }
}
