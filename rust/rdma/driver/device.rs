// SPDX-License-Identifier: GPL-2.0

//! Devices of a driver: a `struct ib_device` followed by the driver's data.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    ops::Driver,
    vtable::Vtable, //
};
use crate::errno::to_result;
use crate::{
    bindings,
    rdma::device::Device, //
};
use core::{
    marker::PhantomData,
    mem::{
        size_of,
        ManuallyDrop, //
    },
    ops::Deref,
    ptr::NonNull, //
};
use kernel::{
    prelude::*,
    str::CStr,
    sync::aref::{
        ARef,
        AlwaysRefCounted, //
    },
    types::Opaque, //
};

/// A device of driver `T`: ib_core's `struct ib_device`, then the driver's
/// data, in one allocation made by `_ib_alloc_device`.
///
/// # Invariants
///
/// - The struct is an allocation made by [`DriverDevice::alloc`], whose
///   operations are those of `Vtable<T>` (so `ops.dealloc_driver` knows it
///   is a `T` device),
/// - `data` is initialised, in place, until `ops.dealloc_driver` runs.
#[repr(C)]
pub(crate) struct DriverDevice<T: Driver> {
    ib: Device,
    data: T::Device,
}

impl<T: Driver> Deref for DriverDevice<T> {
    type Target = T::Device;

    fn deref(&self) -> &T::Device {
        &self.data
    }
}

impl<T: Driver> DriverDevice<T> {
    /// Returns the device behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` is a device allocated by [`DriverDevice::alloc`] for driver `T`
    /// whose data stays initialised for the lifetime `'a` (`dealloc_driver`
    /// does not run during it).
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `ib` is at offset 0 of the `repr(C)` struct; the rest is
        // the caller's promise.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// ib_core's part of the device.
    pub(crate) fn device(&self) -> &Device {
        &self.ib
    }

    /// Allocates a device of driver `T` with the operations of `T` and
    /// `data` initialised in place; not registered yet.
    pub(crate) fn alloc(
        module: &'static ThisModule,
        data: impl PinInit<T::Device, Error>,
    ) -> Result<NewDevice<T>> {
        // SAFETY: `init_net` is the initial namespace, which lives forever;
        // the size covers `ib_device` at offset 0, as ib_core requires.
        let ib =
            unsafe { bindings::_ib_alloc_device(size_of::<Self>(), &raw mut bindings::init_net) };
        let ib = NonNull::new(ib).ok_or(ENOMEM)?;
        let this = ib.as_ptr().cast::<Self>();
        // SAFETY: `ib` is a fresh allocation of `size_of::<Self>()` bytes,
        // exclusively ours until registration, that ib_core never moves.
        if let Err(e) = unsafe { data.__pinned_init(&raw mut (*this).data) } {
            // SAFETY: Ours and not registered; no operations are set yet,
            // so ib_core frees it without calling `dealloc_driver` on the
            // uninitialised data.
            unsafe { bindings::ib_dealloc_device(ib.as_ptr()) };
            return Err(e);
        }
        // SAFETY: The device is ours; `ib_set_device_ops` copies the table
        // into it; `owner` is set as in C (`.owner = THIS_MODULE`).
        unsafe {
            bindings::ib_set_device_ops(ib.as_ptr(), &Vtable::<T>::OPS);
            (*ib.as_ptr()).ops.owner = module.as_ptr();
        }
        // INVARIANT: Allocated above with `Vtable<T>` and initialised data.
        Ok(NewDevice(ib, PhantomData))
    }

    /// `ops.dealloc_driver`: drops the driver's data.
    ///
    /// # Safety
    ///
    /// `ptr` is a device of [`DriverDevice::alloc`] for `T`, being freed by
    /// ib_core (`ib_dealloc_device`), that no operation uses any more.
    pub(super) unsafe fn dealloc(ptr: *mut bindings::ib_device) {
        let this = ptr.cast::<Self>();
        // SAFETY: The data is initialised (type invariant) and, by the
        // caller's promise, never used again.
        unsafe { core::ptr::drop_in_place(&raw mut (*this).data) };
    }
}

/// What a device is, for `ib_register_device`.
pub(crate) struct DeviceInfo<'a> {
    /// Node description (`node_desc`, shown by `ibv_devinfo -v`).
    pub(crate) node_desc: &'a CStr,
    /// Node GUID, in network byte order.
    pub(crate) node_guid: [u8; 8],
    /// Number of ports.
    pub(crate) phys_port_cnt: u32,
    /// Number of completion vectors (`comp_vector` of a CQ is below it).
    pub(crate) num_comp_vectors: u32,
}

