// SPDX-License-Identifier: GPL-2.0

//! The debugfs directory of rverbs, `/sys/kernel/debug/rverbs/`.
//!
//! The module owns the [`Root`]; rv devices get their directories in it
//! from the link type, which holds the directory too. Everything in it is
//! removed when the last of them is dropped, that is when the module
//! unloads or fails to load: nothing outlives the module.

use core::fmt;
use kernel::{
    debugfs::{
        Dir,
        File,
        Writer, //
    },
    prelude::*,
};

/// The text of the `version` file.
struct Version;

impl Writer for Version {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", crate::VERSION)
    }
}

/// The files of `/sys/kernel/debug/rverbs/`.
#[pin_data]
pub(crate) struct Root {
    #[pin]
    version: File<Version>,
    #[pin]
    counters: File<crate::verbs::stats::Counters>,
    // Dropped after the files above: a directory goes when its last
    // child has gone.
    _dir: Dir,
}

impl Root {
    /// The files of `dir` (which is `/sys/kernel/debug/rverbs/`).
    pub(crate) fn new(dir: Dir) -> impl PinInit<Self> {
        pin_init!(Self {
            version <- dir.read_only_file(c"version", Version),
            counters <- dir.read_only_file(c"counters", crate::verbs::stats::Counters),
            _dir: dir,
        })
    }
}
