/* SPDX-License-Identifier: MIT */
/*
 * kshim.h - the kernel interfaces fpgad_dma.ko uses, implemented in user
 * space (kshim.c) so that the module's own sources build into the
 * engine-model test (test_xdma_model.c) unchanged.
 *
 * Every <linux/...> header the module includes is generated, for this
 * build only, as a one-line file that includes this one (tests/kmod/
 * model.mk), so that a new include in the module fails the build here
 * with the name of the header.
 *
 * What is modelled rather than stubbed:
 *   - PCI: one device per kshim_pci_add(), bound to the registered driver
 *     by its id table and dynamic ids; config space; BARs whose MMIO goes
 *     to the XDMA model (xdma_model.c); MSI-X, MSI or legacy INTx vectors
 *     delivered by the model to request_irq() handlers; function reset.
 *   - DMA: bus address == user-space address; every mapping (coherent,
 *     sg table, dma-buf, nv-p2p) is recorded, and the model's DMA goes
 *     through kshim_dma_access(), which refuses and counts any access
 *     outside a live mapping (DMA into freed or unmapped memory).
 *   - Sleeping and waking: wait queues, work queues (one thread per
 *     queued work item), jiffies at HZ=1000 on CLOCK_MONOTONIC.
 *   - Module parameters, sysfs attributes, the character device's
 *     file_operations: reachable by name from the test.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <asm-generic/ioctl.h>
#include <linux/pci_regs.h>

/*
 * The kernel the shim stands for: the newest interfaces (fpgad_compat.h);
 * the older spellings are built by the kmod tier against Debian's 6.1.
 */
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE	KERNEL_VERSION(6, 12, 0)

/* --- types and compiler ---------------------------------------------------- */

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef unsigned long long __u64;
typedef int32_t __s32;
typedef long long __s64;
typedef uint32_t __le32;
typedef unsigned long long __le64;
typedef unsigned long long dma_addr_t;
typedef unsigned int gfp_t;
typedef unsigned int __poll_t;
typedef int irqreturn_t;

#define __iomem
#define __user
#define __force
#define __rcu
#define __init
#define __exit
#define __must_check
#define __maybe_unused		__attribute__((unused))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

/* IS_ENABLED(CONFIG_X): 1 when the build defines CONFIG_X as 1. */
#define KSHIM_ARG_PLACEHOLDER_1		0,
#define KSHIM_TAKE_SECOND(a, b, ...)	b
#define KSHIM_IS_DEFINED3(x)		KSHIM_TAKE_SECOND(x 1, 0, 0)
#define KSHIM_IS_DEFINED2(v)		KSHIM_IS_DEFINED3(KSHIM_ARG_PLACEHOLDER_##v)
#define IS_ENABLED(option)		KSHIM_IS_DEFINED2(option)

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

#define BIT(n)			(1UL << (n))
#define BIT_ULL(n)		(1ULL << (n))
#define GENMASK(h, l)		(((~0UL) >> (63 - (h))) & (~0UL << (l)))
#define GENMASK_ULL(h, l)	(((~0ULL) >> (63 - (h))) & (~0ULL << (l)))
#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define upper_32_bits(n)	((u32)(((u64)(n)) >> 32))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define U8_MAX			UINT8_MAX
#define U16_MAX			UINT16_MAX
#define U32_MAX			UINT32_MAX
#define U64_MAX			UINT64_MAX
#define S32_MAX			INT32_MAX

#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   _a > _b ? _a : _b; })
#define min_t(t, a, b)	({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b)	({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)

static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	unsigned long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

#define le32_to_cpu(v)		((u32)(v))
#define cpu_to_le32(v)		((u32)(v))
#define le64_to_cpu(v)		((u64)(v))
#define cpu_to_le64(v)		((u64)(v))

#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE(ptr); }
static inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }

#ifndef ENOTSUPP
#define ENOTSUPP	524
#endif

/* --- logging ------------------------------------------------------------------ */

