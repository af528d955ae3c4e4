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
    IpAddr,
};
use crate::{
    bindings,
    errno::to_result, //
};
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
/// `dst` is a valid route on which this object owns one reference (for
/// IPv4 the `dst` of an `rtable`, whose reference is that of its `dst`:
/// `ip_rt_put` is `dst_release`).
pub(crate) struct Route {
    dst: NonNull<bindings::dst_entry>,
}

/// What address resolution needs to know of a route, read in one call
/// ([`Route::facts`]).
pub(crate) struct RouteFacts<'a> {
    /// The hop limit (TTL): the route's metric, or the namespace's default
    /// (`ip4_dst_hoplimit`, `ip6_dst_hoplimit`).
    pub(crate) hop_limit: u8,
    /// The destination is an address of this host (`RTN_LOCAL`,
    /// `RTF_LOCAL`).
    pub(crate) is_local: bool,
    /// The route goes through a gateway.
    pub(crate) has_gateway: bool,
    /// The output device.
    pub(crate) dev: &'a NetDevice,
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
                // SAFETY: `rt` is a valid, referenced route; its `dst` is a
                // field (the first: `ip_rt_put` relies on it too).
                let dst = unsafe { &raw mut (*rt.as_ptr()).dst };
                // INVARIANT: The lookup returned a referenced route.
                Ok(Route {
                    // SAFETY: The `dst` of a valid rtable is not null.
                    dst: unsafe { NonNull::new_unchecked(dst) },
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

    /// What [`Route::holds`] checks the route against later: for IPv6 the
    /// serial of its FIB node (`rt6_get_cookie`), for IPv4 nothing (0).
    pub(crate) fn cookie(&self) -> u32 {
        // SAFETY: By the type invariant the route is valid.
        unsafe { bindings::rverbs_dst_cookie(self.as_raw()) }
    }

    /// Whether a route kept since its lookup still holds (`dst_check`):
    /// no change of routes, addresses or of its device (unregistered)
    /// has made it obsolete. `cookie` is its [`Route::cookie`] of then.
    pub(crate) fn holds(&self, cookie: u32) -> bool {
        // SAFETY: By the type invariant the route is valid; the check
        // takes and drops no reference.
        unsafe { bindings::rverbs_dst_valid(self.as_raw(), cookie) }
    }

    /// What address resolution needs of the route: hop limit, local
    /// destination, gateway and output device, in one call (the Rust core
    /// asks on every unicast create). The device is valid while the RCU
    /// read lock is held.
    pub(crate) fn facts<'a>(&'a self, _rcu: &'a rcu::Guard) -> RouteFacts<'a> {
        let mut facts = bindings::rverbs_route_facts::default();
        // SAFETY: By the type invariant the route is valid; `facts` is
        // valid for writes; the caller holds the RCU read lock (`_rcu`).
        unsafe { bindings::rverbs_dst_facts(self.as_raw(), &mut facts) };
        RouteFacts {
            // CAST: Hop limits are 0..=255 by construction.
            hop_limit: facts.hop_limit as u8,
            is_local: facts.is_local,
            has_gateway: facts.has_gateway,
            // SAFETY: The output device of a referenced route, valid for
            // `'a`, within the RCU read-side critical section of `_rcu`.
            dev: unsafe { NetDevice::from_raw(facts.dev) },
        }
    }

    /// The hardware address of the neighbour of `daddr` (or of the gateway)
    /// on this route, if its entry is valid (`dst_fetch_ha` of ib_core's
    /// addr.c): the entry is looked up, created when missing; when it is not
    /// valid yet, its resolution is started or continued (ARP, ND) and this
    /// fails with `ENODATA`, as when no entry can be had.
    pub(crate) fn fetch_ha(&self, _rcu: &rcu::Guard, daddr: &IpAddr) -> Result<[u8; 6]> {
        let key: *const core::ffi::c_void = match daddr {
            IpAddr::V4(a) => a.as_ptr().cast(),
            IpAddr::V6(a) => a.as_ptr().cast(),
        };
        let mut ha = [0u8; bindings::MAX_ADDR_LEN as usize];
        // SAFETY: The route is valid; `key` points to an address of the
        // route's family, as the lookup expects; `ha` has room for any
        // hardware address; the caller holds the RCU read lock (`_rcu`),
        // under which the helper reads the route's device.
        to_result(unsafe { bindings::rverbs_dst_fetch_ha(self.as_raw(), key, ha.as_mut_ptr()) })?;
        let mut mac = [0u8; 6];
        mac.copy_from_slice(&ha[..6]);
        Ok(mac)
    }
}

/// An IPv6 address as the C type.
fn in6_addr(addr: &[u8; 16]) -> bindings::in6_addr {
    bindings::in6_addr {
        in6_u: bindings::in6_addr__bindgen_ty_1 { u6_addr8: *addr },
    }
}

impl Clone for Route {
    /// Another reference on the same route.
    fn clone(&self) -> Self {
        // SAFETY: By the type invariant the route is valid and we hold a
        // reference, so taking another is allowed (`dst_hold`).
        unsafe { bindings::rverbs_dst_hold(self.as_raw()) };
        // INVARIANT: The reference just taken is the new object's.
        Route { dst: self.dst }
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference (for IPv4 that
        // of the rtable: `ip_rt_put` is this).
        unsafe { bindings::dst_release(self.as_raw()) }
    }
}
