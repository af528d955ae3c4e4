// SPDX-License-Identifier: GPL-2.0

//! The per-CPU event counters and the tracepoints of rverbs, which live in
//! C (`rust/helpers/events.c`, `include/rverbs_events.h`,
//! `include/rverbs_trace.h`): per-CPU variables and tracepoints are macros
//! that the kernel crate of this kernel does not offer to a module.
//!
//! The counters are numbered by slot ([`SLOTS`] of them); the verbs core's
//! events ([`crate::verbs::stats::Event`]) are the slots the C header
//! names. The create, destroy, alloc and dealloc events are counted and
//! traced by the C entry points (`rust/takeover/exports.c`) that call the
//! core; the resolution of a destination MAC, whose path only the core
//! knows, through [`dmac_resolved`].

use crate::bindings;

/// How many counters there are.
// CAST: A small positive enum constant.
pub(crate) const SLOTS: usize = bindings::RVERBS_EVENT_SLOTS as usize;

/// The counter slots of the verbs core's events, as C numbers them.
pub(crate) mod slot {
    use crate::bindings;

    pub(crate) const AH_CREATED: u32 = bindings::RVERBS_EVENT_AH_CREATED;
    pub(crate) const AH_DESTROYED: u32 = bindings::RVERBS_EVENT_AH_DESTROYED;
    pub(crate) const DMAC_MULTICAST: u32 = bindings::RVERBS_EVENT_DMAC_MULTICAST;
    pub(crate) const DMAC_LINK_LOCAL: u32 = bindings::RVERBS_EVENT_DMAC_LINK_LOCAL;
    pub(crate) const DMAC_LOCAL: u32 = bindings::RVERBS_EVENT_DMAC_LOCAL;
    pub(crate) const DMAC_NEIGH_FAST: u32 = bindings::RVERBS_EVENT_DMAC_NEIGH_FAST;
    pub(crate) const DMAC_NEIGH_WAIT: u32 = bindings::RVERBS_EVENT_DMAC_NEIGH_WAIT;
    pub(crate) const XRCD_ALLOCATED: u32 = bindings::RVERBS_EVENT_XRCD_ALLOCATED;
    pub(crate) const XRCD_DEALLOCATED: u32 = bindings::RVERBS_EVENT_XRCD_DEALLOCATED;
    pub(crate) const AH_ATTR_FROM_WC: u32 = bindings::RVERBS_EVENT_AH_ATTR_FROM_WC;
    pub(crate) const QP_MODIFIED: u32 = bindings::RVERBS_EVENT_QP_MODIFIED;
}

/// The value of counter `slot`, summed over the CPUs; 0 for a slot past
/// [`SLOTS`].
pub(crate) fn sum(slot: u32) -> u64 {
    // SAFETY: Any slot is accepted; one past the end reads 0.
    unsafe { bindings::rverbs_event_sum(slot) }
}

/// A destination MAC was resolved by `path` (an `RVERBS_EVENT_DMAC_*`
/// slot): counts it and emits the `rverbs:rverbs_resolve` tracepoint with
/// the destination, the MAC, the hop limit and the time waited for the
/// neighbour (`wait_ns`, 0 when none). One call for both, on the fast path.
/// Nothing for a slot that is not a resolution path.
#[inline]
pub(crate) fn dmac_resolved(
    path: u32,
    dgid: &[u8; 16],
    dmac: &[u8; 6],
    hop_limit: u8,
    wait_ns: u64,
) {
    // SAFETY: `dgid` and `dmac` are valid for reads of 16 and 6 bytes for
    // the call, which only copies them; any `path` is accepted.
    unsafe {
        bindings::rverbs_dmac_resolved(path, dgid.as_ptr(), dmac.as_ptr(), hop_limit, wait_ns)
    }
}
