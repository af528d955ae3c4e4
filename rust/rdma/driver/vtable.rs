// SPDX-License-Identifier: GPL-2.0

//! The operations table of a driver (`struct ib_device_ops`), a constant
//! built from its [`Driver`] implementation, and the trampolines in it.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! Every trampoline turns ib_core's raw pointers into the safe types at
//! once, calls the driver and turns the result into ib_core's convention.
//! Each states in `# Safety` what ib_core guarantees for that operation;
//! the one fact they share is that ib_core calls an operation only on a
//! device whose table it is, that is a [`DriverDevice<T>`] made by
//! [`DriverDevice::alloc`], between `ib_set_device_ops` and
//! `dealloc_driver` (the driver's data is initialised all that time).
//!
//! - [`device_ops`]: the device's and ports' operations, and `dealloc_driver`;
//! - [`object_ops`]: constructors and destructors of ucontexts, PDs, AHs and
//!   XRCDs, which keep the driver's data in the objects ([`Object`]);
//! - [`cq_ops`]: completion queues, also [`Object`]s; with them the mmap
//!   operations of [`crate::rdma::mmap`];
//! - [`qp_ops`]: queue pairs, also [`Object`]s;
//! - [`srq_ops`]: shared receive queues, [`Object`]s like CQs (their rings
//!   offered to the process, their event handler revocable);
//! - [`mr_ops`]: memory regions, [`Object`]s that the trampolines allocate
//!   and free themselves (ib_core leaves that to the driver), and memory
//!   windows, [`Object`]s ib_core allocates.

mod cq_ops;
mod device_ops;
mod mr_ops;
mod object_ops;
mod qp_ops;
mod srq_ops;

use super::{device::DriverDevice, object::Object, ops::Driver, unsupported};
use crate::{
    bindings,
    rdma::{
        mmap,
        udata::Udata, //
    },
};
use core::{
    marker::PhantomData,
    mem::size_of, //
};

/// The operations table of driver `T`.
pub(crate) struct Vtable<T: Driver>(PhantomData<T>);

/// The device an operation is called on.
///
/// # Safety
///
/// `device` is a [`DriverDevice<T>`] whose data stays initialised for
/// `'a` (see the module documentation: true for the duration of any
/// operation of `Vtable<T>` but `dealloc_driver`).
unsafe fn dev<'a, T: Driver>(device: *mut bindings::ib_device) -> &'a DriverDevice<T> {
    // SAFETY: `device` is a `DriverDevice<T>` with its data initialised
    // for `'a` (the caller's promise), what `from_raw` needs.
    unsafe { DriverDevice::from_raw(device) }
}

/// The user data of a verb, `None` for a kernel caller.
///
/// # Safety
///
/// `udata` is null or valid for `'a`.
unsafe fn opt_udata<'a>(udata: *mut bindings::ib_udata) -> Option<&'a Udata> {
    // SAFETY: Null or valid for `'a` (the caller's promise), what
    // `from_raw_opt` needs.
    unsafe { Udata::from_raw_opt(udata) }
}

