// SPDX-License-Identifier: GPL-2.0

//! What a device counts on its wire (the `wire` debugfs file).

use crate::sync::PerCpuCounters;
use kernel::{
    debugfs::Writer,
    prelude::*, //
};

/// What a device counts on the wire: packets sent, and every received
/// packet as delivered or by why it was dropped (the `wire` debugfs file).
#[derive(Clone, Copy)]
pub(crate) enum Count {
    /// Packets handed to the IP layer.
    Sent,
    /// Sends that failed: no route, no memory, or refused by the IP layer.
    SendError,
    /// Packets the IP layer took and a qdisc dropped (the send completed).
    SendDropped,
    /// Doorbells that stopped at the QP's packets in flight, resumed when
    /// they were freed ([`crate::sw::tx`]).
    SendWait,
    /// Received packets written into a receive buffer.
    Received,
    /// Dropped: bad IP or UDP header.
    Header,
    /// Dropped: bad UDP checksum.
    UdpChecksum,
    /// Dropped: transport version or opcode (not a UD SEND).
    Opcode,
    /// Dropped: too short for its headers.
    Length,
    /// Dropped: bad ICRC.
    Icrc,
    /// Not taken, left to the UDP layer: not for a GID of the port on the
    /// netdev it came in on, or for no QP of the device, or too short to
    /// say (multicast too, which has no groups yet).
    PassedOn,
    /// Dropped: the QP went away while the packet was checked.
    Qpn,
    /// Dropped: the QP is not ready to receive.
    State,
    /// Dropped: the P_Key does not match.
    Pkey,
    /// Dropped: the Q_Key does not match.
    Qkey,
    /// Dropped: the QP is in error (its receives flushed).
    Flushed,
    /// Dropped: no receive posted, or too small a buffer.
    NoBuffer,
    /// Left to soft-RoCE, which has a device on the same netdev.
    YieldRxe,
    /// RC: acknowledgements and NAKs the completer took.
    RcAck,
    /// RC: dropped acknowledgements of nothing in flight (duplicates,
    /// forgeries).
    RcStale,
    /// RC: duplicate requests, acknowledged again.
    RcDuplicate,
    /// RC: dropped requests past the PSN expected (a gap).
    RcSequence,
    /// RC: NAKs sent (sequence error, invalid request, operational).
    RcNakSent,
    /// RC: RNR NAKs sent (a request with no receive posted).
    RcRnrSent,
    /// RC: sequence error NAKs received.
    RcNakReceived,
    /// RC: packets sent again (retransmissions).
    RcRetransmit,
    /// RC: requests refused with a NAK (invalid request, remote access or
    /// operational error), failing the QP.
    RcRefused,
    /// UC: dropped packets of messages dropped (a packet lost before
    /// them, or a request not executed).
    UcDropped,
}

/// The names of the counts, in the order of [`Count`].
const COUNT_NAMES: [&str; 28] = [
    "sent",
    "send_error",
    "send_dropped",
    "send_wait",
    "received",
    "drop_header",
    "drop_udp_checksum",
    "drop_opcode",
    "drop_length",
    "drop_icrc",
    "passed_on",
    "drop_qpn",
    "drop_state",
    "drop_pkey",
    "drop_qkey",
    "drop_flushed",
    "drop_no_buffer",
    "yield_rxe",
    "rc_ack",
    "drop_rc_stale",
    "rc_duplicate",
    "drop_rc_sequence",
    "rc_nak_sent",
    "rc_rnr_nak_sent",
    "rc_nak_received",
    "rc_retransmit",
    "rc_refused",
    "drop_uc_message",
];

/// The counters of a device's wire, per CPU: every packet counts, on
/// every CPU that receives or sends, without a line shared between them.
pub(crate) struct Counters(PerCpuCounters<{ COUNT_NAMES.len() }>);

impl Counters {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self(PerCpuCounters::new()?))
    }

    /// Counts one `what`. Any context.
    pub(crate) fn count(&self, what: Count) {
        // CAST: An index of the names (one per variant).
        self.0.inc(what as usize);
    }
}

impl Writer for Counters {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, name) in COUNT_NAMES.iter().enumerate() {
            writeln!(f, "{} {}", name, self.0.sum(i))?;
        }
        Ok(())
    }
}
