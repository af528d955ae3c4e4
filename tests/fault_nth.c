// SPDX-License-Identifier: GPL-2.0
/*
 * fault_nth - make the n-th fault-injectable call (slab allocation, page
 * allocation, copy from or to user memory) of one entry point fail, for
 * n = 1, 2, ... until the call succeeds without a fault:
 * /proc/thread-self/fail-nth, armed right before the one system call that
 * reaches the entry point (raw uverbs write, netlink request, finit_module)
 * and read back right after it.
 *
 *   fault_nth [-a ALL] [-e EVERY] ENTRY [ARGS]
 *     ucontext DEV              GET_CONTEXT               (open of the device)
 *     pd DEV                    ALLOC_PD
 *     ah DEV SGID_INDEX DGID    CREATE_AH                 (rdma_create_user_ah)
 *     destroy_ah DEV SGID DGID  DESTROY_AH                (rdma_destroy_ah_user)
 *     xrcd DEV                  OPEN_XRCD                 (ib_alloc_xrcd_user)
 *     close_xrcd DEV            CLOSE_XRCD                (ib_dealloc_xrcd_user)
 *     cq DEV                    CREATE_CQ                 (the driver's create_cq)
 *     resize_cq DEV             RESIZE_CQ                 (255 to 511 entries: the
 *                                                          driver's resize_user_cq)
 *     qp DEV                    CREATE_QP                 (a UD QP: ib_core, the driver)
 *     rc_qp DEV                 CREATE_QP                 (an RC QP: the driver's copy of
 *                                                          the send ring, its requester and
 *                                                          responder state too)
 *     srq DEV                   CREATE_SRQ                (64 x 2: ib_core, the driver's
 *                                                          number, ring, mmap entry, response)
 *     mr DEV                    REG_MR                    (4 pages: ib_core, the driver;
 *                                                          none may stay pinned)
 *     mw DEV                    ALLOC_MW                  (type 2: ib_core, the driver's
 *                                                          index and table entry)
 *     link NAME TYPE NETDEV     RDMA_NLDEV_CMD_NEWLINK    ("rdma link add")
 *     module PATH [PARAMS]      finit_module              (module load)
 *
 * With -a ALL -e EVERY, only the first ALL fault points are each made to
 * fail, then every EVERY-th, and with -l LAST each of the last LAST too
 * (counted first by a call that no fault reaches).  For entry points with
 * hundreds of points, almost all in the driver core's sysfs code, at seconds
 * each on the debug kernel: "rdma link add" and the module load, whose
 * driver's own work (debugfs, the tap, the module's init) comes last.
 *
 * After each injected failure the object must not exist and the next
 * attempt starts from the same state; what succeeded despite a fault is
 * undone (destroyed, deleted, unloaded) before the next n.  Prints one line
 * per fault point, with the kind of fault the kernel log reported for it
 * ("# n=3: ENOMEM (failslab)", "# n=4: EFAULT (fail_usercopy)",
 * "# n=5: succeeded (unreported)" when the call absorbed the fault of an
 * allocation that asked for no warning) and last
 *   ENTRY: N fault points, errnos E1(KIND1),E2(KIND2),...
 * or, with -a/-e, "ENTRY: N fault points (of about M), errnos ...".
 * Exit status 0 when the call finally succeeded without a fault, 1 when an
 * injected failure was not clean (a success reported as failure or the
 * other way round, an unexpected errno, an undo that failed), 2 on a usage
 * or set-up error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "uverbs_raw.h"

#define MAX_POINTS 4000

static int fail_fd = -1;

static void fail_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fail_fd, buf, len, 0) != len) {
		perror("fail-nth");
		exit(2);
	}
}

/*
 * Disarms and tells whether the armed fault was injected.  Reading and
 * writing fail-nth copies to and from user memory: while a fault is still
 * armed (the call under test did not reach it), those copies count as fault
 * points too.  A read that fails with EFAULT had the armed fault injected in
 * its own copy: the call under test did not get it.  The disarming write is
 * repeated while it fails so, until nothing is armed.
 */
/* What fail-nth read last: how many fault points the armed count had left. */
static unsigned int fail_left;