impl<T: Driver> Vtable<T> {
    /// The table, as a constant: `ib_set_device_ops` copies it into the
    /// device. `owner` is set there, from the module. A destructor is in
    /// the table whenever its constructor is.
    pub(crate) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VER,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        get_port_immutable: Some(Self::get_port_immutable),
        get_netdev: if T::HAS_GET_NETDEV {
            Some(Self::get_netdev)
        } else {
            None
        },
        // Both or neither (ib_core calls them only when both are there):
        // the table, a constant, does not build otherwise.
        add_gid: {
            assert!(
                T::HAS_ADD_GID == T::HAS_DEL_GID,
                "a driver implements add_gid and del_gid, or neither"
            );
            if T::HAS_ADD_GID {
                Some(Self::add_gid)
            } else {
                None
            }
        },
        del_gid: if T::HAS_ADD_GID {
            Some(Self::del_gid)
        } else {
            None
        },
        query_pkey: if T::HAS_QUERY_PKEY {
            Some(Self::query_pkey)
        } else {
            None
        },
        get_link_layer: if T::HAS_GET_LINK_LAYER {
            Some(Self::get_link_layer)
        } else {
            None
        },
        alloc_ucontext: if T::HAS_ALLOC_UCONTEXT {
            Some(Self::alloc_ucontext)
        } else {
            None
        },
        dealloc_ucontext: if T::HAS_ALLOC_UCONTEXT {
            Some(Self::dealloc_ucontext)
        } else {
            None
        },
        disassociate_ucontext: if T::HAS_DISASSOCIATE_UCONTEXT {
            Some(Self::disassociate_ucontext)
        } else {
            None
        },
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        create_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        create_user_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        query_ah: if T::HAS_QUERY_AH {
            Some(Self::query_ah)
        } else {
            None
        },
        modify_ah: if T::HAS_MODIFY_AH {
            Some(Self::modify_ah)
        } else {
            None
        },
        destroy_ah: if T::HAS_CREATE_AH {
            Some(Self::destroy_ah)
        } else {
            None
        },
        alloc_xrcd: if T::HAS_ALLOC_XRCD {
            Some(Self::alloc_xrcd)
        } else {
            None
        },
        dealloc_xrcd: if T::HAS_ALLOC_XRCD {
            Some(Self::dealloc_xrcd)
        } else {
            None
        },
        dealloc_driver: Some(Self::dealloc_driver),
        // Mandatory for registration (see `unsupported`).
        create_qp: if T::HAS_CREATE_QP {
            Some(Self::create_qp)
        } else {
            Some(unsupported::create_qp)
        },
        modify_qp: if T::HAS_MODIFY_QP {
            Some(Self::modify_qp)
        } else {
            Some(unsupported::modify_qp)
        },
        query_qp: if T::HAS_QUERY_QP {
            Some(Self::query_qp)
        } else {
            None
        },
        destroy_qp: if T::HAS_CREATE_QP {
            Some(Self::destroy_qp)
        } else {
            Some(unsupported::destroy_qp)
        },
        post_send: if T::HAS_POST_SEND {
            Some(Self::post_send)
        } else {
            Some(unsupported::post_send)
        },
        post_recv: if T::HAS_POST_RECV {
            Some(Self::post_recv)
        } else {
            Some(unsupported::post_recv)
        },
        create_cq: if T::HAS_CREATE_CQ {
            Some(Self::create_cq)
        } else {
            Some(unsupported::create_cq)
        },
        destroy_cq: if T::HAS_CREATE_CQ {
            Some(Self::destroy_cq)
        } else {
            Some(unsupported::destroy_cq)
        },
        req_notify_cq: if T::HAS_REQ_NOTIFY_CQ {
            Some(Self::req_notify_cq)
        } else {
            Some(unsupported::req_notify_cq)
        },
        // Only with `create_cq`, which puts `mmap` in the table: the new
        // ring is mapped as the first was.
        resize_user_cq: if T::HAS_CREATE_CQ && T::HAS_RESIZE_USER_CQ {
            Some(Self::resize_user_cq)
        } else {
            None
        },
        // Kernel CQs only: userspace polls the ring itself.
        poll_cq: Some(unsupported::poll_cq),
        mmap: if T::HAS_CREATE_CQ || T::HAS_CREATE_QP || T::HAS_CREATE_SRQ {
            Some(mmap::mmap)
        } else {
            None
        },
        mmap_free: if T::HAS_CREATE_CQ || T::HAS_CREATE_QP || T::HAS_CREATE_SRQ {
            Some(mmap::mmap_free)
        } else {
            None
        },
        // Userspace posts to the ring itself: no `post_srq_recv`, which
        // disables uverbs' command for it.
        create_srq: if T::HAS_CREATE_SRQ {
            Some(Self::create_srq)
        } else {
            None
        },
        modify_srq: if T::HAS_CREATE_SRQ {
            Some(Self::modify_srq)
        } else {
            None
        },
        query_srq: if T::HAS_CREATE_SRQ {
            Some(Self::query_srq)
        } else {
            None
        },
        destroy_srq: if T::HAS_CREATE_SRQ {
            Some(Self::destroy_srq)
        } else {
            None
        },
        get_dma_mr: Some(unsupported::get_dma_mr),
        reg_user_mr: if T::HAS_REG_USER_MR {
            Some(Self::reg_user_mr)
        } else {
            Some(unsupported::reg_user_mr)
        },
        rereg_user_mr: if T::HAS_REREG_USER_MR {
            Some(Self::rereg_user_mr)
        } else {
            None
        },
        dereg_mr: if T::HAS_REG_USER_MR {
            Some(Self::dereg_mr)
        } else {
            Some(unsupported::dereg_mr)
        },
        alloc_mw: if T::HAS_ALLOC_MW {
            Some(Self::alloc_mw)
        } else {
            None
        },
        dealloc_mw: if T::HAS_ALLOC_MW {
            Some(Self::dealloc_mw)
        } else {
            None
        },
        size_ib_ah: size_of::<Object<bindings::ib_ah, T::Ah>>(),
        size_ib_pd: size_of::<Object<bindings::ib_pd, T::Pd>>(),
        size_ib_ucontext: size_of::<Object<bindings::ib_ucontext, T::Ucontext>>(),
        size_ib_xrcd: size_of::<Object<bindings::ib_xrcd, T::Xrcd>>(),
        size_ib_mw: size_of::<Object<bindings::ib_mw, T::Mw>>(),
        size_ib_cq: size_of::<Object<bindings::ib_cq, cq_ops::CqObject<T::Cq>>>(),
        size_ib_srq: if T::HAS_CREATE_SRQ {
            size_of::<Object<bindings::ib_srq, srq_ops::SrqObject<T::Srq>>>()
        } else {
            0
        },
        // Without `create_qp`, ib_core still allocates the QP before
        // calling the (failing) driver: ib_core's size then.
        size_ib_qp: if T::HAS_CREATE_QP {
            size_of::<Object<bindings::ib_qp, qp_ops::QpObject<T::Qp>>>()
        } else {
            size_of::<bindings::ib_qp>()
        },
        // SAFETY: All-zero is a valid `ib_device_ops`: null pointers,
        // `None` operations, zero sizes.
        ..unsafe { core::mem::zeroed() }
    };
}
