#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Memory windows on one device, through pyverbs, case by case.

    mw_cases.py DEV GIDX PEER_DEV PEER_GIDX [CASE...]

Allocates memory windows on DEV (GID index GIDX), binds them to a region
there through an RC QP, and has an RC QP of PEER_DEV read and write
through them. Prints one line per case, "CASE: what happened" (errnos,
completion statuses and flags, QP states, data seen: what soft-RoCE and
rv0 must agree on, line by line, when the script is run with each as DEV),
then "ok CASE" or "not ok CASE" for whether it is what the verbs promise.
Exits 0 when every case is ok. Without CASE, the cases soft-RoCE and rv0
share (CASES); the others (RV_CASES) are where rv0 is stricter than
soft-RoCE, run on rv devices only. The cases, each between fresh ends:

alloc_type3        a window of type 3: the errno; types 1 and 2: keys of
                   windows (above the regions' indexes), distinct
type1              ibv_bind_mw with remote write and read over 64 bytes:
                   the peer writes then reads back through it; an atomic
                   (not given) fails with a remote access error
type1_unbind       bound, then bound again with length 0: a write fails
type2              a bind work request with remote write and read: the new
                   key, a write and a read through it
type2_rebind       a type 2 window bound twice: the second bind fails
                   (IBV_WC_MW_BIND_ERR on rv0, IBV_WC_WR_FLUSH_ERR on
                   soft-RoCE: see failed()), the QP in error
type2_local_inv    bound, then IBV_WR_LOCAL_INV: a write through it fails
type2_send_inv     bound, then the peer's SEND with invalidate: the receive
                   says so (IB_WC_WITH_INVALIDATE, the key), a write then
                   fails
type2_dealloc      bound, then released: a write through it fails
bind_no_mw_access  a bind to a region without IBV_ACCESS_MW_BIND fails
bind_write_no_local  a window giving remote write over a region without
                   local write: the bind fails
bind_past_region   a window past the region's end: the bind fails
dereg_bound        the region of a bound window cannot be deregistered
                   (EINVAL) until the window is released
local_inv_type1    IBV_WR_LOCAL_INV of a type 1 window fails
                   (IBV_WC_LOC_QP_OP_ERR), the QP in error
local_inv_mr       IBV_WR_LOCAL_INV of a user region's key fails likewise
send_inv_mr        the peer's SEND with invalidate of a user region's key:
                   the receive fails (IBV_WC_REM_INV_REQ_ERR), the SEND
                   succeeds, the receiver's QP in error
fences             an RDMA WRITE, a READ, a SEND with IBV_SEND_FENCE, a bind
                   and a local invalidation posted at once: each completes,
                   in order (the fenced SEND waits for the READ, the
                   invalidation for everything before it)
window_range       (rv0 only) a write inside the region but past the
                   window: a remote access error (soft-RoCE checks the
                   region's range only)
bound_held         (run alone, by rv0_rc.sh) a window of each type bound,
                   the peer writing through the type 2 one and reading
                   through the type 1 one, over and over, "bound" printed
                   once both worked, until an access fails: DEV removed
                   meanwhile (rdma link del, rmmod), the peer's access
                   then ends in a retry error (retry_cnt 2), or no
                   completion comes in 3 s when the peer went too (its
                   ring unmapped); 60 s without a failure is not ok
"""

import faulthandler
import signal
import sys
import time

from pyverbs.libibverbs_enums import (ibv_access_flags, ibv_mw_type, ibv_send_flags,
                                      ibv_wc_status, ibv_wr_opcode)
from pyverbs.mr import MW, MWBind, MWBindInfo
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.wr import SGE, RecvWR, SendWR

import rc_common

A = ibv_access_flags
W = ibv_wr_opcode
REM_ACCESS = ibv_wc_status.IBV_WC_REM_ACCESS_ERR
LEN = 64
# The window's place in the region: from byte 1024, LEN bytes.
OFF = 1024


def errno_of(fn):
    """0 if fn() works, else the errno it failed with."""
    try:
        fn()
        return 0
    except PyverbsError as e:
        return abs(getattr(e, "error_code", -1))


def inc_rkey(rkey):
    """The key a bind gives a window of key rkey (`ibv_inc_rkey`)."""
    return (rkey & ~0xff) | ((rkey + 1) & 0xff)


class Ends:
    """DEV's end, its region allowing binds (or `access`), and the peer's,
    with an RC QP each, connected."""

    def __init__(self, argv, access=rc_common.ALL | A.IBV_ACCESS_MW_BIND, **peer_kw):
        self.loc = rc_common.End(argv[1], int(argv[2]), mr_len=4096, mr_access=access)
        self.peer = rc_common.End(argv[3], int(argv[4]))
        self.q = self.loc.new_qp()
        self.p = self.peer.new_qp()
        self.loc.connect(self.q, self.peer.gid, self.p.qp_num)
        self.peer.connect(self.p, self.loc.gid, self.q.qp_num, **peer_kw)

    def info(self, access=A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ, off=OFF,
             length=LEN):
        return MWBindInfo(self.loc.mr, self.loc.mr.buf + off, length, access)

    def bind1(self, mw, **kw):
        """ibv_bind_mw of a type 1 window: its completion's status."""
        self.q.bind_mw(mw, MWBind(self.info(**kw), ibv_send_flags.IBV_SEND_SIGNALED))
        return self.loc.poll(1)[0].status

    def bind2(self, mw, **kw):
        """A bind work request of a type 2 window: its status, its new key."""
        wr = SendWR(opcode=W.IBV_WR_BIND_MW)
        wr.set_bind_wr(mw, self.info(**kw))
        self.q.post_send(wr)
        return self.loc.poll(1)[0].status, wr.rkey

    def local_inv(self, rkey):
        """IBV_WR_LOCAL_INV of rkey on DEV's QP: its status."""
        wr = SendWR(opcode=W.IBV_WR_LOCAL_INV)
        wr.imm_data = rkey
        self.q.post_send(wr)
        return self.loc.poll(1)[0].status

    def rdma(self, opcode, rkey, off=OFF, length=LEN, byte=0x5a):
        """The peer's RDMA WRITE or READ of length bytes at byte off of the
        region, through rkey: its status."""
        self.peer.mr.write(bytes([byte]) * length, length, 0)
        wr = SendWR(wr_id=7, opcode=opcode, num_sge=1,
                    sg=[SGE(self.peer.mr.buf, length, self.peer.mr.lkey)])
        wr.set_wr_rdma(rkey, self.loc.mr.buf + off)
        self.p.post_send(wr)
        return self.peer.poll(1)[0].status

    def atomic(self, rkey):
        """The peer's fetch-and-add at byte OFF through rkey: its status."""
        wr = SendWR(wr_id=8, opcode=W.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                    sg=[SGE(self.peer.mr.buf, 8, self.peer.mr.lkey)])
        wr.set_wr_atomic(rkey, self.loc.mr.buf + OFF, 1, 0)
        self.p.post_send(wr)
        return self.peer.poll(1)[0].status

    def send_inv(self, rkey):
        """The peer's SEND with invalidate of rkey (16 bytes) into a receive
        posted on DEV: the receive's status, flags and key (0 unless it
        says one was invalidated), and the SEND's status."""
        self.q.post_recv(RecvWR(wr_id=3, num_sge=1,
                                sg=[SGE(self.loc.mr.buf, 16, self.loc.mr.lkey)]))
        wr = SendWR(wr_id=4, opcode=W.IBV_WR_SEND_WITH_INV, num_sge=1,
                    sg=[SGE(self.peer.mr.buf, 16, self.peer.mr.lkey)])
        wr.imm_data = rkey
        self.p.post_send(wr)
        sent = self.peer.poll(1)[0].status
        got = self.loc.poll(1)[0]
        # The kernel's IB_WC_WITH_INVALIDATE (1 << 2), which soft-RoCE
        # writes into the ring and rdma-core's rxe provider passes on as it
        # is (libibverbs' IBV_WC_WITH_INV is 1 << 3: the provider does not
        # translate, so a user of either reads IBV_WC_IP_CSUM_OK).
        inv = got.wc_flags & 4
        return got.status, inv, got.imm_data if inv else 0, sent

    def states(self, want):
        """The QPs' states, once they are `want` (DEV's, the peer's) or 5 s
        have passed: a responder moves its QP to the error state after it
        has sent the NAK (soft-RoCE at the end of its responder's run)."""
        end = time.monotonic() + 5
        while True:
            got = (rc_common.state(self.q), rc_common.state(self.p))
            if got == want or time.monotonic() > end:
                return "states %d %d" % got
            time.sleep(0.01)


def alloc_type3(argv):
    e = Ends(argv)
    bad = errno_of(lambda: MW(e.loc.pd, 3))
    one, two = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_1), MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    windows = all((w.rkey >> 8) > (1 << 19) for w in (one, two))
    ok = bad == 22 and windows and one.rkey >> 8 != two.rkey >> 8
    return "type 3 errno %d; windows' keys above the regions' %s" % (bad, windows), ok


def type1(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_1)
    old = mw.rkey
    bound = e.bind1(mw)
    key = mw.rkey
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key, byte=0x3c)
    seen = e.loc.mr.read(LEN, OFF) == b"\x3c" * LEN
    e.peer.mr.write(b"\0" * LEN, LEN, 0)
    read = e.rdma(W.IBV_WR_RDMA_READ, key, byte=0)
    back = e.peer.mr.read(LEN, 0) == b"\x3c" * LEN
    atomic = e.atomic(key)
    out = "bind %d new key %s; write %d landed %s; read %d got %s; atomic %d; %s" % (
        bound, key == inc_rkey(old), wrote, seen, read, back, atomic, e.states((6, 6)))
    want = "bind 0 new key True; write 0 landed True; read 0 got True; atomic %d; " \
        "states 6 6" % REM_ACCESS
    return out, out == want


