// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers of rverbs for ib_core: static inline functions and macros of
 * include/rdma/, made callable from Rust.  Prototypes in
 * include/rverbs_helpers.h.
 */

#include <linux/cache.h>
#include <linux/highmem.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "rverbs_helpers.h"

/* rdma_zalloc_drv_obj_gfp(device, ib_ah, gfp): the driver's AH size. */
struct ib_ah *rverbs_zalloc_ah(struct ib_device *device, gfp_t gfp)
{
	return rdma_zalloc_drv_obj_gfp(device, ib_ah, gfp);
}

/*
 * ib_alloc_xrcd_user's part before the driver's: the driver's XRCD object
 * (rdma_zalloc_drv_obj, its size) with ib_core's fields set.  One call, as
 * init_rwsem() and xa_init() are macros (a lockdep class per call site).
 * NULL when out of memory.
 */
struct ib_xrcd *rverbs_xrcd_new(struct ib_device *device, struct inode *inode)
{
	struct ib_xrcd *xrcd = rdma_zalloc_drv_obj(device, ib_xrcd);

	if (!xrcd)
		return NULL;
	xrcd->device = device;
	xrcd->inode = inode;
	init_rwsem(&xrcd->tgt_qps_rwsem);
	xa_init(&xrcd->tgt_qps);
	return xrcd;
}

/*
 * ib_dealloc_xrcd_user's checks in one call: the users of @xrcd (QPs,
 * SRQs: -EBUSY while there are any) and, when there are none, ib_core's
 * warning if target QPs are still registered (each holds a use, so that
 * is a bug).
 */
int rverbs_xrcd_users(struct ib_xrcd *xrcd)
{
	int users = atomic_read(&xrcd->usecnt);

	if (!users)
		WARN_ON(!xa_empty(&xrcd->tgt_qps));
	return users;
}

bool rverbs_ib_device_try_get(struct ib_device *dev)
{
	return ib_device_try_get(dev);
}

/* vmalloc_user() is a macro (allocation tags): zeroed, VM_USERMAP memory. */
void *rverbs_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

/* cache_line_size() is a macro. */
int rverbs_cache_line_size(void)
{
	return cache_line_size();
}

u64 rverbs_user_mmap_get_offset(const struct rdma_user_mmap_entry *entry)
{
	return rdma_user_mmap_get_offset(entry);
}

/*
 * rdma_udata_to_drv_context() without the driver's container: the ucontext
 * of a verb's driver udata, which ib_uverbs keeps in the verb's attribute
 * bundle.
 */
struct ib_ucontext *rverbs_udata_ucontext(struct ib_udata *udata)
{
	return container_of(udata, struct uverbs_attr_bundle, driver_udata)->context;
}

/* ib_umem_num_pages() is static inline: the pages a umem spans. */
size_t rverbs_umem_num_pages(const struct ib_umem *umem)
{
	return ib_umem_num_pages((struct ib_umem *)umem);
}

/* A bit field: whether the umem's pages were pinned for writing. */
bool rverbs_umem_writable(const struct ib_umem *umem)
{
	return umem->writable;
}

/*
 * The pinned pages of a (not on-demand, not dma-buf) umem, in order, into
 * @pages, at most @n of them (the page iterator is static inline); returns
 * how many were written.
 */
size_t rverbs_umem_fill_pages(struct ib_umem *umem, struct page **pages,
			      size_t n)
{
	struct sg_page_iter iter;
	size_t i = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == n)
			break;
		pages[i++] = sg_page_iter_page(&iter);
	}
	return i;
}

/* xa_insert() is static inline: publish @entry at @index if free (-EBUSY). */
int rverbs_xa_insert(struct xarray *xa, unsigned long index, void *entry)
{
	return xa_insert(xa, index, entry, GFP_KERNEL);
}

/* xa_store() with GFP_KERNEL: the old entry, or an error entry. */
void *rverbs_xa_store(struct xarray *xa, unsigned long index, void *entry)
{
	return xa_store(xa, index, entry, GFP_KERNEL);
}

