// SPDX-License-Identifier: GPL-2.0
/*
 * lockload: a userspace load generator for kernel locks that userspace
 * reaches, in the spirit of will-it-scale.  One thread per CPU, pinned with
 * sched_setaffinity(), waits at a start gate, then loops a named test case
 * until the stop flag; each thread counts its ops and times one op in N
 * with clock_gettime(CLOCK_MONOTONIC).  The results are printed on stdout
 * in the benchmark module's format, "mbox_bench-results v2"
 * (bench-module/FORMAT.md), with the additive key workload= on the param
 * line, so that the host's analysis reads them as it reads the module's.
 *
 * Usage: lockload CASE [ARG...] [--cpus LIST] [--duration-ms N]
 *                      [--timing N] [--seed N] [--writer DIR] [--run-id N]
 *                      [--outside-execs N] [--locks-per-op K]
 *        lockload --list           (each case and the lock it counts)
 *        lockload --exit0          (exit 0 at once: execve's helper)
 *
 * The named cases are those of ll_cases below; each is a workload of one
 * lock target (kernel-patches/targets/LOCK.toml), whose lock_class is the
 * case's lock and whose writer is the fs_writer mode that --writer
 * drives (tests/unit/test_targets.py holds the two to each other).
 *
 * Cases (acquisitions of file_systems_lock per op, fs/filesystems.c of
 * Linux 6.1):
 *   proc_filesystems  open + read to EOF + close of /proc/filesystems: one
 *                     read_lock(&file_systems_lock), in
 *                     filesystems_proc_show(); the file is a single_open()
 *                     seq_file whose text fits the first seq buffer, so
 *                     show runs once per open (the read at EOF does not
 *                     call it again)
 *   mount_sysfs       mount(2) of sysfs on /sys, where it is already: one
 *                     read_lock in get_fs_type(), then EBUSY (needs root)
 *   sysfs_index       sysfs(2) option 1 (fs name -> index) of a registered
 *                     file system's name: one read_lock in fs_index();
 *                     only where the arch has __NR_sysfs (arm, not arm64)
 *                     and the kernel has CONFIG_SYSFS_SYSCALL (without it
 *                     every op fails with ENOSYS and takes no lock)
 *
 * and of binfmt_lock (fs/exec.c):
 *   execve            vfork + execve of lockload itself with the one
 *                     argument --exit0 (it exits 0 at once) + waitpid:
 *                     three read_lock(&binfmt_lock) per exec of a static
 *                     ELF binary.  search_binary_handler() takes the lock
 *                     once, then once more after each handler it tried;
 *                     our kernels register binfmt_script then binfmt_elf
 *                     (both core_initcall, in fs/Makefile's link order, at
 *                     the list's tail), so an ELF exec tries script
 *                     (-ENOEXEC) and elf: 1 + 2.  The lock is read by
 *                     every exec of the guest, not only the workload's:
 *                     lockload's own exec is counted (3), and
 *                     --outside-execs N adds 3 per other exec between
 *                     lock_stat's clearing and its reading (guest/inside/init.sh
 *                     gives them: its sh -c wrapper, the cat of
 *                     /proc/lock_stat, perf), so that the count is the
 *                     whole of lock_stat's.
 *
 * and of proc_subdir_lock (fs/proc/generic.c):
 *   proc_lookup       stat(2) of /proc/lockload-none, a name that is not
 *                     in /proc: proc_root_lookup() finds it is no pid and
 *                     proc_lookup_de() looks it up under one
 *                     read_lock(&proc_subdir_lock); proc makes no
 *                     negative dentry, so every op looks it up again.
 *                     ENOENT is the op's success (an entry of that name
 *                     would be the error err_found).  An existing entry
 *                     (/proc/filesystems) would not do: its dentry stays
 *                     cached and a stat of it takes no proc_subdir_lock.
 *
 * and of tasklist_lock (kernel/fork.c; taken in kernel/exit.c, signal.c):
 *   tasklist          fork(2); the child _exits at once; poll(2) of its
 *                     pidfd until it is a zombie; waitpid(2); then
 *                     kill(-pgrp, 0) to lockload's process group (its own:
 *                     setpgid() once, one more write).  Three
 *                     write_lock_irq(&tasklist_lock) (copy_process(), the
 *                     child's exit_notify(), release_task() as the parent
 *                     reaps it) and two read_lock (do_wait(), which finds
 *                     the zombie at its first look since the pidfd said
 *                     so, and kill_something_info() for the group), each
 *                     counted: reads in lockops read=, writes in lockops
 *                     write=, with the 3 writes of each of lockload's
 *                     threads (its clone, its exit, its release), and
 *                     the processes around it that lock_stat sees
 *                     (--outside-execs N: 2N + 3 reads, 3N + 1 writes:
 *                     see ll_add_outside()).  With
 *                     --writer (fs_writer.ko lock=tasklist_lock) the
 *                     module calls the sysrq 'n' handler
 *                     (normalize_rt_tasks(), one read_lock) from a hard
 *                     interrupt and from a softirq, as a serial break
 *                     would: its calls are counted as reads.
 *
 * and generic cases, which take their target as arguments and count K
 * acquisitions of whatever lock the target takes per successful op, K
 * given by --locks-per-op K (default 1; 1..1000), measured beforehand by
 * ./run.sh calibrate (docs/targets.md): lockload does not know the lock,
 * and its lockops line says lock=unknown:
 *   read PATH         open + read to EOF + close of PATH
 *   stat PATH         stat(2) of PATH (an error, such as ENOENT, fails)
 *   open PATH         open + close of PATH
 *   syscall NR [ARG...]  syscall(NR, ARG...), up to 6 integer arguments
 *                     (decimal, may be negative); a result of -1 fails
 * PATH is absolute, of at most 200 characters.  The param line says
 * workload=CASE:ARG:...  (read:/proc/iomem, syscall:20), one token.
 *
 * --run-id N: the id of the run line (default 1): guest/inside/init.sh numbers a
 * job's points, as the module numbers its runs.
 *
 * --writer DIR: the fs_writer module's debugfs folder
 * (/sys/kernel/debug/fs_writer): its writer is started as the gate opens
 * and stopped with the stop flag, and its register + unregister pairs of
 * the run are reported as writes=; the module runs in the mode of the
 * case's target's writer (guest/inside/init.sh loads it with lock=MODE
 * from the job line), and each pair takes the write lock twice
 * (write_lock(&file_systems_lock), of binfmt_lock for execve, of
 * proc_subdir_lock for proc_lookup, whose pairs also take read_lock
 * once, counted in the reads).
 *
 * Bad arguments: one line on stderr, exit 2.  Exit 1 when the run could
 * not be made (a thread, an affinity), else 0 (the results' end status
 * says whether the ops went right).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long u64;
typedef unsigned int u32;

/* What bench-module/lat_hist.h takes from the kernel. */
#define U64_MAX			ULLONG_MAX
#define BIT(n)			(1UL << (n))
static inline unsigned int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

