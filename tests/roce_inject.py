#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send RoCE v2 UD packets, right or spoilt, through a raw IPv4 socket.

    roce_inject.py WHAT SRC DST QPN [MARKER]

Sends one UD SEND from SRC to DST (IPv4 addresses, UDP port 4791) for
QP number QPN, with Q_Key 0x11111111, source QP 0x33, P_Key 0xffff, the
16-byte payload "rv0 wire test!!!" and a right ICRC, spoilt as WHAT says:

  good     nothing spoilt
  short    a datagram too short for its BTH
  icrc     one bit of the ICRC flipped
  opcode   an RC SEND opcode
  udpsum   a wrong (non-zero) UDP checksum
  qkey     Q_Key 0x22222222
  pkey     P_Key 0x1234 (not the default partition)
  options  an IPv4 header with 4 bytes of options (NOP, NOP, NOP, EOL)
  big      1025 bytes of payload: more than a 1024-byte receive buffer
           (after its 40-byte GRH) takes

With MARKER ("marker"), a good packet with the 20-byte payload "rv0 wire
test marker" follows at once, from the same process and CPU, so that it
reaches the receiver after the first: when a receiver has delivered the
marker, it has dealt with the packet before.
The whole IP header is the script's own (IP_HDRINCL): the ICRC covers its
identification and flags; the kernel fills in only the checksum.
"""

import os
import socket
import struct
import sys
import zlib

ICRC_SEED = 0xDEBB20E3
PAYLOAD = b"rv0 wire test!!!"
MARKER = b"rv0 wire test marker"
KINDS = ("good", "short", "icrc", "opcode", "udpsum", "qkey", "pkey", "options", "big")


def packet(what, src, dst, qpn, payload=PAYLOAD):
    if what == "big":
        payload = bytes(range(256)) * 4 + b"!"
    pad = -len(payload) % 4
    opcode = 0x64 if what != "opcode" else 0x04
    pkey = 0xFFFF if what != "pkey" else 0x1234
    qkey = 0x11111111 if what != "qkey" else 0x22222222
    bth = struct.pack(">BBHII", opcode, pad << 4, pkey, qpn, 0)
    deth = struct.pack(">II", qkey, 0x33)
    body = bth + deth + payload + bytes(pad)
    options = b"\x01\x01\x01\x00" if what == "options" else b""
    udp_len = 8 + len(body) + 4
    ihl = 5 + len(options) // 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + udp_len, 0x1234,
                               0x4000, 64, 17, 0, socket.inet_aton(src),
                               socket.inet_aton(dst)) + options)
    udp = bytearray(struct.pack(">HHHH", 0xC001, 4791, udp_len, 0))
    # The ICRC: CRC-32 from the seed of a masked LRH over the headers with
    # the variant fields masked (type of service, time to live, header
    # checksum; UDP checksum; the BTH's FECN/BECN byte), then the rest
    # (zlib's CRC-32 inverts before and after: start from ~seed).
    pseudo = bytearray(ip) + udp + bytearray(bth)
    pseudo[1] = 0xFF
    pseudo[8] = 0xFF
    pseudo[10:12] = b"\xff\xff"
    at = len(ip)
    pseudo[at + 6:at + 8] = b"\xff\xff"
    pseudo[at + 8 + 4] = 0xFF
    icrc = zlib.crc32(bytes(pseudo) + body[len(bth):], ICRC_SEED ^ 0xFFFFFFFF)
    if what == "icrc":
        icrc ^= 1
    dgram = udp + body + struct.pack("<I", icrc)
    if what == "short":
        dgram = udp[:4] + struct.pack(">H", 8 + 6) + udp[6:8] + bth[:6]
    if what == "udpsum":
        dgram[6:8] = b"\x12\x34"
    return bytes(ip) + bytes(dgram)


def main(argv):
    if len(argv) not in (5, 6) or argv[1] not in KINDS or \
            (len(argv) == 6 and argv[5] != "marker"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    what, src, dst, qpn = argv[1], argv[2], argv[3], int(argv[4], 0)
    # One CPU: the receive side queues each packet to the backlog of the
    # CPU that sent it (veth), so the marker cannot overtake the first.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.sendto(packet(what, src, dst, qpn), (dst, 0))
    if len(argv) == 6:
        s.sendto(packet("good", src, dst, qpn, MARKER), (dst, 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
