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
//! - [`takeover`] is its C ABI, for the livepatch `rverbs_takeover.ko`.

use kernel::prelude::*;

mod debugfs;
mod net;
mod rdma;
mod takeover;
mod verbs;

/// Version of rverbs, reported at load time and in debugfs.
pub(crate) const VERSION: &str = "0.1.0";

module! {
    type: Rverbs,
    name: "rverbs",
    authors: ["rverbs developers"],
    description: "RDMA verbs core (address handles, XRC domains) in Rust",
    license: "GPL",
}

/// The loaded module: owns everything that lives as long as it does.
struct Rverbs {
    _debugfs: Pin<KBox<debugfs::Root>>,
    _neigh_updates: net::neighbour::Updates,
}

impl kernel::Module for Rverbs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let neigh_updates = net::neighbour::Updates::register()?;
        let debugfs = KBox::pin_init(debugfs::Root::new(), GFP_KERNEL)?;
        pr_info!("rverbs {} loaded\n", VERSION);
        Ok(Rverbs {
            _debugfs: debugfs,
            _neigh_updates: neigh_updates,
        })
    }
}

impl Drop for Rverbs {
    fn drop(&mut self) {
        pr_info!("rverbs {} unloaded\n", VERSION);
    }
}
