// SPDX-License-Identifier: GPL-2.0

//! The C ABI of the Rust verbs core, for `rverbs_takeover.ko`.
//!
//! [`exports`] defines `rverbs_rust_create_user_ah` and its twins with the
//! exact signatures of the ib_core functions they replace;
//! `takeover/exports.c` defines and exports `rverbs_create_user_ah` and its
//! twins (`include/rverbs.h`), C functions that the kernel's tracers see,
//! which call them; `takeover/rverbs_takeover.c` is the livepatch that
//! patches ib_core onto those.

pub(crate) mod exports;
