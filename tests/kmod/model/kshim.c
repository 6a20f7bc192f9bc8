// SPDX-License-Identifier: MIT
/*
 * kshim.c - the user-space kernel of the engine-model test: what kshim.h
 * declares for the module and kshim_test.h for the test.
 *
 * One lock per registry (DMA mappings, interrupts, PCI devices, character
 * devices, log); none is held while module code runs, except the
 * interrupt registry's, which is held while a handler runs so that
 * free_irq() waits for it, as the kernel's does.
 */
#include <time.h>

#include "kshim_test.h"
#include "nv-p2p.h"

/* --- log ---------------------------------------------------------------------- */

#define LOG_LINES	256

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_ring[LOG_LINES][240];
static unsigned int log_next, log_count, warn_count;

void kshim_log(const struct device *dev, const char *level, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	snprintf(log_ring[log_next], sizeof(log_ring[0]), "<%s> %s%s%s", level,
		 dev ? dev->name : "", dev ? ": " : "", msg);
	if (getenv("KSHIM_VERBOSE") || !strcmp(level, "WARNING"))
		fprintf(stderr, "kshim: %s", log_ring[log_next]);
	if (!strcmp(level, "WARNING"))
		warn_count++;
	log_next = (log_next + 1) % LOG_LINES;
	if (log_count < LOG_LINES)
		log_count++;
	pthread_mutex_unlock(&log_lock);
}

bool kshim_log_has(const char *needle)
{
	unsigned int i;
	bool found = false;

	pthread_mutex_lock(&log_lock);
	for (i = 0; i < log_count && !found; i++)
		found = strstr(log_ring[i], needle) != NULL;
	pthread_mutex_unlock(&log_lock);
	return found;
}

void kshim_log_clear(void)
{
	pthread_mutex_lock(&log_lock);
	log_count = 0;
	log_next = 0;
	pthread_mutex_unlock(&log_lock);
}

unsigned int kshim_warnings(void)
{
	unsigned int n;

	pthread_mutex_lock(&log_lock);
	n = warn_count;
	pthread_mutex_unlock(&log_lock);
	return n;
}

/* --- time ------------------------------------------------------------------------- */

u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec;
}

unsigned long kshim_jiffies(void)
{
	return (unsigned long)(ktime_get_ns() / 1000000u);
}

void kshim_usleep(unsigned long us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	kshim_might_sleep("a sleep");
	nanosleep(&ts, NULL);
}

/* --- wait queues ------------------------------------------------------------------------- */

void init_waitqueue_head(wait_queue_head_t *wq)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&wq->m, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wq->c, &ca);
	pthread_condattr_destroy(&ca);
	wq->gen = 0;
}

void kshim_wake(wait_queue_head_t *wq)
{
	kshim_point(KSHIM_POINT_WAKE);
	pthread_mutex_lock(&wq->m);
	wq->gen++;
	pthread_cond_broadcast(&wq->c);
	pthread_mutex_unlock(&wq->m);
}

unsigned long kshim_wait_gen(wait_queue_head_t *wq)
{
	unsigned long gen;

	pthread_mutex_lock(&wq->m);
	gen = wq->gen;
	pthread_mutex_unlock(&wq->m);
	return gen;
}

void kshim_wait_sleep(wait_queue_head_t *wq, unsigned long gen,
		      unsigned long deadline)
{
	struct timespec ts;

	if (deadline) {
		ts.tv_sec = (time_t)(deadline / 1000);
		ts.tv_nsec = (long)(deadline % 1000) * 1000000L;
	}
	pthread_mutex_lock(&wq->m);
	while (wq->gen == gen) {
		if (!deadline) {
			pthread_cond_wait(&wq->c, &wq->m);
		} else if (pthread_cond_timedwait(&wq->c, &wq->m, &ts)) {
			break;
		}
	}
	pthread_mutex_unlock(&wq->m);
}

/* --- memory, strings ------------------------------------------------------------------------ */

void *kshim_alloc(size_t n, bool zero)
{
	return zero ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
}

