// SPDX-License-Identifier: GPL-2.0

//! The rv0 driver: its operations and the data of a device.

use super::{
    ah::AhTable,
    cq::{
        self,
        SwCq, //
    },
    datapath,
    ids::Ids,
    mr::{
        self,
        MrCore,
        SwMr, //
    },
    port::{
        PortBinding,
        Ports, //
    },
    qp::{
        self,
        QpCore,
        SwQp, //
    },
    wire::Counters,
};
use crate::{
    net::device::{
        NetDevice,
        Rtnl,
        TrackedNetDevice, //
    },
    rdma::{
        ah_attr::{
            AddressVector,
            AhAttr, //
        },
        cq::{
            CqCreate,
            CqResize, //
        },
        driver::{
            attrs::{
                self,
                DeviceAttrs,
                LinkLayer,
                Mtu,
                PhysState,
                PortAttrs,
                PortImmutable,
                PortState, //
            },
            ops::QpObjects,
            Driver, DriverDevice,
        },
        mr::{
            MrReg,
            MrRereg, //
        },
        qp::{
            QpCreate,
            QpModify,
            QpQuery, //
        },
        table::RcuTable,
        udata::Udata,
    },
};
use kernel::{
    debugfs::{
        Dir,
        File,
        Writer, //
    },
    new_mutex, new_spinlock,
    prelude::*,
    str::CStr,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        Mutex,
        SpinLock, //
    },
};

/// The driver.
pub(crate) struct Rv;

/// Entries of the GID table of the port: room for the v1 and v2 GIDs of
/// the netdev's addresses and those of VLANs on it.
pub(crate) const GID_TABLE_LEN: u32 = 32;

/// `RXE_VENDOR_ID`: the vendor id soft-RoCE reports.
const VENDOR_ID: u32 = 0xffffff;

/// `RXE_PAGE_SIZE_CAP`.
const PAGE_SIZE_CAP: u64 = 0xfffff000;

/// `RXE_MAX_MSG_SIZE`.
const MAX_MSG_SIZE: u32 = 0x800000;

/// The only port.
const PORT: u32 = 1;

/// The default (and only) P_Key.
const DEFAULT_PKEY: u16 = 0xffff;

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
        let limits = Self {
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
    live: Atomic<u32>,
    max: u32,
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
    ucontexts: Counter,
    pds: Counter,
    xrcds: Counter,
    cqs: Counter,
    #[pin]
    qps: Ids,
    #[pin]
    mrs: Ids,
    /// The number of the next PD.
    pd_ids: Atomic<u64>,
    #[pin]
    ahs: AhTable,
    max_ah: u32,
    /// What the wire counts.
    wire: Counters,
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
            pd_ids: Atomic::new(0),
            ahs <- AhTable::new(limits.max_ah),
            max_ah: limits.max_ah,
            wire: Counters::new(),
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
        writeln!(f, "mr {} max {}", self.mrs.live(), self.mrs.limit())
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

/// The `wire` debugfs file: what the device's wire counts.
struct WireFile(Arc<Resources>);

impl Writer for WireFile {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.wire.write(f)
    }
}

/// The debugfs directory of a device, `/sys/kernel/debug/rverbs/<dev>/`.
struct Debugfs {
    _ah: Pin<KBox<File<AhFile>>>,
    _wire: Pin<KBox<File<WireFile>>>,
    _resources: Pin<KBox<File<ResourcesFile>>>,
    // Dropped after the files: a directory goes when its last child has.
    _dir: Dir,
}

/// The data of a device.
#[pin_data]
pub(crate) struct SwDevice {
    node_guid: [u8; 8],
    /// Whether the port has RoCE v1 GIDs too ([`Limits::roce_v1`]).
    roce_v1: bool,
    /// The netdev of the port, until it unregisters (ib_core asks for it
    /// with `get_netdev`).
    #[pin]
    netdev: SpinLock<Option<TrackedNetDevice>>,
    /// Where the tap finds the devices by netdev.
    ports: Arc<Ports>,
    /// The device's entry there, while it has its netdev.
    #[pin]
    port: Mutex<Option<PortBinding>>,
    res: Arc<Resources>,
    /// Made once ib_core accepted the device's name (a name already taken
    /// must not clash in debugfs first).
    #[pin]
    debugfs: Mutex<Option<Debugfs>>,
    /// The QPs by number, for the data path.
    #[pin]
    qp_table: RcuTable<QpCore>,
    /// The memory regions by index (a key's upper 24 bits).
    #[pin]
    mr_table: RcuTable<MrCore>,
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
            netdev <- new_spinlock!(Some(TrackedNetDevice::new(ndev))),
            ports,
            port <- new_mutex!(None),
            res: Arc::pin_init(Resources::new(limits), GFP_KERNEL)?,
            debugfs <- new_mutex!(None),
            qp_table <- RcuTable::new(),
            mr_table <- RcuTable::new(),
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

