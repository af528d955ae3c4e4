// SPDX-License-Identifier: GPL-2.0
/*
 * uverbs_hold: hold a PD and an XRC domain on an RDMA device through the
 * raw uverbs interface, until told to let them go.  A helper of
 * rv0_link.sh, which takes the device away while they are held.
 *
 * rdma-core's soft-RoCE provider has no XRC: ibv_open_xrcd fails with
 * EOPNOTSUPP in userspace, before the kernel is asked.  So, as in
 * rv0_uverbs.c, no libibverbs: only write() of the legacy command ABI of
 * <rdma/ib_user_verbs.h> on /dev/infiniband/uverbsN.
 *
 *   uverbs_hold [-n | -L [-C FILE]] [-c [-q]] [-m] DEV
 *
 * GET_CONTEXT, ALLOC_PD and OPEN_XRCD (no inode), then print "created" and
 * wait for a line (or EOF) on stdin, then CLOSE_XRCD and DEALLOC_PD.  With
 * -n, no XRC domain (for soft-RoCE, which has none).  With -c, also a CQ of
 * 255 entries whose ring (soft-RoCE's layout) is mapped; after the line on
 * stdin the ring's header is read ("ring: log2 L mask M", readable even
 * after the device went away: the mapping keeps its pages), then the CQ is
 * destroyed and the ring unmapped.  With -q, also a UD QP on that CQ (64
 * work requests each way) whose two rings are mapped, read and destroyed
 * the same way, before the CQ.  With -m, also a memory region of 4 pages
 * (local write), deregistered after the line.  With -L (load), after
 * "started", open XRC domains and close them, up to 8 open at a time, until
 * SIGUSR1; then close the rest and print "pairs: N" and "errors: N" (the
 * first as "error: open|close -<errno>") and, as ah_probe -L does, the
 * domains made and closed under each core ("crossings: ...",
 * load_cores.h), exit status 1 on any error; with -C FILE, the number of
 * pairs so far in FILE.
 *
 * Output, one "key: value" per line after "created":
 *   vmpin: K                   (-m: the pinned memory, kB, while held)
 *   vmpin after: K             (-m: the same after the line, before DEREG_MR)
 *   dereg_mr: 0 | -<errno>     (-m)
 *   qp rings: sq log2 L mask M rq log2 L mask M  (-q)
 *   destroy_qp: 0 | -<errno>   (-q)
 *   ring: log2 L mask M        (-c)
 *   destroy_cq: 0 | -<errno>   (-c)
 *   close_xrcd: 0 | -<errno>
 *   dealloc_pd: 0 | -<errno>
 * Exit status 0, or 2 with a message on stderr when the setup fails.
 */

#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include <rdma/rdma_user_rxe.h>

#include "load_cores.h"
#include "uverbs_raw.h"

#define LOAD_LIVE 8

/* Set by the signal handler: lock-free atomics are async-signal-safe. */
static int stop_load;

static void on_stop(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_load, 1, __ATOMIC_RELAXED);
}

static int xrcd_load(int fd, const char *count_file)
{
	struct sigaction sa = { .sa_handler = on_stop };
	__u32 live[LOAD_LIVE];
	int used[LOAD_LIVE] = {};
	char made[LOAD_LIVE] = {};
	long pairs = 0, errors = 0;
	unsigned int i, next = 0;
	struct load_cores x;
	char before, after;
	int ret;

	if (load_cores_open(&x, count_file)) {
		printf("error: %s: %d\n", count_file, -errno);
		return 1;
	}
	sigaction(SIGUSR1, &sa, NULL);
	printf("started\n");
	fflush(stdout);
	while (!__atomic_load_n(&stop_load, __ATOMIC_RELAXED)) {
		if (used[next]) {
			before = load_core_now();
			ret = close_xrcd(fd, live[next]);
			after = load_core_now();
			used[next] = 0;
			if (ret && !errors++)
				printf("error: close %d\n", ret);
			if (!ret) {
				pairs++;
				load_cores_count(&x, made[next], load_core_of(before, after));
			}
		}
		before = load_core_now();
		ret = open_xrcd(fd, -1, 0, &live[next]);
		after = load_core_now();
		made[next] = load_core_of(before, after);
		x.spanned += before != after;
		if (ret && !errors++)
			printf("error: open %d\n", ret);
		used[next] = !ret;
		load_cores_progress(&x, pairs);
		next = (next + 1) % LOAD_LIVE;
	}
	for (i = 0; i < LOAD_LIVE; i++) {
		if (!used[i])
			continue;
		ret = close_xrcd(fd, live[i]);
		if (ret && !errors++)
			printf("error: close %d\n", ret);
		pairs += !ret;
	}
	printf("pairs: %ld\nerrors: %ld\n", pairs, errors);
	load_cores_print(&x);
	return errors ? 1 : 0;
}

/* CREATE_CQ with room for soft-RoCE's response: the ring's mminfo. */
struct qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct rxe_create_qp_resp rxe;
};

/* Map the ring of mi, or print why not and return MAP_FAILED. */
static struct rxe_queue_buf *map_ring(int fd, const char *dev, const char *what,
				      const struct mminfo *mi)
{
	struct rxe_queue_buf *q = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED,
				       fd, mi->offset);

	if (q == MAP_FAILED)
		fprintf(stderr, "uverbs_hold: %s: mmap of the %s ring: %s\n", dev, what,
			strerror(errno));
	return q;
}