/// A device allocated by [`DriverDevice::alloc`], not registered yet. Freed
/// (with its data) if dropped unregistered.
///
/// # Invariants
///
/// The pointer is a `DriverDevice<T>` with initialised data, not
/// registered, owned by this object.
pub(crate) struct NewDevice<T: Driver>(NonNull<bindings::ib_device>, PhantomData<T>);

impl<T: Driver> Deref for NewDevice<T> {
    type Target = DriverDevice<T>;

    fn deref(&self) -> &DriverDevice<T> {
        // SAFETY: By the type invariant.
        unsafe { DriverDevice::from_raw(self.0.as_ptr()) }
    }
}

impl<T: Driver> NewDevice<T> {
    /// The raw device, owned by this object.
    pub(super) fn as_ptr(&self) -> NonNull<bindings::ib_device> {
        self.0
    }

    /// Registers the device as `name` (`ib_register_device`). Only for
    /// [`super::registry::Registry::register`], which tracks it.
    ///
    /// On success ib_core owns the device: it may be unregistered (and its
    /// data dropped) by another thread at any time after this returns,
    /// unless the caller holds a registration reference. On failure the
    /// device is freed.
    pub(super) fn register(self, name: &CStr, info: &DeviceInfo<'_>) -> Result {
        let ib = self.0.as_ptr();
        // SAFETY: By the type invariant we own the unregistered device; the
        // fields written are ib_core's, read at registration.
        unsafe {
            let n = info.node_desc.to_bytes_with_nul();
            let desc = &mut (*ib).node_desc;
            let len = n.len().min(desc.len());
            core::ptr::copy_nonoverlapping(n.as_ptr().cast(), desc.as_mut_ptr(), len);
            desc[desc.len() - 1] = 0;
            // CAST: A small enumerator of a `u8` field.
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as u8;
            (*ib).phys_port_cnt = info.phys_port_cnt;
            (*ib).num_comp_vectors = info.num_comp_vectors.try_into().unwrap_or(1);
            // uverbs offers a write command only if its bit is in the
            // mask; `_ib_alloc_device` sets the usual ones, not these.
            if T::HAS_REQ_NOTIFY_CQ {
                (*ib).uverbs_cmd_mask |=
                    1u64 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
            }
            // Likewise the post commands (soft-RoCE's provider rings its
            // send doorbell through `post_send`).
            if T::HAS_POST_SEND {
                (*ib).uverbs_cmd_mask |=
                    1u64 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND;
            }
            if T::HAS_POST_RECV {
                (*ib).uverbs_cmd_mask |=
                    1u64 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_RECV;
            }
            (*ib).node_guid = u64::from_ne_bytes(info.node_guid);
        }
        // SAFETY: The device is ours; `name` is NUL-terminated; no DMA.
        // On failure it is still ours (ib_core's error path leaves the
        // freeing to the caller, `drop` below).
        to_result(unsafe {
            bindings::ib_register_device(ib, name.as_char_ptr(), core::ptr::null_mut())
        })?;
        // Registered: ib_core owns it now.
        core::mem::forget(self);
        Ok(())
    }
}

impl<T: Driver> Drop for NewDevice<T> {
    fn drop(&mut self) {
        // SAFETY: Not registered and owned: `ib_dealloc_device` calls
        // `dealloc_driver` (drops the data) and frees it.
        unsafe { bindings::ib_dealloc_device(self.0.as_ptr()) };
    }
}

/// A registration reference on a registered device of driver `T`
/// (`ib_device_try_get`): it stays registered, and its data initialised,
/// until the reference is dropped.
///
/// # Invariants
///
/// The pointer is a `DriverDevice<T>` on which this object holds an
/// `ib_device_try_get` reference.
pub(crate) struct DeviceGet<T: Driver>(NonNull<bindings::ib_device>, PhantomData<T>);

impl<T: Driver> DeviceGet<T> {
    /// Takes a registration reference on `ptr`, unless its unregistration
    /// has begun (or it was never registered).
    ///
    /// # Safety
    ///
    /// `ptr` is a `DriverDevice<T>` whose memory is valid for the call.
    pub(super) unsafe fn try_get(ptr: NonNull<bindings::ib_device>) -> Option<Self> {
        // SAFETY: The memory is valid (the caller's promise); the function
        // only touches the registration count.
        let got = unsafe { bindings::rverbs_ib_device_try_get(ptr.as_ptr()) };
        // INVARIANT: A reference was taken; while it is held
        // `dealloc_driver` cannot run, so the data is initialised.
        got.then(|| Self(ptr, PhantomData))
    }

