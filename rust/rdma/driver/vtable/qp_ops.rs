// SPDX-License-Identifier: GPL-2.0

//! The operations of queue pairs.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    cq_ops::cq_data,
    dev,
    opt_udata,
    srq_ops::srq_data,
    Vtable, //
};
use crate::{
    bindings,
    rdma::{
        driver::{
            object::Object,
            ops::QpObjects,
            wr::{
                self,
                RecvWrs,
                SendWrs, //
            },
            Driver, //
        },
        mmap::Offers,
        qp::{
            QpCreate,
            QpHandlers,
            QpModify,
            QpQuery, //
        },
    },
};
use core::cell::Cell;
use kernel::{
    error::from_result,
    ffi::c_int,
    prelude::*,
    sync::Arc, //
};

/// What follows ib_core's `ib_qp` in a QP of the driver: the driver's
/// data, then the rings offered to the process, withdrawn when the QP goes
/// (after the data is dropped), and the handlers the driver's notifiers
/// call, which this layer revokes when the QP goes.
#[pin_data]
pub(in crate::rdma::driver) struct QpObject<D> {
    #[pin]
    data: D,
    offers: Offers,
    handlers: Arc<QpHandlers>,
}

/// The driver's data of a QP of its table.
///
/// # Safety
///
/// `qp` was set up by a successful `create_qp` of `T`'s table, and is not
/// destroyed during `'a`.
unsafe fn qp_data<'a, T: Driver>(qp: *mut bindings::ib_qp) -> &'a T::Qp {
    // SAFETY: The caller's promise: an `Object<ib_qp, QpObject<T::Qp>>`,
    // its data initialised for `'a`.
    unsafe { &Object::<_, QpObject<T::Qp>>::data(qp).data }
}

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.create_qp`.
    ///
    /// # Safety
    ///
    /// `qp` is a zeroed object of `size_ib_qp` bytes from ib_core with its
    /// own fields filled (`verbs.c:create_qp`: `device`, a `DriverDevice<T>`,
    /// PD, CQs, type, event handler), that stays in place until freed;
    /// `init` is valid and ours for the call; `udata` is null (a kernel
    /// caller) or the `driver_udata` of the verb's attribute bundle, with
    /// its ucontext, valid for the call.
    pub(super) unsafe extern "C" fn create_qp(
        qp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The QP being created, its handler set (the caller's
        // promise); revoked below if it is not made, after `destroy_qp`
        // otherwise.
        let handlers = match unsafe { QpHandlers::new(qp) } {
            Ok(handlers) => handlers,
            Err(e) => return e.to_errno(),
        };
        // What the driver offers; dropped here if the QP is not made.
        let offers = Cell::new(Offers::new());
        // SAFETY: The caller's promise; the offers go with the QP or at the
        // end of this call.
        let (dev, req) = unsafe {
            (
                dev::<T>((*qp).device),
                QpCreate::from_raw(qp, init, udata, &offers, &handlers),
            )
        };
        // SAFETY: ib_core set the PD, CQs and SRQ it holds for the QP (and
        // counts their uses), of this device, so of this table, live with
        // initialised data for the call (an SRQ only where the table has
        // `create_srq`, which made it).
        let objs = unsafe {
            QpObjects {
                pd: (*qp).pd.as_mut().map(|pd| Object::<_, T::Pd>::data(pd)),
                send_cq: (*qp).send_cq.as_mut().map(|cq| cq_data::<T>(cq)),
                recv_cq: (*qp).recv_cq.as_mut().map(|cq| cq_data::<T>(cq)),
                srq: (*qp).srq.as_mut().map(|srq| srq_data::<T>(srq)),
            }
        };
        let made_offers = &offers;
        // The fields in this order: the driver's data is made (and offers
        // its rings) before the offers are moved into the QP.
        let kept = handlers.clone();
        let init = try_pin_init!(QpObject::<T::Qp> {
            data <- T::create_qp(dev, &req, objs),
            offers: made_offers.take(),
            handlers: kept,
        }? Error);
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        let made = unsafe { Object::init(qp, init) };
        if made.is_err() {
            // A notifier the driver kept calls nothing: the QP is freed.
            handlers.revoke();
        }
        from_result(|| made.map(|()| 0))
    }

    /// `ib_device_ops.post_send`.
    ///
    /// # Safety
    ///
    /// `qp` was set up by a successful `create_qp` of this table and is not
    /// destroyed before this call returns (uverbs holds the object, a
    /// kernel consumer owns it); `wr` is null (the doorbell of soft-RoCE's
    /// provider) or a chain valid and unchanged for the call, of
    /// `ib_ud_wr`s on a UD or GSI QP whose AHs live for the call
    /// (`ib_post_send`'s contract); `bad_wr` is valid for writes.
    pub(super) unsafe extern "C" fn post_send(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: The QP is live with initialised data, on a
        // `DriverDevice<T>`, and the chain is as `SendWrs` needs (the
        // caller's promise).
        let (dev, data, wrs) = unsafe {
            (
                dev::<T>((*qp).device),
                qp_data::<T>(qp),
                SendWrs::<T>::from_raw(qp, wr),
            )
        };
        match T::post_send(dev, data, wrs) {
            Ok(()) => 0,
            Err(rejected) => {
                // SAFETY: Valid for writes (the caller's promise).
                unsafe { wr::report_send(wr, &rejected, bad_wr) };
                rejected.error.to_errno()
            }
        }
    }

    /// `ib_device_ops.post_recv`.
    ///
    /// # Safety
    ///
    /// As [`Self::post_send`], for a chain of `ib_recv_wr`.
    pub(super) unsafe extern "C" fn post_recv(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: The QP is live with initialised data, on a
        // `DriverDevice<T>`, and the chain is as `RecvWrs` needs (the
        // caller's promise).
        let (dev, data, wrs) = unsafe {
            (
                dev::<T>((*qp).device),
                qp_data::<T>(qp),
                RecvWrs::from_raw(wr),
            )
        };
        match T::post_recv(dev, data, wrs) {
            Ok(()) => 0,
            Err(rejected) => {
                // SAFETY: Valid for writes (the caller's promise).
                unsafe { wr::report_recv(wr, &rejected, bad_wr) };
                rejected.error.to_errno()
            }
        }
    }

    /// `ib_device_ops.modify_qp`.
    ///
    /// # Safety
    ///
    /// `qp` was set up by a successful `create_qp` of this table and is not
    /// destroyed before this call returns (uverbs holds the object); `attr`
    /// is valid for the call; `udata` is null or valid.
    pub(super) unsafe extern "C" fn modify_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The QP is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data, udata) =
            unsafe { (dev::<T>((*qp).device), qp_data::<T>(qp), opt_udata(udata)) };
        // CAST: A bit mask, passed as `int`.
        let mask = mask as u32;
        // SAFETY: The QP and the attributes are valid for the call.
        let req = unsafe { QpModify::from_raw(qp, attr, mask) };
        from_result(|| T::modify_qp(dev, data, &req, udata).map(|()| 0))
    }

    /// `ib_device_ops.query_qp`.
    ///
    /// # Safety
    ///
    /// `qp` was set up by a successful `create_qp` of this table and is not
    /// destroyed before this call returns; `attr` and `init` are valid for
    /// writes and ours for the call (`ib_query_qp`'s callers).
    pub(super) unsafe extern "C" fn query_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: Both are valid for writes and ours for the call. uverbs
        // allocates them without zeroing and copies them to userspace: a
        // driver that does not answer leaks nothing.
        unsafe {
            core::ptr::write_bytes(attr, 0, 1);
            core::ptr::write_bytes(init, 0, 1);
        }
        // SAFETY: The QP is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`; the answer's buffers are ours.
        let (dev, data, query) = unsafe {
            (
                dev::<T>((*qp).device),
                qp_data::<T>(qp),
                QpQuery::from_raw(qp, attr, init),
            )
        };
        from_result(|| T::query_qp(dev, data, query).map(|()| 0))
    }

    /// `ib_device_ops.destroy_qp`.
    ///
    /// # Safety
    ///
    /// `qp` was set up by a successful `create_qp` of this table; ib_core
    /// frees it without using it again when this returns 0, and also,
    /// whatever this returns, when it destroys a QP it has just created
    /// (`verbs.c:create_qp`, after `ib_create_qp_security` failed): so the
    /// driver's destroy cannot fail. `udata` is null or valid.
    pub(super) unsafe extern "C" fn destroy_qp(
        qp: *mut bindings::ib_qp,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The QP is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, obj, udata) = unsafe {
            (
                dev::<T>((*qp).device),
                Object::<_, QpObject<T::Qp>>::data(qp),
                opt_udata(udata),
            )
        };
        T::destroy_qp(dev, &obj.data, udata);
        // The driver's notifiers call nothing from now on.
        obj.handlers.revoke();
        // SAFETY: Destroyed: ib_core frees the object next.
        unsafe { Object::<_, QpObject<T::Qp>>::drop_data(qp) };
        0
    }
}
