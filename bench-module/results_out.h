/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmark module and guest/inside/lockload both put in a results file
 * (FORMAT.md), in one place, as lat_hist.h is for the histograms: the
 * host-speed probe ("ref") and the cost of a clock read, which each
 * measures, the timing cost, and every line of the format.  Each includer
 * gathers its own numbers and adds its own keys (bench_out_key(),
 * bench_out_err(), FORMAT.md says which are whose); the record words,
 * the shared keys and their order are written here only.
 *
 * lat_hist.h comes first.  The includer defines, as the kernel has them
 * or as userspace stand-ins:
 *   BENCH_NOW()              a monotonic clock in ns (local_clock())
 *   BENCH_RESCHED()          where a long loop may yield (cond_resched())
 *   BENCH_DIV64(a, b)        u64 by u64 (div64_u64())
 *   BENCH_OUT                what the results are written to
 *                            (struct seq_file)
 *   bench_out(o, fmt, ...)   printf onto it (seq_printf())
 *   WRITE_ONCE() and noinline.
 */
#ifndef MBOX_BENCH_RESULTS_OUT_H
#define MBOX_BENCH_RESULTS_OUT_H

/*
 * The host under TCG does not run at one speed: a host core's throughput
 * was seen to halve and recover within seconds (other tenants on the
 * physical machine), and a guest's ops/s with it.  So each thread also
 * times a fixed reference computation, lock-free and the same in every
 * kernel, once every BENCH_REF_EVERY ops, all through the run: the host
 * speed each thread saw, measured while it ran, against which the
 * analysis can normalise (FORMAT.md, "ref").
 */
#define BENCH_REF_EVERY		64
#define BENCH_REF_WORDS		64
#define BENCH_REF_PASSES	4

/* A clock read's cost: the best of a few back-to-back loops. */
#define BENCH_CAL_READS		10000
#define BENCH_CAL_ROUNDS	3

struct bench_ref {
	u64 loops;
	u64 ns;
	u64 hist[BENCH_FINE_BUCKETS];
	u32 buf[BENCH_REF_WORDS];	/* a thread's own: nothing shared */
};

/*
 * The reference computation: loads, stores and arithmetic on a
 * thread-private buffer, a few microseconds under TCG.  It takes no lock
 * and touches nothing shared, so its time depends on the host alone.
 * Not inlined, so that it is the same code wherever it is called.
 */
static noinline void bench_ref_probe(struct bench_ref *r)
{
	u32 x = r->buf[BENCH_REF_WORDS - 1];
	u64 t0 = BENCH_NOW();
	int pass, i;

	for (pass = 0; pass < BENCH_REF_PASSES; pass++)
		for (i = 0; i < BENCH_REF_WORDS; i++) {
			x = x * 1664525 + 1013904223 + r->buf[i];
			WRITE_ONCE(r->buf[i], x);
		}
	t0 = BENCH_NOW() - t0;
	r->ns += t0;
	r->loops++;
	r->hist[bench_fine_bucket(t0)]++;
}

static inline void bench_ref_merge(struct bench_ref *sum,
				   const struct bench_ref *r)
{
	sum->loops += r->loops;
	sum->ns += r->ns;
	bench_fine_merge(sum->hist, r->hist);
}

/* Cost of one BENCH_NOW() read, in ns. */
static inline u64 bench_clock_read_ns(void)
{
	u64 best = U64_MAX;
	int round, i;

	for (round = 0; round < BENCH_CAL_ROUNDS; round++) {
		u64 t0 = BENCH_NOW();

		for (i = 0; i < BENCH_CAL_READS; i++)
			BENCH_NOW();
		t0 = BENCH_NOW() - t0;
		if (t0 < best)
			best = t0;
		BENCH_RESCHED();
	}
	return BENCH_DIV64(best + BENCH_CAL_READS / 2, BENCH_CAL_READS);
}

/* The "fine" lines of @hist, those rows that hold a count. */
static inline void bench_out_fine(BENCH_OUT *o, const char *of,
				  const u64 *hist)
{
	char line[BENCH_FINE_LINE];
	unsigned int row;

	for (row = 0; row < BENCH_FINE_ROWS; row++)
		if (bench_fine_line(line, of, row, hist))
			bench_out(o, "%s", line);
}

/* The "lat" line of op @op, then its "fine" lines. */
static inline void bench_out_lat(BENCH_OUT *o, const char *op,
				 const struct bench_lat *l)
{
	unsigned int b;

	bench_out(o, "lat op=%s count=%llu min_ns=%llu max_ns=%llu sum_ns=%llu hist=",
		  op, l->count, l->count ? l->min_ns : 0, l->max_ns,
		  l->sum_ns);
	for (b = 0; b < BENCH_HIST_BUCKETS; b++)
		bench_out(o, b ? ",%llu" : "%llu", l->hist[b]);
	bench_out(o, "\n");
	bench_out_fine(o, op, l->fine);
}

/* The "ref" line of all threads' probes, then its "fine" lines. */
static inline void bench_out_ref(BENCH_OUT *o, const struct bench_ref *sum)
{
	bench_out(o, "ref loops=%llu ns=%llu every=%d words=%d passes=%d\n",
		  sum->loops, sum->ns, BENCH_REF_EVERY, BENCH_REF_WORDS,
		  BENCH_REF_PASSES);
	bench_out_fine(o, "ref", sum->hist);
}

/*
 * The "fairness" line: the fewest and most ops of a thread, max/min with
 * two decimals, rounded, and locktorture's flag (max/2 > min).
 */