size_t strscpy(char *dst, const char *src, size_t n)
{
	size_t len = strlen(src);

	if (!n)
		return (size_t)-E2BIG;
	if (len >= n) {
		memcpy(dst, src, n - 1);
		dst[n - 1] = 0;
		return (size_t)-E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

int pin_user_pages_fast(unsigned long start, int nr, unsigned int flags,
			struct page **pages)
{
	int i;

	(void)flags;
	if (start < 0x10000)
		return -EFAULT;
	for (i = 0; i < nr; i++)
		pages[i] = (struct page *)(start + (unsigned long)i * PAGE_SIZE);
	return nr;
}

void unpin_user_pages(struct page **pages, unsigned long n)
{
	(void)pages;
	(void)n;
}

void unpin_user_pages_dirty_lock(struct page **pages, unsigned long n,
				 bool dirty)
{
	(void)dirty;
	unpin_user_pages(pages, n);
}

/* --- DMA mappings ------------------------------------------------------------------------- */

struct kshim_map {
	u64 bus, len;
	const void *tag;
};

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kshim_map *maps;
static unsigned int nmaps, maps_cap;
static u64 dma_violations;
static char dma_last_violation[160];

static void kshim_map_add(u64 bus, u64 len, const void *tag)
{
	pthread_mutex_lock(&dma_lock);
	if (nmaps == maps_cap) {
		maps_cap = maps_cap ? 2 * maps_cap : 64;
		maps = realloc(maps, maps_cap * sizeof(*maps));
		if (!maps)
			abort();
	}
	maps[nmaps].bus = bus;
	maps[nmaps].len = len;
	maps[nmaps].tag = tag;
	nmaps++;
	pthread_mutex_unlock(&dma_lock);
}

static void kshim_map_del(const void *tag)
{
	unsigned int i;

	pthread_mutex_lock(&dma_lock);
	for (i = 0; i < nmaps;) {
		if (maps[i].tag == tag)
			maps[i] = maps[--nmaps];
		else
			i++;
	}
	pthread_mutex_unlock(&dma_lock);
}

/* The model's DMA: copy only inside a live mapping. */
static int kshim_dma_access(u64 bus, void *buf, size_t len, bool to_host)
{
	unsigned int i;

	pthread_mutex_lock(&dma_lock);
	for (i = 0; i < nmaps; i++) {
		if (bus >= maps[i].bus && len <= maps[i].len &&
		    bus - maps[i].bus <= maps[i].len - len)
			break;
	}
	if (i == nmaps) {
		dma_violations++;
		snprintf(dma_last_violation, sizeof(dma_last_violation),
			 "%s of %zu bytes at %#llx: not mapped",
			 to_host ? "write" : "read", len,
			 (unsigned long long)bus);
		if (getenv("KSHIM_VERBOSE"))
			fprintf(stderr, "kshim: DMA violation: %s\n",
				dma_last_violation);
		pthread_mutex_unlock(&dma_lock);
		return -EFAULT;
	}
	if (to_host)
		memcpy((void *)(uintptr_t)bus, buf, len);
	else
		memcpy(buf, (void *)(uintptr_t)bus, len);
	pthread_mutex_unlock(&dma_lock);
	return 0;
}

u64 kshim_dma_violations(void)
{
	u64 n;

	pthread_mutex_lock(&dma_lock);
	n = dma_violations;
	pthread_mutex_unlock(&dma_lock);
	return n;
}

const char *kshim_dma_last_violation(void)
{
	return dma_last_violation;
}

unsigned int kshim_dma_mappings(void)
{
	unsigned int n;

	pthread_mutex_lock(&dma_lock);
	n = nmaps;
	pthread_mutex_unlock(&dma_lock);
	return n;
}

void *dma_alloc_coherent(struct device *dev, size_t size, dma_addr_t *ret_bus,
			 gfp_t gfp)
{
	size_t len = (size + PAGE_SIZE - 1) & PAGE_MASK;
	void *p = aligned_alloc(PAGE_SIZE, len);

	(void)dev;
	(void)gfp;
	if (!p)
		return NULL;
	memset(p, 0, len);
	kshim_map_add((uintptr_t)p, size, p);
	*ret_bus = (uintptr_t)p;
	return p;
}

void dma_free_coherent(struct device *dev, size_t size, void *cpu,
		       dma_addr_t bus)
{
	(void)dev;
	(void)size;
	(void)bus;
	kshim_map_del(cpu);
	free(cpu);
}

/* --- scatterlists ----------------------------------------------------------------------- */

struct scatterlist *sg_next(struct scatterlist *sg)
{
	/* offset holds bit 31 for the last entry of a table */
	return (sg->offset & 0x80000000u) ? NULL : sg + 1;
}

int sg_alloc_table(struct sg_table *t, unsigned int n, gfp_t gfp)
{
	(void)gfp;
	t->sgl = calloc(n ? n : 1, sizeof(*t->sgl));
	if (!t->sgl)
		return -ENOMEM;
	if (n)
		t->sgl[n - 1].offset = 0x80000000u;
	t->nents = n;
	t->orig_nents = n;
	return 0;
}

void sg_free_table(struct sg_table *t)
{
	free(t->sgl);
	t->sgl = NULL;
	t->nents = t->orig_nents = 0;
}

int sg_alloc_table_from_pages(struct sg_table *t, struct page **pages,
			      unsigned int n, unsigned int offset,
			      unsigned long size, gfp_t gfp)
{
	unsigned int i, segs = 0, s = 0;
	unsigned long left = size;

	for (i = 0; i < n; i++)
		if (!i || (uintptr_t)pages[i] != (uintptr_t)pages[i - 1] + PAGE_SIZE)
			segs++;
	if (sg_alloc_table(t, segs, gfp))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned long start = (uintptr_t)pages[i] + (i ? 0 : offset);
		unsigned long len = PAGE_SIZE - (i ? 0 : offset);

		if (len > left)
			len = left;
		if (i && (uintptr_t)pages[i] == (uintptr_t)pages[i - 1] + PAGE_SIZE) {
			t->sgl[s - 1].length += (unsigned int)len;
		} else {
			t->sgl[s].page_link = start;
			t->sgl[s].length = (unsigned int)len;
			s++;
		}
		left -= len;
	}
	return 0;
}

/*
 * Bounce buffers (kshim_dma_bounce): what swiotlb does behind every
 * streaming mapping under swiotlb=force, in SEV/TDX guests or for a 32-bit
 * mask.  The device sees a copy; map copies the memory into it, unmap
 * copies it back (both directions), a sync for the device copies CPU
 * memory into it for TO_DEVICE and BIDIRECTIONAL, a sync for the CPU
 * copies it back for FROM_DEVICE and BIDIRECTIONAL, byte for byte over
 * the range synced: a sync wider than the transfer, or in the wrong
 * direction, copies stale bytes over the CPU's.
 */
struct kshim_bounce {
	u64 bus, len;
	void *orig;
	void *mem;			/* what aligned_alloc gave */
	const void *tag;
};

static bool dma_bounce;
static struct kshim_bounce *bounces;
static unsigned int nbounces, bounces_cap;
static u64 dma_syncs;

void kshim_dma_bounce(bool on)
{
	pthread_mutex_lock(&dma_lock);
	dma_bounce = on;
	pthread_mutex_unlock(&dma_lock);
}

u64 kshim_dma_syncs(void)
{
	u64 n;

	pthread_mutex_lock(&dma_lock);
	n = dma_syncs;
	pthread_mutex_unlock(&dma_lock);
	return n;
}

/* The bounce buffer that holds [bus, bus + len), or NULL; dma_lock held. */
static struct kshim_bounce *kshim_bounce_find(u64 bus, u64 len)
{
	unsigned int i;

	for (i = 0; i < nbounces; i++)
		if (bus >= bounces[i].bus && len <= bounces[i].len &&
		    bus - bounces[i].bus <= bounces[i].len - len)
			return &bounces[i];
	return NULL;
}

static void kshim_bounce_copy(struct kshim_bounce *b, u64 bus, u64 len,
			      bool to_cpu)
{
	u8 *orig = (u8 *)b->orig + (bus - b->bus);
	u8 *dev = (u8 *)(uintptr_t)bus;

	if (to_cpu)
		memcpy(orig, dev, len);
	else
		memcpy(dev, orig, len);
}

int dma_map_sgtable(struct device *dev, struct sg_table *t,
		    enum dma_data_direction dir, unsigned long attrs)
{
	struct scatterlist *sg;
	unsigned int i;

	(void)dev;
	(void)dir;
	(void)attrs;
	for_each_sgtable_sg(t, sg, i) {
		sg->dma_address = sg->page_link;
		sg->dma_length = sg->length;
		pthread_mutex_lock(&dma_lock);
		if (dma_bounce) {
			/* Same offset in the page: the engine's alignment holds. */
			u64 phase = sg->page_link & ~PAGE_MASK;
			size_t n = (phase + sg->length + PAGE_SIZE - 1) & PAGE_MASK;
			struct kshim_bounce *b;
			u8 *mem = aligned_alloc(PAGE_SIZE, n);

			if (nbounces == bounces_cap) {
				bounces_cap = bounces_cap ? 2 * bounces_cap : 64;
				bounces = realloc(bounces, bounces_cap * sizeof(*bounces));
			}
			if (!mem || !bounces)
				abort();
			b = &bounces[nbounces++];
			*b = (struct kshim_bounce){
				(uintptr_t)(mem + phase), sg->length,
				(void *)(uintptr_t)sg->page_link, mem, t,
			};
			sg->dma_address = b->bus;
			kshim_bounce_copy(b, b->bus, b->len, false);
		}
		pthread_mutex_unlock(&dma_lock);
		kshim_map_add(sg->dma_address, sg->dma_length, t);
	}
	t->nents = t->orig_nents;
	return 0;
}

void dma_unmap_sgtable(struct device *dev, struct sg_table *t,
		       enum dma_data_direction dir, unsigned long attrs)
{
	unsigned int i;

	(void)dev;
	(void)attrs;
	kshim_map_del(t);
	pthread_mutex_lock(&dma_lock);
	for (i = 0; i < nbounces;) {
		if (bounces[i].tag != t) {
			i++;
			continue;
		}
		if (dir != DMA_TO_DEVICE)
			kshim_bounce_copy(&bounces[i], bounces[i].bus,
					  bounces[i].len, true);
		free(bounces[i].mem);
		bounces[i] = bounces[--nbounces];
	}
	pthread_mutex_unlock(&dma_lock);
}

bool dma_need_sync(struct device *dev, dma_addr_t bus)
{
	bool need;

	(void)dev;
	pthread_mutex_lock(&dma_lock);
	need = kshim_bounce_find(bus, 1) != NULL;
	pthread_mutex_unlock(&dma_lock);
	return need;
}

static void kshim_dma_sync(dma_addr_t bus, size_t len,
			   enum dma_data_direction dir, bool to_cpu)
{
	struct kshim_bounce *b;
	unsigned int i;

	pthread_mutex_lock(&dma_lock);
	dma_syncs++;
	for (i = 0; i < nmaps; i++)
		if (bus >= maps[i].bus && len <= maps[i].len &&
		    bus - maps[i].bus <= maps[i].len - len)
			break;
	if (i == nmaps) {
		dma_violations++;
		snprintf(dma_last_violation, sizeof(dma_last_violation),
			 "sync of %zu bytes at %#llx: not mapped", len,
			 (unsigned long long)bus);
	}
	b = kshim_bounce_find(bus, len);
	if (b && (dir == DMA_BIDIRECTIONAL ||
		  dir == (to_cpu ? DMA_FROM_DEVICE : DMA_TO_DEVICE)))
		kshim_bounce_copy(b, bus, len, to_cpu);
	pthread_mutex_unlock(&dma_lock);
}

void dma_sync_single_for_cpu(struct device *dev, dma_addr_t bus, size_t len,
			     enum dma_data_direction dir)
{
	(void)dev;
	kshim_dma_sync(bus, len, dir, true);
}

void dma_sync_single_for_device(struct device *dev, dma_addr_t bus,
				size_t len, enum dma_data_direction dir)
{
	(void)dev;
	kshim_dma_sync(bus, len, dir, false);
}

void dma_sync_sgtable_for_cpu(struct device *dev, struct sg_table *t,
			      enum dma_data_direction dir)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(t, sg, i)
		dma_sync_single_for_cpu(dev, sg_dma_address(sg), sg_dma_len(sg), dir);
}

void dma_sync_sgtable_for_device(struct device *dev, struct sg_table *t,
				 enum dma_data_direction dir)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(t, sg, i)
		dma_sync_single_for_device(dev, sg_dma_address(sg), sg_dma_len(sg), dir);
}

/* --- devices, classes, character devices, sysfs -------------------------------------------- */

void device_initialize(struct device *dev)
{
	atomic_store(&dev->refs, 1);
}

int dev_set_name(struct device *dev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dev->name, sizeof(dev->name), fmt, ap);
	va_end(ap);
	return 0;
}

struct device *get_device(struct device *dev)
{
	if (dev)
		atomic_fetch_add(&dev->refs, 1);
	return dev;
}

void put_device(struct device *dev)
{
	if (dev && atomic_fetch_sub(&dev->refs, 1) == 1 && dev->release)
		dev->release(dev);
}

int sysfs_emit(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PAGE_SIZE, fmt, ap);
	va_end(ap);
	return n;
}

struct class *class_create(const char *name)
{
	struct class *c = calloc(1, sizeof(*c));

	if (!c)
		return ERR_PTR(-ENOMEM);
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

void class_destroy(struct class *cls)
{
	free(cls);
}

int alloc_chrdev_region(dev_t *dev, unsigned int first, unsigned int count,
			const char *name)
{
	(void)count;
	(void)name;
	*dev = MKDEV(240, first);
	return 0;
}

void unregister_chrdev_region(dev_t dev, unsigned int count)
{
	(void)dev;
	(void)count;
}

int ida_alloc_max(struct ida *ida, unsigned int max, gfp_t gfp)
{
	unsigned int i;

	(void)gfp;
	for (i = 0; i <= max && i < 64; i++) {
		if (!(ida->used & (1ULL << i))) {
			ida->used |= 1ULL << i;
			return (int)i;
		}
	}
	return -ENOSPC;
}

void ida_free(struct ida *ida, unsigned int id)
{
	ida->used &= ~(1ULL << id);
}

#define MAX_CDEVS	8

static pthread_mutex_t cdev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cdev *cdevs[MAX_CDEVS];

void cdev_init(struct cdev *cdev, const struct file_operations *fops)
{
	memset(cdev, 0, sizeof(*cdev));
	cdev->ops = fops;
}

int cdev_device_add(struct cdev *cdev, struct device *dev)
{
	unsigned int i;

	pthread_mutex_lock(&cdev_lock);
	for (i = 0; i < MAX_CDEVS && cdevs[i]; i++)
		;
	if (i == MAX_CDEVS) {
		pthread_mutex_unlock(&cdev_lock);
		return -ENOSPC;
	}
	cdev->dev = dev;
	cdevs[i] = cdev;
	pthread_mutex_unlock(&cdev_lock);
	return 0;
}

void cdev_device_del(struct cdev *cdev, struct device *dev)
{
	unsigned int i;

	(void)dev;
	pthread_mutex_lock(&cdev_lock);
	for (i = 0; i < MAX_CDEVS; i++)
		if (cdevs[i] == cdev)
			cdevs[i] = NULL;
	pthread_mutex_unlock(&cdev_lock);
}

static struct cdev *kshim_cdev_get(const char *name)
{
	struct cdev *c = NULL;
	unsigned int i;

