// SPDX-License-Identifier: GPL-2.0

//! What `query_qp` answers (`struct ib_qp_attr`, `struct ib_qp_init_attr`),
//! from the attributes the driver keeps.

use super::{
    QpAttrs,
    QpCap, //
};
use crate::{
    bindings,
    rdma::ah_attr::AhAttr, //
};

/// What `query_qp` answers: the driver fills it with [`QpQuery::answer`].
///
/// # Invariants
///
/// `qp` is a live QP of the driver; `attr` and `init` are valid for
/// writes and ours while this value lives.
pub(crate) struct QpQuery {
    qp: *mut bindings::ib_qp,
    attr: *mut bindings::ib_qp_attr,
    init: *mut bindings::ib_qp_init_attr,
}

/// The port a QP's `init_attr` reports (soft-RoCE reports 1 for every QP,
/// `rxe_qp.c:rxe_qp_to_init`).
const QUERY_PORT: u32 = 1;

impl QpQuery {
    /// # Safety
    ///
    /// As the type invariants, while the value lives.
    pub(crate) unsafe fn from_raw(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        init: *mut bindings::ib_qp_init_attr,
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self { qp, attr, init }
    }

    /// Writes the whole answer (uverbs does not zero it first): the
    /// attributes `attrs`, the capacities `cap`, and the creation
    /// attributes that ib_core keeps in the QP. The address vectors are
    /// empty RoCE ones with a GRH, as soft-RoCE reports for a QP that was
    /// never given one (`rxe_av.c:rxe_av_to_attr`), but a primary path given.
    pub(crate) fn answer(self, attrs: &QpAttrs, cap: QpCap, sq_sig_all: bool) {
        // SAFETY: All-zero is a valid `ib_qp_attr` (numbers, null
        // pointers, unions of those).
        let mut a: bindings::ib_qp_attr = unsafe { core::mem::zeroed() };
        a.qp_state = attrs.qp_state.to_raw();
        a.cur_qp_state = attrs.qp_state.to_raw();
        a.path_mtu = attrs.path_mtu.0;
        a.path_mig_state = attrs.path_mig_state;
        a.qkey = attrs.qkey;
        a.rq_psn = attrs.rq_psn.value();
        a.sq_psn = attrs.sq_psn.value();
        a.dest_qp_num = attrs.dest_qp_num;
        a.qp_access_flags = attrs.qp_access_flags;
        cap.write_to(&mut a.cap);
        for av in [&mut a.ah_attr, &mut a.alt_ah_attr] {
            av.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
            // CAST: A flag of the `u8` field.
            av.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
        }
        if let Some(path) = &attrs.av {
            // SAFETY: Our own zeroed attribute: no GID entry reference.
            unsafe { AhAttr::from_raw(&mut a.ah_attr) }.set_address_vector(path);
        }
        a.pkey_index = attrs.pkey_index;
        a.alt_pkey_index = attrs.alt_pkey_index;
        a.en_sqd_async_notify = attrs.en_sqd_async_notify;
        a.sq_draining = attrs.sq_draining;
        a.max_rd_atomic = attrs.max_rd_atomic;
        a.max_dest_rd_atomic = attrs.max_dest_rd_atomic;
        a.min_rnr_timer = attrs.min_rnr_timer;
        a.port_num = attrs.port_num;
        a.timeout = attrs.timeout;
        a.retry_cnt = attrs.retry_cnt;
        a.rnr_retry = attrs.rnr_retry;
        a.alt_port_num = attrs.alt_port_num;
        a.alt_timeout = attrs.alt_timeout;

        // SAFETY: All-zero is a valid `ib_qp_init_attr` (numbers, null
        // pointers, no handler).
        let mut init: bindings::ib_qp_init_attr = unsafe { core::mem::zeroed() };
        // SAFETY: A live QP (type invariant). These fields are set by
        // ib_core at creation and never written again; other fields of the
        // struct are (`_ib_modify_qp`, restrack), so each is read through
        // the raw pointer, without a reference to the whole struct.
        unsafe {
            init.event_handler = (*self.qp).event_handler;
            init.qp_context = (*self.qp).qp_context;
            init.send_cq = (*self.qp).send_cq;
            init.recv_cq = (*self.qp).recv_cq;
            init.srq = (*self.qp).srq;
            init.qp_type = (*self.qp).qp_type;
        }
        cap.write_to(&mut init.cap);
        init.sq_sig_type = if sq_sig_all {
            bindings::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            bindings::ib_sig_type_IB_SIGNAL_REQ_WR
        };
        init.port_num = QUERY_PORT;
        // SAFETY: Both are valid for writes and ours (type invariant).
        unsafe {
            self.attr.write(a);
            self.init.write(init);
        }
    }
}
