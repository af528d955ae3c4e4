// SPDX-License-Identifier: GPL-2.0

//! The queues that a soft-RoCE device shares with userspace, in the layout
//! rdma-core's rxe provider maps (`struct rxe_queue_buf`).
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)
//!
//! A queue is one [`UserBuffer`]: the header (`log2_elem_size`,
//! `index_mask`, then the producer and the consumer index on cache lines of
//! their own), then the slots. The geometry follows soft-RoCE's
//! `rxe_queue_init` exactly, so that the provider sees the same depth and
//! the same mapping size on either device: slots of a power of two of at
//! least a cache line, a power of two of slots with one left free. The
//! header is written once, before userspace can map the buffer; the kernel
//! keeps its own copy of the geometry and never reads it back.

use crate::bindings;
use crate::rdma::mmap::{
    Offers,
    UserBuffer, //
};
use core::mem::size_of;
use kernel::{
    page::PAGE_SIZE,
    prelude::*,
    sync::Arc, //
};

/// The shape of a queue: how many slots, how large each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueGeometry {
    log2_elem_size: u32,
    slots: u32,
}

/// `roundup_pow_of_two`, for values up to 2^31.
fn pow2_at_least(n: u32) -> Option<u32> {
    n.checked_next_power_of_two()
}

impl QueueGeometry {
    /// The geometry of a queue of at least `depth` entries of `elem_size`
    /// bytes (`rxe_queue_init`): `EINVAL` when it cannot be represented.
    pub(crate) fn new(depth: u32, elem_size: usize) -> Result<Self> {
        // SAFETY: Reads a constant of the running CPU.
        let line = unsafe { bindings::rverbs_cache_line_size() };
        let line = u32::try_from(line).map_err(|_| EINVAL)?;
        let elem = u32::try_from(elem_size).map_err(|_| EINVAL)?.max(line);
        let elem = pow2_at_least(elem).ok_or(EINVAL)?;
        let slots = pow2_at_least(depth.checked_add(1).ok_or(EINVAL)?).ok_or(EINVAL)?;
        let geo = Self {
            log2_elem_size: elem.trailing_zeros(),
            slots,
        };
        // The buffer's size must fit in a usize and in the 32 bits of
        // `mminfo.size`.
        u32::try_from(geo.map_len().ok_or(EINVAL)?).map_err(|_| EINVAL)?;
        Ok(geo)
    }

    /// The entries the queue holds: one slot stays free.
    pub(crate) fn depth(&self) -> u32 {
        self.slots - 1
    }

    /// The index mask (`slots - 1`).
    pub(crate) fn index_mask(&self) -> u32 {
        self.slots - 1
    }

    /// The header and the slots, in bytes.
    fn buf_len(&self) -> Option<usize> {
        let slots = usize::try_from(self.slots).ok()?;
        // Not `checked_shl`: it does not catch bits shifted out.
        slots
            .checked_mul(1usize.checked_shl(self.log2_elem_size)?)?
            .checked_add(size_of::<bindings::rxe_queue_buf>())
    }

    /// What userspace maps: the buffer rounded up to whole pages.
    fn map_len(&self) -> Option<usize> {
        self.buf_len()?.checked_next_multiple_of(PAGE_SIZE)
    }
}

/// The size of a CQ's element in soft-RoCE's rings, `struct rxe_cqe`: the
/// union of the kernel's `struct ib_wc` and the user's
/// `struct ib_uverbs_wc` (`rxe_verbs.h`).
pub(crate) const RXE_CQE_SIZE: usize = {
    let kernel = size_of::<bindings::ib_wc>();
    let user = size_of::<bindings::ib_uverbs_wc>();
    if kernel > user {
        kernel
    } else {
        user
    }
};

/// A queue in memory that the process of a ucontext can map: the driver's
/// side. It names no ucontext (the offer to the process is the generic
/// layer's, [`Offers`]), so the driver may keep it anywhere, for as long as
/// it likes: dropping it withdraws the offer at the object's next offering
/// verb or destroy, and the memory goes with the last of the queue and the
/// process's mappings. Dropped in process context ([`UserBuffer`]).
pub(crate) struct UserQueue {
    buf: Arc<UserBuffer>,
    geo: QueueGeometry,
    /// Where the process maps it.
    offset: u64,
}

