// SPDX-License-Identifier: GPL-2.0

//! RoCE destination MAC resolution (`ib_resolve_eth_dmac` of verbs.c and
//! `rdma_addr_find_l2_eth_by_grh` of addr.c).
//!
//! In order:
//!
//! 1. multicast destination GID: the MAC is the mapped multicast MAC
//!    (`ip_eth_mc_map`, `ipv6_eth_mc_map`);
//! 2. link-local destination with a RoCE v1 source GID: the MAC is in the
//!    GID's EUI-64 (`rdma_get_ll_mac`); the IP stack is not used;
//! 3. otherwise the route from the source GID's netdev (its namespace,
//!    bound to it, so VLANs are honoured) to the destination, then:
//!    a local destination gives our own MAC; otherwise the next hop's
//!    neighbour entry gives it. The hop limit is the route's.
//!
//! ib_core does step 3 through `rdma_resolve_ip`: it allocates a request
//! and always completes it from a workqueue, even when the neighbour is
//! known. Here a valid neighbour is read directly, under RCU, in the
//! caller's context: no allocation, no work item, no context switch. A
//! neighbour that is not valid yet is solicited (ARP, ND) and the caller
//! waits for the netevent that makes it valid, bounded by the same 1000 ms
//! and with the same errors. Unlike ib_core's uninterruptible wait, it is
//! killable: only a fatal signal ends it early (the process is dying
//! anyway), so no other signal turns into `EINTR` for userspace. It also
//! retries every [`RETRY_MS`] so that an entry flushed during its
//! resolution does not turn into a spurious `ETIMEDOUT`. As in C, the
//! unicast path may sleep and says so with `might_sleep()`.

use super::stats::{
    self,
    Event, //
};
use crate::{
    errno::{
        eaddrnotavail,
        enodata, //
    },
    net::{
        neighbour::{
            self,
            WaitResult, //
        },
        route::Route,
        IpAddr,
    },
    rdma::{
        ah_attr::AhAttr,
        gid::Gid,
        gid_attr::{
            GidAttr,
            GidType, //
        },
    },
};
use kernel::{
    prelude::*,
    sync::rcu,
    task::might_sleep,
    time::{
        msecs_to_jiffies,
        Delta,
        Instant,
        Monotonic, //
    },
};

/// How long neighbour resolution may take, as ib_core's
/// `rdma_addr_find_l2_eth_by_grh` passes to `rdma_resolve_ip`.
const RESOLVE_TIMEOUT_MS: i64 = 1000;

/// The longest wait between two attempts while resolution is pending.
///
/// ib_core retries only when a neighbour becomes valid, or at the timeout.
/// If the entry being resolved is flushed meanwhile (`ip neigh flush`, a
/// netdev event), the reply to its solicitation is dropped and nothing
/// wakes the request: ib_core fails with `ETIMEDOUT`. Retrying at least
/// this often looks the entry up again, solicits afresh and recovers. A
/// neighbour that never answers still fails after `RESOLVE_TIMEOUT_MS`.
const RETRY_MS: i64 = 100;

/// The multicast MAC of an IPv4 group (`ip_eth_mc_map`): 01:00:5e and the
/// low 23 bits of the address.
pub(crate) fn ipv4_multicast_mac(addr: [u8; 4]) -> [u8; 6] {
    [0x01, 0x00, 0x5e, addr[1] & 0x7f, addr[2], addr[3]]
}

/// The multicast MAC of an IPv6 group (`ipv6_eth_mc_map`): 33:33 and the
/// low 32 bits of the address.
pub(crate) fn ipv6_multicast_mac(addr: &[u8; 16]) -> [u8; 6] {
    [0x33, 0x33, addr[12], addr[13], addr[14], addr[15]]
}

/// The MAC inside a link-local GID's EUI-64 (`rdma_get_ll_mac`).
pub(crate) fn link_local_mac(gid: &Gid) -> [u8; 6] {
    let raw = gid.raw();
    [raw[8] ^ 2, raw[9], raw[10], raw[13], raw[14], raw[15]]
}

/// Resolves the destination MAC (and, for unicast, the hop limit) of a
/// RoCE address vector into `attr` (`ib_resolve_eth_dmac`).
///
/// `attr` has a GRH with a referenced source GID entry (checked by the
/// caller, as ib_core's `rdma_fill_sgid_attr` makes sure).
pub(crate) fn resolve(attr: &mut AhAttr) -> Result {
    let dgid = attr.dgid();
    if dgid.is_multicast() {
        let mac = match dgid.ip() {
            IpAddr::V4(addr) => ipv4_multicast_mac(addr),
            IpAddr::V6(addr) => ipv6_multicast_mac(&addr),
        };
        attr.set_roce_dmac(mac);
        stats::resolved(Event::DmacMulticast, dgid.raw(), &mac, attr.hop_limit(), 0);
        return Ok(());
    }
    resolve_unicast(attr)
}

