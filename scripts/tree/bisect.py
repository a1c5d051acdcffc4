# SPDX-License-Identifier: GPL-2.0
"""Find the commit of a series that harms: a bisection whose test is a
campaign (./run.sh bisect).

The walk is over the first-parent commits from GOOD (excluded) to BAD,
read from the user's tree with git rev-list; nothing is written into the
tree (git bisect would write its refs and check commits out there).  On a
first-parent list, which is linear, a binary search is what git bisect
does; a commit that cannot be judged is skipped, as `git bisect skip`,
and the search goes on with the nearest commit that can.

Each step builds the commit (build-kernel.sh, from the nearest built
donor: scripts/tree/kernel_tree.py) and runs the user's campaign with two
variants, GOOD (the baseline, and its A/A control) and the commit.  Its
primary cells decide:

  any harm or worse (failures and unsafe included)   bad
  all no harm or better                               good
  anything else (inconclusive, withheld, ...)        skipped, with the
                                                      verdicts in the log
  a commit that does not build (exit 4, 5)            skipped

The campaign's own looks are the "more boots" an undecided commit gets
(repetitions = { min, max, looks }): it stops at the first look where
every primary cell is decided, else runs to max.  The first step judges
BAD itself (nothing to bisect unless it is bad); the last is a
confirmation run, the first bad commit against its parent.  Under
icount (clock = "icount": instruction counts, the same whatever the host
did meanwhile) a cell an earlier step ran is taken, not booted again
(./run.sh campaign --reuse): GOOD and its control boot once a bisection,
and the confirmation boots only the parent's control.

Everything is in the results directory: bisect.json (the state: the
commit list, each step with its class), log.txt (a line a step), steps/
(one campaign per step), variants/ (a variant file per commit).  Ctrl-C
stops the step's campaign (which keeps what it measured);
./run.sh bisect --resume DIR goes on from there.

For git bisect itself (a walk over merges, or your own bisect log),
--judge is one step as `git bisect run` wants it: the commit REF (HEAD:
the one git bisect checked out) against GOOD, exit 0 good, 1 bad, 125
skip, 128 an error (git bisect stops); its steps gather in one results
directory per GOOD, so a commit is judged once:
  git bisect start BAD GOOD
  git bisect run /path/to/run.sh bisect --judge --tree "$PWD" GOOD --campaign FILE

Usage: bisect.py --tree PATH GOOD BAD --campaign FILE [--out DIR] [--like V]
       bisect.py --resume DIR
       bisect.py --judge --tree PATH GOOD [REF] --campaign FILE [--out DIR]
Exit status: 0 the first bad commit found (and confirmed), 1 not found
(BAD not bad, every candidate skipped, or the confirmation disagrees), 2
bad input, 130 interrupted; with --judge as above.
"""
import csv
import json
import os
import re
import subprocess
import sys
import time
import tomllib

from lockbench.cli import CliError, OneLineParser, run_cli
from lockbench.paths import ROOT
from scripts.tree import kernel_tree

GOOD, BAD, SKIP = "good", "bad", "skip"
STATE = "bisect.json"


class BisectError(CliError):
    pass


class Interrupted(Exception):
    pass


def classify(verdicts):
    """A step's class from its primary cells' verdicts: (class, why)."""
    if not verdicts:
        return SKIP, "no primary cell was judged"
    bad = [v for v in verdicts if re.match(r"(harm|worse|unsafe)", v)]
    if bad:
        return BAD, ", ".join(sorted(set(bad)))
    if all(v in ("no harm", "better") for v in verdicts):
        return GOOD, ", ".join(sorted(set(verdicts)))
    return SKIP, "undecided: " + ", ".join(sorted(set(verdicts)))


