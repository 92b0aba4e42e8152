#!/usr/bin/env bash
# tessera-bench train --replicas under mpirun (docs/training.md, "Replicas over MPI").
# Usage: replica_command_test.sh MPIRUN TESSERA_BENCH TESSERA_SERVER OUT_DIR
#  1. 2 and 4 ranks, a short run: exit 0; rank 0's result.json and mlperf.log carry the replica
#     count and the global batch; every rank's result.json has the same weights hash and losses.
#     Rank 0 on the model and rank 1 on the RTL: the same weights, losses and cycles.
#  2. rank 1 given a device that cannot be opened: the job ends (no hang) with a non-zero exit code
#     and a message naming rank 1.
#  3. rank 1 given other training options: refused at the start, naming rank 1.
#  4. rank 1's device (a tessera-server over tcp://) dies in the middle of training: the same.
#  5. a rank killed outright mid-run: mpirun ends the job, naming the rank.
set -euo pipefail
mpirun=$1 bench=$2 server=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
common=(train --tiles 4 --hidden 16 --batch 16 --max-steps 4 --epochs 1 --eval-images 64 --trace-steps 0 --quiet)

for np in 2 4; do
  dir=$out/np$np
  timeout 120 "$mpirun" --oversubscribe -np "$np" "$bench" "${common[@]}" --replicas "$np" --out "$dir" \
    > "$dir.stdout" 2> "$dir.stderr" || { echo "FAIL: $np ranks exited with $?"; cat "$dir.stdout" "$dir.stderr"; exit 1; }
  python3 - "$dir" "$np" <<'PY'
import json, sys
d, np = sys.argv[1], int(sys.argv[2])
res = [json.load(open(d + "/result.json"))] + [json.load(open(f"{d}/rank-{r}/result.json")) for r in range(1, np)]
r0 = res[0]
assert r0["replicas"] == np, r0["replicas"]
assert r0["global_batch_size"] == 16 and r0["replica_batch_size"] == 16 // np, r0
assert r0["steps"] == 4, r0["steps"]
assert r0["inter_chip"]["gradient_bytes"] == 4 * (784 * 16 + 16 + 16 * 10 + 10), r0["inter_chip"]
assert r0["inter_chip"]["seconds_per_step"] > 0 and r0["bsp"]["inter_chip_pct"] > 0, r0["inter_chip"]
assert 'class="interchip"' in open(d + "/bsp.svg").read(), "no inter-chip phase in bsp.svg"
for r, x in enumerate(res):
    assert x["rank"] == r, (r, x["rank"])
    assert x["weights_hash"] == r0["weights_hash"], f"rank {r} weights differ from rank 0's"
    assert x["loss_curve"] == r0["loss_curve"], f"rank {r} losses differ from rank 0's"
    assert x["eval_accuracy"] == r0["eval_accuracy"], f"rank {r} accuracy differs"
keys = {}
for line in open(d + "/mlperf.log"):
    assert line.startswith(":::MLLOG "), line
    e = json.loads(line[9:])
    keys[e["key"]] = e["value"]
assert keys["replicas"] == np and keys["global_batch_size"] == 16, keys
print(f"{np} ranks: ok, loss {r0['loss_curve']}")
PY
done

# Mixed backends: rank 0 on the model, rank 1 on the RTL (64 KiB tiles: a smaller network). Model
# and RTL are bit- and cycle-exact, so both ranks end with the same weights and cycles.
dir=$out/mixed
small=(train --tiles 4 --hidden 8 --batch 8 --max-steps 2 --epochs 1 --eval-images 8 --trace-steps 0 --quiet --replicas 2)
timeout 120 "$mpirun" --oversubscribe -np 1 "$bench" "${small[@]}" --out "$dir" --device model : \
  -np 1 "$bench" "${small[@]}" --out "$dir" --device rtl > "$dir.stdout" 2> "$dir.stderr" \
  || { echo "FAIL: model + rtl ranks exited with $?"; cat "$dir.stdout" "$dir.stderr"; exit 1; }
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
a, b = json.load(open(d + "/result.json")), json.load(open(d + "/rank-1/result.json"))
assert (a["device"], b["device"]) == ("model", "rtl"), (a["device"], b["device"])
assert a["weights_hash"] == b["weights_hash"], "the rtl rank's weights differ from the model rank's"
assert a["loss_curve"] == b["loss_curve"] and a["train_cycles"] == b["train_cycles"], (a, b)
print("model + rtl ranks: ok, weights", a["weights_hash"])
PY

# Rank 1's device refuses the connection (nothing listens on port 1).
dir=$out/bad
mkdir -p "$dir"
set +e
start=$(date +%s)
timeout 120 "$mpirun" --oversubscribe -np 1 "$bench" "${common[@]}" --replicas 2 --out "$dir" : \
  -np 1 "$bench" "${common[@]}" --replicas 2 --out "$dir" --device tcp://127.0.0.1:1 > "$dir.stdout" 2> "$dir.stderr"