#include "lat_hist.h"

/* What bench-module/results_out.h takes from the kernel. */
static u64 ll_now(void);
#define BENCH_NOW()		ll_now()
#define BENCH_RESCHED()		do { } while (0)
#define BENCH_DIV64(a, b)	((a) / (b))
#define BENCH_OUT		FILE
#define bench_out(o, ...)	fprintf(o, __VA_ARGS__)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#define noinline		/* one caller here: the compiler decides */
#include "results_out.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define LL_MAX_CPUS		256
#define LL_MAX_DURATION_MS	600000
#define LL_MAX_TIMING		1024
#define LL_ERR_SLOTS		8
#define LL_BUF			4096
#define LL_MAX_NAMES		64
#define LL_NAME_LEN		32
#define LL_ERR_MOUNTED		(-1)	/* mount_sysfs mounted: err_mounted */
#define LL_ERR_CHILD		(-2)	/* execve's child failed: err_child */
#define LL_ERR_FOUND		(-3)	/* proc_lookup found it: err_found */
#define LL_EXEC_LOCKS		3	/* read_lock(&binfmt_lock) per ELF exec */
#define LL_MAX_OUTSIDE		1000
#define LL_MAX_LOCKS_PER_OP	1000
#define LL_MAX_PATH		200
#define LL_MAX_ARGS		6
#define LL_CPULIST_LEN		1024	/* a cpulist of LL_MAX_CPUS: at most 456 */
#define LL_TASKLIST_READS	2	/* read_lock(&tasklist_lock) per op */
#define LL_TASKLIST_WRITES	3	/* write_lock_irq(&tasklist_lock) per op */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif

struct ll_err {
	int code;
	u64 count;
};

struct ll_thread {
	pthread_t tid;
	int cpu;
	int pinned;		/* 1 pinned, -errno if sched_setaffinity failed */
	u32 rnd;
	u64 ops, hits, errors, lockops, wlockops;
	struct ll_err err[LL_ERR_SLOTS];
	struct bench_lat lat;
	struct bench_ref ref;
	char buf[LL_BUF];
};

struct ll_case {
	const char *name;
	/* one op: 0 on success, else a positive errno; *locks: acquisitions */
	int (*op)(struct ll_thread *t, unsigned int *locks);
	int (*setup)(void);	/* NULL, or 0 / -1 with a message printed */
	const char *lock;	/* the lock counted, lock_stat's class name */
	unsigned int exec_locks;	/* its acquisitions per exec */
	unsigned int writer_reads;	/* its reads per writer pair */
	unsigned int writer_writes;	/* its writes per writer pair */
	unsigned int thread_writes;	/* its writes per lockload thread */
	int min_args, max_args;	/* a generic case's arguments */
};

