# SPDX-License-Identifier: GPL-2.0
"""Read and check a lock target (kernel-patches/targets/NAME.toml).

A target is the lock a campaign measures, as data: the source file and
the lock's name there, the class name /proc/lock_stat prints for it, the
rwlock kernel and its conversion (variants), the workloads that drive it
(guest/job.py WORKLOADS: "module" for mbox_bench, a guest/inside/lockload case
otherwise), the fs_writer.ko mode that drives its other side (writer)
and how the workload's counts relate to lock_stat's acquisitions
(cross_check, the relation the analysis and tests/check_lockload.py
check).  A campaign names it with
`target = "NAME"` (scripts/campaign/file.py; default mboxes_lock), which
gives the analysis and the plots their lock class and refuses points no
workload of the target's drives.  Adding a target is adding a file
(docs/targets.md).

A workload is a guest/inside/lockload case of guest/job.py WORKLOADS or a
generic one ("read /proc/iomem", "syscall 20": guest/job.py GENERIC),
whose acquisitions of the lock per op the key locks_per_op gives
({"read /proc/iomem" = 1}: ./run.sh calibrate measures it; ./run.sh
convert --workload writes both).  load() returns the workloads as the job
spells them ("read:/proc/iomem"), locks_per_op keyed the same way.
Targets are searched in DIR/targets/ of each folder of
LOCKBENCH_VARIANT_PATH (./run.sh convert --out DIR, --variants DIR)
before kernel-patches/targets/.

Every file convert writes goes through lockbench/safeio.py (place,
write): made new through no link, an existing one refused unless --force
(then replaced by a rename, never written through), every destination
checked before anything is written (issue #43).
"""
import errno
import os
import re
import sys

from lockbench import defaults, safeio, tomlw, workloads
from lockbench.cli import CliError, OneLineParser, run_cli
from guest import variant_name, job as jobmod
from lockbench.paths import ROOT

TARGET_DIR = os.path.join(ROOT, "kernel-patches", "targets")
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")
# A lock_stat class: "file_systems_lock", "&sb->s_type->i_lock_key".
LOCK_CLASS_RE = re.compile(r"[^\s\"'\\]{1,128}")
KEYS = {
    "description": (str, lambda v: 0 < len(v) <= 200, "text of 1-200 characters"),
    "file": (str, lambda v: re.fullmatch(r"[a-z0-9_/.-]+\.c", v) is not None,
             "a .c file of the kernel tree"),
    "lock": (str, lambda v: re.fullmatch(r"[a-z_][a-z0-9_]*", v) is not None,
             "a C identifier"),
    "lock_class": (str, LOCK_CLASS_RE.fullmatch, "a lock_stat class name (no spaces, "
                   "quotes or backslashes)"),
    "variants": (list, lambda v: len(v) == 2 and all(isinstance(x, str) for x in v),
                 "[rwlock variant, spinlock variant]"),
    "workloads": (list, lambda v: v and all(isinstance(x, str) for x in v),
                  "a non-empty list of workload names"),
    "cross_check": (str, lambda v: 0 < len(v) <= 400, "text of 1-400 characters"),
}
# Optional: {generic workload: its acquisitions of the lock per op}.
LOCKS_PER_OP = "locks_per_op"
# Optional: where the kernel takes the lock in interrupt context, in
# words; the target's writer (a point's writer_hz, fs_writer.ko) drives
# it there.  The answer says whether a campaign reached that context: a
# conversion lockdep never saw in an interrupt is not proven safe.
INTERRUPT = "interrupt"
# Optional: the fs_writer.ko lock= mode (bench-module/fs_writer.c) that
# drives the lock's other side during a point's writer_hz: the job line
# carries it (guest/job.py), the guest's init passes it through.  Only
# for a target with a lockload case of its own: a generic workload, or
# the module (its own writer), has none.
WRITER = "writer"
WRITER_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
OPTIONAL = (LOCKS_PER_OP, INTERRUPT, WRITER)


class TargetError(CliError):
    pass


def target_dirs():
    """The folders searched for NAME.toml, first match first."""
    extra = [os.path.join(d, "targets")
             for d in os.environ.get("LOCKBENCH_VARIANT_PATH", "").split(":") if d]
    return [d for d in extra if os.path.isdir(d)] + [TARGET_DIR]


