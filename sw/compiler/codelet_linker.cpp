#include "codelet_linker.hpp"

#include <elf.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "file_io.hpp"
#include "little_endian.hpp"
#include "tessera/control.h"
#include "tessera/error.hpp"

namespace tessera {

const CodeletInfo* CodeletImage::codelet(const std::string& name) const {
  for (const CodeletInfo& c : codelets) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string riscvRelocationName(uint32_t type) {
  switch (type) {
    case R_RISCV_NONE:
      return "R_RISCV_NONE";
    case R_RISCV_32:
      return "R_RISCV_32";
    case R_RISCV_64:
      return "R_RISCV_64";
    case R_RISCV_BRANCH:
      return "R_RISCV_BRANCH";
    case R_RISCV_JAL:
      return "R_RISCV_JAL";
    case R_RISCV_CALL:
      return "R_RISCV_CALL";
    case R_RISCV_CALL_PLT:
      return "R_RISCV_CALL_PLT";
    case R_RISCV_GOT_HI20:
      return "R_RISCV_GOT_HI20";
    case R_RISCV_PCREL_HI20:
      return "R_RISCV_PCREL_HI20";
    case R_RISCV_PCREL_LO12_I:
      return "R_RISCV_PCREL_LO12_I";
    case R_RISCV_PCREL_LO12_S:
      return "R_RISCV_PCREL_LO12_S";
    case R_RISCV_HI20:
      return "R_RISCV_HI20";
    case R_RISCV_LO12_I:
      return "R_RISCV_LO12_I";
    case R_RISCV_LO12_S:
      return "R_RISCV_LO12_S";
    case R_RISCV_ADD32:
      return "R_RISCV_ADD32";
    case R_RISCV_SUB32:
      return "R_RISCV_SUB32";
    case R_RISCV_RVC_BRANCH:
      return "R_RISCV_RVC_BRANCH";
    case R_RISCV_RVC_JUMP:
      return "R_RISCV_RVC_JUMP";
    case R_RISCV_RELAX:
      return "R_RISCV_RELAX";
    case R_RISCV_ALIGN:
      return "R_RISCV_ALIGN";
    default:
      return fmt::format("relocation type {}", type);
  }
}

namespace {

// ---- The library as read: objects with their sections, symbols and relocations ----

struct Reloc {
  uint32_t offset = 0;
  uint32_t type = 0;
  uint32_t sym = 0;
  int32_t addend = 0;
};

struct Section {
  std::string name;
  uint32_t type = SHT_NULL;
  uint32_t flags = 0;
  uint32_t align = 1;
  uint32_t size = 0;
  std::vector<uint8_t> bytes;  // empty for SHT_NOBITS
  std::vector<Reloc> relocs;
  bool discarded = false;  // a COMDAT group another object defined first
  bool alloc() const { return (flags & SHF_ALLOC) != 0 && !discarded; }
};

struct Symbol {
  std::string name;
  uint32_t value = 0;
  uint32_t shndx = SHN_UNDEF;
  uint8_t bind = STB_LOCAL;
  uint8_t type = STT_NOTYPE;
};

struct Object {
  std::string name;
  std::vector<Section> sections;  // by ELF section index
  std::vector<Symbol> symbols;    // by ELF symbol index
};

// Where a global symbol is defined.
struct Definition {
  uint32_t object = 0;
  uint32_t symbol = 0;
};

// The symbols link.ld defines, which the graph runtime reads.
constexpr const char* kScriptSymbols[] = {
    "__bss_start",      "__bss_end",          "__tess_codelets_start", "__tess_codelets_end",
    "__tess_image_end", "__init_array_start", "__init_array_end",
};

std::once_flag elfVersionOnce;

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

[[noreturn]] void corrupt(const std::string& where, const std::string& what) {
  throw Error(fmt::format("{}: {}", where, what));
}

// One ELF relocatable object (member of the archive) read with libelf; every offset and index is
// checked against the member's bytes before it is used.
Object readObject(std::span<const uint8_t> bytes, const std::string& name) {
  std::call_once(elfVersionOnce, [] { elf_version(EV_CURRENT); });
  if (bytes.size() < sizeof(Elf32_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    corrupt(name, "not an ELF object (truncated or another format)");
  if (bytes[EI_CLASS] != ELFCLASS32 || bytes[EI_DATA] != ELFDATA2LSB)
    corrupt(name, "not a 32-bit little-endian ELF object (the tiles are rv32)");
  std::vector<char> copy(bytes.begin(), bytes.end());  // libelf wants a writable buffer
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(copy.data(), copy.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    corrupt(name, fmt::format("not a readable ELF object ({})", elf_errmsg(-1)));
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf.get(), &eh)) corrupt(name, "unreadable ELF header");
  if (eh.e_machine != EM_RISCV) corrupt(name, "not a RISC-V object");
  if (eh.e_type != ET_REL)
    corrupt(name, "not a relocatable object (the codelet library holds objects, not a linked ELF)");
  if ((eh.e_flags & EF_RISCV_RVC) != 0)
    corrupt(name, "built with compressed instructions (the tiles run rv32imf without C)");
  if ((eh.e_flags & EF_RISCV_FLOAT_ABI) != EF_RISCV_FLOAT_ABI_SINGLE)
    corrupt(name, "not built for the ilp32f ABI (-mabi=ilp32f)");
  // From the header itself: libelf reports a section table cut short as no sections at all.
  Elf32_Ehdr raw;
  std::memcpy(&raw, bytes.data(), sizeof raw);
  if (raw.e_shentsize != sizeof(Elf32_Shdr) || raw.e_shnum == 0)
    corrupt(name, "truncated or unsupported section table (extended numbering is not supported)");
  if (raw.e_shoff > bytes.size() || raw.e_shnum > (bytes.size() - raw.e_shoff) / sizeof(Elf32_Shdr))
    corrupt(name, "truncated: the section table lies beyond the end of the object");
  size_t shnum = 0, shstrndx = 0;
  if (elf_getshdrnum(elf.get(), &shnum) != 0 || elf_getshdrstrndx(elf.get(), &shstrndx) != 0 ||
      shnum != raw.e_shnum)
    corrupt(name, "unreadable section table");
  Object obj;
  obj.name = name;
  obj.sections.resize(shnum);
  std::vector<GElf_Shdr> headers(shnum);
  for (size_t i = 0; i < shnum; ++i) {
    Elf_Scn* scn = elf_getscn(elf.get(), i);
    GElf_Shdr& sh = headers[i];
    if (!scn || !gelf_getshdr(scn, &sh)) corrupt(name, fmt::format("unreadable section {}", i));
    Section& s = obj.sections[i];
    const char* n = elf_strptr(elf.get(), shstrndx, sh.sh_name);
    s.name = n ? n : "";
    s.type = sh.sh_type;
    s.flags = static_cast<uint32_t>(sh.sh_flags);
    s.align = sh.sh_addralign ? static_cast<uint32_t>(sh.sh_addralign) : 1;
    s.size = static_cast<uint32_t>(sh.sh_size);
    if ((s.align & (s.align - 1)) != 0 || s.align > 4096)
      corrupt(name, fmt::format("section {}: alignment {} is not a power of two up to 4096", s.name,
                                s.align));
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
        (sh.sh_offset > bytes.size() || sh.sh_size > bytes.size() - sh.sh_offset)) {
      corrupt(name, fmt::format("truncated: section {} ({} bytes at offset {}) runs past the end "
                                "of the object ({} bytes)",
                                s.name, sh.sh_size, sh.sh_offset, bytes.size()));
    }
    if (s.alloc() && sh.sh_type != SHT_NOBITS) {
      s.bytes.assign(bytes.begin() + static_cast<ptrdiff_t>(sh.sh_offset),
                     bytes.begin() + static_cast<ptrdiff_t>(sh.sh_offset + sh.sh_size));
    }
  }
  // Symbols.
  for (size_t i = 0; i < shnum; ++i) {
    if (headers[i].sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(elf_getscn(elf.get(), i), nullptr);
    if (!data || headers[i].sh_entsize != sizeof(Elf32_Sym))
      corrupt(name, "unreadable symbol table");
    const size_t count = data->d_size / sizeof(Elf32_Sym);
    obj.symbols.resize(count);
    for (size_t k = 0; k < count; ++k) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(k), &sym)) corrupt(name, "unreadable symbol");
      Symbol& out = obj.symbols[k];
      const char* n = elf_strptr(elf.get(), headers[i].sh_link, sym.st_name);
      out.name = n ? n : "";
      out.value = static_cast<uint32_t>(sym.st_value);
      out.shndx = sym.st_shndx;
      out.bind = static_cast<uint8_t>(GELF_ST_BIND(sym.st_info));
      out.type = static_cast<uint8_t>(GELF_ST_TYPE(sym.st_info));
      if (out.shndx == SHN_XINDEX) corrupt(name, "extended section indexes are not supported");
      if (out.shndx != SHN_UNDEF && out.shndx < SHN_LORESERVE && out.shndx >= shnum)
        corrupt(name, fmt::format("symbol {} names section {}, which does not exist", out.name,
                                  out.shndx));
    }
    break;
  }
  // Relocations, and COMDAT groups (an object's group is kept only if no earlier object had it:
  // the caller marks the duplicates' sections discarded).
  for (size_t i = 0; i < shnum; ++i) {
    const GElf_Shdr& sh = headers[i];
    if (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) continue;
    if (sh.sh_info >= shnum)
      corrupt(name, fmt::format("relocation section {} targets no section", i));
    Section& target = obj.sections[sh.sh_info];
    if ((target.flags & SHF_ALLOC) == 0) continue;  // debug information: not loaded
    if (sh.sh_type == SHT_REL)
      corrupt(name,
              fmt::format("section {}: REL relocations (RISC-V objects use RELA)", target.name));
    Elf_Data* data = elf_getdata(elf_getscn(elf.get(), i), nullptr);
    if (!data || sh.sh_entsize != sizeof(Elf32_Rela))
      corrupt(name, fmt::format("unreadable relocations of section {}", target.name));
    const size_t count = data->d_size / sizeof(Elf32_Rela);
    for (size_t k = 0; k < count; ++k) {
      GElf_Rela r;
      if (!gelf_getrela(data, static_cast<int>(k), &r)) corrupt(name, "unreadable relocation");
      Reloc out;
      out.offset = static_cast<uint32_t>(r.r_offset);
      out.type = static_cast<uint32_t>(GELF_R_TYPE(r.r_info));
      out.sym = static_cast<uint32_t>(GELF_R_SYM(r.r_info));
      out.addend = static_cast<int32_t>(r.r_addend);
      if (out.sym >= obj.symbols.size())
        corrupt(name, fmt::format("section {}: relocation at offset 0x{:x} names symbol {}, which "
                                  "does not exist",
                                  target.name, out.offset, out.sym));
      target.relocs.push_back(out);
    }
  }
  return obj;
}

// The COMDAT group signatures of obj with their member sections.
std::vector<std::pair<std::string, std::vector<uint32_t>>> comdatGroups(
    std::span<const uint8_t> bytes, const Object& obj) {
  std::vector<std::pair<std::string, std::vector<uint32_t>>> out;
  std::vector<char> copy(bytes.begin(), bytes.end());
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(copy.data(), copy.size()));
  for (size_t i = 0; i < obj.sections.size(); ++i) {
    if (obj.sections[i].type != SHT_GROUP) continue;
    GElf_Shdr sh;
    Elf_Data* data = elf_getdata(elf_getscn(elf.get(), i), nullptr);
    if (!data || !gelf_getshdr(elf_getscn(elf.get(), i), &sh) || data->d_size < 4 ||
        sh.sh_info >= obj.symbols.size())
      corrupt(obj.name, fmt::format("unreadable section group {}", obj.sections[i].name));
    const auto* words = static_cast<const uint32_t*>(data->d_buf);
    if ((words[0] & GRP_COMDAT) == 0) continue;
    std::vector<uint32_t> members;
    for (size_t k = 1; k < data->d_size / 4; ++k) {
      if (words[k] >= obj.sections.size())
        corrupt(obj.name, fmt::format("section group {} names section {}, which does not exist",
                                      obj.sections[i].name, words[k]));
      members.push_back(words[k]);
    }
    out.emplace_back(obj.symbols[sh.sh_info].name, std::move(members));
  }
  return out;
}

