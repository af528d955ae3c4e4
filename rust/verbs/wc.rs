// SPDX-License-Identifier: GPL-2.0

//! The reply address of a received packet: `ib_init_ah_attr_from_wc`.
//!
//! ib_core's MAD layer and connection manager answer a received packet
//! (a MAD, a CM REQ) through an address vector made from its work
//! completion and its GRH: the packet's source GID becomes the
//! destination, and the local GID entry that the packet was sent to
//! becomes the source. On RoCE the destination MAC and hop limit are then
//! resolved as for any unicast address vector ([`dmac::resolve_unicast`]).
//!
//! The 40 bytes before a received UD payload are the packet's network
//! header: an IB GRH or a RoCE v2 IPv6 header (the same layout), or a
//! RoCE v2 IPv4 header in their last 20 bytes
//! (`union rdma_network_hdr`).

use super::{
    dmac,
    stats, //
};
use crate::errno::eprototype;
use crate::rdma::{
    ah_attr::AhAttr,
    device::Device,
    gid::Gid,
    gid_attr::{
        GidAttr,
        GidType, //
    },
    wc::{
        Wc,
        WcFlag, //
    },
};
use kernel::{
    prelude::*,
    sync::aref::ARef,
    task::might_sleep, //
};

/// The length of a GRH, and of the network header buffer before a UD
/// payload.
pub(crate) const GRH_LEN: usize = 40;

/// Where an IPv4 header sits in the network header buffer: its last 20
/// bytes.
const IPV4_AT: usize = 20;

/// `IPPROTO_UDP`, the next header of a RoCE v2 IPv6 packet.
const IPPROTO_UDP: u8 = 17;

/// The interface ID of the SA's well-known GID (`IB_SA_WELL_KNOWN_GUID`).
const SA_WELL_KNOWN_GUID: u64 = (1 << 57) | 2;

/// The network type of a received packet (`enum rdma_network_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NetType {
    /// InfiniBand: a GRH.
    Ib,
    /// RoCE v1: a GRH over Ethernet.
    RoceV1,
    /// RoCE v2 over IPv4.
    Ipv4,
    /// RoCE v2 over IPv6.
    Ipv6,
    /// A value ib_core has no type for (from a driver's completion).
    Unknown,
}

impl NetType {
    /// The type of a raw `enum rdma_network_type` value.
    fn from_raw(raw: u8) -> Self {
        match raw {
            0 => NetType::Ib,
            1 => NetType::RoceV1,
            2 => NetType::Ipv4,
            3 => NetType::Ipv6,
            _ => NetType::Unknown,
        }
    }

    /// The GID type of a network type (`ib_network_to_gid_type`).
    fn gid_type(self) -> GidType {
        match self {
            NetType::Ipv4 | NetType::Ipv6 => GidType::RoceV2,
            NetType::RoceV1 => GidType::RoceV1,
            NetType::Ib | NetType::Unknown => GidType::Ib,
        }
    }
}

/// The IP version of a network header (`ib_get_rdma_header_version`): 4,
/// 6, or 0 for neither.
///
/// A buffer that starts with an IPv6 version nibble may still hold an IPv4
/// header in its last 20 bytes (their first 20 are not written then): it
/// is taken as IPv4 when that header has no options and a right checksum.
fn header_version(hdr: &[u8; GRH_LEN]) -> u8 {
    let ip4 = &hdr[IPV4_AT..];
    if hdr[0] >> 4 != 6 {
        return if ip4[0] >> 4 == 4 { 4 } else { 0 };
    }
    if ip4[0] & 0xf != 5 {
        return 6;
    }
    let mut copy = [0u8; GRH_LEN - IPV4_AT];
    copy.copy_from_slice(ip4);
    copy[10] = 0;
    copy[11] = 0;
    if u16::from_be_bytes([ip4[10], ip4[11]]) == ipv4_header_checksum(&copy) {
        4
    } else {
        6
    }
}

/// The checksum of an IPv4 header whose checksum field is 0
/// (`ip_fast_csum`): the complement of the ones' complement sum of its
/// 16-bit words.
fn ipv4_header_checksum(h: &[u8]) -> u16 {
    let mut sum = h.chunks(2).fold(0u32, |s, w| {
        s + u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))
    });
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    // CAST: Folded to 16 bits above.
    !(sum as u16)
}

/// The network type of a packet on a RoCE port from its header
/// (`ib_get_net_type_by_grh`): IPv4 by [`header_version`], else IPv6 when
/// the next header is UDP, else RoCE v1.
fn net_type_by_grh(hdr: &[u8; GRH_LEN]) -> NetType {
    if header_version(hdr) == 4 {
        NetType::Ipv4
    } else if hdr[6] == IPPROTO_UDP {
        NetType::Ipv6
    } else {
        NetType::RoceV1
    }
}

/// The source and destination GIDs of a network header
/// (`ib_get_gids_from_rdma_hdr`): IPv4 addresses mapped into IPv6, or the
/// GRH's GIDs. `EINVAL` for an unknown network type.
fn gids_from_hdr(hdr: &[u8; GRH_LEN], net_type: NetType) -> Result<(Gid, Gid)> {
    let gid = |at: usize, len: usize| {
        let mut raw = [0u8; 16];
        if len == 4 {
            raw[10] = 0xff;
            raw[11] = 0xff;
        }
        raw[16 - len..].copy_from_slice(&hdr[at..at + len]);
        Gid::new(raw)
    };
    match net_type {
        // saddr and daddr of the IPv4 header.
        NetType::Ipv4 => Ok((gid(IPV4_AT + 12, 4), gid(IPV4_AT + 16, 4))),
        // sgid and dgid of the GRH.
        NetType::Ipv6 | NetType::Ib | NetType::RoceV1 => Ok((gid(8, 16), gid(24, 16))),
        NetType::Unknown => Err(EINVAL),
    }
}

