// SPDX-License-Identifier: GPL-2.0

//! rverbs: the RDMA verbs core for address handles and XRC domains in Rust.
//!
//! This is the crate root of `rverbs.ko`. It declares the module and the
//! crate's modules; everything else lives in them:
//!
//! - [`bindings`] holds the build-time generated bindings of the headers
//!   in `include/` (the C helpers, later ib_core), for the abstraction layer
//!   only;
//! - [`utsname`] tells the running kernel's identity;
//! - [`debugfs`] owns `/sys/kernel/debug/rverbs/`.

use kernel::prelude::*;

mod bindings;
mod debugfs;
mod utsname;

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
}

impl kernel::Module for Rverbs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = KBox::pin_init(debugfs::Root::new(), GFP_KERNEL)?;
        pr_info!(
            "rverbs {} loaded (kernel {})\n",
            VERSION,
            utsname::release()
        );
        Ok(Rverbs { _debugfs: debugfs })
    }
}

impl Drop for Rverbs {
    fn drop(&mut self) {
        pr_info!("rverbs {} unloaded\n", VERSION);
    }
}
