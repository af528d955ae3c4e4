// SPDX-License-Identifier: GPL-2.0

//! A fence between the users of a shared object and its teardown: the
//! data path enters an object it found (a QP, a memory region) for the
//! length of one use, and the verb that destroys the object closes it and
//! waits for the uses in progress, never for a grace period.
//!
//! C header: [`include/linux/completion.h`](srctree/include/linux/completion.h)
//!
//! soft-RoCE does the same with a reference count per object and a
//! completion (`rxe_pool.c:__rxe_get`, `__rxe_cleanup`): a packet takes a
//! reference (`kref_get_unless_zero`), the destroy verb drops the pool's
//! and waits until the others are gone. The objects are found under RCU
//! (an xarray) either way; the gate only decides whether a use may begin,
//! so that the verb returns as soon as no use is in progress (nearly
//! always at once) instead of after a grace period (milliseconds), which
//! MPI and UCX registration caches, deregistering all the time, would pay
//! on every call.

use core::{
    cell::UnsafeCell,
    ops::Deref,
    sync::atomic::{
        AtomicUsize,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::Completion, //
};

/// The bit of [`Gate::users`] set once the gate is closed.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// Uses of an object, until it is closed.
///
/// # Invariants
///
/// `users` counts the [`Pass`]es alive, with [`CLOSED`] set from the first
/// [`Gate::close`] on; `done` is completed once it is closed and no pass
/// is left.
#[pin_data]
pub(crate) struct Gate {
    users: AtomicUsize,
    #[pin]
    done: Completion,
}

impl Gate {
    /// An open gate.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            users: AtomicUsize::new(0),
            done <- Completion::new(),
        })
    }

    /// Begins a use, for as long as the pass lives; `None` once the gate
    /// is closed. Any context.
    pub(crate) fn enter(&self) -> Option<Pass<'_>> {
        let mut cur = self.users.load(Ordering::Relaxed);
        loop {
            if cur & CLOSED != 0 {
                return None;
            }
            // Acquire: the use sees what was done before the object was
            // published and opened.
            match self.users.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                // INVARIANT: One more pass, counted.
                Ok(_) => return Some(Pass(self)),
                Err(now) => cur = now,
            }
        }
    }

    /// Closes the gate: no use begins from now on, and this returns once
    /// every use in progress has ended. May sleep (when a use is in
    /// progress, as long as it lasts: uses are short, never a sleep).
    /// `true` for the call that closed it, `false` for any later one.
    pub(crate) fn close(&self) -> bool {
        kernel::task::might_sleep();
        // AcqRel: the caller sees what the uses ended before did.
        let before = self.users.fetch_or(CLOSED, Ordering::AcqRel);
        if before & !CLOSED != 0 {
            // The last pass completes `done` for good (every closer);
            // it synchronises with this.
            self.done.wait_for_completion();
        }
        before & CLOSED == 0
    }
}

/// One use of an object behind a [`Gate`], ended when dropped.
pub(crate) struct Pass<'a>(&'a Gate);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        // Release: what the use did is seen by the closer.
        let before = self.0.users.fetch_sub(1, Ordering::Release);
        if before == CLOSED | 1 {
            // The last use of a closed gate: its closer may go on.
            self.0.done.complete_all();
        }
    }
}

/// A value that the users of an object borrow through a [`Gate`], and that
/// its owner takes back once, after closing the gate: e.g. the pinned
/// pages of a memory region, released by the verb that deregisters it (in
/// process context), while the region itself is freed a grace period
/// later (from a work item, [`super::table::Release`]).
///
/// # Invariants
///
/// `value` is read only through a [`Pass`] of `gate`, and taken only
/// after `gate` is closed (no pass left, none to come).
#[pin_data]
pub(crate) struct Gated<T> {
    #[pin]
    gate: Gate,
    value: UnsafeCell<Option<T>>,
}

// SAFETY: Moving a `Gated<T>` moves a `T` (and a gate, plain memory).
unsafe impl<T: Send> Send for Gated<T> {}
// SAFETY: Through `&Gated<T>`, tasks share `&T` (hence `Sync`) and one of
// them may take the `T` out once no other uses it (hence `Send`).
unsafe impl<T: Send + Sync> Sync for Gated<T> {}

impl<T> Gated<T> {
    /// `value`, open to its users.
    pub(crate) fn new(value: T) -> impl PinInit<Self> {
        pin_init!(Self {
            gate <- Gate::new(),
            value: UnsafeCell::new(Some(value)),
        })
    }

    /// Borrows the value for as long as the result lives; `None` once the
    /// owner has closed it. Any context.
    pub(crate) fn enter(&self) -> Option<GatedRef<'_, T>> {
        let pass = self.gate.enter()?;
        // SAFETY: With a pass, the value is not taken before the pass is
        // dropped (type invariant); it is only read meanwhile.
        let value = unsafe { &*self.value.get() }.as_ref()?;
        Some(GatedRef { value, _pass: pass })
    }

    /// Closes the gate, waits until no use is in progress, and takes the
    /// value: `None` for any call but the one that closed it. May sleep.
    pub(crate) fn close(&self) -> Option<T> {
        if !self.gate.close() {
            return None;
        }
        // SAFETY: Closed by this call, the only one that takes the value:
        // no pass is left and none can be had, so nobody reads it.
        unsafe { (*self.value.get()).take() }
    }
}

/// The value of a [`Gated`], borrowed for one use.
pub(crate) struct GatedRef<'a, T> {
    value: &'a T,
    _pass: Pass<'a>,
}

impl<T> Deref for GatedRef<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value
    }
}