/* An empty xarray whose lock is taken with IRQs off (XA_FLAGS_LOCK_IRQ). */
void rverbs_xa_init_irq(struct xarray *xa)
{
	xa_init_flags(xa, XA_FLAGS_LOCK_IRQ);
}

/*
 * An xarray of XA_FLAGS_LOCK_IRQ written in any context: its lock taken
 * with IRQs saved, memory allocated with GFP_KERNEL if @may_sleep (the lock
 * is dropped around the allocation then), else GFP_ATOMIC.
 */
int rverbs_xa_insert_any(struct xarray *xa, unsigned long index, void *entry,
			 bool may_sleep)
{
	gfp_t gfp = may_sleep ? GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	int ret;

	xa_lock_irqsave(xa, flags);
	ret = __xa_insert(xa, index, entry, gfp);
	xa_unlock_irqrestore(xa, flags);
	return ret;
}

/*
 * As above, @entry in place of the entry at @index, only if there is one:
 * the old entry (NULL: nothing stored), or an error entry.
 */
void *rverbs_xa_replace_any(struct xarray *xa, unsigned long index,
			    void *entry, bool may_sleep)
{
	gfp_t gfp = may_sleep ? GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	void *old;

	xa_lock_irqsave(xa, flags);
	old = xa_load(xa, index);
	if (old)
		old = __xa_store(xa, index, entry, gfp);
	xa_unlock_irqrestore(xa, flags);
	return old;
}

/* As above: the entry erased, or NULL. */
void *rverbs_xa_erase_any(struct xarray *xa, unsigned long index)
{
	unsigned long flags;
	void *old;

	xa_lock_irqsave(xa, flags);
	old = __xa_erase(xa, index);
	xa_unlock_irqrestore(xa, flags);
	return old;
}

/*
 * kfree(@obj) a grace period from now, in any context (kfree_rcu() is a
 * macro over the type of @obj); @head lies within @obj.
 */
void rverbs_kfree_after_gp(void *obj, struct rcu_head *head)
{
	kvfree_call_rcu(head, obj);
}

/*
 * The indices of a queue shared with userspace: the side that does not own
 * an index reads it with acquire, the owner publishes it with release.
 */
u32 rverbs_load_acquire_u32(const u32 *p)
{
	/* Pairs with the other side's release of what it wrote before. */
	return smp_load_acquire(p);
}

void rverbs_store_release_u32(u32 *p, u32 v)
{
	/* The slots written before are seen by whoever acquires the index. */
	smp_store_release(p, v);
}

/*
 * Copies between kernel memory and memory that userspace may write at the
 * same time (a mapped ring, pinned user pages): plain byte copies in C,
 * never a Rust reference to the shared bytes.
 */
void rverbs_copy_from_shared(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}

void rverbs_copy_to_shared(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}

/* A copy from (@to_page false) or into a page at @offset, @len within it. */
void rverbs_copy_page(struct page *page, size_t offset, void *buf, size_t len,
		      bool to_page)
{
	if (to_page)
		memcpy_to_page(page, offset, buf, len);
	else
		memcpy_from_page(buf, page, offset, len);
}

/*
 * An RDMA atomic on the 8 bytes at @offset (8-byte aligned) of @page, by
 * @op: 0 compare-and-swap (@swap_add stored if the value is @compare), 1
 * fetch-and-add (@swap_add added), 2 ATOMIC WRITE (@swap_add stored, its
 * bytes as they came: soft-RoCE's smp_store_release); returns the value
 * before (0 for a store).  A CPU atomic, so atomic against every other
 * writer: other QPs and devices, and the process itself.
 */
