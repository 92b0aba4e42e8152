#!/usr/bin/env bash
# Start tessera-board-sim, run a command with @DEVICE@ replaced by the board's serial: device
# string, stop the board. Exit status: the command's.
# Usage: with_board_sim.sh BOARD_SIM COMMAND [ARGS...]
set -euo pipefail
sim=$1
shift
exec 3< <(exec "$sim")
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
line=""
read -r -t 60 line <&3 || { echo "with_board_sim: $sim did not start" >&2; exit 1; }
path=${line##*pty }
args=()
for a in "$@"; do args+=("${a//@DEVICE@/serial:$path}"); done
"${args[@]}"