/// The local GID entry a RoCE packet was sent to (`get_sgid_attr_from_eth`
/// of verbs.c): the valid entry of `port` with the lowest index that holds
/// `gid` with type `gid_type` on a netdev of VLAN `vlan_id` (0xffff: none).
/// `EINVAL` for a bad port, `ENOENT` when no entry matches.
///
/// ib_core walks the table under its lock with a filter
/// (`rdma_find_gid_by_filter`, which it does not export). The same
/// entry is found here by the exported lookup of the lowest entry with the
/// GID and type; only when that entry's VLAN differs (the same link-local
/// GID on a netdev and on its VLAN device) are the later entries read one
/// by one. Unlike C's single lock hold, that walk is not atomic against
/// the table changing under it, which only a GID added or removed at the
/// same moment can see.
fn sgid_attr_from_eth(
    device: &Device,
    port: u32,
    vlan_id: u16,
    gid: &Gid,
    gid_type: GidType,
) -> Result<ARef<GidAttr>> {
    if !device.is_port_valid(port) {
        return Err(EINVAL);
    }
    let first = GidAttr::find_by_port(device, gid, gid_type, port)?;
    if first.vlan_id().ok() == Some(vlan_id) {
        return Ok(first);
    }
    for index in first.index() + 1..device.gid_table_len(port) {
        // An empty or invalid entry (`ENODATA`) is skipped as C skips it.
        let Ok(entry) = GidAttr::get(device, port, index) else {
            continue;
        };
        if entry.gid() == *gid
            && entry.gid_type() == gid_type
            && entry.vlan_id().ok() == Some(vlan_id)
        {
            return Ok(entry);
        }
    }
    Err(ENOENT)
}

/// Initialises `attr` as the reply address of a packet received on `port`
/// with completion `wc` and network header `hdr`
/// (`ib_init_ah_attr_from_wc`).
///
/// `attr` starts zeroed (the caller's out-parameter). On success it holds
/// a reference to its source GID entry (given back by the caller with
/// `rdma_destroy_ah_attr`). On error the fields written so far stay, as
/// in C, but no reference: the errors are ib_core's, in its order, and
/// `EINVAL` for a port the device does not have (where C would read past
/// its port array).
pub(crate) fn init_ah_attr_from_wc(
    device: &Device,
    port: u32,
    wc: &Wc,
    hdr: &[u8; GRH_LEN],
    attr: &mut AhAttr,
) -> Result {
    // Counted (and traced) by the entry point as it returns.
    stats::counted(init(device, port, wc, hdr, attr))
}

/// [`init_ah_attr_from_wc`], its errors not counted yet.
fn init(device: &Device, port: u32, wc: &Wc, hdr: &[u8; GRH_LEN], attr: &mut AhAttr) -> Result {
    might_sleep();
    if !device.is_port_valid(port) {
        return Err(EINVAL);
    }
    attr.set_ah_type(device.ah_type(port));
    let mut net_type = NetType::Ib;
    let mut gid_type = GidType::Ib;
    if device.has_eth_ah(port) {
        net_type = if wc.has_flag(WcFlag::WithNetworkHdrType) {
            NetType::from_raw(wc.network_hdr_type())
        } else if device.is_ib(port) {
            // `ib_get_net_type_by_grh` on an IB port.
            NetType::Ib
        } else {
            net_type_by_grh(hdr)
        };
        gid_type = net_type.gid_type();
    }
    // The packet's source is the reply's destination; the GID it was sent
    // to is the reply's source.
    let (sgid, dgid) = gids_from_hdr(hdr, net_type)?;

    attr.set_sl(wc.sl());
    attr.set_port_num(port);

    // The first word of a GRH or IPv6 header: version, traffic class and
    // flow label.
    let flow_class = u32::from_be_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
    let flow_label = flow_class & 0xf_ffff;
    // CAST: Eight bits.
    let traffic_class = ((flow_class >> 20) & 0xff) as u8;

    if device.is_roce(port) {
        let vlan_id = if wc.has_flag(WcFlag::WithVlan) {
            wc.vlan_id()
        } else {
            0xffff
        };
        if !wc.has_flag(WcFlag::Grh) {
            return Err(eprototype());
        }
        let sgid_attr = sgid_attr_from_eth(device, port, vlan_id, &dgid, gid_type)?;
        attr.move_grh_sgid_attr(&sgid, flow_label, 0xff, traffic_class, sgid_attr);
        let result = dmac::resolve_unicast(attr);
        if result.is_err() {
            // `rdma_destroy_ah_attr`: the reference goes, the rest stays.
            drop(attr.take_sgid_attr());
        }
        return result;
    }

    attr.set_dlid(wc.slid());
    attr.set_path_bits(wc.dlid_path_bits());
    if !wc.has_flag(WcFlag::Grh) {
        return Ok(());
    }
    let interface_id = u64::from_be_bytes(dgid.raw()[8..].try_into().unwrap_or([0; 8]));
    let sgid_attr = if interface_id != SA_WELL_KNOWN_GUID {
        GidAttr::find_by_port(device, &dgid, GidType::Ib, port)?
    } else {
        GidAttr::get(device, port, 0)?
    };
    attr.move_grh_sgid_attr(&sgid, flow_label, 0xff, traffic_class, sgid_attr);
    Ok(())
}
