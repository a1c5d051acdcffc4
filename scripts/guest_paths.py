# SPDX-License-Identifier: GPL-2.0
"""Whether a generic workload's path exists in the guest of a kernel.

kernel-patches/paths.toml names the paths a kernel option provides
(/sys/class/net: CONFIG_NET).  missing(workload, dotconfig) says, for a
generic path workload ("read /sys/class/net/lo/mtu") and a kernel's
.config, what that kernel lacks for it, in words: the path, the
option(s) its .config leaves unset and the shipped fragment that sets
them (kernel-patches/configs/); None when nothing is known against it.
./run.sh calibrate asks before it boots, ./run.sh campaign for each
variant it would boot (scripts/campaign/file.py), and calibrate again
when every op of a boot failed with ENOENT (enoent()).
"""
import os

from lockbench import safeio, workloads
from lockbench.paths import BUILD, ROOT

PATHS_FILE = os.path.join(ROOT, "kernel-patches", "paths.toml")


def entries():
    """[(prefix, [options], note)] of paths.toml, the longest prefix first."""
    data = safeio.read_toml(PATHS_FILE)
    out = []
    for e in data.get("path", []):
        out.append((e["prefix"].rstrip("/"), list(e["options"]), e.get("note", "")))
    return sorted(out, key=lambda e: -len(e[0]))


def path_of(workload):
    """The path of a generic read/stat/open workload, else None."""
    words = workloads.generic_words(workload)
    if not words or words[0] == "syscall":
        return None
    return words[1]


def provider(path):
    """(prefix, [options], note) of the entry whose prefix holds PATH, or None."""
    for prefix, options, note in entries():
        if path == prefix or path.startswith(prefix + "/"):
            return prefix, options, note
    return None


def _fragment(option):
    from scripts import kbuild_where
    frags = kbuild_where.fragments_setting(option, [])
    return frags[0] if frags else None


def describe(path, options, note=""):
    """PATH and what provides it, in words: "CONFIG_NET (kernel-patches/
    configs/net.config)"."""
    parts = []
    for o in options:
        f = _fragment(o)
        parts.append(f"{o} (kernel-patches/configs/{f})" if f else o)
    return " and ".join(parts) + (f"; {note}" if note else "")


def missing(workload, dotconfig):
    """What the kernel of DOTCONFIG lacks for WORKLOAD's path, in words,
    or None."""
    path = path_of(workload)
    if path is None or not os.path.isfile(dotconfig):
        return None
    found = provider(path)
    if found is None:
        return None
    _prefix, options, note = found
    from scripts import kbuild_where
    try:
        config = kbuild_where.read_config(dotconfig)
    except kbuild_where.WhereError:
        return None
    lack = [o for o in options if config.get(o) not in ("y", "m")]
    if not lack:
        return None
    return f"{path} does not exist in its guest: it needs {describe(path, lack, note)}"


def build_config(target):
    """The .config of variant TARGET (build/TARGET/config), or
    None when it is not built."""
    d = os.path.join(BUILD, target)
    if os.path.isfile(os.path.join(d, "build-meta.json")):
        return os.path.join(d, "config")
    return None


def enoent(workload):
    """Words for a workload whose every op failed with ENOENT: its path,
    and what provides it where paths.toml knows."""
    path = path_of(workload)
    found = provider(path) if path else None
    if found is None:
        return f"{path} does not exist in the guest (every op failed with ENOENT)"
    return (f"{path} does not exist in the guest (every op failed with ENOENT): "
            f"it needs {describe(path, found[1], found[2])}")
