// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`), as far as rv0's wire needs them: a
//! packet built for transmission, and a received packet read once.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use super::{
    device::NetDevice,
    route::Route, //
};
use crate::bindings;
use core::{
    ffi::c_void,
    marker::PhantomData,
    ops::{
        Deref,
        DerefMut, //
    },
    ptr::NonNull,
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// Why a received packet is dropped, as the kernel names it
/// (`enum skb_drop_reason`, through `enum rverbs_drop`): the nearest of the
/// network stack's reasons, or none where RDMA's own has no name there (a
/// bad ICRC, P_Key or Q_Key, a QP not ready or flushing), which the
/// driver's own counters tell apart.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropReason {
    /// `SKB_DROP_REASON_NOT_SPECIFIED`.
    NotSpecified = bindings::rverbs_drop_RVERBS_DROP_NOT_SPECIFIED,
    /// `SKB_DROP_REASON_NOMEM`: no memory to read it.
    NoMem = bindings::rverbs_drop_RVERBS_DROP_NOMEM,
    /// `SKB_DROP_REASON_IP_INHDR`: the IP or UDP header is wrong.
    IpHeader = bindings::rverbs_drop_RVERBS_DROP_IP_INHDR,
    /// `SKB_DROP_REASON_UDP_CSUM`: a bad UDP checksum.
    UdpChecksum = bindings::rverbs_drop_RVERBS_DROP_UDP_CSUM,
    /// `SKB_DROP_REASON_UNHANDLED_PROTO`: an opcode or version not handled.
    UnhandledProto = bindings::rverbs_drop_RVERBS_DROP_UNHANDLED_PROTO,
    /// `SKB_DROP_REASON_PKT_TOO_SMALL`: shorter than its headers say.
    TooSmall = bindings::rverbs_drop_RVERBS_DROP_PKT_TOO_SMALL,
    /// `SKB_DROP_REASON_NO_SOCKET`: no QP to take it (a UDP port's "no
    /// socket").
    NoQp = bindings::rverbs_drop_RVERBS_DROP_NO_SOCKET,
    /// `SKB_DROP_REASON_SOCKET_RCVBUFF`: no receive buffer for it.
    NoBuffer = bindings::rverbs_drop_RVERBS_DROP_SOCKET_RCVBUFF,
}

/// A socket buffer owned by this object: freed (as dropped, `kfree_skb`)
/// unless it is consumed, sent, or given back to the network stack.
///
/// # Invariants
///
/// `skb` is a valid socket buffer on which this object holds the only
/// reference the caller had.
pub(crate) struct SkBuff {
    skb: NonNull<bindings::sk_buff>,
}

