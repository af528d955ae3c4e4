/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoints of rverbs (trace system "rverbs"): each verb of the Rust
 * core as it returns (rust/takeover/exports.c), with its result and the
 * time it took, and each destination MAC the core resolves, with how
 * (rust/helpers/events.c, called by rust/verbs/dmac.rs).  They are the
 * tracer's view of the Rust code, whose own functions ftrace cannot see on
 * a kernel that builds Rust without __fentry__
 * (Documentation/tracing-rust-functions.md):
 *
 *   echo 1 > /sys/kernel/tracing/events/rverbs/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * The times are measured only while the event is enabled.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rverbs

#if !defined(_RVERBS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RVERBS_TRACE_H

#include <linux/if_ether.h>
#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "rverbs_helpers.h"

/* The resolution paths, as rverbs_resolve prints them. */
#define rverbs_show_path(path)							\
	__print_symbolic(path,							\
			 { RVERBS_EVENT_DMAC_MULTICAST, "multicast" },		\
			 { RVERBS_EVENT_DMAC_LINK_LOCAL, "link_local" },	\
			 { RVERBS_EVENT_DMAC_LOCAL, "local" },			\
			 { RVERBS_EVENT_DMAC_NEIGH_FAST, "neigh" },		\
			 { RVERBS_EVENT_DMAC_NEIGH_WAIT, "neigh_wait" })

TRACE_EVENT(rverbs_create_ah,
	TP_PROTO(const struct ib_pd *pd, const struct rdma_ah_attr *attr,
		 const struct ib_ah *ah, u64 ns),
	TP_ARGS(pd, attr, ah, ns),
	TP_STRUCT__entry(
		__string(device, dev_name(&pd->device->dev))
		__field(const void *, ah)
		__field(int, ret)
		__field(u32, port)
		__field(u32, type)
		__field(u8, sgid_index)
		__field(u8, hop_limit)
		__array(u8, dgid, 16)
		__array(u8, dmac, ETH_ALEN)
		__field(u64, ns)
	),
	TP_fast_assign(
		__assign_str(device);
		__entry->ah = IS_ERR(ah) ? NULL : ah;
		__entry->ret = IS_ERR(ah) ? PTR_ERR(ah) : 0;
		__entry->port = attr->port_num;
		__entry->type = attr->type;
		__entry->sgid_index = attr->grh.sgid_index;
		__entry->hop_limit = attr->grh.hop_limit;
		memcpy(__entry->dgid, attr->grh.dgid.raw, 16);
		memcpy(__entry->dmac, attr->roce.dmac, ETH_ALEN);
		__entry->ns = ns;
	),
	TP_printk("device=%s ah=%p ret=%d port=%u type=%u sgid_index=%u dgid=%pI6c dmac=%pM hop_limit=%u ns=%llu",
		  __get_str(device), __entry->ah, __entry->ret, __entry->port, __entry->type,
		  __entry->sgid_index, __entry->dgid, __entry->dmac, __entry->hop_limit,
		  __entry->ns)
);

/*
 * The verbs whose result is an object or an error, or an error code: the
 * device, the object (NULL on error), the result and the time.  Printed as
 * an XRCD; rverbs_destroy_ah prints it as an AH.
 */
DECLARE_EVENT_CLASS(rverbs_object,
	TP_PROTO(const struct ib_device *device, const void *obj, int ret, u64 ns),
	TP_ARGS(device, obj, ret, ns),
	TP_STRUCT__entry(
		__string(device, dev_name(&device->dev))
		__field(const void *, obj)
		__field(int, ret)
		__field(u64, ns)
	),
	TP_fast_assign(
		__assign_str(device);
		__entry->obj = obj;
		__entry->ret = ret;
		__entry->ns = ns;
	),
	TP_printk("device=%s xrcd=%p ret=%d ns=%llu", __get_str(device), __entry->obj,
		  __entry->ret, __entry->ns)
);

DEFINE_EVENT_PRINT(rverbs_object, rverbs_destroy_ah,
	TP_PROTO(const struct ib_device *device, const void *obj, int ret, u64 ns),
	TP_ARGS(device, obj, ret, ns),
	TP_printk("device=%s ah=%p ret=%d ns=%llu", __get_str(device), __entry->obj,
		  __entry->ret, __entry->ns)
);

DEFINE_EVENT(rverbs_object, rverbs_alloc_xrcd,
	TP_PROTO(const struct ib_device *device, const void *obj, int ret, u64 ns),
	TP_ARGS(device, obj, ret, ns)
);

DEFINE_EVENT(rverbs_object, rverbs_dealloc_xrcd,
	TP_PROTO(const struct ib_device *device, const void *obj, int ret, u64 ns),
	TP_ARGS(device, obj, ret, ns)
);

