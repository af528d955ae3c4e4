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

/// AH slots per chunk of [`AhTable`]: a chunk is about 1.5 KiB, one small
/// allocation.
const CHUNK: usize = 32;

/// A chunk of slots; slot `i` of chunk `c` is AH number `c * CHUNK + i + 1`.
struct Chunk {
    used: usize,
    slots: [Option<AddressVector>; CHUNK],
}

/// The slots of [`AhTable`]. Chunks are added as needed (allocated outside
/// the lock) and kept until the device goes, so that no allocation under
/// the lock is larger than the array of chunk pointers.
struct Slots {
    chunks: KVec<KBox<Chunk>>,
    live: u32,
}

impl Slots {
    /// Puts `av` into a free slot, if any: its AH number.
    fn place(&mut self, av: AddressVector) -> Option<u32> {
        for (c, chunk) in self.chunks.iter_mut().enumerate() {
            if chunk.used == CHUNK {
                continue;
            }
            let i = chunk.slots.iter().position(Option::is_none)?;
            chunk.slots[i] = Some(av);
            chunk.used += 1;
            self.live += 1;
            // CAST: Fewer than `max` (a `u32`) + CHUNK slots exist.
            return Some((c * CHUNK + i + 1) as u32);
        }
        None
    }

    fn slot(&mut self, num: u32) -> Option<(&mut usize, &mut Option<AddressVector>)> {
        let n = (num as usize).checked_sub(1)?;
        let chunk: &mut Chunk = self.chunks.get_mut(n / CHUNK)?;
        Some((&mut chunk.used, &mut chunk.slots[n % CHUNK]))
    }
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
                    chunks: KVec::new(),
                    live: 0,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// Adds an AH, returning its number (from 1). `EINVAL` when the table
    /// is full, as soft-RoCE's object pools do. Allocates with `GFP_KERNEL`
    /// when `sleepable`, else `GFP_ATOMIC`.
    pub(crate) fn insert(&self, av: AddressVector, sleepable: bool) -> Result<u32> {
        let gfp = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
        loop {
            let seen = {
                let mut t = self.inner.lock();
                if t.live >= self.max {
                    return Err(EINVAL);
                }
                if let Some(num) = t.place(av) {
                    return Ok(num);
                }
                t.chunks.len()
            };
            // Every chunk is full: add one, unless someone else did.
            let chunk = KBox::new(
                Chunk {
                    used: 0,
                    slots: [None; CHUNK],
                },
                gfp,
            )?;
            let mut t = self.inner.lock();
            if t.chunks.len() == seen {
                t.chunks.push(chunk, GFP_ATOMIC)?;
            }
        }
    }

    /// Removes AH number `num`.
    pub(crate) fn remove(&self, num: u32) {
        let mut t = self.inner.lock();
        let removed = match t.slot(num) {
            Some((used, slot)) if slot.is_some() => {
                *slot = None;
                *used -= 1;
                true
            }
            _ => false,
        };
        if removed {
            t.live -= 1;
        }
    }

    /// The address vector of AH number `num`.
    pub(crate) fn get(&self, num: u32) -> Option<AddressVector> {
        let mut t = self.inner.lock();
        t.slot(num).and_then(|(_, slot)| *slot)
    }

    /// Replaces the address vector of AH number `num`.
    pub(crate) fn set(&self, num: u32, av: AddressVector) {
        let mut t = self.inner.lock();
        if let Some((_, Some(entry))) = t.slot(num) {
            *entry = av;
        }
    }

    /// The number of live AHs.
    pub(crate) fn live(&self) -> u32 {
        self.inner.lock().live
    }

    /// A copy of chunk `c`'s slots, `None` past the last chunk.
    fn copy_chunk(&self, c: usize) -> Option<[Option<AddressVector>; CHUNK]> {
        let t = self.inner.lock();
        t.chunks.get(c).map(|chunk| chunk.slots)
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

/// The debugfs dump: one line per live AH, by number. Each chunk is read
/// consistently; AHs made or destroyed meanwhile may or may not show.
impl fmt::Debug for AhTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "# ah_num type port sgid_index dgid dmac hop_limit flow_label traffic_class sl"
        )?;
        let mut c = 0;
        // Printing may sleep: copy a chunk under the lock, print without.
        while let Some(slots) = self.copy_chunk(c) {
            for (i, av) in slots.iter().enumerate() {
                let Some(av) = av else {
                    continue;
                };
                let m = av.dmac;
                write!(
                    f,
                    "\n{} {} {} {} {} {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} {} {:#x} {} {}",
                    c * CHUNK + i + 1,
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
            c += 1;
        }
        Ok(())
    }
}
