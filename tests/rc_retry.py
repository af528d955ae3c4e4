#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The ends of an RC requester's retries, through pyverbs.

    rc_retry.py retry DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py rnr DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py rnr_recovers DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py destroy_retrying DEV GIDX PEER_DEV PEER_GIDX

retry: an RC QP on DEV (GID index GIDX) connected to a QP number that
PEER_DEV (its GID index PEER_GIDX) does not have: nothing answers its
SEND, which completes with IBV_WC_RETRY_EXC_ERR after retry_cnt 2 at a
timeout of 2^10 x 4.096 us; the SEND posted after it is flushed.
rnr: two connected RC QPs, the receiver (on PEER_DEV) with nothing posted
and a min_rnr_timer of 1 (10 us): the SEND ends in
IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry 2.  rnr_recovers: the same with
rnr_retry 7 (forever), and a receive posted 0.2 s later: the SEND
completes, and so does the receive, with the bytes sent.
destroy_retrying: as retry, with retry_cnt 7 (forever) at a timeout of
2^8 x 4.096 us, and the QP destroyed after half a second of retrying
(its timers stopped while they fire: the debug lane's KASAN watches).
Prints one line per completion ("wc wr_id W status S opcode O len L")
and "state S" of the sending QP at the end; exits 0 when the outcome is
the one expected, 1 otherwise.
"""

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
LEN = 64


class End:
    """A context, PD, CQ, MR and RC QP on one device."""

    def __init__(self, dev, gidx):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 16)
        self.mr = MR(self.pd, 4096, ibv_access_flags.IBV_ACCESS_LOCAL_WRITE)
        init = QPInitAttr(qp_type=ibv_qp_type.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=QPCap(max_send_wr=4, max_recv_wr=4))
        self.qp = QP(self.pd, init)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_INIT, port_num=1)
        a.pkey_index = 0
        a.qp_access_flags = 0
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT |
                       M.IBV_QP_ACCESS_FLAGS)

    def connect(self, gid, qpn, timeout=10, retry=2, rnr=2, min_rnr=1):
        """INIT -> RTR -> RTS towards QP qpn at gid."""
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTR)
        a.path_mtu = 3
        a.dest_qp_num = qpn
        a.rq_psn = 0
        a.max_dest_rd_atomic = 1
        a.min_rnr_timer = min_rnr
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=self.gidx, hop_limit=64),
                           is_global=1, port_num=1)
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU |
                       M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN | M.IBV_QP_MAX_DEST_RD_ATOMIC |
                       M.IBV_QP_MIN_RNR_TIMER)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTS)
        a.timeout = timeout
        a.retry_cnt = retry
        a.rnr_retry = rnr
        a.sq_psn = 0
        a.max_rd_atomic = 1
        self.qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT |
                       M.IBV_QP_RNR_RETRY | M.IBV_QP_SQ_PSN | M.IBV_QP_MAX_QP_RD_ATOMIC)

    def send(self, wr_id):
        self.mr.write(bytes(range(LEN)), LEN, 0)
        self.qp.post_send(SendWR(wr_id=wr_id, num_sge=1, sg=[SGE(self.mr.buf, LEN, self.mr.lkey)]))

    def recv(self, wr_id):
        self.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                                 sg=[SGE(self.mr.buf + 2048, 1024, self.mr.lkey)]))

    def poll(self, want, secs=20):
        """Completions until `want` of them or `secs` seconds."""
        got = []
        end = time.monotonic() + secs
        while len(got) < want and time.monotonic() < end:
            _, wcs = self.cq.poll(want - len(got))
            for wc in wcs:
                print("wc wr_id %d status %d opcode %d len %d" %
                      (wc.wr_id, wc.status, wc.opcode, wc.byte_len), flush=True)
                got.append(wc)
            if not wcs:
                time.sleep(0.01)
        return got


def main(argv):
    if len(argv) != 6 or argv[1] not in ("retry", "rnr", "rnr_recovers", "destroy_retrying"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    case = argv[1]
    a = End(argv[2], int(argv[3]))
    b = End(argv[4], int(argv[5]))
    ok = False
    if case == "destroy_retrying":
        a.connect(b.gid, b.qp.qp_num ^ 0x800, timeout=8, retry=7)
        a.send(1)
        time.sleep(0.5)
        wcs = a.poll(1, secs=0)
        state = a.qp.query(M.IBV_QP_STATE)[0].qp_state
        print("state %d" % state)
        a.qp.close()
        # Still retrying when destroyed: no completion, still in RTS.
        return 0 if not wcs and state == ibv_qp_state.IBV_QPS_RTS else 1
    if case == "retry":
        # A QP number b's device does not have.
        a.connect(b.gid, b.qp.qp_num ^ 0x800)
        a.send(1)
        a.send(2)
        wcs = a.poll(2)
        ok = ([w.status for w in wcs] ==
              [ibv_wc_status.IBV_WC_RETRY_EXC_ERR, ibv_wc_status.IBV_WC_WR_FLUSH_ERR] and
              [w.wr_id for w in wcs] == [1, 2])
    else:
        forever = case == "rnr_recovers"
        a.connect(b.gid, b.qp.qp_num, rnr=7 if forever else 2)
        b.connect(a.gid, a.qp.qp_num)
        a.send(1)
        if forever:
            time.sleep(0.2)
            b.recv(7)
            sent = a.poll(1)
            got = b.poll(1)
            ok = ([w.status for w in sent + got] == [ibv_wc_status.IBV_WC_SUCCESS] * 2 and
                  got[0].wr_id == 7 and got[0].byte_len == LEN and
                  b.mr.read(LEN, 2048) == bytes(range(LEN)))
        else:
            wcs = a.poll(1)
            ok = [w.status for w in wcs] == [ibv_wc_status.IBV_WC_RNR_RETRY_EXC_ERR]
    state = a.qp.query(M.IBV_QP_STATE)[0].qp_state
    print("state %d" % state)
    if not forever_ok_state(case, state):
        ok = False
    return 0 if ok else 1


def forever_ok_state(case, state):
    """The sender's state: error after the retries ran out, else RTS."""
    if case == "rnr_recovers":
        return state == ibv_qp_state.IBV_QPS_RTS
    return state == ibv_qp_state.IBV_QPS_ERR


if __name__ == "__main__":
    sys.exit(main(sys.argv))
