// SPDX-License-Identifier: GPL-2.0

//! The address handles of a device: their numbers and address vectors.
//!
//! The soft-RoCE user ABI gives each user AH a number (`ah_num`, from 1)
//! that the provider puts in its work requests. The table is also what
//! `/sys/kernel/debug/rverbs/<dev>/ah` prints.

use crate::rdma::{
    ah_attr::{
        AddressVector,
        AhType, //
    },
    gid::Gid,
};
use core::fmt;
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        Arc,
        SpinLock, //
    },
};

/// The slots of [`AhTable`].
struct Slots {
    /// Slot `n - 1` is AH number `n`.
    slots: KVec<Option<AddressVector>>,
    /// Free slots below `slots.len()`.
    free: KVec<usize>,
    /// Live AHs.
    live: u32,
}

/// The live address handles of a device.
#[pin_data]
pub(crate) struct AhTable {
    max: u32,
    #[pin]
    inner: SpinLock<Slots>,
}

impl AhTable {
    /// An empty table for at most `max` live AHs.
    pub(crate) fn new(max: u32) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                max,
                inner <- new_spinlock!(Slots {
                    slots: KVec::new(),
                    free: KVec::new(),
                    live: 0,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// Adds an AH, returning its number (from 1). `EINVAL` when the table
    /// is full, as soft-RoCE's object pools do. Callable in atomic context.
    pub(crate) fn insert(&self, av: AddressVector) -> Result<u32> {
        let mut t = self.inner.lock();
        if t.live >= self.max {
            return Err(EINVAL);
        }
        let slot = match t.free.pop() {
            Some(slot) => slot,
            None => {
                t.slots.push(None, GFP_ATOMIC)?;
                t.slots.len() - 1
            }
        };
        // Keep room in the free list for every live AH, so that `remove`
        // never allocates.
        let room = t.live as usize + 1;
        if let Err(e) = t.free.reserve(room, GFP_ATOMIC) {
            t.free.push_within_capacity(slot).ok();
            return Err(e.into());
        }
        t.slots[slot] = Some(av);
        t.live += 1;
        // CAST: `slot` < `max` + 1 fits `u32`.
        Ok(slot as u32 + 1)
    }

    /// Removes AH number `num`.
    pub(crate) fn remove(&self, num: u32) {
        let mut t = self.inner.lock();
        let slot = num as usize - 1;
        if let Some(entry) = t.slots.get_mut(slot) {
            if entry.take().is_some() {
                t.live -= 1;
                // `insert` reserved room for it.
                t.free.push_within_capacity(slot).ok();
            }
        }
    }

    /// The address vector of AH number `num`.
    pub(crate) fn get(&self, num: u32) -> Option<AddressVector> {
        let t = self.inner.lock();
        t.slots.get(num as usize - 1).copied().flatten()
    }

    /// Replaces the address vector of AH number `num`.
    pub(crate) fn set(&self, num: u32, av: AddressVector) {
        let mut t = self.inner.lock();
        if let Some(Some(entry)) = t.slots.get_mut(num as usize - 1) {
            *entry = av;
        }
    }

    /// The number of live AHs.
    pub(crate) fn live(&self) -> u32 {
        self.inner.lock().live
    }
}

/// A GID as the sysfs `gids` files print it (eight groups of 4 hex digits).
struct GidText(Gid);

impl fmt::Display for GidText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.raw().chunks(2).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{:02x}{:02x}", pair[0], pair[1])?;
        }
        Ok(())
    }
}

fn type_name(t: AhType) -> &'static str {
    match t {
        AhType::Undefined => "undefined",
        AhType::Ib => "ib",
        AhType::Roce => "roce",
        AhType::Opa => "opa",
        AhType::Unknown(_) => "unknown",
    }
}

/// The debugfs dump: one line per live AH, by number.
impl fmt::Debug for AhTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Copy under the lock, print without it (printing may sleep).
        let mut copy = KVec::new();
        {
            let t = self.inner.lock();
            if copy.reserve(t.live as usize, GFP_ATOMIC).is_err() {
                return Err(fmt::Error);
            }
            for (i, av) in t.slots.iter().enumerate() {
                if let Some(av) = av {
                    copy.push_within_capacity((i + 1, *av)).ok();
                }
            }
        }
        write!(
            f,
            "# ah_num type port sgid_index dgid dmac hop_limit flow_label traffic_class sl"
        )?;
        for (num, av) in copy.iter() {
            let m = av.dmac;
            write!(
                f,
                "\n{} {} {} {} {} {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} {} {:#x} {} {}",
                num,
                type_name(av.ah_type),
                av.port_num,
                av.sgid_index,
                GidText(av.dgid),
                m[0],
                m[1],
                m[2],
                m[3],
                m[4],
                m[5],
                av.hop_limit,
                av.flow_label,
                av.traffic_class,
                av.sl
            )?;
        }
        Ok(())
    }
}