struct device;
void kshim_log(const struct device *dev, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define pr_err(fmt, ...)	kshim_log(NULL, "err", fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)	kshim_log(NULL, "warn", fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	kshim_log(NULL, "info", fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	kshim_log(NULL, "debug", fmt, ##__VA_ARGS__)
#define dev_err(d, fmt, ...)	kshim_log(d, "err", fmt, ##__VA_ARGS__)
#define dev_warn(d, fmt, ...)	kshim_log(d, "warn", fmt, ##__VA_ARGS__)
#define dev_info(d, fmt, ...)	kshim_log(d, "info", fmt, ##__VA_ARGS__)
#define dev_dbg(d, fmt, ...)	kshim_log(d, "debug", fmt, ##__VA_ARGS__)
#define pci_err(p, fmt, ...)	dev_err(&(p)->dev, fmt, ##__VA_ARGS__)
#define pci_warn(p, fmt, ...)	dev_warn(&(p)->dev, fmt, ##__VA_ARGS__)
#define pci_info(p, fmt, ...)	dev_info(&(p)->dev, fmt, ##__VA_ARGS__)
#define WARN_ON(c)		({ bool _c = !!(c); if (_c) \
				   kshim_log(NULL, "WARNING", "%s:%d: %s\n", \
					     __FILE__, __LINE__, #c); _c; })
#define WARN_ON_ONCE(c)		WARN_ON(c)
#define BUG_ON(c)		do { if (c) abort(); } while (0)
#define might_sleep()		kshim_might_sleep("might_sleep()")
#define cond_resched()		do { } while (0)
#define lockdep_assert_held(l)	do { (void)(l); } while (0)

/* --- atomics ------------------------------------------------------------------ */

typedef struct { atomic_int v; } atomic_t;
typedef struct { atomic_llong v; } atomic64_t;
typedef struct { atomic_int refs; } refcount_t;

#define ATOMIC_INIT(i)		{ (i) }
static inline int atomic_read(const atomic_t *a) { return atomic_load((atomic_int *)&a->v); }
static inline void atomic_set(atomic_t *a, int i) { atomic_store(&a->v, i); }
static inline void atomic_inc(atomic_t *a) { atomic_fetch_add(&a->v, 1); }
static inline void atomic_dec(atomic_t *a) { atomic_fetch_sub(&a->v, 1); }
static inline int atomic_xchg(atomic_t *a, int i) { return atomic_exchange(&a->v, i); }
static inline bool atomic_dec_and_test(atomic_t *a) { return atomic_fetch_sub(&a->v, 1) == 1; }
static inline int atomic_inc_return(atomic_t *a) { return atomic_fetch_add(&a->v, 1) + 1; }
static inline int atomic_dec_return(atomic_t *a) { return atomic_fetch_sub(&a->v, 1) - 1; }
static inline s64 atomic64_read(const atomic64_t *a) { return atomic_load((atomic_llong *)&a->v); }
static inline void atomic64_set(atomic64_t *a, s64 i) { atomic_store(&a->v, i); }
static inline void atomic64_inc(atomic64_t *a) { atomic_fetch_add(&a->v, 1); }
static inline void atomic64_dec(atomic64_t *a) { atomic_fetch_sub(&a->v, 1); }
static inline void atomic64_add(s64 i, atomic64_t *a) { atomic_fetch_add(&a->v, i); }
static inline void atomic64_sub(s64 i, atomic64_t *a) { atomic_fetch_sub(&a->v, i); }
static inline void refcount_set(refcount_t *r, int n) { atomic_store(&r->refs, n); }
static inline void refcount_inc(refcount_t *r) { atomic_fetch_add(&r->refs, 1); }
static inline bool refcount_dec_and_test(refcount_t *r) { return atomic_fetch_sub(&r->refs, 1) == 1; }
static inline unsigned int refcount_read(const refcount_t *r) { return atomic_load((atomic_int *)&r->refs); }

/* --- locks ------------------------------------------------------------------------ */

/*
 * Every lock is checked by klockdep.c: lock order (an acquisition edge
 * that closes a cycle between classes), sleeping in atomic context, and a
 * spinlock taken both in an interrupt handler and with interrupts on.
 * A lock's class is the place it was initialised.
 */
struct kshim_dep {
	const char *name;
};

enum kshim_lock_kind {
	KSHIM_LOCK_SLEEPING,		/* mutex, dma_resv, a wait */
	KSHIM_LOCK_SPIN,		/* spin_lock: interrupts on */
	KSHIM_LOCK_SPIN_IRQ,		/* spin_lock_irq, spin_lock_irqsave */
};

void kshim_lock_acquire(const struct kshim_dep *dep, unsigned int sub,
			enum kshim_lock_kind kind);

/*
 * Points where a thread the test singled out (the nv-p2p free callback's)
 * can be held: after a mutex is unlocked, before a wake-up.  True when the
 * thread was held there (kshim_test.h: kshim_gpu_pause_at).
 */
enum kshim_point_kind {
	KSHIM_POINT_UNLOCK,
	KSHIM_POINT_WAKE,
};
bool kshim_point(enum kshim_point_kind kind);
void kshim_lock_release(const struct kshim_dep *dep, enum kshim_lock_kind kind);
/* A wait for whoever holds @dep: an acquisition edge, nothing held after. */
void kshim_might_lock(const struct kshim_dep *dep, unsigned int sub);
/* Reports a sleep while a spinlock is held or in an interrupt handler. */
void kshim_might_sleep(const char *what);
void kshim_irq_enter(void);
void kshim_irq_exit(void);

#define KSHIM_STR2(x)		#x
#define KSHIM_STR(x)		KSHIM_STR2(x)
#define KSHIM_SITE(l)		__FILE__ ":" KSHIM_STR(__LINE__) " " #l

typedef struct { pthread_mutex_t m; struct kshim_dep dep; } spinlock_t;
struct mutex { pthread_mutex_t m; struct kshim_dep dep; };

#define kshim_lock(l, sub, kind) do {					\
	kshim_lock_acquire(&(l)->dep, (sub), (kind));			\
	pthread_mutex_lock(&(l)->m);					\
} while (0)
/*
 * A kernel mutex_unlock() may still touch the mutex once another task can
 * own it (the wait list, the handoff): with a pause point armed there
 * (kshim_point), the unlocking thread reads the lock again afterwards, so
 * that a lock freed under it is a use after free.
 */
#define kshim_unlock(l, kind) do {					\
	pthread_mutex_unlock(&(l)->m);					\
	kshim_lock_release(&(l)->dep, (kind));				\
	if ((kind) == KSHIM_LOCK_SLEEPING &&				\
	    kshim_point(KSHIM_POINT_UNLOCK))				\
		(void)*(const char *volatile *)&(l)->dep.name;		\
} while (0)

#define spin_lock_init(l) do {						\
	pthread_mutex_init(&(l)->m, NULL);				\
	(l)->dep.name = KSHIM_SITE(l);					\
} while (0)
#define spin_lock(l)		kshim_lock(l, 0, KSHIM_LOCK_SPIN)
#define spin_unlock(l)		kshim_unlock(l, KSHIM_LOCK_SPIN)
#define spin_lock_irq(l)	kshim_lock(l, 0, KSHIM_LOCK_SPIN_IRQ)
#define spin_unlock_irq(l)	kshim_unlock(l, KSHIM_LOCK_SPIN_IRQ)
#define spin_lock_irqsave(l, f)	do { (f) = 0; spin_lock_irq(l); } while (0)
#define spin_unlock_irqrestore(l, f) do { (void)(f); spin_unlock_irq(l); } while (0)
#define mutex_init(l)		spin_lock_init(l)
#define mutex_destroy(l)	pthread_mutex_destroy(&(l)->m)
#define mutex_lock(l)		kshim_lock(l, 0, KSHIM_LOCK_SLEEPING)
#define mutex_lock_nested(l, s)	kshim_lock(l, (s), KSHIM_LOCK_SLEEPING)
#define mutex_unlock(l)		kshim_unlock(l, KSHIM_LOCK_SLEEPING)
#define DEFINE_MUTEX(n)		struct mutex n = { PTHREAD_MUTEX_INITIALIZER, { #n } }
#define might_lock(l)		kshim_might_lock(&(l)->dep, 0)

/* --- lists --------------------------------------------------------------------- */

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(n)	{ &(n), &(n) }
#define LIST_HEAD(n)		struct list_head n = LIST_HEAD_INIT(n)

static inline void INIT_LIST_HEAD(struct list_head *l) { l->next = l; l->prev = l; }
static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h) { __list_add(n, h, h->next); }
static inline void list_add_tail(struct list_head *n, struct list_head *h) { __list_add(n, h->prev, h); }
static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = (struct list_head *)0x100;
	e->prev = (struct list_head *)0x122;
}
static inline void list_del_init(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	INIT_LIST_HEAD(e);
}
static inline bool list_empty(const struct list_head *h) { return h->next == h; }
static inline void list_move_tail(struct list_head *e, struct list_head *h)
{
	list_del_init(e);
	list_add_tail(e, h);
}
static inline void list_splice_tail_init(struct list_head *l, struct list_head *h)
{
	if (list_empty(l))
		return;
	l->next->prev = h->prev;
	h->prev->next = l->next;
	l->prev->next = h;
	h->prev = l->prev;
	INIT_LIST_HEAD(l);
}

