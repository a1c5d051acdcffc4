# SPDX-License-Identifier: GPL-2.0
#
# The crossover heat map: for each compared pair, vCPU count and think time
# (a panel each), a tile per list length (mailboxes, x) and share of reads
# (read_pct, y), coloured by the ratio variant/baseline of the campaign's
# primary metric on a log scale centred on 1 (teal: the variant better,
# brown: worse, white: the same; grey: no ratio), with the ratio and the
# verdict written in it.  Where the colour turns is where one lock starts
# to pay.
#
# Usage: gnuplot -e "infile='DIR/plots/data/crossover.csv'; \
#            variants='before after'; npan=2; ncols=2; nrows=1; \
#            mblist='4 64'; rplist='50 90'; pp1='m4-r50-t0 ...'; pc1=2; \
#            pb1='before'; pv1='after'; ptitle1='...'; cbmax=2; \
#            cbtics='0.5 1 2'" plots/gnuplot/crossover.gp
#   infile: the primary rows of analysis/TIDY.md comparisons.csv, each
#   cell on its own metric (baseline, variant, cpus, point, read_pct,
#   mailboxes, ratio, and better: 'higher' or 'lower', the way that
#   metric is better; a tile is coloured by the ratio, inverted where
#   lower is better, so that teal is always the variant better).
#   npan panels, laid out ncols a row (nrows rows); panel j: pp<j> its
#   points (one think time), pc<j> its vCPU count, pb<j> and pv<j> the
#   pair, ptitle<j> its title.  empty: the panels without data.
#   mblist, rplist: the mailboxes and read_pct values, ascending (the
#   tiles' columns and rows).
#   cbmax: the colour scale runs from 1/cbmax to cbmax (log); cbtics: its
#   ticks; cblab: its label.
#   ntl tile labels: tl<i> = 'PANEL XI YI', ta<i>, tb<i>, tc<i> its lines
#   (the ratio, the verdict, the verdict's detail; '' = none); tlen: the
#   longest line in characters (sets the font).
#   Common variables: plots/gnuplot/style.gp.

_me = ARG0
_d(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _d(s, i - 1))
load _d(_me, strlen(_me)) . "style.gp"
if (!exists("npan") || !exists("ncols") || !exists("nrows") || !exists("mblist") \
		|| !exists("rplist") || !exists("cbmax")) {
	print _me . ": set npan, ncols, nrows, mblist, rplist, cbmax and the panels pp1, pc1, pb1, pv1, ..."
	exit status 2
}
if (!exists("empty")) empty = ""
if (!exists("cbtics")) cbtics = "1"
if (!exists("cblab")) cblab = "ratio (log scale)"
if (!exists("ntl")) ntl = 0
if (!exists("tlen")) tlen = 8
cbmax = cbmax + 0
pvar(n, j) = exists(sprintf("%s%d", n, j)) ? value(sprintf("%s%d", n, j)) : ""
nmb = words(mblist); nrp = words(rplist)
mbpos(m) = sum [i=1:nmb] ((word(mblist, i) + 0) == m ? i : 0)
rppos(r) = sum [i=1:nrp] ((word(rplist, i) + 0) == r ? i : 0)
tsel(j) = hasword(pvar("pp", j), strcol("point")) && column("cpus") == (pvar("pc", j) + 0) \
	&& strcol("baseline") eq pvar("pb", j) && strcol("variant") eq pvar("pv", j)
# a tile's position, NaN when the row is not in panel j (with a ratio: full,
# else: grey)
tx(j, full) = tsel(j) && ((strcol("ratio") ne "") == full) ? mbpos(column("mailboxes")) : NaN
ty(j) = rppos(column("read_pct"))

teal = "#35978f"; brown = "#bf812d"; grey = "#cccccc"
set palette defined (0 brown, 0.25 "#dfc27d", 0.5 "#f5f5f5", 0.75 "#80cdc1", 1 teal)
# the tile's colour: the ratio, inverted where its metric is better lower
gain(x) = strcol("better") eq "lower" ? 1.0 / x : x

# the colour scale (again for each format: the key row unsets the tics), a
# hair wider than the ticks (one at the very end of a log axis is dropped)
cbaxis = 'set logscale cb; set cbrange [1.0 / (cbmax * 1.01):cbmax * 1.01]; set cbtics () nomirror; ' . \
	'do for [i=1:words(cbtics)] { set cbtics add (word(cbtics, i) word(cbtics, i) + 0) }'

