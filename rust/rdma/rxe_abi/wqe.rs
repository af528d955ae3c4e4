// SPDX-License-Identifier: GPL-2.0

//! Soft-RoCE's work queue elements as a driver reads them from a queue's
//! slot: the send WQE (`struct rxe_send_wqe`), the receive WQE
//! (`struct rxe_recv_wqe`) and their scatter/gather entries, in the types
//! of [`crate::rdma::wr`]. Every read is bounded by the slot; nothing in it
//! is trusted.
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)

use crate::{
    bindings,
    rdma::wr::{
        SendFlags,
        Sge,
        WrOpcode, //
    },
};
use core::mem::size_of;

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
        rxe_send_wr__bindgen_ty_2__bindgen_ty_1 as rxe_flush_wr,
        rxe_send_wr__bindgen_ty_2__bindgen_ty_2 as rxe_rdma_wr,
        rxe_send_wr__bindgen_ty_2__bindgen_ty_3 as rxe_atomic_wr,
        rxe_send_wr__bindgen_ty_2__bindgen_ty_4 as rxe_ud_wr,
        rxe_send_wr__bindgen_ty_2__bindgen_ty_5 as rxe_mw_wr,
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
    pub(super) const REMOTE_ADDR: usize = UD + offset_of!(rxe_rdma_wr, remote_addr);
    pub(super) const RKEY: usize = UD + offset_of!(rxe_rdma_wr, rkey);
    pub(super) const COMPARE_ADD: usize = UD + offset_of!(rxe_atomic_wr, compare_add);
    pub(super) const SWAP: usize = UD + offset_of!(rxe_atomic_wr, swap);
    pub(super) const ATOMIC_RKEY: usize = UD + offset_of!(rxe_atomic_wr, rkey);
    pub(super) const FLUSH_RKEY: usize = UD + offset_of!(rxe_flush_wr, rkey);
    pub(super) const FLUSH_TYPE: usize = UD + offset_of!(rxe_flush_wr, type_);
    pub(super) const FLUSH_LEVEL: usize = UD + offset_of!(rxe_flush_wr, level);
    pub(super) const MW_ADDR: usize = UD + offset_of!(rxe_mw_wr, addr);
    pub(super) const MW_LENGTH: usize = UD + offset_of!(rxe_mw_wr, length);
    pub(super) const MW_MR_LKEY: usize = UD + offset_of!(rxe_mw_wr, mr_lkey);
    pub(super) const MW_MW_RKEY: usize = UD + offset_of!(rxe_mw_wr, mw_rkey);
    pub(super) const MW_RKEY: usize = UD + offset_of!(rxe_mw_wr, rkey);
    pub(super) const MW_ACCESS: usize = UD + offset_of!(rxe_mw_wr, access);
    const SEND_DMA: usize = offset_of!(rxe_send_wqe, dma);
    pub(super) const SEND_LENGTH: usize = SEND_DMA + offset_of!(rxe_dma_info, length);
    pub(super) const SEND_NUM_SGE: usize = SEND_DMA + offset_of!(rxe_dma_info, num_sge);
    pub(super) const SEND_SGE: usize = SEND_DMA + size_of::<rxe_dma_info>();
    pub(super) const RECV_WR_ID: usize = offset_of!(rxe_recv_wqe, wr_id);
    const RECV_DMA: usize = offset_of!(rxe_recv_wqe, dma);
    pub(super) const RECV_RESID: usize = RECV_DMA + offset_of!(rxe_dma_info, resid);
    pub(super) const RECV_NUM_SGE: usize = RECV_DMA + offset_of!(rxe_dma_info, num_sge);
    pub(super) const RECV_SGE: usize = RECV_DMA + size_of::<rxe_dma_info>();
    pub(super) const SGE_ADDR: usize = offset_of!(rxe_sge, addr);
    pub(super) const SGE_LENGTH: usize = offset_of!(rxe_sge, length);
    pub(super) const SGE_LKEY: usize = offset_of!(rxe_sge, lkey);
    pub(super) const SGE: usize = size_of::<rxe_sge>();

    // The ABI as soft-RoCE's header lays it out (`rdma_user_rxe.h`).
    const _: () = assert!(OPCODE == 12 && REMOTE_QPN == 24 && AH_NUM == 36);
    const _: () = assert!(REMOTE_ADDR == 24 && RKEY == 32);
    const _: () = assert!(FLUSH_RKEY == 36 && FLUSH_TYPE == 40 && FLUSH_LEVEL == 41);
    const _: () = assert!(MW_ADDR == 24 && MW_LENGTH == 32 && MW_MR_LKEY == 40 && MW_ACCESS == 52);
    const _: () = assert!(SEND_LENGTH == 184 && SEND_NUM_SGE == 196 && SEND_SGE == 208);
    const _: () = assert!(RECV_RESID == 20 && RECV_NUM_SGE == 28 && RECV_SGE == 40 && SGE == 16);
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

