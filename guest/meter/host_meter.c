// SPDX-License-Identifier: GPL-2.0
/*
 * host_meter: how fast each host core runs a fixed piece of work, while a
 * wall-clock guest runs beside it (guest/meter/README.md).
 *
 * One thread per core listed, pinned to it.  Every PERIOD ms (on an
 * absolute schedule, so that a late sample does not shift the next) it
 * runs WORK iterations of a dependent chain of integer multiplies, adds,
 * shifts and xors, all in registers, and times them with CLOCK_MONOTONIC,
 * the clock the runner stamps its console markers with.  One line per
 * sample on stdout, each written with one write(2):
 *
 *	lockbench-host-meter v1 work=WORK period_ms=PERIOD
 *	sample t_ns=T cpu=C work_ns=N
 *
 * The guest cannot move the number: the work touches no memory (no cache,
 * no TLB, nothing QEMU's translated code could have evicted), runs on the
 * host's CPU and not in QEMU, and its length is fixed; only the core's
 * speed (its clock, an SMT sibling on the physical machine, the
 * hypervisor under this host) and a preemption in the middle of it set
 * the time.  A short untimed run first refills the instruction cache and
 * branch predictors that a switch from QEMU's thread may have cooled.
 *
 * Usage: host_meter --cpus LIST [--period-ms P] [--work N]
 * LIST is a comma list of host CPU numbers; it runs until killed (it asks
 * for SIGTERM when its parent dies).  Exit 2 on bad arguments, 1 when a
 * thread cannot be pinned or started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* The kernel's name, as guest/inside/lockload has it. */
typedef unsigned long long u64;

#define METER_MAX_CPUS		64
#define METER_WARMUP_DIV	16

static unsigned int meter_period_ms = 20;
static unsigned int meter_work = 8000;

struct meter_thread {
	pthread_t tid;
	int cpu;
};

static u64 meter_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * The fixed work: a chain each step of which needs the last, so that the
 * core cannot overlap them and the compiler cannot fold them (the empty
 * asm keeps x opaque).
 */
static u64 meter_chain(u64 x, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		x ^= x >> 29;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void meter_line(const char *buf, int len)
{
	/* one write a line: the threads' lines never interleave */
	while (write(STDOUT_FILENO, buf, len) < 0 && errno == EINTR)
		;
}

static void *meter_thread_fn(void *arg)
{
	struct meter_thread *t = arg;
	u64 x = (u64)t->cpu + 1;
	struct timespec next;
	char buf[96];

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		u64 t0, t1;
		int len;

		next.tv_nsec += (long)meter_period_ms * 1000000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
		x = meter_chain(x, meter_work / METER_WARMUP_DIV);
		t0 = meter_now();
		x = meter_chain(x, meter_work);
		t1 = meter_now();
		len = snprintf(buf, sizeof(buf),
			       "sample t_ns=%llu cpu=%d work_ns=%llu\n",
			       t0 + (t1 - t0) / 2, t->cpu, t1 - t0);
		meter_line(buf, len);
	}
	return (void *)(uintptr_t)x;
}

static void meter_usage_die(const char *why)
{
	fprintf(stderr,
		"host_meter: %s (usage: host_meter --cpus LIST [--period-ms P] [--work N])\n",
		why);
	exit(2);
}

static unsigned int meter_uint(const char *opt, const char *val,
			       unsigned int lo, unsigned int hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-' || v < lo || v > hi) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%.20s '%.20s': want %u..%u", opt,
			 val, lo, hi);
		meter_usage_die(msg);
	}
	return v;
}

/* "0,1,3" into cpus[]; the count. */
static int meter_cpus(const char *s, int *cpus)
{
	const char *p = s;
	int n = 0;

	while (*p) {
		char one[16];
		size_t len = strcspn(p, ",");

		if (!len || len >= sizeof(one) || n == METER_MAX_CPUS)
			meter_usage_die("--cpus: want a comma list of CPU numbers");
		memcpy(one, p, len);
		one[len] = '\0';
		cpus[n++] = meter_uint("--cpus", one, 0, METER_MAX_CPUS - 1);
		p += len;
		if (*p == ',' && *++p == '\0')
			meter_usage_die("--cpus: a comma at the end");
	}
	if (!n)
		meter_usage_die("--cpus: empty");
	return n;
}

int main(int argc, char **argv)
{
	static struct meter_thread th[METER_MAX_CPUS];
	int cpus[METER_MAX_CPUS], n = 0, i;
	char head[96];

	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			meter_usage_die("an option needs a value");
		if (!strcmp(argv[i], "--cpus"))
			n = meter_cpus(argv[i + 1], cpus);
		else if (!strcmp(argv[i], "--period-ms"))
			meter_period_ms = meter_uint(argv[i], argv[i + 1], 1, 10000);
		else if (!strcmp(argv[i], "--work"))
			meter_work = meter_uint(argv[i], argv[i + 1], 100, 100000000);
		else
			meter_usage_die("unknown option");
	}
	if (!n)
		meter_usage_die("--cpus is required");
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	meter_line(head, snprintf(head, sizeof(head),
				  "lockbench-host-meter v1 work=%u period_ms=%u\n",
				  meter_work, meter_period_ms));
	for (i = 0; i < n; i++) {
		pthread_attr_t attr;
		cpu_set_t set;
		int err;

		th[i].cpu = cpus[i];
		CPU_ZERO(&set);
		CPU_SET(cpus[i], &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		err = pthread_create(&th[i].tid, &attr, meter_thread_fn, &th[i]);
		pthread_attr_destroy(&attr);
		if (err) {
			fprintf(stderr, "host_meter: cannot start a thread on CPU %d: %s\n",
				cpus[i], strerror(err));
			return 1;
		}
	}
	pause();
	return 0;
}
