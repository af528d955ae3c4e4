#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""RC under loss, through pyverbs: every message, whole, in order.

    rc_loss.py SEND_DEV SEND_GIDX RECV_DEV RECV_GIDX [COUNT]
    rc_loss.py both SEND_DEV SEND_GIDX RECV_DEV RECV_GIDX [COUNT]

Connects an RC QP on SEND_DEV (GID index SEND_GIDX) to one on RECV_DEV,
path MTU 1024, retry_cnt 7 (soft-RoCE's forever), and sends COUNT (default
100) SENDs of 4096 bytes (four packets each), message i holding (i, j) in
each of its 512 8-byte words, 16 in flight, with COUNT receives posted.
Run with loss, reordering or duplication on the path: every SEND
completes successfully and every receive completes, in order, with the
message sent, whole. Both ends live in this process until both have every
completion (ibv_rc_pingpong's ends do not: one that exits while the other
still waits for an acknowledgement lost on the way leaves the other
retrying for ever). With "both", the same again from RECV_DEV to
SEND_DEV, in the same process (Python starts slowly on the debug kernel).
Prints "sent N received N", then "ok A -> B" or "not ok A -> B", for each
way; exits 0 when all of this holds, 1 otherwise.
"""

import struct
import sys

from pyverbs.libibverbs_enums import ibv_access_flags, ibv_wc_status
from pyverbs.wr import SGE, RecvWR, SendWR

import rc_common

LEN = 4096
WORDS = LEN // 8
WINDOW = 16


def message(i):
    """The bytes of message i."""
    return b"".join(struct.pack("<II", i, j) for j in range(WORDS))


def one_way(way, count):
    """count messages from device way[0] (GID index way[1]) to way[2] (way[3]):
    whether everything held."""
    ends = []
    for dev, gidx in ((way[0], way[1]), (way[2], way[3])):
        e = rc_common.End(dev, int(gidx), cqe=2 * count, mr_len=LEN * count,
                          mr_access=ibv_access_flags.IBV_ACCESS_LOCAL_WRITE)
        e.qp = e.new_qp(access=0, send_wr=WINDOW, recv_wr=count)
        ends.append(e)
    snd, rcv = ends
    snd.connect(snd.qp, rcv.gid, rcv.qp.qp_num)
    rcv.connect(rcv.qp, snd.gid, snd.qp.qp_num)
    for k in range(count):
        rcv.qp.post_recv(RecvWR(wr_id=k, num_sge=1,
                                sg=[SGE(rcv.mr.buf + k * LEN, LEN, rcv.mr.lkey)]))
    for i in range(count):
        snd.mr.write(message(i), LEN, i * LEN)
    sent = []
    for i in range(count):
        if i - len(sent) >= WINDOW:
            sent += snd.poll(1, 60)
        snd.qp.post_send(SendWR(wr_id=i, num_sge=1,
                                sg=[SGE(snd.mr.buf + i * LEN, LEN, snd.mr.lkey)]))
    sent += snd.poll(count - len(sent), 60)
    got = rcv.poll(count, 60)
    ok = [(w.wr_id, w.status) for w in sent] == [(i, ibv_wc_status.IBV_WC_SUCCESS)
                                                  for i in range(count)]
    if not ok:
        print("# the sends did not all complete successfully, in order")
    for k, w in enumerate(got):
        if w.status != ibv_wc_status.IBV_WC_SUCCESS or w.wr_id != k or w.byte_len != LEN or \
                rcv.mr.read(LEN, k * LEN) != message(k):
            print("# receive %d: wr_id %d status %d len %d, or not message %d" %
                  (k, w.wr_id, w.status, w.byte_len, k))
            ok = False
    print("sent %d received %d" % (len(sent), len(got)))
    return ok and len(got) == count


def main(argv):
    return rc_common.run_ways(one_way, argv, 100, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
