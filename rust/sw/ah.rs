// SPDX-License-Identifier: GPL-2.0

//! The address handles of a device: their numbers and address vectors.
//!
//! The soft-RoCE user ABI gives each user AH a number (`ah_num`, from 1)
//! that the provider puts in its work requests. The table is also what
//! `/sys/kernel/debug/rverbs/<dev>/ah` prints.

use super::ids::Ids;
use crate::rdma::{
    ah_attr::{
        AddressVector,
        AhType, //
    },
    gid::Gid,
};
use core::fmt;
use kernel::{
    debugfs::Writer,
    prelude::*,
    xarray::{
        AllocKind,
        XArray, //
    },
};

/// AHs copied per lock hold by the debugfs dump.
const DUMP_BATCH: usize = 16;

/// The live address handles of a device.
///
/// Numbers come from [`Ids`], cyclically from 1 as soft-RoCE's AH pool
/// gives them (`xa_alloc_cyclic`): the search for a free number starts
/// after the last one given, so its cost does not grow with the live AHs
/// (the lowest free number is a bitmap scan from 0 on every create). The
/// address vectors are in an [`XArray`] indexed by AH number, one small
/// allocation per AH. Nothing large is ever allocated or freed under a
/// spinlock, and nothing is allocated with more than the caller's `gfp`:
/// the table is used in atomic context when the AH is not `sleepable`. The
/// two locks are never held together.
///
/// A number is taken before its vector is stored and given back after it
/// is removed, so a number in the array is always taken in the pool.
#[pin_data]
pub(crate) struct AhTable {
    /// The AH numbers taken, from 1 to `max`, at most `max` at once.
    #[pin]
    numbers: Ids,
    /// The address vector and PD of each live AH, at its number.
    #[pin]
    avs: XArray<KBox<AhEntry>>,
}

/// What the table keeps of an AH.
struct AhEntry {
    av: AddressVector,
    /// Its PD ([`super::device::SwPd::id`]): a QP sends only with the AHs
    /// of its own PD (`rxe_av.c:rxe_get_av`).
    pd: u64,
}

/// The `XArray` index of AH number `num`.
fn index(num: u32) -> usize {
    // CAST: `usize` is at least 32 bits wide on every architecture the
    // kernel's Rust support builds for.
    num as usize
}

impl AhTable {
    /// An empty table for at most `max` live AHs, initialised in place.
    pub(crate) fn new(max: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            numbers <- Ids::new(1, max, max),
            avs <- XArray::new(AllocKind::Alloc1),
        })
    }

    /// Adds an AH, returning its number (from 1). `EINVAL` when the table
    /// is full, as soft-RoCE's object pools do. Allocates with `GFP_KERNEL`
    /// when `sleepable`, else `GFP_ATOMIC`.
    pub(crate) fn insert(&self, av: AddressVector, pd: u64, sleepable: bool) -> Result<u32> {
        let gfp = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
        let num = self.numbers.take(gfp)?;
        let entry = match KBox::new(AhEntry { av, pd }, gfp) {
            Ok(entry) => entry,
            Err(e) => {
                self.numbers.put(num);
                return Err(e.into());
            }
        };
        // The array may allocate its nodes (small) with `gfp`; with
        // `GFP_KERNEL` it drops its lock to do so.
        let stored = self.avs.lock().store(index(num), entry, gfp);
        match stored {
            // The number was free, so was its slot: no old entry.
            Ok(_) => Ok(num),
            Err(e) => {
                self.numbers.put(num);
                Err(e.into())
            }
        }
    }

    /// Removes AH number `num`.
    pub(crate) fn remove(&self, num: u32) {
        // Freed after the lock is released, at the end of the function.
        let removed = self.avs.lock().remove(index(num));
        if removed.is_some() {
            self.numbers.put(num);
        }
    }

    /// The address vector of AH number `num`.
    pub(crate) fn get(&self, num: u32) -> Option<AddressVector> {
        self.avs.lock().get(index(num)).map(|e| e.av)
    }

    /// The address vector and the PD of AH number `num`.
    pub(crate) fn get_with_pd(&self, num: u32) -> Option<(AddressVector, u64)> {
        self.avs.lock().get(index(num)).map(|e| (e.av, e.pd))
    }

    /// Replaces the address vector of AH number `num`.
    pub(crate) fn set(&self, num: u32, av: AddressVector) {
        if let Some(entry) = self.avs.lock().get_mut(index(num)) {
            entry.av = av;
        }
    }

    /// The number of live AHs.
    pub(crate) fn live(&self) -> u32 {
        self.numbers.live()
    }

    /// A copy of the vectors of AHs `first..first + DUMP_BATCH`, `None`
    /// when `first` is past every number the pool can have given.
    fn copy_batch(&self, first: u32) -> Option<[Option<AddressVector>; DUMP_BATCH]> {
        if first >= self.numbers.end() {
            return None;
        }
        let avs = self.avs.lock();
        let mut batch = [None; DUMP_BATCH];
        for (i, slot) in batch.iter_mut().enumerate() {
            *slot = avs.get(index(first) + i).map(|e| e.av);
        }
        Some(batch)
    }

    /// The lines of the dump, without the final newline: a header, then
    /// one line per live AH, by number. Each batch is read consistently;
    /// AHs made or destroyed meanwhile may or may not show.
    fn write_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "# ah_num type port sgid_index dgid dmac hop_limit flow_label traffic_class sl"
        )?;
        let mut first = 1u32;
        // Printing may sleep: copy a batch under the lock, print without.
        while let Some(batch) = self.copy_batch(first) {
            for (num, av) in (first..).zip(batch.iter()) {
                let Some(av) = av else {
                    continue;
                };
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
            // CAST: A batch is a handful of AHs.
            first += DUMP_BATCH as u32;
        }
        Ok(())
    }
}

/// The text of the debugfs file of the table
/// (`/sys/kernel/debug/rverbs/<dev>/ah`): the header line `# ah_num type
/// port sgid_index dgid dmac hop_limit flow_label traffic_class sl`, then
/// one line per live AH, by number.
impl Writer for AhTable {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_lines(f)?;
        writeln!(f)
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
