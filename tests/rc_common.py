# SPDX-License-Identifier: GPL-2.0
"""What the connected-QP test scripts share (rc_retry.py, rc_atomic.py,
rc_hostile.py, rc_loss.py, uc_loss.py, srq_cases.py): a device end
(context, PD, CQ, MR), QPs in INIT, the INIT -> RTR -> RTS of a connection
(path MTU 1024, PSNs 0, the peer's GID as a global route) and polling with
a deadline, through pyverbs."""

import os
import select
import sys
import time

from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.libibverbs_enums import (ibv_access_flags, ibv_qp_attr_mask,
                                      ibv_qp_state, ibv_qp_type)
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

M = ibv_qp_attr_mask
A = ibv_access_flags
# Every access an RC QP or region may allow here.
ALL = (A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ |
       A.IBV_ACCESS_REMOTE_ATOMIC)


class End:
    """A context, PD, CQ of `cqe` entries and an MR of `mr_len` bytes with
    `mr_access` on device `dev`, which takes GID index `gidx`."""

    def __init__(self, dev, gidx, cqe=64, mr_len=4096, mr_access=ALL):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, cqe)
        self.mr = MR(self.pd, mr_len, mr_access)

    def new_qp(self, qp_type=ibv_qp_type.IBV_QPT_RC, access=ALL, send_wr=8, recv_wr=8,
               srq=None):
        """A QP of `qp_type` on this end's CQ (its receives from `srq` if
        given), in INIT, allowing `access` remotely."""
        init = QPInitAttr(qp_type=qp_type, scq=self.cq, rcq=self.cq, srq=srq,
                          cap=QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr))
        qp = QP(self.pd, init)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_INIT, port_num=1)
        a.pkey_index = 0
        a.qp_access_flags = access
        qp.modify(a, M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT |
                  M.IBV_QP_ACCESS_FLAGS)
        return qp

    def connect(self, qp, gid, qpn, rc=True, depth=1, timeout=14, retry=7, rnr=7,
                min_rnr=1):
        """`qp` INIT -> RTR -> RTS towards QP `qpn` at `gid`: on RC with
        `depth` READs and atomics each way, the local ACK timeout, retry
        counts and RNR timer given; UC has none of those."""
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTR)
        a.path_mtu = 3
        a.dest_qp_num = qpn
        a.rq_psn = 0
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=self.gidx, hop_limit=64),
                           is_global=1, port_num=1)
        mask = (M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN |
                M.IBV_QP_RQ_PSN)
        if rc:
            a.max_dest_rd_atomic = depth
            a.min_rnr_timer = min_rnr
            mask |= M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER
        qp.modify(a, mask)
        a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_RTS)
        a.sq_psn = 0
        mask = M.IBV_QP_STATE | M.IBV_QP_SQ_PSN
        if rc:
            a.timeout = timeout
            a.retry_cnt = retry
            a.rnr_retry = rnr
            a.max_rd_atomic = depth
            mask |= (M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY |
                     M.IBV_QP_MAX_QP_RD_ATOMIC)
        qp.modify(a, mask)

    def poll(self, want, secs=20, show=False):
        """Completions until `want` of them or `secs` seconds; each printed
        with `show`."""
        got = []
        end = time.monotonic() + secs
        while len(got) < want and time.monotonic() < end:
            _, wcs = self.cq.poll(min(want - len(got), 64))
            for wc in wcs:
                if show:
                    print("wc wr_id %d status %d opcode %d len %d" %
                          (wc.wr_id, wc.status, wc.opcode, wc.byte_len), flush=True)
                got.append(wc)
            if not wcs:
                time.sleep(0.005)
        return got


def state(qp):
    """The state of `qp`."""
    return qp.query(M.IBV_QP_STATE)[0].qp_state


def settled_state(qp, want, secs=5):
    """The state of `qp` once it is `want` or `secs` seconds have passed:
    a QP fails just after the completion or the NAK that says so (soft-RoCE
    posts the completion, then moves the QP)."""
    end = time.monotonic() + secs
    while True:
        got = state(qp)
        if got == want or time.monotonic() > end:
            return got
        time.sleep(0.01)


def run_cases(cases, run, argv, doc):
    """The scripts' main with cases: `run(case, argv)` for the cases argv[1]
    names (separated by commas), or for each of `cases` with "all" (in one
    process: Python starts
    slowly on the debug kernel), each followed by "ok CASE" or "not ok
    CASE"; the exit status (2 with the usage of `doc`)."""
    chosen = tuple(cases) if len(argv) == 6 and argv[1] == "all" else \
        tuple(argv[1].split(",")) if len(argv) == 6 else ()
    if not chosen or any(c not in cases for c in chosen):
        print(doc.split("\n\n")[1], file=sys.stderr)
        return 2
    failed = 0
    for case in chosen:
        ok = run(case, argv)
        print("%s %s" % ("ok" if ok else "not ok", case), flush=True)
        failed += not ok
    return 0 if failed == 0 else 1


def run_ways(one_way, argv, count, doc):
    """The loss scripts' main: `one_way(way, count)` from SEND_DEV to
    RECV_DEV (way: the two devices and their GID indexes), and back with
    "both", each followed by "ok A -> B" or "not ok A -> B"; COUNT from the
    command line or `count`; the exit status (2 with the usage of `doc`)."""
    both = len(argv) > 1 and argv[1] == "both"
    args = argv[2:] if both else argv[1:]
    if len(args) not in (4, 5):
        print(doc.split("\n\n")[1], file=sys.stderr)
        return 2
    count = int(args[4]) if len(args) == 5 else count
    ways = [args[:4]]
    if both:
        ways.append(args[2:4] + args[:2])
    failed = 0
    for way in ways:
        ok = one_way(way, count)
        print("%s %s -> %s" % ("ok" if ok else "not ok", way[0], way[2]), flush=True)
        failed += not ok
    return 0 if failed == 0 else 1


def event_fds():
    """The uverbs async event files this process has open."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == "anon_inode:[infinibandevent]":
                out.add(int(fd))
        except OSError:
            pass
    return out


def events(ctx, fds, secs, first=None):
    """The async events of context `ctx` (its event file among `fds`):
    the first within `first` seconds (`secs` if not given), each next one
    within `secs` of the last."""
    got = []
    while select.select(list(fds), [], [], secs if got or first is None else first)[0]:
        ev = ctx.get_async_event()
        got.append(ev.event_type)
        ev.ack()
    return got
