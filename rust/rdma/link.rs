// SPDX-License-Identifier: GPL-2.0

//! RDMA link types (`struct rdma_link_ops`): `rdma link add NAME type TYPE
//! netdev NETDEV` of iproute2.
//!
//! C header: [`include/rdma/rdma_netlink.h`](srctree/include/rdma/rdma_netlink.h)
//!
//! ib_core calls `newlink` with no context of the link type, so a
//! registration publishes where its data is in a [`LinkSlot`], a `static`
//! the link type declares, for as long as it is registered: the same type
//! cannot be registered twice, and no initialisation is needed before the
//! first registration.

use crate::{
    bindings,
    net::device::NetDevice, //
};
use core::ptr::NonNull;
use kernel::{
    error::from_result,
    ffi::{
        c_char,
        c_int, //
    },
    prelude::*,
    str::CStr,
    sync::atomic::{
        Acquire,
        Atomic,
        Full,
        Release, //
    },
    types::Opaque,
};

/// A link type: the data of its registration handles `newlink`.
pub(crate) trait LinkType: Send + Sync + Sized + 'static {
    /// The name of the type (`rdma link add ... type NAME`).
    const TYPE: &'static CStr;

    /// Where the registration of this type is published while it exists:
    /// a `static LinkSlot<Self>` of the implementer.
    fn slot() -> &'static LinkSlot<Self>;

    /// Creates and registers device `name` on `ndev` (`newlink`). ib_core
    /// checked that `name` is not empty and has no `%`, and holds a
    /// reference to `ndev`. Calls are not serialised by ib_core.
    fn newlink(&self, name: &CStr, ndev: &NetDevice) -> Result;
}

/// The published registration of link type `T`, empty while it is not
/// registered.
///
/// # Invariants
///
/// Non-null only between the publication and the unregistration of a
/// [`LinkRegistration<T>`], and then it points to its (pinned) data.
pub(crate) struct LinkSlot<T>(Atomic<*mut T>);

impl<T> LinkSlot<T> {
    /// An empty slot, for a `static`.
    pub(crate) const fn new() -> Self {
        Self(Atomic::new(core::ptr::null_mut()))
    }
}

/// The registration of link type `T` (`rdma_link_register`) with its data;
/// unregistered on drop (`rdma_link_unregister`), after which no `newlink`
/// runs.
///
/// # Invariants
///
/// `ops` is registered with ib_core and `T::slot()` points to `data` from
/// the end of [`LinkRegistration::register`] until `drop`.
#[pin_data(PinnedDrop)]
pub(crate) struct LinkRegistration<T: LinkType> {
    #[pin]
    data: T,
    #[pin]
    ops: Opaque<bindings::rdma_link_ops>,
}

// SAFETY: ib_core uses the ops under its own lock; the data is `Send`.
unsafe impl<T: LinkType> Send for LinkRegistration<T> {}
// SAFETY: `&self` only gives `&T`, which is `Sync`.
unsafe impl<T: LinkType> Sync for LinkRegistration<T> {}

impl<T: LinkType> LinkRegistration<T> {
    /// Registers link type `T` with `data`. `EBUSY` if `T` is registered
    /// already.
    pub(crate) fn register(data: impl PinInit<T, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            data <- data,
            ops <- Opaque::try_ffi_init(|slot: *mut bindings::rdma_link_ops| {
                // The data is initialised and pinned: publish it, once.
                // SAFETY: `slot` is the `ops` field of the object being
                // initialised, whose `data` field comes first.
                let this = unsafe { kernel::container_of!(
                    slot.cast::<Opaque<bindings::rdma_link_ops>>(),
                    Self,
                    ops
                ) };
                // SAFETY: `data` of the object being initialised is
                // initialised (see above); only its address is taken.
                let data = unsafe { &raw const (*this).data }.cast_mut();
                T::slot()
                    .0
                    .cmpxchg(core::ptr::null_mut(), data, Full)
                    .map_err(|_| EBUSY)?;
                // SAFETY: `slot` is valid for writes; the `type` string is
                // static.
                unsafe {
                    slot.write(bindings::rdma_link_ops {
                        list: bindings::list_head {
                            next: core::ptr::null_mut(),
                            prev: core::ptr::null_mut(),
                        },
                        type_: T::TYPE.as_char_ptr(),
                        newlink: Some(Self::newlink),
                        dellink: None,
                    });
                    // INVARIANT: Published above and registered here, both
                    // undone in `drop`.
                    bindings::rdma_link_register(slot);
                }
                Ok::<(), Error>(())
            }),
        }? Error)
    }

    /// # Safety
    ///
    /// Called by ib_core's netlink handler, for a registered link type `T`
    /// (under ib_core's link lock, which `rdma_link_unregister` waits for),
    /// with a NUL-terminated name and a valid, referenced netdev.
    unsafe extern "C" fn newlink(name: *const c_char, ndev: *mut bindings::net_device) -> c_int {
        // SAFETY: `name` is NUL-terminated and `ndev` referenced by ib_core
        // for the call (the caller's promise): what `from_char_ptr` and
        // `from_raw` need, for the call.
        let (name, ndev) = unsafe { (CStr::from_char_ptr(name), NetDevice::from_raw(ndev)) };
        let Some(data) = NonNull::new(T::slot().0.load(Acquire)) else {
            return EINVAL.to_errno();
        };
        // SAFETY: The type is registered, so the slot points to the pinned
        // data of its registration, which outlives this call (its drop
        // unregisters first, which waits for us).
        let data = unsafe { data.as_ref() };
        from_result(|| data.newlink(name, ndev).map(|()| 0))
    }
}

#[pinned_drop]
impl<T: LinkType> PinnedDrop for LinkRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered (type invariant); this waits for running
        // `newlink` calls.
        unsafe { bindings::rdma_link_unregister(self.ops.get()) };
        // No `newlink` runs any more: unpublish.
        T::slot().0.store(core::ptr::null_mut(), Release);
    }
}
