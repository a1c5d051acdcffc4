// SPDX-License-Identifier: GPL-2.0-only
/*
 * The writer side of file_systems_lock (fs/filesystems.c) for
 * guest/inside/lockload: a kthread registers and unregisters a dummy file system
 * type, "lockbench_fsw", rate_hz times a second (or as fast as it can when
 * that is slower: unregister_filesystem() waits for an RCU grace period),
 * so that lockload's readers of /proc/filesystems meet a writer.
 *
 * Writing "1" to /sys/kernel/debug/fs_writer/run starts the writer, "0"
 * stops it and waits for it; "pairs" holds the register + unregister
 * pairs done since the module was loaded, "errors" the calls that failed
 * (a failed register does not try the unregister).  Each pair takes
 * write_lock(&file_systems_lock) twice, once in register_filesystem() and
 * once in unregister_filesystem().  The file system is never mounted.
 *
 * lock=binfmt_lock: the writer side of binfmt_lock (fs/exec.c) instead, for
 * lockload's execve readers: the kthread registers and unregisters a dummy
 * binary format, whose load_binary refuses every file (-ENOEXEC); each
 * pair takes write_lock(&binfmt_lock) twice, in register_binfmt() and
 * unregister_binfmt(), and waits for no grace period.  register_binfmt()
 * puts it at the list's tail, after binfmt_elf, so an ELF exec never tries
 * it and takes binfmt_lock as often with the writer as without.
 *
 * lock=proc_subdir_lock: the writer side of proc_subdir_lock
 * (fs/proc/generic.c), for lockload's proc_lookup readers: the kthread
 * creates and removes /proc/lockbench_fsw, an empty file.  Each pair
 * takes write_lock(&proc_subdir_lock) twice, in proc_register() and
 * remove_proc_entry(), and read_lock once, in proc_create()'s
 * xlate_proc_name().
 *
 * lock=tasklist_lock: not a writer but tasklist_lock's readers in
 * interrupt context, which no workload of the guest reaches (in 6.1 only
 * the sysrq handlers take it there, from a serial break or a keyboard):
 * two hrtimers, one expiring in hard interrupt context and one in softirq
 * context (HRTIMER_MODE_REL_SOFT), each at rate_hz / 2, call
 * handle_sysrq('n'), the handler a serial break's interrupt would call:
 * normalize_rt_tasks() takes read_lock(&tasklist_lock) once and changes
 * nothing where no task is real-time.  "pairs" counts the calls, each one
 * read; "hardirq" and "softirq" the calls that found themselves in that
 * context (in_hardirq(), in_serving_softirq()), and the module says them
 * on the console when it stops.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/binfmts.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sysrq.h>

#define FSW_MAX_RATE_HZ	100000

static unsigned int rate_hz = 100;
module_param(rate_hz, uint, 0644);
MODULE_PARM_DESC(rate_hz, "Register + unregister pairs per second, 1..100000 (default 100)");

static char *lock = "file_systems_lock";
module_param(lock, charp, 0444);
MODULE_PARM_DESC(lock, "The lock written: file_systems_lock (default), binfmt_lock or proc_subdir_lock; or tasklist_lock, read from interrupts");

enum fsw_target { FSW_FS, FSW_BINFMT, FSW_PROC, FSW_TASKLIST };
static enum fsw_target fsw_target;

static atomic64_t fsw_pairs = ATOMIC64_INIT(0);
static atomic64_t fsw_errors = ATOMIC64_INIT(0);
static struct task_struct *fsw_task;	/* the writer, while it runs */
static DEFINE_MUTEX(fsw_lock);		/* starts and stops */
static struct dentry *fsw_dir;

static struct file_system_type fsw_type = {
	.owner = THIS_MODULE,
	.name = "lockbench_fsw",
	.kill_sb = kill_anon_super,
};

static int fsw_load_binary(struct linux_binprm *bprm)
{
	return -ENOEXEC;
}

static struct linux_binfmt fsw_binfmt_format = {
	.module = THIS_MODULE,
	.load_binary = fsw_load_binary,
};

static ssize_t fsw_proc_read(struct file *file, char __user *buf,
			     size_t len, loff_t *ppos)
{
	return 0;
}

static const struct proc_ops fsw_proc_ops = {
	.proc_read = fsw_proc_read,
};

/* One register + unregister pair of the lock's writer; 0 or an error. */
static int fsw_pair(void)
{
	int ret;

	if (fsw_target == FSW_BINFMT) {
		register_binfmt(&fsw_binfmt_format);
		unregister_binfmt(&fsw_binfmt_format);
		return 0;
	}
	if (fsw_target == FSW_PROC) {
		if (!proc_create("lockbench_fsw", 0444, NULL, &fsw_proc_ops))
			return -ENOMEM;
		remove_proc_entry("lockbench_fsw", NULL);
		return 0;
	}
	ret = register_filesystem(&fsw_type);
	if (ret)
		return ret;
	return unregister_filesystem(&fsw_type);
}

static int fsw_thread(void *arg)
{
	u64 period = div_u64(NSEC_PER_SEC, *(unsigned int *)arg);
	ktime_t next = ktime_get();

	while (!kthread_should_stop()) {
		if (fsw_pair())
			atomic64_inc(&fsw_errors);
		else
			atomic64_inc(&fsw_pairs);
		next = ktime_add_ns(next, period);
		if (ktime_before(ktime_get(), next)) {
			set_current_state(TASK_INTERRUPTIBLE);
			if (!kthread_should_stop())
				schedule_hrtimeout(&next, HRTIMER_MODE_ABS);
			__set_current_state(TASK_RUNNING);
		} else {
			/* Behind: no catching up in a burst. */
			next = ktime_get();
			cond_resched();
		}
	}
	return 0;
}

