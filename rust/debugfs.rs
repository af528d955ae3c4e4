// SPDX-License-Identifier: GPL-2.0

//! The debugfs directory of rverbs, `/sys/kernel/debug/rverbs/`.
//!
//! Everything in it is removed when the [`Root`] is dropped, that is when
//! the module unloads: nothing outlives the module.

use core::fmt;
use kernel::{
    debugfs::{
        Dir,
        File, //
    },
    prelude::*,
    str::CStr,
};

/// The text of the `version` file.
struct Version;

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The debugfs file adds the newline.
        write!(f, "{}", crate::VERSION)
    }
}

/// `/sys/kernel/debug/rverbs/` and the files in it.
#[pin_data]
pub(crate) struct Root {
    #[pin]
    version: File<Version>,
    #[pin]
    counters: File<crate::verbs::stats::Counters>,
    // Dropped after the files above: a directory goes when its last
    // child has gone.
    dir: Dir,
}

impl Root {
    /// Creates the directory and its files.
    pub(crate) fn new() -> impl PinInit<Self> {
        let dir = Dir::new(c"rverbs");
        pin_init!(Self {
            version <- dir.read_only_file(c"version", Version),
            counters <- dir.read_only_file(c"counters", crate::verbs::stats::Counters),
            dir,
        })
    }

    /// Lets [`subdir`] make directories in this one, until
    /// [`Root::unpublish`]. Called once, when the module loads.
    pub(crate) fn publish(&self) {
        // SAFETY: Called once, from the module initialiser, before any use
        // of `PUBLISHED`.
        unsafe { PUBLISHED.init() };
        *PUBLISHED.lock() = Some(self.dir.clone());
    }

    /// Ends [`Root::publish`]: [`subdir`] makes nothing any more.
    pub(crate) fn unpublish(&self) {
        *PUBLISHED.lock() = None;
    }
}

kernel::global_lock! {
    // SAFETY: Initialised by `Root::publish` in the module initialiser,
    // before anything can call `subdir`.
    unsafe(uninit) static PUBLISHED: Mutex<Option<Dir>> = None;
}

/// A directory `/sys/kernel/debug/rverbs/<name>/` (one per rv device),
/// removed when the returned handle and its files are dropped; `None`
/// outside [`Root::publish`] .. [`Root::unpublish`].
pub(crate) fn subdir(name: &CStr) -> Option<Dir> {
    PUBLISHED.lock().as_ref().map(|root| root.subdir(name))
}