static int ll_go;		/* the start gate */
static int ll_stop;		/* the stop flag */
static int ll_ready;		/* threads at the gate */
static unsigned int ll_timing = 8;
static u64 ll_setup_locks;	/* acquisitions outside the threads */
static unsigned int ll_locks_per_op = 1;	/* a generic case's K */
static const char *ll_path;	/* read, stat, open: the path */
static long ll_sys_nr;		/* syscall: the number and arguments */
static long ll_sys_arg[LL_MAX_ARGS];

static u64 ll_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void ll_err_add(struct ll_thread *t, int code)
{
	unsigned int i;

	t->errors++;
	for (i = 0; i < LL_ERR_SLOTS; i++) {
		if (t->err[i].code == code || !t->err[i].code) {
			t->err[i].code = code;
			t->err[i].count++;
			return;
		}
	}
	/* More distinct codes than slots: only in the errors total. */
}

/* proc_filesystems: open, read to EOF, close. */
static int ll_op_proc_filesystems(struct ll_thread *t, unsigned int *locks)
{
	ssize_t n;
	int fd, err = 0;

	*locks = 0;
	fd = open("/proc/filesystems", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	do {
		n = read(fd, t->buf, sizeof(t->buf));
		if (n > 0)
			*locks = 1;	/* filesystems_proc_show() ran */
	} while (n > 0);
	if (n < 0)
		err = errno;
	close(fd);
	return err;
}

#ifdef __NR_sysfs
static char ll_names[LL_MAX_NAMES][LL_NAME_LEN];
static unsigned int ll_nr_names;

/* The names sysfs_index looks up: /proc/filesystems, read once. */
static int ll_read_names(void)
{
	char line[128];
	FILE *f = fopen("/proc/filesystems", "r");

	if (!f) {
		fprintf(stderr, "lockload: /proc/filesystems: %s\n",
			strerror(errno));
		return -1;
	}
	while (ll_nr_names < LL_MAX_NAMES && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '\t');

		if (!name)
			continue;
		name++;
		name[strcspn(name, "\n")] = '\0';
		if (!*name || strlen(name) >= LL_NAME_LEN)
			continue;
		strcpy(ll_names[ll_nr_names++], name);
	}
	fclose(f);
	ll_setup_locks++;	/* one filesystems_proc_show() */
	if (!ll_nr_names) {
		fprintf(stderr, "lockload: no file system names in /proc/filesystems\n");
		return -1;
	}
	return 0;
}

static u32 ll_rand(struct ll_thread *t)
{
	u32 x = t->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rnd = x;
	return x;
}

/* sysfs_index: sysfs(1, name) of a registered name, which must be found. */
static int ll_op_sysfs_index(struct ll_thread *t, unsigned int *locks)
{
	const char *name = ll_names[ll_rand(t) % ll_nr_names];
	long r = syscall(__NR_sysfs, 1, name);

	*locks = 0;
	if (r < 0) {
		/* fs_index() takes the lock once getname() succeeded */
		if (errno == EINVAL)
			*locks = 1;
		return errno;
	}
	*locks = 1;
	return 0;
}
#endif

/*
 * mount_sysfs: mount(2) of sysfs on /sys, where it is mounted already.
 * do_new_mount() looks the type up with get_fs_type() (one read_lock),
 * kernfs finds the existing superblock, and do_add_mount() refuses the
 * same file system on the same mount point with EBUSY: nothing is mounted,
 * nothing is logged.  EBUSY is the op's success; a mount that went through
 * (never seen) is undone and counted as the error err_mounted.
 */
static int ll_op_mount_sysfs(struct ll_thread *t, unsigned int *locks)
{
	(void)t;
	*locks = 0;
	if (!mount("sysfs", "/sys", "sysfs", 0, NULL)) {
		*locks = 1;
		umount2("/sys", 0);
		return LL_ERR_MOUNTED;
	}
	if (errno != EBUSY)
		return errno;
	*locks = 1;
	return 0;
}

static char ll_self[PATH_MAX];	/* lockload's own path, for execve */

static int ll_find_self(void)
{
	ssize_t n = readlink("/proc/self/exe", ll_self, sizeof(ll_self) - 1);

	if (n <= 0 || n >= (ssize_t)sizeof(ll_self) - 1) {
		fprintf(stderr, "lockload: /proc/self/exe: %s\n",
			n < 0 ? strerror(errno) : "bad length");
		return -1;
	}
	ll_self[n] = '\0';
	return 0;
}

/*
 * execve: vfork + execve of lockload --exit0 + waitpid.  An exec that
 * failed before the binary was looked at (the child's exit 127) takes no
 * binfmt_lock; a child that exited otherwise than 0 is the error
 * err_child, its exec counted as done.
 */
