// SPDX-License-Identifier: GPL-2.0

//! rv0's reliable connections (RC), the first parts: SENDs and RDMA
//! WRITEs (with immediate data) of any length up to 2^31 bytes, segmented
//! at the path MTU, with
//! soft-RoCE's wire and its rules for acknowledgements, sequence errors,
//! retransmission and receivers not ready (`rxe_req.c`, `rxe_resp.c`,
//! `rxe_comp.c` of 7.2). RDMA READ, atomics, SRQs and memory
//! windows are not here yet: such a request completes with
//! `IB_WC_LOC_QP_OP_ERR`, and such a packet is answered with a NAK
//! (invalid request).
//!
//! - [`req`], the requester: sends what the send ring holds, a packet at a
//!   time, from a copy of each work request in kernel memory (userspace
//!   may rewrite its slot after the doorbell; a retransmission sends what
//!   was copied), at most [`MAX_UNACKED_PSNS`] packets ahead of the oldest
//!   unacknowledged;
//! - [`resp`], the responder: takes the requests in PSN order into the
//!   receive ring, acknowledges when asked, answers duplicates and gaps;
//! - [`comp`], the completer: acknowledgements and NAKs complete the send
//!   work requests in order, rewind the requester, and fail the QP when
//!   the retries run out; its timers (delayed work, per QP).
//!
//! Locks: the send mutex (the requester, process context), then
//! [`ReqState`]'s lock, then a CQ's; the receive lock (the responder)
//! then a CQ's. No lock is held while a packet is handed to the IP layer
//! (an acknowledgement may come back through the loopback at once).

use crate::rdma::{
    qp::Psn,
    wc::WcStatus, //
};
use kernel::{
    prelude::*,
    time::Jiffies, //
};

pub(crate) mod comp;
pub(crate) mod req;
pub(crate) mod resp;

/// Most PSNs a requester sends past the oldest unacknowledged one
/// (`RXE_MAX_UNACKED_PSNS`).
const MAX_UNACKED_PSNS: u32 = 128;

/// An acknowledgement is requested at the end of each message and at
/// least every this many packets (`RXE_MAX_PKT_PER_ACK`).
const MAX_PKT_PER_ACK: u32 = 64;

/// The largest message (IBTA: 2^31 bytes).
const MAX_MSG: u64 = 1 << 31;

/// AETH syndromes (`rxe_hdr.h`): an ACK with no credit limit.
const AETH_ACK_UNLIMITED: u32 = 0x1f;
/// A receiver-not-ready NAK; its low five bits are the RNR timer.
const AETH_RNR_NAK: u32 = 0x20;
/// A PSN sequence error NAK.
const AETH_NAK_PSN_SEQ_ERROR: u32 = 0x60;
/// An invalid request NAK.
const AETH_NAK_INVALID_REQ: u32 = 0x61;
/// A remote access error NAK.
const AETH_NAK_REM_ACC_ERR: u32 = 0x62;
/// A remote operational error NAK.
const AETH_NAK_REM_OP_ERR: u32 = 0x63;

/// A retry count that never runs out (soft-RoCE's reading of 7, for
/// both counts).
const RETRY_FOREVER: u8 = 7;

/// What the requester and the completer keep of a send work request in
/// flight (from its first packet to its completion), by its ring slot.
#[derive(Clone, Copy, Default)]
pub(crate) struct Pending {
    pub(crate) wr_id: u64,
    /// Its first and last PSNs.
    first: Psn,
    last: Psn,
    /// The message's bytes.
    len: u32,
    imm: bool,
    /// An RDMA WRITE (else a SEND).
    write: bool,
    signaled: bool,
    /// Refused before it was sent: it completes with this status, in
    /// order.
    error: Option<WcStatus>,
}

/// The requester's and completer's state of an RC QP, under a lock taken
/// in process context and in the network's softirq.
pub(crate) struct ReqState {
    /// The slot of the oldest send work request not completed: the
    /// consumer index userspace sees.
    pub(crate) comp: u32,
    /// The slot of the work request being sent, and the bytes of it sent.
    next: u32,
    offset: u32,
    /// The slot after the last work request copied out of the ring.
    pub(crate) fresh: u32,
    /// The PSN of the next packet.
    pub(crate) psn: Psn,
    /// The oldest PSN not acknowledged.
    una: Psn,
    /// One past the last PSN sent.
    sent: Psn,
    /// The work requests in flight, by slot (the send ring's slots).
    pub(crate) pending: KVVec<Pending>,
    /// The path MTU's bytes.
    mtu: u32,
    /// The local ACK timeout (0: none, as `timeout` 0 means).
    timeout: Jiffies,
    /// The retry counts set, and what is left of them.
    retry_cnt: u8,
    rnr_retry: u8,
    retry_left: u8,
    rnr_left: u8,
    /// The retransmit timer is queued; an acknowledgement moved things on
    /// since it was.
    timer_armed: bool,
    progress: bool,
    /// Waiting out a receiver-not-ready NAK's timer.
    rnr_wait: bool,
    /// The requester stopped at [`MAX_UNACKED_PSNS`].
    window_full: bool,
    /// The QP failed: nothing more is sent.
    failed: bool,
    /// `destroy_qp`: no timer is queued any more.
    dead: bool,
}

