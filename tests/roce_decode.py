#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Decode RoCE v2 packets from a pcap file and check them.

    roce_decode.py PCAP [SENDER_A SENDER_B]

Reads an Ethernet capture (tcpdump -w) and decodes every UDP datagram to
port 4791 as RoCE v2: IPv4 or IPv6, UDP, BTH, then for UD the DETH, for
RC and UC the extended headers of the opcode (RETH, AETH, AtomicETH,
AtomicAckETH, IETH, FETH), the immediate data if the opcode has one, the
payload, its pad and the ICRC.  Each packet is
checked field by field against the RoCE v2 annex and soft-RoCE's sending
code (drivers/infiniband/sw/rxe/rxe_net.c, rxe_icrc.c, rxe_qp.c):

* IPv4: version 4, no options, total length, header checksum, DF set,
  not a fragment, protocol UDP; IPv6: payload length, next header UDP,
  flow label 0;
* UDP: destination port 4791, length, checksum 0 (as soft-RoCE sends it),
  source port 0xc000 + hash_32(source QPN, 14);
* BTH: an opcode of a UD QP (SEND only, with or without immediate), or
  one of RC (IBTA's, as rxe_opcode.c has them) or UC (its SENDs and RDMA
  WRITEs), transport version 0, pad count 0 to 3 with zero pad bytes, no
  MigReq, P_Key 0xffff, reserved bits zero; the PSNs of each sending UD QP
  consecutive (RC and UC send again, and answer, with PSNs of their own);
* DETH: the source QPN's reserved byte zero; RC and UC: a payload only
  where the opcode has one, none where it has none, a RETH's length at
  most 2^31, an AtomicETH's address 8-byte aligned; the UDP source port
  within soft-RoCE's range (0xc000 on: the QPN is not in the packet);
* ICRC: CRC-32 seeded as soft-RoCE seeds it (0xdebb20e3: a masked LRH),
  over the IP, UDP and BTH headers with their variant fields masked, then
  the rest, inverted and stored little-endian;
