#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""RDMA atomics and FLUSH on RC, through pyverbs: results and errors.

    rc_atomic.py CASE REQ_DEV REQ_GIDX RESP_DEV RESP_GIDX

The requester's QPs are on REQ_DEV (GID index REQ_GIDX), the 8 bytes
operated on in a region of RESP_DEV. CASE is "all" (each of the cases
below in turn, in one process: Python starts slowly on the debug kernel)
or one of:

shared: two QPs post 200 fetch-and-adds of 1 each, 16 in flight each,
  to the same 8 bytes: the value ends at 400 and the values before that
  the 400 completions return are 0..399, each once (atomic across QPs).
cas: a compare-and-swap that matches stores its swap value and returns
  the value before; one that does not match stores nothing and returns
  the value found.
misaligned: a fetch-and-add 4 bytes past the 8-byte boundary is refused
  by the rxe provider's post_send with EINVAL, before the ring (the
  responder's own check, a NAK, is rc_hostile.py's).
no_access: a region without IBV_ACCESS_REMOTE_ATOMIC:
  IBV_WC_REM_ACCESS_ERR.
qp_no_atomic: the responder's QP without IBV_ACCESS_REMOTE_ATOMIC:
  IBV_WC_REM_INV_REQ_ERR.
flush: a FLUSH of global visibility of 64 bytes of a region registered
  with IBV_ACCESS_FLUSH_GLOBAL, then one of the whole region (its length
  ignored): both complete (IBV_WC_FLUSH, their lengths).
flush_persistent: a FLUSH of persistence to that region (not registered
  for it): IBV_WC_REM_ACCESS_ERR.
flush_no_access: a FLUSH of global visibility to a region without
  IBV_ACCESS_FLUSH_GLOBAL: IBV_WC_REM_ACCESS_ERR.
flush_past: a FLUSH of a range past the region's end:
  IBV_WC_REM_ACCESS_ERR.
flush_qp_no_access: the responder's QP without IBV_ACCESS_FLUSH_GLOBAL:
  IBV_WC_REM_INV_REQ_ERR.
atomic_write: an ATOMIC WRITE of 8 bytes stores them, in order, and
  completes (IBV_WC_ATOMIC_WRITE); a second one replaces them.
atomic_write_misaligned: an ATOMIC WRITE 4 bytes past the 8-byte boundary:
  IBV_WC_REM_INV_REQ_ERR (the rxe provider does not check it).
atomic_write_qp_no_write: the responder's QP without remote write:
  IBV_WC_REM_INV_REQ_ERR.

The error cases also leave the requester's QP in the error state. Prints
what was seen, then "ok CASE" or "not ok CASE" for each case, and exits 0
when each is the outcome described, 1 otherwise.
"""

import errno
import struct
import sys

from pyverbs.libibverbs_enums import (ibv_placement_type, ibv_qp_create_send_ops_flags,
                                      ibv_qp_init_attr_mask, ibv_qp_state, ibv_qp_type,
                                      ibv_selectivity_level, ibv_send_flags, ibv_wc_opcode,
                                      ibv_wc_status, ibv_wr_opcode)
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr, QPCap, QPEx, QPInitAttrEx
from pyverbs.wr import SGE, SendWR

import rc_common
from rc_common import A, ALL

COUNT = 200
DEPTH = 16


def End(dev, gidx):
    """An end of rc_common with room for every completion."""
    return rc_common.End(dev, gidx, cqe=4 * COUNT)


def pair(req, resp, access=ALL):
    """A connected pair of QPs: (requester's, responder's)."""
    a = req.new_qp(send_wr=2 * DEPTH, recv_wr=4)
    b = resp.new_qp(access=access, send_wr=2 * DEPTH, recv_wr=4)
    req.connect(a, resp.gid, b.qp_num, depth=DEPTH)
    resp.connect(b, req.gid, a.qp_num, depth=DEPTH)
    return a, b


def atomic(qp, req, slot, wr_id, op, rkey, addr, compare_add, swap=0):
    """Posts an atomic whose value before lands at 8 * slot of req's MR."""
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=1,
                sg=[SGE(req.mr.buf + 8 * slot, 8, req.mr.lkey)])
    wr.set_wr_atomic(rkey, addr, compare_add, swap)
    qp.post_send(wr)


