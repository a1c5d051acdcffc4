# SPDX-License-Identifier: GPL-2.0
#
# Throughput vs vCPUs: a panel per workload point, a line per kernel
# variant: the median over boots of the throughput metric (all benchmark
# threads together), bars = its 95% CI.  Beside each compared variant's
# point, its verdict on that metric (e.g. "after: no harm").
#
# Usage: gnuplot -e "infile='DIR/plots/data/throughput.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'" \
#            plots/gnuplot/throughput.gp
#   infile: rows of analysis/TIDY.md medians.csv (variant, cpus, point,
#   metric, median, ci_lo, ci_hi), the rows of a line next to each other.
#   plabel1, plabel2, ...: panel titles of the points (default: the id).
#   logpanels: the points whose panel has a log y axis (default none).
#   metric: which throughput (default throughput_ops_s; throughput_run:
#   per second the vCPUs were on a host core); infile's rows are each
#   cell's (make_plots.py picks it).
#   metrics: the metrics of infile's rows to draw (default: metric; with
#   cpustat, each vCPU count's).
#   cpustat: where the metric differs by vCPU count, 'CPUS:WORD ...'
#   (e.g. '1:ops/s 2:run'): each vCPU tick says which.
#   nvl, vl1, vt1, ...: the verdict labels (plots/gnuplot/style.gp; PANEL = point).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist")) {
	print _me . ": set points='p1 ...' and cpuslist='1 2 ...'"
	exit status 2
}
if (!exists("logpanels")) logpanels = ""
if (!exists("metric")) metric = "throughput_ops_s"
if (!exists("cpustat")) cpustat = ""
if (!exists("metrics")) metrics = metric
np = words(points)
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
sel(k, p) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& hasword(metrics, strcol("metric"))
ctick(i) = cpulabel(i) . (cpustat eq "" ? "" : \
	" (" . word(cpustat, i)[strstrt(word(cpustat, i), ":") + 1:] . ")")
col(k, p, name) = sel(k, p) ? column(name) : NaN

# verdict labels need room right of the last vCPU count
xmax = words(cpuslist) + (nvl > 0 ? 1 : 0.5)
axes = sprintf("set xrange [0.5:%g]; ", xmax) . \
	'set xtics (); do for [i=1:words(cpuslist)] { set xtics add (ctick(i) i) }; ' . \
	'set xlabel "vCPUs"'
L = yroom(0.09, logpanels ne ""); R = 0.98; SP = yroom(0.06, logpanels ne "")
klines = keylines(nv, longest(variants))
eval verdict_fit(panelw(np, L, R, SP), xmax - 0.5)
maintitle = lockname . ": throughput vs vCPUs (median of boots, bars: 95% CI; higher is better)"
# a panel's data (p), evaluated twice when it has verdict labels
panelplot = 'plot for [k=1:nv] infile ' . \
	'using (cpupos(column("cpus")) + shift(k, nv)):(col(k, p, "median")):(col(k, p, "ci_lo")):(col(k, p, "ci_hi")) ' . \
	'with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) notitle'
# the y range of each panel, for the verdict labels (plots/gnuplot/style.gp vgy):
# the same plot first on the dumb terminal, into /dev/null
array ylo[np]; array yhi[np]
vph = (paneltop(klines) - fb(90)) * height
if (nvl > 0) {
	set terminal dumb; set output "/dev/null"
	eval look
	eval axes
	do for [p=1:np] {
		if (hasword(logpanels, word(points, p))) { eval logy_on } else { eval logy_off }
		eval panelplot
		ylo[p] = GPVAL_Y_MIN; yhi[p] = GPVAL_Y_MAX
	}
}

do for [fmt in formats] {
	eval termcmd(fmt)
	eval look
	eval axes
	set output outbase . "." . fmt
	set multiplot layout 1, np title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(90), paneltop(klines) spacing SP, 0.1
	eval footer_on
	unset key
	do for [p=1:np] {
		set title plabel(p) font fitfont(strlen(plabel(p)), panelw(np, L, R, SP), basefont(fmt))
		lg = hasword(logpanels, word(points, p))
		if (lg) { eval logy_on } else { eval logy_off }
		set ylabel loglabel(metric eq "throughput_run" ? "throughput (ops per running s, all threads)" : "throughput (ops/s, all threads)", lg) offset screen logloff(lg), 0
		set format y (lg ? logfmt : "%.1s%c")
		if (nvl > 0) { vy0 = ylo[p]; vy1 = yhi[p]; vlog = lg }
		do for [i=1:nvl] { if (vl(i, 1) eq word(points, p)) { eval verdict_cmd(i) } }
		eval panelplot
		eval verdicts_off
		eval footer_off
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [k=1:nv] '+' using (NaN):(NaN):(NaN):(NaN) \
		with yerrorlines linewidth 2 pointsize 1 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k)
	unset multiplot
	set output
}
