// SPDX-License-Identifier: GPL-2.0

//! RDMA devices (`struct ib_device`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::ah_attr::AhType;
use crate::errno::to_result;
use crate::{
    bindings,
    net::device::NetDevice, //
};
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// An RDMA device.
///
/// # Invariants
///
/// The wrapped `struct ib_device` is valid (allocated by `_ib_alloc_device`
/// and not freed) for as long as a reference to it exists. Its port data
/// exists once ib_core has set the device up for registration; the methods
/// that need it check.
#[repr(transparent)]
pub(crate) struct Device(Opaque<bindings::ib_device>);

// SAFETY: ib_core's device may be used from any thread: its state is
// protected by ib_core's own locks, and the methods below only call ib_core
// or read fields that are fixed once the device is registered.
unsafe impl Send for Device {}
// SAFETY: See `Send`.
unsafe impl Sync for Device {}

impl Device {
    /// Returns the device behind a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `struct ib_device` that stays valid for the
    /// lifetime `'a`.
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
    ///
    /// They are set by `ib_set_device_ops` before registration and do not
    /// change while the device is registered, which is when the verbs core
    /// uses them.
    pub(super) fn ops(&self) -> &bindings::ib_device_ops {
        // SAFETY: By the type invariant the device is valid; see above for
        // why nobody writes the table while the reference lives.
        unsafe { &(*self.as_raw()).ops }
    }

    fn has_port_data(&self) -> bool {
        // SAFETY: By the type invariant the device is valid; the pointer is
        // set once, when ib_core sets the device up, and read as C does.
        !unsafe { (*self.as_raw()).port_data }.is_null()
    }

    /// Whether `port` is a port of this device (`rdma_is_port_valid`): 0 on
    /// a switch, 1 to `phys_port_cnt` otherwise.
    ///
    /// Read here rather than through a C helper: the verbs call it on every
    /// create.
    pub(crate) fn is_port_valid(&self, port: u32) -> bool {
        let raw = self.as_raw();
        // SAFETY: By the type invariant the device is valid; `is_switch`
        // and `phys_port_cnt` are set before it is registered and never
        // change afterwards. The bitfield is read through the raw pointer.
        let (is_switch, ports) = unsafe {
            (
                bindings::ib_device::is_switch_raw(raw) != 0,
                (*raw).phys_port_cnt,
            )
        };
        // `rdma_start_port` and `rdma_end_port`.
        if is_switch {
            port == 0
        } else {
            (1..=ports).contains(&port)
        }
    }

    /// The immutable attributes of `port` (`port_data[port].immutable`),
    /// or `None` for an invalid port or a device not set up yet.
    fn port_immutable(&self, port: u32) -> Option<&bindings::ib_port_immutable> {
        if !self.is_port_valid(port) || !self.has_port_data() {
            return None;
        }
        // CAST: A valid port number, at most `phys_port_cnt` (a `u32`).
        let port = port as usize;
        // SAFETY: The device is valid (type invariant) and `port` is one of
        // its ports: `port_data` has an entry for it (checked above), whose
        // immutable attributes are set before registration and never change.
        Some(unsafe { &(*(*self.as_raw()).port_data.add(port)).immutable })
    }

    /// The capability flags of `port` (`core_cap_flags`); none for an
    /// invalid port.
    fn core_cap_flags(&self, port: u32) -> u32 {
        self.port_immutable(port).map_or(0, |im| im.core_cap_flags)
    }

    /// Whether address handles on `port` need a GRH (`rdma_is_grh_required`).
    /// False for an invalid port.
    pub(crate) fn is_grh_required(&self, port: u32) -> bool {
        self.core_cap_flags(port) & bindings::RDMA_CORE_PORT_IB_GRH_REQUIRED != 0
    }

