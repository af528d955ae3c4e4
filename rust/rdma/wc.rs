// SPDX-License-Identifier: GPL-2.0

//! Work completions: their status ([`WcStatus`]), operation ([`WcOpcode`])
//! and flags ([`WcFlags`]), and a completion as a user CQ's ring holds it
//! ([`UserWc`], `struct ib_uverbs_wc`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::impl_flags;

/// The status of a work completion (`enum ib_wc_status`).
#[repr(u32)]
#[allow(
    dead_code,
    reason = "ib_core's whole enumeration, which drivers complete with"
)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WcStatus {
    /// `IB_WC_SUCCESS`.
    #[default]
    Success = bindings::ib_wc_status_IB_WC_SUCCESS,
    /// `IB_WC_LOC_LEN_ERR`.
    LocLenErr = bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
    /// `IB_WC_LOC_QP_OP_ERR`.
    LocQpOpErr = bindings::ib_wc_status_IB_WC_LOC_QP_OP_ERR,
    /// `IB_WC_LOC_EEC_OP_ERR`.
    LocEecOpErr = bindings::ib_wc_status_IB_WC_LOC_EEC_OP_ERR,
    /// `IB_WC_LOC_PROT_ERR`.
    LocProtErr = bindings::ib_wc_status_IB_WC_LOC_PROT_ERR,
    /// `IB_WC_WR_FLUSH_ERR`.
    WrFlushErr = bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr = bindings::ib_wc_status_IB_WC_MW_BIND_ERR,
    /// `IB_WC_BAD_RESP_ERR`.
    BadRespErr = bindings::ib_wc_status_IB_WC_BAD_RESP_ERR,
    /// `IB_WC_LOC_ACCESS_ERR`.
    LocAccessErr = bindings::ib_wc_status_IB_WC_LOC_ACCESS_ERR,
    /// `IB_WC_REM_INV_REQ_ERR`.
    RemInvReqErr = bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR,
    /// `IB_WC_REM_ACCESS_ERR`.
    RemAccessErr = bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR,
    /// `IB_WC_REM_OP_ERR`.
    RemOpErr = bindings::ib_wc_status_IB_WC_REM_OP_ERR,
    /// `IB_WC_RETRY_EXC_ERR`.
    RetryExcErr = bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR,
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    RnrRetryExcErr = bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR,
    /// `IB_WC_LOC_RDD_VIOL_ERR`.
    LocRddViolErr = bindings::ib_wc_status_IB_WC_LOC_RDD_VIOL_ERR,
    /// `IB_WC_REM_INV_RD_REQ_ERR`.
    RemInvRdReqErr = bindings::ib_wc_status_IB_WC_REM_INV_RD_REQ_ERR,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr = bindings::ib_wc_status_IB_WC_REM_ABORT_ERR,
    /// `IB_WC_INV_EECN_ERR`.
    InvEecnErr = bindings::ib_wc_status_IB_WC_INV_EECN_ERR,
    /// `IB_WC_INV_EEC_STATE_ERR`.
    InvEecStateErr = bindings::ib_wc_status_IB_WC_INV_EEC_STATE_ERR,
    /// `IB_WC_FATAL_ERR`.
    FatalErr = bindings::ib_wc_status_IB_WC_FATAL_ERR,
    /// `IB_WC_RESP_TIMEOUT_ERR`.
    RespTimeoutErr = bindings::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr = bindings::ib_wc_status_IB_WC_GENERAL_ERR,
}

/// The operation a work completion reports (`enum ib_wc_opcode`).
#[repr(u32)]
#[allow(
    dead_code,
    reason = "ib_core's whole enumeration, which drivers complete with"
)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WcOpcode {
    /// `IB_WC_SEND` (also the zero of a failed completion).
    #[default]
    Send = bindings::ib_wc_opcode_IB_WC_SEND,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite = bindings::ib_wc_opcode_IB_WC_RDMA_WRITE,
    /// `IB_WC_RDMA_READ`.
    RdmaRead = bindings::ib_wc_opcode_IB_WC_RDMA_READ,
    /// `IB_WC_COMP_SWAP`.
    CompSwap = bindings::ib_wc_opcode_IB_WC_COMP_SWAP,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd = bindings::ib_wc_opcode_IB_WC_FETCH_ADD,
    /// `IB_WC_BIND_MW`.
    BindMw = bindings::ib_wc_opcode_IB_WC_BIND_MW,
    /// `IB_WC_LOCAL_INV`.
    LocalInv = bindings::ib_wc_opcode_IB_WC_LOCAL_INV,
    /// `IB_WC_LSO`.
    Lso = bindings::ib_wc_opcode_IB_WC_LSO,
    /// `IB_WC_FLUSH`.
    Flush = bindings::ib_wc_opcode_IB_WC_FLUSH,
    /// `IB_WC_ATOMIC_WRITE`.
    AtomicWrite = bindings::ib_wc_opcode_IB_WC_ATOMIC_WRITE,
    /// `IB_WC_REG_MR`.
    RegMr = bindings::ib_wc_opcode_IB_WC_REG_MR,
    /// `IB_WC_MASKED_COMP_SWAP`.
    MaskedCompSwap = bindings::ib_wc_opcode_IB_WC_MASKED_COMP_SWAP,
    /// `IB_WC_MASKED_FETCH_ADD`.
    MaskedFetchAdd = bindings::ib_wc_opcode_IB_WC_MASKED_FETCH_ADD,
    /// `IB_WC_RECV`.
    Recv = bindings::ib_wc_opcode_IB_WC_RECV,
    /// `IB_WC_RECV_RDMA_WITH_IMM`.
    RecvRdmaWithImm = bindings::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM,
}

