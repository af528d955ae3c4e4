// SPDX-License-Identifier: GPL-2.0
/*
 * ah_probe: create one address handle through rdma-core, as an application
 * does, and report exactly what happened.  A helper of the differential
 * tests (rverbs_ah_diff.sh), which run it with the takeover off (C core)
 * and on (Rust core) and compare.
 *
 *   ah_probe -d DEV [-p PORT] -s SGID_INDEX -g DGID [-n] [-l HOP_LIMIT]
 *            [-f FLOW_LABEL] [-T TRAFFIC_CLASS] [-V SL] [-x] [-H] [-P FILE]
 *
 *   -n   no GRH (is_global = 0)
 *   -f, -T, -V  the GRH's flow label and traffic class, and the service
 *        level (numbers as strtoul reads them: 0x28 or 40); 0 by default
 *   -x   after creating the AH, send one UD datagram through it (to QPN
 *        0xabcde), so the destination MAC and hop limit can be seen on the
 *        wire
 *   -H   hold: after creating, print "created" and wait for a line on
 *        stdin before destroying (to switch the core in between)
 *   -P FILE  after creating the AH, print the lines of FILE that do not
 *        start with '#' as "dump: LINE" (the AH dump of rverbs' software
 *        device in debugfs, which then holds just this AH)
 *   -X   instead of an AH, open an XRC domain on an unnamed file (O_CREAT);
 *        with -H, hold it as the AH is held
 *   -N COUNT  benchmark: create and destroy the AH COUNT times, print the
 *        mean time of one create+destroy pair (bench_ns_per_pair), and when
 *        the loop started and ended (bench_start_ns, bench_end_ns:
 *        CLOCK_MONOTONIC)
 *   -B   after opening the device, print "ready" and wait for SIGUSR2
 *        before the loop of -N or the one create (a start line for
 *        several processes)
 *   -F   with -N: every create is expected to fail; print "failed: N" and
 *        "errno: -E" (exit status 1 if one succeeded or the errno changed)
 *   -S MS  a handled signal (SIGALRM, handler without SA_RESTART) arrives
 *        MS milliseconds into ibv_create_ah; prints how many arrived
 *   -W   print "creating" (flushed) right before ibv_create_ah, so that a
 *        test can act while the create waits for a neighbour
 *   -D DGID2  others during the wait: before the create, an AH to DGID2
 *        (a resolved destination) is made ("side: 0"); while the create
 *        runs, a thread waits for SIGUSR1, then destroys that AH, creates
 *        and destroys another to DGID2 and tries to deallocate the PD,
 *        which the waiting create uses (EBUSY), and prints
 *        "during: destroy=E create=E dealloc_pd=E"; after the create and
 *        its destroy, "dealloc_pd: E"
 *   -L   load: create AHs and destroy them, up to 8 live at a time (the
 *        oldest goes when a new one is made), until SIGUSR1; then destroy
 *        the rest and print "pairs: N" and "errors: N" (the first error as
 *        "error: create|destroy -<errno>") and "crossings: ...": how many
 *        AHs were made and destroyed under the same core, made under C and
 *        destroyed under Rust or the other way round, under a switch
 *        (unknown), and how many creates a switch began or ended in
 *        (load_cores.h); exit status 1 on any error
 *   -C FILE  with -L: the number of pairs so far, in FILE, as it grows
 *   -E ERRNO  with -L: every create must fail with ERRNO (a number), and
 *        those failures are the pairs
 *
 * Output, one "key: value" per line:
 *   create: 0 | -<errno>       result of ibv_create_ah
 *   elapsed_ms: N              time ibv_create_ah took
 *   sent: 0 | -<errno>         (-x) result of the send's completion
 *   dump: LINE                 (-P) a line of FILE
 *   signals: N                 (-S) handled signals received
 *   destroy: 0 | -<errno>      result of ibv_destroy_ah
 *   xrcd: 0 | -<errno>         (-X) result of ibv_open_xrcd
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "load_cores.h"
#include "probe_util.h"

#define PROBE_QKEY 0x11111111
#define PROBE_REMOTE_QPN 0xabcde

/* Counted with lock-free atomics: async-signal-safe. */
static int signals;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_fetch_add(&signals, 1, __ATOMIC_RELAXED);
}

/* A SIGALRM, handled without SA_RESTART, @ms milliseconds from now. */
static int arm_signal(long ms)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
	};

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGALRM, &sa, NULL) ?: setitimer(ITIMER_REAL, &it, NULL);
}

