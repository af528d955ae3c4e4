// SPDX-License-Identifier: GPL-2.0

//! The data of an rv device: its limits, its live objects and their
//! counters, its debugfs files, and the device itself (`SwDevice`), with
//! the objects the driver hands to ib_core (`SwAh`, `SwObject`, `SwPd`).
//! Its operations are the parent module's.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Resource limits and GID types of a device, from the module parameters
/// at creation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Protection domains.
    pub(crate) max_pd: u32,
    /// Address handles.
    pub(crate) max_ah: u32,
    /// XRC domains.
    pub(crate) max_xrcd: u32,
    /// Whether the port has RoCE v1 GIDs besides its RoCE v2 ones. Off by
    /// default: the data path sends RoCE v2 only, and a GID it cannot send
    /// from must not be in the table (rdma-core's tests take index 0, the
    /// first GID of the netdev's MAC, which ib_core makes RoCE v1 when the
    /// port has both). On, the verbs core's RoCE v1 address handles (a
    /// link-local destination's MAC from its GID) can be tested on rv0:
    /// soft-RoCE has RoCE v2 GIDs only.
    pub(crate) roce_v1: bool,
    /// Whether the devices take RC QPs (`rc=1`): their transport is being
    /// built (Documentation/rv0.rst), off by default until it is whole.
    pub(crate) rc: bool,
}

impl Limits {
    /// The limits the module was loaded with (`max_pd`, `max_ah`,
    /// `max_xrcd`: each from 1 to `i32::MAX`, ib_core reports them as
    /// `int`; `roce_v1`: 0 or 1), else `EINVAL`.
    pub(crate) fn from_params() -> Result<Self> {
        let roce_v1 = match *crate::module_parameters::roce_v1.value() {
            0 => false,
            1 => true,
            _ => return Err(EINVAL),
        };
        let rc = match *crate::module_parameters::rc.value() {
            0 => false,
            1 => true,
            _ => return Err(EINVAL),
        };
        let limits = Self {
            rc,
            max_pd: *crate::module_parameters::max_pd.value(),
            max_ah: *crate::module_parameters::max_ah.value(),
            max_xrcd: *crate::module_parameters::max_xrcd.value(),
            roce_v1,
        };
        let valid = |n: u32| n >= 1 && i32::try_from(n).is_ok();
        if !(valid(limits.max_pd) && valid(limits.max_ah) && valid(limits.max_xrcd)) {
            return Err(EINVAL);
        }
        Ok(limits)
    }
}

/// A count of live objects with a limit.
pub(crate) struct Counter {
    pub(in crate::sw) live: Atomic<u32>,
    pub(in crate::sw) max: u32,
}

impl Counter {
    fn new(max: u32) -> Self {
        Self {
            live: Atomic::new(0),
            max,
        }
    }

    /// Counts one more, or fails with `EINVAL` at the limit (soft-RoCE's
    /// object pools fail the same way).
    pub(crate) fn get(&self) -> Result {
        let mut cur = self.live.load(Relaxed);
        loop {
            if cur >= self.max {
                return Err(EINVAL);
            }
            match self.live.cmpxchg(cur, cur + 1, Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }

    pub(crate) fn put(&self) {
        self.live.fetch_sub(1, Relaxed);
    }

    fn live(&self) -> u32 {
        self.live.load(Relaxed)
    }
}

/// What a device counts: its limits, its live objects and its address
/// handles. Shared with the device's debugfs files, which own what they
/// print (`kernel::debugfs::File`), so that they may outlive the device's
/// data by a moment: the one reference-counted part of the device.
#[pin_data]
pub(crate) struct Resources {
    pub(in crate::sw) ucontexts: Counter,
    pub(in crate::sw) pds: Counter,
    pub(in crate::sw) xrcds: Counter,
    pub(in crate::sw) cqs: Counter,
    #[pin]
    pub(in crate::sw) qps: Ids,
    #[pin]
    pub(in crate::sw) mrs: Ids,
    #[pin]
    pub(in crate::sw) srqs: Ids,
    #[pin]
    pub(in crate::sw) mws: Ids,
    /// The next unique number of a PD or QP ([`SwPd::id`], `QpCore::uid`).
    pub(in crate::sw) uids: Atomic<u64>,
    #[pin]
    pub(in crate::sw) ahs: AhTable,
    pub(in crate::sw) max_ah: u32,
    /// The GIDs of the port, as ib_core adds and deletes them, for the
    /// data path.
    #[pin]
    pub(in crate::sw) gids: GidCache,
    /// What the wire counts.
    pub(in crate::sw) wire: Counters,
}

impl Resources {
    fn new(limits: Limits) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ucontexts: Counter::new(u32::MAX),
            pds: Counter::new(limits.max_pd),
            xrcds: Counter::new(limits.max_xrcd),
            cqs: Counter::new(cq::MAX_CQ),
            qps <- qp::qp_numbers(),
            mrs <- mr::mr_indexes(),
            srqs <- srq::srq_numbers(),
            mws <- mw::mw_indexes(),
            uids: Atomic::new(0),
            ahs <- AhTable::new(limits.max_ah),
            max_ah: limits.max_ah,
            gids <- GidCache::new(GID_TABLE_LEN),
            wire: Counters::new()?,
        }? Error)
    }
}

