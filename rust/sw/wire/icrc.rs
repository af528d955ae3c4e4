// SPDX-License-Identifier: GPL-2.0

//! The invariant CRC of a RoCE v2 packet (`rxe_icrc.c`), and soft-RoCE's
//! own of a FLUSH, which rv0 accepts.

use super::{
    BTH_LEN,
    IPV4_LEN,
    IPV6_LEN,
    UDP_LEN, //
};
use crate::net::skb::crc32_le;

/// The CRC of 8 bytes of 0xff (a masked LRH) from a seed of all ones: where
/// the ICRC of a RoCE v2 packet starts (`rxe_icrc.c:rxe_icrc_hdr`).
const ICRC_SEED: u32 = 0xdebb_20e3;

/// The ICRC of a packet whose IP header is `ip` and whose UDP datagram up
/// to the ICRC is `rest` (`rxe_icrc.c`): a CRC-32 over the headers with
/// the fields that routers change masked to ones (IPv4 type of service,
/// time to live and checksum; IPv6 traffic class, flow label and hop
/// limit; the UDP checksum; the reserved byte of the BTH), then over the
/// rest of the packet; complemented.
pub(super) fn icrc(ip: &[u8], rest: &[u8]) -> u32 {
    let mut pseudo = [0u8; IPV6_LEN + UDP_LEN + BTH_LEN];
    let n = masked_pseudo_header(ip, rest, &mut pseudo);
    let crc = crc32_le(ICRC_SEED, &pseudo[..n]);
    !crc32_le(crc, &rest[UDP_LEN + BTH_LEN..])
}

/// The IP, UDP and BTH headers of a packet with the fields routers change
/// masked to ones, into `pseudo`: their length.
fn masked_pseudo_header(
    ip: &[u8],
    rest: &[u8],
    pseudo: &mut [u8; IPV6_LEN + UDP_LEN + BTH_LEN],
) -> usize {
    let hl = ip.len();
    let n = hl + UDP_LEN + BTH_LEN;
    pseudo[..hl].copy_from_slice(ip);
    pseudo[hl..n].copy_from_slice(&rest[..UDP_LEN + BTH_LEN]);
    if hl == IPV4_LEN {
        pseudo[1] = 0xff;
        pseudo[8] = 0xff;
        pseudo[10] = 0xff;
        pseudo[11] = 0xff;
    } else {
        pseudo[0] |= 0x0f;
        pseudo[1] = 0xff;
        pseudo[2] = 0xff;
        pseudo[3] = 0xff;
        pseudo[7] = 0xff;
    }
    pseudo[hl + 6] = 0xff;
    pseudo[hl + 7] = 0xff;
    pseudo[hl + UDP_LEN + 4] = 0xff;
    n
}

/// RC's FLUSH opcode.
pub(super) const FLUSH: u8 = 0x1c;

/// The ICRC soft-RoCE 7.2 gives a FLUSH, and expects of one: its opcode
/// table has no payload offset for FLUSH (`rxe_opcode.c`), so the
/// "payload" it adds to the CRC after the headers (`rxe_icrc.c`,
/// `payload_addr`, `payload_size`) is the whole packet from the BTH on:
/// the BTH, unmasked, and the FETH and RETH are covered twice. rv0 sends
/// the ICRC of IBA (the headers once, [`icrc`]) and takes a FLUSH with
/// either, so that soft-RoCE's FLUSHes reach it (its own do not reach
/// soft-RoCE: Documentation/rv0.rst). `rest` as for [`icrc`]; `ext` the
/// length of the extended headers.
pub(super) fn icrc_rxe_flush(ip: &[u8], rest: &[u8], ext: usize) -> u32 {
    let mut pseudo = [0u8; IPV6_LEN + UDP_LEN + BTH_LEN];
    let n = masked_pseudo_header(ip, rest, &mut pseudo);
    let crc = crc32_le(ICRC_SEED, &pseudo[..n]);
    let headers = UDP_LEN + BTH_LEN;
    let crc = crc32_le(crc, rest.get(headers..headers + ext).unwrap_or(&[]));
    !crc32_le(crc, &rest[UDP_LEN..])
}