#define list_entry(p, t, m)		container_of(p, t, m)
#define list_first_entry(h, t, m)	list_entry((h)->next, t, m)
#define list_first_entry_or_null(h, t, m) \
	(list_empty(h) ? NULL : list_first_entry(h, t, m))
#define list_next_entry(p, m)	list_entry((p)->m.next, __typeof__(*(p)), m)
#define list_for_each_entry(p, h, m) \
	for (p = list_first_entry(h, __typeof__(*p), m); &p->m != (h); \
	     p = list_next_entry(p, m))
#define list_for_each_entry_safe(p, n, h, m) \
	for (p = list_first_entry(h, __typeof__(*p), m), \
	     n = list_next_entry(p, m); &p->m != (h); \
	     p = n, n = list_next_entry(n, m))

/* --- time and sleeping --------------------------------------------------------- */

#define HZ			1000
unsigned long kshim_jiffies(void);
#define jiffies			kshim_jiffies()
#define msecs_to_jiffies(m)	((unsigned long)(m))
#define jiffies_to_msecs(j)	((unsigned int)(j))
#define usecs_to_jiffies(u)	((unsigned long)DIV_ROUND_UP((u), 1000))
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)
#define MAX_SCHEDULE_TIMEOUT	LONG_MAX

u64 ktime_get_ns(void);
void kshim_usleep(unsigned long us);
#define usleep_range(a, b)	kshim_usleep(a)
#define msleep(ms)		kshim_usleep((unsigned long)(ms) * 1000)
#define udelay(us)		kshim_usleep(us)
#define ndelay(ns)		do { } while (0)

/* --- wait queues ------------------------------------------------------------------ */

typedef struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned long gen;
} wait_queue_head_t;

void init_waitqueue_head(wait_queue_head_t *wq);
/* A static one: its condition variable keeps the realtime clock, so wait_event() only. */
#define DECLARE_WAIT_QUEUE_HEAD(n) \
	wait_queue_head_t n = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 }
void kshim_wake(wait_queue_head_t *wq);
unsigned long kshim_wait_gen(wait_queue_head_t *wq);
/* Sleep until the generation moves on or @deadline (jiffies; 0: none). */
void kshim_wait_sleep(wait_queue_head_t *wq, unsigned long gen,
		      unsigned long deadline);

