#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UC under loss, through pyverbs: whole messages or nothing.

    uc_loss.py SEND_DEV SEND_GIDX RECV_DEV RECV_GIDX [COUNT]

Connects a UC QP on SEND_DEV (GID index SEND_GIDX) to one on RECV_DEV,
path MTU 1024, and sends COUNT (default 200) SENDs of 4096 bytes (four
packets each), message i holding (i, j) in each of its 512 8-byte words,
with COUNT receives posted. Run with loss on the path: every SEND
completes successfully (UC does not know what was lost); the receives
that complete are the first ones posted, in order, each holding exactly
one message sent, whole, the messages in the order sent; fewer than COUNT
and more than none arrive. Prints "sent N received R" and exits 0 when
all of this holds, 1 otherwise.
"""

import struct
import sys
import time

from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.libibverbs_enums import (ibv_access_flags, ibv_qp_attr_mask,
                                      ibv_qp_state, ibv_qp_type, ibv_wc_status)
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

M = ibv_qp_attr_mask
LEN = 4096
WORDS = LEN // 8
WINDOW = 32


class End:
    """A context, PD, CQ, MR of `count` messages and a UC QP on one device."""

    def __init__(self, dev, gidx, count):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 2 * count)
        self.mr = MR(self.pd, LEN * count, ibv_access_flags.IBV_ACCESS_LOCAL_WRITE)
        init = QPInitAttr(qp_type=ibv_qp_type.IBV_QPT_UC, scq=self.cq, rcq=self.cq,
                          cap=QPCap(max_send_wr=WINDOW, max_recv_wr=count))
        self.qp = QP(self.pd, init)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_INIT, port_num=1)
        a.pkey_index = 0
        a.qp_access_flags = 0
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT |
                       M.IBV_QP_ACCESS_FLAGS)

    def connect(self, gid, qpn):
        """INIT -> RTR -> RTS towards QP qpn at gid (UC: no timer, no retries)."""
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTR)
        a.path_mtu = 3
        a.dest_qp_num = qpn
        a.rq_psn = 0
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=self.gidx, hop_limit=64),
                           is_global=1, port_num=1)
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU |
                       M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTS)
        a.sq_psn = 0
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_SQ_PSN)

    def poll(self, want, secs):
        """Completions until `want` of them or `secs` seconds."""
        got = []
        end = time.monotonic() + secs
        while len(got) < want and time.monotonic() < end:
            _, wcs = self.cq.poll(min(want - len(got), 64))
            got.extend(wcs)
            if not wcs:
                time.sleep(0.005)
        return got


def message(i):
    """The bytes of message i."""
    return b"".join(struct.pack("<II", i, j) for j in range(WORDS))


def main(argv):
    if len(argv) not in (5, 6):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    count = int(argv[5]) if len(argv) == 6 else 200
    snd = End(argv[1], int(argv[2]), count)
    rcv = End(argv[3], int(argv[4]), count)
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
