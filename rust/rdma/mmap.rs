// SPDX-License-Identifier: GPL-2.0

//! Kernel memory that userspace maps through the uverbs file: the rings of a
//! software device, in `vmalloc_user` memory, offered by ib_core's mmap
//! entries (`struct rdma_user_mmap_entry`).
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/linux/vmalloc.h`](srctree/include/linux/vmalloc.h)
//!
//! An object that userspace maps (a CQ's ring today) owns a
//! [`MmapHandle`]: the driver's reference to an entry in its ucontext's
//! `mmap_xa`, whose byte offset ([`MmapHandle::offset`]) userspace passes
//! to `mmap()`. The entry owns the memory ([`UserBuffer`]). ib_core calls
//! `ops.mmap` ([`mmap`]) for each `mmap()` of the uverbs file; each maps the
//! whole buffer with `remap_vmalloc_range`, which takes a reference to each
//! page. Dropping the handle (the object's destroy) removes the entry: no
//! new mapping can be made, and when no `mmap()` is in progress any more
//! ib_core calls `ops.mmap_free` ([`mmap_free`]), which frees the entry and
//! `vfree`s the buffer. Pages that a process still maps stay allocated
//! until it unmaps them (their references), so the process keeps reading
//! what was last written and never touches freed memory; the kernel no
//! longer writes there. As soft-iWARP (`siw_mmap`), rverbs installs no
//! `vm_ops` of its own, so no code of rverbs is reachable from a mapping
//! after the module is gone.

use crate::{
    bindings,
    errno::to_result, //
};
use core::ptr::NonNull;
use kernel::{
    error::from_result,
    ffi::c_int,
    prelude::*,
    types::Opaque, //
};

/// A zeroed buffer of kernel memory that userspace may map
/// (`vmalloc_user`: page aligned, `VM_USERMAP`), freed by `vfree`.
///
/// # Invariants
///
/// `ptr` is the start of a live `vmalloc_user` area of `len` bytes, owned
/// by this value.
pub(crate) struct UserBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: The buffer is plain memory owned by this value; it may be freed
// from any task (`vfree` in process context, checked where it is dropped).
unsafe impl Send for UserBuffer {}
// SAFETY: `&UserBuffer` gives out only the address and the length; every
// access to the memory goes through raw pointers, whose users state how
// they share it (with userspace, which writes it at any time).
unsafe impl Sync for UserBuffer {}

impl UserBuffer {
    /// Allocates `len` zeroed bytes (`len` > 0), rounded up to whole pages.
    pub(crate) fn new(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Any size may be asked for; the result is checked.
        let ptr = unsafe { bindings::rverbs_vmalloc_user(len) };
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: A fresh area of at least `len` bytes, ours.
        Ok(Self { ptr, len })
    }

    /// The start of the buffer.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its length in bytes, as asked for.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for UserBuffer {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the area is live and ours. Its pages
        // stay allocated while a process maps them (each mapping holds a
        // reference, `remap_vmalloc_range`).
        unsafe { bindings::vfree(self.ptr.as_ptr().cast()) };
    }
}

/// An mmap entry of rverbs: ib_core's struct first, then the memory it
/// offers. Allocated in a `KBox` and never moved; freed by [`mmap_free`].
#[repr(C)]
struct Entry {
    core: Opaque<bindings::rdma_user_mmap_entry>,
    buf: UserBuffer,
}

impl Entry {
    /// The entry of ib_core's struct.
    ///
    /// # Safety
    ///
    /// `core` is the `core` field of a live [`Entry`]: every entry in the
    /// `mmap_xa` of a ucontext of a device with [`mmap`] in its table is
    /// one (only [`MmapHandle::insert`] inserts entries there).
    unsafe fn from_core<'a>(core: *mut bindings::rdma_user_mmap_entry) -> &'a Self {
        // SAFETY: `core` is at offset 0 of the `repr(C)` entry (`Opaque` is
        // transparent); the entry is live (the caller's promise).
        unsafe { &*core.cast::<Self>() }
    }
}

/// The driver's reference to an mmap entry: while it lives, userspace may
/// map the buffer at [`MmapHandle::offset`] of its uverbs file.
///
/// # Invariants
///
/// `entry` points to an [`Entry`] inserted into a ucontext's `mmap_xa`,
/// whose driver reference this handle holds; the entry (and its buffer)
/// stays allocated at least until the handle is dropped.
pub(crate) struct MmapHandle {
    entry: NonNull<Entry>,
}

// SAFETY: The handle is a counted reference to an entry that ib_core
// manages under its own locks; it may be dropped from any task in process
// context.
unsafe impl Send for MmapHandle {}
// SAFETY: Through `&MmapHandle` only the offset and the buffer's address
// are read, which do not change.
unsafe impl Sync for MmapHandle {}

impl MmapHandle {
    /// Offers `buf` to the process of `uctx`: inserts an entry for it into
    /// the context's `mmap_xa` (`rdma_user_mmap_entry_insert`). On error
    /// the buffer is freed.
    ///
    /// # Safety
    ///
    /// `uctx` is a live ucontext of a device whose operations table has
    /// [`mmap`] and [`mmap_free`], and the handle is dropped before the
    /// ucontext is deallocated (true for the objects made in the context:
    /// ib_core destroys them first).
    pub(crate) unsafe fn insert(uctx: *mut bindings::ib_ucontext, buf: UserBuffer) -> Result<Self> {
        let len = buf.len();
        let entry = KBox::new(
            Entry {
                core: Opaque::zeroed(),
                buf,
            },
            GFP_KERNEL,
        )?;
        let entry = KBox::into_raw(entry);
        // SAFETY: `entry` is a fresh, zeroed `rdma_user_mmap_entry` that
        // never moves (heap, owned by ib_core's reference count from here on
        // if this succeeds); `uctx` is live (the caller's promise).
        let ret = unsafe { bindings::rdma_user_mmap_entry_insert(uctx, (*entry).core.get(), len) };
        if let Err(e) = to_result(ret) {
            // SAFETY: Not inserted: still only ours, from `KBox::into_raw`.
            drop(unsafe { KBox::from_raw(entry) });
            return Err(e);
        }
        // INVARIANT: Inserted, with the driver's reference (the kref starts
        // at 1); `mmap_free` frees it only after that reference is dropped.
        Ok(Self {
            // SAFETY: From `KBox::into_raw`, not null.
            entry: unsafe { NonNull::new_unchecked(entry) },
        })
    }

    /// The memory offered.
    pub(crate) fn buf(&self) -> &UserBuffer {
        // SAFETY: By the type invariant the entry, and so its buffer, lives
        // at least as long as the handle.
        unsafe { &self.entry.as_ref().buf }
    }

    /// The byte offset to pass to `mmap()` (`rdma_user_mmap_get_offset`).
    pub(crate) fn offset(&self) -> u64 {
        // SAFETY: By the type invariant the entry is live and inserted.
        unsafe { bindings::rverbs_user_mmap_get_offset(self.entry.as_ref().core.get()) }
    }
}

impl Drop for MmapHandle {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the entry is inserted and this is
        // the driver's reference, dropped here once. It may sleep: handles
        // are dropped by destroy verbs, in process context.
        unsafe { bindings::rdma_user_mmap_entry_remove(self.entry.as_ref().core.get()) };
    }
}

/// `ib_device_ops.mmap`: maps the whole buffer of the entry at the VMA's
/// offset. ib_core has checked nothing; `rdma_user_mmap_entry_get` checks
/// `VM_SHARED`, that the offset is an entry's and that the VMA has
/// exactly its size: otherwise `EINVAL`.
///
/// # Safety
///
/// Called by ib_uverbs for an `mmap()` of a uverbs file whose ucontext is
/// `uctx`, on a device whose table has this function (so every entry in
/// `uctx`'s `mmap_xa` is an [`Entry`]), with `vma` the VMA being set up.
pub(crate) unsafe extern "C" fn mmap(
    uctx: *mut bindings::ib_ucontext,
    vma: *mut bindings::vm_area_struct,
) -> c_int {
    from_result(|| {
        // SAFETY: `uctx` and `vma` are valid for the call (the caller's
        // promise).
        let core = unsafe { bindings::rdma_user_mmap_entry_get(uctx, vma) };
        if core.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: An entry of this device's table (the caller's promise),
        // kept alive by the reference just taken.
        let entry = unsafe { Entry::from_core(core) };
        // SAFETY: The buffer is a live `vmalloc_user` area (`VM_USERMAP`)
        // at least as large as the VMA (the entry has its pages, checked by
        // `rdma_user_mmap_entry_get`); `vma` is being set up by mmap.
        let ret = unsafe { bindings::remap_vmalloc_range(vma, entry.buf.as_ptr().cast(), 0) };
        // SAFETY: The reference taken above; the mapping holds its own page
        // references, not the entry.
        unsafe { bindings::rdma_user_mmap_entry_put(core) };
        to_result(ret).map(|()| 0)
    })
}

/// `ib_device_ops.mmap_free`: the last reference to an entry is gone.
///
/// # Safety
///
/// `core` is an entry inserted by [`MmapHandle::insert`] whose last
/// reference ib_core has dropped; nobody uses it afterwards.
pub(crate) unsafe extern "C" fn mmap_free(core: *mut bindings::rdma_user_mmap_entry) {
    // SAFETY: Every entry is an `Entry` from `KBox::into_raw` (the caller's
    // promise); it is ours again now. Dropping it frees the buffer.
    drop(unsafe { KBox::from_raw(core.cast::<Entry>()) });
}
