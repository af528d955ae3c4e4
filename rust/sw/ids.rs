// SPDX-License-Identifier: GPL-2.0

//! Numbers of objects (QP numbers, MR indexes, AH numbers), given cyclically, as
//! soft-RoCE's pools give them (`rxe_pool.c`, `xa_alloc_cyclic`).

use kernel::{
    alloc::Flags,
    id_pool::IdPool,
    new_spinlock,
    prelude::*,
    sync::SpinLock, //
};

/// The numbers in use and where the next search starts.
struct Numbers {
    /// The numbers taken (IDs of the pool are the numbers; those below
    /// `min` are never given).
    pool: IdPool,
    /// Where the next search starts.
    next: u32,
    /// How many are taken.
    live: u32,
    /// The first number.
    min: u32,
    /// The last number.
    max: u32,
    /// Most numbers taken at once.
    limit: u32,
}

impl Numbers {
    /// Takes the first free number from `from` on, up to the end of the
    /// bitmap and at most `max`.
    fn take_from(&mut self, from: u32) -> Option<u32> {
        // The bitmap refuses a start past its end (an assertion with
        // `CONFIG_RUST_BITMAP_HARDENED`).
        let from = usize::try_from(from)
            .ok()
            .filter(|&f| f < self.pool.capacity())?;
        let id = self.pool.find_unused_id(from)?;
        let max = self.max;
        let num = u32::try_from(id.as_usize()).ok().filter(|&n| n <= max)?;
        id.acquire();
        Some(num)
    }
}

/// Numbers from `min` to `max`, given cyclically: the search for a free
/// number starts after the last one given, so a number is not given again
/// at once (soft-RoCE's pools cycle through all of their range; this one
/// through the numbers its bitmap has room for, which grows with the most
/// numbers taken at once). The pool grows outside its lock (`grow_request`,
/// `realloc`, `grow`), as `IdPool` is meant to be used under a spinlock,
/// and only when every number it has room for is taken.
#[pin_data]
pub(crate) struct Ids {
    #[pin]
    numbers: SpinLock<Numbers>,
}

impl Ids {
    /// An empty table of numbers from `min` to `max`, at most `limit` of
    /// them taken at once, initialised in place.
    pub(crate) fn new(min: u32, max: u32, limit: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            numbers <- new_spinlock!(Numbers {
                pool: IdPool::new(),
                next: min,
                live: 0,
                min,
                max,
                limit,
            }),
        })
    }

    /// Takes a number: the first free one after the last one given,
    /// wrapping around to the first. `EINVAL` when `limit` are taken, as
    /// soft-RoCE's pools fail.
    pub(crate) fn take(&self, gfp: Flags) -> Result<u32> {
        let mut n = self.numbers.lock();
        loop {
            if n.live >= n.limit {
                return Err(EINVAL);
            }
            let (start, min) = (n.next, n.min);
            if let Some(num) = n.take_from(start).or_else(|| n.take_from(min)) {
                n.live += 1;
                n.next = if num >= n.max { n.min } else { num + 1 };
                return Ok(num);
            }
            // Every number the bitmap has room for is taken: double it.
            // `None` only past `i32::MAX` IDs, never reached (at most
            // `limit` are live, below `max`).
            let request = n.pool.grow_request();
            drop(n);
            let resizer = request.ok_or(EINVAL)?.realloc(gfp)?;
            n = self.numbers.lock();
            // A no-op if someone else grew it meanwhile.
            n.pool.grow(resizer);
        }
    }

    /// Gives number `num` back.
    pub(crate) fn put(&self, num: u32) {
        let mut n = self.numbers.lock();
        // CAST: A number of the table, at most `max` (a `u32`).
        n.pool.release_id(num as usize);
        n.live -= 1;
    }

    /// How many are taken.
    pub(crate) fn live(&self) -> u32 {
        self.numbers.lock().live
    }

    /// One past the highest number that can have been given so far: every
    /// number taken is below it (the bitmap's capacity, which grows with
    /// the most numbers taken at once).
    pub(crate) fn end(&self) -> u32 {
        let capacity = self.numbers.lock().pool.capacity();
        u32::try_from(capacity).unwrap_or(u32::MAX)
    }

    /// Most taken at once.
    pub(crate) fn limit(&self) -> u32 {
        self.numbers.lock().limit
    }
}
