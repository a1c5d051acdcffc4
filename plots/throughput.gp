# SPDX-License-Identifier: GPL-2.0
#
# Throughput vs vCPUs: a panel per workload point, a line per kernel
# variant: the median over boots of throughput_ops_s (all benchmark
# threads together), bars = its 95% CI.
#
# Usage: gnuplot -e "infile='DIR/plots/data/throughput.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'" \
#            plots/throughput.gp
#   infile: rows of analysis/TIDY.md medians.csv (variant, cpus, point,
#   metric, median, ci_lo, ci_hi), the rows of a line next to each other.
#   plabel1, plabel2, ...: panel titles of the points (default: the id).
#   Common variables: plots/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist")) {
	print _me . ": set points='p1 ...' and cpuslist='1 2 ...'"
	exit status 2
}
np = words(points)
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
sel(k, p) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& strcol("metric") eq "throughput_ops_s"
col(k, p, name) = sel(k, p) ? column(name) : NaN

set xrange [0.5:words(cpuslist) + 0.5]
set xtics () ; do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }
set yrange [0:*]
set xlabel "vCPUs"
set ylabel "throughput (ops/s, all threads)"
set format y "%.1s%c"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	set multiplot layout 1, np title "mboxes_lock: throughput vs vCPUs (median of boots, bars: 95% CI; higher is better)" font ",13" \
		margins 0.09, 0.98, 0.2, 0.85 spacing 0.06, 0.1
	eval footer_on
	set key top left opaque box linecolor rgb "#cccccc"
	do for [p=1:np] {
		set title plabel(p)
		plot for [k=1:nv] infile \
			using (cpupos(column("cpus")) + shift(k, nv)):(col(k, p, "median")):(col(k, p, "ci_lo")):(col(k, p, "ci_hi")) \
			with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k)
		eval footer_off
		unset key
	}
	unset multiplot
	set output
}