def type1_unbind(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_1)
    bound = e.bind1(mw)
    unbound = e.bind1(mw, access=0, length=0)
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, mw.rkey)
    out = "bind %d unbind %d write %d; %s" % (bound, unbound, wrote, e.states((6, 6)))
    return out, out == "bind 0 unbind 0 write %d; states 6 6" % REM_ACCESS


def type2(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    old = mw.rkey
    bound, key = e.bind2(mw)
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key, byte=0x77)
    seen = e.loc.mr.read(LEN, OFF) == b"\x77" * LEN
    e.peer.mr.write(b"\0" * LEN, LEN, 0)
    read = e.rdma(W.IBV_WR_RDMA_READ, key, byte=0)
    back = e.peer.mr.read(LEN, 0) == b"\x77" * LEN
    out = "bind %d new key %s; write %d landed %s; read %d got %s; %s" % (
        bound, key == inc_rkey(old), wrote, seen, read, back, e.states((3, 3)))
    return out, out == "bind 0 new key True; write 0 landed True; read 0 got True; states 3 3"


def type2_rebind(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    first, _ = e.bind2(mw)
    second, _ = e.bind2(mw)
    what, ok = failed(argv, second, ibv_wc_status.IBV_WC_MW_BIND_ERR)
    out = "bind %d again %s; %s" % (first, what, e.states((6, 3)))
    return out, ok and out == "bind 0 again failed; states 6 3"


def type2_local_inv(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound, key = e.bind2(mw)
    inv = e.local_inv(key)
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key)
    out = "bind %d invalidate %d write %d; %s" % (bound, inv, wrote, e.states((6, 6)))
    return out, out == "bind 0 invalidate 0 write %d; states 6 6" % REM_ACCESS


def type2_send_inv(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound, key = e.bind2(mw)
    status, inv, got, sent = e.send_inv(key)
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key)
    out = "bind %d; receive %d with_inv %d key %s; send %d; write %d; %s" % (
        bound, status, inv, got == key, sent, wrote, e.states((6, 6)))
    return out, out == "bind 0; receive 0 with_inv 4 key True; send 0; write %d; " \
        "states 6 6" % REM_ACCESS


def type2_dealloc(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound, key = e.bind2(mw)
    mw.close()
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key)
    out = "bind %d; released; write %d; %s" % (bound, wrote, e.states((6, 6)))
    return out, out == "bind 0; released; write %d; states 6 6" % REM_ACCESS


def failed(argv, status, want):
    """A local operation's error status as a line both devices print, and
    whether it is right: `want` on rv0; soft-RoCE 7.2 completes the work
    request that failed with IBV_WC_WR_FLUSH_ERR (its requester moves the
    QP to the error state, whose flush its completer runs before it looks
    at the work request's status), which passes there."""
    rv = argv[1].startswith("rv")
    ok = status == want or (not rv and status == ibv_wc_status.IBV_WC_WR_FLUSH_ERR)
    return "failed" if ok else "status %d" % status, ok


def bind_fails(argv, access, **kw):
    """A type 2 bind that must fail (IBV_WC_MW_BIND_ERR): its outcome, the
    QPs' states."""
    e = Ends(argv, access=access)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    status, _ = e.bind2(mw, **kw)
    what, ok = failed(argv, status, ibv_wc_status.IBV_WC_MW_BIND_ERR)
    out = "bind %s; %s" % (what, e.states((6, 3)))
    return out, ok and out == "bind failed; states 6 3"


def bind_no_mw_access(argv):
    return bind_fails(argv, rc_common.ALL)


def bind_write_no_local(argv):
    return bind_fails(argv, A.IBV_ACCESS_REMOTE_READ | A.IBV_ACCESS_MW_BIND)


def bind_past_region(argv):
    return bind_fails(argv, rc_common.ALL | A.IBV_ACCESS_MW_BIND, off=4096 - 32)


def dereg_bound(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound, _ = e.bind2(mw)
    refused = errno_of(e.loc.mr.close)
    mw.close()
    after = errno_of(e.loc.mr.close)
    out = "bind %d; dereg %d; released, dereg %d" % (bound, refused, after)
    return out, out == "bind 0; dereg 22; released, dereg 0"


def local_inv_type1(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_1)
    bound = e.bind1(mw)
    what, ok = failed(argv, e.local_inv(mw.rkey), ibv_wc_status.IBV_WC_LOC_QP_OP_ERR)
    out = "bind %d invalidate %s; %s" % (bound, what, e.states((6, 3)))
    return out, ok and out == "bind 0 invalidate failed; states 6 3"


def local_inv_mr(argv):
    e = Ends(argv)
    what, ok = failed(argv, e.local_inv(e.loc.mr.rkey), ibv_wc_status.IBV_WC_LOC_QP_OP_ERR)
    out = "invalidate %s; %s" % (what, e.states((6, 3)))
    return out, ok and out == "invalidate failed; states 6 3"


def send_inv_mr(argv):
    e = Ends(argv)
    status, inv, _, sent = e.send_inv(e.loc.mr.rkey)
    out = "receive %d with_inv %d; send %d; %s" % (status, inv, sent, e.states((6, 3)))
    return out, out == "receive %d with_inv 0; send 0; states 6 3" % \
        ibv_wc_status.IBV_WC_REM_INV_REQ_ERR


def fences(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    e.p.post_recv(RecvWR(wr_id=9, num_sge=1, sg=[SGE(e.peer.mr.buf, 16, e.peer.mr.lkey)]))
    sge = [SGE(e.loc.mr.buf + 2048, 2048, e.loc.mr.lkey)]
    write = SendWR(wr_id=1, opcode=W.IBV_WR_RDMA_WRITE, num_sge=1, sg=sge)
    write.set_wr_rdma(e.peer.mr.rkey, e.peer.mr.buf + 2048)
    read = SendWR(wr_id=2, opcode=W.IBV_WR_RDMA_READ, num_sge=1, sg=sge)
    read.set_wr_rdma(e.peer.mr.rkey, e.peer.mr.buf + 2048)
    send = SendWR(wr_id=3, num_sge=1, sg=[SGE(e.loc.mr.buf, 16, e.loc.mr.lkey)],
                  send_flags=ibv_send_flags.IBV_SEND_SIGNALED | ibv_send_flags.IBV_SEND_FENCE)
    bind = SendWR(wr_id=4, opcode=W.IBV_WR_BIND_MW)
    bind.set_bind_wr(mw, e.info())
    inv = SendWR(wr_id=5, opcode=W.IBV_WR_LOCAL_INV)
    inv.imm_data = bind.rkey
    for wr in (write, read, send, bind, inv):
        e.q.post_send(wr)
    got = e.loc.poll(5)
    recv = e.peer.poll(1)
    out = "completions %s; received %s; %s" % (
        " ".join("%d/%d/%d" % (w.wr_id, w.status, w.opcode) for w in got),
        " ".join("%d/%d" % (w.wr_id, w.status) for w in recv), e.states((3, 3)))
    return out, out == "completions 1/0/1 2/0/2 3/0/0 4/0/5 5/0/6; received 9/0; states 3 3"


def window_range(argv):
    e = Ends(argv)
    mw = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound, key = e.bind2(mw)
    wrote = e.rdma(W.IBV_WR_RDMA_WRITE, key, off=OFF + LEN, length=8)
    out = "bind %d; write past the window %d; %s" % (bound, wrote, e.states((6, 6)))
    return out, out == "bind 0; write past the window %d; states 6 6" % REM_ACCESS


def bound_held(argv):
    # The peer's retries end (retry_cnt 2; 7 is for ever) once DEV is gone.
    e = Ends(argv, retry=2)
    one, two = MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_1), MW(e.loc.pd, ibv_mw_type.IBV_MW_TYPE_2)
    bound1 = e.bind1(one)
    bound2, key2 = e.bind2(two)
    key1 = one.rkey
    if (bound1, bound2) != (0, 0):
        return "bind %d %d" % (bound1, bound2), False
    n, end, told, status = 0, time.monotonic() + 60, False, None
    while time.monotonic() < end:
        for opcode, key in ((W.IBV_WR_RDMA_WRITE, key2), (W.IBV_WR_RDMA_READ, key1)):
            try:
                e.peer.mr.write(bytes([n & 0xff]) * LEN, LEN, 0)
                wr = SendWR(wr_id=n, opcode=opcode, num_sge=1,
                            sg=[SGE(e.peer.mr.buf, LEN, e.peer.mr.lkey)])
                wr.set_wr_rdma(key, e.loc.mr.buf + OFF)
                e.p.post_send(wr)
                wcs = e.peer.poll(1, secs=3)
                status = "status %d" % wcs[0].status if wcs else "no completion"
            except PyverbsError as err:
                status = "raised %s" % err
            if status != "status 0":
                break
            n += 1
        if status != "status 0":
            break
        if not told:
            print("bound", flush=True)
            told = True
    else:
        return "%d accesses, none failed in 60 s" % n, False
    return "bound; %d accesses, then %s" % (n, status), told


CASES = (alloc_type3, type1, type1_unbind, type2, type2_rebind, type2_local_inv,
         type2_send_inv, type2_dealloc, bind_no_mw_access, bind_write_no_local,
         bind_past_region, dereg_bound, local_inv_type1, local_inv_mr, send_inv_mr, fences)
RV_CASES = (window_range, bound_held)


def main(argv):
    # A hung case, stopped by its test (SIGTERM), says where it was.
    faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    if len(argv) < 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    by_name = {c.__name__: c for c in CASES + RV_CASES}
    names = argv[5:] or [c.__name__ for c in CASES]
    failed = 0
    for name in names:
        try:
            what, ok = by_name[name](argv)
        except (PyverbsError, IndexError) as e:
            what, ok = "raised %s" % (e or "no completion"), False
        print("%s: %s" % (name, what), flush=True)
        print("%s %s" % ("ok" if ok else "not ok", name), flush=True)
        failed += not ok
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