def find(name):
    for d in target_dirs():
        path = os.path.join(d, name + ".toml")
        if os.path.isfile(path):
            return path
    return None


def names():
    out = set()
    for d in target_dirs():
        if os.path.isdir(d):
            out.update(f[:-5] for f in os.listdir(d)
                       if f.endswith(".toml") and NAME_RE.fullmatch(f[:-5]))
    return sorted(out)


def load(name):
    """The target NAME as a dict (its keys, plus "name"); TargetError with
    one line naming the file and key otherwise."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name not in names():
        raise TargetError(f"unknown target {name!r} (known: {', '.join(names())})")
    path = find(name)
    try:
        data = safeio.read_toml(path)
    except safeio.Unsafe as e:
        raise TargetError(str(e)) from None
    for key in data:
        if key not in KEYS and key not in OPTIONAL:
            raise TargetError(f"{path}: unknown key {key!r} "
                              f"(allowed: {', '.join((*KEYS, *OPTIONAL))})")
    irq = data.get(INTERRUPT)
    if irq is not None and not (isinstance(irq, str) and 0 < len(irq) <= 200):
        raise TargetError(f"{path}: {INTERRUPT}: must be text of 1-200 characters")
    for key, (typ, check, allowed) in KEYS.items():
        val = data.get(key)
        if not isinstance(val, typ) or not check(val):
            raise TargetError(f"{path}: {key}: must be {allowed}")
    tokens = []
    for w in data["workloads"]:
        try:
            tokens.append(jobmod.workload_token(w))
        except jobmod.JobError as e:
            raise TargetError(f"{path}: workloads: {e}") from None
    per_op = data.get(LOCKS_PER_OP, {})
    lo, hi = jobmod.POINT_KEYS["locks_per_op"]
    if not isinstance(per_op, dict):
        raise TargetError(f"{path}: {LOCKS_PER_OP}: must be a table "
                          '{"WORKLOAD" = N} of its generic workloads')
    locks = {}
    for w, k in per_op.items():
        tok = jobmod.workload_token(w) if jobmod.is_generic(w) else None
        if tok not in tokens:
            raise TargetError(f"{path}: {LOCKS_PER_OP}: {w!r} is not a generic workload "
                              "of workloads")
        if isinstance(k, bool) or not isinstance(k, int) or not lo <= k <= hi:
            raise TargetError(f"{path}: {LOCKS_PER_OP}: {w!r}: must be an integer {lo}..{hi}")
        locks[tok] = k
    for tok in tokens:
        if jobmod.is_generic(tok) and tok not in locks:
            raise TargetError(f"{path}: {LOCKS_PER_OP}: missing for the generic workload "
                              f"{workloads.workload_spelled(tok)!r} (./run.sh calibrate measures it)")
    writer = data.get(WRITER)
    if writer is not None:
        if not isinstance(writer, str) or not WRITER_RE.fullmatch(writer):
            raise TargetError(f"{path}: {WRITER}: must be an fs_writer.ko lock= mode "
                              "(bench-module/fs_writer.c)")
        if all(w == "module" or jobmod.is_generic(w) for w in tokens):
            raise TargetError(f"{path}: {WRITER}: only for a target with a lockload case "
                              "of its own (the module and a generic workload have no writer)")
    return {"name": name, **data, "workloads": tokens, LOCKS_PER_OP: locks}


def toml_text(comments, table, tables=()):
    """TOML for a file this module writes: '# ' comment lines, then the
    keys of table, then each [name] or [[name]] of tables.  Strings and
    keys are written by lockbench/tomlw.py (escaped as TOML wants), so no
    name can break out of its quotes nor a comment out of its line;
    load() reads every file back."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return f"{v:g}" if isinstance(v, float) else str(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{tomlw.key(k)} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return tomlw.string(str(v))

    def keys(t):
        return "".join(f"{tomlw.key(k)} = {value(v)}\n" for k, v in t.items())
    out = "".join(tomlw.comment(c) for c in comments) + keys(table)
    for head, t in tables:
        out += f"\n{head}\n" + keys(t)
    return out


