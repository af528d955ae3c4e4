// SPDX-License-Identifier: GPL-2.0
/*
 * ud_many: many UD (or, with -r, RC) queue pairs exchanging traffic at
 * once, through rdma-core, to find lost, duplicated or misdelivered
 * completions.
 *
 *   ud_many -d DEV -g SGID_INDEX [-r] [-n QPS] [-t THREADS] [-w WINDOW]
 *           [-s SIZE] [-T SECONDS] [-p PORT] [SERVER_IP]
 *
 * The server (no SERVER_IP) listens on TCP PORT (18515 by default) for
 * the client, which connects to it; they exchange their GIDs and the
 * numbers of their QPS queue pairs (64 by default), and pair the i-th of
 * each (with -r: RC QPs, each connected to its pair, path MTU 1024).
 * THREADS threads (2) on each side each own a share of the pairs and a
 * completion queue of their own, so that posts and polls run on
 * both CPUs at once.  The client keeps WINDOW (4) messages of SIZE bytes
 * (64) in flight on each pair for SECONDS (5), each carrying its pair,
 * its sequence number and a pattern derived from both; the server checks
 * each message (its pair is the QP it arrived on, its source QP is that
 * pair's, its pattern), and sends it back; the client checks the echo
 * and sends the next.  Every receive queue has room for the window, so a
 * message may not be lost: UD would drop it silently only without a
 * posted receive, RC not at all.  A received message must have the
 * IBV_WC_GRH flag, and on UD its GRH and the pair's QP as source, on RC
 * source QP 0 and no GRH in the buffer (soft-RoCE's completions).
 * After the time, the client waits (up to 10 s) for its messages in
 * flight, then tells the server, and both print:
 *
 *   pairs N
 *   sent N            messages posted (client: new ones; server: echoes)
 *   received N        receive completions with IBV_WC_SUCCESS
 *   send_errors N     send completions with another status
 *   recv_errors N     receive completions with another status
 *   bad N             messages on the wrong QP, from the wrong source QP,
 *                     with a wrong length or pattern, or duplicated (a
 *                     sequence number seen twice, or out of the window)
 *   lost N            (client) messages sent whose echo never came
 *   rate_per_s N      (client) echoes per second over the SECONDS
 *   rtt_ns N          (client) the mean round trip that rate implies with
 *                     QPS x WINDOW messages in flight (Little's law)
 *
 * Exit status 0 when every count that must be 0 is, and something was
 * exchanged on every pair; 1 otherwise; 2 on a usage or set-up error.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include <infiniband/verbs.h>

#define QKEY 0x11111111
#define GRH 40
#define MAX_QPS 1024
#define MAX_THREADS 16
#define MAX_WINDOW 64

/* A message: which pair, which one, then the pattern up to SIZE bytes. */
struct msg {
	__u32 pair;
	__u32 seq;
};

struct pair {
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	__u32 remote_qpn;
	unsigned char *buf;	/* window receive slots, then window send slots */
	struct ibv_mr *mr;
	/* Client: the next sequence number, and which are in flight. */
	__u32 next_seq;
	__u32 in_flight[MAX_WINDOW];	/* seq + 1 per send slot, 0 free */
	/* Server: echoes waiting for a send slot (its completion not polled
	 * yet), oldest first.
	 */
	__u32 pending[2 * MAX_WINDOW];
	int npending;
	int exchanged;
};