// The members of an ar archive (GNU format, as llvm-ar writes it): (name, bytes).
std::vector<std::pair<std::string, std::span<const uint8_t>>> archiveMembers(
    std::span<const uint8_t> bytes, const std::string& name) {
  std::vector<std::pair<std::string, std::span<const uint8_t>>> out;
  std::string_view longNames;
  size_t off = 8;
  while (off < bytes.size()) {
    if (bytes.size() - off < 60)
      corrupt(name, fmt::format("truncated: member header at offset {} is cut off", off));
    const char* h = reinterpret_cast<const char*>(bytes.data() + off);
    if (h[58] != '`' || h[59] != '\n')
      corrupt(name, fmt::format("bad archive member header at offset {}", off));
    std::string_view sizeField(h + 48, 10);
    while (!sizeField.empty() && sizeField.back() == ' ') sizeField.remove_suffix(1);
    uint64_t size = 0;
    auto [p, ec] = std::from_chars(sizeField.data(), sizeField.data() + sizeField.size(), size);
    if (ec != std::errc{} || p != sizeField.data() + sizeField.size() || sizeField.empty())
      corrupt(name, fmt::format("bad member size \"{}\" at offset {}", sizeField, off));
    if (size > bytes.size() - off - 60)
      corrupt(name, fmt::format("truncated: member at offset {} has {} bytes, the archive ends "
                                "after {}",
                                off, size, bytes.size() - off - 60));
    std::string_view raw(h, 16);
    std::span<const uint8_t> body = bytes.subspan(off + 60, size);
    off += 60 + size + (size & 1);
    if (raw.starts_with("/ ") || raw.starts_with("/SYM64/")) continue;  // symbol index
    if (raw.starts_with("// ")) {
      longNames = std::string_view(reinterpret_cast<const char*>(body.data()), body.size());
      continue;
    }
    std::string member;
    if (raw[0] == '/') {
      size_t at = 0;
      auto [q, e2] = std::from_chars(raw.data() + 1, raw.data() + 16, at);
      if (e2 != std::errc{} || at >= longNames.size())
        corrupt(name, fmt::format("bad long member name \"{}\"", raw));
      member = std::string(longNames.substr(at, longNames.find('/', at) - at));
    } else {
      member = std::string(raw.substr(0, raw.find('/')));
    }
    out.emplace_back(fmt::format("{}({})", name, member), body);
  }
  return out;
}