def render(name, file, lock, lock_class, variants, workload, k, base):
    """The text of a target file for a generic WORKLOAD taking the lock K
    times an op (./run.sh convert --workload)."""
    spelled = workloads.workload_spelled(jobmod.workload_token(workload))
    return toml_text(
        [f"{lock} ({file}), driven by the generic lockload workload {spelled!r}:",
         f"written by ./run.sh convert --workload; locks_per_op measured on {base}",
         "by ./run.sh calibrate (or given with --locks-per-op)."],
        {"description": f"{lock} in {file}", "file": file, "lock": lock,
         "lock_class": lock_class, "variants": list(variants), "workloads": [spelled],
         "cross_check": f"{k} read_lock{'s' if k != 1 else ''} an op of {spelled} "
                        "(measured: ./run.sh calibrate); no writer"},
        [("[locks_per_op]", {spelled: k})])


def campaign(name, target, variants, workload):
    """A small campaign of TARGET's generic WORKLOAD, as the default
    campaign is made (./run.sh convert --workload writes it): 1 vCPU on
    QEMU's instruction count (icount: 3 boots a side decide the cost of
    an op in instructions), 2 vCPUs on the host's time (6 boots a side,
    the fewest that can reach a verdict there), the A/A control (icount
    needs it; on the wall clock it calibrates the verdict).  VARIANTS are
    variants (the base may be before@6.12 or before@arm64): the
    campaign names the variant files, with the base's arch and kernel
    version as its arches and kernels where they are not the default."""
    spelled = workloads.workload_spelled(jobmod.workload_token(workload))
    base = variant_name.split_name(variants[0])
    where = {}
    if base.arch != variant_name.DEFAULT_ARCH:
        where["arches"] = [base.arch]
    if base.kernel != variant_name.DEFAULT_KERNEL:
        where["kernels"] = [base.kernel]
    variants = [base.name, variant_name.split_name(variants[1]).name]
    return toml_text(
        [f"{variants[0]} against {variants[1]} under {spelled!r}: written by",
         "./run.sh convert --workload.  1 vCPU: the guest's clock is QEMU's",
         "instruction count (docs/icount.md), 3 boots a side decide the cost",
         "of an op in instructions.  2 vCPUs: contention, on the host's time,",
         "6 boots a side, the fewest that can reach a verdict: raise",
         "repetitions (16 in the shipped campaigns/*.toml) for a firmer one."],
        {"name": name, "variants": variants, **where, "cpus": [1, 2],
         "clock": {"1": "icount", "2": "wall"}, "icount_repetitions": 3,
         "repetitions": 6, "control": True, "margin": defaults.MARGIN,
         "target": target},
        [("[[points]]", {"id": "load", "workload": spelled, "duration_ms": 1000})])


def make_parser():
    p = OneLineParser(prog="python3 -m scripts.lock_target",
                      description="The lock target steps of ./run.sh convert "
                      "(scripts/convert/convert.sh).",
                      epilog="Bad input: one line on stderr, exit status 2.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check-workload", help="print a generic workload as the job "
                       "spells it")
    c.add_argument("workload", metavar="W")
    w = sub.add_parser("write", help="write DIR/NAME.toml (and CAMPAIGN_FILE) and "
                       "print its path")
    for name in ("dir", "name", "file", "lock", "lock_class", "rwlock_variant",
                 "spin_variant", "workload"):
        w.add_argument(name, metavar=name.upper())
    w.add_argument("k", metavar="K", type=int)
    w.add_argument("campaign_file", metavar="CAMPAIGN_FILE", nargs="?")
    w.add_argument("--force", action="store_true",
                   help="replace a file that is there (else refused)")
    pl = sub.add_parser("place", help="copy each SRC (convert's own temporary files) to "
                        "ROOT/REL through no link: an existing REL refused unless --force, "
                        "all checked before any is written")
    pl.add_argument("root", metavar="ROOT")
    pl.add_argument("files", metavar="REL=SRC", nargs="+")
    pl.add_argument("--force", action="store_true", help="replace what is there")
    pl.add_argument("--check", action="store_true",
                    help="only check that every REL may be written")
    return p


def _check_workload(workload):
    tok = jobmod.workload_token(workload)
    if not jobmod.is_generic(tok):
        raise TargetError(f"--workload {workload!r}: not a generic workload "
                          f"({workloads.GENERIC_SPELLING}); a shipped case has "
                          "its target already")
    print(workloads.workload_spelled(tok))
    return 0


