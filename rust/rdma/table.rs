// SPDX-License-Identifier: GPL-2.0

//! Tables of objects that the data path finds by number under RCU: QPs by
//! QP number, memory regions by key index.
//!
//! C header: [`include/linux/xarray.h`](srctree/include/linux/xarray.h)

use crate::{
    bindings,
    errno::to_result, //
};
use core::{
    ffi::c_void,
    marker::PhantomData, //
};
use kernel::{
    prelude::*,
    sync::{
        rcu,
        Arc,
        ArcBorrow, //
    },
    types::Opaque,
};

/// Objects published at numbers, found without a lock under RCU.
///
/// An entry holds a reference ([`Arc`]) to its object. Readers borrow an
/// object for as long as their RCU read-side critical section lasts
/// ([`RcuTable::get`]), and may take a reference of their own from the
/// borrow (`Arc::from`). [`RcuTable::remove`] unpublishes an entry and
/// returns at once: the table's reference is dropped a grace period later,
/// when no reader can still see the object, from rverbs' release
/// workqueue (process context: [`Release`]); what must go when the verb
/// returns, such as pinned pages, is taken out by the verb
/// ([`super::gate::Gated`]). A reader may still use an object after
/// `remove` returned, until its
/// critical section ends: a verb that must know that no use is left (no
/// completion for a destroyed QP, no access to a deregistered region)
/// closes the object's [`super::gate::Gate`], which its readers enter.
/// Inserting and removing may sleep (process context); reading works in
/// any context.
///
/// # Invariants
///
/// `xa` is an initialised xarray whose every entry comes from
/// `Arc::<T>::into_raw` and owns that reference.
#[pin_data(PinnedDrop)]
pub(crate) struct RcuTable<T: Send + Sync> {
    #[pin]
    xa: Opaque<bindings::xarray>,
    _objects: PhantomData<Arc<T>>,
}

// SAFETY: The xarray has its own lock for writers and RCU for readers; the
// objects are `Send + Sync` and shared through `Arc`.
unsafe impl<T: Send + Sync> Send for RcuTable<T> {}
// SAFETY: As above: every method takes `&self` and is safe to call
// concurrently.
unsafe impl<T: Send + Sync> Sync for RcuTable<T> {}

/// The xarray index of number `n`.
fn index(n: u32) -> usize {
    // CAST: `usize` is at least 32 bits wide wherever the kernel builds Rust.
    n as usize
}

