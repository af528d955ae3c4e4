// SPDX-License-Identifier: GPL-2.0
/*
 * rv_bench_ah: the in-kernel benchmark of make bench (scripts/bench.sh).
 * Loading it measures, on the RDMA device bound to @netdev, with the same
 * inputs for each:
 *
 *   c       ib_core's rdma_create_user_ah() + rdma_destroy_ah_user() (the C
 *           core; the takeover must be off, or this is the Rust core too)
 *   rust    rverbs_create_user_ah() + rverbs_destroy_ah_user() (rverbs.ko)
 *   lookup  the route and neighbour lookups alone, as both cores do them for
 *           a unicast RoCE destination (nothing for multicast)
 *   floor   the work any core must do: the GID entry get/put, the lookups,
 *           the driver's create_ah and destroy_ah on an object of its size
 *
 * and, with @xrcd, ib_alloc_xrcd_user() + ib_dealloc_xrcd_user() against
 * rverbs_alloc_xrcd_user() + rverbs_dealloc_xrcd_user().
 *
 * With @qp, the modify of a kernel RC QP from INIT to RTR with the path to
 * @dgid (the QP reset and moved to INIT again before each, untimed):
 *
 *   c       ib_modify_qp_with_udata() with an empty udata, so that the core
 *           resolves the destination as for a user QP: ib_core's C core
 *           with the takeover off, the Rust core through the livepatch
 *           with it on (the script loads the module in both modes)
 *   rust    rverbs_modify_qp_with_udata(), called directly, with stand-ins
 *           for ib_core's unexported functions that answer as ib_core's do
 *           for these inputs (a kernel QP's counter bind is skipped, a
 *           path without a flow label has no bond slave); the takeover's
 *           table has ib_core's own
 *   lookup  the route and neighbour lookups alone
 *   floor   the GID entry get/put, the lookups and the driver's modify_qp
 *
 * Two other modes, C core against Rust core:
 *
 *   @first=N   the first AH to N fresh destinations each, never resolved
 *              before: @dgid, @dgid+1, ... (the last byte counted up), C
 *              for the even ones, Rust for the odd ones; one line per AH
 *              (kinds c_first, rust_first; c_first_timeout and
 *              rust_first_timeout for an ETIMEDOUT), the ARP/ND round trip
 *              included
 *   @scale=N   N live AHs to @dgid, made in batches of @batch (time per AH
 *              of each batch: kinds c_batch, rust_batch, the batch number
 *              as round), then the slab memory they hold per AH (c_bytes,
 *              rust_bytes), then all destroyed; each core @rounds times,
 *              taking turns (C first in even rounds)
 *
 * @rounds rounds of @reps pairs of each kind; in a round the kinds take
 * turns in blocks of @block pairs, so that a stretch of noise (the host of
 * a TCG guest) falls on all of them alike.  One line per round and kind,
 * the median of its blocks:
 *
 *   rv_bench_ah: <label> <kind> <round> <ns per pair>
 *
 * A wrong result stops it: a failed create, or a destination MAC that the
 * cores and the lookup do not agree on (-EIO, with the reason in the log).
 * On success the module stays loaded (rmmod it); it loads nothing else.
 */

#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>
#include <net/ip6_route.h>
#include <net/neighbour.h>
#include <net/route.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../../include/rverbs.h"
#include "rv_find.h"

static char *netdev = "veth0";
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "netdev of the RDMA device under test");

static int sgid_index;
module_param(sgid_index, int, 0444);
MODULE_PARM_DESC(sgid_index, "source GID index (a RoCE v2 GID of port 1)");

static char *dgid = "::ffff:192.0.2.2";
module_param(dgid, charp, 0444);
MODULE_PARM_DESC(dgid, "destination GID (IPv6 notation)");

static char *label = "case";
module_param(label, charp, 0444);
MODULE_PARM_DESC(label, "name of the case in the output");

static int reps = 2000;
module_param(reps, int, 0444);
MODULE_PARM_DESC(reps, "create+destroy pairs per measurement");

static int rounds = 5;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "measurements of each kind");

static bool xrcd;
module_param(xrcd, bool, 0444);
MODULE_PARM_DESC(xrcd, "measure XRCD alloc+dealloc instead of AHs");

