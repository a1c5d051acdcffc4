# SPDX-License-Identifier: GPL-2.0
"""A kernel developer's own git tree as the source of a variant.

A variant file may say `tree = "/path/to/linux"` and `ref = "COMMIT"`
instead of building Debian's tarball: build-kernel.sh then builds that
commit (plus the variant's patches, and the mailbox registry's 0001 where
the tree lacks it).  The user's tree is only read: its objects are reached
through the harness repository's alternates (build/src's git repository
gets the tree's object folder in objects/info/alternates, and a ref
refs/lockbench/commits/ID for each commit it builds), and the worktree is
the harness's own, under build/TARGET/src.  `git worktree add` or `git
bisect` in the user's tree would write into it; nothing here does.

Kernel versions: the module (bench-module/), lockload, the config
fragments and the lock_stat parser are tested against the versions of
kernel-patches/kernels.toml (6.1 and 6.12: Debian's linux-source-6.1 and
-6.12, and trees made from them in the tests).  A commit of any version
from the first on builds; one of a version not listed gets one warning
line (a piece that then fails says so in its own line: the patch, the
config option or the module's build, with the kernel's error).  A
commit is hosted by the build repository of the tested version nearest
its own (build/src/linux-source-V): that version's builds are its
donors.

Usage (python3 -m scripts.tree.kernel_tree with the repository root on
PYTHONPATH; build-kernel.sh and run.sh call it through lb_py):
  kernel_tree.py resolve TREE REF      check TREE and REF; print "commit ID",
                                       "version V", "base B" (the tested
                                       version hosting it), "warning W"
                                       (an untested version), "subject S",
                                       "registry yes|no", "registry_patch P"
  kernel_tree.py attach REPO TREE      make TREE's objects readable in REPO
  kernel_tree.py detach REPO TREE      forget TREE there
  kernel_tree.py prune REPO            forget the trees since removed
  kernel_tree.py donor BUILD REPO TARGET_DIR COMMIT ARCH SHA...
                                       the built target whose objects are
                                       nearest COMMIT (same arch, the same
                                       config fragments SHA...): "DIR HEAD",
                                       or nothing
  kernel_tree.py variants TREE REF... [--out DIR] [--like VARIANT]
                                       write a variant file per REF (and a
                                       campaign for two or more), print
                                       their names

Exit status: 0 ok, 2 a tree, ref or version that is refused (one line).
"""
import errno
import os
import re
import subprocess
import sys

from lockbench import safeio, tomlw
from lockbench.cli import CliError, OneLineParser, run_cli
from guest import variant_name
from lockbench.paths import BUILD, ROOT

# The kernel versions the module, lockload, the fragments and the lock_stat
# parser are tested against (kernel-patches/kernels.toml, docs/trees.md);
# the first is the oldest a tree may be.
TESTED = {variant_name.version_key(v): v for v in variant_name.KERNELS}
OLDEST = min(TESTED)
# What the mailbox registry's patch 0001 adds: a tree without it gets 0001
# first when its variant merges mbox-registry.config.
REGISTRY_FILE = "drivers/mailbox/omap-mbox-registry.c"
REGISTRY_PATCH = "0001-mailbox-add-the-2.6.34-OMAP-mailbox-name-registry-fo.patch"
REF_RE = variant_name.REF_RE  # a ref as the user writes it
ID_RE = re.compile(r"[0-9a-f]{40}")


class TreeError(CliError):
    pass


# git in the user's tree runs none of the programs its configuration may
# name (issue #43): no fsmonitor hook, no gpg.program under
# log.showSignature; check_tree's status runs no filter (no_filters).
NO_PROGRAMS = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false")
# A tree path git and a variant file both name as given: no control
# character, no white space at either end (git's output is stripped).
BAD_PATH = re.compile(r"[\x00-\x1f\x7f]|^\s|\s$")


