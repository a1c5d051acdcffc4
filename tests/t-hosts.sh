#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A campaign spread over two ssh hosts with GNU parallel, through real
# OpenSSH: two sshd of its own on 127.0.0.1 (tests/hosts/loopback-sshd.sh:
# own ports, host keys and authorized key in a throwaway folder, key
# authentication only, each host with a home of its own), reached with
# the real ssh and rsync, stopped at the end whatever happens.  The
# kernels, modules and root fs are copied to each host once; the boots
# (arm and arm64: an arm64 target's name has an '@') run there, come
# back into one results tree and are analysed like local ones.
#
# Then the faults of a lab, for real: a hosts file naming a host whose
# sshd is down is refused in one line before anything runs; during the
# campaign, once a boot of host 2 is back, the QEMU of its next boot is
# killed there, and during the one after, host 2 goes away (its sshd and
# every process of its sessions killed).  Each of its failed tries is one
# line naming it, stays on record and counts as no boot of the kernel;
# the boots are retried on host 1, the campaign completes there, and the
# boot host 2 had finished is kept byte for byte.  Each boot records its
# host, and that host's CPU model and cores as read there.
#
# Usage: tests/t-hosts.sh
# Needs: before after before@arm64 after@arm64

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
lb_need parallel rsync ssh ssh-keygen
lb_need_file /usr/sbin/sshd openssh-server
out=${LB_TEST_OUT:-$(mktemp -d)}/hosts
rm -rf "$out"
mkdir -p "$out/lab"
lab=$(cd "$out/lab" && pwd)
sshd=tests/hosts/loopback-sshd.sh
campaign=
# The campaign in a session of its own: a failing test stops all of it.
trap '[ -z "$campaign" ] || kill -TERM -- -"$campaign" 2>/dev/null
	bash "$LB_ROOT/$sshd" stop "$lab" || true' EXIT
# Three hosts; the third goes down at once: a host that refuses.
bash "$sshd" start "$lab" 3
bash "$sshd" stop "$lab" 3
cp "$lab/hosts" "$out/hosts-3"
# Host 1 takes two boots at a time, host 2 one: the two cores stay busy
# once host 2 is gone.
sed -n '1s|^1/|2/|p; 2p' "$lab/hosts" >"$out/hosts"
echo "ok: 3 sshd started on 127.0.0.1 (ports $(cat "$lab"/host*/port | tr '\n' ' ')), the third stopped"

# 1. The campaign on hosts 1 and 2 (in the background), host 2 faulted
# in its second and third boots (below).
d=$out/hosts-campaign
setsid ./run.sh campaign tests/campaigns/hosts.toml --hosts "$out/hosts" --out "$d" \
	--no-report >"$out/campaign.log" 2>&1 &
campaign=$!

# 2. Meanwhile, a host that refuses the connection: one line, nothing
# made, no boot.
rc=0
./run.sh campaign tests/campaigns/hosts.toml --hosts "$out/hosts-3" --out "$out/refused" \
	>"$out/refused.out" 2>"$out/refused.err" || rc=$?
port3=$(cat "$lab/host3/port")
if [ "$rc" != 2 ] || [ "$(wc -l <"$out/refused.err")" != 1 ] ||
	! grep -q "lbhost3 did not answer (ssh: connect to host 127.0.0.1 port $port3: Connection refused)" \
		"$out/refused.err" || [ -e "$out/refused" ]; then
	echo "FAIL: a host refusing the connection: exit $rc, not one line naming lbhost3 before anything ran:"
	cat "$out/refused.out" "$out/refused.err"
	exit 1
fi
echo "ok: a host that refuses the connection: exit 2 in one line, no boot, no directory: $(cat "$out/refused.err")"

# 3. Once host 2's first boot is back (its name and the digest of its
# files noted), the QEMU of its next boot is killed there; in the one
# after, host 2 goes away.
"$LB_PY" - "$d" "$lab" "$LB_ROOT/$sshd" "$campaign" >"$out/faults.log" 2>&1 <<'PY' || {
import hashlib, json, os, subprocess, sys, time
d, lab, sshd, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
deadline = time.monotonic() + 500

def wait(what, test):
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}"):
            sys.exit(f"the campaign ended before {what}")
        got = test()
        if got:
            return got
        time.sleep(0.3)
    sys.exit(f"no {what} within 500 s")

def boots():
    try:
        return json.load(open(f"{d}/manifest.json"))["cells"]
    except (OSError, ValueError):
        return []

def qemu_of_host2():
    for p in os.listdir("/proc"):
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd[0].startswith(b"qemu-system-") and any(f"{lab}/host2/".encode() in a for a in cmd):
            return p
    return None

def digest(path):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for f in sorted(files):
            h.update(os.path.relpath(os.path.join(root, f), path).encode())
            h.update(open(os.path.join(root, f), "rb").read())
    return h.hexdigest()

kept = wait("boot back from host 2", lambda: next(
    (c["id"] for c in boots() if c["state"] == "done" and c.get("host", "").endswith(" lbhost2")), None))
