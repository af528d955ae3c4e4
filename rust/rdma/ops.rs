// SPDX-License-Identifier: GPL-2.0

//! RDMA drivers: the operations of a device (`struct ib_device_ops`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A driver implements [`Driver`], a `#[vtable]` trait, and its operations
//! table is the compile-time constant [`Vtable::OPS`] built from it, as
//! `file_operations` are built for a `MiscDevice` or `phy_driver` for a
//! `phy::Driver`: an operation the driver does not implement is `NULL` in
//! the table, so ib_core and uverbs see exactly what the driver supports.
//!
//! Every object ib_core allocates for the driver (PD, AH, ucontext, XRCD)
//! is an [`Object`]: ib_core's struct first, then the driver's data, which
//! the trampolines here write when the driver's constructor succeeds and
//! drop when its destructor has run. The device is the same:
//! [`super::driver::DriverDevice`].
//!
//! ib_core requires a few operations of every device
//! (`ib_device_check_mandatory`) for objects this abstraction does not
//! model yet: QPs, CQs and MRs. They are in the table, and fail with
//! `EOPNOTSUPP`, as any verb the driver does not implement.

use super::{
    ah_attr::AhAttr,
    bindings,
    driver::DriverDevice,
    errno::eopnotsupp,
    udata::Udata, //
};
use core::{
    marker::PhantomData,
    mem::size_of, //
};
use kernel::{
    error::{
        from_result,
        VTABLE_DEFAULT_ERROR, //
    },
    ffi::c_int,
    prelude::*,
};

/// The state of a port (`enum ib_port_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortState {
    /// The link is down.
    Down,
    /// The link is up and the port can pass traffic.
    Active,
}

/// The physical state of a port (`enum ib_port_phys_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhysState {
    /// Administratively down.
    Disabled,
    /// Up, looking for a link partner.
    Polling,
    /// The link is up.
    LinkUp,
}

/// An IBTA MTU (`enum ib_mtu`), the largest that fits an Ethernet MTU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl Mtu {
    /// The IBTA MTU for a netdev MTU, as ib_core computes it for RoCE
    /// (`iboe_get_mtu`: room for the largest headers is kept), at least
    /// 256.
    pub(crate) fn from_netdev_mtu(mtu: u32) -> Mtu {
        // IB_GRH_BYTES + IB_UDP_BYTES + IB_BTH_BYTES + IB_EXT_XRC_BYTES +
        // IB_EXT_ATOMICETH_BYTES + IB_ICRC_BYTES of ib_addr.h / ib_pack.h.
        let payload = mtu.saturating_sub(40 + 8 + 12 + 4 + 28 + 4);
        match payload {
            4096.. => Mtu::Mtu4096,
            2048.. => Mtu::Mtu2048,
            1024.. => Mtu::Mtu1024,
            512.. => Mtu::Mtu512,
            _ => Mtu::Mtu256,
        }
    }
}

/// The link layer of a port (`enum rdma_link_layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkLayer {
    /// RoCE: the port is an Ethernet netdev.
    Ethernet,
}

/// What `query_device` reports. Fields not here are reported as 0.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceAttrs {
    /// Firmware version.
    pub(crate) fw_ver: u64,
    /// System image GUID (big endian on the wire, as `node_guid`).
    pub(crate) sys_image_guid: u64,
    /// IEEE vendor id.
    pub(crate) vendor_id: u32,
    /// Vendor part id.
    pub(crate) vendor_part_id: u32,
    /// Hardware version.
    pub(crate) hw_ver: u32,
    /// Supported page sizes (bit mask).
    pub(crate) page_size_cap: u64,
    /// Largest number of protection domains.
    pub(crate) max_pd: u32,
    /// Largest number of address handles.
    pub(crate) max_ah: u32,
    /// Number of partition keys.
    pub(crate) max_pkeys: u16,
    /// Whether XRC domains are supported (`IB_DEVICE_XRC`).
    pub(crate) xrc: bool,
    /// Whether `rdma link del` may remove the device
    /// (`IBK_ALLOW_USER_UNREG`).
    pub(crate) allow_user_unreg: bool,
    /// Whether kernel PDs use `device.local_dma_lkey` instead of a DMA MR
    /// (`IBK_LOCAL_DMA_LKEY`).
    pub(crate) local_dma_lkey: bool,
}