#define wake_up(wq)			kshim_wake(wq)
#define wake_up_all(wq)			kshim_wake(wq)
#define wake_up_interruptible(wq)	kshim_wake(wq)
#define wake_up_interruptible_all(wq)	kshim_wake(wq)

#define wait_event(wq, cond) do {					\
	kshim_might_sleep("wait_event");				\
	for (;;) {							\
		unsigned long _g = kshim_wait_gen(&(wq));		\
		if (cond)						\
			break;						\
		kshim_wait_sleep(&(wq), _g, 0);				\
	}								\
} while (0)

#define wait_event_interruptible(wq, cond) ({ wait_event(wq, cond); 0; })

/* Returns the jiffies left (at least 1) when @cond came true, else 0. */
#define wait_event_timeout(wq, cond, timeout) ({			\
	unsigned long _end = jiffies + (unsigned long)(timeout);	\
	long _left;							\
	kshim_might_sleep("wait_event_timeout");			\
	for (;;) {							\
		unsigned long _g = kshim_wait_gen(&(wq));		\
		_left = (long)(_end - jiffies);				\
		if (cond) {						\
			if (_left < 1)					\
				_left = 1;				\
			break;						\
		}							\
		if (_left <= 0) {					\
			_left = 0;					\
			break;						\
		}							\
		kshim_wait_sleep(&(wq), _g, _end);			\
	}								\
	_left;								\
})

/* --- memory ---------------------------------------------------------------------- */

#define GFP_KERNEL	0u
#define GFP_NOWAIT	1u
#define GFP_ATOMIC	2u
#define __GFP_ZERO	4u

void *kshim_alloc(size_t n, bool zero);
static inline void kshim_gfp(gfp_t f)
{
	if (f == GFP_KERNEL)
		kshim_might_sleep("a GFP_KERNEL allocation");
}
static inline void *kmalloc(size_t n, gfp_t f) { kshim_gfp(f); return kshim_alloc(n, false); }
static inline void *kzalloc(size_t n, gfp_t f) { kshim_gfp(f); return kshim_alloc(n, true); }
static inline void *kcalloc(size_t n, size_t s, gfp_t f)
{
	kshim_gfp(f);
	if (s && n > SIZE_MAX / s)
		return NULL;
	return kshim_alloc(n * s, true);
}
static inline void *kmalloc_array(size_t n, size_t s, gfp_t f) { return kcalloc(n, s, f); }
static inline void *kvmalloc_array(size_t n, size_t s, gfp_t f) { return kcalloc(n, s, f); }
static inline void kfree(const void *p) { free((void *)p); }
static inline void kvfree(const void *p) { free((void *)p); }

size_t strscpy(char *dst, const char *src, size_t n);

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#define offset_in_page(p)	((unsigned long)(p) & ~PAGE_MASK)
#define TASK_SIZE		(1UL << 47)

/* The caller's memory: locked_vm against RLIMIT_MEMLOCK (kshim_test.h). */
struct mm_struct {
	long locked_vm;			/* pages */
};
struct task_struct {
	struct mm_struct *mm;
};
extern struct task_struct *current;
#define CAP_IPC_LOCK		14
int account_locked_vm(struct mm_struct *mm, unsigned long pages, bool inc);
static inline void mmgrab(struct mm_struct *mm) { (void)mm; }
static inline void mmdrop(struct mm_struct *mm) { (void)mm; }

/* A page is named by its user-space address. */
struct page;
#define page_address(p)		((void *)(p))

#define FOLL_WRITE		0x01
#define FOLL_LONGTERM		0x100
int pin_user_pages_fast(unsigned long start, int nr, unsigned int flags,
			struct page **pages);
void unpin_user_pages(struct page **pages, unsigned long n);
void unpin_user_pages_dirty_lock(struct page **pages, unsigned long n,
				 bool dirty);

static inline unsigned long copy_from_user(void *to, const void __user *from,
					   unsigned long n)
{
	if (!from)
		return n;
	memcpy(to, from, n);
	return 0;
}

static inline unsigned long copy_to_user(void __user *to, const void *from,
					 unsigned long n)
{
	if (!to)
		return n;
	memcpy(to, from, n);
	return 0;
}

/* The kernel's: zero-extend a shorter @usize, refuse a longer non-zero tail. */
static inline int copy_struct_from_user(void *dst, size_t ksize,
					const void __user *src, size_t usize)
{
	size_t n = usize < ksize ? usize : ksize, i;

	if (!src)
		return -EFAULT;
	for (i = ksize; i < usize; i++)
		if (((const unsigned char *)src)[i])
			return -E2BIG;
	memset(dst, 0, ksize);
	memcpy(dst, src, n);
	return 0;
}

#define CAP_SYS_ADMIN		21
bool capable(int cap);

/* --- devices, files, sysfs ----------------------------------------------------- */

struct attribute {
	const char *name;
	unsigned short mode;
};

struct attribute_group {
	const char *name;
	struct attribute **attrs;
};

struct module;
#define THIS_MODULE		((struct module *)NULL)

struct class {
	char name[32];
};

