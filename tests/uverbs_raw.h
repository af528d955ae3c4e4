/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The raw uverbs interface, without libibverbs: write() of the legacy
 * command ABI of <rdma/ib_user_verbs.h> on /dev/infiniband/uverbsN.  Shared
 * by rv0_uverbs.c and uverbs_hold.c; every function returns 0 or -errno.
 */
#ifndef _RVERBS_TESTS_UVERBS_RAW_H
#define _RVERBS_TESTS_UVERBS_RAW_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

/* One legacy command: header, request, nothing after it. */
static inline int uv_cmd(int fd, __u32 command, const void *req, size_t req_len, size_t out_len)
{
	__u64 buf[64];
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (sizeof(hdr) + req_len) / 4,
		.out_words = out_len / 4,
	};
	size_t len = sizeof(hdr) + req_len;
	ssize_t n;

	if (len > sizeof(buf))
		return -E2BIG;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy((char *)buf + sizeof(hdr), req, req_len);
	n = write(fd, buf, len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

static inline int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/*
 * The uverbs character device of @dev: the uverbsN of
 * /sys/class/infiniband_verbs whose ibdev is @dev.  0 or -ENODEV.
 */
static inline int uverbs_name(const char *dev, char *name, size_t len)
{
	char ibdev[64];
	glob_t g;
	size_t i;
	int ret = -ENODEV;

	if (glob("/sys/class/infiniband_verbs/uverbs*/ibdev", 0, NULL, &g))
		return -ENODEV;
	for (i = 0; i < g.gl_pathc; i++) {
		char *p = g.gl_pathv[i], *end = strrchr(p, '/'), *start;

		if (read_text(p, ibdev, sizeof(ibdev)) < 0 || strcmp(ibdev, dev))
			continue;
		*end = '\0';
		start = strrchr(p, '/') + 1;
		snprintf(name, len, "%s", start);
		ret = 0;
		break;
	}
	globfree(&g);
	return ret;
}

static inline int uverbs_open(const char *dev)
{
	char name[32], path[64];
	int fd, ret;

	ret = uverbs_name(dev, name, sizeof(name));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/dev/infiniband/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static inline int get_context(int fd, struct ib_uverbs_get_context_resp *resp)
{
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)resp };

	return uv_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd), sizeof(*resp));
}

static inline int alloc_pd(int fd, __u32 *pd)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ib_uverbs_alloc_pd cmd = { .response = (uintptr_t)&resp };
	int ret;

	ret = uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), sizeof(resp));
	if (!ret)
		*pd = resp.pd_handle;
	return ret;
}

static inline int dealloc_pd(int fd, __u32 pd)
{
	struct ib_uverbs_dealloc_pd cmd = { .pd_handle = pd };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &cmd, sizeof(cmd), 0);
}

/* OPEN_XRCD; file_fd -1 for an XRCD with no inode. */
static inline int open_xrcd(int fd, int file_fd, __u32 oflags, __u32 *xrcd)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ib_uverbs_open_xrcd cmd = {
		.response = (uintptr_t)&resp,
		.fd = file_fd,
		.oflags = oflags,
	};
	int ret;

	ret = uv_cmd(fd, IB_USER_VERBS_CMD_OPEN_XRCD, &cmd, sizeof(cmd), sizeof(resp));
	if (!ret)
		*xrcd = resp.xrcd_handle;
	return ret;
}

static inline int close_xrcd(int fd, __u32 xrcd)
{
	struct ib_uverbs_close_xrcd cmd = { .xrcd_handle = xrcd };

	return uv_cmd(fd, IB_USER_VERBS_CMD_CLOSE_XRCD, &cmd, sizeof(cmd), 0);
}

/*
 * CREATE_CQ of cqe entries on comp_vector, without a completion channel:
 * resp (resp_len bytes: the core response, then room for the driver's)
 * receives the answer.
 */
static inline int create_cq_raw(int fd, __u32 cqe, __u32 comp_vector, void *resp,
				size_t resp_len)
{
	struct ib_uverbs_create_cq cmd = {
		.response = (uintptr_t)resp,
		.cqe = cqe,
		.comp_vector = comp_vector,
		.comp_channel = -1,
	};

	memset(resp, 0, resp_len);
	return uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd), resp_len);
}

/*
 * RESIZE_CQ of cq to cqe entries: resp (resp_len bytes: the core response,
 * then room for the driver's) receives the answer.
 */
static inline int resize_cq_raw(int fd, __u32 cq, __u32 cqe, void *resp, size_t resp_len)
{
	struct ib_uverbs_resize_cq cmd = {
		.response = (uintptr_t)resp,
		.cq_handle = cq,
		.cqe = cqe,
	};

	memset(resp, 0, resp_len);
	return uv_cmd(fd, IB_USER_VERBS_CMD_RESIZE_CQ, &cmd, sizeof(cmd), resp_len);
}

