// SPDX-License-Identifier: GPL-2.0

//! Sending a packet of rv0 (`rxe_net.c:rxe_send`, `rxe_loopback`): built
//! as the wire carries it, its payload gathered straight into it, then
//! handed to the IP layer along the source's route, or received by this
//! device at once when it is for the device's own address.

use super::{
    datapath,
    device::Rv,
    qp::QpCore,
    tx::TxFlow,
    wire::{
        self,
        Count,
        Outgoing, //
    },
};
use crate::net::{
    device::NetDevice,
    route::Route,
    skb::SkBuff, //
    IpAddr,
};
use crate::rdma::{
    ah_attr::AddressVector,
    driver::DriverDevice,
    wc::WcStatus, //
};
use kernel::sync::{
    aref::ARef,
    rcu, //
};

/// Where the packets of a connected QP with path `av` go from and how:
/// the source address and netdev ([`datapath::source`]), then to the
/// device's own MAC through the loopback, else through the IP layer
/// (`atomic`: built where nothing may sleep).
pub(crate) fn route(
    dev: &DriverDevice<Rv>,
    av: &AddressVector,
    atomic: bool,
) -> core::result::Result<(IpAddr, ARef<NetDevice>, Via), WcStatus> {
    let (src, ndev) = datapath::source(dev, av)?;
    let own_mac = {
        let guard = rcu::read_lock();
        dev.netdev_rcu(&guard).map(|n| n.mac())
    };
    let via = match (own_mac == Some(av.dmac), atomic) {
        (true, _) => Via::Loopback,
        (false, true) => Via::IpAtomic,
        (false, false) => Via::Ip,
    };
    Ok((src, ndev, via))
}

/// How a packet is sent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// Through the IP layer, from process context.
    Ip,
    /// Through the IP layer, from any context (allocating atomically).
    IpAtomic,
    /// To this device's own address: received here at once.
    Loopback,
}

/// Sends a packet of `qp` through the IP layer (or, [`Via::Loopback`], to
/// this device), along the route from the
/// source address out of `ndev`, the source GID's netdev
/// (`rxe_net.c:prepare4`, `prepare6`, `rxe_send`), its payload put in
/// place by `gather`: no route, no memory, a payload the memory regions
/// refuse (`gather`'s status), or a packet the IP layer did not take (a
/// negative error), and the send completes with `IB_WC_LOC_QP_OP_ERR`
/// (`rxe_req.c:rxe_requester`). A
/// packet the IP layer took and a qdisc then dropped (`NET_XMIT_DROP`, or
/// `NET_XMIT_CN`: dropped packets of its class) is a datagram lost on the
/// way: the send completes, as a UDP socket's does (without `IP_RECVERR`,
/// `udp_send_skb`), counted as `send_dropped`; soft-RoCE 7.2 fails the QP
/// there instead.
pub(crate) fn transmit(
    dev: &DriverDevice<Rv>,
    qp: &QpCore,
    ndev: &NetDevice,
    out: &Outgoing,
    via: Via,
    gather: impl FnOnce(&mut [u8]) -> core::result::Result<usize, WcStatus>,
) -> core::result::Result<(), WcStatus> {
    let counters = dev.wire_counters();
    if via == Via::Loopback {
        // Built as for the wire, then received here (`rxe_net.c:rxe_loopback`).
        let Ok(mut skb) = SkBuff::alloc_tx_atomic(ndev, out.len()) else {
            counters.count(Count::SendError);
            return Err(WcStatus::LocQpOpErr);
        };
        let data = skb.data_mut();
        out.write_headers(data);
        if gather(&mut data[out.payload_range()])? != out.payload_len {
            return Err(WcStatus::LocQpOpErr);
        }
        out.seal(data);
        counters.count(Count::Sent);
        super::receive::local(dev, data);
        skb.consume();
        return Ok(());
    }
    let route = if qp.qp_type.connected() {
        path_route(qp, ndev, out)
    } else {
        lookup(ndev, out)
    };
    let Ok(route) = route else {
        counters.count(Count::SendError);
        return Err(WcStatus::LocQpOpErr);
    };
    let skb = match via {
        Via::IpAtomic => SkBuff::alloc_tx_atomic(ndev, out.len()),
        _ => SkBuff::alloc_tx(ndev, out.len()),
    };
    let Ok(mut skb) = skb else {
        counters.count(Count::SendError);
        return Err(WcStatus::LocQpOpErr);
    };
    let data = skb.data_mut();
    out.write_headers(data);
    // The payload's one copy: from the memory regions into the packet. A
    // request the regions refuse frees the packet unsent.
    if gather(&mut data[out.payload_range()])? != out.payload_len {
        return Err(WcStatus::LocQpOpErr);
    }
    out.seal(data);
    TxFlow::attach(&qp.tx, &mut skb);
    // CAST: 20 or 40.
    match skb.ip_local_out(route, out.is_ipv6(), out.ip_header_len() as u32) {
        Ok(()) => {
            counters.count(Count::Sent);
            Ok(())
        }
        Err(ret) if ret > 0 => {
            counters.count(Count::SendDropped);
            Ok(())
        }
        Err(_) => {
            counters.count(Count::SendError);
            Err(WcStatus::LocQpOpErr)
        }
    }
}

/// The route of a connected QP's path, kept between its packets as
/// soft-RoCE keeps an RC QP's in the QP's socket (`rxe_net.c:rxe_find_route`):
/// used for as long as it holds (`dst_check`: no change of routes,
/// addresses or devices since) and the path is the same (source, destination,
/// source netdev); else looked up again and kept in its place. Dropped with
/// the QP.
pub(crate) struct KeptRoute {
    route: Route,
    cookie: u32,
    oif: i32,
    src: IpAddr,
    dst: IpAddr,
}

/// The output route of a packet from `out.src` to `out.dst` out of `ndev`
/// (UDP, for IPsec policies and `ipproto` rules, as soft-RoCE).
fn lookup(ndev: &NetDevice, out: &Outgoing) -> kernel::error::Result<Route> {
    let guard = rcu::read_lock();
    Route::output(
        &guard,
        ndev.net(&guard),
        ndev.ifindex(),
        wire::IPPROTO_UDP,
        &out.src,
        &out.dst,
    )
}

/// The route of a packet of `qp`, a connected QP: its [`KeptRoute`] if it
/// still holds, else a new lookup, then kept. Any context.
fn path_route(qp: &QpCore, ndev: &NetDevice, out: &Outgoing) -> kernel::error::Result<Route> {
    let oif = ndev.ifindex();
    {
        let kept = qp.route.lock();
        if let Some(k) = kept.as_ref() {
            if k.oif == oif && k.src == out.src && k.dst == out.dst && k.route.holds(k.cookie) {
                return Ok(k.route.clone());
            }
        }
    }
    let route = lookup(ndev, out)?;
    let new = KeptRoute {
        route: route.clone(),
        cookie: route.cookie(),
        oif,
        src: out.src,
        dst: out.dst,
    };
    // The route it replaces is released after the lock.
    let old = qp.route.lock().replace(new);
    drop(old);
    Ok(route)
}
