// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark of the OMAP mailbox name registry and its mboxes_lock.
 *
 * One bound kthread per selected CPU runs a random mix of lookups
 * (omap_mbox_get() + omap_mbox_put()) and writes (omap_mbox_register() +
 * omap_mbox_unregister() of a thread-private mailbox) against a registry
 * preloaded with named mailboxes, for a fixed time, back to back or with
 * a busy think time between two ops (think_ns).  The module works
 * unchanged whether mboxes_lock is an rwlock or a spinlock.
 *
 * Loading the module starts nothing.  Each write of "1" to
 * /sys/kernel/debug/mbox_bench/run does one run with the current module
 * parameters; "results" holds the outcome of the last run (empty while
 * a run is under way, and after a run that did not complete) in the
 * "mbox_bench-results v2" format described in FORMAT.md.  Every registry
 * call that takes mboxes_lock is counted, so that the counts can be
 * checked against /proc/lock_stat.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/omap-mbox-registry.h>
#include <linux/overflow.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "lat_hist.h"

/* What results_out.h takes from the kernel. */
#define BENCH_NOW()		local_clock()
#define BENCH_RESCHED()		cond_resched()
#define BENCH_DIV64(a, b)	div64_u64(a, b)
#define BENCH_OUT		struct seq_file
#define bench_out(o, ...)	seq_printf(o, __VA_ARGS__)
#include "results_out.h"

/*
 * Timing every op cost about 8% of an uncontended lookup under TCG (two
 * local_clock() reads and a histogram update against a ~4 us op); timing
 * one op in eight keeps the cost near 1% and still gives thousands of
 * samples per second and thread.
 */
#define BENCH_TIMING_DEFAULT	8
#define BENCH_MAX_TIMING	1024

/*
 * Parameters.  Writable so that they can change between runs; each run
 * takes a snapshot of them and checks it before doing anything.
 */
static int read_pct = 50;
module_param(read_pct, int, 0644);
MODULE_PARM_DESC(read_pct, "Share of ops that are lookups, percent 0..100 (default 50); the rest are register+unregister pairs");

static int mailboxes = 16;
module_param(mailboxes, int, 0644);
MODULE_PARM_DESC(mailboxes, "Mailboxes registered for each run, count 1..4096 (default 16)");

static int miss_pct;
module_param(miss_pct, int, 0644);
MODULE_PARM_DESC(miss_pct, "Share of lookups for an unregistered name, percent 0..100 (default 0)");

static int duration_ms = 1000;
module_param(duration_ms, int, 0644);
MODULE_PARM_DESC(duration_ms, "Length of a run, milliseconds 1..600000 (default 1000)");

static char cpus[256];
module_param_string(cpus, cpus, sizeof(cpus), 0644);
MODULE_PARM_DESC(cpus, "CPUs that run a thread, cpulist subset of the online CPUs (default \"\" = all online)");

static uint seed = 1;
module_param(seed, uint, 0644);
MODULE_PARM_DESC(seed, "PRNG seed, combined with the CPU number per thread, u32 (default 1)");

static int timing = BENCH_TIMING_DEFAULT;
module_param(timing, int, 0644);
MODULE_PARM_DESC(timing, "Time one op in every N with local_clock(), 0 (off) or 1..1024 (default 8)");

static int think_ns;
module_param(think_ns, int, 0644);
MODULE_PARM_DESC(think_ns, "Busy time per thread between two ops, outside any lock, nanoseconds 0..1000000 (default 0 = back to back)");

#define BENCH_MAX_MAILBOXES	4096
#define BENCH_MAX_DURATION_MS	600000
#define BENCH_MAX_THINK_NS	1000000
#define BENCH_ERR_SLOTS		8
#define BENCH_NAME_LEN		16

/* Error code of a registry call that returned the wrong mailbox. */
#define BENCH_ERR_MISMATCH	(MAX_ERRNO + 1)

