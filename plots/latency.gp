# SPDX-License-Identifier: GPL-2.0
#
# Cost per operation vs vCPUs: a panel per op type (rows: lookup, write)
# and workload point (columns), a line per kernel variant: the median over
# boots of each boot's mean (or median) latency, bars = its 95% CI.
#
# Usage: gnuplot -e "infile='DIR/plots/data/latency.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'" \
#            plots/latency.gp
#   infile: rows of analysis/TIDY.md medians.csv (the columns variant,
#   cpus, point, metric, median, ci_lo, ci_hi), the rows of a line next to
#   each other: make_plots.py writes them in that order.
#   stat: 'mean' (default) or 'median': metric <op>_lat_<stat>_ns.
#   empty: panels without data, as OP:POINT (e.g. 'write:p3' for a point
#   with 100% reads); gnuplot cannot autoscale an empty panel.
#   plabel1, plabel2, ...: panel titles of the points (default: the id).
#   Common variables: plots/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist")) {
	print _me . ": set points='p1 ...' and cpuslist='1 2 ...'"
	exit status 2
}
if (!exists("stat")) stat = "mean"
if (!exists("empty")) empty = ""
np = words(points)
ops = "lookup write"
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
sel(k, p, o) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& strcol("metric") eq word(ops, o) . "_lat_" . stat . "_ns"

set xrange [0.5:words(cpuslist) + 0.5]
set xtics () ; do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }
set yrange [0:*]
set xlabel "vCPUs"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	set multiplot layout 2, np title "mboxes_lock: cost per operation vs vCPUs (" . stat . " latency per op, median of boots, bars: 95% CI)" font ",13" \
		margins 0.08, 0.98, 0.16, 0.88 spacing 0.06, 0.15
	eval footer_on
	set key top left opaque box linecolor rgb "#cccccc"
	do for [o=1:2] {
		do for [p=1:np] {
			set title word(ops, o) . ", " . plabel(p)
			set ylabel word(ops, o) . " latency (ns)"
			if (hasword(empty, word(ops, o) . ":" . word(points, p))) {
				set label 98 "no data" at graph 0.5, graph 0.5 center
				plot [][0:1] NaN notitle
				unset label 98
			} else {
				plot for [k=1:nv] infile \
					using (cpupos(column("cpus")) + shift(k, nv)):(sel(k, p, o) ? column("median") : NaN): \
					(sel(k, p, o) ? column("ci_lo") : NaN):(sel(k, p, o) ? column("ci_hi") : NaN) \
					with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k)
			}
			eval footer_off
			unset key
		}
	}
	unset multiplot
	set output
}
