#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The send queue drained (SQD) with work in flight, through pyverbs.

    sqd_cases.py DEV GIDX PEER_DEV PEER_GIDX

An RC QP on DEV (GID index GIDX) writes to one on PEER_DEV; the caller
delays what PEER_DEV sends by a second (tc netem on its network device),
so that the acknowledgements of a large RDMA WRITE come late. The script
moves the QP to SQD once the first bytes have reached the peer: the WRITE
has begun (soft-RoCE's requester runs in a task of its own, after
ibv_post_send returns: a WRITE it has not begun stays posted in SQD) and
cannot have completed. No packet is lost and the ACK timeout (4.3 s) is
longer than the delay: soft-RoCE does not retransmit in SQD (req_retry
marks the work posted again, which req_next_wqe then holds). What soft-RoCE and rv0
must agree on, one line: the state and sq_draining queried right after the
move; the completions while in SQD (the WRITE begun completes; one posted
in SQD waits); IBV_EVENT_SQ_DRAINED, once, when the first completed;
sq_draining then; modifying out of SQD while draining (EINVAL); and after
the move back to RTS, the waiting WRITE and a third complete, the data
written. Then "ok" or "not ok" for whether that is what IBA says.
"""

import errno
import sys
import time

from pyverbs.libibverbs_enums import ibv_event_type, ibv_qp_state, ibv_wr_opcode
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE, SendWR

import rc_common

M = rc_common.M
BIG = 256 * 1024


def state_and_draining(qp):
    a = qp.query(M.IBV_QP_STATE | M.IBV_QP_CUR_STATE)[0]
    return a.qp_state, a.sq_draining


def write(end, qp, peer, wr_id, off, length, byte):
    """An RDMA WRITE of `length` bytes of `byte` at `off` of the peer's
    region."""
    end.mr.write(bytes([byte]) * length, length, off)
    wr = SendWR(wr_id=wr_id, opcode=ibv_wr_opcode.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(end.mr.buf + off, length, end.mr.lkey)])
    wr.set_wr_rdma(peer.mr.rkey, peer.mr.buf + off)
    qp.post_send(wr)


def wait_begun(peer, secs=60):
    """Whether the first bytes of the WRITE reached the peer's region
    within `secs` seconds (the WRITE has begun)."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if peer.mr.read(1, 0) == b"\x11":
            return True
        time.sleep(0.001)
    return False


def modify_state(qp, state, notify=False):
    a = QPAttr(qp_state=state)
    mask = M.IBV_QP_STATE
    if notify:
        a.en_sqd_async_notify = 1
        mask |= M.IBV_QP_EN_SQD_ASYNC_NOTIFY
    qp.modify(a, mask)


def main(argv):
    if len(argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    before = rc_common.event_fds()
    loc = rc_common.End(argv[1], int(argv[2]), mr_len=BIG + 8192)
    fds = rc_common.event_fds() - before
    peer = rc_common.End(argv[3], int(argv[4]), mr_len=BIG + 8192)
    q, p = loc.new_qp(), peer.new_qp()
    loc.connect(q, peer.gid, p.qp_num, timeout=20)
    peer.connect(p, loc.gid, q.qp_num, timeout=20)

    write(loc, q, peer, 1, 0, BIG, 0x11)
    begun = wait_begun(peer)
    modify_state(q, ibv_qp_state.IBV_QPS_SQD, notify=True)
    during = state_and_draining(q)
    # Out of SQD while draining: only to the error state.
    try:
        modify_state(q, ibv_qp_state.IBV_QPS_RTS)
        early = 0
    except PyverbsRDMAError as e:
        early = e.error_code
    write(loc, q, peer, 2, BIG, 4096, 0x22)
    # The drain's end, however slow the guest (the debug lane's one-vCPU
    # boot took more than 5 s): a minute for the event, then 1 s for
    # another.
    events = rc_common.events(loc.ctx, fds, 1, first=60)
    # The WRITE begun completes; soft-RoCE may report the drain before
    # its completion is in the CQ (its completer checks the drain first),
    # so a minute for it too; then a second in which the one posted in SQD
    # must not complete.
    first = loc.poll(1, secs=60) + loc.poll(1, secs=1)
    after = state_and_draining(q)
    modify_state(q, ibv_qp_state.IBV_QPS_RTS)
    write(loc, q, peer, 3, BIG + 4096, 4096, 0x33)
    rest = loc.poll(2)
    time.sleep(0.01)
    data = (peer.mr.read(BIG, 0) == b"\x11" * BIG and
            peer.mr.read(4096, BIG) == b"\x22" * 4096 and
            peer.mr.read(4096, BIG + 4096) == b"\x33" * 4096)
    got = " ".join("%d/%d" % (w.wr_id, w.status) for w in first)
    then = " ".join("%d/%d" % (w.wr_id, w.status) for w in rest)
    out = ("begun %s; in SQD: state %d draining %d, to RTS errno %d; completions %s; events %s; "
           "then draining %d; back in RTS: completions %s; data %s" %
           ("yes" if begun else "no", during[0], during[1], early, got, " ".join(map(str, events)), after[1], then,
            "written" if data else "wrong"))
    print("sqd_in_flight: %s" % out, flush=True)
    want = ("begun yes; in SQD: state %d draining 1, to RTS errno %d; completions 1/0; events %d; "
            "then draining 0; back in RTS: completions 2/0 3/0; data written" %
            (ibv_qp_state.IBV_QPS_SQD, errno.EINVAL, ibv_event_type.IBV_EVENT_SQ_DRAINED))
    ok = out == want and len(fds) == 1
    print("%s sqd_in_flight" % ("ok" if ok else "not ok"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