	pthread_mutex_lock(&cdev_lock);
	for (i = 0; i < MAX_CDEVS && !c; i++)
		if (cdevs[i] && !strcmp(cdevs[i]->dev->name, name))
			c = cdevs[i];
	pthread_mutex_unlock(&cdev_lock);
	return c;
}

bool kshim_cdev_exists(const char *name)
{
	return kshim_cdev_get(name) != NULL;
}

struct kshim_file {
	struct inode inode;
	struct file file;
	const struct file_operations *fops;
};

int kshim_open(const char *name, struct kshim_file **ret_file)
{
	struct cdev *c = kshim_cdev_get(name);
	struct kshim_file *f;
	int ret;

	if (!c)
		return -ENOENT;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->inode.i_cdev = c;
	f->fops = c->ops;
	ret = f->fops->open(&f->inode, &f->file);
	if (ret) {
		free(f);
		return ret;
	}
	*ret_file = f;
	return 0;
}

long kshim_ioctl(struct kshim_file *f, unsigned int cmd, void *arg)
{
	return f->fops->unlocked_ioctl(&f->file, cmd, (unsigned long)arg);
}

ssize_t kshim_read(struct kshim_file *f, void *buf, size_t n, bool nonblock)
{
	loff_t pos = 0;

	f->file.f_flags = nonblock ? O_NONBLOCK : 0;
	return f->fops->read(&f->file, buf, n, &pos);
}

__poll_t kshim_poll(struct kshim_file *f)
{
	return f->fops->poll(&f->file, NULL);
}

void kshim_close(struct kshim_file *f)
{
	if (!f)
		return;
	f->fops->release(&f->inode, &f->file);
	free(f);
}

static bool kshim_admin = true;
static struct mm_struct kshim_mm;
static struct task_struct kshim_task = { &kshim_mm };
struct task_struct *current = &kshim_task;
static unsigned long kshim_memlock = ULONG_MAX;	/* pages */

void kshim_set_admin(bool admin)
{
	kshim_admin = admin;
}

bool capable(int cap)
{
	return (cap == CAP_SYS_ADMIN || cap == CAP_IPC_LOCK) && kshim_admin;
}

void kshim_set_memlock(unsigned long bytes)
{
	kshim_memlock = bytes / PAGE_SIZE;
}

long kshim_locked_vm(void)
{
	return __atomic_load_n(&kshim_mm.locked_vm, __ATOMIC_SEQ_CST);
}

/* mm/util.c's: RLIMIT_MEMLOCK binds unless CAP_IPC_LOCK. */
int account_locked_vm(struct mm_struct *mm, unsigned long pages, bool inc)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (!inc)
		mm->locked_vm -= (long)pages;
	else if (!capable(CAP_IPC_LOCK) &&
		 (unsigned long)mm->locked_vm + pages > kshim_memlock)
		ret = -ENOMEM;
	else
		mm->locked_vm += (long)pages;
	pthread_mutex_unlock(&lock);
	return ret;
}

long compat_ptr_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	(void)f;
	(void)cmd;
	(void)arg;
	return -ENOTTY;
}

long long kshim_sysfs(const char *name, const char *attr)
{
	struct cdev *c = kshim_cdev_get(name);
	const struct attribute_group **g;
	char buf[PAGE_SIZE];
	unsigned int i;

	if (!c)
		return -1;
	for (g = c->dev->groups; g && *g; g++) {
		for (i = 0; (*g)->attrs[i]; i++) {
			struct device_attribute *da =
				container_of((*g)->attrs[i],
					     struct device_attribute, attr);

			if (strcmp(da->attr.name, attr))
				continue;
			if (da->show(c->dev, da, buf) < 0)
				return -1;
			return strtoll(buf, NULL, 0);
		}
	}
	return -1;
}

/* --- module parameters ------------------------------------------------------------------ */

#define MAX_PARAMS	32

static const struct kshim_param *params[MAX_PARAMS];
static unsigned int nparams;

void kshim_param_register(const struct kshim_param *p)
{
	if (nparams == MAX_PARAMS)
		abort();
	params[nparams++] = p;
}

int kshim_param_set(const char *name, const char *value)
{
	unsigned int i;
	char *end;

	for (i = 0; i < nparams; i++) {
		const struct kshim_param *p = params[i];

		if (strcmp(p->name, name))
			continue;
		switch (p->type) {
		case KP_UINT:
			*(unsigned int *)p->var = (unsigned int)strtoul(value, &end, 0);
			return *end ? -EINVAL : 0;
		case KP_BOOL:
			*(bool *)p->var = !strcmp(value, "1") || !strcmp(value, "Y") ||
					  !strcmp(value, "y");
			return 0;
		case KP_ULLONG:
			*(unsigned long long *)p->var = strtoull(value, &end, 0);
			return *end ? -EINVAL : 0;
		case KP_USHORT_ARRAY: {
			unsigned short *a = p->var;
			const char *s = value;
			unsigned int n = 0;

			while (*s && n < p->max) {
				a[n++] = (unsigned short)strtoul(s, &end, 0);
				if (*end != ',' && *end)
					return -EINVAL;
				s = *end ? end + 1 : end;
			}
			*p->count = (int)n;
			return 0;
		}
		}
	}
	return -ENOENT;
}

/* --- work queues -------------------------------------------------------------------------- */

struct workqueue_struct {
	pthread_cond_t cond;
	unsigned int active;
};

struct kshim_work_run {
	struct workqueue_struct *wq;
	struct work_struct *work;
};

static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER;

struct workqueue_struct *alloc_workqueue(const char *fmt, unsigned int flags,
					 int max_active, ...)
{
	struct workqueue_struct *wq = calloc(1, sizeof(*wq));

	(void)fmt;
	(void)flags;
	(void)max_active;
	if (wq)
		pthread_cond_init(&wq->cond, NULL);
	return wq;
}

static void *kshim_work_thread(void *arg)
{
	struct kshim_work_run *r = arg;
	struct workqueue_struct *wq = r->wq;
	struct work_struct *work = r->work;

	free(r);
	pthread_mutex_lock(&wq_lock);
	do {
		work->pending = false;
		pthread_mutex_unlock(&wq_lock);
		work->func(work);
		pthread_mutex_lock(&wq_lock);
	} while (work->pending);
	work->running = false;
	wq->active--;
	pthread_cond_broadcast(&wq->cond);
	pthread_mutex_unlock(&wq_lock);
	return NULL;
}

bool queue_work(struct workqueue_struct *wq, struct work_struct *work)
{
	struct kshim_work_run *r;
	pthread_attr_t attr;
	pthread_t t;

	pthread_mutex_lock(&wq_lock);
	if (work->pending) {
		pthread_mutex_unlock(&wq_lock);
		return false;
	}
	work->pending = true;
	if (!work->running) {
		r = malloc(sizeof(*r));
		if (!r)
			abort();
		r->wq = wq;
		r->work = work;
		work->running = true;
		wq->active++;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, kshim_work_thread, r))
			abort();
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&wq_lock);
	return true;
}

void flush_workqueue(struct workqueue_struct *wq)
{
	pthread_mutex_lock(&wq_lock);
	while (wq->active)
		pthread_cond_wait(&wq->cond, &wq_lock);
	pthread_mutex_unlock(&wq_lock);
}

void destroy_workqueue(struct workqueue_struct *wq)
{
	flush_workqueue(wq);
	pthread_cond_destroy(&wq->cond);
	free(wq);
}

/* --- xarray ------------------------------------------------------------------------------ */

void xa_init_flags(struct xarray *xa, unsigned int flags)
{
	pthread_mutex_init(&xa->lock, NULL);
	xa->flags = flags;
	xa->slots = NULL;
	xa->n = 0;
}

int xa_alloc(struct xarray *xa, u32 *id, void *entry, struct xa_limit lim,
	     gfp_t gfp)
{
	unsigned long i = lim.min;

	(void)gfp;
	if (xa->flags == XA_FLAGS_ALLOC1 && i < 1)
		i = 1;
	pthread_mutex_lock(&xa->lock);
	for (; i < xa->n && xa->slots[i]; i++)
		;
	if (i > lim.max) {
		pthread_mutex_unlock(&xa->lock);
		return -EBUSY;
	}
	if (i >= xa->n) {
		unsigned long n = xa->n ? 2 * xa->n : 16;
		void **s;

		while (n <= i)
			n *= 2;
		s = realloc(xa->slots, n * sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&xa->lock);
			return -ENOMEM;
		}
		memset(s + xa->n, 0, (n - xa->n) * sizeof(*s));
		xa->slots = s;
		xa->n = n;
	}
	xa->slots[i] = entry;
	*id = (u32)i;
	pthread_mutex_unlock(&xa->lock);
	return 0;
}

