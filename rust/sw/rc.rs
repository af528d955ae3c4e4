// SPDX-License-Identifier: GPL-2.0

//! rv0's connected QPs: reliable connections (RC) and, with the same
//! requester and responder less the acknowledgements, unreliable ones
//! (UC, [`uc`]): SENDs, RDMA WRITEs (with immediate data), RDMA READs up
//! to 2^31 bytes at the path MTU, atomics and ATOMIC WRITE ([`atomic`]),
//! with soft-RoCE's wire and its rules for acknowledgements, sequence
//! errors, retransmission and receivers not ready (`rxe_req.c`,
//! `rxe_resp.c`, `rxe_comp.c` of 7.2), on their own receive queues or on
//! SRQs; memory windows bound and invalidated by work requests, and SEND
//! with invalidate ([`crate::sw::mw`]); FLUSH of global visibility
//! ([`atomic::flush`]).
//!
//! - [`req`], the requester: sends what the send ring holds, a packet at a
//!   time, from a copy of each work request in kernel memory (userspace
//!   may rewrite its slot after the doorbell; a retransmission sends what
//!   was copied), at most [`MAX_UNACKED_PSNS`] packets ahead of the oldest
//!   unacknowledged;
//! - [`resp`], the responder: takes the requests in PSN order into the
//!   receive ring, acknowledges when asked, answers duplicates and gaps;
//!   [`answer`] sends what it answers (READ responses from the send work);
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

pub(crate) mod answer;
mod resp_state;
use resp_state::InMsg;
pub(crate) use resp_state::{
    Answer,
    RespState, //
};
pub(crate) mod atomic;
pub(crate) mod comp;
mod lost;
pub(crate) mod req;
pub(crate) mod resp;
mod rkey;
pub(crate) mod timer;
pub(crate) mod uc;

/// Most PSNs a requester sends past the oldest unacknowledged one
/// (`RXE_MAX_UNACKED_PSNS`).
const MAX_UNACKED_PSNS: u32 = 128;

/// An acknowledgement is requested at the end of each message and by the
/// packet after more than this many in a row that did not ask for one
/// (`RXE_MAX_PKT_PER_ACK`, [`ReqState::ack_request`]).
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
    kind: Kind,
    signaled: bool,
    /// Refused before it was sent: it completes with this status, in
    /// order.
    error: Option<WcStatus>,
}

/// What a send work request does on an RC QP.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    #[default]
    Send,
    Write,
    /// An RDMA READ: one request, answered by one response per PSN.
    Read,
    /// An atomic compare-and-swap: one request, one atomic
    /// acknowledgement with the value before.
    CmpSwap,
    /// An atomic fetch-and-add, as [`Kind::CmpSwap`].
    FetchAdd,
    /// An ATOMIC WRITE: 8 bytes, answered by an empty READ response.
    AtomicWrite,
    /// A SEND whose last packet carries an R_Key the receiver invalidates
    /// (an IETH).
    SendInv,
    /// A memory window bound ([`crate::sw::mw::bind`]): done when the
    /// requester reaches it, nothing sent; it completes once what was
    /// posted before it has.
    Bind,
    /// A memory window invalidated ([`crate::sw::mw::invalidate`]), as
    /// [`Kind::Bind`]; it waits until everything before it completed.
    LocalInv,
    /// A FLUSH: one request, answered by an empty READ response (as an
    /// ATOMIC WRITE), taking no credit of `max_rd_atomic`.
    Flush,
}

impl Kind {
    /// Whether the responder answers with data (READ responses, an
    /// atomic acknowledgement), which a plain acknowledgement does not
    /// stand for; each such request takes a credit of `max_rd_atomic`.
    fn responds(self) -> bool {
        matches!(
            self,
            Kind::Read | Kind::CmpSwap | Kind::FetchAdd | Kind::AtomicWrite | Kind::Flush
        )
    }

    /// Whether it takes a credit of `max_rd_atomic`
    /// (`rxe_req.c:check_init_depth`: READs, atomics, ATOMIC WRITE; not
    /// FLUSH).
    fn credit(self) -> bool {
        self.responds() && self != Kind::Flush
    }

    /// Whether it is one packet whatever its length (its answer too).
    fn one_packet(self) -> bool {
        matches!(
            self,
            Kind::CmpSwap | Kind::FetchAdd | Kind::AtomicWrite | Kind::Flush
        )
    }

    /// Whether this is done by the requester itself, no packet sent
    /// (`WR_LOCAL_OP_MASK`).
    fn local(self) -> bool {
        matches!(self, Kind::Bind | Kind::LocalInv)
    }

