#!/usr/bin/env python3
"""Whether a resumed training run's outputs equal the uninterrupted run's (the resume tests).

  same_train_run.py REF DIR [--across-devices] [--files F,...] [--min-log-lines N]

Compares DIR with REF: result.json (all but the wall-clock figures and the translating engine's
statistics), the MLLOG lines (all but time_ms) and the files named by --files byte for byte
(weights.npz is skipped where REF has none: with replicas only rank 0 saves it).
--across-devices: the runs were on different backends, so result.json's "device" and the log's
submission_platform value are not compared either, and REF must have run on the matrix unit. Prints what differs; exits 1 when anything does.
"""
import argparse
import json
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ref")
    p.add_argument("dir")
    p.add_argument("--across-devices", action="store_true")
    p.add_argument("--files", default="trace.json,curves.svg,bsp.svg,weights.npz")
    p.add_argument("--min-log-lines", type=int, default=20)
    a = p.parse_args()

    def strip(o):
        # Wall-clock figures differ between any two runs (and the device across backends); so do
        # the translating engine's statistics (model_jit: how the host ran the model, counted by
        # each process for its own steps; the RTL has none).
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items()
                    if not (k.endswith("_s") or "wall" in k or k == "prefetch_waits"
                            or k == "model_jit" or (a.across_devices and k == "device"))}
        return o

    def result(d):
        return strip(json.load(open(os.path.join(d, "result.json"))))

    def mllog(d):
        lines = []
        for line in open(os.path.join(d, "mlperf.log")):
            j = json.loads(line.split(":::MLLOG ", 1)[1])
            j.pop("time_ms")
            if a.across_devices and j["key"] == "submission_platform":
                j.pop("value")  # "tessera model" or "tessera rtl": where the log was started
            lines.append(j)
        return lines

    bad = []
    ra, rb = result(a.ref), result(a.dir)
    bad += [f"result.json {k}: {ra.get(k)} != {rb.get(k)}" for k in sorted(set(ra) | set(rb))
            if ra.get(k) != rb.get(k)]
    if a.across_devices and ra.get("matrix_unit") != "on":
        bad.append(f"the reference did not run on the matrix unit: {ra.get('matrix_unit')}")
    la, lb = mllog(a.ref), mllog(a.dir)
    if la != lb:
        bad.append(f"mlperf.log differs ({len(la)} and {len(lb)} lines)")
    if len(la) < a.min_log_lines:
        bad.append("the reference log is too short to compare")
    for f in filter(None, a.files.split(",")):
        if f == "weights.npz" and not os.path.exists(os.path.join(a.ref, f)):
            continue
        if open(os.path.join(a.ref, f), "rb").read() != open(os.path.join(a.dir, f), "rb").read():
            bad.append(f + " differs")
    if bad:
        print("\n".join(bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