static int send_one(struct ibv_context *ctx, struct ibv_pd *pd,
		    struct ibv_ah *ah, int port)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr attr = {};
	char payload[32] = "rverbs ah_probe";
	struct ibv_sge sge = { .addr = (uintptr_t)payload,
			       .length = sizeof(payload) };
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		return -errno;
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		ret = -errno;
		goto out_cq;
	}
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = port;
	attr.qkey = PROBE_QKEY;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		goto out_qp;
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		goto out_qp;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ret)
		goto out_qp;

	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = PROBE_REMOTE_QPN;
	wr.wr.ud.remote_qkey = PROBE_QKEY;
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		goto out_qp;
	ret = poll_one(cq, 5000, &wc);
	if (ret == 1)
		ret = wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
out_qp:
	if (ret > 0)
		ret = -ret;
	ibv_destroy_qp(qp);
out_cq:
	ibv_destroy_cq(cq);
	return ret;
}

static int run_failing(struct ibv_context *ctx, struct ibv_pd *pd,
		       struct ibv_ah_attr *attr, long count)
{
	struct ibv_ah *ah;
	long i, failed = 0;
	int err = 0, bad = 0;

	for (i = 0; i < count; i++) {
		ah = ibv_create_ah(pd, attr);
		if (ah) {
			ibv_destroy_ah(ah);
			bad = 1;
			continue;
		}
		if (err && err != -errno)
			bad = 1;
		err = -errno;
		failed++;
	}
	printf("failed: %ld\nerrno: %d\n", failed, err);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return bad;
}

/* -B: "ready", then wait for SIGUSR2 (blocked before, so none is lost). */
static int wait_start(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	printf("ready\n");
	fflush(stdout);
	return sigwait(&set, &sig) ? -1 : 0;
}

static int run_bench(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_ah_attr *attr, long count, int barrier)
{
	struct ibv_ah *ah;
	long i, start, end;

	if (barrier && wait_start()) {
		printf("barrier: %d\n", -errno);
		return 1;
	}
	start = now_ns();
	for (i = 0; i < count; i++) {
		ah = ibv_create_ah(pd, attr);
		if (!ah) {
			printf("create: %d\n", -errno);
			return 1;
		}
		if (ibv_destroy_ah(ah)) {
			printf("destroy: %d\n", -errno);
			return 1;
		}
	}
	end = now_ns();
	printf("bench_ns_per_pair: %ld\n", (end - start) / count);
	/* CLOCK_MONOTONIC: several processes' runs can be lined up. */
	printf("bench_start_ns: %ld\nbench_end_ns: %ld\n", start, end);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

/* Set by the signal handler: lock-free atomics are async-signal-safe. */
static int stop_load;

static void on_stop(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_load, 1, __ATOMIC_RELAXED);
}

#define LOAD_LIVE 8

/*
 * -L: create AHs and destroy them, up to LOAD_LIVE live (the oldest goes
 * when a new one is made), until SIGUSR1, each create and destroy with the
 * core that served it (load_cores.h).  With EXPECT (-E), every create must
 * fail with -EXPECT instead (a destination that never answers): "pairs"
 * counts those.
 */
static int run_load(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_ah_attr *attr,
		    const char *count_file, int expect)
{
	struct ibv_ah *live[LOAD_LIVE] = {};
	char made[LOAD_LIVE] = {};
	long pairs = 0, errors = 0;
	unsigned int i, next = 0;
	struct load_cores x;
	char before, after;
	long t0, t1;
	int err;

	if (load_cores_open(&x, count_file)) {
		printf("error: %s: %d\n", count_file, -errno);
		return 1;
	}
	printf("started\n");
	fflush(stdout);
	while (!__atomic_load_n(&stop_load, __ATOMIC_RELAXED)) {
		if (live[next]) {
			before = load_core_now();
			if (ibv_destroy_ah(live[next])) {
				if (!errors++)
					printf("error: destroy %d\n", -errno);
			} else {
				pairs++;
				after = load_core_now();
				load_cores_count(&x, made[next], load_core_of(before, after));
			}
			live[next] = NULL;
		}
		before = load_core_now();
		t0 = now_ms();
		live[next] = ibv_create_ah(pd, attr);
		/* Kept: reading the core sets errno (no livepatch: ENOENT). */
		err = errno;
		t1 = now_ms();
		after = load_core_now();
		errno = err;
		made[next] = load_core_of(before, after);
		x.spanned += before != after;
		if (expect) {
			/* Each of the first errors, with its cores before and after. */
			if (live[next]) {
				if (errors++ < 8)
					printf("error: create succeeded (%c %c)\n", before, after);
			} else if (errno != expect) {
				if (errors++ < 8)
					printf("error: create %d (%c %c, %ld ms)\n", -errno,
					       before, after, t1 - t0);
			} else {
				pairs++;
			}
		} else if (!live[next] && !errors++) {
			printf("error: create %d\n", -errno);
		}
		load_cores_progress(&x, pairs);
		next = (next + 1) % LOAD_LIVE;
	}
	for (i = 0; i < LOAD_LIVE; i++) {
		if (!live[i])
			continue;
		if (ibv_destroy_ah(live[i])) {
			if (!errors++)
				printf("error: destroy %d\n", -errno);
		} else {
			pairs++;
		}
	}
	printf("pairs: %ld\nerrors: %ld\n", pairs, errors);
	load_cores_print(&x);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return errors ? 1 : 0;
}

