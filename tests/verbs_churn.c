// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_churn: the cost of making and destroying verbs objects through
 * rdma-core, as registration caches (MPI, UCX) and connection churn pay
 * it: a 4 KiB memory region registered and deregistered, and a UD QP
 * created and destroyed, COUNT times each, one after the other.
 *
 *   verbs_churn DEV COUNT
 *
 * Prints the mean time of one pair of each:
 *
 *   mr_ns_per_pair N
 *   qp_ns_per_pair N
 *
 * and exits 0, or 1 when a call fails (with the call and its error), 2 on
 * a usage error.  For make bench (scripts/bench.sh), which runs it on
 * soft-RoCE and on rv0 in the same boot.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/types.h>

#include <infiniband/verbs.h>

#define BUF 4096

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *buf;
	long count, i;
	__u64 t0;

	count = argc == 3 ? atol(argv[2]) : 0;
	if (count <= 0) {
		fprintf(stderr, "usage: verbs_churn DEV COUNT\n");
		return 2;
	}
	if (posix_memalign(&buf, BUF, BUF))
		return 1;
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "verbs_churn: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "verbs_churn: PD or CQ: %s\n", strerror(errno));
		return 1;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	memset(buf, 1, BUF);

	t0 = now_ns();
	for (i = 0; i < count; i++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);

		if (!mr) {
			fprintf(stderr, "verbs_churn: ibv_reg_mr: %s\n", strerror(errno));
			return 1;
		}
		errno = ibv_dereg_mr(mr);
		if (errno) {
			fprintf(stderr, "verbs_churn: ibv_dereg_mr: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("mr_ns_per_pair %llu\n", (unsigned long long)((now_ns() - t0) / count));

	t0 = now_ns();
	for (i = 0; i < count; i++) {
		struct ibv_qp *qp = ibv_create_qp(pd, &init);

		if (!qp) {
			fprintf(stderr, "verbs_churn: ibv_create_qp: %s\n", strerror(errno));
			return 1;
		}
		errno = ibv_destroy_qp(qp);
		if (errno) {
			fprintf(stderr, "verbs_churn: ibv_destroy_qp: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("qp_ns_per_pair %llu\n", (unsigned long long)((now_ns() - t0) / count));

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
