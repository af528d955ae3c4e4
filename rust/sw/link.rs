// SPDX-License-Identifier: GPL-2.0

//! The `rverbs` link type (`rdma link add NAME type rverbs netdev NETDEV`)
//! and what the devices do when their netdev changes or goes away.

use super::device::{
    Limits,
    Rv,
    SwDevice, //
};
use crate::{
    net::{
        device::NetDevice,
        notifier::{
            NetdevEvent,
            NetdevHandler,
            NetdevNotifier, //
        },
    },
    rdma::{
        driver::{
            self,
            DeviceInfo,
            DriverDevice, //
        },
        link::{
            LinkRegistration,
            LinkType, //
        },
    },
};
use kernel::prelude::*;

/// Priority of the netdev notifier: above the default 0 of other modules,
/// so that the device lets go of an unregistering netdev before anyone
/// else looks it up by that netdev (see [`NetdevHandler::event`] below).
const NOTIFIER_PRIORITY: i32 = 1;

impl LinkType for Rv {
    const TYPE: &'static CStr = c"rverbs";

    fn newlink(name: &CStr, ndev: &NetDevice) -> Result {
        // As soft-RoCE: on the real device, not on a VLAN of it (the VLAN's
        // addresses appear in the real device's GID table).
        if ndev.is_vlan() {
            return Err(EPERM);
        }
        // One device of this driver id per netdev: soft-RoCE refuses a
        // second one the same way.
        if DriverDevice::<Rv>::driver_id_on_netdev(ndev) {
            return Err(EEXIST);
        }
        let data = SwDevice::new(ndev.mac(), Limits::from_params())?;
        let (debugfs, res) = data.debugfs();
        let info = DeviceInfo {
            node_desc: c"rverbs",
            node_guid: data.node_guid(),
            phys_port_cnt: 1,
        };
        DriverDevice::<Rv>::alloc(&crate::THIS_MODULE, data)?.register(name, &info, ndev)?;
        // Registered under `name`. Should the device already be gone,
        // the directory goes with the last reference to `debugfs`.
        if let Err(e) = debugfs.fill(name, &res) {
            pr_warn!("{}: no debugfs directory ({:?})\n", name, e);
        }
        Ok(())
    }
}

impl NetdevHandler for Rv {
    fn event(event: NetdevEvent, ndev: &NetDevice) {
        // Port state events (`PORT_ACTIVE`, `PORT_ERR`) are ib_core's own:
        // its netdev notifier dispatches them for every device bound to a
        // netdev (`ib_dispatch_port_state_event`). Port state and MTU are
        // read from the netdev when queried. What is left is the end.
        if event != NetdevEvent::Unregister {
            return;
        }
        let Some(dev) = DriverDevice::<Rv>::get_by_netdev(ndev) else {
            return;
        };
        // ib_core's contract: forget the netdev now, then go away.
        // Forgetting it first also hides the device from other modules'
        // notifiers that look devices up by netdev and driver id
        // (soft-RoCE's), which run after this one.
        dev.detach_netdev(1);
        dev.unregister_queued();
    }
}

/// The software RoCE driver while the module is loaded: the link type and
/// the netdev notifier. Dropping it removes every rv device.
pub(crate) struct SoftRoce {
    link: Option<LinkRegistration<Rv>>,
    notifier: Option<NetdevNotifier<Rv>>,
}

impl SoftRoce {
    /// Registers the link type.
    pub(crate) fn register() -> Result<Self> {
        let notifier = NetdevNotifier::register(NOTIFIER_PRIORITY)?;
        let link = LinkRegistration::register()?;
        Ok(Self {
            link: Some(link),
            notifier: Some(notifier),
        })
    }
}

impl Drop for SoftRoce {
    fn drop(&mut self) {
        // No new devices, then none left, then no more netdev events.
        drop(self.link.take());
        driver::unregister_all();
        drop(self.notifier.take());
    }
}
