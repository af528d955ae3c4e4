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
 *   uverbs_hold [-n] DEV
 *
 * GET_CONTEXT, ALLOC_PD and OPEN_XRCD (no inode), then print "created" and
 * wait for a line (or EOF) on stdin, then CLOSE_XRCD and DEALLOC_PD.  With
 * -n, no XRC domain (for soft-RoCE, which has none).
 *
 * Output, one "key: value" per line after "created":
 *   close_xrcd: 0 | -<errno>
 *   dealloc_pd: 0 | -<errno>
 * Exit status 0, or 2 with a message on stderr when the setup fails.
 */

#define _GNU_SOURCE
#include <stdio.h>

#include "uverbs_raw.h"

int main(int argc, char **argv)
{
	struct ib_uverbs_get_context_resp ctx = {};
	const char *dev;
	__u32 pd, xrcd = 0;
	char line[16];
	int fd, ret, with_xrcd = 1;

	if (argc == 3 && !strcmp(argv[1], "-n")) {
		with_xrcd = 0;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: uverbs_hold [-n] DEV\n");
		return 2;
	}
	dev = argv[1];

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

	printf("created\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';

	if (with_xrcd)
		printf("close_xrcd: %d\n", close_xrcd(fd, xrcd));
	printf("dealloc_pd: %d\n", dealloc_pd(fd, pd));
	close(fd);
	close(ctx.async_fd);
	return 0;
}