    /// The netdev, with a reference for the caller, until it is detached.
    pub(crate) fn netdev(&self) -> Option<ARef<NetDevice>> {
        self.netdev.lock().as_ref().map(TrackedNetDevice::to_aref)
    }

    /// Whether the device is bound to `ndev`.
    pub(crate) fn is_bound_to(&self, ndev: &NetDevice) -> bool {
        self.netdev
            .lock()
            .as_ref()
            .is_some_and(|own| core::ptr::eq::<NetDevice>(&**own, ndev))
    }

    /// Lets go of the netdev (it is unregistering); the port is down from
    /// then on, and ib_core finds no netdev for it.
    pub(crate) fn detach_netdev(&self) {
        // No packets from the wire first (this waits for a grace period),
        // then the netdev.
        let binding = self.port.lock().take();
        drop(binding);
        let old = self.netdev.lock().take();
        // The reference is dropped outside the lock.
        drop(old);
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
        let resources = dir.read_only_file(c"resources", ResourcesFile(self.res.clone()));
        let resources = KBox::pin_init(resources, GFP_KERNEL)?;
        let wire = dir.read_only_file(c"wire", WireFile(self.res.clone()));
        let wire = KBox::pin_init(wire, GFP_KERNEL)?;
        *slot = Some(Debugfs {
            _ah: ah,
            _wire: wire,
            _resources: resources,
            _dir: dir,
        });
        Ok(())
    }
}

/// The data of an address handle: its number in the device's table.
pub(crate) struct SwAh {
    num: u32,
}

/// The data of an XRC domain and user context: nothing beyond the count in
/// [`Resources`].
pub(crate) struct SwObject;

/// The data of a protection domain: its number, which the objects on it
/// keep (never a pointer: a memory region's PD changes, and the data path
/// compares PDs under RCU).
pub(crate) struct SwPd {
    id: u64,
}

impl SwPd {
    /// The PD's number, unique on its device for the device's life.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

#[vtable]
impl Driver for Rv {
    type Device = SwDevice;
    type Ucontext = SwObject;
    type Pd = SwPd;
    type Ah = SwAh;
    type Xrcd = SwObject;
    type Cq = SwCq;
    type Qp = SwQp;
    type Mr = SwMr;

    /// `RDMA_DRIVER_RXE`: rdma-core's rxe provider opens the device.
    const DRIVER_ID: u32 = crate::rdma::RDMA_DRIVER_RXE;
    /// `RXE_UVERBS_ABI_VERSION`.
    const UVERBS_ABI_VER: u32 = 2;

    fn query_device(dev: &DriverDevice<Self>) -> Result<DeviceAttrs> {
        Ok(DeviceAttrs {
            fw_ver: 0,
            sys_image_guid: u64::from_ne_bytes(dev.node_guid()),
            vendor_id: VENDOR_ID,
            vendor_part_id: 0,
            hw_ver: 0,
            page_size_cap: PAGE_SIZE_CAP,
            max_pd: dev.res.pds.max,
            max_ah: dev.res.max_ah,
            max_cq: cq::MAX_CQ,
            max_cqe: cq::MAX_CQE,
            max_qp: qp::MAX_QP,
            max_qp_wr: qp::MAX_QP_WR,
            max_sge: qp::MAX_SGE,
            max_mr: mr::MAX_MR,
            max_mr_size: mr::MAX_MR_SIZE,
            max_pkeys: 1,
            xrc: true,
            allow_user_unreg: true,
            // Kernel PDs need no memory registration (there is no DMA).
            local_dma_lkey: true,
        })
    }

