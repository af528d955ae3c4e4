// SPDX-License-Identifier: GPL-2.0
/*
 * ud_flush: a UD QP in the error state with a full receive queue, flushed
 * when one packet arrives for it, through rdma-core.
 *
 *   ud_flush [-a] DEV COUNT
 *
 * Creates a UD QP on DEV (port 1, P_Key index 0, Q_Key 0x11111111) with a
 * receive queue and a CQ of COUNT entries, takes it to RTS and then to the
 * error state (nothing is posted yet: nothing is flushed), and posts COUNT
 * receives, their work request IDs 0 to COUNT - 1 in order.  A QP in error
 * flushes what userspace posted when its responder next runs: on a packet
 * for it (rxe_resp.c:rxe_receiver).  It checks that nothing completes
 * before that (200 ms), prints "qpn N" and waits for a line on its
 * standard input: the caller has sent one packet at the QP by then.
 * With -a, completions before the packet are allowed (and counted with
 * the rest): soft-RoCE flushes the empty queue at the move to error from
 * its responder's task, which may run only after the first receives are
 * posted, and take them (they are waited for 300 ms first).  Then
 * it polls the CQ (60 s at most) and checks every completion: each of the
 * COUNT receives once, in order, IBV_WC_WR_FLUSH_ERR, this QP's; and no
 * other completion within 200 ms after the last.  It prints
 *
 *   flushed N           the completions that came
 *   flush_ms N          from the line read to the last completion
 *
 * and exits 0 when all COUNT came as they must, 1 otherwise, 2 on a usage
 * or set-up error.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/types.h>

#include <infiniband/verbs.h>

#define QKEY 0x11111111
#define BUF 4096
#define CHAIN 256
#define MAX_COUNT 32767

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int modify(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = IBV_QP_STATE;

	switch (state) {
	case IBV_QPS_INIT:
		attr.pkey_index = 0;
		attr.port_num = 1;
		attr.qkey = QKEY;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		break;
	case IBV_QPS_RTS:
		attr.sq_psn = 0;
		mask |= IBV_QP_SQ_PSN;
		break;
	default:
		break;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

/* Polls up to MAX completions within MS milliseconds into WC. */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int max, int ms)
{
	__u64 end = now_ms() + ms;
	int got = 0, n;

	while (got < max) {
		n = ibv_poll_cq(cq, max - got, wc + got);
		if (n < 0)
			return -1;
		got += n;
		if (n == 0 && now_ms() >= end)
			break;
	}
	return got;
}

int main(int argc, char **argv)
{
	struct ibv_recv_wr wrs[CHAIN], *bad;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_sge sge;
	struct ibv_wc *wc;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	__u64 start, last = 0;
	char line[64];
	int count, i, j, n, got, errors = 0, extra, early_ok = 0;
	void *buf;

	if (argc > 1 && !strcmp(argv[1], "-a")) {
		early_ok = 1;
		argc--;
		argv++;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: ud_flush [-a] DEV COUNT\n");
		return 2;
	}
	count = atoi(argv[2]);
	if (count < 1 || count > MAX_COUNT) {
		fprintf(stderr, "ud_flush: COUNT from 1 to %d\n", MAX_COUNT);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "ud_flush: no device %s\n", argv[1]);
		return 2;
	}
	buf = calloc(1, BUF);
	wc = calloc(count + 1, sizeof(*wc));
	pd = ibv_alloc_pd(ctx);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	cq = ibv_create_cq(ctx, count, NULL, NULL, 0);
	if (!wc || !mr || !cq) {
		fprintf(stderr, "ud_flush: set-up: %s\n", strerror(errno));
		return 2;
	}
	{
		struct ibv_qp_init_attr init = {
			.send_cq = cq,
			.recv_cq = cq,
			.qp_type = IBV_QPT_UD,
			.cap = {
				.max_send_wr = 1,
				.max_recv_wr = count,
				.max_send_sge = 1,
				.max_recv_sge = 1,
			},
		};

		qp = ibv_create_qp(pd, &init);
	}
	if (!qp || modify(qp, IBV_QPS_INIT) || modify(qp, IBV_QPS_RTR) ||
	    modify(qp, IBV_QPS_RTS) || modify(qp, IBV_QPS_ERR)) {
		fprintf(stderr, "ud_flush: the QP to RTS, then to error: %s\n", strerror(errno));
		return 2;
	}
	/* Nothing posted: nothing to flush; soft-RoCE's task, given time. */
	if (poll_for(cq, wc, 1, 300)) {
		fprintf(stderr, "ud_flush: a completion with nothing posted\n");
		return 2;
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = BUF, .lkey = mr->lkey };
	for (i = 0; i < count; i += n) {
		n = count - i < CHAIN ? count - i : CHAIN;
		for (j = 0; j < n; j++)
			wrs[j] = (struct ibv_recv_wr){
				.wr_id = i + j,
				.next = j + 1 < n ? &wrs[j + 1] : NULL,
				.sg_list = &sge,
				.num_sge = 1,
			};
		if (ibv_post_recv(qp, wrs, &bad)) {
			fprintf(stderr, "ud_flush: post_recv %d: %s\n", i, strerror(errno));
			return 2;
		}
	}
	got = poll_for(cq, wc, count, 200);
	if (got < 0)
		return 2;
	if (got) {
		printf("# %d completion(s) before the packet\n", got);
		if (!early_ok)
			errors++;
	}
	printf("qpn %u\n", qp->qp_num);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	start = now_ms();
	while (got < count) {
		n = poll_for(cq, wc + got, count - got, 60000);
		if (n <= 0)
			break;
		got += n;
		last = now_ms();
	}
	for (i = 0; i < got; i++) {
		if (wc[i].wr_id == (__u64)i && wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		    wc[i].qp_num == qp->qp_num)
			continue;
		if (errors++ < 5)
			printf("# completion %d: wr_id %llu status %d qp_num %u\n", i,
			       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].qp_num);
	}
	extra = poll_for(cq, wc, 1, 200);
	if (extra) {
		printf("# a completion after the last: wr_id %llu status %d\n",
		       (unsigned long long)wc[0].wr_id, wc[0].status);
		errors++;
	}
	printf("flushed %d\n", got);
	printf("flush_ms %llu\n", (unsigned long long)(got ? last - start : 0));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(wc);
	free(buf);
	return got == count && !errors ? 0 : 1;
}
