// SPDX-License-Identifier: GPL-2.0

//! RoCE v2 packets of rv0, as soft-RoCE puts them on the wire: an IPv4 or
//! IPv6 header, UDP to port 4791, the base transport header (BTH), for UD
//! the datagram extended transport header (DETH), immediate data if any,
//! the payload padded to 4 bytes, and the invariant CRC (ICRC).
//!
//! Only the byte layout is here, built and checked in safe Rust over
//! plain slices; sending and receiving are in [`super::datapath`]. The
//! references are `rxe_hdr.h` (headers), `rxe_net.c` (IP and UDP),
//! `rxe_icrc.c` (ICRC) and `rxe_recv.c` (the receive checks) of 7.2.

use crate::{
    net::IpAddr,
    rdma::{
        driver::attrs::Mtu,
        gid::Gid,
        qp::Psn, //
    },
};

mod checksum;
mod counters;
mod icrc;
pub(crate) mod opcode;
pub(crate) use checksum::ipv4_checksum;
use checksum::udp_checksum_ok;
pub(crate) use counters::{
    Count,
    Counters, //
};
use icrc::{
    icrc,
    icrc_rxe_flush,
    FLUSH, //
};
use opcode::{
    Hdrs,
    Opcode, //
};

/// The IP protocol number of UDP.
pub(crate) const IPPROTO_UDP: u8 = 17;

/// The UDP port of RoCE v2 (`ROCE_V2_UDP_DPORT`).
pub(crate) const ROCE_V2_PORT: u16 = 4791;

/// The default P_Key, full membership (`IB_DEFAULT_PKEY_FULL`).
pub(crate) const DEFAULT_PKEY: u16 = 0xffff;

/// The room soft-RoCE keeps in a netdev's MTU for the headers of a packet
/// (`RXE_MAX_HDR_LENGTH`, `rxe_hdr.h`; `rxe_param.h:eth_mtu_int_to_enum`):
/// the port's MTU is the largest IBTA MTU that fits the rest.
const MAX_HDR_LEN: u32 = 80;

/// The MTU of the port over a netdev of MTU `netdev_mtu`, as soft-RoCE
/// reports it and limits its sends to (`rxe_set_mtu`).
pub(crate) fn port_mtu(netdev_mtu: u32) -> Mtu {
    Mtu::at_most(netdev_mtu.saturating_sub(MAX_HDR_LEN))
}

const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;
const BTH_LEN: usize = 12;
const ICRC_LEN: usize = 4;

/// The 24 bits of a QP number or a PSN.
const MASK_24: u32 = 0xff_ffff;

/// The UDP source port of QP `qpn`: 0xc000 plus 14 bits of its hash
/// (`rxe_qp.c:rxe_qp_init_req`, `hash_32`), so that a QP's packets take
/// one path through ECMP.
pub(crate) fn source_port(qpn: u32) -> u16 {
    // `hash_32(qpn, 14)`: the top 14 bits of qpn * GOLDEN_RATIO_32.
    let hash = qpn.wrapping_mul(0x61c8_8647) >> (32 - 14);
    // CAST: 14 bits.
    0xc000 + (hash & 0x3fff) as u16
}

/// Where a packet goes and what it says, but its payload:
/// [`Outgoing::write_headers`] writes the rest of the packet, the payload
/// goes at [`Outgoing::payload_range`] (gathered straight from the memory
/// regions), and [`Outgoing::seal`] adds the ICRC.
pub(crate) struct Outgoing {
    pub(crate) src: IpAddr,
    pub(crate) dst: IpAddr,
    pub(crate) traffic_class: u8,
    pub(crate) hop_limit: u8,
    pub(crate) src_port: u16,
    /// What the packet is; the headers written are the opcode's.
    pub(crate) opcode: &'static Opcode,
    pub(crate) dest_qpn: u32,
    /// The DETH's (UD).
    pub(crate) src_qpn: u32,
    pub(crate) psn: Psn,
    /// The DETH's (UD).
    pub(crate) qkey: u32,
    /// Immediate data, as the ring holds it (network order in memory).
    pub(crate) imm: Option<u32>,
    /// The IETH's R_Key to invalidate (RC's SEND with invalidate).
    pub(crate) ieth: u32,
    /// The FETH of a FLUSH: its selectivity level and placement type bits.
    pub(crate) feth: u32,
    pub(crate) solicited: bool,
    /// The BTH's acknowledge request (RC).
    pub(crate) ack_req: bool,
    /// The AETH of an acknowledgement: syndrome and MSN.
    pub(crate) aeth: u32,
    /// The RETH of an RDMA request: virtual address, R_Key, length; the
    /// first two also an AtomicETH's.
    pub(crate) reth: (u64, u32, u32),
    /// The rest of an AtomicETH: the swap (or add) and compare values.
    pub(crate) atomic: (u64, u64),
    /// The AtomicAckETH's original value.
    pub(crate) orig: u64,
    /// The payload's length, at most the path MTU.
    pub(crate) payload_len: usize,
}

