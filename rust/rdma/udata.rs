// SPDX-License-Identifier: GPL-2.0

//! Driver-specific user data of a verb (`struct ib_udata`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::{
    prelude::*,
    types::Opaque,
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// The input and output buffers that userspace passed with a verb, for the
/// driver. The core only hands it on.
///
/// # Invariants
///
/// The wrapped `struct ib_udata` is valid for as long as a reference to it
/// exists.
#[repr(transparent)]
pub(crate) struct Udata(Opaque<bindings::ib_udata>);

impl Udata {
    /// Returns the user data behind a raw pointer, `None` for a kernel call.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or points to a valid `struct ib_udata` for the
    /// lifetime `'a`.
    pub(crate) unsafe fn from_raw_opt<'a>(ptr: *mut bindings::ib_udata) -> Option<&'a Self> {
        // SAFETY: `Udata` is transparent over `ib_udata`; validity and
        // lifetime are the caller's promise.
        unsafe { ptr.cast::<Self>().as_ref() }
    }

    /// Returns the user data behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `struct ib_udata` for the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_udata) -> &'a Self {
        // SAFETY: `Udata` is transparent over `ib_udata`; validity and
        // lifetime are the caller's promise.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_udata {
        self.0.get()
    }

    /// The C struct.
    ///
    /// A shared reference is sound: ib_uverbs fills its `ib_udata` (in the
    /// call's attribute bundle) before calling the verb and nobody writes
    /// it until the verb returns; kernel callers pass none.
    fn raw(&self) -> &bindings::ib_udata {
        // SAFETY: By the type invariant the struct is valid; ib_core does
        // not change it during the verb.
        unsafe { &*self.as_raw() }
    }

    /// Driver input from userspace, in bytes.
    pub(crate) fn inlen(&self) -> usize {
        self.raw().inlen
    }

    /// Room for driver output to userspace, in bytes.
    pub(crate) fn outlen(&self) -> usize {
        self.raw().outlen
    }

    /// Copies `data` to the start of the output buffer (`ib_copy_to_udata`):
    /// `EFAULT` if userspace memory is not writable. The caller checks that
    /// it fits ([`Udata::outlen`]); `EINVAL` if it does not.
    pub(crate) fn write_out(&self, data: &[u8]) -> Result {
        if data.len() > self.outlen() {
            return Err(EINVAL);
        }
        let ptr = UserPtr::from_ptr(self.raw().outbuf);
        UserSlice::new(ptr, data.len()).writer().write_slice(data)
    }

    /// Copies the driver's input into `out` as `ib_copy_validate_udata_in`
    /// does (`copy_struct_from_user`): `EINVAL` for fewer than `min`
    /// bytes, `EOPNOTSUPP` for more than `out` holds unless those are all
    /// zero, `EFAULT` if userspace memory is not readable; what userspace
    /// did not give reads as zero.
    pub(crate) fn read_in(&self, out: &mut [u8], min: usize) -> Result {
        let inlen = self.inlen();
        if inlen < min {
            return Err(EINVAL);
        }
        out.fill(0);
        let n = inlen.min(out.len());
        let mut reader =
            UserSlice::new(UserPtr::from_ptr(self.raw().inbuf.cast_mut()), inlen).reader();
        reader.read_slice(&mut out[..n])?;
        // Newer userspace: what this kernel does not know must be zero.
        let mut rest = [0u8; 64];
        while !reader.is_empty() {
            let k = reader.len().min(rest.len());
            reader.read_slice(&mut rest[..k])?;
            if rest[..k].iter().any(|&b| b != 0) {
                return Err(crate::errno::eopnotsupp());
            }
        }
        Ok(())
    }
}

/// Returns the raw pointer of optional user data (null for a kernel call).
pub(crate) fn as_raw_opt(udata: Option<&Udata>) -> *mut bindings::ib_udata {
    udata.map_or(core::ptr::null_mut(), Udata::as_raw)
}
