#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A UD QP that packets are sent at, through pyverbs.

    ud_sink.py DEV QKEY

Creates a UD QP on DEV (port 1, P_Key index 0) in RTS with Q_Key QKEY,
with RECVS receives of 1064 bytes (a GRH and 1024 bytes) posted, their
work request IDs 0, 1, ... in order, and prints "qpn N".  Then, for each
line read from its standard input, polls its CQ and prints each
completion that arrived ("wc wr_id W status S byte_len L src_qp Q grh G"),
or "none", and a line "end".  It exits at the end of its input;
its QP, CQ, MR and PD go with it.
"""

import sys

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.libibverbs_enums import ibv_access_flags, ibv_qp_type, ibv_wc_flags
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR

SLOT = 40 + 1024
RECVS = 16


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ctx = Context(name=argv[1])
    pd = PD(ctx)
    cq = CQ(ctx, 2 * RECVS)
    mr = MR(pd, RECVS * SLOT, ibv_access_flags.IBV_ACCESS_LOCAL_WRITE)
    init = QPInitAttr(qp_type=ibv_qp_type.IBV_QPT_UD, scq=cq, rcq=cq,
                      cap=QPCap(max_send_wr=1, max_recv_wr=RECVS))
    attr = QPAttr(port_num=1)
    attr.qkey = int(argv[2], 0)
    attr.pkey_index = 0
    # Given the attributes, pyverbs takes a UD QP through INIT and RTR to RTS.
    qp = QP(pd, init, attr)
    for i in range(RECVS):
        qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf + i * SLOT, SLOT, mr.lkey)]))
    print("qpn %d" % qp.qp_num, flush=True)
    for _ in sys.stdin:
        n, wcs = cq.poll(2 * RECVS)
        for wc in wcs:
            print("wc wr_id %d status %d byte_len %d src_qp %d grh %d" %
                  (wc.wr_id, wc.status, wc.byte_len, wc.src_qp,
                   1 if wc.wc_flags & ibv_wc_flags.IBV_WC_GRH else 0))
        if n == 0:
            print("none")
        print("end", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