/* -D: what a second thread does while the create waits. */
struct during {
	struct ibv_pd *pd;
	struct ibv_ah_attr attr;	/* to DGID2 */
	struct ibv_ah *side;
	pthread_t thread;
	int dealloc;		/* the thread's ibv_dealloc_pd: 0 if it went */
};

static int err_of(int ret)
{
	return ret > 0 ? -ret : ret;
}

static void *during_wait(void *arg)
{
	struct during *d = arg;
	int destroy, create = 0, dealloc, sig;
	struct ibv_ah *ah;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigwait(&set, &sig))
		return NULL;
	destroy = err_of(ibv_destroy_ah(d->side));
	ah = ibv_create_ah(d->pd, &d->attr);
	if (!ah)
		create = -errno;
	else
		create = err_of(ibv_destroy_ah(ah));
	dealloc = err_of(ibv_dealloc_pd(d->pd));
	d->dealloc = dealloc;
	printf("during: destroy=%d create=%d dealloc_pd=%d\n", destroy, create, dealloc);
	fflush(stdout);
	return NULL;
}

/*
 * -D: the side AH, and the thread; SIGUSR1 (for the thread) and SIGUSR2
 * (-B, for the main thread) blocked in both, each taken by sigwait.
 */
static int during_start(struct during *d, struct ibv_pd *pd, const struct ibv_ah_attr *attr,
			const char *dgid2)
{
	struct in6_addr gid;
	sigset_t set;

	if (inet_pton(AF_INET6, dgid2, &gid) != 1)
		return -EINVAL;
	d->pd = pd;
	d->dealloc = 1;
	d->attr = *attr;
	memcpy(d->attr.grh.dgid.raw, &gid, 16);
	d->side = ibv_create_ah(pd, &d->attr);
	printf("side: %d\n", d->side ? 0 : -errno);
	if (!d->side)
		return -1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	return -pthread_create(&d->thread, NULL, during_wait, d);
}

