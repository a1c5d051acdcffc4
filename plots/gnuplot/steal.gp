# SPDX-License-Identifier: GPL-2.0
#
# Host steal against throughput, one marker per boot: a panel per workload
# point and vCPU count, throughput_ops_s (y, log scale) against
# steal_max_pct (x: the share of the point's run during which the worst of
# QEMU's vCPU threads waited on a host run queue), one marker style and
# colour per variant.  The dashed vertical line is the flag threshold
# (analysis/metrics.py STEAL_FLAG_PCT): a collapsed boot right of it lost
# its time to the host (lock-waiter preemption), one left of it did not.
#
# Usage: gnuplot -e "infile='DIR/plots/data/steal.csv'; \
#            variants='before after'; panels='p1:1 p1:2'; ncols=2; \
#            nrows=1; flag=10; xmax=100; xmetric=steal_max_pct; \
#            ymetric=throughput_ops_s" plots/gnuplot/steal.gp
#   infile: one row per boot and point (variant, cpus, point, xmetric,
#   ymetric): the two samples.csv (analysis/TIDY.md) values of that boot
#   and point side by side.
#   xmetric, ymetric: the steal and the throughput metric, the columns
#   drawn (plots/boot_plots.py takes them from the registry).
#   panels: POINT:CPUS of each panel, in order, laid out ncols a row
#   (nrows rows).
#   ptitle1, ptitle2, ...: the panels' titles (default: POINT:CPUS).
#   yr1, yr2, ...: each panel's y range, 'LOW HIGH'; yt1, yt2, ...: its y
#   ticks (make_plots.py: at 1, 1.5, 2, 3, 5, 7 times a power of ten when
#   a panel spans less than a decade, so that it has labelled ticks).
#   Default: autoscaled, ticks at the powers of ten.
#   empty: the panels without data ("no data").
#   flag: the threshold in percent (a dashed vertical line).
#   xmax: the right end of the x axis (percent; default 100).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("panels") || !exists("ncols") || !exists("nrows") || !exists("flag") \
    || !exists("xmetric") || !exists("ymetric")) {
	print _me . ": set panels='p1:1 ...', ncols, nrows, flag, xmetric and ymetric"
	exit status 2
}
if (!exists("empty")) empty = ""
if (!exists("xmax")) xmax = 100
# numbers, whether passed as numbers or as strings
flag = flag + 0; xmax = xmax + 0
npan = words(panels)
ptitle(i) = exists(sprintf("ptitle%d", i)) ? value(sprintf("ptitle%d", i)) : word(panels, i)
pan(i) = word(panels, i)
ppoint(i) = pan(i)[1:strstrt(pan(i), ":") - 1]
pcpus(i) = pan(i)[strstrt(pan(i), ":") + 1:] + 0
sel(k, i) = strcol("variant") eq word(variants, k) && strcol("point") eq ppoint(i) \
	&& column("cpus") == pcpus(i)

axes = sprintf("set xrange [0:%g]; ", xmax) . \
	'set xlabel "' . xmetric . ' (%)"; ' . \
	'set logscale y; set format y logfmt; set grid xtics ytics mytics; set mytics 10'
# 150000 -> "150k"
ksuf(v) = v >= 1e9 ? sprintf("%gG", v / 1e9) : v >= 1e6 ? sprintf("%gM", v / 1e6) : \
	v >= 1e3 ? sprintf("%gk", v / 1e3) : sprintf("%g", v)
pvar(n, i) = exists(sprintf("%s%d", n, i)) ? value(sprintf("%s%d", n, i)) : ""
ytv(i, j) = word(pvar("yt", i), j) + 0
ytl(i, j) = ksuf(ytv(i, j))
L = yroom(0.08, 1); R = 0.98; SP = yroom(0.06, 1)
flagtitle = sprintf("flag: %s > %g%%", xmetric, flag)
klines = keylines(nv + 1, max(longest(variants), strlen(flagtitle)))
maintitle = "Host steal vs throughput, one marker per boot (is a collapse the host's?)"
set style line 98 linecolor rgb "#666666" dashtype 2 linewidth 1.5

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout nrows, ncols title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(80), paneltop(klines) spacing SP, fb(ptitle_px + 50)
	eval footer_on
	do for [i=1:npan] {
		set title ptitle(i) font fitfont(strlen(ptitle(i)), panelw(ncols, L, R, SP), basefont(fmt))
		set ylabel loglabel("throughput (ops/s, all threads)", 1) offset screen logloff(1), 0
		set arrow 1 from first flag, graph 0 to first flag, graph 1 nohead linestyle 98 back
		if (hasword(empty, pan(i))) {
			set label 98 "no data" at graph 0.5, graph 0.5 center
			unset logscale y
			plot [][0:1] NaN notitle
			unset label 98
			set logscale y
		} else {
			if (pvar("yr", i) eq "") {
				set yrange [*:*]; set ytics autofreq
			} else {
				# a hair wider: a tick exactly at a log axis' end is dropped
				set yrange [(word(pvar("yr", i), 1) + 0) / 1.002:(word(pvar("yr", i), 2) + 0) * 1.002]
				set ytics ()
				do for [j=1:words(pvar("yt", i))] { set ytics add (ytl(i, j) ytv(i, j)) }
			}
			plot for [k=1:nv] infile using xmetric:(sel(k, i) ? column(ymetric) : NaN) \
				with points pointtype vpt(k) - 1 pointsize 1 linewidth 1.5 linecolor rgb vcolor(k) notitle
		}
		unset arrow 1
		eval footer_off
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [k=1:nv] '+' using (NaN):(NaN) \
		with points pointtype vpt(k) - 1 pointsize 1 linewidth 1.5 linecolor rgb vcolor(k) title word(variants, k), \
	     '+' using (NaN):(NaN) with lines linestyle 98 title flagtitle
	unset multiplot
	set output
}