/*
 * The reply address of a received packet (ib_init_ah_attr_from_wc): the
 * device and port, the result, and the attribute made: the destination
 * (the packet's source), the source GID index, MAC and hop limit.
 */
TRACE_EVENT(rverbs_init_ah_attr_from_wc,
	TP_PROTO(const struct ib_device *device, u32 port, const struct rdma_ah_attr *attr,
		 int ret, u64 ns),
	TP_ARGS(device, port, attr, ret, ns),
	TP_STRUCT__entry(
		__string(device, dev_name(&device->dev))
		__field(u32, port)
		__field(int, ret)
		__field(u32, type)
		__field(u8, sgid_index)
		__field(u8, hop_limit)
		__array(u8, dgid, 16)
		__array(u8, dmac, ETH_ALEN)
		__field(u64, ns)
	),
	TP_fast_assign(
		__assign_str(device);
		__entry->port = port;
		__entry->ret = ret;
		__entry->type = attr->type;
		__entry->sgid_index = attr->grh.sgid_index;
		__entry->hop_limit = attr->grh.hop_limit;
		memcpy(__entry->dgid, attr->grh.dgid.raw, 16);
		memcpy(__entry->dmac, attr->roce.dmac, ETH_ALEN);
		__entry->ns = ns;
	),
	TP_printk("device=%s port=%u ret=%d type=%u sgid_index=%u dgid=%pI6c dmac=%pM hop_limit=%u ns=%llu",
		  __get_str(device), __entry->port, __entry->ret, __entry->type,
		  __entry->sgid_index, __entry->dgid, __entry->dmac, __entry->hop_limit,
		  __entry->ns)
);

/*
 * A QP modified (ib_modify_qp_with_udata): the new state (-1 without
 * IB_QP_STATE) and, with IB_QP_AV, the destination as resolved.
 */
TRACE_EVENT(rverbs_modify_qp,
	TP_PROTO(const struct ib_qp *qp, const struct ib_qp_attr *attr, int mask, int ret,
		 u64 ns),
	TP_ARGS(qp, attr, mask, ret, ns),
	TP_STRUCT__entry(
		__string(device, dev_name(&qp->device->dev))
		__field(u32, qp_num)
		__field(int, mask)
		__field(int, state)
		__field(int, ret)
		__array(u8, dgid, 16)
		__array(u8, dmac, ETH_ALEN)
		__field(u8, hop_limit)
		__field(u64, ns)
	),
	TP_fast_assign(
		__assign_str(device);
		__entry->qp_num = qp->qp_num;
		__entry->mask = mask;
		__entry->state = mask & IB_QP_STATE ? (int)attr->qp_state : -1;
		__entry->ret = ret;
		if (mask & IB_QP_AV) {
			memcpy(__entry->dgid, attr->ah_attr.grh.dgid.raw, 16);
			memcpy(__entry->dmac, attr->ah_attr.roce.dmac, ETH_ALEN);
			__entry->hop_limit = attr->ah_attr.grh.hop_limit;
		} else {
			memset(__entry->dgid, 0, 16);
			memset(__entry->dmac, 0, ETH_ALEN);
			__entry->hop_limit = 0;
		}
		__entry->ns = ns;
	),
	TP_printk("device=%s qp_num=%u mask=0x%x state=%d ret=%d dgid=%pI6c dmac=%pM hop_limit=%u ns=%llu",
		  __get_str(device), __entry->qp_num, __entry->mask, __entry->state,
		  __entry->ret, __entry->dgid, __entry->dmac, __entry->hop_limit, __entry->ns)
);

TRACE_EVENT(rverbs_resolve,
	TP_PROTO(unsigned int path, const u8 *dgid, const u8 *dmac, u8 hop_limit, u64 wait_ns),
	TP_ARGS(path, dgid, dmac, hop_limit, wait_ns),
	TP_STRUCT__entry(
		__field(unsigned int, path)
		__array(u8, dgid, 16)
		__array(u8, dmac, ETH_ALEN)
		__field(u8, hop_limit)
		__field(u64, wait_ns)
	),
	TP_fast_assign(
		__entry->path = path;
		memcpy(__entry->dgid, dgid, 16);
		memcpy(__entry->dmac, dmac, ETH_ALEN);
		__entry->hop_limit = hop_limit;
		__entry->wait_ns = wait_ns;
	),
	TP_printk("path=%s dgid=%pI6c dmac=%pM hop_limit=%u wait_ns=%llu",
		  rverbs_show_path(__entry->path), __entry->dgid, __entry->dmac,
		  __entry->hop_limit, __entry->wait_ns)
);

#endif /* _RVERBS_TRACE_H */

/* Out of tree: the header is found through the module's -I$(src)/include. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rverbs_trace
#include <trace/define_trace.h>
