// SPDX-License-Identifier: GPL-2.0

//! What a driver reports about its device and ports: the values of
//! `query_device`, `query_port` and `get_port_immutable`.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;

/// The state of a port (`enum ib_port_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortState {
    /// The link is down.
    Down,
    /// The link is up and the port can pass traffic.
    Active,
}

/// The physical state of a port (`enum ib_port_phys_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhysState {
    /// Administratively down.
    Disabled,
    /// Up, looking for a link partner.
    Polling,
    /// The link is up.
    LinkUp,
}

/// An IBTA MTU (`enum ib_mtu`), the largest that fits an Ethernet MTU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl Mtu {
    /// The MTU in bytes.
    pub(crate) fn bytes(self) -> usize {
        128 << (self as usize)
    }

    /// The largest IBTA MTU of at most `bytes` of payload, at least 256.
    /// What a netdev MTU leaves for the payload is the driver's to say (the
    /// headers it keeps room for: `iboe_get_mtu`'s 96 bytes, soft-RoCE's
    /// 80).
    pub(crate) fn at_most(bytes: u32) -> Mtu {
        match bytes {
            4096.. => Mtu::Mtu4096,
            2048.. => Mtu::Mtu2048,
            1024.. => Mtu::Mtu1024,
            512.. => Mtu::Mtu512,
            _ => Mtu::Mtu256,
        }
    }
}

/// The link layer of a port (`enum rdma_link_layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkLayer {
    /// RoCE: the port is an Ethernet netdev.
    Ethernet,
}

/// What `query_device` reports. Fields not here are reported as 0.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceAttrs {
    /// Firmware version.
    pub(crate) fw_ver: u64,
    /// System image GUID (big endian on the wire, as `node_guid`).
    pub(crate) sys_image_guid: u64,
    /// IEEE vendor id.
    pub(crate) vendor_id: u32,
    /// Vendor part id.
    pub(crate) vendor_part_id: u32,
    /// Hardware version.
    pub(crate) hw_ver: u32,
    /// Supported page sizes (bit mask).
    pub(crate) page_size_cap: u64,
    /// Largest number of protection domains.
    pub(crate) max_pd: u32,
    /// Largest number of address handles.
    pub(crate) max_ah: u32,
    /// Largest number of completion queues.
    pub(crate) max_cq: u32,
    /// Largest depth of a completion queue.
    pub(crate) max_cqe: u32,
    /// Largest number of queue pairs.
    pub(crate) max_qp: u32,
    /// Largest number of work requests in a queue of a QP.
    pub(crate) max_qp_wr: u32,
    /// Largest number of scatter/gather entries of a work request (sends
    /// and receives alike).
    pub(crate) max_sge: u32,
    /// Most memory regions (`max_mr`).
    pub(crate) max_mr: u32,
    /// The largest memory region, in bytes (`max_mr_size`).
    pub(crate) max_mr_size: u64,
    /// RDMA READs and atomics in flight per QP, as requester and as
    /// responder (`max_qp_init_rd_atom`, `max_qp_rd_atom`), and for the
    /// whole device as responder (`max_res_rd_atom`).
    pub(crate) max_qp_rd_atom: u8,
    pub(crate) max_res_rd_atom: u32,
    /// Whether RDMA atomics are atomic among the device's QPs
    /// (`atomic_cap` `IB_ATOMIC_HCA`; else `IB_ATOMIC_NONE`).
    pub(crate) atomic_hca: bool,
    /// Most shared receive queues (`max_srq`; 0: none, and no
    /// `IB_DEVICE_SRQ_RESIZE`), their depth and scatter/gather entries.
    pub(crate) max_srq: u32,
    pub(crate) max_srq_wr: u32,
    pub(crate) max_srq_sge: u32,
    /// Most memory windows (`max_mw`; 0: none, else type 1 and type 2B
    /// windows, `IB_DEVICE_MEM_WINDOW` and `IB_DEVICE_MEM_WINDOW_TYPE_2B`).
    pub(crate) max_mw: u32,
    /// Whether RDMA FLUSH of global visibility is supported
    /// (`IB_DEVICE_FLUSH_GLOBAL`: regions may then be registered with
    /// `IB_ACCESS_FLUSH_GLOBAL`).
    pub(crate) flush_global: bool,
    /// Number of partition keys.
    pub(crate) max_pkeys: u16,
    /// Whether XRC domains are supported (`IB_DEVICE_XRC`).
    pub(crate) xrc: bool,
    /// Whether `rdma link del` may remove the device
    /// (`IBK_ALLOW_USER_UNREG`).
    pub(crate) allow_user_unreg: bool,
    /// Whether kernel PDs use `device.local_dma_lkey` instead of a DMA MR
    /// (`IBK_LOCAL_DMA_LKEY`).
    pub(crate) local_dma_lkey: bool,
}

