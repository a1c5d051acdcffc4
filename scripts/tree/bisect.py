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
did meanwhile) a boot an earlier step ran is taken, not booted again
(./run.sh campaign --reuse): GOOD and its control boot once a bisection,
and the confirmation boots only the parent's control.

Everything is in the run directory: bisect.json (the state: the
commit list, each step with its class), log.txt (a line a step), steps/
(one campaign per step), variants/ (a variant file per commit).  Ctrl-C
stops the step's campaign (which keeps what it measured);
./run.sh bisect --resume DIR goes on from there.

The directory is held as a campaign holds its own (issue #43): one
bisection at a time in it (an flock, lockbench/dirlock.py's kind), every
file read and written through a descriptor of it (lockbench/safeio.py
Dir: no link followed, a planted one replaced or refused), a directory
others can write refused.  --resume trusts nothing in bisect.json: it is
read capped (a FIFO, /dev/zero, deep nesting: one line), every key
checked, each step's folder re-derived from its place and commit (never a
path the file names), the commit list re-derived from the tree, and the
saved campaign.toml checked again by the campaign loader, as it is at the
start (--campaign): a campaign ./run.sh campaign would refuse never
starts a bisection.  Step campaigns are written by lockbench/tomlw.py.

For git bisect itself (a walk over merges, or your own bisect log),
--judge is one step as `git bisect run` wants it: the commit REF (HEAD:
the one git bisect checked out) against GOOD, exit 0 good, 1 bad, 125
skip, 128 an error (git bisect stops); its steps gather in one run
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
import io
import os
import re
import stat
import subprocess
import sys
import time

from guest import variant_name
from lockbench import safeio, tomlw
from lockbench.cli import CliError, OneLineParser, run_cli
from lockbench.paths import ROOT
from scripts import variant as variantmod
from scripts.campaign import file as campaign_file
from scripts.tree import kernel_tree

GOOD, BAD, SKIP = "good", "bad", "skip"
STATE = "bisect.json"
LOG = "log.txt"
CAMPAIGN = "campaign.toml"
#: a bisection's state: 1000 commits and their steps, a few hundred KB
STATE_MAX_BYTES = 4 << 20
#: a step's comparisons.csv: a few KB
CSV_MAX_BYTES = 16 << 20
KINDS = ("bad-check", "step", "confirm", "judge")
ID_RE = re.compile(r"[0-9a-f]{40}")
MAX_COMMITS = 1000


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
    """A campaign as TOML (lockbench/tomlw.py: tomllib reads it back the
    same, a character outside the BMP included): a step's campaign is the
    user's with its variants replaced."""
    try:
        return tomlw.dumps(data)
    except ValueError as e:
        raise BisectError(f"the step campaign cannot be written: {e}") from None


def step_campaign(base, name, good, other):
    """The user's campaign with variants [good, other], the A/A control."""
    c = dict(base)
    for k in ("variants", "baseline", "compare", "control", "name", "arches"):
        c.pop(k, None)
    return {"name": name, "variants": [good, other], "baseline": good, "control": True, **c}


def run_name(pos, kind, commit):
    """The folder of the step at place POS (from 1) of KIND on COMMIT,
    under the bisection's directory: derived, never read from a file."""
    return f"steps/{pos:02d}-{kind}-{commit[:12]}"


def primary_verdicts(d, run, baseline, variant):
    """[(cell, verdict, ratio, lo, hi, metric)] of the primary cells of
    RUN/tidy/comparisons.csv (RUN under the Dir D, read through no link),
    baseline against variant."""
    try:
        text = d.read_text(f"{run}/tidy/comparisons.csv", CSV_MAX_BYTES)
        rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("role") == "primary"
                and r.get("baseline") == baseline and r.get("variant") == variant]
        return [(f"{r['cpus']} vCPU {r['point']}", r["verdict"], r["ratio"], r["ratio_ci_lo"],
                 r["ratio_ci_hi"], r["metric"]) for r in rows]
    except (OSError, KeyError, csv.Error):
        return []


