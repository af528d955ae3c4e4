/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of the C helpers of rverbs (rust/helpers/).
 *
 * Rust cannot call static inline functions or expand macros, so each one
 * rverbs needs gets a small wrapper named rverbs_<name>, called by that
 * name from Rust too: one prefix, which no kernel symbol carries.
 */
#ifndef _RVERBS_HELPERS_H
#define _RVERBS_HELPERS_H

#include <linux/types.h>
#include <linux/spinlock_types.h>
#include <net/net_trackers.h>

struct dst_entry;
struct ib_ah;
struct ib_device;
struct ib_ucontext;
struct ib_udata;
struct ib_xrcd;
struct rdma_user_mmap_entry;
struct ib_umem;
struct page;
struct xarray;
struct in6_addr;
struct inode;
struct neighbour;
struct net;
struct net_device;
struct netdev_notifier_info;
struct rtable;
struct sk_buff;
struct sk_buff;

/* rdma.c */
struct ib_ah *rverbs_zalloc_ah(struct ib_device *device, gfp_t gfp);
struct ib_xrcd *rverbs_xrcd_new(struct ib_device *device, struct inode *inode);
bool rverbs_ib_device_try_get(struct ib_device *dev);
int rverbs_xrcd_users(struct ib_xrcd *xrcd);
void *rverbs_vmalloc_user(unsigned long size);
int rverbs_cache_line_size(void);
u64 rverbs_user_mmap_get_offset(const struct rdma_user_mmap_entry *entry);
struct ib_ucontext *rverbs_udata_ucontext(struct ib_udata *udata);
size_t rverbs_umem_num_pages(const struct ib_umem *umem);
bool rverbs_umem_writable(const struct ib_umem *umem);
size_t rverbs_umem_fill_pages(struct ib_umem *umem, struct page **pages,
			      size_t n);
void *rverbs_xa_store(struct xarray *xa, unsigned long index, void *entry);
int rverbs_xa_insert(struct xarray *xa, unsigned long index, void *entry);
void rverbs_xa_init_irq(struct xarray *xa);
int rverbs_xa_insert_any(struct xarray *xa, unsigned long index, void *entry,
			 bool may_sleep);
void *rverbs_xa_replace_any(struct xarray *xa, unsigned long index,
			    void *entry, bool may_sleep);
void *rverbs_xa_erase_any(struct xarray *xa, unsigned long index);
void rverbs_kfree_after_gp(void *obj, struct rcu_head *head);
u32 rverbs_load_acquire_u32(const u32 *p);
void rverbs_store_release_u32(u32 *p, u32 v);
void rverbs_copy_from_shared(void *dst, const void *src, size_t len);
void rverbs_copy_to_shared(void *dst, const void *src, size_t len);
void rverbs_copy_page(struct page *page, size_t offset, void *buf, size_t len,
		      bool to_page);
u64 rverbs_atomic_page(struct page *page, size_t offset, int op, u64 compare,
		       u64 swap_add);
void rverbs_cond_resched(void);
void rverbs_warn_psn_overflow(struct ib_device *device, bool sq);
u64 __percpu *rverbs_pcpu_counters_alloc(unsigned int n);
void rverbs_pcpu_counters_free(u64 __percpu *counters);
void rverbs_pcpu_counter_inc(u64 __percpu *counters, unsigned int i);
u64 rverbs_pcpu_counter_sum(u64 __percpu *counters, unsigned int i);
int rverbs_release_start(void);
void rverbs_release_stop(void);
int rverbs_release_after_gp(void (*fn)(void *data), void *data);

/* net.c */
struct net *rverbs_dev_net(const struct net_device *dev);
unsigned short rverbs_dst_family(const struct dst_entry *dst);

struct rverbs_route_facts {
	struct net_device *dev;
	int hop_limit;
	bool is_local;
	bool has_gateway;
};

void rverbs_dst_facts(const struct dst_entry *dst, struct rverbs_route_facts *facts);
int rverbs_dst_fetch_ha(const struct dst_entry *dst, const void *daddr, u8 *ha);
u32 rverbs_dst_cookie(const struct dst_entry *dst);
bool rverbs_dst_valid(struct dst_entry *dst, u32 cookie);
void rverbs_dst_hold(struct dst_entry *dst);
u8 rverbs_neigh_nud_state(const struct neighbour *n);
struct net_device *rverbs_ipv6_addr_dev_rcu(struct net *net,
					    const struct in6_addr *addr);
