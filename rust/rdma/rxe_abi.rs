// SPDX-License-Identifier: GPL-2.0

//! Soft-RoCE's user ABI, for a driver whose devices rdma-core's unmodified
//! rxe provider drives: the queues shared with userspace
//! ([`ring`]), the work queue elements the provider writes into them
//! ([`wqe`]) and the driver id that selects the provider.
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)
//!
//! Nothing here is a device's: a driver builds its queues from
//! [`ring::UserQueue`] and reads what userspace posted through
//! [`wqe::SendWqe`] and [`wqe::RecvWqe`], each a view of a copied slot
//! whose every field is only a claim.

pub(crate) mod ring;
pub(crate) mod wqe;

/// `RDMA_DRIVER_RXE`: the driver id of soft-RoCE, which selects rdma-core's
/// rxe provider.
pub(crate) const RDMA_DRIVER_RXE: u32 = crate::bindings::rdma_driver_id_RDMA_DRIVER_RXE;