impl UserQueue {
    /// Allocates a zeroed queue of geometry `geo`, writes its header and
    /// offers it to the process of `uctx` through `offers`.
    ///
    /// # Safety
    ///
    /// As [`Offers::offer`].
    pub(crate) unsafe fn new(
        offers: &mut Offers,
        uctx: *mut bindings::ib_ucontext,
        geo: QueueGeometry,
    ) -> Result<Self> {
        let buf = UserBuffer::new(geo.buf_len().ok_or(EINVAL)?)?;
        let hdr = buf.as_ptr().cast::<bindings::rxe_queue_buf>();
        // SAFETY: The buffer is at least a header long, page aligned, and
        // only ours: userspace cannot map it before it is offered below.
        unsafe {
            (*hdr).log2_elem_size = geo.log2_elem_size;
            (*hdr).index_mask = geo.index_mask();
        }
        // SAFETY: `uctx` is the live ucontext of the verb, of a device
        // with `mmap` and `mmap_free` (the caller's promise, as
        // `Offers::offer` needs).
        let offset = unsafe { offers.offer(uctx, buf.clone())? };
        Ok(Self { buf, geo, offset })
    }

    /// Where and how much to map (`struct mminfo` of the create responses).
    pub(crate) fn mminfo(&self) -> MmInfo {
        MmInfo {
            offset: self.offset,
            // CAST: Checked to fit in `QueueGeometry::new`.
            size: self.geo.map_len().unwrap_or(0) as u32,
        }
    }
}

/// The kernel's side of a queue: the index the kernel owns is the caller's
/// (kept under the lock of the queue's owner, and published here), the
/// other one is read from the shared header with acquire ordering and
/// masked; slots are copied whole, in C, to or from kernel memory. Nothing
/// read from the shared memory is trusted: indices are masked with the
/// kernel's own geometry, and a slot is copied out once before it is
/// looked at.
impl UserQueue {
    /// The header of the buffer.
    fn hdr(&self) -> *mut bindings::rxe_queue_buf {
        self.buf.as_ptr().cast()
    }

    /// The bytes of a slot.
    pub(crate) fn elem_size(&self) -> usize {
        1 << self.geo.log2_elem_size
    }

    /// The slots of the queue: indices are below this (one stays free).
    pub(crate) fn slots(&self) -> u32 {
        self.geo.index_mask() + 1
    }

    /// The index after `i`.
    pub(crate) fn next(&self, i: u32) -> u32 {
        i.wrapping_add(1) & self.geo.index_mask()
    }

    /// The producer index, read from userspace's side (send and receive
    /// queues), masked.
    pub(crate) fn user_producer(&self) -> u32 {
        // SAFETY: The header lives as long as `self`; the index is a `u32`
        // on a cache line of its own, written by userspace only.
        let v =
            unsafe { bindings::rverbs_load_acquire_u32(&raw const (*self.hdr()).producer_index) };
        v & self.geo.index_mask()
    }

    /// The consumer index, read from userspace's side (completion
    /// queues), masked.
    pub(crate) fn user_consumer(&self) -> u32 {
        // SAFETY: As in `user_producer`.
        let v =
            unsafe { bindings::rverbs_load_acquire_u32(&raw const (*self.hdr()).consumer_index) };
        v & self.geo.index_mask()
    }

    /// Publishes the kernel's consumer index (send and receive queues):
    /// the slots before it are free again.
    pub(crate) fn publish_consumer(&self, i: u32) {
        // SAFETY: The header lives as long as `self`; the kernel is the only
        // writer of this index (the caller holds the owner's lock).
        unsafe {
            bindings::rverbs_store_release_u32(
                &raw mut (*self.hdr()).consumer_index,
                i & self.geo.index_mask(),
            )
        };
    }