def next_index(n, steps):
    """The next commit to judge of a first-parent list of n commits
    (index n - 1 is BAD, GOOD is before index 0), from the steps so far
    ({index: class}); None when the search is over.  The candidate
    nearest the middle of the range still open, skipped ones left out."""
    lo, hi = bounds(n, steps)
    cands = [i for i in range(lo + 1, hi) if i not in steps]
    if not cands:
        return None
    mid = (lo + hi) / 2
    return min(cands, key=lambda i: (abs(i - mid), i))


def bounds(n, steps):
    """(last good index, first bad index): -1 is GOOD, n - 1 is BAD unless
    a step said otherwise."""
    good = [i for i, c in steps.items() if c == GOOD]
    bad = [i for i, c in steps.items() if c == BAD]
    hi = min(bad, default=n - 1)
    lo = max([i for i in good if i < hi], default=-1)
    return lo, hi


def dump_toml(data):
    """A campaign as TOML, every table inline (tomllib reads it back the
    same): a step's campaign is the user's with its variants replaced."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{key(k)} = {val(x)}" for k, x in v.items()) + "}"
        raise BisectError(f"campaign value {v!r} cannot be written back")

    def key(k):
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)
    return "".join(f"{key(k)} = {val(v)}\n" for k, v in data.items())


def step_campaign(base, name, good, other):
    """The user's campaign with variants [good, other], the A/A control."""
    c = dict(base)
    for k in ("variants", "baseline", "compare", "control", "name", "arches"):
        c.pop(k, None)
    return {"name": name, "variants": [good, other], "baseline": good, "control": True, **c}


def primary_verdicts(run, baseline, variant):
    """[(cell, verdict, ratio, lo, hi, metric)] of the primary cells of
    run/tidy/comparisons.csv, baseline against variant."""
    path = os.path.join(run, "tidy", "comparisons.csv")
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("role") == "primary"
                    and r.get("baseline") == baseline and r.get("variant") == variant]
    except OSError:
        return []
    return [(f"{r['cpus']} vCPU {r['point']}", r["verdict"], r["ratio"], r["ratio_ci_lo"],
             r["ratio_ci_hi"], r["metric"]) for r in rows]


def _num(x):
    try:
        return f"{float(x):.4g}"
    except ValueError:
        return "-"


def cells_s(cells):
    return "; ".join(f"{c} {m} {_num(r)} [{_num(lo)}, {_num(hi)}] {v}"
                     for c, v, r, lo, hi, m in cells) or "no primary cell"


