// SPDX-License-Identifier: GPL-2.0

//! Netdev events (`register_netdevice_notifier`).
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)

use super::device::NetDevice;
use crate::{
    bindings,
    errno::to_result, //
};
use kernel::{
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
pub(crate) trait NetdevHandler: Send + Sync + 'static {
    /// Called for every event on every netdev, under RTNL, from the moment
    /// the notifier is registered (which replays the registration events
    /// of existing netdevs) until it is dropped.
    fn event(&self, event: NetdevEvent, ndev: &NetDevice);
}

/// A netdev notifier with its handler; registered while it exists.
///
/// # Invariants
///
/// `nb` is registered with the netdev notifier chain from the end of
/// [`NetdevNotifier::register`] until `drop`, and `handler` is initialised
/// before it is registered.
#[pin_data(PinnedDrop)]
pub(crate) struct NetdevNotifier<T: NetdevHandler> {
    // Initialised first: the chain may call the handler during
    // registration.
    handler: T,
    #[pin]
    nb: Opaque<bindings::notifier_block>,
}

// SAFETY: The block is only used by the notifier chain, under RTNL; the
// handler is `Send`.
unsafe impl<T: NetdevHandler> Send for NetdevNotifier<T> {}
// SAFETY: `&self` gives access to the handler only, which is `Sync`.
unsafe impl<T: NetdevHandler> Sync for NetdevNotifier<T> {}

impl<T: NetdevHandler> NetdevNotifier<T> {
    /// Registers `handler`. A higher `priority` runs before a lower one for
    /// the same event (other modules' notifiers have 0).
    pub(crate) fn register(handler: T, priority: i32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            handler,
            nb <- Opaque::try_ffi_init(move |slot: *mut bindings::notifier_block| {
                // SAFETY: `slot` is valid for writes and pinned: it is the
                // `nb` field of the object being initialised, whose handler
                // is already written.
                unsafe {
                    slot.write(bindings::notifier_block {
                        notifier_call: Some(Self::call),
                        next: core::ptr::null_mut(),
                        priority,
                    });
                    // INVARIANT: Registered here, unregistered in `drop`;
                    // on failure the object is not made, and nothing is
                    // registered.
                    to_result(bindings::register_netdevice_notifier(slot))
                }
            }),
        }? Error)
    }

    /// # Safety
    ///
    /// Called by the netdev notifier chain for a registered block: `nb` is
    /// the `nb` field of a live `NetdevNotifier<T>`, and `ptr` a valid
    /// `struct netdev_notifier_info` naming a valid netdev.
    unsafe extern "C" fn call(
        nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        // SAFETY: `nb` is the `nb` field of a `NetdevNotifier<T>` (only
        // `register` hands this function to the chain), live while
        // registered; `Opaque` is transparent over the block.
        let this = unsafe {
            &*kernel::container_of!(nb.cast::<Opaque<bindings::notifier_block>>(), Self, nb)
        };
        let info = ptr.cast::<bindings::netdev_notifier_info>();
        // SAFETY: The chain passes a valid info that names a netdev valid
        // for the call.
        let ndev =
            unsafe { NetDevice::from_raw(bindings::rverbs_netdev_notifier_info_to_dev(info)) };
        // CAST: Netdev events are small enumerators.
        let event = match event as u32 {
            bindings::netdev_cmd_NETDEV_UNREGISTER => NetdevEvent::Unregister,
            bindings::netdev_cmd_NETDEV_UP => NetdevEvent::Up,
            bindings::netdev_cmd_NETDEV_DOWN => NetdevEvent::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => NetdevEvent::Change,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => NetdevEvent::ChangeMtu,
            _ => NetdevEvent::Other,
        };
        this.handler.event(event, ndev);
        // CAST: NOTIFY_DONE is 0.
        bindings::NOTIFY_DONE as c_int
    }
}

#[pinned_drop]
impl<T: NetdevHandler> PinnedDrop for NetdevNotifier<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered (type invariant); unregistering waits for
        // running calls (the chain is walked under RTNL, which this takes).
        unsafe { bindings::unregister_netdevice_notifier(self.nb.get()) };
    }
}