bool sectionIs(const std::string& name, std::string_view base) {
  return name == base ||
         (name.size() > base.size() && name.starts_with(base) && name[base.size()] == '.');
}

// The output sections of sw/runtime/link.ld, in address order.
enum Output : int { kText, kRodata, kInitArray, kCodelets, kData, kBss, kOutputs, kDiscard };

// The output section link.ld puts an input section in (-1: none does).
int outputOf(const std::string& n) {
  if (sectionIs(n, ".text")) return kText;
  if (sectionIs(n, ".rodata") || sectionIs(n, ".srodata")) return kRodata;
  if (sectionIs(n, ".init_array")) return kInitArray;
  if (sectionIs(n, ".tess.codelets")) return kCodelets;
  if (sectionIs(n, ".data") || sectionIs(n, ".sdata")) return kData;
  if (sectionIs(n, ".bss") || sectionIs(n, ".sbss")) return kBss;
  if (n.starts_with(".eh_frame")) return kDiscard;
  return -1;
}

uint32_t alignTo(uint32_t v, uint32_t a) {
  return (v + a - 1) & ~(a - 1);
}

// ---- Descriptor table of a linked image (tessera/control.h) ----

std::optional<uint32_t> imageWord(const std::vector<uint8_t>& b, uint32_t addr) {
  if (addr % 4 != 0 || addr > b.size() || b.size() - addr < 4) return std::nullopt;
  return loadLe32(b.data() + addr);
}

