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
    table::RcuValues,
};
use core::fmt;
use kernel::{
    debugfs::Writer,
    prelude::*,
    sync::rcu,
    types::ScopeGuard, //
};

/// AHs copied per read-side critical section by the debugfs dump.
const DUMP_BATCH: usize = 16;

/// The live address handles of a device.
///
/// Numbers come from [`Ids`], cyclically from 1 as soft-RoCE's AH pool
/// gives them (`xa_alloc_cyclic`): the search for a free number starts
/// after the last one given, so its cost does not grow with the live AHs
/// (the lowest free number is a bitmap scan from 0 on every create). The
/// address vectors are in an [`RcuValues`] indexed by AH number, one
/// small allocation per AH: every send of a UD QP reads its AH's there
/// without a lock, as a copy; making, changing and destroying an AH are
/// what take the table's lock. Nothing large is ever allocated or freed
/// under a spinlock, and nothing is allocated with more than the caller's
/// `gfp`: the table is used in atomic context when the AH is not
/// `sleepable`. The two locks are never held together.
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
    avs: RcuValues<AhEntry>,
}

/// What the table keeps of an AH.
#[derive(Clone, Copy)]
struct AhEntry {
    av: AddressVector,
    /// Its PD ([`super::device::SwPd::id`]): a QP sends only with the AHs
    /// of its own PD (`rxe_av.c:rxe_get_av`).
    pd: u64,
}

impl AhTable {
    /// An empty table for at most `max` live AHs, initialised in place.
    pub(crate) fn new(max: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            numbers <- Ids::new(1, max, max),
            avs <- RcuValues::new(),
        })
    }

    /// Adds an AH, returning its number (from 1). `EINVAL` when the table
    /// is full, as soft-RoCE's object pools do. Allocates with `GFP_KERNEL`
    /// when `sleepable`, else `GFP_ATOMIC`.
    pub(crate) fn insert(&self, av: AddressVector, pd: u64, sleepable: bool) -> Result<u32> {
        let gfp = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
        let num = ScopeGuard::new_with_data(self.numbers.take(gfp)?, |n| self.numbers.put(n));
        // The number was free, so was its slot: only `ENOMEM`.
        self.avs.insert(*num, AhEntry { av, pd }, sleepable)?;
        Ok(num.dismiss())
    }

    /// Removes AH number `num`; its vector is freed a grace period later.
    /// Any context.
    pub(crate) fn remove(&self, num: u32) {
        if self.avs.remove(num) {
            self.numbers.put(num);
        }
    }

    /// The address vector of AH number `num`.
    pub(crate) fn get(&self, num: u32) -> Option<AddressVector> {
        self.get_with_pd(num).map(|(av, _)| av)
    }

    /// The address vector and the PD of AH number `num`, without a lock.
    pub(crate) fn get_with_pd(&self, num: u32) -> Option<(AddressVector, u64)> {
        let guard = rcu::read_lock();
        self.avs.get(&guard, num).map(|e| (e.av, e.pd))
    }

    /// Replaces the address vector of AH number `num` (`modify_ah`, which
    /// ib_core may call in atomic context: `GFP_ATOMIC`): `ENOMEM`;
    /// nothing if the AH is gone.
    pub(crate) fn set(&self, num: u32, av: AddressVector) -> Result {
        let guard = rcu::read_lock();
        let Some(old) = self.avs.get(&guard, num) else {
            return Ok(());
        };
        drop(guard);
        self.avs.replace(num, AhEntry { av, ..old }, false)?;
        Ok(())
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
        let guard = rcu::read_lock();
        let mut batch = [None; DUMP_BATCH];
        for (num, slot) in (first..).zip(batch.iter_mut()) {
            *slot = self.avs.get(&guard, num).map(|e| e.av);
        }
        Some(batch)
    }

    /// The lines of the dump, without the final newline: a header, then
    /// one line per live AH, by number. AHs made, changed or destroyed
    /// meanwhile may or may not show.
    fn write_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "# ah_num type port sgid_index dgid dmac hop_limit flow_label traffic_class sl"
        )?;
        let mut first = 1u32;
        // Printing may sleep: copy a batch under RCU, print without.
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