static int first;
module_param(first, int, 0444);
MODULE_PARM_DESC(first, "first AHs to this many fresh destinations (even C, odd Rust)");

static int scale;
module_param(scale, int, 0444);
MODULE_PARM_DESC(scale, "live AHs to hold, with each core in turn");

static int block = 50;
module_param(block, int, 0444);
MODULE_PARM_DESC(block, "pairs per block: the kinds take turns block by block");

static bool qp;
module_param(qp, bool, 0444);
MODULE_PARM_DESC(qp, "measure a kernel RC QP's modify to RTR instead of AHs");

static int batch = 10000;
module_param(batch, int, 0444);
MODULE_PARM_DESC(batch, "AHs per timed batch of the scale mode");

/*
 * The entry points of a core.  Both cores are called the same way, through
 * these pointers, filled at load: the Rust core's are its exports, taken
 * with symbol_get so that nothing links to rverbs.ko, and a direct call to
 * ib_core against an indirect one to rverbs would time the call, not the
 * core (an indirect call goes through a retpoline thunk on this kernel).
 */
struct core {
	const char *name;
	struct ib_ah *(*create)(struct ib_pd *pd, struct rdma_ah_attr *ah_attr,
				struct ib_udata *udata);
	int (*destroy)(struct ib_ah *ah, u32 flags, struct ib_udata *udata);
	struct ib_xrcd *(*alloc_xrcd)(struct ib_device *device, struct inode *inode,
				      struct ib_udata *udata);
	int (*dealloc_xrcd)(struct ib_xrcd *xrcd, struct ib_udata *udata);
};

/* cores[false] is ib_core's, cores[true] rverbs'. */
static struct core cores[2];

/* @qp: rverbs_modify_qp_with_udata, taken with symbol_get. */
static int (*rust_modify_qp)(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int attr_mask,
			     struct ib_udata *udata, const struct rverbs_ib_core_calls *calls);

/*
 * @qp: stand-ins for the ib_core functions the Rust core calls that ib_core
 * does not export, for the direct calls: what ib_core's answer for this
 * benchmark's inputs.  rdma_counter_bind_qp_auto() is only called at INIT
 * and skips kernel QPs; rdma_lag_get_ah_roce_slave() finds no slave for a
 * path without a flow label (one with would need ib_core's: refused).
 */
static int bench_counter_bind_qp_auto(struct ib_qp *qp, u32 port)
{
	return 0;
}

static struct net_device *bench_lag_get_ah_roce_slave(struct ib_device *device,
						      struct rdma_ah_attr *ah_attr, gfp_t flags)
{
	return ah_attr->grh.flow_label ? ERR_PTR(-EOPNOTSUPP) : NULL;
}

static void bench_lag_put_ah_roce_slave(struct net_device *xmit_slave)
{
	dev_put(xmit_slave);
}

static const struct rverbs_ib_core_calls bench_calls = {
	.counter_bind_qp_auto = bench_counter_bind_qp_auto,
	.lag_get_ah_roce_slave = bench_lag_get_ah_roce_slave,
	.lag_put_ah_roce_slave = bench_lag_put_ah_roce_slave,
};

struct bench {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;	/* @qp: the QP's */
	struct ib_qp *qp;
	union ib_gid dgid;
	u8 mac[ETH_ALEN];	/* the MAC the lookup found, the reference */
	bool unicast;
};

/* The IPv4 address of an IPv4-mapped GID. */
static __be32 gid_v4(const union ib_gid *gid)
{
	__be32 addr;

	memcpy(&addr, gid->raw + 12, sizeof(addr));
	return addr;
}

static void fill(const struct bench *b, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, NULL, 0, sgid_index, 64, 0);
	attr->grh.dgid = b->dgid;
}

/*
 * The route from the GID's netdev to the destination and its neighbour, as
 * both cores look them up (addr.c:addr4_resolve/addr6_resolve, then the
 * neighbour of the route): the neighbour's MAC into @mac.
 */
