// SPDX-License-Identifier: GPL-2.0

//! Global identifiers (`union ib_gid`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A GID is 16 bytes, laid out as an IPv6 address; on RoCE it is one: an
//! IPv6 address, or an IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`).

use crate::net::IpAddr;

/// A GID, as its 16 raw bytes (network byte order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gid {
    raw: [u8; 16],
}

impl Gid {
    /// Creates a GID from its raw bytes.
    pub(crate) const fn new(raw: [u8; 16]) -> Self {
        Self { raw }
    }

    /// Returns the raw bytes.
    pub(crate) fn raw(&self) -> &[u8; 16] {
        &self.raw
    }

    /// Whether the GID is an IPv4-mapped IPv6 address (`ipv6_addr_v4mapped`).
    pub(crate) fn is_v4mapped(&self) -> bool {
        self.raw[..10].iter().all(|&b| b == 0) && self.raw[10] == 0xff && self.raw[11] == 0xff
    }

    /// Whether the GID is a multicast address (`rdma_is_multicast_addr`):
    /// IPv6 multicast, or IPv4-mapped IPv4 multicast (224.0.0.0/4).
    pub(crate) fn is_multicast(&self) -> bool {
        self.raw[0] == 0xff || (self.is_v4mapped() && self.raw[12] & 0xf0 == 0xe0)
    }

    /// Whether the GID is link-local, `fe80::/64` (`rdma_link_local_addr`).
    pub(crate) fn is_link_local(&self) -> bool {
        self.raw[..8] == [0xfe, 0x80, 0, 0, 0, 0, 0, 0]
    }

    /// Returns the IP address of the GID (`rdma_gid2ip`): IPv4 when mapped.
    pub(crate) fn ip(&self) -> IpAddr {
        if self.is_v4mapped() {
            IpAddr::V4([self.raw[12], self.raw[13], self.raw[14], self.raw[15]])
        } else {
            IpAddr::V6(self.raw)
        }
    }
}
