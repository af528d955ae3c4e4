// SPDX-License-Identifier: GPL-2.0

//! The operations of shared receive queues.
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
        mmap::Offers,
        srq::{
            SrqCreate,
            SrqHandlers,
            SrqModify,
            SrqNotifier, //
        },
    },
};
use core::cell::Cell;
use kernel::{
    error::from_result,
    ffi::c_int,
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
};

/// What follows ib_core's `ib_srq` in an SRQ of the driver: the handlers
/// the driver's notifier calls, which this layer revokes when the SRQ
/// goes, the rings offered to the process, withdrawn at the latest when
/// the SRQ goes, then the driver's data.
#[pin_data]
pub(in crate::rdma::driver) struct SrqObject<D> {
    handlers: Arc<SrqHandlers>,
    #[pin]
    offers: Mutex<Offers>,
    #[pin]
    data: D,
}

/// The whole object of an SRQ of `T`'s table.
///
/// # Safety
///
/// As [`srq_data`].
unsafe fn srq_object<'a, T: Driver>(srq: *mut bindings::ib_srq) -> &'a SrqObject<T::Srq> {
    // SAFETY: The caller's promise: an `Object<ib_srq, SrqObject<T::Srq>>`,
    // its data initialised for `'a`.
    unsafe { Object::<_, SrqObject<T::Srq>>::data(srq) }
}

/// The driver's data of an SRQ of its table.
///
/// # Safety
///
/// `srq` was set up by a successful `create_srq` of `T`'s table, and is not
/// destroyed during `'a`.
pub(super) unsafe fn srq_data<'a, T: Driver>(srq: *mut bindings::ib_srq) -> &'a T::Srq {
    // SAFETY: An SRQ of `T`'s table, live during `'a` (the caller's
    // promise), as `srq_object` needs.
    unsafe { &srq_object::<T>(srq).data }
}

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.create_srq`.
    ///
    /// # Safety
    ///
    /// `srq` is a zeroed object of `size_ib_srq` bytes from ib_core with its
    /// own fields filled (`verbs.c:ib_create_srq_user`: `device`, a
    /// `DriverDevice<T>`, the PD it holds for the SRQ, the type, the event
    /// handler), that stays in place until freed; `init` is valid and ours
    /// for the call; `udata` is null (a kernel caller) or the
    /// `driver_udata` of the verb's attribute bundle, with its ucontext,
    /// valid for the call.
    pub(super) unsafe extern "C" fn create_srq(
        srq: *mut bindings::ib_srq,
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The SRQ being created, its handler set (the caller's
            // promise); revoked below if it is not made, by `destroy_srq`
            // otherwise.
            let handlers = unsafe { SrqHandlers::new(srq) }?;
            // What the driver offers; dropped here if the SRQ is not made.
            let offers = Cell::new(Offers::new());
            // SAFETY: The caller's promise; the offers go with the SRQ or at
            // the end of this call. ib_core set the PD, of this device, live
            // with initialised data for the call.
            let (dev, req, pd) = unsafe {
                (
                    dev::<T>((*srq).device),
                    SrqCreate::from_raw(init, udata, &offers),
                    Object::<_, T::Pd>::data((*srq).pd),
                )
            };
            let data = T::create_srq(dev, &req, pd, SrqNotifier::new(&handlers));
            let kept = handlers.clone();
            let made_offers = &offers;
            // The fields in this order: the driver's data is made (and
            // offers its ring) before the offers are moved into the SRQ.
            let init = try_pin_init!(SrqObject::<T::Srq> {
                handlers: kept,
                data <- data,
                offers <- new_mutex!(made_offers.take(), "SrqObject::offers"),
            }? Error);
            // SAFETY: A fresh object of the driver's size, as `Object`
            // needs.
            let made = unsafe { Object::init(srq, init) };
            if made.is_err() {
                // A notifier the driver kept calls nothing: the SRQ is
                // freed.
                handlers.revoke();
            }
            made.map(|()| 0)
        })
    }

    /// `ib_device_ops.modify_srq`.
    ///
    /// # Safety
    ///
    /// `srq` was set up by a successful `create_srq` of this table and is
    /// not destroyed before this call returns (uverbs holds the object, a
    /// kernel consumer owns it); `attr` is valid for the call; `udata` is
    /// null or the `driver_udata` of the verb's attribute bundle, with its
    /// ucontext, valid for the call.
    pub(super) unsafe extern "C" fn modify_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
        mask: bindings::ib_srq_attr_mask,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The SRQ is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
        let (dev, obj) = unsafe { (dev::<T>((*srq).device), srq_object::<T>(srq)) };
        // SAFETY: As above; the offers are the SRQ's.
        let req = unsafe { SrqModify::from_raw(attr, mask, udata, &obj.offers) };
        let ret = from_result(|| T::modify_srq(dev, &obj.data, &req).map(|()| 0));
        // Whatever the outcome, a ring no longer offered goes now: the
        // process maps the new one during or after the verb.
        obj.offers.lock().prune();
        ret
    }

    /// `ib_device_ops.query_srq`.
    ///
    /// # Safety
    ///
    /// `srq` was set up by a successful `create_srq` of this table and is
    /// not destroyed before this call returns; `attr` is valid for writes.
    pub(super) unsafe extern "C" fn query_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
    ) -> c_int {
        // SAFETY: The SRQ is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
        let (dev, data) = unsafe { (dev::<T>((*srq).device), srq_data::<T>(srq)) };
        from_result(|| {
            let a = T::query_srq(dev, data)?;
            // SAFETY: Valid for writes (the caller's promise).
            unsafe {
                (*attr).max_wr = a.max_wr;
                (*attr).max_sge = a.max_sge;
                (*attr).srq_limit = a.srq_limit;
            }
            Ok(0)
        })
    }

    /// `ib_device_ops.destroy_srq`.
    ///
    /// # Safety
    ///
    /// `srq` was set up by a successful `create_srq` of this table, and no
    /// QP uses it (ib_core checks `usecnt`); on success ib_core frees it
    /// without using it again. `udata` is null or valid.
    pub(super) unsafe extern "C" fn destroy_srq(
        srq: *mut bindings::ib_srq,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The SRQ is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, obj, udata) = unsafe {
            (
                dev::<T>((*srq).device),
                srq_object::<T>(srq),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::destroy_srq(dev, &obj.data, udata)?;
            // The driver's notifier calls nothing from now on.
            obj.handlers.revoke();
            // SAFETY: Destroyed: ib_core frees the object next.
            unsafe { Object::<_, SrqObject<T::Srq>>::drop_data(srq) };
            Ok(0)
        })
    }
}
