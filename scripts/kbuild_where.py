# SPDX-License-Identifier: GPL-2.0
"""Whether a kernel builds a source file, and what would make it.

    python3 -m scripts.kbuild_where check --tree SRC --config DOTCONFIG
        --arch SRCARCH [--fragments DIR...] [--variants-of BASE] FILE...

For each FILE (a .c path inside the tree SRC) it reads the Makefiles (or
Kbuild files) from the file's folder up to the top, as Kbuild would: the
line that names FILE's object (obj-y, obj-$(CONFIG_X), lib-y, or a
composite object's name-y / name-$(CONFIG_X) / name-objs and then that
object's own line), then each folder's line in its parent's Makefile
(obj-$(CONFIG_NET) += net/), simple ifdef/ifeq blocks around them, and
arch/OTHER/ for an architecture that is not SRCARCH.  The options met on
the way are judged against DOTCONFIG: "builtin" when each is =y, "module"
when one is =m and none unset, "no" when one is unset, "unknown" when a
line could not be read (a condition Kbuild computes).  It prints one line
a file:

    FILE builtin
    FILE no CONFIG_X[,CONFIG_Y] MAKEFILE:LINE: TEXT
    FILE module CONFIG_X MAKEFILE:LINE: TEXT
    FILE no arch/OTHER (SRCARCH is arm)
    FILE unknown MAKEFILE:LINE: TEXT
    FILE needs CONFIG_X[,...]      (without --config: its build rests on them)
    FILE header

    python3 -m scripts.kbuild_where advise --tree SRC OPTION...

prints, for each option, its Kconfig "depends on" lines ("OPTION depends
EXPR; ..."), the fragments that set it, the smallest first (the user's,
DIR of each --fragments DIR, then kernel-patches/configs/: "OPTION
fragments F..."), and the variants of BASE's series that merge such a
fragment (--variants-of BASE: "OPTION variants VARIANT:FRAGMENT..."):
what ./run.sh convert names when the lock's file is not built into its
base kernel.

Reads the tree through lockbench/safeio.py (capped, no link followed in
the last name).  Exit 0; 2 on bad input.
"""
import os
import re
import sys

from lockbench import safeio
from lockbench.cli import CliError, OneLineParser, run_cli
from lockbench.paths import ROOT

CONFIG_DIR = os.path.join(ROOT, "kernel-patches", "configs")
MAKEFILE_MAX = 1 << 20
KCONFIG_MAX = 4 << 20
# obj-y, obj-$(CONFIG_X), lib-y, name-y, name-$(CONFIG_X), name-objs
ASSIGN_RE = re.compile(r"^([A-Za-z0-9_.-]+)-(y|m|objs|\$\(CONFIG_([A-Za-z0-9_]+)\))\s*"
                       r"(?:\+=|:=|=)\s*(.*)$")
OPT_RE = re.compile(r"CONFIG_[A-Za-z0-9_]+")


class WhereError(CliError):
    pass


def read_makefile(d, names=("Kbuild", "Makefile")):
    """(path, [(lineno, text)]) of folder D's Kbuild or else Makefile (the
    first of NAMES there), lines joined at a trailing backslash, comments
    dropped; None if neither."""
    for name in names:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            try:
                text = safeio.read_text(p, MAKEFILE_MAX)
            except safeio.Unsafe as e:
                raise WhereError(str(e)) from None
            out, buf, start = [], "", 0
            for n, line in enumerate(text.splitlines(), 1):
                line = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
                if not buf:
                    start = n
                if line.endswith("\\"):
                    buf += line[:-1] + " "
                    continue
                buf += line
                if buf.strip():
                    out.append((start, buf.strip()))
                buf = ""
            return p, out
    return None


# An ifdef/ifeq line: the option it tests and whether it must be set.
IF_RES = (
    (re.compile(r"^ifdef\s+(CONFIG_[A-Za-z0-9_]+)$"), True),
    (re.compile(r"^ifndef\s+(CONFIG_[A-Za-z0-9_]+)$"), False),
    (re.compile(r"^ifeq\s*\(\s*\$\((CONFIG_[A-Za-z0-9_]+)\)\s*,\s*y\s*\)$"), True),
    (re.compile(r"^ifneq\s*\(\s*\$\((CONFIG_[A-Za-z0-9_]+)\)\s*,\s*\)$"), True),
    (re.compile(r"^ifeq\s*\(\s*\$\((CONFIG_[A-Za-z0-9_]+)\)\s*,\s*\)$"), False),
)


