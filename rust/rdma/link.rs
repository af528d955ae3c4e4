// SPDX-License-Identifier: GPL-2.0

//! RDMA link types (`struct rdma_link_ops`): `rdma link add NAME type TYPE
//! netdev NETDEV` of iproute2.
//!
//! C header: [`include/rdma/rdma_netlink.h`](srctree/include/rdma/rdma_netlink.h)

use crate::{
    net::device::NetDevice,
    rdma::bindings, //
};
use core::marker::PhantomData;
use kernel::{
    error::from_result,
    ffi::{
        c_char,
        c_int, //
    },
    prelude::*,
    str::CStr,
    types::Opaque, //
};

/// A link type.
pub(crate) trait LinkType: 'static {
    /// The name of the type (`rdma link add ... type NAME`).
    const TYPE: &'static CStr;

    /// Creates and registers device `name` on `ndev` (`newlink`). ib_core
    /// checked that `name` is not empty and has no `%`. Calls are
    /// serialised (ib_core does not), so that checking a netdev for a
    /// device and registering one on it go together.
    fn newlink(name: &CStr, ndev: &NetDevice) -> Result;
}

kernel::global_lock! {
    // SAFETY: Initialised by `init` in the module initialiser, before any
    // link type is registered.
    unsafe(uninit) static NEWLINK: Mutex<()> = ();
}

/// Sets up the serialisation of `newlink`. Called once, when the module
/// loads.
pub(crate) fn init() {
    // SAFETY: Called once, from the module initialiser, before any use.
    unsafe { NEWLINK.init() };
}

/// The registration of link type `T` (`rdma_link_register`); unregistered
/// on drop (`rdma_link_unregister`), after which no `newlink` runs.
///
/// # Invariants
///
/// `ops` is registered with ib_core for the lifetime of this object.
pub(crate) struct LinkRegistration<T: LinkType> {
    ops: Pin<KBox<Opaque<bindings::rdma_link_ops>>>,
    _t: PhantomData<T>,
}

// SAFETY: After registration the `rdma_link_ops` is only touched by ib_core
// under its own lock.
unsafe impl<T: LinkType> Send for LinkRegistration<T> {}
// SAFETY: As above: `&self` gives no access to it.
unsafe impl<T: LinkType> Sync for LinkRegistration<T> {}

impl<T: LinkType> LinkRegistration<T> {
    /// Registers link type `T`.
    pub(crate) fn register() -> Result<Self> {
        let ops = KBox::pin(
            Opaque::new(bindings::rdma_link_ops {
                list: bindings::list_head {
                    next: core::ptr::null_mut(),
                    prev: core::ptr::null_mut(),
                },
                type_: T::TYPE.as_char_ptr(),
                newlink: Some(Self::newlink),
                dellink: None,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `ops` is pinned and lives until `drop` unregisters it;
        // its `type` string is static.
        unsafe { bindings::rdma_link_register(ops.get()) };
        // INVARIANT: Registered above.
        Ok(Self {
            ops,
            _t: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by ib_core's netlink handler with a NUL-terminated name and
    /// a valid, referenced netdev.
    unsafe extern "C" fn newlink(name: *const c_char, ndev: *mut bindings::net_device) -> c_int {
        // SAFETY: The caller's promise.
        let (name, ndev) = unsafe { (CStr::from_char_ptr(name), NetDevice::from_raw(ndev)) };
        let _serialised = NEWLINK.lock();
        from_result(|| T::newlink(name, ndev).map(|()| 0))
    }
}

impl<T: LinkType> Drop for LinkRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: Registered (type invariant); this waits for running
        // `newlink` calls.
        unsafe { bindings::rdma_link_unregister(self.ops.get()) };
    }
}
