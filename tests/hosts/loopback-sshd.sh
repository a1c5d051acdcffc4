#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real OpenSSH servers on the loopback address as the "hosts" of the
# --hosts tests: each its own sshd (/usr/sbin/sshd from openssh-server,
# ./run.sh setup) on 127.0.0.1 and a port of its own, with its own host
# key, the test's key as its one authorized key, key authentication
# only, its log and pid file, all in the throwaway folder DIR; nothing of
# the machine's own ssh configuration is read or changed (/run/sshd, the
# privilege separation directory sshd needs as root, is made when
# missing, as Debian's ssh service makes it).  Each host logs its user in
# to a home of its own, DIR/hostN/home (ForceCommand: two hosts of one
# machine would share the user's home, and a campaign's folder there).
#
#   start DIR N   N hosts: DIR/ssh_config (Host lbhost1...), DIR/hosts (a
#                 --hosts file, "1/ssh -F DIR/ssh_config lbhostN"),
#                 DIR/known_hosts, DIR/id_ed25519, DIR/hostN/{home,
#                 sshd.log, sshd.pid, port}; exit 1 if one does not listen
#   stop DIR [N...]  host N (every host without N) goes away: its sshd and
#                 every process of its sessions (a runner, its QEMU) are
#                 stopped, then killed, as a machine powered off
#   kill-qemu DIR N  kill -9 the QEMU its sessions run; exit 1 if none
#   up DIR N      exit 0 when host N's sshd runs
#
# Usage: loopback-sshd.sh start|stop|kill-qemu|up DIR [N...]

set -euo pipefail
SSHD=/usr/sbin/sshd
LOGIN=$(cd "$(dirname "$0")" && pwd)/loopback-login.sh

die() {
	echo "loopback-sshd: $*" >&2
	exit 1
}

# tree PID : PID and every process below it, one a line (a snapshot).
tree() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			q[1] = root; n = 1
			for (i = 1; i <= n; i++) {
				print q[i]
				m = split(kids[q[i]], k, " ")
				for (j = 1; j <= m; j++) q[++n] = k[j]
			}
		}'
}

listener() {
	local pid
	pid=$(cat "$1/sshd.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
	# The pid is this sshd's, not a reused one: its command names its config.
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$1/sshd_config" || return 1
	echo "$pid"
}

start_host() { # DIR N
	local dir=$1 n=$2 h=$1/host$2 port pid
	mkdir -p "$h/home"
	ssh-keygen -q -t ed25519 -N '' -C "lbhost$n" -f "$h/host_key"
	for _ in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 40000))
		cat >"$h/sshd_config" <<-CONF
			ListenAddress 127.0.0.1
			Port $port
			HostKey $h/host_key
			PidFile $h/sshd.pid
			AuthorizedKeysFile $dir/authorized_keys
			AuthenticationMethods publickey
			PubkeyAuthentication yes
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			HostbasedAuthentication no
			GSSAPIAuthentication no
			UsePAM no
			PermitRootLogin prohibit-password
			AllowUsers $(id -un)
			StrictModes no
			PermitUserEnvironment no
			DisableForwarding yes
			PrintMotd no
			MaxStartups 64
			LogLevel VERBOSE
			ForceCommand $LOGIN $h/home
		CONF
		rm -f "$h/sshd.pid"
		setsid "$SSHD" -D -f "$h/sshd_config" -E "$h/sshd.log" </dev/null >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 50); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break # the port was taken: another one
			fi
			if [ -s "$h/sshd.pid" ] && ss -Hltn "sport = :$port" | grep -q 127.0.0.1; then
				echo "$port" >"$h/port"
				printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$h/host_key.pub")" >>"$dir/known_hosts"
				cat >>"$dir/ssh_config" <<-CONF
					Host lbhost$n
					  HostName 127.0.0.1
					  Port $port
					  User $(id -un)
					  IdentityFile $dir/id_ed25519
					  IdentitiesOnly yes
					  UserKnownHostsFile $dir/known_hosts
					  GlobalKnownHostsFile /dev/null
					  StrictHostKeyChecking yes
					  BatchMode yes
					  ConnectTimeout 10
					  ServerAliveInterval 5
					  ServerAliveCountMax 3
					  LogLevel ERROR
				CONF
				echo "1/ssh -F $dir/ssh_config lbhost$n" >>"$dir/hosts"
				return 0
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	die "host $n: sshd did not listen on 127.0.0.1 (see $h/sshd.log)"
}

stop_host() { # DIR N
	local h=$1/host$2 pid pids more
	pid=$(listener "$h") || return 0
	# Stopped first, so that nothing forks while the tree is read again.
	pids=$(tree "$pid")
	for _ in 1 2 3 4 5; do
		# shellcheck disable=SC2086 # a list of pids
		kill -STOP $pids 2>/dev/null || true
		more=$(for p in $pids; do tree "$p"; done | sort -u)
		[ "$more" != "$(sort -u <<<"$pids")" ] || break
		pids=$more
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
	for _ in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	rm -f "$h/sshd.pid"
}

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	die "usage: loopback-sshd.sh start|stop|kill-qemu|up DIR [N...]"
fi
shift 2
case $cmd in
start)
	[ $# = 1 ] || die "start DIR N"
	[ -x "$SSHD" ] || die "no $SSHD: run ./run.sh setup (openssh-server)"
	dir=$(cd "$dir" && pwd)
	[ "$(id -u)" != 0 ] || [ -d /run/sshd ] || install -d -m 0755 /run/sshd
	ssh-keygen -q -t ed25519 -N '' -C lockbench-test -f "$dir/id_ed25519"
	cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
	: >"$dir/known_hosts"
	: >"$dir/ssh_config"
	: >"$dir/hosts"
	for n in $(seq "$1"); do
		start_host "$dir" "$n"
	done
	;;
stop)
	dir=$(cd "$dir" && pwd)
	if [ $# = 0 ]; then
		for h in "$dir"/host*; do
			[ ! -d "$h" ] || set -- "$@" "${h##*/host}"
		done
	fi
	for n in "$@"; do
		stop_host "$dir" "$n"
	done
	;;
kill-qemu)
	dir=$(cd "$dir" && pwd)
	pid=$(listener "$dir/host$1") || die "host $1: no sshd"
	found=0
	for p in $(tree "$pid"); do
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		qemu-system-*) kill -KILL "$p" && found=1 ;;
		esac
	done
	[ "$found" = 1 ]
	;;
up)
	dir=$(cd "$dir" && pwd)
	listener "$dir/host$1" >/dev/null
	;;
*) die "unknown command $cmd" ;;
esac