impl<T: Send + Sync> RcuTable<T> {
    /// An empty table, initialised in place.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `xa_init_flags` initialises the xarray in place.
            xa <- Opaque::ffi_init(|xa| unsafe { bindings::xa_init_flags(xa, 0) }),
            _objects: PhantomData,
        })
    }

    /// Publishes `obj` at `n`: `EBUSY` if `n` is taken, `ENOMEM`. May
    /// sleep.
    pub(crate) fn insert(&self, n: u32, obj: Arc<T>) -> Result {
        kernel::task::might_sleep();
        let ptr = Arc::into_raw(obj);
        // SAFETY: The xarray is initialised (type invariant); the entry is
        // a reference the table owns from here on (type invariant).
        let ret =
            unsafe { bindings::rverbs_xa_insert(self.xa.get(), index(n), ptr.cast_mut().cast()) };
        if let Err(e) = to_result(ret) {
            // SAFETY: Not inserted: the reference is still ours.
            drop(unsafe { Arc::from_raw(ptr) });
            return Err(e);
        }
        Ok(())
    }

    /// The object at `n`, for as long as the read-side critical section of
    /// `guard` lasts (and the table).
    pub(crate) fn get<'a>(&'a self, guard: &'a rcu::Guard, n: u32) -> Option<&'a T> {
        let ptr = self.load(guard, n)?;
        // SAFETY: `load`'s object lives as long as `'a` (`guard`); the
        // reference is a shared one to it.
        Some(unsafe { &*ptr })
    }

    /// The object at `n` as [`RcuTable::get`] finds it, borrowed as an
    /// [`Arc`]: a reference of the caller's own can be taken from it
    /// (`Arc::from`), for work that goes on after the read-side critical
    /// section.
    pub(crate) fn borrow<'a>(&'a self, guard: &'a rcu::Guard, n: u32) -> Option<ArcBorrow<'a, T>> {
        let ptr = self.load(guard, n)?;
        // SAFETY: `load` returned a pointer of `Arc::into_raw` whose object
        // lives, its count above zero, as long as `'a` (`guard`).
        Some(unsafe { ArcBorrow::from_raw(ptr) })
    }

    /// The object at `n` both as [`RcuTable::get`] and as
    /// [`RcuTable::borrow`] find it (one lookup, so one object).
    pub(crate) fn get_both<'a>(
        &'a self,
        guard: &'a rcu::Guard,
        n: u32,
    ) -> Option<(&'a T, ArcBorrow<'a, T>)> {
        let ptr = self.load(guard, n)?;
        // SAFETY: As `get` and `borrow`: the object of an `Arc` the table
        // holds, alive as long as `'a` (`guard`).
        Some(unsafe { (&*ptr, ArcBorrow::from_raw(ptr)) })
    }

    /// The entry at `n`: a pointer of `Arc::<T>::into_raw` whose reference
    /// the table holds at least until `_guard` is dropped.
    fn load(&self, _guard: &rcu::Guard, n: u32) -> Option<*const T> {
        // SAFETY: The xarray is initialised; `xa_load` takes the RCU read
        // lock itself and is callable in any context.
        let ptr = unsafe { bindings::xa_load(self.xa.get(), index(n)) }.cast::<T>();
        // An entry is an `Arc<T>` of the table (type invariant). It was
        // there during the read-side critical section of `_guard`, and
        // `remove` lets go of the reference only after a grace period
        // (`replace` waits for one): the object lives until the guard is
        // dropped.
        (!ptr.is_null()).then_some(ptr.cast_const())
    }

    /// Publishes `obj` at `n` in place of what was there, which it returns
    /// once no reader can still see it. `ENOMEM`. May sleep, as
    /// [`RcuTable::remove`].
    pub(crate) fn replace(&self, n: u32, obj: Arc<T>) -> Result<Option<Arc<T>>> {
        kernel::task::might_sleep();
        let ptr = Arc::into_raw(obj);
        // SAFETY: The xarray is initialised; the entry is a reference the
        // table owns from here on (type invariant).
        let old =
            unsafe { bindings::rverbs_xa_store(self.xa.get(), index(n), ptr.cast_mut().cast()) };
        // SAFETY: `xa_store` returns the old entry or an error entry.
        if unsafe { bindings::xa_err(old) } != 0 {
            // SAFETY: Not stored: the reference is still ours.
            drop(unsafe { Arc::from_raw(ptr) });
            return Err(ENOMEM);
        }
        let old = old.cast::<T>();
        if old.is_null() {
            return Ok(None);
        }
        // SAFETY: Process context (the caller's promise of a sleeping
        // function); readers that found the entry finish before it returns.
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: An `Arc<T>` of the table (type invariant), unpublished
        // and unseen.
        Ok(Some(unsafe { Arc::from_raw(old) }))
    }

    /// Unpublishes the object at `n`; the table's reference is dropped
    /// once no reader can still see it, a grace period later (see the
    /// type). `false` if there was none. May sleep.
    pub(crate) fn remove(&self, n: u32) -> bool {
        kernel::task::might_sleep();
        // SAFETY: The xarray is initialised.
        let ptr = unsafe { bindings::xa_erase(self.xa.get(), index(n)) }.cast::<T>();
        if ptr.is_null() {
            return false;
        }
        // SAFETY: The entry was an `Arc<T>` owned by the table (type
        // invariant), now unpublished; readers may still see it.
        let obj = unsafe { Arc::from_raw(ptr) };
        drop_after_grace_period(obj);
        true
    }
}

