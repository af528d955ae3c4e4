#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Capture the frames of one network interface into a pcap file.

    pcap_capture.py IFACE FILE SECONDS

Opens a packet socket (AF_PACKET, every protocol) bound to IFACE, prints
"capturing" once it is bound, then writes every frame the interface sends
or receives into FILE (pcap, Ethernet link type, microsecond timestamps,
whole frames) until SIGTERM or SIGINT, or SECONDS have passed, whichever
comes first.  The guest has no tcpdump; this is all the tests need of it.
Exit status 0, or 2 when the socket cannot be opened.
"""

import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SNAPLEN = 65535
LINKTYPE_ETHERNET = 1

stop = False


def on_signal(_signum, _frame):
    global stop
    stop = True


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    iface, path, seconds = argv[1], argv[2], float(argv[3])
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((iface, 0))
    except OSError as e:
        print("pcap_capture: %s: %s" % (iface, e), file=sys.stderr)
        return 2
    s.settimeout(0.1)
    end = time.monotonic() + seconds
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        out.flush()
        print("capturing", flush=True)
        while not stop and time.monotonic() < end:
            try:
                frame = s.recv(SNAPLEN)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            now = time.time()
            sec = int(now)
            out.write(struct.pack("<IIII", sec, int((now - sec) * 1e6), len(frame), len(frame)))
            out.write(frame)
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
