# SPDX-License-Identifier: GPL-2.0
#
# The writers' answer, as the eye should read it: at each point that mixes
# reads and writes (x), a bar per kernel variant up to the median over boots
# of its write latency p99 (bars: the 95% CI), its maximum as an open
# marker above it, a panel per vCPU count above 1 (make_plots.py leaves out
# one vCPU, where one benchmark thread has nobody to starve); log y.  A
# reader-preferring rwlock lets a stream of readers keep a writer waiting:
# its bar stands above the spinlock's where reads dominate.  Above each
# compared variant's bar, the writers' verdict on p99 (comparisons.csv,
# role `writers`) and its ratio.
#
# Usage: gnuplot -e "infile='DIR/plots/data/starvation.csv'; \
#            variants='before after'; cpuslist='2 4'; points='p1 p2'; \
#            bar=write_lat_p99_ns; mark=write_lat_max_ns; \
#            ybase='2 1000'" plots/gnuplot/starvation.gp
#   infile: rows of analysis/TIDY.md medians.csv (variant, cpus, point,
#   metric, median, ci_lo, ci_hi), of the metrics bar and mark.
#   bar, mark: the metrics of the bars (with their CIs) and of the open
#   markers (plots/median_plots.py takes them from the registry).
#   points: the point ids on the x axis (plabel1, ...: their tick labels).
#   ybase: per panel, 'CPUS VALUE' pairs: where the bars start (the log
#   axis' bottom, below every value drawn: a choice of axis).
#   ytop: per panel, 'CPUS VALUE' pairs: where the axis ends (above every
#   value and verdict label drawn).
#   nsl, sl<i> = 'CPUS X Y K', st<i>: the verdict labels (panel, x, y,
#   the variant's index for its colour) and their text.
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("cpuslist") || !exists("points") || !exists("bar") || !exists("mark")) {
	print _me . ": set cpuslist='2 ...', points='p1 p2 ...', bar and mark"
	exit status 2
}
if (!exists("ybase")) ybase = ""
if (!exists("nsl")) nsl = 0
nc = words(cpuslist)
np = words(points)
plabel(p) = exists(sprintf("plabel%d", p)) ? value(sprintf("plabel%d", p)) : word(points, p)
base(c) = sum [i=1:words(ybase) / 2] (word(ybase, 2 * i - 1) eq word(cpuslist, c) ? word(ybase, 2 * i) + 0 : 0)
if (!exists("ytop")) ytop = ""
top(c) = sum [i=1:words(ytop) / 2] (word(ytop, 2 * i - 1) eq word(cpuslist, c) ? word(ytop, 2 * i) + 0 : 0)
ppos(p) = sum [i=1:np] (word(points, i) eq p ? i : 0)
bw = 0.7 / nv
xoff(k) = (k - (nv + 1) / 2.0) * bw
sel(k, c, m) = strcol("variant") eq word(variants, k) && column("cpus") == (word(cpuslist, c) + 0) \
	&& strcol("metric") eq m
col(k, c, m, name) = sel(k, c, m) ? column(name) : NaN
svar(n, i) = value(sprintf("%s%d", n, i))

axes = sprintf("set xrange [0.4:%g]; ", np + 0.6) . \
	'set xtics (); do for [i=1:np] { set xtics add (plabel(i) i) }; set xtics scale 0; ' . \
	'set xlabel "workload point (share of reads)"; ' . \
	'set ylabel "write latency (ns, log scale)"; set logscale y; set format y logfmt; ' . \
	'set grid ytics mytics'
L = yroom(0.08, 0); R = 0.98; SP = yroom(0.05, 0)
klines = keylines(nv + 1, longest(variants) + 16)
maintitle = "Writers: write latency p99 (bars) and maximum (markers) per point (median of boots, 95% CI)"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout 1, nc title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(110), paneltop(klines) spacing SP, 0.1
	eval footer_on
	do for [c=1:nc] {
		ptitle = word(cpuslist, c) . " vCPUs" . (hasword(oversub, word(cpuslist, c)) ? " (oversubscribed)" : "")
		set title ptitle font fitfont(strlen(ptitle), panelw(nc, L, R, SP), basefont(fmt))
		yb = base(c)
		yt = top(c)
		if (yb > 0 && yt > yb) { set yrange [yb:yt] } else { if (yb > 0) { set yrange [yb:*] } else { set yrange [*:*] } }
		do for [i=1:nsl] {
			if (word(svar("sl", i), 1) eq word(cpuslist, c)) {
				eval sprintf("set label %d svar('st', %d) at first %s, first %s center font ',8' textcolor rgb vcolor(%s) front", \
					100 + i, i, word(svar("sl", i), 2), word(svar("sl", i), 3), word(svar("sl", i), 4))
			}
		}
		plot for [k=1:nv] infile \
			using (ppos(strcol("point")) + xoff(k)):(col(k, c, bar, "median")):(ppos(strcol("point")) + xoff(k) - bw * 0.45):(ppos(strcol("point")) + xoff(k) + bw * 0.45):(yb > 0 ? yb : NaN):(col(k, c, bar, "median")) \
			with boxxyerror fillstyle solid 0.55 border linecolor rgb vcolor(k) linecolor rgb vcolor(k) notitle, \
		     for [k=1:nv] infile \
			using (ppos(strcol("point")) + xoff(k)):(col(k, c, bar, "median")):(col(k, c, bar, "ci_lo")):(col(k, c, bar, "ci_hi")) \
			with yerrorbars linewidth 1.5 pointsize 0 linecolor rgb "#333333" notitle, \
		     for [k=1:nv] infile \
			using (ppos(strcol("point")) + xoff(k)):(col(k, c, mark, "median")) \
			with points pointtype 8 pointsize 1.4 linecolor rgb vcolor(k) notitle
		do for [i=1:nsl] { unset label 100 + i }
		eval footer_off
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [k=1:nv] '+' using (NaN):(NaN) with boxes fillstyle solid 0.55 \
		linecolor rgb vcolor(k) title word(variants, k) . " p99", \
	     '+' using (NaN):(NaN) with points pointtype 8 pointsize 1.4 linecolor rgb "#555555" title "maximum"
	unset multiplot
	set output
}
