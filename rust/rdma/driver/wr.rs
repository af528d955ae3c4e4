// SPDX-License-Identifier: GPL-2.0

//! The work requests a driver is given to post: a chain of
//! `struct ib_send_wr` ([`SendWrs`]) or `struct ib_recv_wr` ([`RecvWrs`]),
//! as kernel consumers post them (`ib_post_send`, `ib_post_recv`,
//! `ib_post_srq_recv`) and as uverbs builds them from a `post_send` or
//! `post_recv` command. A driver that stops at a request answers which
//! ([`Rejected`]): ib_core's `bad_wr`, the first request not posted.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! The views are valid for the call only: a driver copies what it keeps
//! (a kernel consumer may reuse its requests as soon as the call returns).

use super::{
    object::Object,
    Driver, //
};
use crate::{
    bindings,
    rdma::wr::{
        SendFlags,
        Sge,
        WrOpcode, //
    },
};
use core::marker::PhantomData;
use kernel::prelude::*;

/// Why a post stopped, and where: the first request not posted (`None`:
/// the first of the chain, nothing was posted). Every request before it
/// was posted.
pub(crate) struct Rejected<W> {
    /// The error the post returns.
    pub(crate) error: Error,
    /// The first request not posted.
    pub(crate) at: Option<W>,
}

impl<W> From<Error> for Rejected<W> {
    /// The whole chain refused with `error`.
    fn from(error: Error) -> Self {
        Self { error, at: None }
    }
}

/// The scatter/gather entries of a request, `num_sge` at `sg_list`.
///
/// # Safety
///
/// `sg_list` points at `num_sge` entries valid for `'a`, when `num_sge` is
/// positive.
unsafe fn sges<'a>(sg_list: *const bindings::ib_sge, num_sge: c_int) -> &'a [Sge] {
    match usize::try_from(num_sge) {
        Ok(n) if n > 0 && !sg_list.is_null() => {
            // SAFETY: `n` entries valid for `'a` (the caller's promise),
            // laid out as `Sge` (asserted in `rdma::wr`).
            unsafe { core::slice::from_raw_parts(sg_list.cast::<Sge>(), n) }
        }
        _ => &[],
    }
}

/// A chain of send work requests given to `post_send`, for the QP of a
/// driver `T`.
///
/// # Invariants
///
/// `head` is null or the first of a chain of `ib_send_wr` ended by a null
/// `next`, each valid and unchanged for `'a` with its scatter/gather
/// entries; when `ud` is true each is the `wr` of an `ib_ud_wr` whose AH,
/// if of `device`, is an AH of `T`'s table, live for `'a`.
pub(crate) struct SendWrs<'a, T: Driver> {
    head: *const bindings::ib_send_wr,
    ud: bool,
    device: *mut bindings::ib_device,
    _list: PhantomData<(&'a bindings::ib_send_wr, T)>,
}

impl<'a, T: Driver> SendWrs<'a, T> {
    /// The chain at `head` for the QP `qp`.
    ///
    /// # Safety
    ///
    /// `qp` is a live QP of `T`'s table; `head` is null or a chain as the
    /// type's invariants say, its UD requests (on a UD or GSI QP: ib_core's
    /// rule) `ib_ud_wr`s whose AHs live for `'a`.
    pub(super) unsafe fn from_raw(
        qp: *const bindings::ib_qp,
        head: *const bindings::ib_send_wr,
    ) -> Self {
        // SAFETY: `qp` is live (the caller's promise).
        let (ty, device) = unsafe { ((*qp).qp_type, (*qp).device) };
        let ud = ty == bindings::ib_qp_type_IB_QPT_UD || ty == bindings::ib_qp_type_IB_QPT_GSI;
        // INVARIANT: The caller's promise.
        Self {
            head,
            ud,
            device,
            _list: PhantomData,
        }
    }

    /// The requests, in order (none for a doorbell: soft-RoCE's provider
    /// posts into the ring it maps and calls `post_send` with no request).
    pub(crate) fn iter(&self) -> impl Iterator<Item = SendWr<'a, T>> + 'a {
        let (ud, device) = (self.ud, self.device);
        let mut next = self.head;
        core::iter::from_fn(move || {
            // SAFETY: Null or a request of the chain, valid for `'a` (type
            // invariant).
            let wr = unsafe { next.as_ref() }?;
            next = wr.next;
            Some(SendWr {
                wr,
                ud,
                device,
                _driver: PhantomData,
            })
        })
    }
}

/// One send work request of a [`SendWrs`] chain.
pub(crate) struct SendWr<'a, T: Driver> {
    wr: &'a bindings::ib_send_wr,
    ud: bool,
    device: *mut bindings::ib_device,
    _driver: PhantomData<T>,
}

impl<T: Driver> Clone for SendWr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Driver> Copy for SendWr<'_, T> {}

impl<'a, T: Driver> SendWr<'a, T> {
    /// The consumer's ID of the request (`wr_id`; for a consumer that
    /// completes through `wr_cqe`, the pointer's bits).
    pub(crate) fn wr_id(&self) -> u64 {
        self.wr.__bindgen_anon_1.bindgen_union_field
    }

    /// The operation; `None` for a number that names none.
    pub(crate) fn opcode(&self) -> Option<WrOpcode> {
        WrOpcode::from_raw(self.wr.opcode)
    }

    pub(crate) fn send_flags(&self) -> SendFlags {
        // CAST: The flags' bits, passed as `int`.
        SendFlags::from_bits(self.wr.send_flags as u32)
    }

