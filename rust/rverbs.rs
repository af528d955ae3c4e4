// SPDX-License-Identifier: GPL-2.0

//! rverbs: the RDMA verbs core for address handles and XRC domains in Rust.
//!
//! This is the crate root of `rverbs.ko`. It declares the module and the
//! crate's modules; everything else lives in them:
//!
//! - [`debugfs`] owns `/sys/kernel/debug/rverbs/`;
//! - [`rdma`] and [`net`] are the safe abstractions over ib_core, routes
//!   and neighbours: every `unsafe` of the verbs core is there;
//! - [`verbs`] is the verbs core for address handles and XRC domains;
//! - [`takeover`] is its C ABI, for the livepatch `rverbs_takeover.ko`;
//! - [`sw`] is rv0, the software RoCE device (link type `rverbs`).

use kernel::prelude::*;

mod bindings;
mod debugfs;
mod errno;
mod net;
mod rdma;
#[forbid(unsafe_code)]
mod sw;
mod takeover;
#[forbid(unsafe_code)]
mod verbs;

/// Version of rverbs, reported at load time and in debugfs.
pub(crate) const VERSION: &str = "0.1.0";

module! {
    type: Rverbs,
    name: "rverbs",
    authors: ["rverbs developers"],
    description: "RDMA verbs core (address handles, XRC domains) in Rust",
    license: "GPL",
    alias: ["rdma-link-rverbs"],
    params: {
        max_pd: u32 {
            default: 32768,
            description: "Protection domains per rv device (set before rdma link add)",
        },
        max_ah: u32 {
            default: 32767,
            description: "Address handles per rv device (set before rdma link add)",
        },
        max_xrcd: u32 {
            default: 1024,
            description: "XRC domains per rv device (set before rdma link add)",
        },
    },
}

/// The loaded module: owns everything that lives as long as it does,
/// initialised in place (its parts hold locks and registrations).
#[pin_data(PinnedDrop)]
struct Rverbs {
    // Dropped first: removes the rv devices, which use the rest.
    #[pin]
    sw: sw::link::SoftRoce,
    #[pin]
    _debugfs: debugfs::Root,
    #[pin]
    _neigh_updates: net::neighbour::NeighUpdates,
}

impl kernel::InPlaceModule for Rverbs {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        let dir = kernel::debugfs::Dir::new(c"rverbs");
        try_pin_init!(Self {
            _neigh_updates <- net::neighbour::NeighUpdates::register(),
            _debugfs <- debugfs::Root::new(dir.clone()),
            sw <- sw::link::SoftRoce::new(dir),
        }? Error)
        .pin_chain(|_| {
            pr_info!("rverbs {} loaded\n", VERSION);
            Ok(())
        })
    }
}

#[pinned_drop]
impl PinnedDrop for Rverbs {
    fn drop(self: Pin<&mut Self>) {
        pr_info!("rverbs {} unloading\n", VERSION);
    }
}
