#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A stand-in for ssh(1) for the --hosts tests: no server, no network, no
# port.  "standin-ssh.sh [OPTIONS] HOST COMMAND..." runs COMMAND as sshd
# would (the words joined by spaces, then sh -c) in a throwaway home per
# host, $LB_STANDIN_HOME/HOST.  GNU parallel runs its jobs and rsync
# through it as through ssh.
#
# A lying host: with LB_STANDIN_RUNNER=FILE, every payload unpacked on the
# host (HOME/*/payload/guest/run_guest.py) is replaced by FILE after each
# command, so that the host's python3 -m guest.run_guest runs FILE instead
# of the harness's runner.
#
# Usage: standin-ssh.sh [-p PORT] [-i KEY] [-l USER] [-o OPTION] [-x -T ...] HOST [COMMAND...]

set -euo pipefail
while [ $# -gt 0 ]; do
	case $1 in
	-[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
	--) shift; break ;;
	-*) shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "standin-ssh: no host" >&2; exit 255; }
home=${LB_STANDIN_HOME:?standin-ssh: LB_STANDIN_HOME is not set}/${1#*@}
shift
# ssh reads options after the host too: parallel sends "HOST -- exec ...".
[ "${1:-}" != -- ] || shift
mkdir -p "$home"
cd "$home"
export HOME=$home
# sshd sets SHELL to the user's login shell, whatever the client's
# environment: parallel's remote wrapper runs the command in $SHELL, and
# with none it runs nothing (a CI job may have no SHELL).
SHELL=$(getent passwd "$(id -u)" | cut -d: -f7)
export SHELL=${SHELL:-/bin/sh}
rc=0
# In a session of its own, as on a remote machine: a signal to this
# "ssh" (parallel kills a job's process group) does not reach it, and
# parallel's remote wrapper kills the command when its parent goes away,
# as when sshd's session ends.
setsid sh -c "$*" || rc=$?
# Replaced by a rename, and only where it is not the runner already: a
# cp over the file truncated it while another job's python was reading
# it, which then ran an empty script, exited 0 and wrote no meta.json
# (test_killed_then_resumed failed so, now and then).
if [ -n "${LB_STANDIN_RUNNER:-}" ]; then
	for f in "$home"/*/payload/guest/run_guest.py; do
		[ ! -e "$f" ] || cmp -s "$LB_STANDIN_RUNNER" "$f" ||
			{ cp "$LB_STANDIN_RUNNER" "$f.standin.$$" && mv -f "$f.standin.$$" "$f"; }
	done
fi
exit "$rc"
