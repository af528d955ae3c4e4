// SPDX-License-Identifier: GPL-2.0

//! The operations of a device and its ports, and `dealloc_driver`.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    dev,
    Vtable, //
};
use crate::{
    bindings,
    net::device::NetDevice,
    rdma::{
        driver::{
            attrs::{
                LinkLayer,
                PhysState,
                PortState, //
            },
            Driver, DriverDevice,
        },
        gid_attr::GidAttr,
    },
};
use kernel::{
    error::{
        code::EINVAL,
        from_result, //
    },
    ffi::{
        c_int,
        c_void, //
    },
    sync::aref::ARef, //
};

impl<T: Driver> Vtable<T> {
    /// `ib_device_ops.query_device`.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>`; `attr` is valid for writes, zeroed
    /// by ib_core (`setup_device`, `ib_uverbs` query paths).
    pub(super) unsafe extern "C" fn query_device(
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
            attr.max_cq = a.max_cq.try_into()?;
            attr.max_cqe = a.max_cqe.try_into()?;
            attr.max_qp = a.max_qp.try_into()?;
            attr.max_qp_wr = a.max_qp_wr.try_into()?;
            attr.max_send_sge = a.max_sge.try_into()?;
            attr.max_recv_sge = a.max_sge.try_into()?;
            attr.max_mr = a.max_mr.try_into()?;
            attr.max_mr_size = a.max_mr_size;
            attr.max_pkeys = a.max_pkeys;
            attr.max_qp_rd_atom = a.max_qp_rd_atom.into();
            attr.max_qp_init_rd_atom = a.max_qp_rd_atom.into();
            attr.max_res_rd_atom = a.max_res_rd_atom.try_into()?;
            if a.atomic_hca {
                attr.atomic_cap = bindings::ib_atomic_cap_IB_ATOMIC_HCA;
            }
            attr.max_srq = a.max_srq.try_into()?;
            attr.max_srq_wr = a.max_srq_wr.try_into()?;
            attr.max_srq_sge = a.max_srq_sge.try_into()?;
            if a.max_srq != 0 {
                // CAST: A flag of the 64-bit mask.
                attr.device_cap_flags |= bindings::ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE as u64;
            }
            attr.max_mw = a.max_mw.try_into()?;
            if a.max_mw != 0 {
                // CAST: Flags of the 64-bit mask.
                attr.device_cap_flags |= bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW as u64
                    | bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B as u64;
            }
            if a.flush_global {
                // CAST: A flag of the 64-bit mask.
                attr.device_cap_flags |=
                    bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64;
            }
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
    pub(super) unsafe extern "C" fn query_port(
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
    pub(super) unsafe extern "C" fn get_port_immutable(
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
    pub(super) unsafe extern "C" fn get_netdev(
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

    /// `ib_device_ops.add_gid`.
    ///
    /// # Safety
    ///
    /// `attr` is a valid entry of the GID table of a port of a
    /// `DriverDevice<T>`, for the call.
    pub(super) unsafe extern "C" fn add_gid(
        attr: *const bindings::ib_gid_attr,
        _context: *mut *mut c_void,
    ) -> c_int {
        // SAFETY: `attr` is valid (the caller's promise); `device` is
        // written before ib_core hands the entry to the driver.
        let device = unsafe { (&raw const (*attr).device).read() };
        // SAFETY: A `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        // SAFETY: `attr` is valid (the caller's promise). ib_core sets
        // `ndev`, with a reference, before it calls `add_gid`
        // (`alloc_gid_entry`; `add_roce_gid` refuses an entry without one)
        // and clears it only after `del_gid`: plain reads are stable for
        // the call. (`rdma_read_gid_attr_ndev_rcu` finds no netdev yet: the
        // entry is not in the table before `add_gid` succeeds.)
        let ndev = unsafe { (&raw const (*attr).ndev).read() };
        if ndev.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: Not null, referenced by the entry for the call (above).
        let ndev = unsafe { NetDevice::from_raw(ndev) };
        // SAFETY: Valid and held by ib_core for the call.
        let attr = unsafe { GidAttr::from_raw(attr) };
        from_result(|| T::add_gid(dev, attr, ndev).map(|()| 0))
    }

    /// `ib_device_ops.del_gid`.
    ///
    /// # Safety
    ///
    /// As [`Self::add_gid`].
    pub(super) unsafe extern "C" fn del_gid(
        attr: *const bindings::ib_gid_attr,
        _context: *mut *mut c_void,
    ) -> c_int {
        // SAFETY: As in `add_gid`.
        let device = unsafe { (&raw const (*attr).device).read() };
        // SAFETY: A `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        // SAFETY: Valid and held by ib_core for the call.
        let attr = unsafe { GidAttr::from_raw(attr) };
        from_result(|| T::del_gid(dev, attr).map(|()| 0))
    }

    /// `ib_device_ops.query_pkey`.
    ///
    /// # Safety
    ///
    /// `device` is a `DriverDevice<T>`; `pkey` is valid for writes for the
    /// call.
    pub(super) unsafe extern "C" fn query_pkey(
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
    pub(super) unsafe extern "C" fn get_link_layer(
        device: *mut bindings::ib_device,
        port: u32,
    ) -> bindings::rdma_link_layer {
        // SAFETY: `device` is a `DriverDevice<T>` (the caller's promise).
        let dev = unsafe { dev::<T>(device) };
        match T::get_link_layer(dev, port) {
            LinkLayer::Ethernet => bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET,
        }
    }

    /// `ib_device_ops.dealloc_driver`.
    ///
    /// # Safety
    ///
    /// Called once, by `ib_dealloc_device`, on a `DriverDevice<T>` that no
    /// operation uses any more.
    pub(super) unsafe extern "C" fn dealloc_driver(device: *mut bindings::ib_device) {
        // SAFETY: A `DriverDevice<T>` that no operation uses any more,
        // deallocated once (the caller's promise), as `dealloc` needs.
        unsafe { DriverDevice::<T>::dealloc(device) };
    }
}