// SAFETY: A buffer may be freed, sent or handed on from any task; the
// netdev of a received packet, valid only while it is being received, is
// reached only through `RxSkb`, which is not `Send`.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid socket buffer whose reference the caller owns and
    /// gives to the new object.
    pub(crate) unsafe fn from_raw(skb: NonNull<bindings::sk_buff>) -> Self {
        // INVARIANT: The caller's promise.
        Self { skb }
    }

    /// Gives the buffer back (to the caller of [`SkBuff::from_raw`]).
    pub(crate) fn into_raw(self) -> NonNull<bindings::sk_buff> {
        let skb = self.skb;
        core::mem::forget(self);
        skb
    }

    /// A packet of `len` zero bytes to send on `dev`, with room before
    /// them for its link-layer header. May sleep.
    pub(crate) fn alloc_tx(dev: &NetDevice, len: usize) -> Result<Self> {
        Self::alloc(dev, len, false)
    }

    /// As [`SkBuff::alloc_tx`], with `GFP_ATOMIC`: for a packet built in
    /// any context (a softirq's acknowledgement).
    pub(crate) fn alloc_tx_atomic(dev: &NetDevice, len: usize) -> Result<Self> {
        Self::alloc(dev, len, true)
    }

    fn alloc(dev: &NetDevice, len: usize, atomic: bool) -> Result<Self> {
        // SAFETY: `dev` is valid; the helper allocates with GFP_ATOMIC when
        // `atomic`, else GFP_KERNEL (the caller's context allows it).
        let skb = unsafe { bindings::rverbs_skb_alloc_tx(dev.as_raw(), len, atomic) };
        // INVARIANT: A new buffer, ours alone.
        Ok(Self {
            skb: NonNull::new(skb).ok_or(ENOMEM)?,
        })
    }

    /// The bytes of a packet built by [`SkBuff::alloc_tx`], to fill in.
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        let mut len = 0usize;
        // SAFETY: The buffer is valid and ours (type invariant).
        let data = unsafe { bindings::rverbs_skb_data(self.skb.as_ptr(), &mut len) };
        // SAFETY: `data` is the linear part of a buffer nobody else
        // references (type invariant: a new one, not cloned), `len` bytes,
        // borrowed mutably with `self`.
        unsafe { core::slice::from_raw_parts_mut(data, len) }
    }

    /// Whether the packet's transport checksum needs no reading of its
    /// bytes (`skb_csum_unnecessary`): the device verified it, or the
    /// packet is a local one whose checksum was never filled in
    /// (`CHECKSUM_PARTIAL`: its bytes hold only the pseudo-header's sum),
    /// as the UDP layer judges it.
    pub(crate) fn csum_unnecessary(&self) -> bool {
        // SAFETY: The buffer is valid.
        unsafe { bindings::rverbs_skb_csum_unnecessary(self.skb.as_ptr()) }
    }

    /// Makes a received packet linear (which allocates only if it was
    /// not), for [`SkBuff::network_bytes`]. `ENOMEM` if that fails.
    pub(crate) fn linearize(&mut self) -> Result {
        // SAFETY: The buffer is valid and ours; the helper may reallocate
        // its head, which no reference points into (they borrow `self`).
        if unsafe { bindings::rverbs_skb_linearize(self.skb.as_ptr()) } != 0 {
            return Err(ENOMEM);
        }
        Ok(())
    }

    /// The bytes of a linear received packet from its IP header on; empty
    /// if it is not linear ([`SkBuff::linearize`]).
    pub(crate) fn network_bytes(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: The buffer is valid.
        let data = unsafe { bindings::rverbs_skb_network_bytes(self.skb.as_ptr(), &mut len) };
        if data.is_null() {
            return &[];
        }
        // SAFETY: `len` linear bytes of the buffer, which stay as they are
        // while `self` is borrowed: the stack gave the packet up to us,
        // only `&mut self` methods change its head, and a clone's data is
        // never written in place.
        unsafe { core::slice::from_raw_parts(data, len) }
    }

    /// Frees a packet as dropped for `why` (`kfree_skb_reason`: the
    /// `kfree_skb` tracepoint and drop monitors show the reason).
    pub(crate) fn drop_for(self, why: DropReason) {
        // SAFETY: Ours (type invariant), given up here.
        unsafe { bindings::rverbs_kfree_skb_reason(self.into_raw().as_ptr(), why as u32) };
    }

    /// Frees a packet that was used as it should be (`consume_skb`: not
    /// counted as a drop).
    pub(crate) fn consume(self) {
        // SAFETY: Ours (type invariant), given up here.
        unsafe { bindings::rverbs_consume_skb(self.into_raw().as_ptr()) };
    }

    /// Gives the buffer an owner, which [`TxOwner::released`] gets back
    /// when the buffer is freed (sent, dropped by a qdisc, or orphaned by a
    /// receiving IP layer); the module's exit waits for every such buffer
    /// ([`tx_barrier`]). `Err(owner)` if the buffer has a destructor
    /// already (it belongs to a socket).
    pub(crate) fn set_tx_owner<O: TxOwner>(&mut self, owner: Arc<O>) -> Result<(), Arc<O>> {
        let arg = Arc::into_raw(owner).cast_mut().cast::<c_void>();
        // SAFETY: The buffer is ours (type invariant). When the helper sets
        // the destructor, the buffer holds `arg`'s reference until the
        // destructor, `tx_destructor::<O>`, takes it back.
        if unsafe {
            bindings::rverbs_skb_set_tx_owner(self.skb.as_ptr(), Some(tx_destructor::<O>), arg)
        } {
            return Ok(());
        }
        // SAFETY: Not given to the buffer: still the reference of
        // `into_raw` above.
        Err(unsafe { Arc::from_raw(arg.cast::<O>().cast_const()) })
    }

    /// Sends a whole IP packet (its IP header of `ip_hlen` bytes first,
    /// IPv4 or `ipv6`) along `route`, with no socket (`ip_local_out`,
    /// `ip6_local_out`); the IP layer fills in the IPv4 total length and
    /// checksum, or the IPv6 payload length. `Err` with the `NET_XMIT_*` or
    /// negative value if the packet was not sent.
    pub(crate) fn ip_local_out(self, route: Route, ipv6: bool, ip_hlen: u32) -> Result<(), i32> {
        let dst = route.into_dst();
        // SAFETY: The buffer is ours and holds the packet; the route's
        // reference goes to the buffer; both are consumed.
        let ret = unsafe {
            bindings::rverbs_ip_local_out(self.into_raw().as_ptr(), dst.as_ptr(), ipv6, ip_hlen)
        };
        if ret == 0 {
            Ok(())
        } else {
            Err(ret)
        }
    }
}

/// A packet being received, lent by the tap for its call (`'hook`): it
/// names the netdev the packet arrived on, which the packet holds only
/// while it is being received. To keep the packet beyond the call, take
/// the [`SkBuff`] out of it ([`RxSkb::into_skb`]), which names no netdev.
///
/// # Invariants
///
/// `skb` is a packet the network stack is receiving: its `dev` is valid
/// for `'hook`.
pub(crate) struct RxSkb<'hook> {
    skb: SkBuff,
    /// Bound to the receiving call, and not `Send`: the netdev is valid
    /// on this CPU, in this call.
    _hook: PhantomData<(&'hook (), *const ())>,
}

