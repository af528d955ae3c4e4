// SPDX-License-Identifier: GPL-2.0

//! Kernel memory that userspace maps through the uverbs file: the rings of a
//! software device, in `vmalloc_user` memory, offered by ib_core's mmap
//! entries (`struct rdma_user_mmap_entry`).
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/linux/vmalloc.h`](srctree/include/linux/vmalloc.h)
//!
//! An object that userspace maps (a CQ's or a QP's ring) offers it through
//! an entry in its ucontext's `mmap_xa`, whose byte offset userspace passes
//! to `mmap()`. The entry is the generic layer's, not the driver's: it is
//! held in the object's [`Offers`], which ib_core's destroy of the object
//! drops, and so it is removed before ib_core can free the ucontext that
//! the entry names. The driver holds only the memory, a reference-counted
//! [`UserBuffer`] that names no ucontext: it may keep it as long as it
//! likes (in a work item, in a queued packet); the last reference goes in
//! process context (see [`UserBuffer`]).
//! When the driver lets go of a buffer ([`UserBuffer::retire`]), its entry
//! is removed at the object's next verb that offers one (a CQ's resize) or
//! at its destroy, whichever comes first.
//!
//! ib_core calls `ops.mmap` ([`mmap`]) for each `mmap()` of the uverbs
//! file; each maps the whole buffer with `remap_vmalloc_range`, which takes
//! a reference to each page. Removing an entry means that no new mapping
//! can be made; when no `mmap()` is in progress any more ib_core calls
//! `ops.mmap_free` ([`mmap_free`]), which frees the entry and its reference
//! to the buffer; the last reference `vfree`s it. Pages that a process
//! still maps stay allocated until it unmaps them (their references), so
//! the process keeps reading what was last written and never touches freed
//! memory. As soft-iWARP (`siw_mmap`), rverbs installs no `vm_ops` of its
//! own, so no code of rverbs is reachable from a mapping after the module
//! is gone.

use crate::{
    bindings,
    errno::to_result, //
};
use core::{
    ptr::NonNull,
    sync::atomic::{
        AtomicBool,
        Ordering, //
    },
};
use kernel::{
    error::from_result,
    ffi::c_int,
    prelude::*,
    sync::Arc,
    types::Opaque, //
};

/// A zeroed buffer of kernel memory that userspace may map
/// (`vmalloc_user`: page aligned, `VM_USERMAP`), freed by `vfree` when the
/// last reference goes. Shared (`Arc`) by the driver and the mmap entry
/// that offers it. The last reference must go in process context: from
/// softirq `vfree` defers the work (`vfree_atomic`) and writes its list
/// node into the buffer's first bytes, which a process may still map (it
/// would read a kernel pointer there: seen in a test of a device removed
/// with live rings, when a table dropped a QP from an RCU callback).
///
/// # Invariants
///
/// `ptr` is the start of a live `vmalloc_user` area of `len` bytes, owned
/// by this value.
pub(crate) struct UserBuffer {
    ptr: NonNull<u8>,
    len: usize,
    /// Set when the driver no longer uses the buffer: its offer may go.
    retired: AtomicBool,
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
    pub(crate) fn new(len: usize) -> Result<Arc<Self>> {
        if len == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Any size may be asked for; the result is checked.
        let ptr = unsafe { bindings::rverbs_vmalloc_user(len) };
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: A fresh area of at least `len` bytes, ours; if the
        // `Arc` cannot be allocated, dropping `buf` frees it.
        let buf = Self {
            ptr,
            len,
            retired: AtomicBool::new(false),
        };
        Ok(Arc::new(buf, GFP_KERNEL)?)
    }

    /// The start of the buffer.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its length in bytes, as asked for.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The driver no longer uses the buffer: its offer to the process may
    /// be withdrawn. Any context.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
    }

    /// Whether [`UserBuffer::retire`] was called.
    fn retired(&self) -> bool {
        self.retired.load(Ordering::Relaxed)
    }
}

impl Drop for UserBuffer {
    fn drop(&mut self) {
        // Process context (see the type): reported otherwise by kernels
        // that check (`CONFIG_DEBUG_ATOMIC_SLEEP`, the debug lane).
        kernel::task::might_sleep();
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
    buf: Arc<UserBuffer>,
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

/// The generic layer's reference to an mmap entry: while it lives,
/// userspace may map the buffer at [`MmapHandle::offset`] of its uverbs
/// file. Only [`Offers`] holds them.
///
/// # Invariants
///
/// `entry` points to an [`Entry`] inserted into a ucontext's `mmap_xa`,
/// whose driver reference this handle holds; the entry (and its buffer)
/// stays allocated at least until the handle is dropped.
struct MmapHandle {
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
    /// the entry's reference to the buffer is dropped.
    ///
    /// # Safety
    ///
    /// `uctx` is a live ucontext of a device whose operations table has
    /// [`mmap`] and [`mmap_free`], and the handle is dropped before the
    /// ucontext is deallocated.
    unsafe fn insert(uctx: *mut bindings::ib_ucontext, buf: Arc<UserBuffer>) -> Result<Self> {
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
    fn buf(&self) -> &UserBuffer {
        // SAFETY: By the type invariant the entry, and so its buffer, lives
        // at least as long as the handle.
        unsafe { &self.entry.as_ref().buf }
    }

    /// The byte offset to pass to `mmap()` (`rdma_user_mmap_get_offset`).
    fn offset(&self) -> u64 {
        // SAFETY: By the type invariant the entry is live and inserted.
        unsafe { bindings::rverbs_user_mmap_get_offset(self.entry.as_ref().core.get()) }
    }
}

impl Drop for MmapHandle {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the entry is inserted and this is
        // the driver's reference (in ib_core's terms), dropped here once.
        // In process context: [`Offers`] are dropped and pruned by verbs.
        unsafe { bindings::rdma_user_mmap_entry_remove(self.entry.as_ref().core.get()) };
    }
}

/// The mappings an object offers to the process of its ucontext, owned
/// by the generic layer with the object (or, while the object is being
/// created, with the verb), and dropped by it in process context: when the
/// object is destroyed, or when its creation fails. So every entry is
/// removed before ib_core deallocates the ucontext, which it does only
/// after every object of the context is destroyed (`uverbs_destroy_ufile_hw`).
pub(crate) struct Offers {
    handles: KVec<MmapHandle>,
}

// `Cell::take` in the constructors' trampolines (no borrow that could
// panic, as `RefCell`'s can).
impl Default for Offers {
    fn default() -> Self {
        Self::new()
    }
}

impl Offers {
    /// No offer yet.
    pub(crate) const fn new() -> Self {
        Self {
            handles: KVec::new(),
        }
    }

    /// Offers `buf` to the process of `uctx`; returns the byte offset to
    /// pass to `mmap()`.
    ///
    /// # Safety
    ///
    /// `uctx` is a live ucontext of a device whose operations table has
    /// [`mmap`] and [`mmap_free`]: the ucontext of the verb creating or
    /// changing the object that holds `self`.
    pub(crate) unsafe fn offer(
        &mut self,
        uctx: *mut bindings::ib_ucontext,
        buf: Arc<UserBuffer>,
    ) -> Result<u64> {
        // Room first, so that the entry is never made without a place.
        self.handles.reserve(1, GFP_KERNEL)?;
        // SAFETY: `uctx` as needed (the caller's promise); the handle is
        // kept in `self`, which the generic layer drops before ib_core
        // deallocates the context (the type's promise).
        let handle = unsafe { MmapHandle::insert(uctx, buf)? };
        let offset = handle.offset();
        // Cannot fail: room was reserved above.
        self.handles.push(handle, GFP_KERNEL)?;
        Ok(offset)
    }

    /// Withdraws the offers of the buffers the driver has retired
    /// ([`UserBuffer::retire`]). Process context.
    pub(crate) fn prune(&mut self) {
        self.handles.retain(|h| !h.buf().retired());
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
