#!/usr/bin/env python3
"""The browser report (docs/report.md) in a real browser: Debian's chromium, headless.

  report_browser_test.py mlp TESSERA_BENCH OUT_DIR   a short training run's report: no console
      errors, one tile-map cell per tile, a real click on a tile shows its breakdown, the trace
      draws every profiled superstep, the program tree has cycles; a PNG of each view.
  report_browser_test.py mk2 TESSERA_BENCH OUT_DIR   an mk2-size compile's report (1,472 tiles)
      opens and draws; prints its size and the time the browser takes.

The page's test hook (#test in the URL) clicks through the DOM with MouseEvent and writes what it
saw into <pre id="test-result">, which --dump-dom returns; the figures it reports are checked here
against the JSON files the run wrote.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

VIEWS = ["summary", "tiles", "liveness", "program", "exchanges", "trace"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("FAIL: chromium is not installed (scripts/setup.sh installs Debian's chromium)")


def browse(url, *extra):
    """Run headless chromium on url; returns (stdout, console lines, seconds)."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
               "--v=0", f"--user-data-dir={profile}", "--window-size=1400,1000", *extra, url]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        seconds = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"FAIL: chromium exited with {p.returncode} on {url}:\n{p.stderr[-3000:]}")
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    return p.stdout, console, seconds


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def page_checks(html):
    """Load html with #test; returns the page's own findings after checking the common ones."""
    url = "file://" + os.path.abspath(html)
    dom, console, seconds = browse(url + "#test", "--dump-dom")
    m = re.search(r'<pre id="test-result"[^>]*>(.*?)</pre>', dom, re.S)
    check(m and m.group(1).strip(), f"{html}: the page ran its checks")
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    check(not console, f"{html}: no console messages ({console[:3]})")
    check(not res["errors"], f"{html}: no script errors ({res['errors'][:3]})")
    check(not res["badText"], f"{html}: no view shows 'undefined' or 'NaN' ({res['badText']})")
    check(res["cells"] == res["tiles"] and res["distinctTiles"] == res["tiles"],
          f"{html}: the tile map has one cell per tile ({res['cells']} cells, {res['tiles']} tiles)")
    check(res["detailTitle"] == f"tile {res['clickedTile']}",
          f"{html}: a click on tile {res['clickedTile']} shows its breakdown ({res['detailTitle']!r})")
    check(res["detailCategories"] == ["code", "tensors", "vertexState", "exchangeBuffers",
                                      "exchangePrograms", "control", "stacks"] and res["detailVariables"] > 0,
          f"{html}: the breakdown has every category and {res['detailVariables']} largest variables")
    check(res["livenessCharts"] == 2, f"{html}: liveness charts of a chosen tile and the peak tile")
    print(f"{html}: {os.path.getsize(html):,} bytes; the page drew in {res['drawMs']:.0f} ms "
          f"(chromium start to exit {seconds:.1f} s)")
    return res


def screenshots(html, out_dir, prefix, tile, extra=""):
    url = "file://" + os.path.abspath(html)
    for v in VIEWS:
        png = os.path.join(out_dir, f"{prefix}-{v}.png")
        if os.path.exists(png):
            os.remove(png)
        browse(url + f"#view={v}&tile={tile}{extra}", f"--screenshot={png}")
        check(os.path.getsize(png) > 1000 if os.path.exists(png) else False, f"screenshot {png}")


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {cmd[0]} exited with {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("mlp", "mk2"):
        sys.exit(__doc__)
    mode, bench, out_dir = sys.argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    if mode == "mlp":
        run_dir = os.path.join(out_dir, "mlp-run")
        html = os.path.join(out_dir, "mlp-report.html")
        run([bench, "train", "--max-steps", "2", "--eval-images", "64", "--trace-steps", "1",
             "--quiet", "--out", run_dir, "--report", html])
        res = page_checks(html)
        with open(os.path.join(run_dir, "trace.json")) as f:
            trace = json.load(f)
        steps = {e["args"]["superstep"] for e in trace["traceEvents"]
                 if e.get("ph") == "X" and "superstep" in e.get("args", {})}
        check(steps and steps == set(range(len(steps))), f"the trace has supersteps 0..{len(steps) - 1}")
        check(res["traceSupersteps"] == len(steps) and res["traceDrawnSupersteps"] == len(steps)
              and res["traceRects"] > 0,
              f"the trace view draws the {len(steps)} profiled supersteps ({res['traceRects']} boxes)")
        with open(os.path.join(run_dir, "compile-report.json")) as f:
            report = json.load(f)
        check(res["exchangeRows"] == len(report["exchanges"]), "the exchange table lists every exchange")
        check(res["programNodes"] == len(report["program"]) and res["programNodesWithCycles"] > 0,
              f"the program tree has its {len(report['program'])} nodes, "
              f"{res['programNodesWithCycles']} with profiled cycles")
        check(res["matchedById"] and res["matchedSupersteps"] == len(steps),
              f"all {len(steps)} supersteps matched to the program's syncs by their ids "
              f"({res['matchedSupersteps']} matched)")
        per_pass = sum(n.get("flops", 0) for n in report["program"])
        peak = 32 if report["target"]["hasMatrixUnit"] else 2
        check(report["target"]["peakFlopsPerCycle"] == peak and per_pass > 0
              and 0 < res["profiledFlops"] and res["programNodesWithFlops"] > 0,
              f"FLOPs: {per_pass} per pass, {res['profiledFlops']} in the profiled supersteps' "
              f"{res['profiledCycles']} cycles, {res['programNodesWithFlops']} nodes show FLOPs")
        screenshots(html, out_dir, "mlp-report", res["peakTile"])
    else:
        html = os.path.join(out_dir, "mk2-report.html")
        run([bench, "compile-mlp", "--tiles", "1472", "--tile-mem", "624", "--report", html])
        res = page_checks(html)
        check(res["tiles"] == 1472, "the mk2-size report has 1,472 tiles")
        screenshots(html, out_dir, "mk2-report", res["peakTile"], "&scale=fullest")
    print("PASS")


if __name__ == "__main__":
    main()