void *xa_load(struct xarray *xa, unsigned long index)
{
	void *e = NULL;

	pthread_mutex_lock(&xa->lock);
	if (index < xa->n)
		e = xa->slots[index];
	pthread_mutex_unlock(&xa->lock);
	return e;
}

void *xa_erase(struct xarray *xa, unsigned long index)
{
	void *e = NULL;

	pthread_mutex_lock(&xa->lock);
	if (index < xa->n) {
		e = xa->slots[index];
		xa->slots[index] = NULL;
	}
	pthread_mutex_unlock(&xa->lock);
	return e;
}

void *xa_find(struct xarray *xa, unsigned long *index)
{
	void *e = NULL;

	pthread_mutex_lock(&xa->lock);
	for (; *index < xa->n && !e; (*index)++)
		e = xa->slots[*index];
	if (e)
		(*index)--;
	pthread_mutex_unlock(&xa->lock);
	return e;
}

void xa_destroy(struct xarray *xa)
{
	free(xa->slots);
	xa->slots = NULL;
	xa->n = 0;
	pthread_mutex_destroy(&xa->lock);
}

/* --- PCI devices ------------------------------------------------------------------------------ */

#define MAX_PCI		32
#define IRQ_MSIX_BASE	100
#define IRQ_MSI		200
#define IRQ_INTX	11
#define ACS_POS		0x100

struct kshim_pci {
	struct pci_dev pdev;
	struct pci_bus bus;		/* the bus it sits on */
	struct pci_bus sub;		/* bridges: the bus below */
	struct kshim_pci_config cfg;
	bool is_card;
	struct xm *xm;
	u8 config[4096];
	int probe_ret;
	bool bound;
	unsigned int nvec;
	enum xm_irq_mode irq_mode;
	unsigned int resets;
	void *bar_token[PCI_STD_NUM_BARS];
};

static pthread_mutex_t pci_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kshim_pci *pcis[MAX_PCI];
static struct pci_driver *driver;
static struct pci_device_id dynids[16];
static unsigned int ndynids;
static int p2pdma_distance = -1;
static struct pci_bus root_buses[4];	/* bus 0 of each domain */
static unsigned int next_bus[4];	/* bus numbers given to bridges */

static u16 cfg16(const struct kshim_pci *ks, int where)
{
	return (u16)(ks->config[where] | ks->config[where + 1] << 8);
}

static void set16(struct kshim_pci *ks, int where, u16 v)
{
	ks->config[where] = (u8)v;
	ks->config[where + 1] = (u8)(v >> 8);
}

void kshim_pci_defaults(struct kshim_pci_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->xm.n_h2c = 1;
	cfg->xm.n_c2h = 1;
	cfg->xm.align[0] = cfg->xm.align[1] = 0x00010140; /* 1, 1, 64 bits */
	cfg->xm.card_size = 1u << 20;
	cfg->vendor = PCI_VENDOR_ID_XILINX;
	cfg->device = 0x9038;
	cfg->dma_bar = 1;
	cfg->irq_modes = PCI_IRQ_MSIX | PCI_IRQ_MSI | PCI_IRQ_INTX;
	cfg->msix_vectors = 32;
	cfg->intx_pin = 1;
	cfg->link_gen = 2;
	cfg->link_width = 4;
}

static int kshim_model_dma(void *ctx, uint64_t bus, void *buf, size_t len,
			   bool to_host)
{
	struct kshim_pci *ks = ctx;

	if (!(cfg16(ks, PCI_COMMAND) & PCI_COMMAND_MASTER))
		return -EIO;	/* no bus mastering: nothing leaves the card */
	return kshim_dma_access(bus, buf, len, to_host);
}

static void kshim_model_irq(void *ctx, enum xm_irq_mode mode, unsigned int vec);

static bool kshim_id_match(const struct pci_device_id *id, const struct pci_dev *p)
{
	return (id->vendor == PCI_ANY_ID || id->vendor == p->vendor) &&
	       (id->device == PCI_ANY_ID || id->device == p->device);
}

/* Bind @ks to the driver if an id matches.  pci_lock not held. */
static void kshim_bind(struct kshim_pci *ks)
{
	const struct pci_device_id *id = NULL;
	unsigned int i;

	if (!driver || ks->bound || !ks->is_card)
		return;
	for (i = 0; driver->id_table[i].vendor && !id; i++)
		if (kshim_id_match(&driver->id_table[i], &ks->pdev))
			id = &driver->id_table[i];
	for (i = 0; i < ndynids && !id; i++)
		if (kshim_id_match(&dynids[i], &ks->pdev))
			id = &dynids[i];
	if (!id)
		return;
	ks->pdev.driver = driver;
	ks->probe_ret = driver->probe(&ks->pdev, id);
	ks->bound = !ks->probe_ret;
	if (!ks->bound)
		ks->pdev.driver = NULL;
}

static void kshim_unbind(struct kshim_pci *ks)
{
	if (!ks->bound)
		return;
	driver->remove(&ks->pdev);
	ks->bound = false;
	ks->pdev.driver = NULL;
}

static void kshim_pci_register(struct kshim_pci *ks)
{
	unsigned int i;

	pthread_mutex_lock(&pci_lock);
	for (i = 0; i < MAX_PCI && pcis[i]; i++)
		;
	if (i == MAX_PCI)
		abort();
	pcis[i] = ks;
	pthread_mutex_unlock(&pci_lock);
}

static void kshim_pci_unregister(struct kshim_pci *ks)
{
	unsigned int i;

	pthread_mutex_lock(&pci_lock);
	for (i = 0; i < MAX_PCI; i++)
		if (pcis[i] == ks)
			pcis[i] = NULL;
	pthread_mutex_unlock(&pci_lock);
}

static void kshim_pci_place(struct kshim_pci *ks, struct pci_bus *bus)
{
	ks->pdev.bus = bus;
	ks->sub.domain = bus->domain;
	ks->sub.parent = bus;
	ks->sub.self = &ks->pdev;
	ks->sub.host = bus->host;
	snprintf(ks->pdev.dev.name, sizeof(ks->pdev.dev.name),
		 "%04x:%02x:%02x.%u", bus->domain, bus->number,
		 PCI_SLOT(ks->pdev.devfn), PCI_FUNC(ks->pdev.devfn));
}

/* A function on @parent's secondary bus, or on bus 0 of @domain. */
static struct kshim_pci *kshim_pci_new(int domain, unsigned int devfn,
				       int pcie_type, struct pci_dev *parent)
{
	struct kshim_pci *ks = calloc(1, sizeof(*ks));
	struct pci_bus *bus;

	if (!ks)
		abort();
	if (parent) {
		bus = &parent->ks->sub;
	} else {
		bus = &root_buses[domain & 3];
		bus->domain = domain;
		bus->number = 0;
		bus->host = bus;
	}
	ks->pdev.devfn = devfn;
	ks->pdev.pcie_type = pcie_type;
	ks->pdev.ks = ks;
	ks->sub.number = (unsigned char)++next_bus[bus->domain & 3];
	device_initialize(&ks->pdev.dev);
	kshim_pci_place(ks, bus);
	kshim_pci_register(ks);
	return ks;
}

struct kshim_pci *kshim_pci_add(const struct kshim_pci_config *cfg)
{
	struct xm_callbacks cb = { NULL, kshim_model_dma, kshim_model_irq };
	struct kshim_pci *ks;

	ks = kshim_pci_new(0, PCI_DEVFN(1, 0),
			   cfg->link_gen ? PCI_EXP_TYPE_ENDPOINT : -1, NULL);
	ks->is_card = true;
	ks->cfg = *cfg;
	ks->pdev.vendor = cfg->vendor;
	ks->pdev.device = cfg->device;
	ks->pdev.irq = cfg->intx_pin ? IRQ_INTX : 0;
	set16(ks, PCI_VENDOR_ID, cfg->vendor);
	set16(ks, PCI_DEVICE_ID, cfg->device);
	ks->config[PCI_INTERRUPT_PIN] = cfg->intx_pin;
	/* What firmware or a previous MSI user may leave: INTx disabled. */
	set16(ks, PCI_COMMAND, PCI_COMMAND_INTX_DISABLE);
	cb.ctx = ks;
	ks->xm = xm_new(&cfg->xm, &cb);
	kshim_bind(ks);
	return ks;
}

int kshim_pci_probe_result(const struct kshim_pci *ks)
{
	return ks->probe_ret;
}

void kshim_pci_remove(struct kshim_pci *ks)
{
	if (!ks)
		return;
	kshim_unbind(ks);
	kshim_pci_unregister(ks);
	xm_free(ks->xm);
	ks->xm = NULL;
	pci_dev_put(&ks->pdev);
}

struct xm *kshim_pci_model(struct kshim_pci *ks)
{
	return ks->xm;
}

struct pci_dev *kshim_pci_dev(struct kshim_pci *ks)
{
	return &ks->pdev;
}

bool kshim_pci_master(const struct kshim_pci *ks)
{
	return cfg16(ks, PCI_COMMAND) & PCI_COMMAND_MASTER;
}

