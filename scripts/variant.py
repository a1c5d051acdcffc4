# SPDX-License-Identifier: GPL-2.0
"""Read and check a kernel variant file (kernel-patches/variants/NAME.toml).

A variant is data: the patches of the series it applies, in order, and the
config fragments merged onto tinyconfig.  Adding a variant is adding a file.
Variants are architecture- and version-neutral: the per-architecture base
fragment, configs/virt-ARCH.config, is merged first for every build, and a
variant is VARIANT[@ARCH][@VERSION] (ARCH one of ARCHES, VERSION one
of KERNELS, kernel-patches/kernels.toml; "before" is "before@arm@6.1",
built in build/before; "before@arm64" in build/before@arm64,
"before@6.12" in build/before@6.12, Debian's linux-source-6.12).
A boot variant boots another variant's kernel with kernel parameters of
its own, building nothing: `boots = "OTHER"`, `cmdline = "k=v ..."` and a
description (tests/variants: one test kernel, several planted faults).
Optional keys: arches = [...] (the architectures the variant fits; default
all), kernels = [...] (the kernel versions it fits; default all), lookup_lock = "lock" (default: omap_mbox_get() takes mboxes_lock) or
"none" (lookups take no lock, e.g. under RCU: lock_stat then counts the
writes only); converts = ["lock", ...] (default []): the locks whose
rwlock its series makes a spinlock, C identifiers (./run.sh convert
writes its base's plus the new one; a campaign that compares two variants
differing in a converted lock that none of its points drives is refused,
scripts/campaign/file.py).  lookup_lock and converts are copied into
build-meta.json, with the arch,
what the .config says of lock statistics (lock_stat, lockdep) and which
rwlock and spinlock implementations the kernel has (rwlock_impl,
spinlock_impl).

Usage (variant.py is python3 -m scripts.variant with the repository root
on PYTHONPATH; the shell scripts run it as lib.sh's lb_py -m scripts.variant):
  variant.py list                  names of all variants, one per line
  variant.py order TARGET...       the targets in build order
  variant.py show TARGET           "arch A", "kernel K" (not for a tree's
                                   commit), "variant V", "label L",
                                   "lookup_lock L", "converts LOCK...",
                                   "patch FILE",
                                   "config FILE" lines
  variant.py arch ARCH             what builds and boots ARCH (guest/arches.toml):
                                   "KEY VALUE" lines, plus "triplet T"
  variant.py kernel VERSION        its source (kernel-patches/kernels.toml):
                                   "package P", "tarball T", "rt_arches A..."
  variant.py meta TARGET ...       print build-meta.json (see build-kernel.sh)

Exit status: 0 ok, 2 bad variant name, target or file.
"""
import json
import os
import re
import sys

from lockbench import safeio
from lockbench.cli import OneLineParser, run_cli
# A target's name and its arch, which the runner needs too: guest/variant_name.py.
from guest.variant_name import (ADD_FOLDER, ARCHES, DEFAULT_KERNEL, KERNELS, VARIANT_DIRS,
                                VariantError, boot_spec, find_file, join_name, split_name,
                                variant_names, REF_RE, ROOT)

PATCH_DIR = os.path.join(ROOT, "kernel-patches")
CONFIG_DIR = os.path.join(PATCH_DIR, "configs")
KEYS = {"description": str, "patches": list, "configs": list}
# Optional keys: name -> (allowed values, default).
OPTIONAL = {"lookup_lock": (("lock", "none"), "lock")}
# converts = [...]: the locks the series converts (rwlock -> spinlock),
# as the kernel names them.
LOCK_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
CONVERTS_ALLOWED = "a list of distinct C identifiers (the locks the series converts)"


