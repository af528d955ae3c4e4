// SPDX-License-Identifier: GPL-2.0

//! The Internet checksums a RoCE v2 packet carries: its IPv4 header's,
//! written, and its UDP checksum, checked when it is not zero.

use super::IPV4_LEN;

/// The IPv4 header checksum of `h` (its checksum field 0).
pub(crate) fn ipv4_checksum(h: &[u8]) -> u16 {
    !fold(sum16(0, h))
}

/// The ones' complement sum of `bytes` as 16-bit big-endian words, added
/// to `sum` (not folded).
fn sum16(sum: u64, bytes: &[u8]) -> u64 {
    bytes.chunks(2).fold(sum, |s, c| {
        s + u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
    })
}

/// Folds a ones' complement sum to 16 bits.
fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    // CAST: Folded to 16 bits above.
    sum as u16
}

/// Whether the UDP checksum of `udp` (header and data) under IP header
/// `ip` is right: the ones' complement sum over the pseudo-header and the
/// datagram is all ones.
pub(super) fn udp_checksum_ok(ip: &[u8], udp: &[u8]) -> bool {
    // CAST: A UDP length, below 2^16.
    let len = udp.len() as u64;
    let sum = if ip.len() == IPV4_LEN {
        sum16(len + 17, &ip[12..20])
    } else {
        sum16(len + 17, &ip[8..40])
    };
    fold(sum16(sum, udp)) == 0xffff
}