static inline int destroy_cq(int fd, __u32 cq)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq cmd = {
		.response = (uintptr_t)&resp,
		.cq_handle = cq,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd), sizeof(resp));
}

/* What CREATE_QP asks for: capacities, type (0: UD), sq_sig_all. */
struct qp_req {
	__u32 send_wr, recv_wr, send_sge, recv_sge, inline_data;
	__u8 type, sig_all;
};

/*
 * CREATE_QP of req on pd with cq for both queues (user_handle 0x5151);
 * extra_in bytes (up to 16) of driver input after the command; resp
 * (resp_len bytes: the core response, then room for the driver's)
 * receives the answer.
 */
static inline int create_qp_raw(int fd, __u32 pd, __u32 cq, const struct qp_req *req,
				size_t extra_in, void *resp, size_t resp_len)
{
	struct {
		struct ib_uverbs_create_qp cmd;
		__u64 driver[2];
	} in = {
		.cmd = {
			.response = (uintptr_t)resp,
			.user_handle = 0x5151,
			.pd_handle = pd,
			.send_cq_handle = cq,
			.recv_cq_handle = cq,
			.max_send_wr = req->send_wr,
			.max_recv_wr = req->recv_wr,
			.max_send_sge = req->send_sge,
			.max_recv_sge = req->recv_sge,
			.max_inline_data = req->inline_data,
			.sq_sig_all = req->sig_all,
			.qp_type = req->type ? req->type : IB_UVERBS_QPT_UD,
		},
	};

	if (extra_in > sizeof(in.driver))
		return -E2BIG;
	memset(resp, 0, resp_len);
	return uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &in, sizeof(in.cmd) + extra_in, resp_len);
}

/* Not in the uapi headers: enum ib_qp_state, enum ib_qp_attr_mask. */
enum { IB_QPS_RESET, IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS, IB_QPS_SQD, IB_QPS_SQE, IB_QPS_ERR };
enum {
	QP_STATE = 1 << 0, QP_CUR_STATE = 1 << 1, QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	QP_ACCESS_FLAGS = 1 << 3, QP_PKEY_INDEX = 1 << 4, QP_PORT = 1 << 5,
	QP_QKEY = 1 << 6, QP_AV = 1 << 7, QP_PATH_MTU = 1 << 8, QP_TIMEOUT = 1 << 9,
	QP_RETRY_CNT = 1 << 10, QP_RNR_RETRY = 1 << 11, QP_RQ_PSN = 1 << 12,
	QP_MAX_QP_RD_ATOMIC = 1 << 13, QP_MIN_RNR_TIMER = 1 << 15,
	QP_SQ_PSN = 1 << 16, QP_MAX_DEST_RD_ATOMIC = 1 << 17, QP_DEST_QPN = 1 << 20,
};

static inline int modify_qp(int fd, struct ib_uverbs_modify_qp *cmd)
{
	return uv_cmd(fd, IB_USER_VERBS_CMD_MODIFY_QP, cmd, sizeof(*cmd), 0);
}

static inline int destroy_qp(int fd, __u32 qp)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd), sizeof(resp));
}

/* VmPin of /proc/self/status in kB (the mm's pinned pages), or -1. */
static inline long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* REG_MR of len bytes at start, hca_va iova, with access flags, on pd. */
static inline int reg_mr(int fd, __u32 pd, const void *start, __u64 len, __u64 iova,
			 __u32 access, struct ib_uverbs_reg_mr_resp *resp)
{
	struct ib_uverbs_reg_mr cmd = {
		.response = (uintptr_t)resp,
		.start = (uintptr_t)start,
		.length = len,
		.hca_va = iova,
		.pd_handle = pd,
		.access_flags = access,
	};

	memset(resp, 0, sizeof(*resp));
	return uv_cmd(fd, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), sizeof(*resp));
}

/* REREG_MR of mr: what flags name (IB_MR_REREG_*) changes. */
static inline int rereg_mr(int fd, __u32 mr, __u32 flags, __u32 pd, __u32 access,
			   struct ib_uverbs_rereg_mr_resp *resp)
{
	struct ib_uverbs_rereg_mr cmd = {
		.response = (uintptr_t)resp,
		.mr_handle = mr,
		.flags = flags,
		.pd_handle = pd,
		.access_flags = access,
	};

	memset(resp, 0, sizeof(*resp));
	return uv_cmd(fd, IB_USER_VERBS_CMD_REREG_MR, &cmd, sizeof(cmd), sizeof(*resp));
}

static inline int dereg_mr(int fd, __u32 mr)
{
	struct ib_uverbs_dereg_mr cmd = { .mr_handle = mr };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd), 0);
}

#endif /* _RVERBS_TESTS_UVERBS_RAW_H */
