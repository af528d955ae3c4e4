// SPDX-License-Identifier: GPL-2.0

//! Address vectors (`struct rdma_ah_attr`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    gid::Gid,
    gid_attr::GidAttr, //
};
use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    sync::aref::ARef,
    types::Opaque, //
};

/// The kind of address an address vector holds (`enum rdma_ah_attr_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AhType {
    /// Not set.
    Undefined,
    /// InfiniBand: LID routed, optionally with a GRH.
    Ib,
    /// RoCE: always with a GRH, and a destination MAC.
    Roce,
    /// Omni-Path.
    Opa,
    /// A value ib_core does not know.
    Unknown(u32),
}

impl AhType {
    /// The raw `enum rdma_ah_attr_type` value.
    pub(crate) fn raw(self) -> u32 {
        match self {
            AhType::Undefined => bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_UNDEFINED,
            AhType::Ib => bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB,
            AhType::Roce => bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE,
            AhType::Opa => bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA,
            AhType::Unknown(v) => v,
        }
    }
}

/// The plain values of an address vector, as a driver keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AddressVector {
    /// Kind of address.
    pub(crate) ah_type: AhType,
    /// Port number.
    pub(crate) port_num: u32,
    /// Whether there is a GRH (`IB_AH_GRH`).
    pub(crate) grh: bool,
    /// Source GID index.
    pub(crate) sgid_index: u8,
    /// Destination GID.
    pub(crate) dgid: Gid,
    /// Flow label (20 bits).
    pub(crate) flow_label: u32,
    /// Hop limit.
    pub(crate) hop_limit: u8,
    /// Traffic class.
    pub(crate) traffic_class: u8,
    /// Service level.
    pub(crate) sl: u8,
    /// Static rate.
    pub(crate) static_rate: u8,
    /// Destination MAC (RoCE).
    pub(crate) dmac: [u8; 6],
}

/// An address vector: where an address handle sends to.
///
/// The GRH part holds a counted reference to the source GID entry when
/// `grh.sgid_attr` is set; see [`AhAttr::take_sgid_attr`] and
/// [`AhAttr::set_sgid_attr`].
///
/// # Invariants
///
/// The wrapped `struct rdma_ah_attr` is valid, and `grh.sgid_attr` is null
/// or points to a GID entry with a reference count owned by the attribute
/// or by its owner for as long as a reference to it exists.
#[repr(transparent)]
pub(crate) struct AhAttr(Opaque<bindings::rdma_ah_attr>);

