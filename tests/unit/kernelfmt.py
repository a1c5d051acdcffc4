# SPDX-License-Identifier: GPL-2.0
"""/proc/lock_stat text as kernel/locking/lockdep_proc.c prints it, redone
in Python for fixtures and synthetic run directories (tests only).

Version 0.4 is Linux 6.1's seq_header()/seq_stats()/seq_lock_time(); 0.3
is the same without the avg columns (kernels 2.6.3x-4.x).

A class is a dict: name, version_nr (>1 adds "#N"), subclass (adds "/N"),
w and r = (contended bounces, wait, acquired bounces, hold) or None, with
wait/hold = (nr, min, max, total) in ns; points and contending = lists of
(count, addr, symbol).
"""


def snprint_time(nr):
    nr += 5
    div, rem = divmod(nr, 1000)
    return "%d.%02d" % (div, rem // 10)


def seq_lock_time(lt, version):
    nr, mn, mx, total = lt
    s = "%14d" % nr
    s += " %14s" % snprint_time(mn)
    s += " %14s" % snprint_time(mx)
    s += " %14s" % snprint_time(total)
    if version == "0.4":
        s += " %14s" % snprint_time(total // nr if nr else 0)
    return s


def kernel_name(name, version_nr=1, subclass=0):
    namelen = 38
    if version_nr > 1:
        namelen -= 2
    if subclass:
        namelen -= 2
    name = name[:namelen - 1]
    if version_nr > 1:
        name += ("#%d" % version_nr)[:2]
    if subclass:
        name += ("/%d" % subclass)[:2]
    return name


def ncols(version):
    return 12 if version == "0.4" else 10


def header(version, warning=False):
    out = "lock_stat version %s\n" % version
    if warning:
        out += ("*WARNING* lock debugging disabled!! - possibly due to a "
                "lockdep warning\n")
    width = 40 + 1 + ncols(version) * (14 + 1)
    cols = ["con-bounces", "contentions", "waittime-min", "waittime-max",
            "waittime-total", "waittime-avg", "acq-bounces", "acquisitions",
            "holdtime-min", "holdtime-max", "holdtime-total", "holdtime-avg"]
    if version == "0.3":
        cols = [c for c in cols if not c.endswith("-avg")]
    out += "-" * width + "\n"
    out += "%40s" % "class name" + "".join(" %14s" % c for c in cols) + "\n"
    out += "-" * width + "\n"
    out += "\n"
    return out


def seq_stats(cls, version):
    """cls: dict name, version_nr, subclass, w=(bounces_c, wait, bounces_a,
    hold) or None, r=same or None, points=[(count, addr, sym)],
    contending=[...]; wait/hold = (nr, min, max, total) in ns."""
    name = kernel_name(cls["name"], cls.get("version_nr", 1),
                       cls.get("subclass", 0))
    namelen = len(name)
    out = ""
    w, r = cls.get("w"), cls.get("r")
    if w and w[3][0]:
        if r and r[3][0]:
            out += "%38s-W:" % name
        else:
            out += "%40s:" % name
        out += "%14d " % w[0]
        out += seq_lock_time(w[1], version)
        out += " %14d " % w[2]
        out += seq_lock_time(w[3], version)
        out += "\n"
    if r and r[3][0]:
        out += "%38s-R:" % name
        out += "%14d " % r[0]
        out += seq_lock_time(r[1], version)
        out += " %14d " % r[2]
        out += seq_lock_time(r[3], version)
        out += "\n"
    nwait = (w[1][0] if w else 0) + (r[1][0] if r else 0)
    if nwait == 0:
        return out
    if r and r[3][0]:
        namelen += 2
    i = 0
    for i, (count, addr, sym) in enumerate(cls.get("points", [])):
        if i == 0:
            out += " " * (40 - namelen) + "-" * namelen + "\n"
        out += "%40s %14d %29s %s\n" % (name, count, "[<%s>]" % addr, sym)
    i = 0
    for i, (count, addr, sym) in enumerate(cls.get("contending", []), 1):
        if i == 1:
            out += " " * (40 - namelen) + "-" * namelen + "\n"
        out += "%40s %14d %29s %s\n" % (name, count, "[<%s>]" % addr, sym)
    if i:
        out += "\n" + "." * (40 + 1 + ncols(version) * (14 + 1)) + "\n\n"
    return out


def dump(classes, version="0.4", warning=False):
    """The whole file for a list of classes (printed in the given order)."""
    return header(version, warning) + "".join(seq_stats(c, version)
                                              for c in classes)