std::string readString(const std::vector<uint8_t>& b, uint32_t addr, const std::string& lib) {
  std::string s;
  for (;;) {
    if (addr >= b.size())
      throw Error(fmt::format("{}: codelet text at 0x{:08x} is outside the image", lib, addr));
    const char c = static_cast<char>(b[addr]);
    if (c == '\0') return s;
    s.push_back(c);
    ++addr;
    if (s.size() > 4096)
      throw Error(fmt::format("{}: codelet text at 0x{:08x} is unterminated", lib, addr));
  }
}

FieldKind parseKind(const std::string& k, const std::string& where) {
  if (k == "Input") return FieldKind::Input;
  if (k == "Output") return FieldKind::Output;
  if (k == "InOut") return FieldKind::InOut;
  if (k == "Param") return FieldKind::Param;
  throw Error(fmt::format("{}: unknown field kind \"{}\"", where, k));
}

// Every descriptor between __tess_codelets_start and __tess_codelets_end.
std::vector<CodeletInfo> readCodelets(const std::vector<uint8_t>& img, uint32_t start, uint32_t end,
                                      const std::string& lib) {
  std::vector<CodeletInfo> out;
  for (uint32_t a = start; a + 16 <= end; a += 16) {
    auto magic = imageWord(img, a);
    auto entry = imageWord(img, a + 4);
    auto bytes = imageWord(img, a + 8);
    auto text = imageWord(img, a + 12);
    if (!magic || *magic != TESS_CODELET_MAGIC || !entry || !bytes || !text)
      throw Error(fmt::format("{}: bad codelet descriptor at 0x{:08x}", lib, a));
    CodeletInfo c;
    c.entry = *entry;
    c.stateBytes = *bytes;
    uint32_t t = *text;
    c.name = readString(img, t, lib);
    t += static_cast<uint32_t>(c.name.size()) + 1;
    if (const auto sp = c.name.find(' '); sp != std::string::npos) {
      if (c.name.substr(sp + 1) != "exclusive")
        throw Error(fmt::format("{}: codelet \"{}\": unknown attribute", lib, c.name));
      c.name.resize(sp);
      c.exclusive = true;
    }
    for (;;) {
      std::string f = readString(img, t, lib);
      if (f.empty()) break;
      t += static_cast<uint32_t>(f.size()) + 1;
      const auto sp1 = f.find(' ');
      const auto sp2 = f.rfind(' ');
      if (sp1 == std::string::npos || sp1 == sp2)
        throw Error(fmt::format("{}: codelet {}: bad field \"{}\"", lib, c.name, f));
      c.fields.push_back({f.substr(sp2 + 1), parseKind(f.substr(0, sp1), lib + ": " + c.name),
                          f.substr(sp1 + 1, sp2 - sp1 - 1)});
    }
    if (c.stateBytes != 8 * c.fields.size())
      throw Error(fmt::format("{}: codelet {}: state of {} bytes for {} fields", lib, c.name,
                              c.stateBytes, c.fields.size()));
    out.push_back(std::move(c));
  }
  return out;
}