/// What `query_port` reports. Fields not here are reported as 0.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortAttrs {
    /// Logical state.
    pub(crate) state: PortState,
    /// Physical state.
    pub(crate) phys_state: PhysState,
    /// Largest MTU.
    pub(crate) max_mtu: Mtu,
    /// MTU in use.
    pub(crate) active_mtu: Mtu,
    /// MTU of the netdev, in bytes.
    pub(crate) phys_mtu: u32,
    /// Entries of the GID table.
    pub(crate) gid_tbl_len: u32,
    /// Entries of the P_Key table.
    pub(crate) pkey_tbl_len: u16,
    /// Largest message, in bytes.
    pub(crate) max_msg_sz: u32,
    /// PortInfo CapabilityMask (`IB_PORT_*`).
    pub(crate) port_cap_flags: u32,
    /// Speed (`enum ib_port_speed`).
    pub(crate) active_speed: u16,
    /// Width (`enum ib_port_width`).
    pub(crate) active_width: u8,
}

/// `IB_SPEED_SDR`: the slowest speed (2.5 Gb/s per lane).
// CAST: A small enumerator.
pub(crate) const SPEED_SDR: u16 = bindings::ib_port_speed_IB_SPEED_SDR as u16;

/// `IB_WIDTH_1X`: one lane.
// CAST: A small enumerator.
pub(crate) const WIDTH_1X: u8 = bindings::ib_port_width_IB_WIDTH_1X as u8;

/// The port's immutable data (`struct ib_port_immutable`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortImmutable {
    /// Entries of the P_Key table.
    pub(crate) pkey_tbl_len: u32,
    /// Entries of the GID table.
    pub(crate) gid_tbl_len: u32,
    /// Protocols of the port (`RDMA_CORE_PORT_*`).
    pub(crate) core_cap_flags: u32,
    /// Largest MAD (`IB_MGMT_MAD_SIZE`; 0 without the MAD capability).
    pub(crate) max_mad_size: u32,
}

/// The protocols of a RoCE port that has no QPs: RoCE v1 and v2 address
/// handles and GIDs (`RDMA_CORE_CAP_PROT_ROCE`,
/// `RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP`, `RDMA_CORE_CAP_ETH_AH`), so that
/// ib_core's GID management adds both GID types, without the MAD and CM
/// capabilities of `RDMA_CORE_PORT_IBA_ROCE*` (their agents need QP1).
pub(crate) const PORT_ROCE_V1_V2_NO_MAD: u32 = bindings::RDMA_CORE_CAP_PROT_ROCE
    | bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP
    | bindings::RDMA_CORE_CAP_ETH_AH;

/// The protocols of a RoCE v2 port without MADs: as
/// [`PORT_ROCE_V1_V2_NO_MAD`] less `RDMA_CORE_CAP_PROT_ROCE`, so that ib_core
/// adds RoCE v2 GIDs only (soft-RoCE's table, whose
/// `RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP` has the same protocol bits).
pub(crate) const PORT_ROCE_V2_NO_MAD: u32 =
    bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP | bindings::RDMA_CORE_CAP_ETH_AH;
