// SPDX-License-Identifier: GPL-2.0

//! What the responder of an RC QP keeps (`rxe_resp.c`'s `qp->resp` and
//! its responder resources): the expected PSN and MSN, the message being
//! received, the answers waiting to be sent, the atomics executed.

use crate::rdma::qp::Psn;
use kernel::prelude::*;

/// What the responder answers a request with.
#[derive(Clone, Copy)]
pub(crate) enum Answer {
    /// An acknowledgement or a NAK.
    Ack { syndrome: u32, psn: Psn, msn: u32 },
    /// The atomic acknowledgement of the atomic of `psn`: the value
    /// before it.
    Atomic { psn: Psn, orig: u64, msn: u32 },
    /// The responses to an RDMA READ from `psn` on: `len` bytes at `va` of
    /// the region of `rkey`.
    Read {
        psn: Psn,
        va: u64,
        rkey: u32,
        len: u32,
        msn: u32,
    },
}

/// The answers a responder keeps waiting at most: READ responses are sent
/// by the QP's send work (at most [`crate::sw::tx::INFLIGHT_HIGH`] packets
/// in flight, as the requester's), and what is answered after a READ
/// waits behind it, in order.
const OUT_MAX: usize = 256;

/// The atomics a responder remembers (`rxe_resp.c`'s responder resources,
/// `max_dest_rd_atomic` of them at most, here the most it may be), by PSN
/// modulo their number: a duplicate atomic is answered with the value it
/// found, never executed again (a requester has at most
/// [`MAX_UNACKED_PSNS`] PSNs in flight, so the PSNs of those it may send
/// again do not collide).
const ATOMICS_KEPT: usize = crate::sw::qp::MAX_QP_RD_ATOM as usize;

/// A waiting answer, and for a READ the responses sent.
#[derive(Clone, Copy)]
struct Queued {
    ans: Answer,
    sent: u32,
}

/// What the responder keeps of an RC QP, under its receive lock.
#[derive(Default)]
pub(crate) struct RespState {
    /// The answers waiting ([`OUT_MAX`] slots for an RC QP), the oldest at
    /// `out_head`.
    out: KVec<Option<Queued>>,
    out_head: usize,
    out_len: usize,
    /// One sender has the waiting answers ([`RespState::hold`]): the QP's
    /// send work or a receive path, one at a time, so that the answers
    /// leave in order.
    sending: bool,
    /// The PSN expected next.
    pub(crate) psn: Psn,
    /// Messages completed (the AETH's MSN).
    pub(super) msn: u32,
    /// A sequence error NAK was sent for the gap at [`RespState::psn`].
    pub(super) nak_sent: bool,
    /// UC: the rest of a message is dropped, up to the next first packet.
    pub(super) dropping: bool,
    /// The message being received, after its first packet.
    pub(super) in_msg: Option<InMsg>,
    /// The atomics executed, by PSN ([`ATOMICS_KEPT`] for an RC QP): the
    /// PSN and the value before.
    atomics: KVec<Option<(Psn, u64)>>,
}

/// A message being received.
#[derive(Clone, Copy)]
pub(super) struct InMsg {
    /// The bytes written so far.
    pub(super) written: u32,
    /// An RDMA WRITE's RETH (virtual address, R_Key, length); `None` for
    /// a SEND, whose receive work request is copied out of the ring (in
    /// [`crate::sw::qp::RecvState::wqe`]).
    pub(super) write: Option<(u64, u32, u32)>,
}

impl RespState {
    /// The state of a new QP: with room for waiting answers for RC.
    pub(crate) fn new(rc: bool) -> Result<Self> {
        let mut out = KVec::new();
        let mut atomics = KVec::new();
        if rc {
            out.resize(OUT_MAX, None, GFP_KERNEL)?;
            atomics.resize(ATOMICS_KEPT, None, GFP_KERNEL)?;
        }
        Ok(Self {
            out,
            atomics,
            ..Self::default()
        })
    }

    /// `modify_qp` set the receive PSN, or the QP was reset.
    pub(crate) fn reset(&mut self, psn: Psn) {
        self.psn = psn;
        self.msn = 0;
        self.nak_sent = false;
        self.dropping = false;
        self.in_msg = None;
        self.clear_out();
        for a in self.atomics.iter_mut() {
            *a = None;
        }
    }

    /// Remembers the value before the atomic of `psn`.
    pub(super) fn keep_atomic(&mut self, psn: Psn, orig: u64) {
        let n = self.atomics.len();
        if n != 0 {
            // CAST: A 24-bit PSN.
            self.atomics[psn.value() as usize % n] = Some((psn, orig));
        }
    }

    /// The value before the atomic of `psn`, if remembered.
    pub(super) fn kept_atomic(&self, psn: Psn) -> Option<u64> {
        let n = self.atomics.len();
        if n == 0 {
            return None;
        }
        // CAST: A 24-bit PSN.
        match self.atomics[psn.value() as usize % n] {
            Some((p, orig)) if p == psn => Some(orig),
            _ => None,
        }
    }

    /// Whether answers are waiting.
    pub(super) fn queued(&self) -> bool {
        self.out_len != 0
    }

    /// Makes the caller the sender of the waiting answers, unless another
    /// one is: whether it did. The sender sends them until
    /// [`RespState::next_out`] has none for it.
    pub(super) fn hold(&mut self) -> bool {
        !core::mem::replace(&mut self.sending, true)
    }

    /// Whether a sender has the waiting answers.
    pub(super) fn held(&self) -> bool {
        self.sending
    }

    /// The sender gives the waiting answers up (the QP's packets in flight
    /// are at their mark, or a receive path has sent its share): whether
    /// some are left, for the send work.
    pub(super) fn release(&mut self) -> bool {
        self.sending = false;
        self.out_len != 0
    }

    /// Whether no answer can wait any more.
    pub(super) fn full(&self) -> bool {
        self.out_len == self.out.len()
    }

    /// Queues `ans` behind the waiting answers; lost when full (an
    /// acknowledgement is coalesced or asked for again).
    pub(super) fn push(&mut self, ans: Answer) {
        if self.full() {
            return;
        }
        let at = (self.out_head + self.out_len) % self.out.len();
        self.out[at] = Some(Queued { ans, sent: 0 });
        self.out_len += 1;
    }

    /// The next packet to send of the waiting answers, for their sender:
    /// an answer, and for a READ which of its `mtu`-byte responses. With
    /// none left the sender has given them up.
    pub(super) fn next_out(&mut self, mtu: u32) -> Option<(Answer, u32)> {
        if self.out_len == 0 {
            self.sending = false;
            return None;
        }
        let head = self.out_head;
        let q = self.out[head].as_mut()?;
        let k = q.sent;
        let done = match q.ans {
            Answer::Ack { .. } | Answer::Atomic { .. } => true,
            Answer::Read { len, .. } => {
                q.sent += 1;
                q.sent >= len.div_ceil(mtu.max(1)).max(1)
            }
        };
        let ans = q.ans;
        if done {
            self.out[head] = None;
            self.out_head = (head + 1) % self.out.len();
            self.out_len -= 1;
        }
        Some((ans, k))
    }

    /// Forgets the waiting answers (the QP failed or was reset).
    pub(super) fn clear_out(&mut self) {
        for q in self.out.iter_mut() {
            *q = None;
        }
        self.out_head = 0;
        self.out_len = 0;
    }
}
