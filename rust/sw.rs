// SPDX-License-Identifier: GPL-2.0

//! rv0: a software RoCE device written in Rust.
//!
//! `rdma link add rv0 type rverbs netdev veth0` creates a device bound to a
//! netdev: one RoCE port (v1 and v2 GIDs, filled by ib_core's RoCE GID
//! management from the netdev's addresses) whose state and MTU follow the
//! netdev. It answers the soft-RoCE user ABI, so rdma-core's rxe provider
//! opens it: the control path of the verbs (device, port and P_Key
//! queries, user contexts, protection domains, address handles, XRC
//! domains), user CQs, UD QPs and user MRs, and UD traffic within the
//! device and as RoCE v2 on the wire. RC/UC QPs, SRQs, memory windows,
//! multicast and kernel CQs/QPs fail with `EOPNOTSUPP`.
//!
//! - [`device`]: the driver's type and the device's data; [`driver`]: its
//!   operations (`impl Driver`), dispatching to the objects' modules;
//! - [`ah`], [`cq`], [`qp`], [`mr`], [`ids`]: the objects and their numbers;
//! - [`datapath`], [`receive`], [`flush`], [`tx`], [`wire`], [`xmit`]:
//!   sending, receiving, flushing in error, transmit backpressure, the
//!   packets, handing one to the IP layer;
//! - [`rc`]: reliable connections (`rc=1`); [`sge`]: the walk of a work
//!   request's buffers;
//! - [`port`]: the netdevs of the devices, where received packets come in;
//! - [`link`]: the `rverbs` link type and the netdev events.
//!
//! This layer has no `unsafe` and no `bindings::`: it is written against
//! [`crate::rdma`] and [`crate::net`]. See Documentation/rv0.rst.

pub(crate) mod ah;
pub(crate) mod cq;
pub(crate) mod datapath;
pub(crate) mod device;
pub(crate) mod driver;
pub(crate) mod flush;
pub(crate) mod ids;
pub(crate) mod link;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod port;
pub(crate) mod qp;
pub(crate) mod rc;
pub(crate) mod receive;
pub(crate) mod sge;
pub(crate) mod srq;
pub(crate) mod tx;
pub(crate) mod wire;
pub(crate) mod xmit;
