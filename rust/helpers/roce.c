// SPDX-License-Identifier: GPL-2.0
/*
 * C side of rv0's wire (RoCE v2 over UDP port 4791): socket buffers,
 * transmission through the IP layer without a socket, and the tap that
 * receives RoCE v2 datagrams.  Prototypes in include/rverbs_helpers.h.
 *
 * The tap is a netfilter LOCAL_IN hook registered in every network
 * namespace by a pernet_operations (Documentation/rv0-datapath.rst,
 * "Part 3", option (c)): no UDP port is bound, so soft-RoCE keeps its own
 * socket on port 4791 in any namespace.  The hook takes a datagram to port
 * 4791 only if the Rust side claims it (it arrived on the netdev of an rv
 * device); everything else goes on to the UDP layer.  netfilter's types are
 * not in the kernel crate's bindings, so the two static tables stay here:
 * one tap per module, whose handler the Rust side registers with
 * rverbs_tap_register() and removes with rverbs_tap_unregister().
 */

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/xfrm.h>
#include <rdma/ib_verbs.h>

#include "rverbs_helpers.h"

#if !IS_ENABLED(CONFIG_NETFILTER)
#error "rv0 receives RoCE v2 packets through a netfilter hook: CONFIG_NETFILTER=y is needed"
#endif

/* The handler while the tap is registered; NULL otherwise. */
static rverbs_tap_fn rverbs_tap_handler;
static void *rverbs_tap_priv;

/*
 * A datagram to UDP port 4791 goes to the handler; it returns true if it
 * took it.  IPv6 extension headers are walked to the UDP header (IPv6's
 * LOCAL_IN comes before they are parsed): a RoCE v2 packet with one goes
 * to the handler too, which drops it for its header, as it drops IPv4
 * options (soft-RoCE's ICRC pseudo-header assumes UDP right after the IP
 * header).  A fragment is left to the stack, which reassembles it after
 * this hook.
 */
static unsigned int rverbs_tap_local_in(void *priv, struct sk_buff *skb,
					const struct nf_hook_state *state)
{
	struct udphdr _uh;
	const struct udphdr *uh;
	unsigned int udp_off;

	if (skb->protocol == htons(ETH_P_IP)) {
		if (ip_hdr(skb)->protocol != IPPROTO_UDP)
			return NF_ACCEPT;
		udp_off = skb_transport_offset(skb);
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		unsigned int off = 0;
		int flags = 0;

		if (ipv6_hdr(skb)->nexthdr == IPPROTO_UDP) {
			udp_off = skb_transport_offset(skb);
		} else {
			if (ipv6_find_hdr(skb, &off, IPPROTO_UDP, NULL, &flags) != IPPROTO_UDP ||
			    (flags & IP6_FH_F_FRAG))
				return NF_ACCEPT;
			udp_off = off;
		}
	} else {
		return NF_ACCEPT;
	}
	uh = skb_header_pointer(skb, udp_off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(ROCE_V2_UDP_DPORT))
		return NF_ACCEPT;
	/*
	 * The IPsec input policy, which the UDP layer checks before a socket
	 * gets the datagram: what it refuses goes on to be dropped there.
	 */
	if (skb->protocol == htons(ETH_P_IP) ?
	    !xfrm4_policy_check(NULL, XFRM_POLICY_IN, skb) :
	    !xfrm6_policy_check(NULL, XFRM_POLICY_IN, skb))
		return NF_ACCEPT;
	/*
	 * The handler is set before the hook is registered anywhere and
	 * cleared after it is unregistered everywhere and a grace period.
	 */
	return rverbs_tap_handler(rverbs_tap_priv, skb) ? NF_STOLEN : NF_ACCEPT;
}