impl_flags!(
    /// The flags of a work completion (`IB_WC_*`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct WcFlags(u32);

    /// One flag of a work completion.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum WcFlag {
        /// `IB_WC_GRH`: the receive buffer starts with a GRH.
        Grh = bindings::ib_wc_flags_IB_WC_GRH,
        /// `IB_WC_WITH_IMM`: immediate data is valid.
        WithImm = bindings::ib_wc_flags_IB_WC_WITH_IMM,
        /// `IB_WC_WITH_INVALIDATE`: a key was invalidated.
        WithInvalidate = bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE,
        /// `IB_WC_IP_CSUM_OK`.
        IpCsumOk = bindings::ib_wc_flags_IB_WC_IP_CSUM_OK,
        /// `IB_WC_WITH_SMAC`.
        WithSmac = bindings::ib_wc_flags_IB_WC_WITH_SMAC,
        /// `IB_WC_WITH_VLAN`.
        WithVlan = bindings::ib_wc_flags_IB_WC_WITH_VLAN,
        /// `IB_WC_WITH_NETWORK_HDR_TYPE`.
        WithNetworkHdrType = bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE,
    }
);

/// A completion as a user CQ holds it: `struct ib_uverbs_wc`, which
/// soft-RoCE's provider copies out of the ring.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UserWc {
    pub(crate) wr_id: u64,
    pub(crate) status: WcStatus,
    pub(crate) opcode: WcOpcode,
    pub(crate) byte_len: u32,
    /// Immediate data, as it came on the wire (big endian).
    pub(crate) imm_data: u32,
    pub(crate) qp_num: u32,
    pub(crate) src_qp: u32,
    pub(crate) wc_flags: WcFlags,
    pub(crate) port_num: u8,
}

const _: () = assert!(core::mem::size_of::<bindings::ib_uverbs_wc>() == UserWc::ABI_LEN);

impl UserWc {
    /// The size of `struct ib_uverbs_wc`.
    pub(crate) const ABI_LEN: usize = 48;

    /// The completion of a work request that failed: only the ID, the
    /// status and the QP are valid, the rest is zero (soft-RoCE's).
    pub(crate) fn error(wr_id: u64, status: WcStatus, qp_num: u32) -> Self {
        Self {
            wr_id,
            status,
            qp_num,
            ..Self::default()
        }
    }

    /// The bytes of `struct ib_uverbs_wc`, fields at their offsets
    /// (`include/uapi/rdma/ib_user_verbs.h`), pkey index, LIDs and SL 0.
    pub(crate) fn to_abi(self) -> [u8; Self::ABI_LEN] {
        let mut b = [0u8; Self::ABI_LEN];
        b[0..8].copy_from_slice(&self.wr_id.to_ne_bytes());
        // CAST: The discriminants of `repr(u32)` enums.
        b[8..12].copy_from_slice(&(self.status as u32).to_ne_bytes());
        b[12..16].copy_from_slice(&(self.opcode as u32).to_ne_bytes());
        b[20..24].copy_from_slice(&self.byte_len.to_ne_bytes());
        b[24..28].copy_from_slice(&self.imm_data.to_ne_bytes());
        b[28..32].copy_from_slice(&self.qp_num.to_ne_bytes());
        b[32..36].copy_from_slice(&self.src_qp.to_ne_bytes());
        b[36..40].copy_from_slice(&u32::from(self.wc_flags).to_ne_bytes());
        b[46] = self.port_num;
        b
    }
}

/// A work completion as ib_core's consumers hand it on (`struct ib_wc`),
/// to read: what a received packet's reply address is made from.
///
/// # Invariants
///
/// The wrapped `struct ib_wc` is valid and not written while a reference
/// to it exists.
#[repr(transparent)]
pub(crate) struct Wc(kernel::types::Opaque<bindings::ib_wc>);

impl Wc {
    /// Returns the completion behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `struct ib_wc` that nobody writes during the
    /// lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *const bindings::ib_wc) -> &'a Self {
        // SAFETY: `Wc` is transparent over `ib_wc`; the rest is the
        // caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// The C struct. A completion is its consumer's private copy (a CQ
    /// poll's array, a MAD's receive buffer), read-only while the
    /// reference lives (type invariant).
    fn raw(&self) -> &bindings::ib_wc {
        // SAFETY: By the type invariant the completion is valid and not
        // written while we hold a reference.
        unsafe { &*self.0.get() }
    }

    /// Whether `flag` is set in `wc_flags`.
    pub(crate) fn has_flag(&self, flag: WcFlag) -> bool {
        // CAST: `wc_flags` is a C `int` of `IB_WC_*` bits.
        (self.raw().wc_flags as u32) & (flag as u32) != 0
    }

    /// The network header type (`enum rdma_network_type`), valid with
    /// [`WcFlag::WithNetworkHdrType`].
    pub(crate) fn network_hdr_type(&self) -> u8 {
        self.raw().network_hdr_type
    }

    /// The VLAN ID, valid with [`WcFlag::WithVlan`].
    pub(crate) fn vlan_id(&self) -> u16 {
        self.raw().vlan_id
    }

    /// The service level.
    pub(crate) fn sl(&self) -> u8 {
        self.raw().sl
    }

    /// The source LID (IB and OPA).
    pub(crate) fn slid(&self) -> u32 {
        self.raw().slid
    }

    /// The destination LID's path bits (IB and OPA).
    pub(crate) fn dlid_path_bits(&self) -> u8 {
        self.raw().dlid_path_bits
    }
}
