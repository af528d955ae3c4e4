/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input of the build-time bindgen run of rverbs (scripts/bindgen.sh).
 *
 * Only items declared by the headers listed in scripts/bindgen.sh's
 * allowlist are turned into Rust; every other type they mention is the
 * kernel crate's own (kernel::bindings), so that a `struct net_device *`
 * here and there is one Rust type.
 */
#include <linux/if_arp.h>
#include <linux/livepatch.h>
#include <linux/netdevice.h>
#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <net/ip6_route.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <net/route.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/rdma_user_rxe.h>

#include "rverbs.h"
#include "rverbs_helpers.h"