struct thread {
	pthread_t tid;
	int first, count;	/* its pairs */
	struct ibv_cq *cq;
	__u64 sent, received, send_errors, recv_errors, bad;
	__u64 outstanding;	/* client: messages in flight (atomic) */
	int err;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct pair pairs[MAX_QPS];
static struct thread threads[MAX_THREADS];
static int nqps = 64, nthreads = 2, window = 4, size = 64, seconds = 5;
static int is_client, sgid_index, is_rc;
static union ibv_gid remote_gid;
static int stopping;	/* client: no new messages (atomic) */
static int done;	/* both: the exchange is over (atomic) */

static void die(const char *what)
{
	fprintf(stderr, "ud_many: %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned char pattern(__u32 pair, __u32 seq, int i)
{
	return (unsigned char)(pair * 31 + seq * 7 + i);
}

static unsigned char *recv_slot(struct pair *p, int slot)
{
	return p->buf + (size_t)slot * (GRH + size);
}

/* What a receive holds before the message: the GRH on UD, nothing on RC. */
static int grh_len(void)
{
	return is_rc ? 0 : GRH;
}

static unsigned char *send_slot(struct pair *p, int slot)
{
	return p->buf + (size_t)(2 * window + slot) * (GRH + size);
}

/* wr_id: the pair, whether a receive, the slot. */
static __u64 wr_id(int pair, int recv, int slot)
{
	return ((__u64)pair << 32) | ((__u64)recv << 16) | (__u64)slot;
}

static int post_recv(struct pair *p, int pi, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_slot(p, slot),
		.length = grh_len() + size,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id(pi, 1, slot), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->qp, &wr, &bad);
}

/* Send slots are 0..window-1, one per message in flight (the client's) or
 * per echo being sent (the server's, at most as many).
 */
static int post_send(struct pair *p, int pi, int slot, __u32 seq)
{
	unsigned char *b = send_slot(p, slot);
	struct msg m = { .pair = pi, .seq = seq };
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = size, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id(pi, 0, slot),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = p->ah, .remote_qpn = p->remote_qpn, .remote_qkey = QKEY },
	};
	struct ibv_send_wr *bad;
	int i;

	if (is_rc)
		memset(&wr.wr, 0, sizeof(wr.wr));
	memcpy(b, &m, sizeof(m));
	for (i = sizeof(m); i < size; i++)
		b[i] = pattern(pi, seq, i);
	return ibv_post_send(p->qp, &wr, &bad);
}