/// Resolves the destination MAC and hop limit of a RoCE address vector
/// towards a unicast GID into `attr` (`ib_resolve_unicast_gid_dmac`); a
/// multicast GID is resolved through the route and neighbour too, as
/// ib_core does for the reply address of a received packet
/// (`ib_init_ah_attr_from_wc`), which alone calls this directly.
///
/// `attr` has a GRH with a referenced source GID entry.
pub(crate) fn resolve_unicast(attr: &mut AhAttr) -> Result {
    let dgid = attr.dgid();
    let sgid_attr = attr.sgid_attr().ok_or(EINVAL)?;
    if dgid.is_link_local() && sgid_attr.gid_type() == GidType::RoceV1 {
        let mac = link_local_mac(&dgid);
        attr.set_roce_dmac(mac);
        stats::resolved(Event::DmacLinkLocal, dgid.raw(), &mac, attr.hop_limit(), 0);
        return Ok(());
    }

    let result = find_l2_eth_by_grh(sgid_attr, &dgid);
    // ib_core sets the hop limit whatever the outcome: 0xff when the
    // resolution failed.
    let hop_limit = match &result {
        Ok(l2) => {
            attr.set_roce_dmac(l2.mac);
            stats::resolved(l2.kind, dgid.raw(), &l2.mac, l2.hop_limit, l2.wait_ns);
            l2.hop_limit
        }
        Err(_) => 0xff,
    };
    attr.set_hop_limit(hop_limit);
    result.map(|_| ())
}

/// The layer-2 destination of a unicast GID.
struct L2 {
    mac: [u8; 6],
    hop_limit: u8,
    kind: Event,
    /// How long the neighbour was waited for, in ns (0 when valid at once).
    wait_ns: u64,
}

/// Resolves the MAC and hop limit towards `dgid` from the netdev of
/// `sgid_attr` (`rdma_addr_find_l2_eth_by_grh`, `rdma_resolve_ip`).
fn find_l2_eth_by_grh(sgid_attr: &GidAttr, dgid: &Gid) -> Result<L2> {
    // `rdma_resolve_ip` may sleep (`fetch_ha` says so with `might_sleep`),
    // and `rdma_addr_find_l2_eth_by_grh` then sleeps for its completion.
    might_sleep();
    let src = sgid_attr.gid().ip();
    let dst = dgid.ip();
    if !src.same_family(&dst) {
        return Err(EINVAL);
    }

    // The fast path: one attempt, with no clock and no generation read.
    match resolve_once(sgid_attr, &src, &dst) {
        Err(e) if e == enodata() => {}
        result => return result,
    }

    // The neighbour is being solicited. The time counts from here (one
    // lookup later than ib_core's request starts, out of 1000 ms). Each
    // attempt reads the generation first, so that an update between a
    // failed attempt and the wait ends the wait at once.
    let start = Instant::<Monotonic>::now();
    let timeout = Delta::from_millis(RESOLVE_TIMEOUT_MS);
    let mut waited = false;
    loop {
        let generation = neighbour::update_generation();
        let result = resolve_once(sgid_attr, &src, &dst);
        let elapsed = start.elapsed();
        match result {
            Ok(mut l2) => {
                // Resolved by the solicitation, not found valid at once.
                if l2.kind == Event::DmacNeighFast {
                    l2.kind = Event::DmacNeighWait;
                    l2.wait_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(0);
                }
                return Ok(l2);
            }
            // As `process_one_req`: once the time is up, any failure is a
            // timeout; before, only "not resolved yet" is waited for.
            Err(_) if waited && elapsed >= timeout => return Err(ETIMEDOUT),
            Err(e) if e != enodata() => return Err(e),
            Err(_) => {}
        }
        if elapsed >= timeout {
            return Err(ETIMEDOUT);
        }
        let left = timeout - elapsed;
        // CAST: At most RETRY_MS, positive.
        let left_ms = left.as_millis().clamp(1, RETRY_MS) as u32;
        waited = true;
        if neighbour::wait_for_update(generation, msecs_to_jiffies(left_ms)) == WaitResult::Killed {
            return Err(ERESTARTSYS);
        }
    }
}

/// One resolution attempt (`addr_resolve` with `resolve_by_gid_attr`).
///
/// Fails with `ENODATA` when the neighbour is not valid yet (after
/// soliciting it).
fn resolve_once(sgid_attr: &GidAttr, src: &IpAddr, dst: &IpAddr) -> Result<L2> {
    let guard = rcu::read_lock();
    let ndev = sgid_attr.ndev_rcu(&guard)?;
    let net = ndev.net(&guard);
    let oif = ndev.ifindex();

    let route = Route::output(&guard, net, oif, 0, src, dst)?;
    let facts = route.facts(&guard);
    let hop_limit = facts.hop_limit;

    // `rdma_set_src_addr_rcu`: a local destination is reached through the
    // device that owns its address, and the MAC is the source's own.
    if facts.is_local {
        let route_net = facts.dev.net(&guard);
        let owned = match dst {
            IpAddr::V4(addr) => route_net.dev_with_ipv4_addr(&guard, *addr),
            IpAddr::V6(addr) => route_net.dev_with_ipv6_addr(&guard, *addr),
        };
        if owned.is_none() {
            return Err(ENODEV);
        }
        // `rdma_translate_ip` with the bound interface: the source netdev.
        let mac = net.dev_by_index(&guard, oif).ok_or(ENODEV)?.mac();
        return Ok(L2 {
            mac,
            hop_limit,
            kind: Event::DmacLocal,
            wait_ns: 0,
        });
    }

    // A gateway on an IPoIB device needs an IB path record (ib_core asks
    // userspace over netlink); RoCE devices never get here.
    if facts.has_gateway && facts.dev.is_infiniband() {
        return Err(eaddrnotavail());
    }

    // `dst_fetch_ha`, with the route (and so its device) still referenced.
    let mac = route.fetch_ha(&guard, dst)?;
    Ok(L2 {
        mac,
        hop_limit,
        kind: Event::DmacNeighFast,
        wait_ns: 0,
    })
}
