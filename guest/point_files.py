# SPDX-License-Identifier: GPL-2.0
"""The files the runner writes into a point's folder after collect()
(host-steal.txt: guest/vcpu.py; host-meter.txt: guest/hostspeed.py),
each over the point's run-begin..run-end window of console markers
(vcpu.note_run_mark): the one loop both use."""

from lockbench import safeio


def write_windows(out, done, marks, name, text_of):
    """Write points/ID/NAME under the runner's --out for every verified
    point ID of DONE that has both markers: text_of(ID, its markers) is
    the file's text, or None when its window holds nothing (no file:
    not measured).  Returns (the points written, [why a point's file
    could not be written])."""
    written, why = [], []
    for pid in done:
        mark = marks.get(pid, {})
        if "begin" not in mark or "end" not in mark:
            continue
        text = text_of(pid, mark)
        if text is None:
            continue
        try:
            # Never over a file that is there (collect() refuses a guest's),
            # nor through a link on the way: under the runner's own --out.
            with safeio.Dir.open(out) as d:
                d.write_new(f"points/{pid}/{name}", text)
        except OSError as e:
            why.append(f"{pid}: cannot write it: {e.strerror or e}")
            continue
        written.append(pid)
    return written, why
