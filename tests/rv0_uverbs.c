// SPDX-License-Identifier: GPL-2.0
/*
 * The raw uverbs interface of a soft-RoCE device, with the exact errors the
 * kernel gives: no libibverbs, no provider, only write() of the legacy
 * command ABI of <rdma/ib_user_verbs.h> on /dev/infiniband/uverbsN.
 *
 * The device is named by $RV_DEV (rv0, or rxe0 for reference).  It must
 * speak the soft-RoCE user ABI (<rdma/rdma_user_rxe.h>) on one RoCE port.
 * Without $RV_DEV the whole program is skipped.
 *
 * The verbs a device may leave out are asserted to fail with EOPNOTSUPP
 * only when told so, and skipped otherwise:
 *   RV_EXPECT_NO_MW=1   ALLOC_MW
 *   RV_EXPECT_NO_SRQ=1  CREATE_SRQ
 * and RV_EXPECT_UD_ONLY=1 pins what a device with UD QPs only refuses
 * (RC and UC QPs, a path on a UD QP), which rxe grants; RV_EXPECT_NO_ODP=1
 * that on-demand paging and flushes are refused (EOPNOTSUPP), which rxe
 * offers.
 * The XRC domain cases run when QUERY_DEVICE reports IB_DEVICE_XRC and are
 * skipped otherwise (rxe has no XRC); the RoCE v1 case runs when the port
 * has an "IB/RoCE v1" GID (rxe has only RoCE v2 ones).
 *
 * The cases of fixture "limits" exhaust the device's objects and run only
 * with RV_LIMITS=1, on a device made with small limits (rverbs.ko's
 * max_pd, max_ah, max_xrcd); RV_MAX_XRCD gives the XRCD limit, which
 * QUERY_DEVICE does not report.
 *
 * Every expected errno names, in a comment, the kernel function that
 * returns it (drivers/infiniband/core/ unless said otherwise).
 */

#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include <linux/netlink.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_rxe.h>

#include "harness.h"
#include "uverbs_raw.h"

/*
 * Not in the uapi headers: enum rdma_link_layer, enum ib_mw_type and the
 * uverbs ABI version of soft-RoCE (sw/rxe/rxe.h: RXE_UVERBS_ABI_VERSION).
 */
#define RV_LINK_LAYER_ETHERNET	2
#define RV_MW_TYPE_1		1
#define RV_RXE_ABI_VERSION	2

/* The port of the device; ports are numbered from 1. */
#define PORT	1

/*
 * The CREATE_AH response of the soft-RoCE ABI: the core response, then the
 * driver's at the end of it (driver_udata.outbuf = response + resp_size in
 * uverbs_main.c:ib_uverbs_write).
 */
struct ah_resp {
	__u32 ah_handle;
	struct rxe_create_ah_resp rxe;
};

static_assert(offsetof(struct ah_resp, rxe) == sizeof(struct ib_uverbs_create_ah_resp),
	      "the rxe response follows the core one");

/* ::ffff:239.1.1.1 and ff0e::1: multicast, no neighbour to resolve. */
static const __u8 dgid_v4_mcast[16] = {
	[10] = 0xff, [11] = 0xff, [12] = 239, [13] = 1, [14] = 1, [15] = 1,
};

static const __u8 dgid_v6_mcast[16] = { [0] = 0xff, [1] = 0x0e, [15] = 1 };

/*
 * fe80::211:22ff:fe33:4455: the link-local address of the made-up MAC
 * 00:11:22:33:44:55 (modified EUI-64), a unicast GID with no neighbour.
 */
static const __u8 dgid_ll[16] = {
	[0] = 0xfe, [1] = 0x80,
	[8] = 0x02, [9] = 0x11, [10] = 0x22, [11] = 0xff,
	[12] = 0xfe, [13] = 0x33, [14] = 0x44, [15] = 0x55,
};

#define DGID_LL_TEXT	"fe80:0000:0000:0000:0211:22ff:fe33:4455"
#define DGID_LL_MAC	"00:11:22:33:44:55"

static int env_is_1(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

/* A device file with a context: the fd, or -errno. */
static int open_context(int *async_fd)
{
	struct ib_uverbs_get_context_resp resp = {};
	int fd = uverbs_open(getenv("RV_DEV")), ret;

	if (fd < 0)
		return fd;
	ret = get_context(fd, &resp);
	if (ret) {
		close(fd);
		return ret;
	}
	*async_fd = resp.async_fd;
	return fd;
}

static int query_device(int fd, struct ib_uverbs_query_device_resp *resp)
{
	struct ib_uverbs_query_device cmd = { .response = (uintptr_t)resp };

	return uv_cmd(fd, IB_USER_VERBS_CMD_QUERY_DEVICE, &cmd, sizeof(cmd), sizeof(*resp));
}

static int query_port(int fd, __u8 port, struct ib_uverbs_query_port_resp *resp,
		      size_t out_len)
{
	struct ib_uverbs_query_port cmd = {
		.response = (uintptr_t)resp,
		.port_num = port,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_QUERY_PORT, &cmd, sizeof(cmd), out_len);
}

/*
 * CREATE_AH on PD with a GRH from sgid_index to dgid.  out_len is the size
 * of the response buffer given to the kernel; resp receives it.
 */
static int create_ah_out(int fd, __u32 pd, __u8 port, __u8 is_global, __u8 sgid_index,
			 const __u8 *dgid, size_t out_len, struct ah_resp *resp)
{
	struct ib_uverbs_create_ah cmd = {
		.response = (uintptr_t)resp,
		.user_handle = 0x1234,
		.pd_handle = pd,
		.attr = {
			.grh = {
				.sgid_index = sgid_index,
				.hop_limit = 64,
			},
			.is_global = is_global,
			.port_num = port,
		},
	};

	memset(resp, 0, sizeof(*resp));
	memcpy(cmd.attr.grh.dgid, dgid, 16);
	return uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_AH, &cmd, sizeof(cmd), out_len);
}

static int create_ah(int fd, __u32 pd, __u8 sgid_index, const __u8 *dgid,
		     struct ah_resp *resp)
{
	return create_ah_out(fd, pd, PORT, 1, sgid_index, dgid, sizeof(*resp), resp);
}

static int destroy_ah(int fd, __u32 ah)
{
	struct ib_uverbs_destroy_ah cmd = { .ah_handle = ah };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DESTROY_AH, &cmd, sizeof(cmd), 0);
}

/*
 * The GID table of the port in sysfs: the first index below limit whose
 * type is type ("RoCE v2", "IB/RoCE v1"), or with type NULL, the first
 * empty one (reading its type fails, sysfs.c:_show_port_gid_attr).
 * -ENOENT when there is none.
 */
static int gid_index(const char *type, int limit)
{
	const char *dev = getenv("RV_DEV");
	char path[128], buf[32];
	int i, n;

	if (limit > 256)	/* sgid_index is a __u8 */
		limit = 256;
	for (i = 0; i < limit; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev, PORT, i);
		n = read_text(path, buf, sizeof(buf));
		if (!type && n == -EINVAL)
			return i;
		if (type && n > 0 && !strcmp(buf, type))
			return i;
	}
	return -ENOENT;
}

/* A fresh regular file (unlinked): the fd, or -errno. */
static int temp_file(void)
{
	char path[] = "/tmp/rv0_uverbs.XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/*
 * What RDMA netlink says of $RV_DEV: the facts rdma-core binds a provider
 * by, from RDMA_NLDEV_CMD_GET_CHARDEV of client "uverbs"
 * (uverbs_main.c:ib_uverbs_get_nl_info), and the restrack object counts of
 * RDMA_NLDEV_CMD_RES_GET (nldev.c:fill_res_info).
 */
struct nl_info {
	__u32 dev_index;
	__u32 driver_id;
	int has_driver_id;
	__u64 abi;
	char chardev[32];
	char entry[16];
	__u64 pds;
	__u64 ctxs;
};

typedef void (*nl_attr_fn)(struct nl_info *info, struct nlattr *a, void *data);

static void nl_put(struct nlmsghdr *nh, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Hand each attribute of len bytes at p to fn. */
static void nl_each(struct nl_info *info, void *p, int len, nl_attr_fn fn)
{
	struct nlattr *a = p;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		fn(info, a, (char *)a + NLA_HDRLEN);
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
}

/*
 * Send one request and hand each attribute of each answer to fn.  0, or
 * -errno of the kernel's answer.
 */
static int nl_talk(struct nlmsghdr *req, struct nl_info *info, nl_attr_fn fn)
{
	static __u64 buf[4096];
	int sk, ret = 0, done = 0;
	ssize_t n;

	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (sk < 0)
		return -errno;
	if (send(sk, req, req->nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	while (!done) {
		struct nlmsghdr *nh = (struct nlmsghdr *)buf;

		n = recv(sk, buf, sizeof(buf), 0);
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		for (; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				ret = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				goto out;
			}
			nl_each(info, NLMSG_DATA(nh), NLMSG_PAYLOAD(nh, 0), fn);
			if (!(nh->nlmsg_flags & NLM_F_MULTI))
				done = 1;
		}
	}
out:
	close(sk);
	return ret;
}

/* In the device dump: each device's index comes before its name. */
static void nl_dev(struct nl_info *info, struct nlattr *a, void *data)
{
	static __u32 index;

	if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
		memcpy(&index, data, sizeof(index));
	if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME && !strcmp(data, getenv("RV_DEV")))
		info->dev_index = index;
}

static void nl_chardev(struct nl_info *info, struct nlattr *a, void *data)
{
	__u64 v = 0;

	switch (a->nla_type) {
	case RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID:
		/* nla_put_u32, though the header says u64: take either. */
		if (a->nla_len - NLA_HDRLEN == 4) {
			memcpy(&info->driver_id, data, 4);
		} else {
			memcpy(&v, data, 8);
			info->driver_id = v;
		}
		info->has_driver_id = 1;
		break;
	case RDMA_NLDEV_ATTR_CHARDEV_ABI:
		memcpy(&info->abi, data, 8);
		break;
	case RDMA_NLDEV_ATTR_CHARDEV_NAME:
		snprintf(info->chardev, sizeof(info->chardev), "%s", (char *)data);
		break;
	}
}

/* RES_SUMMARY { RES_SUMMARY_ENTRY { ENTRY_NAME, ENTRY_CURR } ... } */
static void nl_res(struct nl_info *info, struct nlattr *a, void *data)
{
	__u64 curr;

	switch (a->nla_type & NLA_TYPE_MASK) {
	case RDMA_NLDEV_ATTR_RES_SUMMARY:
	case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY:
		nl_each(info, data, a->nla_len - NLA_HDRLEN, nl_res);
		break;
	case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME:
		snprintf(info->entry, sizeof(info->entry), "%s", (char *)data);
		break;
	case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR:
		memcpy(&curr, data, sizeof(curr));
		if (!strcmp(info->entry, "pd"))
			info->pds = curr;
		if (!strcmp(info->entry, "ctx"))
			info->ctxs = curr;
		break;
	}
}

/* A request for $RV_DEV's index: the index is looked up first. */
static int nl_dev_request(struct nl_info *info, __u64 *buf, __u16 cmd)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int ret;

	memset(info, 0, sizeof(*info));
	info->dev_index = -1;
	memset(buf, 0, 256);
	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nh->nlmsg_seq = 1;
	ret = nl_talk(nh, info, nl_dev);
	if (ret)
		return ret;
	if (info->dev_index == (__u32)-1)
		return -ENODEV;

	memset(buf, 0, 256);
	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nh->nlmsg_flags = NLM_F_REQUEST;
	nh->nlmsg_seq = 2;
	nl_put(nh, RDMA_NLDEV_ATTR_DEV_INDEX, &info->dev_index, sizeof(info->dev_index));
	return 0;
}

static int nl_info(struct nl_info *info)
{
	__u64 buf[32];
	int ret;

	ret = nl_dev_request(info, buf, RDMA_NLDEV_CMD_GET_CHARDEV);
	if (ret)
		return ret;
	nl_put((struct nlmsghdr *)buf, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", sizeof("uverbs"));
	return nl_talk((struct nlmsghdr *)buf, info, nl_chardev);
}

/* The PDs and user contexts of $RV_DEV (restrack), in info. */
static int nl_res_count(struct nl_info *info)
{
	__u64 buf[32];
	int ret;

	ret = nl_dev_request(info, buf, RDMA_NLDEV_CMD_RES_GET);
	if (ret)
		return ret;
	return nl_talk((struct nlmsghdr *)buf, info, nl_res);
}

static int is_rxe_abi(void)
{
	struct nl_info info;

	return !nl_info(&info) && info.has_driver_id && info.driver_id == RDMA_DRIVER_RXE;
}

/* ------------------------------------------------------------------ */
/* The command framing and the context (no context open yet).         */

TEST(get_context_succeeds_once_then_einval)
{
	struct ib_uverbs_get_context_resp resp = {};
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, get_context(fd, &resp));
	/* The async event fd is a file of this process. */
	ASSERT_LE(0, fcntl(resp.async_fd, F_GETFD));
	/* uverbs_cmd.c:ib_init_ucontext: file->ucontext is already set. */
	ASSERT_EQ(-EINVAL, get_context(fd, &resp));
	close(fd);
}

TEST(alloc_pd_before_get_context_einval)
{
	int fd = uverbs_open(getenv("RV_DEV"));
	__u32 pd;

	ASSERT_LE(0, fd);
	/* rdma_core.c:alloc_uobj -> ib_core_uverbs.c:ib_uverbs_get_ucontext_file */
	ASSERT_EQ(-EINVAL, alloc_pd(fd, &pd));
	close(fd);
}

TEST(query_device_before_get_context_einval)
{
	struct ib_uverbs_query_device_resp resp;
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	/* uverbs_cmd.c:ib_uverbs_query_device -> ib_uverbs_get_ucontext_file */
	ASSERT_EQ(-EINVAL, query_device(fd, &resp));
	close(fd);
}

TEST(write_shorter_than_header_einval)
{
	struct ib_uverbs_cmd_hdr hdr = { .command = IB_USER_VERBS_CMD_GET_CONTEXT };
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	/* uverbs_main.c:ib_uverbs_write: count < sizeof(hdr) */
	ASSERT_EQ(-1, write(fd, &hdr, 4));
	ASSERT_EQ(EINVAL, errno);
	close(fd);
}

TEST(in_words_not_write_length_einval)
{
	struct ib_uverbs_get_context_resp resp;
	__u64 buf[2] = {};
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_GET_CONTEXT,
		.in_words = 6,		/* 24 bytes said, 16 written */
		.out_words = sizeof(resp) / 4,
	};
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)&resp };
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(&buf[1], &cmd, sizeof(cmd));
	/* uverbs_main.c:verify_hdr: in_words * 4 != count */
	ASSERT_EQ(-1, write(fd, buf, sizeof(buf)));
	ASSERT_EQ(EINVAL, errno);
	close(fd);
}

