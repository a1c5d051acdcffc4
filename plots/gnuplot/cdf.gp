# SPDX-License-Identifier: GPL-2.0
#
# Latency distributions at one workload point and vCPU count (make_plots.py
# picks the most contended): the cumulative share of operations done within
# each log2 bucket's upper edge, one line per boot, a colour per variant;
# panels: lookup, write.
#
# Usage: gnuplot -e "infile='DIR/plots/data/cdf.csv'; variants='before after'; \
#            boots='r01-before-c4 r01-after-c4'; bootvar='1 2'; \
#            what='p2, 4 vCPUs'" plots/gnuplot/cdf.gp
#   infile: rows of analysis/TIDY.md hist.csv (cell: the boot's id, op,
#   bucket_hi_ns, cum_fraction) of one point and vCPU count, a boot's rows
#   next to each other.
#   boots: the boots (their ids) to draw; bootvar: the variant index of
#   each, boots of a variant next to each other.  what: the title's subject.
#   empty: 'lookup' and/or 'write' when that op has no histogram.
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("boots") || !exists("bootvar")) {
	print _me . ": set boots='BOOT ...' and bootvar='1 ...'"
	exit status 2
}
if (!exists("what")) what = ""
if (!exists("empty")) empty = ""
nb = words(boots)
ops = "lookup write"
cv(j) = word(bootvar, j) + 0
first(j) = j == 1 || cv(j) != cv(j - 1)
sel(j, o) = strcol("cell") eq word(boots, j) && strcol("op") eq word(ops, o)

# A probability axis stretched towards 1 (-log10(1 - y)), so that the tail
# (p99, p99.9, ...) is as visible as the median; y = 1 is at infinity, so a
# boot's line ends at its last bucket below 1.
axes = 'set logscale x 10; set format x "%.0s%c"; ' . \
	'set nonlinear y via -log10(1 - y) inverse 1 - 10**(-y); ' . \
	'set yrange [0:0.999999]; ' . \
	'set ytics ("0.5" 0.5, "0.9" 0.9, "0.99" 0.99, "0.999" 0.999, "0.9999" 0.9999, "0.99999" 0.99999, "0.999999" 0.999999); ' . \
	'set grid xtics ytics linecolor rgb "#dddddd"; ' . \
	'set xlabel "latency (ns, upper edge of a log2 bucket, log scale)"; ' . \
	'set ylabel "cumulative share of operations"'
L = 0.09; R = 0.98; SP = 0.13
klines = keylines(nv, longest(variants))
maintitle = "Latency CDF, " . what . " (one line per boot)"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout 1, 2 title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(90), paneltop(klines) spacing SP, 0.1
	eval footer_on
	do for [o=1:2] {
		set title word(ops, o)
		if (hasword(empty, word(ops, o))) {
			set label 98 "no data" at graph 0.5, graph 0.5 center
			plot [1:10][0:0.9] NaN notitle
			unset label 98
		} else {
			plot for [j=1:nb] infile \
				using (sel(j, o) ? column("bucket_hi_ns") : NaN):(sel(j, o) ? column("cum_fraction") : NaN) \
				with linespoints linewidth 1.5 pointsize 0.5 pointtype vpt(cv(j)) linecolor rgb vcolor(cv(j)) notitle
		}
		eval footer_off
	}
	eval keyrow_setup(klines)
	unset nonlinear y
	plot [0:1][0:1] for [k=1:nv] '+' using (NaN):(NaN) \
		with linespoints linewidth 1.5 pointsize 0.5 pointtype vpt(k) linecolor rgb vcolor(k) title word(variants, k)
	unset multiplot
	set output
}