enum bench_op {
	BENCH_OP_LOOKUP,
	BENCH_OP_WRITE,
	BENCH_NR_OPS,
};

static const char * const bench_op_names[BENCH_NR_OPS] = {
	[BENCH_OP_LOOKUP] = "lookup",
	[BENCH_OP_WRITE] = "write",
};

struct bench_params {
	int read_pct;
	int mailboxes;
	int miss_pct;
	int duration_ms;
	u32 seed;
	int timing;
	int think_ns;
	char cpus[sizeof(cpus)];
};

/* A preloaded mailbox, with the name that finds it and one that never does. */
struct bench_mbox {
	struct omap_mbox mbox;
	char name[BENCH_NAME_LEN];
	char miss[BENCH_NAME_LEN];
};

struct bench_err {
	int code;
	u64 count;
};

struct bench_ctx;

/*
 * Per-thread state and statistics.  Only the thread itself writes them
 * while it runs; the controller reads them after joining it.  Cache line
 * alignment keeps threads from sharing lines.
 */
struct bench_thread {
	struct bench_ctx *ctx;
	struct task_struct *task;
	unsigned int cpu;
	struct rnd_state rnd;
	struct omap_mbox mbox;
	char name[BENCH_NAME_LEN];
	u64 ops;
	u64 lookups;
	u64 hits;
	u64 misses;
	u64 writes;
	u64 errors;
	u64 lockops_read;
	u64 lockops_write;
	int untimed;		/* ops left before the next timed one */
	int unref;		/* ops left before the next reference probe */
	struct bench_ref ref;
	struct bench_err err[BENCH_ERR_SLOTS];
	struct bench_lat lat[BENCH_NR_OPS];
} ____cacheline_aligned;

/* What all threads of a run share; read-only while they run. */
struct bench_ctx {
	const struct bench_params *p;
	const struct bench_mbox *pre;
	struct rw_semaphore gate;
	atomic_t waiting;
	struct completion ready;
	bool stop;
};

struct bench_total {
	u64 ops;
	u64 lookups;
	u64 hits;
	u64 misses;
	u64 writes;
	u64 errors;
	u64 min_ops;
	u64 max_ops;
	struct bench_ref ref;	/* its buf unused */
	struct bench_lat lat[BENCH_NR_OPS];
};

/* One finished run: what the results file shows. */
struct bench_result {
	struct bench_params p;
	char *params;		/* "read_pct=... think_ns=..." with the CPU list */
	unsigned int id;
	unsigned int nr_threads;
	u64 elapsed_ns;
	u64 clock_read_ns;
	/* mboxes_lock acquisitions by the controller: setup, checks, teardown */
	u64 ctl_lockops_read;
	u64 ctl_lockops_write;
	u64 lockops_read;
	u64 lockops_write;
	unsigned int found;
	unsigned int private_found;
	unsigned int without_ops;
	unsigned int unregistered;
	bool registry_ok;
	bool progress_ok;
	bool teardown_ok;
	bool success;
	struct bench_total total;
	struct bench_thread thr[];
};

static struct omap_mbox_ops bench_mbox_ops;	/* no startup/shutdown */

static DEFINE_MUTEX(bench_run_lock);		/* one run at a time */
static struct cpumask bench_mask;		/* under bench_run_lock */
static unsigned int bench_run_id;		/* under bench_run_lock */

static DEFINE_MUTEX(bench_results_lock);
static struct bench_result *bench_last;		/* under bench_results_lock */

static struct dentry *bench_dir;

static DEFINE_SPINLOCK(bench_inject_a);
static DEFINE_SPINLOCK(bench_inject_b);
static DEFINE_SPINLOCK(bench_inject_hang_lock);

