#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Shared receive queues on one device, through pyverbs, case by case.

    srq_cases.py DEV GIDX PEER_DEV PEER_GIDX

Creates SRQs on DEV (GID index GIDX) and, where a case needs traffic, QPs
on them that PEER_DEV sends to. Prints one line per case, "CASE: what
happened" (errno values, queried attributes, completion statuses, events:
what soft-RoCE and rv0 must agree on, line by line, when the script is run
with each as DEV), then "ok CASE" or "not ok CASE" for whether it is what
the verbs promise. Exits 0 when every case is ok. The cases, each between
fresh ends:

create_errors     max_wr 0, past max_srq_wr, max_sge past max_srq_sge: errors
create_rounding   the depth and entries an SRQ of 1 x 0 and one of 100 x 3 get
limit_errors      a limit past the depth; a depth below the armed limit
resize_posted     a depth below what is posted fails, the SRQ unchanged; a
                  larger one keeps the work requests posted, in order, and
                  RC SENDs then complete into them
rc_two_qps        two RC QPs on one SRQ take its work requests in turn
ud                a UD QP on an SRQ receives datagrams (GRH + payload)
ud_too_small      a datagram too large for the work request taken
uc_too_long       a UC SEND too long for the work request taken, then one
                  that fits
rc_too_long       an RC SEND too long: the receiver's and sender's statuses
uc_too_long_rq, rc_too_long_rq  the same with the QP's own receive queue
limit_event       10 posted, limit 7, 4 received: IBV_EVENT_SRQ_LIMIT_REACHED,
                  the limit disarmed (0)
last_wqe          an RC QP on an SRQ moved to the error state: the events
                  within a second (IBV_EVENT_QP_LAST_WQE_REACHED)
"""

import select
import sys

from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.libibverbs_enums import (ibv_qp_state, ibv_qp_type, ibv_srq_attr_mask,
                                      ibv_wc_status)
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

import rc_common

QKEY = 0x11111111
S = ibv_srq_attr_mask


def errno_of(fn):
    """0 if fn() works, else the errno it failed with."""
    try:
        fn()
        return 0
    except PyverbsError as e:
        return abs(getattr(e, "error_code", -1))


def attrs(srq):
    a = srq.query()
    return "max_wr %d max_sge %d limit %d" % (a.max_wr, a.max_sge, a.srq_limit)


class Ends:
    """DEV's end (with SRQs) and the peer's, from rc_common; the async
    event file of DEV's context (pyverbs does not say which it is)."""

    def __init__(self, argv, mr_len=4096):
        before = rc_common.event_fds()
        self.loc = rc_common.End(argv[1], int(argv[2]), mr_len=mr_len)
        self.loc_events = rc_common.event_fds() - before
        self.peer = rc_common.End(argv[3], int(argv[4]), mr_len=mr_len)

    def srq(self, max_wr=16, max_sge=1, limit=0):
        return SRQ(self.loc.pd, SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge,
                                                    srq_limit=limit)))

    def post(self, srq, wr_id, off=0, length=1024):
        srq.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                             sg=[SGE(self.loc.mr.buf + off, length, self.loc.mr.lkey)]))

    def pair(self, srq, qp_type=ibv_qp_type.IBV_QPT_RC):
        """A QP of qp_type on srq, connected to a new one of the peer's."""
        rc = qp_type == ibv_qp_type.IBV_QPT_RC
        q = self.loc.new_qp(qp_type=qp_type, srq=srq)
        p = self.peer.new_qp(qp_type=qp_type)
        self.loc.connect(q, self.peer.gid, p.qp_num, rc=rc)
        self.peer.connect(p, self.loc.gid, q.qp_num, rc=rc)
        return q, p

    def send(self, p, wr_id, length, byte=0x5a):
        self.peer.mr.write(bytes([byte]) * length, length, 0)
        p.post_send(SendWR(wr_id=wr_id, num_sge=1,
                           sg=[SGE(self.peer.mr.buf, length, self.peer.mr.lkey)]))


def create_errors(argv):
    e = Ends(argv)
    dev = e.loc.ctx.query_device()
    got = [errno_of(lambda: e.srq(max_wr=0)),
           errno_of(lambda: e.srq(max_wr=dev.max_srq_wr + 1)),
           errno_of(lambda: e.srq(max_sge=dev.max_srq_sge + 1))]
    out = "errnos %s" % " ".join(map(str, got))
    return out, out == "errnos 22 22 22"


def create_rounding(argv):
    e = Ends(argv)
    a, b = e.srq(max_wr=1, max_sge=0), e.srq(max_wr=100, max_sge=3, limit=2)
    out = "%s; %s" % (attrs(a), attrs(b))
    # The depth rounded to the ring's, at least one SGE (soft-RoCE's).
    return out, out == "max_wr 1 max_sge 1 limit 0; max_wr 127 max_sge 3 limit 2"