static int fail_injected(void)
{
	char buf[16] = "";
	int injected, i;
	ssize_t len;

	len = pread(fail_fd, buf, sizeof(buf) - 1, 0);
	if (len < 0 && errno == EFAULT) {
		injected = 0;
	} else if (len <= 0) {
		perror("fail-nth");
		exit(2);
	} else {
		fail_left = strtoul(buf, NULL, 10);
		injected = fail_left == 0;
	}
	for (i = 0; pwrite(fail_fd, "0", 1, 0) != 1; i++) {
		if (errno != EFAULT || i == 64) {
			perror("fail-nth");
			exit(2);
		}
	}
	return injected;
}

/*
 * The kind of each injected fault, from the kernel log: with the fault
 * attributes' "verbose" at 1, each injected failure is reported as
 * "FAULT_INJECTION: forcing a failure.\nname ATTR, ..." (lib/fault-inject.c),
 * ATTR failslab, fail_page_alloc or fail_usercopy, unless the allocation
 * asked for no warning (__GFP_NOWARN: no report).  Read from /dev/kmsg,
 * from where it ended when fault_nth started.
 */
static int kmsg_fd = -1;

static void kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd < 0 || lseek(kmsg_fd, 0, SEEK_END) < 0) {
		perror("/dev/kmsg");
		exit(2);
	}
}

/*
 * The fault reports logged since the last call: their number, and in KIND
 * the attribute of the last one ("unreported" when there was none).
 */
static int kmsg_faults(char *kind, size_t size)
{
	char rec[4096];
	int reports = 0;

	snprintf(kind, size, "unreported");
	for (;;) {
		ssize_t len = read(kmsg_fd, rec, sizeof(rec) - 1);
		char *p;

		if (len < 0 && errno == EAGAIN)
			break;
		if (len < 0 && errno == EPIPE)
			continue; /* records overwritten before we read them */
		if (len <= 0) {
			perror("/dev/kmsg");
			exit(2);
		}
		rec[len] = '\0';
		/* The record's text follows the first ';' of its header. */
		p = strchr(rec, ';');
		p = p ? p + 1 : rec;
		if (!strncmp(p, "FAULT_INJECTION: forcing a failure.", 35)) {
			reports++;
			snprintf(kind, size, "nameless");
			p = strstr(p, "name ");
		} else if (strcmp(kind, "nameless") || strncmp(p, "name ", 5)) {
			continue; /* not a report, nor the name of one */
		}
		/* The name: in the report's record ("\x0a" for its newline) or the next. */
		if (p) {
			p += strlen("name ");
			snprintf(kind, size, "%.*s", (int)strcspn(p, ", \\\n"), p);
		}
	}
	return reports;
}

/* ------------------------------------------------------------------ */
/* uverbs                                                              */

struct uv {
	const char *dev;
	int fd;
	__u32 pd;
	int sgid;
	__u8 dgid[16];
};

static int uv_open(struct uv *uv, int with_context, int with_pd)
{
	struct ib_uverbs_get_context_resp ctx = {};
	int ret;

	uv->fd = uverbs_open(uv->dev);
	if (uv->fd < 0)
		return uv->fd;
	if (!with_context)
		return 0;
	ret = get_context(uv->fd, &ctx);
	if (!ret && with_pd)
		ret = alloc_pd(uv->fd, &uv->pd);
	if (ret)
		close(uv->fd);
	return ret;
}

static int create_ah(struct uv *uv, __u32 *handle)
{
	/* The command's response, then room for the driver's. */
	union {
		struct ib_uverbs_create_ah_resp ah;
		__u64 room[16];
	} resp = {};
	struct ib_uverbs_create_ah cmd = {
		.response = (uintptr_t)&resp,
		.pd_handle = uv->pd,
		.attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .sgid_index = uv->sgid, .hop_limit = 64 },
		},
	};
	int ret;

	memcpy(cmd.attr.grh.dgid, uv->dgid, 16);
	ret = uv_cmd(uv->fd, IB_USER_VERBS_CMD_CREATE_AH, &cmd, sizeof(cmd), sizeof(resp));
	if (!ret)
		*handle = resp.ah.ah_handle;
	return ret;
}

