// SPDX-License-Identifier: GPL-2.0

//! The operations of the rv0 driver (`impl Driver for Rv`): what a device
//! reports, and dispatches to the modules of its objects.

use super::{
    cq::{
        self,
        SwCq, //
    },
    datapath,
    device::{
        Rv,
        SwAh,
        SwDevice,
        SwObject,
        SwPd,
        GID_TABLE_LEN, //
    },
    mr::{
        self,
        SwMr, //
    },
    mw::{
        self,
        SwMw, //
    },
    qp::{
        self,
        SwQp, //
    },
    srq::{
        self,
        SwSrq, //
    },
    wire,
};
use crate::{
    net::device::NetDevice,
    rdma::{
        ah_attr::{
            AddressVector,
            AhAttr, //
        },
        cq::{
            CqCreate,
            CqNotifyFlags,
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
            wr::{
                Rejected,
                SendWr,
                SendWrs, //
            },
            Driver, DriverDevice,
        },
        gid_attr::GidAttr,
        mr::{
            MrReg,
            MrRereg, //
        },
        mw::MwAlloc,
        qp::{
            QpCreate,
            QpModify,
            QpQuery, //
        },
        srq::{
            SrqAttr,
            SrqCreate,
            SrqModify,
            SrqNotifier, //
        },
        udata::Udata,
    },
};
use kernel::{
    prelude::*,
    sync::{
        aref::ARef,
        atomic::Relaxed, //
    },
};

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
    type Srq = SwSrq;
    type Mw = SwMw;

    /// `RDMA_DRIVER_RXE`: rdma-core's rxe provider opens the device.
    const DRIVER_ID: u32 = crate::rdma::rxe_abi::RDMA_DRIVER_RXE;
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
            // soft-RoCE's (`RXE_MAX_QP_RD_ATOM`, `RXE_MAX_RES_RD_ATOM`),
            // with RC QPs only.
            max_qp_rd_atom: if dev.rc() { qp::MAX_QP_RD_ATOM } else { 0 },
            max_res_rd_atom: if dev.rc() { 0x3f80 } else { 0 },
            // Atomics as soft-RoCE's (`IB_ATOMIC_HCA`), with RC.
            atomic_hca: dev.rc(),
            // Shared receive queues, resizable, with RC (soft-RoCE's
            // `RXE_MAX_SRQ`, `RXE_MAX_SRQ_WR`, `RXE_MAX_SRQ_SGE`).
            max_srq: if dev.rc() { srq::MAX_SRQ } else { 0 },
            max_srq_wr: if dev.rc() { srq::MAX_SRQ_WR } else { 0 },
            max_srq_sge: if dev.rc() { srq::MAX_SRQ_SGE } else { 0 },
            // Memory windows, type 1 and 2B, with RC (`RXE_MAX_MW`).
            max_mw: if dev.rc() { mw::MAX_MW } else { 0 },
            // FLUSH of global visibility with RC; not of persistence: no
            // region of rv0 is persistent memory (soft-RoCE reports
            // `IB_DEVICE_FLUSH_PERSISTENT` and refuses to register memory
            // that is not with `EINVAL`; ib_core refuses it for rv0 with
            // `EOPNOTSUPP`).
            flush_global: dev.rc(),
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
        attrs.active_mtu = wire::port_mtu(ndev.mtu());
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

    fn add_gid(dev: &DriverDevice<Self>, attr: &GidAttr, ndev: &NetDevice) -> Result {
        dev.res.gids.add(attr, ndev)
    }

    fn del_gid(dev: &DriverDevice<Self>, attr: &GidAttr) -> Result {
        dev.res.gids.del(attr);
        Ok(())
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
            id: dev.res.uids.fetch_add(1, Relaxed),
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
        dev.res.ahs.set(ah.num, attr.address_vector())
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

    fn req_notify_cq(_dev: &DriverDevice<Self>, cq: &SwCq, flags: CqNotifyFlags) -> Result<bool> {
        Ok(cq::req_notify_cq(cq, flags))
    }

    fn resize_user_cq(_dev: &DriverDevice<Self>, cq: &SwCq, req: &CqResize<'_>) -> Result {
        cq::resize_user_cq(cq, req)
    }

    fn create_srq(
        dev: &DriverDevice<Self>,
        req: &SrqCreate<'_>,
        pd: &SwPd,
        notifier: SrqNotifier,
    ) -> impl PinInit<SwSrq, Error> {
        srq::create_srq(dev, req, pd, notifier)
    }

    fn modify_srq(_dev: &DriverDevice<Self>, srq: &SwSrq, req: &SrqModify<'_>) -> Result {
        srq::modify_srq(srq, req)
    }

    fn query_srq(_dev: &DriverDevice<Self>, srq: &SwSrq) -> Result<SrqAttr> {
        Ok(srq::query_srq(srq))
    }

    fn destroy_srq(dev: &DriverDevice<Self>, srq: &SwSrq, _udata: Option<&Udata>) -> Result {
        srq::destroy_srq(dev, srq);
        Ok(())
    }

    fn create_qp(
        dev: &DriverDevice<Self>,
        req: &QpCreate<'_>,
        objs: QpObjects<'_, Self>,
    ) -> impl PinInit<SwQp, Error> {
        qp::create_qp(dev, req, objs)
    }

    fn post_send<'a>(
        dev: &DriverDevice<Self>,
        qp: &SwQp,
        _wrs: SendWrs<'a, Self>,
    ) -> core::result::Result<(), Rejected<SendWr<'a, Self>>> {
        // rv0's QPs are user QPs: the requests are in the send ring, and a
        // chain, if any, is not looked at (as soft-RoCE's `rxe_post_send`
        // for a user QP).
        Ok(datapath::post_send(dev, qp)?)
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
        mr::dereg_mr(dev, mr)
    }

    fn alloc_mw(dev: &DriverDevice<Self>, pd: &SwPd, req: &MwAlloc) -> impl PinInit<SwMw, Error> {
        mw::alloc_mw(dev, pd, req)
    }

    fn dealloc_mw(dev: &DriverDevice<Self>, mw: &SwMw) -> Result {
        mw::dealloc_mw(dev, mw);
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
