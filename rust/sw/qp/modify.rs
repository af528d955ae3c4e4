// SPDX-License-Identifier: GPL-2.0

//! `modify_qp` of rv0: soft-RoCE's checks of the attributes, ib_core's
//! table of state transitions, the attributes recorded
//! (`rxe_verbs.c:rxe_modify_qp`, `rxe_qp.c:rxe_qp_chk_attr`,
//! `rxe_qp_from_attr`).

use super::{
    check_cap,
    SwQp,
    MAX_PATH_MTU,
    MAX_QP_RD_ATOM,
    MAX_TIMEOUT, //
};
use crate::{
    errno::eopnotsupp,
    rdma::{
        driver::DriverDevice,
        qp::{
            QpAttr,
            QpAttrs,
            QpModify,
            QpState,
            QpType, //
        },
    },
    sw::device::Rv,
};
use kernel::prelude::*;

/// soft-RoCE's checks of the attributes (`rxe_qp.c:rxe_qp_chk_attr`),
/// before any state rule.
fn check_attrs(req: &QpModify<'_>, given: &QpAttrs) -> Result {
    let m = req.mask();
    // ib_uverbs has checked the port (`rdma_is_port_valid`); rv0 has no
    // kernel QPs, whose callers it would have to check itself.
    if m.contains(QpAttr::Cap) {
        check_cap(&req.cap(), false)?;
    }
    let connected = req.qp_type().connected();
    // Remote access is for connected QPs only.
    if m.contains(QpAttr::AccessFlags) && !connected {
        return Err(EINVAL);
    }
    // rv0 keeps no path for a datagram QP: its address vectors come with
    // each work request (soft-RoCE records one, pinned difference). No
    // alternate path (no path migration, as soft-RoCE ignores it).
    if (m.contains(QpAttr::Av) && !connected) || m.contains(QpAttr::AltPath) {
        return Err(EINVAL);
    }
    let bad = (m.contains(QpAttr::PathMtu) && given.path_mtu > MAX_PATH_MTU)
        || (m.contains(QpAttr::MaxQpRdAtomic) && given.max_rd_atomic > MAX_QP_RD_ATOM)
        || (m.contains(QpAttr::Timeout) && given.timeout > MAX_TIMEOUT);
    if bad {
        return Err(EINVAL);
    }
    Ok(())
}

/// `roundup_pow_of_two` of a count of outstanding reads, 0 staying 0,
/// stored in 8 bits as soft-RoCE stores it (256 becomes 0).
fn rd_atomic(n: u8) -> u8 {
    if n == 0 {
        return 0;
    }
    // CAST: Truncated to the attribute's 8 bits, as in soft-RoCE.
    u32::from(n).next_power_of_two() as u8
}

