// SPDX-License-Identifier: GPL-2.0

//! The operations table of a driver (`struct ib_device_ops`), a constant
//! built from its [`Driver`] implementation, and the trampolines in it.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! Every trampoline turns ib_core's raw pointers into the safe types at
//! once, calls the driver and turns the result into ib_core's convention.
//! Each states in `# Safety` what ib_core guarantees for that operation;
//! the one fact they share is that ib_core calls an operation only on a
//! device whose table it is, that is a [`DriverDevice<T>`] made by
//! [`DriverDevice::alloc`], between `ib_set_device_ops` and
//! `dealloc_driver` (the driver's data is initialised all that time).

use super::{
    attrs::{
        LinkLayer,
        PhysState,
        PortState, //
    },
    device::DriverDevice,
    object::Object,
    ops::Driver,
    unsupported,
};
use crate::{
    bindings,
    rdma::{
        ah_attr::AhAttr,
        udata::Udata, //
    },
};
use core::{
    marker::PhantomData,
    mem::size_of, //
};
use kernel::{
    error::from_result,
    ffi::c_int,
    sync::aref::ARef, //
};

/// The operations table of driver `T`.
pub(crate) struct Vtable<T: Driver>(PhantomData<T>);

/// The device an operation is called on.
///
/// # Safety
///
/// `device` is a [`DriverDevice<T>`] whose data stays initialised for
/// `'a` (see the module documentation: true for the duration of any
/// operation of `Vtable<T>` but `dealloc_driver`).
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

