// SPDX-License-Identifier: GPL-2.0

//! The operations of memory regions and memory windows.
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
        driver::{
            object::Object,
            Driver, //
        },
        mr::{
            AccessFlags,
            MrReg,
            MrRereg,
            Rereg,
            ReregFlags, //
        },
        mw::MwAlloc,
        pd::Pd,
    },
};
use kernel::{
    error::from_result,
    ffi::c_int,
    prelude::*, //
};

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.reg_user_mr`.
    ///
    /// # Safety
    ///
    /// `pd` was set up by a successful `alloc_pd` of this table and is held
    /// for the call (uverbs holds the object for reading); `dmah` is null
    /// or a DMA handle valid for the call. The driver data of the verb
    /// (`udata`) is not passed on: no driver of this layer reads any.
    pub(super) unsafe extern "C" fn reg_user_mr(
        pd: *mut bindings::ib_pd,
        start: u64,
        length: u64,
        iova: u64,
        access: c_int,
        dmah: *mut bindings::ib_dmah,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        // SAFETY: The PD is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, pd_data, pd) = unsafe {
            (
                dev::<T>((*pd).device),
                Object::<_, T::Pd>::data(pd),
                Pd::from_raw(pd),
            )
        };
        let reg = || -> Result<*mut bindings::ib_mr> {
            let mr = Object::<bindings::ib_mr, T::Mr>::alloc_zeroed()?;
            // CAST: A bit mask, passed as `int`.
            let access = access as u32;
            // SAFETY: A fresh zeroed `ib_mr` nobody else sees until we
            // return it; the PD is valid for the call.
            let req =
                unsafe { MrReg::from_raw(mr, pd, start, length, iova, access, !dmah.is_null()) };
            // SAFETY: From `alloc_zeroed`: in place until freed, data not
            // initialised.
            match unsafe { Object::init(mr, T::reg_user_mr(dev, pd_data, &req)) } {
                Ok(()) => Ok(mr),
                Err(e) => {
                    // SAFETY: Never initialised, never returned.
                    unsafe { Object::<bindings::ib_mr, T::Mr>::free(mr) };
                    Err(e)
                }
            }
        };
        reg().unwrap_or_else(|e| e.to_ptr())
    }

    /// `ib_device_ops.rereg_user_mr`, in place only: it returns null (the
    /// same region, changed) or an error, never a new region.
    ///
    /// # Safety
    ///
    /// `mr` was set up by a successful `reg_user_mr` of this table and is
    /// held for writing (uverbs); `pd` is the data's PD when `flags` has
    /// `IB_MR_REREG_PD`, also from this table and held for the call;
    /// `udata` is null or valid.
    pub(super) unsafe extern "C" fn rereg_user_mr(
        mr: *mut bindings::ib_mr,
        flags: c_int,
        _start: u64,
        _length: u64,
        _iova: u64,
        access: c_int,
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        // CAST: Bit masks, passed as `int`.
        let (flags, access) = (
            ReregFlags::from_bits(flags as u32),
            AccessFlags::from_bits(access as u32),
        );
        // SAFETY: The region is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`; so is the new PD when asked for.
        let (dev, data, new_pd, udata) = unsafe {
            (
                dev::<T>((*mr).device),
                Object::<_, T::Mr>::data(mr),
                flags
                    .contains(Rereg::Pd)
                    .then(|| Object::<_, T::Pd>::data(pd)),
                opt_udata(udata),
            )
        };
        let req = MrRereg::new(flags, access, new_pd);
        match T::rereg_user_mr(dev, data, &req, udata) {
            Ok(()) => core::ptr::null_mut(),
            Err(e) => e.to_ptr(),
        }
    }

    /// `ib_device_ops.dereg_mr`.
    ///
    /// # Safety
    ///
    /// `mr` was set up by a successful `reg_user_mr` of this table; ib_core
    /// does not use it again once this returns 0 (`ib_dereg_mr_user`), and
    /// keeps it otherwise. `udata` is null or valid.
    pub(super) unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The region is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*mr).device),
                Object::<_, T::Mr>::data(mr),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::dereg_mr(dev, data, udata)?;
            // SAFETY: Deregistered: nobody uses the region again, and the
            // driver has let go of its data (`Driver::dereg_mr`). Dropped,
            // then freed, once each.
            unsafe {
                Object::<_, T::Mr>::drop_data(mr);
                Object::<bindings::ib_mr, T::Mr>::free(mr);
            }
            Ok(0)
        })
    }

    /// `ib_device_ops.alloc_mw`.
    ///
    /// # Safety
    ///
    /// `mw` is a zeroed object of `size_ib_mw` bytes from ib_core with its
    /// own fields set (`uverbs_cmd.c:ib_uverbs_alloc_mw`: `device`, a
    /// `DriverDevice<T>`, the PD it holds for the call, the type), that
    /// stays in place until freed. The driver data of the verb (`udata`)
    /// is not passed on: no driver of this layer reads any.
    pub(super) unsafe extern "C" fn alloc_mw(
        mw: *mut bindings::ib_mw,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: ib_core's fresh window (the caller's promise), ours
            // until we return.
            let req = unsafe { MwAlloc::from_raw(mw) }.ok_or(EINVAL)?;
            // SAFETY: The window's device is a `DriverDevice<T>`, its PD
            // live with initialised data for the call (the caller's
            // promise).
            let (dev, pd) = unsafe { (dev::<T>((*mw).device), Object::<_, T::Pd>::data((*mw).pd)) };
            // SAFETY: A fresh object of the driver's size, as `Object`
            // needs.
            unsafe { Object::init(mw, T::alloc_mw(dev, pd, &req)) }.map(|()| 0)
        })
    }

    /// `ib_device_ops.dealloc_mw`.
    ///
    /// # Safety
    ///
    /// `mw` was set up by a successful `alloc_mw` of this table; ib_core
    /// frees it without using it again once this returns 0
    /// (`uverbs_main.c:uverbs_dealloc_mw`), and keeps it otherwise.
    pub(super) unsafe extern "C" fn dealloc_mw(mw: *mut bindings::ib_mw) -> c_int {
        // SAFETY: The window is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe { (dev::<T>((*mw).device), Object::<_, T::Mw>::data(mw)) };
        from_result(|| {
            T::dealloc_mw(dev, data)?;
            // SAFETY: Released: ib_core frees the object next.
            unsafe { Object::<_, T::Mw>::drop_data(mw) };
            Ok(0)
        })
    }
}
