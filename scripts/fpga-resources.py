#!/usr/bin/env python3
"""Summarise a Yosys `stat` report (after synth_xilinx, synth_ecp5 or synth_ice40) as LUTs, FFs,
LUT-RAM cells, block RAMs (in 36 Kb / 18 Kb / 16 Kb / 4 Kb / SPRAM units of the family) and DSPs.
Usage: fpga-resources.py STAT_FILE  -> one line: luts ffs lutram bram dsp (tab-separated)
"""
import re
import sys


def main():
    text = open(sys.argv[1]).read()
    # The last "Number of cells" block is the top (flattened) design.
    cells = {}
    for name, count in re.findall(r"^\s+(\$?[A-Za-z_0-9$]+)\s+(\d+)\s*$", text, re.M):
        cells[name] = int(count)
    luts = sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]|LUT4|SB_LUT4", k))
    ffs = sum(v for k, v in cells.items()
              if re.fullmatch(r"FD[RSCP]E(_1)?|FD[RSCP]|TRELLIS_FF|SB_DFF\w*", k))
    lutram = sum(v for k, v in cells.items()
                 if re.fullmatch(r"RAM\d+[XM]\w*|TRELLIS_DPR16X4", k))
    bram36 = cells.get("RAMB36E1", 0) + cells.get("RAMB36E2", 0)
    bram18 = cells.get("RAMB18E1", 0) + cells.get("RAMB18E2", 0)
    dp16 = cells.get("DP16KD", 0) + cells.get("PDPW16KD", 0)
    ebr = sum(v for k, v in cells.items() if k.startswith("SB_RAM40_4K"))
    spram = cells.get("SB_SPRAM256KA", 0)
    uram = cells.get("URAM288", 0)
    bram = []
    if bram36 or bram18:
        bram.append(f"{bram36 + bram18 / 2:g} RAMB36")
    if uram:
        bram.append(f"{uram} URAM")
    if dp16:
        bram.append(f"{dp16} DP16KD")
    if ebr:
        bram.append(f"{ebr} EBR")
    if spram:
        bram.append(f"{spram} SPRAM")
    dsp = sum(v for k, v in cells.items() if re.fullmatch(r"DSP48E[12]|MULT18X18D|SB_MAC16", k))
    print(f"{luts}\t{ffs}\t{lutram}\t{', '.join(bram) or '0'}\t{dsp}")


if __name__ == "__main__":
    main()