struct device {
	char name[32];
	struct device *parent;
	struct class *class;
	const struct attribute_group **groups;
	void (*release)(struct device *dev);
	dev_t devt;
	void *driver_data;
	atomic_int refs;
};

struct device_attribute {
	struct attribute attr;
	ssize_t (*show)(struct device *dev, struct device_attribute *attr,
			char *buf);
};

#define DEVICE_ATTR_RO(n) \
	struct device_attribute dev_attr_##n = { .attr = { .name = #n, .mode = 0444 }, \
						  .show = n##_show }
#define ATTRIBUTE_GROUPS(n)						\
	static const struct attribute_group n##_group = { .attrs = n##_attrs }; \
	static const struct attribute_group *n##_groups[] = { &n##_group, NULL }

int sysfs_emit(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void device_initialize(struct device *dev);
int dev_set_name(struct device *dev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline const char *dev_name(const struct device *dev) { return dev->name; }
struct device *get_device(struct device *dev);
void put_device(struct device *dev);
static inline void *dev_get_drvdata(const struct device *dev) { return dev->driver_data; }
static inline void dev_set_drvdata(struct device *dev, void *d) { dev->driver_data = d; }

/* A function, as since 6.4 (fpgad_compat.h tells the two apart by that). */
struct class *class_create(const char *name);
void class_destroy(struct class *cls);

#define MINORBITS		20
#define MAJOR(d)		((unsigned int)((d) >> MINORBITS))
#define MINOR(d)		((unsigned int)((d) & ((1U << MINORBITS) - 1)))
#define MKDEV(ma, mi)		(((dev_t)(ma) << MINORBITS) | (mi))
int alloc_chrdev_region(dev_t *dev, unsigned int first, unsigned int count,
			const char *name);
void unregister_chrdev_region(dev_t dev, unsigned int count);

struct ida {
	unsigned long long used;
};
#define DEFINE_IDA(n)		struct ida n = { 0 }
int ida_alloc_max(struct ida *ida, unsigned int max, gfp_t gfp);
void ida_free(struct ida *ida, unsigned int id);
static inline void ida_destroy(struct ida *ida) { ida->used = 0; }

struct inode;
struct file;
struct poll_table_struct;
typedef struct poll_table_struct poll_table;

struct seq_file;

struct file_operations {
	struct module *owner;
	int (*open)(struct inode *, struct file *);
	int (*release)(struct inode *, struct file *);
	ssize_t (*read)(struct file *, char __user *, size_t, loff_t *);
	__poll_t (*poll)(struct file *, poll_table *);
	long (*unlocked_ioctl)(struct file *, unsigned int, unsigned long);
	long (*compat_ioctl)(struct file *, unsigned int, unsigned long);
	loff_t (*llseek)(struct file *, loff_t, int);
	int (*kshim_show)(struct seq_file *, void *);	/* debugfs */
};

/* --- seq_file, debugfs: a file is its show(); kshim_debugfs_read() --------- */

struct seq_file {
	char *buf;
	size_t size, count;
	void *private;
};
void seq_printf(struct seq_file *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void seq_puts(struct seq_file *m, const char *s);
#define DEFINE_SHOW_ATTRIBUTE(name)					\
	static const struct file_operations name##_fops = {		\
		.kshim_show = name##_show,				\
	}
struct dentry;
struct dentry *debugfs_create_dir(const char *name, struct dentry *parent);
struct dentry *debugfs_create_file(const char *name, unsigned short mode,
				   struct dentry *parent, void *data,
				   const struct file_operations *fops);
void debugfs_remove_recursive(struct dentry *d);

struct cdev {
	const struct file_operations *ops;
	struct module *owner;
	struct device *dev;
};

struct inode {
	struct cdev *i_cdev;
};

struct file {
	void *private_data;
	unsigned int f_flags;
};

void cdev_init(struct cdev *cdev, const struct file_operations *fops);
int cdev_device_add(struct cdev *cdev, struct device *dev);
void cdev_device_del(struct cdev *cdev, struct device *dev);
static inline int stream_open(struct inode *i, struct file *f) { (void)i; (void)f; return 0; }
long compat_ptr_ioctl(struct file *f, unsigned int cmd, unsigned long arg);
static inline void poll_wait(struct file *f, wait_queue_head_t *wq, poll_table *p)
{
	(void)f; (void)wq; (void)p;
}
static inline bool signal_pending(void *task) { (void)task; return false; }

#define EPOLLIN		0x0001u
#define EPOLLPRI	0x0002u
#define EPOLLOUT	0x0004u
#define EPOLLERR	0x0008u
#define EPOLLHUP	0x0010u
#define EPOLLRDNORM	0x0040u

/* --- modules and their parameters ------------------------------------------------ */

enum kshim_param_type { KP_UINT, KP_BOOL, KP_ULLONG, KP_USHORT_ARRAY };
struct kshim_param {
	const char *name;
	enum kshim_param_type type;
	void *var;
	int *count;		/* arrays */
	unsigned int max;	/* arrays */
};
void kshim_param_register(const struct kshim_param *p);
/* Set a parameter as insmod would ("ids=0x9038,0x9034"); 0 or -errno. */
int kshim_param_set(const char *name, const char *value);

#define KSHIM_PARAM(n, t, v, c, m)					\
	__attribute__((constructor)) static void kshim_param_##n(void)	\
	{								\
		static const struct kshim_param p = { #n, t, v, c, m };	\
		kshim_param_register(&p);				\
	}
#define KSHIM_PT_uint		KP_UINT
#define KSHIM_PT_bool		KP_BOOL
#define KSHIM_PT_ullong		KP_ULLONG
#define module_param_named(n, v, t, perm) KSHIM_PARAM(n, KSHIM_PT_##t, &(v), NULL, 0)
#define module_param(n, t, perm)	module_param_named(n, n, t, perm)
#define module_param_array(n, t, c, perm) \
	KSHIM_PARAM(n, KP_USHORT_ARRAY, n, c, ARRAY_SIZE(n))
#define MODULE_PARM_DESC(n, d)
#define MODULE_DESCRIPTION(d)
#define MODULE_LICENSE(l)
#define MODULE_AUTHOR(a)
#define MODULE_IMPORT_NS(ns)
#define MODULE_INFO(tag, info)
#define MODULE_DEVICE_TABLE(t, n)
#define EXPORT_SYMBOL(s)
#define EXPORT_SYMBOL_GPL(s)
#define module_init(fn)		int kshim_module_init(void) { return fn(); }
#define module_exit(fn)		void kshim_module_exit(void) { fn(); }
int kshim_module_init(void);
void kshim_module_exit(void);

/* --- work queues ------------------------------------------------------------------- */

struct workqueue_struct;
struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);

struct work_struct {
	work_func_t func;
	bool pending;
	bool running;
};

#define WQ_UNBOUND		0x2
#define WQ_MEM_RECLAIM		0x8
#define WQ_HIGHPRI		0x10
#define INIT_WORK(w, f)		do { (w)->func = (f); (w)->pending = false; \
				     (w)->running = false; } while (0)
struct workqueue_struct *alloc_workqueue(const char *fmt, unsigned int flags,
					 int max_active, ...)
	__attribute__((format(printf, 1, 4)));
void destroy_workqueue(struct workqueue_struct *wq);
void flush_workqueue(struct workqueue_struct *wq);
bool queue_work(struct workqueue_struct *wq, struct work_struct *work);

/* --- xarray (index -> pointer) ----------------------------------------------------- */

struct xa_limit {
	u32 min, max;
};
#define XA_LIMIT(lo, hi)	((struct xa_limit){ .min = (lo), .max = (hi) })
#define xa_limit_32b		XA_LIMIT(0, UINT32_MAX)
#define XA_FLAGS_ALLOC		0x1u
#define XA_FLAGS_ALLOC1		0x3u

struct xarray {
	pthread_mutex_t lock;
	unsigned int flags;
	void **slots;
	unsigned long n;
};

void xa_init_flags(struct xarray *xa, unsigned int flags);
int xa_alloc(struct xarray *xa, u32 *id, void *entry, struct xa_limit lim,
	     gfp_t gfp);
void *xa_load(struct xarray *xa, unsigned long index);
void *xa_erase(struct xarray *xa, unsigned long index);
void xa_destroy(struct xarray *xa);
/* The first entry at or after *index, or NULL. */
void *xa_find(struct xarray *xa, unsigned long *index);
#define xa_for_each(xa, idx, e) \
	for (idx = 0; ((e) = xa_find(xa, &idx)) != NULL; idx++)

/* --- scatterlists and DMA mapping ---------------------------------------------------- */

struct scatterlist {
	unsigned long page_link;	/* user address of the first byte */
	unsigned int offset;
	unsigned int length;
	dma_addr_t dma_address;
	unsigned int dma_length;
};

struct sg_table {
	struct scatterlist *sgl;
	unsigned int nents;		/* mapped */
	unsigned int orig_nents;	/* allocated */
};

#define sg_dma_address(sg)	((sg)->dma_address)
#define sg_dma_len(sg)		((sg)->dma_length)
struct scatterlist *sg_next(struct scatterlist *sg);
int sg_alloc_table(struct sg_table *t, unsigned int n, gfp_t gfp);
void sg_free_table(struct sg_table *t);
int sg_alloc_table_from_pages(struct sg_table *t, struct page **pages,
			      unsigned int n, unsigned int offset,
			      unsigned long size, gfp_t gfp);
#define for_each_sg(sgl, sg, n, i) \
	for ((i) = 0, (sg) = (sgl); (i) < (n); (i)++, (sg) = sg_next(sg))
#define for_each_sgtable_sg(t, sg, i)	for_each_sg((t)->sgl, sg, (t)->orig_nents, i)
#define for_each_sgtable_dma_sg(t, sg, i) for_each_sg((t)->sgl, sg, (t)->nents, i)

enum dma_data_direction {
	DMA_BIDIRECTIONAL = 0,
	DMA_TO_DEVICE = 1,
	DMA_FROM_DEVICE = 2,
	DMA_NONE = 3,
};

#define DMA_BIT_MASK(n)		(((n) == 64) ? ~0ULL : ((1ULL << (n)) - 1))
static inline int dma_set_mask_and_coherent(struct device *d, u64 m) { (void)d; (void)m; return 0; }
void *dma_alloc_coherent(struct device *dev, size_t size, dma_addr_t *ret_bus,
			 gfp_t gfp);
void dma_free_coherent(struct device *dev, size_t size, void *cpu,
		       dma_addr_t bus);
int dma_map_sgtable(struct device *dev, struct sg_table *t,
		    enum dma_data_direction dir, unsigned long attrs);
void dma_unmap_sgtable(struct device *dev, struct sg_table *t,
		       enum dma_data_direction dir, unsigned long attrs);
void dma_sync_sgtable_for_device(struct device *dev, struct sg_table *t,
				 enum dma_data_direction dir);
void dma_sync_sgtable_for_cpu(struct device *dev, struct sg_table *t,
			      enum dma_data_direction dir);
void dma_sync_single_for_device(struct device *dev, dma_addr_t bus,
				size_t len, enum dma_data_direction dir);
void dma_sync_single_for_cpu(struct device *dev, dma_addr_t bus, size_t len,
			     enum dma_data_direction dir);
bool dma_need_sync(struct device *dev, dma_addr_t bus);

/* --- dma-buf (a fake exporter the test drives) --------------------------------------- */

struct dma_resv {
	pthread_mutex_t lock;
	struct kshim_dep dep;		/* one class: reservation_ww_class */
};

struct dma_buf_attachment;

struct dma_buf_attach_ops {
	bool allow_peer2peer;
	void (*move_notify)(struct dma_buf_attachment *attach);
};

struct dma_buf {
	size_t size;
	struct dma_resv *resv;
	int fd;				/* the fake fd that names it */
	void *mem;			/* its memory */
	struct dma_resv resv_obj;
	atomic_int refs;
	struct dma_buf_attachment *attach;	/* one importer */
	struct sg_table sgt;
	bool mapped;
	bool pinned;
};

struct dma_buf_attachment {
	struct dma_buf *dmabuf;
	struct device *dev;
	void *importer_priv;
	const struct dma_buf_attach_ops *importer_ops;
};

struct dma_buf *dma_buf_get(int fd);
void dma_buf_put(struct dma_buf *buf);
struct dma_buf_attachment *
dma_buf_dynamic_attach(struct dma_buf *buf, struct device *dev,
		       const struct dma_buf_attach_ops *ops, void *priv);
void dma_buf_detach(struct dma_buf *buf, struct dma_buf_attachment *attach);
int dma_buf_pin(struct dma_buf_attachment *attach);
void dma_buf_unpin(struct dma_buf_attachment *attach);
struct sg_table *dma_buf_map_attachment(struct dma_buf_attachment *attach,
					enum dma_data_direction dir);
void dma_buf_unmap_attachment(struct dma_buf_attachment *attach,
			      struct sg_table *sgt,
			      enum dma_data_direction dir);
static inline int dma_resv_lock(struct dma_resv *r, void *ctx)
{
	(void)ctx;
	kshim_lock_acquire(&r->dep, 0, KSHIM_LOCK_SLEEPING);
	return pthread_mutex_lock(&r->lock);
}
static inline void dma_resv_unlock(struct dma_resv *r)
{
	pthread_mutex_unlock(&r->lock);
	kshim_lock_release(&r->dep, KSHIM_LOCK_SLEEPING);
}

/* --- interrupts ------------------------------------------------------------------------ */

#define IRQ_NONE		0
#define IRQ_HANDLED		1
#define IRQF_SHARED		0x80
typedef irqreturn_t (*irq_handler_t)(int irq, void *dev);
int request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
		const char *name, void *dev);