impl<T: Driver> Vtable<T> {
    /// The table, as a constant: `ib_set_device_ops` copies it into the
    /// device. `owner` is set there, from the module. A destructor is in
    /// the table whenever its constructor is.
    pub(crate) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VER,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        get_port_immutable: Some(Self::get_port_immutable),
        get_netdev: if T::HAS_GET_NETDEV {
            Some(Self::get_netdev)
        } else {
            None
        },
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
        // Mandatory for registration (see `unsupported`).
        create_qp: Some(unsupported::create_qp),
        modify_qp: Some(unsupported::modify_qp),
        destroy_qp: Some(unsupported::destroy_qp),
        post_send: Some(unsupported::post_send),
        post_recv: Some(unsupported::post_recv),
        create_cq: Some(unsupported::create_cq),
        destroy_cq: Some(unsupported::destroy_cq),
        poll_cq: Some(unsupported::poll_cq),
        req_notify_cq: Some(unsupported::req_notify_cq),
        get_dma_mr: Some(unsupported::get_dma_mr),
        reg_user_mr: Some(unsupported::reg_user_mr),
        dereg_mr: Some(unsupported::dereg_mr),
        size_ib_ah: size_of::<Object<bindings::ib_ah, T::Ah>>(),
        size_ib_pd: size_of::<Object<bindings::ib_pd, T::Pd>>(),
        size_ib_ucontext: size_of::<Object<bindings::ib_ucontext, T::Ucontext>>(),
        size_ib_xrcd: size_of::<Object<bindings::ib_xrcd, T::Xrcd>>(),
        // ib_core allocates these before calling the (failing) driver.
        size_ib_qp: size_of::<bindings::ib_qp>(),
        size_ib_cq: size_of::<bindings::ib_cq>(),
        // SAFETY: All-zero is a valid `ib_device_ops`: null pointers,
        // `None` operations, zero sizes.
        ..unsafe { core::mem::zeroed() }
    };

    /// `ib_device_ops.query_device`.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>`; `attr` is valid for writes, zeroed
    /// by ib_core (`setup_device`, `ib_uverbs` query paths).
    unsafe extern "C" fn query_device(
        device: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let a = T::query_device(dev)?;
            // SAFETY: `attr` is valid for writes and ours for the call.
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
    /// `device` is a `DriverDevice<T>` and `port` one of its ports; `attr`
    /// is valid for writes, zeroed by ib_core (`__ib_query_port`).
    unsafe extern "C" fn query_port(
        device: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let a = T::query_port(dev, port)?;
            // SAFETY: `attr` is valid for writes and ours for the call.
            let attr = unsafe { &mut *attr };
            attr.state = match a.state {
                PortState::Down => bindings::ib_port_state_IB_PORT_DOWN,
                PortState::Active => bindings::ib_port_state_IB_PORT_ACTIVE,
            };
            // CAST: Small enumerators of a `u8` field.
            attr.phys_state = match a.phys_state {
                PhysState::Disabled => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED,
                PhysState::Polling => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING,
                PhysState::LinkUp => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP,
            } as u8;
            // CAST: `enum ib_mtu` values, 1 to 5.
            attr.max_mtu = a.max_mtu as u32;
            // CAST: As above.
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
    /// `device` is a `DriverDevice<T>` being registered; `immutable` is
    /// valid for writes for the call.
    unsafe extern "C" fn get_port_immutable(
        device: *mut bindings::ib_device,
        port: u32,
        immutable: *mut bindings::ib_port_immutable,
    ) -> c_int {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let i = T::get_port_immutable(dev, port)?;
            // SAFETY: `immutable` is valid for writes and ours for the call.
            let immutable = unsafe { &mut *immutable };
            immutable.pkey_tbl_len = i.pkey_tbl_len.try_into()?;
            immutable.gid_tbl_len = i.gid_tbl_len.try_into()?;
            immutable.core_cap_flags = i.core_cap_flags;
            immutable.max_mad_size = i.max_mad_size;
            Ok(0)
        })
    }

    /// `ib_device_ops.get_netdev`: a held netdev or null.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>` and `port` one of its ports
    /// (`ib_device_get_netdev` checks it); the caller drops the returned
    /// reference with `dev_put`.
    unsafe extern "C" fn get_netdev(
        device: *mut bindings::ib_device,
        port: u32,
    ) -> *mut bindings::net_device {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        T::get_netdev(dev, port).map_or(core::ptr::null_mut(), |ndev| {
            // The reference goes to the caller, who puts it.
            ARef::into_raw(ndev).as_ptr().cast()
        })
    }

    /// `ib_device_ops.query_pkey`.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>`; `pkey` is valid for writes for the
    /// call.
    unsafe extern "C" fn query_pkey(
        device: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        from_result(|| {
            let value = T::query_pkey(dev, port, index)?;
            // SAFETY: `pkey` is valid for writes (the caller's promise).
            unsafe { pkey.write(value) };
            Ok(0)
        })
    }

    /// `ib_device_ops.get_link_layer`.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>`.
    unsafe extern "C" fn get_link_layer(
        device: *mut bindings::ib_device,
        port: u32,
    ) -> bindings::rdma_link_layer {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        match T::get_link_layer(dev, port) {
            LinkLayer::Ethernet => bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET,
        }
    }

    /// `ib_device_ops.alloc_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` is a zeroed object of `size_ib_ucontext` bytes from ib_core,
    /// with `device` set to a `DriverDevice<T>`, that stays in place until
    /// freed; `udata` is valid for the call.
    unsafe extern "C" fn alloc_ucontext(
        uctx: *mut bindings::ib_ucontext,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The caller's promise.
        let (dev, udata) = unsafe { (dev::<T>((*uctx).device), Udata::from_raw(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(uctx, T::alloc_ucontext(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` was set up by a successful `alloc_ucontext` of this table and
    /// is released: it is not used after this call.
    unsafe extern "C" fn dealloc_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe {
            (
                dev::<T>((*uctx).device),
                Object::<_, T::Ucontext>::data(uctx),
            )
        };
        T::dealloc_ucontext(dev, data);
        // SAFETY: Released: nobody uses the data any more.
        unsafe { Object::<_, T::Ucontext>::drop_data(uctx) };
    }

    /// `ib_device_ops.disassociate_ucontext`.
    ///
    /// # Safety
    ///
    /// `uctx` was set up by a successful `alloc_ucontext` of this table and
    /// is not released before this call returns.
    unsafe extern "C" fn disassociate_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: The context is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
        let (dev, data) = unsafe {
            (
                dev::<T>((*uctx).device),
                Object::<_, T::Ucontext>::data(uctx),
            )
        };
        T::disassociate_ucontext(dev, data);
    }

    /// `ib_device_ops.alloc_pd`.
    ///
    /// # Safety
    ///
    /// `pd` is a zeroed object of `size_ib_pd` bytes from ib_core, with
    /// `device` set to a `DriverDevice<T>`, that stays in place until
    /// freed; `udata` is null or valid for the call.
    unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The caller's promise.
        let (dev, udata) = unsafe { (dev::<T>((*pd).device), opt_udata(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(pd, T::alloc_pd(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_pd`.
    ///
    /// # Safety
    ///
    /// `pd` was set up by a successful `alloc_pd` of this table; on success
    /// ib_core frees it without using it again. `udata` is null or valid.
    unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The PD is live with initialised data (the caller's
        // promise), on a `DriverDevice<T>`.
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

    /// `ib_device_ops.create_ah` and `create_user_ah`.
    ///
    /// # Safety
    ///
    /// `ah` is a zeroed object of `size_ib_ah` bytes with `device` (a
    /// `DriverDevice<T>`), `pd`, `type` and `sgid_attr` set, that stays in
    /// place until freed; `init_attr` and its attribute are valid and the
    /// caller's for the call, the attribute's `sgid_attr` null or
    /// referenced; `udata` is null or valid.
    unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init_attr: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The caller's promise.
        let (dev, attr, flags, udata) = unsafe {
            (
                dev::<T>((*ah).device),
                AhAttr::from_raw((*init_attr).ah_attr),
                (*init_attr).flags,
                opt_udata(udata),
            )
        };
        let sleepable = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
        let init = T::create_ah(dev, attr, sleepable, udata);
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(ah, init) }.map(|()| 0))
    }

    /// `ib_device_ops.query_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table and is not
    /// destroyed during the call; `attr` is valid for writes and the
    /// caller's for the call (its contents are not initialised:
    /// `rdma_query_ah` callers pass stack structs, only `sgid_attr` set).
    unsafe extern "C" fn query_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: `attr` is valid for writes; all-zero is a valid attribute
        // (no GID entry), as soft-RoCE's `rxe_query_ah` starts from too.
        unsafe { attr.write_bytes(0, 1) };
        // SAFETY: The AH is live with initialised data, on a
        // `DriverDevice<T>`; `attr` is now a valid attribute without a GID
        // entry, ours for the call.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| T::query_ah(dev, data, attr).map(|()| 0))
    }

    /// `ib_device_ops.modify_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table and is not
    /// destroyed during the call; `attr` is a valid attribute, the
    /// caller's for the call.
    unsafe extern "C" fn modify_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: The caller's promise.
        let (dev, data, attr) = unsafe {
            (
                dev::<T>((*ah).device),
                Object::<_, T::Ah>::data(ah),
                AhAttr::from_raw(attr),
            )
        };
        from_result(|| T::modify_ah(dev, data, attr).map(|()| 0))
    }

    /// `ib_device_ops.destroy_ah`.
    ///
    /// # Safety
    ///
    /// `ah` was set up by a successful `create_ah` of this table; on
    /// success ib_core frees it without using it again.
    unsafe extern "C" fn destroy_ah(ah: *mut bindings::ib_ah, flags: u32) -> c_int {
        // SAFETY: The AH is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
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
    /// `xrcd` is a zeroed object of `size_ib_xrcd` bytes with `device` set
    /// to a `DriverDevice<T>`, that stays in place until freed; `udata` is
    /// null or valid for the call.
    unsafe extern "C" fn alloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The caller's promise.
        let (dev, udata) = unsafe { (dev::<T>((*xrcd).device), opt_udata(udata)) };
        // SAFETY: A fresh object of the driver's size, as `Object` needs.
        from_result(|| unsafe { Object::init(xrcd, T::alloc_xrcd(dev, udata)) }.map(|()| 0))
    }

    /// `ib_device_ops.dealloc_xrcd`.
    ///
    /// # Safety
    ///
    /// `xrcd` was set up by a successful `alloc_xrcd` of this table; on
    /// success ib_core frees it without using it again. `udata` is null or
    /// valid.
    unsafe extern "C" fn dealloc_xrcd(
        xrcd: *mut bindings::ib_xrcd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The XRCD is live with initialised data, on a
        // `DriverDevice<T>` (the caller's promise).
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
    /// Called once, by `ib_dealloc_device`, on a `DriverDevice<T>` that no
    /// operation uses any more.
    unsafe extern "C" fn dealloc_driver(device: *mut bindings::ib_device) {
        // SAFETY: The caller's promise.
        unsafe { DriverDevice::<T>::dealloc(device) };
    }
}