def entries(lines):
    """Each assignment of a Makefile: (lineno, text, name, suffix, option
    or None, [tokens], [(option, must_be_set) of the enclosing ifs], whether
    an enclosing if could not be read)."""
    stack, out = [], []
    for n, text in lines:
        word = text.split(None, 1)[0]
        if word in ("ifdef", "ifndef", "ifeq", "ifneq"):
            cond = next(((m.group(1), pos) for r, pos in IF_RES
                         for m in [r.match(text)] if m), None)
            stack.append(cond)
            continue
        if word == "else":
            if stack:
                c = stack.pop()
                stack.append((c[0], not c[1]) if c else None)
            continue
        if word == "endif":
            if stack:
                stack.pop()
            continue
        m = ASSIGN_RE.match(text)
        if m:
            conds = [c for c in stack if c]
            out.append((n, text, m.group(1), m.group(2), m.group(3) and "CONFIG_" + m.group(3),
                        m.group(4).split(), conds, None in stack))
    return out


def read_config(path):
    """{CONFIG_X: "y" | "m" | value} of a .config (unset options absent)."""
    try:
        text = safeio.read_text(path, 16 << 20)
    except safeio.Unsafe as e:
        raise WhereError(str(e)) from None
    out = {}
    for line in text.splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


class Need:
    """What a file's build rests on: options, and the lines that name them."""

    def __init__(self):
        self.options = []     # [(option, must_be_set, "Makefile:line: text")]
        self.unknown = None   # "Makefile:line: text" of a line not understood
        self.arch = None      # "arch/OTHER" for another architecture's file
        self.missing = None   # a folder whose Makefile names it nowhere

    def add(self, opt, pos, where):
        self.options.append((opt, pos, where))


def _where(tree, mk, n, text):
    return f"{os.path.relpath(mk, tree)}:{n}: {' '.join(text.split())}"


def _object_line(tree, d, obj, need, depth=0, names=("Kbuild", "Makefile"), srcarch=""):
    """Find OBJ (name.o, or sub/ for a folder) among folder D's
    assignments; follow a composite object to its own line.  True if
    found.  The top Makefile's ifs (its build modes) are not conditions
    of a file."""
    mf = read_makefile(d, names)
    if mf is None:
        return False
    mk, lines = mf
    top = d == tree
    for n, text, name, suffix, opt, toks, conds, unread in entries(lines):
        toks = [t.replace("$(SRCARCH)", srcarch) for t in toks]
        if obj not in toks and f"$(obj)/{obj}" not in toks:
            continue
        if top:
            conds, unread = [], False
        if name in ("subdir", "always", "targets", "clean", "extra", "hostprogs",
                    "userprogs", "ccflags", "asflags", "ldflags"):
            continue
        where = _where(tree, mk, n, text)
        for c, pos in conds:
            need.add(c, pos, where)
        if unread:
            need.unknown = need.unknown or where
        if suffix == "m":
            need.add("(module only)", True, where)
        if opt:
            need.add(opt, True, where)
        if name in ("obj", "lib", "core", "drivers", "libs", "head", "init", "net"):
            return True
        # name-y += obj.o: the composite object name.o, in this Makefile
        if depth > 4 or not _object_line(tree, d, name + ".o", need, depth + 1, srcarch=srcarch):
            need.unknown = need.unknown or where
        return True
    return False