/// What `query_port` reports. Fields not here are reported as 0.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortAttrs {
    /// Logical state.
    pub(crate) state: PortState,
    /// Physical state.
    pub(crate) phys_state: PhysState,
    /// Largest MTU.
    pub(crate) max_mtu: Mtu,
    /// MTU in use.
    pub(crate) active_mtu: Mtu,
    /// MTU of the netdev, in bytes.
    pub(crate) phys_mtu: u32,
    /// Entries of the GID table.
    pub(crate) gid_tbl_len: u32,
    /// Entries of the P_Key table.
    pub(crate) pkey_tbl_len: u16,
    /// Largest message, in bytes.
    pub(crate) max_msg_sz: u32,
    /// PortInfo CapabilityMask (`IB_PORT_*`).
    pub(crate) port_cap_flags: u32,
    /// Speed (`enum ib_port_speed`).
    pub(crate) active_speed: u16,
    /// Width (`enum ib_port_width`).
    pub(crate) active_width: u8,
}

/// `IB_SPEED_SDR`: the slowest speed (2.5 Gb/s per lane).
// CAST: A small enumerator.
pub(crate) const SPEED_SDR: u16 = bindings::ib_port_speed_IB_SPEED_SDR as u16;

/// `IB_WIDTH_1X`: one lane.
// CAST: A small enumerator.
pub(crate) const WIDTH_1X: u8 = bindings::ib_port_width_IB_WIDTH_1X as u8;

/// The port's immutable data (`struct ib_port_immutable`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortImmutable {
    /// Entries of the P_Key table.
    pub(crate) pkey_tbl_len: u32,
    /// Entries of the GID table.
    pub(crate) gid_tbl_len: u32,
    /// Protocols of the port (`RDMA_CORE_PORT_*`).
    pub(crate) core_cap_flags: u32,
    /// Largest MAD (`IB_MGMT_MAD_SIZE`; 0 without the MAD capability).
    pub(crate) max_mad_size: u32,
}

/// The protocols of a RoCE port that has no QPs: RoCE v1 and v2 address
/// handles and GIDs (`RDMA_CORE_CAP_PROT_ROCE`,
/// `RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP`, `RDMA_CORE_CAP_ETH_AH`), so that
/// ib_core's GID management adds both GID types, without the MAD and CM
/// capabilities of `RDMA_CORE_PORT_IBA_ROCE*` (their agents need QP1).
pub(crate) const PORT_ROCE_V1_V2_NO_MAD: u32 = bindings::RDMA_CORE_CAP_PROT_ROCE
    | bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP
    | bindings::RDMA_CORE_CAP_ETH_AH;