static int ll_op_execve(struct ll_thread *t, unsigned int *locks)
{
	static char *const argv[] = { ll_self, "--exit0", NULL };
	static char *const envp[] = { NULL };
	int status;
	pid_t pid;

	(void)t;
	*locks = 0;
	pid = vfork();
	if (pid < 0)
		return errno;
	if (!pid) {
		execve(ll_self, argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return LL_ERR_CHILD;
	*locks = LL_EXEC_LOCKS;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return LL_ERR_CHILD;
	return 0;
}

/* proc_lookup: stat of a name /proc has not, ENOENT. */
static int ll_op_proc_lookup(struct ll_thread *t, unsigned int *locks)
{
	struct stat st;

	(void)t;
	*locks = 1;
	if (!stat("/proc/lockload-none", &st))
		return LL_ERR_FOUND;
	return errno == ENOENT ? 0 : errno;
}

static pid_t ll_pgrp;	/* tasklist: lockload's process group */

static u64 ll_setup_wlocks;	/* writes outside the threads */

/*
 * A process group of lockload's own (the guest's processes are all in
 * init's, pid 0's, with the kernel threads): setpgid() takes
 * write_lock_irq(&tasklist_lock) once.
 */
static int ll_tasklist_setup(void)
{
	if (setpgid(0, 0)) {
		fprintf(stderr, "lockload: setpgid: %s\n", strerror(errno));
		return -1;
	}
	ll_setup_wlocks++;
	ll_pgrp = getpgrp();
	return 0;
}

/*
 * tasklist: fork + _exit, the child's pidfd polled until it is a zombie,
 * waitpid, kill(-pgrp, 0).  A step that failed counts the locks taken
 * before it: the fork's write, the exit's and the release's once reaped.
 */
static int ll_op_tasklist(struct ll_thread *t, unsigned int *locks)
{
	struct pollfd pfd;
	int status, err = 0;
	pid_t pid;

	*locks = 0;
	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid)
		_exit(0);
	t->wlockops++;			/* copy_process() */
	pfd.fd = syscall(__NR_pidfd_open, pid, 0);
	pfd.events = POLLIN;
	if (pfd.fd < 0)
		err = errno;
	else
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	t->wlockops += 2;		/* exit_notify(), release_task() */
	if (pfd.fd < 0)
		return err;		/* do_wait()'s reads: not known */
	close(pfd.fd);
	*locks = 1;			/* do_wait() */
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return LL_ERR_CHILD;
	if (kill(-ll_pgrp, 0))
		return errno;
	*locks = LL_TASKLIST_READS;	/* and kill_something_info() */
	return 0;
}

/* read PATH: open, read to EOF, close; K acquisitions if all went right. */
static int ll_op_read(struct ll_thread *t, unsigned int *locks)
{
	ssize_t n;
	int fd, err = 0;

	*locks = 0;
	fd = open(ll_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	do {
		n = read(fd, t->buf, sizeof(t->buf));
	} while (n > 0);
	if (n < 0)
		err = errno;
	close(fd);
	if (!err)
		*locks = ll_locks_per_op;
	return err;
}

/* stat PATH */
static int ll_op_stat(struct ll_thread *t, unsigned int *locks)
{
	struct stat st;

	(void)t;
	*locks = 0;
	if (stat(ll_path, &st))
		return errno;
	*locks = ll_locks_per_op;
	return 0;
}

/* open PATH: open + close */
static int ll_op_open(struct ll_thread *t, unsigned int *locks)
{
	int fd;

	(void)t;
	*locks = 0;
	fd = open(ll_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	*locks = ll_locks_per_op;
	return 0;
}

/* syscall NR [ARG...]: the arguments not given are 0. */
static int ll_op_syscall(struct ll_thread *t, unsigned int *locks)
{
	(void)t;
	*locks = 0;
	if (syscall(ll_sys_nr, ll_sys_arg[0], ll_sys_arg[1], ll_sys_arg[2],
		    ll_sys_arg[3], ll_sys_arg[4], ll_sys_arg[5]) == -1)
		return errno;
	*locks = ll_locks_per_op;
	return 0;
}

static const struct ll_case ll_cases[] = {
	{ "proc_filesystems", ll_op_proc_filesystems, NULL, "file_systems_lock", 0, 0, 2, 0, 0, 0 },
	{ "mount_sysfs", ll_op_mount_sysfs, NULL, "file_systems_lock", 0, 0, 2, 0, 0, 0 },
#ifdef __NR_sysfs
	{ "sysfs_index", ll_op_sysfs_index, ll_read_names, "file_systems_lock", 0, 0, 2, 0, 0, 0 },
#else
	{ "sysfs_index", NULL, NULL, "file_systems_lock", 0, 0, 2, 0, 0, 0 },
#endif
	{ "execve", ll_op_execve, ll_find_self, "binfmt_lock", LL_EXEC_LOCKS, 0, 2, 0, 0, 0 },
	{ "proc_lookup", ll_op_proc_lookup, NULL, "proc_subdir_lock", 0, 1, 2, 0, 0, 0 },
	{ "tasklist", ll_op_tasklist, ll_tasklist_setup, "tasklist_lock", 0, 1, 0, 3, 0, 0 },
	{ "read", ll_op_read, NULL, "unknown", 0, 0, 2, 0, 1, 1 },
	{ "stat", ll_op_stat, NULL, "unknown", 0, 0, 2, 0, 1, 1 },
	{ "open", ll_op_open, NULL, "unknown", 0, 0, 2, 0, 1, 1 },
	{ "syscall", ll_op_syscall, NULL, "unknown", 0, 0, 2, 0, 1, 1 + LL_MAX_ARGS },
};

static const struct ll_case *ll_case;

static void *ll_thread_fn(void *arg)
{
	struct ll_thread *t = arg;
	cpu_set_t set;
	u64 n = 0;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	t->pinned = sched_setaffinity(0, sizeof(set), &set) ? -errno : 1;
	__atomic_add_fetch(&ll_ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&ll_go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&ll_stop, __ATOMIC_RELAXED)) {
		unsigned int locks;
		u64 t0 = 0;
		int timed = ll_timing && n % ll_timing == 0;
		int err;

		if (timed)
			t0 = ll_now();
		err = ll_case->op(t, &locks);
		if (timed)
			bench_lat_add(&t->lat, ll_now() - t0);
		t->ops++;
		t->lockops += locks;
		if (err)
			ll_err_add(t, err);
		else
			t->hits++;
		if (n % BENCH_REF_EVERY == 0)
			bench_ref_probe(&t->ref);
		n++;
	}
	return NULL;
}

static void ll_usage_die(const char *what)
{
	fprintf(stderr,
		"lockload: %s (usage: lockload CASE [ARG...] [--cpus LIST] [--duration-ms N] [--timing N] [--seed N] [--writer DIR] [--run-id N] [--outside-execs N] [--locks-per-op K]; lockload --list names the cases)\n",
		what);
	exit(2);
}

/* A decimal integer in lo..hi, or exit 2 naming the option. */
static unsigned long long ll_uint(const char *opt, const char *s,
				  unsigned long long lo, unsigned long long hi)
{
	char msg[160];
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi) {
		snprintf(msg, sizeof(msg), "%s '%.40s': want an integer in %llu..%llu",
			 opt, s, lo, hi);
		ll_usage_die(msg);
	}
	return v;
}

/* A decimal integer that fits a long (a syscall's), or exit 2. */
static long ll_long(const char *what, const char *s)
{
	char msg[160];
	const char *d = *s == '-' ? s + 1 : s;
	long v;
	char *end;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*d < '0' || *d > '9' || *end || errno) {
		snprintf(msg, sizeof(msg), "%s '%.40s': want a decimal integer", what, s);
		ll_usage_die(msg);
	}
	return v;
}

