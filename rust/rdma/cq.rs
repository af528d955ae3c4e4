// SPDX-License-Identifier: GPL-2.0

//! Completion queues, as their driver sees them (`struct ib_cq`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    handlers::Handlers,
    mmap::Offers,
    rxe_abi::ring::{
        QueueGeometry,
        UserQueue, //
    },
    udata::Udata,
};
use crate::bindings;
use core::cell::Cell;
use kernel::{
    impl_flags,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
};

impl_flags!(
    /// What `req_notify_cq` asks for (`enum ib_cq_notify_flags`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct CqNotifyFlags(u32);

    /// One request of `req_notify_cq`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum CqNotify {
        /// `IB_CQ_SOLICITED`: an event at the next solicited completion.
        Solicited = bindings::ib_cq_notify_flags_IB_CQ_SOLICITED,
        /// `IB_CQ_NEXT_COMP`: an event at the next completion.
        NextComp = bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP,
        /// `IB_CQ_REPORT_MISSED_EVENTS`: say whether completions wait.
        ReportMissedEvents = bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS,
    }
);

impl CqNotifyFlags {
    /// The flags of `bits`, as ib_core gives them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// `IB_CQ_SOLICITED_MASK`: the events asked for, without the report.
    pub(crate) fn events(self) -> Self {
        Self(self.0 & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK)
    }
}

/// What `create_cq` is asked for, and what it answers besides the
/// driver's data: the real depth ([`CqCreate::set_depth`], which ib_core
/// returns to userspace) and the queue it offers to the process
/// ([`CqCreate::user_queue`]).
///
/// # Invariants
///
/// `cq` is the fresh `ib_cq` being created, `attr` its attributes, and
/// `attrs` null (a kernel caller) or the verb's attribute bundle, with its
/// ucontext; all valid while this value lives. `handlers` are `cq`'s;
/// `offers` are dropped before the ucontext is deallocated (with the CQ,
/// or when its creation fails).
pub(crate) struct CqCreate<'a> {
    cq: *mut bindings::ib_cq,
    attr: &'a bindings::ib_cq_init_attr,
    attrs: *mut bindings::uverbs_attr_bundle,
    handlers: &'a Arc<CqHandlers>,
    offers: &'a Cell<Offers>,
}

impl<'a> CqCreate<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
        handlers: &'a Arc<CqHandlers>,
        offers: &'a Cell<Offers>,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            cq,
            // SAFETY: Valid for `'a` (the caller's promise).
            attr: unsafe { &*attr },
            attrs,
            handlers,
            offers,
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

    /// The CQ's handlers, for the driver to keep where its completions
    /// are made; revoked when the CQ is destroyed.
    pub(crate) fn notifier(&self) -> CqNotifier {
        CqNotifier {
            handlers: self.handlers.clone(),
        }
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
        // Out of the cell for the call, and back whatever its outcome.
        let mut offers = self.offers.take();
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_cq`); the offers go before it (type invariant).
        let made = unsafe { UserQueue::new(&mut offers, uctx, geo) };
        self.offers.set(offers);
        made
    }
}

/// What `resize_user_cq` is asked for: the new depth, and what it answers
/// besides the driver's data: the real depth ([`CqResize::set_depth`],
/// which ib_core returns to userspace) and the new queue it offers to the
/// process ([`CqResize::user_queue`]).
///
/// # Invariants
///
/// `cq` is a live user CQ of the driver, held by the verb (uverbs's read
/// lookup of its object), and `udata` the `driver_udata` of the verb's
/// attribute bundle, which has the verb's ucontext; both valid while this
/// value lives. `offers` are the CQ's, dropped with it.
pub(crate) struct CqResize<'a> {
    cq: *mut bindings::ib_cq,
    cqe: u32,
    udata: &'a Udata,
    offers: &'a Mutex<Offers>,
}

impl<'a> CqResize<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        cq: *mut bindings::ib_cq,
        cqe: u32,
        udata: *mut bindings::ib_udata,
        offers: &'a Mutex<Offers>,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            cq,
            cqe,
            // SAFETY: Valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw(udata) },
            offers,
        }
    }

    /// Entries asked for (`cqe`), at least 1 (ib_uverbs refuses 0).
    pub(crate) fn cqe(&self) -> u32 {
        self.cqe
    }

    /// The driver's user data.
    pub(crate) fn udata(&self) -> &Udata {
        self.udata
    }

    /// Sets the depth ib_core reports (`ib_cq.cqe`).
    pub(crate) fn set_depth(&self, depth: u32) -> Result {
        let depth = i32::try_from(depth).map_err(|_| EINVAL)?;
        // SAFETY: The CQ lives (type invariant). Two resizes of one CQ may
        // run at once (uverbs looks the CQ up for reading), and ib_uverbs
        // reads `cqe` after the call: a single aligned `int`, written as
        // `WRITE_ONCE` would.
        unsafe { core::ptr::write_volatile(&raw mut (*self.cq).cqe, depth) };
        Ok(())
    }

    /// A queue of geometry `geo` that the process can map.
    pub(crate) fn user_queue(&self, geo: QueueGeometry) -> Result<UserQueue> {
        // SAFETY: The udata is the `driver_udata` of a live attribute
        // bundle (type invariant).
        let uctx = unsafe { bindings::rverbs_udata_ucontext(self.udata.as_raw()) };
        if uctx.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_cq`, which a driver with `resize_user_cq` has); the CQ's
        // offers go with the CQ, before the context (type invariant).
        unsafe { UserQueue::new(&mut self.offers.lock(), uctx, geo) }
    }
}

/// The `ib_cq` whose handlers a [`CqNotifier`] calls, while the CQ lives
/// ([`Handlers`]).
pub(crate) type CqHandlers = Handlers<bindings::ib_cq>;

/// How a completion queue's driver tells ib_core of completions and of
/// errors: the CQ's completion and event handlers, which ib_core sets
/// before `create_cq` and never changes (`uverbs_std_types_cq.c`).
///
/// A driver may keep it anywhere, for as long as it likes (a work item
/// that outlives the CQ included): from the CQ's destruction on, its
/// calls do nothing. Process context or softirq (its lock disables bottom
/// halves), never with a lock the handlers take (ib_uverbs' event queue
/// lock, a kernel consumer's own).
#[derive(Clone)]
pub(crate) struct CqNotifier {
    handlers: Arc<CqHandlers>,
}

impl CqNotifier {
    /// Calls the completion handler (`comp_handler(cq, cq_context)`): the
    /// completion channel of a user CQ gets an event. Nothing once the CQ
    /// is destroyed.
    pub(crate) fn notify(&self) {
        self.handlers.with(|cq| {
            // SAFETY: The CQ is valid for the call (`Handlers::with`); its
            // handler and context were set before `create_cq` and do not
            // change.
            unsafe {
                if let Some(handler) = (*cq).comp_handler {
                    handler(cq, (*cq).cq_context);
                }
            }
        });
    }

    /// Reports a CQ overrun (`IB_EVENT_CQ_ERR`) through the event handler.
    /// Nothing once the CQ is destroyed.
    pub(crate) fn overrun(&self) {
        self.handlers
            .report(bindings::ib_event_type_IB_EVENT_CQ_ERR);
    }
}
