// SPDX-License-Identifier: GPL-2.0

//! The BTH opcodes (IBTA 1.7, 9.2 and table 35; soft-RoCE's
//! `rxe_opcode.c`): for each opcode of a reliable connection (RC), an
//! unreliable one (UC) and a datagram (UD), the headers that follow the
//! BTH and what the packet is. rv0 sends and takes the two UD SENDs today;
//! the reliable transport will read every other opcode through the same
//! table. (Linux has no RD QPs and soft-RoCE takes no RD packet, so RD's
//! opcodes are left out; XRC's would add the XRCETH to RC's requests.)

/// What follows the BTH, in the order of the packet, and what the packet
/// is (`rxe_hdr_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hdrs(u32);

impl Hdrs {
    // The extended headers' bits are their places in the packet
    // ([`Hdrs::ORDER`]).

    /// Datagram extended transport header: Q_Key, source QP (8 bytes).
    pub(crate) const DETH: Self = Self(1 << 0);
    /// Flush extended transport header: selectivity and placement type (4
    /// bytes), before the RETH.
    pub(crate) const FETH: Self = Self(1 << 1);
    /// RDMA extended transport header: virtual address, R_Key, DMA
    /// length (16 bytes).
    pub(crate) const RETH: Self = Self(1 << 2);
    /// Atomic extended transport header: virtual address, R_Key, swap or
    /// add data, compare data (28 bytes).
    pub(crate) const ATMETH: Self = Self(1 << 3);
    /// ACK extended transport header: syndrome, MSN (4 bytes).
    pub(crate) const AETH: Self = Self(1 << 4);
    /// Atomic acknowledge extended transport header: original remote
    /// data (8 bytes).
    pub(crate) const ATMACK: Self = Self(1 << 5);
    /// Immediate data (4 bytes).
    pub(crate) const IMMDT: Self = Self(1 << 6);
    /// Invalidate extended transport header: the R_Key to invalidate (4
    /// bytes).
    pub(crate) const IETH: Self = Self(1 << 7);
    /// The packet carries a payload.
    pub(crate) const PAYLOAD: Self = Self(1 << 8);
    /// A request (else a response or an acknowledgement).
    pub(crate) const REQ: Self = Self(1 << 9);
    /// The first packet of a message (FIRST or ONLY).
    pub(crate) const START: Self = Self(1 << 10);
    /// The last packet of a message (LAST or ONLY).
    pub(crate) const END: Self = Self(1 << 11);

    /// The extended headers in the order they follow the BTH, with their
    /// lengths (the FETH comes before the RETH of a FLUSH).
    const ORDER: [(Self, usize); 8] = [
        (Self::DETH, 8),
        (Self::FETH, 4),
        (Self::RETH, 16),
        (Self::ATMETH, 28),
        (Self::AETH, 4),
        (Self::ATMACK, 8),
        (Self::IMMDT, 4),
        (Self::IETH, 4),
    ];

    /// `self` and `other`.
    pub(crate) const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether `self` has all of `other`.
    pub(crate) const fn has(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bytes of the extended headers after the BTH.
    pub(crate) const fn len(self) -> usize {
        let mut len = 0;
        let mut i = 0;
        while i < Self::ORDER.len() {
            if self.has(Self::ORDER[i].0) {
                len += Self::ORDER[i].1;
            }
            i += 1;
        }
        len
    }

    /// Where header `h` starts after the BTH, if the packet has it.
    pub(crate) const fn offset(self, h: Self) -> Option<usize> {
        if !self.has(h) {
            return None;
        }
        let mut off = 0;
        let mut i = 0;
        while i < Self::ORDER.len() {
            if Self::ORDER[i].0 .0 == h.0 {
                return Some(off);
            }
            if self.has(Self::ORDER[i].0) {
                off += Self::ORDER[i].1;
            }
            i += 1;
        }
        None
    }
}

/// The transport of an opcode: its top three bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Reliable connection (0x00-0x1f).
    Rc,
    /// Unreliable connection (0x20-0x3f).
    Uc,
    /// Unreliable datagram (0x60-0x7f).
    Ud,
}

/// What an opcode is, with the lengths and offsets of its headers worked
/// out when the module is built (a packet's way reads them, nothing more).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opcode {
    /// The opcode.
    pub(crate) code: u8,
    /// Its headers and kind.
    pub(crate) hdrs: Hdrs,
    /// The bytes of its extended headers.
    pub(crate) len: usize,
    /// Where each extended header starts after the BTH, by its place in
    /// [`Hdrs::ORDER`] (0 where it has none).
    offsets: [u8; 8],
}