def where(tree, rel, srcarch):
    """The Need of the .c file REL of TREE."""
    need = Need()
    parts = rel.split("/")
    if parts[0] == "arch" and len(parts) > 1 and parts[1] != srcarch:
        need.arch = f"arch/{parts[1]}"
        return need
    d = os.path.join(tree, *parts[:-1])
    obj = os.path.splitext(parts[-1])[0] + ".o"
    if not _object_line(tree, d, obj, need, srcarch=srcarch):
        need.missing = os.path.relpath(d, tree) + f"/Makefile names no {obj}"
        return need
    # Each folder in its parent's Makefile, up to the top (the top-level
    # Kbuild, or the Makefile's core-y / drivers-y / libs-y).
    archdir = os.path.join(tree, "arch", srcarch)
    while d != tree:
        if d == archdir:
            break  # the top Kbuild's obj-y += arch/$(SRCARCH)/
        parent = os.path.dirname(d)
        sub = os.path.basename(d) + "/"
        found = _object_line(tree, parent, sub, need, srcarch=srcarch)
        if not found and parent == tree:
            # the top Makefile's core-y / drivers-y / libs-y := lib/
            found = _object_line(tree, tree, sub, need, names=("Makefile",), srcarch=srcarch)
        if not found and os.path.relpath(parent, tree).split("/")[0] == "arch":
            # arch/ARCH/: named by the arch Makefile's core-y / libs-y with
            # its full path (arch/arm/mach-virt/), or by arch/ARCH/Kbuild.
            full = os.path.relpath(d, tree) + "/"
            found = (_object_line(tree, archdir, full, need, srcarch=srcarch)
                     or _object_line(tree, archdir, full, need, names=("Makefile",),
                                     srcarch=srcarch)
                     or _object_line(tree, archdir, sub, need, srcarch=srcarch))
        if not found:
            need.unknown = need.unknown or f"{os.path.relpath(parent, tree) or '.'}: no line names {sub}"
            break
        d = parent
    return need


def judge(need, config):
    """("builtin" | "module" | "no" | "unknown", [options not as needed],
    the line that needs the first of them)."""
    if need.arch:
        return "no", [], need.arch
    if need.missing:
        return "unknown", [], need.missing
    unset, modules, first = [], [], None
    for opt, pos, wh in need.options:
        if opt == "(module only)":
            modules.append(opt)
            first = first or wh
            continue
        val = config.get(opt)
        if pos and val is None:
            if opt not in unset:
                unset.append(opt)
            first = first or wh
        elif not pos and val is not None:
            if "!" + opt not in unset:
                unset.append("!" + opt)
            first = first or wh
        elif pos and val == "m":
            modules.append(opt)
            first = first or wh
    if unset:
        return "no", unset, first
    if need.unknown:
        return "unknown", [], need.unknown
    if modules:
        return "module", [m for m in modules if m != "(module only)"], first
    return "builtin", [], None


def kconfig_depends(tree, option):
    """The "depends on" expressions of OPTION's Kconfig entries in TREE."""
    name = option[len("CONFIG_"):]
    deps = []
    head = re.compile(rf"^(menu)?config\s+{re.escape(name)}\s*$")
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [x for x in dirnames if x not in (".git", "obj", "Documentation",
                                                         "tools", "scripts")]
        for f in filenames:
            if not f.startswith("Kconfig"):
                continue
            try:
                text = safeio.read_text(os.path.join(dirpath, f), KCONFIG_MAX)
            except safeio.Unsafe:
                continue
            if name not in text:
                continue
            inside = False
            for line in text.splitlines():
                if head.match(line):
                    inside = True
                    continue
                if inside and re.match(r"^(menu)?config\s|^(endmenu|menu|if|endif|choice|source)\b",
                                       line):
                    inside = False
                if inside:
                    m = re.match(r"^\s+depends on\s+(.*)$", line)
                    if m and m.group(1).strip() not in deps:
                        deps.append(m.group(1).strip())
    return deps


def fragments_setting(option, dirs):
    """The fragment files (name) of DIRS, then kernel-patches/configs/,
    that set OPTION=y."""
    out = []
    for d in list(dirs) + [CONFIG_DIR]:
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".config") or f.startswith("virt-"):
                continue
            try:
                text = safeio.read_text(os.path.join(d, f), 1 << 20)
            except safeio.Unsafe:
                continue
            if f in [x for _n, _m, x in out]:
                continue
            if re.search(rf"^{re.escape(option)}=y\s*$", text, re.M):
                named = f != option[len("CONFIG_"):].lower().replace("_", "-") + ".config"
                out.append((len(re.findall(r"^(CONFIG_|# CONFIG_)", text, re.M)), named, f))
    # the smallest first (the fewest other options it turns on), then the
    # one named after the option (net.config for CONFIG_NET)
    return [f for _n, _named, f in sorted(out)]