// ---- Instruction immediates (RISC-V unprivileged spec, 2.3) ----

uint32_t setItype(uint32_t insn, uint32_t imm) {
  return (insn & 0x000fffffu) | ((imm & 0xfffu) << 20);
}
uint32_t setStype(uint32_t insn, uint32_t imm) {
  return (insn & 0x01fff07fu) | ((imm & 0xfe0u) << 20) | ((imm & 0x1fu) << 7);
}
uint32_t setUtype(uint32_t insn, uint32_t v) {
  return (insn & 0xfffu) | (((v + 0x800u) >> 12) << 12);
}
uint32_t setBtype(uint32_t insn, uint32_t off) {
  return (insn & 0x01fff07fu) | ((off >> 12 & 1u) << 31) | ((off >> 5 & 0x3fu) << 25) |
         ((off >> 1 & 0xfu) << 8) | ((off >> 11 & 1u) << 7);
}
uint32_t setJtype(uint32_t insn, uint32_t off) {
  return (insn & 0xfffu) | ((off >> 20 & 1u) << 31) | ((off >> 1 & 0x3ffu) << 21) |
         ((off >> 11 & 1u) << 20) | ((off >> 12 & 0xffu) << 12);
}

}  // namespace

// ---- The library ----

struct CodeletLibrary::Impl {
  std::string name;
  std::vector<Object> objects;
  std::unordered_map<std::string, Definition> globals;
  std::map<std::string, std::pair<uint32_t, uint32_t>> vertices;  // name -> (object, section)
  std::vector<std::string> vertexNames;
  mutable std::mutex cacheMutex;
  mutable std::map<std::set<std::string>, std::shared_ptr<const CodeletImage>> cache;

  // Where the target of relocation r of object o lies: (object, section, value) or an absolute
  // value (section = SHN_ABS), or a symbol of the linker script.
  struct Target {
    uint32_t object = 0;
    uint32_t section = SHN_ABS;
    uint32_t value = 0;
    const char* scriptSymbol = nullptr;
  };

  Target resolve(uint32_t o, const Reloc& r, const std::string& where) const {
    const Object& obj = objects[o];
    const Symbol& s = obj.symbols[r.sym];
    if (s.bind == STB_LOCAL) {
      if (s.shndx == SHN_ABS || s.shndx == SHN_UNDEF) return {o, SHN_ABS, s.value, nullptr};
      if (obj.sections[s.shndx].discarded)
        throw Error(fmt::format("{}: refers to {} of a discarded COMDAT group", where, s.name));
      return {o, s.shndx, s.value, nullptr};
    }
    auto it = globals.find(s.name);
    if (it != globals.end()) {
      const Symbol& d = objects[it->second.object].symbols[it->second.symbol];
      if (d.shndx == SHN_ABS) return {it->second.object, SHN_ABS, d.value, nullptr};
      return {it->second.object, d.shndx, d.value, nullptr};
    }
    for (const char* sym : kScriptSymbols) {
      if (s.name == sym) return {o, SHN_ABS, 0, sym};
    }
    if (s.bind == STB_WEAK) return {o, SHN_ABS, 0, nullptr};  // an undefined weak symbol is 0
    throw Error(fmt::format("{}: undefined symbol {}", where, s.name));
  }
};

