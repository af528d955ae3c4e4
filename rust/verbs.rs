// SPDX-License-Identifier: GPL-2.0

//! The verbs core for address handles and XRC domains, in Rust.
//!
//! The same contract as `drivers/infiniband/core/verbs.c` of the target
//! kernel, function for function:
//!
//! | ib_core (C)              | here                      |
//! |--------------------------|---------------------------|
//! | `rdma_create_user_ah`    | [`ah::create_user_ah`]    |
//! | `rdma_destroy_ah_user`   | [`ah::destroy_ah_user`]   |
//! | `ib_alloc_xrcd_user`     | [`xrcd::alloc_xrcd_user`] |
//! | `ib_dealloc_xrcd_user`   | [`xrcd::dealloc_xrcd_user`] |
//! | `ib_init_ah_attr_from_wc` | [`wc::init_ah_attr_from_wc`] |
//! | `ib_modify_qp_with_udata` | [`qp::modify_qp_with_udata`] |
//!
//! with the same checks in the same order, the same error codes and the
//! same side effects (GID entry references, `pd->usecnt`, object sizes of
//! the driver). The RoCE destination MAC is resolved by [`dmac`], with a
//! neighbour lookup of its own instead of ib_core's workqueue.
//!
//! This layer has no `unsafe` and no `bindings::`: it is written against
//! the abstractions of [`crate::rdma`] and [`crate::net`].

pub(crate) mod ah;
pub(crate) mod dmac;
pub(crate) mod qp;
pub(crate) mod stats;
pub(crate) mod wc;
pub(crate) mod xrcd;
