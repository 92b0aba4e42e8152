#!/usr/bin/env python3
"""Rewrite one item of a checkpoint's APP section and fix its CRC (docs/checkpoint.md, "File
format"), to test that tessera-run checks what a well-formed file says, not only its checksums.

Usage: edit_app_section.py IN OUT ITEM VALUE...   (ITEM's line becomes "ITEM VALUE...")
"""
import struct
import sys
import zlib

APP = 6


def main() -> int:
    src, dst, item, values = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    data = open(src, "rb").read()
    out = bytearray(data[:12])  # magic and version
    pos = 12
    edited = False
    while pos < len(data):
        kind, length, _crc = struct.unpack_from("<IQI", data, pos)
        payload = data[pos + 16 : pos + 16 + length]
        pos += 16 + length
        if kind == APP:
            lines = payload.decode("ascii").splitlines()
            for i, line in enumerate(lines):
                if line.split(" ")[0] == item:
                    lines[i] = " ".join([item] + values)
                    edited = True
            payload = ("\n".join(lines) + "\n").encode("ascii")
        out += struct.pack("<IQI", kind, len(payload), zlib.crc32(payload)) + payload
    if not edited:
        print(f"edit_app_section: {src} has no APP item {item}", file=sys.stderr)
        return 1
    open(dst, "wb").write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
