# SPDX-License-Identifier: GPL-2.0
"""A stand-in qemu-system-arm for the collector's end-to-end tests
(test_collect_hostile.py): the real runner (python3 -m guest.run_guest)
starts it as it starts QEMU, from PATH.  It plays a guest that sends a
crafted results stream: it copies the file $LB_COLLECT_STREAM to the
results chardev of its command line (-chardev file,id=results,path=...,
as guest/qemu.py's qemu_cmd() gives it), prints the console markers of a
finished job, then exits, or with LB_COLLECT_STAY=1 stays (a guest still
running) until it is stopped.  `--version` answers as QEMU does."""
import os
import shutil
import sys
import time


def results_path(argv):
    """The path of -chardev file,id=results,path=P (QEMU doubles a comma
    in an option value)."""
    for opt, val in zip(argv, argv[1:]):
        if opt == "-chardev" and val.startswith("file,id=results,path="):
            return val[len("file,id=results,path="):].replace(",,", ",")
    raise SystemExit("collect_qemu: no results chardev in the command line")


def main(argv):
    if argv[1:] == ["--version"]:
        print("QEMU emulator version 7.2.0 (lockbench stand-in)")
        return 0
    shutil.copyfile(os.environ["LB_COLLECT_STREAM"], results_path(argv))
    print("LOCKBENCH-INIT stand-in", flush=True)
    for pid in os.environ.get("LB_COLLECT_POINTS", "p1").split():
        print(f"lockbench: point {pid} start\nlockbench: point {pid} done", flush=True)
    if os.environ.get("LB_COLLECT_STAY") == "1":
        print("stand-in: results sent, staying", flush=True)
        while True:
            time.sleep(1)
    print("LOCKBENCH-JOB-END status=ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