def value(mr, off=0):
    """The 8 bytes at `off` of `mr`, in the host's order."""
    return struct.unpack("<Q", mr.read(8, off))[0]


def shared(req, resp):
    """Two QPs' fetch-and-adds on one target."""
    # The responder's QPs live as long as the requester's.
    pairs = [pair(req, resp), pair(req, resp)]
    qps = [p[0] for p in pairs]
    resp.mr.write(bytes(8), 8, 0)
    posted = [0, 0]
    seen = []
    ok = True
    while len(seen) < 2 * COUNT:
        for q, qp in enumerate(qps):
            while posted[q] < COUNT and posted[q] - sum(1 for s in seen if s[0] == q) < DEPTH:
                i = posted[q]
                # Values before land in slot q * COUNT + i (8 * 400 < 4096).
                atomic(qp, req, q * COUNT + i, (q << 16) | i,
                       ibv_wr_opcode.IBV_WR_ATOMIC_FETCH_AND_ADD, resp.mr.rkey, resp.mr.buf, 1)
                posted[q] += 1
        wcs = req.poll(1, 10)
        if not wcs:
            print("# no completion after %d" % len(seen))
            return False
        for w in wcs:
            if w.status != ibv_wc_status.IBV_WC_SUCCESS or \
                    w.opcode != ibv_wc_opcode.IBV_WC_FETCH_ADD or w.byte_len != 8:
                print("# wr_id %x status %d opcode %d len %d" %
                      (w.wr_id, w.status, w.opcode, w.byte_len))
                ok = False
            seen.append((w.wr_id >> 16, w.wr_id & 0xffff))
    before = sorted(value(req.mr, 8 * (q * COUNT + i)) for q, i in seen)
    final = value(resp.mr)
    print("final %d, values before %s" %
          (final, "0..%d each once" % (2 * COUNT - 1) if before == list(range(2 * COUNT))
           else "not each of 0..%d once" % (2 * COUNT - 1)))
    return ok and final == 2 * COUNT and before == list(range(2 * COUNT))


def cas(req, resp):
    """A matching compare-and-swap, then one that does not match."""
    qp, _ = pair(req, resp)
    resp.mr.write(struct.pack("<Q", 0x1111), 8, 0)
    op = ibv_wr_opcode.IBV_WR_ATOMIC_CMP_AND_SWP
    atomic(qp, req, 0, 1, op, resp.mr.rkey, resp.mr.buf, 0x1111, 0x2222)
    atomic(qp, req, 1, 2, op, resp.mr.rkey, resp.mr.buf, 0x1111, 0x3333)
    wcs = req.poll(2)
    got = [(w.wr_id, w.status, w.opcode, w.byte_len) for w in wcs]
    print("completions %s, before %#x %#x, now %#x" %
          (got, value(req.mr, 0), value(req.mr, 8), value(resp.mr)))
    want = [(i, ibv_wc_status.IBV_WC_SUCCESS, ibv_wc_opcode.IBV_WC_COMP_SWAP, 8) for i in (1, 2)]
    return (got == want and value(req.mr, 0) == 0x1111 and value(req.mr, 8) == 0x2222 and
            value(resp.mr) == 0x2222)


