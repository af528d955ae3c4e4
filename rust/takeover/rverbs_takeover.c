// SPDX-License-Identifier: GPL-2.0
/*
 * rverbs_takeover: a livepatch that routes ib_core's address handle and
 * XRC domain verbs to the Rust verbs core of rverbs.ko.
 *
 * Loading it patches rdma_create_user_ah(), rdma_destroy_ah_user(),
 * ib_alloc_xrcd_user(), ib_dealloc_xrcd_user() and ib_init_ah_attr_from_wc()
 * of ib_core onto rverbs_create_user_ah() and its twins, which have the same signatures and
 * the same contract: every caller (ib_uverbs, so all of rdma-core, ib_umad,
 * kernel ULPs destroying AHs) then runs the Rust core, on every device.
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
MODULE_DESCRIPTION("Route ib_core's AH and XRCD verbs to the Rust core of rverbs");
MODULE_INFO(livepatch, "Y");
/* The version of rverbs.ko that it was built with (Kbuild). */
MODULE_VERSION(RVERBS_VERSION);