def _num(x):
    try:
        return f"{float(x):.4g}"
    except (TypeError, ValueError):
        return "-"


def cells_s(cells):
    return "; ".join(f"{c} {m} {_num(r)} [{_num(lo)}, {_num(hi)}] {v}"
                     for c, v, r, lo, hi, m in cells) or "no primary cell"


def call(cmd, log):
    """Run cmd, its output appended to LOG (a file object); its exit
    status.  Ctrl-C reaches the child too (one process group): wait until
    it has saved what it measured and exited, then raise Interrupted
    (subprocess.call would kill it)."""
    stopped = False
    with log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        while True:
            try:
                rc = p.wait()
                break
            except KeyboardInterrupt:
                stopped = True
    if stopped or rc == 130 or rc < 0:
        raise Interrupted()
    return rc


def hold(d, create=False):
    """The bisection directory D as a safeio.Dir, locked for this
    process's life (another bisection there: refused) and checked: a
    directory (its steps/ and variants/ too, no link), that no other user
    can write, whose state and log are regular files or absent."""
    try:
        dirh = safeio.Dir.open(d, create=create)
    except safeio.Unsafe as e:
        raise BisectError(f"{d}: {e.why}") from None
    if not dirh.lock():
        dirh.close()
        raise BisectError(f"{d}: another bisection is running in it")
    try:
        for sub in ("steps", "variants"):
            if create or dirh.exists(sub):
                dirh.sub(sub, create=True).close()
        for rel in (None, "steps", "variants"):
            if rel and not dirh.exists(rel):
                continue
            st = dirh.stat(rel)
            where = dirh.where(rel or "")
            if st.st_mode & stat.S_IWOTH:
                raise BisectError(f"{where} is writable by others (chmod o-w {where})")
        for rel in (STATE, LOG, CAMPAIGN):
            if dirh.exists(rel) and not stat.S_ISREG(dirh.stat(rel).st_mode):
                raise BisectError(f"{dirh.where(rel)}: "
                                  f"{safeio.kind(dirh.stat(rel).st_mode)}, not a regular file")
    except safeio.Unsafe as e:
        dirh.close()
        raise BisectError(str(e)) from None
    except BaseException:
        dirh.close()
        raise
    return dirh