static int lookup(const struct bench *b, const struct ib_gid_attr *gid, u8 *mac)
{
	struct net_device *ndev;
	struct neighbour *n;
	struct dst_entry *dst;
	struct net *net;
	int ret = 0;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gid);
	if (IS_ERR(ndev)) {
		rcu_read_unlock();
		return PTR_ERR(ndev);
	}
	net = dev_net(ndev);
	if (ipv6_addr_v4mapped((struct in6_addr *)b->dgid.raw)) {
		struct flowi4 fl4 = {
			.flowi4_oif = ndev->ifindex,
			.daddr = gid_v4(&b->dgid),
			.saddr = gid_v4(&gid->gid),
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt)) {
			rcu_read_unlock();
			return PTR_ERR(rt);
		}
		dst = &rt->dst;
	} else {
		struct flowi6 fl6 = { .flowi6_oif = ndev->ifindex };

		memcpy(&fl6.daddr, b->dgid.raw, 16);
		memcpy(&fl6.saddr, gid->gid.raw, 16);
		dst = ip6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst)) {
			rcu_read_unlock();
			return PTR_ERR(dst);
		}
	}
	/* As ib_core's dst_fetch_ha: the state and the MAC under the entry's lock. */
	n = dst_neigh_lookup(dst, b->dgid.raw + (dst->ops->family == AF_INET ? 12 : 0));
	ret = -ENODATA;
	if (n) {
		read_lock_bh(&n->lock);
		if (n->nud_state & NUD_VALID) {
			neigh_ha_snapshot(mac, n, ndev);
			ret = 0;
		}
		read_unlock_bh(&n->lock);
		neigh_release(n);
	}
	dst_release(dst);
	rcu_read_unlock();
	return ret;
}

/* The mapped multicast MAC of the destination (verbs.c:ib_resolve_eth_dmac). */
static void mcast_mac(const struct bench *b, u8 *mac)
{
	if (ipv6_addr_v4mapped((struct in6_addr *)b->dgid.raw))
		ip_eth_mc_map(gid_v4(&b->dgid), mac);
	else
		ipv6_eth_mc_map((struct in6_addr *)b->dgid.raw, mac);
}

/* The floor: what the device and ib_core's GID table cost with the lookups. */
static int floor_once(const struct bench *b)
{
	struct rdma_ah_init_attr init = { .flags = RDMA_CREATE_AH_SLEEPABLE };
	const struct ib_gid_attr *gid;
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	int ret;

	gid = rdma_get_gid_attr(b->dev, 1, sgid_index);
	if (IS_ERR(gid))
		return PTR_ERR(gid);
	fill(b, &attr);
	attr.grh.sgid_attr = gid;
	if (b->unicast) {
		ret = lookup(b, gid, attr.roce.dmac);
		if (ret)
			goto out;
	} else {
		mcast_mac(b, attr.roce.dmac);
	}
	ah = rdma_zalloc_drv_obj(b->dev, ib_ah);
	if (!ah) {
		ret = -ENOMEM;
		goto out;
	}
	ah->device = b->dev;
	ah->pd = b->pd;
	ah->type = attr.type;
	ah->sgid_attr = gid;
	init.ah_attr = &attr;
	ret = b->dev->ops.create_ah(ah, &init, NULL);
	if (!ret)
		ret = b->dev->ops.destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	kfree(ah);
out:
	rdma_put_gid_attr(gid);
	return ret;
}

static int lookup_once(const struct bench *b)
{
	const struct ib_gid_attr *gid;
	u8 mac[ETH_ALEN];
	int ret;

	gid = rdma_get_gid_attr(b->dev, 1, sgid_index);
	if (IS_ERR(gid))
		return PTR_ERR(gid);
	ret = lookup(b, gid, mac);
	rdma_put_gid_attr(gid);
	return ret;
}

enum kind { K_C, K_RUST, K_LOOKUP, K_FLOOR, K_NR };

static const char *const kind_name[K_NR] = { "c", "rust", "lookup", "floor" };

/* @qp: the attributes of the modify to RTR, the path's MAC not resolved. */
static int qp_rtr_attr(const struct bench *b, struct ib_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = IB_QPS_RTR;
	attr->path_mtu = IB_MTU_1024;
	attr->dest_qp_num = 0xabcde;
	attr->max_dest_rd_atomic = 1;
	attr->min_rnr_timer = 12;
	fill(b, &attr->ah_attr);
	return IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
	       IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
}