/// Drops `obj` once the read-side critical sections in progress have
/// ended, in process context: from rverbs' release workqueue after a grace
/// period (`queue_rcu_work`), or here after `synchronize_rcu` if there is
/// no memory for the work item. Process context.
fn drop_after_grace_period<T: Send + Sync>(obj: Arc<T>) {
    let ptr = Arc::into_raw(obj);
    // SAFETY: `drop_deferred::<T>` takes back exactly this reference, once,
    // in process context; the queue runs until the module's exit drains it
    // ([`Release`]), which no table outlives.
    let ret = unsafe {
        bindings::rverbs_release_after_gp(Some(drop_deferred::<T>), ptr.cast_mut().cast())
    };
    if ret != 0 {
        // SAFETY: Process context (the caller's); no read-side critical
        // section of the caller's is open (`remove` may sleep).
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: Not queued: the reference is still ours.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

/// The work of [`drop_after_grace_period`].
///
/// # Safety
///
/// `data` is a pointer of `Arc::<T>::into_raw` whose reference is given to
/// this call.
unsafe extern "C" fn drop_deferred<T: Send + Sync>(data: *mut c_void) {
    // SAFETY: The caller's promise: the reference is ours now.
    drop(unsafe { Arc::from_raw(data.cast::<T>().cast_const()) });
}

/// rverbs' release workqueue, where tables drop what they let go of: from
/// the module's start to its end. Dropping it waits for every release
/// queued (`rcu_barrier`, then the queue drained), so that no work runs
/// code of the module after it is gone.
pub(crate) struct Release(());

impl Release {
    /// Starts the queue; one per module. May sleep.
    pub(crate) fn start() -> Result<Self> {
        // SAFETY: Process context, once per module (its init).
        to_result(unsafe { bindings::rverbs_release_start() })?;
        Ok(Self(()))
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        // SAFETY: Started (`start`); every table, which queues releases,
        // is gone by now (the module drops this last).
        unsafe { bindings::rverbs_release_stop() };
    }
}

#[pinned_drop]
impl<T: Send + Sync> PinnedDrop for RcuTable<T> {
    fn drop(self: Pin<&mut Self>) {
        let xa = self.xa.get();
        let mut left: KVec<*const T> = KVec::new();
        let mut at: usize = 0;
        loop {
            // SAFETY: The xarray is initialised; `at` is ours.
            let entry = unsafe { bindings::xa_find(xa, &mut at, usize::MAX, bindings::XA_PRESENT) };
            if entry.is_null() {
                break;
            }
            // SAFETY: The xarray is initialised; `at` holds an entry.
            unsafe { bindings::xa_erase(xa, at) };
            // Entries are dropped after a grace period; should there be
            // no room to remember one, it is leaked rather than freed
            // under a reader.
            let _ = left.push(entry.cast_const().cast(), GFP_KERNEL);
        }
        if !left.is_empty() {
            // SAFETY: Process context: tables are dropped with their device.
            unsafe { bindings::synchronize_rcu() };
            for ptr in left {
                // SAFETY: An `Arc<T>` of the table (type invariant), now
                // unpublished and unseen.
                drop(unsafe { Arc::from_raw(ptr) });
            }
        }
        // SAFETY: Empty now; frees the xarray's nodes.
        unsafe { bindings::xa_destroy(xa) };
    }
}

/// Small plain values published at numbers: read by copy under RCU,
/// written in any context.
///
/// The writers' lock is taken with IRQs saved and allocations sleep only
/// when the caller says it may, so that a verb called in atomic context
/// (an AH made or destroyed without `RDMA_CREATE_AH_SLEEPABLE`), even with
/// IRQs off, may write; a value that
/// is replaced or removed is freed a grace period later with `kfree_rcu`,
/// which runs no code of the module, in any context. Readers take no lock
/// and share no cache line with each other.
///
/// # Invariants
///
/// `xa` is an initialised xarray of `XA_FLAGS_LOCK_IRQ` whose every entry
/// comes from `KBox::<Node<T>>::into_raw` and owns that allocation.
#[pin_data(PinnedDrop)]
pub(crate) struct RcuValues<T: Copy + Send + Sync> {
    #[pin]
    xa: Opaque<bindings::xarray>,
    _values: PhantomData<KBox<Node<T>>>,
}

/// A value of [`RcuValues`] and what frees it after a grace period.
#[repr(C)]
struct Node<T> {
    /// Filled in by `kvfree_call_rcu` when the node goes.
    head: Opaque<bindings::callback_head>,
    value: T,
}

// SAFETY: The xarray has its own lock for writers and RCU for readers; the
// values are `Copy + Send + Sync`, read by copy.
unsafe impl<T: Copy + Send + Sync> Send for RcuValues<T> {}
// SAFETY: As above: every method takes `&self` and is safe to call
// concurrently.
unsafe impl<T: Copy + Send + Sync> Sync for RcuValues<T> {}

impl<T: Copy + Send + Sync> RcuValues<T> {
    /// An empty table, initialised in place.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `rverbs_xa_init_irq` initialises the xarray in place.
            xa <- Opaque::ffi_init(|xa| unsafe { bindings::rverbs_xa_init_irq(xa) }),
            _values: PhantomData,
        })
    }

    /// A node for `value`, allocated with `GFP_KERNEL` if `may_sleep`,
    /// else `GFP_ATOMIC`.
    fn node(value: T, may_sleep: bool) -> Result<*mut Node<T>> {
        let gfp = if may_sleep { GFP_KERNEL } else { GFP_ATOMIC };
        let node = KBox::new(
            Node {
                head: Opaque::uninit(),
                value,
            },
            gfp,
        )?;
        Ok(KBox::into_raw(node))
    }

    /// Frees `node` a grace period from now.
    ///
    /// # Safety
    ///
    /// `node` comes from [`RcuValues::node`], is in no table and is freed
    /// by no one else.
    unsafe fn free_after_gp(node: *mut Node<T>) {
        // SAFETY: The caller's promise: a `KBox` allocation (kmalloc) of
        // ours, whose `head` lies within it; `T` is `Copy`, so nothing is
        // to be dropped.
        unsafe { bindings::rverbs_kfree_after_gp(node.cast(), (*node).head.get()) };
    }

    /// Publishes `value` at `n`: `EBUSY` if `n` is taken, `ENOMEM`. Any
    /// context; sleeps to allocate only if `may_sleep`.
    pub(crate) fn insert(&self, n: u32, value: T, may_sleep: bool) -> Result {
        let node = Self::node(value, may_sleep)?;
        // SAFETY: The xarray is initialised (type invariant); the entry is
        // an allocation the table owns from here on (type invariant).
        let ret = unsafe {
            bindings::rverbs_xa_insert_any(self.xa.get(), index(n), node.cast(), may_sleep)
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: Not inserted: the allocation is still ours.
            drop(unsafe { KBox::from_raw(node) });
            return Err(e);
        }
        Ok(())
    }

    /// Publishes `value` at `n` in place of the value there: `false`, and
    /// nothing published, if there is none; `ENOMEM`. Any context; sleeps
    /// to allocate only if `may_sleep`.
    pub(crate) fn replace(&self, n: u32, value: T, may_sleep: bool) -> Result<bool> {
        let node = Self::node(value, may_sleep)?;
        // SAFETY: As in `insert`.
        let old = unsafe {
            bindings::rverbs_xa_replace_any(self.xa.get(), index(n), node.cast(), may_sleep)
        };
        // SAFETY: `xa_store` returns the old entry or an error entry.
        let failed = unsafe { bindings::xa_err(old) } != 0;
        if failed || old.is_null() {
            // SAFETY: Not stored: the allocation is still ours.
            drop(unsafe { KBox::from_raw(node) });
            return if failed { Err(ENOMEM) } else { Ok(false) };
        }
        // SAFETY: An entry of the table (type invariant), now unpublished;
        // readers may still see it for a grace period.
        unsafe { Self::free_after_gp(old.cast()) };
        Ok(true)
    }

    /// Unpublishes the value at `n`: `false` if there was none. Any
    /// context.
    pub(crate) fn remove(&self, n: u32) -> bool {
        // SAFETY: The xarray is initialised.
        let old = unsafe { bindings::rverbs_xa_erase_any(self.xa.get(), index(n)) };
        if old.is_null() {
            return false;
        }
        // SAFETY: An entry of the table (type invariant), now unpublished.
        unsafe { Self::free_after_gp(old.cast()) };
        true
    }

    /// A copy of the value at `n`, as some moment of the read-side
    /// critical section of `_guard` saw it. Any context.
    pub(crate) fn get(&self, _guard: &rcu::Guard, n: u32) -> Option<T> {
        // SAFETY: The xarray is initialised; `xa_load` is callable in any
        // context.
        let node = unsafe { bindings::xa_load(self.xa.get(), index(n)) }.cast::<Node<T>>();
        if node.is_null() {
            return None;
        }
        // SAFETY: An entry of the table (type invariant), published
        // complete (the xarray's store orders it), and freed only a grace
        // period after it was unpublished: not before `_guard` is dropped.
        Some(unsafe { (*node).value })
    }
}

#[pinned_drop]
impl<T: Copy + Send + Sync> PinnedDrop for RcuValues<T> {
    fn drop(self: Pin<&mut Self>) {
        let xa = self.xa.get();
        let mut at: usize = 0;
        loop {
            // SAFETY: The xarray is initialised; `at` is ours.
            let entry = unsafe { bindings::xa_find(xa, &mut at, usize::MAX, bindings::XA_PRESENT) };
            if entry.is_null() {
                break;
            }
            // SAFETY: The xarray is initialised; `at` holds an entry.
            unsafe { bindings::rverbs_xa_erase_any(xa, at) };
            // SAFETY: An entry of the table (type invariant), unpublished.
            unsafe { Self::free_after_gp(entry.cast()) };
        }
        // SAFETY: Empty now; frees the xarray's nodes.
        unsafe { bindings::xa_destroy(xa) };
    }
}
