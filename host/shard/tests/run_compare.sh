#!/usr/bin/env bash
# tessera-run --shard under mpirun against tessera-run without it: the same stdout (consoles), the
# same --stats report (all but the host-time line), the same exit status and the same output file.
# Usage: run_compare.sh MPIRUN RANKS TESSERA_RUN ARGS... ; "@OUT@" in ARGS names an output file.
set -u
mpirun=$1 ranks=$2 run=$3  # mpirun is called with --oversubscribe: more ranks than cores
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args_for() { local a; for a in "$@"; do printf '%s\n' "${a//@OUT@/$dir/$tag.bin}"; done; }

tag=plain; mapfile -t plain_args < <(args_for "$@")
"$run" "${plain_args[@]}" >"$dir/plain.out" 2>"$dir/plain.err"; plain_rc=$?
tag=shard; mapfile -t shard_args < <(args_for "$@")
"$mpirun" --oversubscribe -np "$ranks" "$run" --shard "${shard_args[@]}" >"$dir/shard.out" 2>"$dir/shard.err"; shard_rc=$?

fail=0
[ "$plain_rc" = "$shard_rc" ] || { echo "exit status: $shard_rc sharded, $plain_rc plain"; fail=1; }
cmp -s "$dir/plain.out" "$dir/shard.out" || { echo "stdout differs:"; diff "$dir/plain.out" "$dir/shard.out" | head -20; fail=1; }
grep -v '^host time:\|^host I/O:\|^prefetch wait:' "$dir/plain.err" >"$dir/plain.err2"
grep -v '^host time:\|^host I/O:\|^prefetch wait:' "$dir/shard.err" >"$dir/shard.err2"
cmp -s "$dir/plain.err2" "$dir/shard.err2" || { echo "stderr differs:"; diff "$dir/plain.err2" "$dir/shard.err2" | head -20; fail=1; }
if [ -e "$dir/plain.bin" ] || [ -e "$dir/shard.bin" ]; then
  cmp "$dir/plain.bin" "$dir/shard.bin" || { echo "output file differs"; fail=1; }
fi
[ -s "$dir/plain.out" ] || [ -s "$dir/plain.bin" ] || { echo "the run printed nothing to compare"; fail=1; }
echo "ranks $ranks: exit $shard_rc, $(wc -c <"$dir/shard.out") bytes of console, $(wc -l <"$dir/shard.err2") lines of stats"
exit $fail