def failing(req, resp, case):
    """An atomic the responder refuses: the status, the QP in error."""
    if case == "no_access":
        resp.mr = MR(resp.pd, 4096, A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE)
    qp, _ = pair(req, resp, ALL & ~A.IBV_ACCESS_REMOTE_ATOMIC if case == "qp_no_atomic"
                 else ALL)
    if case == "misaligned":
        try:
            atomic(qp, req, 0, 9, ibv_wr_opcode.IBV_WR_ATOMIC_FETCH_AND_ADD, resp.mr.rkey,
                   resp.mr.buf + 4, 1)
        except PyverbsRDMAError as e:
            print("post_send: errno %d" % e.error_code)
            return e.error_code == errno.EINVAL
        print("post_send took it")
        return False
    atomic(qp, req, 0, 9, ibv_wr_opcode.IBV_WR_ATOMIC_FETCH_AND_ADD, resp.mr.rkey,
           resp.mr.buf, 1)
    wcs = req.poll(1)
    state = rc_common.settled_state(qp, ibv_qp_state.IBV_QPS_ERR)
    got = [(w.wr_id, w.status) for w in wcs]
    print("completions %s, state %d" % (got, state))
    want = (ibv_wc_status.IBV_WC_REM_ACCESS_ERR if case == "no_access"
            else ibv_wc_status.IBV_WC_REM_INV_REQ_ERR)
    return got == [(9, want)] and state == ibv_qp_state.IBV_QPS_ERR


FLUSH_ACCESS = A.IBV_ACCESS_FLUSH_GLOBAL | A.IBV_ACCESS_FLUSH_PERSISTENT
GLOBAL = ibv_placement_type.IBV_FLUSH_GLOBAL
PERSISTENT = ibv_placement_type.IBV_FLUSH_PERSISTENT
RANGE = ibv_selectivity_level.IBV_FLUSH_RANGE
WHOLE = ibv_selectivity_level.IBV_FLUSH_MR


