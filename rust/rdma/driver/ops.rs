// SPDX-License-Identifier: GPL-2.0

//! The operations of an RDMA driver: the [`Driver`] trait.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    attrs::{
        DeviceAttrs,
        LinkLayer,
        PortAttrs,
        PortImmutable, //
    },
    device::DriverDevice,
    wr::{
        RecvWr,
        RecvWrs,
        Rejected,
        SendWr,
        SendWrs, //
    },
};
use crate::{
    net::device::NetDevice,
    rdma::{
        ah_attr::AhAttr,
        cq::{
            CqCreate,
            CqNotifyFlags,
            CqResize, //
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
        udata::Udata, //
    },
};
use kernel::{
    error::VTABLE_DEFAULT_ERROR,
    prelude::*,
    sync::aref::ARef, //
};

/// The driver's data of the objects a QP is made on, as far as ib_core set
/// them (`None` where the QP type has none).
pub(crate) struct QpObjects<'a, T: Driver> {
    /// The PD.
    pub(crate) pd: Option<&'a T::Pd>,
    /// The send CQ.
    pub(crate) send_cq: Option<&'a T::Cq>,
    /// The receive CQ.
    pub(crate) recv_cq: Option<&'a T::Cq>,
    /// The shared receive queue, if the QP takes its receives from one.
    pub(crate) srq: Option<&'a T::Srq>,
}