    fn query_port(dev: &DriverDevice<Self>, port: u32) -> Result<PortAttrs> {
        let mut attrs = PortAttrs {
            state: PortState::Down,
            phys_state: PhysState::Disabled,
            max_mtu: Mtu::Mtu4096,
            active_mtu: Mtu::Mtu256,
            phys_mtu: 0,
            gid_tbl_len: GID_TABLE_LEN,
            pkey_tbl_len: 1,
            max_msg_sz: MAX_MSG_SIZE,
            // No QPs, so no communication manager (`IB_PORT_CM_SUP`).
            port_cap_flags: 0,
            active_speed: attrs::SPEED_SDR,
            active_width: attrs::WIDTH_1X,
        };
        // Without a netdev (it unregistered; the device goes away next)
        // the port is down.
        let Some(ndev) = dev.netdev() else {
            return Ok(attrs);
        };
        // A netdev on its way out has no link settings any more: keep the
        // defaults then, the port is about to go.
        if let Ok((speed, width)) = dev.device().eth_speed(port) {
            (attrs.active_speed, attrs.active_width) = (speed, width);
        }
        if ndev.is_active() {
            attrs.state = PortState::Active;
            attrs.phys_state = PhysState::LinkUp;
        } else if ndev.is_up() {
            attrs.phys_state = PhysState::Polling;
        }
        attrs.active_mtu = Mtu::from_netdev_mtu(ndev.mtu());
        attrs.phys_mtu = ndev.mtu();
        Ok(attrs)
    }

    fn get_port_immutable(dev: &DriverDevice<Self>, port: u32) -> Result<PortImmutable> {
        if port != PORT {
            return Err(EINVAL);
        }
        Ok(PortImmutable {
            pkey_tbl_len: 1,
            gid_tbl_len: GID_TABLE_LEN,
            // RoCE v2 GIDs only, as soft-RoCE, unless `roce_v1=1`.
            core_cap_flags: if dev.roce_v1() {
                attrs::PORT_ROCE_V1_V2_NO_MAD
            } else {
                attrs::PORT_ROCE_V2_NO_MAD
            },
            // No MAD agents without QP1 (ib_core insists on 0 then).
            max_mad_size: 0,
        })
    }

    fn query_pkey(_dev: &DriverDevice<Self>, _port: u32, index: u16) -> Result<u16> {
        match index {
            0 => Ok(DEFAULT_PKEY),
            _ => Err(EINVAL),
        }
    }

    fn get_link_layer(_dev: &DriverDevice<Self>, _port: u32) -> LinkLayer {
        LinkLayer::Ethernet
    }

    fn get_netdev(dev: &DriverDevice<Self>, port: u32) -> Option<ARef<NetDevice>> {
        match port {
            PORT => dev.netdev(),
            _ => None,
        }
    }

    fn alloc_ucontext(dev: &DriverDevice<Self>, _udata: &Udata) -> impl PinInit<SwObject, Error> {
        dev.res.ucontexts.get().map(|()| SwObject)
    }

    fn dealloc_ucontext(dev: &DriverDevice<Self>, _uctx: &SwObject) {
        dev.res.ucontexts.put();
    }

    fn disassociate_ucontext(_dev: &DriverDevice<Self>, _uctx: &SwObject) {
        // uverbs has destroyed the context's objects: their rings are no
        // longer offered (`rdma::mmap`), and the kernel no longer writes
        // the pages a process may still map, which stay allocated until
        // it unmaps them. Nothing else to revoke.
    }

    fn alloc_pd(dev: &DriverDevice<Self>, _udata: Option<&Udata>) -> impl PinInit<SwPd, Error> {
        dev.res.pds.get().map(|()| SwPd {
            id: dev.res.pd_ids.fetch_add(1, Relaxed),
        })
    }

    fn dealloc_pd(dev: &DriverDevice<Self>, _pd: &SwPd, _udata: Option<&Udata>) -> Result {
        dev.res.pds.put();
        Ok(())
    }

    fn create_ah(
        dev: &DriverDevice<Self>,
        pd: &SwPd,
        attr: &AhAttr,
        sleepable: bool,
        udata: Option<&Udata>,
    ) -> impl PinInit<SwAh, Error> {
        create_ah(dev, pd, attr, sleepable, udata)
    }

    fn query_ah(dev: &DriverDevice<Self>, ah: &SwAh, attr: &mut AhAttr) -> Result {
        let av = dev.res.ahs.get(ah.num).ok_or(EINVAL)?;
        attr.set_address_vector(&av);
        Ok(())
    }

