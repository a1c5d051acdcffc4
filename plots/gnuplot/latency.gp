# SPDX-License-Identifier: GPL-2.0
#
# Cost per operation vs vCPUs: a panel per op type (rows: lookup, write)
# and workload point (columns), a line per kernel variant: the median over
# boots of each boot's mean (or median) latency, bars = its 95% CI.  Beside
# each compared variant's point, its verdict on that metric.
#
# Usage: gnuplot -e "infile='DIR/plots/data/latency.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'" \
#            plots/gnuplot/latency.gp
#   infile: rows of analysis/TIDY.md medians.csv (the columns variant,
#   cpus, point, metric, median, ci_lo, ci_hi), the rows of a line next to
#   each other: make_plots.py writes them in that order.
#   opmetrics1, opmetrics2: the metrics of the lookup and the write row
#   (analysis/metrics.py's names, e.g. 'lookup_lat_mean_ns
#   lookup_lat_median_ns'); a row of infile is drawn in its op's panels.
#   stat: the statistic in the title, 'mean' (default), 'median' or
#   'mean or median'; the rows of infile are each cell's (<op>_lat_*_ns:
#   make_plots.py picks the statistic the answer judges there, and a
#   point's plabel names it where it differs).
#   empty: panels without data, as OP:POINT (e.g. 'write:p3' for a point
#   with 100% reads); gnuplot cannot autoscale an empty panel.
#   logpanels: panels with a log y axis, as OP:POINT (default none).
#   plabel1, plabel2, ...: panel titles of the points (default: the id).
#   nvl, vl1, vt1, ...: the verdict labels (plots/gnuplot/style.gp; PANEL = OP:POINT).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist") || !exists("opmetrics1") || !exists("opmetrics2")) {
	print _me . ": set points='p1 ...', cpuslist='1 2 ...', opmetrics1='M ...' and opmetrics2='M ...'"
	exit status 2
}
if (!exists("stat")) stat = "mean"
if (!exists("empty")) empty = ""
if (!exists("logpanels")) logpanels = ""
np = words(points)
ops = "lookup write"
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
sel(k, p, o) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& hasword(value(sprintf("opmetrics%d", o)), strcol("metric"))

# verdict labels need room right of the last vCPU count
xmax = words(cpuslist) + (nvl > 0 ? 1 : 0.5)
axes = sprintf("set xrange [0.5:%g]; ", xmax) . \
	'set xtics (); do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }; ' . \
	'set xlabel "vCPUs"'
L = yroom(0.08, logpanels ne ""); R = 0.98; SP = yroom(0.06, logpanels ne "")
klines = keylines(nv, longest(variants))
eval verdict_fit(panelw(np, L, R, SP), xmax - 0.5)
maintitle = lockname . ": cost per operation vs vCPUs (" . stat . " latency per op, median of boots, bars: 95% CI)"
# a panel's data (o, p), evaluated twice when it has verdict labels
panelplot = 'plot for [k=1:nv] infile ' . \
	'using (cpupos(column("cpus")) + shift(k, nv)):(sel(k, p, o) ? column("median") : NaN): ' . \
	'(sel(k, p, o) ? column("ci_lo") : NaN):(sel(k, p, o) ? column("ci_hi") : NaN) ' . \
	'with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) notitle'
# the y range of each panel, for the verdict labels (plots/gnuplot/style.gp vgy):
# the same plot first on the dumb terminal, into /dev/null
array ylo[2 * np]; array yhi[2 * np]
vph = ((paneltop(klines) - fb(95)) * height - (ptitle_px + 60)) / 2.0
if (nvl > 0) {
	set terminal dumb; set output "/dev/null"
	eval look
	eval axes
	do for [o=1:2] {
		do for [p=1:np] {
			pan = word(ops, o) . ":" . word(points, p)
			if (!hasword(empty, pan)) {
				if (hasword(logpanels, pan)) { eval logy_on } else { eval logy_off }
				eval panelplot
				ylo[(o - 1) * np + p] = GPVAL_Y_MIN; yhi[(o - 1) * np + p] = GPVAL_Y_MAX
			}
		}
	}
}

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout 2, np title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(95), paneltop(klines) spacing SP, fb(ptitle_px + 60)
	eval footer_on
	do for [o=1:2] {
		do for [p=1:np] {
			pan = word(ops, o) . ":" . word(points, p)
			ptitle = word(ops, o) . ", " . plabel(p)
			set title ptitle font fitfont(strlen(ptitle), panelw(np, L, R, SP), basefont(fmt))
			lg = hasword(logpanels, pan)
			if (lg) { eval logy_on } else { eval logy_off }
			set ylabel loglabel(word(ops, o) . " latency (ns)", lg) offset screen logloff(lg), 0
			set format y (lg ? logfmt : "% h")
			if (hasword(empty, pan)) {
				set label 98 "no data" at graph 0.5, graph 0.5 center
				plot [][0:1] NaN notitle
				unset label 98
			} else {
				if (nvl > 0) { vy0 = ylo[(o - 1) * np + p]; vy1 = yhi[(o - 1) * np + p]; vlog = lg }
				do for [i=1:nvl] { if (vl(i, 1) eq pan) { eval verdict_cmd(i) } }
				eval panelplot
				eval verdicts_off
			}
			eval footer_off
		}
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [k=1:nv] '+' using (NaN):(NaN):(NaN):(NaN) \
		with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k)
	unset multiplot
	set output
}
