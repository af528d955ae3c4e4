// SPDX-License-Identifier: GPL-2.0

//! Which rv device a packet from the wire is for: the netdevs that carry
//! an rv device, found under RCU by the tap ([`crate::net::tap`]) for each
//! RoCE v2 datagram it sees.
//!
//! A device is bound to its netdev from its registration until the netdev
//! unregisters (or moves to another namespace, which unregisters it
//! first), or the device goes away; the tap's hook is registered in the
//! netdev's namespace while a device is bound there ([`TapNet`]). The binding keeps the device's memory
//! ([`DeviceRef`]), not its registration: a packet takes a registration
//! reference while it is delivered, and none is taken once the device's
//! unregistration has begun. The bindings are few (one per rv device), so
//! they are a list, replaced as a whole when one comes or goes.

use super::{
    device::Rv,
    receive,
    wire::Count, //
};
use crate::{
    net::{
        device::NetDevice,
        skb::RxSkb,
        tap::{
            TapHandler,
            TapNet, //
        },
    },
    rdma::{
        device::Device,
        driver::{
            DeviceRef,
            DriverDevice, //
        },
        table::RcuTable,
    },
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        rcu,
        Arc,
        Mutex, //
    },
};

/// The only entry of the table: the list of bindings.
const LIST: u32 = 0;

/// A netdev that carries an rv device.
struct Binding {
    /// The netdev, as an address: compared, never followed; 0 once the
    /// binding is dead (see [`PortBinding`]'s drop).
    ndev: Atomic<usize>,
    dev: DeviceRef<Rv>,
}

/// The bindings of rv devices to their netdevs, for the tap.
#[pin_data]
pub(crate) struct Ports {
    #[pin]
    list: RcuTable<KVec<Arc<Binding>>>,
    /// Serialises the writers of `list`.
    #[pin]
    writing: Mutex<()>,
}

/// The address of a netdev, which identifies it while it is registered.
fn key(ndev: &NetDevice) -> usize {
    core::ptr::from_ref(ndev) as usize
}

impl Ports {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            list <- RcuTable::new(),
            writing <- new_mutex!(()),
        })
    }

    /// Replaces the list with `f` applied to a copy of it. May sleep.
    fn update(&self, f: impl FnOnce(&mut KVec<Arc<Binding>>) -> Result) -> Result {
        let _writing = self.writing.lock();
        let mut list = KVec::new();
        {
            let guard = rcu::read_lock();
            if let Some(old) = self.list.get(&guard, LIST) {
                list.reserve(old.len() + 1, GFP_ATOMIC)?;
                for b in old.iter() {
                    list.push(b.clone(), GFP_ATOMIC)?;
                }
            }
        }
        f(&mut list)?;
        let list = Arc::new(list, GFP_KERNEL)?;
        // The old list, and any binding only it held, go once no reader
        // sees them.
        drop(self.list.replace(LIST, list)?);
        Ok(())
    }

    /// Binds `dev` to `ndev`: packets arriving on `ndev` (or a VLAN on it)
    /// go to `dev` from now on. May sleep.
    pub(crate) fn bind(
        self: &Arc<Self>,
        dev: &DriverDevice<Rv>,
        ndev: &NetDevice,
    ) -> Result<PortBinding> {
        // The tap's hook in the netdev's namespace, first: registered
        // there while it has a bound device.
        let hook = TapNet::get(ndev)?;
        let binding = Arc::new(
            Binding {
                ndev: Atomic::new(key(ndev)),
                dev: DeviceRef::new(dev),
            },
            GFP_KERNEL,
        )?;
        let kept = binding.clone();
        self.update(|list| {
            list.push(binding, GFP_KERNEL)?;
            Ok(())
        })?;
        Ok(PortBinding {
            ports: self.clone(),
            binding: kept,
            _hook: hook,
        })
    }
}

/// The binding of a device to its netdev; undone when dropped (which may
/// sleep: a grace period).
pub(crate) struct PortBinding {
    ports: Arc<Ports>,
    binding: Arc<Binding>,
    /// Dropped after the binding is out of the list.
    _hook: TapNet,
}

impl Drop for PortBinding {
    fn drop(&mut self) {
        // Dead first: no packet matches it from now on, even if there is
        // no memory for a new list (then it stays in the list, keeping its
        // device's memory, until the module goes; never matched again,
        // whatever netdev gets its address later).
        self.binding.ndev.store(0, Relaxed);
        let _ = self.ports.update(|list| {
            list.retain(|b| !Arc::ptr_eq(b, &self.binding));
            Ok(())
        });
    }
}

impl TapHandler for Ports {
    fn receive<'hook>(&self, skb: RxSkb<'hook>) -> Result<(), RxSkb<'hook>> {
        let (dev, rxe) = match skb.rx_real_dev() {
            None => (None, false),
            Some(ndev) => {
                let dev = {
                    let guard = rcu::read_lock();
                    self.list.get(&guard, LIST).and_then(|list| {
                        list.iter()
                            .filter(|b| b.ndev.load(Relaxed) == key(ndev))
                            .find_map(|b| b.dev.try_get())
                    })
                };
                // soft-RoCE accepts a netdev that has an rv device (it
                // cannot see rv devices): there it gets the packets, as
                // before rv0 had a wire.
                let rxe = dev.is_some()
                    && Device::exists_on_netdev(ndev, crate::rdma::rxe_abi::RDMA_DRIVER_RXE);
                (dev, rxe)
            }
        };
        let Some(dev) = dev else {
            return Err(skb);
        };
        if rxe {
            dev.wire_counters().count(Count::YieldRxe);
            return Err(skb);
        }
        receive::receive(&dev, skb)
    }
}
