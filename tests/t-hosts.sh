#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A campaign spread over ssh hosts with GNU parallel: an sshd started here
# on 127.0.0.1 with a throwaway host key and user key stands in for a
# second machine.  The kernels, modules and root fs are copied to it once,
# every cell runs there through ssh (its qemu-cmd names the remote copy),
# comes back into the same results tree and is analysed like a local one.
# The campaign has arm and arm64 cells: an arm64 target's name has an '@'.
#
# Usage: tests/t-hosts.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
lb_need sshd ssh ssh-keygen parallel rsync
out=${LB_TEST_OUT:-$(mktemp -d)}/hosts
rm -rf "$out"
mkdir -p "$out/ssh"
k=$out/ssh
ssh-keygen -q -t ed25519 -N '' -f "$k/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$k/userkey"
cp "$k/userkey.pub" "$k/authorized_keys"
port=$("$LB_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $k/hostkey" \
	"AuthorizedKeysFile $k/authorized_keys" "PermitRootLogin prohibit-password" \
	"PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" \
	"StrictModes no" "PidFile $k/sshd.pid" >"$k/sshd_config"
mkdir -p /run/sshd
"$(command -v sshd)" -f "$k/sshd_config" -E "$k/sshd.log"
user=$(id -un)
ssh_cmd="ssh -p $port -i $k/userkey -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
remote=lockbench-hosts-campaign
cleanup() {
	# shellcheck disable=SC2086 # ssh_cmd is a command line
	$ssh_cmd "$user@127.0.0.1" "rm -rf $remote" 2>/dev/null || true
	kill "$(cat "$k/sshd.pid")" 2>/dev/null || true
}
trap cleanup EXIT
echo "2/$ssh_cmd $user@127.0.0.1" >"$out/hosts"

./run.sh campaign tests/campaigns/hosts.toml --hosts "$out/hosts" \
	--out "$out/hosts-campaign" >"$out/campaign.log" 2>&1 ||
	{ tail -n 20 "$out/campaign.log"; exit 1; }
"$LB_PY" - "$out/hosts-campaign" "$remote" <<'PY'
import json, os, sys
d, remote = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/manifest.json"))
for c in m["cells"]:
    assert c["state"] == "done", (c["id"], c["state"], c.get("problems"))
    assert c.get("host", "").startswith("ssh -p"), c
    cmd = open(f"{d}/cells/{c['id']}/qemu-cmd").read()
    kernel = "Image" if c["variant"].endswith("@arm64") else "uImage"
    assert f"/{remote}/payload/build/{c['variant']}/{kernel}" in cmd, cmd
    for p in m["campaign"]["points"]:
        assert os.path.isfile(f"{d}/cells/{c['id']}/points/{p['id']}/results.txt")
print(f"ok: {len(m['cells'])} cells ({', '.join(m['campaign']['variants'])}) ran over "
      "ssh on the remote copy and came back")
PY
[ -s "$out/hosts-campaign/summary.md" ] || { echo "FAIL: no summary.md"; exit 1; }
if grep -q ',0$' "$out/hosts-campaign/tidy/crosscheck.csv"; then
	echo "FAIL: module counts and lock_stat disagree"
	exit 1
fi
echo "ok: the hosts' cells were analysed: summary.md, counts agree with lock_stat"