void free_irq(unsigned int irq, void *dev);
void synchronize_irq(unsigned int irq);

/* --- MMIO ------------------------------------------------------------------------------- */

u32 kshim_mmio_read32(const volatile void __iomem *addr);
void kshim_mmio_write32(u32 val, volatile void __iomem *addr);
#define ioread32(a)		kshim_mmio_read32(a)
#define iowrite32(v, a)		kshim_mmio_write32(v, a)
#define readl(a)		kshim_mmio_read32(a)
#define writel(v, a)		kshim_mmio_write32(v, a)
#define readq(a)		((u64)kshim_mmio_read32(a) | \
				 ((u64)kshim_mmio_read32((const char *)(a) + 4) << 32))
#define writeq(v, a)		do { kshim_mmio_write32((u32)(v), a); \
				     kshim_mmio_write32((u32)((u64)(v) >> 32), \
							(char *)(a) + 4); } while (0)

/* --- bit walking ------------------------------------------------------------------------ */

#define for_each_set_bit(bit, addr, size) \
	for ((bit) = 0; (bit) < (size); (bit)++) \
		if (!(*(addr) & (1UL << (bit)))) continue; else

/* --- PCI ------------------------------------------------------------------------------------ */

#define IORESOURCE_IO		0x00000100
#define IORESOURCE_MEM		0x00000200
#define PCI_STD_NUM_BARS	6
#define PCI_ANY_ID		(~0u)
#define PCI_VENDOR_ID_XILINX	0x10ee
#define PCI_IRQ_INTX		(1 << 0)
#define PCI_IRQ_MSI		(1 << 1)
#define PCI_IRQ_MSIX		(1 << 2)
#define PCI_DEVFN(slot, fn)	((((slot) & 0x1f) << 3) | ((fn) & 0x07))
#define PCI_SLOT(devfn)		(((devfn) >> 3) & 0x1f)
#define PCI_FUNC(devfn)		((devfn) & 0x07)

