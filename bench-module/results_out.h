/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmark module and guest/inside/lockload both put in a results file
 * (FORMAT.md), in one place, as lat_hist.h is for the histograms: the
 * host-speed probe ("ref") and the cost of a clock read, which each
 * measures, and the lines that carry them, the latencies and fairness.
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

#endif /* MBOX_BENCH_RESULTS_OUT_H */
