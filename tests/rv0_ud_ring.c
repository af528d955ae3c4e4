// SPDX-License-Identifier: GPL-2.0
/*
 * The UD data path of a soft-RoCE device through its rings, without
 * rdma-core: work requests written straight into the mapped send and
 * receive rings (the layout of <rdma/rdma_user_rxe.h>), the doorbell
 * (POST_SEND with no work request, as rdma-core's rxe provider rings it),
 * completions read from the mapped CQ ring.  One QP sends to itself,
 * addressed by an AH to the device's own IPv4 RoCE v2 GID, so the message
 * stays in the device.
 *
 * $RV_DEV names the device (rxe0 for reference, rv0), $RV_GID the index of
 * its IPv4 RoCE v2 GID, $RV_IP that address (dotted).  Without them the
 * program is skipped.  The same expectations hold on both devices, but:
 *   RV_EXPECT_STRICT_INLINE=1  inline data longer than the QP's
 *                              max_inline_data fails (rv0; soft-RoCE sends
 *                              what the ring says)
 *   RV_EXPECT_ERROR_STATUS=1   a refused work request completes with its
 *                              error (rv0; soft-RoCE flushes it instead)
 *   RV_FUZZ=N                  N work requests of random bytes (rv0 only:
 *                              soft-RoCE trusts fields of the ring)
 *
 * Every expected status names, in a comment, the soft-RoCE code that gives it.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "harness.h"
#include "uverbs_raw.h"

#define PORT		1U
#define QKEY		0x11111111U
#define BUF_LEN		(64 * 1024)
#define SEND_OFF	0
#define RECV_OFF	(32 * 1024)
#define MTU		1024U	/* the port's active MTU on a veth of MTU 1500 */
#define GRH		40U

/* enum ib_wc_status, enum ib_wc_opcode, enum ib_wc_flags (not uapi). */
#define WC_SUCCESS		0U
#define WC_LOC_QP_OP_ERR	2U
#define WC_WR_FLUSH_ERR		5U
#define WC_SEND			0U
#define WC_RECV			128U
#define WC_GRH			1U
#define WC_WITH_IMM		2U
/* enum ib_qp_state (not uapi). */
#define QPS_RESET		0
#define QPS_INIT		1
#define QPS_RTR			2
#define QPS_RTS			3
#define QPS_ERR			6
/* enum ib_send_flags (not uapi). */
#define SEND_SIGNALED		2U
#define SEND_INLINE		8U

struct cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct rxe_create_cq_resp rxe;
};

struct qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct rxe_create_qp_resp rxe;
};

struct ah_resp {
	struct ib_uverbs_create_ah_resp core;
	struct rxe_create_ah_resp rxe;
};

/*
 * A mapped ring, and its geometry as the kernel wrote it when the ring was
 * made: the header is shared memory that the tests overwrite, the kernel
 * keeps its own copy (ring_headers_overwritten_are_not_trusted), and so do
 * these helpers.
 */
struct ring {
	struct rxe_queue_buf *q;
	__u32 mask, log2;
};

static int map_ring(int fd, const struct mminfo *mi, struct ring *r)
{
	r->q = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mi->offset);
	if (r->q == MAP_FAILED)
		return -errno;
	r->mask = r->q->index_mask;
	r->log2 = r->q->log2_elem_size;
	return 0;
}

static void *slot(struct ring *r, __u32 i)
{
	return r->q->data + ((i & r->mask) << r->log2);
}

/* The next free slot of a ring userspace produces into, or NULL when full. */
static void *produce_slot(struct ring *r)
{
	__u32 prod = r->q->producer_index;
	__u32 cons = __atomic_load_n(&r->q->consumer_index, __ATOMIC_ACQUIRE);

	if (((prod + 1) & r->mask) == (cons & r->mask))
		return NULL;
	return slot(r, prod);
}

static void produce(struct ring *r)
{
	__atomic_store_n(&r->q->producer_index, (r->q->producer_index + 1) & r->mask,
			 __ATOMIC_RELEASE);
}

/* Takes one completion from the CQ ring: 1, or 0 when it stays empty for ms. */
static int poll_cq(struct ring *cq, struct ib_uverbs_wc *wc, int ms)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i <= ms; i++) {
		__u32 cons = cq->q->consumer_index;
		__u32 prod = __atomic_load_n(&cq->q->producer_index, __ATOMIC_ACQUIRE);

		if ((cons & cq->mask) != (prod & cq->mask)) {
			memcpy(wc, slot(cq, cons), sizeof(*wc));
			__atomic_store_n(&cq->q->consumer_index, (cons + 1) & cq->mask,
					 __ATOMIC_RELEASE);
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int doorbell(int fd, __u32 qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_POST_SEND, &cmd, sizeof(cmd), sizeof(resp));
}

static int modify_state(int fd, __u32 qp, __u8 state, __u32 mask)
{
	struct ib_uverbs_modify_qp cmd = {
		.qp_handle = qp,
		.attr_mask = mask | 1,	/* IB_QP_STATE */
		.qp_state = state,
		.qkey = QKEY,
		.port_num = PORT,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_MODIFY_QP, &cmd, sizeof(cmd), 0);
}

static int qp_state(int fd, __u32 qp)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp,
		.attr_mask = 1,
	};
	int ret = uv_cmd(fd, IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd), sizeof(resp));

	return ret ? ret : resp.qp_state;
}