/// An RDMA driver: the operations of its devices.
///
/// The associated types are the driver's data of each object, stored after
/// ib_core's struct in the same allocation and initialised in place (so
/// they may embed `Mutex`, `SpinLock` or `CondVar`). Operations get the
/// device ([`DriverDevice`]), which dereferences to [`Driver::Device`].
///
/// Required methods are the operations ib_core requires of every device;
/// an optional one that is not implemented is `NULL` in the operations
/// table, so ib_core and uverbs see exactly what the driver supports.
/// Destructors are optional even when their constructor is implemented:
/// by default they do nothing, and the data is dropped after them.
#[vtable]
pub(crate) trait Driver: Sized + Send + Sync + 'static {
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
    /// Data of a completion queue.
    type Cq: Send + Sync;
    /// Data of a queue pair.
    type Qp: Send + Sync;
    /// Data of a shared receive queue.
    type Srq: Send + Sync;
    /// Data of a memory region.
    type Mr: Send + Sync;
    /// Data of a memory window.
    type Mw: Send + Sync;

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

    /// The netdev of a RoCE port (`get_netdev`), with a reference for the
    /// caller; `None` once it is gone. ib_core asks for it whenever it
    /// needs it (GID management, port queries, `ib_device_get_netdev`).
    ///
    /// A driver that implements this keeps its netdev itself: it is not in
    /// ib_core's netdev table (`ib_device_set_netdev`), so drivers that look
    /// devices up by netdev and driver id (`ib_device_get_by_netdev`, as
    /// soft-RoCE does) cannot find its devices, and it dispatches its port
    /// events itself ([`crate::rdma::device::Device::dispatch_port_state_event`]).
    fn get_netdev(_dev: &DriverDevice<Self>, _port: u32) -> Option<ARef<NetDevice>> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// ib_core adds an entry to the GID table of a RoCE port (`add_gid`):
    /// process context, under the table's mutex, before the entry is
    /// published; `attr` and `ndev`, its netdev, are valid for the call
    /// (ib_core's own lookups do not find the entry yet). An error keeps
    /// the entry out of the table. A driver that implements this implements
    /// [`Driver::del_gid`] too; [`crate::rdma::gid_cache::GidCache`] is a
    /// copy of the table for its data path.
    fn add_gid(_dev: &DriverDevice<Self>, _attr: &GidAttr, _ndev: &NetDevice) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// ib_core deletes an entry of the GID table of a RoCE port
    /// (`del_gid`): process context, under the table's mutex, after its
    /// own lookups stopped finding it (references to it may remain).
    fn del_gid(_dev: &DriverDevice<Self>, _attr: &GidAttr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// A P_Key table entry (`query_pkey`).
    fn query_pkey(_dev: &DriverDevice<Self>, _port: u32, _index: u16) -> Result<u16> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The link layer of a port (`get_link_layer`).
    fn get_link_layer(_dev: &DriverDevice<Self>, _port: u32) -> LinkLayer {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up a user context (`alloc_ucontext`).
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn alloc_ucontext(
        _dev: &DriverDevice<Self>,
        _udata: &Udata,
    ) -> impl PinInit<Self::Ucontext, Error> {
        Err::<Self::Ucontext, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Releases a user context (`dealloc_ucontext`); the data is dropped
    /// afterwards.
    fn dealloc_ucontext(_dev: &DriverDevice<Self>, _uctx: &Self::Ucontext) {}

    /// The device goes away while the context is open: revoke what the
    /// user can still reach directly (mappings). Implementing it lets
    /// ib_core unregister the device with contexts open
    /// (`disassociate_ucontext`).
    fn disassociate_ucontext(_dev: &DriverDevice<Self>, _uctx: &Self::Ucontext) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up a protection domain (`alloc_pd`).
    fn alloc_pd(dev: &DriverDevice<Self>, udata: Option<&Udata>) -> impl PinInit<Self::Pd, Error>;

    /// Releases a protection domain (`dealloc_pd`). On success the data is
    /// dropped; on error the PD stays.
    fn dealloc_pd(_dev: &DriverDevice<Self>, _pd: &Self::Pd, _udata: Option<&Udata>) -> Result {
        Ok(())
    }

    /// Sets up an address handle (`create_ah`, and `create_user_ah` with
    /// `udata`). `sleepable` is false in atomic context.
    /// `pd` is the data of the AH's PD.
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn create_ah(
        _dev: &DriverDevice<Self>,
        _pd: &Self::Pd,
        _attr: &AhAttr,
        _sleepable: bool,
        _udata: Option<&Udata>,
    ) -> impl PinInit<Self::Ah, Error> {
        Err::<Self::Ah, Error>(build_error!(VTABLE_DEFAULT_ERROR))
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
        Ok(())
    }

    /// Sets up a completion queue (`create_cq`), with the attribute
    /// bundle of the verb (none for a kernel caller). The driver sets the
    /// real depth ([`CqCreate::set_depth`]) and answers userspace itself.
    /// Implementing it also puts `mmap` and `mmap_free` in the table: a
    /// CQ's ring is the memory that userspace maps
    /// ([`crate::rdma::mmap`]).
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn create_cq(_dev: &DriverDevice<Self>, _cq: &CqCreate<'_>) -> impl PinInit<Self::Cq, Error> {
        Err::<Self::Cq, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Releases a completion queue (`destroy_cq`); ib_core has checked
    /// that no QP uses it. On success the data is dropped; on error the
    /// CQ stays.
    fn destroy_cq(_dev: &DriverDevice<Self>, _cq: &Self::Cq, _udata: Option<&Udata>) -> Result {
        Ok(())
    }

    /// Arms a completion queue (`req_notify_cq`) for the events of
    /// `flags`. `Ok(true)` when events may have been missed (completions
    /// are already queued and [`crate::rdma::cq::CqNotify::ReportMissedEvents`] was asked
    /// for).
    fn req_notify_cq(
        _dev: &DriverDevice<Self>,
        _cq: &Self::Cq,
        _flags: CqNotifyFlags,
    ) -> Result<bool> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Changes the depth of a user completion queue (`resize_user_cq`),
    /// keeping the completions not yet polled. The driver sets the real
    /// depth ([`CqResize::set_depth`]) and answers userspace itself. In the
    /// table only with [`Driver::create_cq`]; without it, uverbs refuses
    /// the verb with `EOPNOTSUPP`.
    fn resize_user_cq(_dev: &DriverDevice<Self>, _cq: &Self::Cq, _req: &CqResize<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets up a queue pair (`create_qp`). ib_core has filled its own part
    /// of the QP (PD, CQs, type) and counts the QP's uses of them; the
    /// driver sets the QP number ([`QpCreate::set_qp_num`]) and the real
    /// capacities ([`QpCreate::set_cap`]) and answers userspace itself.
    /// Implementing it also puts `destroy_qp`, `mmap` and `mmap_free` in
    /// the table.
    /// `objs` are the data of the QP's PD and CQs (none of a driver's
    /// own type is missing: uverbs takes every handle from one file, so
    /// from one device).
    /// Creates a shared receive queue on `pd` (`create_srq`); `notifier`
    /// reports its limit event. Its destructor is [`Driver::destroy_srq`];
    /// with it come `modify_srq` and `query_srq`.
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn create_srq(
        _dev: &DriverDevice<Self>,
        _req: &SrqCreate<'_>,
        _pd: &Self::Pd,
        _notifier: SrqNotifier,
    ) -> impl PinInit<Self::Srq, Error> {
        Err::<Self::Srq, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Changes the depth or the limit of a shared receive queue
    /// (`modify_srq`).
    fn modify_srq(_dev: &DriverDevice<Self>, _srq: &Self::Srq, _req: &SrqModify<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The attributes of a shared receive queue (`query_srq`).
    fn query_srq(_dev: &DriverDevice<Self>, _srq: &Self::Srq) -> Result<SrqAttr> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Destroys a shared receive queue no QP uses any more (`destroy_srq`).
    fn destroy_srq(_dev: &DriverDevice<Self>, _srq: &Self::Srq, _udata: Option<&Udata>) -> Result {
        Ok(())
    }

    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn create_qp(
        _dev: &DriverDevice<Self>,
        _qp: &QpCreate<'_>,
        _objs: QpObjects<'_, Self>,
    ) -> impl PinInit<Self::Qp, Error> {
        Err::<Self::Qp, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Posts send work requests (`post_send`): `wrs` as a kernel consumer
    /// or uverbs gives them. A provider that posts into a queue it maps
    /// (soft-RoCE's) rings the doorbell with an empty chain, and the driver
    /// takes what userspace queued. On error, [`Rejected::at`] is the first
    /// request not posted. Any context a kernel consumer posts from
    /// (softirq, IRQs disabled); calls for one QP may run concurrently.
    fn post_send<'a>(
        _dev: &DriverDevice<Self>,
        _qp: &Self::Qp,
        _wrs: SendWrs<'a, Self>,
    ) -> core::result::Result<(), Rejected<SendWr<'a, Self>>> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Posts receive work requests (`post_recv`), as [`Driver::post_send`]
    /// posts send requests. Without it the operation fails with
    /// `EOPNOTSUPP` (ib_core requires one of every kverbs provider).
    fn post_recv<'a>(
        _dev: &DriverDevice<Self>,
        _qp: &Self::Qp,
        _wrs: RecvWrs<'a>,
    ) -> core::result::Result<(), Rejected<RecvWr<'a>>> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Changes a queue pair's state and attributes (`modify_qp`). Calls
    /// for one QP may run concurrently (uverbs holds the QP for reading).
    fn modify_qp(
        _dev: &DriverDevice<Self>,
        _qp: &Self::Qp,
        _req: &QpModify<'_>,
        _udata: Option<&Udata>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Reports a queue pair's attributes (`query_qp`), through
    /// [`QpQuery::answer`] (what it does not answer reads as zeroes).
    fn query_qp(_dev: &DriverDevice<Self>, _qp: &Self::Qp, _query: QpQuery) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Releases a queue pair (`destroy_qp`); the data is dropped next. It
    /// cannot fail: ib_core frees a QP it has just created whatever the
    /// driver answers (`verbs.c:create_qp`), so a QP that must not go yet
    /// is for the driver to keep alive otherwise.
    fn destroy_qp(_dev: &DriverDevice<Self>, _qp: &Self::Qp, _udata: Option<&Udata>) {}

    /// Sets up an XRC domain (`alloc_xrcd`).
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn alloc_xrcd(
        _dev: &DriverDevice<Self>,
        _udata: Option<&Udata>,
    ) -> impl PinInit<Self::Xrcd, Error> {
        Err::<Self::Xrcd, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Releases an XRC domain (`dealloc_xrcd`). On success the data is
    /// dropped; on error the XRCD stays.
    fn dealloc_xrcd(
        _dev: &DriverDevice<Self>,
        _xrcd: &Self::Xrcd,
        _udata: Option<&Udata>,
    ) -> Result {
        Ok(())
    }

    /// Registers user memory as a memory region (`reg_user_mr`), on the PD
    /// whose data is `pd`. The driver pins the memory ([`MrReg::pin`]) and
    /// sets the keys ([`MrReg::set_keys`]). Implementing it also puts
    /// `dereg_mr` in the table.
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn reg_user_mr(
        _dev: &DriverDevice<Self>,
        _pd: &Self::Pd,
        _req: &MrReg<'_>,
    ) -> impl PinInit<Self::Mr, Error> {
        Err::<Self::Mr, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Changes a memory region in place (`rereg_user_mr`): what
    /// [`MrRereg::flags`] names. ib_core changes its own PD pointer and
    /// use counts on success. Calls for one region never overlap, nor with
    /// its deregistration (uverbs holds it for writing).
    fn rereg_user_mr(
        _dev: &DriverDevice<Self>,
        _mr: &Self::Mr,
        _req: &MrRereg<'_, Self::Pd>,
        _udata: Option<&Udata>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Deregisters a memory region (`dereg_mr`). On success the data is
    /// dropped and the region freed as soon as this returns: a driver that
    /// lets other contexts find the region (an RCU table) must have
    /// unpublished it and waited for them. On error the region stays.
    fn dereg_mr(_dev: &DriverDevice<Self>, _mr: &Self::Mr, _udata: Option<&Udata>) -> Result {
        Ok(())
    }

    /// Sets up a memory window on the PD whose data is `pd` (`alloc_mw`);
    /// the driver gives it its first R_Key ([`MwAlloc::set_rkey`]).
    /// Implementing it also puts `dealloc_mw` in the table.
    #[expect(unreachable_code, reason = "a driver without it never calls it")]
    fn alloc_mw(
        _dev: &DriverDevice<Self>,
        _pd: &Self::Pd,
        _req: &MwAlloc,
    ) -> impl PinInit<Self::Mw, Error> {
        Err::<Self::Mw, Error>(build_error!(VTABLE_DEFAULT_ERROR))
    }

    /// Releases a memory window (`dealloc_mw`), bound or not. On success
    /// the data is dropped; on error the window stays.
    fn dealloc_mw(_dev: &DriverDevice<Self>, _mw: &Self::Mw) -> Result {
        Ok(())
    }
}
