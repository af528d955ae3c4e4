// SPDX-License-Identifier: GPL-2.0

//! RDMA drivers written in Rust: the driver side of ib_core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A driver implements [`Driver`], a `#[vtable]` trait, and its operations
//! table is the compile-time constant [`vtable::Vtable::OPS`] built from it, as
//! `file_operations` are built for a `MiscDevice` or `phy_driver` for a
//! `phy::Driver`: an operation the driver does not implement is `NULL` in
//! the table, so ib_core and uverbs see exactly what the driver supports.
//!
//! - [`ops`]: the [`Driver`] trait;
//! - [`attrs`]: what the driver reports (device, port, immutable port data);
//! - [`vtable`]: the table and the trampolines ib_core calls;
//! - [`object`]: how ib_core's objects carry the driver's data;
//! - [`unsupported`]: what ib_core requires of a kverbs provider and a
//!   driver does not implement (QPs, CQs, `poll_cq`, `post_recv`), failing
//!   with `EOPNOTSUPP`;
//! - [`device`]: a device ([`DriverDevice`]) and its allocation;
//! - [`registry`]: the devices of a driver, registered and unregistered;
//! - [`wr`]: the chains of work requests a driver is given to post.
//!
//! Life of a device:
//!
//! 1. [`DriverDevice::alloc`] allocates it (`_ib_alloc_device`) with the
//!    driver's data, initialised in place, and the driver's operations;
//! 2. [`Registry::register`] registers it (`ib_register_device`) and keeps
//!    its memory; from then on ib_core owns it;
//! 3. whoever unregisters it (`rdma link del`, the netdev going away, the
//!    registry when the driver goes, `ib_unregister_driver` of a module
//!    that shares the driver id) ends in `ops.dealloc_driver`, which drops
//!    the data; the registry waits for that before the module can go.
//!
//! Every object ib_core allocates for the driver (ucontext, PD, AH, XRCD,
//! CQ, QP; an MR the trampolines allocate themselves) is an
//! [`object::Object`]: ib_core's struct first, then the driver's data,
//! initialised in place by the constructor's `PinInit` and dropped after
//! the destructor. For CQs and QPs this layer keeps its own part beside
//! the driver's data: a CQ's handlers, which the driver's notifiers call
//! and this layer revokes when the CQ goes ([`crate::rdma::cq`]), and the
//! rings the object offers to its process, whose mmap entries this layer
//! removes when the object goes ([`crate::rdma::mmap::Offers`]), so that
//! what a driver keeps of them (a notifier, a [`crate::rdma::rxe_abi::ring::UserQueue`])
//! names neither the `ib_cq` nor the ucontext and may outlive both.
//!
//! # Example
//!
//! [`example`] is a driver with one port, protection domains and the post
//! verbs, compiled with the module (its operations table is built at
//! compile time, as every driver's), so it cannot go stale. Its core:
//!
//! ```ignore
//! struct Example;
//!
//! #[vtable]
//! impl Driver for Example {
//!     type Device = ();          // may hold a SpinLock: initialised in place
//!     type Pd = ();
//!     type Qp = ExampleQp;
//!     // ... the other object types
//!     const DRIVER_ID: u32 = bindings::rdma_driver_id_RDMA_DRIVER_UNKNOWN;
//!     const UVERBS_ABI_VER: u32 = 1;
//!
//!     fn query_device(_dev: &DriverDevice<Self>) -> Result<DeviceAttrs> { ... }
//!     fn query_port(_dev: &DriverDevice<Self>, _port: u32) -> Result<PortAttrs> { ... }
//!     fn get_port_immutable(_dev: &DriverDevice<Self>, _port: u32) -> Result<PortImmutable> { ... }
//!     fn alloc_pd(_dev: &DriverDevice<Self>, _udata: Option<&Udata>) -> impl PinInit<(), Error> {
//!         Ok(())
//!     }
//!     fn post_send<'a>(
//!         _dev: &DriverDevice<Self>,
//!         qp: &ExampleQp,
//!         wrs: SendWrs<'a, Self>,
//!     ) -> core::result::Result<(), Rejected<SendWr<'a, Self>>> {
//!         for wr in wrs.iter() {
//!             let len = check_send(&wr).map_err(|error| Rejected { error, at: Some(wr) })?;
//!             // ... take the request
//!         }
//!         Ok(())
//!     }
//! }
//! ```
//!
//! Registered, its device lives as above:
//!
//! ```ignore
//! let registry = KBox::pin_init(Registry::<Example>::new(), GFP_KERNEL)?;
//! let dev = DriverDevice::<Example>::alloc(&THIS_MODULE, ())?;
//! let registered = registry.register(dev, c"example0", &info)?;
//! ```

pub(crate) mod attrs;
pub(crate) mod device;
mod example;
pub(crate) mod object;
pub(crate) mod ops;
pub(crate) mod registry;
pub(crate) mod unsupported;
pub(crate) mod vtable;
pub(crate) mod wr;

pub(crate) use self::{
    device::{
        DeviceGet,
        DeviceInfo,
        DeviceRef,
        DriverDevice, //
    },
    ops::Driver,
    registry::Registry,
};