/* RESET -> INIT (P_Key 0, port, Q_Key) -> RTR -> RTS (send PSN). */
static int to_rts(int fd, __u32 qp)
{
	/* IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY, then IB_QP_SQ_PSN */
	return modify_state(fd, qp, QPS_INIT, 0x10 | 0x20 | 0x40) ?:
	       modify_state(fd, qp, QPS_RTR, 0) ?:
	       modify_state(fd, qp, QPS_RTS, 0x10000);
}

/* CREATE_AH on pd to the IPv4 GID at sgid_index, ip: its ah_num, or 0. */
static __u32 create_ah_to(int fd, __u32 pd, int sgid_index, const struct in_addr *ip)
{
	struct ah_resp ah = {};
	struct ib_uverbs_create_ah cmd = {
		.response = (uintptr_t)&ah,
		.user_handle = 1,
		.pd_handle = pd,
		.attr = {
			.grh = { .sgid_index = sgid_index, .hop_limit = 64 },
			.is_global = 1,
			.port_num = PORT,
		},
	};

	cmd.attr.grh.dgid[10] = 0xff;
	cmd.attr.grh.dgid[11] = 0xff;
	memcpy(&cmd.attr.grh.dgid[12], ip, 4);
	if (uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_AH, &cmd, sizeof(cmd), sizeof(ah)))
		return 0;
	return ah.rxe.ah_num;
}

FIXTURE(ring) {
	int fd, async_fd;
	__u32 pd, cq, qp, qpn, lkey, ah, mr;
	struct ring cqr, sq, rq;
	__u8 *buf;
	struct in_addr ip;
	int gid;
	__u32 max_inline;
};

FIXTURE_SETUP(ring)
{
	static const struct qp_req req = {
		.send_wr = 16, .recv_wr = 16, .send_sge = 4, .recv_sge = 4, .inline_data = 64,
	};
	struct ib_uverbs_get_context_resp ctx = {};
	struct ib_uverbs_reg_mr_resp mr;
	struct cq_resp cq;
	struct qp_resp qp;
	const char *dev = getenv("RV_DEV"), *gid = getenv("RV_GID"), *ip = getenv("RV_IP");

	self->fd = -1;
	self->async_fd = -1;
	if (!dev || !gid || !ip)
		SKIP(return, "RV_DEV, RV_GID and RV_IP name the device");
	ASSERT_EQ(1, inet_pton(AF_INET, ip, &self->ip));
	self->fd = uverbs_open(dev);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_context(self->fd, &ctx));
	self->async_fd = ctx.async_fd;
	ASSERT_EQ(0, alloc_pd(self->fd, &self->pd));
	ASSERT_EQ(0, create_cq_raw(self->fd, 255, 0, &cq, sizeof(cq)));
	self->cq = cq.core.cq_handle;
	ASSERT_EQ(0, map_ring(self->fd, &cq.rxe.mi, &self->cqr));
	ASSERT_EQ(0, create_qp_raw(self->fd, self->pd, self->cq, &req, 0, &qp, sizeof(qp)));
	self->qp = qp.core.qp_handle;
	self->qpn = qp.core.qpn;
	self->max_inline = qp.core.max_inline_data;
	ASSERT_EQ(0, map_ring(self->fd, &qp.rxe.sq_mi, &self->sq));
	ASSERT_EQ(0, map_ring(self->fd, &qp.rxe.rq_mi, &self->rq));
	ASSERT_EQ(0, to_rts(self->fd, self->qp));
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0, BUF_LEN);
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, self->buf, BUF_LEN, (uintptr_t)self->buf,
			    IB_UVERBS_ACCESS_LOCAL_WRITE, &mr));
	self->mr = mr.mr_handle;
	self->lkey = mr.lkey;
	self->gid = atoi(gid);
	self->ah = create_ah_to(self->fd, self->pd, self->gid, &self->ip);
	ASSERT_NE(0U, self->ah);
}

FIXTURE_TEARDOWN(ring)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->async_fd >= 0)
		close(self->async_fd);
}

/*
 * The IDs of receives have this bit: a flushed completion has no valid
 * opcode (soft-RoCE leaves it 0), only its ID tells what it completes.
 */
#define RECV_ID		0x1000ULL

/*
 * The helpers below take the fixture's data, FIXTURE_DATA(ring), by its
 * struct name (kselftest_harness.h: struct _test_data_<name>).
 */

/* A receive of len bytes at off of the buffer. */
static int post_recv(struct _test_data_ring *self, __u64 wr_id, size_t off, __u32 len)
{
	struct rxe_recv_wqe *w = produce_slot(&self->rq);

	if (!w)
		return -ENOSPC;
	memset(w, 0, sizeof(*w) + sizeof(struct rxe_sge));
	w->wr_id = RECV_ID | wr_id;
	w->dma.length = len;
	w->dma.resid = len;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = (uintptr_t)self->buf + off;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = self->lkey;
	produce(&self->rq);
	return 0;
}