unsigned int kshim_pci_resets(const struct kshim_pci *ks)
{
	return ks->resets;
}

u16 kshim_pci_command(const struct kshim_pci *ks)
{
	return cfg16(ks, PCI_COMMAND);
}

struct pci_dev *kshim_bridge_add(struct pci_dev *parent, int domain,
				 unsigned int devfn, int pcie_type,
				 u16 acs_cap, u16 acs_ctrl)
{
	struct kshim_pci *ks = kshim_pci_new(domain, devfn, pcie_type, parent);

	if (acs_cap) {
		ks->config[ACS_POS] = PCI_EXT_CAP_ID_ACS;
		set16(ks, ACS_POS + PCI_ACS_CAP, acs_cap);
		set16(ks, ACS_POS + PCI_ACS_CTRL, acs_ctrl);
	}
	return &ks->pdev;
}

struct pci_dev *kshim_endpoint_add(struct pci_dev *parent, int domain,
				   unsigned int devfn)
{
	return &kshim_pci_new(domain, devfn, PCI_EXP_TYPE_ENDPOINT,
			      parent)->pdev;
}

void kshim_pci_set_parent(struct kshim_pci *ks, struct pci_dev *parent)
{
	kshim_pci_place(ks, &parent->ks->sub);
}

void kshim_set_acs(struct pci_dev *dev, u16 acs_cap, u16 acs_ctrl)
{
	struct kshim_pci *ks = dev->ks;

	ks->config[ACS_POS] = acs_cap ? PCI_EXT_CAP_ID_ACS : 0;
	set16(ks, ACS_POS + PCI_ACS_CAP, acs_cap);
	set16(ks, ACS_POS + PCI_ACS_CTRL, acs_ctrl);
}

void kshim_topology_clear(void)
{
	unsigned int i;

	pthread_mutex_lock(&pci_lock);
	for (i = 0; i < MAX_PCI; i++) {
		if (pcis[i] && !pcis[i]->is_card) {
			free(pcis[i]);
			pcis[i] = NULL;
		}
	}
	for (i = 0; i < MAX_PCI; i++)
		if (pcis[i])
			kshim_pci_place(pcis[i], &root_buses[0]);
	memset(next_bus, 0, sizeof(next_bus));
	pthread_mutex_unlock(&pci_lock);
	p2pdma_distance = -1;
}

void kshim_set_p2pdma_distance(int distance)
{
	p2pdma_distance = distance;
}

int pci_register_driver(struct pci_driver *drv)
{
	unsigned int i;

	driver = drv;
	for (i = 0; i < MAX_PCI; i++)
		if (pcis[i])
			kshim_bind(pcis[i]);
	return 0;
}

void pci_unregister_driver(struct pci_driver *drv)
{
	unsigned int i;

	(void)drv;
	for (i = 0; i < MAX_PCI; i++)
		if (pcis[i])
			kshim_unbind(pcis[i]);
	driver = NULL;
	ndynids = 0;
}

int pci_add_dynid(struct pci_driver *drv, unsigned int vendor,
		  unsigned int device, unsigned int subvendor,
		  unsigned int subdevice, unsigned int class,
		  unsigned int class_mask, unsigned long driver_data)
{
	unsigned int i;

	if (ndynids == ARRAY_SIZE(dynids))
		return -ENOSPC;
	dynids[ndynids] = (struct pci_device_id){ vendor, device, subvendor,
						  subdevice, class, class_mask,
						  driver_data };
	ndynids++;
	for (i = 0; i < MAX_PCI; i++)
		if (pcis[i] && drv == driver)
			kshim_bind(pcis[i]);
	return 0;
}

struct pci_dev *pci_dev_get(struct pci_dev *p)
{
	if (p)
		get_device(&p->dev);
	return p;
}

/* The last reference frees the device (the bus holds the first). */
void pci_dev_put(struct pci_dev *p)
{
	if (p && atomic_fetch_sub(&p->dev.refs, 1) == 1)
		free(p->ks);
}

struct pci_dev *pci_upstream_bridge(struct pci_dev *p)
{
	return p->bus ? p->bus->self : NULL;
}

struct pci_dev *pci_get_domain_bus_and_slot(int domain, unsigned int bus,
					    unsigned int devfn)
{
	struct pci_dev *p = NULL;
	unsigned int i;

	pthread_mutex_lock(&pci_lock);
	for (i = 0; i < MAX_PCI && !p; i++) {
		struct kshim_pci *ks = pcis[i];

		if (ks && ks->pdev.bus->domain == domain &&
		    ks->pdev.bus->number == bus && ks->pdev.devfn == devfn)
			p = pci_dev_get(&ks->pdev);
	}
	pthread_mutex_unlock(&pci_lock);
	return p;
}

struct pci_host_bridge *pci_find_host_bridge(struct pci_bus *bus)
{
	return bus->host;
}

int pci_enable_device(struct pci_dev *p)
{
	set16(p->ks, PCI_COMMAND, cfg16(p->ks, PCI_COMMAND) | PCI_COMMAND_MEMORY);
	return 0;
}