impl ReqState {
    /// The state of a new QP whose send ring has `slots` slots (none for
    /// a UD QP).
    pub(crate) fn new(slots: u32) -> Result<Self> {
        let mut pending = KVVec::new();
        // CAST: A ring's slots, at most 2^21.
        pending.resize(slots as usize, Pending::default(), GFP_KERNEL)?;
        Ok(Self {
            comp: 0,
            next: 0,
            offset: 0,
            fresh: 0,
            psn: Psn::default(),
            una: Psn::default(),
            sent: Psn::default(),
            pending,
            mtu: 256,
            timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            retry_left: 0,
            rnr_left: 0,
            timer_armed: false,
            progress: false,
            rnr_wait: false,
            window_full: false,
            failed: false,
            dead: false,
        })
    }

    /// `modify_qp` set the send PSN: nothing is in flight (the QP is below
    /// RTS, or reset).
    pub(crate) fn set_psn(&mut self, psn: Psn) {
        self.psn = psn;
        self.una = psn;
        self.sent = psn;
    }

    /// `modify_qp` set the path MTU (in bytes), the timeout exponent, or
    /// the retry counts.
    pub(crate) fn set_params(&mut self, mtu: usize, timeout: u8, retry_cnt: u8, rnr_retry: u8) {
        // CAST: At most 4096.
        self.mtu = mtu as u32;
        self.timeout = timeout_jiffies(timeout);
        self.retry_cnt = retry_cnt;
        self.rnr_retry = rnr_retry;
        self.retry_left = retry_cnt;
        self.rnr_left = rnr_retry;
    }

    /// The QP was reset: every work request in flight is forgotten, the
    /// ring starts over at `consumer`.
    pub(crate) fn reset(&mut self, consumer: u32) {
        self.comp = consumer;
        self.next = consumer;
        self.fresh = consumer;
        self.offset = 0;
        self.failed = false;
        self.rnr_wait = false;
        self.window_full = false;
        self.progress = false;
    }

    /// The QP is in error: nothing more is sent.
    pub(crate) fn fail(&mut self) {
        self.failed = true;
    }

    /// A flush completed everything up to [`ReqState::comp`].
    pub(crate) fn settle(&mut self) {
        self.fresh = self.comp;
        self.next = self.comp;
        self.offset = 0;
    }

    /// `destroy_qp`: no timer is queued from now on.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
    }
}

/// The local ACK timeout of exponent `t`: 4.096 µs × 2^t
/// (`rxe_qp.c:rxe_qp_from_attr`), at least a jiffy; none for 0.
fn timeout_jiffies(t: u8) -> Jiffies {
    if t == 0 {
        return 0;
    }
    let ns = 4096u64 << t.min(31);
    // CAST: At most 8.8e6 ms.
    let ms = ns.div_ceil(1_000_000) as u32;
    kernel::time::msecs_to_jiffies(ms).max(1)
}

/// The RNR NAK timer values in µs (IBTA table 45; `rnrnak_usec`).
const RNR_USEC: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// How long a requester waits after an RNR NAK with timer `code`.
fn rnr_jiffies(code: u32) -> Jiffies {
    // CAST: Five bits.
    let us = RNR_USEC[(code & 0x1f) as usize];
    kernel::time::msecs_to_jiffies(us.div_ceil(1000)).max(1)
}

/// The distance from `a` to `b` in PSNs, modulo 2^24.
fn psn_distance(a: Psn, b: Psn) -> u32 {
    b.value().wrapping_sub(a.value()) & Psn::MASK
}

/// What the responder keeps of an RC QP, under its receive lock.
#[derive(Default)]
pub(crate) struct RespState {
    /// The PSN expected next.
    pub(crate) psn: Psn,
    /// Messages completed (the AETH's MSN).
    msn: u32,
    /// A sequence error NAK was sent for the gap at [`RespState::psn`].
    nak_sent: bool,
    /// The message being received, after its first packet.
    in_msg: Option<InMsg>,
}

/// A message being received.
#[derive(Clone, Copy)]
struct InMsg {
    /// The bytes written so far.
    written: u32,
    /// An RDMA WRITE's RETH (virtual address, R_Key, length); `None` for
    /// a SEND, whose receive work request is copied out of the ring (in
    /// [`crate::sw::qp::RecvState::wqe`]).
    write: Option<(u64, u32, u32)>,
}

impl RespState {
    /// `modify_qp` set the receive PSN, or the QP was reset.
    pub(crate) fn reset(&mut self, psn: Psn) {
        *self = Self {
            psn,
            ..Self::default()
        };
    }
}