    fn modify_ah(dev: &DriverDevice<Self>, ah: &SwAh, attr: &AhAttr) -> Result {
        if !attr.has_grh() {
            return Err(EINVAL);
        }
        dev.res.ahs.set(ah.num, attr.address_vector());
        Ok(())
    }

    fn destroy_ah(dev: &DriverDevice<Self>, ah: &SwAh, _flags: u32) -> Result {
        dev.res.ahs.remove(ah.num);
        Ok(())
    }

    fn create_cq(dev: &DriverDevice<Self>, req: &CqCreate<'_>) -> impl PinInit<SwCq, Error> {
        cq::create_cq(dev, req)
    }

    fn destroy_cq(dev: &DriverDevice<Self>, cq: &SwCq, _udata: Option<&Udata>) -> Result {
        cq::destroy_cq(dev, cq);
        Ok(())
    }

    fn req_notify_cq(_dev: &DriverDevice<Self>, cq: &SwCq, flags: u32) -> Result<bool> {
        Ok(cq::req_notify_cq(cq, flags))
    }

    fn resize_user_cq(_dev: &DriverDevice<Self>, cq: &SwCq, req: &CqResize<'_>) -> Result {
        cq::resize_user_cq(cq, req)
    }

    fn create_qp(
        dev: &DriverDevice<Self>,
        req: &QpCreate<'_>,
        objs: QpObjects<'_, Self>,
    ) -> impl PinInit<SwQp, Error> {
        qp::create_qp(dev, req, objs)
    }

    fn post_send(dev: &DriverDevice<Self>, qp: &SwQp) -> Result {
        datapath::post_send(dev, qp)
    }

    fn modify_qp(
        dev: &DriverDevice<Self>,
        qp: &SwQp,
        req: &QpModify<'_>,
        _udata: Option<&Udata>,
    ) -> Result {
        qp::modify_qp(dev, qp, req)
    }

    fn query_qp(_dev: &DriverDevice<Self>, qp: &SwQp, query: QpQuery) -> Result {
        qp::query_qp(qp, query);
        Ok(())
    }

    fn destroy_qp(dev: &DriverDevice<Self>, qp: &SwQp, _udata: Option<&Udata>) {
        qp::destroy_qp(dev, qp);
    }

    fn reg_user_mr(
        dev: &DriverDevice<Self>,
        pd: &SwPd,
        req: &MrReg<'_>,
    ) -> impl PinInit<SwMr, Error> {
        mr::reg_user_mr(dev, pd, req)
    }

    fn rereg_user_mr(
        _dev: &DriverDevice<Self>,
        mr: &SwMr,
        req: &MrRereg<'_, SwPd>,
        _udata: Option<&Udata>,
    ) -> Result {
        mr::rereg_user_mr(mr, req)
    }

    fn dereg_mr(dev: &DriverDevice<Self>, mr: &SwMr, _udata: Option<&Udata>) -> Result {
        mr::dereg_mr(dev, mr);
        Ok(())
    }

    fn alloc_xrcd(
        dev: &DriverDevice<Self>,
        _udata: Option<&Udata>,
    ) -> impl PinInit<SwObject, Error> {
        dev.res.xrcds.get().map(|()| SwObject)
    }

    fn dealloc_xrcd(dev: &DriverDevice<Self>, _xrcd: &SwObject, _udata: Option<&Udata>) -> Result {
        dev.res.xrcds.put();
        Ok(())
    }
}

/// `create_ah` of rv0: a number in the device's table, told to userspace.
fn create_ah(
    dev: &DriverDevice<Rv>,
    pd: &SwPd,
    attr: &AhAttr,
    sleepable: bool,
    udata: Option<&Udata>,
) -> Result<SwAh> {
    // RoCE needs a GRH with a source GID entry (ib_core checked both
    // for its callers; soft-RoCE checks again).
    if !attr.has_grh() || attr.sgid_attr().is_none() {
        return Err(EINVAL);
    }
    let av: AddressVector = attr.address_vector();
    let num = dev.res.ahs.insert(av, pd.id(), sleepable)?;
    if let Some(udata) = udata {
        // `struct rxe_create_ah_resp { __u32 ah_num; __u32 reserved; }`:
        // an older provider passes no room for it (and gets no number).
        if udata.outlen() >= 8 {
            if let Err(e) = udata.write_out(&num.to_ne_bytes()) {
                dev.res.ahs.remove(num);
                return Err(e);
            }
        }
    }
    Ok(SwAh { num })
}