/* A send WQE as rdma-core's provider writes it: one SGE, or inline data. */
static struct rxe_send_wqe *send_wqe(struct _test_data_ring *self, __u64 wr_id, __u32 opcode,
				     size_t off, __u32 len, __u32 flags)
{
	struct rxe_send_wqe *w = produce_slot(&self->sq);

	if (!w)
		return NULL;
	memset(w, 0, 1U << self->sq.log2);
	w->wr.wr_id = wr_id;
	w->wr.opcode = opcode;
	w->wr.send_flags = flags | SEND_SIGNALED;
	w->wr.wr.ud.remote_qpn = self->qpn;
	w->wr.wr.ud.remote_qkey = QKEY;
	w->wr.wr.ud.ah_num = self->ah;
	w->dma.length = len;
	w->dma.resid = len;
	if (flags & SEND_INLINE) {
		memcpy(w->dma.inline_data, self->buf + off, len);
	} else {
		w->dma.num_sge = 1;
		w->dma.sge[0].addr = (uintptr_t)self->buf + off;
		w->dma.sge[0].length = len;
		w->dma.sge[0].lkey = self->lkey;
	}
	return w;
}

/*
 * The completions of one doorbell: the first of the sends and of the
 * receives, the last send, and how many of each.
 */
struct done {
	struct ib_uverbs_wc send, recv, last_send;
	int sends, recvs;
};

static void collect(struct _test_data_ring *self, struct done *d, int want_recv)
{
	struct ib_uverbs_wc wc;

	memset(d, 0, sizeof(*d));
	/* soft-RoCE completes from its tasks: wait for them, briefly. */
	while (poll_cq(&self->cqr, &wc, d->sends && (d->recvs || !want_recv) ? 50 : 2000)) {
		if (wc.wr_id & RECV_ID) {
			if (!d->recvs++)
				d->recv = wc;
		} else {
			if (!d->sends++)
				d->send = wc;
			d->last_send = wc;
		}
	}
}

/* The completions of a send of len bytes to the QP itself, and of its receive. */
static void expect_sent_to_itself(struct __test_metadata *_metadata, struct _test_data_ring *self,
				  const struct done *d, __u64 send_id, __u64 recv_id, __u32 len)
{
	/* rxe_comp.c:make_send_cqe */
	EXPECT_EQ(WC_SUCCESS, d->send.status);
	EXPECT_EQ(send_id, d->send.wr_id);
	EXPECT_EQ(WC_SEND, d->send.opcode);
	EXPECT_EQ(len, d->send.byte_len);
	EXPECT_EQ(self->qpn, d->send.qp_num);
	/* rxe_resp.c:do_complete, for UD */
	EXPECT_EQ(WC_SUCCESS, d->recv.status);
	EXPECT_EQ(RECV_ID | recv_id, d->recv.wr_id);
	EXPECT_EQ(WC_RECV, d->recv.opcode);
	EXPECT_EQ(GRH + len, d->recv.byte_len);
	EXPECT_EQ(WC_GRH, d->recv.wc_flags);
	EXPECT_EQ(self->qpn, d->recv.src_qp);
	EXPECT_EQ(self->qpn, d->recv.qp_num);
	EXPECT_EQ(PORT, d->recv.port_num);
}

static void fill(__u8 *p, size_t len, __u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed + i * 7);
}

TEST_F(ring, send_to_itself_payload_grh_and_completions)
{
	static const __u32 sizes[] = { 1, 17, 100, 1000, MTU };
	struct done d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		__u32 len = sizes[i];
		__u8 *grh = self->buf + RECV_OFF;

		fill(self->buf + SEND_OFF, len, i);
		memset(self->buf + RECV_OFF, 0xee, GRH + MTU + 16);
		ASSERT_EQ(0, post_recv(self, 100 + i, RECV_OFF, GRH + MTU));
		ASSERT_NE(NULL, send_wqe(self, 200 + i, IB_UVERBS_WR_SEND, SEND_OFF, len, 0));
		produce(&self->sq);
		ASSERT_EQ(0, doorbell(self->fd, self->qp));
		collect(self, &d, 1);
		ASSERT_EQ(1, d.sends);
		ASSERT_EQ(1, d.recvs);
		expect_sent_to_itself(_metadata, self, &d, 200 + i, 100 + i, len);
		/* The payload after the GRH, nothing written past it. */
		EXPECT_EQ(0, memcmp(self->buf + SEND_OFF, grh + GRH, len));
		EXPECT_EQ(0xee, grh[GRH + len]);
		/*
		 * rxe_resp.c:send_data_in: 20 zero bytes, then the IPv4 header
		 * (rxe_net.c:prepare4): version 4, length 5, TOS 0, total length,
		 * DF, TTL = hop limit, UDP, both addresses ours.
		 */
		EXPECT_EQ(0, memcmp(grh, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20));
		EXPECT_EQ(0x45, grh[20]);
		EXPECT_EQ(0, grh[21]);
		EXPECT_EQ(20 + 8 + 12 + 8 + len + (4 - len % 4) % 4 + 4,
			  (__u32)(grh[22] << 8 | grh[23]));
		EXPECT_EQ(0x40, grh[26]);
		EXPECT_EQ(64, grh[28]);
		EXPECT_EQ(17, grh[29]);
		EXPECT_EQ(0, memcmp(&grh[32], &self->ip, 4));
		EXPECT_EQ(0, memcmp(&grh[36], &self->ip, 4));
	}
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

