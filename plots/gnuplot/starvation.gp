# SPDX-License-Identifier: GPL-2.0
#
# The starvation view: the writers' latency tail (p99 and maximum) against
# the share of reads, a panel per vCPU count (above 1: make_plots.py leaves
# out one vCPU, where one benchmark thread has nobody to starve).  A reader-preferring rwlock
# lets a stream of readers keep a writer waiting, so its tail grows with
# read_pct; a fair lock's should not.  Median over boots, bars = 95% CI.
#
# Usage: gnuplot -e "infile='DIR/plots/data/starvation.csv'; \
#            variants='before after'; cpuslist='1 2 4'; \
#            group1='p1 p2'" plots/gnuplot/starvation.gp
#   infile: rows of analysis/TIDY.md medians.csv (variant, cpus, point,
#   read_pct, metric, median, ci_lo, ci_hi), metrics write_lat_p99_ns and
#   write_lat_max_ns, the rows of a line next to each other.
#   group1, group2, ...: the point ids drawn as one line (points that differ
#   only in read_pct); glabel1, ...: their legend text (default none).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("cpuslist") || !exists("group1")) {
	print _me . ": set cpuslist='1 2 ...' and group1='p1 p2 ...'"
	exit status 2
}
nc = words(cpuslist)
ng = 0
do for [g=1:100] { if (exists(sprintf("group%d", g))) { ng = g } }
group(g) = value(sprintf("group%d", g))
glabel(g) = exists(sprintf("glabel%d", g)) ? " " . value(sprintf("glabel%d", g)) : ""
mets = "write_lat_p99_ns write_lat_max_ns"
mtitle(m) = m == 1 ? " p99" : " max"
sel(k, c, m, g) = strcol("variant") eq word(variants, k) && column("cpus") == (word(cpuslist, c) + 0) \
	&& strcol("metric") eq word(mets, m) && hasword(group(g), strcol("point"))
col(k, c, m, g, name) = sel(k, c, m, g) ? column(name) : NaN

axes = 'set xrange [-5:105]; set xtics 0, 25, 100; ' . \
	'set xlabel "reads (% of operations)"; ' . \
	'set ylabel "write latency (ns, log scale)"; set logscale y; set format y logfmt; ' . \
	'set grid ytics mytics'
L = yroom(0.08, 0); R = 0.98; SP = yroom(0.05, 0)
klines = keylines(ng * nv * 2, longest(variants) + 5 + (ng > 1 ? 30 : 0))
maintitle = "Writer starvation: write latency tail vs share of reads (median of boots, bars: 95% CI)"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout 1, nc title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(90), paneltop(klines) spacing SP, 0.1
	eval footer_on
	do for [c=1:nc] {
		ptitle = word(cpuslist, c) . " vCPUs" . (hasword(oversub, word(cpuslist, c)) ? " (oversubscribed)" : "")
		set title ptitle font fitfont(strlen(ptitle), panelw(nc, L, R, SP), basefont(fmt))
		plot for [g=1:ng] for [k=1:nv] for [m=1:2] infile \
			using "read_pct":(col(k, c, m, g, "median")):(col(k, c, m, g, "ci_lo")):(col(k, c, m, g, "ci_hi")) \
			with yerrorlines linewidth (m == 1 ? 2 : 1.5) dashtype m pointsize 1 \
			pointtype vpt(k) linecolor rgb vcolor(k) notitle
		eval footer_off
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [g=1:ng] for [k=1:nv] for [m=1:2] '+' using (NaN):(NaN):(NaN):(NaN) \
		with yerrorlines linewidth (m == 1 ? 2 : 1.5) dashtype m pointsize 1 \
		pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k) . mtitle(m) . glabel(g)
	unset multiplot
	set output
}
