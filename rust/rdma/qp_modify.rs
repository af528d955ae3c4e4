// SPDX-License-Identifier: GPL-2.0

//! A QP as ib_core's own verbs see it, on any device, and what modifying
//! it takes (`ib_modify_qp_with_udata`): the attributes given, and the
//! ib_core functions that ib_core does not export ([`IbCoreCalls`]).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rverbs.h`](../../include/rverbs.h)
//!
//! [`super::qp`] is the other side of the same struct: the QP a driver
//! (rv0) creates and answers for.

use super::{
    ah_attr::AhAttr,
    device::Device,
    udata::Udata, //
};
use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    error::to_result,
    prelude::*,
    sync::aref::ARef,
    types::Opaque, //
};

/// Attribute bits of `enum ib_qp_attr_mask` the verbs core looks at.
pub(crate) mod mask {
    use crate::bindings;

    /// `IB_QP_STATE`.
    pub(crate) const STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_STATE;
    /// `IB_QP_AV`.
    pub(crate) const AV: u32 = bindings::ib_qp_attr_mask_IB_QP_AV;
    /// `IB_QP_PORT`.
    pub(crate) const PORT: u32 = bindings::ib_qp_attr_mask_IB_QP_PORT;
    /// `IB_QP_ALT_PATH`.
    pub(crate) const ALT_PATH: u32 = bindings::ib_qp_attr_mask_IB_QP_ALT_PATH;
    /// `IB_QP_RQ_PSN`.
    pub(crate) const RQ_PSN: u32 = bindings::ib_qp_attr_mask_IB_QP_RQ_PSN;
    /// `IB_QP_SQ_PSN`.
    pub(crate) const SQ_PSN: u32 = bindings::ib_qp_attr_mask_IB_QP_SQ_PSN;
}

/// A QP that ib_core created, of any device (`struct ib_qp`), for the
/// verbs that ib_core itself runs on it.
///
/// # Invariants
///
/// The `ib_qp` is live while this is borrowed, and its caller (ib_uverbs,
/// which holds the QP's object) lets the verbs core read and write the
/// fields that ib_core's modify reads and writes (`port`, the two GID
/// entry pointers), as ib_core does: with no lock of its own.
#[repr(transparent)]
pub(crate) struct VerbsQp(Opaque<bindings::ib_qp>);

