// SPDX-License-Identifier: GPL-2.0

//! What a work request says, whoever wrote it: its operation
//! ([`WrOpcode`]), its flags ([`SendFlags`]) and its scatter/gather entries
//! ([`Sge`]). A kernel consumer's chain of `struct ib_send_wr` is read
//! through [`crate::rdma::driver::wr`]; a send queue element that soft-RoCE's
//! provider wrote into a ring through [`crate::rdma::rxe_abi::wqe`].
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::impl_flags;

/// The operation of a send work request (`enum ib_wr_opcode`). The user
/// ABI (`enum ib_uverbs_wr_opcode`) has the same numbers for the
/// operations it has (asserted below), so one type reads both.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrOpcode {
    /// `IB_WR_RDMA_WRITE`.
    RdmaWrite = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE,
    /// `IB_WR_RDMA_WRITE_WITH_IMM`.
    RdmaWriteWithImm = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM,
    /// `IB_WR_SEND`.
    Send = bindings::ib_wr_opcode_IB_WR_SEND,
    /// `IB_WR_SEND_WITH_IMM`.
    SendWithImm = bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM,
    /// `IB_WR_RDMA_READ`.
    RdmaRead = bindings::ib_wr_opcode_IB_WR_RDMA_READ,
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    AtomicCmpAndSwp = bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    AtomicFetchAndAdd = bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD,
    /// `IB_WR_LOCAL_INV`.
    LocalInv = bindings::ib_wr_opcode_IB_WR_LOCAL_INV,
    /// `IB_WR_BIND_MW`.
    BindMw = bindings::ib_wr_opcode_IB_WR_BIND_MW,
    /// `IB_WR_SEND_WITH_INV`.
    SendWithInv = bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV,
    /// `IB_WR_LSO`.
    Lso = bindings::ib_wr_opcode_IB_WR_LSO,
    /// `IB_WR_RDMA_READ_WITH_INV`.
    RdmaReadWithInv = bindings::ib_wr_opcode_IB_WR_RDMA_READ_WITH_INV,
    /// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP`.
    MaskedAtomicCmpAndSwp = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
    /// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`.
    MaskedAtomicFetchAndAdd = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_FETCH_AND_ADD,
    /// `IB_WR_FLUSH`.
    Flush = bindings::ib_wr_opcode_IB_WR_FLUSH,
    /// `IB_WR_ATOMIC_WRITE`.
    AtomicWrite = bindings::ib_wr_opcode_IB_WR_ATOMIC_WRITE,
    /// `IB_WR_REG_MR` (kernel consumers only).
    RegMr = bindings::ib_wr_opcode_IB_WR_REG_MR,
    /// `IB_WR_REG_MR_INTEGRITY` (kernel consumers only).
    RegMrIntegrity = bindings::ib_wr_opcode_IB_WR_REG_MR_INTEGRITY,
}

impl WrOpcode {
    /// Every operation, to look a number up in.
    const ALL: [Self; 18] = [
        Self::RdmaWrite,
        Self::RdmaWriteWithImm,
        Self::Send,
        Self::SendWithImm,
        Self::RdmaRead,
        Self::AtomicCmpAndSwp,
        Self::AtomicFetchAndAdd,
        Self::LocalInv,
        Self::BindMw,
        Self::SendWithInv,
        Self::Lso,
        Self::RdmaReadWithInv,
        Self::MaskedAtomicCmpAndSwp,
        Self::MaskedAtomicFetchAndAdd,
        Self::Flush,
        Self::AtomicWrite,
        Self::RegMr,
        Self::RegMrIntegrity,
    ];

    /// The operation numbered `v`; `None` for a number that names none (a
    /// driver-reserved one, or anything a user wrote into a ring).
    pub(crate) fn from_raw(v: u32) -> Option<Self> {
        // CAST: The discriminant of a `repr(u32)` enum.
        Self::ALL.into_iter().find(|op| *op as u32 == v)
    }

    /// Whether the operation carries immediate data.
    pub(crate) fn has_imm(self) -> bool {
        matches!(self, Self::SendWithImm | Self::RdmaWriteWithImm)
    }
}

// The user ABI's numbers are the kernel's (`ib_verbs.h` defines the
// kernel's from them).
const _: () = {
    use bindings::*;
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_RDMA_WRITE == WrOpcode::RdmaWrite as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_SEND == WrOpcode::Send as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_SEND_WITH_IMM == WrOpcode::SendWithImm as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_RDMA_READ == WrOpcode::RdmaRead as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_LOCAL_INV == WrOpcode::LocalInv as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_BIND_MW == WrOpcode::BindMw as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_SEND_WITH_INV == WrOpcode::SendWithInv as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_TSO == WrOpcode::Lso as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_FLUSH == WrOpcode::Flush as u32);
    assert!(ib_uverbs_wr_opcode_IB_UVERBS_WR_ATOMIC_WRITE == WrOpcode::AtomicWrite as u32);
};

/// CAST: The send flags are an `enum` of `int` in C; the bits used are
/// below bit 31.
const fn send_flag(v: i32) -> u32 {
    v as u32
}

impl_flags!(
    /// The flags of a send work request (`IB_SEND_*`). Bits that name no
    /// flag are kept as given ([`SendFlags::unknown`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct SendFlags(u32);

    /// One flag of a send work request.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum SendFlag {
        /// `IB_SEND_FENCE`: wait for earlier reads and atomics.
        Fence = send_flag(bindings::ib_send_flags_IB_SEND_FENCE),
        /// `IB_SEND_SIGNALED`: a completion also on success.
        Signaled = send_flag(bindings::ib_send_flags_IB_SEND_SIGNALED),
        /// `IB_SEND_SOLICITED`: the receiver's solicited event.
        Solicited = send_flag(bindings::ib_send_flags_IB_SEND_SOLICITED),
        /// `IB_SEND_INLINE`: the payload is in the request.
        Inline = send_flag(bindings::ib_send_flags_IB_SEND_INLINE),
        /// `IB_SEND_IP_CSUM`: checksum offload (raw packet QPs).
        IpCsum = send_flag(bindings::ib_send_flags_IB_SEND_IP_CSUM),
    }
);

impl SendFlags {
    /// The flags of `bits`, as a request gives them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The bits that name no flag.
    pub(crate) fn unknown(self) -> u32 {
        self.0 & !Self::all_bits()
    }
}

/// A scatter/gather entry of a work request: `length` bytes at `addr` in
/// the memory region whose local key is `lkey` (`struct ib_sge`, and
/// soft-RoCE's `struct rxe_sge`, laid out alike).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

// `Sge` is `struct ib_sge`, field by field, so a kernel consumer's array of
// them is read in place.
const _: () = {
    use core::mem::{
        align_of,
        offset_of,
        size_of, //
    };
    assert!(size_of::<Sge>() == size_of::<bindings::ib_sge>());
    assert!(align_of::<Sge>() == align_of::<bindings::ib_sge>());
    assert!(offset_of!(Sge, addr) == offset_of!(bindings::ib_sge, addr));
    assert!(offset_of!(Sge, length) == offset_of!(bindings::ib_sge, length));
    assert!(offset_of!(Sge, lkey) == offset_of!(bindings::ib_sge, lkey));
};