class Bisect:
    """The state in DIR/bisect.json and the steps; run_step is the one
    place that builds and boots (a test gives its own).  Every file of
    DIR is read and written through self.dir (a descriptor of DIR)."""

    def __init__(self, d, state, run_step=None, dirh=None):
        self.d, self.s = d, state
        self.dir = dirh or safeio.Dir.open(d)
        self.run_step = run_step or self.campaign_step
        self.names = {}  # commit id -> its variant, written this process

    def save(self):
        # bisect.json.tmp made new (a link there unlinked, never
        # followed) and renamed over bisect.json through DIR's descriptor
        self.dir.write_json(STATE, self.s, 0o644, indent=1)

    def log(self, line):
        print(f"bisect: {line}", flush=True)
        with self.dir.open_append(LOG) as f:
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
                  "run": run_name(len(self.s["steps"]) + 1, kind, self.s["commits"][i]["id"])}
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
        """The variant of commit i (-1: GOOD): its file in DIR/variants,
        written once a process through DIR's descriptor (GOOD's is in
        every step; writing one checks the user's tree with git status)."""
        c = self.s["commits"][i] if i >= 0 else self.s["good"]
        if c["id"] not in self.names:
            self.names[c["id"]] = write_variant(self.dir, self.s["tree"], c["id"],
                                                self.s["like"])
        return self.names[c["id"]]

    def campaign_step(self, st):
        """Build the step's two commits, run the campaign, judge it."""
        rel = st["run"]
        run = os.path.join(self.d, rel)
        good, other = self.variant(st["base"]), self.variant(st["index"])
        vdir = os.path.join(self.d, "variants")
        sh = os.path.join(ROOT, "run.sh")
        built = self.s.setdefault("built", [])
        for v in (good, other):
            if v in built:  # once a bisection (GOOD is in every step)
                continue
            log = f"{rel}.build-{v}.log"
            rc = call([sh, "build", "--variants", vdir, v], self.dir.open_append(log))
            if rc in (4, 5, 6):
                return SKIP, f"{v} does not build (exit {rc}: {self.dir.where(log)})", []
            if rc:
                raise BisectError(f"building {v} failed, exit {rc}: see {self.dir.where(log)}")
            built.append(v)
            self.save()
        if self.dir.exists(f"{rel}/manifest.json"):
            cmd = [sh, "campaign", "--resume", run, "--variants", vdir, "--no-report"]
        else:
            cfile = f"{rel}.toml"
            self.dir.write_atomic(cfile, step_campaign_text(
                self.dir, good, other, f"bisect-{os.path.basename(rel)}"))
            # The boots earlier steps ran (GOOD's and its control's, a
            # commit judged again against its parent): taken, not booted
            # again, where they are icount boots (scripts/campaign/reuse.py).
            reuse = []
            for x in self.s["steps"]:
                if x["run"] != rel and self.dir.exists(f"{x['run']}/manifest.json"):
                    reuse += ["--reuse", os.path.join(self.d, x["run"])]
            cmd = [sh, "campaign", os.path.join(self.d, cfile), "--out", run, "--variants", vdir,
                   "--no-report"] + reuse
        rc = call(cmd, self.dir.open_append(f"{rel}.campaign.log"))
        if rc not in (0, 1):
            return SKIP, f"the campaign failed, exit {rc}: {run}.campaign.log", []
        rc = call([sh, "report", run, "--no-plots", "--quiet"],
                  self.dir.open_append(f"{rel}.report.log"))
        if rc:
            return SKIP, f"its report failed, exit {rc}: {run}.report.log", []
        cells = primary_verdicts(self.dir, rel, good, other)
        cls, why = classify([c[1] for c in cells])
        return cls, why, cells


def write_variant(dirh, tree, commit, like):
    """Write variants/NAME.toml of COMMIT under the bisection's Dir (made
    new and renamed into place: no link followed) and return NAME."""
    info = kernel_tree.resolve(tree, commit)
    name = kernel_tree.tree_variant_name(info["tree"], info["commit"])
    text = kernel_tree.variant_text(info, like)
    try:
        safeio.loads_toml(text.encode("utf-8"), f"{name}.toml")
    except safeio.Unsafe as e:
        raise BisectError(f"the variant file of {commit[:12]} would not load: {e.why}") from None
    dirh.write_atomic(f"variants/{name}.toml", text)
    return name


def step_campaign_text(dirh, good, other, name):
    """A step campaign's TOML: the bisection's campaign.toml (read through
    the Dir DIRH, capped, no link followed) with the variants GOOD and
    OTHER."""
    try:
        base = dirh.read_toml(CAMPAIGN, campaign_file.MAX_FILE_BYTES)
    except safeio.Unsafe as e:
        raise BisectError(str(e)) from None
    return dump_toml(step_campaign(base, name[:40], good, other))


def check_campaign(dirh, good, bad, named):
    """Load the step campaign of GOOD against BAD with the campaign
    loader, as ./run.sh campaign will: a campaign it refuses is refused
    now, before any build, in one line naming the user's file (NAMED)."""
    variantmod.add_dirs([dirh.where("variants")])
    text = step_campaign_text(dirh, good, bad, "bisect-check")
    rel = "steps/.campaign-check.toml"
    dirh.write_atomic(rel, text)
    try:
        campaign_file.load(dirh.where(rel), root=dirh.path)
    except CliError as e:
        msg = str(e).replace(dirh.where(rel) + ": ", "")
        raise BisectError(f"{named}: refused as ./run.sh campaign would refuse it: "
                          f"{msg}") from None
    finally:
        dirh.unlink(rel)


