// SPDX-License-Identifier: GPL-2.0

//! The identity of the running kernel.
//!
//! C header: [`include/linux/utsname.h`](srctree/include/linux/utsname.h)

use crate::bindings;
use kernel::str::{
    CStr,
    CStrExt, //
};

/// Returns the release of the running kernel (`uname -r`).
pub(crate) fn release() -> &'static CStr {
    // SAFETY: `rverbs_kernel_release` returns `init_utsname()->release`,
    // a NUL-terminated string inside the static `init_uts_ns`, valid for the
    // whole life of the kernel.
    unsafe { CStr::from_char_ptr(bindings::rverbs_kernel_release()) }
}
