# SPDX-License-Identifier: GPL-2.0
"""Run a benchmark campaign: one QEMU boot per (variant, vCPUs, repetition).

With arches = [...] in the campaign file a variant is one per arch: its
variant "before" (arm) or "before@arm64" names it in the boots, the
manifest and the analysis (scripts/campaign/file.py).

Usage: ./run.sh campaign FILE [--jobs N | --hosts FILE] [--out DIR] [--variants DIR] [--reuse DIR]
                            [--budget DURATION] [--dry-run]
       ./run.sh campaign --resume DIR [--jobs N | --hosts FILE] [--variants DIR] [--budget DURATION]

--variants DIR (again for more): a folder of variant files, such as
./run.sh convert --out DIR writes, put in front of LOCKBENCH_VARIANT_PATH
for this run (its boots and its report included).  --dry-run ends with
an estimate of the wall time (scripts/campaign/estimate.py: calibrated
from the boots of earlier campaigns in results/).

Each boot runs every workload point of the campaign.  Within each
repetition the variants are interleaved (alternating order, or seeded
random) so that drift on the host cancels out.  With repetitions = { min,
max } the boots run up to each look (a repetition count) and the campaign
stops at the first look where every primary cell has a verdict
(analysis.looks); the boots after it are marked `unneeded`.  --budget
DURATION (or the campaign's budget key) also stops it at the last look
whose next would not end within that time of the command's start (its
done boots' wall times say how long that look would take; a --resume
starts a new budget); --dry-run says which looks the budget covers.  A boot runs in
cells/.tmp-ID and is renamed to cells/ID when it ends; manifest.json says
the state of every planned boot and is replaced atomically after each
change.  Ctrl-C or SIGTERM stops the running boots (their partial output is
kept as cells/ID.partial-N) and leaves every finished boot intact; --resume
runs only what is not done, after checking that neither the campaign file
nor the kernels changed.

--resume trusts nothing in manifest.json: the saved campaign.toml is
loaded and checked again and re-planned, and the manifest's boots, builds
and root fs hashes must be that plan's (else exit 2).

This file is the entry point: the arguments, a new campaign's run
directory (create) or a --resume's checks (resume), and the summary.  The
rest lies beside it in scripts/campaign/, one job a file: file.py (the
campaign file), manifest.py (the plan, manifest.json and what --resume
checks in it), boot.py (one boot's start and end), run.py (boots side
by side up to each look, Ctrl-C) and hosts.py (boots on --hosts).

One campaign at a time in a run directory: a campaign and a --resume
hold a lock on it (flock, lockbench/dirlock.py) for their whole run, and a
second one there is refused.  Nothing in the directory is written through
a link or read through one (lockbench/safeio.py), and nothing made there is
writable by group or others, whatever the caller's umask (issue #27).

Exit status: 0 every boot done (or unneeded); 1 some boot failed; 2 bad input
(another campaign running in the directory included); 3 not built; 130
interrupted.
"""
import os
import shutil
import sys

# the least n of a verdict, without the estimators (scipy): a campaign
# runs its boots without the analysis' packages
from analysis.estimate.thresholds import EXACT_MIN_N, Thresholds
from analysis import primary as primarymod
from lockbench.cli import OneLineParser, run_cli
from guest import variant_name, judge, qemu
from lockbench import dirlock, safeio
from lockbench.paths import ROOT
from lockbench.defaults import ICOUNT
from scripts.campaign import boot as campaign_boot
from scripts.campaign import estimate as campaign_estimate
from scripts.campaign import file as campaign_file
from scripts.campaign import hosts as campaign_hosts
from scripts.campaign import manifest as campaign_manifest
from scripts.campaign import reuse as campaign_reuse
from scripts.campaign import run as campaign_run
from scripts import guest_paths
from scripts import variant as variantmod


RESULTS = os.path.join(ROOT, "results")


