# SPDX-License-Identifier: GPL-2.0
"""What a variant is called, its architecture and its kernel version:
the arch table (guest/arches.toml: the cross compiler, the image, the
QEMU machine, CPU and console, the Debian arch and the root fs folder,
everything about a guest architecture in one place), the kernel table
(kernel-patches/kernels.toml: the versions and their Debian sources),
VARIANT[@ARCH][@VERSION] names (docs/glossary.md), and where variant
files live.  The runner needs this to boot a variant, the build
(scripts/variant.py, which reads the variant files themselves) to build
one; it sits here, below both, and travels to --hosts machines with
the runner.
"""
import collections
import os
import re

from lockbench import safeio
from lockbench.cli import CliError
from lockbench.paths import BUILD, ROOT

# build/trees: the variant files ./run.sh build --tree writes, one per
# commit of a kernel developer's own tree (scripts/tree/kernel_tree.py).
VARIANT_DIRS = [os.path.join(ROOT, "kernel-patches", "variants"), os.path.join(BUILD, "trees")]
# Extra variant folders (the tests' deliberately slowed kernel) are added
# with LOCKBENCH_VARIANT_PATH=dir1:dir2.
VARIANT_DIRS += [d for d in os.environ.get("LOCKBENCH_VARIANT_PATH", "").split(":") if d]
# How to make more variants known, for every "unknown variant" message
# (scripts/variant.py, guest/qemu.py): ./run.sh build and campaign take
# --variants DIR; every command reads LOCKBENCH_VARIANT_PATH.
ADD_FOLDER = ("add a folder of variant files with --variants DIR or "
              "LOCKBENCH_VARIANT_PATH=DIR")

NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
# A ref of a variant of the user's own git tree (HEAD~1, v6.1.5, a
# branch, an id), as the variant file says it: git's own syntax without
# shell or option characters (scripts/tree/kernel_tree.py resolves it).
REF_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./~^@{}+-]{0,199}")
# What each architecture is built and booted with: guest/arches.toml,
# the one place an arch is described.  The first is the default: its
# targets are labelled by the bare variant name.
ARCH_FILE = os.path.join(ROOT, "guest", "arches.toml")
ARCH_KEYS = {"kernel_arch": str, "cross_prefix": str, "libc_package": str,
             "qemu_package": str, "kernel": str,
             "load_address": str, "debian": str, "rootfs": str, "qemu": str, "machine": str,
             "cpu": str, "console": str, "gicv2_max_cpus": int, "own_rwlock": str,
             "own_spinlock": str}


def _load_arches():
    data = safeio.read_toml(ARCH_FILE)
    for arch, info in data.items():
        if set(info) != set(ARCH_KEYS) or not all(isinstance(info[k], t)
                                                   for k, t in ARCH_KEYS.items()):
            raise SystemExit(f"targets: {ARCH_FILE}: [{arch}] must have exactly "
                             f"{', '.join(ARCH_KEYS)} (strings; gicv2_max_cpus a number)")
        info["triplet"] = info["cross_prefix"].rstrip("-")
    return data


ARCHES = _load_arches()
DEFAULT_ARCH = next(iter(ARCHES))

# The kernel sources (kernel-patches/kernels.toml): the version a target
# builds on, the Debian package that holds it.  The first is the default:
# its targets carry no version in their name.
KERNEL_FILE = os.path.join(ROOT, "kernel-patches", "kernels.toml")
KERNEL_KEYS = {"package": str, "rt_arches": list}
VERSION_RE = re.compile(r"[1-9][0-9]?\.[0-9]{1,2}")


def _load_kernels():
    data = safeio.read_toml(KERNEL_FILE)
    for ver, info in data.items():
        if (not VERSION_RE.fullmatch(ver) or set(info) != set(KERNEL_KEYS)
                or not all(isinstance(info[k], t) for k, t in KERNEL_KEYS.items())
                or not all(a in ARCHES for a in info["rt_arches"])):
            raise SystemExit(f"targets: {KERNEL_FILE}: [{ver!r}] must be a version "
                             f"(6.12) with exactly {', '.join(KERNEL_KEYS)}")
    return data


KERNELS = _load_kernels()
DEFAULT_KERNEL = next(iter(KERNELS))


def version_key(ver):
    """"6.12" -> (6, 12), for ordering versions."""
    return tuple(int(x) for x in ver.split("."))


class VariantError(CliError):
    pass