CodeletLibrary::CodeletLibrary(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CodeletLibrary::~CodeletLibrary() = default;

std::shared_ptr<const CodeletLibrary> CodeletLibrary::fromFile(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CodeletLibrary>> loaded;
  std::lock_guard lock(mutex);
  auto it = loaded.find(path);
  if (it != loaded.end()) return it->second;
  const std::vector<uint8_t> bytes = readRegularFile(path, kMaxFileBytes, "codelet library");
  auto lib = fromBytes(bytes, path);
  loaded.emplace(path, lib);
  return lib;
}

std::shared_ptr<const CodeletLibrary> CodeletLibrary::fromBytes(std::span<const uint8_t> bytes,
                                                                const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  std::vector<std::pair<std::string, std::span<const uint8_t>>> members;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), "!<arch>\n", 8) == 0) {
    members = archiveMembers(bytes, name);
  } else if (bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0) {
    members.emplace_back(name, bytes);
  } else {
    throw Error(fmt::format("{}: not a codelet library (an ar archive of rv32 ELF objects)", name));
  }
  std::set<std::string> groups;
  for (const auto& [memberName, memberBytes] : members) {
    Object obj = readObject(memberBytes, memberName);
    for (auto& [signature, sections] : comdatGroups(memberBytes, obj)) {
      if (groups.insert(signature).second) continue;
      for (uint32_t s : sections) obj.sections[s].discarded = true;
    }
    impl->objects.push_back(std::move(obj));
  }
  for (uint32_t o = 0; o < impl->objects.size(); ++o) {
    const Object& obj = impl->objects[o];
    for (uint32_t i = 1; i < obj.symbols.size(); ++i) {
      const Symbol& s = obj.symbols[i];
      if (s.bind == STB_LOCAL || s.shndx == SHN_UNDEF) continue;
      if (s.shndx == SHN_COMMON)
        throw Error(fmt::format("{}: common symbol {} (build with -fno-common)", obj.name, s.name));
      if (s.shndx < SHN_LORESERVE && obj.sections[s.shndx].discarded) continue;
      auto [it, fresh] = impl->globals.try_emplace(s.name, Definition{o, i});
      if (fresh) continue;
      const Symbol& old = impl->objects[it->second.object].symbols[it->second.symbol];
      if (old.bind == STB_WEAK && s.bind == STB_GLOBAL) {
        it->second = Definition{o, i};
      } else if (old.bind == STB_GLOBAL && s.bind == STB_GLOBAL) {
        throw Error(fmt::format("{}: symbol {} is defined in both {} and {}", name, s.name,
                                impl->objects[it->second.object].name, obj.name));
      }
    }
  }
  // The vertices: each descriptor's name is the first string of its text, which a R_RISCV_32
  // relocation at offset 12 of the descriptor points to (the descriptor symbols are local and
  // mangled in C++, so their names are not used).
  for (uint32_t o = 0; o < impl->objects.size(); ++o) {
    const Object& obj = impl->objects[o];
    for (uint32_t si = 0; si < obj.sections.size(); ++si) {
      const Section& sec = obj.sections[si];
      if (!sec.alloc() || !sectionIs(sec.name, ".tess.codelets")) continue;
      if (sec.size % 16 != 0)
        throw Error(
            fmt::format("{}: section {} of {} bytes is not a table of 16-byte codelet "
                        "descriptors",
                        obj.name, sec.name, sec.size));
      for (uint32_t d = 0; d < sec.size; d += 16) {
        const std::string at =
            fmt::format("{}: codelet descriptor at {}+0x{:x}", obj.name, sec.name, d);
        const Reloc* text = nullptr;
        for (const Reloc& r : sec.relocs) {
          if (r.offset == d + 12 && r.type == R_RISCV_32) text = &r;
        }
        if (!text) throw Error(fmt::format("{}: its text pointer has no R_RISCV_32", at));
        const Impl::Target t = impl->resolve(o, *text, at);
        if (t.section == SHN_ABS || t.scriptSymbol)
          throw Error(fmt::format("{}: its text is not in a section", at));
        const Section& ts = impl->objects[t.object].sections[t.section];
        const uint32_t from = t.value + static_cast<uint32_t>(text->addend);
        std::string vertex;
        for (uint32_t k = from; k < ts.bytes.size() && ts.bytes[k] != 0; ++k)
          vertex.push_back(static_cast<char>(ts.bytes[k]));
        if (vertex.empty() || from + vertex.size() >= ts.bytes.size())
          throw Error(fmt::format("{}: its text has no name", at));
        vertex.resize(std::min(vertex.size(), vertex.find(' ')));  // "Name exclusive"
        if (!impl->vertices.try_emplace(vertex, o, si).second)
          throw Error(fmt::format("{}: vertex {} is defined twice", name, vertex));
      }
    }
  }
  for (const auto& [v, _] : impl->vertices) impl->vertexNames.push_back(v);
  if (impl->globals.find("_start") == impl->globals.end())
    throw Error(fmt::format("{}: no _start (the graph runtime, sw/runtime/graph_crt0.S)", name));
  return std::shared_ptr<const CodeletLibrary>(new CodeletLibrary(std::move(impl)));
}

const std::vector<std::string>& CodeletLibrary::vertexNames() const {
  return impl_->vertexNames;
}