impl Opcode {
    const fn new(code: u8, hdrs: Hdrs) -> Self {
        let mut offsets = [0; 8];
        let mut i = 0;
        while i < Hdrs::ORDER.len() {
            if let Some(off) = hdrs.offset(Hdrs::ORDER[i].0) {
                // CAST: At most 28 + 16 + 4 bytes before any header.
                offsets[i] = off as u8;
            }
            i += 1;
        }
        Self {
            code,
            hdrs,
            len: hdrs.len(),
            offsets,
        }
    }

    /// Where extended header `h` (one of them) starts after the BTH, if
    /// the packet has it.
    pub(crate) fn offset(&self, h: Hdrs) -> Option<usize> {
        // CAST: A bit below 8, the header's place in the packet.
        let place = h.0.trailing_zeros() as usize;
        (self.hdrs.has(h) && place < self.offsets.len()).then(|| usize::from(self.offsets[place]))
    }

    /// The transport the opcode belongs to.
    pub(crate) fn transport(&self) -> Transport {
        match self.code >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            _ => Transport::Ud,
        }
    }
}

/// The operations of a connected transport (the low five bits), with their
/// headers: `rxe_opcode.c`'s table for RC, of which UC has the SENDs and
/// RDMA WRITEs.
const CONNECTED: [(u8, Hdrs, bool); 24] = {
    let p = Hdrs::PAYLOAD;
    let rp = Hdrs::REQ.with(p);
    let s = Hdrs::START;
    let e = Hdrs::END;
    let se = s.with(e);
    [
        // (low bits, headers, also UC); IBTA's names.
        (0x00, rp.with(s), true),                    // SEND_FIRST
        (0x01, rp, true),                            // SEND_MIDDLE
        (0x02, rp.with(e), true),                    // SEND_LAST
        (0x03, rp.with(e).with(Hdrs::IMMDT), true),  // SEND_LAST_WITH_IMMEDIATE
        (0x04, rp.with(se), true),                   // SEND_ONLY
        (0x05, rp.with(se).with(Hdrs::IMMDT), true), // SEND_ONLY_WITH_IMMEDIATE
        (0x06, rp.with(s).with(Hdrs::RETH), true),   // RDMA_WRITE_FIRST
        (0x07, rp, true),                            // RDMA_WRITE_MIDDLE
        (0x08, rp.with(e), true),                    // RDMA_WRITE_LAST
        (0x09, rp.with(e).with(Hdrs::IMMDT), true),  // RDMA_WRITE_LAST_WITH_IMMEDIATE
        (0x0a, rp.with(se).with(Hdrs::RETH), true),  // RDMA_WRITE_ONLY
        (0x0b, rp.with(se).with(Hdrs::RETH).with(Hdrs::IMMDT), true), // ..._ONLY_WITH_IMMEDIATE
        (0x0c, Hdrs::REQ.with(se).with(Hdrs::RETH), false), // RDMA_READ_REQUEST
        (0x0d, p.with(s).with(Hdrs::AETH), false),   // RDMA_READ_RESPONSE_FIRST
        (0x0e, p, false),                            // RDMA_READ_RESPONSE_MIDDLE
        (0x0f, p.with(e).with(Hdrs::AETH), false),   // RDMA_READ_RESPONSE_LAST
        (0x10, p.with(se).with(Hdrs::AETH), false),  // RDMA_READ_RESPONSE_ONLY
        (0x11, se.with(Hdrs::AETH), false),          // ACKNOWLEDGE
        (0x12, se.with(Hdrs::AETH).with(Hdrs::ATMACK), false), // ATOMIC_ACKNOWLEDGE
        (0x13, Hdrs::REQ.with(se).with(Hdrs::ATMETH), false), // COMPARE_SWAP
        (0x14, Hdrs::REQ.with(se).with(Hdrs::ATMETH), false), // FETCH_ADD
        (0x16, rp.with(e).with(Hdrs::IETH), false),  // SEND_LAST_WITH_INVALIDATE
        (0x17, rp.with(se).with(Hdrs::IETH), false), // SEND_ONLY_WITH_INVALIDATE
        (
            0x1c,
            Hdrs::REQ.with(se).with(Hdrs::FETH).with(Hdrs::RETH),
            false,
        ), // FLUSH
    ]
};