TEST_F(ring, send_with_immediate_and_inline)
{
	struct rxe_send_wqe *w;
	struct done d;

	fill(self->buf + SEND_OFF, 16, 3);
	ASSERT_EQ(0, post_recv(self, 1, RECV_OFF, GRH + 64));
	w = send_wqe(self, 2, IB_UVERBS_WR_SEND_WITH_IMM, SEND_OFF, 16, SEND_INLINE);
	ASSERT_NE(NULL, w);
	w->wr.ex.imm_data = htonl(0x12345678);
	produce(&self->sq);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	collect(self, &d, 1);
	ASSERT_EQ(1, d.recvs);
	EXPECT_EQ(WC_SUCCESS, d.send.status);
	/* rxe_comp.c:make_send_cqe: IB_WC_WITH_IMM for a send with immediate */
	EXPECT_EQ(WC_WITH_IMM, d.send.wc_flags);
	EXPECT_EQ(WC_SUCCESS, d.recv.status);
	EXPECT_EQ(WC_GRH | WC_WITH_IMM, d.recv.wc_flags);
	EXPECT_EQ(htonl(0x12345678), d.recv.ex.imm_data);
	EXPECT_EQ(GRH + 16, d.recv.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + SEND_OFF, self->buf + RECV_OFF + GRH, 16));
}

TEST_F(ring, larger_than_the_mtu_completes_and_is_not_sent)
{
	struct done d;

	ASSERT_EQ(0, post_recv(self, 1, RECV_OFF, GRH + 4096));
	ASSERT_NE(NULL, send_wqe(self, 2, IB_UVERBS_WR_SEND, SEND_OFF, MTU + 1, 0));
	produce(&self->sq);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	collect(self, &d, 0);
	/* rxe_req.c:rxe_requester: C10-93.1.1, a UD send past the MTU succeeds */
	ASSERT_EQ(1, d.sends);
	EXPECT_EQ(WC_SUCCESS, d.send.status);
	EXPECT_EQ(MTU + 1, d.send.byte_len);
	EXPECT_EQ(0, d.recvs);
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

TEST_F(ring, receive_buffer_too_small_drops_and_keeps_the_wqe)
{
	struct done d;

	ASSERT_EQ(0, post_recv(self, 1, RECV_OFF, GRH + 10));
	ASSERT_NE(NULL, send_wqe(self, 2, IB_UVERBS_WR_SEND, SEND_OFF, 100, 0));
	produce(&self->sq);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	collect(self, &d, 0);
	/* rxe_resp.c:check_length: dropped, the WQE stays for the next one */
	EXPECT_EQ(WC_SUCCESS, d.send.status);
	EXPECT_EQ(0, d.recvs);
	ASSERT_NE(NULL, send_wqe(self, 3, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0));
	produce(&self->sq);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	collect(self, &d, 1);
	EXPECT_EQ(1, d.recvs);
	EXPECT_EQ(RECV_ID | 1, d.recv.wr_id);
	EXPECT_EQ(GRH + 10, d.recv.byte_len);
}

/*
 * A WQE the send path refuses: the send completes with loc_qp_op_err, the
 * QP goes to error, a posted receive is flushed; the QP works again after
 * a reset.
 */
static void refused(struct __test_metadata *_metadata, struct _test_data_ring *self,
		    struct rxe_send_wqe *w)
{
	struct ib_uverbs_wc wc;
	struct done d;

	ASSERT_NE(NULL, w);
	produce(&self->sq);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	collect(self, &d, 1);
	ASSERT_EQ(1, d.sends);
	/*
	 * rxe_req.c:rxe_requester records IB_WC_LOC_QP_OP_ERR in the WQE, then
	 * moves the QP to error at once (its "err:" label, rxe_qp_error); the
	 * completer, finding the QP in error, flushes the whole send queue,
	 * that WQE included, with IB_WC_WR_FLUSH_ERR (rxe_comp.c:rxe_completer,
	 * flush_send_queue): the error status is lost.  rv0 completes the WQE
	 * with its error, as IBTA wants (RV_EXPECT_ERROR_STATUS=1).
	 */
	EXPECT_EQ(getenv("RV_EXPECT_ERROR_STATUS") ? WC_LOC_QP_OP_ERR : WC_WR_FLUSH_ERR,
		  d.send.status);
	EXPECT_EQ(7U, d.send.wr_id);
	/* rxe_qp.c:rxe_qp_error, rxe_resp.c:flush_recv_queue */
	EXPECT_EQ(QPS_ERR, qp_state(self->fd, self->qp));
	ASSERT_EQ(1, d.recvs);
	EXPECT_EQ(WC_WR_FLUSH_ERR, d.recv.status);
	EXPECT_EQ(RECV_ID | 5, d.recv.wr_id);
	/* Back to work. */
	ASSERT_EQ(0, modify_state(self->fd, self->qp, QPS_RESET, 0));
	ASSERT_EQ(0, to_rts(self->fd, self->qp));
	EXPECT_EQ(0, poll_cq(&self->cqr, &wc, 50));
}

TEST_F(ring, bad_opcode)
{
	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	refused(_metadata, self, send_wqe(self, 7, 0x55, SEND_OFF, 10, 0));
}

TEST_F(ring, unknown_ah_num)
{
	struct rxe_send_wqe *w;

	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0);
	ASSERT_NE(NULL, w);
	w->wr.wr.ud.ah_num = self->ah + 1000;
	refused(_metadata, self, w);
}

