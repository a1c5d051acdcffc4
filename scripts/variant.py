#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Read and check a kernel variant file (kernel-patches/variants/NAME.toml).

A variant is data: the patches of the series it applies, in order, and the
config fragments merged onto tinyconfig.  Adding a variant is adding a file.
An optional key says what the analysis must know of the code under test:
lookup_lock = "lock" (default: omap_mbox_get() takes mboxes_lock) or
"none" (lookups take no lock, e.g. under RCU: lock_stat then counts the
writes only).  It is copied into build-meta.json, with what the .config
says of lock statistics (lock_stat, lockdep).

Usage:
  variant.py list                  names of all variants, one per line
  variant.py show NAME             "arch A", "lookup_lock L", "patch FILE",
                                   "config FILE" lines
  variant.py meta NAME ...         print build-meta.json (see build-kernel.sh)

Exit status: 0 ok, 2 bad variant name or file.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATCH_DIR = os.path.join(ROOT, "kernel-patches")
CONFIG_DIR = os.path.join(PATCH_DIR, "configs")
VARIANT_DIRS = [os.path.join(PATCH_DIR, "variants")]
# Extra variant folders (the tests' deliberately slowed kernel) are added
# with LOCKBENCH_VARIANT_PATH=dir1:dir2.
VARIANT_DIRS += [d for d in os.environ.get("LOCKBENCH_VARIANT_PATH", "").split(":") if d]

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
KEYS = {"description": str, "arch": str, "patches": list, "configs": list}
# Optional keys: name -> (allowed values, default).
OPTIONAL = {"lookup_lock": (("lock", "none"), "lock")}
ARCHES = ("arm",)


class VariantError(Exception):
    pass


def variant_names():
    names = set()
    for d in VARIANT_DIRS:
        if os.path.isdir(d):
            names.update(f[:-5] for f in os.listdir(d) if f.endswith(".toml"))
    return sorted(names)


def find_file(name):
    for d in VARIANT_DIRS:
        path = os.path.join(d, name + ".toml")
        if os.path.isfile(path):
            return path
    return None


def load(name):
    """Return the variant as a dict with absolute patch and config paths."""
    if not NAME_RE.match(name):
        raise VariantError(f"variant name {name!r} is not [a-z0-9][a-z0-9_-]{{0,31}}")
    path = find_file(name)
    if path is None:
        raise VariantError(f"unknown variant {name!r} (known: {', '.join(variant_names())})")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise VariantError(f"{path}: {e}") from None
    for key, val in data.items():
        if key in OPTIONAL:
            if val not in OPTIONAL[key][0]:
                raise VariantError(f"{path}: {key} must be one of "
                                   f"{', '.join(repr(v) for v in OPTIONAL[key][0])}")
            continue
        if key not in KEYS:
            raise VariantError(f"{path}: unknown key {key!r} "
                               f"(allowed: {', '.join(list(KEYS) + list(OPTIONAL))})")
        if not isinstance(val, KEYS[key]):
            raise VariantError(f"{path}: {key} must be a {KEYS[key].__name__}")
    for key in KEYS:
        if key not in data:
            raise VariantError(f"{path}: missing key {key!r}")
    if data["arch"] not in ARCHES:
        raise VariantError(f"{path}: arch {data['arch']!r} not one of {', '.join(ARCHES)}")
    if not data["configs"]:
        raise VariantError(f"{path}: configs must not be empty")
    here = os.path.dirname(path)
    out = {"name": name, "file": path, "description": data["description"],
           "arch": data["arch"], "patches": [], "configs": []}
    for key, (_allowed, default) in OPTIONAL.items():
        out[key] = data.get(key, default)
    for key, base in (("patches", PATCH_DIR), ("configs", CONFIG_DIR)):
        for item in data[key]:
            if not isinstance(item, str) or "/" in item or item.startswith("."):
                raise VariantError(f"{path}: {key} entry {item!r} must be a plain file name")
            # A test variant may carry its own patch beside its file.
            cands = [os.path.join(here, item), os.path.join(base, item)]
            found = next((c for c in cands if os.path.isfile(c)), None)
            if found is None:
                raise VariantError(f"{path}: {key} entry {item!r} not found in {base}")
            out[key].append(found)
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def config_flags(path):
    """What a .config says of lock statistics: {"lock_stat": bool,
    "lockdep": bool}."""
    with open(path) as f:
        on = {line.split("=", 1)[0] for line in f if line.rstrip().endswith("=y")}
    return {"lock_stat": "CONFIG_LOCK_STAT" in on, "lockdep": "CONFIG_LOCKDEP" in on}


def make_parser():
    p = argparse.ArgumentParser(prog="variant.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="names of all variants")
    s = sub.add_parser("show", help="patches and configs of a variant")
    s.add_argument("name")
    m = sub.add_parser("meta", help="print build-meta.json")
    m.add_argument("name")
    m.add_argument("--kernel-version", required=True)
    m.add_argument("--package-version", required=True)
    m.add_argument("--config", required=True, help="the resulting .config")
    m.add_argument("--compiler", required=True)
    m.add_argument("--build-seconds", type=float, required=True)
    m.add_argument("--tree-commit", required=True)
    m.add_argument("--harness-commit", required=True)
    return p


def main(argv):
    args = make_parser().parse_args(argv)
    try:
        if args.cmd == "list":
            print("\n".join(variant_names()))
            return 0
        v = load(args.name)
    except VariantError as e:
        print(f"variant: {e}", file=sys.stderr)
        return 2
    if args.cmd == "show":
        print(f"arch {v['arch']}")
        print(f"lookup_lock {v['lookup_lock']}")
        for p in v["patches"]:
            print(f"patch {p}")
        for c in v["configs"]:
            print(f"config {c}")
        return 0
    meta = {
        "variant": v["name"],
        "description": v["description"],
        "arch": v["arch"],
        "kernel_version": args.kernel_version,
        "debian_package": "linux-source-6.1",
        "debian_package_version": args.package_version,
        "patches": [{"name": os.path.basename(p), "sha256": sha256(p)} for p in v["patches"]],
        "config_fragments": [{"name": os.path.basename(c), "sha256": sha256(c)} for c in v["configs"]],
        "config_sha256": sha256(args.config),
        **config_flags(args.config),
        "lookup_lock": v["lookup_lock"],
        "compiler": args.compiler,
        "build_seconds": round(args.build_seconds, 1),
        "tree_commit": args.tree_commit,
        "harness_commit": args.harness_commit,
    }
    json.dump(meta, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
