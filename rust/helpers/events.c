// SPDX-License-Identifier: GPL-2.0
/*
 * The events of the Rust verbs core: its per-CPU counters
 * (include/rverbs_events.h, shown in /sys/kernel/debug/rverbs/counters by
 * rust/verbs/stats.rs) and its tracepoints (include/rverbs_trace.h, created
 * here; the entry points' events are emitted by rust/takeover/exports.c).
 * Prototypes in include/rverbs_helpers.h.
 */

#include <linux/percpu.h>

#include "rverbs_helpers.h"
#include "rverbs_events.h"

#define CREATE_TRACE_POINTS
#include "rverbs_trace.h"

DEFINE_PER_CPU(struct rverbs_events, rverbs_events);

/*
 * The value of counter @slot, summed over the possible CPUs as the kernel's
 * per-CPU statistics are (a sum read while events are counted may miss the
 * latest); 0 for a slot past the end.
 */
u64 rverbs_event_sum(unsigned int slot)
{
	u64 sum = 0;
	int cpu;

	if (slot >= RVERBS_EVENT_SLOTS)
		return 0;
	for_each_possible_cpu(cpu)
		sum += per_cpu(rverbs_events.count[slot], cpu);
	return sum;
}

/*
 * A destination MAC was resolved, by @path (an RVERBS_EVENT_DMAC_* slot):
 * counted, and the rverbs:rverbs_resolve tracepoint, with @wait_ns the time
 * waited for the neighbour (0 when it was valid at once or not needed).
 * One call, so that the fast path pays one call for both.
 */
void rverbs_dmac_resolved(unsigned int path, const u8 *dgid, const u8 *dmac, u8 hop_limit,
			  u64 wait_ns)
{
	if (path < RVERBS_EVENT_DMAC_MULTICAST || path > RVERBS_EVENT_DMAC_NEIGH_WAIT)
		return;
	rverbs_event_count(path);
	trace_rverbs_resolve(path, dgid, dmac, hop_limit, wait_ns);
}
