#include "tessera/elf_image.hpp"

#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "file_io.hpp"
#include "little_endian.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

const char* machineName(unsigned m) {
  switch (m) {
    case EM_386:
      return "x86";
    case EM_X86_64:
      return "x86-64";
    case EM_ARM:
      return "ARM";
    case EM_AARCH64:
      return "AArch64";
    case EM_RISCV:
      return "RISC-V";
    default:
      return "unknown machine";
  }
}

// Defined symbols of the SHT_SYMTAB sections (a stripped file has none: not an error). libelf
// bounds-checks section data against the file, so a corrupt table yields no symbols, not a crash.
void readSymbols(Elf* elf, std::map<std::string, uint32_t, std::less<>>& out) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    const size_t count = data->d_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const unsigned type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name || !*name) continue;
      out.emplace(name, static_cast<uint32_t>(sym.st_value));
    }
  }
}

}  // namespace

ElfImage ElfImage::fromFile(const std::string& path, uint32_t memBytes) {
  return fromBytes(readRegularFile(path, kMaxFileBytes, "an ELF program"), path, memBytes);
}

ElfImage ElfImage::fromBytes(std::span<const uint8_t> bytes, const std::string& name,
                             uint32_t memBytes) {
  auto fail = [&](const std::string& what) { return Error(fmt::format("{}: {}", name, what)); };
  if (bytes.empty()) throw fail("empty file, not an ELF executable");
  if (bytes.size() < EI_NIDENT || !std::equal(bytes.begin(), bytes.begin() + SELFMAG, ELFMAG)) {
    throw fail("not an ELF file (no ELF magic number)");
  }
  if (bytes[EI_CLASS] != ELFCLASS32) {
    throw fail(bytes[EI_CLASS] == ELFCLASS64
                   ? "64-bit ELF; a tile program must be rv32 (ELF class 32)"
                   : "bad ELF class; a tile program must be rv32 (ELF class 32)");
  }
  if (bytes[EI_DATA] != ELFDATA2LSB)
    throw fail("not little-endian; a tile program is rv32 little-endian");
  if (bytes.size() < sizeof(Elf32_Ehdr)) {
    throw fail(fmt::format("truncated: {} bytes, shorter than the ELF header", bytes.size()));
  }

  if (elf_version(EV_CURRENT) == EV_NONE) throw fail("libelf initialisation failed");
  // libelf wants a mutable buffer; it must outlive the Elf handle.
  std::vector<char> buffer(bytes.begin(), bytes.end());
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(buffer.data(), buffer.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    throw fail(fmt::format("not a readable ELF file ({})", elf_errmsg(-1)));
  }
  const Elf32_Ehdr* eh = elf32_getehdr(elf.get());
  if (!eh) throw fail(fmt::format("bad ELF header ({})", elf_errmsg(-1)));
  if (eh->e_machine != EM_RISCV) {
    throw fail(fmt::format("built for {} (e_machine {}), not RISC-V; a tile program is rv32",
                           machineName(eh->e_machine), eh->e_machine));
  }
  if (eh->e_type != ET_EXEC) {
    throw fail(
        fmt::format("not an executable (e_type {}; relocatable objects and shared libraries "
                    "cannot run on a tile, link with the tile linker script)",
                    eh->e_type));
  }
  const uint64_t fileSize = bytes.size();
  const uint64_t phEnd = uint64_t{eh->e_phoff} + uint64_t{eh->e_phnum} * sizeof(Elf32_Phdr);
  if (eh->e_phnum == 0) throw fail("no program headers, nothing to load");
  if (eh->e_phentsize != sizeof(Elf32_Phdr) || phEnd > fileSize) {
    throw fail(
        fmt::format("truncated or corrupt: program headers at 0x{:x}..0x{:x} but the file has "
                    "{} bytes",
                    eh->e_phoff, phEnd, fileSize));
  }
  if (!elf32_getphdr(elf.get()))
    throw fail(fmt::format("bad program headers ({})", elf_errmsg(-1)));

  ElfImage image;
  image.entry_ = eh->e_entry;
  bool entryInCode = false;
  for (unsigned k = 0; k < eh->e_phnum; ++k) {
    // Copied out of the file bytes (checked above to lie inside it): e_phoff need not be a
    // multiple of 4, and libelf hands out an unaligned pointer into the image when it is not.
    Elf32_Phdr p;
    std::memcpy(&p, bytes.data() + eh->e_phoff + size_t{k} * sizeof(Elf32_Phdr), sizeof p);
    if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
    const uint64_t start = p.p_vaddr;
    const uint64_t end = start + p.p_memsz;
    if (p.p_filesz > p.p_memsz) {
      throw fail(fmt::format("segment {} at 0x{:08x}: file size {} exceeds memory size {}", k,
                             p.p_vaddr, p.p_filesz, p.p_memsz));
    }
    if (end > memBytes) {
      throw fail(fmt::format("segment {} 0x{:08x} - 0x{:08x} is outside tile memory of {} bytes", k,
                             start, end - 1, memBytes));
    }
    if (uint64_t{p.p_offset} + p.p_filesz > fileSize) {
      throw fail(
          fmt::format("truncated: segment {} needs file bytes 0x{:x}..0x{:x} but the file has "
                      "{} bytes",
                      k, p.p_offset, uint64_t{p.p_offset} + p.p_filesz, fileSize));
    }
    for (const ElfSegment& other : image.segments_) {
      const uint64_t oStart = other.addr, oEnd = oStart + other.bytes.size();
      if (start < oEnd && oStart < end) {
        throw fail(
            fmt::format("segment {} 0x{:08x} - 0x{:08x} overlaps segment 0x{:08x} - 0x{:08x}", k,
                        start, end - 1, oStart, oEnd - 1));
      }
    }
    ElfSegment seg;
    seg.addr = p.p_vaddr;
    seg.bytes.assign(p.p_memsz, 0);
    std::copy_n(bytes.begin() + p.p_offset, p.p_filesz, seg.bytes.begin());
    if (image.entry_ >= start && image.entry_ + uint64_t{4} <= end && (p.p_flags & PF_X)) {
      entryInCode = true;
    }
    image.segments_.push_back(std::move(seg));
  }
  if (image.segments_.empty()) throw fail("no loadable (PT_LOAD) segments");
  if (image.entry_ >= memBytes) {
    throw fail(fmt::format("entry point 0x{:08x} is outside tile memory of {} bytes", image.entry_,
                           memBytes));
  }
  if (image.entry_ != 0) {
    throw fail(
        fmt::format("entry point is 0x{:08x}, but a tile program must start at 0 (the "
                    "supervisor starts at pc 0; link with the tile linker script)",
                    image.entry_));
  }
  if (!entryInCode) {
    throw fail("no entry point: address 0 is not inside an executable loadable segment");
  }
  readSymbols(elf.get(), image.symbols_);
  return image;
}

std::optional<uint32_t> ElfImage::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  if (it == symbols_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> ElfImage::word(uint32_t addr) const {
  for (const ElfSegment& seg : segments_) {
    if (addr >= seg.addr && uint64_t{addr} + 4 <= seg.addr + uint64_t{seg.bytes.size()}) {
      return loadLe32(seg.bytes.data() + (addr - seg.addr));
    }
  }
  return std::nullopt;
}

}  // namespace tessera
