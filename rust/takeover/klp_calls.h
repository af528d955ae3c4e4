/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tail calls of klp_calls.S: ib_core's functions of the same names
 * without the prefix, which ib_core does not export, linked by livepatch
 * when rverbs_takeover.ko is enabled.
 */
#ifndef _RVERBS_KLP_CALLS_H
#define _RVERBS_KLP_CALLS_H

#include <linux/gfp_types.h>
#include <linux/types.h>

struct ib_device;
struct ib_qp;
struct ib_qp_attr;
struct ib_udata;
struct net_device;
struct rdma_ah_attr;

int rverbs_klp_rdma_counter_bind_qp_auto(struct ib_qp *qp, u32 port);
struct net_device *rverbs_klp_rdma_lag_get_ah_roce_slave(struct ib_device *device,
							 struct rdma_ah_attr *ah_attr,
							 gfp_t flags);
void rverbs_klp_rdma_lag_put_ah_roce_slave(struct net_device *xmit_slave);
#ifdef CONFIG_SECURITY_INFINIBAND
int rverbs_klp_ib_security_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
				     int attr_mask, struct ib_udata *udata);
#endif

#endif /* _RVERBS_KLP_CALLS_H */
