// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the IPv4/IPv6 routing tables and the neighbour
//! tables, as the RoCE destination MAC resolution needs them.
//!
//! C headers: [`include/net/route.h`](srctree/include/net/route.h),
//! [`include/net/ip6_route.h`](srctree/include/net/ip6_route.h),
//! [`include/net/neighbour.h`](srctree/include/net/neighbour.h)

pub(crate) mod device;
pub(crate) mod neighbour;
pub(crate) mod notifier;
pub(crate) mod route;
pub(crate) mod skb;
pub(crate) mod tap;

/// An IPv4 or IPv6 address, in network byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpAddr {
    /// An IPv4 address.
    V4([u8; 4]),
    /// An IPv6 address.
    V6([u8; 16]),
}

impl IpAddr {
    /// Returns whether both addresses are of the same family.
    pub(crate) fn same_family(&self, other: &IpAddr) -> bool {
        matches!(
            (self, other),
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_))
        )
    }
}