/*
 * A generic case's arguments, argv[2] up to the first option: its path or
 * its syscall, and the workload= token of the param line.  Exit 2 if bad.
 */
static int ll_case_args(int argc, char **argv, char *token, size_t size)
{
	int n = 0, i;
	size_t len;

	while (2 + n < argc && strncmp(argv[2 + n], "--", 2))
		n++;
	if (n < ll_case->min_args || n > ll_case->max_args) {
		char msg[80];

		snprintf(msg, sizeof(msg), "case %s takes %d to %d arguments, not %d",
			 ll_case->name, ll_case->min_args, ll_case->max_args, n);
		ll_usage_die(msg);
	}
	len = snprintf(token, size, "%s", ll_case->name);
	for (i = 0; i < n; i++) {
		const char *a = argv[2 + i];

		if (strchr(a, ':') || strpbrk(a, " \t\n") || !*a)
			ll_usage_die("an argument with ':', a space or nothing");
		len += snprintf(token + len, len < size ? size - len : 0, ":%s", a);
	}
	if (len >= size)
		ll_usage_die("arguments too long");
	if (ll_case->op == ll_op_syscall) {
		ll_sys_nr = ll_uint("syscall NR", argv[2], 0, 4095);
		for (i = 1; i < n; i++)
			ll_sys_arg[i - 1] = ll_long("syscall ARG", argv[2 + i]);
	} else {
		ll_path = argv[2];
		if (ll_path[0] != '/' || strlen(ll_path) > LL_MAX_PATH)
			ll_usage_die("PATH must be absolute, of at most 200 characters");
	}
	return 2 + n;
}

/* A cpulist ("0-3,6") into @set, or exit 2. */
static void ll_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (*p) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			goto bad;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtoul(p, &end, 10);
		}
		if (a > b || b >= LL_MAX_CPUS)
			goto bad;
		for (; a <= b; a++)
			CPU_SET(a, set);
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (CPU_COUNT(set))
		return;
