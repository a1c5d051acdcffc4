# SPDX-License-Identifier: GPL-2.0
"""The judge of a guest run: what the console and the runner saw make of
it, a state and an exit code.  run_guest.py feeds it live, line by line
(watch()); ./run.sh recheck DIR runs it again on a saved run, as
rcutorture's kvm-recheck re-reads a run's console: a new console pattern
then re-judges old runs without booting anything.

Pure functions, but for recheck's reading of a run directory."""
import re

from lockbench import safeio
from lockbench.cli import CliError


EXIT = {"ok": 0, "hung": 10, "panic": 11, "oops": 12, "lockdep": 13,
        "warning": 14, "incomplete": 15, "killed": 16, "nospace": 17,
        "interrupted": 130}
# A state's spelling as a runner's meta.json or a campaign's manifest.json
# may give it (what the campaign reads back is checked against it).
STATE_RE = re.compile(r"[a-z][a-z_-]{0,31}")
# Most severe first: a run's state is the worst thing that happened to it.
SEVERITY = ["panic", "hung", "nospace", "interrupted", "oops", "lockdep", "warning",
            "killed", "incomplete", "ok"]
CONSOLE_PATTERNS = [
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("lockdep", re.compile(
        r"possible circular locking dependency|possible recursive locking"
        r"|inconsistent lock state|possible irq lock inversion"
        r"|suspicious RCU usage|lock held when returning|bad unlock balance"
        r"|held lock freed|INFO: lockdep is turned off|DEBUG_LOCKS_WARN_ON")),
    ("oops", re.compile(r"\bBUG:|\bOops\b|Internal error:|Unable to handle kernel")),
    ("warning", re.compile(r"WARNING:|\[ cut here \]")),
]


