#!/usr/bin/env bash
# Start a pty server (tessera-board-sim, or tessera-server --pty), run a command with @DEVICE@
# replaced by the serial: device string the server printed on its first line ("... pty PATH"),
# stop the server. Exit status: the command's.
# Usage: with_board_sim.sh SERVER [SERVER_ARGS...] -- COMMAND [ARGS...]
set -euo pipefail
server=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do server+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: $0 SERVER [ARGS...] -- COMMAND [ARGS...]" >&2; exit 2; }
shift
exec 3< <(exec "${server[@]}")
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
line=""
read -r -t 60 line <&3 || { echo "with_board_sim: ${server[0]} did not start" >&2; exit 1; }
path=${line##*pty }
args=()
for a in "$@"; do args+=("${a//@DEVICE@/serial:$path}"); done
"${args[@]}"
