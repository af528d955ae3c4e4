#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send RoCE v2 UD packets, right or spoilt, through a raw IP socket.

    roce_inject.py WHAT SRC DST QPN [MARKER]
    roce_inject.py mutate SRC DST QPN SEED COUNT
    roce_inject.py serve

Sends one UD SEND from SRC to DST (IPv4 or IPv6 addresses, UDP port 4791) for
QP number QPN, with Q_Key 0x11111111, source QP 0x33, P_Key 0xffff, the
16-byte payload "rv0 wire test!!!" and a right ICRC, spoilt as WHAT says:

  good     nothing spoilt
  short    a datagram too short for its BTH
  icrc     one bit of the ICRC flipped
  opcode   an RC SEND opcode
  udpsum   a wrong (non-zero) UDP checksum
  qkey     Q_Key 0x22222222
  pkey     P_Key 0x1234 (not the default partition)
  options  an IPv4 header with 4 bytes of options (NOP, NOP, NOP, EOL);
           IPv6: a hop-by-hop options header (PadN) before the UDP header
  big      1025 bytes of payload: more than a 1024-byte receive buffer
           (after its 40-byte GRH) takes
  gso      GSO_COUNT good packets in one send of a UDP socket (bound to
           SRC, port 0xC001) with UDP_SEGMENT: one train through the
           sender's stack and the veth, which the receiver's stack cuts
           into its datagrams; over IPv4 with DF and no connection, the
           segments' IP identifications are 0, 1, 2... (the ICRC covers
           them)

With MARKER ("marker"), a good packet with the 20-byte payload "rv0 wire
test marker" follows at once, from the same process and CPU, so that it
reaches the receiver after the first: when a receiver has delivered the
marker, it has dealt with the packet before.
The whole IP header is the script's own (IP_HDRINCL, IPv6's IPPROTO_RAW):
the ICRC covers its identification and flags; the kernel fills in only the
IPv4 checksum. Over IPv6 the UDP checksum is computed (it is mandatory
there), and the ICRC's pseudo-header masks the traffic class, flow label
and hop limit, as soft-RoCE's does (rxe_icrc.c).

    roce_inject.py rc SRC DST QPN OPCODE PSN HEX [icrc]

"rc" sends one packet of a connected transport (IPv4): a BTH with
OPCODE, destination QP QPN and PSN (no AckReq, no pad), then the bytes
HEX (its extended headers and payload, a multiple of 4 bytes; "-" for
none) and a right ICRC, or with "icrc" one bit of it flipped.

"serve" reads such requests from its standard input, one per line
("WHAT SRC DST QPN [marker]", or "mutate SRC DST QPN SEED COUNT"), and
answers each with one line when its packets are sent: "sent", "mutated:
COUNT", or "error: ..." (and goes on).  One process for many packets:
starting Python costs seconds on the debug kernel under TCG.

