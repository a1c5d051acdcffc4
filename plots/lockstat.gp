# SPDX-License-Identifier: GPL-2.0
#
# mboxes_lock in /proc/lock_stat: contentions, wait time (avg, max) and
# hold time (avg) vs vCPUs, a row of panels per workload point.  One point
# per boot and lock_stat row: the rwlock's read (R) and write (W) sides
# beside the spinlock's single row; no per-row median exists in the tidy
# files, so none is drawn.  With medfile, a line per variant is the median
# over boots of all the class's rows together (medians.csv lock_*).
#
# Usage: gnuplot -e "infile='DIR/plots/data/lockstat.csv'; \
#            medfile='DIR/plots/data/lockstat-medians.csv'; \
#            variants='before after'; points='p1 p2'; cpuslist='1 2 4'; \
#            svar='1 1 2'; skind='R W -'" plots/lockstat.gp
#   infile: rows of analysis/TIDY.md lockstat.csv (variant, cpus, point,
#   kind, contentions, waittime_avg_us, waittime_max_us, holdtime_avg_us).
#   svar, skind: the series, one per (variant index, kind; '-' = the plain
#   row of a lock without R/W sides).
#   pshort1, pshort2, ...: short names of the points (default: the id).
#   medfile (optional): rows of medians.csv (variant, cpus, point, metric,
#   median), the rows of a line next to each other.
#   Common variables: plots/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("points") || !exists("cpuslist") || !exists("svar") || !exists("skind")) {
	print _me . ": set points, cpuslist, svar and skind"
	exit status 2
}
np = words(points)
ns = words(svar)
pshort(p) = exists(sprintf("pshort%d", p)) ? value(sprintf("pshort%d", p)) : word(points, p)
cols = "contentions waittime_avg_us waittime_max_us holdtime_avg_us"
meds = "lock_contentions lock_waittime_avg_us lock_waittime_max_us lock_holdtime_avg_us"
mname(m) = m == 1 ? "contentions (count)" : m == 2 ? "wait time, average (us)" : \
	m == 3 ? "wait time, maximum (us)" : "hold time, average (us)"
kindof(s) = word(skind, s) eq "-" ? "" : word(skind, s)
kname(s) = word(skind, s) eq "-" ? " (one row)" : (word(skind, s) eq "R" ? "-R (read)" : "-W (write)")
kpt(s) = word(skind, s) eq "R" ? 9 : word(skind, s) eq "W" ? 11 : 7
sel(s, p) = strcol("variant") eq word(variants, word(svar, s) + 0) && strcol("point") eq word(points, p) \
	&& strcol("kind") eq kindof(s)
msel(k, p, m) = strcol("variant") eq word(variants, k) && strcol("point") eq word(points, p) \
	&& strcol("metric") eq word(meds, m)
if (!exists("medfile")) medfile = ""

set xrange [0.5:words(cpuslist) + 0.5]
set xtics () ; do for [i=1:words(cpuslist)] { set xtics add (cpulabel(i) i) }
set yrange [0:*]
set xlabel "vCPUs"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	set multiplot layout np, 4 title "mboxes_lock in /proc/lock_stat (points: one per boot and lock_stat row; lines: median of boots, all rows)" font ",13" \
		margins 0.06, 0.99, 0.12, 0.9 spacing 0.05, 0.12
	eval footer_on
	set key top left opaque box linecolor rgb "#cccccc" font ",8" spacing 0.9
	do for [p=1:np] {
		do for [m=1:4] {
			set title pshort(p) . ": " . mname(m)
			set ylabel (m == 1 ? "count" : "us")
			if (m == 1) { set format y "%.1s%c" } else { set format y "% h" }
			if (medfile ne "") {
				plot for [s=1:ns] infile \
					using (cpupos(column("cpus")) + shift(s, ns)):(sel(s, p) ? column(word(cols, m)) : NaN) \
					with points pointtype kpt(s) pointsize 0.8 linecolor rgb vcolor(word(svar, s) + 0) \
					title word(variants, word(svar, s) + 0) . kname(s), \
				     for [k=1:nv] medfile \
					using (cpupos(column("cpus"))):(msel(k, p, m) ? column("median") : NaN) \
					with lines linewidth 1.5 dashtype 2 linecolor rgb vcolor(k) \
					title (strstrt(" " . svar . " ", " " . k . " ") ? word(variants, k) . " median" : "")
			} else {
				plot for [s=1:ns] infile \
					using (cpupos(column("cpus")) + shift(s, ns)):(sel(s, p) ? column(word(cols, m)) : NaN) \
					with points pointtype kpt(s) pointsize 0.8 linecolor rgb vcolor(word(svar, s) + 0) \
					title word(variants, word(svar, s) + 0) . kname(s)
			}
			eval footer_off
			unset key
		}
	}
	unset multiplot
	set output
}
