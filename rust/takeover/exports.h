/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Rust core's entry points (rust/takeover/exports.rs), for the exported
 * C functions of exports.c only: each has the signature and the contract of
 * the function of include/rverbs.h whose name it has without "rust_".
 */
#ifndef _RVERBS_EXPORTS_H
#define _RVERBS_EXPORTS_H

/* The types, declared as for the exported functions. */
#include "rverbs.h"

struct ib_ah *rverbs_rust_create_user_ah(struct ib_pd *pd, struct rdma_ah_attr *ah_attr,
					 struct ib_udata *udata);
int rverbs_rust_destroy_ah_user(struct ib_ah *ah, u32 flags, struct ib_udata *udata);
struct ib_xrcd *rverbs_rust_alloc_xrcd_user(struct ib_device *device, struct inode *inode,
					    struct ib_udata *udata);
int rverbs_rust_dealloc_xrcd_user(struct ib_xrcd *xrcd, struct ib_udata *udata);
int rverbs_rust_init_ah_attr_from_wc(struct ib_device *device, u32 port_num,
				     const struct ib_wc *wc, const struct ib_grh *grh,
				     struct rdma_ah_attr *ah_attr);
int rverbs_rust_modify_qp_with_udata(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int attr_mask,
				     struct ib_udata *udata,
				     const struct rverbs_ib_core_calls *calls);

#endif /* _RVERBS_EXPORTS_H */
