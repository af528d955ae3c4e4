// SPDX-License-Identifier: GPL-2.0

//! rv0: a software RoCE device written in Rust.
//!
//! `rdma link add rv0 type rverbs netdev veth0` creates a device bound to a
//! netdev: one RoCE port (v1 and v2 GIDs, filled by ib_core's RoCE GID
//! management from the netdev's addresses) whose state and MTU follow the
//! netdev. It implements the control path of the verbs (device, port and
//! P_Key queries, user contexts, protection domains, address handles, XRC
//! domains) and answers the soft-RoCE user ABI, so rdma-core's rxe provider
//! opens it. Data path verbs (CQ, QP, MR, ...) fail with `EOPNOTSUPP`.
//!
//! - [`device`]: the driver (`ib_device_ops`) and the device's data;
//! - [`ah`]: the table of live address handles (`ah_num`, debugfs dump);
//! - [`link`]: the `rverbs` link type and the netdev events.
//!
//! This layer has no `unsafe` and no `bindings::`: it is written against
//! [`crate::rdma`] and [`crate::net`]. See Documentation/rv0.rst.

pub(crate) mod ah;
pub(crate) mod cq;
pub(crate) mod datapath;
pub(crate) mod device;
pub(crate) mod flush;
pub(crate) mod ids;
pub(crate) mod link;
pub(crate) mod mr;
pub(crate) mod port;
pub(crate) mod qp;
pub(crate) mod receive;
pub(crate) mod tx;
pub(crate) mod wire;