TEST_F(ring, ah_of_another_pd)
{
	struct rxe_send_wqe *w;
	__u32 pd2, ah2;

	ASSERT_EQ(0, alloc_pd(self->fd, &pd2));
	ah2 = create_ah_to(self->fd, pd2, self->gid, &self->ip);
	ASSERT_NE(0U, ah2);
	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0);
	ASSERT_NE(NULL, w);
	/* rxe_av.c:rxe_get_av: an AH of another PD than the QP's */
	w->wr.wr.ud.ah_num = ah2;
	refused(_metadata, self, w);
}

TEST_F(ring, bad_lkey)
{
	struct rxe_send_wqe *w;

	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0);
	ASSERT_NE(NULL, w);
	w->dma.sge[0].lkey ^= 0x100;
	refused(_metadata, self, w);
}

TEST_F(ring, sge_past_the_mr)
{
	struct rxe_send_wqe *w;

	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, BUF_LEN - 8, 16, 0);
	ASSERT_NE(NULL, w);
	refused(_metadata, self, w);
}

TEST_F(ring, more_sges_than_the_qp_has)
{
	struct rxe_send_wqe *w;

	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0);
	ASSERT_NE(NULL, w);
	w->dma.num_sge = 1000;
	refused(_metadata, self, w);
}

TEST_F(ring, inline_longer_than_max_inline)
{
	struct rxe_send_wqe *w;

	if (!getenv("RV_EXPECT_STRICT_INLINE"))
		SKIP(return, "soft-RoCE sends inline data as long as the ring says");
	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	w = send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, SEND_INLINE);
	ASSERT_NE(NULL, w);
	w->dma.length = self->max_inline + 1;
	refused(_metadata, self, w);
}

TEST_F(ring, destroy_with_work_posted)
{
	ASSERT_EQ(0, post_recv(self, 5, RECV_OFF, GRH + 100));
	ASSERT_NE(NULL, send_wqe(self, 7, IB_UVERBS_WR_SEND, SEND_OFF, 10, 0));
	produce(&self->sq);
	/* No doorbell: the QP goes with a send and a receive posted. */
	ASSERT_EQ(0, destroy_qp(self->fd, self->qp));
	ASSERT_EQ(0, destroy_cq(self->fd, self->cq));
}

/*
 * Every field of a ring's header is shared memory that the user can write
 * at any time.  The kernel keeps the geometry it wrote there when it made
 * the ring (soft-RoCE: struct rxe_queue's index_mask and log2_elem_size,
 * rxe_queue.h) and masks every index it reads (Documentation/rv0.rst):
 * garbage in the element size and index mask of all three rings, and in the
 * high bits of the producer indices userspace owns and of the CQ's consumer
 * index, changes nothing.  Exactly the one work request of each doorbell is
 * done, its completions land where the masked indices say, and the data
 * arrives.  rv0 only: soft-RoCE masks the indices everywhere but in
 * rxe_req.c:req_next_wqe, which compares its masked index with the
 * producer index as read ("index == prod"), so it never finds the ring
 * empty, walks it all and fails the QP (WR_FLUSH_ERR).
 */
