#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Linux 6.12 beside 6.1 (issue #39).  The 6.12 kernels (before@6.12,
# after@6.12: Debian's linux-source-6.12 with the same series, built by
# tests/run-all.sh's build step) are what they claim to be: configcheck
# proves their fragments on the 6.12 tree, build-meta.json names 6.12 and
# its Debian package, after@6.12 starts from before@6.12's objects (never
# from a 6.1 build), and the linked omap_mbox_get() takes the read lock
# on before@6.12 and the spinlock on after@6.12.  tests/campaigns/
# versions.toml (before and after on 6.1 and 6.12, 2 vCPUs) boots every
# kernel interleaved, each 6.12 guest says "Linux version 6.12", the
# module's self-checks pass and lock_stat's acquisitions equal the
# module's counts (the same parser on both versions); analyze finds no
# problem or disagreement; every comparison row names its kernel, each
# pair is compared within its version, and the answer and the commit
# block say which Linux each pair booted and whether the verdict holds
# across the two.
#
# Usage: tests/t-versions.sh
# Needs: before after before@6.12 after@6.12
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/versions
rm -rf "$out"
mkdir -p "$out"
fail() {
	echo "FAIL: t-versions: $*"
	exit 1
}

# 1. The 6.12 kernels.
for v in before after; do
	d=$LB_BUILD/$v@6.12
	scripts/configcheck.sh --tree "$d/src" "$d/config" kernel-patches/configs/virt-arm.config \
		kernel-patches/configs/mbox-registry.config kernel-patches/configs/lockstat.config ||
		fail "$v@6.12: its fragments did not stick"
	lb_py - "$d/build-meta.json" "$v" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
v = sys.argv[2]
assert m["variant"] == v + "@6.12" and m["variant_file"] == v, m["variant"]
assert m["kernel"] == "6.12" and m["kernel_version"].startswith("6.12."), m["kernel_version"]
assert m["debian_package"] == "linux-source-6.12", m["debian_package"]
assert m["debian_package_version"].startswith("6.12."), m["debian_package_version"]
assert m["lock_stat"] is True and m["preempt"] == "none", m
if v == "after":
    assert m["objects_from"] == "before@6.12", m["objects_from"]
print(f"ok: {v}@6.12: build-meta.json: Linux {m['kernel_version']} "
      f"({m['debian_package']} {m['debian_package_version']}), built in "
      f"{m['build_seconds']} s" + (f" from {m['objects_from']}'s objects"
                                   if m["objects_from"] else ""))
PY
	vermagic=$(arm-linux-gnueabihf-readelf -p .modinfo "$d/mbox_bench.ko" | grep -o 'vermagic=[^ ]*')
	[ "$vermagic" = "vermagic=$(lb_py -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernel_version"])' "$d/build-meta.json")" ] ||
		fail "$v@6.12: mbox_bench.ko's $vermagic is not its kernel's"
done
. "$LB_ROOT/tests/lockcalls.sh"
got=$(lock_calls before@6.12)
[ "$got" = "<_raw_read_lock> <_raw_read_unlock> " ] || fail "before@6.12's omap_mbox_get calls: $got"
got=$(lock_calls after@6.12)
[ "$got" = "<_raw_spin_lock> <_raw_spin_unlock> " ] || fail "after@6.12's omap_mbox_get calls: $got"
echo "ok: vmlinux: before@6.12's omap_mbox_get takes the read lock, after@6.12's the spinlock"

# 2. One campaign, both kernels, interleaved.
./run.sh campaign tests/campaigns/versions.toml --jobs 1 --out "$out/run" --no-report \
	>"$out/campaign.log" 2>&1 || { tail -n 20 "$out/campaign.log"; fail "the campaign failed"; }
lb_py - "$out/run" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
c = m["campaign"]
assert c["kernels"] == ["6.1", "6.12"], c["kernels"]
assert c["variants"] == ["before", "after", "before@6.12", "after@6.12"], c["variants"]
assert c["compare"] == [["before", "after"], ["before@6.12", "after@6.12"]], c["compare"]
assert all(x["state"] == "done" for x in m["cells"]), [(x["id"], x["state"]) for x in m["cells"]]
# Interleaved: every repetition boots both kernels.
for rep in {x["rep"] for x in m["cells"]}:
    got = {x["variant"] for x in m["cells"] if x["rep"] == rep}
    assert got == set(c["variants"]), (rep, got)
for x in m["cells"]:
    meta = json.load(open(f"{d}/cells/{x['id']}/meta.json"))
    assert meta["build"]["variant"] == x["variant"], meta["build"]
    assert meta["build"]["kernel"] == ("6.12" if "@6.12" in x["variant"] else "6.1"), meta["build"]
    assert f"/{x['variant']}/uImage" in open(f"{d}/cells/{x['id']}/qemu-cmd").read()
print(f"ok: manifest: {len(m['cells'])} boots done, both kernels in every repetition, "
      f"pairs {c['compare']}")
PY
for boot in r01-before@6.12-c2 r01-after@6.12-c2; do
	lock=rwlock
	[[ $boot != *after* ]] || lock=spinlock
	"$LB_PY" tests/check_run.py "$out/run/cells/$boot" --lock "$lock" | sed 's/^/    /'
	grep -q '^Linux version 6\.12\.' "$out/run/cells/$boot/console.log" || fail "$boot: not a 6.12 kernel"
	echo "ok: $boot: Linux 6.12 booted; module self-checks pass; lock_stat ($lock) == module counts; perf stat works"
done

# 3. Analysis and the answer.
./run.sh analyze "$out/run" >"$out/analyze.log" 2>&1 || { cat "$out/analyze.log"; fail "analyze"; }
grep -q ', 0 problems, 0 crosscheck disagreements' "$out/analyze.log" ||
	{ cat "$out/analyze.log"; fail "analyze found problems"; }
echo "ok: analyze: no problem, no cross-check disagreement on either kernel"
./run.sh report "$out/run" --no-plots >"$out/summary.md" 2>"$out/report.err" ||
	{ cat "$out/report.err"; fail "report"; }
lb_py - "$out/run" <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/tidy/comparisons.csv")))
kern = {(r["baseline"], r["variant"], r["kernel"]) for r in rows if r["role"] != "control"}
assert kern == {("before", "after", "6.1"), ("before@6.12", "after@6.12", "6.12")}, kern
answer = open(d + "/answer.txt").read()
assert "Answer for after against before on Linux 6.1." in answer, answer
assert "Answer for after@6.12 against before@6.12 on Linux 6.12." in answer, answer
last = answer.strip().split("\n\n")[-1]
assert last.startswith("Across Linux 6.1 and Linux 6.12, after against before: "), last
block = open(d + "/commit-msg.txt").read()
assert "after@6.12 vs before@6.12 on Linux 6.12." in block, block
assert "Across Linux 6.1 and Linux 6.12" in " ".join(block.split()), block
print("ok: comparisons.csv names each row's kernel; the answer and the commit block name "
      "each pair's Linux and end with: " + last[:100])
PY
"$LB_PY" tests/check_width.py --commit "$out/run/commit-msg.txt"
echo "t-versions: ok"