def variants_with(base, fragments):
    """The variants with BASE's patches whose configs hold each of
    FRAGMENTS (names), BASE's own fragments too: a --base that builds
    the file."""
    from scripts import variant as variantmod
    from guest import variant_name
    try:
        b = variantmod.load(base)
    except variant_name.VariantError:
        return []
    bp = [os.path.basename(p) for p in b["patches"]]
    bc = {os.path.basename(c) for c in b["configs"]}
    suffix = base[len(variant_name.split_name(base).name):]
    out = []
    for name in variant_name.variant_names():
        try:
            v = variantmod.load(name + suffix)
        except variant_name.VariantError:
            continue
        cs = {os.path.basename(c) for c in v["configs"]}
        if ([os.path.basename(p) for p in v["patches"]] == bp and bc <= cs
                and set(fragments) <= cs and v.get("converts", []) == b.get("converts", [])):
            out.append(name + suffix)
    return out


def _check(a):
    config = read_config(a.config) if a.config else None
    for f in a.files:
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./+-]*\.[ch]", f) or ".." in f.split("/"):
            raise WhereError(f"{f!r}: not a source file's path inside the tree")
        if f.endswith(".h"):
            print(f"{f} header")
            continue
        need = where(a.tree, f, a.arch)
        if config is None and not need.arch and not need.missing:
            opts = sorted({o for o, _p, _w in need.options if o.startswith("CONFIG_")})
            if opts:
                print(f"{f} needs {','.join(opts)}")
                continue
        state, opts, wh = judge(need, config or {})
        if state == "builtin":
            print(f"{f} builtin")
        elif state == "no" and not opts:
            print(f"{f} no {wh} (SRCARCH is {a.arch})")
        else:
            print(f"{f} {state} {','.join(opts) or '-'} {wh}")
    return 0


def _advise(a):
    for opt in a.options:
        if not re.fullmatch(r"!?CONFIG_[A-Za-z0-9_]+", opt):
            raise WhereError(f"{opt!r}: not a CONFIG_ option")
        o = opt.lstrip("!")
        deps = "; ".join(kconfig_depends(a.tree, o)) or "-"
        frags = fragments_setting(o, a.fragments or [])
        print(f"{opt} depends {deps}")
        print(f"{opt} fragments {' '.join(frags) or '-'}")
        if a.variants_of and frags:
            vs = [f"{v}:{f}" for f in frags for v in variants_with(a.variants_of, [f])]
            print(f"{opt} variants {' '.join(dict.fromkeys(vs)) or '-'}")
    return 0


def make_parser():
    p = OneLineParser(prog="python3 -m scripts.kbuild_where",
                      description=__doc__.splitlines()[0],
                      hint="python3 -m scripts.kbuild_where --help")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="whether the kernel of DOTCONFIG builds each FILE")
    c.add_argument("--tree", required=True)
    c.add_argument("--config", help="the kernel's .config; without it, a file whose build "
                   "rests on options is printed as FILE needs CONFIG_X,...")
    c.add_argument("--arch", required=True, help="the kernel's SRCARCH: arm, arm64")
    c.add_argument("files", metavar="FILE", nargs="+")
    a = sub.add_parser("advise", help="the Kconfig dependencies of each OPTION and the "
                       "fragments and variants that set it")
    a.add_argument("--tree", required=True)
    a.add_argument("--fragments", action="append", metavar="DIR",
                   help="a folder of the user's fragments (a --variants folder)")
    a.add_argument("--variants-of", metavar="BASE",
                   help="name the variants of BASE's series that merge such a fragment")
    a.add_argument("options", metavar="OPTION", nargs="+")
    return p


def main(argv):
    return run_cli("convert", make_parser(), argv,
                   lambda a: _check(a) if a.cmd == "check" else _advise(a))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
