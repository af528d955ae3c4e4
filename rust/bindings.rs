// SPDX-License-Identifier: GPL-2.0

//! Bindings for the headers in `include/` that the kernel crate lacks.
//!
//! Generated at build time by `scripts/bindgen.sh` from
//! `include/rverbs_bindings.h` with the kernel's own bindgen parameters, so
//! that layouts match the configuration of the kernel built against.
//!
//! Not to be used directly outside the abstraction layer: code above it
//! uses the safe types that wrap these items.

#![allow(
    dead_code,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks,
    unnecessary_transmutes
)]

// Every type the allowlisted headers mention but do not define is the
// kernel crate's: items generated here take precedence over the glob.
#[allow(unused_imports)]
pub(crate) use kernel::bindings::*;
#[allow(unused_imports)]
use kernel::ffi;
#[allow(unused_imports)]
use pin_init::{
    MaybeZeroable,
    Zeroable, //
};

include!("bindings_generated.rs");
