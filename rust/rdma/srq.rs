// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, as their driver sees them (`struct ib_srq`).
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
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
};

/// The attributes of a shared receive queue (`struct ib_srq_attr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SrqAttr {
    /// Receive work requests it holds.
    pub(crate) max_wr: u32,
    /// Scatter/gather entries of each.
    pub(crate) max_sge: u32,
    /// Below this many posted, `IB_EVENT_SRQ_LIMIT_REACHED` (0: disarmed).
    pub(crate) srq_limit: u32,
}

impl SrqAttr {
    fn from_raw(a: &bindings::ib_srq_attr) -> Self {
        Self {
            max_wr: a.max_wr,
            max_sge: a.max_sge,
            srq_limit: a.srq_limit,
        }
    }
}

/// The ucontext of the verb whose driver data `udata` is, as
/// [`UserQueue::new`] needs it; `EINVAL` without one.
///
/// # Safety
///
/// `udata` is the `driver_udata` of a live attribute bundle.
unsafe fn ucontext(udata: &Udata) -> Result<*mut bindings::ib_ucontext> {
    // SAFETY: The caller's promise.
    let uctx = unsafe { bindings::rverbs_udata_ucontext(udata.as_raw()) };
    if uctx.is_null() {
        return Err(EINVAL);
    }
    Ok(uctx)
}

/// What `create_srq` is asked for, and what it answers besides the
/// driver's data: the attributes it really has ([`SrqCreate::set_attr`],
/// which ib_core returns to userspace) and the queue it offers to the
/// process ([`SrqCreate::user_queue`]).
///
/// # Invariants
///
/// `init` is the SRQ's init attributes, ours for the call; `udata` null (a
/// kernel caller) or the `driver_udata` of the verb's attribute bundle,
/// with its ucontext; both valid while this value lives. `offers` are
/// dropped before the ucontext is deallocated (with the SRQ, or when its
/// creation fails).
pub(crate) struct SrqCreate<'a> {
    init: *mut bindings::ib_srq_init_attr,
    udata: Option<&'a Udata>,
    offers: &'a Cell<Offers>,
}