static const struct nf_hook_ops rverbs_tap_ops = {
	.hook = rverbs_tap_local_in,
	.pf = NFPROTO_INET,
	.hooknum = NF_INET_LOCAL_IN,
	/*
	 * After the filter and security tables: firewall rules apply as
	 * they would to a socket.
	 */
	.priority = NF_IP_PRI_SELINUX_LAST + 1,
};

static int __net_init rverbs_tap_net_init(struct net *net)
{
	return nf_register_net_hook(net, &rverbs_tap_ops);
}

static void __net_exit rverbs_tap_net_exit(struct net *net)
{
	nf_unregister_net_hook(net, &rverbs_tap_ops);
}

static struct pernet_operations rverbs_tap_net_ops = {
	.init = rverbs_tap_net_init,
	.exit = rverbs_tap_net_exit,
};

int rverbs_tap_register(rverbs_tap_fn handler, void *priv)
{
	int err;

	if (cmpxchg(&rverbs_tap_handler, NULL, handler))
		return -EBUSY;
	/* Read by the hook only once it is registered, below. */
	rverbs_tap_priv = priv;
	/* Registers the hook in every namespace, now and to come. */
	err = register_pernet_subsys(&rverbs_tap_net_ops);
	if (err) {
		/*
		 * The namespaces registered before the failure were undone,
		 * without waiting for hooks still running there.
		 */
		synchronize_net();
		WRITE_ONCE(rverbs_tap_handler, NULL);
	}
	return err;
}

void rverbs_tap_unregister(void)
{
	unregister_pernet_subsys(&rverbs_tap_net_ops);
	/*
	 * A hook unregistered may still run on another CPU until a grace
	 * period has passed (net/netfilter/core.c frees the old table with
	 * call_rcu).
	 */
	synchronize_net();
	WRITE_ONCE(rverbs_tap_handler, NULL);
	rverbs_tap_priv = NULL;
}

/* The netdev a datagram arrived on; for a VLAN, the real device under it. */
struct net_device *rverbs_skb_rx_real_dev(const struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;

	if (dev && is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	return dev;
}

/* The netdev a datagram arrived on (a VLAN's own). */
struct net_device *rverbs_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
}

/*
 * Whether the packet's transport checksum is known good without reading its
 * bytes (skb_csum_unnecessary: verified by the device, or a local packet
 * whose checksum is still to be filled in, CHECKSUM_PARTIAL, as over veth),
 * as the UDP layer takes it (udp_lib_checksum_complete).
 */
bool rverbs_skb_csum_unnecessary(const struct sk_buff *skb)
{
	return skb_csum_unnecessary(skb);
}

/* Makes the packet linear: an allocation only if it is not. */
int rverbs_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

/*
 * The bytes of a linear packet from its network header to its end; NULL if
 * it is not linear or has no such header.
 */
const u8 *rverbs_skb_network_bytes(const struct sk_buff *skb, size_t *len)
{
	if (skb_is_nonlinear(skb))
		return NULL;
	if (skb_network_header(skb) < skb->head ||
	    skb_network_header(skb) > skb_tail_pointer(skb))
		return NULL;
	*len = skb_tail_pointer(skb) - skb_network_header(skb);
	return skb_network_header(skb);
}

/*
 * Copies up to @len bytes of @skb from its network header into @buf, linear
 * or not, without changing the buffer (skb_copy_bits); the bytes copied.
 */
size_t rverbs_skb_copy_network(const struct sk_buff *skb, u8 *buf, size_t len)
{
	int off = skb_network_offset(skb);

	if (off < 0 || off >= skb->len)
		return 0;
	len = min_t(size_t, len, skb->len - off);
	return skb_copy_bits(skb, off, buf, len) ? 0 : len;
}

/*
 * A packet of @len bytes for @dev, with room for its link-layer header;
 * the bytes are zero.
 */
struct sk_buff *rverbs_skb_alloc_tx(const struct net_device *dev, size_t len)
{
	unsigned int room = LL_RESERVED_SPACE(dev);
	struct sk_buff *skb;

