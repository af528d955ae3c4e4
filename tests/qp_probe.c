// SPDX-License-Identifier: GPL-2.0
/*
 * qp_probe: move one QP to RTR through rdma-core, as an application
 * connecting it does, and report exactly what happened.  A helper of the
 * differential test rverbs_qp_diff.sh, which runs it with the takeover off
 * (ib_core's ib_modify_qp_with_udata) and on (the Rust core) and compares:
 * the modify to RTR is where ib_core resolves a connected QP's destination.
 *
 *   qp_probe -d DEV [-p PORT] -s SGID_INDEX -g DGID [-t rc|uc|ud] [-n]
 *            [-l HOP_LIMIT] [-f FLOW_LABEL] [-T TRAFFIC_CLASS] [-V SL]
 *            [-r RQ_PSN] [-q SQ_PSN] [-A] [-x] [-H]
 *
 *   -t   the QP's type (rc by default); a UD QP is given the address vector
 *        at RTR too, which ib_core fills and the driver then refuses
 *   -n   no GRH (is_global = 0)
 *   -f, -T, -V  the GRH's flow label and traffic class, and the service
 *        level; 0 by default
 *   -r, -q  the PSNs given at RTR and RTS (may be over 24 bits: ib_core
 *        masks them and warns)
 *   -A   an alternate path (the same address) at RTR, with IBV_QP_ALT_PATH
 *   -x   after RTR, move to RTS and post one SEND (to QPN 0xabcde, which
 *        nobody has): its first packet shows the destination MAC, hop limit,
 *        VLAN and class on the wire; the QP gives up after one retry of 8 us
 *   -H   hold: after RTR, print "qpn: N" and "held" and wait for a line on
 *        stdin before destroying the QP
 *   -N COUNT  benchmark: COUNT times, create an RC QP, move it through
 *        INIT, RTR (with the path) and RTS, destroy it; print the median
 *        and 99th percentile of the modify to RTR and of the whole set-up
 *        (bench_rtr_ns_median, bench_rtr_ns_p99, bench_setup_ns_median,
 *        bench_setup_ns_p99); any failure ends it with "bench_error: -E"
 *   -R CMD  with -N: run CMD (system(3)) before each set-up, untimed (a
 *        neighbour flush, for the first connection to a fresh neighbour)
 *
 * Output, one "key: value" per line:
 *   init: 0 | -<errno>         the modify to INIT
 *   create: 0 | -<errno>       the modify to RTR (named as ah_probe's
 *                              result, which the test's parser reads)
 *   elapsed_ms: N              time the modify to RTR took
 *   query: port=P sgid_index=I hop=H fl=0xF tc=T sl=S dgid=G psn=R/S
 *                              what ibv_query_qp gives back after RTR (and
 *                              after RTS with -x: the SQ PSN)
 *   rts: 0 | -<errno>          (-x) the modify to RTS
 *   sent: N                    (-x) the send's completion status (12:
 *                              retries exceeded, as expected), or -<errno>
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "probe_util.h"

#define PROBE_REMOTE_QPN 0xabcde

/* A verb's error as -errno (ibv_modify_qp returns a positive errno). */
static int err_of(int ret)
{
	return ret > 0 ? -ret : ret;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The median and the 99th percentile (nearest rank) of @n values. */
static void print_stats(const char *name, long *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_long);
	printf("%s_median: %ld\n%s_p99: %ld\n", name, v[(n - 1) / 2], name,
	       v[(n * 99 + 99) / 100 - 1]);
}

/*
 * -N: @count RC connection set-ups (create, INIT, RTR with @av, RTS,
 * destroy), each after @pre when given.
 */
