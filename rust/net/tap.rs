// SPDX-License-Identifier: GPL-2.0

//! The RoCE v2 tap: every IP datagram to UDP port 4791 delivered to this
//! host, in a network namespace that asked for it ([`TapNet`]), is offered
//! to a handler before the UDP layer sees it; what the handler does not
//! take goes on as before.
//!
//! The C side (`rust/helpers/roce.c`) is a netfilter `LOCAL_IN` hook,
//! registered in a namespace while a [`TapNet`] of it lives (one per rv
//! device bound to a netdev there) and unregistered with the last one, when
//! the namespace goes away, or when the tap is dropped. Namespaces without
//! one, the host's included, pay nothing for it on their packets. No UDP port is
//! bound: soft-RoCE keeps its socket on port 4791 wherever it has one, and
//! receives every datagram the handler leaves.
//!
//! C header: [`include/linux/netfilter.h`](srctree/include/linux/netfilter.h)

use super::{
    device::NetDevice,
    skb::{
        RxSkb,
        SkBuff, //
    },
};
use crate::{
    bindings,
    errno::to_result, //
};
use core::{
    ffi::c_void,
    ptr::NonNull, //
};
use kernel::{
    error::from_err_ptr,
    prelude::*,
    sync::Arc, //
};

/// What receives the datagrams of the tap. Called in the network's
/// softirq (or with bottom halves disabled), one datagram at a time per
/// CPU, concurrently on several CPUs.
pub(crate) trait TapHandler: Send + Sync + 'static {
    /// Takes `skb` (a datagram to port 4791, IPv4 without options or IPv6
    /// with UDP as the next header; its UDP header is not checked yet), or
    /// gives it back to go on to the UDP layer.
    fn receive<'hook>(&self, skb: RxSkb<'hook>) -> Result<(), RxSkb<'hook>>;
}

/// The registered tap with its handler; unregistered on drop, after which
/// the handler is no longer called. One per module at a time.
///
/// # Invariants
///
/// The C tap is registered with `handler::<H>` and the address of the
/// object `handler` owns, until `drop`.
pub(crate) struct Tap<H: TapHandler> {
    /// Kept alive while registered: the C tap points to it.
    _handler: Arc<H>,
}

impl<H: TapHandler> Tap<H> {
    /// Registers `handler` in every namespace. `EBUSY` if a tap is already
    /// registered.
    pub(crate) fn register(handler: Arc<H>) -> Result<Self> {
        let data = Arc::as_ptr(&handler).cast_mut().cast::<c_void>();
        // SAFETY: `data` points to the handler, which lives until `drop`
        // unregisters the tap; `receive` matches `rverbs_tap_fn`.
        to_result(unsafe { bindings::rverbs_tap_register(Some(Self::receive), data) })?;
        // INVARIANT: Registered above.
        Ok(Self { _handler: handler })
    }

    /// # Safety
    ///
    /// Called by the C tap while registered with the data of a `Tap<H>`,
    /// with a valid packet whose reference the caller gives to this
    /// function if it returns `true`.
    unsafe extern "C" fn receive(data: *mut c_void, skb: *mut bindings::sk_buff) -> bool {
        // SAFETY: The caller's promise: `data` is the handler of a
        // registered tap, alive until after the tap is unregistered.
        let handler = unsafe { &*data.cast::<H>() };
        let Some(skb) = NonNull::new(skb) else {
            return false;
        };
        // SAFETY: The caller's reference, ours if we return `true`; if the
        // handler gives the buffer back, so do we. The stack is receiving
        // it: its netdev is valid during this call.
        let skb = unsafe { RxSkb::new(SkBuff::from_raw(skb)) };
        match handler.receive(skb) {
            Ok(()) => true,
            Err(skb) => {
                let _ = skb.into_skb().into_raw();
                false
            }
        }
    }
}

impl<H: TapHandler> Drop for Tap<H> {
    fn drop(&mut self) {
        // SAFETY: Registered (type invariant); this unregisters the hook in
        // every namespace and waits until no call runs any more.
        unsafe { bindings::rverbs_tap_unregister() };
    }
}

/// The tap's hook in a network namespace: registered there while some
/// `TapNet` of the namespace lives (and the tap is registered).
///
/// # Invariants
///
/// The pointer is an entry of `rverbs_tap_net_get`, on which this object
/// holds one use.
pub(crate) struct TapNet(NonNull<c_void>);

// SAFETY: The entry is only touched under the C side's mutex, from any
// thread.
unsafe impl Send for TapNet {}
// SAFETY: `&TapNet` allows nothing.
unsafe impl Sync for TapNet {}

impl TapNet {
    /// The hook in the namespace of `ndev`, registered there now if it is
    /// not yet. `ENODEV` if the namespace is going away. May sleep.
    pub(crate) fn get(ndev: &NetDevice) -> Result<Self> {
        // SAFETY: `ndev` is valid for the call; the helper uses the
        // namespace only while it holds a reference on it.
        let entry = from_err_ptr(unsafe { bindings::rverbs_tap_net_get(ndev.as_raw()) })?;
        // INVARIANT: An entry (never null) with a use for us.
        Ok(Self(NonNull::new(entry).ok_or(ENOMEM)?))
    }
}

impl Drop for TapNet {
    fn drop(&mut self) {
        kernel::task::might_sleep();
        // SAFETY: Our use of the entry (type invariant), given back once.
        unsafe { bindings::rverbs_tap_net_put(self.0.as_ptr()) };
    }
}
