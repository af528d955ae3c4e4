// SPDX-License-Identifier: GPL-2.0

//! Error codes that ib_core and the network stack return and the kernel
//! crate does not name.
//!
//! C header: [`include/uapi/asm-generic/errno.h`](srctree/include/uapi/asm-generic/errno.h)

use crate::bindings;
use kernel::{
    error::Error,
    ffi::c_int,
    prelude::*, //
};

/// The result of a C function that returns 0 or a negative errno: `Ok` for
/// 0 (and any positive value), the error otherwise.
///
/// `kernel::error::to_result`, but inlined: the kernel crate's is not
/// generic and so is a function call, on every fast path that calls C.
#[inline(always)]
pub(crate) fn to_result(ret: c_int) -> Result {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(())
    }
}

fn errno(code: u32) -> Error {
    // CAST: errno values are small positive numbers.
    Error::from_errno(-(code as i32))
}

/// `EOPNOTSUPP`: the device or driver does not support the operation.
pub(crate) fn eopnotsupp() -> Error {
    errno(bindings::EOPNOTSUPP)
}

/// `ENODATA`: a neighbour is not resolved (yet); a GID entry is empty.
pub(crate) fn enodata() -> Error {
    errno(bindings::ENODATA)
}

/// `EADDRNOTAVAIL`: an address cannot be resolved here.
pub(crate) fn eaddrnotavail() -> Error {
    errno(bindings::EADDRNOTAVAIL)
}

/// `EPROTOTYPE`: a received packet's completion has no GRH where the
/// port's protocol needs one.
pub(crate) fn eprototype() -> Error {
    errno(bindings::EPROTOTYPE)
}