static void bench_snapshot(struct bench_params *p)
{
	kernel_param_lock(THIS_MODULE);
	p->read_pct = read_pct;
	p->mailboxes = mailboxes;
	p->miss_pct = miss_pct;
	p->duration_ms = duration_ms;
	p->seed = seed;
	p->timing = timing;
	p->think_ns = think_ns;
	strscpy(p->cpus, cpus, sizeof(p->cpus));
	kernel_param_unlock(THIS_MODULE);
}

static int bench_check_range(const char *name, int val, int lo, int hi)
{
	if (val >= lo && val <= hi)
		return 0;
	pr_err("%s=%d out of range %d..%d\n", name, val, lo, hi);
	return -EINVAL;
}

/*
 * Check every parameter before anything is done; on the first bad one
 * print one line naming it and its allowed range.  On success @mask holds
 * the CPUs that run a thread.
 */
static int bench_validate(struct bench_params *p, struct cpumask *mask)
{
	char *list = strim(p->cpus);
	int ret;

	ret = bench_check_range("read_pct", p->read_pct, 0, 100);
	if (!ret)
		ret = bench_check_range("mailboxes", p->mailboxes, 1,
					BENCH_MAX_MAILBOXES);
	if (!ret)
		ret = bench_check_range("miss_pct", p->miss_pct, 0, 100);
	if (!ret)
		ret = bench_check_range("duration_ms", p->duration_ms, 1,
					BENCH_MAX_DURATION_MS);
	if (!ret)
		ret = bench_check_range("timing", p->timing, 0,
					BENCH_MAX_TIMING);
	if (!ret)
		ret = bench_check_range("think_ns", p->think_ns, 0,
					BENCH_MAX_THINK_NS);
	if (ret)
		return ret;

	if (!*list) {
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	if (cpulist_parse(list, mask) || cpumask_empty(mask) ||
	    !cpumask_subset(mask, cpu_online_mask)) {
		pr_err("cpus=%s out of range %*pbl (a non-empty list of online CPUs)\n",
		       list, cpumask_pr_args(cpu_online_mask));
		return -EINVAL;
	}
	return 0;
}

/*
 * The registry calls, counting those that take mboxes_lock.
 * omap_mbox_get() and omap_mbox_unregister() always take it once;
 * omap_mbox_register() returns -EBUSY without taking it when the mailbox
 * is already linked (->next set), so that call is not counted.
 */
static struct omap_mbox *bench_get(const char *name, u64 *lockops_read)
{
	(*lockops_read)++;
	return omap_mbox_get(name);
}

static int bench_register(struct omap_mbox *mbox, u64 *lockops_write)
{
	if (!mbox->next)
		(*lockops_write)++;
	return omap_mbox_register(NULL, mbox);
}

static int bench_unregister(struct omap_mbox *mbox, u64 *lockops_write)
{
	(*lockops_write)++;
	return omap_mbox_unregister(mbox);
}

static void bench_error(struct bench_thread *t, int code)
{
	int i;

	t->errors++;
	for (i = 0; i < BENCH_ERR_SLOTS; i++) {
		if (!t->err[i].code)
			t->err[i].code = code;
		if (t->err[i].code == code) {
			t->err[i].count++;
			return;
		}
	}
	/* More distinct codes than slots: only in the errors total. */
}

/* A lookup of @name; @expect is the mailbox it must find, NULL for a miss. */
static void bench_lookup(struct bench_thread *t, const char *name,
			 const struct omap_mbox *expect)
{
	struct omap_mbox *mbox;

	t->lookups++;
	mbox = bench_get(name, &t->lockops_read);
	if (IS_ERR(mbox)) {
		if (!expect && PTR_ERR(mbox) == -ENOENT)
			t->misses++;
		else
			bench_error(t, -PTR_ERR(mbox));
		return;
	}
	omap_mbox_put(mbox);
	if (mbox == expect)
		t->hits++;
	else
		bench_error(t, BENCH_ERR_MISMATCH);
}

static void bench_write(struct bench_thread *t)
{
	int ret;

	t->writes++;
	ret = bench_register(&t->mbox, &t->lockops_write);
	if (ret) {
		bench_error(t, -ret);
		return;
	}
	ret = bench_unregister(&t->mbox, &t->lockops_write);
	if (ret)
		bench_error(t, -ret);
}

static void bench_one_op(struct bench_thread *t)
{
	const struct bench_ctx *ctx = t->ctx;
	const struct bench_params *p = ctx->p;
	enum bench_op op = BENCH_OP_WRITE;
	const struct bench_mbox *bm = NULL;
	bool miss = false;
	bool timed = false;
	u64 t0 = 0;

	if (prandom_u32_state(&t->rnd) % 100 < p->read_pct) {
		op = BENCH_OP_LOOKUP;
		miss = prandom_u32_state(&t->rnd) % 100 < p->miss_pct;
		bm = &ctx->pre[prandom_u32_state(&t->rnd) % p->mailboxes];
	}

	/* A countdown, not ops % timing: no division on the hot path. */
	if (p->timing && --t->untimed <= 0) {
		t->untimed = p->timing;
		timed = true;
		t0 = local_clock();
	}
	if (op == BENCH_OP_LOOKUP)
		bench_lookup(t, miss ? bm->miss : bm->name,
			     miss ? NULL : &bm->mbox);
	else
		bench_write(t);
	if (timed)
		bench_lat_add(&t->lat[op], local_clock() - t0);
	t->ops++;
}

/*
 * Think time: what a driver does between two opens of a mailbox, so that
 * the registry is taken at a realistic rate and not back to back.  Spent
 * after an op has been counted (and after its reference probe), outside
 * any lock and outside the timed window of bench_one_op(): it is never
 * op latency.
 *
 * A busy spin on local_clock(), not a sleep.  A sleeping thread would let
 * its vCPU go idle, and under TCG an idle vCPU costs the host nothing, so
 * QEMU would schedule the other vCPUs on the host cores differently and
 * the think time would change the conditions of the measurement, not
 * only the rate of ops.  Spinning keeps every vCPU as busy as the tight
 * loop does.  cond_resched() in the loop: the kernels are PREEMPT_NONE,
 * and the controller that sets the stop flag may share this CPU.
 */
static void bench_think(const struct bench_ctx *ctx, u64 ns)
{
	u64 end = local_clock() + ns;

	while (local_clock() < end && !READ_ONCE(ctx->stop)) {
		cpu_relax();
		cond_resched();
	}
}

static int bench_thread_fn(void *arg)
{
	struct bench_thread *t = arg;
	struct bench_ctx *ctx = t->ctx;

	/* Wait at the gate until every thread of the run is here. */
	if (atomic_dec_and_test(&ctx->waiting))
		complete(&ctx->ready);
	down_read(&ctx->gate);
	up_read(&ctx->gate);

	while (!READ_ONCE(ctx->stop)) {
		bench_one_op(t);
		if (--t->unref <= 0) {
			t->unref = BENCH_REF_EVERY;
			bench_ref_probe(&t->ref);
		}
		if (ctx->p->think_ns)
			bench_think(ctx, ctx->p->think_ns);
		cond_resched();		/* PREEMPT_NONE: let the controller in */
	}

	/* Stay until kthread_stop() so that the controller can join us. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* Register the preloaded mailboxes; on failure leave none registered. */
static int bench_setup(struct bench_result *res, struct bench_mbox *pre)
{
	int i, ret;

	for (i = 0; i < res->p.mailboxes; i++) {
		snprintf(pre[i].name, sizeof(pre[i].name), "mbox-%04d", i);
		snprintf(pre[i].miss, sizeof(pre[i].miss), "nomb-%04d", i);
		pre[i].mbox.name = pre[i].name;
		pre[i].mbox.ops = &bench_mbox_ops;
		ret = bench_register(&pre[i].mbox, &res->ctl_lockops_write);
		if (ret) {
			pr_err("setup: registering %s failed: %d\n",
			       pre[i].name, ret);
			while (i--)
				bench_unregister(&pre[i].mbox,
						 &res->ctl_lockops_write);
			return ret;
		}
	}
	return 0;
}

static void bench_init_thread(struct bench_thread *t, struct bench_ctx *ctx,
			      unsigned int cpu)
{
	int op;

	t->ctx = ctx;
	t->cpu = cpu;
	prandom_seed_state(&t->rnd, ((u64)ctx->p->seed << 32) | cpu);
	snprintf(t->name, sizeof(t->name), "bench-cpu%u", cpu);
	t->mbox.name = t->name;
	t->mbox.ops = &bench_mbox_ops;
	t->untimed = 1;			/* the first op is timed */
	t->unref = 1;			/* probe the host once at once */
	for (op = 0; op < BENCH_NR_OPS; op++)
		bench_lat_init(&t->lat[op]);
}

/*
 * Start one bound thread per CPU of @mask behind the gate, release them
 * together, let them run for duration_ms, stop and join them all.
 */
static int bench_threads(struct bench_result *res, struct bench_ctx *ctx,
			 const struct cpumask *mask)
{
	unsigned int cpu, started = 0, i;
	struct task_struct *task;
	u64 t0, t1;
	int ret = 0;

	init_rwsem(&ctx->gate);
	init_completion(&ctx->ready);
	atomic_set(&ctx->waiting, res->nr_threads);
	WRITE_ONCE(ctx->stop, false);

	down_write(&ctx->gate);
	for_each_cpu(cpu, mask) {
		struct bench_thread *t = &res->thr[started];

		bench_init_thread(t, ctx, cpu);
		task = kthread_run_on_cpu(bench_thread_fn, t, cpu,
					  KBUILD_MODNAME "/%u");
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			pr_err("creating the thread for CPU %u failed: %d\n",
			       cpu, ret);
			break;
		}
		t->task = task;
		started++;
	}

	if (!ret) {
		wait_for_completion(&ctx->ready);
		/*
		 * Start quiet and on a tick: wait for the RCU callbacks the
		 * set-up queued (closed files, exited tasks) to be invoked,
		 * then sleep to the next jiffy, so that no grace period is
		 * under way when the clock starts and the window starts at the
		 * same phase of the tick in every boot.  Under icount
		 * (docs/icount.md) a grace period or a tick that fell just
		 * inside the window in some boots and just before it in others
		 * moved 300 ms windows by 160-190 ppm.
		 */
		rcu_barrier();
		schedule_timeout_idle(1);
	} else {
		WRITE_ONCE(ctx->stop, true);
	}

	t0 = ktime_get_ns();
	up_write(&ctx->gate);
	if (!ret) {
		/*
		 * Not msleep(): TASK_IDLE keeps a long run away from the
		 * hung task detector, the hrtimer keeps a short one exact.
		 */
		usleep_range_state((unsigned long)res->p.duration_ms * USEC_PER_MSEC,
				   (unsigned long)res->p.duration_ms * USEC_PER_MSEC + 50,
				   TASK_IDLE);
		WRITE_ONCE(ctx->stop, true);
	}
	t1 = ktime_get_ns();

	for (i = 0; i < started; i++)
		kthread_stop(res->thr[i].task);

	res->elapsed_ns = t1 - t0;
	return ret;
}

/*
 * After the threads are joined: the registry must hold exactly the
 * preloaded mailboxes, every thread must have made progress; then take
 * the preloaded mailboxes out again.
 */
static void bench_check_and_teardown(struct bench_result *res,
				     struct bench_mbox *pre)
{
	u64 *rd = &res->ctl_lockops_read, *wr = &res->ctl_lockops_write;
	struct omap_mbox *mbox;
	unsigned int i;

	for (i = 0; i < res->p.mailboxes; i++) {
		mbox = bench_get(pre[i].name, rd);
		if (IS_ERR(mbox))
			continue;
		omap_mbox_put(mbox);
		if (mbox == &pre[i].mbox)
			res->found++;
	}
	for (i = 0; i < res->nr_threads; i++) {
		struct bench_thread *t = &res->thr[i];

		mbox = bench_get(t->name, rd);
		if (PTR_ERR_OR_ZERO(mbox) == -ENOENT)
			continue;
		res->private_found++;
		if (!IS_ERR(mbox))
			omap_mbox_put(mbox);
		/* Never leave a thread's mailbox linked: it is freed later. */
		bench_unregister(&t->mbox, wr);
	}
	res->registry_ok = res->found == res->p.mailboxes &&
			   !res->private_found;

	for (i = 0; i < res->nr_threads; i++)
		if (!res->thr[i].ops)
			res->without_ops++;
	res->progress_ok = !res->without_ops;

	for (i = 0; i < res->p.mailboxes; i++)
		if (!bench_unregister(&pre[i].mbox, wr))
			res->unregistered++;
	res->teardown_ok = res->unregistered == res->p.mailboxes;
}

static void bench_sum(struct bench_result *res)
{
	struct bench_total *tot = &res->total;
	unsigned int i;
	int op;

	memset(tot, 0, sizeof(*tot));
	tot->min_ops = U64_MAX;
	for (op = 0; op < BENCH_NR_OPS; op++)
		bench_lat_init(&tot->lat[op]);
	res->lockops_read = res->ctl_lockops_read;
	res->lockops_write = res->ctl_lockops_write;

	for (i = 0; i < res->nr_threads; i++) {
		const struct bench_thread *t = &res->thr[i];

		tot->ops += t->ops;
		tot->lookups += t->lookups;
		tot->hits += t->hits;
		tot->misses += t->misses;
		tot->writes += t->writes;
		tot->errors += t->errors;
		tot->min_ops = min(tot->min_ops, t->ops);
		tot->max_ops = max(tot->max_ops, t->ops);
		bench_ref_merge(&tot->ref, &t->ref);
		res->lockops_read += t->lockops_read;
		res->lockops_write += t->lockops_write;
		for (op = 0; op < BENCH_NR_OPS; op++)
			bench_lat_merge(&tot->lat[op], &t->lat[op]);
	}
	res->success = res->registry_ok && res->progress_ok &&
		       res->teardown_ok && !tot->errors;
}

static u64 bench_ops_per_sec(const struct bench_result *res)
{
	if (!res->elapsed_ns)
		return 0;
	return mul_u64_u64_div_u64(res->total.ops, NSEC_PER_SEC,
				   res->elapsed_ns);
}

static void bench_result_free(struct bench_result *res)
{
	if (!res)
		return;
	kfree(res->params);
	kvfree(res);
}

/* Make @res (NULL: none) what the results file shows; free the old one. */
static void bench_publish(struct bench_result *res)
{
	struct bench_result *old;

	mutex_lock(&bench_results_lock);
	old = bench_last;
	bench_last = res;
	mutex_unlock(&bench_results_lock);
	bench_result_free(old);
}

/*
 * One run with the current parameters; called with bench_run_lock held.
 * The last run's results go first: a run that is refused or fails to
 * start leaves the results file empty, never an earlier run's results
 * that a reader would take for this one's.
 */
static int bench_run(void)
{
	struct bench_result *res = NULL;
	struct bench_mbox *pre = NULL;
	struct bench_params p;
	struct bench_ctx ctx = { .p = NULL };
	unsigned int n;
	int ret;

	bench_publish(NULL);
	bench_snapshot(&p);
	cpus_read_lock();
	ret = bench_validate(&p, &bench_mask);
	if (ret)
		goto out_unlock;

	n = cpumask_weight(&bench_mask);
	res = kvzalloc(struct_size(res, thr, n), GFP_KERNEL);
	pre = kvcalloc(p.mailboxes, sizeof(*pre), GFP_KERNEL);
	if (!res || !pre) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	res->p = p;
	res->nr_threads = n;
	res->params = kasprintf(GFP_KERNEL,
				"read_pct=%d mailboxes=%d miss_pct=%d duration_ms=%d cpus=%*pbl seed=%u timing=%d think_ns=%d",
				p.read_pct, p.mailboxes, p.miss_pct,
				p.duration_ms, cpumask_pr_args(&bench_mask),
				p.seed, p.timing, p.think_ns);
	if (!res->params) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	res->id = ++bench_run_id;
	res->clock_read_ns = bench_clock_read_ns();
	ctx.p = &res->p;
	ctx.pre = pre;

	ret = bench_setup(res, pre);
	if (ret)
		goto out_unlock;

	pr_info("--- Start of test: id=%u %s threads=%u clock_read_ns=%llu\n",
		res->id, res->params, n, res->clock_read_ns);

	ret = bench_threads(res, &ctx, &bench_mask);
	bench_check_and_teardown(res, pre);
	cpus_read_unlock();
	kvfree(pre);
	pre = NULL;
	if (ret) {
		pr_err("--- End of test: FAILURE: id=%u could not start: %d\n",
		       res->id, ret);
		goto out_free;
	}

	bench_sum(res);
	pr_info("--- End of test: %s: id=%u %s ops=%llu ops_per_sec=%llu errors=%llu lockops_read=%llu lockops_write=%llu\n",
		res->success ? "SUCCESS" : "FAILURE", res->id, res->params,
		res->total.ops, bench_ops_per_sec(res),
		res->total.errors, res->lockops_read, res->lockops_write);
	ret = res->success ? 0 : -EIO;
	bench_publish(res);
	return ret;

out_unlock:
	cpus_read_unlock();
out_free:
	kvfree(pre);
	bench_result_free(res);
	return ret;
}

static const char *bench_errname(int code)
{
	switch (code) {
	case BENCH_ERR_MISMATCH:
		return "mismatch";
	case EBUSY:
		return "EBUSY";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case ENODEV:
		return "ENODEV";
	case ENOMEM:
		return "ENOMEM";
	default:
		return NULL;
	}
}

static void bench_show_thread(struct seq_file *m, const struct bench_thread *t)
{
	u64 listed = 0;
	int i;

	bench_out_thread(m, t->cpu, t->ops, t->lookups, t->hits, t->misses,
			 t->writes, t->errors, &t->ref);
	for (i = 0; i < BENCH_ERR_SLOTS && t->err[i].code; i++) {
		bench_out_err(m, bench_errname(t->err[i].code), t->err[i].code,
			      t->err[i].count);
		listed += t->err[i].count;
	}
	if (t->errors > listed)
		bench_out_err(m, "other", 0, t->errors - listed);
	bench_out_eol(m);
}

static void bench_show(struct seq_file *m, const struct bench_result *res)
{
	const struct bench_total *tot = &res->total;
	unsigned int i;
	int op;

	bench_out_head(m, res->params);
	bench_out_run(m, res->id, res->nr_threads, res->elapsed_ns,
		      res->clock_read_ns, tot->ops, res->p.timing);
	for (i = 0; i < res->nr_threads; i++)
		bench_show_thread(m, &res->thr[i]);
	if (res->p.timing)
		for (op = 0; op < BENCH_NR_OPS; op++)
			bench_out_lat(m, bench_op_names[op], &tot->lat[op]);
	bench_out_total(m, tot->ops, tot->lookups, tot->hits, tot->misses,
			tot->writes, tot->errors, bench_ops_per_sec(res));
	bench_out_lockops(m, res->lockops_read, res->lockops_write, NULL);
	bench_out_ref(m, &tot->ref);
	bench_out_fairness(m, tot->min_ops, tot->max_ops);
	bench_out_check(m, "registry", res->registry_ok, "preloaded",
			res->p.mailboxes);
	bench_out_key(m, "found", res->found);
	bench_out_key(m, "private_found", res->private_found);
	bench_out_eol(m);
	bench_out_check(m, "progress", res->progress_ok,
			"threads_without_ops", res->without_ops);
	bench_out_eol(m);
	bench_out_check(m, "teardown", res->teardown_ok, "unregistered",
			res->unregistered);
	bench_out_eol(m);
	bench_out_end(m, res->success);
}

static int mbox_bench_results_show(struct seq_file *m, void *v)
{
	mutex_lock(&bench_results_lock);
	if (bench_last)
		bench_show(m, bench_last);
	mutex_unlock(&bench_results_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mbox_bench_results);

static ssize_t bench_run_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned int val;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &val);
	if (ret)
		return ret;
	if (val != 1)
		return -EINVAL;
	if (!mutex_trylock(&bench_run_lock))
		return -EBUSY;
	ret = bench_run();
	mutex_unlock(&bench_run_lock);
	return ret ? ret : count;
}

