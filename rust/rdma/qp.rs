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
    mmap::Offers,
    ring::{
        QueueGeometry,
        UserQueue, //
    },
    udata::Udata,
};
use crate::bindings;
use core::cell::Cell;
use kernel::prelude::*;

mod query;
pub(crate) use query::QpQuery;

// The work queue elements (`wqe`), which their users name through
// `qp`.
pub(crate) use super::wqe::{
    RecvWqe,
    SendWqe,
    RXE_RECV_WQE_SIZE,
    RXE_SEND_WQE_SIZE,
    RXE_SGE_SIZE,
    SEND_INLINE,
    SEND_SIGNALED,
    SEND_SOLICITED,
    WR_SEND,
    WR_SEND_WITH_IMM, //
};

/// The type of a QP (`enum ib_qp_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpType {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// Any other (GSI, XRC, raw packet, driver-defined...).
    Other(u32),
}

impl QpType {
    fn from_raw(t: bindings::ib_qp_type) -> Self {
        match t {
            bindings::ib_qp_type_IB_QPT_RC => Self::Rc,
            bindings::ib_qp_type_IB_QPT_UC => Self::Uc,
            bindings::ib_qp_type_IB_QPT_UD => Self::Ud,
            other => Self::Other(other),
        }
    }

    fn to_raw(self) -> bindings::ib_qp_type {
        match self {
            Self::Rc => bindings::ib_qp_type_IB_QPT_RC,
            Self::Uc => bindings::ib_qp_type_IB_QPT_UC,
            Self::Ud => bindings::ib_qp_type_IB_QPT_UD,
            Self::Other(t) => t,
        }
    }
}

/// The state of a QP (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum QpState {
    /// Reset: created, or reset.
    #[default]
    Reset,
    /// Initialised.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained.
    Sqd,
    /// Send queue error.
    Sqe,
    /// Error.
    Err,
}

impl QpState {
    /// The state of a raw value; `None` past `IB_QPS_ERR` (uverbs refuses
    /// those before the driver sees them).
    fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
        Some(match s {
            bindings::ib_qp_state_IB_QPS_RESET => Self::Reset,
            bindings::ib_qp_state_IB_QPS_INIT => Self::Init,
            bindings::ib_qp_state_IB_QPS_RTR => Self::Rtr,
            bindings::ib_qp_state_IB_QPS_RTS => Self::Rts,
            bindings::ib_qp_state_IB_QPS_SQD => Self::Sqd,
            bindings::ib_qp_state_IB_QPS_SQE => Self::Sqe,
            bindings::ib_qp_state_IB_QPS_ERR => Self::Err,
            _ => return None,
        })
    }

    fn to_raw(self) -> bindings::ib_qp_state {
        match self {
            Self::Reset => bindings::ib_qp_state_IB_QPS_RESET,
            Self::Init => bindings::ib_qp_state_IB_QPS_INIT,
            Self::Rtr => bindings::ib_qp_state_IB_QPS_RTR,
            Self::Rts => bindings::ib_qp_state_IB_QPS_RTS,
            Self::Sqd => bindings::ib_qp_state_IB_QPS_SQD,
            Self::Sqe => bindings::ib_qp_state_IB_QPS_SQE,
            Self::Err => bindings::ib_qp_state_IB_QPS_ERR,
        }
    }

    /// Whether ib_core's table of transitions (`ib_modify_qp_is_ok`)
    /// allows going from `self` to `next` on a QP of type `ty` with the
    /// attributes of `mask`: the rule every driver applies.
    pub(crate) fn may_become(self, next: Self, ty: QpType, mask: u32) -> bool {
        // SAFETY: A pure function of its arguments, any values.
        unsafe { bindings::ib_modify_qp_is_ok(self.to_raw(), next.to_raw(), ty.to_raw(), mask) }
    }
}

/// The attributes of `modify_qp` (`enum ib_qp_attr_mask`).
pub(crate) mod mask {
    use crate::bindings;

    /// `IB_QP_STATE`.
    pub(crate) const STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_STATE;
    /// `IB_QP_CUR_STATE`.
    pub(crate) const CUR_STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_CUR_STATE;
    /// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
    pub(crate) const EN_SQD_ASYNC_NOTIFY: u32 = bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY;
    /// `IB_QP_ACCESS_FLAGS`.
    pub(crate) const ACCESS_FLAGS: u32 = bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS;
    /// `IB_QP_PKEY_INDEX`.
    pub(crate) const PKEY_INDEX: u32 = bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX;
    /// `IB_QP_PORT`.
    pub(crate) const PORT: u32 = bindings::ib_qp_attr_mask_IB_QP_PORT;
    /// `IB_QP_QKEY`.
    pub(crate) const QKEY: u32 = bindings::ib_qp_attr_mask_IB_QP_QKEY;
    /// `IB_QP_AV`.
    pub(crate) const AV: u32 = bindings::ib_qp_attr_mask_IB_QP_AV;
    /// `IB_QP_PATH_MTU`.
    pub(crate) const PATH_MTU: u32 = bindings::ib_qp_attr_mask_IB_QP_PATH_MTU;
    /// `IB_QP_TIMEOUT`.
    pub(crate) const TIMEOUT: u32 = bindings::ib_qp_attr_mask_IB_QP_TIMEOUT;
    /// `IB_QP_RETRY_CNT`.
    pub(crate) const RETRY_CNT: u32 = bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT;
    /// `IB_QP_RNR_RETRY`.
    pub(crate) const RNR_RETRY: u32 = bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY;
    /// `IB_QP_RQ_PSN`.
    pub(crate) const RQ_PSN: u32 = bindings::ib_qp_attr_mask_IB_QP_RQ_PSN;
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub(crate) const MAX_QP_RD_ATOMIC: u32 = bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC;
    /// `IB_QP_ALT_PATH`.
    pub(crate) const ALT_PATH: u32 = bindings::ib_qp_attr_mask_IB_QP_ALT_PATH;
    /// `IB_QP_MIN_RNR_TIMER`.
    pub(crate) const MIN_RNR_TIMER: u32 = bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER;
    /// `IB_QP_SQ_PSN`.
    pub(crate) const SQ_PSN: u32 = bindings::ib_qp_attr_mask_IB_QP_SQ_PSN;
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub(crate) const MAX_DEST_RD_ATOMIC: u32 = bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC;
    /// `IB_QP_PATH_MIG_STATE`.
    pub(crate) const PATH_MIG_STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE;
    /// `IB_QP_CAP`.
    pub(crate) const CAP: u32 = bindings::ib_qp_attr_mask_IB_QP_CAP;
    /// `IB_QP_DEST_QPN`.
    pub(crate) const DEST_QPN: u32 = bindings::ib_qp_attr_mask_IB_QP_DEST_QPN;
    /// `IB_QP_ATTR_STANDARD_BITS`: every attribute above (bits 0-20).
    pub(crate) const STANDARD_BITS: u32 = bindings::ib_qp_attr_mask_IB_QP_ATTR_STANDARD_BITS;
}