/// `modify_qp` of rv0 (`rxe_verbs.c:rxe_modify_qp`,
/// `rxe_qp.c:rxe_qp_from_attr`): a state change follows ib_core's table,
/// the other attributes are recorded.
pub(crate) fn modify_qp(dev: &DriverDevice<Rv>, qp: &SwQp, req: &QpModify<'_>) -> Result {
    let qp = &*qp.core;
    let m = req.mask();
    if m.unknown() != 0 {
        return Err(eopnotsupp());
    }
    let given = req.values();
    check_attrs(req, &given)?;
    let mut a = qp.attrs.lock();
    let mut drained = false;
    let mut back_from_sqd = false;
    if m.contains(QpAttr::State) {
        let cur = if m.contains(QpAttr::CurState) {
            req.cur_qp_state()?
        } else {
            a.qp_state
        };
        let new = req.qp_state()?;
        if !cur.may_become(new, req.qp_type(), m) {
            return Err(EINVAL);
        }
        // Out of SQD while draining, only to the error state
        // (`rxe_qp.c:__qp_chk_state`).
        if cur == QpState::Sqd && qp.req.lock().draining && new != QpState::Err {
            return Err(EINVAL);
        }
        a.qp_state = new;
        if new == QpState::Sqd {
            // A connected QP drains what it has begun (the completer says
            // when); a UD QP has nothing outstanding: drained at once, and
            // said so (soft-RoCE's requester does it from its task).
            drained = !qp.qp_type.connected() || qp.req.lock().enter_sqd();
        } else if cur == QpState::Sqd {
            qp.req.lock().leave_sqd();
            back_from_sqd = new == QpState::Rts;
        }
    }
    if m.contains(QpAttr::MaxQpRdAtomic) {
        a.max_rd_atomic = rd_atomic(given.max_rd_atomic);
    }
    if m.contains(QpAttr::MaxDestRdAtomic) {
        a.max_dest_rd_atomic = rd_atomic(given.max_dest_rd_atomic);
    }
    if m.contains(QpAttr::EnSqdAsyncNotify) {
        a.en_sqd_async_notify = given.en_sqd_async_notify;
    }
    if m.contains(QpAttr::PkeyIndex) {
        a.pkey_index = given.pkey_index;
    }
    if m.contains(QpAttr::Port) {
        a.port_num = given.port_num;
    }
    if m.contains(QpAttr::Qkey) {
        a.qkey = given.qkey;
    }
    if m.contains(QpAttr::PathMtu) {
        a.path_mtu = given.path_mtu;
    }
    if m.contains(QpAttr::Timeout) {
        a.timeout = given.timeout;
    }
    if m.contains(QpAttr::RetryCnt) {
        a.retry_cnt = given.retry_cnt;
    }
    if m.contains(QpAttr::RnrRetry) {
        a.rnr_retry = given.rnr_retry;
    }
    if m.contains(QpAttr::RqPsn) {
        a.rq_psn = given.rq_psn;
    }
    if m.contains(QpAttr::MinRnrTimer) {
        a.min_rnr_timer = given.min_rnr_timer;
    }
    if m.contains(QpAttr::SqPsn) {
        a.sq_psn = given.sq_psn;
    }
    if m.contains(QpAttr::PathMigState) {
        a.path_mig_state = given.path_mig_state;
    }
    if m.contains(QpAttr::DestQpn) {
        a.dest_qp_num = given.dest_qp_num;
    }
    if m.contains(QpAttr::AccessFlags) {
        a.qp_access_flags = given.qp_access_flags;
    }
    if m.contains(QpAttr::Av) {
        a.av = Some(req.av());
    }
    if qp.qp_type.connected() {
        // The requester's and responder's state (`rxe_qp_from_attr`),
        // under the attribute lock (the order: attributes, then these).
        let mut r = qp.req.lock();
        if m.contains(QpAttr::State) && a.qp_state == QpState::Reset {
            let comp = r.comp;
            r.reset(comp);
            r.set_psn(a.sq_psn);
            let mut rs = qp.recv.lock();
            rs.resp.reset(a.rq_psn);
            // A work request taken off an SRQ for a message begun is
            // dropped with the message, as soft-RoCE's copy.
            rs.held = false;
        }
        if m.contains(QpAttr::SqPsn) {
            r.set_psn(given.sq_psn);
        }
        if m.contains(QpAttr::RqPsn) {
            qp.recv.lock().resp.reset(given.rq_psn);
        }
        let mtu = a.path_mtu.bytes().unwrap_or(256);
        if qp.qp_type == QpType::Rc {
            r.set_params(mtu, a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic);
        } else {
            // UC: no acknowledgements, so no timer and no retries.
            r.set_params(mtu, 0, 0, 0, 0);
        }
    }
    let to_error = m.contains(QpAttr::State) && a.qp_state == QpState::Err;
    let to_reset = m.contains(QpAttr::State) && a.qp_state == QpState::Reset;
    drop(a);
    if drained {
        req.notify_sq_drained();
    }
    if back_from_sqd && qp.qp_type.connected() {
        // What was posted in SQD goes now.
        super::super::tx::TxFlow::kick(&qp.tx);
    }
    if to_error {
        super::super::flush::flush(dev, qp);
    }
    if to_reset {
        // A flush of the error state, queued before, has stopped or ended
        // (it stops when the state is no longer error) when the QP is
        // reset: none runs on what is posted after (`rxe_qp.c:rxe_qp_reset`
        // waits for the QP's tasks too).
        qp.wait_flush();
    }
    Ok(())
}