static const struct file_operations bench_run_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = bench_run_write,
	.llseek = noop_llseek,
};

/* An AB-BA order on two private locks: lockdep reports it, nothing hangs. */
static void bench_inject_lockdep(void)
{
	spin_lock(&bench_inject_a);
	spin_lock(&bench_inject_b);
	spin_unlock(&bench_inject_b);
	spin_unlock(&bench_inject_a);

	spin_lock(&bench_inject_b);
	spin_lock(&bench_inject_a);
	spin_unlock(&bench_inject_a);
	spin_unlock(&bench_inject_b);
}

/* Spin forever with a spinlock held and preemption off. */
static void bench_inject_hang(void)
{
	spin_lock(&bench_inject_hang_lock);
	for (;;)
		cpu_relax();
}

static ssize_t bench_inject_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	char buf[16];

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	if (sysfs_streq(buf, "warn")) {
		pr_info("inject: warn\n");
		WARN(1, KBUILD_MODNAME ": injected warning\n");
	} else if (sysfs_streq(buf, "lockdep")) {
		pr_info("inject: lockdep (AB-BA on two private spinlocks)\n");
		bench_inject_lockdep();
	} else if (sysfs_streq(buf, "hang")) {
		pr_info("inject: hang (spinning with a spinlock held, preemption off)\n");
		bench_inject_hang();
	} else {
		return -EINVAL;
	}
	return count;
}

