// SPDX-License-Identifier: GPL-2.0

//! Locks, a wait for work and per-CPU counters, which the kernel crate
//! does not have.
//!
//! C headers: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h),
//! [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h),
//! [`include/linux/percpu.h`](srctree/include/linux/percpu.h)

use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    sync::lock::{
        Backend,
        Lock, //
    },
    workqueue::{
        DelayedWork,
        Work, //
    },
};

/// Creates a [`SpinLockBh`] initialiser with a new lock class.
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sync::SpinLockBh::new(
            $inner, kernel::optional_name!($($name)?), kernel::static_lock_class!())
    };
}
pub(crate) use new_spinlock_bh;

/// A spinlock taken with the bottom halves of the CPU disabled
/// (`spin_lock_bh`): for data used both in process context and in the
/// network's softirq, where a plain spinlock held by the interrupted task
/// would deadlock the CPU.
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// The `spin_lock_bh` backend of [`SpinLockBh`].
pub(crate) struct SpinLockBhBackend;

// SAFETY: A kernel `spinlock_t` ensures mutual exclusion; `lock` and
// `try_lock` disable the bottom halves until `unlock` re-enables them, so
// a guard is released on the CPU and in the context that took it (the
// kernel crate's guards are not `Send`).
unsafe impl Backend for SpinLockBhBackend {
    type State = bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: The caller's promise: `ptr` is valid for writes, `name`
        // and `key` for reads forever.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The caller's promise: `ptr` is an initialised lock.
        unsafe { bindings::rverbs_spin_lock_bh(ptr) }
    }

    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: As in `lock`.
        (unsafe { bindings::rverbs_spin_trylock_bh(ptr) } != 0).then_some(())
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: The caller's promise: it owns the lock, taken by `lock`.
        unsafe { bindings::rverbs_spin_unlock_bh(ptr) }
    }

    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: The caller's promise: `ptr` is an initialised lock.
        unsafe { bindings::spin_assert_is_held(ptr) }
    }
}

/// Waits until `work` is neither queued nor running (`flush_work`): what
/// was queued before the call has run when it returns. Process context; it
/// sleeps. Never from `work`'s own function, which would wait for itself.
pub(crate) fn flush_work<T: ?Sized, const ID: u64>(work: &Work<T, ID>) {
    kernel::task::might_sleep();
    // SAFETY: `work` is an initialised work item, borrowed for the call;
    // `flush_work` only waits for it.
    unsafe { bindings::flush_work(Work::raw_get(work)) };
}

/// Runs `work` at once if its timer is pending, and waits until it is
/// neither queued nor running (`flush_delayed_work`). Process context; it
/// sleeps. Never from `work`'s own function.
pub(crate) fn flush_delayed_work<T: ?Sized, const ID: u64>(work: &DelayedWork<T, ID>) {
    kernel::task::might_sleep();
    // SAFETY: `DelayedWork` is transparent over an initialised `struct
    // delayed_work`, borrowed for the call; `flush_delayed_work` fires its
    // timer early and waits for it.
    unsafe {
        bindings::flush_delayed_work(
            core::ptr::from_ref(work)
                .cast::<bindings::delayed_work>()
                .cast_mut(),
        )
    };
}

/// `N` counters kept per CPU (`alloc_percpu`): each CPU counts on its own
/// cache line, in any context, and a reader sums them. For statistics the
/// data path updates on every packet, where one shared atomic would move
/// between the CPUs' caches each time.
///
/// # Invariants
///
/// `ptr` is a per-CPU allocation of `N` zeroed `u64` from
/// `rverbs_pcpu_counters_alloc`, owned by this value.
pub(crate) struct PerCpuCounters<const N: usize> {
    ptr: NonNull<u64>,
}

// SAFETY: The counters are per-CPU memory owned by this value; they may be
// freed from any task.
unsafe impl<const N: usize> Send for PerCpuCounters<N> {}
// SAFETY: Through `&PerCpuCounters` each CPU increments only its own
// counters (`this_cpu_inc`, safe against interrupts there), and readers
// only read.
unsafe impl<const N: usize> Sync for PerCpuCounters<N> {}

impl<const N: usize> PerCpuCounters<N> {
    /// `N` counters at zero.
    pub(crate) fn new() -> Result<Self> {
        let n = u32::try_from(N).map_err(|_| EINVAL)?;
        // SAFETY: Any count may be asked for; the result is checked.
        let ptr = unsafe { bindings::rverbs_pcpu_counters_alloc(n) };
        // INVARIANT: A fresh allocation of `N` counters, ours.
        Ok(Self {
            ptr: NonNull::new(ptr).ok_or(ENOMEM)?,
        })
    }

    /// Adds one to counter `i` on this CPU (none if `i` is not below `N`).
    /// Any context.
    pub(crate) fn inc(&self, i: usize) {
        if i >= N {
            return;
        }
        let Ok(i) = u32::try_from(i) else {
            return;
        };
        // SAFETY: Counter `i` of a live allocation of `N` (type invariant).
        unsafe { bindings::rverbs_pcpu_counter_inc(self.ptr.as_ptr(), i) };
    }

    /// The sum of counter `i` over the CPUs (0 if `i` is not below `N`),
    /// each CPU's value read once, as it is at that moment.
    pub(crate) fn sum(&self, i: usize) -> u64 {
        if i >= N {
            return 0;
        }
        let Ok(i) = u32::try_from(i) else {
            return 0;
        };
        // SAFETY: Counter `i` of a live allocation of `N` (type invariant).
        unsafe { bindings::rverbs_pcpu_counter_sum(self.ptr.as_ptr(), i) }
    }
}

impl<const N: usize> Drop for PerCpuCounters<N> {
    fn drop(&mut self) {
        // SAFETY: Ours (type invariant), freed once; `free_percpu` may be
        // called in any context.
        unsafe { bindings::rverbs_pcpu_counters_free(self.ptr.as_ptr()) };
    }
}