impl VerbsQp {
    /// # Safety
    ///
    /// As the type invariants, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp) -> &'a Self {
        // SAFETY: `VerbsQp` is transparent over `ib_qp` (in an `Opaque`,
        // which may alias); the rest is the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_qp {
        self.0.get()
    }

    /// The QP that does the work (`real_qp`): itself, or for an XRC
    /// target QP opened by another process, the one that was created.
    pub(crate) fn real_qp(&self) -> &VerbsQp {
        // SAFETY: A live QP (type invariant); ib_core sets `real_qp` at
        // creation or open and never changes it; the real QP outlives every
        // QP opened on it.
        unsafe { Self::from_raw((*self.as_raw()).real_qp) }
    }

    /// The device of the QP.
    pub(crate) fn device(&self) -> &Device {
        // SAFETY: A live QP (type invariant): its device is registered and
        // outlives it; `device` is set at creation and never changes.
        unsafe { Device::from_raw((*self.as_raw()).device) }
    }

    /// Whether the QP is connected to one other QP: RC, UC, or either end
    /// of XRC (`is_qp_type_connected`).
    pub(crate) fn is_connected(&self) -> bool {
        // SAFETY: A live QP; its type is set at creation and never changes.
        let qp_type = unsafe { (*self.as_raw()).qp_type };
        matches!(
            qp_type,
            bindings::ib_qp_type_IB_QPT_UC
                | bindings::ib_qp_type_IB_QPT_RC
                | bindings::ib_qp_type_IB_QPT_XRC_INI
                | bindings::ib_qp_type_IB_QPT_XRC_TGT
        )
    }

    /// The port the QP was last moved to (`qp->port`; 0 before any).
    pub(crate) fn port(&self) -> u32 {
        // SAFETY: A live QP; the field is read as ib_core reads it (type
        // invariant).
        unsafe { (*self.as_raw()).port }
    }

    /// Records the QP's port after a successful modify.
    pub(crate) fn set_port(&self, port: u32) {
        // SAFETY: A live QP; written as ib_core writes it (type invariant).
        unsafe { (*self.as_raw()).port = port };
    }

    /// Whether the QP is bound to a statistics counter (`qp->counter`).
    pub(crate) fn has_counter(&self) -> bool {
        // SAFETY: A live QP; the pointer is only compared with null, as
        // ib_core does before its automatic bind.
        !unsafe { (*self.as_raw()).counter }.is_null()
    }

    /// Makes the QP reference the source GID entry of its new primary path
    /// (`qp->av_sgid_attr = rdma_update_sgid_attr(...)`). With `take`, the
    /// reference `attr` holds moves to the QP (see [`update_sgid_attr`]).
    pub(crate) fn update_av_sgid_attr(&self, attr: &mut AhAttr, take: bool) {
        // SAFETY: A live QP: the field is the QP's own reference, written
        // as ib_core writes it (type invariant).
        unsafe { update_sgid_attr(&raw mut (*self.as_raw()).av_sgid_attr, attr, take) };
    }

    /// Makes the QP reference the source GID entry of its new alternate
    /// path (`qp->alt_path_sgid_attr`), as [`Self::update_av_sgid_attr`].
    pub(crate) fn update_alt_path_sgid_attr(&self, attr: &mut AhAttr, take: bool) {
        // SAFETY: As in `update_av_sgid_attr`.
        unsafe { update_sgid_attr(&raw mut (*self.as_raw()).alt_path_sgid_attr, attr, take) };
    }
}

/// `rdma_update_sgid_attr`: `*slot` references `attr`'s source GID entry
/// if it has a GRH, none otherwise; the entry it referenced is given back.
///
/// With `take` (the reference `attr` holds is the modify's own, which
/// ib_core's `rdma_unfill_sgid_attr` gives back afterwards), that reference
/// moves to the QP and `attr` is left without an entry, as the unfill would
/// leave it: the same end, two atomic operations on the entry fewer. Without
/// it a reference is taken, as ib_core does, before the old one is given
/// back.
///
/// # Safety
///
/// `slot` is valid for reads and writes and holds a counted reference or
/// null.
unsafe fn update_sgid_attr(slot: *mut *const bindings::ib_gid_attr, attr: &mut AhAttr, take: bool) {
    let new = if !attr.has_grh() {
        None
    } else if take {
        attr.take_sgid_attr()
    } else {
        attr.sgid_attr().map(ARef::from)
    };
    let new = new.map_or(core::ptr::null(), |entry| {
        ARef::into_raw(entry).as_ptr().cast_const().cast()
    });
    // SAFETY: `slot` is valid (the caller's promise).
    let old = unsafe { core::ptr::replace(slot, new) };
    if !old.is_null() {
        // SAFETY: The slot owned that reference count (the caller's
        // promise); it is given back once.
        unsafe { bindings::rdma_put_gid_attr(old) };
    }
}

/// The attributes a modify is given (`struct ib_qp_attr`).
///
/// # Invariants
///
/// Valid, and the caller's own while this is borrowed (ib_uverbs' on its
/// stack or heap); its two address vectors hold no GID entry reference or
/// one the caller owns.
#[repr(transparent)]
pub(crate) struct QpModifyAttr(Opaque<bindings::ib_qp_attr>);

