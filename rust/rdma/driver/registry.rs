// SPDX-License-Identifier: GPL-2.0

//! The devices of a driver, for lookups and for the driver's unload.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! ib_core frees a device after its last operation, `dealloc_driver`, and
//! any thread may start that: `rdma link del`, a netdev notifier's work
//! item, `ib_unregister_driver` of a module that shares the driver id. A
//! module must not unload while one of those is still running its code.
//!
//! The registry holds a reference to the memory of every device it
//! registered (`get_device`), so that it can always call
//! `ib_unregister_device` on it: that unregisters a live device, and for a
//! device whose unregistration another thread began, it waits until that
//! one is complete, `dealloc_driver` included (ib_core serialises them
//! with the device's `unregistration_lock`). Dropping the registry does
//! that for every device, then lets go of them: afterwards no code of the
//! driver runs for any of its devices. Devices unregistered meanwhile are
//! let go the same way at the next registration.

use super::{
    device::{
        DeviceGet,
        DeviceInfo,
        DeviceMemory,
        DriverDevice,
        NewDevice, //
    },
    ops::Driver,
};
use crate::bindings;
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};
use kernel::{
    alloc::kvec::PushError,
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{
        aref::ARef,
        Mutex, //
    },
};

/// The `struct device` of an RDMA device (`ib_device.dev`, the first member
/// of a union with `coredev`, whose own first member is the same `dev`).
///
/// # Safety
///
/// `ptr` is a valid device.
pub(super) unsafe fn dev_of(ptr: *mut bindings::ib_device) -> *mut bindings::device {
    // SAFETY: The projection stays inside the valid device; a union's
    // members start at its address.
    unsafe { (&raw mut (*ptr).__bindgen_anon_1).cast() }
}

/// A device of the registry, whose memory it keeps.
struct Entry(ARef<DeviceMemory>);

impl Entry {
    /// The device.
    fn ptr(&self) -> NonNull<bindings::ib_device> {
        // SAFETY: The address of a valid device is not null.
        unsafe { NonNull::new_unchecked(self.0.as_ptr()) }
    }

    /// Takes a reference to the memory of `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid device.
    unsafe fn new(ptr: NonNull<bindings::ib_device>) -> Self {
        // SAFETY: The caller's promise: a valid device.
        Self(unsafe { DeviceMemory::get(ptr) })
    }

    /// Waits until the device is unregistered: unregisters it if it is
    /// registered, or waits for an unregistration under way elsewhere to
    /// complete (`ib_unregister_device`). Then lets go of its memory.
    fn unregister_and_release(self) {
        // SAFETY: The memory is valid while referenced. The device either
        // is registered with `dealloc_driver` (it may be unregistered so),
        // or was never registered, or its unregistration began: the
        // function handles all three, under the device's
        // `unregistration_lock`.
        unsafe { bindings::ib_unregister_device(self.0.as_ptr()) };
        // The memory's reference goes with `self`.
    }
}

/// The devices of driver `T` that it registered; unregisters them all when
/// dropped (see the module documentation).
#[pin_data(PinnedDrop)]
pub(crate) struct Registry<T: Driver> {
    /// Serialises registrations, and the release of devices that are gone.
    #[pin]
    registering: Mutex<()>,
    #[pin]
    devices: Mutex<KVec<Entry>>,
    _t: PhantomData<T>,
}

impl<T: Driver> Registry<T> {
    /// An empty registry.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            registering <- new_mutex!(()),
            devices <- new_mutex!(KVec::new()),
            _t: PhantomData,
        })
    }

    /// Registers `dev` as `name` and keeps it. On success returns a
    /// registration reference, so the caller can finish setting it up
    /// before anyone else may unregister it; on failure the device is
    /// freed.
    pub(crate) fn register(
        &self,
        dev: NewDevice<T>,
        name: &CStr,
        info: &DeviceInfo<'_>,
    ) -> Result<DeviceGet<T>> {
        let _registering = self.registering.lock();
        self.release_gone();
        let ptr = dev.as_ptr();
        // Kept before it is registered, so that nothing can fail once it is.
        let mut devices = self.devices.lock();
        devices.reserve(1, GFP_KERNEL)?;
        // SAFETY: `dev` owns the valid device.
        let entry = unsafe { Entry::new(ptr) };
        if let Err(PushError(entry)) = devices.push_within_capacity(entry) {
            // Room was reserved above, so this does not happen.
            drop(devices);
            entry.unregister_and_release();
            return Err(ENOMEM);
        }
        drop(devices);
        if let Err(e) = dev.register(name, info) {
            // Freed by `register`; only the entry's reference is left.
            self.forget(ptr);
            return Err(e);
        }
        // SAFETY: The entry keeps the memory valid.
        match unsafe { DeviceGet::try_get(ptr) } {
            Some(dev) => Ok(dev),
            // Unregistered already by someone else.
            None => Err(ENODEV),
        }
    }

    /// Removes the entry of `ptr` and lets go of its memory, for a device
    /// that never registered (and that nobody else knows).
    fn forget(&self, ptr: NonNull<bindings::ib_device>) {
        let entry = {
            let mut devices = self.devices.lock();
            let Some(i) = devices.iter().position(|e| e.ptr() == ptr) else {
                return;
            };
            devices.remove(i)
        };
        if let Ok(entry) = entry {
            entry.unregister_and_release();
        }
    }

    /// Lets go of the devices whose unregistration began, once it is
    /// complete. Called with `registering` held, so that no entry belongs
    /// to a registration in progress.
    fn release_gone(&self) {
        let gone = {
            let mut devices = self.devices.lock();
            // Without memory for the list, they are let go next time.
            let Ok(mut gone) = KVec::with_capacity(devices.len(), GFP_KERNEL) else {
                return;
            };
            let mut i = 0;
            while i < devices.len() {
                // SAFETY: The entry keeps the memory valid.
                if unsafe { DeviceGet::<T>::try_get(devices[i].ptr()) }.is_some() {
                    i += 1;
                    continue;
                }
                let Ok(entry) = devices.remove(i) else {
                    break;
                };
                // Room for every entry was reserved above.
                if let Err(PushError(entry)) = gone.push_within_capacity(entry) {
                    let _ = devices.push_within_capacity(entry);
                    break;
                }
            }
            gone
        };
        for entry in gone {
            entry.unregister_and_release();
        }
    }

    /// The first registered device for which `pred` holds, with a
    /// registration reference.
    pub(crate) fn find(&self, pred: impl Fn(&DriverDevice<T>) -> bool) -> Option<DeviceGet<T>> {
        let devices = self.devices.lock();
        devices.iter().find_map(|e| {
            // SAFETY: The entry keeps the memory valid.
            let dev = unsafe { DeviceGet::<T>::try_get(e.ptr()) }?;
            pred(&dev).then_some(dev)
        })
    }

    /// Unregisters every device, waiting for unregistrations under way
    /// elsewhere, and lets go of them: afterwards no code of the driver runs
    /// for a device of the registry (until the next [`Registry::register`]).
    pub(crate) fn unregister_all(&self) {
        let _registering = self.registering.lock();
        let devices = core::mem::take(&mut *self.devices.lock());
        for entry in devices {
            entry.unregister_and_release();
        }
    }
}

#[pinned_drop]
impl<T: Driver> PinnedDrop for Registry<T> {
    fn drop(self: Pin<&mut Self>) {
        self.unregister_all();
    }
}
