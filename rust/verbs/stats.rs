// SPDX-License-Identifier: GPL-2.0

//! Counters of the Rust verbs core, shown in `/sys/kernel/debug/rverbs/counters`.
//!
//! Events happen on every create and destroy, so their counters are per
//! CPU ([`crate::events`]): a global atomic would be a cache line that every
//! CPU creating AHs writes. The entry points count creates, destroys,
//! allocs and deallocs as they return (`rust/takeover/exports.c`); the core
//! counts how each destination MAC was found ([`resolved`]). Errors are
//! rarer and counted here in atomics.

use crate::events;
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
///
/// Each event is the counter slot that C names for it ([`events::slot`],
/// the `RVERBS_EVENT_*` of `include/rverbs_helpers.h`); the slots must be
/// `0..` in the order of the list, which is checked at build time.
macro_rules! events {
    ($($(#[$attr:meta])* $variant:ident = $slot:ident => $name:literal,)+) => {
        /// What a counter counts.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub(crate) enum Event {
            $($(#[$attr])* $variant = events::slot::$slot,)+
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
    AhCreated = AH_CREATED => "ah_created",
    /// An address handle was destroyed.
    AhDestroyed = AH_DESTROYED => "ah_destroyed",
    /// A RoCE destination MAC was mapped from a multicast GID.
    DmacMulticast = DMAC_MULTICAST => "dmac_multicast",
    /// A RoCE destination MAC was taken from a link-local GID (RoCE v1).
    DmacLinkLocal = DMAC_LINK_LOCAL => "dmac_link_local",
    /// The destination is an address of this host: the MAC is our own.
    DmacLocal = DMAC_LOCAL => "dmac_local",
    /// A valid neighbour entry gave the MAC at once.
    DmacNeighFast = DMAC_NEIGH_FAST => "dmac_neigh_fast",
    /// The MAC came after waiting for neighbour resolution (ARP, ND).
    DmacNeighWait = DMAC_NEIGH_WAIT => "dmac_neigh_wait",
    /// An XRC domain was allocated.
    XrcdAllocated = XRCD_ALLOCATED => "xrcd_allocated",
    /// An XRC domain was deallocated.
    XrcdDeallocated = XRCD_DEALLOCATED => "xrcd_deallocated",
    /// The reply address of a received packet was made
    /// (`ib_init_ah_attr_from_wc`).
    AhAttrFromWc = AH_ATTR_FROM_WC => "ah_attr_from_wc",
    /// A QP was modified (`ib_modify_qp_with_udata`).
    QpModified = QP_MODIFIED => "qp_modified",
}

/// The number of events, hence of event counters.
const EVENTS: usize = Event::ALL.len();

// Each event has a counter, and `ALL[e as usize] == e`: the C slots are
// `0..EVENTS` in the order of the list.
const _: () = {
    assert!(EVENTS <= events::SLOTS);
    let mut i = 0;
    while i < EVENTS {
        assert!(Event::ALL[i] as usize == i);
        i += 1;
    }
};

/// Errors are counted by errno up to this value; larger ones share the last.
const MAX_ERRNO: usize = 150;

static ERROR_COUNTS: [Atomic<u64>; MAX_ERRNO + 1] = [const { Atomic::new(0) }; MAX_ERRNO + 1];

/// A destination MAC was found by `path` (one of the `Dmac*` events, the
/// others are ignored): counts it and traces it (`rverbs:rverbs_resolve`),
/// with `wait_ns` the time spent waiting for the neighbour.
pub(crate) fn resolved(path: Event, dgid: &[u8; 16], dmac: &[u8; 6], hop_limit: u8, wait_ns: u64) {
    events::dmac_resolved(path as u32, dgid, dmac, hop_limit, wait_ns);
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
        for &event in Event::ALL {
            writeln!(f, "{} {}", event.name(), events::sum(event as u32))?;
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
