// SPDX-License-Identifier: GPL-2.0

//! Neighbour entries (`struct neighbour`) and neighbour updates.
//!
//! C header: [`include/net/neighbour.h`](srctree/include/net/neighbour.h)
//!
//! A RoCE destination MAC comes from the neighbour entry of the next hop.
//! When the entry is valid it is read at once
//! ([`super::route::Route::fetch_ha`]); otherwise resolution (ARP, ND) is
//! started and the caller waits for an update: [`NeighUpdates`] is
//! the registration of the netevent notifier that wakes such waiters,
//! [`wait_for_update`] the wait.

use crate::{
    bindings,
    errno::to_result, //
};
use kernel::{
    prelude::*,
    time::Jiffies,
    types::Opaque, //
};

/// Netevent callback: a neighbour entry became valid, wake the waiters
/// (what `netevent_callback` of ib_core's addr.c does for its requests).
///
/// # Safety
///
/// Called by the netevent notifier chain only: for
/// `NETEVENT_NEIGH_UPDATE`, `ptr` is a valid `struct neighbour`.
unsafe extern "C" fn neigh_update_callback(
    _nb: *mut bindings::notifier_block,
    event: kernel::ffi::c_ulong,
    ptr: *mut kernel::ffi::c_void,
) -> kernel::ffi::c_int {
    // CAST: Netevent types are small enumerators.
    if event as u32 == bindings::netevent_notif_type_NETEVENT_NEIGH_UPDATE {
        let n = ptr.cast::<bindings::neighbour>();
        // For NETEVENT_NEIGH_UPDATE, `ptr` is the neighbour being updated.
        // The entry's lock is not held here and `nud_state` may change
        // under us: it is read once, with `READ_ONCE`, by the C helper.
        // SAFETY: `n` is a valid neighbour for the duration of the call.
        let nud_state = unsafe { bindings::rverbs_neigh_nud_state(n) };
        if u32::from(nud_state) & bindings::NUD_VALID != 0 {
            // SAFETY: Always safe to call, in any context: it bumps an
            // atomic counter and wakes a statically initialised queue.
            unsafe { bindings::rverbs_neigh_updated() };
        }
    }
    // CAST: NOTIFY_DONE is 0.
    bindings::NOTIFY_DONE as kernel::ffi::c_int
}

/// The registration of the neighbour update notifier (a netevent
/// notifier); unregistered on drop.
///
/// Only the notifier block is in this object. The waiters' wait queue and
/// generation count stay global, in `rust/helpers/net.c`: waiters run under
/// the C ABI entry points (`rverbs_create_user_ah`), which have no context
/// through which they could reach a registration object, and the queue is
/// initialised statically (`DECLARE_WAIT_QUEUE_HEAD`), with no run-time set
/// up that would need an owner. With no registration the generation simply
/// never moves and waiters wake at their timeouts.
///
/// # Invariants
///
/// `nb` is registered with the netevent notifier chain for as long as this
/// object exists.
#[pin_data(PinnedDrop)]
pub(crate) struct NeighUpdates {
    /// The notifier block, on the netevent chain.
    #[pin]
    nb: Opaque<bindings::notifier_block>,
}

// SAFETY: `unregister_netevent_notifier` may be called from any thread, not
// only the one that registered the block.
unsafe impl Send for NeighUpdates {}
// SAFETY: `&self` gives no access to the block: only the notifier chain
// uses it.
unsafe impl Sync for NeighUpdates {}

impl NeighUpdates {
    /// Registers the netevent notifier that wakes [`wait_for_update`]'s
    /// waiters; the block is written in place and registered there.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nb <- Opaque::try_ffi_init(|slot: *mut bindings::notifier_block| {
                // SAFETY: The initialiser may write to `slot`, which is
                // valid for writes.
                unsafe {
                    slot.write(bindings::notifier_block {
                        notifier_call: Some(neigh_update_callback),
                        next: core::ptr::null_mut(),
                        priority: 0,
                    })
                };
                // SAFETY: The block was just written. It is pinned, and
                // `PinnedDrop` unregisters it before its memory goes.
                // INVARIANT: On success the block is registered.
                to_result(unsafe { bindings::register_netevent_notifier(slot) })
            }),
        })
    }
}

#[pinned_drop]
impl PinnedDrop for NeighUpdates {
    fn drop(self: Pin<&mut Self>) {
        // The chain is an atomic notifier chain: unregistering waits for an
        // RCU grace period, so no callback still runs on the block after it.
        // SAFETY: By the type invariant the block is registered.
        unsafe { bindings::unregister_netevent_notifier(self.nb.get()) };
    }
}

/// The count of neighbour updates seen so far; pass it to
/// [`wait_for_update`] to wait for the next one.
pub(crate) fn update_generation() -> i32 {
    // SAFETY: Always safe to call.
    unsafe { bindings::rverbs_neigh_generation() }
}

/// How a [`wait_for_update`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitResult {
    /// A neighbour was updated after `generation` was read.
    Updated,
    /// The timeout passed first.
    TimedOut,
    /// A fatal signal is pending: the task is being killed.
    Killed,
}

/// Waits, killably, until a neighbour becomes valid after `generation` was
/// read, for at most `timeout` jiffies.
///
/// Only a fatal signal ends the wait early (`TASK_KILLABLE`), which is as
/// close as a bounded wait gets to ib_core's uninterruptible one: other
/// signals do not turn into `EINTR` for userspace. The wait queue is in the
/// C helper (`rverbs_neigh_wait` in `rust/helpers/net.c`), because the
/// kernel crate's `CondVar` has no killable wait; the comment there says
/// why in full. May sleep: process context only.
pub(crate) fn wait_for_update(generation: i32, timeout: Jiffies) -> WaitResult {
    // CAST: Callers' timeouts are a second or so, far below `LONG_MAX`.
    // SAFETY: Always safe to call from process context (the helper's
    // `wait_event_killable_timeout` checks it with `might_sleep`).
    let ret = unsafe { bindings::rverbs_neigh_wait(generation, timeout as kernel::ffi::c_long) };
    match ret {
        r if r < 0 => WaitResult::Killed,
        0 => WaitResult::TimedOut,
        _ => WaitResult::Updated,
    }
}