    /// Publishes the kernel's producer index (completion queues): the
    /// slots before it are written.
    pub(crate) fn publish_producer(&self, i: u32) {
        // SAFETY: As in `publish_consumer`.
        unsafe {
            bindings::rverbs_store_release_u32(
                &raw mut (*self.hdr()).producer_index,
                i & self.geo.index_mask(),
            )
        };
    }

    /// The address of slot `i` (masked).
    fn slot(&self, i: u32) -> *mut u8 {
        let off = ((i & self.geo.index_mask()) as usize) << self.geo.log2_elem_size;
        // SAFETY: The slots follow the header; a masked index is within the
        // buffer (`QueueGeometry::buf_len`).
        unsafe { self.hdr().add(1).cast::<u8>().add(off) }
    }

    /// Copies the first `out.len()` bytes of slot `i` (at most a slot).
    pub(crate) fn read_slot(&self, i: u32, out: &mut [u8]) {
        let len = out.len().min(self.elem_size());
        // SAFETY: `out` is ours; the slot has at least `len` bytes; the
        // copy is done in C, as userspace may write the slot meanwhile.
        unsafe {
            bindings::rverbs_copy_from_shared(out.as_mut_ptr().cast(), self.slot(i).cast(), len)
        };
    }

    /// How many slots lie from index `from` up to index `to` (both within
    /// the ring: the elements between a consumer and a producer).
    pub(crate) fn distance(&self, from: u32, to: u32) -> u32 {
        to.wrapping_sub(from) & self.geo.index_mask()
    }

    /// The entries between the consumer index that userspace published and
    /// `producer`, the kernel's own producer index (completion queues):
    /// soft-RoCE's `queue_count` of a queue to the client.
    pub(crate) fn user_pending(&self, producer: u32) -> u32 {
        self.distance(self.user_consumer(), producer)
    }

    /// Copies slot `j` of `from` into slot `i` of this queue (as much of it
    /// as both hold).
    pub(crate) fn copy_slot(&self, i: u32, from: &UserQueue, j: u32) {
        let len = self.elem_size().min(from.elem_size());
        let (dst, src) = (self.slot(i), from.slot(j));
        if dst == src {
            return;
        }
        // SAFETY: Both slots have at least `len` bytes; two different slots
        // do not overlap (slots are whole elements of one size within a
        // buffer, and buffers are separate allocations). The copy is done
        // in C, as userspace may write either meanwhile.
        unsafe { bindings::rverbs_copy_to_shared(dst.cast(), src.cast(), len) };
    }

    /// Writes `data` (at most a slot) at the start of slot `i`.
    pub(crate) fn write_slot(&self, i: u32, data: &[u8]) {
        let len = data.len().min(self.elem_size());
        // SAFETY: As in `read_slot`, the other way.
        unsafe { bindings::rverbs_copy_to_shared(self.slot(i).cast(), data.as_ptr().cast(), len) };
    }
}

impl Drop for UserQueue {
    fn drop(&mut self) {
        // The offer goes at the object's next offering verb or destroy.
        self.buf.retire();
    }
}

/// Where userspace maps a queue: `struct mminfo` of the soft-RoCE ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MmInfo {
    /// The byte offset to pass to `mmap()` on the uverbs file.
    pub(crate) offset: u64,
    /// The length to map.
    pub(crate) size: u32,
}

const _: () = assert!(size_of::<bindings::mminfo>() == MmInfo::ABI_LEN);

impl MmInfo {
    /// The size of `struct mminfo`.
    pub(crate) const ABI_LEN: usize = 16;

    /// `struct mminfo { __aligned_u64 offset; __u32 size; __u32 pad; }`, as
    /// userspace reads it.
    pub(crate) fn to_abi(self) -> [u8; Self::ABI_LEN] {
        let mut out = [0u8; Self::ABI_LEN];
        out[..8].copy_from_slice(&self.offset.to_ne_bytes());
        out[8..12].copy_from_slice(&self.size.to_ne_bytes());
        out
    }
}