TEST(request_shorter_than_command_enospc)
{
	__u64 response = 0;
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	/* uverbs_main.c:verify_hdr: count < req_size + sizeof(hdr), header only */
	ASSERT_EQ(-ENOSPC, uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &response, 0, 8));
	close(fd);
}

TEST(unknown_command_eopnotsupp)
{
	__u64 response = 0;
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	/* rdma_core.h:uapi_get_method: cmd_idx >= uapi->num_write */
	ASSERT_EQ(-EOPNOTSUPP, uv_cmd(fd, 0x7f, &response, sizeof(response), 0));
	close(fd);
}

TEST(command_with_reserved_bits_einval)
{
	struct ib_uverbs_get_context_resp resp;
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)&resp };
	int fd = uverbs_open(getenv("RV_DEV"));

	ASSERT_LE(0, fd);
	/* rdma_core.h:uapi_get_method: bits outside COMMAND_MASK|FLAG_EXTENDED */
	ASSERT_EQ(-EINVAL, uv_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT | 0x100, &cmd,
				  sizeof(cmd), sizeof(resp)));
	close(fd);
}

TEST(nldev_chardev_is_rxe_abi_2)
{
	struct nl_info info;
	char name[32];

	ASSERT_EQ(0, uverbs_name(getenv("RV_DEV"), name, sizeof(name)));
	ASSERT_EQ(0, nl_info(&info));
	ASSERT_STREQ(name, info.chardev);
	/* uverbs_main.c:ib_uverbs_get_nl_info: ops.uverbs_abi_ver, ops.driver_id */
	ASSERT_EQ((__u64)RV_RXE_ABI_VERSION, info.abi);
	ASSERT_TRUE(info.has_driver_id);
	ASSERT_EQ((__u32)RDMA_DRIVER_RXE, info.driver_id);
}

TEST(sysfs_abi_version_is_rxe_abi)
{
	char name[32], path[96], buf[16];

	ASSERT_EQ(0, uverbs_name(getenv("RV_DEV"), name, sizeof(name)));
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/abi_version", name);
	/* uverbs_main.c:abi_version_show: ops.uverbs_abi_ver */
	ASSERT_LT(0, read_text(path, buf, sizeof(buf)));
	ASSERT_EQ(RV_RXE_ABI_VERSION, atoi(buf));
}

/* ------------------------------------------------------------------ */
/* With a context.                                                    */

FIXTURE(ctx) {
	int fd;
	int async_fd;
	struct ib_uverbs_query_device_resp dev;
	struct ib_uverbs_query_port_resp port;
	int xrc;
};

FIXTURE_SETUP(ctx)
{
	self->fd = open_context(&self->async_fd);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, query_device(self->fd, &self->dev));
	ASSERT_EQ(0, query_port(self->fd, PORT, &self->port, sizeof(self->port)));
	self->xrc = !!(self->dev.device_cap_flags & IB_UVERBS_DEVICE_XRC);
}

FIXTURE_TEARDOWN(ctx)
{
	close(self->fd);
	close(self->async_fd);
}

#define NO_XRC "%s has no XRC (IB_DEVICE_XRC clear in QUERY_DEVICE)"

TEST_F(ctx, query_device_one_port)
{
	ASSERT_EQ(1, self->dev.phys_port_cnt);
	ASSERT_NE(0U, self->dev.max_pd);
	ASSERT_NE(0U, self->dev.max_ah);
}

TEST_F(ctx, query_port_1_roce)
{
	ASSERT_EQ(RV_LINK_LAYER_ETHERNET, self->port.link_layer);
	ASSERT_EQ(1, self->port.pkey_tbl_len);
	ASSERT_LT(0U, self->port.gid_tbl_len);
}

TEST_F(ctx, query_port_0_einval)
{
	struct ib_uverbs_query_port_resp resp;

	/* device.c:ib_query_port: !rdma_is_port_valid */
	ASSERT_EQ(-EINVAL, query_port(self->fd, 0, &resp, sizeof(resp)));
}

TEST_F(ctx, query_port_2_einval)
{
	struct ib_uverbs_query_port_resp resp;

	/* device.c:ib_query_port: !rdma_is_port_valid */
	ASSERT_EQ(-EINVAL, query_port(self->fd, 2, &resp, sizeof(resp)));
}

TEST_F(ctx, query_port_out_too_small_enospc)
{
	struct ib_uverbs_query_port_resp resp;

	/* uverbs_main.c:verify_hdr: out_words * 4 < resp_size */
	ASSERT_EQ(-ENOSPC, query_port(self->fd, PORT, &resp, sizeof(resp) - 4));
}

TEST_F(ctx, alloc_and_dealloc_pd)
{
	__u32 pd1, pd2;

	ASSERT_EQ(0, alloc_pd(self->fd, &pd1));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd2));
	ASSERT_NE(pd1, pd2);
	ASSERT_EQ(0, dealloc_pd(self->fd, pd1));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd2));
}

TEST_F(ctx, dealloc_pd_twice_enoent)
{
	__u32 pd;

	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	/* rdma_core.c:lookup_get_idr_uobject: the handle left the xarray */
	ASSERT_EQ(-ENOENT, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, dealloc_pd_with_live_ah_ebusy)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
	/* uverbs_std_types.c:uverbs_free_pd: pd->usecnt != 0 */
	ASSERT_EQ(-EBUSY, dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, dealloc_pd_of_ah_handle_einval)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
	/* rdma_core.c:rdma_lookup_get_uobject: uobj->uapi_object != obj */
	ASSERT_EQ(-EINVAL, dealloc_pd(self->fd, ah.ah_handle));
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_ipv4_mcast_and_destroy)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
	/* sw/rxe/rxe_verbs.c:rxe_create_ah: ah_num is a pool index > 0 */
	if (is_rxe_abi())
		ASSERT_NE(0U, ah.rxe.ah_num);
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_ipv6_mcast_and_destroy)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah1, ah2;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v6_mcast, &ah1));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v6_mcast, &ah2));
	ASSERT_NE(ah1.ah_handle, ah2.ah_handle);
	if (is_rxe_abi()) {
		ASSERT_NE(0U, ah1.rxe.ah_num);
		ASSERT_NE(0U, ah2.rxe.ah_num);
		ASSERT_NE(ah1.rxe.ah_num, ah2.rxe.ah_num);
	}
	ASSERT_EQ(0, destroy_ah(self->fd, ah1.ah_handle));
	ASSERT_EQ(0, destroy_ah(self->fd, ah2.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

/*
 * AH numbers are given cyclically (rxe_pool.c: xa_alloc_cyclic from the
 * last one given), not the lowest free one: an AH made after one is
 * destroyed gets the next number, not the number just freed.
 */
TEST_F(ctx, ah_num_given_cyclically)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah1, ah2;
	__u32 pd;

	ASSERT_TRUE(is_rxe_abi());	/* both devices give AH numbers */
	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v6_mcast, &ah1));
	ASSERT_EQ(0, destroy_ah(self->fd, ah1.ah_handle));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v6_mcast, &ah2));
	ASSERT_EQ(ah1.rxe.ah_num + 1, ah2.rxe.ah_num);
	ASSERT_EQ(0, destroy_ah(self->fd, ah2.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, destroy_ah_twice_enoent)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	/* rdma_core.c:lookup_get_idr_uobject: the handle left the xarray */
	ASSERT_EQ(-ENOENT, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, destroy_ah_of_pd_handle_einval)
{
	__u32 pd;

	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* rdma_core.c:rdma_lookup_get_uobject: uobj->uapi_object != obj */
	ASSERT_EQ(-EINVAL, destroy_ah(self->fd, pd));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_core_response_only_succeeds)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/*
	 * No room for the driver's response: sw/rxe/rxe_verbs.c:rxe_create_ah
	 * takes the caller for an old provider and writes no ah_num.
	 */
	ASSERT_EQ(0, create_ah_out(self->fd, pd, PORT, 1, sgid, dgid_v4_mcast,
				   sizeof(struct ib_uverbs_create_ah_resp), &ah));
	ASSERT_EQ(0U, ah.rxe.ah_num);
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

/*
 * Oversized udata: more room for the response than the driver fills, and
 * driver input the driver does not define.  uverbs hands both to the driver
 * (uverbs_main.c:ib_uverbs_write, driver_udata); soft-RoCE writes ah_num at
 * the start of its part and reads no input (sw/rxe/rxe_verbs.c), so both
 * succeed, and rv0 must do the same.
 */
TEST_F(ctx, create_ah_oversized_response_succeeds)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	__u64 big[8];
	struct ah_resp *ah = (struct ah_resp *)big;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	memset(big, 0xa5, sizeof(big));
	ASSERT_EQ(0, create_ah_out(self->fd, pd, PORT, 1, sgid, dgid_v4_mcast,
				   sizeof(big), ah));
	if (is_rxe_abi())
		ASSERT_NE(0U, ah->rxe.ah_num);
	ASSERT_EQ(0, destroy_ah(self->fd, ah->ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_with_driver_input_succeeds)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct {
		struct ib_uverbs_create_ah cmd;
		__u64 driver_in[4];
	} req = {};
	struct ah_resp ah = {};
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	req.cmd.response = (uintptr_t)&ah;
	req.cmd.pd_handle = pd;
	req.cmd.attr.grh.sgid_index = sgid;
	req.cmd.attr.grh.hop_limit = 64;
	req.cmd.attr.is_global = 1;
	req.cmd.attr.port_num = PORT;
	memcpy(req.cmd.attr.grh.dgid, dgid_v6_mcast, 16);
	memset(req.driver_in, 0x5a, sizeof(req.driver_in));
	ASSERT_EQ(0, uv_cmd(self->fd, IB_USER_VERBS_CMD_CREATE_AH, &req, sizeof(req),
			    sizeof(ah)));
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, alloc_pd_with_driver_input_succeeds)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct {
		struct ib_uverbs_alloc_pd cmd;
		__u64 driver_in[4];
	} req = { .cmd.response = (uintptr_t)&resp };

	memset(req.driver_in, 0x5a, sizeof(req.driver_in));
	ASSERT_EQ(0, uv_cmd(self->fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req),
			    sizeof(resp)));
	ASSERT_EQ(0, dealloc_pd(self->fd, resp.pd_handle));
}