def read_user_campaign(path):
    """The bytes of the user's --campaign FILE: a regular file of at most
    1 MiB (a FIFO, /dev/zero: one line), TOML nested at most 32 deep."""
    try:
        text = campaign_file.read_capped(path)
        safeio.loads_toml(text, path)
    except safeio.Unsafe as e:
        raise BisectError(f"--campaign {e}") from None
    except OSError as e:
        raise BisectError(f"--campaign {path}: {e.strerror or e}") from None
    return text


def start(args):
    """A new bisection: check the tree and the refs, list the commits,
    check the campaign with the campaign loader."""
    tree = kernel_tree.check_tree(args.tree)
    good = kernel_tree.resolve(tree, args.good)
    bad = kernel_tree.resolve(tree, args.bad)
    if kernel_tree.git(tree, "merge-base", "--is-ancestor", good["commit"], bad["commit"],
                       check=False) is None:
        raise BisectError(f"{args.good} is not an ancestor of {args.bad} in {tree}")
    ids = first_parents(tree, good["commit"], bad["commit"])
    if not ids:
        raise BisectError(f"no commit between {args.good} and {args.bad}")
    if len(ids) > MAX_COMMITS:
        raise BisectError(f"{len(ids)} commits between {args.good} and {args.bad}: "
                          f"at most {MAX_COMMITS} (about 10 steps, each a build and a campaign)")
    text = read_user_campaign(args.campaign)
    if args.like not in variant_name.variant_names():
        raise BisectError(f"--like {args.like}: no such variant")
    d = args.out or os.path.join(ROOT, "results", time.strftime(
        f"bisect-{bad['commit'][:12]}-%Y%m%dT%H%M%SZ", time.gmtime()))
    os.makedirs(os.path.dirname(os.path.abspath(d)), exist_ok=True)
    dirh = hold(d, create=True)
    if dirh.exists(STATE):
        raise BisectError(f"{d} holds a bisection: ./run.sh bisect --resume {d}")
    dirh.write_atomic(CAMPAIGN, text)
    state = {"tree": tree, "like": args.like, "campaign": CAMPAIGN,
             "good": {"id": good["commit"], "subject": good["subject"]},
             "bad_ref": args.bad, "good_ref": args.good,
             "commits": commit_list(tree, ids), "steps": []}
    b = Bisect(d, state, dirh=dirh)
    check_campaign(dirh, b.variant(-1), b.variant(len(ids) - 1), f"--campaign {args.campaign}")
    b.save()
    b.log(f"{len(ids)} first-parent commits from {args.good} ({good['commit'][:12]}) to "
          f"{args.bad} ({bad['commit'][:12]}) in {tree}; the campaign {args.campaign}")
    return b


def first_parents(tree, good, bad):
    return kernel_tree.git(tree, "rev-list", "--first-parent", "--reverse",
                           f"{good}..{bad}").split()


def commit_list(tree, ids):
    """[{"id", "subject"}] of IDS, from the tree."""
    subjects = kernel_tree.git(tree, "log", "--no-walk=unsorted", "--format=%H %s",
                               *ids).splitlines() if ids else []
    subj = dict(line.split(" ", 1) if " " in line else (line, "") for line in subjects)
    return [{"id": c, "subject": subj.get(c, "")} for c in ids]


