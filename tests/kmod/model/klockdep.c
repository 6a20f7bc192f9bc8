// SPDX-License-Identifier: MIT
/*
 * klockdep.c - the kernel shim's lock checker: what lockdep and
 * might_sleep() would say about fpgad_dma.ko, in user space.
 *
 * Locks belong to classes, as in lockdep: one class per place a lock is
 * initialised (every channel's hw_lock is one class), and a nesting level
 * (mutex_lock_nested) makes a class of its own.  Each thread keeps the
 * locks it holds; taking B while A is held records the edge A -> B once,
 * and an edge that closes a cycle in the graph (B -> ... -> A already
 * known) is a lock-order violation, whichever threads took them and
 * whenever: the deadlock needs no unlucky timing to be found.
 *
 * Waiting for something that a lock holder must finish counts as taking
 * that lock (lockdep's "map" locks): nvidia_p2p_put_pages() waits for a
 * running free callback, so the callback runs "holding" the class
 * "nvidia_p2p free callback" and put_pages takes it for a moment;
 * might_lock(l) says the same of a wait on l's holder.
 *
 * Sleeping in atomic context: a mutex taken, or might_sleep() (wait
 * queues, usleep, GFP_KERNEL allocations) reached, while the thread holds
 * a spinlock or runs an interrupt handler.  A spinlock class taken in an
 * interrupt handler and elsewhere without _irq/_irqsave is reported too.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kshim_test.h"

#define MAX_CLASSES	128
#define MAX_HELD	32

struct klock_class {
	const char *name;		/* where the lock was initialised */
	unsigned int sub;		/* nesting level */
	bool in_irq;			/* taken in an interrupt handler */
	bool irq_unsafe;		/* taken elsewhere with irqs on */
	unsigned char after[MAX_CLASSES];	/* edges: this -> after[i] */
};

static pthread_mutex_t dep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct klock_class classes[MAX_CLASSES];
static unsigned int n_classes;
static u64 violations;
static char last_violation[400];

struct klock_held {
	unsigned int cls;
	const struct kshim_dep *dep;
	bool spin;
};

static __thread struct klock_held held[MAX_HELD];
static __thread unsigned int n_held;
static __thread unsigned int n_spin;	/* spinlocks among them */
static __thread unsigned int irq_depth;

static void klock_report(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* dep_lock held. */
static void klock_report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_violation, sizeof(last_violation), fmt, ap);
	va_end(ap);
	violations++;
	fprintf(stderr, "klockdep: %s\n", last_violation);
}

/* The class of @name at nesting level @sub, made on first use.  dep_lock. */
static unsigned int klock_class_of(const char *name, unsigned int sub)
{
	unsigned int i;

	for (i = 0; i < n_classes; i++)
		if (classes[i].sub == sub && !strcmp(classes[i].name, name))
			return i;
	if (n_classes == MAX_CLASSES)
		abort();
	classes[n_classes].name = name;
	classes[n_classes].sub = sub;
	return n_classes++;
}

/* Is @to reachable from @from along known edges?  dep_lock. */
static bool klock_reaches(unsigned int from, unsigned int to,
			  unsigned char *seen)
{
	unsigned int i;

	if (from == to)
		return true;
	if (seen[from])
		return false;
	seen[from] = 1;
	for (i = 0; i < n_classes; i++)
		if (classes[from].after[i] && klock_reaches(i, to, seen))
			return true;
	return false;
}

/* Record @a -> @b; report it when @b already leads back to @a.  dep_lock. */
static void klock_edge(unsigned int a, unsigned int b)
{
	unsigned char seen[MAX_CLASSES] = { 0 };

	if (classes[a].after[b])
		return;
	if (klock_reaches(b, a, seen)) {
		klock_report("lock order: %s/%u taken while %s/%u is held, "
			     "but %s/%u is already known to come before it "
			     "(AB-BA deadlock)",
			     classes[b].name, classes[b].sub,
			     classes[a].name, classes[a].sub,
			     classes[b].name, classes[b].sub);
		return;
	}
	classes[a].after[b] = 1;
}

/* dep_lock. */
static void klock_check_sleep(const char *what)
{
	unsigned int i = n_held;

	if (irq_depth) {
		klock_report("%s in an interrupt handler", what);
		return;
	}
	while (n_spin && i-- > 0)
		if (held[i].spin) {
			klock_report("%s while holding spinlock %s", what,
				     classes[held[i].cls].name);
			return;
		}
}

void kshim_might_sleep(const char *what)
{
	if (!irq_depth && !n_spin)
		return;
	pthread_mutex_lock(&dep_lock);
	klock_check_sleep(what);
	pthread_mutex_unlock(&dep_lock);
}

void kshim_lock_acquire(const struct kshim_dep *dep, unsigned int sub,
			enum kshim_lock_kind kind)
{
	unsigned int cls, i;

	pthread_mutex_lock(&dep_lock);
	cls = klock_class_of(dep->name, sub);
	if (kind == KSHIM_LOCK_SLEEPING)
		klock_check_sleep("a mutex taken");
	if (kind != KSHIM_LOCK_SLEEPING) {
		if (irq_depth)
			classes[cls].in_irq = true;
		else if (kind == KSHIM_LOCK_SPIN)
			classes[cls].irq_unsafe = true;
		if (classes[cls].in_irq && classes[cls].irq_unsafe)
			klock_report("spinlock %s taken in an interrupt handler "
				     "and elsewhere without spin_lock_irq/irqsave",
				     dep->name);
	}
	for (i = 0; i < n_held; i++) {
		if (held[i].cls == cls)
			klock_report("%s/%u taken twice (recursive locking, "
				     "or nesting without mutex_lock_nested)",
				     dep->name, sub);
		else
			klock_edge(held[i].cls, cls);
	}
	pthread_mutex_unlock(&dep_lock);
	if (n_held == MAX_HELD)
		abort();
	held[n_held].cls = cls;
	held[n_held].dep = dep;
	held[n_held].spin = kind != KSHIM_LOCK_SLEEPING;
	n_held++;
	if (kind != KSHIM_LOCK_SLEEPING)
		n_spin++;
}

void kshim_lock_release(const struct kshim_dep *dep, enum kshim_lock_kind kind)
{
	unsigned int i;

	for (i = n_held; i-- > 0;) {
		if (held[i].dep != dep)
			continue;
		memmove(&held[i], &held[i + 1],
			(n_held - i - 1) * sizeof(held[0]));
		n_held--;
		if (kind != KSHIM_LOCK_SLEEPING)
			n_spin--;
		return;
	}
	pthread_mutex_lock(&dep_lock);
	klock_report("%s released but not held by this thread", dep->name);
	pthread_mutex_unlock(&dep_lock);
}

void kshim_might_lock(const struct kshim_dep *dep, unsigned int sub)
{
	kshim_lock_acquire(dep, sub, KSHIM_LOCK_SLEEPING);
	kshim_lock_release(dep, KSHIM_LOCK_SLEEPING);
}

void kshim_irq_enter(void)
{
	irq_depth++;
}

void kshim_irq_exit(void)
{
	irq_depth--;
}

u64 kshim_lock_violations(void)
{
	u64 n;

	pthread_mutex_lock(&dep_lock);
	n = violations;
	pthread_mutex_unlock(&dep_lock);
	return n;
}

const char *kshim_lock_last_violation(void)
{
	return last_violation;
}

void kshim_lock_forget(void)
{
	pthread_mutex_lock(&dep_lock);
	memset(classes, 0, sizeof(classes));
	n_classes = 0;
	violations = 0;
	last_violation[0] = '\0';
	pthread_mutex_unlock(&dep_lock);
}