bad:
	fprintf(stderr, "lockload: --cpus '%.40s': want a cpulist such as 0-3,6 (CPUs below %d)\n",
		s, LL_MAX_CPUS);
	exit(2);
}

/* @set as a normalised cpulist, in @buf of @size bytes. */
static void ll_cpulist_str(const cpu_set_t *set, char *buf, size_t size)
{
	size_t len = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < LL_MAX_CPUS) {
		int e;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		for (e = c; e + 1 < LL_MAX_CPUS && CPU_ISSET(e + 1, set); e++)
			;
		if (len < size)
			len += snprintf(buf + len, size - len,
					e > c ? "%s%d-%d" : "%s%d",
					len ? "," : "", c, e);
		c = e + 1;
	}
}

/* Write @val to the writer's file @name in @dir; 0 or -1. */
static int ll_writer_put(const char *dir, const char *name, const char *val)
{
	char path[256];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/* Read the writer's counter @name in @dir; 0 or -1. */
static int ll_writer_get(const char *dir, const char *name, u64 *v)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* What the command line asks for, but the case and its arguments. */
struct ll_opts {
	unsigned long long duration_ms, seed, run_id, outside;
	const char *writer;	/* the fs_writer module's folder, or NULL */
	cpu_set_t cpus;
	char workload[LL_MAX_PATH + 128];	/* the param line's workload= */
};

/* A run: its threads, its window, and their counts summed. */
struct ll_run {
	struct ll_thread th[LL_MAX_CPUS];
	unsigned int nthreads;
	u64 clock_ns, elapsed;
	u64 pairs;		/* the writer's pairs in the window */
	int writer_ok;
	u64 ops, hits, errors, lockops, wlockops, min_ops, max_ops;
	unsigned int without_ops, unpinned;
	struct bench_lat lat;
	struct bench_ref ref;
};

/*
 * --list: each case and the lock it counts, one a line ("proc_lookup
 * proc_subdir_lock"; a generic case's lock is "unknown"), so that the host
 * and the tests read lockload's cases rather than restate them.
 */
static void ll_list(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ll_cases); i++)
		printf("%s %s\n", ll_cases[i].name, ll_cases[i].lock);
}

/*
 * argv[1], the case, and a generic case's arguments; the workload= token
 * in @o.  Returns the index of the first option; exit 2 if bad.
 */
static int ll_parse_case(int argc, char **argv, struct ll_opts *o)
{
	unsigned int i;

	if (argc < 2 || argv[1][0] == '-')
		ll_usage_die("missing CASE");
	for (i = 0; i < ARRAY_SIZE(ll_cases); i++)
		if (!strcmp(argv[1], ll_cases[i].name))
			ll_case = &ll_cases[i];
	if (!ll_case) {
		char msg[256];

		snprintf(msg, sizeof(msg), "unknown case '%.40s'", argv[1]);
		ll_usage_die(msg);
	}
	snprintf(o->workload, sizeof(o->workload), "%s", ll_case->name);
	if (!ll_case->max_args)
		return 2;
	return ll_case_args(argc, argv, o->workload, sizeof(o->workload));
}

/* The options from argv[@first] on, into @o and ll_*; exit 2 if bad. */
static void ll_parse_options(int argc, char **argv, int first,
			     struct ll_opts *o)
{
	int c;

	for (c = first; c < argc; c += 2) {
		const char *opt = argv[c], *val = argv[c + 1];

		if (!val) {
			char msg[80];

			snprintf(msg, sizeof(msg), "%.40s needs a value", opt);
			ll_usage_die(msg);
		}
		if (!strcmp(opt, "--cpus")) {
			ll_cpulist(val, &o->cpus);
		} else if (!strcmp(opt, "--duration-ms")) {
			o->duration_ms = ll_uint(opt, val, 1, LL_MAX_DURATION_MS);
		} else if (!strcmp(opt, "--timing")) {
			ll_timing = ll_uint(opt, val, 0, LL_MAX_TIMING);
		} else if (!strcmp(opt, "--seed")) {
			o->seed = ll_uint(opt, val, 0, UINT32_MAX);
		} else if (!strcmp(opt, "--run-id")) {
			o->run_id = ll_uint(opt, val, 1, UINT32_MAX);
		} else if (!strcmp(opt, "--outside-execs")) {
			o->outside = ll_uint(opt, val, 0, LL_MAX_OUTSIDE);
		} else if (!strcmp(opt, "--locks-per-op") && ll_case->max_args) {
			ll_locks_per_op = ll_uint(opt, val, 1, LL_MAX_LOCKS_PER_OP);
		} else if (!strcmp(opt, "--writer")) {
			o->writer = val;
		} else {
			char msg[80];

			snprintf(msg, sizeof(msg), "unknown option '%.40s'", opt);
			ll_usage_die(msg);
		}
	}
}

