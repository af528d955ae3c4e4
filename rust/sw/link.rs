// SPDX-License-Identifier: GPL-2.0

//! The `rverbs` link type (`rdma link add NAME type rverbs netdev NETDEV`)
//! and what the devices do when their netdev changes or goes away.

use super::{
    device::{
        Limits,
        Rv,
        SwDevice, //
    },
    port::Ports,
};
use crate::{
    net::{
        device::{
            NetDevice,
            Rtnl, //
        },
        notifier::{
            NetdevEvent,
            NetdevHandler,
            NetdevNotifier, //
        },
        tap::Tap,
    },
    rdma::{
        device::Device,
        driver::{
            DeviceGet,
            DeviceInfo,
            DriverDevice,
            Registry, //
        },
        link::{
            LinkRegistration,
            LinkSlot,
            LinkType, //
        },
    },
};
use kernel::{
    debugfs::Dir,
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{
        Arc,
        Mutex, //
    },
};

/// Priority of the netdev notifier: above the default 0 of other modules,
/// so that a device lets go of an unregistering netdev before other
/// notifiers wait for it.
const NOTIFIER_PRIORITY: i32 = 1;

/// The rv devices of the module.
type Devices = Registry<Rv>;

/// The `rverbs` link type while it is registered.
#[pin_data]
pub(crate) struct SwLink {
    devices: Arc<Devices>,
    /// The netdevs of the devices, for the tap.
    ports: Arc<Ports>,
    /// `/sys/kernel/debug/rverbs/`, where each device gets a directory.
    debugfs: Dir,
    /// Serialises `newlink`, so that checking a netdev for a device and
    /// registering one on it go together (ib_core does not serialise).
    #[pin]
    newlink: Mutex<()>,
}

static LINK: LinkSlot<SwLink> = LinkSlot::new();

impl LinkType for SwLink {
    const TYPE: &'static CStr = c"rverbs";

    fn slot() -> &'static LinkSlot<Self> {
        &LINK
    }

    fn newlink(&self, name: &CStr, ndev: &NetDevice) -> Result {
        let _serialised = self.newlink.lock();
        // As soft-RoCE: on the real device, not on a VLAN of it (the VLAN's
        // addresses appear in the real device's GID table).
        if ndev.is_vlan() {
            return Err(EPERM);
        }
        // One device per netdev, counting soft-RoCE's (which refuses a
        // second one the same way; it cannot see rv devices, see
        // Documentation/rv0.rst).
        if self.devices.find(|dev| dev.is_bound_to(ndev)).is_some()
            || Device::exists_on_netdev(ndev, crate::rdma::rxe_abi::RDMA_DRIVER_RXE)
        {
            return Err(EEXIST);
        }
        let limits = Limits::from_params()?;
        let new = DriverDevice::<Rv>::alloc(
            &crate::THIS_MODULE,
            SwDevice::new(ndev, limits, self.ports.clone()),
        )?;
        let info = DeviceInfo {
            node_desc: c"rverbs",
            node_guid: new.node_guid(),
            phys_port_cnt: 1,
            // As soft-RoCE (`num_possible_cpus()`; the CPUs are numbered
            // without holes here): a CQ may name any of them.
            num_comp_vectors: kernel::cpu::nr_cpu_ids(),
        };
        let dev = self.devices.register(new, name, &info)?;
        // The netdev may have unregistered between ib_core's lookup and the
        // registration, before our notifier could know the device: its
        // `NETDEV_UNREGISTER` is then gone, and the device would keep the
        // netdev forever. Unregistration runs under RTNL: look once more.
        let attached = {
            let rtnl = Rtnl::lock();
            if ndev.is_registered(&rtnl) {
                // Packets from the wire, from now on.
                SwDevice::attach_port(&dev, ndev, &rtnl)
            } else {
                Err(ENODEV)
            }
        };
        // A device that failed here is gone when the error reaches the
        // caller ("rdma link add" must not find it after its error): the
        // unregistration is waited for, outside RTNL, which ib_core's
        // clients take while they let go of the device.
        if let Err(e) = attached {
            dev.detach_netdev();
            dev.unregister();
            return Err(e);
        }
        if let Err(e) = dev.fill_debugfs(&self.debugfs, name) {
            pr_warn!("{}: no debugfs directory ({:?})\n", name, e);
        }
        Ok(())
    }
}

/// The netdev events of rv devices.
struct Events {
    devices: Arc<Devices>,
}

impl Events {
    fn device_on(&self, ndev: &NetDevice) -> Option<DeviceGet<Rv>> {
        self.devices.find(|dev| dev.is_bound_to(ndev))
    }
}

impl NetdevHandler for Events {
    fn event(&self, event: NetdevEvent, ndev: &NetDevice) {
        match event {
            // ib_core sends these for devices in its netdev table; rv
            // devices keep their netdev themselves, so they send their own,
            // in the same cases (`handle_port_event` of device.c), once per
            // change of the port's state.
            NetdevEvent::Up | NetdevEvent::Down | NetdevEvent::Change => {
                if ndev.is_lag() {
                    return;
                }
                if let Some(dev) = self.device_on(ndev) {
                    dev.device().dispatch_port_state_event(ndev);
                }
            }
            // ib_core's contract: let go of the netdev now, then go away.
            NetdevEvent::Unregister => {
                if let Some(dev) = self.device_on(ndev) {
                    dev.detach_netdev();
                    dev.unregister_queued();
                }
            }
            // The MTU is read from the netdev when the port is queried.
            NetdevEvent::ChangeMtu | NetdevEvent::Other => {}
        }
    }
}

/// Unregisters every rv device when dropped.
struct UnregisterAll(Arc<Devices>);

impl Drop for UnregisterAll {
    fn drop(&mut self) {
        self.0.unregister_all();
    }
}

/// The software RoCE driver while the module is loaded: the link type, the
/// devices and their netdev notifier. Dropping it removes every rv device,
/// and returns once none of their code runs any more.
#[pin_data]
pub(crate) struct SoftRoce {
    // Dropped in this order: no more packets, no new devices, then none
    // left, then no more netdev events.
    tap: Tap<Ports>,
    #[pin]
    link: LinkRegistration<SwLink>,
    devices: UnregisterAll,
    #[pin]
    events: NetdevNotifier<Events>,
    // Last: no transmit buffer of a device left anywhere.
    tx_barrier: TxBarrier,
}

/// Waits, when dropped, until no transmit buffer of rverbs is left in the
/// network stack ([`super::tx::barrier`]).
struct TxBarrier;

impl Drop for TxBarrier {
    fn drop(&mut self) {
        super::tx::barrier();
    }
}

impl SoftRoce {
    /// Registers the link type, with device directories in `debugfs`.
    pub(crate) fn new(debugfs: Dir) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(move || {
            // Refuse limits that devices could not report, before anything.
            Limits::from_params()?;
            let devices = Arc::pin_init(Devices::new(), GFP_KERNEL)?;
            let ports = Arc::pin_init(Ports::new(), GFP_KERNEL)?;
            let tap = Tap::register(ports.clone())?;
            let events = Events {
                devices: devices.clone(),
            };
            let link_devices = devices.clone();
            Ok(try_pin_init!(Self {
                tap,
                events <- NetdevNotifier::register(events, NOTIFIER_PRIORITY),
                link <- LinkRegistration::register(try_pin_init!(SwLink {
                    devices: link_devices,
                    ports,
                    debugfs,
                    newlink <- new_mutex!(()),
                }? Error)),
                devices: UnregisterAll(devices),
                tx_barrier: TxBarrier,
            }? Error))
        })
    }
}
