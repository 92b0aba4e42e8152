#!/usr/bin/env python3
"""tessera-bench matmul on one small shape, on the model and the 4-tile RTL chip: the line's
figures are consistent (FLOP/cycle/tile is 2 m k n over tiles x cycles, the % of peak that over
32), both devices count the same cycles, and with --supersteps the supersteps' cycles add up to
the program's, each exchange is at least its lower bound and opens one superstep; and no device's % of peak exceeds
scripts/matmul-bound.py's bound for the shape.

Usage: matmul_command_test.py TESSERA_BENCH MATMUL_BOUND_PY
"""
import re
import subprocess
import sys

bench, bound_script = sys.argv[1], sys.argv[2]
m, k, n, tiles = 64, 96, 48, 4
failures = []


def run(device):
    args = [bench, "matmul", "--device", device, "--tiles", str(tiles), "--tile-mem-kib", "64",
            "--m", str(m), "--k", str(k), "--n", str(n), "--supersteps"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


cycles_of = {}
for device in ("model", "rtl"):
    text = run(device)
    head = re.search(r"cycles: (\d+), exchange: (\d+), FLOP/cycle/tile: ([\d.]+) .*"
                     r"% of peak \(32\): ([\d.]+)%", text)
    if not head:
        failures.append(f"{device}: no result line in:\n{text}")
        continue
    cycles, flops_tile, pct = int(head[1]), float(head[3]), float(head[4])
    cycles_of[device] = cycles
    want = 2.0 * m * k * n / (tiles * cycles)
    if abs(flops_tile - want) > 0.006:
        failures.append(f"{device}: FLOP/cycle/tile {flops_tile}, want {want:.3f}")
    if abs(pct - 100.0 * want / 32.0) > 0.06:
        failures.append(f"{device}: % of peak {pct}, want {100.0 * want / 32.0:.2f}")
    steps = [int(c) for c in re.findall(r"superstep \d+: cycles (\d+)", text)]
    tail = re.search(r"to the halt(?: \(opened by .*\))?: cycles (\d+)", text)
    if not steps or not tail:
        failures.append(f"{device}: no supersteps in:\n{text}")
        continue
    if sum(steps) + int(tail[1]) != cycles:
        failures.append(f"{device}: supersteps {steps} + {tail[1]} != {cycles} cycles")
    exchanges = re.findall(r'^  exchange "(.*)": (\d+) cycles, lower bound (\d+)', text, re.M)
    for name, got, bound in exchanges:
        if int(got) < int(bound):
            failures.append(f"{device}: exchange {name}: {got} cycles under its bound {bound}")
    # Each exchange runs once here, so each opens one superstep, in program order.
    opened = re.findall(r'\(opened by the exchange "(.*)"\): cycles', text)
    if not exchanges or opened != [e[0] for e in exchanges]:
        failures.append(f"{device}: supersteps opened by {opened}, exchanges {exchanges}")
bound_text = subprocess.run([sys.executable, bound_script, "--tiles", str(tiles), str(m), str(k),
                             str(n)], capture_output=True, text=True, check=True).stdout
bound = float(re.search(r"all ([\d.]+)%", bound_text)[1])
for device, cycles in cycles_of.items():
    pct = 100.0 * 2.0 * m * k * n / (tiles * cycles) / 32.0
    if pct > bound:
        failures.append(f"{device}: {pct:.1f}% of peak, above the bound {bound}%: {bound_text}")
if len(cycles_of) == 2 and cycles_of["model"] != cycles_of["rtl"]:
    failures.append(f"model {cycles_of['model']} cycles, rtl {cycles_of['rtl']}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"ok: {m} x {k} x {n} on {tiles} tiles, {cycles_of} cycles, bound {bound}%")