/// `RDMA_ATOMIC_WRITE` (0x1d): a RETH and 8 bytes of payload, RC only.
const ATOMIC_WRITE: (u8, Hdrs) = (
    0x1d,
    Hdrs::REQ
        .with(Hdrs::PAYLOAD)
        .with(Hdrs::START)
        .with(Hdrs::END)
        .with(Hdrs::RETH),
);

/// Every opcode, indexed by its number.
static TABLE: [Option<Opcode>; 256] = table();

/// [`TABLE`], built when the module is built.
const fn table() -> [Option<Opcode>; 256] {
    let mut t: [Option<Opcode>; 256] = [None; 256];
    let mut i = 0;
    while i < CONNECTED.len() {
        let (low, hdrs, uc) = CONNECTED[i];
        t[low as usize] = Some(Opcode::new(low, hdrs));
        if uc {
            t[0x20 | low as usize] = Some(Opcode::new(0x20 | low, hdrs));
        }
        // UD has the two SEND_ONLYs, with a DETH.
        if low == 0x04 || low == 0x05 {
            t[0x60 | low as usize] = Some(Opcode::new(0x60 | low, hdrs.with(Hdrs::DETH)));
        }
        i += 1;
    }
    let (low, hdrs) = ATOMIC_WRITE;
    t[low as usize] = Some(Opcode::new(low, hdrs));
    t
}

/// What opcode `code` is; `None` for one of no transport rv0 knows.
pub(crate) fn lookup(code: u8) -> Option<&'static Opcode> {
    TABLE[usize::from(code)].as_ref()
}

/// `UD SEND_ONLY`.
pub(crate) const UD_SEND_ONLY: Opcode = entry(0x64);

/// `UD SEND_ONLY_WITH_IMMEDIATE`.
pub(crate) const UD_SEND_ONLY_WITH_IMMEDIATE: Opcode = entry(0x65);

/// The SENDs and RDMA WRITEs of RC (first row) and UC (second), each:
/// SEND FIRST, MIDDLE, LAST, LAST_WITH_IMMEDIATE, ONLY,
/// ONLY_WITH_IMMEDIATE, then the same of RDMA WRITE.
static CONNECTED_OPS: [[Opcode; 12]; 2] = [ops_row(0x00), ops_row(0x20)];

/// A row of [`CONNECTED_OPS`]: the twelve opcodes from `base` on.
const fn ops_row(base: u8) -> [Opcode; 12] {
    let mut r = [entry(0); 12];
    let mut i = 0;
    while i < 12 {
        // CAST: Below 12.
        r[i] = entry(base | i as u8);
        i += 1;
    }
    r
}

/// The index in a row of [`CONNECTED_OPS`] of a message's packet: its
/// first, its last (with the message's immediate data, if any), both, or
/// neither.
fn place(first: bool, last: bool, imm: bool) -> usize {
    match (first, last) {
        (true, false) => 0,
        (false, false) => 1,
        (false, true) => 2 + usize::from(imm),
        (true, true) => 4 + usize::from(imm),
    }
}

/// The RDMA WRITE of a message's packet on RC, or on UC (`uc`), as
/// [`send`].
pub(crate) fn write(uc: bool, first: bool, last: bool, imm: bool) -> &'static Opcode {
    &CONNECTED_OPS[usize::from(uc)][6 + place(first, last, imm)]
}

/// RC's `RDMA_READ_REQUEST`.
pub(crate) static RC_READ_REQUEST: Opcode = entry(0x0c);

/// RC's RDMA READ responses: FIRST, MIDDLE, LAST, ONLY.
static RC_READ_RESPONSE: [Opcode; 4] = [entry(0x0d), entry(0x0e), entry(0x0f), entry(0x10)];

/// The READ response of a packet of a response: its first, its last,
/// both, or neither.
pub(crate) fn rc_read_response(first: bool, last: bool) -> &'static Opcode {
    let i = match (first, last) {
        (true, false) => 0,
        (false, false) => 1,
        (false, true) => 2,
        (true, true) => 3,
    };
    &RC_READ_RESPONSE[i]
}

/// RC's `ACKNOWLEDGE`.
pub(crate) static RC_ACKNOWLEDGE: Opcode = entry(0x11);

/// RC's `ATOMIC_ACKNOWLEDGE`.
pub(crate) static RC_ATOMIC_ACKNOWLEDGE: Opcode = entry(0x12);

/// RC's `COMPARE_SWAP`.
pub(crate) static RC_COMPARE_SWAP: Opcode = entry(0x13);