* AckReq of RC requests: set on the last packet of each message, and on a
  FIRST or MIDDLE packet exactly when more than 64 packets of its QP in a
  row went without it (soft-RoCE's rule, AckRequests below).

Prints one line per packet (its sender, the fields that define it) and a
closing line "N packets, N valid".  With SENDER_A and SENDER_B (source IP
addresses), also compares what the two senders put on the wire: for each
payload size that both sent, the set of field values that do not depend on
the QP (everything but the QPNs, the PSNs and the source port, each
checked above, the IPv4 identification, which soft-RoCE takes from
__ip_select_ident() for packets that cannot be fragmented, and the AckReq
of FIRST and MIDDLE packets, checked above by its rule) must be the
same.  Exit status 0 when every packet is valid (and the senders agree),
1 otherwise, 2 when the file cannot be read.
"""

import ipaddress
import struct
import sys
import zlib

ROCE_PORT = 4791
UD_OPCODES = {0x64: "UD_SEND_ONLY", 0x65: "UD_SEND_ONLY_WITH_IMMEDIATE"}

# The connected opcodes (low five bits): name, extended headers in their
# order, whether a payload follows; UC has the first twelve.
RETH, AETH, ATMETH, ATMACK, IMMDT, IETH, FETH = ("reth", 16), ("aeth", 4), ("atmeth", 28), \
    ("atmack", 8), ("imm", 4), ("ieth", 4), ("feth", 4)
CONNECTED = {
    0x00: ("SEND_FIRST", [], True),
    0x01: ("SEND_MIDDLE", [], True),
    0x02: ("SEND_LAST", [], True),
    0x03: ("SEND_LAST_WITH_IMMEDIATE", [IMMDT], True),
    0x04: ("SEND_ONLY", [], True),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", [IMMDT], True),
    0x06: ("RDMA_WRITE_FIRST", [RETH], True),
    0x07: ("RDMA_WRITE_MIDDLE", [], True),
    0x08: ("RDMA_WRITE_LAST", [], True),
    0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", [IMMDT], True),
    0x0A: ("RDMA_WRITE_ONLY", [RETH], True),
    0x0B: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", [RETH, IMMDT], True),
    0x0C: ("RDMA_READ_REQUEST", [RETH], False),
    0x0D: ("RDMA_READ_RESPONSE_FIRST", [AETH], True),
    0x0E: ("RDMA_READ_RESPONSE_MIDDLE", [], True),
    0x0F: ("RDMA_READ_RESPONSE_LAST", [AETH], True),
    0x10: ("RDMA_READ_RESPONSE_ONLY", [AETH], True),
    0x11: ("ACKNOWLEDGE", [AETH], False),
    0x12: ("ATOMIC_ACKNOWLEDGE", [AETH, ATMACK], False),
    0x13: ("COMPARE_SWAP", [ATMETH], False),
    0x14: ("FETCH_ADD", [ATMETH], False),
    0x16: ("SEND_LAST_WITH_INVALIDATE", [IETH], True),
    0x17: ("SEND_ONLY_WITH_INVALIDATE", [IETH], True),
    0x1C: ("FLUSH", [FETH, RETH], False),
    0x1D: ("ATOMIC_WRITE", [RETH], True),
}
ICRC_SEED = 0xDEBB20E3


def hash_32(val, bits):
    """The kernel's hash_32() (include/linux/hash.h)."""
    return ((val * 0x61C88647) & 0xFFFFFFFF) >> (32 - bits)


def ip_checksum(header):
    total = 0
    for i in range(0, len(header), 2):
        total += (header[i] << 8) | header[i + 1]
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total ^ 0xFFFF


def icrc(ip, udp, rest):
    """The ICRC of a packet: ip and udp its headers, rest from the BTH on
    (without the ICRC)."""
    ip = bytearray(ip)
    udp = bytearray(udp)
    bth = bytearray(rest[:12])
    if ip[0] >> 4 == 4:
        ip[1] = 0xFF  # type of service
        ip[8] = 0xFF  # time to live
        ip[10:12] = b"\xff\xff"  # header checksum
    else:
        ip[0:4] = b"\x6f\xff\xff\xff"  # traffic class, flow label
        ip[7] = 0xFF  # hop limit
    udp[6:8] = b"\xff\xff"  # checksum
    bth[4] = 0xFF  # FECN, BECN, reserved
    crc = zlib.crc32(bytes(ip) + bytes(udp) + bytes(bth) + bytes(rest[12:]),
                     ICRC_SEED ^ 0xFFFFFFFF)
    return crc


class Bad(Exception):
    pass


def decode(frame):
    """The fields of one Ethernet frame, or None if it is not RoCE v2;
    Bad if it is and something is wrong."""
    if len(frame) < 14:
        return None
    ethertype = struct.unpack(">H", frame[12:14])[0]
    pkt = frame[14:]
    f = {}
    if ethertype == 0x0800:
        if len(pkt) < 20 or pkt[9] != 17:
            return None
        ihl = (pkt[0] & 0xF) * 4
        udp_at = ihl
        if len(pkt) >= ihl + 4 and struct.unpack(">H", pkt[ihl + 2:ihl + 4])[0] != ROCE_PORT:
            return None
        if pkt[0] >> 4 != 4 or ihl != 20:
            raise Bad("IPv4 header with options (IHL %d)" % ihl)
        tot_len, ident, frag = struct.unpack(">HHH", pkt[2:8])
        if tot_len != len(pkt):
            raise Bad("IPv4 total length %d, packet %d" % (tot_len, len(pkt)))
        if ip_checksum(pkt[:20]) != 0:
            raise Bad("IPv4 header checksum")
        if frag != 0x4000:
            raise Bad("IPv4 flags/fragment offset 0x%04x, not DF alone" % frag)
        f["ip"] = 4
        f["tos"] = pkt[1]
        f["ttl"] = pkt[8]
        f["src"] = str(ipaddress.IPv4Address(pkt[12:16]))
        f["dst"] = str(ipaddress.IPv4Address(pkt[16:20]))
        f["ip_id"] = ident
    elif ethertype == 0x86DD:
        if len(pkt) < 40 or pkt[6] != 17:
            return None
        udp_at = 40
        if len(pkt) >= 44 and struct.unpack(">H", pkt[42:44])[0] != ROCE_PORT:
            return None
        first = struct.unpack(">I", pkt[0:4])[0]
        if first >> 28 != 6:
            raise Bad("IPv6 version")
        if first & 0xFFFFF:
            raise Bad("IPv6 flow label 0x%05x" % (first & 0xFFFFF))
        if struct.unpack(">H", pkt[4:6])[0] != len(pkt) - 40:
            raise Bad("IPv6 payload length")
        f["ip"] = 6
        f["tos"] = (first >> 20) & 0xFF
        f["ttl"] = pkt[7]
        f["src"] = str(ipaddress.IPv6Address(pkt[8:24]))
        f["dst"] = str(ipaddress.IPv6Address(pkt[24:40]))
    else:
        return None

    ip, rest = pkt[:udp_at], pkt[udp_at:]
    if len(rest) < 8:
        raise Bad("short UDP header")
    sport, dport, ulen, usum = struct.unpack(">HHHH", rest[:8])
    if ulen != len(rest):
        raise Bad("UDP length %d, datagram %d" % (ulen, len(rest)))
    if usum != 0:
        raise Bad("UDP checksum 0x%04x, soft-RoCE sends 0" % usum)
    f["udp_sum"] = usum
    udp, rest = rest[:8], rest[8:]
    # BTH and ICRC at least.
    if len(rest) < 12 + 4:
        raise Bad("%d bytes after UDP: too short for BTH and ICRC" % len(rest))
    opcode, flags, pkey, dqpn, psn = struct.unpack(">BBHII", rest[:12])
    low = opcode & 0x1F
    if opcode in UD_OPCODES:
        f["opcode"] = UD_OPCODES[opcode]
    elif opcode < 0x20 and low in CONNECTED or 0x20 <= opcode < 0x2C:
        f["opcode"] = ("RC_" if opcode < 0x20 else "UC_") + CONNECTED[low][0]
    else:
        raise Bad("opcode 0x%02x is not one of UD, RC or UC" % opcode)
    f["se"] = flags >> 7
    if flags & 0x40:
        raise Bad("MigReq set")
    pad = (flags >> 4) & 3
    f["pad"] = pad
    if flags & 0xF:
        raise Bad("transport header version %d" % (flags & 0xF))
    if pkey != 0xFFFF:
        raise Bad("P_Key 0x%04x" % pkey)
    if dqpn >> 24:
        raise Bad("BTH reserved bits before the destination QP 0x%02x" % (dqpn >> 24))
    f["dqpn"] = dqpn
    if psn & 0x7F000000:
        raise Bad("BTH reserved bits before the PSN 0x%02x" % (psn >> 24))
    f["ackreq"] = psn >> 31
    f["psn"] = psn & 0xFFFFFF
    if opcode not in UD_OPCODES:
        return connected(f, ip, udp, rest, low, pad, sport, dport)
    if len(rest) < 12 + 8 + 4:
        raise Bad("%d bytes after UDP: too short for BTH, DETH and ICRC" % len(rest))
    qkey, sqpn = struct.unpack(">II", rest[12:20])
    if sqpn >> 24:
        raise Bad("DETH reserved byte 0x%02x" % (sqpn >> 24))
    f["qkey"] = "0x%08x" % qkey
    f["sqpn"] = sqpn
    body = rest[20:-4]
    if opcode == 0x65:
        if len(body) < 4:
            raise Bad("no room for the immediate data")
        body = body[4:]
    if len(body) < pad or any(body[len(body) - pad:]):
        raise Bad("pad bytes")
    f["payload"] = len(body) - pad
    if (f["payload"] + pad) % 4:
        raise Bad("payload %d and pad %d not a multiple of 4" % (f["payload"], pad))
    if sport != 0xC000 + hash_32(sqpn, 14):
        raise Bad("UDP source port 0x%04x, not 0xc000 + hash_32(QPN %d, 14) = 0x%04x" %
                  (sport, sqpn, 0xC000 + hash_32(sqpn, 14)))
    f["sport"] = sport
    f["dport"] = dport
    want = icrc(ip, udp, rest[:-4])
    got = struct.unpack("<I", rest[-4:])[0]
    if got != want:
        raise Bad("ICRC 0x%08x, computed 0x%08x" % (got, want))
    f["icrc"] = "ok"
    return f


def connected(f, ip, udp, rest, low, pad, sport, dport):
    """The rest of an RC or UC packet after its BTH: its extended headers,
    payload, pad and ICRC, into f."""
    _, hdrs, has_payload = CONNECTED[low]
    at = 12
    for name, size in hdrs:
        if len(rest) < at + size + 4:
            raise Bad("no room for the %s" % name.upper())
        h = rest[at:at + size]
        if name == "reth":
            va, rkey, length = struct.unpack(">QII", h)
            if length > 1 << 31:
                raise Bad("RETH length %d past 2^31" % length)
            f["reth_va"], f["reth_rkey"], f["reth_len"] = "0x%x" % va, "0x%x" % rkey, length
        elif name == "aeth":
            aeth = struct.unpack(">I", h)[0]
            f["syndrome"], f["msn"] = "0x%02x" % (aeth >> 24), aeth & 0xFFFFFF
        elif name == "atmeth":
            va, rkey, swap_add, compare = struct.unpack(">QIQQ", h)
            if va % 8:
                raise Bad("AtomicETH address 0x%x not 8-byte aligned" % va)
            f["atomic_va"], f["atomic_rkey"] = "0x%x" % va, "0x%x" % rkey
            f["swap_add"], f["compare"] = swap_add, compare
        elif name == "atmack":
            f["orig"] = struct.unpack(">Q", h)[0]
        elif name == "imm":
            f["imm"] = "0x%08x" % struct.unpack(">I", h)[0]
        elif name == "feth":
            bits = struct.unpack(">I", h)[0]
            if bits & ~0x3F:
                raise Bad("FETH reserved bits 0x%08x" % (bits & ~0x3F))
            f["feth"] = "level %d type %d" % ((bits >> 4) & 3, bits & 0xF)
        else:
            f["ieth_rkey"] = "0x%x" % struct.unpack(">I", h)[0]
        at += size
    body = rest[at:-4]
    if len(body) < pad or any(body[len(body) - pad:]):
        raise Bad("pad bytes")
    f["payload"] = len(body) - pad
    if len(body) % 4:
        raise Bad("payload %d and pad %d not a multiple of 4" % (f["payload"], pad))
    if not has_payload and len(body):
        raise Bad("%d bytes of payload after an opcode that has none" % len(body))
    if sport < 0xC000:
        raise Bad("UDP source port 0x%04x below soft-RoCE's 0xc000" % sport)
    f["sport"] = sport
    f["dport"] = dport
    want = icrc(ip, udp, rest[:-4])
    got = struct.unpack("<I", rest[-4:])[0]
    if got != want:
        raise Bad("ICRC 0x%08x, computed 0x%08x" % (got, want))
    f["icrc"] = "ok"
    return f


def frames(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < 24:
        raise ValueError("not a pcap file")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError("not a pcap file (magic %s)" % magic.hex())
    linktype = struct.unpack(end + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError("link type %d, not Ethernet" % linktype)
    at = 24
    while at + 16 <= len(data):
        incl, orig = struct.unpack(end + "II", data[at + 8:at + 16])
        frame = data[at + 16:at + 16 + incl]
        at += 16 + incl
        if incl != orig:
            raise ValueError("a frame was cut short (snap length)")
        yield frame


# What the senders are compared on: what does not depend on the QP.  The
# AckReq bit of an RC request's FIRST or MIDDLE packet depends on the QP's
# history (AckRequests below) and is checked against soft-RoCE's rule
# instead.
SHAPE = ("ip", "tos", "ttl", "udp_sum", "dport", "opcode", "se", "pad", "ackreq",
         "qkey", "payload", "syndrome", "reth_len", "feth", "icrc")

# RXE_MAX_PKT_PER_ACK (rxe_param.h).
MAX_PKT_PER_ACK = 64


class AckRequests:
    """Soft-RoCE's rule for the AckReq bit of RC requests
    (rxe_req.c:init_req_packet): the last packet of a message asks, and so
    does a packet after more than MAX_PKT_PER_ACK in a row of its QP that
    did not; the count is the QP's, across messages and retransmissions.
    Followed per requester (source and destination address, destination
    QPN), in capture order.  Until a requester's first packet that asks
    (and after a gap in its PSNs that no READ explains: packets the capture
    lost), its count is unknown and its packets are not checked."""

    def __init__(self):
        self.run = {}       # requester -> packets in a row without AckReq, or None
        self.next_psn = {}  # requester -> (PSN after its last request, after a READ)

    def check(self, f):
        """None if f keeps the rule (or is not an RC request), else why not."""
        op = f["opcode"]
        if not op.startswith("RC_") or op[3:] not in REQUESTS:
            return None
        key = (f["src"], f["dst"], f["dqpn"])
        run = self.run.get(key)
        expect = self.next_psn.get(key)
        if expect is not None:
            ahead = (f["psn"] - expect[0]) & 0xFFFFFF
            if 0 < ahead < 0x800000 and not expect[1]:
                run = None
        self.next_psn[key] = ((f["psn"] + 1) & 0xFFFFFF, op == "RC_RDMA_READ_REQUEST")
        if not op.endswith(("_FIRST", "_MIDDLE")):
            self.run[key] = 0
            return None if f["ackreq"] else "the last packet of a message without AckReq"
        self.run[key] = 0 if f["ackreq"] else (None if run is None else run + 1)
        if run is None or f["ackreq"] == (run > MAX_PKT_PER_ACK):
            return None
        return "AckReq %d after %d packets in a row without it (soft-RoCE: %d)" % (
            f["ackreq"], run, run > MAX_PKT_PER_ACK)


# The opcodes of RC requests (the rest are responses and acknowledgements).
REQUESTS = {name for name, _, _ in CONNECTED.values()
            if not name.startswith(("RDMA_READ_RESPONSE", "ACKNOWLEDGE", "ATOMIC_ACKNOWLEDGE"))}


def main(argv):
    if len(argv) not in (2, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        packets = list(frames(argv[1]))
    except (OSError, ValueError) as e:
        print("roce_decode: %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    total = valid = 0
    ok = True
    last_psn = {}
    shapes = {}
    acks = AckRequests()
    for n, frame in enumerate(packets, 1):
        try:
            f = decode(frame)
        except Bad as e:
            total += 1
            ok = False
            print("packet %d: INVALID: %s" % (n, e))
            continue
        if f is None:
            continue
        total += 1
        qp = (f["src"], f.get("sqpn"))
        if "sqpn" in f and qp in last_psn and f["psn"] != (last_psn[qp] + 1) & 0xFFFFFF:
            ok = False
            print("packet %d: INVALID: PSN %d after %d from QP %d of %s" %
                  (n, f["psn"], last_psn[qp], f["sqpn"], f["src"]))
            last_psn[qp] = f["psn"]
            continue
        last_psn[qp] = f["psn"]
        why = acks.check(f)
        if why:
            ok = False
            print("packet %d: INVALID: %s" % (n, why))
            continue
        valid += 1
        middle = f["opcode"].startswith("RC_") and f["opcode"].endswith(("_FIRST", "_MIDDLE"))
        shape = tuple((k, f[k]) for k in SHAPE if k in f and not (middle and k == "ackreq"))
        shapes.setdefault(f["src"], {}).setdefault(f["payload"], set()).add(shape)
        print("packet %d: %s -> %s %s" % (n, f["src"], f["dst"],
                                          " ".join("%s=%s" % (k, f[k]) for k in f
                                                   if k not in ("src", "dst"))))
    print("%d packets, %d valid" % (total, valid))
    if total == 0:
        ok = False
    if len(argv) == 4:
        a, b = (str(ipaddress.ip_address(x)) for x in argv[2:4])
        sa, sb = shapes.get(a, {}), shapes.get(b, {})
        common = sorted(set(sa) & set(sb))
        if not common:
            ok = False
            print("no payload size sent by both %s (%d sizes) and %s (%d sizes)" %
                  (a, len(sa), b, len(sb)))
        for size in common:
            if sa[size] != sb[size]:
                ok = False
                print("%d-byte packets differ: %s sent %s; %s sent %s" %
                      (size, a, sorted(sa[size]), b, sorted(sb[size])))
            else:
                print("%d-byte packets: %s and %s send the same fields (%s)" %
                      (size, a, b, ", ".join("%s=%s" % kv for kv in sorted(sa[size])[0])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