impl<'hook> RxSkb<'hook> {
    /// A packet being received.
    ///
    /// # Safety
    ///
    /// `skb` is being received by the network stack and its netdev is
    /// valid for `'hook`.
    pub(crate) unsafe fn new(skb: SkBuff) -> Self {
        // INVARIANT: The caller's promise.
        Self {
            skb,
            _hook: PhantomData,
        }
    }

    /// Frees the packet as dropped for `why` ([`SkBuff::drop_for`]).
    pub(crate) fn drop_for(self, why: DropReason) {
        self.skb.drop_for(why);
    }

    /// The packet, for beyond the receiving call: its netdev is no
    /// longer named.
    pub(crate) fn into_skb(self) -> SkBuff {
        self.skb
    }

    /// Copies the packet's first bytes from its IP header on into `buf`,
    /// without changing the packet (it may go on to the UDP layer as it
    /// came); the bytes copied.
    pub(crate) fn copy_head<'b>(&self, buf: &'b mut [u8]) -> &'b [u8] {
        // SAFETY: The buffer is valid; `buf` is valid for writes of its
        // length.
        let n = unsafe {
            bindings::rverbs_skb_copy_network(self.skb.skb.as_ptr(), buf.as_mut_ptr(), buf.len())
        };
        &buf[..n.min(buf.len())]
    }

    /// The netdev the packet arrived on (for a VLAN, the VLAN's), valid
    /// for the receiving call.
    pub(crate) fn rx_dev(&self) -> Option<&'hook NetDevice> {
        // SAFETY: The buffer is valid.
        let dev = unsafe { bindings::rverbs_skb_dev(self.skb.skb.as_ptr()) };
        // SAFETY: As in `rx_real_dev`.
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }

    /// The netdev the packet arrived on, or for a VLAN the real device
    /// under it, if it has one; valid for the receiving call.
    pub(crate) fn rx_real_dev(&self) -> Option<&'hook NetDevice> {
        // SAFETY: The buffer is valid.
        let dev = unsafe { bindings::rverbs_skb_rx_real_dev(self.skb.skb.as_ptr()) };
        // SAFETY: A packet holds its netdev while it is being received:
        // valid for `'hook` (type invariant).
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }
}

impl Deref for RxSkb<'_> {
    type Target = SkBuff;

    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}

impl DerefMut for RxSkb<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: Ours (type invariant).
        unsafe { bindings::rverbs_kfree_skb(self.skb.as_ptr()) };
    }
}

/// The CRC-32 (little endian, reflected) of `bytes` continued from `crc`
/// (`crc32_le`).
pub(crate) fn crc32_le(crc: u32, bytes: &[u8]) -> u32 {
    // SAFETY: `bytes` is valid for reads of its length.
    unsafe { bindings::rverbs_crc32_le(crc, bytes.as_ptr(), bytes.len()) }
}

/// What owns transmit buffers ([`SkBuff::set_tx_owner`]) and is told when
/// each is freed.
pub(crate) trait TxOwner: Send + Sync + Sized + 'static {
    /// One of the owner's buffers was freed, with the reference it held.
    /// Any context but hard interrupts (a buffer freed there is freed
    /// through a softirq): no sleeping, and only locks that disable bottom
    /// halves.
    fn released(this: Arc<Self>);
}

/// The destructor of a buffer of [`SkBuff::set_tx_owner`] for owners of
/// type `O`.
///
/// # Safety
///
/// Called by the network stack once, as the destructor of a buffer that
/// `set_tx_owner::<O>` gave it to.
unsafe extern "C" fn tx_destructor<O: TxOwner>(skb: *mut bindings::sk_buff) {
    // SAFETY: The buffer is being freed (the caller's promise) and still
    // holds the owner `set_tx_owner` gave it.
    let arg = unsafe { bindings::rverbs_skb_tx_owner(skb) };
    // SAFETY: `arg` is the reference of `set_tx_owner::<O>` (the same type:
    // each `O` has its own destructor), given back here once.
    let owner = unsafe { Arc::<O>::from_raw(arg.cast::<O>().cast_const()) };
    O::released(owner);
    // SAFETY: The count of `rverbs_skb_set_tx_owner` for this buffer, the
    // destructor's last step.
    unsafe { bindings::rverbs_tx_skb_put() };
}

/// Waits until no buffer of [`SkBuff::set_tx_owner`] is left and no such
/// destructor runs: the module's exit, after its devices are gone. It
/// sleeps, for as long as a qdisc keeps a buffer.
pub(crate) fn tx_barrier() {
    kernel::task::might_sleep();
    // SAFETY: No argument; process context.
    unsafe { bindings::rverbs_tx_barrier() };
}
