// SPDX-License-Identifier: GPL-2.0

//! Modifying a QP for userspace: `ib_modify_qp_with_udata`, which is all
//! of ib_core's `_ib_modify_qp` for the QPs of ib_uverbs.
//!
//! For a RoCE path on a connected QP (RC, UC, XRC) moved with an address
//! vector, the destination MAC and hop limit are resolved here
//! ([`dmac::resolve`]), as for an address handle, instead of through
//! ib_core's `rdma_resolve_ip`. The rest is ib_core's contract, step for
//! step and in its order: the source GID entries of both paths, the bond
//! slave, the ban of alternate paths outside InfiniBand, the 24-bit PSNs,
//! the automatic counter bind, the driver's modify, and on success the
//! QP's port and GID entry references. Kernel callers' modifies
//! (`ib_modify_qp`) stay in ib_core, which resolves nothing for them.

use super::{
    ah::{
        fill_sgid_attr,
        unfill_sgid_attr, //
    },
    dmac,
    stats, //
};
use crate::rdma::{
    ah_attr::AhType,
    qp_modify::{
        mask,
        warn_psn_overflow,
        IbCoreCalls,
        QpModifyAttr,
        VerbsQp, //
    },
    udata::Udata,
};
use kernel::prelude::*;

/// The PSNs are 24 bits.
const PSN_MASK: u32 = 0xff_ffff;

/// Modifies `qp` as ib_core's `ib_modify_qp_with_udata` does (on its real
/// QP), with ib_core's unexported functions in `calls`.
///
/// Every error is ib_core's for the same input, in the same order: the
/// primary path's source GID entry (`EINVAL`, `ENODATA`) and the
/// resolution of its destination come before the driver sees the modify,
/// so a bad path fails whatever the QP's state. `attr`'s GID entry
/// pointers are as the caller gave them when this returns.
pub(crate) fn modify_qp_with_udata(
    qp: &VerbsQp,
    attr: &mut QpModifyAttr,
    attr_mask: u32,
    udata: Option<&Udata>,
    calls: &IbCoreCalls,
) -> Result {
    let qp = qp.real_qp();
    attr.set_xmit_slave(None);
    if attr_mask & mask::AV == 0 {
        return stats::counted(with_primary_path(qp, attr, attr_mask, udata, calls, false));
    }
    let filled = stats::counted(fill_sgid_attr(qp.device(), attr.av()))?;
    let result = with_primary_path(qp, attr, attr_mask, udata, calls, filled);
    // Nothing left to give back when the QP took the reference.
    unfill_sgid_attr(attr.av(), filled);
    stats::counted(result)
}

/// The part of the modify after the primary path's source GID entry
/// (`av_filled`: the modify took that reference itself).
fn with_primary_path(
    qp: &VerbsQp,
    attr: &mut QpModifyAttr,
    attr_mask: u32,
    udata: Option<&Udata>,
    calls: &IbCoreCalls,
    av_filled: bool,
) -> Result {
    let device = qp.device();
    let mut slave = None;
    if attr_mask & mask::AV != 0 && attr.av().ah_type() == AhType::Roce && qp.is_connected() {
        // Userspace gives a destination to resolve; kernel callers give
        // resolved ones (ib_core's rule, kept for any caller with udata).
        if udata.is_some() {
            dmac::resolve(attr.av())?;
        }
        slave = calls.lag_slave(device, attr.av())?;
        attr.set_xmit_slave(slave.as_ref());
    }

    let result = if attr_mask & mask::ALT_PATH != 0 {
        let filled = fill_sgid_attr(device, attr.alt_av())?;
        let result = with_paths(qp, attr, attr_mask, udata, calls, [av_filled, filled]);
        unfill_sgid_attr(attr.alt_av(), filled);
        result
    } else {
        with_paths(qp, attr, attr_mask, udata, calls, [av_filled, false])
    };
    // The slave's reference goes back after the driver's modify (ib_core
    // leaves the pointer in the attributes; so does this).
    drop(slave);
    result
}

/// The part of the modify with both paths' source GID entries held
/// (`filled`: which of the two references the modify took itself, which
/// then move to the QP on success rather than being given back).
fn with_paths(
    qp: &VerbsQp,
    attr: &mut QpModifyAttr,
    attr_mask: u32,
    udata: Option<&Udata>,
    calls: &IbCoreCalls,
    filled: [bool; 2],
) -> Result {
    let device = qp.device();
    let port = if attr_mask & mask::PORT != 0 {
        attr.port_num()
    } else {
        qp.port()
    };

    // Alternate paths and path migration are for InfiniBand only.
    if attr_mask & mask::ALT_PATH != 0 {
        let alt_port = attr.alt_av().port_num();
        if !(device.is_ib(alt_port) && device.is_ib(port)) {
            return Err(EINVAL);
        }
    }

    if device.is_ib(port) || device.is_roce(port) {
        if attr_mask & mask::RQ_PSN != 0 && attr.rq_psn() & !PSN_MASK != 0 {
            warn_psn_overflow(device, false);
            attr.set_rq_psn(attr.rq_psn() & PSN_MASK);
        }
        if attr_mask & mask::SQ_PSN != 0 && attr.sq_psn() & !PSN_MASK != 0 {
            warn_psn_overflow(device, true);
            attr.set_sq_psn(attr.sq_psn() & PSN_MASK);
        }
    }

    // Reset to INIT with a port: the automatic counter bind.
    if !qp.has_counter()
        && attr_mask & mask::PORT != 0
        && attr_mask & mask::STATE != 0
        && attr.to_init()
    {
        calls.counter_bind_qp_auto(qp, attr.port_num());
    }

    calls.driver_modify_qp(qp, attr, attr_mask, udata)?;

    if attr_mask & mask::PORT != 0 {
        qp.set_port(attr.port_num());
    }
    if attr_mask & mask::AV != 0 {
        qp.update_av_sgid_attr(attr.av(), filled[0]);
    }
    if attr_mask & mask::ALT_PATH != 0 {
        qp.update_alt_path_sgid_attr(attr.alt_av(), filled[1]);
    }
    Ok(())
}