    /// The scatter/gather entries (none for inline data, whose bytes they
    /// describe all the same: the consumer's memory, readable for the call).
    pub(crate) fn sges(&self) -> &'a [Sge] {
        // SAFETY: The entries of a request of the chain (type invariant).
        unsafe { sges(self.wr.sg_list, self.wr.num_sge) }
    }

    /// The immediate data (big endian as given), for an operation with
    /// immediate data.
    pub(crate) fn imm_data(&self) -> u32 {
        // SAFETY: Both members of the union are a `u32`.
        unsafe { *self.wr.ex.imm_data.as_ref() }
    }

    /// The key to invalidate, for `SEND_WITH_INV` and `LOCAL_INV`.
    pub(crate) fn invalidate_rkey(&self) -> u32 {
        // SAFETY: Both members of the union are a `u32`.
        unsafe { *self.wr.ex.invalidate_rkey.as_ref() }
    }

    /// The datagram fields, on a UD or GSI QP.
    pub(crate) fn ud(&self) -> Option<UdWr<'a, T>> {
        self.ud.then(|| {
            // SAFETY: On such a QP every request is the `wr` of an
            // `ib_ud_wr` (type invariant), at its offset 0.
            let ud = unsafe { &*core::ptr::from_ref(self.wr).cast::<bindings::ib_ud_wr>() };
            UdWr {
                ud,
                device: self.device,
                _driver: PhantomData,
            }
        })
    }

    fn as_ptr(&self) -> *const bindings::ib_send_wr {
        self.wr
    }
}

/// The datagram fields of a send work request (`struct ib_ud_wr`).
pub(crate) struct UdWr<'a, T: Driver> {
    ud: &'a bindings::ib_ud_wr,
    device: *mut bindings::ib_device,
    _driver: PhantomData<T>,
}

impl<'a, T: Driver> UdWr<'a, T> {
    pub(crate) fn remote_qpn(&self) -> u32 {
        self.ud.remote_qpn
    }

    pub(crate) fn remote_qkey(&self) -> u32 {
        self.ud.remote_qkey
    }

    pub(crate) fn pkey_index(&self) -> u16 {
        self.ud.pkey_index
    }

    /// The driver's data of the address handle; `None` when there is none,
    /// or it is another device's.
    pub(crate) fn ah(&self) -> Option<&'a T::Ah> {
        let ah = self.ud.ah;
        if ah.is_null() {
            return None;
        }
        // SAFETY: The AH is live for `'a` (type invariant).
        if unsafe { (*ah).device } != self.device {
            return None;
        }
        // SAFETY: An AH of this device is one of `T`'s table, its data
        // initialised while it lives (type invariant).
        Some(unsafe { Object::<bindings::ib_ah, T::Ah>::data(ah) })
    }
}

/// A chain of receive work requests given to `post_recv` (or, with an
/// SRQ, `post_srq_recv`).
///
/// # Invariants
///
/// `head` is null or the first of a chain of `ib_recv_wr` ended by a null
/// `next`, each valid and unchanged for `'a` with its scatter/gather
/// entries.
pub(crate) struct RecvWrs<'a> {
    head: *const bindings::ib_recv_wr,
    _list: PhantomData<&'a bindings::ib_recv_wr>,
}

impl<'a> RecvWrs<'a> {
    /// The chain at `head`.
    ///
    /// # Safety
    ///
    /// `head` is null or a chain as the type's invariants say.
    pub(super) unsafe fn from_raw(head: *const bindings::ib_recv_wr) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            head,
            _list: PhantomData,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_null()
    }

    /// The requests, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = RecvWr<'a>> + 'a {
        let mut next = self.head;
        core::iter::from_fn(move || {
            // SAFETY: Null or a request of the chain, valid for `'a` (type
            // invariant).
            let wr = unsafe { next.as_ref() }?;
            next = wr.next;
            Some(RecvWr(wr))
        })
    }
}

/// One receive work request of a [`RecvWrs`] chain.
#[derive(Clone, Copy)]
pub(crate) struct RecvWr<'a>(&'a bindings::ib_recv_wr);

impl<'a> RecvWr<'a> {
    /// The consumer's ID of the request (as [`SendWr::wr_id`]).
    pub(crate) fn wr_id(&self) -> u64 {
        self.0.__bindgen_anon_1.bindgen_union_field
    }

    pub(crate) fn sges(&self) -> &'a [Sge] {
        // SAFETY: The entries of a request of the chain (type invariant).
        unsafe { sges(self.0.sg_list, self.0.num_sge) }
    }

    fn as_ptr(&self) -> *const bindings::ib_recv_wr {
        self.0
    }
}

/// Writes ib_core's `bad_wr` for the answer of a post: the request named
/// by `rejected`, or `head`.
///
/// # Safety
///
/// `bad_wr` is valid for writes.
pub(super) unsafe fn report_send<T: Driver>(
    head: *const bindings::ib_send_wr,
    rejected: &Rejected<SendWr<'_, T>>,
    bad_wr: *mut *const bindings::ib_send_wr,
) {
    let at = rejected.at.as_ref().map_or(head, SendWr::as_ptr);
    // SAFETY: Valid for writes (the caller's promise).
    unsafe { *bad_wr = at };
}

/// As [`report_send`], for a receive chain.
///
/// # Safety
///
/// `bad_wr` is valid for writes.
pub(super) unsafe fn report_recv(
    head: *const bindings::ib_recv_wr,
    rejected: &Rejected<RecvWr<'_>>,
    bad_wr: *mut *const bindings::ib_recv_wr,
) {
    let at = rejected.at.as_ref().map_or(head, RecvWr::as_ptr);
    // SAFETY: Valid for writes (the caller's promise).
    unsafe { *bad_wr = at };
}
