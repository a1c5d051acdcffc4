# SPDX-License-Identifier: GPL-2.0
"""Merge the 1-repetition campaigns of a measurement's rounds into one
campaign directory (tests/pin-measure.sh, tests/meter-measure.sh): round
k's cells become repetition k (cells renumbered rKK-...), one look at the
end, so that ./run.sh analyze and report read them as one campaign.

Usage: merge_rounds.py SRC MODE ROUNDS: SRC/MODE-1 .. SRC/MODE-ROUNDS into
SRC/merged-MODE (replaced)."""
import json
import os
import shutil
import sys


def merge(src, mode, rounds):
    dst = os.path.join(src, f"merged-{mode}")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "cells"))
    man, cells = None, []
    for k in range(1, rounds + 1):
        d = os.path.join(src, f"{mode}-{k}")
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        if man is None:
            man = m
            for name in ("job.conf", "campaign.toml"):
                shutil.copy(os.path.join(d, name), dst)
        for c in m["cells"]:
            new = dict(c, rep=k, id=f"r{k:02d}-" + c["id"].split("-", 1)[1])
            shutil.copytree(os.path.join(d, "cells", c["id"]),
                            os.path.join(dst, "cells", new["id"]))
            cells.append(new)
    man["cells"] = cells
    man["campaign"].update(name=f"{mode}-interleaved", repetitions=rounds, looks=[rounds])
    with open(os.path.join(dst, "manifest.json"), "w") as f:
        json.dump(man, f, indent=2)
    return dst


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: merge_rounds.py SRC MODE ROUNDS")
    print(merge(sys.argv[1], sys.argv[2], int(sys.argv[3])))