/// What a bind work request (`IB_WR_BIND_MW`) asks for, as written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MwBind {
    /// The window's range: its first byte's address in the region, and
    /// its length (0 unbinds a type 1 window).
    pub(crate) addr: u64,
    pub(crate) length: u64,
    /// The L_Key of the region bound to.
    pub(crate) mr_lkey: u32,
    /// The window's R_Key now, and the one it gets (only its low 8 bits
    /// are taken).
    pub(crate) mw_rkey: u32,
    pub(crate) rkey: u32,
    /// The access flags given (`enum ib_access_flags`).
    pub(crate) access: u32,
}

/// A send work request as soft-RoCE's provider writes it
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

    /// The operation (`enum ib_uverbs_wr_opcode`), `None` for a number
    /// that names none.
    pub(crate) fn opcode(&self) -> Option<WrOpcode> {
        WrOpcode::from_raw(u32_at(self.0, wqe_layout::OPCODE))
    }

    pub(crate) fn send_flags(&self) -> SendFlags {
        SendFlags::from_bits(u32_at(self.0, wqe_layout::SEND_FLAGS))
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

    /// The remote address of an RDMA operation.
    pub(crate) fn remote_addr(&self) -> u64 {
        u64_at(self.0, wqe_layout::REMOTE_ADDR)
    }

    /// The remote key of an RDMA operation.
    pub(crate) fn rkey(&self) -> u32 {
        u32_at(self.0, wqe_layout::RKEY)
    }

    /// An atomic's compare value (compare-and-swap) or the value added
    /// (fetch-and-add).
    pub(crate) fn compare_add(&self) -> u64 {
        u64_at(self.0, wqe_layout::COMPARE_ADD)
    }

    /// A compare-and-swap's value stored.
    pub(crate) fn swap(&self) -> u64 {
        u64_at(self.0, wqe_layout::SWAP)
    }

    /// The remote key of an atomic (after its values in the ABI).
    pub(crate) fn atomic_rkey(&self) -> u32 {
        u32_at(self.0, wqe_layout::ATOMIC_RKEY)
    }

    /// The R_Key to invalidate (`ex.invalidate_rkey`, where immediate data
    /// is for other operations): of `IB_WR_LOCAL_INV` and
    /// `IB_WR_SEND_WITH_INV`.
    pub(crate) fn invalidate_rkey(&self) -> u32 {
        u32_at(self.0, wqe_layout::IMM_DATA)
    }

    /// A FLUSH's remote key, placement type (`IB_FLUSH_GLOBAL`,
    /// `IB_FLUSH_PERSISTENT`) and selectivity level (`IB_FLUSH_RANGE`,
    /// `IB_FLUSH_MR`) (`wr.flush`; its address is [`SendWqe::remote_addr`],
    /// its length [`SendWqe::length`]).
    pub(crate) fn flush(&self) -> (u32, u8, u8) {
        let byte = |off: usize| self.0.get(off).copied().unwrap_or(0);
        (
            u32_at(self.0, wqe_layout::FLUSH_RKEY),
            byte(wqe_layout::FLUSH_TYPE),
            byte(wqe_layout::FLUSH_LEVEL),
        )
    }

    /// What `IB_WR_BIND_MW` binds (`wr.mw`).
    pub(crate) fn bind(&self) -> MwBind {
        MwBind {
            addr: u64_at(self.0, wqe_layout::MW_ADDR),
            length: u64_at(self.0, wqe_layout::MW_LENGTH),
            mr_lkey: u32_at(self.0, wqe_layout::MW_MR_LKEY),
            mw_rkey: u32_at(self.0, wqe_layout::MW_MW_RKEY),
            rkey: u32_at(self.0, wqe_layout::MW_RKEY),
            access: u32_at(self.0, wqe_layout::MW_ACCESS),
        }
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

    /// The bytes the work request takes, as its poster says (`dma.resid`:
    /// rdma-core's provider writes the sum of the SGEs' lengths).
    pub(crate) fn resid(&self) -> u32 {
        u32_at(self.0, wqe_layout::RECV_RESID)
    }

    /// SGE `i`, `None` past the slot.
    pub(crate) fn sge(&self, i: u32) -> Option<Sge> {
        sge_at(self.0, wqe_layout::RECV_SGE, i)
    }
}