struct cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct rxe_create_cq_resp rxe;
};

int main(int argc, char **argv)
{
	struct ib_uverbs_get_context_resp ctx = {};
	static const struct qp_req ud = { .send_wr = 64, .recv_wr = 64, .send_sge = 1,
					  .recv_sge = 1 };
	struct rxe_queue_buf *ring = MAP_FAILED, *sq = MAP_FAILED, *rq = MAP_FAILED;
	struct cq_resp cq = {};
	struct qp_resp qp = {};
	const char *dev;
	__u32 pd, xrcd = 0;
	char line[16];
	const char *count_file = NULL;
	int fd, ret, opt, with_xrcd = 1, load = 0, with_cq = 0, with_qp = 0, with_mr = 0;
	struct ib_uverbs_reg_mr_resp mr = {};
	void *mem = MAP_FAILED;

	while ((opt = getopt(argc, argv, "nLC:cqm")) != -1) {
		if (opt == 'n')
			with_xrcd = 0;
		else if (opt == 'L')
			load = 1;
		else if (opt == 'C')
			count_file = optarg;
		else if (opt == 'c')
			with_cq = 1;
		else if (opt == 'q')
			with_qp = 1;
		else if (opt == 'm')
			with_mr = 1;
		else
			argc = 0;
	}
	if (argc != optind + 1 || (with_qp && !with_cq)) {
		fprintf(stderr, "usage: uverbs_hold [-n | -L [-C FILE]] [-c [-q]] [-m] DEV\n");
		return 2;
	}
	dev = argv[optind];

	fd = uverbs_open(dev);
	if (fd < 0) {
		fprintf(stderr, "uverbs_hold: %s: open: %s\n", dev, strerror(-fd));
		return 2;
	}
	ret = get_context(fd, &ctx);
	if (ret) {
		fprintf(stderr, "uverbs_hold: %s: GET_CONTEXT: %s\n", dev, strerror(-ret));
		return 2;
	}
	if (load) {
		ret = xrcd_load(fd, count_file);
		close(fd);
		close(ctx.async_fd);
		return ret;
	}
	ret = alloc_pd(fd, &pd);
	if (ret) {
		fprintf(stderr, "uverbs_hold: %s: ALLOC_PD: %s\n", dev, strerror(-ret));
		return 2;
	}
	ret = with_xrcd ? open_xrcd(fd, -1, 0, &xrcd) : 0;
	if (ret) {
		fprintf(stderr, "uverbs_hold: %s: OPEN_XRCD: %s\n", dev, strerror(-ret));
		return 2;
	}

	if (with_cq) {
		ret = create_cq_raw(fd, 255, 0, &cq, sizeof(cq));
		if (ret) {
			fprintf(stderr, "uverbs_hold: %s: CREATE_CQ: %s\n", dev, strerror(-ret));
			return 2;
		}
		ring = map_ring(fd, dev, "CQ", &cq.rxe.mi);
		if (ring == MAP_FAILED)
			return 2;
	}
	if (with_qp) {
		ret = create_qp_raw(fd, pd, cq.core.cq_handle, &ud, 0, &qp, sizeof(qp));
		if (ret) {
			fprintf(stderr, "uverbs_hold: %s: CREATE_QP: %s\n", dev, strerror(-ret));
			return 2;
		}
		sq = map_ring(fd, dev, "send", &qp.rxe.sq_mi);
		rq = map_ring(fd, dev, "receive", &qp.rxe.rq_mi);
		if (sq == MAP_FAILED || rq == MAP_FAILED)
			return 2;
	}

	if (with_mr) {
		mem = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ret = mem == MAP_FAILED ? -errno :
		      reg_mr(fd, pd, mem, 4 * 4096, (uintptr_t)mem,
			     IB_UVERBS_ACCESS_LOCAL_WRITE, &mr);
		if (ret) {
			fprintf(stderr, "uverbs_hold: %s: REG_MR: %s\n", dev, strerror(-ret));
			return 2;
		}
		printf("vmpin: %ld\n", vm_pin_kb());
	}

	printf("created\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';

	if (with_mr) {
		printf("vmpin after: %ld\n", vm_pin_kb());
		printf("dereg_mr: %d\n", dereg_mr(fd, mr.mr_handle));
		munmap(mem, 4 * 4096);
	}

	if (with_qp) {
		printf("qp rings: sq log2 %u mask %u rq log2 %u mask %u\n", sq->log2_elem_size,
		       sq->index_mask, rq->log2_elem_size, rq->index_mask);
		printf("destroy_qp: %d\n", destroy_qp(fd, qp.core.qp_handle));
		munmap(sq, qp.rxe.sq_mi.size);
		munmap(rq, qp.rxe.rq_mi.size);
	}
	if (with_cq) {
		printf("ring: log2 %u mask %u\n", ring->log2_elem_size, ring->index_mask);
		printf("destroy_cq: %d\n", destroy_cq(fd, cq.core.cq_handle));
		munmap(ring, cq.rxe.mi.size);
	}
	if (with_xrcd)
		printf("close_xrcd: %d\n", close_xrcd(fd, xrcd));
	printf("dealloc_pd: %d\n", dealloc_pd(fd, pd));
	close(fd);
	close(ctx.async_fd);
	return 0;
}
