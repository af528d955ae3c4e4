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
    ring::{
        QueueGeometry,
        UserQueue, //
    },
    udata::Udata,
};
use crate::bindings;
use core::mem::size_of;
use kernel::prelude::*;

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
pub(crate) struct QpCreate<'a> {
    qp: *mut bindings::ib_qp,
    init: *mut bindings::ib_qp_init_attr,
    udata: Option<&'a Udata>,
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
    ) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            qp,
            init,
            // SAFETY: Null or valid for `'a` (the caller's promise).
            udata: unsafe { Udata::from_raw_opt(udata) },
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
        // SAFETY: The ucontext of the verb: live, of this device, whose
        // table has `mmap` and `mmap_free` (`Vtable` sets them with
        // `create_qp`), and it outlives the QP, whose data holds the queue
        // (ib_core destroys every object of a context before the context).
        unsafe { UserQueue::new(uctx, geo) }
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
    /// never given one (`rxe_av.c:rxe_av_to_attr`).
    pub(crate) fn answer(self, attrs: &QpAttrs, cap: QpCap, sq_sig_all: bool) {
        // SAFETY: All-zero is a valid `ib_qp_attr` (numbers, null
        // pointers, unions of those).
        let mut a: bindings::ib_qp_attr = unsafe { core::mem::zeroed() };
        a.qp_state = attrs.qp_state.to_raw();
        a.cur_qp_state = attrs.qp_state.to_raw();
        a.path_mtu = attrs.path_mtu;
        a.path_mig_state = attrs.path_mig_state;
        a.qkey = attrs.qkey;
        a.rq_psn = attrs.rq_psn;
        a.sq_psn = attrs.sq_psn;
        a.dest_qp_num = attrs.dest_qp_num;
        a.qp_access_flags = attrs.qp_access_flags;
        cap.write_to(&mut a.cap);
        for av in [&mut a.ah_attr, &mut a.alt_ah_attr] {
            av.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
            // CAST: A flag of the `u8` field.
            av.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
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

/// The size of a send queue element's header, `struct rxe_send_wqe`.
pub(crate) const RXE_SEND_WQE_SIZE: usize = size_of::<bindings::rxe_send_wqe>();

/// The size of a receive queue element's header, `struct rxe_recv_wqe`.
pub(crate) const RXE_RECV_WQE_SIZE: usize = size_of::<bindings::rxe_recv_wqe>();

/// The size of a scatter/gather entry in a work queue element
/// (`struct rxe_sge`, laid out as the kernel's `struct ib_sge`).
pub(crate) const RXE_SGE_SIZE: usize = size_of::<bindings::rxe_sge>();

const _: () = assert!(RXE_SGE_SIZE == size_of::<bindings::ib_sge>());

/// Where the fields of soft-RoCE's work queue elements are
/// (`include/uapi/rdma/rdma_user_rxe.h`), from the bindings' layout.
mod wqe_layout {
    use crate::bindings::{
        rxe_dma_info,
        rxe_recv_wqe,
        rxe_send_wqe,
        rxe_send_wr,
        rxe_send_wr__bindgen_ty_2__bindgen_ty_4 as rxe_ud_wr,
        rxe_sge, //
    };
    use core::mem::{
        offset_of,
        size_of, //
    };

    const WR: usize = offset_of!(rxe_send_wqe, wr);
    pub(super) const WR_ID: usize = WR + offset_of!(rxe_send_wr, wr_id);
    pub(super) const OPCODE: usize = WR + offset_of!(rxe_send_wr, opcode);
    pub(super) const SEND_FLAGS: usize = WR + offset_of!(rxe_send_wr, send_flags);
    pub(super) const IMM_DATA: usize = WR + offset_of!(rxe_send_wr, ex);
    const UD: usize = WR + offset_of!(rxe_send_wr, wr);
    pub(super) const REMOTE_QPN: usize = UD + offset_of!(rxe_ud_wr, remote_qpn);
    pub(super) const REMOTE_QKEY: usize = UD + offset_of!(rxe_ud_wr, remote_qkey);
    pub(super) const AH_NUM: usize = UD + offset_of!(rxe_ud_wr, ah_num);
    const SEND_DMA: usize = offset_of!(rxe_send_wqe, dma);
    pub(super) const SEND_LENGTH: usize = SEND_DMA + offset_of!(rxe_dma_info, length);
    pub(super) const SEND_NUM_SGE: usize = SEND_DMA + offset_of!(rxe_dma_info, num_sge);
    pub(super) const SEND_SGE: usize = SEND_DMA + size_of::<rxe_dma_info>();
    pub(super) const RECV_WR_ID: usize = offset_of!(rxe_recv_wqe, wr_id);
    const RECV_DMA: usize = offset_of!(rxe_recv_wqe, dma);
    pub(super) const RECV_NUM_SGE: usize = RECV_DMA + offset_of!(rxe_dma_info, num_sge);
    pub(super) const RECV_SGE: usize = RECV_DMA + size_of::<rxe_dma_info>();
    pub(super) const SGE_ADDR: usize = offset_of!(rxe_sge, addr);
    pub(super) const SGE_LENGTH: usize = offset_of!(rxe_sge, length);
    pub(super) const SGE_LKEY: usize = offset_of!(rxe_sge, lkey);
    pub(super) const SGE: usize = size_of::<rxe_sge>();

    // The ABI as `Documentation/rv0-datapath.rst` lists it.
    const _: () = assert!(OPCODE == 12 && REMOTE_QPN == 24 && AH_NUM == 36);
    const _: () = assert!(SEND_LENGTH == 184 && SEND_NUM_SGE == 196 && SEND_SGE == 208);
    const _: () = assert!(RECV_NUM_SGE == 28 && RECV_SGE == 40 && SGE == 16);
}

/// The `u32` at `off` of `b`, or 0 past its end.
fn u32_at(b: &[u8], off: usize) -> u32 {
    b.get(off..off + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// The `u64` at `off` of `b`, or 0 past its end.
fn u64_at(b: &[u8], off: usize) -> u64 {
    b.get(off..off + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

/// A scatter/gather entry of a work request (`struct rxe_sge`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

/// The SGE `i` of the array at `base` of `b`, `None` past its end.
fn sge_at(b: &[u8], base: usize, i: u32) -> Option<Sge> {
    let off = base.checked_add(usize::try_from(i).ok()?.checked_mul(wqe_layout::SGE)?)?;
    b.get(off..off.checked_add(wqe_layout::SGE)?)?;
    Some(Sge {
        addr: u64_at(b, off + wqe_layout::SGE_ADDR),
        length: u32_at(b, off + wqe_layout::SGE_LENGTH),
        lkey: u32_at(b, off + wqe_layout::SGE_LKEY),
    })
}

/// A send work request of a UD QP as soft-RoCE's provider writes it
/// (`struct rxe_send_wqe`), read from a copy of its slot: userspace wrote
/// it, so every field is only a claim, checked by the driver.
pub(crate) struct SendWqe<'a>(&'a [u8]);

impl<'a> SendWqe<'a> {
    /// A copied slot, as long as a `struct rxe_send_wqe` at least.
    pub(crate) fn new(slot: &'a [u8]) -> Option<Self> {
        (slot.len() >= wqe_layout::SEND_SGE).then_some(Self(slot))
    }

    pub(crate) fn wr_id(&self) -> u64 {
        u64_at(self.0, wqe_layout::WR_ID)
    }

    /// `enum ib_uverbs_wr_opcode`.
    pub(crate) fn opcode(&self) -> u32 {
        u32_at(self.0, wqe_layout::OPCODE)
    }

    /// `IB_SEND_*`.
    pub(crate) fn send_flags(&self) -> u32 {
        u32_at(self.0, wqe_layout::SEND_FLAGS)
    }

    /// The immediate data, big endian as given.
    pub(crate) fn imm_data(&self) -> u32 {
        u32_at(self.0, wqe_layout::IMM_DATA)
    }

    pub(crate) fn remote_qpn(&self) -> u32 {
        u32_at(self.0, wqe_layout::REMOTE_QPN)
    }

    pub(crate) fn remote_qkey(&self) -> u32 {
        u32_at(self.0, wqe_layout::REMOTE_QKEY)
    }

    /// The AH number (`ah_num`).
    pub(crate) fn ah_num(&self) -> u32 {
        u32_at(self.0, wqe_layout::AH_NUM)
    }

    /// The total length claimed (`dma.length`): of the inline data.
    pub(crate) fn length(&self) -> u32 {
        u32_at(self.0, wqe_layout::SEND_LENGTH)
    }

    pub(crate) fn num_sge(&self) -> u32 {
        u32_at(self.0, wqe_layout::SEND_NUM_SGE)
    }

    /// SGE `i`, `None` past the slot.
    pub(crate) fn sge(&self, i: u32) -> Option<Sge> {
        sge_at(self.0, wqe_layout::SEND_SGE, i)
    }

    /// `len` bytes of inline data, `None` past the slot.
    pub(crate) fn inline_data(&self, len: usize) -> Option<&'a [u8]> {
        self.0
            .get(wqe_layout::SEND_SGE..wqe_layout::SEND_SGE.checked_add(len)?)
    }
}

/// A receive work request (`struct rxe_recv_wqe`), read from a copy of its
/// slot.
pub(crate) struct RecvWqe<'a>(&'a [u8]);

impl<'a> RecvWqe<'a> {
    /// A copied slot, as long as a `struct rxe_recv_wqe` at least.
    pub(crate) fn new(slot: &'a [u8]) -> Option<Self> {
        (slot.len() >= wqe_layout::RECV_SGE).then_some(Self(slot))
    }

    pub(crate) fn wr_id(&self) -> u64 {
        u64_at(self.0, wqe_layout::RECV_WR_ID)
    }

    pub(crate) fn num_sge(&self) -> u32 {
        u32_at(self.0, wqe_layout::RECV_NUM_SGE)
    }

    /// SGE `i`, `None` past the slot.
    pub(crate) fn sge(&self, i: u32) -> Option<Sge> {
        sge_at(self.0, wqe_layout::RECV_SGE, i)
    }
}

/// `IB_UVERBS_WR_SEND`.
pub(crate) const WR_SEND: u32 = bindings::ib_uverbs_wr_opcode_IB_UVERBS_WR_SEND;
/// `IB_UVERBS_WR_SEND_WITH_IMM`.
pub(crate) const WR_SEND_WITH_IMM: u32 = bindings::ib_uverbs_wr_opcode_IB_UVERBS_WR_SEND_WITH_IMM;
/// `IB_SEND_SIGNALED`.
// CAST: A bit of the flags.
pub(crate) const SEND_SIGNALED: u32 = bindings::ib_send_flags_IB_SEND_SIGNALED as u32;
/// `IB_SEND_SOLICITED`.
// CAST: A bit of the flags.
pub(crate) const SEND_SOLICITED: u32 = bindings::ib_send_flags_IB_SEND_SOLICITED as u32;
/// `IB_SEND_INLINE`.
// CAST: A bit of the flags.
pub(crate) const SEND_INLINE: u32 = bindings::ib_send_flags_IB_SEND_INLINE as u32;
