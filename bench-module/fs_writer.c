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

#define FSW_MAX_RATE_HZ	100000

static unsigned int rate_hz = 100;
module_param(rate_hz, uint, 0644);
MODULE_PARM_DESC(rate_hz, "Register + unregister pairs per second, 1..100000 (default 100)");

static char *lock = "file_systems_lock";
module_param(lock, charp, 0444);
MODULE_PARM_DESC(lock, "The lock written: file_systems_lock (default), binfmt_lock or proc_subdir_lock");

enum fsw_target { FSW_FS, FSW_BINFMT, FSW_PROC };
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
		fsw_task = kthread_run(fsw_thread, &fsw_rate, "fs_writer");
		if (IS_ERR(fsw_task)) {
			ret = PTR_ERR(fsw_task);
			fsw_task = NULL;
			goto out;
		}
	} else if (!on && fsw_task) {
		kthread_stop(fsw_task);
		fsw_task = NULL;
	}
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
	} else if (strcmp(lock, "file_systems_lock")) {
		pr_err("lock=%s: want file_systems_lock, binfmt_lock or proc_subdir_lock\n",
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
	mutex_unlock(&fsw_lock);
}

module_init(fsw_init);
module_exit(fsw_exit);
MODULE_DESCRIPTION("Registers and unregisters a dummy file system, binary format or /proc file: the writer of file_systems_lock, binfmt_lock or proc_subdir_lock");
MODULE_LICENSE("GPL");