static inline void bench_out_fairness(BENCH_OUT *o, u64 min_ops, u64 max_ops)
{
	u64 spread;

	bench_out(o, "fairness min_ops=%llu max_ops=%llu", min_ops, max_ops);
	if (!min_ops) {
		bench_out(o, " spread=inf flag=???\n");
		return;
	}
	spread = BENCH_DIV64(max_ops * 100 + min_ops / 2, min_ops);
	bench_out(o, " spread=%llu.%02llu flag=%s\n", BENCH_DIV64(spread, 100),
		  spread - BENCH_DIV64(spread, 100) * 100,
		  max_ops / 2 > min_ops ? "???" : "ok");
}

/*
 * What timing cost a run, in hundredths of a percent of the threads'
 * time (FORMAT.md, "run" timing_cost_pct): two clock reads of
 * @clock_read_ns per timed op, one op in @timing timed,
 * 2 * clock_read_ns * ops / timing / (elapsed_ns * threads), truncated,
 * 0 with timing=0.  One division of the whole product, which is what
 * dividing by timing and then by the time gives too: a truncated
 * quotient truncated again is the quotient of the product.  No u64
 * overflows on the way: 2 * 10000 * 1000 ns * 1e11 ops is 2e18, and
 * 600 s * 256 threads * 1024 is 1.6e17.  An estimate from clock_read_ns;
 * ./run.sh overhead measures the real cost, histogram update included.
 */
static inline u64 bench_timing_cost(u64 clock_read_ns, u64 ops,
				    u64 elapsed_ns, unsigned int threads,
				    unsigned int timing)
{
	u64 div = elapsed_ns * threads * timing;

	if (!div)
		return 0;
	return BENCH_DIV64(2 * 10000 * clock_read_ns * ops, div);
}

/* The first two lines: the format's name and "param" with @params. */
static inline void bench_out_head(BENCH_OUT *o, const char *params)
{
	bench_out(o, "mbox_bench-results v2\n");
	bench_out(o, "param %s\n", params);
}

/* The "run" line; @ops, all threads', give its timing cost. */
static inline void bench_out_run(BENCH_OUT *o, u64 id, unsigned int threads,
				 u64 elapsed_ns, u64 clock_read_ns, u64 ops,
				 unsigned int timing)
{
	u64 cost = bench_timing_cost(clock_read_ns, ops, elapsed_ns, threads,
				     timing);

	bench_out(o,
		  "run id=%llu threads=%u elapsed_ns=%llu clock_read_ns=%llu timing_cost_pct=%llu.%02llu\n",
		  id, threads, elapsed_ns, clock_read_ns,
		  BENCH_DIV64(cost, 100), cost - BENCH_DIV64(cost, 100) * 100);
}

/*
 * The keys of a "thread" line that every results file has, its probes'
 * from @ref.  The line goes on: its err_NAME= keys (bench_out_err()),
 * the includer's own keys (bench_out_key()), then bench_out_eol().
 */
static inline void bench_out_thread(BENCH_OUT *o, unsigned int cpu, u64 ops,
				    u64 lookups, u64 hits, u64 misses,
				    u64 writes, u64 errors,
				    const struct bench_ref *ref)
{
	bench_out(o,
		  "thread cpu=%u ops=%llu lookups=%llu hits=%llu misses=%llu writes=%llu errors=%llu ref_loops=%llu ref_ns=%llu",
		  cpu, ops, lookups, hits, misses, writes, errors, ref->loops,
		  ref->ns);
}

/* " err_NAME=COUNT" on a thread line; NULL @name: err_CODE=COUNT. */
static inline void bench_out_err(BENCH_OUT *o, const char *name, int code,
				 u64 count)
{
	if (name)
		bench_out(o, " err_%s=%llu", name, count);
	else
		bench_out(o, " err_%d=%llu", code, count);
}

/* " KEY=VALUE" on the line under way. */
static inline void bench_out_key(BENCH_OUT *o, const char *key, u64 val)
{
	bench_out(o, " %s=%llu", key, val);
}

/* The end of the line under way. */
static inline void bench_out_eol(BENCH_OUT *o)
{
	bench_out(o, "\n");
}

/* The "total" line. */
static inline void bench_out_total(BENCH_OUT *o, u64 ops, u64 lookups,
				   u64 hits, u64 misses, u64 writes,
				   u64 errors, u64 ops_per_sec)
{
	bench_out(o,
		  "total ops=%llu lookups=%llu hits=%llu misses=%llu writes=%llu errors=%llu ops_per_sec=%llu\n",
		  ops, lookups, hits, misses, writes, errors, ops_per_sec);
}

/* The "lockops" line; @lock, the lock's name, NULL where it goes without. */
static inline void bench_out_lockops(BENCH_OUT *o, u64 read, u64 write,
				     const char *lock)
{
	bench_out(o, "lockops read=%llu write=%llu", read, write);
	if (lock)
		bench_out(o, " lock=%s", lock);
	bench_out_eol(o);
}

/*
 * A "check" line's head, NAME=ok|fail and its first key (every check
 * has one); more keys may follow (bench_out_key()), then bench_out_eol().
 */
static inline void bench_out_check(BENCH_OUT *o, const char *name, bool ok,
				   const char *key, u64 val)
{
	bench_out(o, "check %s=%s", name, ok ? "ok" : "fail");
	bench_out_key(o, key, val);
}

/* The "end" line, always the last. */
static inline void bench_out_end(BENCH_OUT *o, bool success)
{
	bench_out(o, "end status=%s\n", success ? "SUCCESS" : "FAILURE");
}

#endif /* MBOX_BENCH_RESULTS_OUT_H */
