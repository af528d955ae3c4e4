// SPDX-License-Identifier: GPL-2.0

//! Queue pairs, as their driver sees them (`struct ib_qp`): what
//! `create_qp` is asked for, what `modify_qp` changes, what `query_qp`
//! answers.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! ib_core allocates the QP, fills its own fields (device, PD, CQs, type,
//! event handler) and calls the driver; it counts the QP's uses of its PD
//! and CQs itself, so none of them can be destroyed while the QP lives
//! (`ib_qp_usecnt_inc`). The driver keeps the rest: its number, its queues
//! and every attribute that `modify_qp` sets, in [`QpAttrs`].

use super::{
    ah_attr::{
        AddressVector,
        AhAttr, //
    },
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
    sync::Arc, //
};

mod attrs;
mod events;
mod query;
pub(crate) use attrs::{
    PathMtu,
    Psn,
    QpAttr,
    QpAttrMask,
    QpAttrs,
    QpCap,
    QpState,
    QpType, //
};
pub(crate) use events::{
    QpHandlers,
    QpNotifier, //
};
pub(crate) use query::QpQuery;

/// What `create_qp` is asked for, and what it answers besides the
/// driver's data: the QP number ([`QpCreate::set_qp_num`]), the real
/// capacities ([`QpCreate::set_cap`], which ib_core returns to userspace)
/// and the queues it offers to the process ([`QpCreate::user_queue`]).
///
/// # Invariants
///
/// `qp` is the fresh `ib_qp` being created, filled by ib_core
/// (`verbs.c:create_qp`), and `init` its attributes; `udata` is null (a
/// kernel caller) or the `driver_udata` of the verb's attribute bundle,
/// which has the verb's ucontext; all valid while this value lives.
/// `offers` are dropped before the ucontext is deallocated (with the QP, or
/// when its creation fails). `handlers` are `qp`'s.
pub(crate) struct QpCreate<'a> {
    qp: *mut bindings::ib_qp,
    init: *mut bindings::ib_qp_init_attr,
    udata: Option<&'a Udata>,
    offers: &'a Cell<Offers>,
    handlers: &'a Arc<QpHandlers>,
}

