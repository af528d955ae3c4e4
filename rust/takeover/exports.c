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
#include <linux/timekeeping.h>

#include "rverbs.h"
#include "rverbs_events.h"
#include "rverbs_trace.h"
#include "exports.h"

/*
 * Each function also counts what it returns (include/rverbs_events.h: a
 * per-CPU increment here, inline, rather than a call from Rust) and emits
 * its tracepoint (include/rverbs_trace.h) with the time the Rust core took,
 * measured only while that tracepoint is enabled.
 */

/* The clock for a tracepoint's time: read only when it is enabled. */
static inline u64 rverbs_trace_clock(bool enabled)
{
	return enabled ? ktime_get_ns() : 0;
}

struct ib_ah *rverbs_create_user_ah(struct ib_pd *pd, struct rdma_ah_attr *ah_attr,
				    struct ib_udata *udata)
{
	bool tracing = trace_rverbs_create_ah_enabled();
	u64 start = rverbs_trace_clock(tracing);
	struct ib_ah *ah = rverbs_rust_create_user_ah(pd, ah_attr, udata);

	if (!IS_ERR(ah))
		rverbs_event_count(RVERBS_EVENT_AH_CREATED);
	if (tracing)
		trace_rverbs_create_ah(pd, ah_attr, ah, ktime_get_ns() - start);
	return ah;
}
EXPORT_SYMBOL_GPL(rverbs_create_user_ah);

int rverbs_destroy_ah_user(struct ib_ah *ah, u32 flags, struct ib_udata *udata)
{
	struct ib_device *device = ah->device;	/* it outlives the AH */
	bool tracing = trace_rverbs_destroy_ah_enabled();
	u64 start = rverbs_trace_clock(tracing);
	int ret = rverbs_rust_destroy_ah_user(ah, flags, udata);

	if (!ret)
		rverbs_event_count(RVERBS_EVENT_AH_DESTROYED);
	if (tracing)
		trace_rverbs_destroy_ah(device, ah, ret, ktime_get_ns() - start);
	return ret;
}
EXPORT_SYMBOL_GPL(rverbs_destroy_ah_user);

struct ib_xrcd *rverbs_alloc_xrcd_user(struct ib_device *device, struct inode *inode,
				       struct ib_udata *udata)
{
	bool tracing = trace_rverbs_alloc_xrcd_enabled();
	u64 start = rverbs_trace_clock(tracing);
	struct ib_xrcd *xrcd = rverbs_rust_alloc_xrcd_user(device, inode, udata);

	if (!IS_ERR(xrcd))
		rverbs_event_count(RVERBS_EVENT_XRCD_ALLOCATED);
	if (tracing)
		trace_rverbs_alloc_xrcd(device, IS_ERR(xrcd) ? NULL : xrcd, PTR_ERR_OR_ZERO(xrcd),
					ktime_get_ns() - start);
	return xrcd;
}
EXPORT_SYMBOL_GPL(rverbs_alloc_xrcd_user);

int rverbs_dealloc_xrcd_user(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	struct ib_device *device = xrcd->device;	/* it outlives the XRCD */
	bool tracing = trace_rverbs_dealloc_xrcd_enabled();
	u64 start = rverbs_trace_clock(tracing);
	int ret = rverbs_rust_dealloc_xrcd_user(xrcd, udata);

	if (!ret)
		rverbs_event_count(RVERBS_EVENT_XRCD_DEALLOCATED);
	if (tracing)
		trace_rverbs_dealloc_xrcd(device, xrcd, ret, ktime_get_ns() - start);
	return ret;
}
EXPORT_SYMBOL_GPL(rverbs_dealloc_xrcd_user);

int rverbs_init_ah_attr_from_wc(struct ib_device *device, u32 port_num,
				const struct ib_wc *wc, const struct ib_grh *grh,
				struct rdma_ah_attr *ah_attr)
{
	bool tracing = trace_rverbs_init_ah_attr_from_wc_enabled();
	u64 start = rverbs_trace_clock(tracing);
	int ret = rverbs_rust_init_ah_attr_from_wc(device, port_num, wc, grh, ah_attr);

	if (!ret)
		rverbs_event_count(RVERBS_EVENT_AH_ATTR_FROM_WC);
	if (tracing)
		trace_rverbs_init_ah_attr_from_wc(device, port_num, ah_attr, ret,
						  ktime_get_ns() - start);
	return ret;
}
EXPORT_SYMBOL_GPL(rverbs_init_ah_attr_from_wc);

int rverbs_modify_qp_with_udata(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int attr_mask,
				struct ib_udata *udata, const struct rverbs_ib_core_calls *calls)
{
	bool tracing = trace_rverbs_modify_qp_enabled();
	u64 start = rverbs_trace_clock(tracing);
	int ret = rverbs_rust_modify_qp_with_udata(ib_qp, attr, attr_mask, udata, calls);

	if (!ret)
		rverbs_event_count(RVERBS_EVENT_QP_MODIFIED);
	if (tracing)
		trace_rverbs_modify_qp(ib_qp, attr, attr_mask, ret, ktime_get_ns() - start);
	return ret;
}
EXPORT_SYMBOL_GPL(rverbs_modify_qp_with_udata);