TEST_F(ring, ring_headers_overwritten_are_not_trusted)
{
	struct ring *rings[] = { &self->sq, &self->rq, &self->cqr };
	struct done d;
	size_t i, round;

	for (i = 0; i < ARRAY_SIZE(rings); i++) {
		rings[i]->q->log2_elem_size = 31;
		rings[i]->q->index_mask = 0xffffffffU;
	}
	for (round = 0; round < 3; round++) {
		__u32 len = 100 + round;

		fill(self->buf + SEND_OFF, len, round);
		memset(self->buf + RECV_OFF, 0xee, GRH + MTU);
		ASSERT_EQ(0, post_recv(self, 10 + round, RECV_OFF, GRH + MTU));
		ASSERT_NE(NULL, send_wqe(self, 20 + round, IB_UVERBS_WR_SEND, SEND_OFF, len, 0));
		produce(&self->sq);
		/* High bits that no index of these rings has. */
		self->sq.q->producer_index |= ~self->sq.mask;
		self->rq.q->producer_index |= ~self->rq.mask;
		self->cqr.q->consumer_index |= ~self->cqr.mask;
		ASSERT_EQ(0, doorbell(self->fd, self->qp));
		collect(self, &d, 1);
		ASSERT_EQ(1, d.sends);
		ASSERT_EQ(1, d.recvs);
		expect_sent_to_itself(_metadata, self, &d, 20 + round, 10 + round, len);
		EXPECT_EQ(0, memcmp(self->buf + SEND_OFF, self->buf + RECV_OFF + GRH, len));
		EXPECT_EQ(0xee, self->buf[RECV_OFF + GRH + len]);
	}
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

/* Whether the kernel has taken every WQE posted to a ring userspace produces into. */
static int drained(struct ring *r)
{
	return __atomic_load_n(&r->q->consumer_index, __ATOMIC_ACQUIRE) == r->q->producer_index;
}

/* Waits (3 s at most) for the kernel to take every WQE of r. */
static int wait_drained(struct ring *r)
{
	int i;

	for (i = 0; i < 300 && !drained(r); i++)
		usleep(10000);
	return drained(r);
}

/*
 * Indices within the ring but wrong: the send ring's producer index moved
 * back by one after the kernel took three sends.  The ring then looks to
 * hold all its slots but one, from the kernel's consumer index round to
 * the new producer index: the kernel walks them once (no more, however
 * the index is set) and stops there.  The first of them was never written
 * (zeros: opcode 0, RDMA WRITE, which a UD QP refuses): the QP goes to
 * error and every later slot is flushed, the two old sends included
 * (their IDs 0 and 1, last).  soft-RoCE does the same; it loses the
 * first error's status (see refused() above).
 */
TEST_F(ring, send_producer_moved_back_is_walked_once)
{
	__u32 slots = self->sq.mask + 1, i;
	struct ib_uverbs_wc wc;
	int n = 0;

	for (i = 0; i < 3; i++) {
		ASSERT_NE(NULL, send_wqe(self, i, IB_UVERBS_WR_SEND, SEND_OFF, 8, 0));
		produce(&self->sq);
	}
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	ASSERT_TRUE(wait_drained(&self->sq));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, poll_cq(&self->cqr, &wc, 2000));
		EXPECT_EQ(WC_SUCCESS, wc.status);
		EXPECT_EQ(i, wc.wr_id);
	}
	/* Back by one: slots 3 to slots - 1, then 0 and 1. */
	__atomic_store_n(&self->sq.q->producer_index, 2, __ATOMIC_RELEASE);
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	ASSERT_TRUE(wait_drained(&self->sq));
	while (poll_cq(&self->cqr, &wc, n ? 100 : 2000)) {
		__u32 want = n == 0 && getenv("RV_EXPECT_ERROR_STATUS") ? WC_LOC_QP_OP_ERR :
			     WC_WR_FLUSH_ERR;

		EXPECT_EQ(want, wc.status);
		EXPECT_EQ(self->qpn, wc.qp_num);
		/* Zeros, then the two old sends. */
		EXPECT_EQ(n < (int)slots - 3 ? 0ULL : (__u64)(n - ((int)slots - 3)), wc.wr_id);
		n++;
	}
	EXPECT_EQ((int)slots - 1, n);
	EXPECT_EQ(2U, __atomic_load_n(&self->sq.q->consumer_index, __ATOMIC_ACQUIRE));
	EXPECT_EQ(QPS_ERR, qp_state(self->fd, self->qp));
}

/*
 * The CQ's consumer index set ahead of the producer (within the ring):
 * the kernel takes the ring for full when its next producer index meets
 * it (rxe_cq.c:rxe_cq_post, queue_full).  Four of six signalled sends'
 * completions fit; the fifth finds the ring full: IB_EVENT_CQ_ERR, and it
 * and the sixth are lost; the QP goes on (a full send CQ does not fail
 * it).  With the consumer index put back, the four are there, in order.
 * Nothing is received: no receive is posted, and UD drops the message.
 */
TEST_F(ring, cq_consumer_ahead_of_the_producer)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd pfd = { .fd = self->async_fd, .events = POLLIN };
	__u32 prod = __atomic_load_n(&self->cqr.q->producer_index, __ATOMIC_ACQUIRE);
	struct ib_uverbs_wc wc;
	__u32 i;

	__atomic_store_n(&self->cqr.q->consumer_index, (prod + 5) & self->cqr.mask,
			 __ATOMIC_RELEASE);
	for (i = 0; i < 6; i++) {
		ASSERT_NE(NULL, send_wqe(self, i, IB_UVERBS_WR_SEND, SEND_OFF, 8, 0));
		produce(&self->sq);
	}
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
	ASSERT_TRUE(wait_drained(&self->sq));
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_EQ((ssize_t)sizeof(ev), read(self->async_fd, &ev, sizeof(ev)));
	EXPECT_EQ(0U, ev.event_type);
	EXPECT_EQ((prod + 4) & self->cqr.mask,
		  __atomic_load_n(&self->cqr.q->producer_index, __ATOMIC_ACQUIRE));
	__atomic_store_n(&self->cqr.q->consumer_index, prod, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, poll_cq(&self->cqr, &wc, 2000));
		EXPECT_EQ(WC_SUCCESS, wc.status);
		EXPECT_EQ(i, wc.wr_id);
	}
	EXPECT_EQ(0, poll_cq(&self->cqr, &wc, 100));
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

