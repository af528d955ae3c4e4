// SPDX-License-Identifier: GPL-2.0
/*
 * rv_planted: bugs planted on purpose, one per load, for
 * rverbs_detectors.sh on the debug lane: each must be reported by the
 * kernel's own checker and caught by the lane's log checks.  Never load it
 * on a machine you care about.
 *
 *   bug=uaf           a read of freed memory (KASAN)
 *   bug=abba          two mutexes taken in both orders, one after the
 *                     other in one task (lockdep: no deadlock happens, the
 *                     order inversion alone is the report)
 *   bug=leak          16 allocations of 4321 bytes that begin with
 *                     "rv_planted leak!" and whose only pointers are
 *                     dropped, in a kworker (kmemleak, at its next scans;
 *                     a stale copy of a pointer in a register or on a stack
 *                     may hide one or two of them, not all)
 *   bug=atomic_sleep  a GFP_KERNEL allocation under a spinlock
 *                     (DEBUG_ATOMIC_SLEEP)
 *   bug=hang          the loading task asleep uninterruptibly for
 *                     hang_secs seconds (the hung-task detector, once the
 *                     test has set hung_task_timeout_secs below that)
 *
 * Init does the bug and succeeds, so that the report names a loaded module.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to plant: uaf, abba, leak, atomic_sleep or hang");

static uint hang_secs = 10;
module_param(hang_secs, uint, 0444);
MODULE_PARM_DESC(hang_secs, "bug=hang: how long the loading task sleeps, in seconds");

#define RV_PLANTED_LEAK_SIZE 4321
#define RV_PLANTED_LEAKS 16

static DEFINE_MUTEX(rv_planted_a);
static DEFINE_MUTEX(rv_planted_b);
static DEFINE_SPINLOCK(rv_planted_lock);

/* Out of line, so that the compiler cannot see the pointer die. */
static noinline u8 rv_planted_read(const u8 *p)
{
	return READ_ONCE(p[7]);
}

static int rv_planted_uaf(void)
{
	u8 *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	memset(p, 0x5a, 32);
	kfree(p);
	pr_info("rv_planted: read after free: %u\n", rv_planted_read(p));
	return 0;
}

static int rv_planted_abba(void)
{
	mutex_lock(&rv_planted_a);
	mutex_lock(&rv_planted_b);
	mutex_unlock(&rv_planted_b);
	mutex_unlock(&rv_planted_a);

	mutex_lock(&rv_planted_b);
	mutex_lock(&rv_planted_a);
	mutex_unlock(&rv_planted_a);
	mutex_unlock(&rv_planted_b);
	return 0;
}

/* kmemleak's report shows the first 32 bytes: the test looks for these. */
static noinline void rv_planted_fill(u8 *p)
{
	static const char mark[] = "rv_planted leak!";

	memset(p, 0xa5, RV_PLANTED_LEAK_SIZE);
	memcpy(p, mark, sizeof(mark) - 1);
}

/*
 * In a kworker: its stack is used again and again, so that no stale copy of
 * the pointer stays there for kmemleak's scan to find (the stack of insmod,
 * once it exits, may sit in the cache of free stacks with the pointer in it).
 */
static void rv_planted_leak_work(struct work_struct *work)
{
	int i;

	for (i = 0; i < RV_PLANTED_LEAKS; i++) {
		u8 *p = kmalloc(RV_PLANTED_LEAK_SIZE, GFP_KERNEL);

		if (p)
			rv_planted_fill(p);
		/* The only pointer to it ends here. */
	}
}

static DECLARE_WORK(rv_planted_leak_item, rv_planted_leak_work);

static int rv_planted_leak(void)
{
	schedule_work(&rv_planted_leak_item);
	flush_work(&rv_planted_leak_item);
	return 0;
}

static int rv_planted_atomic_sleep(void)
{
	void *p;

	spin_lock(&rv_planted_lock);
	p = kmalloc(64, GFP_KERNEL);
	spin_unlock(&rv_planted_lock);
	kfree(p);
	return 0;
}

static int rv_planted_hang(void)
{
	schedule_timeout_uninterruptible(hang_secs * HZ);
	return 0;
}

static int __init rv_planted_init(void)
{
	if (!strcmp(bug, "uaf"))
		return rv_planted_uaf();
	if (!strcmp(bug, "abba"))
		return rv_planted_abba();
	if (!strcmp(bug, "leak"))
		return rv_planted_leak();
	if (!strcmp(bug, "atomic_sleep"))
		return rv_planted_atomic_sleep();
	if (!strcmp(bug, "hang"))
		return rv_planted_hang();
	return -EINVAL;
}

static void __exit rv_planted_exit(void)
{
}

module_init(rv_planted_init);
module_exit(rv_planted_exit);
MODULE_DESCRIPTION("rverbs test: bugs planted for the debug lane's detectors");
MODULE_LICENSE("GPL");