/* A thread per CPU of the set, pinned, at the closed gate; 0 or -1. */
static int ll_start_threads(const struct ll_opts *o, struct ll_run *r)
{
	int c;

	for (c = 0; c < LL_MAX_CPUS; c++) {
		struct ll_thread *t;

		if (!CPU_ISSET(c, &o->cpus))
			continue;
		t = &r->th[r->nthreads++];
		t->cpu = c;
		bench_lat_init(&t->lat);
		/* xorshift32 must not start at 0 */
		t->rnd = (u32)(o->seed * 2654435761u + c + 1) | 1;
		if (pthread_create(&t->tid, NULL, ll_thread_fn, t)) {
			fprintf(stderr, "lockload: cannot create the thread for CPU %d\n", c);
			return -1;
		}
	}
	return 0;
}

/* Start the writer, if any; *@pairs0, its pair count before the window. */
static void ll_writer_start(const struct ll_opts *o, struct ll_run *r,
			    u64 *pairs0)
{
	if (o->writer && (ll_writer_get(o->writer, "pairs", pairs0) ||
			  ll_writer_put(o->writer, "run", "1"))) {
		fprintf(stderr, "lockload: cannot start the writer in %s\n", o->writer);
		r->writer_ok = 0;
	}
}

/* Stop the writer, if any: its pairs of the window (0 if it failed). */
static void ll_writer_stop(const struct ll_opts *o, struct ll_run *r,
			   u64 pairs0)
{
	u64 pairs = 0;

	if (o->writer && r->writer_ok &&
	    (ll_writer_put(o->writer, "run", "0") ||
	     ll_writer_get(o->writer, "pairs", &pairs))) {
		fprintf(stderr, "lockload: cannot stop or read the writer in %s\n", o->writer);
		r->writer_ok = 0;
	}
	r->pairs = r->writer_ok && pairs >= pairs0 ? pairs - pairs0 : 0;
}

/*
 * The timed window: the clock's cost measured while the threads come to
 * the gate; the writer started; the gate open for duration_ms; the stop
 * flag set, the writer stopped and the threads joined.
 */
static void ll_window(const struct ll_opts *o, struct ll_run *r)
{
	struct timespec ts;
	u64 t0, pairs0 = 0;
	unsigned int i;

	r->clock_ns = bench_clock_read_ns();
	while (__atomic_load_n(&ll_ready, __ATOMIC_SEQ_CST) < (int)r->nthreads)
		sched_yield();

	ll_writer_start(o, r, &pairs0);
	t0 = ll_now();
	__atomic_store_n(&ll_go, 1, __ATOMIC_RELEASE);
	ts.tv_sec = o->duration_ms / 1000;
	ts.tv_nsec = (o->duration_ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&ll_stop, 1, __ATOMIC_RELAXED);
	r->elapsed = ll_now() - t0;
	ll_writer_stop(o, r, pairs0);
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->th[i].tid, NULL);
}

/* The threads' counts summed, their fewest and most ops, the checks'. */
static void ll_sum_threads(struct ll_run *r)
{
	unsigned int i;

	r->min_ops = ULLONG_MAX;
	bench_lat_init(&r->lat);
	for (i = 0; i < r->nthreads; i++) {
		const struct ll_thread *t = &r->th[i];

		r->ops += t->ops;
		r->hits += t->hits;
		r->errors += t->errors;
		r->lockops += t->lockops;
		r->wlockops += t->wlockops;
		if (t->ops < r->min_ops)
			r->min_ops = t->ops;
		if (t->ops > r->max_ops)
			r->max_ops = t->ops;
		r->without_ops += !t->ops;
		r->unpinned += t->pinned != 1;
		bench_lat_merge(&r->lat, &t->lat);
		bench_ref_merge(&r->ref, &t->ref);
	}
}

/*
 * The acquisitions the threads' ops did not count, into the lockops
 * line's: lockload's setup, the execs and processes around it that
 * lock_stat sees, the writer's pairs, the threads' own.
 */
static void ll_add_outside(const struct ll_opts *o, struct ll_run *r)
{
	r->lockops += ll_setup_locks;
	/* lockload's own exec, and the others that lock_stat sees */
	r->lockops += (1 + o->outside) * ll_case->exec_locks;
	/*
	 * tasklist: the processes around lockload between lock_stat's
	 * clearing and its reading, the --outside-execs ones (sh -c, perf,
	 * the cat of /proc/lock_stat) and lockload itself: each is forked
	 * (one write), each but the cat exits and is reaped (two writes) by
	 * a blocking wait (two reads: a scan before the exit, one after),
	 * and the shells' reaping loops read it 3 times more: counted on
	 * real boots with and without perf, on the rwlock and the spinlock
	 * (tests/t-tasklist.sh).
	 */
	if (ll_case->op == ll_op_tasklist) {
		r->lockops += 2 * o->outside + 3;
		r->wlockops += 3 * o->outside + 1;
	}
	/* the writer's reads: proc_create()'s xlate_proc_name() */
	r->lockops += r->pairs * ll_case->writer_reads;
	/*
	 * the writer's writes, and the threads' own (tasklist: each clone,
	 * exit and release takes tasklist_lock for writing)
	 */
	r->wlockops += r->pairs * ll_case->writer_writes +
		       r->nthreads * ll_case->thread_writes + ll_setup_wlocks;
}

