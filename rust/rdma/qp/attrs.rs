// SPDX-License-Identifier: GPL-2.0

//! What a QP is and holds, as plain values: its type, its state, the
//! attributes `modify_qp` sets ([`QpAttrMask`]) and `query_qp` reports
//! ([`QpAttrs`]), the capacities of its queues, its packet sequence numbers
//! ([`Psn`]).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::{
    bindings,
    rdma::{
        ah_attr::AddressVector,
        driver::attrs::Mtu, //
    },
};
use kernel::impl_flags;

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
    /// Whether a QP of this type is connected to one other QP (RC, UC).
    pub(crate) fn connected(self) -> bool {
        matches!(self, Self::Rc | Self::Uc)
    }

    pub(super) fn from_raw(t: bindings::ib_qp_type) -> Self {
        match t {
            bindings::ib_qp_type_IB_QPT_RC => Self::Rc,
            bindings::ib_qp_type_IB_QPT_UC => Self::Uc,
            bindings::ib_qp_type_IB_QPT_UD => Self::Ud,
            other => Self::Other(other),
        }
    }

    pub(super) fn to_raw(self) -> bindings::ib_qp_type {
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
    pub(super) fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
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

    pub(super) fn to_raw(self) -> bindings::ib_qp_state {
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
    pub(crate) fn may_become(self, next: Self, ty: QpType, mask: QpAttrMask) -> bool {
        // SAFETY: A pure function of its arguments, any values.
        unsafe {
            bindings::ib_modify_qp_is_ok(self.to_raw(), next.to_raw(), ty.to_raw(), mask.into())
        }
    }
}

impl_flags!(
    /// The attributes a `modify_qp` sets (`enum ib_qp_attr_mask`). Bits
    /// that name no attribute are kept as given ([`QpAttrMask::unknown`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct QpAttrMask(u32);

    /// One attribute of `modify_qp`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum QpAttr {
        /// `IB_QP_STATE`.
        State = bindings::ib_qp_attr_mask_IB_QP_STATE,
        /// `IB_QP_CUR_STATE`.
        CurState = bindings::ib_qp_attr_mask_IB_QP_CUR_STATE,
        /// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
        EnSqdAsyncNotify = bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY,
        /// `IB_QP_ACCESS_FLAGS`.
        AccessFlags = bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS,
        /// `IB_QP_PKEY_INDEX`.
        PkeyIndex = bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX,
        /// `IB_QP_PORT`.
        Port = bindings::ib_qp_attr_mask_IB_QP_PORT,
        /// `IB_QP_QKEY`.
        Qkey = bindings::ib_qp_attr_mask_IB_QP_QKEY,
        /// `IB_QP_AV`.
        Av = bindings::ib_qp_attr_mask_IB_QP_AV,
        /// `IB_QP_PATH_MTU`.
        PathMtu = bindings::ib_qp_attr_mask_IB_QP_PATH_MTU,
        /// `IB_QP_TIMEOUT`.
        Timeout = bindings::ib_qp_attr_mask_IB_QP_TIMEOUT,
        /// `IB_QP_RETRY_CNT`.
        RetryCnt = bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT,
        /// `IB_QP_RNR_RETRY`.
        RnrRetry = bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY,
        /// `IB_QP_RQ_PSN`.
        RqPsn = bindings::ib_qp_attr_mask_IB_QP_RQ_PSN,
        /// `IB_QP_MAX_QP_RD_ATOMIC`.
        MaxQpRdAtomic = bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC,
        /// `IB_QP_ALT_PATH`.
        AltPath = bindings::ib_qp_attr_mask_IB_QP_ALT_PATH,
        /// `IB_QP_MIN_RNR_TIMER`.
        MinRnrTimer = bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER,
        /// `IB_QP_SQ_PSN`.
        SqPsn = bindings::ib_qp_attr_mask_IB_QP_SQ_PSN,
        /// `IB_QP_MAX_DEST_RD_ATOMIC`.
        MaxDestRdAtomic = bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC,
        /// `IB_QP_PATH_MIG_STATE`.
        PathMigState = bindings::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE,
        /// `IB_QP_CAP`.
        Cap = bindings::ib_qp_attr_mask_IB_QP_CAP,
        /// `IB_QP_DEST_QPN`.
        DestQpn = bindings::ib_qp_attr_mask_IB_QP_DEST_QPN,
    }
);