void pci_disable_device(struct pci_dev *p)
{
	set16(p->ks, PCI_COMMAND, cfg16(p->ks, PCI_COMMAND) &
	      (u16)~(PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
}

int pci_request_regions(struct pci_dev *p, const char *name)
{
	(void)p;
	(void)name;
	return 0;
}

void pci_release_regions(struct pci_dev *p)
{
	(void)p;
}

void pci_set_master(struct pci_dev *p)
{
	set16(p->ks, PCI_COMMAND, cfg16(p->ks, PCI_COMMAND) | PCI_COMMAND_MASTER);
}

void pci_clear_master(struct pci_dev *p)
{
	set16(p->ks, PCI_COMMAND, cfg16(p->ks, PCI_COMMAND) &
	      (u16)~PCI_COMMAND_MASTER);
}

void pci_intx(struct pci_dev *p, int enable)
{
	u16 cmd = cfg16(p->ks, PCI_COMMAND);

	set16(p->ks, PCI_COMMAND, enable ? cmd & (u16)~PCI_COMMAND_INTX_DISABLE :
					   cmd | PCI_COMMAND_INTX_DISABLE);
}

unsigned long pci_resource_flags(struct pci_dev *p, int bar)
{
	const struct kshim_pci *ks = p->ks;

	if (bar == ks->cfg.dma_bar || (bar == 0 && ks->cfg.dma_bar != 0))
		return IORESOURCE_MEM;
	return 0;
}

unsigned long long pci_resource_len(struct pci_dev *p, int bar)
{
	const struct kshim_pci *ks = p->ks;

	if (bar == ks->cfg.dma_bar)
		return XM_BAR_SIZE;
	if (bar == 0 && ks->cfg.dma_bar != 0)
		return 4096;
	return 0;
}

/* MMIO addresses are tokens: a reserved span per mapped BAR. */
struct kshim_iomap {
	char *base;
	size_t len;
	struct kshim_pci *ks;
	int bar;
};

static pthread_mutex_t iomap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kshim_iomap iomaps[16];

void __iomem *pci_iomap(struct pci_dev *p, int bar, unsigned long maxlen)
{
	size_t len = (size_t)pci_resource_len(p, bar);
	unsigned int i;
	char *base;

	if (!len)
		return NULL;
	if (maxlen && maxlen < len)
		len = maxlen;
	base = malloc(len);
	if (!base)
		return NULL;
	pthread_mutex_lock(&iomap_lock);
	for (i = 0; i < ARRAY_SIZE(iomaps) && iomaps[i].base; i++)
		;
	if (i == ARRAY_SIZE(iomaps))
		abort();
	iomaps[i] = (struct kshim_iomap){ base, len, p->ks, bar };
	pthread_mutex_unlock(&iomap_lock);
	return base;
}

void pci_iounmap(struct pci_dev *p, void __iomem *addr)
{
	unsigned int i;

	(void)p;
	pthread_mutex_lock(&iomap_lock);
	for (i = 0; i < ARRAY_SIZE(iomaps); i++)
		if (iomaps[i].base == addr)
			memset(&iomaps[i], 0, sizeof(iomaps[i]));
	pthread_mutex_unlock(&iomap_lock);
	free((void *)addr);
}

static struct kshim_iomap kshim_iomap_of(const volatile void *addr, u32 *ret_off)
{
	struct kshim_iomap m = { 0 };
	const char *a = (const char *)addr;
	unsigned int i;

	pthread_mutex_lock(&iomap_lock);
	for (i = 0; i < ARRAY_SIZE(iomaps); i++) {
		if (iomaps[i].base && a >= iomaps[i].base &&
		    a < iomaps[i].base + iomaps[i].len) {
			m = iomaps[i];
			*ret_off = (u32)(a - iomaps[i].base);
		}
	}
	pthread_mutex_unlock(&iomap_lock);
	if (!m.base) {
		fprintf(stderr, "kshim: MMIO at %p outside any mapped BAR\n",
			(const void *)addr);
		abort();
	}
	return m;
}

u32 kshim_mmio_read32(const volatile void __iomem *addr)
{
	u32 off = 0;
	struct kshim_iomap m = kshim_iomap_of(addr, &off);

	if (m.bar != m.ks->cfg.dma_bar)
		return 0;
	return xm_mmio_read(m.ks->xm, off);
}

void kshim_mmio_write32(u32 val, volatile void __iomem *addr)
{
	u32 off = 0;
	struct kshim_iomap m = kshim_iomap_of(addr, &off);

	if (m.bar == m.ks->cfg.dma_bar)
		xm_mmio_write(m.ks->xm, off, val);
}

int pci_alloc_irq_vectors(struct pci_dev *p, unsigned int min,
			  unsigned int max, unsigned int flags)
{
	struct kshim_pci *ks = p->ks;
	unsigned int offered = ks->cfg.irq_modes;

	if ((flags & PCI_IRQ_MSIX) && (offered & PCI_IRQ_MSIX)) {
		unsigned int n = max < ks->cfg.msix_vectors ? max :
				 ks->cfg.msix_vectors;

		if (n >= min) {
			ks->nvec = n;
			ks->irq_mode = XM_IRQ_MSIX;
			p->msix_enabled = true;
			xm_set_irq_mode(ks->xm, XM_IRQ_MSIX);
			return (int)n;
		}
	}
	if ((flags & PCI_IRQ_MSI) && (offered & PCI_IRQ_MSI) && min <= 1) {
		ks->nvec = 1;
		ks->irq_mode = XM_IRQ_MSI;
		p->msi_enabled = true;
		xm_set_irq_mode(ks->xm, XM_IRQ_MSI);
		return 1;
	}
	if ((flags & PCI_IRQ_INTX) && (offered & PCI_IRQ_INTX) &&
	    min <= 1 && p->irq) {
		ks->nvec = 1;
		ks->irq_mode = XM_IRQ_INTX;
		pci_intx(p, 1);		/* as the kernel's fallback does */
		xm_set_irq_mode(ks->xm, XM_IRQ_INTX);
		return 1;
	}
	return -ENOSPC;
}

void pci_free_irq_vectors(struct pci_dev *p)
{
	struct kshim_pci *ks = p->ks;

	ks->nvec = 0;
	ks->irq_mode = XM_IRQ_NONE;
	p->msi_enabled = p->msix_enabled = false;
	xm_set_irq_mode(ks->xm, XM_IRQ_NONE);
}

int pci_irq_vector(struct pci_dev *p, unsigned int nr)
{
	struct kshim_pci *ks = p->ks;

	if (nr >= ks->nvec)
		return -EINVAL;
	switch (ks->irq_mode) {
	case XM_IRQ_MSIX:
		return IRQ_MSIX_BASE + (int)nr;
	case XM_IRQ_MSI:
		return IRQ_MSI;
	case XM_IRQ_INTX:
		return (int)p->irq;
	default:
		return -EINVAL;
	}
}

int pci_read_config_byte(const struct pci_dev *p, int where, u8 *val)
{
	*val = p->ks->config[where & 4095];
	return 0;
}

int pci_read_config_word(const struct pci_dev *p, int where, u16 *val)
{
	*val = cfg16(p->ks, where & 4094);
	return 0;
}

int pci_read_config_dword(const struct pci_dev *p, int where, u32 *val)
{
	*val = cfg16(p->ks, where & 4092) | (u32)cfg16(p->ks, (where & 4092) + 2) << 16;
	return 0;
}

int pci_write_config_byte(const struct pci_dev *p, int where, u8 val)
{
	p->ks->config[where & 4095] = val;
	return 0;
}

int pci_write_config_word(const struct pci_dev *p, int where, u16 val)
{
	set16(p->ks, where & 4094, val);
	return 0;
}

int pci_write_config_dword(const struct pci_dev *p, int where, u32 val)
{
	set16(p->ks, where & 4092, (u16)val);
	set16(p->ks, (where & 4092) + 2, (u16)(val >> 16));
	return 0;
}

int pcie_capability_read_word(struct pci_dev *p, int where, u16 *val)
{
	const struct kshim_pci *ks = p->ks;

	*val = 0;
	if (!pci_is_pcie(p))
		return -EINVAL;
	if (where == PCI_EXP_LNKSTA)
		*val = (u16)(ks->cfg.link_gen | ks->cfg.link_width <<
			     PCI_EXP_LNKSTA_NLW_SHIFT);
	return 0;
}

int pci_find_ext_capability(struct pci_dev *p, int cap)
{
	return cap == PCI_EXT_CAP_ID_ACS && p->ks->config[ACS_POS] == cap ?
	       ACS_POS : 0;
}

int pci_reset_function(struct pci_dev *p)
{
	struct kshim_pci *ks = p->ks;

	if (ks->cfg.no_reset || !ks->xm)
		return -ENOTTY;
	/* The PCI core saves and restores config space around it. */
	xm_reset(ks->xm);
	ks->resets++;
	return 0;
}

int pci_try_reset_function(struct pci_dev *p)
{
	return pci_reset_function(p);
}

int pci_p2pdma_distance_many(struct pci_dev *provider, struct device **clients,
			     int num_clients, bool verbose)
{
	(void)provider;
	(void)clients;
	(void)num_clients;
	(void)verbose;
	return p2pdma_distance;
}

/* --- interrupts ------------------------------------------------------------------------------ */

struct kshim_irq {
	unsigned int irq;
	irq_handler_t handler;
	void *dev;
};

static pthread_mutex_t irq_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kshim_irq irqs[64];
static struct kshim_irq_stats irq_st;

int request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
		const char *name, void *dev)
{
	unsigned int i;

	(void)flags;
	(void)name;
	pthread_mutex_lock(&irq_lock);
	for (i = 0; i < ARRAY_SIZE(irqs) && irqs[i].handler; i++)
		;
	if (i == ARRAY_SIZE(irqs)) {
		pthread_mutex_unlock(&irq_lock);
		return -ENOSPC;
	}
	irqs[i] = (struct kshim_irq){ irq, handler, dev };
	pthread_mutex_unlock(&irq_lock);
	return 0;
}

void free_irq(unsigned int irq, void *dev)
{
	unsigned int i;

	pthread_mutex_lock(&irq_lock);
	for (i = 0; i < ARRAY_SIZE(irqs); i++)
		if (irqs[i].handler && irqs[i].irq == irq && irqs[i].dev == dev)
			memset(&irqs[i], 0, sizeof(irqs[i]));
	pthread_mutex_unlock(&irq_lock);
}

void synchronize_irq(unsigned int irq)
{
	(void)irq;
	pthread_mutex_lock(&irq_lock);
	pthread_mutex_unlock(&irq_lock);
}

/* Run every handler on @irq; false when none listens. */
static bool kshim_irq_run(unsigned int irq)
{
	unsigned int i;
	bool any = false;

	pthread_mutex_lock(&irq_lock);
	for (i = 0; i < ARRAY_SIZE(irqs); i++) {
		if (!irqs[i].handler || irqs[i].irq != irq)
			continue;
		any = true;
		kshim_irq_enter();
		if (irqs[i].handler((int)irq, irqs[i].dev) == IRQ_HANDLED)
			irq_st.handled++;
		else
			irq_st.unhandled++;
		kshim_irq_exit();
	}
	if (!any)
		irq_st.misrouted++;
	pthread_mutex_unlock(&irq_lock);
	return any;
}

static void kshim_model_irq(void *ctx, enum xm_irq_mode mode, unsigned int vec)
{
	struct kshim_pci *ks = ctx;

	switch (mode) {
	case XM_IRQ_MSIX:
		if (vec < ks->nvec) {
			kshim_irq_run(IRQ_MSIX_BASE + vec);
			return;
		}
		break;
	case XM_IRQ_MSI:
		if (vec == 0) {
			kshim_irq_run(IRQ_MSI);
			return;
		}
		break;
	case XM_IRQ_INTX:
		/* The pin the function has, and INTx not disabled. */
		if (ks->cfg.intx_pin && vec == ks->cfg.intx_pin - 1u &&
		    !(cfg16(ks, PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE)) {
			kshim_irq_run(ks->pdev.irq);
			return;
		}
		break;
	case XM_IRQ_NONE:
		break;
	}
	pthread_mutex_lock(&irq_lock);
	irq_st.misrouted++;
	pthread_mutex_unlock(&irq_lock);
}

void kshim_irq_stats(struct kshim_irq_stats *ret)
{
	pthread_mutex_lock(&irq_lock);
	*ret = irq_st;
	pthread_mutex_unlock(&irq_lock);
}

int kshim_irq_fire(struct kshim_pci *ks, unsigned int nr)
{
	unsigned int i;
	int irq = pci_irq_vector(&ks->pdev, nr), handled = 0;

	if (irq < 0)
		return irq;
	pthread_mutex_lock(&irq_lock);
	kshim_irq_enter();
	for (i = 0; i < ARRAY_SIZE(irqs); i++)
		if (irqs[i].handler && irqs[i].irq == (unsigned int)irq &&
		    irqs[i].handler(irq, irqs[i].dev) == IRQ_HANDLED)
			handled++;
	kshim_irq_exit();
	pthread_mutex_unlock(&irq_lock);
	return handled;
}

/* --- dma-buf ------------------------------------------------------------------------------------ */

#define DMABUF_FD_BASE	1000
#define MAX_DMABUFS	8
#define DMABUF_SEG	4096u		/* a scattered buffer: one page each */

static pthread_mutex_t dmabuf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dma_buf *dmabufs[MAX_DMABUFS];

int kshim_dmabuf_new(void *mem, size_t size)
{
	struct dma_buf *b = calloc(1, sizeof(*b));
	unsigned int i;

	if (!b)
		abort();
	b->size = size;
	b->mem = mem;
	b->resv = &b->resv_obj;
	pthread_mutex_init(&b->resv_obj.lock, NULL);
	b->resv_obj.dep.name = "dma_resv";
	atomic_store(&b->refs, 1);
	pthread_mutex_lock(&dmabuf_lock);
	for (i = 0; i < MAX_DMABUFS && dmabufs[i]; i++)
		;
	if (i == MAX_DMABUFS)
		abort();
	b->fd = DMABUF_FD_BASE + (int)i;
	dmabufs[i] = b;
	pthread_mutex_unlock(&dmabuf_lock);
	return b->fd;
}

static struct dma_buf *kshim_dmabuf_of(int fd)
{
	struct dma_buf *b = NULL;

	pthread_mutex_lock(&dmabuf_lock);
	if (fd >= DMABUF_FD_BASE && fd < DMABUF_FD_BASE + MAX_DMABUFS)
		b = dmabufs[fd - DMABUF_FD_BASE];
	pthread_mutex_unlock(&dmabuf_lock);
	return b;
}

struct dma_buf *dma_buf_get(int fd)
{
	struct dma_buf *b = kshim_dmabuf_of(fd);

	if (!b)
		return ERR_PTR(-EBADF);
	atomic_fetch_add(&b->refs, 1);
	return b;
}

void dma_buf_put(struct dma_buf *b)
{
	unsigned int i;

	if (atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	pthread_mutex_lock(&dmabuf_lock);
	for (i = 0; i < MAX_DMABUFS; i++)
		if (dmabufs[i] == b)
			dmabufs[i] = NULL;
	pthread_mutex_unlock(&dmabuf_lock);
	pthread_mutex_destroy(&b->resv_obj.lock);
	free(b);
}

void kshim_dmabuf_put(int fd)
{
	struct dma_buf *b = kshim_dmabuf_of(fd);

	if (b)
		dma_buf_put(b);
}

struct dma_buf_attachment *
dma_buf_dynamic_attach(struct dma_buf *b, struct device *dev,
		       const struct dma_buf_attach_ops *ops, void *priv)
{
	struct dma_buf_attachment *a;

	if (b->attach)
		return ERR_PTR(-EBUSY);
	a = calloc(1, sizeof(*a));
	if (!a)
		return ERR_PTR(-ENOMEM);
	a->dmabuf = b;
	a->dev = dev;
	a->importer_ops = ops;
	a->importer_priv = priv;
	b->attach = a;
	return a;
}

void dma_buf_detach(struct dma_buf *b, struct dma_buf_attachment *a)
{
	b->attach = NULL;
	free(a);
}

int dma_buf_pin(struct dma_buf_attachment *a)
{
	a->dmabuf->pinned = true;
	return 0;
}

void dma_buf_unpin(struct dma_buf_attachment *a)
{
	a->dmabuf->pinned = false;
}

struct sg_table *dma_buf_map_attachment(struct dma_buf_attachment *a,
					enum dma_data_direction dir)
{
	struct dma_buf *b = a->dmabuf;
	unsigned int n = (unsigned int)DIV_ROUND_UP(b->size, DMABUF_SEG), i;
	struct sg_table *t = &b->sgt;

	(void)dir;
	if (sg_alloc_table(t, n, GFP_KERNEL))
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < n; i++) {
		size_t off = (size_t)i * DMABUF_SEG;
		size_t len = b->size - off < DMABUF_SEG ? b->size - off : DMABUF_SEG;

		t->sgl[i].dma_address = (uintptr_t)b->mem + off;
		t->sgl[i].dma_length = (unsigned int)len;
		kshim_map_add(t->sgl[i].dma_address, len, b);
	}
	b->mapped = true;
	return t;
}

void dma_buf_unmap_attachment(struct dma_buf_attachment *a,
			      struct sg_table *sgt,
			      enum dma_data_direction dir)
{
	(void)dir;
	kshim_map_del(a->dmabuf);
	sg_free_table(sgt);
	a->dmabuf->mapped = false;
}

void kshim_dmabuf_move(int fd)
{
	struct dma_buf *b = kshim_dmabuf_of(fd);

	if (!b || !b->attach)
		return;
	/* Exporters call move_notify with the reservation held. */
	dma_resv_lock(b->resv, NULL);
	b->attach->importer_ops->move_notify(b->attach);
	/* From here on the old location is not the buffer's any more. */
	kshim_map_del(b);
	dma_resv_unlock(b->resv);
}

unsigned int kshim_dmabuf_attachments(void)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&dmabuf_lock);
	for (i = 0; i < MAX_DMABUFS; i++)
		n += dmabufs[i] && dmabufs[i]->attach;
	pthread_mutex_unlock(&dmabuf_lock);
	return n;
}

