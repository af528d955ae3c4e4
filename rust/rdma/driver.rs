// SPDX-License-Identifier: GPL-2.0

//! Devices of an RDMA driver written in Rust: allocation, registration and
//! unregistration of a `struct ib_device` with the driver's data.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! Life of a device:
//!
//! 1. [`DriverDevice::alloc`] allocates it (`_ib_alloc_device`) with the
//!    driver's data and operations ([`super::ops::Vtable`]);
//! 2. [`NewDevice::register`] binds it to a netdev (`ib_device_set_netdev`)
//!    and registers it (`ib_register_device`); from then on ib_core owns
//!    it;
//! 3. whoever unregisters it (`rdma link del`, [`unregister_all`], the
//!    netdev going away, `ib_unregister_driver` of a module that shares the
//!    driver id) ends in `ops.dealloc_driver`, which drops the data and
//!    forgets the device; ib_core frees the memory.
//!
//! Every device is also in a list, so that the module can unregister the
//! devices it still has when it unloads ([`unregister_all`]).

use super::{
    bindings,
    ops::{
        Driver,
        Vtable, //
    },
};
use crate::net::device::NetDevice;
use core::{
    any::TypeId,
    marker::PhantomData,
    mem::size_of,
    ops::Deref,
    ptr::NonNull, //
};
use kernel::{
    error::to_result,
    prelude::*,
    str::CStr,
    types::Opaque, //
};

/// Where the driver's data starts in the device allocation.
///
/// Devices of other drivers that share a driver id (rdma_rxe shares
/// `RDMA_DRIVER_RXE` with rverbs' software device) may be looked up by that
/// id and taken for their own struct (`container_of(ibdev, struct rxe_dev,
/// ib_dev)`), which is `ib_device` followed by the driver's fields. The
/// bytes after `ib_device` up to here are zero and never written, which is
/// an empty, unused rxe device to such code (empty pools, trees and
/// counters); the tests check that `struct rxe_dev` of the running kernel
/// fits (see Documentation/rv0.rst).
pub(crate) const DATA_OFFSET: usize = 8192;

const _: () = assert!(size_of::<bindings::ib_device>() <= DATA_OFFSET);

/// A device of driver `T`: ib_core's `struct ib_device`, zeroed bytes up to
/// [`DATA_OFFSET`], then the driver's data.
///
/// # Invariants
///
/// - The struct is the allocation `DriverDevice::alloc` made with
///   `_ib_alloc_device`, with the operations of `Vtable<T>` (so it is
///   known to be a `T` device by `ops.dealloc_driver`).
/// - `data` is initialised until `ops.dealloc_driver` runs.
#[repr(C)]
pub(crate) struct DriverDevice<T: Driver> {
    ib: Opaque<bindings::ib_device>,
    _shadow: [u8; DATA_OFFSET - size_of::<bindings::ib_device>()],
    data: T::Device,
}

// SAFETY: ib_core's part is protected by ib_core's own locking and the
// driver's data is `Send + Sync` (required by `Driver::Device`).
unsafe impl<T: Driver> Sync for DriverDevice<T> {}
// SAFETY: As above.
unsafe impl<T: Driver> Send for DriverDevice<T> {}

impl<T: Driver> Deref for DriverDevice<T> {
    type Target = T::Device;

    fn deref(&self) -> &T::Device {
        &self.data
    }
}

/// A device in the list of [`unregister_all`], with its driver.
struct Entry {
    ptr: NonNull<bindings::ib_device>,
    driver: TypeId,
}

// SAFETY: The pointer is only compared, and dereferenced under the list's
// lock (see `unregister_all`).
unsafe impl Send for Entry {}

kernel::global_lock! {
    // SAFETY: Initialised by `init` in the module initialiser, before any
    // device exists.
    unsafe(uninit) static DEVICES: Mutex<KVec<Entry>> = KVec::new();
}

/// Sets up the list of devices. Called once, when the module loads.
pub(crate) fn init() {
    // SAFETY: Called once, from the module initialiser, before any use.
    unsafe { DEVICES.init() };
}