/// RC's `FETCH_ADD`.
pub(crate) static RC_FETCH_ADD: Opcode = entry(0x14);

/// RC's `RDMA_ATOMIC_WRITE`.
pub(crate) static RC_ATOMIC_WRITE: Opcode = entry(0x1d);

/// The SEND of a message's packet on RC, or on UC (`uc`): its first, its
/// last (with the message's immediate data, if any), both, or neither.
pub(crate) fn send(uc: bool, first: bool, last: bool, imm: bool) -> &'static Opcode {
    &CONNECTED_OPS[usize::from(uc)][place(first, last, imm)]
}

/// RC's SEND with invalidate of a message's packet: its first, its last
/// (with the IETH), both, or neither.
pub(crate) fn send_inv(first: bool, last: bool) -> &'static Opcode {
    match (first, last) {
        (_, false) => send(false, first, false, false),
        (false, true) => &RC_SEND_INV[0],
        (true, true) => &RC_SEND_INV[1],
    }
}

/// RC's `FLUSH`.
pub(crate) static RC_FLUSH: Opcode = entry(0x1c);

/// RC's `SEND_LAST_WITH_INVALIDATE` and `SEND_ONLY_WITH_INVALIDATE`.
static RC_SEND_INV: [Opcode; 2] = [entry(0x16), entry(0x17)];

/// The operations of RC requests (`code & 0x1f`) that rv0 executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    /// SEND (any of the six).
    Send,
    /// RDMA WRITE (any of the six).
    Write,
    /// RDMA READ request.
    Read,
    /// An atomic: compare-and-swap (`true`) or fetch-and-add.
    Atomic(bool),
    /// An ATOMIC WRITE.
    AtomicWrite,
    /// A FLUSH.
    Flush,
    /// Any other request.
    Other,
}

impl Opcode {
    /// Whether this is an RDMA READ response.
    pub(crate) fn is_read_response(&self) -> bool {
        (0x0d..=0x10).contains(&self.code)
    }

    /// What an RC request does.
    pub(crate) fn operation(&self) -> Operation {
        match self.code & 0x1f {
            0x00..=0x05 | 0x16 | 0x17 => Operation::Send,
            0x06..=0x0b => Operation::Write,
            0x0c => Operation::Read,
            0x13 => Operation::Atomic(true),
            0x14 => Operation::Atomic(false),
            0x1c => Operation::Flush,
            0x1d => Operation::AtomicWrite,
            _ => Operation::Other,
        }
    }
}

/// The table's entry of `code`, which has one (else the build fails).
const fn entry(code: u8) -> Opcode {
    match table()[code as usize] {
        Some(op) => op,
        None => panic!("no such opcode"),
    }
}

// The table against IBTA's lengths, checked when the module is built.
const _: () = {
    // Each extended header's bit is its place in the packet.
    let mut i = 0;
    while i < Hdrs::ORDER.len() {
        assert!(Hdrs::ORDER[i].0 .0 == 1 << i);
        i += 1;
    }
    let ud = UD_SEND_ONLY;
    assert!(ud.len == 8 && ud.hdrs.has(Hdrs::DETH.with(Hdrs::PAYLOAD)));
    let udi = UD_SEND_ONLY_WITH_IMMEDIATE;
    assert!(udi.len == 12 && udi.offsets[0] == 0 && udi.offsets[6] == 8);
    assert!(matches!(udi.hdrs.offset(Hdrs::IMMDT), Some(8)));
    let wi = entry(0x0b);
    assert!(wi.len == 20 && wi.offsets[2] == 0 && wi.offsets[6] == 16);
    let ack = entry(0x12);
    assert!(ack.len == 12 && ack.offsets[4] == 0 && ack.offsets[5] == 4);
    assert!(entry(0x13).len == 28);
    assert!(entry(0x17).len == 4 && entry(0x16).len == 4);
    let flush = entry(0x1c);
    assert!(flush.len == 20 && flush.offsets[1] == 0 && flush.offsets[2] == 4);
    let t = table();
    assert!(t[0x15].is_none() && t[0x2c].is_none() && t[0x66].is_none());
    assert!(t[0x3d].is_none() && t[0x24].is_some());
    // UC's SENDs and WRITEs are RC's, 0x20 on.
    let (rc, uc) = (ops_row(0x00), ops_row(0x20));
    assert!(uc[0].code == 0x20 && uc[11].code == 0x2b && rc[6].code == 0x06);
};
