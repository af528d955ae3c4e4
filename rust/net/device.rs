// SPDX-License-Identifier: GPL-2.0

//! Network devices and namespaces, read under RCU.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)

use crate::bindings;
use core::{
    ops::Deref,
    ptr::NonNull, //
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        aref::AlwaysRefCounted,
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        rcu, SpinLock,
    },
    types::{
        NotThreadSafe,
        Opaque, //
    },
};

/// A network device.
///
/// # Invariants
///
/// The wrapped `struct net_device` is valid for as long as a reference to
/// it exists: references are handed out bound to an RCU guard, to a held
/// reference count ([`ARef`], [`TrackedNetDevice`]) or to a caller that
/// holds one (a netdev notifier, ib_core's `newlink`).
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

// SAFETY: A net device may be used from any thread; what `&NetDevice`
// reads, it reads with the C helpers' own synchronisation (`READ_ONCE`,
// fields fixed while the device is registered).
unsafe impl Send for NetDevice {}
// SAFETY: See `Send`.
unsafe impl Sync for NetDevice {}

// SAFETY: `dev_hold` and `dev_put` keep a net device's reference count and
// may be called from any context on a valid device.
unsafe impl AlwaysRefCounted for NetDevice {
    fn inc_ref(&self) {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller gives up a reference count it owned.
        unsafe { bindings::rverbs_dev_put(obj.as_ptr().cast()) };
    }
}

/// A long-lived reference to a net device, counted with a tracker
/// (`netdev_hold`/`netdev_put`), so that a kernel built with
/// `CONFIG_NET_DEV_REFCNT_TRACKER` names its holder when the device cannot
/// go away.
///
/// # Invariants
///
/// `dev` is a valid net device on which this object holds one reference,
/// taken with `tracker`.
pub(crate) struct TrackedNetDevice {
    dev: NonNull<bindings::net_device>,
    tracker: Opaque<bindings::netdevice_tracker>,
}

// SAFETY: The reference may be dropped from any thread (`netdev_put`); the
// tracker is only touched by `new` and `drop`.
unsafe impl Send for TrackedNetDevice {}
// SAFETY: `&TrackedNetDevice` only gives `&NetDevice`, which is `Sync`.
unsafe impl Sync for TrackedNetDevice {}

// The tracker may move between `netdev_hold` and `netdev_put`: it is a
// pointer to what `ref_tracker_alloc` allocated (or nothing, without
// `CONFIG_NET_DEV_REFCNT_TRACKER`); nothing keeps the slot's address.
impl Unpin for TrackedNetDevice {}

impl TrackedNetDevice {
    /// Takes a tracked reference to `dev`. May sleep (the tracker is
    /// allocated with `GFP_KERNEL`).
    pub(crate) fn new(dev: &NetDevice) -> Self {
        let this = Self {
            dev: NonNull::from(dev).cast(),
            tracker: Opaque::uninit(),
        };
        // SAFETY: `dev` is valid; `netdev_hold` initialises the tracker.
        unsafe { bindings::rverbs_netdev_hold(dev.as_raw(), this.tracker.get()) };
        // INVARIANT: The reference was taken above with `tracker`.
        this
    }
}

impl Deref for TrackedNetDevice {
    type Target = NetDevice;

    fn deref(&self) -> &NetDevice {
        // SAFETY: The held reference keeps the device valid while `self`
        // is borrowed.
        unsafe { NetDevice::from_raw(self.dev.as_ptr()) }
    }
}

impl Drop for TrackedNetDevice {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference, taken with
        // this tracker.
        unsafe { bindings::rverbs_netdev_put(self.dev.as_ptr(), self.tracker.get()) };
    }
}