def call(cmd, log):
    """Run cmd, its output to the file log; its exit status.  Ctrl-C
    reaches the child too (one process group): wait until it has saved
    what it measured and exited, then raise Interrupted (subprocess.call
    would kill it)."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    stopped = False
    with open(log, "a") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
        while True:
            try:
                rc = p.wait()
                break
            except KeyboardInterrupt:
                stopped = True
    if stopped or rc == 130 or rc < 0:
        raise Interrupted()
    return rc


class Bisect:
    """The state in DIR/bisect.json and the steps; run_step is the one
    place that builds and boots (a test gives its own)."""

    def __init__(self, d, state, run_step=None):
        self.d, self.s = d, state
        self.run_step = run_step or self.campaign_step
        self.names = {}  # commit id -> its variant, written this process

    def save(self):
        tmp = os.path.join(self.d, STATE + ".tmp")
        with open(tmp, "w") as f:
            json.dump(self.s, f, indent=1)
        os.replace(tmp, os.path.join(self.d, STATE))

    def log(self, line):
        print(f"bisect: {line}", flush=True)
        with open(os.path.join(self.d, "log.txt"), "a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {line}\n")

    def commit_s(self, i):
        c = self.s["commits"][i] if i >= 0 else self.s["good"]
        return f"{c['id'][:12]} (\"{c['subject'][:50].rstrip()}\")"

    def judge(self, kind, i, base=-1):
        """Judge commit i against base (-1: GOOD): a recorded step's class,
        or a new step run now."""
        for st in self.s["steps"]:
            if st["kind"] == kind and st["index"] == i and st.get("class"):
                return st
        st = next((st for st in self.s["steps"] if st["kind"] == kind and st["index"] == i),
                  None)
        if st is None:
            st = {"kind": kind, "index": i, "base": base,
                  "run": os.path.join("steps", f"{len(self.s['steps']) + 1:02d}-{kind}-"
                                      f"{self.s['commits'][i]['id'][:12]}")}
            self.s["steps"].append(st)
            self.save()
        self.log(f"{kind} {self.s['steps'].index(st) + 1}: {self.commit_s(i)} against "
                 f"{self.commit_s(base)}")
        st["class"], st["why"], st["cells"] = self.run_step(st)
        self.save()
        self.log(f"  -> {st['class']}: {st['why']}"
                 + (f"; {cells_s(st['cells'])}" if st["cells"] else ""))
        return st

    def walk(self):
        n = len(self.s["commits"])
        st = self.judge("bad-check", n - 1)
        if st["class"] != BAD:
            self.finish(None, f"BAD {self.commit_s(n - 1)} is not judged bad against GOOD "
                              f"({st['class']}: {st['why']}): nothing to bisect")
            return 1
        while True:
            steps = {x["index"]: x["class"] for x in self.s["steps"] if x["kind"] in
                     ("bad-check", "step") and x.get("class")}
            i = next_index(n, steps)
            if i is None:
                break
            self.judge("step", i)
        lo, hi = bounds(n, steps)
        skipped = [i for i in range(lo + 1, hi) if steps.get(i) == SKIP]
        if skipped:
            self.finish(None, "the first bad commit could not be told apart: one of "
                        + ", ".join(self.commit_s(i) for i in skipped + [hi])
                        + " (the others between them were skipped)")
            return 1
        conf = self.judge("confirm", hi, base=hi - 1)
        vs_good = next((x for x in self.s["steps"] if x["index"] == hi and x["kind"] in
                        ("bad-check", "step")), None)
        lines = [f"first bad commit: {self.commit_s(hi)}",
                 f"  against its parent {self.commit_s(hi - 1)}: {conf['class']}; "
                 f"{cells_s(conf['cells'])}",
                 f"  against GOOD {self.commit_s(-1)}: {cells_s(vs_good['cells'])}",
                 f"  steps: {sum(x['kind'] != 'confirm' for x in self.s['steps'])} "
                 f"and a confirmation, over {n} commits"]
        ok = conf["class"] == BAD
        if not ok:
            lines.append("  NOT CONFIRMED: against its parent it was not judged bad; "
                         "the harm may be spread over several commits")
        self.finish(self.s["commits"][hi]["id"], "\n".join(lines))
        return 0 if ok else 1

    def finish(self, first_bad, text):
        self.s["result"] = {"first_bad": first_bad, "text": text}
        self.save()
        for line in text.splitlines():
            self.log(line)

    def variant(self, i):
        """The variant file of commit i (-1: GOOD) in DIR/variants, written
        once a process (GOOD's is in every step; writing one checks the
        user's tree with git status)."""
        c = self.s["commits"][i] if i >= 0 else self.s["good"]
        if c["id"] not in self.names:
            self.names[c["id"]] = kernel_tree.write_variants(
                self.s["tree"], [c["id"]], os.path.join(self.d, "variants"),
                self.s["like"])[0][0]
        return self.names[c["id"]]

    def campaign_step(self, st):
        """Build the step's two commits, run the campaign, judge it."""
        run = os.path.join(self.d, st["run"])
        good, other = self.variant(st["base"]), self.variant(st["index"])
        vdir = os.path.join(self.d, "variants")
        sh = os.path.join(ROOT, "run.sh")
        built = self.s.setdefault("built", [])
        for v in (good, other):
            if v in built:  # once a bisection (GOOD is in every step)
                continue
            log = run + f".build-{v}.log"
            rc = call([sh, "build", "--variants", vdir, v], log)
            if rc in (4, 5, 6):
                return SKIP, f"{v} does not build (exit {rc}: {log})", []
            if rc:
                raise BisectError(f"building {v} failed, exit {rc}: see {log}")
            built.append(v)
            self.save()
        if os.path.isfile(os.path.join(run, "manifest.json")):
            cmd = [sh, "campaign", "--resume", run, "--variants", vdir, "--no-report"]
        else:
            with open(os.path.join(self.d, self.s["campaign"]), "rb") as f:
                base = tomllib.load(f)
            cfile = run + ".toml"
            with open(cfile, "w") as f:
                f.write(dump_toml(step_campaign(base, f"bisect-{os.path.basename(run)}"[:40],
                                                good, other)))
            # The cells earlier steps ran (GOOD's and its control's, a
            # commit judged again against its parent): taken, not booted
            # again, where they are icount cells (scripts/campaign/manifest.py
            # reuse).
            reuse = []
            for x in self.s["steps"]:
                r = os.path.join(self.d, x.get("run", ""))
                if x.get("run") and r != run and os.path.isfile(os.path.join(r, "manifest.json")):
                    reuse += ["--reuse", r]
            cmd = [sh, "campaign", cfile, "--out", run, "--variants", vdir, "--no-report"] + reuse
        rc = call(cmd, run + ".campaign.log")
        if rc not in (0, 1):
            return SKIP, f"the campaign failed, exit {rc}: {run}.campaign.log", []
        rc = call([sh, "report", run, "--no-plots", "--quiet"], run + ".report.log")
        if rc:
            return SKIP, f"its report failed, exit {rc}: {run}.report.log", []
        cells = primary_verdicts(run, good, other)
        cls, why = classify([c[1] for c in cells])
        return cls, why, cells


def read_campaign(path):
    """The bytes of the campaign file PATH, once checked to be TOML (the
    step campaigns are made from it; campaign_file checks the rest)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20)
        tomllib.loads(text.decode())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BisectError(f"--campaign {path}: {e}") from None
    return text


def start(args):
    """A new bisection: check the tree and the refs, list the commits."""
    tree = kernel_tree.check_tree(args.tree)
    good = kernel_tree.resolve(tree, args.good)
    bad = kernel_tree.resolve(tree, args.bad)
    if kernel_tree.git(tree, "merge-base", "--is-ancestor", good["commit"], bad["commit"],
                       check=False) is None:
        raise BisectError(f"{args.good} is not an ancestor of {args.bad} in {tree}")
    ids = kernel_tree.git(tree, "rev-list", "--first-parent", "--reverse",
                          f"{good['commit']}..{bad['commit']}").split()
    if not ids:
        raise BisectError(f"no commit between {args.good} and {args.bad}")
    if len(ids) > 1000:
        raise BisectError(f"{len(ids)} commits between {args.good} and {args.bad}: "
                          f"at most 1000 (about 10 steps, each a build and a campaign)")
    text = read_campaign(args.campaign)
    d = args.out or os.path.join(ROOT, "results", time.strftime(
        f"bisect-{bad['commit'][:12]}-%Y%m%dT%H%M%SZ", time.gmtime()))
    if os.path.exists(os.path.join(d, STATE)):
        raise BisectError(f"{d} holds a bisection: ./run.sh bisect --resume {d}")
    os.makedirs(os.path.join(d, "steps"), exist_ok=True)
    with open(os.path.join(d, "campaign.toml"), "wb") as f:
        f.write(text)
    subjects = kernel_tree.git(tree, "log", "--no-walk=unsorted", "--format=%H %s",
                               *ids).splitlines()
    subj = dict(line.split(" ", 1) if " " in line else (line, "") for line in subjects)
    state = {"tree": tree, "like": args.like, "campaign": "campaign.toml",
             "good": {"id": good["commit"], "subject": good["subject"]},
             "bad_ref": args.bad, "good_ref": args.good,
             "commits": [{"id": c, "subject": subj.get(c, "")} for c in ids],
             "steps": []}
    b = Bisect(d, state)
    b.save()
    b.log(f"{len(ids)} first-parent commits from {args.good} ({good['commit'][:12]}) to "
          f"{args.bad} ({bad['commit'][:12]}) in {tree}; the campaign {args.campaign}")
    return b


def judge_one(args):
    """--judge: one commit against GOOD, for git bisect run."""
    tree = kernel_tree.check_tree(args.tree)
    good = kernel_tree.resolve(tree, args.refs[0])
    ref = args.refs[1] if len(args.refs) > 1 else "HEAD"
    it = kernel_tree.resolve(tree, ref)
    d = args.out or os.path.join(ROOT, "results", f"bisect-judge-{good['commit'][:12]}")
    text = read_campaign(args.campaign)
    if os.path.exists(os.path.join(d, STATE)):
        b = load(d)
        with open(os.path.join(d, b.s["campaign"]), "rb") as f:
            if f.read() != text or b.s["good"]["id"] != good["commit"]:
                raise BisectError(f"{d} judges against another GOOD or campaign: --out DIR")
    else:
        os.makedirs(os.path.join(d, "steps"), exist_ok=True)
        with open(os.path.join(d, "campaign.toml"), "wb") as f:
            f.write(text)
        b = Bisect(d, {"tree": tree, "like": args.like, "campaign": "campaign.toml",
                       "good": {"id": good["commit"], "subject": good["subject"]},
                       "commits": [], "steps": []})
    ids = [c["id"] for c in b.s["commits"]]
    if it["commit"] not in ids:
        b.s["commits"].append({"id": it["commit"], "subject": it["subject"]})
        b.save()
        ids.append(it["commit"])
    st = b.judge("judge", ids.index(it["commit"]))
    return {GOOD: 0, BAD: 1}.get(st["class"], 125)


def load(d):
    try:
        with open(os.path.join(d, STATE)) as f:
            state = json.load(f)
        for k in ("tree", "like", "campaign", "good", "commits", "steps"):
            state[k]  # noqa: B018 (a KeyError says the file is not ours)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BisectError(f"--resume {d}: not a bisection ({e})") from None
    return Bisect(d, state)


def make_parser():
    p = OneLineParser(prog="bisect", hint="./run.sh bisect --help",
                      description=__doc__.split("\n")[0])
    p.add_argument("--tree")
    p.add_argument("refs", nargs="*", metavar="GOOD BAD")
    p.add_argument("--campaign")
    p.add_argument("--out")
    p.add_argument("--like", default="before")
    p.add_argument("--resume", metavar="DIR")
    p.add_argument("--judge", action="store_true",
                   help="one step for git bisect run: exit 0 good, 1 bad, 125 skip")
    return p


def body(args):
    if args.judge:
        if not (args.tree and 1 <= len(args.refs) <= 2 and args.campaign) or args.resume:
            raise BisectError("--judge needs --tree PATH GOOD [REF] --campaign FILE")
        try:
            return judge_one(args)
        except (Interrupted, KeyboardInterrupt):
            return 130
    if args.resume:
        if args.tree or args.refs or args.campaign:
            raise BisectError("--resume DIR takes nothing else")
        b = load(args.resume)
        b.log("resumed")
    else:
        if not (args.tree and len(args.refs) == 2 and args.campaign):
            raise BisectError("give --tree PATH GOOD BAD --campaign FILE (or --resume DIR)")
        args.good, args.bad = args.refs
        b = start(args)
    try:
        return b.walk()
    except (Interrupted, KeyboardInterrupt):
        print(f"bisect: interrupted; go on with ./run.sh bisect --resume {b.d}",
              file=sys.stderr)
        return 130


def main(argv):
    rc = run_cli("bisect", make_parser(), argv, body)
    # git bisect run reads 1-127 but 125 as "bad": an error must stop it.
    if "--judge" in argv and rc not in (0, 1, 125, 130):
        rc = 128
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