impl AhAttr {
    /// Returns the attribute behind a raw pointer.
    ///
    /// # Safety
    ///
    /// - `ptr` points to a valid `struct rdma_ah_attr`, not accessed by
    ///   anyone else during the lifetime `'a`,
    /// - whose `grh.sgid_attr` is null or holds a reference count.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::rdma_ah_attr) -> &'a mut Self {
        // SAFETY: `AhAttr` is transparent over `rdma_ah_attr`; the rest is
        // the caller's promise.
        unsafe { &mut *ptr.cast() }
    }

    /// Zeroes the `struct rdma_ah_attr` behind a raw pointer and returns it
    /// (the `memset` an out-parameter gets first).
    ///
    /// # Safety
    ///
    /// `ptr` points to a `struct rdma_ah_attr` valid for writes, not
    /// accessed by anyone else during the lifetime `'a`, that holds no GID
    /// entry reference (its content, if any, is overwritten unread).
    pub(crate) unsafe fn zeroed_from_raw<'a>(ptr: *mut bindings::rdma_ah_attr) -> &'a mut Self {
        // SAFETY: `ptr` is valid for a write of one struct; all zeroes is a
        // valid `rdma_ah_attr` (a null `sgid_attr`, every enum 0).
        unsafe { ptr.write_bytes(0, 1) };
        // SAFETY: The attribute is valid now with a null `sgid_attr`; the
        // rest is the caller's promise.
        unsafe { Self::from_raw(ptr) }
    }

    /// The attribute of a shared `struct rdma_ah_attr`, to read.
    ///
    /// # Safety
    ///
    /// `raw`'s `grh.sgid_attr` is null or holds a reference count for as
    /// long as `'a`.
    pub(crate) unsafe fn from_ref<'a>(raw: &'a bindings::rdma_ah_attr) -> &'a Self {
        // SAFETY: `AhAttr` is transparent over `rdma_ah_attr` (in an
        // `Opaque`, which may alias); the rest is the caller's promise.
        unsafe { &*core::ptr::from_ref(raw).cast::<Self>() }
    }

    /// Returns the raw pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::rdma_ah_attr {
        self.0.get()
    }

    // A reference to the whole C struct is sound here, unlike for shared
    // ib_core objects: an `rdma_ah_attr` is its caller's private struct (on
    // its stack or in its own object), and `from_raw`'s contract is that
    // nobody else accesses it while an `AhAttr` exists. The `GidAttr` it
    // points to is shared, and is read field by field (see `GidAttr`).

    /// The C struct, shared.
    fn raw(&self) -> &bindings::rdma_ah_attr {
        // SAFETY: By the type invariant the attribute is valid, and nobody
        // else accesses it while we hold a reference.
        unsafe { &*self.as_raw() }
    }

    /// The C struct, exclusively.
    fn raw_mut(&mut self) -> &mut bindings::rdma_ah_attr {
        // SAFETY: As in `raw`, and the reference is unique.
        unsafe { &mut *self.as_raw() }
    }

    /// The port number.
    pub(crate) fn port_num(&self) -> u32 {
        self.raw().port_num
    }

    /// Whether the address vector has a GRH (`IB_AH_GRH` in `ah_flags`).
    pub(crate) fn has_grh(&self) -> bool {
        u32::from(self.raw().ah_flags) & bindings::ib_ah_flags_IB_AH_GRH != 0
    }

    /// The raw `enum rdma_ah_attr_type` value.
    pub(crate) fn raw_type(&self) -> u32 {
        self.raw().type_
    }

    /// The kind of address.
    pub(crate) fn ah_type(&self) -> AhType {
        match self.raw().type_ {
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_UNDEFINED => AhType::Undefined,
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB => AhType::Ib,
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE => AhType::Roce,
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA => AhType::Opa,
            other => AhType::Unknown(other),
        }
    }

    /// The source GID entry, if one is referenced.
    pub(crate) fn sgid_attr(&self) -> Option<&GidAttr> {
        let ptr = self.raw().grh.sgid_attr;
        // SAFETY: By the type invariant a non-null `sgid_attr` is a valid,
        // referenced entry for as long as `self` is borrowed.
        (!ptr.is_null()).then(|| unsafe { GidAttr::from_raw(ptr) })
    }

    /// Takes the referenced source GID entry out (leaving none).
    pub(crate) fn take_sgid_attr(&mut self) -> Option<ARef<GidAttr>> {
        let ptr = core::mem::replace(&mut self.raw_mut().grh.sgid_attr, core::ptr::null());
        // SAFETY: By the type invariant the attribute owned that reference
        // count; it is handed to the `ARef`.
        NonNull::new(ptr.cast_mut()).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// Stores a referenced source GID entry (there must be none yet).
    pub(crate) fn set_sgid_attr(&mut self, attr: ARef<GidAttr>) {
        let ptr = ARef::into_raw(attr);
        // INVARIANT: The reference count of the `ARef` moves into the
        // attribute.
        self.raw_mut().grh.sgid_attr = ptr.as_ptr().cast::<bindings::ib_gid_attr>().cast_const();
    }

    /// The source GID index of the GRH.
    pub(crate) fn sgid_index(&self) -> u32 {
        self.raw().grh.sgid_index.into()
    }

    /// The destination GID of the GRH.
    pub(crate) fn dgid(&self) -> Gid {
        // SAFETY: `raw` is the byte view of the union; all views are plain
        // data.
        Gid::new(unsafe { *self.raw().grh.dgid.raw.as_ref() })
    }

    /// The hop limit of the GRH.
    pub(crate) fn hop_limit(&self) -> u8 {
        self.raw().grh.hop_limit
    }

    /// Sets the hop limit of the GRH.
    pub(crate) fn set_hop_limit(&mut self, hop_limit: u8) {
        self.raw_mut().grh.hop_limit = hop_limit;
    }

    /// The address vector, copied out (without the GID entry reference).
    pub(crate) fn address_vector(&self) -> AddressVector {
        let raw = self.raw();
        AddressVector {
            ah_type: self.ah_type(),
            port_num: raw.port_num,
            grh: self.has_grh(),
            sgid_index: raw.grh.sgid_index,
            dgid: self.dgid(),
            flow_label: raw.grh.flow_label,
            hop_limit: raw.grh.hop_limit,
            traffic_class: raw.grh.traffic_class,
            sl: raw.sl,
            static_rate: raw.static_rate,
            // SAFETY: Every view of the union is plain data; for another
            // type than RoCE these bytes are simply not a MAC.
            dmac: unsafe { raw.__bindgen_anon_1.roce.as_ref().dmac },
        }
    }

    /// Writes an address vector (what `query_ah` returns). The GID entry
    /// reference is left as it is (ib_core cleared it before `query_ah`).
    pub(crate) fn set_address_vector(&mut self, av: &AddressVector) {
        let raw = self.raw_mut();
        raw.type_ = av.ah_type.raw();
        raw.port_num = av.port_num;
        raw.ah_flags = if av.grh {
            // CAST: IB_AH_GRH is 1.
            bindings::ib_ah_flags_IB_AH_GRH as u8
        } else {
            0
        };
        raw.grh.sgid_index = av.sgid_index;
        // SAFETY: Writing the byte view of the union makes it the GID.
        unsafe { *raw.grh.dgid.raw.as_mut() = *av.dgid.raw() };
        raw.grh.flow_label = av.flow_label;
        raw.grh.hop_limit = av.hop_limit;
        raw.grh.traffic_class = av.traffic_class;
        raw.sl = av.sl;
        raw.static_rate = av.static_rate;
        // SAFETY: Writing the RoCE view makes it the active one.
        unsafe { raw.__bindgen_anon_1.roce.as_mut().dmac = av.dmac };
    }

    /// Sets the kind of address.
    pub(crate) fn set_ah_type(&mut self, ah_type: AhType) {
        self.raw_mut().type_ = ah_type.raw();
    }

    /// Sets the service level (`rdma_ah_set_sl`).
    pub(crate) fn set_sl(&mut self, sl: u8) {
        self.raw_mut().sl = sl;
    }

    /// Sets the port number (`rdma_ah_set_port_num`).
    pub(crate) fn set_port_num(&mut self, port: u32) {
        self.raw_mut().port_num = port;
    }

    /// Sets the destination LID of an IB or OPA address vector; nothing for
    /// other kinds (`rdma_ah_set_dlid`: IB keeps 16 bits).
    pub(crate) fn set_dlid(&mut self, dlid: u32) {
        let ah_type = self.ah_type();
        let raw = self.raw_mut();
        match ah_type {
            // SAFETY: Every view of the union is plain data; writing the IB
            // view is what makes it the active one.
            // CAST: IB LIDs are 16 bits; C truncates the same way.
            AhType::Ib => unsafe { raw.__bindgen_anon_1.ib.as_mut().dlid = dlid as u16 },
            // SAFETY: As above, for the OPA view.
            AhType::Opa => unsafe { raw.__bindgen_anon_1.opa.as_mut().dlid = dlid },
            _ => {}
        }
    }

    /// Sets the source path bits of an IB or OPA address vector; nothing
    /// for other kinds (`rdma_ah_set_path_bits`).
    pub(crate) fn set_path_bits(&mut self, bits: u8) {
        let ah_type = self.ah_type();
        let raw = self.raw_mut();
        match ah_type {
            // SAFETY: Every view of the union is plain data; writing the IB
            // view is what makes it the active one.
            AhType::Ib => unsafe { raw.__bindgen_anon_1.ib.as_mut().src_path_bits = bits },
            // SAFETY: As above, for the OPA view.
            AhType::Opa => unsafe { raw.__bindgen_anon_1.opa.as_mut().src_path_bits = bits },
            _ => {}
        }
    }

    /// Makes the address vector global, towards `dgid`, from the GID entry
    /// `sgid_attr`, whose reference the attribute takes over
    /// (`rdma_move_grh_sgid_attr`): `ah_flags` becomes `IB_AH_GRH` and the
    /// source GID index the entry's (its low 8 bits, as C stores it).
    ///
    /// A reference the attribute held already is given back first.
    pub(crate) fn move_grh_sgid_attr(
        &mut self,
        dgid: &Gid,
        flow_label: u32,
        hop_limit: u8,
        traffic_class: u8,
        sgid_attr: ARef<GidAttr>,
    ) {
        drop(self.take_sgid_attr());
        // CAST: `rdma_ah_set_grh` takes the index as a `u8`.
        let sgid_index = sgid_attr.index() as u8;
        let raw = self.raw_mut();
        // CAST: IB_AH_GRH is 1.
        raw.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
        // SAFETY: Writing the byte view of the union makes it the GID.
        unsafe { *raw.grh.dgid.raw.as_mut() = *dgid.raw() };
        raw.grh.flow_label = flow_label;
        raw.grh.sgid_index = sgid_index;
        raw.grh.hop_limit = hop_limit;
        raw.grh.traffic_class = traffic_class;
        self.set_sgid_attr(sgid_attr);
    }

    /// Sets the destination MAC of a RoCE address vector.
    pub(crate) fn set_roce_dmac(&mut self, dmac: [u8; 6]) {
        // SAFETY: Every view of the union is plain data; writing the RoCE
        // view is what makes it the active one.
        unsafe { self.raw_mut().__bindgen_anon_1.roce.as_mut().dmac = dmac };
    }
}
