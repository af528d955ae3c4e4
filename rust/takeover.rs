// SPDX-License-Identifier: GPL-2.0

//! The C ABI of the Rust verbs core, for `rverbs_takeover.ko`.
//!
//! [`exports`] defines `rverbs_create_user_ah` and its twins with the
//! exact signatures of the ib_core functions they replace
//! (`include/rverbs.h`); `takeover/exports.c` exports them and
//! `takeover/rverbs_takeover.c` is the livepatch that patches ib_core onto
//! them.

pub(crate) mod exports;