def variant_names():
    """The variants of every variant folder: their files' names, those
    that are variant names (build/trees also holds the campaigns ./run.sh
    build --tree writes, campaign-A-B.toml, longer than a name may be)."""
    names = set()
    for d in VARIANT_DIRS:
        if os.path.isdir(d):
            names.update(f[:-5] for f in os.listdir(d)
                         if f.endswith(".toml") and NAME_RE.fullmatch(f[:-5])
                         and not f.startswith("campaign-"))
    return sorted(names)


def find_file(name):
    for d in VARIANT_DIRS:
        path = os.path.join(d, name + ".toml")
        if os.path.isfile(path):
            return path
    return None


# A boot variant's kernel command line: space-separated key=value
# parameters of the kernel or its built-in code, nothing a shell or QEMU's
# -append could read otherwise.
CMDLINE_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}=[A-Za-z0-9_.,-]{1,64}"
                        r"( [A-Za-z0-9_.-]{1,64}=[A-Za-z0-9_.,-]{1,64}){0,15}")


def boot_spec(name):
    """(booted, cmdline) of variant NAME: the variant whose kernel it
    boots and the kernel parameters.  A boot variant (`boots = "OTHER"`,
    `cmdline = "k=v ..."` in its file) boots OTHER's kernel with those
    parameters; any other variant boots its own with "".  VariantError
    for a bad file."""
    path = find_file(name)
    if path is None:
        return name, ""
    try:
        # capped and depth-checked: a variant file of --variants DIR may
        # be anything (issue #43)
        data = safeio.read_toml(path)
    except safeio.Unsafe as e:
        raise VariantError(str(e)) from None
    if "boots" not in data:
        if "cmdline" in data:
            raise VariantError(f"{path}: cmdline needs boots = \"VARIANT\" (the variant "
                               f"whose kernel it boots)")
        return name, ""
    extra = set(data) - {"description", "boots", "cmdline"}
    if extra:
        raise VariantError(f"{path}: a boot variant has description, boots and cmdline "
                           f"only, not {', '.join(sorted(extra))}")
    booted, cmdline = data["boots"], data.get("cmdline", "")
    if not isinstance(booted, str) or not NAME_RE.fullmatch(booted) or booted == name \
            or find_file(booted) is None:
        raise VariantError(f"{path}: boots must name another variant, not {str(booted)[:40]!r}")
    if not isinstance(cmdline, str) or not CMDLINE_RE.fullmatch(cmdline):
        raise VariantError(f"{path}: cmdline must be up to 16 space-separated key=value "
                           f"parameters of [A-Za-z0-9_.,-]")
    if "boots" in _keys(find_file(booted)):
        raise VariantError(f"{path}: boots {booted!r}, which boots another variant itself")
    return booted, cmdline


def _keys(path):
    try:
        return set(safeio.read_toml(path))
    except OSError:  # safeio.Unsafe
        return set()


VariantName = collections.namedtuple("VariantName", "name arch kernel")


def join_name(name, arch, kernel=DEFAULT_KERNEL):
    """A variant's full name: the variant file's name, then @ARCH unless
    the arch is the default, then @VERSION unless the kernel is the
    default ("before", "before@arm64", "before@6.12",
    "before@arm64@6.12"); also its folder in build/ and its name in
    campaigns."""
    return (name + ("" if arch == DEFAULT_ARCH else f"@{arch}")
            + ("" if kernel == DEFAULT_KERNEL else f"@{kernel}"))


def split_name(target):
    """"before" -> VariantName("before", "arm", "6.1"); "before@arm64" ->
    ("before", "arm64", "6.1"); "before@6.12" -> ("before", "arm",
    "6.12"); "before@arm64@6.12" (either order) -> ("before", "arm64",
    "6.12").  Checks the syntax only, not that the variant exists."""
    name, *parts = target.split("@")
    if not NAME_RE.fullmatch(name):
        raise VariantError(f"variant name {name!r} is not [a-z0-9][a-z0-9_-]{{0,31}}")
    arch = kernel = None
    for part in parts:
        if part in ARCHES and arch is None:
            arch = part
        elif part in KERNELS and kernel is None:
            kernel = part
        else:
            raise VariantError(f"variant {target!r}: {part!r} is not an arch "
                               f"({', '.join(ARCHES)}) or a kernel ({', '.join(KERNELS)}), "
                               f"or names one twice (VARIANT[@ARCH][@VERSION])")
    return VariantName(name, arch or DEFAULT_ARCH, kernel or DEFAULT_KERNEL)


def rootfs_dir(arch):
    """The guest root file system's folder in build/ for arch."""
    return ARCHES[arch]["rootfs"]


def guest_desc(arch):
    """'qemu-system-aarch64 -M virt, cortex-a57': what boots an arch."""
    a = ARCHES[arch]
    return f"{a['qemu']} -M {a['machine']}, {a['cpu']}"
