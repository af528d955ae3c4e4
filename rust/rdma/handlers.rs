// SPDX-License-Identifier: GPL-2.0

//! The handlers ib_core installs on a CQ, an SRQ or a QP (its completion
//! handler, its event handler and their context), which the driver calls
//! from its data path, in a cell this layer revokes when the object goes.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! ib_core sets an object's handlers before the driver's constructor and
//! never changes them, and frees the object after its destructor. A
//! driver's data path may run on after that (a work item, a packet in a
//! softirq): it keeps a notifier ([`crate::rdma::cq::CqNotifier`],
//! [`crate::rdma::srq::SrqNotifier`], [`crate::rdma::qp::QpNotifier`]),
//! which holds the object's [`Handlers`]. They call the object's handlers
//! while it lives and nothing from its destruction on: the generic layer
//! revokes them ([`Handlers::revoke`]) when the driver's constructor fails
//! or after its destructor, before ib_core frees the object, and they call
//! under their lock, so that no call is still running once revoked.

use crate::{
    bindings,
    sync::{
        new_spinlock_bh,
        SpinLockBh, //
    },
};
use core::{
    ffi::c_void,
    ptr::NonNull, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// An ib_core object with an event handler: where it is in an event
/// (`struct ib_event`'s `element`), its device, handler and context.
///
/// # Safety
///
/// The methods read an object that is valid for the call, and name its
/// own fields.
pub(crate) unsafe trait EventSource {
    /// The object's device, event handler and the handler's context.
    ///
    /// # Safety
    ///
    /// `obj` is valid for the call.
    unsafe fn handler(obj: *mut Self) -> (*mut bindings::ib_device, EventHandler, *mut c_void);

    /// Makes `obj` the element of `ev`, in the union member of its type.
    ///
    /// # Safety
    ///
    /// `obj` is valid for the call.
    unsafe fn set_element(ev: &mut bindings::ib_event, obj: *mut Self);
}

/// An object's event handler, as ib_core stores it.
pub(crate) type EventHandler = Option<unsafe extern "C" fn(*mut bindings::ib_event, *mut c_void)>;

// SAFETY: The fields of `struct ib_cq`, read as the header says.
unsafe impl EventSource for bindings::ib_cq {
    unsafe fn handler(cq: *mut Self) -> (*mut bindings::ib_device, EventHandler, *mut c_void) {
        // SAFETY: Valid for the call (the caller's promise).
        unsafe { ((*cq).device, (*cq).event_handler, (*cq).cq_context) }
    }

    unsafe fn set_element(ev: &mut bindings::ib_event, cq: *mut Self) {
        // SAFETY: Writes the union's member of a CQ event.
        unsafe { *ev.element.cq.as_mut() = cq };
    }
}

// SAFETY: The fields of `struct ib_srq`, read as the header says.
unsafe impl EventSource for bindings::ib_srq {
    unsafe fn handler(srq: *mut Self) -> (*mut bindings::ib_device, EventHandler, *mut c_void) {
        // SAFETY: Valid for the call (the caller's promise).
        unsafe { ((*srq).device, (*srq).event_handler, (*srq).srq_context) }
    }

    unsafe fn set_element(ev: &mut bindings::ib_event, srq: *mut Self) {
        // SAFETY: Writes the union's member of an SRQ event.
        unsafe { *ev.element.srq.as_mut() = srq };
    }
}

// SAFETY: The fields of `struct ib_qp`, read as the header says.
unsafe impl EventSource for bindings::ib_qp {
    unsafe fn handler(qp: *mut Self) -> (*mut bindings::ib_device, EventHandler, *mut c_void) {
        // SAFETY: Valid for the call (the caller's promise).
        unsafe { ((*qp).device, (*qp).event_handler, (*qp).qp_context) }
    }

    unsafe fn set_element(ev: &mut bindings::ib_event, qp: *mut Self) {
        // SAFETY: Writes the union's member of a QP event.
        unsafe { *ev.element.qp.as_mut() = qp };
    }
}

/// The object whose handlers a driver's notifier calls, while it lives.
///
/// # Invariants
///
/// `obj` is `Some` only while its object lives: set by the generic layer
/// when it creates the object, and taken out by it ([`Handlers::revoke`])
/// when the driver's constructor failed or after its destructor, before
/// ib_core frees the object. Its handlers are called under the lock, so
/// that once it is revoked no call is still running.
#[pin_data]
pub(crate) struct Handlers<O: EventSource> {
    #[pin]
    obj: SpinLockBh<Option<Raw<O>>>,
}

/// An object's pointer, sent between tasks under [`Handlers`]' lock.
struct Raw<O>(NonNull<O>);

impl<O> Clone for Raw<O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for Raw<O> {}

// SAFETY: Only dereferenced under `Handlers`' lock, while the object lives
// (its type invariant); the handlers may be called from any task that may
// sleep or not (uverbs' handlers lock with irqsave and allocate
// atomically).
unsafe impl<O> Send for Raw<O> {}

impl<O: EventSource> Handlers<O> {
    /// The handlers of `obj`, being created. One lock class for every
    /// object type: no two are ever held together.
    ///
    /// # Safety
    ///
    /// `obj` is ib_core's object being created, its handlers set; the
    /// caller revokes the result before ib_core frees it.
    pub(crate) unsafe fn new(obj: *mut O) -> Result<Arc<Self>> {
        let obj = NonNull::new(obj).ok_or(EINVAL)?;
        // INVARIANT: The caller revokes it before the object is freed.
        Arc::pin_init(
            pin_init!(Self {
                obj <- new_spinlock_bh!(Some(Raw(obj)), "Handlers::obj"),
            }),
            GFP_KERNEL,
        )
    }

    /// No handler is called from now on; one running is waited for.
    pub(crate) fn revoke(&self) {
        *self.obj.lock() = None;
    }

    /// Calls `f` with the object while it lives, under the lock: the
    /// object is valid for the call of `f` (and its handlers and their
    /// context are those ib_core set at its creation). Nothing once
    /// revoked.
    pub(crate) fn with(&self, f: impl FnOnce(*mut O)) {
        let guard = self.obj.lock();
        if let Some(Raw(obj)) = *guard {
            f(obj.as_ptr());
        }
    }

    /// Reports `event`, an event of the object, through its event handler.
    /// Nothing once the object is destroyed.
    pub(crate) fn report(&self, event: bindings::ib_event_type) {
        self.with(|obj| {
            // SAFETY: The object is valid for the call (`with`); the event
            // is on our stack, read by the handler during the call only,
            // with the object's own context.
            unsafe {
                let (device, handler, context) = O::handler(obj);
                if let Some(handler) = handler {
                    let mut ev: bindings::ib_event = core::mem::zeroed();
                    ev.device = device;
                    O::set_element(&mut ev, obj);
                    ev.event = event;
                    handler(&mut ev, context);
                }
            }
        });
    }
}