def limit_errors(argv):
    e = Ends(argv)
    srq = e.srq(max_wr=16)
    depth = srq.query().max_wr
    past = errno_of(lambda: srq.modify(SrqAttr(srq_limit=depth + 1), S.IBV_SRQ_LIMIT))
    srq.modify(SrqAttr(srq_limit=5), S.IBV_SRQ_LIMIT)
    below = errno_of(lambda: srq.modify(SrqAttr(max_wr=3), S.IBV_SRQ_MAX_WR))
    out = "past %d below %d; %s" % (past, below, attrs(srq))
    return out, out == "past 22 below 22; max_wr 31 max_sge 1 limit 5"


def resize_posted(argv):
    e = Ends(argv)
    srq = e.srq(max_wr=16)
    for i in range(10):
        e.post(srq, 100 + i, off=0, length=64)
    small = errno_of(lambda: srq.modify(SrqAttr(max_wr=4), S.IBV_SRQ_MAX_WR))
    before = attrs(srq)
    srq.modify(SrqAttr(max_wr=200), S.IBV_SRQ_MAX_WR)
    q, p = e.pair(srq)
    for i in range(12):
        e.post(srq, 200 + i, off=0, length=64)
    for i in range(12):
        e.send(p, i, 32)
    sent = e.peer.poll(12)
    got = e.loc.poll(12)
    ids = [w.wr_id for w in got]
    ok = (small != 0 and ids == list(range(100, 110)) + [200, 201] and
          all(w.status == ibv_wc_status.IBV_WC_SUCCESS for w in sent + got))
    return "small %d; %s; then %s; wr_ids %s" % (small, before, attrs(srq),
                                                 " ".join(map(str, ids))), ok


def rc_two_qps(argv):
    e = Ends(argv)
    srq = e.srq()
    (q1, p1), (q2, p2) = e.pair(srq), e.pair(srq)
    for i in range(6):
        e.post(srq, 10 + i, off=64 * i, length=64)
    for i in range(6):
        e.send(p1 if i % 2 == 0 else p2, i, 16)
        e.peer.poll(1)
    got = e.loc.poll(6)
    ids = [w.wr_id for w in got]
    qps = [1 if w.qp_num == q1.qp_num else 2 for w in got]
    ok = ids == list(range(10, 16)) and qps == [1, 2, 1, 2, 1, 2] and \
        all(w.status == ibv_wc_status.IBV_WC_SUCCESS and w.byte_len == 16 for w in got)
    return "wr_ids %s qps %s" % (" ".join(map(str, ids)), " ".join(map(str, qps))), ok


def ud_pair(e, srq):
    """A UD QP on srq and a UD QP of the peer's, both in RTS, and the
    peer's AH to it."""
    def ud_qp(end, srq):
        init = QPInitAttr(qp_type=ibv_qp_type.IBV_QPT_UD, scq=end.cq, rcq=end.cq, srq=srq,
                          cap=QPCap(max_send_wr=8, max_recv_wr=8))
        a = QPAttr(port_num=1)
        a.qkey = QKEY
        a.pkey_index = 0
        return QP(end.pd, init, a)
    q, p = ud_qp(e.loc, srq), ud_qp(e.peer, None)
    ah = AH(e.peer.pd, attr=AHAttr(gr=GlobalRoute(dgid=e.loc.gid, sgid_index=e.peer.gidx,
                                                  hop_limit=64), is_global=1, port_num=1))
    return q, p, ah


def ud_send(e, p, ah, q, length):
    e.peer.mr.write(b"\x33" * length, length, 0)
    wr = SendWR(wr_id=1, num_sge=1, sg=[SGE(e.peer.mr.buf, length, e.peer.mr.lkey)])
    wr.set_wr_ud(ah, q.qp_num, QKEY)
    p.post_send(wr)
    return e.peer.poll(1)


def ud(argv):
    e = Ends(argv)
    srq = e.srq()
    q, p, ah = ud_pair(e, srq)
    for i in range(3):
        e.post(srq, i, off=1024 * i, length=1024)
    for _ in range(3):
        ud_send(e, p, ah, q, 64)
    got = e.loc.poll(3)
    out = " ".join("%d/%d/%d" % (w.wr_id, w.status, w.byte_len) for w in got)
    ok = [(w.wr_id, w.status, w.byte_len) for w in got] == [(i, 0, 104) for i in range(3)]
    return "received %s" % out, ok


