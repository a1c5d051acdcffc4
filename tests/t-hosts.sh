#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A campaign spread over ssh hosts with GNU parallel: a second machine is
# stood in for by tests/hosts/standin-ssh.sh (an "ssh" that runs the
# command here, in a throwaway home, as sshd would; no server, no port).
# The kernels, modules and root fs are copied to it once, every cell runs
# there through the stand-in (its qemu-cmd names the remote copy), comes
# back into the same results tree and is analysed like a local one; the
# remote folder is gone at the end.  The campaign has arm and arm64
# cells: an arm64 target's name has an '@'.
#
# Usage: tests/t-hosts.sh
# Needs: before after before@arm64 after@arm64

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
lb_need parallel rsync
out=${LB_TEST_OUT:-$(mktemp -d)}/hosts
rm -rf "$out"
mkdir -p "$out"
export LB_STANDIN_HOME=$out/home
# As in a CI job, no SHELL: the stand-in sets it on the "host" as sshd does.
unset SHELL
echo "2/$LB_ROOT/tests/hosts/standin-ssh.sh -p 22 user@remote1" >"$out/hosts"

./run.sh campaign tests/campaigns/hosts.toml --hosts "$out/hosts" \
	--out "$out/hosts-campaign" >"$out/campaign.log" 2>&1 ||
	{ tail -n 20 "$out/campaign.log"; exit 1; }
"$LB_PY" - "$out/hosts-campaign" "$LB_STANDIN_HOME/remote1" <<'PY'
import json, os, sys
d, home = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/manifest.json"))
[remote] = m["hosts_remote"]
assert os.listdir(home) == [], f"left on the host: {os.listdir(home)}"
for c in m["cells"]:
    assert c["state"] == "done", (c["id"], c["state"], c.get("problems"))
    assert c.get("host", "").endswith("standin-ssh.sh -p 22 user@remote1"), c
    cmd = open(f"{d}/cells/{c['id']}/qemu-cmd").read()
    kernel = "Image" if c["variant"].endswith("@arm64") else "uImage"
    assert f"/{remote}/payload/build/{c['variant']}/{kernel}" in cmd, cmd
    for p in m["campaign"]["points"]:
        assert os.path.isfile(f"{d}/cells/{c['id']}/points/{p['id']}/results.txt")
print(f"ok: {len(m['cells'])} cells ({', '.join(m['campaign']['variants'])}) ran over "
      f"the stand-in ssh on the remote copy ({remote}), came back, and the copy is gone")
PY
[ -s "$out/hosts-campaign/summary.md" ] || { echo "FAIL: no summary.md"; exit 1; }
if grep -q ',0$' "$out/hosts-campaign/tidy/crosscheck.csv"; then
	echo "FAIL: module counts and lock_stat disagree"
	exit 1
fi
echo "ok: the hosts' cells were analysed: summary.md, counts agree with lock_stat"