/* The message in a receive slot is right for pair pi: 1, or 0. */
static int check_msg(struct pair *p, int pi, struct ibv_wc *wc, int slot, __u32 *seq)
{
	unsigned char *b = recv_slot(p, slot) + grh_len();
	int has_grh = !!(wc->wc_flags & IBV_WC_GRH);
	struct msg m;
	int i;

	/* IBV_WC_GRH on both (soft-RoCE sets it on an RC receive too, where
	 * the buffer holds no GRH).
	 */
	if (wc->byte_len != (__u32)(grh_len() + size) || !has_grh ||
	    wc->src_qp != (is_rc ? 0 : p->remote_qpn))
		return 0;
	memcpy(&m, b, sizeof(m));
	if (m.pair != (__u32)pi)
		return 0;
	for (i = sizeof(m); i < size; i++)
		if (b[i] != pattern(pi, m.seq, i))
			return 0;
	*seq = m.seq;
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Client: a free send slot of p, or -1. */
static int free_slot(struct pair *p)
{
	int s;

	for (s = 0; s < window; s++)
		if (!p->in_flight[s])
			return s;
	return -1;
}

/* Client: the echo seq came back on pair pi; the next message goes from
 * its slot.  0, or -1 when posting failed.
 */
static int client_echo(struct thread *t, struct pair *p, int pi, __u32 seq)
{
	int s;

	for (s = 0; s < window; s++)
		if (p->in_flight[s] == seq + 1)
			break;
	if (s == window) {
		/* A duplicate, or the echo of nothing in flight. */
		t->bad++;
		return 0;
	}
	p->in_flight[s] = 0;
	__atomic_fetch_sub(&t->outstanding, 1, __ATOMIC_RELAXED);
	p->exchanged = 1;
	if (__atomic_load_n(&stopping, __ATOMIC_RELAXED))
		return 0;
	if (post_send(p, pi, s, p->next_seq))
		return -1;
	p->in_flight[s] = ++p->next_seq;
	__atomic_fetch_add(&t->outstanding, 1, __ATOMIC_RELAXED);
	t->sent++;
	return 0;
}

/* Server: echo seq on pair pi from a free slot, or once one is (the
 * client's window bounds them).  0, or -1 when posting failed.
 */
static int server_echo(struct thread *t, struct pair *p, int pi, __u32 seq)
{
	int s = free_slot(p);

	p->exchanged = 1;
	if (s < 0) {
		if (p->npending < 2 * window)
			p->pending[p->npending++] = seq;
		else
			t->bad++;
		return 0;
	}
	p->in_flight[s] = seq + 1;
	if (post_send(p, pi, s, seq))
		return -1;
	t->sent++;
	return 0;
}

/* Server: the echo from slot is sent; the slot takes the oldest echo
 * waiting, if one is.  0, or -1 when posting failed.
 */
static int server_sent(struct thread *t, struct pair *p, int pi, int slot)
{
	__u32 seq;

	p->in_flight[slot] = 0;
	if (!p->npending)
		return 0;
	seq = p->pending[0];
	memmove(p->pending, p->pending + 1, --p->npending * sizeof(p->pending[0]));
	p->in_flight[slot] = seq + 1;
	if (post_send(p, pi, slot, seq))
		return -1;
	t->sent++;
	return 0;
}

/* One completion of thread t: 0, or -1 when posting failed. */
static int completion(struct thread *t, struct ibv_wc *wc)
{
	int pi = (int)(wc->wr_id >> 32);
	int recv = (int)((wc->wr_id >> 16) & 1);
	int slot = (int)(wc->wr_id & 0xffff);
	struct pair *p;
	__u32 seq;

	if (pi < t->first || pi >= t->first + t->count) {
		t->bad++;
		return 0;
	}
	p = &pairs[pi];
	if (!recv) {
		if (wc->status != IBV_WC_SUCCESS)
			t->send_errors++;
		return is_client ? 0 : server_sent(t, p, pi, slot);
	}
	if (wc->status != IBV_WC_SUCCESS) {
		t->recv_errors++;
		return 0;
	}
	__atomic_fetch_add(&t->received, 1, __ATOMIC_RELAXED);
	if (!check_msg(p, pi, wc, slot, &seq))
		t->bad++;
	else if (is_client ? client_echo(t, p, pi, seq) : server_echo(t, p, pi, seq))
		return -1;
	return post_recv(p, pi, slot) ? -1 : 0;
}

static void *run(void *arg)
{
	struct thread *t = arg;
	struct ibv_wc wc[32];
	int i, n, k;

	/* The client starts its window on each pair. */
	if (is_client) {
		for (i = t->first; i < t->first + t->count; i++) {
			struct pair *p = &pairs[i];

			for (k = 0; k < window; k++) {
				if (post_send(p, i, k, p->next_seq)) {
					t->err = errno ? errno : EIO;
					return NULL;
				}
				p->in_flight[k] = ++p->next_seq;
				__atomic_fetch_add(&t->outstanding, 1, __ATOMIC_RELAXED);
				t->sent++;
			}
		}
	}
	while (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
		n = ibv_poll_cq(t->cq, 32, wc);
		if (n < 0) {
			t->err = EIO;
			return NULL;
		}
		for (k = 0; k < n; k++) {
			if (completion(t, &wc[k])) {
				t->err = errno ? errno : EIO;
				return NULL;
			}
		}
	}
	return NULL;
}

static void setup_pair(struct pair *p, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = window, .max_recv_wr = 2 * window,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = is_rc ? IBV_QPT_RC : IBV_QPT_UD,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				    .qkey = QKEY };
	size_t len = (size_t)3 * window * (GRH + size);
	int k;

	p->buf = calloc(1, len);
	if (!p->buf)
		die("calloc");
	p->mr = ibv_reg_mr(pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		die("ibv_reg_mr");
	p->qp = ibv_create_qp(pd, &init);
	if (!p->qp)
		die("ibv_create_qp");
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  (is_rc ? IBV_QP_ACCESS_FLAGS : IBV_QP_QKEY)))
		die("ibv_modify_qp INIT");
	/* Receives for twice the window: the server's echoes and the client's
	 * messages never find the queue empty.
	 */
	for (k = 0; k < 2 * window; k++)
		if (post_recv(p, (int)(p - pairs), k))
			die("ibv_post_recv");
	if (is_rc)
		return;	/* connected once the peer's QP is known */
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE))
		die("ibv_modify_qp RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("ibv_modify_qp RTS");
}