CodeletImage CodeletLibrary::link(const std::set<std::string>& vertices) const {
  const Impl& lib = *impl_;
  const auto& objects = lib.objects;
  // Mark: from _start and the vertices' descriptors, everything reached through relocations.
  std::vector<std::vector<bool>> live(objects.size());
  for (size_t o = 0; o < objects.size(); ++o) live[o].assign(objects[o].sections.size(), false);
  std::vector<std::pair<uint32_t, uint32_t>> work;
  auto mark = [&](uint32_t o, uint32_t s) {
    if (s < SHN_LORESERVE && !live[o][s]) live[o][s] = true, work.emplace_back(o, s);
  };
  const Definition start = lib.globals.at("_start");
  mark(start.object, objects[start.object].symbols[start.symbol].shndx);
  for (const std::string& v : vertices) {
    auto it = lib.vertices.find(v);
    if (it == lib.vertices.end()) {
      throw Error(fmt::format("{}: no vertex {} (known: {})", lib.name, v,
                              fmt::join(lib.vertexNames, ", ")));
    }
    mark(it->second.first, it->second.second);
  }
  auto where = [&](uint32_t o, uint32_t s, uint32_t offset) {
    return fmt::format("{}: section {} at offset 0x{:x}", objects[o].name,
                       objects[o].sections[s].name, offset);
  };
  while (!work.empty()) {
    auto [o, s] = work.back();
    work.pop_back();
    for (const Reloc& r : objects[o].sections[s].relocs) {
      const Impl::Target t = lib.resolve(o, r, where(o, s, r.offset));
      if (t.section != SHN_ABS) mark(t.object, t.section);
    }
  }

  // Lay out the live sections as link.ld does: output sections in order, input sections in
  // input order (.text.start first), each at its alignment.
  std::vector<std::vector<uint32_t>> addr(objects.size());
  for (size_t o = 0; o < objects.size(); ++o) addr[o].assign(objects[o].sections.size(), 0);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> placed(kOutputs);
  for (uint32_t o = 0; o < objects.size(); ++o) {
    for (uint32_t s = 0; s < objects[o].sections.size(); ++s) {
      const Section& sec = objects[o].sections[s];
      if (!live[o][s] || !sec.alloc()) continue;
      const int out = outputOf(sec.name);
      if (out == kDiscard) continue;
      if (out < 0 || out == kInitArray) {
        throw Error(fmt::format(
            "{}: section {} is not one the codelet image places (link.ld: .text, .rodata, "
            ".tess.codelets, .data, .bss; the graph runtime runs no static constructors)",
            objects[o].name, sec.name));
      }
      if (out == kText && sec.name == ".text.start") {
        auto& t = placed[kText];
        auto pos = std::find_if(t.begin(), t.end(), [&](auto& p) {
          return objects[p.first].sections[p.second].name != ".text.start";
        });
        t.insert(pos, {o, s});
      } else {
        placed[out].emplace_back(o, s);
      }
    }
  }
  CodeletImage img;
  uint32_t dot = 0;
  uint32_t outStart[kOutputs] = {}, outEnd[kOutputs] = {};
  for (int out = 0; out < kOutputs; ++out) {
    // link.ld gives every output section but .text ALIGN(4); lld drops an empty one unless it
    // defines symbols (.init_array, .tess.codelets, .bss).
    const bool hasSymbols = out == kInitArray || out == kCodelets || out == kBss;
    if (placed[out].empty() && !hasSymbols) {
      outStart[out] = outEnd[out] = dot;
      continue;
    }
    uint32_t align = out == kText ? 1 : 4;
    for (auto [o, s] : placed[out]) align = std::max(align, objects[o].sections[s].align);
    dot = alignTo(dot, align);
    outStart[out] = dot;
    for (auto [o, s] : placed[out]) {
      const Section& sec = objects[o].sections[s];
      dot = alignTo(dot, sec.align);
      addr[o][s] = dot;
      if (uint64_t{dot} + sec.size > (uint64_t{1} << 30))
        throw Error(fmt::format("{}: the codelet image exceeds 1 GiB", lib.name));
      dot += sec.size;
    }
    outEnd[out] = dot;
  }
  img.imageEnd = alignTo(dot, 4);
  img.bytes.assign(img.imageEnd, 0);
  for (int out = 0; out < kOutputs; ++out) {
    for (auto [o, s] : placed[out]) {
      const Section& sec = objects[o].sections[s];
      std::copy(sec.bytes.begin(), sec.bytes.end(), img.bytes.begin() + addr[o][s]);
    }
  }
  const std::map<std::string, uint32_t, std::less<>> script = {
      {"__bss_start", outStart[kBss]},
      {"__bss_end", alignTo(outEnd[kBss], 4)},
      {"__tess_codelets_start", outStart[kCodelets]},
      {"__tess_codelets_end", outEnd[kCodelets]},
      {"__tess_image_end", img.imageEnd},
      {"__init_array_start", outStart[kInitArray]},
      {"__init_array_end", outEnd[kInitArray]},
  };
  img.symbols = script;
  for (const auto& [n, d] : lib.globals) {
    const Symbol& sym = objects[d.object].symbols[d.symbol];
    if (sym.shndx == SHN_ABS) {
      img.symbols[n] = sym.value;
    } else if (live[d.object][sym.shndx]) {
      img.symbols[n] = addr[d.object][sym.shndx] + sym.value;
    }
  }

  // Relocate.
  auto value = [&](const Impl::Target& t) -> uint32_t {
    if (t.scriptSymbol) return script.at(t.scriptSymbol);
    if (t.section == SHN_ABS) return t.value;
    return addr[t.object][t.section] + t.value;
  };
  for (int out = 0; out < kOutputs; ++out) {
    for (auto [o, s] : placed[out]) {
      const Section& sec = objects[o].sections[s];
      for (const Reloc& r : sec.relocs) {
        const std::string at = where(o, s, r.offset);
        const uint32_t width = (r.type == R_RISCV_CALL || r.type == R_RISCV_CALL_PLT) ? 8 : 4;
        if (r.type == R_RISCV_NONE || r.type == R_RISCV_RELAX) continue;  // no relaxation
        if (r.offset > sec.size || sec.size - r.offset < width || sec.type == SHT_NOBITS)
          throw Error(
              fmt::format("{}: {} lies outside the section", at, riscvRelocationName(r.type)));
        const uint32_t P = addr[o][s] + r.offset;
        uint8_t* p = img.bytes.data() + P;
        const uint32_t insn = loadLe32(p);
        const uint32_t SA = value(lib.resolve(o, r, at)) + static_cast<uint32_t>(r.addend);
        const uint32_t pcrel = SA - P;
        const auto inRange = [&](uint32_t bits) {
          const int64_t d = static_cast<int32_t>(pcrel);
          const int64_t lim = int64_t{1} << (bits - 1);
          if (d < -lim || d >= lim || (d & 1) != 0)
            throw Error(fmt::format("{}: {} to 0x{:08x} is out of range from 0x{:08x}", at,
                                    riscvRelocationName(r.type), SA, P));
        };
        switch (r.type) {
          case R_RISCV_32:
            storeLe32(p, SA);
            break;
          case R_RISCV_BRANCH:
            inRange(13);
            storeLe32(p, setBtype(insn, pcrel));
            break;
          case R_RISCV_JAL:
            inRange(21);
            storeLe32(p, setJtype(insn, pcrel));
            break;
          case R_RISCV_CALL:
          case R_RISCV_CALL_PLT:
            storeLe32(p, setUtype(insn, pcrel));
            storeLe32(p + 4, setItype(loadLe32(p + 4), pcrel - ((pcrel + 0x800u) & ~0xfffu)));
            break;
          case R_RISCV_PCREL_HI20:
            storeLe32(p, setUtype(insn, pcrel));
            break;
          case R_RISCV_HI20:
            storeLe32(p, setUtype(insn, SA));
            break;
          case R_RISCV_LO12_I:
            storeLe32(p, setItype(insn, SA));
            break;
          case R_RISCV_LO12_S:
            storeLe32(p, setStype(insn, SA));
            break;
          case R_RISCV_PCREL_LO12_I:
          case R_RISCV_PCREL_LO12_S: {
            // The symbol labels the AUIPC whose PCREL_HI20 gives the offset (psABI): the low
            // 12 bits are that of the AUIPC's target from the AUIPC, not from this instruction.
            const Impl::Target label = lib.resolve(o, r, at);
            const Reloc* hi = nullptr;
            if (label.section != SHN_ABS && !label.scriptSymbol) {
              for (const Reloc& h : objects[label.object].sections[label.section].relocs) {
                if (h.offset == label.value && h.type == R_RISCV_PCREL_HI20) hi = &h;
              }
            }
            if (!hi)
              throw Error(fmt::format("{}: {} does not point at an R_RISCV_PCREL_HI20", at,
                                      riscvRelocationName(r.type)));
            const uint32_t hiP = addr[label.object][label.section] + hi->offset;
            const uint32_t hiSA =
                value(lib.resolve(label.object, *hi,
                                  where(label.object, label.section, hi->offset))) +
                static_cast<uint32_t>(hi->addend);
            const uint32_t off = hiSA - hiP;
            const uint32_t lo = off - ((off + 0x800u) & ~0xfffu);
            storeLe32(p, r.type == R_RISCV_PCREL_LO12_I ? setItype(insn, lo) : setStype(insn, lo));
            break;
          }
          default:
            throw Error(fmt::format("{}: {} is not supported by the codelet linker", at,
                                    riscvRelocationName(r.type)));
        }
        ++img.relocationsApplied[r.type];
      }
    }
  }
  img.codelets = readCodelets(img.bytes, outStart[kCodelets], outEnd[kCodelets], lib.name);
  return img;
}

std::shared_ptr<const CodeletImage> CodeletLibrary::linkCached(
    const std::set<std::string>& vertices) const {
  {
    std::lock_guard lock(impl_->cacheMutex);
    auto it = impl_->cache.find(vertices);
    if (it != impl_->cache.end()) return it->second;
  }
  auto img = std::make_shared<const CodeletImage>(link(vertices));
  std::lock_guard lock(impl_->cacheMutex);
  return impl_->cache.emplace(vertices, std::move(img)).first->second;
}

std::shared_ptr<const CodeletImage> CodeletLibrary::linkAll() const {
  return linkCached(std::set<std::string>(impl_->vertexNames.begin(), impl_->vertexNames.end()));
}

}  // namespace tessera
