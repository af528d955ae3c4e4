// SPDX-License-Identifier: GPL-2.0

//! The example of [`crate::rdma::driver`], compiled with the module so that
//! it cannot go stale: a driver with one RoCE port and protection domains,
//! and the post verbs of a software device that takes a kernel consumer's
//! UD work requests (its QPs' creation, a driver's own matter, is left
//! out). Its operations table is built at compile time, which is the check;
//! it is never registered and nothing of it runs.

use super::{
    attrs::{
        DeviceAttrs,
        Mtu,
        PhysState,
        PortAttrs,
        PortImmutable,
        PortState,
        PORT_ROCE_V2_NO_MAD,
        SPEED_SDR,
        WIDTH_1X, //
    },
    vtable::Vtable,
    wr::{
        RecvWr,
        RecvWrs,
        Rejected,
        SendWr,
        SendWrs, //
    },
    Driver,
    DriverDevice, //
};
use crate::{
    bindings,
    errno::eopnotsupp,
    rdma::{
        udata::Udata,
        wr::{
            SendFlag,
            WrOpcode, //
        },
    },
};
use core::sync::atomic::{
    AtomicU32,
    AtomicU64,
    Ordering, //
};
use kernel::prelude::*;

/// The driver: its operations are the `impl Driver` below.
struct Example;

/// A QP's data: what it was given to send (a device would queue a copy of
/// each request; the request is the consumer's again after the call).
#[derive(Default)]
struct ExampleQp {
    /// Send requests taken.
    sends: AtomicU64,
    /// Their bytes.
    bytes: AtomicU64,
    /// Receive requests taken.
    recvs: AtomicU64,
    /// The ID of the last send request taken, its Q_Key and immediate data.
    last_send: AtomicU64,
    last_qkey: AtomicU32,
    last_imm: AtomicU32,
    /// The ID of the last receive request taken.
    last_recv: AtomicU64,
}

/// The scatter/gather entries a request may have.
const MAX_SGE: usize = 4;

/// The largest message: one 4096-byte MTU.
const MAX_MSG: u64 = 4096;

#[vtable]
impl Driver for Example {
    type Device = ();
    type Ucontext = ();
    type Pd = ();
    type Ah = ();
    type Xrcd = ();
    type Cq = ();
    type Qp = ExampleQp;
    type Mr = ();
    type Srq = ();
    type Mw = ();

    const DRIVER_ID: u32 = bindings::rdma_driver_id_RDMA_DRIVER_UNKNOWN;
    const UVERBS_ABI_VER: u32 = 1;

    fn query_device(_dev: &DriverDevice<Self>) -> Result<DeviceAttrs> {
        Ok(DeviceAttrs::default())
    }

    fn query_port(_dev: &DriverDevice<Self>, _port: u32) -> Result<PortAttrs> {
        Ok(PortAttrs {
            state: PortState::Active,
            phys_state: PhysState::LinkUp,
            max_mtu: Mtu::Mtu4096,
            active_mtu: Mtu::Mtu1024,
            phys_mtu: 1500,
            gid_tbl_len: 16,
            pkey_tbl_len: 1,
            max_msg_sz: 4096,
            port_cap_flags: 0,
            active_speed: SPEED_SDR,
            active_width: WIDTH_1X,
        })
    }

    fn get_port_immutable(_dev: &DriverDevice<Self>, _port: u32) -> Result<PortImmutable> {
        Ok(PortImmutable {
            pkey_tbl_len: 1,
            gid_tbl_len: 16,
            core_cap_flags: PORT_ROCE_V2_NO_MAD,
            max_mad_size: 0,
        })
    }

    fn alloc_pd(_dev: &DriverDevice<Self>, _udata: Option<&Udata>) -> impl PinInit<(), Error> {
        Ok(())
    }

    fn post_send<'a>(
        _dev: &DriverDevice<Self>,
        qp: &ExampleQp,
        wrs: SendWrs<'a, Self>,
    ) -> core::result::Result<(), Rejected<SendWr<'a, Self>>> {
        for wr in wrs.iter() {
            // Every request before the one refused is posted.
            let len = check_send(&wr).map_err(|error| Rejected {
                error,
                at: Some(wr),
            })?;
            qp.sends.fetch_add(1, Ordering::Relaxed);
            qp.bytes.fetch_add(len, Ordering::Relaxed);
            qp.last_send.store(wr.wr_id(), Ordering::Relaxed);
            if let Some(ud) = wr.ud() {
                qp.last_qkey.store(ud.remote_qkey(), Ordering::Relaxed);
            }
            if wr.opcode().is_some_and(WrOpcode::has_imm) {
                qp.last_imm.store(wr.imm_data(), Ordering::Relaxed);
            }
        }
        Ok(())
    }

    fn post_recv<'a>(
        _dev: &DriverDevice<Self>,
        qp: &ExampleQp,
        wrs: RecvWrs<'a>,
    ) -> core::result::Result<(), Rejected<RecvWr<'a>>> {
        // An empty chain is a consumer's mistake here (no ring to take
        // requests from).
        if wrs.is_empty() {
            return Err(EINVAL.into());
        }
        for wr in wrs.iter() {
            if wr.sges().len() > MAX_SGE {
                return Err(Rejected {
                    error: EINVAL,
                    at: Some(wr),
                });
            }
            qp.recvs.fetch_add(1, Ordering::Relaxed);
            qp.last_recv.store(wr.wr_id(), Ordering::Relaxed);
        }
        Ok(())
    }
}

/// What a software device checks of a UD send request before it takes
/// it: the message's length, or why not.
fn check_send(wr: &SendWr<'_, Example>) -> Result<u64> {
    if wr.send_flags().unknown() != 0 {
        return Err(EINVAL);
    }
    match wr.opcode() {
        Some(WrOpcode::Send | WrOpcode::SendWithImm) => {}
        // Datagrams invalidate no key.
        Some(WrOpcode::SendWithInv) if wr.invalidate_rkey() != 0 => return Err(eopnotsupp()),
        _ => return Err(EINVAL),
    }
    let sges = wr.sges();
    if sges.len() > MAX_SGE {
        return Err(EINVAL);
    }
    let len = sges.iter().map(|s| u64::from(s.length)).sum::<u64>();
    if len > MAX_MSG && !wr.send_flags().contains(SendFlag::Inline) {
        return Err(EMSGSIZE);
    }
    let ud = wr.ud().ok_or(EINVAL)?;
    // The AH must be this device's; QP 0 takes no datagram, and the port
    // has one P_Key.
    ud.ah().ok_or(EINVAL)?;
    if ud.remote_qpn() == 0 || ud.pkey_index() != 0 {
        return Err(EINVAL);
    }
    Ok(len)
}

// The check: the operations table, built at compile time as a registered
// driver's is.
const _: &bindings::ib_device_ops = &Vtable::<Example>::OPS;
