#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for GNU parallel for the --hosts tests, first on PATH as
`parallel`: it runs the real one (LB_REAL_PARALLEL) with the same
arguments, except that a --joblog FILE goes to FILE.real; once that
parallel has ended, FILE gets its rows garbled as a tab in an sshlogin
garbled them (issue #27), so that the harness reads only the garbled
joblog:

  job 1   a tab in its host name (ten columns);
  job 2   as parallel wrote it;
  job 3   its exit value a host name, 'C=3 user@liar';
  job 4   no row at all (its files came back);
  and rows of no job: seq 0, seq 99, a line of junk, bytes that are not
  UTF-8, a NUL, and a last line cut short (no newline).

Its exit status is the real parallel's; a SIGTERM is passed on to it.
"""
import os
import signal
import subprocess
import sys

args = sys.argv[1:]
log = args[args.index("--joblog") + 1] if "--joblog" in args else None
if log:
    args[args.index("--joblog") + 1] = log + ".real"
proc = subprocess.Popen([os.environ["LB_REAL_PARALLEL"], *args])
signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
rc = proc.wait()
if log:
    with open(log + ".real", "rb") as f:
        header, *rows = f.read().split(b"\n")
    os.unlink(log + ".real")
    out = [header]
    for row in rows:
        cols = row.split(b"\t")
        if row and cols[0] == b"1":
            cols[1] = cols[1].replace(b" ", b"\t", 1)
        elif row and cols[0] == b"3":
            cols[6] = b"C=3 user@liar"
        elif row and cols[0] == b"4":
            continue
        out.append(b"\t".join(cols))
    out = [r for r in out if r]
    out += [b"0\thost\t1\t1\t0\t0\t0\t0\tcmd", b"99\thost\t1\t1\t0\t0\t0\t0\tcmd", b"junk",
            b"\xff\xfe\t\x00", b"2\thost\t1"]
    with open(log, "wb") as f:
        f.write(b"\n".join(out))
sys.exit(rc)
