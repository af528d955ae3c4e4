// SPDX-License-Identifier: GPL-2.0
/*
 * rverbs_takeover: a livepatch that routes ib_core's address handle and
 * XRC domain verbs to the Rust verbs core of rverbs.ko.
 *
 * Loading it patches rdma_create_user_ah(), rdma_destroy_ah_user(),
 * ib_alloc_xrcd_user(), ib_dealloc_xrcd_user(), ib_init_ah_attr_from_wc()
 * and ib_modify_qp_with_udata() of ib_core onto rverbs_create_user_ah() and
 * its twins, which have the same signatures and the same contract: every
 * caller (ib_uverbs, so all of rdma-core, ib_umad, ib_cm, kernel ULPs
 * destroying AHs) then runs the Rust core, on every device.
 *
 *   echo 0 > /sys/kernel/livepatch/rverbs_takeover/enabled
 *
 * and rmmod return to C.  Objects are plain ib_core objects either way, so
 * one created under one mode may be destroyed under the other.
 */

#include <linux/build_bug.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "rverbs.h"
#include "klp_calls.h"

/*
 * The livepatch matches functions by name only: each replacement must have
 * exactly the type of the function it replaces, or the callers' arguments
 * would be misread.  rust/takeover/exports.rs checks the Rust definitions
 * against ib_core's declarations; this checks include/rverbs.h.
 */
static_assert(__same_type(&rverbs_create_user_ah, &rdma_create_user_ah));
static_assert(__same_type(&rverbs_destroy_ah_user, &rdma_destroy_ah_user));
static_assert(__same_type(&rverbs_alloc_xrcd_user, &ib_alloc_xrcd_user));
static_assert(__same_type(&rverbs_dealloc_xrcd_user, &ib_dealloc_xrcd_user));
static_assert(__same_type(&rverbs_init_ah_attr_from_wc, &ib_init_ah_attr_from_wc));

/*
 * The ib_core functions that ib_modify_qp_with_udata() calls and ib_core
 * does not export: tail calls in klp_calls.S, linked by livepatch.  The
 * Rust core calls them through the table below; these wrappers are what
 * it points to (ordinary C functions, so that an indirect call to them
 * passes the kernel's control-flow checks).  Declared in klp_calls.h.
 */
static int rverbs_takeover_counter_bind_qp_auto(struct ib_qp *qp, u32 port)
{
	return rverbs_klp_rdma_counter_bind_qp_auto(qp, port);
}

static struct net_device *rverbs_takeover_lag_get_ah_roce_slave(struct ib_device *device,
								struct rdma_ah_attr *ah_attr,
								gfp_t flags)
{
	return rverbs_klp_rdma_lag_get_ah_roce_slave(device, ah_attr, flags);
}

static void rverbs_takeover_lag_put_ah_roce_slave(struct net_device *xmit_slave)
{
	rverbs_klp_rdma_lag_put_ah_roce_slave(xmit_slave);
}

#ifdef CONFIG_SECURITY_INFINIBAND
static int rverbs_takeover_security_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
					      int attr_mask, struct ib_udata *udata)
{
	return rverbs_klp_ib_security_modify_qp(qp, attr, attr_mask, udata);
}
#endif

static const struct rverbs_ib_core_calls rverbs_takeover_calls = {
	.counter_bind_qp_auto = rverbs_takeover_counter_bind_qp_auto,
	.lag_get_ah_roce_slave = rverbs_takeover_lag_get_ah_roce_slave,
	.lag_put_ah_roce_slave = rverbs_takeover_lag_put_ah_roce_slave,
#ifdef CONFIG_SECURITY_INFINIBAND
	.security_modify_qp = rverbs_takeover_security_modify_qp,
#endif
};

/* ib_modify_qp_with_udata() in Rust, with the calls above. */
static int rverbs_takeover_modify_qp_with_udata(struct ib_qp *ib_qp, struct ib_qp_attr *attr,
						int attr_mask, struct ib_udata *udata)
{
	return rverbs_modify_qp_with_udata(ib_qp, attr, attr_mask, udata,
					   &rverbs_takeover_calls);
}

static_assert(__same_type(&rverbs_takeover_modify_qp_with_udata, &ib_modify_qp_with_udata));

static struct klp_func rverbs_takeover_funcs[] = {
	{
		.old_name = "rdma_create_user_ah",
		.new_func = rverbs_create_user_ah,
	},
	{
		.old_name = "rdma_destroy_ah_user",
		.new_func = rverbs_destroy_ah_user,
	},
	{
		.old_name = "ib_alloc_xrcd_user",
		.new_func = rverbs_alloc_xrcd_user,
	},
	{
		.old_name = "ib_dealloc_xrcd_user",
		.new_func = rverbs_dealloc_xrcd_user,
	},
	{
		.old_name = "ib_init_ah_attr_from_wc",
		.new_func = rverbs_init_ah_attr_from_wc,
	},
	{
		.old_name = "ib_modify_qp_with_udata",
		.new_func = rverbs_takeover_modify_qp_with_udata,
	},
	{ }
};

static struct klp_object rverbs_takeover_objs[] = {
	{
		.name = "ib_core",
		.funcs = rverbs_takeover_funcs,
	},
	{ }
};

static struct klp_patch rverbs_takeover_patch = {
	.mod = THIS_MODULE,
	.objs = rverbs_takeover_objs,
};

static int __init rverbs_takeover_init(void)
{
	return klp_enable_patch(&rverbs_takeover_patch);
}

static void __exit rverbs_takeover_exit(void)
{
}

module_init(rverbs_takeover_init);
module_exit(rverbs_takeover_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Route ib_core's AH, XRCD and QP modify verbs to the Rust core of rverbs");
MODULE_INFO(livepatch, "Y");
/* The version of rverbs.ko that it was built with (Kbuild). */
MODULE_VERSION(RVERBS_VERSION);