impl<'a> QpCreate<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`; nobody else accesses `*init`
    /// during `'a`.
    pub(crate) unsafe fn from_raw(
        qp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
        offers: &'a Cell<Offers>,
        handlers: &'a Arc<QpHandlers>,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            qp,
            init,
            // SAFETY: Null or valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw_opt(udata) },
            offers,
            handlers,
        }
    }

    /// The QP's event handler, for the driver to keep where its data path
    /// reports events; revoked when the QP is destroyed.
    pub(crate) fn notifier(&self) -> QpNotifier {
        QpNotifier::new(self.handlers)
    }

    fn init(&self) -> &bindings::ib_qp_init_attr {
        // SAFETY: Valid and ours while `self` lives (type invariant).
        unsafe { &*self.init }
    }

    /// The type asked for.
    pub(crate) fn qp_type(&self) -> QpType {
        QpType::from_raw(self.init().qp_type)
    }

    /// `IB_QP_CREATE_*` flags asked for.
    pub(crate) fn create_flags(&self) -> u32 {
        self.init().create_flags
    }

    /// The capacities asked for.
    pub(crate) fn cap(&self) -> QpCap {
        QpCap::from_raw(&self.init().cap)
    }

    /// Whether every send work request completes (`IB_SIGNAL_ALL_WR`).
    pub(crate) fn sq_sig_all(&self) -> bool {
        self.init().sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR
    }

    /// The driver's user data, `None` for a kernel caller.
    pub(crate) fn udata(&self) -> Option<&Udata> {
        self.udata
    }

    /// Sets the QP number (`ib_qp.qp_num`) that ib_core reports.
    pub(crate) fn set_qp_num(&self, qpn: u32) {
        // SAFETY: The QP being created is ours during `create_qp` (type
        // invariant); ib_core reads `qp_num` only after it returns.
        unsafe { (*self.qp).qp_num = qpn };
    }

    /// Sets the capacities that ib_core reports (`init_attr.cap`).
    pub(crate) fn set_cap(&self, cap: QpCap) {
        // SAFETY: `init` is ours during the call (type invariant).
        cap.write_to(unsafe { &mut (*self.init).cap });
    }

    /// A queue of geometry `geo` that the process can map; `EINVAL` for a
    /// kernel caller, which has no process.
    pub(crate) fn user_queue(&self, geo: QueueGeometry) -> Result<UserQueue> {
        let udata = self.udata.ok_or(EINVAL)?;
        // SAFETY: The udata is the `driver_udata` of a live attribute
        // bundle (type invariant).
        let uctx = unsafe { bindings::rverbs_udata_ucontext(udata.as_raw()) };
        if uctx.is_null() {
            return Err(EINVAL);
        }
        // Out of the cell for the call, and back whatever its outcome.
        let mut offers = self.offers.take();
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_qp`); the offers go before it (type invariant).
        let made = unsafe { UserQueue::new(&mut offers, uctx, geo) };
        self.offers.set(offers);
        made
    }
}

/// What `modify_qp` is asked to change: the attributes of `mask`.
///
/// # Invariants
///
/// `qp` is a live QP of the driver and `attr` the attributes of the call,
/// valid while this value lives.
pub(crate) struct QpModify<'a> {
    qp: *mut bindings::ib_qp,
    attr: &'a bindings::ib_qp_attr,
    mask: u32,
}

impl<'a> QpModify<'a> {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw(
        qp: *mut bindings::ib_qp,
        attr: *const bindings::ib_qp_attr,
        mask: u32,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            qp,
            // SAFETY: Valid for `'a` (the caller's promise).
            attr: unsafe { &*attr },
            mask,
        }
    }

    /// The attributes given (`IB_QP_*` bits).
    pub(crate) fn mask(&self) -> QpAttrMask {
        QpAttrMask::from_bits(self.mask)
    }

    /// The type of the QP.
    pub(crate) fn qp_type(&self) -> QpType {
        // SAFETY: A live QP (type invariant); ib_core set its type at
        // creation and never changes it.
        QpType::from_raw(unsafe { (*self.qp).qp_type })
    }

    /// The new state (`IB_QP_STATE`); `EINVAL` for a value past
    /// `IB_QPS_ERR`.
    pub(crate) fn qp_state(&self) -> Result<QpState> {
        QpState::from_raw(self.attr.qp_state).ok_or(EINVAL)
    }

    /// The state the caller believes the QP is in (`IB_QP_CUR_STATE`).
    pub(crate) fn cur_qp_state(&self) -> Result<QpState> {
        QpState::from_raw(self.attr.cur_qp_state).ok_or(EINVAL)
    }

    /// The capacities given (`IB_QP_CAP`).
    pub(crate) fn cap(&self) -> QpCap {
        QpCap::from_raw(&self.attr.cap)
    }

    /// The scalar attributes as given, whatever the mask (the state is
    /// `Reset` where the given value is not a state; the PSNs are their
    /// low 24 bits).
    pub(crate) fn values(&self) -> QpAttrs {
        let a = self.attr;
        QpAttrs {
            qp_state: QpState::from_raw(a.qp_state).unwrap_or_default(),
            path_mtu: PathMtu(a.path_mtu),
            path_mig_state: a.path_mig_state,
            qkey: a.qkey,
            rq_psn: Psn::new(a.rq_psn),
            sq_psn: Psn::new(a.sq_psn),
            dest_qp_num: a.dest_qp_num,
            qp_access_flags: a.qp_access_flags,
            pkey_index: a.pkey_index,
            alt_pkey_index: a.alt_pkey_index,
            en_sqd_async_notify: a.en_sqd_async_notify,
            sq_draining: a.sq_draining,
            max_rd_atomic: a.max_rd_atomic,
            max_dest_rd_atomic: a.max_dest_rd_atomic,
            min_rnr_timer: a.min_rnr_timer,
            port_num: a.port_num,
            timeout: a.timeout,
            retry_cnt: a.retry_cnt,
            rnr_retry: a.rnr_retry,
            alt_port_num: a.alt_port_num,
            alt_timeout: a.alt_timeout,
            av: None,
        }
    }

    /// The primary path given (`IB_QP_AV`): for RoCE, ib_core has resolved
    /// its destination MAC and holds its source GID entry for the call.
    pub(crate) fn av(&self) -> AddressVector {
        // SAFETY: ib_core filled `grh.sgid_attr` (`rdma_fill_sgid_attr`)
        // with a reference held until the call returns, or left it null.
        unsafe { AhAttr::from_ref(&self.attr.ah_attr) }.address_vector()
    }

    /// Tells the QP's owner that its send queue is drained
    /// (`IB_EVENT_SQ_DRAINED`, through the handler ib_core installed).
    /// Called without locks held, in process context.
    pub(crate) fn notify_sq_drained(&self) {
        // SAFETY: A live QP (type invariant): ib_core set `device`,
        // `event_handler` and `qp_context` at creation.
        let (device, handler, context) = unsafe {
            (
                (*self.qp).device,
                (*self.qp).event_handler,
                (*self.qp).qp_context,
            )
        };
        let Some(handler) = handler else {
            return;
        };
        let mut ev = bindings::ib_event {
            device,
            // SAFETY: All-zero is a valid union of pointers.
            element: unsafe { core::mem::zeroed() },
            event: bindings::ib_event_type_IB_EVENT_SQ_DRAINED,
        };
        // SAFETY: Writes the union's `qp` member, the one the event type
        // names.
        unsafe { *ev.element.qp.as_mut() = self.qp };
        // SAFETY: ib_core's handler for the QP's events
        // (`__ib_qp_event_handler`), with the event on our stack for the
        // call and the QP's own context.
        unsafe { handler(&mut ev, context) };
    }
}
