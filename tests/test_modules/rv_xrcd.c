// SPDX-License-Identifier: GPL-2.0
/*
 * rv_xrcd: an XRC domain of a kernel caller that is still in use, for
 * rv0_kernel_ah.sh.  Loading it runs the test; it stays loaded only when
 * every check passed (init fails with the first error otherwise).
 *
 * On the device bound to @netdev: ib_alloc_xrcd_user() without an inode or
 * udata; one use of it taken (as an XRC SRQ or target QP takes one:
 * xrcd->usecnt); ib_dealloc_xrcd_user() must then fail with -EBUSY and
 * leave the domain intact; the use dropped, it must succeed.  uverbs
 * cannot reach this: rv0 has no SRQs or QPs to hold a use.  On a device
 * without XRC (soft-RoCE), with @no_xrc: the allocation must fail with
 * -EOPNOTSUPP.
 */

#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "rv_find.h"

static char *netdev = "veth0";
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "netdev of the RDMA device under test");

static bool no_xrc;
module_param(no_xrc, bool, 0444);
MODULE_PARM_DESC(no_xrc, "the device has no XRC: allocation must fail with EOPNOTSUPP");

static int run(struct ib_device *dev)
{
	struct ib_xrcd *xrcd = ib_alloc_xrcd_user(dev, NULL, NULL);
	int ret;

	if (no_xrc) {
		if (!IS_ERR(xrcd)) {
			pr_err("rv_xrcd: %s: allocated an XRCD without XRC\n", dev_name(&dev->dev));
			ib_dealloc_xrcd_user(xrcd, NULL);
			return -EINVAL;
		}
		pr_info("rv_xrcd: %s: alloc %ld\n", dev_name(&dev->dev), PTR_ERR(xrcd));
		return PTR_ERR(xrcd) == -EOPNOTSUPP ? 0 : -EINVAL;
	}
	if (IS_ERR(xrcd)) {
		pr_err("rv_xrcd: %s: ib_alloc_xrcd_user: %ld\n", dev_name(&dev->dev),
		       PTR_ERR(xrcd));
		return PTR_ERR(xrcd);
	}
	atomic_inc(&xrcd->usecnt);
	ret = ib_dealloc_xrcd_user(xrcd, NULL);
	atomic_dec(&xrcd->usecnt);
	pr_info("rv_xrcd: %s: alloc 0, dealloc while in use %d\n", dev_name(&dev->dev), ret);
	if (ret != -EBUSY) {
		/* Freed (ret 0) or failed otherwise: nothing more is safe. */
		pr_err("rv_xrcd: dealloc of an XRCD in use gave %d, not %d\n", ret, -EBUSY);
		return -EINVAL;
	}
	ret = ib_dealloc_xrcd_user(xrcd, NULL);
	pr_info("rv_xrcd: %s: dealloc after the use dropped %d\n", dev_name(&dev->dev), ret);
	return ret;
}

static int __init rv_xrcd_init(void)
{
	struct ib_device *dev = rv_find_device(netdev);
	int ret;

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ret = run(dev);
	ib_device_put(dev);
	return ret;
}

static void __exit rv_xrcd_exit(void)
{
}

module_init(rv_xrcd_init);
module_exit(rv_xrcd_exit);
MODULE_DESCRIPTION("rverbs test: an XRC domain in use cannot be deallocated");
MODULE_LICENSE("GPL");