/* RC: p's QP to RTR and RTS, connected to remote_qpn at remote_gid. */
static void connect_pair(struct pair *p)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = p->remote_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = remote_gid, .sgid_index = sgid_index, .hop_limit = 64 },
			.port_num = 1,
		},
	};

	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("ibv_modify_qp RTS");
}

/* Out of band: the peer's GID and QP numbers over TCP. */
static int oob_connect(const char *server, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, tries;

	if (server) {
		if (inet_pton(AF_INET, server, &sa.sin_addr) != 1) {
			fprintf(stderr, "ud_many: %s is not an IPv4 address\n", server);
			exit(2);
		}
		for (tries = 0; tries < 600; tries++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0)
				die("socket");
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				return fd;
			close(fd);
			usleep(100000);
		}
		die("connect");
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		die("bind");
	printf("listening\n");
	fflush(stdout);
	one = accept(fd, NULL, NULL);
	if (one < 0)
		die("accept");
	close(fd);
	return one;
}

static void xfer(int fd, void *buf, size_t len, int out)
{
	size_t done_len = 0;
	ssize_t r;

	while (done_len < len) {
		r = out ? write(fd, (char *)buf + done_len, len - done_len) :
			  read(fd, (char *)buf + done_len, len - done_len);
		if (r <= 0)
			die(out ? "write to the peer" : "read from the peer");
		done_len += r;
	}
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL, *server = NULL;
	struct ibv_device **list;
	union ibv_gid gid;
	__u32 qpns[MAX_QPS], n32;
	__u64 sent = 0, received = 0, send_errors = 0, recv_errors = 0, bad = 0, lost = 0;
	int port = 18515, opt, i, fd, per, idle = 0, ok;
	char c = 0;
	double start, end, elapsed = 0;
	__u64 timed = 0;

	while ((opt = getopt(argc, argv, "d:g:rn:t:w:s:T:p:")) != -1) {
		switch (opt) {
		case 'r':
			is_rc = 1;
			break;
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			sgid_index = atoi(optarg);
			break;
		case 'n':
			nqps = atoi(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'w':
			window = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'T':
			seconds = atoi(optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind < argc)
		server = argv[optind];
	is_client = !!server;
	if (!dev_name || nqps < 1 || nqps > MAX_QPS || nthreads < 1 || nthreads > MAX_THREADS ||
	    nthreads > nqps || window < 1 || window > MAX_WINDOW ||
	    size < (int)sizeof(struct msg) || size > 4096 || seconds < 1)
		goto usage;

	list = ibv_get_device_list(NULL);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			break;
	if (!list[i]) {
		fprintf(stderr, "ud_many: no device %s\n", dev_name);
		return 2;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	if (ibv_query_gid(ctx, 1, sgid_index, &gid))
		die("ibv_query_gid");
	per = nqps / nthreads;
	for (i = 0; i < nthreads; i++) {
		struct thread *t = &threads[i];
		int k;

		t->first = i * per;
		t->count = i == nthreads - 1 ? nqps - t->first : per;
		t->cq = ibv_create_cq(ctx, t->count * 3 * window, NULL, NULL, 0);
		if (!t->cq)
			die("ibv_create_cq");
		for (k = t->first; k < t->first + t->count; k++)
			setup_pair(&pairs[k], t->cq);
	}
	for (i = 0; i < nqps; i++)
		qpns[i] = htonl(pairs[i].qp->qp_num);

	fd = oob_connect(server, port);
	n32 = htonl(nqps);
	xfer(fd, &n32, sizeof(n32), 1);
	xfer(fd, &gid, sizeof(gid), 1);
	xfer(fd, qpns, nqps * sizeof(qpns[0]), 1);
	xfer(fd, &n32, sizeof(n32), 0);
	if ((int)ntohl(n32) != nqps) {
		fprintf(stderr, "ud_many: the peer has %u QPs, not %d\n", ntohl(n32), nqps);
		return 2;
	}
	xfer(fd, &remote_gid, sizeof(remote_gid), 0);
	xfer(fd, qpns, nqps * sizeof(qpns[0]), 0);
	for (i = 0; i < nqps; i++) {
		struct ibv_ah_attr ah = {
			.is_global = 1,
			.grh = { .dgid = remote_gid, .sgid_index = sgid_index, .hop_limit = 64 },
			.port_num = 1,
		};

		pairs[i].remote_qpn = ntohl(qpns[i]);
		if (is_rc) {
			connect_pair(&pairs[i]);
			continue;
		}
		pairs[i].ah = ibv_create_ah(pd, &ah);
		if (!pairs[i].ah)
			die("ibv_create_ah");
	}
	/* Both ready before the client sends its first message. */
	xfer(fd, &c, 1, 1);
	xfer(fd, &c, 1, 0);

	for (i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i].tid, NULL, run, &threads[i]))
			die("pthread_create");
	if (is_client) {
		start = now();
		end = start + seconds;
		while (now() < end)
			usleep(10000);
		/* The echoes of the timed part (aligned 64-bit loads of counts
		 * that only grow: at worst a few late).
		 */
		for (i = 0; i < nthreads; i++)
			timed += __atomic_load_n(&threads[i].received, __ATOMIC_RELAXED);
		elapsed = now() - start;
		__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
		/* The messages in flight come back, or are lost. */
		end = now() + 10;
		while (now() < end) {
			int busy = 0;

			for (i = 0; i < nthreads; i++)
				busy |= !!__atomic_load_n(&threads[i].outstanding,
							   __ATOMIC_RELAXED);
			if (!busy && ++idle > 2)
				break;
			usleep(100000);
		}
		__atomic_store_n(&done, 1, __ATOMIC_RELAXED);
		xfer(fd, &c, 1, 1);
	} else {
		xfer(fd, &c, 1, 0);
		/* The client saw its last echo: ours are all sent. */
		usleep(200000);
		__atomic_store_n(&done, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		if (threads[i].err) {
			errno = threads[i].err;
			die("posting");
		}
		sent += threads[i].sent;
		received += threads[i].received;
		send_errors += threads[i].send_errors;
		recv_errors += threads[i].recv_errors;
		bad += threads[i].bad;
	}
	ok = 1;
	for (i = 0; i < nqps; i++) {
		int s;

		if (is_client)
			for (s = 0; s < window; s++)
				lost += pairs[i].in_flight[s] != 0;
		ok &= pairs[i].exchanged;
	}
	printf("pairs %d\nsent %llu\nreceived %llu\nsend_errors %llu\nrecv_errors %llu\nbad %llu\n",
	       nqps, (unsigned long long)sent, (unsigned long long)received,
	       (unsigned long long)send_errors, (unsigned long long)recv_errors,
	       (unsigned long long)bad);
	if (is_client) {
		printf("lost %llu\n", (unsigned long long)lost);
		printf("rate_per_s %.0f\n", timed / elapsed);
		if (timed)
			printf("rtt_ns %.0f\n", 1e9 * elapsed * nqps * window / timed);
	}
	if (!ok)
		printf("# a pair exchanged nothing\n");
	ok &= !send_errors && !recv_errors && !bad && !lost && received > 0;
	if (is_client && received + lost != sent)
		ok = 0;
	close(fd);
	for (i = 0; i < nqps; i++) {
		if (pairs[i].ah)
			ibv_destroy_ah(pairs[i].ah);
		ibv_destroy_qp(pairs[i].qp);
		ibv_dereg_mr(pairs[i].mr);
		free(pairs[i].buf);
	}
	for (i = 0; i < nthreads; i++)
		ibv_destroy_cq(threads[i].cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ok ? 0 : 1;

usage:
	fprintf(stderr, "usage: ud_many -d DEV -g SGID_INDEX [-r] [-n QPS] [-t THREADS]\n"
			"               [-w WINDOW] [-s SIZE] [-T SECONDS] [-p PORT] [SERVER_IP]\n");
	return 2;
}
