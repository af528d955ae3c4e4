// SPDX-License-Identifier: GPL-2.0

//! RDMA devices (`struct ib_device`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::types::Opaque;

/// An RDMA device registered with ib_core.
///
/// # Invariants
///
/// The wrapped `struct ib_device` is valid and registered for as long as a
/// reference to it exists: ib_core does not unregister a device while one
/// of its objects (PD, AH, XRCD) is being created or destroyed.
#[repr(transparent)]
pub(crate) struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// Returns the device behind a raw pointer.
    ///
    /// # Safety
    ///
    /// - `ptr` points to a valid `struct ib_device`,
    /// - that stays registered for the lifetime `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `Device` is transparent over `ib_device`; validity and
        // lifetime are the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The driver's operations.
    pub(super) fn ops(&self) -> &bindings::ib_device_ops {
        // SAFETY: By the type invariant the device is valid; `ops` is set
        // once by `ib_set_device_ops` before registration and never changes.
        unsafe { &(*self.as_raw()).ops }
    }

    /// Whether `port` is a port of this device (`rdma_is_port_valid`).
    pub(crate) fn is_port_valid(&self, port: u32) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rverbs_rdma_is_port_valid(self.as_raw(), port) }
    }

    /// Whether address handles on `port` need a GRH (`rdma_is_grh_required`).
    ///
    /// `port` must be valid ([`Device::is_port_valid`]).
    pub(crate) fn is_grh_required(&self, port: u32) -> bool {
        if !self.is_port_valid(port) {
            return false;
        }
        // SAFETY: The device is valid (type invariant) and `port` is one of
        // its ports, so `port_data[port]` exists.
        unsafe { bindings::rverbs_rdma_is_grh_required(self.as_raw(), port) }
    }

    /// Whether the driver supports XRC domains (`ops.alloc_xrcd`).
    pub(crate) fn has_alloc_xrcd(&self) -> bool {
        self.ops().alloc_xrcd.is_some()
    }
}