/* --- nv-p2p ------------------------------------------------------------------------------------- */

#define GPU_PAGE	(64u << 10)
#define MAX_GPU_PINS	8

struct kshim_gpu_pin {
	u64 va, len;
	struct nvidia_p2p_page_table *pt;
	void (*free_cb)(void *data);
	void *data;
};

/*
 * NVIDIA's put_pages waits for a free callback that runs on the same page
 * table (GDRCopy's comments; nv-p2p.h: the callback and put_pages are
 * serialised): a lock held across put_pages that the callback takes is a
 * deadlock.  The callback runs "holding" this class, put_pages takes it.
 */
static const struct kshim_dep gpu_callback_dep = { "nvidia_p2p free callback" };
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gpu_cond = PTHREAD_COND_INITIALIZER;
static struct nvidia_p2p_page_table *gpu_in_callback[MAX_GPU_PINS];
static u64 gpu_va, gpu_len;
static void *gpu_host;
static struct kshim_gpu_pin gpu_pins[MAX_GPU_PINS];

/*
 * Pause points (kshim_point): the free callback's thread is held at the
 * n-th point of a kind it reaches, until the test lets it go on.
 */
static pthread_mutex_t point_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t point_cond = PTHREAD_COND_INITIALIZER;
static __thread bool point_thread;
static __thread unsigned int point_seen[2];
static int point_kind = -1;
static unsigned int point_n;
static bool point_held, point_go;

static void kshim_deadline_rt(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

bool kshim_point(enum kshim_point_kind kind)
{
	struct timespec ts;
	unsigned int n;

	if (!point_thread)
		return false;
	n = ++point_seen[kind];
	pthread_mutex_lock(&point_lock);
	if (point_kind != (int)kind || point_n != n) {
		pthread_mutex_unlock(&point_lock);
		return false;
	}
	point_kind = -1;
	point_held = true;
	pthread_cond_broadcast(&point_cond);
	/* A test that fails before it resumes does not hang the suite. */
	kshim_deadline_rt(&ts, 10000);
	while (!point_go)
		if (pthread_cond_timedwait(&point_cond, &point_lock, &ts))
			break;
	point_held = false;
	point_go = false;
	pthread_mutex_unlock(&point_lock);
	return true;
}

void kshim_gpu_pause_at(enum kshim_point_kind kind, unsigned int n)
{
	pthread_mutex_lock(&point_lock);
	point_kind = (int)kind;
	point_n = n;
	point_go = false;
	pthread_mutex_unlock(&point_lock);
}

bool kshim_gpu_wait_paused(unsigned int ms)
{
	struct timespec ts;
	bool held;

	kshim_deadline_rt(&ts, ms);
	pthread_mutex_lock(&point_lock);
	while (!point_held)
		if (pthread_cond_timedwait(&point_cond, &point_lock, &ts))
			break;
	held = point_held;
	pthread_mutex_unlock(&point_lock);
	return held;
}

void kshim_gpu_resume(void)
{
	pthread_mutex_lock(&point_lock);
	point_kind = -1;
	if (point_held)
		point_go = true;
	pthread_cond_broadcast(&point_cond);
	pthread_mutex_unlock(&point_lock);
}

/* The free callback fired from another thread at a step of PIN_NVP2P. */
static enum kshim_nvp2p_step gpu_free_step;
static bool gpu_callback_blocked;

void kshim_gpu_free_during(enum kshim_nvp2p_step step)
{
	pthread_mutex_lock(&gpu_lock);
	gpu_free_step = step;
	gpu_callback_blocked = false;
	pthread_mutex_unlock(&gpu_lock);
}

bool kshim_gpu_callback_blocked(void)
{
	bool b;

	pthread_mutex_lock(&gpu_lock);
	b = gpu_callback_blocked;
	pthread_mutex_unlock(&gpu_lock);
	return b;
}

static void *kshim_gpu_free_thread(void *arg)
{
	kshim_gpu_free(*(u64 *)arg);
	return NULL;
}

/*
 * The callback runs in a thread of its own, as NVIDIA's driver runs it
 * when another thread frees the memory; set-up waits for it to return, 2 s
 * at most (a callback that waits for set-up would deadlock inside the
 * NVIDIA driver, whose locks it runs under).
 */
static void kshim_gpu_step(enum kshim_nvp2p_step step, u64 va)
{
	static u64 at;
	struct timespec ts;
	pthread_t t;
	bool fire;

	pthread_mutex_lock(&gpu_lock);
	fire = gpu_free_step == step;
	if (fire)
		gpu_free_step = KSHIM_NVP2P_NONE;
	pthread_mutex_unlock(&gpu_lock);
	if (!fire)
		return;
	at = va;
	if (pthread_create(&t, NULL, kshim_gpu_free_thread, &at))
		abort();
	kshim_deadline_rt(&ts, 2000);
	if (pthread_timedjoin_np(t, NULL, &ts)) {
		pthread_mutex_lock(&gpu_lock);
		gpu_callback_blocked = true;
		pthread_mutex_unlock(&gpu_lock);
		pthread_detach(t);
	}
}

void kshim_gpu_mem(u64 gpu_addr, void *mem, size_t size)
{
	pthread_mutex_lock(&gpu_lock);
	gpu_va = gpu_addr;
	gpu_len = size;
	gpu_host = mem;
	pthread_mutex_unlock(&gpu_lock);
}

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 va, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	struct nvidia_p2p_page_table *pt;
	unsigned int i;

	(void)p2p_token;
	(void)va_space;
	pthread_mutex_lock(&gpu_lock);
	if (!gpu_host || va < gpu_va || length > gpu_len ||
	    va - gpu_va > gpu_len - length) {
		pthread_mutex_unlock(&gpu_lock);
		return -EINVAL;
	}
	for (i = 0; i < MAX_GPU_PINS && gpu_pins[i].pt; i++)
		;
	pt = calloc(1, sizeof(*pt));
	if (i == MAX_GPU_PINS || !pt) {
		pthread_mutex_unlock(&gpu_lock);
		free(pt);
		return -ENOMEM;
	}
	pt->version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	pt->page_size = NVIDIA_P2P_PAGE_SIZE_64KB;
	pt->entries = (u32)(length / GPU_PAGE);
	gpu_pins[i] = (struct kshim_gpu_pin){ va, length, pt, free_callback, data };
	pthread_mutex_unlock(&gpu_lock);
	*page_table = pt;
	kshim_gpu_step(KSHIM_NVP2P_GOT_PAGES, va);
	return 0;
}