/// A net device held with a tracked reference and published to readers
/// that take no lock: they find it under RCU ([`PublishedNetDevice::get`])
/// until [`PublishedNetDevice::take`] unpublishes it, which returns the
/// reference only once no reader can still see the device.
///
/// # Invariants
///
/// `ptr` is null or the device of a reference that `held` holds, or that
/// [`PublishedNetDevice::take`] holds until a grace period after it cleared
/// `ptr`.
#[pin_data]
pub(crate) struct PublishedNetDevice {
    #[pin]
    held: SpinLock<Option<TrackedNetDevice>>,
    ptr: Atomic<*mut bindings::net_device>,
}

impl PublishedNetDevice {
    /// Holds and publishes `dev`. May sleep ([`TrackedNetDevice::new`]).
    pub(crate) fn new(dev: &NetDevice) -> impl PinInit<Self> + '_ {
        pin_init!(Self {
            held <- new_spinlock!(Some(TrackedNetDevice::new(dev))),
            // INVARIANT: The device that `held` holds.
            ptr: Atomic::new(dev.as_raw()),
        })
    }

    /// The device until it is taken, for as long as the read-side critical
    /// section of `_guard` lasts. Any context.
    pub(crate) fn get<'a>(&'a self, _guard: &'a rcu::Guard) -> Option<&'a NetDevice> {
        let ptr = self.ptr.load(Acquire);
        // SAFETY: Not null, it is the device of `held`, whose reference
        // `take` drops no earlier than a grace period after clearing the
        // pointer (type invariant): valid until `_guard` is dropped.
        (!ptr.is_null()).then(|| unsafe { NetDevice::from_raw(ptr) })
    }

    /// Whether `dev` is the device, not taken yet.
    pub(crate) fn is(&self, dev: &NetDevice) -> bool {
        core::ptr::eq(self.ptr.load(Relaxed), dev.as_raw())
    }

    /// Unpublishes the device and hands over its reference, once the
    /// readers that could see it are done (a grace period). `None` if it
    /// was taken before. Process context: sleeps.
    pub(crate) fn take(&self) -> Option<TrackedNetDevice> {
        kernel::task::might_sleep();
        let held = self.held.lock().take()?;
        // INVARIANT: Cleared before the reference leaves `held`'s hands
        // (below, after the grace period).
        self.ptr.store(core::ptr::null_mut(), Release);
        // SAFETY: Process context (the caller's, as `might_sleep` checks),
        // no read-side critical section of the caller's open.
        unsafe { bindings::synchronize_rcu() };
        Some(held)
    }
}

/// The RTNL lock (`rtnl_lock`), held until the guard is dropped. Netdev
/// registration and unregistration, and their notifiers, run under it.
/// Not `Send`: a mutex is released by the task that took it.
pub(crate) struct Rtnl(NotThreadSafe);

impl Rtnl {
    /// Takes the RTNL lock. Sleeps.
    pub(crate) fn lock() -> Self {
        // SAFETY: Always safe to call from process context; released in
        // `drop`, by this task (the guard cannot leave it).
        unsafe { bindings::rtnl_lock() };
        Self(NotThreadSafe)
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        // SAFETY: Taken in `lock`.
        unsafe { bindings::rtnl_unlock() };
    }
}

