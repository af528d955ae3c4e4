// SPDX-License-Identifier: GPL-2.0

//! GID table entries (`struct ib_gid_attr`), reference counted.
//!
//! C header: [`include/rdma/ib_cache.h`](srctree/include/rdma/ib_cache.h)

use super::{
    device::Device,
    gid::Gid, //
};
use crate::{
    bindings,
    net::device::NetDevice, //
};
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    prelude::*,
    sync::{
        aref::{
            ARef,
            AlwaysRefCounted, //
        },
        rcu,
    },
    types::Opaque,
};

/// The type of a GID table entry (`enum ib_gid_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GidType {
    /// InfiniBand.
    Ib,
    /// RoCE v1: Ethernet, not routable.
    RoceV1,
    /// RoCE v2: UDP/IP encapsulation.
    RoceV2,
}

impl GidType {
    /// The raw `enum ib_gid_type` value.
    pub(crate) fn raw(self) -> u32 {
        match self {
            GidType::Ib => bindings::ib_gid_type_IB_GID_TYPE_IB,
            GidType::RoceV1 => bindings::ib_gid_type_IB_GID_TYPE_ROCE,
            GidType::RoceV2 => bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
        }
    }
}

/// An entry of a port's GID table.
///
/// # Invariants
///
/// The wrapped `struct ib_gid_attr` is valid: whoever holds a reference to
/// a `GidAttr` holds (directly or through an [`ARef`]) a reference count of
/// the entry, taken with `rdma_get_gid_attr` or `rdma_hold_gid_attr`.
#[repr(transparent)]
pub(crate) struct GidAttr(Opaque<bindings::ib_gid_attr>);