impl QpModifyAttr {
    /// # Safety
    ///
    /// As the type invariants, for `'a`; nobody else accesses `*ptr`
    /// during `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp_attr) -> &'a mut Self {
        // SAFETY: Transparent over `ib_qp_attr`; the caller's promise.
        unsafe { &mut *ptr.cast() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_qp_attr {
        self.0.get()
    }

    fn raw(&self) -> &bindings::ib_qp_attr {
        // SAFETY: Valid and the caller's alone (type invariant).
        unsafe { &*self.as_raw() }
    }

    fn raw_mut(&mut self) -> &mut bindings::ib_qp_attr {
        // SAFETY: As `raw`, and the reference is unique.
        unsafe { &mut *self.as_raw() }
    }

    /// The primary path (`ah_attr`).
    pub(crate) fn av(&mut self) -> &mut AhAttr {
        // SAFETY: The caller's attribute, accessed by nobody else, whose
        // source GID entry is null or referenced (type invariant).
        unsafe { AhAttr::from_raw(&raw mut (*self.as_raw()).ah_attr) }
    }

    /// The alternate path (`alt_ah_attr`).
    pub(crate) fn alt_av(&mut self) -> &mut AhAttr {
        // SAFETY: As in `av`.
        unsafe { AhAttr::from_raw(&raw mut (*self.as_raw()).alt_ah_attr) }
    }

    /// The port given (`port_num`).
    pub(crate) fn port_num(&self) -> u32 {
        self.raw().port_num
    }

    /// Whether the new state given is INIT (`qp_state == IB_QPS_INIT`).
    pub(crate) fn to_init(&self) -> bool {
        self.raw().qp_state == bindings::ib_qp_state_IB_QPS_INIT
    }

    /// The receive queue's first PSN given (`rq_psn`).
    pub(crate) fn rq_psn(&self) -> u32 {
        self.raw().rq_psn
    }

    /// The send queue's first PSN given (`sq_psn`).
    pub(crate) fn sq_psn(&self) -> u32 {
        self.raw().sq_psn
    }

    /// Replaces the receive queue's first PSN.
    pub(crate) fn set_rq_psn(&mut self, psn: u32) {
        self.raw_mut().rq_psn = psn;
    }

    /// Replaces the send queue's first PSN.
    pub(crate) fn set_sq_psn(&mut self, psn: u32) {
        self.raw_mut().sq_psn = psn;
    }

    /// Sets the bond slave the driver should send on (`xmit_slave`), or
    /// none. The slave stays referenced by its [`LagSlave`] while the
    /// driver may read it.
    pub(crate) fn set_xmit_slave(&mut self, slave: Option<&LagSlave<'_>>) {
        self.raw_mut().xmit_slave = slave.map_or(core::ptr::null_mut(), |s| s.ptr.as_ptr());
    }
}

/// The ib_core functions that a modify calls and that ib_core does not
/// export (`struct rverbs_ib_core_calls`), reached by the takeover's
/// livepatch relocations.
///
/// # Invariants
///
/// Valid while borrowed; `counter_bind_qp_auto`, `lag_get_ah_roce_slave`
/// and `lag_put_ah_roce_slave` are set (checked by [`IbCoreCalls::from_raw`])
/// and each has its ib_core function's contract; `security_modify_qp` is
/// null or `ib_security_modify_qp`.
#[repr(transparent)]
pub(crate) struct IbCoreCalls(bindings::rverbs_ib_core_calls);

impl IbCoreCalls {
    /// The table behind a raw pointer; `EINVAL` for a null pointer or a
    /// table missing one of its mandatory calls.
    ///
    /// # Safety
    ///
    /// `ptr` is null or a valid table, unchanged during `'a`, whose
    /// functions have the contracts of the ib_core functions they are
    /// named after.
    pub(crate) unsafe fn from_raw<'a>(
        ptr: *const bindings::rverbs_ib_core_calls,
    ) -> Result<&'a Self> {
        if ptr.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: Non-null, hence valid for `'a` (the caller's promise);
        // `IbCoreCalls` is transparent over the table.
        let calls: &Self = unsafe { &*ptr.cast() };
        let t = &calls.0;
        if t.counter_bind_qp_auto.is_none()
            || t.lag_get_ah_roce_slave.is_none()
            || t.lag_put_ah_roce_slave.is_none()
        {
            return Err(EINVAL);
        }
        // INVARIANT: The mandatory calls are set.
        Ok(calls)
    }

