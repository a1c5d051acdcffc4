# SPDX-License-Identifier: GPL-2.0
#
# The shared look of plots/*.gp: loaded by each script, not run alone
# (they set _me to their own path and define _d(), the dirname, first).
# Defines the variables every script accepts and the helpers they use.
#
# Variables (pass with gnuplot -e "name='value'; ..."):
#   infile    the CSV to read (required; each script says which tidy file)
#   variants  kernel variants, baseline first, e.g. 'before after' (required)
#   outbase   output path without extension (default: the script's name)
#   formats   'png svg' (default) or one of them
#   width, height   image size in pixels
#   footer    the setup line drawn at the bottom (make_plots.py builds it
#             from manifest.json)
#   oversub   vCPU counts that ran oversubscribed, marked '*' on the axis
#   lockname  the lock under test, in the titles (the campaign's lock_class;
#             default mboxes_lock)

set datafile separator comma
set datafile columnheaders
set encoding utf8

if (!exists("infile")) {
	print _me . ": set infile='FILE.csv' (see plots/README.md)"
	exit status 2
}
if (!exists("variants")) {
	print _me . ": set variants='before after' (baseline first)"
	exit status 2
}
if (!exists("formats")) formats = "png svg"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("footer")) footer = "setup: pass footer='...'"
if (!exists("oversub")) oversub = ""
if (!exists("lockname")) lockname = "mboxes_lock"
# default: NAME.png, NAME.svg in the current directory
if (!exists("outbase")) outbase = _me[strlen(_d(_me, strlen(_me))) + 1:strlen(_me) - 3]

nv = words(variants)

# One colour (Okabe-Ito, colour-blind safe) and point type per variant.
vcolor(k) = word("#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000", (k - 1) % 7 + 1)
vpt(k) = word("7 5 9 11 13 15 7", (k - 1) % 7 + 1) + 0
vdt(k) = (k - 1) % 3 + 1

# "set terminal" for one of formats, as a string to eval.  pngcairo draws
# a point as 4/3 pixels; the SVG's fontscale makes its text the same size,
# so that the SVG (the one a browser can measure) is laid out as the PNG.
termcmd(fmt) = fmt eq "svg" ? \
	sprintf("set terminal svg size %d,%d font 'DejaVu Sans,10' fontscale 1.3333 noenhanced background '#ffffff'", width, height) : \
	sprintf("set terminal pngcairo size %d,%d font 'DejaVu Sans,10' noenhanced background '#ffffff'", width, height)

# The default font size (titles never grow past it).
basefont(fmt) = 10

# Category axis of vCPU counts: position i of c in cpuslist, a small shift
# per series so that error bars do not hide each other, tick labels.
hasword(list, w) = strstrt(" " . list . " ", " " . w . " ") > 0
cpupos(c) = sum [i=1:words(cpuslist)] ((word(cpuslist, i) + 0) == c ? i : 0)
shift(k, n) = (k - (n + 1) / 2.0) * 0.08
cpulabel(i) = word(cpuslist, i) . (hasword(oversub, word(cpuslist, i)) ? "*" : "")


# Layout, in pixels (fractions of the image would squeeze a tall plot's
# title): from the top, the title of the plot (title_px), the key row (one
# line: keyline_px each), then the panels, each below its own title
# (ptitle_px).  fy(px): screen y px pixels below the top; fb(px): above the
# bottom.
title_px = 34
keyline_px = 17
ptitle_px = 38
fy(px) = 1 - px / (height + 0.0)
fb(px) = px / (height + 0.0)
# The key row: lines needed for n entries whose longest text has len
# characters, as gnuplot lays out a horizontal key (keyrow_setup's samplen
# and width): columns of len + 8 characters of ~8 pixels (its estimate of a
# character at these fonts, wider than the real one).
max(a, b) = a > b ? a : b
longest(list) = words(list) < 1 ? 0 : _longest(list, words(list))
_longest(list, i) = i < 1 ? 0 : max(strlen(word(list, i)), _longest(list, i - 1))
min(a, b) = a < b ? a : b
keylines(n, len) = ceil((n + 0.0) / floor(max(1, width * 0.97 / ((len + 8) * 8.0))))
# The top of the panels' plot area under a key of lines lines.
paneltop(lines) = fy(title_px + lines * keyline_px + ptitle_px)
# The key row is a plot of its own, drawn last over the whole width in the
# band below the title (no key ever covers data): eval keyrow_setup(lines),
# then plot for [...] '+' using (NaN):... with the panels' styles and titles.
keyrow_setup(lines) = "set lmargin at screen 0.01; set rmargin at screen 0.99; " . \
	sprintf("set tmargin at screen %g; set bmargin at screen %g; ", \
		fy(title_px - 2), fy(title_px + lines * keyline_px + 2)) . \
	"unset border; unset tics; unset xlabel; unset ylabel; unset title; " . \
	"unset grid; unset logscale; unset label; " . \
	"set key inside center center horizontal samplen 2.5 width 0 noopaque nobox noautotitle"