class RunError(CliError):
    """The runner's error: one line and its exit code (EXIT, or 2 for bad
    input, 3 for something not built or not installed)."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.exit_code = code


# Problems of one kind kept in full (meta.json, collect()'s lines); the
# rest are counted in one line, so that a guest printing 200,000 warnings
# or sending 100,000 bad members makes a few lines, not a 20 MB meta.json.
PROBLEMS_KEPT = 10


def note(problems, counts, kind, entry, more):
    """Append entry to problems, but only the first PROBLEMS_KEPT of its
    kind: past them one entry more(n) counts the n left out (updated in
    place, so that the list is whole whenever an interrupt stops it)."""
    c = counts.setdefault(kind, [0, None])
    c[0] += 1
    if c[0] <= PROBLEMS_KEPT:
        problems.append(entry)
    elif c[1] is None:
        c[1] = len(problems)
        problems.append(more(1))
    else:
        problems[c[1]] = more(c[0] - PROBLEMS_KEPT)


# LINE_MAX bytes (console.log keeps it whole), and the runner holds at most
# one piece, however long a line runs without a newline.
LINE_MAX = 4096
# What a line must hold to tell the watcher (guest/qemu.py watch) or a
# recheck anything: a marker (LOCKBENCH-INIT, -JOB-END, -CONSOLE-CUT, a
# point's "lockbench: point ID start|run-begin|run-end") or a console
# pattern's words.  Matched on the bytes, before decoding: a line the
# decoded patterns match, this matches too (ASCII words; \b in bytes is
# a boundary wherever it is one in text).
TELLING = re.compile(b"|".join([rb"LOCKBENCH-", rb"lockbench: point "]
                               + [pat.pattern.encode() for _s, pat in CONSOLE_PATTERNS]))


def _split(pending, data):
    """Every line that pending and data complete, cut into LINE_MAX
    pieces; pending keeps the rest.  Work linear in len(data), but a list
    item and a few Python steps per line."""
    lines, pos = [], 0
    while True:
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl
        while end - pos > LINE_MAX - len(pending):
            cut = pos + LINE_MAX - len(pending)
            lines.append(bytes(pending) + data[pos:cut])
            pending.clear()
            pos = cut
        pending += data[pos:end]
        if nl < 0:
            return lines
        lines.append(bytes(pending))
        pending.clear()
        pos = nl + 1


def _telling_lines(block):
    """The pieces (cut as _split cuts) of the lines of BLOCK, whole lines
    each ending in a newline, that TELLING matches: found by one regular
    expression over the block, so that lines that tell nothing (a flood
    of bare newlines) cost a scan of their bytes, not Python work each."""
    out, pos = [], 0
    for m in TELLING.finditer(block):
        if m.start() < pos:
            continue  # in a line already taken
        start = block.rfind(b"\n", 0, m.start()) + 1
        end = block.find(b"\n", m.end())
        line = block[start:end]
        out += [line[i:i + LINE_MAX] for i in range(0, len(line), LINE_MAX)]
        pos = end + 1
    return out


def split_lines(pending, data):
    """The lines that pending (a bytearray, the line so far, at most
    LINE_MAX bytes) and data complete, a line longer than LINE_MAX cut
    into pieces of LINE_MAX, that can tell the watcher anything (TELLING;
    the others are left out: they match no marker nor pattern); pending
    keeps the rest.  Work linear in len(data), and per byte for the lines
    between the chunk's first and last newline: 20 MB of bare newlines
    cost 27 s of CPU when each was a Python line (issue #43)."""
    first = data.find(b"\n")
    if first < 0:
        lines = _split(pending, data)
    else:
        last = data.rfind(b"\n")
        lines = _split(pending, data[:first + 1])  # pending is empty after it
        lines += _telling_lines(data[first + 1:last + 1])
        lines += _split(pending, data[last + 1:])
    return [x for x in lines if TELLING.search(x)]


# console.log keeps the first CONSOLE_MAX bytes of the console, then one
# line that says it was cut (console_part()); the runner still scans every
# byte, so meta.json's problems and markers are the whole console's.  A
# boot's console is tens of KB; a guest that floods it (short lines cost
# the watcher 0.9 s of CPU per MB, for up to the run's wall-clock limit)
# must not fill the results disk.
CONSOLE_MAX = 16 << 20
#: the start of the line that ends a cut console.log
CONSOLE_CUT = "LOCKBENCH-CONSOLE-CUT"


def console_part(seen, data):
    """What of data, the console's bytes after the first seen, goes into
    console.log: all of it within CONSOLE_MAX, then once one CONSOLE_CUT
    line, then nothing."""
    room = CONSOLE_MAX - seen
    if room >= len(data):
        return data
    if room < 0:
        return b""
    return (data[:room] + f"\n{CONSOLE_CUT}: console.log ends here, at {CONSOLE_MAX:,} bytes of "
            "console; the runner scanned the rest (meta.json has its problems)\n".encode())


def console_state(line):
    """The state a console line reports (CONSOLE_PATTERNS, first match), or
    None for an ordinary line."""
    for state, pat in CONSOLE_PATTERNS:
        if pat.search(line):
            return state
    return None


def note_console(problems, counts, state, t, line):
    """A console line of state into problems, t seconds into the run (None
    offline): the first PROBLEMS_KEPT of a state in full (note())."""
    note(problems, counts, state, {"state": state, "t": t, "line": line.strip()},
         lambda n: {"state": state, "t": t,
                    "line": f"... and {n:,} more {state} lines (console.log has them)"})


#: how finish() names the planned points a run did not bring back: the one
#: "incomplete" problem a recheck works out again instead of keeping
MISSING = "points not brought back: "


def finish(problems, planned, done, job_end, t):
    """The run's state: the worst (SEVERITY) of its problems' states, and
    "incomplete" when a planned point is not back or the guest's end
    marker (LOCKBENCH-JOB-END) never showed: a run that may have lost
    something is never "ok".  Appends the points not brought back to
    problems."""
    missing = [p for p in planned if p not in done]
    if missing:
        problems.append({"state": "incomplete", "t": t,
                         "line": MISSING + " ".join(missing)})
    states = {pr["state"] for pr in problems}
    if missing or not job_end:
        states.add("incomplete")
    return next(s for s in SEVERITY if s in states | {"ok"})


def scan_console(path):
    """The console problems of a saved console.log and whether the guest's
    end marker is in it: (problems, job_end), read in chunks and cut into
    lines as the live runner cuts them (split_lines)."""
    return _scan_console(path)[:2]


def _scan_console(path):
    """scan_console(), and whether console.log was cut (CONSOLE_CUT)."""
    problems, counts, pending, job_end, cut = [], {}, bytearray(), False, False

    def scan(raw):
        nonlocal job_end, cut
        line = raw.decode("utf-8", "replace").rstrip("\r")
        job_end = job_end or "LOCKBENCH-JOB-END" in line
        cut = cut or line.startswith(CONSOLE_CUT)
        state = console_state(line)
        if state:
            note_console(problems, counts, state, None, line)

    # a saved run's console.log: a regular file, not through a link
    with safeio.open_read(path) as f:
        while chunk := f.read(1 << 20):
            for raw in split_lines(pending, chunk):
                scan(raw)
    scan(pending)
    return problems, job_end, cut


#: the problems only the live runner can know (it stopped the guest, got a
#: signal, saw QEMU die, or refused part of the results stream): a recheck
#: takes them as recorded; the console's and the missing points' it redoes.
RUNNER_STATES = ("hung", "nospace", "interrupted", "killed")
#: the states a console line makes
CONSOLE_STATES = tuple(state for state, _ in CONSOLE_PATTERNS)


def rejudge(meta, console_path, points_on_disk):
    """Judge a saved run again (./run.sh recheck): meta is its meta.json,
    points_on_disk the planned points whose files are there.  Returns
    (state, problems).  A console.log cut at CONSOLE_MAX is judged anew as
    far as it goes; what the live runner found in the whole console (its
    problems of a state not found again, the end marker) is taken from
    meta.json."""
    kept = [pr for pr in meta.get("problems", [])
            if pr.get("state") in RUNNER_STATES or (
                pr.get("state") == "incomplete"
                and not str(pr.get("line", "")).startswith(MISSING))]
    problems, job_end, cut = _scan_console(console_path)
    if cut:
        found = {pr["state"] for pr in problems}
        kept += [pr for pr in meta.get("problems", [])
                 if pr.get("state") in CONSOLE_STATES and pr.get("state") not in found]
        job_end = job_end or meta.get("job_end_s") is not None
    problems += kept
    state = finish(problems, meta.get("points_planned", []), points_on_disk, job_end, None)
    return state, problems
