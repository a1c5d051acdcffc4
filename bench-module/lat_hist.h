/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The latency histograms of the results format (FORMAT.md), in one place
 * for the benchmark module and for guest/inside/lockload, which builds this in
 * userspace after defining u64, fls64(), BIT(), U64_MAX, memset() and snprintf()
 * as the kernel has them.
 *
 * Two histograms of the same times: the log2 one of the "lat" line, and a
 * fine one, 16 buckets per power of two (at most 6% wide), 0 ns to 2^27
 * ns, for what needs a precise median: the op latencies, and the probe
 * times (an interrupt inside one probe must not move the host speed a run
 * reports).  They only count; every quantile is taken on the host
 * (analysis/parse/fine_hist.py).  The counts are u64 like the ops they count: a
 * 600 s run of ~100 ns ops gives one thread 6e9 ops, and the sum over 16
 * threads overflows u32 sooner.
 */
#ifndef MBOX_BENCH_LAT_HIST_H
#define MBOX_BENCH_LAT_HIST_H

#define BENCH_HIST_BUCKETS	32
#define BENCH_FINE_SUB_BITS	4
#define BENCH_FINE_SUB		BIT(BENCH_FINE_SUB_BITS)
#define BENCH_FINE_ROWS		24
#define BENCH_FINE_BUCKETS	(BENCH_FINE_ROWS * BENCH_FINE_SUB)
/* A "fine" line: 16 counts of at most 20 digits, and the keys. */
#define BENCH_FINE_LINE		(BENCH_FINE_SUB * 21 + 48)

struct bench_lat {
	u64 count;
	u64 min_ns;
	u64 max_ns;
	u64 sum_ns;
	u64 hist[BENCH_HIST_BUCKETS];
	u64 fine[BENCH_FINE_BUCKETS];
};

/* Fine bucket of a time: exact below 16 ns, then 16 per power of two. */
static inline unsigned int bench_fine_bucket(u64 ns)
{
	unsigned int oct, b;

	if (ns < BENCH_FINE_SUB)
		return ns;
	oct = fls64(ns) - 1;
	b = (oct - BENCH_FINE_SUB_BITS + 1) * BENCH_FINE_SUB +
	    ((ns >> (oct - BENCH_FINE_SUB_BITS)) & (BENCH_FINE_SUB - 1));
	return b < BENCH_FINE_BUCKETS ? b : BENCH_FINE_BUCKETS - 1;
}

static inline void bench_lat_init(struct bench_lat *l)
{
	memset(l, 0, sizeof(*l));
	l->min_ns = U64_MAX;
}

static inline void bench_lat_add(struct bench_lat *l, u64 ns)
{
	unsigned int b = ns ? fls64(ns) - 1 : 0;

	if (b >= BENCH_HIST_BUCKETS)
		b = BENCH_HIST_BUCKETS - 1;
	l->count++;
	l->sum_ns += ns;
	if (ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	l->hist[b]++;
	l->fine[bench_fine_bucket(ns)]++;
}

static inline void bench_fine_merge(u64 *sum, const u64 *hist)
{
	unsigned int b;

	for (b = 0; b < BENCH_FINE_BUCKETS; b++)
		sum[b] += hist[b];
}

static inline void bench_lat_merge(struct bench_lat *sum,
				   const struct bench_lat *l)
{
	unsigned int b;

	sum->count += l->count;
	sum->sum_ns += l->sum_ns;
	if (l->min_ns < sum->min_ns)
		sum->min_ns = l->min_ns;
	if (l->max_ns > sum->max_ns)
		sum->max_ns = l->max_ns;
	for (b = 0; b < BENCH_HIST_BUCKETS; b++)
		sum->hist[b] += l->hist[b];
	bench_fine_merge(sum->fine, l->fine);
}

/*
 * Row @row of the fine histogram @hist of @of as a "fine" line, newline
 * included, in @buf (BENCH_FINE_LINE bytes); false when the row holds no
 * count.  Only the rows that hold one are printed, so that no line grows
 * with the data.
 */
static inline bool bench_fine_line(char *buf, const char *of,
				   unsigned int row, const u64 *hist)
{
	const u64 *c = hist + row * BENCH_FINE_SUB;
	unsigned int i, n;
	u64 any = 0;

	for (i = 0; i < BENCH_FINE_SUB; i++)
		any |= c[i];
	if (!any)
		return false;
	n = snprintf(buf, BENCH_FINE_LINE, "fine of=%.15s row=%u counts=",
		     of, row);
	for (i = 0; i < BENCH_FINE_SUB && n < BENCH_FINE_LINE; i++)
		n += snprintf(buf + n, BENCH_FINE_LINE - n,
			      i ? ",%llu" : "%llu", c[i]);
	if (n < BENCH_FINE_LINE - 1)
		snprintf(buf + n, BENCH_FINE_LINE - n, "\n");
	return true;
}

#endif /* MBOX_BENCH_LAT_HIST_H */
