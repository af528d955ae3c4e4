// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers of rverbs for routes and neighbours: static inline functions
 * and macros of include/net/, made callable from Rust.  Prototypes in
 * include/rverbs_helpers.h.
 */

#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/wait.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/ip6_fib.h>
#include <net/neighbour.h>
#include <net/route.h>

#include "rverbs_helpers.h"

struct net *rverbs_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

unsigned short rverbs_dst_family(const struct dst_entry *dst)
{
	return dst->ops->family;
}

/* is_dst_local() of drivers/infiniband/core/addr.c, on the route types. */
static bool rverbs_dst_is_local(const struct dst_entry *dst)
{
	if (dst->ops->family == AF_INET)
		return dst_rtable(dst)->rt_type == RTN_LOCAL;
	if (dst->ops->family == AF_INET6)
		return !!(dst_rt6_info(dst)->rt6i_flags & RTF_LOCAL);
	return false;
}

/* has_gateway() of drivers/infiniband/core/addr.c, on the route types. */
static bool rverbs_dst_has_gateway(const struct dst_entry *dst)
{
	if (dst->ops->family == AF_INET)
		return dst_rtable(dst)->rt_uses_gateway;
	return dst_rt6_info(dst)->rt6i_flags & RTF_GATEWAY;
}

/*
 * What address resolution needs of a route, in one call (the Rust core
 * asks for every unicast AH): its hop limit (ip4_dst_hoplimit,
 * ip6_dst_hoplimit), whether the destination is local and whether it goes
 * through a gateway (addr.c's is_dst_local and has_gateway), and its
 * device (dst_dev: the caller holds the RCU read lock).
 */
void rverbs_dst_facts(const struct dst_entry *dst, struct rverbs_route_facts *facts)
{
	facts->hop_limit = dst->ops->family == AF_INET ? ip4_dst_hoplimit(dst) :
							 ip6_dst_hoplimit((struct dst_entry *)dst);
	facts->is_local = rverbs_dst_is_local(dst);
	facts->has_gateway = rverbs_dst_has_gateway(dst);
	facts->dev = dst_dev(dst);
}

/*
 * A route kept between packets (soft-RoCE's rxe_find_route keeps an RC
 * QP's in its socket): the cookie to check it against later, IPv6's FIB
 * serial (rt6_get_cookie) or 0 for IPv4 (ipv4_dst_check reads none).
 */
u32 rverbs_dst_cookie(const struct dst_entry *dst)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (dst->ops->family == AF_INET6)
		return rt6_get_cookie(dst_rt6_info(dst));
#endif
	return 0;
}

/*
 * Whether a kept route still holds (dst_check(), which takes and drops no
 * reference): not obsoleted since by a change of routes, of addresses, or
 * of its device (unregistered: dst_dev_put marks it dead).
 */
bool rverbs_dst_valid(struct dst_entry *dst, u32 cookie)
{
	return dst_check(dst, cookie);
}

/* Another reference on a route (dst_hold: the caller holds one). */
void rverbs_dst_hold(struct dst_entry *dst)
{
	dst_hold(dst);
}

/*
 * dst_fetch_ha() of ib_core's addr.c, in one call (the Rust core's fast path
 * makes it for every unicast AH): the neighbour entry of @daddr on @dst
 * (created when missing); if it is NUD_VALID, its hardware address into @ha
 * (MAX_ADDR_LEN bytes), read under the entry's read lock, which
 * neigh_update() writes the state under, and 0; otherwise the entry's
 * resolution is started or continued, and -ENODATA, as when no entry can
 * be had.  The caller holds the RCU read lock (dst_dev).
 */
int rverbs_dst_fetch_ha(const struct dst_entry *dst, const void *daddr, u8 *ha)
{
	struct neighbour *n = dst_neigh_lookup(dst, daddr);
	bool valid;

	if (!n)
		return -ENODATA;
	read_lock_bh(&n->lock);
	valid = n->nud_state & NUD_VALID;
	if (valid)
		neigh_ha_snapshot(ha, n, dst_dev(dst));
	read_unlock_bh(&n->lock);
	if (!valid)
		neigh_event_send(n, NULL);
	neigh_release(n);
	return valid ? 0 : -ENODATA;
}