static int run_bench(struct ibv_pd *pd, struct ibv_cq *cq, const struct ibv_ah_attr *av,
		     long count, const char *pre)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long *rtr = calloc(count, sizeof(long)), *setup = calloc(count, sizeof(long));
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;
	long i, t0, t1, t2;
	int ret = 0;

	if (!rtr || !setup)
		return -ENOMEM;
	for (i = 0; i < count && !ret; i++) {
		if (pre && system(pre) != 0) {
			ret = -ECHILD;
			break;
		}
		t0 = now_ns();
		qp = ibv_create_qp(pd, &init);
		if (!qp) {
			ret = -errno;
			break;
		}
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = av->port_num;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		ret = err_of(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_1024;
		attr.dest_qp_num = PROBE_REMOTE_QPN;
		attr.max_dest_rd_atomic = 1;
		attr.min_rnr_timer = 12;
		attr.ah_attr = *av;
		t1 = now_ns();
		if (!ret)
			ret = err_of(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
						   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
						   IBV_QP_MIN_RNR_TIMER));
		t2 = now_ns();
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 1;
		if (!ret)
			ret = err_of(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
						   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
		if (ibv_destroy_qp(qp) && !ret)
			ret = -errno;
		setup[i] = now_ns() - t0;
		rtr[i] = t2 - t1;
	}
	if (ret) {
		printf("bench_error: %d\n", ret);
	} else {
		print_stats("bench_rtr_ns", rtr, count);
		print_stats("bench_setup_ns", setup, count);
	}
	free(rtr);
	free(setup);
	return ret;
}

static void print_query(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char dgid[INET6_ADDRSTRLEN];
	int ret;

	ret = ibv_query_qp(qp, &attr, IBV_QP_AV | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |
			   IBV_QP_STATE, &init);
	if (ret) {
		printf("query: -%d\n", ret);
		return;
	}
	inet_ntop(AF_INET6, attr.ah_attr.grh.dgid.raw, dgid, sizeof(dgid));
	printf("query: state=%d port=%u global=%u sgid_index=%u hop=%u fl=0x%x tc=%u sl=%u",
	       attr.qp_state, attr.ah_attr.port_num, attr.ah_attr.is_global,
	       attr.ah_attr.grh.sgid_index, attr.ah_attr.grh.hop_limit,
	       attr.ah_attr.grh.flow_label, attr.ah_attr.grh.traffic_class,
	       attr.ah_attr.sl);
	printf(" dgid=%s psn=%u/%u\n", dgid, attr.rq_psn, attr.sq_psn);
}

