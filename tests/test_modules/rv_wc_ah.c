// SPDX-License-Identifier: GPL-2.0
/*
 * rv_wc_ah: the reply address of a received packet, made by either core,
 * for rverbs_wc_ah.sh.
 *
 * ib_init_ah_attr_from_wc() has no user verb: ib_core's MAD layer and
 * connection manager call it for every packet they answer.  This module
 * calls it (ib_core's, which the takeover routes to Rust) or rverbs'
 * rverbs_init_ah_attr_from_wc() directly, on a synthetic work completion
 * and network header, and shows the result.
 *
 * On loading, it finds the RDMA device bound to @netdev and makes
 * /sys/kernel/debug/rv_wc_ah/case.  Writing a case there runs it:
 *
 *   CORE PORT WC_FLAGS NET_TYPE VLAN_ID SL HDR
 *
 * CORE "c" (ib_init_ah_attr_from_wc) or "rust" (rverbs'), the work
 * completion's fields in decimal, HDR the 40 bytes of network header in
 * hex.  Reading the file gives the last case's result, one line:
 *
 *   ret=E type=T port=P flags=F sl=S dgid=G flow=L sgid_index=I hop=H
 *   tclass=C dmac=M entry=INDEX/TYPE/NETDEV attr=HEX
 *
 * "entry" is the GID entry the attribute references ("entry=-" for none),
 * and "attr" all the bytes of struct rdma_ah_attr, the entry's pointer
 * zeroed (it is the same entry with both cores when "entry" is), so that
 * two results are the same exactly when their lines are.  The reference is
 * then given back (rdma_destroy_ah_attr), as ib_core's callers do.
 */

#include <linux/debugfs.h>
#include <linux/hex.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../../include/rverbs.h"
#include "rv_find.h"

static char *netdev = "veth0";
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "netdev of the RDMA device under test");

static struct ib_device *ibdev;
static struct dentry *dir;
static DEFINE_MUTEX(lock);
static char result[512];
static int (*rust_init)(struct ib_device *device, u32 port_num, const struct ib_wc *wc,
			const struct ib_grh *grh, struct rdma_ah_attr *ah_attr);

/* The result line of one case (see the top of the file). */
static void show(int ret, struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = &attr->grh;
	const struct ib_gid_attr *entry = grh->sgid_attr;
	struct rdma_ah_attr bytes = *attr;
	char hex[sizeof(bytes) * 2 + 1];
	char where[64] = "-";
	struct net_device *ndev;

	if (entry) {
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(entry);
		snprintf(where, sizeof(where), "%u/%d/%s", entry->index, entry->gid_type,
			 IS_ERR_OR_NULL(ndev) ? "-" : ndev->name);
		rcu_read_unlock();
	}
	bytes.grh.sgid_attr = NULL;
	bin2hex(hex, &bytes, sizeof(bytes));
	hex[sizeof(hex) - 1] = '\0';
	snprintf(result, sizeof(result),
		 "ret=%d type=%d port=%u flags=%u sl=%u dgid=%pI6c flow=0x%x sgid_index=%u hop=%u tclass=%u dmac=%pM entry=%s attr=%s\n",
		 ret, attr->type, attr->port_num, attr->ah_flags, attr->sl, grh->dgid.raw,
		 grh->flow_label, grh->sgid_index, grh->hop_limit, grh->traffic_class,
		 attr->roce.dmac, where, hex);
}

static ssize_t case_write(struct file *file, const char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	char buf[256], core[8], hdr_hex[2 * sizeof(struct ib_grh) + 1];
	unsigned int port, flags, net_type, vlan, sl;
	struct rdma_ah_attr attr;
	struct ib_grh grh;
	struct ib_wc wc;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%7s %u %u %u %u %u %80s", core, &port, &flags, &net_type, &vlan,
		   &sl, hdr_hex) != 7 || strlen(hdr_hex) != 2 * sizeof(grh) ||
	    hex2bin((u8 *)&grh, hdr_hex, sizeof(grh)))
		return -EINVAL;
	if (strcmp(core, "c") && strcmp(core, "rust"))
		return -EINVAL;

	memset(&wc, 0, sizeof(wc));
	wc.wc_flags = flags;
	wc.network_hdr_type = net_type;
	wc.vlan_id = vlan;
	wc.sl = sl;
	/* An uninitialised out-parameter, as the callers' stacks give it. */
	memset(&attr, 0x5a, sizeof(attr));
	attr.grh.sgid_attr = NULL;

	mutex_lock(&lock);
	if (!strcmp(core, "c"))
		ret = ib_init_ah_attr_from_wc(ibdev, port, &wc, &grh, &attr);
	else
		ret = rust_init(ibdev, port, &wc, &grh, &attr);
	show(ret, &attr);
	/* Only a success leaves a reference to give back. */
	if (ret && attr.grh.sgid_attr) {
		pr_err("rv_wc_ah: %s failed with %d and left a GID entry referenced\n", core, ret);
		strlcat(result, "error: a reference was left on failure\n", sizeof(result));
	}
	rdma_destroy_ah_attr(&attr);
	mutex_unlock(&lock);
	return len;
}

static ssize_t case_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, result, strlen(result));
	mutex_unlock(&lock);
	return ret;
}

static const struct file_operations case_fops = {
	.owner = THIS_MODULE,
	.write = case_write,
	.read = case_read,
};

static int __init rv_wc_ah_init(void)
{
	rust_init = symbol_get(rverbs_init_ah_attr_from_wc);
	if (!rust_init) {
		pr_err("rv_wc_ah: rverbs.ko is not loaded\n");
		return -ENOENT;
	}
	ibdev = rv_find_device(netdev);
	if (IS_ERR(ibdev)) {
		symbol_put(rverbs_init_ah_attr_from_wc);
		return PTR_ERR(ibdev);
	}
	dir = debugfs_create_dir("rv_wc_ah", NULL);
	debugfs_create_file("case", 0600, dir, NULL, &case_fops);
	return 0;
}

static void __exit rv_wc_ah_exit(void)
{
	debugfs_remove(dir);
	ib_device_put(ibdev);
	symbol_put(rverbs_init_ah_attr_from_wc);
}

module_init(rv_wc_ah_init);
module_exit(rv_wc_ah_exit);
MODULE_DESCRIPTION("rverbs test: ib_init_ah_attr_from_wc, C core against Rust core");
MODULE_LICENSE("GPL");