TEST_F(ctx, create_ah_out_too_small_enospc)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* uverbs_main.c:verify_hdr: out_words * 4 < resp_size */
	ASSERT_EQ(-ENOSPC, create_ah_out(self->fd, pd, PORT, 1, sgid, dgid_v4_mcast, 0, &ah));
	/* Nothing was created: the PD is free. */
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_port_0_einval)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* uverbs_cmd.c:ib_uverbs_create_ah: !rdma_is_port_valid */
	ASSERT_EQ(-EINVAL, create_ah_out(self->fd, pd, 0, 1, sgid, dgid_v4_mcast,
					 sizeof(ah), &ah));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_port_2_einval)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* uverbs_cmd.c:ib_uverbs_create_ah: !rdma_is_port_valid */
	ASSERT_EQ(-EINVAL, create_ah_out(self->fd, pd, 2, 1, sgid, dgid_v4_mcast,
					 sizeof(ah), &ah));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_without_grh_einval)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* verbs.c:rdma_check_ah_attr: RDMA_AH_ATTR_TYPE_ROCE without IB_AH_GRH */
	ASSERT_EQ(-EINVAL, create_ah_out(self->fd, pd, PORT, 0, sgid, dgid_v4_mcast,
					 sizeof(ah), &ah));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_empty_sgid_enodata)
{
	int sgid = gid_index(NULL, self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* cache.c:rdma_get_gid_attr: !is_gid_entry_valid */
	ASSERT_EQ(-ENODATA, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_sgid_past_table_einval)
{
	struct ah_resp ah;
	__u32 pd;

	if (self->port.gid_tbl_len > 255)
		SKIP(return, "GID table of %u entries: no __u8 sgid_index is past it",
		     self->port.gid_tbl_len);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* cache.c:rdma_get_gid_attr: index >= table->sz */
	ASSERT_EQ(-EINVAL, create_ah(self->fd, pd, self->port.gid_tbl_len, dgid_v4_mcast, &ah));
	ASSERT_EQ(-EINVAL, create_ah(self->fd, pd, 255, dgid_v4_mcast, &ah));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_ah_stale_pd_enoent)
{
	int sgid = gid_index("RoCE v2", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;

	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	/* rdma_core.c:lookup_get_idr_uobject, from uobj_get_obj_read */
	ASSERT_EQ(-ENOENT, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ah));
}

/*
 * The AH table of an rverbs device in debugfs (sw/device.rs): one line
 * "ah_num type port sgid_index dgid dmac ..." per AH.  1 when it shows AH
 * num with that sgid_index, dgid and dmac, 0 when it does not, -errno
 * when there is no such file (not an rverbs device).
 */
static int debugfs_ah_has(__u32 num, int sgid, const char *dgid, const char *dmac)
{
	char path[128], want[128];
	static char buf[16384];
	int n;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rverbs/%s/ah", getenv("RV_DEV"));
	n = read_text(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	snprintf(want, sizeof(want), "\n%u roce %d %d %s %s ", num, PORT, sgid, dgid, dmac);
	return !!strstr(buf, want);
}

TEST_F(ctx, create_ah_roce_v1_link_local)
{
	int sgid = gid_index("IB/RoCE v1", self->port.gid_tbl_len);
	struct ah_resp ah;
	__u32 pd;
	int ret;

	if (sgid < 0)
		SKIP(return, "%s has no RoCE v1 GID (gid_attrs/types of port %d)",
		     getenv("RV_DEV"), PORT);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/*
	 * verbs.c:ib_resolve_unicast_gid_dmac: a link-local destination from a
	 * RoCE v1 GID needs no neighbour, the MAC is in the GID
	 * (addr.c:rdma_get_ll_mac).
	 */
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_ll, &ah));
	if (is_rxe_abi()) {
		ASSERT_NE(0U, ah.rxe.ah_num);
		ret = debugfs_ah_has(ah.rxe.ah_num, sgid, DGID_LL_TEXT, DGID_LL_MAC);
		if (ret != -ENOENT)
			ASSERT_EQ(1, ret);
	}
	ASSERT_EQ(0, destroy_ah(self->fd, ah.ah_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, open_xrcd_without_inode)
{
	__u32 xrcd;

	if (!self->xrc) {
		/*
		 * uverbs_cmd.c: UAPI_DEF_OBJ_NEEDS_FN(alloc_xrcd) drops the
		 * method, uverbs_uapi.c:ib_uverbs_notsupp answers.
		 */
		ASSERT_EQ(-EOPNOTSUPP, open_xrcd(self->fd, -1, 0, &xrcd));
		return;
	}
	ASSERT_EQ(0, open_xrcd(self->fd, -1, 0, &xrcd));
	ASSERT_EQ(0, close_xrcd(self->fd, xrcd));
}

TEST_F(ctx, open_xrcd_create_on_file)
{
	int file = temp_file();
	__u32 xrcd;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_LE(0, file);
	ASSERT_EQ(0, open_xrcd(self->fd, file, O_CREAT, &xrcd));
	ASSERT_EQ(0, close_xrcd(self->fd, xrcd));
	close(file);
}

TEST_F(ctx, open_xrcd_fresh_file_without_create_eagain)
{
	int file = temp_file();
	__u32 xrcd;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_LE(0, file);
	/* uverbs_cmd.c:ib_uverbs_open_xrcd: no XRCD on the inode, no O_CREAT */
	ASSERT_EQ(-EAGAIN, open_xrcd(self->fd, file, 0, &xrcd));
	close(file);
}

TEST_F(ctx, open_xrcd_excl_on_inode_with_xrcd_einval)
{
	int file = temp_file();
	__u32 xrcd, other;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_LE(0, file);
	ASSERT_EQ(0, open_xrcd(self->fd, file, O_CREAT, &xrcd));
	/* uverbs_cmd.c:ib_uverbs_open_xrcd: xrcd && O_EXCL */
	ASSERT_EQ(-EINVAL, open_xrcd(self->fd, file, O_CREAT | O_EXCL, &other));
	ASSERT_EQ(-EINVAL, open_xrcd(self->fd, file, O_EXCL, &other));
	ASSERT_EQ(0, close_xrcd(self->fd, xrcd));
	close(file);
}

TEST_F(ctx, open_xrcd_bad_fd_ebadf)
{
	int file = temp_file();
	__u32 xrcd;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_LE(0, file);
	close(file);
	/* uverbs_cmd.c:ib_uverbs_open_xrcd: fdget fails */
	ASSERT_EQ(-EBADF, open_xrcd(self->fd, file, O_CREAT, &xrcd));
}

TEST_F(ctx, close_xrcd_twice_enoent)
{
	__u32 xrcd;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_EQ(0, open_xrcd(self->fd, -1, 0, &xrcd));
	ASSERT_EQ(0, close_xrcd(self->fd, xrcd));
	/* rdma_core.c:lookup_get_idr_uobject: the handle left the xarray */
	ASSERT_EQ(-ENOENT, close_xrcd(self->fd, xrcd));
}

TEST_F(ctx, close_xrcd_of_pd_handle_einval)
{
	__u32 pd;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* rdma_core.c:rdma_lookup_get_uobject: uobj->uapi_object != obj */
	ASSERT_EQ(-EINVAL, close_xrcd(self->fd, pd));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, xrcd_of_inode_shared_by_two_contexts)
{
	int file = temp_file(), fd2, async2;
	__u32 x1, x2, x3;

	if (!self->xrc)
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_LE(0, file);
	fd2 = open_context(&async2);
	ASSERT_LE(0, fd2);

	ASSERT_EQ(0, open_xrcd(self->fd, file, O_CREAT, &x1));
	/* The second context finds the XRCD of the inode: no O_CREAT needed. */
	ASSERT_EQ(0, open_xrcd(fd2, file, 0, &x2));
	/* uverbs_cmd.c:ib_uverbs_open_xrcd: xrcd && O_EXCL, from either side */
	ASSERT_EQ(-EINVAL, open_xrcd(fd2, file, O_CREAT | O_EXCL, &x3));

	/*
	 * Closing it in the first context only drops a use
	 * (uverbs_cmd.c:ib_uverbs_dealloc_xrcd): the inode still has it.
	 */
	ASSERT_EQ(0, close_xrcd(self->fd, x1));
	ASSERT_EQ(0, open_xrcd(self->fd, file, 0, &x3));
	ASSERT_EQ(0, close_xrcd(self->fd, x3));
	ASSERT_EQ(0, close_xrcd(fd2, x2));

	/* The last close removed it from the inode table: EAGAIN again. */
	ASSERT_EQ(-EAGAIN, open_xrcd(self->fd, file, 0, &x3));
	close(fd2);
	close(async2);
	close(file);
}

/*
 * Completion queues, then the verbs a device may leave out: MR, MW, SRQ.
 * Each request of the latter is one
 * that rxe grants (with room for the soft-RoCE driver response where rxe
 * needs it), so that only the device's own answer can make it fail.
 */
struct cq_resp {
	__u32 cq_handle;
	__u32 cqe;
	struct rxe_create_cq_resp rxe;
};

static_assert(offsetof(struct cq_resp, rxe) == sizeof(struct ib_uverbs_create_cq_resp),
	      "the rxe response follows the core one");

struct srq_resp {
	__u32 srq_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srqn;
	struct rxe_create_srq_resp rxe;
};

static_assert(offsetof(struct srq_resp, rxe) == sizeof(struct ib_uverbs_create_srq_resp),
	      "the rxe response follows the core one");

#define MAY_IMPLEMENT "%s is not 1: %s may implement this verb (rxe does)"

/*
 * Completion queues, as soft-RoCE makes them (rxe_verbs.c:rxe_create_cq,
 * rxe_queue.c:rxe_queue_init): the depth is rounded up to a power of two
 * of slots less one, each slot a power of two of at least a cache line
 * (struct rxe_cqe, 72 bytes: 128), after the 384-byte struct rxe_queue_buf;
 * userspace maps the page-aligned whole at mi.offset of the device file.
 * Every expectation below is soft-RoCE's, checked on rxe0 and rv0 alike.
 */
#define CQE_LOG2	7U
#define MAX_CQE		32767U	/* (1 << RXE_MAX_LOG_CQE) - 1 */

static int create_cq_vec(int fd, __u32 cqe, __u32 comp_vector, size_t out_len,
			 struct cq_resp *resp)
{
	return create_cq_raw(fd, cqe, comp_vector, resp, out_len);
}

static int create_cq(int fd, __u32 cqe, struct cq_resp *resp)
{
	return create_cq_vec(fd, cqe, 0, sizeof(*resp), resp);
}

static int req_notify_cq(int fd, __u32 cq, __u32 solicited)
{
	struct ib_uverbs_req_notify_cq cmd = {
		.cq_handle = cq,
		.solicited_only = solicited,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &cmd, sizeof(cmd), 0);
}

/* The slots of a queue of depth n: roundup_pow_of_two(n + 1). */
static __u32 slots_for(__u32 n)
{
	__u32 s = 1;

	while (s < n + 1)
		s <<= 1;
	return s;
}

static __u32 cq_map_size(__u32 slots)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 len = sizeof(struct rxe_queue_buf) + ((__u64)slots << CQE_LOG2);

	return (len + page - 1) / page * page;
}

/*
 * Create a CQ of cqe entries, check what the driver answered, map the ring
 * and check its header, unmap, destroy.
 */
static void check_cq_depth(struct __test_metadata *_metadata, int fd, __u32 cqe)
{
	struct rxe_queue_buf *q;
	struct cq_resp resp;
	__u32 slots = slots_for(cqe);

	ASSERT_EQ(0, create_cq(fd, cqe, &resp));
	EXPECT_EQ(slots - 1, resp.cqe);
	EXPECT_EQ(cq_map_size(slots), resp.rxe.mi.size);
	EXPECT_EQ(0U, resp.rxe.mi.offset % (__u64)sysconf(_SC_PAGESIZE));
	q = mmap(NULL, resp.rxe.mi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 resp.rxe.mi.offset);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(CQE_LOG2, q->log2_elem_size);
	EXPECT_EQ(slots - 1, q->index_mask);
	EXPECT_EQ(0U, q->producer_index);
	EXPECT_EQ(0U, q->consumer_index);
	/* The last byte of the last slot is mapped, and zeroed. */
	EXPECT_EQ(0, q->data[(slots << CQE_LOG2) - 1]);
	ASSERT_EQ(0, munmap(q, resp.rxe.mi.size));
	ASSERT_EQ(0, destroy_cq(fd, resp.cq_handle));
}

TEST_F(ctx, query_device_cq_limits)
{
	ASSERT_EQ(MAX_CQE, self->dev.max_cqe);
	ASSERT_EQ(1U << 20, self->dev.max_cq);	/* RXE_MAX_CQ */
}

TEST_F(ctx, create_cq_depths_rings_and_mappings)
{
	static const __u32 depths[] = { 1, 2, 255, 256, 500, 4096, MAX_CQE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(depths); i++)
		check_cq_depth(_metadata, self->fd, depths[i]);
}

TEST_F(ctx, create_cq_past_max_cqe_einval)
{
	struct cq_resp resp;

	/* rxe_verbs.c:rxe_create_cq: attr->cqe > max_cqe */
	ASSERT_EQ(-EINVAL, create_cq(self->fd, MAX_CQE + 1, &resp));
}

TEST_F(ctx, create_cq_zero_cqe_einval)
{
	struct cq_resp resp;

	/* uverbs_cmd.c:create_cq: !cmd->cqe */
	ASSERT_EQ(-EINVAL, create_cq(self->fd, 0, &resp));
}

TEST_F(ctx, create_cq_without_room_for_mminfo_einval)
{
	struct cq_resp resp;

	/* rxe_verbs.c:rxe_create_cq: udata->outlen < sizeof(*uresp) */
	ASSERT_EQ(-EINVAL, create_cq_vec(self->fd, 16, 0,
					 sizeof(struct ib_uverbs_create_cq_resp), &resp));
}

TEST_F(ctx, create_cq_on_every_comp_vector)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct cq_resp resp;
	long v;

	/* num_comp_vectors is num_possible_cpus() on soft-RoCE */
	for (v = 0; v < n; v++) {
		ASSERT_EQ(0, create_cq_vec(self->fd, 16, v, sizeof(resp), &resp));
		ASSERT_EQ(0, destroy_cq(self->fd, resp.cq_handle));
	}
	/* uverbs_cmd.c:create_cq: comp_vector >= num_comp_vectors */
	ASSERT_EQ(-EINVAL, create_cq_vec(self->fd, 16, n, sizeof(resp), &resp));
}

TEST_F(ctx, req_notify_cq_both_kinds)
{
	struct cq_resp resp;

	ASSERT_EQ(0, create_cq(self->fd, 16, &resp));
	EXPECT_EQ(0, req_notify_cq(self->fd, resp.cq_handle, 0));
	EXPECT_EQ(0, req_notify_cq(self->fd, resp.cq_handle, 1));
	ASSERT_EQ(0, destroy_cq(self->fd, resp.cq_handle));
}

TEST_F(ctx, destroy_cq_twice_enoent)
{
	struct cq_resp resp;

	ASSERT_EQ(0, create_cq(self->fd, 16, &resp));
	ASSERT_EQ(0, destroy_cq(self->fd, resp.cq_handle));
	/* rdma_core.c:lookup_get_idr_uobject: the handle is gone */
	ASSERT_EQ(-ENOENT, destroy_cq(self->fd, resp.cq_handle));
}

TEST_F(ctx, mmap_of_cq_ring_larger_einval)
{
	struct cq_resp resp;
	void *q;

	ASSERT_EQ(0, create_cq(self->fd, 255, &resp));
	/*
	 * More than the ring: rxe_mmap.c:rxe_mmap (size > info.size), and
	 * ib_core_uverbs.c:rdma_user_mmap_entry_get (not the entry's size).
	 */
	q = mmap(NULL, resp.rxe.mi.size + sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, resp.rxe.mi.offset);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, destroy_cq(self->fd, resp.cq_handle));
}