def judge_one(args):
    """--judge: one commit against GOOD, for git bisect run."""
    tree = kernel_tree.check_tree(args.tree)
    good = kernel_tree.resolve(tree, args.refs[0])
    ref = args.refs[1] if len(args.refs) > 1 else "HEAD"
    it = kernel_tree.resolve(tree, ref)
    d = args.out or os.path.join(ROOT, "results", f"bisect-judge-{good['commit'][:12]}")
    text = read_user_campaign(args.campaign)
    os.makedirs(os.path.dirname(os.path.abspath(d)), exist_ok=True)
    dirh = hold(d, create=True)
    if dirh.exists(STATE):
        b = load(d, dirh)
        if dirh.read_bytes(CAMPAIGN, campaign_file.MAX_FILE_BYTES) != text \
                or b.s["good"]["id"] != good["commit"] or b.s["tree"] != tree:
            raise BisectError(f"{d} judges against another GOOD, tree or campaign: --out DIR")
    else:
        if args.like not in variant_name.variant_names():
            raise BisectError(f"--like {args.like}: no such variant")
        dirh.write_atomic(CAMPAIGN, text)
        b = Bisect(d, {"tree": tree, "like": args.like, "campaign": CAMPAIGN,
                       "good": {"id": good["commit"], "subject": good["subject"]},
                       "commits": [], "steps": []}, dirh=dirh)
    check_campaign(dirh, b.variant(-1), write_variant(dirh, tree, it["commit"], b.s["like"]),
                   f"--campaign {args.campaign}")
    ids = [c["id"] for c in b.s["commits"]]
    if it["commit"] not in ids:
        if len(ids) >= MAX_COMMITS:
            raise BisectError(f"{d} has judged {len(ids)} commits: at most {MAX_COMMITS}")
        b.s["commits"].append({"id": it["commit"], "subject": it["subject"]})
        b.save()
        ids.append(it["commit"])
    st = b.judge("judge", ids.index(it["commit"]))
    return {GOOD: 0, BAD: 1}.get(st["class"], 125)


def _str(v, limit=1000):
    return isinstance(v, str) and len(v) <= limit


def check_state(state):
    """Why the bisect.json STATE is not one this harness wrote, or None:
    every key known and of its type, every step's folder the one derived
    from its place and commit, the names in it the variants of its own
    commits.  Nothing it names is used as a path."""
    if not isinstance(state, dict):
        return "not a JSON object"
    walk = "bad_ref" in state
    keys = {"tree", "like", "campaign", "good", "commits", "steps", "built", "result"} \
        | ({"bad_ref", "good_ref"} if walk else set())
    need = {"tree", "like", "campaign", "good", "commits", "steps"} \
        | ({"bad_ref", "good_ref"} if walk else set())
    if not need <= set(state) or set(state) - keys:
        return f"its keys are not a bisection's ({', '.join(sorted(map(str, state))[:12])})"
    tree = state["tree"]
    if not _str(tree, 4096) or not tree.startswith("/") or campaign_file.CONTROL_RE.search(tree):
        return "tree is not an absolute path"
    if state["campaign"] != CAMPAIGN:
        return f"campaign is not {CAMPAIGN!r}"
    if not _str(state["like"], 32) or not variant_name.NAME_RE.fullmatch(state["like"]):
        return "like is not a variant name"
    for k in ("bad_ref", "good_ref"):
        if walk and not (_str(state[k], 200) and variant_name.REF_RE.fullmatch(state[k])):
            return f"{k} is not a git revision"

    def commit_ok(c):
        return isinstance(c, dict) and set(c) == {"id", "subject"} and _str(c["id"], 40) \
            and ID_RE.fullmatch(c["id"]) and _str(c["subject"])
    if not commit_ok(state["good"]):
        return "good is not a commit"
    commits = state["commits"]
    if not isinstance(commits, list) or len(commits) > MAX_COMMITS \
            or not all(commit_ok(c) for c in commits) \
            or len({c["id"] for c in commits}) != len(commits) or (walk and not commits):
        return "commits is not a list of distinct commits"
    steps = state["steps"]
    if not isinstance(steps, list) or len(steps) > 4 * MAX_COMMITS:
        return "steps is not a list of steps"
    kinds = ("judge",) if not walk else ("bad-check", "step", "confirm")
    for pos, st in enumerate(steps, 1):
        if not (isinstance(st, dict) and {"kind", "index", "base", "run"} <= set(st)
                and set(st) <= {"kind", "index", "base", "run", "class", "why", "cells"}):
            return f"step {pos} is not a step"
        i = st["index"]
        if st["kind"] not in kinds or type(i) is not int or not 0 <= i < len(commits):
            return f"step {pos} has no kind and commit of this bisection"
        if st["base"] != (i - 1 if st["kind"] == "confirm" else -1) or type(st["base"]) is not int:
            return f"step {pos}'s base is not its commit's"
        if st["run"] != run_name(pos, st["kind"], commits[i]["id"]):
            return f"step {pos}'s folder is not {run_name(pos, st['kind'], commits[i]['id'])!r}"
        if "class" in st and st["class"] not in (GOOD, BAD, SKIP):
            return f"step {pos}'s class is not good, bad or skip"
        if "why" in st and not _str(st["why"], 10000):
            return f"step {pos}'s why is not a line"
        cells = st.get("cells", [])
        if not (isinstance(cells, list) and len(cells) <= 1000 and all(
                isinstance(c, list) and len(c) == 6 and all(_str(x) for x in c) for c in cells)):
            return f"step {pos}'s cells are not a step's"
    mine = {kernel_tree.tree_variant_name(tree, c["id"]) for c in [state["good"]] + commits}
    built = state.get("built", [])
    if not isinstance(built, list) or not all(isinstance(v, str) and v in mine for v in built):
        return "built names a variant that is none of its commits'"
    res = state.get("result")
    if res is not None and not (isinstance(res, dict) and set(res) == {"first_bad", "text"}
                                and (res["first_bad"] is None or res["first_bad"]
                                     in {c["id"] for c in commits})
                                and _str(res["text"], 100000)):
        return "result is not a bisection's"
    return None


