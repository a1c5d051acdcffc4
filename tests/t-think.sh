#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's think time (think_ns), for real: one boot of "before" at 2
# vCPUs runs the same point at think_ns=0 and think_ns=20000.  Both end
# with "end status=SUCCESS" and report the think_ns they ran with (the
# results' param line); with think_ns=20000 the op rate is below
# threads / 20 us (each op of a thread spins 20 us of guest time after
# it: a ceiling, whatever an op costs) and at least half of what a vCPU
# with the share of a host core the think_ns=0 point saw would do
# (threads / (op time + 20 us / f), the op time taken from the think_ns=0
# point: a busy host stretches the spin as it stretches the ops).  Not
# "far below the tight loop" nor "about threads / (op time + 20 us)": the
# think time also thins the contention, so an op costs less than in the
# tight loop (seen: 16.2 us an op there, 8.7 us with the think time; the
# rate then 0.56 x the tight loop's and 1.26 x that estimate).  The
# lookup median stays an op latency, of the same order as at think_ns=0
# and well below the 20 us think time (which must be outside the timed
# window).  An out-of-range think_ns=1000001 is refused by the module at
# load (insmod fails) and at the start of a run, with the documented
# pr_err line, and by the host's job check (exit 2, one line, no run
# directory) before any boot.
#
# Usage: tests/t-think.sh
# Quiet: yes (its op-rate bounds assume a vCPU with its core)

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init think

# The host refuses a job point out of the module's range before booting.
printf 'lockbench-job v1\npoint p1 read_pct=90 think_ns=1000001\n' >"$out/bad.job"
ft_boot "$out/bad" "$out/bad.job"
ft_rc_is 2
ft_one_line "$out/bad.stderr" 'think_ns=1000001 must be an integer in 0\.\.1000000'
[ ! -e "$out/bad" ] || fail "a run directory for a refused job"
ok "host: think_ns=1000001 refused before booting"

cat >"$out/think.job" <<'JOB'
lockbench-job v1
option selftest 1
point t0 read_pct=90 mailboxes=16 miss_pct=0 duration_ms=1000 think_ns=0
point t20k read_pct=90 mailboxes=16 miss_pct=0 duration_ms=1000 think_ns=20000
JOB
ft_boot "$out/run" "$out/think.job"
ft_rc_is 0

con=$out/run/console.log
grep -q 'SELFTEST insmod think_ns=1000001 rejected' "$con" ||
	fail "insmod think_ns=1000001 was not refused"
grep -q 'SELFTEST run think_ns=1000001 rejected' "$con" ||
	fail "a run with think_ns=1000001 was not refused"
grep -q 'mbox_bench: think_ns=1000001 out of range 0\.\.1000000' "$con" ||
	fail "no 'think_ns=1000001 out of range 0..1000000' line"
ok "module: think_ns=1000001 refused at load and at run start, with the pr_err line"

PYTHONPATH=$LB_ROOT "$LB_PY" - "$out/run" <<'PY'
import sys
from analysis.parse import bench_results

d = sys.argv[1]
res = {p: bench_results.parse_file(f"{d}/points/{p}/results.txt") for p in ("t0", "t20k")}
for p, want in (("t0", 0), ("t20k", 20000)):
    r = res[p]
    assert r.status == "SUCCESS", f"{p}: end status={r.status}"
    assert r.param.get("think_ns") == want, f"{p}: param think_ns={r.param.get('think_ns')}, want {want}"
    assert r.total["ops"] > 0 and all(t["ops"] > 0 for t in r.threads), f"{p}: a thread made no progress"
    assert r.lat["lookup"].count > 0, f"{p}: no timed lookup"
print("ok: both points end status=SUCCESS with param think_ns=0 and 20000")

r0, r20 = res["t0"], res["t20k"]
think = 20000
rate0, rate20 = r0.total["ops_per_sec"], r20.total["ops_per_sec"]
n0, n20 = r0.run["threads"], r20.run["threads"]
p0 = r0.lat["lookup"].quantile(0.5)
# T0: the time one op of a thread took in the tight loop (loop, probe and
# timing included).  On a quiet host, where each vCPU has a host core, 20
# us more per op give threads / (T0 + 20 us).  On a busy one a vCPU gets
# a share f of a host core and the spin, busy as the ops are, needs the
# same share: an op costs c = f * T0 of vCPU time and one op plus its
# think time take (c + 20 us) / f = T0 + 20 us / f.  c is at least the
# lookup median (an op is mostly a lookup at read_pct=90), so f is at
# least p50 / T0: the slowest rate a steady host gives.
t0_ns = n0 * r0.run["elapsed_ns"] / r0.total["ops"]
quiet = n20 * 1e9 / (t0_ns + think)
f_min = min(1.0, p0 / t0_ns)
busy = n20 * 1e9 / (t0_ns + think / f_min)
print(f"   think_ns=0: {rate0} ops/s, {t0_ns:.0f} ns per op and thread, "
      f"lookup p50 {p0} ns (vCPU share f >= {f_min:.2f}); think_ns=20000: "
      f"{rate20} ops/s, threads / (T0 + 20 us) = {quiet:.0f}, "
      f"threads / (T0 + 20 us / f) = {busy:.0f}")
ceiling = n20 * 1e9 / think
assert rate20 < ceiling, \
    f"think_ns=20000: {rate20} ops/s, not below threads / 20 us = {ceiling:.0f}"
assert rate20 >= 0.5 * busy, \
    f"think_ns=20000: {rate20} ops/s, below half of threads / (T0 + 20 us / f) = {busy:.0f}"
print(f"ok: op rate {rate20 / rate0:.3f} x the tight loop's, {rate20 / quiet:.2f} x "
      f"threads / (op time + 20 us)")

p20 = r20.lat["lookup"].quantile(0.5)
print(f"   lookup p50: think_ns=0 {p0} ns, think_ns=20000 {p20} ns")
assert p20 < think / 2, f"lookup p50 {p20} ns at think_ns=20000: the think time is in it"
assert p0 / 4 <= p20 <= p0 * 4, f"lookup p50 {p20} ns, not the order of {p0} ns at think_ns=0"
print(f"ok: lookup median {p20 / p0:.2f} x the tight loop's, far below the think time")
PY