/// The text of the `resources` debugfs file: limits and live objects.
impl Writer for Resources {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(f, "ucontext {}", self.ucontexts.live())?;
        writeln!(f, "pd {} max {}", self.pds.live(), self.pds.max)?;
        writeln!(f, "ah {} max {}", self.ahs.live(), self.max_ah)?;
        writeln!(f, "xrcd {} max {}", self.xrcds.live(), self.xrcds.max)?;
        writeln!(f, "cq {} max {}", self.cqs.live(), self.cqs.max)?;
        writeln!(f, "qp {} max {}", self.qps.live(), self.qps.limit())?;
        writeln!(f, "mr {} max {}", self.mrs.live(), self.mrs.limit())?;
        writeln!(f, "srq {} max {}", self.srqs.live(), self.srqs.limit())?;
        writeln!(f, "mw {} max {}", self.mws.live(), self.mws.limit())
    }
}

/// The `resources` debugfs file: the device's [`Resources`], shared with it.
struct ResourcesFile(Arc<Resources>);

impl Writer for ResourcesFile {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.write(f)
    }
}

/// The `ah` debugfs file: the device's table of address handles.
struct AhFile(Arc<Resources>);

impl Writer for AhFile {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.ahs.write(f)
    }
}

/// The `gids` debugfs file: the device's copy of its GID table.
struct GidsFile(Arc<Resources>);

impl Writer for GidsFile {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.gids.write(f)
    }
}

/// The `wire` debugfs file: what the device's wire counts.
struct WireFile(Arc<Resources>);

impl Writer for WireFile {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.wire.write(f)
    }
}

/// The debugfs directory of a device, `/sys/kernel/debug/rverbs/<dev>/`.
pub(super) struct Debugfs {
    _ah: Pin<KBox<File<AhFile>>>,
    _gids: Pin<KBox<File<GidsFile>>>,
    _wire: Pin<KBox<File<WireFile>>>,
    _resources: Pin<KBox<File<ResourcesFile>>>,
    // Dropped after the files: a directory goes when its last child has.
    _dir: Dir,
}

/// The data of a device.
#[pin_data]
pub(crate) struct SwDevice {
    pub(in crate::sw) node_guid: [u8; 8],
    /// Whether the port has RoCE v1 GIDs too ([`Limits::roce_v1`]).
    pub(super) roce_v1: bool,
    /// Whether the device takes RC QPs ([`Limits::rc`]).
    pub(super) rc: bool,
    /// The netdev of the port, until it unregisters (ib_core asks for it
    /// with `get_netdev`).
    /// Every send reads it (its MTU and MAC) without a lock.
    #[pin]
    pub(in crate::sw) netdev: PublishedNetDevice,
    /// Where the tap finds the devices by netdev.
    pub(in crate::sw) ports: Arc<Ports>,
    /// The device's entry there, while it has its netdev.
    #[pin]
    pub(in crate::sw) port: Mutex<Option<PortBinding>>,
    pub(in crate::sw) res: Arc<Resources>,
    /// Made once ib_core accepted the device's name (a name already taken
    /// must not clash in debugfs first).
    #[pin]
    pub(super) debugfs: Mutex<Option<Debugfs>>,
    /// The QPs by number, for the data path.
    #[pin]
    pub(in crate::sw) qp_table: RcuTable<QpCore>,
    /// The memory regions by index (a key's upper 24 bits).
    #[pin]
    pub(in crate::sw) mr_table: RcuTable<MrCore>,
    /// The memory windows by index (their keys' upper 24 bits, above the
    /// regions').
    #[pin]
    pub(in crate::sw) mw_table: RcuTable<MwCore>,
}