print(json.dumps({"kept": kept, "digest": digest(f"{d}/cells/{kept}")}), flush=True)
# The next boot's QEMU, once booting: killed there, as by the host's OOM killer.
first = wait("QEMU on host 2", qemu_of_host2)
subprocess.run(["bash", sshd, "kill-qemu", lab, "2"], check=True)
print(f"killed QEMU {first} on host 2", flush=True)
wait("another QEMU on host 2", lambda: (lambda q: q if q and q != first else None)(qemu_of_host2()))
subprocess.run(["bash", sshd, "stop", lab, "2"], check=True)
print("host 2 stopped", flush=True)
PY
	cat "$out/faults.log"
	tail -n 20 "$out/campaign.log"
	exit 1
}
rc=0
wait "$campaign" || rc=$?
campaign=
cat "$out/faults.log"
if [ "$rc" != 0 ]; then
	echo "FAIL: the campaign over the two hosts exited $rc"
	tail -n 30 "$out/campaign.log"
	exit 1
fi
# The analysis (what the checks below read), without the plots: they
# are drawn from these files as any run's.
./run.sh report "$d" --no-plots >"$out/report.log" 2>&1 ||
	{ tail -n 20 "$out/report.log"; exit 1; }
"$LB_PY" - "$d" "$lab" "$out/campaign.log" "$out/faults.log" <<'PY'
import csv, hashlib, json, os, sys
d, lab, log, faults = sys.argv[1:]
m = json.load(open(d + "/manifest.json"))
h1, h2 = (f"ssh -F {lab}/ssh_config lbhost{n}" for n in (1, 2))
kept = json.loads(open(faults).readline())
said = [ln for ln in open(log) if ln.startswith("campaign: boot ")]
model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
              if ln.startswith("model name")), "unknown")
want = {"cpu_model": " ".join(model.split()), "cores": os.cpu_count()}
assert m["hosts"] == {h1: want, h2: want}, m["hosts"]
[remote] = m["hosts_remote"]
killed, lost = [], []
for c in m["cells"]:
    assert c["state"] == "done", (c["id"], c["state"], c.get("problems"))
    assert c["host"] in (h1, h2) and c["host_cpu"] == want, c
    n = c["host"][-1]
    cmd = open(f"{d}/cells/{c['id']}/qemu-cmd").read()
    kernel = "Image" if c["variant"].endswith("@arm64") else "uImage"
    assert f"{lab}/host{n}/home/{remote}/payload/build/{c['variant']}/{kernel}" in cmd, cmd
    for p in m["campaign"]["points"]:
        assert os.path.isfile(f"{d}/cells/{c['id']}/points/{p['id']}/results.txt")
    for t in c["tries"][:-1]:
        assert t["host"] == h2, (c["id"], t)
        assert t["state"] in ("killed", "error"), (c["id"], t)
        (killed if t["state"] == "killed" else lost).append(c["id"])
        # one line each, naming the host
        assert sum(ln.startswith(f"campaign: boot {c['id']} on lbhost2: {t['state']}: ")
                   for ln in said) >= 1, (c["id"], said)
    if len(c["tries"]) > 1:
        assert c["tries"][-1]["host"] == h1, c
assert len(killed) == 1, ("one try whose QEMU was killed", killed)
assert lost and all("host lbhost2 went away or refused the connection (ssh exit 255"
                    in m["cells"][[x["id"] for x in m["cells"]].index(i)]["tries"][0]["problems"][0]
                    for i in lost), lost
assert len(said) == len(killed) + len(lost), said
assert os.path.isdir(f"{d}/cells/{killed[0]}.partial-1"), "the killed try's files were not kept"
h = hashlib.sha256()
for root, dirs, files in sorted(os.walk(f"{d}/cells/{kept['kept']}")):
    dirs.sort()
    for f in sorted(files):
        h.update(os.path.relpath(os.path.join(root, f), f"{d}/cells/{kept['kept']}").encode())
        h.update(open(os.path.join(root, f), "rb").read())
assert h.hexdigest() == kept["digest"], f"{kept['kept']}, finished on host 2, changed"
assert os.listdir(f"{lab}/host1/home") == [], os.listdir(f"{lab}/host1/home")
rows = list(csv.DictReader(open(f"{d}/tidy/boots.csv")))
bad = [r for r in rows if r["state"] != "done" and (r["counted"], r["lost"]) != ("0", "0")]
assert not bad and len(rows) == len(m["cells"]) + len(killed) + len(lost), rows
answer = open(f"{d}/answer.txt").read()
assert "Lost boots" not in answer and "kinds of host" not in answer, answer
print(f"ok: {len(m['cells'])} boots ({', '.join(m['campaign']['variants'])}) done over real "
      f"sshd on 127.0.0.1, every one recording its host and '{want['cpu_model']}', "
      f"{want['cores']} cores, as read there; host 2's QEMU killed in {killed[0]}, host 2 gone "
      f"in {', '.join(lost)}: {len(said)} lines naming it, each retried on host 1 and done, "
      f"none counted as a boot the kernel lost; {kept['kept']}, finished on host 2 before, "
      f"kept byte for byte")
PY
grep -q "Accepted publickey for $(id -un) from 127.0.0.1" "$lab/host1/sshd.log" ||
	{ echo "FAIL: host 1's sshd logged no public key login"; exit 1; }
[ -s "$d/summary.md" ] || { echo "FAIL: no summary.md"; exit 1; }
if grep -q ',0$' "$d/tidy/crosscheck.csv"; then
	echo "FAIL: module counts and lock_stat disagree"
	exit 1
fi
echo "ok: the hosts' boots were analysed: summary.md, counts agree with lock_stat"
bash "$sshd" stop "$lab"
for n in 1 2 3; do
	if bash "$sshd" up "$lab" "$n"; then
		echo "FAIL: host $n's sshd still runs after stop"
		exit 1
	fi
done
echo "ok: every sshd of the test stopped"
