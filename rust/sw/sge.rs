// SPDX-License-Identifier: GPL-2.0

//! The buffers of a work request: its SGEs walked from a byte of the
//! message on, each piece found in the memory regions of the QP's PD.
//! One walk for every copy: a send's payload gathered into a packet, a
//! SEND's written into a receive, a READ response's or an atomic's value
//! into a send's buffers.

use crate::rdma::{
    driver::DriverDevice,
    wc::WcStatus,
    wr::Sge, //
};
use crate::sw::{
    device::Rv,
    mr, //
};
use kernel::sync::rcu;

/// Walks the `n` SGEs (`sge(i)`) over bytes `[off, off + len)` of the
/// message, calling `each` with each piece (its address, length and key)
/// and where it starts in those bytes: the bytes walked, fewer than `len`
/// when the SGEs end first. `bad` for an SGE that cannot be read or whose
/// address overflows, else the first error of `each`.
fn walk<E: Copy>(
    n: u32,
    sge: impl Fn(u32) -> Option<Sge>,
    off: usize,
    len: usize,
    bad: E,
    mut each: impl FnMut(Sge, usize) -> Result<(), E>,
) -> Result<usize, E> {
    let mut skip = off;
    let mut done = 0usize;
    for i in 0..n {
        if done == len {
            break;
        }
        let s = sge(i).ok_or(bad)?;
        // CAST: A `u32`.
        let sge_len = s.length as usize;
        if skip >= sge_len {
            skip -= sge_len;
            continue;
        }
        let take = (sge_len - skip).min(len - done);
        // CAST: `skip` is below the SGE's `u32` length.
        let addr = s.addr.checked_add(skip as u64).ok_or(bad)?;
        // CAST: At most the SGE's `u32` length.
        let piece = Sge {
            addr,
            length: take as u32,
            lkey: s.lkey,
        };
        each(piece, done)?;
        done += take;
        skip = 0;
    }
    Ok(done)
}

/// Fills `buf` from byte `off` of the message in the `n` SGEs `sge(i)`,
/// in the regions of PD `pd`: the bytes read (fewer at the SGEs' end), or
/// `IB_WC_LOC_QP_OP_ERR` for a bad SGE or region.
pub(crate) fn gather(
    dev: &DriverDevice<Rv>,
    pd: u64,
    n: u32,
    sge: impl Fn(u32) -> Option<Sge>,
    off: usize,
    buf: &mut [u8],
) -> Result<usize, WcStatus> {
    let guard = rcu::read_lock();
    let bad = WcStatus::LocQpOpErr;
    let len = buf.len();
    walk(n, sge, off, len, bad, |s, at| {
        let mr = mr::find(dev, &guard, s.lkey).map_err(|_| bad)?;
        let mr_off = mr
            .check(pd, false, s.addr, u64::from(s.length))
            .map_err(|_| bad)?;
        // CAST: A `u32`.
        mr.read(mr_off, &mut buf[at..at + s.length as usize])
            .map_err(|_| bad)
    })
}

/// Writes `payload` at byte `off` of the message in the `n` SGEs
/// `sge(i)`, in the regions of PD `pd` with local write access:
/// `IB_WC_LOC_QP_OP_ERR` for an SGE that cannot be read,
/// `IB_WC_LOC_PROT_ERR` for a region that may not be written there,
/// `IB_WC_LOC_LEN_ERR` past the SGEs' end.
pub(crate) fn scatter(
    dev: &DriverDevice<Rv>,
    guard: &rcu::Guard,
    pd: u64,
    n: u32,
    sge: impl Fn(u32) -> Option<Sge>,
    off: usize,
    payload: &[u8],
) -> Result<(), WcStatus> {
    let prot = WcStatus::LocProtErr;
    let done = walk(n, sge, off, payload.len(), WcStatus::LocQpOpErr, |s, at| {
        let mr = mr::find(dev, guard, s.lkey).map_err(|_| prot)?;
        let mr_off = mr
            .check(pd, true, s.addr, u64::from(s.length))
            .map_err(|_| prot)?;
        // CAST: A `u32`.
        mr.write(mr_off, &payload[at..at + s.length as usize])
            .map_err(|_| prot)
    })?;
    if done < payload.len() {
        return Err(WcStatus::LocLenErr);
    }
    Ok(())
}