impl<T: Driver> DriverDevice<T> {
    /// Returns the device behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` is a device allocated by [`DriverDevice::alloc`] for driver `T`
    /// whose data is initialised, for the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `ib` is at offset 0 of the `repr(C)` struct; the rest is
        // the caller's promise.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::ib_device {
        self.ib.get()
    }

    /// The netdev of `port`, with a reference held (`ib_device_get_netdev`);
    /// `None` once it has been detached ([`DriverDevice::detach_netdev`]).
    pub(crate) fn netdev(&self, port: u32) -> Option<NetDeviceRef> {
        // SAFETY: The device is valid; the function checks `port`.
        let ndev = unsafe { bindings::ib_device_get_netdev(self.as_raw(), port) };
        // INVARIANT: `ib_device_get_netdev` returned a held reference.
        NonNull::new(ndev).map(NetDeviceRef)
    }

    /// Forgets the netdev of `port` (`ib_device_set_netdev(dev, NULL, port)`),
    /// as ib_core requires when that netdev unregisters.
    pub(crate) fn detach_netdev(&self, port: u32) {
        // SAFETY: The device is valid; a NULL netdev is allowed.
        let ret =
            unsafe { bindings::ib_device_set_netdev(self.as_raw(), core::ptr::null_mut(), port) };
        // Only an invalid port can fail, and drivers pass their own.
        kernel::warn_on!(ret != 0);
    }

    /// Ethernet speed and width of `port` for `query_port`
    /// (`ib_get_eth_speed`): `(speed, width)`.
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: The device is valid; the outputs are valid for writes.
        to_result(unsafe {
            bindings::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width)
        })?;
        Ok((speed, width))
    }

    /// Allocates a device of driver `T` with `data` and the operations of
    /// `T`, not registered yet.
    pub(crate) fn alloc(module: &'static ThisModule, data: T::Device) -> Result<NewDevice<T>> {
        // SAFETY: `init_net` is the initial namespace, which lives forever;
        // the size covers `ib_device` at offset 0, as ib_core requires.
        let ib =
            unsafe { bindings::_ib_alloc_device(size_of::<Self>(), &raw mut bindings::init_net) };
        let ib = NonNull::new(ib).ok_or(ENOMEM)?;
        let this = ib.as_ptr().cast::<Self>();
        // SAFETY: `ib` is a fresh zeroed allocation of `size_of::<Self>()`
        // bytes, exclusively ours until registration; the operations table
        // is copied into the device, and `owner` set as in C
        // (`.owner = THIS_MODULE`).
        unsafe {
            (&raw mut (*this).data).write(data);
            bindings::ib_set_device_ops(ib.as_ptr(), &Vtable::<T>::OPS);
            (*ib.as_ptr()).ops.owner = module.as_ptr();
        }
        let entry = Entry {
            ptr: ib,
            driver: TypeId::of::<T>(),
        };
        let pushed = DEVICES.lock().push(entry, GFP_KERNEL);
        if let Err(e) = pushed {
            // SAFETY: Not registered and not in the list: freeing it calls
            // `dealloc_driver`, which drops the data.
            unsafe { bindings::ib_dealloc_device(ib.as_ptr()) };
            return Err(e.into());
        }
        // INVARIANT: Allocated above with `Vtable<T>` and initialised data.
        Ok(NewDevice(ib, PhantomData))
    }

    /// `ops.dealloc_driver`: forgets the device and drops the driver's data.
    ///
    /// # Safety
    ///
    /// `ptr` is a device of [`DriverDevice::alloc`] for `T`, being freed by
    /// ib_core (`ib_dealloc_device`), that no operation uses any more.
    pub(super) unsafe fn dealloc(ptr: *mut bindings::ib_device) {
        {
            let mut devices = DEVICES.lock();
            devices.retain(|e| e.ptr.as_ptr() != ptr);
        }
        let this = ptr.cast::<Self>();
        // SAFETY: The data is initialised (type invariant) and, by the
        // caller's promise, never used again.
        unsafe { core::ptr::drop_in_place(&raw mut (*this).data) };
    }

    /// The registered device of driver `T` bound to `ndev`, if any, with a
    /// registration reference held (`ib_device_get_by_netdev`).
    pub(crate) fn get_by_netdev(ndev: &NetDevice) -> Option<DeviceGet<T>> {
        let ib = Self::any_by_netdev(ndev, T::DRIVER_ID)?;
        // The driver id may be shared with another module: the list tells
        // the devices of `T` apart.
        let ours = DEVICES
            .lock()
            .iter()
            .any(|e| e.ptr == ib.0 && e.driver == TypeId::of::<T>());
        if !ours {
            return None;
        }
        // INVARIANT: A registered `T` device, with a reference held.
        let ptr = ib.0;
        core::mem::forget(ib);
        Some(DeviceGet(ptr, PhantomData))
    }

    /// Whether a registered device of any driver with `driver_id` is bound
    /// to `ndev` (rdma_rxe refuses a second device on a netdev the same way).
    pub(crate) fn driver_id_on_netdev(ndev: &NetDevice) -> bool {
        Self::any_by_netdev(ndev, T::DRIVER_ID).is_some()
    }

    fn any_by_netdev(ndev: &NetDevice, driver_id: u32) -> Option<AnyDeviceGet> {
        // SAFETY: `ndev` is valid; the function takes a registration
        // reference on what it returns.
        let ib = unsafe { bindings::ib_device_get_by_netdev(ndev.as_raw(), driver_id) };
        NonNull::new(ib).map(AnyDeviceGet)
    }
}

/// A registration reference (`ib_device_get`) on a device of any driver.
struct AnyDeviceGet(NonNull<bindings::ib_device>);

