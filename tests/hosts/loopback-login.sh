#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The ForceCommand of tests/hosts/loopback-sshd.sh's servers: the login
# of a loopback "host" in a home of its own, HOME, as if the user's home
# were there: the client's command run there by the user's login shell,
# as sshd runs it.
#
# Usage: loopback-login.sh HOME   (sshd sets SSH_ORIGINAL_COMMAND)
set -eu
HOME=$1
export HOME
cd "$HOME"
exec "${SHELL:-/bin/sh}" -c "${SSH_ORIGINAL_COMMAND:-exit 0}"