def add_dirs(dirs):
    """Put the variant folders DIRS in front of LOCKBENCH_VARIANT_PATH, for
    this process (guest/variant_name.py read it at import: its list after
    kernel-patches/variants) and for every process it starts."""
    dirs = [os.path.abspath(d) for d in dirs]
    for d in dirs:
        if not os.path.isdir(d):
            raise VariantError(f"--variants {d}: not a folder")
    at = VARIANT_DIRS.index(os.path.join(ROOT, "kernel-patches", "variants")) + 1
    VARIANT_DIRS[at:at] = [d for d in dirs if d not in VARIANT_DIRS]
    old = os.environ.get("LOCKBENCH_VARIANT_PATH", "")
    os.environ["LOCKBENCH_VARIANT_PATH"] = ":".join(dirs + ([old] if old else []))


def load(target):
    """Return the variant built for a target (VARIANT or VARIANT@ARCH) as a
    dict with absolute patch and config paths, the arch's base fragment
    first.  A boot variant (boots = "OTHER", cmdline = "..."; guest/
    variant_name.py boot_spec) is OTHER's kernel, with "boots" (OTHER's label)
    and "cmdline" added: it builds nothing of its own."""
    name, arch, kernel = split_name(target)
    path = find_file(name)
    if path is None:
        raise VariantError(f"unknown variant {name!r} (known: {', '.join(variant_names())}; "
                           f"{ADD_FOLDER})")
    booted, cmdline = boot_spec(name)
    if booted != name:
        out = load(join_name(booted, arch, kernel))
        out.update(boots=out["label"], cmdline=cmdline, name=name,
                   label=join_name(name, arch, kernel), file=path)
        return out
    try:
        # capped and depth-checked: a variant file of --variants DIR may
        # be anything (issue #43)
        data = safeio.read_toml(path)
    except safeio.Unsafe as e:
        raise VariantError(str(e)) from None
    _check_tree(path, data)
    _check_keys(path, data)
    arches, kernels, kernel = _fit(name, arch, kernel, data)
    base_config = os.path.join(CONFIG_DIR, f"virt-{arch}.config")
    if not os.path.isfile(base_config):
        raise VariantError(f"no base config fragment for {arch}: {base_config}")
    out = {"name": name, "arch": arch, "label": join_name(name, arch, kernel or DEFAULT_KERNEL),
           "arches": arches, "kernel": kernel, "kernels": kernels,
           "file": path, "description": data["description"], "patches": [],
           "configs": [base_config]}
    for key, (_allowed, default) in OPTIONAL.items():
        out[key] = data.get(key, default)
    out["converts"] = list(data.get("converts", []))
    out["tree"], out["ref"] = data.get("tree"), data.get("ref")
    for key, base in (("patches", PATCH_DIR), ("configs", CONFIG_DIR)):
        out[key] += _files(path, key, data[key], base)
    return out


def _check_tree(path, data):
    """A commit of the user's own git tree (scripts/tree/kernel_tree.py):
    tree and ref both, of their form; its own series is optional,
    patches on top of that commit."""
    if "tree" in data or "ref" in data:
        data.setdefault("patches", [])
        tree, ref = data.get("tree"), data.get("ref")
        if not isinstance(tree, str) or not tree.startswith("/") or "\n" in tree:
            raise VariantError(f"{path}: tree must be the absolute path of a git tree "
                               f"(with ref = \"COMMIT\")")
        if not isinstance(ref, str) or not REF_RE.fullmatch(ref):
            raise VariantError(f"{path}: ref must be a git revision of the tree "
                               f"(with tree = \"PATH\")")


