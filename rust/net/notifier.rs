// SPDX-License-Identifier: GPL-2.0

//! Netdev events (`register_netdevice_notifier`).
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)

use super::device::NetDevice;
use crate::bindings;
use core::marker::PhantomData;
use kernel::{
    error::to_result,
    ffi::{
        c_int,
        c_ulong,
        c_void, //
    },
    prelude::*,
    types::Opaque, //
};

/// A netdev event, as a driver bound to a netdev cares about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetdevEvent {
    /// The netdev is going away (`NETDEV_UNREGISTER`): drop every
    /// reference to it.
    Unregister,
    /// Administratively up (`NETDEV_UP`).
    Up,
    /// Administratively down (`NETDEV_DOWN`).
    Down,
    /// Carrier or flags changed (`NETDEV_CHANGE`).
    Change,
    /// The MTU changed (`NETDEV_CHANGEMTU`).
    ChangeMtu,
    /// Anything else.
    Other,
}

/// Receives netdev events.
pub(crate) trait NetdevHandler: 'static {
    /// Called for every event on every netdev, under RTNL.
    fn event(event: NetdevEvent, ndev: &NetDevice);
}

/// The registration of a netdev notifier; unregistered on drop.
///
/// # Invariants
///
/// `nb` is registered for the lifetime of this object.
pub(crate) struct NetdevNotifier<T: NetdevHandler> {
    nb: Pin<KBox<Opaque<bindings::notifier_block>>>,
    _t: PhantomData<T>,
}

// SAFETY: The block is only used by the notifier chain, under its lock.
unsafe impl<T: NetdevHandler> Send for NetdevNotifier<T> {}
// SAFETY: As above: `&self` gives no access to it.
unsafe impl<T: NetdevHandler> Sync for NetdevNotifier<T> {}

impl<T: NetdevHandler> NetdevNotifier<T> {
    /// Registers handler `T`. A higher `priority` runs before a lower one
    /// for the same event (other modules' notifiers have 0).
    pub(crate) fn register(priority: i32) -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(bindings::notifier_block {
                notifier_call: Some(Self::call),
                next: core::ptr::null_mut(),
                priority,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `nb` is pinned and lives until `drop` unregisters it.
        to_result(unsafe { bindings::register_netdevice_notifier(nb.get()) })?;
        // INVARIANT: Registered above.
        Ok(Self {
            nb,
            _t: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the netdev notifier chain: `ptr` is a valid
    /// `struct netdev_notifier_info`.
    unsafe extern "C" fn call(
        _nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        let info = ptr.cast::<bindings::netdev_notifier_info>();
        // SAFETY: The caller's promise; the info names a valid netdev.
        let ndev = unsafe { NetDevice::from_raw(bindings::rverbs_netdev_notifier_info_to_dev(info)) };
        // CAST: Netdev events are small enumerators.
        let event = match event as u32 {
            bindings::netdev_cmd_NETDEV_UNREGISTER => NetdevEvent::Unregister,
            bindings::netdev_cmd_NETDEV_UP => NetdevEvent::Up,
            bindings::netdev_cmd_NETDEV_DOWN => NetdevEvent::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => NetdevEvent::Change,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => NetdevEvent::ChangeMtu,
            _ => NetdevEvent::Other,
        };
        T::event(event, ndev);
        // CAST: NOTIFY_DONE is 0.
        bindings::NOTIFY_DONE as c_int
    }
}

impl<T: NetdevHandler> Drop for NetdevNotifier<T> {
    fn drop(&mut self) {
        // SAFETY: Registered (type invariant).
        unsafe { bindings::unregister_netdevice_notifier(self.nb.get()) };
    }
}