static unsigned int fsw_rate;	/* the rate the running writer was given */

/* lock=tasklist_lock: the sysrq 'n' handler from an interrupt. */
static struct hrtimer fsw_hard, fsw_soft;
static ktime_t fsw_period;
static bool fsw_ticking;
static atomic64_t fsw_hardirq = ATOMIC64_INIT(0);
static atomic64_t fsw_softirq = ATOMIC64_INIT(0);

static enum hrtimer_restart fsw_tick(struct hrtimer *timer)
{
	if (in_hardirq())
		atomic64_inc(&fsw_hardirq);
	else if (in_serving_softirq())
		atomic64_inc(&fsw_softirq);
	handle_sysrq('n');
	atomic64_inc(&fsw_pairs);
	hrtimer_forward_now(timer, fsw_period);
	return HRTIMER_RESTART;
}

static void fsw_irq_start(unsigned int rate)
{
	fsw_period = ns_to_ktime(div_u64(2 * NSEC_PER_SEC, rate));
	hrtimer_init(&fsw_hard, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hrtimer_init(&fsw_soft, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	fsw_hard.function = fsw_tick;
	fsw_soft.function = fsw_tick;
	hrtimer_start(&fsw_hard, fsw_period, HRTIMER_MODE_REL_HARD);
	hrtimer_start(&fsw_soft, fsw_period, HRTIMER_MODE_REL_SOFT);
	fsw_ticking = true;
}

static void fsw_irq_stop(void)
{
	if (!fsw_ticking)
		return;
	hrtimer_cancel(&fsw_hard);
	hrtimer_cancel(&fsw_soft);
	fsw_ticking = false;
	/* notice: the guest console shows KERN_NOTICE and above (loglevel=6) */
	pr_notice("tasklist_lock: handle_sysrq('n') called %lld times in hardirq, %lld in softirq\n",
		  atomic64_read(&fsw_hardirq), atomic64_read(&fsw_softirq));
}

static ssize_t fsw_run_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	mutex_lock(&fsw_lock);
	if (on && !fsw_task) {
		if (rate_hz < 1 || rate_hz > FSW_MAX_RATE_HZ) {
			pr_err("rate_hz=%u out of range 1..%d\n", rate_hz,
			       FSW_MAX_RATE_HZ);
			ret = -EINVAL;
			goto out;
		}
		fsw_rate = rate_hz;
		if (fsw_target == FSW_TASKLIST) {
			if (!fsw_ticking)
				fsw_irq_start(fsw_rate);
			goto done;
		}
		fsw_task = kthread_run(fsw_thread, &fsw_rate, "fs_writer");
		if (IS_ERR(fsw_task)) {
			ret = PTR_ERR(fsw_task);
			fsw_task = NULL;
			goto out;
		}
	} else if (!on && fsw_task) {
		kthread_stop(fsw_task);
		fsw_task = NULL;
	} else if (!on) {
		fsw_irq_stop();
	}
done:
	ret = len;
out:
	mutex_unlock(&fsw_lock);
	return ret;
}

static const struct file_operations fsw_run_fops = {
	.owner = THIS_MODULE,
	.write = fsw_run_write,
	.llseek = noop_llseek,
};

static int fsw_pairs_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(fsw_count_fops, fsw_pairs_get, NULL, "%llu\n");

static int __init fsw_init(void)
{
	if (rate_hz < 1 || rate_hz > FSW_MAX_RATE_HZ) {
		pr_err("rate_hz=%u out of range 1..%d\n", rate_hz,
		       FSW_MAX_RATE_HZ);
		return -EINVAL;
	}
	if (!strcmp(lock, "binfmt_lock")) {
		fsw_target = FSW_BINFMT;
	} else if (!strcmp(lock, "proc_subdir_lock")) {
		fsw_target = FSW_PROC;
	} else if (!strcmp(lock, "tasklist_lock")) {
		fsw_target = FSW_TASKLIST;
	} else if (strcmp(lock, "file_systems_lock")) {
		pr_err("lock=%s: want file_systems_lock, binfmt_lock, proc_subdir_lock or tasklist_lock\n",
		       lock);
		return -EINVAL;
	}
	fsw_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("run", 0200, fsw_dir, NULL, &fsw_run_fops);
	debugfs_create_file_unsafe("pairs", 0444, fsw_dir, &fsw_pairs,
				   &fsw_count_fops);
	debugfs_create_file_unsafe("errors", 0444, fsw_dir, &fsw_errors,
				   &fsw_count_fops);
	return 0;
}

static void __exit fsw_exit(void)
{
	debugfs_remove_recursive(fsw_dir);
	mutex_lock(&fsw_lock);
	if (fsw_task)
		kthread_stop(fsw_task);
	fsw_task = NULL;
	fsw_irq_stop();
	mutex_unlock(&fsw_lock);
}

module_init(fsw_init);
module_exit(fsw_exit);
MODULE_DESCRIPTION("Registers and unregisters a dummy file system, binary format or /proc file: the writer of file_systems_lock, binfmt_lock or proc_subdir_lock; or reads tasklist_lock from interrupts (sysrq n)");
MODULE_LICENSE("GPL");