def git(cwd, *args, check=True):
    """git's stdout, stripped; TreeError when check and it fails."""
    try:
        # No optional locks: git status would otherwise refresh the
        # index of the user's tree, a write there.
        p = subprocess.run(["git", "--no-optional-locks", *NO_PROGRAMS, "-C", cwd, *args],
                           capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TreeError(f"git {args[0]} in {cwd}: {e}") from None
    if check and p.returncode:
        err = (p.stderr.strip().splitlines() or ["failed"])[-1]
        raise TreeError(f"git {args[0]} in {cwd}: {err}")
    return p.stdout.strip() if p.returncode == 0 else None


def no_filters(tree):
    """-c options that empty every filter driver TREE's configuration
    names (filter.NAME.clean, smudge, process): a status compares the
    files as they are, running no program of the tree's."""
    names = git(tree, "config", "--name-only", "--get-regexp", r"^filter\.", check=False) or ""
    out = []
    for drv in sorted({n[len("filter."):].rsplit(".", 1)[0] for n in names.splitlines()
                       if n.startswith("filter.") and n.count(".") >= 2}):
        out += [x for k, v in (("clean", ""), ("smudge", ""), ("process", ""),
                               ("required", "false")) for x in ("-c", f"filter.{drv}.{k}={v}")]
    return out


def check_tree(tree):
    """The absolute path of a clean git tree, else TreeError."""
    if not isinstance(tree, str) or not tree.startswith("/"):
        raise TreeError(f"tree {str(tree)[:80]!r} must be an absolute path")
    if BAD_PATH.search(tree):
        raise TreeError(f"tree {tree[:80]!r}: a control character or white space at its end "
                        f"(git would name another folder): rename it")
    if not os.path.isdir(tree):
        raise TreeError(f"tree {tree}: no such folder")
    top = git(tree, "rev-parse", "--show-toplevel", check=False)
    if top is None:
        raise TreeError(f"tree {tree}: not a git repository")
    real = os.path.realpath(tree)
    if top != real and not real.startswith(top.rstrip("/") + "/"):
        raise TreeError(f"tree {tree}: git names its top folder {top!r}, another folder")
    if git(tree, *no_filters(tree), "status", "--porcelain", "--untracked-files=no",
           "--ignore-submodules=all") != "":
        raise TreeError(f"tree {tree} has uncommitted changes: the build takes "
                        f"commits only (commit or stash them, then name the commit)")
    return top


def kernel_version(tree, commit):
    """(VERSION, PATCHLEVEL, SUBLEVEL) from COMMIT's top Makefile, or
    TreeError when COMMIT is not a kernel."""
    mk = git(tree, "show", "--no-textconv", f"{commit}:Makefile", check=False)
    has_locking = git(tree, "cat-file", "-e", f"{commit}:kernel/locking/lockdep.c",
                      check=False) is not None
    nums = {}
    for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
        m = re.search(rf"^{key} = (\d+)$", mk or "", re.M)
        if m:
            nums[key] = int(m.group(1))
    if len(nums) < 3 or not has_locking:
        raise TreeError(f"{commit[:12]} in {tree} is not a Linux kernel (no VERSION, "
                        f"PATCHLEVEL and SUBLEVEL in its Makefile, or no kernel/locking/)")
    return nums["VERSION"], nums["PATCHLEVEL"], nums["SUBLEVEL"]


def resolve(tree, ref):
    """{"tree", "commit", "version", "subject", "registry"} for REF in TREE,
    or TreeError (one line): a ref that is not a commit, a dirty tree, a
    tree that is not a kernel, a version the harness does not support."""
    tree = check_tree(tree)
    if not isinstance(ref, str) or not REF_RE.fullmatch(ref):
        raise TreeError(f"ref {str(ref)[:80]!r} is not a git revision "
                        f"(letters, digits and _./~^@{{}}+-, not starting with - or .)")
    commit = git(tree, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    if not commit:
        raise TreeError(f"ref {ref!r} is not a commit in {tree}")
    ver = kernel_version(tree, commit)
    if ver[:2] < OLDEST:
        raise TreeError(f"{ref} ({commit[:12]}) in {tree} is Linux "
                        f"{ver[0]}.{ver[1]}.{ver[2]}: lockbench builds "
                        f"{TESTED[OLDEST]} and later (docs/trees.md)")
    base = host_version(ver[:2])
    warning = None
    if ver[:2] not in TESTED:
        warning = (f"{commit[:12]} is Linux {ver[0]}.{ver[1]}.{ver[2]}, not a tested version "
                   f"({', '.join(TESTED.values())}): building it anyway, from {base}'s "
                   f"objects (docs/trees.md)")
    registry = git(tree, "cat-file", "-e", f"{commit}:{REGISTRY_FILE}",
                   check=False) is not None
    return {"tree": tree, "commit": commit, "ref": ref,
            "version": f"{ver[0]}.{ver[1]}.{ver[2]}", "base": base, "warning": warning,
            "subject": git(tree, "log", "-1", "--format=%s", commit),
            "registry": registry}


def host_version(ver):
    """The tested version (kernel-patches/kernels.toml) whose build
    repository hosts a commit of version VER ((6, 9)): the same, else the
    newest before it (its builds share the most sources)."""
    return TESTED[max(k for k in TESTED if k <= ver)]


def objects_dir(tree):
    common = git(tree, "rev-parse", "--git-common-dir")
    return os.path.realpath(os.path.join(tree, common, "objects"))


def _alternates(repo):
    path = os.path.join(objects_dir(repo), "info", "alternates")
    try:
        return path, [ln.strip() for ln in safeio.read_text(path, 1 << 20).splitlines()
                      if ln.strip()]
    except safeio.Unsafe as e:
        if e.errno == errno.ENOENT:
            return path, []
        raise TreeError(str(e)) from None


def _set_alternates(repo, path, have, keep):
    """Write the alternates KEEP (were HAVE); the refs of commits no
    longer readable go (their builds stay until rebuilt)."""
    if keep == have:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with safeio.Dir.open(os.path.dirname(path)) as d:
        d.write_atomic(os.path.basename(path), "".join(x + "\n" for x in keep))
    refs = git(repo, "for-each-ref", "--format=%(objectname) %(refname)",
               "refs/lockbench/commits/", check=False) or ""
    for line in refs.splitlines():
        oid, ref = line.split(" ", 1)
        if git(repo, "cat-file", "-e", f"{oid}^{{commit}}", check=False) is None:
            git(repo, "update-ref", "-d", ref, check=False)


def prune(repo):
    """Drop the alternates of trees since removed (a test's): every git
    command in REPO would complain of their folders."""
    path, have = _alternates(repo)
    _set_alternates(repo, path, have, [d for d in have if os.path.isdir(d)])


def attach(repo, tree):
    """Make TREE's objects readable from REPO (an alternate), once."""
    theirs = objects_dir(tree)
    if theirs == objects_dir(repo):
        return
    path, have = _alternates(repo)
    keep = [d for d in have if os.path.isdir(d)]
    _set_alternates(repo, path, have, keep + ([theirs] if theirs not in keep else []))


def detach(repo, tree):
    """Forget TREE: its alternate and the refs of the commits only it held."""
    theirs = os.path.realpath(os.path.join(tree, ".git", "objects"))
    if os.path.isdir(tree):
        theirs = objects_dir(tree)
    path, have = _alternates(repo)
    _set_alternates(repo, path, have, [d for d in have if d != theirs and os.path.isdir(d)])


def donor(build, repo, target_dir, commit, arch, shas):
    """(dir, head) of the complete build in BUILD nearest COMMIT: the same
    arch and config fragments (by their sha256, in order), a tree commit
    REPO can read, the fewest files differing from COMMIT; None when
    there is none.  Its objects, stamped old, then the checkout of COMMIT
    over its sources: make rebuilds what differs."""
    best = None
    target_dir = os.path.realpath(target_dir)
    for name in sorted(os.listdir(build)):
        d = os.path.join(build, name)
        if os.path.realpath(d) == target_dir or not os.path.isfile(
                os.path.join(d, "src", "obj", "vmlinux")):
            continue
        try:
            meta = safeio.read_json(os.path.join(d, "build-meta.json"))
            head = meta["tree_commit"]
            frag = [c["sha256"] for c in meta["config_fragments"]]
            same = meta["arch"] == arch and frag == list(shas)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not same or not isinstance(head, str) or not ID_RE.fullmatch(head):
            continue
        if git(repo, "cat-file", "-e", f"{head}^{{commit}}", check=False) is None:
            continue
        diff = git(repo, "diff", "--name-only", head, commit, check=False)
        if diff is None:
            continue
        n = len(diff.splitlines())
        if best is None or n < best[0]:
            best = (n, d, head)
    return None if best is None else best[1:]


def tree_variant_name(tree, commit):
    """"linux-1a2b3c4d5e6f": the tree's folder name, cut and cleaned, and
    the commit's first 12 hex digits (variant_name.NAME_RE: at most 32)."""
    base = re.sub(r"[^a-z0-9]+", "-", os.path.basename(tree.rstrip("/")).lower()).strip("-")
    base = (base or "tree")[:19].rstrip("-") or "tree"
    if not base[0].isalnum():
        base = "t" + base
    return f"{base}-{commit[:12]}"


def variant_text(info, like):
    """A variant file for a resolved commit, its configs, lookup_lock and
    converts taken from the variant LIKE (a variant of the tarball)."""
    from scripts import variant as variantmod
    v = variantmod.load(like)
    if v.get("tree"):
        raise TreeError(f"--like {like}: a variant of a tree itself; name one of "
                        f"Debian's (before, after, ...)")
    configs = [os.path.basename(c) for c in v["configs"][1:]]
    desc = f"{info['subject']}"[:100].replace("\\", "/").replace('"', "'")
    lines = [
        f"# Made by ./run.sh build --tree: {info['tree']} at {info['ref']},",
        f"# Linux {info['version']}; configs and lock as {like}'s.",
        f"description = {tomlw.string(desc)}",
        f"tree = {tomlw.string(info['tree'])}",
        f'ref = "{info["commit"]}"',
        "patches = []",
        f"configs = {tomlw.value(configs)}",
        f'lookup_lock = "{v["lookup_lock"]}"',
        f"converts = {tomlw.value(v['converts'])}",
    ]
    return "\n".join(lines) + "\n"


def campaign_text(names, infos):
    """A campaign made like the default one (1 vCPU under icount, 2
    vCPUs, the A/A control), the first ref the baseline."""
    text = safeio.read_text(os.path.join(ROOT, "campaigns", "default.toml"), 1 << 20)
    # The default campaign's points and settings; its variants replaced.
    text = re.sub(r'(?m)^name = ".*"$', f'name = "{names[0]}-{names[-1][-12:]}"', text, 1)
    text = re.sub(r'(?m)^description = ".*"$',
                  f'description = "{infos[-1]["commit"][:12]} against '
                  f'{infos[0]["commit"][:12]} ({len(names)} commits of one tree)"', text, 1)
    text = re.sub(r"(?m)^variants = \[.*\]$",
                  "variants = [" + ", ".join(f'"{n}"' for n in names) + "]", text, 1)
    text = re.sub(r'(?m)^baseline = ".*"$', f'baseline = "{names[0]}"', text, 1)
    # The default's production twins (before-plain, after-plain) are
    # Debian's kernels, not this tree's: every ref is compared with the
    # first, as "compare" unset does.
    text = re.sub(r"(?m)^(compare|variant_cpus) = .*\n", "", text)
    head = (f"# Made by ./run.sh build --tree from {infos[0]['tree']}: "
            f"{', '.join(i['ref'] for i in infos)}.\n"
            "# The default campaign's points and settings (campaigns/default.toml),\n"
            "# the first ref the baseline.\n")
    return head + text


def write_variants(tree, refs, out, like):
    infos = [resolve(tree, r) for r in refs]
    names = list(dict.fromkeys(tree_variant_name(i["tree"], i["commit"]) for i in infos))
    if len(names) != len(infos):
        raise TreeError("two refs name the same commit: name each commit once")
    os.makedirs(out, exist_ok=True)
    # Made new and renamed into place through a descriptor of OUT: a link
    # planted at a name or its .tmp is replaced, never followed (issue #43).
    with safeio.Dir.open(out) as d:
        for name, info in zip(names, infos):
            d.write_atomic(f"{name}.toml", variant_text(info, like))
        camp = None
        if len(names) > 1:
            camp = os.path.join(out, f"campaign-{names[0]}-{names[-1][-12:]}.toml")
            d.write_atomic(os.path.basename(camp), campaign_text(names, infos))
    return names, camp


def make_parser():
    p = OneLineParser(prog="kernel_tree", hint="python3 -m scripts.tree.kernel_tree --help",
                      description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("resolve")
    r.add_argument("tree")
    r.add_argument("ref")
    for cmd in ("attach", "detach"):
        a = sub.add_parser(cmd)
        a.add_argument("repo")
        a.add_argument("tree")
    sub.add_parser("prune").add_argument("repo")
    d = sub.add_parser("donor")
    for arg in ("build", "repo", "target_dir", "commit", "arch"):
        d.add_argument(arg)
    d.add_argument("shas", nargs="*")
    v = sub.add_parser("variants")
    v.add_argument("tree")
    v.add_argument("refs", nargs="+", metavar="REF")
    v.add_argument("--out", default=os.path.join(BUILD, "trees"))
    v.add_argument("--like", default="before")
    return p


def body(args):
    if args.cmd == "resolve":
        info = resolve(args.tree, args.ref)
        print(f"commit {info['commit']}\nversion {info['version']}\nbase {info['base']}\n"
              + (f"warning {info['warning']}\n" if info["warning"] else "")
              + f"registry {'yes' if info['registry'] else 'no'}\n"
              f"registry_patch {os.path.join(ROOT, 'kernel-patches', REGISTRY_PATCH)}\n"
              f"subject {info['subject']}")
    elif args.cmd == "attach":
        attach(args.repo, check_tree(args.tree))
    elif args.cmd == "detach":
        detach(args.repo, args.tree)
    elif args.cmd == "prune":
        prune(args.repo)
    elif args.cmd == "donor":
        if not ID_RE.fullmatch(args.commit):
            raise TreeError(f"donor: {args.commit[:60]!r} is not a commit id")
        best = donor(args.build, args.repo, args.target_dir, args.commit, args.arch,
                     args.shas)
        if best:
            print(*best)
    else:
        if args.like not in variant_name.variant_names():
            raise TreeError(f"--like {args.like}: no such variant")
        names, camp = write_variants(args.tree, args.refs, args.out, args.like)
        for n in names:
            print(f"variant {n}")
        if camp:
            print(f"campaign {camp}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("kernel_tree", make_parser(), sys.argv[1:], body))