def load(d, dirh=None):
    """The bisection in D, its bisect.json read through a descriptor of D
    (a regular file of at most STATE_MAX_BYTES, JSON at most 32 deep, no
    link followed) and checked (check_state); with the tree at hand, its
    commit list re-derived from it.  DIRH: D held already (hold)."""
    dirh = dirh or hold(d)
    try:
        try:
            state = dirh.read_json(STATE, STATE_MAX_BYTES)
        except safeio.Unsafe as e:
            raise BisectError(f"{d}: not a bisection ({e.why})") from None
        why = check_state(state)
        if why:
            raise BisectError(f"{d}: refusing to resume: bisect.json: {why}")
        b = Bisect(d, state, dirh=dirh)
    except BaseException:
        dirh.close()
        raise
    return b


def rederive(b):
    """--resume: the tree checked again and the commit list re-derived
    from it (GOOD..BAD, first parents; --judge's commits each one of the
    tree); the saved campaign checked again by the campaign loader."""
    s = b.s
    tree = kernel_tree.check_tree(s["tree"])
    if tree != s["tree"]:
        raise BisectError(f"{b.d}: refusing to resume: the tree is at {tree}, not {s['tree']}")
    if "bad_ref" in s:
        ids = first_parents(tree, s["good"]["id"], s["commits"][-1]["id"])
        if ids != [c["id"] for c in s["commits"]]:
            raise BisectError(f"{b.d}: refusing to resume: bisect.json's commits are not "
                              f"the first parents from GOOD to BAD in {tree}")
        s["commits"] = commit_list(tree, ids)
    check_campaign(b.dir, b.variant(-1), b.variant(len(s["commits"]) - 1),
                   b.dir.where(CAMPAIGN))


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
        if "bad_ref" not in b.s:
            raise BisectError(f"{args.resume}: the steps of --judge, not a bisection to resume")
        rederive(b)
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
    # Nothing a bisection makes is writable by group or others, whatever
    # the caller's umask (its campaigns set theirs the same way).
    os.umask(os.umask(0) | 0o022)
    rc = run_cli("bisect", make_parser(), argv, body)
    # git bisect run reads 1-127 but 125 as "bad": an error must stop it.
    if "--judge" in argv and rc not in (0, 1, 125, 130):
        rc = 128
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