static int destroy_ah(struct uv *uv, __u32 handle)
{
	struct ib_uverbs_destroy_ah cmd = { .ah_handle = handle };

	return uv_cmd(uv->fd, IB_USER_VERBS_CMD_DESTROY_AH, &cmd, sizeof(cmd), 0);
}

/* A CQ of 255 entries, with room for the soft-RoCE response (mminfo). */
static int create_cq(struct uv *uv, __u32 *handle)
{
	union {
		struct ib_uverbs_create_cq_resp cq;
		__u64 room[8];
	} resp;
	int ret;

	ret = create_cq_raw(uv->fd, 255, 0, &resp, sizeof(resp));
	if (!ret)
		*handle = resp.cq.cq_handle;
	return ret;
}

/*
 * RESIZE_CQ of cq to 511 entries, with room for the soft-RoCE response (the
 * new ring's mminfo).
 */
static int resize_cq(struct uv *uv, __u32 cq)
{
	union {
		struct ib_uverbs_resize_cq_resp cq;
		__u64 room[8];
	} resp;

	return resize_cq_raw(uv->fd, cq, 511, &resp, sizeof(resp));
}

/*
 * A UD QP of 64 work requests with 2 SGEs each way and 64 bytes inline, on
 * cq, with room for the soft-RoCE response (two mminfo).
 */
static int create_qp(struct uv *uv, __u32 cq, __u32 *handle, __u8 type)
{
	struct qp_req req = {
		.send_wr = 64, .recv_wr = 64, .send_sge = 2, .recv_sge = 2, .inline_data = 64,
		.type = type,
	};
	union {
		struct ib_uverbs_create_qp_resp qp;
		__u64 room[16];
	} resp;
	int ret;

	ret = create_qp_raw(uv->fd, uv->pd, cq, &req, 0, &resp, sizeof(resp));
	if (!ret)
		*handle = resp.qp.qp_handle;
	return ret;
}

/*
 * CREATE_SRQ of 64 work requests of 2 SGEs on the context's PD, with room
 * for the soft-RoCE response (mminfo, SRQ number).
 */
static int create_srq(struct uv *uv, __u32 *handle)
{
	union {
		struct ib_uverbs_create_srq_resp srq;
		__u64 room[8];
	} resp;
	struct ib_uverbs_create_srq cmd = {
		.response = (uintptr_t)&resp,
		.user_handle = 0x5252,
		.pd_handle = uv->pd,
		.max_wr = 64,
		.max_sge = 2,
	};
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = uv_cmd(uv->fd, IB_USER_VERBS_CMD_CREATE_SRQ, &cmd, sizeof(cmd), sizeof(resp));
	if (!ret)
		*handle = resp.srq.srq_handle;
	return ret;
}

static int destroy_srq(int fd, __u32 srq)
{
	struct ib_uverbs_destroy_srq_resp resp;
	struct ib_uverbs_destroy_srq cmd = {
		.response = (uintptr_t)&resp,
		.srq_handle = srq,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_DESTROY_SRQ, &cmd, sizeof(cmd), sizeof(resp));
}

/* ALLOC_MW of a type 2 window on the context's PD. */
static int alloc_mw(struct uv *uv, __u32 *handle)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ib_uverbs_alloc_mw cmd = {
		.response = (uintptr_t)&resp,
		.pd_handle = uv->pd,
		.mw_type = 2,
	};
	int ret;

	ret = uv_cmd(uv->fd, IB_USER_VERBS_CMD_ALLOC_MW, &cmd, sizeof(cmd), sizeof(resp));
	if (!ret)
		*handle = resp.mw_handle;
	return ret;
}

static int dealloc_mw(int fd, __u32 mw)
{
	struct ib_uverbs_dealloc_mw cmd = { .mw_handle = mw };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_MW, &cmd, sizeof(cmd), 0);
}