    /// Whether this is an atomic.
    fn atomic(self) -> bool {
        matches!(self, Kind::CmpSwap | Kind::FetchAdd)
    }
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
    /// A copy of each slot of the send ring, taken when its work request
    /// is first sent and kept until it completes (what a retransmission
    /// sends, and where a READ's responses go; userspace may rewrite the
    /// ring's). Empty for UD.
    shadow: KVVec<u8>,
    /// The bytes of a slot.
    elem: usize,
    /// READs and atomics (and ATOMIC WRITEs) in flight, and the most allowed
    /// (`max_rd_atomic`, at least one); one more waits for a credit.
    reads_out: u32,
    max_reads: u32,
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
    /// Sending again after an answer showed a READ's or atomic's answers
    /// lost (`rxe_comp.c`'s `started_retry`): more answers showing it are
    /// dropped until one moves things on or the retransmit timer fires.
    early_retry: bool,
    /// Packets sent in a row that did not ask for an acknowledgement.
    noack: u32,
    /// The requester stopped for the completer: at [`MAX_UNACKED_PSNS`],
    /// or at a READ with no credit left.
    waiting: bool,
    /// The QP failed: nothing more is sent.
    failed: bool,
    /// A work request was refused: nothing after it is sent (the QP
    /// fails when it completes, `rxe_req.c`'s `QP_STATE_ERROR`).
    refused: bool,
    /// `destroy_qp`: no timer is queued any more.
    dead: bool,
    /// The QP is in SQD: no new work request is begun; those begun are
    /// sent (again, if need be) to their completion.
    sqd: bool,
    /// Moved to SQD with work requests begun and not completed:
    /// `IB_EVENT_SQ_DRAINED` is due when the last of them completes
    /// (`sq_draining`).
    pub(crate) draining: bool,
}

impl ReqState {
    /// The state of a new QP whose send ring has `slots` slots of `elem`
    /// bytes (none for a UD QP).
    pub(crate) fn new(slots: u32, elem: usize) -> Result<Self> {
        let mut pending = KVVec::new();
        // CAST: A ring's slots, at most 2^21.
        pending.resize(slots as usize, Pending::default(), GFP_KERNEL)?;
        let mut shadow = KVVec::new();
        // CAST: As above; the ring's bytes fit its 32-bit size.
        shadow.resize(slots as usize * elem, 0, GFP_KERNEL)?;
        Ok(Self {
            shadow,
            elem,
            reads_out: 0,
            max_reads: 1,
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
            early_retry: false,
            noack: 0,
            waiting: false,
            failed: false,
            refused: false,
            dead: false,
            sqd: false,
            draining: false,
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
    pub(crate) fn set_params(
        &mut self,
        mtu: usize,
        timeout: u8,
        retry_cnt: u8,
        rnr_retry: u8,
        max_rd_atomic: u8,
    ) {
        // CAST: At most 4096.
        self.mtu = mtu as u32;
        self.max_reads = u32::from(max_rd_atomic).max(1);
        self.timeout = timeout_jiffies(timeout);
        self.retry_cnt = retry_cnt;
        self.rnr_retry = rnr_retry;
        self.retry_left = retry_cnt;
        self.rnr_left = rnr_retry;
        self.early_retry = false;
    }

    /// The QP was reset: every work request in flight is forgotten, the
    /// ring starts over at `consumer`.
    pub(crate) fn reset(&mut self, consumer: u32) {
        self.comp = consumer;
        self.next = consumer;
        self.fresh = consumer;
        self.offset = 0;
        self.reads_out = 0;
        self.failed = false;
        self.refused = false;
        self.rnr_wait = false;
        self.early_retry = false;
        self.noack = 0;
        self.waiting = false;
        self.progress = false;
        self.sqd = false;
        self.draining = false;
    }

    /// Whether the packet being sent, the last of its message or not, asks
    /// for an acknowledgement (the AckReq bit), as `rxe_req.c`'s
    /// `init_req_packet` decides it: the last packet of a message does, and
    /// so does one after more than [`MAX_PKT_PER_ACK`] in a row that did
    /// not. The count is the QP's, kept across messages and through
    /// retransmissions, and reset by each packet that asks: where it lands
    /// is soft-RoCE's bit for bit (its MIDDLE packets of a long message, or
    /// of one sent again, can ask).
    pub(super) fn ack_request(&mut self, last: bool) -> bool {
        let ask = last || {
            let run = self.noack;
            self.noack += 1;
            run > MAX_PKT_PER_ACK
        };
        if ask {
            self.noack = 0;
        }
        ask
    }

    /// The QP is in error: nothing more is sent.
    pub(crate) fn fail(&mut self) {
        self.failed = true;
    }

    /// A flush completed everything up to [`ReqState::comp`].
    pub(crate) fn settle(&mut self) {
        self.reads_out = 0;
        self.fresh = self.comp;
        self.next = self.comp;
        self.offset = 0;
    }

    /// The copy of slot `slot`.
    fn slot(&self, slot: u32) -> Option<&[u8]> {
        // CAST: A slot below the ring's, times its element size.
        let at = slot as usize * self.elem;
        self.shadow.get(at..at + self.elem)
    }

    /// `destroy_qp`: no timer is queued from now on.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
    }

    /// `modify_qp` moved the QP to SQD (`rxe_qp.c:rxe_qp_sqd`): nothing new
    /// is begun; whether the send queue is drained already (nothing begun
    /// is outstanding), else `IB_EVENT_SQ_DRAINED` comes from the completer.
    pub(crate) fn enter_sqd(&mut self) -> bool {
        self.sqd = true;
        self.draining = !self.idle();
        !self.draining
    }

    /// `modify_qp` moved the QP out of SQD (to RTS, or to the error state
    /// while draining): no event is due any more.
    pub(crate) fn leave_sqd(&mut self) {
        self.sqd = false;
        self.draining = false;
    }

    /// Nothing begun is outstanding: every work request copied out of the
    /// ring has completed.
    pub(super) fn idle(&self) -> bool {
        self.comp == self.fresh && self.next == self.fresh
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
