#!/usr/bin/env python3
"""Write a tile memory image for $readmemh from a device program (ELF32, little-endian): every
PT_LOAD segment at its physical address, the rest (and .bss beyond p_filesz) zero, one 32-bit
word per line. Usage: elf2memh.py prog.elf out.memh [mem_bytes]"""
import struct
import sys


def main() -> int:
    """Convert argv[1] (ELF) to argv[2] (memh of argv[3] bytes, default 65536)."""
    elf_path, out_path = sys.argv[1], sys.argv[2]
    mem_bytes = int(sys.argv[3], 0) if len(sys.argv) > 3 else 65536
    data = open(elf_path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        sys.exit(f"{elf_path}: not a little-endian ELF32 file")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    mem = bytearray(mem_bytes)
    for i in range(phnum):
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _flags, _align = struct.unpack_from(
            "<8I", data, phoff + i * phentsize)
        if p_type != 1:  # PT_LOAD
            continue
        if p_paddr + p_memsz > mem_bytes:
            sys.exit(f"{elf_path}: segment at 0x{p_paddr:x} ({p_memsz} bytes) outside the memory")
        mem[p_paddr:p_paddr + p_filesz] = data[p_offset:p_offset + p_filesz]
    with open(out_path, "w") as out:
        for a in range(0, mem_bytes, 4):
            out.write(f"{struct.unpack_from('<I', mem, a)[0]:08x}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
