#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rereg_mr of a region that RDMA WRITEs are streaming into, through
pyverbs.

    rereg_cases.py CASE|all DEV GIDX PEER_DEV PEER_GIDX

The region is on DEV (GID index GIDX); an RC QP on PEER_DEV writes into it
through one on DEV. Four WRITEs first, which must succeed; then sixteen of
64 KiB are posted and, while they are in flight, the region is
re-registered (REREG_MR, which soft-RoCE and rv0 apply in place), and one
more WRITE is posted once that returned. The command is written to the
context's uverbs file as libibverbs would write it: rdma-core's rxe
provider, which both devices use, has no rereg_mr (ibv_rereg_mr is
EOPNOTSUPP in userspace). Cases:

  access   IBV_REREG_MR_CHANGE_ACCESS to local write only: no remote write
  pd       IBV_REREG_MR_CHANGE_PD to a new PD, the QP's PD no longer the
           region's

How many of the sixteen land before the change is the race's; what soft-RoCE
and rv0 must agree on, one line per case: the first four succeed, the
rereg succeeds, the writer's completions are successes, then one remote
access error, then flushes (IBA's order: the WRITEs after the first that
fails are not executed), the WRITE posted after the rereg does not
succeed, every WRITE that succeeded is in the region, both QPs end in the
error state (the responder's class E: the QP fails). Then "ok CASE" or
"not ok CASE".
"""

import ctypes
import os
import struct
import sys

from pyverbs.libibverbs_enums import ibv_qp_state, ibv_wc_status, ibv_wr_opcode
from pyverbs.pd import PD
from pyverbs.wr import SGE, SendWR

import rc_common

A = rc_common.A
CHUNK = 64 * 1024
STREAM = 16
FIRST = 4
LEN = CHUNK * (STREAM + 1)
ST = ibv_wc_status
# enum ib_uverbs_write_cmds, enum ib_mr_rereg_flags.
CMD_REREG_MR = 11
REREG_PD = 1 << 1
REREG_ACCESS = 1 << 2


def rereg(end, flags, pd=None, access=0):
    """REREG_MR of `end`'s region (struct ib_uverbs_rereg_mr after the
    command header, on its context's uverbs file): "ok, keys kept" or
    "errno N"; `pd` the new PD's handle."""
    resp = ctypes.create_string_buffer(8)
    req = struct.pack("=QIIQQQII", ctypes.addressof(resp), end.mr.handle, flags, 0, 0, 0,
                      pd if pd is not None else 0, access)
    hdr = struct.pack("=IHH", CMD_REREG_MR, (8 + len(req)) // 4, len(resp) // 4)
    try:
        os.write(end.ctx.cmd_fd, hdr + req)
    except OSError as e:
        return "errno %d" % e.errno
    lkey, rkey = struct.unpack("=II", resp.raw)
    kept = (lkey, rkey) == (end.mr.lkey, end.mr.rkey)
    return "ok, keys %s" % ("kept" if kept else "changed")


def write(end, qp, owner, wr_id, off, length):
    """An RDMA WRITE of `length` bytes of the byte `wr_id` to `off` of the
    owner's region."""
    end.mr.write(bytes([wr_id]) * length, length, off)
    wr = SendWR(wr_id=wr_id, opcode=ibv_wr_opcode.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(end.mr.buf + off, length, end.mr.lkey)])
    wr.set_wr_rdma(owner.mr.rkey, owner.mr.buf + off)
    qp.post_send(wr)


def in_order(statuses):
    """Successes, then one remote access error, then flushes."""
    i = 0
    while i < len(statuses) and statuses[i] == ST.IBV_WC_SUCCESS:
        i += 1
    if i == len(statuses) or statuses[i] != ST.IBV_WC_REM_ACCESS_ERR:
        return False
    return all(s == ST.IBV_WC_WR_FLUSH_ERR for s in statuses[i + 1:])


def run(case, argv):
    owner = rc_common.End(argv[2], int(argv[3]), mr_len=LEN)
    writer = rc_common.End(argv[4], int(argv[5]), mr_len=LEN)
    oq = owner.new_qp()
    wq = writer.new_qp(send_wr=STREAM + 4)
    owner.connect(oq, writer.gid, wq.qp_num)
    writer.connect(wq, owner.gid, oq.qp_num)
    owner.mr.write(b"\0" * LEN, LEN, 0)

    for i in range(FIRST):
        write(writer, wq, owner, 1 + i, i * 4096, 4096)
    first = [w.status for w in writer.poll(FIRST)]
    before = "ok" if first == [ST.IBV_WC_SUCCESS] * FIRST else \
        "statuses %s" % " ".join(map(str, first))

    for i in range(STREAM):
        write(writer, wq, owner, 0x10 + i, i * CHUNK, CHUNK)
    if case == "access":
        done = rereg(owner, REREG_ACCESS, access=A.IBV_ACCESS_LOCAL_WRITE)
    else:
        other = PD(owner.ctx)
        done = rereg(owner, REREG_PD, pd=other.handle)
    write(writer, wq, owner, 0x10 + STREAM, STREAM * CHUNK, CHUNK)
    wcs = writer.poll(STREAM + 1, secs=60)
    statuses = [w.status for w in wcs]
    last = [w.status for w in wcs if w.wr_id == 0x10 + STREAM]
    landed = all(owner.mr.read(CHUNK, (w.wr_id - 0x10) * CHUNK) == bytes([w.wr_id]) * CHUNK
                 for w in wcs if w.status == ST.IBV_WC_SUCCESS)
    states = (rc_common.settled_state(wq, ibv_qp_state.IBV_QPS_ERR),
              rc_common.settled_state(oq, ibv_qp_state.IBV_QPS_ERR))
    # Back as it was (pyverbs, which did not see the change, closes the
    # region with the PD it knows).
    back = rereg(owner, REREG_PD, pd=owner.pd.handle) if case == "pd" else \
        rereg(owner, REREG_ACCESS, access=rc_common.ALL)
    out = ("first %d: %s; rereg %s; %d completions, successes then a remote access error "
           "then flushes: %s; the WRITE after the rereg: %s; what succeeded is there: %s; "
           "states %d %d; rereg back %s" %
           (FIRST, before, done, len(wcs), "yes" if in_order(statuses) else
            "no (%s)" % " ".join(map(str, statuses)),
            "none" if not last else "succeeded" if last[0] == ST.IBV_WC_SUCCESS else "failed",
            "yes" if landed else "no", states[0], states[1], back))
    print("%s: %s" % (case, out), flush=True)
    return out == ("first %d: ok; rereg ok, keys kept; %d completions, successes then a "
                   "remote access error then flushes: yes; the WRITE after the rereg: failed; "
                   "what succeeded is there: yes; states %d %d; rereg back ok, keys kept" %
                   (FIRST, STREAM + 1, ibv_qp_state.IBV_QPS_ERR, ibv_qp_state.IBV_QPS_ERR))


def main(argv):
    return rc_common.run_cases(("access", "pd"), run, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