TEST_F(ctx, ring_mapped_past_destroy_stays_readable)
{
	struct rxe_queue_buf *q;
	struct cq_resp resp;

	ASSERT_EQ(0, create_cq(self->fd, 16, &resp));
	q = mmap(NULL, resp.rxe.mi.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 resp.rxe.mi.offset);
	ASSERT_NE(MAP_FAILED, q);
	ASSERT_EQ(0, destroy_cq(self->fd, resp.cq_handle));
	/* The pages stay with the mapping until munmap. */
	EXPECT_EQ(CQE_LOG2, q->log2_elem_size);
	q->consumer_index = 5;
	EXPECT_EQ(5U, q->consumer_index);
	ASSERT_EQ(0, munmap(q, resp.rxe.mi.size));
}

/*
 * Queue pairs, as soft-RoCE makes them (rxe_verbs.c:rxe_create_qp,
 * rxe_qp.c): each work queue is a ring like a CQ's, whose slot holds a
 * struct rxe_send_wqe or rxe_recv_wqe and room for the SGEs (and, for
 * sends, the inline data), rounded up to a power of two of at least a
 * cache line.  The answers are rxe's: checked on rxe0 and rv0 alike, but
 * for what RV_EXPECT_UD_ONLY=1 pins (rv0 has UD QPs only).
 */
#define MAX_QP		((1U << 20) - 16)	/* RXE_MAX_QP */
#define MAX_QP_WR	1048576U		/* RXE_MAX_QP_WR: 2^20 */
#define MAX_SGE		32U			/* RXE_MAX_SGE */
#define MAX_INLINE	(MAX_SGE * 16U)		/* RXE_MAX_INLINE_DATA */
#define CACHE_LINE	64U
#define QP_STATES	(IB_QPS_ERR + 1)

#define IB_EVENT_SQ_DRAINED	5U

struct qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct rxe_create_qp_resp rxe;
};

static_assert(offsetof(struct qp_resp, rxe) == sizeof(struct ib_uverbs_create_qp_resp),
	      "the rxe response follows the core one");

static int create_qp(int fd, __u32 pd, __u32 cq, const struct qp_req *req,
		     struct qp_resp *resp)
{
	return create_qp_raw(fd, pd, cq, req, 0, resp, sizeof(*resp));
}

/* MODIFY_QP of qp to state with mask (QP_STATE added) and the values of UD's path. */
static int modify_qp_state(int fd, __u32 qp, __u8 state, __u32 mask)
{
	struct ib_uverbs_modify_qp cmd = {
		.qp_handle = qp,
		.attr_mask = mask | QP_STATE,
		.qp_state = state,
		.qkey = 0x11111111,
		.sq_psn = 0x123456,
		.port_num = PORT,
	};

	return modify_qp(fd, &cmd);
}

static int query_qp(int fd, __u32 qp, struct ib_uverbs_query_qp_resp *resp)
{
	struct ib_uverbs_query_qp cmd = {
		.response = (uintptr_t)resp,
		.qp_handle = qp,
		.attr_mask = ~0U,
	};

	memset(resp, 0xa5, sizeof(*resp));
	return uv_cmd(fd, IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd), sizeof(*resp));
}

static __u32 pow2_at_least(__u32 n)
{
	__u32 p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static __u32 ring_map_size(__u32 slots, __u32 elem)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 len = sizeof(struct rxe_queue_buf) + (__u64)slots * elem;

	return (len + page - 1) / page * page;
}

/* Map a ring of size bytes at offset; check its header. */
static void check_ring(struct __test_metadata *_metadata, int fd, const struct mminfo *mi,
		       __u32 slots, __u32 elem)
{
	struct rxe_queue_buf *q;

	EXPECT_EQ(ring_map_size(slots, elem), mi->size);
	q = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mi->offset);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ((__u32)__builtin_ctz(elem), q->log2_elem_size);
	EXPECT_EQ(slots - 1, q->index_mask);
	EXPECT_EQ(0U, q->producer_index);
	EXPECT_EQ(0U, q->consumer_index);
	EXPECT_EQ(0, q->data[(__u64)slots * elem - 1]);
	ASSERT_EQ(0, munmap(q, mi->size));
}

/*
 * Create a UD QP of req, check every capacity returned, both rings and
 * what QUERY_QP says of them, destroy.
 */
static void check_qp_caps(struct __test_metadata *_metadata, int fd, __u32 pd, __u32 cq,
			  const struct qp_req *req)
{
	__u32 room = req->send_sge * 16 > req->inline_data ? req->send_sge * 16 : req->inline_data;
	__u32 sq_elem = pow2_at_least(sizeof(struct rxe_send_wqe) + room);
	__u32 rq_elem = pow2_at_least(sizeof(struct rxe_recv_wqe) + req->recv_sge * 16);
	__u32 sq_slots = pow2_at_least(req->send_wr + 1);
	__u32 rq_slots = pow2_at_least(req->recv_wr + 1);
	struct ib_uverbs_query_qp_resp q;
	struct qp_resp resp;

	sq_elem = sq_elem < CACHE_LINE ? CACHE_LINE : sq_elem;
	rq_elem = rq_elem < CACHE_LINE ? CACHE_LINE : rq_elem;
	ASSERT_EQ(0, create_qp(fd, pd, cq, req, &resp))
		TH_LOG("send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u",
		       req->send_wr, req->recv_wr, req->send_sge, req->recv_sge, req->inline_data);
	EXPECT_LE(16U, resp.core.qpn);
	EXPECT_EQ(sq_slots - 1, resp.core.max_send_wr);
	EXPECT_EQ(rq_slots - 1, resp.core.max_recv_wr);
	EXPECT_EQ(room / 16, resp.core.max_send_sge);
	EXPECT_EQ(req->recv_sge, resp.core.max_recv_sge);
	EXPECT_EQ(room, resp.core.max_inline_data);
	check_ring(_metadata, fd, &resp.rxe.sq_mi, sq_slots, sq_elem);
	check_ring(_metadata, fd, &resp.rxe.rq_mi, rq_slots, rq_elem);

	ASSERT_EQ(0, query_qp(fd, resp.core.qp_handle, &q));
	EXPECT_EQ(resp.core.max_send_wr, q.max_send_wr);
	EXPECT_EQ(resp.core.max_recv_wr, q.max_recv_wr);
	EXPECT_EQ(resp.core.max_send_sge, q.max_send_sge);
	EXPECT_EQ(resp.core.max_recv_sge, q.max_recv_sge);
	EXPECT_EQ(resp.core.max_inline_data, q.max_inline_data);
	EXPECT_EQ(req->sig_all, q.sq_sig_all);
	ASSERT_EQ(0, destroy_qp(fd, resp.core.qp_handle));
}