/*
 * rxe_cq.c:rxe_cq_post: a full CQ raises IB_EVENT_CQ_ERR (0) on the async
 * file.  Then the completions the CQ kept: their number, each successful
 * and of opcode op.
 */
static int cq_err_then_drain(struct __test_metadata *_metadata, struct _test_data_ring *self,
			     __u32 op)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd pfd = { .fd = self->async_fd, .events = POLLIN };
	struct ib_uverbs_wc wc;
	int n = 0;

	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_EQ((ssize_t)sizeof(ev), read(self->async_fd, &ev, sizeof(ev)));
	EXPECT_EQ(0U, ev.event_type);
	while (poll_cq(&self->cqr, &wc, 100)) {
		EXPECT_EQ(WC_SUCCESS, wc.status);
		EXPECT_EQ(op, wc.opcode);
		n++;
	}
	return n;
}

TEST_F(ring, full_send_cq_raises_cq_err_and_loses_the_completion)
{
	int round, i;

	/* 18 x 15 signalled sends, nothing received, the CQ (255) not polled. */
	for (round = 0; round < 18; round++) {
		for (i = 0; i < 15; i++) {
			ASSERT_NE(NULL, send_wqe(self, round * 16 + i, IB_UVERBS_WR_SEND,
						 SEND_OFF, 8, 0));
			produce(&self->sq);
		}
		ASSERT_EQ(0, doorbell(self->fd, self->qp));
		/* Let the ring drain before the next round (soft-RoCE: its task). */
		for (i = 0; i < 300 && !drained(&self->sq); i++)
			usleep(10000);
	}
	/* The CQ holds what it has room for; the QP is fine. */
	EXPECT_EQ(255, cq_err_then_drain(_metadata, self, WC_SEND));
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

TEST_F(ring, full_receive_cq_moves_the_qp_to_error)
{
	int round, i;

	/* 18 x 15 messages to itself, unsignalled: only receives complete. */
	for (round = 0; round < 18; round++) {
		for (i = 0; i < 15; i++) {
			struct rxe_send_wqe *w;

			ASSERT_EQ(0, post_recv(self, round * 16 + i, RECV_OFF, GRH + 64));
			w = send_wqe(self, round * 16 + i, IB_UVERBS_WR_SEND, SEND_OFF, 8, 0);
			ASSERT_NE(NULL, w);
			w->wr.send_flags &= ~SEND_SIGNALED;
			produce(&self->sq);
		}
		ASSERT_EQ(0, doorbell(self->fd, self->qp));
		for (i = 0; i < 300 && !(drained(&self->sq) && drained(&self->rq)); i++)
			usleep(10000);
		if (qp_state(self->fd, self->qp) == QPS_ERR)
			break;
	}
	/* rxe_resp.c:do_complete: the 256th does not fit, CQ_ERR, QP to error */
	EXPECT_EQ(255, cq_err_then_drain(_metadata, self, WC_RECV));
	EXPECT_EQ(QPS_ERR, qp_state(self->fd, self->qp));
}

TEST_F(ring, random_bytes_in_the_send_ring)
{
	const char *n_env = getenv("RV_FUZZ");
	unsigned int seed = 1, n = n_env ? atoi(n_env) : 0, i, j;
	struct ib_uverbs_wc wc;

	if (!n)
		SKIP(return, "RV_FUZZ is not set (soft-RoCE trusts fields of the ring)");
	for (i = 0; i < n; i++) {
		__u32 *w = produce_slot(&self->sq);
		size_t words = (1U << self->sq.log2) / 4;

		if (!w) {
			ASSERT_EQ(0, doorbell(self->fd, self->qp));
			while (poll_cq(&self->cqr, &wc, 0))
				;
			continue;
		}
		for (j = 0; j < words; j++)
			w[j] = rand_r(&seed);
		/* Now and then a plausible one: right opcode, AH and key. */
		if (i % 3 == 0) {
			w[3] = IB_UVERBS_WR_SEND;
			w[9] = self->ah;
			w[49] = rand_r(&seed) % 4;	/* dma.num_sge */
		}
		produce(&self->sq);
		if (rand_r(&seed) % 4 == 0)
			ASSERT_EQ(0, doorbell(self->fd, self->qp));
		while (poll_cq(&self->cqr, &wc, 0)) {
			EXPECT_TRUE(wc.status == WC_SUCCESS || wc.status == WC_LOC_QP_OP_ERR ||
				    wc.status == WC_WR_FLUSH_ERR);
			EXPECT_EQ(self->qpn, wc.qp_num);
		}
		if (qp_state(self->fd, self->qp) == QPS_ERR) {
			ASSERT_EQ(0, doorbell(self->fd, self->qp));
			while (poll_cq(&self->cqr, &wc, 0))
				;
			ASSERT_EQ(0, modify_state(self->fd, self->qp, QPS_RESET, 0));
			ASSERT_EQ(0, to_rts(self->fd, self->qp));
		}
	}
}

/* RESIZE_CQ's answer: the core response, then the driver's (struct mminfo). */
struct resize_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct rxe_resize_cq_resp rxe;
};

static_assert(offsetof(struct resize_resp, rxe) == sizeof(struct ib_uverbs_resize_cq_resp),
	      "the driver's response follows the core's");