impl NetDevice {
    /// Returns the device behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid net device that stays valid for `'a` (for example
    /// read under RCU, with `'a` within the read-side critical section).
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is transparent over `net_device`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netdev_ifindex(self.as_raw()) }
    }

    /// Whether the device is an IPoIB device (`ARPHRD_INFINIBAND`).
    pub(crate) fn is_infiniband(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        u32::from(unsafe { bindings::rverbs_netdev_type(self.as_raw()) })
            == bindings::ARPHRD_INFINIBAND
    }

    /// The first six bytes of the hardware address (the MAC on Ethernet).
    pub(crate) fn mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: By the type invariant the device is valid; `dev_addr` of
        // a registered device points to `MAX_ADDR_LEN` bytes.
        let addr = unsafe { bindings::rverbs_netdev_dev_addr(self.as_raw()) };
        // SAFETY: See above: at least 6 readable bytes.
        unsafe { core::ptr::copy_nonoverlapping(addr, mac.as_mut_ptr(), mac.len()) };
        mac
    }

    /// The MTU, in bytes.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netdev_mtu(self.as_raw()) }
    }

    /// Whether the device is administratively up (`IFF_UP`).
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netdev_is_up(self.as_raw()) }
    }

    /// Whether the device is running with a carrier (a RoCE port on it is
    /// active: `ib_get_curr_port_state`).
    pub(crate) fn is_active(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netdev_is_active(self.as_raw()) }
    }

    /// Whether the device is registered and not being unregistered
    /// (`reg_state == NETREG_REGISTERED`). Only stable under [`Rtnl`]:
    /// unregistration changes it, and sends `NETDEV_UNREGISTER`, under it.
    pub(crate) fn is_registered(&self, _rtnl: &Rtnl) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netdev_is_registered(self.as_raw()) }
    }

    /// Whether the device is a bonding master or port (`netif_is_lag_*`),
    /// whose link events ib_core leaves to drivers that support bonding.
    pub(crate) fn is_lag(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_netif_is_lag(self.as_raw()) }
    }

    /// Whether the device is a VLAN device (`is_vlan_dev`).
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_is_vlan_dev(self.as_raw()) }
    }

    /// The network namespace of the device (`dev_net`).
    pub(crate) fn net<'a>(&'a self, _rcu: &'a rcu::Guard) -> &'a Net {
        // SAFETY: A device's namespace outlives it, and the device is valid
        // for `'a`.
        unsafe { Net::from_raw(bindings::rverbs_dev_net(self.as_raw())) }
    }
}

/// A network namespace.
///
/// # Invariants
///
/// The wrapped `struct net` is valid for as long as a reference exists.
#[repr(transparent)]
pub(crate) struct Net(Opaque<bindings::net>);

impl Net {
    /// Returns the namespace behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid namespace for the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net) -> &'a Self {
        // SAFETY: `Net` is transparent over `net`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }

    /// The device of the namespace that has the IPv4 address `addr`
    /// (`__ip_dev_find`).
    pub(crate) fn dev_with_ipv4_addr<'a>(
        &'a self,
        _rcu: &'a rcu::Guard,
        addr: [u8; 4],
    ) -> Option<&'a NetDevice> {
        // SAFETY: The namespace is valid and the RCU read lock is held
        // (`devref` false: no reference is taken).
        let dev =
            unsafe { bindings::__ip_dev_find(self.as_raw(), u32::from_ne_bytes(addr), false) };
        // SAFETY: A device found under RCU stays valid within the critical
        // section that `'a` is bounded by.
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }

    /// The first device of the namespace that has the IPv6 address `addr`
    /// (`ipv6_chk_addr` over `for_each_netdev_rcu`).
    pub(crate) fn dev_with_ipv6_addr<'a>(
        &'a self,
        _rcu: &'a rcu::Guard,
        addr: [u8; 16],
    ) -> Option<&'a NetDevice> {
        let in6 = bindings::in6_addr {
            in6_u: bindings::in6_addr__bindgen_ty_1 { u6_addr8: addr },
        };
        // SAFETY: The namespace is valid and the RCU read lock is held.
        let dev = unsafe { bindings::rverbs_ipv6_addr_dev_rcu(self.as_raw(), &in6) };
        // SAFETY: As for IPv4.
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }

    /// The device with index `ifindex` (`dev_get_by_index_rcu`).
    pub(crate) fn dev_by_index<'a>(
        &'a self,
        _rcu: &'a rcu::Guard,
        ifindex: i32,
    ) -> Option<&'a NetDevice> {
        // SAFETY: The namespace is valid and the RCU read lock is held.
        let dev = unsafe { bindings::dev_get_by_index_rcu(self.as_raw(), ifindex) };
        // SAFETY: A device found under RCU stays valid within the critical
        // section that `'a` is bounded by.
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }
}