/* A PD and a CQ for the QPs of a test. */
static void qp_deps(struct __test_metadata *_metadata, int fd, __u32 *pd, struct cq_resp *cq)
{
	ASSERT_EQ(0, alloc_pd(fd, pd));
	ASSERT_EQ(0, create_cq(fd, 64, cq));
}

static void qp_deps_put(struct __test_metadata *_metadata, int fd, __u32 pd, struct cq_resp *cq)
{
	ASSERT_EQ(0, destroy_cq(fd, cq->cq_handle));
	ASSERT_EQ(0, dealloc_pd(fd, pd));
}

static const struct qp_req ud_small = {
	.send_wr = 16, .recv_wr = 16, .send_sge = 1, .recv_sge = 1,
};

TEST_F(ctx, query_device_qp_limits)
{
	ASSERT_EQ(MAX_QP, self->dev.max_qp);
	ASSERT_EQ(MAX_QP_WR, self->dev.max_qp_wr);
	/* uverbs_cmd.c:copy_query_dev_fields: min(max_send_sge, max_recv_sge) */
	ASSERT_EQ(MAX_SGE, self->dev.max_sge);
}

TEST_F(ctx, create_qp_ud_caps_rings_and_mappings)
{
	/* send_wr, recv_wr, send_sge, recv_sge, inline_data, (type), sq_sig_all */
	static const struct qp_req grid[] = {
		{ 0, 0, 0, 0, 0, 0, 0 },
		{ 1, 1, 1, 1, 0, 0, 0 },
		{ 16, 16, 1, 1, 0, 0, 1 },
		{ 100, 7, 2, 3, 0, 0, 0 },
		{ 255, 256, 4, 4, 64, 0, 0 },
		{ 1, 1, 1, 1, 100, 0, 0 },
		{ 64, 64, MAX_SGE, MAX_SGE, 0, 0, 0 },
		{ 8, 8, 3, 0, MAX_INLINE, 0, 0 },
		{ 4096, 1024, 16, 8, 200, 0, 0 },
	};
	struct cq_resp cq;
	size_t i;
	__u32 pd;

	qp_deps(_metadata, self->fd, &pd, &cq);
	for (i = 0; i < ARRAY_SIZE(grid); i++)
		check_qp_caps(_metadata, self->fd, pd, cq.cq_handle, &grid[i]);
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

TEST_F(ctx, create_qp_errors)
{
	struct qp_req r;
	struct qp_resp resp;
	struct cq_resp cq;
	__u32 pd;

	qp_deps(_metadata, self->fd, &pd, &cq);
	/* rxe_verbs.c:rxe_create_qp: udata->inlen */
	EXPECT_EQ(-EINVAL, create_qp_raw(self->fd, pd, cq.cq_handle, &ud_small, 8,
					 &resp, sizeof(resp)));
	/* rxe_verbs.c:rxe_create_qp: udata->outlen < sizeof(*uresp) */
	EXPECT_EQ(-EINVAL, create_qp_raw(self->fd, pd, cq.cq_handle, &ud_small, 0,
					 &resp, sizeof(resp.core)));
	/* rxe_qp.c:rxe_qp_chk_cap: each limit */
	r = ud_small;
	r.send_wr = MAX_QP_WR + 1;
	EXPECT_EQ(-EINVAL, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
	r = ud_small;
	r.recv_wr = MAX_QP_WR + 1;
	EXPECT_EQ(-EINVAL, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
	r = ud_small;
	r.send_sge = MAX_SGE + 1;
	EXPECT_EQ(-EINVAL, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
	r = ud_small;
	r.recv_sge = MAX_SGE + 1;
	EXPECT_EQ(-EINVAL, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
	r = ud_small;
	r.inline_data = MAX_INLINE + 1;
	EXPECT_EQ(-EINVAL, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
	/* rdma_core.c:lookup_get_idr_uobject: no such CQ */
	EXPECT_EQ(-ENOENT, create_qp(self->fd, pd, cq.cq_handle + 100, &ud_small, &resp));
	/* Nothing was left behind: the CQ and the PD go. */
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

TEST_F(ctx, create_qp_connected)
{
	static const __u8 types[] = { IB_UVERBS_QPT_RC, IB_UVERBS_QPT_UC };
	struct qp_resp resp;
	struct qp_req r;
	struct cq_resp cq;
	__u32 pd;
	size_t i;

	qp_deps(_metadata, self->fd, &pd, &cq);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		r = ud_small;
		r.type = types[i];
		if (env_is_1("RV_EXPECT_UD_ONLY")) {
			/* Pinned: rxe_qp.c:rxe_qp_chk_init accepts RC and UC. */
			EXPECT_EQ(-EOPNOTSUPP, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
			continue;
		}
		ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &r, &resp));
		ASSERT_EQ(0, destroy_qp(self->fd, resp.core.qp_handle));
	}
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

TEST_F(ctx, destroy_cq_of_qp_ebusy_and_qpn_not_reused_at_once)
{
	struct qp_resp a, b;
	struct cq_resp cq;
	__u32 pd;

	qp_deps(_metadata, self->fd, &pd, &cq);
	ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &a));
	/* uverbs_std_types_cq.c:uverbs_free_cq: ib_destroy_cq_user, usecnt */
	EXPECT_EQ(-EBUSY, destroy_cq(self->fd, cq.cq_handle));
	/* uverbs_std_types.c:uverbs_free_pd: the QP uses the PD */
	EXPECT_EQ(-EBUSY, dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, destroy_qp(self->fd, a.core.qp_handle));
	/* rxe_pool.c: xa_alloc_cyclic, from RXE_MIN_QP_INDEX */
	ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &b));
	EXPECT_NE(a.core.qpn, b.core.qpn);
	EXPECT_LE(16U, b.core.qpn);
	ASSERT_EQ(0, destroy_qp(self->fd, b.core.qp_handle));
	/* rdma_core.c:lookup_get_idr_uobject: the handle is gone */
	EXPECT_EQ(-ENOENT, destroy_qp(self->fd, b.core.qp_handle));
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

/*
 * Wait until QUERY_QP shows the send queue drained (rxe drains from a task),
 * up to 30 s: a bound against a hang, for the debug lane's slowest days.
 */
static int wait_drained(int fd, __u32 qp)
{
	struct ib_uverbs_query_qp_resp q;
	int i, ret;

	for (i = 0; i < 3000; i++) {
		ret = query_qp(fd, qp, &q);
		if (ret || !q.sq_draining)
			return ret;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Move a fresh UD QP to state s along the usual path. */
static int drive_to(int fd, __u32 qp, int s)
{
	int ret;

	if (s == IB_QPS_RESET)
		return 0;
	ret = modify_qp_state(fd, qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT | QP_QKEY);
	if (ret || s == IB_QPS_INIT)
		return ret;
	if (s == IB_QPS_ERR)
		return modify_qp_state(fd, qp, IB_QPS_ERR, 0);
	ret = modify_qp_state(fd, qp, IB_QPS_RTR, 0);
	if (ret || s == IB_QPS_RTR)
		return ret;
	ret = modify_qp_state(fd, qp, IB_QPS_RTS, QP_SQ_PSN);
	if (ret || s == IB_QPS_RTS)
		return ret;
	ret = modify_qp_state(fd, qp, IB_QPS_SQD, 0);
	return ret ? ret : wait_drained(fd, qp);
}

TEST_F(ctx, modify_qp_ud_every_state_pair)
{
	/*
	 * verbs.c:qp_state_table for UD with IB_QP_STATE alone: which
	 * transitions need no other attribute.  SQE cannot be reached by
	 * MODIFY_QP; it is only a target.
	 */
	static const int ok[QP_STATES][QP_STATES] = {
		[IB_QPS_RESET] = { [IB_QPS_RESET] = 1 },
		[IB_QPS_INIT] = { [IB_QPS_RESET] = 1, [IB_QPS_INIT] = 1, [IB_QPS_RTR] = 1,
				  [IB_QPS_ERR] = 1 },
		[IB_QPS_RTR] = { [IB_QPS_RESET] = 1, [IB_QPS_ERR] = 1 },
		[IB_QPS_RTS] = { [IB_QPS_RESET] = 1, [IB_QPS_RTS] = 1, [IB_QPS_SQD] = 1,
				 [IB_QPS_ERR] = 1 },
		[IB_QPS_SQD] = { [IB_QPS_RESET] = 1, [IB_QPS_RTS] = 1, [IB_QPS_SQD] = 1,
				 [IB_QPS_ERR] = 1 },
		[IB_QPS_ERR] = { [IB_QPS_RESET] = 1, [IB_QPS_ERR] = 1 },
	};
	struct ib_uverbs_query_qp_resp q;
	struct qp_resp resp;
	struct cq_resp cq;
	__u32 pd;
	int s, t;

	qp_deps(_metadata, self->fd, &pd, &cq);
	for (s = 0; s < QP_STATES; s++) {
		if (s == IB_QPS_SQE)
			continue;
		for (t = 0; t < QP_STATES; t++) {
			__u32 qp;

			ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &resp));
			qp = resp.core.qp_handle;
			ASSERT_EQ(0, drive_to(self->fd, qp, s)) TH_LOG("to state %d", s);
			EXPECT_EQ(ok[s][t] ? 0 : -EINVAL, modify_qp_state(self->fd, qp, t, 0))
				TH_LOG("state %d to %d", s, t);
			if (t == IB_QPS_SQD && ok[s][t])
				EXPECT_EQ(0, wait_drained(self->fd, qp));
			ASSERT_EQ(0, query_qp(self->fd, qp, &q));
			EXPECT_EQ(ok[s][t] ? t : s, q.qp_state) TH_LOG("state %d to %d", s, t);
			EXPECT_EQ(q.qp_state, q.cur_qp_state);
			ASSERT_EQ(0, destroy_qp(self->fd, qp));
		}
	}
	/* uverbs_cmd.c:modify_qp: a state past IB_QPS_ERR */
	ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &resp));
	EXPECT_EQ(-EINVAL, modify_qp_state(self->fd, resp.core.qp_handle, IB_QPS_ERR + 1, 0));
	ASSERT_EQ(0, destroy_qp(self->fd, resp.core.qp_handle));
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

TEST_F(ctx, modify_qp_ud_attributes_and_query)
{
	struct ib_uverbs_modify_qp m;
	struct ib_uverbs_query_qp_resp q;
	struct qp_resp resp;
	struct cq_resp cq;
	__u32 pd, qp;

	qp_deps(_metadata, self->fd, &pd, &cq);
	ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &resp));
	qp = resp.core.qp_handle;

	/* A fresh QP: RESET, path MTU 256 (rxe_qp.c:rxe_qp_init_misc). */
	ASSERT_EQ(0, query_qp(self->fd, qp, &q));
	EXPECT_EQ(IB_QPS_RESET, q.qp_state);
	EXPECT_EQ(1, q.path_mtu);
	EXPECT_EQ(0U, q.qkey);
	EXPECT_EQ(0, q.port_num);
	/* rxe_av.c:rxe_av_to_attr: a RoCE vector with a GRH, empty */
	EXPECT_EQ(1, q.dest.is_global);
	EXPECT_EQ(0, q.dest.port_num);
	EXPECT_EQ(1, q.alt_dest.is_global);

	/* The attributes that may be missing from a transition: required. */
	EXPECT_EQ(-EINVAL, modify_qp_state(self->fd, qp, IB_QPS_INIT, QP_PORT | QP_QKEY));
	/* ... and those UD has no use for: refused in a transition. */
	EXPECT_EQ(-EINVAL, modify_qp_state(self->fd, qp, IB_QPS_INIT,
					   QP_PKEY_INDEX | QP_PORT | QP_QKEY | QP_RQ_PSN));
	ASSERT_EQ(0, modify_qp_state(self->fd, qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT | QP_QKEY));
	ASSERT_EQ(0, modify_qp_state(self->fd, qp, IB_QPS_RTR, 0));
	/* rxe_qp.c:rxe_qp_from_attr: sq_psn & BTH_PSN_MASK */
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_STATE | QP_SQ_PSN,
					  .qp_state = IB_QPS_RTS, .sq_psn = 0xff654321 };
	ASSERT_EQ(0, modify_qp(self->fd, &m));
	ASSERT_EQ(0, query_qp(self->fd, qp, &q));
	EXPECT_EQ(IB_QPS_RTS, q.qp_state);
	EXPECT_EQ(0x654321U, q.sq_psn);
	EXPECT_EQ(0x11111111U, q.qkey);
	EXPECT_EQ(PORT, q.port_num);
	EXPECT_EQ(0, q.pkey_index);

	/*
	 * Without IB_QP_STATE no transition rule applies: rxe checks the
	 * values (rxe_qp.c:rxe_qp_chk_attr) and records them.
	 */
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_PATH_MTU,
					  .path_mtu = 6 };
	EXPECT_EQ(-EINVAL, modify_qp(self->fd, &m));
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_TIMEOUT, .timeout = 32 };
	EXPECT_EQ(-EINVAL, modify_qp(self->fd, &m));
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_MAX_QP_RD_ATOMIC,
					  .max_rd_atomic = 129 };
	EXPECT_EQ(-EINVAL, modify_qp(self->fd, &m));
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_ACCESS_FLAGS };
	EXPECT_EQ(-EINVAL, modify_qp(self->fd, &m));
	m = (struct ib_uverbs_modify_qp){
		.qp_handle = qp,
		.attr_mask = QP_PATH_MTU | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY |
			     QP_RQ_PSN | QP_MAX_QP_RD_ATOMIC | QP_MAX_DEST_RD_ATOMIC |
			     QP_MIN_RNR_TIMER | QP_QKEY,
		.path_mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 6,
		.rq_psn = 0x1abcdef, .max_rd_atomic = 3, .max_dest_rd_atomic = 5,
		.min_rnr_timer = 12, .qkey = 0x2222,
	};
	ASSERT_EQ(0, modify_qp(self->fd, &m));
	ASSERT_EQ(0, query_qp(self->fd, qp, &q));
	EXPECT_EQ(IB_QPS_RTS, q.qp_state);
	EXPECT_EQ(3, q.path_mtu);
	EXPECT_EQ(14, q.timeout);
	EXPECT_EQ(7, q.retry_cnt);
	EXPECT_EQ(6, q.rnr_retry);
	EXPECT_EQ(0xabcdefU, q.rq_psn);
	/* roundup_pow_of_two */
	EXPECT_EQ(4, q.max_rd_atomic);
	EXPECT_EQ(8, q.max_dest_rd_atomic);
	EXPECT_EQ(12, q.min_rnr_timer);
	EXPECT_EQ(0x2222U, q.qkey);
	EXPECT_EQ(0, q.sq_draining);

	/* A path on a datagram QP. */
	m = (struct ib_uverbs_modify_qp){ .qp_handle = qp, .attr_mask = QP_AV | QP_PORT,
					  .port_num = PORT,
					  .dest = { .is_global = 1, .hop_limit = 64,
						    .port_num = PORT } };
	/* Pinned with RV_EXPECT_UD_ONLY: rv0 keeps no path for UD; rxe records it. */
	EXPECT_EQ(env_is_1("RV_EXPECT_UD_ONLY") ? -EINVAL : 0, modify_qp(self->fd, &m));
	ASSERT_EQ(0, destroy_qp(self->fd, qp));
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