impl<'a> SrqCreate<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
        offers: &'a Cell<Offers>,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            init,
            // SAFETY: Null or valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw_opt(udata) },
            offers,
        }
    }

    /// Whether a basic SRQ is asked for (`IB_SRQT_BASIC`; not XRC or tag
    /// matching).
    pub(crate) fn basic(&self) -> bool {
        // SAFETY: Valid and ours for the call (type invariant).
        unsafe { (*self.init).srq_type == bindings::ib_srq_type_IB_SRQT_BASIC }
    }

    /// The attributes asked for.
    pub(crate) fn attr(&self) -> SrqAttr {
        // SAFETY: As in `basic`.
        SrqAttr::from_raw(unsafe { &(*self.init).attr })
    }

    /// Sets the depth and entries reported to the caller (ib_uverbs copies
    /// them to userspace after the call).
    pub(crate) fn set_attr(&self, max_wr: u32, max_sge: u32) {
        // SAFETY: As in `basic`; ib_core reads them after the call.
        unsafe {
            (*self.init).attr.max_wr = max_wr;
            (*self.init).attr.max_sge = max_sge;
        }
    }

    /// The driver's user data, `None` for a kernel caller.
    pub(crate) fn udata(&self) -> Option<&Udata> {
        self.udata
    }

    /// A queue of geometry `geo` that the process can map; `EINVAL` for a
    /// kernel caller, which has no process.
    pub(crate) fn user_queue(&self, geo: QueueGeometry) -> Result<UserQueue> {
        let udata = self.udata.ok_or(EINVAL)?;
        // SAFETY: The verb's (type invariant).
        let uctx = unsafe { ucontext(udata) }?;
        let mut offers = self.offers.take();
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_srq`); the offers go before it (type invariant).
        let made = unsafe { UserQueue::new(&mut offers, uctx, geo) };
        self.offers.set(offers);
        made
    }
}

/// `IB_SRQ_MAX_WR`: a new depth (a resize).
const MASK_MAX_WR: u32 = bindings::ib_srq_attr_mask_IB_SRQ_MAX_WR;
/// `IB_SRQ_LIMIT`: a new limit (arming the event).
const MASK_LIMIT: u32 = bindings::ib_srq_attr_mask_IB_SRQ_LIMIT;

/// What `modify_srq` is asked for: a new depth and a new limit, each
/// optional, and the queue a resize offers to the process.
///
/// # Invariants
///
/// `udata` is null (a kernel caller) or the `driver_udata` of the verb's
/// attribute bundle, with its ucontext, valid while this value lives.
/// `offers` are the SRQ's, dropped with it.
pub(crate) struct SrqModify<'a> {
    attr: SrqAttr,
    mask: u32,
    udata: Option<&'a Udata>,
    offers: &'a Mutex<Offers>,
}

impl<'a> SrqModify<'a> {
    /// # Safety
    ///
    /// `attr` is valid for the call; the rest as the type invariants, for
    /// `'a`.
    pub(crate) unsafe fn from_raw(
        attr: *const bindings::ib_srq_attr,
        mask: u32,
        udata: *mut bindings::ib_udata,
        offers: &'a Mutex<Offers>,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            // SAFETY: Valid for the call (the caller's promise).
            attr: SrqAttr::from_raw(unsafe { &*attr }),
            mask,
            // SAFETY: Null or valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw_opt(udata) },
            offers,
        }
    }

    /// The new depth, if one is asked for.
    pub(crate) fn max_wr(&self) -> Option<u32> {
        (self.mask & MASK_MAX_WR != 0).then_some(self.attr.max_wr)
    }

    /// The new limit, if one is asked for.
    pub(crate) fn limit(&self) -> Option<u32> {
        (self.mask & MASK_LIMIT != 0).then_some(self.attr.srq_limit)
    }

    /// The driver's user data, `None` for a kernel caller.
    pub(crate) fn udata(&self) -> Option<&Udata> {
        self.udata
    }

    /// A queue of geometry `geo` that the process can map; `EINVAL` for a
    /// kernel caller.
    pub(crate) fn user_queue(&self, geo: QueueGeometry) -> Result<UserQueue> {
        let udata = self.udata.ok_or(EINVAL)?;
        // SAFETY: The verb's (type invariant).
        let uctx = unsafe { ucontext(udata) }?;
        // SAFETY: As in `SrqCreate::user_queue`; the SRQ's offers go with
        // the SRQ, before the context (type invariant).
        unsafe { UserQueue::new(&mut self.offers.lock(), uctx, geo) }
    }
}

/// The `ib_srq` whose event handler an [`SrqNotifier`] calls, while the
/// SRQ lives ([`Handlers`]).
pub(crate) type SrqHandlers = Handlers<bindings::ib_srq>;

/// How a shared receive queue's driver tells its owner that it ran low:
/// the SRQ's event handler, which ib_core sets before `create_srq` and
/// never changes. Kept anywhere, for as long as the driver likes: from the
/// SRQ's destruction on, it calls nothing. Process context or softirq,
/// never with a lock the handler takes.
#[derive(Clone)]
pub(crate) struct SrqNotifier {
    handlers: Arc<SrqHandlers>,
}

impl SrqNotifier {
    /// The notifier of the SRQ of `handlers`.
    pub(crate) fn new(handlers: &Arc<SrqHandlers>) -> Self {
        Self {
            handlers: handlers.clone(),
        }
    }

    /// Reports `IB_EVENT_SRQ_LIMIT_REACHED` through the event handler.
    /// Nothing once the SRQ is destroyed.
    pub(crate) fn limit_reached(&self) {
        self.handlers
            .report(bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED);
    }
}