    /// Binds `qp` to a statistics counter of `port` when the port's
    /// counters are in automatic mode (`rdma_counter_bind_qp_auto`); its
    /// result is ignored, as ib_core ignores it.
    pub(crate) fn counter_bind_qp_auto(&self, qp: &VerbsQp, port: u32) {
        if let Some(f) = self.0.counter_bind_qp_auto {
            // SAFETY: ib_core's function, on a live QP (`VerbsQp`'s
            // invariant); it checks the port itself.
            let _ = unsafe { f(qp.as_raw(), port) };
        }
    }

    /// The bond slave that a RoCE v2 path with a flow label leaves through,
    /// when its source netdev is a bond master (`rdma_lag_get_ah_roce_slave`):
    /// `None` otherwise; an error when the source netdev is gone
    /// (`ENODEV`) or a packet could not be made (`ENOMEM`).
    ///
    /// `attr` is a RoCE path whose source GID entry is referenced.
    pub(crate) fn lag_slave(
        &self,
        device: &Device,
        attr: &mut AhAttr,
    ) -> Result<Option<LagSlave<'_>>> {
        let Some(get) = self.0.lag_get_ah_roce_slave else {
            return Ok(None);
        };
        // SAFETY: ib_core's function: a registered device, and a RoCE
        // attribute whose source GID entry is referenced (the caller's
        // promise, which ib_core's `rdma_fill_sgid_attr` gives it too).
        let ptr = unsafe { get(device.as_raw(), attr.as_raw(), bindings::GFP_KERNEL) };
        let ptr = kernel::error::from_err_ptr(ptr)?;
        // INVARIANT: A non-null slave carries the reference that
        // `dev_hold` took for it.
        Ok(NonNull::new(ptr).map(|ptr| LagSlave { ptr, calls: self }))
    }

    /// The driver's modify (`ib_security_modify_qp`: the security hook
    /// when the kernel has one, then the driver's `modify_qp` on the real
    /// QP). `EOPNOTSUPP` for a driver without `modify_qp`.
    pub(crate) fn driver_modify_qp(
        &self,
        qp: &VerbsQp,
        attr: &mut QpModifyAttr,
        attr_mask: u32,
        udata: Option<&Udata>,
    ) -> Result {
        let udata = super::udata::as_raw_opt(udata);
        // CAST: ib_core's mask is an `int` of the same bits.
        let attr_mask = attr_mask as core::ffi::c_int;
        if let Some(f) = self.0.security_modify_qp {
            // SAFETY: ib_core's `ib_security_modify_qp`, with a live QP,
            // the caller's attributes and null or valid udata.
            return to_result(unsafe { f(qp.as_raw(), attr.as_raw(), attr_mask, udata) });
        }
        let real = qp.real_qp();
        let Some(modify) = real.device().ops().modify_qp else {
            return Err(crate::errno::eopnotsupp());
        };
        // SAFETY: The driver's `modify_qp` on a live QP of its device, as
        // ib_core calls it, with the caller's attributes and udata.
        to_result(unsafe { modify(real.as_raw(), attr.as_raw(), attr_mask, udata) })
    }
}

/// A bond slave referenced for one modify; the reference is given back
/// (`rdma_lag_put_ah_roce_slave`) when this is dropped.
///
/// # Invariants
///
/// `ptr` is a net device with a reference count this value owns.
pub(crate) struct LagSlave<'a> {
    ptr: NonNull<bindings::net_device>,
    calls: &'a IbCoreCalls,
}

impl Drop for LagSlave<'_> {
    fn drop(&mut self) {
        if let Some(put) = self.calls.0.lag_put_ah_roce_slave {
            // SAFETY: Gives back the reference this value owns (type
            // invariant).
            unsafe { put(self.ptr.as_ptr()) };
        }
    }
}

/// Logs ib_core's warning for a PSN past 24 bits, word for word.
pub(crate) fn warn_psn_overflow(device: &Device, sq: bool) {
    // SAFETY: A registered device; the helper only prints its name.
    unsafe { bindings::rverbs_warn_psn_overflow(device.as_raw(), sq) };
}
