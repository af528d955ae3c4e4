// SPDX-License-Identifier: GPL-2.0
/*
 * rv_kernel_ah: address handles of a kernel caller on an RDMA device, for
 * rv0_kernel_ah.sh.  Loading it runs the test; it stays loaded only when
 * every check passed (init fails with the first error otherwise).
 *
 * On the device bound to @netdev (driver id RDMA_DRIVER_RXE: soft-RoCE or
 * rverbs' rv0): a kernel PD, an AH made with rdma_create_ah (sleepable, and
 * once more without RDMA_CREATE_AH_SLEEPABLE), rdma_query_ah,
 * rdma_modify_ah and rdma_query_ah again, then destruction.  These are the
 * paths uverbs never takes: query_ah and modify_ah have no user verb.
 *
 * The GRH fields, the port and the type must come back from query_ah as
 * given; with @full also the service level and the destination MAC (which
 * soft-RoCE's query_ah does not report: rxe_av_to_attr).
 */

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "rv_find.h"

static char *netdev = "veth0";
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "netdev of the RDMA device under test");

static int sgid_index;
module_param(sgid_index, int, 0444);
MODULE_PARM_DESC(sgid_index, "source GID index (a RoCE GID of port 1)");

static bool full;
module_param(full, bool, 0444);
MODULE_PARM_DESC(full, "also check sl and dmac from query_ah");

/* 2001:db8::99, a documentation address; nothing is sent. */
static union ib_gid dgid1 = { .raw = {
	0x20, 0x01, 0x0d, 0xb8, [15] = 0x99,
} };

/* ff0e::1:2:3 */
static union ib_gid dgid2 = { .raw = {
	0xff, 0x0e, [11] = 1, [13] = 2, [15] = 3,
} };

static const u8 mac1[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };
static const u8 mac2[ETH_ALEN] = { 0x33, 0x33, 0x00, 0x02, 0x00, 0x03 };

static void fill(struct rdma_ah_attr *attr, union ib_gid *dgid, u32 flow,
		 u8 hop, u8 tclass, u8 sl, const u8 *mac)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, dgid, flow, sgid_index, hop, tclass);
	rdma_ah_set_sl(attr, sl);
	memcpy(attr->roce.dmac, mac, ETH_ALEN);
}

/* 0 when @ok, else the message and -EINVAL. */
static __printf(2, 3) int check(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (ok)
		return 0;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("rv_kernel_ah: %pV", &vaf);
	va_end(args);
	return -EINVAL;
}

/* query_ah of @ah must give back what @want says. */
static int check_query(struct ib_ah *ah, const struct rdma_ah_attr *want, const char *when)
{
	const struct ib_global_route *w = rdma_ah_read_grh(want);
	const struct ib_global_route *g;
	struct rdma_ah_attr got, again;
	int ret;

	/*
	 * Callers pass uninitialised structs: query_ah must write all of it
	 * (soft-RoCE starts from a memset), so two queries into differently
	 * poisoned structs give the same bytes, padding included.
	 */
	memset(&got, 0xa5, sizeof(got));
	memset(&again, 0x5a, sizeof(again));
	ret = rdma_query_ah(ah, &got) ?: rdma_query_ah(ah, &again);
	if (ret)
		return check(false, "%s: rdma_query_ah: %d\n", when, ret);
	ret = check(!memcmp(&got, &again, sizeof(got)),
		    "%s: query_ah left bytes of the caller's struct as they were\n", when);
	if (ret)
		return ret;
	g = rdma_ah_read_grh(&got);
	ret = check(got.type == RDMA_AH_ATTR_TYPE_ROCE, "%s: type %d\n", when, got.type) ?:
	      check(rdma_ah_get_port_num(&got) == 1, "%s: port %u\n", when,
		    rdma_ah_get_port_num(&got)) ?:
	      check(rdma_ah_get_ah_flags(&got) & IB_AH_GRH, "%s: no GRH\n", when) ?:
	      check(!memcmp(g->dgid.raw, w->dgid.raw, 16), "%s: dgid %pI6\n", when,
		    g->dgid.raw) ?:
	      check(g->flow_label == w->flow_label, "%s: flow label %#x\n", when,
		    g->flow_label) ?:
	      check(g->sgid_index == w->sgid_index, "%s: sgid index %u\n", when,
		    g->sgid_index) ?:
	      check(g->hop_limit == w->hop_limit, "%s: hop limit %u\n", when, g->hop_limit) ?:
	      check(g->traffic_class == w->traffic_class, "%s: traffic class %u\n", when,
		    g->traffic_class);
	if (ret || !full)
		return ret;
	return check(rdma_ah_get_sl(&got) == rdma_ah_get_sl(want), "%s: sl %u\n", when,
		     rdma_ah_get_sl(&got)) ?:
	       check(ether_addr_equal(got.roce.dmac, want->roce.dmac), "%s: dmac %pM\n",
		     when, got.roce.dmac);
}

static int run(struct ib_device *ibdev)
{
	struct rdma_ah_attr attr;
	struct ib_ah *ah, *ah2;
	struct ib_pd *pd;
	int ret;

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd)) {
		pr_err("rv_kernel_ah: ib_alloc_pd: %ld\n", PTR_ERR(pd));
		return PTR_ERR(pd);
	}

	fill(&attr, &dgid1, 0x12345, 33, 0x20, 3, mac1);
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		ret = PTR_ERR(ah);
		pr_err("rv_kernel_ah: rdma_create_ah: %d\n", ret);
		goto out_pd;
	}
	ret = check_query(ah, &attr, "after create");
	if (ret)
		goto out_ah;

	fill(&attr, &dgid2, 0x54321, 7, 0x40, 5, mac2);
	ret = rdma_modify_ah(ah, &attr);
	if (ret) {
		pr_err("rv_kernel_ah: rdma_modify_ah: %d\n", ret);
		goto out_ah;
	}
	ret = check_query(ah, &attr, "after modify");
	if (ret)
		goto out_ah;

	/* A caller that may not sleep (no RDMA_CREATE_AH_SLEEPABLE). */
	fill(&attr, &dgid1, 0x1, 64, 0, 0, mac1);
	ah2 = rdma_create_ah(pd, &attr, 0);
	if (IS_ERR(ah2)) {
		ret = PTR_ERR(ah2);
		pr_err("rv_kernel_ah: rdma_create_ah (not sleepable): %d\n", ret);
		goto out_ah;
	}
	ret = check_query(ah2, &attr, "non-sleepable create");
	rdma_destroy_ah(ah2, 0);

out_ah:
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
out_pd:
	ib_dealloc_pd(pd);
	return ret;
}

static int __init rv_kernel_ah_init(void)
{
	struct ib_device *ibdev = rv_find_device(netdev);
	int ret;

	if (IS_ERR(ibdev))
		return PTR_ERR(ibdev);
	ret = run(ibdev);
	if (!ret)
		pr_info("rv_kernel_ah: %s: all checks passed%s\n", dev_name(&ibdev->dev),
			full ? " (with sl and dmac)" : "");
	ib_device_put(ibdev);
	return ret;
}

static void __exit rv_kernel_ah_exit(void)
{
}

module_init(rv_kernel_ah_init);
module_exit(rv_kernel_ah_exit);
MODULE_DESCRIPTION("rverbs test: kernel AHs, query_ah and modify_ah");
MODULE_LICENSE("GPL");