/* @qp: back to INIT (ib_core's kernel modify, which resolves nothing). */
static int qp_to_init(const struct bench *b)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int ret;

	ret = ib_modify_qp(b->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	return ib_modify_qp(b->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			    IB_QP_ACCESS_FLAGS);
}

/*
 * @qp: one modify to RTR of kind @k, its time added to @ns: through the
 * core (the MAC it resolved must be @b's), or the floor, or the lookups.
 */
static int qp_once(const struct bench *b, enum kind k, u64 *ns)
{
	struct ib_udata udata = {};
	const struct ib_gid_attr *gid;
	struct ib_qp_attr attr;
	int mask, ret;
	u64 start;

	ret = qp_to_init(b);
	if (ret)
		return ret;
	mask = qp_rtr_attr(b, &attr);
	start = ktime_get_ns();
	switch (k) {
	case K_C:
		ret = ib_modify_qp_with_udata(b->qp, &attr, mask, &udata);
		break;
	case K_RUST:
		ret = rust_modify_qp(b->qp, &attr, mask, &udata, &bench_calls);
		break;
	case K_LOOKUP:
		ret = lookup_once(b);
		break;
	default:
		gid = rdma_get_gid_attr(b->dev, 1, sgid_index);
		if (IS_ERR(gid)) {
			ret = PTR_ERR(gid);
			break;
		}
		attr.ah_attr.grh.sgid_attr = gid;
		ret = lookup(b, gid, attr.ah_attr.roce.dmac);
		if (!ret)
			ret = b->dev->ops.modify_qp(b->qp, &attr, mask, NULL);
		rdma_put_gid_attr(gid);
		break;
	}
	*ns += ktime_get_ns() - start;
	if (ret) {
		pr_err("rv_bench_ah: %s: qp %s: %d\n", label, kind_name[k], ret);
		return ret;
	}
	if ((k == K_C || k == K_RUST) && !ether_addr_equal(attr.ah_attr.roce.dmac, b->mac)) {
		pr_err("rv_bench_ah: %s: the core resolved %pM, expected %pM\n", label,
		       attr.ah_attr.roce.dmac, b->mac);
		return -EIO;
	}
	return 0;
}

/* @qp: a kernel RC QP on @b's device, and its CQ. */
static int qp_create(struct bench *b)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	b->cq = ib_alloc_cq(b->dev, NULL, 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(b->cq))
		return PTR_ERR(b->cq);
	init.send_cq = b->cq;
	init.recv_cq = b->cq;
	b->qp = ib_create_qp(b->pd, &init);
	if (IS_ERR(b->qp)) {
		ib_free_cq(b->cq);
		return PTR_ERR(b->qp);
	}
	return 0;
}

/* One create+destroy through a core; the MAC it resolved must be @b's. */
static int core_once(const struct bench *b, bool rust)
{
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	int ret;

	fill(b, &attr);
	ah = cores[rust].create(b->pd, &attr, NULL);
	if (IS_ERR(ah)) {
		pr_err("rv_bench_ah: %s: %s create: %ld\n", label, cores[rust].name, PTR_ERR(ah));
		return PTR_ERR(ah);
	}
	ret = cores[rust].destroy(ah, RDMA_DESTROY_AH_SLEEPABLE, NULL);
	if (ret)
		return ret;
	if (!ether_addr_equal(attr.roce.dmac, b->mac)) {
		pr_err("rv_bench_ah: %s: %s core resolved %pM, expected %pM\n", label,
		       cores[rust].name, attr.roce.dmac, b->mac);
		return -EIO;
	}
	return 0;
}

static int xrcd_once(const struct bench *b, bool rust)
{
	struct ib_xrcd *x;

	x = cores[rust].alloc_xrcd(b->dev, NULL, NULL);
	if (IS_ERR(x)) {
		pr_err("rv_bench_ah: %s: %s alloc_xrcd: %ld\n", label, cores[rust].name,
		       PTR_ERR(x));
		return PTR_ERR(x);
	}
	return cores[rust].dealloc_xrcd(x, NULL);
}