def ex_pair(req, resp, access=ALL | FLUSH_ACCESS,
            ops=ibv_qp_create_send_ops_flags.IBV_QP_EX_WITH_FLUSH):
    """A requester QP of the extended API (the one that posts FLUSH and
    ATOMIC WRITE), for the operations `ops`, in INIT, connected to a
    responder's QP allowing `access`."""
    init = QPInitAttrEx(qp_type=ibv_qp_type.IBV_QPT_RC, scq=req.cq, rcq=req.cq, pd=req.pd,
                        cap=QPCap(max_send_wr=8, max_recv_wr=4),
                        send_ops_flags=ops,
                        comp_mask=ibv_qp_init_attr_mask.IBV_QP_INIT_ATTR_PD |
                        ibv_qp_init_attr_mask.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
    attr = QPAttr(port_num=1)
    attr.qp_access_flags = ALL
    a = QPEx(req.ctx, init, attr)
    b = resp.new_qp(access=access)
    req.connect(a, resp.gid, b.qp_num)
    resp.connect(b, req.gid, a.qp_num)
    return a, b


def flush(req, resp, case):
    """FLUSHes the responder allows or refuses: their completions, the
    requester's QP's state."""
    mr_access = A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE
    if case != "flush_no_access":
        mr_access |= A.IBV_ACCESS_FLUSH_GLOBAL
    resp.mr = MR(resp.pd, 4096, mr_access)
    qp_access = ALL | FLUSH_ACCESS
    if case == "flush_qp_no_access":
        qp_access = ALL | A.IBV_ACCESS_FLUSH_PERSISTENT
    qp, _ = ex_pair(req, resp, qp_access)
    posts = {"flush": [(1, GLOBAL, RANGE, 0, 64), (2, GLOBAL, WHOLE, 0, 12345678)],
             "flush_persistent": [(3, PERSISTENT, RANGE, 0, 64)],
             "flush_no_access": [(4, GLOBAL, RANGE, 0, 64)],
             "flush_past": [(5, GLOBAL, RANGE, 4096 - 32, 64)],
             "flush_qp_no_access": [(6, GLOBAL, RANGE, 0, 64)]}[case]
    for wr_id, ptype, level, off, length in posts:
        qp.wr_start()
        qp.wr_id = wr_id
        qp.wr_flags = ibv_send_flags.IBV_SEND_SIGNALED
        qp.wr_flush(resp.mr.rkey, resp.mr.buf + off, length, ptype, level)
        qp.wr_complete()
    wcs = req.poll(len(posts))
    got = [(w.wr_id, w.status, w.opcode if w.status == 0 else 0,
            w.byte_len if w.status == 0 else 0) for w in wcs]
    want_state = ibv_qp_state.IBV_QPS_RTS if case == "flush" else ibv_qp_state.IBV_QPS_ERR
    state = rc_common.settled_state(qp, want_state)
    print("completions %s, state %d" % (got, state))
    want = {"flush": [(1, 0, ibv_wc_opcode.IBV_WC_FLUSH, 64),
                      (2, 0, ibv_wc_opcode.IBV_WC_FLUSH, 12345678)],
            "flush_persistent": [(3, ibv_wc_status.IBV_WC_REM_ACCESS_ERR, 0, 0)],
            "flush_no_access": [(4, ibv_wc_status.IBV_WC_REM_ACCESS_ERR, 0, 0)],
            "flush_past": [(5, ibv_wc_status.IBV_WC_REM_ACCESS_ERR, 0, 0)],
            "flush_qp_no_access": [(6, ibv_wc_status.IBV_WC_REM_INV_REQ_ERR, 0, 0)]}[case]
    return got == want and state == want_state


def atomic_write(req, resp, case):
    """ATOMIC WRITEs: the bytes stored and the completions, or the error
    and the requester's QP's state."""
    access = ALL & ~A.IBV_ACCESS_REMOTE_WRITE if case == "atomic_write_qp_no_write" else ALL
    qp, _ = ex_pair(req, resp, access,
                    ibv_qp_create_send_ops_flags.IBV_QP_EX_WITH_ATOMIC_WRITE)
    resp.mr.write(bytes(16), 16, 0)
    off = 4 if case == "atomic_write_misaligned" else 8
    values = [0x1122334455667788, 0x0102030405060708] if case == "atomic_write" else [7]
    for i, v in enumerate(values):
        qp.wr_start()
        qp.wr_id = 20 + i
        qp.wr_flags = ibv_send_flags.IBV_SEND_SIGNALED
        qp.wr_atomic_write(resp.mr.rkey, resp.mr.buf + off, struct.pack("<Q", v))
        qp.wr_complete()
        wcs = req.poll(1)
        if not wcs or wcs[0].status != ibv_wc_status.IBV_WC_SUCCESS:
            break
    got = [(w.wr_id, w.status, w.opcode if w.status == 0 else 0) for w in wcs]
    if case == "atomic_write":
        stored = value(resp.mr, 8)
        state = rc_common.state(qp)
        print("completions %s, stored %#x, state %d" % (got, stored, state))
        return (got == [(21, 0, ibv_wc_opcode.IBV_WC_ATOMIC_WRITE)] and stored == values[1] and
                value(resp.mr, 0) == 0 and state == ibv_qp_state.IBV_QPS_RTS)
    state = rc_common.settled_state(qp, ibv_qp_state.IBV_QPS_ERR)
    print("completions %s, stored %#x, state %d" % (got, value(resp.mr, 0), state))
    return (got == [(20, ibv_wc_status.IBV_WC_REM_INV_REQ_ERR, 0)] and
            value(resp.mr, 0) == 0 and state == ibv_qp_state.IBV_QPS_ERR)


CASES = ("shared", "cas", "misaligned", "no_access", "qp_no_atomic", "flush",
         "flush_persistent", "flush_no_access", "flush_past", "flush_qp_no_access",
         "atomic_write", "atomic_write_misaligned", "atomic_write_qp_no_write")


def run(case, argv):
    """One case between fresh ends: whether it had its outcome."""
    req = End(argv[2], int(argv[3]))
    resp = End(argv[4], int(argv[5]))
    if case == "shared":
        return shared(req, resp)
    if case == "cas":
        return cas(req, resp)
    if case.startswith("flush"):
        return flush(req, resp, case)
    if case.startswith("atomic_write"):
        return atomic_write(req, resp, case)
    return failing(req, resp, case)


def main(argv):
    return rc_common.run_cases(CASES, run, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
