// SPDX-License-Identifier: GPL-2.0

//! The asynchronous events a QP's driver reports from its data path,
//! through the event handler ib_core installed on the QP.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::{
    bindings,
    sync::{
        new_spinlock_bh,
        SpinLockBh, //
    },
};
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// The `ib_qp` whose event handler a [`QpNotifier`] calls, while the QP
/// lives.
///
/// # Invariants
///
/// `qp` is `Some` only while its `ib_qp` lives: set by the generic layer
/// when it creates the QP, and taken out by it ([`QpHandlers::revoke`])
/// when the driver's `create_qp` failed or after its `destroy_qp`, before
/// ib_core frees the QP. The handler is called under the lock, so that
/// once it is revoked no call is still running.
#[pin_data]
pub(crate) struct QpHandlers {
    #[pin]
    qp: SpinLockBh<Option<RawQp>>,
}

/// An `ib_qp` pointer, sent between tasks under [`QpHandlers`]' lock.
#[derive(Clone, Copy)]
struct RawQp(NonNull<bindings::ib_qp>);

// SAFETY: Only dereferenced under `QpHandlers`' lock, while the QP lives
// (its type invariant); the handler may be called from any task that may
// sleep or not (`ib_uverbs_qp_event_handler` locks with irqsave and
// allocates atomically).
unsafe impl Send for RawQp {}

impl QpHandlers {
    /// The handlers of `qp`, being created.
    ///
    /// # Safety
    ///
    /// `qp` is ib_core's QP being created, its handler set; the caller
    /// revokes the result before ib_core frees the QP.
    pub(crate) unsafe fn new(qp: *mut bindings::ib_qp) -> Result<Arc<Self>> {
        let qp = NonNull::new(qp).ok_or(EINVAL)?;
        // INVARIANT: The caller revokes it before the QP is freed.
        Arc::pin_init(
            pin_init!(Self {
                qp <- new_spinlock_bh!(Some(RawQp(qp)), "QpHandlers::qp"),
            }),
            GFP_KERNEL,
        )
    }

    /// No handler is called from now on; one running is waited for.
    pub(crate) fn revoke(&self) {
        *self.qp.lock() = None;
    }
}

/// How a QP's driver reports events of its data path: the QP's event
/// handler, which ib_core sets before `create_qp` and never changes. Kept
/// anywhere, for as long as the driver likes (a work item that outlives
/// the QP included): from the QP's destruction on, it calls nothing. Any
/// context, never with a lock the handler takes.
#[derive(Clone)]
pub(crate) struct QpNotifier {
    handlers: Arc<QpHandlers>,
}

impl QpNotifier {
    /// The notifier of the QP of `handlers`.
    pub(crate) fn new(handlers: &Arc<QpHandlers>) -> Self {
        Self {
            handlers: handlers.clone(),
        }
    }

    /// Reports `IB_EVENT_QP_LAST_WQE_REACHED`: a QP on an SRQ, in error,
    /// takes no more work requests from it. Nothing once the QP is
    /// destroyed.
    pub(crate) fn last_wqe_reached(&self) {
        self.report(bindings::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED);
    }

    /// Reports `IB_EVENT_SQ_DRAINED`: a QP moved to SQD has completed every
    /// work request it had begun. Nothing once the QP is destroyed.
    pub(crate) fn sq_drained(&self) {
        self.report(bindings::ib_event_type_IB_EVENT_SQ_DRAINED);
    }

    /// Calls the QP's event handler with `event`, an event of the QP.
    fn report(&self, event: bindings::ib_event_type) {
        let guard = self.handlers.qp.lock();
        let Some(RawQp(qp)) = *guard else {
            return;
        };
        let qp = qp.as_ptr();
        // SAFETY: The QP lives while it is in the cell, and the cell's lock
        // is held (`QpHandlers`' invariant); its handler and context were
        // set before `create_qp` and do not change; the event is read
        // during the call only.
        unsafe {
            if let Some(handler) = (*qp).event_handler {
                let mut ev: bindings::ib_event = core::mem::zeroed();
                ev.device = (*qp).device;
                *ev.element.qp.as_mut() = qp;
                ev.event = event;
                handler(&mut ev, (*qp).qp_context);
            }
        }
    }
}
