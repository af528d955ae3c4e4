// SPDX-License-Identifier: GPL-2.0
/*
 * C side of rv0's wire (RoCE v2 over UDP port 4791): socket buffers,
 * transmission through the IP layer without a socket, and the tap that
 * receives RoCE v2 datagrams.  Prototypes in include/rverbs_helpers.h.
 *
 * The tap is a netfilter LOCAL_IN hook registered in each network
 * namespace that has an rv device, while it has one (rverbs_tap_net_get();
 * Documentation/rv0-datapath.rst, "Part 3", option (c)): no UDP port is
 * bound, so soft-RoCE keeps its own socket on port 4791 in any namespace.
 * The hook takes a datagram to port 4791 only if the Rust side claims it
 * (it arrived on the netdev of an rv device); everything else goes on to
 * the UDP layer.  netfilter's types are
 * not in the kernel crate's bindings, so the two static tables stay here:
 * one tap per module, whose handler the Rust side registers with
 * rverbs_tap_register() and removes with rverbs_tap_unregister().
 */

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/gso.h>
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
 * A datagram that is a train of segments (GSO: a sender's UDP_SEGMENT
 * passed through by veth, or GRO's work) is cut into its datagrams here, as
 * the UDP layer cuts it for a socket that does not take such trains
 * (udp_queue_rcv_skb(), udp_rcv_segment(): soft-RoCE's socket is one), and
 * each goes to the handler in turn; one it does not take goes on to the
 * UDP layer from here (the hook's okfn, as if this hook had accepted it:
 * the later LOCAL_IN hooks, conntrack's confirmation, are not run for it).
 * A UFO train, which the UDP layer drops, and one that cannot be cut are
 * left to the stack untouched.
 */
static unsigned int rverbs_tap_segments(rverbs_tap_fn handler, struct sk_buff *skb,
					const struct nf_hook_state *state)
{
	/* As udp_rcv_segment(): no checksum recomputed (left as partial). */
	netdev_features_t features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM;
	struct sk_buff *segs, *seg, *next;
	int to_mac;

	if ((skb_shinfo(skb)->gso_type & SKB_GSO_UDP) || !skb_mac_header_was_set(skb))
		return NF_ACCEPT;
	to_mac = skb->data - skb_mac_header(skb);
	if (skb->pkt_type == PACKET_LOOPBACK)
		skb->ip_summed = CHECKSUM_PARTIAL;
	/* Segmentation starts from the MAC header, as in the UDP layer. */
	__skb_push(skb, to_mac);
	segs = __skb_gso_segment(skb, features, false);
	if (IS_ERR_OR_NULL(segs)) {
		__skb_pull(skb, to_mac);
		return NF_ACCEPT;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		__skb_pull(seg, skb_network_offset(seg));
		if (!handler(rverbs_tap_priv, seg))
			state->okfn(state->net, state->sk, seg);
	}
	return NF_STOLEN;
}

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
	rverbs_tap_fn handler;

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
	 * The handler is set before the hook is registered anywhere, and the
	 * hook is unregistered everywhere when it is cleared; its data stays
	 * a grace period longer (rverbs_tap_unregister()).
	 */
	handler = READ_ONCE(rverbs_tap_handler);
	if (!handler)
		return NF_ACCEPT;
	if (skb_is_gso(skb))
		return rverbs_tap_segments(handler, skb, state);
	return handler(rverbs_tap_priv, skb) ? NF_STOLEN : NF_ACCEPT;
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

/*
 * The namespaces the hook is registered in: only those with an rv device,
 * and only while they have one (rverbs_tap_net_get(), one use per bound
 * device).  Every other namespace, and the host's when it has no rv
 * device, pays nothing for rverbs on its packets.  An entry lives while it
 * has users; its namespace may go first (a device's unregistration runs
 * from a work item after its netdev's): the pernet exit then unregisters
 * the hook there and forgets the namespace, and the last put frees the
 * entry.  All under rverbs_tap_nets_lock.
 */
struct rverbs_tap_net {
	struct list_head list;
	struct net *net;	/* NULL once the namespace has gone */
	unsigned int users;
	bool registered;
};

static LIST_HEAD(rverbs_tap_nets);
static DEFINE_MUTEX(rverbs_tap_nets_lock);

static void rverbs_tap_net_unhook(struct rverbs_tap_net *tn)
{
	if (tn->registered)
		nf_unregister_net_hook(tn->net, &rverbs_tap_ops);
	tn->registered = false;
}

/*
 * One more use of the hook in @dev's namespace: registered there if it is
 * not yet (and the tap is).  The entry, for rverbs_tap_net_put(); an
 * ERR_PTR if the namespace is going away or on an error.  May sleep.
 */
void *rverbs_tap_net_get(struct net_device *dev)
{
	struct net *net = dev_net(dev);
	struct rverbs_tap_net *tn;
	int err = 0;

	/* A namespace on its way out gets no hook (its exit may have run). */
	if (!maybe_get_net(net))
		return ERR_PTR(-ENODEV);
	mutex_lock(&rverbs_tap_nets_lock);
	list_for_each_entry(tn, &rverbs_tap_nets, list)
		if (tn->net == net)
			goto found;
	tn = kzalloc_obj(*tn, GFP_KERNEL);
	if (!tn) {
		err = -ENOMEM;
		goto out;
	}
	tn->net = net;
	list_add(&tn->list, &rverbs_tap_nets);
found:
	if (!tn->registered && READ_ONCE(rverbs_tap_handler)) {
		err = nf_register_net_hook(net, &rverbs_tap_ops);
		if (err) {
			if (!tn->users) {
				list_del(&tn->list);
				kfree(tn);
			}
			goto out;
		}
		tn->registered = true;
	}
	tn->users++;
out:
	mutex_unlock(&rverbs_tap_nets_lock);
	put_net(net);
	return err ? ERR_PTR(err) : tn;
}

/* One use less of @entry's hook: unregistered with the last.  May sleep. */
void rverbs_tap_net_put(void *entry)
{
	struct rverbs_tap_net *tn = entry;

	mutex_lock(&rverbs_tap_nets_lock);
	if (!--tn->users) {
		rverbs_tap_net_unhook(tn);
		list_del(&tn->list);
		kfree(tn);
	}
	mutex_unlock(&rverbs_tap_nets_lock);
}

/* A namespace goes: its hook with it; its entry forgets it. */
static void __net_exit rverbs_tap_net_exit(struct net *net)
{
	struct rverbs_tap_net *tn;

	mutex_lock(&rverbs_tap_nets_lock);
	list_for_each_entry(tn, &rverbs_tap_nets, list) {
		if (tn->net == net) {
			rverbs_tap_net_unhook(tn);
			tn->net = NULL;
		}
	}
	mutex_unlock(&rverbs_tap_nets_lock);
}

static struct pernet_operations rverbs_tap_net_ops = {
	.exit = rverbs_tap_net_exit,
};

int rverbs_tap_register(rverbs_tap_fn handler, void *priv)
{
	int err;

	if (cmpxchg(&rverbs_tap_handler, NULL, handler))
		return -EBUSY;
	/* Read by the hook only once it is registered somewhere. */
	rverbs_tap_priv = priv;
	/* For the namespaces' exits; no hook is registered yet. */
	err = register_pernet_subsys(&rverbs_tap_net_ops);
	if (err)
		WRITE_ONCE(rverbs_tap_handler, NULL);
	return err;
}

void rverbs_tap_unregister(void)
{
	struct rverbs_tap_net *tn;

	mutex_lock(&rverbs_tap_nets_lock);
	/* No namespace gets the hook from now on (rverbs_tap_net_get()). */
	WRITE_ONCE(rverbs_tap_handler, NULL);
	list_for_each_entry(tn, &rverbs_tap_nets, list)
		rverbs_tap_net_unhook(tn);
	mutex_unlock(&rverbs_tap_nets_lock);
	unregister_pernet_subsys(&rverbs_tap_net_ops);
	/*
	 * A hook unregistered may still run on another CPU until a grace
	 * period has passed (net/netfilter/core.c frees the old table with
	 * call_rcu); the hook reads the handler's data.
	 */
	synchronize_net();
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
struct sk_buff *rverbs_skb_alloc_tx(const struct net_device *dev, size_t len, bool atomic)
{
	unsigned int room = LL_RESERVED_SPACE(dev);
	struct sk_buff *skb;

	skb = alloc_skb(room + len, atomic ? GFP_ATOMIC : GFP_KERNEL);
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

void rverbs_kfree_skb_reason(struct sk_buff *skb, enum rverbs_drop why)
{
	static const enum skb_drop_reason reasons[] = {
		[RVERBS_DROP_NOT_SPECIFIED] = SKB_DROP_REASON_NOT_SPECIFIED,
		[RVERBS_DROP_NOMEM] = SKB_DROP_REASON_NOMEM,
		[RVERBS_DROP_IP_INHDR] = SKB_DROP_REASON_IP_INHDR,
		[RVERBS_DROP_UDP_CSUM] = SKB_DROP_REASON_UDP_CSUM,
		[RVERBS_DROP_UNHANDLED_PROTO] = SKB_DROP_REASON_UNHANDLED_PROTO,
		[RVERBS_DROP_PKT_TOO_SMALL] = SKB_DROP_REASON_PKT_TOO_SMALL,
		[RVERBS_DROP_NO_SOCKET] = SKB_DROP_REASON_NO_SOCKET,
		[RVERBS_DROP_SOCKET_RCVBUFF] = SKB_DROP_REASON_SOCKET_RCVBUFF,
	};

	kfree_skb_reason(skb, (unsigned int)why < ARRAY_SIZE(reasons) ?
			 reasons[why] : SKB_DROP_REASON_NOT_SPECIFIED);
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
