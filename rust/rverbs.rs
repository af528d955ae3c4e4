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
mod net;
mod rdma;
mod sw;
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

/// The loaded module: owns everything that lives as long as it does.
struct Rverbs {
    // Dropped first (in `drop`): removes the rv devices, which use the
    // rest.
    sw: Option<sw::link::SoftRoce>,
    _debugfs: Pin<KBox<debugfs::Root>>,
    _neigh_updates: Pin<KBox<net::neighbour::NeighUpdates>>,
}

impl kernel::Module for Rverbs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let neigh_updates = KBox::pin_init(net::neighbour::NeighUpdates::register(), GFP_KERNEL)?;
        let debugfs = KBox::pin_init(debugfs::Root::new(), GFP_KERNEL)?;
        debugfs.publish();
        rdma::driver::init();
        rdma::link::init();
        let sw = sw::link::SoftRoce::register()?;
        pr_info!("rverbs {} loaded\n", VERSION);
        Ok(Rverbs {
            sw: Some(sw),
            _debugfs: debugfs,
            _neigh_updates: neigh_updates,
        })
    }
}

impl Drop for Rverbs {
    fn drop(&mut self) {
        drop(self.sw.take());
        self._debugfs.unpublish();
        pr_info!("rverbs {} unloaded\n", VERSION);
    }
}
