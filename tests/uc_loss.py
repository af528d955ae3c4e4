#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UC under loss, through pyverbs: whole messages or nothing.

    uc_loss.py SEND_DEV SEND_GIDX RECV_DEV RECV_GIDX [COUNT]
    uc_loss.py both SEND_DEV SEND_GIDX RECV_DEV RECV_GIDX [COUNT]

Connects a UC QP on SEND_DEV (GID index SEND_GIDX) to one on RECV_DEV,
path MTU 1024, and sends COUNT (default 200) SENDs of 4096 bytes (four
packets each), message i holding (i, j) in each of its 512 8-byte words,
with COUNT receives posted. Run with loss on the path: every SEND
completes successfully (UC does not know what was lost); the receives
that complete are the first ones posted, in order, each holding exactly
one message sent, whole, the messages in the order sent; fewer than COUNT
and more than none arrive. With "both", the same again from RECV_DEV to
SEND_DEV, in the same process (Python starts slowly on the debug kernel).
Prints "sent N received R", then "ok A -> B" or "not ok A -> B", for each
way; exits 0 when all of this holds, 1 otherwise.
"""

import struct
import sys

from pyverbs.libibverbs_enums import ibv_access_flags, ibv_qp_type, ibv_wc_status
from pyverbs.wr import SGE, RecvWR, SendWR

import rc_common

LEN = 4096
WORDS = LEN // 8
WINDOW = 32


class End(rc_common.End):
    """An end of rc_common with an MR of `count` messages and a UC QP."""

    def __init__(self, dev, gidx, count):
        super().__init__(dev, gidx, cqe=2 * count, mr_len=LEN * count,
                         mr_access=ibv_access_flags.IBV_ACCESS_LOCAL_WRITE)
        self.qp = self.new_qp(qp_type=ibv_qp_type.IBV_QPT_UC, access=0, send_wr=WINDOW,
                              recv_wr=count)

    def connect(self, gid, qpn):
        """INIT -> RTR -> RTS towards QP qpn at gid (UC: no timer, no retries)."""
        super().connect(self.qp, gid, qpn, rc=False)


def message(i):
    """The bytes of message i."""
    return b"".join(struct.pack("<II", i, j) for j in range(WORDS))


def one_way(way, count):
    """count messages from device way[0] (GID index way[1]) to way[2] (way[3]):
    whether everything held."""
    snd = End(way[0], int(way[1]), count)
    rcv = End(way[2], int(way[3]), count)
    snd.connect(rcv.gid, rcv.qp.qp_num)
    rcv.connect(snd.gid, snd.qp.qp_num)
    for k in range(count):
        rcv.qp.post_recv(RecvWR(wr_id=k, num_sge=1,
                                sg=[SGE(rcv.mr.buf + k * LEN, LEN, rcv.mr.lkey)]))
    for i in range(count):
        snd.mr.write(message(i), LEN, i * LEN)
    ok = True
    done = 0
    for i in range(count):
        if i - done >= WINDOW:
            wcs = snd.poll(1, 10)
            ok = ok and len(wcs) == 1 and wcs[0].status == ibv_wc_status.IBV_WC_SUCCESS
            done += len(wcs)
        snd.qp.post_send(SendWR(wr_id=i, num_sge=1,
                                sg=[SGE(snd.mr.buf + i * LEN, LEN, snd.mr.lkey)]))
    wcs = snd.poll(count - done, 10)
    if not ok or len(wcs) != count - done or \
            any(w.status != ibv_wc_status.IBV_WC_SUCCESS for w in wcs):
        print("# the sends did not all complete successfully")
        ok = False
    # What arrives, arrives within a second of the last send.
    got = rcv.poll(count, 1)
    got += rcv.poll(count - len(got), 0.5)
    last = -1
    for k, w in enumerate(got):
        if w.status != ibv_wc_status.IBV_WC_SUCCESS or w.wr_id != k or w.byte_len != LEN:
            print("# receive %d: wr_id %d status %d len %d" % (k, w.wr_id, w.status, w.byte_len))
            ok = False
            continue
        data = rcv.mr.read(LEN, k * LEN)
        i = struct.unpack_from("<I", data, 0)[0]
        if i <= last or i >= count or data != message(i):
            print("# receive %d does not hold one whole message after %d" % (k, last))
            ok = False
        last = i
    print("sent %d received %d" % (count, len(got)))
    if not 0 < len(got) < count:
        print("# expected some and not all of the messages to arrive")
        ok = False
    return ok


def main(argv):
    return rc_common.run_ways(one_way, argv, 200, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