def make_parser():
    p = OneLineParser(prog="./run.sh campaign", hint="./run.sh campaign --help",
                      description=__doc__.split("\n")[0])
    p.add_argument("file", nargs="?", help="campaign file (campaigns/*.toml)")
    p.add_argument("--resume", metavar="DIR", help="finish the campaign in DIR")
    p.add_argument("--jobs", type=int, help="boots side by side (default: as many as fit "
                   "the host's cores by vCPUs)")
    p.add_argument("--hosts", metavar="FILE",
                   help="run the boots on these ssh hosts (GNU parallel --sshloginfile "
                   "format; see scripts/campaign/hosts.py)")
    p.add_argument("--out", help="run directory (default results/NAME-UTCSTAMP)")
    p.add_argument("--variants", metavar="DIR", action="append", default=[],
                   help="a folder of variant files (./run.sh convert --out DIR), in front of "
                   "LOCKBENCH_VARIANT_PATH for this run; again for more")
    p.add_argument("--dry-run", action="store_true",
                   help="print the planned boots, what they can decide and about how long "
                   "they take, and exit")
    p.add_argument("--reuse", metavar="DIR", action="append", default=[],
                   help="take the finished icount boots of the earlier run DIR (again for "
                        "more) that this campaign plans, from the same kernels, root fs and "
                        "job, instead of booting them (./run.sh bisect does)")
    p.add_argument("--budget", metavar="DURATION",
                   help="spend at most this long running boots (30m, 1h30m, 900s): stop at "
                   "the last look whose repetitions fit; overrides the campaign's budget key")
    p.add_argument("--no-report", action="store_true", help="do not run the report at the end")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="end with the whole summary.md, not only the commit block")
    return p


def lock(d):
    """Hold the campaign lock of run directory D until this process
    exits (dirlock.hold: an flock on D itself, never inherited by a
    runner; a runner locks its own cells/.tmp-ID, another directory);
    refuse when another campaign or --resume holds it."""
    try:
        fd = dirlock.hold(d)
    except OSError as e:
        raise campaign_file.CampaignError(f"{d}: {e.strerror or e}") from None
    if fd is None:
        raise campaign_file.CampaignError(f"{d}: another campaign is running in it")
    return fd


def plan_lines(c, boots):
    """What --dry-run says after the boots: per vCPU count its clock, its
    boots a side and each point's primary metric (and whether it is the
    default); a warning where the boots a side cannot reach a verdict
    (Thresholds.min_n on the wall clock, EXACT_MIN_N under icount),
    so that a small campaign is not run to learn it."""
    out = []
    for cpus in c["cpus"]:
        clock = primarymod.clock_of(c, cpus)
        a_side = sum(1 for x in boots if x["cpus"] == cpus and x["variant"] == c["baseline"])
        metrics = []
        for p in c["points"]:
            metric, how = primarymod.metric_for(c, cpus, p)
            metrics.append(f"{p['id']} {metric}" + (" (the default)" if how == "default" else ""))
        vcpus = f"{cpus} vCPU{'s' if cpus > 1 else ''}"
        out.append(f"{vcpus} ({clock} clock): up to {a_side} "
                   f"boots a side; primary: {', '.join(metrics)}")
        need = EXACT_MIN_N if clock == ICOUNT else Thresholds().min_n
        if a_side < need:
            out.append(f"warning: {a_side} boots a side at {vcpus} cannot reach a verdict "
                       f"(at least {need} a side): every verdict there will read "
                       f"'inconclusive (n<{need})'; raise "
                       + ("icount_repetitions" if clock == ICOUNT else "repetitions"))
    return out