# A font spec (",N") for a title of n characters in w pixels: size at most
# big, smaller when the text would not fit (a character of DejaVu Sans is
# ~0.7 pixels per point wide, at 4/3 pixels per point), never below 7.
fitfont(n, w, big) = sprintf(",%.1f", max(7, min(big, w / (0.7 * n))))
# The width in pixels of one of n panels side by side between screen x l
# and r with spacing s.
panelw(n, l, r, s) = width * (r - l - (n - 1) * s) / n

# The setup footer, on the first panel of a multiplot only: one line at
# 9 pt (down to 8 for a long one), else two, cut at the ", " nearest the
# middle, so that it is never cut by the image's edge.
_fn = strlen(footer)
footer_font = min(9, width * 0.98 / (0.7 * _fn))
footer_text = footer
footer_y = fb(9)
if (footer_font < 8) {
	_cut = 0
	do for [i=2:_fn - 1] {
		if (footer[i:i + 1] eq ", " && abs(i - _fn / 2.0) < abs(_cut - _fn / 2.0)) { _cut = i }
	}
	if (_cut > 0) { footer_text = footer[1:_cut] . "\n" . footer[_cut + 2:] }
	footer_font = max(6, min(9, width * 0.98 / (0.7 * (_cut > 0 ? max(_cut, _fn - _cut - 1) : _fn))))
	footer_y = fb(9 + (_cut > 0 ? footer_font * 1.7 : 0))
}
footer_on = 'set label 99 footer_text at screen 0.01, screen footer_y left font sprintf(",%.1f", footer_font) textcolor rgb "#444444"'
footer_off = 'unset label 99'

# Log y for a panel (make_plots.py decides: its values, CI bars included,
# span more than 10x and are all positive) or linear from 0.
# logy_on/logy_off: eval before plotting the panel.
logy_on = 'set logscale y; set yrange [*:*]; set grid ytics mytics; set mytics 10'
logy_off = 'unset logscale y; set yrange [0:*]; set grid ytics nomytics; set mytics default'
# An axis label, "(log scale)" on a line of its own on a log axis:
#   set ylabel loglabel(TEXT, lg) offset screen logloff(lg), 0
# gnuplot places a y label by the first line; the second goes right, onto
# the tick labels, unless the label moves left by one line (15 pixels at
# 10 pt; screen units, as a character is not a pixel).
loglabel(text, log) = log ? text . "\n(log scale)" : text
logloff(log) = log ? -16.0 / width : 0
# The tick labels of a log y axis (1k, 10k, 100M): gnuplot makes room for
# them by their number of characters, and a k or M is wider than a digit;
# a leading space (invisible, right-aligned) buys one character, as "% h"
# does on a linear axis.
logfmt = " %.0s%c"
# The room left of a panel for its tick labels and y label, which gnuplot
# puts in the multiplot's left margin (first column) or spacing (the
# others): at least frac of the width, and 80 pixels (tick labels of up to
# six characters and a one-line label), 100 with a two-line label (log):
#   L = yroom(0.08, logpanels ne ""); SP = yroom(0.06, logpanels ne "")
yroom(frac, log) = max(frac, (log ? 100.0 : 80.0) / width)

# Verdict labels (make_plots.py, from tidy/comparisons.csv):
# nvl of them; vl<i> = 'PANEL CPUS K N COUNT Y': the panel, the vCPU count,
# the variant's index (its colour), the label's place (0...) in the list of
# the COUNT labels at this vCPU count, and the y of that list's middle (the
# median of the first label's variant); vt<i> = the text ('after: no
# harm').  A label starts right of the rightmost point of its vCPU count
# and stops short of the next count's points: eval verdict_fit(panel width
# in pixels, x axis span) picks how many lines a label takes (vwrap + 1:
# 'after: inconclusive (n≈23)' on one line; 'after:' above the verdict;
# 'after:', 'inconclusive', '(n≈23)'), the fewest whose font is 7 pt or
# more, and the font (8 pt down to 6).  Each label of a list has the same
# number of lines, so that none lies on another.  Before the panel's plot:
#   do for [i=1:nvl] { if (vl(i, 1) eq PANEL) { eval verdict_cmd(i) } }
# and after it: eval verdicts_off.
if (!exists("nvl")) nvl = 0
vl(i, j) = word(value(sprintf("vl%d", i)), j)
vt(i) = value(sprintf("vt%d", i))
vcut(i) = strstrt(vt(i), ": ")
# the verdict, and where its detail ' (n≈23)' starts in it (0: none)
vverd(i) = vcut(i) > 0 ? vt(i)[vcut(i) + 2:] : vt(i)
vpar(i) = strstrt(vverd(i), " (")
# the longest line, in characters, with the label on 1, 2 or 3 lines
vlen1(i) = strlen(vt(i))
vlen2(i) = vcut(i) > 0 ? max(vcut(i), strlen(vverd(i))) : strlen(vt(i))
vlen3(i) = vcut(i) > 0 && vpar(i) > 0 ? max(vcut(i), max(vpar(i) - 1, strlen(vverd(i)) - vpar(i))) : vlen2(i)
# line j (1...) of label i, "" past its last
vwho(i) = vcut(i) > 0 ? vt(i)[1:vcut(i)] : ""
vlt(i, j) = vcut(i) < 1 || vwrap == 0 ? (j == 1 ? vt(i) : "") : \
	j == 1 ? vwho(i) : \
	j == 2 ? (vwrap == 2 && vpar(i) > 0 ? vverd(i)[1:vpar(i) - 1] : vverd(i)) : \
	j == 3 && vwrap == 2 && vpar(i) > 0 ? vverd(i)[vpar(i) + 1:] : ""