/* RESIZE_CQ to cqe entries, with room for out_len bytes of answer in resp. */
static int resize_cq(int fd, __u32 cq, __u32 cqe, struct resize_resp *resp, size_t out_len)
{
	memset(resp, 0, sizeof(*resp));
	return resize_cq_raw(fd, cq, cqe, resp, out_len);
}

/* n signalled sends to itself (nothing received), in one doorbell. */
static void sends(struct __test_metadata *_metadata, struct _test_data_ring *self, __u64 first,
		  int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ASSERT_NE(NULL, send_wqe(self, first + i, IB_UVERBS_WR_SEND, SEND_OFF, 8, 0));
		produce(&self->sq);
	}
	ASSERT_EQ(0, doorbell(self->fd, self->qp));
}

/* Waits (soft-RoCE completes from its tasks) until the CQ ring holds n. */
static int cq_holds(struct ring *cq, __u32 n)
{
	int i;

	for (i = 0; i < 300; i++) {
		__u32 prod = __atomic_load_n(&cq->q->producer_index, __ATOMIC_ACQUIRE);

		if (((prod - cq->q->consumer_index) & cq->mask) == n)
			return 1;
		usleep(10000);
	}
	return 0;
}

TEST_F(ring, resize_cq_keeps_unpolled_completions_in_order)
{
	struct ib_uverbs_query_device_resp dev = {};
	struct ib_uverbs_query_device qd = { .response = (uintptr_t)&dev };
	struct ring old = self->cqr, fresh;
	struct resize_resp r;
	struct ib_uverbs_wc wc;
	__u32 i;

	ASSERT_EQ(0, uv_cmd(self->fd, IB_USER_VERBS_CMD_QUERY_DEVICE, &qd, sizeof(qd),
			    sizeof(dev)));
	/* Six completions waiting in the CQ of 255. */
	sends(_metadata, self, 0, 6);
	ASSERT_TRUE(cq_holds(&self->cqr, 6));

	/* uverbs_cmd.c:ib_uverbs_resize_cq: no entries */
	EXPECT_EQ(-EINVAL, resize_cq(self->fd, self->cq, 0, &r, sizeof(r)));
	/* rxe_verbs.c:rxe_resize_cq: past max_cqe, fewer than those waiting */
	EXPECT_EQ(-EINVAL, resize_cq(self->fd, self->cq, dev.max_cqe + 1, &r, sizeof(r)));
	EXPECT_EQ(-EINVAL, resize_cq(self->fd, self->cq, 5, &r, sizeof(r)));
	/* rxe_verbs.c:rxe_resize_cq: no room for struct rxe_resize_cq_resp */
	EXPECT_EQ(-EINVAL, resize_cq(self->fd, self->cq, 100, &r, sizeof(r.core)));
	/* Nothing changed: the six are still in the first ring. */
	EXPECT_TRUE(cq_holds(&self->cqr, 6));

	/* rxe_queue.c:rxe_queue_init: roundup_pow_of_two(6 + 1) slots, one free */
	ASSERT_EQ(0, resize_cq(self->fd, self->cq, 6, &r, sizeof(r)));
	EXPECT_EQ(7U, r.core.cqe);
	ASSERT_EQ(0, map_ring(self->fd, &r.rxe.mi, &fresh));
	EXPECT_EQ(old.q->log2_elem_size, fresh.q->log2_elem_size);
	EXPECT_EQ(7U, fresh.q->index_mask);
	/* rxe_queue.c:resize_finish: moved to the start of the new ring */
	EXPECT_EQ(6U, fresh.q->producer_index);
	EXPECT_EQ(0U, fresh.q->consumer_index);
	self->cqr = fresh;
	/* Completions still come, into the new ring, and in order. */
	sends(_metadata, self, 6, 1);
	ASSERT_TRUE(cq_holds(&self->cqr, 7));
	for (i = 0; i < 7; i++) {
		ASSERT_EQ(1, poll_cq(&self->cqr, &wc, 0));
		EXPECT_EQ(WC_SUCCESS, wc.status);
		EXPECT_EQ(WC_SEND, wc.opcode);
		EXPECT_EQ(i, wc.wr_id);
	}
	EXPECT_EQ(0, poll_cq(&self->cqr, &wc, 0));
	/* The old ring stays mapped and readable, and nothing more goes there. */
	EXPECT_EQ(6U, old.q->producer_index);

	/* Empty: down to one entry (two slots), then full at one completion. */
	ASSERT_EQ(0, resize_cq(self->fd, self->cq, 1, &r, sizeof(r)));
	EXPECT_EQ(1U, r.core.cqe);
	ASSERT_EQ(0, map_ring(self->fd, &r.rxe.mi, &self->cqr));
	EXPECT_EQ(1U, self->cqr.q->index_mask);
	sends(_metadata, self, 7, 1);
	ASSERT_TRUE(cq_holds(&self->cqr, 1));
	ASSERT_EQ(1, poll_cq(&self->cqr, &wc, 0));
	EXPECT_EQ(7U, wc.wr_id);
	EXPECT_EQ(QPS_RTS, qp_state(self->fd, self->qp));
}

TEST_HARNESS_MAIN
