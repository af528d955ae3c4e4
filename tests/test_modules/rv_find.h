/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rv_find_device() for the test modules: the RDMA device whose port 1 is
 * bound to a netdev, found as ib_core finds it (ib_device_get_netdev):
 * soft-RoCE's devices are in ib_core's netdev table, rv devices answer
 * ops.get_netdev, and ib_device_get_by_netdev() only sees the former.  A
 * client's add() is called for every registered device.  Included by one
 * file per module: its state is the module's own.
 */
#ifndef _RV_FIND_H
#define _RV_FIND_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

static struct net_device *rv_find_wanted;
static struct ib_device *rv_find_found;

static int rv_find_add(struct ib_device *dev)
{
	struct net_device *ndev = ib_device_get_netdev(dev, 1);

	if (ndev && ndev == rv_find_wanted && !rv_find_found && ib_device_try_get(dev))
		rv_find_found = dev;
	dev_put(ndev);
	return 0;
}

static void rv_find_remove(struct ib_device *dev, void *client_data)
{
}

static struct ib_client rv_find_client = {
	.name = KBUILD_MODNAME,
	.add = rv_find_add,
	.remove = rv_find_remove,
};

/*
 * The device bound to @netdev in init_net, with a reference the caller puts
 * with ib_device_put(), or an ERR_PTR.
 */
static struct ib_device *rv_find_device(const char *netdev)
{
	int ret;

	rv_find_wanted = dev_get_by_name(&init_net, netdev);
	if (!rv_find_wanted)
		return ERR_PTR(-ENODEV);
	rv_find_found = NULL;
	ret = ib_register_client(&rv_find_client);
	if (!ret)
		ib_unregister_client(&rv_find_client);
	dev_put(rv_find_wanted);
	if (ret) {
		if (rv_find_found)
			ib_device_put(rv_find_found);
		return ERR_PTR(ret);
	}
	return rv_find_found ? rv_find_found : ERR_PTR(-ENODEV);
}

#endif /* _RV_FIND_H */
