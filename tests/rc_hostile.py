#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile RC packets at rv0, through pyverbs and roce_inject.py.

    rc_hostile.py NS DEV GIDX PEER_DEV PEER_GIDX PEER_IP DEV_IP

An RC QP on DEV (an rv device, GID index GIDX, address DEV_IP) is
connected to one on PEER_DEV (in netns NS, address PEER_IP); packets
forged in NS with PEER_IP as their source (roce_inject.py's "rc") go at
DEV's QP, which takes them as its path's. Each case checks DEV's wire
counters (debugfs) and the QP's state, and prints "ok CASE" or
"not ok CASE: why":

acknowledgements of nothing sent: ack_unsolicited (an ACK past what was
  sent), nak_forged (a PSN sequence NAK), read_response_unsolicited,
  atomic_ack_unsolicited: each dropped as stale, the QP in RTS;
unknown_qpn (an ACK for a QP DEV does not have: passed on to the network
  stack, as every packet for no QP of the device, counted passed_on), bad_icrc
  (drop_icrc); still_works: a SEND from the QP then arrives, both complete;
requests, each at a fresh QP expecting PSN 0: gap (a SEND at PSN 100:
  drop_rc_sequence, one NAK, RTS), duplicate (PSN 0xffffff, before 0:
  rc_duplicate, RTS), write_huge (a RETH of 2^31 + 1 bytes), write_bad_rkey,
  write_out_of_range (past the region's end), read_huge, atomic_misaligned:
  each refused with a NAK (rc_refused) and the QP in error; destroyed (a SEND
  for the QP after destroy_qp: passed on).
answers lost (rxe_comp.c:check_psn), at a QP whose READ of two packets and
  fetch-and-add are in flight to a peer QP in error, which answers nothing
  (local ACK timeout 17 s): read_response_within (the READ's second
  response alone: dropped as stale, nothing sent again), answer_past_read
  (the atomic's acknowledgement: the READ's answers were lost, so both are
  sent again at once, long before the timer), answer_past_again (another:
  dropped, no second retry until something moves on); ack_within_read,
  ack_past_read and ack_past_again: the same with a plain ACK at a fresh
  pair (soft-RoCE's check_psn treats any answer past a READ alike, and
  drops an ACK within one).
Exits 0 when every case is ok.
"""

import os
import struct
import subprocess
import sys
import time

from pyverbs.libibverbs_enums import ibv_qp_state, ibv_wc_status
from pyverbs.libibverbs_enums import ibv_wr_opcode as W
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from rc_common import M, End, state

AETH_ACK = 0x1F000000
AETH_NAK_SEQ = 0x60000000


class Rig:
    """The two ends, the injector in NS, DEV's counters."""

    def __init__(self, argv):
        self.ns, dev, gidx, pdev, pgidx, self.peer_ip, self.dev_ip = argv
        self.a = End(dev, int(gidx))
        self.b = End(pdev, int(pgidx))
        self.wire = "/sys/kernel/debug/rverbs/%s/wire" % dev
        inject = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roce_inject.py")
        self.inj = subprocess.Popen(["ip", "netns", "exec", self.ns, "python3", inject, "serve"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.failed = 0

    def pair(self):
        """A connected pair: (DEV's QP, the peer's)."""
        qa, qb = self.a.new_qp(), self.b.new_qp()
        self.a.connect(qa, self.b.gid, qb.qp_num, depth=4)
        self.b.connect(qb, self.a.gid, qa.qp_num, depth=4)
        return qa, qb

    def counters(self):
        with open(self.wire) as f:
            return {k: int(v) for k, v in (line.split() for line in f)}

    def inject(self, qpn, opcode, psn, body=b"", icrc=False):
        line = "rc %s %s %d %#x %d %s%s\n" % (self.peer_ip, self.dev_ip, qpn, opcode, psn,
                                              body.hex() or "-", " icrc" if icrc else "")
        self.inj.stdin.write(line)
        self.inj.stdin.flush()
        reply = self.inj.stdout.readline().strip()
        if reply != "sent":
            raise RuntimeError("roce_inject.py: %s" % reply)

    def counted(self, before, name, secs=3):
        """Whether counter NAME went past its value in BEFORE (waits)."""
        end = time.monotonic() + secs
        while time.monotonic() < end:
            if self.counters()[name] > before[name]:
                return True
            time.sleep(0.02)
        return False

    def case(self, name, ok, why=""):
        if ok:
            print("ok %s" % name, flush=True)
        else:
            self.failed += 1
            print("not ok %s: %s" % (name, why), flush=True)


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def answers(rig):
    """Acknowledgements and responses nobody asked for, at an idle QP."""
    qa, qb = rig.pair()
    n = qa.qp_num
    for name, opcode, psn, body in (
            ("ack_unsolicited", 0x11, 5, struct.pack(">I", AETH_ACK)),
            ("nak_forged", 0x11, 0, struct.pack(">I", AETH_NAK_SEQ)),
            ("read_response_unsolicited", 0x10, 0, struct.pack(">I", AETH_ACK) + b"data"),
            ("atomic_ack_unsolicited", 0x12, 0, struct.pack(">IQ", AETH_ACK, 7))):
        before = rig.counters()
        rig.inject(n, opcode, psn, body)
        stale = rig.counted(before, "drop_rc_stale")
        rig.case(name, stale and state(qa) == ibv_qp_state.IBV_QPS_RTS,
                 "stale %s, state %d" % (stale, state(qa)))
    before = rig.counters()
    rig.inject(n ^ 0x800, 0x11, 0, struct.pack(">I", AETH_ACK))
    rig.case("unknown_qpn", rig.counted(before, "passed_on"), "passed_on did not count")
    before = rig.counters()
    rig.inject(n, 0x11, 0, struct.pack(">I", AETH_ACK), icrc=True)
    rig.case("bad_icrc", rig.counted(before, "drop_icrc"), "drop_icrc did not count")
    # The QP works after all that.
    qb.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(rig.b.mr.buf, 64, rig.b.mr.lkey)]))
    rig.a.mr.write(b"after the forgeries", 19, 0)
    qa.post_send(SendWR(wr_id=1, num_sge=1, sg=[SGE(rig.a.mr.buf, 19, rig.a.mr.lkey)]))
    got = []
    end = time.monotonic() + 10
    while len(got) < 2 and time.monotonic() < end:
        for cq in (rig.a.cq, rig.b.cq):
            got += [(w.wr_id, w.status) for w in cq.poll(1)[1]]
        time.sleep(0.01)
    ok = sorted(got) == [(1, ibv_wc_status.IBV_WC_SUCCESS), (2, ibv_wc_status.IBV_WC_SUCCESS)]
    rig.case("still_works", ok and rig.b.mr.read(19, 0) == b"after the forgeries",
             "completions %s" % got)


def requests(rig):
    """Requests at a fresh QP that expects PSN 0."""
    mr = rig.a.mr
    for name, opcode, psn, body, counter, want in (
            ("gap", 0x04, 100, b"gap!", "drop_rc_sequence", ibv_qp_state.IBV_QPS_RTS),
            ("duplicate", 0x04, 0xFFFFFF, b"dup!", "rc_duplicate", ibv_qp_state.IBV_QPS_RTS),
            ("write_huge", 0x0A, 0, reth(mr.buf, mr.rkey, (1 << 31) + 1) + b"huge",
             "rc_refused", ibv_qp_state.IBV_QPS_ERR),
            ("write_bad_rkey", 0x0A, 0, reth(mr.buf, mr.rkey ^ 0x100, 4) + b"rkey",
             "rc_refused", ibv_qp_state.IBV_QPS_ERR),
            ("write_out_of_range", 0x0A, 0, reth(mr.buf + 4094, mr.rkey, 4) + b"past",
             "rc_refused", ibv_qp_state.IBV_QPS_ERR),
            ("read_huge", 0x0C, 0, reth(mr.buf, mr.rkey, (1 << 31) + 1),
             "rc_refused", ibv_qp_state.IBV_QPS_ERR),
            ("atomic_misaligned", 0x14, 0,
             struct.pack(">QIQQ", mr.buf + 4, mr.rkey, 1, 0), "rc_refused",
             ibv_qp_state.IBV_QPS_ERR)):
        qa, _ = rig.pair()
        qa.post_recv(RecvWR(wr_id=3, num_sge=1, sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
        before = rig.counters()
        rig.inject(qa.qp_num, opcode, psn, body)
        seen = rig.counted(before, counter)
        end = time.monotonic() + 3
        while state(qa) != want and time.monotonic() < end:
            time.sleep(0.02)
        naks = rig.counters()["rc_nak_sent"] - before["rc_nak_sent"]
        # A duplicate is acknowledged again, not NAKed; the rest get one.
        nak_ok = naks == (0 if name == "duplicate" else 1)
        rig.case(name, seen and state(qa) == want and nak_ok,
                 "%s counted %s, state %d, NAKs %d" % (counter, seen, state(qa), naks))
    qa, _ = rig.pair()
    n = qa.qp_num
    qa.close()
    before = rig.counters()
    rig.inject(n, 0x04, 0, b"gone")
    rig.case("destroyed", rig.counted(before, "passed_on"), "passed_on did not count")


def lost(rig, within, prefix, opcode, body):
    """Answers showing that a READ's answers were lost: WITHIN (the answer
    OPCODE with BODY at the READ's second PSN), PREFIX_past_read and
    PREFIX_past_again (the same at the atomic's PSN)."""
    qa, qb = rig.a.new_qp(), rig.b.new_qp()
    # Timeout 22: 17 s before the retransmit timer asks again.
    rig.a.connect(qa, rig.b.gid, qb.qp_num, depth=4, timeout=22)
    rig.b.connect(qb, rig.a.gid, qa.qp_num, depth=4)
    qb.modify(QPAttr(qp_state=ibv_qp_state.IBV_QPS_ERR), M.IBV_QP_STATE)
    before = rig.counters()
    # PSNs 0 and 1: the READ of 2048 bytes (path MTU 1024); 2: the atomic.
    read = SendWR(wr_id=1, opcode=W.IBV_WR_RDMA_READ, num_sge=1,
                  sg=[SGE(rig.a.mr.buf, 2048, rig.a.mr.lkey)])
    read.set_wr_rdma(rig.b.mr.rkey, rig.b.mr.buf)
    add = SendWR(wr_id=2, opcode=W.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                 sg=[SGE(rig.a.mr.buf + 2048, 8, rig.a.mr.lkey)])
    add.set_wr_atomic(rig.b.mr.rkey, rig.b.mr.buf + 2048, 1, 0)
    qa.post_send(read)
    qa.post_send(add)
    end = time.monotonic() + 3
    while rig.counters()["sent"] - before["sent"] < 2 and time.monotonic() < end:
        time.sleep(0.02)
    for name, op, psn, data, retry in (
            (within[0], within[1], 1, within[2], False),
            (prefix + "_past_read", opcode, 2, body, True),
            (prefix + "_past_again", opcode, 2, body, False)):
        before = rig.counters()
        t0 = time.monotonic()
        rig.inject(qa.qp_num, op, psn, data)
        stale = rig.counted(before, "drop_rc_stale")
        # What is sent again by 1.5 s after the answer: the retry's, not
        # the timer's (17 s after the first send).
        time.sleep(max(0.0, t0 + 1.5 - time.monotonic()))
        again = rig.counters()["rc_retransmit"] - before["rc_retransmit"]
        want = 2 if retry else 0
        rig.case(name, stale and again == want and state(qa) == ibv_qp_state.IBV_QPS_RTS,
                 "stale %s, sent again %d (want %d), state %d" % (stale, again, want, state(qa)))
    qa.close()
    qb.close()


def main(argv):
    if len(argv) != 8:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    rig = Rig(argv[1:])
    answers(rig)
    ack = struct.pack(">I", AETH_ACK)
    lost(rig, ("read_response_within", 0x0F, ack + bytes(1024)), "answer", 0x12,
         struct.pack(">IQ", AETH_ACK, 7))
    lost(rig, ("ack_within_read", 0x11, ack), "ack", 0x11, ack)
    requests(rig)
    rig.inj.stdin.close()
    rig.inj.wait()
    return 0 if rig.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