/* The MAC both cores must resolve: the lookup's, or the mapped multicast MAC. */
static int reference_mac(struct bench *b)
{
	const struct ib_gid_attr *gid;
	int ret;

	if (!b->unicast) {
		mcast_mac(b, b->mac);
		return 0;
	}
	gid = rdma_get_gid_attr(b->dev, 1, sgid_index);
	if (IS_ERR(gid))
		return PTR_ERR(gid);
	ret = lookup(b, gid, b->mac);
	rdma_put_gid_attr(gid);
	return ret;
}

static struct ib_ah *core_create(const struct bench *b, struct rdma_ah_attr *attr, bool rust)
{
	return cores[rust].create(b->pd, attr, NULL);
}

static int core_destroy(struct ib_ah *ah, bool rust)
{
	return cores[rust].destroy(ah, RDMA_DESTROY_AH_SLEEPABLE, NULL);
}

/* The first AH to each of @first fresh destinations, timed one by one. */
static int run_first(struct bench *b)
{
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	int i, ret;
	u64 start;

	if (first < 1 || b->dgid.raw[15] + first > 255)
		return -EINVAL;
	for (i = 0; i < first; i++) {
		bool rust = i & 1;

		fill(b, &attr);
		attr.grh.dgid.raw[15] += i;
		start = ktime_get_ns();
		ah = core_create(b, &attr, rust);
		/*
		 * A timeout is a result, not a wrong one: the resolution did
		 * not finish in the core's 1000 ms.  It is counted, with its
		 * time, under its own kind.
		 */
		if (PTR_ERR_OR_ZERO(ah) == -ETIMEDOUT) {
			pr_info("rv_bench_ah: %s %s %d %llu\n", label,
				rust ? "rust_first_timeout" : "c_first_timeout", i,
				ktime_get_ns() - start);
			continue;
		}
		if (IS_ERR(ah)) {
			pr_err("rv_bench_ah: %s: first AH to %pI6: %ld\n", label, attr.grh.dgid.raw,
			       PTR_ERR(ah));
			return PTR_ERR(ah);
		}
		pr_info("rv_bench_ah: %s %s %d %llu\n", label, rust ? "rust_first" : "c_first", i,
			ktime_get_ns() - start);
		ret = core_destroy(ah, rust);
		if (ret)
			return ret;
	}
	return 0;
}

/* Slab memory in use, in bytes (the node counters, folded lazily). */
static unsigned long slab_bytes(void)
{
	return (global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
		global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B)) * PAGE_SIZE;
}

/* @scale live AHs through one core, timed per batch, then destroyed. */
static int run_scale_core(struct bench *b, struct ib_ah **ahs, bool rust)
{
	const char *kind = rust ? "rust" : "c";
	struct rdma_ah_attr attr;
	unsigned long before;
	int made = 0, batches = 0, n, i, ret = 0;
	u64 start;

	before = slab_bytes();
	while (made < scale && !ret) {
		n = min(batch, scale - made);
		start = ktime_get_ns();
		for (i = 0; i < n; i++, made++) {
			fill(b, &attr);
			ahs[made] = core_create(b, &attr, rust);
			if (IS_ERR(ahs[made])) {
				ret = PTR_ERR(ahs[made]);
				pr_err("rv_bench_ah: %s: %s create %d: %d\n", label, kind, made,
				       ret);
				break;
			}
			cond_resched();
		}
		if (!ret)
			pr_info("rv_bench_ah: %s %s_batch %d %llu\n", label, kind, batches++,
				div_u64(ktime_get_ns() - start, n));
	}
	if (!ret)
		pr_info("rv_bench_ah: %s %s_bytes 0 %lu\n", label, kind,
			(slab_bytes() - min(before, slab_bytes())) / scale);
	while (made--) {
		int err = core_destroy(ahs[made], rust);

		ret = ret ?: err;
		cond_resched();
	}
	return ret;
}

