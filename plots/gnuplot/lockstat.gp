# SPDX-License-Identifier: GPL-2.0
#
# The lock under test (lockname) in /proc/lock_stat: contentions, wait time (avg, max) and
# hold time (avg) vs vCPUs, a row of panels per workload point.  One point
# per boot and lock_stat row: the rwlock's read (R) and write (W) sides
# beside the spinlock's single row; no per-row median exists in the tidy
# files, so none is drawn.  With medfile, a line per variant is the median
# over boots of all the class's rows together (medians.csv lock_*).
#
# Usage: gnuplot -e "infile='DIR/plots/data/lockstat.csv'; \
#            medfile='DIR/plots/data/lockstat-medians.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'; \
#            svar='1 1 2'; skind='R W -'" plots/gnuplot/lockstat.gp
#   infile: rows of analysis/TIDY.md lockstat.csv (variant, cpus, point,
#   kind, contentions, waittime_avg_us, waittime_max_us, holdtime_avg_us).
#   svar, skind: the series, one per (variant index, kind; '-' = the plain
#   row of a lock without R/W sides).
#   pshort1, pshort2, ...: short names of the points (default: the id).
#   medfile (optional): rows of medians.csv (variant, cpus, point, metric,
#   median), the rows of a line next to each other.
#   logpanels: panels with a log y axis, as POINT:M, M = 1 contentions,
#   2 wait time average, 3 wait time maximum, 4 hold time average.
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist") || !exists("svar") || !exists("skind")) {
	print _me . ": set points, cpuslist, svar and skind"
	exit status 2
}
if (!exists("logpanels")) logpanels = ""
np = words(points)
ns = words(svar)
pshort(p) = exists(sprintf("pshort%d", p)) ? value(sprintf("pshort%d", p)) : word(points, p)
cols = "contentions waittime_avg_us waittime_max_us holdtime_avg_us"
meds = "lock_contentions lock_waittime_avg_us lock_waittime_max_us lock_holdtime_avg_us"
mname(m) = m == 1 ? "contentions" : m == 2 ? "wait time, avg" : \
	m == 3 ? "wait time, max" : "hold time, avg"
munit(m) = m == 1 ? "count" : "us"
kindof(s) = word(skind, s) eq "-" ? "" : word(skind, s)
kname(s) = word(skind, s) eq "-" ? " (one row)" : (word(skind, s) eq "R" ? "-R (read)" : "-W (write)")
kpt(s) = word(skind, s) eq "R" ? 9 : word(skind, s) eq "W" ? 11 : 7
sel(s, p) = strcol("variant") eq word(variants, word(svar, s) + 0) && strcol("point") eq word(points, p) \
	&& strcol("kind") eq kindof(s)
msel(k, p, m) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& strcol("metric") eq word(meds, m)
if (!exists("medfile")) medfile = ""
drawn(k) = hasword(svar, sprintf("%d", k))

axes = 'set xrange [0.5:words(cpuslist) + 0.5]; ' . \
	'set xtics (); do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }; ' . \
	'set xlabel "vCPUs"'
L = 0.06; R = 0.99; SP = 0.055
nkey = ns + (medfile ne "" ? sum [k=1:nv] (drawn(k) ? 1 : 0) : 0)
klines = keylines(nkey, longest(variants) + 10)
maintitle = lockname . " in /proc/lock_stat (points: one per boot and lock_stat row; lines: median of boots, all rows)"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	set multiplot layout np, 4 title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(80), paneltop(klines) spacing SP, fb(ptitle_px + 45)
	eval footer_on
	do for [p=1:np] {
		do for [m=1:4] {
			ptitle = pshort(p) . ": " . mname(m) . " (" . munit(m) . ")"
			set title ptitle font fitfont(strlen(ptitle), panelw(4, L, R, SP), basefont(fmt))
			lg = hasword(logpanels, sprintf("%s:%d", word(points, p), m))
			if (lg) { eval logy_on } else { eval logy_off }
			set ylabel munit(m) . (lg ? " (log scale)" : "")
			if (m == 1) { set format y "%.1s%c" } else { set format y "% h" }
			if (medfile ne "") {
				plot for [s=1:ns] infile \
					using (cpupos(column("cpus")) + shift(s, ns)):(sel(s, p) ? column(word(cols, m)) : NaN) \
					with points pointtype kpt(s) pointsize 0.8 linecolor rgb vcolor(word(svar, s) + 0) notitle, \
				     for [k=1:nv] medfile \
					using (cpupos(column("cpus"))):(msel(k, p, m) ? column("median") : NaN) \
					with lines linewidth 1.5 dashtype 2 linecolor rgb vcolor(k) notitle
			} else {
				plot for [s=1:ns] infile \
					using (cpupos(column("cpus")) + shift(s, ns)):(sel(s, p) ? column(word(cols, m)) : NaN) \
					with points pointtype kpt(s) pointsize 0.8 linecolor rgb vcolor(word(svar, s) + 0) notitle
			}
			eval footer_off
		}
	}
	eval keyrow_setup(klines)
	plot [0:1][0:1] for [s=1:ns] '+' using (NaN):(NaN) \
		with points pointtype kpt(s) pointsize 0.8 linecolor rgb vcolor(word(svar, s) + 0) \
		title word(variants, word(svar, s) + 0) . kname(s), \
	     for [k=1:nv] '+' using (NaN):(NaN) \
		with lines linewidth 1.5 dashtype 2 linecolor rgb vcolor(k) \
		title (medfile ne "" && drawn(k) ? word(variants, k) . " median" : "")
	unset multiplot
	set output
}