TEST_F(ctx, modify_qp_to_sqd_reports_sq_drained)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd pfd = { .fd = self->async_fd, .events = POLLIN };
	struct qp_resp resp;
	struct cq_resp cq;
	__u32 pd;

	qp_deps(_metadata, self->fd, &pd, &cq);
	ASSERT_EQ(0, create_qp(self->fd, pd, cq.cq_handle, &ud_small, &resp));
	ASSERT_EQ(0, drive_to(self->fd, resp.core.qp_handle, IB_QPS_RTS));
	ASSERT_EQ(0, modify_qp_state(self->fd, resp.core.qp_handle, IB_QPS_SQD, 0));
	/* rxe_req.c:req_check_sq_drain_done: IB_EVENT_SQ_DRAINED, nothing queued */
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_EQ((ssize_t)sizeof(ev), read(self->async_fd, &ev, sizeof(ev)));
	EXPECT_EQ(IB_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(0x5151U, ev.element);	/* the QP's user_handle */
	EXPECT_EQ(0, wait_drained(self->fd, resp.core.qp_handle));
	ASSERT_EQ(0, modify_qp_state(self->fd, resp.core.qp_handle, IB_QPS_RTS, 0));
	ASSERT_EQ(0, destroy_qp(self->fd, resp.core.qp_handle));
	qp_deps_put(_metadata, self->fd, pd, &cq);
}

/* ------------------------------------------------------------------ */
/* Memory regions.                                                    */

#define MAX_MR		((1U << 19) - 1)	/* RXE_MAX_MR */
#define PAGE		4096UL
#define LW		IB_UVERBS_ACCESS_LOCAL_WRITE
#define ALL_REMOTE	(IB_UVERBS_ACCESS_REMOTE_READ | IB_UVERBS_ACCESS_REMOTE_WRITE | \
			 IB_UVERBS_ACCESS_REMOTE_ATOMIC)

/* Flush access flags, as in 7.2's <rdma/ib_user_ioctl_verbs.h> (older headers lack them). */
#define RV_ACCESS_FLUSH_GLOBAL		0x100U
#define RV_ACCESS_FLUSH_PERSISTENT	0x200U

/* Not in the uapi headers: enum ib_mr_rereg_flags of <rdma/ib_verbs.h>. */
#define RV_MR_REREG_TRANS	1U
#define RV_MR_REREG_PD		2U
#define RV_MR_REREG_ACCESS	4U

/* Pages of fresh anonymous memory, or MAP_FAILED. */
static void *pages(size_t n, int prot)
{
	return mmap(NULL, n * PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
}

TEST_F(ctx, query_device_mr_limits)
{
	/* rxe.c:rxe_init_device_param: RXE_MAX_MR, RXE_MAX_MR_SIZE */
	ASSERT_EQ(MAX_MR, self->dev.max_mr);
	ASSERT_EQ(UINT64_MAX, self->dev.max_mr_size);
}

TEST_F(ctx, reg_mr_keys_pins_and_dereg)
{
	struct ib_uverbs_reg_mr_resp a, b;
	long pinned = vm_pin_kb();
	void *mem = pages(3, PROT_READ | PROT_WRITE);
	__u32 pd;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_LE(0, pinned);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem, 3 * PAGE, (uintptr_t)mem, LW | ALL_REMOTE, &a));
	/* rxe_mr.c:rxe_mr_init: key = index << 8 | random byte, lkey == rkey */
	EXPECT_EQ(a.lkey, a.rkey);
	EXPECT_LE(1U, a.lkey >> 8);
	EXPECT_GE(MAX_MR + 1, a.lkey >> 8);
	/* umem.c:__ib_umem_get_va: mm->pinned_vm grows by the pages spanned */
	EXPECT_EQ(pinned + 12, vm_pin_kb());
	/* uverbs_std_types.c:uverbs_free_pd: the MR uses the PD */
	EXPECT_EQ(-EBUSY, dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, dereg_mr(self->fd, a.mr_handle));
	EXPECT_EQ(pinned, vm_pin_kb());
	/* rdma_core.c:lookup_get_idr_uobject: the handle is gone */
	EXPECT_EQ(-ENOENT, dereg_mr(self->fd, a.mr_handle));
	/* rxe_pool.c: xa_alloc_cyclic, the index is not given again at once */
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem, PAGE, (uintptr_t)mem, 0, &b));
	EXPECT_NE(a.lkey >> 8, b.lkey >> 8);
	EXPECT_EQ(b.lkey, b.rkey);
	/* A region on a region: the same pages twice. */
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem, 3 * PAGE, (uintptr_t)mem, LW, &a));
	EXPECT_EQ(pinned + 16, vm_pin_kb());
	ASSERT_EQ(0, dereg_mr(self->fd, a.mr_handle));
	ASSERT_EQ(0, dereg_mr(self->fd, b.mr_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	EXPECT_EQ(pinned, vm_pin_kb());
	munmap(mem, 3 * PAGE);
}

TEST_F(ctx, reg_mr_access_flags)
{
	static const struct {
		__u32 access;
		int err;	/* what rxe answers */
		int no_odp;	/* 1: EOPNOTSUPP with RV_EXPECT_NO_ODP */
	} cases[] = {
		{ 0, 0, 0 },
		{ LW, 0, 0 },
		{ LW | ALL_REMOTE | IB_UVERBS_ACCESS_MW_BIND, 0, 0 },
		{ IB_UVERBS_ACCESS_REMOTE_READ, 0, 0 },
		/* ib_verbs.h:ib_check_mr_access: remote write or atomic needs local write */
		{ IB_UVERBS_ACCESS_REMOTE_WRITE, -EINVAL, 0 },
		{ IB_UVERBS_ACCESS_REMOTE_ATOMIC, -EINVAL, 0 },
		/* ib_check_mr_access: past IB_ACCESS_SUPPORTED */
		{ 1U << 10, -EINVAL, 0 },
		{ 1U << 31, -EINVAL, 0 },
		/* rxe_verbs.c:rxe_reg_user_mr: past RXE_ACCESS_SUPPORTED_MR */
		{ LW | IB_UVERBS_ACCESS_ZERO_BASED, -EOPNOTSUPP, 0 },
		{ LW | IB_UVERBS_ACCESS_HUGETLB, -EOPNOTSUPP, 0 },
		/* IB_ACCESS_OPTIONAL: a device may ignore them */
		{ LW | IB_UVERBS_ACCESS_RELAXED_ORDERING, 0, 0 },
		{ LW | IB_UVERBS_ACCESS_OPTIONAL_LAST, 0, 0 },
		/*
		 * rxe offers on-demand paging and flushes; a device that does not
		 * is refused by ib_check_mr_access (pinned for rv0: UD only).
		 * rxe_mr.c:rxe_mr_fill_pages_from_sgt: a persistent flush needs pmem.
		 */
		{ LW | IB_UVERBS_ACCESS_ON_DEMAND, 0, 1 },
		{ LW | RV_ACCESS_FLUSH_GLOBAL, 0, 1 },
		{ LW | RV_ACCESS_FLUSH_PERSISTENT, -EINVAL, 1 },
	};
	int no_odp = env_is_1("RV_EXPECT_NO_ODP");
	struct ib_uverbs_reg_mr_resp resp;
	void *mem = pages(2, PROT_READ | PROT_WRITE);
	size_t i;
	__u32 pd;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int want = cases[i].err;
		int got = reg_mr(self->fd, pd, mem, 2 * PAGE, (uintptr_t)mem, cases[i].access,
				 &resp);

		if (cases[i].no_odp && no_odp)
			want = -EOPNOTSUPP;

		EXPECT_EQ(want, got) TH_LOG("access %#x", cases[i].access);
		if (!got)
			ASSERT_EQ(0, dereg_mr(self->fd, resp.mr_handle));
	}
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	munmap(mem, 2 * PAGE);
}