static int run_scale(struct bench *b)
{
	struct ib_ah **ahs;
	int r, ret = 0;

	if (scale < 1 || batch < 1)
		return -EINVAL;
	ahs = vcalloc(scale, sizeof(*ahs));
	if (!ahs)
		return -ENOMEM;
	/* @rounds times each, C first in even rounds, Rust first in odd ones. */
	for (r = 0; r < rounds && !ret; r++) {
		bool first_rust = r & 1;

		ret = run_scale_core(b, ahs, first_rust) ?: run_scale_core(b, ahs, !first_rust);
	}
	vfree(ahs);
	return ret;
}

static int once(const struct bench *b, enum kind k)
{
	if (xrcd)
		return xrcd_once(b, k == K_RUST);
	switch (k) {
	case K_C:
		return core_once(b, false);
	case K_RUST:
		return core_once(b, true);
	case K_LOOKUP:
		return lookup_once(b);
	default:
		return floor_once(b);
	}
}

/* @n pairs of kind @k (@qp: modifies to RTR): their time in ns. */
static int measure(const struct bench *b, enum kind k, int n, u64 *ns)
{
	u64 start;
	int i, ret;

	if (qp) {
		*ns = 0;
		for (i = 0; i < n; i++) {
			ret = qp_once(b, k, ns);
			if (ret)
				return ret;
			cond_resched();
		}
		return 0;
	}
	start = ktime_get_ns();
	for (i = 0; i < n; i++) {
		ret = once(b, k);
		if (ret)
			return ret;
		cond_resched();
	}
	*ns = ktime_get_ns() - start;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The orders of the kinds, block by block: for each number of kinds, rows
 * in which every kind follows every other one equally often (for 4 a
 * Williams square, for 3 and 2 every order).  A kind can leave work behind
 * that the next block pays for: the C core's resolution wakes a worker and
 * frees its request through RCU.  With one fixed rotation the same kind
 * would always follow it.
 */
static const u8 orders4[][4] = { { 0, 1, 3, 2 }, { 1, 2, 0, 3 }, { 2, 3, 1, 0 }, { 3, 0, 2, 1 } };
static const u8 orders3[][3] = { { 0, 1, 2 }, { 1, 2, 0 }, { 2, 0, 1 },
				 { 0, 2, 1 }, { 1, 0, 2 }, { 2, 1, 0 } };
static const u8 orders2[][2] = { { 0, 1 }, { 1, 0 } };

/* The position (0..@nkinds) that runs @i-th in block @j. */
static int turn(int nkinds, int j, int i)
{
	switch (nkinds) {
	case 4:
		return orders4[j % ARRAY_SIZE(orders4)][i];
	case 3:
		return orders3[j % ARRAY_SIZE(orders3)][i];
	case 2:
		return orders2[j % ARRAY_SIZE(orders2)][i];
	default:
		return i;
	}
}

/*
 * A round: @reps pairs of each kind, in blocks of @block pairs, the kinds
 * taking turns block by block (in the orders above), so that whatever else
 * the machine does in a stretch of time (the host of a TCG guest, an
 * interrupt storm) falls on every kind alike, not on one kind's whole
 * round.  Each kind's result is the median of its blocks, in ns per pair:
 * a block that something else interrupted does not move it.
 */
static int round_of(const struct bench *b, const enum kind *order, int nkinds, int r)
{
	int nblocks = DIV_ROUND_UP(reps, block);
	u64 *times[K_NR] = {};
	int i, j, ret = -ENOMEM;

	for (i = 0; i < nkinds; i++) {
		times[i] = kvmalloc_array(nblocks, sizeof(u64), GFP_KERNEL);
		if (!times[i])
			goto out;
	}
	for (j = 0; j < nblocks; j++) {
		int n = min(block, reps - j * block);

		for (i = 0; i < nkinds; i++) {
			int at = turn(nkinds, j, i);

			ret = measure(b, order[at], n, &times[at][j]);
			if (ret)
				goto out;
			times[at][j] = div_u64(times[at][j], n);
		}
	}
	for (i = 0; i < nkinds; i++) {
		sort(times[i], nblocks, sizeof(u64), cmp_u64, NULL);
		pr_info("rv_bench_ah: %s %s %d %llu\n", label,
			xrcd ? (order[i] == K_RUST ? "rust" : "c") : kind_name[order[i]], r,
			times[i][nblocks / 2]);
	}
	ret = 0;
out:
	for (i = 0; i < nkinds; i++)
		kvfree(times[i]);
	return ret;
}

static int run(struct bench *b)
{
	int nkinds = xrcd ? 2 : (b->unicast ? K_NR : K_NR - 1);
	enum kind order[K_NR] = { K_C, K_RUST, K_FLOOR, K_LOOKUP };

	/* @qp: the four kinds, unicast only. */
	if (qp && !b->unicast)
		return -EINVAL;
	int r, i, ret;
	u64 ns;

	if (!xrcd) {
		ret = reference_mac(b);
		if (ret) {
			pr_err("rv_bench_ah: %s: no valid neighbour for %pI6: %d\n", label,
			       b->dgid.raw, ret);
			return ret;
		}
	}
	/* Warm-up: a tenth of a round of each. */
	for (i = 0; i < nkinds; i++) {
		ret = measure(b, order[i], max(reps / 10, 1), &ns);
		if (ret)
			return ret;
	}
	for (r = 0; r < rounds; r++) {
		ret = round_of(b, order, nkinds, r);
		if (ret)
			return ret;
	}
	return 0;
}

static int __init rv_bench_ah_init(void)
{
	struct bench b = {};
	int ret;

	if (reps < 1 || rounds < 1 || block < 1)
		return -EINVAL;
	if (!xrcd && in6_pton(dgid, -1, b.dgid.raw, -1, NULL) != 1)
		return -EINVAL;
	b.unicast = !rdma_is_multicast_addr((struct in6_addr *)b.dgid.raw);
	cores[false] = (struct core){
		.name = "C",
		.create = rdma_create_user_ah,
		.destroy = rdma_destroy_ah_user,
		.alloc_xrcd = ib_alloc_xrcd_user,
		.dealloc_xrcd = ib_dealloc_xrcd_user,
	};
	cores[true] = (struct core){
		.name = "Rust",
		.create = symbol_get(rverbs_create_user_ah),
		.destroy = symbol_get(rverbs_destroy_ah_user),
		.alloc_xrcd = symbol_get(rverbs_alloc_xrcd_user),
		.dealloc_xrcd = symbol_get(rverbs_dealloc_xrcd_user),
	};
	rust_modify_qp = symbol_get(rverbs_modify_qp_with_udata);
	if (!cores[true].create || !cores[true].destroy || !cores[true].alloc_xrcd ||
	    !cores[true].dealloc_xrcd || !rust_modify_qp) {
		pr_err("rv_bench_ah: rverbs.ko is not loaded\n");
		ret = -ENOENT;
		goto out_symbols;
	}
	b.dev = rv_find_device(netdev);
	if (IS_ERR(b.dev)) {
		ret = PTR_ERR(b.dev);
		goto out_symbols;
	}
	b.pd = ib_alloc_pd(b.dev, 0);
	if (IS_ERR(b.pd)) {
		ret = PTR_ERR(b.pd);
		goto out_dev;
	}
	if (first) {
		ret = run_first(&b);
	} else if (scale) {
		ret = run_scale(&b);
	} else if (qp) {
		ret = qp_create(&b);
		if (!ret) {
			ret = run(&b);
			ib_destroy_qp(b.qp);
			ib_free_cq(b.cq);
		}
	} else {
		ret = run(&b);
	}
	ib_dealloc_pd(b.pd);
out_dev:
	ib_device_put(b.dev);
out_symbols:
	if (cores[true].create)
		symbol_put(rverbs_create_user_ah);
	if (cores[true].destroy)
		symbol_put(rverbs_destroy_ah_user);
	if (cores[true].alloc_xrcd)
		symbol_put(rverbs_alloc_xrcd_user);
	if (cores[true].dealloc_xrcd)
		symbol_put(rverbs_dealloc_xrcd_user);
	if (rust_modify_qp)
		symbol_put(rverbs_modify_qp_with_udata);
	return ret;
}

static void __exit rv_bench_ah_exit(void)
{
}

module_init(rv_bench_ah_init);
module_exit(rv_bench_ah_exit);
MODULE_DESCRIPTION("rverbs benchmark: in-kernel AH, XRCD and QP modify, C core vs Rust core vs floors");
MODULE_LICENSE("GPL");