static void kshim_gpu_pin_drop(struct nvidia_p2p_page_table *pt)
{
	unsigned int i;

	pthread_mutex_lock(&gpu_lock);
	for (i = 0; i < MAX_GPU_PINS; i++)
		if (gpu_pins[i].pt == pt)
			memset(&gpu_pins[i], 0, sizeof(gpu_pins[i]));
	pthread_mutex_unlock(&gpu_lock);
}

static bool kshim_gpu_in_callback(const struct nvidia_p2p_page_table *pt)
{
	unsigned int i;

	for (i = 0; i < MAX_GPU_PINS; i++)
		if (gpu_in_callback[i] == pt)
			return true;
	return false;
}

int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 va,
			 struct nvidia_p2p_page_table *pt)
{
	(void)p2p_token;
	(void)va_space;
	(void)va;
	kshim_might_lock(&gpu_callback_dep, 0);
	pthread_mutex_lock(&gpu_lock);
	while (kshim_gpu_in_callback(pt))
		pthread_cond_wait(&gpu_cond, &gpu_lock);
	pthread_mutex_unlock(&gpu_lock);
	kshim_gpu_pin_drop(pt);
	free(pt);
	return 0;
}

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *pt)
{
	free(pt);
	return 0;
}

int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *pt,
			     struct nvidia_p2p_dma_mapping **ret)
{
	struct nvidia_p2p_dma_mapping *m = calloc(1, sizeof(*m));
	unsigned int i;
	u64 va = 0;

	(void)peer;
	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&gpu_lock);
	for (i = 0; i < MAX_GPU_PINS; i++)
		if (gpu_pins[i].pt == pt)
			va = gpu_pins[i].va;
	pthread_mutex_unlock(&gpu_lock);
	kshim_gpu_step(KSHIM_NVP2P_MAP, va);
	m->version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	m->page_size_type = NVIDIA_P2P_PAGE_SIZE_64KB;
	m->entries = pt->entries;
	m->dma_addresses = calloc(pt->entries ? pt->entries : 1, sizeof(u64));
	if (!m->dma_addresses) {
		free(m);
		return -ENOMEM;
	}
	for (i = 0; i < pt->entries; i++) {
		m->dma_addresses[i] = (uintptr_t)gpu_host + (va - gpu_va) +
				      (u64)i * GPU_PAGE;
		kshim_map_add(m->dma_addresses[i], GPU_PAGE, m);
	}
	*ret = m;
	kshim_gpu_step(KSHIM_NVP2P_MAPPED, va);
	return 0;
}

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *m)
{
	kshim_map_del(m);
	free(m->dma_addresses);
	free(m);
	return 0;
}

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *pt,
			       struct nvidia_p2p_dma_mapping *m)
{
	(void)peer;
	(void)pt;
	return nvidia_p2p_free_dma_mapping(m);
}

void kshim_gpu_free(u64 gpu_addr)
{
	struct kshim_gpu_pin pins[MAX_GPU_PINS];
	unsigned int i, n = 0;

	pthread_mutex_lock(&gpu_lock);
	for (i = 0; i < MAX_GPU_PINS; i++) {
		if (gpu_pins[i].pt && gpu_pins[i].va >= gpu_addr &&
		    gpu_pins[i].va < gpu_va + gpu_len) {
			pins[n++] = gpu_pins[i];
			memset(&gpu_pins[i], 0, sizeof(gpu_pins[i]));
		}
	}
	pthread_mutex_unlock(&gpu_lock);
	/* The callback frees the mapping and the page table itself. */
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&gpu_lock);
		gpu_in_callback[i] = pins[i].pt;
		pthread_mutex_unlock(&gpu_lock);
		kshim_lock_acquire(&gpu_callback_dep, 0, KSHIM_LOCK_SLEEPING);
		point_thread = true;
		memset(point_seen, 0, sizeof(point_seen));
		pins[i].free_cb(pins[i].data);
		point_thread = false;
		kshim_lock_release(&gpu_callback_dep, KSHIM_LOCK_SLEEPING);
		pthread_mutex_lock(&gpu_lock);
		gpu_in_callback[i] = NULL;
		pthread_cond_broadcast(&gpu_cond);
		pthread_mutex_unlock(&gpu_lock);
	}
}

/* --- seq_file, debugfs ----------------------------------------------------------------------- */

void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(m->buf + m->count, m->size - m->count, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->count += (size_t)n < m->size - m->count ? (size_t)n :
			    m->size - m->count - 1;
}

void seq_puts(struct seq_file *m, const char *s)
{
	seq_printf(m, "%s", s);
}

#define MAX_DEBUGFS	32

struct dentry {
	char path[256];
	struct dentry *parent;
	void *data;
	const struct file_operations *fops;
	bool used;
};

static struct dentry debugfs[MAX_DEBUGFS];
static pthread_mutex_t debugfs_lock = PTHREAD_MUTEX_INITIALIZER;

static struct dentry *kshim_debugfs_add(const char *name, struct dentry *parent,
					void *data, const struct file_operations *fops)
{
	struct dentry *d = NULL;
	unsigned int i;

	pthread_mutex_lock(&debugfs_lock);
	for (i = 0; i < MAX_DEBUGFS && debugfs[i].used; i++)
		;
	if (i < MAX_DEBUGFS) {
		d = &debugfs[i];
		snprintf(d->path, sizeof(d->path), "%.120s%s%.120s",
			 parent ? parent->path : "", parent ? "/" : "", name);
		d->parent = parent;
		d->data = data;
		d->fops = fops;
		d->used = true;
	}
	pthread_mutex_unlock(&debugfs_lock);
	return d ? d : ERR_PTR(-ENOMEM);
}

struct dentry *debugfs_create_dir(const char *name, struct dentry *parent)
{
	return kshim_debugfs_add(name, parent, NULL, NULL);
}

struct dentry *debugfs_create_file(const char *name, unsigned short mode,
				   struct dentry *parent, void *data,
				   const struct file_operations *fops)
{
	(void)mode;
	return kshim_debugfs_add(name, parent, data, fops);
}

static bool kshim_debugfs_below(const struct dentry *d, const struct dentry *top)
{
	for (; d; d = d->parent)
		if (d == top)
			return true;
	return false;
}

void debugfs_remove_recursive(struct dentry *top)
{
	unsigned int i;

	if (IS_ERR_OR_NULL(top))
		return;
	pthread_mutex_lock(&debugfs_lock);
	for (i = MAX_DEBUGFS; i-- > 0;)
		if (debugfs[i].used && kshim_debugfs_below(&debugfs[i], top))
			memset(&debugfs[i], 0, sizeof(debugfs[i]));
	pthread_mutex_unlock(&debugfs_lock);
}

int kshim_debugfs_read(const char *path, char *buf, size_t size)
{
	struct seq_file m = { buf, size, 0, NULL };
	const struct dentry *d = NULL;
	unsigned int i;

	pthread_mutex_lock(&debugfs_lock);
	for (i = 0; i < MAX_DEBUGFS; i++)
		if (debugfs[i].used && debugfs[i].fops &&
		    !strcmp(debugfs[i].path, path))
			d = &debugfs[i];
	pthread_mutex_unlock(&debugfs_lock);
	if (!d)
		return -ENOENT;
	buf[0] = '\0';
	m.private = d->data;
	return d->fops->kshim_show(&m, d->data);
}

unsigned int kshim_debugfs_entries(void)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&debugfs_lock);
	for (i = 0; i < MAX_DEBUGFS; i++)
		n += debugfs[i].used;
	pthread_mutex_unlock(&debugfs_lock);
	return n;
}
