// SPDX-License-Identifier: GPL-2.0

//! `extern "C"` entry points with ib_core's signatures.
//!
//! Each one turns the raw pointers of ib_core's contract into the safe
//! types of [`crate::rdma`] at once, calls the Rust core and turns the
//! result back into ib_core's convention (object or `ERR_PTR`, 0 or
//! negative errno).
//!
//! They are reached through the exported C functions of `exports.c`
//! (`rverbs_create_user_ah` calls `rverbs_rust_create_user_ah`, ...): the
//! compiler gives C functions the `__fentry__` call that ftrace, kprobes
//! and BPF need, which this kernel's Rust code does not have
//! (`Documentation/tracing-rust-functions.md`), so the entry points of the
//! Rust core can be traced.
//!
//! C headers: [`include/rverbs.h`](../../include/rverbs.h),
//! [`rust/takeover/exports.h`](exports.h)

use crate::{
    bindings,
    rdma::{
        ah::AhHandle,
        ah_attr::AhAttr,
        device::Device,
        pd::Pd,
        qp_modify::{
            IbCoreCalls,
            QpModifyAttr,
            VerbsQp, //
        },
        udata::Udata,
        wc::Wc,
        xrcd::{
            Inode,
            XrcdHandle, //
        },
    },
    verbs,
};

// The livepatch replaces ib_core's functions with these, so each must have
// exactly the signature of the function it replaces: a mismatch would not
// be seen by the livepatch (it matches by name) and would corrupt the
// caller's arguments at run time. Each array below only type-checks if
// both functions coerce to the same function pointer type, the one of the
// ib_core function as `include/rdma/ib_verbs.h` declares it; the C side
// checks the same in `rverbs_takeover.c`.

/// The signature of `rdma_create_user_ah`.
type CreateUserAhFn = unsafe extern "C" fn(
    *mut bindings::ib_pd,
    *mut bindings::rdma_ah_attr,
    *mut bindings::ib_udata,
) -> *mut bindings::ib_ah;
const _: [CreateUserAhFn; 2] = [bindings::rdma_create_user_ah, rverbs_rust_create_user_ah];

/// The signature of `rdma_destroy_ah_user`.
type DestroyAhUserFn =
    unsafe extern "C" fn(*mut bindings::ib_ah, u32, *mut bindings::ib_udata) -> core::ffi::c_int;
const _: [DestroyAhUserFn; 2] = [bindings::rdma_destroy_ah_user, rverbs_rust_destroy_ah_user];

/// The signature of `ib_alloc_xrcd_user`.
type AllocXrcdUserFn = unsafe extern "C" fn(
    *mut bindings::ib_device,
    *mut bindings::inode,
    *mut bindings::ib_udata,
) -> *mut bindings::ib_xrcd;
const _: [AllocXrcdUserFn; 2] = [bindings::ib_alloc_xrcd_user, rverbs_rust_alloc_xrcd_user];

/// The signature of `ib_dealloc_xrcd_user`.
type DeallocXrcdUserFn =
    unsafe extern "C" fn(*mut bindings::ib_xrcd, *mut bindings::ib_udata) -> core::ffi::c_int;
const _: [DeallocXrcdUserFn; 2] = [
    bindings::ib_dealloc_xrcd_user,
    rverbs_rust_dealloc_xrcd_user,
];

/// The signature of `ib_init_ah_attr_from_wc`.
type InitAhAttrFromWcFn = unsafe extern "C" fn(
    *mut bindings::ib_device,
    u32,
    *const bindings::ib_wc,
    *const bindings::ib_grh,
    *mut bindings::rdma_ah_attr,
) -> core::ffi::c_int;
const _: [InitAhAttrFromWcFn; 2] = [
    bindings::ib_init_ah_attr_from_wc,
    rverbs_rust_init_ah_attr_from_wc,
];