def _check_keys(path, data):
    """Every key of the variant file known and of its type; every key of
    KEYS there."""
    allowed = ", ".join(list(KEYS) + ["arches", "kernels"] + list(OPTIONAL)
                        + ["converts", "tree", "ref"])
    for key, val in data.items():
        if key in ("tree", "ref"):
            continue
        if key in OPTIONAL:
            if val not in OPTIONAL[key][0]:
                raise VariantError(f"{path}: {key} must be one of "
                                   f"{', '.join(repr(v) for v in OPTIONAL[key][0])}")
            continue
        if key == "converts":
            if (not isinstance(val, list) or len(set(map(str, val))) != len(val)
                    or not all(isinstance(x, str) and LOCK_RE.fullmatch(x) for x in val)):
                raise VariantError(f"{path}: converts must be {CONVERTS_ALLOWED}, "
                                   f"not {str(val)[:80]!r}")
            continue
        if key in ("arches", "kernels"):
            known = ARCHES if key == "arches" else KERNELS
            if (not isinstance(val, list) or not val or len(set(map(str, val))) != len(val)
                    or not all(isinstance(a, str) and a in known for a in val)):
                what = "architectures" if key == "arches" else "kernel versions"
                raise VariantError(f"{path}: {key} must be a non-empty list of distinct "
                                   f"{what} from {', '.join(known)}")
            continue
        if key == "arch":
            raise VariantError(f"{path}: key 'arch' is gone: variants are arch-neutral "
                               f"(build VARIANT@ARCH; limit with arches = [...])")
        if key not in KEYS:
            raise VariantError(f"{path}: unknown key {key!r} (allowed: {allowed})")
        if not isinstance(val, KEYS[key]):
            raise VariantError(f"{path}: {key} must be a {KEYS[key].__name__}")
    for key in KEYS:
        if key not in data:
            raise VariantError(f"{path}: missing key {key!r}")


def _fit(name, arch, kernel, data):
    """(arches, kernels, kernel) of variant NAME, whose file says DATA,
    built for ARCH and KERNEL, which it must be for; kernel None for a
    tree's commit."""
    arches = data.get("arches", list(ARCHES))
    kernels = data.get("kernels", list(KERNELS))
    fits = join_name(name, arch if arch in arches else arches[0],
                 kernel if kernel in kernels or "tree" in data else kernels[0])
    if arch not in arches:
        raise VariantError(f"variant {name!r} is not for {arch} "
                           f"(its arches: {', '.join(arches)}; build {fits})")
    if "tree" in data:
        # A tree's commit is the kernel it is: its version is the tree's
        # (scripts/tree/kernel_tree.py resolve), never a suffix.
        if kernel != DEFAULT_KERNEL or "kernels" in data:
            raise VariantError(f"variant {name!r} builds a commit of {data['tree']}: its "
                               f"kernel is that commit's, not @{kernel} or kernels = [...]")
        kernel = None
    elif kernel not in kernels:
        raise VariantError(f"variant {name!r} is not for Linux {kernel} "
                           f"(its kernels: {', '.join(kernels)}; build {fits})")
    return arches, kernels, kernel


def _files(path, key, items, base):
    """The absolute paths of the patches or configs (KEY) ITEMS the
    variant file PATH names: beside it, else in BASE."""
    here = os.path.dirname(path)
    out = []
    for item in items:
        if not isinstance(item, str) or "/" in item or item.startswith("."):
            raise VariantError(f"{path}: {key} entry {item!r} must be a plain file name")
        if key == "configs" and re.fullmatch(r"virt-.*\.config", item):
            raise VariantError(f"{path}: configs entry {item!r}: the arch's base "
                               f"fragment is merged first by itself; drop it")
        # A test variant may carry its own patch beside its file.
        cands = [os.path.join(here, item), os.path.join(base, item)]
        if os.path.islink(cands[0]):  # it would take a file from anywhere
            raise VariantError(f"{path}: {key} entry {item!r} is a symbolic link, not "
                               f"followed: put the file itself beside the variant")
        found = next((c for c in cands if os.path.isfile(c)), None)
        if found is None:
            raise VariantError(f"{path}: {key} entry {item!r} not found in {base}")
        out.append(found)
    return out


