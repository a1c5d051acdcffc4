# SPDX-License-Identifier: GPL-2.0
#
# Fairness between the benchmark threads vs vCPUs, a panel per workload
# point: fairness_spread = the busiest thread's ops / the idlest thread's
# (1 = fair).  Points: one per boot; line: median of boots, bars = 95% CI.
# The dashed line at 2 marks starvation: the idlest thread did under half
# the busiest's operations (locktorture prints "???" then: max/2 > min).
#
# Usage: gnuplot -e "infile='DIR/plots/data/fairness.csv'; \
#            medfile='DIR/plots/data/fairness-medians.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'; \
#            metric=fairness_spread" plots/gnuplot/fairness.gp
#   infile: rows of analysis/TIDY.md samples.csv (variant, cpus, point,
#   metric, value) of the metric.
#   metric: the fairness metric (plots/median_plots.py takes it from the
#   registry).
#   medfile: rows of medians.csv (variant, cpus, point, metric, median,
#   ci_lo, ci_hi) of the same metric, the rows of a line next to each other.
#   plabel1, plabel2, ...: panel titles of the points (default: the id).
#   logpanels: the points whose panel has a log y axis (default none).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist") || !exists("medfile") || !exists("metric")) {
	print _me . ": set points='p1 ...', cpuslist='1 2 ...' and medfile='...'"
	exit status 2
}
if (!exists("logpanels")) logpanels = ""
np = words(points)
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
sel(k, p) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& strcol("metric") eq metric
col(k, p, name) = sel(k, p) ? column(name) : NaN

axes = 'set xrange [0.5:words(cpuslist) + 0.5]; ' . \
	'set xtics (); do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }; ' . \
	'set xlabel "vCPUs"'
L = yroom(0.08, logpanels ne ""); R = 0.98; SP = yroom(0.06, logpanels ne "")
starved = "starved: idlest < half busiest"
klines = keylines(1 + 2 * nv, max(strlen(starved), longest(variants) + 7))
maintitle = "Fairness: spread of per-thread operations (1 = fair; points: boots, line: median, bars: 95% CI)"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout 1, np title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(90), paneltop(klines) spacing SP, 0.1
	eval footer_on
	do for [p=1:np] {
		set title plabel(p) font fitfont(strlen(plabel(p)), panelw(np, L, R, SP), basefont(fmt))
		lg = hasword(logpanels, word(points, p))
		if (lg) { eval logy_on } else { eval logy_off }
		set yrange [0.9:*]
		set ylabel loglabel("ops of busiest / idlest thread (ratio)", lg) offset screen logloff(lg), 0
		plot 2 with lines linestyle 99 notitle, \
		     for [k=1:nv] infile using (cpupos(column("cpus")) + shift(k, nv) - 0.03):(col(k, p, "value")) \
			with points pointtype vpt(k) - 1 pointsize 0.7 linecolor rgb vcolor(k) notitle, \
		     for [k=1:nv] medfile \
			using (cpupos(column("cpus")) + shift(k, nv)):(col(k, p, "median")):(col(k, p, "ci_lo")):(col(k, p, "ci_hi")) \
			with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) notitle
		eval footer_off
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] NaN with lines linestyle 99 title starved, \
	     for [k=1:nv] '+' using (NaN):(NaN) \
		with points pointtype vpt(k) - 1 pointsize 0.7 linecolor rgb vcolor(k) title word(variants, k) . " (boots)", \
	     for [k=1:nv] '+' using (NaN):(NaN):(NaN):(NaN) \
		with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k) . " median"
	unset multiplot
	set output
}
