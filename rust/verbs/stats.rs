// SPDX-License-Identifier: GPL-2.0

//! Counters of the Rust verbs core, shown in `/sys/kernel/debug/rverbs/counters`.

use core::fmt;
use kernel::{
    debugfs::Writer,
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// Declares [`Event`] together with the name of each event in the
/// counters file, so that the variants, [`Event::ALL`] (and so the number
/// of counters) and [`Event::name`] come from one list and cannot disagree:
/// a new event is one more line of [`events!`].
macro_rules! events {
    ($($(#[$attr:meta])* $variant:ident => $name:literal,)+) => {
        /// What a counter counts.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Event {
            $($(#[$attr])* $variant,)+
        }

        impl Event {
            /// Every event, in declaration order: `ALL[e as usize] == e`.
            const ALL: &'static [Event] = &[$(Event::$variant),+];

            /// The name of the event's line in the counters file.
            const fn name(self) -> &'static str {
                match self {
                    $(Event::$variant => $name,)+
                }
            }
        }
    };
}

events! {
    /// An address handle was created.
    AhCreated => "ah_created",
    /// An address handle was destroyed.
    AhDestroyed => "ah_destroyed",
    /// A RoCE destination MAC was mapped from a multicast GID.
    DmacMulticast => "dmac_multicast",
    /// A RoCE destination MAC was taken from a link-local GID (RoCE v1).
    DmacLinkLocal => "dmac_link_local",
    /// The destination is an address of this host: the MAC is our own.
    DmacLocal => "dmac_local",
    /// A valid neighbour entry gave the MAC at once.
    DmacNeighFast => "dmac_neigh_fast",
    /// The MAC came after waiting for neighbour resolution (ARP, ND).
    DmacNeighWait => "dmac_neigh_wait",
    /// An XRC domain was allocated.
    XrcdAllocated => "xrcd_allocated",
    /// An XRC domain was deallocated.
    XrcdDeallocated => "xrcd_deallocated",
}

/// The number of events, hence of event counters.
const EVENTS: usize = Event::ALL.len();

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
/// `error.<errno> value` line for each errno returned at least once, then
/// `end`.
///
/// The format is this type's own [`Writer`] (tests parse it), not a
/// `Debug` rendering.
pub(crate) struct Counters;

impl Writer for Counters {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (event, count) in Event::ALL.iter().zip(EVENT_COUNTS.iter()) {
            writeln!(f, "{} {}", event.name(), count.load(Relaxed))?;
        }
        for (errno, count) in ERROR_COUNTS.iter().enumerate() {
            let n = count.load(Relaxed);
            if n != 0 {
                writeln!(f, "error.{} {}", errno, n)?;
            }
        }
        writeln!(f, "end")
    }
}
