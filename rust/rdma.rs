// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over ib_core, the RDMA core of the kernel.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! Mostly one C object per file: a `#[repr(transparent)]` wrapper of the C
//! struct, reached from a raw pointer only through an `unsafe fn from_raw`
//! whose safety section states what the C caller guarantees; the requests
//! a driver answers (`CqCreate`, `QpCreate`, ...), views valid for one
//! call. Besides: the driver side of ib_core ([`driver`]), work requests
//! and completions ([`wr`], [`wc`]), the memory a process maps ([`mmap`]),
//! soft-RoCE's user ABI for the drivers that speak it ([`rxe_abi`]), the
//! tables the data path reads under RCU ([`table`]) and the gates that
//! fence its uses out of a destroyed object ([`gate`]). Everything above this layer (`verbs`, `sw`) is
//! written without `unsafe` and without `bindings::`.

pub(crate) mod ah;
pub(crate) mod ah_attr;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod driver;
pub(crate) mod gate;
pub(crate) mod gid;
pub(crate) mod gid_attr;
pub(crate) mod gid_cache;
pub(crate) mod handlers;
pub(crate) mod link;
pub(crate) mod mmap;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod pd;
pub(crate) mod qp;
pub(crate) mod qp_modify;
pub(crate) mod rxe_abi;
pub(crate) mod srq;
pub(crate) mod table;
pub(crate) mod udata;
pub(crate) mod umem;
pub(crate) mod wc;
pub(crate) mod wr;
pub(crate) mod xrcd;

/// Lets other tasks run (`cond_resched`), between work items of a loop
/// that userspace can make long. Process context only: it may sleep.
pub(crate) fn cond_resched() {
    // SAFETY: No preconditions beyond the sleeping context documented.
    unsafe { crate::bindings::rverbs_cond_resched() }
}
