// SPDX-License-Identifier: GPL-2.0

//! The rv0 driver and the data of its devices ([`data`]); its operations
//! are in [`super::driver`].

use super::{
    ah::AhTable,
    cq,
    ids::Ids,
    mr::{
        self,
        MrCore, //
    },
    mw::{
        self,
        MwCore, //
    },
    port::{
        PortBinding,
        Ports, //
    },
    qp::{
        self,
        QpCore, //
    },
    srq,
    wire::Counters,
};
use crate::{
    net::device::{
        NetDevice,
        PublishedNetDevice,
        Rtnl, //
    },
    rdma::{ah_attr::AddressVector, driver::DriverDevice, gid_cache::GidCache, table::RcuTable},
};
use kernel::{
    debugfs::{
        Dir,
        File,
        Writer, //
    },
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        },
        rcu,
        Arc,
        Mutex, //
    },
};

/// The driver.
pub(crate) struct Rv;

/// Entries of the GID table of the port: room for the v1 and v2 GIDs of
/// the netdev's addresses and those of VLANs on it.
pub(crate) const GID_TABLE_LEN: u32 = 32;

mod data;
pub(crate) use data::{
    Limits,
    SwAh,
    SwDevice,
    SwObject,
    SwPd, //
};