/*
 * An RC QP (create_qp) taken from RESET through INIT and RTR to RTS, towards
 * QP 0x12345 at uv's DGID from its SGID index, the path's MTU 1024, four
 * READs and atomics each way: what a connected QP's set-up allocates
 * (ib_core's resolution of the destination MAC and the port's, the
 * driver's state for the path).  Starts at the state after *reached and
 * sets *reached to each state reached; 0 or the failing step's -errno.
 */
static int modify_rc_qp(struct uv *uv, __u32 qp, int *reached)
{
	int ret = 0;

	while (!ret && *reached != IB_QPS_RTS) {
		struct ib_uverbs_modify_qp cmd = {
			.qp_handle = qp,
			.qp_state = *reached + 1,
		};

		if (cmd.qp_state == IB_QPS_INIT) {
			cmd.attr_mask = QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS;
			cmd.port_num = 1;
			cmd.qp_access_flags = IB_UVERBS_ACCESS_REMOTE_WRITE |
					      IB_UVERBS_ACCESS_REMOTE_READ |
					      IB_UVERBS_ACCESS_REMOTE_ATOMIC;
		} else if (cmd.qp_state == IB_QPS_RTR) {
			cmd.attr_mask = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN |
					QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
			memcpy(cmd.dest.dgid, uv->dgid, 16);
			cmd.dest.sgid_index = uv->sgid;
			cmd.dest.hop_limit = 64;
			cmd.dest.is_global = 1;
			cmd.dest.port_num = 1;
			cmd.path_mtu = 3;
			cmd.dest_qp_num = 0x12345;
			cmd.rq_psn = 0x100;
			cmd.max_dest_rd_atomic = 4;
			cmd.min_rnr_timer = 12;
		} else {
			cmd.attr_mask = QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT |
					QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
			cmd.sq_psn = 0x200;
			cmd.timeout = 14;
			cmd.retry_cnt = 7;
			cmd.rnr_retry = 7;
			cmd.max_rd_atomic = 4;
		}
		ret = modify_qp(uv->fd, &cmd);
		if (!ret)
			*reached = cmd.qp_state;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* netlink                                                             */

static void nl_put_str(struct nlmsghdr *nh, __u16 type, const char *s)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
	size_t len = strlen(s) + 1;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, s, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends @req with the fault armed; 0 or the request's -errno. */
/*
 * What nl_request() returns when the request went in but its answer never
 * came: recv() fails with ENOBUFS when the kernel could not allocate the
 * acknowledgment (netlink_ack() sets the socket's error), so the outcome is
 * unknown to the caller.
 */
#define ANSWER_LOST 1

static int nl_request(int sk, struct nlmsghdr *req, unsigned int n, int *injected)
{
	char buf[8192];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	ssize_t len;

	fail_arm(n);
	len = send(sk, req, req->nlmsg_len, 0);
	*injected = fail_injected();
	if (len < 0)
		return -errno;
	for (;;) {
		len = recv(sk, buf, sizeof(buf), 0);
		if (len < 0)
			return errno == ENOBUFS ? ANSWER_LOST : -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len))
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	}
}