/// The signature of `ib_modify_qp_with_udata` (the takeover's wrapper,
/// which adds the calls table, has it: `rverbs_takeover.c` checks that).
type ModifyQpWithUdataFn = unsafe extern "C" fn(
    *mut bindings::ib_qp,
    *mut bindings::ib_qp_attr,
    core::ffi::c_int,
    *mut bindings::ib_udata,
) -> core::ffi::c_int;
const _: ModifyQpWithUdataFn = bindings::ib_modify_qp_with_udata;

// The network header is read as the 40 bytes of a GRH.
const _: () = assert!(core::mem::size_of::<bindings::ib_grh>() == verbs::wc::GRH_LEN);

/// `rdma_create_user_ah` in Rust.
///
/// # Safety
///
/// ib_core's contract for `rdma_create_user_ah`:
/// - `pd` is a valid PD of a registered device, alive during the call,
/// - `ah_attr` is a valid address vector owned by the caller, whose
///   `grh.sgid_attr` is null or referenced,
/// - `udata` is null (kernel caller) or valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_create_user_ah(
    pd: *mut bindings::ib_pd,
    ah_attr: *mut bindings::rdma_ah_attr,
    udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_ah {
    // SAFETY: `Pd::from_raw` needs a valid PD alive for the call, which
    // ib_core's contract gives; `AhAttr::from_raw` an attribute the caller
    // owns with a null or referenced source GID entry; `from_raw_opt`
    // null or valid udata: the three `# Safety` items in that order.
    let (pd, attr, udata) = unsafe {
        (
            Pd::from_raw(pd),
            AhAttr::from_raw(ah_attr),
            Udata::from_raw_opt(udata),
        )
    };
    match verbs::ah::create_user_ah(pd, attr, udata) {
        Ok(ah) => ah.into_raw(),
        Err(e) => e.to_ptr(),
    }
}

