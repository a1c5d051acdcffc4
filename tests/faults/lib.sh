# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by tests/t-fault-*.sh and tests/t-badinput-*.sh; source it after
# scripts/lib.sh.  A test prints "ok: ..." per check and stops at the first
# "FAIL: ...", exit 1.
#
# Usage: . "$LB_ROOT/tests/faults/lib.sh"; ft_init NAME

FT_DIR=$LB_ROOT/tests/faults

fail() {
	echo "FAIL: $*"
	exit 1
}

ok() {
	echo "ok: $*"
}

# ft_init NAME: a fresh scratch folder $out for this test.
ft_init() {
	out=${LB_TEST_OUT:-$(mktemp -d)}/$1
	rm -rf "$out"
	mkdir -p "$out"
}

# ft_job FILE INJECT [P2_MS]: a job with an ordinary point p1 (200 ms) that
# finishes before the fault fires (init.sh fires it after the first point)
# and p2, perf stat off to keep it short.
ft_job() {
	cat >"$1" <<JOB
lockbench-job v1
option perf_stat 0
option inject $2
point p1 read_pct=50 mailboxes=16 duration_ms=200
point p2 read_pct=50 mailboxes=16 duration_ms=${3:-200}
JOB
}

# ft_boot DIR JOB [ARGS...]: run the job on "before" with 2 vCPUs into DIR;
# sets ft_rc and ft_wall (s); the runner's stdout and stderr are in
# DIR.stdout and DIR.stderr.
ft_boot() {
	local dir=$1 job=$2 t0
	shift 2
	t0=$(date +%s.%N)
	ft_rc=0
	lb_py -m guest.run_guest before --cpus 2 --job "$job" --out "$dir" "$@" \
		>"$dir.stdout" 2>"$dir.stderr" || ft_rc=$?
	ft_wall=$(echo "$(date +%s.%N) - $t0" | bc)
	sed 's/^/    | /' "$dir.stderr" "$dir.stdout"
}

# ft_rc_is WANT: the runner's exit status.
ft_rc_is() {
	[ "$ft_rc" = "$1" ] || fail "exit status $ft_rc, want $1"
	ok "exit status $1 (wall ${ft_wall%.*} s)"
}

# ft_verdict DIR REGEX: the run's one verdict line (the last line of
# DIR.stdout, else of DIR.stderr) matches REGEX and is not "ok"; no Python
# traceback anywhere.
ft_verdict() {
	local last
	! grep -q Traceback "$1.stdout" "$1.stderr" || fail "a Python traceback from the runner"
	last=$(tail -n 1 "$1.stdout")
	[ -n "$last" ] || last=$(tail -n 1 "$1.stderr")
	[ -n "$last" ] || fail "the runner said nothing"
	grep -Eq -- "$2" <<<"$last" || fail "verdict '$last' does not match '$2'"
	! grep -Eq '^boot: [a-z0-9-]+ c[0-9]+: ok:' "$1.stdout" "$1.stderr" || fail "an ok verdict"
	ok "one verdict line, no traceback: $last"
}

# ft_one_line FILE REGEX: FILE (stderr of a bad-input command) is exactly
# one line, matches REGEX, no traceback.
ft_one_line() {
	local n
	n=$(wc -l <"$1")
	! grep -q Traceback "$1" || fail "a Python traceback in $1: $(head -c 300 "$1")"
	[ "$n" -eq 1 ] || fail "$n lines on stderr, want 1: $(head -c 400 "$1")"
	grep -Eq -- "$2" "$1" || fail "stderr '$(cat "$1")' does not match '$2'"
}

# ft_refused STDOUT STDERR REGEX CMD...: CMD is bad input: exit 2 and one
# stderr line matching REGEX (ft_one_line); its output stays in STDOUT and
# STDERR for the caller's "nothing was written" check.
ft_refused() {
	local so=$1 se=$2 re=$3 rc=0
	shift 3
	"$@" >"$so" 2>"$se" || rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2: $(head -c 300 "$se")"
	ft_one_line "$se" "$re"
}

# ft_no_qemu DIR: no qemu-system-arm of this run is left (5 s grace).
ft_no_qemu() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -f "qemu-system-arm.*$1" >/dev/null || {
			ok "no QEMU of $1 left"
			return 0
		}
		[ "$i" = 10 ] || sleep 0.5
	done
	pgrep -af "qemu-system-arm.*$1"
	fail "QEMU of $1 still running"
}

# ft_wait_for FILE REGEX SECONDS: wait until FILE has a line matching REGEX.
ft_wait_for() {
	local n=$(($3 * 10))
	while [ $n -gt 0 ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	fail "no '$2' in $1 within $3 s"
}

# ft_qemu_pid DIR: the pid of this run's QEMU (waits up to 60 s for it).
ft_qemu_pid() {
	local n=600 pid
	while [ $n -gt 0 ]; do
		pid=$(pgrep -f "qemu-system-arm.*$1" | head -n 1) && [ -n "$pid" ] && {
			echo "$pid"
			return 0
		}
		sleep 0.1
		n=$((n - 1))
	done
	fail "no QEMU for $1 within 60 s"
}

# ft_check DIR ARGS...: tests/faults/check_fault.py on a run directory.
ft_check() {
	"$LB_PY" "$FT_DIR/check_fault.py" "$@" || exit 1
}