/*
 * nud_state read without the neighbour's lock, as the netevent callback
 * does: it may change under us (neigh_update() writes it under the write
 * lock), so read it once, as neigh_hh_output() and friends do.
 */
u8 rverbs_neigh_nud_state(const struct neighbour *n)
{
	return READ_ONCE(n->nud_state);
}

/* for_each_netdev_rcu() is a macro; the caller holds the RCU read lock. */
struct net_device *rverbs_ipv6_addr_dev_rcu(struct net *net,
					    const struct in6_addr *addr)
{
	struct net_device *dev;

	for_each_netdev_rcu(net, dev) {
		if (ipv6_chk_addr(net, addr, dev, 1))
			return dev;
	}
	return NULL;
}

/*
 * Neighbour updates: the wait queue and generation count that the netevent
 * notifier of rverbs (rust/net/neighbour.rs) bumps and wakes.  The queue is
 * defined by a macro, and waiting on it is one too.
 *
 * The wait is killable: C's rdma_addr_find_l2_eth_by_grh() waits for its
 * request uninterruptibly (wait_for_completion()); here only a fatal signal
 * ends the wait early, and the process dies anyway.  The kernel crate's
 * CondVar cannot be reused for it: in 7.2 it offers uninterruptible and
 * interruptible waits only (wait_internal(), which takes the task state,
 * is private), waits on a condition checked under a lock guard, and needs
 * run-time pinned initialisation, where this queue is initialised
 * statically.
 */
static DECLARE_WAIT_QUEUE_HEAD(neigh_wq);
static atomic_t neigh_generation = ATOMIC_INIT(0);

int rverbs_neigh_generation(void)
{
	return atomic_read(&neigh_generation);
}

void rverbs_neigh_updated(void)
{
	atomic_inc(&neigh_generation);
	wake_up_all(&neigh_wq);
}

/*
 * Waits until the generation differs from @seen: > 0 (jiffies left) when
 * it does, 0 at the timeout, -ERESTARTSYS on a fatal signal.
 */
long rverbs_neigh_wait(int seen, long timeout)
{
	return wait_event_killable_timeout(neigh_wq,
					   atomic_read(&neigh_generation) != seen,
					   timeout);
}

/*
 * Fields of struct net_device, which the kernel crate's bindings only know
 * as an opaque type.
 */
int rverbs_netdev_ifindex(const struct net_device *dev)
{
	return dev->ifindex;
}

unsigned short rverbs_netdev_type(const struct net_device *dev)
{
	return dev->type;
}

const unsigned char *rverbs_netdev_dev_addr(const struct net_device *dev)
{
	return dev->dev_addr;
}

unsigned int rverbs_netdev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

bool rverbs_netdev_is_up(const struct net_device *dev)
{
	return dev->flags & IFF_UP;
}

/* Running with a carrier: what ib_get_curr_port_state() calls active. */
bool rverbs_netdev_is_active(struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev);
}

bool rverbs_is_vlan_dev(const struct net_device *dev)
{
	return is_vlan_dev(dev);
}

void rverbs_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rverbs_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

void rverbs_netdev_hold(struct net_device *dev, netdevice_tracker *tracker)
{
	netdev_hold(dev, tracker, GFP_KERNEL);
}

void rverbs_netdev_put(struct net_device *dev, netdevice_tracker *tracker)
{
	netdev_put(dev, tracker);
}

/* Stable under RTNL, which (un)registration holds while it changes it. */
bool rverbs_netdev_is_registered(const struct net_device *dev)
{
	return READ_ONCE(dev->reg_state) == NETREG_REGISTERED;
}

bool rverbs_netif_is_lag(const struct net_device *dev)
{
	return netif_is_lag_master(dev) || netif_is_lag_port(dev);
}

struct net_device *rverbs_netdev_notifier_info_to_dev(const struct netdev_notifier_info *info)
{
	return netdev_notifier_info_to_dev(info);
}