TEST_F(ctx, reg_mr_ranges)
{
	struct ib_uverbs_reg_mr_resp resp;
	char *mem = pages(8, PROT_READ | PROT_WRITE);
	char *ro = pages(2, PROT_READ);
	char *gone = pages(2, PROT_READ | PROT_WRITE);
	__u32 pd;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, 2 * PAGE));
	/* A hole after the first 4 pages of mem. */
	ASSERT_EQ(0, munmap(mem + 4 * PAGE, 4 * PAGE));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* uverbs_cmd.c:ib_uverbs_reg_mr: start and hca_va differ in the page */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, pd, mem + 8, PAGE, 0x10000, LW, &resp));
	/* The same offset, another address: fine. */
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem + 8, 2 * PAGE, 0x7000008, LW, &resp));
	ASSERT_EQ(0, dereg_mr(self->fd, resp.mr_handle));
	/* umem.c:__ib_umem_get_va: no page spanned */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, pd, mem, 0, (uintptr_t)mem, LW, &resp));
	/* __ib_umem_get_va: length 0 inside a page spans that page */
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem + 100, 0, (uintptr_t)mem + 100, LW, &resp));
	ASSERT_EQ(0, dereg_mr(self->fd, resp.mr_handle));
	/* __ib_umem_get_va: the range wraps */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, pd, mem, UINT64_MAX - 100, (uintptr_t)mem, LW,
				  &resp));
	/* __ib_umem_get_va: pin_user_pages_fast of unmapped memory */
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, pd, gone, PAGE, (uintptr_t)gone, LW, &resp));
	/* Past the end of the mapping, into the hole. */
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, pd, mem, 6 * PAGE, (uintptr_t)mem, LW, &resp));
	/* Read-only memory: readable, not writable (FOLL_WRITE) */
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, pd, ro, PAGE, (uintptr_t)ro, LW, &resp));
	ASSERT_EQ(0, reg_mr(self->fd, pd, ro, 2 * PAGE, (uintptr_t)ro,
			    IB_UVERBS_ACCESS_REMOTE_READ, &resp));
	ASSERT_EQ(0, dereg_mr(self->fd, resp.mr_handle));
	/* rdma_core.c:lookup_get_idr_uobject: no such PD */
	EXPECT_EQ(-ENOENT, reg_mr(self->fd, pd + 100, mem, PAGE, (uintptr_t)mem, LW, &resp));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	munmap(mem, 4 * PAGE);
	munmap(ro, 2 * PAGE);
}

TEST_F(ctx, rereg_mr_pd_and_access_in_place)
{
	struct ib_uverbs_reg_mr_resp mr, romr;
	struct ib_uverbs_rereg_mr_resp resp;
	char *mem = pages(2, PROT_READ | PROT_WRITE);
	char *ro = pages(1, PROT_READ);
	__u32 pd, pd2;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd2));
	ASSERT_EQ(0, reg_mr(self->fd, pd, mem, 2 * PAGE, (uintptr_t)mem, LW, &mr));
	ASSERT_EQ(0, reg_mr(self->fd, pd, ro, PAGE, (uintptr_t)ro, 0, &romr));
	/* uverbs_cmd.c:ib_uverbs_rereg_mr: no flags; unknown flags */
	EXPECT_EQ(-EINVAL, rereg_mr(self->fd, mr.mr_handle, 0, pd, LW, &resp));
	EXPECT_EQ(-EOPNOTSUPP, rereg_mr(self->fd, mr.mr_handle, 8, pd, LW, &resp));
	/* rxe_verbs.c:rxe_rereg_user_mr: a new range is not supported */
	EXPECT_EQ(-EOPNOTSUPP, rereg_mr(self->fd, mr.mr_handle, RV_MR_REREG_TRANS, pd, LW,
					&resp));
	/* ib_check_mr_access, then rxe_rereg_user_mr's RXE_ACCESS_SUPPORTED_MR */
	EXPECT_EQ(-EINVAL, rereg_mr(self->fd, mr.mr_handle, RV_MR_REREG_ACCESS, pd,
				    IB_UVERBS_ACCESS_REMOTE_WRITE, &resp));
	EXPECT_EQ(-EOPNOTSUPP, rereg_mr(self->fd, mr.mr_handle, RV_MR_REREG_ACCESS, pd,
					LW | IB_UVERBS_ACCESS_ZERO_BASED, &resp));
	/* umem.c:ib_umem_check_rereg: writable access on pages pinned read-only */
	EXPECT_EQ(-EACCES, rereg_mr(self->fd, romr.mr_handle, RV_MR_REREG_ACCESS, pd, LW,
				    &resp));
	ASSERT_EQ(0, rereg_mr(self->fd, romr.mr_handle, RV_MR_REREG_ACCESS, pd,
			      IB_UVERBS_ACCESS_REMOTE_READ, &resp));
	EXPECT_EQ(romr.lkey, resp.lkey);
	/* In place: the same keys, the PD's use moves with the region */
	ASSERT_EQ(0, rereg_mr(self->fd, mr.mr_handle, RV_MR_REREG_ACCESS | RV_MR_REREG_PD, pd2,
			      LW | ALL_REMOTE, &resp));
	EXPECT_EQ(mr.lkey, resp.lkey);
	EXPECT_EQ(mr.rkey, resp.rkey);
	/* rdma_core.c:lookup_get_idr_uobject: no such PD */
	EXPECT_EQ(-ENOENT, rereg_mr(self->fd, mr.mr_handle, RV_MR_REREG_PD, pd2 + 100, 0, &resp));
	ASSERT_EQ(0, dereg_mr(self->fd, romr.mr_handle));
	/* uverbs_free_pd: pd2 has the region now, pd nothing */
	EXPECT_EQ(-EBUSY, dealloc_pd(self->fd, pd2));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, dereg_mr(self->fd, mr.mr_handle));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd2));
	munmap(mem, 2 * PAGE);
	munmap(ro, PAGE);
}

/* Drops CAP_IPC_LOCK from the calling process (the tests run as root). */
static int drop_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	__u32 bit = 1U << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_IPC_LOCK / 32].effective &= ~bit;
	d[CAP_IPC_LOCK / 32].permitted &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* Says on stderr what a check of memlock_child saw; returns the check. */
static int memlock_failed(int check, int ret, long base)
{
	fprintf(stderr, "# memlock check %d: %d (%s), VmPin %ld kB, at start %ld\n", check, ret,
		strerror(ret < 0 ? -ret : 0), vm_pin_kb(), base);
	return check;
}

/*
 * In a child without CAP_IPC_LOCK, with RLIMIT_MEMLOCK of 16 pages: 0 when
 * the checks pass, else the number of the check that failed.
 */
static int memlock_child(void)
{
	struct rlimit lim = { 16 * PAGE, 16 * PAGE };
	struct ib_uverbs_reg_mr_resp a, b;
	char *mem = pages(32, PROT_READ | PROT_WRITE);
	long base = vm_pin_kb();
	int async_fd, fd, ret;
	__u32 pd;

	/*
	 * New credentials first: uverbs refuses commands written with other
	 * credentials than the file was opened with (ib_safe_file_access).
	 */
	if (drop_cap_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &lim))
		return memlock_failed(1, -errno, base);
	fd = open_context(&async_fd);
	if (fd < 0 || mem == MAP_FAILED || alloc_pd(fd, &pd))
		return memlock_failed(2, fd < 0 ? fd : 0, base);
	ret = reg_mr(fd, pd, mem, 8 * PAGE, (uintptr_t)mem, LW, &a);
	if (ret)
		return memlock_failed(3, ret, base);
	if (vm_pin_kb() != base + 32)
		return memlock_failed(4, 0, base);
	/* umem.c:__ib_umem_get_va: pinned_vm past RLIMIT_MEMLOCK */
	ret = reg_mr(fd, pd, mem + 8 * PAGE, 9 * PAGE, (uintptr_t)mem + 8 * PAGE, LW, &b);
	if (ret != -ENOMEM || vm_pin_kb() != base + 32)
		return memlock_failed(5, ret, base);
	ret = reg_mr(fd, pd, mem + 8 * PAGE, 8 * PAGE, (uintptr_t)mem + 8 * PAGE, LW, &b);
	if (ret || dereg_mr(fd, b.mr_handle) || dereg_mr(fd, a.mr_handle) || vm_pin_kb() != base)
		return memlock_failed(6, ret, base);
	/* umem.c:__ib_umem_get_va: can_do_mlock, no limit and no capability */
	lim.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &lim))
		return memlock_failed(7, -errno, base);
	ret = reg_mr(fd, pd, mem, PAGE, (uintptr_t)mem, LW, &a);
	if (ret != -EPERM)
		return memlock_failed(8, ret, base);
	/* A region left registered goes with the context. */
	lim.rlim_cur = 16 * PAGE;
	if (setrlimit(RLIMIT_MEMLOCK, &lim))
		return memlock_failed(9, -errno, base);
	ret = reg_mr(fd, pd, mem, 4 * PAGE, (uintptr_t)mem, LW, &a);
	if (ret)
		return memlock_failed(10, ret, base);
	close(fd);
	close(async_fd);
	return vm_pin_kb() == base ? 0 : memlock_failed(11, 0, base);
}

TEST_F(ctx, reg_mr_memlock_limit_without_cap_ipc_lock)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("check %d failed", WEXITSTATUS(status));
}

TEST_F(ctx, dealloc_pd_with_live_mr_and_close_with_mrs)
{
	struct ib_uverbs_reg_mr_resp r;
	long pinned = vm_pin_kb();
	char *mem = pages(8, PROT_READ | PROT_WRITE);
	int async_fd, fd = open_context(&async_fd);
	__u32 pd;
	int i;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, alloc_pd(fd, &pd));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, reg_mr(fd, pd, mem + i * PAGE, PAGE, (uintptr_t)mem + i * PAGE,
				    LW, &r));
	EXPECT_EQ(pinned + 32, vm_pin_kb());
	EXPECT_EQ(-EBUSY, dealloc_pd(fd, pd));
	/* uverbs_main.c:ib_uverbs_close: every region deregistered, unpinned */
	close(fd);
	close(async_fd);
	EXPECT_EQ(pinned, vm_pin_kb());
	munmap(mem, 8 * PAGE);
}

TEST_F(ctx, alloc_mw_eopnotsupp)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ib_uverbs_alloc_mw cmd = {
		.response = (uintptr_t)&resp,
		.mw_type = RV_MW_TYPE_1,
	};
	__u32 pd;

	if (!env_is_1("RV_EXPECT_NO_MW"))
		SKIP(return, MAY_IMPLEMENT, "RV_EXPECT_NO_MW", getenv("RV_DEV"));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	cmd.pd_handle = pd;
	/* uverbs_cmd.c:ib_uverbs_alloc_mw -> ops.alloc_mw, or ib_uverbs_notsupp */
	ASSERT_EQ(-EOPNOTSUPP, uv_cmd(self->fd, IB_USER_VERBS_CMD_ALLOC_MW, &cmd,
				      sizeof(cmd), sizeof(resp)));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