static const struct file_operations bench_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = bench_inject_write,
	.llseek = noop_llseek,
};

/* Undo whatever init did; safe to call twice. */
static void mbox_bench_cleanup(void)
{
	debugfs_remove_recursive(bench_dir);
	bench_dir = NULL;
	bench_publish(NULL);
}

static int __init mbox_bench_init(void)
{
	struct bench_params p;
	int ret;

	bench_snapshot(&p);
	mutex_lock(&bench_run_lock);
	ret = bench_validate(&p, &bench_mask);
	mutex_unlock(&bench_run_lock);
	if (ret)
		goto unwind;

	bench_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("run", 0200, bench_dir, NULL, &bench_run_fops);
	debugfs_create_file("results", 0444, bench_dir, NULL,
			    &mbox_bench_results_fops);
	debugfs_create_file("inject", 0200, bench_dir, NULL,
			    &bench_inject_fops);
	pr_info("ready: write 1 to /sys/kernel/debug/%s/run to start a run\n",
		KBUILD_MODNAME);
	return 0;

unwind:
	mbox_bench_cleanup();
	return ret;
}

static void __exit mbox_bench_exit(void)
{
	mbox_bench_cleanup();
}

module_init(mbox_bench_init);
module_exit(mbox_bench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Benchmark of the OMAP mailbox name registry lock");
