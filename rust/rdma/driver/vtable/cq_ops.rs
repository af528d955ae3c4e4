// SPDX-License-Identifier: GPL-2.0

//! The operations of completion queues.
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
        cq::{
            CqCreate,
            CqHandlers,
            CqNotifyFlags,
            CqResize, //
        },
        driver::{
            object::Object,
            Driver, //
        },
        mmap::Offers,
    },
};
use core::cell::Cell;
use kernel::{
    error::from_result,
    ffi::{
        c_int,
        c_uint, //
    },
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
};

/// What follows ib_core's `ib_cq` in a CQ of the driver: the handlers the
/// driver's notifiers call, which this layer revokes when the CQ goes, the
/// rings offered to the process, withdrawn at the latest when the CQ goes,
/// then the driver's data.
#[pin_data]
pub(in crate::rdma::driver) struct CqObject<D> {
    handlers: Arc<CqHandlers>,
    #[pin]
    offers: Mutex<Offers>,
    #[pin]
    data: D,
}

/// The whole object of a CQ of `T`'s table.
///
/// # Safety
///
/// As [`cq_data`].
unsafe fn cq_object<'a, T: Driver>(cq: *mut bindings::ib_cq) -> &'a CqObject<T::Cq> {
    // SAFETY: The caller's promise: an `Object<ib_cq, CqObject<T::Cq>>`,
    // its data initialised for `'a`.
    unsafe { Object::<_, CqObject<T::Cq>>::data(cq) }
}

/// The driver's data of a CQ of its table.
///
/// # Safety
///
/// `cq` was set up by a successful `create_cq` of `T`'s table, and is not
/// destroyed during `'a`.
pub(super) unsafe fn cq_data<'a, T: Driver>(cq: *mut bindings::ib_cq) -> &'a T::Cq {
    // SAFETY: A CQ of `T`'s table, live during `'a` (the caller's
    // promise), as `cq_object` needs.
    unsafe { &cq_object::<T>(cq).data }
}

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.create_cq`.
    ///
    /// # Safety
    ///
    /// `cq` is a zeroed object of `size_ib_cq` bytes from ib_core, with
    /// `device` set to a `DriverDevice<T>` (and, for userspace, `uobject`,
    /// the handlers and their context), that stays in place until freed;
    /// `attr` is valid for the call; `attrs` is null (a kernel caller,
    /// `__ib_alloc_cq`, `ib_create_cq`) or the verb's attribute bundle with
    /// its ucontext, valid for the call.
    pub(super) unsafe extern "C" fn create_cq(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The CQ being created, its handlers set (the caller's
            // promise); revoked below if it is not made, by `destroy_cq`
            // otherwise.
            let handlers = unsafe { CqHandlers::new(cq) }?;
            // What the driver offers; dropped here if the CQ is not made.
            let offers = Cell::new(Offers::new());
            // SAFETY: The caller's promise; the offers go with the CQ or
            // at the end of this call.
            let (dev, req) = unsafe {
                (
                    dev::<T>((*cq).device),
                    CqCreate::from_raw(cq, attr, attrs, &handlers, &offers),
                )
            };
            let data = T::create_cq(dev, &req);
            let kept = handlers.clone();
            let made_offers = &offers;
            // The fields in this order: the driver's data is made (and
            // offers its rings) before the offers are moved into the CQ.
            let init = try_pin_init!(CqObject::<T::Cq> {
                handlers: kept,
                data <- data,
                offers <- new_mutex!(made_offers.take(), "CqObject::offers"),
            }? Error);
            // SAFETY: A fresh object of the driver's size, as `Object`
            // needs.
            let made = unsafe { Object::init(cq, init) };
            if made.is_err() {
                // A notifier the driver kept calls nothing: the CQ is
                // freed.
                handlers.revoke();
            }
            made.map(|()| 0)
        })
    }

    /// `ib_device_ops.destroy_cq`.
    ///
    /// # Safety
    ///
    /// `cq` was set up by a successful `create_cq` of this table; on
    /// success ib_core frees it without using it again. `udata` is null or
    /// valid.
    pub(super) unsafe extern "C" fn destroy_cq(
        cq: *mut bindings::ib_cq,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The CQ is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*cq).device),
                Object::<_, CqObject<T::Cq>>::data(cq),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::destroy_cq(dev, &data.data, udata)?;
            // The driver's notifiers call nothing from now on.
            data.handlers.revoke();
            // SAFETY: Destroyed: ib_core frees the object next.
            unsafe { Object::<_, CqObject<T::Cq>>::drop_data(cq) };
            Ok(0)
        })
    }

    /// `ib_device_ops.req_notify_cq`.
    ///
    /// # Safety
    ///
    /// `cq` was set up by a successful `create_cq` of this table and is not
    /// destroyed before this call returns (uverbs holds the object).
    pub(super) unsafe extern "C" fn req_notify_cq(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: The CQ is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe { (dev::<T>((*cq).device), cq_data::<T>(cq)) };
        from_result(|| {
            T::req_notify_cq(dev, data, CqNotifyFlags::from_bits(flags)).map(c_int::from)
        })
    }

    /// `ib_device_ops.resize_user_cq`.
    ///
    /// # Safety
    ///
    /// `cq` was set up by a successful `create_cq` of this table for
    /// userspace and is not destroyed before this call returns (uverbs
    /// holds the object, `ib_uverbs_resize_cq`); `udata` is the
    /// `driver_udata` of the verb's attribute bundle, with its ucontext,
    /// valid for the call.
    pub(super) unsafe extern "C" fn resize_user_cq(
        cq: *mut bindings::ib_cq,
        cqe: c_uint,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The CQ is live with initialised data, on a
        // `DriverDevice<T>`, and `udata` is the verb's (the caller's
        // promise); the offers are the CQ's.
        let (dev, obj) = unsafe { (dev::<T>((*cq).device), cq_object::<T>(cq)) };
        // SAFETY: As above.
        let req = unsafe { CqResize::from_raw(cq, cqe, udata, &obj.offers) };
        let ret = from_result(|| T::resize_user_cq(dev, &obj.data, &req).map(|()| 0));
        // Whether it worked or not, the rings the driver let go of (the old
        // one, or the new one) are no longer offered.
        obj.offers.lock().prune();
        ret
    }
}