/// The node GUID of a MAC address: its modified EUI-64
/// (`addrconf_addr_eui48`), as soft-RoCE derives it.
fn eui64(mac: [u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 2,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

impl SwDevice {
    /// The data of a new device bound to `ndev`, whose reference it keeps
    /// until [`SwDevice::detach_netdev`] or the end.
    pub(crate) fn new(
        ndev: &NetDevice,
        limits: Limits,
        ports: Arc<Ports>,
    ) -> impl PinInit<Self, Error> + '_ {
        try_pin_init!(Self {
            node_guid: eui64(ndev.mac()),
            roce_v1: limits.roce_v1,
            rc: limits.rc,
            netdev <- PublishedNetDevice::new(ndev),
            ports,
            port <- new_mutex!(None),
            res: Arc::pin_init(Resources::new(limits), GFP_KERNEL)?,
            debugfs <- new_mutex!(None),
            qp_table <- RcuTable::new(),
            mr_table <- RcuTable::new(),
            mw_table <- RcuTable::new(),
        }? Error)
    }

    /// The node GUID (network byte order).
    pub(crate) fn node_guid(&self) -> [u8; 8] {
        self.node_guid
    }

    /// Whether the port has RoCE v1 GIDs besides its RoCE v2 ones.
    pub(crate) fn roce_v1(&self) -> bool {
        self.roce_v1
    }

    /// Whether the device takes RC QPs.
    pub(crate) fn rc(&self) -> bool {
        self.rc
    }

    /// The netdev until it is detached, for as long as the read-side
    /// critical section of `guard` lasts.
    pub(crate) fn netdev_rcu<'a>(&'a self, guard: &'a rcu::Guard) -> Option<&'a NetDevice> {
        self.netdev.get(guard)
    }

    /// The netdev, with a reference for the caller, until it is detached.
    pub(crate) fn netdev(&self) -> Option<ARef<NetDevice>> {
        let guard = rcu::read_lock();
        self.netdev.get(&guard).map(ARef::from)
    }

    /// Whether the device is bound to `ndev`.
    pub(crate) fn is_bound_to(&self, ndev: &NetDevice) -> bool {
        self.netdev.is(ndev)
    }

    /// Lets go of the netdev (it is unregistering); the port is down from
    /// then on, and ib_core finds no netdev for it.
    pub(crate) fn detach_netdev(&self) {
        // No packets from the wire first (this waits for a grace period),
        // then the netdev, once no sender can still see it.
        let binding = self.port.lock().take();
        drop(binding);
        drop(self.netdev.take());
    }

    /// Binds `dev` to `ndev`, its netdev, for the packets of the tap:
    /// after registration, with RTNL held by the caller so that the netdev
    /// cannot unregister meanwhile. `ENODEV` if the device let go of it.
    pub(crate) fn attach_port(dev: &DriverDevice<Rv>, ndev: &NetDevice, _rtnl: &Rtnl) -> Result {
        let binding = dev.ports.bind(dev, ndev)?;
        let mut slot = dev.port.lock();
        if !dev.is_bound_to(ndev) {
            drop(slot);
            drop(binding);
            return Err(ENODEV);
        }
        *slot = Some(binding);
        Ok(())
    }

    /// The GIDs of the port, read without a lock.
    pub(crate) fn gids(&self) -> &GidCache {
        &self.res.gids
    }

    /// What the wire counts.
    pub(crate) fn wire_counters(&self) -> &Counters {
        &self.res.wire
    }

    /// The count of completion queues, against their limit.
    pub(crate) fn cqs(&self) -> &Counter {
        &self.res.cqs
    }

    /// The QP numbers.
    pub(crate) fn qps(&self) -> &Ids {
        &self.res.qps
    }

    /// The SRQ numbers.
    pub(crate) fn srqs(&self) -> &Ids {
        &self.res.srqs
    }

    /// The MR indexes.
    pub(crate) fn mrs(&self) -> &Ids {
        &self.res.mrs
    }

    /// The QPs by number.
    pub(crate) fn qp_table(&self) -> &RcuTable<QpCore> {
        &self.qp_table
    }

    /// The memory regions by index.
    pub(crate) fn mr_table(&self) -> &RcuTable<MrCore> {
        &self.mr_table
    }

    /// The memory window indexes.
    pub(crate) fn mws(&self) -> &Ids {
        &self.res.mws
    }

    /// The memory windows by index.
    pub(crate) fn mw_table(&self) -> &RcuTable<MwCore> {
        &self.mw_table
    }

    /// The address vector and PD of AH number `num`.
    pub(crate) fn ah_vector(&self, num: u32) -> Option<(AddressVector, u64)> {
        self.res.ahs.get_with_pd(num)
    }

    /// Creates `<dir>/<name>/` with the device's files, if the device has
    /// none yet.
    pub(crate) fn fill_debugfs(&self, dir: &Dir, name: &CStr) -> Result {
        let mut slot = self.debugfs.lock();
        if slot.is_some() {
            return Ok(());
        }
        let dir = dir.subdir(name);
        let ah = dir.read_only_file(c"ah", AhFile(self.res.clone()));
        let ah = KBox::pin_init(ah, GFP_KERNEL)?;
        let gids = dir.read_only_file(c"gids", GidsFile(self.res.clone()));
        let gids = KBox::pin_init(gids, GFP_KERNEL)?;
        let resources = dir.read_only_file(c"resources", ResourcesFile(self.res.clone()));
        let resources = KBox::pin_init(resources, GFP_KERNEL)?;
        let wire = dir.read_only_file(c"wire", WireFile(self.res.clone()));
        let wire = KBox::pin_init(wire, GFP_KERNEL)?;
        *slot = Some(Debugfs {
            _ah: ah,
            _gids: gids,
            _wire: wire,
            _resources: resources,
            _dir: dir,
        });
        Ok(())
    }
}

/// The data of an address handle: its number in the device's table.
pub(crate) struct SwAh {
    pub(in crate::sw) num: u32,
}

/// The data of an XRC domain and user context: nothing beyond the count in
/// [`Resources`].
pub(crate) struct SwObject;

/// The data of a protection domain: its number, which the objects on it
/// keep (never a pointer: a memory region's PD changes, and the data path
/// compares PDs under RCU).
pub(crate) struct SwPd {
    pub(in crate::sw) id: u64,
}

impl SwPd {
    /// The PD's number, unique on its device for the device's life.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}
