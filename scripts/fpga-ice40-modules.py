#!/usr/bin/env python3
"""Per-module logic table of a Yosys `stat` report after `synth_ice40 -noflatten`
(scripts/fpga-ice40.sh --modules): for every module, its own cells (submodules excluded): LUT4,
SB_CARRY, flip-flops, EBR, SPRAM, DSP, and how many instances the design has; sorted by LUT4 x
instances. A Markdown table on stdout.
Usage: fpga-ice40-modules.py STAT_FILE
"""
import re
import sys


def short_name(name):
    """'$paramod$9f..\\tess_core' or '$paramod\\tess_regfile\\Contexts=..' -> 'tess_core' etc."""
    name = name.lstrip("\\")
    if name.startswith("$paramod"):
        parts = [p for p in name.split("\\") if p and not p.startswith("$paramod")]
        base = parts[0] if parts else name
        params = ",".join(re.sub(r"=s?\d+'([01]+)$", lambda m: "=" + str(int(m.group(1), 2)), p)
                          for p in parts[1:])
        return f"{base} ({params})" if params else base
    return name


def main():
    text = open(sys.argv[1]).read()
    sections = re.split(r"^=== (.+?) ===\s*$", text, flags=re.M)
    modules = {}
    hierarchy = ""
    for title, body in zip(sections[1::2], sections[2::2]):
        if title == "design hierarchy":
            hierarchy = body
            continue
        cells = {k: int(v) for k, v in
                 re.findall(r"^\s+(\S+)\s+(\d+)\s*$", body, re.M)}
        modules[title.strip()] = cells
    # Instances per module from the hierarchy section ("  name   count" lines below the top).
    counts = {}
    for name, n in re.findall(r"^\s+(\S+)\s+(\d+)\s*$", hierarchy, re.M):
        if name in modules:
            counts[name] = int(n)
    top = hierarchy.strip().splitlines()[0].strip() if hierarchy.strip() else ""
    rows = []
    for name, cells in modules.items():
        n = counts.get(name, 1 if name == top else 0)
        luts = cells.get("SB_LUT4", 0)
        carry = cells.get("SB_CARRY", 0)
        ffs = sum(v for k, v in cells.items() if k.startswith("SB_DFF"))
        ebr = sum(v for k, v in cells.items() if k.startswith("SB_RAM40_4K"))
        spram = cells.get("SB_SPRAM256KA", 0)
        dsp = cells.get("SB_MAC16", 0)
        if n == 0 or (luts + ffs + ebr + spram + dsp) == 0:
            continue
        rows.append((luts * n, short_name(name), n, luts, carry, ffs, ebr, spram, dsp))
    rows.sort(key=lambda r: -r[0])
    total = [sum(r[i] * r[2] for r in rows) for i in range(3, 9)]
    print("| module | instances | LUT4 each | SB_CARRY each | FFs each | EBR each | SPRAM each "
          "| DSP each |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for _, name, n, luts, carry, ffs, ebr, spram, dsp in rows:
        print(f"| {name} | {n} | {luts} | {carry} | {ffs} | {ebr} | {spram} | {dsp} |")
    print(f"| total (not flattened) | | {total[0]} | {total[1]} | {total[2]} | {total[3]} | "
          f"{total[4]} | {total[5]} |")


if __name__ == "__main__":
    main()