u64 rverbs_atomic_page(struct page *page, size_t offset, int op, u64 compare,
		       u64 swap_add)
{
	u64 *va = kmap_local_page(page) + offset;
	u64 old = 0, seen;

	switch (op) {
	case 0:
		old = cmpxchg64(va, compare, swap_add);
		break;
	case 1:
		old = READ_ONCE(*va);
		while ((seen = cmpxchg64(va, old, old + swap_add)) != old)
			old = seen;
		break;
	default:
		/* Ordered after what the QP wrote before it (rxe's). */
		smp_store_release(va, swap_add);
		break;
	}
	kunmap_local(va);
	return old;
}

/*
 * The warning of ib_core's _ib_modify_qp() for a PSN past 24 bits, word
 * for word (dev_warn is a macro; the function named is ib_core's, whose
 * line a log reader knows).
 */
void rverbs_warn_psn_overflow(struct ib_device *device, bool sq)
{
	if (sq)
		dev_warn(&device->dev, " %s sq_psn overflow, masking to 24 bits\n",
			 "_ib_modify_qp");
	else
		dev_warn(&device->dev, "%s rq_psn overflow, masking to 24 bits\n",
			 "_ib_modify_qp");
}

/* cond_resched() is a macro. */
void rverbs_cond_resched(void)
{
	cond_resched();
}

/*
 * The bottom-half-safe spinlock of crate::sync::SpinLockBh: the data path
 * takes its locks in process context and in the network's softirq.
 */
void rverbs_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void rverbs_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

int rverbs_spin_trylock_bh(spinlock_t *lock)
{
	return spin_trylock_bh(lock);
}

/*
 * Per-CPU counters: n u64 for each possible CPU, zeroed; each CPU counts
 * on its own line (this_cpu_inc: safe against interrupts on this CPU),
 * and a reader sums them.  Rust sees the __percpu pointer as a plain one
 * (bindgen) and only passes it back here.
 */
u64 __percpu *rverbs_pcpu_counters_alloc(unsigned int n)
{
	return __alloc_percpu_gfp(n * sizeof(u64), sizeof(u64), GFP_KERNEL);
}

void rverbs_pcpu_counters_free(u64 __percpu *counters)
{
	free_percpu(counters);
}

void rverbs_pcpu_counter_inc(u64 __percpu *counters, unsigned int i)
{
	this_cpu_inc(counters[i]);
}

u64 rverbs_pcpu_counter_sum(u64 __percpu *counters, unsigned int i)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(&counters[i], cpu));
	return sum;
}

/*
 * Work after a grace period, in process context: rverbs' own unbound
 * workqueue, so that the module's exit can drain it (a system workqueue
 * may not be flushed).  A table's reference to an object it let go of is
 * dropped from here (rust/rdma/table.rs): never in softirq, where the
 * last reference to a ring would vfree() it through vfree_atomic(),
 * which writes its list node into the first bytes of the buffer, pages
 * a process may still map.
 */
static struct workqueue_struct *rverbs_release_wq;

struct rverbs_release {
	struct rcu_work rwork;
	void (*fn)(void *data);
	void *data;
};

static void rverbs_release_run(struct work_struct *work)
{
	struct rverbs_release *r = container_of(to_rcu_work(work), struct rverbs_release, rwork);

	r->fn(r->data);
	kfree(r);
}

int rverbs_release_start(void)
{
	rverbs_release_wq = alloc_workqueue("rverbs_release", WQ_UNBOUND, 0);
	return rverbs_release_wq ? 0 : -ENOMEM;
}

/* No release is queued any more: waits for those queued. */
void rverbs_release_stop(void)
{
	/* queue_rcu_work() queues the work from an RCU callback. */
	rcu_barrier();
	destroy_workqueue(rverbs_release_wq);
	rverbs_release_wq = NULL;
}

/* fn(data), in process context, after a grace period.  -ENOMEM. */
int rverbs_release_after_gp(void (*fn)(void *data), void *data)
{
	struct rverbs_release *r = kmalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->data = data;
	INIT_RCU_WORK(&r->rwork, rverbs_release_run);
	queue_rcu_work(rverbs_release_wq, &r->rwork);
	return 0;
}