static int open_xrcd(const char *dev, int hold)
{
	char line[16];
	struct ibv_context *ctx = open_device(dev);
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd;

	if (!ctx)
		return 2;
	/* An unnamed file: its inode is what the XRCD is shared through. */
	attr.fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	if (attr.fd < 0)
		return 2;
	xrcd = ibv_open_xrcd(ctx, &attr);
	printf("xrcd: %d\n", xrcd ? 0 : -errno);
	if (xrcd && hold) {
		printf("created\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	if (xrcd)
		printf("close: %d\n", ibv_close_xrcd(xrcd) ? -errno : 0);
	close(attr.fd);
	ibv_close_device(ctx);
	return 0;
}

/* Print the lines of @path that are not comments as "dump: LINE". */
static void print_dump(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("dump: -%d\n", errno);
		return;
	}
	while (fgets(buf, sizeof(buf), f)) {
		if (buf[0] != '#')
			printf("dump: %s", buf);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct ibv_ah_attr attr = { .port_num = 1, .is_global = 1 };
	const char *dev = NULL, *dgid = NULL, *dump = NULL, *dgid2 = NULL;
	struct during during;
	int opt, send = 0, hold = 0, xrcd = 0, hop_limit = 64, sgid_index = 0, load = 0;
	int failing = 0, barrier = 0, announce = 0, expect = 0;
	const char *count_file = NULL;
	long bench = 0, signal_ms = 0;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct in6_addr gid;
	char line[16];
	long start;

	while ((opt = getopt(argc, argv, "d:p:s:g:nl:f:T:V:xHXN:P:S:LFBWD:C:E:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			attr.port_num = atoi(optarg);
			break;
		case 's':
			sgid_index = atoi(optarg);
			break;
		case 'g':
			dgid = optarg;
			break;
		case 'n':
			attr.is_global = 0;
			break;
		case 'l':
			hop_limit = atoi(optarg);
			break;
		case 'f':
			attr.grh.flow_label = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			attr.grh.traffic_class = strtoul(optarg, NULL, 0);
			break;
		case 'V':
			attr.sl = strtoul(optarg, NULL, 0);
			break;
		case 'x':
			send = 1;
			break;
		case 'H':
			hold = 1;
			break;
		case 'X':
			xrcd = 1;
			break;
		case 'N':
			bench = atol(optarg);
			break;
		case 'P':
			dump = optarg;
			break;
		case 'S':
			signal_ms = atol(optarg);
			break;
		case 'L':
			load = 1;
			break;
		case 'F':
			failing = 1;
			break;
		case 'B':
			barrier = 1;
			break;
		case 'W':
			announce = 1;
			break;
		case 'D':
			dgid2 = optarg;
			break;
		case 'C':
			count_file = optarg;
			break;
		case 'E':
			expect = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (dev && xrcd)
		return open_xrcd(dev, hold);
	if (!dev || !dgid || inet_pton(AF_INET6, dgid, &gid) != 1) {
		fprintf(stderr,
			"usage: ah_probe -d DEV -s SGID -g DGID [-p PORT] [-n] [-l HOP] [-f FL] [-T TC] [-V SL] [-x] [-H] [-P FILE] [-S MS] [-W] [-B] [-D DGID2] [-L [-C FILE] [-E ERRNO]] [-N COUNT [-F]] | -d DEV -X\n");
		return 2;
	}
	ctx = open_device(dev);
	if (!ctx) {
		fprintf(stderr, "ah_probe: cannot open %s\n", dev);
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "ah_probe: ibv_alloc_pd: %s\n", strerror(errno));
		return 2;
	}
	memcpy(attr.grh.dgid.raw, &gid, 16);
	attr.grh.sgid_index = sgid_index;
	attr.grh.hop_limit = hop_limit;

	if (bench > 0 && failing)
		return run_failing(ctx, pd, &attr, bench);
	if (bench > 0)
		return run_bench(ctx, pd, &attr, bench, barrier);
	if (load) {
		struct sigaction sa = { .sa_handler = on_stop };

		sigaction(SIGUSR1, &sa, NULL);
		return run_load(ctx, pd, &attr, count_file, expect);
	}

	if (signal_ms > 0 && arm_signal(signal_ms)) {
		fprintf(stderr, "ah_probe: cannot arm a signal: %s\n", strerror(errno));
		return 2;
	}
	if (dgid2 && during_start(&during, pd, &attr, dgid2)) {
		fprintf(stderr, "ah_probe: -D %s: cannot start\n", dgid2);
		return 2;
	}
	if (barrier && wait_start()) {
		printf("barrier: %d\n", -errno);
		return 1;
	}
	if (announce) {
		printf("creating\n");
		fflush(stdout);
	}
	start = now_ms();
	ah = ibv_create_ah(pd, &attr);
	printf("create: %d\n", ah ? 0 : -errno);
	printf("elapsed_ms: %ld\n", now_ms() - start);
	if (signal_ms > 0)
		printf("signals: %d\n", __atomic_load_n(&signals, __ATOMIC_RELAXED));
	fflush(stdout);
	if (ah) {
		if (send)
			printf("sent: %d\n", send_one(ctx, pd, ah, attr.port_num));
		if (dump)
			print_dump(dump);
		if (hold) {
			printf("created\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				line[0] = '\0';
		}
		printf("destroy: %d\n", ibv_destroy_ah(ah) ? -errno : 0);
	}
	if (dgid2) {
		/* The thread's work was done during the create, or is now. */
		pthread_kill(during.thread, SIGUSR1);
		pthread_join(during.thread, NULL);
		if (during.dealloc)
			printf("dealloc_pd: %d\n", err_of(ibv_dealloc_pd(pd)));
	} else {
		ibv_dealloc_pd(pd);
	}
	ibv_close_device(ctx);
	return 0;
}
