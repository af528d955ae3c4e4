// SPDX-License-Identifier: GPL-2.0

//! Counters of the Rust verbs core, shown in `/sys/kernel/debug/rverbs/counters`.

use core::fmt;
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// An address handle was created.
    AhCreated,
    /// An address handle was destroyed.
    AhDestroyed,
    /// A RoCE destination MAC was mapped from a multicast GID.
    DmacMulticast,
    /// A RoCE destination MAC was taken from a link-local GID (RoCE v1).
    DmacLinkLocal,
    /// The destination is an address of this host: the MAC is our own.
    DmacLocal,
    /// A valid neighbour entry gave the MAC at once.
    DmacNeighFast,
    /// The MAC came after waiting for neighbour resolution (ARP, ND).
    DmacNeighWait,
    /// An XRC domain was allocated.
    XrcdAllocated,
    /// An XRC domain was deallocated.
    XrcdDeallocated,
}

const EVENTS: usize = 9;

const NAMES: [&str; EVENTS] = [
    "ah_created",
    "ah_destroyed",
    "dmac_multicast",
    "dmac_link_local",
    "dmac_local",
    "dmac_neigh_fast",
    "dmac_neigh_wait",
    "xrcd_allocated",
    "xrcd_deallocated",
];

/// Errors are counted by errno up to this value; larger ones share the last.
const MAX_ERRNO: usize = 150;

static EVENT_COUNTS: [Atomic<u64>; EVENTS] = [const { Atomic::new(0) }; EVENTS];
static ERROR_COUNTS: [Atomic<u64>; MAX_ERRNO + 1] = [const { Atomic::new(0) }; MAX_ERRNO + 1];

/// Counts one `event`.
pub(crate) fn count(event: Event) {
    EVENT_COUNTS[event as usize].add(1, Relaxed);
}

/// Counts an error returned by the core.
pub(crate) fn count_error(err: Error) {
    let errno = usize::try_from(-err.to_errno()).unwrap_or(MAX_ERRNO);
    ERROR_COUNTS[errno.min(MAX_ERRNO)].add(1, Relaxed);
}

/// Counts the error of `result`, if any, and returns it unchanged.
pub(crate) fn counted<T>(result: Result<T>) -> Result<T> {
    if let Err(e) = &result {
        count_error(*e);
    }
    result
}

/// The text of the debugfs `counters` file: `name value` lines, then one
/// `error.<errno> value` line for each errno returned at least once.
pub(crate) struct Counters;

impl fmt::Debug for Counters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, count) in NAMES.iter().zip(EVENT_COUNTS.iter()) {
            writeln!(f, "{} {}", name, count.load(Relaxed))?;
        }
        for (errno, count) in ERROR_COUNTS.iter().enumerate() {
            let n = count.load(Relaxed);
            if n != 0 {
                writeln!(f, "error.{} {}", errno, n)?;
            }
        }
        // The debugfs file ends the text with a newline of its own.
        write!(f, "end")
    }
}