axes = sprintf("set xrange [0.5:%g]; set yrange [0.5:%g]; ", nmb + 0.5, nrp + 0.5) . \
	'set xtics (); do for [i=1:nmb] { set xtics add (word(mblist, i) i) }; ' . \
	'set ytics (); do for [i=1:nrp] { set ytics add (word(rplist, i) i) }; ' . \
	'set xlabel "mailboxes (list length)"; set ylabel "reads (% of operations)"; ' . \
	'unset grid; set tics scale 0'
# the colour scale's room on the right
L = yroom(0.07, 0); R = 1 - 125.0 / width; SP = yroom(0.06, 0)
klines = keylines(3, 28)
maintitle = "Crossover: where each lock pays (the answer: each cell's ratio and verdict on its primary metric)"
# the tiles' size in pixels, and the font of their labels: the longest line
# across the tile's width, three lines of vpitch (plots/gnuplot/style.gp) down it
ph = (paneltop(klines) - fb(80)) * height / nrows - (ptitle_px + 50)
tilew = panelw(ncols, L, R, SP) / nmb
tileh = ph / nrp
tfont = max(6, min(9, min(tilew * 0.9 / (0.7 * max(1, tlen)), tileh * 0.9 / (3 * vpitch))))
tline(i, k) = k == 1 ? pvar("ta", i) : (k == 2 ? pvar("tb", i) : pvar("tc", i))
tnl(i) = (pvar("ta", i) ne "") + (pvar("tb", i) ne "") + (pvar("tc", i) ne "")
# line k of label i, lines centred on the tile
tlabel(i, k) = tline(i, k) eq "" ? "" : \
	sprintf("set label %d tline(%d, %d) at first %s, first %s center offset 0, screen %g font ',%.1f' textcolor rgb '#000000' front; ", \
	100 + 3 * i + k, i, k, word(pvar("tl", i), 2), word(pvar("tl", i), 3), \
	((tnl(i) + 1) / 2.0 - k) * tfont * vpitch / height, tfont)
tlabels_off = "do for [i=1:3 * ntl + 3] { unset label 100 + i }"

do for [fmt in formats] {
	eval termcmd(fmt)
	set output outbase . "." . fmt
	eval look
	eval axes
	eval cbaxis
	set multiplot layout nrows, ncols title maintitle font fitfont(strlen(maintitle), width * 0.98, 13) \
		margins L, R, fb(80), paneltop(klines) spacing SP, fb(ptitle_px + 50)
	eval footer_on
	do for [j=1:npan] {
		set title pvar("ptitle", j) font fitfont(strlen(pvar("ptitle", j)), panelw(ncols, L, R, SP), basefont(fmt))
		if (j == 1) {
			set colorbox user origin screen R + 30.0 / width, screen fb(80) \
				size screen 14.0 / width, screen paneltop(klines) - fb(80)
			set cblabel cblab offset -0.5, 0
		} else {
			unset colorbox
		}
		if (hasword(empty, sprintf("%d", j))) {
			set label 98 "no data" at graph 0.5, graph 0.5 center
			plot NaN notitle
			unset label 98
		} else {
			do for [i=1:ntl] {
				if (word(pvar("tl", i), 1) + 0 == j) {
					eval tlabel(i, 1) . tlabel(i, 2) . tlabel(i, 3)
				}
			}
			plot infile using (tx(j, 1)):(ty(j)):(tx(j, 1) - 0.5):(tx(j, 1) + 0.5):(ty(j) - 0.5):(ty(j) + 0.5):(gain(column("ratio"))) \
				with boxxyerror fillstyle solid 1.0 border linecolor rgb "#ffffff" linewidth 2 linecolor palette notitle, \
			     infile using (tx(j, 0)):(ty(j)):(tx(j, 0) - 0.5):(tx(j, 0) + 0.5):(ty(j) - 0.5):(ty(j) + 0.5) \
				with boxxyerror fillstyle solid 1.0 border linecolor rgb "#ffffff" linewidth 2 linecolor rgb grey notitle
			eval tlabels_off
		}
		eval footer_off
	}
	unset colorbox
	eval keyrow_setup(klines)
	plot [0:1][0:1] '+' using (NaN):(NaN) with boxes fillstyle solid 1.0 linecolor rgb teal title "better than the baseline", \
	     '+' using (NaN):(NaN) with boxes fillstyle solid 1.0 linecolor rgb brown title "worse than the baseline", \
	     '+' using (NaN):(NaN) with boxes fillstyle solid 1.0 linecolor rgb grey title "no ratio"
	unset multiplot
	set output
}
