/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU event counters of rverbs, for its C files only (Rust reads
 * them with rverbs_event_sum): one u64 per event slot (the RVERBS_EVENT_*
 * of rverbs_helpers.h) per CPU, defined in rust/helpers/events.c.
 *
 * Counting is this_cpu_inc: one instruction on the running CPU's copy, no
 * atomic and no cache line that another CPU writes, so that counting on
 * every create and destroy does not make the CPUs wait for each other.
 */
#ifndef _RVERBS_EVENTS_H
#define _RVERBS_EVENTS_H

#include <linux/percpu.h>

#include "rverbs_helpers.h"

struct rverbs_events {
	u64 count[RVERBS_EVENT_SLOTS];
};

DECLARE_PER_CPU(struct rverbs_events, rverbs_events);

/* Counts one event of @slot, an RVERBS_EVENT_* constant. */
static inline void rverbs_event_count(unsigned int slot)
{
	this_cpu_inc(rverbs_events.count[slot]);
}

#endif /* _RVERBS_EVENTS_H */