    /// Unregisters the device from a work item (`ib_unregister_device_queued`),
    /// for callers that may not wait for the unregistration (netdev
    /// notifiers, under RTNL).
    pub(crate) fn unregister_queued(self) {
        // SAFETY: The reference keeps the device registered for the call;
        // its operations include `dealloc_driver`, as the function requires.
        unsafe { bindings::ib_unregister_device_queued(self.0.as_ptr()) };
    }

    /// Unregisters the device and returns once it is unregistered
    /// (`ib_unregister_device_and_put`): for a caller that reports the
    /// device's failure to its creator, who must not find it afterwards.
    /// It waits for ib_core's clients to let go of the device, so the
    /// caller must not hold a lock that they take (RTNL among them); a
    /// caller that does would deadlock (and lockdep tells), nothing worse.
    pub(crate) fn unregister(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` holds the registration reference that the function
        // puts in place of our `Drop`, which does not run; the operations
        // include `dealloc_driver`, as the function requires.
        unsafe { bindings::ib_unregister_device_and_put(this.0.as_ptr()) };
    }
}

/// The memory of a device (its `struct ib_device` and what follows), as
/// a reference to its `struct device` keeps it (`get_device`,
/// `put_device`): not its registration, nor the driver's data, which go
/// when it is unregistered (`dealloc_driver`). So it offers nothing but
/// its address; [`DeviceRef`] and the registry's entries are its only
/// holders, the one place where that reference is counted.
#[repr(transparent)]
pub(crate) struct DeviceMemory(Opaque<bindings::ib_device>);

// SAFETY: `get_device` and `put_device` may be called from any thread; the
// last reference frees the device, from process context (`dec_ref` says
// so with `might_sleep`, and its holders drop it there).
unsafe impl AlwaysRefCounted for DeviceMemory {
    fn inc_ref(&self) {
        // SAFETY: The device is valid while `self` is borrowed.
        unsafe { bindings::get_device(super::registry::dev_of(self.as_ptr())) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        kernel::task::might_sleep();
        // SAFETY: A reference the caller owns (the trait's contract), given
        // back here; the memory is not used afterwards.
        unsafe { bindings::put_device(super::registry::dev_of(obj.as_ptr().cast())) };
    }
}

// SAFETY: Only the address is reachable through a `DeviceMemory`, and its
// reference may be given back from any thread.
unsafe impl Send for DeviceMemory {}
// SAFETY: As above: a shared `DeviceMemory` allows nothing but its address.
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// A new reference to the memory of the valid device `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid device.
    pub(super) unsafe fn get(ptr: NonNull<bindings::ib_device>) -> ARef<Self> {
        // SAFETY: `DeviceMemory` is transparent over the valid device, and
        // `ARef::from` counts a reference of its own.
        ARef::from(unsafe { &*ptr.as_ptr().cast::<Self>() })
    }

    /// The device's address.
    pub(super) fn as_ptr(&self) -> *mut bindings::ib_device {
        self.0.get()
    }
}

/// A reference to the memory of a device of driver `T` ([`DeviceMemory`]),
/// which does not keep it registered: for finding the device from a
/// context that cannot take part in its unregistration (the network's
/// softirq). [`DeviceRef::try_get`] gives a registration reference while
/// the device is registered.
///
/// # Invariants
///
/// The memory is a `DriverDevice<T>`'s.
pub(crate) struct DeviceRef<T: Driver>(ARef<DeviceMemory>, PhantomData<T>);

impl<T: Driver> DeviceRef<T> {
    /// A reference to the memory of `dev`.
    pub(crate) fn new(dev: &DriverDevice<T>) -> Self {
        // SAFETY: `dev` is a valid device.
        let mem = unsafe { DeviceMemory::get(NonNull::from(&dev.ib).cast()) };
        // INVARIANT: `dev`'s memory.
        Self(mem, PhantomData)
    }

    /// A registration reference, unless the device's unregistration has
    /// begun. Callable in any context.
    pub(crate) fn try_get(&self) -> Option<DeviceGet<T>> {
        // SAFETY: The memory is valid while referenced, and a
        // `DriverDevice<T>`'s (type invariant).
        unsafe { DeviceGet::try_get(NonNull::new_unchecked(self.0.as_ptr())) }
    }
}

impl<T: Driver> Deref for DeviceGet<T> {
    type Target = DriverDevice<T>;

    fn deref(&self) -> &DriverDevice<T> {
        // SAFETY: By the type invariant the device is registered, so valid
        // with its data initialised, while the reference is held.
        unsafe { DriverDevice::from_raw(self.0.as_ptr()) }
    }
}

impl<T: Driver> Drop for DeviceGet<T> {
    fn drop(&mut self) {
        // SAFETY: We own the reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}
