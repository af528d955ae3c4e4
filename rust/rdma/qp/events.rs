// SPDX-License-Identifier: GPL-2.0

//! The asynchronous events a QP's driver reports from its data path,
//! through the event handler ib_core installed on the QP.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::{
    bindings,
    rdma::handlers::Handlers, //
};
use kernel::sync::Arc;

/// The `ib_qp` whose event handler a [`QpNotifier`] calls, while the QP
/// lives ([`Handlers`]).
pub(crate) type QpHandlers = Handlers<bindings::ib_qp>;

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
        self.handlers.report(event);
    }
}