struct kshim_pci;		/* kshim.c: the modelled function behind it */
struct pci_driver;

struct pci_bus {
	int domain;
	unsigned char number;
	struct pci_bus *parent;
	struct pci_dev *self;		/* the bridge above it; NULL: root bus */
	void *host;			/* names the host bridge */
};

struct pci_dev {
	struct device dev;
	struct pci_bus *bus;
	struct pci_bus *subordinate;	/* bridges: the bus below */
	unsigned int devfn;
	unsigned short vendor;
	unsigned short device;
	unsigned int irq;
	bool msi_enabled;
	bool msix_enabled;
	int pcie_type;			/* PCI_EXP_TYPE_*, -1: not PCIe */
	struct pci_driver *driver;
	struct kshim_pci *ks;
};

struct pci_device_id {
	u32 vendor, device, subvendor, subdevice, class, class_mask;
	unsigned long driver_data;
};

#define PCI_DEVICE(v, d) \
	.vendor = (v), .device = (d), .subvendor = PCI_ANY_ID, .subdevice = PCI_ANY_ID

struct pci_driver {
	const char *name;
	const struct pci_device_id *id_table;
	int (*probe)(struct pci_dev *dev, const struct pci_device_id *id);
	void (*remove)(struct pci_dev *dev);
};

