/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the probes (ah_probe.c, qp_probe.c) share: the monotonic clock in
 * ms and ns, and an RDMA device opened by name through rdma-core.
 */
#ifndef _RVERBS_PROBE_UTIL_H
#define _RVERBS_PROBE_UTIL_H

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* The device named @name, opened, or NULL. */
static inline struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * Polls @cq for one completion into @wc for up to @ms milliseconds: 1 when
 * one came, -ETIMEDOUT when none did, -EIO when polling failed.
 */
static inline int poll_one(struct ibv_cq *cq, long ms, struct ibv_wc *wc)
{
	long deadline = now_ms() + ms;
	int n;

	while (now_ms() < deadline) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -EIO;
		if (n == 1)
			return 1;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

#endif /* _RVERBS_PROBE_UTIL_H */
