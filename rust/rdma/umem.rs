// SPDX-License-Identifier: GPL-2.0

//! Pinned user memory (`struct ib_umem`): the pages of a memory region.
//!
//! C header: [`include/rdma/ib_umem.h`](srctree/include/rdma/ib_umem.h)

use super::{
    device::Device,
    mr::{
        AccessFlags,
        ReregFlags, //
    },
};
use crate::{
    bindings,
    errno::to_result, //
};
use core::ptr::NonNull;
use kernel::{
    alloc::KVVec,
    error::from_err_ptr,
    page::PAGE_SIZE,
    prelude::*, //
};

/// An RDMA atomic on 8 aligned bytes ([`Umem::atomic`]).
#[derive(Clone, Copy)]
pub(crate) enum AtomicOp {
    /// Stores `swap` if the value is `compare`.
    CmpSwap { compare: u64, swap: u64 },
    /// Adds.
    FetchAdd(u64),
    /// Stores these bytes as they are (ATOMIC WRITE).
    Store([u8; 8]),
}

/// A range of the calling process's memory, pinned, with the list of its
/// pages taken once (soft-RoCE's `page_info`, `rxe_mr.c:rxe_mr_init_user`).
///
/// Devices that register with ib_core without a DMA device (software ones)
/// get their umems unmapped: ib_core only pins the pages
/// (`ib_uses_virt_dma`).
///
/// # Invariants
///
/// - `raw` is a umem from `ib_umem_get_attr_or_va`, owned by this value
///   (released once, by `Drop`), neither on-demand nor dma-buf;
/// - `pages` are its pinned pages, in order, all of them: pinned until
///   `raw` is released.
pub(crate) struct Umem {
    raw: NonNull<bindings::ib_umem>,
    pages: KVVec<*mut bindings::page>,
    /// Whether the pages were pinned for writing (`FOLL_WRITE`).
    writable: bool,
}

// SAFETY: The umem is owned by this value alone (type invariant) and may be
// released from any task in process context: `ib_umem_release` takes the
// owning mm from the umem, not from `current`.
unsafe impl Send for Umem {}

