// SPDX-License-Identifier: GPL-2.0

//! Output routes (`struct rtable`, `struct rt6_info`, as `struct dst_entry`).
//!
//! C headers: [`include/net/route.h`](srctree/include/net/route.h),
//! [`include/net/ip6_route.h`](srctree/include/net/ip6_route.h)

use super::{
    device::{
        Net,
        NetDevice, //
    },
    neighbour::Neighbour,
    IpAddr,
};
use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    prelude::*,
    sync::rcu, //
};

/// A route, with a reference held on it.
///
/// # Invariants
///
/// `dst` is a valid route on which this object owns one reference; for
/// IPv4 it is the `dst` of the `rtable` in `rt`.
pub(crate) struct Route {
    dst: NonNull<bindings::dst_entry>,
    rt: Option<NonNull<bindings::rtable>>,
}

// SAFETY: A referenced route may be used and released from any thread.
unsafe impl Send for Route {}

impl Route {
    /// Looks up the output route from `src` to `dst` in `net`, bound to the
    /// interface `oif` (`ip_route_output_key`, `ip6_dst_lookup_flow`), as
    /// `addr4_resolve` and `addr6_resolve` of ib_core's addr.c do.
    ///
    /// Both addresses must be of the same family. `proto` is the IP
    /// protocol of the packets (0 for none in particular, as ib_core's
    /// address resolution; UDP for RoCE v2 packets, as soft-RoCE's
    /// `rxe_find_route`, so that IPsec policies and `ipproto` rules apply).
    /// Fails with the routing error (`ENETUNREACH`, `EHOSTUNREACH`, ...).
    pub(crate) fn output(
        _rcu: &rcu::Guard,
        net: &Net,
        oif: i32,
        proto: u8,
        src: &IpAddr,
        dst: &IpAddr,
    ) -> Result<Route> {
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let mut fl4 = bindings::flowi4 {
                    __fl_common: bindings::flowi_common {
                        flowic_oif: oif,
                        flowic_proto: proto,
                        ..Default::default()
                    },
                    daddr: u32::from_ne_bytes(*d),
                    saddr: u32::from_ne_bytes(*s),
                    ..Default::default()
                };
                // SAFETY: `net` is valid under RCU; `fl4` is a valid flow key; no socket.
                let rt = from_err_ptr(unsafe {
                    bindings::ip_route_output_flow(net.as_raw(), &mut fl4, core::ptr::null())
                })?;
                let rt = NonNull::new(rt).ok_or(EINVAL)?;
                // SAFETY: `rt` is a valid, referenced route.
                let dst = unsafe { bindings::rverbs_rtable_dst(rt.as_ptr()) };
                // INVARIANT: The lookup returned a referenced route.
                Ok(Route {
                    // SAFETY: The `dst` of a valid rtable is not null.
                    dst: unsafe { NonNull::new_unchecked(dst) },
                    rt: Some(rt),
                })
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let mut fl6 = bindings::flowi6 {
                    __fl_common: bindings::flowi_common {
                        flowic_oif: oif,
                        flowic_proto: proto,
                        ..Default::default()
                    },
                    daddr: in6_addr(d),
                    saddr: in6_addr(s),
                    ..Default::default()
                };
                // SAFETY: As above; no socket, no final destination.
                let dst = from_err_ptr(unsafe {
                    bindings::ip6_dst_lookup_flow(
                        net.as_raw(),
                        core::ptr::null(),
                        &mut fl6,
                        core::ptr::null(),
                    )
                })?;
                // INVARIANT: The lookup returned a referenced route.
                Ok(Route {
                    dst: NonNull::new(dst).ok_or(EINVAL)?,
                    rt: None,
                })
            }
            _ => Err(EINVAL),
        }
    }

    /// Gives the reference to the route to the caller (a packet takes it).
    pub(crate) fn into_dst(self) -> NonNull<bindings::dst_entry> {
        // The reference of an IPv4 route is the one of its `dst`
        // (`ip_rt_put` is `dst_release` of it).
        let dst = self.dst;
        core::mem::forget(self);
        dst
    }

    fn as_raw(&self) -> *mut bindings::dst_entry {
        self.dst.as_ptr()
    }

    /// The hop limit (TTL) of the route: its metric, or the namespace's
    /// default (`ip4_dst_hoplimit`, `ip6_dst_hoplimit`).
    pub(crate) fn hop_limit(&self) -> u8 {
        // SAFETY: By the type invariant the route is valid.
        let hop_limit = unsafe {
            if self.rt.is_some() {
                bindings::rverbs_ip4_dst_hoplimit(self.as_raw())
            } else {
                bindings::ip6_dst_hoplimit(self.as_raw())
            }
        };
        // CAST: Hop limits are 0..=255 by construction.
        hop_limit as u8
    }

    /// Whether the destination is an address of this host (`RTN_LOCAL`,
    /// `RTF_LOCAL`).
    pub(crate) fn is_local(&self) -> bool {
        // SAFETY: By the type invariant the route is valid.
        unsafe { bindings::rverbs_dst_is_local(self.as_raw()) }
    }

    /// Whether the route goes through a gateway.
    pub(crate) fn has_gateway(&self) -> bool {
        // SAFETY: By the type invariant the route is valid.
        unsafe { bindings::rverbs_dst_has_gateway(self.as_raw()) }
    }

    /// The output device of the route.
    pub(crate) fn dev<'a>(&'a self, _rcu: &'a rcu::Guard) -> &'a NetDevice {
        // The device of a referenced route is valid while the RCU read lock is held.
        // SAFETY: The route is valid and referenced; `'a` is within the RCU guard.
        unsafe { NetDevice::from_raw(bindings::rverbs_dst_dev(self.as_raw())) }
    }

    /// The neighbour entry of `daddr` (or of the gateway) on this route,
    /// created when missing (`dst_neigh_lookup`). `None` when the entry
    /// cannot be had.
    pub(crate) fn neighbour(&self, daddr: &IpAddr) -> Option<Neighbour> {
        let key: *const core::ffi::c_void = match daddr {
            IpAddr::V4(a) => a.as_ptr().cast(),
            IpAddr::V6(a) => a.as_ptr().cast(),
        };
        // SAFETY: The route is valid; `key` points to an address of the
        // route's family, as the lookup expects.
        let n = unsafe { bindings::rverbs_dst_neigh_lookup(self.as_raw(), key) };
        // SAFETY: `dst_neigh_lookup` returned null or a referenced entry,
        // whose reference the `Neighbour` takes.
        NonNull::new(n).map(|n| unsafe { Neighbour::from_raw(n) })
    }
}

/// An IPv6 address as the C type.
fn in6_addr(addr: &[u8; 16]) -> bindings::in6_addr {
    bindings::in6_addr {
        in6_u: bindings::in6_addr__bindgen_ty_1 { u6_addr8: *addr },
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference.
        unsafe {
            match self.rt {
                Some(rt) => bindings::rverbs_ip_rt_put(rt.as_ptr()),
                None => bindings::dst_release(self.as_raw()),
            }
        }
    }
}
