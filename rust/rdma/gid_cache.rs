// SPDX-License-Identifier: GPL-2.0

//! A driver's own copy of its RoCE port's GID table, read without a lock.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//! (`ib_device_ops.add_gid`, `del_gid`)
//!
//! ib_core's table (`cache.c`) is read under a reader-writer lock taken
//! with interrupts off, and every lookup takes and drops a reference on the
//! entry: `rdma_get_gid_attr` for each send, `rdma_find_gid_by_port` for
//! each receive, as soft-RoCE does them. A driver that implements `add_gid`
//! and `del_gid` (as hardware drivers do to program their tables) is told
//! of every entry of a RoCE port as ib_core adds and deletes it, in process
//! context under the table's mutex; [`GidCache`] keeps those entries in an
//! [`RcuTable`], where the data path finds them under RCU, taking no lock
//! and writing no shared cache line.
//!
//! ib_core calls `add_gid` just before it publishes an entry and `del_gid`
//! just after it marked the entry deleted, so the copy holds an entry from
//! a moment before ib_core's lookups find it until a moment after they
//! stop: a packet sent or received in that window sees the GID as one that
//! was in flight when it changed would.

use crate::{
    net::device::{
        NetDevice,
        TrackedNetDevice, //
    },
    rdma::{
        gid::Gid,
        gid_attr::{
            GidAttr,
            GidType, //
        },
        table::RcuTable,
    },
};
use core::fmt;
use kernel::{
    prelude::*,
    sync::{
        rcu,
        Arc, //
    },
};

/// What a [`GidCache`] keeps of a GID table entry.
pub(crate) struct CachedGid {
    gid: Gid,
    gid_type: GidType,
    /// The entry's netdev (a VLAN device for a GID of a VLAN address),
    /// referenced (with a tracker, which names the holder should the
    /// netdev's unregistration wait for it) until the entry leaves the
    /// cache and no reader can see it.
    ndev: TrackedNetDevice,
}

impl CachedGid {
    /// The GID.
    pub(crate) fn gid(&self) -> Gid {
        self.gid
    }

    /// The type of the entry.
    pub(crate) fn gid_type(&self) -> GidType {
        self.gid_type
    }

    /// The entry's netdev.
    pub(crate) fn ndev(&self) -> &NetDevice {
        &self.ndev
    }
}

/// The GID table entries of one RoCE port, as ib_core adds them
/// ([`GidCache::add`], from `add_gid`) and deletes them
/// ([`GidCache::del`], from `del_gid`), by index.
#[pin_data]
pub(crate) struct GidCache {
    #[pin]
    entries: RcuTable<CachedGid>,
    /// The size of the port's table (`gid_tbl_len`).
    len: u32,
}

impl GidCache {
    /// An empty cache for a table of `len` entries.
    pub(crate) fn new(len: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            entries <- RcuTable::new(),
            len,
        })
    }

    /// Copies the entry ib_core is adding (`add_gid`: process context,
    /// the entry and `ndev`, its netdev, valid for the call). `EINVAL` for
    /// an index past the table, `ENOMEM`.
    pub(crate) fn add(&self, attr: &GidAttr, ndev: &NetDevice) -> Result {
        let index = attr.index();
        if index >= self.len {
            return Err(EINVAL);
        }
        let ndev = TrackedNetDevice::new(ndev);
        let entry = Arc::new(
            CachedGid {
                gid: attr.gid(),
                gid_type: attr.gid_type(),
                ndev,
            },
            GFP_KERNEL,
        )?;
        // ib_core deletes an entry before it adds another at its index;
        // should one still be there, the new one takes its place.
        drop(self.entries.replace(index, entry)?);
        Ok(())
    }

    /// Forgets the entry ib_core is deleting (`del_gid`: process context);
    /// its netdev reference goes a grace period later.
    pub(crate) fn del(&self, attr: &GidAttr) {
        self.entries.remove(attr.index());
    }

    /// Entry `index`, for as long as the read-side critical section of
    /// `guard` lasts. Any context.
    pub(crate) fn get<'a>(&'a self, guard: &'a rcu::Guard, index: u32) -> Option<&'a CachedGid> {
        self.entries.get(guard, index)
    }

    /// Whether the port has `gid` as a RoCE v2 entry of `ndev`, as
    /// `rdma_find_gid_by_port` finds it with that type and netdev. Any
    /// context.
    pub(crate) fn has_roce_v2(&self, guard: &rcu::Guard, gid: &Gid, ndev: &NetDevice) -> bool {
        (0..self.len).any(|i| {
            self.entries.get(guard, i).is_some_and(|e| {
                e.gid_type == GidType::RoceV2
                    && e.gid == *gid
                    && core::ptr::eq::<NetDevice>(&*e.ndev, ndev)
            })
        })
    }

    /// The cache as text, one line per entry by index: `index gid type
    /// ifindex`, the GID as sysfs prints it (eight groups of four hex
    /// digits), the type as sysfs' `gid_attrs/types` prints it (`IB/RoCE
    /// v1` or `RoCE v2`), the netdev by its interface index. Each entry is
    /// read under RCU; entries added or deleted meanwhile may or may not
    /// show.
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in 0..self.len {
            let entry = {
                let guard = rcu::read_lock();
                self.get(&guard, i)
                    .map(|e| (e.gid, e.gid_type, e.ndev.ifindex()))
            };
            let Some((gid, gid_type, ifindex)) = entry else {
                continue;
            };
            write!(f, "{i} ")?;
            for (n, pair) in gid.raw().chunks(2).enumerate() {
                if n > 0 {
                    f.write_str(":")?;
                }
                write!(f, "{:02x}{:02x}", pair[0], pair[1])?;
            }
            let name = match gid_type {
                // `enum ib_gid_type` has one value for both.
                GidType::Ib | GidType::RoceV1 => "IB/RoCE v1",
                GidType::RoceV2 => "RoCE v2",
            };
            writeln!(f, " {name} {ifindex}")?;
        }
        Ok(())
    }
}