/* The name of an error of an op, for its err_NAME= key; NULL: none. */
static const char *ll_err_name(int code)
{
	switch (code) {
	case LL_ERR_MOUNTED:
		return "mounted";
	case LL_ERR_CHILD:
		return "child";
	case LL_ERR_FOUND:
		return "found";
	default:
		return strerrorname_np(code);
	}
}

/* A "thread" line: the shared keys, then lockload's errors and pinned=. */
static void ll_print_thread(const struct ll_thread *t)
{
	unsigned int e;

	bench_out_thread(stdout, t->cpu, t->ops, t->ops, t->hits, 0, 0,
			 t->errors, &t->ref);
	for (e = 0; e < LL_ERR_SLOTS && t->err[e].code; e++)
		bench_out_err(stdout, ll_err_name(t->err[e].code),
			      t->err[e].code, t->err[e].count);
	bench_out_key(stdout, "pinned", t->pinned == 1);
	bench_out_eol(stdout);
}

/* The results on stdout, as the module writes them (results_out.h). */
static void ll_print_results(const struct ll_opts *o, const struct ll_run *r)
{
	static const struct bench_lat none;	/* lat op=write: untimed */
	char cpus[LL_CPULIST_LEN];
	char params[LL_CPULIST_LEN + sizeof(o->workload) + 160];
	bool success = !r->errors && !r->without_ops && !r->unpinned &&
		       r->writer_ok;
	unsigned int i;

	ll_cpulist_str(&o->cpus, cpus, sizeof(cpus));
	snprintf(params, sizeof(params),
		 "read_pct=100 mailboxes=0 miss_pct=0 duration_ms=%llu cpus=%s seed=%llu timing=%u think_ns=0 workload=%s writer=%d",
		 o->duration_ms, cpus, o->seed, ll_timing, o->workload,
		 o->writer ? 1 : 0);
	bench_out_head(stdout, params);
	bench_out_run(stdout, o->run_id, r->nthreads, r->elapsed, r->clock_ns,
		      r->ops, ll_timing);
	for (i = 0; i < r->nthreads; i++)
		ll_print_thread(&r->th[i]);
	if (ll_timing) {
		bench_out_lat(stdout, "lookup", &r->lat);
		bench_out_lat(stdout, "write", &none);
	}
	bench_out_total(stdout, r->ops, r->ops, r->hits, 0, r->pairs,
			r->errors,
			r->elapsed ? r->ops * 1000000000ull / r->elapsed : 0);
	bench_out_lockops(stdout, r->lockops, r->wlockops, ll_case->lock);
	bench_out_ref(stdout, &r->ref);
	bench_out_fairness(stdout, r->min_ops, r->max_ops);
	bench_out_check(stdout, "progress", !r->without_ops,
			"threads_without_ops", r->without_ops);
	bench_out_eol(stdout);
	bench_out_check(stdout, "pinned", !r->unpinned, "threads_unpinned",
			r->unpinned);
	bench_out_eol(stdout);
	if (o->writer) {
		bench_out_check(stdout, "writer", r->writer_ok, "pairs",
				r->pairs);
		bench_out_eol(stdout);
	}
	bench_out_end(stdout, success);
}

int main(int argc, char **argv)
{
	static struct ll_run run = { .writer_ok = 1 };
	struct ll_opts opts = {
		.duration_ms = 1000, .seed = 1, .run_id = 1,
	};
	int first;

	if (argc == 2 && !strcmp(argv[1], "--exit0"))
		return 0;
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		ll_list();
		return 0;
	}
	first = ll_parse_case(argc, argv, &opts);
	if (sched_getaffinity(0, sizeof(opts.cpus), &opts.cpus)) {
		fprintf(stderr, "lockload: sched_getaffinity: %s\n", strerror(errno));
		return 1;
	}
	ll_parse_options(argc, argv, first, &opts);
	if (!ll_case->op) {
		fprintf(stderr, "lockload: case %s: this arch has no sysfs(2) system call\n",
			ll_case->name);
		return 2;
	}
	if (ll_case->setup && ll_case->setup())
		return 1;

	if (ll_start_threads(&opts, &run))
		return 1;
	ll_window(&opts, &run);
	ll_sum_threads(&run);
	ll_add_outside(&opts, &run);
	ll_print_results(&opts, &run);
	return 0;
}
