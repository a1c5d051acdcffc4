# SPDX-License-Identifier: GPL-2.0
"""A remote host's runner that lies, for the --hosts tests: put in place
of payload/guest/run_guest.py by standin-ssh.sh (LB_STANDIN_RUNNER), so
that the host's python3 -m guest.run_guest runs it, it takes the
runner's arguments and, by LB_LIAR:

  honest  writes a boot's files that say ok (meta.json), boots nothing;
  lie     writes what no runner writes: meta.json -> LB_LIAR_SECRET (a
          file outside the results), a FIFO, a character device (as root),
          a link to a directory outside, its log a link too; and one
          regular file, ok.txt;
  sleep   writes its pid into LB_LIAR_PIDS/ and sleeps (a boot that is
          still running when the harness dies);
  inf     a meta.json that says ok with numbers no runner writes: in odd
          boots (cells/.tmp-cN-SEQ) "wall_s": Infinity (json's extension),
          in even ones 1e308 (finite, but no time a run takes), a
          4000-digit time and a problem line with a newline (issue #27;
          1e400, which float() read as inf, is refused as Infinity is
          since issue #43: tests/unit/test_safeio.py).

Each run appends its arguments, as JSON, to LB_LIAR_LOG.
"""
import json
import os
import sys
import time

args = sys.argv[1:]
out = args[args.index("--out") + 1]
with open(os.environ["LB_LIAR_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
mode = os.environ["LB_LIAR"]
if mode == "sleep":
    open(os.path.join(os.environ["LB_LIAR_PIDS"], str(os.getpid())), "w").close()
    time.sleep(600)
os.makedirs(os.path.join(out, "points", "p"))
with open(os.path.join(out, "ok.txt"), "w") as f:
    f.write("came back\n")
if mode == "inf":
    seq = int(out.rsplit("-", 1)[1])
    with open(os.path.join(out, "meta.json"), "w") as f:
        f.write('{"state": "ok", "wall_s": Infinity, "problems": []}' if seq % 2 else
                '{"state": "ok", "wall_s": 1e308, "boot_to_workload_s": 1%s, "problems": '
                '[{"state": "warning", "line": "two\\nlines"}]}' % ("0" * 4000))
    sys.exit(0)
if mode == "honest":
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({"state": "ok", "wall_s": 1.5, "problems": []}, f)
    sys.exit(0)
secret = os.environ["LB_LIAR_SECRET"]
os.symlink(secret, os.path.join(out, "meta.json"))
os.symlink(os.path.dirname(secret), os.path.join(out, "points", "outside"))
os.mkfifo(os.path.join(out, "points", "p", "results.txt"))
try:
    os.mknod(os.path.join(out, "null"), 0o666 | 0o020000, os.makedev(1, 3))
except PermissionError:
    pass
os.unlink(out + ".log")
os.symlink(secret, out + ".log")