"mutate" sends COUNT good packets, each with one to four random bytes
changed (a PRNG seeded with SEED) anywhere from the UDP length to the end,
the ICRC computed again after the change for every other one (so that
the packet passes the ICRC and reaches the checks behind it); the IP
header and the UDP ports are left alone, so each one reaches the receiver.
It prints "mutated: COUNT".
"""

import os
import random
import socket
import struct
import sys
import zlib

ICRC_SEED = 0xDEBB20E3
PAYLOAD = b"rv0 wire test!!!"
MARKER = b"rv0 wire test marker"
KINDS = ("good", "short", "icrc", "opcode", "udpsum", "qkey", "pkey", "options", "big", "gso")
GSO_COUNT = 4
# <linux/udp.h>, <linux/in.h>
UDP_SEGMENT = 103
IP_MTU_DISCOVER = 10
IP_PMTUDISC_DO = 2


def icrc_of(pseudo, rest):
    """The ICRC over a masked pseudo-header and the rest of the packet."""
    return zlib.crc32(bytes(pseudo) + bytes(rest), ICRC_SEED ^ 0xFFFFFFFF)


def checksum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def body_of(what, qpn, payload, rc=None):
    """The BTH, the DETH, the payload and its padding; with rc (opcode,
    PSN, bytes), that BTH and those bytes."""
    if rc:
        opcode, psn, rest = rc
        return struct.pack(">BBHII", opcode, 0, 0xFFFF, qpn, psn & 0xFFFFFF), rest
    pad = -len(payload) % 4
    opcode = 0x64 if what != "opcode" else 0x04
    pkey = 0xFFFF if what != "pkey" else 0x1234
    qkey = 0x11111111 if what != "qkey" else 0x22222222
    bth = struct.pack(">BBHII", opcode, pad << 4, pkey, qpn, 0)
    deth = struct.pack(">II", qkey, 0x33)
    return bth, deth + payload + bytes(pad)


def packet6(what, src, dst, qpn, payload=PAYLOAD, mutate=None):
    """An IPv6 packet; mutate(dgram) changes the datagram before the ICRC
    (returns True) or after it (returns False)."""
    if what == "big":
        payload = bytes(range(256)) * 4 + b"!"
    bth, rest = body_of(what, qpn, payload)
    saddr = socket.inet_pton(socket.AF_INET6, src)
    daddr = socket.inet_pton(socket.AF_INET6, dst)
    # A hop-by-hop header (next header UDP, length 0: 8 bytes, PadN).
    ext = bytes([17, 0, 1, 4, 0, 0, 0, 0]) if what == "options" else b""
    udp_len = 8 + len(bth) + len(rest) + 4
    ip6 = struct.pack(">IHBB16s16s", 0x60000000, len(ext) + udp_len, 0 if ext else 17, 64,
                      saddr, daddr)
    dgram = bytearray(struct.pack(">HHHH", 0xC001, 4791, udp_len, 0)) + bth + rest
    before = mutate(dgram) if mutate else False
    # rxe_icrc.c: the IPv6 header with its class, flow label and hop limit
    # set to ones (the UDP length as the datagram says, the next header
    # UDP, as if there were no extension header), the UDP checksum too,
    # and the BTH's resv8a.
    pseudo = bytearray(struct.pack(">IHBB16s16s", 0x6FFFFFFF, udp_len, 17, 0xFF, saddr, daddr))
    pseudo += dgram[:8] + dgram[8:8 + len(bth)]
    pseudo[40 + 6:40 + 8] = b"\xff\xff"
    pseudo[48 + 4] = 0xFF
    seal(dgram, pseudo, len(bth), what, mutate, before)
    if what == "short":
        dgram = dgram[:4] + struct.pack(">H", 8 + 6) + dgram[6:8] + bth[:6]
        ip6 = ip6[:4] + struct.pack(">H", len(ext) + len(dgram)) + ip6[6:]
    if not (mutate and dgram[6:8] != b"\0\0"):
        csum = checksum(saddr + daddr + struct.pack(">I3xB", len(dgram), 17) + bytes(dgram[:6]) +
                        b"\0\0" + bytes(dgram[8:]))
        dgram[6:8] = struct.pack(">H", csum or 0xFFFF)
    if what == "udpsum":
        dgram[6:8] = struct.pack(">H", (struct.unpack(">H", dgram[6:8])[0] ^ 0x1234) or 1)
    return ip6 + ext + bytes(dgram)


def seal(dgram, pseudo, bth_len, what, mutate, mutated_before):
    """Appends the ICRC over PSEUDO and the datagram after its UDP header
    and BTH (spoilt for "icrc"), then applies MUTATE if it was not applied
    before the ICRC was computed."""
    icrc = icrc_of(pseudo, dgram[8 + bth_len:])
    if what == "icrc":
        icrc ^= 1
    dgram += struct.pack("<I", icrc)
    if mutate and not mutated_before:
        mutate(dgram)


def packet(what, src, dst, qpn, payload=PAYLOAD, mutate=None, ip_id=0x1234, rc=None):
    if ":" in src:
        return packet6(what, src, dst, qpn, payload, mutate)
    if what == "big":
        payload = bytes(range(256)) * 4 + b"!"
    bth, rest = body_of(what, qpn, payload, rc)
    body = bth + rest
    options = b"\x01\x01\x01\x00" if what == "options" else b""
    udp_len = 8 + len(body) + 4
    ihl = 5 + len(options) // 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + udp_len, ip_id,
                               0x4000, 64, 17, 0, socket.inet_aton(src),
                               socket.inet_aton(dst)) + options)
    udp = bytearray(struct.pack(">HHHH", 0xC001, 4791, udp_len, 0))
    # The ICRC: CRC-32 from the seed of a masked LRH over the headers with
    # the variant fields masked (type of service, time to live, header
    # checksum; UDP checksum; the BTH's FECN/BECN byte), then the rest
    # (zlib's CRC-32 inverts before and after: start from ~seed).
    dgram = udp + bytearray(body)
    before = mutate(dgram) if mutate else False
    pseudo = bytearray(ip) + dgram[:8 + len(bth)]
    pseudo[1] = 0xFF
    pseudo[8] = 0xFF
    pseudo[10:12] = b"\xff\xff"
    at = len(ip)
    pseudo[at + 6:at + 8] = b"\xff\xff"
    pseudo[at + 8 + 4] = 0xFF
    seal(dgram, pseudo, len(bth), what, mutate, before)
    if what == "short":
        dgram = udp[:4] + struct.pack(">H", 8 + 6) + udp[6:8] + bth[:6]
    if what == "udpsum":
        dgram[6:8] = b"\x12\x34"
    return bytes(ip) + bytes(dgram)


def mutator(rng):
    """A mutation of one to four random bytes from the UDP length on; for
    every other packet before the ICRC is computed."""
    before = rng.random() < 0.5

    def mutate(dgram):
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(4, len(dgram))
            dgram[at] ^= rng.randint(1, 255)
        return before
    return mutate


def valid(args):
    """Whether ARGS (the command line without the program) is a request."""
    if len(args) == 6 and args[0] == "mutate":
        return True
    if args[:1] == ["rc"]:
        return len(args) == 7 or len(args) == 8 and args[7] == "icrc"
    return len(args) in (4, 5) and args[0] in KINDS and (len(args) == 4 or args[4] == "marker")


SOCKETS = {}


def send_gso(src, dst, qpn):
    """GSO_COUNT good packets as one UDP_SEGMENT send; each segment's UDP
    payload is what packet() would send, with its ICRC over the headers the
    segment will have (IPv4: identification i, DF)."""
    v6 = ":" in src
    family = socket.AF_INET6 if v6 else socket.AF_INET
    segs = [packet("good", src, dst, qpn, ip_id=i)[(40 if v6 else 20) + 8:]
            for i in range(GSO_COUNT)]
    with socket.socket(family, socket.SOCK_DGRAM) as u:
        u.bind((src, 0xC001))
        if not v6:
            u.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        u.setsockopt(socket.IPPROTO_UDP, UDP_SEGMENT, len(segs[0]))
        u.sendto(b"".join(segs), (dst, 4791))


def send(args):
    """Sends what the request ARGS asks for; returns what to print."""
    what, src, dst, qpn = args[0], args[1], args[2], int(args[3], 0)
    family = socket.AF_INET6 if ":" in src else socket.AF_INET
    if family not in SOCKETS:
        SOCKETS[family] = socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s = SOCKETS[family]
    if what == "mutate":
        rng = random.Random(int(args[4]))
        count = int(args[5])
        for _ in range(count):
            s.sendto(packet("good", src, dst, qpn, mutate=mutator(rng)), (dst, 0))
        return "mutated: %d" % count
    if what == "rc":
        rest = b"" if args[6] == "-" else bytes.fromhex(args[6])
        if len(rest) % 4:
            raise ValueError("rc: %d bytes, not a multiple of 4" % len(rest))
        rc = (int(args[4], 0), int(args[5], 0), rest)
        spoil = "icrc" if len(args) == 8 else "good"
        s.sendto(packet(spoil, src, dst, qpn, rc=rc), (dst, 0))
        return "sent"
    if what == "gso":
        send_gso(src, dst, qpn)
    else:
        s.sendto(packet(what, src, dst, qpn), (dst, 0))
    if len(args) == 5:
        s.sendto(packet("good", src, dst, qpn, MARKER), (dst, 0))
    return "sent"


def main(argv):
    serving = argv[1:] == ["serve"]
    if not serving and not valid(argv[1:]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    # One CPU: the receive side queues each packet to the backlog of the
    # CPU that sent it (veth), so the marker cannot overtake the first.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if not serving:
        done = send(argv[1:])
        if done != "sent":
            print(done)
        return 0
    for line in sys.stdin:
        args = line.split()
        if not valid(args):
            print("error: not a request: %s" % line.strip(), flush=True)
            continue
        try:
            print(send(args), flush=True)
        except (OSError, ValueError) as e:
            print("error: %s" % e, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