impl Drop for AnyDeviceGet {
    fn drop(&mut self) {
        // SAFETY: We own the reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}

/// A registration reference on a registered device of driver `T`: it stays
/// registered (and valid) until the reference is dropped.
///
/// # Invariants
///
/// The pointer is a `DriverDevice<T>` on which this object holds an
/// `ib_device_try_get` reference.
pub(crate) struct DeviceGet<T: Driver>(NonNull<bindings::ib_device>, PhantomData<T>);

impl<T: Driver> Deref for DeviceGet<T> {
    type Target = DriverDevice<T>;

    fn deref(&self) -> &DriverDevice<T> {
        // SAFETY: By the type invariant the device is registered, so valid
        // with its data initialised.
        unsafe { DriverDevice::from_raw(self.0.as_ptr()) }
    }
}

impl<T: Driver> DeviceGet<T> {
    /// Unregisters the device from a work item, for callers that may not
    /// sleep on it (netdev notifiers: `ib_unregister_device_queued`).
    pub(crate) fn unregister_queued(self) {
        // SAFETY: The reference keeps the device valid; the device has
        // `dealloc_driver`, as the function requires.
        unsafe { bindings::ib_unregister_device_queued(self.0.as_ptr()) };
    }
}

impl<T: Driver> Drop for DeviceGet<T> {
    fn drop(&mut self) {
        // SAFETY: We own the reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}

/// A device allocated by [`DriverDevice::alloc`], not registered yet. Freed
/// (with its data) if dropped unregistered.
///
/// # Invariants
///
/// The pointer is a `DriverDevice<T>` with initialised data, in the list,
/// not registered, owned by this object.
pub(crate) struct NewDevice<T: Driver>(NonNull<bindings::ib_device>, PhantomData<T>);

impl<T: Driver> Deref for NewDevice<T> {
    type Target = DriverDevice<T>;

    fn deref(&self) -> &DriverDevice<T> {
        // SAFETY: By the type invariant.
        unsafe { DriverDevice::from_raw(self.0.as_ptr()) }
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
}

impl<T: Driver> NewDevice<T> {
    /// Binds `ndev` to port 1 and registers the device as `name`.
    ///
    /// On success ib_core owns the device; it may be unregistered (and
    /// freed) by another thread at any time after this returns. On failure
    /// the device is freed.
    pub(crate) fn register(self, name: &CStr, info: &DeviceInfo<'_>, ndev: &NetDevice) -> Result {
        let ib = self.0.as_ptr();
        // SAFETY: By the type invariant we own the unregistered device.
        unsafe {
            let n = info.node_desc.to_bytes_with_nul();
            let desc = &mut (*ib).node_desc;
            let len = n.len().min(desc.len());
            core::ptr::copy_nonoverlapping(n.as_ptr().cast(), desc.as_mut_ptr(), len);
            desc[desc.len() - 1] = 0;
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as u8;
            (*ib).phys_port_cnt = info.phys_port_cnt;
            (*ib).num_comp_vectors = 1;
            (*ib).node_guid = u64::from_ne_bytes(info.node_guid);
        }
        // SAFETY: The device is ours and `ndev` valid and registered; the
        // reference ib_core takes is dropped when the device is freed or
        // the netdev detached.
        to_result(unsafe { bindings::ib_device_set_netdev(ib, ndev.as_raw(), 1) })?;
        // SAFETY: The device is ours; `name` is NUL-terminated; no DMA.
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
        // `dealloc_driver` (drops the data, leaves the list) and frees it.
        unsafe { bindings::ib_dealloc_device(self.0.as_ptr()) };
    }
}

/// A held reference on a netdev (`dev_hold`), dropped with `dev_put`.
///
/// # Invariants
///
/// The pointer is a valid net device on which this object holds a
/// reference.
pub(crate) struct NetDeviceRef(NonNull<bindings::net_device>);

impl Deref for NetDeviceRef {
    type Target = NetDevice;

    fn deref(&self) -> &NetDevice {
        // SAFETY: The held reference keeps the device valid.
        unsafe { NetDevice::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for NetDeviceRef {
    fn drop(&mut self) {
        // SAFETY: We own the reference.
        unsafe { bindings::rverbs_dev_put(self.0.as_ptr()) };
    }
}

/// Unregisters every device made by [`DriverDevice::alloc`] that is still
/// registered, and waits until all are freed. For module unload, after the
/// link type is unregistered (no new devices).
pub(crate) fn unregister_all() {
    loop {
        let next = {
            let devices = DEVICES.lock();
            if devices.is_empty() {
                return;
            }
            // A device in the list is valid: `dealloc_driver` takes it out
            // (under this lock) before ib_core frees it. One whose
            // registration count is 0 is being unregistered already.
            devices.iter().map(|e| e.ptr).find(|&ib| {
                // SAFETY: In the list, so valid (see above).
                unsafe { bindings::rverbs_ib_device_try_get(ib.as_ptr()) }
            })
        };
        match next {
            // SAFETY: We hold the registration reference it puts; the
            // device has `dealloc_driver`.
            Some(ib) => unsafe { bindings::ib_unregister_device_and_put(ib.as_ptr()) },
            // Unregistrations under way elsewhere (a netdev notifier's work
            // item, `rdma link del`): they end in `dealloc_driver` soon.
            None => kernel::time::delay::fsleep(kernel::time::Delta::from_millis(10)),
        }
    }
}