def config_flags(path, arch):
    """What a .config says of lock statistics, preemption and lock
    implementations: {"lock_stat": bool, "lockdep": bool, "preempt":
    "none", "voluntary", "full", "dynamic" or "rt", "rwlock_impl": str,
    "spinlock_impl": str}.  Without CONFIG_QUEUED_RWLOCKS an rwlock is the
    architecture's own: on 32-bit ARM a reader-preferring one (a reader
    gets in whenever no writer holds it, so readers can starve a writer);
    qrwlock queues waiters in order.  Without CONFIG_QUEUED_SPINLOCKS 32-bit
    ARM's spinlock is a ticket lock."""
    on = {line.split("=", 1)[0] for line in safeio.read_text(path, 16 << 20).splitlines()
          if line.rstrip().endswith("=y")}
    own = (ARCHES[arch]["own_rwlock"], ARCHES[arch]["own_spinlock"])
    # The first that is on, in this order: RT implies full preemption.
    models = (("CONFIG_PREEMPT_RT", "rt"), ("CONFIG_PREEMPT_DYNAMIC", "dynamic"),
              ("CONFIG_PREEMPT", "full"), ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"))
    preempt = next((name for opt, name in models if opt in on), "none")
    if preempt == "rt":
        # PREEMPT_RT: both are sleeping locks on rt_mutex (kernel/locking/
        # spinlock_rt.c, rwbase_rt.c); the raw spinlock underneath is not
        # what the code under test takes.
        return {"lock_stat": "CONFIG_LOCK_STAT" in on, "lockdep": "CONFIG_LOCKDEP" in on,
                "preempt": preempt, "rwlock_impl": "rwbase_rt (sleeping, on rt_mutex)",
                "spinlock_impl": "rt_mutex (sleeping, priority inheritance)"}
    return {"lock_stat": "CONFIG_LOCK_STAT" in on, "lockdep": "CONFIG_LOCKDEP" in on,
            "preempt": preempt,
            "rwlock_impl": "qrwlock" if "CONFIG_QUEUED_RWLOCKS" in on else own[0],
            "spinlock_impl": "qspinlock" if "CONFIG_QUEUED_SPINLOCKS" in on else own[1]}


def make_parser():
    p = OneLineParser(prog="variant.py", hint="python3 -m scripts.variant --help",
                      description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="names of all variants")
    o = sub.add_parser("order", help="targets in build order: fewer patches first, so that "
                       "a target's donor (build-kernel.sh) is built before it")
    o.add_argument("names", metavar="TARGET", nargs="+")
    o.add_argument("--groups", action="store_true",
                   help="print GROUP TARGET for each TARGET given: the targets of a "
                        "group (arch, kernel version and config fragments) are each "
                        "other's donors; "
                        "the group of the first target built is 0, each other group "
                        "starts with a cold build")
    s = sub.add_parser("show", help="arch, patches and configs of a target")
    s.add_argument("name", metavar="TARGET")
    a = sub.add_parser("arch", help="what builds and boots ARCH (guest/arches.toml), "
                       "as KEY VALUE lines")
    a.add_argument("arch", metavar="ARCH")
    k = sub.add_parser("kernel", help="the source of kernel VERSION (kernel-patches/"
                       "kernels.toml), as KEY VALUE lines: package, tarball, rt_arches")
    k.add_argument("version", metavar="VERSION")
    m = sub.add_parser("meta", help="print build-meta.json")
    m.add_argument("name", metavar="TARGET")
    m.add_argument("--kernel-version", required=True)
    m.add_argument("--package-version", required=True)
    m.add_argument("--config", required=True, help="the resulting .config")
    m.add_argument("--compiler", required=True)
    m.add_argument("--build-seconds", type=float, required=True)
    m.add_argument("--tree-commit", required=True)
    m.add_argument("--harness-commit", required=True)
    m.add_argument("--objects-from", default="",
                   help="the built target whose objects this build started from")
    m.add_argument("--patch", action="append", default=None, dest="applied",
                   help="a patch applied (all of them, in order; default: the variant's)")
    m.add_argument("--source-commit", default="",
                   help="a tree variant's commit, before its patches")
    m.add_argument("--source-subject", default="")
    return p


def main(argv):
    return run_cli("variant", make_parser(), argv, _body)


def _body(args):
    if args.cmd == "list":
        print("\n".join(variant_names()))
        return 0
    if args.cmd == "arch":
        if args.arch not in ARCHES:
            raise VariantError(f"unknown arch {args.arch!r} (known: {', '.join(ARCHES)})")
        print("\n".join(f"{k} {v}" for k, v in ARCHES[args.arch].items()))
        return 0
    if args.cmd == "kernel":
        if args.version not in KERNELS:
            raise VariantError(f"unknown kernel {args.version!r} (known: {', '.join(KERNELS)})")
        info = KERNELS[args.version]
        print(f"package {info['package']}\ntarball /usr/src/{info['package']}.tar.xz\n"
              f"rt_arches {' '.join(info['rt_arches'])}")
        return 0
    if args.cmd == "order":
        _print_order(args.names, args.groups)
        return 0
    v = load(args.name)
    if v.get("boots"):
        raise VariantError(f"{args.name} boots {v['boots']}'s kernel: build "
                           f"{v['boots']} (./run.sh build {args.name} does)")
    if args.cmd == "show":
        _print_show(v)
        return 0
    json.dump(_build_meta(v, args), sys.stdout, indent=2)
    print()
    return 0


def _print_order(names, groups):
    """The targets NAMES in build order; with GROUPS, each after the
    number of its group (its donors)."""
    # A boot variant builds the kernel it boots.
    booted = {n: load(n).get("boots", n) for n in dict.fromkeys(names)}
    built = {t: load(t) for t in dict.fromkeys(booted.values())}
    # The tarball's first (a tree's commit may take one as its
    # donor), each by its number of patches.
    ordered = sorted(built, key=lambda t: (bool(built[t]["tree"]), len(built[t]["patches"])))
    if not groups:
        print("\n".join(ordered))
        return
    keys = {}
    group = {t: (built[t]["arch"], built[t]["kernel"], tuple(built[t]["configs"]))
             for t in ordered}
    for t in ordered:
        keys.setdefault(group[t], len(keys))
    for name, t in booted.items():
        print(keys[group[t]], name)


def _print_show(v):
    """The variant V as KEY VALUE lines (variant.py show)."""
    print(f"arch {v['arch']}")
    if v["kernel"]:
        print(f"kernel {v['kernel']}")
    print(f"variant {v['name']}")
    print(f"label {v['label']}")
    print(f"lookup_lock {v['lookup_lock']}")
    print(" ".join(["converts"] + v["converts"]))
    if v["tree"]:
        print(f"tree {v['tree']}")
        print(f"ref {v['ref']}")
    for p in v["patches"]:
        print(f"patch {p}")
    for c in v["configs"]:
        print(f"config {c}")


def _build_meta(v, args):
    """build-meta.json of variant V as the build (variant.py meta ARGS)
    made it."""
    meta = {
        "variant": v["label"],
        "description": v["description"],
        "arch": v["arch"],
        "kernel_version": args.kernel_version,
        "kernel": v["kernel"],
        "debian_package": KERNELS[v["kernel"]]["package"] if v["kernel"] else None,
        "debian_package_version": args.package_version,
        "patches": [{"name": os.path.basename(p), "sha256": safeio.sha256(p)}
                    for p in (v["patches"] if args.applied is None else args.applied)],
        "config_fragments": [{"name": os.path.basename(c), "sha256": safeio.sha256(c)} for c in v["configs"]],
        "config_sha256": safeio.sha256(args.config),
        **config_flags(args.config, v["arch"]),
        "lookup_lock": v["lookup_lock"],
        "converts": v["converts"],
        "compiler": args.compiler,
        "build_seconds": round(args.build_seconds, 1),
        "tree_commit": args.tree_commit,
        "harness_commit": args.harness_commit,
        "objects_from": args.objects_from or None,
    }
    if v["label"] != v["name"]:
        meta["variant_file"] = v["name"]
    if v["tree"]:
        # Built from the user's tree, not Debian's tarball.
        meta["debian_package"] = meta["debian_package_version"] = None
        meta["kernel"] = ".".join(args.kernel_version.split(".")[:2])
        meta["source"] = {"tree": v["tree"], "ref": v["ref"], "commit": args.source_commit,
                          "subject": args.source_subject}
    return meta


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