	skb = alloc_skb(room + len, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	skb_put_zero(skb, len);
	return skb;
}

u8 *rverbs_skb_data(const struct sk_buff *skb, size_t *len)
{
	*len = skb_headlen(skb);
	return skb->data;
}

void rverbs_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void rverbs_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

/*
 * Transmit buffers with an owner (rust/net/skb.rs, SkBuff::set_tx_owner;
 * rv0's backpressure, rust/sw/tx.rs): the buffer's destructor, a function
 * of the Rust side, gets the owner back when the buffer is freed, wherever
 * that is: dropped by a qdisc, freed by the driver, or orphaned by the
 * receiving IP layer (ip_rcv_core(), for a veth peer).  As xsk and SCTP
 * do with their own buffers, the owner rides in
 * skb_shinfo(skb)->destructor_arg, which only zero-copy buffers
 * (SKBFL_ZEROCOPY_ENABLE, never set on these) use otherwise.
 * rverbs_tx_skbs counts the buffers whose destructor is the module's, so
 * that the module is not unloaded under one (rverbs_tx_barrier()).
 */
static atomic_long_t rverbs_tx_skbs = ATOMIC_LONG_INIT(0);

/* Gives @skb @destructor and @owner, unless it has a destructor already. */
bool rverbs_skb_set_tx_owner(struct sk_buff *skb, void (*destructor)(struct sk_buff *),
			     void *owner)
{
	if (skb->destructor)
		return false;
	atomic_long_inc(&rverbs_tx_skbs);
	skb_shinfo(skb)->destructor_arg = owner;
	skb->destructor = destructor;
	return true;
}

/* The owner rverbs_skb_set_tx_owner() gave @skb. */
void *rverbs_skb_tx_owner(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->destructor_arg;
}

/*
 * The last thing a destructor of rverbs_skb_set_tx_owner() does: counted
 * out inside a read-side section, so that once the count is 0 a grace
 * period later no destructor is before this point (rverbs_tx_barrier()).
 */
void rverbs_tx_skb_put(void)
{
	rcu_read_lock();
	atomic_long_dec(&rverbs_tx_skbs);
	rcu_read_unlock();
}

/*
 * Waits until no buffer of rverbs_skb_set_tx_owner() is left anywhere (a
 * qdisc may hold one for as long as it is configured to), then for a grace
 * period: the module's exit, after its devices are gone.  May sleep.
 */
void rverbs_tx_barrier(void)
{
	unsigned long start = jiffies;
	bool told = false;

	while (atomic_long_read(&rverbs_tx_skbs)) {
		if (!told && time_after(jiffies, start + 10 * HZ)) {
			pr_warn("rverbs: waiting for %ld transmit buffers still queued\n",
				atomic_long_read(&rverbs_tx_skbs));
			told = true;
		}
		msleep(20);
	}
	synchronize_rcu();
}

/*
 * Sends @skb, whose data is a whole IPv4 (or IPv6, @ipv6) packet of
 * @ip_hlen bytes of IP header, through the route @dst, whose reference it
 * takes; no socket (as drivers/net/ipvlan does).  The IP layer fills in
 * the IPv4 total length and header checksum, or the IPv6 payload length.
 * Consumes @skb; returns what ip_local_out() returns.
 */
int rverbs_ip_local_out(struct sk_buff *skb, struct dst_entry *dst, bool ipv6,
			unsigned int ip_hlen)
{
	struct net *net = dev_net(dst->dev);

	skb_dst_set(skb, dst);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ip_hlen);
	skb->dev = dst->dev;
	if (ipv6) {
		skb->protocol = htons(ETH_P_IPV6);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		return ip6_local_out(net, NULL, skb);
	}
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return ip_local_out(net, NULL, skb);
}

u32 rverbs_crc32_le(u32 crc, const u8 *p, size_t len)
{
	return crc32_le(crc, p, len);
}
