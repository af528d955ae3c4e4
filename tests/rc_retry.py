#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The ends of an RC requester's retries, through pyverbs.

    rc_retry.py retry DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py rnr DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py rnr_recovers DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py destroy_retrying DEV GIDX PEER_DEV PEER_GIDX
    rc_retry.py all DEV GIDX PEER_DEV PEER_GIDX

retry: an RC QP on DEV (GID index GIDX) connected to a QP number that
PEER_DEV (its GID index PEER_GIDX) does not have: nothing answers its
SEND, which completes with IBV_WC_RETRY_EXC_ERR after retry_cnt 2 at a
timeout of 2^10 x 4.096 us; the SEND posted after it is flushed.
rnr: two connected RC QPs, the receiver (on PEER_DEV) with nothing posted
and a min_rnr_timer of 1 (10 us): the SEND ends in
IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry 2 (the ACK timeout 2^14 x 4.096
us here).  rnr_recovers: the same with
rnr_retry 7 (forever), and a receive posted 0.2 s later: the SEND
completes, and so does the receive, with the bytes sent.
destroy_retrying: as retry, with retry_cnt 7 (forever) at a timeout of
2^8 x 4.096 us, and the QP destroyed after half a second of retrying
(its timers stopped while they fire: the debug lane's KASAN watches).
all: each of them in turn, in one process (Python starts slowly on the
debug kernel), each between fresh ends.
Prints one line per completion ("wc wr_id W status S opcode O len L")
and "state S" of the sending QP at the end, then "ok CASE" or "not ok CASE";
exits 0 when every outcome is the one expected, 1 otherwise.
"""

import sys
import time

from pyverbs.libibverbs_enums import ibv_qp_state, ibv_wc_status
from pyverbs.wr import SGE, RecvWR, SendWR

import rc_common
from rc_common import A

LEN = 64


class End(rc_common.End):
    """An end of rc_common with an RC QP allowing no remote access."""

    def __init__(self, dev, gidx):
        super().__init__(dev, gidx, cqe=16, mr_access=A.IBV_ACCESS_LOCAL_WRITE)
        self.qp = self.new_qp(access=0, send_wr=4, recv_wr=4)

    def connect(self, gid, qpn, timeout=10, retry=2, rnr=2, min_rnr=1):
        """INIT -> RTR -> RTS towards QP qpn at gid."""
        super().connect(self.qp, gid, qpn, timeout=timeout, retry=retry, rnr=rnr,
                        min_rnr=min_rnr)

    def send(self, wr_id):
        self.mr.write(bytes(range(LEN)), LEN, 0)
        self.qp.post_send(SendWR(wr_id=wr_id, num_sge=1, sg=[SGE(self.mr.buf, LEN, self.mr.lkey)]))

    def recv(self, wr_id):
        self.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                                 sg=[SGE(self.mr.buf + 2048, 1024, self.mr.lkey)]))

    def poll(self, want, secs=20):
        """Completions until `want` of them or `secs` seconds, printed."""
        return super().poll(want, secs, show=True)


CASES = ("retry", "rnr", "rnr_recovers", "destroy_retrying")


def run(case, argv):
    """One case between fresh ends: whether it had its outcome."""
    a = End(argv[2], int(argv[3]))
    b = End(argv[4], int(argv[5]))
    if case == "destroy_retrying":
        a.connect(b.gid, b.qp.qp_num ^ 0x800, timeout=8, retry=7)
        a.send(1)
        time.sleep(0.5)
        wcs = a.poll(1, secs=0)
        state = rc_common.state(a.qp)
        print("state %d" % state)
        a.qp.close()
        # Still retrying when destroyed: no completion, still in RTS.
        return not wcs and state == ibv_qp_state.IBV_QPS_RTS
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
        # An ACK timeout of 2^14 x 4.096 us (67 ms): the RNR NAKs put it off,
        # but on a loaded debug guest three of 2^10 x 4.096 us (4 ms, two
        # jiffies) can pass between two RNR NAKs (the RNR wait is a jiffy
        # or more, then the peer's answer), ending the case in
        # IBV_WC_RETRY_EXC_ERR (soft-RoCE counts those timeouts as well).
        a.connect(b.gid, b.qp.qp_num, timeout=14, rnr=7 if forever else 2)
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
    state = rc_common.state(a.qp)
    print("state %d" % state)
    return ok and forever_ok_state(case, state)


def forever_ok_state(case, state):
    """The sender's state: error after the retries ran out, else RTS."""
    if case == "rnr_recovers":
        return state == ibv_qp_state.IBV_QPS_RTS
    return state == ibv_qp_state.IBV_QPS_ERR


def main(argv):
    return rc_common.run_cases(CASES, run, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