def open_folder(path):
    """The folder PATH as a safeio.Dir, made (with its parents, as the user
    named them) when missing; its last name no link (a planted one is
    refused, not followed)."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return safeio.Dir.open(path, create=True, nofollow=True)
    except OSError as e:
        raise TargetError(f"{path}: {e.strerror or e}") from None


def _may_write(d, rel, force):
    """Refuse REL under the Dir D when something is there (unless force)
    or a folder on the way is a link."""
    try:
        there = d.exists(rel)
    except safeio.Unsafe as e:
        raise TargetError(str(e)) from None
    if there and not force:
        raise TargetError(f"{d.where(rel)} exists: not overwritten (give --force to replace it)")


def _put(d, rel, data, force):
    """Write DATA as REL under the Dir D: new (exclusive) unless force,
    then a new REL.tmp renamed over it; never through a link."""
    head, name = os.path.split(rel)
    try:
        where = d.sub(head, create=True) if head else d
        try:
            (where.write_atomic if force else where.write_new)(name, data)
        finally:
            if where is not d:
                where.close()
    except safeio.Unsafe as e:
        if e.errno == errno.EEXIST:
            raise TargetError(f"{d.where(rel)} exists: not overwritten (give --force to replace "
                              f"it)") from None
        raise TargetError(str(e)) from None


def _place(a):
    pairs = []
    for item in a.files:
        rel, sep, src = item.partition("=")
        if not sep or not src:
            raise TargetError(f"place: {item!r} is not REL=SRC")
        if rel.startswith("/") or not rel.strip("/") or ".." in rel.split("/"):
            raise TargetError(f"place: {rel!r} is not a path inside {a.root}")
        pairs.append((rel, src))
    if len({r for r, _ in pairs}) != len(pairs):
        raise TargetError("place: a destination named twice")
    if a.check and not os.path.lexists(a.root):
        return 0  # nothing there yet; checking makes no folder
    with (safeio.Dir.open(a.root, nofollow=True) if a.check else open_folder(a.root)) as d:
        for rel, _src in pairs:
            _may_write(d, rel, a.force)
        if a.check:
            return 0
        for rel, src in pairs:
            try:
                data = safeio.read_bytes(src, 64 << 20)
            except safeio.Unsafe as e:
                raise TargetError(str(e)) from None
            _put(d, rel, data, a.force)
    return 0


def _write(a):
    global TARGET_DIR
    if not NAME_RE.fullmatch(a.name):
        raise TargetError(f"target name {a.name!r}: must match {NAME_RE.pattern}")
    if not LOCK_CLASS_RE.fullmatch(a.lock_class):
        raise TargetError(f"lock class {a.lock_class!r}: not a lock_stat class name")
    variants = (a.rwlock_variant, a.spin_variant)
    text = render(a.name, a.file, a.lock, a.lock_class, variants, a.workload, a.k,
                  a.rwlock_variant)
    camp = None
    if a.campaign_file:
        cf = a.campaign_file
        camp = (open_folder(os.path.dirname(cf) or "."), os.path.basename(cf),
                campaign(os.path.basename(cf)[:-5], a.name, variants, a.workload))
    with open_folder(a.dir) as d:
        # Both checked before either is written.
        _may_write(d, a.name + ".toml", a.force)
        if camp:
            _may_write(camp[0], camp[1], a.force)
        _put(d, a.name + ".toml", text, a.force)
        # What was written must read back.
        try:
            old, TARGET_DIR = TARGET_DIR, a.dir
            try:
                load(a.name)
            finally:
                TARGET_DIR = old
        except Exception:
            d.unlink(a.name + ".toml")
            raise
    if camp:
        with camp[0]:
            _put(camp[0], camp[1], camp[2], a.force)
    print(os.path.join(a.dir, a.name + ".toml"))
    return 0


def main(argv):
    """python3 -m scripts.lock_target check-workload W | write DIR NAME FILE LOCK
    CLASS RWLOCK_VARIANT SPIN_VARIANT WORKLOAD K [CAMPAIGN_FILE] [--force] |
    place ROOT REL=SRC... [--force] [--check]: for
    scripts/convert/convert.sh, whose errors say "convert"."""
    return run_cli("convert", make_parser(), argv,
                   lambda a: _check_workload(a.workload) if a.cmd == "check-workload"
                   else _place(a) if a.cmd == "place" else _write(a))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