// The attributes above are ib_core's standard ones, bits 0-20.
const _: () = assert!(QpAttrMask::all_bits() == bindings::ib_qp_attr_mask_IB_QP_ATTR_STANDARD_BITS);

impl QpAttrMask {
    /// The mask of `bits`, as ib_core gives it.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The bits that name no standard attribute (`IB_QP_RATE_LIMIT`, ...).
    pub(crate) fn unknown(self) -> u32 {
        self.0 & !Self::all_bits()
    }
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
    pub(super) fn from_raw(c: &bindings::ib_qp_cap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }

    pub(super) fn write_to(self, c: &mut bindings::ib_qp_cap) {
        c.max_send_wr = self.max_send_wr;
        c.max_recv_wr = self.max_recv_wr;
        c.max_send_sge = self.max_send_sge;
        c.max_recv_sge = self.max_recv_sge;
        c.max_inline_data = self.max_inline_data;
    }
}

/// The attributes of a QP that `modify_qp` sets and `query_qp` reports,
/// as plain values (the fields of `struct ib_qp_attr` but the capacities
/// and the alternate path). `path_mig_state` keeps ib_core's number (an
/// `enum ib_mig_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpAttrs {
    /// The state.
    pub(crate) qp_state: QpState,
    /// Path MTU.
    pub(crate) path_mtu: PathMtu,
    /// Path migration state (`enum ib_mig_state`).
    pub(crate) path_mig_state: u32,
    /// Q_Key.
    pub(crate) qkey: u32,
    /// Receive PSN.
    pub(crate) rq_psn: Psn,
    /// Send PSN.
    pub(crate) sq_psn: Psn,
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
    /// The primary path of a connected QP (`IB_QP_AV`), once given.
    pub(crate) av: Option<AddressVector>,
}

/// A path MTU as `modify_qp` gives it (`enum ib_mtu`). ib_core passes any
/// number, and soft-RoCE keeps and reports any up to its port's, 0
/// included, so the number is kept as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PathMtu(pub(crate) u32);

impl PathMtu {
    /// `IB_MTU_256`, what a new QP of soft-RoCE starts with.
    pub(crate) const MIN: Self = Self(Mtu::Mtu256 as u32);
    /// `IB_MTU_4096`.
    pub(crate) const MAX: Self = Self(Mtu::Mtu4096 as u32);

    /// The MTU in bytes (`ib_mtu_enum_to_int`); `None` for a number that
    /// is no `enum ib_mtu`.
    pub(crate) fn bytes(self) -> Option<usize> {
        (Self::MIN.0..=Self::MAX.0)
            .contains(&self.0)
            // CAST: 1 to 5.
            .then(|| 128 << self.0 as usize)
    }
}

/// A packet sequence number: 24 bits (`BTH_PSN_MASK`), ordered with
/// wrap-around as soft-RoCE's `psn_compare` orders them: `a` is before `b`
/// when it is less than 2^23 behind it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Psn(u32);

impl Psn {
    /// The bits of a PSN.
    pub(crate) const MASK: u32 = 0xff_ffff;

    /// The PSN of the low 24 bits of `v` (the rest is dropped, as
    /// soft-RoCE drops it from a `modify_qp`).
    pub(crate) const fn new(v: u32) -> Self {
        Self(v & Self::MASK)
    }

    /// The number, below 2^24.
    pub(crate) const fn value(self) -> u32 {
        self.0
    }

    /// The PSN after this one.
    pub(crate) const fn next(self) -> Self {
        Self::new(self.0.wrapping_add(1))
    }

    /// Whether `self` comes before `other`, in a window of 2^23 either way
    /// (`rxe_hdr.h:psn_compare` below 0).
    pub(crate) const fn before(self, other: Self) -> bool {
        // CAST: The 24-bit difference, sign-extended from its top bit.
        ((self.0.wrapping_sub(other.0) << 8) as i32) < 0
    }
}

// The wrap-around, checked when the module is built.
const _: () = {
    assert!(Psn::new(0xff_fffe).before(Psn::new(1)));
    assert!(!Psn::new(1).before(Psn::new(0xff_fffe)));
    assert!(Psn::new(5).before(Psn::new(6)) && !Psn::new(6).before(Psn::new(5)));
    assert!(!Psn::new(7).before(Psn::new(7)));
    assert!(Psn::new(0xff_ffff).next().value() == 0);
    assert!(Psn::new(0x1ff_ffff).value() == 0xff_ffff);
};