    /// Whether `port` runs RoCE, v1 or v2 (`rdma_protocol_roce`).
    pub(crate) fn is_roce(&self, port: u32) -> bool {
        self.core_cap_flags(port)
            & (bindings::RDMA_CORE_CAP_PROT_ROCE | bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP)
            != 0
    }

    /// Whether `port` runs InfiniBand (`rdma_protocol_ib`).
    pub(crate) fn is_ib(&self, port: u32) -> bool {
        self.core_cap_flags(port) & bindings::RDMA_CORE_CAP_PROT_IB != 0
    }

    /// Whether address handles of `port` carry Ethernet addresses
    /// (`rdma_cap_eth_ah`).
    pub(crate) fn has_eth_ah(&self, port: u32) -> bool {
        self.core_cap_flags(port) & bindings::RDMA_CORE_CAP_ETH_AH != 0
    }

    /// The kind of address handle `port` takes (`rdma_ah_find_type`).
    pub(crate) fn ah_type(&self, port: u32) -> AhType {
        let flags = self.core_cap_flags(port);
        if self.is_roce(port) {
            return AhType::Roce;
        }
        if self.is_ib(port) {
            if flags & bindings::RDMA_CORE_CAP_OPA_AH == bindings::RDMA_CORE_CAP_OPA_AH {
                return AhType::Opa;
            }
            return AhType::Ib;
        }
        // SAFETY: By the type invariant the device is valid; its type is
        // set when it is allocated and never changes.
        if unsafe { (*self.as_raw()).type_ } == bindings::rdma_nl_dev_type_RDMA_DEVICE_TYPE_SMI {
            return AhType::Ib;
        }
        AhType::Undefined
    }

    /// The number of entries of `port`'s GID table; 0 for an invalid port.
    pub(crate) fn gid_table_len(&self, port: u32) -> u32 {
        self.port_immutable(port)
            .map_or(0, |im| u32::try_from(im.gid_tbl_len).unwrap_or(0))
    }

    /// Whether the driver supports XRC domains (`ops.alloc_xrcd`).
    pub(crate) fn has_alloc_xrcd(&self) -> bool {
        self.ops().alloc_xrcd.is_some()
    }

    /// Ethernet speed and width of `port` for `query_port`
    /// (`ib_get_eth_speed`): `(speed, width)`.
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: The device is valid; the function finds the netdev with
        // `ib_device_get_netdev` (which checks `port`) and fails without
        // one; the outputs are valid for writes.
        to_result(unsafe {
            bindings::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width)
        })?;
        Ok((speed, width))
    }

    /// Sends `PORT_ACTIVE` or `PORT_ERR` to the device's event handlers if
    /// the state of the port on `ndev` changed since the last event
    /// (`ib_dispatch_port_state_event`), as ib_core does for devices in its
    /// netdev table. For drivers that keep their netdev themselves
    /// ([`crate::rdma::driver::Driver::get_netdev`]).
    pub(crate) fn dispatch_port_state_event(&self, ndev: &NetDevice) {
        if !self.has_port_data() {
            return;
        }
        // SAFETY: The device is valid with its port data; the function
        // finds the port through `ops.get_netdev` and does nothing if none
        // has `ndev`.
        unsafe { bindings::ib_dispatch_port_state_event(self.as_raw(), ndev.as_raw()) };
    }

    /// Whether a registered device of driver `driver_id` is bound to `ndev`
    /// in ib_core's netdev table (`ib_device_get_by_netdev`): soft-RoCE's
    /// devices are, and soft-RoCE refuses a second device on a netdev so.
    pub(crate) fn exists_on_netdev(ndev: &NetDevice, driver_id: u32) -> bool {
        // SAFETY: `ndev` is valid; the function takes a registration
        // reference on what it returns, given back at once.
        let ib = unsafe { bindings::ib_device_get_by_netdev(ndev.as_raw(), driver_id) };
        if ib.is_null() {
            return false;
        }
        // SAFETY: The reference taken above.
        unsafe { bindings::ib_device_put(ib) };
        true
    }
}