static int link_newlink(int sk, const char *name, const char *type, const char *netdev,
			unsigned int n, int *injected)
{
	__u64 buf[64] = {};
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;

	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nl_put_str(nh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	nl_put_str(nh, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	nl_put_str(nh, RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	return nl_request(sk, nh, n, injected);
}

static int link_delete(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rdma link delete %s", name);
	return system(cmd) ? -EIO : 0;
}

static int link_exists(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	return access(path, F_OK) == 0;
}

/* ------------------------------------------------------------------ */

static const char *errname(int err)
{
	static char buf[32];

	switch (-err) {
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENODEV: return "ENODEV";
	case EIO: return "EIO";
	case ENOBUFS: return "ENOBUFS";
	case EAGAIN: return "EAGAIN";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	snprintf(buf, sizeof(buf), "%d", err);
	return buf;
}

static const char usage_text[] =
	"usage: fault_nth [-a ALL -e EVERY [-l LAST]] ucontext|pd|xrcd|close_xrcd|cq|resize_cq|qp|rc_qp|srq|mr|mw\n"
	"                 DEV\n"
	"       fault_nth [-a ALL -e EVERY] ah|destroy_ah|modify_qp DEV SGID_INDEX DGID\n"
	"       fault_nth [-a ALL -e EVERY] link NAME TYPE NETDEV\n"
	"       fault_nth [-a ALL -e EVERY] module PATH [PARAMS]\n";

#define DRY_RUN 1000000u

/* The fault point after n: every one up to ALL and from TOTAL - LAST on. */
static unsigned int next_point(unsigned int n, unsigned int all, unsigned int every,
			       unsigned int total, unsigned int last)
{
	if (n == DRY_RUN)
		return 1;
	if (n < all || (last && n + last >= total))
		return n + 1;
	if (last && n + every + last > total)
		return total - last;
	return n + every;
}

static void usage(void)
{
	fputs(usage_text, stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *entry;
	char errnos[4096] = "";
	struct uv uv = {};
	unsigned int n, all = ~0u, every = 1, last = 0, total = 0;
	int points = 0, bad = 0, sk = -1, mod_fd = -1, opt;
	void *mr_mem = MAP_FAILED;
	long pinned = -1;

	while ((opt = getopt(argc, argv, "+a:e:l:")) != -1) {
		if (opt == 'a')
			all = atoi(optarg);
		else if (opt == 'l')
			last = atoi(optarg);
		else if (opt == 'e')
			every = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else
			usage();
	}
	argc -= optind - 1;
	argv += optind - 1;
	entry = argc > 1 ? argv[1] : "";
	if (argc < 3)
		usage();
	fail_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (fail_fd < 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	kmsg_open();
	uv.dev = argv[2];
	if (!strcmp(entry, "ah") || !strcmp(entry, "destroy_ah") || !strcmp(entry, "modify_qp")) {
		struct in6_addr a;

		if (argc != 5 || inet_pton(AF_INET6, argv[4], &a) != 1)
			usage();
		uv.sgid = atoi(argv[3]);
		memcpy(uv.dgid, &a, 16);
	} else if (!strcmp(entry, "link")) {
		if (argc != 5)
			usage();
		sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
		if (sk < 0) {
			perror("netlink");
			return 2;
		}
	} else if (!strcmp(entry, "module")) {
		mod_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (mod_fd < 0) {
			perror(argv[2]);
			return 2;
		}
	} else if (strcmp(entry, "ucontext") && strcmp(entry, "pd") && strcmp(entry, "xrcd") &&
		   strcmp(entry, "close_xrcd") && strcmp(entry, "cq") &&
		   strcmp(entry, "resize_cq") && strcmp(entry, "qp") && strcmp(entry, "rc_qp") &&
		   strcmp(entry, "srq") && strcmp(entry, "mr") && strcmp(entry, "mw")) {
		usage();
	}
	if (!strcmp(entry, "mr")) {
		mr_mem = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		pinned = vm_pin_kb();
		if (mr_mem == MAP_FAILED || pinned < 0) {
			perror("mr memory");
			return 2;
		}
	}

	/*
	 * With -l, a first call armed at DRY_RUN, which it never reaches,
	 * counts the fault points (what fail-nth has left afterwards), so
	 * that the last LAST of them are each made to fail too: where a
	 * driver's own work comes after the driver core's.
	 */
	for (n = last ? DRY_RUN : 1; n <= MAX_POINTS || n == DRY_RUN;
	     n = next_point(n, all, every, total, last)) {
		int ret = 0, injected = 0, undo = 0, reports;
		char kind[32];
		__u32 handle = 0;

		if (!strcmp(entry, "ucontext")) {
			struct ib_uverbs_get_context_resp ctx = {};

			if (uv_open(&uv, 0, 0))
				goto setup;
			fail_arm(n);
			ret = get_context(uv.fd, &ctx);
			injected = fail_injected();
			close(uv.fd);
		} else if (!strcmp(entry, "pd")) {
			if (uv_open(&uv, 1, 0))
				goto setup;
			fail_arm(n);
			ret = alloc_pd(uv.fd, &handle);
			injected = fail_injected();
			if (!ret)
				undo = dealloc_pd(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "ah")) {
			if (uv_open(&uv, 1, 1))
				goto setup;
			fail_arm(n);
			ret = create_ah(&uv, &handle);
			injected = fail_injected();
			if (!ret)
				undo = destroy_ah(&uv, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "destroy_ah")) {
			if (uv_open(&uv, 1, 1) || create_ah(&uv, &handle))
				goto setup;
			fail_arm(n);
			ret = destroy_ah(&uv, handle);
			injected = fail_injected();
			/* A destroy that failed leaves the AH: it must go now. */
			if (ret)
				undo = destroy_ah(&uv, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "xrcd")) {
			if (uv_open(&uv, 1, 0))
				goto setup;
			fail_arm(n);
			ret = open_xrcd(uv.fd, -1, O_CREAT, &handle);
			injected = fail_injected();
			if (!ret)
				undo = close_xrcd(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "close_xrcd")) {
			if (uv_open(&uv, 1, 0) || open_xrcd(uv.fd, -1, O_CREAT, &handle))
				goto setup;
			fail_arm(n);
			ret = close_xrcd(uv.fd, handle);
			injected = fail_injected();
			if (ret)
				undo = close_xrcd(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "cq")) {
			if (uv_open(&uv, 1, 0))
				goto setup;
			fail_arm(n);
			ret = create_cq(&uv, &handle);
			injected = fail_injected();
			if (!ret)
				undo = destroy_cq(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "resize_cq")) {
			if (uv_open(&uv, 1, 0) || create_cq(&uv, &handle))
				goto setup;
			fail_arm(n);
			ret = resize_cq(&uv, handle);
			injected = fail_injected();
			/* A resize that failed leaves the CQ as it was: it resizes now. */
			if (ret)
				undo = resize_cq(&uv, handle);
			if (!undo)
				undo = destroy_cq(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "qp") || !strcmp(entry, "rc_qp")) {
			__u32 cq;
			__u8 type = entry[0] == 'r' ? IB_UVERBS_QPT_RC : IB_UVERBS_QPT_UD;

			if (uv_open(&uv, 1, 1) || create_cq(&uv, &cq))
				goto setup;
			fail_arm(n);
			ret = create_qp(&uv, cq, &handle, type);
			injected = fail_injected();
			if (!ret)
				undo = destroy_qp(uv.fd, handle);
			/* The CQ is free again only if no QP was left on it. */
			if (!undo)
				undo = destroy_cq(uv.fd, cq);
			close(uv.fd);
		} else if (!strcmp(entry, "modify_qp")) {
			__u32 cq;
			int reached = IB_QPS_RESET, failed_at;

			if (uv_open(&uv, 1, 1) || create_cq(&uv, &cq) ||
			    create_qp(&uv, cq, &handle, IB_UVERBS_QPT_RC))
				goto setup;
			fail_arm(n);
			ret = modify_rc_qp(&uv, handle, &reached);
			injected = fail_injected();
			/*
			 * A step that failed left the QP where it was: the rest
			 * of the way must work from there.
			 */
			failed_at = reached;
			if (ret) {
				undo = modify_rc_qp(&uv, handle, &reached);
				if (undo)
					printf("# n=%u: modifying on from state %d failed: %s\n", n,
					       failed_at, errname(undo));
			}
			if (!undo)
				undo = destroy_qp(uv.fd, handle);
			if (!undo)
				undo = destroy_cq(uv.fd, cq);
			close(uv.fd);
		} else if (!strcmp(entry, "srq")) {
			if (uv_open(&uv, 1, 1))
				goto setup;
			fail_arm(n);
			ret = create_srq(&uv, &handle);
			injected = fail_injected();
			if (!ret)
				undo = destroy_srq(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "mw")) {
			if (uv_open(&uv, 1, 1))
				goto setup;
			fail_arm(n);
			ret = alloc_mw(&uv, &handle);
			injected = fail_injected();
			if (!ret)
				undo = dealloc_mw(uv.fd, handle);
			close(uv.fd);
		} else if (!strcmp(entry, "mr")) {
			struct ib_uverbs_reg_mr_resp mr;

			if (uv_open(&uv, 1, 1))
				goto setup;
			fail_arm(n);
			ret = reg_mr(uv.fd, uv.pd, mr_mem, 4 * 4096, (uintptr_t)mr_mem,
				     IB_UVERBS_ACCESS_LOCAL_WRITE, &mr);
			injected = fail_injected();
			if (!ret && vm_pin_kb() != pinned + 16) {
				printf("# n=%u: registered, VmPin %ld kB, expected %ld\n", n,
				       vm_pin_kb(), pinned + 16);
				bad = 1;
			}
			if (!ret)
				undo = dereg_mr(uv.fd, mr.mr_handle);
			close(uv.fd);
			if (vm_pin_kb() != pinned) {
				printf("# n=%u: %s, VmPin %ld kB left, expected %ld\n", n,
				       ret ? errname(ret) : "ok", vm_pin_kb(), pinned);
				bad = 1;
			}
		} else if (!strcmp(entry, "link")) {
			int created, exists;

			ret = link_newlink(sk, argv[2], argv[3], argv[4], n, &injected);
			created = ret == 0;
			exists = link_exists(argv[2]);
			if (ret == ANSWER_LOST) {
				/* Either outcome is right; a device made is deleted. */
				printf("# n=%u: the answer was lost (ENOBUFS), %s %s\n", n,
				       argv[2], exists ? "exists" : "does not exist");
				ret = -ENOBUFS;
			} else if (created != exists) {
				printf("# n=%u: %s, but %s %s\n", n, ret ? errname(ret) : "ok",
				       argv[2], ret ? "exists" : "does not exist");
				bad = 1;
			}
			if (exists)
				undo = link_delete(argv[2]);
		} else {
			const char *params = argc > 3 ? argv[3] : "";

			fail_arm(n);
			ret = syscall(SYS_finit_module, mod_fd, params, 0) ? -errno : 0;
			injected = fail_injected();
			if (!ret) {
				/* The module's name: the file's, up to ".ko". */
				char name[64], *dot;

				snprintf(name, sizeof(name), "%s", strrchr(argv[2], '/') ?
					 strrchr(argv[2], '/') + 1 : argv[2]);
				dot = strstr(name, ".ko");
				if (dot)
					*dot = '\0';
				undo = syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
			}
		}

		reports = kmsg_faults(kind, sizeof(kind));
		if (undo) {
			printf("# n=%u: undoing it failed: %s\n", n, errname(undo));
			bad = 1;
		}
		if (n == DRY_RUN) {
			if (ret || injected) {
				printf("# counting the fault points: %s\n",
				       ret ? errname(ret) : "a fault was injected");
				return 1;
			}
			total = DRY_RUN - fail_left;
			printf("# about %u fault points; all of the first %u and the last %u\n",
			       total, all, last);
			continue;
		}
		if (!injected) {
			/* No n-th fault point: the call ran to its end. */
			if (ret) {
				printf("# n=%u: no fault injected, yet %s\n", n, errname(ret));
				bad = 1;
			}
			break;
		}
		points++;
		if (reports > 1) {
			printf("# n=%u: %d faults reported for one armed\n", n, reports);
			bad = 1;
		}
		if (ret) {
			printf("# n=%u: %s (%s)\n", n, errname(ret), kind);
			if (strlen(errnos) < sizeof(errnos) - 48)
				snprintf(errnos + strlen(errnos), sizeof(errnos) - strlen(errnos),
					 "%s%s(%s)", *errnos ? "," : "", errname(ret), kind);
		} else {
			printf("# n=%u: succeeded (%s)\n", n, kind);
		}
		fflush(stdout);
	}
	if (n > MAX_POINTS) {
		printf("# still failing after %d fault points\n", MAX_POINTS);
		bad = 1;
	}
	if (all != ~0u && n > all)
		printf("%s: %d fault points (of about %u), errnos %s\n", entry, points, n - 1,
		       *errnos ? errnos : "-");
	else
		printf("%s: %d fault points, errnos %s\n", entry, points, *errnos ? errnos : "-");
	return bad;

setup:
	fprintf(stderr, "fault_nth: setting up %s on %s failed at n=%u\n", entry, uv.dev, n);
	return 2;
}
