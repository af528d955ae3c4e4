// SPDX-License-Identifier: GPL-2.0

//! Flushes of rv0's queues: every work request posted to a QP in error
//! completes with `IB_WC_WR_FLUSH_ERR`, in batches, in process context
//! (`Documentation/rv0.rst`, "The data path").

use super::{
    device::Rv,
    qp::{
        QpCore,
        SendState, //
    },
    srq::RecvQueue,
};
use crate::rdma::{
    driver::DriverDevice,
    qp::QpState,
    rxe_abi::wqe::{
        RecvWqe,
        SendWqe, //
    },
    wc::{
        UserWc,
        WcStatus, //
    },
};

/// At most this many work requests are flushed under one hold of a queue's
/// lock; between batches other tasks may run (soft-RoCE's tasks give the
/// CPU back after `RXE_MAX_ITERATIONS` of their own).
const FLUSH_BATCH: u32 = 64;

/// Flushes the receive queue of a QP in error: every posted receive
/// completes with `IB_WC_WR_FLUSH_ERR` (`rxe_resp.c:flush_recv_queue`).
/// What is posted when it starts, at most a ring's worth, so userspace
/// cannot keep it going; in batches, the receive lock dropped and the CPU
/// offered between them. It stops early when the QP has left the error
/// state. Process context (the softirq has it done by a work item,
/// [`QpCore::flush_later`]). A QP on an SRQ has nothing of its own to
/// flush: what is posted there stays for the SRQ's other QPs, the work
/// request it took for a message not completed is dropped, as soft-RoCE
/// drops its copy, and its owner hears `IB_EVENT_QP_LAST_WQE_REACHED`
/// (`rxe_resp.c:flush_recv_queue`, at each run of a responder in error).
pub(crate) fn flush_recv(qp: &QpCore) {
    let RecvQueue::Own(rq) = &qp.rq else {
        if qp.state() == QpState::Err {
            qp.recv.lock().held = false;
            qp.events.last_wqe_reached();
        }
        return;
    };
    let mut budget = None;
    // A full CQ takes no more completions, but the queue is flushed all
    // the same (`rxe_resp.c:flush_recv_queue`).
    let mut posting = true;
    loop {
        if qp.state() != QpState::Err {
            return;
        }
        let mut rs = qp.recv.lock();
        // Another flush may have taken some: never past the producer.
        let posted = rq.distance(rs.consumer, rq.user_producer());
        let left = *budget.get_or_insert(posted);
        let n = left.min(posted).min(FLUSH_BATCH);
        for _ in 0..n {
            let consumer = rs.consumer;
            rq.read_slot(consumer, &mut rs.wqe);
            let wr_id = RecvWqe::new(&rs.wqe).map_or(0, |w| w.wr_id());
            rs.consumer = rq.next(consumer);
            rq.publish_consumer(rs.consumer);
            // `rxe_resp.c:flush_recv_wqe`.
            let wc = UserWc::error(wr_id, WcStatus::WrFlushErr, qp.qpn);
            if posting && qp.recv_cq.post(&wc, false).is_err() {
                posting = false;
            }
        }
        drop(rs);
        if n == 0 || n == left {
            return;
        }
        budget = Some(left - n);
        crate::rdma::cond_resched();
    }
}

/// Flushes the send queue of a QP in error: every posted send completes
/// with `IB_WC_WR_FLUSH_ERR` (`rxe_comp.c:flush_send_queue`). As
/// [`flush_recv`], under the send mutex, which may be held while the CPU
/// is offered. Process context.
pub(crate) fn flush_send(qp: &QpCore) {
    if qp.qp_type.connected() {
        flush_send_rc(qp);
        return;
    }
    let mut st = qp.send.lock();
    // What is posted now, at most a ring's worth.
    let producer = qp.sq.user_producer();
    let mut posting = true;
    let mut done = 0u32;
    while st.consumer != producer {
        if done != 0 && done % FLUSH_BATCH == 0 {
            crate::rdma::cond_resched();
        }
        done += 1;
        let SendState { consumer, wqe, .. } = &mut *st;
        qp.sq.read_slot(*consumer, wqe);
        let wr_id = SendWqe::new(wqe).map_or(0, |w| w.wr_id());
        *consumer = qp.sq.next(*consumer);
        qp.sq.publish_consumer(*consumer);
        // `rxe_comp.c:flush_send_wqe`.
        let wc = UserWc::error(wr_id, WcStatus::WrFlushErr, qp.qpn);
        if posting && qp.send_cq.post(&wc, false).is_err() {
            posting = false;
        }
    }
}

/// [`flush_send`] of an RC QP: from the oldest work request not completed
/// (in flight: its copy's `wr_id`), then what was never sent, in batches
/// under the completer's lock.
fn flush_send_rc(qp: &QpCore) {
    let mut st = qp.send.lock();
    let producer = qp.sq.user_producer();
    let mut posting = true;
    loop {
        if qp.state() != QpState::Err {
            return;
        }
        let mut r = qp.req.lock();
        // Nothing more is sent.
        r.fail();
        let mut n = 0;
        while r.comp != producer && n < FLUSH_BATCH {
            let slot = r.comp;
            let wr_id = if slot != r.fresh {
                // CAST: A slot.
                r.pending[slot as usize].wr_id
            } else {
                qp.sq.read_slot(slot, &mut st.wqe);
                r.fresh = qp.sq.next(slot);
                SendWqe::new(&st.wqe).map_or(0, |w| w.wr_id())
            };
            r.comp = qp.sq.next(slot);
            qp.sq.publish_consumer(r.comp);
            n += 1;
            let wc = UserWc::error(wr_id, WcStatus::WrFlushErr, qp.qpn);
            if posting && qp.send_cq.post(&wc, false).is_err() {
                posting = false;
            }
        }
        let done = r.comp == producer || n == 0;
        if done {
            r.settle();
        }
        drop(r);
        if done {
            return;
        }
        crate::rdma::cond_resched();
    }
}

/// A QP moved to error by `modify_qp`: both queues are flushed, here
/// (process context).
pub(crate) fn flush(_dev: &DriverDevice<Rv>, qp: &QpCore) {
    flush_send(qp);
    flush_recv(qp);
}
