// SPDX-License-Identifier: GPL-2.0
/*
 * ud_burst: a burst of UD sends as fast as the send queue takes them, and
 * a receiver that counts them, through rdma-core.
 *
 *   ud_burst DEV SGID_INDEX recv COUNT
 *   ud_burst DEV SGID_INDEX send COUNT DGID QPN
 *
 * Both create a UD QP on DEV (port 1, P_Key index 0, Q_Key 0x11111111)
 * in RTS, with the source GID SGID_INDEX.
 *
 * recv: posts COUNT receives (a GRH and SIZE bytes each) for the
 * messages numbered 0 to COUNT - 1, prints
 * "qpn N" and then, for each line read from its standard input, polls its
 * CQ until nothing came for 500 ms and prints
 *
 *   received N     receives completed with IBV_WC_SUCCESS, in all
 *   bad N          other completions, wrong lengths, sequence numbers
 *                  out of range or seen twice
 *
 * and exits at the end of its input.
 *
 * send: sends COUNT messages of SIZE (64) bytes, each its sequence number
 * first, to QP QPN at DGID through one AH, posting whenever the send
 * queue (256 deep) has room and polling its completions, every send
 * signaled; it waits up to 60 s for the last completion and prints
 *
 *   completed N    send completions
 *   success N      of them IBV_WC_SUCCESS, in order of posting
 *   first_error S  the status of the first other one (-1: none)
 *   state S        the QP's state at the end (ibv_query_qp; 3 is RTS)
 *
 * then sends one more message (numbered COUNT), to show the QP still
 * sends, and prints
 * "after S", the status of its completion (-1: none within 10 s).
 * Exit status 0 when every completion came with IBV_WC_SUCCESS and the
 * QP is in RTS, 1 otherwise, 2 on a usage or set-up error.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/types.h>

#include <infiniband/verbs.h>

#define QKEY 0x11111111
#define GRH 40
#define SIZE 64
#define SQ_DEPTH 256
#define MAX_COUNT 65536

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		return -1;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

static int setup(struct ctx *c, const char *dev, int count, int sq, int rq, size_t len)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = sq,
			.max_recv_wr = rq,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			c->ctx = ibv_open_device(list[i]);
	if (!c->ctx) {
		fprintf(stderr, "ud_burst: no device %s\n", dev);
		return -1;
	}
	c->buf = calloc(1, len);
	c->pd = ibv_alloc_pd(c->ctx);
	c->mr = c->pd && c->buf ? ibv_reg_mr(c->pd, c->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	c->cq = ibv_create_cq(c->ctx, count + 1, NULL, NULL, 0);
	if (!c->mr || !c->cq)
		return -1;
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &init);
	return c->qp && !to_rts(c->qp) ? 0 : -1;
}

/* Whether @wc is a message received whole, numbered below @count, once. */
static int good(struct ctx *c, const struct ibv_wc *wc, char *seen, int count)
{
	__u32 seq;

	if (wc->status != IBV_WC_SUCCESS || wc->byte_len != GRH + SIZE)
		return 0;
	memcpy(&seq, c->buf + wc->wr_id * (GRH + SIZE) + GRH, 4);
	seq = ntohl(seq);
	if (seq >= (__u32)count || seen[seq])
		return 0;
	seen[seq] = 1;
	return 1;
}

static int recv_side(struct ctx *c, int count)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[64];
	char line[64], *seen = calloc(count, 1);
	int i, n, received = 0, wrong = 0;
	__u64 quiet;

	if (!seen)
		return 2;
	for (i = 0; i < count; i++) {
		sge = (struct ibv_sge){
			.addr = (uintptr_t)c->buf + (size_t)i * (GRH + SIZE),
			.length = GRH + SIZE,
			.lkey = c->mr->lkey,
		};
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge, .num_sge = 1 };
		if (ibv_post_recv(c->qp, &wr, &bad)) {
			fprintf(stderr, "ud_burst: post_recv %d: %s\n", i, strerror(errno));
			return 2;
		}
	}
	printf("qpn %u\n", c->qp->qp_num);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		quiet = now_ms() + 500;
		while (now_ms() < quiet) {
			n = ibv_poll_cq(c->cq, 64, wc);
			if (n < 0)
				return 2;
			if (n)
				quiet = now_ms() + 500;
			for (i = 0; i < n; i++) {
				if (good(c, &wc[i], seen, count))
					received++;
				else if (wrong++ < 5)
					printf("# completion: status %d byte_len %u\n",
					       wc[i].status, wc[i].byte_len);
			}
		}
		printf("received %d\nbad %d\n", received, wrong);
		fflush(stdout);
	}
	return 0;
}