/// An RDMA driver: the operations of its devices.
///
/// The associated types are the driver's data of each object, stored after
/// ib_core's struct in the same allocation. Operations get the device
/// ([`DriverDevice`]), which dereferences to [`Driver::Device`].
#[vtable]
pub(crate) trait Driver: Sized + 'static {
    /// Data of a device.
    type Device: Send + Sync;
    /// Data of a user context (one per open of the uverbs device).
    type Ucontext: Send + Sync;
    /// Data of a protection domain.
    type Pd: Send + Sync;
    /// Data of an address handle.
    type Ah: Send + Sync;
    /// Data of an XRC domain.
    type Xrcd: Send + Sync;

    /// `rdma_driver_id` reported to userspace (selects the provider).
    const DRIVER_ID: u32;
    /// uverbs ABI version of the provider.
    const UVERBS_ABI_VER: u32;

    /// Device attributes (`query_device`).
    fn query_device(dev: &DriverDevice<Self>) -> Result<DeviceAttrs>;

    /// Port attributes (`query_port`); `port` is valid.
    fn query_port(dev: &DriverDevice<Self>, port: u32) -> Result<PortAttrs>;

    /// Port immutable data (`get_port_immutable`), once at registration.
    fn get_port_immutable(dev: &DriverDevice<Self>, port: u32) -> Result<PortImmutable>;

    /// A P_Key table entry (`query_pkey`).
    fn query_pkey(_dev: &DriverDevice<Self>, _port: u32, _index: u16) -> Result<u16> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The link layer of a port (`get_link_layer`).
    fn get_link_layer(_dev: &DriverDevice<Self>, _port: u32) -> LinkLayer {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up a user context (`alloc_ucontext`).
    fn alloc_ucontext(_dev: &DriverDevice<Self>, _udata: &Udata) -> Result<Self::Ucontext> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Releases a user context (`dealloc_ucontext`); the data is dropped
    /// afterwards.
    fn dealloc_ucontext(_dev: &DriverDevice<Self>, _uctx: &Self::Ucontext) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The device goes away while the context is open: revoke what the
    /// user can still reach directly (mappings). Implementing it lets
    /// ib_core unregister the device with contexts open
    /// (`disassociate_ucontext`).
    fn disassociate_ucontext(_dev: &DriverDevice<Self>, _uctx: &Self::Ucontext) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up a protection domain (`alloc_pd`).
    fn alloc_pd(dev: &DriverDevice<Self>, udata: Option<&Udata>) -> Result<Self::Pd>;

    /// Releases a protection domain (`dealloc_pd`). On success the data is
    /// dropped; on error the PD stays.
    fn dealloc_pd(dev: &DriverDevice<Self>, pd: &Self::Pd, udata: Option<&Udata>) -> Result;

    /// Sets up an address handle (`create_ah`, and `create_user_ah` with
    /// `udata`). `sleepable` is false in atomic context.
    fn create_ah(
        _dev: &DriverDevice<Self>,
        _attr: &AhAttr,
        _sleepable: bool,
        _udata: Option<&Udata>,
    ) -> Result<Self::Ah> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Fills `attr` (zeroed, without a GID entry) from an address handle
    /// (`query_ah`).
    fn query_ah(_dev: &DriverDevice<Self>, _ah: &Self::Ah, _attr: &mut AhAttr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Changes an address handle (`modify_ah`).
    fn modify_ah(_dev: &DriverDevice<Self>, _ah: &Self::Ah, _attr: &AhAttr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Releases an address handle (`destroy_ah`). On success the data is
    /// dropped; on error the AH stays.
    fn destroy_ah(_dev: &DriverDevice<Self>, _ah: &Self::Ah, _flags: u32) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up an XRC domain (`alloc_xrcd`).
    fn alloc_xrcd(_dev: &DriverDevice<Self>, _udata: Option<&Udata>) -> Result<Self::Xrcd> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Releases an XRC domain (`dealloc_xrcd`). On success the data is
    /// dropped; on error the XRCD stays.
    fn dealloc_xrcd(
        _dev: &DriverDevice<Self>,
        _xrcd: &Self::Xrcd,
        _udata: Option<&Udata>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// An object ib_core allocates with the driver's size (`size_ib_*`):
/// ib_core's struct `C` first (drivers embed it at offset 0, as
/// `INIT_RDMA_OBJ_SIZE` checks in C), then the driver's data `D`.
///
/// `data` is only initialised between the driver's constructor and its
/// destructor; the trampolines below keep to that.
#[repr(C)]
pub(crate) struct Object<C, D> {
    core: C,
    data: D,
}

impl<C, D> Object<C, D> {
    /// The data of an object whose constructor succeeded.
    ///
    /// # Safety
    ///
    /// `core` is the ib_core struct of a live `Object<C, D>` whose data is
    /// initialised, for the lifetime `'a`.
    unsafe fn data<'a>(core: *mut C) -> &'a D {
        // SAFETY: `core` is at offset 0 of the `repr(C)` object; the rest
        // is the caller's promise.
        unsafe { &(*core.cast::<Self>()).data }
    }

    /// Stores the data of a fresh object.
    ///
    /// # Safety
    ///
    /// `core` is the ib_core struct of an allocation of at least
    /// `size_of::<Self>()` bytes, whose data is not initialised.
    unsafe fn init(core: *mut C, data: D) {
        // SAFETY: The caller's promise.
        unsafe { (&raw mut (*core.cast::<Self>()).data).write(data) };
    }

    /// Drops the data of an object.
    ///
    /// # Safety
    ///
    /// As for [`Object::data`]; the data is not used afterwards.
    unsafe fn drop_data(core: *mut C) {
        // SAFETY: The caller's promise.
        unsafe { core::ptr::drop_in_place(&raw mut (*core.cast::<Self>()).data) };
    }
}

/// The operations table of driver `T`.
pub(crate) struct Vtable<T: Driver>(PhantomData<T>);

/// The device of a driver object: every `struct ib_*` has a `device`.
///
/// # Safety
///
/// `device` is a registered device of driver `T`, valid for `'a`.
unsafe fn dev<'a, T: Driver>(device: *mut bindings::ib_device) -> &'a DriverDevice<T> {
    // SAFETY: The caller's promise.
    unsafe { DriverDevice::from_raw(device) }
}

/// The user data of a verb, `None` for a kernel caller.
///
/// # Safety
///
/// `udata` is null or valid for `'a`.
unsafe fn opt_udata<'a>(udata: *mut bindings::ib_udata) -> Option<&'a Udata> {
    // SAFETY: The caller's promise.
    unsafe { Udata::from_raw_opt(udata) }
}

/// Fails with `EOPNOTSUPP` (an `int` operation).
fn unsupported() -> c_int {
    eopnotsupp().to_errno()
}

impl<T: Driver> Vtable<T> {
    /// The table, as a constant: `ib_set_device_ops` copies it into the
    /// device. `owner` is set there, from the module.
    pub(crate) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VER,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        get_port_immutable: Some(Self::get_port_immutable),
        query_pkey: if T::HAS_QUERY_PKEY {
            Some(Self::query_pkey)
        } else {
            None
        },
        get_link_layer: if T::HAS_GET_LINK_LAYER {
            Some(Self::get_link_layer)
        } else {
            None
        },
        alloc_ucontext: if T::HAS_ALLOC_UCONTEXT {
            Some(Self::alloc_ucontext)
        } else {
            None
        },
        dealloc_ucontext: if T::HAS_ALLOC_UCONTEXT {
            Some(Self::dealloc_ucontext)
        } else {
            None
        },
        disassociate_ucontext: if T::HAS_DISASSOCIATE_UCONTEXT {
            Some(Self::disassociate_ucontext)
        } else {
            None
        },
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        create_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        create_user_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        query_ah: if T::HAS_QUERY_AH {
            Some(Self::query_ah)
        } else {
            None
        },
        modify_ah: if T::HAS_MODIFY_AH {
            Some(Self::modify_ah)
        } else {
            None
        },
        destroy_ah: if T::HAS_CREATE_AH {
            Some(Self::destroy_ah)
        } else {
            None
        },
        alloc_xrcd: if T::HAS_ALLOC_XRCD {
            Some(Self::alloc_xrcd)
        } else {
            None
        },
        dealloc_xrcd: if T::HAS_ALLOC_XRCD {
            Some(Self::dealloc_xrcd)
        } else {
            None
        },
        dealloc_driver: Some(Self::dealloc_driver),
        // Mandatory for registration; see the module documentation.
        create_qp: Some(Self::create_qp),
        modify_qp: Some(Self::modify_qp),
        destroy_qp: Some(Self::destroy_qp),
        post_send: Some(Self::post_send),
        post_recv: Some(Self::post_recv),
        create_cq: Some(Self::create_cq),
        destroy_cq: Some(Self::destroy_cq),
        poll_cq: Some(Self::poll_cq),
        req_notify_cq: Some(Self::req_notify_cq),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        dereg_mr: Some(Self::dereg_mr),
        size_ib_ah: size_of::<Object<bindings::ib_ah, T::Ah>>(),
        size_ib_pd: size_of::<Object<bindings::ib_pd, T::Pd>>(),
        size_ib_ucontext: size_of::<Object<bindings::ib_ucontext, T::Ucontext>>(),
        size_ib_xrcd: size_of::<Object<bindings::ib_xrcd, T::Xrcd>>(),
        // ib_core allocates these before calling the (failing) driver.
        size_ib_qp: size_of::<bindings::ib_qp>(),
        size_ib_cq: size_of::<bindings::ib_cq>(),
        // SAFETY: All-zero is a valid `ib_device_ops`: null pointers,
        // `None` operations, zero sizes.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// `ib_device_ops.query_device`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn query_device(
        device: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: ib_core calls this on a device of this driver, being
        // registered or registered.
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let a = T::query_device(dev)?;
            // SAFETY: `attr` is valid for writes during the call.
            let attr = unsafe { &mut *attr };
            attr.fw_ver = a.fw_ver;
            attr.sys_image_guid = a.sys_image_guid;
            attr.vendor_id = a.vendor_id;
            attr.vendor_part_id = a.vendor_part_id;
            attr.hw_ver = a.hw_ver;
            attr.page_size_cap = a.page_size_cap;
            attr.max_pd = a.max_pd.try_into()?;
            attr.max_ah = a.max_ah.try_into()?;
            attr.max_pkeys = a.max_pkeys;
            if a.xrc {
                // CAST: A flag of the 64-bit mask.
                attr.device_cap_flags |= bindings::ib_device_cap_flags_IB_DEVICE_XRC as u64;
            }
            if a.local_dma_lkey {
                attr.kernel_cap_flags |=
                    u64::from(bindings::ib_kernel_cap_flags_IBK_LOCAL_DMA_LKEY);
            }
            if a.allow_user_unreg {
                attr.kernel_cap_flags |=
                    u64::from(bindings::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG);
            }
            Ok(0)
        })
    }

    /// `ib_device_ops.query_port`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn query_port(
        device: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        // SAFETY: ib_core calls this on a registered device of this driver.
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let a = T::query_port(dev, port)?;
            // SAFETY: `attr` is valid for writes (zeroed by ib_core).
            let attr = unsafe { &mut *attr };
            attr.state = match a.state {
                PortState::Down => bindings::ib_port_state_IB_PORT_DOWN,
                PortState::Active => bindings::ib_port_state_IB_PORT_ACTIVE,
            };
            attr.phys_state = match a.phys_state {
                PhysState::Disabled => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED,
                PhysState::Polling => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING,
                PhysState::LinkUp => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP,
            } as u8;
            attr.max_mtu = a.max_mtu as u32;
            attr.active_mtu = a.active_mtu as u32;
            attr.phys_mtu = a.phys_mtu;
            attr.gid_tbl_len = a.gid_tbl_len.try_into()?;
            attr.pkey_tbl_len = a.pkey_tbl_len;
            attr.max_msg_sz = a.max_msg_sz;
            attr.port_cap_flags = a.port_cap_flags;
            attr.active_speed = a.active_speed;
            attr.active_width = a.active_width;
            attr.set_ip_gids(1);
            Ok(0)
        })
    }

    /// `ib_device_ops.get_port_immutable`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn get_port_immutable(
        device: *mut bindings::ib_device,
        port: u32,
        immutable: *mut bindings::ib_port_immutable,
    ) -> c_int {
        // SAFETY: ib_core calls this on a device of this driver being
        // registered.
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let i = T::get_port_immutable(dev, port)?;
            // SAFETY: `immutable` is valid for writes during the call.
            let immutable = unsafe { &mut *immutable };
            immutable.pkey_tbl_len = i.pkey_tbl_len.try_into()?;
            immutable.gid_tbl_len = i.gid_tbl_len.try_into()?;
            immutable.core_cap_flags = i.core_cap_flags;
            immutable.max_mad_size = i.max_mad_size;
            Ok(0)
        })
    }

    /// `ib_device_ops.query_pkey`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn query_pkey(
        device: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        // SAFETY: ib_core calls this on a registered device of this driver.
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let value = T::query_pkey(dev, port, index)?;
            // SAFETY: `pkey` is valid for writes during the call.
            unsafe { pkey.write(value) };
            Ok(0)
        })
    }

    /// `ib_device_ops.get_link_layer`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn get_link_layer(
        device: *mut bindings::ib_device,
        port: u32,
    ) -> bindings::rdma_link_layer {
        // SAFETY: ib_core calls this on a device of this driver.
        let dev = unsafe { dev::<T>(device) };
        match T::get_link_layer(dev, port) {
            LinkLayer::Ethernet => bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET,
        }
    }

    /// `ib_device_ops.alloc_ucontext`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn alloc_ucontext(
        uctx: *mut bindings::ib_ucontext,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: ib_core passes a zeroed ucontext of `size_ib_ucontext`
        // bytes with `device` set, and valid user data.
        let (dev, udata) = unsafe { (dev::<T>((*uctx).device), Udata::from_raw(udata)) };
        from_result(|| {
            let data = T::alloc_ucontext(dev, udata)?;
            // SAFETY: The object is fresh and large enough.
            unsafe { Object::<_, T::Ucontext>::init(uctx, data) };
            Ok(0)
        })
    }

    /// `ib_device_ops.dealloc_ucontext`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn dealloc_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context was set up by `alloc_ucontext` and is being
        // released: its data is initialised and not used afterwards.
        unsafe {
            let dev = dev::<T>((*uctx).device);
            T::dealloc_ucontext(dev, Object::<_, T::Ucontext>::data(uctx));
            Object::<_, T::Ucontext>::drop_data(uctx);
        }
    }

    /// `ib_device_ops.disassociate_ucontext`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn disassociate_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context is live (set up by `alloc_ucontext`).
        unsafe {
            let dev = dev::<T>((*uctx).device);
            T::disassociate_ucontext(dev, Object::<_, T::Ucontext>::data(uctx));
        }
    }

    /// `ib_device_ops.alloc_pd`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: ib_core passes a zeroed PD of `size_ib_pd` bytes with
        // `device` set; `udata` is null or valid.
        let (dev, udata) = unsafe { (dev::<T>((*pd).device), opt_udata(udata)) };
        from_result(|| {
            let data = T::alloc_pd(dev, udata)?;
            // SAFETY: The object is fresh and large enough.
            unsafe { Object::<_, T::Pd>::init(pd, data) };
            Ok(0)
        })
    }

    /// `ib_device_ops.dealloc_pd`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The PD was set up by `alloc_pd`; `udata` is null or valid.
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*pd).device),
                Object::<_, T::Pd>::data(pd),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::dealloc_pd(dev, data, udata)?;
            // SAFETY: Released: ib_core frees the object next.
            unsafe { Object::<_, T::Pd>::drop_data(pd) };
            Ok(0)
        })
    }

    /// `ib_device_ops.create_ah`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init_attr: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: ib_core passes a zeroed AH of `size_ib_ah` bytes with
        // `device`, `pd`, `type` and `sgid_attr` set, a valid attribute
        // owned by its caller for the call, and null or valid user data.
        let (dev, attr, flags, udata) = unsafe {
            (
                dev::<T>((*ah).device),
                AhAttr::from_raw((*init_attr).ah_attr),
                (*init_attr).flags,
                opt_udata(udata),
            )
        };
        let sleepable = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
        from_result(|| {
            let data = T::create_ah(dev, attr, sleepable, udata)?;
            // SAFETY: The object is fresh and large enough.
            unsafe { Object::<_, T::Ah>::init(ah, data) };
            Ok(0)
        })
    }

    /// `ib_device_ops.query_ah`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn query_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: The AH is live; ib_core cleared `attr.grh.sgid_attr`, and
        // the attribute is the caller's, valid for the call.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| {
            T::query_ah(dev, data, attr)?;
            Ok(0)
        })
    }

    /// `ib_device_ops.modify_ah`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn modify_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: The AH is live; `attr` is the caller's, valid for the call.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| {
            T::modify_ah(dev, data, attr)?;
            Ok(0)
        })
    }

    /// `ib_device_ops.destroy_ah`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn destroy_ah(ah: *mut bindings::ib_ah, flags: u32) -> c_int {
        // SAFETY: The AH was set up by `create_ah` and is being destroyed.
        let (dev, data) = unsafe { (dev::<T>((*ah).device), Object::<_, T::Ah>::data(ah)) };
        from_result(|| {
            T::destroy_ah(dev, data, flags)?;
            // SAFETY: Destroyed: ib_core frees the object next.
            unsafe { Object::<_, T::Ah>::drop_data(ah) };
            Ok(0)
        })
    }

    /// `ib_device_ops.alloc_xrcd`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn alloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: ib_core passes a zeroed XRCD of `size_ib_xrcd` bytes with
        // `device` set; `udata` is null or valid.
        let (dev, udata) = unsafe { (dev::<T>((*xrcd).device), opt_udata(udata)) };
        from_result(|| {
            let data = T::alloc_xrcd(dev, udata)?;
            // SAFETY: The object is fresh and large enough.
            unsafe { Object::<_, T::Xrcd>::init(xrcd, data) };
            Ok(0)
        })
    }

    /// `ib_device_ops.dealloc_xrcd`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn dealloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The XRCD was set up by `alloc_xrcd`; `udata` is null or
        // valid.
        let (dev, data, udata) = unsafe {
            (
                dev::<T>((*xrcd).device),
                Object::<_, T::Xrcd>::data(xrcd),
                opt_udata(udata),
            )
        };
        from_result(|| {
            T::dealloc_xrcd(dev, data, udata)?;
            // SAFETY: Released: ib_core frees the object next.
            unsafe { Object::<_, T::Xrcd>::drop_data(xrcd) };
            Ok(0)
        })
    }

    /// `ib_device_ops.dealloc_driver`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn dealloc_driver(device: *mut bindings::ib_device) {
        // SAFETY: ib_core calls this once, from `ib_dealloc_device`, on a
        // device allocated by `DriverDevice::alloc` (so its data is
        // initialised) that no operation uses any more.
        unsafe { DriverDevice::<T>::dealloc(device) };
    }

    /// `ib_device_ops.create_qp`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn create_qp(
        _qp: *mut bindings::ib_qp,
        _init_attr: *mut bindings::ib_qp_init_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.modify_qp`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn modify_qp(
        _qp: *mut bindings::ib_qp,
        _attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.destroy_qp`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn destroy_qp(
        _qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.post_send`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn post_send(
        _qp: *mut bindings::ib_qp,
        _wr: *const bindings::ib_send_wr,
        _bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.post_recv`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn post_recv(
        _qp: *mut bindings::ib_qp,
        _wr: *const bindings::ib_recv_wr,
        _bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.create_cq`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn create_cq(
        _cq: *mut bindings::ib_cq,
        _attr: *const bindings::ib_cq_init_attr,
        _attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.destroy_cq`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn destroy_cq(
        _cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.poll_cq`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn poll_cq(
        _cq: *mut bindings::ib_cq,
        _num_entries: c_int,
        _wc: *mut bindings::ib_wc,
    ) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.req_notify_cq`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn req_notify_cq(_cq: *mut bindings::ib_cq, _flags: u32) -> c_int {
        unsupported()
    }

    /// `ib_device_ops.get_dma_mr`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn get_dma_mr(
        _pd: *mut bindings::ib_pd,
        _access: c_int,
    ) -> *mut bindings::ib_mr {
        eopnotsupp().to_ptr()
    }

    /// `ib_device_ops.reg_user_mr`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn reg_user_mr(
        _pd: *mut bindings::ib_pd,
        _start: u64,
        _length: u64,
        _virt_addr: u64,
        _access: c_int,
        _dmah: *mut bindings::ib_dmah,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        eopnotsupp().to_ptr()
    }

    /// `ib_device_ops.dereg_mr`.
    ///
    /// # Safety
    ///
    /// Called by ib_core only, as that operation's contract says, on
    /// a device of driver `T` and its objects.
    unsafe extern "C" fn dereg_mr(
        _mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        unsupported()
    }
}