vwrap = 0; vfont = 8
vfontfor(n) = min(8, vavail / (0.7 * max(1, n)))
verdict_fit(pw, span) = sprintf("vavail = %g; vmax1 = 0; vmax2 = 0; vmax3 = 0; ", \
		pw / span * (1 - 0.08 * (nv - 1)) - 14) . \
	"do for [i=1:nvl] { vmax1 = max(vmax1, vlen1(i)); vmax2 = max(vmax2, vlen2(i)); " . \
	"vmax3 = max(vmax3, vlen3(i)) }; " . \
	"vwrap = vfontfor(vmax1) >= 7 ? 0 : (vfontfor(vmax2) >= 7 ? 1 : 2); " . \
	"vfont = max(6, vfontfor(vwrap == 0 ? vmax1 : (vwrap == 1 ? vmax2 : vmax3)))"
# The lines are labels of their own, vpitch pixels per point of font apart
# (gnuplot's own line spacing, 1.5, is less than a line's height).
vpitch = 1.7
# the label's first line, in lines above the list's middle
vline(i) = ((vl(i, 5) * (vwrap + 1)) - 1) / 2.0 - vl(i, 4) * (vwrap + 1)
# The list's middle, in graph units: level with the first label's point,
# moved down or up just enough that the whole list stays inside the panel
# (a list above the top would lie on the panel's title, below the bottom on
# the tick labels).  Needs, for the panel: vy0, vy1 its y range as gnuplot
# autoscales it (GPVAL_Y_MIN, GPVAL_Y_MAX of the same plot drawn before on
# the dumb terminal into /dev/null), vlog its log flag, vph its height in
# pixels.
vy0 = 0; vy1 = 1; vlog = 0; vph = 100
vfrac(y) = vy1 <= vy0 || (vlog && (y <= 0 || vy0 <= 0)) ? 0.5 : \
	(vlog ? log(y / vy0) / log(vy1 / vy0) : (y - vy0) / (vy1 - vy0))
# (half the list, 3 pixels more: a line's glyphs sit a pixel above its middle)
vhalf(i) = (vl(i, 5) * (vwrap + 1) * vfont * vpitch / 2.0 + 3) / vph
vgy(i) = vhalf(i) >= 0.5 ? 0.5 : max(vhalf(i), min(1 - vhalf(i), vfrac(vl(i, 6) + 0)))
vlinecmd(i, j) = vlt(i, j) eq "" ? "" : \
	sprintf("set label %d vlt(%d, %d) at first cpupos(%s) + shift(nv, nv), graph %g left offset char 0.8, screen %g font ',%.1f' textcolor rgb vcolor(%s) front%s; ", \
	97 + 3 * i + j, i, j, vl(i, 2), vgy(i), (vline(i) - j + 1) * vfont * vpitch / height, \
	vfont, vl(i, 3), fmt eq "png" ? " boxed" : "")
verdict_cmd(i) = vlinecmd(i, 1) . vlinecmd(i, 2) . vlinecmd(i, 3)
verdicts_off = "do for [i=1:3 * nvl] { unset label 100 + i }"
# A line between two vCPU counts runs through the labels: on the PNG (the
# picture the report shows) each has a box of 75% white under it, which
# keeps it legible and lets the line show through.  Not on the SVG: its
# terminal draws a boxed text twice (once through a filter for the box).
set style textbox opaque fillcolor rgb "#40ffffff" noborder margins 1, 0

# The common look of a panel; the key row undoes some of it, so each
# script evals look (and its own axes) at the start of each format.
look = 'set border 3 linecolor rgb "#555555"; set xtics; set ytics; ' . \
	'set tics nomirror; set grid ytics linecolor rgb "#dddddd" dashtype 1, ' . \
	'linecolor rgb "#eeeeee" dashtype 1; ' . \
	'unset key; unset lmargin; unset rmargin; unset tmargin; unset bmargin'
eval look
set style line 99 linecolor rgb "#888888" dashtype 2