#define to_pci_dev(d)		container_of(d, struct pci_dev, dev)
int pci_register_driver(struct pci_driver *drv);
void pci_unregister_driver(struct pci_driver *drv);
int pci_add_dynid(struct pci_driver *drv, unsigned int vendor,
		  unsigned int device, unsigned int subvendor,
		  unsigned int subdevice, unsigned int class,
		  unsigned int class_mask, unsigned long driver_data);

static inline void *pci_get_drvdata(struct pci_dev *p) { return p->dev.driver_data; }
static inline void pci_set_drvdata(struct pci_dev *p, void *d) { p->dev.driver_data = d; }
static inline const char *pci_name(const struct pci_dev *p) { return p->dev.name; }
static inline int pci_domain_nr(const struct pci_bus *b) { return b->domain; }
static inline bool pci_is_root_bus(const struct pci_bus *b) { return !b->parent; }
static inline bool pci_is_pcie(const struct pci_dev *p) { return p->pcie_type >= 0; }
static inline int pci_pcie_type(const struct pci_dev *p) { return p->pcie_type; }
struct pci_dev *pci_dev_get(struct pci_dev *p);
void pci_dev_put(struct pci_dev *p);
struct pci_dev *pci_upstream_bridge(struct pci_dev *p);
struct pci_dev *pci_get_domain_bus_and_slot(int domain, unsigned int bus,
					    unsigned int devfn);
struct pci_host_bridge;
struct pci_host_bridge *pci_find_host_bridge(struct pci_bus *bus);

int pci_enable_device(struct pci_dev *p);
void pci_disable_device(struct pci_dev *p);
int pci_request_regions(struct pci_dev *p, const char *name);
void pci_release_regions(struct pci_dev *p);
void pci_set_master(struct pci_dev *p);
void pci_clear_master(struct pci_dev *p);
void pci_intx(struct pci_dev *p, int enable);
unsigned long pci_resource_flags(struct pci_dev *p, int bar);
unsigned long long pci_resource_len(struct pci_dev *p, int bar);
void __iomem *pci_iomap(struct pci_dev *p, int bar, unsigned long max);
void pci_iounmap(struct pci_dev *p, void __iomem *addr);
int pci_alloc_irq_vectors(struct pci_dev *p, unsigned int min,
			  unsigned int max, unsigned int flags);
void pci_free_irq_vectors(struct pci_dev *p);
int pci_irq_vector(struct pci_dev *p, unsigned int nr);
int pci_read_config_byte(const struct pci_dev *p, int where, u8 *val);
int pci_read_config_word(const struct pci_dev *p, int where, u16 *val);
int pci_read_config_dword(const struct pci_dev *p, int where, u32 *val);
int pci_write_config_byte(const struct pci_dev *p, int where, u8 val);
int pci_write_config_word(const struct pci_dev *p, int where, u16 val);
int pci_write_config_dword(const struct pci_dev *p, int where, u32 val);
int pcie_capability_read_word(struct pci_dev *p, int where, u16 *val);
int pci_find_ext_capability(struct pci_dev *p, int cap);
int pci_reset_function(struct pci_dev *p);
int pci_try_reset_function(struct pci_dev *p);
int pci_p2pdma_distance_many(struct pci_dev *provider, struct device **clients,
			     int num_clients, bool verbose);
static inline int pci_p2pdma_distance(struct pci_dev *provider,
				      struct device *client, bool verbose)
{
	return pci_p2pdma_distance_many(provider, &client, 1, verbose);
}
static inline bool dev_is_pci(const struct device *d) { (void)d; return true; }

#endif /* KSHIM_H */