TEST_F(ctx, create_srq_eopnotsupp)
{
	struct srq_resp resp;
	struct ib_uverbs_create_srq cmd = {
		.response = (uintptr_t)&resp,
		.max_wr = 16,
		.max_sge = 1,
	};
	__u32 pd;

	if (!env_is_1("RV_EXPECT_NO_SRQ"))
		SKIP(return, MAY_IMPLEMENT, "RV_EXPECT_NO_SRQ", getenv("RV_DEV"));
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	cmd.pd_handle = pd;
	/* verbs.c:ib_create_srq_user -> ops.create_srq, or ib_uverbs_notsupp */
	ASSERT_EQ(-EOPNOTSUPP, uv_cmd(self->fd, IB_USER_VERBS_CMD_CREATE_SRQ, &cmd,
				      sizeof(cmd), sizeof(resp)));
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
}

/* ------------------------------------------------------------------ */
/* Closing the device file with live objects: uverbs destroys them.   */

TEST(close_with_live_pd_and_ah_then_reopen)
{
	struct nl_info base, now;
	int sgid, fd, async_fd, i;
	struct ah_resp ah;
	__u32 pd;

	sgid = gid_index("RoCE v2", 256);
	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, nl_res_count(&base));
	for (i = 0; i < 2; i++) {
		fd = open_context(&async_fd);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, alloc_pd(fd, &pd));
		ASSERT_EQ(0, create_ah(fd, pd, sgid, dgid_v4_mcast, &ah));
		ASSERT_EQ(0, create_ah(fd, pd, sgid, dgid_v6_mcast, &ah));
		ASSERT_EQ(0, alloc_pd(fd, &pd));
		ASSERT_EQ(0, nl_res_count(&now));
		ASSERT_EQ(base.pds + 2, now.pds);
		ASSERT_EQ(base.ctxs + 1, now.ctxs);
		/*
		 * uverbs_main.c:ib_uverbs_close -> rdma_core.c:
		 * uverbs_destroy_ufile_hw(RDMA_REMOVE_CLOSE): the AHs, then
		 * the PDs, then the context.
		 */
		close(fd);
		ASSERT_EQ(0, nl_res_count(&now));
		ASSERT_EQ(base.pds, now.pds);
		ASSERT_EQ(base.ctxs, now.ctxs);
		close(async_fd);
	}
}

TEST(close_with_live_xrcd_releases_inode)
{
	struct ib_uverbs_query_device_resp dev;
	int file = temp_file(), fd, async_fd;
	__u32 xrcd, pd;

	ASSERT_LE(0, file);
	fd = open_context(&async_fd);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_device(fd, &dev));
	if (!(dev.device_cap_flags & IB_UVERBS_DEVICE_XRC))
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	ASSERT_EQ(0, alloc_pd(fd, &pd));
	ASSERT_EQ(0, open_xrcd(fd, file, O_CREAT, &xrcd));
	ASSERT_EQ(0, open_xrcd(fd, -1, 0, &xrcd));
	close(fd);
	close(async_fd);

	fd = open_context(&async_fd);
	ASSERT_LE(0, fd);
	/*
	 * rdma_core.c:uverbs_destroy_ufile_hw -> uverbs_std_types.c:
	 * uverbs_free_xrcd -> uverbs_cmd.c:ib_uverbs_dealloc_xrcd removed the
	 * inode's entry: without O_CREAT it is not found any more.
	 */
	ASSERT_EQ(-EAGAIN, open_xrcd(fd, file, 0, &xrcd));
	ASSERT_EQ(0, open_xrcd(fd, file, O_CREAT, &xrcd));
	ASSERT_EQ(0, alloc_pd(fd, &pd));
	close(fd);
	close(async_fd);
	close(file);
}

/* ------------------------------------------------------------------ */
/* The device's limits, reached (RV_LIMITS=1, a device with small ones). */

/* More objects than this are not worth creating to reach a limit. */
#define LIMIT_REACHABLE	4096

FIXTURE(limits) {
	int fd;
	int async_fd;
	struct ib_uverbs_query_device_resp dev;
};

FIXTURE_SETUP(limits)
{
	self->fd = -1;
	self->async_fd = -1;
	if (!env_is_1("RV_LIMITS"))
		SKIP(return, "RV_LIMITS is not 1: %s's limits are not meant to be reached",
		     getenv("RV_DEV"));
	self->fd = open_context(&self->async_fd);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, query_device(self->fd, &self->dev));
}

FIXTURE_TEARDOWN(limits)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->async_fd >= 0)
		close(self->async_fd);
}

/*
 * Every expected EINVAL at a limit is the driver's: soft-RoCE's
 * sw/rxe/rxe_pool.c:rxe_add_to_pool (num_elem > max_elem), rverbs'
 * sw/device.rs:Counter::get, returned through ops.alloc_pd, ops.create_ah
 * (verbs.c:_rdma_create_ah) and ops.alloc_xrcd (verbs.c:ib_alloc_xrcd_user).
 */
TEST_F(limits, alloc_pd_up_to_max_pd_then_einval)
{
	__u32 max = self->dev.max_pd, n, i, extra, *pds;
	struct nl_info base, now;
	int fd2, async2;

	ASSERT_NE(0U, max);
	if (max > LIMIT_REACHABLE)
		SKIP(return, "max_pd is %u: too many PDs to reach", max);
	/* The device's PDs so far (restrack): kernel ones count too. */
	ASSERT_EQ(0, nl_res_count(&base));
	ASSERT_GE((__u64)max, base.pds);
	n = max - base.pds;
	pds = calloc(n + 1, sizeof(*pds));
	ASSERT_NE(NULL, pds);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, alloc_pd(self->fd, &pds[i]))
			TH_LOG("PD %u of %u", i + 1, n);
	ASSERT_EQ(-EINVAL, alloc_pd(self->fd, &extra));

	/* The limit is the device's: another context is refused as well. */
	fd2 = open_context(&async2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(-EINVAL, alloc_pd(fd2, &extra));

	/* Freeing one lets exactly one more in, from either context. */
	if (n) {
		ASSERT_EQ(0, dealloc_pd(self->fd, pds[n - 1]));
		ASSERT_EQ(0, alloc_pd(fd2, &extra));
		ASSERT_EQ(-EINVAL, alloc_pd(self->fd, &pds[n - 1]));

		/* Closing the other context frees its PD. */
		close(fd2);
		close(async2);
		ASSERT_EQ(0, alloc_pd(self->fd, &pds[n - 1]));
		ASSERT_EQ(-EINVAL, alloc_pd(self->fd, &extra));
	} else {
		close(fd2);
		close(async2);
	}

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, dealloc_pd(self->fd, pds[i]));
	ASSERT_EQ(0, nl_res_count(&now));
	ASSERT_EQ(base.pds, now.pds);
	free(pds);
}

TEST_F(limits, create_ah_up_to_max_ah_then_einval)
{
	int sgid = gid_index("RoCE v2", 256), fd2, async2;
	__u32 max = self->dev.max_ah, i, pd, pd2;
	struct ah_resp *ahs, extra;

	ASSERT_LE(0, sgid);
	ASSERT_NE(0U, max);
	if (max > LIMIT_REACHABLE)
		SKIP(return, "max_ah is %u: too many AHs to reach", max);
	ahs = calloc(max, sizeof(*ahs));
	ASSERT_NE(NULL, ahs);
	ASSERT_EQ(0, alloc_pd(self->fd, &pd));
	/* Nothing else on the device holds AHs: the test is alone on it. */
	for (i = 0; i < max; i++)
		ASSERT_EQ(0, create_ah(self->fd, pd, sgid,
				       i % 2 ? dgid_v6_mcast : dgid_v4_mcast, &ahs[i]))
			TH_LOG("AH %u of %u", i + 1, max);
	ASSERT_EQ(-EINVAL, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &extra));

	/* Another context, another PD: refused as well. */
	fd2 = open_context(&async2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, alloc_pd(fd2, &pd2));
	ASSERT_EQ(-EINVAL, create_ah(fd2, pd2, sgid, dgid_v6_mcast, &extra));

	/* Destroying one lets exactly one more in, from either context. */
	ASSERT_EQ(0, destroy_ah(self->fd, ahs[max - 1].ah_handle));
	ASSERT_EQ(0, create_ah(fd2, pd2, sgid, dgid_v6_mcast, &extra));
	ASSERT_EQ(-EINVAL, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ahs[max - 1]));

	/* Closing the other context destroys its AH. */
	close(fd2);
	close(async2);
	ASSERT_EQ(0, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &ahs[max - 1]));
	ASSERT_EQ(-EINVAL, create_ah(self->fd, pd, sgid, dgid_v4_mcast, &extra));

	for (i = 0; i < max; i++)
		ASSERT_EQ(0, destroy_ah(self->fd, ahs[i].ah_handle));
	/* The refused AHs left no use of the PD behind (EBUSY otherwise). */
	ASSERT_EQ(0, dealloc_pd(self->fd, pd));
	free(ahs);
}

TEST_F(limits, open_xrcd_up_to_max_xrcd_then_einval)
{
	const char *env = getenv("RV_MAX_XRCD");
	__u32 i, n, extra, shared, *xrcds;
	int file, file2;

	if (!(self->dev.device_cap_flags & IB_UVERBS_DEVICE_XRC))
		SKIP(return, NO_XRC, getenv("RV_DEV"));
	if (!env)
		SKIP(return, "RV_MAX_XRCD is not set: QUERY_DEVICE has no XRCD limit");
	n = strtoul(env, NULL, 0);
	ASSERT_NE(0U, n);
	if (n > LIMIT_REACHABLE)
		SKIP(return, "max_xrcd is %u: too many XRCDs to reach", n);
	xrcds = calloc(n, sizeof(*xrcds));
	ASSERT_NE(NULL, xrcds);
	file = temp_file();
	ASSERT_LE(0, file);
	file2 = temp_file();
	ASSERT_LE(0, file2);

	/* The first on an inode, the others without one. */
	ASSERT_EQ(0, open_xrcd(self->fd, file, O_CREAT, &xrcds[0]));
	for (i = 1; i < n; i++)
		ASSERT_EQ(0, open_xrcd(self->fd, -1, 0, &xrcds[i]))
			TH_LOG("XRCD %u of %u", i + 1, n);
	ASSERT_EQ(-EINVAL, open_xrcd(self->fd, -1, 0, &extra));
	/* A new inode needs a new XRCD: refused too. */
	ASSERT_EQ(-EINVAL, open_xrcd(self->fd, file2, O_CREAT, &extra));
	/* The XRCD of a known inode is shared: nothing is allocated. */
	ASSERT_EQ(0, open_xrcd(self->fd, file, 0, &shared));
	ASSERT_EQ(0, close_xrcd(self->fd, shared));

	/*
	 * Closing one lets exactly one more in.  The refused O_CREAT left
	 * nothing on file2's inode (uverbs_cmd.c:ib_uverbs_open_xrcd inserts
	 * it only after the allocation): without O_CREAT it is not found.
	 */
	ASSERT_EQ(0, close_xrcd(self->fd, xrcds[n - 1]));
	ASSERT_EQ(-EAGAIN, open_xrcd(self->fd, file2, 0, &extra));
	ASSERT_EQ(0, open_xrcd(self->fd, file2, O_CREAT, &xrcds[n - 1]));
	ASSERT_EQ(-EINVAL, open_xrcd(self->fd, -1, 0, &extra));

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, close_xrcd(self->fd, xrcds[i]));
	/* All freed: room for one again. */
	ASSERT_EQ(0, open_xrcd(self->fd, -1, 0, &extra));
	ASSERT_EQ(0, close_xrcd(self->fd, extra));
	close(file2);
	close(file);
	free(xrcds);
}

int main(int argc, char **argv)
{
	if (!getenv("RV_DEV")) {
		ksft_print_header();
		ksft_exit_skip("RV_DEV is not set: no RDMA device to test\n");
	}
	return test_harness_run(argc, argv);
}