int rverbs_netdev_ifindex(const struct net_device *dev);
unsigned short rverbs_netdev_type(const struct net_device *dev);
const unsigned char *rverbs_netdev_dev_addr(const struct net_device *dev);
int rverbs_neigh_generation(void);
void rverbs_neigh_updated(void);
long rverbs_neigh_wait(int seen, long timeout);
unsigned int rverbs_netdev_mtu(const struct net_device *dev);
bool rverbs_netdev_is_up(const struct net_device *dev);
bool rverbs_netdev_is_active(struct net_device *dev);
bool rverbs_is_vlan_dev(const struct net_device *dev);
void rverbs_dev_put(struct net_device *dev);
struct net_device *
rverbs_netdev_notifier_info_to_dev(const struct netdev_notifier_info *info);
void rverbs_dev_hold(struct net_device *dev);
void rverbs_netdev_hold(struct net_device *dev, netdevice_tracker *tracker);
void rverbs_netdev_put(struct net_device *dev, netdevice_tracker *tracker);
bool rverbs_netdev_is_registered(const struct net_device *dev);
bool rverbs_netif_is_lag(const struct net_device *dev);

/* rust/helpers/roce.c: rv0's wire. */
typedef bool (*rverbs_tap_fn)(void *priv, struct sk_buff *skb);
int rverbs_tap_register(rverbs_tap_fn handler, void *priv);
void rverbs_tap_unregister(void);
void *rverbs_tap_net_get(struct net_device *dev);
void rverbs_tap_net_put(void *entry);
struct net_device *rverbs_skb_rx_real_dev(const struct sk_buff *skb);
struct net_device *rverbs_skb_dev(const struct sk_buff *skb);
bool rverbs_skb_csum_unnecessary(const struct sk_buff *skb);
int rverbs_skb_linearize(struct sk_buff *skb);
const u8 *rverbs_skb_network_bytes(const struct sk_buff *skb, size_t *len);
size_t rverbs_skb_copy_network(const struct sk_buff *skb, u8 *buf, size_t len);
struct sk_buff *rverbs_skb_alloc_tx(const struct net_device *dev, size_t len, bool atomic);
u8 *rverbs_skb_data(const struct sk_buff *skb, size_t *len);
void rverbs_kfree_skb(struct sk_buff *skb);

/*
 * Why rverbs drops a received packet; rverbs_kfree_skb_reason() gives the
 * kernel's reason (enum skb_drop_reason) for each, which the kfree_skb
 * tracepoint and drop monitors show.
 */
enum rverbs_drop {
	RVERBS_DROP_NOT_SPECIFIED,
	RVERBS_DROP_NOMEM,
	RVERBS_DROP_IP_INHDR,
	RVERBS_DROP_UDP_CSUM,
	RVERBS_DROP_UNHANDLED_PROTO,
	RVERBS_DROP_PKT_TOO_SMALL,
	RVERBS_DROP_NO_SOCKET,
	RVERBS_DROP_SOCKET_RCVBUFF,
};

void rverbs_kfree_skb_reason(struct sk_buff *skb, enum rverbs_drop why);
void rverbs_consume_skb(struct sk_buff *skb);
bool rverbs_skb_set_tx_owner(struct sk_buff *skb, void (*destructor)(struct sk_buff *),
			     void *owner);
void *rverbs_skb_tx_owner(const struct sk_buff *skb);
void rverbs_tx_skb_put(void);
void rverbs_tx_barrier(void);
int rverbs_ip_local_out(struct sk_buff *skb, struct dst_entry *dst, bool ipv6,
			unsigned int ip_hlen);
u32 rverbs_crc32_le(u32 crc, const u8 *p, size_t len);
void rverbs_spin_lock_bh(spinlock_t *lock);
void rverbs_spin_unlock_bh(spinlock_t *lock);
int rverbs_spin_trylock_bh(spinlock_t *lock);

/*
 * events.c: the per-CPU counters of the Rust core's events, one slot each,
 * numbered as the events of rust/verbs/stats.rs (which checks it at build
 * time); and its tracepoints (include/rverbs_trace.h).
 */
enum {
	RVERBS_EVENT_AH_CREATED = 0,
	RVERBS_EVENT_AH_DESTROYED = 1,
	RVERBS_EVENT_DMAC_MULTICAST = 2,
	RVERBS_EVENT_DMAC_LINK_LOCAL = 3,
	RVERBS_EVENT_DMAC_LOCAL = 4,
	RVERBS_EVENT_DMAC_NEIGH_FAST = 5,
	RVERBS_EVENT_DMAC_NEIGH_WAIT = 6,
	RVERBS_EVENT_XRCD_ALLOCATED = 7,
	RVERBS_EVENT_XRCD_DEALLOCATED = 8,
	RVERBS_EVENT_AH_ATTR_FROM_WC = 9,
	RVERBS_EVENT_QP_MODIFIED = 10,
	RVERBS_EVENT_SLOTS = 16,
};

u64 rverbs_event_sum(unsigned int slot);
void rverbs_dmac_resolved(unsigned int path, const u8 *dgid, const u8 *dmac, u8 hop_limit,
			  u64 wait_ns);

#endif /* _RVERBS_HELPERS_H */