rc=$?
set -e
echo "bad device on rank 1: exit $rc after $(( $(date +%s) - start )) s"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: expected a non-zero exit (not the timeout), got $rc"; cat "$dir.stdout" "$dir.stderr"; exit 1
fi
if ! grep -q "rank 1: .*tcp://127.0.0.1:1" "$dir.stderr"; then
  echo "FAIL: no message naming rank 1 and its device"; cat "$dir.stderr"; exit 1
fi
grep "rank 1:" "$dir.stderr"

# Rank 1 given another learning rate: refused at the start, naming rank 1.
dir=$out/options
mkdir -p "$dir"
set +e
timeout 120 "$mpirun" --oversubscribe -np 1 "$bench" "${common[@]}" --replicas 2 --out "$dir" : \
  -np 1 "$bench" "${common[@]}" --replicas 2 --out "$dir" --lr 0.1 > "$dir.stdout" 2> "$dir.stderr"
rc=$?
set -e
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! grep -q "rank 1's options (.*lr 0.1 .*) differ from rank 0's" "$dir.stderr"; then
  echo "FAIL: different options on rank 1 were not refused (exit $rc)"; cat "$dir.stderr"; exit 1
fi
echo "different options on rank 1: exit $rc"

# Rank 1 trains on a tessera-server that is stopped 2 s after rank 1 connected, in a run of
# thousands of steps.
dir=$out/killed
mkdir -p "$dir"
"$server" --device model --listen 127.0.0.1:0 > "$dir.server" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true' EXIT
port=""
for _ in $(seq 50); do
  port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$dir.server" | cut -d: -f2 || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: tessera-server did not start"; cat "$dir.server"; exit 1; }
long=(train --tiles 4 --hidden 8 --batch 8 --epochs 1 --eval-images 16 --trace-steps 0 --quiet --replicas 2)
# Stop the server once rank 1 is connected (an established TCP connection on its port in
# /proc/net/tcp) and 2 s into its training, so that it dies mid-run however loaded the machine is;
# a hang detector gives up after 100 s and stops it anyway (the check below then fails).
port_hex=$(printf '%04X' "$port")
(
  for _ in $(seq 1000); do
    awk -v p=":$port_hex" '$2 ~ p"$" && $4 == "01" { found = 1 } END { exit !found }' /proc/net/tcp \
      && break
    sleep 0.1
  done
  sleep 2
  kill "$server_pid"
) &
set +e
start=$(date +%s)
timeout 120 "$mpirun" --oversubscribe -np 1 "$bench" "${long[@]}" --out "$dir" : \
  -np 1 "$bench" "${long[@]}" --out "$dir" --device "tcp://127.0.0.1:$port" > "$dir.stdout" 2> "$dir.stderr"
rc=$?
set -e
echo "rank 1's server stopped mid-run: exit $rc after $(( $(date +%s) - start )) s"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: expected a non-zero exit (not the timeout), got $rc"; cat "$dir.stdout" "$dir.stderr"; exit 1
fi
if ! grep -q "rank 1: tcp://127.0.0.1:$port" "$dir.stderr"; then
  echo "FAIL: no message naming rank 1 and its device"; cat "$dir.stderr"; exit 1
fi
grep "rank 1:" "$dir.stderr"
# A rank killed outright (SIGKILL, no chance to say anything) 2 s into training: mpirun ends the
# job and names the rank.
dir=$out/killed-rank
mkdir -p "$dir"
set +e
start=$(date +%s)
timeout 120 "$mpirun" --oversubscribe -np 2 "$bench" "${long[@]}" --out "$dir" > "$dir.stdout" 2> "$dir.stderr" &
launcher=$!
# Wait (up to 100 s) until mpirun has started both ranks, then give them 2 s of training.
victim=""
for _ in $(seq 1000); do
  mpirun_pid=$(ps -o pid= --ppid "$launcher" | head -1 | tr -d ' ')
  if [ -n "$mpirun_pid" ] && [ "$(ps -o pid= --ppid "$mpirun_pid" | wc -l)" -ge 2 ]; then
    victim=$(ps -o pid= --ppid "$mpirun_pid" | tail -1 | tr -d ' ')
    break
  fi
  sleep 0.1
done
sleep 2
[ -n "$victim" ] && kill -9 "$victim"
wait "$launcher"
rc=$?
set -e
echo "a rank killed mid-run (pid $victim): exit $rc after $(( $(date +%s) - start )) s"
if [ -z "$victim" ] || [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: expected a non-zero exit (not the timeout), got $rc"; cat "$dir.stdout" "$dir.stderr"; exit 1
fi
if ! grep -Eq "process rank [0-9]+ .*exited on signal 9" "$dir.stdout" "$dir.stderr"; then
  echo "FAIL: mpirun did not name the killed rank"; cat "$dir.stdout" "$dir.stderr"; exit 1
fi
grep -Eh "process rank [0-9]+ .*exited on signal 9" "$dir.stdout" "$dir.stderr"
echo "replica command tests: ok"
