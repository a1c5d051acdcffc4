#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The two built kernels are what they claim to be: both .configs hold
# CONFIG_LOCK_STAT=y and the registry; the before tree declares
# DEFINE_RWLOCK(mboxes_lock) and the after tree DEFINE_SPINLOCK; each
# build-meta.json names the kernel, the Debian package, the patches and
# config by SHA-256 and the compiler; the module is an ARM object built
# for that kernel (never for the host's).
#
# Usage: tests/t-kernel.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

for v in before after; do
	d=$LB_BUILD/$v
	for opt in CONFIG_LOCK_STAT=y CONFIG_PROVE_LOCKING=y CONFIG_OMAP_MBOX_REGISTRY=y \
		CONFIG_SMP=y CONFIG_NR_CPUS=16 CONFIG_SERIAL_AMBA_PL011_CONSOLE=y \
		CONFIG_DEBUG_FS=y CONFIG_PERF_EVENTS=y CONFIG_MODULES=y; do
		grep -qx "$opt" "$d/config" || { echo "$v: $opt missing from .config"; exit 1; }
	done
	echo "ok: $v: .config has LOCK_STAT, PROVE_LOCKING, the registry, SMP with NR_CPUS=16"
	grep -q '^# CONFIG_NET is not set' "$d/config"
	"$LB_PY" - "$d/build-meta.json" "$v" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["variant"] == sys.argv[2], m["variant"]
assert m["kernel_version"].startswith("6.1."), m["kernel_version"]
assert m["debian_package_version"].startswith("6.1."), m["debian_package_version"]
assert all(len(p["sha256"]) == 64 for p in m["patches"]) and m["patches"], m["patches"]
assert len(m["config_sha256"]) == 64 and "gcc" in m["compiler"], m
assert m["build_seconds"] > 0
print(f"ok: {sys.argv[2]}: build-meta.json: {m['kernel_version']}, "
      f"{len(m['patches'])} patches, built in {m['build_seconds']} s")
PY
	sha=$(sha256sum "$d/config" | cut -d' ' -f1)
	grep -q "\"config_sha256\": \"$sha\"" "$d/build-meta.json"
	arm-linux-gnueabihf-readelf -h "$d/mbox_bench.ko" | grep -q 'Machine: *ARM$'
	vermagic=$(arm-linux-gnueabihf-readelf -p .modinfo "$d/mbox_bench.ko" | grep -o 'vermagic=[^ ]*')
	[ "$vermagic" != "vermagic=$(uname -r)" ]
	echo "ok: $v: mbox_bench.ko is an ARM module ($vermagic), not for the host's $(uname -r)"
done

src=$LB_BUILD/before/src/drivers/mailbox/omap-mbox-registry.c
grep -qx 'static DEFINE_RWLOCK(mboxes_lock);' "$src"
if grep -q 'spin_lock(&mboxes_lock)' "$src"; then exit 1; fi
src=$LB_BUILD/after/src/drivers/mailbox/omap-mbox-registry.c
grep -qx 'static DEFINE_SPINLOCK(mboxes_lock);' "$src"
if grep -qE '(read|write)_lock\(&mboxes_lock\)' "$src"; then exit 1; fi
echo "ok: before declares DEFINE_RWLOCK(mboxes_lock), after DEFINE_SPINLOCK(mboxes_lock)"

# The linked kernels, not only the sources: after may start from before's
# objects (build-kernel.sh, "donor"), so its vmlinux must call the
# spinlock, which only a rebuilt registry object gives it.
. "$LB_ROOT/tests/lockcalls.sh"
got=$(lock_calls before)
[ "$got" = "<_raw_read_lock> <_raw_read_unlock> " ] || { echo "before's omap_mbox_get calls: $got"; exit 1; }
got=$(lock_calls after)
[ "$got" = "<_raw_spin_lock> <_raw_spin_unlock> " ] || { echo "after's omap_mbox_get calls: $got"; exit 1; }
from=$("$LB_PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("objects_from") or "-")' "$LB_BUILD/after/build-meta.json")
echo "ok: vmlinux: before's omap_mbox_get takes the read lock, after's the spinlock (after's objects from: $from)"
