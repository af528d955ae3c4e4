// SPDX-License-Identifier: GPL-2.0
/*
 * rverbs.ko's C ABI (include/rverbs.h): the functions that other modules
 * and the takeover's livepatch call.  Each calls the Rust core's entry
 * point of the same contract (rust/takeover/exports.rs).
 *
 * They are C so that the kernel's tracers see them: gcc gives every C
 * function the "call __fentry__" and the __mcount_loc record that ftrace,
 * kprobes, fprobes and BPF attach to, and this kernel builds Rust without
 * them (Documentation/tracing-rust-functions.md).  A function_graph trace
 * of rverbs_create_user_ah shows its whole time, with the C functions it
 * reaches (the route and neighbour lookups, the driver's create_ah, the
 * helpers) nested under it.
 */

#include <linux/export.h>

#include "rverbs.h"
#include "exports.h"

struct ib_ah *rverbs_create_user_ah(struct ib_pd *pd, struct rdma_ah_attr *ah_attr,
				    struct ib_udata *udata)
{
	return rverbs_rust_create_user_ah(pd, ah_attr, udata);
}
EXPORT_SYMBOL_GPL(rverbs_create_user_ah);

int rverbs_destroy_ah_user(struct ib_ah *ah, u32 flags, struct ib_udata *udata)
{
	return rverbs_rust_destroy_ah_user(ah, flags, udata);
}
EXPORT_SYMBOL_GPL(rverbs_destroy_ah_user);

struct ib_xrcd *rverbs_alloc_xrcd_user(struct ib_device *device, struct inode *inode,
				       struct ib_udata *udata)
{
	return rverbs_rust_alloc_xrcd_user(device, inode, udata);
}
EXPORT_SYMBOL_GPL(rverbs_alloc_xrcd_user);

int rverbs_dealloc_xrcd_user(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	return rverbs_rust_dealloc_xrcd_user(xrcd, udata);
}
EXPORT_SYMBOL_GPL(rverbs_dealloc_xrcd_user);