def ud_too_small(argv):
    e = Ends(argv)
    srq = e.srq()
    q, p, ah = ud_pair(e, srq)
    e.post(srq, 1, length=50)
    e.post(srq, 2, off=1024, length=1024)
    ud_send(e, p, ah, q, 64)
    ud_send(e, p, ah, q, 64)
    got = e.loc.poll(2, secs=2)
    out = " ".join("%d/%d/%d" % (w.wr_id, w.status, w.byte_len if w.status == 0 else 0)
                   for w in got)
    out = "completions %s; state %d" % (out, rc_common.state(q))
    # The one taken completes in error (class E), the QP stays in RTS.
    return out, out == "completions 1/9/0 2/0/104; state 3"


def too_long(argv, qp_type, shared):
    """A SEND of 128 bytes into a work request of 64 (on an SRQ if shared),
    then one of 32 into the next: the completions on both sides, the QPs'
    states."""
    e = Ends(argv)
    srq = e.srq() if shared else None
    q, p = e.pair(srq, qp_type)
    for i in (1, 2):
        wr = RecvWR(wr_id=i, num_sge=1,
                    sg=[SGE(e.loc.mr.buf + 1024 * i, 64, e.loc.mr.lkey)])
        (srq or q).post_recv(wr)
    e.send(p, 1, 128)
    sent = e.peer.poll(1)
    if qp_type == ibv_qp_type.IBV_QPT_UC:
        e.send(p, 2, 32)
        sent += e.peer.poll(1)
    got = e.loc.poll(2, secs=2)
    out = "receiver %s sender %s; states %d %d" % (
        " ".join("%d/%d/%d" % (w.wr_id, w.status, w.byte_len if w.status == 0 else 0)
                 for w in got),
        " ".join("%d/%d" % (w.wr_id, w.status) for w in sent),
        rc_common.state(q), rc_common.state(p))
    # Class A: LOC_QP_OP_ERR, the receiver in error; on RC the sender's
    # REM_OP_ERR; with its own queue the next receive flushed.
    want = "receiver 1/2/0%s sender %s; states 6 %d" % (
        "" if shared else " 2/5/0",
        "1/0 2/0" if qp_type == ibv_qp_type.IBV_QPT_UC else "1/11",
        3 if qp_type == ibv_qp_type.IBV_QPT_UC else 6)
    return out, out == want


def uc_too_long(argv):
    return too_long(argv, ibv_qp_type.IBV_QPT_UC, True)


def rc_too_long(argv):
    return too_long(argv, ibv_qp_type.IBV_QPT_RC, True)


def uc_too_long_rq(argv):
    return too_long(argv, ibv_qp_type.IBV_QPT_UC, False)


def rc_too_long_rq(argv):
    return too_long(argv, ibv_qp_type.IBV_QPT_RC, False)


def limit_event(argv):
    e = Ends(argv)
    srq = e.srq(max_wr=16)
    q, p = e.pair(srq)
    for i in range(10):
        e.post(srq, i, off=64 * i, length=64)
    srq.modify(SrqAttr(srq_limit=7), S.IBV_SRQ_LIMIT)
    armed = srq.query().srq_limit
    for i in range(4):
        e.send(p, i, 16)
        e.peer.poll(1)
        e.loc.poll(1)
    # The event, within 5 s: the async event file is readable then.
    r, _, _ = select.select(list(e.loc_events), [], [], 5)
    event = -1
    if r:
        ev = e.loc.ctx.get_async_event()
        event = ev.event_type
        ev.ack()
    after = srq.query().srq_limit
    return "armed %d event %d after %d" % (armed, event, after), \
        len(e.loc_events) == 1 and armed == 7 and event == 15 and after == 0


def last_wqe(argv):
    e = Ends(argv)
    srq = e.srq()
    q, p = e.pair(srq)
    e.post(srq, 1, length=64)
    a = QPAttr(qp_state=ibv_qp_state.IBV_QPS_ERR)
    q.modify(a, rc_common.M.IBV_QP_STATE)
    got = rc_common.events(e.loc.ctx, e.loc_events, 1)
    return "events %s" % " ".join(map(str, got)), len(e.loc_events) == 1 and 16 in got


CASES = (create_errors, create_rounding, limit_errors, resize_posted, rc_two_qps, ud,
         ud_too_small, uc_too_long, rc_too_long, uc_too_long_rq, rc_too_long_rq, limit_event,
         last_wqe)


def main(argv):
    if len(argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    failed = 0
    for case in CASES:
        try:
            what, ok = case(argv)
        except PyverbsError as e:
            what, ok = "raised %s" % e, False
        print("%s: %s" % (case.__name__, what), flush=True)
        print("%s %s" % ("ok" if ok else "not ok", case.__name__), flush=True)
        failed += not ok
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