// SAFETY: The entry's reference count is managed by `rdma_hold_gid_attr`
// and `rdma_put_gid_attr`, which may be called from any thread.
unsafe impl AlwaysRefCounted for GidAttr {
    fn inc_ref(&self) {
        // SAFETY: By the type invariant the entry is valid and referenced.
        unsafe { bindings::rdma_hold_gid_attr(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller gives up one reference count it owned.
        unsafe { bindings::rdma_put_gid_attr(obj.as_ptr().cast()) };
    }
}

// SAFETY: A GID entry is immutable once in the table, except for its
// netdev pointer, which is RCU protected; it may be used from any thread.
unsafe impl Send for GidAttr {}
// SAFETY: See `Send`: shared references only read immutable fields, one at
// a time through raw pointers, or read `ndev` under RCU.
unsafe impl Sync for GidAttr {}

impl GidAttr {
    /// Returns the entry behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `struct ib_gid_attr` on which a reference
    /// count is held for the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *const bindings::ib_gid_attr) -> &'a Self {
        // SAFETY: `GidAttr` is transparent over `ib_gid_attr`; the rest is
        // the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_gid_attr {
        self.0.get()
    }

    /// Looks up entry `index` of `port` and takes a reference to it
    /// (`rdma_get_gid_attr`).
    ///
    /// Fails with `EINVAL` for a bad port or index, `ENODATA` for an empty
    /// entry, exactly as ib_core does.
    pub(crate) fn get(device: &Device, port: u32, index: u32) -> Result<ARef<GidAttr>> {
        let index = i32::try_from(index).map_err(|_| EINVAL)?;
        // SAFETY: `device` is valid; `rdma_get_gid_attr` checks the port
        // and the index itself.
        let ptr = from_err_ptr(
            unsafe { bindings::rdma_get_gid_attr(device.as_raw(), port, index) }.cast_mut(),
        )?;
        // INVARIANT: `rdma_get_gid_attr` returned a valid entry with a
        // reference count that the `ARef` now owns.
        // SAFETY: Non-null: `from_err_ptr` passed it, and it is not an
        // error pointer.
        Ok(unsafe { ARef::from_raw(NonNull::new_unchecked(ptr.cast())) })
    }

    /// The valid entry of `port` with the lowest index holding `gid` with
    /// type `gid_type`, referenced (`rdma_find_gid_by_port` without a
    /// netdev).
    ///
    /// Fails with `ENOENT` when there is none, or when `port` is not a port
    /// of `device`, exactly as ib_core does.
    pub(crate) fn find_by_port(
        device: &Device,
        gid: &Gid,
        gid_type: GidType,
        port: u32,
    ) -> Result<ARef<GidAttr>> {
        // `union ib_gid` is its 16 bytes, 8-aligned for its 64-bit view.
        #[repr(C, align(8))]
        struct CGid([u8; 16]);
        const _: () = assert!(
            size_of::<CGid>() == size_of::<bindings::ib_gid>()
                && align_of::<CGid>() == align_of::<bindings::ib_gid>()
        );
        let raw_gid = CGid(*gid.raw());
        // SAFETY: `device` is valid and the GID is read during the call
        // only; the function checks `port` itself, and a null netdev means
        // any netdev.
        let ptr = from_err_ptr(
            unsafe {
                bindings::rdma_find_gid_by_port(
                    device.as_raw(),
                    core::ptr::from_ref(&raw_gid).cast(),
                    gid_type.raw(),
                    port,
                    core::ptr::null_mut(),
                )
            }
            .cast_mut(),
        )?;
        // INVARIANT: `rdma_find_gid_by_port` returned a valid entry with a
        // reference count that the `ARef` now owns.
        // SAFETY: Non-null: `from_err_ptr` passed it, and it is not an
        // error pointer.
        Ok(unsafe { ARef::from_raw(NonNull::new_unchecked(ptr.cast())) })
    }

    /// The VLAN of the entry's netdev, or 0xffff without one
    /// (`rdma_read_gid_l2_fields`: a VLAN device's ID, else the ID of a
    /// VLAN device below an upper device such as a bond).
    ///
    /// Fails with `ENODEV` when the entry has no netdev (any more).
    pub(crate) fn vlan_id(&self) -> Result<u16> {
        let mut vlan_id = 0xffff_u16;
        // SAFETY: By the type invariant the entry is valid and referenced;
        // the function reads its netdev under RCU itself, and `vlan_id` is
        // valid for a write (no MAC is asked for).
        crate::errno::to_result(unsafe {
            bindings::rdma_read_gid_l2_fields(self.as_raw(), &mut vlan_id, core::ptr::null_mut())
        })?;
        Ok(vlan_id)
    }

    // No `&bindings::ib_gid_attr` is ever made: `del_gid` of ib_core's
    // cache.c clears `ndev` (`rcu_assign_pointer`) while references to the
    // entry are held, so a shared reference covering the whole struct would
    // alias a concurrent write. Each accessor below reads one field through
    // a raw pointer projection instead. All the other fields are copied in
    // by `alloc_gid_entry` (a `memcpy`) before `store_gid_entry` publishes
    // the entry, and nothing writes them again while its `kref` is held:
    // they are immutable for as long as a `GidAttr` exists.

    /// The index of the entry in the port's table.
    pub(crate) fn index(&self) -> u32 {
        // SAFETY: By the type invariant the entry is valid and referenced;
        // `index` is written only before the entry is published.
        u32::from(unsafe { (&raw const (*self.as_raw()).index).read() })
    }

    /// The port the entry belongs to.
    pub(crate) fn port_num(&self) -> u32 {
        // SAFETY: By the type invariant the entry is valid and referenced;
        // `port_num` is written only before the entry is published.
        unsafe { (&raw const (*self.as_raw()).port_num).read() }
    }

    /// The GID.
    pub(crate) fn gid(&self) -> Gid {
        // SAFETY: By the type invariant the entry is valid and referenced;
        // `gid` is written only before the entry is published. The union
        // `ib_gid` is 16 bytes and its `raw` view, at offset 0, is all of
        // them: read as bytes, any content is valid.
        Gid::new(unsafe { (&raw const (*self.as_raw()).gid).cast::<[u8; 16]>().read() })
    }

    /// The type of the entry.
    pub(crate) fn gid_type(&self) -> GidType {
        // SAFETY: By the type invariant the entry is valid and referenced;
        // `gid_type` is written only before the entry is published.
        match unsafe { (&raw const (*self.as_raw()).gid_type).read() } {
            bindings::ib_gid_type_IB_GID_TYPE_ROCE => GidType::RoceV1,
            bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP => GidType::RoceV2,
            _ => GidType::Ib,
        }
    }

    /// The network device of the entry (`rdma_read_gid_attr_ndev_rcu`).
    ///
    /// Fails with `ENODEV` when the entry has no netdev (any more).
    pub(crate) fn ndev_rcu<'a>(&self, _rcu: &'a rcu::Guard) -> Result<&'a NetDevice> {
        // SAFETY: The entry is valid and the RCU read lock is held.
        let ndev = from_err_ptr(unsafe { bindings::rdma_read_gid_attr_ndev_rcu(self.as_raw()) })?;
        if ndev.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: A netdev read under RCU stays valid until the read-side
        // critical section ends, which `'a` (the guard's borrow) bounds.
        Ok(unsafe { NetDevice::from_raw(ndev) })
    }
}