/// The capacities of a QP's queues (`struct ib_qp_cap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCap {
    /// Send work requests outstanding.
    pub(crate) max_send_wr: u32,
    /// Receive work requests outstanding.
    pub(crate) max_recv_wr: u32,
    /// Scatter/gather entries of a send work request.
    pub(crate) max_send_sge: u32,
    /// Scatter/gather entries of a receive work request.
    pub(crate) max_recv_sge: u32,
    /// Bytes of inline data in a send work request.
    pub(crate) max_inline_data: u32,
}

impl QpCap {
    fn from_raw(c: &bindings::ib_qp_cap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }

    fn write_to(self, c: &mut bindings::ib_qp_cap) {
        c.max_send_wr = self.max_send_wr;
        c.max_recv_wr = self.max_recv_wr;
        c.max_send_sge = self.max_send_sge;
        c.max_recv_sge = self.max_recv_sge;
        c.max_inline_data = self.max_inline_data;
    }
}

/// The attributes of a QP that `modify_qp` sets and `query_qp` reports,
/// as plain values (the fields of `struct ib_qp_attr` but the capacities
/// and the address vectors). Enumerations keep ib_core's numbers:
/// `path_mtu` is an `enum ib_mtu`, `path_mig_state` an `enum ib_mig_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpAttrs {
    /// The state.
    pub(crate) qp_state: QpState,
    /// Path MTU (`enum ib_mtu`).
    pub(crate) path_mtu: u32,
    /// Path migration state (`enum ib_mig_state`).
    pub(crate) path_mig_state: u32,
    /// Q_Key.
    pub(crate) qkey: u32,
    /// Receive PSN.
    pub(crate) rq_psn: u32,
    /// Send PSN.
    pub(crate) sq_psn: u32,
    /// Destination QP number.
    pub(crate) dest_qp_num: u32,
    /// Remote access flags (`IB_ACCESS_*`).
    pub(crate) qp_access_flags: i32,
    /// P_Key index.
    pub(crate) pkey_index: u16,
    /// Alternate path's P_Key index.
    pub(crate) alt_pkey_index: u16,
    /// Whether `IB_EVENT_SQ_DRAINED` was asked for.
    pub(crate) en_sqd_async_notify: u8,
    /// Whether the send queue is draining (in SQD).
    pub(crate) sq_draining: u8,
    /// Outstanding RDMA reads and atomics as initiator.
    pub(crate) max_rd_atomic: u8,
    /// Outstanding RDMA reads and atomics as responder.
    pub(crate) max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub(crate) min_rnr_timer: u8,
    /// Port.
    pub(crate) port_num: u32,
    /// Local ACK timeout.
    pub(crate) timeout: u8,
    /// Retry count.
    pub(crate) retry_cnt: u8,
    /// RNR retry count.
    pub(crate) rnr_retry: u8,
    /// Alternate path's port.
    pub(crate) alt_port_num: u32,
    /// Alternate path's local ACK timeout.
    pub(crate) alt_timeout: u8,
}

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
/// when its creation fails).
pub(crate) struct QpCreate<'a> {
    qp: *mut bindings::ib_qp,
    init: *mut bindings::ib_qp_init_attr,
    udata: Option<&'a Udata>,
    offers: &'a Cell<Offers>,
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
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            qp,
            init,
            // SAFETY: Null or valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw_opt(udata) },
            offers,
        }
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

    /// Whether a shared receive queue is given.
    pub(crate) fn has_srq(&self) -> bool {
        !self.init().srq.is_null()
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
    pub(crate) fn mask(&self) -> u32 {
        self.mask
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
    /// `Reset` where the given value is not a state).
    pub(crate) fn values(&self) -> QpAttrs {
        let a = self.attr;
        QpAttrs {
            qp_state: QpState::from_raw(a.qp_state).unwrap_or_default(),
            path_mtu: a.path_mtu,
            path_mig_state: a.path_mig_state,
            qkey: a.qkey,
            rq_psn: a.rq_psn,
            sq_psn: a.sq_psn,
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
        }
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