static void print_usage(void)
{
	fputs("usage: qp_probe -d DEV [-p PORT] -s SGID_INDEX -g DGID [-t rc|uc|ud] [-n]\n"
	      "         [-l HOP] [-f FL] [-T TC] [-V SL] [-r RQ_PSN] [-q SQ_PSN] [-A] [-x] [-H]\n"
	      "         [-N COUNT [-R CMD]]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr attr = {};
	const char *dev = NULL, *dgid = NULL;
	int port = 1, sgid_index = -1, global = 1, alt = 0, send = 0, hold = 0;
	const char *pre = NULL;
	long count = 0;
	unsigned long hop = 64, fl = 0, tc = 0, sl = 0;
	unsigned long rq_psn = 0, sq_psn = 0;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int mask, ret, opt;
	long start;

	while ((opt = getopt(argc, argv, "d:p:s:g:t:nl:f:T:V:r:q:AxHN:R:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			sgid_index = atoi(optarg);
			break;
		case 'g':
			dgid = optarg;
			break;
		case 't':
			if (!strcmp(optarg, "rc"))
				init.qp_type = IBV_QPT_RC;
			else if (!strcmp(optarg, "uc"))
				init.qp_type = IBV_QPT_UC;
			else if (!strcmp(optarg, "ud"))
				init.qp_type = IBV_QPT_UD;
			else
				print_usage();
			break;
		case 'n':
			global = 0;
			break;
		case 'l':
			hop = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			fl = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			tc = strtoul(optarg, NULL, 0);
			break;
		case 'V':
			sl = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rq_psn = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			sq_psn = strtoul(optarg, NULL, 0);
			break;
		case 'A':
			alt = 1;
			break;
		case 'x':
			send = 1;
			break;
		case 'H':
			hold = 1;
			break;
		case 'N':
			count = atol(optarg);
			break;
		case 'R':
			pre = optarg;
			break;
		default:
			print_usage();
		}
	}
	if (!dev || !dgid || sgid_index < 0)
		print_usage();

	ctx = open_device(dev);
	if (!ctx) {
		fprintf(stderr, "qp_probe: cannot open %s\n", dev);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "qp_probe: PD or CQ: %s\n", strerror(errno));
		return 1;
	}
	if (count > 0) {
		struct ibv_ah_attr av = {
			.is_global = global,
			.port_num = port,
			.sl = sl,
			.grh = { .sgid_index = sgid_index, .hop_limit = hop,
				 .flow_label = fl, .traffic_class = tc },
		};

		if (inet_pton(AF_INET6, dgid, av.grh.dgid.raw) != 1) {
			fprintf(stderr, "qp_probe: bad GID %s\n", dgid);
			return 1;
		}
		return run_bench(pd, cq, &av, count, pre) ? 1 : 0;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		fprintf(stderr, "qp_probe: create_qp: %s\n", strerror(errno));
		return 1;
	}

	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (init.qp_type == IBV_QPT_UD) {
		attr.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = err_of(ibv_modify_qp(qp, &attr, mask));
	printf("init: %d\n", ret);
	if (ret)
		goto out;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = PROBE_REMOTE_QPN;
	attr.rq_psn = rq_psn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = global;
	attr.ah_attr.port_num = port;
	attr.ah_attr.sl = sl;
	attr.ah_attr.grh.sgid_index = sgid_index;
	attr.ah_attr.grh.hop_limit = hop;
	attr.ah_attr.grh.flow_label = fl;
	attr.ah_attr.grh.traffic_class = tc;
	if (inet_pton(AF_INET6, dgid, attr.ah_attr.grh.dgid.raw) != 1) {
		fprintf(stderr, "qp_probe: bad GID %s\n", dgid);
		return 1;
	}
	mask = IBV_QP_STATE | IBV_QP_AV;
	if (init.qp_type != IBV_QPT_UD)
		mask |= IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (init.qp_type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (alt) {
		attr.alt_ah_attr = attr.ah_attr;
		attr.alt_port_num = port;
		attr.alt_timeout = 14;
		mask |= IBV_QP_ALT_PATH;
	}
	start = now_ms();
	ret = err_of(ibv_modify_qp(qp, &attr, mask));
	printf("create: %d\nelapsed_ms: %ld\n", ret, now_ms() - start);
	if (ret)
		goto out;
	if (hold) {
		char line[16];

		printf("qpn: %u\nheld\n", qp->qp_num);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = 0;
	}
	if (!send) {
		print_query(qp);
		goto out;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (init.qp_type == IBV_QPT_RC) {
		/* One retransmission timer of 8 us (4.096 us * 2^1), no retry. */
		attr.timeout = 1;
		attr.retry_cnt = 0;
		attr.rnr_retry = 0;
		attr.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = err_of(ibv_modify_qp(qp, &attr, mask));
	printf("rts: %d\n", ret);
	print_query(qp);
	if (!ret) {
		char payload[32] = "rverbs qp_probe";
		struct ibv_sge sge = { .addr = (uintptr_t)payload, .length = sizeof(payload) };
		struct ibv_send_wr wr = {
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			.sg_list = &sge,
			.num_sge = 1,
		}, *bad;
		struct ibv_wc wc;

		ret = err_of(ibv_post_send(qp, &wr, &bad));
		if (!ret) {
			ret = poll_one(cq, 5000, &wc);
			if (ret == 1)
				ret = wc.status;
			/* UC completes at once: give the packet time to leave. */
			if (init.qp_type == IBV_QPT_UC)
				usleep(100000);
		}
		printf("sent: %d\n", ret);
	}
out:
	ret = ibv_destroy_qp(qp);
	if (ret)
		printf("destroy: %d\n", err_of(ret));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
