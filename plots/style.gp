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
# default: NAME.png, NAME.svg in the current directory
if (!exists("outbase")) outbase = _me[strlen(_d(_me, strlen(_me))) + 1:strlen(_me) - 3]

nv = words(variants)

# One colour (Okabe-Ito, colour-blind safe) and point type per variant.
vcolor(k) = word("#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000", (k - 1) % 7 + 1)
vpt(k) = word("7 5 9 11 13 15 7", (k - 1) % 7 + 1) + 0
vdt(k) = (k - 1) % 3 + 1

# "set terminal" for one of formats, as a string to eval.
termcmd(fmt) = fmt eq "svg" ? \
	sprintf("set terminal svg size %d,%d font 'DejaVu Sans,11' noenhanced background '#ffffff'", width, height) : \
	sprintf("set terminal pngcairo size %d,%d font 'DejaVu Sans,10' noenhanced background '#ffffff'", width, height)

# Category axis of vCPU counts: position i of c in cpuslist, a small shift
# per series so that error bars do not hide each other, tick labels.
hasword(list, w) = strstrt(" " . list . " ", " " . w . " ") > 0
cpupos(c) = sum [i=1:words(cpuslist)] ((word(cpuslist, i) + 0) == c ? i : 0)
shift(k, n) = (k - (n + 1) / 2.0) * 0.08
cpulabel(i) = word(cpuslist, i) . (hasword(oversub, word(cpuslist, i)) ? "*" : "")

# The setup footer, on the first panel of a multiplot only.
footer_on = 'set label 99 footer at screen 0.01, screen 0.02 left font ",9" textcolor rgb "#444444"'
footer_off = 'unset label 99'

set border 3 linecolor rgb "#555555"
set tics nomirror
set grid ytics linecolor rgb "#dddddd" dashtype 1
set key noautotitle
set style line 99 linecolor rgb "#888888" dashtype 2