/* Sends message SEQ; 0 or -1. */
static int post_one(struct ctx *c, struct ibv_ah *ah, __u32 qpn, __u32 seq)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	char *slot = c->buf + (size_t)(seq % SQ_DEPTH) * SIZE;
	__u32 be = htonl(seq);

	memcpy(slot, &be, 4);
	memset(slot + 4, (int)(seq & 0xff), SIZE - 4);
	sge = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = SIZE, .lkey = c->mr->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = seq,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = QKEY },
	};
	return ibv_post_send(c->qp, &wr, &bad) ? -1 : 0;
}

static int send_side(struct ctx *c, int count, int sgid, const char *dgid, __u32 qpn)
{
	struct ibv_ah_attr ah_attr = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .sgid_index = sgid, .hop_limit = 64 },
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc[64];
	struct ibv_ah *ah;
	int posted = 0, completed = 0, success = 0, first_error = -1, i, n = 0, after = -1;
	__u64 end;

	if (inet_pton(AF_INET6, dgid, ah_attr.grh.dgid.raw) != 1) {
		fprintf(stderr, "ud_burst: bad GID %s\n", dgid);
		return 2;
	}
	ah = ibv_create_ah(c->pd, &ah_attr);
	if (!ah) {
		fprintf(stderr, "ud_burst: create_ah: %s\n", strerror(errno));
		return 2;
	}
	end = now_ms() + 60000;
	while (completed < count && now_ms() < end) {
		while (posted < count && posted - completed < SQ_DEPTH) {
			if (post_one(c, ah, qpn, posted)) {
				perror("ud_burst: post_send");
				return 2;
			}
			posted++;
		}
		n = ibv_poll_cq(c->cq, 64, wc);
		if (n < 0)
			return 2;
		for (i = 0; i < n; i++, completed++) {
			if (wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == (__u64)completed) {
				success++;
			} else if (first_error < 0) {
				first_error = wc[i].status;
				printf("# completion %d: wr_id %llu status %d\n", completed,
				       (unsigned long long)wc[i].wr_id, wc[i].status);
			}
		}
	}
	printf("completed %d\nsuccess %d\nfirst_error %d\n", completed, success, first_error);
	if (ibv_query_qp(c->qp, &attr, IBV_QP_STATE, &init))
		attr.qp_state = -1;
	printf("state %d\n", attr.qp_state);
	if (!post_one(c, ah, qpn, count)) {
		end = now_ms() + 10000;
		while (now_ms() < end && (n = ibv_poll_cq(c->cq, 1, wc)) == 0)
			;
		if (n == 1)
			after = wc[0].status;
	}
	printf("after %d\n", after);
	ibv_destroy_ah(ah);
	return completed == count && success == count && attr.qp_state == IBV_QPS_RTS &&
	       after == IBV_WC_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	int count, sgid, rc;

	if (argc < 5 || ((strcmp(argv[3], "recv") || argc != 5) &&
			 (strcmp(argv[3], "send") || argc != 7))) {
		fprintf(stderr, "usage: ud_burst DEV SGID_INDEX recv COUNT\n"
				"       ud_burst DEV SGID_INDEX send COUNT DGID QPN\n");
		return 2;
	}
	sgid = atoi(argv[2]);
	count = atoi(argv[4]);
	if (count < 1 || count > MAX_COUNT) {
		fprintf(stderr, "ud_burst: COUNT from 1 to %d\n", MAX_COUNT);
		return 2;
	}
	if (!strcmp(argv[3], "recv")) {
		if (setup(&c, argv[1], count, 1, count, (size_t)count * (GRH + SIZE))) {
			fprintf(stderr, "ud_burst: set-up: %s\n", strerror(errno));
			return 2;
		}
		rc = recv_side(&c, count);
	} else {
		if (setup(&c, argv[1], SQ_DEPTH * 2, SQ_DEPTH, 1, (size_t)SQ_DEPTH * SIZE)) {
			fprintf(stderr, "ud_burst: set-up: %s\n", strerror(errno));
			return 2;
		}
		rc = send_side(&c, count, sgid, argv[5], (__u32)strtoul(argv[6], NULL, 0));
	}
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(c.cq);
	ibv_dereg_mr(c.mr);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.ctx);
	return rc;
}