impl Outgoing {
    fn ip_len(&self) -> usize {
        match self.src {
            IpAddr::V4(_) => IPV4_LEN,
            IpAddr::V6(_) => IPV6_LEN,
        }
    }

    fn pad(&self) -> usize {
        (4 - self.payload_len % 4) % 4
    }

    fn transport_len(&self) -> usize {
        BTH_LEN + self.opcode.len
    }

    /// The bytes of the whole IP packet.
    pub(crate) fn len(&self) -> usize {
        self.ip_len() + UDP_LEN + self.transport_len() + self.payload_len + self.pad() + ICRC_LEN
    }

    /// The length of the IP header.
    pub(crate) fn ip_header_len(&self) -> usize {
        self.ip_len()
    }

    /// Whether the packet is IPv6.
    pub(crate) fn is_ipv6(&self) -> bool {
        matches!(self.src, IpAddr::V6(_))
    }

    /// Writes the IP header of the packet into `h` (its first 20 or 40
    /// bytes, zero before): as `rxe_net.c:prepare_ipv4_hdr` (don't
    /// fragment; the identification is 0, as the IP layer gives an atomic
    /// datagram without a connected socket, where soft-RoCE hashes one) or
    /// `prepare_ipv6_hdr` (no flow label). The IPv4 checksum is filled in.
    pub(crate) fn write_ip_header(&self, h: &mut [u8]) {
        let total = self.len();
        match (&self.src, &self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                h[0] = 0x45;
                h[1] = self.traffic_class;
                // CAST: At most 20 + 8 + 24 + 4096 + 3 + 4.
                h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
                h[6] = 0x40;
                h[8] = self.hop_limit;
                h[9] = 17;
                h[12..16].copy_from_slice(s);
                h[16..20].copy_from_slice(d);
                let sum = ipv4_checksum(&h[..IPV4_LEN]);
                h[10..12].copy_from_slice(&sum.to_be_bytes());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                h[0] = 0x60 | (self.traffic_class >> 4);
                h[1] = self.traffic_class << 4;
                // CAST: As above.
                h[4..6].copy_from_slice(&((total - IPV6_LEN) as u16).to_be_bytes());
                h[6] = 17;
                h[7] = self.hop_limit;
                h[8..24].copy_from_slice(s);
                h[24..40].copy_from_slice(d);
            }
            // The caller takes both from GIDs of one family.
            _ => {}
        }
    }

    /// Where the payload goes in the packet.
    pub(crate) fn payload_range(&self) -> core::ops::Range<usize> {
        let start = self.ip_len() + UDP_LEN + self.transport_len();
        start..start + self.payload_len
    }

    /// Writes the packet but its payload and its ICRC into `buf`
    /// ([`Outgoing::len`] zero bytes).
    pub(crate) fn write_headers(&self, buf: &mut [u8]) {
        let ip = self.ip_len();
        self.write_ip_header(&mut buf[..ip]);
        // UDP: no checksum, as soft-RoCE (the ICRC covers the packet).
        let udp_len = buf.len() - ip;
        let u = &mut buf[ip..ip + UDP_LEN];
        u[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        u[2..4].copy_from_slice(&ROCE_V2_PORT.to_be_bytes());
        // CAST: Less than 2^16 (see `write_ip_header`).
        u[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        let t = ip + UDP_LEN;
        let b = &mut buf[t..t + BTH_LEN];
        // BTH (`rxe_hdr.h:bth_init`): no migration, transport version 0.
        let op = self.opcode;
        b[0] = op.code;
        // CAST: 0..=3.
        b[1] = (if self.solicited { 0x80 } else { 0 }) | ((self.pad() as u8) << 4);
        b[2..4].copy_from_slice(&DEFAULT_PKEY.to_be_bytes());
        b[4..8].copy_from_slice(&(self.dest_qpn & MASK_24).to_be_bytes());
        b[8..12].copy_from_slice(&self.psn.value().to_be_bytes());
        if self.ack_req {
            b[8] |= 0x80;
        }
        if let Some(off) = op.offset(Hdrs::AETH) {
            let a = t + BTH_LEN + off;
            buf[a..a + 4].copy_from_slice(&self.aeth.to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::RETH) {
            let r = t + BTH_LEN + off;
            let (va, rkey, len) = self.reth;
            buf[r..r + 8].copy_from_slice(&va.to_be_bytes());
            buf[r + 8..r + 12].copy_from_slice(&rkey.to_be_bytes());
            buf[r + 12..r + 16].copy_from_slice(&len.to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::ATMETH) {
            let r = t + BTH_LEN + off;
            buf[r..r + 8].copy_from_slice(&self.reth.0.to_be_bytes());
            buf[r + 8..r + 12].copy_from_slice(&self.reth.1.to_be_bytes());
            buf[r + 12..r + 20].copy_from_slice(&self.atomic.0.to_be_bytes());
            buf[r + 20..r + 28].copy_from_slice(&self.atomic.1.to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::ATMACK) {
            let r = t + BTH_LEN + off;
            buf[r..r + 8].copy_from_slice(&self.orig.to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::DETH) {
            let d = t + BTH_LEN + off;
            buf[d..d + 4].copy_from_slice(&self.qkey.to_be_bytes());
            buf[d + 4..d + 8].copy_from_slice(&(self.src_qpn & MASK_24).to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::IETH) {
            let r = t + BTH_LEN + off;
            buf[r..r + 4].copy_from_slice(&self.ieth.to_be_bytes());
        }
        if let Some(off) = op.offset(Hdrs::FETH) {
            let r = t + BTH_LEN + off;
            buf[r..r + 4].copy_from_slice(&self.feth.to_be_bytes());
        }
        if let (Some(imm), Some(off)) = (self.imm, op.offset(Hdrs::IMMDT)) {
            let p = t + BTH_LEN + off;
            buf[p..p + 4].copy_from_slice(&imm.to_ne_bytes());
        }
    }

    /// Completes the packet in `buf`, its payload in place: the ICRC.
    pub(crate) fn seal(&self, buf: &mut [u8]) {
        let ip = self.ip_len();
        let end = buf.len() - ICRC_LEN;
        let icrc = icrc(&buf[..ip], &buf[ip..end]);
        buf[end..].copy_from_slice(&icrc.to_le_bytes());
    }
}

/// Why a received packet was dropped before it reached a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// The IP or UDP header is short, inconsistent, or not ours to parse
    /// (IPv4 options, IPv6 extension headers).
    Header,
    /// The UDP checksum is not zero and wrong.
    UdpChecksum,
    /// The transport version is not 0, or the opcode is not one rv0
    /// takes (UD's and RC's).
    Opcode,
    /// Too short for its headers, padding and ICRC.
    Length,
    /// The ICRC does not match.
    Icrc,
}

/// A packet received from the wire, checked up to its ICRC.
pub(crate) struct Incoming<'a> {
    /// The IP header: 20 bytes of IPv4, or 40 of IPv6.
    pub(crate) ip_header: &'a [u8],
    /// What the packet is.
    pub(crate) opcode: &'static Opcode,
    pub(crate) solicited: bool,
    pub(crate) pkey: u16,
    pub(crate) dest_qpn: u32,
    pub(crate) psn: Psn,
    /// The BTH's acknowledge request.
    pub(crate) ack_req: bool,
    /// The AETH (acknowledgements, read responses), else 0.
    pub(crate) aeth: u32,
    /// The RETH (virtual address, R_Key, length), or an AtomicETH's
    /// virtual address and R_Key (length 0), else zeros.
    pub(crate) reth: (u64, u32, u32),
    /// An AtomicETH's swap (or add) and compare values, else zeros.
    pub(crate) atomic: (u64, u64),
    /// An AtomicAckETH's original value, else 0.
    pub(crate) orig: u64,
    /// The DETH's (UD), else 0.
    pub(crate) qkey: u32,
    pub(crate) src_qpn: u32,
    /// Immediate data, as it was sent (network order in memory).
    pub(crate) imm: Option<u32>,
    /// The IETH's R_Key to invalidate (RC's SEND with invalidate).
    pub(crate) ieth: Option<u32>,
    /// A FLUSH's FETH, else 0.
    pub(crate) feth: u32,
    pub(crate) payload: &'a [u8],
}

/// The IPv6 extension headers that may come before UDP and have the
/// common layout (next header, length in 8-byte units after the first 8):
/// hop-by-hop options, routing, destination options. A fragment is not
/// looked into (the tap leaves fragments to the stack).
const IPV6_EXT: [u8; 3] = [0, 43, 60];

/// The most bytes [`destination`] reads: an IPv6 header with extension
/// headers, then UDP and the BTH; longer chains are left to the stack.
pub(crate) const DESTINATION_BYTES: usize = 128;

/// Where a received datagram to port 4791 is going, from its headers
/// alone, before anything is checked or spent (the ICRC): the destination
/// address as a GID (IPv4-mapped for IPv4) and the destination QP of its
/// BTH. `None` when the headers do not reach the end of a BTH within
/// `bytes`: then it is no packet rv0 could take.
pub(crate) fn destination(bytes: &[u8]) -> Option<(Gid, u32)> {
    let mut g = [0u8; 16];
    let udp_at = match bytes.first()? >> 4 {
        4 => {
            let h = bytes.get(..IPV4_LEN)?;
            g[10] = 0xff;
            g[11] = 0xff;
            g[12..].copy_from_slice(&h[16..20]);
            // Options included: such a packet is taken and dropped for its
            // header, as soft-RoCE's pseudo-header cannot cover them.
            usize::from(h[0] & 0x0f) * 4
        }
        6 => {
            let h = bytes.get(..IPV6_LEN)?;
            g.copy_from_slice(&h[24..40]);
            let (mut next, mut at) = (h[6], IPV6_LEN);
            while next != IPPROTO_UDP {
                if !IPV6_EXT.contains(&next) {
                    return None;
                }
                let e = bytes.get(at..at + 2)?;
                next = e[0];
                at += (usize::from(e[1]) + 1) * 8;
            }
            at
        }
        _ => return None,
    };
    let bth = udp_at.checked_add(UDP_LEN)?;
    let b = bytes.get(bth..bth + BTH_LEN)?;
    Some((Gid::new(g), u32::from_be_bytes([0, b[5], b[6], b[7]])))
}

/// Parses and checks a received IP packet: the UDP layer's checks
/// (length; a non-zero checksum, unless `csum_known_good`: the packet's
/// checksum state says it needs no reading, as `udp_lib_checksum_complete`
/// takes it), then soft-RoCE's (`rxe_recv.c:rxe_rcv`: transport version,
/// opcode, lengths, ICRC). A datagram to port 4791 is assumed (the tap
/// checked it).
pub(crate) fn parse(bytes: &[u8], csum_known_good: bool) -> Result<Incoming<'_>, Malformed> {
    let version = bytes.first().ok_or(Malformed::Header)? >> 4;
    let (hl, udp_room) = match version {
        4 => {
            let h = bytes.get(..IPV4_LEN).ok_or(Malformed::Header)?;
            // Options would shift the ICRC's pseudo-header (soft-RoCE
            // takes 20 bytes): not sent by soft-RoCE, not taken here.
            if h[0] & 0x0f != 5 || h[9] != 17 {
                return Err(Malformed::Header);
            }
            let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
            (IPV4_LEN, total.min(bytes.len()))
        }
        6 => {
            let h = bytes.get(..IPV6_LEN).ok_or(Malformed::Header)?;
            if h[6] != 17 {
                return Err(Malformed::Header);
            }
            let payload = usize::from(u16::from_be_bytes([h[4], h[5]]));
            (IPV6_LEN, (IPV6_LEN + payload).min(bytes.len()))
        }
        _ => return Err(Malformed::Header),
    };
    let ip = &bytes[..hl];
    let after_ip = bytes.get(hl..udp_room).ok_or(Malformed::Header)?;
    let u = after_ip.get(..UDP_LEN).ok_or(Malformed::Header)?;
    let udp_len = usize::from(u16::from_be_bytes([u[4], u[5]]));
    if udp_len < UDP_LEN || udp_len > after_ip.len() {
        return Err(Malformed::Header);
    }
    // Bytes past the UDP length are not part of the datagram.
    let udp = &after_ip[..udp_len];
    let check = u16::from_be_bytes([u[6], u[7]]);
    if check != 0 && !csum_known_good && !udp_checksum_ok(ip, udp) {
        return Err(Malformed::UdpChecksum);
    }
    let pkt = &udp[UDP_LEN..];
    let b = pkt.get(..BTH_LEN).ok_or(Malformed::Length)?;
    let opcode = b[0];
    if b[1] & 0x0f != 0 {
        return Err(Malformed::Opcode);
    }
    // UD's, RC's and UC's opcodes (a QP takes its own transport's only,
    // `rxe_recv.c:check_type_state`, which the receiver checks).
    let op = opcode::lookup(opcode).ok_or(Malformed::Opcode)?;
    let hdr = BTH_LEN + op.len;
    let pad = usize::from((b[1] >> 4) & 3);
    if pkt.len() < hdr + pad + ICRC_LEN {
        return Err(Malformed::Length);
    }
    let end = pkt.len() - ICRC_LEN;
    let sent = u32::from_le_bytes([pkt[end], pkt[end + 1], pkt[end + 2], pkt[end + 3]]);
    let covered = &udp[..UDP_LEN + end];
    if icrc(ip, covered) != sent
        && !(op.code == FLUSH && icrc_rxe_flush(ip, covered, op.len) == sent)
    {
        return Err(Malformed::Icrc);
    }
    let word = |at: usize| u32::from_be_bytes([pkt[at], pkt[at + 1], pkt[at + 2], pkt[at + 3]]);
    let imm = op.offset(Hdrs::IMMDT).map(|off| {
        let at = BTH_LEN + off;
        u32::from_ne_bytes([pkt[at], pkt[at + 1], pkt[at + 2], pkt[at + 3]])
    });
    let at = |h: Hdrs| op.offset(h).map(|off| BTH_LEN + off);
    let (qkey, src_qpn) = at(Hdrs::DETH).map_or((0, 0), |d| (word(d), word(d + 4) & MASK_24));
    let dword = |at: usize| (u64::from(word(at)) << 32) | u64::from(word(at + 4));
    let atm = at(Hdrs::ATMETH);
    Ok(Incoming {
        ip_header: ip,
        opcode: op,
        solicited: b[1] & 0x80 != 0,
        pkey: u16::from_be_bytes([b[2], b[3]]),
        dest_qpn: word(4) & MASK_24,
        psn: Psn::new(word(8)),
        ack_req: b[8] & 0x80 != 0,
        aeth: at(Hdrs::AETH).map_or(0, word),
        reth: at(Hdrs::RETH)
            .map(|r| (dword(r), word(r + 8), word(r + 12)))
            .or(atm.map(|r| (dword(r), word(r + 8), 0)))
            .unwrap_or((0, 0, 0)),
        atomic: atm.map_or((0, 0), |r| (dword(r + 12), dword(r + 20))),
        orig: at(Hdrs::ATMACK).map_or(0, dword),
        qkey,
        src_qpn,
        imm,
        ieth: at(Hdrs::IETH).map(word),
        feth: at(Hdrs::FETH).map_or(0, word),
        payload: &pkt[hdr..end - pad],
    })
}

/// The source address of a packet's IP header (20 bytes of IPv4, or 40
/// of IPv6), IPv4 as an IPv4 address.
pub(crate) fn source_address(ip: &[u8]) -> Option<IpAddr> {
    match ip.len() {
        IPV4_LEN => Some(IpAddr::V4(ip[12..16].try_into().ok()?)),
        IPV6_LEN => Some(IpAddr::V6(ip[8..24].try_into().ok()?)),
        _ => None,
    }
}

/// Whether a packet's P_Key matches the port's only one, the default
/// (`rxe_hdr.h:pkey_match`: the same 15 bits, not zero, one of the two a
/// full member).
pub(crate) fn pkey_ok(pkey: u16) -> bool {
    let low = pkey & 0x7fff;
    low != 0 && low == DEFAULT_PKEY & 0x7fff
}