def default_jobs(boots):
    """Boots side by side without --jobs: as many as the host's cores hold
    by the smallest boot's vCPUs."""
    return max(1, (os.cpu_count() or 1) // min(c["cpus"] for c in boots))


def build_identities(c, variant_dirs):
    """Each variant's build (campaign_manifest.build_identity); not built:
    exit 3 naming the build command, with the --variants folders given."""
    builds = {}
    for v in c["variants"]:
        booted = campaign_file.booted_variant(c, v)
        try:
            builds[v] = campaign_manifest.build_identity(booted)
        except judge.RunError as e:
            if e.exit_code != 3 or not variant_dirs:
                raise
            extra = " ".join(f"--variants {d}" for d in variant_dirs)
            raise judge.RunError(3, f"variant {v!r} is not built: run ./run.sh build {extra} "
                                 f"{booted}") from None
        # A point whose path the kernel cannot have: refused before a boot.
        cfg = guest_paths.build_config(booted)
        for p in c["points"] if cfg else ():
            lack = guest_paths.missing(p.get("workload", ""), cfg)
            if lack:
                raise campaign_file.CampaignError(f"point {p['id']}: {v}: {lack}")
    return builds


def create(args, read=None):
    """A new campaign of args.file, in args.out or a new folder of
    results/: (its directory, its manifest); None after --dry-run's
    plan.  READ: campaign_file.read(args.file) where the caller read it
    already."""
    raw, c = read or campaign_file.read(args.file)
    builds = build_identities(c, getattr(args, "variants", None))
    rootfs = campaign_manifest.rootfs_hashes(c["arches"])
    d = args.out or os.path.join(RESULTS, f"{c['name']}-{campaign_manifest.utc_stamp()}")
    if os.path.exists(d) and os.listdir(d):
        raise campaign_file.CampaignError(f"{d}: exists and is not empty")
    # Each --reuse DIR read and checked before anything is made: one
    # that cannot be read ends here, not in a directory half made.
    sources = campaign_reuse.open_sources(getattr(args, "reuse", None) or [])
    boots = campaign_manifest.plan(c)
    if args.dry_run:
        for boot in boots:
            print(f"{boot['id']}: {boot['variant']} {boot['cpus']} vCPUs"
                  + (" (oversubscribed)" if boot["oversubscribed"] else ""))
        for line in plan_lines(c, boots):
            print(f"campaign: {line}")
        if not getattr(args, "hosts", None):
            jobs = getattr(args, "jobs", None) or default_jobs(boots)
            print("campaign: " + campaign_estimate.estimate(c, boots, jobs, RESULTS))
            budget = budget_s(args, c)
            if budget is not None:
                print("campaign: " + campaign_estimate.budget_line(c, boots, jobs, RESULTS,
                                                                   budget))
        return None
    os.makedirs(d, 0o755, exist_ok=True)
    os.chmod(d, 0o755)
    args.held = lock(d)
    # Empty still, now that it is ours: two campaigns given the same --out
    # at once both found it empty above.
    if os.listdir(d):
        raise campaign_file.CampaignError(f"{d}: exists and is not empty")
    os.mkdir(os.path.join(d, "cells"), 0o755)
    os.chmod(os.path.join(d, "cells"), 0o755)
    # The campaign file as it was read (its SHA-256 is in the manifest).
    with safeio.open_new(os.path.join(d, "campaign.toml"), 0o644, binary=True) as f:
        f.write(raw)
    with safeio.open_new(os.path.join(d, "job.conf"), 0o644) as f:
        f.write(campaign_file.job_text(c))
    host = qemu.host_info(qemu.arch_info(c["arches"][0])["qemu"])
    # What boots each arch, for the report's setup lines.
    host["qemu_guests"] = {a: variant_name.guest_desc(a) for a in c["arches"]}
    man = campaign_manifest.Manifest.new(d, c, host, builds, rootfs, boots,
                                         getattr(args, "variants", None))
    man.save()
    if sources:
        n = campaign_reuse.take(d, man, sources)
        src = args.reuse[0] if len(args.reuse) == 1 else f"{len(args.reuse)} earlier runs"
        print(f"campaign: {n} of {len(boots)} boots taken from {src} "
              "(the same icount boots: nothing to boot again)")
    return d, man


def budget_s(args, c):
    """The time budget in seconds: --budget, else the campaign's budget
    key, else None."""
    text = getattr(args, "budget", None) or c.get("budget")
    if text is None:
        return None
    secs = campaign_file.parse_duration(text)
    if secs is None:
        raise campaign_file.CampaignError(
            f"--budget {text}: must be {campaign_file.TOP['budget'].allowed}")
    return secs


def resume(args):
    d = args.resume
    args.held = lock(d)
    man = campaign_manifest.Manifest.load(d)
    c, builds, want = campaign_manifest.checked_manifest(d, man)
    for v, old in builds.items():
        if not campaign_manifest.same_kernel(
                old, campaign_manifest.build_identity(campaign_file.booted_variant(c, v))):
            raise campaign_file.CampaignError(
                f"{d}: refusing to resume: kernel variant {v!r} was rebuilt differently since")
    for a, sha in want.items():
        path = qemu.rootfs_path(a)
        if not os.path.isfile(path) or safeio.sha256(path) != sha:
            raise campaign_file.CampaignError(
                f"{d}: refusing to resume: the guest root file system ({a}) changed")
    for boot in man.data["cells"]:
        # A harness that was killed outright left its boot there (a link
        # or a file there is unlinked, never followed).
        campaign_boot.set_aside_unfinished(os.path.join(d, "cells", f".tmp-{boot['id']}"))
        if boot["state"] == "running":
            # Its try ended with the harness: on record as every ended
            # try is, so that len(tries) is how often the boot started
            # (its files, if any, were set aside as .tmp-ID.partial-N).
            boot["state"] = "interrupted"
            boot.setdefault("tries", []).append(
                {"state": "interrupted",
                 "problems": ["interrupted: the campaign was killed during this try"]})
    man.save()
    return d, man


def report(d, verbose):
    """./run.sh report D in this process (plots.pipeline: the analysis,
    then the plots step), its errors one line on stderr as from the
    command; returns (exit status, the commit block it wrote, or None).
    Imported here: the report needs pandas and scipy, and a campaign
    runs its boots without them; a missing one is the report's exit 3."""
    try:
        from plots import pipeline
    except SystemExit as e:  # lockbench.cli.require: said in one line
        return (e.code if isinstance(e.code, int) else 1), None
    return pipeline.run([d] + ([] if verbose else ["--quiet"]))


def print_block(block):
    """Print the commit block the report has just written (commit-msg.txt)."""
    print()
    print(block.rstrip("\n"))
    print()


def _body(args):
    if bool(args.file) == bool(args.resume):
        raise campaign_file.CampaignError("give a campaign FILE or --resume DIR (not both)")
    if args.hosts:
        if args.jobs:
            raise campaign_file.CampaignError("--jobs and --hosts do not go together: "
                                              "the hosts file says how many jobs per host")
        campaign_hosts.check_hosts_file(args.hosts)
        if not shutil.which(campaign_hosts.PARALLEL):
            raise judge.RunError(3, "missing 'parallel' (GNU parallel): run ./run.sh setup")
    if args.budget is not None:
        if args.hosts:
            raise campaign_file.CampaignError("--budget and --hosts do not go together: "
                                              "--hosts runs every repetition at once")
        budget_s(args, {})
    if args.jobs is not None and not 1 <= args.jobs <= 64:
        raise campaign_file.CampaignError(f"--jobs {args.jobs}: must be 1..64")
    variantmod.add_dirs(args.variants)
    probed, read = None, None
    if args.hosts and args.file and not args.dry_run:
        # Every host answers and has what a boot needs, or nothing is made
        # (a --resume asks them once its directory is checked).
        read = campaign_file.read(args.file)
        probed = campaign_hosts.probe(args.hosts, read[1]["arches"])
    res = create(args, read) if args.file else resume(args)
    if res is None:
        return 0
    d, man = res
    jobs = args.jobs or default_jobs(man.data["cells"])
    todo = sum(c["state"] not in campaign_manifest.SETTLED for c in man.data["cells"])
    print(f"campaign: {man.data['campaign']['name']}: {todo} of {len(man.data['cells'])} "
          f"boots to run, {'on the hosts of ' + args.hosts if args.hosts else f'{jobs} at a time'}, "
          f"into {d}")
    looks = man.data["campaign"].get("looks") or []
    if len(looks) > 1:
        print(f"campaign: looks at {', '.join(map(str, looks))} repetitions: stops at the "
              f"first where every primary cell has a verdict"
              + (" (not with --hosts: every repetition runs)" if args.hosts else ""))
    if args.hosts:
        try:
            stop = campaign_run.run_on_hosts(d, man, args.hosts, probed)
        except campaign_hosts.HostsRefused:
            raise  # before any boot ran: one line, its own exit status
        except (campaign_hosts.HostsError, OSError) as e:
            raise judge.RunError(1, f"{e}; finish with: ./run.sh campaign --resume {d} "
                                 f"--hosts {args.hosts}") from None
    else:
        try:
            stop = campaign_run.run_boots(d, man, jobs, budget_s(args, man.data["campaign"]))
        except campaign_run.BootRefused as e:
            raise judge.RunError(e.exit_code, f"{e}; the running boots were stopped and "
                                 f"recorded; finish with: ./run.sh campaign --resume {d}") from None
    states = {}
    for c in man.data["cells"]:
        states[c["state"]] = states.get(c["state"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
    if stop:
        print(f"campaign: stopped by {stop[0]}: {summary}; finish with: "
              f"./run.sh campaign --resume {d}", file=sys.stderr)
        return 130
    print(f"campaign: {summary}: {d}")
    if not args.no_report and states.get("done"):
        # The terminal gets the commit block (the answer, one table, the
        # failures, the A/A control: at most 25 lines of 72 columns) and
        # where the rest is; summary.md (hundreds of lines) with --verbose.
        rc, block = report(d, args.verbose)
        if rc == 130:
            return rc
        if rc == 0:
            if not args.verbose:
                print_block(block)
            print(f"campaign: verdicts in {d}/summary.md, plots in {d}/plots/, "
                  f"the page in {d}/report.html, a changelog block in {d}/commit-msg.txt")
    settled = sum(states.get(s, 0) for s in campaign_manifest.SETTLED)
    return 0 if settled == len(man.data["cells"]) else 1



def main(argv):
    # Nothing this campaign makes is writable by group or others, whatever
    # the caller's umask: another local user could plant links where the
    # boots go (issue #27).
    os.umask(os.umask(0) | 0o022)
    return run_cli("campaign", make_parser(), argv, _body)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
