// SPDX-License-Identifier: GPL-2.0

//! The operations ib_core requires of every device that this abstraction
//! does not model yet (QPs, MRs, `poll_cq` of kernel CQs, and CQs for a
//! driver without them): they fail with `EOPNOTSUPP`.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! `ib_device_check_mandatory` refuses a device without them. They do not
//! depend on the driver, so one copy serves every driver; none of them
//! touches its arguments, so they are safe to call with any.

use crate::{
    bindings,
    errno::eopnotsupp, //
};
use kernel::ffi::c_int;

fn unsupported() -> c_int {
    eopnotsupp().to_errno()
}

/// `ib_device_ops.create_qp`.
pub(super) extern "C" fn create_qp(
    _qp: *mut bindings::ib_qp,
    _init_attr: *mut bindings::ib_qp_init_attr,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.modify_qp`.
pub(super) extern "C" fn modify_qp(
    _qp: *mut bindings::ib_qp,
    _attr: *mut bindings::ib_qp_attr,
    _mask: c_int,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.destroy_qp`.
pub(super) extern "C" fn destroy_qp(
    _qp: *mut bindings::ib_qp,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.post_send`.
pub(super) extern "C" fn post_send(
    _qp: *mut bindings::ib_qp,
    _wr: *const bindings::ib_send_wr,
    _bad_wr: *mut *const bindings::ib_send_wr,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.post_recv`.
pub(super) extern "C" fn post_recv(
    _qp: *mut bindings::ib_qp,
    _wr: *const bindings::ib_recv_wr,
    _bad_wr: *mut *const bindings::ib_recv_wr,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.create_cq`.
pub(super) extern "C" fn create_cq(
    _cq: *mut bindings::ib_cq,
    _attr: *const bindings::ib_cq_init_attr,
    _attrs: *mut bindings::uverbs_attr_bundle,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.destroy_cq`.
pub(super) extern "C" fn destroy_cq(
    _cq: *mut bindings::ib_cq,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.poll_cq`.
pub(super) extern "C" fn poll_cq(
    _cq: *mut bindings::ib_cq,
    _num_entries: c_int,
    _wc: *mut bindings::ib_wc,
) -> c_int {
    unsupported()
}

/// `ib_device_ops.req_notify_cq`.
pub(super) extern "C" fn req_notify_cq(_cq: *mut bindings::ib_cq, _flags: u32) -> c_int {
    unsupported()
}

/// `ib_device_ops.get_dma_mr`.
pub(super) extern "C" fn get_dma_mr(
    _pd: *mut bindings::ib_pd,
    _access: c_int,
) -> *mut bindings::ib_mr {
    eopnotsupp().to_ptr()
}

/// `ib_device_ops.reg_user_mr`.
pub(super) extern "C" fn reg_user_mr(
    _pd: *mut bindings::ib_pd,
    _start: u64,
    _length: u64,
    _virt_addr: u64,
    _access: c_int,
    _dmah: *mut bindings::ib_dmah,
    _udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_mr {
    eopnotsupp().to_ptr()
}

/// `ib_device_ops.dereg_mr`.
pub(super) extern "C" fn dereg_mr(
    _mr: *mut bindings::ib_mr,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    unsupported()
}
