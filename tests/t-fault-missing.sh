#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Missing packages and files, simulated: a PATH without qemu-system-arm,
# cpio or ccache; a dpkg-query that reports cpio as not installed (for
# setup.sh --check and ./run.sh build); Python without pandas or scipy (a
# stand-in module that fails to import); no build of a variant or no guest
# root fs (LOCKBENCH_BUILD).  Each is exit 3 with one line naming what is
# missing and ./run.sh setup (or ./run.sh build), no traceback.
#
# Usage: tests/t-fault-missing.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-missing

# path_without NAME...: a folder of links to every command on PATH but NAME.
path_without() {
	local bin=$out/bin-without-$1 d n
	rm -rf "$bin"
	mkdir -p "$bin"
	local -a dirs
	IFS=: read -ra dirs <<<"$PATH"
	# Later folders first, so that earlier ones win as on PATH.
	for ((n = ${#dirs[@]} - 1; n >= 0; n--)); do
		d=${dirs[n]}
		[ -d "$d" ] || continue
		find "$d" -maxdepth 1 \( -type f -o -type l \) -perm -u+x -exec ln -sf -t "$bin" {} +
	done
	for n in "$@"; do
		rm -f "$bin/$n"
	done
	echo "$bin"
}

# expect3 NAME REGEX CMD...: CMD exits 3 with one stderr line matching REGEX.
expect3() {
	local name=$1 re=$2 rc=0
	shift 2
	"$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
	[ $rc = 3 ] || fail "$name: exit $rc, want 3: $(head -c 300 "$out/$name.err")"
	ft_one_line "$out/$name.err" "$re"
	ok "$name: exit 3: $(cat "$out/$name.err")"
}

cat >"$out/one.job" <<'JOB'
lockbench-job v1
point p1 duration_ms=200
JOB

p=$(path_without qemu-system-arm)
expect3 no-qemu "^boot: missing 'qemu-system-arm': run ./run.sh setup$" \
	env PATH="$p" ./run.sh boot before --job "$out/one.job" --out "$out/no-qemu-run"
p=$(path_without cpio)
expect3 no-cpio "^boot: missing 'cpio': run ./run.sh setup$" \
	env PATH="$p" ./run.sh boot before --job "$out/one.job" --out "$out/no-cpio-run"
ft_no_qemu "$out/no-cpio-run"
p=$(path_without ccache)
expect3 no-ccache "^build: missing 'ccache': run ./run.sh setup$" \
	env PATH="$p" scripts/build-kernel.sh before

# dpkg-query as if cpio had been removed (dpkg's own word for it).
fake=$out/fake-dpkg
mkdir -p "$fake"
cat >"$fake/dpkg-query" <<EOF_
#!/bin/sh
for a; do last=\$a; done
if [ "\$last" = cpio ]; then printf not-installed; exit 0; fi
exec $(command -v dpkg-query) "\$@"
EOF_
chmod +x "$fake/dpkg-query"
expect3 setup-check "^setup: missing packages: cpio: run ./run.sh setup$" \
	env PATH="$fake:$PATH" scripts/setup.sh --check
expect3 build-setup-check "^setup: missing packages: cpio: run ./run.sh setup$" \
	env PATH="$fake:$PATH" ./run.sh build before

# Python without pandas / scipy: a stand-in that fails to import as the
# real absence would.
for mod in pandas scipy; do
	mkdir -p "$out/no-$mod/$mod"
	echo "raise ModuleNotFoundError(\"No module named '$mod'\", name='$mod')" >"$out/no-$mod/$mod/__init__.py"
	for cli in analyze report; do
		expect3 "no-$mod-$cli" "^$cli: missing python3-$mod: run ./run.sh setup$" \
			env PYTHONPATH="$out/no-$mod:$LB_ROOT" "$LB_PY" -m "analysis.$cli" "$out"
	done
done

# Files: no build of the variant; no guest root file system.
mkdir -p "$out/empty-build"
expect3 not-built "^boot: variant 'before' is not built \(.*\): run ./run.sh build before$" \
	env LOCKBENCH_BUILD="$out/empty-build" ./run.sh boot before --job "$out/one.job" --out "$out/nb-run"
mkdir -p "$out/no-rootfs/before"
cp "$LB_BUILD"/before/{uImage,mbox_bench.ko,build-meta.json} "$out/no-rootfs/before/"
expect3 no-rootfs "^boot: no guest root file system \(.*\): run ./run.sh build$" \
	env LOCKBENCH_BUILD="$out/no-rootfs" ./run.sh boot before --job "$out/one.job" --out "$out/nr-run"
