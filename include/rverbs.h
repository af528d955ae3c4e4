/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C ABI of rverbs.ko: the Rust verbs core, with the signatures of the
 * ib_core functions it implements, for other modules (rverbs_takeover.ko
 * patches ib_core's functions onto these).
 */
#ifndef _RVERBS_H
#define _RVERBS_H

#include <linux/types.h>

struct ib_ah;
struct ib_device;
struct ib_pd;
struct ib_grh;
struct ib_udata;
struct ib_wc;
struct ib_xrcd;
struct inode;
struct ib_qp;
struct ib_qp_attr;
struct net_device;
struct rdma_ah_attr;

/* Same contract as rdma_create_user_ah() of drivers/infiniband/core/verbs.c. */
struct ib_ah *rverbs_create_user_ah(struct ib_pd *pd,
				    struct rdma_ah_attr *ah_attr,
				    struct ib_udata *udata);

/* Same contract as rdma_destroy_ah_user(). */
int rverbs_destroy_ah_user(struct ib_ah *ah, u32 flags, struct ib_udata *udata);

/* Same contract as ib_alloc_xrcd_user(). */
struct ib_xrcd *rverbs_alloc_xrcd_user(struct ib_device *device,
				       struct inode *inode,
				       struct ib_udata *udata);

/* Same contract as ib_dealloc_xrcd_user(). */
int rverbs_dealloc_xrcd_user(struct ib_xrcd *xrcd, struct ib_udata *udata);

int rverbs_init_ah_attr_from_wc(struct ib_device *device, u32 port_num,
				const struct ib_wc *wc, const struct ib_grh *grh,
				struct rdma_ah_attr *ah_attr);

/*
 * The ib_core functions that ib_modify_qp_with_udata() calls and ib_core
 * does not export.  rverbs_takeover.ko reaches them through livepatch
 * relocations (rust/takeover/klp_calls.S) and hands them to the Rust core
 * with each call; security_modify_qp is NULL in a kernel without
 * CONFIG_SECURITY_INFINIBAND, where the driver's modify_qp is called
 * directly, as ib_core's inline ib_security_modify_qp() does.
 */
struct rverbs_ib_core_calls {
	int (*counter_bind_qp_auto)(struct ib_qp *qp, u32 port);
	struct net_device *(*lag_get_ah_roce_slave)(struct ib_device *device,
						    struct rdma_ah_attr *ah_attr,
						    gfp_t flags);
	void (*lag_put_ah_roce_slave)(struct net_device *xmit_slave);
	int (*security_modify_qp)(struct ib_qp *qp, struct ib_qp_attr *attr,
				  int attr_mask, struct ib_udata *udata);
};

/*
 * Same contract as ib_modify_qp_with_udata(), with ib_core's unexported
 * functions in @calls (which must not be NULL).
 */
int rverbs_modify_qp_with_udata(struct ib_qp *ib_qp, struct ib_qp_attr *attr,
				int attr_mask, struct ib_udata *udata,
				const struct rverbs_ib_core_calls *calls);

#endif /* _RVERBS_H */
