# SPDX-License-Identifier: GPL-2.0
"""Every boot counts: each try of each boot, how it ended, counted on its
variant's side per vCPU count (tidy/boots.csv), and the test that turns
a side losing more boots than its baseline into a verdict.

A boot the kernel lost (it hung, panicked, oopsed, reported lockdep or a
warning, or did not finish its points) is a result about that kernel,
often the most important one: it gives no numbers, so without this count
it would vanish from the answer.  Tries the harness ended (Ctrl-C, a
full disk, QEMU killed from outside, a runner that wrote nothing, a host
of --hosts whose results were refused) say nothing about the kernel and
are not counted.

Pure functions of a loaded run directory and of counts; never prints."""

from scipy import stats as sps

#: how a try ends when the kernel lost the boot (guest/judge.py states)
KERNEL_LOST = ("hung", "panic", "oops", "lockdep", "warning", "incomplete")
#: how a try ends when the harness, not the kernel, stopped it
NOT_COUNTED = ("interrupted", "nospace", "killed", "error", "failed")
BOOTS_COLUMNS = ("campaign", "variant", "arch", "cpus", "rep", "cell", "try",
                 "state", "lost", "counted", "problem")
FAILURES = "harm (failures)"


def boot_rows(rundir):
    """One row per ended try of every boot (BOOTS_COLUMNS; its column
    `cell`: the boot's id, the format's name): lost = 1 when the kernel
    lost it, counted = 0 when the harness ended it."""
    rows = []
    for boot in rundir.boots:
        for i, t in enumerate(boot.tries, 1):
            state = t["state"]
            lost = int(state in KERNEL_LOST)
            probs = t.get("problems") or []
            rows.append({"campaign": rundir.name, "variant": boot.variant,
                         "arch": boot.arch, "cpus": boot.cpus,
                         "rep": boot.rep, "cell": boot.id, "try": i,
                         "state": state, "lost": lost,
                         "counted": int(state not in NOT_COUNTED),
                         "problem": probs[0][:200] if probs and lost else ""})
    return rows


def tally(rows):
    """{(variant, cpus): {"boots": n counted, "lost": n, "states": {state:
    n}}} from boot_rows()."""
    out = {}
    for r in rows:
        if not int(r["counted"]):
            continue
        t = out.setdefault((str(r["variant"]), int(r["cpus"])),
                           {"boots": 0, "lost": 0, "states": {}})
        t["boots"] += 1
        if int(r["lost"]):
            t["lost"] += 1
            t["states"][r["state"]] = t["states"].get(r["state"], 0) + 1
    return out


def p_more_lost(lost_var, boots_var, lost_base, boots_base):
    """One-sided p of Fisher's exact test that the variant loses boots
    more often than the baseline (1.0 when it lost none)."""
    if lost_var == 0 or boots_var == 0 or boots_base == 0:
        return 1.0
    table = [[lost_var, boots_var - lost_var],
             [lost_base, boots_base - lost_base]]
    return float(sps.fisher_exact(table, alternative="greater")[1])


def loss_rate_hi(lost, boots, confidence):
    """The one-sided upper confidence bound (Clopper-Pearson, at
    `confidence`) on how often a kernel loses a boot, from `lost` of
    `boots`: 0 of 16 at 97.5% is 20.6%; nan without boots.  What a
    favourable verdict cannot rule out: a kernel that hangs one boot in
    ten shows none in 16 boots in 18.5% of campaigns."""
    if boots <= 0:
        return float("nan")
    if lost >= boots:
        return 1.0
    return float(sps.beta.ppf(confidence, lost + 1, boots - lost))


def pooled(tally_, variant, cpus, also=()):
    """The tally of variant at cpus vCPUs, with those of `also` (the A/A
    control: the same kernel) added: {"boots", "lost", "states"}."""
    out = {"boots": 0, "lost": 0, "states": {}}
    for v in (variant,) + tuple(also):
        t = tally_.get((v, cpus))
        if not t:
            continue
        out["boots"] += t["boots"]
        out["lost"] += t["lost"]
        for k, n in t["states"].items():
            out["states"][k] = out["states"].get(k, 0) + n
    return out


def states_s(states):
    """'2 hung, 1 panic' from {state: n}, most first."""
    return ", ".join(f"{n} {s}" for s, n in
                     sorted(states.items(), key=lambda x: (-x[1], x[0])))


def lost_sentence(variant, base, cpus, tv, tb):
    """'after: 2 of 16 boots lost at 2 vCPUs (2 hung), before: 0 of 16'."""
    def side(name, t):
        n, k = t["boots"], t["lost"]
        text = f"{name}: {k} of {n} boot{'s' if n != 1 else ''}"
        return text + (f" ({states_s(t['states'])})" if k else "")
    return (f"{side(variant, tv)} lost at {cpus} vCPU{'s' if cpus != 1 else ''}"
            f", {side(base, tb)}")