// SAFETY: Shared references only read the page list and the umem's fixed
// fields.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `length` bytes of the calling process's memory from `addr`, for
    /// writing too if `access` allows local or remote writes
    /// (`ib_umem_get_va`): `EINVAL` for an empty or wrapping range,
    /// `EPERM` without the right to lock memory, `ENOMEM` past
    /// `RLIMIT_MEMLOCK`, `EFAULT` for memory that is not mapped (or not
    /// writable when it must be), `EOPNOTSUPP` for `IB_ACCESS_ON_DEMAND`.
    ///
    /// Process context only: it pins `current`'s memory and may sleep.
    pub(crate) fn get(dev: &Device, addr: u64, length: u64, access: u32) -> Result<Self> {
        let size = usize::try_from(length).map_err(|_| EINVAL)?;
        // CAST: A bit mask, passed as `int`.
        let access = access as i32;
        // SAFETY: `dev` is a registered device; a null attribute bundle
        // selects the plain virtual-address path, which reads nothing else.
        let raw = from_err_ptr(unsafe {
            bindings::ib_umem_get_attr_or_va(dev.as_raw(), core::ptr::null(), 0, addr, size, access)
        })?;
        // The release below in `Drop` covers every error from here on.
        let mut umem = Self {
            // SAFETY: `from_err_ptr` passed it: neither null nor an error.
            raw: unsafe { NonNull::new_unchecked(raw) },
            pages: KVVec::new(),
            // SAFETY: A live umem (ours); `writable` does not change.
            writable: unsafe { bindings::rverbs_umem_writable(raw) },
        };
        // SAFETY: `raw` is a live umem (ours).
        let n = unsafe { bindings::rverbs_umem_num_pages(raw) };
        let mut pages = KVVec::with_capacity(n, GFP_KERNEL)?;
        // SAFETY: The buffer has room for `n` page pointers; the helper
        // writes at most that many and says how many.
        let filled = unsafe { bindings::rverbs_umem_fill_pages(raw, pages.as_mut_ptr(), n) };
        if filled != n {
            // ib_core pinned exactly the pages the range spans.
            return Err(EINVAL);
        }
        // SAFETY: The first `n` slots were just written.
        unsafe { pages.inc_len(n) };
        umem.pages = pages;
        Ok(umem)
    }

    /// Copies between the pinned pages and `buf`, from byte `off` of the
    /// first page on: `EINVAL` past the last page. Any context (the pages
    /// are mapped for the copy with `kmap_local_page`).
    fn copy(&self, off: usize, buf: *mut u8, len: usize, to_pages: bool) -> Result {
        let end = off.checked_add(len).ok_or(EINVAL)?;
        if end > self.pages.len().checked_mul(PAGE_SIZE).ok_or(EINVAL)? {
            return Err(EINVAL);
        }
        let mut done = 0;
        while done < len {
            let at = off + done;
            let in_page = at % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done);
            // SAFETY: The page is pinned while `self` lives (type
            // invariant); `in_page + n` is within it; `buf` has `len`
            // bytes (the callers' slices); the copy is done in C, as
            // userspace may access the page meanwhile.
            unsafe {
                bindings::rverbs_copy_page(
                    self.pages[at / PAGE_SIZE],
                    in_page,
                    buf.add(done).cast(),
                    n,
                    to_pages,
                )
            };
            done += n;
        }
        Ok(())
    }

    /// Fills `dst` from byte `off` of the pinned range (counted from the
    /// start of its first page).
    pub(crate) fn read(&self, off: usize, dst: &mut [u8]) -> Result {
        self.copy(off, dst.as_mut_ptr(), dst.len(), false)
    }

    /// Writes `src` at byte `off` of the pinned range (counted from the
    /// start of its first page): `EACCES` unless the pages were pinned for
    /// writing (read-only memory, a file's page cache, the zero page are
    /// never written).
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        if !self.writable {
            return Err(EACCES);
        }
        // The helper only reads `buf` when copying to the pages.
        self.copy(off, src.as_ptr().cast_mut(), src.len(), true)
    }

    /// An RDMA atomic on the 8 bytes at byte `off` of the pinned range:
    /// `op`, atomic against every other access, also the process's own;
    /// the value before (0 for a store). `EINVAL` unless `off` is 8-byte
    /// aligned and within the range, `EACCES` for pages not pinned for
    /// writing. Any context.
    pub(crate) fn atomic(&self, off: usize, op: AtomicOp) -> Result<u64> {
        if !self.writable {
            return Err(EACCES);
        }
        if off % 8 != 0 || off / PAGE_SIZE >= self.pages.len() {
            return Err(EINVAL);
        }
        let (code, compare, value) = match op {
            AtomicOp::CmpSwap { compare, swap } => (0, compare, swap),
            AtomicOp::FetchAdd(add) => (1, 0, add),
            AtomicOp::Store(bytes) => (2, 0, u64::from_ne_bytes(bytes)),
        };
        // SAFETY: The page is pinned while `self` lives (type invariant);
        // the 8 aligned bytes at `off % PAGE_SIZE` are within it.
        Ok(unsafe {
            bindings::rverbs_atomic_page(
                self.pages[off / PAGE_SIZE],
                off % PAGE_SIZE,
                code,
                compare,
                value,
            )
        })
    }

    /// ib_core's check of a change of access flags (`flags` as of
    /// `ib_uverbs_rereg_mr`) against how the pages were pinned: `EACCES`
    /// to make memory pinned read-only writable.
    pub(crate) fn check_rereg(&self, flags: ReregFlags, access: AccessFlags) -> Result {
        // CAST: Bit masks, passed as `int`.
        let (flags, access) = (u32::from(flags) as i32, u32::from(access) as i32);
        // SAFETY: `raw` is live (type invariant).
        to_result(unsafe { bindings::ib_umem_check_rereg(self.raw.as_ptr(), flags, access) })
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: Ours, released once (type invariant); the page list goes
        // with `self` after this.
        unsafe { bindings::ib_umem_release(self.raw.as_ptr()) };
    }
}