/// `rdma_destroy_ah_user` in Rust.
///
/// # Safety
///
/// `ah` is a live address handle created through ib_core (or this core),
/// owned by the caller; `udata` is null or valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_destroy_ah_user(
    ah: *mut bindings::ib_ah,
    flags: u32,
    udata: *mut bindings::ib_udata,
) -> core::ffi::c_int {
    // SAFETY: `AhHandle::from_raw` takes over a live AH the caller owns
    // and gives up with this call; `from_raw_opt` needs null or valid
    // udata: both as `# Safety` says.
    let (ah, udata) = unsafe { (AhHandle::from_raw(ah), Udata::from_raw_opt(udata)) };
    match verbs::ah::destroy_ah_user(ah, flags, udata) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `ib_alloc_xrcd_user` in Rust.
///
/// # Safety
///
/// `device` is a registered device, alive during the call; `inode` is null
/// or a referenced inode; `udata` is null or valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_alloc_xrcd_user(
    device: *mut bindings::ib_device,
    inode: *mut bindings::inode,
    udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_xrcd {
    // SAFETY: `Device::from_raw` needs a registered device alive for the
    // call; `Inode::from_raw_opt` null or a referenced inode (not taken
    // over); `from_raw_opt` null or valid udata: `# Safety`'s three items.
    let (device, inode, udata) = unsafe {
        (
            Device::from_raw(device),
            Inode::from_raw_opt(inode),
            Udata::from_raw_opt(udata),
        )
    };
    match verbs::xrcd::alloc_xrcd_user(device, inode, udata) {
        Ok(xrcd) => xrcd.into_raw(),
        Err(e) => e.to_ptr(),
    }
}

/// `ib_dealloc_xrcd_user` in Rust.
///
/// # Safety
///
/// `xrcd` is a live XRC domain owned by the caller; `udata` is null or
/// valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_dealloc_xrcd_user(
    xrcd: *mut bindings::ib_xrcd,
    udata: *mut bindings::ib_udata,
) -> core::ffi::c_int {
    // SAFETY: `XrcdHandle::from_raw` takes over a live XRCD the caller
    // owns and gives up with this call; `from_raw_opt` needs null or valid
    // udata: both as `# Safety` says.
    let (xrcd, udata) = unsafe { (XrcdHandle::from_raw(xrcd), Udata::from_raw_opt(udata)) };
    match verbs::xrcd::dealloc_xrcd_user(xrcd, udata) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `ib_init_ah_attr_from_wc` in Rust.
///
/// # Safety
///
/// ib_core's contract for `ib_init_ah_attr_from_wc`:
/// - `device` is a registered device, alive during the call,
/// - `wc` is a valid work completion and `grh` the 40 bytes of network
///   header received with it, neither written during the call,
/// - `ah_attr` is valid for writes and owned by the caller, and holds no
///   GID entry reference (it is an out-parameter, overwritten).
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_init_ah_attr_from_wc(
    device: *mut bindings::ib_device,
    port_num: u32,
    wc: *const bindings::ib_wc,
    grh: *const bindings::ib_grh,
    ah_attr: *mut bindings::rdma_ah_attr,
) -> core::ffi::c_int {
    // C would oops on a null header or completion; here they are refused
    // before anything is written.
    if wc.is_null() || grh.is_null() || ah_attr.is_null() {
        return kernel::error::code::EINVAL.to_errno();
    }
    // SAFETY: `Device::from_raw` needs a registered device alive for the
    // call; `Wc::from_raw` a completion nobody writes during it;
    // `zeroed_from_raw` an attribute the caller owns, valid for writes,
    // holding no reference; and the header is 40 readable bytes (checked
    // at build time to be `ib_grh`'s size): `# Safety`'s items in order.
    let (device, wc, attr, hdr) = unsafe {
        (
            Device::from_raw(device),
            Wc::from_raw(wc),
            AhAttr::zeroed_from_raw(ah_attr),
            &*grh.cast::<[u8; verbs::wc::GRH_LEN]>(),
        )
    };
    match verbs::wc::init_ah_attr_from_wc(device, port_num, wc, hdr, attr) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `ib_modify_qp_with_udata` in Rust, with ib_core's unexported functions
/// in `calls`.
///
/// # Safety
///
/// ib_core's contract for `ib_modify_qp_with_udata`:
/// - `ib_qp` is a live QP of a registered device, which the caller holds
///   (ib_uverbs holds its object) for the call,
/// - `attr` is the caller's own, valid for reads and writes, its two
///   address vectors without GID entry references of their own,
/// - `udata` is null (kernel caller) or valid for the call;
///
/// and `calls` is null or a table of the takeover, unchanged during the
/// call, whose functions are ib_core's of the same names.
#[no_mangle]
pub(crate) unsafe extern "C" fn rverbs_rust_modify_qp_with_udata(
    ib_qp: *mut bindings::ib_qp,
    attr: *mut bindings::ib_qp_attr,
    attr_mask: core::ffi::c_int,
    udata: *mut bindings::ib_udata,
    calls: *const bindings::rverbs_ib_core_calls,
) -> core::ffi::c_int {
    if ib_qp.is_null() || attr.is_null() {
        return kernel::error::code::EINVAL.to_errno();
    }
    // SAFETY: `IbCoreCalls::from_raw` takes null or a valid table of
    // ib_core's functions (the last item of `# Safety`).
    let calls = match unsafe { IbCoreCalls::from_raw(calls) } {
        Ok(calls) => calls,
        Err(e) => return e.to_errno(),
    };
    // SAFETY: `VerbsQp::from_raw` needs a live QP the caller holds, which
    // ib_core may modify as ib_core does; `QpModifyAttr::from_raw` the
    // caller's own attributes with unreferenced or caller-owned GID
    // entries; `from_raw_opt` null or valid udata: `# Safety`'s items.
    let (qp, attr, udata) = unsafe {
        (
            VerbsQp::from_raw(ib_qp),
            QpModifyAttr::from_raw(attr),
            Udata::from_raw_opt(udata),
        )
    };
    // CAST: ib_core's mask is an `int` of `enum ib_qp_attr_mask` bits.
    let attr_mask = attr_mask as u32;
    match verbs::qp::modify_qp_with_udata(qp, attr, attr_mask, udata, calls) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
